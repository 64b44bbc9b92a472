//! Gateway API routing offline: `test` on HTTPRoute cases (`gateway.networking.k8s.io/HTTPRoute/testdata/`).

use crate::support::{Test, repo};

const CASE: &str = "examples/gateway-canary/gateway.networking.k8s.io/HTTPRoute/testdata/header_then_20_then_50.yaml";

#[test]
fn the_example_release_passes_as_a_test_case_with_the_controllers_surprises() {
    Test::new()
        .arg("test")
        .arg(repo("examples/gateway-canary"))
        .run()
        .success()
        .stdout_has("ok   gateway.networking.k8s.io/HTTPRoute header_then_20_then_50.yaml (4 steps)\n")
        .stdout_has("warning: step 1: spec.rules[2] has no backendRefs (a redirect, for example): the controller deletes it when it restores the route")
        .stdout_has("warning: step 2: spec.rules[3] sends the requests it matches only to store-canary (a match rule of an earlier step)")
        .stdout_has("1 passed, 0 failed\n");
}

#[test]
fn a_case_whose_expected_differs_fails_with_a_diff() {
    let case = std::fs::read_to_string(repo(CASE)).unwrap().replace("weight: 80", "weight: 70");
    let test = Test::new().file("cases/gateway.networking.k8s.io/HTTPRoute/testdata/case.yaml", &case);
    test.run_args(["test", "cases"])
        .status(1)
        .stdout_has("FAIL gateway.networking.k8s.io/HTTPRoute case.yaml (4 steps)")
        .stdout_has("step 2: the result differs from expected (its entry 2)")
        .stdout_has("-      weight: 70\n+      weight: 80\n")
        .stdout_has("0 passed, 1 failed\n");
    let json = test.run_args(["test", "cases/gateway.networking.k8s.io/HTTPRoute", "-o", "json"]).status(1).json();
    assert_eq!(json["cases"][0]["script"], serde_json::Value::Null, "no script runs an HTTPRoute");
    let statuses: Vec<&str> =
        json["cases"][0]["steps"].as_array().unwrap().iter().map(|s| s["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["pass", "fail", "pass", "pass"]);
}

#[test]
fn an_httproute_folder_with_a_script_holds_that_scripts_cases() {
    // An HTTPRoute can be a customNetworkRefs object driven by a script of its own: then its
    // testdata are the script's cases, run with the harness, not the Gateway API provider's.
    let case = r#"
rollout:
  apiVersion: rollouts.kruise.io/v1beta1
  kind: Rollout
  metadata: {name: demo}
  spec:
    strategy:
      canary:
        steps: [{traffic: "10%"}]
        trafficRoutings:
        - service: web
          customNetworkRefs: [{apiVersion: gateway.networking.k8s.io/v1, kind: HTTPRoute, name: web}]
original:
  apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata: {name: web}
  spec: {}
expected:
- spec: {weight: 10}
"#;
    Test::new()
        .file(
            "lua/gateway.networking.k8s.io/HTTPRoute/trafficRouting.lua",
            "return {spec = {weight = obj.canaryWeight}}",
        )
        .file("lua/gateway.networking.k8s.io/HTTPRoute/testdata/weight.yaml", case)
        .args(["test", "lua"])
        .run()
        .success()
        .stdout_is("ok   gateway.networking.k8s.io/HTTPRoute weight.yaml (1 step)\n1 passed, 0 failed\n");
}

#[test]
fn a_malformed_route_is_an_error_naming_the_field() {
    let case = std::fs::read_to_string(repo(CASE)).unwrap().replacen("port: 80", "port: eighty", 1);
    Test::new()
        .file("cases/gateway.networking.k8s.io/HTTPRoute/testdata/case.yaml", &case)
        .args(["test", "cases"])
        .run()
        .status(1)
        .stdout_has("step 1: HTTPRoute demo/store: spec.rules[0].backendRefs[0].port: must be an integer that fits Go's int32, not \"eighty\"");
}
