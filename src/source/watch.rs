//! Following Rollouts as `kubectl get -w` does: a watch, resumed from the last resourceVersion
//! seen when the connection drops or the server ends it, listed again when that version has
//! expired, and polling only where listing or watching is forbidden; and a watch of the gateway
//! objects they route through, each change of one a change of its Rollouts.

use super::cluster::{Cluster, Resource, Watched};
use super::live::{self, Selection, rollout_name};
use crate::error::Error;
use crate::model::http_route;
use crate::model::{ObjectKey, ObjectRef};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// How often Rollouts are read where they may not be watched.
pub const POLL: Duration = Duration::from_secs(2);

/// The shortest time between two openings of the watch, so that a server (or proxy) that ends
/// every watch at once is not asked again in a loop.
const REOPEN_AFTER: Duration = Duration::from_secs(1);

/// The longest a watch is asked to last (the API server's own limit is about 5 minutes).
const WATCH_AT_MOST: Duration = Duration::from_secs(290);

/// What may have changed since the last wait for a change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Changes {
    /// These Rollouts (namespace, name): added, changed or deleted.
    Rollouts(BTreeSet<(String, String)>),
    /// Any of them: the watch started over from a fresh list, or they are polled.
    Unknown,
}

/// Changes to the selected Rollouts.
pub struct RolloutWatch {
    watch: Watch,
    /// Several names: the namespace is watched, and changes of other Rollouts are ignored.
    names: Option<BTreeSet<String>>,
    /// Polling: when the Rollouts are next read, counted from the last time, so that a wait
    /// given up for another change (a gateway object's) does not put it off.
    next_poll: Option<Instant>,
}

impl RolloutWatch {
    /// Starts following the Rollouts `selection` picks in `namespace` (`""`: every namespace):
    /// their resourceVersion now. The watch from it is opened by the first [`Self::changed`], so
    /// that what is read in between is shown before the watch is asked for, and each change
    /// after that version is still seen.
    pub async fn start(cluster: &Cluster, namespace: &str, selection: &Selection) -> Result<RolloutWatch, Error> {
        let (labels, fields, names) = match selection {
            Selection::Names(names) => {
                let names: BTreeSet<String> = names.iter().map(|n| rollout_name(n).to_string()).collect();
                match names.iter().collect::<Vec<_>>().as_slice() {
                    [name] => (String::new(), format!("metadata.name={name}"), None),
                    _ => (String::new(), String::new(), Some(names)),
                }
            }
            Selection::Selector(selector) => (selector.clone(), String::new(), None),
            Selection::All => (String::new(), String::new(), None),
        };
        let resource = live::rollout_resource(cluster).await?;
        let watch = Watch::start(cluster, resource, namespace, (labels, fields), "Rollouts".into()).await?;
        Ok(RolloutWatch { watch, names, next_poll: None })
    }

    /// Why the Rollouts are polled instead of watched, if they are.
    pub fn polling(&self) -> Option<&str> {
        self.watch.forbidden.as_deref()
    }

    /// Waits until selected Rollouts change (added, changed, deleted): those, with the changes
    /// of others already received; or, when the watch had to start over from a fresh list (or
    /// turned to polling), any may have; polling, until the next read is due. A failed request
    /// (opening the watch, the LIST after a 410) is returned as it is and leaves the watch to be
    /// opened again from the version seen by the next call: the follower decides whether to try
    /// again.
    pub async fn changed(&mut self) -> Result<Changes, Error> {
        if self.watch.forbidden.is_some() {
            let due = *self.next_poll.get_or_insert_with(|| Instant::now() + POLL);
            tokio::time::sleep_until(due.into()).await;
            self.next_poll = None;
            return Ok(Changes::Unknown);
        }
        let names = &self.names;
        match self.watch.changed(|_, name| names.as_ref().is_none_or(|names| names.contains(name))).await? {
            Seen::Objects(changed) => Ok(Changes::Rollouts(changed)),
            Seen::Unknown => Ok(Changes::Unknown),
        }
    }
}

/// Changes to the gateway objects that the followed Rollouts route through (custom refs, the
/// canary and stable Ingresses, HTTPRoutes): one watch per resource and namespace, whatever the
/// number of objects, each change taken for a change of the Rollouts that route through the
/// object. A resource that may not be listed or watched there is not watched: its objects are
/// read again only with everything else (the follower's full re-read); one whose watch fails
/// is opened again at the next wait.
pub struct GatewayWatch {
    cluster: Cluster,
    watches: BTreeMap<GatewayKey, Watch>,
    /// The Rollouts (namespace, name) that route through each object.
    routes: BTreeMap<ObjectKey, BTreeSet<(String, String)>>,
    /// The resources (`Resource::qualified`) said to be forbidden: once each, whatever the
    /// namespaces.
    said_forbidden: BTreeSet<String>,
}

/// A gateway watch's resource and namespace: (group, kind, namespace).
type GatewayKey = (String, String, String);

/// An object that a followed Rollout routes through.
pub struct Routed {
    pub reference: ObjectRef,
    pub namespace: String,
    /// The Rollout: (namespace, name).
    pub rollout: (String, String),
}

impl GatewayWatch {
    pub fn new(cluster: &Cluster) -> GatewayWatch {
        GatewayWatch {
            cluster: cluster.clone(),
            watches: BTreeMap::new(),
            routes: BTreeMap::new(),
            said_forbidden: BTreeSet::new(),
        }
    }

    /// Follows the objects `routed` (those of every followed Rollout, as last read): starts the
    /// watch of each resource and namespace not watched yet (its resourceVersion now, from a
    /// LIST: a change between the read and the LIST is seen at the next full re-read), and
    /// stops those that no Rollout routes through any more. A resource not served, or whose LIST
    /// fails, is tried again at the next call.
    pub async fn follow(&mut self, routed: impl IntoIterator<Item = Routed>) {
        self.routes.clear();
        let mut needed = BTreeMap::new();
        for Routed { reference, namespace, rollout } in routed {
            let key = ObjectKey::of_ref(&reference, &namespace);
            needed.entry((key.group.clone(), key.kind.clone(), namespace)).or_insert(reference);
            self.routes.entry(key).or_default().insert(rollout);
        }
        self.watches.retain(|key, _| needed.contains_key(key));
        let cluster = &self.cluster;
        let missing = needed.into_iter().filter(|(key, _)| !self.watches.contains_key(key));
        let started = futures::future::join_all(missing.map(|(key, reference)| async move {
            // HTTPRoutes at the version they are read at, whatever version a routing names: a
            // missing route a v1-only server would otherwise go unwatched.
            let version = match (reference.group(), reference.kind.as_str()) {
                (http_route::GROUP, http_route::KIND) => live::http_route_version(cluster).await.ok().flatten()?,
                _ => reference.version(),
            };
            let resource = cluster.resource(reference.group(), version, &reference.kind, false).await;
            let resource = resource.ok().flatten()?;
            let (_, _, namespace) = &key;
            let what = format!("{} in namespace {namespace}", resource.qualified());
            let watch = Watch::start(cluster, resource, namespace, Default::default(), what).await.ok()?;
            Some((key, watch))
        }))
        .await;
        self.watches.extend(started.into_iter().flatten());
    }

    /// Waits until an object that some followed Rollout routes through changes: those
    /// Rollouts; when a watch had to start over from a fresh list, every Rollout that routes
    /// through objects of its resource in its namespace. Never returns without such a watch.
    pub async fn changed(&mut self) -> Changes {
        // Only the watch that saw something is waited on anew: the others' waits go on (a
        // request of theirs out, a watch being opened or listed again, is not cut off).
        let mut waiting: Vec<_> =
            self.watches.iter_mut().filter(|(_, watch)| watch.forbidden.is_none()).map(|(k, w)| next(k, w)).collect();
        loop {
            if waiting.is_empty() {
                return std::future::pending().await;
            }
            let ((key, seen, watch), _, rest) = futures::future::select_all(waiting).await;
            waiting = rest;
            // A failure (no answer, or one that is not a 403) is tried again at the next wait:
            // opened again at most once a second, from the version seen, or listed again.
            if let Ok(seen) = seen {
                let rollouts = routed_through(&self.routes, key, seen);
                if !rollouts.is_empty() {
                    return Changes::Rollouts(rollouts);
                }
                if watch.forbidden.is_none() {
                    waiting.push(next(key, watch));
                }
            }
        }
    }

    /// Why resources are not watched (listing or watching them is forbidden), for each not
    /// said before.
    pub fn unsaid_forbidden(&mut self) -> Vec<String> {
        let said = &mut self.said_forbidden;
        let forbidden = self.watches.values().filter_map(|w| Some((w.resource.qualified(), w.forbidden.as_ref()?)));
        forbidden.filter(|(resource, _)| said.insert(resource.clone())).map(|(_, why)| why.clone()).collect()
    }
}

/// A gateway watch's (`GatewayKey`) next change, with the watch back, to be waited on again.
fn next<'a>(
    key: &'a GatewayKey,
    watch: &'a mut Watch,
) -> BoxFuture<'a, (&'a GatewayKey, Result<Seen, Error>, &'a mut Watch)> {
    Box::pin(async move {
        let seen = watch.changed(|_, _| true).await;
        (key, seen, watch)
    })
}

/// The Rollouts that route through what the watch of `(group, kind, namespace)` saw: the
/// objects changed, or when that is not known any of its objects.
fn routed_through(
    routes: &BTreeMap<ObjectKey, BTreeSet<(String, String)>>,
    (group, kind, namespace): &GatewayKey,
    seen: Seen,
) -> BTreeSet<(String, String)> {
    match seen {
        Seen::Objects(objects) => objects
            .into_iter()
            .filter_map(|(namespace, name)| routes.get(&ObjectKey::new(group, kind, &namespace, &name)))
            .flatten()
            .cloned()
            .collect(),
        Seen::Unknown => routes
            .iter()
            .filter(|(o, _)| (&o.group, &o.kind, &o.namespace) == (group, kind, namespace))
            .flat_map(|(_, rollouts)| rollouts.iter().cloned())
            .collect(),
    }
}

/// What a watch saw.
enum Seen {
    /// These objects (namespace, name): added, changed or deleted.
    Objects(BTreeSet<(String, String)>),
    /// Any of them: the watch started over from a fresh list, or turned out to be forbidden.
    Unknown,
}

/// The objects of a resource in a namespace (`""`: every namespace) that label and field
/// selectors pick, watched as `kubectl get -w` does. Its events are taken from the server's
/// stream one at a time as they are waited for: nothing piles up beyond what the connection
/// holds, and what is kept between two waits is at most a set of the objects it watches.
struct Watch {
    cluster: Cluster,
    resource: Resource,
    namespace: String,
    labels: String,
    fields: String,
    /// The last resourceVersion seen: where the watch resumes.
    version: String,
    events: Option<BoxStream<'static, Result<Watched, String>>>,
    opened: Option<Instant>,
    /// What is watched, as messages say it (`Rollouts`).
    what: String,
    /// Why it may not be watched: listing or watching is forbidden.
    forbidden: Option<String>,
    /// The version seen has expired (a 410): it is listed again before anything else, and that
    /// is a change of any object, also when a wait was given up during that LIST.
    expired: bool,
}

impl Watch {
    /// The watch of `resource` from its resourceVersion now (a LIST); opened by the first
    /// [`Self::changed`].
    async fn start(
        cluster: &Cluster,
        resource: Resource,
        namespace: &str,
        (labels, fields): (String, String),
        what: String,
    ) -> Result<Watch, Error> {
        let mut watch = Watch {
            cluster: cluster.clone(),
            resource,
            namespace: namespace.to_string(),
            labels,
            fields,
            version: String::new(),
            events: None,
            opened: None,
            what,
            forbidden: None,
            expired: false,
        };
        watch.list_again().await?;
        Ok(watch)
    }

    /// Waits until objects it watches change (added, changed, deleted): those that `selected`
    /// (namespace, name) keeps, with the changes of others already received; or, when it had
    /// to start over from a fresh list (or turned out to be forbidden), any may have. A failed
    /// request (opening the watch, the LIST after a 410) is returned as it is and leaves the
    /// watch to be opened again from the version seen by the next call. Not to be waited on once
    /// forbidden. Dropped while it waits, it loses nothing: what it received it returns at once.
    async fn changed(&mut self, selected: impl Fn(&str, &str) -> bool) -> Result<Seen, Error> {
        let mut changed = BTreeSet::new();
        loop {
            if self.expired {
                // What happened since the version seen is unknown.
                self.list_again().await?;
                self.expired = false;
                return Ok(Seen::Unknown);
            }
            let Some(events) = &mut self.events else {
                if !changed.is_empty() {
                    return Ok(Seen::Objects(changed));
                }
                if let Some(opened) = self.opened {
                    tokio::time::sleep(REOPEN_AFTER.saturating_sub(opened.elapsed())).await;
                }
                if !self.open().await? && self.forbidden.is_some() {
                    return Ok(Seen::Unknown);
                }
                continue;
            };
            // After a change, the others already received come with it: one read for a burst.
            let event = match changed.is_empty() {
                true => events.next().await,
                false => match events.next().now_or_never() {
                    Some(event) => event,
                    None => return Ok(Seen::Objects(changed)),
                },
            };
            match event {
                Some(Ok(Watched::Changed { version, namespace, name })) => {
                    self.version = version;
                    if selected(&namespace, &name) && (self.namespace.is_empty() || self.namespace == namespace) {
                        changed.insert((namespace, name));
                    }
                }
                Some(Ok(Watched::At(version))) => self.version = version,
                Some(Ok(Watched::Expired)) => {
                    self.events = None;
                    self.expired = true;
                }
                // The server ended the watch, or the connection broke: resume from the version seen.
                Some(Err(_)) | None => self.events = None,
            }
        }
    }

    /// Opens the watch from the version seen; false when that version expired (`expired`) or
    /// watching is forbidden.
    async fn open(&mut self) -> Result<bool, Error> {
        self.opened = Some(Instant::now());
        // The server ends the watch before the request limit cuts it off (super::deadline):
        // after half the limit.
        let timeout = self.cluster.request_limit().map_or(WATCH_AT_MOST, |limit| (limit / 2).min(WATCH_AT_MOST));
        let selectors = (self.labels.as_str(), self.fields.as_str());
        match self.cluster.watch(&self.resource, &self.namespace, selectors, &self.version, timeout).await {
            Ok(events) => {
                self.events = Some(events);
                Ok(true)
            }
            Err(Error::Api { failure, .. }) if failure.code == Some(410) => {
                self.expired = true;
                Ok(false)
            }
            Err(error @ Error::Api { .. }) if forbidden(&error) => {
                self.forbidden = Some(format!("watching {} is forbidden ({error})", self.what));
                Ok(false)
            }
            Err(error) => Err(error),
        }
    }

    /// The current resourceVersion of the objects watched, from a LIST.
    async fn list_again(&mut self) -> Result<(), Error> {
        match self.cluster.list_version(&self.resource, &self.namespace, &self.labels).await {
            Ok(version) => self.version = version,
            Err(error) if forbidden(&error) => {
                self.forbidden = Some(format!("listing {} is forbidden ({error})", self.what));
            }
            Err(error) => return Err(error),
        }
        Ok(())
    }
}

fn forbidden(error: &Error) -> bool {
    matches!(error, Error::Api { failure, .. } if failure.code == Some(403))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(namespace: &str, name: &str) -> (String, String) {
        (namespace.into(), name.into())
    }

    #[test]
    fn a_change_of_a_gateway_object_is_one_of_the_rollouts_routing_through_it() {
        let ingress = |namespace: &str, name: &str| ObjectKey::new("networking.k8s.io", "Ingress", namespace, name);
        let routes = BTreeMap::from([
            (ingress("shop", "web-canary"), BTreeSet::from([pair("shop", "web")])),
            (ingress("shop", "web"), BTreeSet::from([pair("shop", "web"), pair("shop", "cart")])),
            (ingress("other", "web"), BTreeSet::from([pair("other", "web")])),
            (
                ObjectKey::new("networking.istio.io", "VirtualService", "shop", "vs"),
                BTreeSet::from([pair("shop", "vs")]),
            ),
        ]);
        let ingresses_of_shop = ("networking.k8s.io".to_string(), "Ingress".to_string(), "shop".to_string());
        let changed = |objects: &[(&str, &str)]| {
            let seen = Seen::Objects(objects.iter().map(|(n, o)| pair(n, o)).collect());
            routed_through(&routes, &ingresses_of_shop, seen)
        };
        assert_eq!(changed(&[("shop", "web-canary")]), BTreeSet::from([pair("shop", "web")]));
        assert_eq!(changed(&[("shop", "web")]), BTreeSet::from([pair("shop", "web"), pair("shop", "cart")]));
        // An Ingress no Rollout followed routes through changes none.
        assert_eq!(changed(&[("shop", "admin")]), BTreeSet::new());
        // Not known which: each Rollout routing through an Ingress of that namespace.
        assert_eq!(
            routed_through(&routes, &ingresses_of_shop, Seen::Unknown),
            BTreeSet::from([pair("shop", "web"), pair("shop", "cart")])
        );
    }
}
