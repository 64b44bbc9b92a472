//! The `obj` global a script receives (the controller's `LuaData`, converted with
//! `ToUnstructured`: camelCase keys, nil fields absent).

use super::{RouteStrategy, strategy};
use crate::data::Data;
use serde_json::{Map, Value};

/// The `obj` for one gateway object at one stage (`original` moves into it: a spec can be
/// megabytes as a `Value`).
pub fn lua_data(original: Data, strategy: &RouteStrategy, stable_service: &str, canary_service: &str) -> Value {
    let (canary_weight, stable_weight) = strategy.weights();
    let mut data = Map::new();
    if let Some(spec) = original.spec {
        data.insert("spec".into(), spec);
    }
    for (name, map) in [("labels", original.labels), ("annotations", original.annotations)] {
        if !map.is_empty() {
            data.insert(name.into(), Value::Object(map.into_iter().map(|(k, v)| (k, Value::String(v))).collect()));
        }
    }
    let mut obj = Map::new();
    obj.insert("data".into(), Value::Object(data));
    obj.insert("canaryWeight".into(), canary_weight.into());
    obj.insert("stableWeight".into(), stable_weight.into());
    if let Some(matches) = &strategy.matches {
        obj.insert("matches".into(), Value::Array(strategy::without_empty_lists(matches)));
    }
    obj.insert("canaryService".into(), canary_service.into());
    obj.insert("stableService".into(), stable_service.into());
    if let Some(modifier) = &strategy.request_header_modifier {
        obj.insert("requestHeaderModifier".into(), modifier.clone());
    }
    Value::Object(obj)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builds_the_controllers_lua_data() {
        let original = Data { spec: Some(json!({"hosts": ["*"]})), ..Data::default() };
        let strategy = RouteStrategy { traffic: Some("20%".into()), ..Default::default() };
        assert_eq!(
            lua_data(original, &strategy, "svc-demo", "svc-demo-canary"),
            json!({"data": {"spec": {"hosts": ["*"]}}, "canaryWeight": 20, "stableWeight": 80, "canaryService": "svc-demo-canary", "stableService": "svc-demo"})
        );
        let matches_only = RouteStrategy { matches: Some(vec![json!({"queryParams": []})]), ..Default::default() };
        let obj = lua_data(Data::default(), &matches_only, "s", "s");
        assert_eq!((obj["canaryWeight"].clone(), obj["stableWeight"].clone()), (json!(-1), json!(101)));
        assert_eq!(obj["matches"], json!([{}]), "a match's empty list is left out, as Go's encoding leaves it out");
    }
}
