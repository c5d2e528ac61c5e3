//! What a registry's listing costs the directory at 10,000 providers: filling a [`Directory`] with
//! `replace`, and one change applied with `apply`. The catalog's side (decoding, parsing and matching
//! the node names, cold and warm) is measured by the unit test `catalog::bench` (the catalog is
//! internal): `cargo test -p rudder-registry --release --lib catalog::bench -- --ignored --nocapture`.
//!
//! Run: `cargo bench -p rudder-registry --bench registry`.

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use rudder_cluster::directory::Directory;
use rudder_common::discovery::Change;
use rudder_common::url::DubboUrl;

const PROVIDERS: usize = 10_000;

use rudder_test_support::urls::greeter_provider as provider;

fn bench(c: &mut Criterion) {
    let urls: Vec<DubboUrl> = (0..PROVIDERS).map(provider).collect();

    c.bench_function("directory: replace 10k into an empty directory", |b| {
        b.iter_batched(
            || (Directory::default(), urls.clone()),
            |(directory, urls)| black_box(directory.replace(urls).total),
            BatchSize::LargeInput,
        )
    });

    let full = Directory::default();
    full.replace(urls.clone());
    c.bench_function(
        "directory: replace 10k with one changed (same 9,999)",
        |b| {
            let mut changed = urls.clone();
            changed[PROVIDERS / 2] = changed[PROVIDERS / 2].clone().with_parameter("weight", "1");
            let mut flip = false;
            b.iter(|| {
                flip = !flip;
                let list = if flip { &changed } else { &urls };
                black_box(full.replace(list.iter().cloned()).total)
            })
        },
    );

    c.bench_function("directory: apply one change to 10k", |b| {
        let directory = Directory::default();
        directory.replace(urls.clone());
        let old = urls[PROVIDERS / 2].clone();
        let new = old.clone().with_parameter("weight", "1");
        let mut flip = false;
        b.iter(|| {
            flip = !flip;
            let (from, to) = if flip { (&old, &new) } else { (&new, &old) };
            black_box(
                directory
                    .apply([Change::Remove(from.clone()), Change::Insert(to.clone())])
                    .total,
            )
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
