//! The migration rule as Dubbo 3.3's `MigrationRule` reads it.

use super::*;

/// The rule of Dubbo's `MigrationRuleTest.test_parse` (and `MigrationRule`'s javadoc).
const DUBBO_RULE: &str = "key: demo-consumer\n\
    step: APPLICATION_FIRST\n\
    threshold: 1.0\n\
    proportion: 60\n\
    delay: 60\n\
    force: false\n\
    interfaces:\n\
    \x20 - serviceKey: DemoService:1.0.0\n\
    \x20   threshold: 0.5\n\
    \x20   proportion: 30\n\
    \x20   delay: 30\n\
    \x20   force: true\n\
    \x20   step: APPLICATION_FIRST\n\
    \x20 - serviceKey: GreetingService:1.0.0\n\
    \x20   step: FORCE_APPLICATION\n\
    applications:\n\
    \x20 - serviceKey: TestApplication\n\
    \x20   threshold: 0.3\n\
    \x20   proportion: 20\n\
    \x20   delay: 10\n\
    \x20   force: false\n\
    \x20   step: FORCE_INTERFACE\n";

fn no_consumer() -> ConsumerMigration {
    ConsumerMigration::default()
}

#[test]
fn dubbos_rule_test_resolves_as_in_java() {
    let rule = MigrationRule::parse(DUBBO_RULE).unwrap();
    assert_eq!(rule.key.as_deref(), Some("demo-consumer"));
    assert_eq!(rule.top.step, Some(MigrationStep::ApplicationFirst));
    assert_eq!(rule.top.threshold, Some(1.0));
    assert_eq!(
        (rule.top.proportion, rule.top.delay, rule.top.force),
        (Some(60), Some(60), Some(false))
    );
    assert_eq!(rule.interfaces.len(), 2);

    // The interface entry of DemoService:1.0.0 sets everything.
    let demo = rule.resolve("DemoService:1.0.0", &[], &no_consumer());
    assert_eq!(demo.threshold, 0.5);
    assert_eq!((demo.proportion, demo.delay, demo.force), (30, 30, true));
    assert_eq!(demo.step, MigrationStep::ApplicationFirst);
    assert_eq!(demo.step_from, Level::Interface("DemoService:1.0.0".into()));

    // GreetingService:1.0.0's entry sets only the step: the rest from the top level.
    let greeting = rule.resolve("GreetingService:1.0.0", &[], &no_consumer());
    assert_eq!(greeting.threshold, 1.0);
    assert_eq!(
        (greeting.proportion, greeting.delay, greeting.force),
        (60, 60, false)
    );
    assert_eq!(greeting.step, MigrationStep::ForceApplication);

    // No interface entry for 1.0.1; its mapping names TestApplication: that entry decides.
    let apps = ["TestApplication".to_owned()];
    let other = rule.resolve("GreetingService:1.0.1", &apps, &no_consumer());
    assert_eq!(other.threshold, 0.3);
    assert_eq!(
        (other.proportion, other.delay, other.force),
        (20, 10, false)
    );
    assert_eq!(other.step, MigrationStep::ForceInterface);
    assert_eq!(
        other.step_from,
        Level::Application("TestApplication".into())
    );

    // Neither: the top level.
    let top = rule.resolve("Unknown", &["SomeApp".to_owned()], &no_consumer());
    assert_eq!(
        (top.step, top.step_from),
        (MigrationStep::ApplicationFirst, Level::Rule)
    );
}

#[test]
fn the_consumer_setting_and_the_default_come_last() {
    let consumer = ConsumerMigration::read(|key| match key {
        "migration.step" => Some("FORCE_INTERFACE".into()),
        "migration.threshold" => Some("0.7".into()),
        _ => None,
    })
    .unwrap();
    // The initial rule (no node, or an empty one): the consumer setting decides.
    let init = MigrationRule::parse("").unwrap();
    let resolved = init.resolve("S", &[], &consumer);
    assert_eq!(
        (resolved.step, resolved.step_from, resolved.threshold),
        (MigrationStep::ForceInterface, Level::Consumer, 0.7)
    );
    let resolved = init.resolve("S", &[], &no_consumer());
    assert_eq!(
        (resolved.step, resolved.step_from, resolved.threshold),
        (MigrationStep::ApplicationFirst, Level::Default, 0.0)
    );
    assert_eq!(
        (resolved.proportion, resolved.delay, resolved.force),
        (100, 0, false)
    );
    // A rule's top level beats the consumer setting; a negative threshold is the default.
    let rule = MigrationRule::parse("step: FORCE_APPLICATION\nthreshold: -1").unwrap();
    let resolved = rule.resolve("S", &[], &consumer);
    assert_eq!(
        (resolved.step, resolved.step_from, resolved.threshold),
        (MigrationStep::ForceApplication, Level::Rule, 0.0)
    );
    assert!(ConsumerMigration::read(|_| Some("sideways".into())).is_err());
}

#[test]
fn application_entries_are_taken_in_mapping_order_field_by_field() {
    let rule = MigrationRule::parse(
        "step: FORCE_INTERFACE\napplications:\n  - serviceKey: b\n    step: FORCE_APPLICATION\n    \
         threshold: 0.2\n  - serviceKey: a\n    threshold: 0.9\n",
    )
    .unwrap();
    let resolved = rule.resolve("S", &["a".into(), "b".into()], &no_consumer());
    // `a` comes first and sets the threshold; only `b` sets the step.
    assert_eq!(resolved.threshold, 0.9);
    assert_eq!(resolved.step, MigrationStep::ForceApplication);
    assert_eq!(resolved.step_from, Level::Application("b".into()));
    assert!(rule.has_application_entries());
}

#[test]
fn what_java_rejects_is_rejected_whole() {
    for (text, why) in [
        ("step: force_application", "upper case"),
        ("step: SIDEWAYS", "SIDEWAYS"),
        ("threshold: many", "threshold"),
        ("proportion: 60.5", "proportion"),
        ("delay: soon", "delay"),
        (
            "interfaces:\n  - just-a-string",
            "interfaces[0] is not a map",
        ),
        (
            "interfaces:\n  - serviceKey: S\n    step: NOPE",
            "interfaces[0]",
        ),
        ("- a\n- b", "not a YAML map"),
        ("key: [unclosed", "not YAML"),
        ("step: [FORCE_INTERFACE]", "not a single value"),
    ] {
        let error = MigrationRule::parse(text).unwrap_err();
        assert!(error.contains(why), "{text:?}: {error}");
    }
    // What Java takes: a non-list `interfaces` is ignored, `force` reads any text, numbers in
    // Java's forms, a null `interfaces:` (Dubbo's MigrationRuleListenerTest rule).
    let rule = MigrationRule::parse(
        "interfaces: nope\nforce: yes-please\nthreshold: ' 2.5f'\nproportion: '+30'\n",
    )
    .unwrap();
    assert_eq!(rule.top.force, Some(false));
    assert_eq!(rule.top.threshold, Some(2.5));
    assert_eq!(rule.top.proportion, Some(30));
    assert!(rule.interfaces.is_empty());
    let listener_rule = "key: demo-consumer\nstep: APPLICATION_FIRST\nthreshold: 1.0\n\
                         proportion: 60\ndelay: 60\nforce: false\ninterfaces:\n";
    assert!(MigrationRule::parse(listener_rule)
        .unwrap()
        .interfaces
        .is_empty());
}

#[test]
fn numbers_read_as_java_reads_them() {
    assert_eq!(java_float("1"), Ok(1.0));
    assert_eq!(java_float("0.5d"), Ok(0.5));
    assert_eq!(java_float("1e2"), Ok(100.0));
    assert!(java_float("1e").is_err());
    assert!(java_float("inf").is_err());
    assert!(java_float("").is_err());
    assert_eq!(java_int("-7"), Ok(-7));
    assert!(java_int("1_000").is_err());
    assert!(java_int("99999999999").is_err());
    assert!(java_int(" 7").is_err());
}

#[test]
fn the_node_is_under_the_migration_group() {
    assert_eq!(
        format!(
            "{}/{}",
            crate::config_center::group_path("/dubbo", MIGRATION_GROUP),
            rule_key("shop")
        ),
        "/dubbo/config/DUBBO_SERVICEDISCOVERY_MIGRATION/shop.migration"
    );
}
