//! The bridge from the cluster invoker to the wire: one dubbo:// call to one provider.

use std::sync::Arc;

use rudder_cluster::cluster::Caller;
use rudder_cluster::provider::Provider;
use rudder_common::error::RpcError;
use rudder_common::invocation::Invocation;
use rudder_common::Value;
use rudder_rpc::{DubboProtocol, RpcResponse};

/// Calls providers over dubbo://. The cluster invoker counts each call in the provider's statistics.
#[derive(Debug, Clone, Default)]
pub(crate) struct DubboCaller {
    pub(crate) protocol: DubboProtocol,
}

impl Caller for DubboCaller {
    type Output = RpcResponse;

    fn empty(&self) -> RpcResponse {
        RpcResponse::from_value(Value::Null)
    }

    async fn call(
        &self,
        provider: &Arc<Provider>,
        invocation: &Invocation,
    ) -> Result<RpcResponse, RpcError> {
        self.protocol.invoke(provider.url(), invocation).await
    }
}
