use store_core::{StorageError, StoreError};

/// What a use case can fail with: the client's fault (a [`StoreError`]
/// with its SPEC.md code) or the storage's (answered as 500 and logged).
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error(transparent)]
    Domain(#[from] StoreError),
    #[error(transparent)]
    Storage(#[from] StorageError),
}

pub type AppResult<T> = Result<T, AppError>;
