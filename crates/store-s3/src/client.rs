//! The requests this crate sends to the bucket, and what each may take.
//!
//! rusty-s3 signs every request (AWS Signature Version 4 in the query
//! string, the body unsigned) and reads S3's XML answers; it does no I/O.
//! hyper's client, the HTTP stack the server itself runs on, sends them
//! over pooled keep-alive connections.
//!
//! The bounds, decided here for every request:
//! - connecting may take [`CONNECT_TIMEOUT_SECS`];
//! - an answer must begin within [`READ_TIMEOUT_SECS`] of the request, plus
//!   the time its body takes at [`BODY_RATE_MIN_BYTES_PER_SEC`]; each later
//!   piece of an answer's body must come within [`READ_TIMEOUT_SECS`] of
//!   the one before. Nothing bounds a whole download, which streams at its
//!   client's pace;
//! - a request that could not connect, lost its connection, timed out, or
//!   was answered 5xx or 429 is sent again, at most [`RETRIES_MAX`] times
//!   and never once [`RETRY_TIMEOUT_SECS`] have passed since the first
//!   try, after a pause that doubles from [`BACKOFF_FIRST_MS`]. Every
//!   request here may be sent twice: each PUT and part carries all of its
//!   bytes, and a DELETE or an abort of what is gone already succeeds.

use std::ops::Range;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use rusty_s3::actions::{CompleteMultipartUpload, CreateMultipartUpload, ListObjectsV2};
use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};

/// How long connecting to the endpoint may take before the attempt fails.
pub(crate) const CONNECT_TIMEOUT_SECS: u64 = 5;

/// How long a request may wait for its answer to begin, or an answer for
/// its next bytes.
pub(crate) const READ_TIMEOUT_SECS: u64 = 10;

/// The slowest upload a request's wait for its answer allows for: a 5 MiB
/// part may take 20 s more than [`READ_TIMEOUT_SECS`] to go out.
const BODY_RATE_MIN_BYTES_PER_SEC: u64 = 256 * 1024;

/// Attempts after the first for a request that failed in a way worth
/// retrying. Few: a store that is down must answer the client with a
/// clear error in seconds, not minutes.
const RETRIES_MAX: u32 = 2;

/// The longest a request spends retrying before it gives up.
const RETRY_TIMEOUT_SECS: u64 = 5;

/// The pause before the first retry; each later one doubles it.
const BACKOFF_FIRST_MS: u64 = 100;

/// How long a signature stays good: a request is sent as soon as it is
/// signed, and its retries within [`RETRY_TIMEOUT_SECS`].
const SIGNED_FOR_SECS: u64 = 300;

/// The keys a listing asks for per page: S3's most.
const LIST_PAGE_KEYS_MAX: usize = 1000;

/// The most of an error's body read for its code and message.
const ERROR_BODY_BYTES_MAX: usize = 64 * 1024;

/// The most of a listing's page, or of a multipart upload's answer, read
/// (a page of 1,000 keys is about 300 KiB).
const XML_BODY_BYTES_MAX: usize = 8 * 1024 * 1024;

/// Why a request failed.
#[derive(Debug)]
pub(crate) enum Error {
    /// 404: no such key, or no such multipart upload.
    NotFound,
    /// Any other answer but success: its status, and S3's code and
    /// message when its body has them.
    Refused { status: u16, detail: String },
    /// No answer: the endpoint could not be reached, the connection was
    /// lost, or the answer did not come in time.
    Unreachable(String),
    /// An answer that cannot be read (no length, XML of another shape).
    Unreadable(String),
}

impl std::fmt::Display for Error {
    /// Never the request's URL: its query holds the signature.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::NotFound => write!(f, "not found"),
            Error::Refused { status, detail } => write!(f, "answered {status} {detail}"),
            Error::Unreachable(why) => write!(f, "no answer: {why}"),
            Error::Unreadable(why) => write!(f, "an answer that cannot be read: {why}"),
        }
    }
}

impl Error {
    /// Whether sending the request again may help.
    fn worth_retrying(&self) -> bool {
        match self {
            Error::Unreachable(_) => true,
            Error::Refused { status, .. } => *status >= 500 || *status == 429,
            Error::NotFound | Error::Unreadable(_) => false,
        }
    }

    /// Whether the store could not be reached or said it cannot serve now
    /// (5xx, 429), rather than that the request was wrong.
    pub(crate) fn unavailable(&self) -> bool {
        self.worth_retrying()
    }
}

pub(crate) type Result<T> = std::result::Result<T, Error>;

/// One bucket, its keys and a pool of connections to its endpoint.
pub(crate) struct S3Client {
    http: Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>,
    bucket: Bucket,
    credentials: Credentials,
}

/// A request, signed, and the headers it must carry.
struct Signed {
    method: Method,
    url: String,
    range: Option<String>,
    body: Bytes,
}

impl Signed {
    fn from_url(method: Method, url: url::Url) -> Self {
        Self {
            method,
            url: url.to_string(),
            range: None,
            body: Bytes::new(),
        }
    }

    fn with_body(mut self, body: Bytes) -> Self {
        self.body = body;
        self
    }
}

impl S3Client {
    /// A client of `bucket` at `endpoint` (path-style URLs, which every
    /// S3-compatible store takes). Nothing is sent yet.
    pub(crate) fn new(
        endpoint: &str,
        bucket: &str,
        region: &str,
        (key, secret): (&str, &str),
    ) -> std::result::Result<Self, String> {
        let url = url::Url::parse(endpoint).map_err(|e| format!("the endpoint: {e}"))?;
        let bucket = Bucket::new(url, UrlStyle::Path, bucket.to_string(), region.to_string())
            .map_err(|e| format!("the endpoint: {e}"))?;
        let mut connector = HttpConnector::new();
        connector.enforce_http(false);
        connector.set_connect_timeout(Some(Duration::from_secs(CONNECT_TIMEOUT_SECS)));
        connector.set_nodelay(true);
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls()?)
            .https_or_http()
            .enable_http1()
            .wrap_connector(connector);
        let http = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .timer(TokioTimer::new())
            .build(https);
        Ok(Self {
            http,
            bucket,
            credentials: Credentials::new(key, secret),
        })
    }

    /// Signs a request for the action `make` builds.
    fn sign<'a, A: S3Action<'a>>(
        &'a self,
        method: Method,
        make: impl FnOnce(&'a Self) -> A,
    ) -> Signed {
        let url = make(self).sign(Duration::from_secs(SIGNED_FOR_SECS));
        Signed::from_url(method, url)
    }

    /// Writes the object `key`, whole.
    pub(crate) async fn put(&self, key: &str, body: Bytes) -> Result<()> {
        let signed = self
            .sign(Method::PUT, |c| {
                c.bucket.put_object(Some(&c.credentials), key)
            })
            .with_body(body);
        self.send(&signed).await.map(drop)
    }

    /// Reads `key`, or the bytes `range` of it: its length, known before
    /// any byte is read, and its body.
    pub(crate) async fn get(
        &self,
        key: &str,
        range: Option<Range<u64>>,
    ) -> Result<(u64, Incoming)> {
        let mut signed = self.sign(Method::GET, |c| {
            c.bucket.get_object(Some(&c.credentials), key)
        });
        signed.range = range.map(|r| format!("bytes={}-{}", r.start, r.end - 1));
        let answer = self.send(&signed).await?;
        let len = content_length(&answer)?;
        Ok((len, answer.into_body()))
    }

    /// Reads `key` whole.
    pub(crate) async fn get_all(&self, key: &str) -> Result<Bytes> {
        let (len, body) = self.get(key, None).await?;
        collect(body, usize::try_from(len).unwrap_or(usize::MAX)).await
    }

    /// The length of `key`.
    pub(crate) async fn head(&self, key: &str) -> Result<u64> {
        let signed = self.sign(Method::HEAD, |c| {
            c.bucket.head_object(Some(&c.credentials), key)
        });
        content_length(&self.send(&signed).await?)
    }

    /// Deletes `key`; a key that is gone already is no error.
    pub(crate) async fn delete(&self, key: &str) -> Result<()> {
        let signed = self.sign(Method::DELETE, |c| {
            c.bucket.delete_object(Some(&c.credentials), key)
        });
        match self.send(&signed).await {
            Ok(_) | Err(Error::NotFound) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Every key under `prefix` (which ends with a slash), page by page.
    pub(crate) async fn list(&self, prefix: &str) -> Result<Vec<String>> {
        self.list_in_pages(prefix, LIST_PAGE_KEYS_MAX).await
    }

    /// [`S3Client::list`], asking for pages of at most `page_keys` keys.
    pub(crate) async fn list_in_pages(
        &self,
        prefix: &str,
        page_keys: usize,
    ) -> Result<Vec<String>> {
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut action = ListObjectsV2::new(&self.bucket, Some(&self.credentials));
            action.with_prefix(prefix);
            action.with_max_keys(page_keys);
            if let Some(t) = &token {
                action.with_continuation_token(t.clone());
            }
            let signed = Signed::from_url(
                Method::GET,
                action.sign(Duration::from_secs(SIGNED_FOR_SECS)),
            );
            let xml = self.send_for_xml(&signed).await?;
            let page = ListObjectsV2::parse_response(&xml)
                .map_err(|e| Error::Unreadable(format!("a listing: {e}")))?;
            keys.extend(page.contents.into_iter().map(|c| c.key));
            match page.next_continuation_token {
                Some(next) => token = Some(next),
                None => return Ok(keys),
            }
        }
    }

    /// Starts a multipart upload to `key`: its id.
    pub(crate) async fn create_multipart(&self, key: &str) -> Result<String> {
        let action = CreateMultipartUpload::new(&self.bucket, Some(&self.credentials), key);
        let signed = Signed::from_url(
            Method::POST,
            action.sign(Duration::from_secs(SIGNED_FOR_SECS)),
        );
        let xml = self.send_for_xml(&signed).await?;
        let answer = CreateMultipartUpload::parse_response(&xml)
            .map_err(|e| Error::Unreadable(format!("a new multipart upload: {e}")))?;
        Ok(answer.upload_id().to_string())
    }

    /// Sends part `number` (from 1) of the upload `upload` to `key`: its
    /// ETag, as the store gave it.
    pub(crate) async fn upload_part(
        &self,
        key: &str,
        upload: &str,
        number: u16,
        body: Bytes,
    ) -> Result<String> {
        let signed = self
            .sign(Method::PUT, |c| {
                c.bucket
                    .upload_part(Some(&c.credentials), key, number, upload)
            })
            .with_body(body);
        let answer = self.send(&signed).await?;
        answer
            .headers()
            .get(hyper::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .ok_or_else(|| Error::Unreadable("a part's answer has no ETag".to_string()))
    }

    /// Completes the upload `upload` to `key` from its parts' ETags, in
    /// order: the object exists, whole, once this returns.
    pub(crate) async fn complete_multipart(
        &self,
        key: &str,
        upload: &str,
        etags: &[String],
    ) -> Result<()> {
        let action = CompleteMultipartUpload::new(
            &self.bucket,
            Some(&self.credentials),
            key,
            upload,
            etags.iter().map(String::as_str),
        );
        let url = action.sign(Duration::from_secs(SIGNED_FOR_SECS));
        let body = CompleteMultipartUpload::new(
            &self.bucket,
            Some(&self.credentials),
            key,
            upload,
            etags.iter().map(String::as_str),
        )
        .body();
        let signed = Signed::from_url(Method::POST, url).with_body(Bytes::from(body));
        // S3 may answer 200 and report a failure in the body.
        let xml = self.send_for_xml(&signed).await?;
        match xml.contains("<Error>") {
            true => Err(Error::Refused {
                status: 200,
                detail: error_detail(&xml),
            }),
            false => Ok(()),
        }
    }

    /// Aborts the upload `upload` to `key`, which frees its parts.
    pub(crate) async fn abort_multipart(&self, key: &str, upload: &str) -> Result<()> {
        let signed = self.sign(Method::DELETE, |c| {
            rusty_s3::actions::AbortMultipartUpload::new(
                &c.bucket,
                Some(&c.credentials),
                key,
                upload,
            )
        });
        self.send(&signed).await.map(drop)
    }

    /// Sends `signed` and reads its answer's body as text.
    async fn send_for_xml(&self, signed: &Signed) -> Result<String> {
        let body = collect(self.send(signed).await?.into_body(), XML_BODY_BYTES_MAX).await?;
        String::from_utf8(body.to_vec())
            .map_err(|_| Error::Unreadable("XML that is not UTF-8".to_string()))
    }

    /// Sends `signed`, again while it fails in a way worth retrying (the
    /// module's comment says how often): a successful answer, its body
    /// still to read.
    async fn send(&self, signed: &Signed) -> Result<Response<Incoming>> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(BACKOFF_FIRST_MS);
        let mut retries = 0;
        loop {
            match self.send_once(signed).await {
                Err(e)
                    if e.worth_retrying()
                        && retries < RETRIES_MAX
                        && started.elapsed() + pause < Duration::from_secs(RETRY_TIMEOUT_SECS) =>
                {
                    tracing::debug!(error = %e, method = %signed.method, "retrying a bucket request");
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                    retries += 1;
                }
                answer => return answer,
            }
        }
    }

    async fn send_once(&self, signed: &Signed) -> Result<Response<Incoming>> {
        let mut request = Request::builder()
            .method(signed.method.clone())
            .uri(&signed.url);
        if let Some(range) = &signed.range {
            request = request.header(hyper::header::RANGE, range);
        }
        let request = request
            .body(Full::new(signed.body.clone()))
            .map_err(|e| Error::Unreadable(format!("a request that cannot be made: {e}")))?;
        let body_secs = signed.body.len() as u64 / BODY_RATE_MIN_BYTES_PER_SEC;
        let wait = Duration::from_secs(READ_TIMEOUT_SECS + body_secs);
        let answer = match tokio::time::timeout(wait, self.http.request(request)).await {
            Err(_) => {
                return Err(Error::Unreachable(format!(
                    "none within {} s",
                    wait.as_secs()
                )))
            }
            Ok(Err(e)) => return Err(Error::Unreachable(causes(&e))),
            Ok(Ok(answer)) => answer,
        };
        if answer.status().is_success() {
            return Ok(answer);
        }
        Err(refusal(answer).await)
    }
}

/// TLS for https endpoints: rustls with ring, the certificate checked
/// against the system's roots, as many as parse. With none (a machine
/// without ca-certificates) an http endpoint still works, and an https
/// one fails at its first request, saying that its issuer is unknown.
fn tls() -> std::result::Result<rustls::ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

/// A failed answer as an error, with S3's code and message if its body
/// has them.
async fn refusal(answer: Response<Incoming>) -> Error {
    let status = answer.status();
    if status == StatusCode::NOT_FOUND {
        return Error::NotFound;
    }
    let detail = match collect(answer.into_body(), ERROR_BODY_BYTES_MAX).await {
        Ok(body) => error_detail(&String::from_utf8_lossy(&body)),
        Err(_) => String::new(),
    };
    let reason = status.canonical_reason().unwrap_or("");
    Error::Refused {
        status: status.as_u16(),
        detail: format!("{reason}{detail}").trim().to_string(),
    }
}

/// ` (Code: Message)` from an S3 error document, or nothing.
fn error_detail(xml: &str) -> String {
    let field = |name: &str| {
        let open = format!("<{name}>");
        let start = xml.find(&open)? + open.len();
        let len = xml[start..].find(&format!("</{name}>"))?;
        Some(xml[start..start + len].to_string())
    };
    match (field("Code"), field("Message")) {
        (Some(code), Some(message)) => format!(" ({code}: {message})"),
        (Some(code), None) => format!(" ({code})"),
        _ => String::new(),
    }
}

/// The length an answer announces.
fn content_length(answer: &Response<Incoming>) -> Result<u64> {
    answer
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Error::Unreadable("an answer without a Content-Length".to_string()))
}

/// The next bytes of a body: `None` at its end. Each must come within
/// [`READ_TIMEOUT_SECS`].
pub(crate) async fn next_chunk(body: &mut Incoming) -> Result<Option<Bytes>> {
    loop {
        let frame =
            tokio::time::timeout(Duration::from_secs(READ_TIMEOUT_SECS), body.frame()).await;
        match frame {
            Err(_) => {
                return Err(Error::Unreachable(format!(
                    "no bytes for {READ_TIMEOUT_SECS} s"
                )))
            }
            Ok(None) => return Ok(None),
            Ok(Some(Err(e))) => return Err(Error::Unreachable(causes(&e))),
            Ok(Some(Ok(frame))) => {
                if let Ok(data) = frame.into_data() {
                    if !data.is_empty() {
                        return Ok(Some(data));
                    }
                }
            }
        }
    }
}

/// A whole body, refused past `max` bytes.
async fn collect(mut body: Incoming, max: usize) -> Result<Bytes> {
    let mut all = BytesMut::new();
    while let Some(chunk) = next_chunk(&mut body).await? {
        if all.len() + chunk.len() > max {
            return Err(Error::Unreadable(format!("an answer over {max} bytes")));
        }
        all.extend_from_slice(&chunk);
    }
    Ok(all.freeze())
}

/// An error and its causes, in one line: hyper's own message alone says
/// little ("client error (Connect)").
fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        line.push_str(": ");
        line.push_str(&c.to_string());
        cause = c.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_document_gives_its_code_and_message() {
        let xml = "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code>\
                   <Message>Please reduce your request rate.</Message></Error>";
        assert_eq!(
            error_detail(xml),
            " (SlowDown: Please reduce your request rate.)"
        );
        assert_eq!(
            error_detail("<Error><Code>NoSuchUpload</Code></Error>"),
            " (NoSuchUpload)"
        );
        assert_eq!(error_detail("not xml"), "");
    }

    /// A store on a loopback port that answers each request with the
    /// next of `statuses` (then 200), closing each connection; and how
    /// many requests it has had.
    fn scripted_store(
        statuses: Vec<u16>,
    ) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{BufRead, BufReader, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = std::sync::Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let mut stream = stream.unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap() > 0 && line != "\r\n" {
                    line.clear();
                }
                let n = counter.fetch_add(1, Ordering::SeqCst);
                let status = statuses.get(n).copied().unwrap_or(200);
                let body = "<Error><Code>SlowDown</Code><Message>later</Message></Error>";
                let answer = format!(
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        (endpoint, seen)
    }

    fn delete_at(endpoint: &str) -> Result<()> {
        let client = S3Client::new(endpoint, "b", "garage", ("key", "secret")).unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(client.delete("k"))
    }

    #[test]
    fn a_store_answering_503_is_tried_three_times_then_unavailable() {
        let (endpoint, seen) = scripted_store(vec![503; 10]);
        let e = delete_at(&endpoint).unwrap_err();
        assert!(e.unavailable(), "{e}");
        assert_eq!(
            e.to_string(),
            "answered 503 Service Unavailable (SlowDown: later)"
        );
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 3);
    }

    #[test]
    fn a_store_answering_503_once_is_tried_again_and_succeeds() {
        let (endpoint, seen) = scripted_store(vec![503]);
        delete_at(&endpoint).unwrap();
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[test]
    fn a_refusal_is_not_tried_again() {
        let (endpoint, seen) = scripted_store(vec![403]);
        let e = delete_at(&endpoint).unwrap_err();
        assert!(!e.unavailable(), "{e}");
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn only_failures_of_the_store_are_retried() {
        let refused = |status| Error::Refused {
            status,
            detail: String::new(),
        };
        assert!(Error::Unreachable("reset".into()).worth_retrying());
        assert!(refused(503).worth_retrying());
        assert!(refused(429).worth_retrying());
        assert!(!refused(403).worth_retrying());
        assert!(!Error::NotFound.worth_retrying());
        assert!(!Error::Unreadable("xml".into()).worth_retrying());
    }
}
