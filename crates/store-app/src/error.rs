use store_core::{StorageError, StoreError};

/// What a use case can fail with: the client's fault (a [`StoreError`]
/// with its SPEC.md code) or the storage's (answered as 500 and logged).
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The client's fault: a [`StoreError`] with its SPEC.md code.
    #[error(transparent)]
    Domain(#[from] StoreError),
    /// A storage fault (the disk, the database, the bucket): never the
    /// client's fault.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl AppError {
    /// Whether it is a 404: the object is not there.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Domain(StoreError::NotFound(_)))
    }
}

/// What a use case returns.
pub type AppResult<T> = Result<T, AppError>;
