//! Test helpers shared by rudder's crates: a dev-dependency of each, never a dependency, never
//! published (cargo drops a path-only dev-dependency from a packaged manifest).
//!
//! Without features it depends on no rudder crate, so every crate of the workspace, the lowest
//! included, can use it. The feature `cluster` adds `scripted`: providers answering from a script
//! behind rudder-cluster's `Caller` seam (for rudder-cluster's integration tests and those above);
//! the feature `urls` adds `urls`: many provider URLs shaped like real registrations (rudder-common).

use std::error::Error;

pub mod pki;
#[cfg(feature = "cluster")]
pub mod scripted;
#[cfg(feature = "urls")]
pub mod urls;
pub mod wait;

/// The texts a chain printer makes of `error`: a walk over `source()` printing each link with `{}`,
/// the same walk with `{:#}`, anyhow's one-line `{:#}` and its `{:?}` report.
pub fn printed(error: impl Error + Send + Sync + 'static) -> Vec<String> {
    let (mut plain, mut alternate) = (String::new(), String::new());
    let mut link: Option<&(dyn Error + 'static)> = Some(&error);
    while let Some(e) = link {
        plain.push_str(&format!("{e}\n"));
        alternate.push_str(&format!("{e:#}\n"));
        link = e.source();
    }
    let error = anyhow::Error::new(error);
    vec![plain, alternate, format!("{error:#}"), format!("{error:?}")]
}

/// Asserts that each of `parts` is in every printed form of `error` ([`printed`]) exactly once: an
/// error says its own part in its `Display` and leaves its cause to `source()`.
///
/// ```
/// #[derive(Debug)]
/// struct Outer(std::io::Error);
/// impl std::fmt::Display for Outer {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("reading the rule failed")
///     }
/// }
/// impl std::error::Error for Outer {
///     fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
///         Some(&self.0)
///     }
/// }
/// let error = Outer(std::io::Error::other("disk full"));
/// rudder_test_support::assert_each_once(error, &["reading the rule failed", "disk full"]);
/// ```
///
/// # Panics
/// When a part is missing from a printed form, or there more than once.
pub fn assert_each_once(error: impl Error + Send + Sync + 'static, parts: &[&str]) {
    for text in printed(error) {
        for part in parts {
            assert_eq!(text.matches(part).count(), 1, "{part:?} in {text:?}");
        }
    }
}
