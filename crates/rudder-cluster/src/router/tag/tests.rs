use super::*;

fn map(entries: &[(&str, &[&str])]) -> HashMap<String, Vec<String>> {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
        .collect()
}

/// TagStateRouterTest.tagMultiLevelTest and tagLevelForceTest.
#[test]
fn multi_level_tags_fall_back_to_shorter_prefixes() {
    let beta: &[&str] = &["192.168.5.1:20880"];
    let team1: &[&str] = &["192.168.5.2:20880"];
    let partner1: &[&str] = &["192.168.5.3:20880"];
    let mut m = map(&[("beta", beta)]);
    let get = |m: &HashMap<String, Vec<String>>, t: &str| select_by_tag_level(m, t, false).cloned();
    assert_eq!(
        get(&m, "beta|team1|partner1"),
        Some(vec![beta[0].to_string()])
    );
    m.insert("beta|team1".into(), vec![team1[0].into()]);
    assert_eq!(
        get(&m, "beta|team1|partner1"),
        Some(vec![team1[0].to_string()])
    );
    m.insert("beta|team1|partner1".into(), vec![partner1[0].into()]);
    assert_eq!(
        get(&m, "beta|team1|partner1"),
        Some(vec![partner1[0].to_string()])
    );
    assert_eq!(get(&m, "beta2"), None);
    assert_eq!(get(&m, "beta|team2"), Some(vec![beta[0].to_string()]));
    assert_eq!(
        get(&m, "beta|team1|partner2"),
        Some(vec![team1[0].to_string()])
    );
    assert_eq!(
        select_by_tag_level(&m, "beta", true).cloned(),
        Some(vec![beta[0].to_string()])
    );
    assert_eq!(
        select_by_tag_level(&m, "beta|team2", true),
        None,
        "forced: exact lookup"
    );
}

#[test]
fn string_matches_follow_dubbo() {
    assert!(StringMatch::Exact("a".into()).is_match(Some("a")));
    assert!(!StringMatch::Exact("a".into()).is_match(None));
    assert!(StringMatch::Prefix("a".into()).is_match(Some("ab")));
    assert!(StringMatch::Wildcard("*".into()).is_match(Some("x")));
    assert!(!StringMatch::Wildcard("*".into()).is_match(None));
    assert!(StringMatch::Empty.is_match(None) && StringMatch::Empty.is_match(Some("")));
    assert!(StringMatch::NoEmpty.is_match(Some("x")) && !StringMatch::NoEmpty.is_match(Some("")));
}

#[test]
fn regex_matches_the_whole_value_as_java_does() {
    let rule = TagRule::parse(
        "tags:\n  - name: a\n    match:\n      - key: env\n        value: {regex: \"gray-[0-9]+\"}\n",
    )
    .unwrap();
    let StringMatch::Regex(regex) = &rule.tags[0].matches[0].value else {
        panic!("{rule:?}");
    };
    let m = StringMatch::Regex(regex.clone());
    // Java's String.matches: the whole input, not a substring.
    assert!(m.is_match(Some("gray-12")));
    assert!(!m.is_match(Some("gray-12x")) && !m.is_match(Some("xgray-1")));
    assert!(!m.is_match(None));
    // `exact` and `prefix` come first, `regex` before `wildcard`, as in Dubbo's StringMatch.
    let first = |yaml: &str| {
        let rule = TagRule::parse(&format!(
            "tags:\n  - name: a\n    match:\n      - key: k\n        value: {yaml}\n"
        ))
        .unwrap();
        rule.tags[0].matches[0].value.clone()
    };
    assert!(matches!(
        first("{prefix: a, regex: b}"),
        StringMatch::Prefix(_)
    ));
    assert!(matches!(
        first("{regex: b, wildcard: \"*\"}"),
        StringMatch::Regex(_)
    ));
    // A pattern Rust's engine cannot run (a back-reference) is read, and never matches.
    let unsupported = first("{regex: \"(a)\\\\1\"}");
    assert!(!unsupported.is_match(Some("aa")));
}
