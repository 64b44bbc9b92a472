//! Whether a Rollout's release is ending or over, and why (docs/controller-semantics.md §1.6 and
//! §3.6). Then the controller's next routing write is the restore of the original routing, or
//! nothing, whatever step the status still names: the sub-status outlives the release.

use super::{Rollout, StrategyKind};

/// Why a Rollout's release is ending (the controller restores the original routing next) or
/// over (it has restored it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every step is done: state `Completed`, Progressing reason `Finalising`, or a
    /// `finalisingStep` under way.
    Finalising,
    /// Progressing reason `Cancelling`: the workload went back to its stable version.
    RolledBack,
    /// `spec.disabled`, or phase `Disabling` or `Disabled`: a release in progress is finalised
    /// and no step runs.
    Disabled,
    /// Phase `Terminating`, or a deletion timestamp (the phase comes later): the Rollout is
    /// being deleted, and its release finalised first.
    Deleted,
    /// Phase `Healthy`, or Progressing reason `Completed` (the finalising done, or a cancel's,
    /// before the phase says so): no release is in progress; a sub-status left is the last
    /// release's.
    Over,
}

/// The `finalisingStep`s of the tasks that write routing (§1.6): unlike the others, the
/// controller's values for them keep the constant's prefix.
const ROUTE_TO_NEW: &str = "FinalisingStepRouteTrafficToNew";
const ROUTE_TO_STABLE: &str = "FinalisingStepRouteTrafficToStable";

impl Ending {
    /// Why `rollout`'s release is ending or over, if it is. The phase comes first: a status
    /// left from a finished release keeps its last step and state `Completed`.
    pub fn of(rollout: &Rollout) -> Option<Ending> {
        let status = &rollout.status;
        let phase = status.phase.as_deref();
        let reason = status.condition("Progressing").map(|c| c.reason.as_str());
        if phase == Some("Terminating") || rollout.being_deleted {
            Some(Ending::Deleted)
        } else if rollout.disabled || matches!(phase, Some("Disabling" | "Disabled")) {
            Some(Ending::Disabled)
        } else if phase == Some("Healthy") || reason == Some("Completed") {
            Some(Ending::Over)
        } else if reason == Some("Cancelling") {
            Some(Ending::RolledBack)
        } else if status.current_step_state.as_deref() == Some("Completed")
            || reason == Some("Finalising")
            || status.finalising_step.as_deref().is_some_and(|step| !step.is_empty())
        {
            Some(Ending::Finalising)
        } else {
            None
        }
    }

    /// Whether the controller restores the original routing next (every ending but `Over`).
    pub fn restores(self) -> bool {
        self != Ending::Over
    }

    /// `the release is finalising`, …: what is happening, as the subject of a sentence.
    pub fn describe(self) -> &'static str {
        match self {
            Ending::Finalising => "the release is finalising",
            Ending::RolledBack => "the release is being rolled back (Cancelling)",
            Ending::Disabled => "the Rollout is disabled",
            Ending::Deleted => "the Rollout is being deleted",
            Ending::Over => "the release is over",
        }
    }

    /// Whether the controller's finalising of `rollout` is past `task`, as its `finalisingStep`
    /// (the task it runs now) places it in the sequence of this ending (§3.6): a blue-green
    /// success's `ROUTE_TO_NEW` (all traffic to the new version), `ROUTE_TO_STABLE` (the
    /// original routing restored).
    fn past(self, rollout: &Rollout, task: &str) -> bool {
        const CANARY_SUCCESS: &[&str] = &[
            "RestoreStableService",
            ROUTE_TO_STABLE,
            "RemoveCanaryService",
            "ResumeWorkload",
            "ReleaseWorkloadControl",
            "END",
        ];
        const CANARY_ROLLBACK: &[&str] = &[
            ROUTE_TO_STABLE,
            "ResumeWorkload",
            "ReleaseWorkloadControl",
            "RestoreStableService",
            "RemoveCanaryService",
            "END",
        ];
        const BLUE_GREEN_SUCCESS: &[&str] = &[
            ROUTE_TO_NEW,
            "RestoreStableService",
            "ResumeWorkload",
            ROUTE_TO_STABLE,
            "RemoveCanaryService",
            "ReleaseWorkloadControl",
            "END",
        ];
        const BLUE_GREEN_ROLLBACK: &[&str] = &[
            ROUTE_TO_STABLE,
            "ResumeWorkload",
            "RestoreStableService",
            "RemoveCanaryService",
            "ReleaseWorkloadControl",
            "END",
        ];
        let sequence = match (self, rollout.kind) {
            (Ending::Finalising, StrategyKind::BlueGreen) => BLUE_GREEN_SUCCESS,
            (Ending::RolledBack, StrategyKind::BlueGreen) => BLUE_GREEN_ROLLBACK,
            (Ending::RolledBack, StrategyKind::Canary) => CANARY_ROLLBACK,
            _ => CANARY_SUCCESS,
        };
        let at = |task: &str| sequence.iter().position(|t| *t == task);
        let now = rollout.status.finalising_step.as_deref().and_then(at);
        now.zip(at(task)).is_some_and(|(now, task)| now > task)
    }

    /// Whether the controller's finalising is past its restore of the routing: it restores no
    /// object again in this release (§3.6).
    pub fn restored(self, rollout: &Rollout) -> bool {
        self.past(rollout, ROUTE_TO_STABLE)
    }

    /// Whether a blue-green release that succeeded still routes all traffic to the new version
    /// before it restores (its finalising's first task is not done).
    pub fn routes_to_new_next(self, rollout: &Rollout) -> bool {
        self == Ending::Finalising && rollout.kind == StrategyKind::BlueGreen && !self.past(rollout, ROUTE_TO_NEW)
    }

    /// What it does to the gateway objects, and why: `the release is finalising: the controller
    /// restores the original routing`. A blue-green release that succeeded first routes all
    /// traffic to the new version (§3.6). A finalising under way says what it has done.
    pub fn explain(self, rollout: &Rollout) -> String {
        let next = match (self, rollout.kind) {
            (Ending::Over, _) => "the controller restored the original routing when it ended",
            _ if self.restored(rollout) => "the controller has restored the original routing, and finishes the rest",
            (Ending::Finalising, StrategyKind::BlueGreen) if self.past(rollout, ROUTE_TO_NEW) => {
                "the controller has routed all traffic to the new version, and restores the original routing next"
            }
            (Ending::Finalising, StrategyKind::BlueGreen) => {
                "the controller routes all traffic to the new version, then restores the original routing"
            }
            (Ending::Finalising | Ending::RolledBack | Ending::Deleted, _) => {
                "the controller restores the original routing"
            }
            (Ending::Disabled, _) => {
                "the controller restores the original routing of a release in progress and runs no step"
            }
        };
        format!("{}: {next}", self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn rollout(disabled: bool, status: Value) -> Rollout {
        Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "demo"},
            "spec": {"disabled": disabled,
                     "strategy": {"canary": {"steps": [{"replicas": 1, "traffic": "20%"}, {"replicas": 2, "traffic": "50%"}]}}},
            "status": status
        }))
        .unwrap()
    }

    fn ending(status: Value) -> Option<Ending> {
        Ending::of(&rollout(false, status))
    }

    fn progressing(reason: &str) -> Value {
        json!([{"type": "Progressing", "status": "True", "reason": reason}])
    }

    #[test]
    fn a_release_in_progress_is_not_ending() {
        for state in ["BeforeStepUpgrade", "StepUpgrade", "StepTrafficRouting", "StepPaused", "StepReady"] {
            let status = json!({"phase": "Progressing", "conditions": progressing("InRolling"),
                "canaryStatus": {"currentStepIndex": 2, "currentStepState": state, "finalisingStep": ""}});
            assert_eq!(ending(status), None, "{state}");
        }
        assert_eq!(ending(json!({})), None, "no status");
        assert_eq!(ending(json!({"phase": "Initial"})), None);
    }

    #[test]
    fn every_step_done_is_finalising() {
        let completed =
            json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": 2, "currentStepState": "Completed"}});
        assert_eq!(ending(completed), Some(Ending::Finalising));
        let reason = json!({"phase": "Progressing", "conditions": progressing("Finalising"),
            "canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepReady"}});
        assert_eq!(ending(reason), Some(Ending::Finalising));
        let step = json!({"phase": "Progressing",
            "canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepPaused", "finalisingStep": "RemoveCanaryService"}});
        assert_eq!(ending(step), Some(Ending::Finalising));
    }

    #[test]
    fn cancelling_is_a_roll_back_even_while_finalising() {
        let status = json!({"phase": "Progressing", "conditions": progressing("Cancelling"),
            "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused", "finalisingStep": "FinalisingStepRouteTrafficToStable"}});
        assert_eq!(ending(status), Some(Ending::RolledBack));
    }

    #[test]
    fn disabled_and_deleted_come_from_the_spec_and_the_phase() {
        let paused =
            json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}});
        assert_eq!(Ending::of(&rollout(true, paused.clone())), Some(Ending::Disabled));
        for phase in ["Disabling", "Disabled"] {
            assert_eq!(ending(json!({"phase": phase})), Some(Ending::Disabled), "{phase}");
        }
        let terminating = json!({"phase": "Terminating", "canaryStatus": paused["canaryStatus"]});
        assert_eq!(ending(terminating), Some(Ending::Deleted));
        // Deleted before the controller has written the phase (or while it is down).
        let mut deleted = rollout(false, paused);
        assert_eq!(Ending::of(&deleted), None);
        deleted.being_deleted = true;
        assert_eq!(Ending::of(&deleted), Some(Ending::Deleted));
    }

    #[test]
    fn a_healthy_rollout_is_over_whatever_its_sub_status_says() {
        let stale = json!({"phase": "Healthy", "conditions": progressing("Completed"),
            "canaryStatus": {"currentStepIndex": 2, "currentStepState": "Completed", "finalisingStep": "END"}});
        assert_eq!(ending(stale), Some(Ending::Over));
        assert_eq!(ending(json!({"phase": "Healthy"})), Some(Ending::Over));
        // Reason Completed: the finalising is done (a cancel's too), though the phase and the
        // sub-status (a controller before finalisingStep, or a read before the phase changes)
        // still say Progressing at a paused step (a lifecycle review: approve routed it).
        let done = json!({"phase": "Progressing", "conditions": progressing("Completed"),
            "canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepPaused"}});
        assert_eq!(ending(done), Some(Ending::Over));
        assert!(!Ending::Over.restores());
        assert!(Ending::RolledBack.restores());
    }

    #[test]
    fn each_ending_says_what_the_controller_does_to_the_routing() {
        let canary = rollout(false, json!({}));
        let mut blue_green = canary.clone();
        blue_green.kind = StrategyKind::BlueGreen;
        assert_eq!(
            Ending::Finalising.explain(&canary),
            "the release is finalising: the controller restores the original routing"
        );
        assert_eq!(
            Ending::Finalising.explain(&blue_green),
            "the release is finalising: the controller routes all traffic to the new version, then restores the original routing"
        );
        assert_eq!(
            Ending::RolledBack.explain(&canary),
            "the release is being rolled back (Cancelling): the controller restores the original routing"
        );
        assert_eq!(
            Ending::Disabled.explain(&canary),
            "the Rollout is disabled: the controller restores the original routing of a release in progress and runs no step"
        );
        assert_eq!(
            Ending::Over.explain(&canary),
            "the release is over: the controller restored the original routing when it ended"
        );
        assert!(Ending::Finalising.routes_to_new_next(&blue_green));
        assert!(!Ending::Finalising.routes_to_new_next(&canary) && !Ending::RolledBack.routes_to_new_next(&blue_green));
    }

    #[test]
    fn a_finalising_under_way_says_what_it_has_done_by_its_finalising_step() {
        // A lifecycle review: the route to the new version was planned after it was done.
        let at = |kind: StrategyKind, task: &str| {
            let mut rollout = rollout(false, json!({}));
            rollout.kind = kind;
            rollout.status.finalising_step = Some(task.into());
            rollout
        };
        let (canary, blue_green) = (StrategyKind::Canary, StrategyKind::BlueGreen);
        let restored = "the controller has restored the original routing, and finishes the rest";
        let cases = [
            // Each sequence of §3.6: the task it runs now; the restore done once past its own.
            (Ending::Finalising, canary, "RestoreStableService", "the controller restores the original routing"),
            (
                Ending::Finalising,
                canary,
                "FinalisingStepRouteTrafficToStable",
                "the controller restores the original routing",
            ),
            (Ending::Finalising, canary, "RemoveCanaryService", restored),
            (Ending::Finalising, canary, "END", restored),
            (Ending::RolledBack, canary, "ResumeWorkload", restored),
            (Ending::Disabled, blue_green, "RemoveCanaryService", restored),
            (
                Ending::Finalising,
                blue_green,
                "FinalisingStepRouteTrafficToNew",
                "the controller routes all traffic to the new version, then restores the original routing",
            ),
            (
                Ending::Finalising,
                blue_green,
                "ResumeWorkload",
                "the controller has routed all traffic to the new version, and restores the original routing next",
            ),
            // Past the route to the new version, at the restore: a regression, the values were
            // matched without their prefix, and this was taken for the route to come.
            (
                Ending::Finalising,
                blue_green,
                "FinalisingStepRouteTrafficToStable",
                "the controller has routed all traffic to the new version, and restores the original routing next",
            ),
            (Ending::Finalising, blue_green, "RemoveCanaryService", restored),
            (Ending::RolledBack, blue_green, "RestoreStableService", restored),
            (Ending::Finalising, canary, "WaitEndless", "the controller restores the original routing"),
        ];
        for (ending, kind, task, does) in cases {
            let rollout = at(kind, task);
            assert_eq!(
                ending.explain(&rollout),
                format!("{}: {does}", ending.describe()),
                "{ending:?} {kind:?} {task}"
            );
        }
        assert!(!Ending::Finalising.routes_to_new_next(&at(blue_green, "ResumeWorkload")));
        assert!(!Ending::Finalising.routes_to_new_next(&at(blue_green, "FinalisingStepRouteTrafficToStable")));
        assert!(Ending::Finalising.routes_to_new_next(&at(blue_green, "FinalisingStepRouteTrafficToNew")));
    }
}
