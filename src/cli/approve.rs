//! `approve`: make the gateway objects match the current step, then approve it; with
//! `--until-step`/`--to-end`, follow the Rollout and approve each later pause.

use super::cluster::{MAX_ATTEMPTS, Session, resource_of, runtime, selection, with_rollback};
use super::status::Follower;
use super::{ApproveArgs, DryRun, GlobalArgs, Outcome, confirm, print, warn};
use crate::error::Error;
use crate::model::{Rollout, Stage, StrategyKind};
use crate::output::{self, YELLOW, paint};
use crate::plan::{ObjectPlan, RoutingPlan};
use crate::scripts::ScriptCatalog;
use crate::snapshot::Located;
use crate::source::cluster::{Cluster, Permission};
use crate::source::live::{Live, Selection};
use crate::status::{Progress, RolloutView};
use crate::write::{self, Backups, ObjectKey, WriteFailure, Written};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

/// One Rollout to approve: its current stage's plan, checked by every guard.
struct Approval<'a> {
    rollout: &'a Located<Rollout>,
    stage: Stage,
    plan: RoutingPlan,
}

/// A Rollout this run approved: where, its generation then, and the stage's label.
#[derive(Clone, Debug)]
struct Approved {
    stage: Stage,
    generation: Option<i64>,
    label: String,
    /// Its gateway objects: routed as its approved step wants, they stay when a later failure
    /// rolls the rest back.
    objects: BTreeSet<ObjectKey>,
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

/// Whether the run follows the Rollouts after the first approval.
fn follows(args: &ApproveArgs) -> bool {
    args.until_step.is_some() || args.to_end
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
    let stage =
        item.current_stage().ok_or_else(|| Error::Refused(format!("{name}: the status names no current step")))?;
    if let (Some(last), Stage::Step(current)) = (args.until_step, stage)
        && current > last
    {
        return Err(Error::Refused(format!(
            "{name} is already at step {current}/{}, past step {last}: there is no pause up to step {last} left to approve (--until-step)",
            item.steps.len()
        )));
    }
    let state = item.status.current_step_state.as_deref().unwrap_or("unknown");
    if args.traffic_only {
        if item.status.phase.as_deref() != Some("Progressing") {
            return Err(Error::Refused(format!(
                "{name} is not progressing (phase {}): there is no step to route",
                item.status.phase.as_deref().unwrap_or("unknown")
            )));
        }
    } else if state != "StepPaused" {
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

/// The planned state of every object, for noticing that a re-plan after a conflict differs from
/// what was confirmed.
fn planned_objects(plan: &RoutingPlan) -> BTreeMap<ObjectKey, String> {
    plan.stages.iter().flat_map(|s| &s.objects).map(|o| (key_of(o), output::routing_view(&o.planned))).collect()
}

fn key_of(object: &ObjectPlan) -> ObjectKey {
    ObjectKey::new(object.reference.group(), &object.reference.kind, &object.namespace, &object.reference.name)
}

/// get and update on every object a plan writes.
fn write_permissions(live: &Live, plans: &[&RoutingPlan]) -> Result<Vec<Permission>, Error> {
    let mut permissions = Vec::new();
    for object in plans.iter().flat_map(|p| &p.stages).flat_map(|s| &s.objects) {
        let resource = resource_of(live, &object.reference)?;
        permissions.extend(Permission::replace(resource, &object.namespace));
    }
    Ok(permissions)
}

/// One `approve` run: what every approval of it needs.
struct Run<'a> {
    session: &'a Session,
    selection: &'a Selection,
    args: &'a ApproveArgs,
    /// Made by the first approval once it is confirmed: its Ctrl-C handler would otherwise
    /// swallow a Ctrl-C at the confirmation prompt.
    follower: Option<Follower>,
}

pub fn approve(global: &GlobalArgs, args: &ApproveArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let session = Session::open(global, &args.scripts).await?;
        let selection = selection(&args.selection)?;
        let mut run = Run { session: &session, selection: &selection, args, follower: None };
        let first = Targets::Selected(args.expect_step);
        let Some(mut approved) = run.approve_step(&first, true).await? else {
            return Ok(Outcome::Done);
        };
        if !follows(args) {
            return Ok(Outcome::Done);
        }
        loop {
            if let Some(last) = args.until_step
                && approved.values().all(|a| a.stage >= Stage::Step(last))
            {
                print(&format!("approved every pause up to step {last}\n"))?;
                return Ok(Outcome::Done);
            }
            let following = run.follower.get_or_insert_with(|| Follower::new(args.timeout));
            let views = following.next(&session, &selection).await?;
            for view in &views {
                let (stage, generation) =
                    approved.get(&view.name).map_or((Stage::Step(0), None), |a| (a.stage, a.generation));
                if view.generation != generation {
                    return Err(Error::Input(format!(
                        "Rollout {} was changed by someone else (generation {:?} -> {:?}); stopped",
                        view.name, generation, view.generation
                    ))
                    .into());
                }
                if let Progress::Failed { reason } = &view.progress {
                    return Err(Error::Input(format!("Rollout {}: {reason}; stopped", view.name)).into());
                }
                if view.progress == Progress::WaitingForApproval && view.stage.is_some_and(|s| s < stage) {
                    return Err(Error::Input(format!(
                        "Rollout {} went back to {}; someone else is driving it; stopped",
                        view.name,
                        view.step.as_deref().unwrap_or("an earlier step")
                    ))
                    .into());
                }
            }
            if views.iter().all(|v| v.progress.is_final()) {
                following.finish();
                print("the release completed\n")?;
                return Ok(Outcome::Done);
            }
            // Past step N (its pause may have been a timed one): nothing more to approve.
            let past = |v: &RolloutView| args.until_step.is_some_and(|last| v.stage > Some(Stage::Step(last)));
            if let Some(last) = args.until_step
                && views.iter().all(|v| past(v) || v.progress.is_final())
            {
                following.finish();
                print(&format!("past step {last}: approved every pause up to step {last}\n"))?;
                return Ok(Outcome::Done);
            }
            let due = |v: &RolloutView| {
                v.progress == Progress::WaitingForApproval
                    && v.stage > approved.get(&v.name).map(|a| a.stage)
                    && !past(v)
            };
            if views.iter().all(|v| due(v) || past(v) || v.progress.is_final()) {
                following.detach();
                let only = views
                    .iter()
                    .filter(|v| due(v))
                    .filter_map(|v| match v.stage {
                        Some(Stage::Step(i)) => Some((v.name.clone(), i)),
                        _ => None,
                    })
                    .collect();
                match run.approve_step(&Targets::Only(only), false).await? {
                    Some(next) => approved.extend(next),
                    None => return Ok(Outcome::Done),
                }
            }
        }
    })
}

/// What one approval has done so far, over its attempts.
struct StepState {
    backups: Backups,
    written: Vec<Written>,
    /// Rollouts approved (their status patched): left out of the guards, plans and patches of
    /// later attempts.
    approved: BTreeMap<String, Approved>,
    /// What was written and approved, and what each next stage will change.
    lines: Vec<String>,
    previews: Vec<String>,
    warnings: Vec<String>,
    /// The planned state of every object of each Rollout, as confirmed.
    confirmed: Option<BTreeMap<String, BTreeMap<ObjectKey, String>>>,
}

/// What one attempt came to.
enum Attempt {
    /// A dry run: nothing was written.
    DryRun,
    /// Every write and approval went through.
    Applied,
    /// Something changed since it was read: read again and re-plan.
    Conflict(String),
}

/// Rolls back the objects an approval wrote, and says which approvals stay (a status patch
/// cannot be undone). Before anything was done, the error is returned as it is.
async fn undo(cluster: &Cluster, step: &StepState, error: anyhow::Error) -> anyhow::Error {
    if step.written.is_empty() && step.approved.is_empty() {
        return error;
    }
    let error = error.downcast::<Error>().unwrap_or_else(|other| Error::Input(format!("{other:#}")));
    // An approved Rollout's objects match its approved step: rolling them back would leave it
    // approved with the routing of the step before.
    let kept = |w: &&Written| step.approved.values().any(|a| a.objects.contains(&w.key()));
    let undone: Vec<Written> = step.written.iter().filter(|w| !kept(w)).cloned().collect();
    let error = with_rollback(cluster, &undone, error).await;
    if step.approved.is_empty() {
        return error.into();
    }
    let stays: String = step
        .approved
        .iter()
        .map(|(name, a)| format!("\n    Rollout {name} stays approved ({}), its gateway objects as routed", a.label))
        .collect();
    let message = format!("{error}\n  the status patches already applied cannot be undone:{stays}");
    error.reworded(message).into()
}

impl Run<'_> {
    /// Approves the current step of `targets` (one approve, every guard); returns the Rollouts
    /// approved, or None when nothing was written (a dry run). `ask` asks for confirmation (a
    /// sequence asks once, for all its steps). In a sequence, the follower is made (and Ctrl-C
    /// listened for) before the first write, and a Ctrl-C stops the run before any later write.
    async fn approve_step(
        &mut self,
        targets: &Targets,
        ask: bool,
    ) -> anyhow::Result<Option<BTreeMap<String, Approved>>> {
        let session = self.session;
        let mut step = StepState {
            backups: Backups::new(&session.cluster.context),
            written: Vec::new(),
            approved: BTreeMap::new(),
            lines: Vec::new(),
            previews: Vec::new(),
            warnings: Vec::new(),
            confirmed: None,
        };
        let mut attempt = 1;
        loop {
            let outcome = match self.attempt_step(targets, ask, &mut step).await {
                Ok(outcome) => outcome,
                Err(error) => return Err(undo(&session.cluster, &step, error).await),
            };
            match outcome {
                Attempt::DryRun => return Ok(None),
                Attempt::Applied => {
                    print(&step.lines.concat())?;
                    print(&step.previews.concat())?;
                    for warning in &step.warnings {
                        warn(warning);
                    }
                    return Ok(Some(step.approved));
                }
                Attempt::Conflict(message) if attempt < MAX_ATTEMPTS => {
                    warn(&format!("conflict: {message}; reading again and re-planning ({attempt}/{MAX_ATTEMPTS})"));
                    attempt += 1;
                }
                Attempt::Conflict(message) => {
                    return Err(undo(&session.cluster, &step, Error::Input(message).into()).await);
                }
            }
        }
    }

    /// One attempt: read, guard and plan every target not approved yet, confirm (the first time),
    /// then write and approve.
    async fn attempt_step(&mut self, targets: &Targets, ask: bool, step: &mut StepState) -> anyhow::Result<Attempt> {
        let (session, args) = (self.session, self.args);
        let (live, catalog) = session.load(self.selection).await?;
        // Every guard passes for every Rollout before anything is written.
        let approvals = live
            .snapshot
            .rollouts
            .iter()
            .filter(|rollout| !step.approved.contains_key(&rollout.item.name))
            .filter_map(|rollout| targets.expectation(rollout).map(|expect| (rollout, expect)))
            .map(|(rollout, expect)| {
                let stage = check_approvable(rollout, args, expect)?;
                let plan = session.plan(&live, &catalog, &live.snapshot.objects, rollout, &[stage])?;
                if let Some(why) = plan.unwritable() {
                    return Err(Error::Refused(format!("nothing was written: {why}")));
                }
                Ok(Approval { rollout, stage, plan })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        let plans: Vec<&RoutingPlan> = approvals.iter().map(|a| &a.plan).collect();
        let planned: BTreeMap<String, BTreeMap<ObjectKey, String>> =
            approvals.iter().map(|a| (a.rollout.item.name.clone(), planned_objects(&a.plan))).collect();
        match &step.confirmed {
            None => {
                let mut permissions = write_permissions(&live, &plans)?;
                if !args.traffic_only {
                    for approval in &approvals {
                        permissions.push(Permission::on(
                            "patch",
                            &live.rollouts,
                            Some("status"),
                            &approval.rollout.namespace,
                        ));
                    }
                }
                if args.dry_run != DryRun::Client {
                    write::preflight(&session.cluster, permissions).await?;
                }
                print(
                    &output::plans_text(&approvals.iter().map(|a| a.plan.clone()).collect::<Vec<_>>())
                        .map_err(Error::Input)?,
                )?;
                match args.dry_run {
                    DryRun::Client => {
                        print(&format!("{}\n", paint(YELLOW, "dry run (client): nothing was written")))?;
                        return Ok(Attempt::DryRun);
                    }
                    DryRun::Server => {
                        approve_server_dry_run(&session.cluster, &live, &approvals, args.traffic_only).await?;
                        return Ok(Attempt::DryRun);
                    }
                    DryRun::None => {}
                }
                if ask {
                    let question = match (args.traffic_only, args.until_step, args.to_end) {
                        (true, _, _) => "Apply these changes?".to_string(),
                        (false, Some(last), _) => {
                            format!("Apply these changes, approve, and approve each later pause up to step {last}?")
                        }
                        (false, None, true) => {
                            "Apply these changes, approve, and approve every later pause to the end?".into()
                        }
                        (false, None, false) => "Apply these changes and approve?".into(),
                    };
                    confirm(&question, args.yes)?;
                }
            }
            Some(previous) => {
                // The Rollouts approved since are no longer planned.
                let unchanged =
                    previous.iter().filter(|(name, _)| !step.approved.contains_key(*name)).eq(planned.iter());
                if !unchanged {
                    warn("The plan changed since it was confirmed (something was edited concurrently):");
                    print(
                        &output::plans_text(&approvals.iter().map(|a| a.plan.clone()).collect::<Vec<_>>())
                            .map_err(Error::Input)?,
                    )?;
                    if args.yes || !ask {
                        return Err(Error::Refused("the plan changed after it was confirmed, and --yes does not cover a plan nobody has seen; run again to review it".into()).into());
                    }
                    // A follower listens for Ctrl-C: then it must end the prompt itself.
                    match self.follower.as_mut() {
                        Some(follower) => follower.confirm("Apply the new plan?").await?,
                        None => confirm("Apply the new plan?", false)?,
                    }
                }
            }
        }
        step.confirmed = Some(planned);
        if follows(args) {
            let follower = self.follower.get_or_insert_with(|| Follower::new(args.timeout));
            if follower.interrupted().await {
                return Err(Follower::interruption().into());
            }
        }
        let applied = apply_approvals(&session.cluster, &live, &approvals, step, args.traffic_only).await;
        let outcome = match applied {
            Ok(()) => Attempt::Applied,
            Err(WriteFailure::Conflict(message)) => Attempt::Conflict(message),
            Err(WriteFailure::Failed(message)) => return Err(Error::Input(message).into()),
        };
        // What comes next, for each Rollout done with (every one when all went through).
        for approval in &approvals {
            if matches!(outcome, Attempt::Applied) || step.approved.contains_key(&approval.rollout.item.name) {
                match preview_next(session, &live, &catalog, approval) {
                    Ok(preview) => step.previews.push(preview),
                    Err(e) => step.warnings.push(format!(
                        "warning: could not preview the next step of Rollout {}: {e}",
                        approval.rollout.item.name
                    )),
                }
            }
        }
        Ok(outcome)
    }
}

/// Writes every changed object, then approves each Rollout; records what was done in `step`.
async fn apply_approvals(
    cluster: &Cluster,
    live: &Live,
    approvals: &[Approval<'_>],
    step: &mut StepState,
    traffic_only: bool,
) -> Result<(), WriteFailure> {
    for approval in approvals {
        for object in approval.plan.stages.iter().flat_map(|s| &s.objects).filter(|o| o.changed()) {
            let resource = resource_of(live, &object.reference).map_err(|e| WriteFailure::Failed(e.to_string()))?;
            let backup = write::write_planned(
                cluster,
                resource,
                &object.current,
                &object.planned,
                &step.backups,
                &mut step.written,
            )
            .await?;
            step.lines.push(format!("{} updated (backup {})\n", object.describe(), backup.display()));
        }
    }
    if traffic_only {
        step.lines.push("gateway objects match the current step; not approved (--traffic-only)\n".into());
        return Ok(());
    }
    for approval in approvals {
        let rollout = approval.rollout;
        let patch = json!({
            "metadata": {"resourceVersion": rollout.raw["metadata"]["resourceVersion"]},
            "status": {rollout.item.kind.status_field(): {"currentStepState": "StepReady"}},
        });
        cluster
            .merge_patch_status(&live.rollouts, &rollout.namespace, &rollout.item.name, &patch, false)
            .await
            .map_err(|e| write::failure(&format!("approving Rollout {}", rollout.item.name), e))?;
        let label = rollout.item.stage_label(approval.stage);
        step.lines.push(format!("rollout.rollouts.kruise.io/{} approved ({label})\n", rollout.item.name));
        let objects = approval.plan.stages.iter().flat_map(|s| &s.objects).map(key_of).collect();
        step.approved.insert(
            rollout.item.name.clone(),
            Approved {
                stage: approval.stage,
                generation: rollout.raw["metadata"]["generation"].as_i64(),
                label,
                objects,
            },
        );
    }
    Ok(())
}

async fn approve_server_dry_run(
    cluster: &Cluster,
    live: &Live,
    approvals: &[Approval<'_>],
    traffic_only: bool,
) -> anyhow::Result<Outcome> {
    let mut rejected = Vec::new();
    for approval in approvals {
        for object in approval.plan.stages.iter().flat_map(|s| &s.objects).filter(|o| o.changed()) {
            let resource = resource_of(live, &object.reference)?;
            match write::server_dry_run(cluster, resource, &object.current, &object.planned).await {
                Ok(()) => print(&format!("server dry-run accepted {}\n", object.describe()))?,
                Err(message) => rejected.push(format!("{}: {message}", object.describe())),
            }
        }
        if !traffic_only {
            let rollout = approval.rollout;
            let patch = json!({"metadata": {"resourceVersion": rollout.raw["metadata"]["resourceVersion"]}, "status": {rollout.item.kind.status_field(): {"currentStepState": "StepReady"}}});
            match cluster.merge_patch_status(&live.rollouts, &rollout.namespace, &rollout.item.name, &patch, true).await
            {
                Ok(_) => print(&format!("server dry-run accepted the approval of Rollout {}\n", rollout.item.name))?,
                Err(e) => rejected.push(format!(
                    "approving Rollout {}: {}",
                    rollout.item.name,
                    crate::source::cluster::describe_api_error(&e)
                )),
            }
        }
    }
    if rejected.is_empty() {
        print("dry run (server): nothing was stored\n")?;
        Ok(Outcome::Done)
    } else {
        Err(Error::Input(format!("the API server rejected:\n  {}", rejected.join("\n  "))).into())
    }
}

/// What the next stage will change once its pods are ready, from the state just written.
fn preview_next(
    session: &Session,
    live: &Live,
    catalog: &ScriptCatalog,
    approval: &Approval<'_>,
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
        objects.insert(&object.namespace, object.planned.clone());
    }
    let mut plan = session.plan(live, catalog, &objects, approval.rollout, &[next])?;
    plan.owner = format!(
        "Next for {}: {} (applied by the controller once its pods are ready)",
        plan.owner,
        rollout.stage_label(next)
    );
    plan.notes.clear();
    Ok(format!("\n{}", output::plans_text(&[plan]).map_err(Error::Input)?))
}
