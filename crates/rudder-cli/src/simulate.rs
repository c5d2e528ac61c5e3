//! `rudder simulate`: what would the consumer pick? The real balancer over a given provider list, with a
//! fixed clock and seed, printing one chosen address per call, the weights, or a per-provider summary.
//!
//! With `--registry` repeated, each call first picks the registry by the zone-aware rules a reference
//! with those registries applies (`preferred`, the call's `registry_zone` / `registry_zone_force`
//! attachments from `--attachment`, registry `weight`; see `rudder_cluster::zone_aware`), then the
//! provider in it; `--summary` adds one `registry <address> <calls>` line per registry.
//!
//! `--summary` prints `ADDRESS CALLS SHARE % (weight EFFECTIVE)` per provider. `leastactive` and
//! `shortestresponse` read live traffic a simulation does not make: a note on stderr says that they
//! act as weighted random here.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use rudder_cluster::balancer::Balancer;
use rudder_cluster::directory::{Directory, ProviderSet};
use rudder_cluster::loadbalance::{MethodView, Pick};
use rudder_cluster::router::RouterChain;
use rudder_cluster::zone_aware::{choose_registry, registry_pick_rng, RegistryChoice, ZoneRequest};
use rudder_common::clock::{Clock, ManualClock, SystemClock};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::Value;

use rudder_common::url::merge::ConsumerParams;

use crate::params::ConsumerArgs;
use crate::registry_args::RegistryArgs;
use crate::{bounds, json};

/// Arguments of `rudder simulate`.
#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// A provider URL, plain or percent-encoded (repeatable; list order matters).
    #[arg(long = "provider", value_name = "URL", conflicts_with = "registry")]
    providers: Vec<String>,
    /// A file with one provider URL per line (blank lines and `#` comments skipped).
    #[arg(long, value_name = "FILE", conflicts_with = "registry")]
    providers_file: Option<PathBuf>,
    /// Read the providers from --registry instead (needs --interface).
    #[command(flatten)]
    registry: RegistryArgs,
    /// The service interface to look up in --registry.
    #[arg(long, value_name = "NAME", requires = "registry")]
    interface: Option<String>,
    /// The same as --interface NAME, as `providers`, `invoke` and `bench` take it.
    #[arg(
        value_name = "SERVICE",
        conflicts_with = "interface",
        requires = "registry"
    )]
    service: Option<String>,
    /// The service version: with --registry the one looked up; with --provider / --providers-file
    /// the given URLs of other versions are left out, as a consumer of this version leaves them.
    #[arg(long)]
    version: Option<String>,
    /// The service group (`*` any, `a,b` either): applied as --version is.
    #[arg(long)]
    group: Option<String>,
    /// The method being called.
    #[arg(long, default_value = "sayHello")]
    method: String,
    /// An attachment of every call, KEY=VALUE (repeatable): `registry_zone=hz` routes to that zone.
    #[arg(long = "attachment", value_name = "KEY=VALUE", value_parser = crate::attachments::attachment)]
    attachments: Vec<(String, String)>,
    #[command(flatten)]
    consumer: ConsumerArgs,
    /// Fix the clock at this instant (epoch ms, 0 to 253402300799999, i.e. up to year 9999); default: now.
    #[arg(long, value_name = "EPOCH_MS", value_parser = bounds::epoch_millis())]
    now: Option<i64>,
    /// Number of calls (1 to 1000000000); each is picked and printed as it goes.
    #[arg(long, default_value_t = 10, value_parser = bounds::count(bounds::MAX_CALLS))]
    calls: usize,
    /// Arguments of every call, as a JSON array (consistenthash keys on them).
    #[arg(long, value_name = "JSON_ARRAY", conflicts_with = "args_file")]
    args: Option<String>,
    /// A file with one JSON array per line: one call per line.
    #[arg(long, value_name = "FILE")]
    args_file: Option<PathBuf>,
    /// Seed for random choices (default: random).
    #[arg(long)]
    seed: Option<u64>,
    /// Print each provider's effective weight for the method and exit.
    #[arg(long, conflicts_with = "summary")]
    weights: bool,
    /// Print how many calls each provider got, its share in percent and its effective weight,
    /// instead of one line per call.
    #[arg(long)]
    summary: bool,
}

pub(crate) fn run(mut args: SimulateArgs, out: &mut dyn Write) -> Result<()> {
    args.interface = args.interface.take().or(args.service.take());
    if args.registry.is_given() && args.interface.is_none() {
        bail!("--registry needs --interface");
    }
    let interface = args.interface.clone().unwrap_or_default();
    let merge = args.consumer.merge(&interface)?;
    crate::attachments::check_attachments(&args.attachments)?;
    let groups = provider_groups(&args, &merge)?;
    let consumer_url = args.consumer.service_consumer_url(
        &interface,
        args.version.as_deref(),
        args.group.as_deref(),
    )?;
    let clock: Arc<dyn Clock> = match args.now {
        Some(now) => Arc::new(ManualClock::new(now)),
        None => Arc::new(SystemClock),
    };
    // One directory and balancer per registry, seeded as a reference with these registries seeds them.
    let mut registries = Vec::with_capacity(groups.len());
    for (index, (choice, registry, urls)) in groups.into_iter().enumerate() {
        // A registry's providers are routed by the rules its config center holds now, as a
        // reference would route them; given URLs by static tags only.
        let routers = match &registry {
            Some(registry) => crate::providers::runtime()?
                .block_on(rudder::tools::load_router_rules(
                    registry,
                    &consumer_url,
                    &urls,
                ))
                .context("reading the router rules")?,
            None => Arc::new(RouterChain::new(consumer_url.clone())),
        };
        let directory = Arc::new(Directory::default());
        let update = directory.replace(urls);
        if update.rejected > 0 {
            bail!(
                "{} provider URL(s) have unreadable parameters (see the warnings above)",
                update.rejected
            );
        }
        let mut builder = Balancer::builder(Arc::clone(&directory))
            .clock(Arc::clone(&clock))
            .routers(routers);
        if let Some(seed) = args.seed {
            builder = builder.seed(seed.wrapping_add(index as u64));
        }
        let snapshot = directory.snapshot();
        let view = snapshot.view(&args.method);
        registries.push(Simulated {
            choice,
            balancer: builder.build(),
            snapshot,
            view,
        });
    }
    if registries.iter().all(|r| r.view.is_empty()) {
        bail!("no providers: give --provider URL, --providers-file FILE or --registry URL --interface NAME");
    }
    let several = registries.len() > 1;
    warn_about(&args, &registries);

    if args.weights {
        let pick = Pick::at(clock.now_millis());
        for registry in &registries {
            if several {
                writeln!(out, "# registry {}", registry.choice)?;
            }
            for (i, provider) in registry.view.providers().iter().enumerate() {
                writeln!(
                    out,
                    "{} {}",
                    provider.address(),
                    registry.view.weight(i, &pick)
                )?;
            }
        }
        return Ok(());
    }

    // Calls per provider, per registry.
    let mut counts: Vec<Vec<usize>> = registries.iter().map(|r| vec![0; r.view.len()]).collect();
    let choices: Vec<RegistryChoice> = registries.iter().map(|r| r.choice.clone()).collect();
    let has_providers = |i: usize| !registries[i].view.is_empty();
    let registry_rng = registry_pick_rng(args.seed);
    for arguments in call_arguments(&args)? {
        let types = vec!["java.lang.Object".to_owned(); arguments.len()];
        let mut invocation = Invocation::new(args.method.clone(), types, arguments);
        for (key, value) in &args.attachments {
            invocation.set_attachment(key, value);
        }
        // One registry has no zone-aware layer, as in Dubbo.
        let index = if several {
            registry_rng.with(|rng| {
                choose_registry(&choices, &has_providers, &ZoneRequest::of(&invocation), rng)
            })?
        } else {
            0
        };
        let registry = &registries[index];
        let balancer = &registry.balancer;
        let chosen = balancer.with_routed_view(&registry.snapshot, &invocation, |view| {
            let index = balancer.select_index_in(view, &invocation, &[])?;
            Ok(Arc::clone(&view.providers()[index]))
        })?;
        if args.summary {
            let position = registry
                .view
                .providers()
                .iter()
                .position(|p| Arc::ptr_eq(p, &chosen))
                .unwrap_or(0);
            counts[index][position] += 1;
        } else {
            writeln!(out, "{}", chosen.address())?;
        }
    }
    if args.summary {
        let total: usize = counts.iter().flatten().sum();
        let pick = Pick::at(clock.now_millis());
        for (registry, counts) in registries.iter().zip(&counts) {
            for (i, (provider, count)) in registry.view.providers().iter().zip(counts).enumerate() {
                writeln!(
                    out,
                    "{} {count} {} (weight {})",
                    provider.address(),
                    percent(*count, total),
                    registry.view.weight(i, &pick)
                )?;
            }
        }
        if several {
            for (registry, counts) in registries.iter().zip(&counts) {
                let total: usize = counts.iter().sum();
                writeln!(out, "registry {} {total}", registry.choice.label())?;
            }
        }
    }
    Ok(())
}

/// `33.3 %`: `count` as a share of `total`, one decimal.
fn percent(count: usize, total: usize) -> String {
    if total == 0 {
        return "0.0 %".to_owned();
    }
    format!("{:.1} %", count as f64 * 100.0 / total as f64)
}

/// Warnings on stderr about what the simulation cannot show: a method the providers do not list,
/// and balancers that read live traffic, which a simulation has none of.
fn warn_about(args: &SimulateArgs, registries: &[Simulated]) {
    let urls: Vec<&DubboUrl> = registries
        .iter()
        .flat_map(|r| r.view.providers().iter().map(|p| p.url()))
        .collect();
    if let Some(methods) = crate::service_info::listed_methods(urls.iter().copied()) {
        if !methods.iter().any(|m| m == &args.method) {
            crate::logging::say(format!(
                "{} the providers list no method {} (they list: {}); simulating it anyway",
                crate::logging::warning_label(),
                args.method,
                methods.join(", ")
            ));
        }
    }
    let balancers: std::collections::BTreeSet<&str> = registries
        .iter()
        .map(|r| r.view.loadbalance_name())
        .collect();
    for name in balancers {
        let what = match name {
            "leastactive" => "the fewest calls in flight",
            "shortestresponse" => "the shortest measured response times",
            _ => continue,
        };
        crate::logging::say(format!(
            "note: {name} picks by {what}; a simulation makes no calls, so it acts as weighted \
             random here until calls are in flight or measured"
        ));
    }
}

/// One registry (or the given provider list) being simulated.
struct Simulated {
    choice: RegistryChoice,
    balancer: Balancer,
    snapshot: Arc<ProviderSet>,
    /// Every provider of the method, routed or not: the rows of `--summary` and `--weights`.
    view: Arc<MethodView>,
}

/// One registry's choice parameters, its session URL (`None` for given provider URLs) and its providers.
type ProviderGroup = (RegistryChoice, Option<String>, Vec<DubboUrl>);

/// The providers of each registry (one group without registries), merged with the consumer parameters.
fn provider_groups(args: &SimulateArgs, merge: &ConsumerParams) -> Result<Vec<ProviderGroup>> {
    let Some(interface) = args.interface.as_ref().filter(|_| args.registry.is_given()) else {
        return Ok(vec![(
            RegistryChoice::new("provider URLs"),
            None,
            of_version_and_group(args, provider_urls(args, merge)?)?,
        )]);
    };
    let targets = args.registry.targets()?;
    let several = targets.len() > 1;
    targets
        .into_iter()
        .map(|target| {
            let query = crate::providers::RegistryQuery {
                registry: target.session_url().to_owned(),
                interface: interface.clone(),
                version: args.version.clone(),
                group: args.group.clone(),
                options: args.registry.options(),
                merge: merge.clone(),
            };
            // With several registries an empty one is skipped, as a reference skips it.
            let urls = if several {
                crate::providers::list_providers_in(&query)?
            } else {
                crate::providers::list_providers(&query)?
            };
            Ok((
                target.choice().clone(),
                Some(target.session_url().to_owned()),
                urls,
            ))
        })
        .collect()
}

/// The given providers a consumer of `--version` and `--group` would use (Dubbo's
/// `UrlUtils.isMatch`: `*` any, a group list any of its groups, absent only the unversioned or
/// ungrouped); none left is an error naming the versions and groups there are.
fn of_version_and_group(args: &SimulateArgs, urls: Vec<DubboUrl>) -> Result<Vec<DubboUrl>> {
    let clean = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    let (version, group) = (clean(&args.version), clean(&args.group));
    if version.is_none() && group.is_none() {
        return Ok(urls);
    }
    let of = |url: &DubboUrl, key: &str| url.parameter(key).unwrap_or("").trim().to_owned();
    let kept: Vec<DubboUrl> = urls
        .iter()
        .filter(|u| match version.as_deref() {
            Some("*") => true,
            wanted => of(u, "version") == wanted.unwrap_or(""),
        })
        .filter(|u| match group.as_deref() {
            Some("*") => true,
            Some(wanted) => wanted.split(',').any(|w| w.trim() == of(u, "group")),
            None => of(u, "group").is_empty(),
        })
        .cloned()
        .collect();
    if kept.is_empty() {
        let interface = urls
            .first()
            .map(|u| u.service_interface().to_owned())
            .unwrap_or_default();
        let why = crate::service_info::missing_version_or_group(
            &interface,
            version.as_deref(),
            group.as_deref(),
            &urls,
        )
        .unwrap_or_else(|| "no given provider matches --version and --group".to_owned());
        bail!("{why}");
    }
    if kept.len() < urls.len() {
        crate::logging::say(format!(
            "# {} of the {} given providers match --version / --group",
            kept.len(),
            urls.len()
        ));
    }
    Ok(kept)
}

/// The given provider URLs, each merged with the consumer parameters.
fn provider_urls(args: &SimulateArgs, merge: &ConsumerParams) -> Result<Vec<DubboUrl>> {
    let mut texts: Vec<(String, String)> = args
        .providers
        .iter()
        .enumerate()
        .map(|(i, u)| (format!("--provider #{}", i + 1), u.clone()))
        .collect();
    if let Some(path) = &args.providers_file {
        let content =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        for (n, line) in content.lines().enumerate() {
            let line = line.trim();
            if !line.is_empty() && !line.starts_with('#') {
                texts.push((format!("{}:{}", path.display(), n + 1), line.to_owned()));
            }
        }
    }
    texts
        .into_iter()
        .map(|(origin, text)| {
            DubboUrl::parse_any(&text)
                .map(|url| merge.merge(&url))
                .with_context(|| format!("{origin}: bad provider URL {text:?}"))
        })
        .collect()
}

/// The arguments of each call, produced one call at a time: `--calls` repeats of `--args` are never
/// materialised together.
fn call_arguments(args: &SimulateArgs) -> Result<Box<dyn Iterator<Item = Vec<Value>>>> {
    if let Some(path) = &args.args_file {
        let content =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let calls = content
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(n, l)| {
                json::parse_args(l).with_context(|| format!("{}:{}", path.display(), n + 1))
            })
            .collect::<Result<Vec<_>>>()?;
        return Ok(Box::new(calls.into_iter()));
    }
    let one = match &args.args {
        Some(text) => json::parse_args(text)?,
        None => Vec::new(),
    };
    Ok(Box::new(std::iter::repeat_n(one, args.calls)))
}
