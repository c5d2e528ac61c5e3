//! TLS and mutual TLS to providers, for dubbo:// here and tri:// in rudder-triple.
//!
//! [`TlsConfig`] says what to trust and which client certificate to show, by file name;
//! [`TlsConfig::load`] reads the files into a [`TlsClient`], which the protocols use for every new
//! connection. When TLS is used follows Dubbo 3.3 (`SslContexts.buildClientSslContext`): a consumer
//! with TLS configured uses it to every provider, whatever the provider's URL says; a consumer without
//! uses plaintext, except that rudder refuses a provider whose URL says `ssl-enabled=true` (a Java
//! consumer would send it plaintext, which a port-unified Java provider accepts) rather than send
//! plaintext to a provider that announced TLS. Nothing ever falls back to plaintext: a TLS consumer
//! meeting a plaintext provider fails that provider with [`TlsFailure::PlaintextPeer`].
//!
//! Certificates are checked by rustls' WebPKI verifier: the chain up to a root of the CA file (or the
//! system's roots, through rustls-native-certs, which honours a company CA installed in the system
//! store, as Java's default trust store does; webpki-roots would bake in Mozilla's list and ignore it),
//! the validity dates, and the provider's address against the certificate's DNS or IP SANs, or the
//! name given with [`TlsConfig::server_name`].
//!
//! # Rotation
//!
//! Before each new connection the [`TlsClient`] reads the files and compares their contents with
//! what it loaded; when one changed it builds new material from them. Connections already open keep their session (calls in flight
//! are not touched); new ones use the new material. A reload that fails (a half-written key, a
//! certificate that does not match its key) keeps the previous material and logs one warning per
//! change of the files.
//!
//! [`TlsFailure::PlaintextPeer`]: rudder_common::error::TlsFailure::PlaintextPeer

mod classify;
mod config;
mod material;

pub use classify::{failure_counts, handshake_error, record, tls_error, tls_failure_in};
pub use config::{TlsConfig, TlsConfigError};
#[cfg(feature = "server")]
pub(crate) use material::certificates;
pub use material::TlsClient;

/// The URL parameter a provider sets when its protocol has TLS on (Dubbo's `ssl-enabled`).
pub const SSL_ENABLED: &str = "ssl-enabled";

/// Whether the provider URL says its port serves TLS (`ssl-enabled=true`).
///
/// ```
/// use rudder_common::url::DubboUrl;
/// let url = DubboUrl::parse("dubbo://10.0.0.1:20880/com.acme.Greeter?ssl-enabled=true").unwrap();
/// assert!(rudder_rpc::tls::provider_announces_tls(&url));
/// ```
pub fn provider_announces_tls(url: &rudder_common::url::DubboUrl) -> bool {
    url.parameter(SSL_ENABLED)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// The host part of `host:port` (an IPv6 address without its brackets), for certificate checks.
pub(crate) fn host_of(addr: &str) -> &str {
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

#[cfg(test)]
mod tests;
