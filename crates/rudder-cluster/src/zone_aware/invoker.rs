//! The zone-aware invoker: one cluster invoker per registry, the registry chosen per call by
//! [`choose_registry`](super::choose_registry), and the next registry tried when the chosen one has
//! nothing to call.

use std::fmt;

use rudder_common::error::RpcError;
use rudder_common::invocation::Invocation;

use super::{choose_registry, split, Fallback, RegistryChoice, ZoneRequest};
use crate::cluster::{Caller, ClusterInvoker, ClusterMode};
use crate::rng::RngSource;

/// One registry behind a [`ZoneAwareInvoker`]: its choice parameters and its own cluster invoker.
#[derive(Debug)]
pub struct RegistryMember<C> {
    /// What the registry URL says about choosing it.
    pub choice: RegistryChoice,
    /// The cluster invoker over this registry's directory.
    pub invoker: ClusterInvoker<C>,
    /// A second provider list of this registry that takes a share of its calls (a migration rule's
    /// `proportion`; see [`Fallback`]), if any.
    pub fallback: Option<Fallback<C>>,
}

impl<C> RegistryMember<C> {
    /// A registry whose calls all go to `invoker`.
    pub fn new(choice: RegistryChoice, invoker: ClusterInvoker<C>) -> RegistryMember<C> {
        RegistryMember {
            choice,
            invoker,
            fallback: None,
        }
    }

    /// With a second provider list taking the share of calls `fallback` says.
    pub fn with_fallback(mut self, fallback: Fallback<C>) -> RegistryMember<C> {
        self.fallback = Some(fallback);
        self
    }
}

impl<C: Caller + 'static> RegistryMember<C> {
    /// The invoker this call goes to: [`RegistryMember::invoker`], or the fallback's for its share.
    fn for_call(&self, rng: &RngSource) -> &ClusterInvoker<C> {
        split::choose(&self.invoker, self.fallback.as_ref(), rng)
    }
}

/// The cluster invokers of several registries, one chosen per call by [`choose_registry`].
///
/// ```
/// use std::sync::Arc;
/// use rudder_cluster::{balancer::Balancer, directory::Directory, rng::RngSource};
/// use rudder_cluster::cluster::{Caller, ClusterInvoker, ClusterMode};
/// use rudder_cluster::provider::Provider;
/// use rudder_cluster::zone_aware::{RegistryChoice, RegistryMember, ZoneAwareInvoker};
/// use rudder_common::{error::RpcError, invocation::Invocation, url::DubboUrl};
///
/// struct Echo;
/// impl Caller for Echo {
///     type Output = String;
///     fn empty(&self) -> String { String::new() }
///     async fn call(&self, p: &Arc<Provider>, _: &Invocation) -> Result<String, RpcError> {
///         Ok(p.address().to_owned())
///     }
/// }
/// let member = |choice: RegistryChoice, provider: &str| {
///     let directory = Arc::new(Directory::default());
///     directory.replace([DubboUrl::parse(provider).unwrap()]);
///     let balancer = Arc::new(Balancer::builder(directory).build());
///     RegistryMember::new(choice, ClusterInvoker::new(balancer, Echo, ClusterMode::default()))
/// };
/// let invoker = ZoneAwareInvoker::new(
///     vec![
///         member(RegistryChoice::new("zk-hz").zone("hz"), "dubbo://10.0.1.1:20880/S"),
///         member(RegistryChoice::new("zk-sh").zone("sh"), "dubbo://10.0.2.1:20880/S"),
///     ],
///     RngSource::seeded(7),
/// )
/// .expect("at least one registry");
/// let mut call = Invocation::new("sayHello", vec![], vec![]);
/// call.set_attachment("registry_zone", "sh");
/// # let waker = std::task::Waker::noop();
/// # let mut cx = std::task::Context::from_waker(&waker);
/// # let mode = ClusterMode::default();
/// # let mut answer = std::pin::pin!(invoker.invoke_in_mode(&call, &mode));
/// # let answer = loop { if let std::task::Poll::Ready(v) = std::future::Future::poll(answer.as_mut(), &mut cx) { break v; } };
/// assert_eq!(answer?, "10.0.2.1:20880");
/// # Ok::<(), RpcError>(())
/// ```
pub struct ZoneAwareInvoker<C> {
    members: Vec<RegistryMember<C>>,
    /// The members' choices again, as the slice [`choose_registry`] reads (copied once, at build).
    choices: Vec<RegistryChoice>,
    failover: bool,
    rng: RngSource,
}

impl<C: Caller + 'static> ZoneAwareInvoker<C> {
    /// The registries in configuration order (which rules 1 and 2 follow); `None` when there is none.
    pub fn new(members: Vec<RegistryMember<C>>, rng: RngSource) -> Option<ZoneAwareInvoker<C>> {
        if members.is_empty() {
            return None;
        }
        Some(ZoneAwareInvoker {
            choices: members.iter().map(|m| m.choice.clone()).collect(),
            members,
            failover: false,
            rng,
        })
    }

    /// With `failover`, a call whose chosen registry fails with a retryable error (anything but a
    /// business exception, after that registry's own cluster retries) goes on to the registry the rules
    /// choose among those not tried yet. A forced zone is never left. Off by default, as Dubbo has none.
    pub fn with_failover(mut self, failover: bool) -> ZoneAwareInvoker<C> {
        self.failover = failover;
        self
    }

    /// Whether failover across registries is on.
    pub fn failover(&self) -> bool {
        self.failover
    }

    /// The registries, in configuration order.
    pub fn members(&self) -> &[RegistryMember<C>] {
        &self.members
    }

    /// The first registry's cluster invoker (the only one with a single registry).
    pub fn first(&self) -> &ClusterInvoker<C> {
        &self.members[0].invoker
    }

    /// Whether registry `index` lists at least one provider (Dubbo's `isAvailable`), in either of
    /// its lists.
    pub fn has_providers(&self, index: usize) -> bool {
        let member = &self.members[index];
        std::iter::once(&member.invoker)
            .chain(member.fallback.as_ref().map(|f| &f.invoker))
            .any(split::has_providers)
    }

    /// The registry the rules choose for `invocation`, leaving out those in `tried`.
    ///
    /// # Errors
    /// As [`choose_registry`].
    pub fn select(&self, invocation: &Invocation, tried: &[usize]) -> Result<usize, RpcError> {
        let available = |i: usize| !tried.contains(&i) && self.has_providers(i);
        let request = ZoneRequest::of(invocation);
        self.rng
            .with(|rng| choose_registry(&self.choices, &available, &request, rng))
    }

    /// Makes the call through the chosen registry's cluster invoker, in `mode`.
    ///
    /// # Errors
    /// As [`choose_registry`], or the chosen registry's cluster error (under failover, the last
    /// registry's, naming every registry tried).
    pub async fn invoke_in_mode(
        &self,
        invocation: &Invocation,
        mode: &ClusterMode,
    ) -> Result<C::Output, RpcError> {
        if self.members.len() == 1 {
            let invoker = self.members[0].for_call(&self.rng);
            return invoker.invoke_in_mode(invocation, mode).await;
        }
        // No allocation unless a registry fails under failover.
        let mut tried: Vec<usize> = Vec::new();
        let mut last_error: Option<RpcError> = None;
        loop {
            let index = match self.select(invocation, &tried) {
                Ok(index) => index,
                Err(error) => return Err(self.exhausted(last_error, &tried).unwrap_or(error)),
            };
            let member = &self.members[index];
            match member
                .for_call(&self.rng)
                .invoke_in_mode(invocation, mode)
                .await
            {
                Ok(output) => return Ok(output),
                Err(error) if !self.failover || !error.kind().is_retryable() => return Err(error),
                Err(error) => {
                    tracing::debug!(
                        error = &error as &dyn std::error::Error,
                        registry = member.choice.label(),
                        "registry failover: trying another registry"
                    );
                    tried.push(index);
                    last_error = Some(error);
                }
            }
        }
    }

    /// The error after failover found no registry left: the last one, naming every registry tried.
    fn exhausted(&self, last: Option<RpcError>, tried: &[usize]) -> Option<RpcError> {
        let last = last?;
        if tried.len() < 2 {
            return Some(last);
        }
        let names: Vec<&str> = tried
            .iter()
            .map(|&i| self.members[i].choice.label())
            .collect();
        Some(
            RpcError::new(
                last.kind(),
                // The last error is the source, which printers show after this message.
                format!("failed in every registry tried [{}]", names.join(", ")),
            )
            .with_source(last),
        )
    }
}

impl<C> fmt::Debug for ZoneAwareInvoker<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZoneAwareInvoker")
            .field("registries", &self.choices)
            .field("failover", &self.failover)
            .finish_non_exhaustive()
    }
}
