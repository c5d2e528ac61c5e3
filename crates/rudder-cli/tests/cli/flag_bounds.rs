//! Hostile numeric flags: every count, timeout and instant outside its documented range is a usage
//! error (exit code 2, clap's message naming the flag and the range) before anything runs, and the
//! largest valid call count streams instead of sizing a buffer up front.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const PROVIDER: &str = "dubbo://10.0.0.1:20880/com.acme.Greeter?weight=1";
const U64_MAX: &str = "18446744073709551615";

/// Runs the binary; returns its exit code and stderr.
fn rudder(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let mut output = out.stdout;
    output.extend_from_slice(&out.stderr);
    (out.status.code(), String::from_utf8(output).unwrap())
}

/// Asserts that `args` is refused as bad usage, naming `flag`, the value and the range.
fn refused(args: &[&str], flag: &str, value: &str, range: &str) {
    let (code, output) = rudder(args);
    assert_eq!(code, Some(2), "{args:?} was not refused as usage: {output}");
    assert!(
        output.contains(&format!("invalid value '{value}' for '{flag}")),
        "{args:?}: the message does not name {flag} and {value}: {output}"
    );
    assert!(
        output.contains(range),
        "{args:?}: the message does not give the range {range}: {output}"
    );
    assert!(!output.contains("panicked"), "{args:?}: {output}");
}

#[test]
fn simulate_refuses_call_counts_out_of_range() {
    for calls in [U64_MAX, "1000000001", "0"] {
        refused(
            &["simulate", "--provider", PROVIDER, "--calls", calls],
            "--calls",
            calls,
            "1..=1000000000",
        );
    }
    let (code, output) = rudder(&["simulate", "--provider", PROVIDER, "--calls", "-1"]);
    assert_eq!(code, Some(2), "{output}");
}

#[test]
fn simulate_refuses_instants_out_of_range() {
    for now in ["-9223372036854775808", "9223372036854775807", "-1"] {
        let flag = format!("--now={now}");
        refused(
            &["simulate", "--provider", PROVIDER, "--weights", &flag],
            "--now",
            now,
            "0..=253402300799999",
        );
    }
}

#[test]
fn demo_refuses_counts_out_of_range() {
    for calls in [U64_MAX, "1000001", "0"] {
        refused(&["demo", "--calls", calls], "--calls", calls, "1..=1000000");
    }
    for concurrency in [U64_MAX, "1025", "0"] {
        refused(
            &["demo", "--concurrency", concurrency],
            "--concurrency",
            concurrency,
            "1..=1024",
        );
    }
}

#[test]
fn invoke_refuses_counts_and_timeouts_out_of_range() {
    let base = ["invoke", "--url", "dubbo://127.0.0.1:9/com.acme.Greeter"];
    let with = |extra: [&'static str; 4]| -> Vec<&'static str> {
        base.iter().copied().chain(extra).collect()
    };
    for calls in [U64_MAX, "1000000001", "0"] {
        let args = with(["--method", "sayHello", "--calls", calls]);
        refused(&args, "--calls", calls, "1..=1000000000");
    }
    for timeout in [U64_MAX, "2147483648", "0"] {
        let args = with(["--method", "sayHello", "--timeout", timeout]);
        refused(&args, "--timeout", timeout, "1..=2147483647");
    }
}

#[test]
fn providers_refuses_connect_timeouts_out_of_range() {
    for seconds in [U64_MAX, "3601", "0"] {
        refused(
            &[
                "providers",
                "--registry",
                "zookeeper://127.0.0.1:9",
                "--interface",
                "com.acme.Greeter",
                "--connect-timeout",
                seconds,
            ],
            "--connect-timeout",
            seconds,
            "1..=3600",
        );
    }
}

/// The largest valid count under a 1 GiB address-space limit: a buffer of one argument list per call
/// would need 24 GB, so the first picks can only arrive if the calls are streamed.
#[test]
fn simulate_streams_the_largest_call_count() {
    let script = format!(
        "ulimit -v 1048576 && exec '{}' simulate --provider '{PROVIDER}' --calls 1000000000",
        env!("CARGO_BIN_EXE_rudder")
    );
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Vec<String> = lines.by_ref().take(3).map(Result::unwrap).collect();
    child.kill().unwrap();
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(
        first, ["10.0.0.1:20880"; 3],
        "no streamed picks ({status}): {stderr}"
    );
}

/// A large summary is exact: smooth round robin over weights 1:2:3 splits 600000 calls 1:2:3.
#[test]
fn simulate_summarises_a_large_count_exactly() {
    let out = Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args([
            "simulate",
            "--provider",
            "dubbo://10.0.0.1:20880/com.acme.Greeter?weight=1",
            "--provider",
            "dubbo://10.0.0.2:20880/com.acme.Greeter?weight=2",
            "--provider",
            "dubbo://10.0.0.3:20880/com.acme.Greeter?weight=3",
            "--loadbalance",
            "roundrobin",
            "--calls",
            "600000",
            "--summary",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "10.0.0.1:20880 100000 16.7 % (weight 1)\n10.0.0.2:20880 200000 33.3 % (weight 2)\n\
         10.0.0.3:20880 300000 50.0 % (weight 3)\n"
    );
}
