//! Webhook events (issue 36, CONTRACT.md "Operators: moderation and
//! webhooks"): which change of a record is which event, what an event
//! carries, and when a delivery that failed is tried again. The
//! adapters keep the outbox, written in the same transaction as the
//! change; store-app's delivery task sends what it claims from it.

use serde::{Deserialize, Serialize};

use crate::record::{Object, ObjectKind};
use crate::time::Timestamp;

/// What happened to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventType {
    /// It was made (an upload, an import, a bundle, a dir, a gallery or
    /// an image; a resumable upload when its last byte came).
    #[serde(rename = "object.created")]
    Created,
    /// It was removed before its time: by its owner, the admin, a burnt
    /// download, eviction or a block.
    #[serde(rename = "object.deleted")]
    Deleted,
    /// Its lifetime ran out and the sweeper removed it.
    #[serde(rename = "object.expired")]
    Expired,
    /// A visitor reported it.
    #[serde(rename = "object.reported")]
    Reported,
    /// The admin blocked bytes it held (the removals follow as
    /// `object.deleted`).
    #[serde(rename = "object.blocked")]
    Blocked,
}

impl EventType {
    /// The event's `type` on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "object.created",
            Self::Deleted => "object.deleted",
            Self::Expired => "object.expired",
            Self::Reported => "object.reported",
            Self::Blocked => "object.blocked",
        }
    }
}

/// How a record left its key, for [`change_event`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Written: made, or replaced.
    Written,
    /// Removed while live (or whatever its lifetime, by a request).
    Removed,
    /// Removed by the sweeper, past its lifetime.
    Swept,
}

/// The event a change of the record under a key makes, from what was
/// there (`old`) to what is (`new`), if any. A resumable upload in
/// progress is not an object yet: its record makes no event, and the
/// write that turns it into its file is the file's creation. A
/// replacement of an object by itself (an edit, a like, a retention) is
/// none of the events.
pub fn change_event(old: Option<&Object>, new: Option<&Object>, how: Change) -> Option<EventType> {
    let counts = |o: &&Object| o.kind() != ObjectKind::Upload;
    match (old.filter(counts), new.filter(counts), how) {
        (None, Some(_), _) => Some(EventType::Created),
        (Some(_), None, Change::Swept) => Some(EventType::Expired),
        (Some(_), None, _) => Some(EventType::Deleted),
        _ => None,
    }
}

/// What an event says of its object: enough for a receiver to act on
/// without asking (and nothing secret: no token, no password hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventData {
    /// The object's repository key (a file's id, `d/<key>` for a dir).
    pub key: String,
    /// The object's kind (`file`, `bundle`, `dir`, `gallery`, `image`).
    pub kind: String,
    /// Its name, where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its size in bytes.
    pub size: u64,
    /// The digests of its bytes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sha256: Vec<String>,
    /// A report's or a block's reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl EventData {
    /// What an event says of `object`, stored under `key`.
    pub fn of(key: &str, object: &Object) -> Self {
        let (name, size) = match object {
            Object::File(f) => (Some(f.name.clone()), f.size),
            Object::Bundle(b) => (None, b.size()),
            Object::Dir(d) => (Some(d.key.clone()), d.size()),
            Object::Gallery(g) => (g.name.clone(), 0),
            Object::Image(i) => (Some(i.name.clone()), i.size),
            Object::Upload(u) => (u.request.name.clone(), u.length),
        };
        Self {
            key: key.to_string(),
            kind: object.kind().name().to_string(),
            name,
            size,
            sha256: object.digests().iter().map(|d| d.hex()).collect(),
            reason: None,
        }
    }
}

/// An event in the outbox: kept until delivered, or until its retries
/// run out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// `webhook-id`: the same on every try, so a receiver can drop a
    /// delivery it already had.
    pub id: String,
    /// What happened.
    #[serde(rename = "type")]
    pub kind: EventType,
    /// When it happened.
    pub at: Timestamp,
    /// What it happened to.
    pub data: EventData,
}

impl Event {
    /// A new event; its id is made from its place in the outbox when it
    /// is claimed (see [`event_id`]).
    pub fn new(kind: EventType, at: Timestamp, data: EventData) -> Self {
        Self {
            id: String::new(),
            kind,
            at,
            data,
        }
    }
}

/// An event's `webhook-id` from its place in the outbox and its time:
/// `msg_<millis>_<seq>`, the same on every try.
pub fn event_id(seq: u64, at: Timestamp) -> String {
    format!("msg_{}_{seq}", at.as_millis())
}

/// How a record removed at `now` left: swept if its lifetime was over
/// (`object.expired`), removed otherwise (`object.deleted`), whichever
/// path removed it.
pub fn removal(old: &Object, now: Timestamp) -> Change {
    if old.lifetime().is_live(now) {
        Change::Removed
    } else {
        Change::Swept
    }
}

/// An event claimed for delivery: its place in the outbox (which keeps
/// the order per object), and the tries made so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    /// Its place in the outbox.
    pub seq: u64,
    /// The event, its id set.
    pub event: Event,
    /// Deliveries tried before this one.
    pub attempts: u32,
}

/// How long deliveries of one event are tried, from the event on, at the
/// default pace.
pub const RETRY_WINDOW_SECS: u64 = 24 * 3600;

/// The pauses between tries at the default pace: about 5 s, then 30 s,
/// then growing, up to two hours, for [`RETRY_WINDOW_SECS`].
const RETRY_PAUSES_MS: [u64; 7] = [
    5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000,
];

/// The time one delivery may take at the default pace.
pub const DELIVERY_TIMEOUT_MS: u64 = 15_000;

/// The pace of deliveries: how long one may take, and from that, how
/// long a claim holds an event (four times as long) and the pauses
/// between tries (in proportion). The default is the contract's; tests
/// run the same schedule faster (`STORE_WEBHOOK_TIMEOUT_MS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryPace {
    /// How long one delivery may take, in milliseconds.
    pub timeout_ms: u64,
}

impl Default for DeliveryPace {
    fn default() -> Self {
        Self {
            timeout_ms: DELIVERY_TIMEOUT_MS,
        }
    }
}

impl DeliveryPace {
    /// How long a claim keeps an event from other deliverers: longer
    /// than a delivery can take.
    pub fn lease_ms(self) -> u64 {
        4 * self.timeout_ms
    }

    fn scaled(self, ms: u64) -> u64 {
        (ms * self.timeout_ms / DELIVERY_TIMEOUT_MS).max(1)
    }

    /// When to try again an event that happened at `at` and whose
    /// delivery failed for the `attempts`-th time at `now`; `None` once
    /// its window is over.
    pub fn next_try(self, at: Timestamp, attempts: u32, now: Timestamp) -> Option<Timestamp> {
        let i = (attempts.max(1) as usize - 1).min(RETRY_PAUSES_MS.len() - 1);
        let next = Timestamp::from_millis(now.as_millis() + self.scaled(RETRY_PAUSES_MS[i]) as i64);
        let end = at.as_millis() + self.scaled(RETRY_WINDOW_SECS * 1000) as i64;
        (next.as_millis() <= end).then_some(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::FileRecord;
    use crate::resumable::UploadRecord;
    use crate::Lifetime;

    fn file() -> Object {
        let now = Timestamp::from_secs(10);
        Object::File(FileRecord {
            id: "f".into(),
            name: "a.txt".into(),
            content_type: "text/plain".into(),
            size: 3,
            blob: crate::BlobId("b".into()),
            created_at: now,
            updated_at: now,
            lifetime: Lifetime::fixed(now, 60),
            once: false,
            downloads_left: None,
            tags: vec![],
            text: true,
            link: false,
            thumbs: Default::default(),
            owner: None,
            encrypted: None,
            password: None,
            sha256: None,
        })
    }

    fn upload() -> Object {
        Object::Upload(UploadRecord::new(
            "f".into(),
            3,
            Default::default(),
            crate::Owner::new("t", false),
            crate::resumable::Staging {
                blob: crate::BlobId("s".into()),
                state: String::new(),
            },
            Timestamp::from_secs(1),
        ))
    }

    #[test]
    fn each_change_is_its_event() {
        let (f, u) = (file(), upload());
        use Change::*;
        use EventType::*;
        assert_eq!(change_event(None, Some(&f), Written), Some(Created));
        assert_eq!(change_event(Some(&f), Some(&f), Written), None);
        assert_eq!(change_event(Some(&f), None, Removed), Some(Deleted));
        assert_eq!(change_event(Some(&f), None, Swept), Some(Expired));
        assert_eq!(
            change_event(None, Some(&u), Written),
            None,
            "not an object yet"
        );
        assert_eq!(change_event(Some(&u), Some(&f), Written), Some(Created));
        assert_eq!(change_event(Some(&u), None, Swept), None);
        assert_eq!(change_event(Some(&u), None, Removed), None);
    }

    #[test]
    fn retries_grow_and_stop_after_a_day() {
        let pace = DeliveryPace::default();
        let at = Timestamp::from_secs(1_000);
        assert_eq!(pace.next_try(at, 1, at), Some(at.plus_secs(5)));
        assert_eq!(pace.next_try(at, 2, at), Some(at.plus_secs(30)));
        assert_eq!(pace.next_try(at, 50, at), Some(at.plus_secs(7200)));
        let late = at.plus_secs(RETRY_WINDOW_SECS - 10);
        assert_eq!(pace.next_try(at, 3, late), None);
        assert_eq!(pace.lease_ms(), 60_000);
        // Faster, the same schedule in proportion.
        let fast = DeliveryPace { timeout_ms: 1_500 };
        assert_eq!(
            fast.next_try(at, 1, at),
            Some(Timestamp::from_millis(1_000_500))
        );
        assert_eq!(fast.next_try(at, 2, at), Some(at.plus_secs(3)));
    }

    #[test]
    fn the_wire_names_are_the_contracts() {
        let json = serde_json::to_string(&EventType::Expired).unwrap();
        assert_eq!(json, "\"object.expired\"");
        assert_eq!(EventType::Blocked.as_str(), "object.blocked");
    }
}

/// `STORE_WEBHOOK_SECRET`: the key every delivery is signed with, as the
/// Standard Webhooks specification writes it (`whsec_` and base64; the
/// prefix may be left out). Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret(Vec<u8>);

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret(<redacted>)")
    }
}

/// The shortest key a webhook secret gives, in bytes.
pub const WEBHOOK_SECRET_BYTES_MIN: usize = 16;

impl WebhookSecret {
    /// Reads a secret: `whsec_` and the key in base64, as the
    /// specification's libraries read it (they decode the same way, so a
    /// receiver using one verifies what this signs).
    pub fn parse(text: &str) -> Result<Self, String> {
        use base64::Engine as _;
        let encoded = text.trim();
        let encoded = encoded.strip_prefix("whsec_").unwrap_or(encoded);
        let key = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|_| {
                "STORE_WEBHOOK_SECRET is whsec_ and a key in base64, e.g. whsec_$(openssl rand -base64 32)"
                    .to_string()
            })?;
        if key.len() < WEBHOOK_SECRET_BYTES_MIN {
            return Err(format!(
                "STORE_WEBHOOK_SECRET's key is at least {WEBHOOK_SECRET_BYTES_MIN} bytes (openssl rand -base64 32)"
            ));
        }
        Ok(Self(key))
    }

    /// The `webhook-signature` of the delivery `id` sent at `timestamp`
    /// (Unix seconds) with `body`: `v1,` and the base64 of the
    /// HMAC-SHA256 of `{id}.{timestamp}.{body}`.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        use base64::Engine as _;
        use hmac::Mac as _;
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.0)
            .expect("HMAC takes a key of any length");
        mac.update(format!("{id}.{timestamp}.").as_bytes());
        mac.update(body);
        let tag = mac.finalize().into_bytes();
        format!(
            "v1,{}",
            base64::engine::general_purpose::STANDARD.encode(tag)
        )
    }
}

/// The body of a delivery of `event`, as the specification lays it out:
/// `type`, `timestamp` (when it happened) and `data`.
pub fn payload(event: &Event) -> Vec<u8> {
    #[derive(Serialize)]
    struct Payload<'a> {
        #[serde(rename = "type")]
        kind: EventType,
        timestamp: String,
        data: &'a EventData,
    }
    serde_json::to_vec(&Payload {
        kind: event.kind,
        timestamp: event.at.to_string(),
        data: &event.data,
    })
    .expect("an event serialises")
}

#[cfg(test)]
mod signing_tests {
    use super::*;

    /// The example of the Standard Webhooks specification's test vectors:
    /// its secret, id, timestamp and body give its signature.
    #[test]
    fn signs_as_the_specification_does() {
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        assert_eq!(format!("{secret:?}"), "WebhookSecret(<redacted>)");
        assert!(WebhookSecret::parse("whsec_not base64!").is_err());
        assert!(WebhookSecret::parse("whsec_c2hvcnQ=").is_err(), "too short");
    }
}
