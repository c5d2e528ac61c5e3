//! The zone-aware invoker over several registries' cluster invokers, against scripted providers
//! (`rudder_test_support::scripted`): which registry a call goes to, and when an error moves on.

use std::sync::Arc;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::cluster::{ClusterInvoker, ClusterMode};
use rudder_cluster::directory::Directory;
use rudder_cluster::rng::RngSource;
use rudder_cluster::zone_aware::{
    RegistryChoice, RegistryMember, ZoneAwareInvoker, REGISTRY_ZONE, REGISTRY_ZONE_FORCE,
};
use rudder_common::error::RpcErrorKind;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_test_support::scripted::{block_on, Scripted};

/// A script where each of `failing`'s addresses fails with its kind.
fn scripted(failing: &[(&str, RpcErrorKind)]) -> Scripted {
    let caller = Scripted::default();
    for (address, kind) in failing {
        caller.fail(address, *kind);
    }
    caller
}

/// Registries with one provider each (`10.0.<i>.1:20880`, none where the address is empty).
fn zone_aware(
    registries: &[(RegistryChoice, &str)],
    caller: &Scripted,
) -> ZoneAwareInvoker<Scripted> {
    let members = registries
        .iter()
        .map(|(choice, provider)| {
            let directory = Arc::new(Directory::default());
            if !provider.is_empty() {
                directory.replace([DubboUrl::parse(&format!("dubbo://{provider}/S")).unwrap()]);
            }
            let balancer = Arc::new(Balancer::builder(directory).seed(1).build());
            RegistryMember::new(
                choice.clone(),
                ClusterInvoker::new(balancer, caller.clone(), ClusterMode::Failfast),
            )
        })
        .collect();
    ZoneAwareInvoker::new(members, RngSource::seeded(5)).unwrap()
}

fn call_in(zone: &str) -> Invocation {
    let mut call = Invocation::new("m", vec![], vec![]);
    call.set_attachment(REGISTRY_ZONE, zone);
    call
}

#[test]
fn without_failover_the_chosen_registry_error_is_the_answer() {
    let caller = scripted(&[("10.0.1.1:20880", RpcErrorKind::Network)]);
    let invoker = zone_aware(
        &[
            (RegistryChoice::new("a").zone("hz"), "10.0.1.1:20880"),
            (RegistryChoice::new("b").zone("sh"), "10.0.2.1:20880"),
        ],
        &caller,
    );
    let error =
        block_on(invoker.invoke_in_mode(&call_in("hz"), &ClusterMode::Failfast)).unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::Network);
    assert_eq!(caller.calls(), ["10.0.1.1:20880"]);
}

#[test]
fn with_failover_a_retryable_error_moves_to_the_next_registry() {
    let caller = scripted(&[("10.0.1.1:20880", RpcErrorKind::Timeout)]);
    let invoker = zone_aware(
        &[
            (RegistryChoice::new("a").zone("hz"), "10.0.1.1:20880"),
            (RegistryChoice::new("b").zone("sh"), "10.0.2.1:20880"),
        ],
        &caller,
    )
    .with_failover(true);
    let answer = block_on(invoker.invoke_in_mode(&call_in("hz"), &ClusterMode::Failfast));
    assert_eq!(answer.unwrap(), "10.0.2.1:20880");
    assert_eq!(caller.calls(), ["10.0.1.1:20880", "10.0.2.1:20880"]);
}

#[test]
fn failover_never_follows_a_business_exception_nor_leaves_a_forced_zone() {
    let caller = scripted(&[("10.0.1.1:20880", RpcErrorKind::Biz)]);
    let registries = [
        (RegistryChoice::new("a").zone("hz"), "10.0.1.1:20880"),
        (RegistryChoice::new("b").zone("sh"), "10.0.2.1:20880"),
    ];
    let invoker = zone_aware(&registries, &caller).with_failover(true);
    let error =
        block_on(invoker.invoke_in_mode(&call_in("hz"), &ClusterMode::Failfast)).unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::Biz);

    let caller = scripted(&[("10.0.1.1:20880", RpcErrorKind::Network)]);
    let invoker = zone_aware(&registries, &caller).with_failover(true);
    let mut forced = call_in("hz");
    forced.set_attachment(REGISTRY_ZONE_FORCE, "true");
    let error = block_on(invoker.invoke_in_mode(&forced, &ClusterMode::Failfast)).unwrap_err();
    assert_eq!(
        error.kind(),
        RpcErrorKind::Network,
        "the zone's own error: {error}"
    );
    assert_eq!(caller.calls(), ["10.0.1.1:20880"]);
}

#[test]
fn failover_through_every_registry_names_them_all() {
    let caller = scripted(&[
        ("10.0.1.1:20880", RpcErrorKind::Network),
        ("10.0.2.1:20880", RpcErrorKind::Timeout),
    ]);
    let invoker = zone_aware(
        &[
            (RegistryChoice::new("a").preferred(true), "10.0.1.1:20880"),
            (RegistryChoice::new("b"), "10.0.2.1:20880"),
            (RegistryChoice::new("empty"), ""),
        ],
        &caller,
    )
    .with_failover(true);
    let error = block_on(invoker.invoke_in_mode(
        &Invocation::new("m", vec![], vec![]),
        &ClusterMode::Failfast,
    ))
    .unwrap_err();
    assert_eq!(error.kind(), RpcErrorKind::Timeout);
    assert!(error.message().contains("[a, b]"), "{}", error.message());
    assert!(!invoker.has_providers(2) && invoker.has_providers(0));
}

#[test]
fn a_single_registry_has_no_zone_layer() {
    let caller = Scripted::default();
    let invoker = zone_aware(
        &[(RegistryChoice::new("a").zone("hz"), "10.0.1.1:20880")],
        &caller,
    );
    let mut forced = call_in("sh");
    forced.set_attachment(REGISTRY_ZONE_FORCE, "true");
    let answer = block_on(invoker.invoke_in_mode(&forced, &ClusterMode::Failfast));
    assert_eq!(
        answer.unwrap(),
        "10.0.1.1:20880",
        "Dubbo wraps one registry in no zone-aware invoker"
    );
    assert!(ZoneAwareInvoker::<Scripted>::new(Vec::new(), RngSource::seeded(1)).is_none());
}
