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
        assert!(err.contains("is not a public address"), "{url}: {err}");
    }

    // A named exemption lets exactly that host through.
    let exempt = courier(Some(&bundle), false, &["localhost"]);
    assert_eq!(post(&exempt, &signed.url).await, Ok(200));
    let err = post(&exempt, &format!("https://127.0.0.1:{port}"))
        .await
        .unwrap_err();
    assert!(err.contains("is not a public address"), "{err}");
}

/// A proxy from the environment would resolve the merchant's host itself,
/// and the guard would never see the address: the courier reads none, so
/// a name resolving to a private address is refused before anything
/// reaches the proxy.
#[tokio::test]
async fn a_proxy_in_the_environment_does_not_reach_around_the_guard() {
    let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    for name in [
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "ALL_PROXY",
        "https_proxy",
        "http_proxy",
    ] {
        // This binary's other test builds couriers too, and reads no proxy
        // either: setting these for the whole process is safe here.
        std::env::set_var(name, &proxy_url);
    }
    let guarded = courier(None, false, &[]);
    let err = post(&guarded, "https://localhost:9/cb").await.unwrap_err();
    assert!(err.starts_with("address not allowed"), "{err}");
    proxy.set_nonblocking(true).unwrap();
    let reached = proxy.accept().map(|(_, from)| from);
    assert_eq!(
        reached.map_err(|e| e.kind()).err(),
        Some(std::io::ErrorKind::WouldBlock),
        "the proxy was connected to"
    );
}

/// A merchant reads an attempt's kind, never the detail operators read,
/// which may name an internal address.
#[test]
fn a_merchant_reads_the_kind_never_the_address() {
    use payments_service::channels::egress::{coarse, AddressGuard};
    let guard = AddressGuard {
        allow_private: false,
        allowed_hosts: vec![],
    };
    let reason = guard
        .check("hooks.internal", "10.3.0.12".parse().unwrap())
        .unwrap_err();
    assert!(
        reason.contains("10.3.0.12"),
        "operators read the detail: {reason}"
    );
    assert_eq!(coarse(&reason), "address not allowed");
    assert_eq!(coarse("timeout after 10 s"), "timeout");
    assert_eq!(coarse("TLS failed: invalid peer certificate"), "TLS failed");
    // A reason stored before kinds were written says no more than this.
    assert_eq!(
        coarse("refused to call a non-public address (10.3.0.12)"),
        "connect failed"
    );
}
