//! Galleries: images, likes, comments, administration, the pics pool.

use super::*;

fn png(w: u32, h: u32) -> Vec<u8> {
    // A minimal valid PNG of w x h (one grey row repeated), made by hand
    // so the app tests need no image library.
    fn chunk(t: &[u8], d: &[u8]) -> Vec<u8> {
        let mut c = (d.len() as u32).to_be_bytes().to_vec();
        c.extend_from_slice(t);
        c.extend_from_slice(d);
        let mut crc = 0xFFFF_FFFFu32;
        for b in t.iter().chain(d) {
            crc ^= u32::from(*b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        c.extend_from_slice(&(!crc).to_be_bytes());
        c
    }
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]);
    // Stored (uncompressed) deflate blocks of filter byte 0 + w grey bytes per row.
    let raw: Vec<u8> = (0..h)
        .flat_map(|_| std::iter::once(0u8).chain(std::iter::repeat_n(128u8, w as usize)))
        .collect();
    let mut z = vec![0x78, 0x01];
    for (i, block) in raw.chunks(65_535).enumerate() {
        let last = (i + 1) * 65_535 >= raw.len();
        z.push(u8::from(last));
        z.extend_from_slice(&(block.len() as u16).to_le_bytes());
        z.extend_from_slice(&(!(block.len() as u16)).to_le_bytes());
        z.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for x in &raw {
        a = (a + u32::from(*x)) % 65_521;
        b = (b + a) % 65_521;
    }
    z.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend(chunk(b"IHDR", &ihdr));
    out.extend(chunk(b"IDAT", &z));
    out.extend(chunk(b"IEND", &[]));
    out
}

fn visitor(ua: &str) -> Visitor {
    Visitor {
        ip: "203.0.113.9".into(),
        user_agent: ua.into(),
    }
}

/// A new gallery as these tests use it: its id and admin token.
struct Made {
    id: String,
    token: Option<String>,
}

fn new_gallery(app: &App, name: Option<&str>, listed: bool) -> Made {
    let made = app.create_gallery(name, listed).unwrap();
    Made {
        id: made.gallery.gid,
        token: made.token,
    }
}

fn put_image(w: &World, gid: &str) -> store_core::gallery::ImageRecord {
    w.app
        .upload_image(gid, Some("p.png"), upload(&w.app, &png(40, 30)))
        .unwrap()
}

#[test]
fn galleries_are_created_once_per_name() {
    let w = world();
    let g = w.app.create_gallery(Some("holiday-2026"), true).unwrap();
    assert!(g.created());
    assert_eq!(g.gallery.gid, "holiday-2026");
    let token = g.token.clone().unwrap();
    assert!(token.len() >= 22);
    let again = w.app.create_gallery(Some("holiday-2026"), false).unwrap();
    assert!(!again.created());
    assert_eq!(again.token, None, "the admin token is shown once");
    assert!(again.gallery.listed, "flags of a later create are ignored");
    let other = w
        .app
        .create_gallery(Some("Summer in Köln!"), false)
        .unwrap()
        .gallery;
    assert_eq!(other.gid.len(), 32, "a display name gets a hex id");
    assert_eq!(other.name.as_deref(), Some("Summer in Köln!"));
    assert_eq!(w.app.list_galleries().unwrap().len(), 1, "only listed ones");
}

#[test]
fn uploads_likes_and_visibility() {
    let w = world();
    let g = new_gallery(&w.app, Some("likes-test"), false);
    let img = put_image(&w, &g.id);
    assert_eq!(
        (img.width, img.height, img.content_type.as_str()),
        (40, 30, "image/png")
    );
    assert_eq!(w.app.pics_used_bytes().unwrap(), img.size);
    let a = w.app.like_image(&img.id, &visitor("a")).unwrap();
    assert_eq!((a.likes, a.liked), (1, true));
    let b = w.app.like_image(&img.id, &visitor("b")).unwrap();
    assert_eq!((b.likes, b.liked), (2, true));
    let a = w.app.like_image(&img.id, &visitor("a")).unwrap();
    assert_eq!((a.likes, a.liked), (1, false), "a second toggle unlikes");
    let tally = w.app.counters(&g.id).unwrap();
    assert_eq!(tally.visible, [w.app.image(&img.id).unwrap().unwrap()]);
    assert_eq!(tally.visible[0].likes.len(), 1);
    let secret = g.token.unwrap();
    w.app
        .administer(&g.id, &secret, AdminAction::Hide, &img.id)
        .unwrap();
    assert_eq!(code(w.app.open_image(&img.id, None)), ErrorCode::NotFound);
    assert_eq!(
        code(w.app.open_image(&img.id, Some("160"))),
        ErrorCode::NotFound
    );
    assert_eq!(
        code(w.app.like_image(&img.id, &visitor("a"))),
        ErrorCode::NotFound
    );
    assert!(w
        .app
        .gallery(&g.id, 1, &[], None)
        .unwrap()
        .images
        .is_empty());
    assert_eq!(
        w.app
            .gallery(&g.id, 1, &[], Some(&secret))
            .unwrap()
            .images
            .len(),
        1,
        "admins see hidden images"
    );
    w.app
        .administer(&g.id, &secret, AdminAction::Unhide, &img.id)
        .unwrap();
    assert!(w.app.open_image(&img.id, None).is_ok());
    // Images expire after 90 days.
    w.clock.advance_secs(90 * 86_400);
    assert_eq!(code(w.app.open_image(&img.id, None)), ErrorCode::NotFound);
}

#[test]
fn comments_cool_down_per_visitor_and_admins_act() {
    let w = world();
    let g = new_gallery(&w.app, Some("guestbook"), false);
    let c = w.app.comment(&g.id, &visitor("a"), None, "hello").unwrap();
    assert_eq!(c.name, "Gast");
    let err = w.app.comment(&g.id, &visitor("a"), Some("A"), "again");
    assert!(matches!(
        err,
        Err(AppError::Domain(store_core::StoreError::RateLimited {
            retry_after_secs: 20
        }))
    ));
    w.app
        .comment(&g.id, &visitor("b"), Some("B"), "another visitor")
        .unwrap();
    w.clock.advance_secs(20);
    w.app
        .comment(&g.id, &visitor("a"), Some("A"), "later")
        .unwrap();
    let liked = w.app.like_comment(&g.id, &c.id, &visitor("z")).unwrap();
    assert_eq!((liked.likes, liked.liked), (1, true));
    let comments = w.app.counters(&g.id).unwrap().gallery.comments;
    assert_eq!(comments.len(), 3);
    assert_eq!(
        comments.iter().find(|x| x.id == c.id).unwrap().likes.len(),
        1
    );
    let secret = g.token.unwrap();
    assert_eq!(
        code(
            w.app
                .administer(&g.id, "wrong", AdminAction::DeleteComment, &c.id)
        ),
        ErrorCode::NotFound
    );
    w.app
        .administer(&g.id, &secret, AdminAction::DeleteComment, &c.id)
        .unwrap();
    assert_eq!(w.app.counters(&g.id).unwrap().gallery.comments.len(), 2);
    let one = put_image(&w, &g.id);
    let two = put_image(&w, &g.id);
    w.app
        .administer(&g.id, &secret, AdminAction::Up, &two.id)
        .unwrap();
    let order: Vec<_> = w
        .app
        .gallery(&g.id, 1, &[], None)
        .unwrap()
        .images
        .into_iter()
        .map(|i| i.id)
        .collect();
    assert_eq!(order, [two.id.clone(), one.id.clone()]);
    let starred = w
        .app
        .gallery(&g.id, 1, &[one.id.clone(), "nope".into()], None)
        .unwrap();
    assert_eq!(starred.selected, std::slice::from_ref(&one.id));
    assert_eq!(starred.images[0].id, one.id, "stars sort first");
    w.app
        .administer(&g.id, &secret, AdminAction::Delete, &one.id)
        .unwrap();
    assert_eq!(code(w.app.open_image(&one.id, None)), ErrorCode::NotFound);
    assert_eq!(w.app.pics_used_bytes().unwrap(), two.size);
}

#[test]
fn the_superadmin_administers_every_gallery() {
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(T0)));
    let blobs = Arc::new(MemoryBlobStore::new());
    let repo = Arc::new(MemoryRepository::new());
    let mut cfg = config(1 << 30);
    cfg.superadmin_token = Some("root-secret".into());
    let (app, _) = App::open(ports(&clock, &blobs, &repo), cfg).unwrap();
    let g = new_gallery(&app, None, false);
    assert!(app.gallery(&g.id, 1, &[], Some("root-secret")).is_ok());
    assert_eq!(
        code(app.gallery(&g.id, 1, &[], Some("root-secre"))),
        ErrorCode::NotFound
    );
}

#[test]
fn the_pics_pool_never_evicts() {
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(T0)));
    let blobs = Arc::new(MemoryBlobStore::new());
    let repo = Arc::new(MemoryRepository::new());
    let mut cfg = config(1 << 30);
    cfg.limits.pics_pool_bytes = 3000;
    let (app, _) = App::open(ports(&clock, &blobs, &repo), cfg).unwrap();
    let w = World {
        app,
        clock,
        blobs,
        repo,
    };
    let g = new_gallery(&w.app, Some("tiny-pool"), false);
    let first = put_image(&w, &g.id);
    let mut refused = None;
    for _ in 0..10 {
        if let Err(e) = w
            .app
            .upload_image(&g.id, None, upload(&w.app, &png(40, 30)))
        {
            refused = Some(e);
            break;
        }
    }
    let Some(AppError::Domain(e)) = refused else {
        panic!("the pool filled")
    };
    assert_eq!(e.code(), ErrorCode::PoolFull);
    assert_eq!(e.retry_after_secs(), Some(300));
    assert!(
        w.app.open_image(&first.id, None).is_ok(),
        "nothing was evicted"
    );
}

// Regression (review of issue 5): concurrent first requests for a
// preview each made one, and all but the last were left orphaned.
#[test]
fn concurrent_preview_requests_keep_one_preview() {
    let w = Arc::new(world());
    let g = new_gallery(&w.app, Some("thumbs-race"), false);
    let img = put_image(&w, &g.id);
    let before = w.blobs.count();
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let (w, id) = (Arc::clone(&w), img.id.clone());
            std::thread::spawn(move || w.app.open_image(&id, Some("160")).map(|_| ()).unwrap())
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    // Every size is made from the one decode: one set, no orphans.
    let sizes = store_core::gallery::THUMB_SIZES.len();
    assert_eq!(
        w.blobs.count(),
        before + sizes,
        "one set of previews, no orphans"
    );
    // The other sizes were made with it: asking for them adds nothing.
    w.app.open_image(&img.id, Some("640")).unwrap();
    w.app.open_image(&img.id, Some("1")).unwrap();
    assert_eq!(w.blobs.count(), before + sizes);
}

#[test]
fn a_refused_upload_leaves_no_image_and_no_pool_bytes() {
    let w = world();
    assert_eq!(
        code(
            w.app
                .upload_image("never-created", None, upload(&w.app, &png(4, 4)))
        ),
        ErrorCode::NotFound
    );
    assert_eq!(w.app.pics_used_bytes().unwrap(), 0);
    assert_eq!(w.blobs.count(), 0);
}

#[test]
fn hostile_images_are_refused() {
    let w = world();
    let g = new_gallery(&w.app, Some("hostile"), false);
    assert_eq!(
        code(
            w.app
                .upload_image(&g.id, None, upload(&w.app, b"<svg onload=alert(1)>"))
        ),
        ErrorCode::BadRequest
    );
    assert_eq!(
        code(
            w.app
                .upload_image("no-such-gallery", None, upload(&w.app, &png(2, 2)))
        ),
        ErrorCode::NotFound
    );
    assert_eq!(w.app.pics_used_bytes().unwrap(), 0);
}

#[test]
fn a_gallery_zips_what_visitors_see_with_names_that_differ() {
    let w = world();
    let g = new_gallery(&w.app, Some("zip-test"), false);
    let token = g.token.clone().unwrap();
    let (a, b, hidden) = (
        put_image(&w, &g.id),
        put_image(&w, &g.id),
        put_image(&w, &g.id),
    );
    w.app
        .administer(&g.id, &token, AdminAction::Hide, &hidden.id)
        .unwrap();
    let members = w.app.gallery_members(&g.id).unwrap();
    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["p.png", "p (2).png"], "the hidden one is left out");
    let blobs: Vec<_> = members.iter().map(|m| m.blob.clone()).collect();
    assert_eq!(blobs, [a.blob, b.blob]);
    // Past the images' lifetime the gallery (whose lifetime its uploads
    // slide) has expired with them.
    w.clock
        .advance_secs(store_core::Limits::DEFAULT.pics_lifetime_secs + 1);
    assert_eq!(code(w.app.gallery_members(&g.id)), ErrorCode::NotFound);
    assert_eq!(
        code(w.app.gallery_members("no-such-gallery")),
        ErrorCode::NotFound
    );
}

#[test]
fn gallery_uploads_closed_to_admins_let_the_admin_and_superadmin_in() {
    let mut config = config(store_core::Limits::DEFAULT.pool_bytes);
    config.gallery_uploads = store_core::gallery::GalleryUploads::Admin;
    config.superadmin_token = Some("super-token-for-tests".into());
    let clock = Arc::new(ManualClock::new(Timestamp::from_secs(T0)));
    let (blobs, repo) = (
        Arc::new(MemoryBlobStore::new()),
        Arc::new(MemoryRepository::new()),
    );
    let (app, _) = App::open(ports(&clock, &blobs, &repo), config).unwrap();
    let g = new_gallery(&app, Some("closed-one"), false);
    let token = g.token.unwrap();
    assert_eq!(
        code(app.check_gallery_upload(&g.id, None)),
        ErrorCode::WriteDenied
    );
    assert_eq!(
        code(app.check_gallery_upload(&g.id, Some("wrong-token"))),
        ErrorCode::NotFound
    );
    assert!(app.check_gallery_upload(&g.id, Some(&token)).is_ok());
    assert!(app
        .check_gallery_upload(&g.id, Some("super-token-for-tests"))
        .is_ok());
    assert_eq!(
        code(app.check_gallery_upload("nope-nope", Some(&token))),
        ErrorCode::NotFound
    );
    // The default is open: anyone may.
    let w = world();
    let open = new_gallery(&w.app, Some("open-one"), false);
    assert!(w.app.check_gallery_upload(&open.id, None).is_ok());
}
