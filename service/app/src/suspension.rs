//! A merchant suspended, and made active again: the way to contain a
//! leaked key or a merchant under review at once, without losing anything
//! that was under way. While it is suspended its signed requests are
//! refused (`MERCHANT_DISABLED`, at authentication), its payouts are not
//! handed to a channel and its callbacks are not attempted (the store's
//! `held_merchants` keeps both out of the workers' batches), and its
//! cashier pages take no choice. What arrives from outside for its earlier
//! orders is still recorded: the payer's money is never refused.

use crate::actor::{Actor, Target};
use crate::domain::error::ApiError;
use crate::domain::status::MerchantStatus;
use crate::merchants::{self, Merchant};
use crate::store::rows::MerchantChange;
use crate::App;

/// Sets the merchant's status, with the reason in the audit trail. Made
/// active, its held callbacks are due at once on every instance.
pub async fn set_status(
    app: &App,
    by: &Actor,
    merchant_id: &str,
    status: MerchantStatus,
    reason: &str,
) -> Result<Merchant, ApiError> {
    let now = app.now_unix();
    let id = merchant_id.to_string();
    let audit = by.audit(Target::Merchant(id.clone()), Some(reason), now);
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |tx| {
            Box::pin(async move {
                let change = MerchantChange {
                    status: Some(status),
                    ..MerchantChange::at(now)
                };
                if !tx.change_merchant(&id, &change).await? {
                    return Err(ApiError::MerchantNotFound(id));
                }
                if status == MerchantStatus::Active {
                    tx.announce_callbacks_due().await?;
                }
                Ok(())
            })
        })
        .await?;
    tracing::info!(merchant_id, status = status.as_str(), "merchant status set");
    merchants::find(app, merchant_id).await
}

/// Refuses, with `MERCHANT_DISABLED`, work for a merchant that is
/// suspended now: read at the moment of acting, not from a remembered
/// lookup, so that a suspension holds from its commit on.
pub async fn refuse_if_suspended(app: &App, merchant_id: &str) -> Result<(), ApiError> {
    match merchants::find(app, merchant_id).await?.status {
        MerchantStatus::Active => Ok(()),
        MerchantStatus::Suspended => Err(ApiError::MerchantDisabled),
    }
}
