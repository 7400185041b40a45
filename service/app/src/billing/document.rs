//! A statement's PDF, written with `pdf-writer` (typst's maintained PDF
//! writer): an A4 document an accounting department can file. The issuer
//! with its address and tax number, the merchant billed, one table per
//! currency with the tax on fees where the configuration sets a rate, and
//! "page N of M" on every page. Helvetica (one of the 14 fonts every reader
//! has, so nothing is embedded).
//!
//! Amounts are the ledger's decimals, grouped and printed with at least the
//! currency's digits (`money::grouped`): every digit the ledger has is
//! shown. What this file hands the page (`typeset`) is text and whole
//! points; no amount is ever a binary float.

use super::typeset::Layout;
use crate::domain::billing::CurrencyTotals;
use crate::domain::money::{from_units, grouped};
use chrono::{DateTime, Utc};
use rust_decimal::{Decimal, RoundingStrategy};

/// A legal person as the statement names it.
pub struct Party<'a> {
    pub legal_name: &'a str,
    pub address: &'a [String],
    pub tax_number: Option<&'a str>,
}

/// What the page says about the statement around its tables.
pub struct Heading<'a> {
    pub number: &'a str,
    pub version: i32,
    pub supersedes: Option<&'a str>,
    /// The platform; `None` where the deployment has not configured it.
    pub issuer: Option<Party<'a>>,
    pub bill_to: Party<'a>,
    pub merchant_code: &'a str,
    pub merchant_id: &'a str,
    pub period_start: i64,
    pub period_end: i64,
    pub issued_at: i64,
}

/// A tax charged on the fees.
#[derive(Clone, Copy)]
pub struct Tax<'a> {
    pub name: &'a str,
    pub rate_percent: Decimal,
}

/// One currency's table.
pub struct Charges<'a> {
    pub totals: &'a CurrencyTotals,
    /// The currency's fraction digits: what amounts are printed with, and
    /// what the tax is rounded to.
    pub digits: u32,
    pub tax: Option<Tax<'a>>,
}

impl Charges<'_> {
    /// The tax on the period's fees, rounded half away from zero to the
    /// currency's digits (as Thai and Bangladeshi VAT invoices round).
    pub fn tax_amount(&self) -> Option<Decimal> {
        let tax = self.tax?;
        let fees = from_units(self.totals.total_fees);
        Some(
            (fees * tax.rate_percent / Decimal::ONE_HUNDRED)
                .round_dp_with_strategy(self.digits, RoundingStrategy::MidpointAwayFromZero),
        )
    }

    /// The fees and their tax: what the merchant owes for the period.
    pub fn total_due(&self) -> Decimal {
        from_units(self.totals.total_fees) + self.tax_amount().unwrap_or(Decimal::ZERO)
    }
}

/// A day as a person reads it: `1 November 2026`.
fn day(at: i64) -> String {
    DateTime::<Utc>::from_timestamp(at, 0)
        .map(|t| t.format("%-d %B %Y").to_string())
        .unwrap_or_default()
}

fn party(l: &mut Layout, label: &str, p: &Party<'_>, extra: Option<String>) {
    l.line(9, true, label.to_uppercase());
    l.line(11, true, p.legal_name);
    for line in p.address {
        l.line(10, false, line.as_str());
    }
    if let Some(n) = p.tax_number {
        l.line(10, false, format!("Tax ID: {n}"));
    }
    if let Some(extra) = extra {
        l.line(10, false, extra);
    }
}

fn heading(l: &mut Layout, h: &Heading<'_>) {
    match &h.issuer {
        Some(issuer) => party(l, "Issued by", issuer, None),
        None => {
            l.line(9, true, "ISSUED BY");
            l.line(
                11,
                true,
                "(the platform's legal details are not configured)",
            );
        }
    }
    l.down(22);
    l.line(20, true, "Billing statement");
    l.down(4);
    l.line(10, true, format!("Statement no. {}", h.number));
    l.line(
        10,
        false,
        format!(
            "Period: {} to {} (UTC)",
            day(h.period_start),
            day(h.period_end - 1)
        ),
    );
    l.line(10, false, format!("Date of issue: {}", day(h.issued_at)));
    match h.supersedes {
        Some(old) => l.line(
            10,
            false,
            format!("Version {}; replaces statement no. {old}", h.version),
        ),
        None => l.line(10, false, format!("Version {}", h.version)),
    }
    l.down(8);
    party(
        l,
        "Bill to",
        &h.bill_to,
        Some(format!(
            "Merchant code {} (id {})",
            h.merchant_code, h.merchant_id
        )),
    );
    l.down(10);
}

fn table(l: &mut Layout, c: &Charges<'_>) {
    let t = c.totals;
    let money = |units: i64| grouped(from_units(units), c.digits);
    l.room(160);
    l.line(13, true, format!("Fees in {}", t.currency));
    l.down(2);
    l.row(true, true, ["", "Orders", "Amount", "Fees"]);
    l.row(
        false,
        false,
        [
            "Deposits completed",
            &t.deposit_count.to_string(),
            &money(t.deposit_amount),
            &money(t.deposit_fees),
        ],
    );
    l.row(
        false,
        false,
        [
            "Withdrawals completed",
            &t.withdrawal_count.to_string(),
            &money(t.withdrawal_amount),
            &money(t.withdrawal_fees),
        ],
    );
    l.rule();
    l.row(false, false, ["Fees", "", "", &money(t.total_fees)]);
    if let (Some(tax), Some(amount)) = (c.tax, c.tax_amount()) {
        let label = format!("{} {}% on fees", tax.name, tax.rate_percent.normalize());
        l.row(false, false, [&label, "", "", &grouped(amount, c.digits)]);
    }
    let due = format!("{} {}", t.currency, grouped(c.total_due(), c.digits));
    l.row(true, true, ["Total due", "", "", &due]);
    l.down(14);
}

/// Every page's text, the footer with its page number included.
fn layout(h: &Heading<'_>, charges: &[Charges<'_>]) -> Layout {
    let mut l = Layout::new();
    heading(&mut l, h);
    if charges.is_empty() {
        l.line(11, false, "No fees were charged in this period.");
    }
    for c in charges {
        table(&mut l, c);
    }
    l.room(40);
    l.line(
        8,
        false,
        "Amounts are the ledger's, to the last digit it holds; tax is rounded to the currency's digits.",
    );
    l.number_pages(&format!("Statement no. {}", h.number));
    l
}

/// The document's text, page by page, in the order it is drawn: what a
/// test reads back without a PDF reader.
pub fn text(h: &Heading<'_>, charges: &[Charges<'_>]) -> Vec<Vec<String>> {
    layout(h, charges).text_of()
}

/// The PDF. Nothing in it depends on the moment it is written, so the
/// same statement renders to the same bytes.
pub fn render(h: &Heading<'_>, charges: &[Charges<'_>]) -> Vec<u8> {
    layout(h, charges).render(&format!("Billing statement {}", h.number))
}

/// The document's fingerprint as a statement records it: lowercase hex
/// SHA-256.
pub fn sha256_hex(pdf: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(pdf))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(currency: &str, fees: i64) -> CurrencyTotals {
        CurrencyTotals {
            currency: currency.into(),
            deposit_count: 3,
            deposit_amount: 1_013_345_600,
            deposit_fees: fees,
            withdrawal_count: 0,
            withdrawal_amount: 0,
            withdrawal_fees: 0,
            total_fees: fees,
        }
    }

    #[test]
    fn the_tax_is_the_rate_of_the_fees_rounded_half_away_from_zero() {
        let t = totals("THB", 25_366_900); // 2,536.69
        let vat = Tax {
            name: "VAT",
            rate_percent: Decimal::from(7),
        };
        let c = Charges {
            totals: &t,
            digits: 2,
            tax: Some(vat),
        };
        // 2536.69 × 7 % = 177.5683 → 177.57.
        assert_eq!(c.tax_amount(), Some("177.57".parse().unwrap()));
        assert_eq!(c.total_due(), "2714.26".parse::<Decimal>().unwrap());
        let half = totals("THB", 50_000); // 5.00 × 7 % = 0.35 exactly
        let c = Charges {
            totals: &half,
            digits: 1,
            tax: Some(vat),
        };
        assert_eq!(c.tax_amount(), Some("0.4".parse().unwrap()), "0.35 → 0.4");
        let untaxed = Charges {
            totals: &t,
            digits: 2,
            tax: None,
        };
        assert_eq!(untaxed.tax_amount(), None);
        assert_eq!(untaxed.total_due(), "2536.69".parse::<Decimal>().unwrap());
    }

    #[test]
    fn many_currencies_run_over_pages_each_numbered_of_the_whole() {
        let address = vec!["1 Road".to_string()];
        let h = Heading {
            number: "BS-20261101-m-1",
            version: 1,
            supersedes: None,
            issuer: Some(Party {
                legal_name: "Issuer Co.",
                address: &address,
                tax_number: Some("0105599999999"),
            }),
            bill_to: Party {
                legal_name: "Shop Ltd.",
                address: &[],
                tax_number: None,
            },
            merchant_code: "shop",
            merchant_id: "m",
            period_start: 1_793_491_200,
            period_end: 1_796_083_200,
            issued_at: 1_796_169_600,
        };
        let all: Vec<CurrencyTotals> = (0..9).map(|i| totals(&format!("C{i}"), 10_000)).collect();
        let charges: Vec<Charges<'_>> = all
            .iter()
            .map(|t| Charges {
                totals: t,
                digits: 2,
                tax: None,
            })
            .collect();
        let pages = text(&h, &charges);
        assert!(pages.len() > 1, "{} pages", pages.len());
        for (i, page) in pages.iter().enumerate() {
            let footer = format!("Page {} of {}", i + 1, pages.len());
            assert!(page.contains(&footer), "{footer} on {page:?}");
        }
        let tables: usize = pages
            .iter()
            .map(|p| p.iter().filter(|t| t.starts_with("Fees in ")).count())
            .sum();
        assert_eq!(tables, 9, "every currency once");
        assert!(
            pages[0].contains(&"Period: 1 November 2026 to 30 November 2026 (UTC)".to_string()),
            "{:?}",
            pages[0]
        );
    }
}
