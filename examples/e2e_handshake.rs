//! `e2e_load --handshakes N`: how long a new TLS connection takes (TCP connect plus handshake) next
//! to a plaintext TCP connect to the same provider, the median of N of each, interleaved.

use std::time::{Duration, Instant};

use rudder::TlsClient;
use tokio::net::TcpStream;

/// Connects `n` times plaintext and `n` times with a TLS handshake (alternating) to the provider of
/// `url` (`dubbo://` or `tri://host:port/...`; tri:// asks for h2 by ALPN), and reports the medians.
///
/// # Panics
/// When a connect or handshake fails: the tool needs a provider that serves TLS.
pub async fn handshakes(url: &str, tls: &TlsClient, n: usize) -> Vec<String> {
    let h2 = url.starts_with("tri://");
    let addr = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split(['/', '?'])
        .next()
        .unwrap_or_default()
        .to_owned();
    let (mut plain, mut secured) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n.max(1) {
        let started = Instant::now();
        let tcp = TcpStream::connect(&addr).await.expect("plaintext connect");
        plain.push(started.elapsed());
        drop(tcp);
        let started = Instant::now();
        let tcp = TcpStream::connect(&addr).await.expect("connect");
        let _ = tcp.set_nodelay(true);
        let session = tls
            .connect(tcp, &addr, h2, Duration::from_secs(10))
            .await
            .expect("TLS handshake");
        secured.push(started.elapsed());
        drop(session);
    }
    vec![
        format!(
            "connect: median {} (p90 {}); connect + TLS handshake: median {} (p90 {}), {} of each",
            micros(quantile(&mut plain, 0.5)),
            micros(quantile(&mut plain, 0.9)),
            micros(quantile(&mut secured, 0.5)),
            micros(quantile(&mut secured, 0.9)),
            plain.len()
        ),
        format!(
            "TLS handshakes completed by the client: {}",
            tls.handshakes()
        ),
    ]
}

fn quantile(times: &mut [Duration], q: f64) -> Duration {
    times.sort_unstable();
    let index = ((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1;
    times[index]
}

fn micros(d: Duration) -> String {
    format!("{}us", d.as_micros())
}
