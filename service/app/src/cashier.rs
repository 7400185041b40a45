//! Hosted cashier sessions: a merchant opens one, the payer follows its URL,
//! picks a denomination (unless the merchant fixed the amount) and maybe one
//! of their saved cards, and the session's deposit order is created.
//!
//! The session's state is never stored: it follows from its order (at most
//! one, found by `cashier_session_id`) and its expiry, so it cannot disagree
//! with the order whatever crashes between two writes.

use crate::deposits::{self, CashierLink, Deposit, NewDeposit, Payer};
use crate::domain::error::ApiError;
use crate::domain::money::{from_units, to_units};
use crate::domain::status::DepositStatus;
use crate::domain::status::SessionStatus;
use crate::merchants::{self, Merchant};
use crate::store::rows::CashierSessionRow;
use crate::store::{DepositKey, StoreError, UniqueKey};
use crate::App;
use base64::Engine;
use rand::RngCore;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// At most this many saved cards are offered on a page.
pub const MAX_CARDS: usize = 10;

/// A saved card as kept: the bank and the last four digits, never more.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedCard {
    pub bank_code: String,
    pub account_last4: String,
}

/// A create request, validated.
#[derive(Clone, Debug)]
pub struct NewSession {
    pub merchant_order_no: String,
    pub amount: Option<Decimal>,
    pub currency: String,
    pub callback_url: Option<String>,
    pub return_url: Option<String>,
    pub extra_data: Option<String>,
    pub user_id: Option<String>,
    pub cards: Vec<SavedCard>,
    pub fingerprint: String,
}

#[derive(Clone, Debug)]
pub struct Session {
    pub id: String,
    pub merchant_id: String,
    pub merchant_order_no: String,
    pub currency: String,
    pub amount: Option<Decimal>,
    pub cards: Vec<SavedCard>,
    pub callback_url: Option<String>,
    /// The merchant's page the payer goes back to when the payment is over.
    pub return_url: Option<String>,
    pub extra_data: Option<String>,
    pub user_id: Option<String>,
    pub created_at: i64,
    pub expire_at: i64,
    /// The payer's URL token, in the clear only in memory.
    pub token: String,
    pub order: Option<Deposit>,
}

impl Session {
    pub fn status(&self, now: i64) -> SessionStatus {
        match &self.order {
            Some(order) => match order.status {
                DepositStatus::Pending | DepositStatus::Matched => SessionStatus::OrderCreated,
                DepositStatus::Completed => SessionStatus::Completed,
                DepositStatus::Expired => SessionStatus::Expired,
                DepositStatus::Cancelled => SessionStatus::Cancelled,
            },
            None if now >= self.expire_at => SessionStatus::Expired,
            None => SessionStatus::Open,
        }
    }

    pub fn url(&self, app: &App) -> String {
        format!(
            "{}/cashier/{}",
            app.config.public_base_url.trim_end_matches('/'),
            self.token
        )
    }
}

/// Reads `payer_bank_cards`: each needs a bank code and an account number;
/// only the code and the last four digits survive.
pub fn saved_cards(
    cards: Vec<std::collections::BTreeMap<String, String>>,
) -> Result<Vec<SavedCard>, ApiError> {
    const FIELD: &str = "payer_bank_cards";
    if cards.len() > MAX_CARDS {
        return Err(ApiError::invalid_field(
            FIELD,
            format!("must hold at most {MAX_CARDS} cards"),
        ));
    }
    cards
        .into_iter()
        .enumerate()
        .map(|(i, card)| {
            let bank_code = card.get("bank_code").map(|c| c.trim()).unwrap_or_default();
            let code_ok = (2..=16).contains(&bank_code.len())
                && bank_code
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !code_ok {
                return Err(ApiError::invalid_field(
                    format!("{FIELD}[{i}].bank_code"),
                    "must be 2 to 16 letters, digits or `_`",
                ));
            }
            let account: String = card
                .get("account_no")
                .map(|a| a.chars().filter(|c| !matches!(c, ' ' | '-')).collect())
                .unwrap_or_default();
            if !(4..=34).contains(&account.len()) || !account.bytes().all(|b| b.is_ascii_digit()) {
                return Err(ApiError::invalid_field(
                    format!("{FIELD}[{i}].account_no"),
                    "must be 4 to 34 digits",
                ));
            }
            Ok(SavedCard {
                bank_code: bank_code.to_ascii_uppercase(),
                account_last4: account[account.len() - 4..].to_string(),
            })
        })
        .collect()
}

fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!(
        "cs_{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

pub async fn create(app: &App, merchant: &Merchant, req: NewSession) -> Result<Session, ApiError> {
    if let Some(existing) = by_merchant_order_no(app, &merchant.id, &req.merchant_order_no).await? {
        return same_request_or_conflict(app, existing, &req).await;
    }
    // The number names one order; a direct deposit already holds it.
    if deposits::find_by_merchant_order_no(app, &merchant.id, &req.merchant_order_no)
        .await
        .is_ok()
    {
        return Err(ApiError::DuplicateMerchantOrderNo(req.merchant_order_no));
    }
    if req.amount.is_none()
        && app
            .config
            .denominations_for(&merchant.code, &req.currency)
            .is_empty()
    {
        return Err(ApiError::NoDenominations(req.currency));
    }
    let now = app.now_unix();
    let token = new_token();
    let row = CashierSessionRow {
        id: uuid::Uuid::new_v4().to_string(),
        merchant_id: merchant.id.clone(),
        merchant_order_no: req.merchant_order_no.clone(),
        request_fingerprint: req.fingerprint.clone(),
        token_hash: app.vault.lookup_hash(&token),
        token_sealed: app
            .vault
            .encrypt(&token)
            .map_err(|e| ApiError::Internal(e.to_string()))?,
        currency: req.currency.clone(),
        amount: match req.amount {
            Some(a) => {
                Some(to_units(a).ok_or_else(|| ApiError::invalid_field("amount", "is too large"))?)
            }
            None => None,
        },
        payer_cards: serde_json::to_string(&req.cards)
            .map_err(|e| ApiError::Internal(e.to_string()))?,
        callback_url: req.callback_url.clone(),
        extra_data: req.extra_data.clone(),
        user_id: req.user_id.clone(),
        created_at: now,
        return_url: req.return_url.clone(),
        expire_at: now + app.config.validity_for(&merchant.code, &req.currency),
    };
    let insert = row.clone();
    match app
        .db
        .run(|s| Box::pin(async move { s.insert_cashier_session(&insert).await }))
        .await
    {
        Ok(()) => {}
        Err(StoreError::Conflict {
            key: UniqueKey::CashierSessionMerchantOrderNo,
            ..
        }) => {
            let existing = by_merchant_order_no(app, &merchant.id, &req.merchant_order_no)
                .await?
                .ok_or_else(|| {
                    ApiError::Internal("conflict on merchant_order_no without a row".into())
                })?;
            return same_request_or_conflict(app, existing, &req).await;
        }
        Err(e) => return Err(e.into()),
    }
    let mut session = from_row(app, row)?;
    if let Some(amount) = session.amount {
        session.order = Some(order_for(app, merchant, &session, amount, None).await?);
    }
    Ok(session)
}

async fn same_request_or_conflict(
    app: &App,
    existing: CashierSessionRow,
    req: &NewSession,
) -> Result<Session, ApiError> {
    if !crate::keys::constant_time_eq(&existing.request_fingerprint, &req.fingerprint) {
        return Err(ApiError::DuplicateMerchantOrderNo(
            req.merchant_order_no.clone(),
        ));
    }
    let session = from_row(app, existing)?;
    with_order(app, session).await
}

/// The session a payer's URL names, if any.
pub async fn by_token(app: &App, token: &str) -> Result<Option<Session>, ApiError> {
    // Tokens are ours: anything else is unknown before it costs a query.
    if !token.starts_with("cs_") || token.len() > 64 {
        return Ok(None);
    }
    let hash = app.vault.lookup_hash(token);
    let row = app
        .db
        .run(|s| Box::pin(async move { s.cashier_session_by_token_hash(&hash).await }))
        .await?;
    match row {
        Some(row) => Ok(Some(with_order(app, from_row(app, row)?).await?)),
        None => Ok(None),
    }
}

pub async fn by_id(app: &App, id: &str) -> Result<Session, ApiError> {
    let i = id.to_string();
    let row = app
        .db
        .run(|s| Box::pin(async move { s.cashier_session_by_id(&i).await }))
        .await?
        .ok_or_else(|| ApiError::CashierSessionNotFound(id.to_string()))?;
    with_order(app, from_row(app, row)?).await
}

async fn by_merchant_order_no(
    app: &App,
    merchant_id: &str,
    merchant_order_no: &str,
) -> Result<Option<CashierSessionRow>, ApiError> {
    let (m, o) = (merchant_id.to_string(), merchant_order_no.to_string());
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.cashier_session_by_merchant_order_no(&m, &o).await }))
        .await?)
}

/// What the payer chose on the page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Choice {
    pub amount: Option<Decimal>,
    /// Index into the session's saved cards.
    pub card: Option<usize>,
}

/// Applies the payer's choice: creates the order (a denomination, or the
/// fixed amount) or, once it exists, records the card paying for it.
pub async fn choose(app: &App, session: &Session, choice: Choice) -> Result<Deposit, ApiError> {
    crate::suspension::refuse_if_suspended(app, &session.merchant_id).await?;
    let card =
        match choice.card {
            Some(i) => Some(session.cards.get(i).cloned().ok_or_else(|| {
                ApiError::invalid_field("card", "is not one of the cards offered")
            })?),
            None => None,
        };
    if let Some(order) = &session.order {
        if let Some(card) = card {
            let (o, c, l, now) = (
                order.order_no.clone(),
                card.bank_code,
                card.account_last4,
                app.now_unix(),
            );
            app.db
                .run(|s| Box::pin(async move { s.set_deposit_payer_card(&o, &c, &l, now).await }))
                .await?;
        }
        return deposits::find_any(app, &order.order_no).await;
    }
    if app.now_unix() >= session.expire_at {
        return Err(ApiError::InvalidStateTransition {
            order_no: session.id.clone(),
            status: SessionStatus::Expired.as_str().into(),
            action: "choosing an amount".into(),
        });
    }
    let merchant = merchants::find(app, &session.merchant_id).await?;
    let amount = match (session.amount, choice.amount) {
        (Some(fixed), _) => fixed,
        (None, Some(picked))
            if app
                .config
                .denominations_for(&merchant.code, &session.currency)
                .contains(&picked) =>
        {
            picked
        }
        (None, _) => {
            return Err(ApiError::invalid_field(
                "amount",
                "must be one of the amounts offered",
            ))
        }
    };
    order_for(app, &merchant, session, amount, card).await
}

/// Creates the session's order; a concurrent pick that got there first
/// wins, and its order is the answer.
async fn order_for(
    app: &App,
    merchant: &Merchant,
    session: &Session,
    amount: Decimal,
    card: Option<SavedCard>,
) -> Result<Deposit, ApiError> {
    let new = NewDeposit {
        merchant_order_no: session.merchant_order_no.clone(),
        amount,
        currency: session.currency.clone(),
        callback_url: session.callback_url.clone(),
        return_url: session.return_url.clone(),
        extra_data: session.extra_data.clone(),
        user_id: session.user_id.clone(),
        payer: Payer {
            bank_code: card.as_ref().map(|c| c.bank_code.clone()),
            ..Payer::default()
        },
        fingerprint: format!("cashier:{}:{}", session.id, amount.normalize()),
    };
    let link = CashierLink {
        session_id: session.id.clone(),
        expire_at: session.expire_at,
        payer_account_last4: card.map(|c| c.account_last4),
    };
    match deposits::create_linked(app, merchant, new, Some(link)).await {
        Ok(order) => Ok(order),
        Err(e) => match order_of(app, &session.id).await? {
            Some(order) => Ok(order),
            None => Err(e),
        },
    }
}

async fn order_of(app: &App, session_id: &str) -> Result<Option<Deposit>, ApiError> {
    let id = session_id.to_string();
    app.db
        .run(|s| Box::pin(async move { s.deposit_by(DepositKey::CashierSession(&id)).await }))
        .await?
        .map(Deposit::from_row)
        .transpose()
}

/// Loads the session's order; a fixed-amount session whose order is
/// missing (a crash between the two inserts) gets it now.
async fn with_order(app: &App, mut session: Session) -> Result<Session, ApiError> {
    session.order = order_of(app, &session.id).await?;
    if let (None, Some(amount)) = (&session.order, session.amount) {
        if app.now_unix() < session.expire_at {
            let merchant = merchants::find(app, &session.merchant_id).await?;
            session.order = Some(order_for(app, &merchant, &session, amount, None).await?);
        }
    }
    Ok(session)
}

fn from_row(app: &App, row: CashierSessionRow) -> Result<Session, ApiError> {
    let token = app
        .vault
        .decrypt(&row.token_sealed)
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let cards: Vec<SavedCard> = serde_json::from_str(&row.payer_cards)
        .map_err(|e| ApiError::Internal(format!("stored cards of {}: {e}", row.id)))?;
    Ok(Session {
        id: row.id,
        merchant_id: row.merchant_id,
        merchant_order_no: row.merchant_order_no,
        currency: row.currency,
        amount: row.amount.map(from_units),
        cards,
        callback_url: row.callback_url,
        return_url: row.return_url,
        extra_data: row.extra_data,
        user_id: row.user_id,
        created_at: row.created_at,
        expire_at: row.expire_at,
        token,
        order: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn card(code: &str, no: &str) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("bank_code".to_string(), code.to_string()),
            ("account_no".to_string(), no.to_string()),
        ])
    }

    #[test]
    fn only_the_bank_code_and_last_four_digits_are_kept() {
        let kept = saved_cards(vec![card("kbank", "123-456-7890"), card("SCB", "0001")]).unwrap();
        assert_eq!(
            kept,
            vec![
                SavedCard {
                    bank_code: "KBANK".into(),
                    account_last4: "7890".into()
                },
                SavedCard {
                    bank_code: "SCB".into(),
                    account_last4: "0001".into()
                },
            ]
        );
    }

    #[test]
    fn a_bad_card_names_its_place() {
        let err = saved_cards(vec![card("KBANK", "1234"), card("KBANK", "12a4")]).unwrap_err();
        assert!(
            err.to_string().contains("payer_bank_cards[1].account_no"),
            "{err}"
        );
        let err = saved_cards(vec![BTreeMap::new()]).unwrap_err();
        assert!(
            err.to_string().contains("payer_bank_cards[0].bank_code"),
            "{err}"
        );
        let many = (0..11).map(|_| card("KBANK", "1234")).collect();
        assert!(saved_cards(many).is_err());
    }

    #[test]
    fn tokens_carry_256_bits() {
        let t = new_token();
        assert!(t.starts_with("cs_"));
        assert_eq!(t.len(), 3 + 43);
        assert_ne!(t, new_token());
    }
}
