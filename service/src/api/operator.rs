//! The operator API: merchants and their settings, withdrawal review, the
//! ledger check.

use super::{body_error, deposit_order, reshape, withdrawal_order};
use crate::app::App;
use crate::config::RateConfig;
use crate::error::ApiError;
use crate::fees::Direction;
use crate::merchant::{self, AutoApproval};
use crate::operator::{authenticate, Operator};
use crate::withdrawal::{self, Withdrawal};
use crate::{ledger, money, validate};
use dropshot::{HttpError, HttpResponseOk, Path, RequestContext};
use merchant_api::operator::types;
use merchant_api::operator::{
    ApproveWithdrawalPath, CancelDepositPath, OperatorApi, RejectWithdrawalPath,
    SetAutoApprovalPath, SetMerchantFeePath, SetRateLimitPath,
};
use payments_wire::server::{BearerToken, SignedJson};
use payments_wire::DecimalString;
use rust_decimal::Decimal;
use serde::de::DeserializeOwned;
use std::sync::Arc;

pub enum OperatorApiImpl {}

fn parse<T: DeserializeOwned>(body: &SignedJson<T>) -> Result<T, ApiError> {
    body.parse().map_err(body_error)
}

fn non_negative(field: &str, value: Decimal) -> Result<Decimal, ApiError> {
    if value < Decimal::ZERO {
        return Err(ApiError::invalid_field(field, "must not be negative"));
    }
    money::to_units(value)
        .ok_or_else(|| ApiError::invalid_field(field, "has more than 4 fraction digits"))?;
    Ok(value.normalize())
}

async fn reviewed(app: &App, order: Withdrawal) -> Result<types::WithdrawalOrder, ApiError> {
    let merchant = merchant::find(app, &order.row.merchant_id).await?;
    reshape(&withdrawal_order(&merchant, &order))
}

fn remarks(body: &SignedJson<types::ReviewRequest>) -> Result<Option<String>, ApiError> {
    validate::optional_text("remarks", parse(body)?.remarks, 512)
}

impl OperatorApi for OperatorApiImpl {
    type Context = Arc<App>;

    async fn create_merchant(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        body: SignedJson<types::CreateMerchantRequest>,
    ) -> Result<HttpResponseOk<types::CreatedMerchant>, HttpError> {
        let app = rqctx.context();
        authenticate(app, &headers)?;
        let req = parse(&body)?;
        let created = merchant::create(app, &req.code, &req.name).await?;
        Ok(HttpResponseOk(types::CreatedMerchant {
            merchant_id: created.merchant.id,
            merchant_code: created.merchant.code,
            name: created.merchant.name,
            api_key: created.api_key,
        }))
    }

    async fn set_merchant_fee(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetMerchantFeePath>,
        body: SignedJson<types::FeeRuleRequest>,
    ) -> Result<HttpResponseOk<types::FeeRule>, HttpError> {
        let app = rqctx.context();
        authenticate(app, &headers)?;
        let merchant_id = path.into_inner().merchant_id;
        let req = parse(&body)?;
        validate::currency(app, &req.currency_code)?;
        let rate = RateConfig {
            percent: non_negative("percent", req.percent.value())?,
            fixed: non_negative("fixed", req.fixed.value())?,
            minimum: non_negative("minimum", req.minimum.value())?,
        };
        if rate.percent > Decimal::ONE_HUNDRED {
            return Err(ApiError::invalid_field("percent", "must be at most 100").into());
        }
        let direction = match req.direction {
            types::FeeDirection::Deposit => Direction::Deposit,
            types::FeeDirection::Withdrawal => Direction::Withdrawal,
        };
        merchant::find(app, &merchant_id).await?;
        crate::fees::set_merchant_rate(app, &merchant_id, &req.currency_code, direction, &rate)
            .await?;
        Ok(HttpResponseOk(types::FeeRule {
            merchant_id,
            currency_code: req.currency_code,
            direction: req.direction,
            percent: DecimalString(rate.percent),
            fixed: DecimalString(rate.fixed),
            minimum: DecimalString(rate.minimum),
        }))
    }

    async fn set_auto_approval(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetAutoApprovalPath>,
        body: SignedJson<types::AutoApprovalRequest>,
    ) -> Result<HttpResponseOk<types::AutoApproval>, HttpError> {
        let app = rqctx.context();
        authenticate(app, &headers)?;
        let merchant_id = path.into_inner().merchant_id;
        let req = parse(&body)?;
        let setting = match req.mode {
            types::AutoApprovalMode::Off => AutoApproval::Off,
            types::AutoApprovalMode::Always => AutoApproval::Always,
            types::AutoApprovalMode::UpTo => {
                let mut limits = std::collections::BTreeMap::new();
                for (currency, max) in &req.limits {
                    validate::currency(app, currency)?;
                    let field = format!("limits.{currency}");
                    let units = money::to_units(non_negative(&field, max.value())?)
                        .ok_or_else(|| ApiError::invalid_field(&field, "is too large"))?;
                    limits.insert(currency.clone(), units);
                }
                if limits.is_empty() {
                    return Err(ApiError::invalid_field(
                        "limits",
                        "`up_to` needs a limit for at least one currency",
                    )
                    .into());
                }
                AutoApproval::UpTo(limits)
            }
        };
        let merchant = merchant::set_auto_approval(app, &merchant_id, setting).await?;
        Ok(HttpResponseOk(types::AutoApproval {
            merchant_id,
            mode: req.mode,
            limits: merchant
                .auto_approval
                .limits()
                .into_iter()
                .map(|(c, units)| (c, DecimalString(money::from_units(units))))
                .collect(),
        }))
    }

    async fn set_rate_limit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<SetRateLimitPath>,
        body: SignedJson<types::RateLimitRequest>,
    ) -> Result<HttpResponseOk<types::RateLimit>, HttpError> {
        let app = rqctx.context();
        authenticate(app, &headers)?;
        let merchant_id = path.into_inner().merchant_id;
        let req = parse(&body)?;
        let bounded = |field: &str, v: i64| {
            i32::try_from(v)
                .ok()
                .filter(|v| (1..=1_000_000).contains(v))
                .ok_or_else(|| ApiError::invalid_field(field, "must be between 1 and 1000000"))
        };
        let per_minute = bounded("requests_per_minute", req.requests_per_minute)?;
        let burst = bounded("burst", req.burst)?;
        merchant::set_rate_limit(app, &merchant_id, per_minute, burst).await?;
        Ok(HttpResponseOk(types::RateLimit {
            merchant_id,
            requests_per_minute: req.requests_per_minute,
            burst: req.burst,
        }))
    }

    async fn approve_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<ApproveWithdrawalPath>,
        body: SignedJson<types::ReviewRequest>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        let app = rqctx.context();
        let Operator { name } = authenticate(app, &headers)?;
        let order =
            withdrawal::approve(app, &path.into_inner().order_no, &name, remarks(&body)?).await?;
        Ok(HttpResponseOk(reviewed(app, order).await?))
    }

    async fn reject_withdrawal(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<RejectWithdrawalPath>,
        body: SignedJson<types::ReviewRequest>,
    ) -> Result<HttpResponseOk<types::WithdrawalOrder>, HttpError> {
        let app = rqctx.context();
        let Operator { name } = authenticate(app, &headers)?;
        let order =
            withdrawal::reject(app, &path.into_inner().order_no, &name, remarks(&body)?).await?;
        Ok(HttpResponseOk(reviewed(app, order).await?))
    }

    async fn cancel_deposit(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        path: Path<CancelDepositPath>,
        body: SignedJson<types::ReviewRequest>,
    ) -> Result<HttpResponseOk<types::DepositOrder>, HttpError> {
        let app = rqctx.context();
        authenticate(app, &headers)?;
        remarks(&body)?;
        let order = crate::deposit::cancel(app, &path.into_inner().order_no).await?;
        let merchant = merchant::find(app, &order.merchant_id).await?;
        Ok(HttpResponseOk(reshape(&deposit_order(
            app, &merchant, &order,
        ))?))
    }

    async fn check_ledger(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
    ) -> Result<HttpResponseOk<types::LedgerReport>, HttpError> {
        let app = rqctx.context();
        authenticate(app, &headers)?;
        let report = ledger::check(app).await?;
        Ok(HttpResponseOk(types::LedgerReport {
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
        }))
    }
}
