//! An HTTPRoute's spec as the controller holds it: decoded into the `v1beta1` Go types of
//! gateway-api v0.8.1 (the version it pins), and encoded back from them. The controller
//! computes and compares rules in that form, and its update sends that encoding, so fields
//! v0.8.1 does not know are dropped (docs/controller-semantics.md §7.2) and `omitempty` drops
//! empty lists.
//!
//! The decoded form is JSON that keeps Go's distinctions: a nil pointer or slice is an absent
//! key, an empty slice is `[]`, a non-pointer field is always there (its zero value when the
//! JSON has none). Two decoded values are equal exactly when Go's `reflect.DeepEqual` says so.
//!
//! Also the route as the API server stores it (`as_stored`): the CRD's defaults, field by field
//! in the same schema.

use super::json_kind as kind;
use serde_json::{Map, Value};

/// The Gateway API's group; HTTPRoutes are read at [`CONTROLLER_VERSION`] when the API server
/// serves it, else at `v1` (the one stored object either way).
pub const GROUP: &str = "gateway.networking.k8s.io";
pub const KIND: &str = "HTTPRoute";
/// The only version the controller reads and writes HTTPRoutes at (gateway-api v0.8.1's types).
pub const CONTROLLER_VERSION: &str = "v1beta1";

/// What it means for HTTPRoutes `names` that the API server does not serve them at
/// [`CONTROLLER_VERSION`] (but at `version`).
pub fn not_served_to_the_controller(names: &str, version: &str) -> String {
    format!(
        "HTTPRoute {names}: the API server serves httproutes.{GROUP} at {version}, not at {CONTROLLER_VERSION}, the only version the controller reads and writes them at (it pins gateway-api v0.8.1): its reconcile fails, and it neither routes a step through the route nor restores it at the end; the plan shows what it would write were {CONTROLLER_VERSION} served"
    )
}

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
    /// The HTTPRoute CRD's `default` for the field (JSON), which the API server fills in where
    /// the field is absent (Gateway API v1.x standard channel, the same in v0.8.1).
    default: Option<&'static str>,
}

const fn field(name: &'static str, ty: Type) -> Field {
    Field { name, ty, default: None }
}

const fn defaulted(name: &'static str, ty: Type, default: &'static str) -> Field {
    Field { name, ty, default: Some(default) }
}

use Type::*;

/// A match of every path: the default of a match's path, of a rule's matches, and of the rules.
const EVERY_PATH: &str = r#"{"type": "PathPrefix", "value": "/"}"#;
const EVERY_PATH_MATCHES: &str = r#"[{"path": {"type": "PathPrefix", "value": "/"}}]"#;
const EVERY_PATH_RULES: &str = r#"[{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}]"#;

const HEADER_MATCH: &[Field] = &[defaulted("type", OptStr, r#""Exact""#), field("name", Str), field("value", Str)];
const PATH_MATCH: &[Field] = &[defaulted("type", OptStr, r#""PathPrefix""#), defaulted("value", OptStr, r#""/""#)];
const ROUTE_MATCH: &[Field] = &[
    defaulted("path", OptStruct(PATH_MATCH), EVERY_PATH),
    field("headers", List(&Struct(HEADER_MATCH))),
    field("queryParams", List(&Struct(HEADER_MATCH))),
    field("method", OptStr),
];
const HEADER: &[Field] = &[field("name", Str), field("value", Str)];
const HEADER_FILTER: &[Field] =
    &[field("set", List(&Struct(HEADER))), field("add", List(&Struct(HEADER))), field("remove", List(&Str))];
const BACKEND_OBJECT_REFERENCE: &[Field] = &[
    defaulted("group", OptStr, r#""""#),
    defaulted("kind", OptStr, r#""Service""#),
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
    defaulted("statusCode", OptInt, "302"),
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
    defaulted("group", OptStr, r#""""#),
    defaulted("kind", OptStr, r#""Service""#),
    field("name", Str),
    field("namespace", OptStr),
    field("port", OptInt32),
    defaulted("weight", OptInt32, "1"),
    field("filters", List(&Struct(FILTER))),
];
const RULE: &[Field] = &[
    defaulted("matches", List(&Struct(ROUTE_MATCH)), EVERY_PATH_MATCHES),
    field("filters", List(&Struct(FILTER))),
    field("backendRefs", List(&Struct(BACKEND_REF))),
    field("timeouts", OptStruct(&[field("request", OptStr), field("backendRequest", OptStr)])),
];
const PARENT_REFERENCE: &[Field] = &[
    defaulted("group", OptStr, r#""gateway.networking.k8s.io""#),
    defaulted("kind", OptStr, r#""Gateway""#),
    field("namespace", OptStr),
    field("name", Str),
    field("sectionName", OptStr),
    field("port", OptInt32),
];
const SPEC: &[Field] = &[
    field("parentRefs", List(&Struct(PARENT_REFERENCE))),
    field("hostnames", List(&Str)),
    defaulted("rules", List(&Struct(RULE)), EVERY_PATH_RULES),
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
    serde_json::from_str(EVERY_PATH_RULES).expect("the default is JSON")
}

/// The HTTPRoute CRD's rules (gateway-api v0.8 to v1) that `spec`, as stored, breaks, each as
/// `field: what`: at most 16 rules, 16 backendRefs a rule, each weighted 0 to 1,000,000, 64
/// matches a rule and 128 in all (v1.1 on; 8 a rule before: `matches_past_v1_0`), 16 headers
/// and query parameters a match, each name once (lists keyed by name), and a
/// `ReplacePrefixMatch` path rewrite or redirect only on a rule with exactly one match, of type
/// PathPrefix (its CEL rules). The API server refuses such a write.
pub fn crd_rules_broken(spec: &Value) -> Vec<String> {
    const MAX_RULES: usize = 16;
    const MAX_LIST: usize = 16;
    const MAX_WEIGHT: i64 = 1_000_000;
    const MAX_MATCHES: usize = 64;
    const MAX_MATCHES_IN_ALL: usize = 128;
    let mut broken = Vec::new();
    let rules = spec["rules"].as_array().map(Vec::as_slice).unwrap_or_default();
    if rules.len() > MAX_RULES {
        broken.push(format!("spec.rules: {} rules, at most {MAX_RULES}", rules.len()));
    }
    let in_all: usize = rules.iter().map(|rule| matches_of(rule).len()).sum();
    if in_all > MAX_MATCHES_IN_ALL {
        broken.push(format!("spec.rules: {in_all} matches in all, at most {MAX_MATCHES_IN_ALL}"));
    }
    for (i, rule) in rules.iter().enumerate() {
        if matches_of(rule).len() > MAX_MATCHES {
            broken.push(format!("spec.rules[{i}].matches: {} matches, at most {MAX_MATCHES}", matches_of(rule).len()));
        }
        let backends = rule["backendRefs"].as_array().map(Vec::as_slice).unwrap_or_default();
        if backends.len() > MAX_LIST {
            broken.push(format!("spec.rules[{i}].backendRefs: {} entries, at most {MAX_LIST}", backends.len()));
        }
        for (j, backend) in backends.iter().enumerate() {
            if let Some(weight) = backend["weight"].as_i64().filter(|w| !(0..=MAX_WEIGHT).contains(w)) {
                broken.push(format!("spec.rules[{i}].backendRefs[{j}].weight: {weight}, from 0 to {MAX_WEIGHT}"));
            }
        }
        let matches = matches_of(rule);
        for (j, condition) in matches.iter().enumerate() {
            for list in ["headers", "queryParams"] {
                let entries = condition[list].as_array().map(Vec::as_slice).unwrap_or_default();
                let at = format!("spec.rules[{i}].matches[{j}].{list}");
                if entries.len() > MAX_LIST {
                    broken.push(format!("{at}: {} entries, at most {MAX_LIST}", entries.len()));
                }
                for (k, entry) in entries.iter().enumerate() {
                    if entries[..k].iter().any(|e| e["name"] == entry["name"]) {
                        broken.push(format!("{at}[{k}]: name {} is there twice (each name once)", entry["name"]));
                    }
                }
            }
        }
        let one_prefix_match = matches.len() == 1 && matches[0]["path"]["type"] == "PathPrefix";
        for (j, filter) in rule["filters"].as_array().into_iter().flatten().enumerate() {
            let path = &filter[if filter["type"] == "URLRewrite" { "urlRewrite" } else { "requestRedirect" }]["path"];
            if path["type"] == "ReplacePrefixMatch" && !one_prefix_match {
                broken.push(format!(
                    "spec.rules[{i}].filters[{j}]: with path.replacePrefixMatch ({}), exactly one PathPrefix match must be specified, and the rule has {} match{}",
                    filter["type"].as_str().unwrap_or_default(),
                    matches.len(),
                    if matches.len() == 1 { " (not of type PathPrefix)" } else { "es" }
                ));
            }
        }
    }
    broken
}

/// The rules of `spec`, as stored, with more matches than gateway-api before v1.1 allows (8 a
/// rule; from v1.1 on 64, which `crd_rules_broken` checks), each as `spec.rules[i].matches: N
/// matches`: an API server with such a CRD refuses the write.
pub fn matches_past_v1_0(spec: &Value) -> Vec<String> {
    const MAX_MATCHES_BEFORE_V1_1: usize = 8;
    let rules = spec["rules"].as_array().map(Vec::as_slice).unwrap_or_default();
    let past = rules.iter().enumerate().filter(|(_, rule)| matches_of(rule).len() > MAX_MATCHES_BEFORE_V1_1);
    past.map(|(i, rule)| format!("spec.rules[{i}].matches: {} matches", matches_of(rule).len())).collect()
}

fn matches_of(rule: &Value) -> &[Value] {
    rule["matches"].as_array().map(Vec::as_slice).unwrap_or_default()
}

/// An HTTPRoute as the API server stores it: each `default` of its CRD's schema filled in where
/// its field is absent (or null, which the API server prunes first), inside the maps and lists
/// that are there: a rule's catch-all match, backendRefs' kind and weight, … A route read from
/// a cluster has them all already; one given in a file gets them here, since the controller
/// only ever reads a stored route (a rule without `matches` matches every path).
pub fn as_stored(route: &mut Value) {
    if let Some(spec) = route.get_mut("spec") {
        default_struct(spec, SPEC);
    }
}

fn default_struct(value: &mut Value, fields: &[Field]) {
    let Some(map) = value.as_object_mut() else { return };
    for f in fields {
        if let Some(default) = f.default
            && map.get(f.name).is_none_or(Value::is_null)
        {
            map.insert(f.name.into(), serde_json::from_str(default).expect("a default is JSON"));
        }
        if let Some(value) = map.get_mut(f.name) {
            default_value(value, &f.ty);
        }
    }
}

fn default_value(value: &mut Value, ty: &Type) {
    match ty {
        Struct(fields) | OptStruct(fields) => default_struct(value, fields),
        List(item) => value.as_array_mut().into_iter().flatten().for_each(|v| default_value(v, item)),
        _ => {}
    }
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
    fn the_crds_rules_a_stored_route_breaks_are_named() {
        let prefix = json!({"path": {"type": "PathPrefix", "value": "/api"}});
        let rewrite = json!({"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}});
        let redirect = json!({"type": "RequestRedirect", "requestRedirect": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}});
        let header = |name: &str| json!({"type": "Exact", "name": name, "value": "1"});
        let fine = json!({"rules": [
            {"matches": [prefix], "filters": [rewrite]},
            {"matches": [{"headers": [header("a"), header("b")], "queryParams": [header("a")]}]},
            {"matches": [prefix], "filters": [{"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplaceFullPath", "replaceFullPath": "/"}}}]}
        ]});
        assert_eq!(crd_rules_broken(&fine), Vec::<String>::new());
        let exact = json!({"path": {"type": "Exact", "value": "/api"}});
        let sixteen: Vec<Value> = (0..17).map(|i| header(&format!("h{i}"))).collect();
        let broken = json!({"rules": [
            {"matches": [prefix, prefix], "filters": [rewrite]},
            {"matches": [exact], "filters": [redirect]},
            {"matches": [{"headers": [header("a"), header("b"), header("a")], "queryParams": sixteen}]}
        ]});
        assert_eq!(
            crd_rules_broken(&broken),
            [
                "spec.rules[0].filters[0]: with path.replacePrefixMatch (URLRewrite), exactly one PathPrefix match must be specified, and the rule has 2 matches",
                "spec.rules[1].filters[0]: with path.replacePrefixMatch (RequestRedirect), exactly one PathPrefix match must be specified, and the rule has 1 match (not of type PathPrefix)",
                "spec.rules[2].matches[0].headers[2]: name \"a\" is there twice (each name once)",
                "spec.rules[2].matches[0].queryParams: 17 entries, at most 16",
            ]
        );
        let many = json!({"rules": vec![json!({}); 17]});
        assert_eq!(crd_rules_broken(&many), ["spec.rules: 17 rules, at most 16"]);
        let backend = |weight: i64| json!({"name": "store", "port": 80, "weight": weight});
        let weighted = json!({"rules": [
            {"backendRefs": [backend(0), backend(1_000_000), backend(-5), backend(1_000_001)]},
            {"backendRefs": vec![backend(1); 17]}
        ]});
        assert_eq!(
            crd_rules_broken(&weighted),
            [
                "spec.rules[0].backendRefs[2].weight: -5, from 0 to 1000000",
                "spec.rules[0].backendRefs[3].weight: 1000001, from 0 to 1000000",
                "spec.rules[1].backendRefs: 17 entries, at most 16",
            ]
        );
    }

    #[test]
    fn matches_past_the_limits_of_each_gateway_api_version_are_named() {
        let rule = |n: usize| json!({"matches": vec![json!({"path": {"type": "PathPrefix", "value": "/"}}); n]});
        let eight = json!({"rules": [rule(8), rule(8), {}]});
        assert_eq!(crd_rules_broken(&eight), Vec::<String>::new());
        assert_eq!(matches_past_v1_0(&eight), Vec::<String>::new());
        let nine = json!({"rules": [rule(3), rule(9), rule(64)]});
        assert_eq!(crd_rules_broken(&nine), Vec::<String>::new(), "v1.1 on allows it");
        assert_eq!(matches_past_v1_0(&nine), ["spec.rules[1].matches: 9 matches", "spec.rules[2].matches: 64 matches"]);
        let too_many = json!({"rules": [rule(65), rule(64)]});
        assert_eq!(
            crd_rules_broken(&too_many),
            ["spec.rules: 129 matches in all, at most 128", "spec.rules[0].matches: 65 matches, at most 64"]
        );
    }

    #[test]
    fn a_route_as_stored_has_its_crds_defaults_where_fields_are_absent() {
        let mut route = json!({"spec": {
            "parentRefs": [{"name": "gw"}],
            "rules": [
                {"backendRefs": [{"name": "a", "port": 80}]},
                {"matches": [{"headers": [{"name": "h", "value": "1"}], "queryParams": [{"name": "q", "value": "2"}]},
                             {"path": {"value": "/x"}}, {"path": null}],
                 "filters": [{"type": "RequestRedirect", "requestRedirect": {"hostname": "b"}},
                             {"type": "RequestMirror", "requestMirror": {"backendRef": {"name": "m"}}}],
                 "backendRefs": [{"name": "b", "kind": "Other", "group": "x.io", "weight": 0}]},
                {"matches": [], "newField": {"kept": true}}
            ]
        }});
        as_stored(&mut route);
        let every_path = json!({"path": {"type": "PathPrefix", "value": "/"}});
        assert_eq!(
            route["spec"],
            json!({
                "parentRefs": [{"name": "gw", "group": "gateway.networking.k8s.io", "kind": "Gateway"}],
                "rules": [
                    {"matches": [every_path], "backendRefs": [{"name": "a", "port": 80, "group": "", "kind": "Service", "weight": 1}]},
                    {"matches": [{"headers": [{"name": "h", "value": "1", "type": "Exact"}],
                                  "queryParams": [{"name": "q", "value": "2", "type": "Exact"}],
                                  "path": {"type": "PathPrefix", "value": "/"}},
                                 {"path": {"type": "PathPrefix", "value": "/x"}}, every_path],
                     "filters": [{"type": "RequestRedirect", "requestRedirect": {"hostname": "b", "statusCode": 302}},
                                 {"type": "RequestMirror", "requestMirror": {"backendRef": {"name": "m", "group": "", "kind": "Service"}}}],
                     "backendRefs": [{"name": "b", "kind": "Other", "group": "x.io", "weight": 0}]},
                    // An empty list is kept (a default fills an absent field only); fields v0.8.1
                    // does not know are left as they are.
                    {"matches": [], "newField": {"kept": true}}
                ]
            })
        );
        // No rules: the catch-all rule; no spec: nothing made up.
        let mut bare = json!({"spec": {}});
        as_stored(&mut bare);
        assert_eq!(bare["spec"], json!({"rules": default_rules()}));
        let mut specless = json!({"metadata": {"name": "r"}});
        as_stored(&mut specless);
        assert_eq!(specless, json!({"metadata": {"name": "r"}}));
    }

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
