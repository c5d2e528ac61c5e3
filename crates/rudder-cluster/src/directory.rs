//! The directory: the current set of usable providers, as an immutable snapshot swapped atomically.
//!
//! The registry tells the directory what the provider list is now ([`Directory::replace`]) or what
//! changed ([`Directory::apply`]). The directory builds a new [`ProviderSet`] and publishes it with one
//! atomic pointer swap; a pick loads the current snapshot and never waits for an update. Providers are
//! compared by their full URL, so a parameter change (a new weight) is an update, while the provider's
//! identity, and with it its statistics and round-robin state, is kept.
//!
//! A parameter that cannot be used (`weight=heavy`) never drops its provider: the value is ignored with
//! one warning, as the parameter's range says (see [`crate::provider`]). [`Directory::rejected`] counts
//! URLs that could not become providers at all.
//!
//! ```
//! use rudder_cluster::directory::{Change, Directory};
//! use rudder_common::url::DubboUrl;
//!
//! let directory = Directory::default();
//! let a = DubboUrl::parse("dubbo://10.0.0.1:20880/S?weight=100")?;
//! let typo = DubboUrl::parse("dubbo://10.0.0.2:20880/S?weight=heavy")?;
//! let update = directory.replace(vec![a.clone(), typo]);
//! assert_eq!((update.added, update.rejected), (2, 0));
//! assert_eq!(directory.snapshot().providers()[1].configured_weight("any"), 100); // the default
//!
//! let heavier = a.clone().with_parameter("weight", "300");
//! directory.apply(vec![Change::Remove(a), Change::Insert(heavier)]);
//! assert_eq!(directory.snapshot().providers().last().unwrap().configured_weight("any"), 300);
//! # Ok::<(), rudder_common::url::UrlError>(())
//! ```

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use arc_swap::{ArcSwap, Cache};
use rudder_common::discovery::{ProviderSink, ProviderUpdate};
use rudder_common::status::StatusRegistry;
use rudder_common::url::DubboUrl;

pub use rudder_common::discovery::{Change, UpdateOutcome};

use crate::provider::Provider;
use crate::view::MethodView;

/// Methods whose views a snapshot finds without any atomic read-modify-write.
const VIEW_SLOTS: usize = 16;

/// One immutable provider snapshot, with per-method views built on first use.
pub struct ProviderSet {
    providers: Arc<[Arc<Provider>]>,
    generation: u64,
    /// Views of the first methods called, filled in order and never replaced: finding one is a few
    /// plain loads and string comparisons.
    views: [OnceLock<(Box<str>, Arc<MethodView>)>; VIEW_SLOTS],
    /// Views of any further methods: a copy-on-write list.
    more_views: ArcSwap<Vec<(Box<str>, Arc<MethodView>)>>,
    views_writer: Mutex<()>,
}

impl ProviderSet {
    fn new(providers: Arc<[Arc<Provider>]>, generation: u64) -> ProviderSet {
        ProviderSet {
            providers,
            generation,
            views: Default::default(),
            more_views: ArcSwap::default(),
            views_writer: Mutex::new(()),
        }
    }

    /// The providers, in registry order.
    pub fn providers(&self) -> &[Arc<Provider>] {
        &self.providers
    }

    /// Increases by one with every published snapshot.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The methods whose views are built, in the order they were first asked for.
    pub fn methods(&self) -> Vec<Box<str>> {
        let mut methods: Vec<Box<str>> = Vec::new();
        self.for_each_view(|view| methods.push(view.method().into()));
        methods
    }

    /// Runs `f` with every view built so far.
    pub fn for_each_view(&self, mut f: impl FnMut(&Arc<MethodView>)) {
        for (_, view) in self.views.iter().map_while(OnceLock::get) {
            f(view);
        }
        for (_, view) in self.more_views.load().iter() {
            f(view);
        }
    }

    /// The precomputed view of this snapshot for `method`, built on first use.
    pub fn view(&self, method: &str) -> Arc<MethodView> {
        self.with_view(method, Arc::clone)
    }

    /// Runs `f` with the view for `method` without taking a reference count: the pick path.
    pub fn with_view<R>(&self, method: &str, f: impl FnOnce(&Arc<MethodView>) -> R) -> R {
        let is_method = |(m, _): &&(Box<str>, Arc<MethodView>)| **m == *method;
        let filled = self.views.iter().map_while(OnceLock::get);
        if let Some((_, view)) = filled.clone().find(is_method) {
            return f(view);
        }
        if filled.count() == VIEW_SLOTS {
            if let Some((_, view)) = self.more_views.load().iter().find(is_method) {
                return f(view);
            }
        }
        let _writer = self
            .views_writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Another thread may have built it while this one waited.
        let filled = self.views.iter().map_while(OnceLock::get);
        let more = self.more_views.load();
        if let Some((_, view)) = filled.chain(more.iter()).find(is_method) {
            return f(view);
        }
        let view = Arc::new(MethodView::new(Arc::clone(&self.providers), method));
        match self.views.iter().find(|slot| slot.get().is_none()) {
            Some(slot) => {
                let _ = slot.set((method.into(), Arc::clone(&view)));
            }
            None => {
                let mut more = Vec::clone(&more);
                more.push((method.into(), Arc::clone(&view)));
                self.more_views.store(Arc::new(more));
            }
        }
        f(&view)
    }
}

impl fmt::Debug for ProviderSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderSet")
            .field("generation", &self.generation)
            .field("providers", &self.providers.len())
            .finish_non_exhaustive()
    }
}

/// Builds picking state for a snapshot before it is published: a balancer resolves each view's policy
/// and lets the policy build its state ([`LoadBalance::prepare`](crate::loadbalance::LoadBalance::prepare)),
/// so no request pays for a rebuild after a registry change.
pub trait PublishHook: Send + Sync {
    /// Called with each new snapshot before any pick can see it, while the directory's writer lock is
    /// held: it must not update the directory.
    fn prepare(&self, snapshot: &Arc<ProviderSet>);
}

/// The directory of one service. Cheap to share behind an `Arc`.
pub struct Directory {
    /// Shared with the per-thread caches of [`Directory::with_current`].
    current: Arc<ArcSwap<ProviderSet>>,
    statuses: Arc<StatusRegistry>,
    /// Writer-side index, by full URL; picks never touch it.
    writer: Mutex<Index>,
    rejected: AtomicU64,
    /// Keep providers sorted by full URL instead of in the order given.
    sorted: bool,
    /// Run on every snapshot before it is published; dead ones are dropped as found.
    hooks: Mutex<Vec<Weak<dyn PublishHook>>>,
    /// The generation of the snapshot last published, for [`Directory::watch`].
    changes: tokio::sync::watch::Sender<u64>,
}

#[derive(Default)]
struct Index {
    by_url: HashMap<Box<str>, Arc<Provider>>,
    order: Vec<Arc<Provider>>,
    generation: u64,
}

impl Default for Directory {
    fn default() -> Self {
        Directory::new(Arc::new(StatusRegistry::default()))
    }
}

impl Directory {
    /// An empty directory whose providers take their statistics from `statuses`.
    pub fn new(statuses: Arc<StatusRegistry>) -> Directory {
        Directory {
            current: Arc::new(ArcSwap::from_pointee(ProviderSet::new(
                Arc::from(Vec::new()),
                0,
            ))),
            statuses,
            writer: Mutex::new(Index::default()),
            rejected: AtomicU64::new(0),
            sorted: false,
            hooks: Mutex::new(Vec::new()),
            changes: tokio::sync::watch::Sender::new(0),
        }
    }

    /// An empty directory that keeps its providers sorted by full URL, whatever order updates come in.
    ///
    /// Registry-fed directories use it: ZooKeeper lists children in no defined order, and a sorted list
    /// gives every consumer the same first provider (whose `loadbalance` Dubbo reads) and the same
    /// round-robin tie order, and lets [`Directory::apply`] insert where a full listing would.
    ///
    /// ```
    /// use rudder_cluster::directory::{Change, Directory};
    /// use rudder_common::url::DubboUrl;
    /// let directory = Directory::sorted(Default::default());
    /// directory.replace([DubboUrl::parse("dubbo://10.0.0.3:1/S")?, DubboUrl::parse("dubbo://10.0.0.1:1/S")?]);
    /// directory.apply([Change::Insert(DubboUrl::parse("dubbo://10.0.0.2:1/S")?)]);
    /// let order: Vec<String> = directory.snapshot().providers().iter().map(|p| p.address().to_owned()).collect();
    /// assert_eq!(order, ["10.0.0.1:1", "10.0.0.2:1", "10.0.0.3:1"]);
    /// # Ok::<(), rudder_common::url::UrlError>(())
    /// ```
    pub fn sorted(statuses: Arc<StatusRegistry>) -> Directory {
        Directory {
            sorted: true,
            ..Directory::new(statuses)
        }
    }

    /// The current snapshot. Lock-free.
    pub fn snapshot(&self) -> Arc<ProviderSet> {
        self.current.load_full()
    }

    /// Notifies of every snapshot published from now on: the receiver holds the generation of the
    /// latest one ([`ProviderSet::generation`]) and wakes its waiters when a new one is published.
    ///
    /// This is how to wait for the registry to deliver a change, instead of polling
    /// [`Directory::snapshot`]: subscribe, check the condition, and wait for `changed()` until it
    /// holds. A change published after `watch()` returned is never missed. The receiver works with
    /// any async runtime, and the writer pays one uncontended lock per snapshot, picks nothing.
    ///
    /// ```
    /// use rudder_cluster::directory::Directory;
    /// use rudder_common::url::DubboUrl;
    ///
    /// let directory = Directory::default();
    /// let mut changes = directory.watch();
    /// assert!(!changes.has_changed().unwrap());
    /// directory.replace([DubboUrl::parse("dubbo://10.0.0.1:20880/S")?]);
    /// assert!(changes.has_changed().unwrap());
    /// assert_eq!(*changes.borrow_and_update(), directory.snapshot().generation());
    /// // In async code: `while !ready(&directory) { changes.changed().await?; }`.
    /// # Ok::<(), rudder_common::url::UrlError>(())
    /// ```
    pub fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Runs `f` with the current snapshot: the pick path.
    ///
    /// Loading from the `ArcSwap` costs two atomic read-modify-writes (taking and returning a debt
    /// slot), and so does cloning the `Arc`. Each thread instead keeps an `arc_swap` cache of the last
    /// snapshot it saw of its few most recent directories, which costs one plain load to validate.
    /// A cached snapshot is kept alive until that thread next picks from the directory (or evicts
    /// it); it is never used once a newer one is published.
    pub(crate) fn with_current<R>(&self, f: impl FnOnce(&Arc<ProviderSet>) -> R) -> R {
        type Recent = Vec<Cache<Arc<ArcSwap<ProviderSet>>, Arc<ProviderSet>>>;
        /// Directories cached per thread; a thread rarely serves more services than this in a loop.
        const CACHED: usize = 8;
        thread_local! {
            static RECENT: RefCell<Recent> = const { RefCell::new(Vec::new()) };
        }
        RECENT.with(|cell| {
            let Ok(mut recent) = cell.try_borrow_mut() else {
                // A pick inside a pick (a weight hook that picks): no cache.
                return f(&self.current.load());
            };
            let mine = |c: &Cache<_, _>| std::ptr::eq(c.arc_swap(), &*self.current);
            let index = match recent.iter().position(mine) {
                Some(index) => index,
                None => {
                    if recent.len() == CACHED {
                        recent.remove(0);
                    }
                    recent.push(Cache::new(Arc::clone(&self.current)));
                    recent.len() - 1
                }
            };
            f(recent[index].load())
        })
    }

    /// Runs `hook` on every snapshot from now on before it is published, and once now on the current one.
    /// The directory holds it weakly: dropping the hook's owner unregisters it.
    pub fn add_publish_hook(&self, hook: Weak<dyn PublishHook>) {
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(live) = hook.upgrade() {
            live.prepare(&self.current.load());
        }
        self.hooks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(hook);
    }

    /// The statistics registry providers are attached to.
    pub fn statuses(&self) -> &Arc<StatusRegistry> {
        &self.statuses
    }

    /// How many provider URLs have been rejected so far.
    pub fn rejected(&self) -> u64 {
        self.rejected.load(Relaxed)
    }

    /// Makes `urls` the provider list, in this order (sorted instead for a [`Directory::sorted`] one).
    /// Providers whose full URL is unchanged are kept as they are; an empty list empties the directory.
    pub fn replace(&self, urls: impl IntoIterator<Item = DubboUrl>) -> UpdateOutcome {
        self.replace_reporting(urls, &mut Vec::new())
    }

    /// Applies a registry's update as [`ProviderSink::update`] does, and adds the providers it took
    /// out of the list to `removed`: what whoever keeps per-provider state beside the directory
    /// (statistics, connections) may have to forget, found without a walk over every provider.
    ///
    /// ```
    /// use rudder_cluster::directory::Directory;
    /// use rudder_common::discovery::{Change, ProviderUpdate};
    /// use rudder_common::url::DubboUrl;
    ///
    /// let directory = Directory::default();
    /// let a = DubboUrl::parse("dubbo://10.0.0.1:20880/S")?;
    /// let b = DubboUrl::parse("dubbo://10.0.0.2:20880/S")?;
    /// directory.replace([a.clone(), b]);
    /// let mut removed = Vec::new();
    /// let outcome = directory.update_reporting(ProviderUpdate::Delta(vec![Change::Remove(a)]), &mut removed);
    /// assert_eq!((outcome.removed, removed[0].address()), (1, "10.0.0.1:20880"));
    /// # Ok::<(), rudder_common::url::UrlError>(())
    /// ```
    pub fn update_reporting(
        &self,
        update: ProviderUpdate,
        removed: &mut Vec<Arc<Provider>>,
    ) -> UpdateOutcome {
        match update {
            ProviderUpdate::Full(urls) => self.replace_reporting(urls, removed),
            ProviderUpdate::Delta(changes) => self.apply_reporting(changes, removed),
        }
    }

    fn replace_reporting(
        &self,
        urls: impl IntoIterator<Item = DubboUrl>,
        removed: &mut Vec<Arc<Provider>>,
    ) -> UpdateOutcome {
        let mut index = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let mut update = UpdateOutcome::default();
        let mut by_url = HashMap::with_capacity(index.by_url.len());
        let mut order: Vec<Arc<Provider>> = Vec::with_capacity(index.order.len());
        for url in urls {
            let key: Box<str> = url.to_full_string().into();
            if by_url.contains_key(&key) {
                continue;
            }
            let provider = match index.by_url.remove(&key) {
                Some(existing) => existing,
                None => match self.admit(url) {
                    Some(p) => {
                        update.added += 1;
                        p
                    }
                    None => {
                        update.rejected += 1;
                        continue;
                    }
                },
            };
            order.push(Arc::clone(&provider));
            by_url.insert(key, provider);
        }
        update.removed = index.by_url.len();
        removed.extend(index.by_url.drain().map(|(_, p)| p));
        if self.sorted {
            order.sort_by(|a, b| a.full_url().cmp(b.full_url()));
        }
        index.by_url = by_url;
        index.order = order;
        self.publish(&mut index, update)
    }

    /// Applies `changes` in order. Work is proportional to the number of changes, plus one copy of the
    /// snapshot's provider pointers.
    pub fn apply(&self, changes: impl IntoIterator<Item = Change>) -> UpdateOutcome {
        self.apply_reporting(changes, &mut Vec::new())
    }

    fn apply_reporting(
        &self,
        changes: impl IntoIterator<Item = Change>,
        taken_out: &mut Vec<Arc<Provider>>,
    ) -> UpdateOutcome {
        let mut index = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let mut update = UpdateOutcome::default();
        let mut removed: HashSet<*const Provider> = HashSet::new();
        let mut appended = Vec::new();
        for change in changes {
            match change {
                Change::Insert(url) => {
                    let key: Box<str> = url.to_full_string().into();
                    if index.by_url.contains_key(&key) {
                        continue;
                    }
                    match self.admit(url) {
                        Some(p) => {
                            update.added += 1;
                            appended.push(Arc::clone(&p));
                            index.by_url.insert(key, p);
                        }
                        None => update.rejected += 1,
                    }
                }
                Change::Remove(url) => {
                    if let Some(p) = index.by_url.remove(url.to_full_string().as_str()) {
                        update.removed += 1;
                        removed.insert(Arc::as_ptr(&p));
                        taken_out.push(p);
                    }
                }
            }
        }
        let mut order = std::mem::take(&mut index.order);
        if !removed.is_empty() {
            order.retain(|p| !removed.contains(&Arc::as_ptr(p)));
        }
        // An insert removed again in the same batch is in `removed` and must not be added.
        for provider in appended
            .into_iter()
            .filter(|p| !removed.contains(&Arc::as_ptr(p)))
        {
            let at = if self.sorted {
                order.partition_point(|p| p.full_url() < provider.full_url())
            } else {
                order.len()
            };
            order.insert(at, provider);
        }
        index.order = order;
        self.publish(&mut index, update)
    }

    fn admit(&self, url: DubboUrl) -> Option<Arc<Provider>> {
        match Provider::new(url.clone(), &self.statuses) {
            Ok(p) => Some(Arc::new(p)),
            Err(error) => {
                self.rejected.fetch_add(1, Relaxed);
                tracing::warn!(url = %url, %error, "skipping provider with an unreadable parameter");
                None
            }
        }
    }

    fn publish(&self, index: &mut Index, mut update: UpdateOutcome) -> UpdateOutcome {
        index.generation += 1;
        let providers: Arc<[Arc<Provider>]> = index.order.iter().cloned().collect();
        update.total = providers.len();
        let snapshot = Arc::new(ProviderSet::new(providers, index.generation));
        // The methods called so far get their views (weights, prefix sums, counters) now, and the
        // hooks build the policies' state in them, so the first pick after the change does no O(n) work.
        for method in self.current.load().methods() {
            snapshot.with_view(&method, |_| ());
        }
        let hooks: Vec<Arc<dyn PublishHook>> = {
            let mut hooks = self.hooks.lock().unwrap_or_else(PoisonError::into_inner);
            hooks.retain(|h| h.strong_count() > 0);
            hooks.iter().filter_map(Weak::upgrade).collect()
        };
        for hook in hooks {
            hook.prepare(&snapshot);
        }
        self.current.store(snapshot);
        self.changes.send_replace(index.generation);
        update
    }
}

/// A registry feeds a directory directly: a full list is [`Directory::replace`], a delta
/// [`Directory::apply`].
impl ProviderSink for Directory {
    fn update(&self, update: ProviderUpdate) -> UpdateOutcome {
        self.update_reporting(update, &mut Vec::new())
    }
}

impl fmt::Debug for Directory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Directory")
            .field("current", &*self.current.load())
            .finish_non_exhaustive()
    }
}
