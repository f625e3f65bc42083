//! Import: POST /?url=. The fetcher port does the network part behind its
//! address guard; this use case turns what it fetched into a file.

use std::io::Read;

use store_core::import::{link_document, name_from_url, validate_link_url};
use store_core::names::validate_file_name;
use store_core::{FetchError, RetainAuth, StoreError};

use crate::{App, AppError, AppResult, NewFile};

/// `POST /?url=<url>[&name=][&link=1][&tag=..]` and the upload options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportRequest {
    /// The URL to fetch, or with `link` to redirect to.
    pub url: String,
    /// Name, ttl, once and tags, as for an upload.
    pub file: NewFile,
    /// Store the URL as a redirect document instead of fetching it.
    pub link: bool,
}

/// What the client is told for each fetch failure.
pub(crate) fn fetch_error(e: FetchError) -> AppError {
    match e {
        FetchError::InvalidUrl(msg) | FetchError::WrongKind(msg) => {
            StoreError::BadRequest(msg).into()
        }
        FetchError::TooLarge(limit) => StoreError::too_large(limit).into(),
        e @ FetchError::Refused => StoreError::BadRequest(e.to_string()).into(),
    }
}

impl App {
    /// `POST /?url=`: fetches the URL (at most `import_bytes_max` bytes) and
    /// stores it as a new single file, or with `link` stores a redirect to it.
    /// A refused fetch is a 400, a body over the limit a 413; `share` is refused.
    pub fn import(
        &self,
        req: &ImportRequest,
        auth: RetainAuth,
    ) -> AppResult<crate::Created<store_core::FileRecord>> {
        req.file.validate_import(&self.config.limits)?;
        let limit = self.config.limits.import_bytes_max;
        if req.link {
            validate_link_url(&req.url)?;
            let doc = link_document(&req.url);
            let mut upload = self.begin_upload(limit)?;
            upload.push(doc.as_bytes())?;
            let file = NewFile {
                name: req.file.name.clone().or_else(|| Some("link.html".into())),
                declared_type: Some("text/html".into()),
                ..req.file.clone()
            };
            return self.store_file(&file, upload.finish()?, auth, true);
        }
        let fetched = self.ports.fetcher.fetch(&req.url, limit).map_err(|e| {
            crate::telemetry::Counters::add(&self.counters.import_refused, 1);
            fetch_error(e)
        })?;
        let mut upload = self.begin_upload(limit)?;
        let mut body = fetched.body;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            // A body that stalls or breaks mid-way is a refusal like any
            // other network failure: the same answer, nothing stored.
            let n = body.read(&mut buf).map_err(|_| {
                crate::telemetry::Counters::add(&self.counters.import_refused, 1);
                fetch_error(FetchError::Refused)
            })?;
            if n == 0 {
                break;
            }
            upload.push(&buf[..n])?;
        }
        let name = self.fetched_name(
            req.file.name.clone(),
            fetched.disposition_name,
            &fetched.final_url,
        );
        let file = NewFile {
            name,
            declared_type: fetched.content_type,
            ..req.file.clone()
        };
        self.store_file(&file, upload.finish()?, auth, false)
    }

    /// The name a fetched file is stored under: the one asked for, else
    /// the response's Content-Disposition, else the URL's last segment.
    /// A name the server found that is too long for the limits is passed
    /// over (the next one, or the default, is used); a name the client
    /// asked for is kept, and refused by the store if it does not fit.
    pub(crate) fn fetched_name(
        &self,
        asked: Option<String>,
        disposition_name: Option<String>,
        final_url: &str,
    ) -> Option<String> {
        let fits = |n: &String| validate_file_name(&self.config.limits, n).is_ok();
        asked
            .or_else(|| disposition_name.filter(fits))
            .or_else(|| name_from_url(final_url).filter(fits))
    }
}
