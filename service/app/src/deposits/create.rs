//! Creating a deposit order: where the payer pays (the merchant's
//! receiving account or a channel), what it costs, what the payer is
//! shown, and the insert that tells a new order from a resend.

use super::{CashierLink, Deposit, NewDeposit, OrderType};
use crate::channels::{Channel, ChannelError, ChannelPayment};
use crate::config::ReceivingAccountConfig;
use crate::domain::error::ApiError;
use crate::domain::fees::{Direction, RateConfig};
use crate::domain::money::{from_units, to_units};
use crate::domain::routing::table::{Decision, RoutedDirection, Scope, Skip};
use crate::domain::routing::Route;
use crate::domain::status::{CallbackStatus, DepositStatus};
use crate::domain::validate;
use crate::fees;
use crate::merchants::Merchant;
use crate::orders;
use crate::store::rows::DepositRow;
use crate::store::{StoreError, UniqueKey};
use crate::App;
use chrono::{DateTime, Utc};
use rand::Rng;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Creates a deposit order, or returns the original on an identical resend.
pub async fn create(app: &App, merchant: &Merchant, req: NewDeposit) -> Result<Deposit, ApiError> {
    create_linked(app, merchant, req, None).await
}

/// Creates a deposit, a cashier session's when `link` is given.
pub async fn create_linked(
    app: &App,
    merchant: &Merchant,
    req: NewDeposit,
    link: Option<CashierLink>,
) -> Result<Deposit, ApiError> {
    let route = app
        .config
        .route_for(&merchant.code, &req.currency)
        .ok_or_else(|| ApiError::UnsupportedCurrency(req.currency.clone()))?;
    // A channel payment is made outside this database, so a resend is
    // answered before one is asked for. On an account nothing leaves the
    // database: the insert's unique constraint finds a resend, and a new
    // order (the common case) costs one round trip less.
    if route == Route::Channel {
        if let Some(existing) =
            orders::row_by_merchant_order_no::<Deposit>(app, &merchant.id, &req.merchant_order_no)
                .await?
        {
            return orders::resent_or_conflict(existing, &req.fingerprint, &req.merchant_order_no);
        }
    }
    let requested = to_units(req.amount).ok_or_else(too_large)?;
    let mut row = new_row(app, merchant, &req, route, link, requested);
    let collection = Collection::prepare(app, merchant, &req.currency, &mut row).await?;
    let pricing = Pricing {
        rate: fees::rate_for(app, merchant, &req.currency, Direction::Deposit).await?,
        cost: collection.cost.clone(),
        digits: app.config.currency(&req.currency)?.fraction_digits,
    };
    insert_new(app, merchant, &req, row, &collection, &pricing).await
}

fn too_large() -> ApiError {
    ApiError::invalid_field("amount", "is too large")
}

/// The order as created: pending, nothing paid, no callback queued yet;
/// where it is paid and what it costs are filled in by `Collection` and
/// `Pricing`.
fn new_row(
    app: &App,
    merchant: &Merchant,
    req: &NewDeposit,
    route: Route,
    link: Option<CashierLink>,
    requested: i64,
) -> DepositRow {
    let now = app.now_unix();
    let (order_type, expire_at, session_id, chosen_last4) = match link {
        Some(l) => (
            OrderType::Cashier,
            l.expire_at,
            Some(l.session_id),
            l.payer_account_last4,
        ),
        None => (
            OrderType::Direct,
            now + app.config.validity_for(&merchant.code, &req.currency),
            None,
            None,
        ),
    };
    DepositRow {
        id: uuid::Uuid::new_v4().to_string(),
        order_no: new_order_no('D', app.clock.now()),
        merchant_id: merchant.id.clone(),
        merchant_order_no: req.merchant_order_no.clone(),
        request_fingerprint: req.fingerprint.clone(),
        order_type,
        route,
        status: DepositStatus::Pending,
        currency: req.currency.clone(),
        requested_amount: requested,
        amount: requested,
        fee: 0,
        actual_amount: 0,
        expected_remark: None,
        account_id: None,
        account_name: None,
        channel_id: None,
        channel_order_no: None,
        payment_url: None,
        payment_snapshot: String::new(),
        // No delivery is queued until the order's first state change.
        callback_status: CallbackStatus::None,
        callback_url: req.callback_url.clone(),
        callback_count: 0,
        user_id: req.user_id.clone(),
        extra_data: req.extra_data.clone(),
        payer_account_holder: req.payer.account_holder.clone(),
        payer_mobile: req.payer.mobile.clone(),
        payer_email: req.payer.email.clone(),
        payer_bank_code: req.payer.bank_code.clone(),
        payer_account_last4: chosen_last4
            .or_else(|| req.payer.account_no.as_deref().map(validate::last4)),
        payer_account_no: req.payer.account_no.clone(),
        cashier_session_id: session_id,
        estimated_channel_cost: None,
        estimated_profit: None,
        actual_channel_cost: None,
        actual_profit: None,
        expire_at,
        matched_at: None,
        completed_at: None,
        created_at: now,
        updated_at: now,
        match_amount: None,
        return_url: req.return_url.clone(),
    }
}

/// Where the payer pays (a receiving account or a channel), what
/// collecting there costs, and what the payer is shown of it.
struct Collection {
    cost: RateConfig,
    shown: BTreeMap<String, String>,
    /// The account id, when its orders are told apart by amount.
    floating: Option<String>,
}

/// A payment no channel registered: the request is answered 503 and
/// nothing is stored; the merchant may retry under the same
/// `merchant_order_no`.
fn channel_unavailable(code: &str, order_no: &str, e: ChannelError) -> ApiError {
    ApiError::Unavailable(format!("channel {code}, payment for {order_no}: {e}"))
}

/// Asks the routing table's candidates for the payment, in the plan's
/// order, until one registers it: a refusal or no answer falls through to
/// the next, within the merchant's request. A channel that did not answer
/// may have registered the payment, but the payer is never shown its page,
/// so nothing is paid there; its notifications for an order that is not
/// its own are refused. Nothing is stored yet: whatever they answered, a
/// retry draws a new `order_no` and asks again.
async fn ask_channels(
    app: &App,
    merchant: &Merchant,
    currency: &str,
    row: &DepositRow,
) -> Result<(Arc<dyn Channel>, ChannelPayment, Decision), ApiError> {
    let amount = from_units(row.requested_amount);
    let scope = Scope {
        currency: currency.to_string(),
        direction: RoutedDirection::Deposit,
        merchant_id: Some(merchant.id.clone()),
    };
    let (table, plan) = app.router.plan(app, &scope, &merchant.code, amount, &[])?;
    let ask = crate::channels::PaymentAsk {
        order_no: row.order_no.clone(),
        amount,
        currency: currency.to_string(),
        expire_at: crate::clock::from_unix(row.expire_at)
            .map_err(|e| ApiError::Internal(e.to_string()))?,
        return_url: row.return_url.clone(),
    };
    let (mut fell_from, mut full, mut last) = (Vec::new(), Vec::new(), None);
    for code in &plan.order {
        let Some(channel) = app.channels.by_code(code) else {
            continue;
        };
        let candidate = table.candidates.iter().find(|c| &c.channel == code);
        if let Some(c) = candidate {
            if !app.router.reserve(app, c, &scope, amount).await? {
                full.push((code.clone(), Skip::OverDailyLimit));
                continue;
            }
        }
        let answer = channel.create_payment(&ask).await;
        app.router.record(app, code, answer.is_err());
        match answer {
            Ok(payment) => {
                let decision = crate::routing::decision(&table, &plan, code, fell_from, full);
                return Ok((channel, payment, decision));
            }
            Err(e) => {
                if let Some(c) = candidate {
                    app.router.release(app, c, &scope, amount).await;
                }
                let why = match &e {
                    ChannelError::Refused { reason } => format!("refused: {reason}"),
                    ChannelError::Unknown { .. } => "no answer to trust".to_string(),
                };
                tracing::info!(order_no = %row.order_no, channel = %code, "deposit falls through to the next channel: {why}");
                fell_from.push((code.clone(), why));
                last = Some((code.clone(), e));
            }
        }
    }
    Err(match last {
        Some((code, e)) => channel_unavailable(&code, &row.order_no, e),
        None => ApiError::Unavailable(format!(
            "no channel can take {currency} deposits now: each is at its daily limit"
        )),
    })
}

impl Collection {
    /// Chooses where `row` is paid and records it on the row.
    async fn prepare(
        app: &App,
        merchant: &Merchant,
        currency: &str,
        row: &mut DepositRow,
    ) -> Result<Collection, ApiError> {
        let mut shown = BTreeMap::new();
        match row.route {
            Route::Account => {
                let account = receiving_account_for(app, merchant, currency)?;
                row.account_id = Some(account.id.clone());
                row.account_name = Some(account.name.clone());
                for (key, value) in [
                    ("bank_code", Some(&account.bank_code)),
                    ("bank_name", Some(&account.bank_name)),
                    ("bank_branch", account.bank_branch.as_ref()),
                    ("account_no", Some(&account.account_no)),
                    ("account_holder", Some(&account.account_holder)),
                    ("promptpay_id", account.promptpay_id.as_ref()),
                ] {
                    if let Some(value) = value {
                        shown.insert(key.to_string(), value.clone());
                    }
                }
                Ok(Collection {
                    cost: account.deposit_cost.clone(),
                    shown,
                    floating: account.floating_amount.then(|| account.id.clone()),
                })
            }
            Route::Channel => {
                let (channel, payment, decision) =
                    ask_channels(app, merchant, currency, row).await?;
                row.channel_id = Some(channel.id().to_string());
                row.channel_order_no = Some(payment.channel_order_no);
                row.payment_url = Some(payment.payment_url.clone());
                shown.insert("channel_code".into(), channel.code().to_string());
                shown.insert("payment_url".into(), payment.payment_url);
                shown.extend(decision.to_map());
                Ok(Collection {
                    cost: channel.costs().deposit.clone(),
                    shown,
                    floating: None,
                })
            }
        }
    }

    /// The order's `payment_snapshot`: what the payer is shown, with the
    /// amount and remark of this attempt.
    fn snapshot(&self, row: &DepositRow) -> Result<String, ApiError> {
        let mut shown = self.shown.clone();
        let amount = payments_wire::DecimalString(from_units(row.amount));
        shown.insert("amount".into(), amount.to_string());
        shown.insert("currency_code".into(), row.currency.clone());
        if let Some(remark) = &row.expected_remark {
            shown.insert("remark".into(), remark.clone());
        }
        serde_json::to_string(&shown).map_err(|e| ApiError::Internal(e.to_string()))
    }
}

/// The merchant's fee and the estimated cost of collecting an amount, at
/// the currency's digits.
struct Pricing {
    rate: RateConfig,
    cost: RateConfig,
    digits: u32,
}

impl Pricing {
    fn apply(&self, row: &mut DepositRow, amount: i64) -> Result<(), ApiError> {
        let decimal = from_units(amount);
        let fee = crate::domain::fees::apply(&self.rate, decimal, self.digits);
        let cost = crate::domain::fees::apply(&self.cost, decimal, self.digits);
        row.amount = amount;
        row.fee = to_units(fee).ok_or_else(too_large)?;
        row.estimated_channel_cost = Some(to_units(cost).ok_or_else(too_large)?);
        row.estimated_profit = Some(to_units(fee - cost).ok_or_else(too_large)?);
        Ok(())
    }
}

/// Inserts the order, drawing a new remark (and floating amount) when a
/// concurrent order took the last one: a remark collision is
/// astronomically rare, a floating amount taken by a concurrent order is
/// retried with another; neither fails the request. A merchant_order_no
/// collision is a resend or a reuse.
async fn insert_new(
    app: &App,
    merchant: &Merchant,
    req: &NewDeposit,
    mut row: DepositRow,
    collection: &Collection,
    pricing: &Pricing,
) -> Result<Deposit, ApiError> {
    for _ in 0..8 {
        let amount = match &collection.floating {
            Some(account) => {
                floating_amount(app, account, row.requested_amount, pricing.digits).await?
            }
            None => row.requested_amount,
        };
        pricing.apply(&mut row, amount)?;
        row.match_amount = collection.floating.as_ref().map(|_| amount);
        if row.route == Route::Account {
            row.expected_remark = Some(new_remark());
        }
        row.payment_snapshot = collection.snapshot(&row)?;
        let inserted = app
            .deposit_inserts
            .insert(row.clone())
            .await
            .map_err(|refused| ApiError::Unavailable(format!("new deposit orders: {refused}")))?;
        match inserted {
            Ok(()) => {
                // The expiry worker wakes at this order's `expire_at` if
                // nothing it knows of is due sooner.
                app.expiry.set(row.expire_at);
                return Deposit::from_row(row);
            }
            Err(StoreError::Conflict {
                key: UniqueKey::DepositMerchantOrderNo,
                ..
            }) => {
                let existing = orders::row_by_merchant_order_no::<Deposit>(
                    app,
                    &merchant.id,
                    &req.merchant_order_no,
                )
                .await?
                .ok_or_else(|| {
                    ApiError::Internal("conflict on merchant_order_no without a row".into())
                })?;
                return orders::resent_or_conflict(
                    existing,
                    &req.fingerprint,
                    &req.merchant_order_no,
                );
            }
            Err(StoreError::Conflict {
                key: UniqueKey::DepositRemark | UniqueKey::DepositMatchAmount,
                ..
            }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::Unavailable(
        "could not allocate a unique remark or amount".into(),
    ))
}

/// The merchant's receiving account in the currency: the one an operator
/// assigned, else the first configured.
fn receiving_account_for<'a>(
    app: &'a App,
    merchant: &Merchant,
    currency: &str,
) -> Result<&'a ReceivingAccountConfig, ApiError> {
    merchant
        .receiving_accounts
        .get(currency)
        .and_then(|id| app.config.receiving_account(id))
        .filter(|a| a.currency == currency)
        .or_else(|| {
            app.config
                .receiving_accounts
                .iter()
                .find(|a| a.currency == currency)
        })
        .ok_or_else(|| ApiError::UnsupportedCurrency(currency.to_string()))
}

/// `requested` plus an offset below one currency unit that no other order
/// awaiting payment on the account has, so that a transfer of exactly this
/// amount names one order. The unique index settles races.
async fn floating_amount(
    app: &App,
    account_id: &str,
    requested: i64,
    fraction_digits: u32,
) -> Result<i64, ApiError> {
    let step =
        10_i64.pow(crate::domain::money::SCALE - fraction_digits.min(crate::domain::money::SCALE));
    // At most 99 offsets: 0.01 to 0.99 for two fraction digits.
    let offsets = (10_i64.pow(crate::domain::money::SCALE) / step - 1).min(99);
    if offsets < 1 {
        return Err(ApiError::Internal(format!(
            "account {account_id} floats amounts in a currency without fraction digits"
        )));
    }
    let (account, from, to) = (
        account_id.to_string(),
        requested + step,
        requested + (offsets + 1) * step,
    );
    let taken: std::collections::HashSet<i64> = app
        .db
        .run(|s| Box::pin(async move { s.pending_match_amounts(&account, from, to).await }))
        .await?
        .into_iter()
        .collect();
    let free: Vec<i64> = (1..=offsets)
        .map(|k| requested + k * step)
        .filter(|a| !taken.contains(a))
        .collect();
    if free.is_empty() {
        return Err(ApiError::Unavailable(format!(
            "every floating amount for {} on account {account_id} is taken by an order awaiting payment",
            from_units(requested)
        )));
    }
    Ok(free[rand::thread_rng().gen_range(0..free.len())])
}

const REMARK_ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
pub const REMARK_LENGTH: usize = 10;

/// The code a payer writes on the transfer: short, unambiguous to read.
fn new_remark() -> String {
    let mut rng = rand::thread_rng();
    (0..REMARK_LENGTH)
        .map(|_| REMARK_ALPHABET[rng.gen_range(0..REMARK_ALPHABET.len())] as char)
        .collect()
}

/// `D20261122` + 12 random characters: sortable by day, unguessable.
pub fn new_order_no(prefix: char, now: DateTime<Utc>) -> String {
    let mut rng = rand::thread_rng();
    let tail: String = (0..12)
        .map(|_| REMARK_ALPHABET[rng.gen_range(0..REMARK_ALPHABET.len())] as char)
        .collect();
    format!("{prefix}{}{tail}", now.format("%Y%m%d"))
}
