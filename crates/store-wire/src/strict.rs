//! The strict reading of a query: what would otherwise be dropped or
//! settled in silence is refused (400) before any route runs.

use store_core::StoreError;

use crate::query::Query;
use crate::routes;

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

/// Refuses what would otherwise be dropped or settled in silence: a
/// single-valued parameter given twice, and an unknown parameter one
/// letter away from a known one.
pub fn check(query: &Query) -> Result<(), StoreError> {
    let keys: Vec<&str> = query.keys().collect();
    for (i, key) in keys.iter().copied().enumerate() {
        let known = routes::is_known_param(key);
        if known && !routes::is_list_param(key) {
            if keys[..i].contains(&key) {
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
    fn strictness() {
        let strict = |q: &str| check(&Query::parse(q).unwrap());
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
