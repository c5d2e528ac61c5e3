//! What the cluster invoker is generic over: the call to one provider.

use std::future::Future;
use std::sync::Arc;

use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;

use crate::provider::Provider;

/// Makes one call to one provider.
pub trait Caller: Send + Sync {
    /// What a successful call returns.
    type Output: Send + 'static;

    /// The empty result `failsafe` and `failback` return instead of an error (Dubbo: a `null` value).
    fn empty(&self) -> Self::Output;

    /// Calls `provider`.
    fn call(
        &self,
        provider: &Arc<Provider>,
        invocation: &Invocation,
    ) -> impl Future<Output = Result<Self::Output, RpcError>> + Send;

    /// Called after each call has been counted as ended in the provider's statistics (by the
    /// invoker's statistics layer): a call slot under `actives` is free again. Back-pressure (a tower `poll_ready`) wakes its waiters here.
    fn call_ended(&self) {}

    /// The business exception `output` carries, if the provider's method threw (a description). Such an
    /// answer is a success everywhere except in `broadcast`, where it fails the provider, and `mergeable`,
    /// which leaves it out of the merge (both as Dubbo). Default: outputs never carry one.
    fn exception(&self, output: &Self::Output) -> Option<String> {
        let _ = output;
        None
    }

    /// Whether `output` carries a business exception: [`Caller::exception`] without its
    /// description, asked on every answer (the statistics count exceptions). Override it when the
    /// description costs an allocation.
    fn is_exception(&self, output: &Self::Output) -> bool {
        self.exception(output).is_some()
    }

    /// The string attachment `key` of a provider's answer, if it sent one (the `lb_adaptive` load
    /// report the `adaptive` balancer reads). Default: answers carry none.
    fn answer_attachment<'a>(&self, output: &'a Self::Output, key: &str) -> Option<&'a str> {
        let _ = (output, key);
        None
    }

    /// Merges the outputs of several provider groups, in group order, with the named `merger`
    /// (`mergeable`). [`merger::merge_values`](super::merger::merge_values) implements Dubbo's built-in mergers over
    /// [`Value`](rudder_common::Value)s.
    ///
    /// # Errors
    /// When the outputs cannot be merged that way. Default: always (this caller cannot merge).
    fn merge(&self, merger: &str, outputs: Vec<Self::Output>) -> Result<Self::Output, RpcError> {
        let _ = outputs;
        Err(RpcError::new(
            RpcErrorKind::Unknown,
            format!("this caller cannot merge results (merger={merger})"),
        ))
    }
}
