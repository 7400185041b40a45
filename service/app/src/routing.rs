//! Where a channel deposit or a payout goes: the routing table in force
//! for its currency, direction and merchant, each channel's health as this
//! instance has seen it, and each candidate's daily limit, counted in the
//! database so that every instance keeps to it.
//!
//! The operators' tables live in the database; every instance keeps them
//! in memory and reads them again twice a second (`refresh`), so a change
//! approved on one instance is in force on all of them within a second,
//! and choosing a channel costs a create nothing but arithmetic.

use crate::domain::error::ApiError;
use crate::domain::money::to_units;
use crate::domain::routing::health::{Change, Circuit, Health};
use crate::domain::routing::table::{
    self, day_of, Candidate, Decision, Plan, RoutedDirection, Scope, Skip, Standing,
};
use crate::store::queries::routing::DailyKey;
use crate::store::rows::RoutingTableRow;
use crate::App;
use rand::Rng;
use rust_decimal::Decimal;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// Where a table in force came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Set through the operator API, at this time, by this operator.
    Operators { at: i64, by: String },
    /// The configuration's `[[routing.tables]]`.
    Configuration,
    /// Neither: every channel that lists the currency, by id.
    Channels,
}

/// A table in force.
#[derive(Clone, Debug)]
pub struct Table {
    pub scope: Scope,
    pub candidates: Vec<Candidate>,
    pub source: Source,
}

impl Table {
    /// Where it came from, in words.
    pub fn table_source(&self) -> &'static str {
        match self.source {
            Source::Operators { .. } => "set by the operators",
            Source::Configuration => "configured",
            Source::Channels => "every channel of the currency",
        }
    }

    /// Its name in an order's record: `BDT deposit, every merchant`.
    pub fn name(&self) -> String {
        let whose = match &self.scope.merchant_id {
            Some(_) => "the merchant's own",
            None => "every merchant",
        };
        let source = self.table_source();
        format!(
            "{} {}, {whose} ({source})",
            self.scope.currency,
            self.scope.direction.as_str()
        )
    }
}

/// The operators' tables as last read, and each channel's health.
#[derive(Default)]
pub struct Router {
    /// The tables, with the ticket of the read they came from.
    set: RwLock<(u64, Arc<Vec<RoutingTableRow>>)>,
    /// The last ticket handed to a read (`refresh`).
    tickets: AtomicU64,
    health: Mutex<BTreeMap<String, Health>>,
}

impl Router {
    fn set_tables(&self) -> Arc<Vec<RoutingTableRow>> {
        self.set.read().unwrap_or_else(|p| p.into_inner()).1.clone()
    }

    /// Reads the operators' tables again; whether they changed. Each read
    /// takes a ticket before it starts, and what it read is put in force
    /// only if no read that started after it already was: the timer's
    /// read, begun before an operator's table committed and ended after
    /// that operator's own read, would otherwise put the table back as it
    /// was until the next pass (a deposit created meanwhile was routed by
    /// the old table).
    pub async fn refresh(&self, app: &App) -> Result<bool, ApiError> {
        let ticket = self.tickets.fetch_add(1, Ordering::SeqCst) + 1;
        let rows = app
            .db
            .run(|s| Box::pin(async move { s.routing_tables().await }))
            .await?;
        Ok(self.put_in_force(ticket, rows))
    }

    /// Puts the tables read under `ticket` in force unless a later read's
    /// are; whether that changed them.
    fn put_in_force(&self, ticket: u64, rows: Vec<RoutingTableRow>) -> bool {
        let mut set = self.set.write().unwrap_or_else(|p| p.into_inner());
        if ticket < set.0 {
            return false;
        }
        set.0 = ticket;
        if *set.1 == rows {
            return false;
        }
        set.1 = Arc::new(rows);
        true
    }

    /// The table in force for `scope` (a merchant's own if it has one, then
    /// everyone's), the operators' before the configuration's, and with
    /// neither every channel that lists the currency.
    pub fn table(&self, app: &App, scope: &Scope, merchant_code: Option<&str>) -> Table {
        let set = self.set_tables();
        let operators = |merchant: Option<&str>| {
            set.iter().find(|r| {
                r.currency == scope.currency
                    && r.direction == scope.direction.as_str()
                    && r.scope == merchant.unwrap_or_default()
            })
        };
        let configured = |merchant: Option<&str>| {
            app.config.routing.tables.iter().find(|t| {
                t.currency == scope.currency
                    && t.direction == scope.direction
                    && t.merchant.as_deref() == merchant
            })
        };
        let found = |merchant_id: Option<&str>, code: Option<&str>| -> Option<Table> {
            let scope = Scope {
                merchant_id: merchant_id.map(str::to_string),
                ..scope.clone()
            };
            if let Some(row) = operators(merchant_id) {
                if let Ok(candidates) = serde_json::from_str(&row.candidates) {
                    return Some(Table {
                        scope,
                        candidates,
                        source: Source::Operators {
                            at: row.updated_at,
                            by: row.updated_by.clone(),
                        },
                    });
                }
                // Written by this service after the same checks: a row it
                // cannot read is said, and the configuration's used.
                tracing::error!(currency = %row.currency, direction = %row.direction, "a routing table in the database is unreadable");
            }
            if merchant_id.is_some() && code.is_none() {
                return None;
            }
            configured(code).map(|t| Table {
                scope,
                candidates: t.candidates.clone(),
                source: Source::Configuration,
            })
        };
        if let Some(merchant_id) = scope.merchant_id.as_deref() {
            if let Some(t) = found(Some(merchant_id), merchant_code) {
                return t;
            }
        }
        found(None, None).unwrap_or_else(|| Table {
            scope: Scope {
                merchant_id: None,
                ..scope.clone()
            },
            candidates: every_channel_of(app, &scope.currency),
            source: Source::Channels,
        })
    }

    /// The channels some table in `direction` gives a daily limit, of any
    /// merchant or of every one, set by the operators or configured, as
    /// (currency, channel id) pairs: where a send must reserve room first
    /// (`reserve`). A table the operators set that cannot be read limits
    /// nothing here, as `table` reads the configuration's in its place.
    pub fn limited_channels(
        &self,
        app: &App,
        direction: RoutedDirection,
    ) -> BTreeSet<(String, String)> {
        let set = self.set_tables();
        let operators = set
            .iter()
            .filter(|r| r.direction == direction.as_str())
            .filter_map(|r| {
                let candidates: Vec<Candidate> = serde_json::from_str(&r.candidates).ok()?;
                Some((r.currency.clone(), candidates))
            });
        let configured = app
            .config
            .routing
            .tables
            .iter()
            .filter(|t| t.direction == direction)
            .map(|t| (t.currency.clone(), t.candidates.clone()));
        operators
            .chain(configured)
            .flat_map(|(currency, candidates)| {
                candidates
                    .into_iter()
                    .filter(|c| c.daily_limit.is_some())
                    .filter_map(|c| app.channels.by_code(&c.channel))
                    .map(move |channel| (currency.clone(), channel.id().to_string()))
            })
            .collect()
    }

    /// Every table in force, for the operator API and the console: the
    /// operators' and the configuration's, and for each configured
    /// currency and direction with neither, the channels' own.
    pub fn tables(&self, app: &App) -> Vec<Table> {
        let mut out: Vec<Table> = Vec::new();
        let set = self.set_tables();
        for currency in app.config.currencies.keys() {
            for direction in [RoutedDirection::Deposit, RoutedDirection::Withdrawal] {
                let everyone = Scope {
                    currency: currency.clone(),
                    direction,
                    merchant_id: None,
                };
                out.push(self.table(app, &everyone, None));
                for row in set.iter().filter(|r| {
                    !r.scope.is_empty()
                        && r.currency == *currency
                        && r.direction == direction.as_str()
                }) {
                    let scope = Scope {
                        merchant_id: Some(row.scope.clone()),
                        ..everyone.clone()
                    };
                    out.push(self.table(app, &scope, None));
                }
            }
        }
        out
    }

    /// The channels to try for one order, in order, and the table that
    /// chose them; channels in `tried` are passed over.
    pub fn plan(
        &self,
        app: &App,
        scope: &Scope,
        merchant_code: &str,
        amount: Decimal,
        tried: &[String],
    ) -> Result<(Table, Plan), ApiError> {
        let table = self.table(app, scope, Some(merchant_code));
        let standing = Now {
            router: self,
            app,
            tried,
        };
        let draw = rand::thread_rng().gen::<u32>();
        match table::plan(&table.candidates, amount, draw, &standing) {
            Some(plan) => Ok((table, plan)),
            None => Err(nobody_takes(&table, scope, amount)),
        }
    }

    /// Counts a call's outcome against the channel's health; a circuit
    /// that opens or closes is said and measured.
    pub fn record(&self, app: &App, channel: &str, failed: bool) {
        let now = app.now_unix();
        let config = &app.config.routing.health;
        let mut health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        let h = health.entry(channel.to_string()).or_default();
        match h.record(config, now, failed) {
            Change::Opened => {
                tracing::warn!(
                    channel,
                    rest_seconds = config.rest_seconds,
                    "channel rests: too many of its calls failed"
                );
                crate::telemetry::metrics::channel_circuit(channel, true, true);
            }
            Change::Closed => {
                tracing::info!(channel, "channel back in service: its trial call succeeded");
                crate::telemetry::metrics::channel_circuit(channel, false, false);
            }
            Change::None => {}
        }
    }

    fn resting(&self, app: &App, channel: &str) -> bool {
        let mut health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        health
            .get_mut(channel)
            .is_some_and(|h| h.resting(app.now_unix()))
    }

    /// Each configured channel's circuit and its calls and failures in
    /// the window, as this instance sees them.
    pub fn health(&self, app: &App) -> Vec<(String, Circuit, u32, u32)> {
        let now = app.now_unix();
        let config = &app.config.routing.health;
        let mut health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        app.channels
            .all()
            .map(|c| {
                let h = health.entry(c.code().to_string()).or_default();
                let (calls, failures) = h.counts(config, now);
                (c.code().to_string(), h.circuit(now), calls, failures)
            })
            .collect()
    }

    /// Takes `amount` of the candidate's daily limit, if it has one;
    /// whether there was room.
    pub async fn reserve(
        &self,
        app: &App,
        candidate: &Candidate,
        scope: &Scope,
        amount: Decimal,
    ) -> Result<bool, ApiError> {
        let Some(limit) = candidate.daily_limit else {
            return Ok(true);
        };
        let (units, limit) = (units(amount)?, units(limit)?);
        let (channel, currency, direction) = (
            candidate.channel.clone(),
            scope.currency.clone(),
            scope.direction.as_str(),
        );
        let day = day_of(app.now_unix());
        app.db
            .run(move |s| {
                Box::pin(async move {
                    let key = DailyKey {
                        channel: &channel,
                        currency: &currency,
                        direction,
                        day,
                    };
                    s.reserve_daily_use(key, units, limit).await
                })
            })
            .await
            .map_err(ApiError::from)
    }

    /// Gives back what `reserve` took, for an order the channel did not take.
    pub async fn release(&self, app: &App, candidate: &Candidate, scope: &Scope, amount: Decimal) {
        if candidate.daily_limit.is_none() {
            return;
        }
        let Ok(units) = units(amount) else { return };
        let (channel, currency, direction) = (
            candidate.channel.clone(),
            scope.currency.clone(),
            scope.direction.as_str(),
        );
        let day = day_of(app.now_unix());
        let released = app
            .db
            .run(move |s| {
                Box::pin(async move {
                    let key = DailyKey {
                        channel: &channel,
                        currency: &currency,
                        direction,
                        day,
                    };
                    s.release_daily_use(key, units).await
                })
            })
            .await;
        if let Err(e) = released {
            // The day's count stays higher than what was sent: the limit
            // errs on the side of sending less.
            tracing::warn!(error = %e, "a daily limit's reservation was not given back");
        }
    }

    /// A table as filed or set: sound as a table, each candidate a channel
    /// this service has that takes the currency.
    pub fn check(app: &App, currency: &str, candidates: &[Candidate]) -> Result<(), ApiError> {
        table::check(candidates).map_err(|why| ApiError::invalid_field("candidates", why))?;
        for c in candidates {
            let Some(channel) = app.channels.by_code(&c.channel) else {
                return Err(ApiError::invalid_field(
                    "candidates",
                    format!("no channel has the code {}", c.channel),
                ));
            };
            if !channel.currencies().iter().any(|x| x == currency) {
                return Err(ApiError::invalid_field(
                    "candidates",
                    format!("channel {} does not take {currency}", c.channel),
                ));
            }
        }
        Ok(())
    }
}

/// A decision for an order that went to `channel`.
pub fn decision(
    table: &Table,
    plan: &Plan,
    channel: &str,
    fell_from: Vec<(String, String)>,
    skipped: Vec<(String, Skip)>,
) -> Decision {
    let rule = if fell_from.is_empty() {
        plan.pick.describe()
    } else {
        format!(
            "fallback after {} ({})",
            fell_from.len(),
            plan.pick.describe()
        )
    };
    let reason = if fell_from.is_empty() {
        plan.pick.reason()
    } else {
        "fallback"
    };
    crate::telemetry::metrics::routing_decision(channel, table.scope.direction.as_str(), reason);
    // Resting channels the order never reached were passed over.
    let reached = |c: &String| c == channel || fell_from.iter().any(|(f, _)| f == c);
    let rested: Vec<(String, Skip)> = plan
        .resting
        .iter()
        .filter(|c| !reached(c))
        .map(|c| (c.clone(), Skip::Resting))
        .collect();
    Decision {
        channel: channel.to_string(),
        table: table.name(),
        rule,
        fell_from,
        skipped: plan
            .skipped
            .iter()
            .cloned()
            .chain(skipped)
            .chain(rested)
            .collect(),
    }
}

fn units(amount: Decimal) -> Result<i64, ApiError> {
    to_units(amount).ok_or_else(|| ApiError::invalid_field("amount", "is too large"))
}

/// No candidate takes the order: an amount outside every band is the
/// merchant's to change (422); channels disabled or full for the
/// day are the platform's (503, try later).
fn nobody_takes(table: &Table, scope: &Scope, amount: Decimal) -> ApiError {
    let by_amount = |c: &Candidate| {
        matches!(
            c.refuses(amount),
            Some(Skip::OutsideBand | Skip::OverOrderLimit)
        )
    };
    if !table.candidates.is_empty() && table.candidates.iter().all(by_amount) {
        return ApiError::NoChannelForAmount {
            currency: scope.currency.clone(),
            direction: scope.direction.as_str(),
            amount,
        };
    }
    if table.candidates.is_empty() {
        return ApiError::UnsupportedCurrency(scope.currency.clone());
    }
    ApiError::Unavailable(format!(
        "no channel can take {} {}s now: each is disabled or at its daily limit",
        scope.currency,
        scope.direction.as_str()
    ))
}

/// Every channel that lists the currency, by id: the first takes the
/// orders, the others are its fallbacks.
fn every_channel_of(app: &App, currency: &str) -> Vec<Candidate> {
    app.channels
        .all()
        .filter(|c| c.currencies().iter().any(|x| x == currency))
        .enumerate()
        .map(|(i, c)| Candidate::plain(c.code(), if i == 0 { 100 } else { 0 }))
        .collect()
}

/// What this instance knows of each candidate now.
struct Now<'a> {
    router: &'a Router,
    app: &'a App,
    tried: &'a [String],
}

impl Standing for Now<'_> {
    fn resting(&self, channel: &str) -> bool {
        self.router.resting(self.app, channel)
    }
    /// Checked in the database as the candidate is tried (`Router::reserve`).
    fn over_daily(&self, _: &Candidate, _: Decimal) -> bool {
        false
    }
    fn tried(&self, channel: &str) -> bool {
        self.tried.iter().any(|c| c == channel)
    }
}

/// A routing table to set, as filed.
#[derive(Clone, Debug, PartialEq)]
pub struct NewTable {
    pub currency: String,
    pub direction: RoutedDirection,
    /// A merchant's own table; none: everyone's.
    pub merchant_id: Option<String>,
    pub candidates: Vec<Candidate>,
}

impl NewTable {
    /// As a change request keeps it: the operation's body, amounts as
    /// decimal strings.
    pub fn parameters(&self) -> serde_json::Value {
        let amount = |a: Option<Decimal>| a.map(|a| a.to_string());
        serde_json::json!({
            "merchant_id": self.merchant_id,
            "candidates": self.candidates.iter().map(|c| serde_json::json!({
                "channel_code": c.channel,
                "min_amount": amount(c.min_amount),
                "max_amount": amount(c.max_amount),
                "weight": c.weight,
                "per_order_limit": amount(c.per_order_limit),
                "daily_limit": amount(c.daily_limit),
                "enabled": c.enabled,
            })).collect::<Vec<_>>(),
        })
    }

    /// Read back from a change request: its target `{currency}/{direction}`
    /// and `parameters` as written; `None` for anything else.
    pub fn stored(target: &str, p: &serde_json::Value) -> Option<NewTable> {
        use serde_json::Value;
        let (currency, direction) = target.split_once('/')?;
        let amount = |v: &Value| -> Option<Option<Decimal>> {
            match v {
                Value::Null => Some(None),
                v => Some(Some(v.as_str()?.parse().ok()?)),
            }
        };
        let candidates = p["candidates"]
            .as_array()?
            .iter()
            .map(|c| {
                Some(Candidate {
                    channel: c["channel_code"].as_str()?.to_string(),
                    min_amount: amount(&c["min_amount"])?,
                    max_amount: amount(&c["max_amount"])?,
                    weight: u32::try_from(c["weight"].as_u64()?).ok()?,
                    per_order_limit: amount(&c["per_order_limit"])?,
                    daily_limit: amount(&c["daily_limit"])?,
                    enabled: c["enabled"].as_bool()?,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(NewTable {
            currency: currency.to_string(),
            direction: RoutedDirection::parse(direction)?,
            merchant_id: p["merchant_id"].as_str().map(str::to_string),
            candidates,
        })
    }

    /// Its key in the audit trail: `BDT/deposit`, or `BDT/deposit/<merchant id>`.
    pub fn key(&self) -> String {
        let base = format!("{}/{}", self.currency, self.direction.as_str());
        match &self.merchant_id {
            Some(m) => format!("{base}/{m}"),
            None => base,
        }
    }

    fn scope(&self) -> Scope {
        Scope {
            currency: self.currency.clone(),
            direction: self.direction,
            merchant_id: self.merchant_id.clone(),
        }
    }

    /// In words, for a change request's summary.
    pub fn said(&self) -> String {
        self.candidates
            .iter()
            .map(|c| {
                let mut words = format!("{} weight {}", c.channel, c.weight);
                match (c.min_amount, c.max_amount) {
                    (Some(min), Some(max)) => words += &format!(", {min} to {max}"),
                    (Some(min), None) => words += &format!(", from {min}"),
                    (None, Some(max)) => words += &format!(", up to {max}"),
                    (None, None) => {}
                }
                if let Some(l) = c.per_order_limit {
                    words += &format!(", at most {l} an order");
                }
                if let Some(l) = c.daily_limit {
                    words += &format!(", at most {l} a day");
                }
                if !c.enabled {
                    words += ", disabled";
                }
                words
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Checks a table to set as setting it would: a configured currency, a
/// merchant that exists, sound candidates of channels that take the
/// currency. Names the merchant, when it is one's own.
pub async fn check_new(app: &App, t: &NewTable) -> Result<Option<String>, ApiError> {
    app.config.currency(&t.currency)?;
    Router::check(app, &t.currency, &t.candidates)?;
    match &t.merchant_id {
        Some(id) => Ok(Some(crate::merchants::find(app, id).await?.name)),
        None => Ok(None),
    }
}

/// Sets a routing table in place of the configured one, in the action's
/// own transaction with its audit row, and puts it in force here at once
/// (the other instances read it within a second).
pub async fn set(app: &App, by: &crate::actor::Actor, t: NewTable) -> Result<Table, ApiError> {
    check_new(app, &t).await?;
    let now = app.now_unix();
    let row = RoutingTableRow {
        scope: t.merchant_id.clone().unwrap_or_default(),
        currency: t.currency.clone(),
        direction: t.direction.as_str().to_string(),
        candidates: serde_json::to_string(&t.candidates)
            .map_err(|e| ApiError::Internal(e.to_string()))?,
        updated_at: now,
        updated_by: by.acting().map(|a| a.who.name.clone()).unwrap_or_default(),
    };
    let said = format!("{}: {}", t.key(), t.said());
    let audit = by.audit(
        crate::actor::Target::RoutingTable(t.key()),
        Some(&said),
        now,
    );
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |tx| {
            Box::pin(async move { Ok(tx.put_routing_table(&row).await?) })
        })
        .await?;
    app.router.refresh(app).await?;
    Ok(app.router.table(app, &t.scope(), None))
}

/// Each candidate's use of its daily limit today: (channel, currency,
/// direction) to what it was sent.
pub async fn used_today(
    app: &App,
) -> Result<BTreeMap<(String, String, String), Decimal>, ApiError> {
    let day = day_of(app.now_unix());
    let rows = app
        .db
        .run(move |s| Box::pin(async move { s.daily_use_on(day).await }))
        .await?;
    Ok(rows
        .into_iter()
        .map(|(c, cur, d, used)| ((c, cur, d), crate::domain::money::from_units(used)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table_of(scope: &str) -> RoutingTableRow {
        RoutingTableRow {
            scope: scope.into(),
            currency: "BDT".into(),
            direction: "deposit".into(),
            candidates: "[]".into(),
            updated_at: 1,
            updated_by: "op".into(),
        }
    }

    /// The timer's read began before an operator's table committed (ticket
    /// 1, without it) and ended after the operator's own read (ticket 2,
    /// with it): the operator's table stays in force.
    #[test]
    fn a_read_that_began_earlier_does_not_put_older_tables_back() {
        let router = Router::default();
        let with = vec![table_of("M1")];
        assert!(router.put_in_force(2, with.clone()));
        assert!(
            !router.put_in_force(1, Vec::new()),
            "the earlier read is dropped"
        );
        assert_eq!(*router.set_tables(), with);
        assert!(
            !router.put_in_force(3, with.clone()),
            "the same tables: no change"
        );
        assert!(
            router.put_in_force(4, Vec::new()),
            "a later read is in force"
        );
        assert!(router.set_tables().is_empty());
    }
}
