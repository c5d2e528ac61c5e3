//! A provider application's rule applied to that application's providers only.
//!
//! Dubbo 3.3's `ProviderAppStateRouter` (like its `TagStateRouter`) follows one application: that of
//! the first provider in its list, whose order comes from a hash map. With providers of several
//! applications, which rule applies depends on that order, and it then filters every application's
//! providers. rudder applies each application's `<app>.condition-router` to the providers of that
//! application and lets the others through, so the answer does not depend on the order.

use std::sync::Arc;

use rudder_common::invocation::Invocation;

use super::{Consumer, Outcome, RouteContext, RouteKey, Routed, Router, RuleRef};
use crate::provider::Provider;

/// The application a provider belongs to: the `remote.application` a consumer's merge sets, else its
/// own `application`.
pub(crate) fn provider_application(provider: &Provider) -> &str {
    let url = provider.url();
    super::sample::raw_param(url, "remote.application")
        .filter(|a| !a.is_empty())
        .or_else(|| super::sample::raw_param(url, "application"))
        .unwrap_or("")
}

/// `inner` applied to the providers of `application`; the others pass untouched.
#[derive(Debug)]
pub(crate) struct ProviderAppScope {
    application: Arc<str>,
    inner: Arc<dyn Router>,
}

impl ProviderAppScope {
    pub(crate) fn new(application: Arc<str>, inner: Arc<dyn Router>) -> ProviderAppScope {
        ProviderAppScope { application, inner }
    }
}

impl Router for ProviderAppScope {
    fn rule(&self) -> &RuleRef {
        self.inner.rule()
    }

    fn reads_call(&self) -> bool {
        self.inner.reads_call()
    }

    fn key<'a>(&self, consumer: &'a Consumer, invocation: &'a Invocation) -> RouteKey<'a> {
        self.inner.key(consumer, invocation)
    }

    fn route(&self, ctx: &RouteContext<'_>, key: &RouteKey<'_>, input: &[u32]) -> Routed {
        let (own, others): (Vec<u32>, Vec<u32>) = input.iter().partition(|&&i| {
            provider_application(&ctx.providers[i as usize]) == &*self.application
        });
        if own.is_empty() {
            return Routed::unchanged(
                input,
                format!("no provider of application {}", self.application),
            );
        }
        let routed = self.inner.route(ctx, key, &own);
        let outcome = match routed.outcome {
            Outcome::Kept(kept) => Outcome::Kept(merge(&kept, &others)),
            Outcome::Weighted(choices) => Outcome::Weighted(
                choices
                    .into_iter()
                    .map(|(weight, kept)| (weight, merge(&kept, &others)))
                    .collect(),
            ),
        };
        Routed {
            outcome,
            reason: format!(
                "{} (providers of application {}; {} of others kept)",
                routed.reason,
                self.application,
                others.len()
            )
            .into(),
        }
    }
}

/// Two ascending index lists as one ascending list (snapshot order).
fn merge(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

#[cfg(test)]
mod tests {
    use super::merge;

    #[test]
    fn merge_keeps_snapshot_order() {
        assert_eq!(merge(&[0, 3, 4], &[1, 2, 5]), [0, 1, 2, 3, 4, 5]);
        assert_eq!(merge(&[], &[1]), [1]);
        assert_eq!(merge(&[2], &[]), [2]);
    }
}
