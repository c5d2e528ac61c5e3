//! `--metrics-addr`: the Prometheus endpoint of `rudder invoke` and `rudder demo`, for as long as the
//! command runs (`invoke --linger`: until Ctrl-C).

use std::net::SocketAddr;

use anyhow::{Context, Result};
use rudder::metrics::{MetricsConfig, MetricsServer};
use rudder::Consumer;
use rudder_registry::RegistryOptions;

/// The consumer a command calls through: with metrics when an endpoint is asked for, and the
/// registry flags' options.
pub(crate) fn consumer(
    application: &str,
    metrics_addr: Option<SocketAddr>,
    registry: RegistryOptions,
) -> Consumer {
    consumer_with(Consumer::builder(), application, metrics_addr, registry)
}

/// As [`consumer`], from a builder already given other settings (the demo's clock).
pub(crate) fn consumer_with(
    builder: rudder::ConsumerBuilder,
    application: &str,
    metrics_addr: Option<SocketAddr>,
    registry: RegistryOptions,
) -> Consumer {
    let builder =
        crate::tls_args::apply(builder.application(application).registry_options(registry));
    match metrics_addr {
        Some(_) => builder.metrics(MetricsConfig::default()).build(),
        None => builder.build(),
    }
}

/// Serves `consumer`'s metrics at `http://ADDR/metrics` and says where on stderr (the port is chosen
/// when ADDR's is 0). The endpoint closes when the returned server is dropped.
pub(crate) async fn serve(
    consumer: &Consumer,
    metrics_addr: Option<SocketAddr>,
) -> Result<Option<MetricsServer>> {
    let Some(addr) = metrics_addr else {
        return Ok(None);
    };
    let metrics = consumer
        .metrics()
        .context("the consumer was built without metrics")?;
    let server = metrics
        .serve(addr)
        .await
        .with_context(|| format!("binding --metrics-addr {addr}"))?;
    crate::logging::say(format!("metrics: http://{}/metrics", server.local_addr()));
    Ok(Some(server))
}
