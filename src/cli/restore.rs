//! `restore`: put gateway objects back as the controller's finalise does (custom refs to their
//! stored original, an HTTPRoute's rules restored, a canary Ingress deleted), after checking
//! for edits made during the release. Gather (claim, then read) → guard → render → confirm →
//! write.

use super::approve::{claim_names, claim_rollouts, refuse_unclaimed};
use super::cluster::{
    Session, check_permissions, print_outcome, refuse_degenerate, refuse_others_routing, refuse_stranding, resource_of,
    runtime, selection, writer_mode,
};
use super::{Outcome, RestoreArgs, confirm, print, terminal_question};
use crate::change::{self, Change};
use crate::data::{self, Data};
use crate::error::Error;
use crate::model::Permission;
use crate::model::Rollout;
use crate::model::{
    self, Ending, ObjectKey, OwnerKind, Provider, Routing, Stage, TRAFFIC_ROUTING_ANNOTATION, WHEN_IT_FINALISES,
    http_route,
};
use crate::output::{self, BOLD, DiffStyle, StoredOriginal, YELLOW, paint};
use crate::plan::RoutingPlan;
use crate::providers::{self, ObjectPlan, ProviderKind, custom, gateway, ingress};
use crate::scripts::ScriptCatalog;
use crate::snapshot::Located;
use crate::source::cluster::{Cluster, Resource};
use crate::source::files;
use crate::source::live::{self, Live, Selection};
use crate::status::{self, Position};
use crate::write::{self, Interrupt, Mode, Writer};
use crate::yaml;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where an object stands against the Rollouts that route it.
#[derive(Clone, Debug)]
enum Placement {
    /// No Rollout could tell (none is progressing, or its stages do not plan, or none routes it).
    Unchecked,
    /// Edited after it was routed: it matches no stage of any Rollout routing it. `expected` is
    /// what the `label` stage routes it to, to show the edits against.
    Edited { label: String, expected: Arc<Value> },
    /// At a stage of a Rollout that routes it, or at its original: no edit to lose.
    Placed,
    /// Routed by Rollout `rollout`, in a release, whose steps do not plan: an edit made during
    /// the release cannot be seen. A check that cannot be made is not one that passed.
    Unverified { rollout: String },
    /// Routing to `canary` already without a stored original (`Position::CanaryWithoutOriginal`):
    /// nothing puts its routing before the release back, so a restore leaves it routed.
    CanaryWithoutOriginal { canary: String },
}

impl Placement {
    /// Adds another Rollout's verdict on the same object: a stage of either places it; an edit
    /// seen outweighs a check that could not be made.
    fn merge(&mut self, other: Placement) {
        let weight = |placement: &Placement| match placement {
            Placement::Unchecked => 0,
            Placement::Unverified { .. } => 1,
            Placement::Edited { .. } => 2,
            Placement::Placed => 3,
            Placement::CanaryWithoutOriginal { .. } => 4,
        };
        if weight(&other) >= weight(self) {
            *self = other;
        }
    }
}

/// One object to restore.
struct Restoration {
    key: ObjectKey,
    resource: Resource,
    live: Arc<Value>,
    /// The object restored; null: deleted (a canary Ingress).
    restored: Arc<Value>,
    placement: Placement,
    /// The stored original, when it holds nothing (restoring it wipes the object).
    degenerate: Option<String>,
    /// What the restore does, when it is not putting a stored original back (an HTTPRoute's,
    /// a canary Ingress's).
    how: Option<String>,
    warnings: Vec<String>,
    /// An HTTPRoute's restore that leaves the stable Service without a rule: why
    /// (`gateway::strands_stable`); refused without `--force`.
    strands: Option<String>,
}

impl Restoration {
    /// The write: a replace with the object restored, or a deletion.
    fn change(&self) -> Change {
        match self.restored.is_null() {
            true => Change::Delete { key: self.key.clone(), before: Arc::clone(&self.live) },
            false => Change::Replace {
                key: self.key.clone(),
                before: Arc::clone(&self.live),
                after: Arc::clone(&self.restored),
            },
        }
    }
}

/// An object found to restore: its resource, the live object, where it stands, and for an
/// HTTPRoute what the restore does with it (others put their stored original back).
struct Candidate {
    resource: Resource,
    live: Arc<Value>,
    placement: Placement,
    rules: Option<gateway::RouteRestore>,
    /// What the HTTPRoute's restore does, and whether it leaves the stable Service without a
    /// rule (why), with `rules`.
    route_restore: Option<(String, Option<String>)>,
    /// An Ingress named as the canary Ingress of the routing restored, that the routing's
    /// owner did not make: why (what the plan warns of it).
    foreign: Option<String>,
    /// What to say of it besides (a canary Ingress whose spec differs from what the stable
    /// Ingress makes now).
    warnings: Vec<String>,
}

pub fn restore(args: &RestoreArgs) -> anyhow::Result<Outcome> {
    // Checked before the kubeconfig is read: a command that names nothing says so first.
    let selection = match (&args.from_backup, args.refs.is_empty()) {
        (None, true) => Some(selection(&args.selection).map_err(|e| {
            Error::Input(format!("{e}; or name objects with --ref KIND/NAME, or a backup with --from-backup FILE"))
        })?),
        _ => None,
    };
    // Read before the signal handlers are installed: a read that blocks (a FIFO, a stalled
    // mount) is then stopped by Ctrl-C or SIGTERM, as the runtime's one thread is in it.
    let backup = args.from_backup.as_deref().map(|file| read_backup(file, args.force)).transpose()?;
    runtime()?.block_on(async {
        let session = Session::open(&args.cluster, &args.scripts).await?;
        let interrupt = Interrupt::listen(Some(write::STOPPING))?;
        let mut writer =
            Writer::new(&session.cluster, writer_mode(args.dry_run), interrupt.clone(), terminal_question(args.yes))?;
        let outcome = match &backup {
            Some(backup) => interrupt.unless_second(restore_backup(&session, &mut writer, backup, args)).await,
            None => interrupt.unless_second(restore_objects(&session, &mut writer, args, selection)).await,
        };
        let result = outcome.unwrap_or_else(|signal| Err(writer.stop_at_once(signal)));
        Ok(writer.finish(result).await?)
    })
}

/// What a restore restores.
enum Targets {
    /// The objects the selected Rollouts route.
    Rollouts(Selection),
    /// `--ref`: objects, each a served resource and a name in the session's namespace, and the
    /// namespace's Rollouts as read under the claim (see `claim_routing`).
    Refs(Vec<(Resource, String)>, Box<Option<NamespaceRollouts>>),
}

/// `selection`: the Rollouts selected, when no object is named with `--ref`.
async fn restore_objects(
    session: &Session,
    writer: &mut Writer<'_>,
    args: &RestoreArgs,
    selection: Option<Selection>,
) -> Result<Outcome, Error> {
    let mut notes = Vec::new();
    let targets = if let Some(selection) = selection {
        claim_rollouts(session, &selection, writer, "restore").await?;
        Targets::Rollouts(selection)
    } else {
        let mut refs = Vec::new();
        for argument in &args.refs {
            let (resource, name) = resolve_ref(&session.cluster, argument).await?;
            // A Deployment or a Rollout may carry the annotation too: putting its spec back
            // is not this tool's to do.
            if !session.writes_kind(&resource.api_version(), &resource.kind, &name).await? {
                let key = ObjectKey::new(&resource.group, &resource.kind, &session.cluster.namespace, &name);
                let why = not_a_gateway_object("--ref");
                return Err(Error::Refused(format!("nothing was written: --ref {argument}: {key} is {why}")));
            }
            if (resource.group.as_str(), resource.kind.as_str()) == (http_route::GROUP, http_route::KIND) {
                return Err(Error::Refused(format!(
                    "nothing was written: --ref {argument}: an HTTPRoute keeps no stored original to put back; restore it with the Rollout that routes it (`restore ROLLOUT`), which runs the controller's restore of its rules, or from a backup (`restore --from-backup FILE`)"
                )));
            }
            refs.push((resource, name));
        }
        let namespace = &session.cluster.namespace;
        let keys: Vec<ObjectKey> =
            refs.iter().map(|(r, name)| ObjectKey::new(&r.group, &r.kind, namespace, name)).collect();
        let command = format!("restore --ref {}", args.refs.join(" --ref "));
        let rollouts = claim_routing(session, writer, &keys, &command, args.force, &mut notes).await?;
        Targets::Refs(refs, Box::new(rollouts))
    };
    let Restorations { objects: restorations, left, notes: more_notes, missing, rollouts, linked } =
        restorations(session, writer, &targets).await?;
    // An object named with --ref that is not there fails the run once the others are restored,
    // as kubectl does with a name it cannot find (a typo would pass a CI step unseen); as a
    // failure said here, not an error, which would roll back what was restored.
    let outcome = || match missing.is_empty() {
        true => Ok(Outcome::Done),
        false => {
            super::show_error(&format!("{}: not found", missing.join(", ")));
            Ok(Outcome::Failed)
        }
    };
    for note in notes.into_iter().chain(more_notes) {
        crate::stderr::line(&note);
    }
    refuse_degenerate(restorations.iter().filter_map(|r| Some((&r.key, r.degenerate.as_ref()?))), args.force)?;
    refuse_stranding(restorations.iter().filter_map(|r| r.strands.as_ref()), args.force)?;
    if matches!(targets, Targets::Rollouts(_)) {
        let selected = rollouts.iter().map(String::as_str).collect();
        let linked = linked.iter().map(String::as_str).collect();
        let keys = restorations.iter().filter(|r| r.live != r.restored).map(|r| &r.key).collect();
        refuse_others_routing(&session.cluster, &selected, &linked, &keys, args.force).await?;
    }
    let backups = write::Backups::of_cluster(&session.cluster).ok();
    let left = left.iter().map(|left| left.text(backups.as_ref().and_then(|b| left.backup(b)).as_deref()));
    for warning in refuse_left(left.collect(), args.force)? {
        super::warn(&format!("warning: {warning}"));
    }
    // The claim's permissions were asked about when it was taken (a dry run takes none).
    let changes: Vec<Change> = restorations.iter().map(Restoration::change).collect();
    let permissions: Vec<Permission> = restorations
        .iter()
        .zip(&changes)
        .flat_map(|(r, c)| r.resource.write_permissions(c, &r.key.namespace))
        .collect();
    if writer.mode() != Mode::ClientDryRun {
        check_permissions(&session.cluster, permissions, &changes, |_| None).await?;
    }
    print(&restoration_text(&restorations)?)?;
    if restorations.is_empty() {
        return outcome();
    }
    if writer.mode() == Mode::Apply {
        let drifted = restorations.iter().any(|r| matches!(r.placement, Placement::Edited { .. }));
        if drifted && !args.force {
            writer
                .ask(
                    "Someone edited these objects after they were routed; a restore discards the edits shown above. Discard them?",
                    |q| confirm(q, false),
                )
                .await
                .map_err(|e| match e {
                    Error::Refused(_) => Error::Refused("nothing was written: the objects were edited after they were routed (shown above); a restore would discard those edits: pass --force to restore anyway".into()),
                    other => other,
                })?;
        }
        let unverified = unverified_rollouts(&restorations);
        if !unverified.is_empty() && !args.force {
            writer.ask(&unverified_question(&unverified), |q| confirm(q, false)).await.map_err(|e| match e {
                Error::Refused(_) => Error::Refused(unverified_refusal(&unverified)),
                other => other,
            })?;
        }
        if !args.yes {
            writer.ask("Restore these objects?", |q| confirm(q, false)).await?;
        }
    }
    let mut lines = Vec::new();
    for r in &restorations {
        writer.apply(&r.resource, &r.change()).await?;
        let done = if r.restored.is_null() { "deleted" } else { "restored" };
        lines.extend(writer.written_line(&r.key, done));
    }
    print_outcome(writer, &lines.concat())?;
    outcome()
}

/// The Rollouts whose steps do not plan, that route objects restored (see
/// `Placement::Unverified`), each once.
fn unverified_rollouts(restorations: &[Restoration]) -> Vec<&str> {
    let mut rollouts = Vec::new();
    for r in restorations {
        if let Placement::Unverified { rollout } = &r.placement
            && !rollouts.contains(&rollout.as_str())
        {
            rollouts.push(rollout.as_str());
        }
    }
    rollouts
}

/// `Rollout a's steps do not`, `Rollouts a and b's steps do not`.
fn steps_do_not_plan(rollouts: &[&str]) -> String {
    let s = if rollouts.len() == 1 { "" } else { "s" };
    format!("Rollout{s} {}'s steps do not plan", rollouts.join(" and "))
}

/// The second question of a restore whose objects could not be checked for edits.
fn unverified_question(rollouts: &[&str]) -> String {
    format!(
        "{} (said above), so these objects could not be checked for edits made during the release; a restore discards any there are. Restore them all the same?",
        steps_do_not_plan(rollouts)
    )
}

/// The refusal, without a terminal to ask on, of a restore whose objects could not be checked
/// for edits: a check that could not be made is not one that passed.
fn unverified_refusal(rollouts: &[&str]) -> String {
    format!(
        "nothing was written: {} (said above), so the objects could not be checked for edits made during the release, which a restore would discard unseen: fix what stops the steps planning, or pass --force to restore anyway",
        steps_do_not_plan(rollouts)
    )
}

/// `--ref` and `--from-backup` name objects: the Rollouts of the namespace that route any of
/// them are claimed. They are read, claimed, and read again under the claim; one that routes
/// the objects only in that second read is refused, as it is not claimed. Returns the second
/// read (a dry run claims nothing, and reads once); None: not read (see `namespace_rollouts`).
async fn claim_routing(
    session: &Session,
    writer: &mut Writer<'_>,
    keys: &[ObjectKey],
    command: &str,
    force: bool,
    notes: &mut Vec<String>,
) -> Result<Option<NamespaceRollouts>, Error> {
    let found = namespace_rollouts(session, keys, force, notes).await?;
    let (Mode::Apply, Some(first)) = (writer.mode(), &found) else {
        return Ok(found);
    };
    claim_names(session, owners(first, keys)?, writer, |_| command.to_string()).await?;
    // The second read's notes are mostly the first's again: each is said once.
    let mut more_notes = Vec::new();
    let under_claim = namespace_rollouts(session, keys, force, &mut more_notes).await?;
    for note in more_notes {
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    if let Some(found) = &under_claim {
        let namespace = session.cluster.namespace.as_str();
        refuse_unclaimed(writer, owners(found, keys)?.iter().map(|name| (namespace, name.as_str())))?;
    }
    Ok(under_claim)
}

/// The Rollouts of `found` that route any of `keys`, and those that may but cannot be loaded
/// (kept only with --force: they are claimed all the same).
fn owners(found: &NamespaceRollouts, keys: &[ObjectKey]) -> Result<Vec<String>, Error> {
    let mut owners = found.unloaded_routing.clone();
    for rollout in &found.live.snapshot.rollouts {
        if routes_any(&found.live, rollout, keys)? {
            owners.push(rollout.item.name.clone());
        }
    }
    Ok(owners)
}

/// The Rollouts of the namespace, for objects named with `--ref` or `--from-backup`.
struct NamespaceRollouts {
    live: Live,
    catalog: ScriptCatalog,
    /// Those that cannot be loaded and may route the objects (kept only with `--force`).
    unloaded_routing: Vec<String>,
}

/// Reads the namespace's Rollouts, each on its own, to claim those that route `keys` and to
/// check the objects for edits against them. One that cannot be loaded is left out with a note
/// naming it, unless it may route one of `keys`: then, as when the Rollouts cannot be read at
/// all, the restore is refused (nothing was written yet), unless `force`. None: the Rollouts
/// were not read (not served, or `force`), and a note says so.
async fn namespace_rollouts(
    session: &Session,
    keys: &[ObjectKey],
    force: bool,
    notes: &mut Vec<String>,
) -> Result<Option<NamespaceRollouts>, Error> {
    let namespace = &session.cluster.namespace;
    let objects = keys.iter().map(ObjectKey::to_string).collect::<Vec<_>>().join(", ");
    let read = match live::served_rollout_resource(&session.cluster).await {
        Ok(None) => {
            notes.push("the API server serves no Rollouts: none routes the objects, nothing is claimed".into());
            return Ok(None);
        }
        // Listed on its own account, not the user's: a refusal gets the advice below.
        Ok(Some(_)) => match live::list_each(&session.cluster, &Selection::All).await {
            Ok(listed) => session.load_listed(listed, live::Workloads::OfPartitions).await,
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    let (live, catalog, unloaded) = match read {
        Ok(read) => read,
        Err(e) if force => {
            notes.push(format!(
                "reading the Rollouts of namespace {namespace} failed ({e}): none is claimed and the objects are not checked for edits (--force)"
            ));
            return Ok(None);
        }
        Err(e) => {
            // Trying again mends a busy or unreachable server, not a refusal.
            let mend = match &e {
                Error::Api { failure, .. } if failure.code == Some(403) => {
                    "get and list on rollouts (API group rollouts.kruise.io) are needed, as for `status`"
                }
                _ => "try again",
            };
            return Err(Error::Refused(format!(
                "nothing was written: reading the Rollouts of namespace {namespace} failed ({e}), so those that route {objects} can neither be claimed nor the objects checked for edits against them; {mend}, or pass --force to restore without them"
            )));
        }
    };
    let mut unloaded_routing = Vec::new();
    for rollout in unloaded {
        if !may_route(&rollout, keys) {
            notes.push(format!("{}; left out: it does not route {objects}", rollout.error));
        } else if force {
            notes.push(format!(
                "{}; it may route {objects}: claimed, but the objects are not checked for edits against it (--force)",
                rollout.error
            ));
            unloaded_routing.push(rollout.name);
        } else {
            return Err(Error::Refused(format!(
                "nothing was written: {}; it may route {objects}, and the objects cannot be checked for edits against it: fix that (in the Rollout, or a permission its reads need), or pass --force to restore without that check (the objects themselves must still be readable: a restore reads each)",
                rollout.error
            )));
        }
    }
    Ok(Some(NamespaceRollouts { live, catalog, unloaded_routing }))
}

/// Whether a Rollout that cannot be loaded may route one of `keys`: its own refs tell, unless it
/// does not parse or routes through a TrafficRouting (not read).
fn may_route(unloaded: &live::Unloaded, keys: &[ObjectKey]) -> bool {
    let Some(rollout) = &unloaded.rollout else { return true };
    rollout.item.traffic_routing_cr.is_some()
        || Routing::of_rollout(&rollout.item, &rollout.namespace)
            .iter()
            .flat_map(Routing::objects)
            .any(|key| keys.contains(&key))
}

/// Whether `rollout` (or its TrafficRouting) routes any of `keys`.
fn routes_any(live: &Live, rollout: &Located<Rollout>, keys: &[ObjectKey]) -> Result<bool, Error> {
    Ok(routings(live, rollout)?.iter().flat_map(Routing::objects).any(|key| keys.contains(&key)))
}

/// The objects a restore writes, each once, and notes on those it skips.
async fn restorations(session: &Session, writer: &Writer<'_>, targets: &Targets) -> Result<Restorations, Error> {
    let (mut notes, mut missing, mut rollouts, mut linked) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut candidates: Vec<Candidate> = Vec::new();
    match targets {
        Targets::Rollouts(selection) => {
            let (live, catalog) = session.load(selection).await?;
            rollouts = live.snapshot.rollouts.iter().map(|r| r.item.name.clone()).collect();
            linked = live.snapshot.rollouts.iter().filter_map(|r| r.item.traffic_routing_cr.clone()).collect();
            refuse_unclaimed(
                writer,
                live.snapshot.rollouts.iter().map(|r| (r.namespace.as_str(), r.item.name.as_str())),
            )?;
            let mut held = Vec::new();
            for rollout in &live.snapshot.rollouts {
                let placements = placements(session, &live, &catalog, rollout, &mut notes)?;
                for routing in restored_routings(&live, rollout, &mut notes, &mut held)? {
                    for (key, route) in restored_objects(&routing) {
                        let Some(object) = live.snapshot.objects.get(&key) else {
                            let why =
                                if key.kind == "Ingress" { "absent, nothing to delete" } else { "not found, skipped" };
                            notes.push(format!("{key}: {why}"));
                            continue;
                        };
                        let rules = route.as_ref().map(|route| gateway::restoration(route, object)).transpose()?;
                        let route_restore = route.as_ref().map(|route| {
                            let restored = match &rules {
                                Some(gateway::RouteRestore::Write(plan)) => plan.route.as_ref(),
                                _ => None,
                            };
                            let strands =
                                restored.and_then(|restored| gateway::strands_stable(route, object, restored));
                            (route.restore_does(), strands)
                        });
                        let (foreign, warnings) = canary_checks(&live, &routing, &key, object);
                        candidates.push(Candidate {
                            resource: resource_of(&live, &key)?.clone(),
                            live: Arc::clone(object),
                            placement: placements.get(&key).cloned().unwrap_or(Placement::Unchecked),
                            rules,
                            route_restore,
                            foreign,
                            warnings,
                        });
                    }
                }
            }
            notes.extend(held_notes(&session.cluster, &live.rollouts, &live.snapshot.rollouts, held).await);
        }
        Targets::Refs(refs, rollouts) => {
            for (resource, name) in refs {
                match session.cluster.get(resource, &session.cluster.namespace, name).await? {
                    None => {
                        let named = format!("{} {}/{name}", resource.kind, session.cluster.namespace);
                        notes.push(format!("{named}: not found: the others are restored, then the run fails for it"));
                        missing.push(named);
                    }
                    Some(live) => candidates.push(Candidate {
                        resource: resource.clone(),
                        live: Arc::new(live),
                        placement: Placement::Unchecked,
                        rules: None,
                        route_restore: None,
                        foreign: None,
                        warnings: Vec::new(),
                    }),
                }
            }
            // The drift check: where each object stands against the Rollouts that route it.
            let wanted: Vec<ObjectKey> = candidates.iter().map(|c| key_of(&c.resource, &c.live)).collect();
            for (key, placement) in placements_of_refs(session, rollouts.as_ref().as_ref(), &wanted, &mut notes)? {
                if let Some(candidate) = candidates.iter_mut().find(|c| key_of(&c.resource, &c.live) == key) {
                    candidate.placement.merge(placement);
                }
            }
            if let Some(found) = rollouts.as_ref() {
                notes.extend(routed_again(&found.live, &wanted));
            }
        }
    }
    let mut restorations: Vec<Restoration> = Vec::new();
    let mut left = Vec::new();
    for Candidate { resource, live, placement, rules, route_restore, foreign, warnings } in candidates {
        let key = key_of(&resource, &live);
        // Two Rollouts (or two --ref) may name one object: it is restored once.
        if let Some(known) = restorations.iter_mut().find(|r| r.key == key) {
            known.placement.merge(placement);
            continue;
        }
        if let Some(rules) = rules {
            let rules = match rules {
                gateway::RouteRestore::Write(rules) => rules,
                gateway::RouteRestore::Leave { why, warnings } => {
                    notes.push(left_route_note(&key, &why, &warnings));
                    continue;
                }
            };
            let restored = Arc::new(rules.route.expect("a restore that writes has a route"));
            let (how, strands) = route_restore.expect("a route's restore is said with its rules");
            restorations.push(Restoration {
                key,
                resource,
                live,
                restored,
                placement,
                degenerate: None,
                how: Some(how),
                warnings: rules.warnings,
                strands,
            });
            continue;
        }
        if key.group == "networking.k8s.io" && key.kind == "Ingress" {
            // Someone else's Ingress named as a canary Ingress is not deleted: what approve or
            // the controller may have written to it is said, with how to put it back. Neither
            // writes an Ingress of another name (a stable one, named with --ref).
            let foreign = foreign.or_else(|| {
                (!is_canary_ingress(&live)).then(|| {
                    format!("{key} is not a canary Ingress that a Rollout or TrafficRouting made (none is its controller owner)")
                })
            });
            if let Some(why) = foreign {
                match key.name.ends_with("-canary") {
                    true if left.iter().any(|l: &Left| l.key == key) => {}
                    true => left.push(Left::new(
                        key,
                        &live,
                        format!("{why}: restore does not delete it, as the controller's finalise would; approve or the controller may have changed its annotations"),
                        "put them back by hand (`kubectl annotate`)",
                        false,
                    )),
                    false => notes.push(format!(
                        "{key}: not a canary Ingress; approve and the controller write no other Ingress, nothing to restore"
                    )),
                }
                continue;
            }
            // Its owner is restored too: another Rollout restored with it may have found it
            // someone else's.
            left.retain(|l| l.key != key);
            if live["metadata"]["deletionTimestamp"].is_string() {
                notes.push(format!("{key}: being deleted already, nothing to write"));
                continue;
            }
            restorations.push(Restoration {
                key,
                resource,
                live,
                restored: Arc::new(Value::Null),
                placement,
                degenerate: None,
                how: Some("delete it, as the controller's finalise does (the stable Ingress is never written)".into()),
                warnings,
                strands: None,
            });
            continue;
        }
        let Some(stored) = data::stored_original(&live) else {
            let annotation = data::ORIGINAL_SPEC_ANNOTATION;
            match &placement {
                // Two Rollouts (or two --ref) may name one object: it is said once.
                Placement::CanaryWithoutOriginal { .. } if left.iter().any(|l| l.key == key) => {}
                Placement::CanaryWithoutOriginal { canary } => left.push(Left::new(
                    key.clone(),
                    &live,
                    format!("{key} has no stored original ({annotation}) and routes to {canary} already: restore has nothing to put back, and leaves that routing as it is"),
                    "put its routing before the release back by hand (`kubectl edit`)",
                    true,
                )),
                _ => notes.push(format!("{key}: no {annotation} annotation, nothing to restore")),
            }
            continue;
        };
        let original = Data::original_of(&live).map_err(|e| {
            Error::Refused(format!("nothing was written: {key}: {e}; fix or remove it, or restore from a backup"))
        })?;
        let degenerate = custom::holds_nothing(&original).then(|| stored.to_string());
        let restored = Arc::new(original.apply_to(&live, None));
        let warnings = custom::rounding_warning(stored, &restored, "is restored as").into_iter().collect();
        restorations.push(Restoration {
            key,
            resource,
            live,
            restored,
            placement,
            degenerate,
            how: None,
            warnings,
            strands: None,
        });
    }
    for r in &mut restorations {
        // Still at its original (stored, not routed yet): there is no edit to lose.
        let mut unrouted = Value::clone(&r.live);
        if let Some(annotations) = unrouted["metadata"]["annotations"].as_object_mut() {
            annotations.remove(data::ORIGINAL_SPEC_ANNOTATION);
        }
        if data::same_routing(&unrouted, &r.restored) {
            r.placement = Placement::Placed;
        }
    }
    Ok(Restorations { objects: restorations, left, notes, missing, rollouts, linked })
}

/// What a restore writes, what it leaves, and its notes.
struct Restorations {
    objects: Vec<Restoration>,
    /// Objects a restore leaves as they are although a release may have written to them.
    left: Vec<Left>,
    notes: Vec<String>,
    /// The objects named with `--ref` that are not there.
    missing: Vec<String>,
    /// The Rollouts restored, when they were named or selected (not `--ref`).
    rollouts: Vec<String>,
    /// The TrafficRoutings those Rollouts link.
    linked: Vec<String>,
}

/// An object a restore leaves as it is, although a release may have written to it: an Ingress
/// named as a canary Ingress that no Rollout restored here made (someone else's), which it does
/// not delete; a custom ref routing to the canary without a stored original, which it cannot
/// put back.
struct Left {
    key: ObjectKey,
    /// Its uid: its backups are those of this object, not of one of its name deleted since.
    uid: Option<String>,
    /// Why it is left, and what a release may have changed on it.
    why: String,
    /// How to put it back without a backup.
    by_hand: &'static str,
    /// Whether the backup that puts it back is its state before the latest release (a custom
    /// ref, whose backups before a release hold no stored original), else its oldest here.
    before_release: bool,
}

impl Left {
    fn new(key: ObjectKey, live: &Value, why: String, by_hand: &'static str, before_release: bool) -> Left {
        Left { key, uid: live["metadata"]["uid"].as_str().map(str::to_string), why, by_hand, before_release }
    }

    /// The backup here that puts it back, if there is one.
    fn backup(&self, backups: &write::Backups) -> Option<std::path::PathBuf> {
        match self.before_release {
            true => backups.before_latest_release(&self.key, self.uid.as_deref()),
            false => backups.oldest_of(&self.key, self.uid.as_deref()),
        }
    }

    /// Why it is left, and how to put it back: with `backup`, a backup of it here.
    fn text(&self, backup: Option<&std::path::Path>) -> String {
        let which = match self.before_release {
            true => {
                "its latest backup here from before a release (it holds no stored original), saved before the first write this tool made to it in that release (check that it holds what you want: an older one would undo the edits made since)"
            }
            false => {
                "its oldest backup here, saved before a write this tool made to it (check that it holds what you want: an object this tool made has no backup from before it)"
            }
        };
        let back = match backup {
            Some(file) => format!("`restore --from-backup {}` puts back {which}", file.display()),
            None => format!("there is no backup of it here: {}", self.by_hand),
        };
        format!("{}: {back}", self.why)
    }
}

/// The objects a restore leaves (see `Restorations::left`): a refusal, before anything is
/// written, unless `force`, which restores the other objects and gives back the same texts
/// as warnings.
fn refuse_left(texts: Vec<String>, force: bool) -> Result<Vec<String>, Error> {
    if texts.is_empty() || force {
        return Ok(texts);
    }
    Err(Error::Refused(format!(
        "nothing was written: restore would leave these objects as they are, without putting back what was written to them:\n  {}\nPass --force to restore the other objects and leave these as they are",
        texts.join("\n  ")
    )))
}

/// `HTTPRoute ns/name: already restored, nothing to write: why`, and what the controller's own
/// restore would do to it, which this one does not.
fn left_route_note(key: &ObjectKey, why: &str, warnings: &[String]) -> String {
    let mut note = format!("{key}: already restored, nothing to write: {why}");
    if !warnings.is_empty() {
        note.push_str(
            ". The controller's own restore, at a step without traffic or at the end of a release, would still do this:",
        );
        for warning in warnings {
            note.push_str(&format!("\n  {warning}"));
        }
    }
    note
}

/// What a restore of `routing` writes, in the controller's order: the custom refs (their stored
/// original put back), the canary Ingress (deleted; the stable one is never written) and the
/// HTTPRoute (the controller's restore of its rules).
fn restored_objects(routing: &Routing) -> Vec<(ObjectKey, Option<gateway::GatewayRoute<'_>>)> {
    let namespace = &routing.owner.namespace;
    let mut objects = Vec::new();
    for provider in &routing.providers {
        match provider {
            Provider::Custom(refs) => objects.extend(refs.iter().map(|r| (ObjectKey::of_ref(r, namespace), None))),
            Provider::Ingress { name, .. } => objects.push((ingress::canary_key(routing, name), None)),
            Provider::Gateway { http_route } => {
                let route = gateway::GatewayRoute::of(routing, http_route);
                objects.push((route.key(), Some(route)));
            }
        }
    }
    objects
}

/// For the canary Ingress `key` of `routing` (nothing for its other objects): why it is not
/// the routing's own, if it is not, and a note when its spec differs from the one the stable
/// Ingress makes now (not proof of an edit: the stable Ingress may have changed since).
fn canary_checks(live: &Live, routing: &Routing, key: &ObjectKey, canary: &Value) -> (Option<String>, Vec<String>) {
    let name = routing.providers.iter().find_map(|p| match p {
        Provider::Ingress { name, .. } if ingress::canary_key(routing, name) == *key => Some(name),
        _ => None,
    });
    let Some(name) = name else { return (None, Vec::new()) };
    let source = ingress::CanarySource::of(routing, name);
    let stable = live.snapshot.objects.get(&ObjectKey::new(&key.group, &key.kind, &key.namespace, name));
    let differs = stable.and_then(|stable| ingress::canary_spec_differs(&source, stable, canary));
    (ingress::foreign_canary(&source, canary), differs.into_iter().collect())
}

/// A canary Ingress the controller made: an Ingress whose controller is a Rollout or a
/// TrafficRouting. The controller's finalise deletes it.
fn is_canary_ingress(object: &Value) -> bool {
    object["kind"] == "Ingress"
        && object["metadata"]["ownerReferences"].as_array().into_iter().flatten().any(|owner| {
            owner["controller"] == true
                && owner["apiVersion"].as_str().is_some_and(|v| model::api_group(v) == "rollouts.kruise.io")
                && matches!(owner["kind"].as_str(), Some("Rollout" | "TrafficRouting"))
        })
}

fn key_of(resource: &Resource, object: &Value) -> ObjectKey {
    let field = |name: &str| object["metadata"][name].as_str().unwrap_or_default().to_string();
    ObjectKey::new(&resource.group, &resource.kind, &field("namespace"), &field("name"))
}

/// A Rollout's routing and that of the TrafficRouting it names.
fn routings(live: &Live, rollout: &Located<Rollout>) -> Result<Vec<Routing>, Error> {
    let cr = live.snapshot.traffic_routing_of(rollout)?;
    Ok(Routing::of_rollout(&rollout.item, &rollout.namespace)
        .into_iter()
        .chain(cr.map(|cr| Routing::of_traffic_routing(&cr.item, &cr.namespace)))
        .collect())
}

/// The routings `restore ROLLOUT` puts back: the Rollout's own, and its TrafficRouting's unless
/// a Rollout not restored with it still holds that: the controller restores a TrafficRouting's
/// objects only once no Rollout's progressing finalizer is left on it, and keeps routing them
/// until then (docs/controller-semantics.md §2). A note says which objects are left, and why.
fn restored_routings(
    live: &Live,
    rollout: &Located<Rollout>,
    notes: &mut Vec<String>,
    held: &mut Vec<Held>,
) -> Result<Vec<Routing>, Error> {
    let mut routings: Vec<Routing> = Routing::of_rollout(&rollout.item, &rollout.namespace).into_iter().collect();
    let Some(cr) = live.snapshot.traffic_routing_of(rollout)? else { return Ok(routings) };
    let linking: Vec<&str> = live
        .snapshot
        .rollouts
        .iter()
        .filter(|r| r.namespace == cr.namespace && r.item.traffic_routing_cr.as_ref() == Some(&cr.item.name))
        .map(|r| r.item.name.as_str())
        .collect();
    let routing = Routing::of_traffic_routing(&cr.item, &cr.namespace);
    let holders = cr.item.held_apart_from(&linking);
    if holders.is_empty() {
        // Held by the Rollouts restored here only: still, while any holds it, the controller runs
        // its routing again at every reconcile (controller-semantics.md §2), so say so.
        // Being deleted, it is finalised whoever holds it: nothing routes the objects again.
        let held: Vec<&str> = cr.item.progressing_finalizers.iter().map(String::as_str).collect();
        let note = (!held.is_empty() && !cr.item.being_deleted()).then(|| {
            format!(
                "TrafficRouting {}/{} is still held by {}: the controller routes its objects again at its next reconcile, until no Rollout holds it (its release ended)",
                cr.namespace,
                cr.item.name,
                model::holders_text(&held)
            )
        });
        notes.extend(note.filter(|note| !notes.contains(note)));
        routings.push(routing);
        return Ok(routings);
    }
    if !held.iter().any(|h| h.namespace == cr.namespace && h.name == cr.item.name) {
        held.push(Held {
            namespace: cr.namespace.clone(),
            name: cr.item.name.clone(),
            holders: holders.into_iter().map(str::to_string).collect(),
            routing,
            linking: linking.into_iter().map(str::to_string).collect(),
        });
    }
    Ok(routings)
}

/// A TrafficRouting whose objects a restore leaves, as Rollouts not restored with it still
/// hold it (`holders`: their finalizers); `linking`: the Rollouts read that link it.
struct Held {
    namespace: String,
    name: String,
    holders: Vec<String>,
    routing: Routing,
    linking: Vec<String>,
}

/// Why a Rollout holding a TrafficRouting will not let go of it when its release ends: the
/// controller removes a Rollout's finalizer from the TrafficRouting its annotation names, as it
/// finalises (docs/controller-semantics.md §2).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stale {
    /// The Rollout no longer names it.
    Unlinked,
    /// There is no such Rollout.
    Gone,
}

/// The note of each held TrafficRouting (`held_note`), its holders looked at (`holder_stale`) to
/// tell those that let go when their release ends from those that never will. A holder that
/// cannot be read is taken as one that lets go, and said so.
async fn held_notes(cluster: &Cluster, rollouts: &Resource, read: &[Located<Rollout>], held: Vec<Held>) -> Vec<String> {
    let mut notes = Vec::new();
    for Held { namespace, name, holders, routing, linking } in held {
        let (mut states, mut unread) = (Vec::new(), Vec::new());
        for holder in &holders {
            let state = match holder_stale(cluster, rollouts, read, &namespace, &name, holder).await {
                Ok(state) => state,
                Err(why) => {
                    unread.push(why);
                    None
                }
            };
            states.push((holder.as_str(), state));
        }
        let linking: Vec<&str> = linking.iter().map(String::as_str).collect();
        let note = held_note(&namespace, &name, &states, &routing, &linking);
        notes.push(match unread.is_empty() {
            true => note,
            false => format!("{note} ({}: taken as letting go when its release ends)", unread.join("; ")),
        });
    }
    notes
}

/// Why the Rollout of `finalizer` never lets go of TrafficRouting `name`, if it does not (None: it
/// does, or the finalizer names no Rollout); the Rollout looked for among those `read`, else read
/// by name. Err: it could not be told (the Rollout not read, or not parsed).
async fn holder_stale(
    cluster: &Cluster,
    rollouts: &Resource,
    read: &[Located<Rollout>],
    namespace: &str,
    name: &str,
    finalizer: &str,
) -> Result<Option<Stale>, String> {
    let Some(rollout) = model::finalizer_rollout(finalizer) else { return Ok(None) };
    let unlinked = |found: &Rollout| (found.traffic_routing_cr.as_deref() != Some(name)).then_some(Stale::Unlinked);
    if let Some(found) = read.iter().find(|r| r.namespace == namespace && r.item.name == rollout) {
        return Ok(unlinked(&found.item));
    }
    match cluster.get(rollouts, namespace, rollout).await {
        Ok(None) => Ok(Some(Stale::Gone)),
        Ok(Some(object)) => Rollout::from_object(&object)
            .map(|found| unlinked(&found))
            .map_err(|why| format!("Rollout {rollout} does not parse ({why})")),
        Err(why) => Err(format!("Rollout {rollout} could not be read ({why})")),
    }
}

/// Why TrafficRouting `name`'s objects are left while other Rollouts hold it (`holders`: their
/// finalizers, each with why it stays for good, if it does), and how to restore them: once the
/// holders that let go are done, `--ref` for each object it can name (not an HTTPRoute, which
/// keeps no stored original), or the Rollouts restored (`restored`) again; a finalizer that
/// stays for good is for someone to remove, after which the controller restores them itself.
fn held_note(
    namespace: &str,
    name: &str,
    holders: &[(&str, Option<Stale>)],
    routing: &Routing,
    restored: &[&str],
) -> String {
    let all: Vec<&str> = holders.iter().map(|(finalizer, _)| *finalizer).collect();
    let named = |stale: Option<Stale>| -> Vec<&str> {
        holders
            .iter()
            .filter(|(_, s)| *s == stale)
            .map(|(finalizer, _)| model::finalizer_rollout(finalizer).unwrap_or(finalizer))
            .collect()
    };
    let mut said = vec![format!(
        "TrafficRouting {namespace}/{name} is still held by {}: its objects are left as they are, as the controller restores them only once no Rollout holds it",
        model::holders_text(&all)
    )];
    for (stale, why_one, why_many) in [
        (
            Stale::Unlinked,
            format!("no longer links it (its {TRAFFIC_ROUTING_ANNOTATION} annotation does not name {name})"),
            format!("no longer link it (their {TRAFFIC_ROUTING_ANNOTATION} annotations do not name {name})"),
        ),
        (Stale::Gone, "no longer exists".to_string(), "no longer exist".to_string()),
    ] {
        let rollouts = named(Some(stale));
        let edit = format!("`kubectl edit trafficroutings.rollouts.kruise.io {name} -n {namespace}`");
        match rollouts.as_slice() {
            [] => {}
            [one] => said.push(format!(
                "Rollout {one} {why_one}, so its finalizer stays (a Rollout removes its own from the TrafficRouting it names, as its release ends) until someone removes it ({edit})"
            )),
            many => said.push(format!(
                "Rollouts {} {why_many}, so their finalizers stay (a Rollout removes its own from the TrafficRouting it names, as its release ends) until someone removes them ({edit})",
                many.join(" and ")
            )),
        }
    }
    let waited_for = named(None);
    let refs: Vec<String> = restored_objects(routing)
        .into_iter()
        .filter(|(_, route)| route.is_none())
        .map(|(key, _)| format!("--ref {}.{}/{}", key.kind, key.group, key.name))
        .collect();
    let again = format!("restore {}", restored.join(" "));
    let how = match refs.is_empty() {
        true => format!("`{again}` again"),
        false => format!("`restore {}` (or `{again}` again)", refs.join(" ")),
    };
    let is = if waited_for.len() == 1 { "is" } else { "are" };
    let stale = holders.iter().filter(|(_, stale)| stale.is_some()).count();
    let when = match (waited_for.as_slice(), stale > 0) {
        ([], _) if stale == 1 => "once it is removed".to_string(),
        ([], _) => "once they are removed".to_string(),
        (names, false) => format!("once {} {is} done", names.join(" and ")),
        (names, true) => format!("once {} {is} done and those finalizers are removed", names.join(" and ")),
    };
    said.push(format!("{when}, restore them with {how}"));
    said.join("; ")
}

/// `restore --ref` of objects a TrafficRouting routes while Rollouts still hold it: the
/// controller runs its routing again at every reconcile until none does (§2), so the restore
/// does not last; a note per object says so.
fn routed_again(live: &Live, wanted: &[ObjectKey]) -> Vec<String> {
    let mut notes = Vec::new();
    for cr in &live.snapshot.traffic_routings {
        let holders: Vec<&str> = cr.item.progressing_finalizers.iter().map(String::as_str).collect();
        if holders.is_empty() || cr.item.being_deleted() {
            continue;
        }
        let routing = Routing::of_traffic_routing(&cr.item, &cr.namespace);
        for (key, _) in restored_objects(&routing).into_iter().filter(|(key, _)| wanted.contains(key)) {
            notes.push(format!(
                "{key} is routed by TrafficRouting {}/{}, still held by {}: the controller routes it again at its next reconcile, until no Rollout holds it",
                cr.namespace,
                cr.item.name,
                model::holders_text(&holders)
            ));
        }
    }
    notes
}

/// Where a Rollout's objects stand against every stage (as `status` places them): an object at
/// no stage was edited. In StepUpgrade of step k they still hold step k-1's routing. Outside a
/// release an object can still be left routed as a step (a controller or restore that did not
/// finish), and edited since: that is checked too, when the steps plan.
fn placements(
    session: &Session,
    live: &Live,
    catalog: &ScriptCatalog,
    rollout: &Located<Rollout>,
    notes: &mut Vec<String>,
) -> Result<BTreeMap<ObjectKey, Placement>, Error> {
    if rollout.item.status.phase.as_deref() != Some("Progressing") {
        // Steps that do not plan were said by the plan's own error, and block nothing here:
        // nothing routes the objects now.
        let plan = session.plan_to_place(live, catalog, rollout);
        return Ok(plan.map(|plan| placed(&plan, None)).unwrap_or_default());
    }
    // Mid-release, unlike at its end (where the controller restores them itself); a
    // TrafficRouting's objects are its own (restored once no Rollout holds it).
    if let Some(ending) = Ending::of(&rollout.item).filter(|e| e.routes_to_new_next(&rollout.item)) {
        notes.push(format!(
            "Rollout {}: {}: that route stores the originals afresh and routes the objects again, undoing this restore until its own",
            rollout.item.name,
            ending.explain(&rollout.item)
        ));
    }
    if rollout.item.blue_green_blocked() {
        notes.push(format!("Rollout {}: {}", rollout.item.name, model::BLUE_GREEN_BLOCKED));
    } else if Ending::of(&rollout.item).is_none()
        && let Some(routing) = Routing::of_rollout(&rollout.item, &rollout.namespace)
    {
        let item = &rollout.item;
        let state = item.status.current_step_state.as_deref();
        // Until its traffic routing is done, the current step is routed at every reconcile;
        // after it, the next step that routes does it.
        let when = match item.routes_current_step_now() {
            true => "as it routes the current step, within seconds once its pods are ready",
            false => "at the next step it routes",
        };
        notes.push(format!(
            "Rollout {} is in a release ({}{}): {}",
            item.name,
            item.current_step_label(),
            state.map(|state| format!(" {state}")).unwrap_or_default(),
            what_the_controller_routes_again(&routing.providers, when)
        ));
    }
    match session.plan_to_place(live, catalog, rollout) {
        Ok(plan) => Ok(placed(&plan, rollout.item.current_stage())),
        Err(e) => {
            let routings = routings(live, rollout)?;
            let mut note = format!(
                "Rollout {}: cannot check for edits made during the release, its steps do not plan: {e}",
                rollout.item.name
            );
            if let Some(stuck) = finalise_stuck(&routings, catalog) {
                note.push_str(&format!("; {stuck}"));
            }
            notes.push(note);
            let unverified = Placement::Unverified { rollout: rollout.item.name.clone() };
            Ok(routings.iter().flat_map(Routing::objects).map(|key| (key, unverified.clone())).collect())
        }
    }
}

/// What the controller does again, `when` it next routes, to the objects of `providers` that a
/// restore put back mid-release: it stores the custom refs' originals afresh and routes them; a
/// canary Ingress and an HTTPRoute have no stored original, it makes the one again and rewrites
/// the other's rules from those it has then.
fn what_the_controller_routes_again(providers: &[Provider], when: &str) -> String {
    if let [] | [Provider::Custom(_)] = providers {
        return format!("the controller routes its objects again {when}, from originals stored afresh");
    }
    let what: Vec<String> = providers
        .iter()
        .map(|provider| match provider {
            Provider::Custom(_) => "routes its custom refs again from originals stored afresh".into(),
            Provider::Ingress { name, .. } => {
                format!("makes its canary Ingress {} again", model::canary_ingress_name(name))
            }
            Provider::Gateway { http_route } => {
                format!("rewrites the rules of HTTPRoute {http_route} again from those it has then")
            }
        })
        .collect();
    let what = match what.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => what.concat(),
    };
    format!("{when}, the controller {what}")
}

/// Whether the controller's own restore of `routings` is stuck as well: it looks up the script
/// of an Ingress class for every operation, its finalise too, and fails without one
/// (ingress-gateway-semantics.md A.1). `catalog`: the scripts known here, the controller's
/// (its ConfigMap's, the built-in ones) and those given with --script or --lua-dir.
fn finalise_stuck(routings: &[Routing], catalog: &ScriptCatalog) -> Option<String> {
    let classes: std::collections::BTreeSet<String> = routings
        .iter()
        .flat_map(|routing| &routing.providers)
        .filter_map(|provider| match provider {
            Provider::Ingress { class_type, .. } if catalog.resolve_ingress(class_type).is_err() => {
                Some(format!("{class_type:?}"))
            }
            _ => None,
        })
        .collect();
    let class = match classes.len() {
        0 => return None,
        1 => "class",
        _ => "classes",
    };
    Some(format!(
        "the controller's own restore (its finalise) is stuck too until a script for Ingress {class} {} is added, as the controller needs it for every operation on the Ingress",
        classes.into_iter().collect::<Vec<_>>().join(" and ")
    ))
}

/// `restore --ref`: the objects' places against every Rollout of the namespace (`rollouts`, None
/// when they were not read) that routes one.
fn placements_of_refs(
    session: &Session,
    rollouts: Option<&NamespaceRollouts>,
    wanted: &[ObjectKey],
    notes: &mut Vec<String>,
) -> Result<Vec<(ObjectKey, Placement)>, Error> {
    let Some(NamespaceRollouts { live, catalog, .. }) = rollouts else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for rollout in &live.snapshot.rollouts {
        if !routes_any(live, rollout, wanted)? {
            continue;
        }
        let placements = placements(session, live, catalog, rollout, notes)?;
        found.extend(placements.into_iter().filter(|(key, _)| wanted.contains(key)));
    }
    Ok(found)
}

/// Each object of a plan of every stage: placed at a stage, or edited (shown against the
/// `current` stage's plan; without one, outside a release, against the stage nearest to it, as
/// `status` names it).
fn placed(plan: &RoutingPlan, current: Option<Stage>) -> BTreeMap<ObjectKey, Placement> {
    let objects: Vec<&ObjectPlan> = plan.stages.iter().flat_map(|s| &s.objects).collect();
    status::positions(plan)
        .into_iter()
        .filter_map(|view| {
            let key = objects.iter().find(|o| view.shows(o))?.key.clone();
            let placement = match view.position {
                Position::Drifted { nearest } => {
                    let shown = current.or(nearest);
                    plan.stages
                        .iter()
                        .filter(|stage| stage.stage.is_some() && stage.stage == shown)
                        .find_map(|stage| Some((stage, stage.objects.iter().find(|o| o.key == key)?)))
                        .map(|(stage, o)| Placement::Edited {
                            label: stage.label.clone(),
                            expected: Arc::clone(&o.planned),
                        })
                        .unwrap_or(Placement::Unchecked)
                }
                Position::CanaryWithoutOriginal { canary } => Placement::CanaryWithoutOriginal { canary },
                // Contested: as one of the two routings writing it leaves it, nobody's edit.
                Position::Original | Position::Absent | Position::AtStep { .. } | Position::Contested { .. } => {
                    Placement::Placed
                }
            };
            Some((key, placement))
        })
        .collect()
}

/// The kind and group of a gateway kind named without its group, as kubectl takes it: the kind,
/// its plural or its short name (the Istio CRDs' `vs` and `dr`, Ingress's `ing`), in any case.
fn known_kind(name: &str) -> Option<(&'static str, &'static str)> {
    const KNOWN: [(&str, &str, &[&str]); 4] = [
        ("VirtualService", "networking.istio.io", &["virtualservice", "virtualservices", "vs"]),
        ("DestinationRule", "networking.istio.io", &["destinationrule", "destinationrules", "dr"]),
        ("Ingress", "networking.k8s.io", &["ingress", "ingresses", "ing"]),
        (http_route::KIND, http_route::GROUP, &["httproute", "httproutes"]),
    ];
    let name = name.to_ascii_lowercase();
    KNOWN.into_iter().find(|(_, _, names)| names.contains(&name.as_str())).map(|(kind, group, _)| (kind, group))
}

/// `KIND.GROUP/NAME` (`KIND.VERSION.GROUP/NAME` too, as kubectl takes it), or `KIND/NAME` for the
/// gateway kinds kubectl knows without a group (see `known_kind`), to a served resource and a
/// name. Without a version, the kind is looked for at the group's versions, the preferred first,
/// as kubectl looks for it (a kind may be served at other versions than the preferred one: an
/// Istio kind at v1beta1 only where the group prefers v1).
async fn resolve_ref(cluster: &Cluster, argument: &str) -> Result<(Resource, String), Error> {
    let bad = || {
        Error::Input(format!(
            "--ref {argument:?}: expected KIND.GROUP/NAME (e.g. VirtualService.networking.istio.io/reviews)"
        ))
    };
    let (kind_group, name) = argument.split_once('/').ok_or_else(bad)?;
    let (kind, group) = match kind_group.split_once('.') {
        Some((kind, group)) => (kind, group),
        None => known_kind(kind_group).ok_or_else(bad)?,
    };
    let (given, group) = match group.split_once('.') {
        Some((version, group)) if is_kube_version(version) => (Some(version), group),
        _ => (None, group),
    };
    // What --ref may name, for a kind the server does not serve (a Service as `Service.core`, a
    // TrafficRouting, served at a version other than its group's preferred one).
    let names = "--ref names a gateway object: a custom ref with a Lua script (KIND.GROUP/NAME), an Ingress (Ingress.networking.k8s.io/NAME) or an HTTPRoute (HTTPRoute.gateway.networking.k8s.io/NAME)";
    let versions = match given {
        Some(version) => vec![version.to_string()],
        None => cluster.served_versions(group).await?.ok_or_else(|| {
            Error::Input(format!("--ref {argument}: the API server does not serve the group {group}; {names}"))
        })?,
    };
    for version in &versions {
        let resources = cluster.resources(group, version, false).await?.unwrap_or_default();
        let found =
            resources.into_iter().find(|r| r.kind.eq_ignore_ascii_case(kind) || r.plural.eq_ignore_ascii_case(kind));
        if let Some(resource) = found {
            return Ok((resource, name.to_string()));
        }
    }
    let at = versions.iter().map(|version| format!("{group}/{version}")).collect::<Vec<_>>().join(", ");
    Err(Error::Input(format!("--ref {argument}: the API server serves no {kind} in {at}; {names}")))
}

/// Whether `text` reads as a Kubernetes API version (`v1`, `v1beta1`, `v2alpha3`): in
/// `KIND.VERSION.GROUP`, what comes between the kind and the group.
fn is_kube_version(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('v') else { return false };
    let major_end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let (major, rest) = rest.split_at(major_end);
    let minor = rest.strip_prefix("alpha").or_else(|| rest.strip_prefix("beta"));
    !major.is_empty()
        && !major.starts_with('0')
        && match minor {
            None => rest.is_empty(),
            Some(minor) => !minor.is_empty() && !minor.starts_with('0') && minor.bytes().all(|b| b.is_ascii_digit()),
        }
}

/// Why `restore` (by `flag`) leaves an object alone.
fn not_a_gateway_object(flag: &str) -> String {
    format!(
        "not a gateway object this tool writes (a custom ref with a Lua script, an Ingress or an HTTPRoute): restore {flag} puts back only those; change a Rollout or a workload with kubectl or your GitOps tool"
    )
}

fn restoration_text(restorations: &[Restoration]) -> Result<String, Error> {
    let mut out = String::new();
    for r in restorations {
        let what = &r.key;
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
                    DiffStyle { differ: &super::diff::differ(), stored: StoredOriginal::Summary },
                )
                .map_err(Error::Input)?,
            );
        }
        let how = r.how.as_deref().unwrap_or("restore the stored original");
        let then = if r.restored.is_null() { "deleted" } else { "restored" };
        out.push_str(&format!("{}\n", paint(BOLD, &format!("{what}: {how}"))));
        out.push_str(
            &output::object_diff(
                &r.live,
                &r.restored,
                &format!("{what} (live)"),
                &format!("{what} ({then})"),
                DiffStyle { differ: &super::diff::differ(), stored: StoredOriginal::Summary },
            )
            .map_err(Error::Input)?,
        );
        for warning in &r.warnings {
            out.push_str(&format!("{}\n", paint(YELLOW, &format!("  warning: {warning}"))));
        }
    }
    Ok(out)
}

/// A backup file: its name, the one object it holds, why it is not whole, if it is not, and the
/// API server it was read from (`None`: an older version's, which does not say).
struct Backup {
    source: String,
    object: Value,
    flaws: Vec<String>,
    server: Option<String>,
}

/// Reads a backup file; one that is not whole as `write::backup_text` writes them (cut short,
/// changed, or an older version's) is refused unless `force` (with `force`, it is warned of
/// once the object is known to be one restore puts back).
fn read_backup(file: &std::path::Path, force: bool) -> Result<Backup, Error> {
    let source = file.display().to_string();
    let text = files::read_text(file, files::OBJECT)?;
    let flaws: Vec<String> = write::backup_flaw(&text).map(str::to_string).into_iter().collect();
    let server = write::backup_server(&text).map(str::to_string);
    // Refused before any request; forced, warned of by `restore_backup`.
    if !force {
        refuse_flawed(&source, &flaws, false)?;
    }
    let mut documents = yaml::parse_documents(&text, &source).map_err(Error::Input)?;
    match documents.len() {
        1 => Ok(Backup { object: documents.remove(0).value, source, flaws, server }),
        _ => Err(Error::Input(format!("{source}: expected one object"))),
    }
}

/// A backup read from another API server than `here` (a context of the same name may be another
/// cluster's): putting it back would put that cluster's object in this one.
fn another_server(saved: Option<&str>, here: &str) -> Vec<String> {
    match saved {
        Some(saved) if saved != here => vec![format!(
            "was read from the API server at {saved}, and this run reaches {here}: it may be another cluster's object (contexts of one name, such as kind-kind or kubernetes-admin@kubernetes, often are other clusters')"
        )],
        _ => Vec::new(),
    }
}

/// A backup whose stored original is not the live object's, both stored: it is of another
/// release, and the one it puts back is what the end of this release then restores.
fn another_release(backup: &Value, live: &Value, key: &ObjectKey) -> Option<String> {
    let stored = |object: &Value| data::stored_original(object).map(str::to_string);
    match (stored(backup), stored(live)) {
        (Some(saved), Some(now)) if saved != now => Some(format!(
            "holds another stored original than {key}'s ({}): it is of another release, and the end of this one (or `restore`) would then put back that release's original, undoing what changed since",
            data::ORIGINAL_SPEC_ANNOTATION
        )),
        _ => None,
    }
}

/// What makes a backup unfit to put back over `live`, the object it names as it is now.
fn misfits(backup: &Value, live: &Value, key: &ObjectKey) -> Vec<String> {
    let mut misfits = Vec::new();
    if backup["spec"].is_null() && !live["spec"].is_null() {
        misfits.push(format!("holds no spec, and {key} has one: putting it back would remove the spec"));
    }
    let uid = |object: &Value| object["metadata"]["uid"].as_str().map(str::to_string);
    if let (Some(saved), Some(now)) = (uid(backup), uid(live))
        && saved != now
    {
        misfits.push(format!(
            "holds {key} with uid {saved}, and the live one's is {now}: the object was deleted and made again since the backup was written"
        ));
    }
    misfits
}

/// A backup `source` with `flaws` is refused (exit 3, nothing written) unless `force`, which
/// turns each into a warning.
/// The owner references of `backup` (of namespace `namespace`) to a Rollout that is gone, or
/// was deleted and made again since (another uid): the garbage collector deletes an object made
/// from it at once, after a report that it was made. A Rollout that cannot be read is left to
/// the claim's check of the namespace's Rollouts, which refuses then (without --force).
async fn owners_gone(cluster: &Cluster, backup: &Value, namespace: &str) -> Result<Vec<String>, Error> {
    let owners = backup["metadata"]["ownerReferences"].as_array().into_iter().flatten();
    let rollouts: Vec<(&str, &str)> = owners
        .filter(|owner| {
            owner["kind"] == "Rollout"
                && owner["apiVersion"].as_str().is_some_and(|v| v.starts_with("rollouts.kruise.io/"))
        })
        .filter_map(|owner| Some((owner["name"].as_str()?, owner["uid"].as_str()?)))
        .collect();
    if rollouts.is_empty() {
        return Ok(Vec::new());
    }
    let Some(resource) = live::served_rollout_resource(cluster).await? else { return Ok(Vec::new()) };
    let mut gone = Vec::new();
    for (name, uid) in rollouts {
        let is = match cluster.get(&resource, namespace, name).await {
            Ok(Some(rollout)) if rollout["metadata"]["uid"] == uid => continue,
            Err(_) => continue,
            Ok(Some(rollout)) => format!(
                "was deleted and made again since (its uid is {} now)",
                rollout["metadata"]["uid"].as_str().unwrap_or_default()
            ),
            Ok(None) => "does not exist now".to_string(),
        };
        gone.push(format!(
            "names as its owner Rollout {name} (uid {uid}), which {is}: the garbage collector would delete the object made from it at once"
        ));
    }
    Ok(gone)
}

fn refuse_flawed(source: &str, flaws: &[String], force: bool) -> Result<(), Error> {
    if flaws.is_empty() {
        return Ok(());
    }
    if !force {
        let flaws: Vec<String> = flaws.iter().map(|flaw| format!("{source} {flaw}")).collect();
        return Err(Error::Refused(format!(
            "nothing was written: {}; check it, and pass --force to put it back anyway",
            flaws.join("; ")
        )));
    }
    for flaw in flaws {
        crate::stderr::line(&format!("warning: {source} {flaw}; put back all the same (--force)"));
    }
    Ok(())
}

/// `restore --from-backup FILE`: the backup's spec, labels and annotations over the live object,
/// or the object made again from the backup when it no longer exists.
async fn restore_backup(
    session: &Session,
    writer: &mut Writer<'_>,
    Backup { source, object: backup, flaws, server }: &Backup,
    args: &RestoreArgs,
) -> Result<Outcome, Error> {
    let api_version = backup["apiVersion"].as_str().unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = backup["kind"].as_str().unwrap_or_default();
    let not_served = || Error::Input(format!("{source}: the API server does not serve {api_version} {kind}"));
    let mut resource = session.cluster.resource(group, version, kind, false).await?.ok_or_else(not_served)?;
    let namespace = backup["metadata"]["namespace"].as_str().unwrap_or(&session.cluster.namespace).to_string();
    let name =
        backup["metadata"]["name"].as_str().ok_or_else(|| Error::Input(format!("{source}: no metadata.name")))?;
    if namespace != session.cluster.namespace {
        // The Rollouts routing it, which are claimed, are those of its namespace.
        return Err(Error::Input(format!(
            "{source} holds an object of namespace {namespace}, not {}: run with -n {namespace}",
            session.cluster.namespace
        )));
    }
    let key = ObjectKey::new(&resource.group, &resource.kind, &namespace, name);
    if !session.writes_kind(api_version, kind, name).await? {
        // A Rollout's backup would put an old spec over the live one (a new release started
        // since, say); its status is the controller's.
        return Err(Error::Refused(format!(
            "nothing was written: {source} holds {key}, which is {}",
            not_a_gateway_object("--from-backup")
        )));
    }
    refuse_flawed(source, flaws, args.force)?;
    refuse_flawed(source, &another_server(server.as_deref(), &session.cluster.server), args.force)?;
    let mut notes = Vec::new();
    let command = format!("restore --from-backup {source}");
    let rollouts = claim_routing(session, writer, std::slice::from_ref(&key), &command, args.force, &mut notes).await?;
    for note in notes {
        crate::stderr::line(&note);
    }
    let found = match session.cluster.get(&resource, &namespace, name).await? {
        Some(object) => Some(object),
        // A 404 may come from a stale discovery cache (a renamed plural, a version no longer
        // served): the object is taken for gone only once a fresh discovery agrees.
        None => {
            let reference =
                crate::model::ObjectRef { api_version: api_version.into(), kind: kind.into(), name: name.into() };
            let (fresh, object) = live::read_after_rediscovery(&session.cluster, &reference, &resource).await?;
            resource = fresh;
            object
        }
    };
    let change = match found {
        // Gone (a canary Ingress a restore deleted, say): made again as the backup holds it,
        // without what the server sets, which a create may not carry.
        None => {
            refuse_flawed(source, &owners_gone(&session.cluster, backup, &namespace).await?, args.force)?;
            Change::Create { key: key.clone(), object: Arc::new(change::without_server_fields(backup)) }
        }
        Some(live) => {
            let restored = Data::of_object(backup).apply_to(&live, None);
            if data::same_routing(&live, &restored) {
                print(&format!("{key} already matches the backup\n"))?;
                return Ok(Outcome::Done);
            }
            refuse_flawed(source, &misfits(backup, &live, &key), args.force)?;
            if let Some(warning) = another_release(backup, &live, &key) {
                super::warn(&format!("warning: {source} {warning}"));
            }
            Change::Replace { key: key.clone(), before: Arc::new(live), after: Arc::new(restored) }
        }
    };
    if writer.mode() != Mode::ClientDryRun {
        let permissions = resource.write_permissions(&change, &namespace);
        check_permissions(&session.cluster, permissions, [&change], |_| None).await?;
    }
    let (live, live_header) = match change.before() {
        Some(live) => (live.clone(), format!("{key} (live)")),
        None => {
            print(&format!(
                "{key} does not exist: it is created as the backup holds it (owner references and finalizers too), without what the API server sets (uid, resourceVersion, timestamps, managed fields, status)\n"
            ))?;
            (Value::Null, format!("{key} (absent)"))
        }
    };
    print(
        &output::object_diff(
            &live,
            &change.after().expect("a create or a replace"),
            &live_header,
            &format!("{key} (from {source})"),
            DiffStyle { differ: &super::diff::differ(), stored: StoredOriginal::Summary },
        )
        .map_err(Error::Input)?,
    )?;
    let written = change.after().expect("a create or a replace");
    for warning in canary_backup_warnings(&session.cluster, rollouts.as_ref(), &key, &written).await? {
        super::warn(&format!("warning: {warning}"));
    }
    if writer.mode() == Mode::Apply && !args.yes {
        writer.ask("Put this backup back?", |q| confirm(q, false)).await?;
    }
    writer.apply(&resource, &change).await?;
    let unheard = writer.unheard_reply(&key).map(|reply| format!("; {reply}")).unwrap_or_default();
    let line = match change {
        Change::Create { .. } => format!("{key} created from {source} (it did not exist before{unheard})"),
        _ => {
            let previous = writer.backup_of(&key).map(|b| b.display().to_string()).unwrap_or_default();
            format!("{key} restored from {source} (its previous state: {previous}{unheard})")
        }
    };
    print_outcome(writer, &format!("{line}\n"))?;
    Ok(Outcome::Done)
}

/// What to warn of before `restore --from-backup` writes `written` (the object `key` as the
/// backup makes it), when it carries a routing's canary traffic: a canary Ingress (its
/// controller owner is a Rollout or a TrafficRouting, or it is named as the canary Ingress of a
/// routing of `found`, the namespace's Rollouts, when read), or a custom ref or HTTPRoute of such
/// a routing that routes to its canary (`routes_canary`: a canary Service of its own, or a custom
/// ref's `canary` subset of the stable Service). A Service it routes to that does not exist, as
/// `plan` warns (the canary Service the controller makes, or the stable one it waits for); and
/// an owner not in a release, as the controller undoes canary routing only in one. It is what
/// the user asked for: warnings, not refusals.
async fn canary_backup_warnings(
    cluster: &Cluster,
    found: Option<&NamespaceRollouts>,
    key: &ObjectKey,
    written: &Value,
) -> Result<Vec<String>, Error> {
    let mut owners: Vec<Routing> = Vec::new();
    if let Some(found) = found {
        for rollout in &found.live.snapshot.rollouts {
            for routing in routings(&found.live, rollout)? {
                let writes_it = restored_objects(&routing).iter().any(|(object, _)| object == key);
                if writes_it
                    && routes_canary(&routing, key, written)
                    && !owners.iter().any(|o| o.owner == routing.owner)
                {
                    owners.push(routing);
                }
            }
        }
    }
    let made_by_the_controller = is_canary_ingress(written);
    if owners.is_empty() && !made_by_the_controller {
        return Ok(Vec::new());
    }
    // The canary Services it routes to, and whether each is one of its own (not the stable one).
    let mut services: Vec<(&str, bool)> = Vec::new();
    if ProviderKind::of(key) == ProviderKind::Ingress {
        for service in ingress::backend_services(written) {
            // The controller makes a canary Ingress's backends its canary Service; someone else's
            // Ingress of that name routes where they chose.
            let canary_of = owners.iter().find(|routing| routing.canary_service == service);
            if canary_of.is_some() || made_by_the_controller {
                services
                    .push((service, canary_of.is_none_or(|routing| routing.canary_service != routing.stable_service)));
            }
        }
    } else {
        for routing in &owners {
            // With canary = stable (a custom ref's canary subset) the Service is the stable one.
            let service = (routing.canary_service.as_str(), routing.canary_service != routing.stable_service);
            if !services.contains(&service) {
                services.push(service);
            }
        }
    }
    let mut warnings = Vec::new();
    for (service, generated) in services {
        match live::read_service(cluster, service).await? {
            Ok(Some(_)) => {}
            Ok(None) => warnings.push(providers::missing_canary_service(service, generated, key)),
            Err(unchecked) => warnings.push(unchecked),
        }
    }
    warnings
        .extend(owners.iter().filter(|routing| !routing.releasing).map(|routing| not_releasing(routing, key, written)));
    Ok(warnings)
}

/// Whether `written`, object `key` of `routing`, carries the routing's canary traffic: a canary
/// Ingress does; a custom ref when it routes to the canary (`custom::canary_routing_in`: the
/// canary Service, or with canary = stable its `canary` subset); an HTTPRoute when it routes to a
/// canary Service of the routing's own (with canary = stable its backendRefs cannot tell).
fn routes_canary(routing: &Routing, key: &ObjectKey, written: &Value) -> bool {
    let (canary, stable) = (&routing.canary_service, &routing.stable_service);
    match ProviderKind::of(key) {
        ProviderKind::Ingress => true,
        ProviderKind::Gateway => canary != stable && !gateway::GatewayRoute::of(routing, &key.name).untouched(written),
        ProviderKind::Custom => custom::canary_routing_in(&written["spec"], canary, stable).is_some(),
    }
}

/// Object `key` of `routing`, put back as `written` with the routing's canary traffic while the
/// owner has no release in progress: the controller undoes canary routing only in a release (a
/// Rollout's at a step without traffic, or at its end; a TrafficRouting's when it finalises), so
/// it stays; and how to undo it.
fn not_releasing(routing: &Routing, key: &ObjectKey, written: &Value) -> String {
    let reference = format!("{}.{}/{}", key.kind, key.group, key.name);
    let (undoes, until) = match ProviderKind::of(key) {
        ProviderKind::Ingress => {
            ("deletes its canary Ingress", format!("until `restore --ref {reference}` deletes it again"))
        }
        // An HTTPRoute keeps no stored original for `--ref`: its Rollout's restore runs the
        // controller's restore of its rules.
        ProviderKind::Gateway => (
            "restores its HTTPRoute's rules",
            match routing.owner.kind {
                OwnerKind::Rollout => format!(
                    "until `restore {}` restores its rules",
                    model::rollout_args(&routing.owner.namespace, &routing.owner.name)
                ),
                OwnerKind::TrafficRouting => {
                    format!("until `restore` of a Rollout that links {} restores its rules", routing.owner)
                }
            },
        ),
        ProviderKind::Custom if data::stored_original(written).is_some() => (
            "puts back the stored original of its custom refs",
            format!("until `restore --ref {reference}` puts its stored original back"),
        ),
        ProviderKind::Custom => (
            "puts back the stored original of its custom refs",
            format!(
                "until it is edited back: it has no stored original (annotation {}) for `restore` to put back",
                data::ORIGINAL_SPEC_ANNOTATION
            ),
        ),
    };
    let when = match routing.owner.kind {
        OwnerKind::Rollout => {
            format!("the controller {undoes} only in a release (at a step without traffic, or at its end)")
        }
        OwnerKind::TrafficRouting => {
            format!("a TrafficRouting has no steps, and its controller {undoes} only {WHEN_IT_FINALISES}")
        }
    };
    format!("{} is not in a release: {when}, so {key} stays, with the canary traffic it routes, {until}", routing.owner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_between_kind_and_group_is_told_apart_as_kubectl_tells_it() {
        for version in ["v1", "v1beta1", "v2alpha3", "v10"] {
            assert!(is_kube_version(version), "{version}");
        }
        for other in ["networking", "v", "v0", "v1beta", "v1beta0", "v1gamma1", "k8s", "V1"] {
            assert!(!is_kube_version(other), "{other}");
        }
    }

    #[test]
    fn a_backup_of_another_release_is_warned_of_by_its_stored_original() {
        let key = ObjectKey::new("networking.istio.io", "VirtualService", "shop", "demo");
        let with = |original: &str| json!({"metadata": {"annotations": {data::ORIGINAL_SPEC_ANNOTATION: original}}});
        let warning = another_release(&with("{\"spec\":1}"), &with("{\"spec\":2}"), &key).expect("warned");
        assert!(warning.starts_with("holds another stored original than VirtualService shop/demo's"), "{warning}");
        assert_eq!(another_release(&with("{}"), &with("{}"), &key), None, "the same release");
        assert_eq!(another_release(&json!({}), &with("{}"), &key), None, "from before the release");
        assert_eq!(another_release(&with("{}"), &json!({}), &key), None, "the release over");
    }

    #[test]
    fn a_backup_of_another_api_server_is_a_misfit_and_an_older_versions_is_not_checked() {
        let here = "https://10.0.0.1:6443/";
        assert_eq!(another_server(Some(here), here), Vec::<String>::new());
        assert_eq!(another_server(None, here), Vec::<String>::new());
        let elsewhere = another_server(Some("https://10.0.0.2:6443/"), here);
        assert!(elsewhere[0].starts_with("was read from the API server at https://10.0.0.2:6443/, and this run reaches https://10.0.0.1:6443/: it may be another cluster's object"), "{elsewhere:?}");
    }

    #[test]
    fn a_gateway_kind_is_known_without_its_group_by_kind_plural_or_short_name() {
        for (name, known) in [
            ("VirtualService", Some(("VirtualService", "networking.istio.io"))),
            ("vs", Some(("VirtualService", "networking.istio.io"))),
            ("DR", Some(("DestinationRule", "networking.istio.io"))),
            ("ingresses", Some(("Ingress", "networking.k8s.io"))),
            ("ing", Some(("Ingress", "networking.k8s.io"))),
            ("httproute", Some(("HTTPRoute", "gateway.networking.k8s.io"))),
            ("", None),
            ("deployment", None),
        ] {
            assert_eq!(known_kind(name), known, "{name:?}");
        }
    }
    use crate::snapshot::Origin;
    use serde_json::json;

    fn unloaded(rollout: Option<Value>) -> live::Unloaded {
        let rollout = rollout.map(|raw| Located {
            origin: Origin::Cluster("rollout.rollouts.kruise.io/odd".into()),
            namespace: "shop".into(),
            item: Rollout::from_object(&raw).unwrap(),
            raw,
        });
        live::Unloaded { name: "odd".into(), index: 0, rollout, error: "Rollout shop/odd: broken".into() }
    }

    fn routing_through(routing: Value) -> Value {
        json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "odd", "namespace": "shop", "annotations": {}},
            "spec": {
                "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "odd"},
                "strategy": {"canary": {"steps": [{"traffic": "10%"}], "trafficRoutings": [routing]}}
            }
        })
    }

    fn routing_of(routing: Value) -> Routing {
        Routing::of_rollout(&Rollout::from_object(&routing_through(routing)).unwrap(), "shop").unwrap()
    }

    #[test]
    fn a_check_that_could_not_be_made_is_outweighed_by_a_stage_or_an_edit_only() {
        let edited = || Placement::Edited { label: "step 1/2".into(), expected: Arc::new(Value::Null) };
        let unverified = || Placement::Unverified { rollout: "a".into() };
        let merged = |mut first: Placement, second: Placement| {
            first.merge(second);
            first
        };
        assert!(matches!(merged(Placement::Unchecked, unverified()), Placement::Unverified { .. }));
        assert!(matches!(merged(unverified(), Placement::Unchecked), Placement::Unverified { .. }));
        assert!(matches!(merged(unverified(), edited()), Placement::Edited { .. }));
        assert!(matches!(merged(edited(), unverified()), Placement::Edited { .. }));
        assert!(matches!(merged(unverified(), Placement::Placed), Placement::Placed));
        assert!(matches!(merged(Placement::Placed, unverified()), Placement::Placed));
        assert!(matches!(merged(edited(), Placement::Unchecked), Placement::Edited { .. }));
    }

    #[test]
    fn a_restore_that_cannot_check_for_edits_asks_or_refuses_naming_the_rollouts() {
        assert_eq!(
            unverified_refusal(&["web"]),
            "nothing was written: Rollout web's steps do not plan (said above), so the objects could not be checked for edits made during the release, which a restore would discard unseen: fix what stops the steps planning, or pass --force to restore anyway"
        );
        assert_eq!(
            unverified_question(&["a", "b"]),
            "Rollouts a and b's steps do not plan (said above), so these objects could not be checked for edits made during the release; a restore discards any there are. Restore them all the same?"
        );
    }

    #[test]
    fn the_note_mid_release_says_what_the_controller_does_again_for_each_provider() {
        let custom = json!([{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "demo"}]);
        let providers = |routing: Value| routing_of(routing).providers;
        assert_eq!(
            what_the_controller_routes_again(
                &providers(json!({"service": "odd", "customNetworkRefs": custom})),
                "at the next step it routes"
            ),
            "the controller routes its objects again at the next step it routes, from originals stored afresh"
        );
        assert_eq!(
            what_the_controller_routes_again(
                &providers(json!({"service": "odd", "ingress": {"name": "web"}})),
                "at the next step it routes"
            ),
            "at the next step it routes, the controller makes its canary Ingress web-canary again"
        );
        assert_eq!(
            what_the_controller_routes_again(
                &providers(json!({"service": "odd", "gateway": {"httpRouteName": "store"}})),
                "at the next step it routes"
            ),
            "at the next step it routes, the controller rewrites the rules of HTTPRoute store again from those it has then"
        );
        assert_eq!(
            what_the_controller_routes_again(
                &providers(json!({"service": "odd", "customNetworkRefs": custom,
                    "ingress": {"name": "web"}, "gateway": {"httpRouteName": "store"}})),
                "at the next step it routes"
            ),
            "at the next step it routes, the controller routes its custom refs again from originals stored afresh, makes its canary Ingress web-canary again and rewrites the rules of HTTPRoute store again from those it has then"
        );
    }

    #[test]
    fn the_controllers_finalise_is_stuck_too_where_an_ingress_class_has_no_script() {
        let through =
            |class: &str| routing_of(json!({"service": "odd", "ingress": {"name": "web", "classType": class}}));
        let catalog = ScriptCatalog::default();
        assert_eq!(finalise_stuck(&[through("nginx")], &catalog), None, "built in");
        assert_eq!(
            finalise_stuck(&[through("traefik")], &catalog).unwrap(),
            "the controller's own restore (its finalise) is stuck too until a script for Ingress class \"traefik\" is added, as the controller needs it for every operation on the Ingress"
        );
        assert_eq!(
            finalise_stuck(&[through("traefik"), through("kong"), through("traefik")], &catalog).unwrap(),
            "the controller's own restore (its finalise) is stuck too until a script for Ingress classes \"kong\" and \"traefik\" is added, as the controller needs it for every operation on the Ingress"
        );
        let mut given = ScriptCatalog::default();
        given.overrides.insert(crate::scripts::ingress_key("traefik"), ("t.lua".into(), "return {}".into()));
        assert_eq!(finalise_stuck(&[through("traefik")], &given), None, "its steps plan");
        let custom = routing_of(json!({"service": "odd", "customNetworkRefs": [
            {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w"}
        ]}));
        assert_eq!(finalise_stuck(&[custom], &catalog), None, "no Ingress");
    }

    #[test]
    fn a_canary_ingress_put_back_outside_a_release_says_what_deletes_it() {
        let routing = routing_of(json!({"service": "odd", "ingress": {"name": "web"}}));
        let key = ObjectKey::new("networking.k8s.io", "Ingress", "shop", "web-canary");
        assert_eq!(
            not_releasing(&routing, &key, &Value::Null),
            "Rollout shop/odd is not in a release: the controller deletes its canary Ingress only in a release (at a step without traffic, or at its end), so Ingress shop/web-canary stays, with the canary traffic it routes, until `restore --ref Ingress.networking.k8s.io/web-canary` deletes it again"
        );
        // A TrafficRouting has no steps: it deletes the canary when it finalises.
        let cr = model::TrafficRoutingCr::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": "tr"},
            "spec": {"objectRef": [{"service": "odd", "ingress": {"name": "web"}}], "strategy": {"weight": 10}}
        }))
        .unwrap();
        assert_eq!(
            not_releasing(&Routing::of_traffic_routing(&cr, "shop"), &key, &Value::Null),
            "TrafficRouting shop/tr is not in a release: a TrafficRouting has no steps, and its controller deletes its canary Ingress only when it finalises, once no Rollout holds it any more (at the end of the next release of a Rollout linked to it), so Ingress shop/web-canary stays, with the canary traffic it routes, until `restore --ref Ingress.networking.k8s.io/web-canary` deletes it again"
        );
    }

    #[test]
    fn a_custom_ref_or_route_put_back_outside_a_release_says_what_undoes_it() {
        let vs = ObjectKey::new("networking.istio.io", "VirtualService", "shop", "web");
        let routing = routing_of(json!({"service": "odd", "gateway": {"httpRouteName": "web"}, "customNetworkRefs": [
            {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "web"}
        ]}));
        let stored = json!({"metadata": {"annotations": {(data::ORIGINAL_SPEC_ANNOTATION): "{}"}}});
        assert_eq!(
            not_releasing(&routing, &vs, &stored),
            "Rollout shop/odd is not in a release: the controller puts back the stored original of its custom refs only in a release (at a step without traffic, or at its end), so VirtualService shop/web stays, with the canary traffic it routes, until `restore --ref VirtualService.networking.istio.io/web` puts its stored original back"
        );
        assert!(
            not_releasing(&routing, &vs, &json!({})).ends_with("until it is edited back: it has no stored original (annotation rollouts.kruise.io/original-spec-configuration) for `restore` to put back"),
            "nothing for restore to put back"
        );
        let route = ObjectKey::new(http_route::GROUP, http_route::KIND, "shop", "web");
        assert_eq!(
            not_releasing(&routing, &route, &json!({})),
            "Rollout shop/odd is not in a release: the controller restores its HTTPRoute's rules only in a release (at a step without traffic, or at its end), so HTTPRoute shop/web stays, with the canary traffic it routes, until `restore odd -n shop` restores its rules"
        );
    }

    #[test]
    fn a_backup_carries_canary_routing_when_it_routes_to_a_canary_service_of_its_own() {
        let refs = json!([{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "web"}]);
        let routing =
            routing_of(json!({"service": "odd", "gateway": {"httpRouteName": "web"}, "customNetworkRefs": refs}));
        let vs = ObjectKey::new("networking.istio.io", "VirtualService", "shop", "web");
        let to = |host: &str| json!({"spec": {"http": [{"route": [{"destination": {"host": host}}]}]}});
        assert!(routes_canary(&routing, &vs, &to("odd-canary")));
        assert!(routes_canary(&routing, &vs, &to("odd-canary.shop.svc.cluster.local")));
        assert!(!routes_canary(&routing, &vs, &to("odd")));
        let route = ObjectKey::new(http_route::GROUP, http_route::KIND, "shop", "web");
        let backends = |names: &[&str]| {
            let refs: Vec<Value> = names.iter().map(|name| json!({"kind": "Service", "name": name})).collect();
            json!({"spec": {"rules": [{"backendRefs": refs}]}})
        };
        assert!(routes_canary(&routing, &route, &backends(&["odd", "odd-canary"])));
        assert!(!routes_canary(&routing, &route, &backends(&["odd"])));
        // With canary = stable an HTTPRoute cannot tell canary routing, a custom ref by its
        // `canary` subset only; a canary Ingress always is.
        let mut rollout =
            routing_through(json!({"service": "odd", "gateway": {"httpRouteName": "web"}, "customNetworkRefs": refs}));
        rollout["spec"]["strategy"]["canary"]["disableGenerateCanaryService"] = json!(true);
        let same = Routing::of_rollout(&Rollout::from_object(&rollout).unwrap(), "shop").unwrap();
        assert_eq!(same.canary_service, same.stable_service);
        assert!(!routes_canary(&same, &vs, &to("odd")));
        let subset = json!({"spec": {"http": [{"route": [{"destination": {"host": "odd", "subset": "canary"}}]}]}});
        assert!(routes_canary(&same, &vs, &subset));
        assert!(!routes_canary(&same, &route, &backends(&["odd"])));
        let ingress = ObjectKey::new("networking.k8s.io", "Ingress", "shop", "web-canary");
        assert!(routes_canary(&same, &ingress, &json!({})));
    }

    #[test]
    fn an_object_restore_leaves_is_refused_without_force_and_says_how_to_put_it_back() {
        let key = ObjectKey::new("networking.k8s.io", "Ingress", "shop", "web-canary");
        let live = json!({"metadata": {"uid": "u1"}});
        let why = "Ingress shop/web-canary is not Rollout shop/demo's canary Ingress (it has no controller owner): restore does not delete it";
        let left = Left::new(key, &live, why.into(), "put them back by hand (`kubectl annotate`)", false);
        assert_eq!(left.uid.as_deref(), Some("u1"), "its own backups, not a namesake's");
        assert_eq!(
            left.text(Some(std::path::Path::new("/b/web-canary/1.yaml"))),
            format!(
                "{why}: `restore --from-backup /b/web-canary/1.yaml` puts back its oldest backup here, saved before a write this tool made to it (check that it holds what you want: an object this tool made has no backup from before it)"
            )
        );
        let without = left.text(None);
        assert_eq!(
            without,
            format!("{why}: there is no backup of it here: put them back by hand (`kubectl annotate`)")
        );
        assert_eq!(refuse_left(Vec::new(), false).unwrap(), Vec::<String>::new());
        assert_eq!(refuse_left(vec![without.clone()], true).unwrap(), vec![without.clone()]);
        let Err(Error::Refused(refusal)) = refuse_left(vec![without.clone()], false) else { panic!("refused") };
        assert_eq!(
            refusal,
            format!(
                "nothing was written: restore would leave these objects as they are, without putting back what was written to them:\n  {without}\nPass --force to restore the other objects and leave these as they are"
            )
        );
    }

    #[test]
    fn a_backup_without_spec_or_of_an_object_made_again_does_not_fit_the_live_one() {
        let key = ObjectKey::new("networking.istio.io", "VirtualService", "shop", "demo");
        let object = |uid: &str, spec: Value| json!({"metadata": {"name": "demo", "uid": uid}, "spec": spec});
        let live = object("u1", json!({"hosts": ["demo"]}));
        assert!(misfits(&object("u1", json!({"hosts": []})), &live, &key).is_empty());
        assert_eq!(
            misfits(&object("u1", Value::Null), &live, &key),
            ["holds no spec, and VirtualService shop/demo has one: putting it back would remove the spec"]
        );
        let mut specless = live.clone();
        specless["spec"].take();
        assert!(misfits(&json!({"metadata": {"uid": "u1"}}), &specless, &key).is_empty(), "neither has one");
        assert_eq!(
            misfits(&json!({"metadata": {"uid": "u0"}}), &live, &key),
            [
                "holds no spec, and VirtualService shop/demo has one: putting it back would remove the spec",
                "holds VirtualService shop/demo with uid u0, and the live one's is u1: the object was deleted and made again since the backup was written",
            ]
        );
        // A file without uid (written by hand) names no other object.
        assert!(misfits(&json!({"spec": {}}), &live, &key).is_empty());
    }

    #[test]
    fn a_flawed_backup_is_refused_unless_forced() {
        assert!(refuse_flawed("b.yaml", &[], false).is_ok());
        let flaws = ["holds no spec".to_string(), "is odd".to_string()];
        let refusal = refuse_flawed("b.yaml", &flaws, false).unwrap_err();
        assert!(matches!(refusal, Error::Refused(_)));
        assert_eq!(
            refusal.to_string(),
            "nothing was written: b.yaml holds no spec; b.yaml is odd; check it, and pass --force to put it back anyway"
        );
        assert!(refuse_flawed("b.yaml", &flaws, true).is_ok());
    }

    #[test]
    fn a_rollout_that_cannot_be_loaded_may_route_what_its_refs_name_or_what_it_cannot_tell() {
        let vs = |name: &str| ObjectKey::new("networking.istio.io", "VirtualService", "shop", name);
        let odd = routing_through(json!({"service": "odd", "customNetworkRefs": [
            {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "demo"},
            {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w"}
        ]}));
        assert!(may_route(&unloaded(Some(odd.clone())), &[vs("demo")]));
        assert!(!may_route(&unloaded(Some(odd.clone())), &[vs("other")]));
        // A Rollout that does not parse, or routes through a TrafficRouting, cannot tell.
        assert!(may_route(&unloaded(None), &[vs("other")]));
        let mut through_a_cr = odd;
        through_a_cr["metadata"]["annotations"] = json!({"rollouts.kruise.io/trafficrouting": "odd-tr"});
        assert!(may_route(&unloaded(Some(through_a_cr)), &[vs("other")]));
    }

    #[test]
    fn a_held_traffic_routing_names_its_holders_and_how_to_restore_its_objects() {
        let cr = |object_ref: Value| {
            let cr = model::TrafficRoutingCr::from_object(&json!({
                "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": "tr"},
                "spec": {"strategy": {"weight": 10}, "objectRef": [object_ref]}
            }))
            .unwrap();
            Routing::of_traffic_routing(&cr, "shop")
        };
        let all = cr(json!({"service": "demo", "customNetworkRefs": [
            {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "demo"}
        ], "ingress": {"name": "web"}, "gateway": {"httpRouteName": "route"}}));
        let holders = [("progressing.rollouts.kruise.io/b", None), ("progressing.rollouts.kruise.io/c", None)];
        assert_eq!(
            held_note("shop", "tr", &holders, &all, &["a"]),
            "TrafficRouting shop/tr is still held by Rollout b (finalizer progressing.rollouts.kruise.io/b), Rollout c (finalizer progressing.rollouts.kruise.io/c): its objects are left as they are, as the controller restores them only once no Rollout holds it; once b and c are done, restore them with `restore --ref VirtualService.networking.istio.io/demo --ref Ingress.networking.k8s.io/web-canary` (or `restore a` again)"
        );
        // An HTTPRoute keeps no stored original for --ref; a finalizer not of the Rollouts' form
        // is named as it is.
        let route = cr(json!({"service": "demo", "gateway": {"httpRouteName": "route"}}));
        assert_eq!(
            held_note("shop", "tr", &[("example.com/progressing.rollouts.kruise.io-x", None)], &route, &["a", "d"]),
            "TrafficRouting shop/tr is still held by finalizer example.com/progressing.rollouts.kruise.io-x: its objects are left as they are, as the controller restores them only once no Rollout holds it; once example.com/progressing.rollouts.kruise.io-x is done, restore them with `restore a d` again"
        );
        // A holder that no longer links it, or is gone, never lets go: not waited for.
        let stale = [
            ("progressing.rollouts.kruise.io/b", None),
            ("progressing.rollouts.kruise.io/x", Some(Stale::Unlinked)),
            ("progressing.rollouts.kruise.io/y", Some(Stale::Gone)),
            ("progressing.rollouts.kruise.io/z", Some(Stale::Gone)),
        ];
        let note = held_note("shop", "tr", &stale, &route, &["a"]);
        assert!(note.ends_with(": its objects are left as they are, as the controller restores them only once no Rollout holds it; Rollout x no longer links it (its rollouts.kruise.io/trafficrouting annotation does not name tr), so its finalizer stays (a Rollout removes its own from the TrafficRouting it names, as its release ends) until someone removes it (`kubectl edit trafficroutings.rollouts.kruise.io tr -n shop`); Rollouts y and z no longer exist, so their finalizers stay (a Rollout removes its own from the TrafficRouting it names, as its release ends) until someone removes them (`kubectl edit trafficroutings.rollouts.kruise.io tr -n shop`); once b is done and those finalizers are removed, restore them with `restore a` again"), "{note}");
        let only_stale = held_note("shop", "tr", &stale[1..2], &route, &["a"]);
        assert!(only_stale.ends_with("until someone removes it (`kubectl edit trafficroutings.rollouts.kruise.io tr -n shop`); once it is removed, restore them with `restore a` again"), "{only_stale}");
    }
}
