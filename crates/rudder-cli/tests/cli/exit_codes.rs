//! Exit code 3 is a registry that cannot be reached, for every command that reads one, and for each
//! way it cannot be: nothing listens there, what answers is not ZooKeeper, nothing answers within
//! `--connect-timeout`. Other failures keep their codes (2 for the command line, 1 for the call),
//! and `rudder --help` shows the table docs/cli.md has.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;

fn rudder(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args(args)
        .env("RUDDER_LOG", "off")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server that answers every connection as an HTTP server answers what it cannot read.
fn http_like() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut socket in listener.incoming().flatten() {
            let mut asked = [0u8; 64];
            let _ = socket.read(&mut asked);
            let _ = socket.write_all(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
        }
    });
    port
}

/// A server whose kernel accepts connections that nobody ever reads or answers.
fn silent() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

/// Each command that reads a registry, against `registry`.
fn commands(registry: &str) -> Vec<Vec<String>> {
    let service = ["--interface", "com.acme.Greeter"];
    let call = ["--method", "sayHello", "--args", "[\"rust\"]"];
    let lines: Vec<Vec<&str>> = vec![
        vec!["list"],
        vec!["providers"],
        vec!["simulate"],
        vec!["invoke"],
        vec!["bench", "--calls", "1"],
        vec!["demo", "--write-to-registry", "--calls", "10"],
    ];
    lines
        .into_iter()
        .map(|mut line| {
            let command = line[0];
            line.extend(["--registry", registry, "--connect-timeout", "1"]);
            if matches!(command, "providers" | "simulate" | "invoke" | "bench") {
                line.extend(service);
            }
            if matches!(command, "invoke" | "bench") {
                line.extend(call);
            }
            line.into_iter().map(str::to_owned).collect()
        })
        .collect()
}

#[test]
fn an_unreachable_registry_exits_3_from_every_command() {
    let (_listener, quiet) = silent();
    let registries = [
        (
            format!("zookeeper://127.0.0.1:{}", closed_port()),
            "connection refused",
        ),
        (
            format!("zookeeper://127.0.0.1:{}", http_like()),
            "is not ZooKeeper",
        ),
        (
            format!("zookeeper://127.0.0.1:{quiet}"),
            "unreachable after",
        ),
        (
            format!("nacos://127.0.0.1:{}", closed_port()),
            "connection refused",
        ),
    ];
    for (registry, says) in &registries {
        for command in commands(registry) {
            // The demo against Nacos and a silent server: one case each is enough for its path.
            if command[0] == "demo" && !says.contains("refused") {
                continue;
            }
            let args: Vec<&str> = command.iter().map(String::as_str).collect();
            let (code, err) = rudder(&args);
            assert_eq!(code, 3, "{args:?}: {err}");
            assert!(err.contains(says), "{args:?}: {err}");
        }
    }
}

#[test]
fn other_failures_keep_their_codes() {
    // The command line is wrong: 2, even with a registry that cannot be reached.
    let registry = format!("zookeeper://127.0.0.1:{}", closed_port());
    let (code, err) = rudder(&["list", "--registry", &registry, "--no-such-flag"]);
    assert_eq!(code, 2, "{err}");
    let (code, err) = rudder(&["list", "--registry", "zookeeper://"]);
    assert_eq!(code, 2, "{err}");
    // A provider that cannot be reached is a failed call: 1.
    let provider = format!("dubbo://127.0.0.1:{}/com.acme.Greeter", closed_port());
    let (code, err) = rudder(&["invoke", "--url", &provider, "--method", "sayHello"]);
    assert_eq!(code, 1, "{err}");
}

/// The exit codes `--help` lists are the ones docs/cli.md's table lists.
#[test]
fn help_and_the_guide_list_the_same_exit_codes() {
    let out = Command::new(env!("CARGO_BIN_EXE_rudder"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let listed = help
        .split_once("Exit codes:\n")
        .unwrap_or_else(|| panic!("no exit codes in --help:\n{help}"))
        .1;
    let in_help: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.parse::<u8>().is_ok())
        .collect();
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md"),
    )
    .unwrap();
    let in_guide: Vec<&str> = guide
        .lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.parse::<u8>().is_ok())
        .collect();
    assert_eq!(in_help, ["0", "1", "2", "3"], "{help}");
    assert_eq!(in_guide, in_help, "docs/cli.md's exit code table");
    assert!(help.contains("3  a registry cannot be reached"), "{help}");
}
