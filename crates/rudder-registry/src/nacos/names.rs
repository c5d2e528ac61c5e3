//! The node names of one subscription's instances, kept from list to list.
//!
//! Nacos sends a service's whole instance list on every change: a push for one instance that came
//! or went among 10,000 carries the other 9,999 again. Building an instance's provider URL and
//! encoding it as a node name (`naming::provider_name`) is most of what rudder does with a list, so
//! an instance whose address and metadata are what they were keeps the name made last time and only
//! the instances that changed are built again. What is kept is a 128-bit digest of each instance
//! (address, port, `enabled` and its metadata, in any order) and its name: the list itself is not.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use nacos_sdk::api::naming::ServiceInstance;

use crate::nacos::naming::provider_name;

/// The names of the last list, by digest.
#[derive(Debug, Default)]
pub(crate) struct InstanceNames {
    /// `None`: the instance is not a provider (disabled, no protocol, bad port).
    last: HashMap<u128, Option<String>>,
}

impl InstanceNames {
    /// The child names of `instances`, as [`provider_name`] makes them; what this list does not hold
    /// any more is forgotten.
    pub(crate) fn of(&mut self, instances: &[ServiceInstance]) -> Vec<String> {
        let mut next = HashMap::with_capacity(instances.len());
        let mut names = Vec::with_capacity(instances.len());
        for instance in instances {
            let digest = digest(instance);
            let name = match self.last.remove(&digest) {
                Some(name) => name,
                None => next
                    .get(&digest)
                    .cloned()
                    .unwrap_or_else(|| provider_name(instance)),
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

/// A 128-bit digest of what a name is made of: two SipHash lanes, one keyed apart from the other by
/// a leading byte, so that two different instances of a service sharing a digest is not a concern.
/// The metadata's entries are hashed one by one and added up, which makes their order not matter
/// without sorting them.
fn digest(instance: &ServiceInstance) -> u128 {
    let lane = |salt: u8| {
        let mut entries = 0_u64;
        for (key, value) in &instance.metadata {
            let mut hasher = DefaultHasher::new();
            salt.hash(&mut hasher);
            key.hash(&mut hasher);
            value.hash(&mut hasher);
            entries = entries.wrapping_add(hasher.finish());
        }
        let mut hasher = DefaultHasher::new();
        salt.hash(&mut hasher);
        instance.ip.hash(&mut hasher);
        instance.port.hash(&mut hasher);
        instance.enabled.hash(&mut hasher);
        entries.hash(&mut hasher);
        hasher.finish()
    };
    (u128::from(lane(0)) << 64) | u128::from(lane(1))
}

#[cfg(test)]
mod tests {
    use rudder_common::url::DubboUrl;

    use super::*;
    use crate::nacos::naming::url_instance;

    fn instance(port: u16, weight: &str) -> ServiceInstance {
        let url = DubboUrl::parse(&format!(
            "dubbo://10.0.0.1:{port}/S?interface=S&weight={weight}"
        ))
        .unwrap();
        url_instance(&url, "providers")
    }

    #[test]
    fn an_unchanged_instance_keeps_its_name_and_a_changed_one_is_built_again() {
        let mut names = InstanceNames::default();
        let first = names.of(&[instance(1, "100"), instance(2, "100")]);
        let expected: Vec<String> = [instance(1, "100"), instance(2, "100")]
            .iter()
            .filter_map(provider_name)
            .collect();
        assert_eq!(first, expected);

        // The second instance reweighed, a third came: each name is what provider_name makes.
        let list = [instance(1, "100"), instance(2, "300"), instance(3, "100")];
        let second = names.of(&list);
        let fresh: Vec<String> = list.iter().filter_map(provider_name).collect();
        assert_eq!(second, fresh);
        assert!(second[1].contains("weight%3D300"), "{}", second[1]);
        assert_eq!(names.len(), 3, "the old weight's entry is forgotten");

        // An instance disabled is no provider, enabled again it is one.
        let mut disabled = instance(1, "100");
        disabled.enabled = false;
        assert_eq!(names.of(&[disabled]).len(), 0);
        assert_eq!(names.of(&[instance(1, "100")]), expected[..1]);
    }

    #[test]
    fn metadata_order_does_not_matter_and_any_value_does() {
        let a = instance(1, "100");
        let mut b = ServiceInstance {
            metadata: HashMap::new(),
            ..a.clone()
        };
        // Inserted in the reverse order.
        let mut entries: Vec<_> = a.metadata.iter().collect();
        entries.sort();
        for (k, v) in entries.into_iter().rev() {
            b.metadata.insert(k.clone(), v.clone());
        }
        assert_eq!(digest(&a), digest(&b));
        b.metadata.insert("timeout".into(), "1".into());
        assert_ne!(digest(&a), digest(&b));
        // A value moved to another key is another instance.
        let mut swapped = a.clone();
        swapped.metadata.insert("weight".into(), "S".into());
        swapped.metadata.insert("interface".into(), "100".into());
        assert_ne!(digest(&a), digest(&swapped));
        let mut c = a.clone();
        c.ip = "10.0.0.2".into();
        assert_ne!(digest(&a), digest(&c));
    }
}
