//! Every query the service runs, written once. `impl_store!` stamps the same
//! bodies onto each backend's connection type, so diesel checks every query
//! against both PostgreSQL and SQLite at compile time.

use super::rows::*;
use super::schema::*;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::RunQueryDsl;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A unique constraint refused the write; carries the constraint or
    /// message so the caller can tell which.
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("database unavailable: {0}")]
    Unavailable(String),
    #[error("database error: {0}")]
    Other(String),
}

impl From<DieselError> for StoreError {
    fn from(e: DieselError) -> Self {
        match e {
            DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
                StoreError::Conflict(info.constraint_name().unwrap_or(info.message()).to_string())
            }
            DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection, info) => {
                StoreError::Unavailable(info.message().to_string())
            }
            DieselError::BrokenTransactionManager => StoreError::Unavailable(e.to_string()),
            other => StoreError::Other(other.to_string()),
        }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

#[async_trait]
pub trait Store: Send {
    async fn insert_merchant(&mut self, row: &MerchantRow) -> StoreResult<()>;
    async fn merchant_by_id(&mut self, id: &str) -> StoreResult<Option<MerchantRow>>;
    async fn merchant_by_code(&mut self, code: &str) -> StoreResult<Option<MerchantRow>>;

    async fn insert_api_key(&mut self, row: &ApiKeyRow) -> StoreResult<()>;
    async fn api_key_by_hash(&mut self, key_hash: &str) -> StoreResult<Option<ApiKeyRow>>;
    async fn api_keys_of(&mut self, merchant_id: &str) -> StoreResult<Vec<ApiKeyRow>>;

    async fn insert_deposit(&mut self, row: &DepositRow) -> StoreResult<()>;
    async fn deposit_by_order_no(
        &mut self,
        merchant_id: &str,
        order_no: &str,
    ) -> StoreResult<Option<DepositRow>>;
    async fn deposit_by_merchant_order_no(
        &mut self,
        merchant_id: &str,
        merchant_order_no: &str,
    ) -> StoreResult<Option<DepositRow>>;

    /// Creates the balance row unless one exists for its merchant and
    /// currency.
    async fn ensure_balance(&mut self, row: &BalanceRow) -> StoreResult<()>;
    async fn balances_of(&mut self, merchant_id: &str) -> StoreResult<Vec<BalanceRow>>;
}

macro_rules! impl_store {
    ($conn:ty) => {
        #[async_trait]
        impl Store for $conn {
            async fn insert_merchant(&mut self, row: &MerchantRow) -> StoreResult<()> {
                diesel::insert_into(merchants::table)
                    .values(row)
                    .execute(self)
                    .await?;
                Ok(())
            }

            async fn merchant_by_id(&mut self, id: &str) -> StoreResult<Option<MerchantRow>> {
                Ok(merchants::table
                    .filter(merchants::id.eq(id))
                    .select(MerchantRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn merchant_by_code(&mut self, code: &str) -> StoreResult<Option<MerchantRow>> {
                Ok(merchants::table
                    .filter(merchants::code.eq(code))
                    .select(MerchantRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn insert_api_key(&mut self, row: &ApiKeyRow) -> StoreResult<()> {
                diesel::insert_into(api_keys::table)
                    .values(row)
                    .execute(self)
                    .await?;
                Ok(())
            }

            async fn api_key_by_hash(&mut self, key_hash: &str) -> StoreResult<Option<ApiKeyRow>> {
                Ok(api_keys::table
                    .filter(api_keys::key_hash.eq(key_hash))
                    .select(ApiKeyRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn api_keys_of(&mut self, merchant_id: &str) -> StoreResult<Vec<ApiKeyRow>> {
                Ok(api_keys::table
                    .filter(api_keys::merchant_id.eq(merchant_id))
                    .order(api_keys::created_at.desc())
                    .select(ApiKeyRow::as_select())
                    .load(self)
                    .await?)
            }

            async fn insert_deposit(&mut self, row: &DepositRow) -> StoreResult<()> {
                diesel::insert_into(deposit_orders::table)
                    .values(row)
                    .execute(self)
                    .await?;
                Ok(())
            }

            async fn deposit_by_order_no(
                &mut self,
                merchant_id: &str,
                order_no: &str,
            ) -> StoreResult<Option<DepositRow>> {
                Ok(deposit_orders::table
                    .filter(deposit_orders::merchant_id.eq(merchant_id))
                    .filter(deposit_orders::order_no.eq(order_no))
                    .select(DepositRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn deposit_by_merchant_order_no(
                &mut self,
                merchant_id: &str,
                merchant_order_no: &str,
            ) -> StoreResult<Option<DepositRow>> {
                Ok(deposit_orders::table
                    .filter(deposit_orders::merchant_id.eq(merchant_id))
                    .filter(deposit_orders::merchant_order_no.eq(merchant_order_no))
                    .select(DepositRow::as_select())
                    .first(self)
                    .await
                    .optional()?)
            }

            async fn ensure_balance(&mut self, row: &BalanceRow) -> StoreResult<()> {
                diesel::insert_into(balances::table)
                    .values(row)
                    .on_conflict((balances::merchant_id, balances::currency))
                    .do_nothing()
                    .execute(self)
                    .await?;
                Ok(())
            }

            async fn balances_of(&mut self, merchant_id: &str) -> StoreResult<Vec<BalanceRow>> {
                Ok(balances::table
                    .filter(balances::merchant_id.eq(merchant_id))
                    .order(balances::currency.asc())
                    .select(BalanceRow::as_select())
                    .load(self)
                    .await?)
            }
        }
    };
}

impl_store!(diesel_async::AsyncPgConnection);
impl_store!(super::SqliteConn);
