//! Reading Rollouts as `status` shows them, once (`status`) or again at every change (`status
//! -w`, `approve`'s follow-up): each with its objects placed and its workload's replicas.

use super::StatusArgs;
use super::cluster::Session;
use crate::error::Error;
use crate::model::ObjectRef;
use crate::source::cluster::Cluster;
use crate::source::live::{self, Selection};
use crate::status::{RolloutView, WorkloadView};
use std::collections::BTreeSet;
use std::time::SystemTime;

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

/// Reads the Rollouts of `scope` and places their objects.
pub(super) async fn views(session: &Session, scope: &Scope, missing: Missing) -> Result<Vec<RolloutView>, Error> {
    let selection = match scope {
        Scope::Namespace(selection) => return views_in(session, selection, missing).await,
        Scope::AllNamespaces(Some(selector)) => Selection::Selector(selector.clone()),
        Scope::AllNamespaces(None) => Selection::All,
    };
    // The namespaces that have any, then each namespace's Rollouts with their world.
    let resource = live::rollout_resource(&session.cluster).await?;
    let selector = match &selection {
        Selection::Selector(selector) => selector.as_str(),
        _ => "",
    };
    let found = session.cluster.list(&resource, "", selector).await.map_err(|error| match &error {
        // Who may list Rollouts only in some namespaces is asked for in one of them.
        Error::Api { failure, .. } if failure.code == Some(403) => error.with_report(
            "  -A lists the Rollouts at the cluster scope: name a namespace instead (-n NAMESPACE), or the Rollouts there (NAME… -n NAMESPACE)",
        ),
        _ => error,
    })?;
    let namespaces: BTreeSet<&str> = found.iter().filter_map(|r| r["metadata"]["namespace"].as_str()).collect();
    let sessions: Vec<Session> = namespaces.into_iter().map(|namespace| session.in_namespace(namespace)).collect();
    let views =
        futures::future::try_join_all(sessions.iter().map(|session| views_in(session, &selection, missing))).await?;
    Ok(views.concat())
}

/// Reads the selected Rollouts of the session's namespace and places their objects (a plan of
/// every stage). One that cannot be loaded is a view with its error, in its place.
async fn views_in(session: &Session, selection: &Selection, missing: Missing) -> Result<Vec<RolloutView>, Error> {
    let (live, catalog, unloaded) = session.load_each(selection).await?;
    if let Missing::Fails = missing {
        live.found_all(&session.cluster.namespace)?;
    }
    let workloads = futures::future::join_all(
        live.snapshot.rollouts.iter().map(|r| workload(&session.cluster, r.item.workload.as_ref())),
    )
    .await;
    let now = SystemTime::now();
    let mut views: Vec<RolloutView> = live
        .snapshot
        .rollouts
        .iter()
        .zip(workloads)
        .map(|(rollout, workload)| {
            let plan = session.plan_to_place(&live, &catalog, rollout).map_err(|e| e.to_string());
            // One that cannot be read fails the plan, which says so.
            let cr = live.snapshot.traffic_routing_of(rollout).ok().flatten().map(|cr| &cr.item);
            RolloutView::new(&rollout.item, &rollout.namespace, cr, plan.as_ref().map_err(Clone::clone), workload, now)
        })
        .collect();
    // In the order they were read: each goes back to its place among them.
    for unloaded in unloaded {
        let view = match &unloaded.rollout {
            Some(r) => {
                let workload = workload(&session.cluster, r.item.workload.as_ref()).await;
                // Shown from its own fields.
                RolloutView::new(&r.item, &r.namespace, None, Err(unloaded.error), workload, now)
            }
            None => RolloutView::unparsed(&unloaded.name, &session.cluster.namespace, unloaded.error),
        };
        views.insert(unloaded.index.min(views.len()), view);
    }
    Ok(views)
}

/// The workload's replicas, when it can be read (a missing permission only hides them).
async fn workload(cluster: &Cluster, reference: Option<&ObjectRef>) -> Option<WorkloadView> {
    let reference = reference?;
    let resource = cluster.resource(reference.group(), reference.version(), &reference.kind, false).await.ok()??;
    let object = cluster.get(&resource, &cluster.namespace, &reference.name).await.ok()??;
    Some(WorkloadView {
        kind: reference.kind.clone(),
        name: reference.name.clone(),
        replicas: object["status"]["replicas"].as_i64(),
        ready_replicas: object["status"]["readyReplicas"].as_i64(),
    })
}
