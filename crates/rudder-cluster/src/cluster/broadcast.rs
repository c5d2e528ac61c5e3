//! `broadcast`: every listed provider, one after another in list order; any failure fails the call.
//!
//! As Dubbo (2.7.10+): a business exception counts as a failure; once `broadcast.fail.percent` of all
//! providers (rounded down) have failed, the rest are not called; the call fails with the last failure,
//! otherwise returns the last answer. Unlike Dubbo, a threshold that rounds to 0 (`broadcast.fail.percent=0`,
//! or a small share of few providers) stops at the first failure (Dubbo's `==` check never matches 0, so
//! it calls everyone), and a business exception fails with kind [`RpcErrorKind::Biz`] (Dubbo wraps it
//! as code 0). Every failure is listed in [`RpcError::attempts`].

use rudder_common::error::{Attempt, RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;

use super::{Caller, Core};

impl<C: Caller + 'static> Core<C> {
    pub(super) async fn broadcast(
        &self,
        invocation: &Invocation,
        fail_percent: u32,
    ) -> Result<C::Output, RpcError> {
        let all = self.pick_all(invocation)?;
        let threshold = (all.len() * fail_percent.min(100) as usize / 100).max(1);
        let mut failures: Vec<Attempt> = Vec::new();
        let mut last = None;
        let mut calls = 0;
        for (i, picked) in all.iter().enumerate() {
            calls += 1;
            let address = picked.provider.address();
            match self.call(picked, invocation, i as u32 + 1).await {
                Ok(out) => match self.caller().exception(&out) {
                    None => last = Some(out),
                    Some(exception) => {
                        failures.push(Attempt::new(address, RpcErrorKind::Biz, exception));
                    }
                },
                Err(error) => {
                    failures.push(Attempt::new(
                        address,
                        error.kind(),
                        error.message_with_causes(),
                    ));
                }
            }
            if failures.len() >= threshold {
                break;
            }
        }
        match (failures.last(), last) {
            (None, Some(out)) => Ok(out),
            (None, None) => unreachable!("a provider was called"),
            (Some(failure), _) => {
                let message = format!(
                    "broadcast: {} of {calls} providers called ({} listed) failed for {}; last error on {}: {}",
                    failures.len(),
                    all.len(),
                    invocation.method_name(),
                    failure.provider,
                    failure.message
                );
                Err(RpcError::new(failure.kind, message).with_attempts(failures))
            }
        }
    }
}
