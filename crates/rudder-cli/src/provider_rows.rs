//! One row per provider of `rudder providers`: what a user came to see (address, protocol,
//! application, version, group, the weight after configurators and the rule that set it, the
//! effective weight with the warmup share, `disabled` with the deciding rule, the methods), printed as
//! aligned text or JSON, and the diff between two listings that `--watch` prints.

use std::io::Write;

use anyhow::Result;
use rudder_cluster::directory::ProviderSet;
use rudder_cluster::loadbalance::outlier::OutlierSettings;
use rudder_cluster::loadbalance::Pick;
use rudder_common::url::DubboUrl;
use rudder_registry::{DisabledProvider, ReweightedProvider};
use serde_json::json;

/// Dubbo's default provider weight.
const DEFAULT_WEIGHT: i32 = 100;

/// One provider as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) address: String,
    pub(crate) protocol: String,
    pub(crate) application: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) group: Option<String>,
    /// The weight after the configurators (for the method, when one is given).
    pub(crate) weight: i32,
    /// The rule that set `weight`, when a configurator changed it.
    pub(crate) weight_rule: Option<String>,
    /// What the balancer uses now: `weight` ramped by warmup; 0 when disabled.
    pub(crate) effective: i32,
    pub(crate) warming: bool,
    /// The rule that disables this provider, if one does.
    pub(crate) disabled_by: Option<String>,
    pub(crate) methods: Vec<String>,
    pub(crate) loadbalance: String,
    /// The method's outlier ejection settings (`outlier.*`, read from the first provider, as the
    /// balancer reads them), when ejection is on.
    pub(crate) outlier: Option<OutlierSettings>,
    /// The URL as the consumer uses it (never with a password).
    pub(crate) url: String,
    /// Where the provider came from: `interface` (`/dubbo/<interface>/providers`) or `application`
    /// (an instance and its revision's MetadataInfo).
    pub(crate) view: &'static str,
}

impl Row {
    /// `weight 200, effective 22 (warming, 11 %)`, `weight 300 (rule K), effective 300`,
    /// `disabled (rule K)`.
    pub(crate) fn weight_text(&self) -> String {
        if let Some(rule) = &self.disabled_by {
            return format!("disabled (rule {rule})");
        }
        let mut text = format!("weight {}", self.weight);
        if let Some(rule) = &self.weight_rule {
            text.push_str(&format!(" (rule {rule})"));
        }
        text.push_str(&format!(", effective {}", self.effective));
        if self.warming {
            text.push_str(&format!(" (warming, {} %)", self.warmup_percent()));
        }
        text
    }

    /// The effective weight as a share of the configured one, in whole percent.
    pub(crate) fn warmup_percent(&self) -> i64 {
        if self.weight <= 0 {
            return 0;
        }
        (i64::from(self.effective) * 100 + i64::from(self.weight) / 2) / i64::from(self.weight)
    }

    pub(crate) fn columns(&self) -> [String; 6] {
        let or_dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
        [
            self.address.clone(),
            self.protocol.clone(),
            or_dash(&self.application),
            or_dash(&self.version),
            or_dash(&self.group),
            self.weight_text(),
        ]
    }

    /// The row as one JSON object.
    pub(crate) fn to_json(&self, registry: Option<&str>) -> serde_json::Value {
        let mut object = json!({
            "address": self.address,
            "protocol": self.protocol,
            "application": self.application,
            "version": self.version,
            "group": self.group,
            "weight": self.weight,
            "weight_rule": self.weight_rule,
            "effective_weight": self.effective,
            "warming": self.warming,
            "warmup_percent": self.warming.then(|| self.warmup_percent()),
            "disabled": self.disabled_by.is_some(),
            "disabled_by": self.disabled_by,
            "methods": self.methods,
            "loadbalance": self.loadbalance,
            "outlier": self.outlier.map(|o| json!({
                "consecutive_errors": o.consecutive_errors,
                "base_ejection_ms": o.base_ejection_ms,
                "max_ejection_percent": o.max_ejection_percent,
            })),
            "url": self.url,
            "view": self.view,
        });
        if let (Some(registry), Some(map)) = (registry, object.as_object_mut()) {
            map.insert("registry".to_owned(), json!(registry));
        }
        object
    }
}

/// What the registry's subscription says beyond the directory: rules that reweighted or disabled
/// providers, and the registered URLs of the disabled ones (which never reach the directory).
#[derive(Debug, Default)]
pub(crate) struct RuleNotes<'a> {
    pub(crate) reweighted: &'a [ReweightedProvider],
    pub(crate) disabled: &'a [DisabledProvider],
    pub(crate) registered: &'a [DubboUrl],
}

/// The rows of every provider in `snapshot` for `method` ("" for the service level), then the
/// disabled ones.
pub(crate) fn rows(
    snapshot: &ProviderSet,
    method: &str,
    now: i64,
    notes: &RuleNotes<'_>,
) -> Vec<Row> {
    let view = snapshot.view(method);
    let pick = Pick::at(now);
    let mut rows = Vec::with_capacity(view.len() + notes.disabled.len());
    for (i, provider) in view.providers().iter().enumerate() {
        let url = provider.url();
        let weight = view.configured_weight(i);
        let effective = view.weight(i, &pick);
        let warmup = provider.warmup();
        let uptime = now.saturating_sub(provider.timestamp());
        let warming =
            provider.timestamp() > 0 && warmup > 0 && uptime < warmup && effective < weight;
        let address = provider.address().to_owned();
        rows.push(Row {
            weight_rule: notes
                .reweighted
                .iter()
                .find(|r| r.address == address)
                .map(|r| r.rule.clone()),
            address,
            protocol: url.protocol().to_owned(),
            application: application(url),
            version: non_empty(url.parameter("version")),
            group: non_empty(url.parameter("group")),
            weight,
            effective,
            warming,
            disabled_by: None,
            methods: methods(url),
            loadbalance: loadbalance(url, method),
            outlier: view.outlier().copied(),
            url: url.to_string(),
            view: view_of(url),
        });
    }
    for disabled in notes.disabled {
        let url = notes
            .registered
            .iter()
            .find(|u| u.address() == disabled.address);
        let weight = url
            .and_then(|u| u.parameter("weight"))
            .and_then(|w| w.trim().parse().ok())
            .unwrap_or(DEFAULT_WEIGHT);
        rows.push(Row {
            address: disabled.address.clone(),
            protocol: url.map_or("dubbo", DubboUrl::protocol).to_owned(),
            application: url.and_then(application),
            version: url.and_then(|u| non_empty(u.parameter("version"))),
            group: url.and_then(|u| non_empty(u.parameter("group"))),
            weight,
            weight_rule: None,
            effective: 0,
            warming: false,
            disabled_by: Some(disabled.rule.clone()),
            methods: url.map(methods).unwrap_or_default(),
            loadbalance: url.map_or_else(|| "random".to_owned(), |u| loadbalance(u, method)),
            outlier: view.outlier().copied(),
            url: url.map(ToString::to_string).unwrap_or_default(),
            view: url.map_or("interface", view_of),
        });
    }
    rows
}

/// The view a provider URL came from: one built from an instance carries its revision.
fn view_of(url: &DubboUrl) -> &'static str {
    if url.parameter("dubbo.metadata.revision").is_some() {
        "application"
    } else {
        "interface"
    }
}

fn non_empty(value: Option<&str>) -> Option<String> {
    value
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// `application=`, or sofa-rpc-node's `appName=`.
fn application(url: &DubboUrl) -> Option<String> {
    non_empty(url.parameter("application")).or_else(|| non_empty(url.parameter("appName")))
}

fn methods(url: &DubboUrl) -> Vec<String> {
    url.parameter("methods")
        .map(|m| {
            m.split(',')
                .map(str::trim)
                .filter(|m| !m.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn loadbalance(url: &DubboUrl, method: &str) -> String {
    url.method_parameter(method, "loadbalance")
        .filter(|name| !name.is_empty())
        .unwrap_or("random")
        .to_owned()
}

/// The line under a listing that says how outlier ejection is set, when it is on:
/// `# outlier ejection: after 5 consecutive errors, out for 30000 ms × the times ejected (at most 10 ×),
/// at most 50 % of the providers at once`.
pub(crate) fn outlier_note(rows: &[Row]) -> Option<String> {
    let o = rows.iter().find_map(|r| r.outlier)?;
    Some(format!(
        "# outlier ejection: after {} consecutive errors, out for {} ms × the times ejected (at most \
         10 ×), at most {} % of the providers at once",
        o.consecutive_errors, o.base_ejection_ms, o.max_ejection_percent
    ))
}

/// Fills in disabled rows whose registered URL was not found (a Dubbo provider re-registers itself
/// when a rule changes it, so its node may be missing for a moment) from the last listing's row.
pub(crate) fn fill_from(rows: &mut [Row], previous: &[Row]) {
    for row in rows
        .iter_mut()
        .filter(|r| r.disabled_by.is_some() && r.url.is_empty())
    {
        if let Some(known) = previous.iter().find(|p| p.address == row.address) {
            let disabled_by = row.disabled_by.take();
            *row = Row {
                disabled_by,
                effective: 0,
                warming: false,
                weight_rule: None,
                ..known.clone()
            };
        }
    }
}

/// The column titles of the text listing.
const TITLES: [&str; 6] = [
    "ADDRESS",
    "PROTOCOL",
    "APPLICATION",
    "VERSION",
    "GROUP",
    "WEIGHT",
];

/// Prints the rows as aligned columns under a title line (nothing but the titles when empty).
/// Prints the table, each line after `margin` (`--watch` leaves room for its `+ ` / `- `), and
/// returns its column widths, which the `--watch` lines keep.
pub(crate) fn print_table(rows: &[Row], margin: &str, out: &mut dyn Write) -> Result<[usize; 6]> {
    let cells: Vec<[String; 6]> = rows.iter().map(Row::columns).collect();
    let mut widths = TITLES.map(str::len);
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    writeln!(out, "{margin}{}", aligned(&TITLES, &widths))?;
    for row in &cells {
        writeln!(
            out,
            "{margin}{}",
            aligned(&row.each_ref().map(String::as_str), &widths)
        )?;
    }
    Ok(widths)
}

/// A row's cells padded to `widths` (the last one as it is), two spaces apart.
pub(crate) fn aligned(cells: &[&str; 6], widths: &[usize; 6]) -> String {
    let mut text = String::new();
    for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
        if i + 1 == cells.len() {
            text.push_str(cell);
        } else {
            text.push_str(&format!("{cell:<width$}  "));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use rudder_cluster::directory::Directory;

    fn listing(urls: &[&str], now: i64, notes: &RuleNotes<'_>) -> Vec<Row> {
        let directory = Directory::sorted(Default::default());
        directory.replace(urls.iter().map(|u| DubboUrl::parse(u).unwrap()));
        rows(&directory.snapshot(), "", now, notes)
    }

    #[test]
    fn outlier_settings_are_listed_as_the_balancer_reads_them() {
        let on = listing(
            &[
                "dubbo://10.0.0.1:1/S?outlier.consecutive-errors=5&outlier.max-ejection-percent=20",
                "dubbo://10.0.0.2:1/S",
            ],
            0,
            &RuleNotes::default(),
        );
        let note = outlier_note(&on).expect("ejection is on");
        assert_eq!(
            note,
            "# outlier ejection: after 5 consecutive errors, out for 30000 ms × the times ejected \
             (at most 10 ×), at most 20 % of the providers at once"
        );
        // The first provider's settings are the method's, on every row.
        assert_eq!(on[1].to_json(None)["outlier"]["consecutive_errors"], 5);
        assert_eq!(on[0].to_json(None)["outlier"]["base_ejection_ms"], 30_000);
        let off = listing(&["dubbo://10.0.0.1:1/S"], 0, &RuleNotes::default());
        assert_eq!(outlier_note(&off), None);
        assert!(off[0].to_json(None)["outlier"].is_null());
    }

    #[test]
    fn rows_show_warmup_share_rules_and_disabled_providers() {
        let reweighted = [ReweightedProvider::new(
            "10.0.0.1:1",
            Some("300"),
            "300",
            "configurators",
        )];
        let disabled = [DisabledProvider {
            address: "10.0.0.3:1".into(),
            rule: "app.configurators".into(),
        }];
        let registered =
            [DubboUrl::parse("dubbo://10.0.0.3:1/S?application=gone&weight=50").unwrap()];
        let notes = RuleNotes {
            reweighted: &reweighted,
            disabled: &disabled,
            registered: &registered,
        };
        let rows = listing(
            &[
                "dubbo://10.0.0.1:1/S?application=shop&weight=300&version=1.0.0&methods=b,a",
                "dubbo://10.0.0.2:1/S?appName=node&weight=200&timestamp=1000000&warmup=600000",
            ],
            1_066_000,
            &notes,
        );
        let mut text = Vec::new();
        print_table(&rows, "", &mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "\
ADDRESS     PROTOCOL  APPLICATION  VERSION  GROUP  WEIGHT
10.0.0.1:1  dubbo     shop         1.0.0    -      weight 300 (rule configurators), effective 300
10.0.0.2:1  dubbo     node         -        -      weight 200, effective 22 (warming, 11 %)
10.0.0.3:1  dubbo     gone         -        -      disabled (rule app.configurators)
"
        );
        let json = rows[1].to_json(None);
        assert_eq!(json["effective_weight"], 22);
        assert_eq!(json["warmup_percent"], 11);
        assert_eq!(rows[0].to_json(Some("r"))["methods"], json!(["b", "a"]));
        assert_eq!(rows[2].to_json(None)["disabled"], true);
    }
}
