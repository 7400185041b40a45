//! The approvers' queue's filters: merchant (by code), currency, an amount
//! at least, an age at least. Read from the page's query, each refused with
//! a field error when it is not one the form offers.

use crate::app::listings::Listing;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::money::to_units;
use crate::pages::web::{age_select, given};
use maud::{html, Markup};
use rust_decimal::Decimal;
use std::collections::HashMap;
use std::str::FromStr;

/// The ages the form offers: (value, label, seconds).
const AGES: [(&str, &str, i64); 4] = [
    ("15m", "15 minutes", 15 * 60),
    ("1h", "an hour", 3600),
    ("4h", "4 hours", 4 * 3600),
    ("24h", "a day", 86_400),
];

/// The pending withdrawals the query asks for, oldest first; `None` when
/// it names a merchant code that no merchant has.
pub(super) async fn pending(
    app: &App,
    fields: &HashMap<String, String>,
) -> Result<Option<Listing>, ApiError> {
    let mut listing = Listing {
        limit: Some(25),
        cursor: given(fields, "cursor"),
        status: Some("pending".into()),
        oldest_first: true,
        ..Listing::default()
    };
    if let Some(code) = given(fields, "merchant") {
        match merchant_of_code(app, &code).await? {
            Some(id) => listing.merchant_id = Some(id),
            None => return Ok(None),
        }
    }
    if let Some(currency) = given(fields, "currency") {
        app.config.currency(&currency)?;
        listing.currency = Some(currency);
    }
    if let Some(text) = given(fields, "min_amount") {
        let invalid = || ApiError::invalid_field("min_amount", "must be a decimal number");
        // Read exactly, never through a float: digits and one point.
        if !text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return Err(invalid());
        }
        let amount = Decimal::from_str(&text).map_err(|_| invalid())?;
        listing.min_amount = Some(to_units(amount).ok_or_else(invalid)?);
    }
    if let Some(age) = given(fields, "older_than") {
        let (_, _, seconds) = AGES
            .iter()
            .find(|(v, _, _)| *v == age)
            .ok_or_else(|| ApiError::invalid_field("older_than", "must be 15m, 1h, 4h or 24h"))?;
        listing.created_to = Some(app.now_unix() - seconds);
    }
    Ok(Some(listing))
}

/// The id of the merchant whose code is `code`, if one is.
pub(super) async fn merchant_of_code(app: &App, code: &str) -> Result<Option<String>, ApiError> {
    Ok(crate::app::merchants::find_by_code(app, code)
        .await?
        .map(|m| m.id))
}

/// Whether the query filters at all.
pub(super) fn any(fields: &HashMap<String, String>) -> bool {
    ["merchant", "currency", "min_amount", "older_than"]
        .iter()
        .any(|k| given(fields, k).is_some())
}

/// The filter form, holding what the query asked.
pub(super) fn form(app: &App, fields: &HashMap<String, String>) -> Markup {
    let value = |name: &str| given(fields, name).unwrap_or_default();
    let chosen = value("currency");
    let age = value("older_than");
    html! {
        form.inline method="get" action="/console/withdrawals" {
            div {
                label for="f-merchant" { "Merchant code" }
                input type="text" id="f-merchant" name="merchant" maxlength="64" value=(value("merchant"));
            }
            div {
                label for="f-currency" { "Currency" }
                select id="f-currency" name="currency" {
                    option value="" { "Any" }
                    @for code in app.config.currencies.keys() {
                        option selected[*code == chosen] { (code) }
                    }
                }
            }
            div {
                label for="f-min" { "Amount at least" }
                input type="text" id="f-min" name="min_amount" inputmode="decimal" maxlength="24" value=(value("min_amount"));
            }
            (age_select(("f-age", "older_than", "Waiting at least"), "Any age", &AGES, &age))
            button type="submit" class="secondary" { "Filter" }
        }
    }
}
