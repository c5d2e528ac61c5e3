//! How a session proves who it is and protects its bytes: SASL and TLS settings of the registry URL.
//!
//! Dubbo's ZooKeeper registry has no URL parameters for either: a Java application sets the ZooKeeper
//! client's system properties (`zookeeper.client.secure`, `zookeeper.ssl.*`, a JAAS file for SASL).
//! rudder reads them from the registry URL instead, so one string still says everything:
//!
//! * `sasl=digest-md5`: the URL's `user:password` authenticate by SASL DIGEST-MD5 (a JAAS
//!   `DigestLoginModule` on the server) instead of the `digest` scheme. Required by servers with
//!   `enforce.auth.enabled=true` / `enforce.auth.schemes=sasl`. `sasl=none` (the default) is plain
//!   digest authentication when the URL has credentials.
//! * `tls=true`: connect to ZooKeeper's `secureClientPort`. `tls.ca=FILE` (PEM CA certificates; without
//!   it, no server can be verified and the connection fails), `tls.cert=FILE` and `tls.key=FILE`
//!   (PEM client certificate chain and PKCS#8, PKCS#1 or SEC1 key, for servers with
//!   `ssl.clientAuth=need`, ZooKeeper's default). Naming `tls.ca`, `tls.cert` or `tls.key` implies
//!   `tls=true`. The server certificate must name the host of the connect string (IP or DNS SAN).
//!
//! Files are read once per connection attempt, so a rotated certificate is used by the next session.
//! A file's content never appears in an error: only its parameter name and the I/O reason.

use std::path::PathBuf;

use zookeeper_client::{Connector, SaslOptions, TlsOptions};

use crate::error::{RegistryError, SecurityError};

/// Longest certificate or key file read, in bytes: a PEM bundle is a few kilobytes.
const MAX_PEM_BYTES: u64 = 1 << 20;

/// The SASL mechanism the URL asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Sasl {
    /// No SASL: credentials, if any, go through the `digest` scheme (Dubbo's Curator client).
    #[default]
    None,
    /// SASL DIGEST-MD5 with the URL's credentials.
    DigestMd5,
}

/// The security settings of a registry URL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Security {
    pub(crate) sasl: Sasl,
    pub(crate) tls: Option<TlsFiles>,
}

/// Where the TLS material lives (paths only: the contents are read at connect time).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TlsFiles {
    pub(crate) ca: Option<PathBuf>,
    pub(crate) cert: Option<PathBuf>,
    pub(crate) key: Option<PathBuf>,
}

impl Security {
    /// Reads `sasl`, `tls`, `tls.ca`, `tls.cert` and `tls.key` through `param`.
    ///
    /// # Errors
    /// [`RegistryError::BadRegistryUrl`] for a value out of range, a certificate without its key (or the
    /// reverse), or `sasl` without credentials in the URL.
    pub(crate) fn parse<'a>(
        param: impl Fn(&str) -> Option<&'a str>,
        has_credentials: bool,
    ) -> Result<Security, RegistryError> {
        let bad = |reason: &str| RegistryError::BadRegistryUrl {
            reason: reason.to_owned(),
        };
        let sasl = match param("sasl").map(str::trim) {
            None | Some("") => Sasl::None,
            Some(v) if v.eq_ignore_ascii_case("none") => Sasl::None,
            Some(v) if v.eq_ignore_ascii_case("digest-md5") => Sasl::DigestMd5,
            Some(_) => return Err(bad("sasl must be none or digest-md5")),
        };
        if sasl != Sasl::None && !has_credentials {
            return Err(bad(
                "sasl=digest-md5 needs user:password@ in the registry URL",
            ));
        }
        let file = |key: &str| {
            param(key)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let files = TlsFiles {
            ca: file("tls.ca"),
            cert: file("tls.cert"),
            key: file("tls.key"),
        };
        if files.cert.is_some() != files.key.is_some() {
            return Err(bad("tls.cert and tls.key go together"));
        }
        let named = files.ca.is_some() || files.cert.is_some();
        let enabled = match param("tls").map(str::trim) {
            None | Some("") => named,
            Some(v) if v.eq_ignore_ascii_case("true") => true,
            Some(v) if v.eq_ignore_ascii_case("false") => {
                if named {
                    return Err(bad("tls=false with tls.ca, tls.cert or tls.key"));
                }
                false
            }
            Some(_) => return Err(bad("tls must be true or false")),
        };
        Ok(Security {
            sasl,
            tls: enabled.then_some(files),
        })
    }

    /// Whether the connection is TLS.
    pub(crate) fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// `connector` with SASL and TLS applied; `user`/`password` are the URL's credentials.
    ///
    /// # Errors
    /// [`RegistryError::Security`] when a file cannot be read or holds no usable PEM.
    pub(crate) fn apply(
        &self,
        mut connector: Connector,
        user: Option<&str>,
        password: Option<&str>,
    ) -> Result<Connector, RegistryError> {
        if let (Sasl::DigestMd5, Some(user)) = (self.sasl, user) {
            connector = connector.with_sasl(SaslOptions::digest_md5(
                user.to_owned(),
                password.unwrap_or("").to_owned(),
            ));
        }
        if let Some(files) = &self.tls {
            connector = connector.with_tls(files.options()?);
        }
        Ok(connector)
    }
}

/// A client certificate chain and its key, as PEM texts.
pub(crate) type Identity = (String, String);

impl TlsFiles {
    /// The CA file's text and the client certificate and key texts, for rudder's own handshake
    /// (`tls_probe`).
    pub(crate) fn read(&self) -> Result<(Option<String>, Option<Identity>), RegistryError> {
        let ca = self
            .ca
            .as_ref()
            .map(|ca| read_pem("tls.ca", ca))
            .transpose()?;
        let identity = match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                Some((read_pem("tls.cert", cert)?, read_pem("tls.key", key)?))
            }
            _ => None,
        };
        Ok((ca, identity))
    }

    fn options(&self) -> Result<TlsOptions, RegistryError> {
        ensure_crypto_provider();
        let mut options = TlsOptions::new();
        if let Some(ca) = &self.ca {
            let pem = read_pem("tls.ca", ca)?;
            options = options
                .with_pem_ca(&pem)
                .map_err(|source| unusable("tls.ca", source))?;
        }
        if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
            let cert = read_pem("tls.cert", cert)?;
            let key = read_pem("tls.key", key)?;
            options = options
                .with_pem_identity(&cert, &key)
                .map_err(|source| unusable("tls.cert/tls.key", source))?;
        }
        Ok(options)
    }
}

/// zookeeper-client builds its rustls configuration with the process-wide default provider, which
/// rustls cannot pick by itself when more than one is compiled in (another crate of the program may
/// enable `ring`): install aws-lc-rs, the one zookeeper-client's TLS brings, unless one is set.
pub(crate) fn ensure_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing the race to another installer is fine: a provider is set either way.
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    }
}

fn read_pem(parameter: &'static str, path: &std::path::Path) -> Result<String, RegistryError> {
    use std::io::Read;
    let failed = |source: std::io::Error| RegistryError::Security {
        what: parameter,
        source: SecurityError::File(std::sync::Arc::new(source)),
    };
    let file = std::fs::File::open(path).map_err(failed)?;
    let mut text = String::new();
    file.take(MAX_PEM_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(failed)?;
    if text.len() as u64 > MAX_PEM_BYTES {
        return Err(RegistryError::Security {
            what: parameter,
            source: SecurityError::TooLarge,
        });
    }
    Ok(text)
}

fn unusable(parameter: &'static str, source: zookeeper_client::Error) -> RegistryError {
    RegistryError::Security {
        what: parameter,
        source: SecurityError::Unusable(source),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(query: &[(&str, &str)], credentials: bool) -> Result<Security, RegistryError> {
        Security::parse(
            |key| query.iter().find(|(k, _)| *k == key).map(|(_, v)| *v),
            credentials,
        )
    }

    #[test]
    fn defaults_to_neither() {
        assert_eq!(parse(&[], true).unwrap(), Security::default());
        assert!(!parse(&[("tls", "false")], false).unwrap().is_tls());
    }

    #[test]
    fn reads_each_setting_and_refuses_values_out_of_range() {
        let s = parse(
            &[
                ("sasl", "DIGEST-MD5"),
                ("tls.ca", "/c"),
                ("tls.cert", "/a"),
                ("tls.key", "/k"),
            ],
            true,
        )
        .unwrap();
        assert_eq!(s.sasl, Sasl::DigestMd5);
        let files = s.tls.unwrap();
        assert_eq!(files.ca, Some(PathBuf::from("/c")));
        assert_eq!(files.key, Some(PathBuf::from("/k")));
        assert!(parse(&[("tls", "true")], false).unwrap().is_tls());
        for (query, credentials) in [
            (&[("sasl", "gssapi")][..], true),
            (&[("sasl", "digest-md5")][..], false),
            (&[("tls", "yes")][..], false),
            (&[("tls", "false"), ("tls.ca", "/c")][..], false),
            (&[("tls.cert", "/a")][..], false),
        ] {
            let error = parse(query, credentials).unwrap_err();
            assert!(
                matches!(error, RegistryError::BadRegistryUrl { .. }),
                "{query:?}: {error}"
            );
        }
    }

    #[test]
    fn a_missing_or_bogus_file_is_named_by_its_parameter_not_its_content() {
        let dir = std::env::temp_dir().join(format!("rudder-sec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bogus = dir.join("key.pem");
        std::fs::write(&bogus, "SECRET-KEY-MATERIAL").unwrap();
        let files = TlsFiles {
            ca: Some(bogus.clone()),
            ..TlsFiles::default()
        };
        let error = files.options().unwrap_err();
        let text = format!("{error} {error:?}");
        assert!(text.contains("tls.ca"), "{text}");
        assert!(!text.contains("SECRET-KEY-MATERIAL"), "{text}");
        let missing = TlsFiles {
            ca: Some(dir.join("absent.pem")),
            ..TlsFiles::default()
        };
        assert!(matches!(
            missing.options().unwrap_err(),
            RegistryError::Security {
                source: SecurityError::File(_),
                ..
            }
        ));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
