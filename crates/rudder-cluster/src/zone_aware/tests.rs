use std::collections::VecDeque;

use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;

use super::*;

/// Hands out scripted draws and records the bound of each.
#[derive(Default)]
struct FixedRng {
    draws: VecDeque<u64>,
    bounds: Vec<u64>,
}

impl FixedRng {
    fn new(draws: &[u64]) -> FixedRng {
        FixedRng {
            draws: draws.iter().copied().collect(),
            bounds: Vec::new(),
        }
    }
}

impl PickRng for FixedRng {
    fn below(&mut self, bound: u64) -> u64 {
        self.bounds.push(bound);
        let draw = self.draws.pop_front().expect("a scripted draw");
        assert!(draw < bound, "scripted draw {draw} out of 0..{bound}");
        draw
    }
}

fn all(_: usize) -> bool {
    true
}

const NO_ZONE: ZoneRequest<'static> = ZoneRequest {
    zone: None,
    force: false,
};

fn zone(zone: &'static str, force: bool) -> ZoneRequest<'static> {
    ZoneRequest {
        zone: Some(zone),
        force,
    }
}

fn three() -> Vec<RegistryChoice> {
    vec![
        RegistryChoice::new("a").zone("hz"),
        RegistryChoice::new("b").zone("sh").weight(300),
        RegistryChoice::new("c").zone("sh"),
    ]
}

#[test]
fn a_preferred_registry_with_providers_wins_over_zone_and_weight() {
    let mut registries = three();
    registries[2] = registries[2].clone().preferred(true);
    let mut rng = FixedRng::new(&[]);
    assert_eq!(
        choose_registry(&registries, &all, &zone("hz", true), &mut rng).ok(),
        Some(2)
    );
    assert!(rng.bounds.is_empty(), "no draw when a preferred one serves");
    // Without providers, the preferred registry is passed over: the zone decides.
    let without_c = |i: usize| i != 2;
    assert_eq!(
        choose_registry(&registries, &without_c, &zone("hz", false), &mut rng).ok(),
        Some(0)
    );
}

#[test]
fn the_first_preferred_in_order_wins() {
    let registries = vec![
        RegistryChoice::new("a"),
        RegistryChoice::new("b").preferred(true),
        RegistryChoice::new("c").preferred(true),
    ];
    let mut rng = FixedRng::new(&[]);
    assert_eq!(
        choose_registry(&registries, &all, &NO_ZONE, &mut rng).ok(),
        Some(1)
    );
}

#[test]
fn the_zone_attachment_picks_the_first_registry_of_that_zone_with_providers() {
    let mut rng = FixedRng::new(&[]);
    assert_eq!(
        choose_registry(&three(), &all, &zone("sh", false), &mut rng).ok(),
        Some(1)
    );
    let without_b = |i: usize| i != 1;
    assert_eq!(
        choose_registry(&three(), &without_b, &zone("sh", true), &mut rng).ok(),
        Some(2)
    );
}

#[test]
fn an_unknown_zone_falls_back_to_the_weighted_pick_unless_forced() {
    let mut rng = FixedRng::new(&[50]);
    assert_eq!(
        choose_registry(&three(), &all, &zone("bj", false), &mut rng).ok(),
        Some(0)
    );
    assert_eq!(rng.bounds, [500]);
    let error = choose_registry(&three(), &all, &zone("bj", true), &mut rng).unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::NoProvider);
    assert!(error.message().contains("zone: bj"), "{}", error.message());
    assert!(
        error.message().contains("a zone=hz weight=100"),
        "{}",
        error.message()
    );
    // A zone whose only registry has no providers counts as no match.
    let without_a = |i: usize| i != 0;
    let error = choose_registry(&three(), &without_a, &zone("hz", true), &mut rng).unwrap_err();
    assert!(error.message().contains("zone: hz"), "{}", error.message());
}

#[test]
fn weights_100_to_300_split_the_offsets_as_random_does() {
    let registries = vec![
        RegistryChoice::new("a"),
        RegistryChoice::new("b").weight(300),
    ];
    let mut rng = FixedRng::new(&[0, 99, 100, 399]);
    let picks: Vec<usize> = (0..4)
        .map(|_| choose_registry(&registries, &all, &NO_ZONE, &mut rng).unwrap())
        .collect();
    assert_eq!(picks, [0, 0, 1, 1]);
    assert_eq!(rng.bounds, [400; 4], "the offset is drawn in 0..total");
}

#[test]
fn equal_or_zero_weights_give_a_uniform_pick_among_candidates() {
    let equal = vec![RegistryChoice::new("a"), RegistryChoice::new("b")];
    let mut rng = FixedRng::new(&[1]);
    assert_eq!(
        choose_registry(&equal, &all, &NO_ZONE, &mut rng).ok(),
        Some(1)
    );
    assert_eq!(rng.bounds, [2]);

    let zero = vec![
        RegistryChoice::new("a").weight(0),
        RegistryChoice::new("b").weight(-5),
        RegistryChoice::new("c").weight(0),
    ];
    let mut rng = FixedRng::new(&[2]);
    assert_eq!(
        choose_registry(&zero, &all, &NO_ZONE, &mut rng).ok(),
        Some(2)
    );
    assert_eq!(
        rng.bounds,
        [3],
        "negative counts as 0, and a zero total is uniform"
    );
}

#[test]
fn registries_without_providers_are_left_out_of_the_draw() {
    let without_b = |i: usize| i != 1;
    // a (100) and c (100) remain: equal weights, uniform over two.
    let mut rng = FixedRng::new(&[1]);
    assert_eq!(
        choose_registry(&three(), &without_b, &NO_ZONE, &mut rng).ok(),
        Some(2)
    );
    assert_eq!(rng.bounds, [2]);
    let registries = vec![
        RegistryChoice::new("a"),
        RegistryChoice::new("b").weight(300),
        RegistryChoice::new("c").weight(50),
    ];
    let mut rng = FixedRng::new(&[120]);
    assert_eq!(
        choose_registry(&registries, &without_b, &NO_ZONE, &mut rng).ok(),
        Some(2)
    );
    assert_eq!(rng.bounds, [150]);
}

#[test]
fn no_registry_with_providers_is_no_provider() {
    let none = |_: usize| false;
    let error = choose_registry(&three(), &none, &NO_ZONE, &mut FixedRng::new(&[])).unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::NoProvider);
    assert!(
        error.message().contains("[a zone=hz"),
        "{}",
        error.message()
    );
}

#[test]
fn registry_parameters_are_read_and_bad_ones_named() {
    let choice = RegistryChoice::from_parameters(
        "zk1",
        [
            ("preferred", "TRUE"),
            ("zone", "hz"),
            ("backup", "x"),
            ("weight", "-3"),
        ],
    )
    .unwrap();
    assert_eq!(
        choice,
        RegistryChoice::new("zk1")
            .preferred(true)
            .zone("hz")
            .weight(-3)
    );
    assert_eq!(
        RegistryChoice::from_parameters("zk1", [("weight", "")]).unwrap(),
        RegistryChoice::new("zk1")
    );
    let error = RegistryChoice::from_parameters("zk1", [("weight", "heavy")]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "registry zk1: parameter weight=\"heavy\" is not an integer (32 bits)"
    );
    let error = RegistryChoice::from_parameters("zk1", [("preferred", "yes")]).unwrap_err();
    assert_eq!(error.key, "preferred");
}

#[test]
fn the_zone_request_comes_from_the_attachments() {
    let mut call = Invocation::new("m", vec![], vec![]);
    assert_eq!(ZoneRequest::of(&call), ZoneRequest::default());
    call.set_attachment(REGISTRY_ZONE, "");
    call.set_attachment(REGISTRY_ZONE_FORCE, "True");
    assert_eq!(
        ZoneRequest::of(&call),
        ZoneRequest {
            zone: None,
            force: true
        }
    );
    call.set_attachment(REGISTRY_ZONE, "hz");
    call.set_attachment(REGISTRY_ZONE_FORCE, "yes");
    assert_eq!(ZoneRequest::of(&call), zone("hz", false));
}
