//! Secrets at rest. The service needs a merchant's key itself (callbacks
//! are signed with it), so keys are encrypted, not hashed, under a master
//! key from configuration; an HMAC of the key is the lookup index, so the
//! table never holds anything that verifies a guessed key without the
//! master key.
//!
//! Master keys rotate. Each has an id (derived from it, so nothing more is
//! configured), and what is sealed now names the key it was sealed under
//! (`v2:<id>:<base64>`; older values carry no id and are tried under every
//! configured key). The previous keys decrypt while `payments keys rotate`
//! reseals every stored secret under the current one. The lookup index
//! cannot be recomputed (tokens and sessions are stored only hashed), so
//! its key outlives the master key it was first derived from: the database
//! keeps it sealed under the current master key (`LOOKUP_KEY_PURPOSE`).

use anyhow::{anyhow, bail, Context, Result};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use std::path::Path;
use subtle::ConstantTimeEq;

/// Where the database keeps the lookup index's key, sealed.
pub const LOOKUP_KEY_PURPOSE: &str = "lookup";

const SEALED_PREFIX: &str = "v2:";

/// One master key: its id and the cipher derived from it.
struct Sealer {
    id: String,
    cipher: ChaCha20Poly1305,
}

pub struct KeyVault {
    current: Sealer,
    /// Decrypt only, newest first.
    previous: Vec<Sealer>,
    lookup_key: [u8; 32],
}

fn master_bytes(master_key: &str) -> Result<Vec<u8>> {
    let bytes = B64
        .decode(master_key.trim())
        .context("the master key is not valid base64")?;
    if bytes.len() != 32 {
        bail!(
            "the master key must be 32 bytes (base64 of 32 random bytes), not {}",
            bytes.len()
        );
    }
    Ok(bytes)
}

/// A key for one purpose, derived from a master key: encryption, lookup
/// and the id are never the same bytes.
fn derive(master: &[u8], label: &[u8]) -> Result<[u8; 32]> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(master).map_err(|e| anyhow!("{e}"))?;
    mac.update(label);
    Ok(mac.finalize().into_bytes().into())
}

impl Sealer {
    fn new(master: &[u8]) -> Result<Sealer> {
        let enc = derive(master, b"payments/api-key-encryption")?;
        Ok(Sealer {
            id: hex::encode(&derive(master, b"payments/master-key-id")?[..4]),
            cipher: ChaCha20Poly1305::new(Key::from_slice(&enc)),
        })
    }

    fn open(&self, sealed: &[u8]) -> Option<Vec<u8>> {
        if sealed.len() < 12 {
            return None;
        }
        let (nonce, body) = sealed.split_at(12);
        self.cipher.decrypt(Nonce::from_slice(nonce), body).ok()
    }
}

impl KeyVault {
    pub fn from_base64(master_key: &str) -> Result<KeyVault> {
        Self::with_previous(master_key, &[])
    }

    /// The current master key, and the previous ones (newest first) that
    /// still decrypt. Until the database's own lookup key is adopted
    /// (`adopt_lookup_key`), the index is keyed from the oldest of them:
    /// the one the index was first made under.
    pub fn with_previous(master_key: &str, previous: &[String]) -> Result<KeyVault> {
        let current = master_bytes(master_key)?;
        let mut older = Vec::with_capacity(previous.len());
        for (i, p) in previous.iter().enumerate() {
            older.push(master_bytes(p).with_context(|| format!("previous master key {}", i + 1))?);
        }
        let oldest = older.last().unwrap_or(&current);
        let lookup_key = derive(oldest, b"payments/api-key-lookup")?;
        let current = Sealer::new(&current)?;
        let previous = older
            .iter()
            .map(|k| Sealer::new(k))
            .collect::<Result<Vec<_>>>()?;
        if previous.iter().any(|p| p.id == current.id) {
            bail!("a previous master key is the current one");
        }
        Ok(KeyVault {
            current,
            previous,
            lookup_key,
        })
    }

    /// The current master key's id (8 hex digits), as sealed values name it.
    pub fn master_key_id(&self) -> &str {
        &self.current.id
    }

    /// The lookup key, sealed under the current master key, for the
    /// database to keep.
    pub fn sealed_lookup_key(&self) -> Result<String> {
        self.encrypt(&hex::encode(self.lookup_key))
    }

    /// Takes the lookup key the database keeps (`sealed_lookup_key`).
    pub fn adopt_lookup_key(&mut self, sealed: &str) -> Result<()> {
        let hex_key = self
            .decrypt(sealed)
            .context("the database's lookup key does not open under any configured master key")?;
        let bytes = hex::decode(hex_key).context("the database's lookup key is not hex")?;
        self.lookup_key = bytes
            .try_into()
            .map_err(|_| anyhow!("the database's lookup key is not 32 bytes"))?;
        Ok(())
    }

    pub fn generate_master_key() -> String {
        let mut bytes = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut bytes);
        B64.encode(bytes)
    }

    /// Reads the sandbox's master key from `dir`, creating it on first run.
    pub fn load_or_create(dir: &Path) -> Result<String> {
        let path = dir.join("master.key");
        if let Ok(existing) = std::fs::read_to_string(&path) {
            return Ok(existing.trim().to_string());
        }
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let key = Self::generate_master_key();
        std::fs::write(&path, &key).with_context(|| format!("writing {}", path.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
        }
        Ok(key)
    }

    pub fn lookup_hash(&self, api_key: &str) -> String {
        let mut mac = match <Hmac<Sha256> as Mac>::new_from_slice(&self.lookup_key) {
            Ok(mac) => mac,
            // A 32-byte key is always accepted by HMAC.
            Err(_) => return String::new(),
        };
        mac.update(api_key.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    /// Seals `plain` under the current master key, naming it.
    pub fn encrypt(&self, plain: &str) -> Result<String> {
        let mut nonce = [0u8; 12];
        rand::thread_rng().fill_bytes(&mut nonce);
        let sealed = self
            .current
            .cipher
            .encrypt(Nonce::from_slice(&nonce), plain.as_bytes())
            .map_err(|_| anyhow!("encrypting a secret failed"))?;
        let mut out = nonce.to_vec();
        out.extend(sealed);
        Ok(format!(
            "{SEALED_PREFIX}{}:{}",
            self.current.id,
            B64.encode(out)
        ))
    }

    /// Opens a value sealed under any configured master key.
    pub fn decrypt(&self, stored: &str) -> Result<String> {
        let (id, body) = match stored.strip_prefix(SEALED_PREFIX) {
            Some(rest) => match rest.split_once(':') {
                Some((id, body)) => (Some(id), body),
                None => bail!("a stored secret names no master key"),
            },
            // Sealed before master keys had ids.
            None => (None, stored),
        };
        let bytes = B64.decode(body).context("a stored secret is not base64")?;
        let plain = match id {
            Some(id) => self
                .sealers()
                .find(|s| s.id == id)
                .ok_or_else(|| {
                    anyhow!(
                        "a stored secret is sealed under master key {id}, which is not configured"
                    )
                })?
                .open(&bytes),
            None => self.sealers().find_map(|s| s.open(&bytes)),
        }
        .ok_or_else(|| {
            anyhow!("a stored secret does not decrypt under the configured master keys")
        })?;
        String::from_utf8(plain).context("a stored secret is not UTF-8")
    }

    /// Whether `stored` is sealed under the current master key.
    pub fn is_current(&self, stored: &str) -> bool {
        stored
            .strip_prefix(SEALED_PREFIX)
            .and_then(|rest| rest.split_once(':'))
            .is_some_and(|(id, _)| id == self.current.id)
    }

    /// `stored` sealed again under the current master key, or `None` when
    /// it already is.
    pub fn reseal(&self, stored: &str) -> Result<Option<String>> {
        if self.is_current(stored) {
            return Ok(None);
        }
        self.encrypt(&self.decrypt(stored)?).map(Some)
    }

    fn sealers(&self) -> impl Iterator<Item = &Sealer> {
        std::iter::once(&self.current).chain(self.previous.iter())
    }
}

/// The prefixes of production's and the sandbox's API keys.
pub const KEY_KINDS: [&str; 2] = ["sk_live_", "sk_test_"];

/// A new API key: a profile prefix and 192 random bits.
pub fn new_api_key(production: bool) -> String {
    let mut bytes = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut bytes);
    let prefix = KEY_KINDS[usize::from(!production)];
    format!("{prefix}{}", hex::encode(bytes))
}

/// A key's kind and last four characters (`sk_live_…a1b2`): enough to
/// tell a merchant's keys apart, far from enough to use one.
pub fn key_hint(key: &str) -> String {
    let kind = KEY_KINDS
        .into_iter()
        .find(|k| key.starts_with(k))
        .unwrap_or("");
    let tail_from = key.char_indices().rev().nth(3).map_or(0, |(i, _)| i);
    format!("{kind}…{}", &key[tail_from..])
}

pub fn constant_time_eq(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_is_the_kind_and_the_last_four() {
        assert_eq!(key_hint("sk_live_0123456789abcdef"), "sk_live_…cdef");
        assert_eq!(key_hint("abc"), "…abc");
        assert!(new_api_key(true).starts_with("sk_live_"));
        assert!(new_api_key(false).starts_with("sk_test_"));
    }

    /// A value as sealed before master keys had ids.
    fn sealed_the_old_way(vault: &KeyVault, plain: &str) -> String {
        let nonce = [7u8; 12];
        let mut out = nonce.to_vec();
        out.extend(
            vault
                .current
                .cipher
                .encrypt(Nonce::from_slice(&nonce), plain.as_bytes())
                .unwrap(),
        );
        B64.encode(out)
    }

    #[test]
    fn a_rotation_reseals_under_the_new_key_while_the_old_one_still_opens() {
        let (a, b) = (
            KeyVault::generate_master_key(),
            KeyVault::generate_master_key(),
        );
        let old = KeyVault::from_base64(&a).unwrap();
        let both = KeyVault::with_previous(&b, std::slice::from_ref(&a)).unwrap();
        let new_only = KeyVault::from_base64(&b).unwrap();
        let named = old.encrypt("sk_test_1").unwrap();
        assert!(named.starts_with(&format!("v2:{}:", old.master_key_id())));
        let unnamed = sealed_the_old_way(&old, "sk_test_2");
        assert_eq!(old.decrypt(&unnamed).unwrap(), "sk_test_2");
        for (stored, plain) in [(&named, "sk_test_1"), (&unnamed, "sk_test_2")] {
            assert_eq!(both.decrypt(stored).unwrap(), plain);
            assert!(!both.is_current(stored));
            let why = new_only.decrypt(stored).unwrap_err().to_string();
            assert!(!why.contains(plain), "{why}");
            let resealed = both.reseal(stored).unwrap().expect("resealed");
            assert!(both.is_current(&resealed) && both.reseal(&resealed).unwrap().is_none());
            assert_eq!(new_only.decrypt(&resealed).unwrap(), plain);
        }
        let why = new_only.decrypt(&named).unwrap_err().to_string();
        assert!(
            why.contains(old.master_key_id()) && why.contains("not configured"),
            "{why}"
        );
        assert!(KeyVault::with_previous(&a, std::slice::from_ref(&a)).is_err());
    }

    #[test]
    fn the_lookup_key_outlives_the_master_key_it_came_from() {
        let (a, b) = (
            KeyVault::generate_master_key(),
            KeyVault::generate_master_key(),
        );
        let old = KeyVault::from_base64(&a).unwrap();
        let both = KeyVault::with_previous(&b, std::slice::from_ref(&a)).unwrap();
        let mut new_only = KeyVault::from_base64(&b).unwrap();
        let token = "op_0123456789";
        assert_eq!(
            both.lookup_hash(token),
            old.lookup_hash(token),
            "keyed from the oldest"
        );
        assert_ne!(new_only.lookup_hash(token), old.lookup_hash(token));
        let kept = both.sealed_lookup_key().unwrap();
        new_only.adopt_lookup_key(&kept).unwrap();
        assert_eq!(new_only.lookup_hash(token), old.lookup_hash(token));
        let mut stranger = KeyVault::from_base64(&KeyVault::generate_master_key()).unwrap();
        assert!(stranger.adopt_lookup_key(&kept).is_err());
    }

    #[test]
    fn keys_round_trip_and_hash_stably() {
        let vault = KeyVault::from_base64(&KeyVault::generate_master_key()).unwrap();
        let key = new_api_key(false);
        let sealed = vault.encrypt(&key).unwrap();
        assert!(!sealed.contains(&key));
        assert_eq!(vault.decrypt(&sealed).unwrap(), key);
        assert_eq!(vault.lookup_hash(&key), vault.lookup_hash(&key));
        let other = KeyVault::from_base64(&KeyVault::generate_master_key()).unwrap();
        assert!(other.decrypt(&sealed).is_err());
        assert_ne!(other.lookup_hash(&key), vault.lookup_hash(&key));
    }
}
