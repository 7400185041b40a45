//! An order's timeline as a page shows it: one list, oldest first, each
//! moment with its time, what happened and what it moved. The console
//! shows who approved and why an attempt failed; an owner reads the kind
//! of failure only (the detail may name an internal address) and that an
//! approval was given, not by whom.

use super::when;
use crate::app::timeline::{Entry, Moment};
use crate::app::App;
use crate::channels::egress::coarse;
use maud::{html, Markup};

/// Who reads the timeline.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    Operator,
    Owner,
}

/// `deposit.completed` as a person reads it: `Deposit completed`.
fn said(event: &str) -> String {
    let words = event.replace(['.', '_'], " ");
    let mut chars = words.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// An amount in the currency's digits, grouped: `1,000.00`.
fn plain(app: &App, currency: &str, amount: rust_decimal::Decimal) -> String {
    let digits = app
        .config
        .currency(currency)
        .map_or(4, |c| c.fraction_digits);
    crate::domain::money::grouped(amount, digits)
}

/// The same with its sign: `+1,000.00`.
fn signed(app: &App, currency: &str, amount: rust_decimal::Decimal) -> String {
    let shown = plain(app, currency, amount);
    match amount > rust_decimal::Decimal::ZERO {
        true => format!("+{shown}"),
        false => shown,
    }
}

/// What one moment says: its heading and its detail (empty when none).
fn line(app: &App, reader: Reader, moment: &Moment) -> (String, String) {
    match moment {
        Moment::Created => ("Order made".into(), String::new()),
        Moment::State { event } => (said(event), String::new()),
        Moment::Balance {
            currency,
            kind,
            available,
            frozen,
            fee,
            available_after,
            frozen_after,
        } => (
            format!("Balance {currency} ({})", said(kind)),
            format!(
                "available {}, frozen {}, fee {}; then {} available, {} frozen",
                signed(app, currency, *available),
                signed(app, currency, *frozen),
                signed(app, currency, *fee),
                plain(app, currency, *available_after),
                plain(app, currency, *frozen_after),
            ),
        ),
        Moment::Approval { approver, remarks } => match reader {
            Reader::Operator => (
                format!("Approved by {approver}"),
                remarks.clone().unwrap_or_default(),
            ),
            Reader::Owner => ("Approved".into(), String::new()),
        },
        Moment::Callback {
            event, status, url, ..
        } => (
            format!("Callback {event} queued"),
            format!("to {url} (now {status})"),
        ),
        Moment::Attempt {
            attempt,
            status_code,
            error,
            ..
        } => {
            let answer = match (status_code, error, reader) {
                (Some(code), _, _) => format!("answered {code}"),
                (None, Some(e), Reader::Operator) => format!("no answer: {e}"),
                (None, Some(e), Reader::Owner) => format!("no answer: {}", coarse(e)),
                (None, None, _) => "no answer".into(),
            };
            (format!("Attempt {attempt}"), answer)
        }
    }
}

/// When an order view (the API's JSON) says it was made: its `created_at`.
pub fn made_at(order: &serde_json::Value) -> Option<i64> {
    let text = order["created_at"].as_str()?;
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.timestamp())
}

/// The timeline as an ordered list, or a sentence when there is nothing.
pub fn render(app: &App, reader: Reader, entries: &[Entry]) -> Markup {
    if entries.is_empty() {
        return html! { p { "Nothing has happened to this order yet." } };
    }
    html! {
        ol.timeline #timeline {
            @for e in entries {
                @let (what, detail) = line(app, reader, &e.moment);
                li {
                    time datetime=(stamp(e.at)) { (when(e.at)) }
                    " "
                    strong { (what) }
                    @if !detail.is_empty() {
                        " "
                        span.detail { (detail) }
                    }
                }
            }
        }
    }
}

/// A moment as the `datetime` of its `time` element.
fn stamp(at: i64) -> String {
    chrono::DateTime::from_timestamp(at, 0)
        .map(|d| d.to_rfc3339())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn events_read_as_words() {
        assert_eq!(super::said("deposit.completed"), "Deposit completed");
        assert_eq!(super::said("withdrawal_fee"), "Withdrawal fee");
        assert_eq!(super::said(""), "");
    }
}
