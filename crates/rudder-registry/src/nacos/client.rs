//! The connection to Nacos: one naming and one config client (nacos-sdk, Nacos 2.x gRPC) per
//! registry, opened on first use and shared; the registry's lifetime and its tasks.
//!
//! nacos-sdk runs its own work (gRPC streams, health checks, reconnects to the next server of the
//! list, re-subscribing and re-adding listeners after a reconnect) on a runtime of its own, one worker
//! thread for the whole process; pushes reach rudder through listeners called on that thread, which
//! only store the latest list and wake the subscription's task on the caller's runtime.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nacos_sdk::api::naming::{NamingService, NamingServiceBuilder};
use nacos_sdk::api::props::ClientProps;
use tokio::sync::{mpsc, watch, OnceCell};

use crate::error::RegistryError;
use crate::nacos::address::NacosAddress;
use crate::nacos::stream::NamingStream;
use crate::options::RegistryOptions;

/// The naming client, once built and connected.
#[derive(Clone)]
pub(crate) struct Clients {
    pub(crate) naming: NamingService,
}

/// One registry's connection and the bookkeeping of its tasks.
pub(crate) struct Connection {
    pub(crate) address: NacosAddress,
    pub(crate) options: RegistryOptions,
    clients: OnceCell<Clients>,
    /// Subscriptions and pushes (rudder's own gRPC stream, see `stream`); started with the clients.
    pub(crate) stream: NamingStream,
    stream_started: AtomicBool,
    /// The `accessToken` of the config centre's HTTP calls, when the URL has credentials.
    pub(crate) token: crate::nacos::http::Token,
    /// The last build failure, for the unreachable error.
    last_error: Mutex<Option<Arc<nacos_sdk::api::error::Error>>>,
    closed: watch::Sender<bool>,
    closing: AtomicBool,
    /// Every task holds a clone; [`Connection::close`] waits for the last to go.
    tasks: Mutex<Option<mpsc::Sender<()>>>,
    tasks_done: tokio::sync::Mutex<mpsc::Receiver<()>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("address", &self.address)
            .field("connected", &self.clients.initialized())
            .finish_non_exhaustive()
    }
}

impl Connection {
    pub(crate) fn new(address: NacosAddress, options: RegistryOptions) -> Connection {
        let options = match address.timeout {
            Some(timeout) => options.with_connect_timeout(timeout),
            None => options,
        };
        let (tasks, tasks_done) = mpsc::channel(1);
        let token = crate::nacos::http::Token::new(
            address.username.as_deref(),
            address.password.as_deref(),
        );
        Connection {
            options,
            token,
            clients: OnceCell::new(),
            stream: NamingStream::new(&address, options),
            stream_started: AtomicBool::new(false),
            last_error: Mutex::new(None),
            closed: watch::channel(false).0,
            closing: AtomicBool::new(false),
            tasks: Mutex::new(Some(tasks)),
            tasks_done: tokio::sync::Mutex::new(tasks_done),
            address,
        }
    }

    fn props(&self, namespace: &str) -> ClientProps {
        let a = &self.address;
        let mut props = ClientProps::new()
            .server_addr(a.servers.join(","))
            .namespace(namespace)
            .app_name("rudder")
            // rudder decides about empty pushes itself, as Dubbo does (see `empty_push`); the SDK
            // would otherwise drop every empty push whatever the URL says.
            .naming_push_empty_protection(false)
            // The URL says where Nacos is, not the process environment (NACOS_* variables).
            .env_first(false)
            .load_cache_at_start(false);
        if let Some(user) = &a.username {
            props = props
                .auth_username(user.clone())
                .auth_password(a.password.clone().unwrap_or_default());
        }
        props
    }

    /// Builds the naming client and waits for its connection, retrying with the registry's
    /// backoff; the caller bounds the whole ([`Connection::clients_within`]).
    async fn build(&self) -> Result<Clients, RegistryError> {
        let failed = |e: nacos_sdk::api::error::Error| {
            *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(e));
        };
        if !self.stream_started.swap(true, Ordering::AcqRel) {
            let mut closed = self.closed.subscribe();
            let closed = async move {
                let _ = closed.wait_for(|c| *c).await;
            };
            self.spawn(self.stream.clone().run(closed));
        }
        let mut attempt = 0;
        loop {
            let mut builder = NamingServiceBuilder::new(self.props(&self.address.namespace));
            if self.address.username.is_some() {
                builder = builder.enable_auth_plugin_http();
            }
            match builder.build().await {
                // nacos-sdk may return before its gRPC connection is up (a request then fails with
                // "the connection is not connected"): a first cheap request says when it is.
                Ok(naming) => match naming
                    .get_service_list(1, 1, Some(self.address.group.clone()))
                    .await
                {
                    Ok(_) => return Ok(Clients { naming }),
                    // Refused credentials do not get better by waiting: say so at once.
                    Err(nacos_sdk::api::error::Error::ErrResponse(_, _, 403, message)) => {
                        return Err(self.refused(message.as_deref().unwrap_or("")));
                    }
                    Err(e) => failed(e),
                },
                Err(e) => failed(e),
            }
            tokio::time::sleep(self.options.retry_delay(attempt)).await;
            attempt = attempt.saturating_add(1);
        }
    }

    /// The server refused the URL's credentials (`message` is the server's, never a password).
    fn refused(&self, message: &str) -> RegistryError {
        let why = format!("refused (403): {message}; check username and password");
        RegistryError::Nacos {
            operation: "login",
            target: self.address.servers.join(","),
            source: Arc::new(nacos_sdk::api::error::Error::ErrResult(why)),
        }
    }

    /// The clients, building them if nobody has (callers share one attempt), within `wait`.
    pub(crate) async fn clients_within(&self, wait: Duration) -> Result<Clients, RegistryError> {
        if self.is_closed() {
            return Err(RegistryError::Closed);
        }
        let mut closed = self.closed.subscribe();
        tokio::select! {
            built = tokio::time::timeout(wait, self.clients.get_or_try_init(|| self.build())) => match built {
                Ok(Ok(clients)) => Ok(clients.clone()),
                Ok(Err(error)) => Err(error),
                Err(_) => Err(self.unreachable(wait)),
            },
            _ = closed.wait_for(|c| *c) => Err(RegistryError::Closed),
        }
    }

    /// Whether the clients are built and the naming stream's connection is up now.
    pub(crate) fn is_connected(&self) -> bool {
        self.clients.initialized() && self.stream.is_connected() && !self.is_closed()
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    pub(crate) fn unreachable(&self, waited: Duration) -> RegistryError {
        RegistryError::NacosUnreachable {
            servers: self.address.servers.join(","),
            waited,
            source: self
                .last_error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        }
    }

    /// Resolves once the registry is closed.
    pub(crate) async fn closed(&self) {
        let mut closed = self.closed.subscribe();
        let _ = closed.wait_for(|c| *c).await;
    }

    /// Runs `task` on the caller's runtime as one of this registry's tasks ([`Connection::close`]
    /// waits for it); `None` once closed.
    pub(crate) fn spawn<F>(&self, task: F) -> Option<tokio::task::JoinHandle<()>>
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let token = self
            .tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        Some(tokio::spawn(async move {
            task.await;
            drop(token);
        }))
    }

    /// Stops every task and waits for them to end.
    pub(crate) async fn close(&self) {
        self.closing.store(true, Ordering::Release);
        self.closed.send_replace(true);
        drop(self.tasks.lock().unwrap_or_else(|p| p.into_inner()).take());
        // `None` once every task's token is gone.
        let _ = self.tasks_done.lock().await.recv().await;
    }
}
