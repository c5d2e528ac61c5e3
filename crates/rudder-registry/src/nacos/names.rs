//! The node names of one subscription's instances, kept from list to list.
//!
//! Nacos sends a service's whole instance list on every change: a push for one instance that came
//! or went among 10,000 carries the other 9,999 again, byte for byte. Reading an instance's JSON,
//! building its provider URL and encoding that as a node name (`naming::provider_name`) is most of
//! what rudder would do with such a list, so an instance whose JSON is what it was keeps the name
//! made last time, and only the instances that changed are read and built. What is kept is a
//! 128-bit digest of each instance's JSON and its name: the list itself is not.
//!
//! The JSON is compared as sent: a server that sends an instance's metadata in another order has
//! changed it for this purpose, and it is read again (which gives the same name). Nothing but work
//! depends on a digest matching.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::nacos::hosts::{read_instance, HostList};
use crate::nacos::naming::provider_name;

/// The names of the last list, by digest.
#[derive(Debug, Default)]
pub(crate) struct InstanceNames {
    /// `None`: the instance is not a provider (disabled, no protocol, bad port, unreadable).
    last: HashMap<u128, Option<String>>,
}

impl InstanceNames {
    /// The child names of `list`'s instances, as [`provider_name`] makes them; what this list does
    /// not hold any more is forgotten.
    pub(crate) fn of(&mut self, list: &HostList) -> Vec<String> {
        let mut next = HashMap::with_capacity(list.len());
        let mut names = Vec::with_capacity(list.len());
        for raw in list.raw() {
            let digest = digest(raw);
            let name = match self.last.remove(&digest) {
                Some(name) => name,
                None => next
                    .get(&digest)
                    .cloned()
                    .unwrap_or_else(|| read_instance(raw).as_ref().and_then(provider_name)),
            };
            if let Some(name) = &name {
                names.push(name.clone());
            }
            next.insert(digest, name);
        }
        self.last = next;
        names
    }

    /// How many instances are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.last.len()
    }
}

/// A 128-bit digest of an instance's JSON: two SipHash lanes, one keyed apart from the other by a
/// leading byte, so that two different instances of a service sharing a digest is not a concern.
fn digest(raw: &[u8]) -> u128 {
    let lane = |salt: u8| {
        let mut hasher = DefaultHasher::new();
        salt.hash(&mut hasher);
        raw.hash(&mut hasher);
        hasher.finish()
    };
    (u128::from(lane(0)) << 64) | u128::from(lane(1))
}

/// Any bytes as the JSON of a Nacos push or a subscription's answer (the fuzz target
/// `nacos_push`, feature `fuzzing`): reading it never panics; the names made through the cache are
/// the names made from each instance afresh, the first time and again from the cache; the cache
/// never holds more entries than the list has instances.
/// (The unit tests run it over the target's seeds.)
#[cfg(any(test, feature = "fuzzing"))]
#[cfg_attr(not(feature = "fuzzing"), allow(unreachable_pub))]
pub fn check_push(data: &[u8]) {
    let Ok(listing) = crate::nacos::hosts::Listing::read(bytes::Bytes::copy_from_slice(data))
    else {
        return;
    };
    let Some((_, list)) = listing.list else {
        return;
    };
    let fresh: Vec<String> = list
        .raw()
        .filter_map(|raw| read_instance(raw).as_ref().and_then(provider_name))
        .collect();
    let mut names = InstanceNames::default();
    assert_eq!(names.of(&list), fresh);
    assert!(names.last.len() <= list.len());
    assert_eq!(names.of(&list), fresh, "from the cache");
    assert!(names
        .of(&crate::nacos::hosts::HostList::default())
        .is_empty());
    assert!(names.last.is_empty(), "an empty list forgets every name");
}

#[cfg(test)]
mod tests {
    use rudder_common::url::DubboUrl;
    use serde_json::{json, Value};

    use super::*;
    use crate::nacos::naming::url_instance;

    /// An instance's JSON as Nacos sends it.
    fn instance(port: u16, weight: &str) -> Value {
        let url = DubboUrl::parse(&format!(
            "dubbo://10.0.0.1:{port}/S?interface=S&weight={weight}"
        ))
        .unwrap();
        let instance = url_instance(&url, "providers");
        json!({
            "ip": instance.ip,
            "port": instance.port,
            "enabled": instance.enabled,
            "metadata": instance.metadata,
        })
    }

    fn fresh(list: &HostList) -> Vec<String> {
        list.instances().iter().filter_map(provider_name).collect()
    }

    #[test]
    fn an_unchanged_instance_keeps_its_name_and_a_changed_one_is_built_again() {
        let mut names = InstanceNames::default();
        let list = HostList::of(json!([instance(1, "100"), instance(2, "100")]));
        let first = names.of(&list);
        let expected = fresh(&list);
        assert_eq!(first.len(), 2);
        assert_eq!(first, expected);

        // The second instance reweighed, a third came: each name is what provider_name makes.
        let list = HostList::of(json!([
            instance(1, "100"),
            instance(2, "300"),
            instance(3, "100")
        ]));
        let second = names.of(&list);
        assert_eq!(second, fresh(&list));
        assert!(second[1].contains("weight%3D300"), "{}", second[1]);
        assert_eq!(names.len(), 3, "the old weight's entry is forgotten");

        // An instance disabled is no provider, enabled again it is one.
        let mut disabled = instance(1, "100");
        disabled["enabled"] = json!(false);
        assert_eq!(names.of(&HostList::of(json!([disabled]))).len(), 0);
        assert_eq!(
            names.of(&HostList::of(json!([instance(1, "100")]))),
            expected[..1]
        );
    }

    #[test]
    fn an_unreadable_instance_is_no_provider_and_the_others_are() {
        let mut names = InstanceNames::default();
        let list = HostList::of(json!([{"ip": [], "port": 1}, instance(2, "100")]));
        let got = names.of(&list);
        assert_eq!(got.len(), 1);
        assert!(got[0].contains("%3A2%2F"), "{}", got[0]);
        assert_eq!(
            names.len(),
            2,
            "the unreadable one is remembered as no provider"
        );
    }

    #[test]
    fn the_fuzz_seeds_keep_the_fuzz_target_s_promises() {
        let seeds = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/nacos_push");
        let mut checked = 0;
        for seed in std::fs::read_dir(seeds).unwrap() {
            let data = std::fs::read(seed.unwrap().path()).unwrap();
            check_push(&data);
            checked += 1;
        }
        assert!(checked >= 2, "{checked} seeds");
        let four = std::fs::read(format!("{seeds}/four-java-providers.json")).unwrap();
        let (_, list) = crate::nacos::hosts::Listing::read(bytes::Bytes::from(four))
            .unwrap()
            .list
            .unwrap();
        assert_eq!(InstanceNames::default().of(&list).len(), 4);
    }

    #[test]
    fn the_same_json_is_the_same_digest_and_any_change_is_another() {
        let a = instance(1, "100").to_string();
        assert_eq!(digest(a.as_bytes()), digest(a.clone().as_bytes()));
        let b = instance(1, "101").to_string();
        assert_ne!(digest(a.as_bytes()), digest(b.as_bytes()));
        let mut c = instance(1, "100");
        c["ip"] = json!("10.0.0.2");
        assert_ne!(digest(a.as_bytes()), digest(c.to_string().as_bytes()));
        // The metadata in another order: another digest, the same name once read.
        let mut names = InstanceNames::default();
        let mut metadata: Vec<(String, Value)> = instance(1, "100")["metadata"]
            .as_object()
            .unwrap()
            .clone()
            .into_iter()
            .collect();
        let forward = names.of(&HostList::of(json!([instance(1, "100")])));
        metadata.reverse();
        let reversed = format!(
            r#"[{{"ip":"10.0.0.1","port":1,"enabled":true,"metadata":{{{}}}}}]"#,
            metadata
                .iter()
                .map(|(k, v)| format!("{}:{v}", Value::from(k.as_str())))
                .collect::<Vec<_>>()
                .join(",")
        );
        let backward = names.of(&HostList::of(&reversed));
        assert_ne!(
            digest(HostList::of(&reversed).raw().next().unwrap()),
            digest(instance(1, "100").to_string().as_bytes())
        );
        assert_eq!(forward, backward);
    }
}
