//! Turns a fuzz input into the Hessian bodies to decode.
//!
//! Amplification needs bodies of hundreds of kilobytes built from one long name and a short unit
//! repeated many times, which random mutation of small inputs rarely reaches. So besides the input
//! as it is, an input that starts with `0xff` is also read as a recipe:
//! `0xff, count (u16, big-endian), split (u8), rest`: the body is `rest[..split]` followed by
//! `rest[split..]` repeated `count × 16` times, at most [`MAX_BODY`] bytes in all.

/// Largest body built from a recipe. An 8 MiB payload is the real maximum; 8 KiB of repeated objects
/// or typed lists is already past the small limits' budget (so the budget path is reached), and keeps
/// each input well under a millisecond under ASan (64 KiB bodies of short strings cost 70 ms each).
/// Full-size bodies are the regression tests in `tests/hessian/amplification.rs`.
pub const MAX_BODY: usize = 8 << 10;

/// The input itself, and the body its recipe builds, if it is one.
#[allow(dead_code)] // `decode` decodes the two differently
pub fn bodies(data: &[u8]) -> impl Iterator<Item = std::borrow::Cow<'_, [u8]>> {
    std::iter::once(std::borrow::Cow::Borrowed(data))
        .chain(expand(data).map(std::borrow::Cow::Owned))
}

/// The body `data`'s recipe builds, if `data` is one.
pub fn expand(data: &[u8]) -> Option<Vec<u8>> {
    let (&[0xff, hi, lo, split], rest) = data.split_first_chunk::<4>()? else {
        return None;
    };
    let count = usize::from(u16::from_be_bytes([hi, lo])) * 16;
    let (prefix, unit) = rest.split_at(usize::from(split).min(rest.len()));
    let mut body = prefix.to_vec();
    if !unit.is_empty() {
        let repeats = count.min(MAX_BODY.saturating_sub(body.len()) / unit.len());
        for _ in 0..repeats {
            body.extend_from_slice(unit);
        }
    }
    Some(body)
}
