//! `consistenthash`: the same arguments go to the same provider (`ConsistentHashLoadBalance`).
//!
//! Each provider gets `hash.nodes` (default 160) points on a 32-bit ring: for `i` in `0..nodes/4`, the MD5
//! of `address + i` yields four little-endian `u32` points. A call's key is its arguments at the indexes in
//! `hash.arguments` (default `0`), rendered as Java's `String.valueOf` and concatenated; the call goes to
//! the first point at or after the MD5-derived hash of the key, wrapping around. When two providers'
//! points collide the later provider in list order owns the point, as Java's `TreeMap.put` decides. For
//! the same provider list and arguments rudder therefore picks the same provider as Dubbo Java 3.x.
//!
//! The ring is built once per snapshot and method (Dubbo rebuilds whenever the list changes, too). A pick
//! hashes the key without building it as a string, then binary-searches the ring: O(log(n·nodes)), no
//! allocation. Weights and warmup do not apply, as in Dubbo.
//!
//! # Bounded loads (`hash.balance-factor`)
//!
//! rudder's addition, off unless set: with `hash.balance-factor=c` (`1 < c ≤ 100`, consumer or provider
//! side, `<method>.hash.balance-factor` for one method, read from the first provider like the other
//! `hash.*` parameters) a key stays on its provider only while that provider has fewer than
//! `⌈c · (calls in flight + 1) / providers⌉` calls of the method in flight; otherwise the call walks the
//! ring clockwise to the next distinct provider under that bound. See [`bounded_load`]
//! for the algorithm and its guarantees. A value that is not a number in range is ignored with one
//! warning. Unset, picks are Dubbo's ring, bit for bit.
//!
//! # Cautions
//! A method without arguments (or whose argument indexes are out of range) hashes the empty key, so every
//! call goes to one provider (apache/dubbo#3468). `hash.nodes` below 4 would give Java an empty ring and a
//! `NullPointerException`; rudder uses 4. Above 65,536 it is clamped, and a ring is capped at
//! [`MAX_RING_POINTS`] (Envoy's default ring cap) by giving every provider fewer points: Java would try
//! to allocate whatever it is told (2^31 points aborts a consumer). `hash.arguments` entries that are
//! not indexes below 255 are ignored, with a warning.

use std::fmt::{self, Write as _};

use md5::{Digest, Md5};
use rudder_common::invocation::Invocation;
use rudder_common::java_string::write_java_string;
use rudder_common::url::ranges::{warn_once, IntRange};

use super::bounded_load::{self, BalanceFactor};
use super::{LoadBalance, MethodView, Pick, PickRng, StateKey};

/// Dubbo's default `hash.nodes`.
pub const DEFAULT_HASH_NODES: u32 = 160;

/// `hash.nodes`: points per provider. Below 4 Java builds an empty ring (and fails); 65,536 points per
/// provider is already far past any benefit.
pub const HASH_NODES: IntRange = IntRange {
    key: "hash.nodes",
    default: DEFAULT_HASH_NODES as i64,
    min: 4,
    max: 65_536,
};

/// The most points a ring holds, Envoy's default `maximum_ring_size` (8M points, 64 MiB here): past it,
/// every provider gets fewer points, equally (a multiple of 4, at least 4).
pub const MAX_RING_POINTS: usize = 8 << 20;

/// `hash.arguments` indexes at or past this are ignored: a Java method has at most 255 parameters.
const MAX_ARGUMENT_INDEX: usize = 255;

/// Points per provider for a ring of `providers`, within [`MAX_RING_POINTS`].
fn ring_nodes(nodes: u32, providers: usize) -> u32 {
    let fitting = MAX_RING_POINTS / providers.max(1);
    if (nodes as usize) <= fitting {
        return nodes;
    }
    let capped = ((fitting / 4) * 4).max(4) as u32;
    warn_once(
        "hash.nodes",
        &format!("{nodes}x{providers}"),
        format_args!(
            "hash.nodes={nodes} for {providers} providers exceeds the ring cap of {MAX_RING_POINTS} points; using {capped} per provider"
        ),
    );
    capped
}

/// The argument indexes of `hash.arguments` (`"0,2"`); entries that are not indexes are ignored, each
/// warned about once.
fn argument_indexes(arguments: &str) -> Box<[usize]> {
    arguments
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .filter_map(|s| match s.parse::<usize>() {
            Ok(i) if i < MAX_ARGUMENT_INDEX => Some(i),
            _ => {
                warn_once(
                    "hash.arguments",
                    s,
                    format_args!(
                        "ignoring hash.arguments entry {s:?}: not an index 0..{MAX_ARGUMENT_INDEX}"
                    ),
                );
                None
            }
        })
        .take(MAX_ARGUMENT_INDEX)
        .collect()
}

/// Consistent hashing over an MD5 ketama ring.
///
/// ```
/// use rudder_cluster::loadbalance::consistent_hash::ConsistentHash;
/// let policy = ConsistentHash::default();
/// ```
#[derive(Debug, Default)]
pub struct ConsistentHash;

/// The ring of one view: points sorted ascending, each with the index of the provider that owns it.
#[derive(Debug)]
struct Ring {
    points: Box<[(u32, u32)]>,
    argument_indexes: Box<[usize]>,
    /// `hash.balance-factor`: `None` is Dubbo's ring.
    balance_factor: Option<BalanceFactor>,
}

impl Ring {
    fn build(view: &MethodView) -> Ring {
        let first = view.providers().first().map(|p| p.url());
        let nodes = first.map_or(DEFAULT_HASH_NODES, |u| {
            HASH_NODES.method_value(u, view.method()) as u32
        });
        let nodes = ring_nodes(nodes, view.len());
        let arguments = first
            .and_then(|u| u.method_parameter(view.method(), "hash.arguments"))
            .unwrap_or("0");
        let argument_indexes = argument_indexes(arguments);
        let balance_factor = first.and_then(|u| BalanceFactor::read(u, view.method()));
        let mut points = Vec::with_capacity(view.len() * nodes as usize);
        let mut seed = String::new();
        for (index, provider) in view.providers().iter().enumerate() {
            for i in 0..nodes / 4 {
                seed.clear();
                let _ = write!(seed, "{}{i}", provider.address());
                let digest = Md5::digest(seed.as_bytes());
                for group in digest.chunks_exact(4) {
                    let point = u32::from_le_bytes([group[0], group[1], group[2], group[3]]);
                    points.push((point, index as u32));
                }
            }
        }
        // A stable sort keeps insertion order among equal points; keeping the last of each run is
        // `TreeMap.put` overwriting an earlier provider's point.
        points.sort_by_key(|&(point, _)| point);
        let mut ring: Vec<(u32, u32)> = Vec::with_capacity(points.len());
        for entry in points {
            match ring.last_mut() {
                Some(last) if last.0 == entry.0 => *last = entry,
                _ => ring.push(entry),
            }
        }
        Ring {
            points: ring.into(),
            argument_indexes,
            balance_factor,
        }
    }

    fn key_hash(&self, invocation: &Invocation) -> u32 {
        let args = invocation.hash_arguments();
        let mut hasher = Md5Writer(Md5::new());
        for &i in self.argument_indexes.iter() {
            if let Some(arg) = args.get(i) {
                let _ = write_java_string(&mut hasher, arg);
            }
        }
        let digest = hasher.0.finalize();
        u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]])
    }
}

/// Feeds text straight into MD5, so the key is never materialised.
struct Md5Writer(Md5);

impl fmt::Write for Md5Writer {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.update(s.as_bytes());
        Ok(())
    }
}

/// The request hash Dubbo computes for a key string: the first four MD5 bytes, little-endian.
///
/// ```
/// use rudder_cluster::loadbalance::consistent_hash::key_hash;
/// assert_eq!(key_hash(""), 0xd98c1dd4);
/// ```
pub fn key_hash(key: &str) -> u32 {
    let digest = Md5::digest(key.as_bytes());
    u32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]])
}

impl LoadBalance for ConsistentHash {
    fn pick(
        &self,
        view: &MethodView,
        invocation: &Invocation,
        pick: &Pick<'_>,
        _: &mut dyn PickRng,
    ) -> Option<usize> {
        view.with_state(StateKey::of::<Ring>(), Ring::build, |ring| {
            ring.pick(view, invocation, pick)
        })
    }

    fn prepare(&self, view: &MethodView) {
        // Any instance builds the same ring from the same view, so the ring is filed under its type.
        view.with_state(StateKey::of::<Ring>(), Ring::build, |_| ());
    }
}

impl Ring {
    fn pick(&self, view: &MethodView, invocation: &Invocation, pick: &Pick<'_>) -> Option<usize> {
        let ring = self;
        let len = ring.points.len();
        if len == 0 {
            return None;
        }
        let hash = ring.key_hash(invocation);
        let start = ring.points.partition_point(|&(point, _)| point < hash);
        if let Some(factor) = ring.balance_factor {
            return bounded_load::walk(&ring.points, start, factor, view, pick);
        }
        // Walk on from the owner past providers already tried; without exclusions this is one step.
        (0..len)
            .map(|step| ring.points[(start + step) % len].1 as usize)
            .find(|&index| pick.allows(view, index))
    }
}
