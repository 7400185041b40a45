//! The audit row of the operator action a request is taking, carried to
//! the transaction that performs it.
//!
//! Why a task-local and not a parameter: the use cases an operator calls
//! are also called by jobs, the sandbox's pages and tests, none of which
//! is an operator. The operator API (`app::audit::acting`) puts the row
//! in scope for the request; the first `Db::transaction` the action
//! commits appends it, with the target's settings before and after read
//! inside that same transaction. So an action cannot commit without its
//! row, a refused or failed action writes none, and the later units of
//! the same request (a dispatch after an approval) do not repeat it.

use super::queries::Store;
use super::rows::AuditRow;
use super::StoreResult;
use std::cell::RefCell;

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
}

tokio::task_local! {
    static PENDING: RefCell<Option<PendingAudit>>;
}

/// Runs `work` with `pending` as its action's audit row.
pub async fn scoped<F: std::future::Future>(pending: PendingAudit, work: F) -> F::Output {
    PENDING.scope(RefCell::new(Some(pending)), work).await
}

/// Changes the row in scope (its target, its remarks) before the action's
/// transaction; nothing happens outside an action's scope.
pub fn amend(f: impl FnOnce(&mut PendingAudit)) {
    let _ = PENDING.try_with(|p| {
        if let Some(pending) = p.borrow_mut().as_mut() {
            f(pending);
        }
    });
}

/// The row a transaction starting now must append, if any.
pub(super) fn pending() -> Option<PendingAudit> {
    PENDING.try_with(|p| p.borrow().clone()).ok().flatten()
}

/// The row was committed: no later unit of this action appends it again.
pub(super) fn written() {
    let _ = PENDING.try_with(|p| p.borrow_mut().take());
}

/// Whether the action in scope has not committed its row (yet): asked
/// after the action succeeded, to report one that wrote nothing through
/// a transaction.
pub fn still_pending() -> bool {
    PENDING.try_with(|p| p.borrow().is_some()).unwrap_or(false)
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
