//! Writing Nacos config as dubbo-admin does (its Nacos client's `publishConfig` / `removeConfig`),
//! confirmed by reading it back.
//!
//! Why the read-back: rnacos acknowledges a config write even when its Raft log never applies it
//! (`config/core.rs` drops the error of `client_write`; see `rudder_it`'s rnacos probe), so an
//! acknowledged write proves nothing. A test that waits for rudder to see a rule must first know the
//! server holds it; otherwise a lost write reads as rudder missing a change. The write is repeated
//! until a read gives it back, and every repeat is said on stderr.

use std::time::Duration;

use nacos_sdk::api::config::{ConfigService, ConfigServiceBuilder};
use nacos_sdk::api::props::ClientProps;

use crate::common::WAIT;

/// How long one write may stay unread before it is written again.
const REWRITE_AFTER: Duration = Duration::from_secs(2);

/// A config client of one namespace.
pub(crate) struct ConfigAdmin {
    service: ConfigService,
}

impl ConfigAdmin {
    pub(crate) async fn new(props: ClientProps) -> ConfigAdmin {
        let service = ConfigServiceBuilder::new(props)
            .build()
            .await
            .expect("a config client");
        ConfigAdmin { service }
    }

    /// Publishes `text` as `data_id` of `group` (`None`: removes it) and returns once the server
    /// reads it back; retried while the client's connection comes up.
    ///
    /// # Panics
    /// When the server does not hold it within [`WAIT`].
    pub(crate) async fn put(&self, data_id: &str, group: &str, text: Option<&str>) {
        let mut writes = 0_u32;
        let done = async {
            let mut ticks = tokio::time::interval(Duration::from_millis(50));
            loop {
                ticks.tick().await;
                let sent = match text {
                    Some(text) => {
                        self.service
                            .publish_config(data_id.into(), group.into(), text.into(), None)
                            .await
                    }
                    None => {
                        self.service
                            .remove_config(data_id.into(), group.into())
                            .await
                    }
                };
                if !sent.is_ok_and(|ok| ok) {
                    continue;
                }
                writes += 1;
                if writes > 1 {
                    eprintln!("nacos config {data_id} ({group}): written again, write {writes}");
                }
                if self.holds(data_id, group, text).await {
                    return;
                }
            }
        };
        tokio::time::timeout(WAIT, done).await.unwrap_or_else(|_| {
            panic!("the server holds config {data_id} ({group}) within {WAIT:?}")
        });
    }

    /// The text of `data_id` of `group` now, `None` when there is none (or it cannot be read).
    pub(crate) async fn read(&self, data_id: &str, group: &str) -> Option<String> {
        self.service
            .get_config(data_id.into(), group.into())
            .await
            .ok()
            .map(|c| c.content().clone())
            .filter(|c| !c.is_empty())
    }

    /// Whether a read gives `text` back (`None`: no config) within [`REWRITE_AFTER`].
    async fn holds(&self, data_id: &str, group: &str, text: Option<&str>) -> bool {
        let read = async {
            let mut ticks = tokio::time::interval(Duration::from_millis(50));
            loop {
                ticks.tick().await;
                if self.read(data_id, group).await.as_deref() == text {
                    return;
                }
            }
        };
        tokio::time::timeout(REWRITE_AFTER, read).await.is_ok()
    }
}
