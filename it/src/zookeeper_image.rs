//! Which ZooKeeper image to run and how to configure it for a loopback port.

use testcontainers::core::WaitFor;
use testcontainers::{GenericImage, ImageExt};

/// The image built by `scripts/build-zookeeper-image.sh` when nothing else is asked for.
pub const DEFAULT_ZOOKEEPER_IMAGE: &str = "rudder/zookeeper:3.8";

/// Environment variable naming the image to run, e.g. `zookeeper:3.9` on a machine that can
/// pull from Docker Hub.
pub const ZOOKEEPER_IMAGE_ENV: &str = "RUDDER_ZK_IMAGE";

/// Tick of the test server in milliseconds: short, so sessions of about one second are allowed.
const TICK_MILLIS: u32 = 500;
/// Smallest session timeout the server grants; tests that force expiry want it short.
const MIN_SESSION_MILLIS: u32 = 1_000;
/// Largest session timeout the server grants.
const MAX_SESSION_MILLIS: u32 = 60_000;

/// A ZooKeeper image reference and the configuration convention it follows.
///
/// ```
/// use rudder_it::ZooKeeperImage;
///
/// let local = ZooKeeperImage::parse("rudder/zookeeper:3.8");
/// assert_eq!(local.reference(), "rudder/zookeeper:3.8");
/// let official = ZooKeeperImage::parse("zookeeper:3.9");
/// assert_ne!(local.flavour_name(), official.flavour_name());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZooKeeperImage {
    name: String,
    tag: String,
    flavour: Flavour,
}

/// The two start-up conventions the harness knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavour {
    /// The locally built image: `ZK_*` variables, logs on stderr through slf4j-simple.
    Local,
    /// Docker Hub's official image: `ZOO_*` variables, logs on stdout through logback.
    Official,
}

impl ZooKeeperImage {
    /// The image named by `RUDDER_ZK_IMAGE`, or [`DEFAULT_ZOOKEEPER_IMAGE`].
    pub fn from_env() -> Self {
        match std::env::var(ZOOKEEPER_IMAGE_ENV) {
            Ok(reference) if !reference.trim().is_empty() => Self::parse(reference.trim()),
            _ => Self::parse(DEFAULT_ZOOKEEPER_IMAGE),
        }
    }

    /// Splits `name[:tag]`; images under `rudder/` use the local convention, others the
    /// official image's.
    pub fn parse(reference: &str) -> Self {
        // A colon before the last slash belongs to a registry host and port, not a tag.
        let last_slash = reference.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match reference[last_slash..].rfind(':') {
            Some(i) => (
                &reference[..last_slash + i],
                &reference[last_slash + i + 1..],
            ),
            None => (reference, "latest"),
        };
        let flavour = if name.starts_with("rudder/") {
            Flavour::Local
        } else {
            Flavour::Official
        };
        Self {
            name: name.to_owned(),
            tag: tag.to_owned(),
            flavour,
        }
    }

    /// `name:tag`, as Docker spells it.
    pub fn reference(&self) -> String {
        format!("{}:{}", self.name, self.tag)
    }

    /// Whether this is the image `scripts/build-zookeeper-image.sh` builds (never pulled).
    pub fn is_local_build(&self) -> bool {
        self.flavour == Flavour::Local
    }

    /// `"local"` or `"official"`: which configuration convention the harness applies.
    pub fn flavour_name(&self) -> &'static str {
        match self.flavour {
            Flavour::Local => "local",
            Flavour::Official => "official",
        }
    }

    /// A container request serving ZooKeeper on `127.0.0.1:port` over the host network.
    pub(crate) fn request(&self, port: u16) -> testcontainers::ContainerRequest<GenericImage> {
        // Both images log this line once the data tree is loaded and the server takes clients.
        let ready = "Snapshotting";
        match self.flavour {
            Flavour::Local => GenericImage::new(&self.name, &self.tag)
                .with_wait_for(WaitFor::message_on_stderr(ready))
                .with_network("host")
                .with_env_var("ZK_PORT", port.to_string())
                .with_env_var("ZK_TICK_TIME", TICK_MILLIS.to_string())
                .with_env_var("ZK_MIN_SESSION_TIMEOUT", MIN_SESSION_MILLIS.to_string())
                .with_env_var("ZK_MAX_SESSION_TIMEOUT", MAX_SESSION_MILLIS.to_string()),
            // The official entrypoint has no port variable: the client address rides on the
            // dynamic `server.1` line, which a single-server config still reads in standalone
            // mode. Untested here (no registry); see scripts/README-it.md.
            Flavour::Official => GenericImage::new(&self.name, &self.tag)
                .with_wait_for(WaitFor::message_on_either_std(ready))
                .with_network("host")
                .with_env_var(
                    "ZOO_SERVERS",
                    format!("server.1=127.0.0.1:2888:3888;127.0.0.1:{port}"),
                )
                .with_env_var("ZOO_TICK_TIME", TICK_MILLIS.to_string())
                .with_env_var("ZOO_ADMINSERVER_ENABLED", "false")
                .with_env_var("ZOO_4LW_COMMANDS_WHITELIST", "*")
                .with_env_var(
                    "ZOO_CFG_EXTRA",
                    format!(
                        "minSessionTimeout={MIN_SESSION_MILLIS} maxSessionTimeout={MAX_SESSION_MILLIS}"
                    ),
                ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_port_is_not_mistaken_for_a_tag() {
        let image = ZooKeeperImage::parse("localhost:5000/zookeeper");
        assert_eq!(image.reference(), "localhost:5000/zookeeper:latest");
        assert!(!image.is_local_build());
    }

    #[test]
    fn only_rudder_images_are_local_builds() {
        assert!(ZooKeeperImage::parse(DEFAULT_ZOOKEEPER_IMAGE).is_local_build());
        assert!(ZooKeeperImage::parse("rudder/zookeeper:dev").is_local_build());
        assert!(!ZooKeeperImage::parse("zookeeper:3.9").is_local_build());
    }
}
