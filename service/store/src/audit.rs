//! The audit row of an operator's action, appended by the transaction that
//! makes the change (`Db::transaction_audited`), with the target's
//! settings read before and after inside that same transaction: the action
//! cannot commit without its row, and a refused or failed action writes
//! none. The use case builds the row (`app::actor::Actor::audit`) and hands
//! it to the one transaction that is the action.

use super::queries::Store;
use super::rows::AuditRow;
use super::StoreResult;

/// What the settings of an action's target are snapshotted as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Snapshot {
    /// Nothing: the action changes an order, not a setting.
    None,
    /// The merchant's settings and fee rates (never a key or secret).
    Merchant,
    /// The operator's name, email, role and status.
    Operator,
}

#[derive(Clone, Debug)]
pub struct PendingAudit {
    /// The row, its states still empty.
    pub row: AuditRow,
    pub snapshot: Snapshot,
    /// The change request whose approval this action is: marked approved
    /// in the same transaction, or the action does not commit.
    pub approves: Option<Approving>,
}

/// A pending change request's approval, carried by the action it approves.
#[derive(Clone, Debug)]
pub struct Approving {
    pub change_request_id: String,
    pub by_id: String,
    pub by_name: String,
    pub remarks: Option<String>,
}

/// The target's settings as a JSON document, read in the transaction.
pub(super) async fn snapshot(
    tx: &mut dyn Store,
    kind: Snapshot,
    target: &str,
) -> StoreResult<Option<String>> {
    let doc = match kind {
        Snapshot::None => return Ok(None),
        Snapshot::Merchant => {
            let Some(m) = tx.merchant_by_id(target).await? else {
                return Ok(None);
            };
            let fees: Vec<serde_json::Value> = tx
                .fees_of(target)
                .await?
                .into_iter()
                .map(|f| {
                    serde_json::json!({
                        "currency": f.currency, "direction": f.direction,
                        "percent": f.percent, "fixed_units": f.fixed, "minimum_units": f.minimum,
                    })
                })
                .collect();
            serde_json::json!({
                "name": m.name,
                "status": m.status.as_str(),
                "callback_timeout_seconds": m.callback_timeout_seconds,
                "auto_approval": m.auto_approval.as_str(),
                "auto_approval_limits": raw(&m.auto_approval_limits),
                "rate_limit_per_minute": m.rate_limit_per_minute,
                "rate_limit_burst": m.rate_limit_burst,
                "receiving_accounts": raw(&m.receiving_accounts),
                "callback_scheme": m.callback_scheme.as_str(),
                "fees": fees,
            })
        }
        Snapshot::Operator => {
            let Some(o) = tx.operator_by_id(target).await? else {
                return Ok(None);
            };
            serde_json::json!({
                "name": o.name, "email": o.email,
                "role": o.role.as_str(), "status": o.status.as_str(),
            })
        }
    };
    Ok(Some(doc.to_string()))
}

/// A settings document as stored, kept as JSON where it is.
fn raw(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_string()))
}
