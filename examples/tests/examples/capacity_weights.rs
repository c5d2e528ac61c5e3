//! The custom-weight example shifts traffic as its capacity table says.

use rudder_examples::capacity_weights::{run, Capacity};

#[test]
fn capacity_table_reweights_the_split() {
    let (before, after) = run();
    let calls = |split: &[(String, usize)]| split.iter().map(|(_, c)| *c).collect::<Vec<_>>();
    for c in calls(&before) {
        assert!(c.abs_diff(3333) < 250, "equal weights: {before:?}");
    }
    // Weights 40 : 160 : 40 (16 cores at 1 GiB free is scaled to a quarter).
    let after = calls(&after);
    assert_eq!(after.iter().sum::<usize>(), 10_000);
    assert!(
        after[0].abs_diff(1667) < 200
            && after[1].abs_diff(6667) < 250
            && after[2].abs_diff(1667) < 200,
        "{after:?}"
    );
}

#[test]
fn capacity_weight_formula() {
    assert_eq!(
        Capacity {
            cores: 8,
            free_memory_gib: 16.0
        }
        .weight(),
        80
    );
    assert_eq!(
        Capacity {
            cores: 8,
            free_memory_gib: 2.0
        }
        .weight(),
        40
    );
}
