//! Field validation of Rollouts and TrafficRoutings read from files, as kubectl's: a field the
//! CRD does not define is unknown, and the API server would drop it (or, under kubectl's
//! `--validate=strict`, refuse the object). A misspelt `replica:` or `trafficRouting:` would
//! otherwise be planned as if it were not there, without a word.
//!
//! The field names come from the CRDs' schemas (../shared/conformance/upstream/crds), stripped to
//! their structure in `schema/rollouts.kruise.io.json`: per kind and version, an object is a map
//! of its fields, `{"*": …}` a map of anything to …, `[…]` a list of …, `"string"` a Go string
//! (go test's decoding takes a number or boolean there as its text), and `null` another value,
//! whose fields are not checked. `tests/inputs.rs` regenerates it (`UPDATE_GENERATED=1`).

use crate::gojson;
use crate::model::Path;
use serde_json::Value;
use std::sync::LazyLock;

static FIELDS: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("schema/rollouts.kruise.io.json")).expect("the embedded field schema is JSON")
});

/// A field of an object that its CRD does not define.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownField {
    /// As kubectl names it: `spec.strategy.canary.steps[0].replica`.
    pub path: Path,
    /// The known field of the same object its name is closest to, if any is close.
    pub closest: Option<String>,
}

impl std::fmt::Display for UnknownField {
    /// `unknown field spec.strategy.canary.stepz: did you mean steps?`, for an error the field
    /// may explain (a misspelt `stepz:` leaves `steps` missing).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.closest {
            Some(known) => write!(f, "unknown field {}: did you mean {known}?", self.path),
            None => write!(f, "unknown field {}", self.path),
        }
    }
}

/// The fields of a Rollout or TrafficRouting its CRD does not define; none for other kinds and
/// versions.
pub fn unknown_fields(object: &Value) -> Vec<UnknownField> {
    let version = object["apiVersion"].as_str().and_then(|v| v.strip_prefix("rollouts.kruise.io/")).unwrap_or_default();
    let Some(kind) = object["kind"].as_str() else { return Vec::new() };
    let mut unknown = Vec::new();
    if let Some(schema) = FIELDS.get(kind).and_then(|versions| versions.get(version)) {
        walk(object, schema, &Path::default(), &mut unknown);
    }
    unknown
}

/// The known name closest to `key`, as clap suggests a flag (Jaro similarity above 0.7).
pub fn closest<'a>(key: &str, known: impl IntoIterator<Item = &'a String>) -> Option<String> {
    known
        .into_iter()
        .map(|known| (strsim::jaro(key, known), known))
        .filter(|(similarity, _)| *similarity > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, known)| known.clone())
}

/// The schema of a test case as the controller's go test harness reads it (its `TestCase`
/// type): the Rollout as v1beta1 whatever its apiVersion, the TrafficRouting as v1alpha1, the
/// objects as unstructured.
static GO_TEST_CASE: LazyLock<Value> = LazyLock::new(|| {
    serde_json::json!({
        "rollout": FIELDS["Rollout"]["v1beta1"], "trafficRouting": FIELDS["TrafficRouting"]["v1alpha1"],
        "original": null, "expected": null
    })
});

/// A key read as a field of another name: `path` as written, `field` the name it is read as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoldedKey {
    pub path: Path,
    pub field: String,
}

/// A number or boolean read as a Go string's text: `path` its field, `written` the value as
/// written (in JSON), `text` the string it is read as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextRead {
    pub path: Path,
    pub written: String,
    pub text: String,
}

/// What go test reads otherwise than written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadOtherwise {
    pub folded: Vec<FoldedKey>,
    pub as_text: Vec<TextRead>,
}

/// A test case (`case`) as the controller's go test harness decodes it: sigs.k8s.io/yaml turns
/// the YAML into JSON with its keys sorted, and Go's `encoding/json` matches a key that names no
/// field exactly to a field of the same name in another case (`Traffic` is read as `traffic`).
/// Of two keys for one field, the later in byte order replaces the earlier, or is merged into it
/// where the field is an object. A number or boolean for a string field is read as its text.
/// Also what was read so: the API server matches names exactly and drops such a field, and
/// refuses a number or boolean for a string.
pub fn as_go_test_decodes(case: &Value) -> (Value, ReadOtherwise) {
    let mut read = ReadOtherwise::default();
    let decoded = decode(None, case, &GO_TEST_CASE, &Path::default(), &mut read);
    (decoded, read)
}

/// `value` decoded into `existing` (a field already set by an earlier key) by `schema`.
fn decode(existing: Option<Value>, value: &Value, schema: &Value, path: &Path, read: &mut ReadOtherwise) -> Value {
    match (value, schema) {
        (Value::Object(map), Value::Object(fields)) => {
            let mut into = match existing {
                Some(Value::Object(into)) => into,
                _ => serde_json::Map::new(),
            };
            // A map's keys are not fields: each is its own, and its value is decoded afresh.
            let of_map = fields.get("*");
            for (key, value) in map {
                let field = match of_map {
                    Some(schema) => Some((key, schema)),
                    None => fields
                        .get_key_value(key)
                        .or_else(|| fields.iter().find(|(field, _)| gojson::go_fold_equal(key, field))),
                };
                let Some((name, schema)) = field else {
                    into.insert(key.clone(), value.clone()); // An unknown field, warned of as such.
                    continue;
                };
                if name != key {
                    read.folded.push(FoldedKey { path: path.field(key), field: name.clone() });
                }
                let earlier = if of_map.is_some() { None } else { into.remove(name) };
                let decoded = decode(earlier, value, schema, &path.field(key), read);
                into.insert(name.clone(), decoded);
            }
            Value::Object(into)
        }
        (Value::Array(items), Value::Array(schema)) => Value::Array(
            items.iter().enumerate().map(|(i, item)| decode(None, item, &schema[0], &path.index(i), read)).collect(),
        ),
        // A number or boolean for a Go string: sigs.k8s.io/yaml gives a string target its text
        // (`value: 1` is "1", `value: yes` "true", a float as `FormatFloat(f, 'g', -1, 32)`).
        (Value::Bool(_) | Value::Number(_), Value::String(leaf)) if leaf == "string" => {
            let text = match value {
                Value::Number(n) if n.is_f64() => gojson::format_float32_g(n.as_f64().unwrap_or_default()),
                other => other.to_string(),
            };
            read.as_text.push(TextRead { path: path.clone(), written: value.to_string(), text: text.clone() });
            Value::String(text)
        }
        // A scalar, or a value whose fields the schema does not give, taken whole.
        _ => value.clone(),
    }
}

fn walk(value: &Value, schema: &Value, path: &Path, unknown: &mut Vec<UnknownField>) {
    match (value, schema) {
        (Value::Object(map), Value::Object(fields)) => {
            for (key, value) in map {
                match fields.get("*").or_else(|| fields.get(key)) {
                    Some(schema) => walk(value, schema, &path.field(key), unknown),
                    None => unknown.push(UnknownField { path: path.field(key), closest: closest(key, fields.keys()) }),
                }
            }
        }
        (Value::Array(items), Value::Array(schema)) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, &schema[0], &path.index(i), unknown);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(object: &Value) -> Vec<String> {
        unknown_fields(object).iter().map(|field| field.path.to_string()).collect()
    }

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
            paths(&rollout),
            [
                "metadata.annotaions",
                "spec.strategy.canary.steps[0].replica",
                "spec.strategy.canary.steps[1].matches[0].headers[0].typ",
                "spec.strategy.canary.trafficRouting",
            ]
        );
    }

    #[test]
    fn each_unknown_field_is_shown_with_the_closest_known_one() {
        let rollout = json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "r"},
            "spec": {"strategy": {"canary": {"stepz": [{"replicas": 1}], "xyzzy": 1}}}
        });
        let shown: Vec<String> = unknown_fields(&rollout).iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "unknown field spec.strategy.canary.stepz: did you mean steps?",
                "unknown field spec.strategy.canary.xyzzy"
            ]
        );
    }

    #[test]
    fn a_case_is_decoded_as_go_test_decodes_it() {
        let case = json!({
            "Rollout": {"spec": {"strategy": {"canary": {
                "steps": [{"Traffic": "20%", "replicas": 1}, {"TRAFFIC": "5%", "traffic": "10%", "Matches": []}],
                "trafficRoutings": [{"service": "s"}]
            }}}, "Metadata": {"name": "r"}},
            "original": {"Spec": {}},
            "expected": [{"Spec": {}}],
            "Unknown": 1
        });
        let (decoded, read) = as_go_test_decodes(&case);
        let folded = read.folded;
        assert_eq!(
            decoded,
            json!({
                "rollout": {"spec": {"strategy": {"canary": {
                    // Of TRAFFIC and traffic, the later in byte order (traffic) wins.
                    "steps": [{"traffic": "20%", "replicas": 1}, {"traffic": "10%", "matches": []}],
                    "trafficRoutings": [{"service": "s"}]
                }}}, "metadata": {"name": "r"}},
                // The objects are unstructured, and their keys are kept as written.
                "original": {"Spec": {}},
                "expected": [{"Spec": {}}],
                "Unknown": 1
            })
        );
        let steps = Path::root("Rollout").field("spec").field("strategy").field("canary").field("steps");
        let shown: Vec<(String, &str)> = folded.iter().map(|f| (f.path.to_string(), f.field.as_str())).collect();
        assert_eq!(
            shown,
            [
                ("Rollout".to_string(), "rollout"),
                (Path::root("Rollout").field("Metadata").to_string(), "metadata"),
                (steps.index(0).field("Traffic").to_string(), "traffic"),
                (steps.index(1).field("Matches").to_string(), "matches"),
                (steps.index(1).field("TRAFFIC").to_string(), "traffic"),
            ]
        );
        // A number or boolean where the Go field is a string is its text; an int-or-string
        // (replicas), a time and an unstructured object keep theirs.
        let case = json!({
            "rollout": {"metadata": {"name": 7, "labels": {"version": 2}}, "spec": {"strategy": {"canary": {
                "steps": [{"traffic": 20, "replicas": 1, "matches": [{"headers": [{"name": "a", "value": true}, {"name": "b", "value": 1.5}]}]}]
            }}}, "status": {"canaryStatus": {"lastUpdateTime": 1}}},
            "trafficRouting": {"spec": {"strategy": {"matches": [{"headers": [{"name": "c", "value": 1e6}]}]}}},
            "original": {"spec": {"n": 1}}
        });
        let (decoded, read) = as_go_test_decodes(&case);
        let as_text: Vec<(String, &str, &str)> =
            read.as_text.iter().map(|t| (t.path.to_string(), t.written.as_str(), t.text.as_str())).collect();
        assert_eq!(
            as_text,
            [
                ("rollout.metadata.labels.version".to_string(), "2", "2"),
                ("rollout.metadata.name".to_string(), "7", "7"),
                ("rollout.spec.strategy.canary.steps[0].matches[0].headers[0].value".to_string(), "true", "true"),
                ("rollout.spec.strategy.canary.steps[0].matches[0].headers[1].value".to_string(), "1.5", "1.5"),
                ("rollout.spec.strategy.canary.steps[0].traffic".to_string(), "20", "20"),
                ("trafficRouting.spec.strategy.matches[0].headers[0].value".to_string(), "1000000.0", "1e+06"),
            ]
        );
        assert_eq!(
            decoded,
            json!({
                "rollout": {"metadata": {"name": "7", "labels": {"version": "2"}}, "spec": {"strategy": {"canary": {
                    "steps": [{"traffic": "20", "replicas": 1, "matches": [{"headers": [{"name": "a", "value": "true"}, {"name": "b", "value": "1.5"}]}]}]
                }}}, "status": {"canaryStatus": {"lastUpdateTime": 1}}},
                "trafficRouting": {"spec": {"strategy": {"matches": [{"headers": [{"name": "c", "value": "1e+06"}]}]}}},
                "original": {"spec": {"n": 1}}
            })
        );
        // The Kelvin sign and the long s fold to k and s, as Go folds them; other letters do not.
        assert!(gojson::go_fold_equal("\u{17F}teps", "steps") && gojson::go_fold_equal("\u{212A}ind", "kind"));
        assert!(!gojson::go_fold_equal("stéps", "steps") && !gojson::go_fold_equal("step", "steps"));
    }

    #[test]
    fn keys_with_dots_stay_one_key() {
        let rollout = json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "r"},
            "spec": {"strategy": {"canary": {"a.b[0]": 1}}}
        });
        let key = Path::root("spec").field("strategy").field("canary").field("a.b[0]");
        assert_eq!(unknown_fields(&rollout), [UnknownField { path: key, closest: None }]);
    }

    #[test]
    fn each_version_has_its_own_fields() {
        // v1alpha1 steps have `weight`; v1beta1 steps do not.
        let step = |version: &str| {
            json!({"apiVersion": format!("rollouts.kruise.io/{version}"), "kind": "Rollout", "metadata": {"name": "r"},
                   "spec": {"strategy": {"canary": {"steps": [{"weight": 20}]}}}})
        };
        assert_eq!(paths(&step("v1alpha1")), Vec::<String>::new());
        assert_eq!(paths(&step("v1beta1")), ["spec.strategy.canary.steps[0].weight"]);
        let traffic_routing = json!({"apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
            "metadata": {"name": "t"}, "spec": {"objectRef": [{"service": "s"}], "strategy": {"wieght": 5}}});
        assert_eq!(paths(&traffic_routing), ["spec.strategy.wieght"]);
    }

    #[test]
    fn other_kinds_and_versions_are_not_checked() {
        assert!(unknown_fields(&json!({"apiVersion": "v1", "kind": "ConfigMap", "nonsense": 1})).is_empty());
        assert!(unknown_fields(&json!({"apiVersion": "rollouts.kruise.io/v2", "kind": "Rollout", "x": 1})).is_empty());
    }
}
