//! Billing statements: for each merchant and ended period, one numbered
//! statement of the fees the ledger took, its PDF, and the platform event
//! `billing_statement_issued`, all in one transaction, so the event never
//! exists without its document.
//!
//! Issuing is idempotent by the unique (merchant, period start, version):
//! two instances, or a pass cut short by a crash, race to one insert, and
//! the loser's transaction (and its event) is rolled back. A statement is
//! never edited; `reissue` supersedes it with the next version.

pub mod document;
mod typeset;

use crate::actor::{Actor, Target};
use crate::callbacks::{self, PlatformEvent};
use crate::domain::billing::{self, rfc3339, CurrencyTotals, KindSum};
use crate::domain::error::ApiError;
use crate::domain::money::from_units;
use crate::domain::status::{BillingPeriod, OrderKind, StatementStatus};
use crate::listings::{self, Listing, Page};
use crate::store::audit::PendingAudit;
use crate::store::error::UniqueKey;
use crate::store::rows::StatementRow;
use crate::store::{Store, StoreError};
use crate::App;

pub const EVENT: &str = "billing_statement_issued";

/// How long after a period's end it is billed: a line stamped just before
/// the end may commit just after it, and a statement is never edited.
pub const SETTLE_SECONDS: i64 = 600;

/// Who issued a statement the schedule issued.
pub const SCHEDULE: &str = "schedule";

/// A statement as read back: its row and its totals.
pub struct Statement {
    pub row: StatementRow,
    pub totals: Vec<CurrencyTotals>,
}

impl Statement {
    fn of(row: StatementRow) -> Result<Statement, ApiError> {
        let totals = serde_json::from_str(&row.totals).map_err(|e| {
            StoreError::corrupt("billing_statements", &row.id, format!("totals: {e}"))
        })?;
        Ok(Statement { row, totals })
    }

    /// The number of the version it replaced, if any.
    pub fn supersedes(&self) -> Option<String> {
        (self.row.version > 1).then(|| billing::numbered(&self.row.number, self.row.version - 1))
    }

    /// Where the platform reads its document (with an operator token).
    pub fn document_url(&self, app: &App) -> String {
        format!(
            "{}/api/v1/operator/billing-statements/{}/document",
            app.config.public_base_url.trim_end_matches('/'),
            self.row.id
        )
    }
}

/// One statement to issue.
struct Draft {
    merchant_id: String,
    period: BillingPeriod,
    start: i64,
    end: i64,
    version: i32,
    issued_by: String,
    remarks: Option<String>,
    /// The statement this one supersedes: its id and its number.
    replaces: Option<(String, String)>,
}

/// The fees of each currency with lines in `[start, end)`. Not one
/// snapshot, and need not be: an ended period's lines are final (the
/// schedule waits `SETTLE_SECONDS`), and a transaction here would be the
/// first an operator's action commits, taking its audit row.
async fn totals(
    app: &App,
    merchant_id: &str,
    start: i64,
    end: i64,
) -> Result<Vec<CurrencyTotals>, ApiError> {
    let currencies: Vec<String> = app.config.currencies.keys().cloned().collect();
    let m = merchant_id.to_string();
    let kinds = app
        .db
        .run(move |tx| {
            Box::pin(async move {
                let mut all = Vec::new();
                for c in currencies {
                    let kinds = tx.day_totals(&m, &c, start, end).await?;
                    if !kinds.is_empty() {
                        all.push((c, kinds));
                    }
                }
                Ok(all)
            })
        })
        .await?;
    Ok(kinds
        .iter()
        .map(|(c, kinds)| {
            CurrencyTotals::of(
                c,
                kinds.iter().map(|k| KindSum {
                    kind: &k.kind,
                    count: k.count,
                    available_change: k.available_change,
                    frozen_change: k.frozen_change,
                    fee: k.fee,
                }),
            )
        })
        .collect())
}

async fn issue(app: &App, by: &Actor, d: Draft) -> Result<Statement, ApiError> {
    let merchant = crate::merchants::find_row(app, &d.merchant_id).await?;
    let totals = totals(app, &d.merchant_id, d.start, d.end).await?;
    let now = app.now_unix();
    let replaces = d.replaces.as_ref().map(|(id, _)| id.clone());
    let remarks = d.remarks.clone();
    let (statement, pdf) = prepare(app, d, &merchant, totals, now)?;
    let event = match (
        app.config.platform_events_url.clone(),
        app.config.platform_events_secret.as_ref(),
    ) {
        (Some(url), Some(_)) => {
            let body = event_body(app, &statement, &merchant.name).to_string();
            // Sealed like every platform event's body (`callbacks::attempts`
            // opens them all); this one holds no secret.
            let sealed = app
                .vault
                .encrypt(&body)
                .map_err(|e| ApiError::Internal(format!("sealing a platform event: {e}")))?;
            Some((url, sealed))
        }
        _ => None,
    };
    // The trail names the tenant.
    let audit = by.audit(
        Target::Merchant(statement.row.merchant_id.clone()),
        remarks.as_deref(),
        now,
    );
    commit(app, audit, statement.row.clone(), pdf, event, replaces, now).await?;
    if statement.row.issued_by == SCHEDULE {
        tracing::info!(
            statement = %statement.row.number,
            merchant_id = %statement.row.merchant_id,
            "billing statement issued"
        );
    }
    Ok(statement)
}

/// A configured party as the document names it.
fn party(p: &crate::config::PartyConfig) -> document::Party<'_> {
    document::Party {
        legal_name: &p.legal_name,
        address: &p.address,
        tax_number: p.tax_number.as_deref(),
    }
}

/// The statement's row and its PDF, before anything is written.
fn prepare(
    app: &App,
    d: Draft,
    merchant: &crate::store::rows::MerchantRow,
    totals: Vec<CurrencyTotals>,
    now: i64,
) -> Result<(Statement, Vec<u8>), ApiError> {
    let (number, supersedes) = match &d.replaces {
        Some((_, old)) => (billing::numbered(old, d.version), Some(old.clone())),
        None => (billing::number(&merchant.code, d.start), None),
    };
    let config = &app.config.billing;
    let charges: Vec<document::Charges<'_>> = totals
        .iter()
        .map(|t| document::Charges {
            totals: t,
            digits: app
                .config
                .currency(&t.currency)
                .map_or(crate::domain::money::SCALE, |c| c.fraction_digits),
            tax: config.tax.get(&t.currency).map(|x| document::Tax {
                name: &x.name,
                rate_percent: x.rate_percent,
            }),
        })
        .collect();
    let pdf = document::render(
        &document::Heading {
            number: &number,
            version: d.version,
            supersedes: supersedes.as_deref(),
            issuer: config.issuer.as_ref().map(party),
            bill_to: config.merchants.get(&merchant.code).map_or(
                document::Party {
                    legal_name: &merchant.name,
                    address: &[],
                    tax_number: None,
                },
                party,
            ),
            merchant_code: &merchant.code,
            merchant_id: &d.merchant_id,
            period_start: d.start,
            period_end: d.end,
            issued_at: now,
        },
        &charges,
    );
    let row = StatementRow {
        id: uuid::Uuid::new_v4().to_string(),
        merchant_id: d.merchant_id,
        number,
        version: d.version,
        status: StatementStatus::Issued,
        billing_period: d.period,
        period_start: d.start,
        period_end: d.end,
        totals: serde_json::to_string(&totals)
            .map_err(|e| ApiError::Internal(format!("writing a statement's totals: {e}")))?,
        document_sha256: document::sha256_hex(&pdf),
        document_bytes: i64::try_from(pdf.len()).unwrap_or(i64::MAX),
        issued_by: d.issued_by,
        issued_at: now,
        remarks: d.remarks,
        superseded_at: None,
    };
    Ok((Statement { row, totals }, pdf))
}

/// Writes the statement, its document and its event (when the platform
/// has an address) in one transaction, superseding `replaces` or checking
/// that no statement in force meets the period.
async fn commit(
    app: &App,
    audit: Option<PendingAudit>,
    row: StatementRow,
    pdf: Vec<u8>,
    event: Option<(String, String)>,
    replaces: Option<String>,
    now: i64,
) -> Result<(), ApiError> {
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |s| {
            Box::pin(async move {
                // One issuer per merchant at a time (PostgreSQL's row
                // lock; SQLite has one writer): the overlap check below
                // and the insert see the same statements. Writes come
                // before reads, so that a SQLite transaction takes the
                // write lock (waiting for it) before it holds a snapshot
                // another instance's commit would make stale.
                s.lock_merchant(&row.merchant_id).await?;
                if let Some(old) = &replaces {
                    if !s.supersede_statement(old, now).await? {
                        return Err(ApiError::InvalidStateTransition {
                            order_no: old.clone(),
                            status: StatementStatus::Superseded.to_string(),
                            action: "reissue".into(),
                        });
                    }
                }
                insert(s, &row, &pdf).await?;
                if replaces.is_none() {
                    let meeting = s
                        .statements_meeting(&row.merchant_id, row.period_start, row.period_end)
                        .await?;
                    if let Some(taken) = meeting.iter().find(|m| m.id != row.id) {
                        return Err(ApiError::StatementAlreadyIssued(taken.number.clone()));
                    }
                }
                if let Some((url, sealed_body)) = event {
                    callbacks::enqueue_platform(
                        s,
                        PlatformEvent {
                            kind: OrderKind::BillingStatement,
                            subject_id: &row.id,
                            merchant_id: &row.merchant_id,
                            event: EVENT,
                            url: &url,
                            sealed_body,
                        },
                        now,
                    )
                    .await?;
                }
                Ok(())
            })
        })
        .await
}

async fn insert(s: &mut dyn Store, row: &StatementRow, pdf: &[u8]) -> Result<(), ApiError> {
    s.insert_statement(row, pdf).await.map_err(|e| match e {
        StoreError::Conflict {
            key: UniqueKey::StatementVersion,
            ..
        } => ApiError::StatementAlreadyIssued(row.number.clone()),
        other => other.into(),
    })
}

/// The body of `billing_statement_issued` (published in the operator
/// contract as `BillingStatementIssued`).
fn event_body(app: &App, s: &Statement, merchant_name: &str) -> serde_json::Value {
    let mut body = view(app, s);
    if let Some(fields) = body.as_object_mut() {
        fields.insert("event".into(), EVENT.into());
        fields.insert("tenant_name".into(), merchant_name.into());
        for internal in ["status", "superseded_at", "issued_by", "remarks"] {
            fields.remove(internal);
        }
    }
    body
}

/// A statement as the contract shows it; `tenant_id` is the merchant's id.
pub fn view(app: &App, s: &Statement) -> serde_json::Value {
    let r = &s.row;
    serde_json::json!({
        "statement_id": r.id,
        "number": r.number,
        "version": r.version,
        "supersedes": s.supersedes(),
        "status": r.status.as_str(),
        "tenant_id": r.merchant_id,
        "billing_period": r.billing_period.as_str(),
        "period_start": rfc3339(r.period_start),
        "period_end": rfc3339(r.period_end),
        "issued_at": rfc3339(r.issued_at),
        "issued_by": r.issued_by,
        "remarks": r.remarks,
        "superseded_at": r.superseded_at.map(rfc3339),
        "totals": s.totals.iter().map(|t| serde_json::json!({
            "currency_code": t.currency,
            "deposit_count": t.deposit_count,
            "deposit_amount": from_units(t.deposit_amount).to_string(),
            "deposit_fees": from_units(t.deposit_fees).to_string(),
            "withdrawal_count": t.withdrawal_count,
            "withdrawal_amount": from_units(t.withdrawal_amount).to_string(),
            "withdrawal_fees": from_units(t.withdrawal_fees).to_string(),
            "total_fees": from_units(t.total_fees).to_string(),
        })).collect::<Vec<_>>(),
        "document_url": s.document_url(app),
        "document_sha256": r.document_sha256,
        "document_bytes": r.document_bytes,
    })
    .as_object()
    .map(|fields| {
        // An absent field is left out, as the contract has it.
        fields
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<serde_json::Map<_, _>>()
            .into()
    })
    .unwrap_or_default()
}

/// Issues every statement that is due, at most `limit` of them: for each
/// merchant, each period from where its billing stands that ended at
/// least `SETTLE_SECONDS` ago. How many it issued.
pub async fn issue_due(app: &App, limit: usize) -> Result<usize, ApiError> {
    let now = app.now_unix();
    let cursors = app
        .db
        .run(|s| Box::pin(async move { s.billing_cursors().await }))
        .await?;
    let mut issued = 0;
    for c in cursors {
        let period = c.billing_period.unwrap_or(BillingPeriod::Month);
        // Never before the period the merchant was created in: a statement
        // issued by hand for an older period is no reason to bill every
        // period since then (a test's 2020 statement for a merchant made
        // today had the schedule issue six years of empty statements).
        let from_creation = billing::period_start(c.created_at, period);
        let Some(mut start) = c.billed_until.max(from_creation) else {
            continue;
        };
        while let Some(end) = billing::period_end(start, period) {
            if end + SETTLE_SECONDS > now || issued >= limit {
                break;
            }
            let draft = Draft {
                merchant_id: c.merchant_id.clone(),
                period,
                start,
                end,
                version: 1,
                issued_by: SCHEDULE.into(),
                remarks: None,
                replaces: None,
            };
            match issue(app, &Actor::System(SCHEDULE), draft).await {
                Ok(_) => issued += 1,
                // Another instance issued it first.
                Err(ApiError::StatementAlreadyIssued(_)) => {}
                Err(e) => return Err(e),
            }
            start = end;
        }
    }
    Ok(issued)
}

/// An operator's statement for `[start, end)`, which must have ended and
/// meet no statement in force.
pub async fn issue_for(
    app: &App,
    by: &Actor,
    merchant_id: &str,
    start: i64,
    end: i64,
    remarks: Option<String>,
) -> Result<Statement, ApiError> {
    if end <= start {
        return Err(ApiError::invalid_field(
            "period_end",
            "must be after period_start",
        ));
    }
    if end > app.now_unix() {
        return Err(ApiError::invalid_field(
            "period_end",
            "is in the future: only an ended period is billed",
        ));
    }
    let period = period_of(app, merchant_id).await?;
    issue(
        app,
        by,
        Draft {
            merchant_id: merchant_id.to_string(),
            period,
            start,
            end,
            version: 1,
            issued_by: by.name().to_string(),
            remarks,
            replaces: None,
        },
    )
    .await
}

/// Voids the statement in force `id` and issues its next version, read
/// from the ledger again, with its own number, document and event.
pub async fn reissue(
    app: &App,
    by: &Actor,
    id: &str,
    remarks: Option<String>,
) -> Result<Statement, ApiError> {
    let old = find(app, None, id).await?.row;
    if old.status != StatementStatus::Issued {
        return Err(ApiError::InvalidStateTransition {
            order_no: old.number,
            status: old.status.to_string(),
            action: "reissue".into(),
        });
    }
    issue(
        app,
        by,
        Draft {
            merchant_id: old.merchant_id,
            period: old.billing_period,
            start: old.period_start,
            end: old.period_end,
            version: old.version + 1,
            issued_by: by.name().to_string(),
            remarks,
            replaces: Some((old.id, old.number)),
        },
    )
    .await
}

/// One statement; of `merchant` only when one is named (a merchant never
/// sees another's: the same 404 as no statement at all).
pub async fn find(app: &App, merchant: Option<&str>, id: &str) -> Result<Statement, ApiError> {
    let key = id.to_string();
    let row = app
        .db
        .run(|s| Box::pin(async move { s.statement_by_id(&key).await }))
        .await?
        .filter(|r| merchant.is_none_or(|m| m == r.merchant_id))
        .ok_or_else(|| ApiError::StatementNotFound(id.to_string()))?;
    Statement::of(row)
}

/// The statement's document, as stored.
pub async fn document(app: &App, merchant: Option<&str>, id: &str) -> Result<Vec<u8>, ApiError> {
    let statement = find(app, merchant, id).await?;
    let key = statement.row.id.clone();
    app.db
        .run(|s| Box::pin(async move { s.statement_document(&key).await }))
        .await?
        .ok_or_else(|| {
            ApiError::Internal(format!(
                "statement {} has no document",
                statement.row.number
            ))
        })
}

pub async fn list(app: &App, listing: Listing) -> Result<Page<Statement>, ApiError> {
    if let Some(m) = &listing.merchant_id {
        crate::merchants::find_row(app, m).await?;
    }
    let page = listings::billing_statements(app, listing).await?;
    Ok(Page {
        items: page
            .items
            .into_iter()
            .map(Statement::of)
            .collect::<Result<_, _>>()?,
        next_cursor: page.next_cursor,
    })
}

/// The merchant's billing period: its own setting, or a month.
pub async fn period_of(app: &App, merchant_id: &str) -> Result<BillingPeriod, ApiError> {
    crate::merchants::find_row(app, merchant_id).await?;
    let m = merchant_id.to_string();
    Ok(app
        .db
        .run(|s| Box::pin(async move { s.billing_period_of(&m).await }))
        .await?
        .unwrap_or(BillingPeriod::Month))
}

/// Sets the merchant's billing period; the next period starts where its
/// last statement ended and runs to the next boundary of the new length.
pub async fn set_period(
    app: &App,
    by: &Actor,
    merchant_id: &str,
    period: &str,
) -> Result<BillingPeriod, ApiError> {
    let period = BillingPeriod::parse(period)
        .ok_or_else(|| ApiError::invalid_field("billing_period", "must be month, week or day"))?;
    crate::merchants::find_row(app, merchant_id).await?;
    let (m, now) = (merchant_id.to_string(), app.now_unix());
    let audit = by.audit(Target::Merchant(m.clone()), None, now);
    app.db
        .transaction_audited::<_, ApiError, _>(audit, move |s| {
            Box::pin(async move {
                s.set_billing_period(&m, period, now).await?;
                Ok(period)
            })
        })
        .await
}
