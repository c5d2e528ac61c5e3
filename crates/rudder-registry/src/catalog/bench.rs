//! The catalog's costs at 10,000 providers, with criterion: decoding, parsing and matching the node
//! names (a cold listing), and re-listing with one new name (the warm path a watch event takes) up to
//! the directory's delta. A unit test because the catalog is internal (no feature exposes it); run it
//! optimised, alone:
//!
//! ```text
//! cargo test -p rudder-registry --release --lib catalog::bench -- --ignored --nocapture
//! ```
//!
//! The directory's own side (`replace`, `apply`) is `cargo bench -p rudder-registry --bench registry`.

use std::hint::black_box;

use criterion::{BatchSize, Criterion};
use rudder_cluster::directory::Directory;

use crate::catalog::Catalog;
use crate::configurator::ConsumerSide;
use crate::ConsumerSpec;

const PROVIDERS: usize = 10_000;

use rudder_test_support::urls::greeter_provider as provider;

fn spec() -> ConsumerSpec {
    ConsumerSpec::new("com.acme.Greeter").version("1.0.0")
}

fn side() -> ConsumerSide {
    ConsumerSide {
        host: "10.9.9.9".into(),
        application: "bench".into(),
    }
}

#[test]
#[ignore = "a benchmark: run it with --release --ignored --nocapture"]
fn catalog_at_10k_providers() {
    let mut c = Criterion::default().warm_up_time(std::time::Duration::from_secs(1));
    let names: Vec<String> = (0..PROVIDERS).map(|i| provider(i).to_node_name()).collect();
    c.bench_function("catalog: parse+match 10k node names (cold)", |b| {
        b.iter_batched(
            || names.clone(),
            |names| {
                let mut catalog = Catalog::new(&spec(), side());
                catalog.set_providers(names);
                black_box(catalog.provider_urls().len())
            },
            BatchSize::LargeInput,
        )
    });

    // What the subscriber does when one provider node among 10,000 changes: the re-listed names go
    // through the catalog (which parses only the new name), and the delta goes to the directory.
    let mut warm = Catalog::new(&spec(), side());
    warm.set_providers(names.clone());
    let directory = Directory::sorted(Default::default());
    directory.replace(warm.provider_urls());
    let mut changed_names = names.clone();
    changed_names[PROVIDERS / 2] = provider(PROVIDERS / 2)
        .with_parameter("weight", "7")
        .to_node_name();
    c.bench_function(
        "registry update: one changed node among 10k, re-list + delta + apply",
        |b| {
            let mut flip = false;
            b.iter_batched(
                || {
                    flip = !flip;
                    if flip {
                        changed_names.clone()
                    } else {
                        names.clone()
                    }
                },
                |listing| {
                    let delta = warm.set_providers(listing);
                    black_box(directory.apply(warm.changes(&delta)).total)
                },
                BatchSize::LargeInput,
            )
        },
    );

    c.final_summary();
}
