//! Billing statements on both APIs: the contract's view of a statement
//! (`app::billing::view`, read into the generated type, so the two APIs
//! and the platform event show one shape), and a statement's PDF as the
//! whole response.

use crate::app::billing::{self, Statement};
use crate::app::listings::Listing;
use crate::app::App;
use crate::domain::error::ApiError;
use dropshot::{Body, HttpError, HttpResponseOk};
use http::Response;
use serde::de::DeserializeOwned;

/// A statement as `T`, the generated `BillingStatement` of either API.
pub fn shown<T: DeserializeOwned>(app: &App, s: &Statement) -> Result<T, ApiError> {
    serde_json::from_value(billing::view(app, s)).map_err(|e| {
        ApiError::Internal(format!(
            "statement {} does not read as the contract's: {e}",
            s.row.number
        ))
    })
}

/// A page of statements as the generated page type's parts.
pub async fn page<T: DeserializeOwned>(
    app: &App,
    listing: Listing,
) -> Result<(Vec<T>, Option<String>), ApiError> {
    let page = billing::list(app, listing).await?;
    let items = page
        .items
        .iter()
        .map(|s| shown(app, s))
        .collect::<Result<_, _>>()?;
    Ok((items, page.next_cursor))
}

/// A PDF carried through the JSON-answering helpers (authentication,
/// audit, the request's span), then sent as itself by `document`.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct Pdf {
    #[serde(skip)]
    pub bytes: Vec<u8>,
}

/// The answer of a document endpoint.
pub fn document(
    answer: Result<HttpResponseOk<Pdf>, HttpError>,
) -> Result<Response<Body>, HttpError> {
    let bytes = answer?.0.bytes;
    Response::builder()
        .status(http::StatusCode::OK)
        .header(http::header::CONTENT_TYPE, "application/pdf")
        .header(http::header::CONTENT_LENGTH, bytes.len())
        .body(Body::from(bytes))
        .map_err(|e| HttpError::for_internal_error(format!("building a PDF response: {e}")))
}

/// A day as the requests give one (`YYYY-MM-DD`), as its UTC midnight.
pub fn day(field: &'static str, text: &str) -> Result<i64, ApiError> {
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp())
        .ok_or_else(|| ApiError::invalid_field(field, "must be a calendar date as YYYY-MM-DD"))
}

/// The operator's billing operations: each authenticated, checked against
/// the role and (when it writes) audited by `operate`.
pub mod operator {
    use super::{day, document, page, shown, Pdf};
    use crate::app::audit::{self, Target};
    use crate::app::billing;
    use crate::app::listings::Listing;
    use crate::app::App;
    use crate::domain::people::Action;
    use crate::domain::validate;
    use crate::http::operator_auth::{operate, operate_with};
    use dropshot::{Body, HttpError, HttpResponseOk, RequestContext};
    use merchant_api::operator::types;
    use merchant_api::operator::ListBillingStatementsQuery;
    use payments_wire::server::{BearerToken, SignedJson};
    use std::sync::Arc;

    type Answer<T> = Result<HttpResponseOk<T>, HttpError>;

    pub async fn list(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        q: ListBillingStatementsQuery,
    ) -> Answer<types::BillingStatementPage> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
            let listing = Listing {
                limit: q.limit,
                cursor: q.cursor,
                merchant_id: q.merchant_id,
                ..Listing::default()
            };
            let (items, next_cursor) = page(&app, listing).await?;
            Ok(types::BillingStatementPage { items, next_cursor })
        })
        .await
    }

    pub async fn read(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        id: String,
    ) -> Answer<types::BillingStatement> {
        operate(&rqctx, &headers, Action::Read, |app, _| async move {
            shown(&app, &billing::find(&app, None, &id).await?)
        })
        .await
    }

    pub async fn read_document(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        id: String,
    ) -> Result<http::Response<Body>, HttpError> {
        document(
            operate(&rqctx, &headers, Action::Read, |app, _| async move {
                let bytes = billing::document(&app, None, &id).await?;
                Ok(Pdf { bytes })
            })
            .await,
        )
    }

    pub async fn issue(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        merchant_id: String,
        body: SignedJson<types::IssueBillingStatementRequest>,
    ) -> Answer<types::BillingStatement> {
        let action = Action::IssueBillingStatement;
        operate_with(&rqctx, &headers, action, body, |app, op, b| async move {
            // The audit trail names a statement's merchant: its target
            // types are a closed enum of the published contract.
            audit::on(Target::Merchant(merchant_id.clone()));
            let start = day("period_start", &b.period_start)?;
            let end = day("period_end", &b.period_end)?;
            let remarks = validate::optional_text("remarks", b.remarks, 512)?;
            audit::because(remarks.as_deref());
            let by = &op.who.name;
            let issued = billing::issue_for(&app, by, &merchant_id, start, end, remarks).await?;
            shown(&app, &issued)
        })
        .await
    }

    pub async fn reissue(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        id: String,
        body: SignedJson<types::ReissueBillingStatementRequest>,
    ) -> Answer<types::BillingStatement> {
        let action = Action::ReissueBillingStatement;
        operate_with(&rqctx, &headers, action, body, |app, op, b| async move {
            let remarks =
                validate::optional_text("remarks", Some(b.remarks), 512)?.ok_or_else(|| {
                    crate::domain::error::ApiError::invalid_field("remarks", "must not be empty")
                })?;
            audit::because(Some(&remarks));
            shown(
                &app,
                &billing::reissue(&app, &op.who.name, &id, Some(remarks)).await?,
            )
        })
        .await
    }

    pub async fn set_period(
        rqctx: RequestContext<Arc<App>>,
        headers: BearerToken,
        merchant_id: String,
        body: SignedJson<types::BillingPeriodRequest>,
    ) -> Answer<types::BillingPeriodSetting> {
        operate_with(
            &rqctx,
            &headers,
            Action::SetBillingPeriod,
            body,
            |app, _, b| async move {
                audit::on(Target::Merchant(merchant_id.clone()));
                let period =
                    billing::set_period(&app, &merchant_id, &b.billing_period.to_string()).await?;
                Ok(types::BillingPeriodSetting {
                    billing_period: period.into(),
                    merchant_id,
                })
            },
        )
        .await
    }
}

/// The operator trait's billing methods, each handing its request to
/// `operator` above: written once here, expanded in `OperatorApi`'s impl.
macro_rules! operator_endpoints {
    () => {
        async fn list_billing_statements(
            rqctx: ::dropshot::RequestContext<::std::sync::Arc<$crate::app::App>>,
            headers: ::payments_wire::server::BearerToken,
            query: ::payments_wire::server::Query<
                ::merchant_api::operator::ListBillingStatementsQuery,
            >,
        ) -> Result<
            ::dropshot::HttpResponseOk<::merchant_api::operator::types::BillingStatementPage>,
            ::dropshot::HttpError,
        > {
            $crate::http::billing::operator::list(rqctx, headers, query.into_inner()).await
        }

        async fn read_billing_statement(
            rqctx: ::dropshot::RequestContext<::std::sync::Arc<$crate::app::App>>,
            headers: ::payments_wire::server::BearerToken,
            path: ::dropshot::Path<::merchant_api::operator::ReadBillingStatementPath>,
        ) -> Result<
            ::dropshot::HttpResponseOk<::merchant_api::operator::types::BillingStatement>,
            ::dropshot::HttpError,
        > {
            $crate::http::billing::operator::read(rqctx, headers, path.into_inner().statement_id)
                .await
        }

        async fn read_billing_statement_document(
            rqctx: ::dropshot::RequestContext<::std::sync::Arc<$crate::app::App>>,
            headers: ::payments_wire::server::BearerToken,
            path: ::dropshot::Path<::merchant_api::operator::ReadBillingStatementDocumentPath>,
        ) -> Result<::http::Response<::dropshot::Body>, ::dropshot::HttpError> {
            $crate::http::billing::operator::read_document(
                rqctx,
                headers,
                path.into_inner().statement_id,
            )
            .await
        }

        async fn issue_billing_statement(
            rqctx: ::dropshot::RequestContext<::std::sync::Arc<$crate::app::App>>,
            headers: ::payments_wire::server::BearerToken,
            path: ::dropshot::Path<::merchant_api::operator::IssueBillingStatementPath>,
            body: ::payments_wire::server::SignedJson<
                ::merchant_api::operator::types::IssueBillingStatementRequest,
            >,
        ) -> Result<
            ::dropshot::HttpResponseOk<::merchant_api::operator::types::BillingStatement>,
            ::dropshot::HttpError,
        > {
            $crate::http::billing::operator::issue(
                rqctx,
                headers,
                path.into_inner().merchant_id,
                body,
            )
            .await
        }

        async fn reissue_billing_statement(
            rqctx: ::dropshot::RequestContext<::std::sync::Arc<$crate::app::App>>,
            headers: ::payments_wire::server::BearerToken,
            path: ::dropshot::Path<::merchant_api::operator::ReissueBillingStatementPath>,
            body: ::payments_wire::server::SignedJson<
                ::merchant_api::operator::types::ReissueBillingStatementRequest,
            >,
        ) -> Result<
            ::dropshot::HttpResponseOk<::merchant_api::operator::types::BillingStatement>,
            ::dropshot::HttpError,
        > {
            $crate::http::billing::operator::reissue(
                rqctx,
                headers,
                path.into_inner().statement_id,
                body,
            )
            .await
        }

        async fn set_billing_period(
            rqctx: ::dropshot::RequestContext<::std::sync::Arc<$crate::app::App>>,
            headers: ::payments_wire::server::BearerToken,
            path: ::dropshot::Path<::merchant_api::operator::SetBillingPeriodPath>,
            body: ::payments_wire::server::SignedJson<
                ::merchant_api::operator::types::BillingPeriodRequest,
            >,
        ) -> Result<
            ::dropshot::HttpResponseOk<::merchant_api::operator::types::BillingPeriodSetting>,
            ::dropshot::HttpError,
        > {
            $crate::http::billing::operator::set_period(
                rqctx,
                headers,
                path.into_inner().merchant_id,
                body,
            )
            .await
        }
    };
}
pub(crate) use operator_endpoints;
