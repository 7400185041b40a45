//! Merchant owners and their invitations.

use super::{first_or_none, insert_one};
use crate::domain::status::{InvitationStatus, OwnerStatus};
use crate::paging::ListFilter;
use crate::rows::*;
use crate::schema::*;
use crate::StoreResult;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

#[async_trait]
pub trait OwnerQueries: Send {
    async fn owner_by_email(
        &mut self,
        merchant_id: &str,
        email: &str,
    ) -> StoreResult<Option<OwnerRow>>;

    async fn insert_owner(&mut self, row: &OwnerRow) -> StoreResult<()>;

    /// The merchant's owners, oldest first.
    async fn owners_of(&mut self, merchant_id: &str) -> StoreResult<Vec<OwnerRow>>;

    /// Sets the owner's status at `at`; the owner as it now is, `None`
    /// when there is no such owner.
    async fn set_owner_status(
        &mut self,
        owner_id: &str,
        status: OwnerStatus,
        at: i64,
    ) -> StoreResult<Option<OwnerRow>>;

    /// The owner's password set and the owner active, at `at`.
    async fn activate_owner(
        &mut self,
        owner_id: &str,
        password_hash: &str,
        at: i64,
    ) -> StoreResult<()>;

    async fn insert_invitation(&mut self, row: &InvitationRow) -> StoreResult<()>;

    async fn invitation_by_id(&mut self, id: &str) -> StoreResult<Option<InvitationRow>>;

    async fn invitation_by_token(&mut self, token_hash: &str)
        -> StoreResult<Option<InvitationRow>>;

    /// The invitation whose token has this hash, held until the
    /// transaction ends (a row lock on PostgreSQL; SQLite's one writer).
    async fn lock_invitation_by_hash(
        &mut self,
        token_hash: &str,
    ) -> StoreResult<Option<InvitationRow>>;

    /// Ends every pending invitation of the owner as `status` at `at`;
    /// how many it ended.
    async fn end_pending_invitations(
        &mut self,
        owner_id: &str,
        status: InvitationStatus,
        at: i64,
    ) -> StoreResult<usize>;

    /// Ends one invitation if it is still pending; whether it was.
    async fn end_invitation(
        &mut self,
        id: &str,
        status: InvitationStatus,
        at: i64,
    ) -> StoreResult<bool>;

    async fn invitations_page(
        &mut self,
        merchant_id: &str,
        page: &ListFilter,
    ) -> StoreResult<Vec<InvitationRow>>;
}

macro_rules! impl_owners {
    ($conn:ty) => {
        #[async_trait]
        impl OwnerQueries for $conn {
            async fn owner_by_email(
                &mut self,
                merchant_id: &str,
                email: &str,
            ) -> StoreResult<Option<OwnerRow>> {
                first_or_none!(
                    self.c(),
                    OwnerRow,
                    merchant_owners::table
                        .filter(merchant_owners::merchant_id.eq(merchant_id))
                        .filter(merchant_owners::email.eq(email)),
                    "merchant_owners",
                    "merchant_id" = merchant_id
                )
            }

            async fn insert_owner(&mut self, row: &OwnerRow) -> StoreResult<()> {
                insert_one!(self.c(), merchant_owners::table, row)
            }

            async fn owners_of(&mut self, merchant_id: &str) -> StoreResult<Vec<OwnerRow>> {
                Ok(merchant_owners::table
                    .filter(merchant_owners::merchant_id.eq(merchant_id))
                    .order((merchant_owners::created_at, merchant_owners::id))
                    .select(crate::rows::columns::<OwnerRow>())
                    .load(self.c())
                    .await?)
            }

            async fn set_owner_status(
                &mut self,
                owner_id: &str,
                status: OwnerStatus,
                at: i64,
            ) -> StoreResult<Option<OwnerRow>> {
                diesel::update(merchant_owners::table.filter(merchant_owners::id.eq(owner_id)))
                    .set((
                        merchant_owners::status.eq(status),
                        merchant_owners::updated_at.eq(at),
                    ))
                    .execute(self.c())
                    .await?;
                first_or_none!(
                    self.c(),
                    OwnerRow,
                    merchant_owners::table.filter(merchant_owners::id.eq(owner_id)),
                    "merchant_owners",
                    "id" = owner_id
                )
            }

            async fn activate_owner(
                &mut self,
                owner_id: &str,
                password_hash: &str,
                at: i64,
            ) -> StoreResult<()> {
                diesel::update(merchant_owners::table.filter(merchant_owners::id.eq(owner_id)))
                    .set((
                        merchant_owners::status.eq(OwnerStatus::Active),
                        merchant_owners::password_hash.eq(Some(password_hash)),
                        merchant_owners::updated_at.eq(at),
                    ))
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn insert_invitation(&mut self, row: &InvitationRow) -> StoreResult<()> {
                self.done.created = Some(row.id.clone());
                insert_one!(self.c(), owner_invitations::table, row)
            }

            async fn invitation_by_id(&mut self, id: &str) -> StoreResult<Option<InvitationRow>> {
                first_or_none!(
                    self.c(),
                    InvitationRow,
                    owner_invitations::table.filter(owner_invitations::id.eq(id)),
                    "owner_invitations",
                    "id" = id
                )
            }

            async fn invitation_by_token(
                &mut self,
                token_hash: &str,
            ) -> StoreResult<Option<InvitationRow>> {
                // The key the row is named by in an error is its id, never
                // the hash of its token.
                Ok(owner_invitations::table
                    .filter(owner_invitations::token_hash.eq(token_hash))
                    .select(crate::rows::columns::<InvitationRow>())
                    .first(self.c())
                    .await
                    .optional()?)
            }

            async fn lock_invitation_by_hash(
                &mut self,
                token_hash: &str,
            ) -> StoreResult<Option<InvitationRow>> {
                // A write that changes nothing takes the row's lock on both
                // backends, so two accepts of one link cannot both see it
                // pending.
                let found: Option<InvitationRow> = diesel::update(
                    owner_invitations::table.filter(owner_invitations::token_hash.eq(token_hash)),
                )
                .set(owner_invitations::status.eq(owner_invitations::status))
                .returning(crate::rows::columns::<InvitationRow>())
                .get_result(self.c())
                .await
                .optional()?;
                Ok(found)
            }

            async fn end_pending_invitations(
                &mut self,
                owner_id: &str,
                status: InvitationStatus,
                at: i64,
            ) -> StoreResult<usize> {
                Ok(diesel::update(
                    owner_invitations::table
                        .filter(owner_invitations::owner_id.eq(owner_id))
                        .filter(owner_invitations::status.eq(InvitationStatus::Pending)),
                )
                .set((
                    owner_invitations::status.eq(status),
                    owner_invitations::ended_at.eq(Some(at)),
                ))
                .execute(self.c())
                .await?)
            }

            async fn end_invitation(
                &mut self,
                id: &str,
                status: InvitationStatus,
                at: i64,
            ) -> StoreResult<bool> {
                let n = diesel::update(
                    owner_invitations::table
                        .filter(owner_invitations::id.eq(id))
                        .filter(owner_invitations::status.eq(InvitationStatus::Pending)),
                )
                .set((
                    owner_invitations::status.eq(status),
                    owner_invitations::ended_at.eq(Some(at)),
                ))
                .execute(self.c())
                .await?;
                Ok(n == 1)
            }

            async fn invitations_page(
                &mut self,
                merchant_id: &str,
                page: &ListFilter,
            ) -> StoreResult<Vec<InvitationRow>> {
                let q = owner_invitations::table
                    .filter(owner_invitations::merchant_id.eq(merchant_id.to_string()))
                    .into_boxed();
                Ok(
                    crate::paging::newest_after!(q, owner_invitations, issued_at, id, page)
                        .select(crate::rows::columns::<InvitationRow>())
                        .load(self.c())
                        .await?,
                )
            }
        }
    };
}

impl_owners!(crate::Tx<'_, diesel_async::AsyncPgConnection>);
impl_owners!(crate::Tx<'_, crate::SqliteConn>);
