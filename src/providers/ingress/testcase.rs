//! Ingress script test cases (`trafficrouting_ingress/testdata/<classType>/*.yaml`): `rollout`
//! (or `trafficRouting`), `original` (the stable Ingress), optional `canary` (a canary Ingress
//! that already exists), and `expected`: the canary Ingress once the controller has converged on
//! each stage, `null` where there is none. They run through the controller's whole Ingress
//! logic (creation at weight 0, annotations carried from step to step, deletion), and compare
//! spec, labels and annotations.

use super::{IngressRoute, plan_stage, plan_stages};
use crate::data::Data;
use crate::error::Error;
use crate::lua::{Limits, Printed, Script};
use crate::model::{Owner, RoutingAction};
use crate::providers::case::{CaseRouting, case_routing};
use crate::snapshot::Origin;
use crate::testcase::{CaseReport, GoTest, carried_steps};
use crate::testcase::{case_document, expected, original};
use serde_json::Value;
use std::sync::Arc;

/// The keys of an Ingress case: a custom ref's, and the canary Ingress that already exists.
const KEYS: [&str; 5] = ["rollout", "trafficRouting", "original", "canary", "expected"];

#[derive(Clone, Debug)]
pub struct IngressTestCase {
    pub name: String,
    ingress: String,
    /// The class its routing names (`classType`): the folder's class runs it all the same.
    class_type: String,
    stable_service: String,
    canary_service: String,
    owner: Owner,
    stable: Value,
    canary: Option<Arc<Value>>,
    actions: Vec<RoutingAction>,
    expected: Vec<Value>,
    /// Its unknown keys and fields, with their lines.
    warnings: Vec<String>,
}

impl IngressTestCase {
    pub fn parse(name: &str, text: &str) -> Result<IngressTestCase, String> {
        let (document, more) = case_document(name, text)?;
        let read = case_routing(name, &document, &KEYS)?;
        let case = &document.value;
        let origin = Origin::of(name, &document);
        let stable = original(&origin, case, "(the stable Ingress)").map_err(|e| read.explained(e))?.clone();
        let canary = case.get("canary").filter(|c| !c.is_null()).cloned();
        let warnings: Vec<String> = more.into_iter().chain(read.warnings()).collect();
        let CaseRouting { routing, mut owner, actions, canary_service, .. } = read;
        // The canary Ingress goes next to the stable one.
        owner.namespace = stable["metadata"]["namespace"].as_str().unwrap_or("default").into();
        let ingress = routing.ingress.ok_or_else(|| format!("{name}: its traffic routing has no ingress"))?;
        let expected = expected(&origin, case, "canary Ingresses")?;
        Ok(IngressTestCase {
            name: name.into(),
            ingress: ingress.name,
            class_type: ingress.class_type,
            stable_service: routing.service,
            canary_service,
            owner,
            stable,
            canary: canary.map(Arc::new),
            actions,
            expected,
            warnings,
        })
    }

    fn route<'a>(
        &'a self,
        class_type: &'a str,
        script: &'a Script,
        builtin: bool,
        limits: &Limits,
        printed: &'a Printed,
    ) -> IngressRoute<'a> {
        IngressRoute {
            ingress: &self.ingress,
            class_type,
            stable_service: &self.stable_service,
            canary_service: &self.canary_service,
            owner: &self.owner,
            script,
            builtin,
            limits: *limits,
            printed,
        }
    }

    /// How many stages it has: a Rollout's steps, or a TrafficRouting's one strategy.
    pub fn stages(&self) -> usize {
        self.actions.len()
    }

    /// The canary Ingress after each stage (`None`: there is none), each planned from the one
    /// before: what `expected` holds when the script is right (`record` writes it). A failure
    /// is led by the owner and the stage, which `stage` names from its index, as `plan` leads it.
    pub fn canaries(
        &self,
        class_type: &str,
        script: &Script,
        builtin: bool,
        limits: &Limits,
        printed: &Printed,
        stage: impl Fn(usize) -> String,
    ) -> Result<Vec<Option<Arc<Value>>>, Error> {
        let route = self.route(class_type, script, builtin, limits, printed);
        let plans = plan_stages(&route, Some(&self.stable), self.canary.as_ref(), &self.actions)
            .map_err(|(i, e)| e.prefixed(&format!("{}, {}", self.owner, stage(i))))?;
        Ok(plans.into_iter().map(|plan| plan.canary).collect())
    }

    /// Plans every stage in order, from the canary Ingress the previous one left, and compares
    /// each with `expected`; the stage's warnings become the step's notes. A failing stage
    /// ends the case: later stages would start from a state the controller never reaches.
    pub fn run(
        &self,
        class_type: &str,
        script: &Script,
        builtin: bool,
        limits: &Limits,
        printed: &Printed,
    ) -> CaseReport {
        let route = self.route(class_type, script, builtin, limits, printed);
        let mut canary = self.canary.clone();
        let steps = carried_steps(&self.actions, &self.expected, Vec::new(), contents, |action| {
            let plan = plan_stage(&route, Some(&self.stable), canary.as_ref(), action)?;
            canary = plan.canary;
            Ok((canary.as_deref().map_or_else(Data::default, Data::of_object), plan.warnings))
        });
        // The controller tests its Ingress scripts in Go (ingress_test.go), not from YAML cases.
        let go_test = GoTest::CannotRun(
            "Ingress test cases are this tool's format; the controller has no YAML harness for Ingress scripts".into(),
        );
        // The folder's class, not the case's, names the script (as `record --dir` lays them out).
        let other_class = (self.class_type != class_type).then(|| format!(
            "its routing names classType {}, but the case is among those of class {class_type}, whose script ran it (plan -f would run the {} script)",
            self.class_type, self.class_type
        ));
        let warnings = self.warnings.iter().cloned().chain(other_class).collect();
        CaseReport { case: self.name.clone(), error: None, warnings, steps, go_test }
    }
}

/// What a case compares of a canary Ingress: spec, labels and annotations; nothing for `null`.
fn contents(canary: &Value) -> Data {
    if canary.is_null() { Data::default() } else { Data::of_object(canary) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scripts::builtin_ingress;
    use crate::testcase::{Outcome, StepReport};

    const CASE: &str = r#"
rollout:
  apiVersion: rollouts.kruise.io/v1beta1
  kind: Rollout
  metadata: {name: demo, uid: u-1}
  spec:
    strategy:
      canary:
        steps:
        - matches: [{headers: [{name: user-agent, value: pc}]}]
        - traffic: "30%"
        - replicas: 1
        trafficRoutings:
        - service: web
          ingress: {name: web}
original:
  metadata: {name: web, annotations: {kubernetes.io/ingress.class: nginx}}
  spec:
    rules:
    - http:
        paths:
        - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
expected:
- metadata:
    annotations:
      kubernetes.io/ingress.class: nginx
      nginx.ingress.kubernetes.io/canary: "true"
      nginx.ingress.kubernetes.io/canary-by-header: user-agent
      nginx.ingress.kubernetes.io/canary-by-header-value: pc
  spec:
    rules:
    - http:
        paths:
        - {path: /, pathType: Prefix, backend: {service: {name: web-canary, port: {number: 80}}}}
- metadata:
    annotations:
      kubernetes.io/ingress.class: nginx
      nginx.ingress.kubernetes.io/canary: "true"
      nginx.ingress.kubernetes.io/canary-weight: "30"
  spec:
    rules:
    - http:
        paths:
        - {path: /, pathType: Prefix, backend: {service: {name: web-canary, port: {number: 80}}}}
- null
"#;

    fn nginx() -> Script {
        let builtin = builtin_ingress("nginx").unwrap();
        Script::new(builtin.path(), builtin.code)
    }

    #[test]
    fn runs_every_stage_from_the_one_before() {
        let case = IngressTestCase::parse("case.yaml", CASE).unwrap();
        let report = case.run("nginx", &nginx(), true, &Limits::default(), &Printed::default());
        assert!(report.passed(), "{report:?}");
        assert_eq!(report.steps.len(), 3);
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        // Among another class's cases, that class's script runs it, and it is said.
        let report = case.run("mine", &nginx(), false, &Limits::default(), &Printed::default());
        assert_eq!(
            report.warnings,
            [
                "its routing names classType nginx, but the case is among those of class mine, whose script ran it (plan -f would run the nginx script)"
            ]
        );
        let wrong = CASE.replace("canary-weight: \"30\"", "canary-weight: \"40\"");
        let report = IngressTestCase::parse("case.yaml", &wrong).unwrap().run(
            "nginx",
            &nginx(),
            true,
            &Limits::default(),
            &Printed::default(),
        );
        assert_eq!(report.steps.iter().map(|s| s.outcome == Outcome::Pass).collect::<Vec<_>>(), [true, false, true]);
    }

    #[test]
    fn a_failing_stage_ends_the_case_and_a_short_expected_is_reported() {
        let broken = Script::new("broken.lua", "return obj.nothing.here");
        let report = IngressTestCase::parse("case.yaml", CASE).unwrap().run(
            "nginx",
            &broken,
            false,
            &Limits::default(),
            &Printed::default(),
        );
        assert!(
            matches!(&report.steps[..], [StepReport { outcome: Outcome::Error(e), .. }] if e.contains("broken.lua:1"))
        );
        let short = CASE.split("- null").next().unwrap();
        let report = IngressTestCase::parse("case.yaml", short).unwrap().run(
            "nginx",
            &nginx(),
            true,
            &Limits::default(),
            &Printed::default(),
        );
        assert!(
            matches!(&report.steps[2].outcome, Outcome::Error(e) if e == "expected has 2 entries but the case has 3 steps")
        );
    }

    #[test]
    fn cases_need_an_ingress_ref_and_a_stable_ingress() {
        let without_ingress = CASE.replace("          ingress: {name: web}\n", "");
        assert_eq!(
            IngressTestCase::parse("c.yaml", &without_ingress).unwrap_err(),
            "c.yaml: its traffic routing has no ingress"
        );
        let without_original = CASE.split("original:").next().unwrap();
        assert_eq!(
            IngressTestCase::parse("c.yaml", without_original).unwrap_err(),
            "c.yaml:2: no original (the stable Ingress)"
        );
    }
}
