//! The audit trail: every operator action, who took it, when, on what and
//! why, appended in the transaction of the action and never changed after
//! (each dialect's trigger refuses it). The use case names its target and
//! remarks (`Actor::audit`) and hands the row to the one transaction that
//! makes the change (`Db::transaction_audited`).

use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::listings::{self, Listing, Page};
pub use crate::store::queries::people::AuditFilter;
pub use crate::store::rows::AuditRow;
use crate::App;

pub use crate::actor::Target;

/// The trail, newest first, filtered by operator, action or target.
pub async fn list(
    app: &App,
    listing: Listing,
    filter: AuditFilter,
) -> Result<Page<AuditRow>, ApiError> {
    if let Some(a) = &filter.action {
        let expiry = a == crate::domain::four_eyes::EXPIRED_ACTION;
        let owners = crate::domain::people::OwnerAction::parse(a).is_some();
        if !expiry && !owners && Action::parse(a).is_none_or(|a| !a.writes()) {
            return Err(ApiError::invalid_field(
                "action",
                "is not an audited action",
            ));
        }
    }
    listings::audit_events(app, listing, filter).await
}
