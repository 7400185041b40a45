//! Deposit orders: creation (account or channel, by the merchant's routing),
//! idempotent resend, and queries.

use crate::app::callbacks;
use crate::app::fees;
use crate::app::ledger::{self, Entry};
use crate::app::merchants::Merchant;
use crate::app::App;
use crate::config::ReceivingAccountConfig;
use crate::domain::error::ApiError;
use crate::domain::fees::{Direction, RateConfig};
use crate::domain::lifecycle::{self, DepositEvent};
use crate::domain::money::{from_units, to_units};
use crate::domain::routing::Route;
use crate::domain::status::{CallbackStatus, DepositStatus};
use crate::store::error::Key;
use crate::store::rows::DepositRow;
use crate::store::{Store, StoreError, UniqueKey};
use chrono::{DateTime, Utc};
use rand::Rng;
use rust_decimal::Decimal;
use std::collections::BTreeMap;

pub use crate::domain::status::OrderType;

/// The receiving account an account order's payer was shown, as the
/// order's own `payment_snapshot` recorded it at creation: a later change
/// of the configured account never changes what an order says.
#[derive(Clone, Debug, PartialEq)]
pub struct ShownAccount {
    pub id: String,
    pub name: String,
    pub account_no: String,
    pub account_holder: String,
    pub bank_code: String,
    pub bank_name: String,
    pub bank_branch: Option<String>,
}

impl ShownAccount {
    /// The snapshot's keys this reads (and `create` writes).
    fn from_snapshot(
        row: &DepositRow,
        snapshot: &BTreeMap<String, String>,
    ) -> Result<Option<ShownAccount>, ApiError> {
        let (Route::Account, Some(id)) = (row.route, row.account_id.clone()) else {
            return Ok(None);
        };
        let field = |key: &str| {
            snapshot
                .get(key)
                .cloned()
                .ok_or_else(|| corrupt(row, format!("column payment_snapshot has no `{key}`")))
        };
        Ok(Some(ShownAccount {
            // Orders created before the account's name was recorded with
            // them (migration 000010) have only its id to go by.
            name: row.account_name.clone().unwrap_or_else(|| id.clone()),
            account_no: field("account_no")?,
            account_holder: field("account_holder")?,
            bank_code: field("bank_code")?,
            bank_name: field("bank_name")?,
            bank_branch: snapshot.get("bank_branch").cloned(),
            id,
        }))
    }
}

/// A value of the deposit's row the code cannot read.
fn corrupt(row: &DepositRow, detail: String) -> ApiError {
    StoreError::corrupt("deposit_orders", Key("order_no", &row.order_no), detail).into()
}

/// A validated create request.
#[derive(Clone, Debug)]
pub struct NewDeposit {
    pub merchant_order_no: String,
    pub amount: Decimal,
    pub currency: String,
    pub callback_url: Option<String>,
    pub extra_data: Option<String>,
    pub user_id: Option<String>,
    /// What the merchant says about the payer, all optional.
    pub payer: Payer,
    /// Identifies the request body, so that a resend is told from a reuse.
    pub fingerprint: String,
}

/// The payer's optional details a deposit request may carry. A new
/// optional detail is a field here: the request handler reads it (it
/// names every field of the generated request), the order stores it, and
/// a deposit made without a request (a cashier session's) has none.
#[derive(Clone, Debug, Default)]
pub struct Payer {
    pub account_holder: Option<String>,
    pub mobile: Option<String>,
    pub email: Option<String>,
    pub bank_code: Option<String>,
    pub account_no: Option<String>,
}

/// A deposit order as the domain sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Deposit {
    pub id: String,
    pub order_no: String,
    pub merchant_id: String,
    pub merchant_order_no: String,
    pub order_type: OrderType,
    pub route: Route,
    pub status: DepositStatus,
    pub currency: String,
    pub requested_amount: Decimal,
    pub amount: Decimal,
    pub fee: Decimal,
    pub actual_amount: Decimal,
    pub expected_remark: Option<String>,
    pub account_id: Option<String>,
    pub channel_id: Option<String>,
    pub channel_order_no: Option<String>,
    pub payment_url: Option<String>,
    pub payment_snapshot: BTreeMap<String, String>,
    /// An account order's receiving account, as its payer was shown it.
    pub account: Option<ShownAccount>,
    pub callback_url: Option<String>,
    pub callback_status: CallbackStatus,
    pub callback_count: i64,
    pub user_id: Option<String>,
    pub cashier_session_id: Option<String>,
    pub payer_bank_code: Option<String>,
    pub payer_account_last4: Option<String>,
    pub estimated_channel_cost: Option<Decimal>,
    pub estimated_profit: Option<Decimal>,
    pub actual_channel_cost: Option<Decimal>,
    pub actual_profit: Option<Decimal>,
    pub expire_at: DateTime<Utc>,
    pub matched_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Deposit {
    pub fn from_row(row: DepositRow) -> Result<Deposit, ApiError> {
        let time = crate::clock::from_unix;
        let payment_snapshot: BTreeMap<String, String> =
            serde_json::from_str(&row.payment_snapshot).map_err(|e| {
                corrupt(
                    &row,
                    format!("column payment_snapshot is not a valid snapshot: {e}"),
                )
            })?;
        Ok(Deposit {
            account: ShownAccount::from_snapshot(&row, &payment_snapshot)?,
            order_type: row.order_type,
            route: row.route,
            status: row.status,
            payment_snapshot,
            requested_amount: from_units(row.requested_amount),
            amount: from_units(row.amount),
            fee: from_units(row.fee),
            actual_amount: from_units(row.actual_amount),
            estimated_channel_cost: row.estimated_channel_cost.map(from_units),
            estimated_profit: row.estimated_profit.map(from_units),
            actual_channel_cost: row.actual_channel_cost.map(from_units),
            actual_profit: row.actual_profit.map(from_units),
            expire_at: time(row.expire_at),
            matched_at: row.matched_at.map(time),
            completed_at: row.completed_at.map(time),
            created_at: time(row.created_at),
            updated_at: time(row.updated_at),
            callback_count: i64::from(row.callback_count),
            id: row.id,
            order_no: row.order_no,
            merchant_id: row.merchant_id,
            merchant_order_no: row.merchant_order_no,
            currency: row.currency,
            expected_remark: row.expected_remark,
            account_id: row.account_id,
            channel_id: row.channel_id,
            channel_order_no: row.channel_order_no,
            payment_url: row.payment_url,
            callback_url: row.callback_url,
            callback_status: row.callback_status,
            user_id: row.user_id,
            cashier_session_id: row.cashier_session_id,
            payer_bank_code: row.payer_bank_code,
            payer_account_last4: row.payer_account_last4,
        })
    }
}

/// What ties a deposit to the cashier session that created it.
#[derive(Clone, Debug)]
pub struct CashierLink {
    pub session_id: String,
    /// The order expires with its session.
    pub expire_at: i64,
    /// The last four digits of the saved card the payer chose (its bank
    /// code travels in `NewDeposit::payer`).
    pub payer_account_last4: Option<String>,
}

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
            find_by_merchant_order_no_opt(app, &merchant.id, &req.merchant_order_no).await?
        {
            return same_request_or_conflict(existing, &req);
        }
    }
    let requested = to_units(req.amount).ok_or_else(too_large)?;
    let mut row = new_row(app, merchant, &req, route, link, requested);
    let collection = Collection::prepare(app, merchant, &req.currency, &mut row)?;
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
        payer_account_last4: chosen_last4.or_else(|| req.payer.account_no.as_deref().map(last4)),
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
    }
}

fn last4(account_no: &str) -> String {
    let skip = account_no.chars().count().saturating_sub(4);
    account_no.chars().skip(skip).collect()
}

/// Where the payer pays (a receiving account or a channel), what
/// collecting there costs, and what the payer is shown of it.
struct Collection {
    cost: RateConfig,
    shown: BTreeMap<String, String>,
    /// The account id, when its orders are told apart by amount.
    floating: Option<String>,
}

impl Collection {
    /// Chooses where `row` is paid and records it on the row.
    fn prepare(
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
                let channel = app
                    .channels
                    .for_currency(currency)
                    .ok_or_else(|| ApiError::UnsupportedCurrency(currency.to_string()))?;
                let payment = channel.create_payment(&row.order_no);
                row.channel_id = Some(channel.id().to_string());
                row.channel_order_no = Some(payment.channel_order_no);
                row.payment_url = Some(payment.payment_url.clone());
                shown.insert("channel_code".into(), channel.code().to_string());
                shown.insert("payment_url".into(), payment.payment_url);
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
        let attempt = row.clone();
        let inserted = app
            .db
            .run(|s| Box::pin(async move { s.insert_deposit(&attempt).await }))
            .await;
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
                let existing =
                    find_by_merchant_order_no_opt(app, &merchant.id, &req.merchant_order_no)
                        .await?
                        .ok_or_else(|| {
                            ApiError::Internal("conflict on merchant_order_no without a row".into())
                        })?;
                return same_request_or_conflict(existing, req);
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

fn same_request_or_conflict(existing: DepositRow, req: &NewDeposit) -> Result<Deposit, ApiError> {
    if crate::keys::constant_time_eq(&existing.request_fingerprint, &req.fingerprint) {
        Deposit::from_row(existing)
    } else {
        Err(ApiError::DuplicateMerchantOrderNo(
            req.merchant_order_no.clone(),
        ))
    }
}

async fn find_by_merchant_order_no_opt(
    app: &App,
    merchant_id: &str,
    merchant_order_no: &str,
) -> Result<Option<DepositRow>, ApiError> {
    let (m, o) = (merchant_id.to_string(), merchant_order_no.to_string());
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.deposit_by_merchant_order_no(&m, &o).await }))
        .await?)
}

pub async fn find_by_merchant_order_no(
    app: &App,
    merchant_id: &str,
    merchant_order_no: &str,
) -> Result<Deposit, ApiError> {
    find_by_merchant_order_no_opt(app, merchant_id, merchant_order_no)
        .await?
        .map(Deposit::from_row)
        .unwrap_or_else(|| {
            Err(ApiError::OrderNotFound {
                kind: "deposit",
                reference: merchant_order_no.to_string(),
            })
        })
}

pub async fn find_by_order_no(
    app: &App,
    merchant_id: &str,
    order_no: &str,
) -> Result<Deposit, ApiError> {
    let (m, o) = (merchant_id.to_string(), order_no.to_string());
    app.db
        .run(|s| Box::pin(async move { s.deposit_by_order_no(&m, &o).await }))
        .await?
        .map(Deposit::from_row)
        .unwrap_or_else(|| {
            Err(ApiError::OrderNotFound {
                kind: "deposit",
                reference: order_no.to_string(),
            })
        })
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

/// Any merchant's deposit, for operators and simulators.
pub async fn find_any(app: &App, order_no: &str) -> Result<Deposit, ApiError> {
    let o = order_no.to_string();
    app.db
        .run(|s| Box::pin(async move { s.deposit_by_order_no_any(&o).await }))
        .await?
        .map(Deposit::from_row)
        .unwrap_or_else(|| {
            Err(ApiError::OrderNotFound {
                kind: "deposit",
                reference: order_no.to_string(),
            })
        })
}

/// What completing a deposit writes, worked out before the transaction
/// (fees and costs come from configuration and the merchant's rates).
#[derive(Clone, Debug)]
pub struct Completion {
    actual: i64,
    fee: i64,
    cost: Option<i64>,
    profit: Option<i64>,
}

/// The payment arrived in full (`paid` is `None`) or as `paid`. The fee
/// and the channel cost are computed on what arrived.
pub async fn plan_completion(
    app: &App,
    current: &Deposit,
    paid: Option<Decimal>,
) -> Result<Completion, ApiError> {
    lifecycle::deposit_next(current.status, DepositEvent::Complete).ok_or_else(|| {
        lifecycle::refused(
            &current.order_no,
            current.status.as_str(),
            DepositEvent::Complete,
        )
    })?;
    let currency = app.config.currency(&current.currency)?;
    let actual = match paid {
        Some(p) => crate::domain::validate::paid_amount("amount", p, currency.fraction_digits)?,
        // A matched deposit completes with what the match said arrived.
        None if current.status == DepositStatus::Matched
            && current.actual_amount > Decimal::ZERO =>
        {
            current.actual_amount
        }
        None => current.amount,
    };
    let rate = fees::merchant_rate(
        app,
        &current.merchant_id,
        &current.currency,
        Direction::Deposit,
    )
    .await?;
    let fee = crate::domain::fees::apply(&rate, actual, currency.fraction_digits);
    let cost = match current.route {
        Route::Account => current
            .account_id
            .as_deref()
            .and_then(|id| app.config.receiving_account(id))
            .map(|a| crate::domain::fees::apply(&a.deposit_cost, actual, currency.fraction_digits)),
        Route::Channel => current
            .channel_id
            .as_deref()
            .and_then(|id| app.channels.get(id))
            .map(|c| {
                crate::domain::fees::apply(&c.costs().deposit, actual, currency.fraction_digits)
            }),
    };
    let units =
        |d: Decimal| to_units(d).ok_or_else(|| ApiError::invalid_field("amount", "is too large"));
    Ok(Completion {
        actual: units(actual)?,
        fee: units(fee)?,
        cost: cost.and_then(to_units),
        profit: cost.and_then(|c| to_units(fee - c)),
    })
}

/// What a move inside a transaction came to.
#[derive(Debug)]
pub enum Moved {
    /// The move was made.
    Done(DepositRow),
    /// The order was still pending at its `expire_at`: it was expired
    /// instead, with its callback, and the move is refused once that is
    /// committed.
    Lapsed(DepositRow),
}

impl Moved {
    /// After the commit: the moved order, or the refusal a lapsed order
    /// answers (409, as for any order already expired).
    pub fn into_result(self, event: DepositEvent) -> Result<DepositRow, ApiError> {
        match self {
            Moved::Done(row) => Ok(row),
            Moved::Lapsed(row) => Err(lifecycle::refused(&row.order_no, row.status, event)),
        }
    }
}

/// Inside `tx`: expiry is decided at `expire_at`, not when a worker next
/// looks. A pending order whose time has run out is expired here by
/// whichever path reaches it first (a payment, a match, a bank report, an
/// operator), with its callback, so that no late transfer completes an
/// order the merchant has already written off. `None` when it has not run
/// out.
pub async fn lapse(
    tx: &mut dyn Store,
    row: &DepositRow,
    now: i64,
) -> Result<Option<DepositRow>, ApiError> {
    if row.status != DepositStatus::Pending || row.expire_at > now {
        return Ok(None);
    }
    let expired = transition(tx, row.clone(), DepositEvent::Expire, |_, _| {}, now).await?;
    Ok(Some(expired))
}

/// `lapse` for an order known by its number.
pub async fn lapse_if_due(
    tx: &mut dyn Store,
    order_no: &str,
    now: i64,
) -> Result<Option<DepositRow>, ApiError> {
    let row = load(tx, order_no).await?;
    lapse(tx, &row, now).await
}

/// The refusal of a move that lost a race: another transaction moved the
/// order first, so the answer names the state it is in now, not the one
/// read before.
async fn refused_as_now(
    tx: &mut dyn Store,
    order_no: &str,
    read: DepositStatus,
    event: DepositEvent,
) -> ApiError {
    match tx.deposit_by_order_no_any(order_no).await {
        Ok(Some(now)) => lifecycle::refused(order_no, now.status, event),
        _ => lifecycle::refused(order_no, read, event),
    }
}

async fn load(tx: &mut dyn Store, order_no: &str) -> Result<DepositRow, ApiError> {
    tx.deposit_by_order_no_any(order_no)
        .await?
        .ok_or_else(|| ApiError::OrderNotFound {
            kind: "deposit",
            reference: order_no.to_string(),
        })
}

/// Completes the deposit inside `tx`: the order, its ledger entry (the
/// merchant is credited `actual_amount − fee`) and its callback record.
/// Refused if the order moved to a state completion does not apply to;
/// expired instead if its time ran out.
pub async fn apply_completion(
    tx: &mut dyn Store,
    order_no: &str,
    plan: &Completion,
    now: i64,
) -> Result<Moved, ApiError> {
    let mut row = load(tx, order_no).await?;
    if let Some(expired) = lapse(tx, &row, now).await? {
        return Ok(Moved::Lapsed(expired));
    }
    let from = row.status;
    row.status = DepositStatus::Completed;
    row.actual_amount = plan.actual;
    row.fee = plan.fee;
    row.actual_channel_cost = plan.cost;
    row.actual_profit = plan.profit;
    row.completed_at = Some(now);
    row.updated_at = now;
    if row.callback_url.is_some() {
        row.callback_status = CallbackStatus::Pending;
    }
    if !tx
        .transition_deposit(&lifecycle::deposit_sources(DepositEvent::Complete), &row)
        .await?
    {
        return Err(refused_as_now(tx, order_no, from, DepositEvent::Complete).await);
    }
    let entry = Entry::deposit_completed(
        &row.merchant_id,
        &row.currency,
        &row.order_no,
        plan.actual,
        plan.fee,
    );
    ledger::post(tx, &entry, now).await?;
    callbacks::enqueue_deposit(
        tx,
        &row,
        lifecycle::deposit_callback(DepositEvent::Complete),
        now,
    )
    .await?;
    Ok(Moved::Done(row))
}

/// The payment arrived: the order completes and the merchant is credited,
/// in one transaction.
pub async fn complete(
    app: &App,
    order_no: &str,
    paid: Option<Decimal>,
) -> Result<Deposit, ApiError> {
    let current = find_any(app, order_no).await?;
    let plan = plan_completion(app, &current, paid).await?;
    let now = app.now_unix();
    let order = order_no.to_string();
    let moved = app
        .db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move { apply_completion(tx, &order, &plan, now).await })
        })
        .await?;
    Deposit::from_row(moved.into_result(DepositEvent::Complete)?)
}

/// The amount a match records as received, in stored units.
pub fn received_units(current: &Deposit, received: Option<Decimal>) -> Result<i64, ApiError> {
    match received {
        Some(r) => to_units(r).ok_or_else(|| ApiError::invalid_field("amount", "is too large")),
        None => to_units(current.amount)
            .ok_or_else(|| ApiError::Internal("stored amount out of range".into())),
    }
}

/// Inside `tx`: a bank transaction or channel report matched the deposit
/// before it is credited; `received` (units) is what arrived.
pub async fn apply_match(
    tx: &mut dyn Store,
    order_no: &str,
    received: i64,
    now: i64,
) -> Result<Moved, ApiError> {
    apply_move(
        tx,
        order_no,
        DepositEvent::Match,
        move |row, now| {
            row.matched_at = Some(now);
            row.actual_amount = received;
        },
        now,
    )
    .await
}

/// A bank transaction or channel report matched the deposit before it is
/// credited (channels that report a match first). `received` is what
/// arrived, when known.
pub async fn record_match(
    app: &App,
    order_no: &str,
    received: Option<Decimal>,
) -> Result<Deposit, ApiError> {
    let current = find_any(app, order_no).await?;
    let received = received_units(&current, received)?;
    let now = app.now_unix();
    let order = order_no.to_string();
    let moved = app
        .db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move { apply_match(tx, &order, received, now).await })
        })
        .await?;
    Deposit::from_row(moved.into_result(DepositEvent::Match)?)
}

/// An operator cancelled the deposit, or its channel declined the payment.
pub async fn cancel(app: &App, order_no: &str) -> Result<Deposit, ApiError> {
    move_deposit(app, order_no, DepositEvent::Cancel, |_, _| {}).await
}

/// The deposit's time ran out before a payment was matched.
pub async fn expire(app: &App, order_no: &str) -> Result<Deposit, ApiError> {
    move_deposit(app, order_no, DepositEvent::Expire, |_, _| {}).await
}

/// Moves a deposit without money changing hands, in its own transaction.
async fn move_deposit(
    app: &App,
    order_no: &str,
    event: DepositEvent,
    change: impl FnOnce(&mut DepositRow, i64) + Send + 'static,
) -> Result<Deposit, ApiError> {
    let now = app.now_unix();
    let order = order_no.to_string();
    let moved = app
        .db
        .transaction::<_, ApiError, _>(move |tx| {
            Box::pin(async move { apply_move(tx, &order, event, change, now).await })
        })
        .await?;
    Deposit::from_row(moved.into_result(event)?)
}

/// Inside `tx`: the status change and its callback record, refused if the
/// deposit is in a state the event does not apply to (or moved meanwhile),
/// and expired instead if its time ran out first.
async fn apply_move(
    tx: &mut dyn Store,
    order_no: &str,
    event: DepositEvent,
    change: impl FnOnce(&mut DepositRow, i64) + Send,
    now: i64,
) -> Result<Moved, ApiError> {
    let row = load(tx, order_no).await?;
    if event != DepositEvent::Expire {
        if let Some(expired) = lapse(tx, &row, now).await? {
            return Ok(Moved::Lapsed(expired));
        }
    }
    Ok(Moved::Done(transition(tx, row, event, change, now).await?))
}

/// Inside `tx`: moves `row` by `event` along the lifecycle table.
async fn transition(
    tx: &mut dyn Store,
    mut row: DepositRow,
    event: DepositEvent,
    change: impl FnOnce(&mut DepositRow, i64) + Send,
    now: i64,
) -> Result<DepositRow, ApiError> {
    let from = row.status;
    let next = lifecycle::deposit_next(row.status, event)
        .ok_or_else(|| lifecycle::refused(&row.order_no, row.status, event))?;
    row.status = next;
    row.updated_at = now;
    change(&mut row, now);
    if row.callback_url.is_some() {
        row.callback_status = CallbackStatus::Pending;
    }
    if !tx
        .transition_deposit(&lifecycle::deposit_sources(event), &row)
        .await?
    {
        return Err(refused_as_now(tx, &row.order_no, from, event).await);
    }
    callbacks::enqueue_deposit(tx, &row, lifecycle::deposit_callback(event), now).await?;
    Ok(row)
}

/// Expires every deposit still awaiting payment past its `expire_at`.
/// Safe to run in several workers at once: each expiry is a conditional
/// update, so an order another worker expired first is skipped.
pub async fn expire_due(app: &App) -> Result<usize, ApiError> {
    const BATCH: i64 = 500;
    let now = app.now_unix();
    let mut expired = 0;
    loop {
        let due = app
            .db
            .run(move |s| Box::pin(async move { s.deposits_due_to_expire(now, BATCH).await }))
            .await?;
        let full = due.len() as i64 == BATCH;
        for order_no in due {
            match expire(app, &order_no).await {
                Ok(order) => {
                    expired += 1;
                    crate::telemetry::metrics::worker_lag(
                        "expiry",
                        now - order.expire_at.timestamp(),
                    );
                }
                Err(ApiError::InvalidStateTransition { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        if !full {
            return Ok(expired);
        }
    }
}

/// The earliest `expire_at` among deposits awaiting payment, when the
/// expiry worker must look next.
pub async fn next_expiry(app: &App) -> Result<Option<i64>, ApiError> {
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.next_deposit_expiry().await }))
        .await?)
}
