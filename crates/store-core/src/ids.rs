//! Ids and tokens, made from the random bytes of the [`Random`] port.

use crate::blob::BlobId;
use crate::ports::Random;

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Words of the URL space that an id must never equal, so that `/<id>` can
/// never shadow a route (CONTRACT.md "Values").
pub const ROUTE_WORDS: &[&str] = &[
    "admin",
    "api",
    "help",
    "browse",
    "d",
    "pics",
    "releases",
    "write_for_agents",
    "copy_for_agents",
    "static",
    "favicon.ico",
    "robots.txt",
    "llms.txt",
    "healthz",
    "readyz",
    "openapi.json",
    "uploads",
    "mcp",
    "drop",
];

/// Characters of a single file or bundle id: 12 of base62 is ~71 bits.
pub const OBJECT_ID_CHARS: usize = 12;
/// Characters of a generated token: 32 of base62 is ~190 bits.
pub const TOKEN_CHARS: usize = 32;

/// `n` base62 characters, unbiased: bytes of 248 and above are dropped,
/// since 248 is the largest multiple of 62 a byte holds.
fn base62(rng: &dyn Random, n: usize) -> String {
    let mut out = String::with_capacity(n);
    let mut buf = [0u8; 64];
    while out.len() < n {
        rng.fill(&mut buf);
        for b in buf {
            if b < 248 && out.len() < n {
                out.push(BASE62[usize::from(b % 62)] as char);
            }
        }
    }
    out
}

fn hex(rng: &dyn Random, bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rng.fill(&mut buf);
    crate::auth::hex(&buf)
}

/// A single-file or bundle id.
pub fn object_id(rng: &dyn Random) -> String {
    loop {
        let id = base62(rng, OBJECT_ID_CHARS);
        if !ROUTE_WORDS.contains(&id.as_str()) {
            return id;
        }
    }
}

/// An unnamed dir's id: 32 lowercase hex characters (128 bits).
pub fn dir_id(rng: &dyn Random) -> String {
    hex(rng, 16)
}

/// A drop link's secret: 32 lowercase hex characters, 128 bits.
pub fn drop_secret(rng: &dyn Random) -> String {
    hex(rng, crate::drops::DROP_SECRET_CHARS / 2)
}

/// A secret token (write tokens, gallery tokens).
pub fn token(rng: &dyn Random) -> String {
    base62(rng, TOKEN_CHARS)
}

/// A blob id: 32 lowercase hex characters, safe as a file name.
pub fn blob_id(rng: &dyn Random) -> BlobId {
    BlobId(hex(rng, 16))
}

/// `id` as a name a blob store may use (a file name, an object key), if
/// it has the shape stores mint: lowercase hex, at least 3 characters.
/// Anything else is refused, so that a corrupt record cannot name a path
/// or a key outside the store's own.
pub fn minted_blob_name(id: &BlobId) -> Result<&str, crate::StorageError> {
    let s = id.as_str();
    if s.len() < 3
        || !s
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    {
        return Err(crate::StorageError::new(format!("invalid blob id {s:?}")));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A deterministic stand-in for the OS source (the test kit's seeded
    /// generator cannot be used here: it depends on this crate).
    struct Counter(AtomicU64);
    impl Random for Counter {
        fn fill(&self, buf: &mut [u8]) {
            for b in buf {
                let x = self.0.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
                *b = (x >> 56) as u8 ^ (x >> 13) as u8;
            }
        }
    }

    #[test]
    fn shapes() {
        let rng = Counter(AtomicU64::new(7));
        let id = object_id(&rng);
        assert_eq!(id.len(), OBJECT_ID_CHARS);
        assert!(id.bytes().all(|b| b.is_ascii_alphanumeric()));
        let d = dir_id(&rng);
        assert_eq!(d.len(), 32);
        assert!(d
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(token(&rng).len(), TOKEN_CHARS);
        assert_ne!(object_id(&rng), object_id(&rng));
    }
}
