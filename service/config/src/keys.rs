//! API keys at rest. The service needs a merchant's key itself (callbacks
//! are signed with it), so keys are encrypted, not hashed, under a master
//! key from configuration; an HMAC of the key is the lookup index, so the
//! table never holds anything that verifies a guessed key without the
//! master key.

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

pub struct KeyVault {
    cipher: ChaCha20Poly1305,
    lookup_key: [u8; 32],
}

impl KeyVault {
    pub fn from_base64(master_key: &str) -> Result<KeyVault> {
        let bytes = B64
            .decode(master_key.trim())
            .context("the master key is not valid base64")?;
        if bytes.len() != 32 {
            bail!(
                "the master key must be 32 bytes (base64 of 32 random bytes), not {}",
                bytes.len()
            );
        }
        // Separate keys for encryption and lookup, both derived from the
        // master key.
        let derive = |label: &[u8]| -> Result<[u8; 32]> {
            let mut mac =
                <Hmac<Sha256> as Mac>::new_from_slice(&bytes).map_err(|e| anyhow!("{e}"))?;
            mac.update(label);
            Ok(mac.finalize().into_bytes().into())
        };
        let enc = derive(b"payments/api-key-encryption")?;
        Ok(KeyVault {
            cipher: ChaCha20Poly1305::new(Key::from_slice(&enc)),
            lookup_key: derive(b"payments/api-key-lookup")?,
        })
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

    pub fn encrypt(&self, api_key: &str) -> Result<String> {
        let mut nonce = [0u8; 12];
        rand::thread_rng().fill_bytes(&mut nonce);
        let sealed = self
            .cipher
            .encrypt(Nonce::from_slice(&nonce), api_key.as_bytes())
            .map_err(|_| anyhow!("encrypting an API key failed"))?;
        let mut out = nonce.to_vec();
        out.extend(sealed);
        Ok(B64.encode(out))
    }

    pub fn decrypt(&self, stored: &str) -> Result<String> {
        let bytes = B64.decode(stored).context("stored key is not base64")?;
        if bytes.len() < 12 {
            bail!("stored key is truncated");
        }
        let (nonce, sealed) = bytes.split_at(12);
        let plain = self
            .cipher
            .decrypt(Nonce::from_slice(nonce), sealed)
            .map_err(|_| anyhow!("a stored API key does not decrypt under this master key"))?;
        String::from_utf8(plain).context("stored key is not UTF-8")
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
