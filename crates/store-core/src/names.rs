//! Naming rules of SPEC.md: memorable names, tags and file names.

use unicode_normalization::UnicodeNormalization;

use crate::error::StoreError;
use crate::limits::Limits;

/// Names a memorable name may not take (SPEC.md leaves the list open; this
/// is the decision, recorded in docs/DECISIONS.md). It holds every route word
/// long enough to be a name, and words a visitor would take for the
/// service's own pages. Route words shorter than five characters (`api`,
/// `d`, `help`, `pics`) can never be names anyway.
pub const RESERVED_NAMES: &[&str] = &[
    "admin",
    "assets",
    "browse",
    "copy_for_agents",
    "favicon",
    "gallery",
    "galleries",
    "health",
    "index",
    "login",
    "logout",
    "releases",
    "robots",
    "share",
    "static",
    "store",
    "storesrv",
    "system",
    "thumb",
    "upload",
    "uploads",
    "write_for_agents",
];

/// Checks a share, dir or gallery name: `name_chars_min` to `name_chars_max`
/// (SPEC.md: 5-32) characters of `[a-z0-9-]`, at least one letter, not
/// reserved.
pub fn validate_memorable_name(limits: &Limits, name: &str) -> Result<(), StoreError> {
    let len = name.len();
    let charset_ok = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !(limits.name_chars_min..=limits.name_chars_max).contains(&len)
        || !charset_ok
        || !name.bytes().any(|b| b.is_ascii_lowercase())
    {
        return Err(StoreError::bad_request(format!(
            "invalid name {name:?}: use {}-{} characters of a-z, 0-9 and '-', with at least one letter",
            limits.name_chars_min,
            limits.name_chars_max
        )));
    }
    // Unnamed dirs have 32-hex ids; a name of that shape could capture one
    // through create-or-get.
    if name.len() == 32 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(StoreError::bad_request(format!(
            "the name {name:?} has the shape of an unnamed dir's id; choose another"
        )));
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(StoreError::bad_request(format!(
            "the name {name:?} is reserved"
        )));
    }
    Ok(())
}

/// Checks one tag: `tag_chars_min` to `tag_chars_max` (SPEC.md: 1-24)
/// characters of lowercase `[a-z0-9-]`.
pub fn validate_tag(limits: &Limits, tag: &str) -> Result<(), StoreError> {
    let ok = (limits.tag_chars_min..=limits.tag_chars_max).contains(&tag.len())
        && tag
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(StoreError::bad_request(format!(
            "invalid tag {tag:?}: use {}-{} characters of lowercase a-z, 0-9 and '-'",
            limits.tag_chars_min, limits.tag_chars_max
        )))
    }
}

/// Applies additions and removals to a tag set, keeping first-seen order and
/// no duplicates, and refuses a result over the per-object maximum.
pub fn apply_tags(
    limits: &Limits,
    current: &[String],
    add: &[String],
    remove: &[String],
) -> Result<Vec<String>, StoreError> {
    for tag in add.iter().chain(remove) {
        validate_tag(limits, tag)?;
    }
    let mut out: Vec<String> = Vec::with_capacity(current.len() + add.len());
    for tag in current.iter().chain(add) {
        if !remove.contains(tag) && !out.contains(tag) {
            out.push(tag.clone());
        }
    }
    if out.len() > limits.tags_per_object_max {
        return Err(StoreError::bad_request(format!(
            "too many tags: at most {} per file or dir",
            limits.tags_per_object_max
        )));
    }
    Ok(out)
}

/// Checks a stored file name: not empty, not `.` or `..`, no `/` or `\`, no
/// control characters, at most `file_name_bytes_max` (SPEC.md: 255) bytes.
/// Such names are safe as a path segment, as a zip entry and in a
/// Content-Disposition header.
pub fn validate_file_name(limits: &Limits, name: &str) -> Result<(), StoreError> {
    let too_long;
    let reason = if name.len() > limits.file_name_bytes_max {
        too_long = format!("is longer than {} bytes", limits.file_name_bytes_max);
        Some(too_long.as_str())
    } else {
        file_name_shape_problem(name)
    };
    match reason {
        Some(why) => Err(StoreError::bad_request(format!(
            "invalid file name {name:?}: it {why}"
        ))),
        None => Ok(()),
    }
}

/// What makes `name` unsafe as a file name whatever its length, if
/// anything. Names taken from a URL or a header are checked with this
/// alone; whoever stores them checks the length with the limits.
pub fn file_name_shape_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name.chars().any(char::is_control) {
        Some("contains a control character")
    } else if name.chars().any(is_invisible_format) {
        Some("contains an invisible or direction-changing character (bidi or zero-width)")
    } else if name.starts_with(char::is_whitespace) || name.ends_with(char::is_whitespace) {
        Some("begins or ends with a space")
    } else {
        // Compatibility forms count as what they display as: a fullwidth
        // `．．` is `..`, a fullwidth solidus is a slash.
        let folded: String = name.nfkc().collect();
        if folded == "." || folded == ".." {
            Some("is a path component")
        } else if folded.contains(['/', '\\']) {
            Some("contains a slash")
        } else {
            None
        }
    }
}

/// Characters that change how a name displays without showing themselves:
/// bidirectional controls (a name could read `exe.txt` and be `txt.exe`)
/// and zero-width ones.
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

/// The name a file gets when the client gave none.
pub fn default_file_name(content_type: &str) -> String {
    let ext = crate::content::extension_for(content_type).unwrap_or("bin");
    format!("upload.{ext}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const L: Limits = Limits::DEFAULT;

    #[test]
    fn memorable_names() {
        for ok in [
            "hello",
            "my-dir-2",
            "a1234",
            "abcdefghijklmnopqrstuvwxyz012345",
        ] {
            assert!(validate_memorable_name(&L, ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "abcd",
            "12345",
            "Hello",
            "hello_",
            "héllo",
            "a b cd",
            "abcdefghijklmnopqrstuvwxyz0123456",
            "browse",
            "admin",
            "releases",
        ] {
            assert!(validate_memorable_name(&L, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tags() {
        assert!(validate_tag(&L, "rust").is_ok());
        assert!(validate_tag(&L, "a").is_ok());
        assert!(validate_tag(&L, "Rust").is_err());
        assert!(validate_tag(&L, "").is_err());
        assert!(validate_tag(&L, &"a".repeat(25)).is_err());
        let t = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            apply_tags(&L, &t(&["a", "b"]), &t(&["c", "a"]), &t(&["b"])).unwrap(),
            t(&["a", "c"])
        );
        assert!(apply_tags(&L, &[], &t(&["a", "b", "c", "d", "e", "f"]), &[]).is_err());
        // Removing one makes room for another in the same request.
        assert!(apply_tags(&L, &t(&["a", "b", "c", "d", "e"]), &t(&["f"]), &t(&["a"])).is_ok());
    }

    #[test]
    fn file_names() {
        for ok in ["a.txt", "résumé.pdf", "..hidden", "x y"] {
            assert!(validate_file_name(&L, ok).is_ok(), "{ok}");
        }
        for bad in ["", ".", "..", "a/b", "a\\b", "a\nb", "a\u{7f}"] {
            assert!(validate_file_name(&L, bad).is_err(), "{bad:?}");
        }
        assert!(validate_file_name(&L, &"x".repeat(256)).is_err());
    }

    /// Issue 19: names that display as a path component, or hide what they
    /// are, were accepted.
    #[test]
    fn names_that_look_like_something_else_are_refused() {
        for bad in [
            " ..",
            ".. ",
            " a.txt",
            "a.txt ",
            "\u{FF0E}\u{FF0E}",
            "\u{FF0E}",
            "a\u{FF0F}b",
            "a\u{FF3C}b",
            "report\u{202E}fdp.exe",
            "a\u{200B}b",
            "\u{FEFF}a",
            "a\u{2066}b",
        ] {
            assert!(validate_file_name(&L, bad).is_err(), "{bad:?}");
        }
        // Other non-ASCII names keep working, compatibility forms included.
        for ok in [
            "\u{FB01}le.txt",
            "日本語.txt",
            "x\u{FF0E}txt",
            "ｆｕｌｌ.txt",
        ] {
            assert!(validate_file_name(&L, ok).is_ok(), "{ok:?}");
        }
    }

    proptest! {
        #[test]
        fn valid_names_are_url_and_path_safe(name in "[a-z0-9-]{5,32}") {
            if validate_memorable_name(&L, &name).is_ok() {
                prop_assert!(name.bytes().any(|b| b.is_ascii_lowercase()));
                prop_assert!(!RESERVED_NAMES.contains(&name.as_str()));
            }
        }

        #[test]
        fn applied_tags_are_bounded_and_unique(
            cur in prop::collection::vec("[a-z]{1,3}", 0..5),
            add in prop::collection::vec("[a-z]{1,3}", 0..8),
            rm in prop::collection::vec("[a-z]{1,3}", 0..3),
        ) {
            let cur = apply_tags(&L, &[], &cur, &[]).unwrap_or_default();
            if let Ok(out) = apply_tags(&L, &cur, &add, &rm) {
                prop_assert!(out.len() <= L.tags_per_object_max);
                for t in &rm { prop_assert!(!out.contains(t)); }
                let mut dedup = out.clone(); dedup.sort(); dedup.dedup();
                prop_assert_eq!(dedup.len(), out.len());
            }
        }
    }
}
