//! Two provider lists behind one registry, the calls shared between them: Dubbo's
//! `MigrationInvoker` under `APPLICATION_FIRST` with a migration rule `proportion` below 100.
//!
//! A reference that follows both discovery views of a registry calls the one the migration
//! comparator chose (the application-level view, usually). A rule's `proportion: 30` then sends
//! only 30 % of the calls there and the other 70 % to the interface-level view: a gradual move of
//! traffic from one to the other. The registry keeps the second list in a second directory (its own
//! router chain and balancer, so each list is routed and picked as if it were the only one) and
//! says the share in a [`CallShare`]; a [`RegistryMember`](super::RegistryMember) with a
//! [`Fallback`] draws once per call which list the call goes to. Retries stay in the list drawn, as
//! in Dubbo, whose cluster invoker sits below the migration invoker.
//!
//! Unlike Dubbo, a call is never sent to a list without providers while the other has some: Dubbo's
//! `MigrationInvoker` sends its share to the interface view even when that view is empty, and those
//! calls fail with "No provider available".

use std::sync::Arc;

use rudder_common::discovery::CallShare;

use crate::cluster::{Caller, ClusterInvoker};
use crate::rng::RngSource;

/// The second provider list of one registry, and the share of calls the first one keeps.
#[derive(Debug)]
pub struct Fallback<C> {
    /// The cluster invoker over the second list's directory.
    pub invoker: ClusterInvoker<C>,
    /// The share of calls the registry's first list gets; the rest come here.
    pub share: Arc<CallShare>,
}

/// The invoker a call goes to: `primary`, unless `fallback` is given, its share says so for this
/// call's draw from `rng`, and it has providers (or `primary` has none). No draw is made while the
/// primary list takes every call.
pub(crate) fn choose<'a, C: Caller + 'static>(
    primary: &'a ClusterInvoker<C>,
    fallback: Option<&'a Fallback<C>>,
    rng: &RngSource,
) -> &'a ClusterInvoker<C> {
    let Some(fallback) = fallback else {
        return primary;
    };
    let percent = fallback.share.primary_percent();
    if percent >= 100 {
        return primary;
    }
    // `below(100)` is in 0..100, so the draw fits a u8.
    let draw = rng.with(|rng| rng.below(100)) as u8;
    let (chosen, other) = if fallback.share.goes_to_primary(draw) {
        (primary, &fallback.invoker)
    } else {
        (&fallback.invoker, primary)
    };
    if !has_providers(chosen) && has_providers(other) {
        return other;
    }
    chosen
}

pub(super) fn has_providers<C: Caller + 'static>(invoker: &ClusterInvoker<C>) -> bool {
    invoker
        .balancer()
        .directory()
        .with_current(|snapshot| !snapshot.providers().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::balancer::Balancer;
    use crate::cluster::ClusterMode;
    use crate::directory::Directory;
    use crate::provider::Provider;
    use rudder_common::error::RpcError;
    use rudder_common::invocation::Invocation;
    use rudder_common::url::DubboUrl;

    /// Never called: the tests only choose.
    struct Unused;

    impl Caller for Unused {
        type Output = ();
        fn empty(&self) {}
        async fn call(&self, _: &Arc<Provider>, _: &Invocation) -> Result<(), RpcError> {
            unreachable!("choosing makes no call")
        }
    }

    fn invoker(provider: Option<&str>) -> ClusterInvoker<Unused> {
        let directory = Arc::new(Directory::default());
        if let Some(provider) = provider {
            directory.replace([DubboUrl::parse(provider).unwrap()]);
        }
        ClusterInvoker::new(
            Arc::new(Balancer::builder(directory).build()),
            Unused,
            ClusterMode::default(),
        )
    }

    fn address<C: Caller + 'static>(invoker: &ClusterInvoker<C>) -> String {
        invoker.balancer().directory().snapshot().providers()[0]
            .address()
            .to_owned()
    }

    /// How many of `calls` draws go to the fallback at `percent` to the primary.
    fn to_fallback(
        percent: u8,
        calls: usize,
        primary: &ClusterInvoker<Unused>,
        fb: &Fallback<Unused>,
    ) -> usize {
        fb.share.set_primary_percent(percent);
        let rng = RngSource::seeded(11);
        (0..calls)
            .filter(|_| std::ptr::eq(choose(primary, Some(fb), &rng), &fb.invoker))
            .count()
    }

    #[test]
    fn the_share_splits_calls_as_dubbos_proportion() {
        let primary = invoker(Some("dubbo://10.0.0.1:20880/S"));
        let fallback = Fallback {
            invoker: invoker(Some("dubbo://10.0.0.2:20880/S")),
            share: Arc::new(CallShare::default()),
        };
        assert_eq!(to_fallback(100, 1_000, &primary, &fallback), 0);
        assert_eq!(to_fallback(0, 1_000, &primary, &fallback), 1_000);
        // 30 % to the primary: 7,000 of 10,000 expected at the fallback, binomial sd ≈ 46; the
        // tolerance of ±300 (6.5 sd) fails by chance with probability under 1e-10.
        let fell_back = to_fallback(30, 10_000, &primary, &fallback);
        assert!((6_700..=7_300).contains(&fell_back), "{fell_back}");
        assert_eq!(address(&fallback.invoker), "10.0.0.2:20880");
    }

    #[test]
    fn an_empty_list_never_takes_calls_the_other_could_answer() {
        let primary = invoker(Some("dubbo://10.0.0.1:20880/S"));
        let empty = Fallback {
            invoker: invoker(None),
            share: Arc::new(CallShare::new(0)),
        };
        assert_eq!(
            to_fallback(0, 100, &primary, &empty),
            0,
            "Dubbo would fail these"
        );
        let none = invoker(None);
        let full = Fallback {
            invoker: invoker(Some("dubbo://10.0.0.2:20880/S")),
            share: Arc::new(CallShare::default()),
        };
        assert_eq!(
            to_fallback(100, 100, &none, &full),
            0,
            "a whole share is no draw"
        );
        assert_eq!(to_fallback(99, 100, &none, &full), 100);
    }

    #[test]
    fn without_a_fallback_every_call_goes_to_the_primary() {
        let primary = invoker(None);
        let rng = RngSource::seeded(1);
        assert!(std::ptr::eq(
            choose::<Unused>(&primary, None, &rng),
            &primary
        ));
    }
}
