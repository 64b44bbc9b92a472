//! `status`: where Rollouts and their gateway objects stand, once or followed (`-w`).

use super::claim::claim_of;
use super::cluster::{Session, runtime};
use super::follow::Follower;
use super::{Outcome, StatusArgs, print, print_raw};
use crate::error::Error;
use crate::model::ObjectRef;
use crate::source::cluster::Cluster;
use crate::source::live::{self, Selection};
use crate::status::{Progress, RolloutView, WorkloadView};
use crate::write::Interrupt;
use std::collections::BTreeSet;
use std::io::Write;
use std::time::SystemTime;

/// The Rollouts `status` shows: some of one namespace, or those of every namespace.
#[derive(Clone, Debug)]
pub(super) enum Scope {
    Namespace(Selection),
    /// `-A`: every namespace's Rollouts, or those a label selector picks.
    AllNamespaces(Option<String>),
}

impl Scope {
    fn of(args: &StatusArgs) -> Scope {
        let selection = &args.selection;
        match (&selection.selector, args.all_namespaces) {
            (selector, true) => Scope::AllNamespaces(selector.clone()),
            (Some(selector), false) => Scope::Namespace(Selection::Selector(selector.clone())),
            (None, false) if selection.rollouts.is_empty() => Scope::Namespace(Selection::All),
            (None, false) => Scope::Namespace(Selection::Names(selection.rollouts.clone())),
        }
    }
}

pub fn status(args: &StatusArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let session = Session::open(&args.cluster, &args.scripts).await?;
        let scope = Scope::of(args);
        if !args.watch {
            let mut views = views(&session, &scope).await?;
            if views.is_empty() {
                // As kubectl get: a note, not an error.
                let place = match scope {
                    Scope::AllNamespaces(_) => "any namespace".to_string(),
                    Scope::Namespace(_) => format!("namespace {}", session.cluster.namespace),
                };
                let _ = writeln!(anstream::stderr(), "No Rollouts found in {place}.");
            }
            for view in &mut views {
                // A claim only shows; a missing permission to read Leases hides it.
                view.claim = claim_of(&session.cluster, &view.namespace, &view.name).await.ok().flatten();
            }
            match args.output {
                Some(format) => print_raw(&super::offline::render(&serde_json::to_value(&views)?, format))?,
                None => print(&views.iter().map(RolloutView::text).collect::<Vec<_>>().join("\n"))?,
            }
            return match unloaded_error(&views) {
                Some(error) => Err(error.into()),
                None => Ok(Outcome::Done),
            };
        }
        let mut follower = Follower::new(args.timeout, Interrupt::listen(None)?);
        // --until-paused: every Rollout waits for approval, or has nothing left to wait for.
        let settled = |v: &RolloutView| {
            v.progress.is_final() || (args.until_paused && v.progress == Progress::WaitingForApproval)
        };
        let goal = if args.until_paused { "wait for approval, complete or fail" } else { "complete or fail" };
        // The Rollouts not settled when last read: what a timeout names.
        let mut waiting = String::from("the Rollouts to be read");
        loop {
            let views = follower.next(&session, &scope).await.map_err(|e| match e {
                Error::TimedOut(message) => Error::TimedOut(format!("{message} waiting for {waiting}")),
                other => other,
            })?;
            let unsettled: Vec<String> = views
                .iter()
                .filter(|v| !settled(v))
                .map(|v| {
                    let step = v.step.as_deref().map(|s| format!("{s} ")).unwrap_or_default();
                    let state = v.state.as_deref().unwrap_or("-");
                    // No countdown: the message outlives the read.
                    let progress = match &v.progress {
                        Progress::Paused { .. } => "paused".to_string(),
                        other => other.describe(),
                    };
                    format!("Rollout {}/{} to {goal} (it is at {step}{state}: {progress})", v.namespace, v.name)
                })
                .collect();
            waiting = unsettled.join(", ");
            if views.iter().all(settled) {
                follower.finish();
                if let Some(error) = unloaded_error(&views) {
                    return Err(error.into());
                }
                return match views.iter().find_map(|v| match &v.progress {
                    Progress::Failed { reason } => Some(format!("Rollout {}/{}: {reason}", v.namespace, v.name)),
                    _ => None,
                }) {
                    Some(failure) => Err(Error::Input(failure).into()),
                    None => Ok(Outcome::Done),
                };
            }
        }
    })
}

/// Reads the Rollouts of `scope` and places their objects.
pub(super) async fn views(session: &Session, scope: &Scope) -> Result<Vec<RolloutView>, Error> {
    let selection = match scope {
        Scope::Namespace(selection) => return views_in(session, selection).await,
        Scope::AllNamespaces(Some(selector)) => Selection::Selector(selector.clone()),
        Scope::AllNamespaces(None) => Selection::All,
    };
    // The namespaces that have any, then each namespace's Rollouts with their world.
    let resource = live::rollout_resource(&session.cluster).await?;
    let selector = match &selection {
        Selection::Selector(selector) => selector.as_str(),
        _ => "",
    };
    let found = session.cluster.list(&resource, "", selector).await?;
    let namespaces: BTreeSet<&str> = found.iter().filter_map(|r| r["metadata"]["namespace"].as_str()).collect();
    let sessions: Vec<Session> = namespaces.into_iter().map(|namespace| session.in_namespace(namespace)).collect();
    let views = futures::future::try_join_all(sessions.iter().map(|session| views_in(session, &selection))).await?;
    Ok(views.concat())
}

/// Reads the selected Rollouts of the session's namespace and places their objects (a plan of
/// every stage). One that cannot be loaded is a view with its error, in its place.
async fn views_in(session: &Session, selection: &Selection) -> Result<Vec<RolloutView>, Error> {
    let (live, catalog, unloaded) = session.load_each(selection).await?;
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
            RolloutView::new(&rollout.item, &rollout.namespace, plan.as_ref().map_err(Clone::clone), workload, now)
        })
        .collect();
    // In the order they were read: each goes back to its place among them.
    for unloaded in unloaded {
        let view = match &unloaded.rollout {
            Some(r) => {
                let workload = workload(&session.cluster, r.item.workload.as_ref()).await;
                RolloutView::unloaded(&r.item, &r.namespace, unloaded.error, workload, now)
            }
            None => RolloutView::unparsed(&unloaded.name, &session.cluster.namespace, unloaded.error),
        };
        views.insert(unloaded.index.min(views.len()), view);
    }
    Ok(views)
}

/// The errors of the Rollouts that could not be loaded, if any: `status` shows the others, and
/// fails with these at the end.
fn unloaded_error(views: &[RolloutView]) -> Option<Error> {
    let errors: Vec<&str> =
        views.iter().filter(|v| v.unloaded).filter_map(|v| v.objects.as_ref().err()).map(String::as_str).collect();
    (!errors.is_empty()).then(|| Error::Input(errors.join("\n")))
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
