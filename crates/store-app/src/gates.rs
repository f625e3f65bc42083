//! The password gate of reading (CONTRACT.md, "Private sharing"): who may
//! read a protected single file, bundle or dir, how a password becomes a
//! pass, and how the owner changes it. The rules are store-core's
//! (`password.rs`); the hash is `passwords.rs`'s.
//!
//! A read is checked in two steps, so that the slow hash never runs where
//! reads run. [`App::unlock`] checks a password (about 50 ms of argon2id:
//! the HTTP layer runs it on a lane of its own) and answers a pass. The
//! read itself then takes the request's owner token and passes
//! ([`ReadKey`]), which cost a MAC at most to check.

use store_core::auth::OwnerProof;
use store_core::password::{authorize_read, Password, Protection, ReadProof, PASS_LIFETIME_SECS};
use store_core::{dir_storage_key, Object, Owner, StoreError, Timestamp};

use crate::passwords::{hash_password, password_matches};
use crate::{Access, App, AppResult};

/// What a read presents to a password gate: the owner token, and the
/// passes it carries (from [`App::unlock`], or a browser's cookies).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadKey {
    /// The owner token (X-Store-Owner or `owner=`), the master key.
    pub owner: Option<String>,
    /// Passes: each opens the one object it was made for, for an hour.
    pub passes: Vec<String>,
}

impl ReadKey {
    /// No key at all: what a read that shows nothing presents.
    pub const NONE: ReadKey = ReadKey {
        owner: None,
        passes: Vec::new(),
    };

    fn proof(
        &self,
        storage_key: &str,
        protection: &Protection,
        owner: Option<&Owner>,
        now: Timestamp,
    ) -> ReadProof {
        ReadProof {
            owner: OwnerProof::of(owner, self.owner.as_deref()),
            pass: self
                .passes
                .iter()
                .any(|pass| protection.admits_pass(storage_key, pass, now)),
        }
    }
}

/// Which object a password is for: a single file or bundle by its id, or
/// a dir by its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gated<'a> {
    /// `/<id>`: a single file or a bundle.
    Id(&'a str),
    /// `/d/<key>`: a dir.
    Dir(&'a str),
}

impl Gated<'_> {
    fn storage_key(self) -> String {
        match self {
            Self::Id(id) => id.to_string(),
            Self::Dir(key) => dir_storage_key(key),
        }
    }
}

impl App {
    /// Whether `key` may read the object stored under `storage_key`, with
    /// `protection` and `owner`, at `now`: 401 asking for the password
    /// when it is protected and `key` shows neither its owner token nor a
    /// pass for it.
    pub(crate) fn check_read(
        &self,
        storage_key: &str,
        (protection, owner): (Option<&Protection>, Option<&Owner>),
        key: &ReadKey,
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let Some(protection) = protection else {
            return Ok(());
        };
        let proof = key.proof(storage_key, protection, owner, now);
        authorize_read(Some(protection), proof)
    }

    /// Checks `password` against the object's, and answers a pass for it
    /// (valid for an hour), or `None` when none is needed (the object has
    /// no password, or `key` carries its owner token). A wrong password is
    /// counted in the record, under the key's lock, so every process sees
    /// the count; the eleventh within ten minutes, and every try after it
    /// in that window, is 429 `rate_limited` without being checked.
    ///
    /// Slow on purpose (argon2id, about 50 ms): never call it on an async
    /// executor.
    pub fn unlock(
        &self,
        gated: Gated<'_>,
        password: &Password,
        key: &ReadKey,
    ) -> AppResult<Option<String>> {
        let storage_key = gated.storage_key();
        let now = self.now();
        let obj = self.live_gated(&storage_key, now)?;
        let Some(protection) = obj.protection() else {
            return Ok(None);
        };
        if OwnerProof::of(obj.owner(), key.owner.as_deref()) == OwnerProof::Owner {
            return Ok(None);
        }
        protection.wrong.admit(now)?;
        if password_matches(password.expose(), &protection.hash) {
            return Ok(Some(
                protection.pass(&storage_key, now.plus_secs(PASS_LIFETIME_SECS)),
            ));
        }
        self.note_wrong_password(&storage_key)?;
        Err(StoreError::password_needed().into())
    }

    /// Counts one wrong password in the object's record.
    fn note_wrong_password(&self, storage_key: &str) -> AppResult<()> {
        let _guard = self.lock(&[storage_key])?;
        let now = self.now();
        let Some((mut obj, rev)) = self.ports.repo.load(storage_key)? else {
            return Ok(());
        };
        let Some(Some(protection)) = obj.protection_mut() else {
            return Ok(());
        };
        protection.wrong.note_wrong(now);
        self.ports.repo.replace(storage_key, rev, &obj, &[])?;
        Ok(())
    }

    /// `POST /<id>?password=1` and `POST /d/<key>?password=1`: the owner
    /// sets a new password, or removes it with `None`. Passes made for the
    /// old one stop opening the object; the count of wrong tries starts
    /// over.
    pub fn set_password(
        &self,
        gated: Gated<'_>,
        password: Option<&Password>,
        access: &Access,
    ) -> AppResult<Object> {
        let storage_key = gated.storage_key();
        // Only the owner may: checked before the slow hash, so a stranger
        // cannot make the server hash for them.
        let obj = self.live_gated(&storage_key, self.now())?;
        access.check_owner(obj.owner())?;
        let hash = password
            .map(|p| hash_password(p.expose(), self.ports.random.as_ref()))
            .transpose()?;
        let _guard = self.lock(&[&storage_key])?;
        let (mut obj, rev) = self.loaded_gated(&storage_key, self.now())?;
        access.check_owner(obj.owner())?;
        let Some(slot) = obj.protection_mut() else {
            return Err(StoreError::not_found().into());
        };
        *slot = hash.map(|hash| Protection {
            hash,
            wrong: Default::default(),
        });
        self.ports.repo.replace(&storage_key, rev, &obj, &[])?;
        Ok(obj)
    }

    /// The new object's password, hashed: the one a resumable upload
    /// hashed at its creation, or `password`'s.
    pub(crate) fn protection_for(
        &self,
        password: Option<&Password>,
        hashed: Option<&str>,
    ) -> AppResult<Option<Protection>> {
        let hash = match (hashed, password) {
            (Some(hash), _) => hash.to_string(),
            (None, Some(p)) => hash_password(p.expose(), self.ports.random.as_ref())?,
            (None, None) => return Ok(None),
        };
        Ok(Some(Protection {
            hash,
            wrong: Default::default(),
        }))
    }

    fn live_gated(&self, storage_key: &str, now: Timestamp) -> AppResult<Object> {
        match self.ports.repo.get(storage_key)? {
            Some(obj) if protectable(&obj) && obj.lifetime().is_live(now) => Ok(obj),
            _ => Err(StoreError::not_found().into()),
        }
    }

    fn loaded_gated(
        &self,
        storage_key: &str,
        now: Timestamp,
    ) -> AppResult<(Object, store_core::Rev)> {
        match self.ports.repo.load(storage_key)? {
            Some((obj, rev)) if protectable(&obj) && obj.lifetime().is_live(now) => Ok((obj, rev)),
            _ => Err(StoreError::not_found().into()),
        }
    }
}

/// Whether an object is of a kind a password may protect.
fn protectable(obj: &Object) -> bool {
    matches!(obj, Object::File(_) | Object::Bundle(_) | Object::Dir(_))
}
