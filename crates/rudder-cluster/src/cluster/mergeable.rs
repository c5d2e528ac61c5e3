//! `mergeable`: a reference spanning provider groups (`group=a,b` or `group=*`), one sub-cluster per group.
//!
//! As Dubbo: without a `merger` the call goes to the first group that has providers (a group without
//! any is skipped); with one, every group is called (concurrently) and their results merged by
//! [`Caller::merge`]. A group that has no provider is left out; a group whose answer is a business
//! exception is left out with a warning; any other failure fails the call. Within a group the call is
//! a failover with the reference's `retries`, as Dubbo's per-group `StaticDirectory` cluster.
//!
//! Unlike Dubbo, results are merged in group order (the `group` list as written, or group names sorted
//! for `*`), not in the `HashMap` order of the groups' service keys. `cluster=mergeable` on a
//! single-group reference treats every provider as a group of its own, as Dubbo does there.

use std::sync::Arc;

use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;

use super::timer::join_all;
use super::{no_provider, Caller, Core, Groups};
use crate::provider::Provider;

type GroupCall<'a, T> = super::timer::Branch<'a, Result<T, RpcError>>;

/// One group: its name and the listed providers outside it (what its failover excludes).
struct Group {
    name: String,
    members: usize,
    outside: Vec<Arc<Provider>>,
}

impl<C: Caller + 'static> Core<C> {
    pub(super) async fn mergeable(
        &self,
        invocation: &Invocation,
        merger: Option<&str>,
        groups: &Groups,
        retries: u32,
    ) -> Result<C::Output, RpcError> {
        let calls: Vec<GroupCall<'_, C::Output>> = match groups {
            Groups::EachProvider => {
                let all = self.pick_all(invocation)?;
                let take = if merger.is_some() { all.len() } else { 1 };
                all.into_iter()
                    .take(take)
                    .map(|picked| {
                        Box::pin(async move { self.call(&picked, invocation, 1).await })
                            as GroupCall<'_, C::Output>
                    })
                    .collect()
            }
            _ => {
                let groups = self.groups(invocation, groups);
                if groups.iter().all(|g| g.members == 0) {
                    return Err(no_provider(invocation));
                }
                let groups = groups.into_iter().filter(|g| g.members > 0);
                if merger.is_none() {
                    // The first group that has providers; one whose routing leaves none is skipped.
                    for group in groups {
                        match self.failover(invocation, retries, &group.outside).await {
                            Err(e) if e.kind() == RpcErrorKind::NoProvider => continue,
                            other => return other,
                        }
                    }
                    return Err(no_provider(invocation));
                }
                groups
                    .map(|group| {
                        tracing::trace!(group = group.name, "mergeable: calling group");
                        Box::pin(
                            async move { self.failover(invocation, retries, &group.outside).await },
                        ) as GroupCall<'_, C::Output>
                    })
                    .collect()
            }
        };
        let Some(merger) = merger else {
            // EachProvider without a merger: the one call made.
            return join_all(calls)
                .await
                .pop()
                .unwrap_or_else(|| Err(no_provider(invocation)));
        };
        let mut outputs = Vec::new();
        for result in join_all(calls).await {
            match result {
                Ok(out) => match self.caller().exception(&out) {
                    None => outputs.push(out),
                    Some(exception) => {
                        tracing::warn!(
                            exception,
                            "mergeable: leaving a group's exception out of the merge"
                        );
                    }
                },
                Err(e) if e.kind() == RpcErrorKind::NoProvider => {}
                Err(e) => return Err(e),
            }
        }
        match outputs.len() {
            0 => Ok(self.caller().empty()),
            1 => Ok(outputs.pop().expect("one output")),
            _ => self.caller().merge(merger, outputs),
        }
    }

    /// The groups to call, in order, from the current snapshot.
    fn groups(&self, invocation: &Invocation, groups: &Groups) -> Vec<Group> {
        let directory = self.balancer.directory();
        directory.with_current(|snapshot| {
            // Routed first, as Dubbo routes before the cluster invoker; none left: no group to call.
            self.balancer
                .with_routed_view(snapshot, invocation, |view| {
                    let group_of =
                        |p: &Provider| p.url().parameter("group").unwrap_or("").to_owned();
                    let names: Vec<String> = match groups {
                        Groups::Listed(_) => {
                            groups.names().into_iter().map(str::to_owned).collect()
                        }
                        _ => {
                            let mut names: Vec<String> =
                                view.providers().iter().map(|p| group_of(p)).collect();
                            names.sort();
                            names.dedup();
                            names
                        }
                    };
                    Ok(names
                        .into_iter()
                        .map(|name| {
                            let (members, outside): (Vec<_>, Vec<_>) = view
                                .providers()
                                .iter()
                                .cloned()
                                .partition(|p| group_of(p) == name);
                            Group {
                                name,
                                members: members.len(),
                                outside,
                            }
                        })
                        .collect())
                })
                .unwrap_or_default()
        })
    }
}
