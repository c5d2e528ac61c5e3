//! The parameter store of a [`DubboUrl`](super::DubboUrl): sorted, unique keys, looked up without allocating.

use std::cmp::Ordering;

/// URL parameters sorted by key (the order Dubbo's `toFullString` writes), last value wins.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Params {
    pairs: Vec<(Box<str>, Box<str>)>,
}

impl Params {
    /// Builds from pairs in input order; a later duplicate key replaces an earlier one.
    pub(crate) fn from_pairs(mut pairs: Vec<(Box<str>, Box<str>)>) -> Params {
        // Stable sort keeps input order among equal keys, so keeping the last of each run is "last wins".
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut unique: Vec<(Box<str>, Box<str>)> = Vec::with_capacity(pairs.len());
        for pair in pairs {
            match unique.last_mut() {
                Some(last) if last.0 == pair.0 => *last = pair,
                _ => unique.push(pair),
            }
        }
        Params { pairs: unique }
    }

    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.find(|k| k.cmp(key))
    }

    /// Looks up `<prefix>.<key>` without building the joined string.
    pub(crate) fn get_dotted(&self, prefix: &str, key: &str) -> Option<&str> {
        self.find(|k| cmp_dotted(k, prefix, key))
    }

    fn find(&self, cmp: impl Fn(&str) -> Ordering) -> Option<&str> {
        self.pairs
            .binary_search_by(|(k, _)| cmp(k))
            .ok()
            .map(|i| &*self.pairs[i].1)
    }

    pub(crate) fn set(&mut self, key: &str, value: &str) {
        match self.pairs.binary_search_by(|(k, _)| (**k).cmp(key)) {
            Ok(i) => self.pairs[i].1 = value.into(),
            Err(i) => self.pairs.insert(i, (key.into(), value.into())),
        }
    }

    pub(crate) fn remove(&mut self, key: &str) -> Option<Box<str>> {
        let i = self.pairs.binary_search_by(|(k, _)| (**k).cmp(key)).ok()?;
        Some(self.pairs.remove(i).1)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.pairs.iter().map(|(k, v)| (&**k, &**v))
    }

    pub(crate) fn len(&self) -> usize {
        self.pairs.len()
    }
}

/// Compares `stored` with the string `prefix + "." + key`, byte by byte.
fn cmp_dotted(stored: &str, prefix: &str, key: &str) -> Ordering {
    let joined = prefix
        .bytes()
        .chain(std::iter::once(b'.'))
        .chain(key.bytes());
    stored.bytes().cmp(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_lookup_matches_joined_lookup() {
        let p = Params::from_pairs(vec![
            ("sayHello.weight".into(), "5".into()),
            ("sayHello".into(), "x".into()),
            ("say.Hello.weight".into(), "7".into()),
            ("weight".into(), "9".into()),
        ]);
        assert_eq!(p.get_dotted("sayHello", "weight"), Some("5"));
        assert_eq!(p.get_dotted("say", "Hello.weight"), Some("7"));
        assert_eq!(p.get_dotted("sayHello", "timeout"), None);
        assert_eq!(p.get("weight"), Some("9"));
    }

    #[test]
    fn set_and_remove_keep_order() {
        let mut p = Params::from_pairs(vec![("b".into(), "1".into())]);
        p.set("a", "0");
        p.set("b", "2");
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![("a", "0"), ("b", "2")]);
        assert_eq!(p.remove("a").as_deref(), Some("0"));
        assert_eq!(p.len(), 1);
    }
}
