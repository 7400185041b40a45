//! Merchants, their API keys, fee rates and settings.

use super::{first_or_none, insert_one, KeepPrepared};
use crate::dialect::Dialect;
use crate::domain::status::{KeyScope, MerchantStatus};
use crate::error::Key;
use crate::paging::ListFilter;
use crate::rows::*;
use crate::schema::*;
use crate::{InRow, StoreError, StoreResult};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// The merchants whose work is held (suspended): their callbacks are not
/// claimed and their payouts not dispatched. A subquery, so that a held
/// merchant's rows never fill a batch that others' rows wait behind.
pub(crate) fn held_merchants() -> diesel::dsl::Select<
    diesel::dsl::Filter<merchants::table, diesel::dsl::Eq<merchants::status, MerchantStatus>>,
    merchants::id,
> {
    merchants::table
        .filter(merchants::status.eq(MerchantStatus::Suspended))
        .select(merchants::id)
}

diesel::define_sql_function! {
    /// SQL's `lower`, which both dialects have.
    fn lower(x: diesel::sql_types::Text) -> diesel::sql_types::Text;
}

#[async_trait]
pub trait MerchantQueries: Send {
    async fn insert_merchant(&mut self, row: &MerchantRow) -> StoreResult<()>;

    async fn merchant_by_id(&mut self, id: &str) -> StoreResult<Option<MerchantRow>>;

    async fn merchant_by_code(&mut self, code: &str) -> StoreResult<Option<MerchantRow>>;

    /// Merchants newest first, a page at a time; `search` is a code, in
    /// full, or a part of the name, in any case.
    async fn merchants_page(
        &mut self,
        filter: &ListFilter,
        search: Option<&str>,
    ) -> StoreResult<Vec<MerchantRow>>;

    /// Holds the merchant's row until the transaction ends, so that a
    /// read-modify-write of its settings is not lost to a concurrent one.
    async fn lock_merchant(&mut self, merchant_id: &str) -> StoreResult<()>;

    async fn insert_api_key(&mut self, row: &ApiKeyRow) -> StoreResult<()>;

    /// The merchant's shared rate bucket, made as `fresh` if it has none,
    /// and held (where row locks exist) until the transaction ends.
    async fn rate_bucket(&mut self, fresh: &RateBucketRow) -> StoreResult<RateBucketRow>;

    async fn save_rate_bucket(&mut self, row: &RateBucketRow) -> StoreResult<()>;

    /// The key with this hash, its merchant and the merchant's own fee
    /// rates, in one round trip: every signed request starts here.
    async fn api_key_with_merchant(
        &mut self,
        key_hash: &str,
    ) -> StoreResult<Option<(ApiKeyRow, MerchantRow, Vec<FeeRow>)>>;

    async fn api_keys_of(&mut self, merchant_id: &str) -> StoreResult<Vec<ApiKeyRow>>;

    /// Ends one key of the merchant at `at`, unless it ended before;
    /// the key as it is then, or None when the merchant has no such key.
    async fn revoke_api_key(
        &mut self,
        merchant_id: &str,
        key_id: &str,
        at: i64,
    ) -> StoreResult<Option<ApiKeyRow>>;

    /// Sets where one key of the merchant is accepted from and what it may
    /// do; the key as it is then, or None when the merchant has no such key.
    async fn restrict_api_key(
        &mut self,
        merchant_id: &str,
        key_id: &str,
        allowed_addresses: Option<&str>,
        scope: KeyScope,
    ) -> StoreResult<Option<ApiKeyRow>>;

    /// Gives every key of the merchant that has no expiry, or a later one,
    /// this one: a rotation's grace only ever shortens an older key's life,
    /// and a grace of nothing ends every older key, whatever grace an
    /// earlier rotation gave it.
    async fn expire_api_keys(&mut self, merchant_id: &str, expires_at: i64) -> StoreResult<usize>;

    async fn upsert_fee(&mut self, row: &FeeRow) -> StoreResult<()>;

    async fn fee(
        &mut self,
        merchant_id: &str,
        currency: &str,
        direction: &str,
    ) -> StoreResult<Option<FeeRow>>;

    /// Writes `change` to the merchant; false when there is no such merchant.
    async fn change_merchant(
        &mut self,
        merchant_id: &str,
        change: &MerchantChange,
    ) -> StoreResult<bool>;
}

macro_rules! impl_merchants {
    ($conn:ty) => {
        #[async_trait]
        impl MerchantQueries for $conn {
            async fn insert_merchant(&mut self, row: &MerchantRow) -> StoreResult<()> {
                self.done.merchant_written = true;
                self.done.created = Some(row.id.clone());
                insert_one!(self.c(), merchants::table, row)
            }

            async fn merchant_by_id(&mut self, id: &str) -> StoreResult<Option<MerchantRow>> {
                first_or_none!(
                    self.c(),
                    MerchantRow,
                    merchants::table.filter(merchants::id.eq(id)),
                    "merchants",
                    "id" = id
                )
            }

            async fn merchants_page(
                &mut self,
                filter: &ListFilter,
                search: Option<&str>,
            ) -> StoreResult<Vec<MerchantRow>> {
                let mut q = merchants::table.into_boxed();
                if let Some(status) = &filter.status {
                    q = q.filter(merchants::status.eq(status.clone()));
                }
                if let Some(text) = search {
                    // The user's text is matched as it is: its `%` and `_`
                    // are escaped, not wildcards.
                    let escaped: String = text
                        .to_lowercase()
                        .chars()
                        .flat_map(|c| match c {
                            '%' | '_' | '\\' => vec!['\\', c],
                            c => vec![c],
                        })
                        .collect();
                    q = q.filter(
                        merchants::code
                            .eq(text.to_string())
                            .or(lower(merchants::name)
                                .like(format!("%{escaped}%"))
                                .escape('\\')),
                    );
                }
                Ok(crate::paging::newest_after!(q, merchants, id, filter)
                    .select(crate::rows::columns::<MerchantRow>())
                    .load(self.c())
                    .await?)
            }

            async fn merchant_by_code(&mut self, code: &str) -> StoreResult<Option<MerchantRow>> {
                first_or_none!(
                    self.c(),
                    MerchantRow,
                    merchants::table.filter(merchants::code.eq(code)),
                    "merchants",
                    "code" = code
                )
            }

            async fn lock_merchant(&mut self, merchant_id: &str) -> StoreResult<()> {
                if let Some(sql) = <$conn as Dialect>::LOCK_MERCHANT {
                    diesel::sql_query(sql)
                        .bind::<diesel::sql_types::Text, _>(merchant_id)
                        .execute(self.c())
                        .await?;
                }
                Ok(())
            }

            async fn insert_api_key(&mut self, row: &ApiKeyRow) -> StoreResult<()> {
                self.done.merchant_written = true;
                insert_one!(self.c(), api_keys::table, row)
            }

            async fn rate_bucket(&mut self, fresh: &RateBucketRow) -> StoreResult<RateBucketRow> {
                diesel::insert_into(rate_buckets::table)
                    .values(fresh)
                    .on_conflict_do_nothing()
                    .execute(self.c())
                    .await?;
                Ok(diesel::sql_query(<$conn as Dialect>::RATE_BUCKET)
                    .bind::<diesel::sql_types::Text, _>(&fresh.merchant_id)
                    .prepared()
                    .get_result(self.c())
                    .await?)
            }

            async fn save_rate_bucket(&mut self, row: &RateBucketRow) -> StoreResult<()> {
                diesel::update(
                    rate_buckets::table.filter(rate_buckets::merchant_id.eq(&row.merchant_id)),
                )
                .set((
                    rate_buckets::units.eq(row.units),
                    rate_buckets::at_ms.eq(row.at_ms),
                ))
                .prepared()
                .execute(self.c())
                .await?;
                Ok(())
            }

            async fn api_key_with_merchant(
                &mut self,
                key_hash: &str,
            ) -> StoreResult<Option<(ApiKeyRow, MerchantRow, Vec<FeeRow>)>> {
                let read: Result<Vec<(ApiKeyRow, MerchantRow, Option<FeeRow>)>, _> =
                    api_keys::table
                        .inner_join(merchants::table.left_join(merchant_fees::table))
                        .filter(api_keys::key_hash.eq(key_hash))
                        .select((
                            crate::rows::columns::<ApiKeyRow>(),
                            crate::rows::columns::<MerchantRow>(),
                            crate::rows::columns::<FeeRow>().nullable(),
                        ))
                        .load(self.c())
                        .await;
                let rows = match read.map_err(StoreError::from) {
                    Ok(rows) => rows,
                    // Which merchant's row could not be read: asked only
                    // then, so that the error names it.
                    Err(e @ StoreError::Corrupt { .. }) => {
                        let merchant: Option<String> = api_keys::table
                            .filter(api_keys::key_hash.eq(key_hash))
                            .select(api_keys::merchant_id)
                            .first(self.c())
                            .await
                            .optional()?;
                        let merchant = merchant.unwrap_or_else(|| "(gone)".into());
                        return Err(e).in_row("merchants", Key("id", &merchant));
                    }
                    Err(e) => return Err(e),
                };
                let mut rows = rows.into_iter();
                Ok(rows.next().map(|(key, merchant, first)| {
                    let fees = first
                        .into_iter()
                        .chain(rows.filter_map(|(_, _, fee)| fee))
                        .collect();
                    (key, merchant, fees)
                }))
            }

            async fn api_keys_of(&mut self, merchant_id: &str) -> StoreResult<Vec<ApiKeyRow>> {
                Ok(api_keys::table
                    .filter(api_keys::merchant_id.eq(merchant_id))
                    .order((api_keys::created_at.desc(), api_keys::id.desc()))
                    .select(crate::rows::columns::<ApiKeyRow>())
                    .load(self.c())
                    .await?)
            }

            async fn revoke_api_key(
                &mut self,
                merchant_id: &str,
                key_id: &str,
                at: i64,
            ) -> StoreResult<Option<ApiKeyRow>> {
                let mine = api_keys::table
                    .filter(api_keys::id.eq(key_id))
                    .filter(api_keys::merchant_id.eq(merchant_id));
                let n = diesel::update(
                    mine.filter(
                        api_keys::expires_at
                            .is_null()
                            .or(api_keys::expires_at.gt(at)),
                    ),
                )
                .set(api_keys::expires_at.eq(Some(at)))
                .execute(self.c())
                .await?;
                if n > 0 {
                    self.done.merchant_written = true;
                }
                Ok(mine
                    .select(crate::rows::columns::<ApiKeyRow>())
                    .first(self.c())
                    .await
                    .optional()?)
            }

            async fn restrict_api_key(
                &mut self,
                merchant_id: &str,
                key_id: &str,
                allowed_addresses: Option<&str>,
                scope: KeyScope,
            ) -> StoreResult<Option<ApiKeyRow>> {
                let mine = api_keys::table
                    .filter(api_keys::id.eq(key_id))
                    .filter(api_keys::merchant_id.eq(merchant_id));
                let n = diesel::update(mine)
                    .set((
                        api_keys::allowed_addresses.eq(allowed_addresses),
                        api_keys::scope.eq(scope),
                    ))
                    .execute(self.c())
                    .await?;
                if n > 0 {
                    // The credential cache forgets the merchant's keys.
                    self.done.merchant_written = true;
                }
                Ok(mine
                    .select(crate::rows::columns::<ApiKeyRow>())
                    .first(self.c())
                    .await
                    .optional()?)
            }

            async fn expire_api_keys(
                &mut self,
                merchant_id: &str,
                expires_at: i64,
            ) -> StoreResult<usize> {
                self.done.merchant_written = true;
                Ok(diesel::update(
                    api_keys::table
                        .filter(api_keys::merchant_id.eq(merchant_id))
                        .filter(
                            api_keys::expires_at
                                .is_null()
                                .or(api_keys::expires_at.gt(expires_at)),
                        ),
                )
                .set(api_keys::expires_at.eq(Some(expires_at)))
                .execute(self.c())
                .await?)
            }

            async fn upsert_fee(&mut self, row: &FeeRow) -> StoreResult<()> {
                self.done.merchant_written = true;
                diesel::insert_into(merchant_fees::table)
                    .values(row)
                    .on_conflict((
                        merchant_fees::merchant_id,
                        merchant_fees::currency,
                        merchant_fees::direction,
                    ))
                    .do_update()
                    .set(row)
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn fee(
                &mut self,
                merchant_id: &str,
                currency: &str,
                direction: &str,
            ) -> StoreResult<Option<FeeRow>> {
                first_or_none!(
                    self.c(),
                    FeeRow,
                    merchant_fees::table
                        .filter(merchant_fees::merchant_id.eq(merchant_id))
                        .filter(merchant_fees::currency.eq(currency))
                        .filter(merchant_fees::direction.eq(direction))
                )
            }

            async fn change_merchant(
                &mut self,
                merchant_id: &str,
                change: &MerchantChange,
            ) -> StoreResult<bool> {
                self.done.merchant_written = true;
                let n = diesel::update(merchants::table.filter(merchants::id.eq(merchant_id)))
                    .set(change)
                    .execute(self.c())
                    .await?;
                Ok(n == 1)
            }
        }
    };
}

impl_merchants!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_merchants!(crate::Tx<'_, crate::SqliteConn>);
