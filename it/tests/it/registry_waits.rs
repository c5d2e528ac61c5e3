//! Registry waits that end: a reference build during a registry outage returns within its deadline
//! (`check=true` fails naming the registry, `check=false` builds and its providers arrive later); a
//! registry that hangs delays only the builds that use it, shares one connection attempt among them,
//! and `Consumer::shutdown` ends their wait at once; a session no reference uses any more is closed
//! after the consumer's idle timeout, and reused before it.
//!
//! Against a real ZooKeeper, behind the cuttable proxy of `registry_partitions.rs` (`common::proxy`)
//! where an outage is needed. Every wait is on an event, bounded by `common::WAIT`; elapsed times are
//! only checked against generous bounds (a deadline of 2 s must not take 60).
//!
//! Needs Docker and the local image: run `scripts/it-setup.sh` first.

use std::time::{Duration, Instant};

use crate::common;
use crate::common::changes::reference_reaches;
use crate::common::proxy::ZkProxy;
use crate::common::{put_provider, CONSUMERS, WAIT};
use rudder::{BuildError, Consumer};
use rudder_registry::RegistryError;
use tokio::net::TcpListener;
use tokio::sync::watch;
use zookeeper_client::{Acl, Acls, AuthId, Client, CreateMode, EventType, Permission};

const SERVICE: &str = "com.acme.Greeter";

/// Far more than any step here takes, far less than the waits it guards against.
const GENEROUS: Duration = Duration::from_secs(20);

/// A registry address that accepts connections and never answers (a hung server); it counts the
/// connections it accepted.
struct HungServer {
    port: u16,
    accepted: watch::Receiver<usize>,
    task: tokio::task::JoinHandle<()>,
}

impl HungServer {
    async fn start() -> HungServer {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let (count, accepted) = watch::channel(0);
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket);
                count.send_replace(held.len());
            }
        });
        HungServer {
            port,
            accepted,
            task,
        }
    }

    fn url(&self, query: &str) -> String {
        format!("zookeeper://127.0.0.1:{}?{query}", self.port)
    }
}

impl Drop for HungServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test]
async fn a_build_during_an_outage_fails_after_its_deadline_naming_the_registry() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    put_provider(&zk, "127.0.0.1:20880").await;
    let proxy = ZkProxy::start(zookeeper.port()).await;
    proxy.cut();
    let registry = format!("zookeeper://{}?timeout=2000", proxy.connect_string());
    let consumer = Consumer::builder().build();

    let started = Instant::now();
    let error = consumer
        .reference(SERVICE)
        .registry(&registry)
        .build()
        .await
        .expect_err("no registry, check=true: the build fails");
    let took = started.elapsed();
    match &error {
        BuildError::RegistryUnreachable {
            registry,
            waited,
            source,
        } => {
            assert!(registry.contains(&proxy.connect_string()), "{registry}");
            assert_eq!(*waited, Duration::from_secs(2));
            assert!(
                matches!(source, RegistryError::Unreachable { hosts, .. } if hosts.contains(&proxy.connect_string())),
                "{source:?}"
            );
        }
        other => panic!("not RegistryUnreachable: {other:?}"),
    }
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(2) + GENEROUS,
        "the build took {took:?} for a 2 s deadline"
    );
    assert!(
        error.to_string().contains("check=true"),
        "the message says why it failed: {error}"
    );

    // The registry back, the same consumer builds (its connector kept trying).
    proxy.restore();
    let reference = consumer
        .reference(SERVICE)
        .registry(&registry)
        .build()
        .await
        .expect("the registry is back");
    assert_eq!(reference.snapshot().providers().len(), 1);
    drop(reference);
    consumer.shutdown().await;
}

#[tokio::test]
async fn with_check_false_a_build_during_an_outage_succeeds_and_providers_arrive_later() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    put_provider(&zk, "127.0.0.1:20880").await;
    let proxy = ZkProxy::start(zookeeper.port()).await;
    proxy.cut();
    let consumer = Consumer::builder().build();

    let started = Instant::now();
    let reference = consumer
        .reference(SERVICE)
        .registry(&format!(
            "zookeeper://{}?timeout=1000",
            proxy.connect_string()
        ))
        .check(false)
        .build()
        .await
        .expect("check=false builds without the registry");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(1) + GENEROUS,
        "the build took {took:?} for a 1 s deadline"
    );
    assert!(reference.snapshot().providers().is_empty());

    proxy.restore();
    reference_reaches(
        &reference,
        "the provider to arrive once the registry answered",
        WAIT,
        || reference.snapshot().providers().len() == 1,
    )
    .await;
    assert_eq!(consumer.diagnostics().registry_sessions(), 1);
    drop(reference);
    consumer.shutdown().await;
}

#[tokio::test]
async fn a_hung_registry_delays_only_its_own_builds_shares_one_attempt_and_shutdown_ends_the_wait()
{
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    put_provider(&zk, "127.0.0.1:20880").await;
    let hung = HungServer::start().await;
    let consumer = Consumer::builder().build();

    // Two builds wait for the hung registry (a 60 s deadline each).
    let waiting: Vec<_> = (0..2)
        .map(|_| {
            let builder = consumer
                .reference(SERVICE)
                .registry(&hung.url("timeout=60000"));
            tokio::spawn(builder.build())
        })
        .collect();
    let mut accepted = hung.accepted.clone();
    tokio::time::timeout(WAIT, accepted.wait_for(|n| *n >= 1))
        .await
        .expect("the hung registry was dialled")
        .expect("server alive");

    // Meanwhile a build on a registry that answers is not held up.
    let started = Instant::now();
    let healthy = consumer
        .reference(SERVICE)
        .registry(&format!("zookeeper://{}", zookeeper.connect_string()))
        .build()
        .await
        .expect("the healthy registry builds");
    assert!(started.elapsed() < GENEROUS, "took {:?}", started.elapsed());
    assert_eq!(healthy.snapshot().providers().len(), 1);
    assert!(waiting.iter().all(|w| !w.is_finished()), "still waiting");
    assert_eq!(
        *hung.accepted.borrow(),
        1,
        "one connection attempt for both builds (single flight)"
    );
    assert_eq!(
        consumer.diagnostics().registry_sessions(),
        2,
        "the hung one and the healthy one"
    );

    // Shutting down ends the waits at once, not after their 60 s deadline.
    let started = Instant::now();
    consumer.shutdown().await;
    for build in waiting {
        let outcome = tokio::time::timeout(GENEROUS, build)
            .await
            .expect("the build returned after shutdown")
            .expect("the build task ran");
        assert!(
            matches!(outcome, Err(BuildError::ShutDown)),
            "{:?}",
            outcome.map(drop)
        );
    }
    assert!(
        started.elapsed() < GENEROUS,
        "shutdown and the waits took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_session_no_reference_uses_is_closed_after_the_idle_timeout_and_reused_before_it() {
    let zookeeper = common::zookeeper().await;
    // The consumers node lets anyone create children but not delete them: a consumer node then stays
    // until its session ends, which makes the end of the session visible as the node's deletion.
    let admin = Client::connector()
        .with_auth("digest", b"admin:adm1n-pass")
        .connect(&zookeeper.connect_string())
        .await
        .expect("admin connects");
    admin
        .mkdir(
            "/dubbo/com.acme.Greeter",
            &CreateMode::Persistent.with_acls(Acls::anyone_all()),
        )
        .await
        .expect("service node");
    let no_delete = [
        Acl::new(Permission::ALL, AuthId::authed()),
        Acl::new(Permission::READ | Permission::CREATE, AuthId::anyone()),
    ];
    admin
        .create(
            CONSUMERS,
            b"",
            &CreateMode::Persistent.with_acls(Acls::new(&no_delete)),
        )
        .await
        .expect("consumers node");
    let idle = Duration::from_secs(2);
    let consumer = Consumer::builder().registry_idle_timeout(idle).build();
    let registry = format!("zookeeper://{}", zookeeper.connect_string());

    let first = consumer
        .reference(SERVICE)
        .registry(&registry)
        .build()
        .await
        .expect("first reference");
    let owner = |nodes: Vec<String>| {
        let admin = &admin;
        async move {
            let mut owners = Vec::new();
            for node in nodes {
                let (_, stat) = admin
                    .get_data(&format!("{CONSUMERS}/{node}"))
                    .await
                    .expect("consumer node");
                owners.push(stat.ephemeral_owner);
            }
            owners
        }
    };
    let nodes = admin.list_children(CONSUMERS).await.expect("consumers");
    assert_eq!(nodes.len(), 1);
    let session = owner(nodes).await[0];

    // Dropped and rebuilt at once: the second reference takes the same session.
    drop(first);
    let second = consumer
        .reference(SERVICE)
        .group("other")
        .registry(&registry)
        .build()
        .await
        .expect("second reference");
    let owners = owner(admin.list_children(CONSUMERS).await.expect("consumers")).await;
    assert_eq!(
        owners.len(),
        2,
        "both consumer nodes (neither may be deleted)"
    );
    assert!(
        owners.iter().all(|o| *o == session),
        "one session: {owners:?}"
    );

    // The last reference gone: the session stays for the idle timeout, then is closed.
    let node = admin.list_children(CONSUMERS).await.expect("consumers")[0].clone();
    let (stat, deleted) = admin
        .check_and_watch_stat(&format!("{CONSUMERS}/{node}"))
        .await
        .expect("watch a consumer node");
    assert!(stat.is_some());
    drop(second);
    let released = Instant::now();
    assert_eq!(
        consumer.diagnostics().registry_sessions(),
        1,
        "kept during the idle timeout"
    );
    let event = tokio::time::timeout(WAIT, deleted.changed())
        .await
        .expect("the session was closed");
    assert_eq!(event.event_type, EventType::NodeDeleted);
    assert!(
        released.elapsed() >= idle,
        "closed after {:?}, before the idle timeout",
        released.elapsed()
    );
    assert_eq!(consumer.diagnostics().registry_sessions(), 0);
    assert!(admin
        .list_children(CONSUMERS)
        .await
        .expect("consumers")
        .is_empty());
    consumer.shutdown().await;
}

#[tokio::test]
async fn closing_a_registry_ends_its_tasks_and_session_before_it_returns() {
    let zookeeper = common::zookeeper().await;
    let zk = common::writer(&zookeeper).await;
    put_provider(&zk, "127.0.0.1:20880").await;
    let registry = crate::common::registry(&zookeeper).await;
    let (_directory, subscription) =
        common::subscribe(&registry, rudder_registry::ConsumerSpec::new(SERVICE)).await;
    let status = subscription.status();
    assert_eq!(
        zk.list_children(CONSUMERS).await.expect("consumers").len(),
        1
    );

    registry.close().await;
    // The status sender lives in the subscription's task: closed means the task has ended, so no
    // task of ours can poll a watch of the session once `close` has returned.
    assert!(
        status.has_changed().is_err(),
        "the subscription task outlived close()"
    );
    assert!(
        zk.list_children(CONSUMERS)
            .await
            .expect("consumers")
            .is_empty(),
        "the consumer node is gone when close() returns"
    );
    assert!(!registry.is_connected() && registry.is_closed());
}
