//! `approve`: make the gateway objects match the current step, then approve it; with
//! `--until-step`/`--to-end`, follow the Rollout and approve each later pause. Gather (claim,
//! then read) → guard → render → confirm → write.

use super::cluster::{
    Session, check_permissions, print_outcome, refuse_degenerate, refuse_others_routing, refuse_stranding,
    refuse_unless_forced, resource_of, runtime, selection, writer_mode,
};
use super::follow::{Follower, cut_short};
use super::status::{Awaited, awaited, waiting_for};
use super::views::Scope;
use super::{ApproveArgs, Outcome, confirm, print, stored_original, terminal_question, warn};
use crate::change::Change;
use crate::error::Error;
use crate::model::{
    self, ApprovalProgress, Ending, ObjectKey, Owner, OwnerKind, Permission, Rollout, Routing, Stage, StrategyKind,
    approval_progress, http_route,
};
use crate::output;
use crate::plan::{self, RoutingPlan, StagePlan};
use crate::providers::{Action, ObjectPlan};
use crate::scripts::ScriptCatalog;
use crate::snapshot::Located;
use crate::source::cluster::Cluster;
use crate::source::live::{self, Live, Selection};
use crate::status::{self, ObjectView, Position, Progress, RolloutView};
use crate::write::{self, Deadline, Interrupt, MayLand, Mode, Writer};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// One Rollout to approve: its current stage's plan, checked by every guard.
struct Approval<'a> {
    rollout: &'a Located<Rollout>,
    stage: Stage,
    plan: RoutingPlan,
    /// With `--traffic-only` before the step's pods are ready: why the write is early.
    early: Option<String>,
}

/// A Rollout this run approved: where (and its label, `step 2/3`), its generation then, and the
/// version its release was releasing.
#[derive(Clone, Debug)]
struct Approved {
    stage: Stage,
    label: String,
    generation: Option<i64>,
    release: Option<String>,
}

/// Which Rollouts one approval covers.
enum Targets {
    /// Every selected Rollout, at the step `--expect-step` names, if any.
    Selected(Option<usize>),
    /// These Rollouts, each at the step the follower last saw it paused at.
    Only(BTreeMap<String, usize>),
}

impl Targets {
    /// Whether `rollout` is covered, and the step it must be at (with why).
    fn expectation(&self, rollout: &Located<Rollout>) -> Option<Option<(usize, &'static str)>> {
        match self {
            Targets::Selected(step) => Some(step.map(|s| (s, "--expect-step"))),
            Targets::Only(steps) => steps.get(&rollout.item.name).map(|s| Some((*s, "where it was last seen paused"))),
        }
    }
}

/// The line saying so when `rollout`, expected paused at a later step of a sequence
/// (`Targets::Only`), was approved there by someone else since the follow saw it paused: the
/// release goes on, and so does the follow. (Not the first approval's: that one refuses.)
fn approved_meanwhile(rollout: &Located<Rollout>, targets: &Targets, expect: Option<(usize, &str)>) -> Option<String> {
    let (Targets::Only(_), Some((step, _))) = (targets, expect) else { return None };
    Some(format!(
        "Rollout {}/{}: step {step}/{} was approved by someone else meanwhile ({}); following on",
        rollout.namespace,
        rollout.item.name,
        rollout.item.steps.len(),
        past_approval(rollout, step)?
    ))
}

/// Where `rollout` stands when its release is past step `step`'s approval (`it is at step 2/3
/// StepPaused now`, `its release is over: phase Healthy`); None when it is not.
fn past_approval(rollout: &Located<Rollout>, step: usize) -> Option<String> {
    let item = &rollout.item;
    let progress = approval_progress(&rollout.raw["status"], item.kind.status_field(), step as i64);
    (progress == ApprovalProgress::Approved).then(|| {
        match (item.current_stage(), item.status.current_step_state.as_deref()) {
            (Some(_), Some(state)) => format!("it is at {} {state} now", item.current_step_label()),
            _ => format!("its release is over: phase {}", item.status.phase.as_deref().unwrap_or("none")),
        }
    })
}

/// The line saying so when `approve --expect-step N` (no follow) finds the release past step N's
/// approval: approved by the run this one retries, or by someone else. Nothing is left to do
/// (exit 0, as a re-applied `kubectl apply`); a pause not reached yet is refused as ever.
fn approved_already(rollout: &Located<Rollout>, targets: &Targets, follows: bool) -> Option<String> {
    let (Targets::Selected(Some(step)), false) = (targets, follows) else { return None };
    // A release that never ran (no sub-status) approved nothing.
    if !rollout.item.status.has_sub_status {
        return None;
    }
    Some(format!(
        "rollout.rollouts.kruise.io/{} approved already (step {step}/{}; {}): nothing to do\n",
        rollout.item.name,
        rollout.item.steps.len(),
        past_approval(rollout, *step)?
    ))
}

/// Whether the run follows the Rollouts after the first approval.
fn follows(args: &ApproveArgs) -> bool {
    args.until_step.is_some() || args.to_end
}

/// The line that ends a sequence that did all it was asked: once it is done, a reader gone
/// (a closed pipe) takes nothing from it.
fn print_last(text: &str) -> std::io::Result<()> {
    super::read_or_gone(print(text))
}

/// Refuses, unless `force`, a step whose routing the API server would not admit now (a Rollout
/// stored before the controller's webhook checked it): the controller would write it as read,
/// a weight of -50 say, which a mesh may refuse or misread; the plan warns of it.
fn refuse_rejected_routing(rollout: &Located<Rollout>, stage: Stage, force: bool) -> Result<(), Error> {
    let rejected = rollout.item.routing_rejections(stage);
    if rejected.is_empty() || force {
        return Ok(());
    }
    let rejected: Vec<String> = rejected.iter().map(ToString::to_string).collect();
    Err(Error::Refused(format!(
        "nothing was written: Rollout {}/{}, {}: {}: the API server would not admit this routing now, and the controller would write it as it is; fix the Rollout, or pass --force to write it all the same",
        rollout.namespace,
        rollout.item.name,
        rollout.item.stage_label(stage),
        rejected.join("; ")
    )))
}

/// Refuses, unless `force`, a step whose routing the workload's replica count decides (see
/// `Rollout::routing_depends_on_workload`) when the workload may not be read or has no count:
/// the plan assumes the step is routed, and the controller may not route it.
fn refuse_unknown_workload(rollout: &Located<Rollout>, live: &Live, stage: Stage, force: bool) -> Result<(), Error> {
    let Some(workload) = rollout.item.workload.as_ref() else { return Ok(()) };
    let key = crate::model::ObjectKey::of_ref(workload, &rollout.namespace);
    let objects = &live.snapshot.objects;
    let read = objects.get(&key);
    if read.and_then(|workload| crate::model::workload_replicas(workload)).is_some()
        || force
        || !rollout.item.routing_depends_on_workload(stage)
    {
        return Ok(());
    }
    // One that does not exist, or whose kind is not served, is left to the plan's warning:
    // there is no count to make readable.
    let unknown = match (read, objects.unread(&key)) {
        (Some(_), _) => "has no replica count the controller reads: see to that".to_string(),
        (None, Some((failure, Some(needed)))) => format!("could not be read ({failure}): grant {needed}"),
        (None, Some((failure, None))) => format!("could not be read ({failure}): try again"),
        (None, None) => return Ok(()),
    };
    Err(Error::Refused(format!(
        "nothing was written: Rollout {}/{}, {}: whether the controller routes this partition step depends on the replica count of its workload {key}, which {unknown}, or pass --force to write the step's routing all the same",
        rollout.namespace,
        rollout.item.name,
        rollout.item.stage_label(stage)
    )))
}

/// Refuses, unless `force`, a step through an HTTPRoute that the API server does not serve at
/// the one version the controller reads it at: the controller's reconcile fails, so it writes
/// no step's routing there and never restores the route (see
/// `http_route::not_served_to_the_controller`).
fn refuse_http_route_unread_by_controller(
    rollout: &Located<Rollout>,
    live: &Live,
    stage: Stage,
    force: bool,
) -> Result<(), Error> {
    let route = Routing::of_rollout(&rollout.item, &rollout.namespace).and_then(|r| r.http_route().map(str::to_string));
    let served = live.resources.get(&(http_route::GROUP.to_string(), http_route::KIND.to_string()));
    match (route, served) {
        (Some(route), Some(served)) if served.version != http_route::CONTROLLER_VERSION && !force => {
            Err(Error::Refused(format!(
                "nothing was written: Rollout {}/{}, {}: {}; pass --force to write the step's routing all the same",
                rollout.namespace,
                rollout.item.name,
                rollout.item.stage_label(stage),
                http_route::not_served_to_the_controller(&format!("{}/{route}", rollout.namespace), &served.version)
            )))
        }
        _ => Ok(()),
    }
}

/// The guards of one approval, before anything is written.
fn check_approvable(
    rollout: &Located<Rollout>,
    args: &ApproveArgs,
    expect: Option<(usize, &str)>,
) -> Result<Stage, Error> {
    let item = &rollout.item;
    let name = format!("rollouts.rollouts.kruise.io \"{}\"", item.name);
    if !item.status.has_sub_status {
        return Err(Error::Refused(format!("{name}: no need to approve: not in canary or blue-green progress")));
    }
    // The step the status names is not what the controller routes next, so neither its routing
    // nor its approval is due.
    if let Some(ending) = Ending::of(item) {
        let why = ending.explain(item);
        return Err(Error::Refused(match ending {
            Ending::Over => format!("{name}: no need to approve: not in canary or blue-green progress ({why})"),
            _ => format!(
                "{name}: {why}; nothing to route or approve (`kubectl rollout-lua restore {}` does that restore now)",
                model::rollout_args(&rollout.namespace, &item.name)
            ),
        }));
    }
    // Before a release runs (phase Initial, none) the controller runs no step; while it
    // initializes, it starts from step 1 whatever step a sub-status left names.
    if item.status.phase.as_deref() != Some("Progressing") {
        return Err(Error::Refused(format!(
            "{name} is not progressing (phase {}): the controller runs no step, so there is nothing to route or approve",
            item.status.phase.as_deref().unwrap_or("unknown")
        )));
    }
    if item.blue_green_blocked() {
        return Err(Error::Refused(format!(
            "{name}: a new version of the workload came in the middle of the blue-green release (\"{}\"): the controller runs no step until the workload is rolled back; nothing to route or approve",
            item.status.message.as_deref().unwrap_or_default()
        )));
    }
    if item.initializing() {
        return Err(Error::Refused(format!(
            "{name}: {}; nothing to route or approve until it has",
            model::INITIALIZING
        )));
    }
    // A step approved now may be of a spec the controller is about to replace.
    if let Some(why) = item.spec_not_observed() {
        return Err(Error::Refused(format!(
            "{name}: {why}; nothing to route or approve until it has (`kubectl rollout-lua status {} -w --until-paused` waits for it)",
            model::rollout_args(&rollout.namespace, &item.name)
        )));
    }
    let stage = item.current_stage().ok_or_else(|| {
        let why = item.step_past_the_spec().unwrap_or_else(|| "the status names no current step".into());
        Error::Refused(format!("{name}: {why}"))
    })?;
    if let Some(jump) = item.pending_jump() {
        return Err(Error::Refused(format!(
            "{name}: the status's nextStepIndex is {jump}: the controller jumps to step {jump}/{} at its next reconcile, not on from {stage}; nothing to route or approve until it has (`kubectl rollout-lua plan {} --next` shows that step)",
            item.steps.len(),
            model::rollout_args(&rollout.namespace, &item.name)
        )));
    }
    if let Some(last) = args.until_step
        && last > item.steps.len()
    {
        return Err(Error::Refused(format!(
            "{name} has {} steps: there is no step {last} (--until-step; --to-end approves every later pause)",
            item.steps.len()
        )));
    }
    if let (Some(last), Stage::Step(current)) = (args.until_step, stage)
        && current > last
    {
        return Err(Error::Refused(format!(
            "{name} is already at step {current}/{}, past step {last}: there is no pause up to step {last} left to approve (--until-step)",
            item.steps.len()
        )));
    }
    let state = item.status.current_step_state.as_deref().unwrap_or("unknown");
    if !args.traffic_only && state != "StepPaused" {
        return Err(Error::Refused(format!(
            "{name} does not allow to approve, because current {} state is not 'StepPaused' (it is {state})",
            item.kind
        )));
    }
    if let (Some((expected, why)), Stage::Step(current)) = (expect, stage)
        && expected != current
    {
        return Err(Error::Refused(format!(
            "{name} is at step {current}/{}, not at step {expected} ({why})",
            item.steps.len()
        )));
    }
    Ok(stage)
}

/// Why writing `plan` (of the current step) now is early, when the step's canary pods may not be
/// ready: the controller routes a step only once they are (docs/controller-semantics.md §3.5),
/// and it makes the generated canary Service, or points it at the step's pods, only then too
/// (§3.5 `DoTrafficRouting`; this tool writes no Service). A step without traffic and matches is
/// restored from its start, so writing it is not early.
fn early_routing(rollout: &Rollout, plan: &RoutingPlan) -> Option<String> {
    let stage = plan.stages.first()?;
    let routes = stage.stage.is_some_and(|s| rollout.strategy_at(s).routes_traffic());
    let generated = rollout.traffic_routing.as_ref().filter(|_| !rollout.disable_generate_canary_service);
    let service = generated.map_or(String::new(), |routing| {
        format!(
            ", through Service {}-canary, which the controller makes, or points at the step's pods, only then too",
            routing.service
        )
    });
    (rollout.status.before_step_traffic_routing() && routes && plan.changed()).then(|| {
        format!(
            "Rollout {} is in {} of {}: the controller routes a step only once its canary pods are ready (StepTrafficRouting), so this write routes it now ({}) to canary pods that may not be ready yet{service}",
            rollout.name,
            rollout.status.current_step_state.as_deref().unwrap_or_default(),
            stage.label,
            stage.routing
        )
    })
}

/// The scripts `plans` run, checked against those the sequence was confirmed with (`scripts`,
/// filled at the step that asked, `confirming`): a later step whose script from the same place
/// changed (a script ConfigMap edited meanwhile) is refused, as its writes were confirmed with
/// the other script. A script first used at a later step is added.
fn same_scripts(scripts: &mut BTreeMap<String, String>, plans: &[&RoutingPlan], confirming: bool) -> Result<(), Error> {
    let resolved = plans.iter().flat_map(|p| &p.stages).flat_map(|s| &s.objects).filter_map(|o| match &o.action {
        Action::Lua(script) => Some(script),
        _ => None,
    });
    for script in resolved {
        let source = script.source.to_string();
        match scripts.get(&source) {
            Some(confirmed) if !confirming && *confirmed != script.sha256 => {
                return Err(Error::Refused(format!(
                    "stopped: the script {source} changed since the confirmation (sha256 {} then, {} now): nothing of this step was written; run approve again to see its plan with it",
                    &confirmed[..12],
                    &script.sha256[..12]
                )));
            }
            _ => {
                scripts.insert(source, script.sha256.clone());
            }
        }
    }
    Ok(())
}

/// What to say of approving a Rollout paused by `spec.strategy.paused`: the controller leaves it
/// as it is, in reason Paused, and acts on the approval only once it is resumed
/// (docs/controller-semantics.md §1.6, §7). Not refused: the approval waits for the resume.
fn paused_approval(rollout: &Rollout) -> Option<String> {
    rollout.paused.then(|| {
        format!(
            "Rollout {name} is paused (spec.strategy.paused): the controller acts on this approval only after it is resumed (`kubectl-kruise rollout resume {name}`, or spec.strategy.paused set to false)",
            name = rollout.name
        )
    })
}

/// What to say of approving a timed pause that has not run out (`now` on the API server's
/// clock): the approval ends it at once, as kubectl-kruise's does, where the controller would
/// have waited. Nothing once it has run out: the controller moves on by itself then.
fn timed_pause_approval(rollout: &Rollout, now: std::time::SystemTime) -> Option<String> {
    let Progress::Paused { pause_seconds, seconds_left } = Progress::of(rollout, now) else { return None };
    let pause = crate::time::human(std::time::Duration::from_secs(pause_seconds));
    let left = match seconds_left {
        Some(left) if left <= 0 => return None,
        Some(left) => format!(" has {} left", crate::time::human(std::time::Duration::from_secs(left as u64))),
        None => String::new(),
    };
    let step = rollout.current_stage()?;
    Some(format!(
        "{step}'s timed pause ({pause}){left}: approving ends it now, where the controller would have moved on by itself once it ran out"
    ))
}

/// Refuses when two routings plan one object and one of them writes it (`planned`: each
/// Rollout's name with an object its plan holds). Two Rollouts: each plan is made from the same
/// read, so the second Rollout's writes would replace the first's routing, leaving it approved
/// with routing it does not have. One Rollout's own routing and its TrafficRouting's: the
/// controller reconciles them independently, each rewriting the object to its own routing on
/// every pass (docs/controller-semantics.md §2), so the step is never done routing.
fn refuse_shared_writes<'a>(planned: impl IntoIterator<Item = (&'a str, &'a ObjectPlan)>) -> Result<(), Error> {
    /// An object, who plans it (each Rollout, through which routing), and whether one writes it;
    /// in the plans' order, so the first shared object named is the first written.
    type Planners<'p> = (&'p ObjectKey, Vec<(&'p str, &'p Owner)>, bool);
    let mut planners: Vec<Planners> = Vec::new();
    for (rollout, object) in planned {
        let index = match planners.iter().position(|(key, ..)| *key == &object.key) {
            Some(index) => index,
            None => {
                planners.push((&object.key, Vec::new(), false));
                planners.len() - 1
            }
        };
        let (_, by, writes) = &mut planners[index];
        *writes |= object.writes().next().is_some();
        if !by.contains(&(rollout, &object.owner)) {
            by.push((rollout, &object.owner));
        }
    }
    let shared = planners.iter().find_map(|(key, by, writes)| match by.as_slice() {
        [first, second, ..] if *writes => Some((key, first, second)),
        _ => None,
    });
    let Some((key, (first, own), (second, theirs))) = shared else { return Ok(()) };
    Err(Error::Refused(match (first == second, own == theirs) {
        (true, _) => format!(
            "nothing was written: {key} is routed both by {own} (its own trafficRoutings) and by {theirs} (the TrafficRouting it names), which the controller reconciles independently: each would rewrite it to its own routing on every pass, and the step would never be done routing: route it through one of them only"
        ),
        // One TrafficRouting both hold: its routing, the same for either, is no one's to overwrite.
        (false, true) => format!(
            "nothing was written: Rollouts {first} and {second} both hold {own}, which routes {key} for either: approve each in a run of its own"
        ),
        (false, false) => format!(
            "nothing was written: Rollouts {first} and {second} both plan writes to {key}; in one run the second would write over the first's routing: approve each in a run of its own (each then refuses while the other's release routes it, unless --force: two releases routing one object overwrite each other's routing)"
        ),
    }))
}

/// Refuses, without `force`, to write an Ingress named `<name>-canary` that this Rollout did not
/// make (`foreign`: what the plan warns of each): the controller would patch it too, but it may
/// be someone else's Ingress, routing for them.
fn refuse_foreign_canaries<'a>(foreign: impl Iterator<Item = &'a String>, force: bool) -> Result<(), Error> {
    refuse_unless_forced(
        foreign,
        "the step patches the annotations of an Ingress named as a canary Ingress that its Rollout did not make, as the controller would (which also deletes it when the release ends)",
        "Find out whose it is: rename or delete it if it is in the way, or pass --force to write it anyway",
        force,
    )
}

/// What writing every change of the plans (and undoing it) needs.
fn write_permissions(live: &Live, plans: &[&RoutingPlan]) -> Result<Vec<Permission>, Error> {
    let mut permissions = Vec::new();
    for object in plans.iter().flat_map(|p| &p.stages).flat_map(|s| &s.objects) {
        for change in object.writes() {
            permissions.extend(resource_of(live, &object.key)?.write_permissions(change, &object.key.namespace));
        }
    }
    Ok(permissions)
}

/// The approval itself: `currentStepState: StepReady` on the status subresource, as
/// kubectl-kruise writes it, conditional on the resourceVersion read. The step index goes along
/// unchanged, so that the patch can only approve the step that was guarded.
fn approval_change(rollout: &Located<Rollout>) -> Change {
    let field = rollout.item.kind.status_field();
    Change::MergePatch {
        key: rollout_key(rollout),
        subresource: Some("status"),
        before: Arc::new(rollout.raw.clone()),
        patch: json!({"status": {field: {
            "currentStepIndex": rollout.raw["status"][field]["currentStepIndex"],
            "currentStepState": "StepReady",
        }}}),
    }
}

fn rollout_key(rollout: &Located<Rollout>) -> ObjectKey {
    ObjectKey::new("rollouts.kruise.io", "Rollout", &rollout.namespace, &rollout.item.name)
}

/// One `approve` run: what every approval of it needs.
struct Run<'a> {
    session: &'a Session,
    selection: &'a Selection,
    args: &'a ApproveArgs,
    follower: Option<Follower>,
    /// The scripts the run was confirmed with (`source` → sha256), which the later steps of a
    /// sequence must run (`same_scripts`).
    scripts: BTreeMap<String, String>,
}

pub fn approve(args: &ApproveArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let selection = selection(&args.selection)?;
        let session = Session::open(&args.cluster, &args.scripts).await?;
        let interrupt = Interrupt::listen(Some(write::STOPPING))?;
        let mut writer =
            Writer::new(&session.cluster, writer_mode(args.dry_run), interrupt.clone(), terminal_question(args.yes))?;
        let mut run = Run { session: &session, selection: &selection, args, follower: None, scripts: BTreeMap::new() };
        let outcome = interrupt.unless_second(run.approve_all(&mut writer)).await;
        let outcome = outcome.map(|result| {
            if follows(args) {
                result.map_err(|e| cut_short(e, "while following the release: no later pause is approved"))
            } else {
                result
            }
        });
        let result = outcome.unwrap_or_else(|signal| Err(writer.stop_at_once(signal)));
        Ok(writer.finish(result).await?)
    })
}

impl Run<'_> {
    /// Claims the selected Rollouts, approves them, and with `--until-step`/`--to-end` follows
    /// them and approves each later pause.
    async fn approve_all(&mut self, writer: &mut Writer<'_>) -> Result<Outcome, Error> {
        let (session, args) = (self.session, self.args);
        claim_rollouts(session, self.selection, writer, "approve").await?;
        let first = Targets::Selected(args.expect_step);
        let Some(mut approved) = self.approve_step(writer, &first, true).await? else {
            return Ok(Outcome::Done);
        };
        if !follows(args) {
            return Ok(Outcome::Done);
        }
        // The Rollouts claimed, by name: one that matches a selector only later is not this run's.
        let claimed = Scope::Namespace(Selection::Names(approved.keys().cloned().collect()));
        let goal = match args.until_step {
            Some(last) => format!("pause again (up to step {last}), complete or fail"),
            None => "pause again, complete or fail".into(),
        };
        // What the sequence waits for, as status -w says it: for a timeout's message.
        let mut waiting = just_approved(&session.cluster.namespace, &approved, &goal);
        loop {
            if let Some(last) = args.until_step
                && approved.values().all(|a| a.stage >= Stage::Step(last))
            {
                print_last(&format!("approved every pause up to step {last}\n"))?;
                return Ok(Outcome::Done);
            }
            // The follower has no timeout of its own: --timeout bounds the run's waiting as a
            // whole (`Writer::deadline`, counted from the confirmation): the follow, the claims
            // renewed meanwhile, and a question asked at a later step.
            let following =
                self.follower.get_or_insert_with(|| Follower::new(Duration::ZERO, writer.interrupt().clone(), None));
            let deadline = writer.deadline();
            let views = async {
                let renewing = format!("renewing the claim, waiting for {waiting}");
                write::within(deadline, &renewing, writer.keep_claims()).await?;
                write::within(deadline, &format!("waiting for {waiting}"), following.next(session, &claimed)).await
            };
            let views = views.await.inspect_err(|_| following.finish())?;
            for view in &views {
                // Failed, disabled or being deleted (each a spec change too): said as such.
                if let Progress::Failed { reason } = &view.progress {
                    return Err(Error::Input(format!("Rollout {}: {reason}; stopped", view.name)));
                }
                // Each view is of a Rollout approved: the follow is of those, by name.
                let approval = &approved[&view.name];
                let (stage, generation) = (approval.stage, approval.generation);
                if view.generation != generation {
                    let shown = |generation: Option<i64>| generation.map_or("none".to_string(), |g| g.to_string());
                    return Err(Error::Input(format!(
                        "Rollout {} was changed by someone else (its spec: generation {} -> {}); stopped",
                        view.name,
                        shown(generation),
                        shown(view.generation)
                    )));
                }
                // A new version pushed meanwhile: the controller resets the release (§3.6), and
                // its pauses are not the ones this run was asked to approve.
                if let Some((before, now)) = approval.release.as_ref().zip(view.release.as_ref())
                    && before != now
                {
                    return Err(Error::Input(format!(
                        "Rollout {} began a new release (pod template hash {before} -> {now}): the one this run approved is gone; stopped",
                        view.name
                    )));
                }
                if view.progress == Progress::WaitingForApproval && view.stage.is_some_and(|s| s < stage) {
                    return Err(Error::Input(format!(
                        "Rollout {} went back to {}; someone else is driving it; stopped",
                        view.name,
                        view.step.as_deref().unwrap_or("an earlier step")
                    )));
                }
                // Read after the approval landed (every view is read afresh after one): waiting
                // at its step again, the approval was overwritten (the controller writes its
                // status whole, last writer wins) or undone.
                if view.progress == Progress::WaitingForApproval
                    && let Some(Stage::Step(step)) = view.stage.filter(|s| *s == stage)
                {
                    let args = model::rollout_args(&view.namespace, &view.name);
                    return Err(Error::Input(format!(
                        "Rollout {} waits for approval at {} again, after this run approved it: a status write of the controller's computed before the approval, or someone else, undid it; stopped (`kubectl rollout-lua approve {args} --expect-step {step}` approves it again)",
                        view.name,
                        view.step.as_deref().unwrap_or("that step")
                    )));
                }
            }
            if views.iter().all(|v| v.progress.is_final()) {
                following.finish();
                print_last("the release completed\n")?;
                return Ok(Outcome::Done);
            }
            // Past step N (its pause may have been a timed one, or approved by someone else):
            // nothing more to approve, and not all of it was approved by this run.
            let past = |v: &RolloutView| args.until_step.is_some_and(|last| v.stage > Some(Stage::Step(last)));
            if let Some(last) = args.until_step
                && views.iter().all(|v| past(v) || v.progress.is_final())
            {
                following.finish();
                print_last(&format!("past step {last}: nothing more to approve up to it\n"))?;
                return Ok(Outcome::Done);
            }
            let due = |v: &RolloutView| {
                v.progress == Progress::WaitingForApproval
                    && v.stage > approved.get(&v.name).map(|a| a.stage)
                    && !past(v)
            };
            let settled = |v: &RolloutView| due(v) || past(v) || v.progress.is_final();
            waiting = awaited(&views, settled, &goal);
            if views.iter().all(settled) {
                following.detach();
                // The approval below changes them: no view before it may stand for one.
                following.read_all_next();
                let only = views
                    .iter()
                    .filter(|v| due(v))
                    .filter_map(|v| match v.stage {
                        Some(Stage::Step(i)) => Some((v.name.clone(), i)),
                        _ => None,
                    })
                    .collect();
                match self.approve_step(writer, &Targets::Only(only), false).await? {
                    // Approved by someone else meanwhile: waiting as before.
                    Some(next) if next.is_empty() => {}
                    Some(next) => {
                        waiting = just_approved(&session.cluster.namespace, &next, &goal);
                        approved.extend(next);
                    }
                    None => return Ok(Outcome::Done),
                }
            }
        }
    }

    /// Approves the current step of `targets`: reads (under the claim), guards, plans, shows,
    /// confirms (`ask`: a sequence asks once, for all its steps), writes every change and then
    /// the approval. Returns the Rollouts approved, or None when nothing was written (a dry run).
    async fn approve_step(
        &mut self,
        writer: &mut Writer<'_>,
        targets: &Targets,
        ask: bool,
    ) -> Result<Option<BTreeMap<String, Approved>>, Error> {
        let (session, args) = (self.session, self.args);
        let (live, catalog) = session.load(self.selection).await?;
        writer.read_again();
        let (mut targeted, mut already) = (Vec::new(), String::new());
        for rollout in &live.snapshot.rollouts {
            let Some(expect) = targets.expectation(rollout) else { continue };
            match approved_meanwhile(rollout, targets, expect) {
                Some(passed_over) => crate::stderr::line(&passed_over),
                None => match approved_already(rollout, targets, follows(args)) {
                    Some(line) => already.push_str(&line),
                    None => targeted.push((rollout, expect)),
                },
            }
        }
        print(&already)?;
        if targeted.is_empty() && !already.is_empty() {
            return Ok(None);
        }
        // A later pause that someone else approved meanwhile leaves nothing to approve: the
        // follow goes on (the sequence's own guards stand for the rest).
        if targeted.is_empty() && matches!(targets, Targets::Only(_)) {
            return Ok(Some(BTreeMap::new()));
        }
        refuse_unclaimed(
            writer,
            targeted.iter().map(|(rollout, _)| (rollout.namespace.as_str(), rollout.item.name.as_str())),
        )?;
        // Every guard passes for every Rollout before anything is written; each Rollout's
        // refusal is said.
        let (mut approvals, mut refusals) = (Vec::new(), Vec::new());
        let checked = targeted.into_iter().map(|(rollout, expect)| {
            let stage = check_approvable(rollout, args, expect)?;
            refuse_rejected_routing(rollout, stage, args.force)?;
            refuse_unknown_workload(rollout, &live, stage, args.force)?;
            refuse_http_route_unread_by_controller(rollout, &live, stage, args.force)?;
            let mut plan = session.plan(&live, &catalog, &live.snapshot.objects, rollout, &[stage])?;
            if let Some(why) = plan.unwritable() {
                return Err(Error::Refused(format!("nothing was written: {why}")));
            }
            let early = args.traffic_only.then(|| early_routing(&rollout.item, &plan)).flatten();
            plan.warnings.extend(early.clone());
            plan.warnings.extend((!args.traffic_only).then(|| paused_approval(&rollout.item)).flatten());
            let now = session.cluster.server_now();
            plan.warnings.extend((!args.traffic_only).then(|| timed_pause_approval(&rollout.item, now)).flatten());
            Ok(Approval { rollout, stage, plan, early })
        });
        for result in checked {
            match result {
                Ok(approval) => approvals.push(approval),
                Err(refusal) => refusals.push(refusal),
            }
        }
        if let Some(refused) = Error::together(refusals) {
            return Err(refused);
        }
        let routings: Vec<Routing> = live.snapshot.routings().collect();
        let mut plans: Vec<&mut RoutingPlan> = approvals.iter_mut().map(|a| &mut a.plan).collect();
        plan::warn_alb_orders_between(&mut plans, &live.snapshot.objects, &routings);
        let planned = approvals
            .iter()
            .flat_map(|a| a.plan.stages.iter().flat_map(|s| &s.objects).map(|o| (a.rollout.item.name.as_str(), o)));
        refuse_shared_writes(planned)?;
        let owners: Vec<&Owner> =
            approvals.iter().flat_map(|a| &a.plan.stages).flat_map(|s| &s.objects).map(|o| &o.owner).collect();
        if let Some(named) = routings.iter().filter(|r| owners.contains(&&r.owner)).find_map(Routing::named_twice) {
            return Err(Error::Refused(format!(
                "nothing was written: {named}: this run would write it once for each, the second putting its original back between the step's routed writes: name it once"
            )));
        }
        let plans: Vec<&RoutingPlan> = approvals.iter().map(|a| &a.plan).collect();
        let objects = plans.iter().flat_map(|p| &p.stages).flat_map(|s| &s.objects);
        refuse_degenerate(objects.filter_map(|o| Some((&o.key, o.degenerate_original.as_ref()?))), args.force)?;
        let written =
            plans.iter().flat_map(|p| &p.stages).flat_map(|s| &s.objects).filter(|o| o.writes().next().is_some());
        refuse_foreign_canaries(written.clone().filter_map(|o| o.foreign_canary.as_ref()), args.force)?;
        let canary_originals = written
            .clone()
            .filter_map(|o| Some(format!("{}: routes to {} already", o.key, o.canary_in_original.as_ref()?)));
        refuse_unless_forced(
            canary_originals,
            "these objects have no stored original, and the controller would store their canary routing as it (the annotation removed mid-release, or routing made by hand), to put it back when the release ends",
            "Put the annotation back (the object's backup holds it), or take the canary routing out, or pass --force to write anyway",
            args.force,
        )?;
        refuse_stranding(written.clone().filter_map(|o| o.strands_stable.as_ref()), args.force)?;
        refuse_unless_forced(
            written.clone().filter_map(|o| o.controller_sticks.clone()),
            "the controller would stick at this step on these objects: approving it writes routing the controller cannot make, and leaves the release stuck there",
            "Fix the objects as each line says, or pass --force to write anyway",
            args.force,
        )?;
        let selected = approvals.iter().map(|a| a.rollout.item.name.as_str()).collect();
        let linked = approvals.iter().filter_map(|a| a.rollout.item.traffic_routing_cr.as_deref()).collect();
        let keys = written.map(|o| &o.key).collect();
        refuse_others_routing(&session.cluster, &selected, &linked, &keys, args.force).await?;
        same_scripts(&mut self.scripts, &plans, ask)?;
        // The claim's permissions were asked about when it was taken (a dry run takes none).
        let mut permissions = write_permissions(&live, &plans)?;
        let approving: Vec<Permission> = match args.traffic_only {
            true => Vec::new(),
            false => approvals
                .iter()
                .map(|a| {
                    live.rollouts.permission("patch", Some("status"), &a.rollout.namespace).on(&a.rollout.item.name)
                })
                .collect(),
        };
        permissions.extend(approving.iter().cloned());
        if writer.mode() != Mode::ClientDryRun {
            let changes = plans.iter().flat_map(|p| &p.stages).flat_map(|s| &s.objects).flat_map(|o| o.writes());
            let advice = |missing: &[Permission]| traffic_only_advice(missing, &approving);
            check_permissions(&session.cluster, permissions, changes, advice).await?;
        }
        print(
            &output::plans_text(
                &approvals.iter().map(|a| a.plan.clone()).collect::<Vec<_>>(),
                output::DiffStyle {
                    differ: &super::diff::differ(),
                    stored: stored_original(args.show_stored_original),
                },
            )
            .map_err(Error::Input)?,
        )?;
        // A later step of a sequence asks nothing, so an object someone edited since the
        // confirmation is not overwritten unasked.
        if !ask && writer.mode() == Mode::Apply {
            let step = approvals.iter().map(|a| a.rollout.item.stage_label(a.stage)).collect::<Vec<_>>().join(", ");
            let names = approvals.iter().map(|a| a.rollout.item.name.as_str()).collect::<Vec<_>>().join(" ");
            let review =
                format!("kubectl rollout-lua plan {}", model::rollout_args(&session.cluster.namespace, &names));
            let mut edited = edited_since(session, &live, &catalog, &approvals)?;
            edited.extend(made_again(writer, &approvals));
            writer.overwrite_edits(&edited, &step, &review).await?;
        }
        // An object edited after it was routed (at no step's plan) is written over only when
        // the user says so, as `restore` asks: the diff above shows the edit going.
        if ask {
            // A later step whose script fails leaves the objects unplaced: the diff is all there
            // is to go by (the next step's preview says that it fails).
            let edited = edited_since(session, &live, &catalog, &approvals).unwrap_or_default();
            let names: Vec<String> = edited.iter().map(|(key, _)| key.to_string()).collect();
            if !names.is_empty() {
                let names = names.join(", ");
                let what = format!(
                    "{names}: edited during the release (it stands at no step's plan, nor at its original); approving writes over the edit, as the diff above shows"
                );
                match (writer.mode(), args.force) {
                    (Mode::Apply, false) => {
                        crate::stderr::line(&what);
                        writer.ask("Discard the edits?", |q| confirm(q, false)).await.map_err(|e| match e {
                            Error::Refused(_) => Error::Refused(format!(
                                "nothing was written: {what}: review it (`status`), and pass --force to approve anyway"
                            )),
                            other => other,
                        })?;
                    }
                    (Mode::Apply, true) => warn(&format!("warning: {what}: written all the same (--force)")),
                    _ => warn(&format!("warning: {what}")),
                }
            }
        }
        if ask && writer.mode() == Mode::Apply {
            let question = match (args.traffic_only, args.until_step, args.to_end) {
                (true, _, _) => "Apply these changes?".to_string(),
                (false, Some(last), _) => {
                    format!("Apply these changes, approve, and approve each later pause up to step {last}?")
                }
                (false, None, true) => "Apply these changes, approve, and approve every later pause to the end?".into(),
                (false, None, false) => "Apply these changes and approve?".into(),
            };
            if !args.yes {
                writer.ask(&question, |q| confirm(q, false)).await?;
            }
            // --timeout counts from the confirmation (with --yes: from where it is asked).
            writer.give_up_at(Deadline::after(args.timeout));
        }
        // Every Rollout's routing first, then the approvals: a failure before the first
        // approval rolls every object back.
        let mut lines = Vec::new();
        for approval in &approvals {
            lines.extend(write_routing(&live, writer, approval).await?);
        }
        let mut approved = BTreeMap::new();
        if !args.traffic_only {
            for approval in &approvals {
                lines.push(write_approval(&session.cluster, &live, writer, approval).await?);
                approved.insert(
                    approval.rollout.item.name.clone(),
                    Approved {
                        stage: approval.stage,
                        label: approval.rollout.item.stage_label(approval.stage),
                        generation: approval.rollout.item.generation,
                        release: approval.rollout.item.status.pod_template_hash.clone(),
                    },
                );
            }
        }
        if args.traffic_only {
            lines.push("gateway objects match the current step; not approved (--traffic-only)\n".into());
        }
        print_outcome(writer, &lines.concat())?;
        if writer.mode() != Mode::Apply {
            return Ok(None);
        }
        for early in approvals.iter().filter_map(|a| a.early.as_deref()) {
            warn(&format!("warning: {early}"));
        }
        for approval in &approvals {
            match preview_next(session, &live, &catalog, approval, stored_original(args.show_stored_original)) {
                Ok(preview) => print(&preview)?,
                Err(e) => warn(&format!(
                    "warning: could not preview the next step of Rollout {}: {e}",
                    approval.rollout.item.name
                )),
            }
        }
        Ok(Some(approved))
    }
}

/// The objects the approvals write that stand at no step of their Rollout's plan (placed as
/// `status` places them): someone else edited them. Each with its state as read.
fn edited_since(
    session: &Session,
    live: &Live,
    catalog: &ScriptCatalog,
    approvals: &[Approval],
) -> Result<Vec<(ObjectKey, Arc<Value>)>, Error> {
    let mut edited = Vec::new();
    for approval in approvals {
        let placed = session.plan_to_place(live, catalog, approval.rollout)?;
        let drifted: Vec<ObjectView> = status::positions(&placed)
            .into_iter()
            .filter(|view| matches!(view.position, Position::Drifted { .. }))
            .collect();
        let written = approval.plan.stages.iter().flat_map(|s| &s.objects).filter(|o| o.writes().next().is_some());
        for object in written {
            if drifted.iter().any(|view| view.shows(object)) {
                edited.push((object.key.clone(), Arc::clone(&object.current)));
            }
        }
    }
    Ok(edited)
}

/// The objects the approvals make that an earlier step of this run left in place: someone
/// deleted them since (a canary Ingress), each with its state now (null). (One a step of this
/// run deleted, a step without traffic, is made again as the controller would.)
fn made_again(writer: &Writer<'_>, approvals: &[Approval]) -> Vec<(ObjectKey, Arc<Value>)> {
    let objects = approvals.iter().flat_map(|a| a.plan.stages.iter().flat_map(|s| &s.objects));
    objects
        .filter(|o| matches!(o.writes().next(), Some(Change::Create { .. })) && writer.left_in_place(&o.key))
        .map(|o| (o.key.clone(), Arc::clone(&o.current)))
        .collect()
}

/// What the sequence waits for right after approving `approved` (Rollouts of `namespace`), to
/// `goal`, before it reads them again: for a timeout's message, as status -w words it.
fn just_approved(namespace: &str, approved: &BTreeMap<String, Approved>, goal: &str) -> String {
    let each: Vec<Awaited> = approved
        .iter()
        .map(|(name, a)| {
            let since = format!("approved at {}, not read since", a.label);
            Awaited { rollout: format!("{namespace}/{name}"), phrase: since.clone(), line: since }
        })
        .collect();
    waiting_for(goal, &each)
}

/// Takes the claim on every selected Rollout before anything is read for the guards and plans.
pub(super) async fn claim_rollouts(
    session: &Session,
    selection: &Selection,
    writer: &mut Writer<'_>,
    command: &str,
) -> Result<(), Error> {
    if writer.mode() != Mode::Apply {
        return Ok(());
    }
    let names: Vec<String> = match selection {
        Selection::Names(names) => names.iter().map(|n| live::rollout_name(n).to_string()).collect(),
        Selection::Selector(_) | Selection::All => {
            let found = live::read_rollouts(&session.cluster, selection)
                .await
                .map_err(|e| live::selected_unlisted(e, selection))?;
            found.found.iter().map(|r| r.item.name.clone()).collect()
        }
    };
    // Each claim names the whole command, as run: who is told of it learns what holds it.
    let whole = match selection {
        Selection::Names(arguments) => format!("{command} {}", arguments.join(" ")),
        Selection::Selector(selector) => format!("{command} -l {selector}"),
        Selection::All => format!("{command} --all"),
    };
    match claim_names(session, names, writer, |_| whole.clone()).await {
        // A claim refused (no Role for Leases, another run's Lease) on a name no Rollout has:
        // the name is what is wrong.
        Err(refused @ (Error::Refused(_) | Error::Api { .. })) if matches!(selection, Selection::Names(_)) => {
            let listed = live::list_each(&session.cluster, selection).await;
            match listed.ok().and_then(|listed| listed.missing().first().cloned()) {
                Some(name) => Err(live::not_found(&name, &session.cluster.namespace)),
                None => Err(refused),
            }
        }
        claimed => claimed,
    }
}

/// Refuses, before anything is written, a Rollout (namespace, name) this run would write for
/// without holding its claim. The Rollouts to claim are chosen from a read before the claims are
/// taken; the read under them may find one more (made, labelled, or routing a named object
/// since). A dry run claims nothing and writes nothing.
pub(super) fn refuse_unclaimed<'r>(
    writer: &Writer<'_>,
    rollouts: impl IntoIterator<Item = (&'r str, &'r str)>,
) -> Result<(), Error> {
    if writer.mode() != Mode::Apply {
        return Ok(());
    }
    unclaimed_refusal(rollouts.into_iter().filter(|(namespace, name)| !writer.holds_claim(namespace, name)))
}

/// The refusal naming `unclaimed` Rollouts, if there is any.
fn unclaimed_refusal<'r>(unclaimed: impl Iterator<Item = (&'r str, &'r str)>) -> Result<(), Error> {
    let mut names: Vec<String> = unclaimed.map(|(namespace, name)| format!("{namespace}/{name}")).collect();
    names.sort();
    names.dedup();
    let (what, they, them) = match names.as_slice() {
        [] => return Ok(()),
        [one] => (format!("Rollout {one} is"), "it was", "it"),
        many => (format!("Rollouts {} are", many.join(", ")), "they were", "them"),
    };
    Err(Error::Refused(format!(
        "nothing was written: {what} not claimed: {they} made or changed after this run chose the Rollouts to claim; run again to claim {them} too"
    )))
}

/// Claims Rollouts `names` of the session's namespace, each held by `command_of(name)` (what
/// `status` shows); nothing when there are none.
pub(super) async fn claim_names(
    session: &Session,
    mut names: Vec<String>,
    writer: &mut Writer<'_>,
    command_of: impl Fn(&str) -> String,
) -> Result<(), Error> {
    names.sort();
    names.dedup();
    if writer.mode() != Mode::Apply || names.is_empty() {
        return Ok(());
    }
    let namespace = session.cluster.namespace.clone();
    // A claim that may not be taken is refused as every missing permission is, with a Role;
    // the objects' own are asked under the claim, once they are read again (said only of a
    // refusal: a server that does not answer has refused nothing).
    let unclaimable = "(the permissions to write the objects are asked once the claim is taken; `--dry-run=server`, which takes none, asks them now)";
    write::preflight(&session.cluster, write::claim_permissions(&namespace, &names), |_| Some(unclaimable.into()))
        .await?;
    for name in names {
        writer.claim(&namespace, &name, &command_of(&name)).await?;
    }
    Ok(())
}

/// When all that is `missing` is among the `approving` permissions (`patch rollouts/status`):
/// `--traffic-only` writes the routing without them.
fn traffic_only_advice(missing: &[Permission], approving: &[Permission]) -> Option<String> {
    missing.iter().all(|p| approving.contains(p)).then(|| {
        "(only the approval is missing: `approve --traffic-only` writes the step's routing without it, and approves nothing; someone who may patch rollouts/status approves then)".into()
    })
}

/// Writes one Rollout's routing changes; returns the lines saying what was written.
async fn write_routing(live: &Live, writer: &mut Writer<'_>, approval: &Approval<'_>) -> Result<Vec<String>, Error> {
    let mut lines = Vec::new();
    for object in approval.plan.stages.iter().flat_map(|s| &s.objects) {
        for change in object.writes() {
            writer.apply(resource_of(live, &object.key)?, change).await?;
        }
        let done = match object.writes().next() {
            Some(Change::Create { .. }) => "created",
            Some(Change::Delete { .. }) => "deleted",
            _ => "updated",
        };
        lines.extend(writer.written_line(&object.key, done));
    }
    Ok(lines)
}

/// Approves one Rollout whose routing is written; returns the line saying so. Once the
/// approval stands, its routing is never rolled back: a Rollout approved with the routing of
/// the step before would send traffic the approved step did not ask for.
async fn write_approval(
    cluster: &Cluster,
    live: &Live,
    writer: &mut Writer<'_>,
    approval: &Approval<'_>,
) -> Result<String, Error> {
    let rollout = approval.rollout;
    let change = approval_change(rollout);
    let approved = writer.apply(&live.rollouts, &change).await;
    // `written and kept: WHY`, or `deleted and kept` for an object the step deletes (a canary
    // Ingress): what each object of the step, and the Rollout, is left at.
    let keep = |writer: &mut Writer<'_>, why: &str| {
        for object in approval.plan.stages.iter().flat_map(|s| &s.objects) {
            let done = match object.writes().last() {
                Some(Change::Delete { .. }) => "deleted",
                _ => "written",
            };
            writer.keep(&object.key, &format!("{done} and kept: {why}"));
        }
        writer.keep(change.key(), &format!("written and kept: {why}"));
    };
    let label = rollout.item.stage_label(approval.stage);
    match (approved, writer.may_land(change.key())) {
        (Ok(_), _) => {
            keep(writer, &format!("Rollout {} is approved with it ({label})", rollout.item.name));
            let unheard = writer.unheard_reply(change.key()).map(|reply| format!(" ({reply})")).unwrap_or_default();
            Ok(format!("rollout.rollouts.kruise.io/{} approved ({label}){unheard}\n", rollout.item.name))
        }
        (Err(error), Some(how)) => {
            // The server may still apply the approval after the read that showed it waiting:
            // rolled back, the routing would leave the Rollout approved with the step before's.
            // Kept, it is the current step's routing, what --traffic-only writes: harmless.
            let name = &rollout.item.name;
            keep(writer, &format!("the approval of Rollout {name} may still land, so its routing ({label}) stays"));
            let seen = match how {
                MayLand::ReadBackUnapplied => "was not applied when read back, but",
                MayLand::Unread => "could not be read back, and",
            };
            let args = model::rollout_args(&rollout.namespace, name);
            Err(Error::Input(format!(
                "{error}\nThe approval of Rollout {name} {seen} the API server may still apply it. `kubectl rollout-lua status {args}` shows whether it did; {}",
                approve_again(approval, &args)
            )))
        }
        (Err(error), None) => {
            // Roll the routing back only when the Rollout is verifiably not approved: still
            // waiting at the step, or gone. Approved (by this run or anyone), moved on, or
            // unreadable, its routing stays.
            let name = &rollout.item.name;
            let fresh = match cluster.get(&live.rollouts, &rollout.namespace, name).await {
                Ok(fresh) => fresh,
                Err(read) => {
                    keep(
                        writer,
                        &format!("whether Rollout {name} still waits at {label} is not known, so its routing stays"),
                    );
                    let args = model::rollout_args(&rollout.namespace, name);
                    return Err(error.with_report(&format!(
                        "Rollout {name} could not be read again after that ({read}): `kubectl rollout-lua status {args}` shows where it stands; {}, or, to undo this run's writes, `kubectl rollout-lua restore --from-backup FILE` puts back each object whose line below names its state before this run (FILE), and `kubectl delete` removes one this run made",
                        approve_again(approval, &args)
                    )));
                }
            };
            match unapproved(rollout, fresh.as_ref()) {
                Unapproved::Waiting => Err(error),
                Unapproved::Gone(what) => Err(error.with_report(&format!(
                    "Rollout {} {what} while this run approved it: no Rollout was approved, so the routing written for it is rolled back",
                    rollout.item.name
                ))),
                Unapproved::Unknown => {
                    keep(
                        writer,
                        &format!(
                            "Rollout {} is no longer paused at {label} (approved?), so its routing stays",
                            rollout.item.name
                        ),
                    );
                    Err(error)
                }
            }
        }
    }
}

/// `if the Rollout still waits at STEP, approve … approves it …`: how to finish an approval that
/// failed after its routing was written and kept. (`--expect-step` keeps that approve from
/// approving a later step, should the Rollout have moved on and paused again.)
fn approve_again(approval: &Approval<'_>, args: &str) -> String {
    let label = approval.rollout.item.stage_label(approval.stage);
    let expect = match approval.stage {
        Stage::Step(step) => format!(" --expect-step {step}"),
        _ => String::new(),
    };
    format!(
        "if the Rollout still waits at {label}, `kubectl rollout-lua approve {args}{expect}` approves it (its routing is already written)"
    )
}

/// What a fresh read shows of a Rollout whose approval failed.
#[derive(Debug, PartialEq)]
enum Unapproved {
    /// Still at the step it was read at, before its approval (StepPaused, or the step started
    /// over).
    Waiting,
    /// Deleted, or deleted and made again (another uid): this approval never lands, and no
    /// Rollout (and no controller) is left to ever restore the routing written for it.
    Gone(&'static str),
    /// Approved there (StepReady), moved on, or not to be told: the approval may have landed.
    Unknown,
}

/// What `fresh` (None: gone) shows of `rollout`, as it was read to be approved, after its
/// approval failed.
fn unapproved(rollout: &Located<Rollout>, fresh: Option<&Value>) -> Unapproved {
    let Some(fresh) = fresh else { return Unapproved::Gone("was deleted") };
    if fresh["metadata"]["uid"] != rollout.raw["metadata"]["uid"] {
        return Unapproved::Gone("was deleted and made again (another uid)");
    }
    let field = rollout.item.kind.status_field();
    let Some(step) = rollout.raw["status"][field]["currentStepIndex"].as_i64() else { return Unapproved::Unknown };
    match approval_progress(&fresh["status"], field, step) {
        ApprovalProgress::Waiting => Unapproved::Waiting,
        _ => Unapproved::Unknown,
    }
}

/// What the next stage will change, from the state just written.
fn preview_next(
    session: &Session,
    live: &Live,
    catalog: &ScriptCatalog,
    approval: &Approval<'_>,
    stored: output::StoredOriginal,
) -> Result<String, Error> {
    let rollout = &approval.rollout.item;
    let next = match approval.stage {
        Stage::Step(i) if i < rollout.steps.len() => Stage::Step(i + 1),
        Stage::Step(_) if rollout.kind == StrategyKind::BlueGreen => Stage::BlueGreenFinal,
        _ => {
            return Ok(format!(
                "\nRollout {}: this was the last step; when it completes, the controller restores the original routing.\n",
                rollout.name
            ));
        }
    };
    let mut objects = live.snapshot.objects.clone();
    for object in approval.plan.stages.iter().flat_map(|s| &s.objects) {
        match object.planned.is_null() {
            true => objects.insert_absent(object.key.clone()),
            false => objects.insert(&object.key.namespace, Arc::clone(&object.planned)),
        }
    }
    let mut plan = session.plan(live, catalog, &objects, approval.rollout, &[next])?;
    let when = plan.stages.first().and_then(when_written).map(|when| format!(" ({when})")).unwrap_or_default();
    plan.owner = format!("Next for {}: {}{when}", plan.owner, rollout.stage_label(next));
    plan.notes.clear();
    let style = output::DiffStyle { differ: &super::diff::differ(), stored };
    Ok(format!("\n{}", output::plans_text(&[plan], style).map_err(Error::Input)?))
}

/// When the controller writes what `next` (a stage's plan) does, routing by routing. A
/// Rollout's own routing: a step without traffic and matches is restored on every reconcile
/// from its start (docs/controller-semantics.md §3.5), any other routed once its pods are ready.
/// A TrafficRouting routes its one strategy for the whole release, whatever the step, and
/// restores only once no Rollout holds it (§2). None: nothing to say (the plan says why the
/// stage leaves the objects alone). Blue-green's final stage is routed while the release
/// finalises, and at a partition step the controller does not route the Rollout's own routing
/// is not written.
fn when_written(next: &StagePlan) -> Option<String> {
    let own: Vec<&Action> =
        next.objects.iter().filter(|o| o.owner.kind == OwnerKind::Rollout).map(|o| &o.action).collect();
    let mut parts = Vec::new();
    if next.unrouted {
        parts.push(
            "the controller writes none of the Rollout's own routing at this step: its objects stay as they are"
                .to_string(),
        );
    } else if next.stage == Some(Stage::BlueGreenFinal) && !own.is_empty() {
        // Without a routing of its own, the TrafficRouting's part below says it all.
        parts.push(
            "applied by the controller once every step is done, while the release finalises; the original routing comes back after it".to_string(),
        );
    } else if own.iter().any(|a| matches!(a, Action::Lua(_) | Action::Rules(_))) {
        parts.push("applied by the controller once its pods are ready".to_string());
    } else if own.iter().any(|a| matches!(a, Action::Restore | Action::RestoreRules(_) | Action::Delete)) {
        parts.push(
            "the controller restores the original as soon as the step starts, before its pods are updated".into(),
        );
    }
    let mut traffic_routings: Vec<&str> = next
        .objects
        .iter()
        // One that routes: one no Rollout holds is said so in the step's description.
        .filter(|o| o.owner.kind == OwnerKind::TrafficRouting && matches!(o.action, Action::Lua(_) | Action::Rules(_)))
        .map(|o| o.owner.name.as_str())
        .collect();
    traffic_routings.dedup();
    parts.extend(traffic_routings.into_iter().map(|name| {
        format!("TrafficRouting {name} keeps its routing for the whole release: its original comes back only once no Rollout holds it")
    }));
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Command;
    use crate::cli::testing::{command, status_at};
    use crate::lua::Limits;
    use crate::model::{ObjectIndex, TrafficRoutingCr};
    use crate::plan::Planner;

    /// `approve demo` with `flags`, as the command line gives it.
    fn approve_args(flags: &[&str]) -> ApproveArgs {
        match command(&[&["approve", "demo"], flags].concat()) {
            Command::Approve(args) => args,
            other => panic!("{other:?}"),
        }
    }

    /// Rollout shop/demo routing HTTPRoute `demo`: step 1 at 10%, step 2 without traffic or
    /// matches, step 3 at 50%; its status is `status`, `disabled` its spec.disabled.
    fn rollout(disabled: bool, status: Value) -> Located<Rollout> {
        let raw = json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "demo", "namespace": "shop", "resourceVersion": "7"},
            "spec": {"disabled": disabled,
                     "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "demo"},
                     "strategy": {"canary": {
                         "steps": [{"replicas": 1, "traffic": "10%"}, {"replicas": 2}, {"replicas": 3, "traffic": "50%"}],
                         "trafficRoutings": [{"service": "demo", "gateway": {"httpRouteName": "demo"}}]}}},
            "status": status});
        let item = Rollout::from_object(&raw).unwrap();
        Located { origin: crate::snapshot::Origin::Cluster("x".into()), namespace: "shop".into(), item, raw }
    }

    /// A canary status in phase `phase` at step `step` in `state`, with `extra` fields besides.
    fn status(phase: &str, step: usize, state: &str, extra: Value) -> Value {
        status_at("canary", phase, step, state, extra)
    }

    fn refusal(result: Result<Stage, Error>) -> String {
        match result {
            Err(Error::Refused(message)) => message,
            other => panic!("refused: {other:?}"),
        }
    }

    #[test]
    fn an_expected_step_past_its_approval_is_approved_already() {
        let expected = Targets::Selected(Some(2));
        let already = |step, state: &str| {
            approved_already(&rollout(false, status("Progressing", step, state, json!({}))), &expected, false)
        };
        assert_eq!(
            already(2, "StepReady").as_deref(),
            Some(
                "rollout.rollouts.kruise.io/demo approved already (step 2/3; it is at step 2/3 StepReady now): nothing to do\n"
            )
        );
        assert!(already(3, "StepUpgrade").is_some_and(|line| line.contains("it is at step 3/3 StepUpgrade now")));
        for (step, state) in [(2, "StepPaused"), (2, "StepTrafficRouting"), (1, "StepReady")] {
            assert_eq!(already(step, state), None, "{step} {state}");
        }
        // Not without --expect-step, nor in a sequence, nor outside a release.
        let past = rollout(false, status("Progressing", 3, "StepPaused", json!({})));
        assert_eq!(approved_already(&past, &Targets::Selected(None), false), None);
        assert_eq!(approved_already(&past, &expected, true), None);
        assert_eq!(approved_already(&rollout(false, json!({"phase": "Healthy"})), &expected, false), None);
    }

    #[test]
    fn a_later_pause_approved_by_someone_else_meanwhile_is_passed_over_not_refused() {
        // A follow trial: someone else approved step 2 between the follow seeing it paused
        // and the approval's read, and the sequence stopped with the first approval's refusal.
        let later = Targets::Only(BTreeMap::from([("demo".to_string(), 2)]));
        let expect = later.expectation(&rollout(false, status("Progressing", 2, "StepPaused", json!({})))).unwrap();
        for (step, state) in [(2, "StepReady"), (3, "StepUpgrade"), (3, "StepPaused")] {
            let approved = rollout(false, status("Progressing", step, state, json!({})));
            assert!(approved_meanwhile(&approved, &later, expect).is_some(), "step {step} {state}");
        }
        for (step, state) in [(2, "StepPaused"), (2, "StepMetricsAnalysis"), (1, "StepPaused")] {
            let not = rollout(false, status("Progressing", step, state, json!({})));
            assert_eq!(approved_meanwhile(&not, &later, expect), None, "step {step} {state}");
        }
        // The first approval's: refused as ever, by check_approvable.
        let ready = rollout(false, status("Progressing", 2, "StepReady", json!({})));
        let first = Targets::Selected(Some(2));
        assert_eq!(approved_meanwhile(&ready, &first, first.expectation(&ready).unwrap()), None);
        // Said where the Rollout is, or that its release is over.
        let moved_on = rollout(false, status("Progressing", 3, "StepUpgrade", json!({})));
        assert_eq!(
            approved_meanwhile(&moved_on, &later, expect).unwrap(),
            "Rollout shop/demo: step 2/3 was approved by someone else meanwhile (it is at step 3/3 StepUpgrade now); following on"
        );
    }

    #[test]
    fn approving_a_timed_pause_before_it_runs_out_is_warned_of() {
        let now = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_795_316_400); // 2026-11-22T03:00:00Z
        let paused = |since: Option<&str>| {
            let mut raw = rollout(false, status("Progressing", 2, "StepPaused", json!({}))).raw;
            raw["spec"]["strategy"]["canary"]["steps"][1]["pause"] = json!({"duration": 600});
            if let Some(since) = since {
                raw["status"]["canaryStatus"]["lastUpdateTime"] = json!(since);
            }
            Rollout::from_object(&raw).unwrap()
        };
        assert_eq!(
            timed_pause_approval(&paused(Some("2026-11-22T02:59:30Z")), now).unwrap(),
            "step 2's timed pause (10m00s) has 9m30s left: approving ends it now, where the controller would have moved on by itself once it ran out"
        );
        let unknown = timed_pause_approval(&paused(None), now).unwrap();
        assert!(unknown.starts_with("step 2's timed pause (10m00s): approving ends it now"), "{unknown}");
        assert_eq!(
            timed_pause_approval(&paused(Some("2026-11-22T02:40:00Z")), now),
            None,
            "ran out: nothing ends early"
        );
        let manual = rollout(false, status("Progressing", 2, "StepPaused", json!({}))).item;
        assert_eq!(timed_pause_approval(&manual, now), None, "a pause until approved");
    }

    #[test]
    fn a_release_ending_or_over_is_not_approved_and_says_why() {
        let progressing =
            |reason: &str| json!({"conditions": [{"type": "Progressing", "status": "True", "reason": reason}]});
        let restore_now =
            "; nothing to route or approve (`kubectl rollout-lua restore demo -n shop` does that restore now)";
        let cases = [
            (rollout(false, status("Progressing", 3, "Completed", json!({}))), format!("the release is finalising: the controller restores the original routing{restore_now}")),
            (rollout(false, status("Progressing", 2, "StepPaused", progressing("Cancelling"))), format!("the release is being rolled back (Cancelling): the controller restores the original routing{restore_now}")),
            (rollout(true, status("Progressing", 2, "StepPaused", json!({}))), format!("the Rollout is disabled: the controller restores the original routing of a release in progress and runs no step{restore_now}")),
            (rollout(false, status("Terminating", 2, "StepPaused", json!({}))), format!("the Rollout is being deleted: the controller restores the original routing{restore_now}")),
            // A Healthy Rollout keeps the last release's sub-status: not in a release.
            (rollout(false, status("Healthy", 3, "Completed", json!({}))), "no need to approve: not in canary or blue-green progress (the release is over: the controller restored the original routing when it ended)".into()),
        ];
        for (ending, why) in cases {
            for flags in [&[][..], &["--traffic-only"]] {
                let message = refusal(check_approvable(&ending, &approve_args(flags), None));
                assert_eq!(message, format!("rollouts.rollouts.kruise.io \"demo\": {why}"), "{flags:?}");
            }
        }
        // Neither a release nor its end, nor one starting again: nothing to route or approve.
        let not_progressing = |phase: &str| {
            format!(
                "rollouts.rollouts.kruise.io \"demo\" is not progressing (phase {phase}): the controller runs no step, so there is nothing to route or approve"
            )
        };
        let not_yet = [
            (status("Initial", 2, "StepPaused", json!({})), not_progressing("Initial")),
            (json!({"canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepPaused"}}), not_progressing("unknown")),
            (
                status("Progressing", 2, "StepPaused", progressing("Initializing")),
                "rollouts.rollouts.kruise.io \"demo\": the release is initializing (Progressing reason Initializing): the controller starts it from step 1, whatever step the status still names; nothing to route or approve until it has".into(),
            ),
        ];
        let mut blocked = status("Progressing", 2, "StepPaused", progressing("InRolling"));
        blocked["message"] =
            json!("new version releasing detected in the progress of blue-green release, please rollback first");
        let mut blue_green = rollout(false, blocked.clone());
        blue_green.item.kind = StrategyKind::BlueGreen;
        assert_eq!(
            refusal(check_approvable(&blue_green, &approve_args(&[]), None)),
            "rollouts.rollouts.kruise.io \"demo\": a new version of the workload came in the middle of the blue-green release (\"new version releasing detected in the progress of blue-green release, please rollback first\"): the controller runs no step until the workload is rolled back; nothing to route or approve"
        );
        for (status, refused) in not_yet {
            for flags in [&[][..], &["--traffic-only"]] {
                assert_eq!(
                    refusal(check_approvable(&rollout(false, status.clone()), &approve_args(flags), None)),
                    refused,
                    "{flags:?}"
                );
            }
        }
        let paused = rollout(false, status("Progressing", 2, "StepPaused", progressing("InRolling")));
        assert_eq!(check_approvable(&paused, &approve_args(&[]), None).unwrap(), Stage::Step(2));
        // A step past the spec's last (steps cut since the status was written) is said as such.
        let past = rollout(false, status("Progressing", 7, "StepPaused", progressing("InRolling")));
        assert_eq!(
            refusal(check_approvable(&past, &approve_args(&[]), None)),
            "rollouts.rollouts.kruise.io \"demo\": the status names step 7, past the spec's last, step 3 (the steps were changed since the status was written): which step the release is at is not known until the controller writes its status again"
        );
        // A patched nextStepIndex: the controller jumps there, whatever is approved or routed.
        let mut jumping = paused.clone();
        jumping.item.status.next_step_index = Some(1);
        for flags in [&[][..], &["--traffic-only"]] {
            assert_eq!(
                refusal(check_approvable(&jumping, &approve_args(flags), None)),
                "rollouts.rollouts.kruise.io \"demo\": the status's nextStepIndex is 1: the controller jumps to step 1/3 at its next reconcile, not on from step 2; nothing to route or approve until it has (`kubectl rollout-lua plan demo -n shop --next` shows that step)"
            );
        }
        jumping.item.status.next_step_index = Some(3);
        assert_eq!(check_approvable(&jumping, &approve_args(&[]), None).unwrap(), Stage::Step(2), "the step after");
    }

    #[test]
    fn traffic_only_is_advised_when_only_the_approval_is_missing() {
        let status =
            |name: &str| Permission::new("patch", "rollouts.kruise.io", "rollouts", Some("status"), "shop").on(name);
        let update = Permission::new("update", "networking.istio.io", "virtualservices", None, "shop").on("demo");
        let approving = [status("demo"), status("web")];
        let advice = traffic_only_advice(&[status("web")], &approving).expect("advised");
        assert!(advice.contains("`approve --traffic-only` writes the step's routing without it"), "{advice}");
        assert_eq!(traffic_only_advice(&approving, &approving), Some(advice));
        // With another permission missing, --traffic-only would be refused too.
        assert_eq!(traffic_only_advice(&[status("demo"), update.clone()], &approving), None);
        // With --traffic-only nothing is approved: nothing to advise.
        assert_eq!(traffic_only_advice(&[update], &[]), None);
    }

    /// The plan of `rollout`'s current step, from HTTPRoute `route`.
    fn current_plan(rollout: &Rollout, route: Value) -> RoutingPlan {
        let mut objects = ObjectIndex::default();
        objects.insert("shop", route);
        let catalog = ScriptCatalog::default();
        let stage = rollout.current_stage().unwrap();
        Planner::new(&objects, &catalog, Limits::default()).plan_rollout(rollout, "shop", None, &[stage]).unwrap()
    }

    #[test]
    fn a_later_step_whose_script_changed_since_the_confirmation_is_refused() {
        let raw = json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "demo", "namespace": "shop"},
            "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "demo"},
                     "strategy": {"canary": {"steps": [{"replicas": 1, "traffic": "10%"}],
                         "trafficRoutings": [{"service": "demo", "customNetworkRefs": [
                             {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "demo"}]}]}}},
            "status": status("Progressing", 1, "StepPaused", json!({}))});
        let rollout = Rollout::from_object(&raw).unwrap();
        let mut objects = ObjectIndex::default();
        objects.insert("shop", json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService",
            "metadata": {"name": "demo", "namespace": "shop"}, "spec": {"hosts": ["demo"], "http": [{"route": [{"destination": {"host": "demo"}}]}]}}));
        let catalog = ScriptCatalog::default();
        let stage = rollout.current_stage().unwrap();
        let plan =
            Planner::new(&objects, &catalog, Limits::default()).plan_rollout(&rollout, "shop", None, &[stage]).unwrap();
        let mut scripts = BTreeMap::new();
        same_scripts(&mut scripts, &[&plan], true).unwrap();
        assert_eq!(scripts.len(), 1, "the script confirmed: {scripts:?}");
        same_scripts(&mut scripts, &[&plan], false).expect("the same script at a later step");
        let mut changed = plan.clone();
        let Action::Lua(script) = &mut changed.stages[0].objects[0].action else { panic!("a script runs") };
        script.sha256 = "0123456789abcdef".repeat(4);
        let Err(Error::Refused(message)) = same_scripts(&mut scripts, &[&changed], false) else { panic!("refused") };
        assert!(message.starts_with("stopped: the script built-in lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua changed since the confirmation (sha256 b061f8ca16be then, 0123456789ab now)"), "{message}");
    }

    fn route() -> Value {
        json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "demo", "namespace": "shop", "resourceVersion": "5"},
            "spec": {"rules": [{"backendRefs": [{"kind": "Service", "name": "demo", "port": 80, "weight": 1}]}]}})
    }

    #[test]
    fn routing_before_the_steps_pods_are_ready_is_early_and_only_then() {
        let at = |step: usize, state: &str| rollout(false, status("Progressing", step, state, json!({}))).item;
        for state in ["BeforeStepUpgrade", "StepUpgrade"] {
            let rollout = at(3, state);
            let plan = current_plan(&rollout, route());
            assert_eq!(
                early_routing(&rollout, &plan).as_deref(),
                Some(format!("Rollout demo is in {state} of step 3/3: the controller routes a step only once its canary pods are ready (StepTrafficRouting), so this write routes it now (traffic 50% (canary 50 / stable 50)) to canary pods that may not be ready yet, through Service demo-canary, which the controller makes, or points at the step's pods, only then too").as_str())
            );
            // No canary Service is generated: the canary is the stable Service itself.
            let mut shared = rollout.clone();
            shared.disable_generate_canary_service = true;
            assert!(
                early_routing(&shared, &plan).is_some_and(|why| why.ends_with("that may not be ready yet")),
                "{state}"
            );
            // Already routed as the step asks: nothing is written, so nothing is early.
            let routed = Value::clone(&plan.stages[0].objects[0].planned);
            assert_eq!(early_routing(&rollout, &current_plan(&rollout, routed.clone())), None, "{state}");
            // A step without traffic and matches is restored from its start: writing it (here
            // the restore of step 3's routing) is not early.
            let unrouted = at(2, state);
            let plan = current_plan(&unrouted, routed);
            assert!(plan.changed());
            assert_eq!(early_routing(&unrouted, &plan), None, "{state}");
        }
        for state in ["StepTrafficRouting", "StepPaused", "StepReady"] {
            let rollout = at(3, state);
            assert_eq!(early_routing(&rollout, &current_plan(&rollout, route())), None, "{state}");
        }
    }

    #[test]
    fn two_routings_planning_one_object_are_refused_when_one_writes_it() {
        let at_1 = rollout(false, status("Progressing", 1, "StepPaused", json!({}))).item;
        let mut other = at_1.clone();
        other.name = "other".into();
        let refusal = |plans: &[(&str, &RoutingPlan)]| {
            let planned = plans
                .iter()
                .flat_map(|(name, plan)| plan.stages.iter().flat_map(|s| &s.objects).map(move |o| (*name, o)));
            match refuse_shared_writes(planned) {
                Ok(()) => None,
                Err(Error::Refused(message)) => Some(message),
                Err(other) => panic!("{other:?}"),
            }
        };
        let (demo_plan, other_plan) = (current_plan(&at_1, route()), current_plan(&other, route()));
        assert_eq!(refusal(&[("demo", &demo_plan)]), None);
        assert_eq!(
            refusal(&[("demo", &demo_plan), ("other", &other_plan)]).as_deref(),
            Some(
                "nothing was written: Rollouts demo and other both plan writes to HTTPRoute shop/demo; in one run the second would write over the first's routing: approve each in a run of its own (each then refuses while the other's release routes it, unless --force: two releases routing one object overwrite each other's routing)"
            )
        );
        // Both already as planned: nothing is written over.
        let routed = Value::clone(&demo_plan.stages[0].objects[0].planned);
        let (kept, kept_too) = (current_plan(&at_1, routed.clone()), current_plan(&other, routed.clone()));
        assert_eq!(refusal(&[("demo", &kept), ("other", &kept_too)]), None);

        // The Rollout's own routing and its TrafficRouting's route the HTTPRoute: refused, even
        // where one of them leaves it as it is.
        let cr = TrafficRoutingCr::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": "tr", "finalizers": ["progressing.rollouts.kruise.io/demo"]},
            "spec": {"strategy": {"matches": [{"headers": [{"name": "x", "value": "1"}]}]},
                     "objectRef": [{"service": "demo", "gateway": {"httpRouteName": "demo"}}]}
        }))
        .unwrap();
        let contested = "nothing was written: HTTPRoute shop/demo is routed both by Rollout shop/demo (its own trafficRoutings) and by TrafficRouting shop/tr (the TrafficRouting it names), which the controller reconciles independently: each would rewrite it to its own routing on every pass, and the step would never be done routing: route it through one of them only";
        for current in [route(), routed] {
            let mut objects = ObjectIndex::default();
            objects.insert("shop", current);
            let catalog = ScriptCatalog::default();
            let plan = Planner::new(&objects, &catalog, Limits::default())
                .plan_rollout(&at_1, "shop", Some(&cr), &[Stage::Step(1)])
                .unwrap();
            assert_eq!(refusal(&[("demo", &plan)]).as_deref(), Some(contested));
        }
    }

    #[test]
    fn the_next_stage_says_when_each_routing_writes_it() {
        let at = |step: usize| rollout(false, status("Progressing", step, "StepPaused", json!({}))).item;
        let routed = Value::clone(&current_plan(&at(1), route()).stages[0].objects[0].planned);
        let restores = "the controller restores the original as soon as the step starts, before its pods are updated";
        let keeps = "TrafficRouting tr keeps its routing for the whole release: its original comes back only once no Rollout holds it";
        let when = |rollout: &Rollout, cr: Option<&TrafficRoutingCr>, current: &Value| {
            let mut objects = ObjectIndex::default();
            objects.insert("shop", current.clone());
            let mut tr_route = route();
            tr_route["metadata"]["name"] = json!("tr");
            objects.insert("shop", tr_route);
            let catalog = ScriptCatalog::default();
            let stage = rollout.current_stage().unwrap();
            let plan = Planner::new(&objects, &catalog, Limits::default())
                .plan_rollout(rollout, "shop", cr, &[stage])
                .unwrap();
            when_written(&plan.stages[0])
        };
        assert_eq!(when(&at(3), None, &route()).as_deref(), Some("applied by the controller once its pods are ready"));
        assert_eq!(when(&at(2), None, &routed).as_deref(), Some(restores));
        // A TrafficRouting routes whatever the step: only the Rollout's own routing restores.
        let cr = TrafficRoutingCr::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": "tr", "finalizers": ["progressing.rollouts.kruise.io/demo"]},
            "spec": {"strategy": {"matches": [{"headers": [{"name": "x", "value": "1"}]}]},
                     "objectRef": [{"service": "demo", "gateway": {"httpRouteName": "tr"}}]}
        }))
        .unwrap();
        assert_eq!(when(&at(2), Some(&cr), &routed), Some(format!("{restores}; {keeps}")));
        let mut linked = at(2);
        linked.traffic_routing = None;
        assert_eq!(when(&linked, Some(&cr), &routed).as_deref(), Some(keeps));
        // A partition step that reaches the workload's replicas (100%, whatever their number):
        // the Rollout's own routing is not written there; a TrafficRouting's is all the same.
        let mut full = at(3);
        full.steps[2].replicas = Some(json!("100%"));
        let nothing =
            "the controller writes none of the Rollout's own routing at this step: its objects stay as they are";
        assert_eq!(when(&full, None, &routed).as_deref(), Some(nothing));
        assert_eq!(when(&full, Some(&cr), &routed), Some(format!("{nothing}; {keeps}")));
        full.traffic_routing = None;
        assert_eq!(when(&full, Some(&cr), &routed).as_deref(), Some(keeps));
        // Blue-green's final stage, and a partition step the controller does not route.
        let mut stage = current_plan(&at(3), route()).stages.remove(0);
        stage.stage = Some(Stage::BlueGreenFinal);
        assert!(
            when_written(&stage)
                .unwrap()
                .starts_with("applied by the controller once every step is done, while the release finalises")
        );
        // With no routing of its own, only its TrafficRouting's is said.
        let mut tr_only = stage.clone();
        tr_only.objects.iter_mut().for_each(|o| o.owner.kind = OwnerKind::TrafficRouting);
        tr_only.objects.iter_mut().for_each(|o| o.owner.name = "tr".into());
        assert_eq!(when_written(&tr_only).as_deref(), Some(keeps));
        stage.stage = Some(Stage::Step(3));
        stage.unrouted = true;
        assert_eq!(
            when_written(&stage).as_deref(),
            Some("the controller writes none of the Rollout's own routing at this step: its objects stay as they are")
        );
    }

    #[test]
    fn someone_elses_canary_ingress_is_written_only_with_force() {
        assert!(refuse_foreign_canaries([].iter(), false).is_ok());
        let why = ["Ingress shop/web-canary is not Rollout shop/demo's canary Ingress (it has no controller owner)"
            .to_string()];
        assert!(refuse_foreign_canaries(why.iter(), true).is_ok());
        let Err(Error::Refused(message)) = refuse_foreign_canaries(why.iter(), false) else { panic!("refused") };
        assert_eq!(
            message,
            "nothing was written: the step patches the annotations of an Ingress named as a canary Ingress that its Rollout did not make, as the controller would (which also deletes it when the release ends):\n  Ingress shop/web-canary is not Rollout shop/demo's canary Ingress (it has no controller owner)\nFind out whose it is: rename or delete it if it is in the way, or pass --force to write it anyway"
        );
    }

    #[test]
    fn rollouts_found_only_under_the_claim_are_refused() {
        assert!(unclaimed_refusal([].into_iter()).is_ok());
        let Err(Error::Refused(one)) = unclaimed_refusal([("shop", "demo2"), ("shop", "demo2")].into_iter()) else {
            panic!("refused")
        };
        assert_eq!(
            one,
            "nothing was written: Rollout shop/demo2 is not claimed: it was made or changed after this run chose the Rollouts to claim; run again to claim it too"
        );
        let Err(Error::Refused(two)) = unclaimed_refusal([("shop", "b"), ("shop", "a")].into_iter()) else {
            panic!("refused")
        };
        assert_eq!(
            two,
            "nothing was written: Rollouts shop/a, shop/b are not claimed: they were made or changed after this run chose the Rollouts to claim; run again to claim them too"
        );
    }

    #[test]
    fn a_failed_approval_is_rolled_back_only_where_the_rollout_is_verifiably_not_approved() {
        let mut read = rollout(false, status("Progressing", 2, "StepPaused", json!({})));
        read.raw["metadata"]["uid"] = json!("u-1");
        let fresh = |step: usize, state: &str, uid: &str| {
            let mut fresh = read.raw.clone();
            fresh["status"] = status("Progressing", step, state, json!({}));
            fresh["metadata"]["uid"] = json!(uid);
            fresh
        };
        assert_eq!(unapproved(&read, Some(&fresh(2, "StepPaused", "u-1"))), Unapproved::Waiting);
        assert_eq!(unapproved(&read, Some(&fresh(2, "StepUpgrade", "u-1"))), Unapproved::Waiting, "started over");
        assert_eq!(unapproved(&read, Some(&fresh(2, "StepReady", "u-1"))), Unapproved::Unknown, "approved");
        assert_eq!(unapproved(&read, Some(&fresh(3, "StepUpgrade", "u-1"))), Unapproved::Unknown, "moved on");
        assert_eq!(unapproved(&read, None), Unapproved::Gone("was deleted"));
        // Made again at the same step (a GitOps replace): a new Rollout, not approved by this run.
        assert_eq!(
            unapproved(&read, Some(&fresh(2, "StepPaused", "u-2"))),
            Unapproved::Gone("was deleted and made again (another uid)")
        );
        assert!(matches!(unapproved(&read, Some(&fresh(3, "StepReady", "u-2"))), Unapproved::Gone(_)));
    }

    #[test]
    fn the_approval_carries_the_step_it_approves() {
        let change = approval_change(&rollout(false, status("Progressing", 2, "StepPaused", json!({}))));
        let Some(crate::change::Request::MergePatch { subresource, body }) = change.request(None) else { panic!() };
        assert_eq!(subresource, Some("status"));
        assert_eq!(
            body,
            json!({"metadata": {"resourceVersion": "7"}, "status": {"canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepReady"}}})
        );
    }
}
