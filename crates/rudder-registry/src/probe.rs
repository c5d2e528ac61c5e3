//! A first look at a registry's servers when a session does not come at once: whether anything
//! listens there, and whether what listens is ZooKeeper, so a wrong address fails at once with what is
//! wrong instead of after the whole connect timeout.
//!
//! Each server gets one TCP connection and ZooKeeper's four-letter word `srvr`, which every ZooKeeper
//! answers in text (its version and state, or, where the word is not allowed, "srvr is not executed
//! because it is not in the whitelist") and then closes. An HTTP server, a Dubbo port or a database
//! answers something else, and that answer is the verdict. A server that answers nothing in time, one
//! that closes without a word is no verdict: the client's own attempt decides. A TLS port answers
//! `srvr` with a TLS alert, or (ZooKeeper 3.8's Netty port) closes without a word and then answers a
//! TLS hello in TLS: that is ZooKeeper's `secureClientPort` asked in plaintext. Nothing is written
//! after the hello and no session is opened.

use std::time::Duration;

use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::error::RegistryError;

/// How long the client's own attempt runs before the servers are looked at: ZooKeeper gives a
/// session in milliseconds, so a healthy registry is never probed.
pub(crate) const LOOK_AFTER: Duration = Duration::from_millis(500);

/// How long one look may take, connection and answer.
pub(crate) const LOOK_WITHIN: Duration = Duration::from_secs(2);

/// The most of an answer read (and at most 60 characters of it shown).
const ANSWER_MAX: usize = 256;

/// What one server turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Look {
    /// Nothing listens there.
    Refused,
    /// Something answered, not as ZooKeeper: its first line.
    Foreign(String),
    /// A TLS record answered: a secure port asked in plaintext.
    Tls,
    /// ZooKeeper, or no verdict.
    Inconclusive,
}

/// The error for `hosts` when every one of them refuses the connection, or every one that does not
/// answers as something other than ZooKeeper; `None` when any may be ZooKeeper.
pub(crate) async fn diagnose(hosts: &[String], within: Duration) -> Option<RegistryError> {
    let looks: Vec<_> = hosts
        .iter()
        .map(|host| tokio::spawn(look(host.clone(), within)))
        .collect();
    let mut foreign = None;
    let mut all_refused = true;
    let mut tls = false;
    for handle in looks {
        match handle.await.unwrap_or(Look::Inconclusive) {
            Look::Refused => {}
            Look::Foreign(answer) => {
                all_refused = false;
                foreign.get_or_insert(answer);
            }
            Look::Tls => {
                all_refused = false;
                tls = true;
            }
            Look::Inconclusive => return None,
        }
    }
    let hosts = hosts.join(",");
    match foreign {
        _ if all_refused => Some(RegistryError::Refused { hosts }),
        _ if tls => Some(RegistryError::Tls {
            hosts,
            failure: crate::error::ZkTlsFailure::TlsPort,
        }),
        Some(answer) => Some(RegistryError::NotZookeeper { hosts, answer }),
        None => None,
    }
}

/// One server: connect, say `srvr`, read the answer until it closes, [`ANSWER_MAX`] bytes or
/// `within`.
async fn look(host: String, within: Duration) -> Look {
    let deadline = Instant::now() + within;
    let stream = match tokio::time::timeout_at(deadline, TcpStream::connect(host.as_str())).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => return Look::Refused,
        _ => return Look::Inconclusive,
    };
    if tokio::time::timeout_at(deadline, say(&stream, b"srvr\r\n\r\n"))
        .await
        .is_err()
    {
        return Look::Inconclusive;
    }
    let answer = read_answer(&stream, deadline).await;
    drop(stream);
    if answer.is_empty() && crate::tls_probe::speaks_tls(&host, deadline).await {
        // ZooKeeper 3.8's secure port closes on `srvr` without a word (Netty drops bytes that are no
        // TLS record): a TLS hello then tells it apart from a silent server.
        return Look::Tls;
    }
    classify(&answer)
}

/// What the server said until it closed, [`ANSWER_MAX`] bytes or `deadline`.
async fn read_answer(stream: &TcpStream, deadline: Instant) -> Vec<u8> {
    let mut answer = Vec::with_capacity(ANSWER_MAX);
    let mut buf = [0u8; ANSWER_MAX];
    while answer.len() < ANSWER_MAX {
        match tokio::time::timeout_at(deadline, stream.readable()).await {
            Ok(Ok(())) => {}
            _ => break,
        }
        match stream.try_read(&mut buf[..ANSWER_MAX - answer.len()]) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(_) => break,
        }
    }
    answer
}

/// Writes all of `bytes`; an error ends the look.
async fn say(stream: &TcpStream, mut bytes: &[u8]) -> Result<(), ()> {
    while !bytes.is_empty() {
        stream.writable().await.map_err(drop)?;
        match stream.try_write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return Err(()),
        }
    }
    Ok(())
}

/// ZooKeeper's answers to `srvr` (allowed, or not in the whitelist) are no verdict, nor is nothing; a
/// TLS record (an alert: type 0x15, version 3.x) is a TLS port's; anything else is a foreign server's.
fn classify(answer: &[u8]) -> Look {
    const ZOOKEEPER: [&str; 2] = ["Zookeeper version", "srvr is not executed"];
    let text = String::from_utf8_lossy(answer);
    if matches!(answer, [0x14..=0x17, 0x03, 0x00..=0x04, ..]) {
        return Look::Tls;
    }
    if answer.is_empty() || ZOOKEEPER.iter().any(|z| text.starts_with(z)) {
        return Look::Inconclusive;
    }
    let line: String = text
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .map(|c| if c.is_control() { '.' } else { c })
        .take(60)
        .collect();
    Look::Foreign(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zookeeper_answers_and_silence_are_no_verdict() {
        for answer in [
            &b"Zookeeper version: 3.8.0-debian, built on 2022-07-25\nLatency min/avg/max: 0/0.0/0\n"[..],
            b"srvr is not executed because it is not in the whitelist.\n",
            b"",
        ] {
            assert_eq!(classify(answer), Look::Inconclusive, "{answer:?}");
        }
        // A secure port's alert to plaintext bytes.
        assert_eq!(
            classify(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32]),
            Look::Tls
        );
    }

    #[test]
    fn another_server_answer_is_shown_by_its_first_line() {
        assert_eq!(
            classify(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"),
            Look::Foreign("HTTP/1.1 400 Bad Request".into())
        );
        assert_eq!(
            classify(b"Unsupported command: srvr\r\ndubbo>"),
            Look::Foreign("Unsupported command: srvr".into())
        );
        assert_eq!(classify(b"\x00\x01bin"), Look::Foreign("..bin".into()));
    }

    #[tokio::test]
    async fn a_closed_port_is_refused_and_a_foreign_server_named() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let closed = listener.local_addr().unwrap().to_string();
        drop(listener);
        assert!(matches!(
            diagnose(std::slice::from_ref(&closed), LOOK_WITHIN).await,
            Some(RegistryError::Refused { .. })
        ));

        let http = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = http.local_addr().unwrap().to_string();
        let server = tokio::spawn(async move {
            let (stream, _) = http.accept().await.unwrap();
            say(&stream, b"HTTP/1.1 400 Bad Request\r\n\r\n")
                .await
                .unwrap();
        });
        let verdict = diagnose(&[address.clone(), closed], LOOK_WITHIN).await;
        server.await.unwrap();
        match verdict {
            Some(RegistryError::NotZookeeper { hosts, answer }) => {
                assert!(hosts.starts_with(&address), "{hosts}");
                assert_eq!(answer, "HTTP/1.1 400 Bad Request");
            }
            other => panic!("{other:?}"),
        }
    }

    /// As ZooKeeper 3.8's Netty secure port: bytes that are no TLS record close the connection
    /// without a word; a TLS hello gets a TLS answer.
    #[tokio::test]
    async fn a_port_that_closes_on_plaintext_and_answers_tls_is_a_tls_port() {
        use rustls::pki_types::pem::PemObject;
        let pki = rudder_test_support::pki::Pki::new("probe");
        let server = pki.issue(
            "server",
            &["127.0.0.1"],
            rudder_test_support::pki::Validity::Current,
        );
        let chain = rustls::pki_types::CertificateDer::pem_file_iter(&server.cert)
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let key = rustls::pki_types::PrivateKeyDer::from_pem_file(&server.key).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let server = tokio::spawn(async move {
            for _ in 0..2 {
                let (stream, _) = listener.accept().await.unwrap();
                let mut first = [0u8; 1];
                stream.peek(&mut first).await.unwrap();
                if first[0] == 0x16 {
                    let _ = acceptor.accept(stream).await;
                } else {
                    drop(stream);
                }
            }
        });
        let verdict = diagnose(std::slice::from_ref(&address), LOOK_WITHIN).await;
        server.await.unwrap();
        match verdict {
            Some(RegistryError::Tls { hosts, failure }) => {
                assert_eq!(hosts, address);
                assert_eq!(failure, crate::error::ZkTlsFailure::TlsPort);
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_silent_server_is_no_verdict_within_the_bound() {
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = silent.local_addr().unwrap().to_string();
        let verdict = diagnose(&[address], Duration::from_millis(100)).await;
        assert!(verdict.is_none());
        drop(silent);
    }
}
