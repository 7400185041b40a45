//! What the master key seals, table by table, for `payments keys rotate`
//! to read in pages and write back; and the lookup key the database keeps
//! for the vault (`payments_config::keys`).

use crate::domain::status::OrderKind;
use crate::schema::*;
use crate::StoreResult;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

/// Each place a value sealed under the master key is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sealed {
    /// `api_keys.key_ciphertext`: merchants' API keys.
    ApiKeys,
    /// `merchants.callback_secrets`: a JSON list whose entries each hold a
    /// sealed callback secret (`ciphertext`).
    CallbackSecrets,
    /// `cashier_sessions.token_sealed`: the cashier pages' tokens.
    CashierTokens,
    /// `callback_deliveries.body` of platform events (invitations carry a
    /// link that signs an owner in).
    PlatformEventBodies,
    /// `secret_reveals.ciphertext`: a new key kept for one page.
    Reveals,
    /// `vault_keys.sealed`: the lookup index's key.
    VaultKeys,
    /// `operator_second_factors.secret_sealed`: operators' authenticator secrets.
    SecondFactors,
}

impl Sealed {
    pub const ALL: [Sealed; 7] = [
        Sealed::ApiKeys,
        Sealed::CallbackSecrets,
        Sealed::CashierTokens,
        Sealed::PlatformEventBodies,
        Sealed::Reveals,
        Sealed::VaultKeys,
        Sealed::SecondFactors,
    ];

    /// The table and the sealed column (every one keyed by `id`).
    fn table_column(self) -> (&'static str, &'static str) {
        match self {
            Sealed::ApiKeys => ("api_keys", "key_ciphertext"),
            Sealed::CallbackSecrets => ("merchants", "callback_secrets"),
            Sealed::CashierTokens => ("cashier_sessions", "token_sealed"),
            Sealed::PlatformEventBodies => ("callback_deliveries", "body"),
            Sealed::Reveals => ("secret_reveals", "ciphertext"),
            Sealed::VaultKeys => ("vault_keys", "sealed"),
            Sealed::SecondFactors => ("operator_second_factors", "secret_sealed"),
        }
    }

    /// The table and column, as a progress line names them.
    pub fn as_str(self) -> &'static str {
        match self {
            Sealed::ApiKeys => "api_keys.key_ciphertext",
            Sealed::CallbackSecrets => "merchants.callback_secrets",
            Sealed::CashierTokens => "cashier_sessions.token_sealed",
            Sealed::PlatformEventBodies => "callback_deliveries.body (platform events)",
            Sealed::Reveals => "secret_reveals.ciphertext",
            Sealed::VaultKeys => "vault_keys.sealed",
            Sealed::SecondFactors => "operator_second_factors.secret_sealed",
        }
    }
}

fn platform_kinds() -> [&'static str; 2] {
    [
        OrderKind::OwnerInvitation.as_str(),
        OrderKind::BillingStatement.as_str(),
    ]
}

#[async_trait]
pub trait VaultQueries: Send {
    /// What the vault keeps under `id`, sealed.
    async fn vault_key(&mut self, id: &str) -> StoreResult<Option<String>>;

    /// Keeps `sealed` under `id` unless something is kept there already
    /// (another instance, starting at the same moment, may have).
    async fn keep_vault_key(&mut self, id: &str, sealed: &str, at: i64) -> StoreResult<()>;

    /// Up to `limit` rows of `place` after `after`, by id: (id, stored).
    async fn sealed_page(
        &mut self,
        place: Sealed,
        after: &str,
        limit: i64,
    ) -> StoreResult<Vec<(String, String)>>;

    /// Writes `new` where `place` holds `old` for `id`; whether it did (a
    /// row changed or gone since it was read is left as it is).
    async fn reseal(&mut self, place: Sealed, id: &str, old: &str, new: &str) -> StoreResult<bool>;

    /// [`VaultQueries::reseal`] for each `(id, old, new)`; how many were
    /// written.
    async fn reseal_page(&mut self, place: Sealed, rows: &[Reseal]) -> StoreResult<u64> {
        let mut n = 0;
        for (id, old, new) in rows {
            if self.reseal(place, id, old, new).await? {
                n += 1;
            }
        }
        Ok(n)
    }
}

/// A row to seal again: its id, what it holds, what it should hold.
pub type Reseal = (String, String, String);

/// One page of `$table.$col` after `$after`, ordered by `$key`.
macro_rules! page {
    ($conn:expr, $table:ident, $key:ident, $col:ident, $after:expr, $limit:expr $(, $only:expr)?) => {
        $table::table
            .filter($table::$key.gt($after))
            $(.filter($only))?
            .order($table::$key.asc())
            .limit($limit)
            .select(($table::$key, $table::$col))
            .load::<(String, String)>($conn)
            .await?
    };
}

/// Compare-and-set of `$table.$col` for the row `$id`.
macro_rules! swap {
    ($conn:expr, $table:ident, $key:ident, $col:ident, $id:expr, $old:expr, $new:expr) => {
        diesel::update(
            $table::table
                .filter($table::$key.eq($id))
                .filter($table::$col.eq($old)),
        )
        .set($table::$col.eq($new))
        .execute($conn)
        .await?
    };
}

macro_rules! impl_vault {
    ($conn:ty $(, $more:item)*) => {
        #[async_trait]
        impl VaultQueries for $conn {
            async fn vault_key(&mut self, id: &str) -> StoreResult<Option<String>> {
                Ok(vault_keys::table
                    .filter(vault_keys::id.eq(id))
                    .select(vault_keys::sealed)
                    .first(self.c())
                    .await
                    .optional()?)
            }

            async fn keep_vault_key(&mut self, id: &str, sealed: &str, at: i64) -> StoreResult<()> {
                diesel::insert_into(vault_keys::table)
                    .values((
                        vault_keys::id.eq(id),
                        vault_keys::sealed.eq(sealed),
                        vault_keys::created_at.eq(at),
                    ))
                    .on_conflict_do_nothing()
                    .execute(self.c())
                    .await?;
                Ok(())
            }

            async fn sealed_page(
                &mut self,
                place: Sealed,
                after: &str,
                limit: i64,
            ) -> StoreResult<Vec<(String, String)>> {
                let c = self.c();
                Ok(match place {
                    Sealed::ApiKeys => page!(c, api_keys, id, key_ciphertext, after, limit),
                    Sealed::CallbackSecrets => {
                        page!(c, merchants, id, callback_secrets, after, limit)
                    }
                    Sealed::CashierTokens => {
                        page!(c, cashier_sessions, id, token_sealed, after, limit)
                    }
                    Sealed::PlatformEventBodies => page!(
                        c,
                        callback_deliveries,
                        id,
                        body,
                        after,
                        limit,
                        callback_deliveries::order_kind.eq_any(platform_kinds())
                    ),
                    Sealed::Reveals => page!(c, secret_reveals, id, ciphertext, after, limit),
                    Sealed::VaultKeys => page!(c, vault_keys, id, sealed, after, limit),
                    Sealed::SecondFactors => {
                        page!(c, operator_second_factors, id, secret_sealed, after, limit)
                    }
                })
            }

            async fn reseal(
                &mut self,
                place: Sealed,
                id: &str,
                old: &str,
                new: &str,
            ) -> StoreResult<bool> {
                let c = self.c();
                let n = match place {
                    Sealed::ApiKeys => swap!(c, api_keys, id, key_ciphertext, id, old, new),
                    Sealed::CallbackSecrets => {
                        swap!(c, merchants, id, callback_secrets, id, old, new)
                    }
                    Sealed::CashierTokens => {
                        swap!(c, cashier_sessions, id, token_sealed, id, old, new)
                    }
                    Sealed::PlatformEventBodies => {
                        swap!(c, callback_deliveries, id, body, id, old, new)
                    }
                    Sealed::Reveals => swap!(c, secret_reveals, id, ciphertext, id, old, new),
                    Sealed::VaultKeys => swap!(c, vault_keys, id, sealed, id, old, new),
                    Sealed::SecondFactors => {
                        swap!(c, operator_second_factors, id, secret_sealed, id, old, new)
                    }
                };
                Ok(n == 1)
            }

            $($more)*
        }
    };
}

impl_vault!(
    crate::Tx<'_, diesel_async::AsyncPgConnection>,
    /// The whole page in one statement: one UPDATE a row made rotating
    /// 100,000 keys take 80 s, nearly all of it round trips.
    async fn reseal_page(&mut self, place: Sealed, rows: &[Reseal]) -> StoreResult<u64> {
        use diesel::sql_types::{Array, Text};
        if rows.is_empty() {
            return Ok(0);
        }
        let (table, column) = place.table_column();
        // Both names are the constants above, never input.
        let update = format!(
            "UPDATE {table} AS t SET {column} = v.new \
             FROM unnest($1::text[], $2::text[], $3::text[]) AS v(id, old, new) \
             WHERE t.id = v.id AND t.{column} = v.old"
        );
        let pick =
            |f: fn(&Reseal) -> &String| rows.iter().map(|r| f(r).clone()).collect::<Vec<_>>();
        let n = diesel::sql_query(update)
            .bind::<Array<Text>, _>(pick(|r| &r.0))
            .bind::<Array<Text>, _>(pick(|r| &r.1))
            .bind::<Array<Text>, _>(pick(|r| &r.2))
            .execute(self.c())
            .await?;
        Ok(n as u64)
    }
);
impl_vault!(crate::Tx<'_, crate::SqliteConn>);
