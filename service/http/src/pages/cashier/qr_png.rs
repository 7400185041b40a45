//! A QR code as a PNG: what a payer's long-press saves and a bank app's
//! "scan from gallery" reads (an SVG saved from a page is neither). Written
//! with the `png` crate over the code's own modules, no image library.
//!
//! The code stands in a Thai QR Payment frame: a navy band over it that
//! says THAI QR PAYMENT and a navy border, so that a saved picture says
//! what it is. The frame lies outside the code's quiet zone, which a
//! reader needs white; the band's letters are a 5 × 7 bitmap of their own
//! (eleven capitals), since a font renderer is far more than this needs.

/// Pixels per module; with the quiet zone a PromptPay code is about 300 px.
const SCALE: usize = 6;
/// Modules of white around the code, as the standard asks.
const QUIET: usize = 4;
/// The frame's navy (Thai QR Payment's).
const NAVY: [u8; 3] = [14, 61, 103];
const WHITE: [u8; 3] = [255, 255, 255];
/// The border's width around the quiet zone, in pixels.
const BORDER: usize = 6;
const CAPTION: &str = "THAI QR PAYMENT";

/// A capital of the caption as seven rows of five pixels.
fn glyph(c: char) -> [&'static str; 7] {
    match c {
        'T' => [
            "#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#..",
        ],
        'H' => [
            "#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#",
        ],
        'A' => [
            ".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#",
        ],
        'I' => [
            "#####", "..#..", "..#..", "..#..", "..#..", "..#..", "#####",
        ],
        'Q' => [
            ".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#",
        ],
        'R' => [
            "####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#",
        ],
        'P' => [
            "####.", "#...#", "#...#", "####.", "#....", "#....", "#....",
        ],
        'Y' => [
            "#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#..",
        ],
        'M' => [
            "#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#",
        ],
        'E' => [
            "#####", "#....", "#....", "####.", "#....", "#....", "#####",
        ],
        'N' => [
            "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#", "#...#",
        ],
        _ => ["....."; 7],
    }
}

/// An RGB canvas.
struct Canvas {
    width: usize,
    pixels: Vec<u8>,
}

impl Canvas {
    fn fill(&mut self, x: usize, y: usize, w: usize, h: usize, color: [u8; 3]) {
        for row in y..y + h {
            for col in x..x + w {
                let at = (row * self.width + col) * 3;
                self.pixels[at..at + 3].copy_from_slice(&color);
            }
        }
    }
}

/// A framed code's picture and its size in pixels.
pub struct Framed {
    pub png: Vec<u8>,
    pub width: usize,
    pub height: usize,
}

/// The code, framed, as an 8-bit RGB PNG.
pub fn png(code: &qrcode::QrCode) -> Result<Framed, String> {
    let modules = code.width();
    let colors = code.to_colors();
    let side = (modules + 2 * QUIET) * SCALE;
    // The caption's pixel size: as large as fits the band, at most 4.
    let dot = ((side - 2 * BORDER) / (CAPTION.len() * 6)).clamp(1, 4);
    let band = 7 * dot + 2 * 3 * dot;
    let (width, height) = (side + 2 * BORDER, band + side + BORDER);
    let mut canvas = Canvas {
        width,
        pixels: vec![255u8; width * height * 3],
    };
    canvas.fill(0, 0, width, height, NAVY);
    canvas.fill(BORDER, band, side, side, WHITE);
    let text_width = CAPTION.len() * 6 * dot - dot;
    let left = (width - text_width) / 2;
    for (i, c) in CAPTION.chars().enumerate() {
        for (row, line) in glyph(c).iter().enumerate() {
            for (col, bit) in line.bytes().enumerate() {
                if bit == b'#' {
                    let x = left + (i * 6 + col) * dot;
                    canvas.fill(x, 3 * dot + row * dot, dot, dot, WHITE);
                }
            }
        }
    }
    for (i, color) in colors.iter().enumerate() {
        if *color == qrcode::Color::Dark {
            let (mx, my) = (i % modules + QUIET, i / modules + QUIET);
            canvas.fill(BORDER + mx * SCALE, band + my * SCALE, SCALE, SCALE, [0; 3]);
        }
    }
    let mut out = Vec::new();
    // At most 177 modules a side: always a u32.
    let (w, h) = (
        u32::try_from(width).map_err(|e| e.to_string())?,
        u32::try_from(height).map_err(|e| e.to_string())?,
    );
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let written = encoder.write_header().and_then(|mut writer| {
        writer.write_image_data(&canvas.pixels)?;
        writer.finish()
    });
    written.map_err(|e| e.to_string())?;
    Ok(Framed {
        png: out,
        width,
        height,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_png_is_the_framed_code() {
        let code = qrcode::QrCode::new(b"00020101021129370016A000000677010111").unwrap();
        let framed = super::png(&code).unwrap();
        let bytes = framed.png;
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let side = (code.width() + 2 * super::QUIET) * super::SCALE;
        let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
        assert_eq!(width as usize, side + 2 * super::BORDER);
        assert!(
            height as usize > side + super::BORDER,
            "a band over the code"
        );
        assert_eq!(
            (framed.width, framed.height),
            (width as usize, height as usize)
        );
        for c in super::CAPTION.chars().filter(|c| *c != ' ') {
            assert_ne!(super::glyph(c), ["....."; 7], "{c} is drawn");
        }
    }
}
