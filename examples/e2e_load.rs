//! End-to-end load through the whole consumer (`Reference`: balancer, cluster invoker, statistics, wire)
//! against a bare single-connection `DubboProtocol` client, in the same run, on the same in-process
//! dubbo:// provider over loopback. Prints QPS and p50/p99 per concurrency, each client's CPU time per call
//! (the consumer's threads only: an in-process provider runs on threads of its own, left out), and the
//! cluster layer's cost.
//!
//! ```text
//! cargo run --release -p rudder-examples --example e2e_load -- [--calls 20000] [--levels 1,16,128] [--rounds 7] [--slices 10] [--noise-floor] [--only bare|rudder]
//!     [--url dubbo://127.0.0.1:PORT/org.rudder.it.GreetingService]   # an external provider, e.g. the Java one
//!     [--url tri://127.0.0.1:PORT/org.rudder.it.GreetingService]     # over Triple: the bare client is then
//!                                                                   # rudder-triple's tonic client alone
//!     [--tls-ca ca.pem]                                              # both clients over TLS (docs/tls.md)
//!     [--handshakes 50]        # with --url and --tls-ca: time new connections with and without TLS instead
//! ```
//! `RUDDER_RPC_DIRECT_WRITES=0` in the environment sends every dubbo:// frame through the connection's
//! writer task instead of a caller's direct write, to compare the two in one binary.
//! Each measurement is bounded by `--calls` calls and 30 s. In each of `--rounds` rounds the two clients
//! take `--slices` turns of `calls / slices` calls, in alternating order, so that machine noise hits both
//! alike; the median round of each is reported, and the cost is the median of the per-round differences.
//! `--noise-floor` puts a second bare client where rudder was: the "cost" it prints is the tool's own
//! noise on this machine, to read the real figures against. `--only bare` or `--only rudder` runs one
//! client alone, to profile one side (`perf stat -e task-clock` over the same calls, say).

use rudder_examples::e2e::{run, Options};

fn main() {
    let options = match Options::from_args(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    for line in runtime.block_on(run(&options)) {
        println!("{line}");
    }
}
