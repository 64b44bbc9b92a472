//! `record`: live state as replayable test cases.

use crate::support::cluster::*;
use crate::support::{Test, repo};
use serde_json::Value;

#[test]
fn record_writes_a_case_per_gateway_object_with_every_step_planned() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    // Route step 2 first: the case must start from the stored original, not the live object.
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    server.clear_log();
    let out = test.run_args(["record", "rollout/demo"]).success();
    let documents = rollout_lua::for_tests::parse_documents(&out.stdout, "record").unwrap();
    assert_eq!(documents.len(), 2, "{}", out.stdout);
    let vs_case = &documents[0].value;
    assert_eq!(vs_case["rollout"]["metadata"]["name"], "demo");
    assert!(vs_case["rollout"].get("status").is_none(), "no status in the recorded Rollout");
    assert_eq!(vs_case["original"]["spec"], virtual_service()["spec"]);
    assert!(
        vs_case["original"]["metadata"].get("annotations").is_none(),
        "the original has no original-spec annotation"
    );
    let expected = vs_case["expected"].as_array().unwrap();
    assert_eq!(expected.len(), 3, "one per step");
    assert_eq!(
        expected[1]["spec"]["http"][0]["route"][1],
        serde_json::json!({"destination": {"host": "demo-canary"}, "weight": 50})
    );
    assert_eq!(documents[1].value["original"]["kind"], "DestinationRule");
    // Only the Rollout and its gateway objects are read.
    for request in server.requests() {
        assert!(
            request.method == "GET" && !request.path.contains("secrets") && !request.path.contains("configmaps"),
            "{} {}",
            request.method,
            request.path
        );
    }
}

#[test]
fn the_recorded_rollout_leaves_out_kubectl_applys_copy_of_it_and_its_objects_keep_theirs() {
    // A commands trial: the recorded Rollout kept last-applied-configuration, its whole spec
    // again, stale beside the case's own fields.
    let mut rollout = rollout(2, "StepPaused");
    let applied = serde_json::json!({"kubectl.kubernetes.io/last-applied-configuration": "{\"kind\":\"Rollout\"}"});
    rollout["metadata"]["annotations"] = applied.clone();
    let mut vs = virtual_service();
    vs["metadata"]["annotations"] = applied;
    let server = serving(rollout).object(vs).start();
    let test = Test::new().kubeconfig(&server);
    let out = test.run_args(["record", "demo"]).success();
    let documents = rollout_lua::for_tests::parse_documents(&out.stdout, "record").unwrap();
    let vs_case = &documents[0].value;
    assert!(vs_case["rollout"]["metadata"].get("annotations").is_none(), "{}", out.stdout);
    // The object's annotations are in the script's obj and the stored original: kept.
    assert_eq!(
        vs_case["original"]["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
        "{\"kind\":\"Rollout\"}"
    );
    test.run_args(["record", "demo", "--dir", "cases"]).success();
    test.run_args(["test", "cases"]).success().stdout_has("2 passed, 0 failed");
}

#[test]
fn plan_notes_a_recorded_script_it_does_not_run() {
    let server = shop(2, "StepPaused").start();
    let vs = "networking.istio.io/VirtualService";
    let script = std::fs::read_to_string(repo(&format!("lua_configuration/{vs}/trafficRouting.lua"))).unwrap();
    let test = Test::new().kubeconfig(&server).file("my.lua", &format!("-- mine\n{script}"));
    test.run_args(["record", "demo", "--dir", "rec", "--script", "VirtualService.networking.istio.io=my.lua"])
        .success();
    // The built-in script runs, not the one that made `expected`: said once, with the fix.
    let out = test.run_args(["plan", "-R", "-f", "rec", "--step", "2"]).success();
    assert!(
        out.stdout.contains(&format!("script built-in lua_configuration/{vs}/trafficRouting.lua")),
        "{}",
        out.stdout
    );
    out.stderr_is(&format!(
        "note: rec/{vs}/trafficRouting.lua beside the test cases is not the script this plan runs (built-in lua_configuration/{vs}/trafficRouting.lua): add --lua-dir rec to run it\n"
    ));
    let out = test.run_args(["plan", "-R", "-f", "rec", "--step", "2", "--lua-dir", "rec"]).success().stderr_is("");
    assert!(out.stdout.contains(&format!("script --lua-dir rec/{vs}/trafficRouting.lua")), "{}", out.stdout);
    // The DestinationRule's recorded script is the built-in one: nothing to say of it.
    assert!(test.path("rec/networking.istio.io/DestinationRule/trafficRouting.lua").is_file());
}

#[test]
fn test_refuses_a_recorded_file_and_says_how_to_replay_it() {
    let server = shop(2, "StepPaused").start();
    // The file is written into a script folder, next to that script's own testdata/, which
    // `test` ran it against as if it were the script.
    let vs = "networking.istio.io/VirtualService";
    let script = std::fs::read_to_string(repo(&format!("lua_configuration/{vs}/trafficRouting.lua"))).unwrap();
    let case =
        std::fs::read_to_string(repo(&format!("lua_configuration/{vs}/testdata/traffic_routing_with_weight.yaml")))
            .unwrap();
    let test = Test::new()
        .kubeconfig(&server)
        .file("vs/trafficRouting.lua", &script)
        .file("vs/testdata/weight.yaml", &case)
        .file("vs/notes.txt", "not a script\n");
    test.run_args(["record", "demo", "--output-file", "vs/demo-cases.yaml"]).success();
    test.run_args(["test", "vs/demo-cases.yaml"])
        .status(1)
        .stdout_is("")
        .stderr_is(
            "error: vs/demo-cases.yaml: test cases, not a script: test takes a script (.lua) or a folder of scripts with their testdata/; record with --dir DIR and run test DIR (plan -f vs/demo-cases.yaml plans these cases)\n",
        );
    // Nor is any other file run as a script.
    test.run_args(["test", "vs/notes.txt"]).status(1).stdout_is("").stderr_is(
        "error: vs/notes.txt: not a Lua script: test takes a script (.lua) or a folder of scripts with their testdata/\n",
    );
    // The script itself, and its folder, run its cases.
    for path in ["vs/trafficRouting.lua", "vs"] {
        test.run_args(["test", path]).success().stdout_has("1 passed, 0 failed");
    }
}

#[test]
fn a_recorded_tree_replays_with_test_and_plan() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["record", "demo", "--dir", "cases"])
        .success()
        .stderr_has("wrote cases/networking.istio.io/VirtualService/testdata/demo-virtualservice-demo.yaml");
    assert!(
        test.path("cases/networking.istio.io/VirtualService/trafficRouting.lua").is_file(),
        "the script is kept next to its cases"
    );
    test.run_args(["test", "cases"]).success().stdout_has("2 passed, 0 failed");
    // A changed script fails the replay, with a diff.
    std::fs::write(test.path("cases/networking.istio.io/VirtualService/trafficRouting.lua"), "return obj.data")
        .unwrap();
    test.run_args(["test", "cases"]).status(1).stdout_has("1 passed, 1 failed");
    // Recorded again, the changed script is kept, and said to be kept.
    test.run_args(["record", "demo", "--dir", "cases"]).success().stderr_has(
        "warning: kept cases/networking.istio.io/VirtualService/trafficRouting.lua, which is not the script that made the case's expected (built-in lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua): `test` checks the case against the kept one",
    );

    // The same live state, planned offline from one recorded file, gives the cluster's plan.
    test.run_args(["record", "demo", "--output-file", "demo.yaml", "-o", "yaml"]).success();
    // -o is the format: a path there is refused with where files go.
    test.run_args(["record", "demo", "-o", "yaml/"])
        .status(1)
        .stderr_has("tip: -o is the output format; files are written with --output-file FILE or --dir DIR");
    assert!(!test.path("yaml").exists());
    let offline = test.run_args(["plan", "-f", "demo.yaml", "--step", "2", "-o", "json"]).success().json();
    let live = test.run_args(["plan", "demo", "--step", "2", "-o", "json"]).success().json();
    let specs = |doc: &Value| {
        doc["plans"][0]["stages"][0]["objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["planned"]["spec"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(specs(&offline), specs(&live));
}

#[test]
fn a_recording_that_cannot_be_written_whole_keeps_the_file_it_would_replace() {
    // A regression (audit s24-safety #4): the file was emptied first, so a failed write (a full
    // disk) lost the previous recording and left part of the new one.
    let server = shop(2, "StepPaused").start();
    let case = "cases/networking.istio.io/VirtualService/testdata/demo-virtualservice-demo.yaml";
    let test = Test::new().kubeconfig(&server).file("cases.yaml", "an earlier recording\n");
    test.run_args(["record", "demo", "--dir", "cases"]).success();
    let earlier = std::fs::read_to_string(test.path(case)).unwrap();
    let mut big = virtual_service();
    big["spec"]["hosts"] = serde_json::json!(["demo", "x".repeat(256 << 10)]);
    server.put_object(big);
    test.run_on_a_full_disk(&["record", "demo", "--output-file", "cases.yaml"])
        .status(1)
        .stderr_has("error: writing cases.yaml: File too large");
    test.run_on_a_full_disk(&["record", "demo", "--dir", "cases"])
        .status(1)
        .stderr_has(&format!("error: writing {case}: File too large"));
    let read = |path: &str| std::fs::read_to_string(test.path(path)).unwrap();
    assert_eq!(read("cases.yaml"), "an earlier recording\n");
    assert_eq!(read(case), earlier);
    let names = |dir: &str| {
        let mut names: Vec<String> =
            std::fs::read_dir(test.path(dir)).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        names
    };
    assert_eq!(names("cases/networking.istio.io/VirtualService/testdata"), ["demo-virtualservice-demo.yaml"]);
    assert!(!names(".").iter().any(|name| name.ends_with(".partial")), "{:?}", names("."));
    // With room, both are replaced.
    test.run_args(["record", "demo", "--output-file", "cases.yaml"]).success();
    test.run_args(["record", "demo", "--dir", "cases"]).success();
    assert!(read("cases.yaml").starts_with("# Recorded by kubectl-rollout-lua "));
    assert!(read(case).starts_with("# Recorded by kubectl-rollout-lua "));
    assert_ne!(read(case), earlier);
}

#[test]
fn an_output_file_the_user_may_not_write_is_refused_as_the_shell_refuses_it() {
    // A commands trial: the write by rename replaced a read-only file (a rename asks only the
    // folder's permission), where `> FILE` fails.
    use std::os::unix::fs::PermissionsExt;
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server).file("kept.yaml", "mine\n");
    std::fs::set_permissions(test.path("kept.yaml"), std::fs::Permissions::from_mode(0o444)).unwrap();
    if std::fs::OpenOptions::new().write(true).open(test.path("kept.yaml")).is_ok() {
        return crate::support::skip("file permissions are not enforced for this user (root)");
    }
    test.run_args(["record", "demo", "--output-file", "kept.yaml"])
        .status(1)
        .stderr_has("error: writing kept.yaml: Permission denied");
    assert_eq!(std::fs::read_to_string(test.path("kept.yaml")).unwrap(), "mine\n");
}

#[test]
fn a_recording_never_replaces_the_case_of_another_namespace() {
    let server = shop(2, "StepPaused").start();
    for mut object in [rollout(2, "StepPaused"), virtual_service(), destination_rule(), service("demo"), deployment(4)]
    {
        object["metadata"]["namespace"] = "cart".into();
        server.put_object(object);
    }
    let test = Test::new().kubeconfig(&server);
    let case = "cases/networking.istio.io/VirtualService/testdata/demo-virtualservice-demo.yaml";
    test.run_args(["record", "demo", "--dir", "cases"]).success();
    let shop = std::fs::read_to_string(test.path(case)).unwrap();
    // The same names in another namespace would go to the same files.
    test.run_args(["record", "demo", "-n", "cart", "--dir", "cases"]).status(1).stderr_has(&format!(
        "error: nothing was written: {case} holds the case of Rollout shop/demo's VirtualService shop/demo, not of Rollout cart/demo's VirtualService cart/demo (a case's file name leaves out namespaces): record into another --dir\n"
    ));
    assert_eq!(std::fs::read_to_string(test.path(case)).unwrap(), shop);
    test.run_args(["record", "demo", "-n", "cart", "--dir", "cart"]).success();
    // Recorded again from its own namespace, a case is written afresh.
    test.run_args(["record", "demo", "--dir", "cases"]).success().stderr_has(&format!("wrote {case}"));
}

#[test]
fn record_warns_of_a_case_go_test_cannot_run() {
    let mut blue_green = rollout(1, "StepPaused");
    let mut strategy = blue_green["spec"]["strategy"]["canary"].take();
    strategy["steps"] =
        serde_json::json!([{"replicas": "100%", "traffic": "0%"}, {"replicas": "100%", "traffic": "100%"}]);
    blue_green["spec"]["strategy"] = serde_json::json!({"blueGreen": strategy});
    let server = serving(blue_green).start();
    Test::new().kubeconfig(&server).args(["record", "demo"]).run().success().stderr_has(
        "warning: Rollout shop/demo, VirtualService/demo: the controller's go test cannot run this case: it reads spec.strategy.canary only and fails on a blue-green rollout; this tool runs the blue-green steps by the harness's other rules\n",
    );
}

#[test]
fn record_a_traffic_routing() {
    let server = FakeApiServer::builder()
        .kruise_and_istio()
        .object(serde_json::json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": "tr", "namespace": NAMESPACE},
            "spec": {"strategy": {"weight": 10}, "objectRef": [{"service": "demo", "customNetworkRefs": [{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "demo"}]}]}
        }))
        .object(virtual_service())
        .start();
    let out = Test::new().kubeconfig(&server).args(["record", "trafficrouting/tr"]).run().success();
    // The harness gives a TrafficRouting's script the stable Service as the canary.
    let header = "# expected follows the controller's test harness, as `test` checks it: the canary Service is the\n# stable one, and the strategy runs the script even without weight or matches; `plan -f` shows what\n";
    assert!(out.stdout.contains(header), "{}", out.stdout);
    let case = &rollout_lua::for_tests::parse_documents(&out.stdout, "record").unwrap()[0].value;
    assert_eq!(case["trafficRouting"]["metadata"]["name"], "tr");
    assert_eq!(
        case["expected"][0]["spec"]["http"][0]["route"][1],
        serde_json::json!({"destination": {"host": "demo", "subset": "canary"}, "weight": 10})
    );
}

#[test]
fn record_names_a_gateway_object_that_is_not_there() {
    let server = shop(2, "StepPaused").start();
    server.delete_object("networking.istio.io", "destinationrules", NAMESPACE, "demo");
    Test::new()
        .kubeconfig(&server)
        .args(["record", "demo"])
        .run()
        .status(1)
        .stderr_has("error: DestinationRule/demo (networking.istio.io/v1beta1) is not in namespace shop");
    let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["record", "store"]).success();
    server.delete_object("gateway.networking.k8s.io", "httproutes", NAMESPACE, "store");
    test.run_args(["record", "store"])
        .status(1)
        .stderr_has("error: Rollout shop/store routes through HTTPRoute shop/store, which is not in its namespace");
}

#[test]
fn record_says_where_a_script_failed_and_warns_of_what_test_warns_of() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new()
        .kubeconfig(&server)
        .file("failsome.lua", "if obj.canaryWeight == -1 then error(\"no weight here\") end return obj.data")
        .file(
            "keys.lua",
            "local keys = {} for k in pairs(obj) do keys[#keys + 1] = k end obj.data.spec.keys = keys return obj.data",
        );
    test.run_args(["record", "demo", "--dir", "failed", "--script", "VirtualService.networking.istio.io=failsome.lua"])
        .status(1)
        .stderr_has("error: Rollout shop/demo, step 1/3, VirtualService/demo: script failsome.lua:1: no weight here\n");
    assert!(!test.path("failed").exists(), "nothing written");
    test.run_args(["record", "demo", "--script", "VirtualService.networking.istio.io=keys.lua"])
        .success()
        .stderr_has("warning: Rollout shop/demo, step 1/3, VirtualService/demo: nondeterministic: the output changes with the order pairs() walks the input maps");
}

/// Rollout `demo` of `rollout()` routing through Ingress `demo` of `class` instead, its step 1
/// matching `matches`, with its stable Ingress.
fn through_an_ingress(class: &str, matches: Value) -> fake_apiserver::Builder {
    let mut rollout = rollout(1, "StepPaused");
    let canary = &mut rollout["spec"]["strategy"]["canary"];
    canary["steps"][0]["matches"] = matches;
    canary["trafficRoutings"] =
        serde_json::json!([{"service": "demo", "ingress": {"name": "demo", "classType": class}}]);
    serving(rollout).resource(fake_apiserver::ingresses()).object(serde_json::json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "demo", "namespace": NAMESPACE, "annotations": {"kubernetes.io/ingress.class": class}},
        "spec": {"rules": [{"host": "demo.example.com", "http": {"paths": [
            {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "demo", "port": {"number": 80}}}}
        ]}}]}
    }))
}

#[test]
fn record_names_a_failing_ingress_script_as_plan_does() {
    // aliyun-alb's script reads the first header of every match: a query match fails it.
    let query = serde_json::json!([{"queryParams": [{"type": "Exact", "name": "q", "value": "c"}]}]);
    let server = through_an_ingress("aliyun-alb", query).start();
    let test = Test::new().kubeconfig(&server);
    let planned = test.run_args(["plan", "demo", "--step", "1"]).status(1);
    assert!(
        planned.stderr.starts_with(
            "error: Rollout shop/demo, step 1/3: script lua_configuration/trafficrouting_ingress/aliyun-alb.lua:"
        ),
        "{}",
        planned.stderr
    );
    test.run_args(["record", "demo", "--dir", "cases"]).status(1).stderr_is(&planned.stderr);
    assert!(!test.path("cases").exists(), "nothing written");
}

#[test]
fn record_names_the_rollout_and_object_of_a_missing_script_as_plan_does() {
    // plan's error, which record's is.
    let fails_as_plan = |server: &fake_apiserver::FakeHandle, start: &str| {
        let test = Test::new().kubeconfig(server);
        let planned = test.run_args(["plan", "demo"]).status(1);
        assert!(planned.stderr.starts_with(start), "{}", planned.stderr);
        test.run_args(["record", "demo"]).status(1).stderr_is(&planned.stderr);
    };
    let headers = serde_json::json!([{"headers": [{"type": "Exact", "name": "x", "value": "1"}]}]);
    let server = through_an_ingress("traefik", headers).start();
    fails_as_plan(
        &server,
        "error: Rollout shop/demo routes through Ingress demo: no Lua script for Ingress class \"traefik\": ",
    );
    // A custom ref's kind without a script.
    let mut rollout = rollout(1, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"] =
        serde_json::json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "demo-split"}]);
    let server = serving(rollout)
        .resource(fake_apiserver::configmaps())
        .object(serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "demo-split", "namespace": NAMESPACE}}))
        .start();
    fails_as_plan(
        &server,
        "error: Rollout shop/demo routes through ConfigMap/demo-split (v1): no Lua script for ConfigMap.v1: ",
    );
}

#[test]
fn record_warns_of_an_object_routed_to_the_canary_without_a_stored_original_and_notes_it_in_the_case() {
    let server = shop(1, "StepPaused").start();
    // Routed by hand, or its annotation removed mid-release: the controller would store this.
    let mut routed = virtual_service();
    routed["spec"]["http"][0]["route"] = serde_json::json!([
        {"destination": {"host": "demo"}, "weight": 80}, {"destination": {"host": "demo-canary"}, "weight": 20}
    ]);
    server.put_object(routed.clone());
    let test = Test::new().kubeconfig(&server);
    let warning = "VirtualService/demo: it has no stored original (rollouts.kruise.io/original-spec-configuration) and routes to the canary Service demo-canary already: the controller stores this routing as its original, and the release's end puts it back, canary traffic and all; approve refuses it without --force\n";
    test.run_args(["plan", "demo", "--step", "1"]).success().stdout_has(&format!("warning: {warning}"));
    let out = test
        .run_args(["record", "demo"])
        .success()
        .stderr_is(&format!("warning: Rollout shop/demo, {warning}"))
        .stdout_has("# VirtualService/demo has no stored original and routes to the canary Service demo-canary already:\n# original is the object as it is, canary routing and all, as the controller would store it.\nrollout:\n");
    let documents = rollout_lua::for_tests::parse_documents(&out.stdout, "record").unwrap();
    assert_eq!(documents[0].value["original"]["spec"], routed["spec"]);
}

#[test]
fn record_warns_of_a_rollout_the_api_server_rejects_now_and_says_which_routing_it_records() {
    let mut rollout = rollout(1, "StepPaused");
    let routings = &mut rollout["spec"]["strategy"]["canary"]["trafficRoutings"];
    let second = serde_json::json!({"service": "other", "customNetworkRefs": [
        {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "other"}
    ]});
    routings.as_array_mut().unwrap().push(second);
    let server = serving(rollout).start();
    let test = Test::new().kubeconfig(&server);
    let warning =
        "spec.strategy.canary.trafficRoutings: 2 entries, at most 1 (the controller's webhook rejects this now)";
    test.run_args(["plan", "demo", "--step", "1"]).success().stdout_has(&format!("  warning: {warning}\n"));
    let out = test.run_args(["record", "demo"]).success().stderr_is(&format!(
        "warning: Rollout shop/demo: {warning}\nnote: Rollout shop/demo: only its trafficRoutings[0] is recorded, the one entry the controller routes through\n"
    ));
    let documents = rollout_lua::for_tests::parse_documents(&out.stdout, "record").unwrap();
    let originals: Vec<&Value> = documents.iter().map(|d| &d.value["original"]["metadata"]["name"]).collect();
    assert_eq!(originals, ["demo", "demo"], "the VirtualService and DestinationRule of entry [0]");
}

#[test]
fn record_takes_its_argument_as_plan_takes_a_rollout_and_any_spelling_of_trafficrouting() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server).file("demo.yaml", "");
    let hint = "name a Rollout as NAME or rollout/NAME, or a TrafficRouting as trafficrouting/NAME";
    test.run_args(["record", "deployment/demo"])
        .status(1)
        .stderr_has(&format!("deployment is not a Rollout or a TrafficRouting: {hint}\n"));
    test.run_args(["record", "./demo.yaml"]).status(1).stderr_has(&format!(
        "./demo.yaml is a file or folder, not a Rollout or a TrafficRouting: `plan -f ./demo.yaml` plans the manifests in it; {hint}\n"
    ));
    test.run_args(["record", "rollouts.v1beta1.rollouts.kruise.io/demo"]).success();
    // A TrafficRouting by kubectl's every spelling of its type: here, none of that name.
    for kind in ["TrafficRouting", "trafficroutings", "trafficrouting.rollouts.kruise.io"] {
        test.run_args(["record", &format!("{kind}/x")])
            .status(1)
            .stderr_is("error: trafficroutings.rollouts.kruise.io \"x\" not found in namespace shop\n");
    }
}

#[test]
fn a_recording_never_replaces_another_rollouts_case_nor_a_file_that_is_no_case() {
    let server = shop(2, "StepPaused").start();
    let vs = "networking.istio.io/VirtualService";
    let case = format!("cases/{vs}/testdata/demo-virtualservice-demo.yaml");
    // The controller's own case, without namespaces, under this recording's file name.
    let theirs =
        std::fs::read_to_string(repo(&format!("lua_configuration/{vs}/testdata/rollout_with_three_steps.yaml")))
            .unwrap();
    let test = Test::new().kubeconfig(&server).file(&case, &theirs);
    test.run_args(["record", "demo", "--dir", "cases"]).status(1).stderr_is(&format!(
        "error: nothing was written: {case} holds the case of Rollout rollouts-demo's VirtualService vs-demo, not of Rollout shop/demo's VirtualService shop/demo: record into another --dir\n"
    ));
    for someones in ["garbage: [", "just: text"] {
        std::fs::write(test.path(&case), someones).unwrap();
        test.run_args(["record", "demo", "--dir", "cases"]).status(1).stderr_is(&format!(
            "error: nothing was written: {case} is not a recorded case (no rollout or trafficRouting and original): record into another --dir, or move it\n"
        ));
        assert_eq!(std::fs::read_to_string(test.path(&case)).unwrap(), someones);
    }
    assert!(!test.path(&format!("cases/{vs}/trafficRouting.lua")).exists(), "nothing written");
    // A file where a later case's folder goes: refused before the first case is written (a
    // commands trial: the VirtualService's case was written, then the run failed).
    let dr_testdata = "cases/networking.istio.io/DestinationRule/testdata";
    let test = Test::new().kubeconfig(&server).file(dr_testdata, "someone's file");
    let out = test.run_args(["record", "demo", "--dir", "cases"]).status(1);
    let out = out.stderr_has(&format!("error: nothing was written: making the folder {dr_testdata}: "));
    assert!(!test.path(&case).exists(), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(test.path(dr_testdata)).unwrap(), "someone's file");
}
