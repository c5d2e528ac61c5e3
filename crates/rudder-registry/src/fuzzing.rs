//! Entry points for the fuzz targets (feature `fuzzing`): each takes any bytes and panics only when
//! a promise of the code it drives is broken. Not a stable API: only the targets in `fuzz/` call it.

use std::collections::BTreeMap;

use rudder_common::discovery::Change;
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::{java_url_encode, DubboUrl};

use crate::catalog::Catalog;
use crate::configurator::ConsumerSide;
use crate::junk::REMEMBERED;
use crate::ConsumerSpec;

pub use crate::instance::fuzzing::check_app_level;
pub use crate::nacos::{check_answer, check_push};

/// What a sink holds: full URL string to how many times it was inserted.
type Held = BTreeMap<String, usize>;

fn held(urls: &[DubboUrl]) -> Held {
    let mut held = Held::new();
    for url in urls {
        *held.entry(url.to_full_string()).or_default() += 1;
    }
    held
}

fn spec(line: &str) -> ConsumerSpec {
    let mut parts = line.split('|');
    let mut next = || parts.next().map(str::trim).filter(|p| !p.is_empty());
    let mut spec = ConsumerSpec::new(next().unwrap_or("S")).application("shop");
    if let Some(version) = next() {
        spec = spec.version(version);
    }
    if let Some(group) = next() {
        spec = spec.group(group);
    }
    if let Some(protocol) = next() {
        spec = spec.protocol(protocol);
    }
    if let Some(params) = next() {
        if let Ok(url) = DubboUrl::parse(&format!("consumer://10.0.0.9/S?{params}")) {
            spec = spec.parameters(ConsumerParams::new(&url));
        }
    }
    spec
}

/// Arbitrary child lists for providers and configurators fed through the catalog: no panic, output
/// bounded by the input, and the deltas a sink is given always add up to the full list.
///
/// Input, line by line (lossy UTF-8):
/// * line 1, the consumer: `interface|version|group|protocol|k=v&k=v` (any part may be empty or
///   missing; the interface defaults to `S`);
/// * `p<name>`: a provider child name as ZooKeeper lists it; `P<url>`: a plain URL, listed encoded;
/// * `c<name>` / `C<url>`: the same for configurators;
/// * `l`: a listing: the configurators then the providers gathered since the last `l` are set, as the
///   subscription task does it (a full list when the rules changed, otherwise a delta).
pub fn check_catalog(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let spec = spec(lines.next().unwrap_or(""));
    let params_len = spec
        .parameters
        .iter()
        .map(|(k, v)| k.len() + v.len() + 2)
        .sum::<usize>();
    let side = ConsumerSide {
        host: "10.0.0.9".into(),
        application: "shop".into(),
    };
    let mut catalog = Catalog::new(&spec, side);
    let mut sink = Held::new();
    let mut fed_once = false;
    let (mut providers, mut rules) = (Vec::new(), Vec::new());
    for line in lines {
        let mut chars = line.chars();
        let Some(kind) = chars.next() else { continue };
        let rest = chars.as_str();
        match kind {
            'p' => providers.push(rest.to_owned()),
            'P' => providers.push(java_url_encode(rest)),
            'c' => rules.push(rest.to_owned()),
            'C' => rules.push(java_url_encode(rest)),
            'l' => {
                let longest = providers.iter().map(String::len).max().unwrap_or(0);
                let rules_len: usize = rules.iter().map(String::len).sum();
                let mut distinct = providers.clone();
                distinct.sort_unstable();
                distinct.dedup();
                let rules_changed = catalog.set_configurators(std::mem::take(&mut rules));
                let delta = catalog.set_providers(std::mem::take(&mut providers));
                let full = catalog.provider_urls();
                if !fed_once || rules_changed {
                    fed_once = true;
                    sink = held(&full);
                } else {
                    for change in catalog.changes(&delta) {
                        match change {
                            Change::Remove(url) => {
                                let key = url.to_full_string();
                                let count = sink.get_mut(&key).unwrap_or_else(|| {
                                    panic!("removal of a URL never inserted: {key}")
                                });
                                *count -= 1;
                                if *count == 0 {
                                    sink.remove(&key);
                                }
                            }
                            Change::Insert(url) => {
                                *sink.entry(url.to_full_string()).or_default() += 1
                            }
                        }
                    }
                }
                assert_eq!(
                    sink,
                    held(&full),
                    "the deltas do not add up to the full list"
                );
                assert!(full.len() <= distinct.len());
                for url in &full {
                    // A provider's own text (decoded, so no longer than its name, but a bare `k` is
                    // written `k=k`), its application again as remote.application, and the
                    // consumer's and the rules' parameters (bare keys doubled too): linear, never more.
                    let bound = 3 * longest + 2 * rules_len + 2 * params_len + 64;
                    assert!(
                        url.to_full_string().len() <= bound,
                        "{} > {bound}",
                        url.to_full_string().len()
                    );
                }
                assert!(catalog.malformed() <= REMEMBERED as u64);
                assert!(catalog.configurators().len() <= rules_len);
            }
            _ => {}
        }
    }
}
