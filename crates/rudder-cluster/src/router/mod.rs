//! Routers: which providers a call may go to, decided between the directory and the load balancer, as
//! Dubbo 3.3's state-router chain decides it.
//!
//! ```text
//! snapshot ──▶ tag ──▶ service conditions ──▶ provider-app conditions ──▶ app conditions ──▶ load balance
//! ```
//!
//! A [`RouterChain`] holds the rules ([`RouterChain::set_rule`]: YAML text as the config center stores
//! it, `None` when the rule is deleted) and the consumer URL the rules read. Each router ([`Router`])
//! keeps a subset of the providers the previous one kept, in the same order; a router that keeps none
//! ends routing and the call fails with "no provider", as Dubbo's `should-fail-fast` default does.
//!
//! Routing results are computed once and cached: per snapshot, rule version and method, and per the
//! little a rule reads of the call (the request tag, whether a `when` part that reads arguments or
//! attachments matched, which weighted destination was drawn). Each routed subset gets its own
//! [`MethodView`](crate::loadbalance::MethodView), so weights, prefix sums and round-robin state are
//! built once for it too. A balancer without a chain does no routing work at all.
//!
//! ```
//! use std::sync::Arc;
//! use rudder_cluster::{balancer::Balancer, directory::Directory};
//! use rudder_cluster::router::{RouterChain, RuleKey};
//! use rudder_common::{invocation::Invocation, url::DubboUrl};
//!
//! let directory = Arc::new(Directory::default());
//! directory.replace([
//!     DubboUrl::parse("dubbo://10.0.0.1:20880/S?region=hangzhou")?,
//!     DubboUrl::parse("dubbo://10.0.0.2:20880/S?region=beijing")?,
//! ]);
//! let chain = Arc::new(RouterChain::new(DubboUrl::parse("consumer://10.0.9.9/S?application=shop")?));
//! let rule = "conditions:\n  - method = sayHello => region = hangzhou\n";
//! chain.set_rule(RuleKey::app_condition("shop"), Some(rule)).unwrap();
//! let balancer = Balancer::builder(directory).routers(Arc::clone(&chain)).build();
//!
//! let hello = Invocation::new("sayHello", vec![], vec![]);
//! assert_eq!(balancer.select(&hello, &[]).unwrap().address(), "10.0.0.1:20880");
//! let why = chain.explain(&balancer.directory().snapshot(), &hello);
//! assert!(!why.providers[1].kept);
//! # Ok::<(), rudder_common::url::UrlError>(())
//! ```

mod chain;
pub mod condition;
mod consumer;
pub mod explain;
mod rule_key;
mod sample;
mod scoped;
mod state;
mod table;
pub use table::MAX_NODES as MAX_CACHED_ROUTES;
pub mod tag;
mod yaml;

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use rudder_common::invocation::Invocation;

pub use chain::RouterChain;
pub use consumer::{Consumer, FORCE_TAG_KEY, TAG_KEY};
pub use explain::{Explanation, ProviderFate, StepReport};
pub use rule_key::{RuleError, RuleKey, RuleSlot};

use crate::provider::Provider;

/// Which rule a routing step comes from: shown in explanations and logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleRef {
    /// The router (and rule slot) of the step.
    pub slot: RuleSlot,
    /// The rule's key in the config center (`demo-provider.tag-router`); empty for built-in behaviour
    /// such as static tags.
    pub rule: Arc<str>,
    /// The condition line, or what the step does (`static dubbo.tag`).
    pub detail: Arc<str>,
}

impl fmt::Display for RuleRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.slot)?;
        if !self.rule.is_empty() {
            write!(f, " {}", self.rule)?;
        }
        if !self.detail.is_empty() {
            write!(f, " [{}]", self.detail)?;
        }
        Ok(())
    }
}

/// What a router read of one call: everything its result depends on besides the providers. Results are
/// cached under it, so it must be small and exact.
#[derive(Debug, Clone, Eq, Hash)]
pub enum RouteKey<'a> {
    /// The router reads nothing of the call beyond its method (one result per method).
    Fixed,
    /// Whether the rule's `when` part matched the call.
    When(bool),
    /// The request tag (empty: none) and whether it is forced (`dubbo.force.tag`).
    Tag {
        /// The tag.
        tag: Cow<'a, str>,
        /// `dubbo.force.tag`.
        force: bool,
    },
}

/// Field by field, as derived, but without calling `memcmp` for two empty tags, the key of almost every
/// call (an untagged request), compared on every routed pick. Rust compares strings of equal length
/// with `memcmp` even when they are empty, and an empty string points at Rust's dangling address 0x1;
/// glibc's AVX-512 `memcmp` reads short inputs with a masked load, which from an unmapped address takes
/// a microcode assist even with a zero mask: 80–150 ns for `"" == ""` in a standalone loop here,
/// against 1.3 ns for 8 equal bytes. In the `call_path` bench that one compare was a quarter of a
/// routed call (`condition_rule` 640 -> 485 ns per call without it).
impl PartialEq for RouteKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (RouteKey::Fixed, RouteKey::Fixed) => true,
            (RouteKey::When(a), RouteKey::When(b)) => a == b,
            (RouteKey::Tag { tag: x, force: f }, RouteKey::Tag { tag: y, force: g }) => {
                f == g && x.len() == y.len() && (x.is_empty() || x == y)
            }
            _ => false,
        }
    }
}

impl RouteKey<'_> {
    /// The same key, owning its text.
    pub fn into_owned(self) -> RouteKey<'static> {
        match self {
            RouteKey::Fixed => RouteKey::Fixed,
            RouteKey::When(b) => RouteKey::When(b),
            RouteKey::Tag { tag, force } => RouteKey::Tag {
                tag: Cow::Owned(tag.into_owned()),
                force,
            },
        }
    }
}

/// What a router sees besides the call: the whole snapshot, the method and the consumer.
#[derive(Debug, Clone, Copy)]
pub struct RouteContext<'a> {
    /// Every provider of the snapshot (the input subset indexes into it).
    pub providers: &'a [Arc<Provider>],
    /// The method called (the real one for a generic call).
    pub method: &'a str,
    /// The consumer the rules read.
    pub consumer: &'a Consumer,
}

/// A router's result for one input subset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The providers kept: indices into the snapshot, a subsequence of the input.
    Kept(Vec<u32>),
    /// One of these subsets, drawn per call with probability weight / total (v3.1 multi-destination).
    Weighted(Vec<(u64, Vec<u32>)>),
}

/// A router's result with the reason, for explanations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routed {
    /// What was kept.
    pub outcome: Outcome,
    /// Why, in a few words ("when matched", "no match, force=false: rule ignored").
    pub reason: Cow<'static, str>,
}

impl Routed {
    pub(crate) fn kept(kept: Vec<u32>, reason: impl Into<Cow<'static, str>>) -> Routed {
        Routed {
            outcome: Outcome::Kept(kept),
            reason: reason.into(),
        }
    }

    pub(crate) fn unchanged(input: &[u32], reason: impl Into<Cow<'static, str>>) -> Routed {
        Routed::kept(input.to_vec(), reason)
    }
}

/// One step of the chain: keeps a subset of the providers for a call.
///
/// A router's result may depend only on the providers, the method, the consumer and what
/// [`Router::key`] reads of the call: the chain caches it under that key.
pub trait Router: Send + Sync + fmt::Debug {
    /// The rule this router applies.
    fn rule(&self) -> &RuleRef;

    /// Whether [`Router::key`] reads the call (arguments, attachments); `false` means the result is
    /// fixed per method, and `key` is not called.
    fn reads_call(&self) -> bool;

    /// What this router reads of the call. Called on every pick: keep it cheap and allocation-free.
    fn key<'a>(&self, consumer: &'a Consumer, invocation: &'a Invocation) -> RouteKey<'a>;

    /// Filters `input` (indices into `ctx.providers`, in order) for calls with `key`.
    fn route(&self, ctx: &RouteContext<'_>, key: &RouteKey<'_>, input: &[u32]) -> Routed;
}

/// Keeps the indices of `input` for which `keep` holds.
pub(crate) fn filter(
    ctx: &RouteContext<'_>,
    input: &[u32],
    mut keep: impl FnMut(&Provider) -> bool,
) -> Vec<u32> {
    input
        .iter()
        .copied()
        .filter(|&i| keep(&ctx.providers[i as usize]))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::RouteKey;

    /// The derived equality, written out: what the hand-written one must agree with.
    fn structurally_equal(a: &RouteKey<'_>, b: &RouteKey<'_>) -> bool {
        match (a, b) {
            (RouteKey::Fixed, RouteKey::Fixed) => true,
            (RouteKey::When(x), RouteKey::When(y)) => x == y,
            (RouteKey::Tag { tag: x, force: f }, RouteKey::Tag { tag: y, force: g }) => {
                x.as_bytes() == y.as_bytes() && f == g
            }
            _ => false,
        }
    }

    #[test]
    fn route_key_equality_is_field_by_field() {
        let tag = |t: &str, force| RouteKey::Tag {
            tag: Cow::Owned(t.to_owned()),
            force,
        };
        let keys = [
            RouteKey::Fixed,
            RouteKey::When(true),
            RouteKey::When(false),
            tag("", false),
            tag("", true),
            tag("gray", false),
            tag("gray", true),
            tag("blue", false),
            RouteKey::Tag {
                tag: Cow::Borrowed(""),
                force: false,
            },
        ];
        for a in &keys {
            for b in &keys {
                assert_eq!(a == b, structurally_equal(a, b), "{a:?} against {b:?}");
            }
        }
    }
}
