//! Agent or browser (CONTRACT.md "Agents and browsers").

use http::{header, HeaderMap};

use crate::query::Query;

/// A browser is a request whose Accept header contains `text/html`;
/// everything else is an agent. `?json=1` and `?html=1` override.
pub fn wants_html(headers: &HeaderMap, query: &Query) -> bool {
    if query.flag("json").unwrap_or(false) {
        return false;
    }
    if query.flag("html").unwrap_or(false) {
        return true;
    }
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.to_ascii_lowercase().contains("text/html"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation() {
        let h = |accept: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::ACCEPT, accept.parse().unwrap());
            m
        };
        let none = Query::default();
        assert!(wants_html(
            &h("text/html,application/xhtml+xml,*/*;q=0.8"),
            &none
        ));
        assert!(!wants_html(&h("*/*"), &none));
        assert!(!wants_html(&h("application/json"), &none));
        assert!(!wants_html(&HeaderMap::new(), &none));
        assert!(!wants_html(
            &h("text/html"),
            &Query::parse("json=1").unwrap()
        ));
        assert!(wants_html(&h("*/*"), &Query::parse("html=1").unwrap()));
    }
}
