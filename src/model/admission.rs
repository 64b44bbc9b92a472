//! What the API server refuses to store in a Rollout: the rules of the controller's validating
//! webhook (`pkg/webhook/rollout/validating/rollout_create_update_handler.go`) and the CRD
//! schema's limits that a plan can check (docs/controller-semantics.md §1.2). `plan -f` refuses
//! such a Rollout; one read from a cluster was admitted, perhaps by an older webhook, and gets a
//! warning.

use super::strategy::parse_whole_percent;
use super::{FieldMessage, Path, Step, StrategyKind};
use serde_json::Value;

/// The CRD schema's `maxItems` for steps and for a step's matches.
const MAX_STEPS: usize = 50;
const MAX_MATCHES: usize = 16;

/// Every rule the Rollout breaks, each as `field: what is wrong`. `body` is the strategy's
/// `canary` or `blueGreen` object; `steps` are read from it (converted, for v1alpha1).
pub(super) fn rejections(
    kind: StrategyKind,
    alpha: bool,
    path: &Path,
    body: &Value,
    steps: &[Step],
) -> Vec<FieldMessage> {
    let mut problems = Vec::new();
    let steps_path = path.field("steps");
    if steps.len() > MAX_STEPS {
        problems.push(steps_path.message(&format!("{} steps, at most {MAX_STEPS}", steps.len())));
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
            problems.push(at.field("matches").message(&format!("{} matches, at most {MAX_MATCHES}", matches.len())));
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
    problems
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
