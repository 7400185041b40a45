//! Billing statements, their documents and each merchant's billing period.

use super::{first_or_none, insert_one};
use crate::domain::status::{BillingPeriod, StatementStatus};
use crate::paging::ListFilter;
use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// Every merchant with its billing period and where its billing stands.
const BILLING_CURSORS: &str = "SELECT m.id AS merchant_id, m.created_at, s.billing_period, \
     (SELECT MAX(b.period_end) FROM billing_statements b WHERE b.merchant_id = m.id) \
     AS billed_until \
     FROM merchants m LEFT JOIN billing_settings s ON s.merchant_id = m.id ORDER BY m.id";

#[async_trait]
pub trait BillingQueries: Send {
    async fn billing_cursors(&mut self) -> StoreResult<Vec<BillingCursor>>;

    async fn billing_period_of(&mut self, merchant_id: &str) -> StoreResult<Option<BillingPeriod>>;

    async fn set_billing_period(
        &mut self,
        merchant_id: &str,
        period: BillingPeriod,
        at: i64,
    ) -> StoreResult<()>;

    /// The statements in force whose period meets `[start, end)`.
    async fn statements_meeting(
        &mut self,
        merchant_id: &str,
        start: i64,
        end: i64,
    ) -> StoreResult<Vec<StatementRow>>;

    /// The statement and its document, in one go.
    async fn insert_statement(&mut self, row: &StatementRow, pdf: &[u8]) -> StoreResult<()>;

    async fn statement_by_id(&mut self, id: &str) -> StoreResult<Option<StatementRow>>;

    /// Marks a statement in force as superseded at `at`; whether it was
    /// in force.
    async fn supersede_statement(&mut self, id: &str, at: i64) -> StoreResult<bool>;

    /// Newest issued first; of one merchant when the filter names one.
    async fn statements_page(&mut self, page: &ListFilter) -> StoreResult<Vec<StatementRow>>;

    async fn statement_document(&mut self, id: &str) -> StoreResult<Option<Vec<u8>>>;
}

macro_rules! impl_billing {
    ($conn:ty) => {
        #[async_trait]
        impl BillingQueries for $conn {
            async fn billing_cursors(&mut self) -> StoreResult<Vec<BillingCursor>> {
                Ok(diesel::sql_query(BILLING_CURSORS).load(self.c()).await?)
            }

            async fn billing_period_of(
                &mut self,
                merchant_id: &str,
            ) -> StoreResult<Option<BillingPeriod>> {
                Ok(billing_settings::table
                    .filter(billing_settings::merchant_id.eq(merchant_id))
                    .select(billing_settings::billing_period)
                    .first::<BillingPeriod>(self.c())
                    .await
                    .optional()?)
            }

            async fn set_billing_period(
                &mut self,
                merchant_id: &str,
                period: BillingPeriod,
                at: i64,
            ) -> StoreResult<()> {
                diesel::insert_into(billing_settings::table)
                    .values((
                        billing_settings::merchant_id.eq(merchant_id),
                        billing_settings::billing_period.eq(period),
                        billing_settings::updated_at.eq(at),
                    ))
                    .on_conflict(billing_settings::merchant_id)
                    .do_update()
                    .set((
                        billing_settings::billing_period.eq(period),
                        billing_settings::updated_at.eq(at),
                    ))
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn statements_meeting(
                &mut self,
                merchant_id: &str,
                start: i64,
                end: i64,
            ) -> StoreResult<Vec<StatementRow>> {
                Ok(billing_statements::table
                    .filter(billing_statements::merchant_id.eq(merchant_id))
                    .filter(billing_statements::status.eq(StatementStatus::Issued))
                    .filter(billing_statements::period_start.lt(end))
                    .filter(billing_statements::period_end.gt(start))
                    .select(crate::rows::columns::<StatementRow>())
                    .load(self.c())
                    .await?)
            }

            async fn insert_statement(
                &mut self,
                row: &StatementRow,
                pdf: &[u8],
            ) -> StoreResult<()> {
                diesel::insert_into(billing_statements::table)
                    .values(row)
                    .execute(self.c())
                    .await?;
                self.done.created = Some(row.id.clone());
                insert_one!(
                    self.c(),
                    billing_documents::table,
                    (
                        billing_documents::statement_id.eq(&row.id),
                        billing_documents::pdf.eq(pdf),
                    )
                )
            }

            async fn statement_by_id(&mut self, id: &str) -> StoreResult<Option<StatementRow>> {
                first_or_none!(
                    self.c(),
                    StatementRow,
                    billing_statements::table.filter(billing_statements::id.eq(id)),
                    "billing_statements",
                    "id" = id
                )
            }

            async fn supersede_statement(&mut self, id: &str, at: i64) -> StoreResult<bool> {
                let n = diesel::update(
                    billing_statements::table
                        .filter(billing_statements::id.eq(id))
                        .filter(billing_statements::status.eq(StatementStatus::Issued)),
                )
                .set((
                    billing_statements::status.eq(StatementStatus::Superseded),
                    billing_statements::superseded_at.eq(Some(at)),
                ))
                .execute(self.c())
                .await?;
                Ok(n == 1)
            }

            async fn statements_page(
                &mut self,
                page: &ListFilter,
            ) -> StoreResult<Vec<StatementRow>> {
                let mut q = billing_statements::table.into_boxed();
                if let Some(m) = &page.merchant_id {
                    q = q.filter(billing_statements::merchant_id.eq(m.clone()));
                }
                Ok(
                    crate::paging::newest_after!(q, billing_statements, issued_at, id, page)
                        .select(crate::rows::columns::<StatementRow>())
                        .load(self.c())
                        .await?,
                )
            }

            async fn statement_document(&mut self, id: &str) -> StoreResult<Option<Vec<u8>>> {
                Ok(billing_documents::table
                    .filter(billing_documents::statement_id.eq(id))
                    .select(billing_documents::pdf)
                    .first::<Vec<u8>>(self.c())
                    .await
                    .optional()?)
            }
        }
    };
}

impl_billing!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_billing!(crate::Tx<'_, crate::SqliteConn>);
