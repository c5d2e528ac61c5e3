//! The guards of a counted call: whatever happens to the call, its slot is given back once.

use std::sync::Arc;

use super::{MethodStatus, ProviderStatus, RpcStatus};

/// A call being counted. [`ActiveCall::finish`] records its outcome; dropping it unfinished records a
/// failure with zero elapsed time, so an active slot can never leak (unlike apache/dubbo#16455).
#[derive(Debug)]
#[must_use = "an ActiveCall counts as failed when dropped without finish()"]
pub struct ActiveCall {
    pub(super) provider: Arc<ProviderStatus>,
    pub(super) method: MethodStatus,
    pub(super) done: bool,
}

impl ActiveCall {
    /// Records the end of the call: elapsed milliseconds and whether it succeeded.
    ///
    /// A business exception returned by the provider is a success here, as in Dubbo: the provider answered.
    pub fn finish(mut self, elapsed_millis: i64, succeeded: bool) {
        self.end(elapsed_millis, succeeded);
    }

    fn end(&mut self, elapsed_millis: i64, succeeded: bool) {
        if !std::mem::replace(&mut self.done, true) {
            record_end(
                &self.provider.service,
                &self.method,
                elapsed_millis,
                succeeded,
            );
        }
    }
}

impl Drop for ActiveCall {
    fn drop(&mut self) {
        self.end(0, false);
    }
}

/// [`ActiveCall`] borrowing the counters ([`RecordCall::begin_borrowed`](super::record::RecordCall::begin_borrowed)): the same accounting,
/// [`BorrowedCall::finish`] or a failure with zero elapsed time when dropped unfinished.
#[derive(Debug)]
#[must_use = "a BorrowedCall counts as failed when dropped without finish()"]
pub struct BorrowedCall<'a> {
    pub(super) service: &'a RpcStatus,
    pub(super) method: &'a RpcStatus,
    pub(super) done: bool,
}

impl BorrowedCall<'_> {
    /// Records the end of the call, as [`ActiveCall::finish`] does.
    pub fn finish(mut self, elapsed_millis: i64, succeeded: bool) {
        self.end(elapsed_millis, succeeded);
    }

    fn end(&mut self, elapsed_millis: i64, succeeded: bool) {
        if !std::mem::replace(&mut self.done, true) {
            record_end(self.service, self.method, elapsed_millis, succeeded);
        }
    }
}

impl Drop for BorrowedCall<'_> {
    fn drop(&mut self) {
        self.end(0, false);
    }
}

/// A counted call's end, in the provider-wide counters and the method's.
fn record_end(service: &RpcStatus, method: &RpcStatus, elapsed_millis: i64, succeeded: bool) {
    service.record_end(elapsed_millis, succeeded);
    method.record_end(elapsed_millis, succeeded);
}
