//! The sandbox's simulation API: payers, banks and channels, simulated.
//! Registered only in the sandbox profile.

use super::body_error;
use crate::app::deposits;
use crate::app::withdrawals;
use crate::app::App;
use crate::http::observe::in_span;
use crate::http::operator_auth::authenticate;
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::sandbox::types;
use merchant_api::sandbox::{
    ExpireDepositPath, FailWithdrawalPath, MatchDepositPath, PayDepositPath, SandboxApi,
    SettleWithdrawalPath,
};
use payments_wire::server::{BearerToken, SignedJson};
use payments_wire::DecimalString;
use std::sync::Arc;

pub enum SandboxApiImpl {}

fn simulated_deposit(order: &deposits::Deposit) -> types::SimulatedDeposit {
    types::SimulatedDeposit {
        order_no: order.order_no.clone(),
        status: order.status.into(),
        actual_amount: DecimalString(order.actual_amount),
    }
}

fn simulated(order: &withdrawals::Withdrawal) -> types::SimulatedWithdrawal {
    types::SimulatedWithdrawal {
        order_no: order.row.order_no.clone(),
        status: order.status.into(),
    }
}

impl SandboxApi for SandboxApiImpl {
    type Context = Arc<App>;

    async fn pay_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<PayDepositPath>,
        body: SignedJson<types::PayDepositRequest>,
    ) -> Result<HttpResponseOk<types::SimulatedDeposit>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            authenticate(app, &headers)?;
            let req = body.parse().map_err(body_error)?;
            let order = deposits::complete(
                app,
                &path.into_inner().order_no,
                req.amount.map(|a| a.value()),
            )
            .await?;
            Ok(HttpResponseOk(simulated_deposit(&order)))
        })
        .await
    }

    async fn match_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<MatchDepositPath>,
        body: SignedJson<types::PayDepositRequest>,
    ) -> Result<HttpResponseOk<types::SimulatedDeposit>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            authenticate(app, &headers)?;
            let req = body.parse().map_err(body_error)?;
            let order = deposits::record_match(
                app,
                &path.into_inner().order_no,
                req.amount.map(|a| a.value()),
            )
            .await?;
            Ok(HttpResponseOk(simulated_deposit(&order)))
        })
        .await
    }

    async fn expire_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ExpireDepositPath>,
    ) -> Result<HttpResponseOk<types::SimulatedDeposit>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            authenticate(app, &headers)?;
            let order = deposits::expire(app, &path.into_inner().order_no).await?;
            Ok(HttpResponseOk(simulated_deposit(&order)))
        })
        .await
    }

    async fn read_clock(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
    ) -> Result<HttpResponseOk<types::SandboxClock>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            authenticate(app, &headers)?;
            Ok(HttpResponseOk(clock_view(app)))
        })
        .await
    }

    async fn advance_clock(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        body: SignedJson<types::AdvanceClockRequest>,
    ) -> Result<HttpResponseOk<types::SandboxClock>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            authenticate(app, &headers)?;
            let seconds = body.parse().map_err(body_error)?.seconds;
            if !(1..=86_400).contains(&seconds) {
                return Err(crate::domain::error::ApiError::invalid_field(
                    "seconds",
                    "must be between 1 and 86400",
                )
                .into());
            }
            if !app.clock.advance_by(seconds) {
                return Err(crate::domain::error::ApiError::NotImplemented(
                    "advancing this service's clock",
                )
                .into());
            }
            app.clock_moved();
            Ok(HttpResponseOk(clock_view(app)))
        })
        .await
    }

    async fn settle_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SettleWithdrawalPath>,
        body: SignedJson<types::SettleWithdrawalRequest>,
    ) -> Result<HttpResponseOk<types::SimulatedWithdrawal>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            authenticate(app, &headers)?;
            let req = body.parse().map_err(body_error)?;
            let reference =
                crate::domain::validate::optional_text("bank_reference", req.bank_reference, 128)?;
            let order = withdrawals::settle(app, &path.into_inner().order_no, reference).await?;
            Ok(HttpResponseOk(simulated(&order)))
        })
        .await
    }

    async fn fail_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<FailWithdrawalPath>,
        body: SignedJson<types::FailWithdrawalRequest>,
    ) -> Result<HttpResponseOk<types::SimulatedWithdrawal>, HttpError> {
        in_span(&rqctx, async {
            let app = rqctx.context();
            authenticate(app, &headers)?;
            let req = body.parse().map_err(body_error)?;
            let reason = crate::domain::validate::optional_text("reason", req.reason, 512)?;
            let order = withdrawals::fail(app, &path.into_inner().order_no, reason).await?;
            Ok(HttpResponseOk(simulated(&order)))
        })
        .await
    }
}

fn clock_view(app: &App) -> types::SandboxClock {
    types::SandboxClock {
        now: app.clock.now(),
        now_unix: app.now_unix(),
        offset_seconds: app.clock.offset_seconds(),
    }
}
