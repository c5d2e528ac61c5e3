//! The routing cache of one (snapshot, rule version): a tree per method whose levels are the chain's
//! routers and whose edges are what each router read of the call ([`RouteKey`]).
//!
//! A pick walks from the method's root: for a router that reads nothing of the call the one edge is
//! taken (computed once); for one that reads the call, the edge of its key (computed on first sight);
//! for a weighted v3.1 choice, one child drawn by weight. The leaf holds the routed subset's
//! [`MethodView`], built once. The number of nodes is capped: past [`MAX_NODES`] new routes are
//! computed for the call and not kept, so memory stays bounded whatever the callers send (e.g. a new
//! tag per call); the next snapshot or rule change starts a new table.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use arc_swap::ArcSwap;
use rudder_common::invocation::Invocation;

use super::consumer::TAG_KEY;
use super::state::ChainState;
use super::tag::static_tag;
use super::{Outcome, RouteContext, RouteKey, Router};
use crate::directory::ProviderSet;
use crate::provider::Provider;
use crate::rng::RngSource;
use crate::view::MethodView;

/// Routing nodes one table keeps at most.
pub const MAX_NODES: usize = 1024;

type Edges = Vec<(RouteKey<'static>, Edge)>;

/// A set of providers after some routers, and where each next decision leads.
struct Node {
    kept: Box<[u32]>,
    fixed: OnceLock<Edge>,
    keyed: ArcSwap<Edges>,
    view: OnceLock<Arc<MethodView>>,
}

#[derive(Clone)]
enum Edge {
    To(Arc<Node>),
    /// Running weight sums and the subset of each.
    Weighted(Arc<[(u64, Arc<Node>)]>),
}

impl Node {
    fn new(kept: Vec<u32>) -> Node {
        Node {
            kept: kept.into(),
            fixed: OnceLock::new(),
            keyed: ArcSwap::default(),
            view: OnceLock::new(),
        }
    }
}

/// The cache of one snapshot under one chain state.
pub(crate) struct Table {
    snapshot: Weak<ProviderSet>,
    generation: u64,
    state: Arc<ChainState>,
    roots: ArcSwap<Vec<(Box<str>, Arc<Node>)>>,
    nodes: AtomicUsize,
    writer: Mutex<()>,
    /// Decided when the snapshot is published: no rule, no consumer tag and no provider tag, so a
    /// call without a `dubbo.tag` attachment keeps every provider (the snapshot's own view) and
    /// walks no route.
    passthrough: bool,
}

impl Table {
    /// A table that serves no snapshot (after a rule change, before the next pick).
    pub(crate) fn detached(state: Arc<ChainState>) -> Table {
        Table {
            snapshot: Weak::new(),
            generation: 0,
            state,
            roots: ArcSwap::default(),
            nodes: AtomicUsize::new(0),
            writer: Mutex::new(()),
            passthrough: false,
        }
    }

    pub(crate) fn new(snapshot: &Arc<ProviderSet>, state: Arc<ChainState>) -> Table {
        let passthrough = state.ruleless_untagged
            && snapshot
                .providers()
                .iter()
                .all(|p| static_tag(p).is_empty());
        Table {
            snapshot: Arc::downgrade(snapshot),
            generation: snapshot.generation(),
            passthrough,
            ..Table::detached(state)
        }
    }

    /// Whether `invocation` keeps every provider of this table's snapshot without routing: what
    /// the routers would decide for it, found without walking them.
    pub(crate) fn passes(&self, invocation: &Invocation) -> bool {
        self.passthrough
            && invocation
                .attachment(TAG_KEY)
                .is_none_or(|tag| tag.is_empty())
    }

    /// Whether this table caches routes of `snapshot`. The `Weak` keeps the allocation alive, so a
    /// pointer match cannot be a later snapshot at a reused address.
    pub(crate) fn serves(&self, snapshot: &Arc<ProviderSet>) -> bool {
        std::ptr::eq(self.snapshot.as_ptr(), Arc::as_ptr(snapshot))
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    pub(crate) fn nodes(&self) -> usize {
        self.nodes.load(Relaxed)
    }

    /// Whether a new node may be kept; counts it if so.
    fn admit(&self) -> bool {
        let admitted = self
            .nodes
            .fetch_update(Relaxed, Relaxed, |n| (n < MAX_NODES).then_some(n + 1))
            .is_ok();
        if !admitted {
            tracing::debug!(
                max = MAX_NODES,
                "routing cache full: route computed for this call only"
            );
        }
        admitted
    }

    fn root(&self, snapshot: &Arc<ProviderSet>, method: &str) -> Arc<Node> {
        let find = |roots: &Vec<(Box<str>, Arc<Node>)>| {
            roots
                .iter()
                .find(|(m, _)| **m == *method)
                .map(|(_, n)| Arc::clone(n))
        };
        if let Some(node) = find(&self.roots.load()) {
            return node;
        }
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let roots = self.roots.load_full();
        if let Some(node) = find(&roots) {
            return node;
        }
        let node = Arc::new(Node::new((0..snapshot.providers().len() as u32).collect()));
        if self.admit() {
            let mut more = Vec::clone(&roots);
            more.push((method.into(), Arc::clone(&node)));
            self.roots.store(Arc::new(more));
        }
        node
    }

    fn context<'a>(&'a self, providers: &'a [Arc<Provider>], method: &'a str) -> RouteContext<'a> {
        RouteContext {
            providers,
            method,
            consumer: &self.state.consumer,
        }
    }

    fn build_edge(
        &self,
        ctx: &RouteContext<'_>,
        router: &dyn Router,
        key: &RouteKey<'_>,
        node: &Node,
    ) -> Edge {
        match router.route(ctx, key, &node.kept).outcome {
            Outcome::Kept(kept) => Edge::To(Arc::new(Node::new(kept))),
            Outcome::Weighted(choices) => {
                let mut total = 0u64;
                let nodes = choices
                    .into_iter()
                    .map(|(weight, kept)| {
                        total = total.saturating_add(weight);
                        (total, Arc::new(Node::new(kept)))
                    })
                    .collect();
                Edge::Weighted(nodes)
            }
        }
    }

    /// The edge of `key` from `node`, built and kept (room permitting) on first sight.
    fn keyed_edge(
        &self,
        ctx: &RouteContext<'_>,
        router: &dyn Router,
        key: RouteKey<'_>,
        node: &Node,
    ) -> Edge {
        let find = |edges: &Edges| {
            edges
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, e)| e.clone())
        };
        if let Some(edge) = find(&node.keyed.load()) {
            return edge;
        }
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let edges = node.keyed.load_full();
        if let Some(edge) = find(&edges) {
            return edge;
        }
        let edge = self.build_edge(ctx, router, &key, node);
        if self.admit() {
            let mut more = Vec::clone(&edges);
            more.push((key.into_owned(), edge.clone()));
            node.keyed.store(Arc::new(more));
        }
        edge
    }

    fn fixed_edge(&self, ctx: &RouteContext<'_>, router: &dyn Router, node: &Node) -> Edge {
        node.fixed
            .get_or_init(|| self.build_edge(ctx, router, &RouteKey::Fixed, node))
            .clone()
    }

    fn view(&self, snapshot: &Arc<ProviderSet>, method: &str, node: &Node) -> Arc<MethodView> {
        let view = node.view.get_or_init(|| {
            if node.kept.len() == snapshot.providers().len() {
                // Nothing routed out: share the snapshot's own view and its policy state.
                return snapshot.view(method);
            }
            let providers: Arc<[Arc<Provider>]> = node
                .kept
                .iter()
                .map(|&i| Arc::clone(&snapshot.providers()[i as usize]))
                .collect();
            Arc::new(MethodView::new(providers, method))
        });
        Arc::clone(view)
    }

    /// The routed view of `invocation`, or `None` when the routers keep no provider.
    pub(crate) fn route(
        &self,
        snapshot: &Arc<ProviderSet>,
        invocation: &Invocation,
        rng: &RngSource,
    ) -> Option<Arc<MethodView>> {
        let method = invocation.method_name();
        let ctx = self.context(snapshot.providers(), method);
        let mut node = self.root(snapshot, method);
        for router in &self.state.routers {
            if node.kept.is_empty() {
                return None;
            }
            let edge = if router.reads_call() {
                self.keyed_edge(
                    &ctx,
                    &**router,
                    router.key(&self.state.consumer, invocation),
                    &node,
                )
            } else {
                self.fixed_edge(&ctx, &**router, &node)
            };
            node = match edge {
                Edge::To(next) => next,
                Edge::Weighted(choices) => draw(&choices, rng),
            };
        }
        (!node.kept.is_empty()).then(|| self.view(snapshot, method, &node))
    }

    /// Rebuilds in this table, for its snapshot, the routes `old` had cached (when both serve the same
    /// chain state), and prepares every routed view built.
    pub(crate) fn replay(
        &self,
        old: &Table,
        snapshot: &Arc<ProviderSet>,
        prepare_view: &dyn Fn(&MethodView),
    ) {
        if !Arc::ptr_eq(&old.state, &self.state) {
            return;
        }
        for (method, old_root) in old.roots.load().iter() {
            let ctx = self.context(snapshot.providers(), method);
            let root = self.root(snapshot, method);
            self.replay_node(&ctx, snapshot, Some(old_root), &root, 0, prepare_view);
        }
    }

    fn replay_node(
        &self,
        ctx: &RouteContext<'_>,
        snapshot: &Arc<ProviderSet>,
        old: Option<&Node>,
        node: &Node,
        depth: usize,
        prepare_view: &dyn Fn(&MethodView),
    ) {
        if node.kept.is_empty() {
            return;
        }
        let Some(router) = self.state.routers.get(depth) else {
            prepare_view(&self.view(snapshot, ctx.method, node));
            return;
        };
        let follow = |old_edge: Option<&Edge>, edge: &Edge| match (old_edge, edge) {
            (Some(Edge::To(o)), Edge::To(n)) => {
                self.replay_node(ctx, snapshot, Some(o), n, depth + 1, prepare_view)
            }
            (old_edge, Edge::Weighted(choices)) => {
                for (i, (_, n)) in choices.iter().enumerate() {
                    let o = match old_edge {
                        Some(Edge::Weighted(old_choices)) if old_choices.len() == choices.len() => {
                            Some(&*old_choices[i].1)
                        }
                        _ => None,
                    };
                    self.replay_node(ctx, snapshot, o, n, depth + 1, prepare_view);
                }
            }
            (_, Edge::To(n)) => self.replay_node(ctx, snapshot, None, n, depth + 1, prepare_view),
        };
        if !router.reads_call() {
            let edge = self.fixed_edge(ctx, &**router, node);
            follow(old.and_then(|o| o.fixed.get()), &edge);
            return;
        }
        let Some(old) = old else { return };
        for (key, old_edge) in old.keyed.load().iter() {
            let edge = self.keyed_edge(ctx, &**router, key.clone(), node);
            follow(Some(old_edge), &edge);
        }
    }
}

/// One weighted child: `x` uniform in `0..total`, the first child whose running sum exceeds it, so
/// each is chosen with probability weight / total. (Dubbo's `x -= w; if x <= 0` favours the first
/// subset by one in `total`.)
fn draw(choices: &[(u64, Arc<Node>)], rng: &RngSource) -> Arc<Node> {
    let total = choices.last().map_or(0, |(sum, _)| *sum);
    let x = rng.with(|r| r.below(total.max(1)));
    let i = choices.partition_point(|(sum, _)| *sum <= x);
    Arc::clone(&choices[i.min(choices.len() - 1)].1)
}
