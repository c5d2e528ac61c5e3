//! Nacos as config centre: each rule is one config, data id = the rule key, group = the rule group
//! (`dubbo` for configurators and routers, `DUBBO_SERVICEDISCOVERY_MIGRATION` for migration rules),
//! in the namespace the registry URL names, else Nacos's `public` (Dubbo's `registryAsConfigCenter`
//! config centre defaults its namespace to `dubbo`, which `NacosDynamicConfigurationFactory` drops:
//! see the `address` module).
//!
//! Followed with Nacos's HTTP open API (see the `http` module for why not nacos-sdk's listener): every
//! key read once, then one long-polling `listener` request at a time naming every key with the md5 of
//! its text; the server answers at once with the keys that differ, or after [`LONG_POLL`] with none.
//! Each changed key is read again, its text (an empty one is a deleted rule, as in Dubbo) handed to the
//! sink once per change. A failed request is retried with the registry's backoff, the servers taken in
//! turn.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use md5::{Digest, Md5};
use rudder_common::discovery::{RuleKey, RuleSink};
use tokio::sync::oneshot;

use crate::backend::{ConfigCenter, RegistryFuture};
use crate::config_center::RuleWatch;
use crate::error::RegistryError;
use crate::nacos::client::Connection;
use crate::nacos::http::{form_encode, request};

/// How long the server may hold a listener request (Nacos's default long-polling timeout).
const LONG_POLL: Duration = Duration::from_secs(30);

/// The rules of one Nacos registry's config namespace.
#[derive(Debug)]
pub(crate) struct NacosRules {
    pub(crate) connection: Arc<Connection>,
}

/// One followed key: what was last handed to the sink.
struct Followed {
    key: RuleKey,
    /// `None` before the first report; `Some(None)`: reported absent.
    reported: Option<Option<String>>,
    md5: String,
    dirty: bool,
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

fn io_error(operation: &'static str, target: String, e: &std::io::Error) -> RegistryError {
    nacos_error(
        operation,
        target,
        nacos_sdk::api::error::Error::ErrResult(e.to_string()),
    )
}

/// Reads and follows keys of one group.
struct Follower {
    connection: Arc<Connection>,
    group: String,
    tenant: String,
    keys: Vec<Followed>,
    sink: Arc<dyn RuleSink>,
    /// Which server to ask next (turns on each failure).
    server: usize,
}

impl Follower {
    fn server(&self) -> String {
        let servers = &self.connection.address.servers;
        servers[self.server % servers.len()].clone()
    }

    /// The text of `data_id` now, `None` when there is none.
    async fn read(&self, data_id: &str) -> Result<Option<String>, RegistryError> {
        read_config(
            &self.connection,
            &self.server(),
            &self.tenant,
            data_id,
            &self.group,
        )
        .await
    }

    /// Reads every dirty key and reports what changed.
    async fn refresh(&mut self) -> Result<(), RegistryError> {
        for i in 0..self.keys.len() {
            if !self.keys[i].dirty {
                continue;
            }
            let text = self.read(self.keys[i].key.as_str()).await?;
            let followed = &mut self.keys[i];
            followed.dirty = false;
            followed.md5 = text.as_deref().map_or_else(String::new, |t| {
                Md5::digest(t.as_bytes())
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect()
            });
            if followed.reported.as_ref() != Some(&text) {
                self.sink.rule(&followed.key, text.as_deref());
                followed.reported = Some(text);
            }
        }
        Ok(())
    }

    /// One long poll: marks the keys the server says changed.
    async fn listen(&mut self) -> Result<(), RegistryError> {
        let mut listening = String::new();
        for k in &self.keys {
            // `dataId^2group^2md5[^2tenant]^1`: without the tenant field for `public`, as Nacos's
            // own client writes it.
            listening.push_str(&format!(
                "{}\u{2}{}\u{2}{}",
                k.key.as_str(),
                self.group,
                k.md5
            ));
            if !self.tenant.is_empty() {
                listening.push_str(&format!("\u{2}{}", self.tenant));
            }
            listening.push('\u{1}');
        }
        let body = format!("Listening-Configs={}", form_encode(&listening));
        let headers = [("Long-Pulling-Timeout", LONG_POLL.as_millis().to_string())];
        let deadline = LONG_POLL + self.connection.options.connect_timeout();
        let server = self.server();
        let token = &self.connection.token;
        let auth = (token
            .query(&server, self.connection.options.connect_timeout())
            .await)
            .map_err(|e| io_error("listen to config", self.group.clone(), &e))?;
        let path = match auth.strip_prefix('&') {
            Some(auth) => format!("/nacos/v1/cs/configs/listener?{auth}"),
            None => "/nacos/v1/cs/configs/listener".to_owned(),
        };
        let answer = request(&server, "POST", &path, &headers, &body, deadline)
            .await
            .map_err(|e| io_error("listen to config", self.group.clone(), &e))?;
        if answer.status == 403 {
            token.forget().await;
        }
        if answer.status != 200 {
            return Err(nacos_error(
                "listen to config",
                self.group.clone(),
                nacos_sdk::api::error::Error::ErrResult(format!("HTTP {}", answer.status)),
            ));
        }
        // `dataId%02group%02tenant%01...`, URL-encoded.
        let changed = crate::address::percent_decode(&answer.body.replace('+', " "));
        for entry in changed.split('\u{1}').filter(|e| !e.is_empty()) {
            let data_id = entry.split('\u{2}').next().unwrap_or("");
            for k in &mut self.keys {
                if k.key.as_str() == data_id {
                    k.dirty = true;
                }
            }
        }
        Ok(())
    }

    async fn run(
        mut self,
        first: oneshot::Sender<Option<RegistryError>>,
        mut stop: oneshot::Receiver<()>,
    ) {
        let mut first = Some(first);
        let mut failures: u32 = 0;
        let connection = Arc::clone(&self.connection);
        loop {
            let step = async {
                self.refresh().await?;
                if let Some(first) = first.take() {
                    let _ = first.send(None);
                }
                self.listen().await
            };
            let outcome = tokio::select! {
                _ = &mut stop => return,
                () = connection.closed() => return,
                outcome = step => outcome,
            };
            let Err(error) = outcome else {
                failures = 0;
                continue;
            };
            if let Some(first) = first.take() {
                let _ = first.send(Some(error.clone()));
            }
            tracing::warn!(
                error = &error as &dyn std::error::Error,
                "Nacos config not readable; keeping the last rules and retrying"
            );
            self.server = self.server.wrapping_add(1);
            let pause = self.connection.options.retry_delay(failures);
            failures = failures.saturating_add(1);
            tokio::select! {
                _ = &mut stop => return,
                () = self.connection.closed() => return,
                () = tokio::time::sleep(pause) => {}
            }
        }
    }
}

/// The text of config `data_id` of `group` in namespace `tenant` now, asked of `server`; `None`
/// when there is none (or it is empty: a deleted rule, as in Dubbo).
pub(crate) async fn read_config(
    connection: &Connection,
    server: &str,
    tenant: &str,
    data_id: &str,
    group: &str,
) -> Result<Option<String>, RegistryError> {
    let query = format!(
        "/nacos/v1/cs/configs?dataId={}&group={}&tenant={}",
        form_encode(data_id),
        form_encode(group),
        form_encode(tenant)
    );
    let target = || format!("{data_id} ({group})");
    let wait = connection.options.connect_timeout();
    let token = &connection.token;
    let auth =
        (token.query(server, wait).await).map_err(|e| io_error("get config", target(), &e))?;
    let answer = request(server, "GET", &(query + &auth), &[], "", wait)
        .await
        .map_err(|e| io_error("get config", target(), &e))?;
    if answer.status == 403 {
        token.forget().await;
    }
    match answer.status {
        200 => Ok(Some(answer.body).filter(|t| !t.trim().is_empty())),
        404 => Ok(None),
        status => Err(nacos_error(
            "get config",
            target(),
            nacos_sdk::api::error::Error::ErrResult(format!("HTTP {status}")),
        )),
    }
}

/// Follows `keys` of `group` in namespace `tenant` (see [`ConfigCenter::follow`]).
pub(crate) async fn follow_in(
    connection: &Arc<Connection>,
    tenant: &str,
    group: &str,
    keys: Vec<RuleKey>,
    sink: Arc<dyn RuleSink>,
) -> (RuleWatch, Option<RegistryError>) {
    let follower = Follower {
        connection: Arc::clone(connection),
        group: group.to_owned(),
        tenant: tenant.to_owned(),
        keys: keys
            .into_iter()
            .map(|key| Followed {
                key,
                reported: None,
                md5: String::new(),
                dirty: true,
            })
            .collect(),
        sink,
        server: 0,
    };
    let (first_tx, first_rx) = oneshot::channel();
    let (stop_tx, stop_rx) = oneshot::channel();
    let Some(task) = connection.spawn(follower.run(first_tx, stop_rx)) else {
        let (stop, _) = oneshot::channel();
        return (
            RuleWatch::new(stop, tokio::spawn(async {})),
            Some(RegistryError::Closed),
        );
    };
    let wait = connection.options.connect_timeout();
    let error = match tokio::time::timeout(wait, first_rx).await {
        Ok(Ok(error)) => error,
        Ok(Err(_)) => Some(RegistryError::Closed),
        Err(_) => Some(connection.unreachable(wait)),
    };
    (RuleWatch::new(stop_tx, task), error)
}

impl ConfigCenter for NacosRules {
    fn address(&self) -> String {
        let a = &self.connection.address;
        let namespace = match a.rule_namespace() {
            "" => "public",
            named => named,
        };
        format!("nacos://{}?namespace={namespace}", a.servers.join(","))
    }

    fn follow(
        &self,
        group: &str,
        keys: Vec<RuleKey>,
        sink: Arc<dyn RuleSink>,
    ) -> RegistryFuture<'_, (RuleWatch, Option<RegistryError>)> {
        let group = group.to_owned();
        Box::pin(async move {
            let tenant = self.connection.address.rule_namespace();
            follow_in(&self.connection, tenant, &group, keys, sink).await
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
