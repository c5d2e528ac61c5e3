//! rudder's own Nacos 2.x naming stream: subscriptions to services and the server's pushes, over
//! one gRPC connection per registry ([`wire`](crate::nacos::wire) says why not nacos-sdk's).
//!
//! | what happens | what the stream does |
//! |---|---|
//! | first use | connect to a server (gRPC port: HTTP port + 1000), `ServerCheckRequest`, open the bidirectional stream, `ConnectionSetupRequest` |
//! | a service is subscribed | `SubscribeServiceRequest`; its answer is the first list |
//! | the server pushes a list (`NotifySubscriberRequest`) | hand it to every subscriber of that service, acknowledge it |
//! | the server asks whether the client lives (`ClientDetectionRequest`) | answer |
//! | the connection ends (server gone, reset asked, pings unanswered) | `connected` false, next server of the list after the registry's backoff, then every subscription again (the answers are the current lists; an empty one waits [`SETTLE`]) |
//! | the last subscriber of a service leaves | unsubscribe |
//!
//! Subscribers keep their last list while the connection is down; [`NamingStream::connected`] says
//! whether it is up (shown as `connected` in the subscriptions' status).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nacos_sdk::api::naming::ServiceInstance;
use serde_json::json;
use tokio::sync::{mpsc, watch, Notify};

use crate::nacos::address::NacosAddress;
use crate::nacos::hosts::{HostList, Key, Listing};
use crate::nacos::http::Token;
use crate::nacos::wire::{grpc_address, outcome, Payload, Refused, Wire};
use crate::options::RegistryOptions;

/// Nacos 2.x's "connection not registered yet" (a request that overtook the stream's set-up).
const NOT_REGISTERED: i64 = 301;
/// How often such a request is tried again, 50 ms apart.
const NOT_REGISTERED_TRIES: u32 = 40;

/// The latest instance list pushed for one service, and a wake-up: a burst of pushes costs one
/// application and never queues.
#[derive(Default)]
pub(crate) struct Pushes {
    latest: Mutex<Option<HostList>>,
    arrived: Notify,
}

impl Pushes {
    pub(crate) fn offer(&self, instances: HostList) {
        *self.latest.lock().unwrap_or_else(|p| p.into_inner()) = Some(instances);
        self.arrived.notify_one();
    }

    /// The first list, unless a push already brought one (which is as new or newer).
    pub(crate) fn offer_first(&self, instances: HostList) {
        let mut latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        if latest.is_none() {
            *latest = Some(instances);
            self.arrived.notify_one();
        }
    }

    pub(crate) fn take(&self) -> Option<HostList> {
        self.latest.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// Resolves when a list arrived (at once if one arrived since the last wait).
    pub(crate) async fn arrived(&self) {
        self.arrived.notified().await;
    }
}

/// The connection's state as subscriptions show it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LinkState {
    pub(crate) up: bool,
    /// Connections made so far (each a new session on the server).
    pub(crate) connections: u64,
}

/// How long, after a reconnect, an empty list of a service that was subscribed before is held back.
/// A Nacos server that restarted knows no instance until their clients register again (its naming
/// data is in memory, as Nacos's ephemeral instances are), and answers and pushes empty lists
/// meanwhile: applied, they would clear every directory for the seconds the providers take to come
/// back (Nacos's clients redo their registrations every 3 s). A list with instances is applied at
/// once; a service still empty after this long is empty.
const SETTLE: Duration = Duration::from_secs(10);

/// One registry's naming stream; cheap to clone.
#[derive(Clone)]
pub(crate) struct NamingStream {
    shared: Arc<Shared>,
}

struct Shared {
    /// The HTTP addresses (`host:port`), for logging in; gRPC is on port + 1000.
    servers: Vec<String>,
    namespace: String,
    token: Token,
    options: RegistryOptions,
    subscribers: Mutex<HashMap<Key, Vec<Arc<Pushes>>>>,
    /// The services subscribed again after a reconnect and not yet given a list with instances, and
    /// whether an empty one is held for them (see [`SETTLE`]).
    settling: Mutex<HashMap<Key, bool>>,
    /// The live connection, `None` while there is none.
    link: watch::Sender<Option<Link>>,
    state: watch::Sender<LinkState>,
    next_id: AtomicU64,
    /// Why the last connection attempt failed, for the unreachable error.
    last_error: Mutex<Option<String>>,
}

#[derive(Clone)]
struct Link {
    wire: Wire,
    /// The HTTP address of the server it goes to.
    server: String,
}

impl NamingStream {
    /// The stream of `address`; its task is started with [`NamingStream::run`].
    pub(crate) fn new(address: &NacosAddress, options: RegistryOptions) -> NamingStream {
        NamingStream {
            shared: Arc::new(Shared {
                servers: address.servers.clone(),
                namespace: address.namespace.clone(),
                token: Token::new(address.username.as_deref(), address.password.as_deref()),
                options,
                subscribers: Mutex::new(HashMap::new()),
                settling: Mutex::new(HashMap::new()),
                link: watch::channel(None).0,
                state: watch::channel(LinkState::default()).0,
                next_id: AtomicU64::new(1),
                last_error: Mutex::new(None),
            }),
        }
    }

    /// Whether the connection is up now and how many connections were made so far (a subscription's
    /// `connected` and `sessions`), and their changes.
    pub(crate) fn state(&self) -> watch::Receiver<LinkState> {
        self.shared.state.subscribe()
    }

    pub(crate) fn is_connected(&self) -> bool {
        self.shared.link.borrow().is_some()
    }

    /// Why the last connection attempt failed, if one did.
    pub(crate) fn last_error(&self) -> Option<String> {
        lock(&self.shared.last_error).clone()
    }

    /// Keeps connected until `closed` resolves: the registry's task.
    pub(crate) async fn run(self, closed: impl std::future::Future<Output = ()>) {
        let shared = &self.shared;
        let work = async {
            let mut attempt = 0u32;
            for server in shared.servers.iter().cycle() {
                match session(shared, server).await {
                    // It was up: the next server at once, as nacos-sdk and Java's client do.
                    Ok(()) => attempt = 0,
                    Err(error) => {
                        tracing::debug!(server = %server, error = %error, "Nacos naming stream");
                        *lock(&shared.last_error) = Some(format!("{server}: {error}"));
                    }
                }
                if shared.link.send_replace(None).is_some() {
                    shared.state.send_modify(|s| s.up = false);
                    tracing::warn!(server = %server, "Nacos connection lost; reconnecting");
                }
                tokio::time::sleep(shared.options.retry_delay(attempt)).await;
                attempt = attempt.saturating_add(1);
            }
        };
        tokio::select! {
            () = closed => {}
            () = work => {}
        }
        // Closed: subscriptions end with the registry, without a "connection lost".
        shared.link.send_replace(None);
    }

    /// Subscribes `pushes` to `service` of `group` and returns its current instances, waiting up to
    /// the connect timeout for a connection. Pushes after it go to `pushes`, also after a reconnect.
    pub(crate) async fn subscribe(
        &self,
        service: &str,
        group: &str,
        pushes: &Arc<Pushes>,
    ) -> Result<HostList, String> {
        let key = (group.to_owned(), service.to_owned());
        {
            let mut subscribers = lock(&self.shared.subscribers);
            let list = subscribers.entry(key.clone()).or_default();
            // A retry after a failed first answer subscribes the same `pushes` again.
            if !list.iter().any(|p| Arc::ptr_eq(p, pushes)) {
                list.push(Arc::clone(pushes));
            }
        }
        let link = self.link().await?;
        subscribe(&self.shared, &link, &key, true).await
    }

    /// The connection, waiting up to the connect timeout for one.
    async fn link(&self) -> Result<Link, String> {
        let wait = self.shared.options.connect_timeout();
        let mut link = self.shared.link.subscribe();
        let up = tokio::time::timeout(wait, link.wait_for(Option::is_some))
            .await
            .map_err(|_| {
                let why = self.last_error().unwrap_or_default();
                format!("no connection within {} ms {why}", wait.as_millis())
            })?
            .map_err(|_| "the registry is closed".to_owned())?
            .clone();
        up.ok_or_else(|| "the registry is closed".to_owned())
    }

    /// The instances of `service` of `group` once, without subscribing (`ServiceQueryRequest`):
    /// what `rudder list` reads, as large as a subscription's lists.
    pub(crate) async fn list(
        &self,
        service: &str,
        group: &str,
    ) -> Result<Vec<ServiceInstance>, String> {
        let link = self.link().await?;
        let body = json!({
            "namespace": self.shared.namespace,
            "groupName": group,
            "serviceName": service,
            "cluster": "",
            "healthyOnly": false,
            "module": "naming",
        });
        let answered = request(
            &self.shared,
            &link,
            ("ServiceQueryRequest", "QueryServiceResponse"),
            body,
        )
        .await?;
        Ok(listed(&answered, "QueryServiceResponse")?.instances())
    }

    /// Takes `pushes` off `service`; the last one to go unsubscribes.
    pub(crate) async fn unsubscribe(&self, service: &str, group: &str, pushes: &Arc<Pushes>) {
        let key = (group.to_owned(), service.to_owned());
        let last = {
            let mut subscribers = lock(&self.shared.subscribers);
            let Some(list) = subscribers.get_mut(&key) else {
                return;
            };
            list.retain(|p| !Arc::ptr_eq(p, pushes));
            let last = list.is_empty();
            if last {
                subscribers.remove(&key);
            }
            last
        };
        let link = self.shared.link.borrow().clone();
        if let (true, Some(link)) = (last, link) {
            let _ = subscribe(&self.shared, &link, &key, false).await;
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// One connection to `server`, from set-up until it ends: `Ok` once it had been up.
async fn session(shared: &Shared, server: &str) -> Result<(), String> {
    let grpc = grpc_address(server)?;
    let wire = Wire::connect(&grpc, shared.options.connect_timeout()).await?;
    let link = Link {
        wire,
        server: server.to_owned(),
    };
    request(
        shared,
        &link,
        ("ServerCheckRequest", "ServerCheckResponse"),
        json!({}),
    )
    .await?;
    let (to_server, mut from_server) = link.wire.bi_stream().await?;
    let setup = json!({
        "clientVersion": concat!("Nacos-Rust-Client:rudder-", env!("CARGO_PKG_VERSION")),
        "tenant": shared.namespace,
        "labels": {"source": "sdk", "module": "naming"},
        "abilityTable": {},
        "headers": {},
    });
    to_server
        .send(Payload::new(
            "ConnectionSetupRequest",
            &setup,
            HashMap::new(),
        ))
        .await
        .map_err(|_| "the stream closed at set-up".to_owned())?;
    // Every subscription again (after a reconnect), while the stream is read: a push may come.
    let resubscribe = async {
        let keys: Vec<Key> = lock(&shared.subscribers).keys().cloned().collect();
        if shared.state.borrow().connections > 0 {
            *lock(&shared.settling) = keys.iter().map(|k| (k.clone(), false)).collect();
        }
        for key in keys {
            let list = subscribe(shared, &link, &key, true).await?;
            offer(shared, &key, list);
        }
        shared.link.send_replace(Some(link.clone()));
        shared.state.send_modify(|s| {
            s.up = true;
            s.connections += 1;
        });
        tracing::info!(server = %server, "Nacos naming stream connected");
        tokio::time::sleep(SETTLE).await;
        settled(shared);
        std::future::pending::<Result<(), String>>().await
    };
    let read = async {
        while let Some(payload) = from_server.message().await.map_err(|s| s.to_string())? {
            if !handle(shared, &to_server, &payload).await {
                break;
            }
        }
        Ok::<(), String>(())
    };
    tokio::select! {
        r = resubscribe => r,
        r = read => r.and_then(|()| if shared.link.borrow().is_some() { Ok(()) } else { Err("the server ended the stream".to_owned()) }),
    }
}

/// One message from the server; `false` when it asks for a reconnect.
async fn handle(shared: &Shared, to_server: &mpsc::Sender<Payload>, payload: &Payload) -> bool {
    let kind = payload.kind();
    // Read down to where each instance is; the instances themselves are read by the subscribers,
    // and only those they have not seen (`nacos::names`).
    let push = match Listing::read(payload.body_bytes()) {
        Ok(push) => push,
        Err(error) => {
            tracing::warn!(%error, kind, "unreadable message from Nacos");
            Listing::default()
        }
    };
    if kind == "NotifySubscriberRequest" {
        if let Some((key, list)) = push.list {
            offer(shared, &key, list);
        }
    }
    if let Some(response) = kind.strip_suffix("Request") {
        let body = json!({
            "resultCode": 200,
            "errorCode": 0,
            "requestId": push.request_id,
            "success": true,
        });
        let ack = Payload::new(&format!("{response}Response"), &body, HashMap::new());
        if to_server.send(ack).await.is_err() {
            return false;
        }
    }
    kind != "ConnectResetRequest"
}

/// Hands `list` to every subscriber of `key`; an empty list for a service subscribed again after a
/// reconnect waits until [`SETTLE`] has passed (see there).
fn offer(shared: &Shared, key: &Key, list: HostList) {
    {
        let mut settling = lock(&shared.settling);
        if let Some(held) = settling.get_mut(key) {
            if list.is_empty() {
                *held = true;
                return;
            }
            settling.remove(key);
        }
    }
    deliver(shared, key, list);
}

/// The settling time is over: the empty lists held are handed over.
fn settled(shared: &Shared) {
    let held: Vec<Key> = std::mem::take(&mut *lock(&shared.settling))
        .into_iter()
        .filter_map(|(key, held)| held.then_some(key))
        .collect();
    for key in held {
        deliver(shared, &key, HostList::default());
    }
}

/// Hands `list` to each subscriber of `key` (the same bytes to each: a list of a large service is
/// megabytes).
fn deliver(shared: &Shared, key: &Key, list: HostList) {
    let subscribers = lock(&shared.subscribers)
        .get(key)
        .cloned()
        .unwrap_or_default();
    for pushes in subscribers {
        pushes.offer(list.clone());
    }
}

/// (Un)subscribes `key`; the answer's instances.
async fn subscribe(shared: &Shared, link: &Link, key: &Key, on: bool) -> Result<HostList, String> {
    let body = json!({
        "namespace": shared.namespace,
        "groupName": key.0,
        "serviceName": key.1,
        "subscribe": on,
        "clusters": "",
        "module": "naming",
    });
    let kinds = ("SubscribeServiceRequest", "SubscribeServiceResponse");
    let answered = request(shared, link, kinds, body).await?;
    listed(&answered, kinds.1)
}

/// The list an answer of type `expected` (which [`request`] checked) carries; none: an empty one.
fn listed(answered: &Payload, expected: &str) -> Result<HostList, String> {
    let listing =
        Listing::read(answered.body_bytes()).map_err(|e| format!("unreadable {expected}: {e}"))?;
    Ok(listing.list.map(|(_, list)| list).unwrap_or_default())
}

/// One request of type `kinds.0` with the `accessToken` header when logged in, tried again while the
/// server has not registered the connection yet: an answer of type `kinds.1`, or the server's
/// refusal as the error.
async fn request(
    shared: &Shared,
    link: &Link,
    kinds: (&str, &str),
    mut body: serde_json::Value,
) -> Result<Payload, String> {
    let (kind, expected) = kinds;
    let wait = shared.options.connect_timeout();
    let mut headers = HashMap::new();
    match shared.token.value(&link.server, wait).await {
        Ok(Some(token)) => {
            headers.insert("accessToken".to_owned(), token);
        }
        Ok(None) => {}
        Err(error) => return Err(format!("Nacos login: {error}")),
    }
    let id = shared.next_id.fetch_add(1, Ordering::Relaxed).to_string();
    body["requestId"] = json!(id);
    body["headers"] = json!(headers);
    let payload = Payload::new(kind, &body, headers);
    let (answered, refused) =
        until_registered(expected, || link.wire.request(payload.clone())).await?;
    match refused {
        None => Ok(answered),
        Some(refused) => {
            if refused.code == 403 {
                // The token may be stale (a restarted server): log in again next time.
                shared.token.forget().await;
            }
            Err(refusal(refused))
        }
    }
}

/// Sends a request with `send` until the answer is something other than "connection not registered
/// yet" (Nacos answers that to a request that overtook the stream's set-up), at most
/// [`NOT_REGISTERED_TRIES`] times more, 50 ms apart. The answer, and its refusal if it is not a
/// successful one of type `expected`.
async fn until_registered<F, Answer>(
    expected: &str,
    mut send: F,
) -> Result<(Payload, Option<Refused>), String>
where
    F: FnMut() -> Answer,
    Answer: std::future::Future<Output = Result<Payload, String>>,
{
    let mut tries = 0;
    loop {
        let answered = send().await?;
        // The result code alone: an answer may be a service's whole list, megabytes of JSON.
        match outcome(&answered, expected) {
            Err(Refused { code, .. }) if code == NOT_REGISTERED && tries < NOT_REGISTERED_TRIES => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(refused) => return Ok((answered, Some(refused))),
            Ok(()) => return Ok((answered, None)),
        }
    }
}

fn refusal(refused: Refused) -> String {
    format!("refused ({}): {}", refused.code, refused.message)
}

#[cfg(test)]
mod tests;
