//! Where a Rollout stands: its progress (phase, step, state, pause left) and where each gateway
//! object is (its original, at step k, or drifted), for `status` and for following a release.

use crate::model::{
    self, Ending, ObjectRef, OwnerKind, Provider, Rollout, Routing, Stage, StrategyKind, TrafficRoutingCr, WeightSplit,
};
use crate::output::{self, BOLD, GREEN, RED, StoredOriginal, YELLOW, paint};
use crate::plan::{RoutingPlan, describe_stage, describe_traffic_routing};
use crate::providers::{Action, ObjectPlan, custom};
use serde::Serialize;
use std::fmt::Write;
use std::time::{Duration, SystemTime};

/// How `status` says that `spec.strategy.paused` is set, as `plan`'s header does.
const PAUSED: &str = "paused (spec.strategy.paused)";

/// What a release is doing, as far as a follower cares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum Progress {
    /// Not releasing (nothing to follow).
    NotInRelease,
    Progressing,
    /// Paused until someone approves the step.
    WaitingForApproval,
    /// A timed pause of `pause_seconds`, with the seconds left when known: below 0 once the
    /// pause is over and the controller has not moved on (0 in JSON, the time left).
    Paused {
        pause_seconds: u64,
        #[serde(serialize_with = "no_less_than_zero")]
        seconds_left: Option<i64>,
    },
    /// The controller has not acted on the Rollout's latest spec yet: whatever the status says
    /// is of the spec before (`Rollout::spec_not_observed`).
    SpecNotObserved,
    /// Every step is done; the controller is restoring the routing.
    Finalising,
    Completed,
    Failed {
        reason: String,
    },
}

impl Progress {
    pub fn of(rollout: &Rollout, now: SystemTime) -> Progress {
        let status = &rollout.status;
        // A spec that disables the Rollout ends the release whether or not the controller has
        // acted on it yet (as a delete does: `spec_not_observed`).
        if rollout.spec_not_observed().is_some() && !rollout.disabled {
            return Progress::SpecNotObserved;
        }
        match Ending::of(rollout) {
            Some(Ending::Finalising) => Progress::Finalising,
            Some(Ending::Over) => {
                let succeeded = status.condition("Succeeded").map(|c| c.status.as_str());
                let reason = status.condition("Progressing").map(|c| c.reason.as_str());
                // A cancelled release ends with reason Completed too, and Succeeded False.
                if succeeded == Some("False") {
                    Progress::Failed {
                        reason: "the release did not succeed (Succeeded is False: cancelled or rolled back)".into(),
                    }
                } else if succeeded == Some("True") || reason == Some("Completed") {
                    Progress::Completed
                } else {
                    Progress::NotInRelease
                }
            }
            Some(ending) => Progress::Failed { reason: ending.describe().into() },
            None if rollout.blue_green_blocked() => Progress::Failed { reason: model::BLUE_GREEN_BLOCKED.into() },
            None if status.phase.as_deref() == Some("Progressing") => match status.current_step_state.as_deref() {
                Some("StepPaused") => match rollout.current_stage() {
                    // The controller finishes this step without a pause at its next reconcile
                    // (§3.5), jumps to another (a patched nextStepIndex) or starts again from
                    // step 1 (Initializing): nobody's approval is awaited.
                    Some(Stage::Step(i)) if rollout.completes_without_pause(i) => Progress::Progressing,
                    Some(_) if rollout.pending_jump().is_some() || rollout.initializing() => Progress::Progressing,
                    Some(Stage::Step(i)) if let Some(pause) = rollout.steps[i - 1].pause_seconds => {
                        let since = status.last_update_time.as_deref().and_then(crate::time::parse_rfc3339);
                        // Under spec.strategy.paused the controller runs no step: the pause ends
                        // only after a resume, whatever its time says.
                        let since = since.filter(|_| !rollout.paused);
                        let seconds_left =
                            since.map(|t| t.saturating_add(pause).saturating_sub(crate::time::now_seconds(now)));
                        Progress::Paused { pause_seconds: pause.max(0) as u64, seconds_left }
                    }
                    _ => Progress::WaitingForApproval,
                },
                _ => Progress::Progressing,
            },
            None => Progress::NotInRelease,
        }
    }

    /// Whether a follower stops here.
    pub fn is_final(&self) -> bool {
        matches!(self, Progress::NotInRelease | Progress::Completed | Progress::Failed { .. })
    }

    pub fn describe(&self) -> String {
        match self {
            Progress::NotInRelease => "not releasing".into(),
            Progress::Progressing => "progressing".into(),
            Progress::WaitingForApproval => "waiting for approval".into(),
            Progress::Paused { seconds_left: Some(left), .. } => pause_left(*left),
            Progress::Paused { pause_seconds, seconds_left: None } => {
                format!("a timed pause of {}", crate::time::human(Duration::from_secs(*pause_seconds)))
            }
            Progress::SpecNotObserved => "waiting for the controller to act on the latest spec".into(),
            Progress::Finalising => "all steps done, finalising".into(),
            Progress::Completed => "completed".into(),
            Progress::Failed { reason } => format!("failed: {reason}"),
        }
    }
}

/// How long after a timed pause ends a Rollout still in it is not yet taken for stuck: the
/// controller moves it on at its next reconcile, and the status is read a moment later.
const PAUSE_GRACE_SECONDS: i64 = 10;

/// When a timed pause with `seconds_left` ends; one over for longer than the grace that the
/// Rollout is still in says how long ago it ended: a sign of a controller that is stuck, or not
/// running.
pub fn pause_left(seconds_left: i64) -> String {
    let human = crate::time::human(Duration::from_secs(seconds_left.unsigned_abs()));
    match seconds_left {
        1.. => format!("resumes in {human}"),
        left if left > -PAUSE_GRACE_SECONDS => "pause ending".into(),
        _ => format!("pause ended {human} ago (the controller should have moved on)"),
    }
}

fn no_less_than_zero<S: serde::Serializer>(seconds: &Option<i64>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_some(&seconds.map(|s| s.max(0)))
}

/// Where a gateway object stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Position {
    /// As before any release: no stored original.
    Original,
    /// Not there, as before any release: a canary Ingress the controller has not made (or has
    /// deleted).
    Absent,
    /// Routing to the canary already (`canary`: `the canary Service NAME`, or `the canary
    /// subset of Service NAME`) without a stored original: its annotation removed mid-release,
    /// or routed by hand. A note says what the controller makes of it.
    CanaryWithoutOriginal { canary: String },
    /// Equal to the plan of these stages (numbers in JSON, or `"final"`).
    AtStep { steps: Vec<Stage> },
    /// Routed (an original is stored, or a canary Ingress exists) but equal to no step's plan:
    /// someone edited it. `nearest` is the stage whose plan is nearest to it (the most lines
    /// alike): outside a release, the one it was most likely left at before it was edited, which
    /// `restore` shows the edits against.
    Drifted {
        #[serde(skip_serializing_if = "Option::is_none")]
        nearest: Option<Stage>,
    },
    /// Equal to the plan of these stages by one of the two routings that write it (a Rollout's
    /// own and its TrafficRouting's) but not by the other, which the controller rewrites it to
    /// in turn: at no step for good.
    Contested { steps: Vec<Stage> },
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectView {
    /// Of the ref that names it: which resource following watches for it.
    #[serde(skip)]
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub position: Position,
    /// The script and its short hash.
    pub script: Option<String>,
    /// What else is known of it (the plan warns of each): a canary Ingress that is not the
    /// Rollout's, or whose spec is not the one the stable Ingress makes now; one that still
    /// routes as a step although no release is in progress.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Whether it shows a release's routing as read (a stored original, a canary backendRef, a
    /// canary Ingress that exists): what `restore` puts back.
    #[serde(skip)]
    pub routed: bool,
    /// Whether it is still routed (as a step, or drifted since) although its Rollout has no
    /// release in progress (a note says so).
    #[serde(skip)]
    pub left_routed: bool,
    /// Whether it is at the current step, when the controller has routed that step and the step
    /// routes it (`routed_step`); None otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_current_step: Option<bool>,
}

impl ObjectView {
    /// Whether `object`'s plan is of the object this view shows.
    pub fn shows(&self, object: &ObjectPlan) -> bool {
        object.reference.kind == self.kind
            && object.reference.name == self.name
            && object.key.namespace == self.namespace
    }

    /// Whether it is at its original, absent, or at other steps than the current one, which the
    /// controller has routed (a note says so). A drifted or contested object says so itself.
    pub fn off_current_step(&self) -> bool {
        self.at_current_step == Some(false)
            && matches!(self.position, Position::Original | Position::Absent | Position::AtStep { .. })
    }
}

/// A claim on a Rollout (an `approve` or `restore` holding it, or one left to expire), as
/// `status` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimView {
    /// `user@host (pid N)`.
    pub holder: String,
    /// The command holding it (`approve demo`).
    pub command: Option<String>,
    /// When it was taken and last renewed (the API server's clock, RFC 3339).
    pub since: Option<String>,
    pub renewed: Option<String>,
    /// When it expires unless renewed (RFC 3339), and whether it has, by the API server's clock.
    pub expires: Option<String>,
    pub expired: bool,
}

impl ClaimView {
    /// `alice@laptop (pid 42) running `approve demo`, since …`.
    pub fn holder_text(&self) -> String {
        let mut text = self.holder.clone();
        if let Some(command) = &self.command {
            text.push_str(&format!(" running `{command}`"));
        }
        // In one form with the expiry (a Lease's times are MicroTimes).
        if let Some(since) = &self.since {
            text.push_str(&format!(", since {}", crate::time::to_seconds(since)));
        }
        text
    }

    /// The holder, and until when the claim holds.
    pub fn text(&self) -> String {
        let until = match self.expired {
            true => "expired: the next approve or restore takes it over".to_string(),
            false => format!("until {} unless renewed", self.expires.as_deref().unwrap_or("soon")),
        };
        format!("{} ({until})", self.holder_text())
    }
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutView {
    pub name: String,
    pub namespace: String,
    /// `metadata.uid` (empty when the Rollout does not parse): following tells a Rollout made
    /// again under the same name from the one it followed.
    #[serde(skip)]
    pub uid: String,
    pub phase: String,
    pub strategy: String,
    /// `metadata.generation`: a change means someone edited the spec.
    pub generation: Option<i64>,
    /// The version being released (the sub-status's `podTemplateHash`): a change means a new
    /// release.
    #[serde(skip)]
    pub release: Option<String>,
    /// The current step: a number (1-based, as the controller's status), or `"final"`.
    #[serde(rename = "step")]
    pub stage: Option<Stage>,
    /// How many steps the Rollout has.
    pub step_count: usize,
    /// `step 2/4`, as the text shows it.
    #[serde(rename = "stepLabel")]
    pub step: Option<String>,
    pub step_does: Option<String>,
    pub state: Option<String>,
    pub progress: Progress,
    /// The step a patched `nextStepIndex` makes the controller jump to at its next reconcile.
    pub jumps_to: Option<usize>,
    /// `spec.strategy.paused`: the controller leaves the Rollout as it is, an approval included,
    /// until it is resumed (docs/controller-semantics.md §1.6, §7).
    pub paused: bool,
    /// Whether the release is ending (finalising, rolled back, disabled, deleted), which a pause
    /// does not hold: the controller's finalising sequences read no pause (§3.6).
    #[serde(skip)]
    pub ending: bool,
    pub message: Option<String>,
    pub canary_replicas: Option<i64>,
    pub canary_ready_replicas: Option<i64>,
    /// The old version's pods: the whole workload when the canary runs in an extra workload,
    /// else the workload's pods that are not canary (partition, blue-green).
    pub stable_replicas: Option<i64>,
    pub stable_ready_replicas: Option<i64>,
    /// The workload's replicas and ready replicas, when it could be read.
    pub workload: Option<WorkloadView>,
    /// The gateway objects, or why they could not be placed.
    #[serde(flatten, serialize_with = "objects_or_error")]
    pub objects: Result<Vec<ObjectView>, String>,
    /// When `objects` could not be placed, the objects its routings name (its own and its
    /// TrafficRouting's), in its namespace, at the versions they name: following watches them,
    /// so that one made or fixed is seen when it changes. Empty otherwise.
    #[serde(skip)]
    pub routes_through: Vec<ObjectRef>,
    /// What `plan` warns of for it (a stable Service that does not exist, a workload not read),
    /// which may explain where its objects stand.
    pub warnings: Vec<String>,
    /// The claim on the Rollout, when `status` read one (null: none, or Leases not readable).
    pub claim: Option<ClaimView>,
}

/// The objects the routings of `rollout` (its own, and its TrafficRouting `cr`'s) name, once
/// each.
fn routes_through(rollout: &Rollout, namespace: &str, cr: Option<&TrafficRoutingCr>) -> Vec<ObjectRef> {
    let own = Routing::of_rollout(rollout, namespace);
    let routings = own.into_iter().chain(cr.map(|cr| Routing::of_traffic_routing(cr, namespace)));
    let mut refs: Vec<ObjectRef> = Vec::new();
    for reference in routings.flat_map(|routing| routing.providers).flat_map(|provider| provider.refs()) {
        if !refs.contains(&reference) {
            refs.push(reference);
        }
    }
    refs
}

/// What `stage` does when it could not be planned, as the plan would say it without the
/// workload's replica count: the Rollout's own routing (unless a TrafficRouting alone routes it)
/// and its TrafficRouting's (`cr`, None when it was not loaded: then only its name is known).
fn unplanned_does(rollout: &Rollout, stage: Stage, cr: Option<&TrafficRoutingCr>) -> String {
    let by_cr = match (cr, &rollout.traffic_routing_cr) {
        // Without a plan, what the objects make of its weights is not known.
        (Some(cr), _) => {
            Some(describe_traffic_routing(cr, &cr.routing_for(rollout.release_started()), &WeightSplit::Split))
        }
        (None, Some(name)) => Some(format!("TrafficRouting {name}: routing not known")),
        (None, None) => None,
    };
    // A Rollout with neither is described by its steps' own strategy.
    let own = (rollout.traffic_routing.is_some() || by_cr.is_none()).then(|| rollout.routing_at(stage, None));
    describe_stage(rollout, stage, own.as_ref().map(|own| (own, &WeightSplit::Split)), by_cr).0
}

/// `objects: [...]`, or `objectsError: "…"` when they could not be placed.
fn objects_or_error<S: serde::Serializer>(
    objects: &Result<Vec<ObjectView>, String>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = serializer.serialize_map(Some(1))?;
    match objects {
        Ok(objects) => map.serialize_entry("objects", objects)?,
        Err(why) => map.serialize_entry("objectsError", why)?,
    }
    map.end()
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadView {
    pub kind: String,
    pub name: String,
    pub replicas: Option<i64>,
    pub ready_replicas: Option<i64>,
}

impl RolloutView {
    /// `every_stage` is the plan of every stage (it places the objects); `cr` the TrafficRouting
    /// the Rollout names, if any.
    pub fn new(
        rollout: &Rollout,
        namespace: &str,
        cr: Option<&TrafficRoutingCr>,
        every_stage: Result<&RoutingPlan, String>,
        workload: Option<WorkloadView>,
        now: SystemTime,
    ) -> RolloutView {
        let routes_through = match every_stage {
            Ok(_) => Vec::new(),
            Err(_) => routes_through(rollout, namespace, cr),
        };
        let status = &rollout.status;
        let style = match (rollout.kind, rollout.enable_extra_workload_for_canary) {
            (StrategyKind::BlueGreen, _) => "blue-green",
            (StrategyKind::Canary, true) => "canary (extra workload)",
            (StrategyKind::Canary, false) => "canary (partition)",
        };
        // The extra canary workload's pods are not in the workload; otherwise its canary pods are.
        // Outside a release there is no split: the workload's line says it all. The controller
        // keeps the sub-status (and its canary count) after a release, with state Completed.
        let extra_workload = rollout.kind == StrategyKind::Canary && rollout.enable_extra_workload_for_canary;
        let ending = Ending::of(rollout);
        let in_release =
            status.phase.as_deref() == Some("Progressing") && ending.is_none() && status.canary_replicas.is_some();
        let stable = |workload: Option<i64>, canary: Option<i64>| {
            let stable = workload.map(|all| if extra_workload { all } else { (all - canary.unwrap_or(0)).max(0) });
            stable.filter(|_| in_release)
        };
        let stage = rollout.current_stage();
        // The plan's description says what the controller does at the stage (a step it does not
        // route, for one); without a plan, what the step and its TrafficRouting ask for. A
        // release ending or over is past its step's routing, whatever step the status still names.
        let planned = every_stage
            .as_ref()
            .ok()
            .and_then(|plan| plan.stages.iter().find(|s| s.stage.is_some() && s.stage == stage));
        let ending_does = ending.filter(|_| stage.is_some()).map(|ending| ending.explain(rollout));
        let past = rollout.step_past_the_spec();
        let step_does = ending_does
            .or_else(|| planned.map(|s| s.description.clone()))
            .or_else(|| stage.map(|stage| unplanned_does(rollout, stage, cr)))
            .or_else(|| past.clone());
        // A step past the spec's last is shown as the status names it; `step_does` says why.
        let step_past_the_spec = past.and(status.current_step_index);
        RolloutView {
            name: rollout.name.clone(),
            namespace: namespace.into(),
            uid: rollout.uid.clone(),
            phase: status.phase.clone().unwrap_or_else(|| "unknown".into()),
            strategy: format!("{style}, {} steps", rollout.steps.len()),
            generation: rollout.generation,
            release: status.pod_template_hash.clone(),
            stage,
            step_count: rollout.steps.len(),
            step: stage
                .map(|s| rollout.stage_label(s))
                .or_else(|| step_past_the_spec.map(|i| format!("step {i}/{}", rollout.steps.len()))),
            step_does,
            state: status.current_step_state.clone(),
            progress: Progress::of(rollout, now),
            jumps_to: rollout.pending_jump(),
            paused: rollout.paused,
            ending: Ending::of(rollout).is_some_and(|e| e != Ending::Over),
            message: status.message.clone(),
            canary_replicas: status.canary_replicas,
            canary_ready_replicas: status.canary_ready_replicas,
            stable_replicas: stable(workload.as_ref().and_then(|w| w.replicas), status.canary_replicas),
            stable_ready_replicas: stable(
                workload.as_ref().and_then(|w| w.ready_replicas),
                status.canary_ready_replicas,
            ),
            workload,
            warnings: rollout
                .spec_not_observed()
                .into_iter()
                .chain(every_stage.iter().flat_map(|plan| plan.warnings.iter().cloned()))
                .collect(),
            objects: every_stage.map(|plan| {
                let mut views = positions(plan);
                note_routing_left(rollout, namespace, cr, &mut views);
                note_off_current_step(rollout, plan, &mut views);
                views
            }),
            routes_through,
            claim: None,
        }
    }

    /// A Rollout that does not parse (`error`): only its name is known.
    pub fn unparsed(name: &str, namespace: &str, error: String) -> RolloutView {
        RolloutView {
            name: name.into(),
            namespace: namespace.into(),
            uid: String::new(),
            phase: "unknown".into(),
            strategy: "its spec does not parse".into(),
            generation: None,
            release: None,
            stage: None,
            step_count: 0,
            step: None,
            step_does: None,
            state: None,
            progress: Progress::Failed { reason: "its spec does not parse".into() },
            jumps_to: None,
            paused: false,
            ending: false,
            message: None,
            canary_replicas: None,
            canary_ready_replicas: None,
            stable_replicas: None,
            stable_ready_replicas: None,
            workload: None,
            objects: Err(error),
            routes_through: Vec::new(),
            warnings: Vec::new(),
            claim: None,
        }
    }

    /// The full text form.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", paint(BOLD, &format!("Rollout {}/{}", self.namespace, self.name)));
        let field = |out: &mut String, name: &str, value: &str| {
            let _ = writeln!(out, "  {:<10}{value}", format!("{name}:"));
        };
        field(&mut out, "Phase", &format!("{} ({})", self.phase, self.strategy));
        if let Some(step) = &self.step {
            field(&mut out, "Step", &format!("{step}: {}", self.step_does.as_deref().unwrap_or_default()));
        }
        let state = self.state.as_deref().unwrap_or("-");
        let paused = match (self.paused, self.ending) {
            (true, false) => paint(
                YELLOW,
                &format!(
                    ", {PAUSED}: the controller acts on nothing, an approval included, until it is resumed (`kubectl-kruise rollout resume {}`)",
                    self.name
                ),
            ),
            (true, true) => {
                format!(", {PAUSED}, which does not hold the release's end: the controller goes on with it")
            }
            (false, _) => String::new(),
        };
        let jump = self
            .jumps_to
            .map(|step| format!(", jumping to step {step}/{} (the status's nextStepIndex)", self.step_count))
            .unwrap_or_default();
        field(
            &mut out,
            "State",
            &format!("{state}, {}{jump}{paused}", paint(progress_style(&self.progress), &self.progress.describe())),
        );
        if let Some(message) = &self.message {
            field(&mut out, "Message", message);
        }
        let mut replicas = Vec::new();
        if let Some(canary) = self.canary_replicas {
            replicas.push(format!("canary {canary} ({} ready)", self.canary_ready_replicas.unwrap_or(0)));
        }
        if let Some(stable) = self.stable_replicas {
            replicas.push(format!("stable {stable} ({} ready)", self.stable_ready_replicas.unwrap_or(0)));
        }
        if let Some(w) = &self.workload {
            let count = |n: Option<i64>| n.map_or("?".into(), |n| n.to_string());
            replicas.push(format!("{} {} {} ({} ready)", w.kind, w.name, count(w.replicas), count(w.ready_replicas)));
        }
        if !replicas.is_empty() {
            field(&mut out, "Replicas", &replicas.join("; "));
        }
        match &self.objects {
            Err(why) => field(&mut out, "Objects", &paint(RED, &format!("cannot place them: {why}"))),
            // No traffic routing: a release of pods alone.
            Ok(objects) if objects.is_empty() => field(&mut out, "Objects", "none (no traffic routing)"),
            Ok(objects) => {
                let _ = writeln!(out, "  Objects:");
                let width =
                    objects.iter().map(|o| o.kind.len() + o.namespace.len() + o.name.len() + 2).max().unwrap_or(0);
                let places = objects.iter().map(|o| position_text(&o.position).0.len()).max().unwrap_or(0);
                for object in objects {
                    let what = format!("{} {}/{}", object.kind, object.namespace, object.name);
                    let (text, style) = position_text(&object.position);
                    let script =
                        object.script.as_deref().map(|s| format!("  {}", paint(output::DIM, s))).unwrap_or_default();
                    // Padded to line the scripts up; a line without one ends with its place.
                    let place = match script.is_empty() {
                        true => text.to_string(),
                        false => format!("{text:<places$}"),
                    };
                    let _ = writeln!(out, "    {what:<width$}  {}{script}", paint(style, &place));
                    for note in &object.notes {
                        let _ = writeln!(out, "      {}", paint(YELLOW, &format!("note: {note}")));
                    }
                }
            }
        }
        for warning in &self.warnings {
            let _ = writeln!(out, "  {}", paint(YELLOW, &format!("warning: {warning}")));
        }
        if let Some(claim) = &self.claim {
            let _ = writeln!(out, "  claimed by {}", claim.text());
        }
        out
    }

    /// One line, for following a release in a log; it changes only when something happens.
    pub fn line(&self) -> String {
        let progress = match &self.progress {
            Progress::Paused { .. } => "paused".to_string(),
            other => other.describe(),
        };
        let paused = if self.paused { format!(", {PAUSED}") } else { String::new() };
        let mut line = format!(
            "{}/{}: {}, {} {} ({progress}{paused})",
            self.namespace,
            self.name,
            self.phase,
            self.step.as_deref().unwrap_or("no step"),
            self.state.as_deref().unwrap_or("-")
        );
        // What the step does (traffic split, pause length): a log line per change has no
        // countdown, which would change it every read.
        if let Some(does) = &self.step_does {
            line.push_str(&format!(": {does}"));
        }
        match &self.objects {
            Ok(objects) => {
                let places: Vec<String> = objects
                    .iter()
                    .map(|o| {
                        let left = if o.left_routed { LEFT_ROUTED } else { "" };
                        let off = if o.off_current_step() { OFF_CURRENT_STEP } else { "" };
                        format!("{} {} {}{left}{off}", o.kind, o.name, position_text(&o.position).0)
                    })
                    .collect();
                if !places.is_empty() {
                    line.push_str(&format!("; {}", places.join(", ")));
                }
            }
            Err(why) => line.push_str(&format!("; cannot place its objects: {why}")),
        }
        line
    }
}

/// The colour of a progress: green when completed, red when failed, yellow while waiting.
pub fn progress_style(progress: &Progress) -> anstyle::Style {
    match progress {
        Progress::Completed => GREEN,
        Progress::Failed { .. } => RED,
        Progress::WaitingForApproval | Progress::Paused { .. } => YELLOW,
        _ => anstyle::Style::new(),
    }
}

fn position_text(position: &Position) -> (String, anstyle::Style) {
    match position {
        Position::Original => ("original".into(), anstyle::Style::new()),
        Position::Absent => ("absent".into(), anstyle::Style::new()),
        Position::AtStep { steps } => {
            (format!("at {}", steps.iter().map(Stage::to_string).collect::<Vec<_>>().join(", ")), GREEN)
        }
        Position::Drifted { .. } => ("drifted".into(), RED),
        Position::CanaryWithoutOriginal { .. } => ("canary, no original".into(), RED),
        Position::Contested { steps } => (
            format!(
                "contested (at {} for one routing only)",
                steps.iter().map(Stage::to_string).collect::<Vec<_>>().join(", ")
            ),
            RED,
        ),
    }
}

/// Whether `object`'s plan routes it (rather than restoring or leaving it).
fn routes(object: &ObjectPlan) -> bool {
    match object.action {
        Action::Lua(_) | Action::Rules(_) => true,
        // A restore places nothing at a step: the object is then at its original.
        Action::Restore | Action::RestoreRules(_) | Action::Delete | Action::Keep(_) => false,
    }
}

/// Places every object of a plan of all stages of a Rollout (each planned from the objects as
/// read): at the stages whose plan writes nothing to it. An object that two routings plan (the
/// Rollout's own and its TrafficRouting's) is at a stage only when neither writes it there.
pub(crate) fn positions(plan: &RoutingPlan) -> Vec<ObjectView> {
    let mut views: Vec<ObjectView> = Vec::new();
    for stage in &plan.stages {
        for object in &stage.objects {
            let index = match views.iter().position(|v| v.shows(object)) {
                Some(index) => index,
                None => {
                    let position = match (object.untouched, object.current.is_null(), &object.canary_in_original) {
                        (true, true, _) => Position::Absent,
                        (true, false, Some(canary)) => Position::CanaryWithoutOriginal { canary: canary.clone() },
                        (true, false, None) => Position::Original,
                        (false, ..) if object.after_first_write => Position::Original,
                        (false, ..) => Position::Drifted { nearest: None },
                    };
                    views.push(ObjectView {
                        api_version: object.reference.api_version.clone(),
                        kind: object.reference.kind.clone(),
                        namespace: object.key.namespace.clone(),
                        name: object.reference.name.clone(),
                        position,
                        script: None,
                        notes: object
                            .foreign_canary
                            .iter()
                            .cloned()
                            .chain(object.canary_in_original.as_deref().map(custom::unstored_canary_routing))
                            .chain(object.notes.iter().cloned())
                            .collect(),
                        routed: !object.untouched,
                        left_routed: false,
                        at_current_step: None,
                    });
                    views.len() - 1
                }
            };
            let view = &mut views[index];
            if let Action::Lua(script) = &object.action {
                view.script.get_or_insert_with(|| format!("{} (sha256 {})", script.source, script.short_hash()));
            }
            // A step's plan that leaves the object as it is places it there, even when it shows
            // no sign of a release (an HTTPRoute whose rules a match step dropped): only an
            // object that is not there stays absent.
            if let Some(step) = stage.stage
                && routes(object)
                && view.position != Position::Absent
                && !object.changed()
            {
                let agreed = stage.objects.iter().filter(|o| o.key == object.key).all(|o| routes(o) && !o.changed());
                match (&mut view.position, agreed) {
                    (Position::AtStep { steps }, true) | (Position::Contested { steps }, false) => {
                        if !steps.contains(&step) {
                            steps.push(step);
                        }
                    }
                    (Position::AtStep { .. }, false) => {}
                    (other, true) => *other = Position::AtStep { steps: vec![step] },
                    (other, false) => *other = Position::Contested { steps: vec![step] },
                }
            }
        }
    }
    for view in views.iter_mut().filter(|v| matches!(v.position, Position::Drifted { .. })) {
        let plans =
            plan.stages.iter().filter_map(|stage| Some((stage.stage?, stage.objects.iter().find(|o| view.shows(o))?)));
        view.position = Position::Drifted { nearest: nearest_stage(plans) };
    }
    views
}

/// The stage whose plan of an object is nearest to the object as it is (the most lines of the
/// two alike).
fn nearest_stage<'a>(plans: impl Iterator<Item = (Stage, &'a ObjectPlan)>) -> Option<Stage> {
    let likeness = |o: &ObjectPlan| {
        let (planned, live) = (
            output::routing_view(&o.planned, StoredOriginal::Summary, false),
            output::routing_view(&o.current, StoredOriginal::Summary, false),
        );
        similar::TextDiff::from_lines(&planned, &live).ratio()
    };
    plans.map(|(stage, o)| (likeness(o), stage)).max_by(|a, b| a.0.total_cmp(&b.0)).map(|(_, stage)| stage)
}

/// What a followed Rollout's line adds to an object still routed (as a step, or drifted since)
/// that the controller restores no more: outside a release, or in an ending past its restore
/// (`status` says more).
const LEFT_ROUTED: &str = " (left routed, not restored)";

/// What a followed Rollout's line adds to an object that is not at the current step, which the
/// controller has routed (`status` says more).
const OFF_CURRENT_STEP: &str = " (not at the current step)";

/// The current step when the controller has done its routing: a release in progress (not
/// ending) in a state past the step's traffic routing, StepMetricsAnalysis, StepPaused or
/// StepReady (docs/controller-semantics.md §3.5). Before (BeforeStepUpgrade, StepUpgrade,
/// StepTrafficRouting) the objects may still hold the previous step's routing.
fn routed_step(rollout: &Rollout) -> Option<Stage> {
    let status = &rollout.status;
    let routed =
        matches!(status.current_step_state.as_deref(), Some("StepMetricsAnalysis" | "StepPaused" | "StepReady"));
    // Initializing again, the controller has put the routing back, and starts from step 1.
    let in_release = status.phase.as_deref() == Some("Progressing")
        && Ending::of(rollout).is_none()
        && !rollout.initializing()
        && !rollout.blue_green_blocked();
    rollout.current_stage().filter(|_| routed && in_release)
}

/// Marks each object that `rollout`'s current step routes, once the controller has routed it
/// (`routed_step`), as at that step or not, and notes one at its original, absent or at other
/// steps: the controller routes a step once, before it goes past StepTrafficRouting. One the
/// step would route but that is missing is not at it either, noted as that step fails.
fn note_off_current_step(rollout: &Rollout, plan: &RoutingPlan, views: &mut [ObjectView]) {
    let Some(current) = routed_step(rollout) else { return };
    let Some(planned) = plan.stages.iter().find(|s| s.stage == Some(current)) else { return };
    for view in views.iter_mut() {
        let same = |o: &&ObjectPlan| view.shows(o);
        if let Some(missing) = planned.objects.iter().filter(same).find(|o| o.missing_where_routed()) {
            // Its note was the first stage's: the step that fails now is the current one.
            let first = plan.stages.iter().flat_map(|s| &s.objects).find(same).expect("a view is of a planned object");
            view.notes.retain(|note| !first.notes.contains(note));
            view.notes.extend(missing.notes.iter().cloned());
            view.at_current_step = Some(false);
            continue;
        }
        let Some(routed_there) = planned.objects.iter().filter(same).find(|o| routes(o)) else { continue };
        view.at_current_step = Some(matches!(&view.position, Position::AtStep { steps } if steps.contains(&current)));
        if !view.off_current_step() {
            continue;
        }
        let is = match &view.position {
            Position::Original => "at its original".to_string(),
            Position::Absent => "absent".to_string(),
            other => position_text(other).0,
        };
        let waiting = plan.waiting_for_stable_service.contains(&routed_there.owner);
        let why = match routed_there.owner.kind {
            // Not routed at all: what it keeps depends on the step the release came from, which
            // the status does not tell (a nextStepIndex jump skips the steps between).
            OwnerKind::Rollout if planned.unrouted => "the controller does not route this step, and the gateway keeps the routing of the step the release came from: the one before, or the step a nextStepIndex jump left".to_string(),
            OwnerKind::Rollout if waiting => "the controller waits for the stable Service, which does not exist, and writes nothing until it does (see the warning below)".to_string(),
            OwnerKind::TrafficRouting if waiting => format!(
                "TrafficRouting {}'s controller waits for its stable Service, which does not exist, and routes nothing until it does (see the warning below)",
                routed_there.owner.name
            ),
            // A TrafficRouting's controller routes it at every reconcile while a Rollout holds it.
            OwnerKind::TrafficRouting => format!(
                "TrafficRouting {} routes it again and again while a Rollout holds it, so it fails to (its logs say why), or the object was changed since its last pass",
                routed_there.owner.name
            ),
            OwnerKind::Rollout => format!(
                "the controller routes a step once, before it goes past StepTrafficRouting, so it failed to (its logs say why) or the object was changed since; `kubectl rollout-lua approve {} --traffic-only` writes the step's routing",
                model::rollout_args(rollout.namespace.as_deref().unwrap_or_default(), &rollout.name)
            ),
        };
        view.notes.push(format!(
            "{} {}/{} is not at {current}, the current step (it is {is}): {why}",
            view.kind, view.namespace, view.name
        ));
    }
}

/// `plan`'s notes of the objects that the plan of `rollout`'s current step routes and changes,
/// once the controller has routed that step (`routed_step`): those `status` notes, and those it
/// shows as drifted; short, as the diff below them shows what routing them writes.
pub(crate) fn off_current_step(rollout: &Rollout, plan: &RoutingPlan) -> Vec<String> {
    let Some(current) = routed_step(rollout) else { return Vec::new() };
    let stages = plan.stages.iter().filter(|s| s.stage == Some(current));
    let changed = stages.flat_map(|s| &s.objects).filter(|o| routes(o) && o.changed());
    let mut notes: Vec<String> = Vec::new();
    for object in changed {
        let routed_by = match object.owner.kind {
            OwnerKind::TrafficRouting => {
                format!("which TrafficRouting {} routes while a Rollout holds it", object.owner.name)
            }
            OwnerKind::Rollout => "which the controller routes before it goes past StepTrafficRouting".to_string(),
        };
        let note = format!(
            "{} is not at {current}, the current step, {routed_by}: `kubectl rollout-lua status {}` says more",
            object.describe(),
            model::rollout_args(rollout.namespace.as_deref().unwrap_or_default(), &rollout.name)
        );
        // An object two routings plan (the Rollout's own and its TrafficRouting's) is said once.
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    notes
}

/// Why `rollout` has no release in progress, when it has none: the controller then leaves its
/// objects alone, as they should be, with the routing before the release (a canary Ingress
/// absent). None while a release is in progress, ending, or the Rollout is being deleted (the
/// controller restores the objects itself), unless that ending is past its restore.
pub(crate) fn outside_release(rollout: &Rollout) -> Option<String> {
    if let Some(ending) = Ending::of(rollout).filter(|e| *e != Ending::Over && e.restored(rollout)) {
        return Some(ending.explain(rollout));
    }
    if rollout.releasing() || rollout.being_deleted {
        return None;
    }
    let why = match Ending::of(rollout) {
        Some(ending @ (Ending::Over | Ending::Disabled)) => ending.describe(),
        _ => "no release is in progress",
    };
    Some(format!("{why} (phase {})", rollout.status.phase.as_deref().unwrap_or("unknown")))
}

/// What `restore` does to `view`, an object of `routing` (none for an object of another
/// routing).
fn restore_does(routing: &Routing, view: &ObjectView) -> Option<&'static str> {
    let provider = routing.providers.iter().find(|provider| provider.writes(&view.kind, &view.name))?;
    Some(match provider {
        Provider::Custom(_) => "it puts the stored original back",
        Provider::Ingress { .. } => "it deletes the canary Ingress",
        Provider::Gateway { .. } => "it runs the controller's restore of its rules",
    })
}

/// Notes each object that still routes as a step although `rollout` has no release in progress
/// (a controller or restore that did not finish): of its own routing, which the controller
/// leaves so until the next release, and of its TrafficRouting `cr` when no Rollout holds that
/// either, which its controller leaves so until it finalises; `restore` puts the routing before
/// the release back. A TrafficRouting still held routes its objects, as it should. An object
/// that shows no sign of a release (an HTTPRoute whose rules a match step dropped for good, or
/// whose canary is its stable Service) is left out: the restore does nothing to it. Returns the
/// notes, for `plan`.
pub(crate) fn note_routing_left(
    rollout: &Rollout,
    namespace: &str,
    cr: Option<&TrafficRoutingCr>,
    views: &mut [ObjectView],
) -> Vec<String> {
    let Some(why) = outside_release(rollout) else { return Vec::new() };
    let own = Routing::of_rollout(rollout, namespace);
    let idle_cr = cr.map(|cr| Routing::of_traffic_routing(cr, namespace)).filter(|routing| !routing.releasing);
    let restore = format!(
        "`kubectl rollout-lua restore {}` puts the routing before the release back",
        model::rollout_args(namespace, &rollout.name)
    );
    let mut notes = Vec::new();
    for view in views.iter_mut().filter(|v| v.routed) {
        let what = format!("{} {}/{}", view.kind, view.namespace, view.name);
        let own_restore = own.as_ref().and_then(|routing| restore_does(routing, view));
        let cr_restore = || idle_cr.as_ref().and_then(|routing| Some((routing, restore_does(routing, view)?)));
        let note = match (&view.position, own_restore) {
            // Routed by a release, and edited since (or the steps changed since it was routed).
            (Position::Drifted { nearest }, Some(does)) => format!(
                "{why}, but {what} is at none of its steps{} and not at its original: edited since a release left it routed, or routed by steps since changed; {restore} ({does}), discarding what differs, which it shows first and asks about (or --force)",
                // The step restore shows the edits against, named as its diff names it.
                nearest
                    .map(|stage| format!(" (nearest: as {} routes it, plus edits)", rollout.stage_label(stage)))
                    .unwrap_or_default()
            ),
            (Position::AtStep { steps }, Some(does)) => {
                let steps: Vec<String> = steps.iter().map(Stage::to_string).collect();
                format!(
                    "{why}, but {what} still routes as {}: the controller leaves it so until the next release; {restore} ({does})",
                    steps.join(" and ")
                )
            }
            // Placed at every step: a TrafficRouting routes its one strategy at each.
            (Position::AtStep { .. }, None) => match cr_restore() {
                Some((routing, does)) => format!(
                    "{why} and no Rollout holds {}, but {what} still routes as its strategy, which that TrafficRouting's controller undoes only at the end of the next release of a Rollout linked to it; {restore} ({does})",
                    routing.owner
                ),
                None => continue,
            },
            _ => continue,
        };
        view.notes.push(note.clone());
        // Left routed, as a step or edited since: `status -w` marks its line, which a CI gate
        // logs (a drifted canary may send most of the traffic).
        view.left_routed = true;
        notes.push(note);
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rollout(status: serde_json::Value) -> Rollout {
        Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "demo"},
            "spec": {"strategy": {"canary": {"steps": [{"replicas": 1, "pause": {"duration": 60}}, {"replicas": "100%"}], "trafficRoutings": [{"service": "s"}]}}},
            "status": status
        }))
        .unwrap()
    }

    #[test]
    fn an_ending_past_its_restore_counts_as_outside_a_release() {
        let cancelling = |task: &str| {
            rollout(
                json!({"phase": "Progressing", "conditions": [{"type": "Progressing", "status": "True", "reason": "Cancelling"}],
                "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused", "finalisingStep": task}}),
            )
        };
        assert_eq!(outside_release(&cancelling("FinalisingStepRouteTrafficToStable")), None, "it restores now");
        assert_eq!(
            outside_release(&cancelling("ResumeWorkload")).as_deref(),
            Some(
                "the release is being rolled back (Cancelling): the controller has restored the original routing, and finishes the rest"
            )
        );
        assert_eq!(outside_release(&rollout(json!({"phase": "Progressing"}))), None, "in a release");
    }

    #[test]
    fn a_pause_is_said_to_hold_the_controller_only_outside_a_release_ending() {
        let text = |reason: &str| {
            let mut paused = rollout(
                json!({"phase": "Progressing", "conditions": [{"type": "Progressing", "status": "True", "reason": reason}],
                "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}}),
            );
            paused.paused = true;
            RolloutView::new(&paused, "shop", None, Err("no plan".into()), None, SystemTime::UNIX_EPOCH).text()
        };
        assert!(text("Paused").contains("paused (spec.strategy.paused): the controller acts on nothing"));
        for ending in ["Cancelling", "Finalising"] {
            let shown = text(ending);
            assert!(shown.contains("paused (spec.strategy.paused), which does not hold the release's end"), "{shown}");
            assert!(!shown.contains("acts on nothing"), "{shown}");
        }
    }

    #[test]
    fn a_rollout_that_cannot_be_loaded_shows_its_error_where_its_objects_would_be() {
        let now = SystemTime::now();
        let error = "Rollout shop/demo: the API server does not serve example.com/v1 Widget (ref Widget/w)";
        let unloaded =
            RolloutView::new(&rollout(json!({"phase": "Healthy"})), "shop", None, Err(error.into()), None, now);
        assert!(unloaded.text().contains(&format!("cannot place them: {error}")), "{}", unloaded.text());
        let json = serde_json::to_value(&unloaded).unwrap();
        assert_eq!((&json["phase"], &json["objectsError"]), (&json!("Healthy"), &json!(error)));
        let unparsed = RolloutView::unparsed("bad", "shop", "Rollout shop/bad: no steps".into());
        assert!(unparsed.progress.is_final());
        assert_eq!(serde_json::to_value(&unparsed).unwrap()["objectsError"], "Rollout shop/bad: no steps");
        // Followed, its line says so too.
        assert!(unloaded.line().ends_with(&format!("; cannot place its objects: {error}")), "{}", unloaded.line());
        // No traffic routing: no objects to place.
        let nothing = RoutingPlan {
            owner: "Rollout shop/demo".into(),
            notes: vec![],
            warnings: vec![],
            stages: vec![],
            preview: false,
            waiting_for_stable_service: Vec::new(),
        };
        let alone = RolloutView::new(&rollout(json!({})), "shop", None, Ok(&nothing), None, now);
        assert!(alone.text().contains("  Objects:  none (no traffic routing)\n"), "{}", alone.text());
    }

    #[test]
    fn an_object_still_routed_as_a_step_outside_a_release_is_noted_with_the_way_back() {
        let routed = |status: serde_json::Value, deleted: bool| {
            let mut object = json!({
                "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "web"},
                "spec": {"strategy": {"canary": {"steps": [{"replicas": 1, "traffic": "30%"}, {"replicas": "100%"}],
                    "trafficRoutings": [{"service": "web", "ingress": {"name": "web", "classType": "nginx"},
                        "gateway": {"httpRouteName": "route"},
                        "customNetworkRefs": [{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "vs"}]}]}}},
                "status": status
            });
            if deleted {
                object["metadata"]["deletionTimestamp"] = json!("2026-11-22T03:00:00Z");
            }
            Rollout::from_object(&object).unwrap()
        };
        let view = |kind: &str, name: &str, position: Position, routed: bool| ObjectView {
            api_version: String::new(),
            kind: kind.into(),
            namespace: "shop".into(),
            name: name.into(),
            position,
            script: None,
            notes: vec![],
            routed,
            left_routed: false,
            at_current_step: None,
        };
        let at = |steps: &[usize]| Position::AtStep { steps: steps.iter().map(|&i| Stage::Step(i)).collect() };
        let views = || {
            vec![
                view("VirtualService", "vs", at(&[1]), true),
                view("Ingress", "web-canary", at(&[1]), true),
                view("HTTPRoute", "route", at(&[1]), true),
                // A TrafficRouting's: restored when no Rollout holds it, not by this Rollout.
                view("HTTPRoute", "shared", at(&[1]), true),
                // No sign of a release (its rules dropped by a match step): restore leaves it.
                view("HTTPRoute", "route", at(&[1]), false),
                view("Ingress", "web-canary", Position::Absent, false),
                view("VirtualService", "vs", Position::Drifted { nearest: Some(Stage::Step(1)) }, true),
            ]
        };
        let over = routed(
            json!({"phase": "Healthy", "canaryStatus": {"currentStepIndex": 2, "currentStepState": "Completed"}}),
            false,
        );
        let mut noted = views();
        let notes = note_routing_left(&over, "shop", None, &mut noted);
        let restore = "the controller leaves it so until the next release; `kubectl rollout-lua restore web -n shop` puts the routing before the release back";
        assert_eq!(
            notes,
            [
                format!(
                    "the release is over (phase Healthy), but VirtualService shop/vs still routes as step 1: {restore} (it puts the stored original back)"
                ),
                format!(
                    "the release is over (phase Healthy), but Ingress shop/web-canary still routes as step 1: {restore} (it deletes the canary Ingress)"
                ),
                format!(
                    "the release is over (phase Healthy), but HTTPRoute shop/route still routes as step 1: {restore} (it runs the controller's restore of its rules)"
                ),
                // Edited since: restore discards the edits, and says so first.
                "the release is over (phase Healthy), but VirtualService shop/vs is at none of its steps (nearest: as step 1/2 routes it, plus edits) and not at its original: edited since a release left it routed, or routed by steps since changed; `kubectl rollout-lua restore web -n shop` puts the routing before the release back (it puts the stored original back), discarding what differs, which it shows first and asks about (or --force)".into(),
            ]
        );
        let left: Vec<bool> = noted.iter().map(|v| v.left_routed).collect();
        assert_eq!(left, [true, true, true, false, false, false, true]);
        assert_eq!(noted[1].notes, [notes[1].clone()]);
        // Placed at two steps, it names both; without a phase, no release has started.
        let mut two = vec![view("Ingress", "web-canary", at(&[1, 2]), true)];
        let notes = note_routing_left(&routed(json!({}), false), "shop", None, &mut two);
        assert!(notes[0].starts_with("no release is in progress (phase unknown), but Ingress shop/web-canary still routes as step 1 and step 2: "), "{notes:?}");
        let mut disabled = views();
        let notes = note_routing_left(&routed(json!({"phase": "Disabled"}), false), "shop", None, &mut disabled);
        assert!(notes[0].starts_with("the Rollout is disabled (phase Disabled), but "), "{notes:?}");
        // In a release, or while the controller restores the objects itself, nothing is said.
        for (status, deleted) in [
            (
                json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}}),
                false,
            ),
            (json!({"phase": "Disabling"}), false),
            (json!({"phase": "Terminating"}), false),
            (json!({"phase": "Healthy"}), true),
        ] {
            let mut views = views();
            assert!(
                note_routing_left(&routed(status.clone(), deleted), "shop", None, &mut views).is_empty(),
                "{status}"
            );
            assert!(views.iter().all(|v| v.notes.is_empty() && !v.left_routed), "{status}");
        }
        // The status shows the note; a followed line marks the object.
        let plan = RoutingPlan {
            owner: "Rollout shop/web".into(),
            notes: vec![],
            warnings: vec![],
            stages: vec![],
            preview: false,
            waiting_for_stable_service: Vec::new(),
        };
        let mut shown = RolloutView::new(&over, "shop", None, Ok(&plan), None, SystemTime::UNIX_EPOCH);
        let ingress_note = format!("note: {}", noted[1].notes[0]);
        shown.objects = Ok(noted);
        assert!(shown.text().contains(&ingress_note), "{}", shown.text());
        // Places are padded only to line up scripts: the objects here have none.
        assert!(shown.text().lines().all(|line| line == line.trim_end()), "{:?}", shown.text());
        assert!(shown.line().contains("; VirtualService vs at step 1 (left routed, not restored), Ingress web-canary at step 1 (left routed, not restored), "), "{}", shown.line());
        assert!(shown.line().ends_with(", VirtualService vs drifted (left routed, not restored)"), "{}", shown.line());
    }

    #[test]
    fn an_object_a_traffic_routing_left_routed_is_noted_while_no_rollout_holds_it() {
        let over = Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "web", "annotations": {"rollouts.kruise.io/trafficrouting": "tr"}},
            "spec": {"strategy": {"canary": {"steps": [{"replicas": 1}, {"replicas": "100%"}]}}},
            "status": {"phase": "Healthy"}
        }))
        .unwrap();
        let cr = |finalizers: serde_json::Value| {
            TrafficRoutingCr::from_object(&json!({
                "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
                "metadata": {"name": "tr", "finalizers": finalizers},
                "spec": {"objectRef": [{"service": "web", "ingress": {"name": "web"}}],
                         "strategy": {"matches": [{"headers": [{"name": "x", "value": "1"}]}]}}
            }))
            .unwrap()
        };
        let views = || {
            let at = Position::AtStep { steps: vec![Stage::Step(1), Stage::Step(2)] };
            vec![ObjectView {
                api_version: "networking.k8s.io/v1".into(),
                kind: "Ingress".into(),
                namespace: "shop".into(),
                name: "web-canary".into(),
                position: at,
                script: None,
                notes: vec![],
                routed: true,
                left_routed: false,
                at_current_step: None,
            }]
        };
        let idle = cr(json!(["rollouts.kruise.io/trafficrouting"]));
        let mut noted = views();
        let notes = note_routing_left(&over, "shop", Some(&idle), &mut noted);
        assert_eq!(
            notes,
            [
                "the release is over (phase Healthy) and no Rollout holds TrafficRouting shop/tr, but Ingress shop/web-canary still routes as its strategy, which that TrafficRouting's controller undoes only at the end of the next release of a Rollout linked to it; `kubectl rollout-lua restore web -n shop` puts the routing before the release back (it deletes the canary Ingress)"
            ]
        );
        assert!(noted[0].left_routed && noted[0].notes == notes);
        // Held by a Rollout (this one, whose finalise has not let go yet, or another), the
        // TrafficRouting routes it, as it should; without the TrafficRouting nothing tells.
        for held in ["progressing.rollouts.kruise.io/web", "progressing.rollouts.kruise.io/other"] {
            let mut views = views();
            assert!(note_routing_left(&over, "shop", Some(&cr(json!([held]))), &mut views).is_empty(), "{held}");
            assert!(!views[0].left_routed, "{held}");
        }
        assert!(note_routing_left(&over, "shop", None, &mut views()).is_empty());
    }

    #[test]
    fn progress_follows_the_status() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_316_400); // 2026-11-22T03:00:00Z
        let paused = rollout(
            json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused", "lastUpdateTime": "2026-11-22T02:59:30Z"}}),
        );
        assert_eq!(Progress::of(&paused, now), Progress::Paused { pause_seconds: 60, seconds_left: Some(30) });
        assert_eq!(Progress::of(&paused, now).describe(), "resumes in 30s");
        // Over 24 minutes ago, and still paused: the controller did not move on.
        let overdue = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_316_400 + 30 + 1440);
        let progress = Progress::of(&paused, overdue);
        assert_eq!(progress, Progress::Paused { pause_seconds: 60, seconds_left: Some(-1440) });
        assert_eq!(progress.describe(), "pause ended 24m00s ago (the controller should have moved on)");
        // A spec the controller has not acted on: whatever the status says is of the one before.
        let mut edited = paused.clone();
        (edited.generation, edited.status.observed_generation) = (Some(3), Some(2));
        assert_eq!(Progress::of(&edited, now), Progress::SpecNotObserved);
        assert!(!Progress::SpecNotObserved.is_final(), "followed until it has");
        let mut disabled = edited.clone();
        disabled.disabled = true;
        assert_eq!(Progress::of(&disabled, now), Progress::Failed { reason: "the Rollout is disabled".into() });
        edited.being_deleted = true;
        assert_ne!(Progress::of(&edited, now), Progress::SpecNotObserved, "the delete moved the generation on");
        // A duration no CRD admits (read from a Rollout of another version): no overflow.
        let mut endless = paused.clone();
        endless.steps[0].pause_seconds = Some(i64::MAX);
        assert_eq!(
            Progress::of(&endless, now),
            Progress::Paused { pause_seconds: i64::MAX as u64, seconds_left: Some(i64::MAX - 1_795_316_400) }
        );
        // Over, the controller given a few seconds to move on before it is taken for stuck.
        assert_eq!(pause_left(1), "resumes in 1s");
        assert_eq!(pause_left(0), "pause ending");
        assert_eq!(pause_left(-1), "pause ending");
        assert_eq!(pause_left(1 - PAUSE_GRACE_SECONDS), "pause ending");
        assert_eq!(pause_left(-PAUSE_GRACE_SECONDS), "pause ended 10s ago (the controller should have moved on)");
        // JSON says the time left, none.
        assert_eq!(
            serde_json::to_value(&progress).unwrap(),
            json!({"kind": "paused", "pauseSeconds": 60, "secondsLeft": 0})
        );
        // Under spec.strategy.paused the pause ends only after a resume: no time left is said,
        // and the controller is not blamed (an approve/status review).
        let mut held = paused.clone();
        held.paused = true;
        let progress = Progress::of(&held, overdue);
        assert_eq!(progress, Progress::Paused { pause_seconds: 60, seconds_left: None });
        assert_eq!(progress.describe(), "a timed pause of 1m00s");
        let at_last =
            json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepPaused"}});
        let mut manual = rollout(at_last.clone());
        manual.steps[1].replicas = Some(json!("50%"));
        assert_eq!(Progress::of(&manual, now), Progress::WaitingForApproval);
        // A patched nextStepIndex: the controller jumps at its next reconcile, not after an
        // approval; the step after is no jump.
        for (next, progress) in [(1, Progress::Progressing), (-1, Progress::WaitingForApproval)] {
            let mut jumping = manual.clone();
            jumping.status.next_step_index = Some(next);
            assert_eq!(Progress::of(&jumping, now), progress, "{next}");
        }
        // Initializing: the controller starts again from step 1, whatever the sub-status says.
        let mut initializing = rollout(json!({"phase": "Progressing",
            "conditions": [{"type": "Progressing", "status": "True", "reason": "Initializing"}],
            "canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepPaused"}}));
        initializing.steps[1].replicas = Some(json!("50%"));
        assert_eq!(Progress::of(&initializing, now), Progress::Progressing);
        // A blue-green release that met a new version runs no step until a rollback (§3.6).
        let mut blocked = manual.clone();
        blocked.kind = StrategyKind::BlueGreen;
        blocked.status.message =
            Some("new version releasing detected in the progress of blue-green release, please rollback first".into());
        assert!(
            matches!(Progress::of(&blocked, now), Progress::Failed { reason } if reason.contains("until the workload is rolled back"))
        );
        blocked.kind = StrategyKind::Canary;
        assert_eq!(Progress::of(&blocked, now), Progress::WaitingForApproval, "a canary resets instead");
        // A canary's last step at "100%" is finished without a pause: the controller moves it on
        // at its next reconcile, nobody's approval is awaited.
        assert_eq!(Progress::of(&rollout(at_last.clone()), now), Progress::Progressing);
        let mut blue_green = rollout(at_last);
        blue_green.kind = StrategyKind::BlueGreen;
        assert_eq!(Progress::of(&blue_green, now), Progress::WaitingForApproval, "a blue-green last step waits");
        let done = rollout(json!({"phase": "Healthy", "conditions": [{"type": "Succeeded", "status": "True"}]}));
        assert_eq!(Progress::of(&done, now), Progress::Completed);
        let cancelled = rollout(
            json!({"phase": "Progressing", "conditions": [{"type": "Progressing", "status": "True", "reason": "Cancelling"}]}),
        );
        assert!(matches!(Progress::of(&cancelled, now), Progress::Failed { .. }));
        // Once the rollback is over: reason Completed, but Succeeded False.
        let rolled_back = rollout(json!({"phase": "Healthy", "conditions": [
            {"type": "Progressing", "status": "False", "reason": "Completed", "message": "Rollout progressing has been canceled"},
            {"type": "Succeeded", "status": "False"}]}));
        assert!(
            matches!(Progress::of(&rolled_back, now), Progress::Failed { .. }),
            "{:?}",
            Progress::of(&rolled_back, now)
        );
        assert_eq!(Progress::of(&rollout(json!({"phase": "Healthy"})), now), Progress::NotInRelease);
        assert!(Progress::of(&done, now).is_final());
    }

    #[test]
    fn an_object_not_at_a_current_step_the_controller_has_routed_is_noted() {
        use crate::lua::Limits;
        use crate::model::ObjectIndex;
        use crate::plan::Planner;
        use crate::scripts::ScriptCatalog;
        // Steps 1 and 2 route; step 3 is replicas only (the controller restores the original);
        // step 4's replicas reach the workload's in a partition release (not routed).
        let rollout = |step: usize, state: &str, reason: &str| {
            Rollout::from_object(&json!({
                "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "store", "namespace": "shop"},
                "spec": {"strategy": {"canary": {
                    "steps": [{"replicas": 1, "traffic": "20%"}, {"replicas": 2, "traffic": "50%"}, {"replicas": 3},
                              {"replicas": "100%", "traffic": "100%"}],
                    "trafficRoutings": [{"service": "store", "gateway": {"httpRouteName": "store"}}]}}},
                "status": {"phase": "Progressing", "currentStepIndex": step, "currentStepState": state,
                           "canaryStatus": {"currentStepIndex": step, "currentStepState": state},
                           "conditions": [{"type": "Progressing", "status": "True", "reason": reason}]}
            }))
            .unwrap()
        };
        let original = json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "store", "namespace": "shop"},
            "spec": {"rules": [{"backendRefs": [{"kind": "Service", "name": "store", "port": 80, "weight": 1}]}]}
        });
        let catalog = ScriptCatalog::default();
        let plan = |rollout: &Rollout, route: &serde_json::Value| {
            let mut objects = ObjectIndex::default();
            objects.insert("shop", route.clone());
            let planner = Planner::new(&objects, &catalog, Limits::default()).each_stage_from_the_objects_read();
            planner.plan_rollout(rollout, "shop", None, &rollout.stages()).unwrap()
        };
        let object = |rollout: &Rollout, route: &serde_json::Value| {
            let view = RolloutView::new(rollout, "shop", None, Ok(&plan(rollout, route)), None, SystemTime::UNIX_EPOCH);
            let line = view.line();
            (view.objects.unwrap().remove(0), line)
        };
        let paused_at_2 = rollout(2, "StepPaused", "InRolling");
        let at_step =
            |step: usize| serde_json::Value::clone(&plan(&paused_at_2, &original).stages[step - 1].objects[0].planned);
        let advice = "the controller routes a step once, before it goes past StepTrafficRouting, so it failed to (its logs say why) or the object was changed since; `kubectl rollout-lua approve store -n shop --traffic-only` writes the step's routing";
        // Past the step's routing: at its original, or at another step, it is noted.
        for state in ["StepMetricsAnalysis", "StepPaused", "StepReady"] {
            let (view, line) = object(&rollout(2, state, "InRolling"), &original);
            assert_eq!(view.at_current_step, Some(false), "{state}");
            assert_eq!(
                view.notes,
                [format!("HTTPRoute shop/store is not at step 2, the current step (it is at its original): {advice}")],
                "{state}"
            );
            assert!(line.ends_with("HTTPRoute store original (not at the current step)"), "{line}");
        }
        let (view, _) = object(&paused_at_2, &at_step(1));
        assert_eq!(view.position, Position::AtStep { steps: vec![Stage::Step(1)] });
        assert_eq!(
            view.notes,
            [format!("HTTPRoute shop/store is not at step 2, the current step (it is at step 1): {advice}")]
        );
        // At the step: said in JSON only.
        let (view, line) = object(&paused_at_2, &at_step(2));
        assert_eq!((view.at_current_step, view.notes.len()), (Some(true), 0));
        assert!(line.ends_with("HTTPRoute store at step 2"), "{line}");
        assert_eq!(serde_json::to_value(&view).unwrap()["atCurrentStep"], json!(true));
        // Drifted: it says so itself.
        let mut edited = at_step(2);
        edited["spec"]["rules"][0]["backendRefs"][0]["weight"] = json!(70);
        let (view, _) = object(&paused_at_2, &edited);
        assert_eq!(
            (&view.position, view.at_current_step, view.notes.len()),
            (&Position::Drifted { nearest: Some(Stage::Step(2)) }, Some(false), 0)
        );
        // Not routed yet, a step that restores, a release ending: nothing is said, nor compared.
        let not_compared = [
            rollout(2, "BeforeStepUpgrade", "InRolling"),
            rollout(2, "StepUpgrade", "InRolling"),
            rollout(2, "StepTrafficRouting", "InRolling"),
            rollout(3, "StepPaused", "InRolling"),
            rollout(4, "StepPaused", "InRolling"),
            rollout(2, "StepPaused", "Cancelling"),
            rollout(2, "Completed", "Finalising"),
            // Restarted by a new version: the controller put the routing back (§3.6).
            rollout(2, "StepPaused", "Initializing"),
        ];
        for rollout in &not_compared {
            let (view, _) = object(rollout, &original);
            assert_eq!((view.at_current_step, view.notes.len()), (None, 0), "{:?}", rollout.status);
            assert!(serde_json::to_value(&view).unwrap().get("atCurrentStep").is_none());
            assert_eq!(off_current_step(rollout, &plan(rollout, &original)), Vec::<String>::new());
        }
        // `plan`'s note: an object the step's plan changes, wherever it is (drifted too).
        let off = |route: &serde_json::Value| off_current_step(&paused_at_2, &plan(&paused_at_2, route));
        let noted = [
            "HTTPRoute shop/store is not at step 2, the current step, which the controller routes before it goes past StepTrafficRouting: `kubectl rollout-lua status store -n shop` says more",
        ];
        for route in [&original, &at_step(1), &edited] {
            assert_eq!(off(route), noted);
        }
        assert_eq!(off(&at_step(2)), Vec::<String>::new());
        // Missing: not at the step, with the current step's note of why it fails, not the first's.
        let plan = Planner::new(&ObjectIndex::default(), &catalog, Limits::default())
            .each_stage_from_the_objects_read()
            .plan_rollout(&paused_at_2, "shop", None, &paused_at_2.stages())
            .unwrap();
        let view = RolloutView::new(&paused_at_2, "shop", None, Ok(&plan), None, SystemTime::UNIX_EPOCH);
        let line = view.line();
        let missing = &view.objects.unwrap()[0];
        assert_eq!((&missing.position, missing.at_current_step), (&Position::Absent, Some(false)));
        assert_eq!(missing.notes, plan.stages[1].objects[0].notes);
        assert!(line.ends_with("HTTPRoute store absent (not at the current step)"), "{line}");
    }

    #[test]
    fn the_step_says_what_the_plan_says_the_controller_does() {
        let status =
            json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}});
        let r = rollout(status);
        let plan = RoutingPlan {
            owner: "Rollout shop/demo".into(),
            notes: vec![],
            warnings: vec![],
            preview: false,
            waiting_for_stable_service: Vec::new(),
            stages: vec![crate::plan::StagePlan {
                stage: Some(Stage::Step(1)),
                label: "step 1/2".into(),
                description: "replicas 1, not routed here, pause 60s".into(),
                routing: "not routed here".into(),
                unrouted: false,
                objects: vec![],
            }],
        };
        let view = RolloutView::new(&r, "shop", None, Ok(&plan), None, SystemTime::UNIX_EPOCH);
        assert_eq!(view.step_does.as_deref(), Some("replicas 1, not routed here, pause 60s"));
        let unplanned = RolloutView::new(&r, "shop", None, Err("no plan".into()), None, SystemTime::UNIX_EPOCH);
        assert_eq!(
            unplanned.step_does.as_deref(),
            Some("replicas 1, original routing (no traffic, no matches), pause 60s")
        );
    }

    #[test]
    fn unplanned_a_step_says_what_its_traffic_routing_does() {
        // A regression of an operator trial (M1): routed by its TrafficRouting alone, a step
        // without traffic or matches of its own read as "original routing".
        let status =
            json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}});
        let linked = |own_routing: bool| {
            let mut canary = json!({"steps": [{"replicas": 1}, {"replicas": "100%"}]});
            if own_routing {
                canary["trafficRoutings"] = json!([{"service": "s", "customNetworkRefs": [
                    {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "s"}]}]);
            }
            Rollout::from_object(&json!({
                "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
                "metadata": {"name": "demo", "annotations": {"rollouts.kruise.io/trafficrouting": "tr"}},
                "spec": {"strategy": {"canary": canary}}, "status": status
            }))
            .unwrap()
        };
        let cr = TrafficRoutingCr::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": "tr", "finalizers": ["progressing.rollouts.kruise.io/demo"]},
            "spec": {"strategy": {"matches": [{"headers": [{"type": "Exact", "name": "x-env", "value": "gray"}]}]}, "objectRef": [{"service": "s", "customNetworkRefs": [
                {"apiVersion": "networking.istio.io/v1beta1", "kind": "DestinationRule", "name": "s"}]}]}
        }))
        .unwrap();
        let does = |rollout: &Rollout, cr: Option<&TrafficRoutingCr>| {
            RolloutView::new(rollout, "shop", cr, Err("no plan".into()), None, SystemTime::UNIX_EPOCH)
                .step_does
                .unwrap()
        };
        let by_cr = "TrafficRouting tr: matches [header x-env=gray]";
        assert_eq!(does(&linked(false), Some(&cr)), format!("replicas 1, pause until approved, {by_cr}"));
        // With routing of its own too, both (as the plan says them).
        assert_eq!(
            does(&linked(true), Some(&cr)),
            format!("replicas 1, original routing (no traffic, no matches), pause until approved, {by_cr}")
        );
        // A TrafficRouting not loaded: its name only.
        assert_eq!(
            does(&linked(false), None),
            "replicas 1, pause until approved, TrafficRouting tr: routing not known"
        );
    }

    #[test]
    fn an_ending_release_is_not_described_by_its_steps_routing() {
        // The status keeps naming step 2, whose plan routes: the Step line says what the
        // controller does instead, and the state says why.
        let plan = RoutingPlan {
            owner: "Rollout shop/demo".into(),
            notes: vec![],
            warnings: vec![],
            preview: false,
            waiting_for_stable_service: Vec::new(),
            stages: vec![crate::plan::StagePlan {
                stage: Some(Stage::Step(2)),
                label: "step 2/2".into(),
                description: "replicas 100%, traffic 50% (canary 50 / stable 50), pause until approved".into(),
                routing: "traffic 50% (canary 50 / stable 50)".into(),
                unrouted: false,
                objects: vec![],
            }],
        };
        let at_step_2 = |state: &str, extra: serde_json::Value| {
            let mut status =
                json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": 2, "currentStepState": state}});
            for (key, value) in extra.as_object().unwrap() {
                status[key] = value.clone();
            }
            status
        };
        let progressing = |reason: &str| json!([{"type": "Progressing", "status": "True", "reason": reason}]);
        let cases = [
            (
                at_step_2(
                    "Completed",
                    json!({"phase": "Healthy", "conditions": [{"type": "Succeeded", "status": "True"}]}),
                ),
                "the release is over: the controller restored the original routing when it ended",
                "completed",
            ),
            (
                at_step_2("Completed", json!({"conditions": progressing("Finalising")})),
                "the release is finalising: the controller restores the original routing",
                "all steps done, finalising",
            ),
            (
                at_step_2("StepPaused", json!({"conditions": progressing("Cancelling")})),
                "the release is being rolled back (Cancelling): the controller restores the original routing",
                "failed: the release is being rolled back (Cancelling)",
            ),
            (
                at_step_2("StepPaused", json!({"phase": "Terminating"})),
                "the Rollout is being deleted: the controller restores the original routing",
                "failed: the Rollout is being deleted",
            ),
        ];
        for (status, does, progress) in cases {
            let view = RolloutView::new(&rollout(status), "shop", None, Ok(&plan), None, SystemTime::UNIX_EPOCH);
            assert_eq!((view.step.as_deref(), view.step_does.as_deref()), (Some("step 2/2"), Some(does)));
            assert_eq!(view.progress.describe(), progress);
            assert!(view.text().contains(&format!("  Step:     step 2/2: {does}\n")), "{}", view.text());
        }
        // In progress, the step's plan says what it does.
        let paused = RolloutView::new(
            &rollout(at_step_2("StepPaused", json!({}))),
            "shop",
            None,
            Ok(&plan),
            None,
            SystemTime::UNIX_EPOCH,
        );
        assert_eq!(paused.step_does.as_deref(), Some(plan.stages[0].description.as_str()));
    }

    #[test]
    fn stable_replicas_are_the_workloads_pods_that_are_not_canary() {
        let status = json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused", "canaryReplicas": 1, "canaryReadyReplicas": 1}});
        let workload = || {
            Some(WorkloadView {
                kind: "Deployment".into(),
                name: "demo".into(),
                replicas: Some(4),
                ready_replicas: Some(3),
            })
        };
        let view = |rollout: &Rollout| {
            RolloutView::new(rollout, "shop", None, Err("not planned".into()), workload(), SystemTime::UNIX_EPOCH)
        };
        // Partition: the canary pods are among the workload's.
        let partition = view(&rollout(status.clone()));
        assert_eq!((partition.stable_replicas, partition.stable_ready_replicas), (Some(3), Some(2)));
        assert!(
            partition.text().contains("Replicas: canary 1 (1 ready); stable 3 (2 ready); Deployment demo 4 (3 ready)")
        );
        // An extra canary workload: the workload holds only the stable pods.
        let mut extra = rollout(status);
        extra.enable_extra_workload_for_canary = true;
        assert_eq!(view(&extra).stable_replicas, Some(4));
        // Without the workload, nothing is guessed.
        let unknown = RolloutView::new(&extra, "shop", None, Err("not planned".into()), None, SystemTime::UNIX_EPOCH);
        assert_eq!(unknown.stable_replicas, None);
        // Outside a release (before the first, or after one, whose sub-status the controller
        // keeps) there is no stable part to tell from the workload.
        let completed = json!({"phase": "Healthy", "canaryStatus": {"currentStepIndex": 2, "currentStepState": "Completed", "canaryReplicas": 4, "canaryReadyReplicas": 4}});
        let never = (json!({"phase": "Healthy"}), "Replicas: Deployment demo 4 (3 ready)\n");
        let after = (completed, "Replicas: canary 4 (4 ready); Deployment demo 4 (3 ready)\n");
        for (status, line) in [never, after] {
            let idle = view(&rollout(status));
            assert_eq!((idle.stable_replicas, idle.stable_ready_replicas), (None, None));
            assert!(idle.text().contains(line), "{}", idle.text());
        }
    }
}
