//! One subscription on Nacos: the interface-level list (the first, then every push, applied as
//! deltas), the application-level view and the migration step between them, as on ZooKeeper (the
//! shared part is [`Following`]).
//!
//! | what happens | what the task does |
//! |---|---|
//! | Nacos pushes the service's instances | apply the latest list (older ones are skipped), hand the delta over |
//! | an application's instances or the mapping change | rebuild the application view, hand what changed over if it is in use |
//! | the migration rule changes | start the view the new step needs, compare, switch (see `crate::migrating`) |
//! | a push leaves no usable provider | as Dubbo: clear, or keep the last ones with `enable-empty-protection=true` |
//! | a config-centre configurator changes | re-apply the rules, hand the whole list over |
//! | the connection drops | `connected` false; the naming stream reconnects (next server of the list) and re-subscribes; the last list stays |
//! | the subscription ends | unsubscribe, deregister the consumer instance if one was registered |

use std::sync::Arc;

use std::future::Future;
use std::pin::Pin;

use nacos_sdk::api::naming::ServiceInstance;
use rudder_common::discovery::RuleSink;
use tokio::sync::oneshot;

use crate::config_center::RuleInbox;
use crate::error::RegistryError;
use crate::following::{instances_changed, rules_arrived, Following, InterfaceLevel};
use crate::nacos::client::{Clients, Connection};
use crate::nacos::names::InstanceNames;
use crate::nacos::rules::nacos_error;
pub(crate) use crate::nacos::stream::Pushes;

/// Why the loop stopped waiting.
enum Wake {
    Stop,
    Push,
    Rules,
    Instances,
    Migration,
    Link,
}

pub(crate) struct NacosSubscriber {
    pub(crate) connection: Arc<Connection>,
    pub(crate) clients: Clients,
    /// `providers:<interface>:<version>:<group>`.
    pub(crate) service: String,
    pub(crate) pushes: Arc<Pushes>,
    /// Whether the interface-level service is subscribed (not under `FORCE_APPLICATION`).
    pub(crate) subscribed: bool,
    /// The views, rules and migration state (shared with every registry).
    pub(crate) f: Following,
    /// The consumer instance (service name, instance) when registered.
    pub(crate) consumer: Option<(String, ServiceInstance)>,
    /// The node names of the last list's instances.
    pub(crate) names: InstanceNames,
}

impl NacosSubscriber {
    /// Takes the pushed list, if one came, into the interface-level catalog (not yet the sink).
    pub(crate) fn take_push(&mut self) {
        let Some(instances) = self.pushes.take() else {
            return;
        };
        if self.subscribed {
            let names = self.names.of(&instances);
            take_list(&self.connection, &self.service, names, &mut self.f);
        }
    }

    fn interface(&mut self) -> NacosInterface<'_> {
        NacosInterface {
            connection: &self.connection,
            service: &self.service,
            pushes: &self.pushes,
            subscribed: &mut self.subscribed,
            names: &mut self.names,
        }
    }

    /// Follows pushes, instances, rules and the migration rule until `stop` fires or the registry
    /// closes.
    pub(crate) async fn run(mut self, mut stop: oneshot::Receiver<()>) {
        let inbox = self.f.rules.as_ref().map(|r| Arc::clone(&r.inbox));
        let connection = Arc::clone(&self.connection);
        let pushes = Arc::clone(&self.pushes);
        let mut link = connection.stream.state();
        // The status starts from the state as it is now.
        link.mark_changed();
        loop {
            let wake = tokio::select! {
                _ = &mut stop => Wake::Stop,
                () = connection.closed() => Wake::Stop,
                () = pushes.arrived() => Wake::Push,
                () = rules_arrived(inbox.as_deref()) => Wake::Rules,
                () = instances_changed(self.f.app_level.as_mut()) => Wake::Instances,
                () = self.f.migration.wake() => Wake::Migration,
                Ok(()) = link.changed() => Wake::Link,
            };
            match wake {
                Wake::Stop => break,
                Wake::Push => {
                    self.take_push();
                    self.f.feed();
                }
                Wake::Rules => {
                    // A rule change touches every provider: the whole list goes to the sink.
                    if self.f.take_rules() {
                        self.f.feed();
                    }
                }
                Wake::Instances => {
                    self.f.take_instances();
                    self.f.feed();
                }
                Wake::Link => {
                    let state = *link.borrow_and_update();
                    if !state.up {
                        tracing::warn!(service = %self.service, "Nacos connection lost; keeping the last known providers");
                    }
                    self.f.status.send_modify(|s| {
                        s.connected = state.up;
                        s.sessions = state.connections.max(1);
                    });
                }
                Wake::Migration => {
                    let mut interface = NacosInterface {
                        connection: &self.connection,
                        service: &self.service,
                        pushes: &self.pushes,
                        subscribed: &mut self.subscribed,
                        names: &mut self.names,
                    };
                    self.f.on_migration(&mut interface).await;
                }
            }
        }
        self.interface().stop().await;
        if let Some((service, instance)) = self.consumer.take() {
            let group = Some(self.connection.address.group.clone());
            let _ = self
                .clients
                .naming
                .deregister_instance(service, group, instance)
                .await;
        }
        self.f.close().await;
    }
}

/// Applies one instance list of `service` to the interface-level catalog, through the empty-push
/// protection.
fn take_list(connection: &Connection, service: &str, names: Vec<String>, f: &mut Following) {
    let delta = crate::empty_push::apply_providers(
        &mut f.catalog,
        names,
        connection.address.empty_protection,
        service,
        &f.status,
    );
    f.pending.added.extend(delta.added);
    f.pending.removed.extend(delta.removed);
}

/// Nacos's interface-level listing: the subscription to `providers:<interface>:<version>:<group>`.
pub(crate) struct NacosInterface<'a> {
    pub(crate) connection: &'a Connection,
    pub(crate) service: &'a str,
    pub(crate) pushes: &'a Arc<Pushes>,
    pub(crate) subscribed: &'a mut bool,
    pub(crate) names: &'a mut InstanceNames,
}

impl NacosInterface<'_> {
    /// Subscribes and reads the first list into `f` (not yet the sink).
    pub(crate) async fn subscribe(&mut self, f: &mut Following) -> Result<(), RegistryError> {
        let group = &self.connection.address.group;
        let first = self
            .connection
            .stream
            .subscribe(self.service, group, self.pushes)
            .await;
        // Subscribed even when the first answer failed: the stream subscribes again on reconnect.
        *self.subscribed = true;
        let first = first.map_err(|e| {
            nacos_error(
                "subscribe",
                self.service.to_owned(),
                nacos_sdk::api::error::Error::ErrResult(e),
            )
        })?;
        // A push that came meanwhile is as new or newer than the answer.
        let latest = self.pushes.take().unwrap_or(first);
        let names = self.names.of(&latest);
        take_list(self.connection, self.service, names, f);
        Ok(())
    }
}

impl InterfaceLevel for NacosInterface<'_> {
    fn start<'a>(
        &'a mut self,
        following: &'a mut Following,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            if let Err(error) = self.subscribe(following).await {
                // nacos-sdk re-subscribes by itself once subscribed; a first list that failed
                // comes with the next push.
                tracing::warn!(
                    error = &error as &dyn std::error::Error,
                    "interface-level listing failed; waiting for a push"
                );
            }
            following.feed();
        })
    }

    fn stop(&mut self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            if !std::mem::take(self.subscribed) {
                return;
            }
            let group = &self.connection.address.group;
            self.connection
                .stream
                .unsubscribe(self.service, group, self.pushes)
                .await;
            self.pushes.take();
        })
    }
}

/// The inbox as a sink the config centre can hold.
pub(crate) fn inbox_sink(inbox: &Arc<RuleInbox>) -> Arc<dyn RuleSink> {
    Arc::clone(inbox) as Arc<dyn RuleSink>
}
