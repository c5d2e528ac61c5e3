//! Certificates for TLS tests, made when the test runs: a CA and the certificates it issues, written
//! as PEM files into a temporary directory that is removed with the [`Pki`]. No key is committed.
//!
//! ```
//! use rudder_test_support::pki::{Pki, Validity};
//! let pki = Pki::new("test");
//! let server = pki.issue("server", &["127.0.0.1", "localhost"], Validity::Current);
//! assert!(std::fs::read_to_string(&server.cert).unwrap().contains("BEGIN CERTIFICATE"));
//! assert!(std::fs::read_to_string(&server.key).unwrap().contains("BEGIN PRIVATE KEY"));
//! ```

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};

/// When an issued certificate is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validity {
    /// From yesterday to ten years from now.
    Current,
    /// Ended in 2001.
    Expired,
    /// Starts in 2090.
    NotYetValid,
}

/// A certificate file and its key file (PEM; the key PKCS#8).
#[derive(Debug, Clone)]
pub struct Issued {
    /// The certificate (leaf only).
    pub cert: PathBuf,
    /// Its private key, PKCS#8.
    pub key: PathBuf,
}

/// A test CA with its directory of PEM files.
pub struct Pki {
    dir: tempfile::TempDir,
    name: String,
    ca: rcgen::Certificate,
    ca_key: KeyPair,
}

impl std::fmt::Debug for Pki {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pki")
            .field("dir", &self.dir.path())
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Pki {
    /// A new CA called `name`, its certificate written to `<dir>/<name>-ca.pem`.
    pub fn new(name: &str) -> Pki {
        let dir = tempfile::Builder::new()
            .prefix("rudder-pki-")
            .tempdir()
            .expect("a temporary directory");
        Pki::new_in(dir, name)
    }

    fn new_in(dir: tempfile::TempDir, name: &str) -> Pki {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, format!("rudder test CA {name}"));
        let ca_key = KeyPair::generate().expect("a CA key");
        let ca = params.self_signed(&ca_key).expect("a CA certificate");
        std::fs::write(dir.path().join(format!("{name}-ca.pem")), ca.pem()).expect("write the CA");
        Pki {
            dir,
            name: name.to_owned(),
            ca,
            ca_key,
        }
    }

    /// The directory the files are in.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The CA certificate file.
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join(format!("{}-ca.pem", self.name))
    }

    /// Issues a certificate for `sans` (IP addresses become IP SANs, anything else DNS SANs), usable
    /// by servers and clients alike, written to `<dir>/<stem>.pem` and `<dir>/<stem>.key`.
    pub fn issue(&self, stem: &str, sans: &[&str], validity: Validity) -> Issued {
        let mut params =
            CertificateParams::new(sans.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
                .expect("certificate params");
        params.distinguished_name.push(
            DnType::CommonName,
            sans.first().copied().unwrap_or("rudder test"),
        );
        params.extended_key_usages = vec![
            rcgen::ExtendedKeyUsagePurpose::ServerAuth,
            rcgen::ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let (before, after) = match validity {
            Validity::Current => (
                rcgen::date_time_ymd(2020, 1, 1),
                rcgen::date_time_ymd(2080, 1, 1),
            ),
            Validity::Expired => (
                rcgen::date_time_ymd(2000, 1, 1),
                rcgen::date_time_ymd(2001, 1, 1),
            ),
            Validity::NotYetValid => (
                rcgen::date_time_ymd(2090, 1, 1),
                rcgen::date_time_ymd(2095, 1, 1),
            ),
        };
        params.not_before = before;
        params.not_after = after;
        let key = KeyPair::generate().expect("a key");
        let cert = params
            .signed_by(&key, &self.ca, &self.ca_key)
            .expect("a signed certificate");
        let issued = Issued {
            cert: self.dir.path().join(format!("{stem}.pem")),
            key: self.dir.path().join(format!("{stem}.key")),
        };
        std::fs::write(&issued.cert, cert.pem()).expect("write the certificate");
        std::fs::write(&issued.key, key.serialize_pem()).expect("write the key");
        issued
    }
}
