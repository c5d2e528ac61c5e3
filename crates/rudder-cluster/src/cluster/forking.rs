//! `forking`: `forks` providers at once; the first answer wins and the other calls are cancelled.
//!
//! As Dubbo: `forks` distinct providers picked by the load balancer (all of them when `forks` is 0 or at
//! least the number listed); a business exception is an answer and can win; the call fails only when
//! every fork has failed, with the last failure's kind. Unlike Dubbo, the losers' calls are cancelled
//! (their futures dropped, their `actives` slots freed) instead of left running, the deadline is the
//! method's `timeout` (Dubbo reads the service-level one), and a call that passes its deadline fails with
//! [`RpcErrorKind::Timeout`] listing what each fork did (Dubbo 3 returns `null`; 2.7.16+ waits forever).

use std::sync::Arc;
use std::time::Duration;

use rudder_common::error::{Attempt, RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;

use super::timer::first_ok;
use super::{Caller, Core, Picked};
use crate::provider::Provider;

type Fork<'a, T> = super::timer::Branch<'a, Result<T, RpcError>>;

impl<C: Caller + 'static> Core<C> {
    pub(super) async fn forking(
        &self,
        invocation: &Invocation,
        forks: u32,
        timeout_millis: u64,
    ) -> Result<C::Output, RpcError> {
        let selected = self.pick_forks(invocation, forks)?;
        let futures: Vec<Fork<'_, C::Output>> = selected
            .iter()
            .enumerate()
            .map(|(i, picked)| {
                Box::pin(self.call(picked, invocation, i as u32 + 1)) as Fork<'_, C::Output>
            })
            .collect();
        let deadline = self
            .timer
            .get()
            .map(|timer| timer.sleep(Duration::from_millis(timeout_millis)));
        let mut failures: Vec<Attempt> = Vec::new();
        let mut last_kind = RpcErrorKind::Unknown;
        let won = first_ok(futures, deadline, |index, error: RpcError| {
            last_kind = error.kind();
            let provider = selected[index].provider.address();
            failures.push(Attempt::new(
                provider,
                error.kind(),
                error.message_with_causes(),
            ));
        })
        .await;
        if let Some(out) = won {
            return Ok(out);
        }
        let addresses: Vec<&str> = selected.iter().map(|p| p.provider.address()).collect();
        let method = invocation.method_name();
        let error = if failures.len() == selected.len() {
            let last = failures.last().map_or("", |a| a.message.as_str());
            RpcError::new(
                last_kind,
                format!(
                    "forking: every provider failed for {method} [{}]; last error: {last}",
                    addresses.join(", ")
                ),
            )
        } else {
            // The forks still running when the deadline passed are cancelled and listed as such.
            for picked in &selected {
                let address = picked.provider.address();
                if !failures.iter().any(|a| a.provider == address) {
                    let message = format!("no answer within {timeout_millis} ms; cancelled");
                    failures.push(Attempt::new(address, RpcErrorKind::Timeout, message));
                }
            }
            RpcError::new(
                RpcErrorKind::Timeout,
                format!(
                    "forking: no answer for {method} from [{}] within {timeout_millis} ms",
                    addresses.join(", ")
                ),
            )
        };
        Err(error.with_attempts(failures))
    }

    /// `forks` distinct providers chosen by the load balancer, or all when `forks` is 0 or covers them.
    fn pick_forks(&self, invocation: &Invocation, forks: u32) -> Result<Vec<Picked>, RpcError> {
        let all = self.pick_all(invocation)?;
        if forks == 0 || forks as usize >= all.len() {
            return Ok(all);
        }
        let mut selected: Vec<Picked> = Vec::with_capacity(forks as usize);
        let mut chosen: Vec<Arc<Provider>> = Vec::with_capacity(forks as usize);
        while selected.len() < forks as usize {
            // Excluding those chosen, each pick is a new provider; a pick can fail only when a policy
            // refuses all the rest, and then the forks are those chosen so far.
            match self.pick(invocation, &chosen) {
                Ok(picked)
                    if !chosen
                        .iter()
                        .any(|c| c.identity() == picked.provider.identity()) =>
                {
                    chosen.push(Arc::clone(&picked.provider));
                    selected.push(picked);
                }
                Ok(_) | Err(_) if !selected.is_empty() => break,
                Ok(_) => unreachable!("a first pick cannot repeat"),
                Err(error) => return Err(error),
            }
        }
        Ok(selected)
    }
}
