//! The routing tables in force, each channel's health, and a change filed
//! from the console: one admin proposes a table (one line per candidate),
//! a second approves it under Change requests, as every setting that
//! decides where money goes.

use super::queues::back;
use super::{acting, SECTIONS};
use crate::app::change_requests::{self, Change};
use crate::app::routing::{self, NewTable, Source, Table};
use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::domain::routing::health::Circuit;
use crate::domain::routing::table::{Candidate, RoutedDirection};
use crate::pages::web::guard::{page, post, Reply};
use crate::pages::web::{csrf_field, given, notice, table, when};
use dropshot::{endpoint, Body, HttpError, RequestContext, UntypedBody};
use maud::{html, Markup};
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::sync::Arc;

const PAGE: &str = "/console/routing";

/// A candidate as one line of the form: `CODE weight [min=A] [max=A]
/// [per_order=A] [daily=A] [disabled]`.
fn line(c: &Candidate) -> String {
    let mut words = vec![c.channel.clone(), c.weight.to_string()];
    for (name, value) in [
        ("min", c.min_amount),
        ("max", c.max_amount),
        ("per_order", c.per_order_limit),
        ("daily", c.daily_limit),
    ] {
        if let Some(v) = value {
            words.push(format!("{name}={v}"));
        }
    }
    if !c.enabled {
        words.push("disabled".into());
    }
    words.join(" ")
}

/// The form's lines read back; each mistake named with its line.
fn candidates(text: &str) -> Result<Vec<Candidate>, ApiError> {
    let bad =
        |n: usize, why: String| ApiError::invalid_field("candidates", format!("line {n}: {why}"));
    let mut out = Vec::new();
    for (i, raw) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let n = i + 1;
        let mut words = raw.split_whitespace();
        let channel = words.next().unwrap_or_default().to_string();
        let mut c = Candidate::plain(&channel, 100);
        if let Some(w) = words.next() {
            c.weight = w
                .parse()
                .map_err(|_| bad(n, format!("weight `{w}` is not a whole number")))?;
        }
        for word in words {
            if word == "disabled" {
                c.enabled = false;
                continue;
            }
            let (name, value) = word
                .split_once('=')
                .ok_or_else(|| bad(n, format!("`{word}` is not name=amount or `disabled`")))?;
            let amount: Decimal = value
                .parse()
                .map_err(|_| bad(n, format!("`{value}` is not an amount")))?;
            match name {
                "min" => c.min_amount = Some(amount),
                "max" => c.max_amount = Some(amount),
                "per_order" => c.per_order_limit = Some(amount),
                "daily" => c.daily_limit = Some(amount),
                other => {
                    return Err(bad(
                        n,
                        format!("no setting `{other}` (min, max, per_order, daily)"),
                    ))
                }
            }
        }
        out.push(c);
    }
    Ok(out)
}

fn source(t: &Table) -> String {
    match &t.source {
        Source::Operators { at, by } => format!("set by the operators ({by}, {})", when(*at)),
        _ => t.table_source().to_string(),
    }
}

fn band(c: &Candidate) -> String {
    match (c.min_amount, c.max_amount) {
        (None, None) => "any".into(),
        (Some(min), None) => format!("from {min}"),
        (None, Some(max)) => format!("up to {max}"),
        (Some(min), Some(max)) => format!("{min} to {max}"),
    }
}

fn table_section(
    t: &Table,
    used: &BTreeMap<(String, String, String), Decimal>,
    csrf: &Markup,
    may: bool,
) -> Markup {
    let whose = match &t.scope.merchant_id {
        Some(m) => format!("merchant {m}'s own"),
        None => "every merchant".into(),
    };
    let title = format!(
        "{} {}s, {whose}: {}",
        t.scope.currency,
        t.scope.direction.as_str(),
        source(t)
    );
    let d = t.scope.direction.as_str().to_string();
    let rows: Vec<Vec<Markup>> = t
        .candidates
        .iter()
        .map(|c| {
            let today = used
                .get(&(c.channel.clone(), t.scope.currency.clone(), d.clone()))
                .copied()
                .unwrap_or_default();
            vec![
                html! { (c.channel) },
                html! { (band(c)) },
                html! { @if c.weight == 0 { "0 (fallback only)" } @else { (c.weight) } },
                html! { (c.per_order_limit.map_or("none".to_string(), |l| l.to_string())) },
                html! {
                    @match c.daily_limit {
                        Some(l) => { (today) " of " (l) }
                        None => { "none" }
                    }
                },
                html! { @if c.enabled { "enabled" } @else { strong { "disabled" } } },
            ]
        })
        .collect();
    let lines: Vec<String> = t.candidates.iter().map(line).collect();
    let id = format!(
        "{}-{}-{}",
        t.scope.currency,
        d,
        t.scope.merchant_id.as_deref().unwrap_or("all")
    );
    html! {
        (table(&title, &["Channel", "Amounts", "Weight", "Per order", "Today", "State"], &rows))
        @if may {
            details {
                summary { "Propose a change to this table" }
                form method="post" action={ (PAGE) "/propose" } {
                    (csrf)
                    input type="hidden" name="currency" value=(t.scope.currency);
                    input type="hidden" name="direction" value=(d);
                    @if let Some(m) = &t.scope.merchant_id {
                        input type="hidden" name="merchant_id" value=(m);
                    }
                    div {
                        label for={ "lines-" (id) } { "Candidates, in the order they are tried: one a line, " code { "CODE weight [min=A] [max=A] [per_order=A] [daily=A] [disabled]" } ". Weight 0 is tried only when one before it cannot take the order." }
                        textarea id={ "lines-" (id) } name="candidates" rows="5" cols="60" { (lines.join("\n")) }
                    }
                    div {
                        label for={ "remarks-" (id) } { "Why (for the second admin)" }
                        input type="text" id={ "remarks-" (id) } name="remarks" maxlength="512";
                    }
                    button type="submit" { "File for a second admin" }
                }
            }
        }
    }
}

/// Every table in force and each channel's health.
#[endpoint { method = GET, path = "/console/routing", unpublished = true }]
pub async fn console_routing(
    rqctx: RequestContext<Arc<App>>,
) -> Result<http::Response<Body>, HttpError> {
    page(&rqctx, &SECTIONS, PAGE, |app, session, fields| async move {
        let me = super::operator(&session)?;
        let may = me.role.may(Action::SetRouting) && me.id.is_some();
        let csrf = csrf_field(&session);
        let used = routing::used_today(&app).await?;
        let health = &app.config.routing.health;
        let channels: Vec<Vec<Markup>> = app
            .router
            .health(&app)
            .into_iter()
            .map(|(code, circuit, calls, failures)| {
                vec![
                    html! { (code) },
                    html! {
                        @match circuit {
                            Circuit::Closed => { "in service" }
                            Circuit::Open { until } => { strong { "resting" } " until " (when(until)) }
                            Circuit::Trial => { "on trial: the next call decides" }
                        }
                    },
                    html! { (failures) " of " (calls) },
                ]
            })
            .collect();
        let body = html! {
            (notice(&fields))
            p { "A channel deposit goes to the first candidate that can take its amount (enabled, within its amounts and its limit per order, with room in its daily limit), drawn by weight among those; one that refuses it or does not answer is passed for the next, and a resting channel is asked only after those in service. A payout moves to the next candidate only when its channel refuses it before taking it, never when its outcome is unknown. A change is filed here and approved by a second admin under " a href="/console/changes" { "Change requests" } "." }
            @for t in app.router.tables(&app) {
                (table_section(&t, &used, &csrf, may))
            }
            (table(
                &format!("Channels' health on this instance: calls refused or unanswered in the last {} s (a channel rests for {} s once {} % of at least {} calls failed)", health.window_seconds, health.rest_seconds, health.failure_percent, health.min_calls),
                &["Channel", "State", "Failed calls"],
                &channels
            ))
        };
        Reply::page("Routing", body)
    })
    .await
}

/// Files a routing table for a second admin to approve.
#[endpoint { method = POST, path = "/console/routing/propose", unpublished = true }]
pub async fn console_propose_routing(
    rqctx: RequestContext<Arc<App>>,
    body: UntypedBody,
) -> Result<http::Response<Body>, HttpError> {
    let request_id = rqctx.request_id.clone();
    post(
        &rqctx,
        &SECTIONS,
        PAGE,
        body,
        |app, session, fields| async move {
            let currency = given(&fields, "currency")
                .ok_or_else(|| ApiError::invalid_field("currency", "is required"))?;
            let direction = given(&fields, "direction")
                .and_then(|d| RoutedDirection::parse(&d))
                .ok_or_else(|| ApiError::invalid_field("direction", "is deposit or withdrawal"))?;
            let table = NewTable {
                currency,
                direction,
                merchant_id: given(&fields, "merchant_id"),
                candidates: candidates(&given(&fields, "candidates").unwrap_or_default())?,
            };
            let remarks = given(&fields, "remarks");
            let app = &*app;
            let filed = acting(
                &session,
                Action::FileChangeRequest,
                &request_id,
                |op| async move {
                    op.acting()
                        .map(|a| a.who.may(Action::SetRouting))
                        .transpose()?;
                    change_requests::file(app, &op, Change::SetRouting(table), remarks).await
                },
            )
            .await?;
            Ok(back(
                PAGE,
                &format!(
                "Filed as change request {}: {} A second admin approves it under Change requests.",
                filed.id, filed.summary
            ),
            ))
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_as_it_is_written() {
        let mut c = Candidate::plain("SIM-B", 30);
        c.min_amount = Some(Decimal::new(10000, 2));
        c.daily_limit = Some(Decimal::from(5000));
        c.enabled = false;
        let written = line(&c);
        assert_eq!(written, "SIM-B 30 min=100.00 daily=5000 disabled");
        assert_eq!(
            candidates(&format!("{written}\n\nA 0\n")).unwrap(),
            vec![c, Candidate::plain("A", 0)]
        );
        let e = candidates("A 7\nB x").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
        assert!(candidates("A 1 speed=3").is_err());
    }
}
