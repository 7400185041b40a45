//! What ages out: callback attempts' detail, channel notifications that
//! settled, and web sessions long ended, each past its configured window,
//! deleted oldest first in small batches so that no statement holds a lock
//! for long. Orders, the ledger, the audit trail, statements and the
//! deliveries themselves are never touched; the merchant events feed has
//! its own window (`events::forget_expired`).

use crate::domain::error::ApiError;
use crate::App;

/// Rows one statement deletes at most.
pub const BATCH: i64 = 1000;

/// What one sweep deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    pub attempts: usize,
    pub notifications: usize,
    pub sessions: usize,
}

impl Swept {
    pub fn total(&self) -> usize {
        self.attempts + self.notifications + self.sessions
    }
}

/// Which table a batch deletes from.
#[derive(Clone, Copy)]
enum Aged {
    Attempts,
    Notifications,
    Sessions,
}

/// Deletes everything past its window, a batch at a time, and calls
/// `progress` after each batch with what is deleted so far.
pub async fn sweep(app: &App, mut progress: impl FnMut(&Swept)) -> Result<Swept, ApiError> {
    let now = app.now_unix();
    let day = 86_400;
    let mut swept = Swept::default();
    for (aged, days) in [
        (Aged::Attempts, app.config.attempt_retention_days),
        (Aged::Notifications, app.config.notification_retention_days),
        (Aged::Sessions, app.config.session_retention_days),
    ] {
        let before = now - days * day;
        loop {
            let n = app
                .db
                .run(move |s| {
                    Box::pin(async move {
                        match aged {
                            Aged::Attempts => s.forget_attempts_before(before, BATCH).await,
                            Aged::Notifications => {
                                s.forget_notifications_before(before, BATCH).await
                            }
                            Aged::Sessions => s.forget_sessions_before(before, BATCH).await,
                        }
                    })
                })
                .await?;
            match aged {
                Aged::Attempts => swept.attempts += n,
                Aged::Notifications => swept.notifications += n,
                Aged::Sessions => swept.sessions += n,
            }
            if n > 0 {
                progress(&swept);
            }
            if n < usize::try_from(BATCH).unwrap_or(usize::MAX) {
                break;
            }
        }
    }
    Ok(swept)
}
