//! Passwords of people (merchant owners now, operators for the console):
//! Argon2id with the crate's default parameters (RustCrypto's `argon2`,
//! the algorithm OWASP recommends first), stored only as the PHC string,
//! which carries its own salt and parameters.

use crate::admission::Bounded;
use crate::domain::error::ApiError;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use std::sync::Arc;
use tokio::sync::Semaphore;

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

/// The gate password checks pass: a few run at once (each holds 19 MiB
/// and a core for a while), a few more wait, and the rest are refused at
/// once rather than queued without end. Anonymous callers reach it, so
/// nothing they send grows it. Hand-written because it is a semaphore and
/// a counter; `tower`'s limits wrap services, not a call inside a use case.
pub struct Checks {
    running: Arc<Semaphore>,
    /// Checks admitted: running, or waiting for a place to run.
    admitted: Bounded,
}

/// No place to check a password now: every place runs and the queue is
/// full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Busy;

impl Checks {
    pub fn new(at_once: usize, waiting: usize) -> Checks {
        Checks {
            running: Arc::new(Semaphore::new(at_once.max(1))),
            admitted: Bounded::new(at_once.max(1) + waiting),
        }
    }

    /// Checks admitted now, running or waiting.
    pub fn admitted(&self) -> usize {
        self.admitted.in_flight()
    }

    /// Runs `work` off the async workers once a place is free; `Busy` at
    /// once when none is and the queue is full. The place is held by the
    /// blocking work itself, so a caller that goes away does not free it
    /// while the hash still runs.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<Result<T, Busy>, ApiError> {
        let Some(admitted) = self.admitted.admit() else {
            return Ok(Err(Busy));
        };
        let place = self
            .running
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| ApiError::Internal(format!("the password checks are closed: {e}")))?;
        tokio::task::spawn_blocking(move || {
            let _held = (place, admitted);
            work()
        })
        .await
        .map(Ok)
        .map_err(|e| ApiError::Internal(format!("the password checker stopped: {e}")))
    }
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

    #[tokio::test]
    async fn past_the_running_and_the_waiting_a_check_is_refused_at_once() {
        let checks = Arc::new(Checks::new(1, 1));
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let first = tokio::spawn({
            let checks = checks.clone();
            async move { checks.run(move || hold.recv().is_ok()).await }
        });
        while checks.admitted() < 1 {
            tokio::task::yield_now().await;
        }
        let second = tokio::spawn({
            let checks = checks.clone();
            async move { checks.run(|| "second").await }
        });
        while checks.admitted() < 2 {
            tokio::task::yield_now().await;
        }
        assert_eq!(checks.run(|| "third").await.unwrap(), Err(Busy));
        assert_eq!(checks.admitted(), 2, "a refusal holds no place");
        release.send(()).unwrap();
        assert_eq!(first.await.unwrap().unwrap(), Ok(true));
        assert_eq!(second.await.unwrap().unwrap(), Ok("second"));
        assert_eq!(checks.run(|| "fourth").await.unwrap(), Ok("fourth"));
        assert_eq!(checks.admitted(), 0);
    }

    #[test]
    fn bounds_are_in_characters() {
        assert!(acceptable("password", &"a".repeat(11)).is_err());
        assert!(acceptable("password", &"ก".repeat(12)).is_ok());
        assert!(acceptable("password", &"a".repeat(129)).is_err());
    }
}
