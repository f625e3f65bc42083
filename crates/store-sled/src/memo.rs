//! Records already decoded, keyed by the stored bytes they came from.
//!
//! Decoding a record's JSON was the largest cost of a small GET that the
//! store itself adds (docs/PERFORMANCE.md, issue 15). A record is read far
//! more often than it is written, so [`Memo`] keeps the decoded record next
//! to the bytes it was decoded from. A read still asks sled for the bytes,
//! and the memo answers only when they are equal to the bytes it kept:
//! decoding is a pure function of the bytes, so a memoized answer is the
//! answer decoding would give. Nothing has to be told of writes, and no
//! write path can leave a stale record behind: a record written since
//! simply misses.
//!
//! The memo is bounded by bytes of JSON kept (the decoded records are of
//! the same order), in two generations (`generations.rs`): records in use
//! survive, and the rest age out.

use std::sync::{Mutex, PoisonError};

use store_core::Object;

use crate::generations::Generations;

/// Bytes of JSON one generation keeps: two generations of 4 MiB hold
/// some ten thousand file records.
pub(crate) const GENERATION_BYTES_MAX: usize = 4 * 1024 * 1024;
/// Records above this size are decoded every time: a big dir or gallery
/// is read rarely next to files, and would take a generation's room.
pub(crate) const RECORD_BYTES_MAX: usize = 16 * 1024;

/// Decoded records by key, each with the bytes it was decoded from,
/// weighed by the bytes of key and JSON.
type Records = Generations<Box<[u8]>, (sled::IVec, Object)>;

/// Decoded records, bounded (see the module's docs).
pub(crate) struct Memo {
    generations: Mutex<Records>,
}

impl std::fmt::Debug for Memo {
    // The records themselves stay out of debug output: names and owners.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (entries, bytes) = self.lock().size();
        f.debug_struct("Memo")
            .field("entries", &entries)
            .field("bytes", &bytes)
            .finish()
    }
}

impl Default for Memo {
    fn default() -> Self {
        Self::with_capacity(GENERATION_BYTES_MAX)
    }
}

impl Memo {
    /// A memo whose generations hold up to `generation_bytes_max` bytes of
    /// JSON each.
    pub(crate) fn with_capacity(generation_bytes_max: usize) -> Self {
        Self {
            generations: Mutex::new(Generations::new(generation_bytes_max)),
        }
    }

    /// The record stored as `raw` under `key`: the memoized one when it
    /// was decoded from the same bytes, else `decode(raw)`, memoized.
    pub(crate) fn decode<E>(
        &self,
        key: &[u8],
        raw: sled::IVec,
        decode: impl FnOnce(&[u8]) -> Result<Object, E>,
    ) -> Result<Object, E> {
        if raw.len() > RECORD_BYTES_MAX {
            return decode(&raw);
        }
        if let Some(hit) = self.lookup(key, &raw) {
            return Ok(hit);
        }
        // Decoded outside the lock: two readers of one new record may both
        // decode it, which costs what no memo would.
        let object = decode(&raw)?;
        self.keep(key, raw, object.clone());
        Ok(object)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Records> {
        // Entries are inserted whole, so a panic elsewhere leaves none
        // half made.
        self.generations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The memoized record of `key` if it came from `raw`; one found in
    /// the old generation moves to the young one.
    fn lookup(&self, key: &[u8], raw: &[u8]) -> Option<Object> {
        let mut g = self.lock();
        if let Some((kept, object)) = g.young(key) {
            return (kept.as_ref() == raw).then(|| object.clone());
        }
        let (kept, object) = g.remove(key)?;
        if kept.as_ref() != raw {
            return None;
        }
        let hit = object.clone();
        Self::insert(g, key, kept, object);
        Some(hit)
    }

    fn keep(&self, key: &[u8], raw: sled::IVec, object: Object) {
        Self::insert(self.lock(), key, raw, object);
    }

    /// Puts the record into the young generation, weighed by its key and
    /// JSON, and drops what ages out after the lock is let go.
    fn insert(
        mut g: std::sync::MutexGuard<'_, Records>,
        key: &[u8],
        raw: sled::IVec,
        object: Object,
    ) {
        let weight = raw.len() + key.len();
        let aged = g.insert(key.into(), (raw, object), weight);
        drop(g);
        drop(aged);
    }

    /// Entries kept, in both generations (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().size().0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn object(name: &str) -> Object {
        let mut o = store_testkit::suite::sample_file("abc", Some(60), &[]);
        if let Object::File(f) = &mut o {
            f.name = name.to_string();
        }
        o
    }

    fn raw(o: &Object) -> sled::IVec {
        serde_json::to_vec(o).unwrap().into()
    }

    /// Decodes with serde, counting the calls.
    fn counting(calls: &Cell<u32>) -> impl Fn(&[u8]) -> Result<Object, serde_json::Error> + '_ {
        move |b| {
            calls.set(calls.get() + 1);
            serde_json::from_slice(b)
        }
    }

    #[test]
    fn the_same_bytes_decode_once() {
        let memo = Memo::default();
        let calls = Cell::new(0);
        let a = object("a.txt");
        for _ in 0..3 {
            let got = memo.decode(b"k", raw(&a), counting(&calls)).unwrap();
            assert_eq!(got, a);
        }
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn changed_bytes_are_decoded_again_and_never_answered_stale() {
        let memo = Memo::default();
        let calls = Cell::new(0);
        let (a, b) = (object("a.txt"), object("b.txt"));
        assert_eq!(memo.decode(b"k", raw(&a), counting(&calls)).unwrap(), a);
        assert_eq!(memo.decode(b"k", raw(&b), counting(&calls)).unwrap(), b);
        assert_eq!(memo.decode(b"k", raw(&b), counting(&calls)).unwrap(), b);
        assert_eq!(memo.decode(b"k", raw(&a), counting(&calls)).unwrap(), a);
        assert_eq!(calls.get(), 3);
    }

    #[test]
    fn a_decoding_error_is_passed_on_and_not_kept() {
        let memo = Memo::default();
        let calls = Cell::new(0);
        let bad: sled::IVec = b"{not json".to_vec().into();
        for _ in 0..2 {
            assert!(memo.decode(b"k", bad.clone(), counting(&calls)).is_err());
        }
        assert_eq!(calls.get(), 2);
        assert_eq!(memo.len(), 0);
    }

    #[test]
    fn memory_is_bounded_and_records_in_use_survive() {
        let a = object("a.txt");
        let one = raw(&a).len() + 2;
        // Room for four entries in each generation.
        let memo = Memo::with_capacity(4 * one);
        let calls = Cell::new(0);
        for i in 0..100u32 {
            let key = format!("{:02}", i % 100);
            memo.decode(key.as_bytes(), raw(&a), counting(&calls))
                .unwrap();
            // Key "hh" is read between every other read: it stays in.
            memo.decode(b"hh", raw(&a), counting(&calls)).unwrap();
            assert!(memo.len() <= 8, "{} entries", memo.len());
        }
        assert_eq!(calls.get(), 101, "100 keys once each, and hh once");
    }

    #[test]
    fn big_records_are_not_kept() {
        let memo = Memo::default();
        let calls = Cell::new(0);
        let big = object(&"n".repeat(RECORD_BYTES_MAX));
        for _ in 0..2 {
            assert_eq!(memo.decode(b"k", raw(&big), counting(&calls)).unwrap(), big);
        }
        assert_eq!(calls.get(), 2);
        assert_eq!(memo.len(), 0);
    }
}
