//! `payments keys rotate` over a database full of secrets: sealed under
//! the old master key, resealed under the new while both are configured,
//! and afterwards every API key still authenticates, every callback secret
//! still opens and every operator token (kept only as a keyed hash) still
//! names its operator with the old master key gone.
//!
//! `PAYMENTS_ROTATION_SECRETS` sets how many API keys are stored (500
//! unless set; `.ci/run` runs it with 100,000 on PostgreSQL and prints
//! the time the rotation took).

use payments_service::app::callbacks::signing;
use payments_service::app::second_factor::{self, Prompt};
use payments_service::app::{credentials, people};
use payments_service::domain::status::CallbackScheme;
use payments_service::domain::status::Role;
use payments_service::keys::{new_api_key, KeyVault};
use payments_service::store::rows::ApiKeyRow;
use payments_service::Profile;
use payments_testing::{TestService, SET_UP};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

fn secrets() -> usize {
    std::env::var("PAYMENTS_ROTATION_SECRETS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(500)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotation_reseals_every_secret_and_the_old_master_key_can_go() {
    let old_key = KeyVault::generate_master_key();
    let new_key = KeyVault::generate_master_key();
    let clock = Arc::new(payments_service::clock::SystemClock);
    let before = TestService::start_with(Profile::Sandbox, clock.clone(), {
        let old_key = old_key.clone();
        move |c| c.master_key = Some(old_key)
    })
    .await
    .unwrap();
    let app = before.service.app().clone();
    let merchant = before.new_merchant("Rotation Co").await.unwrap();
    let merchant_id = merchant.merchant.id.clone();
    let secret = signing::issue_secret(&app, &SET_UP, &merchant_id, Some(0))
        .await
        .unwrap()
        .0
        .new_secret
        .expect("a first secret is shown once");
    signing::set_scheme(
        &app,
        &SET_UP,
        &merchant_id,
        CallbackScheme::StandardWebhooks,
    )
    .await
    .unwrap();
    let operator = people::create(
        &app,
        &SET_UP,
        people::NewOperator {
            name: "Rita".into(),
            email: "rita@ops.example.test".into(),
            role: Role::Admin,
        },
    )
    .await
    .unwrap();
    let token = people::issue_token(&app, &SET_UP, &operator.id, "rotation".into(), None)
        .await
        .unwrap()
        .token;
    // Rita's authenticator, set up and sealed under the old key.
    let rita = payments_service::app::people::Operator {
        id: Some(operator.id.clone()),
        name: "Rita".into(),
        role: Role::Admin,
    };
    let Prompt::Enrol {
        key: authenticator, ..
    } = second_factor::prompt(&app, &rita).await.unwrap()
    else {
        panic!("a first sign-in enrols")
    };

    // The merchant's keys, sealed under the old master key, 1000 to a
    // transaction, four transactions at a time (one at a time, the
    // inserts' round trips were most of the test); every 97th kept to try
    // afterwards, and the first.
    let n = secrets();
    let mut sample = vec![merchant.api_key.clone()];
    let mut inserts = tokio::task::JoinSet::new();
    let mut left = n;
    while left > 0 {
        let take = left.min(1000);
        left -= take;
        let rows: Vec<(String, ApiKeyRow)> = (0..take)
            .map(|_| {
                let key = new_api_key(false);
                let row = ApiKeyRow {
                    id: uuid::Uuid::new_v4().to_string(),
                    merchant_id: merchant_id.clone(),
                    key_hash: app.vault.lookup_hash(&key),
                    key_ciphertext: app.vault.encrypt(&key).unwrap(),
                    created_at: 1_700_000_000,
                    expires_at: None,
                    allowed_addresses: None,
                    scope: payments_service::domain::status::KeyScope::Full,
                };
                (key, row)
            })
            .collect();
        sample.extend(rows.iter().step_by(97).map(|(k, _)| k.clone()));
        if inserts.len() == 4 {
            inserts.join_next().await.unwrap().unwrap();
        }
        let db = app.db.clone();
        inserts.spawn(async move {
            db.transaction(move |s| {
                Box::pin(async move {
                    for (_, row) in &rows {
                        s.insert_api_key(row).await?;
                    }
                    Ok::<(), payments_service::store::StoreError>(())
                })
            })
            .await
            .unwrap()
        });
    }
    while let Some(done) = inserts.join_next().await {
        done.unwrap();
    }
    let database_url = before.database_url.clone();
    let data_dir = app.config.data_dir.clone();
    drop(app);
    drop(before);

    // The rotation, by the command an operator runs.
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_payments"))
        .args(["keys", "rotate", "--batch", "1000"])
        .env("PAYMENTS_PROFILE", "sandbox")
        .env("PAYMENTS_DATABASE_URL", &database_url)
        .env("PAYMENTS_DATA_DIR", &data_dir)
        .env("PAYMENTS_MASTER_KEY", &new_key)
        .env("PAYMENTS_PREVIOUS_MASTER_KEYS", &old_key)
        .env("PAYMENTS_LOG_LEVEL", "warn")
        .output()
        .unwrap();
    let took = started.elapsed();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!(
        "payments keys rotate over {} API keys: {:.1} s\n{said}",
        n + 1,
        took.as_secs_f64()
    );
    assert!(
        said.contains(&format!(
            "api_keys.key_ciphertext: {} read, {} resealed",
            n + 1,
            n + 1
        )),
        "{said}"
    );
    assert!(
        !said.contains(&old_key) && !said.contains(&new_key),
        "no master key is printed"
    );

    // Only the new master key from here on.
    let after = TestService::start_with(Profile::Sandbox, clock, {
        let (url, new_key) = (database_url.clone(), new_key.clone());
        move |c| {
            c.master_key = Some(new_key);
            c.database_url = url;
        }
    })
    .await
    .unwrap();
    let app = after.service.app().clone();
    for key in &sample {
        let hash = app.vault.lookup_hash(key);
        let signer = credentials::signer(&app, &hash)
            .await
            .unwrap()
            .expect("the key is found by its hash");
        assert_eq!(&app.vault.decrypt(&signer.key.key_ciphertext).unwrap(), key);
    }
    let stored = app
        .db
        .run(move |s| {
            Box::pin(async move {
                let mut all = Vec::new();
                let mut after = String::new();
                loop {
                    let page = s
                        .sealed_page(
                            payments_service::store::queries::vault::Sealed::ApiKeys,
                            &after,
                            5000,
                        )
                        .await?;
                    let Some((last, _)) = page.last() else { break };
                    after = last.clone();
                    all.extend(page.into_iter().map(|(_, v)| v));
                }
                Ok(all)
            })
        })
        .await
        .unwrap();
    assert_eq!(stored.len(), n + 1);
    assert!(stored
        .iter()
        .all(|v| app.vault.is_current(v) && app.vault.decrypt(v).is_ok()));
    let row = payments_service::app::merchants::find_row(&app, &merchant_id)
        .await
        .unwrap();
    let secrets = signing::secrets_of(&row).unwrap();
    assert_eq!(secrets.len(), 1);
    assert_eq!(app.vault.decrypt(&secrets[0].ciphertext).unwrap(), secret);
    let who = people::authenticate(&app, &token).await.unwrap();
    assert_eq!(
        who.name, "Rita",
        "the token's keyed hash still finds its operator"
    );
    assert!(
        said.contains("operator_second_factors.secret_sealed: 1 read, 1 resealed"),
        "{said}"
    );
    let Prompt::Enrol { key: shown, .. } = second_factor::prompt(&app, &rita).await.unwrap() else {
        panic!("still enrolling")
    };
    assert_eq!(
        shown, authenticator,
        "the authenticator's secret opens under the new key"
    );
}
