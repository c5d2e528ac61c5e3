//! `rudder simulate` end to end: the real binary, its output and its exit codes.

use std::process::Command;

fn rudder(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const A: &str = "dubbo://10.0.0.1:20880/com.acme.Greeter?weight=1";
const B: &str = "dubbo://10.0.0.2:20880/com.acme.Greeter?weight=2";
const C: &str = "dubbo://10.0.0.3:20880/com.acme.Greeter?weight=3";

#[test]
fn round_robin_prints_the_java_sequence() {
    let (code, out, err) = rudder(&[
        "simulate",
        "--provider",
        A,
        "--provider",
        B,
        "--provider",
        C,
        "--loadbalance",
        "roundrobin",
        "--calls",
        "6",
    ]);
    assert_eq!(code, 0, "{err}");
    let hosts: Vec<&str> = out.lines().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(
        hosts,
        ["10.0.0.3", "10.0.0.2", "10.0.0.1", "10.0.0.3", "10.0.0.2", "10.0.0.3"]
    );
}

#[test]
fn weights_apply_warmup_at_the_given_instant() {
    let warming = "dubbo://10.0.0.9:20880/com.acme.Greeter?timestamp=1000000&weight=100";
    let encoded = "dubbo%3A%2F%2F10.0.0.8%3A20880%2Fcom.acme.Greeter%3FsayHello.weight%3D40";
    let (code, out, err) = rudder(&[
        "simulate",
        "--provider",
        warming,
        "--provider",
        encoded,
        "--now",
        "1306000",
        "--weights",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "10.0.0.9:20880 51\n10.0.0.8:20880 40\n");
}

#[test]
fn summary_counts_follow_weights_with_a_seed() {
    let args = [
        "simulate",
        "--provider",
        A,
        "--provider",
        B,
        "--provider",
        C,
        "--calls",
        "6000",
        "--seed",
        "9",
        "--summary",
    ];
    let (code, out, err) = rudder(&args);
    assert_eq!(code, 0, "{err}");
    let counts: Vec<usize> = out
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(counts.iter().sum::<usize>(), 6000);
    for (count, weight) in counts.iter().zip([1usize, 2, 3]) {
        assert!(count.abs_diff(weight * 1000) < 150, "{out}");
    }
    assert_eq!(rudder(&args).1, out, "same seed, same split");
}

#[test]
fn consistent_hash_routes_by_arguments_from_a_file() {
    let dir = std::env::temp_dir().join(format!("rudder-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let providers = dir.join("providers.txt");
    let lines: Vec<String> = (1..=5)
        .map(|p| format!("test://127.0.0.1:{p}/DemoService"))
        .collect();
    std::fs::write(
        &providers,
        format!("# Dubbo's five test invokers\n{}\n", lines.join("\n")),
    )
    .unwrap();
    let args_file = dir.join("args.txt");
    std::fs::write(&args_file, "[\"arg1\"]\n[\"arg0\"]\n[\"arg1\"]\n").unwrap();
    let (code, out, err) = rudder(&[
        "simulate",
        "--providers-file",
        providers.to_str().unwrap(),
        "--loadbalance",
        "consistenthash",
        "--args-file",
        args_file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    // Owners from the Java-generated vectors: arg1 -> :2, arg0 -> :4.
    assert_eq!(out, "127.0.0.1:2\n127.0.0.1:4\n127.0.0.1:2\n");
}

#[test]
fn unknown_balancer_lists_the_registered_names() {
    let (code, out, err) = rudder(&["simulate", "--provider", A, "--loadbalance", "nosuchlb"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.contains("unknown load balancer \"nosuchlb\"") && err.contains("roundrobin"),
        "{err}"
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    let (code, _, err) = rudder(&["simulate", "--provider", "dubbo://h:99999/S"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--provider #1") && err.contains("invalid port"),
        "{err}"
    );
    // An unusable parameter is ignored with a warning; the provider stays.
    let (code, out, err) = rudder(&[
        "simulate",
        "--provider",
        "dubbo://h:1/S?weight=lots",
        "--weights",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "h:1 100");
    assert!(err.contains("weight") && err.contains("lots"), "{err}");
    let (code, _, err) = rudder(&["simulate"]);
    assert_eq!(code, 2);
    assert!(err.contains("no providers"), "{err}");
    let (code, _, _) = rudder(&["simulate", "--provider", A, "--args", "[1,"]);
    assert_eq!(code, 2);
}

#[test]
fn an_unreachable_registry_is_a_clear_error_that_never_shows_the_password() {
    // Nothing listens on port 1: refused at once, not after the 10 s connect timeout.
    let registry = "zookeeper://admin:s3cret@127.0.0.1:1";
    for command in ["providers", "list", "simulate", "invoke"] {
        let mut args = vec![command, "--registry", registry];
        if command != "list" {
            args.extend(["--interface", "com.acme.Greeter"]);
        }
        if command == "invoke" {
            args.extend(["--method", "sayHello"]);
        }
        let started = std::time::Instant::now();
        let (code, out, err) = rudder(&args);
        // Exit code 3: the registry cannot be reached (not 2, the command line's mistakes).
        assert_eq!(code, 3, "{command}: {err}");
        assert!(out.is_empty(), "{command}: {out}");
        assert!(
            err.contains("connection refused by 127.0.0.1:1"),
            "{command}: {err}"
        );
        assert!(!err.contains("s3cret"), "the password leaked: {err}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{command} waited {:?} for a refused connection",
            started.elapsed()
        );
    }
}

#[test]
fn consumer_params_merge_as_dubbo_resolves_them() {
    // The consumer's `weight` beats the providers' plain `weight`, but a provider's `sayHello.weight`
    // beats the consumer's plain one; the consumer's `sayHello.weight` beats everything.
    let b = "dubbo://10.0.0.2:20880/com.acme.Greeter?weight=2&sayHello.weight=9";
    let weights = |extra: &[&str]| {
        let mut args = vec![
            "simulate",
            "--provider",
            A,
            "--provider",
            b,
            "--now",
            "0",
            "--weights",
        ];
        args.extend_from_slice(extra);
        let (code, out, err) = rudder(&args);
        assert_eq!(code, 0, "{err}");
        out.lines()
            .map(|l| l.split_whitespace().nth(1).unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(weights(&[]), ["1", "9"]);
    assert_eq!(weights(&["--param", "weight=5"]), ["5", "9"]);
    assert_eq!(
        weights(&["--param", "weight=5", "--param", "sayHello.weight=7"]),
        ["7", "7"]
    );
    let (code, _, err) = rudder(&["simulate", "--provider", A, "--param", "=5"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("KEY=VALUE"), "{err}");
    let (code, _, err) = rudder(&[
        "simulate",
        "--provider",
        A,
        "--param",
        "sayHello.loadbalance=nosuchlb",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("nosuchlb"), "{err}");
}

#[test]
fn the_summary_gives_shares_and_notes_what_a_simulation_cannot_show() {
    let listing = "dubbo://10.0.0.1:20880/com.acme.Greeter?weight=1&methods=sayHello,add";
    let other = "dubbo://10.0.0.2:20880/com.acme.Greeter?weight=3&methods=sayHello,add";
    let (code, out, err) = rudder(&[
        "simulate",
        "--provider",
        listing,
        "--provider",
        other,
        "--loadbalance",
        "roundrobin",
        "--calls",
        "400",
        "--summary",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "10.0.0.1:20880 100 25.0 % (weight 1)\n10.0.0.2:20880 300 75.0 % (weight 3)\n"
    );
    assert!(err.is_empty(), "{err}");
    for (balancer, reads) in [
        ("leastactive", "the fewest calls in flight"),
        ("shortestresponse", "the shortest measured response times"),
    ] {
        let (code, _, err) = rudder(&[
            "simulate",
            "--provider",
            listing,
            "--loadbalance",
            balancer,
            "--summary",
        ]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            err,
            format!(
                "note: {balancer} picks by {reads}; a simulation makes no calls, so it acts as \
                 weighted random here until calls are in flight or measured\n"
            )
        );
    }
    let (code, _, err) = rudder(&["simulate", "--provider", listing, "--method", "sayHi"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        "warning: the providers list no method sayHi (they list: add, sayHello); simulating it anyway\n"
    );
}

#[test]
fn version_and_group_apply_to_given_providers() {
    let dir = std::env::temp_dir().join(format!("rudder-simulate-vg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("providers.txt");
    std::fs::write(
        &file,
        "dubbo://10.0.0.1:20880/com.acme.Greeter?version=1.0.0\n\
         dubbo://10.0.0.2:20880/com.acme.Greeter?version=2.0.0&group=blue\n\
         dubbo://10.0.0.3:20880/com.acme.Greeter?version=2.0.0\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["simulate", "--providers-file", file, "--weights"];
        args.extend_from_slice(extra);
        rudder(&args)
    };
    // Before, --version and --group needed --registry (or were ignored): all three were used.
    let (code, out, err) = run(&["--version", "2.0.0"]);
    assert_eq!((code, out.as_str()), (0, "10.0.0.3:20880 100\n"), "{err}");
    assert_eq!(
        err,
        "# 1 of the 3 given providers match --version / --group\n"
    );
    let (code, out, err) = run(&["--version", "2.0.0", "--group", "blue"]);
    assert_eq!((code, out.as_str()), (0, "10.0.0.2:20880 100\n"), "{err}");
    let (code, out, _) = run(&["--version", "*", "--group", "*"]);
    assert_eq!((code, out.lines().count()), (0, 3));
    let (code, out, err) = run(&["--version", "3.0.0"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains("has version 3.0.0; seen: 1.0.0, 2.0.0"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
