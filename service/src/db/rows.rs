//! Database rows, kept apart from the domain types: a row is what a table
//! holds, in the units the table holds it.

use super::schema::*;
use diesel::prelude::*;

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = merchants)]
pub struct MerchantRow {
    pub id: String,
    pub code: String,
    pub name: String,
    pub status: String,
    pub callback_timeout_seconds: i32,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = api_keys)]
pub struct ApiKeyRow {
    pub id: String,
    pub merchant_id: String,
    pub key_hash: String,
    pub key_ciphertext: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = deposit_orders)]
pub struct DepositRow {
    pub id: String,
    pub order_no: String,
    pub merchant_id: String,
    pub merchant_order_no: String,
    pub request_fingerprint: String,
    pub order_type: String,
    pub route: String,
    pub status: String,
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
    pub callback_status: String,
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
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = balances)]
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
