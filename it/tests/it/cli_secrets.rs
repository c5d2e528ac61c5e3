//! Secrets are never printed: every `rudder` command against a registry whose URL carries a password
//! and a token, listing a provider whose URL carries credentials and a token, with debug logging on,
//! and a metrics scrape; no output holds any of the secrets.

use std::path::PathBuf;
use std::process::Stdio;

use rudder::DubboUrl;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::common::{self, providers, WAIT};

const SERVICE: &str = "com.acme.Greeter";
/// In the registry URL's user information.
const REGISTRY_PASSWORD: &str = "RegPw-7f3c9a";
/// A `token` parameter of the registry URL.
const REGISTRY_TOKEN: &str = "RegTok-2b81e4";
/// In the provider URL's user information.
const PROVIDER_PASSWORD: &str = "ProvPw-55d2c0";
/// The provider's Dubbo `token` (token authentication).
const PROVIDER_TOKEN: &str = "ProvTok-91ab6f";

/// Every secret the outputs are searched for; a TLS key's content joins when the CLI takes one (see
/// [`tls_arguments`]).
fn secrets() -> Vec<String> {
    [
        REGISTRY_PASSWORD,
        REGISTRY_TOKEN,
        PROVIDER_PASSWORD,
        PROVIDER_TOKEN,
    ]
    .map(String::from)
    .to_vec()
}

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/debug/rudder")
}

/// One run with debug logging: (exit code, stdout + stderr).
async fn run(args: &[&str]) -> (i32, String) {
    let all: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let out = tokio::time::timeout(
        WAIT,
        tokio::process::Command::new(binary())
            .args(&all)
            .env("RUDDER_LOG", "debug")
            .env("NO_COLOR", "1")
            .kill_on_drop(true)
            .output(),
    )
    .await
    .unwrap_or_else(|_| panic!("rudder {args:?} ended within {WAIT:?}"))
    .expect("rudder starts");
    // The command line itself holds the secrets: shown redacted, so only rudder's output is searched.
    let shown: Vec<_> = args.iter().map(|a| rudder_common::redact::url(a)).collect();
    let text = format!(
        "$ rudder {}\n{}{}",
        shown.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// `invoke --metrics-addr 127.0.0.1:0 --linger`, scraped once its calls are answered, then stopped
/// with Ctrl-C: (the run's output, the scrape).
async fn invoke_and_scrape(registry: &str) -> (String, String) {
    let mut child = tokio::process::Command::new(binary())
        .args([
            "invoke",
            "-v",
            "--registry",
            registry,
            "--interface",
            SERVICE,
            "--method",
            "sayHello",
            "--args",
            "[\"x\"]",
            "--calls",
            "3",
            "--metrics-addr",
            "127.0.0.1:0",
            "--linger",
        ])
        .env("RUDDER_LOG", "debug")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("rudder starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    let scraped = tokio::time::timeout(WAIT, async {
        let mut metrics = None;
        let mut answers = 0;
        // Both streams are read as they come, so neither pipe fills up and blocks the process.
        while metrics.is_none() || answers < 3 {
            tokio::select! {
                line = stdout.next_line() => {
                    let line = line.unwrap().expect("stdout open until the calls are answered");
                    answers += 1;
                    seen.push_str(&line);
                    seen.push('\n');
                }
                line = stderr.next_line() => {
                    let line = line.unwrap().expect("stderr open while serving");
                    if let Some(rest) = line.split("http://").nth(1) {
                        if line.starts_with("metrics:") {
                            metrics = rest.split('/').next().map(str::to_owned);
                        }
                    }
                    seen.push_str(&line);
                    seen.push('\n');
                }
            }
        }
        scrape(&metrics.unwrap()).await
    })
    .await
    .unwrap_or_else(|_| panic!("invoke answered and served metrics within {WAIT:?}:\n{seen}"));
    let pid = child.id().expect("still running").to_string();
    let interrupted = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill runs");
    assert!(interrupted.success());
    tokio::time::timeout(WAIT, async {
        while let Ok(Some(line)) = stderr.next_line().await {
            seen.push_str(&line);
            seen.push('\n');
        }
        child.wait().await.expect("rudder ends")
    })
    .await
    .expect("rudder ends on Ctrl-C");
    (seen, scraped)
}

/// `GET /metrics` over plain HTTP/1.0 (the answer ends with the connection).
async fn scrape(address: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("metrics endpoint");
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut body = String::new();
    stream
        .take(16 << 20)
        .read_to_string(&mut body)
        .await
        .unwrap();
    body
}

#[tokio::test]
async fn no_command_prints_a_password_or_a_token() {
    assert!(
        binary().exists(),
        "{} is missing: cargo build -p rudder-cli",
        binary().display()
    );
    let zookeeper = common::zookeeper().await;
    let writer = common::writer(&zookeeper).await;
    let server = providers::port_echo().await;
    let provider = DubboUrl::parse(&format!(
        "dubbo://admin:{PROVIDER_PASSWORD}@{}/{SERVICE}?interface={SERVICE}&methods=sayHello&side=provider&token={PROVIDER_TOKEN}",
        server.local_addr()
    ))
    .unwrap();
    let path = format!("/dubbo/{SERVICE}/providers/{}", provider.to_node_name());
    providers::put_node(&writer, &path, "").await;
    let hosts = zookeeper.connect_string();
    let registry = format!("zookeeper://app:{REGISTRY_PASSWORD}@{hosts}?token={REGISTRY_TOKEN}");
    let unreachable =
        format!("zookeeper://app:{REGISTRY_PASSWORD}@127.0.0.1:1?token={REGISTRY_TOKEN}");
    let r = registry.as_str();

    let mut outputs = Vec::new();
    // (arguments, whether the run must succeed): a failure is output to search as well.
    let runs: Vec<(Vec<&str>, bool)> = vec![
        (vec!["list", "--registry", r], true),
        (vec!["list", "--registry", r, "--interface", SERVICE], false),
        (
            vec!["providers", "--registry", r, "--interface", SERVICE],
            true,
        ),
        (
            vec![
                "providers",
                "--registry",
                r,
                "--interface",
                SERVICE,
                "--format",
                "json",
            ],
            true,
        ),
        (
            vec![
                "providers",
                "--registry",
                r,
                "--interface",
                SERVICE,
                "--method",
                "sayHello",
                "--explain",
            ],
            true,
        ),
        (
            vec![
                "simulate",
                "--registry",
                r,
                "--interface",
                SERVICE,
                "--calls",
                "3",
            ],
            true,
        ),
        (
            vec![
                "invoke",
                "-v",
                "--registry",
                r,
                "--interface",
                SERVICE,
                "--method",
                "sayHello",
                "--args",
                "[\"x\"]",
                "--calls",
                "3",
            ],
            true,
        ),
        (
            vec![
                "bench",
                "--registry",
                r,
                "--interface",
                SERVICE,
                "--method",
                "sayHello",
                "--args",
                "[\"x\"]",
                "--calls",
                "20",
            ],
            true,
        ),
        (
            vec![
                "demo",
                "--registry",
                r,
                "--write-to-registry",
                "--calls",
                "40",
            ],
            true,
        ),
        (
            vec![
                "providers",
                "--registry",
                &unreachable,
                "--connect-timeout",
                "1",
                "--interface",
                SERVICE,
            ],
            false,
        ),
    ];
    for (args, must_succeed) in &runs {
        let (code, text) = run(args).await;
        if *must_succeed {
            assert_eq!(code, 0, "{text}");
        }
        outputs.push(text);
    }
    let (invoked, metrics) = invoke_and_scrape(r).await;
    assert!(
        metrics.contains("rudder_calls_total{provider=\"dubbo://***@127.0.0.1:"),
        "the provider label is there, redacted:\n{metrics}"
    );
    outputs.push(invoked);
    outputs.push(metrics);

    // The runs did show what they are about (so the search below looked at real output).
    let all = outputs.join("\n");
    assert!(all.contains(&server.local_addr().to_string()), "{all}");
    assert!(
        all.contains("token=***"),
        "the provider token shown masked:\n{all}"
    );
    for secret in secrets() {
        for text in &outputs {
            assert!(
                !text.contains(&secret),
                "secret {secret} printed:\n{}",
                text.lines()
                    .filter(|line| line.contains(&secret))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }
}

/// A line from the middle of a PEM private key: what must never show in any output.
fn key_line(key: &std::path::Path) -> String {
    let text = std::fs::read_to_string(key).expect("the key file");
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("-----")).collect();
    lines[lines.len() / 2].to_owned()
}

#[tokio::test]
async fn tls_key_files_are_never_quoted() {
    assert!(
        binary().exists(),
        "{} is missing: cargo build -p rudder-cli",
        binary().display()
    );
    let pki = rudder_it::TestPki::generate().unwrap_or_else(|e| panic!("{e}"));
    let (ca, cert, key) = (pki.ca(), pki.client_cert(), pki.client_key());
    let secret = key_line(&key);
    // A key file that is not a key, whose content is a secret too.
    let broken = pki.dir().join("broken.key");
    let broken_secret = "BrokenKeyMaterial-4e1d7a";
    std::fs::write(
        &broken,
        format!("-----BEGIN PRIVATE KEY-----\n{broken_secret}\n-----END PRIVATE KEY-----\n"),
    )
    .unwrap();
    let server = providers::port_echo().await;
    let url = format!("dubbo://{}/{SERVICE}", server.local_addr());
    let (ca, cert, key, broken) = (
        ca.to_string_lossy().into_owned(),
        cert.to_string_lossy().into_owned(),
        key.to_string_lossy().into_owned(),
        broken.to_string_lossy().into_owned(),
    );
    let mut outputs = Vec::new();
    for key in [key.as_str(), broken.as_str()] {
        let tls = ["--tls-ca", &ca, "--tls-cert", &cert, "--tls-key", key];
        // A plaintext provider under a TLS consumer, and a key that does not parse: both fail,
        // and both are output to search.
        let invoke = [
            &[
                "invoke", "-v", "--url", &url, "--method", "sayHello", "--args", "[\"x\"]",
            ][..],
            &tls[..],
        ]
        .concat();
        let bench = [
            &[
                "bench", "--url", &url, "--method", "sayHello", "--args", "[\"x\"]", "--calls", "3",
            ][..],
            &tls[..],
        ]
        .concat();
        for args in [invoke, bench] {
            let (code, text) = run(&args).await;
            assert_ne!(
                code, 0,
                "a TLS consumer of a plaintext provider fails:\n{text}"
            );
            outputs.push(text);
        }
    }
    for text in &outputs {
        for secret in [secret.as_str(), broken_secret] {
            assert!(!text.contains(secret), "key material printed:\n{text}");
        }
    }
}
