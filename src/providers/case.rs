//! What the test cases of the Ingress and Gateway API providers share: the `rollout` (every
//! stage) or `trafficRouting` (its one strategy) a case runs, read as the controller reads it.
//! (The case file's one document and its `expected` are read as every test case's are: `testcase`.)

use crate::model::{Owner, OwnerKind, Rollout, RoutingAction, TrafficRoutingCr, TrafficRoutingRef};
use crate::snapshot::Origin;
use crate::testcase::{refused_rules, subject_origin, unknown_case_keys, with_unknown_keys};
use crate::yaml::Document;
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
    /// The case's keys not among those its kind has, and its subject's fields the CRD does not
    /// define, each with its line: warnings, and what the case's errors add (`explained`).
    pub unknown_keys: Vec<String>,
    pub unknown_fields: Vec<String>,
    /// The API server's rules its Rollout breaks, each with its line: warnings.
    pub refused: Vec<String>,
}

impl CaseRouting {
    /// `error`, with the case's unknown keys, which may explain it.
    pub fn explained(&self, error: String) -> String {
        with_unknown_keys(error, &self.unknown_keys)
    }

    /// What the case's report warns of.
    pub fn warnings(&self) -> Vec<String> {
        self.unknown_keys.iter().chain(&self.unknown_fields).chain(&self.refused).cloned().collect()
    }
}

/// Reads the case's `rollout`, else its `trafficRouting`; `known_keys` are those a case of its
/// kind has.
pub fn case_routing(name: &str, document: &Document, known_keys: &[&str]) -> Result<CaseRouting, String> {
    let origin = Origin::of(name, document);
    let unknown_keys = unknown_case_keys(&origin, document, known_keys);
    let case = &document.value;
    let field = |object: &Value, name: &str| object["metadata"][name].as_str().unwrap_or_default().to_string();
    let namespace = |object: &Value| object["metadata"]["namespace"].as_str().unwrap_or("default").to_string();
    let fields_of = |origin: &Origin, object| origin.unknown_fields(object).into_iter().map(|w| w.text).collect();
    if let Some(object) = case.get("rollout").filter(|r| !r.is_null()) {
        let origin = subject_origin(&origin, document, "rollout");
        let rollout = Rollout::from_object(object)
            .map_err(|e| with_unknown_keys(origin.invalid("rollout", &e, object), &unknown_keys))?;
        let routing =
            rollout.traffic_routing.clone().ok_or_else(|| format!("{name}: rollout has no trafficRoutings"))?;
        let refused = refused_rules(&origin, &rollout);
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
        let unknown_fields = fields_of(&origin, object);
        Ok(CaseRouting { routing, owner, actions, canary_service, unknown_keys, unknown_fields, refused })
    } else if let Some(object) = case.get("trafficRouting").filter(|t| !t.is_null()) {
        let origin = subject_origin(&origin, document, "trafficRouting");
        let cr = TrafficRoutingCr::from_object(object)
            .map_err(|e| with_unknown_keys(origin.invalid("trafficRouting", &e, object), &unknown_keys))?;
        let actions = vec![cr.routing().action];
        let owner = Owner {
            kind: OwnerKind::TrafficRouting,
            namespace: namespace(object),
            name: cr.name,
            uid: field(object, "uid"),
        };
        // A TrafficRouting routes to the stable Service itself.
        let canary_service = cr.traffic_routing.service.clone();
        let unknown_fields = fields_of(&origin, object);
        Ok(CaseRouting {
            routing: cr.traffic_routing,
            owner,
            actions,
            canary_service,
            unknown_keys,
            unknown_fields,
            refused: Vec::new(),
        })
    } else {
        Err(with_unknown_keys(format!("{name}: neither rollout nor trafficRouting"), &unknown_keys))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testcase::{CASE_KEYS, case_document};

    fn read(text: &str, known: &[&str]) -> Result<CaseRouting, String> {
        case_routing("c.yaml", &case_document("c.yaml", text).unwrap().0, known)
    }

    #[test]
    fn a_case_is_one_document_with_a_rollout_or_a_traffic_routing() {
        let neither = Some("c.yaml: neither rollout nor trafficRouting".to_string());
        assert_eq!(read("original: {}", &CASE_KEYS).err(), neither);
        assert_eq!(read("rollout: null\ntrafficRouting: null", &CASE_KEYS).err(), neither);
        let traffic_routing = "trafficRouting:\n  apiVersion: rollouts.kruise.io/v1alpha1\n  kind: TrafficRouting\n  metadata: {name: tr}\n  spec: {strategy: {weight: 5}, objectRef: [{service: svc}]}\n";
        let routing = read(traffic_routing, &CASE_KEYS).unwrap();
        assert_eq!(routing.canary_service, "svc");
        assert!(routing.warnings().is_empty());
    }

    #[test]
    fn unknown_keys_and_fields_are_said_with_their_lines_and_explain_an_error() {
        let rollout = "rollout:\n  apiVersion: rollouts.kruise.io/v1beta1\n  kind: Rollout\n  metadata: {name: r}\n  spec:\n    strategy:\n      canary:\n        steps: [{replicas: 1, trafic: 20%}]\n        trafficRoutings: [{service: s, ingress: {name: i}}]\n";
        let routing = read(
            &format!("{rollout}expeced: []\ncanary: null\n"),
            &["rollout", "trafficRouting", "original", "canary", "expected"],
        )
        .unwrap();
        assert_eq!(
            routing.warnings(),
            [
                "c.yaml:10: unknown key \"expeced\": a case has rollout or trafficRouting, original, canary and expected (did you mean expected?)",
                "c.yaml:8: unknown field \"spec.strategy.canary.steps[0].trafic\": not in the CRD, so the API server drops it (misspelt?)",
            ]
        );
        // An Ingress case's `canary` is no key of another kind's case.
        let routing = read(&format!("{rollout}canary: null\n"), &CASE_KEYS).unwrap();
        assert_eq!(routing.unknown_keys.len(), 1, "{:?}", routing.unknown_keys);
        let err = read("rolout: {}\noriginal: {}\n", &CASE_KEYS).err().unwrap();
        assert_eq!(
            err,
            "c.yaml: neither rollout nor trafficRouting (c.yaml:1: unknown key \"rolout\": a case has rollout or trafficRouting, original and expected (did you mean rollout?))"
        );
        let err = read("rollout:\n  apiVersion: rollouts.kruise.io/v1beta1\n  kind: Rollout\n  spec:\n    strategy:\n      canary:\n        stepz: []\n", &CASE_KEYS).err().unwrap();
        assert!(err.starts_with("c.yaml:"), "{err}");
    }

    #[test]
    fn a_rollout_the_api_server_refuses_is_a_warning_per_rule_its_steps_break() {
        let rollout = "rollout:\n  apiVersion: rollouts.kruise.io/v1beta1\n  kind: Rollout\n  metadata: {name: r}\n  spec:\n    strategy:\n      canary:\n        steps: [{traffic: 20%}, {replicas: 1, traffic: 150%}]\n        trafficRoutings: [{service: s, ingress: {name: i}}]\n";
        assert_eq!(
            read(rollout, &CASE_KEYS).unwrap().warnings(),
            [
                "c.yaml:8: spec.strategy.canary.steps[1].traffic: \"150%\" must be in (0%, 100%]: the API server refuses such a Rollout (the controller's webhook), so the controller never runs it; the case runs all the same"
            ],
            "step 1's missing replicas are no routing's"
        );
    }
}
