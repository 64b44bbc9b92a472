//! What the API server refuses to store in a Rollout: the CRD schema's limits that a plan can
//! check, and the rules of the controller's validating webhook
//! (`pkg/webhook/rollout/validating/rollout_create_update_handler.go`; docs/controller-semantics.md
//! §1.2). `plan -f` refuses
//! such a Rollout; one read from a cluster was admitted, perhaps by an older webhook, and gets a
//! warning. A rule that depends on a flag of the controller (`--partition-percent-limit`) is a
//! warning everywhere: the cluster may run with another value.

use super::strategy::parse_whole_percent;
use super::{FieldMessage, Path, Step, StrategyKind};
use serde_json::Value;

/// The CRD schema's `maxItems` for steps and for a step's matches.
const MAX_STEPS: usize = 50;
const MAX_MATCHES: usize = 16;

/// The default of the controller's `--partition-percent-limit`.
const PARTITION_PERCENT_LIMIT: i64 = 50;

/// What the API server refuses to store in a Rollout, by who refuses it: its schema validation
/// runs first, and the validating webhook is asked only about an object that passes it.
#[derive(Clone, Debug, Default)]
pub struct Rejections {
    /// The CRD schema's limits (`maxItems`), which the API server enforces itself.
    pub schema: Vec<FieldMessage>,
    /// The rules of the controller's validating webhook.
    pub webhook: Vec<FieldMessage>,
}

impl Rejections {
    pub fn is_empty(&self) -> bool {
        self.schema.is_empty() && self.webhook.is_empty()
    }

    /// Each message changed by `f` (led by its line in a file).
    pub fn map(self, f: impl Fn(FieldMessage) -> FieldMessage) -> Rejections {
        Rejections {
            schema: self.schema.into_iter().map(&f).collect(),
            webhook: self.webhook.into_iter().map(&f).collect(),
        }
    }
}

/// Every rule the Rollout breaks, each as `field: what is wrong`. `body` is the strategy's
/// `canary` or `blueGreen` object; `steps` are read from it (converted, for v1alpha1).
pub(super) fn rejections(kind: StrategyKind, alpha: bool, path: &Path, body: &Value, steps: &[Step]) -> Rejections {
    let mut schema = Vec::new();
    let mut problems = Vec::new();
    let steps_path = path.field("steps");
    if steps.len() > MAX_STEPS {
        schema.push(steps_path.message(&format!("{} steps, at most {MAX_STEPS}", steps.len())));
    }
    // v1alpha1's weight is converted to traffic "N%" (and replicas "N%" when unset); its
    // messages name the fields as written, and replicas are checked as written.
    let traffic_field = if alpha { "weight" } else { "traffic" };
    let written = |i: usize| body["steps"][i].get("replicas").filter(|r| !r.is_null());
    for (i, step) in steps.iter().enumerate() {
        let at = steps_path.index(i);
        match written(i) {
            _ if step.replicas.is_none() => problems.push(at.field("replicas").message("required")),
            Some(replicas) if !valid_replicas(replicas) => problems.push(
                at.field("replicas")
                    .message(&format!("{replicas} must be a positive number, or a percentage in (0%, 100%]")),
            ),
            _ => {}
        }
        if let Some(traffic) = &step.strategy.traffic {
            let (low, range) = match kind {
                StrategyKind::Canary => (1, "(0%, 100%]"),
                StrategyKind::BlueGreen => (0, "[0%, 100%]"),
            };
            let shown = if alpha { traffic.trim_end_matches('%').to_string() } else { format!("{traffic:?}") };
            match parse_whole_percent(traffic) {
                Some(percent) if (low..=100).contains(&percent) => {}
                Some(_) => problems.push(at.field(traffic_field).message(&format!("{shown} must be in {range}"))),
                None => problems.push(at.field(traffic_field).message(&format!(
                    "{shown} must be a whole percentage such as \"20%\" (the controller reads it as 0%)"
                ))),
            }
        }
        if let Some(matches) = step.strategy.matches.as_ref().filter(|m| m.len() > MAX_MATCHES) {
            schema.push(at.field("matches").message(&format!("{} matches, at most {MAX_MATCHES}", matches.len())));
        }
    }
    for (i, pair) in steps.windows(2).enumerate() {
        let (at, previous) = (steps_path.index(i + 1), steps_path.index(i));
        if let (Some(before), Some(after)) = (comparable(written(i)), comparable(written(i + 1)))
            && before.0 == after.0
            && after.1 < before.1
        {
            problems.push(at.field("replicas").message(&format!(
                "{} is less than {}: replicas must not decrease",
                written(i + 1).map_or_else(String::new, Value::to_string),
                previous.field("replicas")
            )));
        }
        let weight = |step: &Step| step.strategy.traffic.as_deref().and_then(parse_whole_percent);
        if alpha
            && let (Some(before), Some(after)) = (weight(&pair[0]), weight(&pair[1]))
            && after < before
        {
            problems.push(at.field("weight").message(&format!(
                "{after} is less than {} {before}: weights must not decrease",
                previous.field("weight")
            )));
        }
    }
    let routings_path = path.field("trafficRoutings");
    let routings = body["trafficRoutings"].as_array().map(Vec::as_slice).unwrap_or_default();
    if routings.len() > 1 {
        problems.push(routings_path.message(&format!("{} entries, at most 1", routings.len())));
    }
    for (i, routing) in routings.iter().enumerate() {
        let at = routings_path.index(i);
        let providers = ["ingress", "gateway", "customNetworkRefs"];
        if !providers.iter().any(|p| routing.get(*p).is_some_and(|v| !v.is_null())) {
            problems.push(at.message("needs one of ingress, gateway and customNetworkRefs"));
        }
        if let Some(grace) = routing["gracePeriodSeconds"].as_i64().filter(|g| *g < 0) {
            problems.push(at.field("gracePeriodSeconds").message(&format!("{grace} must not be negative")));
        }
    }
    Rejections { schema, webhook: problems }
}

/// The steps the webhook refuses under its default `--partition-percent-limit`: in a
/// partition-style release (`GetRollingStyle`, which the webhook checks: a canary without
/// `enableExtraWorkloadForCanary`, whatever the workload), a step with traffic or matches whose
/// replicas, as written, are a percentage above 50%. A warning, as the limit is the controller's
/// flag. `partition_style`: the Rollout's rolling style is partition (v1alpha1: its
/// `rollouts.kruise.io/rolling-style` annotation says so).
pub(super) fn over_partition_limit(
    partition_style: bool,
    alpha: bool,
    path: &Path,
    body: &Value,
    steps: &[Step],
) -> Vec<FieldMessage> {
    if !partition_style {
        return Vec::new();
    }
    let style = match alpha {
        true => "rollouts.kruise.io/rolling-style: partition",
        false => "no enableExtraWorkloadForCanary",
    };
    let mut warnings = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let written = &body["steps"][i]["replicas"];
        let Some(percent) = written.as_str().and_then(parse_whole_percent) else { continue };
        if percent > PARTITION_PERCENT_LIMIT && step.strategy.routes_traffic() {
            warnings.push(path.field("steps").index(i).field("replicas").message(&format!(
                "{written} is above {PARTITION_PERCENT_LIMIT}%: in a partition-style release ({style}) the controller's \
                 webhook refuses percentage replicas above its --partition-percent-limit (default \
                 {PARTITION_PERCENT_LIMIT}) on a step with traffic or matches; it is admitted only if the controller \
                 runs with a higher limit"
            )));
        }
    }
    warnings
}

/// `replicas > 0`, and a percentage at most 100% (the webhook scales both against 100).
fn valid_replicas(replicas: &Value) -> bool {
    match replicas {
        Value::Number(n) => n.as_i64().is_some_and(|n| n > 0),
        Value::String(s) => parse_whole_percent(s).is_some_and(|p| (1..=100).contains(&p)),
        _ => false,
    }
}

/// Replicas as (is a percentage, value), for comparing steps of the same kind.
fn comparable(replicas: Option<&Value>) -> Option<(bool, i64)> {
    match replicas? {
        Value::Number(n) => Some((false, n.as_i64()?)),
        Value::String(s) => Some((true, parse_whole_percent(s)?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::model::Rollout;
    use serde_json::{Value, json};

    /// The partition-limit warnings of a Rollout whose strategy is `strategy`.
    fn partition_warnings(api_version: &str, annotations: Value, strategy: Value) -> Vec<String> {
        let rollout = Rollout::from_object(&json!({
            "apiVersion": api_version, "kind": "Rollout",
            "metadata": {"name": "demo", "annotations": annotations},
            "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "demo"}, "strategy": strategy}
        }))
        .unwrap();
        assert!(rollout.rejections.is_empty(), "a warning, not a rejection: {:?}", rollout.rejections);
        rollout
            .warnings
            .iter()
            .filter(|w| w.text.contains("--partition-percent-limit"))
            .map(|w| w.to_string())
            .collect()
    }

    fn canary(steps: Value, extra: bool) -> Vec<String> {
        let canary = json!({"steps": steps, "enableExtraWorkloadForCanary": extra, "trafficRoutings": [{"service": "svc", "customNetworkRefs": []}]});
        partition_warnings("rollouts.kruise.io/v1beta1", json!({}), json!({"canary": canary}))
    }

    #[test]
    fn percentage_replicas_above_the_partition_limit_on_a_routed_partition_step_are_a_warning() {
        let steps = json!([
            {"replicas": "50%", "traffic": "20%"},
            {"replicas": "51%", "matches": [{"headers": [{"name": "x", "value": "y"}]}]},
            {"replicas": "60%", "traffic": "60%"},
            {"replicas": "80%"},
            {"replicas": 9, "traffic": "90%"},
            {"replicas": "100%"},
        ]);
        assert_eq!(
            canary(steps.clone(), false),
            vec![
                "spec.strategy.canary.steps[1].replicas: \"51%\" is above 50%: in a partition-style release (no enableExtraWorkloadForCanary) the controller's webhook refuses percentage replicas above its --partition-percent-limit (default 50) on a step with traffic or matches; it is admitted only if the controller runs with a higher limit",
                "spec.strategy.canary.steps[2].replicas: \"60%\" is above 50%: in a partition-style release (no enableExtraWorkloadForCanary) the controller's webhook refuses percentage replicas above its --partition-percent-limit (default 50) on a step with traffic or matches; it is admitted only if the controller runs with a higher limit",
            ],
            "50% is the limit itself; a step without traffic or matches, and whole replicas, are not checked"
        );
        // The webhook goes by the rolling style: an extra workload is canary style, even for a
        // workload that IsRealPartition would call a partition.
        assert_eq!(canary(steps.clone(), true), Vec::<String>::new());
        let blue_green = json!({"blueGreen": {"steps": [{"replicas": "60%", "traffic": "60%"}]}});
        assert_eq!(partition_warnings("rollouts.kruise.io/v1beta1", json!({}), blue_green), Vec::<String>::new());
    }

    #[test]
    fn a_v1alpha1_rollout_is_partition_style_by_its_annotation() {
        let canary = json!({"canary": {"steps": [{"replicas": "60%", "weight": 60}]}});
        let alpha = |annotations: Value| partition_warnings("rollouts.kruise.io/v1alpha1", annotations, canary.clone());
        assert_eq!(
            alpha(json!({"rollouts.kruise.io/rolling-style": "partition"})),
            vec![
                "spec.strategy.canary.steps[0].replicas: \"60%\" is above 50%: in a partition-style release (rollouts.kruise.io/rolling-style: partition) the controller's webhook refuses percentage replicas above its --partition-percent-limit (default 50) on a step with traffic or matches; it is admitted only if the controller runs with a higher limit",
            ]
        );
        assert_eq!(alpha(json!({})), Vec::<String>::new(), "without the annotation, v1alpha1 converts to canary style");
        // Replicas are checked as written: the conversion's replicas from the weight are not.
        let from_weight = json!({"canary": {"steps": [{"weight": 60}]}});
        let annotations = json!({"rollouts.kruise.io/rolling-style": "partition"});
        assert_eq!(partition_warnings("rollouts.kruise.io/v1alpha1", annotations, from_weight), Vec::<String>::new());
    }
}
