//! [`ConsumerBuilder`]: what a [`Consumer`] is made of, set before it is built.

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rudder_cluster::loadbalance::{LoadBalance, LoadBalanceRegistry};
use rudder_common::clock::{Clock, SystemClock};
use rudder_common::status::StatusRegistry;

use super::{Consumer, ConsumerInner};

/// Configures a [`Consumer`].
pub struct ConsumerBuilder {
    application: Option<String>,
    host: Option<String>,
    policies: LoadBalanceRegistry,
    clock: Arc<dyn Clock>,
    seed: Option<u64>,
    /// Transports plugged in by URL scheme ([`ConsumerBuilder::transport`]).
    transports: Vec<(String, Arc<dyn crate::transport::Transport>)>,
    transport_shutdown_deadline: Duration,
    /// TLS to every dubbo:// and tri:// provider ([`ConsumerBuilder::tls`]).
    tls: Option<crate::TlsClient>,
    #[cfg(feature = "zookeeper")]
    config_center: Option<String>,
    #[cfg(feature = "zookeeper")]
    registry_idle_timeout: Duration,
    #[cfg(feature = "zookeeper")]
    registry_options: rudder_registry::RegistryOptions,
    #[cfg(feature = "metrics")]
    metrics: Option<crate::metrics::MetricsConfig>,
}

/// How long a registry session no reference uses stays open, unless configured.
#[cfg(feature = "zookeeper")]
const DEFAULT_REGISTRY_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

impl ConsumerBuilder {
    pub(super) fn new() -> ConsumerBuilder {
        ConsumerBuilder {
            application: None,
            host: None,
            policies: LoadBalanceRegistry::with_builtins(),
            clock: Arc::new(SystemClock),
            seed: None,
            transports: Vec::new(),
            transport_shutdown_deadline: crate::transport::PLUGGED_SHUTDOWN_DEADLINE,
            tls: None,
            #[cfg(feature = "zookeeper")]
            config_center: None,
            #[cfg(feature = "zookeeper")]
            registry_idle_timeout: DEFAULT_REGISTRY_IDLE_TIMEOUT,
            #[cfg(feature = "zookeeper")]
            registry_options: rudder_registry::RegistryOptions::default(),
            #[cfg(feature = "metrics")]
            metrics: None,
        }
    }

    /// The application name references register under (Dubbo's `<dubbo:application name>`).
    pub fn application(mut self, name: &str) -> Self {
        self.application = Some(name.to_owned());
        self
    }

    /// The address this consumer registers under and routing rules read as its `host` (a condition
    /// `host = 10.20.153.10 => ...`, a configurator's `addresses`). Without it, Dubbo's choice:
    /// `DUBBO_IP_TO_REGISTRY`, else this machine's first non-loopback address
    /// ([`rudder_common::net::consumer_host`]).
    ///
    /// ```
    /// let consumer = rudder::Consumer::builder().host("10.20.153.10").build();
    /// assert_eq!(consumer.host(), Some("10.20.153.10"));
    /// ```
    pub fn host(mut self, host: &str) -> Self {
        self.host = Some(host.trim().to_owned());
        self
    }

    /// Registers a load-balance strategy under `name`, for `loadbalance=name` on providers or references
    /// (Dubbo's `LoadBalance` SPI). Replaces a built-in of the same name.
    pub fn loadbalance_policy(mut self, name: &str, policy: Arc<dyn LoadBalance>) -> Self {
        self.policies.register(name, policy);
        self
    }

    /// Reads time from `clock` (warmup, windows; tests and simulations).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Makes every reference's random choices reproducible from `seed`.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Calls the providers whose URL scheme is `scheme` through `transport` (replacing the built-in one
    /// for `dubbo` or `tri`): an in-memory transport for your tests, a protocol rudder does not speak.
    /// Each provider's [`Endpoint`](crate::transport::Endpoint) is made once, on its first call, and the
    /// transport's connections are closed for providers that left every reference and on
    /// [`Consumer::shutdown`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use rudder::transport::{Endpoint, Transport};
    /// use rudder::{Consumer, DubboUrl, RpcResponse, Value};
    ///
    /// /// Answers every call with "hi", without I/O.
    /// #[derive(Debug)]
    /// struct Canned;
    ///
    /// impl Transport for Canned {
    ///     fn endpoint(&self, _: &DubboUrl) -> Endpoint {
    ///         Endpoint::from_fn(|_| async { Ok(RpcResponse::from_value(Value::from("hi"))) })
    ///     }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let consumer = Consumer::builder().transport("mem", Arc::new(Canned)).build();
    /// let greeter = consumer
    ///     .reference("com.acme.Greeter")
    ///     .provider("mem://10.0.0.1:1/com.acme.Greeter")
    ///     .build()
    ///     .await?;
    /// assert_eq!(greeter.call::<Value, _>("sayHello", &[], vec![]).await?, Value::from("hi"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn transport(
        mut self,
        scheme: &str,
        transport: Arc<dyn crate::transport::Transport>,
    ) -> Self {
        self.transports.retain(|(s, _)| s != scheme);
        self.transports.push((scheme.to_owned(), transport));
        self
    }

    /// How long [`Consumer::shutdown`] waits for the transports plugged in with
    /// [`ConsumerBuilder::transport`] to close, all together (default
    /// [`PLUGGED_SHUTDOWN_DEADLINE`](crate::transport::PLUGGED_SHUTDOWN_DEADLINE), 5 s); past it,
    /// shutdown goes on without them and logs a warning naming their schemes.
    ///
    /// ```
    /// use std::time::Duration;
    /// let consumer = rudder::Consumer::builder()
    ///     .transport_shutdown_deadline(Duration::from_millis(500))
    ///     .build();
    /// # drop(consumer);
    /// ```
    pub fn transport_shutdown_deadline(mut self, deadline: Duration) -> Self {
        self.transport_shutdown_deadline = deadline;
        self
    }

    /// Calls every dubbo:// and tri:// provider over TLS (Dubbo's consumer-side `SslConfig`): the
    /// provider's certificate checked against the CA file (or the system's roots), and a client
    /// certificate shown when configured (mutual TLS). A provider that does not speak TLS fails with
    /// [`RpcErrorKind::Tls`](crate::RpcErrorKind::Tls), never silently in plaintext; so does, without
    /// this setting, a provider whose URL says `ssl-enabled=true`. A reference can override it
    /// ([`ReferenceBuilder::tls`](crate::ReferenceBuilder::tls)). See [`TlsConfig`](crate::TlsConfig)
    /// and the guide's docs/tls.md.
    ///
    /// ```
    /// use rudder::{Consumer, TlsConfig};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = std::env::temp_dir().join(format!("rudder-tls-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// # let ca = rcgen::generate_simple_self_signed(vec!["localhost".into()])?;
    /// # std::fs::write(dir.join("ca.pem"), ca.cert.pem())?;
    /// let tls = TlsConfig::ca_file(dir.join("ca.pem")).load()?; // files are read (and checked) here
    /// let consumer = Consumer::builder().application("shop").tls(tls).build();
    /// # drop(consumer);
    /// # Ok(())
    /// # }
    /// ```
    pub fn tls(mut self, tls: crate::TlsClient) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Reads governance rules (configurators, tag and condition rules) from this ZooKeeper instead of
    /// each registry (Dubbo's `<dubbo:config-center address>`); its `group` is the namespace, as a
    /// registry's is: `zookeeper://10.0.0.5:2181?group=governance` reads `/governance/config/dubbo`.
    /// Without it, every registry doubles as its own config center, as in Dubbo.
    #[cfg(feature = "zookeeper")]
    pub fn config_center(mut self, url: &str) -> Self {
        self.config_center = Some(url.to_owned());
        self
    }

    /// How long a ZooKeeper session that no reference uses any more stays open before it is closed
    /// (default 30 s): long enough that a reference rebuilt at once (a redeploy, a retry loop) reuses
    /// it, short enough that a consumer whose references come and go does not keep a session per
    /// registry it ever used. Dubbo keeps every registry until the application stops.
    ///
    /// ```
    /// use std::time::Duration;
    /// let consumer = rudder::Consumer::builder()
    ///     .registry_idle_timeout(Duration::from_secs(5))
    ///     .build();
    /// assert_eq!(consumer.diagnostics().registry_sessions(), 0);
    /// ```
    #[cfg(feature = "zookeeper")]
    pub fn registry_idle_timeout(mut self, idle: Duration) -> Self {
        self.registry_idle_timeout = idle;
        self
    }

    /// How long to wait for each registry's ZooKeeper and how fast to retry when it is gone (default:
    /// [`RegistryOptions::default`](rudder_registry::RegistryOptions), a 10 s connect timeout); applies
    /// to every registry session the consumer opens.
    ///
    /// ```
    /// use std::time::Duration;
    /// use rudder::RegistryOptions;
    ///
    /// let consumer = rudder::Consumer::builder()
    ///     .registry_options(RegistryOptions::default().with_connect_timeout(Duration::from_secs(3)))
    ///     .build();
    /// # drop(consumer);
    /// ```
    #[cfg(feature = "zookeeper")]
    pub fn registry_options(mut self, options: rudder_registry::RegistryOptions) -> Self {
        self.registry_options = options;
        self
    }

    /// Keeps Prometheus metrics of every call (feature `metrics`); read them through
    /// [`Consumer::metrics`]. See [`crate::metrics`] for the metric names.
    #[cfg(feature = "metrics")]
    pub fn metrics(mut self, config: crate::metrics::MetricsConfig) -> Self {
        self.metrics = Some(config);
        self
    }

    /// Builds the consumer. Nothing is opened until a reference needs it.
    pub fn build(self) -> Consumer {
        let protocol = crate::protocols::Protocols::with_plugged(
            self.application.as_deref(),
            self.transports,
            self.tls,
        )
        .with_shutdown_deadline(self.transport_shutdown_deadline);
        #[cfg(feature = "zookeeper")]
        let metadata_client = crate::metadata_client::MetadataClient::new(protocol.clone());
        Consumer {
            inner: Arc::new(ConsumerInner {
                application: self.application,
                host: match self.host {
                    Some(host) => Ok(host),
                    None => rudder_common::net::consumer_host(),
                },
                #[cfg(feature = "zookeeper")]
                registries: crate::registry::Registries::new(
                    self.config_center,
                    self.registry_idle_timeout,
                    self.registry_options,
                    Arc::new(metadata_client.clone()),
                ),
                #[cfg(feature = "zookeeper")]
                metadata_calls: Arc::clone(metadata_client.counts()),
                protocol,
                statuses: Arc::new(StatusRegistry::default()),
                policies: self.policies,
                clock: self.clock,
                seed: self.seed,
                #[cfg(feature = "metrics")]
                metrics: self
                    .metrics
                    .as_ref()
                    .map(crate::metrics::MetricsConfig::recorder),
                directories: Mutex::new(Vec::new()),
                #[cfg(feature = "zookeeper")]
                prune_queue: crate::prune::PruneQueue::default(),
                shut_down: AtomicBool::new(false),
            }),
        }
    }
}

impl fmt::Debug for ConsumerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConsumerBuilder")
            .field("application", &self.application)
            .field("policies", &self.policies)
            .finish_non_exhaustive()
    }
}
