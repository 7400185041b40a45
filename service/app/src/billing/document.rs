//! A statement's PDF, written with `pdf-writer` (typst's maintained PDF
//! writer): one A4 page per up to six currencies, Helvetica (one of the 14
//! fonts every reader has, so nothing is embedded). Amounts are the
//! ledger's decimal strings, as the API answers them.

use crate::domain::billing::{rfc3339, CurrencyTotals};
use crate::domain::money::from_units;
use pdf_writer::{Content, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

/// What the page says about the statement around its totals.
///
/// Font sizes are whole points here; pdf-writer takes geometry as binary
/// floats, which only positions and sizes become (every amount is text by
/// then, `from_units`' decimal string).
pub struct Heading<'a> {
    pub number: &'a str,
    pub version: i32,
    pub supersedes: Option<&'a str>,
    pub merchant_name: &'a str,
    pub merchant_id: &'a str,
    pub period_start: i64,
    pub period_end: i64,
    pub issued_at: i64,
}

const PER_PAGE: usize = 6;
const FONT: Name<'static> = Name(b"F1");
const BOLD: Name<'static> = Name(b"F2");

/// The lines of text of the document, in order, as (size, bold, text):
/// what the page shows and what a test reads back out of it.
pub fn lines(h: &Heading<'_>, totals: &[CurrencyTotals]) -> Vec<Vec<(u8, bool, String)>> {
    let mut head = vec![
        (18, true, "Billing statement".to_string()),
        (11, true, format!("Number: {}", h.number)),
        (
            11,
            false,
            format!("Merchant: {} ({})", h.merchant_name, h.merchant_id),
        ),
        (
            11,
            false,
            format!(
                "Period: {} to {} (UTC; start inclusive, end exclusive)",
                rfc3339(h.period_start),
                rfc3339(h.period_end)
            ),
        ),
        (11, false, format!("Issued at: {}", rfc3339(h.issued_at))),
        (11, false, format!("Version: {}", h.version)),
    ];
    if let Some(old) = h.supersedes {
        head.push((11, false, format!("Supersedes: {old}")));
    }
    if totals.is_empty() {
        head.push((11, false, "No fees were charged in this period.".into()));
        return vec![head];
    }
    let mut pages = Vec::new();
    for (i, chunk) in totals.chunks(PER_PAGE).enumerate() {
        let mut page = if i == 0 { head.clone() } else { Vec::new() };
        for t in chunk {
            page.push((13, true, format!("Currency {}", t.currency)));
            page.push((
                11,
                false,
                format!(
                    "Deposits: {} completed, amount {}",
                    t.deposit_count,
                    from_units(t.deposit_amount)
                ),
            ));
            page.push((
                11,
                false,
                format!("Deposit fees: {}", from_units(t.deposit_fees)),
            ));
            page.push((
                11,
                false,
                format!(
                    "Withdrawals: {} completed, amount {}",
                    t.withdrawal_count,
                    from_units(t.withdrawal_amount)
                ),
            ));
            page.push((
                11,
                false,
                format!("Withdrawal fees: {}", from_units(t.withdrawal_fees)),
            ));
            page.push((
                11,
                true,
                format!("Total fees: {} {}", from_units(t.total_fees), t.currency),
            ));
        }
        pages.push(page);
    }
    pages
}

/// The PDF. Nothing in it depends on the moment it is written, so the
/// same statement renders to the same bytes.
pub fn render(h: &Heading<'_>, totals: &[CurrencyTotals]) -> Vec<u8> {
    let pages = lines(h, totals);
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
    let title = format!("Billing statement {}", h.number);
    pdf.document_info(info)
        .title(TextStr(&title))
        .producer(TextStr("payments-service"));
    for (page_lines, id) in pages.iter().zip(&page_ids) {
        let content_id = Ref::new(id.get() + 1);
        let mut page = pdf.page(*id);
        page.media_box(Rect::new(0.0, 0.0, 595.0, 842.0));
        page.parent(tree);
        page.contents(content_id);
        page.resources().fonts().pair(FONT, font).pair(BOLD, bold);
        page.finish();
        let mut content = Content::new();
        let mut y = 790.0;
        for (size, strong, text) in page_lines {
            if *size > 12 && y < 780.0 {
                y -= 10.0;
            }
            let points = (*size).into();
            content.begin_text();
            content.set_font(if *strong { BOLD } else { FONT }, points);
            content.next_line(56.0, y);
            content.show(Str(&latin(text)));
            content.end_text();
            y -= points * 1.6;
        }
        pdf.stream(content_id, &content.finish());
    }
    pdf.finish()
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

/// The document's fingerprint as a statement records it: lowercase hex
/// SHA-256.
pub fn sha256_hex(pdf: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(pdf))
}
