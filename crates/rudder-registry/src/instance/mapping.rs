//! Which applications export an interface: the consumer's `provided-by`, else the mapping node.
//!
//! A Dubbo 3 provider appends its application name to `<root>/mapping/<interface>` on export (the
//! interface alone, without group or version); the data is the names separated by `,`. Dubbo trims
//! them, drops empties and sorts them (`ServiceNameMapping.getAppNames`, a `TreeSet`). A consumer's
//! `provided-by=app1,app2` wins over the mapping (`getMappingByUrl`).

/// The consumer setting naming the provider applications.
pub(crate) const PROVIDED_BY_KEY: &str = "provided-by";
/// The most application names taken from one mapping or `provided-by`.
pub(crate) const MAX_APPS: usize = 64;

/// The application names of a mapping node's data or a `provided-by` value: trimmed, empties
/// dropped, sorted, each once, at most [`MAX_APPS`]. Names that cannot be a node name (holding `/`)
/// are left out.
pub(crate) fn app_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = text
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty() && !n.contains('/') && *n != "." && *n != "..")
        .map(str::to_owned)
        .collect();
    names.sort_unstable();
    names.dedup();
    names.truncate(MAX_APPS);
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_sorted_and_deduplicated() {
        // What the Java 3.3.6 provider wrote: a single name.
        assert_eq!(
            app_names("rudder-it-java-provider"),
            ["rudder-it-java-provider"]
        );
        assert_eq!(app_names(" b, a,,b ,../x"), ["a", "b"]);
        assert!(app_names("").is_empty());
        let many: Vec<String> = (0..1000).map(|i| format!("app{i}")).collect();
        assert_eq!(app_names(&many.join(",")).len(), MAX_APPS);
    }
}
