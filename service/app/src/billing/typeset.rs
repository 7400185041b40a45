//! A statement's pages as pdf-writer draws them: lines of text down an A4
//! page, a table's rows with right-aligned cells, the page breaks and the
//! page numbers. It is handed text already written and sizes in whole
//! points, and knows nothing of money: positions are binary floats here
//! because pdf-writer takes geometry as `f32` (the one place outside
//! telemetry that has a float, held to it by `tests/tests/no_floats.rs`).

use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

const FONT: Name<'static> = Name(b"F1");
const BOLD: Name<'static> = Name(b"F2");
const WIDTH: f32 = 595.0;
const HEIGHT: f32 = 842.0;
const LEFT: f32 = 56.0;
const RIGHT: f32 = WIDTH - 56.0;
const TOP: f32 = HEIGHT - 56.0;
/// Below this a table does not start: the footer's room.
const BOTTOM: f32 = 90.0;
/// The table's columns: the line's name at the left, then three right
/// edges (orders, amount, fees).
const COLUMNS: [f32; 3] = [330.0, 440.0, RIGHT];
const GREY: f32 = 0.93;
/// Where the footer's line sits.
const FOOTER: f32 = 40.0;

/// One thing drawn on a page.
#[derive(Clone, Debug, PartialEq)]
enum Mark {
    Text {
        x: f32,
        y: f32,
        size: f32,
        bold: bool,
        right: bool,
        text: String,
    },
    Rule {
        y: f32,
    },
    Band {
        y: f32,
        height: f32,
    },
}

/// Pages of marks, laid out top down.
pub struct Layout {
    pages: Vec<Vec<Mark>>,
    y: f32,
}

impl Layout {
    pub fn new() -> Layout {
        Layout {
            pages: vec![Vec::new()],
            y: TOP,
        }
    }

    fn page(&mut self) -> &mut Vec<Mark> {
        if self.pages.is_empty() {
            self.pages.push(Vec::new());
        }
        let last = self.pages.len() - 1;
        &mut self.pages[last]
    }

    /// Starts a new page unless `points` are left on this one.
    pub fn room(&mut self, points: u16) {
        if self.y - f32::from(points) < BOTTOM {
            self.pages.push(Vec::new());
            self.y = TOP;
        }
    }

    /// Moves the cursor `points` down the page.
    pub fn down(&mut self, points: u16) {
        self.y -= f32::from(points);
    }

    fn text(&mut self, x: f32, size: f32, bold: bool, right: bool, text: impl Into<String>) {
        let y = self.y;
        self.page().push(Mark::Text {
            x,
            y,
            size,
            bold,
            right,
            text: text.into(),
        });
    }

    /// A line of text at the left margin in `size` points, and the cursor
    /// below it.
    pub fn line(&mut self, size: u16, bold: bool, text: impl Into<String>) {
        let size = f32::from(size);
        self.text(LEFT, size, bold, false, text);
        self.y -= size * 1.45;
    }

    /// A table row: its name, then the three right-aligned cells; `band`
    /// shades it.
    pub fn row(&mut self, bold: bool, band: bool, cells: [&str; 4]) {
        if band {
            let y = self.y;
            self.page().push(Mark::Band {
                y: y - 5.0,
                height: 17.0,
            });
        }
        self.text(LEFT + 6.0, 10.0, bold, false, cells[0]);
        for (x, cell) in COLUMNS.iter().zip(&cells[1..]) {
            self.text(x - 6.0, 10.0, bold, true, *cell);
        }
        self.y -= 17.0;
    }

    /// A rule above the cursor's row, across the table.
    pub fn rule(&mut self) {
        let y = self.y + 12.0;
        self.page().push(Mark::Rule { y });
    }

    /// Every page's footer: `left` at the left, "Page N of M" at the right.
    pub fn number_pages(&mut self, left: &str) {
        let count = self.pages.len();
        for (i, page) in self.pages.iter_mut().enumerate() {
            page.push(Mark::Text {
                x: LEFT,
                y: FOOTER,
                size: 8.0,
                bold: false,
                right: false,
                text: left.to_string(),
            });
            page.push(Mark::Text {
                x: RIGHT,
                y: FOOTER,
                size: 8.0,
                bold: false,
                right: true,
                text: format!("Page {} of {count}", i + 1),
            });
        }
    }

    /// The text, page by page, in the order it is drawn.
    pub fn text_of(&self) -> Vec<Vec<String>> {
        self.pages
            .iter()
            .map(|page| {
                page.iter()
                    .filter_map(|m| match m {
                        Mark::Text { text, .. } => Some(text.clone()),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    }

    /// The PDF, titled `title`. Nothing in it depends on the moment it is
    /// written, so the same layout renders to the same bytes.
    pub fn render(&self, title: &str) -> Vec<u8> {
        let pages = &self.pages;
        let mut pdf = Pdf::new();
        let (catalog, tree, font, bold, info) = (
            Ref::new(1),
            Ref::new(2),
            Ref::new(3),
            Ref::new(4),
            Ref::new(5),
        );
        let page_ids: Vec<Ref> = (0..pages.len())
            .map(|i| Ref::new(6 + 2 * i32::try_from(i).unwrap_or(0)))
            .collect();
        pdf.catalog(catalog).pages(tree);
        pdf.pages(tree)
            .kids(page_ids.iter().copied())
            .count(i32::try_from(page_ids.len()).unwrap_or(1));
        pdf.type1_font(font).base_font(Name(b"Helvetica"));
        pdf.type1_font(bold).base_font(Name(b"Helvetica-Bold"));
        pdf.document_info(info)
            .title(TextStr(title))
            .producer(TextStr("payments-service"));
        for (marks, id) in pages.iter().zip(&page_ids) {
            let content_id = Ref::new(id.get() + 1);
            let mut page = pdf.page(*id);
            page.media_box(Rect::new(0.0, 0.0, WIDTH, HEIGHT));
            page.parent(tree);
            page.contents(content_id);
            page.resources().fonts().pair(FONT, font).pair(BOLD, bold);
            page.finish();
            let mut content = Content::new();
            for mark in marks {
                draw(&mut content, mark);
            }
            pdf.stream(content_id, &content.finish());
        }
        pdf.finish()
    }
}

impl Default for Layout {
    fn default() -> Layout {
        Layout::new()
    }
}
fn draw(content: &mut Content, mark: &Mark) {
    match mark {
        Mark::Text {
            x,
            y,
            size,
            bold,
            right,
            text,
        } => {
            let bytes = latin(text);
            let x = match right {
                true => x - width(&bytes, *bold) * size / 1000.0,
                false => *x,
            };
            content.begin_text();
            content.set_font(if *bold { BOLD } else { FONT }, *size);
            content.next_line(x, *y);
            content.show(Str(&bytes));
            content.end_text();
        }
        Mark::Rule { y } => {
            content.set_line_width(0.6);
            content.move_to(LEFT, *y);
            content.line_to(RIGHT, *y);
            content.stroke();
        }
        Mark::Band { y, height } => {
            content.save_state();
            content.set_fill_gray(GREY);
            content.rect(LEFT, *y, RIGHT - LEFT, *height);
            content.fill_nonzero();
            content.restore_state();
        }
    }
}

/// A text's advance in Helvetica's thousandths of an em (the fonts' AFM
/// widths for what amounts and labels use; other letters at an average),
/// so that a column of amounts lines up at its right edge.
fn width(text: &[u8], bold: bool) -> f32 {
    text.iter()
        .map(|c| match (c, bold) {
            (b'0'..=b'9', _) => 556,
            (b',' | b'.' | b' ', _) => 278,
            (b'-', false) => 333,
            (b'-', true) => 333,
            (b'%', _) => 889,
            (b'A'..=b'Z', false) => 667,
            (b'A'..=b'Z', true) => 722,
            (b'i' | b'l' | b'j', false) => 222,
            (b'i' | b'l' | b'j', true) => 278,
            (b'f' | b't' | b'r', _) => 333,
            (b'm', _) => 833,
            (b'w', false) => 722,
            (b'w', true) => 778,
            (_, false) => 556,
            (_, true) => 611,
        })
        .sum::<u32>() as f32
}

/// The text in the fonts' standard encoding: ASCII as is, anything else
/// as `?` (a merchant's name in another script; the API has it whole).
fn latin(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c as u8
            } else {
                b'?'
            }
        })
        .collect()
}
