//! Every limit of SPEC.md "Limits" and CONTRACT.md, in one value:
//! [`Limits`].
//!
//! The rules read their numbers from the `Limits` they are given, never
//! from a constant, so that a configured value is the one enforced and the
//! one every text shows (`/api`'s `limits` object, the help topics, the
//! error messages). The constants below are private: they only name
//! [`Limits::DEFAULT`]'s values, which are SPEC.md's.
//!
//! Units come last in every name (`_bytes`, `_secs`, `_max`), as in
//! TigerBeetle's style, so that a reader never has to guess whether a number
//! is seconds or milliseconds.

use serde::Serialize;

/// Largest single file, bundle member or dir file (SPEC: 5242880 bytes, 413).
const FILE_BYTES_MAX: u64 = 5_242_880;
/// Largest document the import fetcher stores (SPEC: 5 MB).
const IMPORT_BYTES_MAX: u64 = 5_242_880;
/// Default lifetime of a single file (SPEC: 14400 s, 4h).
const FILE_TTL_DEFAULT_SECS: u64 = 14_400;
/// Lower bound of a single file's `ttl` clamp (4h).
const FILE_TTL_MIN_SECS: u64 = 14_400;
/// Upper bound of a single file's `ttl` clamp (14d).
const FILE_TTL_MAX_SECS: u64 = 1_209_600;
/// Lower bound of a dir's sliding lifetime.
const DIR_TTL_MIN_SECS: u64 = 14_400;
/// Default sliding lifetime of a dir (7d).
const DIR_TTL_DEFAULT_SECS: u64 = 604_800;
/// Upper bound of a dir's sliding lifetime (14d).
const DIR_TTL_MAX_SECS: u64 = 1_209_600;
/// A dir's `expires_at` never slides further than this from now (30 days).
const DIR_SLIDING_CAP_SECS: u64 = 2_592_000;
/// Default size of the store pool (100 MiB).
const POOL_BYTES_DEFAULT: u64 = 104_857_600;
/// Largest `max_downloads` an upload may ask for (CONTRACT.md: 1 to 1000).
const DOWNLOADS_MAX: u32 = 1000;
/// Default requests per minute per client IP.
const RATE_LIMIT_PER_MIN_DEFAULT: u32 = 100;
/// Tags on one file or dir.
const TAGS_PER_OBJECT_MAX: usize = 5;
/// Shortest tag, in characters.
const TAG_CHARS_MIN: usize = 1;
/// Longest tag, in characters.
const TAG_CHARS_MAX: usize = 24;
/// Shortest memorable name (share, dir and gallery names).
const NAME_CHARS_MIN: usize = 5;
/// Longest memorable name.
const NAME_CHARS_MAX: usize = 32;
/// Longest file name, in bytes (what common file systems accept).
const FILE_NAME_BYTES_MAX: usize = 255;
/// Largest pics upload (SPEC: 30 MB).
const PICS_UPLOAD_BYTES_MAX: u64 = 31_457_280;
/// Largest pics import (SPEC: 30 MB).
const PICS_IMPORT_BYTES_MAX: u64 = 31_457_280;
/// Default size of the shared pics pool (20 GiB); it never evicts.
const PICS_POOL_BYTES_DEFAULT: u64 = 21_474_836_480;
/// Lifetime of a gallery image (90 days).
const PICS_LIFETIME_SECS: u64 = 7_776_000;
/// Longer side of a downscaled image.
const PICS_DOWNSCALE_PX: u32 = 2048;
/// The downscale quality ladder steps down while the result exceeds this.
const PICS_TARGET_BYTES: u64 = 1_048_576;
/// Longest comment author name, in characters.
const COMMENT_NAME_CHARS_MAX: usize = 40;
/// Longest comment text, in characters.
const COMMENT_TEXT_CHARS_MAX: usize = 500;
/// Seconds a visitor waits between two comments on one gallery.
const COMMENT_COOLDOWN_SECS: u64 = 20;
/// Default number of comments a gallery keeps.
const COMMENTS_PER_GALLERY_DEFAULT: usize = 500;
/// `Retry-After` of a 507 pool_full answer.
const POOL_FULL_RETRY_AFTER_SECS: u64 = 300;
/// Bytes anonymous writers may put into one show-dir: a tenth of the
/// default pool. Show-dirs are never evicted and anyone may write to them,
/// so without a bound public writers could take the pool from everyone
/// (issue 19, docs/DECISIONS.md).
const SHOW_DIR_BYTES_DEFAULT: u64 = POOL_BYTES_DEFAULT / 10;
/// Entries kept in a dir's history (CONTRACT: 200).
const HISTORY_LIMIT: usize = 200;
/// Files in one dir or bundle (CONTRACT: 1000).
const FILES_PER_CONTAINER_MAX: usize = 1000;
/// Objects one browse answer lists, so that a listing stays bounded.
const BROWSE_RESULTS_MAX: usize = 500;

/// Enough for thousands of honest clients and hundreds of slow ones, well
/// under the usual file descriptor limit.
const CONNECTIONS_MAX: u64 = 2048;
/// A browser opens six connections to a host; 64 leaves room for a few
/// dozen people behind one NAT while keeping one address to 1/32 of the
/// slots.
const CONNECTIONS_PER_CLIENT_MAX: u64 = 64;
/// In flight at once per client: twice its connections. An HTTP/1.1
/// connection carries one request at a time, but a response's place is
/// given back when its body is dropped, which may come just after the same
/// connection's next request has arrived; twice the connections leaves
/// room for that overlap, and bounds a proxy's clients alike.
const REQUESTS_PER_CLIENT_MAX: u64 = 2 * CONNECTIONS_PER_CLIENT_MAX;
/// Seconds a client has to send a request's headers, and the longest a
/// kept-alive connection may sit idle between requests, so that idle or
/// slow-header connections cannot pile up.
const HEADER_TIMEOUT_SECS: u64 = 30;
/// Seconds a client may accept no byte of a response before it is
/// dropped: a slow reader holds a connection, never a thread.
const SEND_TIMEOUT_SECS: u64 = 30;
/// Seconds a body may wait for its next chunk, and the time every body has
/// beyond what its length takes at the minimum rate.
const BODY_TIMEOUT_SECS: u64 = 30;
/// How long a resumable upload's PATCH holds the upload unless renewed, in
/// seconds (docs/DECISIONS.md, "Resumable uploads"): a client whose
/// process died waits this long to go on elsewhere.
const UPLOAD_LEASE_SECS: u64 = 20;
/// The slowest rate a body may arrive at, in bytes per second: a slow
/// mobile link sends a 5 MiB file in a minute or two; this allows it
/// twenty.
const BODY_MIN_BYTES_PER_SEC: u64 = 4 * 1024;
/// Bodies in flight, all clients together, by their Content-Length: a few
/// hundred uploads at the 5 MiB limit, or a dozen gallery batches, staged
/// on disk at once.
const BODIES_IN_FLIGHT_BYTES_MAX: u64 = 1024 * 1024 * 1024;
/// A request target longer than this answers 414.
const URI_BYTES_MAX: u64 = 8 * 1024;
/// Request header names and values together; more answers 431.
const HEADER_BYTES_MAX: u64 = 32 * 1024;
/// Request header fields accepted; more answers 431.
const HEADER_FIELDS_MAX: u64 = 64;
/// Bytes of request head buffered; a longer head answers 431.
const HEAD_BYTES_MAX: u64 = 64 * 1024;
/// A small form carries a name and a comment of a few thousand
/// characters, or a few fields.
const FORM_BYTES_MAX: u64 = 16 * 1024;
/// A plain multipart field is a token, a name or a lifetime.
const FORM_FIELD_BYTES_MAX: u64 = 1024;
/// A page's form sends under ten plain fields.
const FORM_FIELDS_MAX: u64 = 32;
/// A part's headers name a field, a file and a type.
const PART_HEADER_BYTES_MAX: u64 = 16 * 1024;
/// A gallery's upload form sends a holiday's pictures, not an archive.
const BATCH_IMAGES_MAX: u64 = 50;
/// How long, in all, the rest of a refused body is read after the answer
/// (nginx's `lingering_time`).
const LINGER_SECS: u64 = 30;
/// How long a pause in a refused body's rest ends the lingering (nginx's
/// `lingering_timeout`).
const LINGER_IDLE_SECS: u64 = 5;
/// Bytes of a refused body read and thrown away at most: a few uploads at
/// the default size limit, so that lingering is no way to hold a
/// connection.
const LINGER_BYTES_MAX: u64 = 64 * 1024 * 1024;
/// Bytes of a body read and thrown away after a storage fault in the
/// middle of it, at most: enough for a client still sending a photo to
/// read the 507.
const DRAIN_BYTES_MAX: u64 = 16 * 1024 * 1024;

/// How the server guards its connections and the size of requests
/// (docs/RELIABILITY.md): one value with one set of defaults, which the
/// binary's configuration sets (STORE_CONNECTIONS_PER_IP and the others
/// of CONTRACT.md), the server enforces, and `/api` shows as
/// `limits.server`. A cap of 0 is no cap; time-outs are at least 1 s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ServerLimits {
    /// Connections served at once; further ones wait in the kernel's
    /// backlog until one closes.
    pub connections_max: u64,
    /// Connections one address may hold at once (IPv6: per /64); trusted
    /// proxies are exempt, their clients are counted by request.
    pub connections_per_client_max: u64,
    /// Requests one client may have in flight at once, a response being
    /// sent included (behind trusted proxies, per forwarded client).
    pub requests_per_client_max: u64,
    /// Seconds to send a request's headers, and to idle between requests.
    pub header_timeout_secs: u64,
    /// Seconds a client may accept no byte of a response.
    pub send_timeout_secs: u64,
    /// Seconds a body may wait for its next chunk, and every body's grace
    /// beyond its length at the minimum rate.
    pub body_timeout_secs: u64,
    /// The slowest rate a body may arrive at, in bytes per second.
    pub body_min_bytes_per_sec: u64,
    /// Bytes of request bodies being received at once, all clients
    /// together (by their Content-Length): past it, 429 before reading.
    pub bodies_in_flight_bytes_max: u64,
    /// Longest request target, in bytes (414 past it).
    pub uri_bytes_max: u64,
    /// Request header names and values together, in bytes (431 past it).
    pub header_bytes_max: u64,
    /// Request header fields (431 past it).
    pub header_fields_max: u64,
    /// Bytes of request head buffered (431 past it).
    pub head_bytes_max: u64,
    /// Bytes of a small form body (a gallery's creation form, a comment,
    /// an admin action): 413 past it.
    pub form_bytes_max: u64,
    /// Bytes of one plain field of a multipart body (400 past it).
    pub form_field_bytes_max: u64,
    /// Plain fields of a multipart body (400 past it).
    pub form_fields_max: u64,
    /// Bytes of one part's headers in a multipart body (400 past it).
    pub part_header_bytes_max: u64,
    /// Images in one multipart gallery upload (400 past it).
    pub batch_images_max: u64,
    /// Seconds, in all, the rest of a refused body is read and thrown
    /// away after the answer, so that the client reads the answer
    /// instead of a reset.
    pub linger_secs: u64,
    /// Seconds of a pause that end that lingering.
    pub linger_idle_secs: u64,
    /// Bytes of a refused body's rest read at most.
    pub linger_bytes_max: u64,
    /// Bytes of a body read and thrown away after a storage fault in the
    /// middle of it (a full disk), at most, so that the client reads the
    /// 507.
    pub drain_bytes_max: u64,
}

impl ServerLimits {
    /// The defaults of docs/RELIABILITY.md.
    pub const DEFAULT: Self = Self {
        connections_max: CONNECTIONS_MAX,
        connections_per_client_max: CONNECTIONS_PER_CLIENT_MAX,
        requests_per_client_max: REQUESTS_PER_CLIENT_MAX,
        header_timeout_secs: HEADER_TIMEOUT_SECS,
        send_timeout_secs: SEND_TIMEOUT_SECS,
        body_timeout_secs: BODY_TIMEOUT_SECS,
        body_min_bytes_per_sec: BODY_MIN_BYTES_PER_SEC,
        bodies_in_flight_bytes_max: BODIES_IN_FLIGHT_BYTES_MAX,
        uri_bytes_max: URI_BYTES_MAX,
        header_bytes_max: HEADER_BYTES_MAX,
        header_fields_max: HEADER_FIELDS_MAX,
        head_bytes_max: HEAD_BYTES_MAX,
        form_bytes_max: FORM_BYTES_MAX,
        form_field_bytes_max: FORM_FIELD_BYTES_MAX,
        form_fields_max: FORM_FIELDS_MAX,
        part_header_bytes_max: PART_HEADER_BYTES_MAX,
        batch_images_max: BATCH_IMAGES_MAX,
        linger_secs: LINGER_SECS,
        linger_idle_secs: LINGER_IDLE_SECS,
        linger_bytes_max: LINGER_BYTES_MAX,
        drain_bytes_max: DRAIN_BYTES_MAX,
    };
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The limits as one value: the defaults above, any of which an embedder
/// may change and some of which the binary's configuration sets (pool
/// sizes, rate, show-dir bytes). `/api` serialises it whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Largest single file, bundle member or dir file, in bytes (413 past it).
    pub file_bytes_max: u64,
    /// Largest document an import stores, in bytes.
    pub import_bytes_max: u64,
    /// Lifetime of a single file or bundle uploaded without `ttl`, in seconds.
    pub file_ttl_default_secs: u64,
    /// Shortest lifetime a requested `ttl` of a file or bundle is clamped to, in seconds.
    pub file_ttl_min_secs: u64,
    /// Longest lifetime a requested `ttl` of a file or bundle is clamped to, in seconds.
    pub file_ttl_max_secs: u64,
    /// Shortest sliding lifetime a requested dir `ttl` is clamped to, in seconds.
    pub dir_ttl_min_secs: u64,
    /// Sliding lifetime of a dir created without `ttl`, in seconds.
    pub dir_ttl_default_secs: u64,
    /// Longest sliding lifetime a requested dir `ttl` is clamped to, in seconds.
    pub dir_ttl_max_secs: u64,
    /// How far past now activity may slide a dir's expiry, in seconds (30 days by default).
    pub dir_sliding_cap_secs: u64,
    /// Capacity of the store pool (single files, bundles and dirs), in bytes.
    pub pool_bytes: u64,
    /// Requests per minute per client IP; 0 turns the rate limit off.
    pub rate_limit_per_min: u32,
    /// Most tags on one file or dir.
    pub tags_per_object_max: usize,
    /// Shortest tag, in characters.
    pub tag_chars_min: usize,
    /// Longest tag, in characters.
    pub tag_chars_max: usize,
    /// Shortest memorable name (share, dir and gallery names), in characters.
    pub name_chars_min: usize,
    /// Longest memorable name, in characters.
    pub name_chars_max: usize,
    /// Longest file name, in bytes.
    pub file_name_bytes_max: usize,
    /// Largest pics upload, in bytes.
    pub pics_upload_bytes_max: u64,
    /// Largest pics import, in bytes.
    pub pics_import_bytes_max: u64,
    /// Capacity of the pics pool (gallery images), in bytes; it never evicts.
    pub pics_pool_bytes: u64,
    /// Lifetime of a gallery image, and of a gallery from its last upload, in seconds
    /// (90 days by default).
    pub pics_lifetime_secs: u64,
    /// Longer side of a downscaled gallery image, in pixels.
    pub pics_downscale_px: u32,
    /// The downscale quality ladder steps down while the result is larger than this,
    /// in bytes.
    pub pics_target_bytes: u64,
    /// Longest comment author name, in characters.
    pub comment_name_chars_max: usize,
    /// Longest comment text, in characters.
    pub comment_text_chars_max: usize,
    /// Seconds a visitor waits between two comments on one gallery.
    pub comment_cooldown_secs: u64,
    /// Comments a gallery keeps; past it the oldest goes.
    pub comments_per_gallery_max: usize,
    /// `Retry-After` of a 507 `pool_full` answer, in seconds.
    pub pool_full_retry_after_secs: u64,
    /// Entries kept in a dir's history, newest first.
    pub history_limit: usize,
    /// Most files in one dir or bundle.
    pub files_per_container_max: usize,
    /// Most objects one listing answer lists (browse, dirs, galleries).
    pub browse_results_max: usize,
    /// What anonymous writers may put into one show-dir.
    pub show_dir_bytes_max: u64,
    /// Largest `max_downloads` of a single file.
    pub downloads_max: u32,
    /// How long a resumable upload's PATCH holds the upload unless it
    /// renews its hold (it does so four times as often), in seconds: how
    /// long a client waits to go on after the process it was sending to
    /// died (`crate::resumable`).
    pub upload_lease_secs: u64,
    /// How the server guards its connections and the size of requests.
    pub server: ServerLimits,
}

impl Limits {
    /// SPEC.md's and CONTRACT.md's values; `const`, so that tests and
    /// embedders can name it where `Default::default()` cannot be called.
    pub const DEFAULT: Self = Self {
        file_bytes_max: FILE_BYTES_MAX,
        import_bytes_max: IMPORT_BYTES_MAX,
        file_ttl_default_secs: FILE_TTL_DEFAULT_SECS,
        file_ttl_min_secs: FILE_TTL_MIN_SECS,
        file_ttl_max_secs: FILE_TTL_MAX_SECS,
        dir_ttl_min_secs: DIR_TTL_MIN_SECS,
        dir_ttl_default_secs: DIR_TTL_DEFAULT_SECS,
        dir_ttl_max_secs: DIR_TTL_MAX_SECS,
        dir_sliding_cap_secs: DIR_SLIDING_CAP_SECS,
        pool_bytes: POOL_BYTES_DEFAULT,
        rate_limit_per_min: RATE_LIMIT_PER_MIN_DEFAULT,
        tags_per_object_max: TAGS_PER_OBJECT_MAX,
        tag_chars_min: TAG_CHARS_MIN,
        tag_chars_max: TAG_CHARS_MAX,
        name_chars_min: NAME_CHARS_MIN,
        name_chars_max: NAME_CHARS_MAX,
        file_name_bytes_max: FILE_NAME_BYTES_MAX,
        pics_upload_bytes_max: PICS_UPLOAD_BYTES_MAX,
        pics_import_bytes_max: PICS_IMPORT_BYTES_MAX,
        pics_pool_bytes: PICS_POOL_BYTES_DEFAULT,
        pics_lifetime_secs: PICS_LIFETIME_SECS,
        pics_downscale_px: PICS_DOWNSCALE_PX,
        pics_target_bytes: PICS_TARGET_BYTES,
        comment_name_chars_max: COMMENT_NAME_CHARS_MAX,
        comment_text_chars_max: COMMENT_TEXT_CHARS_MAX,
        comment_cooldown_secs: COMMENT_COOLDOWN_SECS,
        comments_per_gallery_max: COMMENTS_PER_GALLERY_DEFAULT,
        pool_full_retry_after_secs: POOL_FULL_RETRY_AFTER_SECS,
        history_limit: HISTORY_LIMIT,
        files_per_container_max: FILES_PER_CONTAINER_MAX,
        browse_results_max: BROWSE_RESULTS_MAX,
        show_dir_bytes_max: SHOW_DIR_BYTES_DEFAULT,
        downloads_max: DOWNLOADS_MAX,
        upload_lease_secs: UPLOAD_LEASE_SECS,
        server: ServerLimits::DEFAULT,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The binary units sizes are written in, largest first.
const SIZE_UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];

/// The unit [`binary_size`] writes `n` in: its name and its bytes.
fn size_unit(n: u64) -> (&'static str, u64) {
    SIZE_UNITS
        .into_iter()
        .find(|&(_, size)| n >= size)
        .unwrap_or(("B", 1))
}

/// `4h`, `7d`, `30d`: how a person reads a lifetime.
pub fn duration(secs: u64) -> String {
    if secs >= 86_400 && secs % 86_400 == 0 {
        format!("{}d", secs / 86_400)
    } else if secs >= 3_600 && secs % 3_600 == 0 {
        format!("{}h", secs / 3_600)
    } else {
        format!("{secs}s")
    }
}

/// `5 MiB`, `1.2 KiB`, `512 B`: a size in binary units, as SPEC.md's
/// limits are (its "5 MB" is 5242880 bytes), one decimal unless it is
/// zero.
pub fn binary_size(n: u64) -> String {
    match size_unit(n) {
        ("B", _) => format!("{n} B"),
        (unit, size) => {
            let shown = format!("{:.1}", n as f64 / size as f64);
            let shown = shown.strip_suffix(".0").unwrap_or(&shown);
            format!("{shown} {unit}")
        }
    }
}

/// A size as [`binary_size`] writes it when that is exact (`5 MiB`), and
/// with the exact count beside it otherwise (`2 KiB (2000 bytes)`), so
/// that a limit is never misstated.
pub fn exact_size(n: u64) -> String {
    if n % size_unit(n).1 == 0 {
        binary_size(n)
    } else {
        format!("{} ({n} bytes)", binary_size(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_shown_exactly() {
        assert_eq!(binary_size(5 << 20), "5 MiB");
        assert_eq!(exact_size(5 << 20), "5 MiB");
        assert_eq!(exact_size(30 << 20), "30 MiB");
        assert_eq!(exact_size(512), "512 B");
        assert_eq!(exact_size(2000), "2 KiB (2000 bytes)");
        assert_eq!(exact_size(1536), "1.5 KiB (1536 bytes)");
    }
}
