//! Query strings: decoded once into pairs, read through typed helpers that
//! answer 400 for malformed values.

use store_core::StoreError;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query(Vec<(String, String)>);

/// Pairs kept from one query string, so that a hostile URL cannot make the
/// server hold an unbounded list.
const QUERY_PAIRS_MAX: usize = 64;

impl Query {
    pub fn parse(raw: &str) -> Self {
        Self(
            form_urlencoded::parse(raw.as_bytes())
                .take(QUERY_PAIRS_MAX)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    /// Adds pairs (form fields of a multipart body) after the URL's own, so
    /// that the URL wins where both give a value.
    pub fn extend(&mut self, pairs: impl IntoIterator<Item = (String, String)>) {
        let room = QUERY_PAIRS_MAX.saturating_sub(self.0.len());
        self.0.extend(pairs.into_iter().take(room));
    }

    /// The pairs, in order.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.0.clone()
    }

    pub fn has(&self, key: &str) -> bool {
        self.0.iter().any(|(k, _)| k == key)
    }

    /// The first value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`, in order. Comma-separated values count as
    /// several (`tag=a,b` is `tag=a&tag=b`).
    pub fn all(&self, key: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .flat_map(|(_, v)| v.split(','))
            .filter(|v| !v.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// A boolean flag: absent is false; `1`, `true`, `yes`, `on` or an
    /// empty value are true; `0`, `false`, `no`, `off` are false; anything
    /// else is a 400.
    pub fn flag(&self, key: &str) -> Result<bool, StoreError> {
        match self.get(key) {
            None => Ok(false),
            Some("" | "1" | "true" | "yes" | "on") => Ok(true),
            Some("0" | "false" | "no" | "off") => Ok(false),
            Some(other) => Err(StoreError::bad_request(format!(
                "invalid value {other:?} for {key}: use 1 or 0"
            ))),
        }
    }

    /// A non-empty string value.
    pub fn text(&self, key: &str) -> Result<Option<String>, StoreError> {
        match self.get(key) {
            None => Ok(None),
            Some("") => Err(StoreError::bad_request(format!("{key} must not be empty"))),
            Some(v) => Ok(Some(v.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing() {
        let q = Query::parse("tag=a&tag=b,c&once=1&name=a%20b.txt&x=&bad=maybe");
        assert_eq!(q.all("tag"), ["a", "b", "c"]);
        assert_eq!(q.flag("once"), Ok(true));
        assert_eq!(q.flag("x"), Ok(true));
        assert_eq!(q.flag("missing"), Ok(false));
        assert!(q.flag("bad").is_err());
        assert_eq!(q.get("name"), Some("a b.txt"));
        assert!(q.text("x").is_err());
        let many = (0..1000)
            .map(|i| format!("k{i}=v"))
            .collect::<Vec<_>>()
            .join("&");
        assert_eq!(Query::parse(&many).0.len(), QUERY_PAIRS_MAX);
    }
}
