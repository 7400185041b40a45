//! Group commit per lane: units of work that lock the same row (one
//! merchant's balance in one currency) are queued and committed together,
//! many in one transaction, instead of each waiting for the row's lock,
//! its own commit and the disk, in turn.
//!
//! Every caller waits for its own unit's outcome, which it hears only once
//! the transaction that holds it has committed (or it failed): a channel
//! is answered only after its completion is durable. A batch that fails as
//! a whole (one unit refused, a conflict, the database away) is not
//! guessed at: each of its units is run again in a transaction of its own,
//! exactly as it would have run without the batching, and hears that
//! outcome. A unit must therefore be something that can run twice without
//! harm when its first run rolled back: a closure over plain data that
//! reads what it needs inside the transaction.
//!
//! Hand-written, as a few dozen lines over tokio's channels: the crates
//! that batch (for example `tokio-batch`) batch a stream, not units that
//! each need their own answer and a second run alone.

use crate::store::{Db, Store, StoreError};
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// One unit: run in whatever transaction it is given, possibly twice.
pub type Unit<T, E> =
    Arc<dyn for<'c> Fn(&'c mut dyn Store) -> BoxFuture<'c, Result<T, E>> + Send + Sync>;

/// The most units one transaction holds.
pub const BATCH: usize = 64;
/// The most transactions one lane has open at once. The balance they share
/// is locked only at each one's end (its credits are summed and written
/// once, `coalesce_balances`), so the rest of their work (the orders,
/// their callbacks, the journal) overlaps instead of waiting in turn.
pub const COMMITTERS: usize = 4;
/// The most units one lane holds waiting; past it a unit is refused at
/// once (`Full`), as every other queue of the service is bounded.
pub const WAITING: usize = 4_096;

struct Waiting<T, E> {
    unit: Unit<T, E>,
    answer: oneshot::Sender<Result<T, E>>,
}

/// Queues per key, each with the tasks committing it: what a group commit
/// and the deposits' group insert (`deposits::inserts`) share.
pub(crate) struct Lanes<K, W> {
    lanes: Arc<Mutex<HashMap<K, Lane<W>>>>,
    committers: usize,
    /// How many of those waiting one batch takes.
    take: fn(usize) -> usize,
}

impl<K, W> Clone for Lanes<K, W> {
    fn clone(&self) -> Self {
        Lanes {
            lanes: self.lanes.clone(),
            committers: self.committers,
            take: self.take,
        }
    }
}

struct Lane<W> {
    queue: Vec<W>,
    /// Tasks committing this lane's batches.
    running: usize,
}

impl<K: Hash + Eq + Clone, W> Lanes<K, W> {
    /// At most `committers` tasks commit one lane's batches at once, each
    /// batch `take(waiting)` of those waiting (at least one, at most
    /// `BATCH`).
    pub(crate) fn new(committers: usize, take: fn(usize) -> usize) -> Self {
        Lanes {
            lanes: Arc::default(),
            committers,
            take,
        }
    }

    /// Queues `waiting` in `key`'s lane; true when the caller is to start
    /// a committer for it (`next`), refused when `WAITING` already wait.
    pub(crate) fn push(&self, key: &K, waiting: W) -> Result<bool, Refused> {
        let mut lanes = self.lanes.lock().unwrap_or_else(|p| p.into_inner());
        let lane = lanes.entry(key.clone()).or_insert_with(|| Lane {
            queue: Vec::new(),
            running: 0,
        });
        if lane.queue.len() >= WAITING {
            return Err(Refused::Full);
        }
        lane.queue.push(waiting);
        // Another committer while fewer run than may: one takes what
        // waits as a batch while the others' batches are in flight.
        let lead = lane.running < self.committers;
        lane.running += usize::from(lead);
        Ok(lead)
    }

    /// A committer's next batch; `None` when the lane is empty, and the
    /// committer is to end.
    pub(crate) fn next(&self, key: &K) -> Option<Vec<W>> {
        let mut all = self.lanes.lock().unwrap_or_else(|p| p.into_inner());
        let lane = all.get_mut(key)?;
        if lane.queue.is_empty() {
            lane.running -= 1;
            if lane.running == 0 {
                all.remove(key);
            }
            return None;
        }
        let n = (self.take)(lane.queue.len()).clamp(1, BATCH);
        Some(lane.queue.drain(..n).collect())
    }
}

/// Why a unit got no outcome of its own.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("{WAITING} units already wait for this lane")]
    Full,
    #[error("the unit's committer ended without an answer")]
    Lost,
}

pub struct GroupCommit<K, T, E> {
    db: Db,
    lanes: Lanes<K, Waiting<T, E>>,
}

impl<K, T, E> GroupCommit<K, T, E>
where
    K: Hash + Eq + Clone + Send + 'static,
    T: Send + 'static,
    E: From<StoreError> + Send + 'static,
{
    pub fn new(db: Db) -> Self {
        GroupCommit {
            db,
            lanes: Lanes::new(COMMITTERS, |waiting| waiting),
        }
    }

    /// Runs `unit` in a transaction with whatever else waits in `key`'s
    /// lane, and answers its own outcome once that transaction ended.
    pub async fn run(&self, key: K, unit: Unit<T, E>) -> Result<Result<T, E>, Refused> {
        let (answer, heard) = oneshot::channel();
        if self.lanes.push(&key, Waiting { unit, answer })? {
            // A task of its own, so that a caller that stops waiting (its
            // request dropped) never strands the others' units.
            let (db, lanes) = (self.db.clone(), self.lanes.clone());
            tokio::spawn(async move {
                while let Some(batch) = lanes.next(&key) {
                    commit_batch(&db, batch).await;
                }
            });
        }
        heard.await.map_err(|_| Refused::Lost)
    }
}

/// One transaction for the whole batch; if it does not commit, each unit
/// alone. A batch of one is held and written the same way: its rows by
/// one statement where alone it sends one per row (a lane with a free
/// committer starts one unit at once, so under load most batches are of
/// one; 5,125 of 6,678 in the money path bench before this).
async fn commit_batch<T, E>(db: &Db, batch: Vec<Waiting<T, E>>)
where
    T: Send + 'static,
    E: From<StoreError> + Send + 'static,
{
    let units: Vec<Unit<T, E>> = batch.iter().map(|w| w.unit.clone()).collect();
    let together = db
        .transaction::<_, Undone, _>(move |tx| {
            Box::pin(async move {
                // The units credit one balance: summed, and written (and
                // locked) once, at the end.
                tx.coalesce_balances();
                // Their rows, one statement per table, at the end.
                tx.defer_inserts();
                let mut out = Vec::with_capacity(units.len());
                for unit in &units {
                    // Any refusal undoes the batch; the units are run
                    // again alone below, each to its own outcome.
                    out.push(unit(&mut *tx).await.map_err(|_| Undone)?);
                }
                Ok(out)
            })
        })
        .await;
    if let Ok(values) = together {
        crate::telemetry::metrics::group_committed(values.len());
        for (waiting, value) in batch.into_iter().zip(values) {
            let _ = waiting.answer.send(Ok(value));
        }
        return;
    }
    for waiting in batch {
        crate::telemetry::metrics::group_committed(1);
        let unit = waiting.unit.clone();
        let alone = db
            .transaction::<_, E, _>(move |tx| Box::pin(async move { unit(tx).await }))
            .await;
        let _ = waiting.answer.send(alone);
    }
}

/// A batch that did not commit, whatever the reason: its units are run
/// again alone, and each hears its own.
struct Undone;

impl From<StoreError> for Undone {
    fn from(_: StoreError) -> Self {
        Undone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lane holds `WAITING`; the next is refused at once, and a
    /// committer's batch makes room again.
    #[test]
    fn a_full_lane_refuses_at_once_until_a_batch_is_taken() {
        let lanes: Lanes<(), usize> = Lanes::new(1, |waiting| waiting);
        let leads = (0..WAITING)
            .map(|i| lanes.push(&(), i).unwrap())
            .filter(|lead| *lead)
            .count();
        assert_eq!(leads, 1, "one committer for the lane");
        assert!(matches!(lanes.push(&(), WAITING), Err(Refused::Full)));
        assert_eq!(lanes.next(&()).unwrap(), (0..BATCH).collect::<Vec<_>>());
        assert!(
            !lanes.push(&(), WAITING).unwrap(),
            "the committer still runs"
        );
    }
}
