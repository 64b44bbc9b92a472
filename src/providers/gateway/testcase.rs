//! HTTPRoute test cases (`gateway.networking.k8s.io/HTTPRoute/testdata/*.yaml`): `rollout` (or
//! `trafficRouting`), `original` (the HTTPRoute before the release) and `expected`: the
//! HTTPRoute once the controller has converged on each stage. They run through the same
//! planning as `plan` (rules carried from stage to stage), and compare spec, labels and
//! annotations.

use super::{GatewayRoute, plan_stage, plan_stages, route_warnings};
use crate::data::Data;
use crate::error::Error;
use crate::model::RoutingAction;
use crate::model::{OwnerKind, http_route};
use crate::providers::case::{CaseRouting, case_routing};
use crate::snapshot::Origin;
use crate::testcase::{CASE_KEYS, case_document, expected, original};
use crate::testcase::{CaseReport, GoTest, carried_steps};
use serde_json::Value;

#[derive(Clone, Debug)]
pub struct HttpRouteTestCase {
    pub name: String,
    namespace: String,
    http_route: String,
    stable_service: String,
    canary_service: String,
    owner: OwnerKind,
    original: Value,
    actions: Vec<RoutingAction>,
    expected: Vec<Value>,
    /// Its unknown keys and fields, with their lines.
    warnings: Vec<String>,
}

impl HttpRouteTestCase {
    pub fn parse(name: &str, text: &str) -> Result<HttpRouteTestCase, String> {
        let (document, more) = case_document(name, text)?;
        let read = case_routing(name, &document, &CASE_KEYS)?;
        let case = &document.value;
        let origin = Origin::of(name, &document);
        // Both as the API server stores them, as `plan -f` reads a route.
        let mut original =
            original(&origin, case, "(the HTTPRoute before the release)").map_err(|e| read.explained(e))?.clone();
        http_route::as_stored(&mut original);
        let mut expected = expected(&origin, case, "HTTPRoutes")?;
        expected.iter_mut().for_each(http_route::as_stored);
        let warnings: Vec<String> = more.into_iter().chain(read.warnings()).collect();
        let CaseRouting { routing, owner, actions, canary_service, .. } = read;
        let http_route =
            routing.gateway.ok_or_else(|| format!("{name}: its traffic routing has no gateway.httpRouteName"))?;
        if original["metadata"]["name"] != http_route.as_str() {
            return Err(format!(
                "{name}: original is HTTPRoute {}, but the traffic routing names {http_route}",
                original["metadata"]["name"].as_str().unwrap_or("(no name)")
            ));
        }
        Ok(HttpRouteTestCase {
            name: name.into(),
            namespace: original["metadata"]["namespace"].as_str().unwrap_or("default").into(),
            http_route,
            stable_service: routing.service,
            canary_service,
            owner: owner.kind,
            expected,
            original,
            actions,
            warnings,
        })
    }

    /// Plans every stage in order, from the route the previous one left, and compares each
    /// with `expected`. The warnings about the route as a whole go with the first step, a
    /// stage's own with its step. A failing stage ends the case: later stages would start from
    /// a state the controller never reaches.
    pub fn run(&self) -> CaseReport {
        let gateway = self.gateway();
        let mut route = Some(self.original.clone());
        let route_notes = route_warnings(&gateway, &self.original);
        let steps = carried_steps(&self.actions, &self.expected, route_notes, Data::of_object, |action| {
            let plan = plan_stage(&gateway, route.as_ref(), action)?;
            route = plan.route;
            Ok((route.as_ref().map_or_else(Data::default, Data::of_object), plan.warnings))
        });
        // The controller tests its Gateway API routing in Go (gateway_test.go), not from YAML cases.
        let go_test = GoTest::CannotRun(
            "HTTPRoute test cases are this tool's format; the controller has no YAML harness for its Gateway API routing".into(),
        );
        CaseReport { case: self.name.clone(), error: None, warnings: self.warnings.clone(), steps, go_test }
    }

    /// The route after each stage, each from the route the stage before left: what `record`
    /// writes as `expected`, and what `run` compares with it.
    pub fn routes(&self) -> Result<Vec<Value>, Error> {
        let plans = plan_stages(&self.gateway(), Some(&self.original), &self.actions)?;
        Ok(plans.into_iter().map(|plan| plan.route.unwrap_or_default()).collect())
    }

    fn gateway(&self) -> GatewayRoute<'_> {
        GatewayRoute {
            namespace: &self.namespace,
            http_route: &self.http_route,
            stable_service: &self.stable_service,
            canary_service: &self.canary_service,
            owner: self.owner,
            // Only `restore` and `status` ask; a case plans its steps.
            releasing: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testcase::{Outcome, StepReport};

    const CASE: &str = r#"
rollout:
  apiVersion: rollouts.kruise.io/v1beta1
  kind: Rollout
  metadata: {name: store, namespace: shop}
  spec:
    strategy:
      canary:
        steps:
        - matches: [{headers: [{name: user, value: beta}]}]
        - traffic: "20%"
        - replicas: 1
        trafficRoutings:
        - service: store
          gateway: {httpRouteName: store}
original:
  apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: store, namespace: shop}
  spec:
    rules:
    - matches: [{path: {type: PathPrefix, value: /}}]
      backendRefs: [{kind: Service, name: store, port: 80}]
expected:
- spec:
    rules:
    - matches: [{path: {type: PathPrefix, value: /}}]
      backendRefs: [{kind: Service, name: store, port: 80}]
    - matches: [{path: {type: PathPrefix, value: /}, headers: [{type: Exact, name: user, value: beta}]}]
      backendRefs: [{kind: Service, name: store-canary, port: 80}]
- spec:
    rules:
    - matches: [{path: {type: PathPrefix, value: /}}]
      backendRefs: [{kind: Service, name: store, port: 80, weight: 80}, {kind: Service, name: store-canary, port: 80, weight: 20}]
    - matches: [{path: {type: PathPrefix, value: /}, headers: [{type: Exact, name: user, value: beta}]}]
      backendRefs: [{kind: Service, name: store-canary, port: 80}]
- spec:
    rules:
    - matches: [{path: {type: PathPrefix, value: /}}]
      backendRefs: [{kind: Service, name: store, port: 80, weight: 1}]
"#;

    #[test]
    fn runs_every_stage_from_the_one_before() {
        let case = HttpRouteTestCase::parse("case.yaml", CASE).unwrap();
        let report = case.run();
        assert!(report.passed(), "{report:?}");
        assert_eq!(report.steps.len(), 3);
        let routes = case.routes().unwrap();
        assert_eq!(routes.len(), 3);
        for (route, expected) in routes.iter().zip(&case.expected) {
            assert_eq!(route["spec"], expected["spec"]);
        }
        assert!(report.steps[1].notes[0].contains("a weight step keeps it"), "{:?}", report.steps[1].notes);
        let wrong = CASE.replace("weight: 80", "weight: 70");
        let report = HttpRouteTestCase::parse("case.yaml", &wrong).unwrap().run();
        assert_eq!(report.steps.iter().map(|s| s.outcome == Outcome::Pass).collect::<Vec<_>>(), [true, false, true]);
    }

    #[test]
    fn route_warnings_go_with_the_first_step() {
        let redirect = CASE.replacen(
            "    rules:\n",
            "    rules:\n    - filters: [{type: RequestRedirect, requestRedirect: {scheme: https}}]\n",
            1,
        );
        let report = HttpRouteTestCase::parse("case.yaml", &redirect).unwrap().run();
        assert!(
            report.steps[0].notes[0].starts_with("spec.rules[0] has no backendRefs"),
            "{:?}",
            report.steps[0].notes
        );
        assert!(report.steps[2].notes.iter().all(|n| !n.contains("no backendRefs")), "{:?}", report.steps[2].notes);
    }

    #[test]
    fn a_failing_stage_ends_the_case_and_a_short_expected_is_reported() {
        let malformed = CASE.replace("port: 80}]\nexpected", "port: eighty}]\nexpected");
        let report = HttpRouteTestCase::parse("case.yaml", &malformed).unwrap().run();
        assert!(
            matches!(&report.steps[..], [StepReport { outcome: Outcome::Error(e), .. }] if e.contains("spec.rules[0].backendRefs[0].port: must be an integer")),
            "{report:?}"
        );
        let short = &CASE[..CASE.rfind("- spec:").unwrap()];
        let report = HttpRouteTestCase::parse("case.yaml", short).unwrap().run();
        assert!(
            matches!(&report.steps[2].outcome, Outcome::Error(e) if e == "expected has 2 entries but the case has 3 steps")
        );
    }

    #[test]
    fn cases_need_a_gateway_ref_naming_the_original() {
        let without = CASE.replace("          gateway: {httpRouteName: store}\n", "          ingress: {name: web}\n");
        assert_eq!(
            HttpRouteTestCase::parse("c.yaml", &without).unwrap_err(),
            "c.yaml: its traffic routing has no gateway.httpRouteName"
        );
        let other = CASE.replace("httpRouteName: store", "httpRouteName: cart");
        assert_eq!(
            HttpRouteTestCase::parse("c.yaml", &other).unwrap_err(),
            "c.yaml: original is HTTPRoute store, but the traffic routing names cart"
        );
        let without_original = &CASE[..CASE.find("original:").unwrap()];
        assert_eq!(
            HttpRouteTestCase::parse("c.yaml", without_original).unwrap_err(),
            "c.yaml:2: no original (the HTTPRoute before the release)"
        );
    }

    #[test]
    fn a_traffic_routing_runs_its_one_strategy_on_the_stable_service() {
        let case = r#"
trafficRouting:
  apiVersion: rollouts.kruise.io/v1alpha1
  kind: TrafficRouting
  metadata: {name: tr}
  spec:
    objectRef: [{service: store, gateway: {httpRouteName: store}}]
    strategy: {weight: 30}
original:
  metadata: {name: store}
  spec:
    rules: [{backendRefs: [{kind: Service, name: store, weight: 1}]}]
expected:
- spec:
    rules: [{backendRefs: [{kind: Service, name: store, weight: 30}]}]
"#;
        let report = HttpRouteTestCase::parse("tr.yaml", case).unwrap().run();
        assert!(report.passed(), "{report:?}");
        assert!(report.steps[0].notes[0].starts_with("canary and stable Service are both store"), "{report:?}");
    }
}
