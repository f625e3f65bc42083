//! What a request presented to the gates of the object it writes: the
//! retain token's verdict, a dir's write token, and an owner token. The
//! rules that judge them are store-core's (`auth`, `DirRecord::authorize`).

use store_core::auth::{authorize_owned_write, authorize_owner};
use store_core::{DirRecord, DirWrite, Lifetime, Owner, OwnerProof, RetainAuth, StoreError};

/// The credentials of one write request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// What the request proved with the retain token: absent, valid or invalid.
    pub retain: RetainAuth,
    /// A dir's write token, from X-Store-Write or `write=<token>`.
    pub write_token: Option<String>,
    /// The owner token, from X-Store-Owner or `owner=<token>`.
    pub owner: Option<String>,
}

impl Access {
    /// Only what the retain token proved: no write or owner token.
    pub fn retain_only(retain: RetainAuth) -> Self {
        Self {
            retain,
            write_token: None,
            owner: None,
        }
    }

    fn proof(&self, owner: Option<&Owner>) -> OwnerProof {
        OwnerProof::of(owner, self.owner.as_deref())
    }

    /// A write to a dir: its gate, with the owner passing it.
    pub(crate) fn check(&self, dir: &DirRecord, op: DirWrite) -> Result<(), StoreError> {
        let proof = self.proof(dir.owner.as_ref());
        dir.authorize(op, self.retain, self.write_token.as_deref(), proof)
    }

    /// A write or delete of a single file or bundle.
    pub(crate) fn check_owned(
        &self,
        lifetime: &Lifetime,
        owner: Option<&Owner>,
    ) -> Result<(), StoreError> {
        authorize_owned_write(lifetime, owner, self.retain, self.proof(owner))
    }

    /// What only the owner may do (changing the expiry). A wrong retain
    /// token is refused here too, as on every write.
    pub(crate) fn check_owner(&self, owner: Option<&Owner>) -> Result<(), StoreError> {
        if self.retain == RetainAuth::Invalid {
            return Err(StoreError::write_denied());
        }
        authorize_owner(self.proof(owner))
    }
}

impl From<RetainAuth> for Access {
    fn from(retain: RetainAuth) -> Self {
        Self::retain_only(retain)
    }
}
