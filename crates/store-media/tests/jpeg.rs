//! The JPEG metadata stripper on hand-made segments.

use store_media::jpeg::{orientation_of, orientation_segment, strip};

#[test]
fn orientation_segment_round_trips() {
    for o in 1..=8 {
        let seg = orientation_segment(o);
        assert_eq!(orientation_of(&seg[4..]), Some(o));
    }
}

#[test]
fn trailers_after_the_image_are_dropped() {
    // SOI, a minimal SOS segment, scan data, EOI, then a trailer.
    let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0x11, 0x22, 0xFF, 0xD9];
    let clean = strip(&jpeg).unwrap().bytes;
    jpeg.extend_from_slice(b"SEFT trailer data");
    assert_eq!(strip(&jpeg).unwrap().bytes, clean);
    assert!(
        strip(&[0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 0x11]).is_err(),
        "no EOI: truncated"
    );
}

#[test]
fn garbage_is_refused_without_panicking() {
    assert!(strip(b"").is_err());
    assert!(strip(b"\xFF\xD8").is_err());
    assert!(strip(b"\xFF\xD8\xFF\xE1\xFF\xFF").is_err());
    assert!(strip(b"\xFF\xD8\xFF\xE1\x00\x01").is_err());
}
