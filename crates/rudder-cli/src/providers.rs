//! `rudder providers`: the providers a consumer would see in ZooKeeper right now, with the configurators
//! applied, one line each: `host:port protocol weight=<effective weight> loadbalance=<name>`.
//!
//! The listing does not register a consumer node (it inspects, it does not consume). With `--watch` a new
//! listing, headed by a `#` line, follows every change until Ctrl-C. The same one-shot listing feeds
//! `rudder simulate --registry`.
//!
//! `--registry` is repeatable (one registry per data centre): each registry's listing is then headed by
//! `# registry <address> [zone=..] [preferred] weight=..`, and only all of them being empty is an error.
//! The registry URL's `preferred`, `zone` and `weight` describe how a reference chooses among registries
//! and are not sent to ZooKeeper.

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use rudder::internals::RegistryTarget;
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::Pick;
use rudder_common::clock::{Clock, SystemClock};
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::url::DubboUrl;
use rudder_registry::{ConsumerSpec, RegistryOptions, ZookeeperRegistry};

use rudder_common::invocation::Invocation;
use rudder_common::url::merge::ConsumerParams;

use crate::bounds;
use crate::params::ConsumerArgs;

/// Where to find a service's providers (shared by `providers` and `simulate`).
#[derive(Debug, Clone)]
pub(crate) struct RegistryQuery {
    pub(crate) registry: String,
    pub(crate) interface: String,
    pub(crate) version: Option<String>,
    pub(crate) group: Option<String>,
    pub(crate) connect_timeout: Duration,
    /// Consumer parameters merged into every provider URL.
    pub(crate) merge: ConsumerParams,
}

impl RegistryQuery {
    fn spec(&self) -> ConsumerSpec {
        let mut spec = ConsumerSpec::new(self.interface.clone()).application("rudder-cli");
        spec.version = self.version.clone();
        spec.group = self.group.clone();
        spec.register = false;
        spec.parameters(self.merge.clone())
    }

    fn options(&self) -> RegistryOptions {
        RegistryOptions::default().with_connect_timeout(self.connect_timeout)
    }
}

/// Arguments of `rudder providers`.
#[derive(Debug, Args)]
pub(crate) struct ProvidersArgs {
    /// The registry, e.g. `zookeeper://127.0.0.1:2181` (`?backup=h:p,h:p`, `&group=`, `&chroot=`;
    /// `&zone=`, `&weight=`, `&preferred=` for several). Repeatable: one listing per registry.
    #[arg(long, value_name = "URL", required = true)]
    registry: Vec<String>,
    /// The service interface.
    #[arg(long, value_name = "NAME")]
    interface: String,
    /// The service version (`*` for any).
    #[arg(long)]
    version: Option<String>,
    /// The service group (`*` for any, `a,b` for either).
    #[arg(long)]
    group: Option<String>,
    /// Show the effective weight and balancer for this method (default: service level).
    #[arg(long, value_name = "NAME")]
    method: Option<String>,
    /// Print a new listing on every change, until Ctrl-C.
    #[arg(long)]
    watch: bool,
    /// For a call of --method (with the --attachment values), print each provider's fate under the
    /// router rules of the config center: in or out, and which rule decided it.
    #[arg(long, requires = "method", conflicts_with = "watch")]
    explain: bool,
    /// An attachment of the explained call, KEY=VALUE (repeatable): `dubbo.tag=gray`.
    #[arg(long = "attachment", value_name = "KEY=VALUE", value_parser = crate::invoke::attachment, requires = "explain")]
    attachments: Vec<(String, String)>,
    #[command(flatten)]
    consumer: ConsumerArgs,
    /// Seconds to wait for ZooKeeper before giving up (1 to 3600).
    #[arg(
        long,
        default_value_t = 10,
        value_name = "SECONDS",
        value_parser = bounds::positive(bounds::MAX_CONNECT_TIMEOUT_SECS)
    )]
    connect_timeout: u64,
}

pub(crate) fn run(args: ProvidersArgs, out: &mut dyn Write) -> Result<()> {
    let merge = args.consumer.merge(&args.interface)?;
    // No method-scoped key has an empty method name, so "" reads the service-level values.
    let method = args.method.clone().unwrap_or_default();
    let targets = registry_targets(&args.registry)?;
    if targets.len() > 1 {
        if args.watch {
            bail!("--watch follows one registry: give --registry once");
        }
        return list_several(&args, &targets, merge, &method, out);
    }
    let query = RegistryQuery {
        registry: targets[0].session_url().to_owned(),
        interface: args.interface.clone(),
        version: args.version.clone(),
        group: args.group.clone(),
        connect_timeout: Duration::from_secs(args.connect_timeout),
        merge,
    };
    runtime()?.block_on(async {
        let registry = connect(&query).await?;
        let directory = Arc::new(Directory::sorted(Default::default()));
        let subscription = registry
            .subscribe(query.spec(), Arc::clone(&directory))
            .await
            .context("subscribing")?;
        if !args.watch {
            let count = print_listing(&directory, &method, out)?;
            if args.explain {
                let disabled = subscription.status().borrow().disabled.clone();
                explain(&args, &query, &directory, &disabled, out).await?;
            }
            registry.close().await;
            if count == 0 {
                return Err(no_provider(&query).into());
            }
            return Ok(());
        }
        let mut status = subscription.status();
        let mut listing = 0u64;
        loop {
            let generation = status.borrow_and_update().generation;
            listing += 1;
            writeln!(out, "# listing {listing} (generation {generation})")?;
            print_listing(&directory, &method, out)?;
            out.flush()?;
            tokio::select! {
                changed = status.changed() => if changed.is_err() { break },
                _ = tokio::signal::ctrl_c() => break,
            }
        }
        registry.close().await;
        Ok(())
    })
}

/// Reads every `--registry` URL (choice parameters split off), refusing the same registry twice.
pub(crate) fn registry_targets(urls: &[String]) -> Result<Vec<RegistryTarget>> {
    let mut targets: Vec<RegistryTarget> = Vec::with_capacity(urls.len());
    for (i, url) in urls.iter().enumerate() {
        let target =
            RegistryTarget::parse(url).with_context(|| format!("--registry #{}", i + 1))?;
        if targets
            .iter()
            .any(|t| t.choice().label() == target.choice().label())
        {
            bail!(
                "--registry #{}: {} is given twice",
                i + 1,
                target.choice().label()
            );
        }
        targets.push(target);
    }
    Ok(targets)
}

/// One listing per registry, each headed by the registry; an error only when all are empty.
fn list_several(
    args: &ProvidersArgs,
    targets: &[RegistryTarget],
    merge: ConsumerParams,
    method: &str,
    out: &mut dyn Write,
) -> Result<()> {
    let mut total = 0;
    let mut query = RegistryQuery {
        registry: String::new(),
        interface: args.interface.clone(),
        version: args.version.clone(),
        group: args.group.clone(),
        connect_timeout: Duration::from_secs(args.connect_timeout),
        merge,
    };
    for target in targets {
        query.registry = target.session_url().to_owned();
        let urls = list_providers_in(&query)?;
        let directory = Directory::sorted(Default::default());
        directory.replace(urls);
        writeln!(out, "# registry {}", target.choice())?;
        total += print_listing(&directory, method, out)?;
    }
    if total == 0 {
        return Err(no_provider(&query).into());
    }
    Ok(())
}

/// The usable providers of `query`, configurators applied, in registry order (one-shot); an error when
/// there is none.
pub(crate) fn list_providers(query: &RegistryQuery) -> Result<Vec<DubboUrl>> {
    let urls = list_providers_in(query)?;
    if urls.is_empty() {
        return Err(no_provider(query).into());
    }
    Ok(urls)
}

/// As [`list_providers`], an empty list being an answer.
pub(crate) fn list_providers_in(query: &RegistryQuery) -> Result<Vec<DubboUrl>> {
    runtime()?.block_on(async {
        let registry = connect(query).await?;
        let directory = Arc::new(Directory::sorted(Default::default()));
        let subscription = registry
            .subscribe(query.spec(), Arc::clone(&directory))
            .await
            .context("subscribing")?;
        let urls: Vec<DubboUrl> = directory
            .snapshot()
            .providers()
            .iter()
            .map(|p| p.url().clone())
            .collect();
        subscription.close().await;
        registry.close().await;
        Ok(urls)
    })
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

async fn connect(query: &RegistryQuery) -> Result<ZookeeperRegistry> {
    ZookeeperRegistry::connect(&query.registry, query.options())
        .await
        .context("connecting to the registry")
}

fn no_provider(query: &RegistryQuery) -> RpcError {
    RpcError::new(
        RpcErrorKind::NoProvider,
        format!(
            "no usable provider of {} in the registry",
            query.spec().match_url().service_key()
        ),
    )
}

/// One line per provider; returns how many.
fn print_listing(directory: &Directory, method: &str, out: &mut dyn Write) -> Result<usize> {
    let snapshot = directory.snapshot();
    let view = snapshot.view(method);
    let pick = Pick::at(SystemClock.now_millis());
    for (i, provider) in view.providers().iter().enumerate() {
        let url = provider.url();
        let loadbalance = url
            .method_parameter(method, "loadbalance")
            .filter(|name| !name.is_empty())
            .unwrap_or("random");
        writeln!(
            out,
            "{} {} weight={} loadbalance={loadbalance}",
            provider.address(),
            url.protocol(),
            view.weight(i, &pick),
        )?;
    }
    Ok(view.len())
}

/// Prints, for a call of `--method` with the `--attachment` values, each provider's fate under the
/// router rules the config center holds now (`rudder::load_router_rules`).
async fn explain(
    args: &ProvidersArgs,
    query: &RegistryQuery,
    directory: &Directory,
    disabled: &[rudder_registry::DisabledProvider],
    out: &mut dyn Write,
) -> Result<()> {
    crate::invoke::check_attachments(&args.attachments)?;
    let consumer_url = args.consumer.service_consumer_url(
        &query.interface,
        query.version.as_deref(),
        query.group.as_deref(),
    )?;
    let snapshot = directory.snapshot();
    let providers: Vec<DubboUrl> = snapshot
        .providers()
        .iter()
        .map(|p| p.url().clone())
        .collect();
    let chain = rudder::internals::load_router_rules(&query.registry, &consumer_url, &providers)
        .await
        .context("reading the router rules")?;
    for error in chain.errors() {
        writeln!(out, "# rule not applied: {error}")?;
    }
    let mut call = Invocation::new(args.method.clone().unwrap_or_default(), vec![], vec![]);
    for (key, value) in &args.attachments {
        call.set_attachment(key, value);
    }
    writeln!(out, "# explain {}", call.method_name())?;
    write!(out, "{}", chain.explain(&snapshot, &call))?;
    // Providers a configurator took out never reach the routers: listed here with their rule.
    for provider in disabled {
        writeln!(
            out,
            "  out {}  by configurator {} (disabled)",
            provider.address, provider.rule
        )?;
    }
    Ok(())
}
