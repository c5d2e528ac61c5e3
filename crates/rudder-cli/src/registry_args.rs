//! The registry flags every command that reads a registry takes (`--registry`, `--connect-timeout`), and
//! the quick look that makes a refused connection fail at once instead of after the whole timeout.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use rudder::tools::RegistryTarget;
use std::sync::Arc;

use rudder_registry::{Registry, RegistryError, RegistryOptions};

use crate::bounds;

/// How long the first look at each registry server may take before the real connect takes over.
const PROBE: Duration = Duration::from_secs(2);

/// `--registry` and `--connect-timeout`, shared by `providers`, `list`, `simulate` and `invoke`.
#[derive(Debug, Clone, Args)]
pub(crate) struct RegistryArgs {
    /// A ZooKeeper registry, `zookeeper://HOST:PORT` (`?backup=h:p,h:p`, `&group=` the root,
    /// `&chroot=/path`). Repeatable, one per data centre (`&zone=`, `&weight=`, `&preferred=true`
    /// choose among them as a Dubbo consumer does).
    #[arg(long, value_name = "URL")]
    pub(crate) registry: Vec<String>,
    /// Seconds to wait for ZooKeeper before giving up (1 to 3600). A server that refuses the
    /// connection fails at once.
    #[arg(
        long,
        default_value_t = 10,
        value_name = "SECONDS",
        value_parser = bounds::positive(bounds::MAX_CONNECT_TIMEOUT_SECS)
    )]
    pub(crate) connect_timeout: u64,
}

impl RegistryArgs {
    /// Whether any `--registry` was given.
    pub(crate) fn is_given(&self) -> bool {
        !self.registry.is_empty()
    }

    /// The registry options these flags ask for.
    pub(crate) fn options(&self) -> RegistryOptions {
        // Read-only: no command creates a path a Dubbo consumer would (a mistyped interface stays out).
        RegistryOptions::default()
            .with_connect_timeout(Duration::from_secs(self.connect_timeout))
            .with_read_only(true)
    }

    /// Every `--registry` read (choice parameters split off), the same registry twice refused.
    pub(crate) fn targets(&self) -> Result<Vec<RegistryTarget>> {
        let mut targets: Vec<RegistryTarget> = Vec::with_capacity(self.registry.len());
        for (i, url) in self.registry.iter().enumerate() {
            let flag = || format!("--registry #{}", i + 1);
            // A scheme rudder does not speak, said in one line before anything else is read.
            rudder_registry::factory(url).with_context(flag)?;
            let target = RegistryTarget::parse(url).with_context(flag)?;
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

    /// Fails at once when every server of some registry refuses the connection (nothing listens
    /// there), instead of waiting `--connect-timeout` for a session that cannot come.
    pub(crate) async fn check_reachable(&self) -> Result<()> {
        for target in self.targets()? {
            refuse_if_nobody_listens(target.session_url()).await?;
        }
        Ok(())
    }

    /// Opens the registry at `session_url` (the implementation its scheme names) with these
    /// options, after [`refuse_if_nobody_listens`].
    pub(crate) async fn connect(&self, session_url: &str) -> Result<Arc<dyn Registry>> {
        connect(session_url, self.options()).await
    }
}

/// Opens the registry at `session_url` with `options`, after [`refuse_if_nobody_listens`]; its
/// application-level discovery asks instances for their MetadataInfo, as a consumer does.
pub(crate) async fn connect(
    session_url: &str,
    options: RegistryOptions,
) -> Result<Arc<dyn Registry>> {
    refuse_if_nobody_listens(session_url).await?;
    rudder_registry::connect(
        session_url,
        options,
        Some(crate::tls_args::metadata_fetcher()),
    )
    .await
    .context("connecting to the registry")
}

/// One TCP connection attempt per server, all at once; an error only when all of them are refused.
/// Anything else (a server that accepts, or one that does not answer within [`PROBE`]) is left to the
/// registry client and its timeout.
pub(crate) async fn refuse_if_nobody_listens(session_url: &str) -> Result<()> {
    let location = rudder_registry::locate(session_url).context("--registry")?;
    let servers: Vec<String> = location.servers().split(',').map(str::to_owned).collect();
    let probes = servers.into_iter().map(|host| async move {
        let attempt = tokio::time::timeout(PROBE, tokio::net::TcpStream::connect(host));
        matches!(attempt.await, Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused)
    });
    let mut all_refused = true;
    for refused in futures_join(probes).await {
        all_refused &= refused;
    }
    if all_refused {
        return Err(Refused {
            registry: location.address().to_string(),
            servers: location.servers().to_owned(),
        }
        .into());
    }
    Ok(())
}

/// Every server of a registry refused the connection (the CLI's own quick look, before the
/// registry client would wait its whole timeout).
#[derive(Debug)]
pub(crate) struct Refused {
    registry: String,
    servers: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "registry {}: connection refused by {} (is the registry running there?)",
            self.registry, self.servers
        )
    }
}

impl std::error::Error for Refused {}

/// Whether `error` says that a registry could not be reached (exit code 3, so that a script can
/// tell "try again later" from "the command is wrong"): nothing listens there, what answers is not
/// ZooKeeper, no session or Nacos connection within `--connect-timeout`, or the connection was
/// lost mid-command. Rejected credentials and unusable TLS files are not: they are the command's
/// (or the registry URL's) to fix.
pub(crate) fn is_unreachable(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause.is::<Refused>()
            || cause
                .downcast_ref::<RegistryError>()
                .is_some_and(unreachable_registry)
            || cause
                .downcast_ref::<rudder::BuildError>()
                .and_then(rudder::BuildError::registry)
                .is_some_and(unreachable_registry)
    })
}

fn unreachable_registry(error: &RegistryError) -> bool {
    match error {
        RegistryError::Refused { .. }
        | RegistryError::Unreachable { .. }
        | RegistryError::NotZookeeper { .. }
        | RegistryError::NacosUnreachable { .. } => true,
        // Connection trouble during an operation (a lost session), not a refused request.
        RegistryError::ZooKeeper { .. } => error.is_retryable(),
        _ => false,
    }
}

/// Runs the probes concurrently on the current runtime and collects their answers in order.
async fn futures_join<F>(futures: impl Iterator<Item = F>) -> Vec<bool>
where
    F: std::future::Future<Output = bool> + Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for handle in handles {
        out.push(handle.await.unwrap_or(false));
    }
    out
}
