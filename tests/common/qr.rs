//! Reading QR codes back in the tests, with the `rqrr` decoder: from the
//! SVG the server draws (its rectangles painted into a bitmap), from the
//! text blocks it prints for a terminal, and from a browser's screenshot.

#![allow(dead_code)] // Each test binary reads the codes it draws.

/// Every code found in a greyscale picture (0 is black, 255 white).
pub fn decode(width: usize, height: usize, pixel: impl FnMut(usize, usize) -> u8) -> Vec<String> {
    let mut img = rqrr::PreparedImage::prepare_from_greyscale(width, height, pixel);
    img.detect_grids()
        .into_iter()
        .filter_map(|g| g.decode().ok().map(|(_, content)| content))
        .collect()
}

/// The codes in a PNG (a screenshot).
pub fn decode_png(png: &[u8]) -> Vec<String> {
    let img = image::load_from_memory_with_format(png, image::ImageFormat::Png)
        .expect("a PNG")
        .to_luma8();
    let (w, h) = (img.width() as usize, img.height() as usize);
    decode(w, h, |x, y| img.get_pixel(x as u32, y as u32).0[0])
}

/// The number after `name="` in the SVG's root element.
fn svg_attr(svg: &str, name: &str) -> usize {
    let start = svg.find(&format!(" {name}=\"")).expect("attribute") + name.len() + 3;
    let len = svg[start..].find('"').expect("closing quote");
    svg[start..start + len].parse().expect("a number")
}

/// The codes in the server's SVG: a white background and one black path
/// of rectangles, `M{x} {y}h{w}v{h}H{x}V{y}` each.
pub fn decode_svg(svg: &str) -> Vec<String> {
    let (w, h) = (svg_attr(svg, "width"), svg_attr(svg, "height"));
    let mut dark = vec![false; w * h];
    let d_at = svg.find(" d=\"").expect("a path") + 4;
    let d = &svg[d_at..d_at + svg[d_at..].find('"').expect("path end")];
    for rect in d.split('M').filter(|r| !r.is_empty()) {
        let nums: Vec<usize> = rect
            .split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .map(|n| n.parse().unwrap())
            .collect();
        let (x, y, rw, rh) = (nums[0], nums[1], nums[2], nums[3]);
        for yy in y..(y + rh).min(h) {
            for xx in x..(x + rw).min(w) {
                dark[yy * w + xx] = true;
            }
        }
    }
    decode(w, h, |x, y| if dark[y * w + x] { 0 } else { 255 })
}

/// The codes in the terminal text: two modules a character, upper and
/// lower half; a block is a light module (the code is drawn for light
/// text on a dark terminal). Each module becomes four pixels square.
pub fn decode_text(text: &str) -> Vec<String> {
    const SCALE: usize = 4;
    let rows: Vec<Vec<char>> = text.lines().map(|l| l.chars().collect()).collect();
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let light = |mx: usize, my: usize| -> bool {
        let c = rows
            .get(my / 2)
            .and_then(|r| r.get(mx))
            .copied()
            .unwrap_or(' ');
        matches!((c, my % 2), ('█', _) | ('▀', 0) | ('▄', 1))
    };
    let (w, h) = (cols * SCALE, rows.len() * 2 * SCALE);
    decode(
        w,
        h,
        |x, y| if light(x / SCALE, y / SCALE) { 255 } else { 0 },
    )
}
