//! `--tls`, `--tls-ca`, `--tls-cert`, `--tls-key`, `--tls-server-name`: TLS to the providers a
//! command calls (`invoke`, `bench`, `demo`, and `list` when it asks a MetadataService). The files are read
//! once, when the command starts, and then serve every consumer and MetadataService client the command
//! makes (a command runs one consumer, so the setting is the process's).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use anyhow::{bail, Context, Result};
use clap::Args;
use rudder::{TlsClient, TlsConfig};

static INSTALLED: OnceLock<Option<TlsClient>> = OnceLock::new();

/// The TLS flags.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct TlsArgs {
    /// Call providers over TLS, trusting the system's root certificates (implied by the other
    /// --tls-* flags). A provider that does not speak TLS fails; nothing falls back to plaintext.
    #[arg(long)]
    pub(crate) tls: bool,
    /// Trust only the CA certificates in this PEM file (Dubbo's client-trust-cert-collection-path).
    #[arg(long, value_name = "FILE")]
    pub(crate) tls_ca: Option<PathBuf>,
    /// Show this client certificate chain (PEM) to providers that require one (mutual TLS).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub(crate) tls_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM: PKCS#8, PKCS#1 or SEC1, unencrypted).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub(crate) tls_key: Option<PathBuf>,
    /// Check providers' certificates against this name instead of their address (and send it as SNI).
    #[arg(long, value_name = "NAME")]
    pub(crate) tls_server_name: Option<String>,
}

impl TlsArgs {
    /// The configuration the flags ask for; `None` without any.
    pub(crate) fn config(&self) -> Option<TlsConfig> {
        let wanted = self.tls
            || self.tls_ca.is_some()
            || self.tls_cert.is_some()
            || self.tls_server_name.is_some();
        if !wanted {
            return None;
        }
        let mut config = match &self.tls_ca {
            Some(ca) => TlsConfig::ca_file(ca),
            None => TlsConfig::system_roots(),
        };
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            config = config.client_cert(cert, key);
        }
        if let Some(name) = &self.tls_server_name {
            config = config.server_name(name);
        }
        Some(config)
    }

    /// Reads the files and makes them the command's TLS setting (once per process).
    pub(crate) fn install(&self) -> Result<()> {
        let client = match self.config() {
            Some(config) => Some(config.load().context("--tls")?),
            None => None,
        };
        if INSTALLED.set(client).is_err() {
            bail!("the TLS setting was already chosen");
        }
        Ok(())
    }
}

/// The command's TLS, if `--tls*` asked for it.
pub(crate) fn installed() -> Option<TlsClient> {
    INSTALLED.get().cloned().flatten()
}

/// `builder` with the command's TLS.
pub(crate) fn apply(builder: rudder::ConsumerBuilder) -> rudder::ConsumerBuilder {
    match installed() {
        Some(tls) => builder.tls(tls),
        None => builder,
    }
}

/// A MetadataService client with the command's TLS.
pub(crate) fn metadata_fetcher() -> Arc<dyn rudder::tools::MetadataFetcher> {
    rudder::tools::metadata_fetcher_with_tls(installed())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        tls: TlsArgs,
    }

    #[test]
    fn no_flag_no_tls_and_any_flag_implies_it() {
        assert!(Cli::parse_from(["x"]).tls.config().is_none());
        let system = Cli::parse_from(["x", "--tls"]).tls.config().unwrap();
        assert_eq!(system.ca_path(), None);
        let ca = Cli::parse_from(["x", "--tls-ca", "ca.pem", "--tls-server-name", "p.internal"])
            .tls
            .config()
            .unwrap();
        assert_eq!(ca.ca_path(), Some(std::path::Path::new("ca.pem")));
        assert_eq!(ca.server_name_override(), Some("p.internal"));
        let mutual = Cli::parse_from([
            "x",
            "--tls-ca",
            "ca.pem",
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "c.key",
        ])
        .tls
        .config()
        .unwrap();
        assert!(mutual.client_cert_paths().is_some());
    }

    #[test]
    fn a_certificate_needs_its_key() {
        let error = Cli::try_parse_from(["x", "--tls-cert", "c.pem"]).unwrap_err();
        assert!(error.to_string().contains("--tls-key"), "{error}");
    }
}
