//! Every `rudder ...` command shown in the README and the guides (`docs/*.md`) is one the tool takes:
//! run as shown (continuation lines joined, comments cut), with every registry or provider address on
//! loopback replaced by a port nothing listens on, none ends in a usage error (clap's `Usage:`) or a
//! panic. Commands with `...` placeholders are left out. (That the output has the shape shown is
//! checked against real providers in `it/tests/it/cli_dubbo_user.rs` and `cli_read_only.rs`.)

use std::path::{Path, PathBuf};
use std::process::Command;

/// The commands of `rudder`: a line starting `rudder <one of them> ` is a command.
const SUBCOMMANDS: [&str; 6] = ["list", "providers", "simulate", "invoke", "bench", "demo"];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `rudder` command lines of the fenced blocks of `text`, continuation lines joined and trailing
/// comments cut.
fn commands(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            pending.clear();
            continue;
        }
        if !fenced {
            continue;
        }
        let line = cut_comment(line);
        if !pending.is_empty() {
            pending.push(' ');
            pending.push_str(line.trim());
        } else if SUBCOMMANDS
            .iter()
            .any(|c| line.starts_with(&format!("rudder {c} ")))
        {
            pending = line.trim().to_owned();
        } else {
            continue;
        }
        if pending.ends_with('\\') {
            pending.pop();
            pending.truncate(pending.trim_end().len());
            continue;
        }
        found.push(std::mem::take(&mut pending));
    }
    found
}

/// `line` without a `#` comment that starts outside quotes after a space.
fn cut_comment(line: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if previous.is_whitespace() => return line[..i].trim_end(),
            _ => {}
        }
        previous = c;
    }
    line.trim_end()
}

/// Shell words: blanks split, single and double quotes group (no escapes inside single quotes).
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut started = false;
    for c in command.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (_, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
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
