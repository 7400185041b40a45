//! Owner invitations keep no secret in the clear: the token only as its
//! keyed hash, the platform event's body (which carries the link) sealed
//! under the master key and shown to operators with the link redacted, the
//! owner's password only as an Argon2id hash. Two accepts of one link at
//! once: exactly one succeeds. On SQLite, and on PostgreSQL when
//! PAYMENTS_TEST_DATABASE_URL names a server.

use anyhow::{Context, Result};
use base64::Engine;
use payments_service::app::listings::{self, Listing};
use payments_service::app::{callbacks, owners, passwords};
use payments_service::clock::{Clock, OffsetClock};
use payments_service::domain::error::ApiError;
use payments_service::domain::routing::Profile;
use payments_service::domain::status::{InvitationStatus, OrderKind, OwnerStatus};
use payments_testing::TestService;
use std::sync::Arc;

async fn service() -> Result<TestService> {
    let secret = format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(uuid::Uuid::new_v4().as_bytes())
    );
    TestService::start_with(Profile::Sandbox, Arc::new(OffsetClock::default()), |c| {
        // Never posted: these tests run no delivery worker.
        c.platform_events_url = Some("http://127.0.0.1:9/platform".into());
        c.platform_events_secret = Some(secret);
    })
    .await
}

#[tokio::test]
async fn an_invitation_keeps_only_a_hash_a_sealed_body_and_is_accepted_once() -> Result<()> {
    let svc = service().await?;
    let app = svc.service.app();
    let m = svc.new_merchant("Owned").await?.merchant;
    let invitation = owners::invite(
        app,
        &payments_testing::SET_UP,
        &m.id,
        "Owner@Example.test".into(),
    )
    .await?;
    assert_eq!(invitation.email, "owner@example.test");
    assert_eq!(invitation.status, InvitationStatus::Pending);

    let listing = Listing {
        order_no: Some(invitation.id.clone()),
        ..Listing::default()
    };
    let deliveries = listings::callback_deliveries(app, listing).await?.items;
    assert_eq!(deliveries.len(), 1);
    let delivery = &deliveries[0];
    assert_eq!(delivery.order_kind, OrderKind::OwnerInvitation);
    assert_eq!(delivery.event, "tenant_owner_invite");
    assert_eq!(delivery.callback_url, "http://127.0.0.1:9/platform");
    assert!(
        !delivery.body.contains("owner@example.test") && !delivery.body.contains("token"),
        "the stored body is sealed"
    );
    let opened: serde_json::Value = serde_json::from_str(&callbacks::open_body(app, delivery)?)?;
    let link = opened["link"].as_str().context("a link")?;
    let token = link.split_once("token=").context("a token")?.1.to_string();
    assert!(token.starts_with("inv_") && token.len() > 40, "{token}");
    assert!(!invitation.token_hash.contains(&token));
    let shown = callbacks::shown_body(app, delivery)?;
    assert!(
        !shown.contains(&token) && shown.contains("[redacted]"),
        "{shown}"
    );

    // Two accepts of one link at once: one wins, the other finds it used.
    let (a, b) = tokio::join!(
        owners::accept(app, &token, "correct horse battery".into(), "test-accept-1"),
        owners::accept(app, &token, "another long password".into(), "test-accept-2"),
    );
    let (won, lost) = match (a, b) {
        (Ok(won), Err(lost)) => (won, lost),
        (Err(lost), Ok(won)) => (won, lost),
        (a, b) => panic!(
            "exactly one accept succeeds: {:?} {:?}",
            a.is_ok(),
            b.is_ok()
        ),
    };
    assert!(
        matches!(lost, ApiError::InvitationEnded("accepted")),
        "{lost:?}"
    );
    assert_eq!(won.email, "owner@example.test");
    let owner = owners::owner(app, &m.id, "owner@example.test")
        .await?
        .context("the owner")?;
    assert_eq!(owner.status, OwnerStatus::Active);
    let hash = owner.password_hash.context("a password hash")?;
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    assert!(
        passwords::verify("correct horse battery", &hash)
            ^ passwords::verify("another long password", &hash),
        "the winner's password, and only it"
    );
    Ok(())
}

#[tokio::test]
async fn without_a_platform_address_nobody_is_invited() -> Result<()> {
    // A sandbox with none receives its own (below); a deployment with none
    // is this one.
    let svc = TestService::start_adjusting(
        Profile::Sandbox,
        Arc::new(OffsetClock::default()),
        |_| {},
        |app| {
            app.config.platform_events_url = None;
            app.config.platform_events_secret = None;
        },
    )
    .await?;
    let app = svc.service.app();
    let m = svc.new_merchant("No platform").await?.merchant;
    let refused = owners::invite(
        app,
        &payments_testing::SET_UP,
        &m.id,
        "owner@example.test".into(),
    )
    .await;
    assert!(matches!(refused, Err(ApiError::PlatformEventsUnconfigured)));
    let listed = owners::list(app, &m.id, Listing::default()).await?;
    assert!(listed.items.is_empty());
    Ok(())
}

/// A sandbox with no platform address is its own platform: the invitation
/// is queued to its inbox, which takes only posts signed with the secret it
/// keeps in its data directory, stamped on its own clock.
#[tokio::test]
async fn a_sandbox_without_a_platform_address_receives_its_own_platform_events() -> Result<()> {
    use payments_service::app::platform_inbox;
    let clock = Arc::new(OffsetClock::default());
    let svc = TestService::start(Profile::Sandbox, clock.clone()).await?;
    let app = svc.service.app();
    assert!(platform_inbox::is_own(app));
    let secret = app
        .config
        .platform_events_secret
        .clone()
        .context("a secret")?;
    let kept = std::fs::read_to_string(app.config.data_dir.join("platform-events.secret"))?;
    assert_eq!(kept.trim(), secret);
    let m = svc.new_merchant("Own platform").await?.merchant;
    owners::invite(
        app,
        &payments_testing::SET_UP,
        &m.id,
        "owner@example.test".into(),
    )
    .await?;
    let events = platform_inbox::recent(app, 10).await?;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].body["email"], "owner@example.test");
    assert_eq!(events[0].body["tenant_name"], "Own platform");
    let delivery = callbacks::find(app, &events[0].delivery_id).await?;
    assert_eq!(
        delivery.callback_url,
        format!("{}/sandbox/platform-events", svc.base_url())
    );

    let post = |id: &str, at: i64, signature: String| {
        reqwest::Client::new()
            .post(format!("{}/sandbox/platform-events", svc.base_url()))
            .header("webhook-id", id)
            .header("webhook-timestamp", at.to_string())
            .header("webhook-signature", signature)
            .body(r#"{"event":"tenant_owner_invite"}"#)
            .send()
    };
    let signed = |id: &str, at: i64| -> Result<String> {
        Ok(standardwebhooks::Webhook::new(&secret)?.sign(
            id,
            at,
            br#"{"event":"tenant_owner_invite"}"#,
        )?)
    };
    // The sandbox's clock moved a day on: the events are stamped with it.
    assert!(clock.advance_by(86_400));
    let now = app.now_unix();
    assert_eq!(
        post("msg_1", now, signed("msg_1", now)?).await?.status(),
        204
    );
    let forged = post(
        "msg_1",
        now,
        "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=".into(),
    )
    .await?;
    assert_eq!(forged.status(), 401);
    let envelope: serde_json::Value = forged.json().await?;
    assert_eq!(envelope["error_code"], "INVALID_SIGNATURE");
    let other_id = post("msg_2", now, signed("msg_1", now)?).await?;
    assert_eq!(other_id.status(), 401);
    let stale = post("msg_3", now - 3600, signed("msg_3", now - 3600)?).await?;
    assert_eq!(stale.status(), 401);
    // The far ends of a timestamp are refused, never an overflow.
    for at in [i64::MIN, i64::MAX] {
        let extreme = post("msg_4", at, signed("msg_4", at)?).await?;
        assert_eq!(extreme.status(), 401, "{at}");
    }
    Ok(())
}
