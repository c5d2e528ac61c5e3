//! Why a call may or may not go to each provider: the chain run step by step, as data.
//!
//! ```
//! use std::sync::Arc;
//! use rudder_cluster::directory::Directory;
//! use rudder_cluster::router::{RouterChain, RuleKey, RuleSlot};
//! use rudder_common::{invocation::Invocation, url::DubboUrl};
//!
//! let directory = Directory::default();
//! directory.replace([
//!     DubboUrl::parse("dubbo://10.0.0.1:20880/S?dubbo.tag=gray")?,
//!     DubboUrl::parse("dubbo://10.0.0.2:20880/S")?,
//! ]);
//! let chain = RouterChain::new(DubboUrl::parse("consumer://10.0.9.9/S")?);
//! let why = chain.explain(&directory.snapshot(), &Invocation::new("m", vec![], vec![]));
//! assert!(!why.providers[0].kept && why.providers[1].kept);
//! let step = why.providers[0].decided_by.unwrap();
//! assert_eq!(why.steps[step].rule.slot, RuleSlot::Tag);
//! println!("{why}");
//! # Ok::<(), rudder_common::url::UrlError>(())
//! ```

use std::fmt;
use std::sync::Arc;

use rudder_common::invocation::Invocation;

use super::state::ChainState;
use super::{Outcome, RouteContext, RouteKey, RuleRef};
use crate::provider::Provider;
use crate::view::Ejection;

/// The chain's decision for one call.
#[derive(Debug, Clone)]
pub struct Explanation {
    /// The method routed.
    pub method: String,
    /// Every router that ran, in order (routing stops at the first that keeps nothing).
    pub steps: Vec<StepReport>,
    /// Every provider of the snapshot, in snapshot order.
    pub providers: Vec<ProviderFate>,
}

/// What one router did.
#[derive(Debug, Clone)]
pub struct StepReport {
    /// The rule applied.
    pub rule: RuleRef,
    /// Why it kept what it kept.
    pub reason: String,
    /// Providers before the step.
    pub before: usize,
    /// Providers after it (for a weighted step: in any of its destinations).
    pub after: usize,
    /// For a v3.1 weighted step, each destination's weight and size; one is drawn per call.
    pub choices: Vec<(u64, usize)>,
}

/// One provider's fate.
#[derive(Debug, Clone)]
pub struct ProviderFate {
    /// The provider.
    pub provider: Arc<Provider>,
    /// Whether the routers keep it for the call.
    pub kept: bool,
    /// The step (index into [`Explanation::steps`]) that removed it, or for a kept provider the last
    /// step that narrowed the set to include it; `None` when no step changed anything for it.
    pub decided_by: Option<usize>,
    /// The provider's outlier ejection for the method, when one is in force and the explanation was
    /// asked with [`Explanation::with_ejections`]: a kept provider that is
    /// [left out](Ejection::left_out) gets no call until it ends.
    pub ejected: Option<Ejection>,
}

impl Explanation {
    /// How many providers the routers keep for the call.
    pub fn kept(&self) -> usize {
        self.providers.iter().filter(|p| p.kept).count()
    }

    /// How many kept providers outlier ejection leaves out of picks now.
    pub fn ejected(&self) -> usize {
        self.providers
            .iter()
            .filter(|p| p.kept && p.ejected.is_some_and(|e| e.left_out))
            .count()
    }

    /// Adds the outlier ejections in force at `now` (the balancer's clock, epoch ms) to the kept
    /// providers, decided as a pick over them decides (see [`Ejection::among`]).
    pub fn with_ejections(mut self, now: i64) -> Explanation {
        let kept: Vec<usize> = (0..self.providers.len())
            .filter(|&i| self.providers[i].kept)
            .collect();
        let ejections = Ejection::among(
            kept.iter().map(|&i| &*self.providers[i].provider),
            &self.method,
            now,
        );
        for (i, ejection) in kept.into_iter().zip(ejections) {
            self.providers[i].ejected = ejection;
        }
        self
    }
}

pub(crate) fn explain(
    state: &ChainState,
    providers: &[Arc<Provider>],
    invocation: &Invocation,
) -> Explanation {
    let ctx = RouteContext {
        providers,
        method: invocation.method_name(),
        consumer: &state.consumer,
    };
    let mut fates: Vec<ProviderFate> = providers
        .iter()
        .map(|p| ProviderFate {
            provider: Arc::clone(p),
            kept: true,
            decided_by: None,
            ejected: None,
        })
        .collect();
    let mut input: Vec<u32> = (0..providers.len() as u32).collect();
    let mut steps = Vec::new();
    for router in &state.routers {
        if input.is_empty() {
            break;
        }
        let key = if router.reads_call() {
            router.key(&state.consumer, invocation)
        } else {
            RouteKey::Fixed
        };
        let routed = router.route(&ctx, &key, &input);
        let (output, choices) = match routed.outcome {
            Outcome::Kept(kept) => (kept, Vec::new()),
            Outcome::Weighted(choices) => {
                let mut union: Vec<u32> = choices
                    .iter()
                    .flat_map(|(_, k)| k.iter().copied())
                    .collect();
                union.sort_unstable();
                union.dedup();
                let sizes = choices.iter().map(|(w, k)| (*w, k.len())).collect();
                (union, sizes)
            }
        };
        let step = steps.len();
        let narrowed = output.len() < input.len();
        for &i in &input {
            let fate = &mut fates[i as usize];
            if output.binary_search(&i).is_err() {
                fate.kept = false;
                fate.decided_by = Some(step);
            } else if narrowed {
                fate.decided_by = Some(step);
            }
        }
        steps.push(StepReport {
            rule: router.rule().clone(),
            reason: routed.reason.into_owned(),
            before: input.len(),
            after: output.len(),
            choices,
        });
        input = output;
    }
    Explanation {
        method: invocation.method_name().to_owned(),
        steps,
        providers: fates,
    }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "routing {}: {} of {} providers kept",
            self.method,
            self.kept(),
            self.providers.len()
        )?;
        match self.ejected() {
            0 => writeln!(f)?,
            n => writeln!(f, ", {n} of them ejected")?,
        }
        for (i, step) in self.steps.iter().enumerate() {
            write!(
                f,
                "  step {i}: {} -> {}/{}: {}",
                step.rule, step.after, step.before, step.reason
            )?;
            for (weight, size) in &step.choices {
                write!(f, " [weight {weight}: {size}]")?;
            }
            writeln!(f)?;
        }
        for fate in &self.providers {
            let left_out = fate.ejected.is_some_and(|e| e.left_out);
            let verdict = if fate.kept && !left_out { "in " } else { "out" };
            write!(f, "  {verdict} {}", fate.provider.address())?;
            if let Some(step) = fate.decided_by {
                write!(f, "  by step {step} ({})", self.steps[step].rule)?;
            }
            if let Some(ejection) = fate.ejected {
                write!(
                    f,
                    "  ejected (outlier, ejection {}) for {:.1} s more",
                    ejection.times,
                    ejection.remaining_millis as f64 / 1000.0
                )?;
                if !ejection.left_out {
                    write!(f, ", picked anyway (the ejection cap, or no provider left)")?;
                }
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
