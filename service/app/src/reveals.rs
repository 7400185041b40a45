//! A secret a form post issues (a new API key) is shown on the page the
//! post redirects to, once: post, redirect, get. The post keeps it here,
//! encrypted under the master key and bound to the session, under a
//! random one-time handle that goes in the redirect's address; the page
//! takes it, which deletes it. Reloading the page shows that it was shown
//! and issues nothing; a handle in another session's hands shows nothing.

use crate::domain::error::ApiError;
use crate::store::rows::SecretRevealRow;
use crate::App;
use base64::Engine;
use rand::RngCore;

/// How long a kept secret waits for its page.
pub const KEPT_FOR_SECONDS: i64 = 600;

/// Keeps `secret` for the session whose form token is `session_csrf`;
/// the handle to put in the redirect's address.
pub async fn keep(app: &App, session_csrf: &str, secret: &str) -> Result<String, ApiError> {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    let handle = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let now = app.now_unix();
    let row = SecretRevealRow {
        id: app.vault.lookup_hash(&handle),
        session: app.vault.lookup_hash(session_csrf),
        ciphertext: app
            .vault
            .encrypt(secret)
            .map_err(|e| ApiError::Internal(e.to_string()))?,
        created_at: now,
    };
    app.db
        .run(move |s| Box::pin(async move { s.keep_reveal(&row, now - KEPT_FOR_SECONDS).await }))
        .await?;
    Ok(handle)
}

/// The secret kept under `handle` for this session, once; `None` when it
/// was shown already, is too old, or is not this session's.
pub async fn take(app: &App, session_csrf: &str, handle: &str) -> Result<Option<String>, ApiError> {
    let (id, session) = (
        app.vault.lookup_hash(handle),
        app.vault.lookup_hash(session_csrf),
    );
    let not_before = app.now_unix() - KEPT_FOR_SECONDS;
    let taken = app
        .db
        .transaction::<_, ApiError, _>(move |s| {
            Box::pin(async move { Ok(s.take_reveal(&id, &session, not_before).await?) })
        })
        .await?;
    taken
        .map(|row| app.vault.decrypt(&row.ciphertext))
        .transpose()
        .map_err(|e| ApiError::Internal(e.to_string()))
}
