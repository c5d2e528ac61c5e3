//! The connections kept to one provider address, opened lazily and reopened with backoff.
//!
//! Each slot is `Idle`, `Connected` or `Failed`. A call takes the next slot round-robin; a slot
//! whose connection closed reconnects at once, while a slot whose *connect* failed refuses calls
//! (fast, with the last error) until its backoff expires: 100 ms doubling per consecutive failure
//! up to 10 s. Failing fast lets the cluster layer fail over instead of queueing behind a dead host.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rudder_common::error::{RpcError, RpcErrorKind};

use crate::connection::{Connection, ConnectionConfig};

const BACKOFF_BASE: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(10);

#[derive(Debug)]
enum SlotState {
    Idle,
    Connected(Connection),
    Failed {
        retry_at: Instant,
        failures: u32,
        error: String,
    },
}

#[derive(Debug)]
struct Slot {
    state: Mutex<SlotState>,
    /// Held while connecting, so concurrent callers share one attempt.
    connecting: tokio::sync::Mutex<()>,
}

/// The connections to one provider address.
#[derive(Debug)]
pub(crate) struct ProviderPool {
    addr: String,
    slots: Vec<Slot>,
    next: AtomicUsize,
}

fn backoff(failures: u32) -> Duration {
    BACKOFF_BASE
        .saturating_mul(1u32 << failures.saturating_sub(1).min(16))
        .min(BACKOFF_MAX)
}

impl ProviderPool {
    /// A pool of `size` (at least 1) connections to `addr`, none opened yet.
    pub(crate) fn new(addr: String, size: usize) -> ProviderPool {
        ProviderPool {
            addr,
            slots: (0..size.max(1))
                .map(|_| Slot {
                    state: Mutex::new(SlotState::Idle),
                    connecting: tokio::sync::Mutex::new(()),
                })
                .collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// A usable connection, opening one if needed.
    ///
    /// # Errors
    /// A `Network` error when connecting fails or the slot is backing off after a failure.
    pub(crate) async fn connection(
        &self,
        config: ConnectionConfig,
    ) -> Result<Connection, RpcError> {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len();
        let slot = &self.slots[index];
        if let Some(ready) = self.ready(slot) {
            return ready;
        }
        let _connecting = slot.connecting.lock().await;
        if let Some(ready) = self.ready(slot) {
            return ready;
        }
        match Connection::connect(&self.addr, config).await {
            Ok((connection, driver)) => {
                tokio::spawn(driver.run());
                *lock(&slot.state) = SlotState::Connected(connection.clone());
                Ok(connection)
            }
            Err(e) => {
                let mut state = lock(&slot.state);
                let failures = match &*state {
                    SlotState::Failed { failures, .. } => failures.saturating_add(1),
                    _ => 1,
                };
                *state = SlotState::Failed {
                    retry_at: Instant::now() + backoff(failures),
                    failures,
                    error: e.message().to_owned(),
                };
                Err(e)
            }
        }
    }

    /// `Some` when the slot can answer without connecting: a live connection, or a refusal
    /// during backoff. `None` means "connect now".
    fn ready(&self, slot: &Slot) -> Option<Result<Connection, RpcError>> {
        let state = lock(&slot.state);
        match &*state {
            SlotState::Connected(c) if !c.is_closed() && !c.is_readonly() => Some(Ok(c.clone())),
            SlotState::Failed {
                retry_at, error, ..
            } => {
                let wait = retry_at.saturating_duration_since(Instant::now());
                (!wait.is_zero()).then(|| {
                    Err(RpcError::new(
                        RpcErrorKind::Network,
                        format!(
                            "{} unavailable, next reconnect in {} ms; last error: {error}",
                            self.addr,
                            wait.as_millis()
                        ),
                    ))
                })
            }
            _ => None,
        }
    }

    /// Closes every connection; waiting calls fail with `reason`.
    pub(crate) fn close(&self, reason: &str) {
        for slot in &self.slots {
            let mut state = lock(&slot.state);
            if let SlotState::Connected(c) = &*state {
                c.close(reason);
            }
            *state = SlotState::Idle;
        }
    }
}

fn lock(state: &Mutex<SlotState>) -> MutexGuard<'_, SlotState> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        assert_eq!(backoff(1), Duration::from_millis(100));
        assert_eq!(backoff(2), Duration::from_millis(200));
        assert_eq!(backoff(5), Duration::from_millis(1600));
        assert_eq!(backoff(40), BACKOFF_MAX);
        assert_eq!(backoff(0), Duration::from_millis(100));
    }
}
