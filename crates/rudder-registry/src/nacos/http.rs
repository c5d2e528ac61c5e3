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

/// How long before its end a token is renewed (Nacos gives 18,000 s by default).
const RENEW_BEFORE: Duration = Duration::from_secs(60);

/// The `accessToken` of a Nacos server with authentication on, for the HTTP calls the config centre
/// makes (nacos-sdk logs its own gRPC connections in; these are outside it). Logged in on first use
/// and again shortly before the token ends or after a `403`. Never in `Debug`.
pub(crate) struct Token {
    credentials: Option<(String, String)>,
    current: tokio::sync::Mutex<Option<(String, tokio::time::Instant)>>,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("auth", &self.credentials.is_some())
            .finish_non_exhaustive()
    }
}

impl Token {
    /// No token without a user name: the server has authentication off.
    pub(crate) fn new(username: Option<&str>, password: Option<&str>) -> Token {
        Token {
            credentials: username.map(|u| (u.to_owned(), password.unwrap_or("").to_owned())),
            current: tokio::sync::Mutex::new(None),
        }
    }

    /// `&accessToken=...` for a query (empty without credentials), logging in at `server` when
    /// there is no live token.
    pub(crate) async fn query(&self, server: &str, deadline: Duration) -> std::io::Result<String> {
        Ok(match self.value(server, deadline).await? {
            Some(token) => format!("&accessToken={}", form_encode(&token)),
            None => String::new(),
        })
    }

    /// The token itself (`None` without credentials), logging in at `server` when there is no live
    /// one: the naming stream sends it as the `accessToken` header of its requests.
    pub(crate) async fn value(
        &self,
        server: &str,
        deadline: Duration,
    ) -> std::io::Result<Option<String>> {
        let Some((user, password)) = &self.credentials else {
            return Ok(None);
        };
        let mut current = self.current.lock().await;
        let now = tokio::time::Instant::now();
        if let Some((token, _)) = current.as_ref().filter(|(_, until)| *until > now) {
            return Ok(Some(token.clone()));
        }
        let body = format!(
            "username={}&password={}",
            form_encode(user),
            form_encode(password)
        );
        let answer = request(server, "POST", "/nacos/v1/auth/login", &[], &body, deadline).await?;
        let (token, ttl) = read_login(&answer)?;
        let until = now + Duration::from_secs(ttl).saturating_sub(RENEW_BEFORE);
        *current = Some((token.clone(), until));
        Ok(Some(token))
    }

    /// Forgets the token (the server answered `403`: it may have restarted with new keys).
    pub(crate) async fn forget(&self) {
        *self.current.lock().await = None;
    }
}

/// The token and its lifetime in seconds from a login answer (`{"accessToken":..,"tokenTtl":..}`);
/// the answer's body is never quoted (it holds the token).
fn read_login(answer: &Answer) -> std::io::Result<(String, u64)> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Login {
        access_token: String,
        token_ttl: Option<u64>,
    }
    if answer.status != 200 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "login refused (HTTP {}): check username and password",
                answer.status
            ),
        ));
    }
    let login: Login =
        serde_json::from_str(&answer.body).map_err(|_| bad("login answer without accessToken"))?;
    Ok((login.access_token, login.token_ttl.unwrap_or(18_000)))
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

/// Any bytes as a Nacos server's HTTP answer, decoded as the config centre decodes it: the status
/// line, headers and body (by `Content-Length`, `chunked` or to the end), then a listener answer's
/// changed keys. Never panics; a decoded body is within 1 MiB (`MAX_BODY`). For the fuzz target
/// `nacos_http` (feature `fuzzing`).
#[cfg(feature = "fuzzing")]
pub fn check_answer(raw: &[u8]) {
    let Ok(answer) = parse(raw) else {
        return;
    };
    assert!(answer.body.len() as u64 <= MAX_BODY);
    let changed = crate::address::percent_decode(&answer.body.replace('+', " "));
    for entry in changed.split('\u{1}').filter(|e| !e.is_empty()) {
        let _ = entry.split('\u{2}').next();
    }
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
    fn a_login_answer_gives_its_token_and_a_refusal_names_no_secret() {
        let body = r#"{"accessToken":"s3cret","tokenTtl":60,"globalAdmin":true}"#;
        let raw = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let ok = parse(raw.as_bytes()).unwrap();
        assert_eq!(read_login(&ok).unwrap(), ("s3cret".to_owned(), 60));
        let refused =
            parse(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 12\r\n\r\nunknown user").unwrap();
        let error = read_login(&refused).unwrap_err().to_string();
        assert!(error.contains("HTTP 403"), "{error}");
        let junk = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\ns3cret!!").unwrap();
        assert!(!read_login(&junk)
            .unwrap_err()
            .to_string()
            .contains("s3cret"));
        assert!(!format!("{:?}", Token::new(Some("nacos"), Some("s3cret"))).contains("s3cret"));
    }

    #[tokio::test]
    async fn no_credentials_no_token_and_a_token_is_reused() {
        assert_eq!(
            Token::new(None, None)
                .query("127.0.0.1:1", Duration::from_secs(1))
                .await
                .unwrap(),
            ""
        );
        let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let at = server.local_addr().unwrap().to_string();
        let logins = tokio::spawn(async move {
            // One login only: the second query reuses the token.
            let (mut stream, _) = server.accept().await.unwrap();
            let mut head = vec![0u8; 4096];
            let n = tokio::io::AsyncReadExt::read(&mut stream, &mut head)
                .await
                .unwrap();
            let request = String::from_utf8_lossy(&head[..n]).into_owned();
            let body = "{\"accessToken\":\"t/1\",\"tokenTtl\":18000}";
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            tokio::io::AsyncWriteExt::write_all(&mut stream, answer.as_bytes())
                .await
                .unwrap();
            request
        });
        let token = Token::new(Some("nacos"), Some("p&w"));
        let first = token.query(&at, Duration::from_secs(5)).await.unwrap();
        assert_eq!(first, "&accessToken=t%2F1");
        assert_eq!(
            token.query(&at, Duration::from_secs(5)).await.unwrap(),
            first
        );
        let request = logins.await.unwrap();
        assert!(
            request.starts_with("POST /nacos/v1/auth/login "),
            "{request}"
        );
        assert!(
            request.ends_with("username=nacos&password=p%26w"),
            "{request}"
        );
    }

    #[test]
    fn values_are_form_encoded() {
        assert_eq!(form_encode("a b\u{2}c:d"), "a+b%02c%3Ad");
    }
}
