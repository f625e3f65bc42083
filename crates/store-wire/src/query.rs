//! Query strings: decoded once into pairs, read through typed helpers that
//! answer 400 for malformed values.

use store_core::StoreError;

/// A request's query string, decoded once into its pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query(Vec<(String, String)>);

/// Pairs kept from one query string, so that a hostile URL cannot make the
/// server hold an unbounded list.
const QUERY_PAIRS_MAX: usize = 64;

impl Query {
    /// Parses a query string, refusing (400) more than `QUERY_PAIRS_MAX`
    /// pairs instead of dropping the rest: a flag at the end of a long URL
    /// must never be lost in silence.
    pub fn parse(raw: &str) -> Result<Self, StoreError> {
        let mut pairs = Vec::new();
        for (k, v) in form_urlencoded::parse(raw.as_bytes()) {
            if pairs.len() == QUERY_PAIRS_MAX {
                return Err(StoreError::bad_request(format!(
                    "too many query parameters: at most {QUERY_PAIRS_MAX}"
                )));
            }
            pairs.push((k.into_owned(), v.into_owned()));
        }
        Ok(Self(pairs))
    }

    /// A query made of these pairs, as if parsed (an MCP tool call's
    /// arguments), refused like a parsed one when there are too many.
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Result<Self, StoreError> {
        if pairs.len() > QUERY_PAIRS_MAX {
            return Err(StoreError::bad_request(format!(
                "too many query parameters: at most {QUERY_PAIRS_MAX}"
            )));
        }
        Ok(Self(pairs))
    }

    /// The keys given, in order (a key given twice is there twice).
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }

    /// Adds pairs (form fields of a multipart body) after the URL's own, so
    /// that the URL wins where both give a value.
    pub fn extend(&mut self, pairs: impl IntoIterator<Item = (String, String)>) {
        let room = QUERY_PAIRS_MAX.saturating_sub(self.0.len());
        self.0.extend(pairs.into_iter().take(room));
    }

    /// The query with a form's fields after its own pairs, so that the
    /// URL's values win. An empty form field is a control left at "no
    /// value" (the upload page's default lifetime, an unfilled name): it
    /// was not given. A query parameter stays strict, so `?ttl=` is still
    /// a 400.
    pub fn with_fields(&self, fields: Vec<(String, String)>) -> Query {
        let mut q = self.clone();
        q.extend(fields.into_iter().filter(|(_, v)| !v.is_empty()));
        q
    }

    /// The pairs, in order.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.0.clone()
    }

    /// Whether the query names `key`, with any value.
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
        let q = Query::parse("tag=a&tag=b,c&once=1&name=a%20b.txt&x=&bad=maybe").unwrap();
        assert_eq!(q.all("tag"), ["a", "b", "c"]);
        assert_eq!(q.flag("once"), Ok(true));
        assert_eq!(q.flag("x"), Ok(true));
        assert_eq!(q.flag("missing"), Ok(false));
        assert!(q.flag("bad").is_err());
        assert_eq!(q.get("name"), Some("a b.txt"));
        assert!(q.text("x").is_err());
        let pairs = |n: usize| {
            (0..n)
                .map(|i| format!("k{i}=v"))
                .collect::<Vec<_>>()
                .join("&")
        };
        assert_eq!(
            Query::parse(&pairs(QUERY_PAIRS_MAX)).unwrap().0.len(),
            QUERY_PAIRS_MAX
        );
        // Issue 19: the 65th pair (say, once=1) was dropped in silence.
        assert!(Query::parse(&format!("{}&once=1", pairs(QUERY_PAIRS_MAX))).is_err());
    }
}
