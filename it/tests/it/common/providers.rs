//! In-process providers registered in ZooKeeper as a Dubbo provider registers itself, and the node
//! writes an operator or dubbo-admin makes.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use rudder::{DubboUrl, Invocation, Reference, Value};
use rudder_rpc::server::DubboServer;
use zookeeper_client::{Acls, Client, CreateMode};

/// Writes `data` at `path` (parents made, an existing node overwritten), as dubbo-admin writes a
/// rule.
pub(crate) async fn put_node(zk: &Client, path: &str, data: &str) {
    let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
    let parent = &path[..path.rfind('/').expect("an absolute path")];
    zk.mkdir(parent, &persistent).await.expect("mkdir");
    match zk.create(path, data.as_bytes(), &persistent).await {
        Ok(_) => {}
        Err(zookeeper_client::Error::NodeExists) => {
            zk.set_data(path, data.as_bytes(), None).await.expect("set");
        }
        Err(e) => panic!("create {path}: {e}"),
    }
}

/// A provider answering every call with its own port (a `Value::Int`): which provider a call
/// reached is its answer.
pub(crate) async fn port_echo() -> DubboServer {
    let port = Arc::new(OnceLock::new());
    let answer = Arc::clone(&port);
    let server = DubboServer::bind(0, move |_call: Invocation| {
        let port = *answer.get().expect("port set before the first call");
        async move { Ok(Value::Int(port)) }
    })
    .await
    .expect("bind");
    port.set(i32::from(server.local_addr().port())).unwrap();
    server
}

/// A [`port_echo`] provider of `service` in `application`, registered in ZooKeeper: the server (keep
/// it alive) and its port.
pub(crate) async fn registered_port_echo(
    zk: &Client,
    service: &str,
    application: &str,
) -> (DubboServer, i32) {
    let server = port_echo().await;
    let url = DubboUrl::parse(&format!(
        "dubbo://{}/{service}?interface={service}&application={application}&side=provider",
        server.local_addr()
    ))
    .unwrap();
    let path = format!("/dubbo/{service}/providers/{}", url.to_node_name());
    put_node(zk, &path, "").await;
    let port = i32::from(server.local_addr().port());
    (server, port)
}

/// The ports 60 calls of `reference` (tagged `tag`, when given) reach among [`port_echo`] providers:
/// enough that random picks reach every allowed provider (a miss among 3 has probability
/// 3 * (2/3)^60, about 1e-10). A failed call or an answer other than a port fails the test.
pub(crate) async fn ports_reached(reference: &Reference, tag: Option<&str>) -> BTreeSet<i32> {
    let mut ports = BTreeSet::new();
    for _ in 0..60 {
        let mut call = Invocation::new("whoAmI", vec![], vec![]);
        if let Some(tag) = tag {
            call.set_attachment("dubbo.tag", tag);
        }
        match reference.invoke(call).await {
            Ok(response) => match response.value() {
                Some(Value::Int(port)) => {
                    ports.insert(*port);
                }
                other => panic!("unexpected answer {other:?}"),
            },
            Err(e) => panic!("call failed: {e}"),
        }
    }
    ports
}
