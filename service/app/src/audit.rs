//! The audit trail: every operator action, who took it, when, on what and
//! why, appended in the transaction of the action (`store::audit` says
//! how) and never changed after (each dialect's trigger refuses it).

use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::listings::{self, Listing, Page};
use crate::people::Operator;
use crate::store::audit::{self, PendingAudit, Snapshot};
pub use crate::store::queries::people::AuditFilter;
pub use crate::store::rows::AuditRow;
use crate::App;

/// What an action is taken on.
#[derive(Clone, Debug)]
pub enum Target {
    Merchant(String),
    /// A merchant about to be created: its id is known once it is.
    NewMerchant,
    Operator(String),
    NewOperator,
    Order(String),
    BankTransaction(String),
    /// A bank transaction about to be recorded.
    NewBankTransaction,
    CallbackDelivery(String),
}

impl Target {
    fn parts(self) -> (&'static str, String, Snapshot) {
        match self {
            Target::Merchant(id) => ("merchant", id, Snapshot::Merchant),
            Target::NewMerchant => ("merchant", String::new(), Snapshot::Merchant),
            Target::Operator(id) => ("operator", id, Snapshot::Operator),
            Target::NewOperator => ("operator", String::new(), Snapshot::Operator),
            Target::Order(no) => ("order", no, Snapshot::None),
            Target::BankTransaction(id) => ("bank_transaction", id, Snapshot::None),
            Target::NewBankTransaction => ("bank_transaction", String::new(), Snapshot::None),
            Target::CallbackDelivery(id) => ("callback_delivery", id, Snapshot::None),
        }
    }
}

/// Runs `work`, the operator's `action`, with its audit row in scope:
/// the first transaction it commits appends the row. `work` names the
/// target (`on`) and the remarks (`because`) once it has read them. An
/// action that succeeded without a transaction of its own gets one for
/// its row; one that failed has none.
pub async fn acting<T, F>(
    app: &App,
    by: &Operator,
    action: Action,
    request_id: &str,
    work: F,
) -> Result<T, ApiError>
where
    F: std::future::Future<Output = Result<T, ApiError>>,
{
    let row = AuditRow {
        id: uuid::Uuid::new_v4().to_string(),
        created_at: app.now_unix(),
        operator_id: by.id.clone(),
        operator_name: by.name.clone(),
        role: by.role,
        action: action.name().to_string(),
        target_type: String::new(),
        target_id: String::new(),
        remarks: None,
        request_id: request_id.to_string(),
        before_state: None,
        after_state: None,
    };
    let pending = PendingAudit {
        row,
        snapshot: Snapshot::None,
    };
    audit::scoped(pending, async {
        let value = work.await?;
        if audit::still_pending() {
            // It succeeded and changed nothing (a replay of a bank
            // transaction already recorded): still an action, on its own.
            app.db
                .transaction::<_, ApiError, _>(|_| Box::pin(async { Ok(()) }))
                .await?;
        }
        Ok(value)
    })
    .await
}

/// Names what the action in scope is taken on.
pub fn on(target: Target) {
    let (target_type, target_id, snapshot) = target.parts();
    audit::amend(|p| {
        p.row.target_type = target_type.to_string();
        p.row.target_id = target_id;
        p.snapshot = snapshot;
    });
}

/// Gives the action in scope its remarks.
pub fn because(remarks: Option<&str>) {
    let remarks = remarks.map(str::to_string);
    audit::amend(|p| p.row.remarks = remarks);
}

/// The trail, newest first, filtered by operator, action or target.
pub async fn list(
    app: &App,
    listing: Listing,
    filter: AuditFilter,
) -> Result<Page<AuditRow>, ApiError> {
    if let Some(a) = &filter.action {
        if Action::parse(a).is_none_or(|a| !a.writes()) {
            return Err(ApiError::invalid_field(
                "action",
                "is not an audited action",
            ));
        }
    }
    listings::audit_events(app, listing, filter).await
}
