//! A resumable upload (CONTRACT.md, "Resumable uploads: tus 1.0.0"): the
//! record that carries an upload's offset, options and staged bytes from
//! one request to the next, on whichever process each reaches, and the
//! rules each request is checked by. The wire (headers, metadata
//! encoding) is store-wire's; the bytes are the blob store's.
//!
//! The record is stored under the id of the file it becomes, so that the
//! last PATCH turns it into that file in one write of one key: an upload
//! is never half a file, and no crash leaves both (or neither).

use serde::{Deserialize, Serialize};

use crate::auth::Owner;
use crate::blob::BlobId;
use crate::content::{Utf8Check, SNIFF_BYTES};
use crate::error::StoreError;
use crate::lifetime::Lifetime;
use crate::requests::NewFile;
use crate::time::Timestamp;

/// How long an upload may take, from its creation to its last byte
/// (CONTRACT.md: 24 h); then it expires and its bytes are freed.
pub const UPLOAD_TTL_SECS: u64 = 24 * 3600;

/// How often a PATCH in progress renews a lease of `lease_secs`
/// (`Limits::upload_lease_secs`: how long its hold on an upload lasts
/// unless renewed; past it the PATCH is taken to have died with its
/// process, and another may resume from the last offset recorded), in
/// milliseconds: a quarter of it, so that three renewals in a row may be
/// late (a busy disk, a slow database) before another process takes the
/// upload.
pub const fn renew_every_ms(lease_secs: u64) -> u64 {
    lease_secs * 1000 / 4
}

/// A PATCH's hold on an upload: which PATCH (a random number it drew),
/// and until when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The PATCH holding it.
    pub holder: u64,
    /// When it runs out unless renewed.
    pub until: Timestamp,
}

/// Where a blob being written across requests stands, as the blob store
/// needs it to go on: the blob it becomes, and the adapter's own state
/// (for S3, the multipart upload and its parts), opaque here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Staging {
    /// The blob the bytes become once complete.
    pub blob: BlobId,
    /// The blob store's own state, empty for a local file.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub state: String,
}

/// A resumable upload in progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadRecord {
    /// The id of the single file it becomes, and its repository key.
    pub id: String,
    /// `Upload-Length`: the whole size, reserved in the pool at creation.
    pub length: u64,
    /// The bytes received and kept so far.
    pub offset: u64,
    /// The options of the file it becomes, as a plain upload takes them.
    pub request: NewFile,
    /// The metadata as the client sent it (tus's `Upload-Metadata`),
    /// which a client asking where the upload stands is answered with.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub metadata: String,
    /// The owner of the file it becomes (the token is handed out at
    /// creation).
    pub owner: Owner,
    /// When it was created.
    pub created_at: Timestamp,
    /// Fixed: [`UPLOAD_TTL_SECS`] from its creation.
    pub lifetime: Lifetime,
    /// The bytes so far, in the blob store.
    pub staging: Staging,
    /// The first bytes, for the type the file gets.
    #[serde(default)]
    pub head: Vec<u8>,
    /// Whether the bytes so far are UTF-8 text.
    #[serde(default)]
    pub utf8: Utf8Check,
    /// The SHA-256 of the bytes so far, going on with each PATCH; none
    /// for an upload begun before digests were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<crate::digest::RunningSha256>,
    /// The PATCH in progress, if one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
}

impl UploadRecord {
    /// A new upload of `length` bytes, created at `now`.
    pub fn new(
        id: String,
        length: u64,
        request: NewFile,
        owner: Owner,
        staging: Staging,
        now: Timestamp,
    ) -> Self {
        Self {
            id,
            length,
            offset: 0,
            request,
            metadata: String::new(),
            owner,
            created_at: now,
            lifetime: Lifetime::fixed(now, UPLOAD_TTL_SECS),
            staging,
            head: Vec::new(),
            utf8: Utf8Check::new(),
            digest: Some(crate::digest::RunningSha256::default()),
            lease: None,
        }
    }

    /// When it expires unless completed.
    pub fn expires_at(&self) -> Timestamp {
        self.lifetime
            .expires_at()
            .expect("an upload's lifetime is fixed")
    }

    /// Whether every byte has arrived.
    pub fn is_complete(&self) -> bool {
        self.offset == self.length
    }

    /// Checks a PATCH that starts at `offset` and carries `body_len`
    /// bytes, at `now`, and takes the upload for it as `lease.holder`
    /// until `lease.until`: an expired upload is not found, a
    /// complete one or another offset is a conflict, as is a PATCH still
    /// in progress (two are never interleaved), and bytes past the length
    /// are too many.
    pub fn begin_patch(
        &mut self,
        offset: u64,
        body_len: u64,
        lease: Lease,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        if !self.lifetime.is_live(now) {
            return Err(StoreError::not_found());
        }
        if self.lease.is_some_and(|l| l.until > now) {
            return Err(StoreError::Conflict(
                "another PATCH of this upload is in progress; ask for its offset with HEAD, then go on".into(),
            ));
        }
        if offset != self.offset {
            return Err(StoreError::Conflict(format!(
                "the upload is at offset {}, not {offset}; send from there",
                self.offset
            )));
        }
        if body_len > self.length - self.offset {
            return Err(StoreError::TooLarge(format!(
                "{body_len} bytes from offset {offset} go past the upload's length of {} bytes",
                self.length
            )));
        }
        self.lease = Some(lease);
        Ok(())
    }

    /// Checks that `holder` still holds the upload at `now`: a PATCH that
    /// another took the upload from (its process was frozen past its
    /// lease, and another PATCH began) keeps nothing, since that one may
    /// have gone on from the offset this one started at. A lease merely
    /// past its time, with no one else holding it since, is still its
    /// holder's: a late renewal (a slow disk or database) loses nothing.
    pub fn check_holder(&self, holder: u64, now: Timestamp) -> Result<(), StoreError> {
        if !self.lifetime.is_live(now) {
            return Err(StoreError::not_found());
        }
        match self.lease {
            Some(l) if l.holder == holder => Ok(()),
            _ => Err(StoreError::Conflict(
                "this PATCH lost its hold on the upload to another one; ask for its offset with HEAD, then go on".into(),
            )),
        }
    }

    /// Extends a lease to `lease.until`, if its holder still holds the
    /// upload at `now`.
    pub fn renew(&mut self, lease: Lease, now: Timestamp) -> Result<(), StoreError> {
        self.check_holder(lease.holder, now)?;
        self.lease = Some(lease);
        Ok(())
    }

    /// Notes `chunk`, the next bytes kept, for the file's type.
    pub fn take(&mut self, chunk: &[u8]) {
        if self.head.len() < SNIFF_BYTES {
            let n = (SNIFF_BYTES - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..n]);
        }
        self.utf8.push(chunk);
        if let Some(digest) = &mut self.digest {
            digest.update(chunk);
        }
        self.offset += chunk.len() as u64;
    }

    /// Refuses bytes that cannot make the file the upload asked for: an
    /// encrypted upload's start must be in its format, checked as soon as
    /// enough of it has come.
    pub fn check_start(&self) -> Result<(), StoreError> {
        match self.request.encrypted {
            Some(format) => format.check_start(&self.head, self.is_complete()),
            None => Ok(()),
        }
    }

    /// The PATCH is over: the upload is free for the next one.
    pub fn end_patch(&mut self) {
        self.lease = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH_LEASE_SECS: u64 = crate::Limits::DEFAULT.upload_lease_secs;

    fn upload(now: Timestamp) -> UploadRecord {
        UploadRecord::new(
            "abc".into(),
            10,
            NewFile::default(),
            Owner::new("token", true),
            Staging {
                blob: BlobId("b".into()),
                state: String::new(),
            },
            now,
        )
    }

    /// `holder`'s lease from `now`, of the default length.
    fn lease(holder: u64, now: Timestamp) -> Lease {
        Lease {
            holder,
            until: now.plus_secs(PATCH_LEASE_SECS),
        }
    }

    #[test]
    fn patches_go_on_from_the_offset_one_at_a_time() {
        let now = Timestamp::from_secs(1_000);
        let mut u = upload(now);
        u.begin_patch(0, 4, lease(1, now), now).unwrap();
        let busy = u
            .begin_patch(0, 4, lease(2, now.plus_secs(1)), now.plus_secs(1))
            .unwrap_err();
        assert!(matches!(busy, StoreError::Conflict(_)), "{busy:?}");
        u.take(b"abcd");
        u.end_patch();
        let wrong = u.begin_patch(0, 4, lease(3, now), now).unwrap_err();
        assert!(matches!(wrong, StoreError::Conflict(m) if m.contains("offset 4")));
        let past = u.begin_patch(4, 7, lease(3, now), now).unwrap_err();
        assert!(matches!(past, StoreError::TooLarge(_)), "{past:?}");
        u.begin_patch(4, 6, lease(3, now), now).unwrap();
        u.take(b"efghij");
        u.end_patch();
        assert!(u.is_complete());
        assert_eq!(u.head, b"abcdefghij");
        assert!(u.utf8.is_text());
    }

    #[test]
    fn a_dead_patch_lets_go_after_its_lease_and_an_old_upload_expires() {
        let now = Timestamp::from_secs(1_000);
        let mut u = upload(now);
        u.begin_patch(0, 1, lease(1, now), now).unwrap();
        // Its process died: no end_patch. Another takes over once the
        // lease has run out.
        let later = now.plus_secs(PATCH_LEASE_SECS);
        u.begin_patch(0, 1, lease(2, later), later).unwrap();
        u.end_patch();
        assert_eq!(u.expires_at(), now.plus_secs(UPLOAD_TTL_SECS));
        let gone = u
            .begin_patch(0, 1, lease(3, u.expires_at()), u.expires_at())
            .unwrap_err();
        assert!(matches!(gone, StoreError::NotFound(_)));
    }

    #[test]
    fn a_renewed_lease_holds_and_a_lost_one_keeps_nothing() {
        let now = Timestamp::from_secs(1_000);
        let mut u = upload(now);
        u.begin_patch(0, 4, lease(1, now), now).unwrap();
        // Renewed in time, again and again, it outlives many leases.
        let mut t = now;
        for _ in 0..10 {
            t = t.plus_secs(renew_every_ms(PATCH_LEASE_SECS) / 1000);
            u.renew(lease(1, t), t).unwrap();
            let busy = u.begin_patch(0, 4, lease(2, t), t).unwrap_err();
            assert!(matches!(busy, StoreError::Conflict(_)), "{busy:?}");
        }
        u.check_holder(1, t).unwrap();
        assert!(u.check_holder(2, t).is_err(), "another PATCH holds nothing");
        // Late past its lease, with no one else since: still its own.
        let thawed = t.plus_secs(PATCH_LEASE_SECS);
        u.check_holder(1, thawed).unwrap();
        // Once another PATCH takes the upload, the first can neither
        // renew nor keep its bytes.
        u.begin_patch(0, 4, lease(2, thawed), thawed).unwrap();
        let lost = u.renew(lease(1, thawed), thawed).unwrap_err();
        assert!(matches!(lost, StoreError::Conflict(m) if m.contains("lost its hold")));
        u.check_holder(2, thawed).unwrap();
    }

    #[test]
    fn the_record_round_trips_through_its_stored_form() {
        let mut u = upload(Timestamp::from_secs(5));
        u.take(&[0xe2, 0x82]); // half of a euro sign: pending in the check
        let json = serde_json::to_string(&u).unwrap();
        let mut back: UploadRecord = serde_json::from_str(&json).unwrap();
        assert_eq!(back, u);
        back.take(&[0xac]);
        assert!(back.utf8.is_text(), "the split character completes");
    }
}
