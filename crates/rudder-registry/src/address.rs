//! The registry address: which ZooKeeper servers, which root, which credentials.
//!
//! rudder reads the same registry URL a Dubbo application is configured with,
//! `zookeeper://[user:password@]host:port[?backup=host:port,host:port][&group=dubbo][&chroot=/path]`:
//!
//! * `backup` lists more servers; the connect string is the main address followed by them.
//! * `group` is Dubbo's registry group, the root node of the layout (default `dubbo`, so `/dubbo`).
//! * `chroot` (or `zk.chroot`) is a ZooKeeper chroot. rudder prefixes it to every path it touches and
//!   creates it when missing, so `chroot=/prod` gives `/prod/dubbo/<interface>/providers`: the same nodes a
//!   Java client configured with the connect string `host:port/prod` sees. The URL path is ignored,
//!   because Dubbo puts the registry service name there (`/org.apache.dubbo.registry.RegistryService`).
//! * `user:password` becomes ZooKeeper `digest` authentication, as Dubbo's Curator client does. The
//!   password is kept out of `Debug`, `Display` and every error message.
//!
//! # Credentials with special characters
//!
//! The credentials are read before the rest of the URL is split into host, path and query, so a password
//! may hold `/`, `?`, `:` or `@`: they run to the last `@` that comes before the query's first `=`
//! (`zookeeper://app:a/b?c@10.0.0.1:2181` is user `app`, password `a/b?c`). A password that holds `?`
//! followed by `=` must be percent-encoded (`%3F`, `%3D`); such a URL is otherwise refused for a bad
//! host, without the password in the message. Both user and password are
//! percent-decoded (`%XX`; `+` stays `+`), so `p%40ss` is `p@ss`. This is one difference from Dubbo Java,
//! whose URL parser splits the query off first and takes `%XX` in a password literally; a password with a
//! literal `%` followed by two hex digits must be written with `%25` in rudder.
//!
//! ```
//! use rudder_registry::RegistryAddress;
//!
//! let address = RegistryAddress::parse("zookeeper://app:s3cret@10.0.0.1:2181?backup=10.0.0.2:2181,10.0.0.3&chroot=/prod")?;
//! assert_eq!(address.connect_string(), "10.0.0.1:2181,10.0.0.2:2181,10.0.0.3:2181");
//! assert_eq!(address.root(), "/prod/dubbo");
//! assert!(!format!("{address:?}").contains("s3cret"));
//! # Ok::<(), rudder_registry::RegistryError>(())
//! ```

use std::fmt;

use crate::error::RegistryError;
use crate::security::Security;

/// ZooKeeper's default client port.
const DEFAULT_PORT: u16 = 2181;

/// A parsed registry URL.
#[derive(Clone)]
pub struct RegistryAddress {
    hosts: Vec<String>,
    root: String,
    /// Where application instances live: `<chroot>/services`, or `<chroot>/<group>` when the URL
    /// names a group (Dubbo's `ZookeeperServiceDiscovery.getRootPath`).
    instance_root: String,
    username: Option<String>,
    password: Option<String>,
    /// `enable-empty-protection` (see the `empty_push` module).
    empty_protection: bool,
    security: Security,
}

impl RegistryAddress {
    /// Reads a `zookeeper://` registry URL (a bare `host:port` is accepted too).
    ///
    /// # Errors
    /// [`RegistryError::BadRegistryUrl`] for another scheme, a missing host, a bad port or a chroot that
    /// does not start with `/`.
    pub fn parse(text: &str) -> Result<RegistryAddress, RegistryError> {
        // Never echo the input, nor any piece of it: it may hold the password, and a mis-typed URL may
        // put part of it where a host or a parameter is expected.
        let bad = |reason: &str| RegistryError::BadRegistryUrl {
            reason: reason.to_owned(),
        };
        let text = text.trim();
        let (scheme, rest) = split_scheme(text);
        if !scheme.eq_ignore_ascii_case("zookeeper") && !scheme.is_empty() {
            return Err(bad("only zookeeper:// registry URLs are supported"));
        }
        let (userinfo, rest) = split_userinfo(rest);
        let (location, query) = rest.split_once('?').unwrap_or((rest, ""));
        // The path is Dubbo's registry service name (`/org.apache.dubbo.registry.RegistryService`).
        let authority = location.split('/').next().unwrap_or("");
        if authority.is_empty() {
            return Err(bad("no host"));
        }
        let params = parse_query(query);
        let mut hosts =
            vec![checked_host(authority).ok_or_else(|| bad("the host or its port is not valid"))?];
        if let Some(backup) = params.get("backup") {
            for host in backup.split(',').map(str::trim).filter(|h| !h.is_empty()) {
                hosts.push(
                    checked_host(host)
                        .ok_or_else(|| bad("a backup host or its port is not valid"))?,
                );
            }
        }
        let named_group = params
            .get("group")
            .map(|g| g.trim())
            .filter(|g| !g.is_empty());
        let group = named_group.unwrap_or("dubbo");
        let chroot = params
            .get("chroot")
            .or_else(|| params.get("zk.chroot"))
            .map(|c| c.trim())
            .unwrap_or("");
        if !chroot.is_empty() && !chroot.starts_with('/') {
            return Err(bad("the chroot must start with '/'"));
        }
        let mut root = chroot.trim_end_matches('/').to_owned();
        root.push('/');
        let instance_root = format!(
            "{root}{}",
            named_group.unwrap_or("services").trim_matches('/')
        );
        root.push_str(group.trim_matches('/'));
        let (username, password) = match userinfo {
            Some(info) => {
                let (user, pass) = match info.split_once(':') {
                    Some((user, pass)) => (user, Some(pass)),
                    None => (info, None),
                };
                (Some(percent_decode(user)), pass.map(percent_decode))
            }
            None => (None, None),
        };
        let empty_protection = empty_protection_flag(&params)?;
        let security = Security::parse(|key| params.get(key).copied(), username.is_some())?;
        Ok(RegistryAddress {
            hosts,
            root,
            instance_root,
            username,
            password,
            empty_protection,
            security,
        })
    }

    /// `host:port[,host:port...]`, the form ZooKeeper clients take.
    pub fn connect_string(&self) -> String {
        self.hosts.join(",")
    }

    /// The servers, each as `host:port`.
    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    /// The root node of the Dubbo layout, chroot included (`/dubbo` by default).
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The parent of the application nodes of application-level discovery, chroot included
    /// (`/services` by default; `/<group>` for a URL naming a `group`, as Dubbo's
    /// `ZookeeperServiceDiscovery`).
    pub(crate) fn instance_root(&self) -> &str {
        &self.instance_root
    }

    /// Whether an empty provider list keeps the last providers (`enable-empty-protection`).
    pub(crate) fn empty_protection(&self) -> bool {
        self.empty_protection
    }

    /// The `digest` credentials, if the URL has a user and no SASL: `user:password`, or `user` alone
    /// when the URL has no password (Dubbo's `URL.getUserInformation`, which Curator sends as is).
    pub(crate) fn digest(&self) -> Option<Vec<u8>> {
        if self.security.sasl != crate::security::Sasl::None {
            return None;
        }
        let user = self.username.as_deref()?;
        let mut auth = user.as_bytes().to_vec();
        if let Some(password) = &self.password {
            auth.push(b':');
            auth.extend_from_slice(password.as_bytes());
        }
        Some(auth)
    }

    /// What, besides hosts and root, sets one session apart from another: the credentials and the
    /// SASL/TLS settings (`None` for a plain, anonymous session). Hashed, never shown.
    pub(crate) fn session_secrets(&self) -> Option<String> {
        if self.username.is_none() && self.security == Security::default() {
            return None;
        }
        Some(format!(
            "{:?}|{:?}|{:?}",
            self.username, self.password, self.security
        ))
    }

    /// The SASL and TLS settings of the URL.
    pub(crate) fn security(&self) -> &Security {
        &self.security
    }

    /// The URL's user and password, for SASL.
    pub(crate) fn credentials(&self) -> (Option<&str>, Option<&str>) {
        (self.username.as_deref(), self.password.as_deref())
    }

    /// Whether the nodes rudder creates are restricted to these credentials (Dubbo's `CREATOR_ALL_ACL`).
    pub fn has_credentials(&self) -> bool {
        self.username.is_some()
    }
}

/// The registry URL parameter `key` (the last one if repeated), found as [`RegistryAddress::parse`]
/// finds the query (after the credentials).
pub(crate) fn query_parameter<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let (_, rest) = split_scheme(text.trim());
    let (_, rest) = split_userinfo(rest);
    let (_, query) = rest.split_once('?')?;
    parse_query(query).get(key).copied()
}

/// `(scheme, rest)`: the scheme is what comes before the first `://` when it looks like one.
pub(crate) fn split_scheme(text: &str) -> (&str, &str) {
    match text.find("://") {
        Some(i)
            if text[..i]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')) =>
        {
            (&text[..i], &text[i + 3..])
        }
        _ => ("", text),
    }
}

/// `(user:password, rest)`: the credentials run to the last `@` before the query's first `=`, so a
/// password may hold `/`, `?` or `@` (see the module docs).
pub(crate) fn split_userinfo(rest: &str) -> (Option<&str>, &str) {
    let query_key_end = rest
        .find('?')
        .and_then(|q| rest[q..].find('=').map(|e| q + e))
        .unwrap_or(rest.len());
    match rest[..query_key_end].rfind('@') {
        Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
        None => (None, rest),
    }
}

/// The `k=v&...` query, the last of a repeated key winning; a part without `=` is ignored.
pub(crate) fn parse_query(query: &str) -> std::collections::HashMap<&str, &str> {
    query
        .split('&')
        .filter_map(|part| part.split_once('='))
        .map(|(k, v)| (k.trim(), v))
        .collect()
}

/// `%XX` decoded, anything else (an incomplete escape, `+`) kept as written.
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `host:port` with ZooKeeper's default port added when none is given; `None` for an empty host, a
/// port that is not in 1..=65535, or characters no host name or address has.
fn checked_host(host: &str) -> Option<String> {
    let (name, port) = if let Some(v6) = host.strip_prefix('[') {
        let (inside, after) = v6.split_once(']')?;
        if inside.is_empty()
            || !inside
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || matches!(b, b':' | b'.' | b'%'))
        {
            return None;
        }
        match after {
            "" => (&host[..inside.len() + 2], None),
            port => (&host[..inside.len() + 2], Some(port.strip_prefix(':')?)),
        }
    } else {
        let (name, port) = match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        };
        let host_char = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_');
        if name.is_empty() || !name.bytes().all(host_char) {
            return None;
        }
        (name, port)
    };
    let port = match port {
        None => DEFAULT_PORT,
        Some(port) => port.parse::<u16>().ok().filter(|p| *p != 0)?,
    };
    Some(format!("{name}:{port}"))
}

/// `zookeeper://[user@]host:port,...` and the root; never the password.
impl fmt::Display for RegistryAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("zookeeper://")?;
        if let Some(user) = &self.username {
            write!(f, "{user}@")?;
        }
        write!(f, "{}{}", self.connect_string(), self.root)
    }
}

impl fmt::Debug for RegistryAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryAddress")
            .field("hosts", &self.hosts)
            .field("root", &self.root)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .field("security", &self.security)
            .finish()
    }
}

/// The registry URL parameter that turns empty-push protection on (see the `empty_push` module).
pub(crate) const EMPTY_PROTECTION: &str = "enable-empty-protection";

/// `enable-empty-protection` among a registry URL's parameters: `true` or `false` (any case), absent
/// or empty meaning Dubbo's default `false`.
pub(crate) fn empty_protection_flag(
    params: &std::collections::HashMap<&str, &str>,
) -> Result<bool, RegistryError> {
    match params.get(EMPTY_PROTECTION).map(|v| v.trim()) {
        None | Some("") => Ok(false),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(_) => Err(RegistryError::BadRegistryUrl {
            reason: format!("registry {EMPTY_PROTECTION} is neither true nor false"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_to_dubbo_root_and_port_2181() {
        let a = RegistryAddress::parse("zookeeper://127.0.0.1").unwrap();
        assert_eq!(a.connect_string(), "127.0.0.1:2181");
        assert_eq!(a.root(), "/dubbo");
        assert!(a.digest().is_none());
    }

    #[test]
    fn group_sets_the_root_and_path_is_ignored() {
        let a = RegistryAddress::parse(
            "zookeeper://h:1/org.apache.dubbo.registry.RegistryService?group=prod/dubbo",
        )
        .unwrap();
        assert_eq!(a.root(), "/prod/dubbo");
        let b = RegistryAddress::parse("h:1?zk.chroot=/x/&group=/g/").unwrap();
        assert_eq!(b.root(), "/x/g");
    }

    #[test]
    fn credentials_become_digest_and_stay_out_of_debug_and_errors() {
        let a = RegistryAddress::parse("zookeeper://u:p4ss@h:1").unwrap();
        assert_eq!(a.digest().unwrap(), b"u:p4ss");
        assert!(!format!("{a:?}").contains("p4ss"));
        let err = RegistryAddress::parse("etcd://u:p4ss@h:1").unwrap_err();
        assert!(!err.to_string().contains("p4ss"), "{err}");
    }

    #[test]
    fn passwords_may_hold_slash_question_mark_and_at() {
        for (url, password) in [
            ("zookeeper://app:a/b@h:1", "a/b"),
            ("zookeeper://app:a?b@h:1?backup=h2:2", "a?b"),
            (
                "zookeeper://app:a@b/c?d@h:1/org.apache.dubbo.registry.RegistryService?group=g",
                "a@b/c?d",
            ),
            ("zookeeper://app:p%2F%3F%3D%40%23%25@h:1", "p/?=@#%"),
            ("app:x+y%zz@h:1", "x+y%zz"),
            ("zookeeper://app:s#1@h:1", "s#1"),
        ] {
            let a = RegistryAddress::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(
                a.digest().unwrap(),
                format!("app:{password}").as_bytes(),
                "{url}"
            );
            assert_eq!(a.hosts()[0], "h:1", "{url}");
            for shown in [format!("{a}"), format!("{a:?}")] {
                assert!(!shown.contains(password), "{url}: {shown}");
            }
        }
        let a = RegistryAddress::parse("zookeeper://app:a@b/c?d@h:1?group=g").unwrap();
        assert_eq!(a.root(), "/g");
        assert_eq!(a.to_string(), "zookeeper://app@h:1/g");
    }

    #[test]
    fn a_misplaced_password_is_never_echoed() {
        // `?` then `=` in an unencoded password: the password is taken for a host, which is refused.
        for url in [
            "zookeeper://u:Secr3t?x=1@h:1",
            "zookeeper://u:Secr3t=?q=@h:1",
            "zookeeper://h:Secr3t",
            "etcd://u:Secr3t@h:1",
            "zookeeper://h:1?chroot=Secr3t",
            "zookeeper://h:1?backup=Secr3t:x",
        ] {
            let err = RegistryAddress::parse(url).unwrap_err();
            assert!(!err.to_string().contains("Secr3t"), "{url}: {err}");
        }
    }

    #[test]
    fn instances_live_under_services_unless_a_group_is_named() {
        let plain = RegistryAddress::parse("zookeeper://h:1?chroot=/prod").unwrap();
        assert_eq!(plain.instance_root(), "/prod/services");
        let grouped = RegistryAddress::parse("zookeeper://h:1?group=dubbo").unwrap();
        assert_eq!(grouped.instance_root(), "/dubbo");
    }

    #[test]
    fn rejects_relative_chroot_and_missing_host() {
        assert!(RegistryAddress::parse("zookeeper://h:1?chroot=x").is_err());
        assert!(RegistryAddress::parse("zookeeper://:1").is_err());
        assert!(RegistryAddress::parse("zookeeper://h:0").is_err());
        assert!(RegistryAddress::parse("zookeeper://h:70000").is_err());
    }

    #[test]
    fn ipv6_hosts_keep_brackets_and_get_a_port() {
        let a = RegistryAddress::parse("zookeeper://[::1]?backup=[::2]:2182").unwrap();
        assert_eq!(a.connect_string(), "[::1]:2181,[::2]:2182");
    }
}
