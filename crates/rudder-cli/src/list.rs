//! `rudder list`: what a registry holds, as `grpcurl list` / `describe`, Dubbo telnet's `ls` and
//! dubbo-admin's service page show it.
//!
//! `rudder list --registry R`: one row per service, version and group: the number of providers, their
//! protocols, and the level they were found at (`interface`: `/dubbo/<interface>/providers`;
//! `application`: instances of the applications the interface-application mapping names, as a Dubbo 3
//! consumer finds a `register-mode=instance` provider; `both`). `rudder list --registry R --interface I`: I's methods, from the providers'
//! `methods=`, with parameter and return types where the metadata report has them, then the fields of
//! the classes they take and return and the constants of their enums (`rudder list
//! --registry R I` says the same, as `grpcurl list SERVICE` does). `--format json` on
//! both. Rows are read as registered: no consumer parameters, no configurators (`rudder providers`
//! shows those).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use anyhow::{bail, Context, Result};
use clap::Args;
use std::sync::Arc;

use rudder_cluster::directory::Directory;
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;
use rudder_registry::{ConsumerSpec, Registry};
use serde_json::json;

use crate::class_listing;
use crate::output::Format;
use crate::registry_args::RegistryArgs;
use crate::service_info::{self, Overload};

/// Arguments of `rudder list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    #[command(flatten)]
    registry: RegistryArgs,
    #[command(flatten)]
    tls: crate::tls_args::TlsArgs,
    /// List this service's methods instead of the services.
    #[arg(long, value_name = "NAME")]
    interface: Option<String>,
    /// The same as --interface NAME, as `grpcurl list SERVICE` takes it.
    #[arg(value_name = "SERVICE", conflicts_with = "interface")]
    service: Option<String>,
    /// Only providers of this version (with a service).
    #[arg(long)]
    version: Option<String>,
    /// Only providers of this group (with a service).
    #[arg(long)]
    group: Option<String>,
    /// text (aligned columns) or json (one array).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub(crate) fn run(args: ListArgs, out: &mut dyn Write) -> Result<()> {
    args.tls.install()?;
    let targets = args.registry.targets()?;
    let [target] = targets.as_slice() else {
        bail!("--registry is required, once");
    };
    let interface = args.interface.clone().or_else(|| args.service.clone());
    if interface.is_none() && (args.version.is_some() || args.group.is_some()) {
        bail!("--version and --group choose among a service's providers: name the service (--interface NAME, or SERVICE)");
    }
    crate::providers::runtime()?.block_on(async {
        let registry = args.registry.connect(target.session_url()).await?;
        let listed = match &interface {
            None => list_services(&*registry, args.format, out).await,
            Some(interface) => describe(&*registry, &args, interface, out).await,
        };
        registry.close().await;
        listed
    })
}

/// One service, version and group.
#[derive(Debug, Default)]
struct ServiceRow {
    /// `protocol://host:port` of each provider: one provider registered at both levels counts once.
    providers: BTreeSet<String>,
    protocols: BTreeSet<String>,
    interface_level: bool,
    application_level: bool,
}

impl ServiceRow {
    fn add(&mut self, url: &DubboUrl) {
        self.providers
            .insert(format!("{}://{}", url.protocol(), url.address()));
        self.protocols.insert(url.protocol().to_owned());
    }

    /// Where the providers were found: `interface` (`/dubbo/<interface>/providers`), `application`
    /// (instances of the mapped applications), `both`.
    fn level(&self) -> &'static str {
        match (self.interface_level, self.application_level) {
            (true, true) => "both",
            (false, true) => "application",
            _ => "interface",
        }
    }
}

/// Every provider URL of `interface` at interface level, and those found at application level when
/// the interface-application mapping names it (as a Dubbo 3 consumer finds them).
async fn both_levels(
    registry: &dyn Registry,
    interface: &str,
    mapped: bool,
) -> Result<(Vec<DubboUrl>, Vec<DubboUrl>)> {
    let interface_level = registry
        .provider_urls(interface)
        .await
        .with_context(|| format!("listing the providers of {interface}"))?;
    let application_level = if mapped {
        match application_urls(registry, interface).await {
            Ok(urls) => urls,
            Err(error) => {
                crate::logging::say(format!(
                    "{} {interface}: application-level providers not read: {error:#}",
                    crate::logging::warning_label()
                ));
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    Ok((interface_level, application_level))
}

/// The providers of `interface` at application level only (`migration.step=FORCE_APPLICATION`), any
/// version and group, read through a subscription that registers nothing.
async fn application_urls(registry: &dyn Registry, interface: &str) -> Result<Vec<DubboUrl>> {
    let settings = DubboUrl::parse(&format!(
        "consumer://127.0.0.1/{interface}?migration.step=FORCE_APPLICATION"
    ))?;
    let mut spec = ConsumerSpec::new(interface)
        .application("rudder-cli")
        .version("*")
        .group("*")
        .parameters(ConsumerParams::new(&settings));
    spec.register = false;
    let directory = Arc::new(Directory::sorted(Default::default()));
    let subscription = registry
        .subscribe(spec, Arc::clone(&directory) as _, None)
        .await
        .context("subscribing at application level")?;
    let urls = directory
        .snapshot()
        .providers()
        .iter()
        .map(|p| p.url().clone())
        .collect();
    subscription.close().await;
    Ok(urls)
}

async fn list_services(registry: &dyn Registry, format: Format, out: &mut dyn Write) -> Result<()> {
    let mut rows: BTreeMap<(String, String, String), ServiceRow> = BTreeMap::new();
    let listed = registry.services().await.context("listing the services")?;
    let mapped = registry
        .mapped_services()
        .await
        .context("reading the interface-application mapping")?;
    let services: BTreeSet<&String> = listed.iter().chain(&mapped).collect();
    for service in services {
        let (interface_level, application_level) =
            both_levels(registry, service, mapped.contains(service)).await?;
        if interface_level.is_empty() && application_level.is_empty() {
            rows.entry((service.clone(), String::new(), String::new()))
                .or_default()
                .interface_level = listed.contains(service);
            continue;
        }
        for (urls, application) in [(interface_level, false), (application_level, true)] {
            for url in urls {
                let key = (
                    service.clone(),
                    param(&url, "version"),
                    param(&url, "group"),
                );
                let row = rows.entry(key).or_default();
                row.add(&url);
                if application {
                    row.application_level = true;
                } else {
                    row.interface_level = true;
                }
            }
        }
    }
    match format {
        Format::Json => {
            let array: Vec<serde_json::Value> = rows
                .iter()
                .map(|((interface, version, group), row)| {
                    json!({
                        "interface": interface,
                        "version": non_empty(version),
                        "group": non_empty(group),
                        "providers": row.providers.len(),
                        "protocols": row.protocols,
                        "level": row.level(),
                    })
                })
                .collect();
            writeln!(out, "{}", serde_json::Value::Array(array))?;
        }
        Format::Text => {
            let cells: Vec<[String; 6]> = rows
                .iter()
                .map(|((interface, version, group), row)| {
                    [
                        interface.clone(),
                        dash(version),
                        dash(group),
                        row.providers.len().to_string(),
                        row.protocols.iter().cloned().collect::<Vec<_>>().join(","),
                        row.level().to_owned(),
                    ]
                })
                .collect();
            table(
                [
                    "SERVICE",
                    "VERSION",
                    "GROUP",
                    "PROVIDERS",
                    "PROTOCOLS",
                    "LEVEL",
                ],
                &cells,
                out,
            )?;
        }
    }
    Ok(())
}

async fn describe(
    registry: &dyn Registry,
    args: &ListArgs,
    interface: &str,
    out: &mut dyn Write,
) -> Result<()> {
    let mapped = registry
        .mapped_services()
        .await
        .context("reading the interface-application mapping")?
        .iter()
        .any(|m| m == interface);
    let (mut all, application_level) = both_levels(registry, interface, mapped).await?;
    // A provider at both levels is one provider.
    for url in application_level {
        let same = |u: &DubboUrl| {
            u.protocol() == url.protocol()
                && u.address() == url.address()
                && param(u, "version") == param(&url, "version")
                && param(u, "group") == param(&url, "group")
        };
        if !all.iter().any(same) {
            all.push(url);
        }
    }
    let urls: Vec<&DubboUrl> = all
        .iter()
        .filter(|u| matches(u, "version", args.version.as_deref()))
        .filter(|u| matches(u, "group", args.group.as_deref()))
        .collect();
    if urls.is_empty() {
        let why = service_info::missing_version_or_group(
            interface,
            args.version.as_deref().or(Some("*")),
            args.group.as_deref().or(Some("*")),
            &all,
        )
        .unwrap_or_else(|| format!("no provider of {interface}"));
        crate::logging::say(format!("{} {why}", crate::logging::warning_label()));
    }
    let definitions = registry
        .service_definitions(interface)
        .await
        .with_context(|| format!("reading the metadata of {interface}"))?;
    let definitions: Vec<_> = definitions
        .into_iter()
        .filter(|d| args.version.is_none() || d.version == args.version)
        .filter(|d| args.group.is_none() || d.group == args.group)
        .collect();
    let overloads = service_info::overloads(&definitions);
    let classes = class_listing::classes(definitions.iter().map(|d| d.text.as_str()), &overloads);
    let listed = service_info::listed_methods(urls.iter().copied()).unwrap_or_default();
    // Methods the providers list, each with its overloads when the metadata has them; methods only
    // the metadata knows are shown too (a provider that lists none).
    let mut names: BTreeSet<String> = listed.into_iter().collect();
    names.extend(overloads.iter().map(|o| o.name.clone()));
    let methods: Vec<(String, Vec<&Overload>)> = names
        .into_iter()
        .map(|name| {
            let of: Vec<&Overload> = overloads.iter().filter(|o| o.name == name).collect();
            (name, of)
        })
        .collect();
    match args.format {
        Format::Json => {
            let mut array = Vec::new();
            for (name, of) in &methods {
                if of.is_empty() {
                    array.push(json!({"name": name, "parameter_types": null, "return_type": null}));
                }
                for o in of {
                    array.push(json!({
                        "name": name,
                        "parameter_types": o.parameter_types,
                        "return_type": o.return_type,
                    }));
                }
            }
            // One shape for every `list --format json`: an array (here of the one service).
            writeln!(
                out,
                "{}",
                json!([{
                    "interface": interface,
                    "providers": urls.len(),
                    "versions": seen(&urls, "version"),
                    "groups": seen(&urls, "group"),
                    "methods": array,
                    "classes": class_listing::json(&classes),
                }])
            )?;
        }
        Format::Text => {
            let versions = seen(&urls, "version");
            let plural = if urls.len() == 1 { "" } else { "s" };
            writeln!(
                out,
                "# {interface}: {} provider{plural}, versions {}, groups {}",
                urls.len(),
                shown(&versions),
                shown(&seen(&urls, "group")),
            )?;
            for (name, of) in &methods {
                if of.is_empty() {
                    writeln!(out, "{name}")?;
                }
                for o in of {
                    match &o.return_type {
                        Some(r) => writeln!(out, "{} -> {r}", o.signature())?,
                        None => writeln!(out, "{}", o.signature())?,
                    }
                }
            }
            for line in class_listing::text_lines(&classes) {
                writeln!(out, "{line}")?;
            }
        }
    }
    Ok(())
}

fn param(url: &DubboUrl, key: &str) -> String {
    url.parameter(key).unwrap_or("").trim().to_owned()
}

fn matches(url: &DubboUrl, key: &str, wanted: Option<&str>) -> bool {
    match wanted {
        None | Some("*") => true,
        Some(wanted) => wanted.split(',').any(|w| w.trim() == param(url, key)),
    }
}

fn seen(urls: &[&DubboUrl], key: &str) -> Vec<Option<String>> {
    let values: BTreeSet<String> = urls.iter().map(|u| param(u, key)).collect();
    values.iter().map(|v| non_empty(v)).collect()
}

fn shown(values: &[Option<String>]) -> String {
    if values.is_empty() {
        return "-".to_owned();
    }
    values
        .iter()
        .map(|v| v.clone().unwrap_or_else(|| "(none)".to_owned()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn non_empty(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_owned())
}

fn dash(value: &str) -> String {
    if value.is_empty() {
        "-".to_owned()
    } else {
        value.to_owned()
    }
}

/// Aligned columns under their titles (only the titles when there are no rows).
fn table<const N: usize>(
    titles: [&str; N],
    rows: &[[String; N]],
    out: &mut dyn Write,
) -> Result<()> {
    let mut widths = titles.map(str::len);
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; N]| {
        let mut text = String::new();
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == N {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<width$}  "));
            }
        }
        text
    };
    writeln!(out, "{}", line(titles))?;
    for row in rows {
        writeln!(out, "{}", line(row.each_ref().map(String::as_str)))?;
    }
    Ok(())
}
