//! The production courier's TLS and address rules against real https
//! receivers: a chain to a CA from the configured bundle is accepted, an
//! unknown CA and a self-signed certificate are refused, http is refused,
//! and internal addresses are refused unless allowed, by name or wholesale.

use conformance::receiver::Receiver;
use conformance::tls::TestCa;
use payments_service::app::CallbackPost;
use payments_service::config::Config;
use payments_service::delivery::courier::Courier;
use payments_service::Profile;
use std::path::Path;
use std::time::Duration;

fn courier(ca_bundle: Option<&Path>, allow_private: bool, allowed_hosts: &[&str]) -> Courier {
    let mut config = Config::defaults(Profile::Production);
    config.callback_ca_bundle = ca_bundle.map(Path::to_path_buf);
    config.callback_allow_private_addresses = allow_private;
    config.callback_allowed_private_hosts = allowed_hosts.iter().map(|h| h.to_string()).collect();
    Courier::new(&config).unwrap()
}

async fn post(courier: &Courier, url: &str) -> Result<u16, String> {
    courier
        .post(url, &[], "{}", Duration::from_secs(5))
        .await
        .map_err(|failure| failure.reason)
}

#[tokio::test]
async fn production_trusts_only_verified_chains_on_public_addresses() {
    let ca = TestCa::create().unwrap();
    let signed = Receiver::start_tls(ca.signed().unwrap()).await.unwrap();
    let selfsigned = Receiver::start_tls(ca.self_signed().unwrap())
        .await
        .unwrap();
    let bundle = ca.bundle();

    // Private addresses allowed here only because the receivers are local.
    let trusting = courier(Some(&bundle), true, &[]);
    assert_eq!(post(&trusting, &signed.url).await, Ok(200));
    assert_eq!(signed.received().len(), 1);

    let refused = post(&trusting, &selfsigned.url).await.unwrap_err();
    assert!(refused.to_lowercase().contains("certificate"), "{refused}");
    assert!(selfsigned.received().is_empty(), "no request crossed");

    let plain = courier(None, true, &[]);
    let unknown = post(&plain, &signed.url).await.unwrap_err();
    assert!(unknown.to_lowercase().contains("certificate"), "{unknown}");

    let http = post(&trusting, &signed.url.replace("https://", "http://"))
        .await
        .unwrap_err();
    assert!(
        http.contains("scheme is not allowed") || http.contains("https"),
        "{http}"
    );

    let port = signed
        .url
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_string();
    let guarded = courier(Some(&bundle), false, &[]);
    for url in [
        signed.url.clone(),
        format!("https://127.0.0.1:{port}"),
        "https://169.254.169.254/latest/meta-data".to_string(),
        "https://[::1]/cb".to_string(),
        "https://10.0.0.8/cb".to_string(),
        "https://100.64.0.1/cb".to_string(),
    ] {
        let err = post(&guarded, &url).await.unwrap_err();
        assert!(err.contains("non-public address"), "{url}: {err}");
    }

    // A named exemption lets exactly that host through.
    let exempt = courier(Some(&bundle), false, &["localhost"]);
    assert_eq!(post(&exempt, &signed.url).await, Ok(200));
    let err = post(&exempt, &format!("https://127.0.0.1:{port}"))
        .await
        .unwrap_err();
    assert!(err.contains("non-public address"), "{err}");
}
