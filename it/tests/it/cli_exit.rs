//! The exit path of `rudder invoke --registry`, many times over: it must end cleanly every time.
//!
//! Before the fix, a few runs in a few hundred printed `thread 'tokio-rt-worker' panicked at
//! .../zookeeper-client-0.11.2/src/session/watch.rs:120:41: called `Result::unwrap()` on an `Err`
//! value: Canceled` and still exited 0: the runtime shut down with the subscription tasks still running,
//! dropped zookeeper-client's detached session task under them, and a task then polled a watch whose
//! sender was gone. `invoke` now awaits `Consumer::shutdown`, which ends those tasks before the session.
//!
//! Needs Docker and the local image (`scripts/it-setup.sh`) and the debug binary
//! (`cargo build -p rudder-cli`).

use rudder::{Invocation, Value};
use rudder_common::url::DubboUrl;
use rudder_it::{run_rudder, ZooKeeperContainer};
use rudder_rpc::server::DubboServer;
use zookeeper_client::{Acls, Client, CreateMode};

const SERVICE: &str = "com.acme.Greeter";
const PROVIDERS: &str = "/dubbo/com.acme.Greeter/providers";

/// Runs of the binary (`RUDDER_EXIT_RUNS` overrides, to hunt a rarer race).
const RUNS: usize = 120;

fn runs() -> usize {
    std::env::var("RUDDER_EXIT_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(RUNS)
}
/// Runs at a time (the machine has 2 cores; more in parallel also makes the shutdown race likelier).
const PARALLEL: usize = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoke_with_a_registry_exits_cleanly_every_time() {
    let zookeeper = ZooKeeperContainer::start()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let server = DubboServer::bind(0, |call: Invocation| async move {
        Ok(Value::from(format!("hi from {}", call.method_name())))
    })
    .await
    .expect("provider binds");
    let zk = Client::connect(&zookeeper.connect_string())
        .await
        .expect("writer connects");
    let open = CreateMode::Persistent.with_acls(Acls::anyone_all());
    zk.mkdir(PROVIDERS, &open).await.expect("providers node");
    let url = DubboUrl::parse(&format!(
        "dubbo://{}/{SERVICE}?interface={SERVICE}&methods=sayHello",
        server.local_addr()
    ))
    .unwrap();
    zk.create(&format!("{PROVIDERS}/{}", url.to_node_name()), b"", &open)
        .await
        .expect("provider node");

    let registry = format!("zookeeper://{}", zookeeper.connect_string());
    let mut failures = Vec::new();
    let total = runs();
    for batch in 0..total.div_ceil(PARALLEL) {
        let runs: Vec<_> = (0..PARALLEL)
            .map(|_| {
                let registry = registry.clone();
                tokio::spawn(async move {
                    run_rudder(&[
                        "invoke",
                        "--registry",
                        &registry,
                        "--interface",
                        SERVICE,
                        "--method",
                        "sayHello",
                    ])
                    .await
                })
            })
            .collect();
        for (i, run) in runs.into_iter().enumerate() {
            let out = run.await.expect("run task");
            let clean = out.code == 0
                && out.stdout.trim() == "\"hi from sayHello\""
                && !out.stderr.contains("panicked");
            if !clean {
                failures.push((batch * PARALLEL + i, out));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} runs did not end cleanly; the first: {:?}",
        failures.len(),
        failures.first()
    );
    server.shutdown().await;
}
