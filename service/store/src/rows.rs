//! Database rows, kept apart from the domain types: a row is what a table
//! holds, in the units the table holds it.
//!
//! Every insertable row writes `None` as NULL (`treat_none_as_default_value
//! = false`; no nullable column has a default). diesel's default writes
//! `DEFAULT` for a `None`, which makes the statement's text depend on the
//! values, so it is never cached: PostgreSQL parsed and planned every
//! insert again, one more round trip each.

use super::schema::*;
use crate::domain::routing::Route;
use crate::domain::schedule::Outcome;
use crate::domain::status::{
    AuditRole, AutoApprovalMode, BankTransactionStatus, BillingPeriod, CallbackScheme,
    CallbackStatus, DeliveryStatus, DepositStatus, InvitationReason, InvitationStatus, KeyScope,
    MerchantStatus, NotificationKind, NotificationOutcome, OperatorStatus, OrderKind, OrderType,
    OwnerStatus, PayoutMethod, Role, StatementStatus, WithdrawalStatus,
};
mod changes;
mod sessions;
pub use changes::ChangeRequestRow;
use diesel::prelude::*;
pub use sessions::{
    FailureTally, LoginFailureRow, SecondFactorRow, SecretRevealRow, WebSessionRow,
};

/// The columns a row type reads, in its fields' order: what every query
/// selects (and every `RETURNING` returns), read back through the row's
/// `Queryable`. diesel's `as_select()` reads the same columns in the same
/// order (both derives follow the struct's fields), but borrow-checking
/// its `SelectBy` for a row with a nullable column cost every query 2 to 5
/// seconds of compile time (measured with `-Zself-profile`): 313 of the
/// crate's 464 seconds, paid by every build of the service.
pub fn columns<R: Selectable<diesel::pg::Pg>>() -> R::SelectExpression {
    R::construct_selection()
}

/// A merchant's request budget shared by every instance
/// (`ratelimit::Bucket` does its arithmetic).
#[derive(Debug, Clone, PartialEq, Eq, Queryable, QueryableByName, Selectable, Insertable)]
#[diesel(table_name = rate_buckets, treat_none_as_default_value = false)]
pub struct RateBucketRow {
    pub merchant_id: String,
    pub units: i64,
    pub at_ms: i64,
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = merchants, treat_none_as_default_value = false)]
pub struct MerchantRow {
    pub id: String,
    pub code: String,
    pub name: String,
    pub status: MerchantStatus,
    pub callback_timeout_seconds: i32,
    pub created_at: i64,
    pub updated_at: i64,
    pub auto_approval: AutoApprovalMode,
    /// Currency → the largest amount (units) approved at creation, JSON;
    /// read only in mode `up_to`.
    pub auto_approval_limits: String,
    pub rate_limit_per_minute: Option<i32>,
    pub rate_limit_burst: Option<i32>,
    /// Currency → receiving account id, JSON.
    pub receiving_accounts: String,
    pub callback_scheme: CallbackScheme,
    /// The callback secrets, encrypted, with when each was made and stops
    /// signing: a JSON array read by `app::callbacks::signing`.
    pub callback_secrets: String,
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = api_keys, treat_none_as_default_value = false)]
pub struct ApiKeyRow {
    pub id: String,
    pub merchant_id: String,
    pub key_hash: String,
    pub key_ciphertext: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    /// The networks it is accepted from, comma-separated and normalised
    /// (`domain::address::allowlist`); `None` for anywhere.
    pub allowed_addresses: Option<String>,
    pub scope: KeyScope,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = deposit_orders, treat_none_as_default_value = false)]
pub struct DepositRow {
    pub id: String,
    pub order_no: String,
    pub merchant_id: String,
    pub merchant_order_no: String,
    pub request_fingerprint: String,
    pub order_type: OrderType,
    pub route: Route,
    pub status: DepositStatus,
    pub currency: String,
    pub requested_amount: i64,
    pub amount: i64,
    pub fee: i64,
    pub actual_amount: i64,
    pub expected_remark: Option<String>,
    pub account_id: Option<String>,
    pub channel_id: Option<String>,
    pub channel_order_no: Option<String>,
    pub payment_url: Option<String>,
    pub payment_snapshot: String,
    pub callback_url: Option<String>,
    pub callback_status: CallbackStatus,
    pub callback_count: i32,
    pub user_id: Option<String>,
    pub extra_data: Option<String>,
    pub payer_account_holder: Option<String>,
    pub payer_mobile: Option<String>,
    pub payer_email: Option<String>,
    pub payer_bank_code: Option<String>,
    pub payer_account_no: Option<String>,
    pub payer_account_last4: Option<String>,
    pub cashier_session_id: Option<String>,
    pub estimated_channel_cost: Option<i64>,
    pub estimated_profit: Option<i64>,
    pub actual_channel_cost: Option<i64>,
    pub actual_profit: Option<i64>,
    pub expire_at: i64,
    pub matched_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// Set only on floating-amount orders: the amount that identifies them.
    pub match_amount: Option<i64>,
    /// An account order's receiving account's name at creation.
    pub account_name: Option<String>,
    /// The merchant's page the payer goes back to when the payment is over.
    pub return_url: Option<String>,
}

#[derive(Debug, Clone, Queryable, QueryableByName, Selectable, Insertable)]
#[diesel(table_name = balances, treat_none_as_default_value = false)]
pub struct BalanceRow {
    pub id: String,
    pub merchant_id: String,
    pub currency: String,
    pub available: i64,
    pub frozen: i64,
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = journal_entries, treat_none_as_default_value = false)]
pub struct JournalEntryRow {
    pub id: String,
    pub merchant_id: String,
    pub currency: String,
    pub kind: String,
    pub order_no: String,
    pub created_at: i64,
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = postings, treat_none_as_default_value = false)]
pub struct PostingRow {
    pub id: String,
    pub entry_id: String,
    pub account: String,
    pub currency: String,
    pub amount: i64,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = withdrawal_orders, treat_none_as_default_value = false)]
pub struct WithdrawalRow {
    pub id: String,
    pub order_no: String,
    pub merchant_id: String,
    pub merchant_order_no: String,
    pub request_fingerprint: String,
    pub status: WithdrawalStatus,
    pub currency: String,
    pub amount: i64,
    pub fee: i64,
    pub actual_amount: i64,
    pub beneficiary_name: String,
    pub beneficiary_account: String,
    pub beneficiary_bank_code: String,
    pub beneficiary_bank_name: Option<String>,
    pub beneficiary_bank_branch: Option<String>,
    pub payout_method: PayoutMethod,
    pub is_auto_approved: bool,
    pub approved_at: Option<i64>,
    pub approved_by: Option<String>,
    pub approval_remarks: Option<String>,
    pub processed_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub rejected_at: Option<i64>,
    pub failed_at: Option<i64>,
    pub bank_reference: Option<String>,
    pub callback_url: Option<String>,
    pub callback_status: CallbackStatus,
    pub callback_count: i32,
    pub needs_manual_intervention: bool,
    pub manual_reason: Option<String>,
    pub channel_id: Option<String>,
    pub channel_order_no: Option<String>,
    pub estimated_channel_cost: Option<i64>,
    pub estimated_profit: Option<i64>,
    pub actual_channel_cost: Option<i64>,
    pub actual_profit: Option<i64>,
    pub extra_data: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub payout_sent_at: Option<i64>,
    pub payout_inquired_at: Option<i64>,
    /// How many different approvers it needs, decided at creation
    /// (`app::withdrawals::approvals`).
    pub approvals_required: i32,
    /// Who decided it, by operator id (none before 000028, and for the
    /// merchant's auto-approval).
    pub approver_id: Option<String>,
    /// Why its payout goes to its channel (`domain::routing::table::Decision`
    /// as JSON string pairs); none before 000035.
    pub routing: Option<String>,
    /// How many approvals it has had: the count of its
    /// `withdrawal_approvals` rows, kept by `lock_pending_withdrawal`.
    pub approvals_given: i32,
}

/// A routing table the operators set (`scope` '' for every merchant).
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = routing_tables, treat_none_as_default_value = false)]
pub struct RoutingTableRow {
    pub scope: String,
    pub currency: String,
    pub direction: String,
    pub candidates: String,
    pub updated_at: i64,
    pub updated_by: String,
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = merchant_fees, treat_none_as_default_value = false)]
pub struct FeeRow {
    pub merchant_id: String,
    pub currency: String,
    pub direction: String,
    pub percent: String,
    pub fixed: i64,
    pub minimum: i64,
    pub updated_at: i64,
}

/// The sum of an account's postings in one currency.
#[derive(Debug, Clone, QueryableByName)]
pub struct AccountSum {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub account: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub currency: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub total: i64,
}

/// A journal entry whose postings do not sum to zero.
#[derive(Debug, Clone, QueryableByName)]
pub struct EntrySum {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub entry_id: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub total: i64,
}

#[derive(Debug, Clone, PartialEq, Queryable, QueryableByName, Selectable, Insertable)]
#[diesel(table_name = callback_deliveries, treat_none_as_default_value = false)]
pub struct CallbackDeliveryRow {
    pub id: String,
    pub merchant_id: String,
    pub order_kind: OrderKind,
    pub order_no: String,
    pub event: String,
    pub callback_url: String,
    pub body: String,
    pub status: DeliveryStatus,
    pub attempts: i32,
    pub next_attempt_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// Set at the first attempt and reused by every retry.
    pub signature: Option<String>,
    /// The current claim's; an attempt records its result only under it.
    pub claim_token: Option<String>,
    /// When the unit of work that queued it began, in milliseconds.
    pub queued_at_ms: Option<i64>,
    /// The receiver's `host[:port]`, lowercased: what the claim caps
    /// attempts in flight by. None on records from before it was kept.
    pub receiver_host: Option<String>,
    /// The API key that made `signature` (seed scheme): the signature is
    /// reused only while that key works.
    pub signing_key_id: Option<String>,
    /// When the order was created: no key issued later is sent with its
    /// callbacks. None on platform events and on records from before.
    pub order_created_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = callback_attempts, treat_none_as_default_value = false)]
pub struct CallbackAttemptRow {
    pub id: String,
    pub delivery_id: String,
    pub attempt: i32,
    pub scheduled_at: i64,
    pub started_at: i64,
    pub duration_ms: i64,
    pub status_code: Option<i32>,
    pub error: Option<String>,
    pub outcome: Outcome,
    pub next_attempt_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = bank_transactions, treat_none_as_default_value = false)]
pub struct BankTransactionRow {
    pub id: String,
    pub account_id: String,
    pub bank_reference: String,
    pub currency: String,
    pub amount: i64,
    pub remark: Option<String>,
    pub payer_name: Option<String>,
    pub payer_account_last4: Option<String>,
    pub fingerprint: String,
    pub status: BankTransactionStatus,
    pub order_no: Option<String>,
    pub received_at: i64,
    pub matched_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// One notification from a channel's adapter, as recorded.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = channel_notifications, treat_none_as_default_value = false)]
pub struct ChannelNotificationRow {
    pub id: String,
    pub channel_id: String,
    pub notification_id: String,
    pub kind: NotificationKind,
    pub order_no: String,
    pub amount: Option<i64>,
    pub channel_cost: Option<i64>,
    pub reference: Option<String>,
    pub reason: Option<String>,
    pub outcome: NotificationOutcome,
    pub occurred_at: i64,
    pub received_at: i64,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = cashier_sessions, treat_none_as_default_value = false)]
pub struct CashierSessionRow {
    pub id: String,
    pub merchant_id: String,
    pub merchant_order_no: String,
    pub request_fingerprint: String,
    pub token_hash: String,
    pub token_sealed: String,
    pub currency: String,
    pub amount: Option<i64>,
    /// JSON: `[{"bank_code": …, "account_last4": …}]`.
    pub payer_cards: String,
    pub callback_url: Option<String>,
    pub extra_data: Option<String>,
    pub user_id: Option<String>,
    pub created_at: i64,
    pub expire_at: i64,
    pub return_url: Option<String>,
}

/// Declares a named update: a changeset whose leading columns every
/// update of its kind sets, and whose `Option` columns only the moves that
/// change them set (`None` leaves a column as it is). The constructor takes
/// the leading columns and leaves every other one `None`, so a column added
/// to the update is never written by a move that does not name it.
macro_rules! named_update {
    (
        $(#[$meta:meta])*
        $name:ident on $table:ident, fn $ctor:ident($($set:ident: $set_ty:ty),+ $(,)?)
        { $($column:ident: $column_ty:ty),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, AsChangeset)]
        #[diesel(table_name = $table)]
        pub struct $name {
            $(pub $set: $set_ty,)+
            $(pub $column: Option<$column_ty>,)+
        }

        impl $name {
            pub fn $ctor($($set: $set_ty),+) -> $name {
                $name { $($set,)+ $($column: None,)+ }
            }
        }
    };
}

named_update! {
    /// One deposit move as it is written: the new status, when, and only
    /// the columns that move sets. The use cases build one per move
    /// (`app::deposits::moves`); nothing writes a whole order row after its
    /// insert.
    DepositMove on deposit_orders, fn to(status: DepositStatus, updated_at: i64) {
        callback_status: CallbackStatus,
        matched_at: i64,
        completed_at: i64,
        actual_amount: i64,
        fee: i64,
        actual_channel_cost: i64,
        actual_profit: i64,
    }
}

named_update! {
    /// One change to a merchant's settings as it is written: when, and only
    /// the columns it sets. Built in `app::merchants`, one constructor per
    /// setting.
    MerchantChange on merchants, fn at(updated_at: i64) {
        status: MerchantStatus,
        auto_approval: AutoApprovalMode,
        auto_approval_limits: String,
        rate_limit_per_minute: i32,
        rate_limit_burst: i32,
        callback_timeout_seconds: i32,
        receiving_accounts: String,
        callback_scheme: CallbackScheme,
        callback_secrets: String,
    }
}

named_update! {
    /// One withdrawal move as it is written, as `DepositMove` is for
    /// deposits (built in `app::withdrawals`).
    WithdrawalMove on withdrawal_orders, fn to(status: WithdrawalStatus, updated_at: i64) {
        callback_status: CallbackStatus,
        approved_at: i64,
        approved_by: String,
        approver_id: String,
        approval_remarks: String,
        rejected_at: i64,
        processed_at: i64,
        completed_at: i64,
        failed_at: i64,
        actual_amount: i64,
        bank_reference: String,
        channel_order_no: String,
        actual_channel_cost: i64,
        actual_profit: i64,
        manual_reason: String,
        needs_manual_intervention: bool,
        payout_sent_at: i64,
        payout_inquired_at: i64,
    }
}

impl DepositRow {
    /// What the unit of work tells of this row once committed.
    pub(crate) fn written(&self, created: bool) -> crate::OrderWritten {
        crate::OrderWritten {
            kind: "deposit",
            order_no: self.order_no.clone(),
            merchant_order_no: self.merchant_order_no.clone(),
            merchant_id: self.merchant_id.clone(),
            currency: self.currency.clone(),
            status: self.status.as_str(),
            created,
        }
    }

    /// What the order's callback bodies say about it.
    pub fn facts(&self) -> crate::domain::events::DepositFacts<'_> {
        crate::domain::events::DepositFacts {
            order_no: &self.order_no,
            merchant_order_no: &self.merchant_order_no,
            currency: &self.currency,
            status: self.status,
            requested_amount: self.requested_amount,
            actual_amount: self.actual_amount,
            matched_at: self.matched_at,
            completed_at: self.completed_at,
        }
    }
}

impl WithdrawalRow {
    /// What the unit of work tells of this row once committed.
    pub(crate) fn written(&self, created: bool) -> crate::OrderWritten {
        crate::OrderWritten {
            kind: "withdrawal",
            order_no: self.order_no.clone(),
            merchant_order_no: self.merchant_order_no.clone(),
            merchant_id: self.merchant_id.clone(),
            currency: self.currency.clone(),
            status: self.status.as_str(),
            created,
        }
    }

    /// What the order's callback bodies say about it.
    pub fn facts(&self) -> crate::domain::events::WithdrawalFacts<'_> {
        crate::domain::events::WithdrawalFacts {
            order_no: &self.order_no,
            merchant_order_no: &self.merchant_order_no,
            currency: &self.currency,
            status: self.status,
            amount: self.amount,
        }
    }
}

/// A state change of a merchant's order as its feed shows it; `position`
/// is none until the sequencer has placed it.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = merchant_events)]
pub struct MerchantEventRow {
    pub seq: i64,
    pub id: String,
    pub merchant_id: String,
    pub order_kind: OrderKind,
    pub order_no: String,
    pub event: String,
    pub body: String,
    pub delivery_id: Option<String>,
    pub created_at: i64,
    pub position: Option<i64>,
}

/// A state change as it is written, before the sequencer places it.
#[derive(Debug, Clone, PartialEq, Insertable)]
#[diesel(table_name = merchant_events, treat_none_as_default_value = false)]
pub struct NewMerchantEventRow {
    pub id: String,
    pub merchant_id: String,
    pub order_kind: OrderKind,
    pub order_no: String,
    pub event: String,
    pub body: String,
    pub delivery_id: Option<String>,
    pub created_at: i64,
    pub position: Option<i64>,
}

/// One change of a merchant's balance in one currency.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = balance_transactions, treat_none_as_default_value = false)]
pub struct BalanceTransactionRow {
    pub id: String,
    pub merchant_id: String,
    pub currency: String,
    pub version: i64,
    pub kind: String,
    pub order_no: String,
    pub merchant_order_no: String,
    pub available_change: i64,
    pub frozen_change: i64,
    pub fee: i64,
    pub available_after: i64,
    pub frozen_after: i64,
    pub created_at: i64,
}

/// What one day's lines of one kind came to.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct KindTotal {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub kind: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub count: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub available_change: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub frozen_change: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub fee: i64,
}

/// One merchant's balance lines in one currency, summed.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct LineSum {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub merchant_id: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub currency: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub lines: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub available: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub frozen: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub last_version: i64,
}

/// A UTC day (days since 1970-01-01) on which a merchant's balance in one
/// currency changed.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct LineDay {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub merchant_id: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub currency: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub day: i64,
}

#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct Counted {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub n: i64,
}

/// An operator: a person with a role (`domain::people`).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = operators, treat_none_as_default_value = false)]
pub struct OperatorRow {
    pub id: String,
    pub name: String,
    pub email: String,
    pub role: Role,
    pub status: OperatorStatus,
    pub created_at: i64,
    pub updated_at: i64,
    /// The person who last made or raised the operator; `None` for the
    /// configuration or the command line.
    pub made_by: Option<String>,
    /// The second admin who vouched for them, or `bootstrap`; `None` while
    /// they do not count as a second person.
    pub vouched_by: Option<String>,
    pub vouched_at: Option<i64>,
}

impl OperatorRow {
    /// Whether they count as a second person (`domain::four_eyes`).
    pub fn vouched(&self) -> bool {
        self.vouched_by.is_some()
    }
}

/// An operator's API token, kept only as its keyed hash.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = operator_tokens, treat_none_as_default_value = false)]
pub struct OperatorTokenRow {
    pub id: String,
    pub operator_id: String,
    pub token_hash: String,
    pub label: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    /// When it stops working; None on tokens issued before tokens expired.
    pub expires_at: Option<i64>,
}

/// A merchant's owner. `password_hash` is an Argon2id PHC string, set
/// when an invitation is accepted; `Debug` leaves it out.
#[derive(Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = merchant_owners, treat_none_as_default_value = false)]
pub struct OwnerRow {
    pub id: String,
    pub merchant_id: String,
    pub email: String,
    pub status: OwnerStatus,
    pub password_hash: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl std::fmt::Debug for OwnerRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnerRow")
            .field("id", &self.id)
            .field("merchant_id", &self.merchant_id)
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

/// An owner invitation; its token is kept only as its keyed hash.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = owner_invitations, treat_none_as_default_value = false)]
pub struct InvitationRow {
    pub id: String,
    pub merchant_id: String,
    pub owner_id: String,
    pub email: String,
    pub token_hash: String,
    pub status: InvitationStatus,
    pub reason: InvitationReason,
    pub issued_by: String,
    pub issued_at: i64,
    pub expires_at: i64,
    pub ended_at: Option<i64>,
}

/// One approval of a withdrawal by one approver.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = withdrawal_approvals, treat_none_as_default_value = false)]
pub struct ApprovalRow {
    pub order_no: String,
    pub approver_key: String,
    pub approver_name: String,
    pub remarks: Option<String>,
    pub approved_at: i64,
    /// Sorts in the order the approvals were made (empty before 000028).
    pub id: String,
}

/// One line of the audit trail; `before_state` and `after_state` are JSON
/// documents of a setting as it was and became.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = audit_events, treat_none_as_default_value = false)]
pub struct AuditRow {
    pub id: String,
    pub created_at: i64,
    /// The operator's id (absent for a configuration token), or the
    /// owner's, for an owner's row.
    pub operator_id: Option<String>,
    /// The operator's name, or the owner's email.
    pub operator_name: String,
    pub role: AuditRole,
    pub action: String,
    pub target_type: String,
    pub target_id: String,
    pub remarks: Option<String>,
    pub request_id: String,
    pub before_state: Option<String>,
    pub after_state: Option<String>,
}

named_update! {
    /// A change of an operator's name, role or status.
    OperatorChange on operators, fn at(updated_at: i64) {
        name: String,
        role: Role,
        status: OperatorStatus,
    }
}

/// A billing statement; its totals are `domain::billing::CurrencyTotals`
/// as JSON, its PDF in `billing_documents`.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = billing_statements, treat_none_as_default_value = false)]
pub struct StatementRow {
    pub id: String,
    pub merchant_id: String,
    pub number: String,
    pub version: i32,
    pub status: StatementStatus,
    pub billing_period: BillingPeriod,
    pub period_start: i64,
    pub period_end: i64,
    pub totals: String,
    pub document_sha256: String,
    pub document_bytes: i64,
    pub issued_by: String,
    pub issued_at: i64,
    pub remarks: Option<String>,
    pub superseded_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = billing_documents, treat_none_as_default_value = false)]
pub struct DocumentRow {
    pub statement_id: String,
    pub pdf: Vec<u8>,
}

/// Where a merchant's billing stands: its period setting (none: the
/// default) and where its last statement ended (none: never billed).
#[derive(Debug, Clone, QueryableByName)]
pub struct BillingCursor {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub merchant_id: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub created_at: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    pub billing_period: Option<BillingPeriod>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::BigInt>)]
    pub billed_until: Option<i64>,
}
