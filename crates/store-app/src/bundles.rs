//! Bundles: immutable snapshots of 2 or more files under one id.

use store_core::auth::lifetime_for_new;
use store_core::container::validate_member_names;
use store_core::content::{self, is_text_file};
use store_core::names::default_file_name;
use store_core::{
    ids, ttl, BundleRecord, Lifetime, MemberFile, Object, Owner, RetainAuth, StoreError, Timestamp,
};

use crate::files::Download;
use crate::{App, AppResult, Created, NewFile, Part, ReadKey};

impl App {
    /// Commits parts' bytes and describes them as member files; a part
    /// without a name gets `upload.<ext>`. The names are then checked as a
    /// set (safe, distinct, not too many). On error, every blob committed
    /// here is removed again.
    pub(crate) fn commit_parts(
        &self,
        parts: Vec<Part>,
        now: Timestamp,
    ) -> AppResult<Vec<MemberFile>> {
        let digests: Vec<_> = parts.iter().filter_map(|p| p.body.sha256()).collect();
        // Refused here, the parts' staged blobs go as they are dropped.
        self.refuse_blocked(&digests)?;
        let mut members: Vec<MemberFile> = Vec::with_capacity(parts.len());
        for part in parts {
            let utf8 = part.body.is_utf8_text();
            let content_type = content::decide(
                part.body.head(),
                part.name.as_deref().unwrap_or(""),
                part.declared_type.as_deref(),
                utf8,
            );
            let name = part
                .name
                .unwrap_or_else(|| default_file_name(&content_type));
            let size = part.body.size();
            let sha256 = part.body.sha256();
            members.push(MemberFile {
                name,
                text: is_text_file(utf8, &content_type),
                content_type,
                size,
                blob: part.body.into_blob(),
                created_at: now,
                updated_at: now,
                sha256,
            });
        }
        if let Err(e) =
            validate_member_names(&self.config.limits, members.iter().map(|m| m.name.as_str()))
        {
            self.discard_members(&members);
            return Err(e.into());
        }
        Ok(members)
    }

    /// Removes the blobs of members that never made it into a record.
    pub(crate) fn discard_members(&self, members: &[MemberFile]) {
        for m in members {
            // Best effort: a blob left behind is an orphan, collected after
            // the next start.
            let _ = self.ports.blobs.remove(&m.blob);
        }
    }

    /// POST / with 2 or more file parts.
    pub fn create_bundle(
        &self,
        req: &NewFile,
        parts: Vec<Part>,
        auth: RetainAuth,
    ) -> AppResult<Created<BundleRecord>> {
        let now = self.now();
        req.validate_bundle(&self.config.limits)?;
        if parts.len() < 2 {
            return Err(StoreError::bad_request("a bundle needs 2 or more file parts").into());
        }
        if parts.iter().any(|p| p.name.is_none()) {
            return Err(
                StoreError::bad_request("every file part of a bundle needs a file name").into(),
            );
        }
        validate_member_names(
            &self.config.limits,
            parts.iter().filter_map(|p| p.name.as_deref()),
        )?;
        let lifetime = lifetime_for_new(
            auth,
            Lifetime::fixed(now, ttl::file_ttl(&self.config.limits, req.ttl_secs)),
        )?;
        let total: u64 = parts.iter().map(|p| p.body.size()).sum();
        let reservation = self.reserve(total)?;
        let files = self.commit_parts(parts, now)?;
        let password = self.protection_for(req.password.as_ref(), None)?;
        let owner_token = ids::token(self.ports.random.as_ref());
        let mut record = BundleRecord {
            id: String::new(),
            created_at: now,
            updated_at: now,
            lifetime,
            files,
            owner: Some(Owner::new(&owner_token, req.protect)),
            password,
        };
        // Kept even when the insert failed: see `store_file`.
        self.insert_with_fresh_id(reservation, |id| {
            record.id = id.to_string();
            Object::Bundle(record.clone())
        })?;
        Ok(Created {
            record,
            now,
            owner_token,
        })
    }

    /// GET `/<id>/<filename>`: one file of a bundle.
    pub fn open_member(&self, id: &str, name: &str, read: &ReadKey) -> AppResult<Download> {
        let now = self.now();
        let _guard = self.lock(&[id])?;
        let obj = self.live_object(id, now)?;
        self.check_read(id, (obj.protection(), obj.owner()), read, now)?;
        let Object::Bundle(b) = obj else {
            return Err(StoreError::not_found().into());
        };
        let m = b.member(name).ok_or_else(StoreError::not_found)?;
        Ok(Download {
            name: m.name.clone(),
            content_type: m.content_type.clone(),
            text: m.text,
            once: false,
            link: false,
            encrypted: false,
            blob: m.blob.clone(),
            modified: m.updated_at,
            reader: self.open_record_blob(&m.blob)?,
        })
    }
}
