//! [`DubboProtocol`]: calls to Dubbo providers over `dubbo://` with hessian2.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use dashmap::DashMap;
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use rudder_common::status::ProviderStatus;
use rudder_common::url::DubboUrl;
use tokio::sync::watch;

use crate::backoff::Backoff;
use crate::census::Census;
use crate::pool::{PoolContext, ProviderPool};
use crate::response::RpcResponse;
use crate::settings;
use rudder_common::status::record::RecordCall;

/// The dubbo:// client: one multiplexed TCP connection per provider address (more with the URL
/// parameter `connections`), opened on first use and reopened with backoff after a failure.
///
/// Clones are cheap and share the connections. The URL parameters read are listed in the crate docs
/// (`timeout`, `<method>.timeout`, `payload`, `heartbeat`, `connect.timeout`, `connections`,
/// `actives`, `version`, `group`).
///
/// # Lifecycle
///
/// Every socket and task has an owner. Connecting, reading and writing run on tokio tasks owned by
/// the connection; a connection is owned by its pool and by the calls running on it, and closes as
/// soon as none is left (heartbeats do not keep it alive). So:
/// - dropping the last clone closes every connection and ends every task;
/// - [`DubboProtocol::shutdown`] closes everything at once (calls in flight fail) and returns when
///   every task has ended;
/// - [`DubboProtocol::retain_addresses`] retires the pools of providers that left; their
///   connections close when their calls in flight end, and nothing is cut.
///
/// [`open_connections`](DubboProtocol::open_connections) and
/// [`live_tasks`](DubboProtocol::live_tasks) count what is left, and
/// [`live_connection_tasks`](crate::live_connection_tasks) does so for the whole process.
///
/// # Examples
///
/// ```
/// use rudder_common::{invocation::Invocation, url::DubboUrl, Value};
/// use rudder_rpc::server::DubboServer;
/// use rudder_rpc::DubboProtocol;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = DubboServer::bind(0, |call: Invocation| async move {
///     Ok(Value::from(format!("Hello {}", call.arguments()[0].as_str().unwrap_or("?"))))
/// })
/// .await?;
/// let url = DubboUrl::parse(&format!("dubbo://{}/org.apache.dubbo.demo.DemoService", server.local_addr()))?;
///
/// let protocol = DubboProtocol::new();
/// let call = Invocation::new("sayHello", vec!["java.lang.String".into()], vec![Value::from("rust")]);
/// let response = protocol.invoke(&url, &call).await?;
/// assert_eq!(response.value(), Some(&Value::from("Hello rust")));
///
/// protocol.shutdown().await;
/// assert_eq!((protocol.open_connections(), protocol.live_tasks()), (0, 0));
/// server.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct DubboProtocol {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    pools: DashMap<String, Arc<ProviderPool>>,
    shut_down: AtomicBool,
    census: Arc<Census>,
    backoff: Arc<Backoff>,
    /// Dropped with the last clone, which abandons connects in progress too.
    closing: watch::Sender<bool>,
    /// TLS to every provider, when configured ([`DubboProtocol::with_tls`]).
    tls: Option<crate::tls::TlsClient>,
}

impl Default for Inner {
    fn default() -> Inner {
        Inner {
            pools: DashMap::new(),
            shut_down: AtomicBool::new(false),
            census: Arc::default(),
            backoff: Arc::default(),
            closing: watch::channel(false).0,
            tls: None,
        }
    }
}

impl DubboProtocol {
    /// A client with no connections yet.
    pub fn new() -> DubboProtocol {
        DubboProtocol::default()
    }

    /// A client that opens every connection with TLS (see [`crate::tls`]): the consumer-wide setting
    /// of Dubbo's `SslConfig`.
    ///
    /// ```
    /// use rudder_rpc::{tls::TlsConfig, DubboProtocol};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = std::env::temp_dir().join(format!("rudder-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// # let ca = rcgen::generate_simple_self_signed(vec!["localhost".into()])?;
    /// # std::fs::write(dir.join("ca.pem"), ca.cert.pem())?;
    /// let tls = TlsConfig::ca_file(dir.join("ca.pem")).load()?;
    /// let protocol = DubboProtocol::with_tls(Some(tls));
    /// assert!(protocol.tls().is_some());
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_tls(tls: Option<crate::tls::TlsClient>) -> DubboProtocol {
        DubboProtocol {
            inner: Arc::new(Inner {
                tls,
                ..Inner::default()
            }),
        }
    }

    /// The TLS this client uses, if any.
    pub fn tls(&self) -> Option<&crate::tls::TlsClient> {
        self.inner.tls.as_ref()
    }

    /// Calls `invocation` on the provider at `url` and waits for its answer.
    ///
    /// The deadline is the invocation's `timeout` attachment, else the URL's `<method>.timeout`,
    /// else `timeout`, else 1000 ms. A business exception thrown by the provider is an `Ok`
    /// [`RpcResponse`] holding a [`JavaException`](rudder_common::value::JavaException).
    ///
    /// # Errors
    /// - `ShutDown`: [`DubboProtocol::shutdown`] was called before or during the call;
    /// - `Network`: no connection (connect failed, backing off, closed mid-call),
    ///   or the connection was closed because the provider sent a malformed or oversized frame;
    /// - `Timeout`: no answer in time (the connection stays open for other calls), or status 30/31;
    /// - `Serialization`: the request is over the `payload` limit or the answer does not decode;
    /// - other kinds for non-OK response statuses, as [`ResponseStatus::error_kind`](crate::ResponseStatus::error_kind)
    ///   lists; the error's `source()` is then a [`ProviderError`](crate::ProviderError).
    pub async fn invoke(
        &self,
        url: &DubboUrl,
        invocation: &Invocation,
    ) -> Result<RpcResponse, RpcError> {
        if self.is_shut_down() {
            return Err(RpcError::new(
                RpcErrorKind::ShutDown,
                "dubbo protocol is shut down",
            ));
        }
        // A call that fails because `shutdown` closed its connection is a shut-down failure, not a
        // network one: the cluster must not retry it elsewhere (every connection is closing).
        self.invoke_open(url, invocation).await.map_err(|error| {
            if self.is_shut_down() && error.kind() != RpcErrorKind::ShutDown {
                RpcError::new(
                    RpcErrorKind::ShutDown,
                    "dubbo protocol shut down during the call",
                )
                .with_source(error)
            } else {
                error
            }
        })
    }

    /// Whether [`DubboProtocol::shutdown`] has been called on this protocol (or a clone).
    pub fn is_shut_down(&self) -> bool {
        self.inner.shut_down.load(Ordering::Relaxed)
    }

    async fn invoke_open(
        &self,
        url: &DubboUrl,
        invocation: &Invocation,
    ) -> Result<RpcResponse, RpcError> {
        let timeout = settings::call_timeout(url, invocation);
        // Connecting counts against the call's own deadline, not only `connect.timeout`.
        let deadline = tokio::time::Instant::now() + timeout;
        let pool = self.pool(url);
        let connection =
            tokio::time::timeout_at(deadline, pool.connection(settings::connection_config(url)))
                .await
                .map_err(|_| {
                    RpcError::new(
                        RpcErrorKind::Network,
                        format!(
                    "no connection to {} within the call's {} ms timeout (still connecting)",
                    pool.addr(),
                    timeout.as_millis()
                ),
                    )
                })??;
        connection
            .invoke(&settings::target(url), invocation, timeout, deadline)
            .await
    }

    /// [`DubboProtocol::invoke`], counted in `status` as Dubbo's `RpcStatus` does: the call is active
    /// from before the send until the answer, then recorded with its elapsed milliseconds. Any
    /// [`RpcError`] counts as a failure; a business exception counts as a success.
    ///
    /// # Errors
    /// As [`DubboProtocol::invoke`], plus `LimitExceeded` (nothing sent) when the method's
    /// `actives` limit is already reached.
    ///
    /// ```
    /// # #[allow(unused_imports)] use rudder_common::status::record::*;
    /// # use rudder_common::{invocation::Invocation, url::DubboUrl, Value};
    /// # use rudder_common::status::StatusRegistry;
    /// # use rudder_rpc::{server::DubboServer, DubboProtocol};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = DubboServer::bind(0, |_call: Invocation| async { Ok(Value::Int(5)) }).await?;
    /// let url = DubboUrl::parse(&format!("dubbo://{}/com.acme.Calc", server.local_addr()))?;
    /// let statuses = StatusRegistry::default();
    /// let status = statuses.provider(&url.identity());
    /// let call = Invocation::new("add", vec!["int".into(), "int".into()], vec![Value::Int(2), Value::Int(3)]);
    /// DubboProtocol::new().invoke_counted(&status, &url, &call).await?;
    /// assert_eq!(status.method("add").succeeded(), 1);
    /// assert_eq!(status.service().active(), 0);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn invoke_counted(
        &self,
        status: &Arc<ProviderStatus>,
        url: &DubboUrl,
        invocation: &Invocation,
    ) -> Result<RpcResponse, RpcError> {
        let method = invocation.method_name();
        let max_active = settings::max_active(url, method);
        let Some(active) = status.begin(method, max_active) else {
            return Err(RpcError::new(
                RpcErrorKind::LimitExceeded,
                format!(
                    "{method} on {} already has {max_active} active calls (actives)",
                    url.address()
                ),
            ));
        };
        let started = Instant::now();
        let result = self.invoke(url, invocation).await;
        let elapsed = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        active.finish(elapsed, result.is_ok());
        result
    }

    /// Closes every connection and refuses further calls (for every clone); calls in flight fail
    /// with `ShutDown`. Returns once every connect, driver and writer task has ended and every
    /// socket is closed.
    pub async fn shutdown(&self) {
        self.inner.shut_down.store(true, Ordering::SeqCst);
        self.inner.closing.send_replace(true);
        for pool in self.inner.pools.iter() {
            pool.close("dubbo protocol shut down");
        }
        self.inner.pools.clear();
        self.inner.census.all_tasks_ended().await;
    }

    /// Retires the connection pools of every provider address (`host:port`) for which `keep`
    /// answers `false`, e.g. providers that left the registry. Their connections close as soon as
    /// the calls in flight on them have ended (no call is cut); a later call to a retired address
    /// opens a fresh pool. Returns how many pools were retired.
    ///
    /// ```
    /// # use rudder_common::{invocation::Invocation, url::DubboUrl, Value};
    /// # use rudder_rpc::{server::DubboServer, DubboProtocol};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = DubboServer::bind(0, |_call: Invocation| async { Ok(Value::Int(1)) }).await?;
    /// let url = DubboUrl::parse(&format!("dubbo://{}/com.acme.Calc", server.local_addr()))?;
    /// let protocol = DubboProtocol::new();
    /// protocol.invoke(&url, &Invocation::new("one", vec![], vec![])).await?;
    /// assert_eq!(protocol.open_connections(), 1);
    ///
    /// let gone = url.address();
    /// assert_eq!(protocol.retain_addresses(|addr| addr != gone), 1);
    /// server.wait_for_open_connections(0).await; // the provider saw the socket close
    /// # Ok(())
    /// # }
    /// ```
    pub fn retain_addresses(&self, keep: impl Fn(&str) -> bool) -> usize {
        // Counted as they go: a call opening a pool meanwhile must not make the count underflow
        // (`len()` before and after, subtracted, did: a panic in debug builds, inside whichever
        // registry task was pruning, which stopped that subscription).
        let mut retired = 0;
        self.inner.pools.retain(|_, pool| {
            let kept = keep(pool.addr());
            retired += usize::from(!kept);
            kept
        });
        retired
    }

    /// Returns once this protocol has no socket open and no task alive: after
    /// [`retain_addresses`](DubboProtocol::retain_addresses) retired every pool and the calls on
    /// them ended, for instance. Bound it with a timeout if calls may still be running.
    pub async fn wait_until_idle(&self) {
        self.inner.census.idle().await;
    }

    /// Sockets this protocol (all clones) has open now.
    pub fn open_connections(&self) -> usize {
        self.inner.census.open_sockets()
    }

    /// Connect, driver and writer tasks of this protocol alive now.
    pub fn live_tasks(&self) -> usize {
        self.inner.census.live_tasks()
    }

    fn context(&self) -> PoolContext {
        PoolContext {
            census: Arc::clone(&self.inner.census),
            backoff: Arc::clone(&self.inner.backoff),
            closing: self.inner.closing.subscribe(),
            tls: self.inner.tls.clone(),
        }
    }

    /// Whether the provider at `url` can take a call (its pool's connections): what its endpoint
    /// reports to the cluster.
    pub(crate) fn availability(
        &self,
        url: &DubboUrl,
    ) -> rudder_common::status::availability::Availability {
        self.pool(url).availability().clone()
    }

    fn pool(&self, url: &DubboUrl) -> Arc<ProviderPool> {
        let addr = url.address();
        let size = settings::connections(url);
        // Different `connections` settings for one address get separate pools.
        let key = if size == 1 {
            addr
        } else {
            format!("{addr}#{size}")
        };
        if let Some(pool) = self.inner.pools.get(&key) {
            return Arc::clone(&pool);
        }
        let addr = url.address();
        Arc::clone(
            &self
                .inner
                .pools
                .entry(key)
                .or_insert_with(|| Arc::new(ProviderPool::new(addr, size, self.context()))),
        )
    }
}
