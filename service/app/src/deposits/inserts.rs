//! New deposit orders inserted many by one statement (a group insert).
//!
//! Why: every create was one autocommitted INSERT, and a statement and a
//! commit of its own per order cost the database three times the CPU that
//! one statement inserting eight does (pgbench on this project's table,
//! 16 clients: 6,556 orders/s one by one, 19,622/s eight to a statement).
//! Creates that arrive while earlier ones' inserts are in flight wait in
//! one queue and go together, at most `INSERTERS` statements at once; a
//! create that comes alone is inserted alone, as before.
//!
//! Each caller hears its own row's outcome once the statement that holds
//! it has committed. A statement refused as a whole (a unique key taken,
//! the database away) is not guessed at: each of its rows is inserted
//! again by itself and hears exactly what it would have heard without the
//! batching, so a resend, a reused `merchant_order_no` or a taken remark is
//! told apart as before (`create::insert_new`).

use crate::group_commit::{Lanes, Refused};
use crate::store::rows::DepositRow;
use crate::store::{Db, StoreResult};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::oneshot;

/// The most insert statements in flight at once. Fewer than the pool's
/// connections, so that creates queue behind them and go together instead
/// of each taking a connection of its own.
pub const INSERTERS: usize = 2;

struct Waiting {
    row: DepositRow,
    answer: oneshot::Sender<StoreResult<()>>,
}

pub struct DepositInserts {
    db: Db,
    lanes: Lanes<(), Waiting>,
    /// Rows that went in a statement with others, since the start.
    together: Arc<AtomicU64>,
}

impl DepositInserts {
    pub fn new(db: Db) -> Self {
        DepositInserts {
            db,
            lanes: Lanes::new(INSERTERS, sized),
            together: Arc::default(),
        }
    }

    /// Inserts `row` with whatever other new orders wait, and answers its
    /// own outcome once that statement committed (or it failed).
    pub async fn insert(&self, row: DepositRow) -> Result<StoreResult<()>, Refused> {
        let (answer, heard) = oneshot::channel();
        if self.lanes.push(&(), Waiting { row, answer })? {
            // A task of its own, so that a caller that stops waiting (its
            // request dropped) never strands the others' rows.
            let (db, lanes, together) =
                (self.db.clone(), self.lanes.clone(), self.together.clone());
            tokio::spawn(async move {
                while let Some(batch) = lanes.next(&()) {
                    insert_batch(&db, batch, &together).await;
                }
            });
        }
        heard.await.map_err(|_| Refused::Lost)
    }

    /// How many rows went in a statement with others since the start
    /// (the metric `payments_deposit_insert_rows` says how many each).
    pub fn rows_inserted_together(&self) -> u64 {
        self.together.load(Ordering::Relaxed)
    }
}

/// A batch is a power of two of the rows waiting (the largest not above
/// them): the store keeps one prepared statement per size
/// (`insert_deposits`), where a statement for any number of rows would be
/// planned anew each time. The rest wait for the next statement.
fn sized(waiting: usize) -> usize {
    match waiting {
        0 | 1 => 1,
        n => 1 << n.ilog2(),
    }
}

/// One statement for the whole batch; if it does not commit, each row
/// alone. The rows move into the statement and come back for the rows
/// alone: nothing is copied on the way.
async fn insert_batch(db: &Db, batch: Vec<Waiting>, shared: &AtomicU64) {
    let (rows, answers): (Vec<DepositRow>, Vec<_>) =
        batch.into_iter().map(|w| (w.row, w.answer)).unzip();
    let mut rows = Arc::new(rows);
    if rows.len() > 1 {
        let all = rows.clone();
        let together = db
            .run(|s| Box::pin(async move { s.insert_deposits(&all).await }))
            .await;
        if together.is_ok() {
            crate::telemetry::metrics::deposits_inserted(rows.len());
            shared.fetch_add(rows.len() as u64, Ordering::Relaxed);
            for answer in answers {
                let _ = answer.send(Ok(()));
            }
            return;
        }
    }
    let rows = Arc::make_mut(&mut rows);
    for (row, answer) in rows.drain(..).zip(answers) {
        crate::telemetry::metrics::deposits_inserted(1);
        let alone = db
            .run(|s| Box::pin(async move { s.insert_deposit(&row).await }))
            .await;
        let _ = answer.send(alone);
    }
}
