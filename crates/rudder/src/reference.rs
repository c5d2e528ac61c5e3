//! [`Reference`]: a handle on one remote service, the Rust counterpart of Dubbo's `ReferenceConfig`.

use std::fmt;
use std::sync::Arc;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::cluster::{ClusterInvoker, ClusterMode};
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::weight::WeightSource;
use rudder_common::clock::Clock;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::value::{from_value, to_value};
use rudder_common::Value;
use rudder_rpc::{DubboProtocol, RpcResponse};
use serde::{de::DeserializeOwned, Serialize};

use crate::caller::DubboCaller;
use crate::error::{BuildError, CallError};

/// A remote service: its providers, the balancer that picks among them, and the wire to call them.
///
/// Build one per interface (and version/group) and share it; `invoke` takes `&self`. The provider list
/// comes from explicit URLs or from a registry ([`ReferenceBuilder::registry`]).
///
/// ```
/// use rudder::{Reference, Value};
/// use rudder_rpc::server::DubboServer;
/// use rudder_common::invocation::Invocation;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let server = DubboServer::bind(0, |call: Invocation| async move {
///     Ok(Value::from(format!("Hello {}", call.arguments()[0].as_str().unwrap_or("?"))))
/// })
/// .await?;
/// let greeter = Reference::builder("com.acme.Greeter")
///     .provider(&format!("dubbo://{}/com.acme.Greeter?weight=100", server.local_addr()))
///     .timeout_millis(2000)
///     .build()
///     .await?;
/// let answer = greeter.invoke("sayHello", &["java.lang.String"], vec![Value::from("rust")]).await?;
/// assert_eq!(answer, Value::from("Hello rust"));
/// # server.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct Reference {
    consumer: DubboUrl,
    directory: Arc<Directory>,
    invoker: ClusterInvoker<DubboCaller>,
    _registration: Option<crate::registry::Registration>,
}

impl Reference {
    /// Starts configuring a reference to `interface` (a Java interface name).
    pub fn builder(interface: &str) -> ReferenceBuilder {
        ReferenceBuilder::new(interface)
    }

    /// Calls `method` with Java parameter types and arguments; the provider's return value, or its
    /// exception as [`CallError::Exception`].
    ///
    /// # Errors
    /// [`CallError`]: the provider threw, or the call failed after the cluster mode's retries.
    pub async fn invoke(
        &self,
        method: &str,
        parameter_types: &[&str],
        arguments: Vec<Value>,
    ) -> Result<Value, CallError> {
        self.invoke_value(invocation(method, parameter_types, arguments))
            .await
    }

    /// As [`Reference::invoke`], through Dubbo's generic `$invoke`: POJOs travel as maps, and the provider
    /// needs no matching Java classes on the consumer side.
    ///
    /// # Errors
    /// As [`Reference::invoke`].
    pub async fn invoke_generic(
        &self,
        method: &str,
        parameter_types: &[&str],
        arguments: Vec<Value>,
    ) -> Result<Value, CallError> {
        self.invoke_value(invocation(method, parameter_types, arguments).into_generic())
            .await
    }

    /// The call's value, or the provider's exception.
    async fn invoke_value(&self, invocation: Invocation) -> Result<Value, CallError> {
        let response = self.invoke_raw(invocation).await?;
        response.into_result().map_err(CallError::Exception)
    }

    /// Typed call: serializes `arguments` with serde (a struct with a Java class name becomes that Java
    /// object, see [`rudder_common::value::JavaClass`]) and deserializes the result into `T`.
    ///
    /// # Errors
    /// As [`Reference::invoke`], plus [`CallError::Conversion`].
    pub async fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        parameter_types: &[&str],
        arguments: &[&dyn ErasedArgument],
    ) -> Result<T, CallError> {
        let values = arguments
            .iter()
            .map(|a| a.to_hessian())
            .collect::<Result<Vec<_>, _>>()?;
        let value = self.invoke(method, parameter_types, values).await?;
        Ok(from_value(value)?)
    }

    /// Sends a prepared invocation through the cluster: the whole response, attachments included.
    ///
    /// # Errors
    /// [`rudder_common::error::RpcError`] when the call did not complete.
    pub async fn invoke_raw(
        &self,
        mut invocation: Invocation,
    ) -> Result<RpcResponse, rudder_common::error::RpcError> {
        let method = invocation.method_name();
        let mode = ClusterMode::from_consumer(&self.consumer, method).unwrap_or_default();
        if invocation.attachment("timeout").is_none() {
            if let Some(timeout) = self
                .consumer
                .method_parameter(method, "timeout")
                .map(str::to_owned)
            {
                invocation.set_attachment("timeout", &timeout);
            }
        }
        self.invoker.invoke_in_mode(&invocation, mode).await
    }

    /// The providers this reference currently sees.
    pub fn directory(&self) -> &Arc<Directory> {
        &self.directory
    }

    /// The balancer picking among them.
    pub fn balancer(&self) -> &Arc<Balancer> {
        self.invoker.balancer()
    }

    /// The consumer-side configuration, as a Dubbo consumer URL.
    pub fn consumer_url(&self) -> &DubboUrl {
        &self.consumer
    }
}

impl fmt::Debug for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reference")
            .field("consumer", &self.consumer)
            .field("directory", &self.directory)
            .finish()
    }
}

fn invocation(method: &str, parameter_types: &[&str], arguments: Vec<Value>) -> Invocation {
    let types = parameter_types.iter().map(|t| (*t).to_owned()).collect();
    Invocation::new(method, types, arguments)
}

/// An argument for [`Reference::call`]: anything serde can serialize.
pub trait ErasedArgument: Send + Sync {
    /// Converts to a Hessian value.
    ///
    /// # Errors
    /// When serde cannot represent it.
    fn to_hessian(&self) -> Result<Value, rudder_common::value::SerdeError>;
}

impl<T: Serialize + Send + Sync> ErasedArgument for T {
    fn to_hessian(&self) -> Result<Value, rudder_common::value::SerdeError> {
        to_value(self)
    }
}

/// Configures a [`Reference`].
pub struct ReferenceBuilder {
    consumer: DubboUrl,
    providers: Vec<String>,
    registry: Option<String>,
    loadbalance: Option<String>,
    clock: Option<Arc<dyn Clock>>,
    seed: Option<u64>,
    weight_source: Option<Arc<dyn WeightSource>>,
    protocol: DubboProtocol,
    directory: Option<Arc<Directory>>,
}

impl ReferenceBuilder {
    fn new(interface: &str) -> ReferenceBuilder {
        let consumer = DubboUrl::new("consumer", &crate::registry::local_host(), 0, interface)
            .with_parameter("interface", interface)
            .with_parameter("side", "consumer");
        ReferenceBuilder {
            consumer,
            providers: Vec::new(),
            registry: None,
            loadbalance: None,
            clock: None,
            seed: None,
            weight_source: None,
            protocol: DubboProtocol::new(),
            directory: None,
        }
    }

    /// Calls this provider directly (repeatable; plain or percent-encoded URL). With a registry, ignored.
    pub fn provider(mut self, url: &str) -> Self {
        self.providers.push(url.to_owned());
        self
    }

    /// Finds providers in this registry (`zookeeper://host:port[?backup=...]`).
    pub fn registry(mut self, url: &str) -> Self {
        self.registry = Some(url.to_owned());
        self
    }

    /// The service version to match.
    pub fn version(self, version: &str) -> Self {
        self.parameter("version", version)
    }

    /// The service group to match (`*` or a comma list as in Dubbo).
    pub fn group(self, group: &str) -> Self {
        self.parameter("group", group)
    }

    /// The application name this consumer registers under.
    pub fn application(self, name: &str) -> Self {
        self.parameter("application", name)
    }

    /// Per-call deadline for every method (`timeout`); `<method>.timeout` via [`Self::parameter`].
    pub fn timeout_millis(self, millis: u64) -> Self {
        self.parameter("timeout", &millis.to_string())
    }

    /// Failover retries (`retries`, default 2).
    pub fn retries(self, retries: u32) -> Self {
        self.parameter("retries", &retries.to_string())
    }

    /// Fault-tolerance mode (`cluster`): failover, failfast, failsafe or available.
    pub fn cluster(self, mode: &str) -> Self {
        self.parameter("cluster", mode)
    }

    /// Uses this load balancer whatever the providers name.
    pub fn loadbalance(mut self, name: &str) -> Self {
        self.loadbalance = Some(name.to_owned());
        self
    }

    /// Any other consumer-side parameter, as Dubbo's `<dubbo:reference>` attributes and `<method>.<key>`.
    pub fn parameter(mut self, key: &str, value: &str) -> Self {
        self.consumer = self.consumer.with_parameter(key, value);
        self
    }

    /// Reads time from `clock` (tests, simulations).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Makes the balancer's random choices reproducible.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Overrides provider weights at pick time.
    pub fn weight_source(mut self, source: Arc<dyn WeightSource>) -> Self {
        self.weight_source = Some(source);
        self
    }

    /// Shares connections with other references.
    pub fn protocol(mut self, protocol: DubboProtocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// Uses this directory (e.g. one fed by your own discovery) instead of providers or a registry.
    pub fn directory(mut self, directory: Arc<Directory>) -> Self {
        self.directory = Some(directory);
        self
    }

    /// Builds the reference; with a registry, waits for the first provider listing.
    ///
    /// # Errors
    /// [`BuildError`] naming the setting that is wrong, or the registry failure.
    pub async fn build(self) -> Result<Reference, BuildError> {
        ClusterMode::from_consumer(&self.consumer, "")?;
        let (directory, registration) = match (self.directory, &self.registry) {
            (Some(directory), _) => (directory, None),
            (None, Some(registry)) => {
                let directory = Arc::new(Directory::sorted(Default::default()));
                let registration =
                    crate::registry::subscribe(registry, &self.consumer, Arc::clone(&directory))
                        .await?;
                (directory, Some(registration))
            }
            (None, None) if !self.providers.is_empty() => {
                let urls = self
                    .providers
                    .iter()
                    .map(|u| DubboUrl::parse_any(u))
                    .collect::<Result<Vec<_>, _>>()?;
                let directory = Arc::new(Directory::default());
                directory.replace(urls);
                (directory, None)
            }
            (None, None) => return Err(BuildError::NoSource),
        };
        let mut balancer = Balancer::builder(Arc::clone(&directory));
        if let Some(clock) = self.clock {
            balancer = balancer.clock(clock);
        }
        if let Some(seed) = self.seed {
            balancer = balancer.seed(seed);
        }
        if let Some(source) = self.weight_source {
            balancer = balancer.weight_source(source);
        }
        if let Some(name) = &self.loadbalance {
            balancer = balancer.force_policy(name)?;
        }
        let caller = DubboCaller {
            protocol: self.protocol,
        };
        let invoker =
            ClusterInvoker::new(Arc::new(balancer.build()), caller, ClusterMode::default());
        Ok(Reference {
            consumer: self.consumer,
            directory,
            invoker,
            _registration: registration,
        })
    }
}

impl fmt::Debug for ReferenceBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReferenceBuilder")
            .field("consumer", &self.consumer)
            .field("providers", &self.providers.len())
            .field("registry", &self.registry.is_some())
            .finish_non_exhaustive()
    }
}
