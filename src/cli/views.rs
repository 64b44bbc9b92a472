//! Reading Rollouts as `status` shows them, once (`status`) or again at every change (`status
//! -w`, `approve`'s follow-up): each with its objects placed and its workload's replicas.

use super::StatusArgs;
use super::claim::claim_of;
use super::cluster::Session;
use crate::error::Error;
use crate::model::{self, ObjectKey, ObjectRef};
use crate::source::cluster::Cluster;
use crate::source::live::{self, Selection, Workloads};
use crate::status::{RolloutView, WorkloadView};
use crate::write;
use serde_json::Value;
use std::collections::BTreeSet;

/// The Rollouts `status` shows: some of one namespace, or those of every namespace.
#[derive(Clone, Debug)]
pub(super) enum Scope {
    Namespace(Selection),
    /// `-A`: every namespace's Rollouts, or those a label selector picks.
    AllNamespaces(Option<String>),
}

impl Scope {
    pub(super) fn of(args: &StatusArgs) -> Scope {
        let selection = &args.selection;
        match (&selection.selector, args.all_namespaces) {
            (selector, true) => Scope::AllNamespaces(selector.clone()),
            (Some(selector), false) => Scope::Namespace(Selection::Selector(selector.clone())),
            (None, false) if selection.rollouts.is_empty() => Scope::Namespace(Selection::All),
            (None, false) => Scope::Namespace(Selection::Names(selection.rollouts.clone())),
        }
    }
}

/// What a read makes of a Rollout named on the command line that is not found.
#[derive(Clone, Copy)]
pub(super) enum Missing {
    /// An error, as kubectl's: the name may be wrong.
    Fails,
    /// Left out: following has seen it, and tells that it was deleted.
    LeftOut,
}

/// How Rollouts are read for their views.
#[derive(Clone, Copy)]
pub(super) struct Read<'a> {
    pub(super) missing: Missing,
    /// Whether each Rollout's claim is read (`status` shows it; following does not).
    pub(super) claims: bool,
    /// None: every Rollout is read.
    pub(super) since: Option<Since<'a>>,
}

/// The last views and the Rollouts changed since: only those, and any not among the last views,
/// are read again; the others keep their last views.
#[derive(Clone, Copy)]
pub(super) struct Since<'a> {
    pub(super) last: &'a [RolloutView],
    /// (namespace, name).
    pub(super) changed: &'a BTreeSet<(String, String)>,
}

impl Read<'_> {
    /// Every Rollout read afresh, without claims.
    pub(super) fn all(missing: Missing) -> Read<'static> {
        Read { missing, claims: false, since: None }
    }
}

/// Reads the Rollouts of `scope` and places their objects.
pub(super) async fn views(session: &Session, scope: &Scope, read: Read<'_>) -> Result<Vec<RolloutView>, Error> {
    let (sessions, selection) = match scope {
        Scope::Namespace(selection) => return views_in(session, selection, read).await,
        Scope::AllNamespaces(selector) => each_namespace(session, selector.as_deref()).await?,
    };
    let views = futures::future::try_join_all(sessions.iter().map(|session| async {
        let namespace = &session.cluster.namespace;
        match read.since {
            // Nothing changed there: as last read.
            Some(since) if !since.changed.iter().any(|(n, _)| n == namespace) => {
                Ok(since.last.iter().filter(|v| &v.namespace == namespace).cloned().collect())
            }
            _ => views_in(session, &selection, read).await,
        }
    }))
    .await?;
    // Once, on the pass that read every namespace.
    if read.since.is_none() {
        Session::check_scripts_used(&sessions)?;
    }
    Ok(views.concat())
}

/// `-A`: a session in each namespace that has Rollouts (that `selector` picks: one LIST of the
/// cluster's), sharing one read of the script ConfigMap, and the selection to read there. Each
/// pass (a refresh of `status -w -A`) makes its own, so the ConfigMap is read again with the
/// Rollouts.
pub(super) async fn each_namespace(
    session: &Session,
    selector: Option<&str>,
) -> Result<(Vec<Session>, Selection), Error> {
    let resource = live::rollout_resource(&session.cluster).await?;
    let found = session.cluster.list(&resource, "", selector.unwrap_or_default()).await.map_err(|error| match &error {
        // Who may list Rollouts only in some namespaces is asked for in one of them.
        Error::Api { failure, .. } if failure.code == Some(403) => error.with_report(
            "  -A lists the Rollouts at the cluster scope: name a namespace instead (-n NAMESPACE), or the Rollouts there (NAME… -n NAMESPACE)",
        ),
        _ => error,
    })?;
    let namespaces: BTreeSet<&str> = found.iter().filter_map(|r| r["metadata"]["namespace"].as_str()).collect();
    let sessions = session.in_namespaces(namespaces);
    Ok((sessions, selector.map_or(Selection::All, |selector| Selection::Selector(selector.into()))))
}

/// The note, as kubectl get's, that `scope` holds no Rollouts (the session's namespace, or any).
pub(super) fn none_found(session: &Session, scope: &Scope) {
    let place = match scope {
        Scope::AllNamespaces(_) => "any namespace".to_string(),
        Scope::Namespace(_) => format!("namespace {}", session.cluster.namespace),
    };
    crate::stderr::line(&format!("No Rollouts found in {place}."));
}

/// Reads the selected Rollouts of the session's namespace and places their objects (a plan of
/// every stage). One that cannot be loaded is a view with its error, in its place.
async fn views_in(session: &Session, selection: &Selection, read: Read<'_>) -> Result<Vec<RolloutView>, Error> {
    let cluster = &session.cluster;
    let mut listed = live::list_each(cluster, selection).await.map_err(|e| live::selected_unlisted(e, selection))?;
    let order: Vec<String> = listed.names().into_iter().map(str::to_string).collect();
    let last_of = |name: &str| {
        let since = read.since?;
        let key = (cluster.namespace.clone(), name.to_string());
        since.last.iter().find(|v| v.namespace == key.0 && v.name == name).filter(|_| !since.changed.contains(&key))
    };
    listed.retain(|name| last_of(name).is_none());
    // The claims are read by name (a LIST of Leases needs a permission a user may not have),
    // together with the Rollouts' world; one that cannot be read is a warning, not an error.
    let claimed: Vec<String> = match read.claims {
        true => listed.names().into_iter().map(str::to_string).collect(),
        false => Vec::new(),
    };
    let claims = futures::future::join_all(
        claimed.iter().map(|name| async move { claim_of(cluster, &cluster.namespace, name).await }),
    );
    let (loaded, claims) = futures::future::join(session.load_listed(listed, Workloads::All), claims).await;
    let (live, catalog, unloaded) = loaded?;
    if let Missing::Fails = read.missing {
        live.found_all(&cluster.namespace)?;
    }
    // A timed pause's time left is counted from a time the controller wrote on the API
    // server's clock: on this host's, off by minutes, a running pause would be called over.
    let now = cluster.server_now();
    // An object another Rollout read here routes too: warned of, as plan warns (its place for
    // one of them is the other's routing, drifted).
    let shared = live.snapshot.shared_objects();
    let mut views: Vec<RolloutView> = live
        .snapshot
        .rollouts
        .iter()
        .map(|rollout| {
            let plan = session.plan_to_place(&live, &catalog, rollout).map_err(|e| e.to_string());
            // One that cannot be read fails the plan, which says so.
            let cr = live.snapshot.traffic_routing_of(rollout).ok().flatten().map(|cr| &cr.item);
            let workload = rollout.item.workload.as_ref().and_then(|reference| {
                let object = live.snapshot.objects.get(&ObjectKey::of_ref(reference, &rollout.namespace))?;
                Some(workload_view(reference, object))
            });
            let unread = rollout.item.workload.as_ref().and_then(|reference| {
                let key = ObjectKey::of_ref(reference, &rollout.namespace);
                Some((live.snapshot.objects.unread(&key)?, key))
            });
            let mut view = RolloutView::new(
                &rollout.item,
                &rollout.namespace,
                cr,
                plan.as_ref().map_err(Clone::clone),
                workload,
                now,
            );
            view.warnings.extend(
                shared.get(&(rollout.namespace.as_str(), rollout.item.name.as_str())).into_iter().flatten().cloned(),
            );
            // Said once: the plan warns of it where the count decides a step's routing.
            if let Some(((failure, needed), key)) = unread
                && !view.warnings.iter().any(|w| w.starts_with("cannot read its workload"))
            {
                let doing = format!("read its workload {key}");
                view.warnings.push(model::unread_warning(&doing, &failure, "its replicas are not shown", needed));
            }
            view
        })
        .collect();
    for unloaded in unloaded {
        let view = match &unloaded.rollout {
            Some(r) => {
                // Its world could not be read, nor its workload with it: read on its own.
                let workload = workload(cluster, r.item.workload.as_ref()).await;
                // Shown from its own fields.
                RolloutView::new(&r.item, &r.namespace, None, Err(unloaded.error), workload, now)
            }
            None => RolloutView::unparsed(&unloaded.name, &cluster.namespace, unloaded.error),
        };
        views.push(view);
    }
    for (name, claim) in claimed.iter().zip(claims) {
        if let Some(view) = views.iter_mut().find(|v| &v.name == name) {
            match claim {
                Ok(claim) => view.claim = claim,
                Err(e) => view.warnings.push(claim_unread(&cluster.namespace, name, &e)),
            }
        }
    }
    // In the order they were read, each read again or as last read.
    Ok(order
        .iter()
        .filter_map(|name| match last_of(name) {
            Some(last) => Some(last.clone()),
            None => views.iter().position(|v| &v.name == name).map(|index| views.swap_remove(index)),
        })
        .collect())
}

/// The warning of a claim on Rollout `namespace/name` that could not be read (`error`): nobody
/// is shown to hold it, which may not be so.
fn claim_unread(namespace: &str, name: &str, error: &Error) -> String {
    let lease = write::lease_key(namespace, name);
    let doing = format!("read the claim on Rollout {namespace}/{name} (Lease {namespace}/{})", lease.name);
    let left_out = "whether an approve or restore holds it is not shown";
    match error {
        Error::Api { failure, .. } => {
            let needed = write::lease_resource().permission("get", None, namespace).on(&lease.name);
            model::unread_warning(&doing, failure, left_out, Some(&needed).filter(|_| failure.code == Some(403)))
        }
        other => model::unread_warning(&doing, other, left_out, None),
    }
}

/// The workload's replicas, when it can be read (a missing permission only hides them).
async fn workload(cluster: &Cluster, reference: Option<&ObjectRef>) -> Option<WorkloadView> {
    let reference = reference?;
    let resource = cluster.resource(reference.group(), reference.version(), &reference.kind, false).await.ok()??;
    let object = cluster.get(&resource, &cluster.namespace, &reference.name).await.ok()??;
    Some(workload_view(reference, &object))
}

fn workload_view(reference: &ObjectRef, object: &Value) -> WorkloadView {
    WorkloadView {
        kind: reference.kind.clone(),
        name: reference.name.clone(),
        replicas: object["status"]["replicas"].as_i64(),
        ready_replicas: object["status"]["readyReplicas"].as_i64(),
    }
}
