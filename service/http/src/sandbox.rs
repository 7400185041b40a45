//! The sandbox's simulation API: payers, banks and channels, simulated.
//! Registered only in the sandbox profile.

use crate::app::actor::Actor;
use crate::app::deposits;
use crate::app::withdrawals;
use crate::app::App;
use crate::domain::error::ApiError;
use crate::enums::Spelled;

use crate::domain::people::Action;
use crate::operator::auth::{operate, operate_with};
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
        status: order.status.spelled(),
        actual_amount: DecimalString(order.actual_amount),
    }
}

fn simulated(order: &withdrawals::Withdrawal) -> types::SimulatedWithdrawal {
    types::SimulatedWithdrawal {
        order_no: order.order_no.clone(),
        status: order.status.spelled(),
    }
}

/// How far a simulated payment goes: the bank reported it (matched), or
/// the money arrived (completed).
enum Paid {
    Matched,
    Completed,
}

async fn paid(
    app: &App,
    order_no: &str,
    req: types::PayDepositRequest,
    how: Paid,
) -> Result<types::SimulatedDeposit, ApiError> {
    let amount = req.amount.map(|a| a.value());
    let order = match how {
        Paid::Matched => deposits::record_match(app, order_no, amount).await?,
        Paid::Completed => {
            let by = Actor::System("sandbox");
            deposits::complete(app, &by, order_no, amount, None).await?
        }
    };
    Ok(simulated_deposit(&order))
}

impl SandboxApi for SandboxApiImpl {
    type Context = Arc<App>;

    async fn pay_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<PayDepositPath>,
        body: SignedJson<types::PayDepositRequest>,
    ) -> Result<HttpResponseOk<types::SimulatedDeposit>, HttpError> {
        let order_no = path.into_inner().order_no;
        operate_with(
            &rqctx,
            &headers,
            Action::Read,
            body,
            |app, _, req| async move { paid(&app, &order_no, req, Paid::Completed).await },
        )
        .await
    }

    async fn match_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<MatchDepositPath>,
        body: SignedJson<types::PayDepositRequest>,
    ) -> Result<HttpResponseOk<types::SimulatedDeposit>, HttpError> {
        let order_no = path.into_inner().order_no;
        operate_with(
            &rqctx,
            &headers,
            Action::Read,
            body,
            |app, _, req| async move { paid(&app, &order_no, req, Paid::Matched).await },
        )
        .await
    }

    async fn expire_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ExpireDepositPath>,
    ) -> Result<HttpResponseOk<types::SimulatedDeposit>, HttpError> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
            let app = &*app;
            let order = deposits::expire(app, &path.into_inner().order_no).await?;
            Ok(simulated_deposit(&order))
        })
        .await
    }

    async fn read_clock(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
    ) -> Result<HttpResponseOk<types::SandboxClock>, HttpError> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
            let app = &*app;
            Ok(clock_view(app))
        })
        .await
    }

    async fn advance_clock(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        body: SignedJson<types::AdvanceClockRequest>,
    ) -> Result<HttpResponseOk<types::SandboxClock>, HttpError> {
        operate_with(
            &rqctx,
            &headers,
            Action::Read,
            body,
            |app, _, req| async move {
                let app = &*app;
                let seconds = req.seconds;
                if !(1..=86_400).contains(&seconds) {
                    return Err(ApiError::invalid_field(
                        "seconds",
                        "must be between 1 and 86400",
                    ));
                }
                if !app.clock.advance_by(seconds) {
                    return Err(ApiError::NotImplemented("advancing this service's clock"));
                }
                app.clock_moved();
                Ok(clock_view(app))
            },
        )
        .await
    }

    async fn settle_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SettleWithdrawalPath>,
        body: SignedJson<types::SettleWithdrawalRequest>,
    ) -> Result<HttpResponseOk<types::SimulatedWithdrawal>, HttpError> {
        operate_with(
            &rqctx,
            &headers,
            Action::Read,
            body,
            |app, _, req| async move {
                let app = &*app;
                let reference = crate::domain::validate::optional_text(
                    "bank_reference",
                    req.bank_reference,
                    128,
                )?;
                let order =
                    withdrawals::settle(app, &path.into_inner().order_no, reference).await?;
                Ok(simulated(&order))
            },
        )
        .await
    }

    async fn fail_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<FailWithdrawalPath>,
        body: SignedJson<types::FailWithdrawalRequest>,
    ) -> Result<HttpResponseOk<types::SimulatedWithdrawal>, HttpError> {
        operate_with(
            &rqctx,
            &headers,
            Action::Read,
            body,
            |app, _, req| async move {
                let app = &*app;
                let reason = crate::domain::validate::optional_text("reason", req.reason, 512)?;
                let order = withdrawals::fail(app, &path.into_inner().order_no, reason).await?;
                Ok(simulated(&order))
            },
        )
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
