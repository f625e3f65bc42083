//! TLS to PostgreSQL, with rustls (CONTRACT.md: `sslmode=require` and
//! `sslmode=verify-full`, with `sslrootcert=` or the system's roots), so
//! that managed services that insist on TLS work.
//!
//! tokio-postgres itself knows `sslmode=disable|prefer|require` and hands
//! the handshake to a connector; what it does not parse (`verify-ca`,
//! `verify-full`, `sslrootcert`) is taken out of the URL here and decides
//! the connector:
//!
//! - no `sslmode`, `disable`, `allow` or `prefer`: no TLS, as before;
//! - `require`: TLS, the server's certificate not checked (libpq's
//!   meaning: encryption against eavesdroppers, not against a server that
//!   pretends);
//! - `verify-ca` and `verify-full`: TLS, the certificate checked against
//!   `sslrootcert` (a PEM file of CA certificates) or the system's roots,
//!   and its name against the host (`verify-ca` is held to the stricter
//!   rule too).

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use store_core::StorageError;

/// How the database's connections are secured.
#[derive(Debug, Clone)]
pub(crate) enum Tls {
    /// Plain TCP.
    Off,
    /// TLS, with this client configuration.
    On(Arc<ClientConfig>),
}

/// The connection URL without the TLS settings tokio-postgres does not
/// parse, and the connector those settings ask for.
pub(crate) fn split(url: &str) -> Result<(String, Tls), StorageError> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let (mut kept, mut mode, mut root) = (vec![], None, None);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("sslmode", v)) => mode = Some(v),
            Some(("sslrootcert", v)) => root = Some(v),
            _ => kept.push(pair.to_string()),
        }
    }
    let tls = match mode {
        None | Some("disable") => Tls::Off,
        Some("allow" | "prefer") => {
            kept.push("sslmode=prefer".into());
            Tls::Off
        }
        Some("require") => {
            kept.push("sslmode=require".into());
            Tls::On(unverified()?)
        }
        Some("verify-ca" | "verify-full") => {
            kept.push("sslmode=require".into());
            Tls::On(verified(root)?)
        }
        Some(other) => {
            return Err(StorageError::new(format!(
                "STORE_DATABASE_URL's sslmode={other} is not one of disable, allow, prefer, require, verify-ca, verify-full"
            )))
        }
    };
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, tls))
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn builder() -> Result<rustls::ConfigBuilder<ClientConfig, rustls::WantsVerifier>, StorageError> {
    ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| StorageError::new(format!("TLS to the database: {e}")))
}

/// TLS whose server certificate is checked against `root` (a PEM file)
/// or, without one, the system's roots.
fn verified(root: Option<&str>) -> Result<Arc<ClientConfig>, StorageError> {
    let mut roots = RootCertStore::empty();
    match root {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| StorageError::new(format!("sslrootcert={path}: {e}")))?;
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(StorageError::new(format!(
                    "sslrootcert={path} holds no certificate"
                )));
            }
        }
        None => {
            let native = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(native.certs);
        }
    }
    Ok(Arc::new(
        builder()?
            .with_root_certificates(roots)
            .with_no_client_auth(),
    ))
}

/// TLS that takes any server certificate (`sslmode=require`), though the
/// handshake's own signatures are still checked.
fn unverified() -> Result<Arc<ClientConfig>, StorageError> {
    Ok(Arc::new(
        builder()?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider())))
            .with_no_client_auth(),
    ))
}

/// The verifier of `sslmode=require`: every certificate is taken.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_settings_leave_the_url_as_tokio_postgres_reads_it() {
        let plain = "postgres://u:p@h:5432/db";
        let (url, tls) = split(plain).unwrap();
        assert_eq!(url, plain);
        assert!(matches!(tls, Tls::Off));
        let (url, tls) = split("postgres://u:p@h/db?sslmode=require&application_name=x").unwrap();
        assert_eq!(
            url,
            "postgres://u:p@h/db?application_name=x&sslmode=require"
        );
        assert!(matches!(tls, Tls::On(_)));
        let (url, tls) = split("postgres://u:p@h/db?sslmode=verify-full").unwrap();
        assert_eq!(url, "postgres://u:p@h/db?sslmode=require", "system roots");
        assert!(matches!(tls, Tls::On(_)));
        let (url, _) = split("postgres://u:p@h/db?sslmode=prefer").unwrap();
        assert_eq!(url, "postgres://u:p@h/db?sslmode=prefer");
        let missing = split("postgres://u:p@h/db?sslmode=verify-full&sslrootcert=/nonexistent.pem");
        assert!(missing.unwrap_err().message.contains("/nonexistent.pem"));
        let odd = split("postgres://u:p@h/db?sslmode=sometimes");
        assert!(odd.unwrap_err().message.contains("sometimes"));
    }
}
