//! The few Nacos open-API calls the config centre makes over HTTP/1.1 (`/nacos/v1/cs/configs`, and
//! its long-polling `listener`), written here because nacos-sdk 0.8.3's config listener misses the
//! changes a rule watch lives on: a config absent when the listener is added is never reported when
//! it is created (its first fill counts as the initial one), and a deleted config is never reported.
//!
//! One request per connection (`Connection: close`), loopback or any server of the URL in turn; the
//! answer is read to its end, bounded by [`MAX_BODY`] and a deadline.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The largest answer read (a rule text is a few KiB; Nacos caps configs at 100 KiB by default).
pub(crate) const MAX_BODY: u64 = 1024 * 1024;

/// An answer: status and body.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: String,
}

/// `application/x-www-form-urlencoded` (and query) encoding of one value.
pub(crate) fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Sends one request to `server` (`host:port`) and reads the answer within `deadline`.
pub(crate) async fn request(
    server: &str,
    method: &str,
    path_and_query: &str,
    headers: &[(&str, String)],
    body: &str,
    deadline: Duration,
) -> std::io::Result<Answer> {
    let exchange = async {
        let mut stream = TcpStream::connect(server).await?;
        let mut head = format!(
            "{method} {path_and_query} HTTP/1.1\r\nHost: {server}\r\nConnection: close\r\nUser-Agent: rudder\r\n"
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        if method == "POST" {
            head.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        let mut raw = Vec::new();
        (&mut stream)
            .take(MAX_BODY + 16 * 1024)
            .read_to_end(&mut raw)
            .await?;
        parse(&raw)
    };
    match tokio::time::timeout(deadline, exchange).await {
        Ok(answer) => answer,
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no answer within {deadline:?}"),
        )),
    }
}

fn bad(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned())
}

/// Status line, headers, and a body as `Content-Length` or `chunked` frames it (or to the end).
fn parse(raw: &[u8]) -> std::io::Result<Answer> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of headers"))?;
    let head = std::str::from_utf8(&raw[..split]).map_err(|_| bad("headers not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse::<u16>().ok())
        .ok_or_else(|| bad("no status"))?;
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked") {
            chunked = true;
        } else if name.eq_ignore_ascii_case("content-length") {
            length = value.parse::<usize>().ok();
        }
    }
    let rest = &raw[split + 4..];
    let body = if chunked {
        let mut body = Vec::new();
        let mut at = rest;
        loop {
            let end = at
                .windows(2)
                .position(|w| w == b"\r\n")
                .ok_or_else(|| bad("bad chunk"))?;
            let size_text = std::str::from_utf8(&at[..end]).map_err(|_| bad("bad chunk"))?;
            let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| bad("bad chunk size"))?;
            at = &at[end + 2..];
            if size == 0 {
                break;
            }
            body.extend_from_slice(at.get(..size).ok_or_else(|| bad("short chunk"))?);
            at = at.get(size + 2..).ok_or_else(|| bad("short chunk"))?;
        }
        body
    } else {
        match length {
            Some(n) => rest.get(..n).ok_or_else(|| bad("short body"))?.to_vec(),
            None => rest.to_vec(),
        }
    };
    if body.len() as u64 > MAX_BODY {
        return Err(bad("answer too large"));
    }
    Ok(Answer {
        status,
        body: String::from_utf8(body).map_err(|_| bad("body not UTF-8"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_with_length_or_chunks() {
        let a = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello").unwrap();
        assert_eq!((a.status, a.body.as_str()), (200, "hello"));
        let c = parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n")
            .unwrap();
        assert_eq!(c.body, "hello");
        let nf = parse(b"HTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\nno!").unwrap();
        assert_eq!(nf.status, 404);
        assert!(parse(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhello").is_err());
        assert!(parse(b"garbage").is_err());
    }

    #[test]
    fn values_are_form_encoded() {
        assert_eq!(form_encode("a b\u{2}c:d"), "a+b%02c%3Ad");
    }
}
