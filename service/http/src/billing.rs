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
