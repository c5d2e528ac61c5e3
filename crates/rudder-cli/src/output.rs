//! `--format`: text for people, JSON for scripts.

use clap::ValueEnum;

/// How a listing is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub(crate) enum Format {
    /// Aligned columns under a title line.
    #[default]
    Text,
    /// One JSON array.
    Json,
}
