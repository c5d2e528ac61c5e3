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
//!   password is kept out of `Debug` and every message.
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

use rudder_common::url::DubboUrl;

use crate::error::RegistryError;

/// ZooKeeper's default client port.
const DEFAULT_PORT: u16 = 2181;

/// A parsed registry URL.
#[derive(Clone)]
pub struct RegistryAddress {
    hosts: Vec<String>,
    root: String,
    username: Option<String>,
    password: Option<String>,
}

impl RegistryAddress {
    /// Reads a `zookeeper://` registry URL (a bare `host:port` is accepted too).
    ///
    /// # Errors
    /// [`RegistryError::BadRegistryUrl`] for another scheme, a missing host, a bad port or a chroot that
    /// does not start with `/`.
    pub fn parse(text: &str) -> Result<RegistryAddress, RegistryError> {
        let bad = |reason: String| RegistryError::BadRegistryUrl { reason };
        // Never echo the input: it may hold the password.
        let url = DubboUrl::parse(text).map_err(|e| bad(e.to_string()))?;
        if !matches!(url.protocol(), "zookeeper" | "") {
            return Err(bad(format!(
                "scheme {:?} is not supported (only zookeeper://)",
                url.protocol()
            )));
        }
        if url.host().is_empty() {
            return Err(bad("no host".to_owned()));
        }
        let mut hosts = vec![with_default_port(&url.address())];
        if let Some(backup) = url.parameter("backup") {
            hosts.extend(
                backup
                    .split(',')
                    .map(str::trim)
                    .filter(|h| !h.is_empty())
                    .map(with_default_port),
            );
        }
        let group = url
            .parameter("group")
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .unwrap_or("dubbo");
        let chroot = url
            .parameter("chroot")
            .or_else(|| url.parameter("zk.chroot"))
            .map(str::trim)
            .unwrap_or("");
        if !chroot.is_empty() && !chroot.starts_with('/') {
            return Err(bad(format!("chroot {chroot:?} must start with '/'")));
        }
        let mut root = chroot.trim_end_matches('/').to_owned();
        root.push('/');
        root.push_str(group.trim_matches('/'));
        Ok(RegistryAddress {
            hosts,
            root,
            username: url.username().map(str::to_owned),
            password: url.password().map(str::to_owned),
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

    /// The `digest` credentials (`user:password`), if the URL has a user.
    pub(crate) fn digest(&self) -> Option<Vec<u8>> {
        let user = self.username.as_deref()?;
        let mut auth = user.as_bytes().to_vec();
        auth.push(b':');
        auth.extend_from_slice(self.password.as_deref().unwrap_or("").as_bytes());
        Some(auth)
    }

    /// Whether the nodes rudder creates are restricted to these credentials (Dubbo's `CREATOR_ALL_ACL`).
    pub fn has_credentials(&self) -> bool {
        self.username.is_some()
    }
}

fn with_default_port(host: &str) -> String {
    let has_port = match host.rfind(']') {
        Some(end) => host[end..].contains(':'),
        None => host.contains(':'),
    };
    if has_port {
        host.to_owned()
    } else {
        format!("{host}:{DEFAULT_PORT}")
    }
}

impl fmt::Debug for RegistryAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryAddress")
            .field("hosts", &self.hosts)
            .field("root", &self.root)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<redacted>"))
            .finish()
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
    fn rejects_relative_chroot_and_missing_host() {
        assert!(RegistryAddress::parse("zookeeper://h:1?chroot=x").is_err());
        assert!(RegistryAddress::parse("zookeeper://:1").is_err());
    }

    #[test]
    fn ipv6_hosts_keep_brackets_and_get_a_port() {
        let a = RegistryAddress::parse("zookeeper://[::1]?backup=[::2]:2182").unwrap();
        assert_eq!(a.connect_string(), "[::1]:2181,[::2]:2182");
    }
}
