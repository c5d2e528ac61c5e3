//! Any registry URL: parsing never panics, and no password ever shows in `Display`, `Debug` or an error.
//!
//! Input: one byte choosing the mode, then text. Mode even: the text is the whole URL (no panic, and
//! an address with credentials shows `<redacted>` in `Debug`). Mode odd: the text is split at its first
//! newline into a password tail and the rest, and the URL is `zookeeper://user:<MARKER><tail>@<rest>`:
//! the marker must appear in nothing the parse produces, success or failure.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rudder_registry::RegistryAddress;

/// The head of every fuzzed password; letters, so it can never pass for a port.
const MARKER: &str = "Pw9Marker";

fuzz_target!(|data: &[u8]| {
    let Some((&mode, text)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    if mode % 2 == 0 {
        if let Ok(address) = RegistryAddress::parse(text) {
            let _ = address.connect_string();
            let shown = format!("{address:?}");
            assert_eq!(
                address.has_credentials(),
                shown.contains("username: Some"),
                "{shown}"
            );
        }
        return;
    }
    let (tail, rest) = text.split_once('\n').unwrap_or((text, "127.0.0.1:2181"));
    if text.contains(MARKER) {
        // The marker written elsewhere (as a host, say) is not the password showing.
        return;
    }
    let url = format!("zookeeper://user:{MARKER}{tail}@{rest}");
    match RegistryAddress::parse(&url) {
        Ok(address) => {
            for shown in [
                address.to_string(),
                format!("{address:?}"),
                address.connect_string(),
                address.root().to_owned(),
            ] {
                assert!(
                    !shown.contains(MARKER),
                    "{url:?} shows the password: {shown}"
                );
            }
            assert!(address.has_credentials());
        }
        Err(error) => {
            for shown in [error.to_string(), format!("{error:?}")] {
                assert!(!shown.contains(MARKER), "{url:?} echoed in {shown}");
            }
        }
    }
});
