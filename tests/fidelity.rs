//! Where the plan follows what the controller really does (docs/controller-semantics.md §11):
//! steps it does not route, what its webhook refuses, stored originals it misreads, its
//! harness's reading of test cases, Go's number format, and durations and sizes as kubectl
//! reads them. Offline with `plan -f` and `test`; against the fake API server where the
//! cluster's state matters.

use crate::support::Test;
use crate::support::cluster::*;
use serde_json::json;

const VIRTUAL_SERVICE: &str = "apiVersion: networking.istio.io/v1beta1\nkind: VirtualService\nmetadata: {name: demo, namespace: shop}\nspec:\n  hosts: [demo]\n  http:\n  - route:\n    - destination: {host: demo}\n";

/// A v1beta1 partition Rollout `shop/demo` (no extra workload) on Deployment `demo`, routing
/// through VirtualService `demo`, with these steps (YAML list items, indented 6).
fn partition(steps: &str) -> String {
    format!(
        "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollout\nmetadata: {{name: demo, namespace: shop}}\nspec:\n  workloadRef: {{apiVersion: apps/v1, kind: Deployment, name: demo}}\n  strategy:\n    canary:\n      steps:\n{steps}      trafficRoutings:\n      - service: demo\n        customNetworkRefs:\n        - {{apiVersion: networking.istio.io/v1beta1, kind: VirtualService, name: demo}}\n"
    )
}

fn workload(replicas: i64) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: demo, namespace: shop}}\nspec: {{replicas: {replicas}}}\n"
    )
}

const TWO_POD_STEPS: &str =
    "      - {replicas: 1, traffic: 20%}\n      - {replicas: 2, traffic: 50%}\n      - {replicas: 2}\n";

#[test]
fn a_partition_step_reaching_the_workloads_replicas_keeps_the_previous_routing() {
    // `plan -f m --step 2`, with `more` arguments.
    let plan_with = |files: Test, more: &[&str]| {
        files.args(["plan", "-f", "m", "--step", "2"].iter().chain(more).copied()).run().success()
    };
    let plan = |files: Test| plan_with(files, &[]);
    let with = |replicas: Option<i64>| {
        let test = Test::new().file("m/rollout.yaml", &partition(TWO_POD_STEPS)).file("m/vs.yaml", VIRTUAL_SERVICE);
        match replicas {
            Some(replicas) => test.file("m/deployment.yaml", &workload(replicas)),
            None => test,
        }
    };
    // Two pods: step 2 puts both on the new version, and the controller skips its routing.
    let out = plan(with(Some(2)))
        .stdout_has("step 2/3: replicas 2, traffic 50% (canary 50 / stable 50) (the controller does not route this step: its replicas reach the workload's 2 in a partition release, so the gateway keeps step 1's routing)")
        .stdout_has("+      weight: 80\n+    - destination:\n+        host: demo-canary\n+      weight: 20\n");
    assert!(!out.stdout.contains("weight: 50"), "{}", out.stdout);
    assert!(!out.stdout.contains("is not known"), "{}", out.stdout);
    // The release's current step (its status says so): the controller writes nothing there,
    // so the objects as read (here never routed) are left as they are.
    let current = "status: {phase: Progressing, currentStepIndex: 2, canaryStatus: {currentStepIndex: 2, currentStepState: StepPaused}}\n";
    let at_step_2 = || with(Some(2)).file("m/rollout.yaml", &format!("{}{current}", partition(TWO_POD_STEPS)));
    let out = plan(at_step_2())
        .stdout_has("so the gateway keeps step 1's routing)")
        .stdout_has("VirtualService shop/demo: already as planned; the controller writes nothing here: left alone");
    assert!(!out.stdout.contains("weight"), "{}", out.stdout);
    // In JSON, both are unrouted: one keeps step 1's routing (written from the objects as
    // read), the other is left alone.
    for (files, action) in [(with(Some(2)), "replace"), (at_step_2(), "keep")] {
        let stage = &plan_with(files, &["-o", "json"]).json()["plans"][0]["stages"][0];
        assert_eq!((&stage["unrouted"], &stage["objects"][0]["action"]), (&json!(true), &json!(action)));
    }
    // Four pods: step 2 is routed.
    let out = plan(with(Some(4))).stdout_has("+      weight: 50\n");
    assert!(!out.stdout.contains("does not route"), "{}", out.stdout);
    // No workload among the files: routed, with the assumption said.
    plan(with(None))
        .stdout_has("warning: its workload Deployment demo is not known (not among the files, or not readable), so the plan assumes only a step of 100% (or more) of its replicas reaches them")
        .stdout_has("+      weight: 50\n");
    // Unknown too, a step of 100% reaches the workload, whatever its size.
    let full = "      - {replicas: 1, traffic: 20%}\n      - {replicas: 100%, traffic: 100%}\n";
    let out = plan(Test::new().file("m/rollout.yaml", &partition(full)).file("m/vs.yaml", VIRTUAL_SERVICE))
        .stdout_has("(the controller does not route this step: its replicas reach all of the workload's, whatever their number, in a partition release, so the gateway keeps step 1's routing)")
        .stdout_has("+      weight: 80\n");
    assert!(!out.stdout.contains("weight: 100"), "{}", out.stdout);
}

#[test]
fn a_full_partition_step_reached_by_a_jump_keeps_the_routing_the_jump_leaves() {
    // At step 1, the status's nextStepIndex jumps to step 3, which runs both pods: the gateway
    // keeps step 1's routing (20%), not step 2's (50%), nor step 3's own (80%).
    let steps = "      - {replicas: 1, traffic: 20%}\n      - {replicas: 2, traffic: 50%}\n      - {replicas: 2, traffic: 80%}\n";
    let jumping = "status: {phase: Progressing, canaryStatus: {currentStepIndex: 1, nextStepIndex: 3, currentStepState: StepPaused}}\n";
    let out = Test::new()
        .file("m/rollout.yaml", &format!("{}{jumping}", partition(steps)))
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .file("m/deployment.yaml", &workload(2))
        .args(["plan", "-f", "m", "--step", "3"])
        .run()
        .success()
        .stdout_has("so the gateway keeps the routing of step 1, which the jump leaves)")
        .stdout_has("+      weight: 80\n+    - destination:\n+        host: demo-canary\n+      weight: 20\n");
    assert!(!out.stdout.contains("weight: 50"), "{}", out.stdout);
}

#[test]
fn the_workload_is_read_from_the_cluster_for_its_replicas() {
    // Step 2 runs two pods of a two-pod Deployment: it keeps step 1's routing (a header match).
    let mut rollout = rollout(2, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["steps"][1]["replicas"] = json!(2);
    let server = FakeApiServer::builder()
        .kruise_and_istio()
        .resource(fake_apiserver::deployments())
        .object(rollout)
        .object(virtual_service())
        .object(destination_rule())
        .object(deployment(2))
        .start();
    let out = Test::new()
        .kubeconfig(&server)
        .args(["plan", "demo", "--all-steps"])
        .run()
        .success()
        .stdout_has("so the gateway keeps step 1's routing")
        .stdout_has("+        user-agent:\n+          exact: pc\n");
    assert!(!out.stdout.contains("weight: 50"), "{}", out.stdout);
    assert!(server.requests().iter().any(|r| r.path == "/apis/apps/v1/namespaces/shop/deployments/demo"));
    Test::new()
        .kubeconfig(&server)
        .args(["status", "demo"])
        .run()
        .success()
        .stdout_has("  Step:     step 2/3: replicas 2, traffic 50% (canary 50 / stable 50) (the controller does not route this step: its replicas reach the workload's 2 in a partition release, so the gateway keeps step 1's routing), pause until approved\n")
        // Not at step 1's routing: the step it came from may have been another (a jump), and
        // approve --traffic-only writes nothing at such a step, so it is not suggested.
        .stdout_has("is not at step 2, the current step (it is at its original): the controller does not route this step, and the gateway keeps the routing of the step the release came from: the one before, or the step a nextStepIndex jump left\n");
}

/// A server with Rollout demo paused at step 2, which runs both pods of its two-pod Deployment:
/// a step the controller does not route.
fn at_an_unrouted_step() -> FakeHandle {
    let mut rollout = rollout(2, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["steps"][1]["replicas"] = json!(2);
    let server = serving(rollout).start();
    server.put_object(deployment(2));
    server
}

/// `approve demo --yes` there, which must write the Rollout's approval (its status) and nothing
/// else but claims, and say why it routes nothing.
fn approve_alone(server: &FakeHandle) -> crate::support::Output {
    let out = Test::new()
        .kubeconfig(server)
        .run_args(["approve", "demo", "--yes"])
        .success()
        .stdout_has("so the gateway keeps step 1's routing");
    assert!(!out.stdout.contains("user-agent"), "{}", out.stdout);
    let written: Vec<_> = server.writes().into_iter().filter(|w| !w.path.contains("/leases")).collect();
    assert!(written.iter().all(|w| w.path.contains("/rollouts/demo")), "{written:?}");
    assert!(written.iter().any(|w| w.path.ends_with("/rollouts/demo/status")), "{written:?}");
    out
}

#[test]
fn approve_at_a_step_the_controller_does_not_route_writes_no_routing() {
    // The controller leaves the routing alone at step 2, so an edit made since step 1 (here:
    // routing never written at all) stays.
    let server = at_an_unrouted_step();
    let test = Test::new().kubeconfig(&server);
    // `plan` of the step says so ...
    let out = test.run_args(["plan", "demo"]).success().stdout_has("the controller writes nothing here: left alone");
    assert!(!out.stdout.contains("user-agent"), "{}", out.stdout);
    // ... and `approve` writes none: the approval alone.
    approve_alone(&server).stdout_has("the controller writes nothing here: left alone");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn approve_at_a_step_the_controller_does_not_route_needs_none_of_its_objects() {
    // The controller reads no gateway object at a step it does not route: one deleted since
    // step 1 stops neither it nor the approval, which is warned of all the same.
    let server = at_an_unrouted_step();
    server.delete_object("networking.istio.io", "virtualservices", NAMESPACE, "demo").unwrap();
    approve_alone(&server).stdout_has("VirtualService shop/demo: there is no such object in namespace shop: the controller writes nothing here, but a step that routes it fails");
    assert!(server.object("networking.istio.io", "v1beta1", "virtualservices", NAMESPACE, "demo").is_none());
}

#[test]
fn a_blue_green_last_step_at_100_percent_waits_for_approval() {
    let blue_green = partition("      - {replicas: 50%, traffic: 0%}\n      - {replicas: 100%, traffic: 50%}\n")
        .replace("    canary:\n", "    blueGreen:\n");
    Test::new()
        .file("m/rollout.yaml", &blue_green)
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .args(["plan", "-f", "m"])
        .run()
        .success()
        .stdout_has("step 2/2: replicas 100%, traffic 50% (canary 50 / stable 50), pause until approved (a blue-green last step at 100% waits too)");
}

#[test]
fn v1alpha1_empty_matches_reach_the_script_as_nil() {
    let alpha = "apiVersion: rollouts.kruise.io/v1alpha1\nkind: Rollout\nmetadata: {name: demo, namespace: shop}\nspec:\n  objectRef: {workloadRef: {apiVersion: apps/v1, kind: Deployment, name: demo}}\n  strategy:\n    canary:\n      steps:\n      - {weight: 20, matches: []}\n      trafficRoutings:\n      - service: demo\n        customNetworkRefs:\n        - {apiVersion: networking.istio.io/v1beta1, kind: VirtualService, name: demo}\n";
    // The controller's own test script tests `if (obj.matches)`: an empty table would be true.
    let script = "if (obj.matches) then obj.data.spec.seen = 'matches' else obj.data.spec.seen = 'weight ' .. obj.canaryWeight end\nreturn obj.data\n";
    Test::new()
        .file("m/rollout.yaml", alpha)
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .file("vs.lua", script)
        .args(["plan", "-f", "m", "--script", "VirtualService.networking.istio.io=vs.lua"])
        .run()
        .success()
        .stdout_has("+  seen: weight 20\n");
}

#[test]
fn a_traffic_routing_without_weight_or_matches_writes_nothing() {
    let stored = r#"{"spec":{"hosts":["demo"],"http":[{"route":[{"destination":{"host":"demo"}}]}]}}"#;
    let routed = format!(
        "apiVersion: networking.istio.io/v1beta1\nkind: VirtualService\nmetadata:\n  name: demo\n  namespace: shop\n  annotations:\n    rollouts.kruise.io/original-spec-configuration: '{stored}'\nspec:\n  hosts: [demo]\n  http:\n  - route:\n    - destination: {{host: demo}}\n      weight: 90\n    - destination: {{host: demo, subset: canary}}\n      weight: 10\n"
    );
    let traffic_routing = "apiVersion: rollouts.kruise.io/v1alpha1\nkind: TrafficRouting\nmetadata: {name: tr, namespace: shop}\nspec:\n  objectRef:\n  - service: demo\n    customNetworkRefs:\n    - {apiVersion: networking.istio.io/v1beta1, kind: VirtualService, name: demo}\n  strategy: {}\n";
    Test::new()
        .file("m/tr.yaml", traffic_routing)
        .file("m/vs.yaml", &routed)
        .args(["plan", "-f", "m", "--detailed-exitcode"])
        .run()
        .status(0)
        .stdout_has("TrafficRouting strategy: original routing (no traffic, no matches) (with neither weight nor matches the controller writes nothing while the TrafficRouting is progressing; the stored original comes back when it finalises)")
        .stdout_has("VirtualService shop/demo: already as planned; the controller writes nothing here: left alone");
}

/// The VirtualService with a stored original the controller cannot decode.
fn with_bad_original(original: &str) -> String {
    format!(
        "apiVersion: networking.istio.io/v1beta1\nkind: VirtualService\nmetadata:\n  name: demo\n  namespace: shop\n  labels: {{app: demo}}\n  annotations:\n    rollouts.kruise.io/original-spec-configuration: '{original}'\nspec:\n  hosts: [demo]\n  http:\n  - route:\n    - destination: {{host: demo}}\n      weight: 80\n    - destination: {{host: demo-canary}}\n      weight: 20\n"
    )
}

#[test]
fn a_stored_original_that_does_not_parse_is_read_as_the_controller_reads_it() {
    let test = Test::new()
        .file("m/rollout.yaml", &partition(TWO_POD_STEPS))
        .file("m/deployment.yaml", &workload(4))
        .file("m/vs.yaml", &with_bad_original("{bad"));
    // Step 3 restores: the controller writes back the empty data it decoded.
    test.args(["plan", "-f", "m", "--step", "3"])
        .run()
        .success()
        .stdout_has("warning: VirtualService/demo: its annotation rollouts.kruise.io/original-spec-configuration does not parse (invalid JSON: key must be a string at line 1 column 2); the controller ignores that, works from nothing (no spec, labels or annotations) and restores that: it wipes the object's spec, labels and annotations; approve and restore write nothing until the annotation is fixed")
        .stdout_has("-  labels:\n-    app: demo\n")
        .stdout_has("-spec:\n");
    // A label of another type: the rest decodes, that label becomes "".
    let partly = r#"{"spec":{"hosts":["demo"]},"labels":{"app":"demo","tier":3}}"#;
    Test::new()
        .file("m/rollout.yaml", &partition(TWO_POD_STEPS))
        .file("m/deployment.yaml", &workload(4))
        .file("m/vs.yaml", &with_bad_original(partly))
        .args(["plan", "-f", "m", "--step", "3"])
        .run()
        .success()
        .stdout_has("does not parse (json: cannot unmarshal number into Go struct field Data.labels of type string); the controller ignores that, works from the part that decodes and restores that, as shown")
        .stdout_has("+    tier: \"\"\n");
}

#[test]
fn an_empty_stored_original_fails_a_routing_step_and_is_left_alone_by_a_restore() {
    let test = || {
        Test::new()
            .file("m/rollout.yaml", &partition(TWO_POD_STEPS))
            .file("m/deployment.yaml", &workload(4))
            .file("m/vs.yaml", &with_bad_original(""))
    };
    test()
        .args(["plan", "-f", "m", "--step", "1"])
        .run()
        .status(1)
        .stderr_has("Rollout shop/demo, step 1/3, VirtualService/demo: its annotation rollouts.kruise.io/original-spec-configuration is empty: the controller fails this step (\"failed to get original spec from annotation\") and the release stops there")
        .stdout_is("");
    let out = test().args(["plan", "-f", "m", "--step", "3", "--detailed-exitcode"]).run().status(0).stdout_has(
        "VirtualService shop/demo: already as planned; its stored original is empty: the controller leaves it alone",
    );
    assert!(!out.stdout.contains("warning"), "{}", out.stdout);
}

#[test]
fn approve_refuses_to_write_from_a_stored_original_that_does_not_parse() {
    // Step 3 (no traffic) restores; the VirtualService's stored original is not JSON.
    let mut vs = virtual_service();
    vs["metadata"]["annotations"] = json!({"rollouts.kruise.io/original-spec-configuration": "{bad"});
    let server = FakeApiServer::builder()
        .kruise_and_istio()
        .resource(fake_apiserver::leases())
        .resource(fake_apiserver::deployments())
        .object(rollout(3, "StepPaused"))
        .object(vs)
        .object(destination_rule())
        .object(deployment(4))
        .start();
    approve_demo(&server)
        .status(3)
        .stderr_has("nothing was written: VirtualService/demo: its annotation rollouts.kruise.io/original-spec-configuration does not parse");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn a_script_configmap_outside_the_controllers_namespace_is_warned_about() {
    let rollout = partition(TWO_POD_STEPS).replace(
        "{apiVersion: networking.istio.io/v1beta1, kind: VirtualService, name: demo}",
        "{apiVersion: gateway.example.com/v1, kind: Route, name: demo}",
    );
    let route =
        "apiVersion: gateway.example.com/v1\nkind: Route\nmetadata: {name: demo, namespace: shop}\nspec: {weight: 0}\n";
    // No namespace: `kubectl apply` would put it in the current namespace, default.
    let configmap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kruise-rollout-configuration}\ndata:\n  lua.traffic.routing.Route.gateway.example.com: |\n    obj.data.spec.weight = obj.canaryWeight\n    return obj.data\n";
    let files = || {
        Test::new()
            .file("m/rollout.yaml", &rollout)
            .file("m/deployment.yaml", &workload(4))
            .file("m/route.yaml", route)
            .file("m/cm.yaml", configmap)
    };
    let warning = "warning: its scripts come from ConfigMap default/kruise-rollout-configuration, but the controller reads that ConfigMap only from its own namespace, kruise-rollout (--controller-namespace), so it would not find them there: it would run its built-in script where it has one (Istio's VirtualService and DestinationRule; nginx, aliyun-alb, higress and mse Ingresses), which this plan does not show, and route nothing through a kind or class without one";
    files().args(["plan", "-f", "m", "--step", "1"]).run().success().stdout_has(warning).stdout_has("+  weight: 20\n");
    let out = files().args(["plan", "-f", "m", "--step", "1", "--controller-namespace", "default"]).run().success();
    assert!(!out.stdout.contains("warning:"), "{}", out.stdout);
}

#[test]
fn weights_wrap_as_the_controllers_int32_does() {
    // The webhook refuses this traffic, but the controller's test harness runs it.
    let case = "rollout:\n  apiVersion: rollouts.kruise.io/v1beta1\n  kind: Rollout\n  metadata: {name: demo}\n  spec:\n    strategy:\n      canary:\n        steps: [{traffic: \"-2147483648%\"}]\n        trafficRoutings: [{service: demo}]\noriginal: {spec: {}}\nexpected:\n- spec: {weights: [-2147483648, -2147483548]}\n";
    Test::new()
        .file(
            "s/example.com/Route/trafficRouting.lua",
            "obj.data.spec.weights = {obj.canaryWeight, obj.stableWeight}\nreturn obj.data\n",
        )
        .file("s/example.com/Route/testdata/wrap.yaml", case)
        .args(["test", "s"])
        .run()
        .success()
        .stdout_has("ok   example.com/Route wrap.yaml (1 step)");
}

#[test]
fn a_disabled_rollout_plans_nothing_and_says_why() {
    let disabled = partition(TWO_POD_STEPS).replace("spec:\n  workloadRef", "spec:\n  disabled: true\n  workloadRef");
    Test::new()
        .file("m/rollout.yaml", &disabled)
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .args(["plan", "-f", "m", "--detailed-exitcode"])
        .run()
        .status(0)
        .stdout_has("Rollout shop/demo\n  spec.disabled is true: the controller runs no step of a disabled Rollout")
        .stdout_has("Plan: 0 to change, 0 already as planned");
}

#[test]
fn test_says_how_the_controllers_go_test_treats_each_case() {
    let script = "obj.data.spec.weight = obj.canaryWeight\nreturn obj.data\n";
    // go test reads the rollout as v1beta1: weight is not a field there, canaryWeight is -1.
    let alpha = "rollout:\n  apiVersion: rollouts.kruise.io/v1alpha1\n  kind: Rollout\n  metadata: {name: demo}\n  spec:\n    strategy:\n      canary:\n        steps: [{weight: 20}]\n        trafficRoutings: [{service: demo}]\noriginal: {kind: Route, spec: {}}\nexpected:\n- {kind: Route, spec: {weight: -1}}\n";
    let blue_green = "rollout:\n  apiVersion: rollouts.kruise.io/v1beta1\n  kind: Rollout\n  metadata: {name: demo}\n  spec:\n    strategy:\n      blueGreen:\n        steps: [{traffic: 50%, replicas: 100%}]\n        trafficRoutings: [{service: demo}]\noriginal: {kind: Route, spec: {}}\nexpected:\n- {kind: Route, spec: {weight: 50}}\n";
    let files = || {
        Test::new()
            .file("s/example.com/Route/trafficRouting.lua", script)
            .file("s/example.com/Route/testdata/alpha.yaml", alpha)
            .file("s/example.com/Route/testdata/blue-green.yaml", blue_green)
    };
    files()
        .args(["test", "s"])
        .run()
        .success()
        .stdout_has("ok   example.com/Route alpha.yaml (1 step)\n  go test: it reads this v1alpha1 rollout as v1beta1 without the conversion, so steps[0].weight 20 is ignored and the script gets canaryWeight -1 there")
        .stdout_has("ok   example.com/Route blue-green.yaml (1 step)\n  go test cannot run this case: it reads spec.strategy.canary only");
    let report = files().args(["test", "s", "-o", "json"]).run().success().json();
    let go_test: Vec<bool> =
        report["cases"].as_array().unwrap().iter().map(|c| c["goTest"]["runs"].as_bool().unwrap()).collect();
    assert_eq!(go_test, [true, false]);
}

#[test]
fn plan_f_refuses_what_the_webhook_rejects() {
    let bad = partition("      - {replicas: 1, traffic: \"-50%\"}\n      - {traffic: 150%}\n");
    let out = Test::new()
        .file("m/rollout.yaml", &bad)
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .args(["plan", "-f", "m"])
        .run()
        .status(1)
                // Each rule names its field's line; a field that is not written, the Rollout's.
        .stderr_has("m/rollout.yaml:1: Rollout shop/demo would be rejected by the controller's admission webhook:\n  m/rollout.yaml:9: spec.strategy.canary.steps[0].traffic: \"-50%\" must be in (0%, 100%]\n  m/rollout.yaml:10: spec.strategy.canary.steps[1].replicas: required\n  m/rollout.yaml:10: spec.strategy.canary.steps[1].traffic: \"150%\" must be in (0%, 100%]\n");
    assert_eq!(out.stdout, "");
}

#[test]
fn plan_f_puts_the_crds_limits_under_the_api_servers_schema_validation() {
    // An operator trial (M2): maxItems were listed as the webhook's.
    let matches = "[".to_string() + &vec!["{headers: [{name: a, value: b}]}"; 17].join(", ") + "]";
    let steps = format!("      - {{replicas: 1, traffic: \"-50%\"}}\n      - {{replicas: 2, matches: {matches}}}\n");
    Test::new()
        .file("m/rollout.yaml", &partition(&steps))
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .args(["plan", "-f", "m"])
        .run()
        .status(1)
        .stderr_has("error: m/rollout.yaml:1: Rollout shop/demo would be rejected by the API server's schema validation (the CRD's schema):\n  m/rollout.yaml:10: spec.strategy.canary.steps[1].matches: 17 matches, at most 16\nand, once that passes, by the controller's admission webhook:\n  m/rollout.yaml:9: spec.strategy.canary.steps[0].traffic: \"-50%\" must be in (0%, 100%]\n");
    // Its rules for matches too (a custom-refs review: a routing the API server never stores
    // was planned without a word).
    let steps = "      - {replicas: 1, matches: [{headers: [{name: a, value: '1'}, {name: a, value: '2'}], path: {type: PathPrefix, value: foo}}, {headers: [{name: b, value: '1', type: Prefix}]}]}\n";
    let out = Test::new()
        .file("m/rollout.yaml", &partition(steps))
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .args(["plan", "-f", "m"])
        .run()
        .status(1)
        .stderr_has("spec.strategy.canary.steps[0].matches[0].headers[1].name: \"a\" is named twice (each name once in the list)\n")
        .stderr_has("spec.strategy.canary.steps[0].matches[0].path.value: \"foo\": value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']\n")
        // And its enums, each under the rest of the schema's rules.
        .stderr_has("spec.strategy.canary.steps[0].matches[1].headers[0].type: must be one of Exact, RegularExpression, not \"Prefix\"\n");
    assert_eq!(out.stdout, "");
}

#[test]
fn a_copy_of_the_builtin_script_is_warned_of_as_the_builtin() {
    // An operator trial (P2): a `record --dir` copy of the built-in VirtualService script got
    // "canaryWeight -1" at every matches-only step, which the built-in does not get.
    let builtin = "lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua";
    let code = std::fs::read_to_string(crate::support::repo(builtin)).unwrap();
    let steps = "      - {replicas: 1, matches: [{headers: [{name: x-env, value: gray}]}]}\n      - {replicas: 2}\n";
    let plan = |code: &str| {
        Test::new()
            .file("m/rollout.yaml", &partition(steps))
            .file("m/vs.yaml", VIRTUAL_SERVICE)
            .file("s/networking.istio.io/VirtualService/trafficRouting.lua", code)
            .args(["plan", "-f", "m", "--lua-dir", "s", "--step", "1"])
            .run()
            .success()
    };
    let warning = "has matches and no traffic, so the script gets canaryWeight -1 and stableWeight 101";
    let copy = plan(&code).stdout_has("script --lua-dir s/networking.istio.io/VirtualService/trafficRouting.lua");
    assert!(!copy.stdout.contains(warning), "{}", copy.stdout);
    // Another text is another script, which may read the weights.
    plan(&format!("{code}\n-- mine\n")).stdout_has(warning);
}

#[test]
fn a_lua_dir_script_named_in_another_case_is_said_not_to_run() {
    // A review (s52, F3): `trafficrouting.lua` was passed over, and the built-in script ran
    // without a word.
    let steps = "      - {replicas: 1, traffic: 20%}\n";
    let test = |script: &str| {
        Test::new()
            .file("m/rollout.yaml", &partition(steps))
            .file("m/vs.yaml", VIRTUAL_SERVICE)
            .file(script, "return obj.data\n")
            .args(["plan", "-f", "m", "--lua-dir", "s"])
    };
    let misnamed = "s/networking.istio.io/VirtualService/trafficrouting.lua";
    let warning = format!(
        "warning: --lua-dir s: {misnamed} is not read: a kind's script is read from a file named trafficRouting.lua (the name is case-sensitive)"
    );
    test(misnamed).run().success().stderr_has(&warning);
    // Beside a script of the right name it is a copy, and the script beside it runs.
    let out = test(misnamed).file("s/networking.istio.io/VirtualService/trafficRouting.lua", "return obj.data\n").run();
    assert!(!out.success().stderr.contains("is not read"));
    test("s/networking.istio.io/virtualservice/trafficRouting.lua").run().status(1).stderr_has(
        "error: --lua-dir: s/networking.istio.io/virtualservice/trafficRouting.lua is filed under virtualservice.networking.istio.io, but the plan's object is VirtualService.networking.istio.io",
    );
}

#[test]
fn a_rollout_without_its_workload_reference_or_of_another_api_group_is_not_planned_silently() {
    // A review (s52, F1, F2): both were planned, or dropped, with exit 0 and no word.
    let steps = "      - {replicas: 1, traffic: 20%}\n";
    let plan = |rollout: &str| {
        Test::new().file("m/rollout.yaml", rollout).file("m/vs.yaml", VIRTUAL_SERVICE).run_args(["plan", "-f", "m"])
    };
    let without = partition(steps).replace("  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: demo}\n", "");
    plan(&without).status(1).stderr_has("error: m/rollout.yaml:1: Rollout shop/demo would be rejected by the API server's schema validation (the CRD's schema):\n  m/rollout.yaml:4: spec.workloadRef: required\n");
    let other_group = partition(steps).replace("rollouts.kruise.io/v1beta1", "rollout.kruise.io/v1beta1");
    plan(&other_group).status(1).stderr_has("warning: skipped m/rollout.yaml:1: Rollout demo has apiVersion rollout.kruise.io/v1beta1, not rollouts.kruise.io/v1beta1 or v1alpha1, so it is not read as OpenKruise's\n");
}

#[test]
fn a_script_that_gets_no_weights_is_warned_of_once_per_rollout() {
    // An operator trial: "canaryWeight -1" was said at every matches-only step.
    let steps = "      - {replicas: 1, matches: [{headers: [{name: x-env, value: gray}]}]}\n      - {replicas: 2, traffic: 50%}\n      - {replicas: 3, matches: [{headers: [{name: x-env, value: blue}]}]}\n      - {replicas: 4}\n";
    let out = Test::new()
        .file("m/rollout.yaml", &partition(steps))
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .file("s/networking.istio.io/VirtualService/trafficRouting.lua", "return obj.data\n")
        .args(["plan", "-f", "m", "--lua-dir", "s"])
        .run()
        .success()
        .stdout_has("  warning: VirtualService/demo: steps 1, 3 have matches and no traffic, so the script gets canaryWeight -1 and stableWeight 101 there\n");
    assert_eq!(out.stdout.matches("canaryWeight -1").count(), 1, "{}", out.stdout);
}

#[test]
fn a_rollout_in_the_cluster_the_webhook_rejects_now_gets_a_warning_and_its_routing_is_written_only_with_force() {
    let mut refused = rollout(2, "StepPaused");
    refused["spec"]["strategy"]["canary"]["steps"][1]["traffic"] = json!("150%");
    let server = serving(refused).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["plan", "demo"])
        .success()
        .stdout_has("warning: spec.strategy.canary.steps[1].traffic: \"150%\" must be in (0%, 100%] (the controller's webhook rejects this now)");
    // Weights of 150 and -50 go into the mesh only when asked for (a regression: approve --yes
    // wrote them with the warning alone).
    server.clear_log();
    test.run_args(["approve", "demo", "--yes"]).status(3).stderr_has(
        "error: nothing was written: Rollout shop/demo, step 2/3: spec.strategy.canary.steps[1].traffic: \"150%\" must be in (0%, 100%]: the API server would not admit this routing now, and the controller would write it as it is; fix the Rollout, or pass --force to write it all the same\n",
    );
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["approve", "demo", "--yes", "--force"]).success().stdout_has("weight: -50");
    // The CRD's limits are its schema's, not the webhook's.
    let mut many = rollout(2, "StepPaused");
    many["spec"]["strategy"]["canary"]["steps"][1]["matches"] =
        json!(vec![json!({"headers": [{"name": "a", "value": "b"}]}); 17]);
    Test::new().kubeconfig(&serving(many).start()).args(["plan", "demo"]).run().success().stdout_has(
        "warning: spec.strategy.canary.steps[1].matches: 17 matches, at most 16 (the CRD's schema rejects this now)",
    );
}

#[test]
fn a_partition_step_above_the_default_partition_percent_limit_is_a_warning_not_an_error() {
    let over =
        "      - {replicas: 20%, traffic: 20%}\n      - {replicas: 60%, traffic: 60%}\n      - {replicas: 100%}\n";
    let warning = "warning: m/rollout.yaml:10: spec.strategy.canary.steps[1].replicas: \"60%\" is above 50%: in a partition-style release (no enableExtraWorkloadForCanary) the controller's webhook refuses percentage replicas above its --partition-percent-limit (default 50) on a step with traffic or matches; it is admitted only if the controller runs with a higher limit";
    let plan = |rollout: &str| {
        Test::new()
            .file("m/rollout.yaml", rollout)
            .file("m/deployment.yaml", &workload(10))
            .file("m/vs.yaml", VIRTUAL_SERVICE)
            .args(["plan", "-f", "m", "--summary"])
            .run()
            .success()
    };
    plan(&partition(over)).stdout_has(warning).stdout_has("step 2/3  VirtualService shop/demo  replace");
    // With an extra workload the rolling style is canary: the limit does not apply.
    let extra = partition(over).replace("    canary:\n", "    canary:\n      enableExtraWorkloadForCanary: true\n");
    let out = plan(&extra);
    assert!(!out.stdout.contains("partition-percent-limit"), "{}", out.stdout);
}

#[test]
fn a_partition_step_in_the_cluster_above_the_default_partition_percent_limit_is_warned_of() {
    let mut rollout = rollout(2, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["steps"][1]["replicas"] = json!("60%");
    Test::new()
        .kubeconfig(&serving(rollout).start())
        .args(["plan", "demo"])
        .run()
        .success()
        .stdout_has("warning: spec.strategy.canary.steps[1].replicas: \"60%\" is above 50%: in a partition-style release (no enableExtraWorkloadForCanary) the controller's webhook refuses percentage replicas above its --partition-percent-limit (default 50)");
}

#[test]
fn numbers_are_printed_as_gos_json_has_them() {
    let script = "obj.data.spec.big = 12345678901234567890\nobj.data.spec.zero = 0 * -1\nreturn obj.data\n";
    let files = || {
        Test::new()
            .file("m/rollout.yaml", &partition(TWO_POD_STEPS))
            .file("m/deployment.yaml", &workload(4))
            .file("m/vs.yaml", VIRTUAL_SERVICE)
            .file("vs.lua", script)
            .args(["plan", "-f", "m", "--step", "1", "--script", "VirtualService.networking.istio.io=vs.lua"])
    };
    files()
        .arg("-o")
        .arg("json")
        .run()
        .success()
        .stdout_has("\"big\": 12345678901234567000,")
        .stdout_has("\"zero\": -0\n");
    files().arg("-o").arg("yaml").run().success().stdout_has("big: 12345678901234567000\n");
    files().run().success().stdout_has("+  big: 12345678901234567000\n");
}

#[test]
fn the_stored_original_keeps_whole_numbers_exact_as_the_controller_stores_them() {
    // The controller's client decodes an object's whole numbers as int64 and stores them so;
    // the script gets them back as float64s, and so does what it writes.
    let vs = format!("{VIRTUAL_SERVICE}  big: 9007199254740993\n  small: -9007199254740993\n");
    let plan = Test::new()
        .file("m/rollout.yaml", &partition(TWO_POD_STEPS))
        .file("m/deployment.yaml", &workload(4))
        .file("m/vs.yaml", &vs)
        .args(["plan", "-f", "m", "--step", "1", "-o", "json"])
        .run()
        .success();
    let planned: serde_json::Value = serde_json::from_str(&plan.stdout).unwrap();
    let vs = &planned["plans"][0]["stages"][0]["objects"][0]["planned"];
    let stored = vs["metadata"]["annotations"]["rollouts.kruise.io/original-spec-configuration"].as_str().unwrap();
    assert!(
        stored.contains(r#""big":9007199254740993,"#) && stored.contains(r#""small":-9007199254740993}"#),
        "{stored}"
    );
    assert!(plan.stdout.contains("\"big\": 9007199254740992,"), "{}", plan.stdout);
}

const ROUNDED_BECAUSE: &str = ": the controller reads the stored original as float64s, which hold whole numbers beyond 2^53 only rounded; keep such numbers below 2^53 or write them as strings";

#[test]
fn a_whole_number_the_controller_writes_back_rounded_is_warned_of() {
    let files = |vs: &str| {
        Test::new()
            .file("m/rollout.yaml", &partition(TWO_POD_STEPS))
            .file("m/deployment.yaml", &workload(4))
            .file("m/vs.yaml", vs)
    };
    let written_back = format!(
        "  warning: VirtualService/demo: spec.tag.id: 9007199254740993 is written back as 9007199254740992{ROUNDED_BECAUSE}\n"
    );
    let restored = format!(
        "  warning: VirtualService/demo: spec.tag.id: 9007199254740993 is restored as 9007199254740992{ROUNDED_BECAUSE}\n"
    );
    // Not stored yet: the script passes the extension field through at both routed steps, which
    // the warning names once.
    let vs = format!("{VIRTUAL_SERVICE}  tag: {{id: 9007199254740993, exact: 9007199254740992}}\n");
    let both = written_back.replace("warning: ", "warning: steps 1, 2: ");
    let out = files(&vs).args(["plan", "-f", "m"]).run().success().stdout_has(&both);
    assert_eq!(out.stdout.matches("is written back as").count(), 1, "{}", out.stdout);
    assert!(!out.stdout.contains("spec.tag.exact"), "2^53 is a float64: {}", out.stdout);

    // Stored as the controller stores it (exact), routed at step 1 (rounded): the next step
    // writes it back rounded, the restore at step 3 puts it back rounded.
    let stored = r#"{"spec":{"hosts":["demo"],"http":[{"route":[{"destination":{"host":"demo"}}]}],"tag":{"id":9007199254740993}}}"#;
    let routed = format!(
        "apiVersion: networking.istio.io/v1beta1\nkind: VirtualService\nmetadata:\n  name: demo\n  namespace: shop\n  annotations:\n    rollouts.kruise.io/original-spec-configuration: '{stored}'\nspec:\n  hosts: [demo]\n  http:\n  - route:\n    - destination: {{host: demo}}\n      weight: 80\n    - destination: {{host: demo-canary}}\n      weight: 20\n  tag: {{id: 9007199254740992}}\n"
    );
    files(&routed).args(["plan", "-f", "m", "--step", "2"]).run().success().stdout_has(&written_back);
    let out = files(&routed)
        .args(["plan", "-f", "m", "--step", "3"])
        .run()
        .success()
        .stdout_has("restore the stored original")
        .stdout_has(&restored);
    assert!(!out.stdout.contains("written back"), "{}", out.stdout);
    let json = files(&routed).args(["plan", "-f", "m", "--step", "3", "-o", "json"]).run().success().json();
    let object = &json["plans"][0]["stages"][0]["objects"][0];
    assert_eq!(object["planned"]["spec"]["tag"]["id"].to_string(), "9007199254740992");
    assert_eq!(object["warnings"], json!([restored.trim_start().trim_start_matches("warning: ").trim_end()]));

    // A script that writes another number there, or drops it: no warning.
    for script in ["obj.data.spec.tag.id = 7\nreturn obj.data\n", "obj.data.spec.tag = nil\nreturn obj.data\n"] {
        let out = files(&vs)
            .file("vs.lua", script)
            .args(["plan", "-f", "m", "--step", "1", "--script", "VirtualService.networking.istio.io=vs.lua"])
            .run()
            .success();
        assert!(!out.stdout.contains("warning"), "{script}: {}", out.stdout);
    }
}

/// VirtualService `demo` of `shop` with an extension field the scripts pass through.
fn tagged_virtual_service(id: serde_json::Value) -> serde_json::Value {
    let mut object = virtual_service();
    object["spec"]["tag"] = json!({"id": id});
    object
}

/// A number as Go's JSON writes it (what an API server reads of what was sent).
fn tag_id(object: &serde_json::Value) -> String {
    rollout_lua::for_tests::go_json(&object["spec"]["tag"]["id"])
}

#[test]
fn a_whole_number_rounded_is_warned_of_in_plan_approve_and_restore() {
    let server = shop(2, "StepPaused").start();
    server.put_object(tagged_virtual_service(json!(9007199254740993_i64)));
    let test = Test::new().kubeconfig(&server);
    let written_back = format!(
        "warning: VirtualService/demo: spec.tag.id: 9007199254740993 is written back as 9007199254740992{ROUNDED_BECAUSE}"
    );
    test.run_args(["plan", "demo"]).success().stdout_has(&written_back);
    let json = test.run_args(["plan", "demo", "-o", "json"]).success().json();
    let objects = &json["plans"][0]["stages"][0]["objects"];
    assert_eq!(objects[0]["warnings"], json!([written_back.trim_start_matches("warning: ")]));
    assert_eq!(objects[1]["warnings"], json!([]), "the DestinationRule holds no such number");

    // Approved: the original is stored exact, the routed object holds the number rounded.
    test.run_args(["approve", "demo", "--yes"]).success().stdout_has(&written_back);
    let routed = vs(&server);
    let stored = routed["metadata"]["annotations"]["rollouts.kruise.io/original-spec-configuration"].as_str().unwrap();
    assert!(stored.contains(r#""tag":{"id":9007199254740993}"#), "{stored}");
    assert_eq!(tag_id(&routed), "9007199254740992");

    // The restore puts it back rounded, as the controller's finalise does, and says so.
    test.run_args(["restore", "demo", "--yes"]).success().stdout_has(&format!(
        "  warning: spec.tag.id: 9007199254740993 is restored as 9007199254740992{ROUNDED_BECAUSE}\n"
    ));
    assert_eq!(tag_id(&vs(&server)), "9007199254740992");
}

#[test]
fn durations_and_sizes_are_bounded_and_read_as_kubectl_reads_them() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status", "demo", "-w", "--timeout", "99999999999999999999h"]).status(1).stderr_has(
        "invalid duration \"99999999999999999999h\": too long (at most 2562047h47m16.854775807s, about 292 years, as in Go)",
    );
    test.run_args(["plan", "demo", "--lua-memory", "17179869184Gi"])
        .status(1)
        .stderr_has("\"17179869184Gi\" is too large");
    // Below what the sandbox itself takes, the limit is named rather than a Lua stack error.
    test.run_args(["plan", "demo", "--lua-memory", "32Ki"])
        .status(1)
        .stderr_has("\"32Ki\": the script memory limit must be at least 1Mi");
    test.run_args(["plan", "demo", "--lua-memory", "1Mi"]).success();
    test.run_args(["plan", "demo", "--lua-timeout", "0"])
        .status(1)
        .stderr_has("the script time limit must be more than 0 (the controller's is 1s)");
    test.run_args(["plan", "demo", "--request-timeout", "1m30s", "--lua-timeout", "1.5s"]).success();
    // The longest timeout there is: the release is over, so the watch ends at once.
    let mut done = rollout(3, "Completed");
    done["status"] = json!({"phase": "Healthy", "conditions": [{"type": "Succeeded", "status": "True"}]});
    Test::new()
        .kubeconfig(&serving(done).start())
        .args(["status", "demo", "-w", "--timeout", "2562047h47m16.854775807s"])
        .run()
        .success();
}

#[test]
fn a_backup_puts_a_whole_number_beyond_2_53_back_exact() {
    // The live object holds the number rounded (a restore wrote it so); the backup holds it
    // exact. Compared as float64s they looked alike, and the backup was not put back.
    let server = shop(2, "StepPaused").start();
    server.put_object(tagged_virtual_service(json!(9007199254740992.0)));
    let backup = backup_text(&server, &tagged_virtual_service(json!(9007199254740993_i64)));
    let test = Test::new().kubeconfig(&server).file("original.yaml", &backup);
    let out =
        test.run_args(["restore", "--from-backup", "original.yaml", "--yes"]).success().stdout_has("restored from");
    assert!(!out.stdout.contains("warning"), "{}", out.stdout);
    assert_eq!(tag_id(&vs(&server)), "9007199254740993");
}

/// The audit's script: it writes what `obj` says of the first match's type (or "none").
const MATCH_TYPE_SCRIPT: &str = r#"local t = "none"
if obj.matches then
  if obj.matches[1] and obj.matches[1].headers then t = obj.matches[1].headers[1].type or "nil"
  elseif obj.matches[1] and obj.matches[1].path then t = "path:" .. (obj.matches[1].path.type or "nil") .. ":" .. (obj.matches[1].path.value or "nil")
  else t = "emptymatches" end
end
return {spec = {t = t}}
"#;

#[test]
fn test_reads_matches_without_the_crd_defaults_as_go_test_does_and_plan_keeps_them() {
    // go test decodes the case into Go types: no type, no path value, an empty path table.
    let rollout_case = "rollout:\n  apiVersion: rollouts.kruise.io/v1beta1\n  kind: Rollout\n  metadata: {name: r}\n  spec:\n    workloadRef: {apiVersion: apps/v1, kind: Deployment, name: d}\n    strategy:\n      canary:\n        steps:\n        - {replicas: 1, matches: [{headers: [{name: a, value: b}]}]}\n        - {replicas: 1, matches: [{path: {value: /x}}]}\n        - {replicas: 1, matches: [{path: {}}]}\n        - {replicas: 1, traffic: 20%}\n        trafficRoutings:\n        - service: s\n          customNetworkRefs: [{apiVersion: example.com/v1, kind: Thing, name: t}]\noriginal:\n  apiVersion: example.com/v1\n  kind: Thing\n  metadata: {name: t}\n  spec: {}\nexpected:\n- {kind: Thing, spec: {t: nil}}\n- {kind: Thing, spec: {t: \"path:nil:/x\"}}\n- {kind: Thing, spec: {t: \"path:nil:nil\"}}\n- {kind: Thing, spec: {t: none}}\n";
    let traffic_routing_case = "trafficRouting:\n  apiVersion: rollouts.kruise.io/v1alpha1\n  kind: TrafficRouting\n  metadata: {name: t}\n  spec:\n    strategy:\n      matches: [{headers: [{name: a, value: b}]}]\n    objectRef: [{service: s, customNetworkRefs: [{apiVersion: example.com/v1, kind: Thing, name: t}]}]\noriginal: {kind: Thing, spec: {}}\nexpected:\n- {kind: Thing, spec: {t: nil}}\n";
    let files = || {
        Test::new()
            .file("s/example.com/Thing/trafficRouting.lua", MATCH_TYPE_SCRIPT)
            .file("s/example.com/Thing/testdata/r.yaml", rollout_case)
            .file("s/example.com/Thing/testdata/tr.yaml", traffic_routing_case)
    };
    let out = files().args(["test", "s"]).run().success();
    assert_eq!(
        out.stdout,
        "ok   example.com/Thing r.yaml (4 steps)\nok   example.com/Thing tr.yaml (1 step)\n2 passed, 0 failed\n"
    );
    let objs = files().args(["lua-obj", "s/example.com/Thing/testdata/r.yaml", "-o", "json"]).run().success().json();
    assert_eq!(objs[2]["obj"]["matches"], json!([{"path": {}}]));
    // The same case planned: the API server would have filled in the CRD's defaults.
    for (step, written) in
        [("1", "+  t: Exact\n"), ("2", "+  t: path:PathPrefix:/x\n"), ("3", "+  t: path:PathPrefix:/\n")]
    {
        files()
            .args(["plan", "-f", "s/example.com/Thing/testdata/r.yaml", "--lua-dir", "s", "--step", step])
            .run()
            .success()
            .stdout_has(written);
    }
}

#[test]
fn test_says_go_test_passes_a_step_whose_script_returns_no_table() {
    // The audit's cases: a string, and a table followed by nil (only the last value counts). With
    // matches, which go test and the controller give the script alike.
    let script = "if obj.canaryWeight == 5 then return \"str\" end\nif obj.canaryWeight == 6 then return {spec = {a = 1}}, nil end\nreturn {spec = {a = 1}}\n";
    let case = |weight: i64, expected: &str| {
        format!(
            "trafficRouting:\n  apiVersion: rollouts.kruise.io/v1alpha1\n  kind: TrafficRouting\n  metadata: {{name: t}}\n  spec:\n    strategy: {{weight: {weight}, matches: [{{headers: [{{name: a, value: b}}]}}]}}\n    objectRef: [{{service: s}}]\noriginal:\n  kind: Thing\n  spec: {{}}\nexpected:\n- kind: Thing\n  {expected}\n"
        )
    };
    let files = || {
        Test::new()
            .file("s/example.com/Thing/trafficRouting.lua", script)
            .file("s/example.com/Thing/testdata/w5.yaml", &case(5, "metadata: {name: t}"))
            .file("s/example.com/Thing/testdata/w6.yaml", &case(6, "metadata: {name: t}"))
            // go test fails this one too: its empty result is not the spec expected.
            .file("s/example.com/Thing/testdata/w7.yaml", &case(5, "spec: {a: 1}"))
    };
    let note = "go test: it passes step 1, where the script returns no table: its harness reads that as an empty result (no spec, labels or annotations), which is what expected has; the controller fails such a step, and so does this tool";
    let out = files().args(["test", "s"]).run().status(1);
    assert_eq!(
        out.stdout,
        format!(
            "FAIL example.com/Thing w5.yaml (1 step)\n  {note}\n  step 1: script s/example.com/Thing/trafficRouting.lua: expect table output from Lua script, not string\n\
             FAIL example.com/Thing w6.yaml (1 step)\n  {note}\n  step 1: script s/example.com/Thing/trafficRouting.lua: expect table output from Lua script, not nil\n\
             FAIL example.com/Thing w7.yaml (1 step)\n  step 1: script s/example.com/Thing/trafficRouting.lua: expect table output from Lua script, not string\n\
             0 passed, 3 failed\n"
        )
    );
    let report = files().args(["test", "s", "-o", "json"]).run().status(1).json();
    let go_test: Vec<&serde_json::Value> = report["cases"].as_array().unwrap().iter().map(|c| &c["goTest"]).collect();
    let note = note.strip_prefix("go test: ").unwrap();
    assert_eq!(
        go_test,
        [
            &json!({"runs": true, "note": note}),
            &json!({"runs": true, "note": note}),
            &json!({"runs": true, "note": null})
        ]
    );
}

#[test]
fn an_object_two_rollouts_route_is_warned_of_in_both_plans() {
    let other = partition(TWO_POD_STEPS).replace("metadata: {name: demo,", "metadata: {name: other,");
    let out = Test::new()
        .file("m/rollout.yaml", &partition(TWO_POD_STEPS))
        .file("m/other.yaml", &other)
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .args(["plan", "-f", "m"])
        .run()
        .success()
        .stdout_has("  warning: VirtualService shop/demo is also routed by Rollout shop/other: the controller reconciles each on its own")
        .stdout_has("  warning: VirtualService shop/demo is also routed by Rollout shop/demo: ");
    // Planned alone, nothing is said.
    let alone = Test::new()
        .file("m/rollout.yaml", &partition(TWO_POD_STEPS))
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .args(["plan", "-f", "m"])
        .run()
        .success();
    assert!(!alone.stdout.contains("also routed"), "{}", alone.stdout);
    assert!(out.stdout.contains("Rollout shop/other"), "{}", out.stdout);
}

#[test]
fn a_stored_original_left_from_an_earlier_release_is_warned_of() {
    let healthy = format!("{}status: {{phase: Healthy}}\n", partition(TWO_POD_STEPS));
    let leftover = VIRTUAL_SERVICE.replace(
        "metadata: {name: demo, namespace: shop}",
        "metadata:\n  name: demo\n  namespace: shop\n  annotations:\n    rollouts.kruise.io/original-spec-configuration: '{\"spec\":{\"hosts\":[\"old\"],\"http\":[{\"route\":[{\"destination\":{\"host\":\"demo\"}}]}]}}'",
    );
    Test::new()
        .file("m/rollout.yaml", &healthy)
        .file("m/deployment.yaml", &workload(4))
        .file("m/vs.yaml", &leftover)
        .args(["plan", "-f", "m", "--step", "1"])
        .run()
        .success()
        .stdout_has("  warning: VirtualService shop/demo holds a stored original (annotation rollouts.kruise.io/original-spec-configuration) that differs from it, although Rollout shop/demo has no release in progress: a leftover of an earlier release")
        .stdout_has("(`status` shows the object at a step), `restore` puts the original back; remove the annotation only if those changes are to stay")
        .stdout_has("-  - demo\n+  - old\n");
}

#[test]
fn a_blue_green_final_route_after_a_last_step_without_traffic_is_warned_of() {
    // The last step deletes the canary Service; the final route to the new version makes none.
    let rollout = partition("      - {replicas: 100%, traffic: 50%}\n      - {replicas: 100%}\n")
        .replace("    canary:\n", "    blueGreen:\n");
    Test::new()
        .file("m/rollout.yaml", &rollout)
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .args(["plan", "-f", "m", "--summary"])
        .run()
        .success()
        .stdout_has("warning: the last step has neither traffic nor matches, so the controller deletes the canary Service demo-canary there (as it restores the original routing), and its final route of all traffic to the new version does not make it again")
        .stdout_has("final (route all traffic to the new version)");
}
