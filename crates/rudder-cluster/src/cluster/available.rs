//! `available`: no balancing; the first provider, in list order, not known to be failing.
//!
//! Dubbo asks each invoker `isAvailable()`, i.e. whether its connection is up. The cluster layer sees
//! only calls, so rudder defines it from them: a provider is **known to be failing** when the last call
//! this invoker made to it failed with a network error (connection refused, reset, not connected),
//! nothing has succeeded on it since, and that failure is less than [`RECHECK_MILLIS`] old, or (with
//! `cluster.availablecheck`) its transport says its connection is down. After that
//! window one call tries it again (Dubbo's reconnect task retries every second as well). When every
//! listed provider is known to be failing, the first listed is called anyway: a probe, rather than an
//! error without trying.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rudder_common::clock::Clock;
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;

use super::{no_provider, Caller, Core, Picked};
use crate::provider::Provider;

/// How long a network failure marks a provider as failing, ms (Dubbo's reconnect period).
pub const RECHECK_MILLIS: i64 = 1_000;

/// Providers whose last call failed with a network error, and when.
///
/// Only failures add entries and an entry older than [`RECHECK_MILLIS`] is dropped on the next insert,
/// so it holds at most the providers that failed within the window.
#[derive(Debug, Default)]
pub(super) struct KnownFailing {
    /// `entries.len()`, read without the lock: successes on healthy providers cost one load.
    count: AtomicUsize,
    entries: Mutex<Vec<(Arc<str>, i64)>>,
}

impl KnownFailing {
    /// Notes how a call to `provider` ended.
    pub(super) fn observe(&self, provider: &Provider, error: Option<&RpcError>, clock: &dyn Clock) {
        match error {
            Some(e) if e.kind() == RpcErrorKind::Network => {
                let now = clock.now_millis();
                let mut entries = self.lock();
                entries.retain(|(identity, at)| {
                    now - at < RECHECK_MILLIS && **identity != *provider.identity()
                });
                entries.push((Arc::clone(provider.shared_identity()), now));
                self.count.store(entries.len(), Ordering::Release);
            }
            Some(_) => {}
            None => {
                if self.count.load(Ordering::Acquire) == 0 {
                    return;
                }
                let mut entries = self.lock();
                entries.retain(|(identity, _)| **identity != *provider.identity());
                self.count.store(entries.len(), Ordering::Release);
            }
        }
    }

    /// Whether `provider` is known to be failing at `now`.
    pub(super) fn is_failing(&self, provider: &Provider, now: i64) -> bool {
        if self.count.load(Ordering::Acquire) == 0 {
            return false;
        }
        self.lock()
            .iter()
            .any(|(identity, at)| **identity == *provider.identity() && now - at < RECHECK_MILLIS)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(Arc<str>, i64)>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<C: Caller + 'static> Core<C> {
    pub(super) async fn available(&self, invocation: &Invocation) -> Result<C::Output, RpcError> {
        let picked = self.first_available(invocation)?;
        self.call(&picked, invocation, 1).await
    }

    fn first_available(&self, invocation: &Invocation) -> Result<Picked, RpcError> {
        let now = self.balancer.clock().now_millis();
        let directory = self.balancer.directory();
        directory.with_current(|snapshot| {
            self.balancer
                .with_routed_view(snapshot, invocation, |view| {
                    if view.is_empty() {
                        return Err(no_provider(invocation));
                    }
                    let check = self.balancer.checks_availability();
                    let index = view
                        .providers()
                        .iter()
                        .position(|p| {
                            !self.failing.is_failing(p, now) && (!check || p.is_available())
                        })
                        .unwrap_or(0);
                    Ok(Picked::new(view, index))
                })
        })
    }
}
