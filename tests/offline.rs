//! `plan -f`, `test`, `eval` and `lua-obj` without a cluster, and their bad inputs.

use crate::support::{Test, repo};

pub(crate) const ROLLOUT: &str = r#"
apiVersion: rollouts.kruise.io/v1beta1
kind: Rollout
metadata:
  name: demo
  namespace: shop
spec:
  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: demo}
  strategy:
    canary:
      steps:
      - replicas: 1
        matches:
        - headers:
          - name: user-agent
            value: pc
      - replicas: 50%
        traffic: 50%
      - replicas: 100%
      trafficRoutings:
      - service: demo
        customNetworkRefs:
        - apiVersion: networking.istio.io/v1beta1
          kind: VirtualService
          name: demo
"#;

pub(crate) const VIRTUAL_SERVICE: &str = r#"
apiVersion: networking.istio.io/v1beta1
kind: VirtualService
metadata:
  name: demo
  namespace: shop
spec:
  hosts: ["demo"]
  http:
  - route:
    - destination:
        host: demo
"#;

pub(crate) fn manifests() -> Test {
    Test::new().file("m/rollout.yaml", ROLLOUT).file("m/vs.yaml", VIRTUAL_SERVICE)
}

#[test]
fn a_rollout_that_cannot_be_planned_hides_none_of_the_others() {
    // A scripting trial: `plan -f` printed nothing at all (`-o json` neither) when one Rollout
    // could not be planned, where against a cluster the others are shown.
    let nginx = std::fs::read_to_string(repo("examples/nginx-canary/rollout.yaml")).unwrap();
    let test = manifests().file("m/nginx.yaml", &nginx);
    let output = test.run_args(["plan", "-f", "m", "-o", "json"]).status(1);
    let output = output.stderr_has("error: planning m/nginx.yaml:30: Rollout demo/web, step 1/3: Ingress demo/web not found: the canary Ingress is built from it\n");
    let shown: serde_json::Value = serde_json::from_str(&output.stdout).expect("the plans made, as JSON");
    let owners: Vec<&str> = shown["plans"].as_array().unwrap().iter().map(|p| p["owner"].as_str().unwrap()).collect();
    assert_eq!(owners, ["Rollout shop/demo"]);
    // The text too, and a failure wins over --detailed-exitcode, as against a cluster.
    let output = test.run_args(["plan", "-f", "m", "--summary", "--detailed-exitcode"]).status(1);
    assert!(output.stdout.contains("Rollout shop/demo"), "{}", output.stdout);
    // Alone, it fails as it did.
    Test::new().file("n.yaml", &nginx).run_args(["plan", "-f", "n.yaml"]).status(1).stdout_is("");
}

#[test]
fn plan_shows_every_step_as_a_diff() {
    manifests()
        .args(["plan", "-f", "m"])
        .run()
        .success()
        .stdout_has("Rollout shop/demo\n")
        .stdout_has("step 1/3: replicas 1, matches [header user-agent=pc], pause until approved")
        .stdout_has("--- VirtualService shop/demo (current)\n+++ VirtualService shop/demo (step 1/3)\n")
        .stdout_has("+  - match:\n+    - headers:\n+        user-agent:\n+          exact: pc\n+    route:\n+    - destination:\n+        host: demo-canary\n")
        .stdout_has("step 2/3: replicas 50%, traffic 50% (canary 50 / stable 50)")
        .stdout_has("+      weight: 50\n+    - destination:\n+        host: demo-canary\n+      weight: 50\n")
        // Step 3 restores the original step 1 stored, from where step 2 left the object.
        .stdout_has("VirtualService shop/demo: restore the stored original (no traffic, no matches)\n--- VirtualService shop/demo (after step 2/3)\n+++ VirtualService shop/demo (step 3/3)\n")
        .stdout_has("-      weight: 50\n-    - destination:\n-        host: demo-canary\n-      weight: 50\n")
        .stdout_has("Plan: 3 to change, 0 already as planned (counted per step and object).");
}

#[test]
fn a_step_after_a_restore_starts_from_the_restored_object_and_stores_the_original_afresh() {
    // Steps: matches, 50%, replicas only (a restore), then 100% (routed: a canary workload).
    let rollout = ROLLOUT
        .replace("      steps:\n", "      enableExtraWorkloadForCanary: true\n      steps:\n")
        .replace("      - replicas: 100%\n", "      - replicas: 80%\n      - replicas: 100%\n        traffic: 100%\n");
    // A stored original written by hand: valid JSON, but not as Go writes it (`&` unescaped).
    let vs = VIRTUAL_SERVICE.replace(
        "  namespace: shop\n",
        "  namespace: shop\n  annotations:\n    rollouts.kruise.io/original-spec-configuration: '{\"spec\": {\"hosts\": [\"demo\"], \"http\": [{\"route\": [{\"destination\": {\"host\": \"demo\"}}]}]}, \"annotations\": {\"n\": \"a&b\"}}'\n",
    );
    Test::new()
        .file("m/rollout.yaml", &rollout)
        .file("m/vs.yaml", &vs)
        .args(["plan", "-f", "m", "--show-stored-original"])
        .run()
        .success()
        .stdout_has("--- VirtualService shop/demo (after step 2/4)\n+++ VirtualService shop/demo (step 3/4)\n")
        .stdout_has("--- VirtualService shop/demo (after step 3/4)\n+++ VirtualService shop/demo (step 4/4)\n")
        .stdout_has(r#"+    rollouts.kruise.io/original-spec-configuration: "{\"spec\":{\"hosts\":[\"demo\"],\"http\":[{\"route\":[{\"destination\":{\"host\":\"demo\"}}]}]},\"annotations\":{\"n\":\"a\\u0026b\"}}""#);
}

#[test]
fn a_step_with_request_headers_alone_is_said_to_apply_none_of_them() {
    // The controller finalises at a step without traffic or matches: the modifier never lands.
    let rollout = ROLLOUT.replace(
        "      - replicas: 100%\n",
        "      - replicas: 100%\n        requestHeaderModifier:\n          set: [{name: x-tag, value: blue}]\n",
    );
    Test::new()
        .file("m/rollout.yaml", &rollout)
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .args(["plan", "-f", "m", "--step", "3"])
        .run()
        .success()
        .stdout_has("step 3/3: replicas 100%, original routing (no traffic, no matches), request headers set x-tag=blue not applied (the controller routes no step without traffic or matches), no pause");
}

#[test]
fn an_object_without_its_apiversion_is_said_to_be_skipped_before_the_ref_to_it_fails() {
    let vs = VIRTUAL_SERVICE.replace("apiVersion: networking.istio.io/v1beta1\n", "");
    manifests()
        .file("m/vs.yaml", &vs)
        .args(["plan", "-f", "m"])
        .run()
        .status(1)
        .stderr_has("warning: skipped m/vs.yaml:2: VirtualService demo has no apiVersion, so it is not read as an object (kubectl refuses it)\n")
        .stderr_has("routes through VirtualService/demo (networking.istio.io/v1beta1), but there is no such object in namespace shop");
}

#[test]
fn where_the_controllers_virtualservice_script_would_fail_the_plan_warns() {
    let plan = |vs: &str, step: &str| {
        Test::new()
            .file("m/rollout.yaml", ROLLOUT)
            .file("m/vs.yaml", vs)
            .args(["plan", "-f", "m", "--step", step])
            .run()
            .success()
    };
    // A catch-all delegate after the route: the weight step (2) walks its route, which it has not.
    let delegating =
        VIRTUAL_SERVICE.replace("        host: demo\n", "        host: demo\n  - delegate: {name: demo-v1}\n");
    plan(&delegating, "2").stdout_has("warning: VirtualService/demo: the controller's own VirtualService script fails on this object at this step (spec.http[1] has neither a match nor a route (a delegate or a redirect, say)");
    // A TCP-only VirtualService at the match step (1): no spec.http to insert into.
    let tcp_only = VIRTUAL_SERVICE.replace("  http:\n", "  tcp:\n");
    plan(&tcp_only, "1").stdout_has("(it has no spec.http, which a match step inserts into: bad argument #1 to insert); this tool's built-in script gets past it, but a controller would stick at this step: give it http: [], or route this step by weight");
    // A host that is not the Service: the weight step changes nothing.
    let elsewhere = VIRTUAL_SERVICE.replace("        host: demo\n", "        host: demo-svc\n");
    plan(&elsewhere, "2").stdout_has("warning: VirtualService/demo: no rule without a match routes to Service demo (a destination host that is demo up to its first dot), so the built-in script changes no weight");
}

#[test]
fn a_traffic_routing_weight_of_minus_1_and_a_second_object_ref_are_warned_of_at_their_lines() {
    let traffic_routing = "apiVersion: rollouts.kruise.io/v1alpha1\nkind: TrafficRouting\nmetadata: {name: tr, namespace: shop}\nspec:\n  strategy:\n    weight: -1\n  objectRef:\n  - service: demo\n    customNetworkRefs:\n    - {apiVersion: networking.istio.io/v1beta1, kind: VirtualService, name: demo}\n  - service: api\n";
    Test::new()
        .file("m/tr.yaml", traffic_routing)
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .args(["plan", "-f", "m"])
        .run()
        .success()
        .stdout_has("warning: m/tr.yaml:6: weight -1 is the controller's value for no traffic")
        .stdout_has("warning: m/tr.yaml:11: the controller routes objectRef[0] alone (Service demo): the entry after it is never routed");
}

#[test]
fn whole_numbers_written_as_floats_are_integers_as_the_api_server_and_go_test_store_them() {
    // kubectl and go test print `1.0` as 1 before Go reads it: an integer step, and weight.
    let rollout = ROLLOUT.replacen("- replicas: 1\n", "- replicas: 1.0\n", 1);
    Test::new()
        .file("m/rollout.yaml", &rollout)
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .args(["plan", "-f", "m", "--step", "1"])
        .run()
        .success()
        .stdout_has("step 1/3: replicas 1, matches [header user-agent=pc]");
    let case = "trafficRouting:\n  apiVersion: rollouts.kruise.io/v1alpha1\n  kind: TrafficRouting\n  metadata: {name: tr}\n  spec:\n    strategy: {weight: 25.0}\n    objectRef: [{service: demo, customNetworkRefs: [{apiVersion: networking.istio.io/v1beta1, kind: VirtualService, name: demo}]}]\noriginal:\n  apiVersion: networking.istio.io/v1beta1\n  kind: VirtualService\n  spec: {hosts: [demo], http: [{route: [{destination: {host: demo}}]}]}\nexpected:\n- spec: {hosts: [demo], http: [{route: [{destination: {host: demo}, weight: 75}, {destination: {host: demo, subset: canary}, weight: 25}]}]}\n";
    Test::new()
        .file("networking.istio.io/VirtualService/testdata/tr.yaml", case)
        .file(
            "networking.istio.io/VirtualService/trafficRouting.lua",
            &std::fs::read_to_string(repo("lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua"))
                .unwrap(),
        )
        .args(["test", "networking.istio.io"])
        .run()
        .success();
}

#[test]
fn plan_output_is_machine_readable_and_byte_faithful() {
    let out = manifests().args(["plan", "-f", "m", "--step", "2", "-o", "json"]).run().success();
    let doc = out.json();
    let object = &doc["plans"][0]["stages"][0]["objects"][0];
    assert_eq!(object["action"], "replace");
    assert_eq!(object["changed"], true);
    assert_eq!(
        object["script"]["source"],
        "built-in lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua"
    );
    let planned = &object["planned"];
    assert_eq!(
        planned["spec"]["http"][0]["route"][1],
        serde_json::json!({"destination": {"host": "demo-canary"}, "weight": 50})
    );
    // The stored original is in Go's json.Marshal form, as the controller writes it.
    assert_eq!(
        planned["metadata"]["annotations"]["rollouts.kruise.io/original-spec-configuration"],
        r#"{"spec":{"hosts":["demo"],"http":[{"route":[{"destination":{"host":"demo"}}]}]}}"#
    );
    assert_eq!(doc["summary"], serde_json::json!({"objectPlans": 1, "changed": 1, "previewed": 0}));
    manifests()
        .args(["plan", "-f", "m", "--step", "1", "-o", "yaml"])
        .run()
        .success()
        .stdout_has("plans:\n- notes: []\n  owner: Rollout shop/demo\n");
}

#[test]
fn plan_starts_from_the_stored_original() {
    // A live object already at step 2: the plan of step 1 starts from the stored original, and
    // the replicas-only step 3 restores it (the annotation goes away).
    let stored = r#"{"spec":{"hosts":["demo"],"http":[{"route":[{"destination":{"host":"demo"}}]}]}}"#;
    let live = format!(
        "apiVersion: networking.istio.io/v1beta1\nkind: VirtualService\nmetadata:\n  name: demo\n  namespace: shop\n  annotations:\n    rollouts.kruise.io/original-spec-configuration: '{stored}'\nspec:\n  hosts: [demo]\n  http:\n  - route:\n    - destination: {{host: demo}}\n      weight: 50\n    - destination: {{host: demo-canary}}\n      weight: 50\n"
    );
    let test = Test::new().file("m/rollout.yaml", ROLLOUT).file("m/vs.yaml", &live);
    test.args(["plan", "-f", "m", "--step", "2", "--detailed-exitcode"])
        .run()
        .status(0)
        .stdout_has("already as planned");
    let test = Test::new().file("m/rollout.yaml", ROLLOUT).file("m/vs.yaml", &live);
    test.args(["plan", "-f", "m", "--step", "3"])
        .run()
        .success()
        .stdout_has("restore the stored original (no traffic, no matches)")
        .stdout_has("-  annotations:\n-    rollouts.kruise.io/original-spec-configuration:");
}

#[test]
fn detailed_exitcode_says_whether_anything_changes() {
    manifests().args(["plan", "-f", "m", "--detailed-exitcode"]).run().status(2);
    manifests().args(["plan", "-f", "m", "--step", "3", "--detailed-exitcode"]).run().status(0);
}

#[test]
fn plan_reads_stdin_and_json() {
    Test::new()
        .args(["plan", "-f", "-", "--step", "2"])
        .stdin(&format!("{ROLLOUT}\n---\n{VIRTUAL_SERVICE}"))
        .run()
        .success()
        .stdout_has("weight: 50");
    // Named as the documents read from it are.
    Test::new()
        .args(["plan", "-f", "-"])
        .stdin(VIRTUAL_SERVICE)
        .run()
        .status(1)
        .stderr_has("error: no Rollout or TrafficRouting in <stdin>: read 1 document from 1 file");
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        serde_json::from_str::<serde_json::Value>(&yaml_to_json(ROLLOUT)).unwrap(),
        serde_json::from_str::<serde_json::Value>(&yaml_to_json(VIRTUAL_SERVICE)).unwrap(),
    ]});
    Test::new()
        .file("all.json", &list.to_string())
        .args(["plan", "-f", "all.json", "--step", "2"])
        .run()
        .success()
        .stdout_has("weight: 50");
    // A stream of JSON objects, as `kubectl get … -o json | jq '.items[]'` writes it.
    let pretty = |yaml: &str| {
        serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(&yaml_to_json(yaml)).unwrap()).unwrap()
    };
    Test::new()
        .args(["plan", "-f", "-", "--step", "2"])
        .stdin(&format!("{}\n{}\n", pretty(ROLLOUT), pretty(VIRTUAL_SERVICE)))
        .run()
        .success()
        .stdout_has("weight: 50");
}

fn yaml_to_json(yaml: &str) -> String {
    let docs = rollout_lua::for_tests::parse_documents(yaml, "inline").unwrap();
    docs[0].value.to_string()
}

#[test]
fn script_overrides_and_lua_dir_come_before_built_ins() {
    let script = "obj.data.spec.hosts = {'overridden'} return obj.data";
    manifests()
        .file("mine.lua", script)
        .args(["plan", "-f", "m", "--step", "2", "--script", "VirtualService.networking.istio.io=mine.lua"])
        .run()
        .success()
        .stdout_has("script --script mine.lua (sha256 ")
        .stdout_has("+  - overridden");
    manifests()
        .file("dir/networking.istio.io/VirtualService/trafficRouting.lua", script)
        .args(["plan", "-f", "m", "--step", "2", "--lua-dir", "dir"])
        .run()
        .success()
        .stdout_has("script --lua-dir dir/networking.istio.io/VirtualService/trafficRouting.lua");
}

#[test]
fn configmap_scripts_are_used_for_kinds_without_a_built_in() {
    let rollout = ROLLOUT.replace(
        "apiVersion: networking.istio.io/v1beta1\n          kind: VirtualService",
        "apiVersion: gateway.example.com/v1\n          kind: Route",
    );
    let route =
        "apiVersion: gateway.example.com/v1\nkind: Route\nmetadata: {name: demo, namespace: shop}\nspec: {weight: 0}\n";
    let configmap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kruise-rollout-configuration, namespace: kruise-rollout}\ndata:\n  lua.traffic.routing.Route.gateway.example.com: |\n    obj.data.spec.weight = obj.canaryWeight\n    return obj.data\n";
    Test::new()
        .file("m/rollout.yaml", &rollout)
        .file("m/route.yaml", route)
        .file("m/cm.yaml", configmap)
        .args(["plan", "-f", "m", "--step", "2"])
        .run()
        .success()
        .stdout_has("script ConfigMap kruise-rollout/kruise-rollout-configuration key lua.traffic.routing.Route.gateway.example.com")
        .stdout_has("-  weight: 0\n+  weight: 50\n");
    Test::new()
        .file("m/rollout.yaml", &rollout)
        .file("m/route.yaml", route)
        .args(["plan", "-f", "m", "--step", "2"])
        .run()
        .status(1)
        .stderr_has("no Lua script for Route.gateway.example.com: none given with --script or --lua-dir, none built in, and the files have no ConfigMap kruise-rollout-configuration (the controller reads it from its namespace, kruise-rollout, --controller-namespace); add the script under the key lua.traffic.routing.Route.gateway.example.com");
}

#[test]
fn a_configmap_scripts_error_names_its_line_in_the_manifest() {
    let rollout = ROLLOUT.replace(
        "apiVersion: networking.istio.io/v1beta1\n          kind: VirtualService",
        "apiVersion: gateway.example.com/v1\n          kind: Route",
    );
    let route =
        "apiVersion: gateway.example.com/v1\nkind: Route\nmetadata: {name: demo, namespace: shop}\nspec: {weight: 0}\n";
    let key = "lua.traffic.routing.Route.gateway.example.com";
    let script = "kruise-rollout-configuration[lua.traffic.routing.Route.gateway.example.com]";
    let head = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kruise-rollout-configuration, namespace: kruise-rollout}\ndata:\n";
    let plan = |configmap: &str| {
        Test::new()
            .file("m/rollout.yaml", &rollout)
            .file("m/route.yaml", route)
            .file("m/cm.yaml", &format!("# scripts\n---\n{head}{configmap}"))
            .args(["plan", "-f", "m", "--step", "2"])
            .run()
            .status(1)
    };
    // A literal block: the script's line 3 is the file's line 9 (its key is on line 7).
    plan(&format!("  {key}: |\n    local spec = obj.data.spec\n    spec.x = nil + 1\n    return obj.data\n"))
        .stderr_has(&format!("script {script}:2 (m/cm.yaml:9): attempt to perform arithmetic on a nil value"));
    plan(&format!("  {key}: |\n    local spec = obj.data.spec\n\n    return (\n"))
        .stderr_has(&format!("script {script}:4 (m/cm.yaml:11): unexpected symbol near '<eof>'"));
    // A quoted string's lines are not the file's: its key is named.
    plan(&format!("  {key}: \"local spec = obj.data.spec\\nspec.x = nil + 1\\n\"\n"))
        .stderr_has(&format!("script {script}:2 (its key at m/cm.yaml:7): attempt to perform arithmetic"));
}

#[test]
fn a_configmap_script_for_a_kind_with_a_built_in_one_is_never_used_and_said_once() {
    // Two Rollouts, each with a VirtualService: the warning is about the ConfigMap, said once.
    let (other, other_vs) = (ROLLOUT.replace("demo", "other"), VIRTUAL_SERVICE.replace("demo", "other"));
    let configmap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kruise-rollout-configuration, namespace: kruise-rollout}\ndata:\n  lua.traffic.routing.VirtualService.networking.istio.io: |\n    return obj.data\n  lua.traffic.routing.ingress.nginx: |\n    return obj.annotations\n";
    let test = Test::new()
        .file("m/rollout.yaml", ROLLOUT)
        .file("m/other.yaml", &other)
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .file("m/other-vs.yaml", &other_vs)
        .file("m/cm.yaml", configmap);
    let warning = "warning: ConfigMap kruise-rollout/kruise-rollout-configuration key lua.traffic.routing.VirtualService.networking.istio.io is never used: the controller's built-in script for VirtualService comes first (lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua in its image; it reads the ConfigMap only for kinds without one), and this plan runs that one too; a script of your own for VirtualService reaches the controller only in its image, in place of that file (plan with it: --script VirtualService.networking.istio.io=FILE)\n";
    let out = test
        .run_args(["plan", "-f", "m", "--step", "2"])
        .success()
        .stderr_has(warning)
        .stdout_has("VirtualService shop/demo: script built-in lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua");
    assert_eq!(out.stderr.matches("is never used").count(), 1, "once, and not for the Ingress class: {}", out.stderr);
}

#[test]
fn built_in_scripts_pass_their_test_cases() {
    Test::new()
        .arg("test")
        .run()
        .success()
        .stdout_has("ok   networking.istio.io/VirtualService rollout_with_three_steps.yaml (3 steps)")
        .stdout_has(" passed, 0 failed\n");
}

#[test]
fn upstream_conformance_cases_are_among_the_built_in_test_cases() {
    // The controller's own cases (../shared/conformance/upstream/testdata) are kept, unchanged,
    // next to the built-in scripts; `test` runs them (see built_in_scripts_pass_their_test_cases).
    let upstream = repo("../shared/conformance/upstream/testdata/networking.istio.io");
    let Ok(kinds) = std::fs::read_dir(&upstream) else {
        return crate::support::skip(&format!("{} not found (the controller's own cases)", upstream.display()));
    };
    for kind in kinds {
        let kind = kind.unwrap().path();
        for case in std::fs::read_dir(&kind).unwrap() {
            let case = case.unwrap().path();
            let ours = repo("lua_configuration/networking.istio.io")
                .join(kind.file_name().unwrap())
                .join("testdata")
                .join(case.file_name().unwrap());
            assert_eq!(
                std::fs::read(&case).unwrap(),
                std::fs::read(&ours).unwrap_or_default(),
                "{} is not kept as {}",
                case.display(),
                ours.display()
            );
        }
    }
}

#[test]
fn test_reports_failures_with_a_diff_and_exit_1() {
    let case = std::fs::read_to_string(repo(
        "lua_configuration/networking.istio.io/VirtualService/testdata/traffic_routing_with_weight.yaml",
    ))
    .unwrap();
    let out = Test::new()
        .file("lua/networking.istio.io/VirtualService/trafficRouting.lua", "return obj.data")
        .file("lua/networking.istio.io/VirtualService/testdata/weight.yaml", &case)
        .args(["test", "lua"])
        .run()
        .status(1)
        .stdout_has("FAIL networking.istio.io/VirtualService weight.yaml (1 step)")
        .stdout_has("step 1: the result differs from expected (its entry 1)")
        .stdout_has("-      weight: 50\n")
        .stdout_has("0 passed, 1 failed\n");
    assert!(!out.stdout.contains("+      weight"), "{}", out.stdout);
    let json = Test::new()
        .file("lua/networking.istio.io/VirtualService/trafficRouting.lua", "return obj.data")
        .file("lua/networking.istio.io/VirtualService/testdata/weight.yaml", &case)
        .args(["test", "lua", "-o", "json"])
        .run()
        .status(1)
        .json();
    assert_eq!(json["failed"], 1);
    assert_eq!(json["cases"][0]["steps"][0]["status"], "fail");
    assert_eq!(json["cases"][0]["steps"][0]["step"], 1, "steps count from 1, as in plan and status");
}

#[test]
fn plan_of_a_case_whose_kind_has_no_script_but_the_one_beside_it_says_to_add_its_folder() {
    let case = "rollout:\n  apiVersion: rollouts.kruise.io/v1beta1\n  kind: Rollout\n  metadata: {name: web, namespace: demo}\n  spec:\n    workloadRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n    strategy:\n      canary:\n        steps:\n        - {replicas: 1, traffic: 10%}\n        trafficRoutings:\n        - service: web\n          customNetworkRefs:\n          - {apiVersion: example.com/v1, kind: Thing, name: web}\noriginal:\n  apiVersion: example.com/v1\n  kind: Thing\n  metadata: {name: web, namespace: demo}\n  spec: {weight: 100}\nexpected:\n- apiVersion: example.com/v1\n  kind: Thing\n  metadata: {name: web, namespace: demo}\n  spec: {weight: 90}\n";
    let test = || {
        Test::new()
            .file("lua/example.com/Thing/trafficRouting.lua", "obj.data.spec.weight = obj.stableWeight return obj.data")
            .file("lua/example.com/Thing/testdata/case.yaml", case)
    };
    test()
        .args(["plan", "-f", "lua/example.com/Thing/testdata/case.yaml"])
        .run()
        .status(1)
        .stderr_has("note: lua/example.com/Thing/trafficRouting.lua beside the test cases is the only script for its kind, and this plan does not run it: add --lua-dir lua to run it\nerror: ")
        .stderr_has("no Lua script for Thing.example.com");
    test()
        .args(["plan", "-f", "lua/example.com/Thing/testdata/case.yaml", "--lua-dir", "lua"])
        .run()
        .success()
        .stdout_has("+  weight: 90\n");
}

#[test]
fn test_flags_scripts_that_depend_on_pairs_order() {
    let case = "trafficRouting:\n  apiVersion: rollouts.kruise.io/v1alpha1\n  kind: TrafficRouting\n  metadata: {name: t}\n  spec:\n    strategy: {weight: 5}\n    objectRef: [{service: s}]\noriginal:\n  metadata:\n    labels: {a: '1', b: '2', c: '3'}\n  spec: {}\nexpected:\n- metadata:\n    labels: {a: '1', b: '2', c: '3'}\n  spec: {keys: [a, b, c]}\n";
    let script = "local keys = {} for k in pairs(obj.data.labels) do table.insert(keys, k) end obj.data.spec = {keys = keys} return obj.data";
    Test::new()
        .file("lua/example.com/Thing/trafficRouting.lua", script)
        .file("lua/example.com/Thing/testdata/case.yaml", case)
        .args(["test", "lua"])
        .run()
        .stdout_has("nondeterministic: the output changes with the order pairs() walks the input maps");
}

#[test]
fn eval_warns_of_a_script_of_ones_own_that_depends_on_pairs_order() {
    let obj = r#"{"data": {"spec": {}, "labels": {"a": "1", "b": "2", "c": "3"}}}"#;
    let eval = |script: &str, obj_file: &str, obj: &str| {
        Test::new().file("s.lua", script).file(obj_file, obj).args(["eval", "s.lua", "--obj", obj_file]).run().success()
    };
    let keys =
        "local keys = {} for k in pairs(obj.data.labels) do table.insert(keys, k) end return {spec = {keys = keys}}";
    let warning = "warning: script s.lua: the script's output depends on the order pairs() walks the input maps (or maps json.decode made), which is random in the controller";
    // The obj read as JSON text, and as YAML.
    eval(keys, "obj.json", obj).stderr_has(warning);
    eval(keys, "obj.yaml", "data: {spec: {}, labels: {a: '1', b: '2', c: '3'}}\n").stderr_has(warning);
    let sorted = keys.replace(" return", " table.sort(keys) return");
    let out = eval(&sorted, "obj.json", obj);
    assert!(!out.stderr.contains("depends on the order"), "{}", out.stderr);
}

#[test]
fn plan_warns_of_a_script_that_depends_on_pairs_order_and_says_whose() {
    let labelled =
        VIRTUAL_SERVICE.replace("  namespace: shop\n", "  namespace: shop\n  labels: {a: '1', b: '2', c: '3'}\n");
    let plan = |script: &str| {
        Test::new()
            .file("m/rollout.yaml", ROLLOUT)
            .file("m/vs.yaml", &labelled)
            .file("mine.lua", script)
            .args(["plan", "-f", "m", "--step", "2", "--script", "VirtualService.networking.istio.io=mine.lua"])
            .run()
            .success()
    };
    // The order of the object's labels decides the output: random in the controller.
    let out = plan(
        "local keys = {} for k in pairs(obj.data.labels) do table.insert(keys, k) end obj.data.spec.keys = keys return obj.data",
    );
    let out = out.stdout_has("VirtualService/demo: the script's output depends on the order pairs() walks the input maps (or maps json.decode made), which is random in the controller");
    assert!(!out.stdout.contains("walks tables it builds"), "{}", out.stdout);
    // The order of a table the script builds decides it: gopher-lua's insertion order, not ours.
    let own = "local t = {} for _, k in ipairs({'a', 'b', 'c', 'd', 'e', 'f'}) do t[k] = true end local keys = {} for k in pairs(t) do table.insert(keys, k) end obj.data.spec.keys = keys return obj.data";
    let out = plan(own).stdout_has("VirtualService/demo: the script's output depends on the order pairs() walks tables it builds; gopher-lua walks them in insertion order");
    assert!(!out.stdout.contains("walks the input maps"), "{}", out.stdout);
    // Sorted keys: no warning.
    let out = plan(
        "local keys = {} for k in pairs(obj.data.labels) do table.insert(keys, k) end table.sort(keys) obj.data.spec.keys = keys return obj.data",
    );
    assert!(!out.stdout.contains("depends on the order"), "{}", out.stdout);
}

#[test]
fn plan_warns_that_the_destination_rule_subset_needs_canary_pods_labelled_for_it() {
    const DESTINATION_RULE: &str = "apiVersion: networking.istio.io/v1beta1\nkind: DestinationRule\nmetadata: {name: demo, namespace: shop}\nspec:\n  host: demo\n  subsets: [{name: base, labels: {version: base}}]\n";
    let plan = |canary: &str| {
        let rollout = ROLLOUT.replace("      trafficRoutings:\n", &format!("{canary}      trafficRoutings:\n"))
            + "        - apiVersion: networking.istio.io/v1beta1\n          kind: DestinationRule\n          name: demo\n";
        Test::new()
            .file("m/rollout.yaml", &rollout)
            .file("m/vs.yaml", VIRTUAL_SERVICE)
            .file("m/dr.yaml", DESTINATION_RULE)
            .args(["plan", "-f", "m", "--summary"])
            .run()
            .success()
    };
    const WARNING: &str = "traffic goes to the DestinationRule subset canary, which selects pods labelled istio.service.tag=gray; canary pods get that label only from patchPodTemplateMetadata.labels with enableExtraWorkloadForCanary";
    plan("      disableGenerateCanaryService: true\n").stdout_has(&format!("  warning: {WARNING}\n"));
    let labelled = "      disableGenerateCanaryService: true\n      enableExtraWorkloadForCanary: true\n      patchPodTemplateMetadata: {labels: {istio.service.tag: gray}}\n";
    for quiet in ["", labelled] {
        let out = plan(quiet);
        assert!(!out.stdout.contains(WARNING), "{quiet:?}: {}", out.stdout);
    }
}

#[test]
fn plan_warns_that_the_subset_a_traffic_routing_routes_to_needs_canary_pods_labelled_for_it() {
    // A TrafficRouting's canary Service is the stable one: its header goes to the subset.
    let example = |file: &str| {
        let text = std::fs::read_to_string(repo(&format!("examples/full-link-canary/{file}"))).unwrap();
        (format!("m/{file}"), text)
    };
    let files = ["trafficrouting-mocka.yaml", "virtualservice-mocka.yaml", "destinationrule-mocka.yaml"].map(example);
    let (rollout_file, rollout) = example("rollout-mocka.yaml");
    let plan = |rollout: Option<&str>| {
        let mut test = Test::new();
        for (file, text) in
            files.iter().map(|(f, t)| (f.as_str(), t.as_str())).chain(rollout.map(|r| (rollout_file.as_str(), r)))
        {
            test = test.file(file, text);
        }
        test.args(["plan", "-f", "m"]).run().success()
    };
    const WARNING: &str = "  warning: TrafficRouting mocka-tr: traffic goes to the DestinationRule subset canary, which selects pods labelled istio.service.tag=gray; canary pods get that label only from patchPodTemplateMetadata.labels with enableExtraWorkloadForCanary (a TrafficRouting routes to the stable Service itself, so always to the subset)\n";
    // The example's Rollout labels its canary pods: nothing to say.
    let out = plan(Some(&rollout));
    assert!(!out.stdout.contains("istio.service.tag=gray"), "{}", out.stdout);
    let unlabelled =
        rollout.replace("      patchPodTemplateMetadata:\n        labels:\n          istio.service.tag: gray\n", "");
    assert_ne!(unlabelled, rollout);
    plan(Some(&unlabelled)).stdout_has(WARNING);
    // Partition style: the label is on no canary pod of its own.
    plan(Some(&rollout.replace("      enableExtraWorkloadForCanary: true\n", ""))).stdout_has(WARNING);
    // The TrafficRouting alone: the Rollouts that would label their pods are not known.
    let out = plan(None).stdout_has("TrafficRouting demo/mocka-tr\n  traffic goes to the DestinationRule subset canary, which selects pods labelled istio.service.tag=gray: each Rollout routed through this TrafficRouting must give its canary pods that label (patchPodTemplateMetadata.labels with enableExtraWorkloadForCanary), or that traffic finds no pods; no such Rollout is in the input to check\n");
    assert!(!out.stdout.contains("warning"), "{}", out.stdout);
}

#[test]
fn plan_warns_of_match_fields_a_v1alpha1_rollout_cannot_hold() {
    let rollout = r#"
apiVersion: rollouts.kruise.io/v1alpha1
kind: Rollout
metadata: {name: demo, namespace: shop}
spec:
  objectRef: {workloadRef: {apiVersion: apps/v1, kind: Deployment, name: demo}}
  strategy:
    canary:
      steps:
      - replicas: 1
        matches:
        - headers: [{name: user-agent, value: pc}]
          path: {value: /api}
          queryParams: [{name: q, value: "1"}]
      trafficRoutings:
      - service: demo
        customNetworkRefs: [{apiVersion: networking.istio.io/v1beta1, kind: VirtualService, name: demo}]
"#;
    let out = Test::new()
        .file("m/rollout.yaml", rollout)
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .args(["plan", "-f", "m"])
        .run()
        .success()
        .stdout_has("+    - headers:\n+        user-agent:\n+          exact: pc\n");
    // Each field once: it is not in the CRD either, which an operator trial (M2) saw warned of
    // a second time as an unknown field.
    let warnings: Vec<&str> = out.stdout.lines().filter(|l| l.contains("warning:")).collect();
    let dropped = |field: &str, line: usize| {
        format!(
            "  warning: m/rollout.yaml:{line}: spec.strategy.canary.steps[0].matches[0].{field}: not supported in this API version, whose matches have headers only; the API server drops it"
        )
    };
    assert_eq!(warnings, [dropped("path", 13), dropped("queryParams", 14)], "{}", out.stdout);
}

#[test]
fn eval_prints_canonical_json() {
    Test::new()
        .file("s.lua", "obj.data.spec.w = obj.canaryWeight / 2 obj.data.spec.e = {} return obj.data")
        .file("obj.yaml", "data:\n  spec: {hosts: ['<a&b>']}\n  labels: {z: '1', a: '2'}\ncanaryWeight: 100\n")
        .args(["eval", "s.lua", "--obj", "obj.yaml"])
        .run()
        .success()
        .stdout_is("{\"spec\":{\"e\":null,\"hosts\":[\"\\u003ca\\u0026b\\u003e\"],\"w\":50},\"labels\":{\"a\":\"2\",\"z\":\"1\"}}\n");
}

#[test]
fn eval_refuses_a_result_far_larger_than_the_memory_limit_at_once() {
    // 16 MiB stored once in Lua and referenced 400 times would be 6.4 GB as a result. Half a
    // million maps of one key passed as 32 MB, and took 440 MB as values (a regression: a plan
    // of ten steps holding them took 4 GB).
    let started = std::time::Instant::now();
    let too_large = [
        (
            "big.lua",
            "local s = string.rep('x', 16 * 1024 * 1024) local t = {} for i = 1, 400 do t[i] = s end return {spec = t}",
        ),
        ("maps.lua", "local t = {} for i = 1, 500000 do t[i] = {a = 1} end return {spec = t}"),
    ];
    for (script, code) in too_large {
        Test::new()
            .file(script, code)
            .file("obj.json", "{\"data\": {}}")
            // A debug build on a busy machine can take the default second to build the result.
            .args(["eval", script, "--obj", "obj.json", "--lua-timeout", "4s"])
            .run()
            .status(1)
            .stderr_has(&format!("script {script}: its result is too large: it would take more than the memory limit (64 MiB, --lua-memory), counting its strings and keys, 32 bytes for each value and 632 for each map"));
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[test]
fn a_lone_surrogates_escape_in_json_input_is_read_as_go_reads_it() {
    // A regression: refused as "lone leading surrogate in hex escape" (of a trailing one).
    Test::new()
        .file("id.lua", "return obj.data")
        .file("obj.json", r#"{"data": {"spec": {"a": "\udc00", "b": "\ud800x", "c": "\ud83d\ude00"}}}"#)
        .args(["eval", "id.lua", "--obj", "obj.json"])
        .run()
        .success()
        .stdout_is("{\"spec\":{\"a\":\"\u{FFFD}\",\"b\":\"\u{FFFD}x\",\"c\":\"😀\"}}\n");
}

#[test]
fn scripts_print_to_stderr_with_their_name() {
    Test::new()
        .file("s.lua", "print('weight', obj.canaryWeight) return obj.data")
        .file("obj.json", "{\"data\": {}, \"canaryWeight\": 20}")
        .args(["eval", "s.lua", "--obj", "obj.json"])
        .run()
        .success()
        .stdout_is("{}\n")
        .stderr_has("[s.lua] weight\t20\n");
    // Nothing a script prints drives the terminal: control characters, bidirectional-text
    // controls and bytes that are not UTF-8 are shown, not sent.
    let out = Test::new()
        .file("s.lua", "print('a\\27[2J', 'moc' .. string.char(0xE2, 0x80, 0xAE) .. 'x', string.char(0x9B) .. '1m') return obj.data")
        .file("obj.json", "{\"data\": {}}")
        .args(["eval", "s.lua", "--obj", "obj.json"])
        .run()
        .success();
    assert!(out.stderr.contains("[s.lua] a\\u{1b}[2J\tmoc\\u{202e}x\t\u{fffd}1m\n"), "{:?}", out.stderr);
}

#[test]
fn what_scripts_print_reaches_stderr_from_plan_and_from_a_failing_eval() {
    // The engine collects it; the command shows it, also when the script then fails.
    manifests()
        .file("mine.lua", "print('planning', obj.canaryWeight) return obj.data")
        .args(["plan", "-f", "m", "--step", "2", "--script", "VirtualService.networking.istio.io=mine.lua"])
        .run()
        .success()
        .stderr_has("[mine.lua] planning\t50\n");
    Test::new()
        .file("s.lua", "print('about to fail') error('boom')")
        .file("obj.json", "{\"data\": {}}")
        .args(["eval", "s.lua", "--obj", "obj.json"])
        .run()
        .status(1)
        .stdout_is("")
        .stderr_has("[s.lua] about to fail\nerror: script s.lua:1: boom");
}

#[test]
fn version_names_the_commit() {
    let out = Test::new().arg("--version").run().success();
    let (name, commit) = out.stdout.trim().split_once(" (").unwrap();
    assert_eq!(name, format!("kubectl-rollout_lua {}", env!("CARGO_PKG_VERSION")));
    let commit = commit.trim_end_matches(')');
    // Built from a git checkout (as here and in CI), the commit is known.
    let known = commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit());
    assert!(known || (commit == "unknown commit" && !repo(".git").exists()), "{commit}");
}

#[test]
fn cargo_install_installs_the_plugin_binary_alone() {
    // `cargo install --path .` installs every bin target: exactly the one kubectl finds.
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--no-deps", "--offline", "--format-version", "1", "--manifest-path"])
        .arg(repo("Cargo.toml"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let package = metadata["packages"].as_array().unwrap().iter().find(|p| p["name"] == "kubectl-rollout-lua").unwrap();
    let bins: Vec<&str> = package["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(bins, ["kubectl-rollout_lua"]);
}

#[test]
fn lua_obj_output_loads_in_lua() {
    let case = repo("lua_configuration/networking.istio.io/VirtualService/testdata/rollout_with_three_steps.yaml");
    let case = case.to_str().unwrap();
    let test = Test::new().args(["lua-obj", case]);
    let out = test.run().success();
    // Steps count from 1, as the controller's status counts them.
    assert!(out.stdout.contains("steps = {\n  step_1 = {\n"), "{}", out.stdout);
    let lua = mlua::Lua::new();
    lua.load(&out.stdout).exec().unwrap();
    let host: String =
        lua.load("return steps.step_3.canaryService .. ' ' .. steps.step_3.canaryWeight").eval().unwrap();
    assert_eq!(host, "svc-demo-canary 50");
    // --output-file writes the same file.
    test.run_args(["lua-obj", case, "--output-file", "objs.lua"]).success();
    assert_eq!(std::fs::read_to_string(test.path("objs.lua")).unwrap(), out.stdout);
    // -o is the format: a path there is refused, and the error says where files go.
    test.run_args(["lua-obj", case, "-o", "json.lua"])
        .status(1)
        .stderr_has("invalid value 'json.lua' for '--output <FORMAT>'")
        .stderr_has("tip: -o is the output format; files are written with --output-file FILE");
    assert!(!test.path("json.lua").exists());
}

/// The bundled VirtualService script under `lua/`, one of its cases beside it as `three.yaml`.
fn bundled_virtual_service_case() -> Test {
    let vs = "lua_configuration/networking.istio.io/VirtualService";
    let case = std::fs::read_to_string(repo(&format!("{vs}/testdata/rollout_with_three_steps.yaml"))).unwrap();
    let script = std::fs::read_to_string(repo(&format!("{vs}/trafficRouting.lua"))).unwrap();
    Test::new()
        .file("lua/networking.istio.io/VirtualService/trafficRouting.lua", &script)
        .file("lua/networking.istio.io/VirtualService/testdata/three.yaml", &case)
}

#[test]
fn test_runs_a_case_reached_twice_once() {
    let test = bundled_virtual_service_case();
    for twice in [["lua", "lua"], ["lua", "./lua/networking.istio.io/VirtualService/trafficRouting.lua"]] {
        let out = test.run_args(["test", twice[0], twice[1]]).success().stdout_has("\n1 passed, 0 failed\n");
        assert_eq!(out.stdout.matches("three.yaml").count(), 1, "{}", out.stdout);
    }
}

#[test]
fn lua_obj_brackets_a_key_named_goto() {
    // `goto` is a keyword from Lua 5.2 on: bare, the file would not load there.
    let case = "rollout:\n  apiVersion: rollouts.kruise.io/v1beta1\n  kind: Rollout\n  metadata: {name: demo}\n  spec:\n    strategy:\n      canary:\n        steps: [{replicas: 1, traffic: 10%}]\n        trafficRoutings: [{service: demo}]\noriginal:\n  kind: Thing\n  spec: {goto: 4}\nexpected: []\n";
    let out = Test::new().file("case.yaml", case).args(["lua-obj", "case.yaml"]).run().success();
    assert!(out.stdout.contains("[\"goto\"] = 4,\n"), "{}", out.stdout);
}

#[test]
fn test_of_a_case_or_a_testdata_folder_names_the_script_to_run_them_with() {
    let test = bundled_virtual_service_case();
    test.run_args(["test", "lua/networking.istio.io/VirtualService/testdata/three.yaml"]).status(1).stderr_is(
        "error: lua/networking.istio.io/VirtualService/testdata/three.yaml: test cases, not a script: test takes a script (.lua) or a folder of scripts with their testdata/; `kubectl rollout-lua test lua/networking.istio.io/VirtualService/trafficRouting.lua` runs the cases beside that script, these among them\n",
    );
    test.run_args(["test", "lua/networking.istio.io/VirtualService/testdata"])
        .status(1)
        .stderr_has("; a testdata folder's cases run with the script above it: `kubectl rollout-lua test lua/networking.istio.io/VirtualService`\n");
    test.run_args(["test", "lua/networking.istio.io/VirtualService"]).success().stdout_has("1 passed, 0 failed");
    // A script without cases beside it: where they are looked for.
    Test::new()
        .file("alone/mine.lua", "return obj.data")
        .run_args(["test", "alone/mine.lua"])
        .status(1)
        .stderr_has("under alone/mine.lua; a script's cases are read from alone/testdata, which has none\n");
    // A script that does not compile fails the case once, not each of its three steps.
    let out = test
        .file("lua/networking.istio.io/VirtualService/trafficRouting.lua", "return {")
        .run_args(["test", "lua"])
        .status(1);
    assert_eq!(out.stdout.matches("unexpected symbol near '<eof>'").count(), 1, "{}", out.stdout);
    out.stdout_has("FAIL networking.istio.io/VirtualService three.yaml\n  script lua/networking.istio.io/VirtualService/trafficRouting.lua:1: unexpected symbol near '<eof>'\n");
}

#[test]
fn lua_obj_says_where_the_controllers_obj_differs_from_the_harnesss() {
    let case = repo(
        "lua_configuration/networking.istio.io/DestinationRule/testdata/traffic_routing_existing_canary_subset.yaml",
    );
    let case = case.to_str().unwrap();
    let out = Test::new().args(["lua-obj", case, "-o", "json"]).run().success();
    assert_eq!(out.json()[0]["obj"]["matches"], serde_json::json!([]), "the harness's empty matches");
    out.stderr_has("note: these are the objs of the controller's test harness (go test, and `test`), where the controller's own differ: it gives the script matches = {} (an empty table, true to an `if`), where the controller gives none (nil); `kubectl rollout-lua plan -f ")
        .stderr_has(" --show-obj` prints the controller's\n");
    // A case read alike by both says nothing.
    let same = repo("lua_configuration/networking.istio.io/VirtualService/testdata/rollout_with_three_steps.yaml");
    Test::new().arg("lua-obj").arg(same).run().success().stderr_is("");
}

#[test]
fn lua_obj_as_json_feeds_eval() {
    let case = repo("lua_configuration/networking.istio.io/VirtualService/testdata/rollout_with_three_steps.yaml");
    let case = case.to_str().unwrap();
    let test = Test::new();
    let objs = test.run_args(["lua-obj", case, "-o", "json"]).success().json();
    assert_eq!(objs[2]["step"], 3);
    assert_eq!(objs[2]["obj"]["canaryWeight"], 50);
    let yaml = test.run_args(["lua-obj", case, "-o", "yaml"]).success().stdout;
    assert!(yaml.starts_with("- case: "), "{yaml}");
    let script = repo("lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua");
    let script = script.to_str().unwrap();
    // One entry is an obj for eval; several are refused with how to pick one.
    let one = serde_json::to_string(&objs[2]).unwrap();
    let result = Test::new().stdin(&one).args(["eval", script, "--obj", "-"]).run().success().json();
    assert_eq!(result["spec"]["http"][0]["route"][1]["weight"], 50, "{result}");
    Test::new()
        .stdin(&objs.to_string())
        .args(["eval", script, "--obj", "-"])
        .run()
        .status(1)
        .stderr_has("holds the objs of 3 steps or objects: pass one entry's obj");
}

mod bad_input {
    use super::*;

    #[track_caller]
    fn fails(test: Test, message: &str) {
        let out = test.run().status(1).stderr_has(message);
        assert!(out.stdout.is_empty(), "nothing on stdout on failure: {}", out.stdout);
    }

    #[test]
    fn malformed_yaml_names_file_and_line() {
        fails(
            Test::new().file("m/bad.yaml", "a: 1\n---\nkind: [x,\n  y: z\n").args(["plan", "-f", "m"]),
            "error: m/bad.yaml:3:7: unclosed bracket '['\n",
        );
    }

    #[test]
    fn rollout_without_traffic_routing_has_nothing_to_plan_and_stops_no_other() {
        // A release of pods in batches, beside a Rollout that routes.
        let alone = ROLLOUT.split("      trafficRoutings:").next().unwrap().replace("name: demo", "name: batches");
        manifests()
            .file("m/alone.yaml", &alone)
            .args(["plan", "-f", "m", "--detailed-exitcode"])
            .run()
            .status(2)
            .stdout_has("Rollout shop/batches\n  no traffic routing (no trafficRoutings, no rollouts.kruise.io/trafficrouting annotation): the controller routes no traffic for it, so there is nothing to plan\n")
            .stdout_has("Rollout shop/demo\n");
    }

    #[test]
    fn ref_without_an_object() {
        fails(
            Test::new().file("m/r.yaml", ROLLOUT).args(["plan", "-f", "m"]),
            "Rollout shop/demo routes through VirtualService/demo (networking.istio.io/v1beta1), but there is no such object in namespace shop",
        );
        // A manifest without a namespace is in the default one: said, as the likely cause.
        let without = VIRTUAL_SERVICE.replace("  namespace: shop\n", "");
        fails(
            Test::new().file("m/r.yaml", ROLLOUT).file("m/vs.yaml", &without).args(["plan", "-f", "m"]),
            "but there is no such object in namespace shop (one was read in namespace default: a manifest without metadata.namespace is put in -n's namespace, else in default)",
        );
    }

    #[test]
    fn a_missing_object_is_named_at_the_line_of_its_ref() {
        let refs = "        customNetworkRefs:\n        - apiVersion: networking.istio.io/v1beta1\n          kind: VirtualService\n          name: demo\n";
        let routed = |by: &str| ROLLOUT.replace(refs, by);
        let plan = |test: Test| test.args(["plan", "-f", "m"]);
        // The ref's line, not the Rollout's (line 2); the entry of the custom ref that is missing.
        fails(
            plan(Test::new().file("m/r.yaml", ROLLOUT)),
            "error: planning m/r.yaml:23: Rollout shop/demo routes through VirtualService/demo",
        );
        let second = format!(
            "{refs}        - apiVersion: networking.istio.io/v1beta1\n          kind: DestinationRule\n          name: demo\n"
        );
        fails(
            plan(manifests().file("m/rollout.yaml", &routed(&second))),
            "error: planning m/rollout.yaml:26: Rollout shop/demo routes through DestinationRule/demo",
        );
        fails(
            plan(Test::new().file("m/r.yaml", &routed("        ingress:\n          name: web\n"))),
            "error: planning m/r.yaml:23: Rollout shop/demo, step 1/3: Ingress shop/web not found",
        );
        fails(
            plan(Test::new().file("m/r.yaml", &routed("        gateway:\n          httpRouteName: web\n"))),
            "error: planning m/r.yaml:23: Rollout shop/demo routes through HTTPRoute shop/web, but there is no such object",
        );
        // JSON has lines too.
        let json = r#"{"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
 "metadata": {"name": "demo", "namespace": "shop"},
 "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "demo"},
  "strategy": {"canary": {"steps": [{"replicas": "50%", "traffic": "50%"}],
   "trafficRoutings": [{"service": "demo", "gateway":
    {"httpRouteName": "web"}}]}}}}
"#;
        fails(
            plan(Test::new().file("m/r.json", json)),
            "error: planning m/r.json:6: Rollout shop/demo routes through HTTPRoute shop/web",
        );
        // A TrafficRouting's ref is on a line of its own file, planned alone or for a Rollout.
        let traffic_routing = "apiVersion: rollouts.kruise.io/v1alpha1\nkind: TrafficRouting\nmetadata:\n  name: tr\n  namespace: shop\nspec:\n  strategy:\n    weight: 10\n  objectRef:\n  - service: demo\n    gateway:\n      httpRouteName: web\n";
        let why = "error: planning m/tr.yaml:12: TrafficRouting shop/tr routes through HTTPRoute shop/web";
        fails(plan(Test::new().file("m/tr.yaml", traffic_routing)), why);
        let annotated = ROLLOUT.replace(
            "  namespace: shop\n",
            "  namespace: shop\n  annotations:\n    rollouts.kruise.io/trafficrouting: tr\n",
        );
        fails(plan(manifests().file("m/rollout.yaml", &annotated).file("m/tr.yaml", traffic_routing)), why);
    }

    #[test]
    fn invalid_rollout_fields_name_the_object_and_field() {
        let rollout = ROLLOUT.replace("traffic: 50%", "traffic: 50");
        fails(
            manifests().file("m/rollout.yaml", &rollout).args(["plan", "-f", "m"]),
            "m/rollout.yaml:18: Rollout shop/demo: spec.strategy.canary.steps[1].traffic: must be a string, not 50",
        );
    }

    fn with_script(code: &str) -> Test {
        manifests().file("s.lua", code).args([
            "plan",
            "-f",
            "m",
            "--step",
            "2",
            "--script",
            "VirtualService.networking.istio.io=s.lua",
        ])
    }

    #[test]
    fn script_syntax_error() {
        fails(with_script("local x = \nreturn {"), "script s.lua:2:");
    }

    #[test]
    fn script_runtime_error() {
        fails(
            with_script("local a = 1\nlocal b = obj.nothing.here\nreturn obj.data"),
            "script s.lua:2: attempt to index field 'nothing' (a nil value)",
        );
    }

    #[test]
    fn script_timeout() {
        fails(
            with_script("while true do end").args(["--lua-timeout", "200ms"]),
            "script s.lua:1: timed out after 200ms",
        );
    }

    #[test]
    fn script_memory_bomb() {
        fails(
            // A time limit a loaded machine's debug build cannot reach before the memory limit.
            with_script("local t = {} for i = 1, 1e9 do t[i] = i end return t").args(["--lua-timeout", "60s"]),
            "script s.lua: ran out of memory (limit 64 MiB, --lua-memory)",
        );
    }

    #[test]
    fn script_non_table_return() {
        fails(with_script("return 42"), "script s.lua: expect table output from Lua script, not number");
    }

    #[test]
    fn script_mixed_and_sparse_tables() {
        fails(
            with_script("obj.data.spec = {1, a = 2} return obj.data"),
            "script s.lua: cannot encode mixed or invalid key types",
        );
        fails(
            with_script("obj.data.spec = {[1] = 1, [3] = 3} return obj.data"),
            "script s.lua: cannot encode sparse array",
        );
    }

    #[test]
    fn missing_files_and_unknown_steps() {
        fails(Test::new().args(["plan", "-f", "nowhere.yaml"]), "nowhere.yaml: No such file or directory");
        fails(manifests().args(["plan", "-f", "m", "--step", "9"]), "--step 9: Rollout demo has 3 steps");
        fails(manifests().args(["plan", "-f", "m", "--step", "0"]), "steps count from 1, as the Rollout's status does");
        fails(manifests().args(["plan", "demo2", "-f", "m"]), "no Rollout named demo2 in the input");
    }
}

#[test]
fn a_misspelt_field_that_leaves_a_required_one_missing_is_named() {
    // A regression: `stepz:` gave "steps: must list at least one step" without a word of stepz.
    let rollout = "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollout\nmetadata: {name: odd, namespace: shop}\nspec:\n  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: odd}\n  strategy:\n    canary:\n      stepz: [{traffic: 10%}]\n      trafficRoutings: [{service: s}]\n";
    Test::new().file("typo.yaml", rollout).args(["plan", "-f", "typo.yaml"]).run().status(1).stderr_has(
        "error: typo.yaml:7: Rollout shop/odd: spec.strategy.canary.steps: must list at least one step (typo.yaml:8: unknown field spec.strategy.canary.stepz: did you mean steps?)\n",
    );
}

/// A Rollout case for `return obj.data` with one weighted step: `expected` is the original.
const ONE_STEP_CASE: &str = "rollout:
  apiVersion: rollouts.kruise.io/v1beta1
  kind: Rollout
  metadata: {name: demo}
  spec:
    strategy:
      canary:
        steps:
        - traffic: 10%
        trafficRoutings: [{service: svc}]
original:
  spec: {a: 1}
expected:
- spec: {a: 1}
";

fn one_step_case(case: &str) -> Test {
    Test::new()
        .file("lua/example.com/Thing/trafficRouting.lua", "return obj.data")
        .file("lua/example.com/Thing/testdata/case.yaml", case)
}

#[test]
fn test_names_misspelt_keys_and_fields_of_a_case_with_their_lines() {
    let field = ONE_STEP_CASE.replace("- traffic: 10%", "- trafic: 10%");
    one_step_case(&field).args(["test", "lua"]).run().success().stdout_has(
        "ok   example.com/Thing case.yaml (1 step)\n  warning: lua/example.com/Thing/testdata/case.yaml:9: unknown field \"spec.strategy.canary.steps[0].trafic\": not in the CRD, so the API server drops it (misspelt?)\n",
    );
    // A Rollout that cannot be read fails the case, not its step 1, with the field that explains it.
    let unreadable = ONE_STEP_CASE.replace("    strategy:", "    stratgy:");
    one_step_case(&unreadable).args(["test", "lua"]).run().status(1).stdout_has(
        "FAIL example.com/Thing case.yaml\n  lua/example.com/Thing/testdata/case.yaml:5: rollout: spec.strategy must have exactly one of canary and blueGreen (lua/example.com/Thing/testdata/case.yaml:6: unknown field spec.stratgy: did you mean strategy?)\n0 passed, 1 failed\n",
    );
    let key = ONE_STEP_CASE.replace("original:", "orignal:");
    let json = one_step_case(&key).args(["test", "lua", "-o", "json"]).run().status(1).json();
    assert_eq!(
        json["cases"][0]["error"],
        "lua/example.com/Thing/testdata/case.yaml:1: no original object (lua/example.com/Thing/testdata/case.yaml:11: unknown key \"orignal\": a case has rollout or trafficRouting, original and expected (did you mean original?))"
    );
    assert_eq!(json["cases"][0]["steps"], serde_json::json!([]));
    let extra = format!("{ONE_STEP_CASE}- spec: {{a: 2}}\n");
    one_step_case(&extra).args(["test", "lua"]).run().success().stdout_has(
        "  warning: lua/example.com/Thing/testdata/case.yaml:15: expected has 2 entries but the case has 1 step: the entries past it are compared with nothing (go test ignores them too); a step removed?\n",
    );
    // A Rollout the API server refuses runs all the same, as go test runs it, with a warning
    // for each rule its steps break (a match's type outside the CRD's enum failed the case).
    let refused = ONE_STEP_CASE.replace(
        "        - traffic: 10%\n",
        "        - traffic: 150%\n          matches: [{headers: [{name: x, value: abc, type: Prefix}]}]\n",
    );
    one_step_case(&refused).args(["test", "lua"]).run().success().stdout_has(
        "ok   example.com/Thing case.yaml (1 step)\n  warning: lua/example.com/Thing/testdata/case.yaml:10: spec.strategy.canary.steps[0].matches[0].headers[0].type: must be one of Exact, RegularExpression, not \"Prefix\": the API server refuses such a Rollout (the CRD's schema), so the controller never runs it; the case runs all the same\n  warning: lua/example.com/Thing/testdata/case.yaml:9: spec.strategy.canary.steps[0].traffic: \"150%\" must be in (0%, 100%]: the API server refuses such a Rollout (the controller's webhook), so the controller never runs it; the case runs all the same\n",
    );
    // So does a TrafficRouting whose header match type is outside its CRD's enum.
    let traffic_routing = "trafficRouting:\n  apiVersion: rollouts.kruise.io/v1alpha1\n  kind: TrafficRouting\n  metadata: {name: tr}\n  spec:\n    strategy:\n      matches: [{headers: [{name: x, value: abc, type: Prefix}]}]\n    objectRef: [{service: svc}]\noriginal: {kind: Thing, spec: {a: 1}}\nexpected:\n- spec: {a: 1}\n";
    one_step_case(traffic_routing).args(["test", "lua"]).run().success().stdout_has(
        "ok   example.com/Thing case.yaml (1 step)\n  warning: lua/example.com/Thing/testdata/case.yaml:7: spec.strategy.matches[0].headers[0].type: must be one of Exact, RegularExpression, not \"Prefix\": the API server refuses such a TrafficRouting (the CRD's schema), so the controller never runs it; the case runs all the same\n",
    );
    // go test reads a file's first document alone: the second (failing here) is named, not run.
    let two = format!("{ONE_STEP_CASE}---\n{}", ONE_STEP_CASE.replace("- spec: {a: 1}", "- spec: {a: 2}"));
    one_step_case(&two).args(["test", "lua"]).run().success().stdout_has(
        "ok   example.com/Thing case.yaml (1 step)\n  warning: lua/example.com/Thing/testdata/case.yaml:16: a second YAML document, not run: a case file holds one case, the first, as the controller's go test reads it; put each case in a file of its own\n",
    );
}

#[test]
fn test_reads_a_field_named_in_another_case_as_go_test_does() {
    // Go's JSON decoding matches `Traffic` to traffic, and `Rollout` to rollout: the script
    // gets canaryWeight 10, not -1, and writes it.
    let case = ONE_STEP_CASE
        .replace("rollout:", "Rollout:")
        .replace("- traffic: 10%", "- Traffic: 10%")
        .replace("- spec: {a: 1}", "- spec: {a: 1, w: 10}");
    Test::new()
        .file("lua/example.com/Thing/trafficRouting.lua", "obj.data.spec.w = obj.canaryWeight return obj.data")
        .file("lua/example.com/Thing/testdata/case.yaml", &case)
        .args(["test", "lua"])
        .run()
        .success()
        .stdout_has("ok   example.com/Thing case.yaml (1 step)\n  warning: lua/example.com/Thing/testdata/case.yaml:1: Rollout: read as rollout, as go test reads it (Go's JSON decoding matches a field's name in any case)\n  warning: lua/example.com/Thing/testdata/case.yaml:9: Rollout.spec.strategy.canary.steps[0].Traffic: read as traffic, as go test reads it (Go's JSON decoding matches a field's name in any case); the API server matches names exactly, and drops it from an object applied so\n");
}

#[test]
fn test_reads_a_number_or_boolean_for_a_string_field_as_its_text_as_go_test_does() {
    // sigs.k8s.io/yaml gives a Go string field a YAML scalar's text: `value: yes` is "true" and
    // `value: 2` is "2" (a regression: the case was refused as not a string). plan -f of the
    // case reads it so too.
    let case = ONE_STEP_CASE
        .replace(
            "- traffic: 10%",
            "- traffic: 10%\n          matches: [{headers: [{name: a, value: yes}, {name: b, value: 2}]}]",
        )
        .replace("- spec: {a: 1}", "- spec: {a: 1, v: \"true,2\"}");
    let test = Test::new()
        .file(
            "lua/example.com/Thing/trafficRouting.lua",
            "local h = obj.matches[1].headers obj.data.spec.v = h[1].value .. ',' .. h[2].value return obj.data",
        )
        .file("lua/example.com/Thing/testdata/case.yaml", &case);
    test.run_args(["test", "lua"]).success().stdout_has("ok   example.com/Thing case.yaml (1 step)\n").stdout_has(
        "  warning: lua/example.com/Thing/testdata/case.yaml:10: rollout.spec.strategy.canary.steps[0].matches[0].headers[0].value: true read as \"true\", as go test reads it (sigs.k8s.io/yaml gives a string field a number's or boolean's text); the API server refuses it unquoted in an object applied so\n",
    );
    // A case plan -f takes: replicas, a ref, and a named original.
    let full = case
        .replace("- traffic: 10%", "- traffic: 10%\n          replicas: 1")
        .replace(
            "[{service: svc}]",
            "[{service: svc, customNetworkRefs: [{apiVersion: example.com/v1, kind: Thing, name: t}]}]",
        )
        .replace(
            "original:\n  spec:",
            "original:\n  apiVersion: example.com/v1\n  kind: Thing\n  metadata: {name: t}\n  spec:",
        );
    let test = test.file("full.yaml", &full);
    test.run_args([
        "plan",
        "-f",
        "full.yaml",
        "--script",
        "Thing.example.com=lua/example.com/Thing/trafficRouting.lua",
    ])
    .success()
    .stdout_has("+  v: true,2\n");
}

#[test]
fn test_reads_a_case_without_apiversion_or_name_and_its_numbers_as_go_test_does() {
    // go test decodes any rollout as a v1beta1 Rollout, and reads `-0.0` in expected as 0 (YAML
    // to JSON prints it `-0`, which unstructured reads as an int64): a script's 0 passes, its -0
    // (printed `-0`) fails.
    let case = |expected: &str| {
        format!(
            "rollout:\n  spec:\n    strategy:\n      canary:\n        steps:\n        - traffic: 10%\n        trafficRoutings: [{{service: svc}}]\noriginal: {{kind: Thing, spec: {{}}}}\nexpected:\n- {{kind: Thing, spec: {{w: {expected}}}}}\n"
        )
    };
    let run = |script: &str, expected: &str| {
        Test::new()
            .file("lua/example.com/Thing/trafficRouting.lua", script)
            .file("lua/example.com/Thing/testdata/case.yaml", &case(expected))
            .args(["test", "lua"])
            .run()
    };
    run("obj.data.spec.w = 0 return obj.data", "-0.0").success().stdout_has("ok   example.com/Thing case.yaml (1 step)\n  warning: lua/example.com/Thing/testdata/case.yaml:1: rollout has apiVersion null and kind null: go test reads neither, and runs it as a v1beta1 Rollout, as this tool does; plan -f and the API server need apiVersion rollouts.kruise.io/v1beta1 and kind Rollout\n");
    run("obj.data.spec.w = 0 * -1 return obj.data", "-0.0").status(1).stdout_has("    spec.w: expected 0, got -0\n");
}

#[test]
fn test_reads_the_subfolders_of_testdata_as_go_test_does() {
    // go test walks a testdata folder whole (filepath.Walk): a case below it that fails fails.
    let case = ONE_STEP_CASE
        .replace("  spec: {a: 1}", "  kind: Thing\n  spec: {a: 1}")
        .replace("- spec:", "- kind: Thing\n  spec:");
    let expected = case.rfind("{a: 1}").unwrap();
    let failing = format!("{}{{a: 2}}{}", &case[..expected], &case[expected + 6..]);
    let test = one_step_case(&case)
        .file("lua/example.com/Thing/testdata/sub/deeper/failing.yaml", &failing)
        .file("elsewhere/linked.yaml", &failing)
        // go test takes every path that contains trafficRouting.lua as a script.
        .file("lua/example.com/Thing/trafficRouting.lua.orig", "return obj.data.spec.gone.field");
    // A link to a folder is not followed, as filepath.Walk does not (nor read twice).
    std::os::unix::fs::symlink(test.path("elsewhere"), test.path("lua/example.com/Thing/testdata/sub/linked")).unwrap();
    let out = test.run_args(["test", "lua"]).status(1).stdout_has(
        "ok   example.com/Thing case.yaml (1 step)\nFAIL example.com/Thing sub/deeper/failing.yaml (1 step)\n  step 1: the result differs from expected (its entry 1)\n",
    )
    .stdout_has("1 passed, 1 failed\n")
    .stderr_has("warning: lua/example.com/Thing/trafficRouting.lua.orig: the controller's go test runs this file as a script too, on the cases of the testdata folder beside it (it takes every path that contains trafficRouting.lua); test does not: rename or remove it\n");
    assert!(!out.stdout.contains("linked"), "{}", out.stdout);
}

#[test]
fn test_says_why_an_empty_table_as_labels_fails_only_under_the_harness() {
    Test::new()
        .file("lua/example.com/Thing/trafficRouting.lua", "local d = obj.data\nd.labels = {}\nreturn d\n")
        .file("lua/example.com/Thing/testdata/case.yaml", ONE_STEP_CASE)
        .args(["test", "lua"])
        .run()
        .status(1)
        .stdout_has("  step 1: script lua/example.com/Thing/trafficRouting.lua: json: cannot unmarshal array into Go struct field Data.labels of type map[string]string (the test harness encodes an empty table as [], which is no map; the controller encodes it as null, and reads this result: return labels and annotations with entries, or nil)\n");
}

#[test]
fn test_fails_on_cases_no_script_is_next_to() {
    let ingress_case = std::fs::read_to_string(repo(
        "lua_configuration/trafficrouting_ingress/testdata/nginx/existing_canary_keeps_foreign_annotations.yaml",
    ))
    .unwrap();
    let test = one_step_case(ONE_STEP_CASE)
        .file("lua/example.com/Route/trafficrouting.lua", "return obj.data")
        .file("lua/example.com/Route/testdata/case.yaml", ONE_STEP_CASE)
        .file("lua/trafficrouting_ingress/testdata/nginx/case.yaml", &ingress_case);
    test.run_args(["test", "lua"])
        .status(1)
        .stdout_has("ok   example.com/Thing case.yaml (1 step)\n")
        .stdout_has("FAIL example.com/Route case.yaml\n  lua/example.com/Route/testdata: no script for its test cases, so none ran: looked for lua/example.com/Route/trafficRouting.lua (the folder has trafficrouting.lua: the name is case-sensitive)\n")
        .stdout_has("FAIL trafficrouting_ingress/nginx case.yaml\n  lua/trafficrouting_ingress/testdata/nginx: no script for its test cases, so none ran: looked for lua/trafficrouting_ingress/nginx.lua\n")
        .stdout_has("1 passed, 2 failed\n");
    test.run_args(["-v", "test", "lua"]).status(1).stdout_has("looked for lua/example.com/Route/trafficRouting.lua");
    let json = test.run_args(["test", "lua", "-o", "json"]).status(1).json();
    let case = &json["cases"][1];
    assert_eq!(
        (&case["case"], &case["passed"], &case["script"]),
        (&"lua/example.com/Route/testdata/case.yaml".into(), &false.into(), &serde_json::Value::Null)
    );
    assert!(case["error"].as_str().unwrap().contains("looked for lua/example.com/Route/trafficRouting.lua"), "{case}");
}
