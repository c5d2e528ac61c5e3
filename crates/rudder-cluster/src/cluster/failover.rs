//! `failover`: retry on another provider, `retries` times; never after a business exception.

use std::sync::Arc;

use rudder_common::error::{Attempt, RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;

use super::{Caller, Core};
use crate::provider::Provider;

impl<C: Caller + 'static> Core<C> {
    /// Up to `retries + 1` attempts among the listed providers not in `outside` (mergeable uses that to
    /// keep a group's failover within the group).
    pub(super) async fn failover(
        &self,
        invocation: &Invocation,
        retries: u32,
        outside: &[Arc<Provider>],
    ) -> Result<C::Output, RpcError> {
        let attempts = retries + 1;
        // Providers excluded from the next pick: `outside`, then those tried. No allocation unless
        // an attempt fails or there is an `outside`.
        let mut excluded: Vec<Arc<Provider>> = outside.to_vec();
        let mut failures: Vec<Attempt> = Vec::new();
        let mut last_error = None;
        for attempt in 1..=attempts {
            let picked = match self.pick(invocation, &excluded) {
                Ok(a) => a,
                // Every provider tried already: pick among all again (Dubbo's reselect fallback),
                // unless the last one said it has no such method: asking again, the same provider
                // or one already tried, gets the same answer (Dubbo asks, up to `retries` times).
                Err(e)
                    if e.kind() == RpcErrorKind::NoProvider && excluded.len() > outside.len() =>
                {
                    if last_said_no_such_method(&last_error) {
                        break;
                    }
                    self.pick(invocation, outside)?
                }
                Err(e) => return Err(e),
            };
            match self.call(&picked, invocation, attempt).await {
                Ok(out) => return Ok(out),
                Err(error) if !error.kind().is_retryable() => return Err(error),
                Err(error) => {
                    let provider = picked.provider.address();
                    tracing::debug!(
                        error = &error as &dyn std::error::Error,
                        provider,
                        attempt,
                        "failover: trying another provider"
                    );
                    failures.push(Attempt::new(
                        provider,
                        error.kind(),
                        error.message_with_causes(),
                    ));
                    excluded.push(picked.provider);
                    last_error = Some(error);
                }
            }
        }
        let last = last_error.expect("at least one attempt failed");
        let attempts = failures.len();
        let addresses: Vec<&str> = failures.iter().map(|a| a.provider.as_str()).collect();
        // The last error is the source, not part of the message: printers show it after this one.
        let message = format!(
            "failed to invoke method {} after {attempts} attempt{} on providers [{}]",
            invocation.method_name(),
            if attempts == 1 { "" } else { "s" },
            addresses.join(", "),
        );
        Err(RpcError::new(last.kind(), message)
            .with_attempts(failures)
            .with_source(last))
    }
}

fn last_said_no_such_method(last_error: &Option<RpcError>) -> bool {
    last_error
        .as_ref()
        .is_some_and(|e| e.kind() == RpcErrorKind::MethodNotFound)
}
