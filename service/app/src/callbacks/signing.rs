//! How a merchant's callbacks are signed: the scheme it chose and the
//! callback secrets of the Standard Webhooks scheme, with their rotation.
//!
//! A secret is needed again at every attempt, so it is encrypted under the
//! master key (as API keys are), never hashed. Each secret records when it
//! stops signing; a rotation gives every secret still without an end one
//! `overlap` from now, so that during the overlap a callback carries one
//! signature per secret and a receiver that has either verifies it. The
//! secrets live on the merchant's row as one document, read and written
//! under the row's lock like the merchant's other settings documents.

use crate::actor::{Actor, Target};
use crate::domain::error::ApiError;
use crate::domain::status::CallbackScheme;
use crate::store::error::Key;
use crate::store::rows::{ApiKeyRow, CallbackDeliveryRow, MerchantChange, MerchantRow};
use crate::store::StoreError;
use crate::{merchants, App};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use rand::RngCore;
use serde::{Deserialize, Serialize};

/// The longest overlap a rotation may give: 30 days.
const OVERLAP_MAX_SECONDS: i64 = 30 * 24 * 3600;
/// The overlap when a rotation names none: a day, as for API keys.
pub const DEFAULT_OVERLAP_SECONDS: i64 = 24 * 3600;
/// The Standard Webhooks specification's prefix of a secret.
const SECRET_PREFIX: &str = "whsec_";

/// One callback secret as the merchant's row holds it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StoredSecret {
    /// The secret (`whsec_...`), encrypted under the master key.
    pub ciphertext: String,
    pub created_at: i64,
    /// When it stops signing; `None` for the current secret.
    pub expires_at: Option<i64>,
}

impl StoredSecret {
    fn signs_at(&self, now: i64) -> bool {
        self.expires_at.is_none_or(|end| end > now)
    }
}

/// The merchant's secrets document, read strictly: a document that is not
/// a list of secrets is an error naming the row, never "no secrets".
pub fn secrets_of(row: &MerchantRow) -> Result<Vec<StoredSecret>, StoreError> {
    serde_json::from_str(&row.callback_secrets).map_err(|e| {
        StoreError::corrupt(
            "merchants",
            Key("id", &row.id),
            format!("column callback_secrets is not a valid secrets document: {e}"),
        )
    })
}

/// A merchant's signing as an operator sees it: the scheme and the secrets
/// that sign now, newest first, never their values.
pub struct Signing {
    pub scheme: CallbackScheme,
    /// (created_at, expires_at) of each secret signing now.
    pub secrets: Vec<(i64, Option<i64>)>,
    /// A secret this call created, shown this once.
    pub new_secret: Option<String>,
}

/// One of a merchant's API keys that works now, as the seed scheme signs
/// with it.
#[derive(Clone)]
pub struct SeedKey {
    pub id: String,
    pub created_at: i64,
    pub key: String,
}

/// How a merchant's next callback attempt is signed.
#[derive(Clone)]
pub enum Signer {
    /// The customer's scheme, with the merchant's keys that work now,
    /// newest first.
    Seed { keys: Vec<SeedKey> },
    /// Standard Webhooks, with each secret that signs now, newest first.
    StandardWebhooks { secrets: Vec<String> },
}

impl Signer {
    /// The scheme's headers for one attempt of `delivery` at `timestamp`
    /// (real seconds). A seed signature is kept on the record, with the id
    /// of the key that made it, and reused by every retry while that key
    /// works; a Standard Webhooks one covers the timestamp, so each attempt
    /// has its own.
    pub fn headers(
        &self,
        delivery: &mut CallbackDeliveryRow,
        timestamp: i64,
    ) -> Result<Vec<(&'static str, String)>, ApiError> {
        match self {
            Signer::Seed { keys } => seed_headers(keys, delivery, timestamp),
            Signer::StandardWebhooks { secrets } => {
                standard_headers(secrets, &delivery.id, timestamp, &delivery.body)
            }
        }
    }
}

/// The seed scheme's headers. The callback URL was chosen by whoever
/// created the order, with the keys of that moment: a key issued later
/// (a rotation after a leak) is never sent to it. So the signing key is
/// the newest working key issued no later than the order, kept for every
/// retry while it works; failing one, the current key signs and the
/// header carries its hint (the receiver verifies with the key it holds).
fn seed_headers(
    keys: &[SeedKey],
    delivery: &mut CallbackDeliveryRow,
    timestamp: i64,
) -> Result<Vec<(&'static str, String)>, ApiError> {
    let order_at = delivery.order_created_at.unwrap_or(delivery.created_at);
    let kept = match (&delivery.signing_key_id, &delivery.signature) {
        (Some(id), Some(signature)) => keys
            .iter()
            .find(|k| &k.id == id)
            .map(|k| (k, signature.clone())),
        _ => None,
    };
    let (key, signature) = match kept {
        Some(kept) => kept,
        None => {
            let key = keys
                .iter()
                .find(|k| k.created_at <= order_at)
                .or_else(|| keys.first())
                .ok_or_else(|| {
                    ApiError::Internal(format!(
                        "merchant {} has no API key that works",
                        delivery.merchant_id
                    ))
                })?;
            let fields = payments_wire::SigningFields::from_json_body(delivery.body.as_bytes())
                .map_err(|e| ApiError::Internal(format!("stored callback body: {e}")))?;
            (key, payments_wire::sign(&fields, &key.key))
        }
    };
    delivery.signature = Some(signature.clone());
    delivery.signing_key_id = Some(key.id.clone());
    let shown = match key.created_at <= order_at {
        true => key.key.clone(),
        false => crate::keys::key_hint(&key.key),
    };
    Ok(vec![
        ("x-api-key", shown),
        ("x-timestamp", timestamp.to_string()),
        ("x-signature", signature),
    ])
}

fn standard_headers(
    secrets: &[String],
    webhook_id: &str,
    timestamp: i64,
    body: &str,
) -> Result<Vec<(&'static str, String)>, ApiError> {
    let mut signatures = Vec::with_capacity(secrets.len());
    for secret in secrets {
        let webhook = standardwebhooks::Webhook::new(secret).map_err(|_| {
            // The error would name nothing but the secret's form.
            ApiError::Internal("a stored callback secret is not base64".into())
        })?;
        signatures.push(
            webhook
                .sign(webhook_id, timestamp, body.as_bytes())
                .map_err(|e| ApiError::Internal(format!("signing a callback: {e}")))?,
        );
    }
    Ok(vec![
        ("webhook-id", webhook_id.to_string()),
        ("webhook-timestamp", timestamp.to_string()),
        ("webhook-signature", signatures.join(" ")),
    ])
}

/// The signer of a `seed` merchant's callbacks at `now`, from its keys as
/// read (`credentials::callback_rows`): every key that works then, newest
/// first (of two issued in the same second, the current one).
pub fn seed_signer(app: &App, mut rows: Vec<ApiKeyRow>, now: i64) -> Result<Signer, ApiError> {
    rows.retain(|k| k.expires_at.is_none_or(|e| e > now));
    rows.sort_by_key(|k| std::cmp::Reverse((k.created_at, k.expires_at.is_none())));
    let keys = rows
        .into_iter()
        .map(|k| {
            Ok(SeedKey {
                key: app.vault.decrypt(&k.key_ciphertext)?,
                id: k.id,
                created_at: k.created_at,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Signer::Seed { keys })
}

/// The signer of a `standard_webhooks` merchant's callbacks at `now` (the
/// injected clock, so that a sandbox clock moved past an overlap ends it).
pub fn standard_signer(app: &App, row: &MerchantRow, now: i64) -> Result<Signer, ApiError> {
    let mut signing: Vec<StoredSecret> = secrets_of(row)?
        .into_iter()
        .filter(|s| s.signs_at(now))
        .collect();
    newest_first(&mut signing);
    if signing.is_empty() {
        return Err(ApiError::Internal(format!(
            "merchant {} signs callbacks with standard_webhooks but has no secret that signs now",
            row.id
        )));
    }
    let secrets = signing
        .iter()
        .map(|s| app.vault.decrypt(&s.ciphertext))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Signer::StandardWebhooks { secrets })
}

/// The current secret (no end) first, then by age, youngest first.
fn newest_first(secrets: &mut [StoredSecret]) {
    secrets.sort_by_key(|s| std::cmp::Reverse((s.expires_at.is_none(), s.created_at)));
}

/// The merchant's signing now.
pub async fn read(app: &App, merchant_id: &str) -> Result<Signing, ApiError> {
    let row = merchants::find_row(app, merchant_id).await?;
    Ok(view(
        row.callback_scheme,
        secrets_of(&row)?,
        app.now_unix(),
        None,
    ))
}

fn view(
    scheme: CallbackScheme,
    mut secrets: Vec<StoredSecret>,
    now: i64,
    new_secret: Option<String>,
) -> Signing {
    secrets.retain(|s| s.signs_at(now));
    newest_first(&mut secrets);
    Signing {
        scheme,
        secrets: secrets
            .iter()
            .map(|s| (s.created_at, s.expires_at))
            .collect(),
        new_secret,
    }
}

/// Chooses the merchant's scheme. `standard_webhooks` needs a secret that
/// signs now: the first is issued by `issue_secret`, through two admins.
pub async fn set_scheme(
    app: &App,
    actor: &Actor,
    merchant_id: &str,
    scheme: CallbackScheme,
) -> Result<Signing, ApiError> {
    Ok(change(app, actor, merchant_id, Change::Scheme(scheme))
        .await?
        .0)
}

/// A new secret, whatever the scheme; the others still without an end
/// stop signing `overlap_seconds` from now (0 to 30 days, a day when not
/// given). Returns the signing after it, the new secret in it, and when
/// the older secrets stop (when any still signed).
pub async fn issue_secret(
    app: &App,
    actor: &Actor,
    merchant_id: &str,
    overlap_seconds: Option<i64>,
) -> Result<(Signing, Option<i64>), ApiError> {
    let overlap = rotation_overlap(overlap_seconds)?;
    change(app, actor, merchant_id, Change::Rotate { overlap }).await
}

/// How long the secrets before a new one keep signing: as asked (at most
/// 30 days), or a day.
pub fn rotation_overlap(overlap_seconds: Option<i64>) -> Result<i64, ApiError> {
    let overlap = overlap_seconds.unwrap_or(DEFAULT_OVERLAP_SECONDS);
    if !(0..=OVERLAP_MAX_SECONDS).contains(&overlap) {
        return Err(ApiError::invalid_field(
            "overlap_seconds",
            "must be between 0 and 2592000",
        ));
    }
    Ok(overlap)
}

/// One change to a merchant's signing.
#[derive(Clone, Copy)]
enum Change {
    Scheme(CallbackScheme),
    Rotate { overlap: i64 },
}

/// Reads the merchant's row under its lock, applies the change to its
/// scheme and secrets and writes both back in the same transaction, so
/// that two rotations at once cannot lose a secret. Returns the signing
/// after it (with the secret it created, if any) and, for a rotation,
/// when the secrets before it stop signing.
async fn change(
    app: &App,
    actor: &Actor,
    merchant_id: &str,
    change: Change,
) -> Result<(Signing, Option<i64>), ApiError> {
    let now = app.now_unix();
    let id = merchant_id.to_string();
    // Made before the transaction (encryption needs no database); used
    // only if the change adds a secret.
    let secret = new_secret();
    let fresh = StoredSecret {
        ciphertext: app
            .vault
            .encrypt(&secret)
            .map_err(|e| ApiError::Internal(e.to_string()))?,
        created_at: now,
        expires_at: None,
    };
    let (signing, added, previous_end) = app
        .db
        .transaction_audited::<_, ApiError, _>(
            actor.audit(Target::Merchant(merchant_id.to_string()), None, now),
            move |tx| {
                Box::pin(async move {
                    let row = merchants::locked_row(tx, &id).await?;
                    let mut secrets = secrets_of(&row)?;
                    // Secrets that no longer sign are dropped: nothing reads them.
                    secrets.retain(|s| s.signs_at(now));
                    let (scheme, add, previous_end) = match change {
                        // The first secret is two admins' as every later
                        // one is (issue_secret, through an approval): the
                        // scheme's choice never issues one.
                        Change::Scheme(CallbackScheme::StandardWebhooks) if secrets.is_empty() => {
                            return Err(ApiError::FirstCallbackSecret);
                        }
                        Change::Scheme(scheme) => (scheme, false, None),
                        Change::Rotate { overlap } => {
                            let mut ended = false;
                            for s in secrets.iter_mut().filter(|s| s.expires_at.is_none()) {
                                s.expires_at = Some(now + overlap);
                                ended = true;
                            }
                            // An overlap of 0 ends them now: they no longer sign.
                            secrets.retain(|s| s.signs_at(now));
                            let end = (ended && overlap > 0).then_some(now + overlap);
                            (row.callback_scheme, true, end)
                        }
                    };
                    if add {
                        secrets.push(fresh);
                    }
                    let document = serde_json::to_string(&secrets)
                        .map_err(|e| ApiError::Internal(e.to_string()))?;
                    let written = MerchantChange {
                        callback_scheme: Some(scheme),
                        callback_secrets: Some(document),
                        ..MerchantChange::at(now)
                    };
                    tx.change_merchant(&id, &written).await?;
                    Ok((view(scheme, secrets, now, None), add, previous_end))
                })
            },
        )
        .await?;
    Ok((
        Signing {
            new_secret: added.then_some(secret),
            ..signing
        },
        previous_end,
    ))
}

/// A new secret as the Standard Webhooks specification shapes it: the
/// prefix and the base64 of 32 random bytes.
fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("{SECRET_PREFIX}{}", B64.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secret_that_signs_signs_and_the_body_is_what_is_signed() {
        let secrets = vec![new_secret(), new_secret()];
        let signer = Signer::StandardWebhooks {
            secrets: secrets.clone(),
        };
        let body = r#"{"event":"deposit.completed","amount":"100.5000"}"#;
        let mut delivery = delivery(body);
        let headers = signer.headers(&mut delivery, 1_700_000_000).unwrap();
        assert!(delivery.signature.is_none());
        let names: Vec<&str> = headers.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            ["webhook-id", "webhook-timestamp", "webhook-signature"]
        );
        let signatures: Vec<&str> = headers[2].1.split(' ').collect();
        assert_eq!(signatures.len(), 2);
        for (secret, signature) in secrets.iter().zip(signatures) {
            let expected = standardwebhooks::Webhook::new(secret)
                .unwrap()
                .sign("d-1", 1_700_000_000, body.as_bytes())
                .unwrap();
            assert_eq!(signature, expected);
        }
        assert!(!headers
            .iter()
            .any(|(_, v)| secrets.iter().any(|s| v.contains(s))));
    }

    fn delivery(body: &str) -> CallbackDeliveryRow {
        CallbackDeliveryRow {
            id: "d-1".into(),
            merchant_id: "m-1".into(),
            order_kind: crate::domain::status::OrderKind::Deposit,
            order_no: "D1".into(),
            event: "deposit.completed".into(),
            callback_url: "https://merchant.example/cb".into(),
            body: body.into(),
            status: crate::domain::status::DeliveryStatus::Sending,
            attempts: 0,
            next_attempt_at: Some(1_000),
            created_at: 1_000,
            updated_at: 1_000,
            signature: None,
            claim_token: None,
            queued_at_ms: None,
            receiver_host: None,
            signing_key_id: None,
            order_created_at: Some(900),
        }
    }

    fn key(id: &str, created_at: i64) -> SeedKey {
        SeedKey {
            id: id.into(),
            created_at,
            key: format!("sk_test_{id}_0123456789abcdef{id}"),
        }
    }

    fn seed(keys: &[SeedKey], delivery: &mut CallbackDeliveryRow) -> (String, String) {
        let headers = Signer::Seed {
            keys: keys.to_vec(),
        }
        .headers(delivery, 1_700_000_000)
        .unwrap();
        (headers[0].1.clone(), headers[2].1.clone())
    }

    #[test]
    fn a_seed_callback_keeps_its_orders_key_and_never_carries_a_later_one() {
        let body = r#"{"event":"deposit.completed","amount":"100.5000"}"#;
        let fields = payments_wire::SigningFields::from_json_body(body.as_bytes()).unwrap();
        let (old, new) = (key("old", 100), key("new", 950));
        let mut d = delivery(body);

        // In the rotation's grace: the older key signs and is carried.
        let (shown, first) = seed(&[new.clone(), old.clone()], &mut d);
        assert_eq!(shown, old.key);
        assert!(payments_wire::verify(&fields, &old.key, &first));
        assert_eq!(d.signing_key_id.as_deref(), Some("old"));
        // Retried while it works: byte-identical.
        assert_eq!(
            seed(&[new.clone(), old.clone()], &mut d),
            (old.key.clone(), first)
        );

        // The older key revoked: signed again with the new one, which is
        // not sent (the URL was set before it existed).
        let (shown, again) = seed(std::slice::from_ref(&new), &mut d);
        assert!(payments_wire::verify(&fields, &new.key, &again));
        assert_ne!(shown, new.key);
        assert!(shown.ends_with(&new.key[new.key.len() - 4..]), "{shown}");
        assert_eq!(d.signing_key_id.as_deref(), Some("new"));

        // An order created after the rotation is signed with, and carries,
        // the new key.
        let mut later = delivery(body);
        later.order_created_at = Some(960);
        assert_eq!(seed(&[new.clone(), old], &mut later).0, new.key);

        assert!(Signer::Seed { keys: vec![] }
            .headers(&mut delivery(body), 1)
            .is_err());
    }

    #[test]
    fn a_secret_has_the_prefix_and_32_bytes() {
        let secret = new_secret();
        let raw = B64
            .decode(secret.strip_prefix(SECRET_PREFIX).unwrap())
            .unwrap();
        assert_eq!(raw.len(), 32);
    }
}
