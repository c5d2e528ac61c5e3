//! [`DubboProtocol`]: calls to Dubbo providers over `dubbo://` with hessian2.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use dashmap::DashMap;
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

use crate::pool::ProviderPool;
use crate::response::RpcResponse;
use crate::settings;
use rudder_common::status::ProviderStatus;

/// The dubbo:// client: one multiplexed TCP connection per provider address (more with the URL
/// parameter `connections`), opened on first use and reopened with backoff after a failure.
///
/// Clones are cheap and share the connections. The URL parameters read are listed in the crate docs
/// (`timeout`, `<method>.timeout`, `payload`, `heartbeat`, `connect.timeout`, `connections`,
/// `actives`, `version`, `group`).
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
/// protocol.shutdown();
/// server.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct DubboProtocol {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    pools: DashMap<String, Arc<ProviderPool>>,
    shut_down: AtomicBool,
}

impl DubboProtocol {
    /// A client with no connections yet.
    pub fn new() -> DubboProtocol {
        DubboProtocol::default()
    }

    /// Calls `invocation` on the provider at `url` and waits for its answer.
    ///
    /// The deadline is the invocation's `timeout` attachment, else the URL's `<method>.timeout`,
    /// else `timeout`, else 1000 ms. A business exception thrown by the provider is an `Ok`
    /// [`RpcResponse`] holding a [`JavaException`](rudder_common::value::JavaException).
    ///
    /// # Errors
    /// - `Network`: no connection (connect failed, backing off, closed mid-call, protocol shut down),
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
        if self.inner.shut_down.load(Ordering::Relaxed) {
            return Err(RpcError::new(
                RpcErrorKind::Network,
                "dubbo protocol is shut down",
            ));
        }
        let connection = self
            .pool(url)
            .connection(settings::connection_config(url))
            .await?;
        let timeout = settings::call_timeout(url, invocation);
        connection
            .invoke(&settings::target(url), invocation, timeout)
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
    /// # use rudder_common::{invocation::Invocation, url::DubboUrl, Value};
    /// # use rudder_rpc::{server::DubboServer, status::StatusRegistry, DubboProtocol};
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

    /// Closes every connection and refuses further calls; calls in flight fail with `Network`.
    pub fn shutdown(&self) {
        self.inner.shut_down.store(true, Ordering::Relaxed);
        for pool in self.inner.pools.iter() {
            pool.close("dubbo protocol shut down");
        }
        self.inner.pools.clear();
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
                .or_insert_with(|| Arc::new(ProviderPool::new(addr, size))),
        )
    }
}
