//! Moderation (issue 36, CONTRACT.md "Operators: moderation and
//! webhooks"): the admin's pages of every live object, deleting any of
//! them, and the blocklist. All of it exists only when the operator set
//! `STORE_ADMIN_TOKEN`; without it no upload pays for a blocklist read.

use std::ops::ControlFlow;

use store_core::digest::Sha256;
use store_core::events::{Event, EventData, EventType};
use store_core::moderation::{validate_reason, AdminCursor, AdminSearch, Block, Report};
use store_core::record::{dir_storage_key, gallery_storage_key, image_storage_key};
use store_core::{ids, Object, StoreError};

use crate::{App, AppResult};

/// Blocks younger than this are swept again by the sweeper's rounds: an
/// upload that read the blocklist just before a block was written, and
/// committed just after the block's own sweep, is removed by the next
/// round. A commit never takes this long after its check.
pub const BLOCK_RESWEEP_SECS: u64 = 600;

/// One page of the admin's listing.
#[derive(Debug, Clone)]
pub struct AdminPage {
    /// The live objects, newest first, with their repository keys.
    pub objects: Vec<(String, Object)>,
    /// Where the next page starts, if there may be one.
    pub next: Option<AdminCursor>,
}

/// What a block did.
#[derive(Debug, Clone)]
pub struct Blocked {
    /// The blocklist's entry.
    pub block: Block,
    /// The keys of the objects removed (or, for dirs, emptied of the
    /// blocked files) because they held the bytes.
    pub removed: Vec<String>,
}

impl App {
    /// Whether moderation is on (`STORE_ADMIN_TOKEN` is set).
    pub fn moderates(&self) -> bool {
        self.config.admin_token.is_set()
    }

    /// Whether `presented` is the admin token.
    pub fn is_store_admin(&self, presented: Option<&str>) -> bool {
        self.config.admin_token.matches(presented)
    }

    /// Refuses bytes the admin blocked (451 `blocked`) before anything is
    /// committed. Without moderation there is no blocklist to read.
    pub(crate) fn refuse_blocked(&self, digests: &[Sha256]) -> AppResult<()> {
        if !self.moderates() || digests.is_empty() {
            return Ok(());
        }
        match self.ports.repo.blocked(digests)? {
            Some(block) => {
                tracing::info!(sha256 = %block.sha256, "refused blocked bytes");
                Err(StoreError::Blocked(
                    "these bytes are blocked on this server; nothing was stored".into(),
                )
                .into())
            }
            None => Ok(()),
        }
    }

    /// `GET /admin`: up to `limit` live objects matching `search`, newest
    /// first, after `after`. On the first page, an object whose id is the
    /// search text comes first.
    pub fn admin_page(
        &self,
        search: &AdminSearch,
        after: Option<&AdminCursor>,
        limit: usize,
    ) -> AppResult<AdminPage> {
        let now = self.now();
        let mut objects: Vec<(String, Object)> = match after {
            None => self.by_id(&search.text)?,
            Some(_) => vec![],
        };
        let by_id: Vec<String> = objects.iter().map(|(k, _)| k.clone()).collect();
        let mut last = None;
        let mut full = false;
        self.ports
            .repo
            .searched(search.index_term(), after, &mut |key, object| {
                last = Some(AdminCursor::after(key, object));
                if object.lifetime().is_live(now)
                    && search.matches(object)
                    && !by_id.iter().any(|k| k == key)
                {
                    objects.push((key.to_string(), object.clone()));
                }
                full = objects.len() >= limit;
                if full {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            })?;
        Ok(AdminPage {
            objects,
            next: last.filter(|_| full),
        })
    }

    /// The live object whose id is `text`, whatever its kind.
    fn by_id(&self, text: &str) -> AppResult<Vec<(String, Object)>> {
        if text.is_empty() || text.contains(char::is_whitespace) {
            return Ok(vec![]);
        }
        let now = self.now();
        for key in [
            text.to_string(),
            dir_storage_key(text),
            gallery_storage_key(text),
            image_storage_key(text),
        ] {
            if let Some(object) = self.ports.repo.get(&key)? {
                if object.lifetime().is_live(now) {
                    return Ok(vec![(key, object)]);
                }
            }
        }
        Ok(vec![])
    }

    /// Removes the object under `key`, whatever its kind and whoever made
    /// it: the admin's delete. A gallery goes with its images.
    pub fn admin_delete(&self, key: &str) -> AppResult<()> {
        let images = {
            let _guard = self.lock(&[key])?;
            let Some((object, rev)) = self.ports.repo.load(key)? else {
                return Err(StoreError::not_found().into());
            };
            self.remove_object(key, rev, &object)?;
            match object {
                Object::Gallery(g) => g.images,
                _ => vec![],
            }
        };
        for id in images {
            match self.admin_delete(&image_storage_key(&id)) {
                Ok(()) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// `POST /admin/block`: blocks `sha256` for `reason`, then removes
    /// every live copy of the bytes.
    pub fn block(&self, sha256: Sha256, reason: &str) -> AppResult<Blocked> {
        validate_reason(reason)?;
        let block = Block {
            sha256,
            reason: reason.to_string(),
            blocked_at: self.now(),
        };
        let event = Event::new(
            EventType::Blocked,
            block.blocked_at,
            EventData {
                key: format!("sha256:{sha256}"),
                kind: "bytes".into(),
                name: None,
                size: 0,
                sha256: vec![sha256.hex()],
                reason: Some(block.reason.clone()),
            },
        );
        self.ports.repo.block(&block, Some(&event))?;
        tracing::info!(%sha256, "blocked");
        let removed = self.sweep_blocked(sha256)?;
        Ok(Blocked { block, removed })
    }

    /// Removes what holds the bytes of `sha256`: a file, bundle or image
    /// whole, a dir's files of those bytes (the dir stays). Answers the
    /// keys it changed.
    fn sweep_blocked(&self, sha256: Sha256) -> AppResult<Vec<String>> {
        let term = format!("sha256:{sha256}");
        let mut keys = vec![];
        self.ports.repo.searched(&term, None, &mut |key, _| {
            keys.push(key.to_string());
            ControlFlow::Continue(())
        })?;
        let mut removed = vec![];
        for key in keys {
            if self.remove_blocked_from(&key, sha256)? {
                removed.push(key);
            }
        }
        Ok(removed)
    }

    /// Takes the bytes of `sha256` out of the object under `key`, under
    /// its lock; `false` when it no longer holds them.
    fn remove_blocked_from(&self, key: &str, sha256: Sha256) -> AppResult<bool> {
        let _guard = self.lock(&[key])?;
        let Some((object, rev)) = self.ports.repo.load(key)? else {
            return Ok(false);
        };
        if !object.digests().contains(&sha256) {
            return Ok(false);
        }
        let Object::Dir(mut dir) = object else {
            self.remove_object(key, rev, &object)?;
            return Ok(true);
        };
        let (gone, kept) = dir
            .files
            .into_iter()
            .partition(|f| f.sha256 == Some(sha256));
        dir.files = kept;
        let gone: Vec<store_core::MemberFile> = gone;
        let doomed: Vec<store_core::BlobId> = gone.iter().map(|f| f.blob.clone()).collect();
        self.ports
            .repo
            .replace(key, rev, &Object::Dir(dir), &doomed)?;
        let freed: u64 = gone.iter().map(|f| f.size).sum();
        self.ledgers.freed(store_core::ports::Pool::Store, freed);
        self.release_blobs(&doomed);
        Ok(true)
    }

    /// Sweeps again the blocks younger than [`BLOCK_RESWEEP_SECS`] (see
    /// there): the sweeper's rounds call it. Answers the keys it changed.
    pub fn resweep_recent_blocks(&self) -> AppResult<Vec<String>> {
        if !self.moderates() {
            return Ok(vec![]);
        }
        let now = self.now();
        let mut removed = vec![];
        for block in self.ports.repo.blocks()? {
            if block.blocked_at.secs_until(now) > BLOCK_RESWEEP_SECS {
                // Latest first: every later one is older still.
                break;
            }
            removed.extend(self.sweep_blocked(block.sha256)?);
        }
        Ok(removed)
    }

    /// The blocklist, latest first.
    pub fn blocks(&self) -> AppResult<Vec<Block>> {
        Ok(self.ports.repo.blocks()?)
    }

    /// `POST …?report=1`: a visitor reports the live object under `key`
    /// to the admin. Without moderation there is no one to read it (404),
    /// and a drop dir, which exists for its owner alone, is not found
    /// either.
    pub fn report(&self, key: &str, reason: &str) -> AppResult<Report> {
        if !self.moderates() {
            return Err(StoreError::not_found().into());
        }
        validate_reason(reason)?;
        let now = self.now();
        let found = self.ports.repo.get(key)?.filter(|o| {
            o.lifetime().is_live(now) && !matches!(o, Object::Dir(d) if d.drop.is_some())
        });
        let Some(object) = found else {
            return Err(StoreError::not_found().into());
        };
        let report = Report {
            id: ids::object_id(self.ports.random.as_ref()),
            key: key.to_string(),
            reason: reason.to_string(),
            reported_at: now,
        };
        let event = Event::new(
            EventType::Reported,
            now,
            EventData {
                reason: Some(report.reason.clone()),
                ..EventData::of(key, &object)
            },
        );
        self.ports.repo.report(&report, Some(&event))?;
        tracing::info!(key, report = %report.id, "object reported");
        Ok(report)
    }

    /// `GET /admin?reports=1`: up to `limit` reports, the oldest first,
    /// each with its object if it is still live.
    pub fn reports(&self, limit: usize) -> AppResult<Vec<(Report, Option<Object>)>> {
        let now = self.now();
        let mut out = vec![];
        for report in self.ports.repo.reports(limit)? {
            let object = self
                .ports
                .repo
                .get(&report.key)?
                .filter(|o| o.lifetime().is_live(now));
            out.push((report, object));
        }
        Ok(out)
    }

    /// `POST /admin/clear`: the admin takes a report out of the queue.
    pub fn clear_report(&self, id: &str) -> AppResult<()> {
        if self.ports.repo.clear_report(id)? {
            Ok(())
        } else {
            Err(StoreError::not_found().into())
        }
    }
}
