//! Delivering webhook events (issue 36, CONTRACT.md "Operators:
//! moderation and webhooks"): a thread of the upkeep claims events from
//! the outbox (each object's earliest, so an object's events go in
//! order; by one process at a time), signs each as the Standard Webhooks
//! specification says and posts it; a few deliverers do so at once. A delivery that fails
//! is tried again later (`events::next_try`), for a day; one whose
//! deliverer died comes due again when its claim runs out. No request
//! waits for any of it.

use std::sync::Arc;
use std::time::Duration;

use store_core::events::{payload, Claimed, DeliveryPace, WebhookSecret};
use store_core::ports::WebhookSender;

use crate::{App, AppResult};

/// Events one deliverer claims per round.
pub const CLAIM_BATCH: usize = 4;
/// Deliverers per process, each with its own claims: the deliveries in
/// flight at once, so that one slow receiver's answer holds up no more
/// than its own thread.
pub const DELIVERERS: usize = 4;
/// The pause between rounds that found nothing due: what an event made
/// by another process waits at most, besides its delivery.
pub const DELIVER_IDLE: Duration = Duration::from_millis(500);

/// Where events go, and the key they are signed with.
#[derive(Clone)]
pub struct Webhook {
    /// Posts a delivery.
    pub sender: Arc<dyn WebhookSender>,
    /// Signs it.
    pub secret: WebhookSecret,
    /// How long a delivery may take, and so the claims and the pauses
    /// between tries (the sender is built with the same time-out).
    pub pace: DeliveryPace,
    /// Runs once on each deliverer's thread, before its first round. The
    /// wiring lowers the thread's scheduling priority there, so that a
    /// server at full load serves requests first and delivers with what
    /// is left (events wait in the outbox meanwhile); threads are the
    /// operating system's business, not the use cases'.
    pub deliverer_setup: fn(),
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook")
            .field("secret", &self.secret)
            .finish()
    }
}

impl App {
    /// Turns webhooks on: from now on changes put their events in the
    /// outbox, and [`App::start_upkeep`] starts their deliverers. Call it
    /// once, before the upkeep starts; a second call changes nothing.
    pub fn deliver_webhooks(&self, webhook: Webhook) {
        if self.webhook.set(webhook).is_ok() {
            self.ports.repo.keep_events(true);
        }
    }

    /// Turns the outbox off: no webhook is configured (a PostgreSQL
    /// store's switch is shared by its servers, which set it alike).
    pub fn keep_no_webhook_events(&self) {
        if self.webhook.get().is_none() {
            self.ports.repo.keep_events(false);
        }
    }

    /// Whether webhooks are on.
    pub fn delivers_webhooks(&self) -> bool {
        self.webhook.get().is_some()
    }

    /// One round of one deliverer: claims what is due and sends it, one
    /// after the other. Answers how many it claimed (none: sleep before
    /// the next).
    pub fn deliver_round(&self) -> AppResult<usize> {
        let Some(webhook) = self.webhook.get() else {
            return Ok(0);
        };
        let claimed =
            self.ports
                .repo
                .claim_events(self.now(), webhook.pace.lease_ms(), CLAIM_BATCH)?;
        for c in &claimed {
            self.deliver_one(webhook, c);
        }
        Ok(claimed.len())
    }

    /// Sends one claimed event and records how it went.
    fn deliver_one(&self, webhook: &Webhook, c: &Claimed) {
        let body = payload(&c.event);
        let timestamp = self.now().as_secs();
        let headers = [
            ("webhook-id", c.event.id.clone()),
            ("webhook-timestamp", timestamp.to_string()),
            (
                "webhook-signature",
                webhook.secret.sign(&c.event.id, timestamp, &body),
            ),
        ];
        let kind = c.event.kind.as_str();
        let recorded = match webhook.sender.post(&headers, &body) {
            Ok(()) => {
                // At debug: a line per delivery would double a busy
                // instance's log (the request that made the event has its
                // line) and cost each event a write; failures are warned.
                tracing::debug!(event = %c.event.id, kind, "webhook delivered");
                self.ports.repo.event_delivered(c.seq)
            }
            Err(why) => {
                let attempts = c.attempts + 1;
                let next = webhook.pace.next_try(c.event.at, attempts, self.now());
                match next {
                    Some(at) => {
                        tracing::warn!(event = %c.event.id, kind, attempts, %why, retry_at = %at, "webhook delivery failed")
                    }
                    None => {
                        tracing::error!(event = %c.event.id, kind, attempts, %why, "webhook delivery failed for a day: given up")
                    }
                }
                self.ports.repo.event_failed(c.seq, next)
            }
        };
        if let Err(e) = recorded {
            // The claim runs out and the event is tried again: at least once.
            tracing::error!(event = %c.event.id, error = %e, "could not record a delivery");
        }
    }
}
