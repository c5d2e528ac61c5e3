//! `rudder`: preview, inspect and call Dubbo services from the command line.
//!
//! The CLI sits on top of the whole data path (registry → directory → routers → cluster → load balance
//! → rpc): `list` and `providers` read the registry as a consumer would, `simulate` runs the routers
//! and balancers against a fixed clock and seed without calling anyone, and `invoke`, `bench` and
//! `demo` make real calls through a reference, so what they show is what a rudder consumer does.
//!
//! ```text
//! rudder list --registry zookeeper://127.0.0.1:2181
//! rudder providers --registry zookeeper://127.0.0.1:2181 --interface com.acme.Greeter --method sayHello --explain
//! rudder invoke --url dubbo://127.0.0.1:20880/com.acme.Greeter --method sayHello --args '["rust"]'
//! rudder simulate --providers-file providers.txt --loadbalance consistenthash --args '["user-42"]'
//! ```
//!
//! Every command and flag is described in the repository's `docs/cli.md`.
//!
//! Exit codes: 0 success, 1 the service said no (a call failed, no provider or method), 2 the command
//! line is wrong (flags, arguments that fit no overload), 3 a registry cannot be reached.

mod attachments;
mod bench;
mod bench_attempts;
mod bench_load;
mod bench_report;
mod bounds;
mod call_report;
mod class_listing;
mod decode_hint;
mod demo;
mod error_chain;
mod field_types;
mod grpc_call;
mod grpc_channel;
mod invoke;
mod invoke_args;
mod invoke_target;
mod java_types;
mod json;
mod list;
mod logging;
mod metrics_endpoint;
mod output;
mod params;
mod progress;
mod proto_descriptors;
mod proto_invoke;
mod proto_messages;
mod provider_rows;
mod provider_watch;
mod providers;
mod reflection;
mod registry_args;
mod scenario;
mod service_info;
mod simulate;
mod tls_args;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rudder_common::error::RpcError;

/// What `--help` says after the commands.
const AFTER_HELP: &str = "\
Environment:
  RUDDER_LOG  log filter for stderr, tracing's EnvFilter syntax (default warn; e.g. debug,
              rudder_registry=trace)
  NO_COLOR    set to turn colour off (stderr is only coloured on a terminal anyway)

Exit codes:
  0  success (an empty listing included)
  1  the service said no: a call failed; no provider, method, version or group
  2  the command line is wrong: flags, --args that fit no overload or do not convert
  3  a registry cannot be reached: nothing listens there, it is not ZooKeeper, no session within
     --connect-timeout, or the connection was lost (try again later)";

/// The exit code of a registry that cannot be reached (docs/cli.md's table, `--help`).
const EXIT_UNREACHABLE: u8 = 3;

/// A Rust consumer for Apache Dubbo services.
#[derive(Debug, Parser)]
#[command(name = "rudder", version, about, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Examples closing each command's `--help` (docs/cli.md has more).
const SIMULATE_EXAMPLES: &str = "\
Examples:
  rudder simulate --provider 'dubbo://10.0.0.1:20880/com.acme.Greeter?weight=100' \\
                  --provider 'dubbo://10.0.0.2:20880/com.acme.Greeter?weight=300' --calls 1000 --summary --seed 42
  rudder simulate --providers-file providers.txt --version 1.0.0 --weights
  rudder simulate --registry zookeeper://127.0.0.1:2181 --interface com.acme.Greeter --loadbalance roundrobin";
const LIST_EXAMPLES: &str = "\
Examples:
  rudder list --registry zookeeper://127.0.0.1:2181
  rudder list --registry zookeeper://127.0.0.1:2181 com.acme.Greeter          # its methods and classes
  rudder list --registry zookeeper://127.0.0.1:2181 --format json            # always one JSON array";
const PROVIDERS_EXAMPLES: &str = "\
Examples:
  rudder providers --registry zookeeper://127.0.0.1:2181 com.acme.Greeter --version 1.0.0
  rudder providers --registry zookeeper://127.0.0.1:2181 com.acme.Greeter --watch
  rudder providers --registry zookeeper://127.0.0.1:2181 com.acme.Greeter --method sayHello --explain";
const INVOKE_EXAMPLES: &str = "\
Examples:
  rudder invoke --registry zookeeper://127.0.0.1:2181 com.acme.Greeter --method sayHello --args '[\"rust\"]'
  rudder invoke --url dubbo://127.0.0.1:20880/com.acme.Greeter --method add --args '[2, 3]' -v
  rudder invoke --url dubbo://127.0.0.1:20880/com.acme.Billing --method charge \\
                --types java.math.BigDecimal,java.time.LocalDate --args '[\"12.34\", \"2026-12-31\"]'
  rudder invoke --url tri://127.0.0.1:50051 --list                          # gRPC reflection";
const DEMO_EXAMPLES: &str = "\
Examples:
  rudder demo
  rudder demo --scenario slow
  rudder demo --registry zookeeper://127.0.0.1:2181 --write-to-registry     # writes 4 ephemeral providers";
const BENCH_EXAMPLES: &str = "\
Examples:
  rudder bench --registry zookeeper://127.0.0.1:2181 --interface com.acme.Greeter --method sayHello \\
               --args '[\"rust\"]' --concurrency 16 --duration 30s
  rudder bench --url dubbo://127.0.0.1:20880/com.acme.Greeter --method sayHello --calls 10000 --format json";

#[derive(Debug, Subcommand)]
enum Command {
    /// Preview which provider each call would go to, exactly as a Dubbo consumer would pick.
    #[command(after_help = SIMULATE_EXAMPLES)]
    Simulate(simulate::SimulateArgs),
    /// The services in a registry, or one service's methods (like Dubbo telnet `ls`, `grpcurl list`).
    #[command(after_help = LIST_EXAMPLES)]
    List(list::ListArgs),
    /// List the providers a consumer would use, from ZooKeeper, with configurators applied.
    #[command(after_help = PROVIDERS_EXAMPLES)]
    Providers(providers::ProvidersArgs),
    /// Call a method of a Dubbo service and print each result as one JSON line.
    #[command(after_help = INVOKE_EXAMPLES)]
    Invoke(invoke::InvokeArgs),
    /// Run Dubbo's five static balancers against embedded providers and show how each splits the
    /// traffic (--scenario: every strategy, eight, under faults).
    #[command(after_help = DEMO_EXAMPLES)]
    Demo(demo::DemoArgs),
    /// Load a Dubbo service over dubbo:// or tri://: N calls in flight, latency percentiles, errors,
    /// per-provider shares.
    #[command(after_help = BENCH_EXAMPLES)]
    Bench(bench::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let attempts = logging::install(matches!(&cli.command, Command::Invoke(args) if args.verbose));
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match cli.command {
        Command::Simulate(args) => simulate::run(args, &mut out),
        Command::List(args) => list::run(args, &mut out),
        Command::Providers(args) => providers::run(args, &mut out),
        Command::Demo(args) => demo::run(args, &mut out),
        Command::Invoke(mut args) => {
            // The positional SERVICE is --interface by another name.
            args.interface = args.interface.take().or(args.service.take());
            invoke::run(args, attempts, &mut out)
        }
        Command::Bench(args) => bench::run(args, &mut out),
    };
    let flushed = out.flush();
    match result.and(flushed.map_err(Into::into)) {
        Ok(()) => ExitCode::SUCCESS,
        // Already said on stderr, call by call.
        Err(error) if error.downcast_ref::<invoke::Reported>().is_some() => ExitCode::from(1),
        Err(error) => {
            let label = logging::error_label();
            // One line, `a: b: c`: each error of the chain says its own part once.
            match error.downcast_ref::<RpcError>() {
                Some(rpc) => logging::say(format!(
                    "{label} {}: {}",
                    invoke::label(rpc.kind()),
                    error_chain::chain_text(rpc)
                )),
                None => logging::say(format!("{label} {error:#}")),
            }
            if registry_args::is_unreachable(&error) {
                return ExitCode::from(EXIT_UNREACHABLE);
            }
            let call_failed = error
                .chain()
                .any(|e| e.downcast_ref::<RpcError>().is_some());
            ExitCode::from(if call_failed { 1 } else { 2 })
        }
    }
}
