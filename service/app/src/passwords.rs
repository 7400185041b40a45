//! Passwords of people (merchant owners now, operators for the console):
//! Argon2id with the crate's default parameters (RustCrypto's `argon2`,
//! the algorithm OWASP recommends first), stored only as the PHC string,
//! which carries its own salt and parameters.

use crate::admission::{Admitted, Bounded};
use crate::domain::error::ApiError;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{Output, ParamsString, PasswordHash, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use std::sync::{Arc, Mutex, PoisonError};
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
    let failed =
        |e: argon2::password_hash::Error| ApiError::Internal(format!("hashing a password: {e}"));
    let salt = SaltString::generate(&mut OsRng);
    let argon = Argon2::default();
    let mut salt_bytes = [0u8; 64];
    let salt_raw = salt.as_salt().decode_b64(&mut salt_bytes).map_err(failed)?;
    let params = argon.params();
    let length = params.output_len().unwrap_or(Params::DEFAULT_OUTPUT_LEN);
    let output = output_of(&argon, password, salt_raw, length).map_err(failed)?;
    Ok(PasswordHash {
        algorithm: Algorithm::Argon2id.ident(),
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(params).map_err(failed)?,
        salt: Some(salt.as_salt()),
        hash: Some(output),
    }
    .to_string())
}

/// Argon2's output of `length` bytes for `password` and `salt`, computed
/// in the kept memory: what `hash` stores and `verify` compares.
fn output_of(
    argon: &Argon2,
    password: &str,
    salt: &[u8],
    length: usize,
) -> argon2::password_hash::Result<Output> {
    Output::init_with(length, |out| {
        in_kept_memory(argon.params(), |memory| {
            argon.hash_password_into_with_memory(password.as_bytes(), salt, out, memory)
        })
        .map_err(Into::into)
    })
}

/// Argon2's working memory (19 MiB at the default parameters), kept for the
/// next check instead of freed after each. Freed, the allocator keeps it
/// for a second before giving it back, and a check within that second may
/// take fresh memory beside it: the abuse bench's 2,000 sign-ins peaked at
/// 76 MiB in one run of five and at 57 MiB in the others. Kept, the memory
/// checks hold is the same in every run. One spare, because on two cores
/// the gate runs one check at once; checks beside it (more places, or a
/// password being set) take their own and free it. Zeroed after each use,
/// so nothing derived from a password stays in it. The cost: a process
/// that has checked a password holds the 19 MiB from then on.
static KEPT: Mutex<Option<Vec<Block>>> = Mutex::new(None);

/// Runs `work` on memory for `params`, the kept memory when it is large
/// enough. Only memory of the default size or less is kept: a stored hash
/// asking for more gets it for its check alone.
fn in_kept_memory<T>(params: &Params, work: impl FnOnce(&mut [Block]) -> T) -> T {
    in_memory_of(&KEPT, params, work)
}

fn in_memory_of<T>(
    keeper: &Mutex<Option<Vec<Block>>>,
    params: &Params,
    work: impl FnOnce(&mut [Block]) -> T,
) -> T {
    let blocks = params.block_count();
    let mut memory = keeper
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .filter(|kept| kept.len() >= blocks)
        .unwrap_or_else(|| vec![Block::default(); blocks]);
    let done = work(&mut memory[..blocks]);
    memory.fill(Block::default());
    if memory.len() <= Params::default().block_count() {
        *keeper.lock().unwrap_or_else(PoisonError::into_inner) = Some(memory);
    }
    done
}

pub async fn hash_off_thread(password: String) -> Result<String, ApiError> {
    behind_requests(move || hash(&password)).await?
}

/// How far below the request workers a password's hashing runs: a nice of
/// 10 weighs about a tenth of theirs, so when a request wakes a worker the
/// kernel runs it before the hash, and the hash has the cores the requests
/// leave. A crowd of sign-ins then slows sign-ins, not payments (issue 55).
pub const NICE: i32 = 10;

/// Runs `work` on a thread of its own at `NICE`, and its result when done.
/// A thread per call, not tokio's blocking pool: a pool thread made nicer
/// cannot be made less nice again without privilege, and the pool runs
/// SQLite's queries too. The callers bound how many run at once (`Checks`,
/// or a signed-in person setting a password), and a thread costs
/// microseconds beside a hash's tens of milliseconds.
async fn behind_requests<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ApiError> {
    let (done, result) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("password-check".into())
        .spawn(move || {
            lower_this_threads_priority();
            let _ = done.send(work());
        })
        .map_err(|e| ApiError::Internal(format!("starting a password check: {e}")))?;
    result
        .await
        .map_err(|e| ApiError::Internal(format!("the password checker stopped: {e}")))
}

/// `NICE` more than the calling thread had (at most 19), for that thread
/// only: on Linux a nice value is a thread's, not the process's. Where it
/// cannot be set the work runs as it is; the bounds on checks at once
/// still hold.
fn lower_this_threads_priority() {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{getpriority_process, setpriority_process};
        let me = Some(rustix::thread::gettid());
        let lowered =
            getpriority_process(me).and_then(|now| setpriority_process(me, (now + NICE).min(19)));
        if let Err(e) = lowered {
            tracing::debug!(error = %e, "a password check runs at the workers' priority");
        }
    }
}

/// Whether `password` is the one `stored` was made from: the crate's own
/// verification, in the kept memory.
pub fn verify(password: &str, stored: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(stored) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (parsed.salt, parsed.hash) else {
        return false;
    };
    let version = parsed
        .version
        .map_or(Ok(Version::default()), Version::try_from);
    let (Ok(algorithm), Ok(version), Ok(params)) = (
        Algorithm::try_from(parsed.algorithm),
        version,
        Params::try_from(&parsed),
    ) else {
        return false;
    };
    let mut salt_bytes = [0u8; 64];
    let Ok(salt) = salt.decode_b64(&mut salt_bytes) else {
        return false;
    };
    let argon = Argon2::new(algorithm, version, params);
    output_of(&argon, password, salt, expected.len())
        // `Output` compares in constant time.
        .is_ok_and(|computed| computed == expected)
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

/// A place among the checks admitted, taken before a sign-in does any
/// other work: a sign-in that finds none is refused before it reads or
/// writes the database, so a crowd of sign-ins costs the database what the
/// places allow, not what the crowd brings.
pub struct Place {
    running: Arc<Semaphore>,
    admitted: Admitted,
}

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

    /// A place, or `Busy` at once when every place is taken.
    pub fn place(&self) -> Result<Place, Busy> {
        let admitted = self.admitted.admit().ok_or(Busy)?;
        Ok(Place {
            running: self.running.clone(),
            admitted,
        })
    }
}

/// A place whose turn has come: one of the `at_once`. A sign-in reads and
/// writes the database in its turn as well as checking the hash, so a
/// crowd of sign-ins holds at most `at_once` of the database's
/// connections, and the payment API finds the rest free.
pub struct Turn {
    // Held, never read: dropping the turn gives both back.
    _running: tokio::sync::OwnedSemaphorePermit,
    _admitted: Admitted,
}

impl Place {
    /// Waits for one of the running places.
    pub async fn turn(self) -> Result<Turn, ApiError> {
        let Place { running, admitted } = self;
        let running = running
            .acquire_owned()
            .await
            .map_err(|e| ApiError::Internal(format!("the password checks are closed: {e}")))?;
        Ok(Turn {
            _running: running,
            _admitted: admitted,
        })
    }
}

impl Turn {
    /// Runs `work` off the async workers. The turn is held by the work
    /// itself, so a caller that goes away does not free it while the hash
    /// still runs.
    pub async fn run<T: Send + 'static>(
        self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        behind_requests(move || {
            let _held = self;
            work()
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a sign-in does with the checks: a place, its turn, then
    /// `work` in it; `Busy` at once when no place is left.
    async fn run<T: Send + 'static>(
        checks: &Checks,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<Result<T, Busy>, ApiError> {
        match checks.place() {
            Ok(place) => place.turn().await?.run(work).await.map(Ok),
            Err(busy) => Ok(Err(busy)),
        }
    }

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
            async move { run(&checks, move || hold.recv().is_ok()).await }
        });
        while checks.admitted() < 1 {
            tokio::task::yield_now().await;
        }
        let second = tokio::spawn({
            let checks = checks.clone();
            async move { run(&checks, || "second").await }
        });
        while checks.admitted() < 2 {
            tokio::task::yield_now().await;
        }
        assert_eq!(run(&checks, || "third").await.unwrap(), Err(Busy));
        assert_eq!(checks.admitted(), 2, "a refusal holds no place");
        release.send(()).unwrap();
        assert_eq!(first.await.unwrap().unwrap(), Ok(true));
        assert_eq!(second.await.unwrap().unwrap(), Ok("second"));
        assert_eq!(run(&checks, || "fourth").await.unwrap(), Ok("fourth"));
        assert_eq!(checks.admitted(), 0);
    }

    /// The nice value of the thread that runs this, from the kernel's own
    /// account of it (`/proc/thread-self/stat`, field 19).
    #[cfg(target_os = "linux")]
    fn this_threads_nice() -> i32 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        // The command name (field 2) may hold spaces; fields after it don't.
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        after_name.split(' ').nth(16).unwrap().parse().unwrap()
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_check_runs_below_the_request_workers_and_leaves_them_as_they_were() {
        let workers = this_threads_nice();
        let checks = Checks::new(1, 1);
        let checking = run(&checks, this_threads_nice).await.unwrap().unwrap();
        assert_eq!(checking, (workers + NICE).min(19));
        assert_eq!(this_threads_nice(), workers);
        let hashing = behind_requests(this_threads_nice).await.unwrap();
        assert_eq!(hashing, (workers + NICE).min(19));
    }

    #[test]
    fn hashes_made_by_the_crate_verify_here_and_the_other_way_round() {
        use argon2::password_hash::{PasswordHasher, PasswordVerifier};
        let salt = SaltString::generate(&mut OsRng);
        let before = Argon2::default()
            .hash_password(b"a password stored before", &salt)
            .unwrap()
            .to_string();
        assert!(verify("a password stored before", &before));
        assert!(!verify("a password stored before!", &before));
        let ours = hash("a password stored now").unwrap();
        let parsed = PasswordHash::new(&ours).unwrap();
        assert!(Argon2::default()
            .verify_password(b"a password stored now", &parsed)
            .is_ok());
        assert_eq!(parsed.params, PasswordHash::new(&before).unwrap().params);
        // Cheaper parameters than today's, as an older hash may carry.
        let cheaper = Params::new(Params::DEFAULT_M_COST / 2, 3, 1, None).unwrap();
        let older = Argon2::new(Algorithm::Argon2id, Version::V0x13, cheaper)
            .hash_password(b"an older password", &salt)
            .unwrap()
            .to_string();
        assert!(verify("an older password", &older));
        assert!(!verify("an older password.", &older));
    }

    #[test]
    fn the_kept_memory_is_zeroed_and_never_larger_than_the_defaults() {
        let keeper = Mutex::new(None);
        let kept = || {
            let zero = |m: &[Block]| m.iter().all(|b| b.as_ref().iter().all(|w| *w == 0));
            keeper
                .lock()
                .unwrap()
                .as_ref()
                .map(|m: &Vec<Block>| (m.len(), zero(m)))
        };
        let check = |params: Params| {
            let argon = Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone());
            let mut out = [0u8; 32];
            in_memory_of(&keeper, &params, |memory| {
                assert_eq!(memory.len(), params.block_count());
                argon.hash_password_into_with_memory(
                    b"a password",
                    b"a salt of 16 bytes",
                    &mut out,
                    memory,
                )
            })
            .unwrap();
            assert_ne!(out, [0u8; 32]);
        };
        let defaults = Params::default().block_count();
        check(Params::default());
        assert_eq!(kept(), Some((defaults, true)));
        // Smaller parameters run in the kept memory and leave it kept.
        check(Params::new(Params::DEFAULT_M_COST / 2, 2, 1, None).unwrap());
        assert_eq!(kept(), Some((defaults, true)));
        // A stored hash asking for more gets memory for itself alone.
        check(Params::new(2 * Params::DEFAULT_M_COST, 1, 1, None).unwrap());
        assert_eq!(kept(), None);
        check(Params::default());
        assert_eq!(kept(), Some((defaults, true)));
    }

    #[test]
    fn bounds_are_in_characters() {
        assert!(acceptable("password", &"a".repeat(11)).is_err());
        assert!(acceptable("password", &"ก".repeat(12)).is_ok());
        assert!(acceptable("password", &"a".repeat(129)).is_err());
    }
}
