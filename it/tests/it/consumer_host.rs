//! The consumer's own address (issue 14, item 1a): the address a consumer registers under in a real
//! ZooKeeper is the address its routing rules read as `host`, so a condition rule naming that address
//! (`host = <address> => ...`) routes its calls. Before, rules read `127.0.0.1` (or
//! `DUBBO_IP_TO_REGISTRY`) while the registry registered the address of its ZooKeeper connection.
//!
//! Only the providers and ZooKeeper are contacted (on loopback); the consumer's address is a label
//! in URLs and rules, never a destination.

use std::time::Duration;

use rudder::{Consumer, DubboUrl, Invocation, Reference, Value};
use rudder_it::ZooKeeperContainer;
use rudder_rpc::server::DubboServer;
use zookeeper_client::Client;

use crate::common::changes::reference_reaches;
use crate::common::providers::{put_node as put, registered_port_echo};

const SERVICE: &str = "com.acme.HostRouted";
const WAIT: Duration = Duration::from_secs(30);

/// A provider answering every call with its own port, registered in ZooKeeper.
async fn registered_provider(zk: &Client) -> (DubboServer, i32) {
    registered_port_echo(zk, SERVICE, "host-provider").await
}

/// The hosts of the consumer nodes registered for the service, sorted.
async fn registered_hosts(zk: &Client) -> Vec<String> {
    let nodes = zk
        .list_children(&format!("/dubbo/{SERVICE}/consumers"))
        .await
        .expect("consumer nodes");
    let mut hosts: Vec<String> = nodes
        .iter()
        .map(|node| {
            DubboUrl::from_node_name(node)
                .unwrap_or_else(|e| panic!("consumer node {node}: {e}"))
                .host()
                .to_owned()
        })
        .collect();
    hosts.sort();
    hosts
}

/// The ports 40 calls reach (2 providers: a miss has probability 2 * 2^-40).
async fn reached(reference: &Reference) -> Vec<i32> {
    let mut ports = Vec::new();
    for _ in 0..40 {
        let call = Invocation::new("whoAmI", vec![], vec![]);
        match reference.invoke(call).await {
            Ok(response) => match response.value() {
                Some(Value::Int(port)) => ports.push(*port),
                other => panic!("unexpected answer {other:?}"),
            },
            Err(e) => panic!("call failed: {e}"),
        }
    }
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// Writes the service's condition rule `when => port = <port>` and waits until the reference's chain
/// holds it (a guard, not a pause: the rule's own step shows in `explain`).
async fn route_when(zk: &Client, reference: &Reference, when: &str, port: i32) {
    let before = reference.rules().version();
    let rule = format!(
        "configVersion: v3.0\nscope: service\nforce: true\nenabled: true\nkey: {SERVICE}\nconditions:\n  - {when} => port = {port}\n"
    );
    put(
        zk,
        &format!("/dubbo/config/dubbo/{SERVICE}::.condition-router"),
        &rule,
    )
    .await;
    let line = format!("{when} => port = {port}");
    let what = format!("rule {line:?} to apply");
    reference_reaches(reference, &what, WAIT, || {
        let call = Invocation::new("whoAmI", vec![], vec![]);
        reference.rules().version() > before
            && reference
                .explain(&call)
                .steps
                .iter()
                .any(|s| s.rule.detail.as_ref() == line)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_condition_routes_by_the_address_the_consumer_registers() {
    let zookeeper = ZooKeeperContainer::start()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let zk = Client::connect(&zookeeper.connect_string())
        .await
        .expect("writer");
    let (_first, first) = registered_provider(&zk).await;
    let (_second, second) = registered_provider(&zk).await;
    let registry = format!("zookeeper://{}", zookeeper.connect_string());

    // The address Dubbo's rules give this machine: DUBBO_IP_TO_REGISTRY, else its first
    // non-loopback address.
    let expected = rudder_common::net::consumer_host().expect("a usable consumer address");
    let consumer = Consumer::builder().application("host-consumer").build();
    assert_eq!(consumer.host(), Some(expected.as_str()));
    let reference = consumer
        .reference(SERVICE)
        .registry(&registry)
        .build()
        .await
        .expect("reference");
    assert_eq!(registered_hosts(&zk).await, std::slice::from_ref(&expected));
    assert_eq!(reference.consumer_url().host(), expected);
    let mut both = vec![first, second];
    both.sort_unstable();
    assert_eq!(reached(&reference).await, both);

    // A host rule for another consumer does not apply; one for the registered host does.
    route_when(&zk, &reference, "host = 10.255.255.254", first).await;
    assert_eq!(reached(&reference).await, both, "not this consumer's host");
    route_when(&zk, &reference, &format!("host = {expected}"), first).await;
    assert_eq!(reached(&reference).await, [first], "this consumer's host");
    drop(reference);

    // An address given to the consumer is the one registered and routed by: the rule.
    let given = "10.20.153.10";
    let pinned = Consumer::builder()
        .application("host-consumer")
        .host(given)
        .build();
    let reference = pinned
        .reference(SERVICE)
        .registry(&registry)
        .build()
        .await
        .expect("reference");
    assert!(
        registered_hosts(&zk).await.contains(&given.to_owned()),
        "registered under {given}"
    );
    assert_eq!(reference.consumer_url().host(), given);
    route_when(&zk, &reference, &format!("host = {given}"), second).await;
    assert_eq!(reached(&reference).await, [second]);
    pinned.shutdown().await;
    consumer.shutdown().await;
}
