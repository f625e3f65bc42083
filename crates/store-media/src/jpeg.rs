//! Lossless JPEG metadata stripping: the entropy-coded image is copied
//! byte for byte; only metadata segments go. The EXIF Orientation tag is
//! kept (in a minimal EXIF segment of its own) so photos still display
//! upright.

use crate::MediaError;

const SOI: [u8; 2] = [0xFF, 0xD8];

/// The segments removed: EXIF/XMP (APP1), IPTC/Photoshop (APP13) and
/// comments (COM). APP0 (JFIF), APP2 (ICC colour profile: the colours
/// depend on it), APP14 (Adobe colour transform) and all image segments
/// stay.
fn is_metadata(marker: u8) -> bool {
    matches!(marker, 0xE1 | 0xED | 0xFE)
}

/// The EXIF Orientation (1-8) of an APP1 payload, if it carries one.
pub fn orientation_of(app1: &[u8]) -> Option<u16> {
    let tiff = app1.strip_prefix(b"Exif\0\0")?;
    let le = match tiff.get(..2)? {
        b"II" => true,
        b"MM" => false,
        _ => return None,
    };
    let u16_at = |o: usize| -> Option<u16> {
        let b = tiff.get(o..o + 2)?;
        Some(if le {
            u16::from_le_bytes([b[0], b[1]])
        } else {
            u16::from_be_bytes([b[0], b[1]])
        })
    };
    let u32_at = |o: usize| -> Option<u32> {
        let b = tiff.get(o..o + 4)?;
        let a = [b[0], b[1], b[2], b[3]];
        Some(if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        })
    };
    let ifd = u32_at(4)? as usize;
    let count = usize::from(u16_at(ifd)?);
    for i in 0..count.min(512) {
        let entry = ifd + 2 + i * 12;
        if u16_at(entry)? == 0x0112 {
            let v = u16_at(entry + 8)?;
            return (1..=8).contains(&v).then_some(v);
        }
    }
    None
}

/// A minimal APP1 segment carrying only the Orientation tag.
pub fn orientation_segment(orientation: u16) -> Vec<u8> {
    let mut tiff = Vec::new();
    tiff.extend_from_slice(b"MM\0\x2A\0\0\0\x08"); // big endian, IFD0 at 8
    tiff.extend_from_slice(&1u16.to_be_bytes()); // one entry
    tiff.extend_from_slice(&0x0112u16.to_be_bytes()); // Orientation
    tiff.extend_from_slice(&3u16.to_be_bytes()); // SHORT
    tiff.extend_from_slice(&1u32.to_be_bytes()); // count
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0]); // value padding
    tiff.extend_from_slice(&0u32.to_be_bytes()); // no next IFD
    let mut payload = b"Exif\0\0".to_vec();
    payload.extend_from_slice(&tiff);
    let len = (payload.len() + 2) as u16;
    let mut seg = vec![0xFF, 0xE1];
    seg.extend_from_slice(&len.to_be_bytes());
    seg.extend_from_slice(&payload);
    seg
}

/// What stripping found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped {
    pub bytes: Vec<u8>,
    pub orientation: Option<u16>,
    /// Metadata segments removed.
    pub removed: usize,
}

/// One header segment: its marker and its byte range (marker included).
pub(crate) struct Segment {
    marker: u8,
    start: usize,
    end: usize,
}

/// Walks the header segments up to the start of scan; returns them and
/// where the scan (entropy-coded data to the end) begins.
pub(crate) fn segments(jpeg: &[u8]) -> Result<(Vec<Segment>, usize), MediaError> {
    if !jpeg.starts_with(&SOI) {
        return Err(MediaError::Malformed("not a JPEG"));
    }
    let mut out = Vec::new();
    let mut i = 2;
    loop {
        // Fill bytes (0xFF repeated) may precede a marker.
        while jpeg.get(i) == Some(&0xFF) && jpeg.get(i + 1) == Some(&0xFF) {
            i += 1;
        }
        let (Some(&0xFF), Some(&marker)) = (jpeg.get(i), jpeg.get(i + 1)) else {
            return Err(MediaError::Malformed(
                "truncated JPEG: a segment is missing",
            ));
        };
        if marker == 0xDA {
            if !jpeg[i..].windows(2).any(|w| w == [0xFF, 0xD9]) {
                return Err(MediaError::Malformed(
                    "truncated JPEG: the image data does not end",
                ));
            }
            return Ok((out, i));
        }
        if marker == 0xD9 || (0xD0..=0xD7).contains(&marker) || marker == 0x01 {
            return Err(MediaError::Malformed("JPEG without image data"));
        }
        let len = jpeg
            .get(i + 2..i + 4)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
            .ok_or(MediaError::Malformed(
                "truncated JPEG: a segment length is missing",
            ))?;
        if len < 2 || i + 2 + len > jpeg.len() {
            return Err(MediaError::Malformed(
                "truncated JPEG: a segment runs past the end",
            ));
        }
        out.push(Segment {
            marker,
            start: i,
            end: i + 2 + len,
        });
        i += 2 + len;
    }
}

/// Removes metadata segments, keeping the Orientation, which is written in
/// a minimal EXIF segment right after SOI (and APP0, when there is one),
/// where EXIF readers look for it. Anything that does not parse as a JPEG
/// is an error: nothing half-understood is stored.
pub fn strip(jpeg: &[u8]) -> Result<Stripped, MediaError> {
    let (segs, scan) = segments(jpeg)?;
    let orientation = segs
        .iter()
        .filter(|s| s.marker == 0xE1)
        .find_map(|s| orientation_of(&jpeg[s.start + 4..s.end]));
    let mut out = Vec::with_capacity(jpeg.len());
    out.extend_from_slice(&SOI);
    let mut rest = segs.iter().peekable();
    if let Some(app0) = rest.next_if(|s| s.marker == 0xE0) {
        out.extend_from_slice(&jpeg[app0.start..app0.end]);
    }
    if let Some(o) = orientation {
        out.extend_from_slice(&orientation_segment(o));
    }
    let mut removed = 0;
    for s in rest {
        if is_metadata(s.marker) {
            removed += 1;
        } else {
            out.extend_from_slice(&jpeg[s.start..s.end]);
        }
    }
    // The image ends at the last EOI; bytes after it (phone trailers,
    // padding) are metadata of a kind, and go too.
    let end = jpeg
        .windows(2)
        .rposition(|w| w == [0xFF, 0xD9])
        .map_or(jpeg.len(), |p| p + 2);
    out.extend_from_slice(&jpeg[scan..end.max(scan)]);
    Ok(Stripped {
        bytes: out,
        orientation,
        removed,
    })
}
