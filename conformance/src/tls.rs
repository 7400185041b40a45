//! Certificates for the suite's https receivers: a test CA the service is
//! told to trust (`callback_ca_bundle`), a `localhost` certificate it
//! signed, and a self-signed one production must refuse. Made with the
//! `openssl` command line, so no key material is ever committed.

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
}

impl TestCa {
    /// Makes a fresh CA and both leaf certificates in a scratch directory.
    pub fn create() -> Result<TestCa> {
        let dir = std::env::temp_dir().join(format!("conformance-ca-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        std::fs::write(dir.join("leaf.ext"), "subjectAltName=DNS:localhost\n")?;
        let key = ["-newkey", "rsa:2048", "-nodes"];
        openssl(
            &dir,
            &[
                &["req", "-x509"],
                &key[..],
                &[
                    "-days",
                    "2",
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
            &dir,
            &[
                &["req"],
                &key[..],
                &[
                    "-subj",
                    "/CN=localhost",
                    "-keyout",
                    "leaf.key",
                    "-out",
                    "leaf.csr",
                ],
            ]
            .concat(),
        )?;
        openssl(
            &dir,
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
        )?;
        openssl(
            &dir,
            &[
                &["req", "-x509"],
                &key[..],
                &[
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
            ]
            .concat(),
        )?;
        Ok(TestCa { dir })
    }

    /// The CA certificate (PEM) the service under test should trust.
    pub fn bundle(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// Serves the `localhost` certificate the CA signed.
    pub fn signed(&self) -> Result<TlsAcceptor> {
        acceptor(&self.dir.join("leaf.pem"), &self.dir.join("leaf.key"))
    }

    /// Serves a self-signed `localhost` certificate.
    pub fn self_signed(&self) -> Result<TlsAcceptor> {
        acceptor(&self.dir.join("self.pem"), &self.dir.join("self.key"))
    }
}

impl Drop for TestCa {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
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
