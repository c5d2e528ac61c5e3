//! Secured ZooKeeper servers for tests: SASL DIGEST-MD5 with a JAAS file, TLS on the secure client
//! port with certificates made at test time (never committed keys).
//!
//! Both ride on the local image's start script (`ZK_CFG_EXTRA` adds zoo.cfg lines,
//! `ZK_EXTRA_JVM_OPTS` JVM flags) and a directory of the host bind-mounted at `/secure`. The plain
//! client port stays open next to the secure one: the harness probes readiness there with `srvr`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use testcontainers::core::Mount;
use testcontainers::{ContainerRequest, GenericImage, ImageExt};

use crate::error::HarnessError;
use crate::loopback;

/// Where the secure directory appears inside the container.
const IN_CONTAINER: &str = "/secure";

/// What a secured server adds to the plain one: environment and a bind-mounted directory.
#[derive(Debug, Clone, Default)]
pub struct ServerExtras {
    env: Vec<(String, String)>,
    mount: Option<PathBuf>,
}

impl ServerExtras {
    pub(crate) fn apply(
        &self,
        mut request: ContainerRequest<GenericImage>,
    ) -> ContainerRequest<GenericImage> {
        for (key, value) in &self.env {
            request = request.with_env_var(key, value);
        }
        if let Some(dir) = &self.mount {
            request = request.with_mount(Mount::bind_mount(
                dir.to_string_lossy().into_owned(),
                IN_CONTAINER,
            ));
        }
        request
    }
}

/// A temporary directory with a CA, a server certificate for `127.0.0.1`/`localhost`, a client
/// certificate, and a second CA that signed neither; removed when dropped.
///
/// ```no_run
/// let pki = rudder_it::TestPki::generate().unwrap();
/// assert!(pki.ca().exists());
/// ```
#[derive(Debug)]
pub struct TestPki {
    dir: PathBuf,
}

impl TestPki {
    /// Makes the keys and certificates with the `openssl` command (RSA 2048, valid two days).
    ///
    /// # Errors
    /// [`HarnessError::Setup`] when `openssl` is missing or fails.
    pub fn generate() -> Result<TestPki, HarnessError> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "rudder-it-pki-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).map_err(|e| setup("create the PKI directory", e))?;
        let pki = TestPki { dir };
        pki.make()?;
        Ok(pki)
    }

    fn make(&self) -> Result<(), HarnessError> {
        for ca in ["ca", "other-ca"] {
            self.openssl(&[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN=rudder test {ca}"),
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.pem"),
            ])?;
        }
        write(
            &self.dir.join("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n",
        )?;
        write(
            &self.dir.join("client.ext"),
            "extendedKeyUsage=clientAuth\n",
        )?;
        for who in ["server", "client"] {
            self.openssl(&[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-subj",
                &format!("/CN=rudder test {who}"),
                "-keyout",
                &format!("{who}.key"),
                "-out",
                &format!("{who}.csr"),
            ])?;
            self.openssl(&[
                "x509",
                "-req",
                "-in",
                &format!("{who}.csr"),
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                &format!("{who}.ext"),
                "-out",
                &format!("{who}.crt"),
            ])?;
        }
        // ZooKeeper's PEM key store: the certificate and its PKCS#8 key in one file.
        let mut bundle = read(&self.dir.join("server.crt"))?;
        bundle.push_str(&read(&self.dir.join("server.key"))?);
        write(&self.dir.join("server.pem"), &bundle)
    }

    fn openssl(&self, args: &[&str]) -> Result<(), HarnessError> {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(&self.dir)
            .output()
            .map_err(|e| setup("run openssl", e))?;
        if out.status.success() {
            return Ok(());
        }
        Err(HarnessError::Setup {
            what: format!(
                "openssl {}: {}",
                args.first().unwrap_or(&""),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            source: None,
        })
    }

    /// The directory holding everything.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The CA that signed the server and client certificates (PEM).
    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// A CA that signed nothing here: trusting only it, no server verifies.
    pub fn other_ca(&self) -> PathBuf {
        self.dir.join("other-ca.pem")
    }

    /// The client certificate (PEM).
    pub fn client_cert(&self) -> PathBuf {
        self.dir.join("client.crt")
    }

    /// The client certificate's key (PKCS#8 PEM).
    pub fn client_key(&self) -> PathBuf {
        self.dir.join("client.key")
    }
}

impl Drop for TestPki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Configurations of a secured test server, to pass to
/// [`ZooKeeperContainer::start_with`](crate::ZooKeeperContainer::start_with).
#[derive(Debug)]
pub struct SecureZooKeeper;

impl SecureZooKeeper {
    /// A server that takes SASL DIGEST-MD5 for `users` (a JAAS `DigestLoginModule`) and refuses
    /// every session that has not authenticated by SASL (`enforce.auth.schemes=sasl`). The JAAS file
    /// is written into `pki`'s directory.
    ///
    /// # Errors
    /// [`HarnessError::Setup`] when the JAAS file cannot be written.
    pub fn sasl_digest(
        pki: &TestPki,
        users: &[(&str, &str)],
    ) -> Result<ServerExtras, HarnessError> {
        let mut jaas = String::from(
            "Server {\n    org.apache.zookeeper.server.auth.DigestLoginModule required",
        );
        for (user, password) in users {
            jaas.push_str(&format!("\n    user_{user}=\"{password}\""));
        }
        jaas.push_str(";\n};\n");
        write(&pki.dir.join("jaas.conf"), &jaas)?;
        Ok(ServerExtras {
            env: vec![
                (
                    "ZK_CFG_EXTRA".into(),
                    [
                        "authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
                        "enforce.auth.enabled=true",
                        "enforce.auth.schemes=sasl",
                    ]
                    .join("\n"),
                ),
                (
                    "ZK_EXTRA_JVM_OPTS".into(),
                    format!("-Djava.security.auth.login.config={IN_CONTAINER}/jaas.conf"),
                ),
            ],
            mount: Some(pki.dir.clone()),
        })
    }

    /// A server with a TLS port (Netty, PEM key and trust stores from `pki`) next to its plain one;
    /// `client_auth` is ZooKeeper's `ssl.clientAuth` (`need`, its default, or `none`). Returns the
    /// extras and the secure port.
    ///
    /// # Errors
    /// [`HarnessError::NoFreePort`].
    pub async fn tls(
        pki: &TestPki,
        client_auth: &str,
    ) -> Result<(ServerExtras, u16), HarnessError> {
        SecureZooKeeper::tls_showing(pki, client_auth, "server.pem").await
    }

    /// As [`SecureZooKeeper::tls`], the server showing `keystore` instead of `pki`'s own server
    /// certificate: a file of `pki`'s directory holding a certificate and its PKCS#8 key (PEM), e.g.
    /// an expired one or one for another name.
    ///
    /// # Errors
    /// [`HarnessError::NoFreePort`].
    pub async fn tls_showing(
        pki: &TestPki,
        client_auth: &str,
        keystore: &str,
    ) -> Result<(ServerExtras, u16), HarnessError> {
        let port = loopback::free_port()
            .await
            .map_err(HarnessError::NoFreePort)?;
        let cfg = [
            format!("secureClientPort={port}"),
            "secureClientPortAddress=127.0.0.1".into(),
            "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory".into(),
            format!("ssl.keyStore.location={IN_CONTAINER}/{keystore}"),
            "ssl.keyStore.type=PEM".into(),
            format!("ssl.trustStore.location={IN_CONTAINER}/ca.pem"),
            "ssl.trustStore.type=PEM".into(),
            format!("ssl.clientAuth={client_auth}"),
        ];
        Ok((
            ServerExtras {
                env: vec![("ZK_CFG_EXTRA".into(), cfg.join("\n"))],
                mount: Some(pki.dir.clone()),
            },
            port,
        ))
    }
}

fn setup(what: &str, source: std::io::Error) -> HarnessError {
    HarnessError::Setup {
        what: what.to_owned(),
        source: Some(source),
    }
}

fn write(path: &Path, text: &str) -> Result<(), HarnessError> {
    std::fs::write(path, text).map_err(|e| setup("write a PKI file", e))
}

fn read(path: &Path) -> Result<String, HarnessError> {
    std::fs::read_to_string(path).map_err(|e| setup("read a PKI file", e))
}
