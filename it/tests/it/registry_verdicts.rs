//! A registry address that cannot be a registry fails as fast and as clearly in the library as in
//! the CLI: nothing listening there ("connection refused (is ZooKeeper running there?)") and a
//! server that is not ZooKeeper ("is not ZooKeeper: asked `srvr`, it answered ...") fail
//! `ZookeeperRegistry::connect`, a `check=true` reference build and `rudder providers` at once, not
//! after their 60 s deadline; `check=false` still builds and waits for the registry in the
//! background. (A server that accepts and never answers is no verdict: `registry_waits.rs`.)

use std::time::Duration;

use rudder::{BuildError, Consumer};
use rudder_it::run_rudder;
use rudder_registry::{RegistryError, RegistryOptions, ZookeeperRegistry};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// Longer than any test here may take: a build that waits for it has not failed fast.
const DEADLINE: Duration = Duration::from_secs(60);

/// A port nothing listens on.
async fn closed_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    listener.local_addr().unwrap().port()
}

/// A server that answers every connection as an HTTP server answers a request it cannot read.
async fn http_like() -> (u16, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let _ = socket
                    .write_all(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    (port, task)
}

#[tokio::test]
async fn the_library_fails_a_refused_or_foreign_registry_at_once() {
    let options = RegistryOptions::default().with_connect_timeout(DEADLINE);
    let refused = format!("zookeeper://127.0.0.1:{}", closed_port().await);
    let (port, server) = http_like().await;
    let foreign = format!("zookeeper://127.0.0.1:{port}");

    let connected =
        tokio::time::timeout(DEADLINE / 2, ZookeeperRegistry::connect(&refused, options))
            .await
            .expect("a refused registry fails before its deadline");
    match connected {
        Err(error @ RegistryError::Refused { .. }) => assert!(
            error
                .to_string()
                .contains("connection refused (is ZooKeeper running there?)"),
            "{error}"
        ),
        other => panic!("not Refused: {:?}", other.err()),
    }
    let connected =
        tokio::time::timeout(DEADLINE / 2, ZookeeperRegistry::connect(&foreign, options))
            .await
            .expect("a foreign server fails before its deadline");
    match connected {
        Err(RegistryError::NotZookeeper { answer, .. }) => {
            assert_eq!(answer, "HTTP/1.1 400 Bad Request")
        }
        other => panic!("not NotZookeeper: {:?}", other.err()),
    }

    let consumer = Consumer::builder().build();
    for (registry, what) in [(&refused, "refused"), (&foreign, "not ZooKeeper")] {
        let url = format!("{registry}?timeout={}", DEADLINE.as_millis());
        let built = tokio::time::timeout(
            DEADLINE / 2,
            consumer
                .reference("com.acme.Greeter")
                .registry(&url)
                .build(),
        )
        .await
        .unwrap_or_else(|_| panic!("{what}: the build waited for its deadline"));
        match built {
            Err(BuildError::Registry(
                RegistryError::Refused { .. } | RegistryError::NotZookeeper { .. },
            )) => {}
            other => panic!("{what}: {:?}", other.err()),
        }
        // check=false: unchanged, the build waits its deadline (1 s here), goes on, and the registry
        // is awaited in the background.
        let lenient = consumer
            .reference("com.acme.Greeter")
            .registry(&format!("{registry}?timeout=1000"))
            .check(false)
            .build()
            .await;
        assert!(lenient.is_ok(), "{what}, check=false: {:?}", lenient.err());
    }
    consumer.shutdown().await;
    server.abort();
}

#[tokio::test]
async fn the_cli_says_the_same_at_once() {
    let (port, server) = http_like().await;
    let foreign = format!("zookeeper://127.0.0.1:{port}");
    let out = tokio::time::timeout(
        DEADLINE / 2,
        run_rudder(&[
            "providers",
            "--registry",
            &foreign,
            "--connect-timeout",
            "60",
            "com.acme.Greeter",
        ]),
    )
    .await
    .expect("the CLI fails before its --connect-timeout");
    // Exit code 3: a registry that cannot be reached (docs/cli.md).
    assert_eq!(out.code, 3, "{}", out.stderr);
    assert!(
        out.stderr.contains("is not ZooKeeper") && out.stderr.contains("HTTP/1.1 400 Bad Request"),
        "{}",
        out.stderr
    );
    // The cause once: in the error, not also in a warning logged before it.
    assert_eq!(
        out.stderr.matches("is not ZooKeeper").count(),
        1,
        "{}",
        out.stderr
    );
    server.abort();
}
