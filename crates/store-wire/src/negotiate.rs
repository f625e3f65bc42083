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

/// User-Agent words of the programs that fetch a pasted link to draw its
/// preview card (chat apps, social sites, search engines' previewers).
/// They must never spend a counted download: many of them send
/// `Accept: */*`, so they would pass for agents. Lower case; matched as
/// substrings of the lower-cased User-Agent.
const LINK_PREVIEWERS: &[&str] = &[
    "slackbot",
    "slack-imgproxy",
    "discordbot",
    "facebookexternalhit",
    "facebot",
    "twitterbot",
    "whatsapp",
    "telegrambot",
    "linkedinbot",
    "skypeuripreview",
    "microsoftpreview",
    "mattermost",
    "rocket.chat",
    "zulip",
    "iframely",
    "embedly",
    "pinterest",
    "redditbot",
    "applebot",
    "googlebot",
    "bingbot",
    "bingpreview",
    "yandex",
    "duckduckbot",
    "mastodon",
    "vkshare",
    "viber",
    "line-poker",
    "kakaotalk",
    "snapchat",
];

/// Whether the request comes from a link previewer (see
/// `LINK_PREVIEWERS`): it is shown what a browser is shown first, never
/// the bytes of a file whose downloads are counted.
pub fn is_link_previewer(headers: &HeaderMap) -> bool {
    headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(str::to_ascii_lowercase)
        .is_some_and(|ua| LINK_PREVIEWERS.iter().any(|bot| ua.contains(bot)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_previewers_are_told_apart_from_curl_and_browsers() {
        let ua = |agent: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::USER_AGENT, agent.parse().unwrap());
            m
        };
        for bot in [
            "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
            "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
            "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
            "Mozilla/5.0 (Macintosh) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0",
            "WhatsApp/2.23.20.0 A",
            "TelegramBot (like TwitterBot)",
            "Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5",
        ] {
            assert!(is_link_previewer(&ua(bot)), "{bot}");
        }
        for person in [
            "curl/8.5.0",
            "Wget/1.21.4",
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
            "python-requests/2.32",
        ] {
            assert!(!is_link_previewer(&ua(person)), "{person}");
        }
        assert!(!is_link_previewer(&HeaderMap::new()));
    }

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
