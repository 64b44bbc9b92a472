//! A step's traffic strategy (traffic, matches, requestHeaderModifier), read with the CRD's
//! types and defaults (none filled in when read as the controller's test harness reads it; the
//! CRD's enums and other rules are `admission`'s, as the API server's refusal), and the
//! weights the controller derives from it.

use super::{FieldMessage, ModelError, Path};
use serde_json::{Map, Value};

/// Whose reading of a Rollout or TrafficRouting: the controller's, or its test harness's
/// (docs/controller-semantics.md §6.2), which differ in small ways that test cases depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Semantics {
    /// Every object the controller reads went through the API server, which fills in the CRD's
    /// defaults: a match's `type`, a path's `value`.
    Controller,
    /// `go test` decodes the case YAML into Go types: nothing is filled in.
    Harness,
}

impl Semantics {
    /// A field as read: as given, else the CRD's `default` where the API server fills it in.
    fn or_default<'a>(self, given: Option<&'a str>, default: &'static str) -> Option<&'a str> {
        match self {
            Semantics::Controller => given.or(Some(default)),
            Semantics::Harness => given,
        }
    }
}

/// Whether a step's weights split the traffic between the canary and the stable pods. They do
/// unless the canary Service is the stable one (a TrafficRouting, `disableGenerateCanaryService`;
/// docs/ingress-gateway-semantics.md A.4, B.7), where it is up to each object: an HTTPRoute then
/// weighs its one backendRef, and most Ingress gateways balance over every pod of the Service.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum WeightSplit {
    #[default]
    Split,
    /// Through no object.
    NotSplit,
    /// Not through these objects (`HTTPRoute shop/store`), but through the others.
    NotSplitThrough(Vec<String>),
}

/// `TrafficRoutingStrategy`: what one step asks of the gateway.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RouteStrategy {
    /// The percent string, as written (`"20%"`).
    pub traffic: Option<String>,
    /// The matches as the controller holds them (an empty `headers: []` kept: Go tells it from an
    /// absent list; Lua gets them through `without_empty_lists`), with the CRD's defaults as the
    /// semantics they were read with say; `None` when the step has no `matches` field.
    pub matches: Option<Vec<Value>>,
    /// The Gateway API `HTTPHeaderFilter`, in the shape handed to Lua.
    pub request_header_modifier: Option<Value>,
}

impl RouteStrategy {
    /// A step with neither traffic nor matches means "original routing": the controller restores
    /// the stored original instead of running Lua.
    pub fn routes_traffic(&self) -> bool {
        self.traffic.is_some() || self.matches.as_ref().is_some_and(|m| !m.is_empty())
    }

    /// `canaryWeight` and `stableWeight` as the controller computes them, in int32: the percent
    /// scaled against 100 (exact for integers), 0 for a malformed string, -1/101 without
    /// traffic; `100 - canaryWeight` wraps as Go's int32 does (`"-2147483648%"` gives
    /// -2147483548).
    pub fn weights(&self) -> (i64, i64) {
        let canary = self.traffic.as_deref().map_or(-1, percent);
        (canary.into(), 100i32.wrapping_sub(canary).into())
    }

    /// A short human description: `traffic 20%`, `matches: …`, header changes; the weights said
    /// as `split` has them.
    pub fn describe_split(&self, split: &WeightSplit) -> String {
        let weights = |providers: &str| {
            let (canary, stable) = self.weights();
            let unsplit = "canary = stable Service: not split";
            match split {
                WeightSplit::Split => format!("canary {canary} / stable {stable}{providers}"),
                WeightSplit::NotSplit => unsplit.to_string(),
                WeightSplit::NotSplitThrough(objects) => {
                    format!("canary {canary} / stable {stable}{providers}; {unsplit} through {}", objects.join(", "))
                }
            }
        };
        let mut parts = Vec::new();
        if let Some(matches) = self.matches.as_ref().filter(|m| !m.is_empty()) {
            let alternatives: Vec<String> = matches.iter().map(describe_match).collect();
            let matches = format!("matches {}", alternatives.join(" OR "));
            // "Matches take precedence" holds for some providers only: each object's warnings
            // say which ignores the traffic.
            parts.push(match &self.traffic {
                Some(traffic) => format!("{matches} and traffic {traffic} ({})", weights(" where a provider uses it")),
                None => matches,
            });
        } else if let Some(traffic) = &self.traffic {
            parts.push(format!("traffic {traffic} ({})", weights("")));
        }
        let original = "original routing (no traffic, no matches)";
        // An empty modifier changes no header: nothing to say of it.
        let changes = self.request_header_modifier.as_ref().map(all_header_changes).filter(|c| !c.is_empty());
        match changes {
            // The controller finalises at a step without traffic or matches (it routes nothing
            // there), so a modifier alone is never applied.
            Some(changes) if parts.is_empty() => format!(
                "{original}, request headers {changes} not applied (the controller routes no step without traffic or matches)"
            ),
            Some(changes) => format!("{}, request headers: {changes}", parts.join(", ")),
            None if parts.is_empty() => original.into(),
            None => parts.join(", "),
        }
    }
}

/// Go's `intstr.GetScaledValueFromIntOrPercent(…, 100, true)` on a traffic string, converted to
/// the controller's int32, or 0 when it does not parse (the controller ignores the error).
fn percent(traffic: &str) -> i32 {
    parse_percent(traffic).unwrap_or(0)
}

fn parse_percent(traffic: &str) -> Option<i32> {
    let value = parse_whole_percent(traffic)?;
    // ceil(value * 100 / 100) in float64, then the controller's int32 conversion.
    Some((value as f64 * 100.0 / 100.0).ceil() as i64 as i32)
}

/// The number of a percent string as Go's `intstr` reads it: `strconv.Atoi` of the text before
/// a final `%` (an optional sign, then ASCII digits), `None` when it is not one.
pub(super) fn parse_whole_percent(text: &str) -> Option<i64> {
    let digits = text.strip_suffix('%')?;
    let unsigned = digits.strip_prefix(['+', '-']).unwrap_or(digits);
    if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn describe_match(m: &Value) -> String {
    let mut conditions = Vec::new();
    if let Some(path) = m.get("path") {
        conditions.push(format!(
            "path {} {}",
            kind_symbol(path["type"].as_str()),
            path["value"].as_str().unwrap_or("/")
        ));
    }
    for (field, what) in [("headers", "header"), ("queryParams", "query")] {
        for entry in m[field].as_array().into_iter().flatten() {
            let name = entry["name"].as_str().unwrap_or("");
            let value = entry["value"].as_str().unwrap_or("");
            conditions.push(format!("{what} {name}{}{value}", kind_symbol(entry["type"].as_str())));
        }
    }
    if conditions.is_empty() { "[any request]".into() } else { format!("[{}]", conditions.join(" AND ")) }
}

fn kind_symbol(kind: Option<&str>) -> &'static str {
    match kind {
        Some("RegularExpression") => "~",
        Some("PathPrefix") => "^",
        _ => "=",
    }
}

/// Every change of a requestHeaderModifier: `set x=1, add y=2, remove z`.
fn all_header_changes(modifier: &Value) -> String {
    header_changes(modifier, &["set", "add", "remove"]).join(", ")
}

/// The changes of a requestHeaderModifier under `actions` (of `set`, `add`, `remove`, in that
/// order), as the step heading says them: `set x=1`, `add y=2`, `remove z`.
pub fn header_changes(modifier: &Value, actions: &[&str]) -> Vec<String> {
    let mut parts = Vec::new();
    for action in ["set", "add"].into_iter().filter(|a| actions.contains(a)) {
        for header in modifier[action].as_array().into_iter().flatten() {
            parts.push(format!(
                "{action} {}={}",
                header["name"].as_str().unwrap_or(""),
                header["value"].as_str().unwrap_or("")
            ));
        }
    }
    if actions.contains(&"remove") {
        for name in modifier["remove"].as_array().into_iter().flatten() {
            parts.push(format!("remove {}", name.as_str().unwrap_or("")));
        }
    }
    parts
}

/// Reads `matches` with the CRD's enums, and its defaults under `Semantics::Controller`.
/// `headers_only` is the v1alpha1 (and TrafficRouting) shape, where the API server prunes path
/// and queryParams.
pub fn read_matches(
    value: &Value,
    path: &Path,
    headers_only: bool,
    semantics: Semantics,
    warnings: &mut Vec<FieldMessage>,
) -> Result<Vec<Value>, ModelError> {
    let items = value.as_array().ok_or_else(|| path.error("must be a list of matches"))?;
    let mut matches = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = path.index(i);
        let fields = item.as_object().ok_or_else(|| at.error("must be a map"))?;
        let mut out = Map::new();
        if headers_only {
            // One per field, as the CRD's unknown fields are: the same field is said once.
            for dropped in fields.keys().filter(|k| *k != "headers") {
                warnings.push(at.field(dropped).message(
                    "not supported in this API version, whose matches have headers only; the API server drops it",
                ));
            }
        } else if let Some(path_match) = fields.get("path").filter(|p| !p.is_null()) {
            out.insert("path".into(), read_path_match(path_match, &at.field("path"), semantics)?);
        }
        let lists: &[&str] = if headers_only { &["headers"] } else { &["headers", "queryParams"] };
        for field in lists {
            if let Some(list) = fields.get(*field).filter(|l| !l.is_null()) {
                out.insert((*field).into(), Value::Array(read_value_matches(list, &at.field(field), semantics)?));
            }
        }
        matches.push(Value::Object(out));
    }
    Ok(matches)
}

/// The matches as Go's JSON encoding writes them (`omitempty`): without empty `headers` and
/// `queryParams` lists. This is what Lua gets, and what a conversion webhook stores.
pub fn without_empty_lists(matches: &[Value]) -> Vec<Value> {
    let mut matches = matches.to_vec();
    for m in &mut matches {
        if let Some(fields) = m.as_object_mut() {
            fields.retain(|_, v| v.as_array().is_none_or(|list| !list.is_empty()));
        }
    }
    matches
}

fn read_path_match(value: &Value, path: &Path, semantics: Semantics) -> Result<Value, ModelError> {
    let fields = value.as_object().ok_or_else(|| path.error("must be a map with type and value"))?;
    let kind = semantics.or_default(optional_string(fields.get("type"), &path.field("type"))?, "PathPrefix");
    let value = semantics.or_default(optional_string(fields.get("value"), &path.field("value"))?, "/");
    Ok(present(&[("type", kind), ("value", value)]))
}

fn read_value_matches(value: &Value, path: &Path, semantics: Semantics) -> Result<Vec<Value>, ModelError> {
    let items = value.as_array().ok_or_else(|| path.error("must be a list"))?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let at = path.index(i);
            let fields = item.as_object().ok_or_else(|| at.error("must be a map with name and value"))?;
            let kind = semantics.or_default(optional_string(fields.get("type"), &at.field("type"))?, "Exact");
            let name = required_string(fields.get("name"), &at.field("name"))?;
            let value = required_string(fields.get("value"), &at.field("value"))?;
            Ok(present(&[("type", kind), ("name", Some(name)), ("value", Some(value))]))
        })
        .collect()
}

/// A map of the fields that have a value: Go leaves out a nil pointer field (`omitempty`).
fn present(fields: &[(&str, Option<&str>)]) -> Value {
    Value::Object(fields.iter().filter_map(|&(name, value)| Some((name.into(), Value::from(value?)))).collect())
}

/// Reads a Gateway API `HTTPHeaderFilter` (`set`/`add` lists of name+value, `remove` names).
pub fn read_header_modifier(value: &Value, path: &Path) -> Result<Value, ModelError> {
    let fields = value.as_object().ok_or_else(|| path.error("must be a map with set, add or remove"))?;
    let mut out = Map::new();
    for action in ["set", "add"] {
        if let Some(list) = fields.get(action).filter(|l| !l.is_null()) {
            let at = path.field(action);
            let items = list.as_array().ok_or_else(|| at.error("must be a list of {name, value}"))?;
            let headers = items
                .iter()
                .enumerate()
                .map(|(i, h)| {
                    let at = at.index(i);
                    let name = required_string(h.get("name"), &at.field("name"))?;
                    let value = required_string(h.get("value"), &at.field("value"))?;
                    Ok(serde_json::json!({"name": name, "value": value}))
                })
                .collect::<Result<Vec<_>, ModelError>>()?;
            if !headers.is_empty() {
                out.insert(action.into(), Value::Array(headers));
            }
        }
    }
    if let Some(list) = fields.get("remove").filter(|l| !l.is_null()) {
        let at = path.field("remove");
        let items = list.as_array().ok_or_else(|| at.error("must be a list of header names"))?;
        let names = items
            .iter()
            .enumerate()
            .map(|(i, n)| required_string(Some(n), &at.index(i)).map(|s| Value::String(s.into())))
            .collect::<Result<Vec<_>, ModelError>>()?;
        if !names.is_empty() {
            out.insert("remove".into(), Value::Array(names));
        }
    }
    Ok(Value::Object(out))
}

/// A Go `int32` field (a v1alpha1 step's or a TrafficRouting's weight): an integer that fits,
/// else Go's decoding fails.
pub fn int32(value: &Value, path: &Path) -> Result<i32, ModelError> {
    match value.as_i64().map(i32::try_from) {
        Some(Ok(n)) => Ok(n),
        _ if value.is_i64() || value.is_u64() => {
            Err(path.error(&format!("{value} is out of range for an int32 ({} to {})", i32::MIN, i32::MAX)))
        }
        _ => Err(path.error("must be an integer")),
    }
}

pub fn optional_string<'a>(value: Option<&'a Value>, path: &Path) -> Result<Option<&'a str>, ModelError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(path.error(&format!("must be a string, not {other}"))),
    }
}

pub fn required_string<'a>(value: Option<&'a Value>, path: &Path) -> Result<&'a str, ModelError> {
    optional_string(value, path)?.ok_or_else(|| path.error("is required"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn weights_are_said_split_only_where_they_split() {
        let twenty = RouteStrategy { traffic: Some("20%".into()), ..Default::default() };
        let through = WeightSplit::NotSplitThrough(vec!["HTTPRoute shop/web".into()]);
        assert_eq!(twenty.describe_split(&WeightSplit::Split), "traffic 20% (canary 20 / stable 80)");
        assert_eq!(twenty.describe_split(&WeightSplit::NotSplit), "traffic 20% (canary = stable Service: not split)");
        assert_eq!(
            twenty.describe_split(&through),
            "traffic 20% (canary 20 / stable 80; canary = stable Service: not split through HTTPRoute shop/web)"
        );
        let both = RouteStrategy { matches: Some(vec![json!({"headers": [{"name": "x", "value": "1"}]})]), ..twenty };
        assert_eq!(
            both.describe_split(&through),
            "matches [header x=1] and traffic 20% (canary 20 / stable 80 where a provider uses it; canary = stable Service: not split through HTTPRoute shop/web)"
        );
        // Matches alone have no weights to say.
        let matches = RouteStrategy { traffic: None, ..both };
        assert_eq!(matches.describe_split(&WeightSplit::NotSplit), "matches [header x=1]");
    }

    #[test]
    fn request_headers_are_said_not_applied_at_a_step_without_traffic_or_matches() {
        let modifier = json!({"set": [{"name": "x-tag", "value": "blue"}], "remove": ["x-debug"]});
        let alone = RouteStrategy { request_header_modifier: Some(modifier), ..Default::default() };
        assert_eq!(
            alone.describe_split(&WeightSplit::Split),
            "original routing (no traffic, no matches), request headers set x-tag=blue, remove x-debug not applied (the controller routes no step without traffic or matches)"
        );
        let routed = RouteStrategy { traffic: Some("10%".into()), ..alone };
        assert_eq!(
            routed.describe_split(&WeightSplit::Split),
            "traffic 10% (canary 10 / stable 90), request headers: set x-tag=blue, remove x-debug"
        );
        assert_eq!(
            RouteStrategy::default().describe_split(&WeightSplit::Split),
            "original routing (no traffic, no matches)"
        );
        // An empty one changes nothing, and is not said.
        let empty = RouteStrategy { request_header_modifier: Some(json!({"set": []})), ..routed };
        assert_eq!(empty.describe_split(&WeightSplit::Split), "traffic 10% (canary 10 / stable 90)");
    }

    #[test]
    fn weights_follow_the_controller() {
        let weights =
            |t: Option<&str>| RouteStrategy { traffic: t.map(str::to_string), ..Default::default() }.weights();
        assert_eq!(weights(Some("20%")), (20, 80));
        assert_eq!(weights(Some("+20%")), (20, 80));
        assert_eq!(weights(None), (-1, 101));
        for malformed in ["20", "20.5%", " 20%", "%", "abc%", "99999999999999999999%"] {
            assert_eq!(weights(Some(malformed)), (0, 100), "{malformed}");
        }
        // int32 arithmetic, as in the controller (the webhook rejects these; a cluster may hold them).
        assert_eq!(weights(Some("-2147483648%")), (-2147483648, -2147483548));
        assert_eq!(weights(Some("2147483648%")), (-2147483648, -2147483548), "truncated to int32");
        assert_eq!(weights(Some("-50%")), (-50, 150));
    }

    #[test]
    fn a_description_says_which_providers_use_a_traffic_beside_matches() {
        let step = RouteStrategy {
            traffic: Some("10%".into()),
            matches: Some(vec![json!({"headers": [{"type": "Exact", "name": "x", "value": "1"}]})]),
            ..Default::default()
        };
        assert_eq!(
            step.describe_split(&WeightSplit::Split),
            "matches [header x=1] and traffic 10% (canary 10 / stable 90 where a provider uses it)"
        );
        let matches_only = RouteStrategy { traffic: None, ..step };
        assert_eq!(matches_only.describe_split(&WeightSplit::Split), "matches [header x=1]");
    }

    #[test]
    fn matches_get_crd_defaults() {
        let mut warnings = Vec::new();
        let raw = json!([{"headers": [{"name": "user-agent", "value": "pc"}], "path": {}, "queryParams": []}]);
        let got = read_matches(&raw, &Path::root("m"), false, Semantics::Controller, &mut warnings).unwrap();
        let user_agent = json!([{"type": "Exact", "name": "user-agent", "value": "pc"}]);
        assert_eq!(
            got,
            vec![json!({"headers": user_agent, "path": {"type": "PathPrefix", "value": "/"}, "queryParams": []})]
        );
        // Go's encoding leaves the empty list out.
        assert_eq!(
            without_empty_lists(&got),
            vec![json!({"headers": user_agent, "path": {"type": "PathPrefix", "value": "/"}})]
        );
        let headers_only = read_matches(
            &json!([{"path": {"value": "/x"}, "queryParams": []}]),
            &Path::root("m"),
            true,
            Semantics::Controller,
            &mut warnings,
        )
        .unwrap();
        assert_eq!(headers_only, vec![json!({})]);
        // One per field, at that field: the CRD's unknown fields are the same, and said once.
        let fields: Vec<String> = warnings.iter().map(|w| w.field.to_string()).collect();
        assert_eq!(fields, ["m[0].path", "m[0].queryParams"]);
        assert!(warnings[0].text.starts_with("m[0].path: not supported in this API version"), "{warnings:?}");
    }

    #[test]
    fn matches_read_as_the_harness_reads_them_get_no_defaults() {
        let read = |raw: Value, headers_only: bool| {
            read_matches(&raw, &Path::root("m"), headers_only, Semantics::Harness, &mut vec![]).unwrap()
        };
        // What go test's Go types hold: no type, an empty path table, a path without value.
        assert_eq!(
            read(
                json!([
                    {"headers": [{"name": "a", "value": "b"}], "queryParams": [{"name": "q", "value": "1"}], "path": {}},
                    {"path": {"value": "/x"}},
                    {"path": {"type": "Exact"}, "headers": [{"type": "RegularExpression", "name": "c", "value": "d.*"}]}
                ]),
                false
            ),
            vec![
                json!({"path": {}, "headers": [{"name": "a", "value": "b"}], "queryParams": [{"name": "q", "value": "1"}]}),
                json!({"path": {"value": "/x"}}),
                json!({"path": {"type": "Exact"}, "headers": [{"type": "RegularExpression", "name": "c", "value": "d.*"}]}),
            ]
        );
        assert_eq!(
            read(json!([{"headers": [{"name": "a", "value": "b"}]}]), true),
            vec![json!({"headers": [{"name": "a", "value": "b"}]})]
        );
        // A type outside the CRD's enum is read as given (go test decodes it; the API server's
        // refusal is admission's); a name is still required.
        assert_eq!(read(json!([{"path": {"type": "Prefix"}}]), false), vec![json!({"path": {"type": "Prefix"}})]);
        let err = |raw: Value| {
            read_matches(&raw, &Path::root("m"), false, Semantics::Harness, &mut vec![]).unwrap_err().to_string()
        };
        assert_eq!(err(json!([{"headers": [{"value": "b"}]}])), "m[0].headers[0].name: is required");
    }

    #[test]
    fn matches_are_validated() {
        let err = read_matches(
            &json!([{"headers": [{"value": "b"}]}]),
            &Path::root("m"),
            false,
            Semantics::Controller,
            &mut vec![],
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "m[0].headers[0].name: is required");
        let err = |matches: Value| {
            read_matches(&matches, &Path::root("m"), false, Semantics::Controller, &mut vec![]).unwrap_err().to_string()
        };
        assert_eq!(err(json!([{"path": "/x"}])), "m[0].path: must be a map with type and value");
        assert_eq!(err(json!([{"headers": ["a: b"]}])), "m[0].headers[0]: must be a map with name and value");
        assert_eq!(
            err(json!([{"queryParams": [["a", "b"]]}])),
            "m[0].queryParams[0]: must be a map with name and value"
        );
    }

    #[test]
    fn header_modifiers_are_read_and_validated() {
        let read = |modifier: Value| read_header_modifier(&modifier, &Path::root("r"));
        assert_eq!(
            read(json!({"set": [{"name": "a", "value": "1"}], "add": [], "remove": ["b"]})).unwrap(),
            json!({"set": [{"name": "a", "value": "1"}], "remove": ["b"]})
        );
        assert_eq!(read(json!({"set": null, "remove": []})).unwrap(), json!({}));
        let err = |modifier: Value| read(modifier).unwrap_err().to_string();
        assert_eq!(err(json!(["set"])), "r: must be a map with set, add or remove");
        assert_eq!(err(json!({"set": {"a": "1"}})), "r.set: must be a list of {name, value}");
        assert_eq!(err(json!({"add": "a=1"})), "r.add: must be a list of {name, value}");
        assert_eq!(err(json!({"add": [{"name": "a"}]})), "r.add[0].value: is required");
        assert_eq!(err(json!({"remove": "b"})), "r.remove: must be a list of header names");
        assert_eq!(err(json!({"remove": [1]})), "r.remove[0]: must be a string, not 1");
    }
}
