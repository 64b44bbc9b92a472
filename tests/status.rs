//! `status` (once and followed) and `approve --until-step/--to-end` against the fake API server,
//! with a stand-in for the controller that moves the Rollout on once a step is approved.

use crate::support::cluster::*;
use crate::support::{BINARY, Test, terminal_available};
use fake_apiserver::{AdmissionRequest, Requests, Stage};
use serde_json::{Value, json};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

#[test]
fn status_places_every_object() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status", "demo"])
        .success()
        .stdout_has("Rollout shop/demo\n  Phase:    Progressing (canary (partition), 3 steps)\n")
        .stdout_has("  Step:     step 2/3: replicas 50%, traffic 50% (canary 50 / stable 50), pause until approved\n")
        .stdout_has("  State:    StepPaused, waiting for approval\n")
        .stdout_has("  Replicas: canary 1 (1 ready); stable 3 (3 ready); Deployment demo 4 (4 ready)\n")
        .stdout_has("VirtualService shop/demo   original")
        .stdout_has("built-in lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua (sha256 ");
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    server.clear_log();
    test.run_args(["status", "demo"]).success().stdout_has("VirtualService shop/demo   at step 2");
    // Typed JSON, steps counted from 1 as in the controller's status and in plan -o json.
    let json = test.run_args(["status", "demo", "-o", "json"]).success().json();
    assert_eq!(
        (&json[0]["step"], &json[0]["stepCount"], &json[0]["stepLabel"]),
        (&json!(2), &json!(3), &json!("step 2/3"))
    );
    assert_eq!(json[0]["objects"][0]["position"], json!({"kind": "atStep", "steps": [2]}));
    let plan = test.run_args(["plan", "demo", "-o", "json"]).success().json();
    assert_eq!(plan["plans"][0]["stages"][0]["step"], 2);
    let mut edited = vs(&server);
    edited["spec"]["hosts"] = json!(["other"]);
    server.put_object(edited);
    let json = test.run_args(["status", "demo", "-o", "json"]).success().json();
    assert_eq!(json[0]["objects"][0]["position"], json!({"kind": "drifted", "nearest": 2}));
    assert_eq!(json[0]["canaryReplicas"], 1);
    assert_eq!(json[0]["progress"], json!({"kind": "waitingForApproval"}));
    assert_eq!(writes(&server), Vec::<String>::new(), "status writes nothing");
}

#[test]
fn status_notes_an_object_not_at_the_step_the_controller_has_routed() {
    // Paused at step 2, which the controller routes before it pauses, with the objects at their
    // originals (a routing that failed, or was undone since).
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let advice = "the controller routes a step once, before it goes past StepTrafficRouting, so it failed to (its logs say why) or the object was changed since; `kubectl rollout-lua approve demo -n shop --traffic-only` writes the step's routing";
    test.run_args(["status", "demo"])
        .success()
        .stdout_has(&format!(
            "      note: VirtualService shop/demo is not at step 2, the current step (it is at its original): {advice}\n"
        ))
        .stdout_has("      note: DestinationRule shop/demo is not at step 2, the current step (it is at its original): ");
    let json = test.run_args(["status", "demo", "-o", "json"]).success().json();
    let at_current_step = |json: &Value| -> Vec<Value> {
        json[0]["objects"].as_array().unwrap().iter().map(|o| o["atCurrentStep"].clone()).collect()
    };
    assert_eq!(at_current_step(&json), [json!(false), json!(false)]);
    // `plan` of the step notes them as well, above the diff of what routing them writes.
    test.run_args(["plan", "demo"])
        .success()
        .stdout_has(
            "  VirtualService shop/demo is not at step 2, the current step, which the controller routes before it goes past StepTrafficRouting: `kubectl rollout-lua status demo -n shop` says more\n  DestinationRule shop/demo is not at step 2, the current step, ",
        );
    test.run_args(["status", "demo", "-w", "--until-paused"])
        .success()
        .stdout_has("; VirtualService demo original (not at the current step), DestinationRule demo original (not at the current step)\n");
    // Before the controller routes the step, the objects hold the last step's routing: nothing
    // is said, nor compared.
    server.put_object(rollout(2, "StepTrafficRouting"));
    let out = test.run_args(["status", "demo"]).success();
    assert!(!out.stdout.contains("note:"), "{}", out.stdout);
    let json = test.run_args(["status", "demo", "-o", "json"]).success().json();
    assert_eq!(at_current_step(&json), [Value::Null, Value::Null]);
    let out = test.run_args(["plan", "demo"]).success();
    assert!(!out.stdout.contains("the current step,"), "{}", out.stdout);
    // Routed: at the step.
    server.put_object(rollout(2, "StepPaused"));
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    let out = test.run_args(["status", "demo"]).success();
    assert!(!out.stdout.contains("note:"), "{}", out.stdout);
    let json = test.run_args(["status", "demo", "-o", "json"]).success().json();
    assert_eq!(at_current_step(&json), [json!(true), json!(true)]);
    let out = test.run_args(["plan", "demo"]).success();
    assert!(!out.stdout.contains("the current step,"), "{}", out.stdout);
}

#[test]
fn status_fails_for_objects_it_cannot_place_and_a_rollout_without_routing_has_none() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server).file("boom.lua", "error('kaboom')\n");
    let script = format!("VirtualService.networking.istio.io={}", test.path("boom.lua").display());
    // A script that fails: shown in the Rollout's place, and an error at the end (exit 1) that
    // names the Rollout, the reason said once ...
    test.run_args(["status", "demo", "--script", &script])
        .status(1)
        .stdout_has("  Objects:  cannot place them: Rollout shop/demo, step 1/3, VirtualService/demo: script ")
        .stderr_has("error: cannot place the objects of Rollout shop/demo: its Objects line above says why\n");
    // ... in full where only the machine output shows it ...
    test.run_args(["status", "demo", "--script", &script, "-o", "json"])
        .status(1)
        .stderr_has("error: Rollout shop/demo, step 1/3, VirtualService/demo: script ");
    // ... and on a followed Rollout's line.
    test.run_args(["status", "demo", "--script", &script, "-w", "--until-paused", "--timeout", "5s"])
        .status(1)
        .stdout_has("; cannot place its objects: Rollout shop/demo, step 1/3, VirtualService/demo: script ");
    // A Rollout without traffic routing (pods in batches alone) is no failure: it has no objects.
    let mut alone = rollout(2, "StepPaused");
    alone["spec"]["strategy"]["canary"].as_object_mut().unwrap().remove("trafficRoutings");
    server.put_object(alone);
    test.run_args(["status", "demo"]).success().stdout_has("  Objects:  none (no traffic routing)\n");
    // Its approval is the approval alone.
    server.clear_log();
    test.run_args(["approve", "demo", "--yes"])
        .success()
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)");
    let written: Vec<String> = writes(&server).into_iter().filter(|w| !w.contains("/leases")).collect();
    assert_eq!(written, ["PATCH /apis/rollouts.kruise.io/v1beta1/namespaces/shop/rollouts/demo/status"]);
}

#[test]
fn status_notes_custom_refs_left_at_a_step_after_a_completed_release() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    // In the release, at step 2: nothing more to say.
    let out = test.run_args(["status", "demo"]).success().stdout_has("VirtualService shop/demo   at step 2");
    assert!(!out.stdout.contains("note:"), "{}", out.stdout);
    // The release completed, but its routing was not restored.
    let mut completed = rollout(3, "Completed");
    completed["status"]["phase"] = json!("Healthy");
    completed["status"]["conditions"] = json!([{"type": "Succeeded", "status": "True"}]);
    server.put_object(completed);
    let restore = "the controller leaves it so until the next release; `kubectl rollout-lua restore demo -n shop` puts the routing before the release back (it puts the stored original back)";
    test.run_args(["status", "demo"])
        .success()
        .stdout_has("  State:    Completed, completed\n")
        .stdout_has(&format!("      note: the release is over (phase Healthy), but VirtualService shop/demo still routes as step 2: {restore}\n"))
        .stdout_has(&format!("      note: the release is over (phase Healthy), but DestinationRule shop/demo still routes as step 1 and step 2: {restore}\n"));
    // Restored: original, as after any release, and nothing more is said.
    test.run_args(["restore", "demo", "--yes"]).success();
    let out = test.run_args(["status", "demo"]).success().stdout_has("VirtualService shop/demo   original");
    assert!(!out.stdout.contains("note:"), "{}", out.stdout);
}

/// `value` moved to namespace `other`.
fn in_other(mut value: Value) -> Value {
    value["metadata"]["namespace"] = json!("other");
    value
}

/// `demo` at step 2 and `solo` (labelled app=solo) at step 1 in shop; `demo` at step 3 in other.
fn in_two_namespaces() -> FakeHandle {
    let mut labelled = rollout(1, "StepPaused");
    labelled["metadata"]["labels"] = json!({"app": "solo"});
    demo_and_solo(2, "StepPaused", labelled)
        .object(in_other(rollout(3, "StepPaused")))
        .object(in_other(virtual_service()))
        .object(in_other(destination_rule()))
        .object(in_other(deployment(4)))
        .start()
}

#[test]
fn a_script_for_a_kind_only_one_namespace_has_is_taken_with_a() {
    // A multi-Rollout trial: -A checked --script against each namespace on its own, and refused
    // a DestinationRule script that only shop's Rollouts use.
    let mut vs_only = in_other(rollout(3, "StepPaused"));
    let refs = &mut vs_only["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"];
    refs.as_array_mut().unwrap().retain(|r| r["kind"] == "VirtualService");
    let server = shop(2, "StepPaused")
        .object(vs_only)
        .object(in_other(virtual_service()))
        .object(in_other(deployment(4)))
        .start();
    let dr = "lua_configuration/networking.istio.io/DestinationRule/trafficRouting.lua";
    let test =
        Test::new().kubeconfig(&server).file("dr.lua", &std::fs::read_to_string(crate::support::repo(dr)).unwrap());
    let script = ["--script", "DestinationRule.networking.istio.io=dr.lua"];
    test.run_args([&["plan", "-A", "--summary"][..], &script].concat()).success().stdout_has("Rollout other/demo");
    test.run_args([&["status", "-A"][..], &script].concat()).success().stdout_has("other");
    test.run_args([&["status", "-A", "-w", "--timeout", "1s"][..], &script].concat()).status(1);
    // A kind no namespace has is still refused.
    test.run_args(["plan", "-A", "--script", "Gateway.networking.istio.io=dr.lua"])
        .status(1)
        .stderr_has("error: --script Gateway.networking.istio.io: no object in the plan is a Gateway of networking.istio.io, so the script would not run. The keys this plan uses: DestinationRule.networking.istio.io, VirtualService.networking.istio.io.");
    // In one namespace, against that namespace's.
    test.run_args([&["plan", "--all", "-n", "other"][..], &script].concat())
        .status(1)
        .stderr_has("no object in the plan is a DestinationRule of networking.istio.io");
}

#[test]
fn status_without_names_lists_the_namespace_and_with_a_the_cluster() {
    let server = in_two_namespaces();
    let test = Test::new().kubeconfig(&server);
    let names = |args: &[&str]| -> Vec<String> {
        let json = test.run_args(args).success().json();
        json.as_array().unwrap().iter().map(|v| format!("{}/{} {}", v["namespace"], v["name"], v["step"])).collect()
    };
    // As kubectl get: the namespace's Rollouts, -l some of them, -A every namespace's.
    assert_eq!(names(&["status", "-o", "json"]), ["\"shop\"/\"demo\" 2", "\"shop\"/\"solo\" 1"]);
    assert_eq!(names(&["status", "-l", "app=solo", "-o", "json"]), ["\"shop\"/\"solo\" 1"]);
    assert_eq!(
        names(&["status", "-A", "-o", "json"]),
        ["\"other\"/\"demo\" 3", "\"shop\"/\"demo\" 2", "\"shop\"/\"solo\" 1"]
    );
    assert_eq!(
        names(&["status", "-A", "-l", "app=demo", "-o", "json"]),
        ["\"other\"/\"demo\" 3", "\"shop\"/\"demo\" 2"]
    );
    // Each Rollout's objects are placed in its own namespace.
    test.run_args(["status", "-A"])
        .success()
        .stdout_has("Rollout other/demo\n")
        .stdout_has("    VirtualService other/demo ")
        .stdout_has("Rollout shop/solo\n");
    // None is a note, not an error.
    Test::new()
        .kubeconfig(&server)
        .args(["status", "-n", "empty"])
        .run()
        .success()
        .stdout_is("")
        .stderr_has("No Rollouts found in namespace empty.");
    assert_eq!(test.run_args(["status", "-n", "empty", "-o", "json"]).success().stdout, "[]\n");
}

#[test]
fn following_every_namespace_watches_the_rollouts_and_not_each_namespaces_gateway_objects() {
    // A watch per resource and namespace could be hundreds of connections over a cluster: with
    // -A the gateway objects are read again with everything; in one namespace they are watched.
    let server = in_two_namespaces();
    let test = Test::new().kubeconfig(&server);
    let watched = |server: &FakeHandle| -> Vec<String> {
        let watch =
            |r: &fake_apiserver::LoggedRequest| r.query_params.iter().any(|(k, v)| k == "watch" && v != "false");
        let mut paths: Vec<String> = server
            .requests()
            .into_iter()
            .filter(watch)
            .map(|r| r.path.rsplit('/').next().unwrap().to_string())
            .collect();
        paths.sort();
        paths.dedup();
        paths
    };
    test.run_args(["status", "-w", "-A", "--timeout", "2s"]).status(1);
    assert_eq!(watched(&server), ["rollouts"]);
    server.clear_log();
    test.run_args(["status", "demo", "-w", "--timeout", "2s"]).status(1);
    assert_eq!(watched(&server), ["destinationrules", "rollouts", "virtualservices"]);
}

#[test]
fn plan_all_plans_the_namespace_and_with_a_every_namespace_as_status_lists_them() {
    let server = in_two_namespaces();
    let test = Test::new().kubeconfig(&server);
    let owners = |args: &[&str]| -> Vec<String> {
        let json = test.run_args(args).success().json();
        json["plans"].as_array().unwrap().iter().map(|p| p["owner"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(owners(&["plan", "--all", "-o", "json"]), ["Rollout shop/demo", "Rollout shop/solo"]);
    assert_eq!(owners(&["plan", "-A", "-o", "json"]), ["Rollout other/demo", "Rollout shop/demo", "Rollout shop/solo"]);
    assert_eq!(owners(&["plan", "-A", "-l", "app=demo", "-o", "json"]), ["Rollout other/demo", "Rollout shop/demo"]);
    // Each Rollout's objects are planned in its own namespace, at its own step.
    test.run_args(["plan", "-A", "--summary"])
        .success()
        .stdout_has("Rollout other/demo\n  phase Progressing, step 3/3 StepPaused")
        .stdout_has("  step 3/3  VirtualService other/demo  ")
        .stdout_has("  step 2/3  VirtualService shop/demo  ");
    test.run_args(["plan", "-A", "-l", "app=zzz"])
        .status(1)
        .stderr_has("error: no Rollouts in any namespace match the selector app=zzz\n");
    // None is a note, not an error, as for status.
    test.run_args(["plan", "--all", "-n", "empty"]).success().stderr_has("No Rollouts found in namespace empty.\n");
    test.run_args(["plan", "--all", "demo"]).status(1).stderr_has("'--all' cannot be used with '[ROLLOUT]...'");
}

#[test]
fn status_of_every_namespace_refused_at_the_cluster_scope_suggests_naming_a_namespace() {
    let server = demo_and_solo(2, "StepPaused", rollout(1, "StepPaused"))
        .deny(Rule::new(["list"]).resources(["rollouts"]).namespaces([""]))
        .start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status", "-A"])
        .status(1)
        .stderr_has("error: listing rollouts.rollouts.kruise.io in every namespace: ")
        .stderr_has("at the cluster scope (403 Forbidden)\n  -A lists the Rollouts at the cluster scope: name a namespace instead (-n NAMESPACE), or the Rollouts there (NAME… -n NAMESPACE)\n");
    test.run_args(["status", "-n", "shop"]).success().stdout_has("Rollout shop/demo\n");
    // Refused in the namespace too, naming the Rollouts needs no list.
    let server = demo_and_solo(2, "StepPaused", rollout(1, "StepPaused"))
        .deny(Rule::new(["list"]).resources(["rollouts"]))
        .start();
    let test = Test::new().kubeconfig(&server);
    for command in [&["status"][..], &["plan", "--all"], &["approve", "-l", "app=demo", "--yes"]] {
        test.run_args(command).status(1).stderr_has(
            "(403 Forbidden)\n  name the Rollouts instead (NAME…), which reads each with get and needs no list\n",
        );
    }
    test.run_args(["status", "demo"]).success().stdout_has("Rollout shop/demo\n");
}

#[test]
fn status_shows_the_time_left_of_a_timed_pause() {
    let mut rollout = rollout(1, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["steps"][0]["pause"] = json!({"duration": 3600});
    // The pause started 50 minutes ago: about 10 minutes are left.
    let started = std::time::SystemTime::now() - Duration::from_secs(3000);
    rollout["status"]["canaryStatus"]["lastUpdateTime"] = json!(rollout_lua::for_tests::rfc3339(started));
    let server = serving(rollout).start();
    let out = Test::new().kubeconfig(&server).args(["status", "demo"]).run().success().stdout_has("pause 3600s");
    assert!(
        out.stdout.contains("StepPaused, resumes in 9m5") || out.stdout.contains("StepPaused, resumes in 10m00s"),
        "{}",
        out.stdout
    );
    // A pause over 24 minutes ago that the Rollout is still in: the controller is stuck.
    let mut overdue = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo").unwrap();
    let started = std::time::SystemTime::now() - Duration::from_secs(3600 + 1440);
    overdue["status"]["canaryStatus"]["lastUpdateTime"] = json!(rollout_lua::for_tests::rfc3339(started));
    server.put_object(overdue);
    let out = Test::new().kubeconfig(&server).args(["status", "demo"]).run().success();
    assert!(
        ["24m00s", "24m01s", "24m02s"].iter().any(|ago| out
            .stdout
            .contains(&format!("StepPaused, pause ended {ago} ago (the controller should have moved on)"))),
        "{}",
        out.stdout
    );
}

#[test]
fn status_counts_a_timed_pause_on_the_api_servers_clock() {
    // A regression: counted on this host's clock, 2 minutes ahead of the server's, a 5-minute
    // pause that began 200 s ago (on the server's clock, which the controller writes) was
    // called over 20 s ago, the controller stuck.
    let server_now = std::time::SystemTime::now() - Duration::from_secs(120);
    let mut rollout = rollout(1, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["steps"][0]["pause"] = json!({"duration": 300});
    let started = server_now - Duration::from_secs(200);
    rollout["status"]["canaryStatus"]["lastUpdateTime"] = json!(rollout_lua::for_tests::rfc3339(started));
    let server = serving(rollout).clock_offset(-120).start();
    let out = Test::new().kubeconfig(&server).args(["status", "demo"]).run().success();
    assert!(
        ["resumes in 1m40s", "resumes in 1m39s", "resumes in 1m38s"].iter().any(|left| out.stdout.contains(left)),
        "{}",
        out.stdout
    );
}

/// Moves the Rollout on as the controller would once a step is approved: StepReady becomes the
/// next step's StepPaused, and after the last step the release completes.
fn controller(server: &FakeHandle) -> Controller {
    controller_of(server, &["demo"])
}

/// A stand-in controller's thread: dropping it stops the thread and waits for it.
struct Controller {
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Drop for Controller {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// [`controller`] for each of `names`; a timed pause, and a canary's last step at "100%", also
/// move on (at once).
fn controller_of(server: &FakeHandle, names: &[&str]) -> Controller {
    let stop = Arc::new(AtomicBool::new(false));
    let thread = {
        let (server, stop) = (server.clone_handle(), stop.clone());
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                for name in &names {
                    let Some(mut rollout) = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, name)
                    else {
                        continue;
                    };
                    let steps = rollout["spec"]["strategy"]["canary"]["steps"].clone();
                    let status = &rollout["status"]["canaryStatus"];
                    let Some(step) = status["currentStepIndex"].as_i64() else { continue };
                    let timed = !steps[(step - 1) as usize]["pause"]["duration"].is_null();
                    // A canary's last step at "100%" is finished without a pause.
                    let completes = step == steps.as_array().unwrap().len() as i64
                        && steps[(step - 1) as usize]["replicas"] == "100%";
                    let state = status["currentStepState"].clone();
                    if state == "StepReady" || (state == "StepPaused" && (timed || completes)) {
                        rollout["status"] = if step == steps.as_array().unwrap().len() as i64 {
                            json!({"phase": "Healthy", "conditions": [{"type": "Succeeded", "status": "True"}]})
                        } else {
                            json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": step + 1, "currentStepState": "StepPaused"}})
                        };
                        server.put_object(rollout);
                    }
                }
                thread::sleep(Duration::from_millis(50));
            }
        })
    };
    Controller { stop, thread: Some(thread) }
}

/// `value` for a second Rollout `solo`: its own Service, workload and gateway objects.
fn solo(value: Value) -> Value {
    serde_json::from_str(&value.to_string().replace("demo", "solo")).unwrap()
}

/// `demo` at `step`/`state`, and `solo` (with `solo_rollout`'s status and steps) beside it.
fn demo_and_solo(step: i64, state: &str, solo_rollout: Value) -> fake_apiserver::Builder {
    shop(step, state).object(solo(solo_rollout)).object(solo(virtual_service())).object(solo(destination_rule()))
}

#[test]
fn rollouts_read_at_once_share_one_discovery_of_their_workloads_group() {
    // A regression: on a cold cache each Rollout's workload sent its own GET /apis/apps/v1 (one
    // per Rollout, a burst of identical requests on a big namespace).
    let server = demo_and_solo(2, "StepPaused", rollout(1, "StepPaused")).latency(Duration::from_millis(100)).start();
    Test::new().kubeconfig(&server).run_args(["status"]).success();
    let asked: Vec<String> =
        server.requests().into_iter().filter(|r| r.path == "/apis/apps/v1").map(|r| r.path).collect();
    assert_eq!(asked, ["/apis/apps/v1"]);
}

#[test]
fn each_claim_of_a_run_names_the_whole_command() {
    // A multi-Rollout trial: `approve solo demo` claimed demo as `approve demo`, which is not
    // the command anyone ran (a refusal and status name it).
    let server = demo_and_solo(2, "StepPaused", rollout(1, "StepPaused")).start();
    let test = Test::new().kubeconfig(&server);
    let claimed = |server: &FakeHandle| -> Vec<String> {
        let leases = server.writes().into_iter().filter(|w| w.method == "POST" && w.path.ends_with("/leases"));
        leases.map(|w| w.body["metadata"]["annotations"]["kubectl-rollout-lua/command"].to_string()).collect()
    };
    test.run_args(["approve", "solo", "demo", "--yes"]).success();
    assert_eq!(claimed(&server), ["\"approve solo demo\"", "\"approve solo demo\""]);
    let server = demo_and_solo(2, "StepPaused", rollout(1, "StepPaused")).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["restore", "-l", "app=demo", "--yes"]).success();
    let restore = claimed(&server);
    assert!(!restore.is_empty() && restore.iter().all(|c| c == "\"restore -l app=demo\""), "{restore:?}");
}

/// The GETs of the objects of `plural` named `name`, by path.
fn gets(server: &FakeHandle, plural: &str, name: &str) -> usize {
    let path = format!("/{plural}/{name}");
    server.requests().iter().filter(|r| r.method == "GET" && r.path.ends_with(&path)).count()
}

#[test]
fn status_reads_each_workload_once_and_the_claims_with_the_objects() {
    // A regression: each workload was read twice (for the plan's replicas, then for the view),
    // and the claims one after another once everything else was read.
    // Latency makes concurrent requests overlap, so sequential round trips can be counted.
    let server = demo_and_solo(2, "StepPaused", rollout(1, "StepPaused"))
        .object(solo(deployment(4)))
        .latency(Duration::from_millis(50))
        .start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status"]).success();
    server.clear_log();
    test.run_args(["status"])
        .success()
        .stdout_has("Deployment demo 4 (4 ready)")
        .stdout_has("Deployment solo 4 (4 ready)");
    for name in ["demo", "solo"] {
        assert_eq!(gets(&server, "deployments", name), 1, "{name}'s workload");
        assert_eq!(gets(&server, "leases", &format!("rollout-lua.{name}")), 1, "{name}'s claim");
    }
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(server.round_trips(), 2, "the Rollouts, then everything else at once: {paths:?}");
    server.clear_log();
    test.run_args(["status", "solo"]).success();
    assert_eq!(gets(&server, "deployments", "solo"), 1);
}

/// The writes an approval makes on a fresh server, for placing a fault on one of them.
/// Every write of a run of `args` up to the release of its claims: the claims, the objects, the
/// approvals (a position in it is a position for `before_write`).
fn writes_of(server: fake_apiserver::Builder, args: &[&str]) -> Vec<String> {
    let server = server.start();
    Test::new().kubeconfig(&server).args(args).run().success();
    let all = server.writes();
    all.iter()
        .take_while(|w| !(w.method == "DELETE" && w.path.contains("/leases/")))
        .map(|w| format!("{} {}", w.method, w.path))
        .collect()
}

/// The Rollouts an approval patched, in order.
fn approved_in(writes: &[String]) -> Vec<String> {
    writes
        .iter()
        .filter_map(|w| w.strip_prefix("PATCH ")?.strip_suffix("/status")?.rsplit('/').next().map(String::from))
        .collect()
}

#[test]
fn approve_until_a_step_approves_each_pause_on_the_way() {
    let server = shop(1, "StepPaused").start();
    let controller = controller(&server);
    let test = Test::new().kubeconfig(&server);
    let out = test
        .run_args(["approve", "demo", "--until-step", "2", "--yes", "--timeout", "60s"])
        .success()
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 1/3)")
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)")
        .stdout_has("approved every pause up to step 2");
    // A backup before each step's write: each line names its own (the way back of a later
    // step's write goes to where the approved step before left the object).
    let written: Vec<&str> =
        out.stdout.lines().filter_map(|l| l.strip_prefix("VirtualService shop/demo updated (")).collect();
    let [first, second] = written[..] else { panic!("{}", out.stdout) };
    let (first, second) = (first.strip_prefix("backup ").expect(first), second.strip_prefix("backup ").expect(second));
    assert_ne!(first, second);
    let step_1 = std::fs::read_to_string(second.trim_end_matches(')')).expect(second);
    assert!(step_1.contains("rollouts.kruise.io/original-spec-configuration"), "step 1's routing: {step_1}");
    // Step 2 was approved last: the stand-in controller moves on to step 3 and stops there.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while rollout_status(&server)["canaryStatus"]["currentStepIndex"] != 3 && std::time::Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    drop(controller);
    assert_eq!(
        rollout_status(&server)["canaryStatus"],
        json!({"currentStepIndex": 3, "currentStepState": "StepPaused"})
    );
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][1]["weight"], 50, "step 2's traffic was applied");
}

#[test]
fn approve_to_the_end_follows_the_release_until_it_completes() {
    let server = shop(1, "StepPaused").start();
    let controller = controller(&server);
    let out = Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--to-end", "--yes", "--timeout", "60s"])
        .run()
        .success();
    drop(controller);
    // Step 3, the last at "100%", the controller finishes without a pause: nobody approves it.
    assert!(!out.stdout.contains("approved (step 3/3)"), "{}", out.stdout);
    out.stdout_has("approved (step 2/3)").stdout_has("the release completed");
    assert_eq!(rollout_status(&server)["phase"], "Healthy");
    let approvals = approved_in(&writes(&server)).len();
    assert_eq!(approvals, 2, "one approval per paused step: {:?}", writes(&server));
}

#[test]
fn approve_until_a_step_passes_over_a_pause_someone_else_approved_meanwhile() {
    // A follow trial: someone else approved step 2 between the follow seeing it paused and
    // this run's approval, which then refused (exit 3) as a first approval would.
    let server = shop(1, "StepPaused").start();
    let other = server.clone_handle();
    let status = |step: i64, state: &str| json!({"status": {"canaryStatus": {"currentStepIndex": step, "currentStepState": state}}});
    let someone_else = thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let watching = |server: &FakeHandle| {
            server.requests().iter().any(|r| {
                r.path.ends_with("/rollouts") && r.query_params.iter().any(|(k, v)| k == "watch" && v != "false")
            })
        };
        // Step 1 approved by the run, and its follow watching.
        while !(rollout_status(&other)["canaryStatus"]["currentStepState"] == "StepReady" && watching(&other)) {
            assert!(std::time::Instant::now() < deadline, "the run approves step 1 and follows");
            thread::sleep(Duration::from_millis(20));
        }
        // The approval's read of step 2 (after the follow's own read of it) is held while
        // someone else approves it.
        let read = other.pause(Requests::Matching(Rule::new(["get"]).resources(["rollouts"])), 2, Stage::BeforeStore);
        other.patch_object("rollouts.kruise.io", "rollouts", NAMESPACE, "demo", &status(2, "StepPaused"));
        assert!(read.wait_until_held(Duration::from_secs(30)), "the run reads step 2 to approve it");
        other.patch_object("rollouts.kruise.io", "rollouts", NAMESPACE, "demo", &status(2, "StepReady"));
        read.release();
        thread::sleep(Duration::from_millis(300));
        other.patch_object("rollouts.kruise.io", "rollouts", NAMESPACE, "demo", &status(3, "StepPaused"));
    });
    let out = Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--until-step", "2", "--yes", "--timeout", "60s"])
        .run()
        .success()
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 1/3)")
        .stdout_has("past step 2: nothing more to approve up to it")
        .stderr_has("Rollout shop/demo: step 2/3 was approved by someone else meanwhile (it is at step 2/3 StepReady now); following on");
    someone_else.join().unwrap();
    assert!(!out.stdout.contains("approved (step 2/3)"), "{}", out.stdout);
    assert_eq!(approved_in(&writes(&server)), ["demo"], "step 1's approval only");
}

/// In a thread: once an approval leaves the Rollout `StepReady` (within 30 s), someone else
/// changes it with `change` instead of the controller moving it on.
fn once_approved(server: &FakeHandle, change: impl FnOnce(&mut Value) + Send + 'static) -> thread::JoinHandle<()> {
    let other = server.clone_handle();
    thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            if let Some(mut rollout) = other.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo")
                && rollout["status"]["canaryStatus"]["currentStepState"] == "StepReady"
            {
                change(&mut rollout);
                other.put_object(rollout);
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
    })
}

/// In a thread: once step 1's approval leaves the Rollout `StepReady` (within 30 s), someone
/// edits the VirtualService (a timeout on its route), and then the controller moves on to step
/// 2's pause (it routes nothing itself here: the edit stays as made).
fn edited_between_steps(server: &FakeHandle) -> thread::JoinHandle<()> {
    let other = server.clone_handle();
    once_approved(server, move |rollout| {
        let mut edited = vs(&other);
        edited["spec"]["http"][0]["timeout"] = json!("10s");
        other.put_object(edited);
        rollout["status"]["canaryStatus"] = json!({"currentStepIndex": 2, "currentStepState": "StepPaused"});
    })
}

#[test]
fn approve_to_the_end_does_not_overwrite_an_edit_made_between_steps_unasked() {
    // A regression: the confirmation covers the whole sequence, and step 2 wrote its routing
    // over the edit without a word (the run's backup, from before step 1, did not hold it).
    let server = shop(1, "StepPaused").start();
    let handle = edited_between_steps(&server);
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--to-end", "--yes", "--timeout", "60s"])
        .run()
        .status(3)
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 1/3)")
        .stdout_has("-    timeout: 10s\n")
        .stderr_has("VirtualService shop/demo changed by someone else since this run's confirmation: at no step's plan now, and the diff above for step 2/3 shows what writing it does to their edit; not overwriting their edit, and step 2/3 is not approved. Review it (`kubectl rollout-lua plan demo -n shop`) and approve again")
        .stderr_has("  VirtualService shop/demo: written and kept: Rollout demo is approved with it (step 1/3); changed by someone else since (");
    handle.join().unwrap();
    assert_eq!(vs(&server)["spec"]["http"][0]["timeout"], "10s", "their edit stays");
    let approvals = approved_in(&writes(&server)).len();
    assert_eq!(approvals, 1, "step 2 is not approved: {:?}", writes(&server));
}

#[test]
fn approve_to_the_end_on_a_terminal_asks_before_overwriting_an_edit_made_between_steps() {
    let run = |answer: &str| {
        let server = shop(1, "StepPaused").start();
        let handle = edited_between_steps(&server);
        let test = Test::new()
            .kubeconfig(&server)
            .args(["approve", "demo", "--until-step", "2", "--timeout", "60s"])
            .stdin(&format!("yes\n{answer}\n"))
            .on_terminal();
        let out = test.run();
        handle.join().unwrap();
        // The test too: its HOME holds the backups.
        (server, out, test)
    };
    let (server, out, _) = run("no");
    out.status(3).stdout_has("Overwrite their change?");
    assert_eq!(vs(&server)["spec"]["http"][0]["timeout"], "10s", "their edit stays");
    let (server, out, _test) = run("yes");
    let out = out.success().stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)");
    assert!(vs(&server)["spec"]["http"][0]["timeout"].is_null(), "step 2's routing is written over it");
    // Their edit is backed up, and named.
    let named = out.stdout.lines().rfind(|l| l.starts_with("VirtualService shop/demo updated (backup ")).unwrap();
    let (_, theirs) = named.split_once("; their edit it overwrote: ").expect("their edit's backup is named");
    let theirs = theirs.trim_end_matches([')', '\r']);
    assert!(std::fs::read_to_string(theirs).unwrap().contains("timeout: 10s"), "{named}");
}

#[test]
fn approve_to_the_end_refused_at_a_later_step_says_what_the_earlier_steps_wrote() {
    let server = shop(1, "StepPaused").start();
    // Between the steps, the VirtualService's stored original becomes one that does not parse:
    // step 2 may not be written from it.
    let other = server.clone_handle();
    let handle = once_approved(&server, move |rollout| {
        let mut spoiled = vs(&other);
        spoiled["metadata"]["annotations"]["rollouts.kruise.io/original-spec-configuration"] = json!("{bad");
        other.put_object(spoiled);
        rollout["status"]["canaryStatus"] = json!({"currentStepIndex": 2, "currentStepState": "StepPaused"});
    });
    let out = Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--to-end", "--yes", "--timeout", "60s"])
        .run()
        .status(3)
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 1/3)")
        .stderr_has("error: nothing more was written: VirtualService/demo: its annotation rollouts.kruise.io/original-spec-configuration does not parse")
        .stderr_has("  Rollout shop/demo: written and kept: Rollout demo is approved with it (step 1/3)\n");
    assert!(!out.stderr.contains("nothing was written"), "{}", out.stderr);
    handle.join().unwrap();
    let approvals = approved_in(&writes(&server)).len();
    assert_eq!(approvals, 1, "step 2 is not approved: {:?}", writes(&server));
}

#[test]
fn status_watch_lines_print_only_the_rollouts_that_changed_when_one_is_made() {
    // A regression (trial s56): a Rollout made meanwhile that sorts first moved the others down
    // the list, and each was printed again as if it had changed (lines compared by position).
    let server = shop(1, "StepPaused").start();
    let other = server.clone_handle();
    let maker = thread::spawn(move || {
        thread::sleep(Duration::from_millis(1500));
        let mut first = other.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo").unwrap();
        first["metadata"] = json!({"name": "aaa", "namespace": NAMESPACE, "labels": {"app": "demo"}});
        other.put_object(first);
    });
    let out =
        Test::new().kubeconfig(&server).args(["status", "-w", "-l", "app=demo", "--timeout", "4s"]).run().status(1);
    maker.join().unwrap();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.iter().filter(|l| l.contains(" shop/aaa: ")).count(), 1, "{}", out.stdout);
    assert_eq!(lines.iter().filter(|l| l.contains(" shop/demo: ")).count(), 1, "{}", out.stdout);
    assert_eq!(lines.len(), 2, "demo once, then aaa: {}", out.stdout);
}

#[test]
fn status_watch_cut_short_by_a_closed_output_fails_rather_than_pass_for_its_goal() {
    // A regression (trial s56): `status -w --until-paused | head` exited 0 while the Rollout was
    // still on its way to the pause: a gate in a script passed. The message named the state last
    // shown, not the change the closed output could not show (a follow trial).
    let cut_short = |moved_to: &str| {
        let server = shop(1, "StepUpgrade").start();
        let test = Test::new().kubeconfig(&server);
        let line = format!(
            "set -o pipefail; '{BINARY}' status demo -w --until-paused --timeout 30s | {{ head -c 10 >head.out; exec touch head.done <&-; }}"
        );
        let mut child = test.command("bash", ["-c", line.as_str()]).stdin(Stdio::null()).spawn().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !test.path("head.done").exists() {
            assert!(std::time::Instant::now() < deadline, "head never finished");
            thread::sleep(Duration::from_millis(10));
        }
        // A change the follow prints, into the closed pipe.
        let mut moved = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo").unwrap();
        moved["status"]["canaryStatus"]["currentStepState"] = json!(moved_to);
        server.put_object(moved);
        let status = child.wait().unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(1), "{stderr}");
        stderr
    };
    // The pause not reached.
    let stderr = cut_short("StepTrafficRouting");
    assert!(stderr.contains("the output was closed (Broken pipe (os error 32)) while waiting for Rollout shop/demo to wait for approval, complete or fail (it is at step 1/3 StepTrafficRouting: "), "{stderr}");
    assert!(stderr.contains(": stopped following"), "{stderr}");
    // The pause reached, not shown.
    let stderr = cut_short("StepPaused");
    assert!(stderr.contains("the output was closed (Broken pipe (os error 32)) before the last change was shown: Rollout shop/demo is at step 1/3 StepPaused (waiting for approval); stopped following"), "{stderr}");
}

#[test]
fn approve_to_the_end_of_a_rollout_disabled_meanwhile_says_so() {
    // A regression (trial s56): disabling moves the generation on too, and the run said only
    // that someone had changed the Rollout, in Rust's words (`Some(1) -> Some(2)`).
    let server = shop(1, "StepPaused").start();
    // Only the spec: read before the controller acts on it (its status of generation 1).
    let handle = once_approved(&server, |rollout| {
        rollout["spec"]["disabled"] = json!(true);
        rollout["status"]["observedGeneration"] = json!(1);
    });
    let out = Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--to-end", "--yes", "--timeout", "60s"])
        .run()
        .status(1)
        .stderr_has("error: Rollout demo: the Rollout is disabled; stopped\n");
    assert!(!out.stderr.contains("changed by someone else") && !out.stderr.contains("Some("), "{}", out.stderr);
    handle.join().unwrap();
}

#[test]
fn approve_until_a_step_leaves_a_rollout_that_matches_the_selector_only_later_alone() {
    // A regression (trial s56): a Rollout made meanwhile with the selector's label stopped the
    // run as "changed by someone else (generation None -> Some(1))"; it was never claimed. The
    // follow is of the Rollouts claimed, by name: the newcomer is not followed (its deletion
    // stopped a first mend's run) nor approved.
    let server = shop(1, "StepPaused").start();
    let other = server.clone_handle();
    let handle = once_approved(&server, move |rollout| {
        let mut newcomer = rollout.clone();
        newcomer["metadata"] = json!({"name": "newcomer", "namespace": NAMESPACE, "labels": {"app": "demo"}});
        newcomer["status"] = json!({"phase": "Healthy"});
        other.put_object(newcomer);
        rollout["status"]["canaryStatus"] = json!({"currentStepIndex": 2, "currentStepState": "StepPaused"});
    });
    let out = Test::new()
        .kubeconfig(&server)
        .args(["approve", "-l", "app=demo", "--until-step", "2", "--yes", "--timeout", "60s"])
        .run()
        .success()
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)")
        .stdout_has("approved every pause up to step 2");
    assert!(!out.stdout.contains("newcomer") && !out.stderr.contains("newcomer"), "{}{}", out.stdout, out.stderr);
    handle.join().unwrap();
    let newcomer = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "newcomer").unwrap();
    assert_eq!(newcomer["status"], json!({"phase": "Healthy"}), "not written");
}

#[test]
fn approve_until_a_step_stops_when_someone_else_edits_the_rollout() {
    let server = shop(1, "StepPaused").start();
    // Someone edits the spec.
    let handle = once_approved(&server, |rollout| {
        rollout["spec"]["strategy"]["canary"]["steps"][1]["traffic"] = json!("60%");
    });
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--to-end", "--yes", "--timeout", "60s"])
        .run()
        .status(1)
        .stderr_has("error: Rollout demo was changed by someone else (its spec: generation 1 -> 2); stopped\n");
    handle.join().unwrap();
    // Step 1 was approved before the edit; nothing was done for step 2.
    let approvals = approved_in(&writes(&server)).len();
    assert_eq!(approvals, 1, "{:?}", writes(&server));
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepIndex"], 1);
    assert!(vs(&server)["spec"]["http"].to_string().find("\"weight\":60").is_none(), "step 2 was not routed");
}

#[test]
fn approve_to_the_end_stops_when_its_approval_is_undone() {
    // An approve/status review: a status write of the controller's computed before the approval
    // (last writer wins) puts the step back to StepPaused; the run waited for ever, saying
    // nothing.
    let server = shop(1, "StepPaused").start();
    let handle = once_approved(&server, |rollout| {
        rollout["status"]["canaryStatus"]["currentStepState"] = json!("StepPaused");
    });
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--to-end", "--yes", "--timeout", "60s"])
        .run()
        .status(1)
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 1/3)")
        .stderr_has("Rollout demo waits for approval at step 1/3 again, after this run approved it: a status write of the controller's computed before the approval, or someone else, undid it; stopped (`kubectl rollout-lua approve demo -n shop --expect-step 1` approves it again)");
    handle.join().unwrap();
    let approvals = approved_in(&writes(&server)).len();
    assert_eq!(approvals, 1, "not approved again unasked: {:?}", writes(&server));
}

#[test]
fn approve_to_the_end_stops_when_a_new_release_begins() {
    // A regression (audit s33 approve #3): a new version pushed meanwhile resets the release;
    // the run waited at the new release's pause at the step it had approved, holding its claim,
    // until --timeout (by default, for ever).
    let server = shop(2, "StepPaused").start();
    let mut rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo").unwrap();
    rollout["status"]["canaryStatus"]["podTemplateHash"] = json!("v2hash");
    server.put_object(rollout);
    let handle = once_approved(&server, |rollout| {
        rollout["status"]["canaryStatus"] =
            json!({"currentStepIndex": 2, "currentStepState": "StepPaused", "podTemplateHash": "v3hash"});
    });
    approved_step_2_then_stopped(
        &server,
        "Rollout demo began a new release (pod template hash v2hash -> v3hash): the one this run approved is gone; stopped",
    );
    handle.join().unwrap();
    assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "the claim is released");
}

/// `approve demo --to-end` from step 2's pause: step 2 approved, then the run stops, saying `why`.
fn approved_step_2_then_stopped(server: &FakeHandle, why: &str) {
    Test::new()
        .kubeconfig(server)
        .args(["approve", "demo", "--to-end", "--yes", "--timeout", "60s"])
        .run()
        .status(1)
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)")
        .stderr_has(why);
}

#[test]
fn approve_to_the_end_stops_when_the_rollout_goes_back_to_an_earlier_step() {
    let server = shop(2, "StepPaused").start();
    // Someone else sends the release back to step 1's pause.
    let handle = once_approved(&server, |rollout| {
        rollout["status"]["canaryStatus"] = json!({"currentStepIndex": 1, "currentStepState": "StepPaused"});
    });
    approved_step_2_then_stopped(&server, "Rollout demo went back to step 1/3; someone else is driving it; stopped");
    handle.join().unwrap();
    let approvals = approved_in(&writes(&server)).len();
    assert_eq!(approvals, 1, "step 1 is not approved again: {:?}", writes(&server));
}

#[test]
fn status_watch_ends_when_the_release_ends_or_times_out() {
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status", "demo", "-w", "--until-paused"])
        .success()
        .stdout_has(
            "shop/demo: Progressing, step 1/3 StepPaused (waiting for approval): replicas 1, matches [header user-agent=pc], pause until approved; ",
        );
    // The timeout says what was awaited.
    test.run_args(["status", "demo", "-w", "--timeout", "3s"]).status(1).stderr_has(
        "error: timed out after 3s waiting for Rollout shop/demo to complete or fail (it is at step 1/3 StepPaused: waiting for approval)\n",
    );
    let mut done = rollout(3, "Completed");
    done["status"] = json!({"phase": "Healthy", "conditions": [{"type": "Succeeded", "status": "True"}]});
    server.put_object(done);
    test.run_args(["status", "demo", "-w"]).success().stdout_has("(completed)");
    // A release rolled back ends with reason Completed too, but Succeeded False: a failure.
    let mut rolled_back = rollout(3, "Completed");
    rolled_back["status"] = json!({"phase": "Healthy", "conditions": [
        {"type": "Progressing", "status": "False", "reason": "Completed", "message": "Rollout progressing has been canceled"},
        {"type": "Succeeded", "status": "False"}]});
    server.put_object(rolled_back);
    test.run_args(["status", "demo", "-w"]).status(1).stderr_has(
        "error: Rollout shop/demo: the release did not succeed (Succeeded is False: cancelled or rolled back)",
    );
}

#[test]
fn status_watch_draws_a_live_view_on_a_terminal() {
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    let mut rollout = rollout(1, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["steps"][0]["pause"] = json!({"duration": 600});
    let started = std::time::SystemTime::now() - Duration::from_secs(60);
    rollout["status"]["canaryStatus"]["lastUpdateTime"] = json!(rollout_lua::for_tests::rfc3339(started));
    let server = serving(rollout).start();
    // The builder sets NO_COLOR: it turns colour off, not the cursor moves of the redraw.
    let out = Test::new()
        .kubeconfig(&server)
        .args(["status", "demo", "-w", "--timeout", "3s"])
        .env("TERM", "xterm")
        .on_terminal()
        .run();
    let screen = out.stdout;
    // A line per Rollout: a spinner, its name, the step as a bar, what the step does; under it
    // the timed pause counting down as a bar.
    assert!(screen.contains("shop/demo  [======>             ] step 1/3  paused: replicas 1"), "{screen:?}");
    // 9 minutes left, or a few seconds less on a slow run (the bar then a tenth full).
    assert!(
        ["[==>                 ] resumes in 8m5", "[===>                ] resumes in 8m5", "] resumes in 9m00s"]
            .iter()
            .any(|drawn| screen.contains(drawn)),
        "{screen:?}"
    );
    // Redrawn in place (back to its first row, each row written over and cleared to its end)
    // as the countdown moves, once a second, without colour.
    let drawn = screen.matches("\r\x1b[1A").count();
    assert!((2..=5).contains(&drawn), "{drawn} redraws: {screen:?}");
    assert!(!regex_like_sgr(&screen), "no colour with NO_COLOR: {screen:?}");
    // The timeout is reported on a line of its own, under the last frame.
    assert!(
        screen.ends_with(
            "\r\nerror: timed out after 3s waiting for Rollout shop/demo to complete or fail (it is at step 1/3 StepPaused: paused)\r\n"
        ),
        "{screen:?}"
    );
    // A dumb terminal moves no cursor: it gets the line-per-change form, as a log does.
    let dumb = Test::new()
        .kubeconfig(&server)
        .args(["status", "demo", "-w", "--timeout", "1s"])
        .env("TERM", "dumb")
        .on_terminal()
        .run()
        .status(1)
        .stdout_has("shop/demo: Progressing, step 1/3 StepPaused (paused)");
    assert!(!dumb.stdout.contains('\x1b'), "{:?}", dumb.stdout);
}

#[test]
fn the_live_view_stopped_by_ctrl_c_leaves_no_stale_row() {
    // A regression: the rows were padded to the last column, where the cursor waited to wrap;
    // the `^C` the terminal echoed took it to the next line, and the last frame, drawn from
    // there, left a copy of the first row above it.
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server).env("TERM", "xterm").terminal_size(24, 60);
    let mut session = test.on_terminal_session(&["status", "demo", "-w", "--timeout", "60s"], None);
    session.wait_for("step 1/3  waiting for");
    std::thread::sleep(Duration::from_millis(300));
    session.type_keys(b"\x03");
    let (status, output) = session.finish();
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{output:?}");
    let screen = crate::support::screen(&output, 24, 60);
    let rows: Vec<&String> = screen.iter().filter(|row| row.contains("shop/demo")).collect();
    assert_eq!(rows.len(), 1, "{screen:#?}");
    // Cut short, the last two columns free.
    assert!(rows[0].ends_with('…') && rows[0].chars().count() == 58, "{screen:#?}");
    let last: Vec<&str> = screen.iter().map(String::as_str).filter(|row| !row.is_empty()).collect();
    assert!(last.ends_with(&["error: interrupted (SIGINT): stopped following"]), "{screen:#?}");
}

#[test]
fn the_live_view_shows_a_line_end_in_a_match_value_escaped_on_its_rollouts_row() {
    // A regression: a match value with a line end (a regex written as a YAML block scalar) made
    // the row two screen lines, and each frame, drawn back a line a row, one line lower.
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    let mut rollout = rollout(1, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["steps"][0]["matches"][0]["headers"][0] =
        json!({"type": "RegularExpression", "name": "user-agent", "value": "pc\nmac"});
    let server = serving(rollout).start();
    let test = Test::new().kubeconfig(&server).env("TERM", "xterm").terminal_size(24, 200);
    let session = test.on_terminal_session(&["status", "demo", "-w", "--timeout", "2s"], None);
    session.wait_for("waiting for approval");
    let (status, output) = session.finish();
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{output:?}");
    // The first frame and the last one, drawn over it: one row.
    let screen = crate::support::screen(&output, 24, 200);
    let rows: Vec<&String> = screen.iter().filter(|row| row.contains("shop/demo  [")).collect();
    assert_eq!(rows.len(), 1, "{screen:#?}");
    assert!(rows[0].contains("[header user-agent~pc\\nmac], pause until approved"), "{screen:#?}");
}

#[test]
fn the_live_view_fits_the_terminal_and_counts_the_rollouts_left_out() {
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    // demo waits for approval, after four Rollouts not in a release; 4 rows.
    let named =
        |value: Value, name: &str| -> Value { serde_json::from_str(&value.to_string().replace("demo", name)).unwrap() };
    let mut server = shop(1, "StepPaused");
    for name in ["a1", "a2", "a3", "a4"] {
        let mut idle = rollout(1, "StepPaused");
        idle["status"] = json!({"phase": "Healthy"});
        server = server
            .object(named(idle, name))
            .object(named(virtual_service(), name))
            .object(named(destination_rule(), name));
    }
    let server = server.start();
    let test = Test::new().kubeconfig(&server).env("TERM", "xterm").terminal_size(4, 100);
    let session = test.on_terminal_session(&["status", "-w", "--timeout", "3s"], None);
    session.wait_for("… and 2 more Rollouts (2 not releasing)");
    let (status, output) = session.finish();
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{output:?}");
    // The first frame that counted them, drawn whole: those that matter first, then in order.
    let counted = output.find("(2 not releasing)").unwrap();
    let frame_end = counted + output[counted..].find("\x1b[J").unwrap() + "\x1b[J".len();
    let screen = crate::support::screen(&output[..frame_end], 4, 100);
    let names: Vec<&str> =
        screen.iter().map(|row| row.split_whitespace().find(|w| w.starts_with("shop/")).unwrap_or(row)).collect();
    assert_eq!(names, ["shop/demo", "shop/a1", "shop/a2", "… and 2 more Rollouts (2 not releasing)"], "{screen:#?}");
    // One not in a release has no step, and an empty bar.
    assert!(screen[1].ends_with("  shop/a1    [                    ] step -  not releasing"), "{screen:#?}");
    // The last frame, at the timeout, shows them all (scrolling), in their order.
    let last_frame = &output[output.rfind("more Rollouts").unwrap()..];
    let at = |name: &str| last_frame.find(&format!("shop/{name} ")).unwrap_or_else(|| panic!("{name}: {last_frame:?}"));
    assert!(
        at("a1") < at("a2") && at("a2") < at("a3") && at("a3") < at("a4") && at("a4") < at("demo"),
        "{last_frame:?}"
    );
}

#[test]
fn the_live_view_is_written_only_when_what_it_shows_changes() {
    // A regression: the whole view was written 10 times a second for its spinners (40 Rollouts:
    // 70 KB/s), whether or not anything changed.
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    // Each frame ends by clearing the screen under its last row.
    let frames = |server: &FakeHandle| -> (usize, String) {
        let out = Test::new()
            .kubeconfig(server)
            .args(["status", "demo", "-w", "--timeout", "3s"])
            .env("TERM", "xterm")
            .on_terminal()
            .run()
            .status(1);
        (out.stdout.matches("\x1b[J").count(), out.stdout)
    };
    // Waiting for approval, nothing moves: the first frame, and the last one left at the timeout.
    let (drawn, screen) = frames(&shop(1, "StepPaused").start());
    assert!(screen.contains("step 1/3  waiting for approval"), "{screen:?}");
    assert_eq!(drawn, 2, "{screen:?}");
    // Moved on by the controller: its spinner turns 4 times a second, no more.
    let (drawn, screen) = frames(&shop(1, "StepUpgrade").start());
    assert!(screen.contains("step 1/3  progressing"), "{screen:?}");
    assert!((4..=3 * 4 + 2).contains(&drawn), "{drawn} frames in 3s: {screen:?}");
}

/// Whether `screen` holds a colour (SGR) escape sequence: ESC [ digits and semicolons, then `m`.
fn regex_like_sgr(screen: &str) -> bool {
    screen.split("\x1b[").skip(1).any(|rest| {
        let code: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == ';').collect();
        rest[code.len()..].starts_with('m')
    })
}

#[test]
fn approve_rolls_back_when_the_rollout_moves_on_before_the_approval() {
    let args = ["approve", "demo", "--yes"];
    let last = writes_of(shop(2, "StepPaused"), &args).len();
    let server = shop(2, "StepPaused").start();
    // Right before the approval (the last write), the controller moves the Rollout on: the
    // approval conflicts, and on the retry the guard refuses.
    upgrade_before_write(&server, last, "demo");
    Test::new()
        .kubeconfig(&server)
        .args(args)
        .run()
        .status(3)
        .stderr_has("Rollout shop/demo was changed by someone else while this run wrote it")
        .stderr_has("-    currentStepState: StepPaused\n+    currentStepState: StepUpgrade")
        .stderr_has("VirtualService shop/demo: rolled back")
        .stderr_has("DestinationRule shop/demo: rolled back");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    assert!(vs(&server)["metadata"]["annotations"].is_null());
    assert_eq!(dr(&server)["spec"], destination_rule()["spec"]);
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepUpgrade");
}

#[test]
fn approve_refuses_a_new_release_waiting_at_the_same_step() {
    let args = ["approve", "demo", "--yes"];
    let last = writes_of(shop(2, "StepPaused"), &args).len();
    let server = shop(2, "StepPaused").start();
    // Right before the approval, a new version is pushed and its release comes back to step 2,
    // paused: the approval conflicts, and the step it would approve is not the one reviewed.
    someone_edits(&server, When::Before(last), Stored { name: "demo", ..ROLLOUT }, |r| {
        r["status"]["canaryStatus"]["podTemplateHash"] = json!("5f7c9d")
    });
    let out = Test::new()
        .kubeconfig(&server)
        .args(args)
        .run()
        .status(3)
        .stderr_has("Rollout shop/demo was changed by someone else while this run wrote it")
        .stderr_has("+    podTemplateHash: 5f7c9d")
        .stderr_has("VirtualService shop/demo: rolled back");
    assert!(!out.stdout.contains("demo approved"), "{}", out.stdout);
    let status = rollout_status(&server);
    assert_eq!(status["canaryStatus"]["currentStepState"], "StepPaused", "the new release is not approved");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn approve_several_rollouts_leaves_the_approved_ones_out_of_a_retry() {
    let args = ["approve", "demo", "solo", "--yes"];
    let measured = writes_of(demo_and_solo(2, "StepPaused", rollout(2, "StepPaused")), &args);
    let order = approved_in(&measured);
    assert_eq!(order.len(), 2, "{measured:?}");
    let server = demo_and_solo(2, "StepPaused", rollout(2, "StepPaused")).start();
    // The first approval goes through; the second conflicts (its Rollout was touched).
    someone_edits(&server, When::Before(measured.len()), Stored { name: &order[1], ..ROLLOUT }, |r| {
        r["metadata"]["annotations"] = json!({"touched": "yes"})
    });
    Test::new()
        .kubeconfig(&server)
        .args(args)
        .run()
        .success()
        .stderr_has(&format!(
            "conflict on Rollout shop/{}: nobody changed what this write is about; writing it again",
            order[1]
        ))
        .stdout_has(&format!("rollout.rollouts.kruise.io/{} approved (step 2/3)", order[0]))
        .stdout_has(&format!("rollout.rollouts.kruise.io/{} approved (step 2/3)", order[1]))
        .stdout_has(&format!("Next for Rollout shop/{}: step 3/3", order[0]))
        .stdout_has(&format!("Next for Rollout shop/{}: step 3/3", order[1]));
    assert_eq!(approved_in(&writes(&server)), [order[0].as_str(), &order[1], &order[1]], "the first is approved once");
    for name in ["demo", "solo"] {
        let rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, name).unwrap();
        assert_eq!(rollout["status"]["canaryStatus"]["currentStepState"], "StepReady", "{name}");
    }
}

#[test]
fn approve_several_rollouts_says_which_approvals_stay_when_a_retry_is_refused() {
    let args = ["approve", "demo", "solo", "--yes"];
    let measured = writes_of(demo_and_solo(2, "StepPaused", rollout(2, "StepPaused")), &args);
    let order = approved_in(&measured);
    let server = demo_and_solo(2, "StepPaused", rollout(2, "StepPaused")).start();
    upgrade_before_write(&server, measured.len(), &order[1]);
    Test::new()
        .kubeconfig(&server)
        .args(args)
        .run()
        .status(3)
        .stderr_has(&format!("Rollout shop/{} was changed by someone else while this run wrote it", order[1]))
        .stderr_has(&format!("VirtualService shop/{}: rolled back", order[1]))
        .stderr_has(&format!("VirtualService shop/{0}: written and kept: Rollout {0} is approved with it", order[0]));
    let vs = |name: &str| server.object("networking.istio.io", "*", "virtualservices", NAMESPACE, name).unwrap();
    // The refused Rollout's objects are back as they were.
    let refused = vs(&order[1]);
    assert_eq!(
        refused["spec"],
        json!({"hosts": [order[1]], "http": [{"route": [{"destination": {"host": order[1]}}]}]})
    );
    assert!(refused["metadata"]["annotations"].is_null());
    // The approved one keeps the routing of the step it was approved at: approved with the
    // routing of the step before would be a half-done step.
    let approved = vs(&order[0]);
    assert_eq!(approved["spec"]["http"][0]["route"][1]["weight"], 50, "{approved}");
    assert!(!approved["metadata"]["annotations"].is_null());
}

#[test]
fn approve_several_rollouts_keeps_an_approval_that_landed_when_a_later_one_is_refused() {
    let args = ["approve", "demo", "solo", "--yes"];
    let order = approved_in(&writes_of(demo_and_solo(2, "StepPaused", rollout(2, "StepPaused")), &args));
    let (first, second) = (order[0].clone(), order[1].clone());
    // The first approval lands; admission refuses the second (422).
    let refused = second.clone();
    let server = demo_and_solo(2, "StepPaused", rollout(2, "StepPaused"))
        .admission("rollouts.kruise.io", move |request| {
            if request.subresource == Some("status") && request.name == refused { Err("no".into()) } else { Ok(()) }
        })
        .start();
    Test::new()
        .kubeconfig(&server)
        .args(args)
        .run()
        .status(1)
        .stderr_has(&format!(
            "patching the status of Rollout shop/{second}: admission webhook \"rollouts.kruise.io\" denied the request: no (422 Invalid)"
        ))
        .stderr_has(&format!("VirtualService shop/{first}: written and kept: Rollout {first} is approved with it (step 2/3)"))
        .stderr_has(&format!("DestinationRule shop/{first}: written and kept: Rollout {first} is approved with it (step 2/3)"))
        .stderr_has(&format!("VirtualService shop/{second}: rolled back"))
        .stderr_has(&format!("DestinationRule shop/{second}: rolled back"))
        .stderr_has(&format!("Rollout shop/{first}: written and kept: Rollout {first} is approved with it (step 2/3)"));
    let object = |plural: &str, name: &str| server.object("networking.istio.io", "*", plural, NAMESPACE, name).unwrap();
    let state = |name: &str| {
        server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, name).unwrap()["status"]["canaryStatus"]["currentStepState"].clone()
    };
    assert_eq!((state(&first), state(&second)), (json!("StepReady"), json!("StepPaused")));
    assert_eq!(object("virtualservices", &first)["spec"]["http"][0]["route"][1]["weight"], 50, "kept");
    assert_eq!(object("virtualservices", &second)["spec"], solo_or_demo(virtual_service(), &second)["spec"]);
    assert!(object("virtualservices", &second)["metadata"]["annotations"].is_null());
    assert_eq!(object("destinationrules", &second)["spec"], solo_or_demo(destination_rule(), &second)["spec"]);
    assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "the claims are released");
}

/// `value` (made for demo) for Rollout `name`, demo or solo.
fn solo_or_demo(value: Value, name: &str) -> Value {
    if name == "solo" { solo(value) } else { value }
}

#[test]
fn approve_until_a_step_keeps_the_earlier_steps_when_a_later_step_fails() {
    // Step 2's approval is refused, or its routing is: step 1's writes, approved, stay.
    fn approval_of_step_2(request: &AdmissionRequest) -> bool {
        let step = request.old_object.map(|o| o["status"]["canaryStatus"]["currentStepIndex"].clone());
        request.subresource == Some("status") && step == Some(json!(2))
    }
    fn routing_of_step_2(request: &AdmissionRequest) -> bool {
        request.plural == "virtualservices" && request.object.to_string().contains("\"weight\":50")
    }
    /// A write admission refuses, and whether step 2 wrote the VirtualService before it.
    type Case = (fn(&AdmissionRequest) -> bool, bool);
    let cases: [Case; 2] = [(approval_of_step_2, true), (routing_of_step_2, false)];
    for (refused, rolled_back) in cases {
        for until in ["--until-step=2", "--to-end"] {
            let server = shop(1, "StepPaused")
                .admission(
                    "webhook.example.com",
                    move |request| if refused(request) { Err("no".into()) } else { Ok(()) },
                )
                .start();
            let controller = controller(&server);
            let out = Test::new()
                .kubeconfig(&server)
                .args(["approve", "demo", until, "--yes", "--timeout", "60s"])
                .run()
                .status(1)
                .stdout_has("rollout.rollouts.kruise.io/demo approved (step 1/3)")
                .stderr_has("admission webhook \"webhook.example.com\" denied the request: no (422 Invalid)")
                .stderr_has("DestinationRule shop/demo: written and kept: Rollout demo is approved with it (step 1/3) (its state before this run: ");
            drop(controller);
            let kept = "VirtualService shop/demo: written and kept: Rollout demo is approved with it (step 1/3)";
            let vs_line =
                out.stderr.lines().find(|l| l.contains(kept)).unwrap_or_else(|| panic!("{until}: {}", out.stderr));
            // Step 2's write of the VirtualService, when there was one, is said to be undone.
            assert_eq!(vs_line.contains("; a later write of it was rolled back"), rolled_back, "{until}: {vs_line}");
            assert!(!out.stdout.contains("approved (step 2/3)"), "{until}: {}", out.stdout);
            // Step 1's routing (its header match) and the stored original stay; the Rollout waits at step 2.
            let vs = vs(&server);
            assert_eq!(
                vs["spec"]["http"][0]["match"],
                json!([{"headers": {"user-agent": {"exact": "pc"}}}]),
                "{until}: {vs}"
            );
            assert!(!vs["metadata"]["annotations"]["rollouts.kruise.io/original-spec-configuration"].is_null());
            assert_eq!(dr(&server)["spec"]["subsets"][1]["name"], "canary");
            assert_eq!(
                rollout_status(&server)["canaryStatus"],
                json!({"currentStepIndex": 2, "currentStepState": "StepPaused"}),
                "{until}"
            );
            assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "{until}: the claim is released");
        }
    }
}

#[test]
fn the_report_names_the_last_step_an_object_is_kept_for() {
    // Steps 1 and 2 approved, step 3's approval refused: the VirtualService, written at each,
    // is kept for step 2 (a regression: the report named step 1, its first write), and step 3's
    // write of it rolled back.
    let mut rollout = rollout(1, "StepPaused");
    let steps = rollout["spec"]["strategy"]["canary"]["steps"].as_array_mut().unwrap();
    steps.insert(2, json!({"replicas": 2, "traffic": "80%"}));
    let server = serving(rollout)
        .admission("webhook.example.com", |request| {
            let step = request.old_object.map(|o| o["status"]["canaryStatus"]["currentStepIndex"].clone());
            if request.subresource == Some("status") && step == Some(json!(3)) { Err("no".into()) } else { Ok(()) }
        })
        .start();
    let controller = controller(&server);
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--to-end", "--yes", "--timeout", "60s"])
        .run()
        .status(1)
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/4)")
        .stderr_has("VirtualService shop/demo: written and kept: Rollout demo is approved with it (step 2/4); a later write of it was rolled back (its state before this run: ")
        // Written at step 1 only.
        .stderr_has("DestinationRule shop/demo: written and kept: Rollout demo is approved with it (step 1/4)");
    drop(controller);
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][1]["weight"], 50, "step 2's routing stays");
}

#[test]
fn approve_until_a_step_refuses_a_rollout_already_past_it() {
    let server = shop(3, "StepPaused").start();
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--until-step", "2", "--yes", "--timeout", "60s"])
        .run()
        .status(3)
        .stderr_has("\"demo\" is already at step 3/3, past step 2");
    assert_eq!(writes(&server), Vec::<String>::new());
    // A step the Rollout does not have (a regression: taken as --to-end), and no step 0.
    let until =
        |step: &str| Test::new().kubeconfig(&server).args(["approve", "demo", "--until-step", step, "--yes"]).run();
    until("9").status(3).stderr_has("\"demo\" has 3 steps: there is no step 9 (--until-step;");
    until("0").status(1).stderr_has("invalid value '0' for '--until-step <N>'");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn approve_until_a_step_stops_past_it_when_its_pause_is_timed() {
    let mut rollout = rollout(1, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["steps"] = json!([
        {"replicas": 1, "matches": [{"headers": [{"type": "Exact", "name": "user-agent", "value": "pc"}]}]},
        {"replicas": "50%", "traffic": "50%", "pause": {"duration": 1}},
        {"replicas": "80%", "traffic": "80%"},
        {"replicas": "100%"}
    ]);
    let server = serving(rollout).start();
    let controller = controller_of(&server, &["demo"]);
    let out = Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--until-step", "2", "--yes", "--timeout", "60s"])
        .run();
    drop(controller);
    let out =
        out.success().stdout_has("approved (step 1/4)").stdout_has("past step 2: nothing more to approve up to it\n");
    assert!(!out.stdout.contains("approved (step 3/4)"), "{}", out.stdout);
    assert_eq!(approved_in(&writes(&server)), ["demo"], "step 3's pause is not approved");
    assert_eq!(
        rollout_status(&server)["canaryStatus"],
        json!({"currentStepIndex": 3, "currentStepState": "StepPaused"})
    );
}

#[test]
fn approve_to_the_end_goes_on_when_one_rollout_completes_first() {
    let mut one_step = rollout(1, "StepPaused");
    one_step["spec"]["strategy"]["canary"]["steps"].as_array_mut().unwrap().truncate(1);
    let server = demo_and_solo(1, "StepPaused", one_step).start();
    let controller = controller_of(&server, &["demo", "solo"]);
    let out = Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "solo", "--to-end", "--yes", "--timeout", "30s"])
        .run();
    drop(controller);
    out.success()
        .stdout_has("rollout.rollouts.kruise.io/solo approved (step 1/1)")
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)")
        .stdout_has("the release completed");
    let mut patched = approved_in(&writes(&server));
    patched.sort();
    // demo's last step, at "100%", completes without a pause.
    assert_eq!(patched, ["demo", "demo", "solo"], "solo is approved once, and only while paused");
}

#[test]
fn status_watch_until_paused_ends_when_the_others_are_done() {
    let mut done = rollout(3, "Completed");
    done["status"] = json!({"phase": "Healthy", "conditions": [{"type": "Succeeded", "status": "True"}]});
    let server = demo_and_solo(1, "StepPaused", done).start();
    Test::new()
        .kubeconfig(&server)
        .args(["status", "demo", "solo", "-w", "--until-paused", "--timeout", "10s"])
        .run()
        .success()
        .stdout_has("shop/demo: Progressing, step 1/3 StepPaused (waiting for approval)");
}

#[test]
fn status_watch_times_out_with_a_line_per_rollout_awaited() {
    let server = demo_and_solo(1, "StepPaused", rollout(2, "StepUpgrade")).start();
    Test::new()
        .kubeconfig(&server)
        .args(["status", "-w", "--timeout", "2s"])
        .run()
        .status(1)
        .stderr_has(
            "error: timed out after 2s waiting for 2 Rollouts to complete or fail:\n  shop/demo  step 1/3 StepPaused (waiting for approval)\n  shop/solo  step 2/3 StepUpgrade (progressing)\n",
        );
}

#[test]
fn approve_succeeds_when_only_the_preview_of_the_next_step_fails() {
    // The script fails on 50% traffic: step 2, which the preview plans after step 1 is approved.
    let script = "if obj.canaryWeight == 50 then error('no script for 50%') end\n\
                  obj.data.spec.hosts = {'demo', 'weight' .. obj.canaryWeight}\nreturn obj.data\n";
    let server = shop(1, "StepPaused").start();
    approve_with_script(&server, script)
        .success()
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 1/3)")
        .stderr_has("warning: could not preview the next step of Rollout demo: ")
        .stderr_has("no script for 50%");
    assert_eq!(vs(&server)["spec"]["hosts"], json!(["demo", "weight-1"]));
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady");
}

#[test]
fn approve_survives_a_stderr_it_cannot_write() {
    // The conflict is reported on stderr: a closed pipe, then a full device.
    let closed = || Stdio::piped();
    let full = || Stdio::from(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap());
    for (what, stderr) in [("closed", closed as fn() -> Stdio), ("full", full)] {
        if what == "full" && !std::path::Path::new("/dev/full").exists() {
            crate::support::skip("the full stderr: /dev/full not there");
            continue;
        }
        let server = shop(2, "StepPaused").start();
        server.conflict_next_writes(1);
        let test = Test::new().kubeconfig(&server);
        let mut child = test.command(BINARY, ["approve", "demo", "--yes"]).stderr(stderr()).spawn().unwrap();
        drop(child.stderr.take());
        drop(child.stdin.take());
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "stderr {what}: {stdout}");
        assert!(stdout.contains("rollout.rollouts.kruise.io/demo approved (step 2/3)"), "stderr {what}: {stdout}");
        assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady");
    }
}

#[test]
fn approve_until_a_step_ends_on_ctrl_c_at_the_prompt() {
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    let server = shop(1, "StepPaused").start();
    let approve = ["approve", "demo", "--until-step", "2", "--timeout", "60s"];
    // Ctrl-C at the prompt (the terminal makes it a SIGINT), then a "yes" nobody meant.
    let (status, screen) = Test::new()
        .kubeconfig(&server)
        .interact(&approve, &[(Some("Only 'yes' goes ahead: "), b"\x03"), (None, b"yes\n")]);
    assert!(status.is_some_and(|s| !s.success()), "{status:?}\n{screen}");
    assert!(!screen.contains("demo approved"), "{screen}");
    assert_eq!(writes(&server), Vec::<String>::new(), "{screen}");
}

#[test]
fn approve_until_a_step_ends_on_ctrl_c_when_asked_again_after_a_conflict() {
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    let server = shop(1, "StepPaused").start();
    // Someone edits the VirtualService between our read and our first write to it (the claim
    // is the first write of all).
    someone_edits(&server, When::Before(2), VIRTUAL_SERVICE, |vs| {
        vs["spec"]["hosts"] = json!(["demo", "demo.example.com"])
    });
    let approve = ["approve", "demo", "--until-step", "2", "--timeout", "60s"];
    // Listening for Ctrl-C (to stop following) must not keep a Ctrl-C at the second question
    // waiting for Enter.
    let (status, screen) = Test::new().kubeconfig(&server).interact(
        &approve,
        &[
            (Some("Only 'yes' goes ahead: "), b"yes\n"),
            (Some("Overwrite their change? Only 'yes' goes ahead: "), b"\x03"),
        ],
    );
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{screen}");
    assert!(screen.contains("interrupted (SIGINT)"), "{screen}");
    assert!(vs(&server)["metadata"]["annotations"].is_null(), "nothing written: {screen}");
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
}

#[test]
fn sigterm_at_the_prompt_leaves_the_terminal_as_it_was() {
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    let server = shop(1, "StepPaused").start();
    // The prompt reads keys with the terminal in raw mode; `stty -a` runs on the same terminal
    // once the binary has ended.
    let test = Test::new().kubeconfig(&server);
    let session =
        test.on_terminal_session(&["approve", "demo", "--until-step", "2", "--timeout", "60s"], Some("stty -a"));
    session.wait_for("Only 'yes' goes ahead: ");
    let pid = session.binary_pid().expect("the binary's process");
    assert!(Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap().success());
    let (status, screen) = session.finish();
    assert!(status.is_some(), "{screen}");
    assert!(screen.contains("interrupted (SIGTERM)"), "{screen}");
    let modes: Vec<&str> = screen[screen.find("speed ").expect("stty's output")..].split_whitespace().collect();
    for mode in ["icanon", "echo", "isig"] {
        assert!(modes.contains(&mode), "{mode}: {modes:?}");
    }
    assert_eq!(writes(&server), Vec::<String>::new(), "{screen}");
}

#[test]
fn a_signal_ignored_at_start_stays_ignored() {
    // As under nohup (and a non-interactive shell's `cmd &` for SIGINT): the hang-up of a dropped
    // SSH session leaves the run going, and it ends on its --timeout.
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn_ignoring("INT HUP", &["status", "demo", "-w", "--timeout", "3s"]);
    child.wait_for_stdout("shop/demo: Progressing, step 1/3 StepPaused");
    child.signal("HUP");
    child.signal("INT");
    child.finish_within(Duration::from_secs(30)).status(1).stderr_has("timed out after 3s");
    // approve --to-end, started under nohup and following: a hang-up is not taken in (it would
    // say so), SIGTERM still is.
    let child = test.spawn_ignoring("HUP", &["approve", "demo", "--to-end", "--yes", "--timeout", "60s"]);
    child.wait_for_stdout("shop/demo: Progressing, step 1/3 StepReady");
    child.signal("HUP");
    thread::sleep(Duration::from_millis(500));
    child.first_signal("TERM");
    let out = child.finish_within(Duration::from_secs(30)).status(143).stderr_has("interrupted (SIGTERM)");
    assert!(!out.stderr.contains("SIGHUP"), "{}", out.stderr);
    assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "the claim is released");
}

#[test]
fn following_stops_with_an_error_when_the_release_fails() {
    let server = shop(1, "StepPaused").start();
    // The release is cancelled.
    let handle = once_approved(&server, |rollout| {
        rollout["status"]["conditions"] = json!([{"type": "Progressing", "status": "True", "reason": "Cancelling"}]);
    });
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--to-end", "--yes", "--timeout", "60s"])
        .status(1)
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 1/3)")
        .stderr_has("the release is being rolled back (Cancelling)");
    handle.join().unwrap();
    let approvals = approved_in(&writes(&server)).len();
    assert_eq!(approvals, 1, "nothing approved after the failure: {:?}", writes(&server));
    test.run_args(["status", "demo", "-w", "--timeout", "10s"])
        .status(1)
        .stderr_has("the release is being rolled back (Cancelling)");
}

/// Right before the server's `write`-th write, the controller moves Rollout `name` on to
/// StepUpgrade (so an approval of it conflicts, and a retry's guard refuses).
fn upgrade_before_write(server: &FakeHandle, write: usize, name: &str) {
    someone_edits(server, When::Before(write), Stored { name, ..ROLLOUT }, |r| {
        r["status"]["canaryStatus"]["currentStepState"] = json!("StepUpgrade")
    });
}

/// Following with a watch, as `kubectl get -w` does.
mod watching {
    use super::*;
    use fake_apiserver::{LoggedRequest, ReplyFault, Requests, Stage};
    use std::process::Child;
    use std::time::Instant;

    /// `status demo -w --until-paused` in the background.
    fn following(server: &FakeHandle) -> (Test, Child) {
        let test = Test::new().kubeconfig(server);
        let args = ["status", "demo", "-w", "--until-paused", "--timeout", "60s"];
        let child = test.command(BINARY, args).stdin(Stdio::null()).spawn().expect("run the binary");
        (test, child)
    }

    fn param<'a>(request: &'a LoggedRequest, name: &str) -> Option<&'a str> {
        request.query_params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The watches of Rollouts (those of the gateway objects aside).
    fn watches(server: &FakeHandle) -> Vec<LoggedRequest> {
        let watch = |r: &LoggedRequest| param(r, "watch").is_some_and(|w| w == "true" || w == "1");
        server.requests().into_iter().filter(|r| watch(r) && r.path.ends_with("/rollouts")).collect()
    }

    /// The reads of Rollout demo itself (a GET each time everything is read again).
    fn reads(server: &FakeHandle) -> usize {
        server.requests().iter().filter(|r| r.method == "GET" && r.path.ends_with("/rollouts/demo")).count()
    }

    #[track_caller]
    fn wait_for(what: &str, condition: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !condition() {
            assert!(Instant::now() < deadline, "never: {what}");
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn edit_rollout(server: &FakeHandle, edit: impl FnOnce(&mut Value)) -> Value {
        let mut rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo").unwrap();
        edit(&mut rollout);
        server.put_object(rollout)
    }

    fn pause(server: &FakeHandle) {
        edit_rollout(server, |r| r["status"]["canaryStatus"]["currentStepState"] = json!("StepPaused"));
    }

    fn finished(child: Child) -> crate::support::Output {
        let output = child.wait_with_output().unwrap();
        crate::support::Output {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    #[test]
    fn a_change_of_one_rollout_reads_again_only_what_that_rollout_needs() {
        let server = demo_and_solo(2, "StepPaused", rollout(1, "StepUpgrade")).object(solo(deployment(4))).start();
        let test = Test::new().kubeconfig(&server);
        let args = ["status", "-w", "--until-paused", "--timeout", "60s"];
        let child = test.command(BINARY, args).stdin(Stdio::null()).spawn().expect("run the binary");
        wait_for("a watch", || !watches(&server).is_empty());
        let edit_solo = |edit: &dyn Fn(&mut Value)| {
            let mut solo = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "solo").unwrap();
            edit(&mut solo);
            server.put_object(solo);
        };
        edit_solo(&|r| r["status"]["message"] = json!("still upgrading"));
        wait_for("solo read again", || gets(&server, "deployments", "solo") == 2);
        edit_solo(&|r| r["status"]["canaryStatus"]["currentStepState"] = json!("StepPaused"));
        finished(child)
            .success()
            .stdout_has("shop/demo: Progressing, step 2/3 StepPaused (waiting for approval)")
            .stdout_has("shop/solo: Progressing, step 1/3 StepPaused (waiting for approval)");
        assert_eq!(gets(&server, "deployments", "demo"), 1, "demo's workload only at the first read");
        assert_eq!(gets(&server, "virtualservices", "demo"), 1, "demo's objects only at the first read");
        assert_eq!(gets(&server, "deployments", "solo"), 3, "solo's workload at each read of it");
    }

    #[test]
    fn status_watch_with_output_prints_each_rollouts_document_when_it_changes() {
        let server = shop(1, "StepUpgrade").start();
        let test = Test::new().kubeconfig(&server);
        let running = test.spawn(&["status", "demo", "-w", "-o", "json", "--timeout", "5s"]);
        running.wait_for_stdout("}\n");
        pause(&server);
        // Waiting for approval is not the end without --until-paused: the timeout is, exit 1.
        let out = running.finish_within(Duration::from_secs(30)).status(1).stderr_has(
            "error: timed out after 5s waiting for Rollout shop/demo to complete or fail (it is at step 1/3 StepPaused: waiting for approval)\n",
        );
        // JSON Lines: the first read, then the change; each `status -o json`'s entry.
        let documents: Vec<Value> = out
            .stdout
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line:?}")))
            .collect();
        let progress: Vec<(&Value, &Value, &Value)> =
            documents.iter().map(|d| (&d["name"], &d["state"], &d["progress"]["kind"])).collect();
        assert_eq!(
            progress,
            [
                (&json!("demo"), &json!("StepUpgrade"), &json!("progressing")),
                (&json!("demo"), &json!("StepPaused"), &json!("waitingForApproval"))
            ],
            "{:?}",
            out.stdout
        );
        let once = test.run_args(["status", "demo", "-o", "json"]).success().json();
        assert_eq!(documents[1], once[0]);
        // --until-paused ends it at once, exit 0; YAML is a document after each `---`.
        let yaml = test.run_args(["status", "demo", "-w", "-o", "yaml", "--until-paused"]).success().stdout;
        assert!(yaml.starts_with("---\n") && yaml.matches("---").count() == 1, "{yaml}");
        assert!(yaml.contains("\nname: demo\nnamespace: shop\n"), "{yaml}");
    }

    #[test]
    fn status_watch_with_output_draws_no_live_view() {
        if !terminal_available() {
            return crate::support::skip("script (util-linux) not installed");
        }
        let server = shop(1, "StepUpgrade").start();
        let out = Test::new()
            .kubeconfig(&server)
            .args(["status", "demo", "-w", "-o", "json", "--timeout", "2s"])
            .env("TERM", "xterm")
            .on_terminal()
            .run()
            .status(1);
        // Stdout and stderr on one terminal: the document, then the error; no cursor moved.
        assert!(
            out.stdout.starts_with('{') && out.stdout.contains(",\"name\":\"demo\",\"namespace\":\"shop\","),
            "{:?}",
            out.stdout
        );
        assert!(!out.stdout.contains('\x1b'), "{:?}", out.stdout);
        assert!(out.stdout.ends_with("}\r\nerror: timed out after 2s waiting for Rollout shop/demo to complete or fail (it is at step 1/3 StepUpgrade: progressing)\r\n"), "{:?}", out.stdout);
    }

    #[test]
    fn a_change_is_followed_through_the_watch_and_a_dropped_watch_resumes_where_it_was() {
        let server = shop(1, "StepUpgrade").start();
        let listed = server.resource_version();
        let (_test, child) = following(&server);
        wait_for("a watch", || !watches(&server).is_empty());
        let first = &watches(&server)[0];
        assert_eq!(param(first, "fieldSelector"), Some("metadata.name=demo"));
        assert_eq!(param(first, "resourceVersion"), Some(listed.as_str()));
        // Nothing changes: nothing is read again (a poll would read every 2 s).
        thread::sleep(Duration::from_secs(3));
        assert_eq!(reads(&server), 1, "one read, then only the watch");
        // A change: read again at once.
        let changed = edit_rollout(&server, |r| r["status"]["message"] = json!("still upgrading"));
        wait_for("a read after the change", || reads(&server) == 2);
        // The connection drops: the watch resumes from the last version it saw.
        server.drop_watches();
        wait_for("a second watch", || watches(&server).len() == 2);
        assert_eq!(param(&watches(&server)[1], "resourceVersion"), changed["metadata"]["resourceVersion"].as_str());
        pause(&server);
        finished(child).success().stdout_has("shop/demo: Progressing, step 1/3 StepPaused (waiting for approval)");
    }

    /// Another object changes (the watch of demo does not see it), then the history before it is
    /// compacted away and the watches end: resuming from the version seen is no longer possible.
    /// Waits for the watch from a fresh list.
    fn expire_the_version_seen(server: &FakeHandle) {
        // An object nothing follows moves the version on (an edit of a gateway object would
        // be seen by its watch, a change of the Rollout to read, racing what the test faults).
        let unrelated =
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "unrelated", "namespace": NAMESPACE}});
        server.put_object(unrelated);
        server.compact();
        let compacted = server.resource_version();
        server.drop_watches();
        wait_for("a watch from the fresh list", || {
            watches(server).iter().any(|w| param(w, "resourceVersion") == Some(compacted.as_str()))
        });
    }

    #[test]
    fn a_watch_whose_version_expired_starts_over_from_a_fresh_list() {
        let server = shop(1, "StepUpgrade").start();
        let (_test, child) = following(&server);
        wait_for("a watch", || !watches(&server).is_empty());
        expire_the_version_seen(&server);
        pause(&server);
        finished(child).success().stdout_has("(waiting for approval)");
    }

    #[test]
    fn a_signal_while_a_read_hangs_stops_following_at_once() {
        let server = shop(1, "StepUpgrade").start();
        let test = Test::new().kubeconfig(&server);
        let args = ["status", "demo", "-w", "--request-timeout", "0"];
        let mut child = test.command(BINARY, args).stdin(Stdio::null()).spawn().expect("run the binary");
        wait_for("a watch", || !watches(&server).is_empty());
        // The read after the next change is held: with no request timeout it never ends.
        let reread = Requests::Matching(Rule::new(["get"]).resources(["rollouts"]));
        let held = server.pause(reread, 1, Stage::BeforeStore);
        edit_rollout(&server, |r| r["status"]["message"] = json!("still upgrading"));
        assert!(held.wait_until_held(Duration::from_secs(20)), "the read after the change");
        assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
        // Loose: only "not waiting for the read" matters. Still running after 10 s: killed.
        let signalled = Instant::now();
        while child.try_wait().unwrap().is_none() && signalled.elapsed() < Duration::from_secs(10) {
            thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        finished(child).status(130).stderr_has("stopped following");
    }

    #[test]
    fn a_watch_is_ended_by_the_server_within_the_request_timeout_or_cut_off_and_resumed() {
        let server = shop(1, "StepUpgrade").start();
        // The first watch's reply trickles in and does not end (a server or proxy that ignores
        // timeoutSeconds): the request timeout cuts it off, and the watch is opened again.
        let watch = Requests::Matching(Rule::new(["watch"]).resources(["rollouts"]));
        server.reply_fault(watch, 1, Stage::BeforeStore, ReplyFault::Drip);
        let test = Test::new().kubeconfig(&server);
        let args = ["status", "demo", "-w", "--until-paused", "--timeout", "60s", "--request-timeout", "2s"];
        let child = test.command(BINARY, args).stdin(Stdio::null()).spawn().expect("run the binary");
        // The later ones the server ends after half the limit, and they are opened again too.
        wait_for("two watches after the cut one", || watches(&server).len() >= 3);
        assert!(watches(&server).iter().all(|w| param(w, "timeoutSeconds") == Some("1")), "{:?}", watches(&server));
        pause(&server);
        let output = finished(child).success().stdout_has("(waiting for approval)");
        assert!(!output.stderr.contains("timed out"), "{}", output.stderr);
    }

    #[test]
    fn rollouts_are_polled_where_watching_them_is_forbidden() {
        let server = shop(1, "StepUpgrade").deny(Rule::new(["watch"]).resources(["rollouts"])).start();
        let (_test, child) = following(&server);
        wait_for("a read every 2 s", || reads(&server) >= 3);
        pause(&server);
        finished(child)
            .success()
            .stderr_has("watching Rollouts is forbidden")
            .stderr_has("reading the Rollouts every 2s instead")
            .stdout_has("(waiting for approval)");
    }

    #[test]
    fn gateway_objects_changed_more_often_than_the_full_read_do_not_put_it_off() {
        // VirtualService demo changes every 1.5 s: each change reads Rollout demo again (its
        // workload among its objects), and cuts short the wait for a change; solo, which routes
        // through other objects, is read again only with everything, 30 s after the first read
        // (`RESYNC`), and must be all the same.
        let server = demo_and_solo(2, "StepPaused", rollout(1, "StepUpgrade")).object(solo(deployment(4))).start();
        let started = Instant::now();
        let (_test, running) = following_with(&server, &["status", "-w", "--timeout", "60s"]);
        let watched = || {
            let watch = |r: &LoggedRequest| param(r, "watch").is_some_and(|w| w == "true");
            server.requests().iter().any(|r| watch(r) && r.path.ends_with("/virtualservices"))
        };
        wait_for("the VirtualServices watched", watched);
        // Everything was read before the VirtualServices' watch was opened.
        let first_read = Instant::now();
        assert_eq!((gets(&server, "deployments", "demo"), gets(&server, "deployments", "solo")), (1, 1));
        let mut edits = 0;
        while gets(&server, "deployments", "solo") == 1 {
            assert!(
                first_read.elapsed() < Duration::from_secs(38),
                "solo not read again after {:?}, with {edits} changes of VirtualService demo meanwhile",
                started.elapsed()
            );
            let mut edited = server.object("networking.istio.io", "*", "virtualservices", NAMESPACE, "demo").unwrap();
            edited["metadata"]["annotations"] = json!({"edited": edits.to_string()});
            server.put_object(edited);
            edits += 1;
            thread::sleep(Duration::from_millis(1500));
        }
        let reread = started.elapsed();
        assert!(reread > Duration::from_secs(25), "everything read again after {reread:?}: not the full read");
        // The changes were seen as they came, each one a read of demo (a few may come together).
        let demo_reads = gets(&server, "deployments", "demo");
        assert!(demo_reads > edits / 2, "demo read {demo_reads} times for {edits} changes");
        running.signal("INT");
        running.finish_within(Duration::from_secs(20));
    }

    #[test]
    fn gateway_objects_whose_watch_is_forbidden_are_read_with_everything_and_said_once() {
        let server = shop(1, "StepUpgrade").deny(Rule::new(["watch"]).resources(["virtualservices"])).start();
        let test = Test::new().kubeconfig(&server);
        let running = test.spawn(&["status", "demo", "-w", "--timeout", "4s"]);
        let watched = |plural: &str| {
            let watch = |r: &LoggedRequest| param(r, "watch").is_some_and(|w| w == "true");
            server.requests().iter().filter(|r| watch(r) && r.path.ends_with(plural)).count()
        };
        wait_for("the DestinationRules watched", || watched("/destinationrules") == 1);
        // Following goes on (to the timeout), the VirtualServices not asked to be watched again.
        let out = running.finish_within(Duration::from_secs(30)).status(1).stderr_has("error: timed out after 4s");
        let note = "watching virtualservices.networking.istio.io in namespace shop is forbidden (";
        assert_eq!(out.stderr.matches(note).count(), 1, "{}", out.stderr);
        assert!(out.stderr.contains("): reading them again with everything every 30s instead\n"), "{}", out.stderr);
        assert!(!out.stderr.contains("destinationrules"), "{}", out.stderr);
        assert_eq!(watched("/virtualservices"), 1);
    }

    #[test]
    fn a_gateway_object_that_could_not_be_placed_is_watched_all_the_same() {
        // VirtualService demo is missing: demo's objects cannot be placed. Its resource is
        // watched all the same, so that its making is seen at once, not at the next full read
        // (30s after the first; `wait_for` gives up after 20s).
        let server = shop(1, "StepUpgrade").start();
        let vs = server.delete_object("networking.istio.io", "virtualservices", NAMESPACE, "demo").unwrap();
        let (_test, running) = following_with(&server, &["status", "demo", "-w", "--timeout", "60s"]);
        let watched = || {
            let watch = |r: &LoggedRequest| param(r, "watch").is_some_and(|w| w == "true");
            server.requests().iter().any(|r| watch(r) && r.path.ends_with("/virtualservices"))
        };
        wait_for("the VirtualServices watched", watched);
        assert_eq!(gets(&server, "virtualservices", "demo"), 1);
        server.put_object(vs);
        wait_for("demo read again", || gets(&server, "virtualservices", "demo") == 2);
        running.signal("INT");
        running.finish_within(Duration::from_secs(20)).stdout_has("cannot place its objects");
    }

    /// The watches of Rollouts, and the reads of Rollout demo.
    fn watch_requests() -> Requests {
        Requests::Matching(Rule::new(["watch"]).resources(["rollouts"]))
    }

    fn rollout_gets() -> Requests {
        Requests::Matching(Rule::new(["get"]).resources(["rollouts"]).names(["demo"]))
    }

    /// `status … -w` (or `approve … --to-end`) in the background, once it follows with a watch
    /// (the test keeps its home and kubeconfig).
    fn following_with(server: &FakeHandle, args: &[&str]) -> (Test, crate::support::Running) {
        let test = Test::new().kubeconfig(server);
        let running = test.spawn(args);
        wait_for("a watch", || !watches(server).is_empty());
        (test, running)
    }

    fn delete_rollout(server: &FakeHandle) {
        server.delete_object("rollouts.kruise.io", "rollouts", NAMESPACE, "demo").expect("Rollout demo");
    }

    #[test]
    fn a_rollout_deleted_while_followed_ends_following_with_an_error() {
        // A regression: with every followed Rollout gone, none was left unsettled, and following
        // ended with exit 0 (approve: "the release completed").
        let cases: [(&[&str], &str); 3] = [
            (&["status", "-w", "--timeout", "60s"], "error: Rollout shop/demo was deleted\n"),
            (
                &["status", "-w", "-l", "app=demo", "--timeout", "60s"],
                "error: Rollout shop/demo was deleted, or its labels no longer match the selector app=demo\n",
            ),
            // A sequence follows the Rollouts it claimed, by name.
            (
                &["approve", "-l", "app=demo", "--to-end", "--yes", "--timeout", "60s"],
                "error: Rollout shop/demo was deleted\n",
            ),
        ];
        for (args, error) in cases {
            let server = shop(1, "StepPaused").start();
            let (_test, running) = following_with(&server, args);
            delete_rollout(&server);
            let output = running.finish_within(Duration::from_secs(30)).status(1).stderr_has(error);
            assert!(!output.stdout.contains("the release completed"), "{args:?}: {}", output.stdout);
        }
    }

    #[test]
    fn a_rollout_named_and_deleted_while_followed_is_said_to_be_deleted() {
        // A regression: a Rollout named on the command line that was deleted while followed
        // ended following with a bare `rollouts.rollouts.kruise.io "demo" not found`.
        let deleted = "error: Rollout shop/demo was deleted\n";
        let ended = |running: crate::support::Running, args: &[&str]| {
            let output = running.finish_within(Duration::from_secs(30)).status(1).stderr_has(deleted);
            assert!(!output.stderr.contains("not found"), "{args:?}: {}", output.stderr);
        };
        // During the watch.
        for args in [
            &["status", "demo", "-w", "--timeout", "60s"][..],
            &["approve", "demo", "--to-end", "--yes", "--timeout", "60s"],
        ] {
            let server = shop(1, "StepPaused").start();
            let (_test, running) = following_with(&server, args);
            delete_rollout(&server);
            ended(running, args);
        }
        let args = ["status", "demo", "-w", "--timeout", "60s"];
        // Between the first read and the watch: the watch, opened from the version listed
        // before the read, tells of the deletion.
        let server = shop(1, "StepPaused").start();
        let watch = server.pause(watch_requests(), 1, Stage::BeforeStore);
        let test = Test::new().kubeconfig(&server);
        let running = test.spawn(&args);
        assert!(watch.wait_until_held(Duration::from_secs(20)), "the first watch");
        delete_rollout(&server);
        watch.release();
        ended(running, &args);
        // While a read that failed on the way waits to be tried again.
        let server = shop(1, "StepPaused").start();
        let (_test, running) = following_with(&server, &args);
        server.storm(rollout_gets(), None, 503, Some(3600));
        edit_rollout(&server, |r| r["status"]["message"] = json!("still paused"));
        running.wait_for_stderr("following goes on");
        delete_rollout(&server);
        server.clear_faults();
        ended(running, &args);
        // A name not there at the first read is not found, as kubectl says it.
        let test = Test::new().kubeconfig(&server);
        for args in [&["status", "demo"][..], &["status", "demo", "-w"]] {
            test.run_args(args)
                .status(1)
                .stderr_has("error: rollouts.rollouts.kruise.io \"demo\" not found in namespace shop\n");
        }
    }

    #[test]
    fn a_rollout_made_again_while_followed_ends_following_with_an_error() {
        // A regression: a Rollout deleted and made again under its name, not yet in a release,
        // counted as done.
        for args in [
            &["status", "demo", "-w", "--timeout", "60s"][..],
            &["approve", "demo", "--to-end", "--yes", "--timeout", "60s"],
        ] {
            let server = shop(1, "StepPaused").start();
            let (_test, running) = following_with(&server, args);
            // The read after the deletion is held until the Rollout is made again.
            let reread = server.pause(rollout_gets(), 1, Stage::BeforeStore);
            let first = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo").unwrap();
            delete_rollout(&server);
            assert!(reread.wait_until_held(Duration::from_secs(20)), "{args:?}: the read after the deletion");
            let mut again = rollout(1, "StepPaused");
            again["status"] = json!({});
            let made = server.put_object(again);
            reread.release();
            let (was, now) = (&first["metadata"]["uid"], &made["metadata"]["uid"]);
            assert_ne!(was, now);
            let error = format!(
                "error: Rollout shop/demo was deleted and made again (uid {}, now {}): its release is not the one followed\n",
                was.as_str().unwrap(),
                now.as_str().unwrap()
            );
            let output = running.finish_within(Duration::from_secs(30)).status(1).stderr_has(&error);
            assert!(!output.stdout.contains("the release completed"), "{args:?}: {}", output.stdout);
        }
    }

    #[test]
    fn following_nothing_is_an_error_as_kubectl_wait_says_it() {
        // A regression: a selector or namespace without Rollouts passed `status -w` at once.
        let server = shop(1, "StepPaused").start();
        let test = Test::new().kubeconfig(&server);
        let cases: [(&[&str], &str); 3] = [
            (&["status", "-w", "-l", "app=zzz"], "no Rollouts in namespace shop match the selector app=zzz"),
            (&["status", "-w", "-n", "other", "--until-paused"], "no Rollouts in namespace other"),
            (&["status", "-w", "-A", "-l", "app=zzz"], "no Rollouts in any namespace match the selector app=zzz"),
        ];
        for (args, what) in cases {
            test.run_args(args)
                .status(1)
                .stdout_is("")
                .stderr_has(&format!("error: no matching resources found: {what}\n"));
        }
        test.run_args(["approve", "-l", "app=zzz", "--to-end", "--yes"])
            .status(1)
            .stderr_has("error: no Rollouts in namespace shop match the selector");
        assert_eq!(writes(&server), Vec::<String>::new());
    }

    /// Edits Rollout demo to wait for approval once the binary has followed it with a watch,
    /// and returns how the run ended: the run with `fault` armed after its first watch.
    fn paused_under(server: &FakeHandle, fault: impl FnOnce(&FakeHandle)) -> crate::support::Output {
        let (_test, running) = following_with(server, &["status", "demo", "-w", "--until-paused", "--timeout", "60s"]);
        fault(server);
        pause(server);
        running.finish_within(Duration::from_secs(60)).success().stdout_has("(waiting for approval)")
    }

    const RETRYING: &str = "; following goes on: retrying after 1s, then up to every 30s, until it works, --timeout passes or a signal stops it\n";

    #[test]
    fn following_outlasts_a_lost_reopen_of_the_watch_a_garbled_list_and_a_garbled_read() {
        // Regressions: each of these ended following (exit 1) at once. (A lost LIST or read is
        // asked again by the request itself; a garbled one is not.)
        let server = shop(1, "StepUpgrade").start();
        let output = paused_under(&server, |server| {
            server.reply_fault(watch_requests(), 1, Stage::BeforeStore, ReplyFault::Lost);
            server.drop_watches();
            wait_for("the watch opened again after the lost one", || watches(server).len() >= 3);
        });
        let lost = "warning: watching rollouts.rollouts.kruise.io at http://127.0.0.1:";
        output.stderr_has(lost).stderr_has(RETRYING);

        // The version seen has expired, and the LIST for a fresh one is lost. The gateway
        // objects are not watched here: their watches' versions expire too, and the change that
        // reports would cut the Rollouts' LIST off before its failure is seen (it is made again).
        let gateways = Rule::new(["list", "watch"]).resources(["virtualservices", "destinationrules"]);
        let server = shop(1, "StepUpgrade").deny(gateways).start();
        let output = paused_under(&server, |server| {
            let lists = Requests::Matching(Rule::new(["list"]).resources(["rollouts"]));
            server.reply_fault(lists, 1, Stage::BeforeStore, ReplyFault::Garbled);
            expire_the_version_seen(server);
        });
        output.stderr_has("warning: listing rollouts.rollouts.kruise.io at http://127.0.0.1:").stderr_has(RETRYING);

        // The read after the change is garbled.
        let server = shop(1, "StepUpgrade").start();
        let output = paused_under(&server, |server| {
            server.reply_fault(rollout_gets(), 1, Stage::BeforeStore, ReplyFault::Garbled);
        });
        let output = output
            .stderr_has("warning: reading rollouts.rollouts.kruise.io shop/demo at http://127.0.0.1:")
            .stderr_has(RETRYING);
        assert_eq!(output.stderr.matches("following goes on").count(), 1, "{}", output.stderr);
    }

    #[test]
    fn following_outlasts_a_busy_server_beyond_the_retry_budget_of_a_request() {
        // A regression: a 503 that outlasted a request's 20 s of retries ended following. Here
        // each 503 asks for a wait past that budget, so that each read gives up at once.
        let server = shop(1, "StepUpgrade").start();
        let output = paused_under(&server, |server| server.storm(rollout_gets(), Some(3), 503, Some(3600)));
        let output = output
            .stderr_has("API server busy (503): giving up (retries of a request are bounded to 20s in all)\n")
            .stderr_has("warning: reading rollouts.rollouts.kruise.io shop/demo: the server is currently unable to handle the request (503 ServiceUnavailable)")
            .stderr_has(RETRYING);
        assert_eq!(output.stderr.matches("following goes on").count(), 1, "said once: {}", output.stderr);
        // A definite answer still ends it.
        let server = shop(1, "StepUpgrade").start();
        let (_test, running) = following_with(&server, &["status", "demo", "-w", "--timeout", "60s"]);
        server.storm(rollout_gets(), None, 401, None);
        edit_rollout(&server, |r| r["status"]["message"] = json!("still upgrading"));
        let output = running.finish_within(Duration::from_secs(30)).status(1).stderr_has("you must be logged in");
        assert!(!output.stderr.contains("following goes on"), "{}", output.stderr);
    }

    #[test]
    fn the_notices_of_a_busy_server_are_written_above_the_live_view() {
        // A regression: the retry notices went to stderr past indicatif, which drew the view
        // over them: each was written at the end of the view's last line, then overwritten.
        if !crate::support::terminal_available() {
            return crate::support::skip("script (util-linux) not installed");
        }
        let server = shop(1, "StepUpgrade").start();
        let test = Test::new().kubeconfig(&server).env("TERM", "xterm");
        let session = test.on_terminal_session(&["status", "demo", "-w", "--until-paused", "--timeout", "60s"], None);
        session.wait_for("shop/demo");
        wait_for("a watch", || !watches(&server).is_empty());
        // The read after the change is refused twice, each asking for a second's wait.
        server.storm(rollout_gets(), Some(2), 503, Some(1));
        edit_rollout(&server, |r| r["status"]["message"] = json!("still upgrading"));
        let notice = "API server busy (503), retrying in 1s, ";
        session.wait_for(notice);
        pause(&server);
        let (status, screen) = session.finish();
        assert_eq!(status.and_then(|s| s.code()), Some(0), "{screen:?}");
        let parts: Vec<&str> = screen.split(notice).collect();
        assert_eq!(parts.len(), 3, "two notices: {screen:?}");
        // Each where the view was cleared (back at its first row, the screen cleared from
        // there), on a line of its own, and the view drawn again under it.
        for (before, after) in parts.iter().zip(&parts[1..]) {
            assert!(before.ends_with("\r\x1b[J"), "{before:?} then {after:?}");
            let left = after.trim_start_matches(|c: char| c.is_ascii_digit());
            assert!(left.starts_with("s left\r\n") && left.contains("shop/demo"), "{after:?}");
        }
    }

    #[test]
    fn a_watch_that_fails_does_not_hide_the_rollouts_which_are_read_meanwhile() {
        // A regression: the first view waited for the watch, and a watch answered 503 showed
        // nothing until --timeout.
        let server = shop(1, "StepUpgrade").start();
        server.storm(watch_requests(), None, 503, Some(3600));
        let test = Test::new().kubeconfig(&server);
        let running = test.spawn(&["status", "demo", "-w", "--until-paused", "--timeout", "60s"]);
        running.wait_for_stdout("shop/demo: Progressing, step 1/3 StepUpgrade");
        wait_for("a watch tried again", || watches(&server).len() >= 2);
        // Read again between the tries of the watch: the change is seen without it.
        pause(&server);
        running
            .finish_within(Duration::from_secs(60))
            .success()
            .stdout_has("(waiting for approval)")
            .stderr_has("warning: watching rollouts.rollouts.kruise.io: the server is currently unable to handle the request (503 ServiceUnavailable)")
            .stderr_has(RETRYING);
    }

    #[test]
    fn watching_forbidden_when_the_watch_is_opened_again_is_said_too() {
        // A regression: following turned to polling without a word.
        let server = shop(1, "StepUpgrade").start();
        let output = paused_under(&server, |server| {
            server.storm(watch_requests(), None, 403, None);
            server.drop_watches();
            let polled = reads(server) + 2;
            wait_for("reads every 2 s", || reads(server) >= polled);
        });
        output.stderr_has("watching Rollouts is forbidden").stderr_has("reading the Rollouts every 2s instead");
    }

    #[test]
    fn approve_to_the_end_outlasts_a_watch_lost_then_refused_busy() {
        // A regression: a lost watch ended the sequence after its approval.
        let server = shop(3, "StepPaused").start();
        server.reply_fault(watch_requests(), 1, Stage::BeforeStore, ReplyFault::Lost);
        server.storm(watch_requests(), Some(2), 503, Some(3600));
        // Kept to the end: its temp folder holds the kubeconfig the run reads.
        let test = Test::new().kubeconfig(&server);
        let running = test.spawn(&["approve", "demo", "--to-end", "--yes", "--timeout", "60s"]);
        wait_for("a watch after a lost and a refused one", || watches(&server).len() >= 3);
        edit_rollout(&server, |r| {
            r["status"] = json!({"phase": "Healthy", "conditions": [{"type": "Succeeded", "status": "True"}]})
        });
        running
            .finish_within(Duration::from_secs(60))
            .success()
            .stdout_has("rollout.rollouts.kruise.io/demo approved (step 3/3)")
            .stdout_has("the release completed")
            .stderr_has("warning: watching rollouts.rollouts.kruise.io at http://127.0.0.1:")
            .stderr_has(RETRYING);
    }
}

#[test]
fn status_shows_the_rollouts_that_cannot_be_loaded_among_the_others_and_fails_at_the_end() {
    // A regression: one Rollout that could not be loaded failed the whole listing, and its
    // error named its ref but not the Rollout.
    let mut odd = rollout(1, "StepPaused");
    odd["metadata"]["name"] = json!("odd");
    odd["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"] =
        json!([{"apiVersion": "example.com/v1", "kind": "Widget", "name": "w"}]);
    let mut bad = rollout(1, "StepPaused");
    bad["metadata"]["name"] = json!("bad");
    // A misspelt field leaves the steps missing: the error names it.
    let steps = bad["spec"]["strategy"]["canary"].as_object_mut().unwrap().remove("steps").unwrap();
    bad["spec"]["strategy"]["canary"]["stepz"] = steps;
    let server = shop(2, "StepPaused").object(odd).object(bad).start();
    let test = Test::new().kubeconfig(&server);
    let odd_error = "Rollout shop/odd: the API server does not serve example.com/v1 Widget (ref Widget/w): it serves no example.com at all (are its CRDs installed?)";
    let bad_error = "Rollout shop/bad: spec.strategy.canary.steps: must list at least one step (unknown field spec.strategy.canary.stepz: did you mean steps?)";
    for args in [&["status"][..], &["status", "-A"]] {
        let out = test
            .run_args(args)
            .status(1)
            .stdout_has("Rollout shop/demo\n")
            .stdout_has("VirtualService shop/demo   original")
            .stdout_has("Rollout shop/odd\n  Phase:    Progressing (canary (partition), 3 steps)\n")
            .stdout_has(&format!("  Objects:  cannot place them: {odd_error}\n"))
            .stdout_has("Rollout shop/bad\n")
            .stdout_has(&format!("  Objects:  cannot place them: {bad_error}\n"))
            .stderr_has(
                "error: cannot place the objects of Rollouts shop/bad, shop/odd: their Objects lines above say why\n",
            );
        let order: Vec<usize> =
            ["shop/bad", "shop/demo", "shop/odd"].iter().map(|r| out.stdout.find(r).unwrap()).collect();
        assert!(order.is_sorted(), "in the order listed: {}", out.stdout);
    }
    let failed =
        test.run_args(["status", "-o", "json"]).status(1).stderr_has(&format!("error: {bad_error}\n{odd_error}\n"));
    let json = failed.json();
    let entries: Vec<(&Value, &Value)> =
        json.as_array().unwrap().iter().map(|v| (&v["name"], &v["objectsError"])).collect();
    assert_eq!(
        entries,
        [(&json!("bad"), &json!(bad_error)), (&json!("demo"), &Value::Null), (&json!("odd"), &json!(odd_error))]
    );
    test.run_args(["status", "demo"]).success();
}

#[test]
fn status_with_a_selector_that_matches_nothing_is_an_empty_listing() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status", "-l", "app=zzz"])
        .success()
        .stdout_is("")
        .stderr_has("No Rollouts found in namespace shop.");
    assert_eq!(test.run_args(["status", "-l", "app=zzz", "-o", "json"]).success().stdout, "[]\n");
    // Commands that act on what they select still refuse.
    test.run_args(["approve", "-l", "app=zzz", "--yes"])
        .status(1)
        .stderr_has("error: no Rollouts in namespace shop match the selector");
}

#[test]
fn status_takes_a_rollout_named_as_kubectl_names_it() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    for argument in
        ["Rollout/demo", "rollouts/demo", "rollout.rollouts.kruise.io/demo", "rollouts.v1beta1.rollouts.kruise.io/demo"]
    {
        test.run_args(["status", argument]).success().stdout_has("Rollout shop/demo\n");
    }
}
