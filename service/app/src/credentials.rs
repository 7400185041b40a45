//! Whose key a signed request carries: the key's row and its merchant with
//! the merchant's own fee rates, read in one query and then remembered for
//! a second; and merchants by id with their own rates, remembered the same
//! way for the paths that read one per request (an approval and its
//! dispatch, a completion's fee).
//!
//! Every signed request starts with this lookup. Remembering it saves a
//! database round trip per request (one of a create-deposit's two), which
//! is what `cargo xtask bench` measured as the gap to the database's own
//! insert rate. What a remembered entry may cost:
//! - On this instance nothing: any unit of work that writes a merchant, a
//!   key or a fee rate moves `Db::merchants_generation` on, and an entry
//!   read under an older generation is not used again. A key rotated with
//!   no grace stops working here at once.
//! - On another instance on the same database nothing either: every such
//!   write is announced at its commit (PostgreSQL's NOTIFY, from the
//!   `merchants_notify` migration's triggers), and each instance's LISTEN
//!   connection moves its own generation on as it hears it, within
//!   milliseconds. While that connection is down (or not up yet) nothing
//!   remembered is used: every request reads. `REMEMBERED_FOR_MS` bounds
//!   an entry's life all the same (`docs/scaling.md`).
//!
//! A key (or a merchant) that is not found is not remembered, so made-up
//! keys cannot fill the map; it holds at most the keys that signed a
//! request (the merchants read) within the last second, and never more
//! than `HELD_AT_MOST`: past that, a lookup reads and is not remembered.
//! A key's expiry is checked by the caller on every request, against the
//! time of that request.

use crate::domain::error::ApiError;
use crate::merchants::Merchant;
use crate::store::rows::ApiKeyRow;
use crate::store::StoreResult;
use crate::App;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How long an entry is used at most, on the injected clock, whatever
/// was heard meanwhile.
pub const REMEMBERED_FOR_MS: i64 = 1_000;

/// The most entries a map holds. At the bound the stale ones are let go
/// of; when none is, nothing more is remembered until one goes stale.
pub const HELD_AT_MOST: usize = 1024;

/// What this instance remembers of merchants' rows, by a lookup key.
pub struct Remembered<V> {
    entries: Mutex<HashMap<String, Entry<V>>>,
}

/// The lookups this instance remembers, by the key's lookup hash.
pub type Credentials = Remembered<Arc<Signer>>;

impl<V> Default for Remembered<V> {
    fn default() -> Self {
        Remembered {
            entries: Mutex::new(HashMap::new()),
        }
    }
}

#[derive(Clone)]
struct Entry<V> {
    generation: u64,
    read_at_ms: i64,
    value: V,
}

/// A key and the merchant it belongs to, as read together.
pub struct Signer {
    pub key: ApiKeyRow,
    pub merchant: Merchant,
}

impl<V> Entry<V> {
    fn fresh(&self, generation: u64, now_ms: i64) -> bool {
        self.generation == generation
            && (self.read_at_ms..self.read_at_ms + REMEMBERED_FOR_MS).contains(&now_ms)
    }
}

/// When a lookup starts: the generation read before the database is (a
/// write that ends after this point moves it on, so what is read then is
/// never kept past it), the time, and whether a remembered entry may be
/// used at all (not listening, this instance would not hear another one's
/// change).
struct Asked {
    generation: u64,
    now_ms: i64,
    hears_others: bool,
}

impl Asked {
    fn now(app: &App) -> Asked {
        Asked {
            generation: app.db.merchants_generation(),
            now_ms: app.clock.now().timestamp_millis(),
            hears_others: app.db.listening() != Some(false),
        }
    }
}

/// The key whose lookup hash is `key_hash` and its merchant, remembered
/// or read.
pub async fn signer(app: &App, key_hash: &str) -> StoreResult<Option<Arc<Signer>>> {
    let asked = Asked::now(app);
    if let Some(signer) = app.credentials.fresh(key_hash, &asked) {
        return Ok(Some(signer));
    }
    let hash = key_hash.to_string();
    let found = app
        .db
        .run(|s| Box::pin(async move { s.api_key_with_merchant(&hash).await }))
        .await?;
    let Some((key, merchant, fees)) = found else {
        return Ok(None);
    };
    let signer = Arc::new(Signer {
        key,
        merchant: Merchant::from_row(merchant)?.with_own_rates(fees),
    });
    app.credentials.remember(key_hash, &asked, signer.clone());
    Ok(Some(signer))
}

/// The merchant whose id is `merchant_id`, remembered or read: for a path
/// that reads it on every request only to route and answer, where
/// `merchants::find` would cost a round trip each time.
pub async fn merchant(app: &App, merchant_id: &str) -> Result<Merchant, ApiError> {
    let read = async {
        let id = merchant_id.to_string();
        let (row, rates) = app
            .db
            .run(|s| {
                Box::pin(async move {
                    let row = s.merchant_by_id(&id).await?;
                    let rates = match row {
                        Some(_) => s.fees_of(&id).await?,
                        None => Vec::new(),
                    };
                    Ok::<_, crate::store::StoreError>((row, rates))
                })
            })
            .await?;
        let row = row.ok_or_else(|| ApiError::MerchantNotFound(merchant_id.to_string()))?;
        // With its own rates, as a signer's merchant is: a completion's fee
        // (`deposits::plan_completion`) is then not a read of its own.
        Ok(Merchant::from_row(row)?.with_own_rates(rates))
    };
    app.merchants.or_read(app, merchant_id, read).await
}

/// What signs a merchant's callbacks, as read: its row (the scheme, the
/// Standard Webhooks secrets, the timeout) and, for the seed's scheme,
/// its keys. Which of those sign is decided at each use, against that
/// moment (`callbacks::attempts`), not when they were read.
#[derive(Clone)]
pub struct CallbackRows {
    pub merchant: crate::store::rows::MerchantRow,
    pub keys: Vec<ApiKeyRow>,
}

/// A merchant's callback signing rows, remembered or read: the delivery
/// worker needs them for every batch it claims, one merchant's mostly
/// (two round trips a batch, a tenth of the money path's statements).
pub async fn callback_rows(app: &App, merchant_id: &str) -> Result<CallbackRows, ApiError> {
    let read = async {
        let merchant = crate::merchants::find_row(app, merchant_id).await?;
        let keys = match merchant.callback_scheme {
            crate::domain::status::CallbackScheme::Seed => {
                let id = merchant_id.to_string();
                app.db
                    .run(|s| Box::pin(async move { s.api_keys_of(&id).await }))
                    .await?
            }
            crate::domain::status::CallbackScheme::StandardWebhooks => Vec::new(),
        };
        Ok(CallbackRows { merchant, keys })
    };
    app.callback_rows.or_read(app, merchant_id, read).await
}

impl<V: Clone> Remembered<V> {
    /// `key`'s value, remembered or read by `read` (and then remembered):
    /// asked before the read, so a write meanwhile leaves it unremembered.
    async fn or_read(
        &self,
        app: &App,
        key: &str,
        read: impl std::future::Future<Output = Result<V, ApiError>>,
    ) -> Result<V, ApiError> {
        let asked = Asked::now(app);
        if let Some(value) = self.fresh(key, &asked) {
            return Ok(value);
        }
        let value = read.await?;
        self.remember(key, &asked, value.clone());
        Ok(value)
    }

    fn fresh(&self, key: &str, asked: &Asked) -> Option<V> {
        let entry = self.lock().get(key).cloned()?;
        (asked.hears_others && entry.fresh(asked.generation, asked.now_ms)).then_some(entry.value)
    }

    fn remember(&self, key: &str, asked: &Asked, value: V) {
        let entry = Entry {
            generation: asked.generation,
            read_at_ms: asked.now_ms,
            value,
        };
        let mut entries = self.lock();
        // Keys that stopped signing are let go of, now and then, rather
        // than on a timer.
        if entries.len() >= HELD_AT_MOST {
            entries.retain(|_, e| e.fresh(asked.generation, asked.now_ms));
        }
        if entries.len() < HELD_AT_MOST || entries.contains_key(key) {
            entries.insert(key.to_string(), entry);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry<V>>> {
        // The map holds no invariant a panic could break half-way.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(now_ms: i64) -> Asked {
        Asked {
            generation: 7,
            now_ms,
            hears_others: true,
        }
    }

    #[test]
    fn the_map_holds_at_most_its_bound_and_lets_stale_entries_go() {
        let map: Remembered<u32> = Remembered::default();
        for n in 0..HELD_AT_MOST as u32 + 10 {
            map.remember(&format!("k{n}"), &asked(0), n);
        }
        // Every entry fresh: the ones past the bound were read, not kept.
        assert_eq!(map.lock().len(), HELD_AT_MOST);
        assert_eq!(map.fresh("k0", &asked(1)), Some(0));
        assert_eq!(map.fresh(&format!("k{HELD_AT_MOST}"), &asked(1)), None);
        // A kept key is still brought up to date at the bound.
        map.remember("k0", &asked(2), 99);
        assert_eq!(map.fresh("k0", &asked(3)), Some(99));
        // A second on, the stale ones go and the new one is kept.
        map.remember("late", &asked(REMEMBERED_FOR_MS + 5), 1);
        assert_eq!(map.lock().len(), 1);
        assert_eq!(map.fresh("late", &asked(REMEMBERED_FOR_MS + 6)), Some(1));
    }
}
