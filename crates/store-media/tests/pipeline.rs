//! The pipeline on the fixtures (fixtures/media): probing, stripping,
//! downscaling, HEIC, thumbnails and reduced-scale decoding.

use image::{DynamicImage, GenericImageView};

use store_media::*;

/// A fixture of the repository's `fixtures/media`, found at run time (an
/// archived build run by scripts/stress-runs reads its own copy).
fn fixture(name: &str) -> Vec<u8> {
    let manifest =
        std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
    std::fs::read(format!("{manifest}/../../fixtures/media/{name}")).expect(name)
}

fn limits() -> MediaLimits {
    MediaLimits::default()
}

/// Decodes without applying any orientation: the stored pixels.
fn raw_pixels(bytes: &[u8]) -> image::RgbaImage {
    image::load_from_memory(bytes).unwrap().into_rgba8()
}

#[test]
fn formats_come_from_magic_bytes() {
    assert_eq!(
        detect(&fixture("exif-gps-orientation.jpg")),
        Some(Format::Jpeg)
    );
    assert_eq!(detect(&fixture("alpha-2400x1600.png")), Some(Format::Png));
    assert_eq!(detect(&fixture("animated.gif")), Some(Format::Gif));
    assert_eq!(detect(&fixture("photo.heic")), Some(Format::Heic));
    assert_eq!(detect(b"%PDF-1.4"), None);
    assert_eq!(
        process(b"<svg/>", &limits()).unwrap_err(),
        MediaError::Unsupported
    );
    let p = probe(&fixture("large-4000x3000.jpg"), &limits()).unwrap();
    assert_eq!((p.width, p.height), (4000, 3000));
}

#[test]
fn bombs_are_refused_from_the_header_and_damage_is_an_error() {
    // The bomb is 74 bytes that declare 65535x65535 pixels: decoding them
    // would fail as damage, so a refusal of size shows that the header
    // alone decided, as the probe (which decodes nothing) does too.
    let bomb = fixture("bomb-65535.png");
    let err = process(&bomb, &limits()).unwrap_err();
    assert!(matches!(err, MediaError::TooLarge(_)), "{err:?}");
    let err = probe(&bomb, &limits()).unwrap_err();
    assert!(matches!(err, MediaError::TooLarge(_)), "{err:?}");
    assert!(process(&fixture("truncated.jpg"), &limits()).is_err());
    assert!(thumbnail(&fixture("truncated.jpg"), 160, &limits()).is_err());
    let mut cut = fixture("photo.heic");
    cut.truncate(cut.len() / 3);
    assert!(process(&cut, &limits()).is_err());
    // A cap below the image is honoured by every path.
    let tight = MediaLimits {
        pixels_max: 10_000,
        ..limits()
    };
    assert!(matches!(
        process(&fixture("large-4000x3000.jpg"), &tight),
        Err(MediaError::TooLarge(_))
    ));
    assert!(process(&fixture("photo.heic"), &tight).is_err());
}

#[test]
fn small_jpegs_lose_metadata_but_not_pixels_or_orientation() {
    let original = fixture("exif-gps-orientation.jpg");
    let out = process(&original, &limits()).unwrap();
    assert!(!out.reencoded);
    assert_eq!(out.format, Format::Jpeg);
    assert!(out.bytes.len() < original.len());
    let stripped = jpeg::strip(&original).unwrap();
    assert_eq!(stripped.orientation, Some(6));
    assert!(stripped.removed >= 2, "EXIF and the comment went");
    assert_eq!(stripped.bytes, out.bytes);
    let contains = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
    assert!(
        contains(&original, b"FixtureCam") && !contains(&out.bytes, b"FixtureCam"),
        "Make is gone"
    );
    assert!(
        !contains(&out.bytes, b"a comment to strip"),
        "the comment is gone"
    );
    // GPS lived in the EXIF segment; the only EXIF left is the orientation one.
    let again = jpeg::strip(&out.bytes).unwrap();
    assert_eq!(again.orientation, Some(6), "orientation kept");
    assert_eq!(
        again.removed, 1,
        "exactly one (minimal) EXIF segment remains"
    );
    assert!(out.bytes.len() < original.len());
    assert_eq!(
        raw_pixels(&out.bytes),
        raw_pixels(&original),
        "pixels are identical"
    );
}

#[test]
fn large_images_become_webp_within_2048_and_1_mib() {
    let out = process(&fixture("large-4000x3000.jpg"), &limits()).unwrap();
    assert!(out.reencoded);
    assert_eq!(out.format, Format::Webp);
    assert_eq!((out.width, out.height), (2048, 1536));
    assert!(
        out.bytes.len() as u64 <= 1_048_576,
        "{} bytes",
        out.bytes.len()
    );
    let decoded =
        image::load_from_memory_with_format(&out.bytes, image::ImageFormat::WebP).unwrap();
    assert_eq!(decoded.dimensions(), (2048, 1536));
}

#[test]
fn alpha_survives_downscaling() {
    let out = process(&fixture("alpha-2400x1600.png"), &limits()).unwrap();
    assert_eq!(out.format, Format::Webp);
    assert_eq!(out.width.max(out.height), 2048);
    let img = image::load_from_memory(&out.bytes).unwrap().into_rgba8();
    assert!(
        img.pixels().any(|p| p.0[3] < 128),
        "transparent pixels remain"
    );
    assert!(img.pixels().any(|p| p.0[3] > 200), "opaque pixels remain");
}

#[test]
fn gifs_and_small_images_pass_untouched() {
    let gif = fixture("animated.gif");
    assert_eq!(process(&gif, &limits()).unwrap().bytes, gif);
    let mut png = Vec::new();
    image::RgbaImage::from_pixel(30, 20, image::Rgba([1, 2, 3, 4]))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let out = process(&png, &limits()).unwrap();
    assert_eq!(out.bytes, png);
    assert!(!out.reencoded);
}

/// Peak signal-to-noise ratio of two RGB images of one size, in dB.
fn psnr(a: &image::RgbImage, b: &image::RgbImage) -> f64 {
    assert_eq!(a.dimensions(), b.dimensions());
    let mse: f64 = a
        .as_raw()
        .iter()
        .zip(b.as_raw())
        .map(|(x, y)| (f64::from(*x) - f64::from(*y)).powi(2))
        .sum::<f64>()
        / a.as_raw().len() as f64;
    10.0 * (255.0f64 * 255.0 / mse.max(1e-9)).log10()
}

#[test]
fn heic_decodes_like_libheif_and_is_stored_as_webp() {
    let heic = fixture("photo.heic");
    let ours = decode(&heic, Format::Heic, &limits()).unwrap();
    let reference = image::load_from_memory(&fixture("photo.heic.libheif.png"))
        .unwrap()
        .into_rgb8();
    let ours = DynamicImage::ImageRgba8(ours).into_rgb8();
    // Luma must agree closely: that is the HEVC decode itself. Chroma is
    // 4:2:0 and each decoder upsamples it with its own filter, which shows
    // at the fixture's hard colour edges, so RGB agrees less closely.
    let luma = luma_psnr(&ours, &reference);
    let rgb = psnr(&ours, &reference);
    assert!(luma > 45.0, "heifer and libheif luma agree to {luma:.1} dB");
    assert!(rgb > 30.0, "heifer and libheif RGB agree to {rgb:.1} dB");
    let out = process(&heic, &limits()).unwrap();
    assert_eq!(out.format, Format::Webp);
    assert_eq!((out.width, out.height), (640, 480));
}

#[test]
fn thumbnails_fit_their_box_and_are_never_upscaled() {
    for (name, want) in [
        ("large-4000x3000.jpg", [(160, 120), (320, 240), (640, 480)]),
        // Orientation 6: the upright picture is portrait.
        (
            "exif-gps-orientation.jpg",
            [(120, 160), (120, 160), (120, 160)],
        ),
    ] {
        for (box_px, dims) in [160, 320, 640].into_iter().zip(want) {
            let t = thumbnail(&fixture(name), box_px, &limits()).unwrap();
            assert_eq!(detect(&t), Some(Format::Webp));
            let img = image::load_from_memory(&t).unwrap();
            assert_eq!(img.dimensions(), dims, "{name} at {box_px}");
        }
    }
    let t = thumbnail(&fixture("photo.heic"), 320, &limits()).unwrap();
    assert_eq!(
        image::load_from_memory(&t).unwrap().dimensions(),
        (320, 240)
    );
}

/// PSNR of the luma (BT.601) only: chroma upsampling filters differ between
/// decoders, luma must not.
fn luma_psnr(a: &image::RgbImage, b: &image::RgbImage) -> f64 {
    let y = |p: &image::Rgb<u8>| {
        0.299 * f64::from(p.0[0]) + 0.587 * f64::from(p.0[1]) + 0.114 * f64::from(p.0[2])
    };
    let mse: f64 = a
        .pixels()
        .zip(b.pixels())
        .map(|(p, q)| (y(p) - y(q)).powi(2))
        .sum::<f64>()
        / f64::from(a.width() * a.height());
    10.0 * (255.0f64 * 255.0 / mse.max(1e-9)).log10()
}

#[test]
fn reduced_scale_jpeg_decoding_matches_the_full_decode() {
    let bytes = fixture("large-4000x3000.jpg");
    let limits = MediaLimits::default();
    let decoded = decode(&bytes, Format::Jpeg, &limits).unwrap();
    for box_px in [160, 640, 2048] {
        let fast = fit(
            decode_for(&bytes, Format::Jpeg, &limits, box_px).unwrap(),
            box_px,
        )
        .unwrap();
        let full = fit(decoded.clone(), box_px).unwrap();
        assert_eq!(fast.dimensions(), full.dimensions(), "box {box_px}");
        // The same picture: the mean absolute difference per channel is
        // small (DCT scaling filters a little differently than Lanczos).
        let diff: u64 = fast
            .as_raw()
            .iter()
            .zip(full.as_raw())
            .map(|(a, b)| u64::from(a.abs_diff(*b)))
            .sum();
        let mean = diff as f64 / fast.as_raw().len() as f64;
        assert!(mean < 4.0, "box {box_px}: mean difference {mean}");
    }
    // EXIF orientation is honoured on the fast path too.
    let rotated = fixture("exif-gps-orientation.jpg");
    let (w, h) = decode(&rotated, Format::Jpeg, &limits)
        .unwrap()
        .dimensions();
    let fast = fit(decode_for(&rotated, Format::Jpeg, &limits, 64).unwrap(), 64).unwrap();
    assert_eq!(fast.width() > fast.height(), w > h);
}
