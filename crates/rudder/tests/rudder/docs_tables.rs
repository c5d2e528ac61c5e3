//! The guide's tables that repeat the code's constants, checked against them.
//!
//! `docs/url-parameters.md` lists every integer parameter with its default and range, and
//! `docs/balancing.md` lists the built-in strategies and cluster modes. Each table was once written by
//! hand beside the code and drifted from it (a README that said "the five `LoadBalance` policies" when
//! eight were built in, and one `timeout` range where the code has three), so each row is read here
//! and compared with the constant it names; a change to either side that is not made to the other
//! fails this test.

use std::collections::BTreeSet;

use rudder_cluster::cluster::{self, ClusterMode};
use rudder_cluster::loadbalance::bounded_load::{BALANCE_FACTOR_KEY, MAX_BALANCE_FACTOR};
use rudder_cluster::loadbalance::{
    adaptive, consistent_hash, outlier, outlier_relative, LoadBalanceRegistry, DEFAULT_LOADBALANCE,
};
use rudder_common::url::ranges::IntRange;
use rudder_common::url::{transport, DubboUrl};

const URL_PARAMETERS: &str = include_str!("../../../../docs/url-parameters.md");
const BALANCING: &str = include_str!("../../../../docs/balancing.md");

/// Each constant with its path as the table's `constant` column writes it.
macro_rules! constants {
    ($($path:path),* $(,)?) => {
        vec![$((stringify!($path).split_whitespace().collect::<String>(), $path)),*]
    };
}

/// Every public `IntRange` a consumer reads a URL parameter with. A new one belongs here and in the
/// table.
fn int_ranges() -> Vec<(String, IntRange)> {
    constants![
        rudder_cluster::provider::WEIGHT,
        rudder_cluster::provider::WARMUP,
        rudder_cluster::provider::TIMESTAMP,
        consistent_hash::HASH_NODES,
        rudder_common::status::ACTIVES,
        cluster::RETRIES,
        transport::TIMEOUT,
        cluster::FORKING_TIMEOUT,
        adaptive::ADAPTIVE_TIMEOUT,
        transport::CONNECT_TIMEOUT,
        transport::HEARTBEAT,
        transport::PAYLOAD,
        transport::CONNECTIONS,
        outlier::CONSECUTIVE_ERRORS,
        outlier::BASE_EJECTION_MS,
        outlier::MAX_EJECTION_PERCENT,
        outlier_relative::INTERVAL_MS,
        outlier_relative::ENFORCING_SUCCESS_RATE,
        outlier_relative::SUCCESS_RATE_MINIMUM_HOSTS,
        outlier_relative::SUCCESS_RATE_REQUEST_VOLUME,
        outlier_relative::SUCCESS_RATE_STDEV_FACTOR,
        outlier_relative::ENFORCING_FAILURE_PERCENTAGE,
        outlier_relative::FAILURE_PERCENTAGE_THRESHOLD,
        outlier_relative::FAILURE_PERCENTAGE_MINIMUM_HOSTS,
        outlier_relative::FAILURE_PERCENTAGE_REQUEST_VOLUME,
        cluster::FAILBACK_TASKS,
        cluster::RETRY_PERIOD,
        cluster::FORKS,
        cluster::BROADCAST_FAIL_PERCENT,
    ]
    .into_iter()
    .map(|(path, range)| (full_path(&path), range))
    .collect()
}

/// The table writes full paths; the list above uses the imports' short ones.
fn full_path(path: &str) -> String {
    let prefixes = [
        (
            "consistent_hash::",
            "rudder_cluster::loadbalance::consistent_hash::",
        ),
        ("adaptive::", "rudder_cluster::loadbalance::adaptive::"),
        ("outlier::", "rudder_cluster::loadbalance::outlier::"),
        (
            "outlier_relative::",
            "rudder_cluster::loadbalance::outlier_relative::",
        ),
        ("cluster::", "rudder_cluster::cluster::"),
        ("transport::", "rudder_common::url::transport::"),
    ];
    for (short, long) in prefixes {
        if let Some(rest) = path.strip_prefix(short) {
            return format!("{long}{rest}");
        }
    }
    path.to_owned()
}

/// The body rows of the markdown table whose header row starts with `header`, split into cells.
fn table(doc: &str, header: &str) -> Vec<Vec<String>> {
    let mut lines = doc.lines().skip_while(|line| !line.starts_with(header));
    assert!(lines.next().is_some(), "no table headed {header:?}");
    lines
        .skip(1) // the |---| separator
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            line.trim()
                .trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().to_owned())
                .collect()
        })
        .collect()
}

/// The first `code span` of a cell, e.g. `weight` of "`weight`, `<method>.weight`".
fn first_code(cell: &str) -> &str {
    cell.split('`').nth(1).unwrap_or(cell)
}

/// A number as the table writes it: `2^31-1`, `-2^31`, `600,000`, each with an optional unit.
fn quantity(text: &str) -> Result<i64, String> {
    let mut words = text.split_whitespace();
    let number = words
        .next()
        .ok_or_else(|| format!("empty quantity in {text:?}"))?;
    let unit = words.next().unwrap_or("");
    if let Some(extra) = words.next() {
        return Err(format!(
            "{text:?}: unexpected {extra:?} (notes go in the notes column)"
        ));
    }
    let value = if let Some((base, rest)) = number.trim_start_matches('-').split_once('^') {
        let (exponent, minus_one) = match rest.strip_suffix("-1") {
            Some(exponent) => (exponent, 1),
            None => (rest, 0),
        };
        let base: i128 = base.parse().map_err(|_| format!("bad base in {text:?}"))?;
        let exponent: u32 = exponent
            .parse()
            .map_err(|_| format!("bad exponent in {text:?}"))?;
        let magnitude = base.pow(exponent) - minus_one;
        let signed = if number.starts_with('-') {
            -magnitude
        } else {
            magnitude
        };
        i64::try_from(signed).map_err(|_| format!("{text:?} overflows i64"))?
    } else {
        number
            .replace(',', "")
            .parse::<i64>()
            .map_err(|_| format!("bad number in {text:?}"))?
    };
    let scale = match unit {
        "" | "ms" | "B" | "%" => 1,
        "s" => 1_000,
        "min" => 60_000,
        "h" => 3_600_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        other => return Err(format!("{text:?}: unknown unit {other:?}")),
    };
    Ok(value * scale)
}

#[test]
fn docs_tables_url_parameters_match_their_constants() {
    let rows = table(URL_PARAMETERS, "| parameter |");
    let mut unused = int_ranges();
    let mut without_constant = BTreeSet::new();
    for row in &rows {
        let [parameter, _from, default, range, _notes, constant] = row.as_slice() else {
            panic!(
                "a url-parameters row with {} cells, not 6: {row:?}",
                row.len()
            );
        };
        let key = first_code(parameter);
        if constant.starts_with("none") {
            without_constant.insert(key.to_owned());
            continue;
        }
        let constant = constant.trim_matches('`');
        let at = unused
            .iter()
            .position(|(path, _)| path == constant)
            .unwrap_or_else(|| {
                panic!(
                    "`{key}` names {constant}, which is not a known IntRange (or is named twice)"
                )
            });
        let (_, expected) = unused.remove(at);
        assert_eq!(
            key, expected.key,
            "row `{key}` names the constant of `{}`",
            expected.key
        );
        assert_eq!(
            quantity(default),
            Ok(expected.default),
            "default of `{key}` ({constant})"
        );
        let (min, max) = range
            .split_once("..=")
            .unwrap_or_else(|| panic!("range of `{key}` is not `MIN ..= MAX`: {range:?}"));
        assert_eq!(
            quantity(min),
            Ok(expected.min),
            "smallest `{key}` ({constant})"
        );
        assert_eq!(
            quantity(max),
            Ok(expected.max),
            "largest `{key}` ({constant})"
        );
    }
    let missing: Vec<&str> = unused.iter().map(|(path, _)| path.as_str()).collect();
    assert!(
        missing.is_empty(),
        "constants with no row in docs/url-parameters.md: {missing:?}"
    );
    let known: BTreeSet<String> = [
        "hash.arguments",
        BALANCE_FACTOR_KEY,
        rudder_cluster::balancer::AVAILABLE_CHECK_KEY,
        outlier::IGNORE_EXCEPTIONS_KEY,
    ]
    .map(String::from)
    .into();
    assert_eq!(without_constant, known, "rows that name no constant");

    // The balance factor is a decimal, not an IntRange: its upper bound is checked on its own.
    let factor = rows
        .iter()
        .find(|row| first_code(&row[0]) == BALANCE_FACTOR_KEY)
        .expect("a hash.balance-factor row");
    let upper = factor[3].rsplit('≤').next().unwrap_or_default().trim();
    assert_eq!(
        upper.parse::<f64>(),
        Ok(MAX_BALANCE_FACTOR),
        "hash.balance-factor's bound"
    );
}

#[test]
fn docs_tables_name_every_builtin_strategy() {
    let rows = table(BALANCING, "| strategy |");
    let documented: BTreeSet<&str> = rows.iter().map(|row| first_code(&row[0])).collect();
    let registry = LoadBalanceRegistry::with_builtins();
    let built_in: BTreeSet<&str> = registry.names().collect();
    assert_eq!(
        documented, built_in,
        "docs/balancing.md's strategies against the built-ins"
    );
    assert_eq!(rows.len(), built_in.len(), "a strategy listed twice");
    let defaults: Vec<&str> = rows
        .iter()
        .filter(|row| row[0].contains("(default)"))
        .map(|row| first_code(&row[0]))
        .collect();
    assert_eq!(defaults, [DEFAULT_LOADBALANCE], "the default strategy");
}

#[test]
fn docs_tables_name_every_cluster_mode() {
    let rows = table(BALANCING, "| mode |");
    let mut names = BTreeSet::new();
    for row in &rows {
        let name = row[0].split_whitespace().next().unwrap_or_default();
        let mode: ClusterMode = name.parse().unwrap_or_else(|e| {
            panic!("docs/balancing.md lists `{name}`, which rudder refuses: {e}")
        });
        assert_eq!(mode.name(), name, "`{name}` parses to another mode");
        assert!(names.insert(name), "`{name}` listed twice");
    }
    // ClusterMode is non_exhaustive, so its variants cannot be listed here; its `name()` has eight arms.
    assert_eq!(
        names.len(),
        8,
        "docs/balancing.md's cluster modes: {names:?}"
    );
    let unset = DubboUrl::new("consumer", "127.0.0.1", 0, "");
    let default = ClusterMode::from_consumer(&unset, "sayHello").expect("the default mode");
    let documented: Vec<&str> = rows
        .iter()
        .filter(|row| row[0].contains("(default)"))
        .map(|row| row[0].split_whitespace().next().unwrap_or_default())
        .collect();
    assert_eq!(documented, [default.name()], "the default cluster mode");
}

#[test]
fn docs_tables_quantities_parse_as_written() {
    assert_eq!(quantity("2^31-1 ms"), Ok(i64::from(i32::MAX)));
    assert_eq!(quantity("-2^31"), Ok(i64::from(i32::MIN)));
    assert_eq!(quantity("2^63-1 ms"), Ok(i64::MAX));
    assert_eq!(quantity("600,000 ms"), Ok(600_000));
    assert_eq!(quantity("1 h"), Ok(3_600_000));
    assert_eq!(quantity("64 MiB"), Ok(64 << 20));
    assert!(quantity("1 ms (clamped)").is_err());
    assert!(quantity("3 parsecs").is_err());
}
