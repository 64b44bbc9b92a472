//! `restore`: put gateway objects back to their stored original, as the controller's finalise
//! does, after checking for edits made during the release.

use super::cluster::{MAX_ATTEMPTS, Session, resource_of, runtime, selection, with_rollback};
use super::{DryRun, GlobalArgs, Outcome, RestoreArgs, confirm, print};
use crate::data::{self, Data};
use crate::error::Error;
use crate::model::ObjectRef;
use crate::output::{self, BOLD, YELLOW, paint};
use crate::source::cluster::{Cluster, Permission, Resource};
use crate::source::files;
use crate::write::{self, Backups, WriteFailure, Written};
use crate::yaml;
use serde_json::Value;
use std::collections::BTreeMap;

/// One object to restore.
struct Restoration {
    resource: Resource,
    live: Value,
    restored: Value,
    /// What the object should look like at the current step, when a Rollout says so.
    expected: Option<Value>,
}

pub fn restore(global: &GlobalArgs, args: &RestoreArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let session = Session::open(global, &args.scripts).await?;
        if let Some(file) = &args.from_backup {
            return restore_backup(&session, file, args).await;
        }
        let backups = Backups::new(&session.cluster.context);
        let mut written: Vec<Written> = Vec::new();
        let mut confirmed: Option<Vec<Value>> = None;
        for attempt in 1..=MAX_ATTEMPTS {
            let (restorations, notes) = restorations(&session, args).await?;
            for note in &notes {
                anstream::eprintln!("{note}");
            }
            let targets: Vec<Value> = restorations.iter().map(|r| r.restored.clone()).collect();
            match &confirmed {
                None => {
                    let permissions = restorations
                        .iter()
                        .flat_map(|r| Permission::replace(&r.resource, r.live["metadata"]["namespace"].as_str().unwrap_or_default()))
                        .collect();
                    if args.dry_run != DryRun::Client {
                        write::preflight(&session.cluster, permissions).await?;
                    }
                    print(&restoration_text(&restorations)?)?;
                    if restorations.is_empty() {
                        return Ok(Outcome::Done);
                    }
                    let drifted = restorations.iter().any(|r| r.expected.as_ref().is_some_and(|e| !data::same_routing(e, &r.live)));
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
                }
                Some(previous) if *previous != targets => {
                    let refusal = Error::Refused("an object changed while restoring and the restore would now write something else; run again to review it".into());
                    return Err(with_rollback(&session.cluster, &written, refusal).await.into());
                }
                Some(_) => {}
            }
            confirmed = Some(targets);
            let mut result = Ok(Vec::new());
            for r in &restorations {
                match write::write_planned(&session.cluster, &r.resource, &r.live, &r.restored, &backups, &mut written).await {
                    Ok(backup) => result.as_mut().map(|lines: &mut Vec<String>| lines.push(format!("{} restored (backup {})\n", write::describe_object(&r.live), backup.display()))).unwrap_or(()),
                    Err(failure) => {
                        result = Err(failure);
                        break;
                    }
                }
            }
            match result {
                Ok(lines) => {
                    print(&lines.join(""))?;
                    return Ok(Outcome::Done);
                }
                Err(WriteFailure::Conflict(message)) if attempt < MAX_ATTEMPTS => {
                    anstream::eprintln!("{}", paint(YELLOW, &format!("conflict: {message}; reading again ({attempt}/{MAX_ATTEMPTS})")));
                }
                Err(WriteFailure::Conflict(message) | WriteFailure::Failed(message)) => {
                    return Err(with_rollback(&session.cluster, &written, Error::Input(message)).await.into());
                }
            }
        }
        unreachable!("the last attempt returns")
    })
}

/// The objects a restore writes, and notes on those it skips.
async fn restorations(session: &Session, args: &RestoreArgs) -> Result<(Vec<Restoration>, Vec<String>), Error> {
    let mut notes = Vec::new();
    let mut candidates: Vec<(Resource, Value, Option<Value>)> = Vec::new();
    if args.refs.is_empty() {
        let (live, catalog) = session.load(&selection(&args.selection)?).await?;
        for rollout in &live.snapshot.rollouts {
            let cr = live.snapshot.traffic_routing_of(rollout)?;
            let mut refs: Vec<ObjectRef> =
                rollout.item.traffic_routing.iter().flat_map(|t| t.custom_network_refs.clone()).collect();
            refs.extend(cr.iter().flat_map(|c| c.item.traffic_routing.custom_network_refs.clone()));
            // What the current step should have written: anything else is someone's edit.
            let expected: BTreeMap<ObjectRef, Value> = match rollout
                .item
                .current_stage()
                .filter(|_| rollout.item.status.phase.as_deref() == Some("Progressing"))
            {
                Some(stage) => match session.plan(&live, &catalog, &live.snapshot.objects, rollout, &[stage]) {
                    Ok(plan) => {
                        plan.stages.into_iter().flat_map(|s| s.objects).map(|o| (o.reference, o.planned)).collect()
                    }
                    Err(e) => {
                        notes.push(format!(
                            "Rollout {}: cannot check for edits, the current step does not plan: {e}",
                            rollout.item.name
                        ));
                        BTreeMap::new()
                    }
                },
                None => BTreeMap::new(),
            };
            for reference in refs {
                match live.snapshot.objects.get(&reference, &rollout.namespace) {
                    None => notes.push(format!("{reference} in namespace {}: not found, skipped", rollout.namespace)),
                    Some(object) => candidates.push((
                        resource_of(&live, &reference)?.clone(),
                        object.clone(),
                        expected.get(&reference).cloned(),
                    )),
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
                Some(object) => candidates.push((resource, object, None)),
            }
        }
    }
    let mut restorations = Vec::new();
    for (resource, live, expected) in candidates {
        let what = write::describe_object(&live);
        let Some(stored) = data::stored_original(&live) else {
            notes.push(format!("{what}: no {} annotation, nothing to restore", data::ORIGINAL_SPEC_ANNOTATION));
            continue;
        };
        let original = Data::from_go_json(stored).map_err(|e| {
            Error::Refused(format!("nothing was written: {what}: its annotation {} does not parse ({e}); fix or remove it, or restore from a backup", data::ORIGINAL_SPEC_ANNOTATION))
        })?;
        let restored = original.apply_to(&live, None);
        restorations.push(Restoration { resource, live, restored, expected });
    }
    Ok((restorations, notes))
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
        if let Some(expected) = r.expected.as_ref().filter(|e| !data::same_routing(e, &r.live)) {
            out.push_str(&format!(
                "{}\n",
                paint(YELLOW, &format!("{what} was edited after it was routed; a restore discards these edits:"))
            ));
            out.push_str(
                &output::object_diff(
                    expected,
                    &r.live,
                    &format!("{what} (as the current step routes it)"),
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
    let documents = yaml::parse_documents(&files::read_text(file)?, &source).map_err(Error::Input)?;
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
