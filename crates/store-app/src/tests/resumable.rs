//! Resumable uploads: PATCH by PATCH to a file indistinguishable from a
//! plain upload, one PATCH at a time, checksums, and what an ended or
//! abandoned upload leaves (nothing).

use super::*;
use crate::{Checksum, Patched, UploadState};
use sha2::Digest as _;
use store_core::resumable::{renew_every_ms, UPLOAD_TTL_SECS};

const PATCH_LEASE_SECS: u64 = store_core::Limits::DEFAULT.upload_lease_secs;

fn patch(app: &App, id: &str, offset: u64, bytes: &[u8]) -> AppResult<Patched> {
    let mut p = app.begin_patch(id, offset, bytes.len() as u64, None)?;
    p.push(bytes)?;
    app.finish_patch(p)
}

/// The upload in progress, as HEAD sees it: 404 once it is a file, or
/// gone.
fn in_progress(app: &App, id: &str) -> AppResult<store_core::resumable::UploadRecord> {
    match app.upload_state(id)? {
        UploadState::InProgress(u) => Ok(u),
        UploadState::Complete(_) => Err(StoreError::not_found().into()),
    }
}

/// A new upload of `length` bytes named `name`: its id.
fn started(app: &App, name: &str, length: u64) -> String {
    app.create_upload(&named(name), length, String::new())
        .unwrap()
        .record
        .id
}

fn named(name: &str) -> NewFile {
    NewFile {
        name: Some(name.into()),
        ..NewFile::default()
    }
}

#[test]
fn patches_make_the_file_a_plain_upload_makes() {
    let w = world();
    let made = w
        .app
        .create_upload(&named("notes.txt"), 11, String::new())
        .unwrap();
    let id = made.record.id.clone();
    assert_eq!(w.app.pool_used_bytes().unwrap(), 11, "reserved at creation");
    assert_eq!(
        code(w.app.read(&id, ReadIntent::Head, &crate::ReadKey::NONE)),
        ErrorCode::NotFound
    );
    let Patched::Progress(u) = patch(&w.app, &id, 0, b"hello ").unwrap() else {
        panic!("not complete yet");
    };
    assert_eq!(u.offset, 6);
    assert_eq!(in_progress(&w.app, &id).unwrap().offset, 6);
    let Patched::Complete(file) = patch(&w.app, &id, 6, b"world").unwrap() else {
        panic!("the last byte completes it");
    };
    let plain = put_plain(&w.app, "notes.txt", b"hello world");
    assert_eq!(
        (
            &file.content_type,
            file.size,
            file.text,
            file.lifetime.expires_at()
        ),
        (
            &plain.content_type,
            plain.size,
            plain.text,
            plain.lifetime.expires_at()
        )
    );
    assert_eq!(file.id, id, "the upload's id is the file's");
    assert_eq!(read(&w.app, &id).unwrap(), b"hello world");
    assert_eq!(
        code(in_progress(&w.app, &id)),
        ErrorCode::NotFound,
        "no longer an upload"
    );
    assert!(matches!(w.app.upload_state(&id), Ok(UploadState::Complete(f)) if f == file));
    assert_eq!(w.app.pool_used_bytes().unwrap(), 22);
    // The owner token handed out at creation is the file's.
    let access = Access {
        owner: Some(made.owner_token.clone()),
        ..Access::retain_only(RetainAuth::Absent)
    };
    w.app.delete(&id, &access).unwrap();
}

#[test]
fn two_patches_never_interleave_and_a_dead_one_lets_go() {
    let w = world();
    let id = started(&w.app, "a.bin", 4);
    let first = w.app.begin_patch(&id, 0, 2, None).unwrap();
    assert_eq!(
        code(w.app.begin_patch(&id, 0, 2, None)),
        ErrorCode::Conflict
    );
    // The first one's process froze: past its lease, another goes on.
    drop(first);
    w.clock.advance_secs(PATCH_LEASE_SECS);
    let Patched::Progress(u) = patch(&w.app, &id, 0, b"ab").unwrap() else {
        panic!("two of four bytes");
    };
    assert_eq!(u.offset, 2);
    assert_eq!(
        code(patch(&w.app, &id, 0, b"ab")),
        ErrorCode::Conflict,
        "wrong offset"
    );
    assert_eq!(
        code(patch(&w.app, &id, 2, b"cde")),
        ErrorCode::TooLarge,
        "past the length"
    );
}

#[test]
fn a_renewed_patch_outlasts_its_lease_and_a_frozen_one_keeps_nothing() {
    let w = world();
    let id = started(&w.app, "a.bin", 4);
    // A slow body, renewed in time, is held for as long as it takes.
    let mut slow = w.app.begin_patch(&id, 0, 2, None).unwrap();
    for _ in 0..8 {
        w.clock
            .advance_secs(renew_every_ms(PATCH_LEASE_SECS) / 1000);
        w.app.renew_patch(&slow.ticket()).unwrap();
        assert_eq!(
            code(w.app.begin_patch(&id, 0, 2, None)),
            ErrorCode::Conflict
        );
    }
    slow.push(b"ab").unwrap();
    assert!(matches!(w.app.finish_patch(slow), Ok(Patched::Progress(u)) if u.offset == 2));
    // A PATCH whose process froze past its lease: another goes on from
    // where it started, and the thawed one neither renews nor keeps its
    // bytes.
    let mut frozen = w.app.begin_patch(&id, 2, 2, None).unwrap();
    frozen.push(b"xy").unwrap();
    w.clock.advance_secs(PATCH_LEASE_SECS);
    let mut next = w.app.begin_patch(&id, 2, 2, None).unwrap();
    assert_eq!(
        code(w.app.renew_patch(&frozen.ticket())),
        ErrorCode::Conflict
    );
    assert_eq!(code(w.app.finish_patch(frozen)), ErrorCode::Conflict);
    assert_eq!(in_progress(&w.app, &id).unwrap().offset, 2, "nothing kept");
    next.push(b"cd").unwrap();
    assert!(matches!(w.app.finish_patch(next), Ok(Patched::Complete(_))));
    assert_eq!(read(&w.app, &id).unwrap(), b"abcd");
}

#[test]
fn a_checksum_mismatch_keeps_nothing_and_a_cut_body_keeps_what_came() {
    let w = world();
    let id = started(&w.app, "a.txt", 6);
    let wrong = Checksum::Sha1(vec![0; 20]);
    let mut p = w.app.begin_patch(&id, 0, 3, Some(wrong)).unwrap();
    p.push(b"abc").unwrap();
    assert_eq!(code(w.app.finish_patch(p)), ErrorCode::ChecksumMismatch);
    assert_eq!(in_progress(&w.app, &id).unwrap().offset, 0, "nothing kept");
    // The right digest (sha256 of "abc") is taken.
    let digest = sha2::Sha256::digest(b"abc").to_vec();
    let mut p = w
        .app
        .begin_patch(&id, 0, 3, Some(Checksum::Sha256(digest)))
        .unwrap();
    p.push(b"abc").unwrap();
    w.app.finish_patch(p).unwrap();
    // A PATCH of three whose connection broke after one: that one stays.
    let mut p = w.app.begin_patch(&id, 3, 3, None).unwrap();
    p.push(b"d").unwrap();
    w.app.finish_patch(p).unwrap();
    assert_eq!(in_progress(&w.app, &id).unwrap().offset, 4);
    // A PATCH that failed midway frees the upload at once.
    let p = w.app.begin_patch(&id, 4, 2, None).unwrap();
    w.app.abandon_patch(p);
    assert!(matches!(
        patch(&w.app, &id, 4, b"ef"),
        Ok(Patched::Complete(_))
    ));
    assert_eq!(read(&w.app, &id).unwrap(), b"abcdef");
}

#[test]
fn ended_and_expired_uploads_free_their_bytes_and_their_room() {
    let w = world();
    let ended = started(&w.app, "a", 10);
    patch(&w.app, &ended, 0, b"12345").unwrap();
    let abandoned = started(&w.app, "b", 10);
    patch(&w.app, &abandoned, 0, b"123").unwrap();
    assert_eq!(w.app.pool_used_bytes().unwrap(), 20);
    w.app.end_upload(&ended).unwrap();
    assert_eq!(code(in_progress(&w.app, &ended)), ErrorCode::NotFound);
    assert_eq!(w.app.pool_used_bytes().unwrap(), 10);
    w.clock.advance_secs(UPLOAD_TTL_SECS);
    assert_eq!(code(in_progress(&w.app, &abandoned)), ErrorCode::NotFound);
    w.app.sweep(100).unwrap();
    assert_eq!(w.app.pool_used_bytes().unwrap(), 0);
    assert_eq!(w.blobs.count(), 0);
    assert_eq!(w.blobs.staged_count(), 0, "no staged bytes left");
}

#[test]
fn creation_checks_what_a_plain_upload_checks_before_any_byte() {
    let w = world_with(100);
    let max = w.app.config().limits.file_bytes_max;
    assert_eq!(
        code(w.app.create_upload(&named("a"), max + 1, String::new())),
        ErrorCode::TooLarge
    );
    assert_eq!(
        code(w.app.create_upload(&named("a"), 101, String::new())),
        ErrorCode::PoolFull
    );
    let bad = NewFile {
        once: true,
        max_downloads: Some(3),
        ..named("a")
    };
    assert_eq!(
        code(w.app.create_upload(&bad, 1, String::new())),
        ErrorCode::BadRequest
    );
    assert_eq!(w.app.pool_used_bytes().unwrap(), 0, "nothing reserved");
}
