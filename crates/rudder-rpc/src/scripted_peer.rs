//! A connection driven against a scripted in-memory provider, for the `connection` fuzz target:
//! the fuzz input is what the provider sends, cut into reads, while calls are in flight.

use std::sync::Arc;
use std::time::Duration;

use rudder_common::invocation::Invocation;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;

use crate::census::Census;
use crate::codec::ServiceTarget;
use crate::connection::{Connection, ConnectionConfig};

/// Payload limit of the scripted connection: small, so oversized frames are easy to reach.
const PAYLOAD_LIMIT: usize = 4096;
/// Each call's timeout; time is paused and jumps ahead whenever every task waits.
const CALL_TIMEOUT: Duration = Duration::from_secs(1);
/// Far longer than any scripted run can take in paused time: past it, tasks have leaked.
const SETTLE: Duration = Duration::from_secs(3600);

/// How the scripted run went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PeerRun {
    /// Calls answered with `Ok`.
    pub answered: usize,
    /// Calls that ended with an error.
    pub failed: usize,
}

/// Runs one connection against a provider that sends `data`.
///
/// Layout of `data`: byte 0 picks the number of concurrent calls (1..=8); byte 1 holds the
/// read-chunk size (bits 2..8 as n: n² + 1 bytes), whether the provider reads what it is sent (bit 0;
/// if not, the pipe is 256 bytes so writes stall) and whether it hangs up after its script (bit 1;
/// if not, it stays silent). The rest is the provider's byte stream. Request ids start at 0.
///
/// # Panics
/// When a call does not end, the connection's tasks outlive it, or anything inside panics: that is
/// what the fuzz target looks for.
pub fn drive_scripted_peer(data: &[u8]) -> PeerRun {
    let [calls, mode, script @ ..] = data else {
        return PeerRun::default();
    };
    let calls = usize::from(calls % 8) + 1;
    let (drains, hangs_up) = (mode & 1 == 1, mode & 2 == 2);
    // 1, 2, 5, 10 ... 3970 bytes per read: byte-at-a-time splits and whole-frame reads.
    let chunk = usize::from(mode >> 2).pow(2) + 1;
    // One runtime per thread, reused: building one costs more than most runs. Every run ends with
    // no task of its own left (asserted), so runs cannot leak into each other.
    RUNTIME.with(|runtime| runtime.block_on(run(calls, drains, hangs_up, chunk, script)))
}

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
}

async fn run(calls: usize, drains: bool, hangs_up: bool, chunk: usize, script: &[u8]) -> PeerRun {
    let census = Arc::new(Census::default());
    let (ours, theirs) = tokio::io::duplex(if drains { 64 * 1024 } else { 256 });
    let (reader, writer) = tokio::io::split(ours);
    let config = ConnectionConfig {
        payload_limit: PAYLOAD_LIMIT,
        heartbeat: Duration::from_millis(500),
        connect_timeout: Duration::from_secs(1),
        provider_tls: false,
    };
    let (connection, driver) = Connection::over("scripted:0", reader, writer, config, &census);
    driver.spawn();

    let (stop, stopped) = oneshot::channel::<()>();
    let script = script.to_vec();
    let peer = tokio::spawn(async move {
        let (mut peer_reader, mut peer_writer) = tokio::io::split(theirs);
        let drain = async {
            let mut sink = [0u8; 4096];
            while drains && matches!(peer_reader.read(&mut sink).await, Ok(n) if n > 0) {}
            if !drains {
                std::future::pending::<()>().await;
            }
        };
        let speak = async {
            for piece in script.chunks(chunk) {
                if peer_writer.write_all(piece).await.is_err() {
                    return;
                }
                tokio::task::yield_now().await;
            }
            if hangs_up {
                let _ = peer_writer.shutdown().await;
            }
        };
        tokio::select! {
            _ = async { tokio::join!(drain, speak) } => {}
            _ = stopped => {}
        }
    });

    let target = ServiceTarget {
        path: "com.acme.Fuzzed",
        interface: "com.acme.Fuzzed",
        version: "0.0.0",
        group: None,
    };
    let in_flight: Vec<_> = (0..calls)
        .map(|i| {
            let connection = connection.clone();
            tokio::spawn(async move {
                let call = Invocation::new(format!("m{i}"), vec![], vec![]);
                let deadline = tokio::time::Instant::now() + CALL_TIMEOUT;
                connection
                    .invoke(&target, &call, CALL_TIMEOUT, deadline)
                    .await
            })
        })
        .collect();
    let mut outcome = PeerRun::default();
    for call in in_flight {
        match call.await.expect("a call panicked") {
            Ok(_) => outcome.answered += 1,
            Err(_) => outcome.failed += 1,
        }
    }
    drop(connection);
    tokio::time::timeout(SETTLE, census.all_tasks_ended())
        .await
        .expect("connection tasks outlived the last handle");
    assert_eq!(census.open_sockets(), 0, "the socket outlived its tasks");
    let _ = stop.send(());
    peer.await.expect("the scripted peer panicked");
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(id: i64) -> Vec<u8> {
        let mut frame = vec![0xda, 0xbb, 0x02, 0x14];
        frame.extend_from_slice(&id.to_be_bytes());
        frame.extend_from_slice(&4u32.to_be_bytes());
        frame.extend_from_slice(b"\x91\x02ok");
        frame
    }

    #[test]
    fn answers_reach_their_calls_and_silence_times_out() {
        let mut data = vec![1, 0b0000_0111];
        data.extend(answer(0));
        data.extend(answer(1));
        assert_eq!(
            drive_scripted_peer(&data),
            PeerRun {
                answered: 2,
                failed: 0
            }
        );
        // A silent provider that does not read: both calls time out, nothing leaks.
        assert_eq!(
            drive_scripted_peer(&[1, 0]),
            PeerRun {
                answered: 0,
                failed: 2
            }
        );
    }

    #[test]
    fn garbage_fails_every_call() {
        let run = drive_scripted_peer(b"\x07\x03telnet> hello, not dubbo");
        assert_eq!(
            run,
            PeerRun {
                answered: 0,
                failed: 8
            }
        );
    }
}
