//! The Dubbo URL: how providers, consumers and rules describe themselves in the registry.
//!
//! Every provider in ZooKeeper is one child node whose name is a percent-encoded URL such as
//! `dubbo://10.0.0.7:20880/com.acme.Greeter?methods=sayHello&timestamp=1714144945493&weight=200`.
//! [`DubboUrl`] parses those names, answers parameter lookups with Dubbo 3.3's rules, and writes URLs
//! back in the exact form Java tools read.
//!
//! # Parameter lookup
//!
//! A parameter has two forms: the plain `key`, and the method-scoped `<method>.<key>`
//! (`sayHello.weight=50`). [`DubboUrl::method_parameter`] looks up `<method>.<key>` first, then `key`;
//! `default.<key>` is an alias for `key` that an explicit `key` always beats. This mirrors Dubbo Java's
//! `URLParam.getMethodParameter`, including one quirk kept for identical routing: when the URL lists its
//! methods (`methods=a,b`) and the method name is not a substring of that list, method-scoped values are
//! ignored.
//!
//! # Identity
//!
//! [`DubboUrl::identity`] is `protocol://[user[:password]@]host:port/path` with no parameters. Per-provider
//! state (round-robin counters, call statistics) is keyed by it, so a weight change in the registry keeps
//! that state, exactly as in Dubbo.
//!
//! # Examples
//!
//! ```
//! use rudder_common::url::DubboUrl;
//!
//! let url = DubboUrl::parse(
//!     "dubbo://10.0.0.7:20880/com.acme.Greeter?group=blue&version=1.0&weight=200&sayHello.weight=50",
//! )?;
//! assert_eq!(url.address(), "10.0.0.7:20880");
//! assert_eq!(url.service_key(), "blue/com.acme.Greeter:1.0");
//! assert_eq!(url.method_parameter("sayHello", "weight"), Some("50"));
//! assert_eq!(url.method_parameter("other", "weight"), Some("200"));
//! # Ok::<(), rudder_common::url::UrlError>(())
//! ```

mod codec;
mod glob;
pub mod merge;
mod params;
mod parse;
pub mod ranges;
pub mod transport;

use std::fmt;

pub use codec::{java_url_decode, java_url_encode};
pub use glob::is_match_glob_pattern;
pub(crate) use params::Params;

/// Why a URL string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// The input was empty or blank.
    #[error("empty URL")]
    Empty,
    /// The input starts with `://`.
    #[error("URL has `://` but no protocol before it")]
    MissingProtocol,
    /// The protocol contains characters no scheme may contain.
    #[error("invalid protocol {0:?}")]
    BadProtocol(String),
    /// The port is not a number in 0..=65535.
    #[error("invalid port {0:?}")]
    BadPort(String),
    /// The host could not be read (for example an unclosed IPv6 bracket).
    #[error("invalid host {0:?}")]
    BadHost(String),
    /// A `%` escape is not followed by two hex digits.
    #[error("invalid percent escape at byte {offset}")]
    BadEscape {
        /// Byte offset of the `%`.
        offset: usize,
    },
    /// Percent-decoding produced bytes that are not UTF-8.
    #[error("percent-decoded URL is not UTF-8")]
    NotUtf8,
    /// A numeric parameter holds something that is not a number.
    #[error("parameter {key:?} is not a number: {value:?}")]
    BadNumber {
        /// The parameter key as written (e.g. `sayHello.weight`).
        key: String,
        /// The value found.
        value: String,
    },
}

/// A parsed Dubbo URL: `protocol://[user[:password]@]host[:port]/path?k=v&...`.
///
/// Cheap to clone relative to parsing; immutable except through the `with_*` builders.
///
/// ```
/// use rudder_common::url::DubboUrl;
/// let u = DubboUrl::parse("dubbo://127.0.0.1:20880/com.acme.Greeter?timeout=3000")?;
/// assert_eq!(u.parameter("timeout"), Some("3000"));
/// # Ok::<(), rudder_common::url::UrlError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct DubboUrl {
    protocol: String,
    username: Option<String>,
    password: Option<String>,
    host: String,
    port: u16,
    path: String,
    params: Params,
}

impl DubboUrl {
    /// Parses the plain string form (as `toFullString` writes it, or as a user types it).
    ///
    /// Tolerates what real providers write: no path (the service then comes from `interface=` or
    /// `service=`), empty values, repeated keys (the last wins), parts without `=`, unknown keys.
    ///
    /// # Errors
    /// [`UrlError`] names the part that could not be read; parsing never panics.
    pub fn parse(s: &str) -> Result<DubboUrl, UrlError> {
        parse::parse_plain(s)
    }

    /// Parses a registry node name: the URL percent-encoded as a whole (`dubbo%3A%2F%2F...`).
    ///
    /// ```
    /// use rudder_common::url::DubboUrl;
    /// let u = DubboUrl::from_node_name("dubbo%3A%2F%2F10.0.0.1%3A20880%2FS%3Fweight%3D7")?;
    /// assert_eq!(u.parameter("weight"), Some("7"));
    /// # Ok::<(), rudder_common::url::UrlError>(())
    /// ```
    ///
    /// # Errors
    /// A bad `%` escape, non-UTF-8 content, or any [`DubboUrl::parse`] error.
    pub fn from_node_name(name: &str) -> Result<DubboUrl, UrlError> {
        DubboUrl::parse(&java_url_decode(name)?)
    }

    /// Parses either form: plain when the text contains `://`, percent-encoded otherwise.
    ///
    /// # Errors
    /// As [`DubboUrl::parse`] and [`DubboUrl::from_node_name`].
    pub fn parse_any(s: &str) -> Result<DubboUrl, UrlError> {
        if s.contains("://") {
            DubboUrl::parse(s)
        } else {
            DubboUrl::from_node_name(s)
        }
    }

    /// Builds a URL from its parts, with no parameters.
    ///
    /// ```
    /// use rudder_common::url::DubboUrl;
    /// let u = DubboUrl::new("consumer", "10.0.0.9", 0, "com.acme.Greeter").with_parameter("side", "consumer");
    /// assert_eq!(u.to_full_string(), "consumer://10.0.0.9/com.acme.Greeter?side=consumer");
    /// ```
    pub fn new(protocol: &str, host: &str, port: u16, path: &str) -> DubboUrl {
        DubboUrl {
            protocol: protocol.to_owned(),
            username: None,
            password: None,
            host: host.to_owned(),
            port,
            path: path.trim_start_matches('/').to_owned(),
            params: Params::default(),
        }
    }

    /// The protocol (`dubbo`, `tri`, `empty`, `override`, ...); empty when the text had none.
    pub fn protocol(&self) -> &str {
        &self.protocol
    }

    /// The user name, if the URL carries credentials.
    pub fn username(&self) -> Option<&str> {
        self.username.as_deref()
    }

    /// The password, if the URL carries credentials. Never printed by `Debug` or `Display`.
    pub fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// The host, without IPv6 brackets.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port; 0 when absent.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The path without its leading `/` (usually the service interface).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// `host:port` (`[v6]:port` for IPv6), or `host` alone when the port is 0. Dubbo's `getAddress`.
    pub fn address(&self) -> String {
        let mut out = String::with_capacity(self.host.len() + 8);
        self.write_address(&mut out);
        out
    }

    fn write_address(&self, out: &mut String) {
        if self.host.contains(':') {
            out.push('[');
            out.push_str(&self.host);
            out.push(']');
        } else {
            out.push_str(&self.host);
        }
        if self.port > 0 {
            out.push(':');
            out.push_str(&self.port.to_string());
        }
    }

    /// The value of `key` exactly as written, without the `default.<key>` fallback (Dubbo's
    /// `getOriginalParameter`, which routers read).
    ///
    /// ```
    /// use rudder_common::url::DubboUrl;
    /// let url = DubboUrl::parse("dubbo://h:1/S?default.timeout=5&weight=7")?;
    /// assert_eq!((url.exact_parameter("weight"), url.exact_parameter("timeout")), (Some("7"), None));
    /// assert_eq!(url.parameter("timeout"), Some("5"));
    /// # Ok::<(), rudder_common::url::UrlError>(())
    /// ```
    pub fn exact_parameter(&self, key: &str) -> Option<&str> {
        self.params.get(key)
    }

    /// The exact value of `key`, falling back to the legacy alias `default.<key>`.
    pub fn parameter(&self, key: &str) -> Option<&str> {
        self.params
            .get(key)
            .or_else(|| self.params.get_dotted("default", key))
    }

    /// `<method>.<key>` alone, if set and non-empty and the method is listed (Dubbo's
    /// `getMethodParameterStrict`): no fallback to `key`.
    pub fn strict_method_parameter(&self, method: &str, key: &str) -> Option<&str> {
        let listed = match self.params.get("methods") {
            Some(methods) if !methods.is_empty() => methods.contains(method),
            _ => true,
        };
        if !listed {
            return None;
        }
        self.params
            .get_dotted(method, key)
            .filter(|v| !v.is_empty())
    }

    /// `<method>.<key>` if set and non-empty, else [`DubboUrl::parameter`]`(key)` (Dubbo 3.3 semantics).
    pub fn method_parameter(&self, method: &str, key: &str) -> Option<&str> {
        self.strict_method_parameter(method, key)
            .or_else(|| self.parameter(key))
    }

    /// [`DubboUrl::method_parameter`] parsed as a number; `Ok(None)` when absent or empty.
    ///
    /// # Errors
    /// [`UrlError::BadNumber`] when the value is not a number of type `T`.
    pub fn method_parameter_number<T: std::str::FromStr>(
        &self,
        method: &str,
        key: &str,
    ) -> Result<Option<T>, UrlError> {
        parse_number(key, self.method_parameter(method, key))
    }

    /// [`DubboUrl::parameter`] parsed as a number; `Ok(None)` when absent or empty.
    ///
    /// # Errors
    /// [`UrlError::BadNumber`] when the value is not a number of type `T`.
    pub fn parameter_number<T: std::str::FromStr>(&self, key: &str) -> Result<Option<T>, UrlError> {
        parse_number(key, self.parameter(key))
    }

    /// All parameters as written, sorted by key.
    pub fn parameters(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.params.iter()
    }

    /// The service interface: `interface=`, else the path, else `service=` (apache-dubbo Python).
    pub fn service_interface(&self) -> &str {
        match self.params.get("interface").filter(|v| !v.is_empty()) {
            Some(iface) => iface,
            None if !self.path.is_empty() => &self.path,
            None => self.params.get("service").unwrap_or(""),
        }
    }

    /// `[group/]interface[:version]`, Dubbo's `getServiceKey`.
    pub fn service_key(&self) -> String {
        let group = self.parameter("group").unwrap_or("");
        let version = self.parameter("version").unwrap_or("");
        let iface = self.service_interface();
        let mut key = String::with_capacity(group.len() + iface.len() + version.len() + 2);
        if !group.is_empty() {
            key.push_str(group);
            key.push('/');
        }
        key.push_str(iface);
        if !version.is_empty() {
            key.push(':');
            key.push_str(version);
        }
        key
    }

    /// `protocol://[user[:password]@]host[:port]/path`: the key per-provider state lives under.
    pub fn identity(&self) -> String {
        let mut out = String::new();
        self.write_head(&mut out, true);
        out
    }

    fn write_head(&self, out: &mut String, with_user: bool) {
        if !self.protocol.is_empty() {
            out.push_str(&self.protocol);
            out.push_str("://");
        }
        if with_user {
            if let Some(user) = &self.username {
                out.push_str(user);
                if let Some(pass) = &self.password {
                    out.push(':');
                    out.push_str(pass);
                }
                out.push('@');
            }
        }
        self.write_address(out);
        if !self.path.is_empty() {
            out.push('/');
            out.push_str(&self.path);
        }
    }

    /// Dubbo's `toFullString`: credentials included, parameters sorted by key, values not escaped.
    pub fn to_full_string(&self) -> String {
        let mut out = String::with_capacity(64 + self.params.len() * 24);
        self.write_head(&mut out, true);
        self.write_query(&mut out, true);
        out
    }

    fn write_query(&self, out: &mut String, secrets: bool) {
        for (i, (k, v)) in self.params.iter().enumerate() {
            out.push(if i == 0 { '?' } else { '&' });
            out.push_str(k);
            out.push('=');
            if secrets || !crate::redact::is_secret_parameter(k) {
                out.push_str(v);
            } else {
                out.push_str(crate::redact::MASK);
            }
        }
    }

    /// The registry node name: `URL.encode(toFullString())`.
    pub fn to_node_name(&self) -> String {
        java_url_encode(&self.to_full_string())
    }

    /// A copy with `key` set to `value`.
    pub fn with_parameter(mut self, key: &str, value: &str) -> DubboUrl {
        self.params.set(key, value);
        self
    }

    /// A copy without `key`.
    pub fn without_parameter(mut self, key: &str) -> DubboUrl {
        self.params.remove(key);
        self
    }

    /// A copy with credentials set.
    pub fn with_credentials(mut self, username: &str, password: Option<&str>) -> DubboUrl {
        self.username = Some(username.to_owned());
        self.password = password.map(str::to_owned);
        self
    }
}

fn parse_number<T: std::str::FromStr>(
    key: &str,
    value: Option<&str>,
) -> Result<Option<T>, UrlError> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => v.parse().map(Some).map_err(|_| UrlError::BadNumber {
            key: key.to_owned(),
            value: v.to_owned(),
        }),
    }
}

/// `Display` is Dubbo's `toString`: parameters included, credentials left out, and the value of a
/// secret parameter (`token`, `password`, ...: [`crate::redact::is_secret_parameter`]) shown as `***`.
impl fmt::Display for DubboUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.write_head(&mut out, false);
        self.write_query(&mut out, false);
        f.write_str(&out)
    }
}

/// `Debug` never shows the password.
impl fmt::Debug for DubboUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DubboUrl({self}")?;
        if self.username.is_some() {
            f.write_str(" with credentials")?;
        }
        f.write_str(")")
    }
}

impl std::str::FromStr for DubboUrl {
    type Err = UrlError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DubboUrl::parse_any(s)
    }
}

#[cfg(test)]
mod tests;
