//! Nacos as config centre: each rule is one config, data id = the rule key, group = the rule group
//! (`dubbo` for configurators and routers, `DUBBO_SERVICEDISCOVERY_MIGRATION` for migration rules),
//! in the namespace the registry URL names, else `dubbo` (Dubbo's `registryAsConfigCenter`).
//!
//! nacos-sdk keeps the listeners across reconnects and calls them on its own thread with the new
//! text; an empty text is a deleted rule (Dubbo treats a blank rule as none).

use std::any::Any;
use std::sync::{Arc, Mutex};

use nacos_sdk::api::config::{ConfigChangeListener, ConfigResponse};
use rudder_common::discovery::{RuleKey, RuleSink};
use tokio::sync::oneshot;

use crate::backend::{ConfigCenter, RegistryFuture};
use crate::config_center::RuleWatch;
use crate::error::RegistryError;
use crate::nacos::client::Connection;

/// The rules of one Nacos registry's config namespace.
#[derive(Debug)]
pub(crate) struct NacosRules {
    pub(crate) connection: Arc<Connection>,
}

/// Hands one key's texts to the sink, each change once.
struct KeyListener {
    key: RuleKey,
    sink: Arc<dyn RuleSink>,
    /// The text last handed over (`Some(None)`: reported absent).
    reported: Mutex<Option<Option<String>>>,
}

impl KeyListener {
    fn report(&self, text: Option<&str>) {
        let text = text.filter(|t| !t.trim().is_empty());
        let mut reported = self.reported.lock().unwrap_or_else(|p| p.into_inner());
        if reported.as_ref().map(Option::as_deref) == Some(text) {
            return;
        }
        *reported = Some(text.map(str::to_owned));
        drop(reported);
        self.sink.rule(&self.key, text);
    }
}

impl ConfigChangeListener for KeyListener {
    fn notify(&self, config: ConfigResponse) {
        self.report(Some(config.content()));
    }
}

impl NacosRules {
    /// Reads each key once and adds its listener; what fails first is returned (the task retries).
    async fn attach(
        &self,
        group: &str,
        listeners: &[Arc<KeyListener>],
    ) -> Result<(), RegistryError> {
        let clients = self.connection.clients().await?;
        for listener in listeners {
            let data_id = listener.key.as_str().to_owned();
            let target = || format!("{data_id} ({group})");
            clients
                .config
                .add_listener(
                    data_id.clone(),
                    group.to_owned(),
                    Arc::clone(listener) as Arc<dyn ConfigChangeListener>,
                )
                .await
                .map_err(|e| nacos_error("listen to config", target(), e))?;
            match clients.config.get_config(data_id.clone(), group.to_owned()).await {
                Ok(config) => listener.report(Some(config.content())),
                Err(nacos_sdk::api::error::Error::ConfigNotFound(_)) => listener.report(None),
                Err(e) => return Err(nacos_error("get config", target(), e)),
            }
        }
        Ok(())
    }
}

pub(crate) fn nacos_error(
    operation: &'static str,
    target: String,
    source: nacos_sdk::api::error::Error,
) -> RegistryError {
    RegistryError::Nacos {
        operation,
        target,
        source: Arc::new(source),
    }
}

impl ConfigCenter for NacosRules {
    fn address(&self) -> String {
        let a = &self.connection.address;
        format!(
            "nacos://{}?namespace={}",
            a.servers.join(","),
            a.rule_namespace()
        )
    }

    fn follow(
        &self,
        group: &str,
        keys: Vec<RuleKey>,
        sink: Arc<dyn RuleSink>,
    ) -> RegistryFuture<'_, (RuleWatch, Option<RegistryError>)> {
        let group = group.to_owned();
        Box::pin(async move {
            let listeners: Vec<Arc<KeyListener>> = keys
                .into_iter()
                .map(|key| {
                    Arc::new(KeyListener {
                        key,
                        sink: Arc::clone(&sink),
                        reported: Mutex::new(None),
                    })
                })
                .collect();
            let (first_tx, first_rx) = oneshot::channel();
            let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
            let rules = NacosRules {
                connection: Arc::clone(&self.connection),
            };
            let task = self.connection.spawn(async move {
                let mut first = Some(first_tx);
                let mut attempt = 0;
                // Until the first read works: then nacos-sdk keeps the listeners itself.
                let attached = loop {
                    let outcome = tokio::select! {
                        _ = &mut stop_rx => break false,
                        () = rules.connection.closed() => break false,
                        outcome = rules.attach(&group, &listeners) => outcome,
                    };
                    let failed = outcome.as_ref().err().cloned();
                    if let Some(first) = first.take() {
                        let _ = first.send(failed.clone());
                    }
                    match failed {
                        None => break true,
                        Some(error) => tracing::warn!(
                            error = &error as &dyn std::error::Error,
                            "Nacos config not readable; retrying"
                        ),
                    }
                    tokio::select! {
                        _ = &mut stop_rx => break false,
                        () = rules.connection.closed() => break false,
                        () = tokio::time::sleep(rules.connection.options.retry_delay(attempt)) => {}
                    }
                    attempt = attempt.saturating_add(1);
                };
                if attached {
                    tokio::select! {
                        _ = &mut stop_rx => {}
                        () = rules.connection.closed() => {}
                    }
                }
                if let Ok(clients) = rules.connection.clients_within(std::time::Duration::ZERO).await {
                    for listener in &listeners {
                        let _ = clients
                            .config
                            .remove_listener(
                                listener.key.as_str().to_owned(),
                                group.clone(),
                                Arc::clone(listener) as Arc<dyn ConfigChangeListener>,
                            )
                            .await;
                    }
                }
            });
            let Some(task) = task else {
                let (stop, _) = oneshot::channel();
                return (RuleWatch::new(stop, tokio::spawn(async {})), Some(RegistryError::Closed));
            };
            let wait = self.connection.options.connect_timeout();
            let error = match tokio::time::timeout(wait, first_rx).await {
                Ok(Ok(error)) => error,
                Ok(Err(_)) => Some(RegistryError::Closed),
                Err(_) => Some(self.connection.unreachable(wait)),
            };
            (RuleWatch::new(stop_tx, task), error)
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
