//! Field validation of Rollouts and TrafficRoutings read from files, as kubectl's: a field the
//! CRD does not define is unknown, and the API server would drop it (or, under kubectl's
//! `--validate=strict`, refuse the object). A misspelt `replica:` or `trafficRouting:` would
//! otherwise be planned as if it were not there, without a word.
//!
//! The field names come from the CRDs' schemas (../shared/conformance/upstream/crds), stripped to
//! their structure in `schema/rollouts.kruise.io.json`: per kind and version, an object is a map
//! of its fields, `{"*": …}` a map of anything to …, `[…]` a list of …, and `null` a value whose
//! fields are not checked. `tests/inputs.rs` regenerates it (`UPDATE_GENERATED=1`).

use serde_json::Value;
use std::sync::LazyLock;

static FIELDS: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("schema/rollouts.kruise.io.json")).expect("the embedded field schema is JSON")
});

/// The fields of a Rollout or TrafficRouting its CRD does not define, as kubectl names them
/// (`spec.strategy.canary.steps[0].replica`); none for other kinds and versions.
pub fn unknown_fields(object: &Value) -> Vec<String> {
    unknown_with_closest(object).into_iter().map(|(field, _)| field).collect()
}

/// The unknown fields of `object`, for an error they may explain (a misspelt `stepz:` leaves
/// `steps` missing): ` (unknown field spec.strategy.canary.stepz: did you mean steps?)`, or
/// nothing when every field is known.
pub fn unknown_fields_note(object: &Value) -> String {
    let fields: Vec<String> = unknown_with_closest(object)
        .into_iter()
        .map(|(field, closest)| match closest {
            Some(known) => format!("unknown field {field}: did you mean {known}?"),
            None => format!("unknown field {field}"),
        })
        .collect();
    if fields.is_empty() { String::new() } else { format!(" ({})", fields.join("; ")) }
}

/// Each unknown field, with the known field of the same object its name is closest to (if any
/// is close).
fn unknown_with_closest(object: &Value) -> Vec<(String, Option<String>)> {
    let version = object["apiVersion"].as_str().and_then(|v| v.strip_prefix("rollouts.kruise.io/")).unwrap_or_default();
    let Some(kind) = object["kind"].as_str() else { return Vec::new() };
    let mut unknown = Vec::new();
    if let Some(schema) = FIELDS.get(kind).and_then(|versions| versions.get(version)) {
        walk(object, schema, "", &mut unknown);
    }
    unknown
}

/// The known field closest to `key`, as clap suggests a flag (Jaro similarity above 0.7).
fn closest(key: &str, fields: &serde_json::Map<String, Value>) -> Option<String> {
    fields
        .keys()
        .map(|known| (strsim::jaro(key, known), known))
        .filter(|(similarity, _)| *similarity > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, known)| known.clone())
}

fn walk(value: &Value, schema: &Value, path: &str, unknown: &mut Vec<(String, Option<String>)>) {
    match (value, schema) {
        (Value::Object(map), Value::Object(fields)) => {
            let at = |key: &str| if path.is_empty() { key.to_string() } else { format!("{path}.{key}") };
            for (key, value) in map {
                match fields.get("*").or_else(|| fields.get(key)) {
                    Some(schema) => walk(value, schema, &at(key), unknown),
                    None => unknown.push((at(key), closest(key, fields))),
                }
            }
        }
        (Value::Array(items), Value::Array(schema)) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, &schema[0], &format!("{path}[{i}]"), unknown);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn misspelt_rollout_fields_are_unknown() {
        let rollout = json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "r", "labels": {"any": "label"}, "annotaions": {}},
            "spec": {
                "workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
                "strategy": {"canary": {
                    "steps": [{"replica": 1, "traffic": "10%"}, {"replicas": "50%", "matches": [{"headers": [{"name": "a", "value": "b", "typ": "Exact"}]}]}],
                    "trafficRouting": [{"service": "s"}]
                }}
            },
            "status": {"phase": "Progressing"}
        });
        assert_eq!(
            unknown_fields(&rollout),
            [
                "metadata.annotaions",
                "spec.strategy.canary.steps[0].replica",
                "spec.strategy.canary.steps[1].matches[0].headers[0].typ",
                "spec.strategy.canary.trafficRouting",
            ]
        );
    }

    #[test]
    fn a_note_names_each_unknown_field_and_the_closest_known_one() {
        let rollout = json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "r"},
            "spec": {"strategy": {"canary": {"stepz": [{"replicas": 1}], "xyzzy": 1}}}
        });
        assert_eq!(
            unknown_fields_note(&rollout),
            " (unknown field spec.strategy.canary.stepz: did you mean steps?; unknown field spec.strategy.canary.xyzzy)"
        );
        let known = json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "r"}});
        assert_eq!(unknown_fields_note(&known), "");
    }

    #[test]
    fn each_version_has_its_own_fields() {
        // v1alpha1 steps have `weight`; v1beta1 steps do not.
        let step = |version: &str| {
            json!({"apiVersion": format!("rollouts.kruise.io/{version}"), "kind": "Rollout", "metadata": {"name": "r"},
                   "spec": {"strategy": {"canary": {"steps": [{"weight": 20}]}}}})
        };
        assert_eq!(unknown_fields(&step("v1alpha1")), Vec::<String>::new());
        assert_eq!(unknown_fields(&step("v1beta1")), ["spec.strategy.canary.steps[0].weight"]);
        let traffic_routing = json!({"apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
            "metadata": {"name": "t"}, "spec": {"objectRef": [{"service": "s"}], "strategy": {"wieght": 5}}});
        assert_eq!(unknown_fields(&traffic_routing), ["spec.strategy.wieght"]);
    }

    #[test]
    fn other_kinds_and_versions_are_not_checked() {
        assert!(unknown_fields(&json!({"apiVersion": "v1", "kind": "ConfigMap", "nonsense": 1})).is_empty());
        assert!(unknown_fields(&json!({"apiVersion": "rollouts.kruise.io/v2", "kind": "Rollout", "x": 1})).is_empty());
    }
}
