//! Tag rules of several provider applications (issue 14, item 1b), against a real ZooKeeper: one
//! interface provided by `alpha` (with an `alpha.tag-router` rule) and `beta` (no rule). Every
//! reference watches both applications' rule keys, which it reads in `HashMap` order (a new random
//! order per map); before, whichever key came last decided, and beta's missing rule could delete
//! alpha's. Now each reference, whatever its order and whichever application registered first,
//! routes the same way: alpha's rule tags alpha's providers, beta's stay untagged.

use std::collections::BTreeSet;

use rudder::rules::RuleKey;
use rudder::Consumer;
use rudder_it::ZooKeeperContainer;
use rudder_rpc::server::DubboServer;
use zookeeper_client::Client;

use crate::common::providers::{ports_reached as reached, put_node as put, registered_port_echo};

/// References built per service: each has its own `HashMap`, so its own key order.
const REFERENCES: usize = 4;

/// A provider of `service` in `application` answering with its port, registered in ZooKeeper.
async fn provider(zk: &Client, service: &str, application: &str) -> (DubboServer, i32) {
    registered_port_echo(zk, service, application).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_provider_applications_one_tag_rule_same_routes_in_every_order() {
    let zookeeper = ZooKeeperContainer::start()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let zk = Client::connect(&zookeeper.connect_string())
        .await
        .expect("writer");
    let registry = format!("zookeeper://{}", zookeeper.connect_string());
    let mut servers = Vec::new();
    // Two services, the applications registering in opposite orders.
    for (service, order) in [
        ("com.acme.TwoApps1", ["alpha", "beta"]),
        ("com.acme.TwoApps2", ["beta", "alpha"]),
    ] {
        let mut alpha = Vec::new();
        let mut beta = Vec::new();
        for application in order {
            for _ in 0..2 {
                let (server, port) = provider(&zk, service, application).await;
                servers.push(server);
                if application == "alpha" {
                    alpha.push(port);
                } else {
                    beta.push(port);
                }
            }
        }
        put(
            &zk,
            "/dubbo/config/dubbo/alpha.tag-router",
            &format!(
                "configVersion: v3.0\nforce: false\nenabled: true\nkey: alpha\ntags:\n  - name: gray\n    addresses: [\"127.0.0.1:{}\"]\n",
                alpha[0]
            ),
        )
        .await;
        let untagged: BTreeSet<i32> = [alpha[1], beta[0], beta[1]].into();
        for i in 0..REFERENCES {
            let consumer = Consumer::builder().application("two-apps-consumer").build();
            let reference = consumer
                .reference(service)
                .registry(&registry)
                .build()
                .await
                .expect("reference");
            let context = format!("{service}, reference {i}");
            // The rules in force when the build returns (the watch hands over the current texts).
            assert_eq!(
                reference.rules().keys(),
                [RuleKey::tag("alpha")],
                "{context}"
            );
            assert_eq!(reached(&reference, None).await, untagged, "{context}");
            assert_eq!(
                reached(&reference, Some("gray")).await,
                [alpha[0]].into(),
                "{context}"
            );
            assert_eq!(
                reached(&reference, Some("blue")).await,
                untagged,
                "{context}: an unknown tag falls back to the untagged providers"
            );
            consumer.shutdown().await;
        }
    }
    drop(servers);
}
