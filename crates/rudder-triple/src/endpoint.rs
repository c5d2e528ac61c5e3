//! tri:// behind the endpoint seam: [`TripleProtocol`] is the [`Transport`] of tri:// providers.

use std::sync::Arc;

use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;
use rudder_common::status::record::RecordAvailability;
use rudder_common::url::DubboUrl;
use rudder_rpc::backoff::Backoff;
use rudder_rpc::endpoint::{Endpoint, ShutdownFuture, Transport};

use crate::protocol::TripleProtocol;

impl Transport for TripleProtocol {
    fn endpoint(&self, url: &DubboUrl) -> Endpoint {
        let availability = self.availability(url);
        let target = Arc::new((self.clone(), url.clone(), availability.clone()));
        Endpoint::from_fn(move |invocation: Invocation| {
            let target = Arc::clone(&target);
            async move {
                let answer = target.0.invoke(&target.1, &invocation).await;
                // tonic reconnects by itself, so a connection lost after it opened shows only as
                // calls failing with a network error: down for one backoff delay, until a call
                // goes through again (a failed connect has marked its own, longer, delay).
                match &answer {
                    Ok(_) => target.2.mark_up(),
                    Err(e) if e.kind() == RpcErrorKind::Network && !target.2.is_down() => {
                        target
                            .2
                            .mark_down_until(std::time::Instant::now() + Backoff::ceiling(1));
                    }
                    Err(_) => {}
                }
                answer
            }
        })
        .with_availability(availability)
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
