//! `--attachment KEY=VALUE`: how `invoke`, `bench`, `providers --explain` and `simulate` read it and
//! the limit they all apply.

use anyhow::{bail, Result};

/// More attachments than this on one command line is a mistake.
pub(crate) const MAX_ATTACHMENTS: usize = 256;

/// Refuses more than [`MAX_ATTACHMENTS`] `--attachment` values (every command that takes them).
pub(crate) fn check_attachments(attachments: &[(String, String)]) -> Result<()> {
    if attachments.len() > MAX_ATTACHMENTS {
        bail!(
            "at most {MAX_ATTACHMENTS} --attachment values, got {}",
            attachments.len()
        );
    }
    Ok(())
}

/// Reads `--attachment KEY=VALUE` (clap's value parser for it).
pub(crate) fn attachment(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_owned(), value.to_owned()))
        }
        _ => Err(format!(
            "expected KEY=VALUE (a non-empty key), got {text:?}"
        )),
    }
}
