//! What the registry says about a service, for answers instead of retries: the methods its providers
//! list (`methods=`), the overloads of the metadata report (Dubbo's `FullServiceDefinition`), and which
//! versions and groups exist when nobody provides the one asked for.

use std::collections::BTreeSet;

use anyhow::{bail, Result};
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::url::DubboUrl;
use rudder_registry::ServiceDefinition;
use serde_json::Value as Json;

/// Dubbo's built-in `$echo` (EchoFilter) and generic calls exist on every service.
const BUILT_IN: [&str; 3] = ["$echo", "$invoke", "$invokeAsync"];

/// The methods the providers list, sorted; `None` when some provider lists none (nothing to check).
pub(crate) fn listed_methods<'a>(
    urls: impl IntoIterator<Item = &'a DubboUrl>,
) -> Option<Vec<String>> {
    let mut methods = BTreeSet::new();
    let mut any = false;
    for url in urls {
        any = true;
        let listed = url.parameter("methods").filter(|m| !m.trim().is_empty())?;
        methods.extend(
            listed
                .split(',')
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(str::to_owned),
        );
    }
    any.then(|| methods.into_iter().collect())
}

/// Refuses a method none of the providers lists, naming the methods the service has.
pub(crate) fn check_method<'a>(
    interface: &str,
    method: &str,
    urls: impl IntoIterator<Item = &'a DubboUrl>,
) -> Result<(), RpcError> {
    if BUILT_IN.contains(&method) {
        return Ok(());
    }
    match listed_methods(urls) {
        Some(methods) if !methods.iter().any(|m| m == method) => Err(RpcError::new(
            RpcErrorKind::MethodNotFound,
            format!(
                "{interface} has no method {method}; its providers list: {}",
                methods.join(", ")
            ),
        )),
        _ => Ok(()),
    }
}

/// One method signature from the metadata report.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Overload {
    pub(crate) name: String,
    pub(crate) parameter_types: Vec<String>,
    pub(crate) return_type: Option<String>,
}

impl Overload {
    /// `name(T1, T2)`.
    pub(crate) fn signature(&self) -> String {
        format!("{}({})", self.name, self.parameter_types.join(", "))
    }
}

/// Every distinct method signature of the definitions, sorted by name then parameter types; a
/// definition that is not the JSON Dubbo writes is skipped.
pub(crate) fn overloads(definitions: &[ServiceDefinition]) -> Vec<Overload> {
    overloads_of(definitions.iter().map(|d| d.text.as_str()))
}

/// [`overloads`] of definition texts.
fn overloads_of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<Overload> {
    let mut all = BTreeSet::new();
    for text in texts {
        let Ok(json) = serde_json::from_str::<Json>(text) else {
            tracing::debug!("a service definition is not JSON; skipped");
            continue;
        };
        let Some(methods) = json.get("methods").and_then(Json::as_array) else {
            continue;
        };
        for method in methods {
            let Some(name) = method.get("name").and_then(Json::as_str) else {
                continue;
            };
            let parameter_types = method
                .get("parameterTypes")
                .and_then(Json::as_array)
                .map(|types| {
                    types
                        .iter()
                        .filter_map(Json::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            all.insert(Overload {
                name: name.to_owned(),
                parameter_types,
                return_type: method
                    .get("returnType")
                    .and_then(Json::as_str)
                    .map(str::to_owned),
            });
        }
    }
    all.into_iter().collect()
}

/// The parameter types to call `method` with, given its overloads in the metadata: the given
/// `--types` when an overload has exactly them, else the one overload the JSON arguments fit.
/// `Ok(None)` when the metadata has no overload of `method` (nothing known to check).
///
/// # Errors
/// When the arguments fit no overload, or several (the message lists them and asks for `--types`).
pub(crate) fn choose_types(
    method: &str,
    overloads: &[Overload],
    given: Option<&[String]>,
    arguments: &[Json],
) -> Result<Option<Vec<String>>> {
    let candidates: Vec<&Overload> = overloads.iter().filter(|o| o.name == method).collect();
    if candidates.is_empty() {
        return Ok(None);
    }
    let listing = || {
        candidates
            .iter()
            .map(|o| o.signature())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(given) = given {
        if candidates.iter().any(|o| o.parameter_types == given) {
            return Ok(Some(given.to_vec()));
        }
        bail!(
            "no overload of {method} takes ({}); the service has: {}",
            given.join(", "),
            listing()
        );
    }
    let fitting: Vec<&&Overload> = candidates
        .iter()
        .filter(|o| {
            o.parameter_types.len() == arguments.len()
                && o.parameter_types
                    .iter()
                    .zip(arguments)
                    .all(|(t, a)| fits(t, a))
        })
        .collect();
    match fitting.as_slice() {
        [one] => Ok(Some(one.parameter_types.clone())),
        [] => bail!(
            "the arguments {} fit no overload of {method}; the service has: {}",
            Json::Array(arguments.to_vec()),
            listing()
        ),
        several => bail!(
            "the arguments fit several overloads of {method} ({}): choose one with --types",
            several
                .iter()
                .map(|o| o.signature())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Whether a JSON argument can be sent as a Java parameter of `java_type` (generously: a string may be
/// an enum, a `BigDecimal` or a `java.time` value; an object any class).
pub(crate) fn fits(java_type: &str, json: &Json) -> bool {
    const INTEGRAL: [&str; 8] = [
        "int",
        "long",
        "short",
        "byte",
        "java.lang.Integer",
        "java.lang.Long",
        "java.lang.Short",
        "java.lang.Byte",
    ];
    const DECIMAL: [&str; 4] = ["double", "float", "java.lang.Double", "java.lang.Float"];
    const NUMBERS: [&str; 4] = [
        "java.lang.Number",
        "java.math.BigDecimal",
        "java.math.BigInteger",
        "java.lang.Object",
    ];
    let primitive = matches!(
        java_type,
        "int" | "long" | "short" | "byte" | "double" | "float" | "boolean" | "char"
    );
    // java.util.Date is a value (ISO-8601 text or epoch milliseconds), not a collection.
    let date = java_type == "java.util.Date";
    let collection = java_type.ends_with("[]")
        || java_type.starts_with('[')
        || (java_type.starts_with("java.util.") && !date)
        || java_type == "java.lang.Object";
    match json {
        Json::Null => !primitive,
        Json::Bool(_) => matches!(
            java_type,
            "boolean" | "java.lang.Boolean" | "java.lang.Object"
        ),
        Json::Number(n) if n.is_i64() || n.is_u64() => {
            INTEGRAL.contains(&java_type)
                || DECIMAL.contains(&java_type)
                || NUMBERS.contains(&java_type)
                || date
        }
        Json::Number(_) => DECIMAL.contains(&java_type) || NUMBERS.contains(&java_type),
        Json::String(s) => match java_type {
            "char" | "java.lang.Character" => s.chars().count() == 1,
            t if primitive || INTEGRAL.contains(&t) || DECIMAL.contains(&t) => false,
            "java.lang.Boolean" => false,
            t => {
                date || (!t.starts_with("java.util.") && !t.ends_with("[]") && !t.starts_with('['))
            }
        },
        Json::Array(_) => collection,
        Json::Object(_) => {
            let scalar = primitive
                || matches!(java_type, "java.lang.String" | "java.lang.Character")
                || INTEGRAL.contains(&java_type)
                || DECIMAL.contains(&java_type);
            let list = java_type.ends_with("[]")
                || java_type.starts_with('[')
                || matches!(
                    java_type,
                    "java.util.List" | "java.util.Collection" | "java.util.Set"
                );
            !scalar && !list
        }
    }
}

/// Why no provider of `interface` matches the `version` and `group` asked for, from every provider
/// the registry lists for it (`all`, any version or group): which versions, or which groups of that
/// version, exist. `None` when some provider does match (it was left out for another reason).
pub(crate) fn missing_version_or_group(
    interface: &str,
    version: Option<&str>,
    group: Option<&str>,
    all: &[DubboUrl],
) -> Option<String> {
    if all.is_empty() {
        return Some(format!("nobody provides {interface} in the registry"));
    }
    let version = version.map(str::trim).filter(|v| !v.is_empty());
    let group = group.map(str::trim).filter(|g| !g.is_empty());
    let of = |url: &DubboUrl, key: &str| url.parameter(key).unwrap_or("").trim().to_owned();
    let seen = |urls: &[&DubboUrl], key: &str| {
        let values: BTreeSet<String> = urls.iter().map(|u| of(u, key)).collect();
        values
            .into_iter()
            .map(|v| if v.is_empty() { "(none)".to_owned() } else { v })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let with_version: Vec<&DubboUrl> = all
        .iter()
        .filter(|u| version.is_none_or(|v| v == "*" || of(u, "version") == v))
        .filter(|u| version.is_some() || of(u, "version").is_empty())
        .collect();
    let count = |n: usize| {
        if n == 1 {
            "the 1 provider".to_owned()
        } else {
            format!("the {n} providers")
        }
    };
    if with_version.is_empty() {
        let all_refs: Vec<&DubboUrl> = all.iter().collect();
        return Some(match version {
            Some(v) => format!(
                "none of {} of {interface} has version {v}; seen: {}",
                count(all.len()),
                seen(&all_refs, "version")
            ),
            // A Dubbo consumer without a version finds only providers without one.
            None => format!(
                "none of {} of {interface} is without a version, and no --version was given; \
                 seen: {} (give --version, `*` for any)",
                count(all.len()),
                seen(&all_refs, "version")
            ),
        });
    }
    let group_matches = |u: &DubboUrl| {
        let provider = of(u, "group");
        match group {
            None => provider.is_empty(),
            Some("*") => true,
            Some(wanted) => wanted.split(',').any(|g| g.trim() == provider),
        }
    };
    if !with_version.iter().any(|u| group_matches(u)) {
        let of_version = version.map_or(String::new(), |v| format!(" version {v}"));
        return Some(match group {
            Some(g) => format!(
                "none of {} of {interface}{of_version} has group {g}; seen: {}",
                count(with_version.len()),
                seen(&with_version, "group")
            ),
            None => format!(
                "none of {} of {interface}{of_version} is without a group, and no --group was \
                 given; seen: {} (give --group, `*` for any)",
                count(with_version.len()),
                seen(&with_version, "group")
            ),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_fits_as_text_or_epoch_millis_not_as_a_collection() {
        let j = |s: &str| serde_json::from_str::<Json>(s).unwrap();
        assert!(fits("java.util.Date", &j(r#""2026-12-01T23:30:00Z""#)));
        assert!(fits("java.util.Date", &j("1796167800000")));
        assert!(!fits("java.util.Date", &j("[1]")));
        assert!(!fits("java.util.Date", &j("1.5")));
        // The other java.util types stay collections and maps.
        assert!(fits("java.util.List", &j("[1]")));
        assert!(!fits("java.util.List", &j(r#""x""#)));
    }

    fn url(s: &str) -> DubboUrl {
        DubboUrl::parse(s).unwrap()
    }

    #[test]
    fn methods_are_checked_only_when_every_provider_lists_them() {
        let a = url("dubbo://10.0.0.1:1/S?methods=sayHello,add");
        let b = url("dubbo://10.0.0.2:1/S?methods=whoAmI");
        let silent = url("dubbo://10.0.0.3:1/S");
        let err = check_method("S", "sayHi", [&a, &b]).unwrap_err();
        assert_eq!(err.kind(), RpcErrorKind::MethodNotFound);
        assert_eq!(
            err.message(),
            "S has no method sayHi; its providers list: add, sayHello, whoAmI"
        );
        assert!(check_method("S", "whoAmI", [&a, &b]).is_ok());
        assert!(check_method("S", "$echo", [&a]).is_ok());
        assert!(check_method("S", "sayHi", [&a, &silent]).is_ok());
    }

    #[test]
    fn missing_versions_and_groups_say_what_exists() {
        let all = [
            url("dubbo://10.0.0.1:1/peer.Greeter"),
            url("dubbo://10.0.0.2:1/peer.Greeter?version=1.0.0"),
            url("dubbo://10.0.0.3:1/peer.Greeter?version=1.0.0&group=blue"),
        ];
        assert_eq!(
            missing_version_or_group("peer.Greeter", Some("2.0.0"), None, &all).unwrap(),
            "none of the 3 providers of peer.Greeter has version 2.0.0; seen: (none), 1.0.0"
        );
        assert_eq!(
            missing_version_or_group("peer.Greeter", Some("1.0.0"), Some("red"), &all).unwrap(),
            "none of the 2 providers of peer.Greeter version 1.0.0 has group red; seen: (none), blue"
        );
        assert_eq!(
            missing_version_or_group("peer.Greeter", Some("1.0.0"), Some("red,blue"), &all),
            None
        );
        assert_eq!(
            missing_version_or_group("peer.Greeter", None, None, &all),
            None
        );
        assert_eq!(
            missing_version_or_group("peer.Greeter", None, None, &[]).unwrap(),
            "nobody provides peer.Greeter in the registry"
        );
        // No --version against versioned providers only (it/'s provider started with
        // RUDDER_VERSION): said as the flag to give, not as "has no version".
        let versioned = &all[1..];
        assert_eq!(
            missing_version_or_group("peer.Greeter", None, None, versioned).unwrap(),
            "none of the 2 providers of peer.Greeter is without a version, and no --version was \
             given; seen: 1.0.0 (give --version, `*` for any)"
        );
        assert_eq!(
            missing_version_or_group("peer.Greeter", Some("1.0.0"), None, &all[2..]).unwrap(),
            "none of the 1 provider of peer.Greeter version 1.0.0 is without a group, and no \
             --group was given; seen: blue (give --group, `*` for any)"
        );
    }

    fn overload(name: &str, types: &[&str]) -> Overload {
        Overload {
            name: name.into(),
            parameter_types: types.iter().map(|t| (*t).to_owned()).collect(),
            return_type: None,
        }
    }

    #[test]
    fn the_one_fitting_overload_gives_the_types() {
        let j = |s: &str| serde_json::from_str::<Vec<Json>>(s).unwrap();
        let all = [
            overload("add", &["int", "int"]),
            overload("greet", &["java.lang.String"]),
            overload("greet", &["org.x.User"]),
        ];
        assert_eq!(
            choose_types("add", &all, None, &j("[1, 2]")).unwrap(),
            Some(vec!["int".into(), "int".into()])
        );
        let err = choose_types("add", &all, None, &j(r#"["a", 2]"#)).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"the arguments ["a",2] fit no overload of add; the service has: add(int, int)"#
        );
        assert_eq!(
            choose_types("greet", &all, None, &j(r#"[{"name": "x"}]"#)).unwrap(),
            Some(vec!["org.x.User".into()])
        );
        let given = ["long".to_owned()];
        assert!(choose_types("add", &all, Some(&given), &j("[1]"))
            .unwrap_err()
            .to_string()
            .starts_with("no overload of add takes (long)"));
        assert_eq!(choose_types("other", &all, None, &j("[]")).unwrap(), None);
        assert!(choose_types("greet", &all, None, &j("[null]"))
            .unwrap_err()
            .to_string()
            .contains("choose one with --types"));
    }

    #[test]
    fn definitions_parse_into_sorted_overloads() {
        let definition = r#"{"methods":[{"name":"b","parameterTypes":["int"],"returnType":"int"},
                {"name":"a","parameterTypes":[],"returnType":"java.lang.String"}]}"#;
        let found = overloads_of([definition, definition, "not json"]);
        assert_eq!(
            found.iter().map(Overload::signature).collect::<Vec<_>>(),
            ["a()", "b(int)"]
        );
    }
}
