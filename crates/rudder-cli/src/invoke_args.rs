//! The flags of `rudder invoke`, read by the command (`invoke`), its protobuf path (`proto_invoke`)
//! and its target checks (`invoke_target`, through [`InvokeArgs::target`]).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use crate::attachments;
use crate::bounds;
use crate::invoke_target::CallTarget;
use crate::params::ConsumerArgs;
use crate::registry_args::RegistryArgs;

/// Arguments of `rudder invoke`.
#[derive(Debug, Args)]
pub(crate) struct InvokeArgs {
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
    #[command(flatten)]
    pub(crate) tls: crate::tls_args::TlsArgs,
    /// Call this provider directly: dubbo://HOST:PORT[/INTERFACE][?version=..&group=..] (or tri://). --interface,
    /// --version and --group apply to it as a Dubbo reference's do (a contradiction is an error).
    #[arg(long, value_name = "URL", conflicts_with = "registry")]
    pub(crate) url: Option<String>,
    /// The service interface (with --url: its path unless the URL has one).
    #[arg(long, value_name = "NAME")]
    pub(crate) interface: Option<String>,
    /// The same as --interface NAME: `rudder invoke --registry R com.acme.Greeter --method m`.
    #[arg(value_name = "SERVICE", conflicts_with = "interface")]
    pub(crate) service: Option<String>,
    /// Service version.
    #[arg(long)]
    pub(crate) version: Option<String>,
    /// Service group.
    #[arg(long)]
    pub(crate) group: Option<String>,
    /// The method to call.
    #[arg(long, required_unless_present = "list")]
    pub(crate) method: Option<String>,
    /// Java parameter types, comma-separated (java.lang.String,int,...). Without it: the overload the
    /// arguments fit in the registry's metadata, else inferred from the JSON.
    #[arg(long, value_name = "T1,T2,...")]
    pub(crate) types: Option<String>,
    /// Arguments as a JSON array; @FILE reads them from a file, - from stdin (up to 64 MiB).
    #[arg(long, value_name = "JSON_ARRAY|@FILE|-", default_value = "[]")]
    pub(crate) args: String,
    /// An attachment sent with every call, KEY=VALUE (repeatable, at most 256): `registry_zone=hz`
    /// routes the call to the registry of that zone.
    #[arg(long = "attachment", value_name = "KEY=VALUE", value_parser = attachments::attachment)]
    attachments: Vec<(String, String)>,
    /// How many times to call (1 to 1000000000), one after another; every call is made and counted,
    /// failed or not.
    #[arg(long, default_value_t = 1, value_parser = bounds::count(bounds::MAX_CALLS))]
    calls: usize,
    #[command(flatten)]
    pub(crate) consumer: ConsumerArgs,
    /// Call through Dubbo's generic `$invoke` (objects travel as maps, which the provider converts
    /// to the parameter types). The result prints as the provider's generic result: each object's
    /// readable properties (getters and public fields), enums as their names.
    #[arg(long)]
    pub(crate) generic: bool,
    /// With --generic, keep the "class" entry the provider adds to each object of the result
    /// (Dubbo's generic.include.class); by default it is left out, as without --generic.
    #[arg(long, requires = "generic")]
    pub(crate) with_class: bool,
    /// Per-call timeout in milliseconds (1 to 2147483647, Dubbo's int range).
    #[arg(long, value_name = "MS", value_parser = bounds::positive(bounds::MAX_TIMEOUT_MS))]
    pub(crate) timeout: Option<u64>,
    /// Per call, print on stderr the provider that answered, the elapsed time and the attempts.
    #[arg(short, long)]
    pub(crate) verbose: bool,
    /// Serve Prometheus metrics of the calls at http://ADDR/metrics while they run (e.g. 127.0.0.1:9464;
    /// port 0 picks one; the address is printed on stderr).
    #[arg(long, value_name = "ADDR")]
    pub(crate) metrics_addr: Option<SocketAddr>,
    /// With --metrics-addr: keep serving after the calls end, until Ctrl-C.
    #[arg(long, requires = "metrics_addr")]
    pub(crate) linger: bool,
    #[command(flatten)]
    pub(crate) proto: ProtoArgs,
}

impl InvokeArgs {
    /// How many calls to make.
    pub(crate) fn calls(&self) -> usize {
        self.calls
    }

    /// The `--attachment` pairs.
    pub(crate) fn attachments(&self) -> &[(String, String)] {
        &self.attachments
    }

    /// The method to call (`--method`; only `--list` goes without).
    pub(crate) fn method(&self) -> Result<&str> {
        self.method.as_deref().context("--method is required")
    }

    /// Where the calls go.
    pub(crate) fn target(&self) -> CallTarget<'_> {
        CallTarget {
            url: self.url.as_deref(),
            interface: self.interface.as_deref(),
            version: self.version.as_deref(),
            group: self.group.as_deref(),
            registry: &self.registry,
            consumer: &self.consumer,
            timeout: self.timeout,
        }
    }
}

/// The protobuf flags of `rudder invoke`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ProtoArgs {
    /// Call a protobuf (IDL) service over tri:// / gRPC, with the descriptors of this .proto file
    /// (repeatable; parsed at run time, no protoc needed). --args holds the request message as proto3
    /// JSON ('[{"name":"x"}]'); each answer is printed as one proto3 JSON line. Without --proto, a
    /// provider serving gRPC server reflection gives the descriptors.
    #[arg(long = "proto", value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
    /// Where the --proto files' imports are looked up (repeatable; default: each file's directory).
    #[arg(long = "import-path", value_name = "DIR", requires = "files")]
    pub(crate) import_paths: Vec<PathBuf>,
    /// List the services and methods (request and response types, streaming kind) of the --proto
    /// files, or of the provider's reflection with --url / --registry, instead of calling.
    #[arg(long)]
    pub(crate) list: bool,
    /// Print fields that have their default value (proto3 JSON omits them).
    #[arg(long)]
    pub(crate) emit_defaults: bool,
}

impl ProtoArgs {
    /// Whether the command is protobuf whatever the provider answers.
    pub(crate) fn explicit(&self) -> bool {
        !self.files.is_empty() || self.list
    }
}
