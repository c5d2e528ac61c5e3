//! rudder calling apache-dubbo, Dubbo's own Python implementation (PyPI `apache-dubbo` 3.0.0b1), over
//! Triple: its provider serves proto/greeter.proto's `SayHello` with protobuf messages and registers
//! in ZooKeeper the way that library does (`tri://HOST:PORT?service=<interface>`, no path); a rudder
//! reference finds it there and a tonic-generated client over `grpc_channel()` calls it.

use std::time::Duration;

use rudder::Reference;
use rudder_it::{Peer, PeerConfig, PeerKind, ZooKeeperContainer};

use crate::triple_proto::proto::greeter_client::GreeterClient;
use crate::triple_proto::proto::HelloRequest;

const SERVICE: &str = "org.rudder.it.proto.Greeter";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apache_dubbo_python_provider_registered_in_zookeeper_answers_a_tonic_client() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let config = PeerConfig::new(
        PeerKind::PythonDubbo,
        &zookeeper.connect_string(),
        "python-dubbo",
    );
    let peer = Peer::start(config, Duration::from_secs(120)).await.unwrap();

    let greeter = Reference::builder(SERVICE)
        .registry(&format!("zookeeper://{}", zookeeper.connect_string()))
        .application("rudder-it")
        .timeout(Duration::from_secs(5))
        .build()
        .await
        .unwrap();
    let providers = greeter.providers();
    assert_eq!(providers.len(), 1, "{providers:?}");
    let url = providers[0].url();
    assert_eq!((url.protocol(), url.port()), ("tri", peer.port()), "{url}");
    assert_eq!(url.service_interface(), SERVICE, "{url}");

    let mut client = GreeterClient::new(greeter.grpc_channel());
    for name in ["rust", "dubbo-python"] {
        let reply = client
            .say_hello(HelloRequest { name: name.into() })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(reply.message, format!("Hello {name}"));
        assert_eq!(reply.served_by, "python-dubbo");
    }
    let stats = providers[0].status();
    assert_eq!(
        stats.service().total(),
        2,
        "both calls counted against the Python provider"
    );
}
