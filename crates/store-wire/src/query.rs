//! Query strings: decoded once into pairs, read through typed helpers that
//! answer 400 for malformed values.

use store_core::StoreError;

use crate::routes;

/// A request's query string, decoded once into its pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query(Vec<(String, String)>);

/// Pairs kept from one query string, so that a hostile URL cannot make the
/// server hold an unbounded list.
const QUERY_PAIRS_MAX: usize = 64;

// Every parameter the service reads is in the route table (routes.rs). An
// unknown one is ignored (a cache buster, a tracking tag), unless it is one
// letter away from a known one: then it is most likely a typo, and ignoring
// it would quietly do something else than asked (`onse=1` would make a file
// that does not burn). docs/DECISIONS.md. Only `Shape::List` parameters may
// be given more than once; any other given twice is refused rather than
// settled by order.

/// Shortest unknown key that is checked for being a typo: shorter keys
/// (`v`, `_`) are one letter from too much.
const TYPO_KEY_CHARS_MIN: usize = 3;

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

    /// Refuses what would otherwise be dropped or settled in silence: a
    /// single-valued parameter given twice, and an unknown parameter one
    /// letter away from a known one.
    pub fn check_strict(&self) -> Result<(), StoreError> {
        for (i, (key, _)) in self.0.iter().enumerate() {
            let known = routes::is_known_param(key);
            if known && !routes::is_list_param(key) {
                if self.0[..i].iter().any(|(k, _)| k == key) {
                    return Err(StoreError::bad_request(format!(
                        "{key} is given more than once; give it once"
                    )));
                }
            } else if !known && key.chars().count() >= TYPO_KEY_CHARS_MIN {
                let mut names = routes::GLOBAL_PARAMS.iter().chain(routes::params());
                if let Some(meant) = names.find(|p| one_edit_apart(key, p.name)).map(|p| p.name) {
                    return Err(StoreError::bad_request(format!(
                        "unknown parameter {key:?}: did you mean {meant:?}?"
                    )));
                }
            }
        }
        Ok(())
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

/// Whether one character inserted, removed, replaced or two neighbours
/// swapped (ignoring case) turns `a` into `b`.
fn one_edit_apart(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a == b {
        return true; // Only the case differs: `Once` for `once`.
    }
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    if long.len() - short.len() > 1 {
        return false;
    }
    let head = short
        .iter()
        .zip(long.iter())
        .take_while(|(x, y)| x == y)
        .count();
    if short.len() == long.len() {
        let swapped = head + 1 < short.len()
            && short[head] == long[head + 1]
            && short[head + 1] == long[head]
            && short[head + 2..] == long[head + 2..];
        return swapped || short[head + 1..] == long[head + 1..];
    }
    short[head..] == long[head + 1..]
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

    #[test]
    fn strictness() {
        let strict = |q: &str| Query::parse(q).unwrap().check_strict();
        for ok in [
            "once=1&ttl=1d&name=a.txt",
            "tag=a&tag=b&untag=c&untag=d",
            "stars=1&stars=2",
            "v=3&_=17&utm_source=x",
            "cachebust=1",
        ] {
            assert_eq!(strict(ok), Ok(()), "{ok}");
        }
        for bad in [
            "once=1&once=0",
            "ttl=1d&ttl=2d",
            "name=a&name=b",
            "onse=1",
            "Once=1",
            "tll=1d",
            "ttll=1d",
            "retian=1",
            "nmae=a",
            "uri=http://x",
            "thumbs=1",
        ] {
            assert!(strict(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_table_knows_every_parameter_read() {
        for key in [
            "action",
            "clike",
            "comment",
            "create",
            "created_after",
            "created_before",
            "dir",
            "download",
            "embed",
            "html",
            "id",
            "info",
            "json",
            "like",
            "likes",
            "link",
            "listed",
            "name",
            "once",
            "order",
            "p",
            "q",
            "retain",
            "share",
            "show",
            "sort",
            "stars",
            "tag",
            "text",
            "thumb",
            "token",
            "ttl",
            "untag",
            "updated_after",
            "updated_before",
            "url",
            "write",
            "zip",
        ] {
            assert!(routes::is_known_param(key), "{key}");
        }
        assert!(!routes::is_known_param("cachebust"));
        for key in ["tag", "untag", "stars"] {
            assert!(routes::is_list_param(key), "{key}");
        }
        assert!(!routes::is_list_param("once"));
    }

    #[test]
    fn edits() {
        assert!(one_edit_apart("onse", "once"));
        assert!(one_edit_apart("onc", "once"));
        assert!(one_edit_apart("oncee", "once"));
        assert!(one_edit_apart("ocne", "once"));
        assert!(!one_edit_apart("owner", "order"));
        assert!(!one_edit_apart("protect", "p"));
        assert!(!one_edit_apart("max_downloads", "download"));
    }
}
