//! `restore`: put gateway objects back to their stored original, as the controller's finalise
//! does, after checking for edits made during the release.

use super::cluster::{MAX_ATTEMPTS, Session, resource_of, runtime, selection, with_rollback};
use super::{DryRun, GlobalArgs, Outcome, RestoreArgs, confirm, print, warn};
use crate::data::{self, Data};
use crate::error::Error;
use crate::model::{ObjectRef, Stage};
use crate::output::{self, BOLD, YELLOW, paint};
use crate::plan::RoutingPlan;
use crate::source::cluster::{Cluster, Permission, Resource};
use crate::source::files;
use crate::status::{self, Position};
use crate::write::{self, Backups, ObjectKey, WriteFailure, Written};
use crate::yaml;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

/// Where an object stands against the Rollouts that route it.
#[derive(Clone, Debug)]
enum Placement {
    /// No Rollout could tell (none is progressing, or its stages do not plan, or `--ref`).
    Unchecked,
    /// Edited after it was routed: it matches no stage of any Rollout routing it. `expected` is
    /// what the `label` stage routes it to, to show the edits against.
    Edited { label: String, expected: Value },
    /// At a stage of a Rollout that routes it, or at its original: no edit to lose.
    Placed,
}

impl Placement {
    /// Adds another Rollout's verdict on the same object: a stage of either places it.
    fn merge(&mut self, other: Placement) {
        match (&*self, other) {
            (Placement::Placed, _) | (Placement::Edited { .. }, Placement::Unchecked) => {}
            (_, other) => *self = other,
        }
    }
}

/// One object to restore.
struct Restoration {
    key: ObjectKey,
    resource: Resource,
    live: Value,
    restored: Value,
    placement: Placement,
}

/// What was confirmed of an object: its live state and what the restore writes.
struct Confirmed {
    live: Value,
    restored: Value,
}

pub fn restore(global: &GlobalArgs, args: &RestoreArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let session = Session::open(global, &args.scripts).await?;
        if let Some(file) = &args.from_backup {
            return restore_backup(&session, file, args).await;
        }
        let backups = Backups::new(&session.cluster.context);
        let mut written: Vec<Written> = Vec::new();
        let mut confirmed: Option<BTreeMap<ObjectKey, Confirmed>> = None;
        let mut shown_notes = BTreeSet::new();
        let mut lines = Vec::new();
        let mut attempt = 1;
        loop {
            // Objects this run restored have no annotation any more: they are done.
            let done: BTreeSet<ObjectKey> = written.iter().map(Written::key).collect();
            let (restorations, notes) = match restorations(&session, args, &done).await {
                Ok(found) => found,
                Err(error) => return Err(with_rollback(&session.cluster, &written, error).await.into()),
            };
            for note in notes {
                if shown_notes.insert(note.clone()) {
                    let _ = writeln!(anstream::stderr(), "{note}");
                }
            }
            match &confirmed {
                None => {
                    let permissions = restorations
                        .iter()
                        .flat_map(|r| Permission::replace(&r.resource, r.key.namespace()))
                        .collect();
                    if args.dry_run != DryRun::Client {
                        write::preflight(&session.cluster, permissions).await?;
                    }
                    print(&restoration_text(&restorations)?)?;
                    if restorations.is_empty() {
                        return Ok(Outcome::Done);
                    }
                    let drifted = restorations.iter().any(|r| matches!(r.placement, Placement::Edited { .. }));
                    match args.dry_run {
                        DryRun::Client => {
                            print(&format!("{}\n", paint(YELLOW, "dry run (client): nothing was written")))?;
                            return Ok(Outcome::Done);
                        }
                        DryRun::Server => {
                            let mut rejected = Vec::new();
                            for r in &restorations {
                                if let Err(message) = write::server_dry_run(&session.cluster, &r.resource, &r.live, &r.restored).await {
                                    rejected.push(format!("{}: {message}", write::describe_object(&r.live)));
                                }
                            }
                            if !rejected.is_empty() {
                                return Err(Error::Input(format!("the API server rejected:\n  {}", rejected.join("\n  "))).into());
                            }
                            print("dry run (server): the API server accepted every restore; nothing was stored\n")?;
                            return Ok(Outcome::Done);
                        }
                        DryRun::None => {}
                    }
                    if drifted && !args.force {
                        confirm("Someone edited these objects after they were routed; a restore discards the edits shown above. Discard them?", false)
                            .map_err(|_| Error::Refused("nothing was written: the objects were edited during the release (shown above); a restore would discard those edits: pass --force to restore anyway".into()))?;
                    }
                    confirm("Restore these objects?", args.yes)?;
                    confirmed = Some(
                        restorations
                            .iter()
                            .map(|r| (r.key.clone(), Confirmed { live: r.live.clone(), restored: r.restored.clone() }))
                            .collect(),
                    );
                }
                Some(previous) => {
                    if let Err(refusal) = still_as_confirmed(previous, &restorations, &done) {
                        return Err(with_rollback(&session.cluster, &written, refusal).await.into());
                    }
                }
            }
            let mut failure = None;
            for r in &restorations {
                match write::write_planned(&session.cluster, &r.resource, &r.live, &r.restored, &backups, &mut written).await {
                    Ok(backup) => {
                        lines.push(format!("{} restored (backup {})\n", write::describe_object(&r.live), backup.display()))
                    }
                    Err(error) => {
                        failure = Some(error);
                        break;
                    }
                }
            }
            match failure {
                None => {
                    print(&lines.join(""))?;
                    return Ok(Outcome::Done);
                }
                Some(WriteFailure::Conflict(message)) if attempt < MAX_ATTEMPTS => {
                    warn(&format!("conflict: {message}; reading again ({attempt}/{MAX_ATTEMPTS})"));
                    attempt += 1;
                }
                Some(WriteFailure::Conflict(message) | WriteFailure::Failed(message)) => {
                    return Err(with_rollback(&session.cluster, &written, Error::Input(message)).await.into());
                }
            }
        }
    })
}

/// After a conflict: refuses when the restore would now write something other than what was
/// confirmed, or would discard an edit made since (objects this run already restored are done).
fn still_as_confirmed(
    previous: &BTreeMap<ObjectKey, Confirmed>,
    restorations: &[Restoration],
    done: &BTreeSet<ObjectKey>,
) -> Result<(), Error> {
    let now: BTreeSet<&ObjectKey> = restorations.iter().map(|r| &r.key).collect();
    let same_targets =
        restorations.iter().all(|r| previous.get(&r.key).is_some_and(|c| data::same_routing(&c.restored, &r.restored)))
            && previous.keys().all(|k| now.contains(k) || done.contains(k));
    if !same_targets {
        return Err(Error::Refused(
            "an object changed while restoring and the restore would now write something else; run again to review it"
                .into(),
        ));
    }
    // The restore writes the same, but it would also discard whatever changed the object since
    // it was confirmed, unless a Rollout's stage explains the change (the controller routed it).
    let edited: Vec<String> = restorations
        .iter()
        .filter(|r| !matches!(r.placement, Placement::Placed))
        .filter(|r| previous.get(&r.key).is_some_and(|c| !data::same_routing(&c.live, &r.live)))
        .map(|r| write::describe_object(&r.live))
        .collect();
    if !edited.is_empty() {
        return Err(Error::Refused(format!(
            "{} changed while restoring, and a restore would discard that change nobody has reviewed; run again to review it",
            edited.join(", ")
        )));
    }
    Ok(())
}

/// The objects a restore writes, each once, and notes on those it skips. `done` are the objects
/// this run already restored.
async fn restorations(
    session: &Session,
    args: &RestoreArgs,
    done: &BTreeSet<ObjectKey>,
) -> Result<(Vec<Restoration>, Vec<String>), Error> {
    let mut notes = Vec::new();
    let mut candidates: Vec<(Resource, Value, Placement)> = Vec::new();
    if args.refs.is_empty() {
        let selection = selection(&args.selection).map_err(|e| {
            Error::Input(format!("{e}; or name objects with --ref KIND/NAME, or a backup with --from-backup FILE"))
        })?;
        let (live, catalog) = session.load(&selection).await?;
        for rollout in &live.snapshot.rollouts {
            let cr = live.snapshot.traffic_routing_of(rollout)?;
            let mut refs: Vec<ObjectRef> =
                rollout.item.traffic_routing.iter().flat_map(|t| t.custom_network_refs.clone()).collect();
            refs.extend(cr.iter().flat_map(|c| c.item.traffic_routing.custom_network_refs.clone()));
            // Where the objects stand against every stage (as `status` places them): an object
            // at no stage was edited. In StepUpgrade of step k they still hold step k-1's routing.
            let mut placements: BTreeMap<(String, String, String), Placement> = BTreeMap::new();
            if rollout.item.status.phase.as_deref() == Some("Progressing") {
                match session.plan(&live, &catalog, &live.snapshot.objects, rollout, &rollout.item.stages()) {
                    Ok(plan) => placements = placed(&plan, rollout.item.current_stage()),
                    Err(e) => notes.push(format!(
                        "Rollout {}: cannot check for edits, its steps do not plan: {e}",
                        rollout.item.name
                    )),
                }
            }
            for reference in refs {
                match live.snapshot.objects.get(&reference, &rollout.namespace) {
                    None => notes.push(format!("{reference} in namespace {}: not found, skipped", rollout.namespace)),
                    Some(object) => {
                        let placement = placements
                            .get(&(reference.kind.clone(), rollout.namespace.clone(), reference.name.clone()))
                            .cloned()
                            .unwrap_or(Placement::Unchecked);
                        candidates.push((resource_of(&live, &reference)?.clone(), object.clone(), placement));
                    }
                }
            }
        }
    } else {
        for argument in &args.refs {
            let (resource, name) = resolve_ref(&session.cluster, argument).await?;
            match session.cluster.get(&resource, &session.cluster.namespace, &name).await? {
                None => {
                    notes.push(format!("{} {}/{name}: not found, skipped", resource.kind, session.cluster.namespace))
                }
                Some(object) => candidates.push((resource, object, Placement::Unchecked)),
            }
        }
    }
    let mut restorations: Vec<Restoration> = Vec::new();
    for (resource, live, placement) in candidates {
        let key = ObjectKey::of(&resource, &live);
        // Two Rollouts (or two --ref) may name one object: it is restored once.
        if let Some(known) = restorations.iter_mut().find(|r| r.key == key) {
            known.placement.merge(placement);
            continue;
        }
        let what = write::describe_object(&live);
        if data::stored_original(&live).is_none() {
            if !done.contains(&key) {
                notes.push(format!("{what}: no {} annotation, nothing to restore", data::ORIGINAL_SPEC_ANNOTATION));
            }
            continue;
        }
        let original = Data::original_of(&live).map_err(|e| {
            let nothing = if done.is_empty() { "nothing was written: " } else { "" };
            Error::Refused(format!("{nothing}{what}: {e}; fix or remove it, or restore from a backup"))
        })?;
        let restored = original.apply_to(&live, None);
        restorations.push(Restoration { key, resource, live, restored, placement });
    }
    for r in &mut restorations {
        // Still at its original (stored, not routed yet): there is no edit to lose.
        let mut unrouted = r.live.clone();
        if let Some(annotations) = unrouted["metadata"]["annotations"].as_object_mut() {
            annotations.remove(data::ORIGINAL_SPEC_ANNOTATION);
        }
        if data::same_routing(&unrouted, &r.restored) {
            r.placement = Placement::Placed;
        }
    }
    Ok((restorations, notes))
}

/// Each object of a plan of every stage, by (kind, namespace, name): placed at a stage, or
/// edited (shown against the current stage's plan, else the first stage's).
fn placed(plan: &RoutingPlan, current: Option<Stage>) -> BTreeMap<(String, String, String), Placement> {
    let shown = plan.stages.iter().find(|s| current.is_some() && s.stage == current).or(plan.stages.first());
    status::positions(plan)
        .into_iter()
        .map(|view| {
            let placement = match view.position {
                Position::Drifted => shown
                    .and_then(|stage| {
                        stage
                            .objects
                            .iter()
                            .find(|o| {
                                o.reference.kind == view.kind
                                    && o.reference.name == view.name
                                    && o.namespace == view.namespace
                            })
                            .map(|o| Placement::Edited { label: stage.label.clone(), expected: o.planned.clone() })
                    })
                    .unwrap_or(Placement::Unchecked),
                Position::Original | Position::AtStep { .. } => Placement::Placed,
            };
            ((view.kind, view.namespace, view.name), placement)
        })
        .collect()
}

/// `KIND.GROUP/NAME`, or `KIND/NAME` for the Istio kinds, to a served resource and a name.
async fn resolve_ref(cluster: &Cluster, argument: &str) -> Result<(Resource, String), Error> {
    let bad = || {
        Error::Input(format!(
            "--ref {argument:?}: expected KIND.GROUP/NAME (e.g. VirtualService.networking.istio.io/reviews)"
        ))
    };
    let (kind_group, name) = argument.split_once('/').ok_or_else(bad)?;
    let (kind, group) = match kind_group.split_once('.') {
        Some((kind, group)) => (kind, group),
        None if ["VirtualService", "DestinationRule"].iter().any(|k| k.eq_ignore_ascii_case(kind_group)) => {
            (kind_group, "networking.istio.io")
        }
        None => return Err(bad()),
    };
    let version = cluster
        .preferred_version(group)
        .await?
        .ok_or_else(|| Error::Input(format!("the API server does not serve the group {group}")))?;
    let resources = cluster.resources(group, &version, false).await?.unwrap_or_default();
    let resource = resources
        .into_iter()
        .find(|r| r.kind.eq_ignore_ascii_case(kind) || r.plural.eq_ignore_ascii_case(kind))
        .ok_or_else(|| Error::Input(format!("the API server serves no {kind} in {group}/{version}")))?;
    Ok((resource, name.to_string()))
}

fn restoration_text(restorations: &[Restoration]) -> Result<String, Error> {
    let mut out = String::new();
    for r in restorations {
        let what = write::describe_object(&r.live);
        if let Placement::Edited { label, expected } = &r.placement {
            out.push_str(&format!(
                "{}\n",
                paint(YELLOW, &format!("{what} was edited after it was routed; a restore discards these edits:"))
            ));
            out.push_str(
                &output::object_diff(
                    expected,
                    &r.live,
                    &format!("{what} (as {label} routes it)"),
                    &format!("{what} (live)"),
                )
                .map_err(Error::Input)?,
            );
        }
        out.push_str(&format!("{}\n", paint(BOLD, &format!("{what}: restore the stored original"))));
        out.push_str(
            &output::object_diff(&r.live, &r.restored, &format!("{what} (live)"), &format!("{what} (restored)"))
                .map_err(Error::Input)?,
        );
    }
    Ok(out)
}

/// `restore --from-backup FILE`: the backup's spec, labels and annotations over the live object.
async fn restore_backup(session: &Session, file: &std::path::Path, args: &RestoreArgs) -> anyhow::Result<Outcome> {
    let source = file.display().to_string();
    let documents = yaml::parse_documents(&files::read_text(file, files::OBJECT)?, &source).map_err(Error::Input)?;
    let [document] = documents.as_slice() else {
        return Err(Error::Input(format!("{source}: expected one object")).into());
    };
    let backup = &document.value;
    let api_version = backup["apiVersion"].as_str().unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = backup["kind"].as_str().unwrap_or_default();
    let resource = session
        .cluster
        .resource(group, version, kind, false)
        .await?
        .ok_or_else(|| Error::Input(format!("{source}: the API server does not serve {api_version} {kind}")))?;
    let namespace = backup["metadata"]["namespace"].as_str().unwrap_or(&session.cluster.namespace).to_string();
    let name =
        backup["metadata"]["name"].as_str().ok_or_else(|| Error::Input(format!("{source}: no metadata.name")))?;
    let live = session.cluster.get(&resource, &namespace, name).await?.ok_or_else(|| {
        Error::Input(format!("{kind} {namespace}/{name} no longer exists; create it with kubectl instead"))
    })?;
    let restored = Data::of_object(backup).apply_to(&live, None);
    let what = write::describe_object(&live);
    if data::same_routing(&live, &restored) {
        print(&format!("{what} already matches the backup\n"))?;
        return Ok(Outcome::Done);
    }
    if args.dry_run != DryRun::Client {
        write::preflight(&session.cluster, Permission::replace(&resource, &namespace).to_vec()).await?;
    }
    print(
        &output::object_diff(&live, &restored, &format!("{what} (live)"), &format!("{what} (from {source})"))
            .map_err(Error::Input)?,
    )?;
    match args.dry_run {
        DryRun::Client => {
            print("dry run (client): nothing was written\n")?;
            return Ok(Outcome::Done);
        }
        DryRun::Server => {
            write::server_dry_run(&session.cluster, &resource, &live, &restored)
                .await
                .map_err(|m| Error::Input(format!("the API server rejected {what}: {m}")))?;
            print("dry run (server): accepted; nothing was stored\n")?;
            return Ok(Outcome::Done);
        }
        DryRun::None => {}
    }
    confirm("Put this backup back?", args.yes)?;
    let mut written = Vec::new();
    let backups = Backups::new(&session.cluster.context);
    match write::write_planned(&session.cluster, &resource, &live, &restored, &backups, &mut written).await {
        Ok(backup) => {
            print(&format!("{what} restored from {source} (its previous state: {})\n", backup.display()))?;
            Ok(Outcome::Done)
        }
        Err(WriteFailure::Conflict(m) | WriteFailure::Failed(m)) => {
            Err(with_rollback(&session.cluster, &written, Error::Input(m)).await.into())
        }
    }
}
