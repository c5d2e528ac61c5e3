//! tri:// behind the endpoint seam: [`TripleProtocol`] is the [`Transport`] of tri:// providers.

use std::sync::Arc;

use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_rpc::endpoint::{Endpoint, ShutdownFuture, Transport};

use crate::protocol::TripleProtocol;

impl Transport for TripleProtocol {
    fn endpoint(&self, url: &DubboUrl) -> Endpoint {
        let target = Arc::new((self.clone(), url.clone()));
        Endpoint::from_fn(move |invocation: Invocation| {
            let target = Arc::clone(&target);
            async move { target.0.invoke(&target.1, &invocation).await }
        })
    }

    fn retain_addresses(&self, keep: &dyn Fn(&str) -> bool) {
        TripleProtocol::retain_addresses(self, keep);
    }

    fn open_connections(&self) -> usize {
        TripleProtocol::open_connections(self)
    }

    fn shutdown(&self) -> ShutdownFuture {
        // Calls in flight keep their connection until they end; nothing is left to wait for here.
        TripleProtocol::shutdown(self);
        Box::pin(std::future::ready(()))
    }
}
