//! Every `rudder ...` command shown in the README and the guides (`docs/*.md`) is one the tool takes:
//! run as shown (continuation lines joined, comments cut), with every registry or provider address on
//! loopback replaced by a port nothing listens on, none ends in a usage error (clap's `Usage:`) or a
//! panic. Commands with `...` placeholders are left out. (That the output shown has the shape rudder
//! prints is checked against it/'s Java provider by `it/tests/it/cli_docs_shapes.rs`.)

use std::path::{Path, PathBuf};
use std::process::Command;

// The reader of the docs' examples that `it/tests/it/cli_docs_shapes.rs` uses too (one file, no
// dependencies), so that both tests see the same commands.
#[path = "../../../../it/src/doc_examples.rs"]
#[allow(dead_code, unreachable_pub)]
mod doc_examples;

use doc_examples::{words, SUBCOMMANDS};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `rudder` command lines of the fenced blocks of `text`.
fn commands(text: &str) -> Vec<String> {
    doc_examples::examples(text)
        .into_iter()
        .map(|e| e.command)
        .collect()
}

#[test]
fn the_commands_the_docs_show_parse() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut pages = vec![repository().join("README.md")];
    for entry in std::fs::read_dir(repository().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut ran = 0;
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for command in commands(&text) {
            if command.contains("...") || command.contains(" demo") {
                continue;
            }
            check(&command, &page.display().to_string(), closed);
            ran += 1;
        }
    }
    assert!(ran >= 20, "only {ran} commands found in the docs");
}

/// Runs `command` with its loopback addresses on `closed`: it must not end in a usage error or a
/// panic.
fn check(command: &str, origin: &str, closed: u16) {
    let local = command
        .replace("127.0.0.1:2181", &format!("127.0.0.1:{closed}"))
        .replace("127.0.0.1:20880", &format!("127.0.0.1:{closed}"))
        .replace("127.0.0.1:50051", &format!("127.0.0.1:{closed}"));
    let args = words(&local);
    assert_eq!(args[0], "rudder", "{command}");
    let out = Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args(&args[1..])
        .current_dir(repository())
        .env("RUDDER_LOG", "off")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("Usage: rudder") && out.status.code() != Some(101),
        "{origin}: `{command}` is not a command rudder takes:\n{stderr}"
    );
}

/// Each command's `--help` ends with examples, and each example is a command rudder takes.
#[test]
fn every_commands_help_has_examples_that_parse() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for subcommand in SUBCOMMANDS {
        let out = Command::new(env!("CARGO_BIN_EXE_rudder"))
            .args([subcommand, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        let examples = help
            .split_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("`rudder {subcommand} --help` has no examples:\n{help}"))
            .1;
        let block: Vec<&str> = examples.lines().map(str::trim_start).collect();
        let found = commands(&format!("```sh\n{}\n```\n", block.join("\n")));
        assert!(found.len() >= 2, "{subcommand}: {examples}");
        for command in found {
            // The demo runs for a while (and against a registry refuses a closed port): parsed only.
            if subcommand == "demo" {
                continue;
            }
            check(&command, &format!("rudder {subcommand} --help"), closed);
        }
    }
}

#[test]
fn command_lines_are_read_as_a_shell_reads_them() {
    let text = "```sh\nrudder invoke --url x \\\n   --args '[\"a b\"]'   # a comment\nother\n```\nrudder list\n";
    assert_eq!(commands(text), ["rudder invoke --url x --args '[\"a b\"]'"]);
    assert_eq!(
        words("rudder invoke --args '[\"a b\"]' --p 'x#y'"),
        ["rudder", "invoke", "--args", "[\"a b\"]", "--p", "x#y"]
    );
}
