//! Migration parity on Nacos (issue 25, items 3 and "done when"): the set-up of
//! [`migration_parity`](crate::migration_parity) (three Java Dubbo 3.3.6 providers of one interface,
//! `register-mode` `instance`, `interface` and `all`), registered into one rnacos with Dubbo's own
//! `NacosRegistry`, `NacosServiceDiscovery` and `NacosMetadataReport`; under each consumer setting
//! (every `migration.step`, a threshold, `provided-by`) a Java 3.3.6 consumer (`MigrationProbe`,
//! through the same rnacos) and rudder reach the same providers through the same view, before and
//! after the all-mode provider stops. Both sides must also match the expectations written in
//! `migration_parity::cases`, which are Dubbo's, not the registry's.
//!
//! The layout each phase is checked against, read back from rnacos with nacos-sdk: the Nacos
//! service `providers:<interface>::` holds B and C, the service named after each application its
//! instance (A and C), and the config `dataId=<interface>, group=mapping` of the registry's
//! namespace (`public`) names A's and C's applications.

use std::collections::BTreeSet;

use nacos_sdk::api::config::ConfigServiceBuilder;
use rudder_it::Rnacos;

use crate::common;
use crate::migration_parity::{run_parity, Phase, Setup, PROVIDERS, SERVICE};
use crate::nacos_discovery::{naming, props};

#[tokio::test]
async fn java_dubbo_and_rudder_reach_the_same_providers_through_nacos_under_each_step() {
    let Some(nacos) = Rnacos::start().await else {
        return;
    };
    let setup = Setup {
        // Not used: the Java peers get the Nacos URL.
        zookeeper: "127.0.0.1:1".to_owned(),
        registry: nacos.url(),
        java_registry: Some(nacos.url()),
    };
    run_parity(&setup, |phase, ports| {
        assert_nacos_layout(&nacos, ports, phase)
    })
    .await;
}

/// What the running providers wrote into rnacos, as `phase` says.
async fn assert_nacos_layout(nacos: &Rnacos, ports: [u16; 3], phase: &Phase) {
    let naming = naming(nacos).await;
    let running = |i: usize| phase.running.contains(&PROVIDERS[i].0);
    let group = Some("DEFAULT_GROUP".to_owned());
    let listed = |service: String| {
        let naming = naming.clone();
        let group = group.clone();
        async move {
            let mut ports: Vec<u16> = naming
                .get_all_instances(service.clone(), group, Vec::new(), false)
                .await
                .unwrap_or_else(|e| panic!("list {service}: {e}"))
                .iter()
                .filter_map(|i| u16::try_from(i.port).ok())
                .collect();
            ports.sort_unstable();
            ports
        }
    };
    let want = |keep: &dyn Fn(&str) -> bool| -> Vec<u16> {
        let mut want: Vec<u16> = (0..3)
            .filter(|&i| running(i) && keep(PROVIDERS[i].2))
            .map(|i| ports[i])
            .collect();
        want.sort_unstable();
        want
    };
    assert_eq!(
        listed(format!("providers:{SERVICE}::")).await,
        want(&|mode| mode != "instance"),
        "{}: interface-level providers",
        phase.name
    );
    for (i, (_, application, mode)) in PROVIDERS.iter().enumerate() {
        let want: Vec<u16> = (running(i) && *mode != "interface")
            .then_some(ports[i])
            .into_iter()
            .collect();
        assert_eq!(
            listed((*application).to_owned()).await,
            want,
            "{}: instances of {application}",
            phase.name
        );
    }
    // The mapping is in the registry's namespace (the metadata report's), not the config centre's.
    let config = ConfigServiceBuilder::new(props(nacos, ""))
        .build()
        .await
        .expect("a config client");
    let read = async {
        let mut ticks = tokio::time::interval(std::time::Duration::from_millis(50));
        loop {
            ticks.tick().await;
            if let Ok(answer) = config
                .get_config(SERVICE.to_owned(), "mapping".to_owned())
                .await
            {
                return answer.content().clone();
            }
        }
    };
    let mapping = tokio::time::timeout(common::WAIT, read)
        .await
        .expect("the interface-application mapping in Nacos config");
    let apps: BTreeSet<&str> = mapping
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .collect();
    assert_eq!(
        apps,
        BTreeSet::from([PROVIDERS[0].1, PROVIDERS[2].1]),
        "A and C map the interface to their applications"
    );
}
