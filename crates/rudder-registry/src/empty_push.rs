//! Empty-push protection, the same for every registry: what happens when a notified provider list
//! leaves a consumer with no usable provider.
//!
//! Dubbo 3.3 reads `enable-empty-protection` from the registry URL (default `false`,
//! `RegistryConstants.DEFAULT_ENABLE_EMPTY_PROTECTION`). When a notification of the providers
//! category carries no provider that matches the consumer (`UrlUtils.isMatch`, after Nacos's
//! `enabled` filter):
//!
//! * protection off (the default): Dubbo notifies `empty://` and the directory clears its invokers
//!   (`NacosRegistry.toUrlWithEmpty`, `CacheableFailbackRegistry.toUrlsWithEmpty` for ZooKeeper), with
//!   a warning "received empty address list and empty protection is disabled";
//! * protection on: no `empty://` is sent and `RegistryDirectory.refreshInvoker` keeps the cached
//!   invokers ("received empty address list with no EMPTY protocol set, trigger empty protection").
//!
//! rudder does the same where a registry's list is applied to a subscription's catalog, whichever
//! registry read it: [`apply_providers`]. A kept list is counted in
//! [`SubscriptionStatus::empty_pushes_kept`] and flagged by
//! [`SubscriptionStatus::empty_protected`] until a non-empty list arrives.

use tokio::sync::watch;

use crate::catalog::{Catalog, ProviderDelta};
use crate::subscription::SubscriptionStatus;

/// Applies a notified provider list (child names, as ZooKeeper lists them and as the Nacos registry
/// writes its instances) to `catalog`, unless `protect` is on and the list would leave no usable
/// provider where there were some: then the catalog keeps its providers and the delta is empty.
pub(crate) fn apply_providers(
    catalog: &mut Catalog,
    children: Vec<String>,
    protect: bool,
    service: &str,
    status: &watch::Sender<SubscriptionStatus>,
) -> ProviderDelta {
    let before = catalog.usable_count();
    // Only a protected catalog pays for remembering the names it may have to restore.
    let previous = (protect && before > 0).then(|| catalog.child_names());
    let delta = catalog.set_providers(children);
    if catalog.usable_count() > 0 || before == 0 {
        status.send_if_modified(|s| std::mem::replace(&mut s.empty_protected, false));
        return delta;
    }
    match previous {
        Some(previous) => {
            // Back to the names listed before: the two deltas cancel out, nothing reaches the sink.
            catalog.set_providers(previous);
            tracing::warn!(
                service,
                kept = before,
                "received an empty provider list; enable-empty-protection keeps the last providers"
            );
            status.send_modify(|s| {
                s.empty_protected = true;
                s.empty_pushes_kept += 1;
            });
            ProviderDelta::default()
        }
        None => {
            tracing::warn!(
                service,
                removed = before,
                "received an empty provider list and empty protection is disabled; clearing the providers"
            );
            status.send_if_modified(|s| std::mem::replace(&mut s.empty_protected, false));
            delta
        }
    }
}

#[cfg(test)]
mod tests {
    use rudder_common::url::DubboUrl;

    use super::*;
    use crate::configurator::ConsumerSide;
    use crate::consumer::ConsumerSpec;

    fn catalog() -> Catalog {
        let side = ConsumerSide {
            host: "10.0.0.9".into(),
            application: "shop".into(),
        };
        Catalog::new(&ConsumerSpec::new("S").version("1.0.0"), side)
    }

    fn name(url: &str) -> String {
        DubboUrl::parse(url).unwrap().to_node_name()
    }

    #[test]
    fn without_protection_an_empty_list_clears_as_dubbo_does() {
        let (status, seen) = watch::channel(SubscriptionStatus::default());
        let mut c = catalog();
        let one = name("dubbo://10.0.0.1:20880/S?version=1.0.0");
        apply_providers(&mut c, vec![one], false, "S", &status);
        let delta = apply_providers(&mut c, vec![], false, "S", &status);
        assert_eq!(delta.removed.len(), 1);
        assert_eq!(c.usable_count(), 0);
        assert!(!seen.borrow().empty_protected);
        assert_eq!(seen.borrow().empty_pushes_kept, 0);
    }

    #[test]
    fn with_protection_the_last_providers_stay_until_a_list_has_one() {
        let (status, seen) = watch::channel(SubscriptionStatus::default());
        let mut c = catalog();
        let one = name("dubbo://10.0.0.1:20880/S?version=1.0.0");
        let other_version = name("dubbo://10.0.0.2:20880/S?version=2.0.0");
        apply_providers(&mut c, vec![one.clone()], true, "S", &status);
        // Nothing that matches the consumer is as empty as nothing at all (Dubbo filters first).
        let delta = apply_providers(&mut c, vec![other_version], true, "S", &status);
        assert!(delta.is_empty(), "{delta:?}");
        assert_eq!(c.provider_urls().len(), 1);
        assert!(seen.borrow().empty_protected);
        assert_eq!(seen.borrow().empty_pushes_kept, 1);
        let back = name("dubbo://10.0.0.3:20880/S?version=1.0.0");
        let delta = apply_providers(&mut c, vec![back], true, "S", &status);
        assert_eq!((delta.added.len(), delta.removed.len()), (1, 1));
        assert!(!seen.borrow().empty_protected);
    }

    #[test]
    fn a_first_empty_list_is_honoured_even_with_protection() {
        let (status, seen) = watch::channel(SubscriptionStatus::default());
        let mut c = catalog();
        assert!(apply_providers(&mut c, vec![], true, "S", &status).is_empty());
        assert!(!seen.borrow().empty_protected);
    }
}
