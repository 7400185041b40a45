//! The change request row (`domain::four_eyes`), apart from the rest of
//! `rows` only to keep each file short.

use crate::domain::four_eyes::ChangeRequestStatus;
use crate::schema::change_requests;
use diesel::prelude::*;

/// A change request: one person's money action, waiting for a second
/// (`domain::four_eyes`). `parameters` is JSON of exactly what will be done.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = change_requests, treat_none_as_default_value = false)]
pub struct ChangeRequestRow {
    pub id: String,
    pub action: String,
    pub target: String,
    pub merchant_id: Option<String>,
    pub parameters: String,
    pub summary: String,
    pub remarks: Option<String>,
    pub status: ChangeRequestStatus,
    pub requested_by: String,
    pub requested_by_name: String,
    pub requested_at: i64,
    pub expires_at: i64,
    pub decided_by: Option<String>,
    pub decided_by_name: Option<String>,
    pub decided_at: Option<i64>,
    pub decision_remarks: Option<String>,
}
