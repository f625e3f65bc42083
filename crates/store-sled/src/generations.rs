//! A bounded map that forgets what is not used, for the record memo
//! (`memo.rs`) and the kept files of blobs (`handles.rs`).
//!
//! Two generations: entries go into the young one, and when it would pass
//! its bound the old one is handed back to the caller (to drop, outside
//! any lock it holds) and the young one takes its place. An entry used
//! again is moved back to the young one by its user (`remove`, then
//! `insert`), so entries in use survive and the rest age out, without the
//! bookkeeping of an exact LRU. At most twice the bound is held.

use std::collections::HashMap;
use std::hash::Hash;

/// One generation: entries with their weights, and the weights' sum.
#[derive(Debug)]
pub(crate) struct Generation<K, V> {
    entries: HashMap<K, (V, usize)>,
    weight: usize,
}

impl<K, V> Default for Generation<K, V> {
    fn default() -> Self {
        Self {
            entries: HashMap::new(),
            weight: 0,
        }
    }
}

impl<K: Hash + Eq, V> Generation<K, V> {
    fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let (value, weight) = self.entries.remove(key)?;
        self.weight -= weight;
        Some(value)
    }
}

/// Two generations of entries, each bounded by `weight_max`.
#[derive(Debug)]
pub(crate) struct Generations<K, V> {
    young: Generation<K, V>,
    old: Generation<K, V>,
    /// The most weight one generation holds.
    weight_max: usize,
}

impl<K: Hash + Eq, V> Generations<K, V> {
    /// Empty generations of at most `weight_max` each.
    pub(crate) fn new(weight_max: usize) -> Self {
        Self {
            young: Generation::default(),
            old: Generation::default(),
            weight_max,
        }
    }

    /// The young generation's entry for `key`.
    pub(crate) fn young<Q>(&self, key: &Q) -> Option<&V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.young.entries.get(key).map(|(v, _)| v)
    }

    /// Takes the entry for `key` out of whichever generation holds it.
    pub(crate) fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.young.remove(key).or_else(|| self.old.remove(key))
    }

    /// Puts `value` under `key` into the young generation, replacing any
    /// entry for it, and answers the generation aged out to make room
    /// (empty when none was): the caller drops it when it likes.
    #[must_use = "the aged-out generation is the caller's to drop"]
    pub(crate) fn insert(&mut self, key: K, value: V, weight: usize) -> Generation<K, V> {
        drop(self.remove(&key));
        let mut aged = Generation::default();
        if self.young.weight + weight > self.weight_max {
            let young = std::mem::take(&mut self.young);
            aged = std::mem::replace(&mut self.old, young);
        }
        self.young.weight += weight;
        self.young.entries.insert(key, (value, weight));
        aged
    }

    /// Entries held, and their weight, in both generations.
    pub(crate) fn size(&self) -> (usize, usize) {
        (
            self.young.entries.len() + self.old.entries.len(),
            self.young.weight + self.old.weight,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_in_use_survive_and_the_rest_age_out() {
        let mut g: Generations<u32, u32> = Generations::new(4);
        for i in 0..100 {
            drop(g.insert(i, i, 1));
            // Entry 1000 is used between every other insert.
            let kept = g.remove(&1000).unwrap_or(0);
            drop(g.insert(1000, kept + 1, 1));
            assert!(g.size().1 <= 8, "{:?}", g.size());
        }
        assert_eq!(g.young(&1000), Some(&100));
        assert_eq!(g.remove(&0), None, "aged out");
        assert!(g.remove(&99).is_some());
    }

    #[test]
    fn insert_replaces_and_hands_back_the_aged_generation() {
        let mut g: Generations<&str, u32> = Generations::new(2);
        assert!(g.insert("a", 1, 1).entries.is_empty());
        assert!(
            g.insert("a", 2, 1).entries.is_empty(),
            "replaced, not added"
        );
        assert_eq!(g.size(), (1, 1));
        assert!(g.insert("b", 3, 1).entries.is_empty());
        assert!(g.insert("c", 4, 1).entries.is_empty(), "a and b became old");
        assert!(g.insert("d", 5, 1).entries.is_empty());
        let aged = g.insert("e", 6, 1);
        assert_eq!(aged.entries.len(), 2);
        assert!(aged.entries.contains_key("a") && aged.entries.contains_key("b"));
        assert_eq!(g.size(), (3, 3));
        assert_eq!(g.remove("a"), None);
        assert_eq!(g.young("c"), None, "c is old now");
        assert_eq!(g.remove("c"), Some(4), "from the old generation");
    }
}
