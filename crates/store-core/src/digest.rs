//! The SHA-256 of stored bytes (issue 36): what the admin searches by and
//! what the blocklist names. It is computed while the bytes stream in,
//! never by reading them again, and a resumable upload keeps the running
//! state in its record between two requests, so that whichever process
//! takes its next PATCH goes on hashing where the last one stopped.

use serde::{Deserialize, Serialize};
use sha2::digest::generic_array::typenum::U64;
use sha2::digest::generic_array::GenericArray;

/// Bytes SHA-256 compresses at a time.
const BLOCK_BYTES: usize = 64;
/// Blocks handed to the compression function in one call (4 KiB).
const BATCH_BLOCKS: usize = 64;

/// SHA-256's initial hash value (FIPS 180-4, 5.3.3).
const INITIAL_STATE: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// The SHA-256 digest of an object's bytes; written and read as 64
/// lowercase hex characters.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sha256(pub [u8; 32]);

impl Sha256 {
    /// The digest of `bytes`, in one go.
    pub fn of(bytes: &[u8]) -> Self {
        let mut running = RunningSha256::default();
        running.update(bytes);
        running.finish()
    }

    /// Parses 64 hex characters, of either case; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in bytes.chunks(2).enumerate() {
            out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
        }
        Some(Self(out))
    }

    /// The digest as 64 lowercase hex characters.
    pub fn hex(&self) -> String {
        crate::auth::hex(&self.0)
    }
}

fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl std::fmt::Display for Sha256 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.hex())
    }
}

impl std::fmt::Debug for Sha256 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sha256({})", self.hex())
    }
}

impl Serialize for Sha256 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.hex())
    }
}

impl<'de> Deserialize<'de> for Sha256 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Self::parse(&text).ok_or_else(|| serde::de::Error::custom("not a SHA-256 in hex"))
    }
}

/// A SHA-256 being computed, whose whole state is plain data: it can be
/// kept in a record and resumed by another process. `sha2`'s own hasher
/// keeps its state private, so this one drives `sha2`'s compression
/// function (hardware-accelerated where the CPU has SHA extensions) and
/// does the padding itself.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningSha256 {
    state: [u32; 8],
    /// The bytes of an unfinished block, fewer than [`BLOCK_BYTES`].
    tail: Vec<u8>,
    /// Bytes hashed so far, the tail included.
    len_bytes: u64,
}

impl Default for RunningSha256 {
    fn default() -> Self {
        Self {
            state: INITIAL_STATE,
            tail: Vec::new(),
            len_bytes: 0,
        }
    }
}

impl std::fmt::Debug for RunningSha256 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningSha256")
            .field("len_bytes", &self.len_bytes)
            .finish()
    }
}

impl RunningSha256 {
    /// Hashes the next bytes.
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.len_bytes += bytes.len() as u64;
        if !self.tail.is_empty() {
            let take = (BLOCK_BYTES - self.tail.len()).min(bytes.len());
            self.tail.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.tail.len() < BLOCK_BYTES {
                return;
            }
            let block = std::mem::take(&mut self.tail);
            self.compress(&block);
        }
        let whole = bytes.len() - bytes.len() % BLOCK_BYTES;
        self.compress(&bytes[..whole]);
        self.tail.extend_from_slice(&bytes[whole..]);
    }

    /// Compresses whole blocks into the state, [`BATCH_BLOCKS`] at a
    /// time: `sha2`'s compression loads and stores its state once a call
    /// (with SHA extensions, a good part of a block's cost), so blocks go
    /// to it in batches, copied into the array type it takes.
    fn compress(&mut self, blocks: &[u8]) {
        let mut batch: [GenericArray<u8, U64>; BATCH_BLOCKS] =
            std::array::from_fn(|_| GenericArray::default());
        for group in blocks.chunks(BATCH_BLOCKS * BLOCK_BYTES) {
            let n = group.len() / BLOCK_BYTES;
            for (slot, block) in batch.iter_mut().zip(group.chunks_exact(BLOCK_BYTES)) {
                slot.copy_from_slice(block);
            }
            sha2::compress256(&mut self.state, &batch[..n]);
        }
    }

    /// Bytes hashed so far.
    pub fn len_bytes(&self) -> u64 {
        self.len_bytes
    }

    /// The digest of every byte given (the padding of FIPS 180-4, 5.1.1).
    pub fn finish(mut self) -> Sha256 {
        let bits = self.len_bytes.wrapping_mul(8);
        let mut last = std::mem::take(&mut self.tail);
        last.push(0x80);
        while last.len() % BLOCK_BYTES != BLOCK_BYTES - 8 {
            last.push(0);
        }
        last.extend_from_slice(&bits.to_be_bytes());
        self.compress(&last);
        let mut out = [0u8; 32];
        for (word, bytes) in self.state.iter().zip(out.chunks_exact_mut(4)) {
            bytes.copy_from_slice(&word.to_be_bytes());
        }
        Sha256(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sha2::Digest as _;

    #[test]
    fn known_answers() {
        assert_eq!(
            Sha256::of(b"").hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            Sha256::of(b"abc").hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_a_digest() {
        let d = Sha256::of(b"x");
        assert_eq!(Sha256::parse(&d.hex()), Some(d));
        assert_eq!(Sha256::parse(&d.hex().to_uppercase()), Some(d));
        assert_eq!(Sha256::parse(&d.hex()[1..]), None);
        assert_eq!(Sha256::parse(&"g".repeat(64)), None);
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(json, format!("\"{}\"", d.hex()));
        assert_eq!(serde_json::from_str::<Sha256>(&json).unwrap(), d);
    }

    proptest! {
        /// Hashed in any pieces, with the state stored and read back
        /// between them, the digest is sha2's of the whole.
        #[test]
        fn pieces_and_resumes_give_sha2s_digest(
            bytes in proptest::collection::vec(any::<u8>(), 0..600),
            cuts in proptest::collection::vec(0usize..600, 0..6),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            let mut running = RunningSha256::default();
            let mut from = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                running.update(&bytes[from..cut]);
                from = cut;
                let kept = serde_json::to_string(&running).unwrap();
                running = serde_json::from_str(&kept).unwrap();
            }
            prop_assert_eq!(running.len_bytes(), bytes.len() as u64);
            let want: [u8; 32] = sha2::Sha256::digest(&bytes).into();
            prop_assert_eq!(running.finish(), Sha256(want));
        }
    }
}
