//! Calls waiting for their response, keyed by request id (zookeeper-client's `depot.rs` idea).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use rudder_common::error::{RpcError, RpcErrorKind};
use tokio::sync::oneshot;

use crate::codec::Frame;

/// What a waiting call receives: its response frame, or why the connection went away.
pub(crate) type Delivery = Result<Frame, RpcError>;

#[derive(Debug, Default)]
struct Table {
    calls: HashMap<i64, oneshot::Sender<Delivery>>,
    /// Set once; after it, no call may register and every waiting call has been failed.
    closed: Option<String>,
}

/// The pending-call table of one connection.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    table: Mutex<Table>,
}

impl Pending {
    fn lock(&self) -> MutexGuard<'_, Table> {
        // A panic while holding this lock cannot leave the map inconsistent; keep going.
        self.table
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers call `id`; fails with the close reason if the connection is closed.
    pub(crate) fn register(&self, id: i64) -> Result<oneshot::Receiver<Delivery>, RpcError> {
        let mut table = self.lock();
        if let Some(reason) = &table.closed {
            return Err(RpcError::new(RpcErrorKind::Network, reason.clone()));
        }
        let (tx, rx) = oneshot::channel();
        table.calls.insert(id, tx);
        Ok(rx)
    }

    /// Forgets call `id` (it timed out or was cancelled).
    pub(crate) fn remove(&self, id: i64) {
        self.lock().calls.remove(&id);
    }

    /// Hands a response to the call waiting for it; `false` if none is (it timed out already).
    pub(crate) fn complete(&self, id: i64, frame: Frame) -> bool {
        let waiter = self.lock().calls.remove(&id);
        match waiter {
            Some(tx) => tx.send(Ok(frame)).is_ok(),
            None => false,
        }
    }

    /// Fails call `id` alone with `error` (its response could not be taken); `false` if no call
    /// with that id is waiting.
    pub(crate) fn fail(&self, id: i64, error: RpcError) -> bool {
        let waiter = self.lock().calls.remove(&id);
        match waiter {
            Some(tx) => tx.send(Err(error)).is_ok(),
            None => false,
        }
    }

    /// Closes the table: every waiting call fails with a network error carrying `reason`.
    /// Only the first reason is kept.
    pub(crate) fn close(&self, reason: &str) {
        let calls = {
            let mut table = self.lock();
            if table.closed.is_none() {
                table.closed = Some(reason.to_owned());
            }
            std::mem::take(&mut table.calls)
        };
        for (_, tx) in calls {
            let _ = tx.send(Err(RpcError::new(RpcErrorKind::Network, reason)));
        }
    }

    /// The close reason, if closed.
    pub(crate) fn close_reason(&self) -> Option<String> {
        self.lock().closed.clone()
    }

    /// Calls still waiting.
    pub(crate) fn len(&self) -> usize {
        self.lock().calls.len()
    }
}

/// Removes a call from the table when its future ends early (timeout, cancellation).
#[derive(Debug)]
pub(crate) struct PendingGuard<'a> {
    pub(crate) pending: &'a Pending,
    pub(crate) id: i64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.pending.remove(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_fails_waiting_calls_and_refuses_new_ones() {
        let pending = Pending::default();
        let mut rx = pending.register(1).unwrap();
        pending.close("peer went away");
        pending.close("second reason is ignored");
        let err = rx.try_recv().unwrap().unwrap_err();
        assert_eq!(err.kind(), RpcErrorKind::Network);
        assert_eq!(err.message(), "peer went away");
        let refused = pending.register(2).unwrap_err();
        assert_eq!(refused.message(), "peer went away");
        assert_eq!(pending.len(), 0);
    }

    #[test]
    fn guard_removes_its_entry() {
        let pending = Pending::default();
        let _rx = pending.register(5).unwrap();
        drop(PendingGuard {
            pending: &pending,
            id: 5,
        });
        assert_eq!(pending.len(), 0);
    }
}
