//! The connections kept to one provider address, opened lazily and reopened with backoff.
//!
//! Each slot is `Idle`, `Connecting`, `Connected` or `Failed`. A call takes the next slot
//! round-robin. Connecting runs on a task of its own, bounded by `connect.timeout`; callers wait for
//! it only until their own deadline, so a short call to a black-holed address fails on time while
//! the attempt (and its verdict for backoff) carries on, and concurrent callers share one attempt.
//!
//! A slot whose connect failed, or whose connection closed before a single well-formed frame came
//! back (a provider that accepts and hangs up at once), refuses calls fast, with the last error,
//! until its backoff expires: 100 ms doubling per consecutive failure up to 10 s, with jitter (see
//! [`Backoff`]). A connection that did carry traffic and then closed reconnects at once. Failing
//! fast lets the cluster layer fail over instead of queueing behind a dead host.
//!
//! The pool's [`Availability`] (what the cluster's `cluster.availablecheck` reads) is down while no
//! slot can take a call: each slot is down from the moment it starts a reconnect or its connect
//! fails, until its backoff expires (a call may try again then) or a connection opens.
//!
//! The pool holds one handle per connection; calls hold their own while they run. Dropping the pool
//! (a retired address) therefore closes each connection once its last call has ended.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use rudder_common::error::{RpcError, RpcErrorKind, TlsError, TlsFailure};
use rudder_common::status::availability::Availability;
use rudder_common::status::record::RecordAvailability;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::backoff::Backoff;
use crate::census::Census;
use crate::connection::{Connection, ConnectionConfig};

/// What waiting callers learn from a connect attempt (an `RpcError` cannot be cloned).
type Attempt = Option<Result<Connection, Refusal>>;

/// A failed connect as text, plus what it takes to rebuild its error for each caller: its kind and,
/// for a TLS failure, which one (so `RpcError::tls_failure` still answers).
#[derive(Debug, Clone)]
struct Refusal {
    kind: RpcErrorKind,
    message: String,
    /// The TLS failure, and the text of what caused it (the TLS library's words).
    tls: Option<(TlsFailure, String)>,
}

impl Refusal {
    fn of(error: &RpcError) -> Refusal {
        let tls = error.tls_failure().map(|failure| {
            // What lies under the `TlsError`, so that its reason is not said twice when rebuilt.
            let mut link = std::error::Error::source(error);
            while let Some(e) = link {
                link = e.source();
                if e.is::<TlsError>() {
                    break;
                }
            }
            let mut detail = Vec::new();
            while let Some(e) = link {
                detail.push(e.to_string());
                link = e.source();
            }
            (failure, detail.join(": "))
        });
        Refusal {
            kind: error.kind(),
            // Kept as text, so the causes (`Connection refused`) go into it; a TLS failure's reason
            // goes back under it as its `TlsError` instead.
            message: match tls {
                Some(_) => error.message().to_owned(),
                None => error.message_with_causes(),
            },
            tls,
        }
    }

    fn error(&self, message: String) -> RpcError {
        let error = RpcError::new(self.kind, message);
        match &self.tls {
            Some((failure, detail)) if detail.is_empty() => {
                error.with_source(TlsError::new(*failure))
            }
            Some((failure, detail)) => error.with_source(
                TlsError::new(*failure).with_cause(std::io::Error::other(detail.clone())),
            ),
            None => error,
        }
    }
}

#[derive(Debug)]
enum Phase {
    Idle,
    Connecting(watch::Receiver<Attempt>),
    Connected(Connection),
    Failed { retry_at: Instant, error: Refusal },
}

#[derive(Debug)]
struct SlotState {
    phase: Phase,
    /// Consecutive failures: failed connects, and connections that closed unanswered.
    failures: u32,
}

#[derive(Debug)]
struct Slot {
    state: Mutex<SlotState>,
    /// This slot's place in `health`.
    index: usize,
    health: Arc<Health>,
}

/// Which slots can take a call, and the pool's availability that follows from them.
#[derive(Debug)]
struct Health {
    availability: Availability,
    /// Per slot: `None` when it can take a call, else until when it cannot.
    down: Mutex<Vec<Option<Instant>>>,
}

impl Slot {
    /// Notes whether this slot can take a call (`None`) or until when it cannot. Called with the
    /// slot's lock held or not; `health` never takes a slot's lock.
    fn set_down(&self, until: Option<Instant>) {
        let mut down = self
            .health
            .down
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        down[self.index] = until;
        match down.iter().try_fold(None::<Instant>, |earliest, slot| {
            slot.map(|until| earliest.map_or(until, |e| e.min(until)))
                .map(Some)
        }) {
            Some(Some(until)) => self.health.availability.mark_down_until(until.into_std()),
            _ => self.health.availability.mark_up(),
        }
    }
}

/// What the owning protocol shares with its pools.
#[derive(Debug, Clone)]
pub(crate) struct PoolContext {
    pub(crate) census: Arc<Census>,
    pub(crate) backoff: Arc<Backoff>,
    /// Turns true (or closes) when the protocol shuts down or is dropped: connects are abandoned.
    pub(crate) closing: watch::Receiver<bool>,
    /// TLS for every connection of the protocol, when configured.
    pub(crate) tls: Option<crate::tls::TlsClient>,
}

impl PoolContext {
    fn is_closing(&self) -> bool {
        *self.closing.borrow() || self.closing.has_changed().is_err()
    }
}

/// The connections to one provider address.
#[derive(Debug)]
pub(crate) struct ProviderPool {
    addr: String,
    slots: Vec<Arc<Slot>>,
    next: AtomicUsize,
    context: PoolContext,
}

enum Step {
    Ready(Result<Connection, RpcError>),
    Wait(watch::Receiver<Attempt>),
}

impl ProviderPool {
    /// A pool of `size` (at least 1) connections to `addr`, none opened yet.
    pub(crate) fn new(addr: String, size: usize, context: PoolContext) -> ProviderPool {
        let size = size.max(1);
        let health = Arc::new(Health {
            availability: Availability::default(),
            down: Mutex::new(vec![None; size]),
        });
        ProviderPool {
            addr,
            slots: (0..size)
                .map(|index| {
                    Arc::new(Slot {
                        state: Mutex::new(SlotState {
                            phase: Phase::Idle,
                            failures: 0,
                        }),
                        index,
                        health: Arc::clone(&health),
                    })
                })
                .collect(),
            next: AtomicUsize::new(0),
            context,
        }
    }

    /// Whether this address can take a call: down while every connection is (re)connecting or
    /// backing off after a failure.
    pub(crate) fn availability(&self) -> &Availability {
        &self.slots[0].health.availability
    }

    /// The provider address (`host:port`).
    pub(crate) fn addr(&self) -> &str {
        &self.addr
    }

    /// A usable connection, opening one if needed. Cancel-safe: a caller that gives up (its
    /// deadline passed) leaves the connect attempt running for the next one.
    ///
    /// # Errors
    /// A `Network` error when connecting fails or the slot is backing off after a failure.
    pub(crate) async fn connection(
        &self,
        config: ConnectionConfig,
    ) -> Result<Connection, RpcError> {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len();
        let mut attempt = match self.step(&self.slots[index], config) {
            Step::Ready(ready) => return ready,
            Step::Wait(attempt) => attempt,
        };
        let outcome = match attempt.wait_for(Option::is_some).await {
            Ok(outcome) => outcome.clone(),
            Err(_) => None,
        };
        match outcome {
            Some(Ok(connection)) => Ok(connection),
            Some(Err(refusal)) => Err(refusal.error(refusal.message.clone())),
            None => Err(RpcError::new(
                RpcErrorKind::Network,
                format!("connect to {} abandoned", self.addr),
            )),
        }
    }

    fn step(&self, slot: &Arc<Slot>, config: ConnectionConfig) -> Step {
        step(slot, &self.addr, &self.context, config)
    }

    /// Closes every connection now, failing the calls in flight with `reason` (shutdown).
    pub(crate) fn close(&self, reason: &str) {
        for slot in &self.slots {
            let mut state = lock(slot);
            if let Phase::Connected(c) = &state.phase {
                c.close(reason);
            }
            state.phase = Phase::Idle;
            slot.set_down(None);
        }
    }
}

/// Decides, under the slot's lock, whether the slot can answer now or a connect is (or must
/// be) under way.
fn step(slot: &Arc<Slot>, addr: &str, context: &PoolContext, config: ConnectionConfig) -> Step {
    let mut state = lock(slot);
    let now = Instant::now();
    match &state.phase {
        Phase::Connected(c) if !c.is_closed() && !c.is_readonly() => {
            return Step::Ready(Ok(c.clone()))
        }
        Phase::Connected(c) if c.is_closed() && !c.was_answered() => {
            // Accepted, then closed before answering anything: as good as a failed connect.
            let reason = c.close_reason().unwrap_or_default();
            state.failures = state.failures.saturating_add(1);
            let retry_at = now + context.backoff.delay(state.failures);
            let error = Refusal {
                kind: RpcErrorKind::Network,
                message: format!("closed before any answer ({reason})"),
                tls: None,
            };
            let refusal = refusal(addr, &error, retry_at - now);
            state.phase = Phase::Failed { retry_at, error };
            slot.set_down(Some(retry_at));
            return Step::Ready(Err(refusal));
        }
        Phase::Connected(c) => {
            if c.is_closed() {
                state.failures = 0;
            }
        }
        Phase::Connecting(attempt) => return Step::Wait(attempt.clone()),
        Phase::Failed { retry_at, error } if *retry_at > now => {
            return Step::Ready(Err(refusal(addr, error, *retry_at - now)));
        }
        Phase::Failed { .. } | Phase::Idle => {}
    }
    if context.is_closing() {
        return Step::Ready(Err(shut_down()));
    }
    // A first connect is not a sign of trouble (Dubbo connects before the first call, so its
    // invokers start available); a reconnect is: down while it runs, so the calls already
    // waiting for it are all it risks.
    let reconnect = !matches!(state.phase, Phase::Idle) || state.failures > 0;
    let (report, attempt) = watch::channel(None);
    state.phase = Phase::Connecting(attempt.clone());
    if reconnect {
        slot.set_down(Some(now + config.connect_timeout));
    }
    let token = context.census.task();
    let (slot, addr, context) = (Arc::clone(slot), addr.to_owned(), context.clone());
    tokio::spawn(async move {
        let _token = token;
        connect(slot, addr, config, context, report).await;
    });
    Step::Wait(attempt)
}

/// A call refused while the slot backs off: of the last failure's kind when that was TLS (the
/// same certificate will fail again), else a network failure.
fn refusal(addr: &str, error: &Refusal, wait: std::time::Duration) -> RpcError {
    let message = format!(
        "{addr} unavailable, next reconnect in {} ms; last error: {}",
        wait.as_millis(),
        error.message
    );
    match error.tls {
        Some(_) => error.error(message),
        None => RpcError::new(RpcErrorKind::Network, message),
    }
}

/// One connect attempt for `slot`, on its own task: records the verdict, then tells the waiters.
async fn connect(
    slot: Arc<Slot>,
    addr: String,
    config: ConnectionConfig,
    context: PoolContext,
    report: watch::Sender<Attempt>,
) {
    let mut closing = context.closing.clone();
    let opened = tokio::select! {
        opened = Connection::connect(&addr, config, context.tls.as_ref(), &context.census) => opened,
        _ = closing.wait_for(|closing| *closing) => Err(shut_down()),
    };
    let outcome = {
        let mut state = lock(&slot);
        match opened {
            // Checked under the lock, so a shutdown either sees this connection or stops it here.
            Ok(_) if context.is_closing() => {
                state.phase = Phase::Idle;
                slot.set_down(None);
                Err(Refusal::of(&shut_down()))
            }
            Ok((connection, driver)) => {
                driver.spawn();
                watch_close(&slot, &connection, &context);
                state.phase = Phase::Connected(connection.clone());
                slot.set_down(None);
                Ok(connection)
            }
            Err(e) => {
                // Kept as text (an `RpcError` is not `Clone`; every waiter gets its own).
                let error = Refusal::of(&e);
                if error.tls.is_some() {
                    tracing::warn!(addr = %addr, error = %e.message_with_causes(), "TLS to a provider failed");
                }
                state.failures = state.failures.saturating_add(1);
                let retry_at = Instant::now() + context.backoff.delay(state.failures);
                state.phase = Phase::Failed {
                    retry_at,
                    error: error.clone(),
                };
                slot.set_down(Some(retry_at));
                Err(error)
            }
        }
    };
    report.send_replace(Some(outcome));
}

/// When `connection` closes by itself (the provider died, reset it, stopped answering heartbeats),
/// marks the slot down for one backoff delay at once, so the cluster stops picking the provider
/// without waiting for calls to find the connection closed; the first call after that reconnects
/// (as the first call after a close always does). Holds the slot weakly: a retired pool's
/// connections close, and this ends with them.
fn watch_close(slot: &Arc<Slot>, connection: &Connection, context: &PoolContext) {
    let mut closed = connection.closed();
    let (slot, backoff) = (Arc::downgrade(slot), Arc::clone(&context.backoff));
    let token = context.census.task();
    tokio::spawn(async move {
        let _token = token;
        // An error means the connection's state is gone: closed as well.
        let _ = closed.wait_for(|closed| *closed).await;
        let Some(slot) = slot.upgrade() else { return };
        let state = lock(&slot);
        // Only while the slot still holds the closed connection: a call may have reconnected.
        if matches!(&state.phase, Phase::Connected(c) if c.is_closed()) {
            slot.set_down(Some(Instant::now() + backoff.delay(1)));
        }
    });
}

fn shut_down() -> RpcError {
    RpcError::new(RpcErrorKind::Network, "dubbo protocol is shut down")
}

fn lock(slot: &Slot) -> MutexGuard<'_, SlotState> {
    slot.state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
