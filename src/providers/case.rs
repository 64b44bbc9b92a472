//! What the test cases of the Ingress and Gateway API providers share: the `rollout` (every
//! stage) or `trafficRouting` (its one strategy) a case runs, read as the controller reads it.
//! (The case file's one document and its `expected` are read as every test case's are: `testcase`.)

use crate::model::{Owner, OwnerKind, Rollout, RoutingAction, TrafficRoutingCr, TrafficRoutingRef};
use serde_json::Value;

pub struct CaseRouting {
    pub routing: TrafficRoutingRef,
    pub owner: Owner,
    /// What the controller does at each stage (a case knows no workload, so every stage is
    /// routed as its strategy says).
    pub actions: Vec<RoutingAction>,
    /// `<stable>-canary`, or the stable Service for a TrafficRouting or with
    /// `disableGenerateCanaryService`.
    pub canary_service: String,
}

/// Reads the case's `rollout`, else its `trafficRouting`.
pub fn case_routing(name: &str, case: &Value) -> Result<CaseRouting, String> {
    let field = |object: &Value, name: &str| object["metadata"][name].as_str().unwrap_or_default().to_string();
    let namespace = |object: &Value| object["metadata"]["namespace"].as_str().unwrap_or("default").to_string();
    if let Some(object) = case.get("rollout").filter(|r| !r.is_null()) {
        let rollout = Rollout::from_object(object).map_err(|e| format!("{name}: rollout: {e}"))?;
        let routing =
            rollout.traffic_routing.clone().ok_or_else(|| format!("{name}: rollout has no trafficRoutings"))?;
        let canary_service = match rollout.disable_generate_canary_service {
            true => routing.service.clone(),
            false => format!("{}-canary", routing.service),
        };
        let actions = rollout.stages().into_iter().map(|stage| rollout.routing_at(stage, None).action).collect();
        let owner = Owner {
            kind: OwnerKind::Rollout,
            namespace: namespace(object),
            name: rollout.name,
            uid: field(object, "uid"),
        };
        Ok(CaseRouting { routing, owner, actions, canary_service })
    } else if let Some(object) = case.get("trafficRouting").filter(|t| !t.is_null()) {
        let cr = TrafficRoutingCr::from_object(object).map_err(|e| format!("{name}: trafficRouting: {e}"))?;
        let actions = vec![cr.routing().action];
        let owner = Owner {
            kind: OwnerKind::TrafficRouting,
            namespace: namespace(object),
            name: cr.name,
            uid: field(object, "uid"),
        };
        // A TrafficRouting routes to the stable Service itself.
        let canary_service = cr.traffic_routing.service.clone();
        Ok(CaseRouting { routing: cr.traffic_routing, owner, actions, canary_service })
    } else {
        Err(format!("{name}: neither rollout nor trafficRouting"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_case_is_one_document_with_a_rollout_or_a_traffic_routing() {
        let neither = Some("c.yaml: neither rollout nor trafficRouting".to_string());
        assert_eq!(case_routing("c.yaml", &json!({"original": {}})).err(), neither);
        assert_eq!(case_routing("c.yaml", &json!({"rollout": null, "trafficRouting": null})).err(), neither);
        let traffic_routing = json!({"apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
            "metadata": {"name": "tr"}, "spec": {"strategy": {"weight": 5}, "objectRef": [{"service": "svc"}]}});
        let routing = case_routing("c.yaml", &json!({"trafficRouting": traffic_routing})).ok().unwrap();
        assert_eq!(routing.canary_service, "svc");
    }
}
