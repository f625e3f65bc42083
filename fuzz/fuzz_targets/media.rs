//! The image probe and pipeline on hostile bytes, under the fuzzer's
//! memory limit: an error is fine, a panic or a runaway allocation is not.
//! Limits are tight so that each run stays fast.
#![no_main]
use libfuzzer_sys::fuzz_target;
use store_media::{process, probe, thumbnail, MediaLimits};

fuzz_target!(|data: &[u8]| {
    let limits = MediaLimits { side_px_max: 4096, pixels_max: 4_000_000, downscale_px: 256, target_bytes: 64 * 1024 };
    if let Ok(p) = probe(data, &limits) {
        assert!(p.width <= 4096 && p.height <= 4096);
    }
    if let Ok(out) = process(data, &limits) {
        assert!(out.width.max(out.height) <= 4096);
    }
    if let Ok(t) = thumbnail(data, 64, &limits) {
        assert!(t.starts_with(b"RIFF"));
    }
    if let Ok(s) = store_media::jpeg::strip(data) {
        assert!(s.bytes.starts_with(&[0xFF, 0xD8]));
    }
});
