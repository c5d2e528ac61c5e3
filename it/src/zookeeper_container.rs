//! A ZooKeeper server in a Docker container, controllable from a test.

use std::time::Duration;

use testcontainers::bollard;
use testcontainers::core::client::docker_client_instance;
use testcontainers::runners::AsyncRunner;
use testcontainers::{ContainerAsync, GenericImage, ImageExt};

use crate::error::HarnessError;
use crate::loopback;
use crate::zookeeper_image::ZooKeeperImage;
use crate::zookeeper_secure::ServerExtras;

/// How long a fresh container may take to log readiness (a cold JVM on a busy 2-core machine).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a restarted or unpaused server may take to answer `srvr` as serving.
const SERVE_TIMEOUT: Duration = Duration::from_secs(30);
/// Starts tried, each on its own port, before [`ZooKeeperContainer::start`] gives up.
const START_ATTEMPTS: u32 = 3;
/// Gap between two `srvr` probes while waiting for the server to serve.
const PROBE_INTERVAL: Duration = Duration::from_millis(100);
/// Grace period docker gives ZooKeeper to exit on SIGTERM before killing it.
const STOP_GRACE_SECS: i32 = 5;

/// A running ZooKeeper listening on `127.0.0.1`, removed when dropped.
///
/// The container uses host networking, so the port stays the same across
/// [`stop`](Self::stop) / [`start_again`](Self::start_again) and clients can reconnect to the
/// same connect string, as they would to a real server coming back.
///
/// ```no_run
/// # async fn demo() -> Result<(), rudder_it::HarnessError> {
/// use rudder_it::ZooKeeperContainer;
///
/// let zookeeper = ZooKeeperContainer::start().await?;
/// let connect = zookeeper.connect_string(); // "127.0.0.1:PORT"
/// zookeeper.stop().await?; // ZooKeeper is down...
/// zookeeper.start_again().await?; // ...and back on the same port, with its data.
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ZooKeeperContainer {
    container: ContainerAsync<GenericImage>,
    image: ZooKeeperImage,
    port: u16,
}

impl ZooKeeperContainer {
    /// Starts the image named by `RUDDER_ZK_IMAGE` (default `rudder/zookeeper:3.8`) and waits
    /// until it serves clients.
    ///
    /// Fails with a message pointing at `scripts/it-setup.sh` when Docker or the image is
    /// missing.
    pub async fn start() -> Result<Self, HarnessError> {
        Self::start_image(ZooKeeperImage::from_env()).await
    }

    /// Starts a given image and waits until it serves clients.
    pub async fn start_image(image: ZooKeeperImage) -> Result<Self, HarnessError> {
        Self::start_with(image, &ServerExtras::default()).await
    }

    /// Starts a given image with more configuration (a secured server: see
    /// [`SecureZooKeeper`](crate::SecureZooKeeper)) and waits until its plain port serves.
    pub async fn start_with(
        image: ZooKeeperImage,
        extras: &ServerExtras,
    ) -> Result<Self, HarnessError> {
        check_engine_and_image(&image).await?;
        let mut attempt = 1;
        loop {
            match Self::start_on_free_port(&image, extras).await {
                Ok(zookeeper) => return Ok(zookeeper),
                // A port taken between the check and ZooKeeper's bind fails the start (on the
                // host network the server exits); another port is then worth one more try.
                Err(err @ (HarnessError::Start { .. } | HarnessError::NotServing { .. }))
                    if attempt < START_ATTEMPTS =>
                {
                    eprintln!(
                        "ZooKeeper start attempt {attempt} failed, trying another port: {err}"
                    );
                    attempt += 1;
                }
                Err(err) => return Err(err),
            }
        }
    }

    async fn start_on_free_port(
        image: &ZooKeeperImage,
        extras: &ServerExtras,
    ) -> Result<Self, HarnessError> {
        let port = loopback::free_port()
            .await
            .map_err(HarnessError::NoFreePort)?;
        let container = extras
            .apply(image.request(port))
            .with_startup_timeout(STARTUP_TIMEOUT)
            .start()
            .await
            .map_err(|source| HarnessError::Start {
                image: image.reference(),
                source,
            })?;
        let zookeeper = Self {
            container,
            image: image.clone(),
            port,
        };
        // The readiness line comes a moment before the server accepts sessions.
        zookeeper.wait_until_serving(SERVE_TIMEOUT).await?;
        Ok(zookeeper)
    }

    /// `127.0.0.1:PORT`, ready for a ZooKeeper client.
    pub fn connect_string(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The client port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The image this container runs.
    pub fn image(&self) -> &ZooKeeperImage {
        &self.image
    }

    /// Stops the server (SIGTERM, then SIGKILL after a few seconds). Connections drop and the
    /// port closes; data and sessions persist in the container for [`start_again`](Self::start_again).
    pub async fn stop(&self) -> Result<(), HarnessError> {
        self.container
            .stop_with_timeout(Some(STOP_GRACE_SECS))
            .await
            .map_err(|source| HarnessError::Control {
                action: "stop",
                source,
            })
    }

    /// Starts a stopped container again, on the same port, and waits until it serves.
    pub async fn start_again(&self) -> Result<(), HarnessError> {
        self.container
            .start()
            .await
            .map_err(|source| HarnessError::Control {
                action: "start",
                source,
            })?;
        self.wait_until_serving(SERVE_TIMEOUT).await
    }

    /// Freezes the server process: connections stay open but nothing answers, so clients see
    /// timeouts and, past their session timeout, session expiry.
    pub async fn pause(&self) -> Result<(), HarnessError> {
        self.container
            .pause()
            .await
            .map_err(|source| HarnessError::Control {
                action: "pause",
                source,
            })
    }

    /// Thaws a paused server and waits until it serves again.
    pub async fn unpause(&self) -> Result<(), HarnessError> {
        self.container
            .unpause()
            .await
            .map_err(|source| HarnessError::Control {
                action: "unpause",
                source,
            })?;
        self.wait_until_serving(SERVE_TIMEOUT).await
    }

    /// Polls `srvr` until the server reports a mode, for at most `timeout`.
    pub async fn wait_until_serving(&self, timeout: Duration) -> Result<(), HarnessError> {
        let port = self.port;
        let poll = async {
            let mut ticks = tokio::time::interval(PROBE_INTERVAL);
            loop {
                ticks.tick().await;
                if loopback::serves(port).await {
                    return;
                }
            }
        };
        tokio::time::timeout(timeout, poll)
            .await
            .map_err(|_| HarnessError::NotServing {
                port,
                waited: timeout,
            })
    }
}

/// Fails early, with the set-up hint, when Docker does not answer or the local image is absent.
///
/// Without this check testcontainers would try to pull a missing `rudder/` image from Docker
/// Hub, which cannot have it, and fail with a less helpful network error.
async fn check_engine_and_image(image: &ZooKeeperImage) -> Result<(), HarnessError> {
    let unavailable = |err: &dyn std::fmt::Display| HarnessError::DockerUnavailable {
        reason: err.to_string(),
    };
    let docker = docker_client_instance()
        .await
        .map_err(|err| unavailable(&err))?;
    docker.ping().await.map_err(|err| unavailable(&err))?;
    if !image.is_local_build() {
        return Ok(());
    }
    match docker.inspect_image(&image.reference()).await {
        Ok(_) => Ok(()),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Err(HarnessError::ImageMissing {
            image: image.reference(),
        }),
        Err(err) => Err(unavailable(&err)),
    }
}
