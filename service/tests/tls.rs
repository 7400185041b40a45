//! The production courier's TLS and address rules against real TLS
//! servers (`openssl s_server`): a chain to a CA from the configured bundle
//! is accepted, an unknown CA and a self-signed certificate are refused,
//! http is refused, and internal addresses are refused unless allowed.

use payments_service::config::{Config, Profile};
use payments_service::delivery::Courier;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn openssl(dir: &Path, args: &[&str]) {
    let status = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("openssl is installed (the test makes its certificates with it)");
    assert!(status.success(), "openssl {args:?}");
}

/// A CA, a `localhost` certificate it signed, and a self-signed one.
fn certificates(dir: &Path) {
    std::fs::write(dir.join("leaf.ext"), "subjectAltName=DNS:localhost\n").unwrap();
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=Test CA",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "leaf.key",
            "-out",
            "leaf.csr",
        ],
    );
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "leaf.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "leaf.ext",
            "-out",
            "leaf.pem",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost",
            "-keyout",
            "self.key",
            "-out",
            "self.pem",
        ],
    );
}

struct Server(Child, u16);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `openssl s_server` with the given certificate.
async fn server(dir: &Path, cert: &str, key: &str) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // Owned by `Server` at once, so every path kills and reaps it.
    let server = Server(
        Command::new("openssl")
            .args([
                "s_server",
                "-quiet",
                "-www",
                "-accept",
                &port.to_string(),
                "-cert",
                cert,
                "-key",
                key,
            ])
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("openssl s_server starts"),
        port,
    );
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("openssl s_server did not listen on {port}");
}

fn courier(ca_bundle: Option<&Path>, allow_private: bool) -> Courier {
    let mut config = Config::defaults(Profile::Production);
    config.callback_ca_bundle = ca_bundle.map(Path::to_path_buf);
    config.callback_allow_private_addresses = allow_private;
    Courier::new(&config).unwrap()
}

async fn post(courier: &Courier, url: &str) -> Result<u16, String> {
    courier.post(url, &[], "{}", Duration::from_secs(5)).await
}

#[tokio::test]
async fn production_trusts_only_verified_chains_on_public_addresses() {
    let dir = std::env::temp_dir().join(format!("payments-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    certificates(&dir);
    let signed = server(&dir, "leaf.pem", "leaf.key").await;
    let selfsigned = server(&dir, "self.pem", "self.key").await;
    let ca = dir.join("ca.pem");

    // Private addresses allowed here only because the servers are local.
    let trusting = courier(Some(&ca), true);
    // The handshake passes; `s_server -www` then answers only GET, so the
    // POST waits for its timeout. What matters is that no certificate
    // error comes back, where the same server without the bundle fails.
    let answered = post(&trusting, &format!("https://localhost:{}/cb", signed.1)).await;
    if let Err(e) = &answered {
        assert!(
            !e.to_lowercase().contains("certificate"),
            "the chain was refused: {e}"
        );
        assert!(e.starts_with("timeout"), "{e}");
    }

    let refused = post(&trusting, &format!("https://localhost:{}/cb", selfsigned.1))
        .await
        .unwrap_err();
    assert!(refused.to_lowercase().contains("certificate"), "{refused}");

    let plain = courier(None, true);
    let unknown = post(&plain, &format!("https://localhost:{}/cb", signed.1))
        .await
        .unwrap_err();
    assert!(unknown.to_lowercase().contains("certificate"), "{unknown}");

    let http = post(&trusting, &format!("http://localhost:{}/cb", signed.1))
        .await
        .unwrap_err();
    assert!(
        http.contains("scheme is not allowed") || http.contains("https"),
        "{http}"
    );

    let guarded = courier(Some(&ca), false);
    for url in [
        format!("https://localhost:{}/cb", signed.1),
        format!("https://127.0.0.1:{}/cb", signed.1),
        "https://169.254.169.254/latest/meta-data".to_string(),
        "https://[::1]/cb".to_string(),
    ] {
        let err = post(&guarded, &url).await.unwrap_err();
        assert!(err.contains("non-public address"), "{url}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
