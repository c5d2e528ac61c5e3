//! The narrow interface between the call path and whoever watches calls (the metrics, feature
//! `metrics`): the consumer holds an `Option<Arc<dyn CallObserver>>` and knows nothing else of the
//! metrics, and the metrics know nothing of the consumer.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use rudder_cluster::provider::Provider;

/// Hears of every call a consumer sends, and of the providers it forgets.
pub(crate) trait CallObserver: Send + Sync + fmt::Debug {
    /// A call of `method` is sent to `provider` (after the pick). The token comes back to
    /// [`CallObserver::call_ended`] when the call ends or is cancelled.
    fn call_started(&self, provider: &Arc<Provider>, method: &str) -> CallToken;

    /// The call of `token` ended (answered, failed or cancelled).
    fn call_ended(&self, token: CallToken);

    /// The consumer pruned the statistics of every provider identity `keep` refuses: forget what is
    /// kept for them.
    fn retain(&self, keep: &dyn Fn(&str) -> bool);
}

/// What an observer keeps about one call in flight: its own handle on the call's series (no
/// allocation: an `Arc` the observer already holds) and when it started.
#[derive(Debug)]
// Only an observer reads these, and the one observer is the metrics (feature `metrics`).
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) struct CallToken {
    pub(crate) series: Option<Arc<dyn Any + Send + Sync>>,
    pub(crate) started: u64,
}

/// Ends a call for its observer when dropped, also when the call's future is dropped mid-call.
#[must_use = "the call is observed until this is dropped"]
pub(crate) struct Observed<'a> {
    observer: &'a dyn CallObserver,
    token: Option<CallToken>,
}

impl<'a> Observed<'a> {
    #[inline]
    pub(crate) fn start(
        observer: &'a dyn CallObserver,
        provider: &Arc<Provider>,
        method: &str,
    ) -> Observed<'a> {
        Observed {
            token: Some(observer.call_started(provider, method)),
            observer,
        }
    }
}

impl Drop for Observed<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            self.observer.call_ended(token);
        }
    }
}
