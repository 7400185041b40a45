//! Bank transactions reported on receiving accounts.

use crate::domain::status::BankTransactionStatus;
use crate::paging::{newest_after, ListFilter};
use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;

use super::{first_or_none, insert_one};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[async_trait]
pub trait BankQueries: Send {
    async fn insert_bank_transaction(&mut self, row: &BankTransactionRow) -> StoreResult<()>;

    async fn bank_transaction_by_reference(
        &mut self,
        account_id: &str,
        bank_reference: &str,
    ) -> StoreResult<Option<BankTransactionRow>>;

    async fn bank_transaction_by_id(&mut self, id: &str)
        -> StoreResult<Option<BankTransactionRow>>;

    /// Marks an unmatched transaction matched to `order_no`. Returns
    /// whether it was still unmatched.
    async fn mark_bank_transaction_matched(
        &mut self,
        id: &str,
        order_no: &str,
        now: i64,
    ) -> StoreResult<bool>;

    async fn list_bank_transactions(
        &mut self,
        filter: &ListFilter,
    ) -> StoreResult<Vec<BankTransactionRow>>;
}

macro_rules! impl_bank {
    ($conn:ty) => {
        #[async_trait]
        impl BankQueries for $conn {
            async fn insert_bank_transaction(
                &mut self,
                row: &BankTransactionRow,
            ) -> StoreResult<()> {
                self.done.created = Some(row.id.clone());
                insert_one!(self.c(), bank_transactions::table, row)
            }

            async fn bank_transaction_by_reference(
                &mut self,
                account_id: &str,
                bank_reference: &str,
            ) -> StoreResult<Option<BankTransactionRow>> {
                first_or_none!(
                    self.c(),
                    BankTransactionRow,
                    bank_transactions::table
                        .filter(bank_transactions::account_id.eq(account_id))
                        .filter(bank_transactions::bank_reference.eq(bank_reference)),
                    "bank_transactions",
                    "bank_reference" = bank_reference
                )
            }

            async fn bank_transaction_by_id(
                &mut self,
                id: &str,
            ) -> StoreResult<Option<BankTransactionRow>> {
                first_or_none!(
                    self.c(),
                    BankTransactionRow,
                    bank_transactions::table.filter(bank_transactions::id.eq(id)),
                    "bank_transactions",
                    "id" = id
                )
            }

            async fn mark_bank_transaction_matched(
                &mut self,
                id: &str,
                order_no: &str,
                now: i64,
            ) -> StoreResult<bool> {
                let n = diesel::update(
                    bank_transactions::table
                        .filter(bank_transactions::id.eq(id))
                        .filter(bank_transactions::status.eq(BankTransactionStatus::Unmatched)),
                )
                .set((
                    bank_transactions::status.eq(BankTransactionStatus::Matched),
                    bank_transactions::order_no.eq(Some(order_no)),
                    bank_transactions::matched_at.eq(Some(now)),
                    bank_transactions::updated_at.eq(now),
                ))
                .execute(self.c())
                .await?;
                Ok(n == 1)
            }

            async fn list_bank_transactions(
                &mut self,
                filter: &ListFilter,
            ) -> StoreResult<Vec<BankTransactionRow>> {
                let mut q = bank_transactions::table.into_boxed();
                if let Some(st) = &filter.status {
                    q = q.filter(bank_transactions::status.eq(st.clone()));
                }
                if let Some(a) = &filter.account_id {
                    q = q.filter(bank_transactions::account_id.eq(a.clone()));
                }
                Ok(newest_after!(q, bank_transactions, id, filter)
                    .select(crate::rows::columns::<BankTransactionRow>())
                    .load(self.c())
                    .await?)
            }
        }
    };
}

impl_bank!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_bank!(crate::Tx<'_, crate::SqliteConn>);
