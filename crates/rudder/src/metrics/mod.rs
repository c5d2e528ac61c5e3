//! Prometheus metrics of a [`Consumer`](crate::Consumer) (cargo feature `metrics`, off by default).
//!
//! Turn them on with [`ConsumerBuilder::metrics`](crate::ConsumerBuilder::metrics); [`Consumer::metrics`](crate::Consumer::metrics)
//! then gives a [`Metrics`] handle that renders the OpenMetrics text exposition ([`Metrics::encode`]),
//! serves it over HTTP ([`Metrics::serve`]: `GET /metrics`), or adds rudder's collector to a
//! prometheus-client registry of your own ([`Metrics::register`]).
//!
//! Most values are read at scrape time from counters rudder keeps anyway (the call statistics that
//! `leastactive` and `shortestresponse` read, the connection census, the registry subscriptions'
//! status); the call path adds one histogram observation and one pick count, both atomics, found
//! without a lock. Series are per provider and method and go away when the consumer prunes the
//! provider (it left every reference's directory), so their number follows the providers in use.
//!
//! | metric | type | labels | what |
//! |---|---|---|---|
//! | `rudder_calls_total` | counter | `provider`, `method` | calls completed (failed ones included) |
//! | `rudder_call_failures_total` | counter | `provider`, `method` | calls that failed: network, timeout, error status (a business exception is an answer, not a failure, as in Dubbo) |
//! | `rudder_calls_in_flight` | gauge | `provider`, `method` | calls sent and not yet answered |
//! | `rudder_outlier_ejections_total` | counter | `provider`, `method` | times outlier ejection (`outlier.*`) took the provider out of picks for the method |
//! | `rudder_outlier_ejected` | gauge | `provider`, `method` | 1 while such an ejection is in force (the consumer's clock), else 0 |
//! | `rudder_call_duration_seconds` | histogram | `provider`, `method` | send to answer; buckets 0.5 ms … 10 s |
//! | `rudder_picks_total` | counter | `strategy` | providers picked, every attempt (retries included), by the `loadbalance` the picked provider's URL names for the method |
//! | `rudder_tls_failures_total` | counter | `reason` | failed TLS connects to providers (whole process), by [`TlsFailure::name`](crate::TlsFailure::name): `unknown-issuer`, `name-mismatch`, `expired`, `not-yet-valid`, `bad-certificate`, `client-cert-required`, `client-cert-refused`, `plaintext-peer`, `provider-requires-tls`, `handshake-timeout`, `handshake` |
//! | `rudder_connections_open` | gauge | | dubbo:// sockets open |
//! | `rudder_connection_tasks` | gauge | | connection tasks (connect, driver, writer) alive |
//! | `rudder_registry_sessions_open` | gauge | | ZooKeeper sessions open (feature `zookeeper`) |
//! | `rudder_registry_generation` | gauge | `registry`, `service`, `subscription` | changes of the provider list seen |
//! | `rudder_registry_listings_total` | counter | same | complete listings read |
//! | `rudder_registry_providers` | gauge | same | providers in the directory |
//! | `rudder_registry_configurators` | gauge | same | configurator rules in effect |
//! | `rudder_registry_malformed_total` | counter | same | registry children that could not be read |
//! | `rudder_registry_rejected` | gauge | same | provider URLs refused since the last full listing |
//! | `rudder_registry_connected` | gauge | same | 1 while the ZooKeeper connection is up |
//! | `rudder_registry_sessions_total` | counter | same | ZooKeeper sessions attached (2 after one expiry) |
//! | `rudder_registry_registered` | gauge | same | 1 while the consumer node is registered |
//! | `rudder_registry_empty_protected` | gauge | same | 1 while `enable-empty-protection` keeps the last providers after an empty list |
//! | `rudder_registry_empty_pushes_kept_total` | counter | same | empty provider lists refused by that protection |
//!
//! `provider` is the provider's identity, `dubbo://host:port/service`; `registry` the registry's servers
//! (never its credentials); `subscription` a number telling apart two references to one service.
//! Past 256 methods on one provider, further methods get no series (their calls still count in the
//! statistics); past 64 strategy names, picks count under `strategy="other"`.
//!
//! ```
//! use rudder::metrics::MetricsConfig;
//! use rudder::{Consumer, Invocation, Value};
//! use rudder_rpc::server::DubboServer;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = DubboServer::bind(0, |_: Invocation| async { Ok(Value::from("hi")) }).await?;
//! let consumer = Consumer::builder().metrics(MetricsConfig::default()).build();
//! let greeter = consumer
//!     .reference("com.acme.Greeter")
//!     .provider(&format!("dubbo://{}/com.acme.Greeter", server.local_addr()))
//!     .build()
//!     .await?;
//! greeter.call::<Value, _>("sayHello", &[], vec![]).await?;
//! let text = consumer.metrics().expect("metrics are on").encode();
//! let provider = format!("dubbo://{}/com.acme.Greeter", server.local_addr());
//! assert!(text.contains(&format!(
//!     "rudder_calls_total{{provider=\"{provider}\",method=\"sayHello\"}} 1\n"
//! )));
//! assert!(text.contains("rudder_picks_total{strategy=\"random\"} 1\n"));
//! # server.shutdown().await;
//! # Ok(())
//! # }
//! ```

mod collector;
mod histogram;
pub(crate) mod recorder;
mod server;
#[cfg(feature = "zookeeper")]
mod subscriptions;
mod ticker;

use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Weak};

/// The prometheus-client registry [`Metrics::register`] adds rudder's collector to: the one type of
/// that crate in rudder's API (use the same version of prometheus-client, 0.26, for your own metrics).
pub use prometheus_client::registry::Registry;
pub use server::MetricsServer;
pub use ticker::{ManualTicker, SystemTicker, Ticker};

pub(crate) use collector::ConsumerGauges;
use collector::RudderCollector;
use recorder::Recorder;
#[cfg(feature = "zookeeper")]
pub(crate) use subscriptions::SubscriptionSample;

/// How a consumer's metrics are kept.
#[derive(Debug, Clone)]
pub struct MetricsConfig {
    ticker: Arc<dyn Ticker>,
}

impl Default for MetricsConfig {
    fn default() -> MetricsConfig {
        MetricsConfig {
            ticker: Arc::new(SystemTicker::default()),
        }
    }
}

impl MetricsConfig {
    /// Times calls with `ticker` instead of the system's monotonic clock (tests: exact durations).
    pub fn ticker(mut self, ticker: Arc<dyn Ticker>) -> MetricsConfig {
        self.ticker = ticker;
        self
    }

    pub(crate) fn recorder(&self) -> Arc<Recorder> {
        Arc::new(Recorder::new(Arc::clone(&self.ticker)))
    }
}

/// A handle on a consumer's metrics. Cheap to clone; it does not keep the consumer alive (once the
/// consumer is gone, only the call series and picks recorded so far remain).
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    collector: Arc<RudderCollector>,
}

impl Metrics {
    pub(crate) fn new(recorder: Arc<Recorder>, consumer: Weak<dyn ConsumerGauges>) -> Metrics {
        let collector = Arc::new(RudderCollector { recorder, consumer });
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Arc::clone(&collector)));
        Metrics {
            registry: Arc::new(registry),
            collector,
        }
    }

    /// The OpenMetrics text exposition of every metric, ending in `# EOF`.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail; the collector itself never reports an error.
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::warn!(%error, "metrics: encoding failed");
        }
        text
    }

    /// Adds rudder's collector to `registry` (yours, with your own metrics, prefix or labels).
    pub fn register(&self, registry: &mut Registry) {
        registry.register_collector(Box::new(Arc::clone(&self.collector)));
    }

    /// Serves [`Metrics::encode`] at `GET /metrics` on `addr` until the returned server is dropped or
    /// shut down. Port 0 picks a free port ([`MetricsServer::local_addr`] tells which).
    ///
    /// # Errors
    /// When the address cannot be bound.
    pub async fn serve(&self, addr: SocketAddr) -> std::io::Result<MetricsServer> {
        MetricsServer::bind(self.clone(), addr).await
    }
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics")
            .field("collector", &self.collector)
            .finish_non_exhaustive()
    }
}
