//! Several registries behind one reference: Dubbo 3.3's `ZoneAwareClusterInvoker`.
//!
//! The common multi-data-centre deployment gives a consumer one registry per data centre. Dubbo keeps
//! the registries apart: each has its own directory and its own cluster invoker (failover retries stay
//! inside one registry), and a zone-aware layer on top picks **one registry per call**:
//!
//! 1. the first registry, in configuration order, with `preferred=true` and at least one provider;
//! 2. else, when the call carries a `registry_zone` attachment, the first registry with providers whose
//!    `zone` equals it; with `registry_zone_force=true` as well, no such registry is an error naming the
//!    zone;
//! 3. else a weighted random pick among the registries with providers, by registry `weight` (default
//!    100, negative counts as 0, no warmup), with the arithmetic of the `random` balancer: equal weights
//!    or a zero total give a uniform pick, otherwise the owner of an offset drawn in `0..total`;
//! 4. else, no registry has a provider: [`RpcErrorKind::NoProvider`] naming the registries.
//!
//! With a single registry there is no zone-aware layer at all (as in Dubbo): its cluster invoker is
//! called directly, and the zone attachments are ignored.
//!
//! [`choose_registry`] is the rule itself, pure and with an injected RNG; [`ZoneAwareInvoker`] applies
//! it to real cluster invokers and adds what Dubbo lacks: optional failover across registries.
//!
//! ```
//! use rudder_cluster::zone_aware::{choose_registry, RegistryChoice, ZoneRequest};
//! use rand::{rngs::SmallRng, SeedableRng};
//!
//! let registries = [
//!     RegistryChoice::new("zk-hz").zone("hz"),
//!     RegistryChoice::new("zk-sh").zone("sh").weight(300),
//! ];
//! let mut rng = SmallRng::seed_from_u64(1);
//! let everyone = |_: usize| true;
//! let to_sh = ZoneRequest { zone: Some("sh"), force: false };
//! assert_eq!(choose_registry(&registries, &everyone, &to_sh, &mut rng)?, 1);
//! let nowhere = ZoneRequest { zone: Some("bj"), force: true };
//! let error = choose_registry(&registries, &everyone, &nowhere, &mut rng).unwrap_err();
//! assert!(error.message().contains("zone: bj"));
//! # Ok::<(), rudder_common::error::RpcError>(())
//! ```
//!
//! # Differences from Dubbo
//!
//! * Dubbo picks the registry in step 3 with the reference's own `loadbalance`; rudder always uses
//!   weighted random there. For `random` (the default) the two are the same draw, except that Dubbo's
//!   `random` picks uniformly unless the *first* registry carries an explicit `weight` (the shortcut
//!   described in [`crate::loadbalance::random`]); rudder honours every registry's weight.
//! * Dubbo draws among all registries and redraws among those with providers when the first draw has
//!   none; rudder draws among those with providers at once. The two give the same probabilities:
//!   `w_j / W + (W_empty / W) * (w_j / W_available) = w_j / W_available`.
//! * Dubbo 3.3 reads the zone keys from the caller thread's `RpcContext` client attachments; rudder reads
//!   them from the invocation's attachments (as Dubbo 2.7.5+ did), and sends them on like any attachment.
//! * Failover across registries ([`ZoneAwareInvoker::with_failover`]) does not exist in Dubbo; it is off
//!   by default.

use std::fmt;

use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;

use crate::rng::{PickRng, RngSource};

mod invoker;
mod split;
pub use invoker::{RegistryMember, ZoneAwareInvoker};
pub use split::Fallback;

/// Registry URL parameter: this registry wins whenever it has providers.
pub const PREFERRED_KEY: &str = "preferred";
/// Registry URL parameter: the zone (data centre) of this registry.
pub const ZONE_KEY: &str = "zone";
/// Registry URL parameter: this registry's share of the weighted pick.
pub const WEIGHT_KEY: &str = "weight";
/// The registry URL parameters that describe the choice, not the ZooKeeper session.
pub const REGISTRY_CHOICE_KEYS: [&str; 3] = [PREFERRED_KEY, ZONE_KEY, WEIGHT_KEY];
/// A registry's weight when its URL gives none (Dubbo's `DEFAULT_WEIGHT`).
pub const DEFAULT_REGISTRY_WEIGHT: i32 = 100;
/// Call attachment: the zone whose registry should serve this call.
pub const REGISTRY_ZONE: &str = "registry_zone";
/// Call attachment: `true` makes a `registry_zone` with no registry an error instead of a fallback.
pub const REGISTRY_ZONE_FORCE: &str = "registry_zone_force";

/// What a registry URL says about choosing that registry: `preferred`, `zone`, `weight`, and a label
/// for messages (the registry's address, never its credentials).
///
/// ```
/// use rudder_cluster::zone_aware::RegistryChoice;
/// let choice = RegistryChoice::from_parameters("10.0.0.1:2181", [("zone", "hz"), ("weight", "300")])?;
/// assert_eq!((choice.zone_name(), choice.weight_value(), choice.is_preferred()), (Some("hz"), 300, false));
/// # Ok::<(), rudder_cluster::zone_aware::BadRegistryParameter>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryChoice {
    label: String,
    preferred: bool,
    zone: Option<String>,
    weight: i32,
}

/// A registry URL parameter of the wrong form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("registry {registry}: parameter {key}={value:?} is not {expected}")]
pub struct BadRegistryParameter {
    /// The registry's label.
    pub registry: String,
    /// The parameter key.
    pub key: String,
    /// The value found.
    pub value: String,
    /// What the value should be.
    pub expected: &'static str,
}

impl RegistryChoice {
    /// A registry neither preferred nor zoned, of the default weight.
    pub fn new(label: impl Into<String>) -> RegistryChoice {
        RegistryChoice {
            label: label.into(),
            preferred: false,
            zone: None,
            weight: DEFAULT_REGISTRY_WEIGHT,
        }
    }

    /// Reads `preferred` (true or false, any case), `zone` and `weight` (an integer; negative counts as
    /// 0) from a registry URL's parameters; other keys are ignored.
    ///
    /// # Errors
    /// [`BadRegistryParameter`] for a `preferred` that is not a boolean or a `weight` that is not an
    /// integer.
    pub fn from_parameters<'a>(
        label: &str,
        parameters: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<RegistryChoice, BadRegistryParameter> {
        let mut choice = RegistryChoice::new(label);
        let bad = |key: &str, value: &str, expected| BadRegistryParameter {
            registry: label.to_owned(),
            key: key.to_owned(),
            value: value.to_owned(),
            expected,
        };
        for (key, value) in parameters {
            let value = value.trim();
            match key {
                PREFERRED_KEY if value.eq_ignore_ascii_case("true") => choice.preferred = true,
                PREFERRED_KEY if value.eq_ignore_ascii_case("false") || value.is_empty() => {
                    choice.preferred = false;
                }
                PREFERRED_KEY => return Err(bad(key, value, "true or false")),
                ZONE_KEY => choice.zone = Some(value.to_owned()).filter(|z| !z.is_empty()),
                WEIGHT_KEY if value.is_empty() => choice.weight = DEFAULT_REGISTRY_WEIGHT,
                WEIGHT_KEY => {
                    choice.weight = value
                        .parse()
                        .map_err(|_| bad(key, value, "an integer (32 bits)"))?;
                }
                _ => {}
            }
        }
        Ok(choice)
    }

    /// The same registry, preferred or not.
    pub fn preferred(mut self, preferred: bool) -> RegistryChoice {
        self.preferred = preferred;
        self
    }

    /// The same registry, in `zone`.
    pub fn zone(mut self, zone: &str) -> RegistryChoice {
        self.zone = Some(zone.to_owned());
        self
    }

    /// The same registry, of `weight`.
    pub fn weight(mut self, weight: i32) -> RegistryChoice {
        self.weight = weight;
        self
    }

    /// The label messages name this registry by.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether `preferred=true`.
    pub fn is_preferred(&self) -> bool {
        self.preferred
    }

    /// The `zone`, if set.
    pub fn zone_name(&self) -> Option<&str> {
        self.zone.as_deref()
    }

    /// The `weight` as given (default 100).
    pub fn weight_value(&self) -> i32 {
        self.weight
    }
}

impl fmt::Display for RegistryChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label)?;
        if let Some(zone) = &self.zone {
            write!(f, " zone={zone}")?;
        }
        if self.preferred {
            f.write_str(" preferred")?;
        }
        write!(f, " weight={}", self.weight)
    }
}

/// What one call asks of the registry choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZoneRequest<'a> {
    /// The `registry_zone` attachment, when set and not empty.
    pub zone: Option<&'a str>,
    /// Whether `registry_zone_force` is `true` (any case).
    pub force: bool,
}

impl<'a> ZoneRequest<'a> {
    /// Reads `registry_zone` and `registry_zone_force` from the call's attachments.
    pub fn of(invocation: &'a Invocation) -> ZoneRequest<'a> {
        ZoneRequest {
            zone: invocation
                .attachment(REGISTRY_ZONE)
                .filter(|zone| !zone.is_empty()),
            force: invocation
                .attachment(REGISTRY_ZONE_FORCE)
                .is_some_and(|force| force.eq_ignore_ascii_case("true")),
        }
    }
}

/// Chooses the registry for one call by Dubbo 3.3's rules (see the [module docs](self)).
///
/// `available(i)` tells whether registry `i` may serve the call: it has providers (and, under failover,
/// was not tried yet). Allocation-free; two passes over the registries at most.
///
/// # Errors
/// [`RpcErrorKind::NoProvider`]: the forced zone has no registry with providers (the message names the
/// zone), or no registry has providers.
pub fn choose_registry(
    registries: &[RegistryChoice],
    available: &dyn Fn(usize) -> bool,
    request: &ZoneRequest<'_>,
    rng: &mut dyn PickRng,
) -> Result<usize, RpcError> {
    let candidates = || (0..registries.len()).filter(|&i| available(i));
    if let Some(index) = candidates().find(|&i| registries[i].preferred) {
        return Ok(index);
    }
    if let Some(zone) = request.zone {
        if let Some(index) = candidates().find(|&i| registries[i].zone.as_deref() == Some(zone)) {
            return Ok(index);
        }
        if request.force {
            return Err(RpcError::new(
                RpcErrorKind::NoProvider,
                format!(
                    "no registry in zone or no available providers in the registry, zone: {zone}, registries: [{}]",
                    labels(registries)
                ),
            ));
        }
    }
    weighted_pick(registries, candidates, rng).ok_or_else(|| {
        RpcError::new(
            RpcErrorKind::NoProvider,
            format!(
                "no provider available in any registry: [{}]",
                labels(registries)
            ),
        )
    })
}

/// The `random` balancer's draw over the candidate registries' weights; `None` when there is none.
fn weighted_pick<I: Iterator<Item = usize>>(
    registries: &[RegistryChoice],
    candidates: impl Fn() -> I,
    rng: &mut dyn PickRng,
) -> Option<usize> {
    let weight = |i: usize| i64::from(registries[i].weight.max(0));
    let (mut count, mut total, mut first_weight, mut same_weight) = (0u64, 0i64, None, true);
    for i in candidates() {
        count += 1;
        total += weight(i);
        match first_weight {
            None => first_weight = Some(weight(i)),
            Some(first) => same_weight &= first == weight(i),
        }
    }
    if count == 0 {
        return None;
    }
    if same_weight || total <= 0 {
        let nth = rng.below(count);
        return candidates().nth(usize::try_from(nth).ok()?);
    }
    // The first candidate whose running sum exceeds the offset.
    let mut offset = i64::try_from(rng.below(total.unsigned_abs())).ok()?;
    candidates().find(|&i| {
        offset -= weight(i);
        offset < 0
    })
}

fn labels(registries: &[RegistryChoice]) -> String {
    let labels: Vec<String> = registries.iter().map(ToString::to_string).collect();
    labels.join(", ")
}

/// Mixed into a seed for the registry pick, so that it does not draw the numbers the balancers draw.
const REGISTRY_PICK_SEED: u64 = 0x7a6f_6e65_2d61_7761;

/// The randomness of the registry pick: reproducible from the reference's `seed` when it has one
/// (decorrelated from the balancers seeded with it), per-thread otherwise. `rudder simulate --seed`
/// uses it too, so a simulation picks the registries a seeded reference would.
pub fn registry_pick_rng(seed: Option<u64>) -> RngSource {
    seed.map_or(RngSource::ThreadLocal, |seed| {
        RngSource::seeded(seed ^ REGISTRY_PICK_SEED)
    })
}

#[cfg(test)]
mod tests;
