//! A method the providers do not have, called through the library, is answered as `rudder invoke`
//! answers it: at once, with `MethodNotFound` naming the methods the providers list, nothing sent
//! (before: three attempts over tri:// ending in the Java provider's `"methodDescriptors" is null`).
//! Against real Java Dubbo 3.3 providers over dubbo:// and tri:// in a real ZooKeeper.
//!
//! Needs Docker, the local image and the Java provider: run `scripts/it-setup.sh` first.

use std::time::Duration;

use rudder::{CallError, Consumer, Value};
use rudder_common::error::RpcErrorKind;
use rudder_it::{run_rudder, Peer, PeerConfig, PeerKind, ZooKeeperContainer};

const SERVICE: &str = "org.rudder.it.GreetingService";
const READY_WITHIN: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_library_refuses_an_unlisted_method_as_the_cli_does() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let zk = zookeeper.connect_string();
    let mut tri = PeerConfig::new(PeerKind::Java, &zk, "java-tri");
    tri.protocol = Some("tri".to_owned());
    tri.version = Some("tri".to_owned());
    let (dubbo, tri) = tokio::join!(
        Peer::start(
            PeerConfig::new(PeerKind::Java, &zk, "java-dubbo"),
            READY_WITHIN
        ),
        Peer::start(tri, READY_WITHIN)
    );
    let (_dubbo, _tri) = (dubbo.unwrap(), tri.unwrap());
    let registry = format!("zookeeper://{zk}");
    let consumer = Consumer::builder().build();
    for version in [None, Some("tri")] {
        let mut builder = consumer.reference(SERVICE).registry(&registry);
        if let Some(version) = version {
            builder = builder.version(version);
        }
        let greeter = builder.build().await.unwrap();
        let error = greeter
            .call::<Value, _>("sayHi", &["java.lang.String"], vec![Value::from("x")])
            .await
            .expect_err("no such method");
        let CallError::Rpc(error) = error else {
            panic!("{version:?}: not an RPC error: {error:?}")
        };
        assert_eq!(error.kind(), RpcErrorKind::MethodNotFound, "{error}");
        assert!(error.attempts().is_empty(), "{version:?}: sent: {error}");
        assert!(
            error.message().starts_with(&format!(
                "{SERVICE} has no method sayHi; its providers list: "
            )),
            "{error}"
        );
        assert!(error.message().contains("sayHello"), "{error}");
        // The CLI says the same words.
        let mut args = vec![
            "invoke",
            "--registry",
            &registry,
            SERVICE,
            "--method",
            "sayHi",
            "--args",
            r#"["x"]"#,
        ];
        if let Some(version) = version {
            args.extend(["--version", version]);
        }
        let out = run_rudder(&args).await;
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert!(out.stderr.contains(error.message()), "{}", out.stderr);
        // A method the providers have still goes through.
        let hello = greeter
            .call::<Value, _>("sayHello", &["java.lang.String"], vec![Value::from("x")])
            .await
            .unwrap();
        assert!(matches!(hello, Value::String(_)), "{hello:?}");
    }
    consumer.shutdown().await;
}
