//! The LISTEN connection every instance on PostgreSQL keeps: it hears
//! callbacks made due and merchants, keys and fee rates changed by any
//! instance, at their commit, and acts on each notice.

use super::dialect;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use std::sync::Arc;
use tokio::sync::Notify;

/// What the LISTEN connection acts on.
pub(crate) struct Heard {
    /// Rung for each callback made due, when this instance delivers them.
    pub(crate) callbacks: Option<Arc<Notify>>,
    /// Moved on for each change to merchants, keys or fee rates, and on
    /// every (re)connection, since what changed while nobody listened was
    /// not heard.
    pub(crate) merchants_written: Arc<std::sync::atomic::AtomicU64>,
    pub(crate) listening: Arc<std::sync::atomic::AtomicBool>,
}

impl Heard {
    fn merchants_changed(&self) {
        self.merchants_written
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    fn callbacks_due(&self) {
        if let Some(bell) = &self.callbacks {
            bell.notify_one();
        }
    }
}

/// Listens on the channels the `callback_notify` and `merchants_notify`
/// migrations' triggers notify, acting on each notice, reconnecting when
/// the connection is lost.
pub(crate) async fn listen(url: String, heard: Heard) {
    use diesel_async::RunQueryDsl;
    use futures::StreamExt;
    use std::sync::atomic::Ordering;
    // Real time, on purpose: how soon to try a lost connection again.
    const RECONNECT: std::time::Duration = std::time::Duration::from_secs(1);
    const PING: std::time::Duration = std::time::Duration::from_secs(30);
    loop {
        let mut conn = match AsyncPgConnection::establish(&url).await {
            Ok(conn) => conn,
            Err(e) => {
                tracing::warn!(error = %e, "LISTEN: cannot connect; polling meanwhile");
                tokio::time::sleep(RECONNECT).await;
                continue;
            }
        };
        let listened = async {
            diesel::sql_query(dialect::LISTEN_CALLBACKS_DUE)
                .execute(&mut conn)
                .await?;
            diesel::sql_query(dialect::LISTEN_MERCHANTS_CHANGED)
                .execute(&mut conn)
                .await
        }
        .await;
        if let Err(e) = listened {
            tracing::warn!(error = %e, "LISTEN failed; polling meanwhile");
            tokio::time::sleep(RECONNECT).await;
            continue;
        }
        // Whatever was committed while nobody listened is due, or stale,
        // now.
        heard.merchants_changed();
        heard.listening.store(true, Ordering::SeqCst);
        heard.callbacks_due();
        tracing::info!("LISTEN: hearing every instance's callbacks and merchant changes");
        'connected: loop {
            {
                let mut notices = std::pin::pin!(conn.notifications_stream());
                loop {
                    tokio::select! {
                        notice = notices.next() => match notice {
                            Some(Ok(n)) if n.channel == dialect::MERCHANTS_CHANGED => {
                                heard.merchants_changed();
                            }
                            Some(Ok(_)) => heard.callbacks_due(),
                            Some(Err(e)) => {
                                tracing::warn!(error = %e, "LISTEN: connection failed");
                                break 'connected;
                            }
                            None => break 'connected,
                        },
                        // A connection cut without a word is found by a
                        // query, not by waiting for a notice.
                        _ = tokio::time::sleep(PING) => break,
                    }
                }
            }
            if diesel::sql_query(dialect::PING)
                .execute(&mut conn)
                .await
                .is_err()
            {
                break 'connected;
            }
        }
        heard.listening.store(false, Ordering::SeqCst);
        tracing::warn!("LISTEN: connection lost; polling every second, remembering no merchant, until it is back");
        tokio::time::sleep(RECONNECT).await;
    }
}
