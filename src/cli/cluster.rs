//! Commands against the API server: `plan ROLLOUT…`, `approve`, `restore`.

use super::status::Follower;
use super::{
    ApproveArgs, DryRun, GlobalArgs, Outcome, PlanArgs, RestoreArgs, RolloutSelection, ScriptArgs, confirm, print,
    print_plans,
};
use crate::data::{self, Data};
use crate::error::Error;
use crate::lua::Limits;
use crate::model::{ObjectRef, Rollout, Stage, StrategyKind};
use crate::output::{self, BOLD, YELLOW, paint};
use crate::plan::{ObjectIndex, ObjectPlan, Planner, RoutingPlan};
use crate::scripts::ScriptCatalog;
use crate::snapshot::Located;
use crate::source::cluster::{Cluster, Permission, Resource};
use crate::source::files;
use crate::source::live::{self, Live, Selection};
use crate::status::{Progress, RolloutView};
use crate::write::{self, Backups, WriteFailure, Written};
use crate::yaml;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// How often a run re-reads and re-plans after a conflict before giving up.
const MAX_ATTEMPTS: usize = 4;

pub(super) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread().enable_all().build()?)
}

/// A connection, the scripts the user gave, and the limits: what every cluster command needs.
pub(super) struct Session {
    pub(super) cluster: Cluster,
    catalog: ScriptCatalog,
    controller_namespace: String,
    limits: Limits,
}

impl Session {
    pub(super) async fn open(global: &GlobalArgs, scripts: &ScriptArgs) -> Result<Session, Error> {
        let catalog = ScriptCatalog {
            overrides: files::read_script_flags(&scripts.scripts)?,
            lua_dir: scripts.lua_dir.as_deref().map(files::read_lua_dir).transpose()?.unwrap_or_default(),
            configmap: None,
        };
        let cluster = Cluster::connect(&global.connection()).await?;
        Ok(Session {
            cluster,
            catalog,
            controller_namespace: scripts.controller_namespace.clone(),
            limits: global.limits(),
        })
    }

    /// Reads the Rollouts and their world; the catalog gains the ConfigMap when it was read.
    pub(super) fn limits(&self) -> Limits {
        self.limits
    }

    /// The scripts for `refs`, with the ConfigMap read only when one of them needs it.
    pub(super) async fn catalog_for(&self, refs: impl Iterator<Item = &ObjectRef>) -> Result<ScriptCatalog, Error> {
        let mut catalog = self.catalog.clone();
        if refs.into_iter().any(|r| catalog.needs_configmap(r)) {
            catalog.configmap = live::read_configmap(&self.cluster, &self.controller_namespace).await?;
        }
        Ok(catalog)
    }

    pub(super) async fn load(&self, selection: &Selection) -> Result<(Live, ScriptCatalog), Error> {
        let live = live::load(&self.cluster, selection, &self.catalog, &self.controller_namespace).await?;
        let catalog = ScriptCatalog { configmap: live.snapshot.configmap.clone(), ..self.catalog.clone() };
        Ok((live, catalog))
    }

    /// Plans `stages` of one Rollout against `objects`.
    pub(super) fn plan(
        &self,
        live: &Live,
        catalog: &ScriptCatalog,
        objects: &ObjectIndex,
        rollout: &Located<Rollout>,
        stages: &[Stage],
    ) -> Result<RoutingPlan, Error> {
        let cr = live.snapshot.traffic_routing_of(rollout)?;
        let planner = Planner::new(objects, catalog, self.limits);
        let mut plan = planner.plan_rollout(&rollout.item, &rollout.namespace, cr.map(|c| &c.item), stages)?;
        plan.notes.push(status_line(&rollout.item));
        Ok(plan)
    }
}

pub(super) fn selection(args: &RolloutSelection) -> Result<Selection, Error> {
    match &args.selector {
        Some(selector) => Ok(Selection::Selector(selector.clone())),
        None if args.rollouts.is_empty() => Err(Error::Input(
            "name the Rollouts (NAME or rollout/NAME), or select them with -l; or plan files with -f".into(),
        )),
        None => Ok(Selection::Names(args.rollouts.clone())),
    }
}

/// `phase Progressing, step 2/4 StepPaused: <the controller's message>`.
fn status_line(rollout: &Rollout) -> String {
    let status = &rollout.status;
    let mut line = format!("phase {}", status.phase.as_deref().unwrap_or("unknown"));
    if let Some(stage) = rollout.current_stage() {
        line.push_str(&format!(", {}", rollout.stage_label(stage)));
    }
    if let Some(state) = &status.current_step_state {
        line.push_str(&format!(" {state}"));
    }
    if rollout.paused {
        line.push_str(", paused (spec.strategy.paused)");
    }
    if let Some(message) = &status.message {
        line.push_str(&format!(": {message}"));
    }
    line
}

pub fn plan(global: &GlobalArgs, args: &PlanArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let session = Session::open(global, &args.scripts).await?;
        let (live, catalog) = session.load(&selection(&args.selection)?).await?;
        let planned = crate::parallel::map(&live.snapshot.rollouts, |rollout| {
            let (stages, note) = chosen_stages(&rollout.item, args)?;
            let mut plan = session.plan(&live, &catalog, &live.snapshot.objects, rollout, &stages)?;
            plan.notes.extend(note);
            Ok::<_, Error>(plan)
        });
        let mut plans = planned.into_iter().collect::<Result<Vec<_>, Error>>()?;
        if args.dry_run == Some(DryRun::Server) {
            server_dry_run_report(&session.cluster, &live, &mut plans).await?;
        }
        print_plans(&plans, args.output)?;
        if let Some(rejected) = plans.iter().flat_map(|p| &p.notes).find(|n| n.starts_with(REJECTED)) {
            return Err(Error::Input(format!(
                "the API server rejected a planned object ({})",
                rejected.trim_start_matches(REJECTED)
            ))
            .into());
        }
        let changed = plans.iter().any(RoutingPlan::changed);
        Ok(if changed { Outcome::Changes { detailed_exitcode: args.detailed_exitcode } } else { Outcome::Done })
    })
}

const REJECTED: &str = "server dry-run REJECTED ";

/// Sends every changed planned object with dryRun=All and notes each verdict on its plan.
async fn server_dry_run_report(cluster: &Cluster, live: &Live, plans: &mut [RoutingPlan]) -> Result<(), Error> {
    for plan in plans.iter_mut() {
        let mut verdicts = Vec::new();
        for (stage, object) in
            plan.stages.iter().flat_map(|s| s.objects.iter().map(move |o| (&s.label, o))).filter(|(_, o)| o.changed())
        {
            let resource = resource_of(live, &object.reference)?;
            let what = format!("{} {}/{} ({stage})", object.reference.kind, object.namespace, object.reference.name);
            verdicts.push(match write::server_dry_run(cluster, resource, &object.current, &object.planned).await {
                Ok(()) => format!("server dry-run accepted {what}"),
                Err(message) => format!("{REJECTED}{what}: {message}"),
            });
        }
        plan.notes.extend(verdicts);
    }
    Ok(())
}

fn resource_of<'a>(live: &'a Live, reference: &ObjectRef) -> Result<&'a Resource, Error> {
    live.resource_of(reference).ok_or_else(|| Error::Input(format!("no API resource known for {reference}")))
}

/// The stages `plan` shows, and a note when the choice needs explaining.
fn chosen_stages(rollout: &Rollout, args: &PlanArgs) -> Result<(Vec<Stage>, Option<String>), Error> {
    let count = rollout.steps.len();
    if args.all_steps {
        return Ok((rollout.stages(), None));
    }
    if let Some(n) = args.step {
        if !(1..=count).contains(&n) {
            return Err(Error::Input(format!("--step {n}: Rollout {} has {count} steps", rollout.name)));
        }
        return Ok((vec![Stage::Step(n)], None));
    }
    let current = rollout.current_stage();
    if args.next {
        return match current {
            Some(Stage::Step(i)) if i < count => Ok((vec![Stage::Step(i + 1)], None)),
            Some(Stage::Step(_)) if rollout.kind == StrategyKind::BlueGreen => Ok((vec![Stage::BlueGreenFinal], None)),
            Some(_) => Ok((Vec::new(), Some("no next step: the current step is the last; when it completes the controller restores the original routing".into()))),
            None => Ok((vec![Stage::Step(1)], Some("not in a release: showing what step 1 would do".into()))),
        };
    }
    match current {
        Some(stage) => Ok((vec![stage], None)),
        None => Ok((vec![Stage::Step(1)], Some("not in a release: showing what step 1 would do".into()))),
    }
}

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
        for verb in ["get", "update"] {
            permissions.push(Permission {
                verb: verb.into(),
                group: resource.group.clone(),
                resource: resource.plural.clone(),
                subresource: None,
                namespace: object.namespace.clone(),
                name: None,
            });
        }
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
                        permissions.push(Permission {
                            verb: "patch".into(),
                            group: live.rollouts.group.clone(),
                            resource: live.rollouts.plural.clone(),
                            subresource: Some("status".into()),
                            namespace: approval.rollout.namespace.clone(),
                            name: None,
                        });
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
                eprintln!(
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
                eprintln!(
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
        eprintln!("{}", paint(YELLOW, "a guard refused after some objects were written; they are rolled back"));
    }
}

/// Rolls back what this run wrote and adds the report to the error.
async fn with_rollback(cluster: &Cluster, written: &[Written], error: Error) -> Error {
    if written.is_empty() {
        return error;
    }
    let report = write::roll_back(cluster, written).await;
    let message = format!("{error}\n{}", report.iter().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n"));
    match error {
        Error::Refused(_) => Error::Refused(message),
        _ => Error::Input(message),
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
                eprintln!("{note}");
            }
            let targets: Vec<Value> = restorations.iter().map(|r| r.restored.clone()).collect();
            match &confirmed {
                None => {
                    let permissions = restorations
                        .iter()
                        .flat_map(|r| ["get", "update"].map(|verb| Permission { verb: verb.into(), group: r.resource.group.clone(), resource: r.resource.plural.clone(), subresource: None, namespace: r.live["metadata"]["namespace"].as_str().unwrap_or_default().into(), name: None }))
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
                    eprintln!("{}", paint(YELLOW, &format!("conflict: {message}; reading again ({attempt}/{MAX_ATTEMPTS})")));
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
    write::preflight(
        &session.cluster,
        ["get", "update"]
            .map(|verb| Permission {
                verb: verb.into(),
                group: resource.group.clone(),
                resource: resource.plural.clone(),
                subresource: None,
                namespace: namespace.clone(),
                name: None,
            })
            .to_vec(),
    )
    .await?;
    print(
        &output::object_diff(&live, &restored, &format!("{what} (live)"), &format!("{what} (from {source})"))
            .map_err(Error::Input)?,
    )?;
    if data::same_routing(&live, &restored) {
        print(&format!("{what} already matches the backup\n"))?;
        return Ok(Outcome::Done);
    }
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
