//! Keys for the per-view state of policies and balancers.

use std::any::TypeId;
use std::sync::atomic::{AtomicU64, Ordering};

/// What per-view state is filed under in a [`MethodView`](super::MethodView): one key per policy
/// instance ([`StateKey::unique`]), or one per type for state that any instance would build the same
/// way ([`StateKey::of`]).
///
/// ```
/// use rudder_cluster::loadbalance::StateKey;
/// assert_ne!(StateKey::unique(), StateKey::unique());
/// assert_eq!(StateKey::of::<Vec<u32>>(), StateKey::of::<Vec<u32>>());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StateKey(Key);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Instance(u64),
    Type(TypeId),
}

impl StateKey {
    /// A key no other call returns: for state that belongs to one policy (or balancer) instance.
    pub fn unique() -> StateKey {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        StateKey(Key::Instance(NEXT.fetch_add(1, Ordering::Relaxed)))
    }

    /// The key of state of type `T` that depends only on the view.
    pub fn of<T: 'static>() -> StateKey {
        StateKey(Key::Type(TypeId::of::<T>()))
    }
}
