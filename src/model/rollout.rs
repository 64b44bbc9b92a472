//! A Rollout (`rollouts.kruise.io` v1beta1, or v1alpha1 through the controller's conversion).

use super::admission::{self, Rejections};
use super::stage_routing::{RoutingAction, StageRouting, scaled_replicas};
use super::strategy::{self, RouteStrategy, Semantics, read_header_modifier, read_matches};
use super::{FieldMessage, ModelError, ObjectRef, Path, Segment, TrafficRoutingRef, metadata_str, name_as_read};
use serde_json::Value;
use std::fmt;

/// Links a Rollout to a TrafficRouting CR; the only link the controller reads.
pub const TRAFFIC_ROUTING_ANNOTATION: &str = "rollouts.kruise.io/trafficrouting";
const ROLLING_STYLE_ANNOTATION: &str = "rollouts.kruise.io/rolling-style";
const GROUP: &str = "rollouts.kruise.io";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrategyKind {
    Canary,
    BlueGreen,
}

impl StrategyKind {
    /// The status field holding the step state (`canaryStatus` / `blueGreenStatus`).
    pub fn status_field(self) -> &'static str {
        match self {
            StrategyKind::Canary => "canaryStatus",
            StrategyKind::BlueGreen => "blueGreenStatus",
        }
    }
}

impl fmt::Display for StrategyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StrategyKind::Canary => "canary",
            StrategyKind::BlueGreen => "blue-green",
        })
    }
}

/// The status message of a blue-green release that met a new version of its workload.
const BLUE_GREEN_NEW_VERSION: &str =
    "new version releasing detected in the progress of blue-green release, please rollback first";

/// What the controller does with a release [`Rollout::initializing`] (§3.6).
pub const INITIALIZING: &str = "the release is initializing (Progressing reason Initializing): the controller starts it from step 1, whatever step the status still names";

/// What the controller does with a release [`Rollout::blue_green_blocked`] (§3.6).
pub const BLUE_GREEN_BLOCKED: &str = "a new version of the workload came in the middle of the blue-green release: the controller runs no step until the workload is rolled back";

#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub strategy: RouteStrategy,
    /// `replicas` as written: an integer or a percent string.
    pub replicas: Option<Value>,
    /// `pause.duration` in seconds; `None` waits for a manual approval.
    pub pause_seconds: Option<i64>,
}

impl Step {
    pub fn describe_replicas(&self) -> String {
        match &self.replicas {
            Some(Value::String(s)) => format!("replicas {s}"),
            Some(other) => format!("replicas {other}"),
            None => "replicas unset".into(),
        }
    }

    /// `completes` is [`Rollout::completes_without_pause`] for this step.
    pub fn describe_pause(&self, completes: bool) -> String {
        if completes {
            return "no pause (last step at 100% completes the release)".into();
        }
        match self.pause_seconds {
            Some(seconds) => format!("pause {seconds}s"),
            None => "pause until approved".into(),
        }
    }
}

/// Where in a release the routing is planned: a step (1-based), or blue-green's final
/// "route all traffic to the new version".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Step(usize),
    BlueGreenFinal,
}

impl serde::Serialize for Stage {
    /// In JSON and YAML output: the step's number (1-based, as the controller's status counts),
    /// or `"final"`.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Stage::Step(i) => serializer.serialize_u64(*i as u64),
            Stage::BlueGreenFinal => serializer.serialize_str("final"),
        }
    }
}

impl Stage {
    /// `2`, or `final`: as a list of steps names it (`steps 1, 2`).
    pub fn number(&self) -> String {
        match self {
            Stage::Step(i) => i.to_string(),
            Stage::BlueGreenFinal => "final".into(),
        }
    }
}

/// How a command a message suggests names a Rollout: `demo -n shop`, so that, pasted, it acts on
/// that Rollout whatever the namespace of the context it runs in (`-A` lists several); its name
/// alone when its namespace is not known (a manifest without one).
pub fn rollout_args(namespace: &str, name: &str) -> String {
    match namespace {
        "" => name.to_string(),
        namespace => format!("{name} -n {namespace}"),
    }
}

/// `step 2`, or `steps 1, 2, final`: how a message names the steps it is about, from their
/// numbers (`Stage::number`).
pub fn steps_named(numbers: &[String]) -> String {
    match numbers {
        [one] => format!("step {one}"),
        many => format!("steps {}", many.join(", ")),
    }
}

impl fmt::Display for Stage {
    /// `step 2`, or `final`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stage::Step(i) => write!(f, "step {i}"),
            Stage::BlueGreenFinal => f.write_str("final"),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RolloutStatus {
    /// `observedGeneration`: the `metadata.generation` of the spec the controller last acted on.
    pub observed_generation: Option<i64>,
    pub phase: Option<String>,
    pub message: Option<String>,
    /// The sub-status's fields (`canaryStatus` or `blueGreenStatus`).
    pub current_step_index: Option<i64>,
    /// `nextStepIndex`: normally the step after the current one (-1 at the last); a user may
    /// patch it to make the controller jump (docs/controller-semantics.md §1.6).
    pub next_step_index: Option<i64>,
    pub current_step_state: Option<String>,
    pub last_update_time: Option<String>,
    pub finalising_step: Option<String>,
    /// `podTemplateHash`: the version being released (a new one means a new release, §3.6).
    pub pod_template_hash: Option<String>,
    /// Canary (blue-green: updated) replicas and ready replicas.
    pub canary_replicas: Option<i64>,
    pub canary_ready_replicas: Option<i64>,
    /// Whether the status has the sub-status the strategy expects.
    pub has_sub_status: bool,
    pub conditions: Vec<Condition>,
}

/// A status condition (`Progressing`, `Succeeded`, `Terminating`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Condition {
    pub kind: String,
    pub status: String,
    pub reason: String,
    pub message: String,
}

impl RolloutStatus {
    pub fn condition(&self, kind: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.kind == kind)
    }

    /// Whether the current step is still before its traffic routing: BeforeStepUpgrade or
    /// StepUpgrade, while its canary pods are made ready. The controller routes a step only in
    /// StepTrafficRouting, once they are (docs/controller-semantics.md §3.5).
    pub fn before_step_traffic_routing(&self) -> bool {
        matches!(self.current_step_state.as_deref(), Some("BeforeStepUpgrade" | "StepUpgrade"))
    }
}

/// Where a Rollout stands against the approval of one of its steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalProgress {
    /// At the step, not approved: StepPaused, or an earlier state of the step (it started over).
    Waiting,
    /// Approved and, usually, moved on: StepReady or Completed at the step, a later step, or the
    /// release over (phase Healthy, no sub-status). The controller takes an approved step to the
    /// next one (or to Completed) within a reconcile, so a read rarely shows StepReady itself.
    Approved,
    /// Anywhere else: an earlier step, a state this tool does not know.
    Elsewhere,
}

/// Where `status` (a Rollout's, as read) stands against the approval of step `step`, from its
/// sub-status `field` (`canaryStatus` or `blueGreenStatus`; docs/controller-semantics.md §3.5).
pub fn approval_progress(status: &Value, field: &str, step: i64) -> ApprovalProgress {
    const BEFORE_APPROVAL: [&str; 5] =
        ["BeforeStepUpgrade", "StepUpgrade", "StepTrafficRouting", "StepMetricsAnalysis", "StepPaused"];
    let sub = &status[field];
    if sub.is_null() && status["phase"] == "Healthy" {
        return ApprovalProgress::Approved;
    }
    let Some(index) = sub["currentStepIndex"].as_i64() else { return ApprovalProgress::Elsewhere };
    let state = sub["currentStepState"].as_str().unwrap_or_default();
    match index.cmp(&step) {
        std::cmp::Ordering::Greater => ApprovalProgress::Approved,
        std::cmp::Ordering::Less => ApprovalProgress::Elsewhere,
        std::cmp::Ordering::Equal if ["StepReady", "Completed"].contains(&state) => ApprovalProgress::Approved,
        std::cmp::Ordering::Equal if BEFORE_APPROVAL.contains(&state) => ApprovalProgress::Waiting,
        std::cmp::Ordering::Equal => ApprovalProgress::Elsewhere,
    }
}

#[derive(Clone, Debug)]
pub struct Rollout {
    pub name: String,
    pub namespace: Option<String>,
    /// `metadata.uid` (empty in a manifest without one).
    pub uid: String,
    pub kind: StrategyKind,
    pub steps: Vec<Step>,
    pub traffic_routing: Option<TrafficRoutingRef>,
    /// How many entries `trafficRoutings` has: the controller routes through the first only.
    pub traffic_routing_entries: usize,
    pub disable_generate_canary_service: bool,
    pub enable_extra_workload_for_canary: bool,
    /// The TrafficRouting CR named by the `rollouts.kruise.io/trafficrouting` annotation.
    pub traffic_routing_cr: Option<String>,
    /// `patchPodTemplateMetadata.labels`: labels the canary pods get (canary style only).
    pub canary_pod_labels: std::collections::BTreeMap<String, String>,
    pub paused: bool,
    pub disabled: bool,
    /// `metadata.deletionTimestamp` is set: the controller finalises the release before the
    /// status says `Terminating`.
    pub being_deleted: bool,
    /// `metadata.generation` (changes when the spec does).
    pub generation: Option<i64>,
    /// The workload the Rollout releases (`workloadRef`, v1alpha1 `objectRef.workloadRef`).
    pub workload: Option<ObjectRef>,
    pub status: RolloutStatus,
    /// Things the API server or the conversion would silently change.
    pub warnings: Vec<FieldMessage>,
    /// What the API server's schema validation and the controller's admission webhook refuse in
    /// this Rollout, each as `field: what is wrong`.
    pub rejections: Rejections,
}

impl Rollout {
    /// Reads a Rollout object (v1beta1 as is, v1alpha1 through the controller's conversion) as
    /// the API server stores it: with the CRD's defaults.
    pub fn from_object(object: &Value) -> Result<Rollout, ModelError> {
        Rollout::read(object, Semantics::Controller)
    }

    /// `from_object`, with the CRD's defaults only under `Semantics::Controller`.
    pub fn read(object: &Value, semantics: Semantics) -> Result<Rollout, ModelError> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let version = match api_version.split_once('/') {
            Some((GROUP, version @ ("v1alpha1" | "v1beta1"))) => version,
            _ => {
                return Err(ModelError(FieldMessage::new(
                    Path::root("apiVersion"),
                    format!("not a Rollout of {GROUP}/v1alpha1 or v1beta1 (apiVersion {api_version:?})"),
                )));
            }
        };
        if object["kind"] != "Rollout" {
            return Err(ModelError(FieldMessage::new(
                Path::root("kind"),
                format!("kind must be Rollout, not {}", object["kind"]),
            )));
        }
        let name = name_as_read(object, semantics)?;
        let strategy = &object["spec"]["strategy"];
        let (kind, body, path) =
            match (strategy.get("canary").filter(|c| !c.is_null()), strategy.get("blueGreen").filter(|b| !b.is_null()))
            {
                (Some(canary), None) => {
                    (StrategyKind::Canary, canary, Path::root("spec").field("strategy").field("canary"))
                }
                (None, Some(_)) if version == "v1alpha1" => {
                    return Err(Path::root("spec")
                        .field("strategy")
                        .field("blueGreen")
                        .error("v1alpha1 has no blue-green strategy; use v1beta1"));
                }
                (None, Some(blue_green)) => {
                    (StrategyKind::BlueGreen, blue_green, Path::root("spec").field("strategy").field("blueGreen"))
                }
                _ => {
                    let strategy = Path::root("spec").field("strategy");
                    return Err(ModelError(FieldMessage::new(
                        strategy.clone(),
                        format!("{strategy} must have exactly one of canary and blueGreen"),
                    )));
                }
            };
        let alpha = version == "v1alpha1";
        let mut warnings = Vec::new();
        let steps = read_steps(body, &path.field("steps"), alpha, semantics, &mut warnings)?;
        let mut rejections = admission::rejections(kind, alpha, &path, body, &steps);
        let traffic_routing = read_traffic_routings(body, &path.field("trafficRoutings"))?;
        let annotation = |key: &str| object["metadata"]["annotations"][key].as_str();
        if alpha && let Some(style) = annotation(ROLLING_STYLE_ANNOTATION) {
            rejections.webhook.extend(admission::rolling_style(style));
        }
        let flag = |field: &str| body[field].as_bool().unwrap_or(false);
        let mut disable_generate_canary_service = flag("disableGenerateCanaryService");
        let enable_extra_workload_for_canary = if alpha {
            !annotation(ROLLING_STYLE_ANNOTATION).is_some_and(|s| s.eq_ignore_ascii_case("partition"))
        } else {
            kind == StrategyKind::Canary && flag("enableExtraWorkloadForCanary")
        };
        let partition_style = kind == StrategyKind::Canary && !enable_extra_workload_for_canary;
        warnings.extend(admission::over_partition_limit(partition_style, alpha, &path, body, &steps));
        if alpha && disable_generate_canary_service {
            let service = traffic_routing.as_ref().map_or("<service>", |t| t.service.as_str());
            let field = path.field("disableGenerateCanaryService");
            warnings.push(FieldMessage::new(
                field.clone(),
                format!(
                    "{field} is dropped by the v1alpha1 to v1beta1 conversion: the controller generates and routes \
                     to {service}-canary; apply the Rollout as v1beta1 to keep it"
                ),
            ));
            disable_generate_canary_service = false;
        }
        let linked = annotation(TRAFFIC_ROUTING_ANNOTATION).filter(|s| !s.is_empty());
        if let Some(field) = body.get("trafficRoutingRef").and_then(Value::as_str).filter(|_| !alpha)
            && linked != Some(field)
        {
            let at = path.field("trafficRoutingRef");
            warnings.push(FieldMessage::new(at.clone(), match linked {
                None => format!("{at} ({field}) is not read by the controller; only the annotation {TRAFFIC_ROUTING_ANNOTATION} links a TrafficRouting"),
                Some(other) => format!("{at} names {field}, but the controller follows the annotation {TRAFFIC_ROUTING_ANNOTATION}: {other}"),
            }));
        }
        Ok(Rollout {
            name: name.into(),
            namespace: metadata_str(object, "namespace").map(str::to_string),
            uid: metadata_str(object, "uid").unwrap_or_default().into(),
            kind,
            steps,
            traffic_routing,
            disable_generate_canary_service,
            enable_extra_workload_for_canary,
            traffic_routing_cr: linked.map(str::to_string),
            traffic_routing_entries: body["trafficRoutings"].as_array().map_or(0, Vec::len),
            canary_pod_labels: body["patchPodTemplateMetadata"]["labels"]
                .as_object()
                .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect())
                .unwrap_or_default(),
            paused: object["spec"]["strategy"]["paused"].as_bool().unwrap_or(false),
            disabled: object["spec"]["disabled"].as_bool().unwrap_or(false),
            being_deleted: object["metadata"].get("deletionTimestamp").is_some_and(|t| !t.is_null()),
            generation: object["metadata"]["generation"].as_i64(),
            workload: {
                let reference =
                    if alpha { &object["spec"]["objectRef"]["workloadRef"] } else { &object["spec"]["workloadRef"] };
                match (reference["apiVersion"].as_str(), reference["kind"].as_str(), reference["name"].as_str()) {
                    (Some(api_version), Some(kind), Some(name)) => {
                        Some(ObjectRef { api_version: api_version.into(), kind: kind.into(), name: name.into() })
                    }
                    _ => None,
                }
            },
            status: read_status(&object["status"], kind),
            warnings,
            rejections,
        })
    }

    /// What the CRD's schema requires of the workload's reference in `object` (a Rollout's
    /// manifest), which a test case's Rollout, never stored, may leave out: one rejection each.
    pub fn workload_ref_rejections(object: &Value) -> Vec<FieldMessage> {
        let alpha = object["apiVersion"].as_str().is_some_and(|v| v.ends_with("/v1alpha1"));
        admission::workload_ref_rules(alpha, &object["spec"])
    }

    /// Every stage of the release in order: the steps, then blue-green's final full switch.
    pub fn stages(&self) -> Vec<Stage> {
        let mut stages: Vec<Stage> = (1..=self.steps.len()).map(Stage::Step).collect();
        if self.kind == StrategyKind::BlueGreen {
            stages.push(Stage::BlueGreenFinal);
        }
        stages
    }

    /// Step `n` (1-based), as `--step N` names it.
    pub fn step_stage(&self, n: usize) -> Result<Stage, String> {
        match (1..=self.steps.len()).contains(&n) {
            true => Ok(Stage::Step(n)),
            false => Err(format!("--step {n}: Rollout {} has {} steps", self.name, self.steps.len())),
        }
    }

    /// The strategy a stage asks for (docs/controller-semantics.md §3.3); see
    /// [`Rollout::routing_at`] for what the controller does with it.
    pub fn strategy_at(&self, stage: Stage) -> RouteStrategy {
        match stage {
            Stage::Step(i) => self.steps[i - 1].strategy.clone(),
            Stage::BlueGreenFinal => RouteStrategy {
                traffic: Some("100%".into()),
                matches: None,
                request_header_modifier: self.steps.last().and_then(|s| s.strategy.request_header_modifier.clone()),
            },
        }
    }

    /// Its rejections, each a warning naming who rejects it now: a Rollout in a cluster was
    /// admitted, perhaps by an older CRD or webhook.
    pub fn rejection_warnings(&self) -> impl Iterator<Item = String> + '_ {
        let schema = self.rejections.schema.iter().map(|r| format!("{r} (the CRD's schema rejects this now)"));
        schema.chain(self.rejections.webhook.iter().map(|r| format!("{r} (the controller's webhook rejects this now)")))
    }

    /// `step i/n` or `final`.
    pub fn stage_label(&self, stage: Stage) -> String {
        match stage {
            Stage::Step(i) => format!("step {i}/{}", self.steps.len()),
            Stage::BlueGreenFinal => "final (route all traffic to the new version)".into(),
        }
    }

    /// The rules that the routing of `stage`'s step (its traffic, matches and header changes)
    /// breaks: what the API server would not admit now, and writing that routing would put into
    /// the gateway objects all the same (weights over 100, say).
    pub fn routing_rejections(&self, stage: Stage) -> Vec<&FieldMessage> {
        let Stage::Step(step) = stage else { return Vec::new() };
        let routing = ["traffic", "weight", "matches", "requestHeaderModifier"];
        let of_the_step = |message: &&FieldMessage| match message.field.segments() {
            [_, _, _, Segment::Key(steps), Segment::Index(i), Segment::Key(field), ..] => {
                steps == "steps" && i + 1 == step && routing.contains(&field.as_str())
            }
            _ => false,
        };
        self.rejections.schema.iter().chain(&self.rejections.webhook).filter(of_the_step).collect()
    }

    /// Whether the controller routes `stage` at all depends on the workload's replica count: a
    /// partition step that routes and asks for less than 100% of the replicas may reach a
    /// small workload's count, and is then not routed (see `routing_at`).
    pub fn routing_depends_on_workload(&self, stage: Stage) -> bool {
        let Stage::Step(i) = stage else { return false };
        let step = &self.steps[i - 1];
        let percent = step.replicas.as_ref().and_then(Value::as_str).and_then(strategy::parse_whole_percent);
        self.is_real_partition() && step.strategy.routes_traffic() && percent < Some(100)
    }

    /// What the controller does to the gateway objects at a stage, given the workload's replica
    /// count when it is known (docs/controller-semantics.md §3.5 and §11). A partition step
    /// whose replicas reach the workload's goes from StepUpgrade straight to metrics analysis:
    /// it is not routed, and the objects keep what the last step before it left. Without the
    /// count, only a step of 100% or more of the replicas is known to reach it.
    pub fn routing_at(&self, stage: Stage, workload_replicas: Option<i64>) -> StageRouting {
        self.routing_following(stage, workload_replicas, true)
    }

    /// `routing_at`, taking a pending jump into account (`jumps`) or not: the step a jump
    /// leaves was reached in order.
    fn routing_following(&self, stage: Stage, workload_replicas: Option<i64>, jumps: bool) -> StageRouting {
        let own = StageRouting::of(self.strategy_at(stage));
        let (Stage::Step(i), RoutingAction::Route(_)) = (stage, &own.action) else {
            return own;
        };
        let reaches = |step: &Step| {
            self.is_real_partition()
                && match workload_replicas {
                    Some(total) => scaled_replicas(step.replicas.as_ref(), total) >= total,
                    None => {
                        step.replicas.as_ref().and_then(Value::as_str).and_then(strategy::parse_whole_percent)
                            >= Some(100)
                    }
                }
        };
        if !reaches(&self.steps[i - 1]) {
            return own;
        }
        let reach = workload_replicas
            .map_or("all of the workload's, whatever their number,".into(), |total| format!("the workload's {total}"));
        let why = format!("the controller does not route this step: its replicas reach {reach} in a partition release");
        // A step the status's nextStepIndex jumps to is entered from the current step, not the
        // one before it in the list. The jump goes straight to StepTrafficRouting when both
        // steps ask for the same replicas (`doStepJump`), else through StepUpgrade, which skips
        // the routing of a full partition step: the gateway keeps what the current step left.
        let jump = self.pending_jump().filter(|_| jumps);
        if let (Some(Stage::Step(current)), true) = (self.current_stage(), jump == Some(i)) {
            if self.steps[current - 1].replicas == self.steps[i - 1].replicas {
                return own;
            }
            return StageRouting {
                action: self.routing_following(Stage::Step(current), workload_replicas, false).action,
                note: Some(format!("{why}, so the gateway keeps the routing of step {current}, which the jump leaves")),
            };
        }
        // The last step before it that the controller acts on: routed, or restored. Past a
        // pending jump's step, the steps run on from there.
        let jumped_to = jump.filter(|&target| target < i);
        let earlier = (jumped_to.unwrap_or(1)..i).rev().find(|&j| {
            let step = &self.steps[j - 1];
            !step.strategy.routes_traffic() || !reaches(step)
        });
        match (earlier, jumped_to) {
            (Some(j), _) => StageRouting {
                action: StageRouting::of(self.strategy_at(Stage::Step(j))).action,
                note: Some(format!("{why}, so the gateway keeps step {j}'s routing")),
            },
            (None, Some(target)) => StageRouting {
                action: self.routing_at(Stage::Step(target), workload_replicas).action,
                note: Some(format!(
                    "{why}, so the gateway keeps the routing left at step {target}, which the status's nextStepIndex jumps to"
                )),
            },
            (None, None) => StageRouting {
                action: RoutingAction::Leave,
                note: Some(format!("{why}, so the gateway keeps its routing from before the release")),
            },
        }
    }

    /// `IsRealPartition`: the new version's pods are a partition of the workload itself, which
    /// is every canary release except one in an extra `apps/v1` Deployment.
    pub fn is_real_partition(&self) -> bool {
        let deployment = self.workload.as_ref().is_some_and(|w| w.api_version == "apps/v1" && w.kind == "Deployment");
        self.kind == StrategyKind::Canary && !(self.enable_extra_workload_for_canary && deployment)
    }

    /// Whether the controller finishes step `index` without pausing: only a canary's last step
    /// with replicas literally `"100%"`; a blue-green last step waits for approval like any
    /// other (docs/controller-semantics.md §3.5 and §11).
    pub fn completes_without_pause(&self, index: usize) -> bool {
        self.kind == StrategyKind::Canary
            && index == self.steps.len()
            && self.steps[index - 1].replicas == Some(Value::String("100%".into()))
    }

    /// What a step does besides routing: replicas and pause.
    pub fn describe_step(&self, index: usize) -> (String, String) {
        let step = &self.steps[index - 1];
        let mut pause = step.describe_pause(self.completes_without_pause(index));
        if self.kind == StrategyKind::BlueGreen
            && index == self.steps.len()
            && step.replicas == Some(Value::String("100%".into()))
            && step.pause_seconds.is_none()
        {
            pause.push_str(" (a blue-green last step at 100% waits too)");
        }
        (step.describe_replicas(), pause)
    }

    /// Why nothing is planned for this Rollout, when the controller runs none of its steps.
    pub fn not_run(&self) -> Option<String> {
        self.disabled.then(|| {
            "spec.disabled is true: the controller runs no step of a disabled Rollout (a release in progress is finalised: its routing is restored, as `restore` plans it), so nothing is planned".to_string()
        })
    }

    /// Whether a release is in progress, as the phase says: the controller routes and restores
    /// the objects only then. Disabling and Terminating finalise a release in progress
    /// (docs/controller-semantics.md §3.6).
    pub fn releasing(&self) -> bool {
        matches!(self.status.phase.as_deref(), Some("Progressing" | "Disabling" | "Terminating"))
    }

    /// The current step from the status, when the index is a valid step.
    pub fn current_stage(&self) -> Option<Stage> {
        let index = usize::try_from(self.status.current_step_index?).ok()?;
        (1..=self.steps.len()).contains(&index).then_some(Stage::Step(index))
    }

    /// Why no current step is known of a status naming one past the spec's last step (the
    /// steps cut since it was written): said alike by every command.
    pub fn step_past_the_spec(&self) -> Option<String> {
        let index =
            self.status.current_step_index.filter(|&i| usize::try_from(i).is_ok_and(|i| i > self.steps.len()))?;
        Some(format!(
            "the status names step {index}, past the spec's last, step {} (the steps were changed since the status was written): which step the release is at is not known until the controller writes its status again",
            self.steps.len()
        ))
    }

    /// The current step as the status names it (`step 2/3`), one past the spec's last too
    /// (`step 7/3, past the spec's steps`), else `its step unknown`.
    pub fn current_step_label(&self) -> String {
        match (self.current_stage(), self.status.current_step_index) {
            (Some(stage), _) => self.stage_label(stage),
            (None, Some(index)) if self.step_past_the_spec().is_some() => {
                format!("step {index}/{}, past the spec's steps", self.steps.len())
            }
            _ => "its step unknown".into(),
        }
    }

    /// Whether a blue-green release met a new version of the workload, which the controller
    /// refuses to release in the middle of another: it runs no step until the workload is rolled
    /// back, and says so in the status's message (§3.6).
    pub fn blue_green_blocked(&self) -> bool {
        self.kind == StrategyKind::BlueGreen && self.status.message.as_deref() == Some(BLUE_GREEN_NEW_VERSION)
    }

    /// Whether a release is in progress past its start (Initializing), where the Rollout put its
    /// finalizer on the TrafficRouting its annotation names, if it did.
    pub fn release_started(&self) -> bool {
        self.releasing() && !self.initializing()
    }

    /// Why the status is not of the spec as read, when the controller has not acted on it yet
    /// (`metadata.generation` past the status's `observedGeneration`: the spec edited since its
    /// last reconcile, or the controller not running): its step and state are of the spec
    /// before, which may have other steps. None when either is missing, and while the Rollout is
    /// deleted (setting its deletionTimestamp moves the generation on too).
    pub fn spec_not_observed(&self) -> Option<String> {
        let (generation, observed) = (self.generation?, self.status.observed_generation?);
        (generation > observed && !self.being_deleted).then(|| {
            format!(
                "the controller has not acted on the Rollout's latest spec yet (generation {generation}, observed {observed}): its status (step, state) is of the spec before"
            )
        })
    }

    /// Whether the release is (re)initializing (Progressing reason `Initializing`): the controller
    /// starts it from step 1, whatever step a sub-status left names (§3.6's continuous release).
    pub fn initializing(&self) -> bool {
        self.status.condition("Progressing").is_some_and(|c| c.reason == "Initializing")
    }

    /// Whether the current step's routing is still to be done, so the controller routes it at
    /// every reconcile (§3.5): the step is before or in StepTrafficRouting, and routes traffic.
    pub fn routes_current_step_now(&self) -> bool {
        let state = self.status.current_step_state.as_deref();
        (self.status.before_step_traffic_routing() || state == Some("StepTrafficRouting"))
            && self.current_stage().is_some_and(|stage| self.strategy_at(stage).routes_traffic())
    }

    /// The step the controller jumps to at its next reconcile of a release in progress: the
    /// status's `nextStepIndex`, patched (`kubectl-kruise rollout undo --fast`, or by hand) to a
    /// step other than the one after the current (-1 at the last), as its `doStepJump` reads
    /// it, while the release progresses (not while it ends). It then routes that step, once its
    /// replicas are ready.
    pub fn pending_jump(&self) -> Option<usize> {
        let Stage::Step(current) = self.current_stage()? else { return None };
        let next = usize::try_from(self.status.next_step_index?).ok()?;
        let after = (current < self.steps.len()).then_some(current + 1);
        // A blocked blue-green release runs no step, and so takes no jump either.
        let progressing = self.releasing() && super::Ending::of(self).is_none() && !self.blue_green_blocked();
        (progressing && (1..=self.steps.len()).contains(&next) && Some(next) != after).then_some(next)
    }
}

fn read_steps(
    body: &Value,
    path: &Path,
    alpha: bool,
    semantics: Semantics,
    warnings: &mut Vec<FieldMessage>,
) -> Result<Vec<Step>, ModelError> {
    let items = match body.get("steps") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(Value::Array(_)) | None | Some(Value::Null) => return Err(path.error("must list at least one step")),
        Some(_) => return Err(path.error("must be a list")),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let at = path.index(i);
            if !step.is_object() {
                return Err(at.error("must be a map"));
            }
            let mut replicas = step.get("replicas").filter(|r| !r.is_null()).cloned();
            let traffic = if alpha {
                match step.get("weight").filter(|w| !w.is_null()) {
                    None => None,
                    Some(weight) => {
                        let w = strategy::int32(weight, &at.field("weight"))?;
                        // ConvertTo: weight N becomes traffic "N%", and replicas "N%" when unset.
                        replicas.get_or_insert_with(|| Value::String(format!("{w}%")));
                        Some(format!("{w}%"))
                    }
                }
            } else {
                strategy::optional_string(step.get("traffic"), &at.field("traffic"))?.map(str::to_string)
            };
            let matches = match step.get("matches").filter(|m| !m.is_null()) {
                // ConvertTo builds v1beta1 matches by appending, so an empty v1alpha1 list
                // becomes absent (v1beta1 keeps `[]`), and the conversion webhook's JSON leaves
                // out a match's empty `headers: []`.
                Some(m) if alpha => Some(strategy::without_empty_lists(&read_matches(
                    m,
                    &at.field("matches"),
                    alpha,
                    semantics,
                    warnings,
                )?))
                .filter(|m| !m.is_empty()),
                Some(m) => Some(read_matches(m, &at.field("matches"), alpha, semantics, warnings)?),
                None => None,
            };
            let request_header_modifier = match step.get("requestHeaderModifier").filter(|m| !m.is_null()) {
                Some(m) => Some(read_header_modifier(m, &at.field("requestHeaderModifier"))?),
                None => None,
            };
            let strategy = RouteStrategy { traffic, matches, request_header_modifier };
            Ok(Step { strategy, replicas, pause_seconds: step["pause"]["duration"].as_i64() })
        })
        .collect()
}

/// `trafficRoutings[0]`, the only entry the controller uses (the webhook allows one).
fn read_traffic_routings(body: &Value, path: &Path) -> Result<Option<TrafficRoutingRef>, ModelError> {
    match body.get("trafficRoutings") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => {
            items.first().map(|first| TrafficRoutingRef::read(first, &path.index(0))).transpose()
        }
        Some(_) => Err(path.error("must be a list")),
    }
}

fn read_status(status: &Value, kind: StrategyKind) -> RolloutStatus {
    let sub = &status[kind.status_field()];
    let (replicas, ready) = match kind {
        StrategyKind::Canary => ("canaryReplicas", "canaryReadyReplicas"),
        StrategyKind::BlueGreen => ("updatedReplicas", "updatedReadyReplicas"),
    };
    let text = |v: &Value| v.as_str().map(str::to_string);
    RolloutStatus {
        observed_generation: status["observedGeneration"].as_i64(),
        phase: text(&status["phase"]),
        message: text(&status["message"]),
        current_step_index: sub["currentStepIndex"].as_i64(),
        next_step_index: sub["nextStepIndex"].as_i64(),
        current_step_state: text(&sub["currentStepState"]),
        last_update_time: text(&sub["lastUpdateTime"]),
        finalising_step: text(&sub["finalisingStep"]),
        pod_template_hash: text(&sub["podTemplateHash"]).filter(|hash| !hash.is_empty()),
        canary_replicas: sub[replicas].as_i64(),
        canary_ready_replicas: sub[ready].as_i64(),
        has_sub_status: sub.is_object(),
        conditions: status["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| Condition {
                kind: c["type"].as_str().unwrap_or_default().into(),
                status: c["status"].as_str().unwrap_or_default().into(),
                reason: c["reason"].as_str().unwrap_or_default().into(),
                message: c["message"].as_str().unwrap_or_default().into(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_suggested_command_names_the_rollouts_namespace_when_known() {
        assert_eq!(rollout_args("shop", "demo"), "demo -n shop");
        assert_eq!(rollout_args("", "demo"), "demo");
    }

    fn rollout(v: Value) -> Result<Rollout, ModelError> {
        Rollout::from_object(&v)
    }

    #[test]
    fn a_name_that_is_not_a_string_is_said_to_be_one() {
        let named = |name: Value| {
            let object = json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": name},
                "spec": {"strategy": {"canary": {"steps": [{"replicas": 1}]}}}});
            rollout(object).err().map(|e| e.to_string())
        };
        // `name: 0123` in YAML is the number 83.
        assert_eq!(named(json!(83)).as_deref(), Some("metadata.name: must be a string, not 83"));
        assert_eq!(named(Value::Null).as_deref(), Some("metadata.name: is required"));
        assert_eq!(named(json!("demo")), None);
    }

    #[test]
    fn a_spec_the_controller_has_not_acted_on_is_told_by_its_generation() {
        let with = |generation: Value, observed: Value| {
            let object = json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
                "metadata": {"name": "demo", "generation": generation},
                "spec": {"strategy": {"canary": {"steps": [{"replicas": 1}]}}},
                "status": {"observedGeneration": observed, "phase": "Healthy"}});
            rollout(object).unwrap().spec_not_observed()
        };
        assert_eq!(
            with(json!(5), json!(4)).as_deref(),
            Some(
                "the controller has not acted on the Rollout's latest spec yet (generation 5, observed 4): its status (step, state) is of the spec before"
            )
        );
        assert_eq!(with(json!(4), json!(4)), None);
        let mut deleted = rollout(json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "demo", "generation": 5, "deletionTimestamp": "2026-12-04T00:00:00Z"},
            "spec": {"strategy": {"canary": {"steps": [{"replicas": 1}]}}}, "status": {"observedGeneration": 4}}))
        .unwrap();
        assert_eq!(deleted.spec_not_observed(), None, "the delete moved the generation on");
        deleted.being_deleted = false;
        assert!(deleted.spec_not_observed().is_some());
        assert_eq!(with(json!(4), json!(5)), None, "a status written after another edit");
        // A controller that writes no observedGeneration, or a manifest without a generation.
        assert_eq!(with(json!(5), Value::Null), None);
        assert_eq!(with(Value::Null, json!(4)), None);
    }

    #[test]
    fn an_approved_step_is_recognised_after_the_controller_moved_on() {
        let at = |index: i64, state: &str| json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": index, "currentStepState": state}});
        let progress = |status: Value| approval_progress(&status, "canaryStatus", 2);
        assert_eq!(progress(at(2, "StepPaused")), ApprovalProgress::Waiting);
        assert_eq!(progress(at(2, "StepUpgrade")), ApprovalProgress::Waiting, "the step started over");
        assert_eq!(progress(at(2, "StepReady")), ApprovalProgress::Approved);
        assert_eq!(progress(at(2, "Completed")), ApprovalProgress::Approved, "the last step");
        assert_eq!(progress(at(3, "StepUpgrade")), ApprovalProgress::Approved, "the next step");
        assert_eq!(progress(at(3, "StepPaused")), ApprovalProgress::Approved);
        assert_eq!(progress(json!({"phase": "Healthy"})), ApprovalProgress::Approved, "the release is over");
        assert_eq!(progress(at(1, "StepPaused")), ApprovalProgress::Elsewhere, "an earlier step");
        assert_eq!(progress(at(2, "SomethingNew")), ApprovalProgress::Elsewhere);
        assert_eq!(progress(json!({"phase": "Progressing"})), ApprovalProgress::Elsewhere);
        let blue_green = json!({"blueGreenStatus": {"currentStepIndex": 3, "currentStepState": "StepUpgrade"}});
        assert_eq!(approval_progress(&blue_green, "blueGreenStatus", 2), ApprovalProgress::Approved);
    }

    #[test]
    fn reads_v1beta1_canary() {
        let r = rollout(json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "demo", "namespace": "ns"},
            "spec": {"strategy": {"canary": {
                "steps": [{"traffic": "20%", "replicas": 1}, {"matches": [{"headers": [{"name": "a", "value": "b"}]}]}],
                "trafficRoutings": [{"service": "svc", "customNetworkRefs": [{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "vs"}]}]
            }}},
            "status": {"phase": "Progressing", "canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepPaused"}}
        }))
        .unwrap();
        assert_eq!(r.stages(), vec![Stage::Step(1), Stage::Step(2)]);
        assert_eq!(r.strategy_at(Stage::Step(1)).weights(), (20, 80));
        assert_eq!(r.current_stage(), Some(Stage::Step(2)));
        assert_eq!(r.status.current_step_state.as_deref(), Some("StepPaused"));
        let routing = r.traffic_routing.unwrap();
        assert_eq!(routing.grace_period_seconds, 3);
        assert_eq!(routing.custom_network_refs[0].group(), "networking.istio.io");
        // Where it is, for messages naming the line of a ref.
        let custom_ref = routing.field.join(&TrafficRoutingRef::custom_ref_field(0));
        assert_eq!(custom_ref.to_string(), "spec.strategy.canary.trafficRoutings[0].customNetworkRefs[0]");
    }

    #[test]
    fn converts_v1alpha1_like_the_controller() {
        let r = rollout(json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "Rollout",
            "metadata": {"name": "demo", "annotations": {"rollouts.kruise.io/rolling-style": "Partition", "rollouts.kruise.io/trafficrouting": "tr"}},
            "spec": {"objectRef": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}}, "strategy": {"canary": {
                "disableGenerateCanaryService": true,
                "steps": [{"weight": 20}, {"matches": [{"headers": [{"name": "a", "value": "b"}], "path": {"value": "/x"}}], "replicas": 2}],
                "trafficRoutings": [{"service": "svc"}]
            }}}
        }))
        .unwrap();
        assert_eq!(r.steps[0].strategy.traffic.as_deref(), Some("20%"));
        assert_eq!(r.steps[0].replicas, Some(json!("20%")));
        assert_eq!(
            r.steps[1].strategy.matches,
            Some(vec![json!({"headers": [{"type": "Exact", "name": "a", "value": "b"}]})])
        );
        assert!(!r.enable_extra_workload_for_canary);
        assert!(!r.disable_generate_canary_service, "dropped by the conversion");
        assert_eq!(r.traffic_routing_cr.as_deref(), Some("tr"));
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    }

    #[test]
    fn blue_green_ends_with_all_traffic_to_new() {
        let r = rollout(json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "bg"},
            "spec": {"strategy": {"blueGreen": {
                "steps": [{"traffic": "0%", "replicas": "100%"}, {"traffic": "50%", "replicas": "100%", "requestHeaderModifier": {"set": [{"name": "x", "value": "y"}]}}],
                "trafficRoutings": [{"service": "svc"}]
            }}}
        }))
        .unwrap();
        assert_eq!(r.stages().last(), Some(&Stage::BlueGreenFinal));
        let last = r.strategy_at(Stage::BlueGreenFinal);
        assert_eq!(last.weights(), (100, 0));
        assert_eq!(last.matches, None);
        assert!(last.request_header_modifier.is_some());
    }

    #[test]
    fn rejects_what_makes_no_sense() {
        let base = |strategy: Value| json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "x"}, "spec": {"strategy": strategy}});
        let err = |v: Value| rollout(v).unwrap_err().to_string();
        assert_eq!(err(base(json!({}))), "spec.strategy must have exactly one of canary and blueGreen");
        assert_eq!(
            err(base(json!({"canary": {"steps": []}}))),
            "spec.strategy.canary.steps: must list at least one step"
        );
        assert_eq!(
            err(base(json!({"canary": {"steps": [{"traffic": 20}]}}))),
            "spec.strategy.canary.steps[0].traffic: must be a string, not 20"
        );
        for (api_version, shown) in [
            (json!("apps/v1"), "\"apps/v1\""),
            (json!("rollouts.kruise.io/v1"), "\"rollouts.kruise.io/v1\""),
            (Value::Null, "\"\""),
        ] {
            assert_eq!(
                err(json!({"apiVersion": api_version, "kind": "Rollout"})),
                format!("not a Rollout of rollouts.kruise.io/v1alpha1 or v1beta1 (apiVersion {shown})")
            );
        }
    }

    fn canary(steps: Value, extra: Value) -> Rollout {
        let mut canary = json!({"steps": steps, "trafficRoutings": [{"service": "svc", "customNetworkRefs": []}]});
        canary.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        rollout(json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "demo"},
            "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "demo"}, "strategy": {"canary": canary}}
        }))
        .unwrap()
    }

    #[test]
    fn a_partition_step_reaching_the_workload_is_not_routed() {
        let steps = json!([
            {"replicas": 1, "traffic": "20%"},
            {"replicas": 2, "traffic": "50%"},
            {"replicas": 4, "traffic": "80%"},
            {"replicas": 4}
        ]);
        let partition = canary(steps.clone(), json!({}));
        let route =
            |traffic: &str| RoutingAction::Route(RouteStrategy { traffic: Some(traffic.into()), ..Default::default() });
        // Below the workload's replicas every routed step is routed.
        assert_eq!(
            partition.routing_at(Stage::Step(3), Some(5)),
            StageRouting::of(partition.strategy_at(Stage::Step(3)))
        );
        // At them, the step keeps the routing of the step before.
        let full = partition.routing_at(Stage::Step(3), Some(4));
        assert_eq!(full.action, route("50%"));
        assert!(full.note.unwrap().contains(
            "its replicas reach the workload's 4 in a partition release, so the gateway keeps step 2's routing"
        ));
        // Two full steps in a row: both keep the last routed one's.
        assert_eq!(partition.routing_at(Stage::Step(3), Some(2)).action, route("20%"));
        assert_eq!(partition.routing_at(Stage::Step(2), Some(2)).action, route("20%"));
        // The first step already full: nothing before it was routed.
        let first = partition.routing_at(Stage::Step(1), Some(1));
        assert_eq!(first.action, RoutingAction::Leave);
        assert!(first.note.unwrap().contains("keeps its routing from before the release"));
        // A step without traffic restores, whatever the replicas; unknown replicas assume below.
        assert_eq!(partition.routing_at(Stage::Step(4), Some(4)).action, RoutingAction::Restore);
        assert_eq!(partition.routing_at(Stage::Step(3), None).action, route("80%"));
        assert!(partition.routing_depends_on_workload(Stage::Step(3)), "an assumption");
        assert!(!partition.routing_depends_on_workload(Stage::Step(4)), "no traffic: restored whatever the count");
        // But a share of 100% or more reaches a workload of any size.
        let shares = canary(
            json!([{"replicas": "20%", "traffic": "20%"}, {"replicas": "99%", "traffic": "50%"},
                   {"replicas": "100%", "traffic": "100%"}]),
            json!({}),
        );
        assert_eq!(shares.routing_at(Stage::Step(2), None).action, route("50%"));
        assert!(shares.routing_depends_on_workload(Stage::Step(2)), "99% of one replica is one");
        assert!(!shares.routing_depends_on_workload(Stage::Step(3)));
        let full = shares.routing_at(Stage::Step(3), None);
        assert_eq!(full.action, route("50%"));
        assert!(full.note.unwrap().contains(
            "reach all of the workload's, whatever their number, in a partition release, so the gateway keeps step 2's routing"
        ));
        // A canary in an extra Deployment is no partition: every step is routed.
        let extra = canary(steps, json!({"enableExtraWorkloadForCanary": true}));
        assert!(!extra.is_real_partition());
        assert!(!extra.routing_depends_on_workload(Stage::Step(3)));
        assert_eq!(extra.routing_at(Stage::Step(3), Some(4)).action, route("80%"));
    }

    #[test]
    fn a_full_partition_step_reached_by_a_jump_keeps_the_routing_the_jump_leaves() {
        // With a workload of 3 replicas, steps 3 to 6 are full.
        let steps = json!([
            {"replicas": 1, "traffic": "20%"},
            {"replicas": 2, "traffic": "50%"},
            {"replicas": 4, "traffic": "80%"},
            {"replicas": 3, "traffic": "90%"},
            {"replicas": 4, "traffic": "95%"},
            {"replicas": 5, "traffic": "99%"}
        ]);
        let route =
            |traffic: &str| RoutingAction::Route(RouteStrategy { traffic: Some(traffic.into()), ..Default::default() });
        let at = |current: i64, next: i64| {
            let mut r = canary(steps.clone(), json!({}));
            r.status.phase = Some("Progressing".into());
            r.status.current_step_index = Some(current);
            r.status.next_step_index = Some(next);
            r
        };
        // In order, step 4 keeps step 2's routing.
        assert_eq!(at(3, 4).routing_at(Stage::Step(4), Some(3)).action, route("50%"));
        // Jumping from step 1 to step 4, the gateway keeps step 1's routing, not step 2's.
        let jumped = at(1, 4).routing_at(Stage::Step(4), Some(3));
        assert_eq!(jumped.action, route("20%"));
        assert!(jumped.note.unwrap().contains("so the gateway keeps the routing of step 1, which the jump leaves"));
        // A step the jump does not reach is planned as before.
        assert_eq!(at(1, 4).routing_at(Stage::Step(3), Some(3)).action, route("50%"));
        // Past the jump's step, the steps run on from there: step 5 keeps what step 4 kept.
        let after = at(1, 4).routing_at(Stage::Step(5), Some(3));
        assert_eq!(after.action, route("20%"));
        assert!(
            after.note.unwrap().contains("keeps the routing left at step 4, which the status's nextStepIndex jumps to")
        );
        // Back to a full step from a later one, every step between full too: the step it
        // leaves is planned in order (a regression: each asked the other, without end).
        let back = at(5, 4).routing_at(Stage::Step(6), Some(3));
        assert_eq!(back.action, route("50%"));
        assert_eq!(at(5, 4).routing_at(Stage::Step(4), Some(3)).action, route("50%"));
        // A blocked blue-green release takes no jump.
        let mut blocked = at(1, 4);
        blocked.kind = StrategyKind::BlueGreen;
        assert_eq!(blocked.pending_jump(), Some(4));
        blocked.status.message = Some(BLUE_GREEN_NEW_VERSION.into());
        assert_eq!(blocked.pending_jump(), None);
        // From a full step, what that step kept.
        assert_eq!(at(3, 6).routing_at(Stage::Step(6), Some(3)).action, route("50%"));
        // The same replicas as the current step: the jump routes the step at once, full or not.
        let same = at(3, 5);
        assert_eq!(same.routing_at(Stage::Step(5), Some(3)), StageRouting::of(same.strategy_at(Stage::Step(5))));
        // A workload of 10 replicas: no step is full, and the jump's target is routed.
        assert_eq!(at(1, 4).routing_at(Stage::Step(4), Some(10)).action, route("90%"));
    }

    #[test]
    fn after_a_restoring_step_a_full_step_keeps_the_original() {
        let r = canary(
            json!([{"replicas": 1, "traffic": "20%"}, {"replicas": 2}, {"replicas": 3, "traffic": "50%"}]),
            json!({}),
        );
        assert_eq!(r.routing_at(Stage::Step(3), Some(3)).action, RoutingAction::Restore);
    }

    #[test]
    fn only_a_canary_last_step_at_100_percent_skips_the_pause() {
        let steps = json!([{"replicas": 1, "traffic": "50%"}, {"replicas": "100%"}]);
        let canary_rollout = canary(steps.clone(), json!({}));
        assert!(canary_rollout.completes_without_pause(2));
        assert_eq!(canary_rollout.describe_step(2).1, "no pause (last step at 100% completes the release)");
        let blue_green = rollout(json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "bg"},
            "spec": {"strategy": {"blueGreen": {"steps": steps, "trafficRoutings": [{"service": "svc"}]}}}
        }))
        .unwrap();
        assert!(!blue_green.completes_without_pause(2));
        assert_eq!(blue_green.describe_step(2).1, "pause until approved (a blue-green last step at 100% waits too)");
    }

    #[test]
    fn v1alpha1_empty_matches_are_dropped_by_the_conversion() {
        let alpha = rollout(json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "demo"},
            "spec": {"strategy": {"canary": {"steps": [{"weight": 20, "matches": []}], "trafficRoutings": [{"service": "svc"}]}}}
        }))
        .unwrap();
        assert_eq!(alpha.steps[0].strategy.matches, None);
        let beta = canary(json!([{"replicas": 1, "traffic": "20%", "matches": []}]), json!({}));
        assert_eq!(beta.steps[0].strategy.matches, Some(vec![]), "v1beta1 keeps the empty list");
        // And a match's empty list: the webhook's JSON leaves it out, v1beta1 keeps it.
        let alpha = rollout(json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "demo"},
            "spec": {"strategy": {"canary": {"steps": [{"weight": 20, "matches": [{"headers": []}]}], "trafficRoutings": [{"service": "svc"}]}}}
        }))
        .unwrap();
        assert_eq!(alpha.steps[0].strategy.matches, Some(vec![json!({})]));
        let beta = canary(json!([{"replicas": 1, "traffic": "20%", "matches": [{"headers": []}]}]), json!({}));
        assert_eq!(beta.steps[0].strategy.matches, Some(vec![json!({"headers": []})]));
    }

    #[test]
    fn a_step_is_routed_only_once_its_pods_are_ready() {
        let at = |state: &str| RolloutStatus { current_step_state: Some(state.into()), ..RolloutStatus::default() };
        assert!(at("BeforeStepUpgrade").before_step_traffic_routing());
        assert!(at("StepUpgrade").before_step_traffic_routing());
        for state in ["StepTrafficRouting", "StepMetricsAnalysis", "StepPaused", "StepReady", "Completed"] {
            assert!(!at(state).before_step_traffic_routing(), "{state}");
        }
        assert!(!RolloutStatus::default().before_step_traffic_routing());
    }

    #[test]
    fn a_disabled_rollout_runs_no_step() {
        let mut r = canary(json!([{"replicas": 1, "traffic": "20%"}]), json!({}));
        assert_eq!(r.not_run(), None);
        r = rollout(json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "demo"},
            "spec": {"disabled": true, "strategy": {"canary": {"steps": [{"replicas": 1, "traffic": "20%"}]}}}
        }))
        .unwrap();
        assert!(r.not_run().unwrap().starts_with("spec.disabled is true: the controller runs no step"));
    }

    #[test]
    fn the_webhooks_rules_are_checked() {
        let shown = |messages: &[FieldMessage]| messages.iter().map(ToString::to_string).collect::<Vec<_>>();
        let rejections = |steps: Value, extra: Value| shown(&canary(steps, extra).rejections.webhook);
        assert_eq!(
            rejections(json!([{"replicas": 1, "traffic": "20%"}, {"replicas": "100%"}]), json!({})),
            Vec::<String>::new()
        );
        assert_eq!(
            rejections(
                json!([{"traffic": "-50%"}, {"replicas": 0, "traffic": "150%"}, {"replicas": "101%", "traffic": "20"}]),
                json!({})
            ),
            vec![
                "spec.strategy.canary.steps[0].replicas: required",
                "spec.strategy.canary.steps[0].traffic: \"-50%\" must be in (0%, 100%]",
                "spec.strategy.canary.steps[1].replicas: 0 must be a positive number, or a percentage in (0%, 100%]",
                "spec.strategy.canary.steps[1].traffic: \"150%\" must be in (0%, 100%]",
                "spec.strategy.canary.steps[2].replicas: \"101%\" must be a positive number, or a percentage in (0%, 100%]",
                "spec.strategy.canary.steps[2].traffic: \"20\" must be a whole percentage such as \"20%\" (the controller reads it as 0%)",
            ]
        );
        assert_eq!(
            rejections(
                json!([{"replicas": 2}, {"replicas": "50%"}, {"replicas": "40%", "traffic": "0%"}, {"replicas": 1}]),
                json!({})
            ),
            vec![
                "spec.strategy.canary.steps[2].traffic: \"0%\" must be in (0%, 100%]",
                "spec.strategy.canary.steps[2].replicas: \"40%\" is less than spec.strategy.canary.steps[1].replicas: replicas must not decrease",
            ],
            "only neighbouring steps of the same kind compare"
        );
        // A status naming a step past the spec's last is labelled as such.
        let mut past = canary(json!([{"replicas": 1, "traffic": "20%"}]), json!({}));
        assert_eq!(past.current_step_label(), "its step unknown");
        past.status.current_step_index = Some(1);
        assert_eq!(past.current_step_label(), "step 1/1");
        past.status.current_step_index = Some(4);
        assert_eq!(past.current_step_label(), "step 4/1, past the spec's steps");
        assert!(
            past.step_past_the_spec()
                .unwrap()
                .starts_with("the status names step 4, past the spec's last, step 1 (the steps were changed")
        );
        // What approving a step would write: only its own routing's faults.
        let faulty =
            canary(json!([{"replicas": 0, "traffic": "150%"}, {"replicas": "101%", "traffic": "20%"}]), json!({}));
        let routing =
            |step| shown(&faulty.routing_rejections(Stage::Step(step)).into_iter().cloned().collect::<Vec<_>>());
        assert_eq!(routing(1), ["spec.strategy.canary.steps[0].traffic: \"150%\" must be in (0%, 100%]"]);
        assert_eq!(routing(2), Vec::<String>::new(), "replicas are not routing");
        assert_eq!(faulty.routing_rejections(Stage::BlueGreenFinal), Vec::<&FieldMessage>::new());
        let matches: Vec<Value> = (0..17).map(|_| json!({"headers": [{"name": "a", "value": "b"}]})).collect();
        let too_many_matches = canary(
            json!([{"replicas": 1, "matches": matches}]),
            json!({"trafficRoutings": [{"service": "a", "gracePeriodSeconds": -1, "customNetworkRefs": []}, {"service": "b"}]}),
        );
        assert_eq!(
            shown(&too_many_matches.rejections.webhook),
            vec![
                "spec.strategy.canary.trafficRoutings: 2 entries, at most 1",
                "spec.strategy.canary.trafficRoutings[0].gracePeriodSeconds: -1 must not be negative",
                "spec.strategy.canary.trafficRoutings[1]: needs one of ingress, gateway and customNetworkRefs",
            ]
        );
        // The CRD's maxItems are the API server's own schema validation, not the webhook's (an
        // operator trial's M2).
        assert_eq!(
            shown(&too_many_matches.rejections.schema),
            vec!["spec.strategy.canary.steps[0].matches: 17 matches, at most 16"]
        );
        assert_eq!(too_many_matches.routing_rejections(Stage::Step(1)).len(), 1, "the schema's too");
        // The CRD's rules for matches and the header modifier, with the CEL rules' messages (a
        // custom-refs review: plan -f showed routing the API server never stores).
        let steps = json!([{"replicas": 1,
            "matches": [
                {"headers": [{"name": "a", "value": "1"}, {"name": "a", "value": "2"}, {"name": "a b", "value": ""}],
                 "queryParams": [{"name": "q", "value": ""}], "path": {"type": "PathPrefix", "value": "foo"}},
                {"path": {"type": "Exact", "value": "/a//b"}},
                {"path": {"type": "RegularExpression", "value": "^/x(//)?"}},
                {"path": {"value": "/ok%20path"}}],
            "requestHeaderModifier": {"set": [{"name": "x", "value": "1"}, {"name": "x", "value": "2"}], "remove": ["y", "y"]}}]);
        let when = "when type one of ['Exact', 'PathPrefix']";
        assert_eq!(
            shown(&canary(steps, json!({})).rejections.schema),
            vec![
                "spec.strategy.canary.steps[0].matches[0].headers[1].name: \"a\" is named twice (each name once in the list)".to_string(),
                "spec.strategy.canary.steps[0].matches[0].headers[2].name: \"a b\" must be 1 to 256 of the characters of an HTTP token (^[A-Za-z0-9!#$%&'*+\\-.^_`|~]+$)".into(),
                "spec.strategy.canary.steps[0].matches[0].headers[2].value: 0 characters, 1 to 4096 allowed".into(),
                "spec.strategy.canary.steps[0].matches[0].queryParams[0].value: 0 characters, 1 to 1024 allowed".into(),
                format!("spec.strategy.canary.steps[0].matches[0].path.value: \"foo\": value must be an absolute path and start with '/' {when}"),
                format!("spec.strategy.canary.steps[0].matches[1].path.value: \"/a//b\": must not contain '//' {when}"),
                "spec.strategy.canary.steps[0].requestHeaderModifier.set[1].name: \"x\" is named twice (each name once in the list)".into(),
                "spec.strategy.canary.steps[0].requestHeaderModifier.remove[1]: \"y\" is there twice (a set: each entry once)".into(),
            ]
        );
        // v1alpha1's headers are no keyed list.
        let alpha_headers = rollout(json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "demo"},
            "spec": {"strategy": {"canary": {"steps": [{"weight": 30, "matches": [{"headers": [{"name": "a", "value": "1"}, {"name": "a", "value": "2"}]}]}]}}}
        }))
        .unwrap();
        assert!(alpha_headers.rejections.schema.is_empty(), "{:?}", alpha_headers.rejections.schema);
        // The CRD's enums for a match's type: the API server's refusal, which go test's decoding
        // does not make (a case with one runs there), so a reading that goes on.
        let types = json!([{"replicas": 1, "matches": [
            {"headers": [{"name": "a", "value": "1", "type": "Prefix"}, {"name": "b", "value": "1", "type": "RegularExpression"}],
             "queryParams": [{"name": "q", "value": "1", "type": "exact"}], "path": {"type": "Regex", "value": "/"}},
            {"path": {"type": "RegularExpression", "value": "^/x"}}]}]);
        assert_eq!(
            shown(&canary(types, json!({})).rejections.schema),
            vec![
                "spec.strategy.canary.steps[0].matches[0].headers[0].type: must be one of Exact, RegularExpression, not \"Prefix\"",
                "spec.strategy.canary.steps[0].matches[0].queryParams[0].type: must be one of Exact, RegularExpression, not \"exact\"",
                "spec.strategy.canary.steps[0].matches[0].path.type: must be one of Exact, PathPrefix, RegularExpression, not \"Regex\"",
            ]
        );
        let alpha_type = rollout(json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "demo"},
            "spec": {"strategy": {"canary": {"steps": [{"weight": 30, "matches": [{"headers": [{"name": "a", "value": "1", "type": "Prefix"}]}]}]}}}
        }))
        .unwrap();
        assert_eq!(
            shown(&alpha_type.rejections.schema),
            vec![
                "spec.strategy.canary.steps[0].matches[0].headers[0].type: must be one of Exact, RegularExpression, not \"Prefix\""
            ]
        );
        let many: Vec<Value> = (0..51).map(|_| json!({"replicas": 1})).collect();
        let many_steps = canary(Value::Array(many), json!({})).rejections;
        assert_eq!(shown(&many_steps.schema), vec!["spec.strategy.canary.steps: 51 steps, at most 50"]);
        assert!(many_steps.webhook.is_empty() && !many_steps.is_empty());
        // Blue-green allows 0% traffic; v1alpha1 names weight and wants it not to decrease.
        let blue_green = rollout(json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "bg"},
            "spec": {"strategy": {"blueGreen": {"steps": [{"replicas": "100%", "traffic": "0%"}, {"replicas": "100%", "traffic": "-1%"}]}}}
        }))
        .unwrap();
        assert_eq!(
            shown(&blue_green.rejections.webhook),
            vec!["spec.strategy.blueGreen.steps[1].traffic: \"-1%\" must be in [0%, 100%]"]
        );
        let alpha = rollout(json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "demo"},
            "spec": {"strategy": {"canary": {"steps": [{"weight": 30}, {"weight": -20}]}}}
        }))
        .unwrap();
        assert_eq!(
            shown(&alpha.rejections.webhook),
            vec![
                "spec.strategy.canary.steps[1].weight: -20 must be in (0%, 100%]",
                "spec.strategy.canary.steps[1].weight: -20 is less than spec.strategy.canary.steps[0].weight 30: weights must not decrease",
            ]
        );
        // Each names its field, for a file's line: the one written (v1alpha1's weight).
        let fields = |messages: &[FieldMessage]| messages.iter().map(|m| m.field.to_string()).collect::<Vec<_>>();
        assert_eq!(
            fields(&canary(json!([{"traffic": "-50%"}]), json!({})).rejections.webhook),
            ["spec.strategy.canary.steps[0].replicas", "spec.strategy.canary.steps[0].traffic"]
        );
        assert_eq!(fields(&alpha.rejections.webhook), ["spec.strategy.canary.steps[1].weight"; 2]);
        // The controller uses the first of several trafficRoutings.
        let two = canary(
            json!([{"replicas": 1}]),
            json!({"trafficRoutings": [{"service": "a", "customNetworkRefs": []}, {"service": "b", "customNetworkRefs": []}]}),
        );
        assert_eq!(two.traffic_routing.unwrap().service, "a");
    }
}
