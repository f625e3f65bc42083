//! # store-media
//!
//! The image pipeline, as pure functions over bytes: no HTTP, no async
//! runtime, no storage. Limits arrive as parameters ([`MediaLimits`]).
//!
//! - [`probe`] reads the format from magic bytes and the size from the
//!   header, and refuses decompression bombs before anything is decoded.
//! - [`process`] prepares an upload for a gallery: images at or under the
//!   downscale size are kept byte-identical (JPEG metadata stripped
//!   losslessly, Orientation kept); larger ones are downscaled to lossy
//!   WebP on a quality ladder; GIFs pass through; HEIC becomes WebP.
//! - [`thumbnail`] makes a WebP preview that fits a square box, never
//!   upscaled.
//!
//! Every decode runs with `image::Limits` (or heifer's pixel cap) set, so
//! a hostile file is an error, never a panic or an unbounded allocation.

pub mod jpeg;

use std::io::Cursor;

use fast_image_resize as fr;
use image::{DynamicImage, ImageFormat, ImageReader, RgbaImage};

/// Why an image was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MediaError {
    #[error("not an accepted image: use JPEG, PNG, WebP, GIF or HEIC")]
    Unsupported,
    #[error("the image is too large: {0}")]
    TooLarge(String),
    #[error("the image is damaged: {0}")]
    Malformed(&'static str),
    #[error("the image could not be decoded: {0}")]
    Decode(String),
    #[error("the image could not be encoded: {0}")]
    Encode(String),
}

/// The accepted formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Jpeg,
    Png,
    Webp,
    Gif,
    Heic,
}

impl Format {
    pub fn mime(self) -> &'static str {
        match self {
            Self::Jpeg => "image/jpeg",
            Self::Png => "image/png",
            Self::Webp => "image/webp",
            Self::Gif => "image/gif",
            Self::Heic => "image/heic",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Self::Jpeg => "jpg",
            Self::Png => "png",
            Self::Webp => "webp",
            Self::Gif => "gif",
            Self::Heic => "heic",
        }
    }

    fn image_format(self) -> Option<ImageFormat> {
        match self {
            Self::Jpeg => Some(ImageFormat::Jpeg),
            Self::Png => Some(ImageFormat::Png),
            Self::Webp => Some(ImageFormat::WebP),
            Self::Gif => Some(ImageFormat::Gif),
            Self::Heic => None,
        }
    }
}

/// The pipeline's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MediaLimits {
    /// Longest side accepted, in pixels.
    pub side_px_max: u32,
    /// Pixel area accepted (width times height).
    pub pixels_max: u64,
    /// Images larger than this (longest side) are downscaled to it.
    pub downscale_px: u32,
    /// The WebP quality ladder steps down while the result exceeds this.
    pub target_bytes: u64,
}

impl Default for MediaLimits {
    fn default() -> Self {
        Self {
            side_px_max: 20_000,
            pixels_max: 50_000_000,
            downscale_px: 2048,
            target_bytes: 1_048_576,
        }
    }
}

/// The format from the first bytes.
pub fn detect(bytes: &[u8]) -> Option<Format> {
    let starts = |sig: &[u8]| bytes.starts_with(sig);
    if starts(b"\xFF\xD8\xFF") {
        Some(Format::Jpeg)
    } else if starts(b"\x89PNG\r\n\x1a\n") {
        Some(Format::Png)
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some(Format::Webp)
    } else if starts(b"GIF87a") || starts(b"GIF89a") {
        Some(Format::Gif)
    } else if bytes.len() >= 12
        && &bytes[4..8] == b"ftyp"
        && matches!(
            &bytes[8..12],
            b"heic" | b"heix" | b"heim" | b"heis" | b"mif1" | b"msf1"
        )
    {
        Some(Format::Heic)
    } else {
        None
    }
}

/// What a probe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub format: Format,
    /// Zero for HEIC, whose size is checked by the decoder's own pixel cap.
    pub width: u32,
    pub height: u32,
}

fn decode_limits(limits: &MediaLimits) -> image::Limits {
    let mut l = image::Limits::default();
    l.max_image_width = Some(limits.side_px_max);
    l.max_image_height = Some(limits.side_px_max);
    // Decoded RGBA, plus room for the decoder's own buffers.
    l.max_alloc = Some(limits.pixels_max.saturating_mul(4).saturating_add(64 << 20));
    l
}

/// The image crate's errors: a limit hit is a refusal of size, anything
/// else a decoding failure.
fn image_error(e: image::ImageError) -> MediaError {
    match e {
        image::ImageError::Limits(l) => MediaError::TooLarge(l.to_string()),
        e => MediaError::Decode(e.to_string()),
    }
}

fn check_size(w: u32, h: u32, limits: &MediaLimits) -> Result<(), MediaError> {
    if w == 0 || h == 0 {
        return Err(MediaError::Malformed("an image without pixels"));
    }
    if w > limits.side_px_max
        || h > limits.side_px_max
        || u64::from(w) * u64::from(h) > limits.pixels_max
    {
        return Err(MediaError::TooLarge(format!(
            "{w}x{h} pixels; at most {} per side and {} in all",
            limits.side_px_max, limits.pixels_max
        )));
    }
    Ok(())
}

/// Format and size from the header alone; bombs are refused here, before
/// any pixel is decoded.
pub fn probe(bytes: &[u8], limits: &MediaLimits) -> Result<Probe, MediaError> {
    let format = detect(bytes).ok_or(MediaError::Unsupported)?;
    if format == Format::Jpeg {
        // The JPEG decoder fills in what is missing; a cut-off file must be
        // refused, not stored or previewed half grey.
        jpeg::segments(bytes)?;
    }
    let Some(f) = format.image_format() else {
        return Ok(Probe {
            format,
            width: 0,
            height: 0,
        });
    };
    let mut reader = ImageReader::with_format(Cursor::new(bytes), f);
    reader.limits(decode_limits(limits));
    let (width, height) = reader.into_dimensions().map_err(image_error)?;
    check_size(width, height, limits)?;
    Ok(Probe {
        format,
        width,
        height,
    })
}

/// Decodes to RGBA with the limits set, upright (EXIF orientation applied).
pub fn decode(bytes: &[u8], format: Format, limits: &MediaLimits) -> Result<RgbaImage, MediaError> {
    if format == Format::Heic {
        let options = heifer::Options {
            max_threads: 1,
            max_pixels: limits.pixels_max,
        };
        let img = heifer::decode_srgb_rgba8(bytes, &options)
            .map_err(|e| MediaError::Decode(e.to_string()))?;
        check_size(img.width, img.height, limits)?;
        return RgbaImage::from_raw(img.width, img.height, img.data)
            .ok_or(MediaError::Malformed("HEIC pixel data of the wrong size"));
    }
    let f = format
        .image_format()
        .expect("non-HEIC formats have an image format");
    let mut reader = ImageReader::with_format(Cursor::new(bytes), f);
    reader.limits(decode_limits(limits));
    let mut decoder = reader.into_decoder().map_err(image_error)?;
    let orientation = image::ImageDecoder::orientation(&mut decoder).ok();
    let mut img = DynamicImage::from_decoder(decoder).map_err(image_error)?;
    if let Some(o) = orientation {
        img.apply_orientation(o);
    }
    Ok(img.into_rgba8())
}

/// Decodes an image that is bound for a `box_px` square. A JPEG is decoded
/// at the smallest DCT scale (1, 1/2, 1/4 or 1/8) whose result still
/// covers the box, which skips most of the work for a large photo; the
/// resize that follows does the rest. Anything else decodes in full.
pub fn decode_for(
    bytes: &[u8],
    format: Format,
    limits: &MediaLimits,
    box_px: u32,
) -> Result<RgbaImage, MediaError> {
    if format != Format::Jpeg {
        return decode(bytes, format, limits);
    }
    match decode_jpeg_scaled(bytes, limits, box_px)? {
        Some(img) => Ok(img),
        // CMYK and 16-bit JPEGs take the general path.
        None => decode(bytes, format, limits),
    }
}

fn decode_jpeg_scaled(
    bytes: &[u8],
    limits: &MediaLimits,
    box_px: u32,
) -> Result<Option<RgbaImage>, MediaError> {
    // The orientation comes from the image crate's header parse, so both
    // paths honour EXIF alike.
    let orientation = {
        let reader = ImageReader::with_format(Cursor::new(bytes), image::ImageFormat::Jpeg);
        let mut decoder = reader.into_decoder().map_err(image_error)?;
        image::ImageDecoder::orientation(&mut decoder).ok()
    };
    let mut decoder = jpeg_decoder::Decoder::new(Cursor::new(bytes));
    decoder
        .read_info()
        .map_err(|e| MediaError::Decode(e.to_string()))?;
    let info = decoder
        .info()
        .ok_or(MediaError::Malformed("a JPEG without a frame header"))?;
    let (w, h) = (u32::from(info.width), u32::from(info.height));
    check_size(w, h, limits)?;
    // Ask for the box's size in the image's proportions: the decoder picks
    // the smallest scale at least that large.
    let long = w.max(h);
    let want = |side: u32| -> u16 {
        let scaled = (u64::from(side) * u64::from(box_px.min(long))).div_ceil(u64::from(long));
        u16::try_from(scaled.max(1)).unwrap_or(u16::MAX)
    };
    let (sw, sh) = decoder
        .scale(want(w), want(h))
        .map_err(|e| MediaError::Decode(e.to_string()))?;
    let pixels = decoder
        .decode()
        .map_err(|e| MediaError::Decode(e.to_string()))?;
    let (sw, sh) = (u32::from(sw), u32::from(sh));
    let img = match info.pixel_format {
        jpeg_decoder::PixelFormat::RGB24 => {
            image::RgbImage::from_raw(sw, sh, pixels).map(DynamicImage::ImageRgb8)
        }
        jpeg_decoder::PixelFormat::L8 => {
            image::GrayImage::from_raw(sw, sh, pixels).map(DynamicImage::ImageLuma8)
        }
        _ => return Ok(None),
    };
    let mut img = img.ok_or(MediaError::Malformed("JPEG pixel data of the wrong size"))?;
    if let Some(o) = orientation {
        img.apply_orientation(o);
    }
    Ok(Some(img.into_rgba8()))
}

/// Resizes to fit a `max_px` square, never upscaling.
pub fn fit(img: RgbaImage, max_px: u32) -> Result<RgbaImage, MediaError> {
    let (w, h) = img.dimensions();
    if w.max(h) <= max_px {
        return Ok(img);
    }
    let scale = f64::from(max_px) / f64::from(w.max(h));
    let nw = ((f64::from(w) * scale).round() as u32).clamp(1, max_px);
    let nh = ((f64::from(h) * scale).round() as u32).clamp(1, max_px);
    let src = fr::images::TypedImageRef::<fr::pixels::U8x4>::from_buffer(w, h, img.as_raw())
        .map_err(resize_error)?;
    let mut out = vec![0u8; nw as usize * nh as usize * 4];
    let mut dst = fr::images::TypedImage::<fr::pixels::U8x4>::from_buffer(nw, nh, &mut out)
        .map_err(resize_error)?;
    let options =
        fr::ResizeOptions::new().resize_alg(fr::ResizeAlg::Convolution(fr::FilterType::Lanczos3));
    // The typed call makes only the RGBA code concrete: the untyped one
    // instantiates the resizer for all thirteen pixel types here, which
    // an optimised debug build of this crate (Cargo.toml) cannot afford.
    fr::Resizer::new()
        .resize_typed(&src, &mut dst, &options)
        .map_err(resize_error)?;
    drop(dst);
    RgbaImage::from_raw(nw, nh, out).ok_or(MediaError::Malformed("resize produced the wrong size"))
}

/// A resizer's refusal, as this crate reports it.
fn resize_error(e: impl std::fmt::Display) -> MediaError {
    MediaError::Decode(e.to_string())
}

fn has_alpha(img: &RgbaImage) -> bool {
    img.pixels().any(|p| p.0[3] != 255)
}

/// libwebp's speed/size trade-off, 0 (fastest) to 6. At its default, 4,
/// the encoder's mode search was half of a 24 MP downscale; 3 searches
/// less, and the file came out no larger (360 KiB against 363 KiB;
/// docs/PERFORMANCE.md, scenario 7).
const WEBP_METHOD: i32 = 3;

/// Lossy WebP at `quality`; RGB when the image is opaque, RGBA otherwise.
fn encode_webp(img: &RgbaImage, quality: f32) -> Result<Vec<u8>, MediaError> {
    let (w, h) = img.dimensions();
    let mut config = webp::WebPConfig::new()
        .map_err(|()| MediaError::Malformed("the WebP encoder could not be configured"))?;
    config.quality = quality;
    config.method = WEBP_METHOD;
    let encoded = if has_alpha(img) {
        webp::Encoder::from_rgba(img.as_raw(), w, h).encode_advanced(&config)
    } else {
        let rgb = DynamicImage::ImageRgba8(img.clone()).into_rgb8();
        webp::Encoder::from_rgb(rgb.as_raw(), w, h).encode_advanced(&config)
    };
    let encoded =
        encoded.map_err(|_| MediaError::Malformed("the WebP encoder refused the image"))?;
    Ok(encoded.to_vec())
}

/// Qualities tried, best first: the first result within the target wins.
const QUALITY_LADDER: [f32; 6] = [90.0, 82.0, 75.0, 65.0, 55.0, 45.0];

/// Encodes down the quality ladder while the result exceeds the target;
/// the last step is kept whatever its size.
fn webp_ladder(img: &RgbaImage, target_bytes: u64) -> Result<Vec<u8>, MediaError> {
    let mut last = Vec::new();
    for q in QUALITY_LADDER {
        last = encode_webp(img, q)?;
        if last.len() as u64 <= target_bytes {
            break;
        }
    }
    Ok(last)
}

/// An upload after the pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    pub bytes: Vec<u8>,
    pub format: Format,
    pub width: u32,
    pub height: u32,
    /// Whether the pixels were decoded and encoded again.
    pub reencoded: bool,
}

/// Prepares an image for a gallery (SPEC.md galleries, rules 4 to 6).
pub fn process(bytes: &[u8], limits: &MediaLimits) -> Result<Processed, MediaError> {
    let p = probe(bytes, limits)?;
    let small = p.width.max(p.height) <= limits.downscale_px;
    match p.format {
        Format::Gif => {
            // GIFs pass through untouched: decoding every frame only to
            // re-encode would lose the animation or blow up the size.
            Ok(Processed {
                bytes: bytes.to_vec(),
                format: p.format,
                width: p.width,
                height: p.height,
                reencoded: false,
            })
        }
        Format::Jpeg if small => {
            let stripped = jpeg::strip(bytes)?;
            Ok(Processed {
                bytes: stripped.bytes,
                format: p.format,
                width: p.width,
                height: p.height,
                reencoded: false,
            })
        }
        Format::Png | Format::Webp if small => Ok(Processed {
            bytes: bytes.to_vec(),
            format: p.format,
            width: p.width,
            height: p.height,
            reencoded: false,
        }),
        _ => {
            let img = fit(
                decode_for(bytes, p.format, limits, limits.downscale_px)?,
                limits.downscale_px,
            )?;
            let (width, height) = img.dimensions();
            let out = webp_ladder(&img, limits.target_bytes)?;
            Ok(Processed {
                bytes: out,
                format: Format::Webp,
                width,
                height,
                reencoded: true,
            })
        }
    }
}

/// Thumbnail quality: previews are small, so a lower quality is invisible.
const THUMB_QUALITY: f32 = 80.0;

/// A WebP preview fitting a `box_px` square, never upscaled.
pub fn thumbnail(bytes: &[u8], box_px: u32, limits: &MediaLimits) -> Result<Vec<u8>, MediaError> {
    let mut one = thumbnails(bytes, &[box_px], limits)?;
    Ok(one.pop().expect("one preview per box"))
}

/// WebP previews for several boxes from a single decode (at the scale the
/// largest box needs), in the order of `boxes`. Decoding is most of the
/// cost of a preview, so making every size at once costs little more
/// than making one.
pub fn thumbnails(
    bytes: &[u8],
    boxes: &[u32],
    limits: &MediaLimits,
) -> Result<Vec<Vec<u8>>, MediaError> {
    let Some(&largest) = boxes.iter().max() else {
        return Ok(vec![]);
    };
    let p = probe(bytes, limits)?;
    let base = fit(decode_for(bytes, p.format, limits, largest)?, largest)?;
    boxes
        .iter()
        .map(|&b| encode_webp(&fit(base.clone(), b)?, THUMB_QUALITY))
        .collect()
}
