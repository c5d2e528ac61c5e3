//! rudder against secured ZooKeeper servers: a `/dubbo` tree under a digest-only ACL and a server that
//! requires SASL DIGEST-MD5 (JAAS); the TLS secure client port is in `zookeeper_tls`.
//!
//! Each failure case runs under a registry whose connect timeout is far longer than the test's own
//! deadline: an error that arrives proves rudder failed at once instead of retrying to the timeout.

use std::time::Duration;

use rudder_common::url::DubboUrl;
use rudder_it::{run_rudder, SecureZooKeeper, TestPki, ZooKeeperContainer, ZooKeeperImage};
use rudder_registry::{ConsumerSpec, RegistryError, RegistryOptions, ZookeeperRegistry};
use zookeeper_client::{Acl, Acls, Client, CreateMode, Permission, SaslOptions};

use crate::common::{self, WAIT};

pub(crate) const SERVICE: &str = "com.acme.Greeter";
/// Longer than any deadline below: reaching it would mean rudder retried instead of failing.
pub(crate) const PATIENT: Duration = Duration::from_secs(600);
/// How long a refusal may take to surface (a cold server's first answer on a busy machine).
pub(crate) const PROMPTLY: Duration = Duration::from_secs(20);

pub(crate) fn patient() -> RegistryOptions {
    RegistryOptions::default().with_connect_timeout(PATIENT)
}

/// The ACL a ZooKeeper client authenticated like `client` gets for `CREATOR_ALL_ACL`: what Dubbo's
/// Curator client sets on every node it creates when the registry URL has credentials.
async fn creator_all_of(client: &Client, probe: &str) -> Vec<Acl> {
    client
        .create(
            probe,
            b"",
            &CreateMode::Ephemeral.with_acls(Acls::creator_all()),
        )
        .await
        .expect("probe node");
    let (acl, _) = client.get_acl(probe).await.expect("probe acl");
    client.delete(probe, None).await.expect("probe deleted");
    acl
}

/// A provider node under `root`, created by `admin` with the ACL Java Dubbo would set (`CREATOR_ALL`
/// when `admin` has authenticated, open otherwise).
pub(crate) async fn put_provider(admin: &Client, root: &str, port: u16, authenticated: bool) {
    let acls = if authenticated {
        Acls::creator_all()
    } else {
        Acls::anyone_all()
    };
    let options = CreateMode::Persistent.with_acls(acls);
    let providers = format!("{root}/{SERVICE}/providers");
    admin.mkdir(&providers, &options).await.expect("mkdir");
    let url = DubboUrl::parse(&format!("dubbo://127.0.0.1:{port}/{SERVICE}")).unwrap();
    admin
        .create(
            &format!("{providers}/{}", url.to_node_name()),
            b"",
            &options,
        )
        .await
        .expect("provider node");
}

async fn consumer_acl(admin: &Client, root: &str) -> Vec<Acl> {
    let consumers = format!("{root}/{SERVICE}/consumers");
    let children = admin.list_children(&consumers).await.expect("consumers");
    assert_eq!(children.len(), 1, "{children:?}");
    admin
        .get_acl(&format!("{consumers}/{}", children[0]))
        .await
        .expect("consumer acl")
        .0
}

pub(crate) fn spec() -> ConsumerSpec {
    let mut spec = ConsumerSpec::new(SERVICE);
    spec.host = Some("127.0.0.1".into());
    spec
}

#[tokio::test]
async fn digest_credentials_open_a_digest_only_tree_and_a_wrong_password_fails_at_once() {
    let zookeeper = common::zookeeper().await;
    let hosts = zookeeper.connect_string();
    let admin = Client::connector()
        .with_auth("digest", b"app:s3cret")
        .connect(&hosts)
        .await
        .expect("admin connects");
    let expected = creator_all_of(&admin, "/acl-probe").await;
    assert_eq!(expected.len(), 1, "{expected:?}");
    assert_eq!(expected[0].scheme(), "digest");
    assert!(expected[0].id().starts_with("app:"), "{expected:?}");
    assert_eq!(expected[0].permission(), Permission::ALL);
    // `/dubbo` readable and writable by `app` only, as a secured Dubbo installation has it.
    admin
        .create(
            "/dubbo",
            b"",
            &CreateMode::Persistent.with_acls(Acls::creator_all()),
        )
        .await
        .expect("/dubbo");
    put_provider(&admin, "/dubbo", 20880, true).await;

    // The right password: providers listed, the consumer registered with Curator's ACL.
    let registry =
        ZookeeperRegistry::connect(&format!("zookeeper://app:s3cret@{hosts}"), patient())
            .await
            .expect("connects");
    let (directory, subscription) = common::subscribe(&registry, spec()).await;
    assert_eq!(directory.snapshot().providers().len(), 1);
    let registered = subscription.wait_for(WAIT, |s| s.registered).await;
    assert!(
        registered.is_some(),
        "{:?}",
        *subscription.status().borrow()
    );
    assert_eq!(consumer_acl(&admin, "/dubbo").await, expected);
    let (interface_acl, _) = admin
        .get_acl(&format!("/dubbo/{SERVICE}/consumers"))
        .await
        .unwrap();
    assert_eq!(
        interface_acl, expected,
        "parents too, as Curator's creatingParentsIfNeeded"
    );
    subscription.close().await;
    registry.close().await;

    // A wrong password: ZooKeeper accepts any digest at connect time, so the refusal comes with the
    // first read of /dubbo. It must come at once, and say what was refused where.
    let wrong = ZookeeperRegistry::connect(&format!("zookeeper://app:wrong@{hosts}"), patient())
        .await
        .expect("a digest is not checked at connect time");
    let sink = std::sync::Arc::new(rudder_cluster::directory::Directory::default());
    let refused = tokio::time::timeout(PROMPTLY, wrong.subscribe(spec(), sink))
        .await
        .expect("refused at once, not retried")
        .expect_err("no access with a wrong password");
    let text = chain(&refused);
    assert!(matches!(refused, RegistryError::ZooKeeper { .. }), "{text}");
    assert!(text.contains(&format!("/dubbo/{SERVICE}")), "{text}");
    assert!(
        !text.contains("wrong"),
        "the password is never printed: {text}"
    );
    wrong.close().await;

    // The CLI says so in one run, well before its connect timeout, and never prints the password.
    let url = format!("zookeeper://app:wrong@{hosts}");
    let out = tokio::time::timeout(
        PROMPTLY,
        run_rudder(&["providers", "--registry", &url, "--interface", SERVICE]),
    )
    .await
    .expect("the CLI fails at once");
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.to_lowercase().contains("auth"), "{}", out.stderr);
    assert!(!format!("{out:?}").contains("wrong"), "{out:?}");
}

#[tokio::test]
async fn without_credentials_created_nodes_are_open_to_anyone() {
    let zookeeper = common::zookeeper().await;
    let admin = common::writer(&zookeeper).await;
    put_provider(&admin, "/dubbo", 20880, false).await;
    let registry = common::registry(&zookeeper).await;
    let (_directory, subscription) = common::subscribe(&registry, spec()).await;
    assert!(subscription
        .wait_for(WAIT, |s| s.registered)
        .await
        .is_some());
    let acl = consumer_acl(&admin, "/dubbo").await;
    assert_eq!(
        acl,
        Acls::anyone_all().to_vec(),
        "Curator's OPEN_ACL_UNSAFE"
    );
    subscription.close().await;
    registry.close().await;
}

/// The local image's start script takes the secure configuration; an official image would need its
/// own (`ZOO_CFG_EXTRA`, `JVMFLAGS`): not wired, so these tests say so instead of passing vacuously.
pub(crate) fn local_image() -> ZooKeeperImage {
    let image = ZooKeeperImage::from_env();
    assert!(
        image.is_local_build(),
        "secured ZooKeeper tests need the local image (scripts/build-zookeeper-image.sh), not {}",
        image.reference()
    );
    image
}

#[tokio::test]
async fn sasl_digest_md5_is_required_and_given() {
    let pki = TestPki::generate().unwrap();
    let extras = SecureZooKeeper::sasl_digest(&pki, &[("app", "s3cret")]).unwrap();
    let zookeeper = ZooKeeperContainer::start_with(local_image(), &extras)
        .await
        .unwrap();
    let hosts = zookeeper.connect_string();
    let admin = Client::connector()
        .with_sasl(SaslOptions::digest_md5("app", "s3cret"))
        .connect(&hosts)
        .await
        .expect("admin authenticates by SASL");
    put_provider(&admin, "/dubbo", 20880, true).await;
    let expected = creator_all_of(&admin, "/acl-probe").await;
    assert_eq!(
        (expected[0].scheme(), expected[0].id()),
        ("sasl", "app"),
        "{expected:?}"
    );

    let url = format!("zookeeper://app:s3cret@{hosts}?sasl=digest-md5");
    let registry = ZookeeperRegistry::connect(&url, patient())
        .await
        .expect("SASL accepted");
    let (directory, subscription) = common::subscribe(&registry, spec()).await;
    assert_eq!(directory.snapshot().providers().len(), 1);
    assert!(subscription
        .wait_for(WAIT, |s| s.registered)
        .await
        .is_some());
    assert_eq!(consumer_acl(&admin, "/dubbo").await, expected);
    subscription.close().await;
    registry.close().await;

    // A wrong SASL password: refused during the handshake, reported at once.
    let wrong = format!("zookeeper://app:wrong@{hosts}?sasl=digest-md5");
    let refused = tokio::time::timeout(PROMPTLY, ZookeeperRegistry::connect(&wrong, patient()))
        .await
        .expect("refused at once")
        .expect_err("wrong SASL password");
    assert!(
        matches!(refused, RegistryError::AuthFailed { .. }),
        "{}",
        chain(&refused)
    );
    assert!(!chain(&refused).contains("wrong"));

    // No SASL at all on a server that enforces it: also a refusal, not a wait.
    let plain = format!("zookeeper://{hosts}");
    let refused = tokio::time::timeout(PROMPTLY, async {
        let registry = ZookeeperRegistry::connect(&plain, patient()).await?;
        let sink = std::sync::Arc::new(rudder_cluster::directory::Directory::default());
        let outcome = registry.subscribe(spec(), sink).await.map(|_| ());
        registry.close().await;
        outcome
    })
    .await
    .expect("refused at once");
    let error = refused.expect_err("no session without SASL");
    assert!(
        matches!(error, RegistryError::AuthFailed { .. }),
        "{}",
        chain(&error)
    );
}

pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}
