//! Time and background work for the modes that need them, without tying this crate to a runtime.
//!
//! `failback` retries in the background and `forking` bounds its race by a deadline. Both go through a
//! [`Timer`] the caller of [`ClusterInvoker::with_timer`](super::ClusterInvoker::with_timer) provides:
//! the facade implements it with tokio, tests with a manual clock.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// A boxed, sendable future borrowing for `'a`: one of several polled together.
pub(crate) type Branch<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Sleeps and runs background tasks.
///
/// ```
/// use std::time::Duration;
/// use rudder_cluster::cluster::{BoxFuture, Timer};
///
/// /// Runs nothing in the background and never wakes: modes needing a timer then behave as without one.
/// #[derive(Debug)]
/// struct Never;
/// impl Timer for Never {
///     fn sleep(&self, _: Duration) -> BoxFuture<()> {
///         Box::pin(std::future::pending())
///     }
///     fn spawn(&self, task: BoxFuture<()>) {
///         drop(task);
///     }
/// }
/// # let _ = Never.sleep(Duration::from_secs(1));
/// ```
pub trait Timer: Send + Sync + fmt::Debug {
    /// A future that completes `delay` from now.
    fn sleep(&self, delay: Duration) -> BoxFuture<()>;

    /// Runs `task` to completion in the background. The task ends on its own when the invoker that
    /// spawned it is dropped, so the timer need not track it.
    fn spawn(&self, task: BoxFuture<()>);
}

/// A one-way "closed" signal: background tasks wait on it alongside their sleeps, so dropping the
/// invoker ends them at once instead of at their next wake-up.
#[derive(Debug, Default)]
pub(crate) struct Closed {
    closed: AtomicBool,
    wakers: Mutex<Vec<Waker>>,
}

impl Closed {
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let wakers =
            std::mem::take(&mut *self.wakers.lock().unwrap_or_else(PoisonError::into_inner));
        for waker in wakers {
            waker.wake();
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Waits for `sleep`; `false` when closed first.
    pub(crate) async fn sleep(&self, sleep: BoxFuture<()>) -> bool {
        let mut sleep = sleep;
        std::future::poll_fn(|cx| {
            if self.is_closed() {
                return Poll::Ready(false);
            }
            self.register(cx.waker());
            // Closed between the check and the registration: the waker may have been missed.
            if self.is_closed() {
                return Poll::Ready(false);
            }
            sleep.as_mut().poll(cx).map(|()| true)
        })
        .await
    }

    fn register(&self, waker: &Waker) {
        let mut wakers = self.wakers.lock().unwrap_or_else(PoisonError::into_inner);
        // Waiters are the invoker's pending failback tasks, at most `failbacktasks` of them; each
        // takes its waker off when it ends (`unregister`), so the list stays that short.
        if !wakers.iter().any(|w| w.will_wake(waker)) {
            wakers.push(waker.clone());
        }
    }

    /// Forgets `waker` (its task has ended).
    pub(crate) fn unregister(&self, waker: &Waker) {
        self.wakers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|w| !w.will_wake(waker));
    }
}

/// Polls `futures` together; the first `Ok` wins and the others are dropped (cancelled). `Err`s are
/// handed to `failed` as they come. `deadline`, if any, ends the race with `None`.
///
/// Every future is polled on each wake-up: races are a handful of forks, so per-future wakers would cost
/// more than they save.
pub(crate) async fn first_ok<T, E>(
    mut futures: Vec<Branch<'_, Result<T, E>>>,
    mut deadline: Option<BoxFuture<()>>,
    mut failed: impl FnMut(usize, E),
) -> Option<T> {
    let mut done = vec![false; futures.len()];
    std::future::poll_fn(|cx: &mut Context<'_>| {
        for (index, future) in futures.iter_mut().enumerate() {
            if done[index] {
                continue;
            }
            if let Poll::Ready(result) = future.as_mut().poll(cx) {
                done[index] = true;
                match result {
                    Ok(value) => return Poll::Ready(Some(value)),
                    Err(error) => failed(index, error),
                }
            }
        }
        if done.iter().all(|d| *d) {
            return Poll::Ready(None);
        }
        if let Some(deadline) = deadline.as_mut() {
            if deadline.as_mut().poll(cx).is_ready() {
                return Poll::Ready(None);
            }
        }
        Poll::Pending
    })
    .await
}

/// Polls `futures` together until all are done; their outputs in input order.
pub(crate) async fn join_all<T>(mut futures: Vec<Branch<'_, T>>) -> Vec<T> {
    let mut outputs: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx: &mut Context<'_>| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_some() {
                continue;
            }
            match future.as_mut().poll(cx) {
                Poll::Ready(value) => *output = Some(value),
                Poll::Pending => pending = true,
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}
