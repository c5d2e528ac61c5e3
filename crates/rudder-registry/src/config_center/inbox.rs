//! The hand-over of configurator rule texts from the config-center watcher to a subscription's task.
//!
//! The watcher calls [`RuleSink::rule`]; the subscription takes what arrived when it is woken. Only the
//! latest text per key is kept (a subscription follows two keys), so a burst of changes costs one
//! re-application and the inbox never grows.

use std::collections::HashMap;
use std::sync::Mutex;

use rudder_common::discovery::{RuleKey, RuleSink};
use tokio::sync::Notify;

/// Latest rule texts not yet taken, and a wake-up for the subscription task.
#[derive(Debug, Default)]
pub(crate) struct RuleInbox {
    pending: Mutex<HashMap<RuleKey, Option<String>>>,
    arrived: Notify,
}

impl RuleInbox {
    /// What arrived since the last call, in key order.
    pub(crate) fn take(&self) -> Vec<(RuleKey, Option<String>)> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let mut taken: Vec<_> = pending.drain().collect();
        taken.sort_by(|a, b| a.0.cmp(&b.0));
        taken
    }

    /// Wakes once something arrived (a permit is stored if nobody waits yet).
    pub(crate) async fn arrived(&self) {
        self.arrived.notified().await;
    }
}

impl RuleSink for RuleInbox {
    fn rule(&self, key: &RuleKey, text: Option<&str>) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone(), text.map(str::to_owned));
        self.arrived.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_latest_text_per_key_is_kept() {
        let inbox = RuleInbox::default();
        let key = RuleKey::app_configurators("shop");
        inbox.rule(&key, Some("a"));
        inbox.rule(&key, Some("b"));
        inbox.rule(&key, None);
        assert_eq!(inbox.take(), vec![(key, None)]);
        assert!(inbox.take().is_empty());
    }
}
