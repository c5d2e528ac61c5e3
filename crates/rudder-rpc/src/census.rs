//! Who owns what: counts of the open sockets and the live tasks (connect, driver and writer tasks)
//! of one [`DubboProtocol`](crate::DubboProtocol), plus a crate-wide task count, so shutdown can wait
//! for "none left" and tests can assert it.
//!
//! Every count is held by a token: created before the thing it counts exists (a task's token before
//! the spawn), dropped when it is gone, so a count can never miss a task that is scheduled but has
//! not run yet.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::{watch, Notify};

/// Connect, driver and writer tasks alive in the whole process, over every protocol instance.
static LIVE_TASKS: AtomicUsize = AtomicUsize::new(0);
/// Woken each time [`LIVE_TASKS`] drops to zero.
static NO_LIVE_TASKS: Notify = Notify::const_new();

/// Connect, driver and writer tasks of every [`DubboProtocol`](crate::DubboProtocol) in this
/// process (and of connections opened by the fuzz entry points), running or scheduled.
///
/// Zero once every protocol has been shut down or dropped and its connections have closed.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // Nothing was ever opened here.
/// assert_eq!(rudder_rpc::live_connection_tasks(), 0);
/// # }
/// ```
pub fn live_connection_tasks() -> usize {
    LIVE_TASKS.load(Ordering::SeqCst)
}

/// Returns once [`live_connection_tasks`] is zero: when the last protocol handle is dropped, its
/// connections' tasks end a moment later, with nothing else to wait on (its own
/// [`wait_until_idle`](crate::DubboProtocol::wait_until_idle) went with it). Bound it with a
/// timeout: tasks of protocols still in use never end.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// rudder_rpc::connection_tasks_ended().await; // nothing was ever opened here
/// # }
/// ```
pub async fn connection_tasks_ended() {
    loop {
        // Registered before the count is read, so a drop to zero in between still wakes it.
        let mut notified = std::pin::pin!(NO_LIVE_TASKS.notified());
        notified.as_mut().enable();
        if LIVE_TASKS.load(Ordering::SeqCst) == 0 {
            return;
        }
        notified.await;
    }
}

/// The counters of one protocol instance.
#[derive(Debug)]
pub(crate) struct Census {
    tasks: watch::Sender<usize>,
    sockets: watch::Sender<usize>,
}

impl Default for Census {
    fn default() -> Census {
        Census {
            tasks: watch::channel(0).0,
            sockets: watch::channel(0).0,
        }
    }
}

impl Census {
    /// Counts one more task until the token is dropped; take it before spawning.
    pub(crate) fn task(self: &Arc<Census>) -> TaskToken {
        LIVE_TASKS.fetch_add(1, Ordering::SeqCst);
        self.tasks.send_modify(|n| *n += 1);
        TaskToken {
            census: Arc::clone(self),
        }
    }

    /// Counts one more open socket until the token is dropped.
    pub(crate) fn socket(self: &Arc<Census>) -> SocketToken {
        self.sockets.send_modify(|n| *n += 1);
        SocketToken {
            census: Arc::clone(self),
        }
    }

    /// Tasks alive now.
    pub(crate) fn live_tasks(&self) -> usize {
        *self.tasks.borrow()
    }

    /// Sockets open now.
    pub(crate) fn open_sockets(&self) -> usize {
        *self.sockets.borrow()
    }

    /// Returns once no task is alive.
    pub(crate) async fn all_tasks_ended(&self) {
        let mut rx = self.tasks.subscribe();
        // The sender lives in `self`, so the channel cannot close under us.
        let _ = rx.wait_for(|n| *n == 0).await;
    }

    /// Returns once no task is alive and no socket open.
    pub(crate) async fn idle(&self) {
        let mut sockets = self.sockets.subscribe();
        let _ = sockets.wait_for(|n| *n == 0).await;
        self.all_tasks_ended().await;
    }
}

/// One live task; see [`Census::task`].
#[derive(Debug)]
pub(crate) struct TaskToken {
    census: Arc<Census>,
}

impl Drop for TaskToken {
    fn drop(&mut self) {
        // The process-wide count first: whoever wakes on this protocol's count reaching zero must
        // find the process-wide one updated too.
        if LIVE_TASKS.fetch_sub(1, Ordering::SeqCst) == 1 {
            NO_LIVE_TASKS.notify_waiters();
        }
        self.census.tasks.send_modify(|n| *n -= 1);
    }
}

/// One open socket; see [`Census::socket`].
#[derive(Debug)]
pub(crate) struct SocketToken {
    census: Arc<Census>,
}

impl Drop for SocketToken {
    fn drop(&mut self) {
        self.census.sockets.send_modify(|n| *n -= 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tokens_count_until_dropped() {
        let census = Arc::new(Census::default());
        let (task, socket) = (census.task(), census.socket());
        assert_eq!((census.live_tasks(), census.open_sockets()), (1, 1));
        let waiter = {
            let census = Arc::clone(&census);
            tokio::spawn(async move { census.all_tasks_ended().await })
        };
        drop(socket);
        assert_eq!(census.open_sockets(), 0);
        assert!(!waiter.is_finished());
        drop(task);
        waiter.await.unwrap();
        assert_eq!(census.live_tasks(), 0);
    }
}
