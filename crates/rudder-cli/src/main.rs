//! `rudder`: preview, inspect and call Dubbo services from the command line.
//!
//! Exit codes: 0 success, 1 a call failed or no provider was found, 2 bad usage or an internal error.

mod bench;
mod bounds;
mod demo;
mod invoke;
mod java_types;
mod json;
mod metrics_endpoint;
mod params;
mod providers;
mod scenario;
mod simulate;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rudder_common::error::RpcError;

/// A Rust consumer for Apache Dubbo services.
#[derive(Debug, Parser)]
#[command(name = "rudder", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Preview which provider each call would go to, exactly as a Dubbo consumer would pick.
    Simulate(simulate::SimulateArgs),
    /// List the providers a consumer would use, from ZooKeeper, with configurators applied.
    Providers(providers::ProvidersArgs),
    /// Call a method of a Dubbo service and print each result as one JSON line.
    Invoke(invoke::InvokeArgs),
    /// Run the five balancers against embedded providers and show how each splits the traffic.
    Demo(demo::DemoArgs),
    /// Load a Dubbo service: N calls in flight, latency percentiles, errors, per-provider shares.
    Bench(bench::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    use tracing_subscriber::prelude::*;
    let log_filter =
        tracing_subscriber::EnvFilter::try_from_env("RUDDER_LOG").unwrap_or_else(|_| "warn".into());
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(log_filter),
        )
        // `rudder bench` reads each attempt's provider from its span; off otherwise.
        .with(
            bench::attempts::AttemptLayer.with_filter(tracing_subscriber::filter::filter_fn(
                bench::attempts::wanted,
            )),
        )
        .init();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match cli.command {
        Command::Simulate(args) => simulate::run(args, &mut out),
        Command::Providers(args) => providers::run(args, &mut out),
        Command::Demo(args) => demo::run(args, &mut out),
        Command::Invoke(args) => invoke::run(args, &mut out),
        Command::Bench(args) => bench::run(args, &mut out),
    };
    let flushed = out.flush();
    match result.and(flushed.map_err(Into::into)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            match error.downcast_ref::<RpcError>() {
                Some(rpc) => eprintln!("error: {}: {}", rpc.kind(), rpc.message()),
                None => eprintln!("error: {error:#}"),
            }
            let call_failed = error
                .chain()
                .any(|e| e.downcast_ref::<RpcError>().is_some());
            ExitCode::from(if call_failed { 1 } else { 2 })
        }
    }
}
