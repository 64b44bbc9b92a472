//! What the API server refuses to store in a Rollout: the CRD schema's limits and rules for
//! steps, matches and header changes, and the rules of the controller's validating webhook
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
    /// The CRD schema's limits and rules, which the API server enforces itself.
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
        schema.extend(step_schema(alpha, &at, &body["steps"][i]));
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

/// The CRD schema's required fields of the workload's reference: v1beta1's `spec.workloadRef`,
/// v1alpha1's `spec.objectRef` (whose `workloadRef` may be left out), the reference with its
/// `apiVersion`, `kind` and `name`, each a string.
pub(super) fn workload_ref_rules(alpha: bool, spec: &Value) -> Vec<FieldMessage> {
    let spec_path = Path::root("spec");
    let present = |value: &Value| !value.is_null();
    let (at, reference) = match alpha {
        true if !present(&spec["objectRef"]) => return vec![spec_path.field("objectRef").message("required")],
        true => (spec_path.field("objectRef").field("workloadRef"), &spec["objectRef"]["workloadRef"]),
        false => (spec_path.field("workloadRef"), &spec["workloadRef"]),
    };
    if !present(reference) {
        return if alpha { Vec::new() } else { vec![at.message("required")] };
    }
    let mut found = Vec::new();
    for field in ["apiVersion", "kind", "name"] {
        match &reference[field] {
            Value::Null => found.push(at.field(field).message("required")),
            Value::String(_) => {}
            other => found.push(at.field(field).message(&format!("{other} must be a string"))),
        }
    }
    found
}

/// The CRD schema's rules for a step's matches and header modifier, as written (Gateway API's
/// types): header and query parameter names are RFC 7230 tokens of at most 256 characters, their
/// values not empty, each list at most 16 entries, each name once in a list the schema keys by
/// name (v1beta1's matches, and the modifier's `set` and `add`), `remove` without repeats, and a
/// path of type Exact or PathPrefix a clean absolute path (v1beta1; the CRD's CEL rules, with
/// their messages).
fn step_schema(alpha: bool, at: &Path, step: &Value) -> Vec<FieldMessage> {
    let mut found = Vec::new();
    for (i, condition) in step["matches"].as_array().into_iter().flatten().enumerate() {
        let at = at.field("matches").index(i);
        found.extend(named_list(&at.field("headers"), &condition["headers"], 4096, !alpha));
        found.extend(match_types(&at.field("headers"), &condition["headers"]));
        if alpha {
            continue; // v1alpha1's matches have headers only.
        }
        found.extend(named_list(&at.field("queryParams"), &condition["queryParams"], 1024, true));
        found.extend(match_types(&at.field("queryParams"), &condition["queryParams"]));
        if let Some(path) = condition.get("path").filter(|p| p.is_object()) {
            found.extend(enum_rule(&at.field("path").field("type"), &path["type"], PATH_MATCH_TYPES));
            found.extend(path_rules(&at.field("path"), path));
        }
    }
    let modifier = at.field("requestHeaderModifier");
    for list in ["set", "add"] {
        found.extend(named_list(&modifier.field(list), &step["requestHeaderModifier"][list], 4096, true));
    }
    if let Some(remove) = step["requestHeaderModifier"]["remove"].as_array() {
        let at = modifier.field("remove");
        if remove.len() > MAX_LIST {
            found.push(at.message(&format!("{} entries, at most {MAX_LIST}", remove.len())));
        }
        for (i, name) in remove.iter().enumerate() {
            if remove[..i].contains(name) {
                found.push(at.index(i).message(&format!("{name} is there twice (a set: each entry once)")));
            }
        }
    }
    found
}

/// The types of a header or query parameter match, and of a path match (the CRD's enums).
const VALUE_MATCH_TYPES: &[&str] = &["Exact", "RegularExpression"];
const PATH_MATCH_TYPES: &[&str] = &["Exact", "PathPrefix", "RegularExpression"];

/// The enum of each header match's `type` in a list of matches of headers only (a
/// TrafficRouting's, which has no rejections of its own: its reading refuses them).
pub(super) fn header_match_types(at: &Path, matches: &Value) -> Vec<FieldMessage> {
    let matches = matches.as_array().into_iter().flatten().enumerate();
    matches.flat_map(|(i, condition)| match_types(&at.index(i).field("headers"), &condition["headers"])).collect()
}

/// The enum of each entry's `type` in a list of header or query parameter matches.
fn match_types(at: &Path, list: &Value) -> Vec<FieldMessage> {
    let entries = list.as_array().into_iter().flatten().enumerate();
    entries.filter_map(|(i, entry)| enum_rule(&at.index(i).field("type"), &entry["type"], VALUE_MATCH_TYPES)).collect()
}

/// A `type` outside its enum (none given is the CRD's default; one not a string cannot be read).
fn enum_rule(at: &Path, kind: &Value, allowed: &[&str]) -> Option<FieldMessage> {
    let kind = kind.as_str().filter(|kind| !allowed.contains(kind))?;
    Some(at.message(&format!("must be one of {}, not {kind:?}", allowed.join(", "))))
}

/// The most entries of a list of headers, query parameters or header changes.
const MAX_LIST: usize = 16;

/// The schema's rules for a list of `{name, value}` entries: at most 16, each name a token of at
/// most 256 characters (and, `keyed`, once in the list), each value of 1 to `max_value`.
fn named_list(at: &Path, list: &Value, max_value: usize, keyed: bool) -> Vec<FieldMessage> {
    let Some(entries) = list.as_array() else { return Vec::new() };
    let mut found = Vec::new();
    if entries.len() > MAX_LIST {
        found.push(at.message(&format!("{} entries, at most {MAX_LIST}", entries.len())));
    }
    for (i, entry) in entries.iter().enumerate() {
        let at = at.index(i);
        if let Some(name) = entry["name"].as_str() {
            let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
            if name.is_empty() || name.chars().count() > 256 || !name.chars().all(token) {
                found.push(at.field("name").message(&format!(
                    "{name:?} must be 1 to 256 of the characters of an HTTP token (^[A-Za-z0-9!#$%&'*+\\-.^_`|~]+$)"
                )));
            } else if keyed && entries[..i].iter().any(|e| e["name"] == name) {
                found.push(at.field("name").message(&format!("{name:?} is named twice (each name once in the list)")));
            }
        }
        if let Some(value) = entry["value"].as_str() {
            let length = value.chars().count();
            if length == 0 || length > max_value {
                found.push(at.field("value").message(&format!("{length} characters, 1 to {max_value} allowed")));
            }
        }
    }
    found
}

/// The CRD's CEL rules for a match's path (defaults: PathPrefix, `/`), with their messages.
fn path_rules(at: &Path, path: &Value) -> Vec<FieldMessage> {
    let kind = path["type"].as_str().unwrap_or("PathPrefix");
    let Some(value) = path.get("value").map_or(Some("/"), Value::as_str) else { return Vec::new() };
    let at = at.field("value");
    let mut found = Vec::new();
    if value.chars().count() > 1024 {
        found.push(at.message(&format!("{} characters, at most 1024", value.chars().count())));
    }
    if !matches!(kind, "Exact" | "PathPrefix") {
        return found;
    }
    let when = "when type one of ['Exact', 'PathPrefix']";
    let mut broken = |rule: bool, message: String| {
        if rule {
            found.push(at.message(&format!("{value:?}: {message}")));
        }
    };
    broken(!value.starts_with('/'), format!("value must be an absolute path and start with '/' {when}"));
    for part in ["//", "/./", "/../", "%2f", "%2F", "#"] {
        broken(value.contains(part), format!("must not contain '{part}' {when}"));
    }
    for end in ["/..", "/."] {
        broken(value.ends_with(end), format!("must not end with '{end}' {when}"));
    }
    broken(
        !valid_path_characters(value),
        "must only contain valid characters (matching ^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$) for types ['Exact', 'PathPrefix']".into(),
    );
    found
}

/// Whether `value` matches `^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$`.
fn valid_path_characters(value: &str) -> bool {
    let bytes = value.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if bytes.get(i + 1..i + 3).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) => i += 3,
            c if c.is_ascii_alphanumeric() || b"-/._~!$&'()*+,;=:@".contains(&c) => i += 1,
            _ => return false,
        }
    }
    !bytes.is_empty()
}

/// The v1alpha1 webhook's rule for the `rollouts.kruise.io/rolling-style` annotation: `canary`,
/// `partition` (in any case) or empty (docs/controller-semantics.md §2).
pub(super) fn rolling_style(style: &str) -> Option<FieldMessage> {
    let known = ["", "canary", "partition"].iter().any(|known| style.eq_ignore_ascii_case(known));
    (!known).then(|| {
        Path::root("metadata")
            .field("annotations")
            .field("rollouts.kruise.io/rolling-style")
            .message(&format!("{style:?} must be canary, partition or empty"))
    })
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
    fn the_workloads_reference_is_required_as_the_crd_requires_it() {
        let rules = |alpha: bool, spec: Value| -> Vec<String> {
            super::workload_ref_rules(alpha, &spec).iter().map(ToString::to_string).collect()
        };
        let whole = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "demo"});
        assert!(rules(false, json!({"workloadRef": whole})).is_empty());
        assert!(rules(true, json!({"objectRef": {"workloadRef": whole}})).is_empty());
        // v1alpha1's objectRef is required, its workloadRef is not.
        assert!(rules(true, json!({"objectRef": {}})).is_empty());
        assert_eq!(rules(true, json!({"workloadRef": whole})), ["spec.objectRef: required"]);
        assert_eq!(rules(false, json!({"workloadRef": null})), ["spec.workloadRef: required"]);
        assert_eq!(
            rules(false, json!({"workloadRef": {"kind": "Deployment", "name": 7}})),
            ["spec.workloadRef.apiVersion: required", "spec.workloadRef.name: 7 must be a string"]
        );
        assert_eq!(
            rules(true, json!({"objectRef": {"workloadRef": {"apiVersion": "apps/v1", "name": "demo"}}})),
            ["spec.objectRef.workloadRef.kind: required"]
        );
    }

    #[test]
    fn a_v1alpha1_rolling_style_is_canary_partition_or_empty() {
        for fine in ["", "canary", "Partition", "PARTITION"] {
            assert_eq!(super::rolling_style(fine), None, "{fine}");
        }
        let rollout = Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "Rollout",
            "metadata": {"name": "demo", "annotations": {"rollouts.kruise.io/rolling-style": "bogus"}},
            "spec": {"strategy": {"canary": {"steps": [{"weight": 20}]}}}
        }))
        .unwrap();
        let refused: Vec<String> = rollout.rejections.webhook.iter().map(ToString::to_string).collect();
        assert_eq!(
            refused,
            ["metadata.annotations.rollouts.kruise.io/rolling-style: \"bogus\" must be canary, partition or empty"]
        );
    }

    #[test]
    fn a_paths_cel_rules_are_checked_as_the_crd_writes_them() {
        let broken = |value: &str| {
            let found = super::path_rules(&super::Path::root("path"), &json!({"type": "Exact", "value": value}));
            found.iter().map(|f| f.to_string().rsplit_once(": ").unwrap().1.to_string()).collect::<Vec<_>>()
        };
        let when = "when type one of ['Exact', 'PathPrefix']";
        for fine in ["/", "/a/b", "/a%2Eb", "/~user/a-b_c.d", "/a:b@c;d=e,f+g*h(i)'j&k$l!"] {
            assert_eq!(broken(fine), Vec::<String>::new(), "{fine}");
        }
        for (part, value) in
            [("/./", "/a/./b"), ("/../", "/a/../b"), ("%2f", "/a%2fb"), ("%2F", "/a%2Fb"), ("#", "/a#b")]
        {
            assert!(
                broken(value).contains(&format!("must not contain '{part}' {when}")),
                "{value}: {:?}",
                broken(value)
            );
        }
        assert_eq!(broken("/a/.."), [format!("must not end with '/..' {when}")]);
        assert_eq!(broken("/a/."), [format!("must not end with '/.' {when}")]);
        let characters = "must only contain valid characters (matching ^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$) for types ['Exact', 'PathPrefix']";
        for bad in ["/a b", "/a%zz", "/a%2", "/é"] {
            assert_eq!(broken(bad), [characters], "{bad}");
        }
        // A regular expression is not a path; its length is checked all the same.
        let regex = |value: &str| {
            super::path_rules(&super::Path::root("path"), &json!({"type": "RegularExpression", "value": value}))
        };
        assert!(regex("^/a(//)?#").is_empty());
        assert_eq!(regex(&"a".repeat(1025)).len(), 1);
        // Defaults: PathPrefix and `/`.
        assert!(super::path_rules(&super::Path::root("path"), &json!({})).is_empty());
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
