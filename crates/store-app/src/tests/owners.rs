//! Owner tokens: handed out once at creation, they change an object's
//! expiry and guard a protected object's writes.

use super::*;

use store_core::{Lifetime, Object};

fn owner(token: &str) -> Access {
    Access {
        owner: Some(token.into()),
        ..Access::retain_only(RetainAuth::Absent)
    }
}

fn protected_file(w: &World) -> Created<FileRecord> {
    let req = NewFile {
        protect: true,
        ..NewFile::default()
    };
    put_file(&w.app, "a.txt", b"hello", req, RetainAuth::Absent)
}

#[test]
fn an_upload_answers_its_owner_token_once_and_keeps_a_digest() {
    let w = world();
    let a = put_plain(&w.app, "a.txt", b"a");
    let b = put_plain(&w.app, "b.txt", b"b");
    assert!(a.owner_token.len() >= 22, "at least 128 bits");
    assert_ne!(a.owner_token, b.owner_token);
    let stored = w.app.file_info(&a.id, &crate::ReadKey::NONE).unwrap();
    let kept = stored.owner.as_ref().expect("an owner");
    assert!(!kept.protected);
    assert!(
        !format!("{:?}", w.repo.get(&a.id).unwrap()).contains(&a.owner_token),
        "the record holds a digest, never the token"
    );
}

#[test]
fn the_owner_alone_sets_a_new_expiry_from_now_clamped() {
    let w = world();
    let f = put_plain(&w.app, "a.txt", b"a");
    w.clock.advance_secs(3_600);
    let nobody = Access::retain_only(RetainAuth::Absent);
    let admin = Access::retain_only(RetainAuth::Valid);
    for denied in [&nobody, &owner("not-the-owner-token"), &admin] {
        assert_eq!(
            code(w.app.set_ttl(&f.id, 86_400, denied)),
            ErrorCode::WriteDenied
        );
    }
    assert_eq!(
        w.app
            .file_info(&f.id, &crate::ReadKey::NONE)
            .unwrap()
            .lifetime,
        f.lifetime
    );
    let me = owner(&f.owner_token);
    let now = w.clock.now();
    // (asked, then kept): longer, shorter, and both bounds.
    let cases = [
        (86_400, 86_400),
        (14_400, 14_400),
        (60, 14_400),
        (100 * 86_400, 1_209_600),
    ];
    for (asked, kept) in cases {
        let seen = w.app.set_ttl(&f.id, asked, &me).unwrap();
        assert_eq!(
            seen.record.lifetime(),
            &Lifetime::fixed(now, kept),
            "{asked}"
        );
        assert_eq!(
            w.app
                .file_info(&f.id, &crate::ReadKey::NONE)
                .unwrap()
                .lifetime,
            Lifetime::fixed(now, kept)
        );
    }
    w.clock.advance_secs(1_209_600);
    assert_eq!(
        code(w.app.file_info(&f.id, &crate::ReadKey::NONE)),
        ErrorCode::NotFound
    );
}

#[test]
fn a_retained_object_keeps_its_retention() {
    let w = world();
    let f = put_file(&w.app, "a.txt", b"a", NewFile::default(), RetainAuth::Valid);
    let seen = w
        .app
        .set_ttl(&f.id, 86_400, &owner(&f.owner_token))
        .unwrap();
    assert_eq!(seen.record.lifetime(), &Lifetime::Indefinite);
    assert_eq!(
        code(w.app.delete(&f.id, &owner(&f.owner_token))),
        ErrorCode::WriteDenied,
        "the owner token does not stand in for the retain token"
    );
}

/// One change to a single file, as the protection table runs it.
type FileWriteFn = fn(&App, &str, &Access) -> AppResult<()>;

#[test]
fn protected_files_change_only_with_the_owner_or_the_retain_token() {
    let w = world();
    let f = protected_file(&w);
    assert!(
        w.app
            .file_info(&f.id, &crate::ReadKey::NONE)
            .unwrap()
            .record
            .owner
            .unwrap()
            .protected
    );
    let writes: [(&str, FileWriteFn); 5] = [
        ("check an edit", |app, id, a| app.check_edit(id, a)),
        ("tag", |app, id, a| {
            app.tag_file(id, &["t".into()], &[], a).map(drop)
        }),
        ("put", |app, id, a| {
            app.replace_file(id, upload(app, b"new"), a).map(drop)
        }),
        ("patch", |app, id, a| app.append_file(id, b"+", a).map(drop)),
        ("delete", |app, id, a| app.delete(id, a)),
    ];
    let admin = Access::retain_only(RetainAuth::Valid);
    for (what, write) in writes {
        let before = w
            .app
            .file_info(&f.id, &crate::ReadKey::NONE)
            .unwrap()
            .record;
        for denied in [
            &Access::retain_only(RetainAuth::Absent),
            &owner("not-the-owner-token"),
        ] {
            assert_eq!(
                code(write(&w.app, &f.id, denied)),
                ErrorCode::WriteDenied,
                "{what}"
            );
        }
        assert_eq!(
            w.app
                .file_info(&f.id, &crate::ReadKey::NONE)
                .unwrap()
                .record,
            before,
            "{what}"
        );
        write(&w.app, &f.id, &owner(&f.owner_token))
            .unwrap_or_else(|e| panic!("{what} by the owner: {e:?}"));
    }
    assert_eq!(
        code(w.app.file_info(&f.id, &crate::ReadKey::NONE)),
        ErrorCode::NotFound
    );
    // The retain token administers every object, protected or not.
    let g = protected_file(&w);
    w.app.delete(&g.id, &admin).unwrap();
}

#[test]
fn unprotected_files_stay_open_but_refuse_a_wrong_owner_token() {
    let w = world();
    let f = put_plain(&w.app, "a.txt", b"a");
    assert_eq!(
        code(
            w.app
                .append_file(&f.id, b"+", &owner("not-the-owner-token"))
        ),
        ErrorCode::WriteDenied
    );
    w.app
        .append_file(&f.id, b"+", &RetainAuth::Absent.into())
        .unwrap();
    w.app.delete(&f.id, &RetainAuth::Absent.into()).unwrap();
}

#[test]
fn bundles_have_owners_too() {
    let w = world();
    let parts = ["a.txt", "b.txt"]
        .map(|n| Part {
            name: Some(n.into()),
            declared_type: None,
            body: upload(&w.app, b"x"),
        })
        .into();
    let req = NewFile {
        protect: true,
        ..NewFile::default()
    };
    let b = w
        .app
        .create_bundle(&req, parts, RetainAuth::Absent)
        .unwrap();
    let now = w.clock.now();
    let seen = w
        .app
        .set_ttl(&b.id, 86_400, &owner(&b.owner_token))
        .unwrap();
    assert!(
        matches!(&seen.record, Object::Bundle(x) if x.lifetime == Lifetime::fixed(now, 86_400))
    );
    assert_eq!(
        code(w.app.delete(&b.id, &RetainAuth::Absent.into())),
        ErrorCode::WriteDenied
    );
    w.app.delete(&b.id, &owner(&b.owner_token)).unwrap();
}

#[test]
fn a_share_cannot_be_protected() {
    let req = NewFile {
        share: Some("shared-dir".into()),
        protect: true,
        ..NewFile::default()
    };
    assert!(req.validate(&Limits::DEFAULT).is_err());
}

#[test]
fn a_dirs_owner_sets_its_lifetime_and_passes_its_write_gate() {
    let w = world();
    let req = NewDir {
        name: Some("owned-dir".into()),
        write: Some(WriteRequest::Generate),
        ..NewDir::default()
    };
    let open = Access::retain_only(RetainAuth::Absent);
    let made = w.app.create_dir(&req, vec![], &open).unwrap();
    let token = made.owner_token.clone().expect("the creation answers it");
    let again = w.app.create_dir(&req, vec![], &open).unwrap();
    assert_eq!(again.owner_token, None, "create-or-get shows it once");
    assert_eq!(
        code(w.app.set_dir_ttl("owned-dir", 86_400, &open)),
        ErrorCode::WriteDenied
    );
    w.clock.advance_secs(60);
    let d = w
        .app
        .set_dir_ttl("owned-dir", 86_400, &owner(&token))
        .unwrap();
    assert_eq!(d.lifetime, Lifetime::sliding(w.clock.now(), 86_400));
    assert_eq!(d.ttl_secs, 86_400);
    let file = |name: &str| Part {
        name: Some(name.into()),
        declared_type: None,
        body: upload(&w.app, b"x"),
    };
    assert_eq!(
        code(w.app.add_to_dir("owned-dir", vec![file("a")], &open)),
        ErrorCode::WriteDenied
    );
    w.app
        .add_to_dir("owned-dir", vec![file("a")], &owner(&token))
        .unwrap();
    w.app.delete_dir("owned-dir", &owner(&token)).unwrap();
}
