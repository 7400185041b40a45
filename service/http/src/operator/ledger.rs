//! The ledger check: every balance against its journal.

use crate::app::App;
use crate::domain::error::ApiError;
use crate::domain::people::Action;
use crate::operator::auth::operate;
use dropshot::{HttpError, HttpResponseOk, RequestContext};
use merchant_api::operator::types;
use payments_wire::server::BearerToken;
use std::sync::Arc;

pub(super) async fn check_ledger(
    rqctx: RequestContext<Arc<App>>,
    headers: BearerToken,
) -> Result<HttpResponseOk<types::LedgerReport>, HttpError> {
    operate(&rqctx, &headers, Action::Read, |app, _| async move {
        ledger_view(&app).await
    })
    .await
}

/// The ledger check's report in the contract's shape.
pub async fn ledger_view(app: &App) -> Result<types::LedgerReport, ApiError> {
    let report = crate::app::ledger::check(app).await?;
    Ok(types::LedgerReport {
        ok: report.ok(),
        entries_checked: report.entries_checked,
        balances_checked: report.balances_checked,
        differences: report
            .differences
            .into_iter()
            .map(|d| types::LedgerDifference {
                kind: match d.kind {
                    "unbalanced_entry" => types::LedgerDifferenceKind::UnbalancedEntry,
                    "negative_balance" => types::LedgerDifferenceKind::NegativeBalance,
                    _ => types::LedgerDifferenceKind::BalanceMismatch,
                },
                reference: d.reference,
                detail: d.detail,
            })
            .collect(),
    })
}
