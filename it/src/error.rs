//! Why the harness could not give a test its ZooKeeper.

use std::time::Duration;

/// What the set-up hint says; every Docker-related failure repeats it.
const SETUP_HINT: &str = "run scripts/it-setup.sh (starts Docker and builds the ZooKeeper image)";

/// A failure to start, stop or reach the ZooKeeper a test asked for.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// No Docker engine answers, so testcontainers cannot work at all.
    #[error("no Docker engine answers ({reason}): {SETUP_HINT}")]
    DockerUnavailable {
        /// What the Docker client reported.
        reason: String,
    },
    /// The locally built image is absent; the harness never pulls it, since no registry has it.
    #[error("image {image} is not built: {SETUP_HINT}")]
    ImageMissing {
        /// The image that was asked for.
        image: String,
    },
    /// Docker refused or failed to run the container (engine down, image missing, ...).
    #[error("could not start ZooKeeper from image {image}: {source}; {SETUP_HINT}")]
    Start {
        /// The image that was asked for.
        image: String,
        /// What testcontainers reported.
        #[source]
        source: testcontainers::TestcontainersError,
    },
    /// A stop, start, pause or unpause of a running container failed.
    #[error("docker could not {action} the ZooKeeper container: {source}")]
    Control {
        /// The operation that failed, e.g. "pause".
        action: &'static str,
        /// What testcontainers reported.
        #[source]
        source: testcontainers::TestcontainersError,
    },
    /// No loopback port could be reserved for the server.
    #[error("could not reserve a loopback port: {0}")]
    NoFreePort(#[source] std::io::Error),
    /// The server did not answer `srvr` on its port in time.
    #[error("ZooKeeper on 127.0.0.1:{port} did not serve within {waited:?}")]
    NotServing {
        /// The client port probed.
        port: u16,
        /// How long the harness waited.
        waited: Duration,
    },
    /// A Dubbo peer process could not be started or did not report itself ready.
    #[error("Dubbo peer {peer}: {reason} (build it with scripts/peers/build-*.sh)")]
    Peer {
        /// Which peer.
        peer: String,
        /// What went wrong.
        reason: String,
    },
    /// Preparing a secured server (certificates, JAAS file) failed.
    #[error("secure ZooKeeper set-up: could not {what}")]
    Setup {
        /// What the harness was doing.
        what: String,
        /// The I/O error, if any.
        #[source]
        source: Option<std::io::Error>,
    },
}
