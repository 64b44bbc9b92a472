//! An HTTPRoute's spec as the controller holds it: decoded into the `v1beta1` Go types of
//! gateway-api v0.8.1 (the version it pins), and encoded back from them. The controller
//! computes and compares rules in that form, and its update sends that encoding, so fields
//! v0.8.1 does not know are dropped (docs/controller-semantics.md §7.2) and `omitempty` drops
//! empty lists.
//!
//! The decoded form is JSON that keeps Go's distinctions: a nil pointer or slice is an absent
//! key, an empty slice is `[]`, a non-pointer field is always there (its zero value when the
//! JSON has none). Two decoded values are equal exactly when Go's `reflect.DeepEqual` says so.

use serde_json::{Map, Value};

/// A Go field type of the schema.
enum Type {
    /// `string` (never omitted).
    Str,
    /// `*string` (or a pointer to a string type), `omitempty`.
    OptStr,
    /// `*int32` (weights, ports), `omitempty`.
    OptInt32,
    /// `*int` (a redirect's status code), `omitempty`.
    OptInt,
    /// A struct value (never omitted).
    Struct(&'static [Field]),
    /// A pointer to a struct, `omitempty`.
    OptStruct(&'static [Field]),
    /// A slice, `omitempty`.
    List(&'static Type),
}

struct Field {
    name: &'static str,
    ty: Type,
}

const fn field(name: &'static str, ty: Type) -> Field {
    Field { name, ty }
}

use Type::*;

const HEADER_MATCH: &[Field] = &[field("type", OptStr), field("name", Str), field("value", Str)];
const PATH_MATCH: &[Field] = &[field("type", OptStr), field("value", OptStr)];
const ROUTE_MATCH: &[Field] = &[
    field("path", OptStruct(PATH_MATCH)),
    field("headers", List(&Struct(HEADER_MATCH))),
    field("queryParams", List(&Struct(HEADER_MATCH))),
    field("method", OptStr),
];
const HEADER: &[Field] = &[field("name", Str), field("value", Str)];
const HEADER_FILTER: &[Field] =
    &[field("set", List(&Struct(HEADER))), field("add", List(&Struct(HEADER))), field("remove", List(&Str))];
const BACKEND_OBJECT_REFERENCE: &[Field] = &[
    field("group", OptStr),
    field("kind", OptStr),
    field("name", Str),
    field("namespace", OptStr),
    field("port", OptInt32),
];
const PATH_MODIFIER: &[Field] =
    &[field("type", Str), field("replaceFullPath", OptStr), field("replacePrefixMatch", OptStr)];
const REDIRECT: &[Field] = &[
    field("scheme", OptStr),
    field("hostname", OptStr),
    field("path", OptStruct(PATH_MODIFIER)),
    field("port", OptInt32),
    field("statusCode", OptInt),
];
const FILTER: &[Field] = &[
    field("type", Str),
    field("requestHeaderModifier", OptStruct(HEADER_FILTER)),
    field("responseHeaderModifier", OptStruct(HEADER_FILTER)),
    field("requestMirror", OptStruct(&[field("backendRef", Struct(BACKEND_OBJECT_REFERENCE))])),
    field("requestRedirect", OptStruct(REDIRECT)),
    field("urlRewrite", OptStruct(&[field("hostname", OptStr), field("path", OptStruct(PATH_MODIFIER))])),
    field("extensionRef", OptStruct(&[field("group", Str), field("kind", Str), field("name", Str)])),
];
const BACKEND_REF: &[Field] = &[
    field("group", OptStr),
    field("kind", OptStr),
    field("name", Str),
    field("namespace", OptStr),
    field("port", OptInt32),
    field("weight", OptInt32),
    field("filters", List(&Struct(FILTER))),
];
const RULE: &[Field] = &[
    field("matches", List(&Struct(ROUTE_MATCH))),
    field("filters", List(&Struct(FILTER))),
    field("backendRefs", List(&Struct(BACKEND_REF))),
    field("timeouts", OptStruct(&[field("request", OptStr), field("backendRequest", OptStr)])),
];
const PARENT_REFERENCE: &[Field] = &[
    field("group", OptStr),
    field("kind", OptStr),
    field("namespace", OptStr),
    field("name", Str),
    field("sectionName", OptStr),
    field("port", OptInt32),
];
const SPEC: &[Field] = &[
    field("parentRefs", List(&Struct(PARENT_REFERENCE))),
    field("hostnames", List(&Str)),
    field("rules", List(&Struct(RULE))),
];

/// The filter types v0.8.1 knows; a newer one keeps its `type` but loses its own field.
pub const FILTER_TYPES: &[&str] = &[
    "RequestHeaderModifier",
    "ResponseHeaderModifier",
    "RequestMirror",
    "RequestRedirect",
    "URLRewrite",
    "ExtensionRef",
];

/// What the API server stores when an update leaves `spec.rules` out (the controller's when no
/// rule is left): the HTTPRoute CRD's default, one rule that matches every path and has no
/// backendRefs (`+kubebuilder:default` on `HTTPRouteSpec.Rules`, in v0.8.1 as in v1.x). Decoded
/// form, which for this rule is also its JSON.
pub fn default_rules() -> Vec<Value> {
    vec![serde_json::json!({"matches": [{"path": {"type": "PathPrefix", "value": "/"}}]})]
}

/// A spec decoded as the controller's Go types hold it.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    pub spec: Value,
    /// Where the JSON had fields v0.8.1 does not know (`spec.rules[0].name`), in order.
    pub dropped: Vec<String>,
}

/// Decodes `spec` as Go's `json.Unmarshal` into `HTTPRouteSpec` does. A value of the wrong
/// type is an error naming its path (the controller's read fails on it).
pub fn decode(spec: &Value) -> Result<Decoded, String> {
    let mut dropped = Vec::new();
    let spec = decode_struct(spec, SPEC, "spec", &mut dropped)?;
    Ok(Decoded { spec, dropped })
}

/// Encodes a decoded spec as Go's `json.Marshal` does: nil pointers and empty slices left out.
pub fn encode(spec: &Value) -> Value {
    encode_struct(spec, SPEC)
}

fn decode_struct(value: &Value, fields: &[Field], path: &str, dropped: &mut Vec<String>) -> Result<Value, String> {
    let mut out = Map::new();
    let input = match value {
        Value::Null => None,
        Value::Object(map) => Some(map),
        other => return Err(format!("{path}: must be a map, not {}", kind(other))),
    };
    for f in fields {
        let at = format!("{path}.{}", f.name);
        if let Some(decoded) = decode_value(input.and_then(|m| m.get(f.name)), &f.ty, &at, dropped)? {
            out.insert(f.name.into(), decoded);
        }
    }
    for key in input.into_iter().flat_map(Map::keys) {
        if !fields.iter().any(|f| f.name == key) {
            dropped.push(format!("{path}.{key}"));
        }
    }
    Ok(Value::Object(out))
}

/// A field's decoded value, `None` for a nil pointer or slice.
fn decode_value(
    value: Option<&Value>,
    ty: &Type,
    path: &str,
    dropped: &mut Vec<String>,
) -> Result<Option<Value>, String> {
    let value = value.filter(|v| !v.is_null());
    Ok(match (ty, value) {
        (Str, None) => Some(Value::String(String::new())),
        (Struct(fields), None) => Some(decode_struct(&Value::Null, fields, path, dropped)?),
        (_, None) => None,
        (Str | OptStr, Some(v @ Value::String(_))) => Some(v.clone()),
        (OptInt32, Some(v)) => Some(integer(v, path, i32::MIN.into(), i32::MAX.into(), "int32")?),
        (OptInt, Some(v)) => Some(integer(v, path, i64::MIN, i64::MAX, "int")?),
        (Struct(fields) | OptStruct(fields), Some(v)) => Some(decode_struct(v, fields, path, dropped)?),
        (List(item), Some(Value::Array(items))) => Some(Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    decode_value(Some(v), item, &format!("{path}[{i}]"), dropped).map(|d| d.unwrap_or(Value::Null))
                })
                .collect::<Result<_, _>>()?,
        )),
        (List(_), Some(other)) => return Err(format!("{path}: must be a list, not {}", kind(other))),
        (_, Some(other)) => return Err(format!("{path}: must be a string, not {}", kind(other))),
    })
}

fn integer(value: &Value, path: &str, min: i64, max: i64, go_type: &str) -> Result<Value, String> {
    match value.as_i64().filter(|n| (min..=max).contains(n)) {
        Some(n) => Ok(n.into()),
        None => Err(format!("{path}: must be an integer that fits Go's {go_type}, not {value}")),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

fn encode_struct(value: &Value, fields: &[Field]) -> Value {
    let mut out = Map::new();
    for f in fields {
        if let Some(encoded) = value.get(f.name).and_then(|v| encode_value(v, &f.ty)) {
            out.insert(f.name.into(), encoded);
        }
    }
    Value::Object(out)
}

fn encode_value(value: &Value, ty: &Type) -> Option<Value> {
    match ty {
        Struct(fields) | OptStruct(fields) => Some(encode_struct(value, fields)),
        List(item) => match value.as_array() {
            Some(items) if !items.is_empty() => {
                Some(Value::Array(items.iter().map(|v| encode_value(v, item).unwrap_or(Value::Null)).collect()))
            }
            _ => None,
        },
        _ => Some(value.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decoding_keeps_gos_nil_and_empty_apart_and_fills_zero_values() {
        let spec = json!({"rules": [
            {"matches": [], "backendRefs": [{"kind": "Service", "weight": 5}]},
            {"filters": null, "backendRefs": [{"name": "b", "group": ""}]}
        ]});
        let decoded = decode(&spec).unwrap();
        assert_eq!(
            decoded.spec,
            json!({"rules": [
                {"matches": [], "backendRefs": [{"kind": "Service", "name": "", "weight": 5}]},
                {"backendRefs": [{"name": "b", "group": ""}]}
            ]})
        );
        assert!(decoded.dropped.is_empty());
        // Encoding leaves out what omitempty leaves out: the empty matches.
        assert_eq!(
            encode(&decoded.spec),
            json!({"rules": [
                {"backendRefs": [{"kind": "Service", "name": "", "weight": 5}]},
                {"backendRefs": [{"name": "b", "group": ""}]}
            ]})
        );
    }

    #[test]
    fn fields_v0_8_1_does_not_know_are_dropped_and_named() {
        let spec = json!({
            "useDefaultGateways": "All",
            "parentRefs": [{"name": "gw", "sectionName": "http", "port": 80}],
            "rules": [{
                "name": "main",
                "sessionPersistence": {"sessionName": "s"},
                "retry": {"attempts": 2},
                "timeouts": {"request": "10s"},
                "matches": [{"method": "GET", "path": {"type": "Exact", "value": "/"}}],
                "filters": [
                    {"type": "CORS", "cors": {"allowOrigins": ["*"]}},
                    {"type": "RequestMirror", "requestMirror": {"backendRef": {"name": "m"}, "percent": 10}},
                    {"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 301}}
                ],
                "backendRefs": [{"kind": "Service", "name": "web", "port": 80, "weight": 1,
                                 "filters": [{"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}]}]
            }]
        });
        let decoded = decode(&spec).unwrap();
        assert_eq!(
            decoded.dropped,
            [
                "spec.rules[0].filters[0].cors",
                "spec.rules[0].filters[1].requestMirror.percent",
                "spec.rules[0].name",
                "spec.rules[0].retry",
                "spec.rules[0].sessionPersistence",
                "spec.useDefaultGateways"
            ]
        );
        let encoded = encode(&decoded.spec);
        assert_eq!(encoded["parentRefs"], spec["parentRefs"]);
        assert_eq!(encoded["rules"][0]["timeouts"], json!({"request": "10s"}));
        assert_eq!(encoded["rules"][0]["matches"], spec["rules"][0]["matches"]);
        assert_eq!(encoded["rules"][0]["filters"][0], json!({"type": "CORS"}));
        assert_eq!(
            encoded["rules"][0]["filters"][1],
            json!({"type": "RequestMirror", "requestMirror": {"backendRef": {"name": "m"}}})
        );
        assert_eq!(encoded["rules"][0]["filters"][2], spec["rules"][0]["filters"][2]);
        assert_eq!(encoded["rules"][0]["backendRefs"], spec["rules"][0]["backendRefs"]);
        assert!(encoded["rules"][0].get("name").is_none());
    }

    #[test]
    fn values_of_the_wrong_type_fail_like_gos_decoder() {
        let err = |spec: Value| decode(&spec).unwrap_err();
        assert_eq!(
            err(json!({"rules": [{"backendRefs": [{"name": "a", "weight": "5"}]}]})),
            "spec.rules[0].backendRefs[0].weight: must be an integer that fits Go's int32, not \"5\""
        );
        assert_eq!(
            err(json!({"rules": [{"backendRefs": [{"name": "a", "weight": 2147483648_i64}]}]})),
            "spec.rules[0].backendRefs[0].weight: must be an integer that fits Go's int32, not 2147483648"
        );
        assert_eq!(
            err(json!({"rules": [{"backendRefs": [{"name": "a", "port": 80.5}]}]})),
            "spec.rules[0].backendRefs[0].port: must be an integer that fits Go's int32, not 80.5"
        );
        assert_eq!(err(json!({"rules": {"a": 1}})), "spec.rules: must be a list, not a map");
        assert_eq!(err(json!({"hostnames": [1]})), "spec.hostnames[0]: must be a string, not a number");
        assert_eq!(err(json!([])), "spec: must be a map, not a list");
    }
}
