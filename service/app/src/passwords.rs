//! Passwords of people (merchant owners now, operators for the console):
//! Argon2id with the crate's default parameters (RustCrypto's `argon2`,
//! the algorithm OWASP recommends first), stored only as the PHC string,
//! which carries its own salt and parameters.

use crate::domain::error::ApiError;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;

/// Fewer characters than this is refused; more than the maximum too (a
/// megabyte "password" is work for the hasher, not security).
pub const MIN_CHARS: usize = 12;
pub const MAX_CHARS: usize = 128;

/// Refuses a password outside the bounds, naming `field`, never the value.
pub fn acceptable(field: &str, password: &str) -> Result<(), ApiError> {
    let n = password.chars().count();
    if !(MIN_CHARS..=MAX_CHARS).contains(&n) {
        return Err(ApiError::invalid_field(
            field,
            format!("must be {MIN_CHARS} to {MAX_CHARS} characters"),
        ));
    }
    Ok(())
}

/// The PHC string of `password` under a fresh salt. Slow on purpose: run
/// it off the async workers (`hash_off_thread`).
pub fn hash(password: &str) -> Result<String, ApiError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| ApiError::Internal(format!("hashing a password: {e}")))
}

pub async fn hash_off_thread(password: String) -> Result<String, ApiError> {
    tokio::task::spawn_blocking(move || hash(&password))
        .await
        .map_err(|e| ApiError::Internal(format!("the password hasher stopped: {e}")))?
}

/// Whether `password` is the one `stored` was made from (the crate
/// compares in constant time).
pub fn verify(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored).is_ok_and(|parsed| {
        Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only_and_holds_no_plain_text() {
        let stored = hash("correct horse battery").unwrap();
        assert!(stored.starts_with("$argon2id$"));
        assert!(!stored.contains("correct horse"));
        assert!(verify("correct horse battery", &stored));
        assert!(!verify("correct horse battery!", &stored));
        assert!(!verify("correct horse battery", "not a phc string"));
        // Salted: the same password twice is two hashes.
        assert_ne!(stored, hash("correct horse battery").unwrap());
    }

    #[test]
    fn bounds_are_in_characters() {
        assert!(acceptable("password", &"a".repeat(11)).is_err());
        assert!(acceptable("password", &"ก".repeat(12)).is_ok());
        assert!(acceptable("password", &"a".repeat(129)).is_err());
    }
}
