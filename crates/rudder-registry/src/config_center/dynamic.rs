//! The life cycle of the two dynamic configuration rules a consumer follows (Dubbo's
//! `AbstractConfiguratorListener.process`): the application rule and the service rule.

use crate::configurator::Configurators;
use crate::rule_parser::{parse_configurators, strip_security_keys, RuleParseError};

/// Which dynamic configuration rule a text belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuleSource {
    /// `<application>.configurators`: applied after the legacy `/configurators` rules.
    Application,
    /// `<interface>:<version>:<group>.configurators`: applied last, so it wins.
    Service,
}

/// What one rule text did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleOutcome {
    /// The rules in effect changed.
    Changed,
    /// They did not (same rules, or a text that yields no rule).
    Unchanged,
    /// The text could not be read; the previous rules stay.
    Rejected(RuleParseError),
}

/// The application and service rules in effect.
#[derive(Debug, Clone, Default)]
pub(crate) struct DynamicRules {
    application: Configurators,
    service: Configurators,
}

impl DynamicRules {
    /// Takes the current text of one rule: `None` (deleted) clears it; a text that cannot be read, or
    /// that yields no rule at all (`configs: []`), keeps what was in effect, as in Dubbo.
    pub(crate) fn update(&mut self, source: RuleSource, text: Option<&str>) -> RuleOutcome {
        let next = match text {
            None => Configurators::default(),
            Some(text) => match parse_configurators(text) {
                Err(error) => return RuleOutcome::Rejected(error),
                Ok(rules) if rules.is_empty() => return RuleOutcome::Unchanged,
                Ok(rules) => Configurators::from_rules(rules.into_iter().map(strip_security_keys)),
            },
        };
        let slot = match source {
            RuleSource::Application => &mut self.application,
            RuleSource::Service => &mut self.service,
        };
        if *slot == next {
            return RuleOutcome::Unchanged;
        }
        *slot = next;
        RuleOutcome::Changed
    }

    /// The rule sets in the order they apply: application, then service.
    pub(crate) fn in_order(&self) -> [&Configurators; 2] {
        [&self.application, &self.service]
    }

    /// Rules in effect.
    pub(crate) fn len(&self) -> usize {
        self.application.len() + self.service.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configurator::ConsumerSide;
    use rudder_common::url::DubboUrl;

    fn consumer() -> ConsumerSide {
        ConsumerSide {
            host: "10.0.0.9".into(),
            application: "shop".into(),
        }
    }

    fn weight(rules: &DynamicRules) -> Option<String> {
        let provider = DubboUrl::parse("dubbo://10.0.0.1:20880/S?weight=100").unwrap();
        Configurators::apply_all(rules.in_order(), provider, &consumer())
            .parameter("weight")
            .map(str::to_owned)
    }

    fn rule(weight: u32) -> String {
        format!("configVersion: v2.7\nscope: service\nkey: S\nenabled: true\nconfigs:\n- side: consumer\n  addresses: ['0.0.0.0']\n  parameters:\n    weight: {weight}\n")
    }

    #[test]
    fn delete_undoes_and_bad_or_empty_texts_keep_the_last_good_rules() {
        let mut rules = DynamicRules::default();
        assert_eq!(
            rules.update(RuleSource::Service, Some(&rule(200))),
            RuleOutcome::Changed
        );
        assert_eq!(weight(&rules).as_deref(), Some("200"));
        assert!(matches!(
            rules.update(RuleSource::Service, Some("configs: [oops")),
            RuleOutcome::Rejected(_)
        ));
        assert_eq!(weight(&rules).as_deref(), Some("200"));
        assert_eq!(
            rules.update(RuleSource::Service, Some("key: S\nconfigs: []\n")),
            RuleOutcome::Unchanged
        );
        assert_eq!(weight(&rules).as_deref(), Some("200"));
        assert_eq!(
            rules.update(RuleSource::Service, Some(&rule(200))),
            RuleOutcome::Unchanged
        );
        assert_eq!(
            rules.update(RuleSource::Service, None),
            RuleOutcome::Changed
        );
        assert_eq!(weight(&rules).as_deref(), Some("100"));
    }

    #[test]
    fn the_service_rule_wins_over_the_application_rule() {
        let mut rules = DynamicRules::default();
        let app = "configVersion: v2.7\nscope: application\nkey: shop\nconfigs:\n- side: consumer\n  parameters:\n    weight: 300\n";
        rules.update(RuleSource::Application, Some(app));
        assert_eq!(weight(&rules).as_deref(), Some("300"));
        rules.update(RuleSource::Service, Some(&rule(50)));
        assert_eq!(weight(&rules).as_deref(), Some("50"));
        rules.update(RuleSource::Service, None);
        assert_eq!(weight(&rules).as_deref(), Some("300"));
        assert_eq!(rules.len(), 1);
    }
}
