//! The `nacos://` registry URL, read as Dubbo 3.3 reads it.
//!
//! `nacos://[user:password@]host:port[,host:port][?backup=host:port,...][&namespace=dev][&group=G]...`
//!
//! * servers: the authority (comma-separated, as Dubbo's `NacosNamingServiceUtils` passes the address to
//!   the Nacos client) and `backup`; port 8848 when none is given;
//! * `namespace`: the Nacos namespace id of discovery (default: Nacos's `public`);
//! * `group`: the Nacos group services are registered and read in (default `DEFAULT_GROUP`);
//! * `username`/`password` (or the URL's user info): Nacos authentication;
//! * `timeout` (milliseconds): the connect timeout, over the caller's;
//! * `enable-empty-protection` (`false`): keep the last providers when a push empties a service;
//! * `register-consumer-url` (`false`): register the consumer as an instance, as Dubbo does only then.
//!
//! The config centre the registry doubles as (Dubbo's `registryAsConfigCenter`) reads rules in the Nacos
//! namespace named by `namespace`, else in Nacos's default namespace **`public`**, the same namespace
//! as discovery: Dubbo's config centre defaults its namespace to `dubbo` (`ConfigCenterConfig`), but
//! `NacosDynamicConfigurationFactory` drops a `dubbo` namespace before it makes the Nacos client
//! ("Nacos use empty string as default name space"). A Java 3.3.6 consumer was seen doing so against
//! rnacos (`it/tests/it/nacos_routing_parity.rs`). The factory drops a `dubbo` the URL names too, so
//! with `namespace=dubbo` services are found in `dubbo` and rules are read in `public`, as Dubbo does.

use std::fmt;
use std::time::Duration;

use crate::address::{
    empty_protection_flag, parse_query, percent_decode, split_scheme, split_userinfo,
};
use crate::error::RegistryError;

/// Nacos's default client port.
const DEFAULT_PORT: u16 = 8848;
/// Nacos's default group (Dubbo's `Constants.DEFAULT_GROUP` in its Nacos modules).
pub(crate) const DEFAULT_GROUP: &str = "DEFAULT_GROUP";
/// The namespace Dubbo's Nacos config centre replaces by `public` (`NacosDynamicConfigurationFactory`).
const DUBBO_NAMESPACE: &str = "dubbo";

/// A parsed `nacos://` URL. The password never reaches `Debug` or `Display`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct NacosAddress {
    pub(crate) servers: Vec<String>,
    pub(crate) namespace: String,
    pub(crate) group: String,
    /// Whether the URL names a group (`DEFAULT_GROUP` too): Dubbo's metadata report then writes to
    /// that group, and to `dubbo` otherwise (`nacos::definitions`).
    pub(crate) group_named: bool,
    pub(crate) username: Option<String>,
    pub(crate) password: Option<String>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) empty_protection: bool,
    pub(crate) register_consumer: bool,
}

impl NacosAddress {
    /// Reads a `nacos://` URL; never echoes any part of it in an error (it may hold the password).
    pub(crate) fn parse(text: &str) -> Result<NacosAddress, RegistryError> {
        let bad = |reason: String| RegistryError::BadRegistryUrl { reason };
        let (scheme, rest) = split_scheme(text.trim());
        if !scheme.eq_ignore_ascii_case("nacos") {
            return Err(bad("not a nacos:// URL".to_owned()));
        }
        let (userinfo, rest) = split_userinfo(rest);
        let (location, query) = rest.split_once('?').unwrap_or((rest, ""));
        let authority = location.split('/').next().unwrap_or("");
        let params = parse_query(query);
        let mut servers = Vec::new();
        let backup = params.get("backup").copied().unwrap_or("");
        for host in authority
            .split(',')
            .chain(backup.split(','))
            .map(str::trim)
            .filter(|h| !h.is_empty())
        {
            let host = checked_host(host)
                .ok_or_else(|| bad("a Nacos server or its port is not valid".to_owned()))?;
            if !servers.contains(&host) {
                servers.push(host);
            }
        }
        if servers.is_empty() {
            return Err(bad("no Nacos server".to_owned()));
        }
        let name = |key: &str, default: &str| -> Result<String, RegistryError> {
            let value = params.get(key).map_or(default, |v| v.trim());
            let value = if value.is_empty() { default } else { value };
            // Nacos's own rule for namespace ids and groups (letters, digits, `-_.:`), bounded.
            if value.len() > 128
                || !value
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
            {
                return Err(bad(format!(
                    "registry {key} may hold only letters, digits, '-', '_', '.', ':' (at most 128)"
                )));
            }
            Ok(value.to_owned())
        };
        let flag = |key: &str| -> Result<bool, RegistryError> {
            match params.get(key).map(|v| v.trim()) {
                None | Some("") => Ok(false),
                Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
                Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
                Some(_) => Err(bad(format!("registry {key} is neither true nor false"))),
            }
        };
        let timeout = match params.get("timeout").map(|v| v.trim()) {
            None | Some("") => None,
            Some(v) => match v.parse::<u64>() {
                Ok(ms) if (1..=3_600_000).contains(&ms) => Some(Duration::from_millis(ms)),
                _ => {
                    return Err(bad(
                        "registry timeout is not a number of milliseconds in 1..=3600000"
                            .to_owned(),
                    ))
                }
            },
        };
        let (mut username, mut password) = match userinfo {
            Some(info) => {
                let (user, pass) = info.split_once(':').unwrap_or((info, ""));
                (
                    Some(percent_decode(user)).filter(|u| !u.is_empty()),
                    Some(percent_decode(pass)).filter(|p| !p.is_empty()),
                )
            }
            None => (None, None),
        };
        if let Some(user) = params.get("username").filter(|u| !u.is_empty()) {
            username = Some(percent_decode(user));
        }
        if let Some(pass) = params.get("password").filter(|p| !p.is_empty()) {
            password = Some(percent_decode(pass));
        }
        Ok(NacosAddress {
            servers,
            namespace: name("namespace", "")?,
            group: name("group", DEFAULT_GROUP)?,
            group_named: params.get("group").is_some_and(|g| !g.trim().is_empty()),
            username,
            password,
            timeout,
            empty_protection: empty_protection_flag(&params)?,
            register_consumer: flag("register-consumer-url")?,
        })
    }

    /// The config-centre namespace id: the URL's `namespace`, else `""`, Nacos's `public` (see the
    /// module docs): the discovery namespace.
    pub(crate) fn rule_namespace(&self) -> &str {
        if self.namespace == DUBBO_NAMESPACE {
            ""
        } else {
            &self.namespace
        }
    }
}

impl fmt::Display for NacosAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "nacos://{}", self.servers.join(","))?;
        let mut sep = '?';
        if !self.namespace.is_empty() {
            write!(f, "{sep}namespace={}", self.namespace)?;
            sep = '&';
        }
        if self.group_named {
            write!(f, "{sep}group={}", self.group)?;
        }
        Ok(())
    }
}

impl fmt::Debug for NacosAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NacosAddress")
            .field("servers", &self.servers)
            .field("namespace", &self.namespace)
            .field("group", &self.group)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("empty_protection", &self.empty_protection)
            .finish()
    }
}

/// `host:port` with Nacos's default port added; `None` for a bad host or port.
fn checked_host(host: &str) -> Option<String> {
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') || name.starts_with('[') => (name, Some(port)),
        _ => (host, None),
    };
    let host_char = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_');
    let v6 = name.starts_with('[') && name.ends_with(']');
    if name.is_empty() || (!v6 && !name.bytes().all(host_char)) {
        return None;
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(port) => port.parse::<u16>().ok().filter(|p| *p != 0)?,
    };
    Some(format!("{name}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_backup_and_dubbo_s_parameters() {
        let a = NacosAddress::parse(
            "nacos://10.0.0.1:8848,10.0.0.2?backup=10.0.0.3:9848&namespace=dev&group=G1&timeout=3000&enable-empty-protection=true",
        )
        .unwrap();
        assert_eq!(
            a.servers,
            ["10.0.0.1:8848", "10.0.0.2:8848", "10.0.0.3:9848"]
        );
        assert_eq!(a.namespace, "dev");
        assert_eq!(a.group, "G1");
        assert_eq!(a.timeout, Some(Duration::from_secs(3)));
        assert!(a.empty_protection);
        assert!(!a.register_consumer);
        assert_eq!(a.rule_namespace(), "dev");
        // A `dubbo` namespace is discovery's; Dubbo reads the rules in `public` then.
        let dubbo = NacosAddress::parse("nacos://127.0.0.1:8848?namespace=dubbo").unwrap();
        assert_eq!(
            (dubbo.namespace.as_str(), dubbo.rule_namespace()),
            ("dubbo", "")
        );
        assert_eq!(
            a.to_string(),
            "nacos://10.0.0.1:8848,10.0.0.2:8848,10.0.0.3:9848?namespace=dev&group=G1"
        );
    }

    #[test]
    fn defaults_are_dubbo_s() {
        let a = NacosAddress::parse("nacos://127.0.0.1").unwrap();
        assert_eq!(a.servers, ["127.0.0.1:8848"]);
        assert_eq!(a.namespace, "");
        assert_eq!(a.group, "DEFAULT_GROUP");
        assert!(!a.empty_protection);
        assert_eq!(
            a.rule_namespace(),
            "",
            "public, as Dubbo's Nacos config centre"
        );
        assert_eq!(a.to_string(), "nacos://127.0.0.1:8848");
    }

    #[test]
    fn credentials_are_read_and_never_shown() {
        for url in [
            "nacos://nacos:s3cret@127.0.0.1:8848",
            "nacos://127.0.0.1:8848?username=nacos&password=s3cret",
        ] {
            let a = NacosAddress::parse(url).unwrap();
            assert_eq!(a.username.as_deref(), Some("nacos"));
            assert_eq!(a.password.as_deref(), Some("s3cret"));
            assert!(!format!("{a} {a:?}").contains("s3cret"), "{a:?}");
        }
    }

    #[test]
    fn bad_input_is_refused_without_echo() {
        for (url, says) in [
            ("nacos://:s3cret@?x=1", "no Nacos server"),
            ("nacos://h:0", "port is not valid"),
            ("nacos://h:1?namespace=a/b", "namespace may hold only"),
            ("nacos://h:1?timeout=-1", "timeout"),
            (
                "nacos://h:1?enable-empty-protection=yes",
                "neither true nor false",
            ),
        ] {
            let error = NacosAddress::parse(url).unwrap_err().to_string();
            assert!(error.contains(says), "{url}: {error}");
            assert!(!error.contains("s3cret"), "{error}");
        }
    }
}
