//! The `rudder` commands the README and the guides show, with the output shown for them, read from
//! their fenced blocks as a shell would read the commands. Used by `it/tests/it/cli_docs_shapes.rs`
//! (runs them against a Java provider and checks each shown line) and, through `#[path]`, by
//! `crates/rudder-cli/tests/cli/docs_commands.rs` (every command parses); no dependencies, so both
//! compile the same file.
//!
//! Two ways of showing output are read:
//! - `rudder ...` (continued by a trailing `\`), then the `# ` lines right after it: what it printed
//!   on stdout, or on stderr from a `# stderr: ` line on (its continuation lines are `#` and more
//!   blanks). `# ...` leaves lines out; a `# (` line, and text after two blanks and `(`, explain;
//!   anything else ends the output.
//! - `$ rudder ...`, then every line up to the next `$ ` or the block's end: stdout.

/// One command and the output the page shows for it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Example {
    /// The command line, continuation lines joined, a trailing comment cut.
    pub command: String,
    /// The stdout lines shown (explanations cut), in order; `...` where lines were left out.
    pub stdout: Vec<String>,
    /// The stderr lines shown.
    pub stderr: Vec<String>,
    /// Shown as a terminal shows it (`$ ` style): `stdout` holds what both streams printed.
    pub terminal: bool,
}

/// The commands of `rudder`: a line starting `rudder <one of them> ` is a command.
pub const SUBCOMMANDS: [&str; 6] = ["list", "providers", "simulate", "invoke", "bench", "demo"];

/// The `rudder` commands in the fenced blocks of `text` (a Markdown page) with their shown output.
pub fn examples(text: &str) -> Vec<Example> {
    let mut found: Vec<Example> = Vec::new();
    let mut fenced = false;
    let mut pending: Option<String> = None;
    // The example whose output the next lines may be, and whether a prompt (`$ `) introduced it.
    let mut open: Option<bool> = None;
    let mut on_stderr = false;
    // Open parentheses of an explanation that goes on over the next lines.
    let mut explaining = 0i32;
    for raw in text.lines() {
        if raw.trim_start().starts_with("```") {
            fenced = !fenced;
            pending = None;
            open = None;
            continue;
        }
        if !fenced {
            continue;
        }
        if let Some(mut command) = pending.take() {
            command.push(' ');
            command.push_str(cut_comment(raw).trim());
            match command.strip_suffix('\\') {
                Some(more) => pending = Some(more.trim_end().to_owned()),
                None => push(&mut found, command, open == Some(true)),
            }
            continue;
        }
        let (prompted, line) = match raw.strip_prefix("$ ") {
            Some(rest) => (true, rest),
            None => (false, raw),
        };
        if SUBCOMMANDS
            .iter()
            .any(|c| line.starts_with(&format!("rudder {c} ")))
        {
            let command = cut_comment(line).trim().to_owned();
            open = Some(prompted);
            on_stderr = false;
            match command.strip_suffix('\\') {
                Some(more) => pending = Some(more.trim_end().to_owned()),
                None => push(&mut found, command, open == Some(true)),
            }
            continue;
        }
        let Some(example) = found.last_mut() else {
            continue;
        };
        match open {
            Some(true) if !prompted => example.stdout.push(raw.trim_end().to_owned()),
            Some(false) => {
                let Some(shown) = raw.strip_prefix('#') else {
                    open = None;
                    continue;
                };
                if let Some(rest) = shown.strip_prefix(" stderr: ") {
                    on_stderr = true;
                    example.stderr.push(explained_away(rest));
                    continue;
                }
                let continued = on_stderr && shown.starts_with("  ");
                let shown = shown.strip_prefix(' ').unwrap_or(shown);
                if explaining > 0 || shown.starts_with('(') || shown.starts_with(" (") {
                    explaining += balance(shown);
                    continue;
                }
                if shown.trim().is_empty() {
                    open = None;
                    continue;
                }
                let line = explained_away(if continued { shown.trim_start() } else { shown });
                if continued {
                    example.stderr.push(line);
                } else {
                    on_stderr = false;
                    example.stdout.push(line);
                }
            }
            _ => open = None,
        }
    }
    found
}

/// Opening minus closing parentheses of `line`.
fn balance(line: &str) -> i32 {
    line.chars()
        .map(|c| match c {
            '(' => 1,
            ')' => -1,
            _ => 0,
        })
        .sum()
}

fn push(found: &mut Vec<Example>, command: String, terminal: bool) {
    found.push(Example {
        command,
        terminal,
        ..Example::default()
    });
}

/// `line` without an explanation: text after two or more blanks and `(`.
fn explained_away(line: &str) -> String {
    let cut = line
        .match_indices("  (")
        .map(|(i, _)| i)
        .next()
        .unwrap_or(line.len());
    line[..cut].trim_end().to_owned()
}

/// `line` without a `#` comment that starts outside quotes after a blank.
pub fn cut_comment(line: &str) -> &str {
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
pub fn words(command: &str) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_their_shown_output_are_read() {
        let page = "\
text outside a block
```sh
# a heading comment
rudder invoke --url x \\
   --args '[\"a b\"]'   # a comment
# \"out\"
# ...
# stderr: call ok   (why)
#         2 calls
# (an explanation that goes on
#  over two lines)
#         3 calls

rudder list --registry r
# SERVICE  VERSION
other
# not output
```
```text
$ rudder providers --registry r
# a heading
ADDRESS  PROTOCOL
$ rudder providers ... --watch
```
";
        let found = examples(page);
        assert_eq!(
            found[0],
            Example {
                command: "rudder invoke --url x --args '[\"a b\"]'".into(),
                stdout: vec!["\"out\"".into(), "...".into()],
                stderr: vec!["call ok".into(), "2 calls".into(), "3 calls".into()],
                terminal: false,
            }
        );
        assert_eq!(found[1].stdout, ["SERVICE  VERSION"]);
        assert_eq!(found[2].stdout, ["# a heading", "ADDRESS  PROTOCOL"]);
        assert!(found[2].terminal && !found[1].terminal);
        assert_eq!(found[3].command, "rudder providers ... --watch");
        assert_eq!(found.len(), 4);
        assert_eq!(
            words("rudder invoke --args '[\"a b\"]' --p 'x#y'"),
            ["rudder", "invoke", "--args", "[\"a b\"]", "--p", "x#y"]
        );
    }
}
