//! Password hashes: argon2id (RFC 9106), salted with 128 random bits from
//! the `Random` port, kept as a PHC string (`$argon2id$v=19$m=…`) so the
//! parameters travel with each hash and can be raised later without
//! breaking the hashes already stored. store-core decides which passwords
//! are taken and how many wrong tries an object allows (`password.rs`);
//! this module only hashes and checks. Both are slow on purpose (about
//! 50 ms on the reference machine, docs/PERFORMANCE.md): callers run them
//! on a lane of their own, never on an async executor.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use store_core::ports::Random;
use store_core::StoreError;

/// Memory one hash takes, in KiB: the memory of OWASP's smallest
/// recommended argon2id setting (19 MiB), so that a lane of a few checks
/// at once stays small.
pub const ARGON2_MEMORY_KIB: u32 = 19 * 1024;
/// Passes over that memory: twice OWASP's two, which brings one check to
/// about 50 ms on the reference machine (two passes took 25 ms;
/// `examples/argon2_cost.rs`, docs/PERFORMANCE.md).
pub const ARGON2_PASSES: u32 = 4;
/// Lanes computed at once: one, since a lane of the server's pool runs
/// each check on one thread.
pub const ARGON2_LANES: u32 = 1;
/// Random bytes of salt per hash.
const SALT_BYTES: usize = 16;

fn argon2() -> Argon2<'static> {
    let params = Params::new(ARGON2_MEMORY_KIB, ARGON2_PASSES, ARGON2_LANES, None)
        .expect("the argon2 parameters are in range");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// The hash of `password`, salted with bytes from `random`.
pub fn hash_password(password: &str, random: &dyn Random) -> Result<String, StoreError> {
    let mut salt = [0u8; SALT_BYTES];
    random.fill(&mut salt);
    let hashed = SaltString::encode_b64(&salt).and_then(|salt| {
        argon2()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
    });
    hashed.map_err(|e| {
        tracing::error!(error = %e, "cannot hash a password");
        StoreError::Internal
    })
}

/// Whether `password` is the one `hash` was made from. A hash that cannot
/// be read matches nothing. The parameters are the hash's own, so hashes
/// made before a change of [`ARGON2_MEMORY_KIB`] still check.
pub fn password_matches(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|h| argon2().verify_password(password.as_bytes(), &h).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Counting(std::sync::atomic::AtomicU8);

    impl Random for Counting {
        fn fill(&self, buf: &mut [u8]) {
            let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            buf.iter_mut().for_each(|b| *b = n);
        }
    }

    #[test]
    fn a_hash_checks_its_password_only_and_never_holds_it() {
        let random = Counting(0.into());
        let hash = hash_password("correct horse", &random).unwrap();
        assert!(
            hash.starts_with("$argon2id$v=19$m=19456,t=4,p=1$"),
            "{hash}"
        );
        assert!(!hash.contains("correct horse"));
        assert!(password_matches("correct horse", &hash));
        assert!(!password_matches("correct horsE", &hash));
        assert!(!password_matches("correct horse", "not a hash"));
        // Another salt, another hash of the same password.
        let again = hash_password("correct horse", &random).unwrap();
        assert_ne!(hash, again);
        assert!(password_matches("correct horse", &again));
    }

    #[test]
    fn a_hash_made_with_other_parameters_still_checks() {
        let params = Params::new(8, 1, 1, None).unwrap();
        let cheap = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
        let salt = SaltString::encode_b64(&[7; SALT_BYTES]).unwrap();
        let old = cheap.hash_password(b"hunter22", &salt).unwrap().to_string();
        assert!(password_matches("hunter22", &old));
        assert!(!password_matches("hunter23", &old));
    }
}
