//! The controller's `Data`: the part of a gateway object a script sees and returns (spec,
//! labels, annotations), how it is stored in the original-spec annotation, and how it is
//! written back onto an object.

use crate::gojson;
use crate::lua::{self, EvalOptions, Evaluated, GoJson, GoJsonText, Limits, Obj, Printed, Script, ScriptError, Values};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The annotation holding a gateway object's pre-release state, written by the controller.
pub const ORIGINAL_SPEC_ANNOTATION: &str = "rollouts.kruise.io/original-spec-configuration";

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Data {
    pub spec: Option<Value>,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
}

impl Data {
    /// The object's own spec, labels and annotations, its numbers as the controller's client
    /// decodes them (whole numbers that fit an int64 kept exactly: it stores them so).
    pub fn of_object(object: &Value) -> Data {
        Data {
            spec: object.get("spec").filter(|s| !s.is_null()).cloned().map(gojson::normalize_numbers_keeping_int64),
            labels: string_map(&object["metadata"]["labels"]),
            annotations: string_map(&object["metadata"]["annotations"]),
        }
    }

    /// The object's spec, labels and annotations as the controller's test harness reads them
    /// (`unstructured`'s `GetLabels` and `GetAnnotations`): a map with a value that is not a
    /// string is no map at all. The maps so lost are named. Its numbers are as the case was read
    /// (`testcase::case_document`, as go test reads them).
    pub fn as_the_harness_reads_it(object: &Value) -> (Data, Vec<&'static str>) {
        let mut data = Data::of_object(object);
        let mut lost = Vec::new();
        for (name, map) in [("labels", &mut data.labels), ("annotations", &mut data.annotations)] {
            if object["metadata"][name].as_object().is_some_and(|m| !m.values().all(Value::is_string)) {
                map.clear();
                lost.push(name);
            }
        }
        (data, lost)
    }

    /// The original of an object: the stored annotation when present, else the object itself
    /// minus that annotation (what the controller would store). An annotation that does not
    /// decode cleanly, or is empty (the controller refuses that one), is an error here; see
    /// [`Data::original_as_the_controller_reads_it`].
    pub fn original_of(object: &Value) -> Result<Data, String> {
        match Data::original_as_the_controller_reads_it(object) {
            _ if stored_original(object) == Some("") => {
                Err(format!("its annotation {ORIGINAL_SPEC_ANNOTATION} is empty"))
            }
            (data, None) => Ok(data),
            (_, Some(error)) => Err(format!("its annotation {ORIGINAL_SPEC_ANNOTATION} does not parse ({error})")),
        }
    }

    /// The original as the controller reads it: it ignores the error of `json.Unmarshal`
    /// (docs/controller-semantics.md §11), so invalid JSON (`{bad`, trailing text) gives empty
    /// data and a type error keeps what decoded. The error comes along.
    pub fn original_as_the_controller_reads_it(object: &Value) -> (Data, Option<String>) {
        let Some(stored) = stored_original(object) else {
            let mut data = Data::of_object(object);
            data.annotations.remove(ORIGINAL_SPEC_ANNOTATION);
            return (data, None);
        };
        // Go checks the whole text before decoding any of it; a lone surrogate escape is U+FFFD
        // to it. It decodes an object's entries in the order of its text, each in turn, so a
        // key given twice (a hand edit) fills its field twice: labels given twice merge.
        let text = lua::go_json_input(stored.as_bytes());
        let decoded = match text.trim_start().starts_with('{') {
            true => serde_json::from_str(&text).map(|TextEntries(entries)| {
                Data::decode_entries(entries.into_iter().map(|(key, value)| (key, gojson::normalize_numbers(value))))
            }),
            false => serde_json::from_str(&text).map(|value| Data::decode(gojson::normalize_numbers(value))),
        };
        decoded.unwrap_or_else(|e| (Data::default(), Some(format!("invalid JSON: {e}"))))
    }

    /// Go's `json.Marshal(Data)`: compact, `spec`/`labels`/`annotations` in that order, empty
    /// fields omitted. This is the annotation value and the canonical script output.
    pub fn to_go_json(&self) -> String {
        go_json(self.spec.as_ref().map(gojson::to_string).as_deref(), &self.labels, &self.annotations)
    }

    /// The data as the controller reads it back from the annotation it stored: every number a
    /// float64.
    pub fn stored_and_read_back(self) -> Data {
        Data { spec: self.spec.map(gojson::normalize_numbers), ..self }
    }

    /// `{spec, labels, annotations}` as a JSON value, empty fields left out.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.to_go_json()).expect("Go's JSON is JSON")
    }

    /// Go's `json.Unmarshal` of a decoded value (numbers already read as Go reads them, see
    /// `gojson::normalize_numbers`) into `Data`: keys are taken in order (sorted, as
    /// the controller's encoder writes them), an exact field name first, else a case-folded one
    /// (so `Labels` and `labels` both fill, and merge into, the labels); unknown keys are ignored;
    /// labels and annotations must be maps of strings, and the first type error fails the decode.
    pub fn from_decoded(value: Value) -> Result<Data, String> {
        match Data::decode(value) {
            (data, None) => Ok(data),
            (_, Some(error)) => Err(error),
        }
    }

    /// [`Data::from_decoded`] with what Go leaves in the value after a type error: decoding goes
    /// on, a label or annotation of another type becomes "", and the first error is returned.
    fn decode(value: Value) -> (Data, Option<String>) {
        let map = match value {
            Value::Null => return (Data::default(), None),
            Value::Object(map) => map,
            other => {
                let error = format!("json: cannot unmarshal {} into Go value of type Data", gojson::kind(&other));
                return (Data::default(), Some(error));
            }
        };
        Data::decode_entries(map)
    }

    /// [`Data::decode`] of an object's entries, in their order.
    fn decode_entries(entries: impl IntoIterator<Item = (String, Value)>) -> (Data, Option<String>) {
        let (fields, first_error) = Fields::decode(entries, Value::is_null, |value| value);
        let Fields { spec, labels, annotations } = fields;
        (Data { spec, labels, annotations }, first_error)
    }

    /// Whether `object` carries this data as `apply_to` writes it with the original-spec
    /// annotation `stored`: what storing the original leaves before a step's routing is written.
    pub fn is_on(&self, object: &Value, stored: &str) -> bool {
        let same_spec = same_spec(self.spec.as_ref(), object.get("spec"));
        let annotations = string_map(&object["metadata"]["annotations"]);
        let others_same = annotations.len() == self.annotations.len() + 1
            && annotations.get(ORIGINAL_SPEC_ANNOTATION).is_some_and(|text| text == stored)
            && self.annotations.iter().all(|(key, value)| annotations.get(key) == Some(value));
        same_spec && others_same && string_map(&object["metadata"]["labels"]) == self.labels
    }

    /// The object after the controller writes this data onto it: spec, labels and annotations
    /// replaced wholesale, and the original-spec annotation set to `stored` when given.
    pub fn apply_to(self, object: &Value, stored: Option<&str>) -> Value {
        // Everything but the spec is copied: the spec is replaced, so its copy would be wasted.
        let mut root: Map<String, Value> = object
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| *k != "spec")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(spec) = self.spec {
            root.insert("spec".into(), spec);
        }
        let metadata = root.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
        let metadata = metadata.as_object_mut().expect("metadata is an object");
        let mut annotations = self.annotations;
        if let Some(stored) = stored {
            annotations.insert(ORIGINAL_SPEC_ANNOTATION.into(), stored.into());
        }
        for (name, map) in [("labels", self.labels), ("annotations", annotations)] {
            if map.is_empty() {
                metadata.remove(name);
            } else {
                metadata
                    .insert(name.into(), Value::Object(map.into_iter().map(|(k, v)| (k, Value::String(v))).collect()));
            }
        }
        Value::Object(root)
    }
}

/// Runs a custom ref's script on `obj` (see `lua::evaluate`) and reads its output as the
/// controller does: decoded into `Data` (see `Data::from_decoded`).
pub fn evaluate(
    script: &Script,
    obj: Cow<'_, Value>,
    limits: &Limits,
    options: EvalOptions,
    printed: &Printed,
) -> Result<Evaluated<Data>, ScriptError> {
    let evaluated = lua::evaluate(script, obj, limits, options, printed, Values::default())?;
    evaluated.try_map(|output| Data::from_decoded(output).map_err(|message| ScriptError::output(script, message)))
}

/// `evaluate` written as `Data::to_go_json` writes it (what `eval` prints), without building
/// the spec: the output is encoded as Go's JSON text and decoded as the controller decodes it
/// (`json.Unmarshal` into `Data`), the spec kept as its text, which Go would write back as it is.
/// `None` when the obj is JSON text not read as such (see `lua::Obj`).
pub fn evaluate_to_go_json(
    script: &Script,
    obj: Obj<'_>,
    limits: &Limits,
    options: EvalOptions,
    printed: &Printed,
) -> Option<Result<Evaluated<String>, ScriptError>> {
    let evaluated = lua::evaluate_obj(script, obj, limits, options, printed, GoJsonText::default())?;
    Some(evaluated.and_then(|evaluated| {
        evaluated.try_map(|output| go_json_of_output(output).map_err(|message| ScriptError::output(script, message)))
    }))
}

/// `Data::from_decoded(output)?.to_go_json()` for an output given as Go's JSON text.
fn go_json_of_output(output: GoJson) -> Result<String, String> {
    let GoJson { text, entries, .. } = output;
    if !text.starts_with('{') {
        let value = serde_json::from_str(&text).expect("Go's JSON is JSON");
        return Data::from_decoded(value).map(|data| data.to_go_json());
    }
    // A spec alone is written as Go writes its `Data` already.
    if let [(key, at)] = &entries[..]
        && key == "spec"
        && &text[at.clone()] != "null"
    {
        return Ok(text);
    }
    let map: BTreeMap<String, &str> = entries.iter().map(|(key, at)| (key.clone(), &text[at.clone()])).collect();
    let as_value = |part: &str| serde_json::from_str(part).expect("a part of valid JSON");
    let (fields, first_error) = Fields::decode(map, |part| *part == "null", as_value);
    match first_error {
        Some(error) => Err(error),
        None => Ok(go_json(fields.spec, &fields.labels, &fields.annotations)),
    }
}

/// Go's `json.Marshal(Data)` of a spec given as its Go JSON text, and the labels and
/// annotations.
fn go_json(spec: Option<&str>, labels: &BTreeMap<String, String>, annotations: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(spec.map_or(0, str::len) + 16);
    out.push('{');
    if let Some(spec) = spec {
        out.push_str("\"spec\":");
        out.push_str(spec);
    }
    for (name, map) in [("labels", labels), ("annotations", annotations)] {
        if !map.is_empty() {
            if out.len() > 1 {
                out.push(',');
            }
            let object: Map<String, Value> = map.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
            gojson::write_string(&mut out, name);
            out.push(':');
            gojson::write_value(&mut out, &Value::Object(object));
        }
    }
    out.push('}');
    out
}

/// A JSON object's entries in the order of its text, a key given twice kept both times (as Go's
/// decoder meets them).
struct TextEntries(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for TextEntries {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<TextEntries, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = TextEntries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<TextEntries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(TextEntries(entries))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// The fields of `Data` as Go's `json.Unmarshal` fills them from an object's entries, the spec
/// left as it comes (a value, or its text).
struct Fields<S> {
    spec: Option<S>,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
}

impl<S> Fields<S> {
    /// Keys are taken in order (the text's; a value's are sorted, as the controller's encoder
    /// writes them), an exact field
    /// name first, else a case-folded one (so `Labels` and `labels` both fill, and merge into,
    /// the labels); unknown keys are ignored; labels and annotations must be maps of strings
    /// (`as_value` reads them), and a type error makes a field "" and the first one is returned.
    fn decode(
        entries: impl IntoIterator<Item = (String, S)>,
        is_null: impl Fn(&S) -> bool,
        as_value: impl Fn(S) -> Value,
    ) -> (Fields<S>, Option<String>) {
        let mut fields = Fields { spec: None, labels: BTreeMap::new(), annotations: BTreeMap::new() };
        let mut first_error = None;
        for (key, value) in entries {
            let result = match go_field(&key) {
                Some("spec") => {
                    fields.spec = Some(value).filter(|v| !is_null(v));
                    Ok(())
                }
                Some("labels") => {
                    gojson::unmarshal_string_map(&mut fields.labels, as_value(value), "Go struct field Data.labels")
                }
                Some("annotations") => gojson::unmarshal_string_map(
                    &mut fields.annotations,
                    as_value(value),
                    "Go struct field Data.annotations",
                ),
                _ => Ok(()),
            };
            if let Err(e) = result {
                first_error.get_or_insert(e);
            }
        }
        (fields, first_error)
    }
}

/// The original-spec annotation of an object, if it has one.
pub fn stored_original(object: &Value) -> Option<&str> {
    object["metadata"]["annotations"][ORIGINAL_SPEC_ANNOTATION].as_str()
}

/// Whether two objects carry the same spec, labels and annotations, compared as the controller
/// does (spec through Go's JSON encoding, see `gojson::same`; an empty map is the same as an
/// absent one).
pub fn same_routing(a: &Value, b: &Value) -> bool {
    let meta = |o: &Value, name: &str| string_map(&o["metadata"][name]);
    same_spec(a.get("spec"), b.get("spec"))
        && meta(a, "labels") == meta(b, "labels")
        && meta(a, "annotations") == meta(b, "annotations")
}

/// Whether two specs (absent: None) are the same through Go's JSON encoding.
fn same_spec(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => gojson::same(a, b),
        (a, b) => a.is_none() && b.is_none(),
    }
}

/// Whether `stored` is `planned` as an API server stores it: a structural schema prunes fields
/// whose value is null (an empty Lua table encodes as null), so those may be gone.
pub fn stored_as_planned(stored: &Value, planned: &Value) -> bool {
    fn without_null_fields(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(
                map.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), without_null_fields(v))).collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(without_null_fields).collect()),
            other => other.clone(),
        }
    }
    same_routing(stored, planned) || same_routing(stored, &without_null_fields(planned))
}

/// The string entries of a JSON map (others are skipped); empty for anything else.
pub fn string_map(value: &Value) -> BTreeMap<String, String> {
    value
        .as_object()
        .map(|m| m.iter().filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string()))).collect())
        .unwrap_or_default()
}

/// The `Data` field a JSON key decodes into, matched as Go's decoder matches struct fields.
fn go_field(key: &str) -> Option<&'static str> {
    const FIELDS: [&str; 3] = ["spec", "labels", "annotations"];
    FIELDS.into_iter().find(|f| *f == key).or_else(|| FIELDS.into_iter().find(|f| gojson::go_fold_equal(key, f)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use serde_json::value::RawValue;

    #[test]
    fn data_is_on_an_object_that_carries_it_with_its_annotation() {
        let object = json!({"metadata": {"labels": {"a": "1"}, "annotations": {"b": "2", ORIGINAL_SPEC_ANNOTATION: "x"}}, "spec": {"n": 1}});
        let data = Data::of_object(
            &json!({"metadata": {"labels": {"a": "1"}, "annotations": {"b": "2"}}, "spec": {"n": 1.0}}),
        );
        assert!(data.is_on(&object, "x"));
        assert!(!data.is_on(&object, "y"), "another stored original");
        let mut edited = object.clone();
        edited["spec"]["n"] = json!(2);
        assert!(!data.is_on(&edited, "x"));
        let mut labelled = object.clone();
        labelled["metadata"]["labels"]["c"] = json!("3");
        assert!(!data.is_on(&labelled, "x"));
        let mut annotated = object;
        annotated["metadata"]["annotations"]["d"] = json!("4");
        assert!(!data.is_on(&annotated, "x"));
    }

    #[test]
    fn annotation_round_trip_is_go_compatible() {
        let object = json!({
            "metadata": {"name": "vs", "annotations": {"virtual": "test"}},
            "spec": {"hosts": ["echoserver.example.com"], "http": [{"route": [{"destination": {"host": "echoserver"}}]}]}
        });
        let data = Data::original_of(&object).unwrap();
        // The example from the controller's unit test (docs/controller-semantics.md §3.4).
        let want = r#"{"spec":{"hosts":["echoserver.example.com"],"http":[{"route":[{"destination":{"host":"echoserver"}}]}]},"annotations":{"virtual":"test"}}"#;
        assert_eq!(data.to_go_json(), want);
        let stored = data.clone().apply_to(&object, Some(want));
        assert_eq!(Data::original_of(&stored).unwrap(), data);
        let corrupt = data.clone().apply_to(&object, Some("{not json"));
        assert!(Data::original_of(&corrupt).unwrap_err().contains("does not parse"));
        let empty = data.apply_to(&object, Some(""));
        assert!(Data::original_of(&empty).unwrap_err().ends_with(" is empty"), "said so, not `does not parse`");
    }

    #[test]
    fn decoding_follows_go_unmarshal() {
        assert_eq!(Data::from_decoded(Value::Null).unwrap(), Data::default());
        let d = Data::from_decoded(json!({"Spec": {"a": 1}, "other": 1, "labels": {"x": "y", "n": null}})).unwrap();
        assert_eq!(d.spec, Some(json!({"a": 1})));
        assert_eq!(d.labels.get("n").map(String::as_str), Some(""));
        assert!(Data::from_decoded(json!([1])).unwrap_err().contains("cannot unmarshal array"));
        assert!(Data::from_decoded(json!({"labels": {"a": 1}})).unwrap_err().contains("Data.labels of type string"));
        let merged =
            Data::from_decoded(json!({"Labels": {"a": "1"}, "labels": {"b": "2"}, "\u{17F}pec": {"x": 1}})).unwrap();
        assert_eq!(merged.labels.len(), 2);
        assert_eq!(merged.spec, Some(json!({"x": 1})));
        assert!(Data::from_decoded(json!({"LABELS": {"n": 3}, "labels": {"app": "demo"}})).is_err());
    }

    #[test]
    fn an_output_read_from_its_text_is_written_as_from_its_value() {
        for output in [
            json!(null),
            json!([1, 2]),
            json!({}),
            json!({"spec": {"b": [1, 0.5, "<x>"], "a": null}, "labels": {"app": "demo"}, "annotations": {"x": "y"}}),
            json!({"Spec": {"a": 1}, "spec": null, "other": [1]}),
            json!({"spec": {"a": 1}, "\u{17F}pec": {"b": 2}}),
            json!({"Labels": {"a": "1"}, "labels": {"b": "2"}, "annotations": null}),
            json!({"labels": {"a": 1, "b": "x"}}),
            json!({"annotations": ["x"], "spec": {"kept": true}}),
            json!({"spec": "a string", "labels": null}),
            json!({"spec": {"b": {"c": [1, 2]}, "a": "<&>"}}),
            json!({"spec": null}),
            json!({"spec": 1.5}),
            json!({"spec": {}}),
            json!({"spec": []}),
            json!({"spec": false}),
            json!({"spec": ""}),
            json!({"Spec": {"a": 1}}),
        ] {
            let text = gojson::to_string(&output);
            // The entries as serde_json finds them in the text.
            let entries = match serde_json::from_str::<BTreeMap<String, &RawValue>>(&text) {
                Ok(map) => map
                    .into_iter()
                    .map(|(key, raw)| {
                        let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
                        (key, start..start + raw.get().len())
                    })
                    .collect(),
                Err(_) => Vec::new(),
            };
            let want = Data::from_decoded(output).map(|data| data.to_go_json());
            assert_eq!(go_json_of_output(GoJson { text: text.clone(), entries, values: 0 }), want, "{text}");
        }
    }

    #[test]
    fn the_controller_ignores_a_stored_original_that_does_not_decode() {
        let with = |stored: &str| json!({"metadata": {"annotations": {ORIGINAL_SPEC_ANNOTATION: stored}}, "spec": {"live": 1}});
        for invalid in ["{bad", r#"{"spec":{"a":1}} trailing"#] {
            let (data, error) = Data::original_as_the_controller_reads_it(&with(invalid));
            assert_eq!(data, Data::default(), "nothing of {invalid} is decoded");
            assert!(error.unwrap().starts_with("invalid JSON"));
            assert!(Data::original_of(&with(invalid)).unwrap_err().contains("does not parse"));
        }
        // A type error: decoding goes on, the bad label becomes "".
        let (data, error) = Data::original_as_the_controller_reads_it(&with(
            r#"{"spec":{"a":1},"labels":{"app":"demo","n":3},"annotations":{"x":"y"}}"#,
        ));
        assert_eq!(data.spec, Some(json!({"a": 1})));
        assert_eq!(data.labels.get("n").map(String::as_str), Some(""));
        assert_eq!(data.labels.get("app").map(String::as_str), Some("demo"));
        assert_eq!(data.annotations.len(), 1);
        assert_eq!(error.unwrap(), "json: cannot unmarshal number into Go struct field Data.labels of type string");
        let (data, error) = Data::original_as_the_controller_reads_it(&json!({"spec": {"live": 1}}));
        assert_eq!((data.spec, error), (Some(json!({"live": 1})), None), "nothing stored: the object itself");
        // A key given twice (a hand edit): Go decodes each in turn, in the text's order, so
        // labels merge, a label given again takes the later value, and the later spec wins.
        let (data, error) = Data::original_as_the_controller_reads_it(&with(
            r#"{"labels":{"a":"1","b":"1"},"spec":{"x":1},"Labels":{"b":"2"},"labels":{"c":"3"},"spec":{"y":2}}"#,
        ));
        assert_eq!(error, None);
        assert_eq!(data.spec, Some(json!({"y": 2})));
        let labels: Vec<(&str, &str)> = data.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(labels, [("a", "1"), ("b", "2"), ("c", "3")]);
        // A lone surrogate escape (a hand edit) is U+FFFD to Go, not invalid JSON.
        let (data, error) = Data::original_as_the_controller_reads_it(&with(r#"{"spec":{"a":"x\ud800"}}"#));
        assert_eq!((data.spec, error), (Some(json!({"a": "x\u{fffd}"})), None));
    }

    #[test]
    fn apply_replaces_wholesale_and_keeps_the_stored_original() {
        let live = json!({"metadata": {"name": "vs", "labels": {"a": "b"}, "resourceVersion": "7"}, "spec": {"x": 1}});
        let planned = Data { spec: Some(json!({"y": 2})), ..Data::default() }.apply_to(&live, Some("{}"));
        assert_eq!(
            planned,
            json!({"metadata": {"name": "vs", "resourceVersion": "7", "annotations": {ORIGINAL_SPEC_ANNOTATION: "{}"}}, "spec": {"y": 2}})
        );
        assert!(!same_routing(&live, &planned));
        assert!(same_routing(
            &live,
            &json!({"metadata": {"labels": {"a": "b"}, "annotations": {}}, "spec": {"x": 1.0}})
        ));
    }

    #[test]
    fn stored_as_planned_allows_for_pruned_null_fields_only() {
        let planned = json!({"spec": {"http": [{"route": [{"weight": 20}], "headers": {"request": {"set": null}}}]}});
        let pruned = json!({"spec": {"http": [{"route": [{"weight": 20}], "headers": {"request": {}}}]}});
        assert!(!same_routing(&pruned, &planned), "a shown plan keeps the null, as the controller's result does");
        assert!(stored_as_planned(&pruned, &planned));
        assert!(stored_as_planned(&planned, &planned));
        let mutated = json!({"spec": {"http": [{"route": [{"weight": 0}], "headers": {"request": {}}}]}});
        assert!(!stored_as_planned(&mutated, &planned));
    }
}
