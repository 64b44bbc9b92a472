//! Gateway API routing offline: `test` on HTTPRoute cases (`gateway.networking.k8s.io/HTTPRoute/testdata/`).

use crate::support::{Test, repo};
use serde_json::json;

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
        // The same warning of two steps is said once.
        .stdout_has("warning: steps 2, 3: spec.rules[3] sends the requests it matches only to store-canary (a match rule of an earlier step)")
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
fn a_misspelt_field_of_an_httproute_case_is_warned_of_at_its_line() {
    let case =
        std::fs::read_to_string(repo(CASE)).unwrap().replace("          traffic: \"20%\"", "          trafic: \"20%\"");
    let test = Test::new().file("cases/gateway.networking.k8s.io/HTTPRoute/testdata/case.yaml", &case);
    test.run_args(["test", "cases"]).status(1).stdout_has(
        "warning: cases/gateway.networking.k8s.io/HTTPRoute/testdata/case.yaml:24: unknown field \"spec.strategy.canary.steps[1].trafic\"",
    );
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
- {kind: HTTPRoute, spec: {weight: 10}}
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

/// On the fake API server, with `support::cluster::store`: approve, status and restore.
mod cluster {
    use crate::support::Test;
    use crate::support::cluster::*;
    use fake_apiserver::FakeHandle;
    use serde_json::{Value, json};

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

    /// The refusal of a write that leaves Service `store` without a rule of the route.
    const STRANDS: &str = "nothing was written: these writes, as the controller would make them, leave a Service without a route:\n  HTTPRoute shop/store: no rule routes to Service store any more: the requests its rules matched no longer reach it (they go to a rule's other backends where it has any, else get no route), and restoring the route does not bring them back\nGive the route a rule to the Service that the write keeps, or pass --force to write anyway";

    /// `args` run twice: refused (exit 3, nothing written) as the write leaves Service `store`
    /// without a rule, then written with --force.
    fn refused_then_forced(server: &FakeHandle, args: &[&str]) -> crate::support::Output {
        server.clear_log();
        Test::new().kubeconfig(server).args(args).run().status(3).stderr_has(STRANDS);
        assert!(writes(server).is_empty(), "{:?}", writes(server));
        Test::new().kubeconfig(server).args(args).arg("--force").run().success()
    }

    const ORIGINAL: [&str; 2] = ["/ -> store 1", "/old -> "];

    #[test]
    fn a_step_routing_to_a_missing_canary_service_is_a_warning() {
        let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
        let warning = "warning: Service store-canary does not exist: the HTTPRoute's canary backendRef routes to it; the controller creates it at a step that routes, before it writes any routing (to every provider; not for a blue-green release's final route to the new version), but without the controller the canary traffic fails\n";
        let test = Test::new().kubeconfig(&server);
        let present = test.run_args(["plan", "store"]).success();
        assert!(!present.stdout.contains("does not exist"), "{}", present.stdout);
        server.delete_object("", "services", NAMESPACE, "store-canary");
        test.run_args(["plan", "store"]).success().stdout_has(warning);
        // Said once, naming the steps that route to it: not the end, whose restore removes the
        // backendRefs.
        let missing = test
            .run_args(["plan", "store", "--all-steps"])
            .success()
            .stdout_has(&warning.replace("warning: ", "warning: steps 1, 2, 3: "));
        assert_eq!(missing.stdout.matches("does not exist").count(), 1, "{}", missing.stdout);
        let json = test.run_args(["plan", "store", "--all-steps", "-o", "json"]).success().json();
        let each_step: Vec<bool> = json["plans"][0]["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|stage| stage["objects"][0]["warnings"].to_string().contains("does not exist"))
            .collect();
        assert_eq!(each_step, [true, true, true, false], "the JSON form keeps each step's own: {json}");
    }

    #[test]
    fn approve_refuses_a_write_the_httproute_crd_refuses() {
        // The API server would refuse it (422), the step stuck; approve writes nothing instead.
        let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
        let mut stored = route(&server);
        stored["spec"]["rules"][0]["filters"] = json!([{"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}]);
        server.put_object(stored);
        let mut rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "store").unwrap();
        rollout["spec"]["strategy"]["canary"]["steps"][0]["matches"] =
            json!([{"headers": [{"name": "a", "value": "1"}]}, {"headers": [{"name": "b", "value": "2"}]}]);
        server.put_object(rollout);
        server.clear_log();
        Test::new().kubeconfig(&server).args(["approve", "store", "--yes"]).run().status(3).stderr_has(
            "error: nothing was written: HTTPRoute shop/store as the controller writes it breaks the HTTPRoute CRD's rules (gateway-api v0.8 to v1): spec.rules[2].filters[0]: with path.replacePrefixMatch (URLRewrite), exactly one PathPrefix match must be specified, and the rule has 2 matches",
        );
        assert!(writes(&server).is_empty(), "{:?}", writes(&server));
    }

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
            // An HTTPRoute has no stored original: the controller rewrites its rules again.
            .stderr_has("Rollout store is in a release (step 3/4 StepReady): at the next step it routes, the controller rewrites the rules of HTTPRoute store again from those it has then\n")
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

    #[test]
    fn restore_leaves_a_route_no_release_touched_and_says_what_the_controller_would_still_delete() {
        // Before any release (the Rollout has no status) and in one that has not routed yet.
        for status in [
            json!(null),
            json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepUpgrade"}}),
        ] {
            let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
            let mut rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "store").unwrap();
            rollout["status"] = status.clone();
            server.put_object(rollout);
            Test::new()
                .kubeconfig(&server)
                .args(["status", "store"])
                .run()
                .success()
                .stdout_has("HTTPRoute shop/store  original\n");
            server.clear_log();
            Test::new()
                .kubeconfig(&server)
                .args(["restore", "store", "--yes"])
                .run()
                .success()
                .stderr_has("HTTPRoute shop/store: already restored, nothing to write: it has no backendRef to the canary Service store-canary. The controller's own restore, at a step without traffic or at the end of a release, would still do this:\n  spec.rules[1] has no backendRefs (a redirect, for example): the controller deletes it when it restores the route");
            assert!(writes(&server).is_empty(), "{status}: {:?}", writes(&server));
            assert_eq!(rules(&server), ORIGINAL, "the redirect stays");
        }
    }

    #[test]
    fn restore_ref_of_an_httproute_is_refused_and_says_what_restores_it() {
        // An online trial: it wrote nothing and exited 0, so `restore --ref … && echo restored`
        // passed while the canary still got traffic.
        let server = store(2, "StepPaused", &["v1", "v1beta1"]).start();
        approve(&server);
        let routed = rules(&server);
        server.clear_log();
        Test::new()
            .kubeconfig(&server)
            .args(["restore", "--ref", "HTTPRoute.gateway.networking.k8s.io/store", "--yes"])
            .run()
            .status(3)
            .stderr_has("error: nothing was written: --ref HTTPRoute.gateway.networking.k8s.io/store: an HTTPRoute keeps no stored original to put back; restore it with the Rollout that routes it (`restore ROLLOUT`)");
        assert!(writes(&server).is_empty(), "{:?}", writes(&server));
        assert!(claim_writes(&server).is_empty(), "nothing claimed");
        assert_eq!(rules(&server), routed);
    }

    /// Rollout `store` with `disableGenerateCanaryService` at `step`, and a route whose only rule
    /// goes to Service `store`.
    fn same_service(step: i64, phase: &str, versions: &[&str]) -> FakeHandle {
        let mut rollout = store_rollout(step, "StepPaused");
        rollout["spec"]["strategy"]["canary"]["disableGenerateCanaryService"] = json!(true);
        rollout["status"]["phase"] = json!(phase);
        let mut route = http_route(versions[0]);
        route["spec"]["rules"].as_array_mut().unwrap().truncate(1);
        let mut builder = fake_apiserver::FakeApiServer::builder()
            .kruise_and_istio()
            .resource(fake_apiserver::leases())
            .resource(fake_apiserver::deployments());
        for version in versions {
            builder = builder.resource(fake_apiserver::httproutes(version));
        }
        builder.object(rollout).object(route).start()
    }

    #[test]
    fn following_watches_the_route_at_the_version_it_was_read() {
        // Served at v1 only: the route is read, placed and watched there, not at the v1beta1
        // the Rollout's routing names.
        let server = same_service(1, "Progressing", &["v1"]);
        assert_routes_watched_at_v1(&server);
    }

    #[test]
    fn following_watches_a_missing_route_at_the_version_the_server_serves() {
        // Missing, the route cannot be placed, and the routing names v1beta1, which this
        // server does not serve: the route is watched at v1 all the same, so that its making is
        // seen at once.
        let server = same_service(1, "Progressing", &["v1"]);
        server.delete_object("gateway.networking.k8s.io", "httproutes", NAMESPACE, "store").unwrap();
        assert_routes_watched_at_v1(&server);
    }

    /// `status store -w` for 3s watches the HTTPRoutes of namespace shop at v1.
    fn assert_routes_watched_at_v1(server: &FakeHandle) {
        Test::new().kubeconfig(server).args(["status", "store", "-w", "--timeout", "3s"]).run().status(1);
        let watched: Vec<String> = server
            .requests()
            .into_iter()
            .filter(|r| r.query_params.iter().any(|(k, v)| k == "watch" && v == "true"))
            .map(|r| r.path)
            .collect();
        assert!(
            watched.iter().any(|p| p == "/apis/gateway.networking.k8s.io/v1/namespaces/shop/httproutes"),
            "{watched:?}"
        );
    }

    #[test]
    fn with_canary_equal_to_stable_a_restore_that_leaves_no_rule_lands_on_the_crds_default_rule() {
        let server = same_service(3, "Progressing", &["v1", "v1beta1"]);
        let status = |server: &FakeHandle| Test::new().kubeconfig(server).args(["status", "store"]).run().success();
        approve(&server)
            .stdout_has("weight mode: store 30 (canary and stable are the same Service, so traffic is not split)");
        assert_eq!(rules(&server), ["/ -> store 30"]);
        // The route shows no canary backendRef, but step 3 leaves it as it is.
        status(&server).stdout_has("HTTPRoute shop/store  at step 3\n");
        let out = refused_then_forced(&server, &["restore", "store", "--yes"])
            .stdout_has("HTTPRoute shop/store: the controller's restore of its rules: every backendRef to Service store removed (canary and stable Service are one: disableGenerateCanaryService)")
            .stdout_has("+  - matches:\n")
            .stdout_has("warning: spec.rules[0] is deleted: canary and stable Service are both store (disableGenerateCanaryService)")
            .stdout_has("warning: no rule is left, and the API server then stores the HTTPRoute CRD's default: one rule for every path (PathPrefix /) without backendRefs, so every request to HTTPRoute shop/store fails (it has no backend); the controller's restore never completes on such a route")
            .stdout_has("Give the route a rule with a backendRef to a Service other than store, which the restore keeps")
            .stdout_has("HTTPRoute shop/store restored (backup ");
        assert!(!out.stderr.contains("webhook"), "{}", out.stderr);
        // What the API server stores: the CRD's default, as planned.
        assert_eq!(rules(&server), ["/ -> "]);
        // Again: the controller would write again and change nothing; this restore writes nothing.
        server.clear_log();
        Test::new()
            .kubeconfig(&server)
            .args(["restore", "store", "--yes"])
            .run()
            .success()
            .stderr_has("HTTPRoute shop/store: already restored, nothing to write: the controller's restore writes nothing to it. The controller's own restore, at a step without traffic or at the end of a release, would still do this:")
            .stderr_has("  no rule is left, and the API server then stores");
        assert!(writes(&server).is_empty(), "{:?}", writes(&server));
    }

    #[test]
    fn with_canary_equal_to_stable_a_match_step_that_drops_the_only_rule_lands_on_the_crds_default_rule() {
        let server = same_service(1, "Progressing", &["v1", "v1beta1"]);
        refused_then_forced(&server, &["approve", "store", "--yes"])
            .stdout_has("warning: canary and stable Service are both store (disableGenerateCanaryService): a match step drops every rule that routes to store (spec.rules[0])")
            .stdout_has("warning: no rule is left, and the API server then stores the HTTPRoute CRD's default")
            .stdout_has("HTTPRoute shop/store updated (backup ");
        assert_eq!(rules(&server), ["/ -> "]);
        assert_eq!(rollout_of(&server)["currentStepState"], "StepReady");
    }

    #[test]
    fn with_canary_equal_to_stable_restore_leaves_the_route_while_no_release_is_in_progress() {
        let server = same_service(3, "Healthy", &["v1", "v1beta1"]);
        server.clear_log();
        Test::new()
            .kubeconfig(&server)
            .args(["restore", "store", "--yes"])
            .run()
            .success()
            .stderr_has("HTTPRoute shop/store: already restored, nothing to write: canary and stable Service are both store (disableGenerateCanaryService), so its backendRefs cannot show a release, and its Rollout has none in progress. The controller's own restore")
            .stderr_has("  spec.rules[0] is deleted: canary and stable Service are both store");
        assert!(writes(&server).is_empty(), "{:?}", writes(&server));
        assert_eq!(rules(&server), ["/ -> store 1"]);
        Test::new()
            .kubeconfig(&server)
            .args(["status", "store"])
            .run()
            .success()
            .stdout_has("HTTPRoute shop/store  original\n");
    }

    /// The release of Rollout `store` is over (phase Healthy), wherever its routing was left.
    fn release_over(server: &FakeHandle) {
        let mut rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "store").unwrap();
        rollout["status"] = json!({"phase": "Healthy"});
        server.put_object(rollout);
    }

    #[test]
    fn a_route_left_routed_after_the_release_is_noted_but_not_one_whose_rules_a_match_step_dropped() {
        let run = |server: &FakeHandle, args: &[&str]| Test::new().kubeconfig(server).args(args).run().success();
        // Left at step 1: its header rule still sends those requests to the canary.
        let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
        approve(&server);
        release_over(&server);
        let note = "the release is over (phase Healthy), but HTTPRoute shop/store still routes as step 1: the controller leaves it so until the next release; `kubectl rollout-lua restore store -n shop` puts the routing before the release back (it runs the controller's restore of its rules)";
        run(&server, &["status", "store"])
            .stdout_has(&format!("HTTPRoute shop/store  at step 1\n      note: {note}\n"));
        run(&server, &["plan", "store"])
            .stdout_has(&format!("  not in a release: showing what step 1 would do\n  {note}\n"));

        // A weight step, then a match step: the weighted rule is dropped, and no rule to the
        // stable Service is left to make a canary rule from.
        let mut rollout = store_rollout(1, "StepPaused");
        rollout["spec"]["strategy"]["canary"]["steps"] = json!([
            {"replicas": 1, "traffic": "30%"},
            {"replicas": 2, "matches": [{"headers": [{"type": "Exact", "name": "x-canary", "value": "true"}]}]},
            {"replicas": "100%"}
        ]);
        let server = fake_apiserver::FakeApiServer::builder()
            .kruise_and_istio()
            .resource(fake_apiserver::leases())
            .resource(fake_apiserver::deployments())
            .resource(fake_apiserver::httproutes("v1"))
            .resource(fake_apiserver::httproutes("v1beta1"))
            .object(rollout)
            .object(http_route("v1"))
            .start();
        approve(&server);
        next_step(&server, 2);
        refused_then_forced(&server, &["approve", "store", "--yes"])
            .stdout_has("warning: spec.rules[0] is dropped: it holds store-canary next to other backends")
            .stdout_has("warning: no rule of HTTPRoute shop/store routes to store after this step: every rule that did (spec.rules[0]) holds store-canary and is dropped, and no canary rule is made, so a request no rule left matches is served by neither store nor store-canary through this route");
        assert_eq!(rules(&server), ["/old -> "]);
        // That is how the release leaves it: no sign of a release, nothing for restore to do,
        // and nothing more to say.
        release_over(&server);
        let out = run(&server, &["status", "store"]).stdout_has("HTTPRoute shop/store  at step 1, step 2\n");
        assert!(!out.stdout.contains("note:"), "{}", out.stdout);
        let out = run(&server, &["plan", "store"]);
        assert!(!out.stdout.contains("still routes"), "{}", out.stdout);
    }

    #[test]
    fn custom_refs_and_a_gateway_are_written_in_the_controllers_order_and_a_failing_script_writes_nothing() {
        let mut rollout = rollout(2, "StepPaused");
        rollout["spec"]["strategy"]["canary"]["trafficRoutings"][0]["gateway"] = json!({"httpRouteName": "store"});
        let mut demo_route = http_route("v1");
        demo_route["spec"]["rules"][0]["backendRefs"][0]["name"] = json!("demo");
        let start = || {
            serving(rollout.clone())
                .resource(fake_apiserver::httproutes("v1"))
                .resource(fake_apiserver::httproutes("v1beta1"))
                .object(demo_route.clone())
                .start()
        };
        let server = start();
        approve_demo(&server).success();
        let kinds: Vec<String> =
            writes(&server).iter().map(|w| w.split('/').nth_back(1).unwrap_or_default().to_string()).collect();
        assert_eq!(
            kinds,
            // The approval is the status of Rollout demo: `…/rollouts/demo/status`.
            ["virtualservices", "virtualservices", "destinationrules", "destinationrules", "httproutes", "demo"],
            "{:?}",
            writes(&server)
        );
        let rules = route(&server)["spec"]["rules"][0]["backendRefs"].clone();
        assert_eq!((rules[0]["weight"].clone(), rules[1]["name"].clone()), (json!(50), json!("demo-canary")));
        // The custom refs' script fails: the controller's step stops there, and nothing is written.
        let server = start();
        approve_with_script(&server, "error('no route for you')").status(1).stderr_has("no route for you");
        assert!(writes(&server).is_empty(), "{:?}", writes(&server));
    }

    fn rollout_of(server: &FakeHandle) -> Value {
        let rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "store").expect("the Rollout");
        rollout["status"]["canaryStatus"].clone()
    }

    #[test]
    fn the_route_is_read_at_the_controllers_v1beta1_when_served_else_at_v1_with_a_warning_and_a_refusal() {
        let route_writes = |server: &FakeHandle| -> Vec<String> {
            let writes = server.writes().into_iter().filter(|r| r.path.contains("httproutes"));
            writes.map(|r| format!("{} {}", r.method, r.path)).collect()
        };
        for versions in [&["v1", "v1beta1"][..], &["v1beta1"]] {
            let server = store(1, "StepPaused", versions).start();
            approve(&server);
            let put = "PUT /apis/gateway.networking.k8s.io/v1beta1/namespaces/shop/httproutes/store";
            assert_eq!(route_writes(&server), [put]);
        }
        // A discovery trial: served at v1 only, the route was planned and written without a word,
        // though the controller, which reads it at v1beta1, can neither route nor restore it.
        let server = store(1, "StepPaused", &["v1"]).start();
        let warning = "HTTPRoute shop/store: the API server serves httproutes.gateway.networking.k8s.io at v1, not at v1beta1, the only version the controller reads and writes them at (it pins gateway-api v0.8.1): its reconcile fails, and it neither routes a step through the route nor restores it at the end; the plan shows what it would write were v1beta1 served";
        let test = Test::new().kubeconfig(&server);
        test.run_args(["plan", "store"]).success().stderr_has(&format!("warning: {warning}\n"));
        test.run_args(["status", "store"]).success().stderr_has(&format!("warning: {warning}\n"));
        test.run_args(["approve", "store", "--yes"]).status(3).stderr_has(&format!(
            "error: nothing was written: Rollout shop/store, step 1/4: {warning}; pass --force to write the step's routing all the same\n"
        ));
        assert!(route_writes(&server).is_empty());
        test.run_args(["approve", "store", "--yes", "--force"]).success();
        let put = "PUT /apis/gateway.networking.k8s.io/v1/namespaces/shop/httproutes/store";
        assert_eq!(route_writes(&server), [put]);
    }
}

#[test]
fn the_example_plans_offline_as_four_replacements_of_the_route() {
    Test::new()
        .args(["plan", "-f"])
        .arg(repo("examples/gateway-canary"))
        .run()
        .success()
        .stdout_has("step 1/4: replicas 1, matches [header x-canary=true]")
        .stdout_has("  HTTPRoute demo/store: the controller's Gateway API routing (no script), match mode")
        .stdout_has("--- HTTPRoute demo/store (current)\n+++ HTTPRoute demo/store (step 1/4)\n")
        .stdout_has("warning: spec.rules[2] has no backendRefs (a redirect, for example)")
        // Each step starts from the route the step before left.
        .stdout_has("--- HTTPRoute demo/store (after step 1/4)\n+++ HTTPRoute demo/store (step 2/4)\n")
        .stdout_has("weight mode: store 80, store-canary 20")
        .stdout_has("-      weight: 80\n+      weight: 50\n")
        .stdout_has("restore: store-canary removed, store weight 1, rules left without backendRefs deleted")
        .stdout_has("Plan: 4 to change, 0 already as planned");
    let json =
        Test::new().args(["plan", "-o", "json", "-f"]).arg(repo("examples/gateway-canary")).run().success().json();
    let stages = json["plans"][0]["stages"].as_array().unwrap();
    let actions: Vec<&str> = stages.iter().map(|s| s["objects"][0]["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["replace"; 4]);
    // What each step writes is what the HTTPRoute test case of the example expects, both as
    // the API server stores them (with the CRD's defaults).
    let case = std::fs::read_to_string(repo(CASE)).unwrap();
    let case = fake_apiserver::parse_objects(&case).unwrap().remove(0);
    for (stage, expected) in stages.iter().zip(case["expected"].as_array().unwrap()) {
        let mut expected = expected.clone();
        rollout_lua::for_tests::as_stored(&mut expected);
        assert_eq!(stage["objects"][0]["planned"]["spec"], expected["spec"], "{}", stage["label"]);
    }
    // The summary says what the restore step does to the route: the controller's restore, which
    // need not give back the route before the release.
    Test::new().args(["plan", "--summary", "-f"]).arg(repo("examples/gateway-canary")).run().success().stdout_has(
        "  step 4/4  HTTPRoute demo/store  replace  the controller's restore of its rules (no traffic, no matches)\n",
    );
}

#[test]
fn a_route_from_a_file_is_planned_as_the_api_server_stores_it() {
    // As written by hand: a rule without matches (every path, once stored) and refs without
    // weight. The controller reads it stored, so its canary rule has the header and the path.
    let route = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: store, namespace: demo}\nspec:\n  parentRefs: [{name: public}]\n  rules:\n  - backendRefs: [{kind: Service, name: store, port: 80}]\n";
    let rollout = "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollout\nmetadata: {name: store, namespace: demo}\nspec:\n  workloadRef: {apiVersion: apps/v1, kind: Deployment, name: store}\n  strategy:\n    canary:\n      enableExtraWorkloadForCanary: true\n      steps:\n      - replicas: 1\n        matches: [{headers: [{name: h, value: \"1\"}]}]\n      trafficRoutings: [{service: store, gateway: {httpRouteName: store}}]\n";
    let json = Test::new()
        .file("m/route.yaml", route)
        .file("m/rollout.yaml", rollout)
        .args(["plan", "-o", "json", "-f", "m"])
        .run()
        .success()
        .json();
    let every_path = json!({"path": {"type": "PathPrefix", "value": "/"}});
    assert_eq!(
        json["plans"][0]["stages"][0]["objects"][0]["planned"]["spec"]["rules"],
        json!([
            {"matches": [every_path], "backendRefs": [{"group": "", "kind": "Service", "name": "store", "port": 80, "weight": 1}]},
            {"matches": [{"path": {"type": "PathPrefix", "value": "/"}, "headers": [{"name": "h", "type": "Exact", "value": "1"}]}],
             "backendRefs": [{"group": "", "kind": "Service", "name": "store-canary", "port": 80, "weight": 1}]}
        ])
    );
}

#[test]
fn a_write_the_httproute_crd_refuses_is_warned_of() {
    // A helper's review: the canary rule of a prefix rewrite gets one match per step match,
    // which the CRD's CEL rule refuses; the plan showed an ordinary write.
    let route = ROUTE.replace(
        "  - matches: [{path: {type: PathPrefix, value: /}}]\n",
        "  - matches: [{path: {type: PathPrefix, value: /api}}]\n    filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]\n",
    );
    let steps =
        "[{replicas: 1, matches: [{headers: [{name: a, value: \"1\"}]}, {queryParams: [{name: q, value: \"1\"}]}]}]";
    Test::new()
        .file("m/route.yaml", &route)
        .file("m/rollout.yaml", &rollout_with_steps("{service: web, gateway: {httpRouteName: web}}", "", steps))
        .args(["plan", "-f", "m"])
        .run()
        .success()
        .stdout_has("warning: HTTPRoute shop/web as the controller writes it breaks the HTTPRoute CRD's rules (gateway-api v0.8 to v1): spec.rules[1].filters[0]: with path.replacePrefixMatch (URLRewrite), exactly one PathPrefix match must be specified, and the rule has 2 matches; the API server refuses the update, so the step never finishes (`--dry-run=server` asks the cluster's own CRD)\n");
    // A step after a refused one starts from the route as it was, not from the write that was
    // never stored (a helper's review: its own refusal went unsaid).
    let steps =
        format!("{}, {{replicas: 2, matches: [{{path: {{type: Exact, value: /x}}}}]}}]", steps.trim_end_matches(']'));
    let plan = Test::new()
        .file("m/route.yaml", &route)
        .file("m/rollout.yaml", &rollout_with_steps("{service: web, gateway: {httpRouteName: web}}", "", &steps))
        .args(["plan", "-f", "m"])
        .run()
        .success()
        .stdout_has("--- HTTPRoute shop/web (current)\n+++ HTTPRoute shop/web (step 2/2)\n")
        .stdout_has("and the rule has 1 match (not of type PathPrefix); the API server refuses the update");
    assert!(!plan.stdout.contains("(after step 1/2)"), "{}", plan.stdout);
}

const ROUTE: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: shop}
spec:
  rules:
  - matches: [{path: {type: PathPrefix, value: /}}]
    backendRefs: [{kind: Service, name: web, port: 80}]
"#;

const VIRTUAL_SERVICE: &str = r#"
apiVersion: networking.istio.io/v1beta1
kind: VirtualService
metadata: {name: web, namespace: shop}
spec:
  hosts: [web]
  http: [{route: [{destination: {host: web}}]}]
"#;

/// A Rollout routing through `routing` (YAML of one trafficRoutings entry), one 20% step.
fn rollout_with(routing: &str, canary: &str) -> String {
    rollout_with_steps(routing, canary, r#"[{replicas: 1, traffic: "20%"}]"#)
}

/// A Rollout routing through `routing`, with `steps` (a YAML flow list).
fn rollout_with_steps(routing: &str, canary: &str, steps: &str) -> String {
    format!(
        r#"
apiVersion: rollouts.kruise.io/v1beta1
kind: Rollout
metadata: {{name: web, namespace: shop}}
spec:
  workloadRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  strategy:
    canary:
      {canary}
      steps: {steps}
      trafficRoutings:
      - {routing}
"#
    )
}

#[test]
fn custom_refs_and_a_gateway_plan_in_the_controllers_order_and_the_first_error_stops() {
    let both = "{service: web, gateway: {httpRouteName: web}, customNetworkRefs: [{apiVersion: networking.istio.io/v1beta1, kind: VirtualService, name: web}]}";
    let test = Test::new()
        .file("m/rollout.yaml", &rollout_with(both, ""))
        .file("m/route.yaml", ROUTE)
        .file("m/vs.yaml", VIRTUAL_SERVICE)
        .file("fails.lua", "error('no route for you')");
    let out = test.run_args(["plan", "-f", "m"]).success();
    let (vs, route) =
        (out.stdout.find("VirtualService shop/web:").unwrap(), out.stdout.find("HTTPRoute shop/web:").unwrap());
    assert!(vs < route, "custom refs first, then the gateway: {}", out.stdout);
    assert!(out.stdout.contains("weight mode: web 80, web-canary 20"), "{}", out.stdout);
    // The custom refs' script fails: the plan stops there, as the controller's step does.
    test.run_args(["plan", "-f", "m", "--script", "VirtualService.networking.istio.io=fails.lua"])
        .status(1)
        .stderr_has("no route for you");
    // A missing route stops it too, after the custom refs planned.
    let test = Test::new().file("m/rollout.yaml", &rollout_with(both, "")).file("m/vs.yaml", VIRTUAL_SERVICE);
    test.run_args(["plan", "-f", "m"]).status(1).stderr_has(
        "Rollout shop/web routes through HTTPRoute shop/web, but there is no such object in namespace shop",
    );
}

#[test]
fn canary_equal_to_stable_is_planned_as_the_controller_does_with_a_warning() {
    let gateway = "{service: web, gateway: {httpRouteName: web}}";
    Test::new()
        .file("m/rollout.yaml", &rollout_with(gateway, "disableGenerateCanaryService: true"))
        .file("m/route.yaml", ROUTE)
        .args(["plan", "-f", "m"])
        .run()
        .success()
        .stdout_has("weight mode: web 20 (canary and stable are the same Service, so traffic is not split)")
        .stdout_has("+      weight: 20\n")
        .stdout_has("canary and stable Service are both web (disableGenerateCanaryService)");
    let traffic_routing = r#"
apiVersion: rollouts.kruise.io/v1alpha1
kind: TrafficRouting
metadata: {name: tr, namespace: shop}
spec:
  objectRef: [{service: web, gateway: {httpRouteName: web}}]
  strategy: {weight: 30}
"#;
    Test::new()
        .file("m/tr.yaml", traffic_routing)
        .file("m/route.yaml", ROUTE)
        .args(["plan", "-f", "m"])
        .run()
        .success()
        .stdout_has("TrafficRouting shop/tr")
        .stdout_has("TrafficRouting strategy: traffic 30% (canary = stable Service: not split)\n")
        .stdout_has("HTTPRoute shop/web: the controller's Gateway API routing (no script), weight mode: web 30 (canary and stable are the same Service, so traffic is not split)")
        .stdout_has("canary and stable Service are both web (a TrafficRouting routes to the stable Service itself)");
}

#[test]
fn with_canary_equal_to_stable_a_restore_that_takes_the_service_out_of_a_shared_rule_is_warned_of() {
    // An adversarial trial (#1): the restore removed the Service from a rule it shares with
    // another backend, and the plan said nothing.
    let shared = ROUTE.replace(
        "backendRefs: [{kind: Service, name: web, port: 80}]",
        "backendRefs: [{kind: Service, name: legacy, port: 80, weight: 50}, {kind: Service, name: web, port: 80, weight: 50}]",
    );
    let gateway = "{service: web, gateway: {httpRouteName: web}}";
    let steps = r#"[{replicas: 1, traffic: "20%"}, {replicas: "100%"}]"#;
    let out = Test::new()
        .file("m/rollout.yaml", &rollout_with_steps(gateway, "disableGenerateCanaryService: true", steps))
        .file("m/route.yaml", &shared)
        .args(["plan", "-f", "m"])
        .run()
        .success()
        .stdout_has("-    - group: \"\"\n-      kind: Service\n-      name: web\n")
        .stdout_has("  warning: spec.rules[0]: the restore removes web's backendRef (canary and stable Service are both web: disableGenerateCanaryService), while the rule's other backends keep theirs (legacy weight 50), so every request the rule matches goes to them and none to web\n")
        .stdout_has("  warning: no rule of HTTPRoute shop/web routes to web after this step: the restore removes its backendRef from every rule that had one (spec.rules[0]), as canary and stable Service are both web (disableGenerateCanaryService): ");
    // Said at the step that restores, not at the weight step before it.
    let (restore_step, warned) =
        (out.stdout.find("step 2/2").unwrap(), out.stdout.find("warning: spec.rules[0]: the restore").unwrap());
    assert!(restore_step < warned, "{}", out.stdout);
}

#[test]
fn a_step_line_says_where_canary_equal_to_stable_splits_no_traffic() {
    // An operator trial (F5): the step line said "canary 20 / stable 80" where the object
    // lines said the traffic is not split.
    let plan = |routing: &str, canary: &str| {
        let ingress = "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: web, namespace: shop}\nspec:\n  rules:\n  - http:\n      paths:\n      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}\n";
        Test::new()
            .file("m/rollout.yaml", &rollout_with(routing, canary))
            .file("m/route.yaml", ROUTE)
            .file("m/vs.yaml", VIRTUAL_SERVICE)
            .file("m/ingress.yaml", ingress)
            .args(["plan", "-f", "m"])
            .run()
            .success()
    };
    let same = "disableGenerateCanaryService: true";
    let gateway = "{service: web, gateway: {httpRouteName: web}}";
    plan(gateway, same).stdout_has("step 1/1: replicas 1, traffic 20% (canary = stable Service: not split), ");
    plan(gateway, "").stdout_has("step 1/1: replicas 1, traffic 20% (canary 20 / stable 80), ");
    // The nginx gateway balances over every pod of the Service too.
    let ingress = "{service: web, gateway: {httpRouteName: web}, ingress: {name: web}}";
    plan(ingress, same).stdout_has("step 1/1: replicas 1, traffic 20% (canary = stable Service: not split), ");
    // The built-in VirtualService script routes to the subset canary: split there only.
    let both = "{service: web, gateway: {httpRouteName: web}, customNetworkRefs: [{apiVersion: networking.istio.io/v1beta1, kind: VirtualService, name: web}]}";
    plan(both, same).stdout_has("step 1/1: replicas 1, traffic 20% (canary 20 / stable 80; canary = stable Service: not split through HTTPRoute shop/web), ");
}

mod record {
    use crate::support::Test;
    use crate::support::cluster::*;

    #[test]
    fn record_writes_an_httproute_case_that_test_and_plan_replay() {
        let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
        let test = Test::new().kubeconfig(&server);
        test.run_args(["record", "store", "--dir", "cases"])
            .success()
            .stderr_has("cases/gateway.networking.k8s.io/HTTPRoute/testdata/store-httproute-store.yaml");
        let case = std::fs::read_to_string(
            test.path("cases/gateway.networking.k8s.io/HTTPRoute/testdata/store-httproute-store.yaml"),
        )
        .unwrap();
        assert!(case.contains("with the controller's Gateway API routing (no script)"), "{case}");
        assert!(!case.contains("in the middle of a release"), "{case}");
        assert!(!test.path("cases/gateway.networking.k8s.io/HTTPRoute/trafficRouting.lua").exists(), "no script");
        test.run_args(["test", "cases"])
            .success()
            .stdout_has("ok   gateway.networking.k8s.io/HTTPRoute store-httproute-store.yaml (4 steps)")
            .stdout_has("1 passed, 0 failed");
        // The same case planned offline: the route after each step, as the cluster's plan.
        test.run_args(["record", "store", "--output-file", "store.yaml"]).success();
        let offline = test.run_args(["plan", "-f", "store.yaml", "--step", "3", "-o", "json"]).success().json();
        let live = test.run_args(["plan", "store", "--step", "1", "-o", "json"]).success().json();
        assert_eq!(offline["plans"][0]["stages"][0]["objects"][0]["action"], "replace", "{offline}");
        assert_eq!(
            live["plans"][0]["stages"][0]["objects"][0]["planned"]["spec"]["rules"][2]["backendRefs"][0]["name"],
            "store-canary"
        );

        // In the middle of the release the controller keeps no copy: original is its restore.
        test.run_args(["approve", "store", "--yes"]).success();
        test.run_args(["record", "store", "--dir", "mid"]).success();
        let case = std::fs::read_to_string(
            test.path("mid/gateway.networking.k8s.io/HTTPRoute/testdata/store-httproute-store.yaml"),
        )
        .unwrap();
        assert!(case.contains("is in the middle of a release, and the controller keeps no copy of it"), "{case}");
        assert!(
            !case[case.find("original:").unwrap()..case.find("expected:").unwrap()].contains("store-canary"),
            "{case}"
        );
        test.run_args(["test", "mid"]).success().stdout_has("1 passed, 0 failed");
    }
}
