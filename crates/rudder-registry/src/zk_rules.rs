//! ZooKeeper as a [`ConfigCenter`]: each rule one persistent node `<root>/config/<group>/<key>`
//! (see [`crate::config_center`]).

use std::any::Any;
use std::sync::Arc;

use rudder_common::discovery::{RuleKey, RuleSink};

use crate::backend::{ConfigCenter, RegistryFuture};
use crate::config_center::{group_path, RuleWatch, RuleWatcher};
use crate::error::RegistryError;
use crate::session::Sessions;

/// The config centre kept in a ZooKeeper registry, through its session.
#[derive(Debug)]
pub(crate) struct ZookeeperRules {
    sessions: Arc<Sessions>,
}

impl ZookeeperRules {
    pub(crate) fn new(sessions: Arc<Sessions>) -> ZookeeperRules {
        ZookeeperRules { sessions }
    }

    /// The node holding the rules of `group`: `<root>/config/<group>`.
    pub(crate) fn group_path(&self, group: &str) -> String {
        group_path(self.sessions.address().root(), group)
    }
}

impl ConfigCenter for ZookeeperRules {
    fn address(&self) -> String {
        self.sessions.address().to_string()
    }

    fn follow(
        &self,
        group: &str,
        keys: Vec<RuleKey>,
        sink: Arc<dyn RuleSink>,
    ) -> RegistryFuture<'_, (RuleWatch, Option<RegistryError>)> {
        let watcher = RuleWatcher::new(
            Arc::clone(&self.sessions),
            &self.group_path(group),
            keys,
            sink,
        );
        Box::pin(watcher.start())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
