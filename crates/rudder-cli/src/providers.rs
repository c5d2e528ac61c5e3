//! `rudder providers`: the providers a consumer would see in ZooKeeper right now, configurators
//! applied, one row each under a header: address, protocol, application, version, group, the weight
//! after configurators (and the rule that set it), the effective weight with the warmup share, and
//! `disabled` with the deciding rule; a line under the listing gives the method's outlier ejection
//! settings when they are on. `--format json` prints one JSON array instead.
//!
//! The listing does not register a consumer node (it inspects, it does not consume). With `--watch` the
//! listing is followed by one line per visible change (`+`, `-`, `~ ADDRESS weight 100 → 300 (rule
//! KEY)`) and a line when the registry connection is lost and back, until Ctrl-C. The same one-shot
//! listing feeds `rudder simulate --registry`.
//!
//! `--registry` is repeatable (one registry per data centre): each registry's listing is then headed by
//! its address and choice parameters. An empty listing is an answer (exit 0), with a note on stderr of
//! which versions and groups do exist.

use std::io::Write;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use rudder::tools::RegistryTarget;
use rudder_cluster::directory::Directory;
use rudder_common::clock::{Clock, SystemClock};
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;
use rudder_registry::{
    ConsumerSpec, DiscoveryView, Registry, RegistryOptions, Subscription, SubscriptionStatus,
};

use crate::output::Format;
use crate::params::ConsumerArgs;
use crate::provider_rows::{self, Row, RuleNotes};
use crate::registry_args::RegistryArgs;

/// Where to find a service's providers (shared by `providers` and `simulate`).
#[derive(Debug, Clone)]
pub(crate) struct RegistryQuery {
    pub(crate) registry: String,
    pub(crate) interface: String,
    pub(crate) version: Option<String>,
    pub(crate) group: Option<String>,
    pub(crate) options: RegistryOptions,
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

    /// `com.acme.Greeter`, `com.acme.Greeter version 1.0.0 group blue`.
    fn service(&self) -> String {
        let mut text = self.interface.clone();
        for (key, value) in [("version", &self.version), ("group", &self.group)] {
            if let Some(value) = value {
                text.push_str(&format!(" {key} {value}"));
            }
        }
        text
    }
}

/// Arguments of `rudder providers`.
#[derive(Debug, Args)]
pub(crate) struct ProvidersArgs {
    #[command(flatten)]
    registry: RegistryArgs,
    /// The service interface.
    #[arg(
        long = "interface",
        value_name = "NAME",
        required_unless_present = "service"
    )]
    interface_flag: Option<String>,
    /// The same as --interface NAME: `rudder providers --registry R com.acme.Greeter`.
    #[arg(value_name = "SERVICE", conflicts_with = "interface_flag")]
    service: Option<String>,
    /// The service version (`*` for any).
    #[arg(long)]
    version: Option<String>,
    /// The service group (`*` for any, `a,b` for either).
    #[arg(long)]
    group: Option<String>,
    /// Show the weights and balancer for this method (default: service level).
    #[arg(long, value_name = "NAME")]
    method: Option<String>,
    /// After the listing, print each visible change (`+`, `-`, `~`, aligned with the table) and
    /// connection loss, until Ctrl-C; with --format json, one JSON object per line
    /// (`{"event":"added"|"removed"|"changed"|"connection_lost"|"connection_back"|"empty_push_kept",...}`).
    #[arg(long)]
    watch: bool,
    /// text (aligned columns) or json (one array of objects).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// For a call of --method (with the --attachment values), print each provider's fate under the
    /// router rules of the config center: in or out, and which rule decided it.
    #[arg(long, requires = "method", conflicts_with_all = ["watch", "format"])]
    explain: bool,
    /// An attachment of the explained call, KEY=VALUE (repeatable): `dubbo.tag=gray`.
    #[arg(long = "attachment", value_name = "KEY=VALUE", value_parser = crate::attachments::attachment, requires = "explain")]
    attachments: Vec<(String, String)>,
    #[command(flatten)]
    consumer: ConsumerArgs,
}

pub(crate) fn run(args: ProvidersArgs, out: &mut dyn Write) -> Result<()> {
    if !args.registry.is_given() {
        bail!("--registry is required");
    }
    let interface = match (&args.interface_flag, &args.service) {
        (Some(name), _) | (None, Some(name)) => name.clone(),
        (None, None) => bail!("name the service: --interface NAME, or SERVICE"),
    };
    let merge = args.consumer.merge(&interface)?;
    // No method-scoped key has an empty method name, so "" reads the service-level values.
    let method = args.method.clone().unwrap_or_default();
    let targets = args.registry.targets()?;
    if targets.len() > 1 && (args.watch || args.explain) {
        bail!("--watch and --explain follow one registry: give --registry once");
    }
    let query = |target: &RegistryTarget| RegistryQuery {
        registry: target.session_url().to_owned(),
        interface: interface.clone(),
        version: args.version.clone(),
        group: args.group.clone(),
        options: args.registry.options(),
        merge: merge.clone(),
    };
    runtime()?.block_on(async {
        let several = targets.len() > 1;
        let mut all_rows = Vec::new();
        let mut empty = Vec::new();
        for target in &targets {
            let query = query(target);
            let session = Session::open(&args.registry, &query).await?;
            let rows = session.rows(&method).await;
            if rows.is_empty() {
                empty.push(session.why_empty(&query).await);
            }
            let mut widths = None;
            match args.format {
                Format::Text => {
                    let label = if several {
                        target.choice().to_string()
                    } else {
                        target.choice().label().to_owned()
                    };
                    let count = rows.len();
                    let plural = if count == 1 { "" } else { "s" };
                    let mut header =
                        format!("# {} in {label}: {count} provider{plural}", query.service());
                    if !method.is_empty() {
                        header.push_str(&format!(", method {method}"));
                    }
                    writeln!(out, "{header}")?;
                    if let Some(note) = migration_note(&session.status()) {
                        writeln!(out, "{note}")?;
                    }
                    // With --watch the table leaves room for the change lines' `+ ` / `- `.
                    let margin = if args.watch { "  " } else { "" };
                    widths = Some(provider_rows::print_table(&rows, margin, out)?);
                    if let Some(note) = provider_rows::outlier_note(&rows) {
                        writeln!(out, "{note}")?;
                    }
                }
                Format::Json => all_rows.extend(
                    rows.iter()
                        .map(|r| r.to_json(several.then(|| target.choice().label()))),
                ),
            }
            if args.explain {
                let status = session.status();
                explain(&args, &query, &session.directory, &status, out).await?;
            }
            if args.watch {
                if args.format == Format::Json {
                    // The listing first (one array line), then one object per change.
                    writeln!(
                        out,
                        "{}",
                        serde_json::Value::Array(std::mem::take(&mut all_rows))
                    )?;
                }
                out.flush()?;
                for note in empty.drain(..).flatten() {
                    crate::logging::say(format!("{} {note}", crate::logging::warning_label()));
                }
                session.watch(&method, rows, widths, out).await?;
                session.close().await;
                return Ok(());
            }
            session.close().await;
        }
        if args.format == Format::Json {
            writeln!(out, "{}", serde_json::Value::Array(all_rows))?;
        }
        for note in empty.into_iter().flatten() {
            crate::logging::say(format!("{} {note}", crate::logging::warning_label()));
        }
        Ok(())
    })
}

/// One registry's subscription for the listing: the directory it fills and its status.
struct Session {
    registry: Arc<dyn Registry>,
    subscription: Subscription,
    directory: Arc<Directory>,
    interface: String,
}

impl Session {
    async fn open(flags: &RegistryArgs, query: &RegistryQuery) -> Result<Session> {
        let registry = flags.connect(&query.registry).await?;
        let directory = Arc::new(Directory::sorted(Default::default()));
        let subscription = registry
            .subscribe(query.spec(), Arc::clone(&directory) as _, None)
            .await
            .context("subscribing")?;
        Ok(Session {
            registry,
            subscription,
            directory,
            interface: query.interface.clone(),
        })
    }

    fn status(&self) -> SubscriptionStatus {
        self.subscription.status().borrow().clone()
    }

    /// The rows now; the registered URLs are read only when a rule disables some provider.
    async fn rows(&self, method: &str) -> Vec<Row> {
        let status = self.status();
        self.rows_for(&status, method).await
    }

    async fn rows_for(&self, status: &SubscriptionStatus, method: &str) -> Vec<Row> {
        let registered = if status.disabled.is_empty() || !status.connected {
            Vec::new()
        } else {
            self.registry
                .provider_urls(&self.interface)
                .await
                .unwrap_or_default()
        };
        let notes = RuleNotes {
            reweighted: &status.reweighted,
            disabled: &status.disabled,
            registered: &registered,
        };
        provider_rows::rows(
            &self.directory.snapshot(),
            method,
            SystemClock.now_millis(),
            &notes,
        )
    }

    /// Why nothing is listed, when a version or group nobody provides is the reason.
    async fn why_empty(&self, query: &RegistryQuery) -> Option<String> {
        let all = self.registry.provider_urls(&query.interface).await.ok()?;
        crate::service_info::missing_version_or_group(
            &query.interface,
            query.version.as_deref(),
            query.group.as_deref(),
            &all,
        )
    }

    /// Prints each visible change and each connection loss and return, until Ctrl-C.
    /// `widths`: the table's columns (text), `None` for JSON lines.
    async fn watch(
        &self,
        method: &str,
        mut shown: Vec<Row>,
        widths: Option<[usize; 6]>,
        out: &mut dyn Write,
    ) -> Result<()> {
        let say = |out: &mut dyn Write, text: &str, event: serde_json::Value| match widths {
            Some(_) => writeln!(out, "{text}"),
            None => writeln!(out, "{event}"),
        };
        let mut status = self.subscription.status();
        let (mut connected, mut kept) = {
            let first = status.borrow_and_update();
            (first.connected, first.empty_pushes_kept)
        };
        loop {
            tokio::select! {
                changed = status.changed() => if changed.is_err() { break },
                _ = tokio::signal::ctrl_c() => break,
            }
            let now = status.borrow_and_update().clone();
            if now.connected != connected {
                connected = now.connected;
                if connected {
                    let event = serde_json::json!({"event": "connection_back"});
                    say(out, "! registry connection back", event)?;
                } else {
                    let event = serde_json::json!({"event": "connection_lost"});
                    let text = "! registry connection lost; the last known providers stay in use";
                    say(out, text, event)?;
                }
            }
            if now.empty_pushes_kept != kept {
                kept = now.empty_pushes_kept;
                let text = format!(
                    "! the registry sent an empty provider list; enable-empty-protection keeps the last {} providers",
                    now.providers
                );
                let event =
                    serde_json::json!({"event": "empty_push_kept", "providers": now.providers});
                say(out, &text, event)?;
            }
            let mut rows = self.rows_for(&now, method).await;
            provider_rows::fill_from(&mut rows, &shown);
            for change in crate::provider_watch::diff(&shown, &rows) {
                match &widths {
                    Some(widths) => writeln!(out, "{}", change.text(widths))?,
                    None => writeln!(out, "{}", change.json())?,
                }
            }
            shown = rows;
            out.flush()?;
        }
        Ok(())
    }

    async fn close(self) {
        self.subscription.close().await;
        self.registry.close().await;
    }
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
        let registry = crate::registry_args::connect(&query.registry, query.options).await?;
        let directory = Arc::new(Directory::sorted(Default::default()));
        let subscription = registry
            .subscribe(query.spec(), Arc::clone(&directory) as _, None)
            .await
            .context("subscribing")?;
        if let Some(note) = migration_note(&subscription.status().borrow()) {
            crate::logging::say(note);
        }
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

/// `# migration: STEP (WHO): VIEW view, ...` when application-level discovery is part of the answer:
/// a view other than the interface one, application-level providers, or a step someone set. The
/// plain case (the default step, no instance) prints nothing, so listings stay as they were.
pub(crate) fn migration_note(status: &SubscriptionStatus) -> Option<String> {
    let plain = status.view == DiscoveryView::Interface
        && status.application_providers == 0
        && status
            .migration_decision
            .starts_with("APPLICATION_FIRST (default)");
    (!plain && !status.migration_decision.is_empty())
        .then(|| format!("# migration: {}", status.migration_decision))
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
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

/// Prints, for a call of `--method` with the `--attachment` values, each provider's fate under the
/// router rules the config center holds now (`rudder::load_router_rules`).
async fn explain(
    args: &ProvidersArgs,
    query: &RegistryQuery,
    directory: &Directory,
    status: &SubscriptionStatus,
    out: &mut dyn Write,
) -> Result<()> {
    let disabled = &status.disabled;
    crate::attachments::check_attachments(&args.attachments)?;
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
    let chain = rudder::tools::load_router_rules(&query.registry, &consumer_url, &providers)
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
    // Which view the routers were handed, and why (the migration decision), unless the listing above
    // already said it (`migration_note`), which a table does whenever the decision is not the plain one.
    if args.format != Format::Text || migration_note(status).is_none() {
        writeln!(out, "# migration: {}", status.migration_decision)?;
    }
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
