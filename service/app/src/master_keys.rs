//! The master key's rotation: every value sealed under an earlier master
//! key is sealed again under the current one, in pages, while both
//! decrypt (`payments keys rotate`); and the lookup index's key, which
//! outlives every master key, kept in the database.

use crate::callbacks::signing::StoredSecret;
use crate::keys::{KeyVault, LOOKUP_KEY_PURPOSE};
use crate::store::queries::vault::Sealed;
use crate::store::Db;
use anyhow::{anyhow, Context, Result};

/// How far the rotation of one place has gone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    pub place: Sealed,
    /// Rows read.
    pub scanned: u64,
    /// Rows sealed again under the current master key.
    pub resealed: u64,
    /// Rows written by the service between their reading and their
    /// resealing: left as the service wrote them (under the key it has);
    /// a second run reseals them if they need it.
    pub changed_meanwhile: u64,
}

/// Takes the lookup index's key from the database, first keeping there
/// the one this vault has when the database has none yet (the first start
/// with this release: the key derived from the oldest configured master
/// key). Instances starting together keep one of theirs, and every one
/// adopts what was kept.
pub async fn adopt_lookup_key(db: &Db, vault: &mut KeyVault, now: i64) -> Result<()> {
    let sealed = vault.sealed_lookup_key()?;
    db.run(move |s| {
        Box::pin(async move { s.keep_vault_key(LOOKUP_KEY_PURPOSE, &sealed, now).await })
    })
    .await
    .context("keeping the lookup key")?;
    let kept = db
        .run(|s| Box::pin(async move { s.vault_key(LOOKUP_KEY_PURPOSE).await }))
        .await
        .context("reading the lookup key")?
        .ok_or_else(|| anyhow!("the lookup key was kept and is gone"))?;
    vault.adopt_lookup_key(&kept)
}

/// Reseals every stored secret not sealed under the current master key,
/// `batch` rows to a transaction, telling `progress` after each page.
pub async fn rotate(
    db: &Db,
    vault: &KeyVault,
    batch: i64,
    mut progress: impl FnMut(&Progress),
) -> Result<Vec<Progress>> {
    let mut done = Vec::with_capacity(Sealed::ALL.len());
    for place in Sealed::ALL {
        done.push(rotate_place(db, vault, place, batch, &mut progress).await?);
    }
    Ok(done)
}

async fn rotate_place(
    db: &Db,
    vault: &KeyVault,
    place: Sealed,
    batch: i64,
    progress: &mut impl FnMut(&Progress),
) -> Result<Progress> {
    let mut p = Progress {
        place,
        scanned: 0,
        resealed: 0,
        changed_meanwhile: 0,
    };
    let mut after = String::new();
    loop {
        let from = after.clone();
        let page = db
            .run(move |s| Box::pin(async move { s.sealed_page(place, &from, batch).await }))
            .await
            .with_context(|| format!("reading {}", place.as_str()))?;
        let Some((last, _)) = page.last() else { break };
        after = last.clone();
        let mut writes = Vec::new();
        for (id, stored) in page {
            p.scanned += 1;
            let resealed = match place {
                Sealed::CallbackSecrets => reseal_secrets(vault, &stored),
                _ => vault.reseal(&stored),
            }
            // The error names where, never the value.
            .with_context(|| format!("{} of row {id}", place.as_str()))?;
            if let Some(new) = resealed {
                writes.push((id, stored, new));
            }
        }
        let tried = writes.len() as u64;
        if tried > 0 {
            let written: u64 = db
                .transaction(move |s| Box::pin(async move { s.reseal_page(place, &writes).await }))
                .await
                .with_context(|| format!("writing {}", place.as_str()))?;
            p.resealed += written;
            p.changed_meanwhile += tried - written;
        }
        progress(&p);
    }
    Ok(p)
}

/// A merchant's secrets document with each secret resealed, or `None`
/// when every one already is under the current key.
fn reseal_secrets(vault: &KeyVault, document: &str) -> Result<Option<String>> {
    let mut secrets: Vec<StoredSecret> =
        serde_json::from_str(document).context("not a valid secrets document")?;
    let mut changed = false;
    for secret in &mut secrets {
        if let Some(new) = vault.reseal(&secret.ciphertext)? {
            secret.ciphertext = new;
            changed = true;
        }
    }
    Ok(match changed {
        true => Some(serde_json::to_string(&secrets)?),
        false => None,
    })
}
