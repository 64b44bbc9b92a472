//! `approve`: make the gateway objects match the current step, then approve it; with
//! `--until-step`/`--to-end`, follow the Rollout and approve each later pause.

use super::cluster::{MAX_ATTEMPTS, Session, resource_of, runtime, selection, with_rollback};
use super::status::Follower;
use super::{ApproveArgs, DryRun, GlobalArgs, Outcome, confirm, print};
use crate::error::Error;
use crate::model::{Rollout, Stage, StrategyKind};
use crate::output::{self, YELLOW, paint};
use crate::plan::{ObjectPlan, RoutingPlan};
use crate::scripts::ScriptCatalog;
use crate::snapshot::Located;
use crate::source::cluster::{Cluster, Permission};
use crate::source::live::{Live, Selection};
use crate::status::{Progress, RolloutView};
use crate::write::{self, Backups, WriteFailure, Written};
use serde_json::json;
use std::collections::BTreeMap;

/// One Rollout to approve: its current stage's plan, checked by every guard.
struct Approval<'a> {
    rollout: &'a Located<Rollout>,
    stage: Stage,
    plan: RoutingPlan,
}

/// The guards of one approval, before anything is written.
fn check_approvable(
    rollout: &Located<Rollout>,
    args: &ApproveArgs,
    expect_step: Option<usize>,
) -> Result<Stage, Error> {
    let item = &rollout.item;
    let name = format!("rollouts.rollouts.kruise.io \"{}\"", item.name);
    let kind = match item.kind {
        StrategyKind::Canary => "canary",
        StrategyKind::BlueGreen => "blue-green",
    };
    if !item.status.has_sub_status {
        return Err(Error::Refused(format!("{name}: no need to approve: not in canary or blue-green progress")));
    }
    let stage =
        item.current_stage().ok_or_else(|| Error::Refused(format!("{name}: the status names no current step")))?;
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
            "{name} does not allow to approve, because current {kind} state is not 'StepPaused' (it is {state})"
        )));
    }
    if let (Some(expected), Stage::Step(current)) = (expect_step, stage)
        && expected != current
    {
        return Err(Error::Refused(format!(
            "{name} is at step {current}/{}, not at step {expected} (--expect-step)",
            item.steps.len()
        )));
    }
    Ok(stage)
}

/// The planned state of every object, for noticing that a re-plan after a conflict differs from
/// what was confirmed.
fn targets(plans: &[&RoutingPlan]) -> BTreeMap<String, String> {
    plans
        .iter()
        .flat_map(|p| &p.stages)
        .flat_map(|s| &s.objects)
        .map(|o| {
            (format!("{}/{}/{}", o.reference.kind, o.namespace, o.reference.name), output::routing_view(&o.planned))
        })
        .collect()
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

pub fn approve(global: &GlobalArgs, args: &ApproveArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let session = Session::open(global, &args.scripts).await?;
        let selection = selection(&args.selection)?;
        let sequence = args.until_step.is_some() || args.to_end;
        let mut follower = sequence.then(|| Follower::new(args.timeout));
        let Some(mut approved) = approve_step(&session, &selection, args, args.expect_step, true).await? else {
            return Ok(Outcome::Done);
        };
        let Some(follower) = follower.as_mut() else { return Ok(Outcome::Done) };
        loop {
            if let Some(last) = args.until_step
                && approved.values().all(|(stage, _)| *stage >= Stage::Step(last))
            {
                print(&format!("approved every pause up to step {last}\n"))?;
                return Ok(Outcome::Done);
            }
            let views = follower.next(&session, &selection).await?;
            for view in &views {
                let (stage, generation) = approved.get(&view.name).cloned().unwrap_or((Stage::Step(0), None));
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
                follower.finish();
                print("the release completed\n")?;
                return Ok(Outcome::Done);
            }
            let paused_later = |v: &RolloutView| {
                v.progress == Progress::WaitingForApproval && v.stage > approved.get(&v.name).map(|a| a.0)
            };
            if views.iter().all(paused_later) {
                follower.detach();
                let expected = views.first().and_then(|v| match v.stage {
                    Some(Stage::Step(i)) if views.len() == 1 => Some(i),
                    _ => None,
                });
                match approve_step(&session, &selection, args, expected, false).await? {
                    Some(next) => approved = next,
                    None => return Ok(Outcome::Done),
                }
            }
        }
    })
}

/// Approves the current step of every selected Rollout (one approve, every guard); returns the
/// stage and generation each was approved at, or None when nothing was written (a dry run).
/// `ask` asks for confirmation (a sequence asks once, for all its steps).
async fn approve_step(
    session: &Session,
    selection: &Selection,
    args: &ApproveArgs,
    expect_step: Option<usize>,
    ask: bool,
) -> anyhow::Result<Option<BTreeMap<String, (Stage, Option<i64>)>>> {
    let backups = Backups::new(&session.cluster.context);
    let mut written: Vec<Written> = Vec::new();
    let mut confirmed: Option<BTreeMap<String, String>> = None;
    for attempt in 1..=MAX_ATTEMPTS {
        let (live, catalog) = session.load(selection).await?;
        // Every guard passes for every Rollout before anything is written.
        let approvals = live
            .snapshot
            .rollouts
            .iter()
            .map(|rollout| {
                let stage = check_approvable(rollout, args, expect_step)?;
                let plan = session.plan(&live, &catalog, &live.snapshot.objects, rollout, &[stage])?;
                Ok(Approval { rollout, stage, plan })
            })
            .collect::<Result<Vec<_>, Error>>()
            .inspect_err(|_| report_rollback_needed(&written))?;
        let plans: Vec<&RoutingPlan> = approvals.iter().map(|a| &a.plan).collect();
        let planned = targets(&plans);
        match &confirmed {
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
                        return Ok(None);
                    }
                    DryRun::Server => {
                        approve_server_dry_run(&session.cluster, &live, &approvals, args.traffic_only).await?;
                        return Ok(None);
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
            Some(previous) if *previous != planned => {
                anstream::eprintln!(
                    "{}",
                    paint(YELLOW, "The plan changed since it was confirmed (something was edited concurrently):")
                );
                print(
                    &output::plans_text(&approvals.iter().map(|a| a.plan.clone()).collect::<Vec<_>>())
                        .map_err(Error::Input)?,
                )?;
                let asked = if args.yes || !ask {
                    Err(Error::Refused("the plan changed after it was confirmed, and --yes does not cover a plan nobody has seen; run again to review it".into()))
                } else {
                    confirm("Apply the new plan?", false)
                };
                if let Err(refusal) = asked {
                    return Err(with_rollback(&session.cluster, &written, refusal).await.into());
                }
            }
            Some(_) => {}
        }
        confirmed = Some(planned);
        match apply_approvals(&session.cluster, &live, &approvals, &backups, &mut written, args.traffic_only).await {
            Ok(lines) => {
                print(&lines.join(""))?;
                print(&preview_next(session, &live, &catalog, &approvals)?)?;
                let generation = |a: &Approval| a.rollout.raw["metadata"]["generation"].as_i64();
                return Ok(Some(
                    approvals.iter().map(|a| (a.rollout.item.name.clone(), (a.stage, generation(a)))).collect(),
                ));
            }
            Err(WriteFailure::Conflict(message)) if attempt < MAX_ATTEMPTS => {
                anstream::eprintln!(
                    "{}",
                    paint(
                        YELLOW,
                        &format!("conflict: {message}; reading again and re-planning ({attempt}/{MAX_ATTEMPTS})")
                    )
                );
            }
            Err(WriteFailure::Conflict(message) | WriteFailure::Failed(message)) => {
                return Err(with_rollback(&session.cluster, &written, Error::Input(message)).await.into());
            }
        }
    }
    unreachable!("the last attempt returns")
}

fn report_rollback_needed(written: &[Written]) {
    if !written.is_empty() {
        anstream::eprintln!(
            "{}",
            paint(YELLOW, "a guard refused after some objects were written; they are rolled back")
        );
    }
}

/// Writes every changed object, then approves each Rollout; returns what was done.
async fn apply_approvals(
    cluster: &Cluster,
    live: &Live,
    approvals: &[Approval<'_>],
    backups: &Backups,
    written: &mut Vec<Written>,
    traffic_only: bool,
) -> Result<Vec<String>, WriteFailure> {
    let mut lines = Vec::new();
    for approval in approvals {
        for object in approval.plan.stages.iter().flat_map(|s| &s.objects).filter(|o| o.changed()) {
            let resource = resource_of(live, &object.reference).map_err(|e| WriteFailure::Failed(e.to_string()))?;
            let backup =
                write::write_planned(cluster, resource, &object.current, &object.planned, backups, written).await?;
            lines.push(format!("{} updated (backup {})\n", object_name(object), backup.display()));
        }
    }
    if traffic_only {
        lines.push("gateway objects match the current step; not approved (--traffic-only)\n".into());
        return Ok(lines);
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
            .map_err(|e| match &e {
                kube::Error::Api(s) if s.code == 409 => WriteFailure::Conflict(format!(
                    "approving Rollout {}: it changed since it was read",
                    rollout.item.name
                )),
                _ => WriteFailure::Failed(format!(
                    "approving Rollout {}: {}",
                    rollout.item.name,
                    crate::source::cluster::describe_api_error(&e)
                )),
            })?;
        lines.push(format!(
            "rollout.rollouts.kruise.io/{} approved ({})\n",
            rollout.item.name,
            rollout.item.stage_label(approval.stage)
        ));
    }
    Ok(lines)
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
                Ok(()) => print(&format!("server dry-run accepted {}\n", object_name(object)))?,
                Err(message) => rejected.push(format!("{}: {message}", object_name(object))),
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

fn object_name(object: &ObjectPlan) -> String {
    format!("{} {}/{}", object.reference.kind, object.namespace, object.reference.name)
}

/// What the next stage will change once its pods are ready, from the state just written.
fn preview_next(
    session: &Session,
    live: &Live,
    catalog: &ScriptCatalog,
    approvals: &[Approval<'_>],
) -> Result<String, Error> {
    let mut out = String::new();
    for approval in approvals {
        let rollout = &approval.rollout.item;
        let next = match approval.stage {
            Stage::Step(i) if i < rollout.steps.len() => Stage::Step(i + 1),
            Stage::Step(_) if rollout.kind == StrategyKind::BlueGreen => Stage::BlueGreenFinal,
            _ => {
                out.push_str(&format!("\nRollout {}: this was the last step; when it completes, the controller restores the original routing.\n", rollout.name));
                continue;
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
        out.push('\n');
        out.push_str(&output::plans_text(&[plan]).map_err(Error::Input)?);
    }
    Ok(out)
}
