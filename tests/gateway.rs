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
        .stdout_has("warning: step 0: spec.rules[2] has no backendRefs (a redirect, for example): the controller deletes it when it restores the route")
        .stdout_has("warning: step 1: spec.rules[3] sends the requests it matches only to store-canary (a match rule of an earlier step)")
        .stdout_has("1 passed, 0 failed\n");
}

#[test]
fn a_case_whose_expected_differs_fails_with_a_diff() {
    let case = std::fs::read_to_string(repo(CASE)).unwrap().replace("weight: 80", "weight: 70");
    let test = Test::new().file("cases/gateway.networking.k8s.io/HTTPRoute/testdata/case.yaml", &case);
    test.run_args(["test", "cases"])
        .status(1)
        .stdout_has("FAIL gateway.networking.k8s.io/HTTPRoute case.yaml (4 steps)")
        .stdout_has("step 1: the result differs from expected[1]")
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
        .stdout_has("step 0: HTTPRoute demo/store: spec.rules[0].backendRefs[0].port: must be an integer that fits Go's int32, not \"eighty\"");
}

/// On the fake API server, with `support::cluster::store`: approve, status and restore.
mod cluster {
    use crate::support::Test;
    use crate::support::cluster::*;
    use fake_apiserver::FakeHandle;
    use serde_json::Value;

    /// What the controller does after an approval: the next step, paused.
    fn next_step(server: &FakeHandle, step: i64) {
        let mut rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "store").unwrap();
        rollout["status"]["canaryStatus"]["currentStepIndex"] = step.into();
        rollout["status"]["canaryStatus"]["currentStepState"] = "StepPaused".into();
        server.put_object(rollout);
    }

    fn approve(server: &FakeHandle) -> crate::support::Output {
        Test::new().kubeconfig(server).args(["approve", "store", "--yes"]).run().success()
    }

    const ORIGINAL: [&str; 2] = ["/ -> store 1", "/old -> "];

    #[test]
    fn approve_a_header_step_a_path_step_and_a_weight_step_then_restore() {
        let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
        assert_eq!(rules(&server), ORIGINAL);
        let status = |server: &FakeHandle| Test::new().kubeconfig(server).args(["status", "store"]).run().success();
        status(&server).stdout_has("HTTPRoute shop/store  original\n");

        approve(&server)
            .stdout_has("HTTPRoute shop/store: the controller's Gateway API routing (no script), match mode")
            .stdout_has("HTTPRoute shop/store updated (backup ");
        assert_eq!(rules(&server), ["/ -> store 1", "/old -> ", "/ x-canary=true -> store-canary 1"]);
        assert_eq!(route(&server)["metadata"]["annotations"], Value::Null, "an HTTPRoute stores no original");
        assert_eq!(rollout_of(&server)["currentStepState"], "StepReady");
        status(&server).stdout_has("HTTPRoute shop/store  at step 1\n");

        next_step(&server, 2);
        approve(&server);
        // The header rule goes (it holds the canary); the path match makes a rule of its own.
        assert_eq!(rules(&server), ["/ -> store 1", "/old -> ", "/beta -> store-canary 1"]);
        status(&server).stdout_has("HTTPRoute shop/store  at step 2\n");

        next_step(&server, 3);
        approve(&server).stdout_has("weight mode: store 70, store-canary 30").stdout_has("a weight step keeps it");
        assert_eq!(rules(&server), ["/ -> store 70, store-canary 30", "/old -> ", "/beta -> store-canary 1"]);
        status(&server).stdout_has("HTTPRoute shop/store  at step 3\n");

        Test::new()
            .kubeconfig(&server)
            .args(["restore", "store", "--yes"])
            .run()
            .success()
            .stdout_has("HTTPRoute shop/store: the controller's restore of its rules")
            .stdout_has("-  - filters:\n")
            .stdout_has(
                "warning: spec.rules[1] has no backendRefs (a redirect, for example): the controller deletes it",
            )
            .stdout_has("HTTPRoute shop/store restored (backup ");
        // The controller's restore: the canary gone, weight 1, the redirect deleted.
        assert_eq!(rules(&server), ["/ -> store 1"]);
        status(&server).stdout_has("HTTPRoute shop/store  original\n");
        // Restored: a second restore writes nothing.
        server.clear_log();
        Test::new()
            .kubeconfig(&server)
            .args(["restore", "store", "--yes"])
            .run()
            .success()
            .stderr_has("HTTPRoute shop/store: already restored");
        assert!(writes(&server).is_empty(), "{:?}", writes(&server));
    }

    fn rollout_of(server: &FakeHandle) -> Value {
        let rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "store").expect("the Rollout");
        rollout["status"]["canaryStatus"].clone()
    }

    #[test]
    fn the_route_is_read_at_v1_when_served_else_at_v1beta1() {
        for (versions, read) in [(&["v1", "v1beta1"][..], "v1"), (&["v1beta1"][..], "v1beta1")] {
            let server = store(1, "StepPaused", versions).start();
            approve(&server);
            let paths: Vec<String> = server
                .writes()
                .iter()
                .filter(|r| r.path.contains("httproutes"))
                .map(|r| format!("{} {}", r.method, r.path))
                .collect();
            assert_eq!(paths, [format!("PUT /apis/gateway.networking.k8s.io/{read}/namespaces/shop/httproutes/store")]);
        }
    }
}
