//! Cashier sessions.

use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;

use super::{first_or_none, insert_one};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[async_trait]
pub trait CashierQueries: Send {
    async fn insert_cashier_session(&mut self, row: &CashierSessionRow) -> StoreResult<()>;

    async fn cashier_session_by_token_hash(
        &mut self,
        token_hash: &str,
    ) -> StoreResult<Option<CashierSessionRow>>;

    async fn cashier_session_by_id(&mut self, id: &str) -> StoreResult<Option<CashierSessionRow>>;

    async fn cashier_session_by_merchant_order_no(
        &mut self,
        merchant_id: &str,
        merchant_order_no: &str,
    ) -> StoreResult<Option<CashierSessionRow>>;
}

macro_rules! impl_cashier {
    ($conn:ty) => {
        #[async_trait]
        impl CashierQueries for $conn {
            async fn insert_cashier_session(&mut self, row: &CashierSessionRow) -> StoreResult<()> {
                insert_one!(self.c(), cashier_sessions::table, row)
            }

            async fn cashier_session_by_token_hash(
                &mut self,
                token_hash: &str,
            ) -> StoreResult<Option<CashierSessionRow>> {
                first_or_none!(
                    self.c(),
                    CashierSessionRow,
                    cashier_sessions::table.filter(cashier_sessions::token_hash.eq(token_hash)),
                    "cashier_sessions",
                    "token_hash" = token_hash
                )
            }

            async fn cashier_session_by_id(
                &mut self,
                id: &str,
            ) -> StoreResult<Option<CashierSessionRow>> {
                first_or_none!(
                    self.c(),
                    CashierSessionRow,
                    cashier_sessions::table.filter(cashier_sessions::id.eq(id)),
                    "cashier_sessions",
                    "id" = id
                )
            }

            async fn cashier_session_by_merchant_order_no(
                &mut self,
                merchant_id: &str,
                merchant_order_no: &str,
            ) -> StoreResult<Option<CashierSessionRow>> {
                first_or_none!(
                    self.c(),
                    CashierSessionRow,
                    cashier_sessions::table
                        .filter(cashier_sessions::merchant_id.eq(merchant_id))
                        .filter(cashier_sessions::merchant_order_no.eq(merchant_order_no)),
                    "cashier_sessions",
                    "merchant_order_no" = merchant_order_no
                )
            }
        }
    };
}

impl_cashier!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_cashier!(crate::Tx<'_, crate::SqliteConn>);
