//! Which registry URLs concern this consumer: Dubbo's `UrlUtils.isMatch`, plus the protocol filter and the
//! enabled/disabled test of `RegistryDirectory`.
//!
//! `isMatch(consumer, url)` holds when the interfaces are equal (or either is `*`), the URL's category is
//! one the consumer subscribes to, the URL is not `enabled=false`, the consumer group is `*`, equal to the
//! URL's group or a comma list containing it, and the consumer version is `*` or equal. An absent and an
//! empty group (or version) are treated alike; Java tells `null` from `""` only for hand-written URLs.
//!
//! After configurators, `RegistryDirectory.toInvokers` drops URLs whose protocol the consumer did not ask
//! for (or cannot speak) and, in `refreshInvoker`, those with `disabled=true` (or `enabled=false` when
//! `disabled` is absent).

use rudder_common::url::DubboUrl;

use crate::consumer::ConsumerSpec;

/// The protocols rudder can call, accepted when the consumer names none: dubbo:// and Triple (`tri`),
/// as a Java consumer uses both for one interface. (A consumer built without Triple support names
/// `dubbo` itself.)
pub const CALLABLE_PROTOCOLS: &[&str] = &["dubbo", "tri"];

/// The categories a consumer subscribes to (`providers,configurators,routers`).
const SUBSCRIBED_CATEGORIES: &[&str] = &["providers", "configurators", "routers"];

/// The consumer side of matching, precomputed once per subscription.
#[derive(Debug, Clone)]
pub struct Matcher {
    interface: String,
    version: Option<String>,
    group: Option<String>,
    protocols: Vec<String>,
}

impl Matcher {
    /// The matcher for `spec`.
    pub fn new(spec: &ConsumerSpec) -> Matcher {
        let clean = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let protocols = match clean(&spec.protocol) {
            Some(list) => split_list(&list).map(str::to_owned).collect(),
            None => CALLABLE_PROTOCOLS.iter().map(|p| (*p).to_owned()).collect(),
        };
        Matcher {
            interface: spec.interface.trim().to_owned(),
            version: clean(&spec.version),
            group: clean(&spec.group),
            protocols,
        }
    }

    /// Dubbo's `UrlUtils.isMatch(consumer, url)`.
    pub fn is_match(&self, url: &DubboUrl) -> bool {
        let interface = url.service_interface();
        if !(self.interface == "*" || interface == "*" || interface == self.interface) {
            return false;
        }
        let category = nonempty(url.parameter("category")).unwrap_or("providers");
        if !SUBSCRIBED_CATEGORIES.contains(&category) {
            return false;
        }
        if !java_boolean(url.parameter("enabled"), true) {
            return false;
        }
        let group = nonempty(url.parameter("group"));
        let group_matches = match self.group.as_deref() {
            Some("*") => true,
            Some(wanted) => {
                group == Some(wanted) || group.is_some_and(|g| split_list(wanted).any(|w| w == g))
            }
            None => group.is_none(),
        };
        let version = nonempty(url.parameter("version"));
        let version_matches = match self.version.as_deref() {
            Some("*") => true,
            wanted => version == wanted,
        };
        group_matches && version_matches
    }

    /// Whether a provider speaking `protocol` may be called (consumer `protocol` list, else dubbo/tri).
    pub fn accepts_protocol(&self, protocol: &str) -> bool {
        self.protocols.iter().any(|p| p == protocol)
    }
}

/// `RegistryDirectory.refreshInvoker`'s test on a configured provider URL.
pub fn is_disabled(url: &DubboUrl) -> bool {
    match url.parameter("disabled") {
        Some(disabled) => java_boolean(Some(disabled), false),
        None => !java_boolean(url.parameter("enabled"), true),
    }
}

/// `URL.getParameter(key, boolean)`: empty or absent gives `default`, otherwise `Boolean.parseBoolean`
/// (only a case-insensitive `true` is true).
pub(crate) fn java_boolean(value: Option<&str>, default: bool) -> bool {
    match value {
        None | Some("") => default,
        Some(v) => v.eq_ignore_ascii_case("true"),
    }
}

/// Dubbo's `COMMA_SPLIT_PATTERN` (`\s*[,]+\s*`): commas with surrounding blanks, empty items dropped.
fn split_list(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|s| !s.is_empty())
}

fn nonempty(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> DubboUrl {
        DubboUrl::parse(s).unwrap()
    }

    #[test]
    fn interface_must_be_equal_or_star() {
        let m = Matcher::new(&ConsumerSpec::new("S"));
        assert!(m.is_match(&url("dubbo://h:1/S")));
        assert!(m.is_match(&url("dubbo://h:1/x?interface=S")));
        assert!(!m.is_match(&url("dubbo://h:1/T")));
        assert!(m.is_match(&url("override://0.0.0.0/*")));
        assert!(Matcher::new(&ConsumerSpec::new("*")).is_match(&url("dubbo://h:1/T")));
    }

    #[test]
    fn version_is_exact_or_star() {
        let plain = Matcher::new(&ConsumerSpec::new("S"));
        let v1 = Matcher::new(&ConsumerSpec::new("S").version("1.0"));
        let any = Matcher::new(&ConsumerSpec::new("S").version("*"));
        assert!(plain.is_match(&url("dubbo://h:1/S?version=")));
        assert!(!plain.is_match(&url("dubbo://h:1/S?version=1.0")));
        assert!(v1.is_match(&url("dubbo://h:1/S?version=1.0")));
        assert!(!v1.is_match(&url("dubbo://h:1/S?version=1.0.0")));
        assert!(!v1.is_match(&url("dubbo://h:1/S")));
        assert!(any.is_match(&url("dubbo://h:1/S?version=2")));
        assert!(any.is_match(&url("dubbo://h:1/S")));
    }

    #[test]
    fn group_is_exact_star_or_in_comma_list() {
        let list = Matcher::new(&ConsumerSpec::new("S").group("a , b"));
        assert!(list.is_match(&url("dubbo://h:1/S?group=a")));
        assert!(list.is_match(&url("dubbo://h:1/S?group=b")));
        assert!(!list.is_match(&url("dubbo://h:1/S?group=c")));
        assert!(!list.is_match(&url("dubbo://h:1/S")));
        let none = Matcher::new(&ConsumerSpec::new("S"));
        assert!(!none.is_match(&url("dubbo://h:1/S?group=a")));
        let any = Matcher::new(&ConsumerSpec::new("S").group("*"));
        assert!(any.is_match(&url("dubbo://h:1/S?group=a")));
        assert!(any.is_match(&url("dubbo://h:1/S")));
    }

    #[test]
    fn enabled_false_and_foreign_categories_do_not_match() {
        let m = Matcher::new(&ConsumerSpec::new("S"));
        assert!(!m.is_match(&url("dubbo://h:1/S?enabled=false")));
        assert!(!m.is_match(&url("dubbo://h:1/S?enabled=no")));
        assert!(m.is_match(&url("dubbo://h:1/S?enabled=TRUE")));
        assert!(!m.is_match(&url("dubbo://h:1/S?category=consumers")));
        assert!(m.is_match(&url("override://0.0.0.0/S?category=configurators")));
    }

    #[test]
    fn protocols_default_to_what_rudder_calls() {
        let m = Matcher::new(&ConsumerSpec::new("S"));
        assert!(m.accepts_protocol("dubbo") && m.accepts_protocol("tri"));
        assert!(!m.accepts_protocol("rest") && !m.accepts_protocol("empty"));
        let tri = Matcher::new(&ConsumerSpec::new("S").protocol("tri"));
        assert!(!tri.accepts_protocol("dubbo") && tri.accepts_protocol("tri"));
    }

    #[test]
    fn disabled_wins_over_enabled() {
        assert!(is_disabled(&url(
            "dubbo://h:1/S?disabled=true&enabled=true"
        )));
        assert!(!is_disabled(&url(
            "dubbo://h:1/S?disabled=false&enabled=false"
        )));
        assert!(is_disabled(&url("dubbo://h:1/S?enabled=false")));
        assert!(!is_disabled(&url("dubbo://h:1/S")));
    }
}
