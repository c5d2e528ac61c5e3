//! [`Reference`]: a handle on one remote service, the Rust counterpart of Dubbo's `ReferenceConfig`.

use std::fmt;
use std::sync::Arc;

use rudder_cluster::cluster::{ClusterInvoker, MethodModes};
use rudder_cluster::directory::{Directory, ProviderSet};
use rudder_cluster::provider::Provider;
use rudder_cluster::router::{Explanation, RouterChain};
use rudder_cluster::zone_aware::ZoneAwareInvoker;
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::value::from_value;
use rudder_common::Value;
use rudder_rpc::RpcResponse;
use serde::de::DeserializeOwned;

use crate::arguments::Arguments;
use crate::caller::DubboCaller;
use crate::changes::{Changes, RulesInForce};
use crate::consumer::ConsumerInner;
use crate::error::CallError;

/// A remote service: its providers, the balancer that picks among them, and the wire to call them.
///
/// Cheap to clone: clones share the service's directory and balancer, and the [`Consumer`](crate::Consumer) it was built
/// from (its registry sessions, connections and statistics). `call` and `invoke` take `&self`.
///
/// For a single service, [`Reference::builder`] makes a reference with a consumer of its own; with more
/// than one, build them from one [`Consumer`](crate::Consumer) so they share sessions, connections and statistics.
///
/// With several registries ([`ReferenceBuilder::registry`](crate::ReferenceBuilder::registry) repeated) the reference keeps one directory,
/// balancer and cluster invoker per registry and picks the registry first, by Dubbo 3.3's zone-aware
/// rules (the registry URL's `zone`, `weight` and `preferred`, the call's `registry_zone` attachment).
///
/// Read-only views show what the reference routes over: [`Reference::snapshot`] (the providers,
/// each with its merged URL and statistics), [`Reference::providers`], and [`Reference::explain`]
/// (each provider's fate under the current routing rules). What the registry feeds cannot be
/// overwritten through a reference.
///
/// ```
/// use std::time::Duration;
/// use rudder::{Invocation, Reference, Value};
/// # use rudder_rpc::server::DubboServer;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let server = DubboServer::bind(0, |call: Invocation| async move {
/// #     Ok(Value::from(format!("Hello {}", call.arguments()[0].as_str().unwrap_or("?"))))
/// # })
/// # .await?;
/// # let address = server.local_addr();
/// let greeter = Reference::builder("com.acme.Greeter")
///     .provider(&format!("dubbo://{address}/com.acme.Greeter?weight=100"))
///     .timeout(Duration::from_secs(2))
///     .build()
///     .await?;
/// let answer = greeter.call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("rust")]).await?;
/// assert_eq!(answer, Value::from("Hello rust"));
/// let typed: String = greeter.call("sayHello", &["java.lang.String"], ("serde",)).await?;
/// assert_eq!(typed, "Hello serde");
/// assert_eq!(greeter.providers().len(), 1);
/// # server.shutdown().await;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Reference {
    pub(crate) inner: Arc<ReferenceInner>,
}

pub(crate) struct ReferenceInner {
    pub(crate) consumer: Arc<ConsumerInner>,
    pub(crate) consumer_url: DubboUrl,
    /// Each method's cluster mode, read from `consumer_url` once, not on every call.
    pub(crate) modes: MethodModes,
    /// One cluster invoker per registry; a single one for provider URLs, a directory or one registry.
    pub(crate) invoker: ZoneAwareInvoker<DubboCaller>,
    /// The same registries' invokers for protobuf (gRPC) calls ([`Reference::grpc_channel`]).
    #[cfg(feature = "triple")]
    pub(crate) grpc: ZoneAwareInvoker<crate::grpc_caller::GrpcCaller>,
    /// The routers of each registry's cluster, in the same order (one chain per directory, so each
    /// caches routes for its own snapshots); rules are set on all of them.
    pub(crate) routers: Vec<Arc<RouterChain>>,
    /// Each registry's subscription and router rules, followed in the background; dropping them
    /// stops following and releases the sessions.
    #[cfg(feature = "zookeeper")]
    pub(crate) _attachments: Vec<crate::registry::Attachment>,
}

impl Drop for ReferenceInner {
    fn drop(&mut self) {
        // This reference's providers may be nobody's now: their statistics and connections can go.
        // (Its registry attachments are dropped right after, which stops their tasks.)
        let directories: Vec<&Directory> = self
            .invoker
            .members()
            .iter()
            .flat_map(|m| {
                std::iter::once(&m.invoker).chain(m.fallback.as_ref().map(|f| &f.invoker))
            })
            .map(|invoker| &**invoker.balancer().directory())
            .collect();
        self.consumer.prune(&directories);
    }
}

impl Reference {
    /// Calls `method`: serializes `arguments` with serde and deserializes the provider's return
    /// value into `T`; the provider's exception is [`CallError::Exception`].
    ///
    /// `arguments` is a tuple of `Serialize` values (a struct with a Java class name becomes that
    /// Java object, see [`JavaClass`](crate::value::JavaClass); one argument is a one-element tuple,
    /// `(&user,)`) or a `Vec<Value>` built by hand. With `T = Value` the return value comes back as
    /// the provider sent it, Java types and all, without a serde round trip.
    ///
    /// ```
    /// # use rudder::{Invocation, Reference, Value};
    /// # use rudder_rpc::server::DubboServer;
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let server = DubboServer::bind(0, |call: Invocation| async move {
    /// #     Ok(Value::from(format!("Hello {}", call.arguments()[0].as_str().unwrap_or("?"))))
    /// # }).await?;
    /// # let greeter = Reference::builder("com.acme.Greeter")
    /// #     .provider(&format!("dubbo://{}/com.acme.Greeter", server.local_addr()))
    /// #     .build()
    /// #     .await?;
    /// let typed: String = greeter.call("sayHello", &["java.lang.String"], ("rust",)).await?;
    /// let dynamic: Value = greeter
    ///     .call("sayHello", &["java.lang.String"], vec![Value::from("tower")])
    ///     .await?;
    /// assert_eq!((typed.as_str(), dynamic.as_str()), ("Hello rust", Some("Hello tower")));
    /// # server.shutdown().await;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`CallError`]: the provider threw ([`CallError::Exception`]), the call failed after the
    /// cluster mode's retries ([`CallError::Rpc`]), the types and arguments differ in number
    /// ([`CallError::ArgumentCount`], nothing sent), or serde could not convert an argument or the
    /// result ([`CallError::Conversion`]).
    pub async fn call<T: DeserializeOwned + 'static, A: Arguments>(
        &self,
        method: &str,
        parameter_types: &[&str],
        arguments: A,
    ) -> Result<T, CallError> {
        let invocation = invocation(method, parameter_types, arguments.into_values()?)?;
        let value = self
            .invoke(invocation)
            .await?
            .into_result()
            .map_err(CallError::Exception)?;
        value_into(value)
    }

    /// Sends a prepared invocation through the cluster and returns the whole response, attachments
    /// included; a provider's exception is in the response
    /// ([`RpcResponse::into_result`](crate::RpcResponse::into_result)), not an error. This is the
    /// call for invocations with attachments (such as `dubbo.tag`, or `registry_zone`, which picks the
    /// registry among several) and for generic calls ([`Invocation::into_generic`]: POJOs travel as
    /// maps, and the provider needs no matching Java classes on the consumer side).
    ///
    /// The per-call deadline is the invocation's `timeout` attachment if set, else the merged provider URL's
    /// `<method>.timeout` / `timeout` (consumer settings first, as Dubbo resolves them).
    ///
    /// # Errors
    /// [`CallError::Rpc`] when the call did not complete; its kind is
    /// [`RpcErrorKind::ShutDown`] when the consumer was shut down.
    pub async fn invoke(&self, invocation: Invocation) -> Result<RpcResponse, CallError> {
        let inner = &self.inner;
        if inner.consumer.is_shut_down() {
            return Err(RpcError::new(RpcErrorKind::ShutDown, "the consumer is shut down").into());
        }
        if let Some(unlisted) = self.unlisted_method(invocation.method_name()) {
            return Err(unlisted.into());
        }
        let mode = inner.modes.get(invocation.method_name());
        Ok(inner.invoker.invoke_in_mode(&invocation, &mode).await?)
    }

    /// A method none of the providers lists in its `methods=`, refused before anything is sent (as
    /// `rudder invoke` refuses it), naming the methods they list; `None` when some provider lists it,
    /// or lists nothing (nothing to check), or there is no provider (the cluster says so). Costs one
    /// look at the first provider's list when the method is there.
    fn unlisted_method(&self, method: &str) -> Option<RpcError> {
        let lists = |p: &Provider, name: &str| {
            p.url()
                .parameter("methods")
                .filter(|m| !m.trim().is_empty())
                .map(|m| m.split(',').any(|listed| listed.trim() == name))
        };
        if method.starts_with('$') {
            return None;
        }
        // The common case decides on the first provider alone: one snapshot load, no list of every
        // provider (copying it cost two allocations and a reference count per provider, per call).
        let first = self
            .each_directory()
            .map(|d| d.snapshot())
            .find(|s| !s.providers().is_empty())?;
        if lists(&first.providers()[0], method) != Some(false) {
            return None;
        }
        let providers = self.providers();
        let mut listed = std::collections::BTreeSet::new();
        for provider in &providers {
            match lists(provider, method) {
                Some(false) => {}
                _ => return None,
            }
            let methods = provider.url().parameter("methods").unwrap_or_default();
            listed.extend(methods.split(',').map(str::trim).filter(|m| !m.is_empty()));
        }
        let interface = self.inner.consumer_url.service_interface().to_owned();
        Some(RpcError::new(
            RpcErrorKind::MethodNotFound,
            format!(
                "{interface} has no method {method}; its providers list: {}",
                listed.into_iter().collect::<Vec<_>>().join(", ")
            ),
        ))
    }

    /// The providers this reference routes over now, merged with its consumer settings: an immutable
    /// snapshot (with several registries, the first registry's; [`Reference::snapshots`] has them all).
    pub fn snapshot(&self) -> Arc<ProviderSet> {
        self.inner.invoker.first().balancer().directory().snapshot()
    }

    /// One snapshot per registry, in the order the registries were given (one without registries).
    pub fn snapshots(&self) -> Vec<Arc<ProviderSet>> {
        self.each_directory().map(|d| d.snapshot()).collect()
    }

    /// Every provider of every registry, in registry order then snapshot order.
    pub fn providers(&self) -> Vec<Arc<Provider>> {
        self.each_directory()
            .flat_map(|d| d.snapshot().providers().to_vec())
            .collect()
    }

    /// Each provider's fate for `invocation` under the current rules, over the first registry's
    /// providers: kept or not, which rule decided it (`rudder providers --explain` prints this), and
    /// the outlier ejections in force now among the kept ones.
    pub fn explain(&self, invocation: &Invocation) -> Explanation {
        let now = self.invoker().balancer().clock().now_millis();
        self.inner.routers[0]
            .explain(&self.snapshot(), invocation)
            .with_ejections(now)
    }

    /// What each registry's subscription has done so far, in the order the registries were given
    /// (empty without registries; `None` for a registry not subscribed yet, under `check=false`):
    /// among others which view feeds the directory ([`SubscriptionStatus::view`], chosen by the
    /// `migration.step` setting), the providers of each view and the provider applications followed.
    ///
    /// ```no_run
    /// use rudder::{DiscoveryView, Reference};
    ///
    /// # async fn demo() -> Result<(), rudder::BuildError> {
    /// let reference = Reference::builder("com.acme.Greeter")
    ///     .registry("zookeeper://127.0.0.1:2181")
    ///     .parameter("migration.step", "APPLICATION_FIRST")
    ///     .build()
    ///     .await?;
    /// let status = reference.registry_status()[0].clone().expect("subscribed");
    /// if status.view == DiscoveryView::Application {
    ///     println!("instances of {:?}", status.applications);
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// [`SubscriptionStatus::view`]: crate::SubscriptionStatus::view
    #[cfg(feature = "zookeeper")]
    pub fn registry_status(&self) -> Vec<Option<crate::SubscriptionStatus>> {
        self.inner._attachments.iter().map(|a| a.status()).collect()
    }

    /// Each registry's subscription status as it changes, in registry order: a receiver that wakes
    /// on every new status ([`registry_status`](Self::registry_status) reads it once). `None` for a
    /// registry not subscribed yet, under `check=false`. The receiver ends (its `changed()` fails)
    /// when its subscription does, when the registry session was replaced after an expiry or the
    /// reference dropped: ask again for the new one.
    ///
    /// A status change need not change the providers: a migration step that adds a view which
    /// loses the comparison only shows here.
    ///
    /// ```no_run
    /// use rudder::Reference;
    ///
    /// # async fn demo() -> Result<(), rudder::BuildError> {
    /// let reference = Reference::builder("com.acme.Greeter")
    ///     .registry("zookeeper://127.0.0.1:2181")
    ///     .build()
    ///     .await?;
    /// let mut status = reference.registry_status_changes()[0].clone().expect("subscribed");
    /// // Waits for the migration rule to name a step other than the default.
    /// let _ = status.wait_for(|s| s.migration_step != "APPLICATION_FIRST").await;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "zookeeper")]
    pub fn registry_status_changes(
        &self,
    ) -> Vec<Option<tokio::sync::watch::Receiver<crate::SubscriptionStatus>>> {
        self.inner
            ._attachments
            .iter()
            .map(|a| a.status_changes())
            .collect()
    }

    /// The consumer-side configuration, as a Dubbo consumer URL.
    pub fn consumer_url(&self) -> &DubboUrl {
        &self.inner.consumer_url
    }

    /// Whether the consumer this reference belongs to has been shut down.
    pub fn is_shut_down(&self) -> bool {
        self.inner.consumer.is_shut_down()
    }

    /// Sets (`Some(yaml)`) or deletes (`None`) a routing rule (a tag or condition rule, in the YAML
    /// the config center holds) on this reference, beside the config center's: a rule for a
    /// reference without a config center, or a test's. The config center's next change of the same
    /// key overwrites it.
    ///
    /// ```
    /// use rudder::rules::RuleKey;
    /// use rudder::{Invocation, Reference};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let greeter = Reference::builder("com.acme.Greeter")
    ///     .provider("dubbo://10.0.0.1:20880/com.acme.Greeter")
    ///     .provider("dubbo://10.0.0.2:20880/com.acme.Greeter")
    ///     .build()
    ///     .await?;
    /// let rule = "conditions:\n  - method = sayHello => host = 10.0.0.2\n";
    /// greeter.set_rule(RuleKey::service_condition("com.acme.Greeter", "", ""), Some(rule))?;
    /// let explained = greeter.explain(&Invocation::new("sayHello", vec![], vec![]));
    /// assert_eq!(explained.kept(), 1);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// When the rule does not parse; the last good rule stays.
    pub fn set_rule(
        &self,
        key: rudder_cluster::router::RuleKey,
        text: Option<&str>,
    ) -> Result<(), rudder_cluster::router::RuleError> {
        for chain in &self.inner.routers {
            chain.set_rule(key.clone(), text)?;
        }
        Ok(())
    }

    /// Wakes when something this reference routes over changes: providers, configurators, routing
    /// rules, a registry subscription's status. See [`Changes`] for the pattern that never misses one.
    pub fn changes(&self) -> Changes {
        let versions = self
            .each_directory()
            .map(|directory| directory.watch())
            .chain(self.inner.routers.iter().map(|chain| chain.watch()))
            .collect();
        #[cfg(feature = "zookeeper")]
        let statuses = self.registry_status_changes().into_iter().flatten();
        #[cfg(not(feature = "zookeeper"))]
        let statuses = std::iter::empty();
        Changes::new(versions, statuses)
    }

    /// The routing rules this reference holds now, with a version that grows with each change
    /// (the first registry's, with several).
    pub fn rules(&self) -> RulesInForce {
        let chain = &self.inner.routers[0];
        RulesInForce {
            version: chain.version(),
            keys: chain.rules(),
            refused: chain.errors(),
        }
    }

    /// The directory of each registry, in registry order.
    pub(crate) fn each_directory(&self) -> impl ExactSizeIterator<Item = &Arc<Directory>> + '_ {
        self.inner
            .invoker
            .members()
            .iter()
            .map(|m| m.invoker.balancer().directory())
    }

    /// The first registry's cluster invoker; every registry's caller shares its waiters.
    pub(crate) fn invoker(&self) -> &ClusterInvoker<DubboCaller> {
        self.inner.invoker.first()
    }
}

impl fmt::Debug for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reference")
            .field("consumer", &self.inner.consumer_url)
            .field("registries", &self.inner.invoker)
            .finish_non_exhaustive()
    }
}

/// The invocation of `method`, after checking that types and arguments pair up.
fn invocation(
    method: &str,
    parameter_types: &[&str],
    arguments: Vec<Value>,
) -> Result<Invocation, CallError> {
    if parameter_types.len() != arguments.len() {
        return Err(CallError::ArgumentCount {
            types: parameter_types.len(),
            arguments: arguments.len(),
        });
    }
    let types = parameter_types.iter().map(|t| (*t).to_owned()).collect();
    Ok(Invocation::new(method, types, arguments))
}

/// The call's value as `T`: as it is when `T` is [`Value`] itself (no serde round trip, which
/// would lose the Java types), else through serde.
fn value_into<T: DeserializeOwned + 'static>(value: Value) -> Result<T, CallError> {
    // Asked through a slot on the stack, not a `Box<dyn Any>`: one allocation fewer per call.
    let mut slot = Some(value);
    if let Some(same) = (&mut slot as &mut dyn std::any::Any).downcast_mut::<Option<T>>() {
        return Ok(same.take().expect("the slot holds the call's value"));
    }
    Ok(from_value(slot.expect("the slot holds the call's value"))?)
}
