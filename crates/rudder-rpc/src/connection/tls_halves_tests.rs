//! The halves against rustls' own server (tokio-rustls) over an in-memory pipe small enough that
//! writes are cut short and wait, with certificates made by the test.

use std::sync::Arc;
use std::time::Duration;

use rudder_test_support::pki::{Pki, Validity};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};
use tokio_rustls::server::TlsStream as ServerStream;

use super::{split, TlsRead, TlsWrite};

/// Every wait in these tests ends by then.
const DEADLINE: Duration = Duration::from_secs(20);

type Halves = (
    TlsRead<ReadHalf<DuplexStream>>,
    TlsWrite<WriteHalf<DuplexStream>>,
);

/// A handshake over a pipe of `pipe` bytes: the client's session split into halves, the server's
/// stream whole.
async fn pair(pipe: usize) -> (Halves, ServerStream<DuplexStream>, Pki) {
    let pki = Pki::new("halves");
    let issued = pki.issue("server", &["localhost"], Validity::Current);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = CertificateDer::pem_file_iter(&issued.cert)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let server = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, PrivateKeyDer::from_pem_file(&issued.key).unwrap())
        .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(pki.ca()).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let client = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let (near, far) = tokio::io::duplex(pipe);
    let accept = tokio_rustls::TlsAcceptor::from(Arc::new(server)).accept(far);
    let connect = tokio_rustls::TlsConnector::from(Arc::new(client))
        .connect(ServerName::try_from("localhost").unwrap(), near);
    let (server, client) = tokio::time::timeout(DEADLINE, async { tokio::join!(accept, connect) })
        .await
        .unwrap();
    let (io, session) = client.unwrap().into_inner();
    let (read, write) = tokio::io::split(io);
    (split(read, write, session), server.unwrap(), pki)
}

/// Bytes that tell their position: a reordered or lost record shows.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

#[tokio::test]
async fn bytes_cross_both_ways_intact_while_both_halves_run_at_once() {
    let ((mut read, mut write), server, _pki) = pair(4096).await;
    let sent = pattern(1 << 20);
    // The server echoes everything back; the pipe holds 4 KiB, so both sides wait on each other.
    let echo = tokio::spawn(async move {
        let (mut from, mut to) = tokio::io::split(server);
        tokio::io::copy(&mut from, &mut to).await.unwrap();
        to.shutdown().await.unwrap();
    });
    let writing = {
        let sent = sent.clone();
        tokio::spawn(async move {
            // Writes of many sizes: below a record, several records (70,000), and one byte.
            let mut rest = &sent[..];
            for size in [1, 100, 70_000, 16_384, 5, 300].into_iter().cycle() {
                if rest.is_empty() {
                    break;
                }
                let (now, later) = rest.split_at(size.min(rest.len()));
                write.write_all(now).await.unwrap();
                write.flush().await.unwrap();
                rest = later;
            }
            write.shutdown().await.unwrap();
        })
    };
    let mut echoed = Vec::new();
    tokio::time::timeout(DEADLINE, read.read_to_end(&mut echoed))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(echoed.len(), sent.len());
    assert!(echoed == sent, "the echo differs from what was sent");
    writing.await.unwrap();
    echo.await.unwrap();
}

#[tokio::test]
async fn a_key_update_asked_by_the_peer_is_answered_before_our_next_record() {
    let ((mut read, mut write), mut server, _pki) = pair(64 * 1024).await;
    let mut got = [0u8; 5];
    write.write_all(b"first").await.unwrap();
    write.flush().await.unwrap();
    server.read_exact(&mut got).await.unwrap();
    assert_eq!(&got, b"first");
    // The server moves to new keys and asks us to do the same.
    server.get_mut().1.refresh_traffic_keys().unwrap();
    server.write_all(b"rekey").await.unwrap();
    server.flush().await.unwrap();
    tokio::time::timeout(DEADLINE, read.read_exact(&mut got))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&got, b"rekey");
    // Our answer must precede this record, which is sealed with our new keys.
    write.write_all(b"after").await.unwrap();
    write.flush().await.unwrap();
    tokio::time::timeout(DEADLINE, server.read_exact(&mut got))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&got, b"after");
}

#[tokio::test]
async fn a_close_notify_reads_as_the_end_both_ways() {
    let ((mut read, mut write), server, _pki) = pair(64 * 1024).await;
    let (mut server_read, mut server_write) = tokio::io::split(server);
    server_write.write_all(b"last words").await.unwrap();
    server_write.shutdown().await.unwrap();
    let mut got = Vec::new();
    tokio::time::timeout(DEADLINE, read.read_to_end(&mut got))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got, b"last words");
    // Ours: the server sees a clean end, not an error.
    write.shutdown().await.unwrap();
    let mut rest = Vec::new();
    let n = tokio::time::timeout(DEADLINE, server_read.read_to_end(&mut rest))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(n, 0);
}

#[tokio::test]
async fn a_bare_tcp_close_after_data_gives_the_data_then_an_unexpected_end() {
    let ((mut read, _write), mut server, _pki) = pair(64 * 1024).await;
    server.write_all(b"cut off").await.unwrap();
    server.flush().await.unwrap();
    // No close_notify: the pipe just ends.
    drop(server.into_inner());
    let mut got = [0u8; 7];
    tokio::time::timeout(DEADLINE, read.read_exact(&mut got))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&got, b"cut off");
    let end = tokio::time::timeout(DEADLINE, read.read(&mut [0u8; 16]))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(end.kind(), std::io::ErrorKind::UnexpectedEof);
}

#[tokio::test]
async fn garbage_instead_of_a_record_fails_the_read() {
    let ((mut read, _write), server, _pki) = pair(64 * 1024).await;
    let (mut raw, _session) = server.into_inner();
    // An application-data record whose contents do not decrypt.
    raw.write_all(&[0x17, 0x03, 0x03, 0x00, 0x20])
        .await
        .unwrap();
    raw.write_all(&[0x55; 0x20]).await.unwrap();
    let failed = tokio::time::timeout(DEADLINE, read.read(&mut [0u8; 16]))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(failed.kind(), std::io::ErrorKind::InvalidData);
}
