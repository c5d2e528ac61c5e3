//! What `rudder providers --watch` prints after the listing: each change a user would see, as a
//! text line aligned with the table above it (`+ ` / `- ` in the table's margin, cells at its column
//! widths) or, with `--format json`, as one JSON object per line.

use std::collections::BTreeMap;

use serde_json::json;

use crate::provider_rows::{aligned, Row};

/// One visible change between two listings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// A provider came.
    Added(Row),
    /// A provider went.
    Removed(Row),
    /// A provider's row changed: what changed, in words (`weight 100 → 300 (rule K)`).
    Changed(Row, Vec<String>),
}

impl Change {
    /// The `--watch` line: `+ ROW` / `- ROW` with the cells at the table's `widths`, `~ ADDRESS
    /// what changed`.
    pub(crate) fn text(&self, widths: &[usize; 6]) -> String {
        let row = |sign: char, row: &Row| {
            let cells = row.columns();
            let line = aligned(&cells.each_ref().map(String::as_str), widths);
            format!("{sign} {}", line.trim_end())
        };
        match self {
            Change::Added(r) => row('+', r),
            Change::Removed(r) => row('-', r),
            Change::Changed(r, what) => format!("~ {} {}", r.address, what.join(", ")),
        }
    }

    /// The `--watch --format json` line: `{"event":"added"|"removed"|"changed", "provider": {...}}`
    /// (`"changes": [...]` for a changed one), the provider as `--format json` lists it.
    pub(crate) fn json(&self) -> serde_json::Value {
        match self {
            Change::Added(r) => json!({"event": "added", "provider": r.to_json(None)}),
            Change::Removed(r) => json!({"event": "removed", "provider": r.to_json(None)}),
            Change::Changed(r, what) => {
                json!({"event": "changed", "changes": what, "provider": r.to_json(None)})
            }
        }
    }
}

/// What changed between two listings that a user would see: gone providers, then new and changed
/// ones, by address. The effective weight alone is not a change (it moves with the clock during
/// warmup).
pub(crate) fn diff(before: &[Row], after: &[Row]) -> Vec<Change> {
    let old: BTreeMap<&str, &Row> = before.iter().map(|r| (r.address.as_str(), r)).collect();
    let new: BTreeMap<&str, &Row> = after.iter().map(|r| (r.address.as_str(), r)).collect();
    let mut found = Vec::new();
    for (address, row) in &old {
        if !new.contains_key(address) {
            found.push(Change::Removed((*row).clone()));
        }
    }
    for (address, row) in &new {
        match old.get(address) {
            None => found.push(Change::Added((*row).clone())),
            Some(was) => {
                let what = changes(was, row);
                if !what.is_empty() {
                    found.push(Change::Changed((*row).clone(), what));
                }
            }
        }
    }
    found
}

fn changes(was: &Row, now: &Row) -> Vec<String> {
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".to_owned());
    let mut out = Vec::new();
    match (&was.disabled_by, &now.disabled_by) {
        (None, Some(rule)) => out.push(format!("disabled (rule {rule})")),
        (Some(_), None) => out.push("enabled again".to_owned()),
        _ => {}
    }
    if was.weight != now.weight && now.disabled_by.is_none() {
        let rule = now
            .weight_rule
            .as_ref()
            .map_or_else(String::new, |r| format!(" (rule {r})"));
        out.push(format!("weight {} → {}{rule}", was.weight, now.weight));
    }
    for (name, a, b) in [
        (
            "protocol",
            Some(was.protocol.clone()),
            Some(now.protocol.clone()),
        ),
        (
            "application",
            was.application.clone(),
            now.application.clone(),
        ),
        ("version", was.version.clone(), now.version.clone()),
        ("group", was.group.clone(), now.group.clone()),
        (
            "loadbalance",
            Some(was.loadbalance.clone()),
            Some(now.loadbalance.clone()),
        ),
    ] {
        if a != b {
            out.push(format!("{name} {} → {}", show(&a), show(&b)));
        }
    }
    if was.methods != now.methods {
        out.push(format!(
            "methods {} → {}",
            was.methods.join(","),
            now.methods.join(",")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider_rows::{print_table, rows, RuleNotes};
    use rudder_cluster::directory::Directory;
    use rudder_common::url::DubboUrl;
    use rudder_registry::ReweightedProvider;

    fn listing(urls: &[&str], notes: &RuleNotes<'_>) -> Vec<Row> {
        let directory = Directory::sorted(Default::default());
        directory.replace(urls.iter().map(|u| DubboUrl::parse(u).unwrap()));
        rows(&directory.snapshot(), "", 0, notes)
    }

    #[test]
    fn the_diff_shows_only_what_a_user_sees_aligned_with_the_table() {
        let empty = RuleNotes::default();
        let before = listing(
            &[
                "dubbo://10.0.0.1:1/S?weight=100&application=shop",
                "dubbo://10.0.0.2:1/S",
            ],
            &empty,
        );
        let reweighted = [ReweightedProvider::new(
            "10.0.0.1:1",
            Some("100"),
            "300",
            "S::.configurators",
        )];
        let notes = RuleNotes {
            reweighted: &reweighted,
            ..RuleNotes::default()
        };
        let after = listing(
            &[
                "dubbo://10.0.0.1:1/S?weight=300&application=shop",
                "dubbo://10.0.0.3:1/S",
            ],
            &notes,
        );
        let mut table = Vec::new();
        let widths = print_table(&before, "  ", &mut table).unwrap();
        let table = String::from_utf8(table).unwrap();
        let changes = diff(&before, &after);
        let lines: Vec<String> = changes.iter().map(|c| c.text(&widths)).collect();
        assert_eq!(
            lines,
            [
                "- 10.0.0.2:1  dubbo     -            -        -      weight 100, effective 100",
                "~ 10.0.0.1:1 weight 100 → 300 (rule S::.configurators)",
                "+ 10.0.0.3:1  dubbo     -            -        -      weight 100, effective 100",
            ]
        );
        // Every column of a `+` / `-` line starts where the table's does.
        let header = table.lines().next().unwrap();
        for title in ["PROTOCOL", "APPLICATION", "VERSION", "GROUP", "WEIGHT"] {
            let column = header.find(title).unwrap();
            assert_eq!(
                &lines[0][column - 1..column],
                " ",
                "{title}\n{table}{}",
                lines[0]
            );
            assert_ne!(
                &lines[0][column..column + 1],
                " ",
                "{title}\n{table}{}",
                lines[0]
            );
        }
        assert_eq!(changes[1].json()["event"], "changed");
        assert_eq!(changes[1].json()["provider"]["weight"], 300);
        assert_eq!(changes[2].json()["provider"]["address"], "10.0.0.3:1");
        assert!(diff(&after, &after).is_empty());
    }
}
