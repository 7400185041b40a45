//! Certificates for the suite's https receivers: a test CA the service is
//! told to trust (`callback_ca_bundle`), a receiver certificate it signed,
//! and a self-signed one production must refuse; or the QA team's own
//! certificate. Made with the `openssl` command line, so no key material
//! is ever committed.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, ServerConfig};
use tokio_rustls::TlsAcceptor;

pub struct TestCa {
    dir: PathBuf,
    /// Kept for later runs (a deployment was told to trust it), or a
    /// scratch directory removed with the value.
    keep: bool,
}

impl TestCa {
    /// A fresh CA for `localhost`, in a scratch directory.
    pub fn create() -> Result<TestCa> {
        Self::create_for(&["localhost".to_string()])
    }

    /// A fresh CA whose receiver certificates name `names`, in a scratch
    /// directory.
    pub fn create_for(names: &[String]) -> Result<TestCa> {
        let dir = std::env::temp_dir().join(format!("conformance-ca-{}", uuid::Uuid::new_v4()));
        make(&dir, names)?;
        Ok(TestCa { dir, keep: false })
    }

    /// The CA kept in `dir`: made there on the first run, read on later
    /// ones, so that a deployment is told to trust `dir/ca.pem` once. Made
    /// anew (a new `ca.pem` to trust) only if the names changed or its
    /// certificates are within a day of expiring.
    pub fn kept_in(dir: &Path, names: &[String]) -> Result<TestCa> {
        let wanted = names.join(",");
        let current = std::fs::read_to_string(dir.join("names.txt")).unwrap_or_default();
        let fresh = current.trim() == wanted && dir.join("ca.pem").exists() && valid_for_a_day(dir);
        if !fresh {
            make(dir, names)?;
            std::fs::write(dir.join("names.txt"), &wanted)?;
        }
        Ok(TestCa {
            dir: dir.to_path_buf(),
            keep: true,
        })
    }

    /// The CA certificate (PEM) the service under test should trust.
    pub fn bundle(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// Serves the receiver certificate the CA signed.
    pub fn signed(&self) -> Result<TlsAcceptor> {
        acceptor(&self.dir.join("leaf.pem"), &self.dir.join("leaf.key"))
    }

    /// Serves a self-signed certificate for the same names.
    pub fn self_signed(&self) -> Result<TlsAcceptor> {
        acceptor(&self.dir.join("self.pem"), &self.dir.join("self.key"))
    }
}

impl Drop for TestCa {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The certificates the suite's https receivers serve.
pub enum ReceiverTls {
    /// A test CA the deployment trusts (its `ca.pem`).
    TestCa(TestCa),
    /// The QA team's own certificate and key, issued by a CA the
    /// deployment already trusts; `stranger` only supplies the self-signed
    /// certificate production must refuse.
    Own {
        cert: PathBuf,
        key: PathBuf,
        stranger: TestCa,
    },
}

impl ReceiverTls {
    pub fn signed(&self) -> Result<TlsAcceptor> {
        match self {
            ReceiverTls::TestCa(ca) => ca.signed(),
            ReceiverTls::Own { cert, key, .. } => acceptor(cert, key),
        }
    }

    pub fn self_signed(&self) -> Result<TlsAcceptor> {
        match self {
            ReceiverTls::TestCa(ca) => ca.self_signed(),
            ReceiverTls::Own { stranger, .. } => stranger.self_signed(),
        }
    }

    /// The CA certificate the deployment must trust, if the suite made it.
    pub fn bundle(&self) -> Option<PathBuf> {
        match self {
            ReceiverTls::TestCa(ca) => Some(ca.bundle()),
            ReceiverTls::Own { .. } => None,
        }
    }
}

/// `subjectAltName` for `names`: addresses as IP, the rest as DNS.
fn alt_names(names: &[String]) -> String {
    let parts: Vec<String> = names
        .iter()
        .map(|n| match n.parse::<std::net::IpAddr>() {
            Ok(_) => format!("IP:{n}"),
            Err(_) => format!("DNS:{n}"),
        })
        .collect();
    format!("subjectAltName={}", parts.join(","))
}

/// Whether the certificates in `dir` are valid for at least one more day.
fn valid_for_a_day(dir: &Path) -> bool {
    ["ca.pem", "leaf.pem"].iter().all(|f| {
        Command::new("openssl")
            .args(["x509", "-checkend", "86400", "-noout", "-in"])
            .arg(dir.join(f))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// Makes a CA, a receiver certificate it signed and a self-signed one, all
/// naming `names`, in `dir` (valid 90 days: a kept CA outlives many runs).
fn make(dir: &Path, names: &[String]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let san = alt_names(names);
    let cn = format!("/CN={}", names.first().map_or("localhost", String::as_str));
    std::fs::write(dir.join("leaf.ext"), format!("{san}\n"))?;
    let key = ["-newkey", "rsa:2048", "-nodes"];
    let days = ["-days", "90"];
    openssl(
        dir,
        &[
            &["req", "-x509"],
            &key[..],
            &days[..],
            &[
                "-subj",
                "/CN=Conformance Test CA",
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign",
            ],
        ]
        .concat(),
    )?;
    openssl(
        dir,
        &[
            &["req"],
            &key[..],
            &["-subj", &cn, "-keyout", "leaf.key", "-out", "leaf.csr"],
        ]
        .concat(),
    )?;
    openssl(
        dir,
        &[
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
                "-extfile",
                "leaf.ext",
                "-out",
                "leaf.pem",
            ],
            &days[..],
        ]
        .concat(),
    )?;
    openssl(
        dir,
        &[
            &["req", "-x509"],
            &key[..],
            &days[..],
            &[
                "-subj", &cn, "-addext", &san, "-keyout", "self.key", "-out", "self.pem",
            ],
        ]
        .concat(),
    )?;
    Ok(())
}

fn openssl(dir: &Path, args: &[&str]) -> Result<()> {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .context("running openssl (the suite makes its test certificates with it)")?;
    if !output.status.success() {
        bail!(
            "openssl {} failed: {}",
            args.first().copied().unwrap_or_default(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor> {
    let chain = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("reading {}", cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("parsing {}", cert.display()))?;
    let key =
        PrivateKeyDer::from_pem_file(key).with_context(|| format!("reading {}", key.display()))?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .context("the receiver's certificate")?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_ca_is_made_once_and_reused_until_its_names_change() {
        let dir = std::env::temp_dir().join(format!("kept-ca-{}", uuid::Uuid::new_v4()));
        let names = vec!["qa-runner.internal".to_string(), "localhost".to_string()];
        let first = TestCa::kept_in(&dir, &names).unwrap();
        let ca = std::fs::read(first.bundle()).unwrap();
        drop(first);
        let again = TestCa::kept_in(&dir, &names).unwrap();
        assert_eq!(
            std::fs::read(again.bundle()).unwrap(),
            ca,
            "the same CA to trust"
        );
        again.signed().unwrap();
        let other = TestCa::kept_in(&dir, &["10.0.0.7".to_string()]).unwrap();
        assert_ne!(
            std::fs::read(other.bundle()).unwrap(),
            ca,
            "new names, a new CA"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
