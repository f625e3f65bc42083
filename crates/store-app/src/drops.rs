//! Drop links (CONTRACT.md "Private sharing"): files added to a dir
//! through its link by people who never see what is in it, and the
//! owner's closing of the link. The rules are store-core's (`drops.rs`);
//! a drop dir is made by `create_dir` with `drop=1`.

use store_core::drops::{split_drop_token, unused_name, DropBox};
use store_core::{dir_storage_key, DirRecord, DirWrite, StoreError};

use crate::{Access, App, AppResult, Part};

/// What a drop link may still take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DropRoom {
    /// Files it takes before it is full.
    pub files_left: u32,
    /// Bytes it takes before it is full.
    pub bytes_left: u64,
}

/// A file a drop took: the name it was stored under (a new one when its
/// own was taken) and its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// The name it has in the dir.
    pub name: String,
    /// Its size, in bytes.
    pub size: u64,
}

impl App {
    /// `GET /drop/<token>`: what the drop still takes; 404 for a token
    /// that opens no drop (wrong, closed, or its dir gone).
    pub fn drop_room(&self, token: &str) -> AppResult<DropRoom> {
        let (dir, drop) = self.open_drop(token)?;
        Ok(room(&dir, &drop))
    }

    /// `POST /drop/<token>`: adds `parts` to the drop's dir, each under
    /// its own name or, when that is taken (in the dir, or by an earlier
    /// part), the first free `name (N).ext`: a drop never replaces a
    /// file. 403 past the drop's files or bytes; nothing is kept then.
    /// Answers what was taken, and the room left after it.
    pub fn drop_into(
        &self,
        token: &str,
        mut parts: Vec<Part>,
    ) -> AppResult<(Vec<Dropped>, DropRoom)> {
        if parts.is_empty() {
            return Err(StoreError::bad_request(
                "no file to drop: send multipart file parts, or a body with name=",
            )
            .into());
        }
        let (_, key) = split_drop_token(token).ok_or_else(StoreError::not_found)?;
        let storage_key = dir_storage_key(key);
        let _guard = self.lock(&[&storage_key])?;
        let now = self.now();
        let (dir, rev) = self.loaded_dir(&storage_key, now)?;
        let drop = admitted(&dir, token)?.clone();
        let incoming: u64 = parts.iter().map(|p| p.body.size()).sum();
        drop.check_room((dir.files.len(), dir.size()), (parts.len(), incoming))?;
        let mut names: Vec<String> = Vec::with_capacity(parts.len());
        for part in &mut parts {
            let asked = part.name.as_deref().ok_or_else(|| {
                StoreError::bad_request(
                    "every dropped file needs a name (a part's filename, or name=)",
                )
            })?;
            let name = unused_name(asked, |n| {
                dir.file(n).is_some() || names.iter().any(|t| t == n)
            });
            part.name = Some(name.clone());
            names.push(name);
        }
        let sizes: Vec<u64> = parts.iter().map(|p| p.body.size()).collect();
        let access = Access::retain_only(store_core::RetainAuth::Absent);
        let dir = self.add_locked((dir, rev), parts, &access, (DirWrite::Drop, now))?;
        let dropped = names
            .into_iter()
            .zip(sizes)
            .map(|(name, size)| Dropped { name, size })
            .collect();
        Ok((dropped, room(&dir, &drop)))
    }

    /// `POST /d/<key>?drop=0`: the owner closes the drop link early; it
    /// answers 404 from then on, and the dir stays its owner's to read.
    pub fn close_drop(&self, key: &str, access: &Access) -> AppResult<DirRecord> {
        let storage_key = dir_storage_key(key);
        let _guard = self.lock(&[&storage_key])?;
        let (mut dir, rev) = self.loaded_dir(&storage_key, self.now())?;
        access.check_owner(dir.owner.as_ref())?;
        let Some(drop) = dir.drop.as_mut() else {
            return Err(StoreError::bad_request("this dir has no drop link").into());
        };
        drop.open = false;
        self.ports.repo.replace(
            &storage_key,
            rev,
            &store_core::Object::Dir(dir.clone()),
            &[],
        )?;
        Ok(dir)
    }

    /// The live dir and drop a token opens, or 404.
    fn open_drop(&self, token: &str) -> AppResult<(DirRecord, DropBox)> {
        let (_, key) = split_drop_token(token).ok_or_else(StoreError::not_found)?;
        let (dir, _) = self.loaded_dir(&dir_storage_key(key), self.now())?;
        let drop = admitted(&dir, token)?.clone();
        Ok((dir, drop))
    }
}

/// What `drop` still takes beside what `dir` holds.
fn room(dir: &DirRecord, drop: &DropBox) -> DropRoom {
    DropRoom {
        files_left: drop.files_max.saturating_sub(dir.files.len() as u32),
        bytes_left: drop.bytes_max.saturating_sub(dir.size()),
    }
}

/// The drop of `dir` if `token`'s secret opens it (and it is open), else
/// 404: a wrong token and a closed drop look alike.
fn admitted<'a>(dir: &'a DirRecord, token: &str) -> Result<&'a DropBox, StoreError> {
    let (secret, _) = split_drop_token(token).ok_or_else(StoreError::not_found)?;
    dir.drop
        .as_ref()
        .filter(|d| d.admits(secret))
        .ok_or_else(StoreError::not_found)
}
