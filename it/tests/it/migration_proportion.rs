//! The migration rule's `proportion` (issue 16 item 5), applied as Dubbo 3.3's `MigrationInvoker`
//! does under `APPLICATION_FIRST`: with the application view in use, a call goes there with
//! probability `proportion` %, else to the interface view. One interface-level provider and one
//! application instance, in-process servers answering with their port, as in `migration_rule`.
//!
//! Counts: at proportion 30 over 1,000 calls the interface view's count is binomial(1000, 0.7),
//! mean 700, sd 14.5; the tolerance of ±100 (6.9 sd) fails by chance with probability below 1e-11.
//! The reference is seeded, so a run repeats itself.

use std::collections::BTreeMap;
use std::time::Duration;

use rudder::{Reference, Value};
use rudder_it::ZooKeeperContainer;
use zookeeper_client::Client;

use crate::common::changes::reference_reaches;
use crate::common::providers::put_node;
use crate::migration_rule::{two_views, CONSUMER_APP, RULE, SERVICE};

const WAIT: Duration = Duration::from_secs(30);

/// How many of `calls` calls each port answered; any failed call fails the test.
async fn spread(reference: &Reference, calls: usize) -> BTreeMap<i32, usize> {
    let mut seen = BTreeMap::new();
    for _ in 0..calls {
        match reference.call::<Value, _>("whoAmI", &[], vec![]).await {
            Ok(Value::Int(port)) => *seen.entry(port).or_default() += 1,
            other => panic!("unexpected answer {other:?}"),
        }
    }
    seen
}

fn decision(reference: &Reference) -> String {
    reference.registry_status()[0]
        .clone()
        .expect("subscribed")
        .migration_decision
}

async fn decision_says(reference: &Reference, what: &str) {
    reference_reaches(reference, what, WAIT, || decision(reference).contains(what)).await;
}

#[tokio::test]
async fn a_proportion_sends_its_share_to_the_application_view_and_the_rest_to_the_interface_view() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let zk = Client::connect(&zookeeper.connect_string()).await.unwrap();
    let (_servers, interface_port, instance_port) = two_views(&zk).await;
    let reference = Reference::builder(SERVICE)
        .registry(&format!("zookeeper://{}", zookeeper.connect_string()))
        .application(CONSUMER_APP)
        .seed(7)
        .timeout(Duration::from_secs(5))
        .build()
        .await
        .unwrap();
    // No rule: the application view takes every call.
    assert_eq!(spread(&reference, 100).await, [(instance_port, 100)].into());

    put_node(
        &zk,
        RULE,
        "key: mig-consumer\nstep: APPLICATION_FIRST\nproportion: 30\n",
    )
    .await;
    decision_says(
        &reference,
        "the other 70 % of calls go to the interface view",
    )
    .await;
    let seen = spread(&reference, 1_000).await;
    assert_eq!(seen.values().sum::<usize>(), 1_000, "{seen:?}");
    let to_interface = seen.get(&interface_port).copied().unwrap_or(0);
    assert!((600..=800).contains(&to_interface), "{seen:?}");
    assert_eq!(
        seen.keys().copied().collect::<Vec<_>>(),
        {
            let mut both = vec![interface_port, instance_port];
            both.sort_unstable();
            both
        },
        "only the two views' providers"
    );

    // Proportion 0: every call to the interface view (Dubbo's draw `nextDouble(100) > 0`).
    put_node(
        &zk,
        RULE,
        "key: mig-consumer\nstep: APPLICATION_FIRST\nproportion: 0\n",
    )
    .await;
    decision_says(
        &reference,
        "the other 100 % of calls go to the interface view",
    )
    .await;
    assert_eq!(
        spread(&reference, 100).await,
        [(interface_port, 100)].into()
    );

    // The interface provider leaves: Dubbo would still send the share there, to fail; rudder keeps
    // every call on the view that has providers.
    let provider_nodes = format!("/dubbo/{SERVICE}/providers");
    let (children, _) = zk.get_children(&provider_nodes).await.unwrap();
    for child in children {
        zk.delete(&format!("{provider_nodes}/{child}"), None)
            .await
            .unwrap();
    }
    decision_says(
        &reference,
        "no interface-level provider, every call goes to the application view",
    )
    .await;
    assert_eq!(spread(&reference, 100).await, [(instance_port, 100)].into());

    // The rule gone: the whole share is the application view's again.
    zk.delete(RULE, None).await.unwrap();
    reference_reaches(&reference, "no proportion in the decision", WAIT, || {
        !decision(&reference).contains("proportion")
    })
    .await;
    assert_eq!(spread(&reference, 100).await, [(instance_port, 100)].into());
}
