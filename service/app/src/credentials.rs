//! Whose key a signed request carries: the key's row and its merchant with
//! the merchant's own fee rates, read in one query and then remembered for
//! a second.
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
//! A key that is not found is not remembered, so made-up keys cannot fill
//! the map; it holds at most the keys that signed a request within the
//! last second. A key's expiry is checked by the caller on every request,
//! against the time of that request.

use crate::merchants::Merchant;
use crate::store::rows::ApiKeyRow;
use crate::store::StoreResult;
use crate::App;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How long an entry is used at most, on the injected clock, whatever
/// was heard meanwhile.
pub const REMEMBERED_FOR_MS: i64 = 1_000;

/// The lookups this instance remembers, by the key's lookup hash.
#[derive(Default)]
pub struct Credentials {
    entries: Mutex<HashMap<String, Entry>>,
}

#[derive(Clone)]
struct Entry {
    generation: u64,
    read_at_ms: i64,
    signer: Arc<Signer>,
}

/// A key and the merchant it belongs to, as read together.
pub struct Signer {
    pub key: ApiKeyRow,
    pub merchant: Merchant,
}

impl Entry {
    fn fresh(&self, generation: u64, now_ms: i64) -> bool {
        self.generation == generation
            && (self.read_at_ms..self.read_at_ms + REMEMBERED_FOR_MS).contains(&now_ms)
    }
}

/// The key whose lookup hash is `key_hash` and its merchant, remembered
/// or read.
pub async fn signer(app: &App, key_hash: &str) -> StoreResult<Option<Arc<Signer>>> {
    // Read before the database is: a write that ends after this point
    // moves the generation on, so what is read below is never kept past it.
    let generation = app.db.merchants_generation();
    let now_ms = app.clock.now().timestamp_millis();
    // Not listening, this instance would not hear another one's change.
    let hears_others = app.db.listening() != Some(false);
    if let Some(entry) = app.credentials.remembered(key_hash) {
        if hears_others && entry.fresh(generation, now_ms) {
            return Ok(Some(entry.signer));
        }
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
    app.credentials.remember(
        key_hash,
        Entry {
            generation,
            read_at_ms: now_ms,
            signer: signer.clone(),
        },
    );
    Ok(Some(signer))
}

impl Credentials {
    fn remembered(&self, key_hash: &str) -> Option<Entry> {
        self.lock().get(key_hash).cloned()
    }

    fn remember(&self, key_hash: &str, entry: Entry) {
        let mut entries = self.lock();
        // Keys that stopped signing are let go of, now and then, rather
        // than on a timer.
        if entries.len() >= 1024 {
            let (generation, now_ms) = (entry.generation, entry.read_at_ms);
            entries.retain(|_, e| e.fresh(generation, now_ms));
        }
        entries.insert(key_hash.to_string(), entry);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // The map holds no invariant a panic could break half-way.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
