//! Change requests: filed, listed, and decided once.

use super::{first_or_none, insert_one};
use crate::domain::four_eyes::ChangeRequestStatus;
use crate::paging::ListFilter;
use crate::rows::ChangeRequestRow;
use crate::schema::*;
use crate::StoreResult;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// A decision on a pending request.
#[derive(Debug, Clone)]
pub struct Decision<'a> {
    pub status: ChangeRequestStatus,
    pub by: Option<(&'a str, &'a str)>,
    pub remarks: Option<&'a str>,
    pub at: i64,
}

#[async_trait]
pub trait ChangeQueries: Send {
    async fn insert_change_request(&mut self, row: &ChangeRequestRow) -> StoreResult<()>;

    async fn change_request(&mut self, id: &str) -> StoreResult<Option<ChangeRequestRow>>;

    /// Newest first; `filter.status` narrows to one status as stored.
    async fn change_requests_page(
        &mut self,
        filter: &ListFilter,
    ) -> StoreResult<Vec<ChangeRequestRow>>;

    /// How many of this maker's requests are pending and not yet past
    /// their expiry at `now`.
    async fn pending_change_requests_of(&mut self, maker: &str, now: i64) -> StoreResult<i64>;

    /// Decides the request if it is still pending; whether it was. Two
    /// deciders racing: one wins, the other sees `false`.
    async fn decide_change_request(
        &mut self,
        id: &str,
        decision: &Decision<'_>,
    ) -> StoreResult<bool>;

    /// Up to `limit` pending requests past their expiry at `now`, oldest
    /// first: each is then marked by `decide_change_request`, so that two
    /// readers racing mark (and record) it once.
    async fn change_requests_past_due(
        &mut self,
        now: i64,
        limit: i64,
    ) -> StoreResult<Vec<ChangeRequestRow>>;
}

macro_rules! impl_changes {
    ($conn:ty) => {
        #[async_trait]
        impl ChangeQueries for $conn {
            async fn insert_change_request(&mut self, row: &ChangeRequestRow) -> StoreResult<()> {
                insert_one!(self.c(), change_requests::table, row)
            }

            async fn change_request(&mut self, id: &str) -> StoreResult<Option<ChangeRequestRow>> {
                first_or_none!(
                    self.c(),
                    ChangeRequestRow,
                    change_requests::table.filter(change_requests::id.eq(id)),
                    "change_requests",
                    "id" = id
                )
            }

            async fn change_requests_page(
                &mut self,
                filter: &ListFilter,
            ) -> StoreResult<Vec<ChangeRequestRow>> {
                let mut q = change_requests::table.into_boxed();
                if let Some(status) = &filter.status {
                    q = q.filter(change_requests::status.eq(status.clone()));
                }
                if let Some(merchant) = &filter.merchant_id {
                    q = q.filter(change_requests::merchant_id.eq(merchant.clone()));
                }
                if let Some(actions) = &filter.actions {
                    q = q.filter(change_requests::action.eq_any(actions.clone()));
                }
                Ok(
                    crate::paging::newest_after!(q, change_requests, requested_at, id, filter)
                        .select(crate::rows::columns::<ChangeRequestRow>())
                        .load(self.c())
                        .await?,
                )
            }

            async fn pending_change_requests_of(
                &mut self,
                maker: &str,
                now: i64,
            ) -> StoreResult<i64> {
                Ok(change_requests::table
                    .filter(change_requests::requested_by.eq(maker))
                    .filter(change_requests::status.eq(ChangeRequestStatus::Pending.as_str()))
                    .filter(change_requests::expires_at.gt(now))
                    .count()
                    .get_result(self.c())
                    .await?)
            }

            async fn decide_change_request(
                &mut self,
                id: &str,
                decision: &Decision<'_>,
            ) -> StoreResult<bool> {
                let n = diesel::update(
                    change_requests::table
                        .filter(change_requests::id.eq(id))
                        .filter(change_requests::status.eq(ChangeRequestStatus::Pending.as_str())),
                )
                .set((
                    change_requests::status.eq(decision.status),
                    change_requests::decided_by.eq(decision.by.map(|(id, _)| id.to_string())),
                    change_requests::decided_by_name.eq(decision.by.map(|(_, n)| n.to_string())),
                    change_requests::decided_at.eq(Some(decision.at)),
                    change_requests::decision_remarks.eq(decision.remarks.map(str::to_string)),
                ))
                .execute(self.c())
                .await?;
                Ok(n == 1)
            }

            async fn change_requests_past_due(
                &mut self,
                now: i64,
                limit: i64,
            ) -> StoreResult<Vec<ChangeRequestRow>> {
                Ok(change_requests::table
                    .filter(change_requests::status.eq(ChangeRequestStatus::Pending.as_str()))
                    .filter(change_requests::expires_at.le(now))
                    .order((change_requests::expires_at.asc(), change_requests::id.asc()))
                    .limit(limit)
                    .select(crate::rows::columns::<ChangeRequestRow>())
                    .load(self.c())
                    .await?)
            }
        }
    };
}

impl_changes!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_changes!(crate::Tx<'_, crate::SqliteConn>);
