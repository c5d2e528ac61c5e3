//! A [`Timer`] on a manual clock: sleeps end when the test moves time past them, and spawned tasks run
//! when the test says so. Nothing here waits on real time.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use rudder_cluster::cluster::{BoxFuture, Timer};

#[derive(Default)]
pub(super) struct ManualTimer {
    now: Arc<AtomicU64>,
    tasks: Mutex<Vec<BoxFuture<()>>>,
}

impl std::fmt::Debug for ManualTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManualTimer")
            .field("now", &self.now)
            .field("tasks", &self.tasks())
            .finish()
    }
}

struct Sleep {
    now: Arc<AtomicU64>,
    until: u64,
}

impl Future for Sleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.now.load(Ordering::SeqCst) >= self.until {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Timer for ManualTimer {
    fn sleep(&self, delay: Duration) -> BoxFuture<()> {
        Box::pin(Sleep {
            now: Arc::clone(&self.now),
            until: self.now.load(Ordering::SeqCst) + delay.as_millis() as u64,
        })
    }
    fn spawn(&self, task: BoxFuture<()>) {
        self.tasks.lock().unwrap().push(task);
    }
}

impl ManualTimer {
    /// Polls every spawned task once; the finished ones go.
    pub(super) fn run(&self) {
        let mut tasks = std::mem::take(&mut *self.tasks.lock().unwrap());
        let mut cx = Context::from_waker(std::task::Waker::noop());
        tasks.retain_mut(|task| task.as_mut().poll(&mut cx).is_pending());
        // Tasks spawned while polling were pushed meanwhile; keep both.
        self.tasks.lock().unwrap().extend(tasks);
    }

    /// Moves time forward by `millis`, then runs the tasks.
    pub(super) fn advance(&self, millis: u64) {
        self.now.fetch_add(millis, Ordering::SeqCst);
        self.run();
    }

    /// Background tasks not yet finished.
    pub(super) fn tasks(&self) -> usize {
        self.tasks.lock().unwrap().len()
    }
}
