//! What the controller does to the gateway objects at a stage, which is not always what the
//! stage's strategy asks for (docs/controller-semantics.md §3.5 and §11), and the workload
//! replica count that decision needs.

use super::{RouteStrategy, WeightSplit};
use serde_json::Value;

/// What the controller writes to each gateway object at a stage.
#[derive(Clone, Debug, PartialEq)]
pub enum RoutingAction {
    /// Runs each object's script with this strategy and writes the result.
    Route(RouteStrategy),
    /// Puts the stored original back (an object without one is left alone).
    Restore,
    /// Writes nothing: the objects stay as they are.
    Leave,
}

/// A stage's routing as the controller performs it.
#[derive(Clone, Debug, PartialEq)]
pub struct StageRouting {
    pub action: RoutingAction,
    /// Why the controller does something other than the stage's own strategy says, in words.
    pub note: Option<String>,
}

impl StageRouting {
    /// The stage's own strategy, as the controller applies it: routed when it has traffic or
    /// matches, else the stored original restored.
    pub fn of(strategy: RouteStrategy) -> StageRouting {
        let action = if strategy.routes_traffic() { RoutingAction::Route(strategy) } else { RoutingAction::Restore };
        StageRouting { action, note: None }
    }

    /// Whether the controller does not route the stage (a partition step that reaches the
    /// workload's replicas; `Rollout::routing_at`).
    pub fn unrouted(&self) -> bool {
        self.note.is_some()
    }

    /// What the stage asks for (`asked`, its own strategy, its weights said as `split` has
    /// them), and why the controller does otherwise when it does.
    pub fn describe(&self, asked: &RouteStrategy, split: &WeightSplit) -> String {
        match &self.note {
            Some(note) => format!("{} ({note})", asked.describe_split(split)),
            None => asked.describe_split(split),
        }
    }
}

/// The workload's replica count as the controller reads it (`Workload.Replicas` in
/// `pkg/util/controller_finder.go`): `spec.replicas` (the API server defaults it to 1), or for a
/// DaemonSet `status.desiredNumberScheduled`. `None` when it cannot be told.
pub fn workload_replicas(workload: &Value) -> Option<i64> {
    if workload["kind"] == "DaemonSet" {
        return workload["status"]["desiredNumberScheduled"].as_i64();
    }
    match workload["spec"].get("replicas") {
        None | Some(Value::Null) => Some(1),
        Some(replicas) => replicas.as_i64(),
    }
}

/// Go's `intstr.GetScaledValueFromIntOrPercent(replicas, total, true)` with the error ignored
/// (0), as the controller calls it for a step's replicas.
pub fn scaled_replicas(replicas: Option<&Value>, total: i64) -> i64 {
    match replicas {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => super::strategy::parse_whole_percent(s)
            .map_or(0, |percent| (percent as f64 * total as f64 / 100.0).ceil() as i64),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn workload_replicas_as_the_controller_reads_them() {
        assert_eq!(workload_replicas(&json!({"kind": "Deployment", "spec": {"replicas": 4}})), Some(4));
        assert_eq!(workload_replicas(&json!({"kind": "CloneSet", "spec": {}})), Some(1), "defaulted to 1");
        assert_eq!(workload_replicas(&json!({"kind": "DaemonSet", "status": {"desiredNumberScheduled": 3}})), Some(3));
        assert_eq!(workload_replicas(&json!({"kind": "DaemonSet", "spec": {}})), None);
    }

    #[test]
    fn a_description_says_why_the_controller_does_otherwise() {
        let asked = RouteStrategy { traffic: Some("50%".into()), ..Default::default() };
        assert_eq!(
            StageRouting::of(asked.clone()).describe(&asked, &WeightSplit::Split),
            "traffic 50% (canary 50 / stable 50)"
        );
        let kept = StageRouting { action: RoutingAction::Leave, note: Some("not routed".into()) };
        assert_eq!(kept.describe(&asked, &WeightSplit::Split), "traffic 50% (canary 50 / stable 50) (not routed)");
    }

    #[test]
    fn replicas_scale_up_against_the_workload() {
        assert_eq!(scaled_replicas(Some(&json!(2)), 10), 2);
        assert_eq!(scaled_replicas(Some(&json!("50%")), 1), 1, "rounded up");
        assert_eq!(scaled_replicas(Some(&json!("20%")), 4), 1);
        assert_eq!(scaled_replicas(Some(&json!("100%")), 4), 4);
        assert_eq!(scaled_replicas(Some(&json!("half")), 4), 0, "an error reads as 0");
        assert_eq!(scaled_replicas(None, 4), 0);
    }
}
