//! `plan`, `approve` and `restore` against the fake API server: the output, the server's final
//! objects, and its request log.

use crate::support::cluster::*;
use crate::support::{Output, Test, terminal_available};
use fake_apiserver::{FakeHandle, ReplyFault, Requests, Rule, Stage};
use serde_json::{Value, json};
use std::time::Duration;

const STORED: &str =
    r#"{"spec":{"hosts":["demo"],"http":[{"route":[{"destination":{"host":"demo"}}]}]},"labels":{"app":"demo"}}"#;

#[test]
fn plan_shows_the_current_step_and_writes_nothing() {
    let server = shop(2, "StepPaused").start();
    Test::new()
        .kubeconfig(&server)
        .args(["plan", "rollout/demo"])
        .run()
        .success()
        .stdout_has("Rollout shop/demo\n  phase Progressing, step 2/3 StepPaused: Rollout is in step(2/3), and you need manually confirm")
        .stdout_has("step 2/3: replicas 50%, traffic 50% (canary 50 / stable 50), pause until approved")
        .stdout_has("+    rollouts.kruise.io/original-spec-configuration:")
        .stdout_has("+      weight: 50\n+    - destination:\n+        host: demo-canary\n+      weight: 50\n")
        .stdout_has("DestinationRule shop/demo: script built-in lua_configuration/networking.istio.io/DestinationRule/trafficRouting.lua");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn a_custom_ref_of_a_core_kind_is_found_under_api_v1() {
    // The core group is discovered under /api/v1, not /apis/v1 (a regression: such a ref was
    // "not served").
    let mut rollout = rollout(2, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"] =
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "routes"}]);
    let server = serving(rollout)
        .object(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "routes", "namespace": NAMESPACE},
                       "data": {"weight": "0"}}))
        .start();
    Test::new()
        .kubeconfig(&server)
        .file("cm.lua", "local data = obj.data data.spec = {weight = obj.canaryWeight} return data")
        .args(["plan", "demo", "--script", "ConfigMap.v1=cm.lua"])
        .run()
        .success()
        .stdout_has("ConfigMap shop/routes: script --script cm.lua");
}

#[test]
fn a_ref_whose_api_group_is_no_dns_name_is_refused_before_any_request_or_cache_file() {
    // A security audit's finding (M2): the group named a folder of the discovery cache, so a
    // server that answered `GET /apis/../../x/v1` had a file written outside it.
    let mut rollout = rollout(2, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"][0]["apiVersion"] =
        json!("../../outside/v1");
    let server = serving(rollout).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["plan", "demo"]).status(1).stderr_has(
        "\"../../outside/v1\" is no API group and version: a group is a DNS subdomain (lowercase letters, digits, '-' and '.'), a version lowercase letters and digits",
    );
    assert!(!server.requests().iter().any(|r| r.path.contains("..")), "{:?}", server.requests());
    assert!(!test.path("outside").exists() && !test.path("home/.cache/outside").exists());
}

#[test]
fn plan_chooses_steps() {
    let server = shop(1, "StepPaused").start();
    let plan = |args: &[&str]| Test::new().kubeconfig(&server).arg("plan").args(args.iter().copied()).run();
    plan(&["demo", "--next"]).success().stdout_has("step 2/3: replicas 50%");
    plan(&["demo", "--step", "3"]).success().stdout_has("step 3/3: replicas 100%");
    let all = plan(&["demo", "--all-steps", "-o", "json"]).success().json();
    assert_eq!(all["plans"][0]["stages"].as_array().unwrap().len(), 3);
    plan(&["-l", "app=demo", "--detailed-exitcode"]).status(2).stdout_has("Rollout shop/demo\n");
    plan(&["demo", "--step", "7"]).status(1).stderr_has("--step 7: Rollout demo has 3 steps");
    plan(&["missing"]).status(1).stderr_has("rollouts.rollouts.kruise.io \"missing\" not found in namespace shop\n");
    // A name with dots may be a Rollout's, so it is asked for; once not found, a file of that
    // name is pointed to.
    let test = Test::new().kubeconfig(&server).file("demo.yaml", "");
    test.run_args(["plan", "demo.yaml"]).status(1).stderr_has(
        "rollouts.rollouts.kruise.io \"demo.yaml\" not found in namespace shop; demo.yaml is a file or folder here: `plan -f demo.yaml` plans the manifests in it\n",
    );
    // One name not found does not hide the others, as in kubectl get: their plans, then the
    // error (a regression: the error alone).
    plan(&["demo", "missing"])
        .status(1)
        .stdout_has("Rollout shop/demo\n")
        .stderr_has("error: rollouts.rollouts.kruise.io \"missing\" not found in namespace shop\n");
    let status = |args: &[&str]| Test::new().kubeconfig(&server).arg("status").args(args.iter().copied()).run();
    status(&["demo", "missing", "gone"])
        .status(1)
        .stdout_has("demo")
        .stderr_has("error: rollouts.rollouts.kruise.io \"missing\" not found in namespace shop\nrollouts.rollouts.kruise.io \"gone\" not found in namespace shop\n");
    let alone = status(&["missing"]).status(1);
    assert!(!alone.stderr.contains("No Rollouts found"), "{}", alone.stderr);
    plan(&[])
        .status(1)
        .stderr_has("name the Rollouts (NAME or rollout/NAME), or select them with -l, or take every Rollout of the namespace with --all (of every namespace: -A); or plan manifest files with -f");
    let restore = Test::new().kubeconfig(&server).arg("restore").run();
    restore
        .status(1)
        .stderr_has("select them with -l; or name objects with --ref KIND/NAME, or a backup with --from-backup");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn plan_next_approve_and_status_follow_a_patched_next_step_index() {
    // `kubectl-kruise rollout undo --fast` (or a patch) sets nextStepIndex to an earlier step:
    // the controller jumps there at once, so that is the next routing, not the step after.
    let mut rollout = rollout(3, "StepPaused");
    rollout["status"]["canaryStatus"]["nextStepIndex"] = json!(2);
    let server = serving(rollout).start();
    let plan = |args: &[&str]| Test::new().kubeconfig(&server).arg("plan").args(args.iter().copied()).run();
    let jump = "the status's nextStepIndex is 2 (a jump: a patch, or `kubectl-kruise rollout undo --fast`): the controller goes to step 2/3 at its next reconcile, not on from the current step";
    plan(&["demo", "--next"])
        .success()
        .stdout_has(&format!("{jump}; planned as --next"))
        .stdout_has("step 2/3: replicas 50%");
    plan(&["demo"]).success().stdout_has(&format!("{jump}; --next plans it")).stdout_has("step 3/3: replicas 100%");
    // Nor is step 3 approved or routed: the controller jumps whatever is written.
    approve_demo(&server).status(3).stderr_has("rollouts.rollouts.kruise.io \"demo\": the status's nextStepIndex is 2: the controller jumps to step 2/3 at its next reconcile, not on from step 3; nothing to route or approve until it has (`kubectl rollout-lua plan demo -n shop --next` shows that step)");
    Test::new()
        .kubeconfig(&server)
        .args(["status", "demo"])
        .run()
        .success()
        .stdout_has("  State:    StepPaused, progressing, jumping to step 2/3 (the status's nextStepIndex)\n");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn plan_of_an_object_already_routed_says_so() {
    let server = shop(2, "StepPaused").start();
    Test::new().kubeconfig(&server).args(["approve", "demo", "--traffic-only", "--yes"]).run().success();
    Test::new()
        .kubeconfig(&server)
        .args(["plan", "demo", "--detailed-exitcode"])
        .run()
        .status(0)
        .stdout_has("VirtualService shop/demo: already as planned")
        .stdout_has("DestinationRule shop/demo: already as planned");
}

#[test]
fn plan_of_a_rollout_not_in_a_release_previews_step_1_and_changes_nothing_now() {
    let mut healthy = rollout(2, "StepPaused");
    healthy["status"] = json!({"phase": "Healthy", "message": "done"});
    let server = serving(healthy).start();
    let test = Test::new().kubeconfig(&server);
    // The controller writes nothing until a release starts: no change pending.
    test.run_args(["plan", "demo", "--detailed-exitcode"])
        .status(0)
        .stdout_has("not in a release: showing what step 1 would do")
        .stdout_has("VirtualService shop/demo (step 1/3)")
        .stdout_has(
            "Plan: 0 to change, 0 already as planned, 2 in previews of a next release (counted per step and object).\n",
        );
    let json = test.run_args(["plan", "demo", "-o", "json"]).success().json();
    assert_eq!((&json["plans"][0]["preview"], &json["summary"]["previewed"]), (&json!(true), &json!(2)));
    // A step asked for counts as asked.
    test.run_args(["plan", "demo", "--step", "2", "--detailed-exitcode"])
        .status(2)
        .stdout_has("Plan: 2 to change, 0 already as planned (counted per step and object).\n");
}

#[test]
fn plan_server_dry_run_says_a_write_rbac_forbids_is_forbidden_not_rejected() {
    let server = shop(2, "StepPaused").deny(Rule::new(["update"]).resources(["virtualservices"])).start();
    let out = Test::new()
        .kubeconfig(&server)
        .run_args(["plan", "demo", "--dry-run=server"])
        .status(1)
        .stdout_has("server dry-run FORBIDDEN (you may not write it) VirtualService shop/demo (step 2/3): ")
        .stdout_has("(403 Forbidden)")
        .stdout_has("server dry-run accepted DestinationRule shop/demo (step 2/3)")
        .stderr_has("the API server did not accept a planned object");
    assert!(!out.stderr.contains("more, each noted above"), "{}", out.stderr);
    // Both refused (an RBAC trial: the error named the first only).
    let server =
        shop(2, "StepPaused").deny(Rule::new(["update"]).resources(["virtualservices", "destinationrules"])).start();
    Test::new()
        .kubeconfig(&server)
        .run_args(["plan", "demo", "--dry-run=server"])
        .status(1)
        .stdout_has("server dry-run FORBIDDEN (you may not write it) DestinationRule shop/demo (step 2/3): ")
        .stderr_has("error: the API server did not accept a planned object (VirtualService shop/demo (step 2/3): ")
        .stderr_has("), and 1 more, each noted above\n");
}

#[test]
fn plan_server_dry_run_reports_admission_rejections() {
    let server = shop(2, "StepPaused")
        .admission("validation.istio.io", |request| {
            if request.plural == "virtualservices" {
                Err("total destination weight = 101 != 100".into())
            } else {
                Ok(())
            }
        })
        .start();
    Test::new()
        .kubeconfig(&server)
        .args(["plan", "demo", "--dry-run", "server"])
        .run()
        .status(1)
        .stdout_has("server dry-run accepted DestinationRule shop/demo (step 2/3)")
        .stdout_has("server dry-run REJECTED VirtualService shop/demo (step 2/3): admission webhook \"validation.istio.io\" denied the request: total destination weight = 101 != 100")
        .stderr_has("the API server did not accept a planned object");
    assert!(routing_writes(&server).iter().all(|w| w.is_dry_run()), "only dry-run writes: {:?}", writes(&server));
    assert_eq!(
        writes(&server),
        [
            "PUT /apis/networking.istio.io/v1beta1/namespaces/shop/virtualservices/demo",
            "PUT /apis/networking.istio.io/v1beta1/namespaces/shop/destinationrules/demo",
        ],
        "each changed object is sent once"
    );
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn approve_routes_the_step_stores_the_original_and_approves() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server).args(["approve", "demo", "--yes"]);
    test.run()
        .success()
        .stdout_has("VirtualService shop/demo updated (backup ")
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)")
        .stdout_has("Next for Rollout shop/demo: step 3/3");
    let vs = vs(&server);
    assert_eq!(vs["metadata"]["annotations"]["rollouts.kruise.io/original-spec-configuration"], STORED);
    assert_eq!(
        vs["spec"]["http"][0]["route"],
        json!([{"destination": {"host": "demo"}, "weight": 50}, {"destination": {"host": "demo-canary"}, "weight": 50}])
    );
    assert_eq!(dr(&server)["spec"]["subsets"][1], json!({"name": "canary", "labels": {"istio.service.tag": "gray"}}));
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady");
    // The original is stored first (as the controller does), then each object is replaced,
    // then the status subresource is patched.
    assert_eq!(
        writes(&server),
        [
            "PUT /apis/networking.istio.io/v1beta1/namespaces/shop/virtualservices/demo",
            "PUT /apis/networking.istio.io/v1beta1/namespaces/shop/virtualservices/demo",
            "PUT /apis/networking.istio.io/v1beta1/namespaces/shop/destinationrules/demo",
            "PUT /apis/networking.istio.io/v1beta1/namespaces/shop/destinationrules/demo",
            "PATCH /apis/rollouts.kruise.io/v1beta1/namespaces/shop/rollouts/demo/status",
        ]
    );
    let patch = server.writes().into_iter().rfind(|w| w.path.ends_with("/status")).unwrap();
    assert_eq!(patch.content_type.as_deref(), Some("application/merge-patch+json"));
    // The step index goes along unchanged: the patch can only approve the step guarded.
    assert_eq!(patch.body["status"], json!({"canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepReady"}}));
    assert!(patch.body["metadata"]["resourceVersion"].is_string(), "a resourceVersion precondition: {}", patch.body);
    let backups = test.path("home/.local/state/kubectl-rollout-lua/backups/fake/shop/VirtualService/demo");
    assert_eq!(std::fs::read_dir(backups).unwrap().count(), 1);
}

#[test]
fn approve_refuses_unless_the_step_is_paused() {
    let server = shop(2, "StepTrafficRouting").start();
    approve_demo(&server)
        .status(3)
        .stderr_has("rollouts.rollouts.kruise.io \"demo\" does not allow to approve, because current canary state is not 'StepPaused' (it is StepTrafficRouting)");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn approve_refuses_an_unexpected_step_and_says_an_expected_one_approved_already() {
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--yes", "--expect-step", "2"])
        .status(3)
        .stderr_has("is at step 1/3, not at step 2 (--expect-step)");
    assert_eq!(writes(&server), Vec::<String>::new());
    // Past the step expected, or at it approved: a retried job (a scripting trial: it was
    // refused, exit 3, as a real refusal is) finds it done, and writes nothing.
    for (step, state, expected) in [(2, "StepPaused", "1"), (2, "StepReady", "2")] {
        let server = shop(step, state).start();
        Test::new().kubeconfig(&server).run_args(["approve", "demo", "--yes", "--expect-step", expected]).success().stdout_is(
            &format!(
                "rollout.rollouts.kruise.io/demo approved already (step {expected}/3; it is at step {step}/3 {state} now): nothing to do\n"
            ),
        );
        assert_eq!(writes(&server), Vec::<String>::new());
    }
    // A sequence from a step passed is refused as ever: where it would follow from is not known.
    let server = shop(2, "StepPaused").start();
    Test::new()
        .kubeconfig(&server)
        .run_args(["approve", "demo", "--yes", "--expect-step", "1", "--until-step", "3", "--timeout", "5s"])
        .status(3)
        .stderr_has("is at step 2/3, not at step 1 (--expect-step)");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn approve_refuses_without_a_current_step_and_traffic_only_outside_a_release() {
    // A status whose step index names none of the 3 steps: nothing to approve.
    // One past the spec's last is said as such (as status and plan say it).
    let past = "the status names step 4, past the spec's last, step 3 (the steps were changed since the status was written): which step the release is at is not known until the controller writes its status again";
    for (index, why) in [(0, "the status names no current step"), (4, past)] {
        let server = shop(index, "StepPaused").start();
        approve_demo(&server).status(3).stderr_has(&format!("rollouts.rollouts.kruise.io \"demo\": {why}"));
        assert_eq!(writes(&server), Vec::<String>::new(), "index {index}");
        if index == 4 {
            let test = Test::new().kubeconfig(&server);
            test.run_args(["status", "demo"]).success().stdout_has(&format!("  Step:     step 4/3: {past}\n"));
            test.run_args(["plan", "demo"]).success().stdout_has(past);
            test.run_args(["restore", "demo", "--dry-run=client"])
                .success()
                .stderr_has("Rollout demo is in a release (step 4/3, past the spec's steps StepPaused)");
        }
    }
    // --traffic-only routes the step of a release in progress (paused or not), and only that.
    let mut terminating = rollout(2, "StepPaused");
    terminating["status"]["phase"] = json!("Terminating");
    let server = serving(terminating.clone()).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).status(3).stderr_has(
        "rollouts.rollouts.kruise.io \"demo\": the Rollout is being deleted: the controller restores the original routing; nothing to route or approve",
    );
    assert_eq!(writes(&server), Vec::<String>::new());
    terminating["status"]["phase"] = json!("Progressing");
    server.put_object(terminating);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][1]["weight"], 50);
}

#[test]
fn approve_without_a_terminal_needs_yes() {
    let server = shop(2, "StepPaused").start();
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo"])
        .run()
        .status(3)
        .stdout_has("+      weight: 50")
        .stderr_has("nothing was written: there is no terminal to confirm on; pass --yes");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn approve_on_a_terminal_asks_and_only_yes_goes_ahead() {
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    let server = shop(2, "StepPaused").start();
    let approve = |answer: &str, more: &[&str]| {
        Test::new().kubeconfig(&server).args(["approve", "demo"]).args(more.iter().copied()).stdin(answer).on_terminal()
    };
    approve("y\n", &[])
        .run()
        .status(3)
        .stdout_has("+      weight: 50")
        .stdout_has("Apply these changes and approve? Only 'yes' goes ahead: ")
        .stdout_has("nothing was written: not confirmed");
    // The question says what the answer lets the run do.
    approve("no\n", &["--to-end"])
        .run()
        .status(3)
        .stdout_has("Apply these changes, approve, and approve every later pause to the end? Only 'yes' goes ahead: ")
        .stdout_has("nothing was written: not confirmed");
    assert_eq!(writes(&server), Vec::<String>::new());
    approve("yes\n", &[]).run().success().stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)");
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady");
}

#[test]
fn a_role_that_grants_the_objects_by_name_is_enough() {
    // A least-privilege Role: each object the run writes by name (resourceNames), the create
    // of nothing, the claim's Lease by name but its create.
    let server = shop(2, "StepPaused")
        .grant(Rule::new(["get", "list", "watch"]))
        .grant(Rule::new(["update"]).resources(["virtualservices", "destinationrules"]).names(["demo"]))
        .grant(Rule::new(["patch"]).resources(["rollouts/status"]).names(["demo"]))
        .grant(Rule::new(["create"]).resources(["leases"]))
        .grant(Rule::new(["update", "delete"]).resources(["leases"]).names(["rollout-lua.demo"]))
        .start();
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--yes"])
        .run()
        .success()
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)");
    // Without the Lease's grants, the claim is refused, saying the objects' are asked later.
    let server = shop(2, "StepPaused").deny(Rule::new(["create"]).resources(["leases"])).start();
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--yes"])
        .run()
        .status(3)
        .stderr_has("nothing was written: you may not\n  create leases (API group coordination.k8s.io) in namespace shop\nA Role and RoleBinding that would grant it:")
        .stderr_has("(the permissions to write the objects are asked once the claim is taken; `--dry-run=server`, which takes none, asks them now)");
}

#[test]
fn approve_checks_permissions_before_any_write() {
    let server = shop(2, "StepPaused")
        .deny(Rule::new(["update"]).resources(["destinationrules"]))
        .deny(Rule::new(["patch"]).resources(["rollouts/status"]))
        .start();
    let refused = Test::new()
        .kubeconfig_over_tls(&server, "    token: t\n")
        .args(["approve", "demo", "--yes", "--as", "jane"])
        .run()
        .status(3)
        .stderr_has("nothing was written: user jane may not\n  patch rollouts/status named demo (API group rollouts.kruise.io) in namespace shop\n  update destinationrules named demo (API group networking.istio.io) in namespace shop\nA Role and RoleBinding that would grant them:")
        .stderr_has("kind: Role")
        .stderr_has("resources: [\"destinationrules\"]\n  resourceNames: [\"demo\"]\n  verbs: [\"update\"]")
        .stderr_has("  kind: User\n  name: jane");
    assert!(!refused.stderr.contains("--traffic-only"), "another permission is missing too: {}", refused.stderr);
    assert_eq!(writes(&server), Vec::<String>::new());
    assert!(server.requests().iter().any(|r| r.impersonate_user.as_deref() == Some("jane")), "--as impersonates");
}

#[test]
fn approve_without_leave_to_approve_points_to_traffic_only() {
    let server = shop(2, "StepPaused").deny(Rule::new(["patch"]).resources(["rollouts/status"])).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--yes"])
        .status(3)
        .stderr_has("  verbs: [\"patch\"]\n")
        .stderr_has("\n(only the approval is missing: `approve --traffic-only` writes the step's routing without it, and approves nothing; someone who may patch rollouts/status approves then)\n");
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["approve", "demo", "--yes", "--traffic-only"])
        .success()
        .stdout_has("VirtualService shop/demo updated")
        .stdout_has("not approved (--traffic-only)");
}

const SELF_SUBJECT_REVIEWS: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// Whether `server` was asked who the client is (a SelfSubjectReview).
fn asked_who(server: &FakeHandle) -> bool {
    server.requests().iter().any(|r| r.path == SELF_SUBJECT_REVIEWS)
}

#[test]
fn a_refusal_binds_its_role_to_the_user_the_api_server_names() {
    let denied = || Rule::new(["patch"]).resources(["rollouts/status"]);
    let server = shop(2, "StepPaused").user("alice@example.com").deny(denied()).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--yes"])
        .status(3)
        .stderr_has("nothing was written: you may not\n  patch rollouts/status named demo")
        .stderr_has("  kind: User\n  name: alice@example.com");
    assert!(asked_who(&server));
    // Impersonated (the kubeconfig user's `as`, or `--as`), the subject is that user, not asked.
    server.clear_log();
    let test = test.kubeconfig_over_tls(&server, "    token: t\n    as: carol\n");
    test.run_args(["approve", "demo", "--yes"])
        .status(3)
        .stderr_has("nothing was written: user carol may not\n")
        .stderr_has("  kind: User\n  name: carol");
    assert!(!asked_who(&server));
    assert!(server.requests().iter().all(|r| r.impersonate_user.as_deref() == Some("carol")));
    // Allowed, nobody is asked who they are.
    let server = shop(2, "StepPaused").user("alice@example.com").start();
    Test::new().kubeconfig(&server).args(["approve", "demo", "--yes"]).run().success();
    assert!(!asked_who(&server));
}

#[test]
fn a_refusal_binds_its_role_to_the_service_account_the_api_server_names() {
    let denied = || Rule::new(["patch"]).resources(["rollouts/status"]);
    let server = shop(2, "StepPaused").user("system:serviceaccount:ci:deployer").deny(denied()).start();
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--yes"])
        .run()
        .status(3)
        .stderr_has("subjects:\n- kind: ServiceAccount\n  name: deployer\n  namespace: ci\n");
    assert!(asked_who(&server));
}

#[test]
fn a_refusal_whose_user_cannot_be_learnt_binds_its_role_to_a_placeholder() {
    let denied = || Rule::new(["patch"]).resources(["rollouts/status"]);
    let reviews = || Rule::new(["create"]).resources(["selfsubjectreviews"]);
    let refused = |server: &FakeHandle, timeout: &str| {
        Test::new()
            .kubeconfig(server)
            .args(["approve", "demo", "--yes", "--request-timeout", timeout])
            .run()
            .status(3)
            .stderr_has("A Role and RoleBinding that would grant it:")
            .stderr_has("  kind: User\n  name: YOUR-USER");
        assert!(asked_who(server));
        assert_eq!(writes(server), Vec::<String>::new());
    };
    // Before Kubernetes 1.28 (404), forbidden to ask (403), no answer in time.
    refused(&shop(2, "StepPaused").without_self_subject_reviews().deny(denied()).start(), "30s");
    refused(&shop(2, "StepPaused").deny(reviews()).deny(denied()).start(), "30s");
    let server = shop(2, "StepPaused").deny(denied()).start();
    server.reply_fault(Requests::Matching(reviews()), 1, Stage::BeforeStore, ReplyFault::NeverSent);
    refused(&server, "2s");
}

#[test]
fn approve_gives_up_on_conflicts_that_keep_coming_and_says_why() {
    // Every write of the VirtualService conflicts, with nothing changed in what it is about:
    // after three retries the run gives up, rolls back, and says the object kept changing.
    let server = shop(2, "StepPaused").start();
    server.storm(Requests::Matching(Rule::new(["update"]).resources(["virtualservices"])), Some(4), 409, None);
    approve_demo(&server)
        .status(1)
        .stderr_has("the object changed again at each of 4 tries, each time not in what this write is about")
        .stderr_has("this write was not stored; run again")
        .stderr_has("nothing was written");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
}

#[test]
fn approve_retries_a_conflict_nobodys_edit_explains() {
    let server = shop(2, "StepPaused").start();
    // Another client touches the VirtualService's metadata, not its routing, before our first
    // write to it (the claim is the first write of all).
    someone_edits(&server, When::Before(2), VIRTUAL_SERVICE, |vs| {
        vs["metadata"]["finalizers"] = json!(["example.com/keep"])
    });
    approve_demo(&server)
        .success()
        .stderr_has("conflict on VirtualService shop/demo: nobody changed what this write is about; writing it again")
        .stdout_has("approved (step 2/3)");
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][1]["weight"], 50);
    // Theirs stays through both writes: the step's routing, planned from the first read, goes
    // over the object as the original's store left it (a regression: the finalizer was dropped).
    assert_eq!(vs(&server)["metadata"]["finalizers"], json!(["example.com/keep"]));
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady");
}

#[test]
fn approve_refuses_to_overwrite_an_edit_made_meanwhile() {
    let server = shop(2, "StepPaused").start();
    // Someone edits the VirtualService's spec between our read and our first write to it (the
    // claim is the first write of all).
    someone_edits(&server, When::Before(2), VIRTUAL_SERVICE, |vs| {
        vs["spec"]["hosts"] = json!(["demo", "demo.example.com"])
    });
    approve_demo(&server)
        .status(3)
        .stderr_has(
            "VirtualService shop/demo was changed by someone else while this run wrote it; not overwriting their edit",
        )
        .stderr_has("+  - demo.example.com")
        .stderr_has("nothing was written");
    assert_eq!(vs(&server)["spec"]["hosts"], json!(["demo", "demo.example.com"]), "the other actor's edit stays");
    assert!(vs(&server)["metadata"]["annotations"].is_null());
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
}

#[test]
fn approve_on_a_terminal_shows_an_edit_made_meanwhile_and_asks_again() {
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    let run = |second_answer: &str| {
        let server = shop(2, "StepPaused").start();
        someone_edits(&server, When::Before(2), VIRTUAL_SERVICE, |vs| {
            vs["spec"]["hosts"] = json!(["demo", "demo.example.com"])
        });
        let test = Test::new()
            .kubeconfig(&server)
            .args(["approve", "demo"])
            .stdin(&format!("yes\n{second_answer}\n"))
            .on_terminal();
        let out = test.run();
        (server, out, test)
    };
    let (server, out, test) = run("no");
    let out = out
        .status(3)
        .stdout_has("VirtualService shop/demo was changed by someone else while this run wrote it:\r\n")
        .stdout_has("+  - demo.example.com")
        .stdout_has("Overwrite their change?");
    // The question follows their edit, not a refusal's words.
    assert!(!out.stdout.contains("not overwriting their edit"), "{:?}", out.stdout);
    // NO_COLOR (the tests' environment) holds for their edit's diff too (a regression: coloured;
    // the prompt's own line clearing stays).
    assert!(!out.stdout.contains("\x1b[1m") && !out.stdout.contains("\x1b[32m"), "{:?}", out.stdout);
    assert_eq!(vs(&server)["spec"]["hosts"], json!(["demo", "demo.example.com"]), "their edit stays");
    assert!(vs(&server)["metadata"]["annotations"].is_null(), "nothing written");
    // Nothing was written to it: the backup saved before its write is removed (a regression: it
    // was left, as if it held the state before a write).
    assert_eq!(backups_left(&test), Vec::<String>::new());
    let (server, out, _test) = run("yes");
    let out = out
        .success()
        .stdout_has("Overwrite their change?")
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)");
    // A regression: the edit overwritten was kept nowhere. It is backed up, and named.
    let named = out.stdout.lines().find(|l| l.starts_with("VirtualService shop/demo updated (backup ")).unwrap();
    let (before, theirs) = named.split_once("; their edit it overwrote: ").expect("their edit's backup is named");
    let theirs = theirs.trim_end_matches([')', '\r']);
    assert!(std::fs::read_to_string(theirs).unwrap().contains("demo.example.com"), "{named}");
    assert!(
        !std::fs::read_to_string(before.trim_start_matches("VirtualService shop/demo updated (backup "))
            .unwrap()
            .contains("demo.example.com")
    );
    let routed = vs(&server);
    assert_eq!(routed["spec"]["hosts"], json!(["demo"]), "overwritten, as confirmed");
    assert_eq!(routed["spec"]["http"][0]["route"][1]["weight"], 50);
}

/// `approve demo` on a terminal, someone editing the DestinationRule before its first write
/// (the run's 4th: the claim, the VirtualService twice), answered `yes`, then `second_answer`;
/// the test (its HOME holds the backups) and its output.
fn approve_over_an_edit_of_the_destination_rule(server: &FakeHandle, second_answer: &str) -> (Test, Output) {
    someone_edits(server, When::Before(4), DESTINATION_RULE, |dr| {
        dr["metadata"]["annotations"] = json!({"theirs": "1"})
    });
    let test = Test::new()
        .kubeconfig(server)
        .args(["approve", "demo", "--request-timeout", "2s"])
        .stdin(&format!("yes\n{second_answer}\n"))
        .on_terminal();
    let out = test.run();
    (test, out)
}

#[test]
fn a_no_to_overwriting_an_edit_after_a_write_does_not_say_nothing_was_written() {
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    // A regression (audit s29 safety3 #3): the refusal said `nothing was written: not confirmed`
    // above a report of the VirtualService rolled back.
    let server = shop(2, "StepPaused").start();
    let (_test, out) = approve_over_an_edit_of_the_destination_rule(&server, "no");
    let out = out
        .status(3)
        .stdout_has("error: their edit is not overwritten: not confirmed\r\n  VirtualService shop/demo: rolled back");
    assert!(!out.stdout.contains("nothing was written"), "{}", out.stdout);
    assert_eq!(dr(&server)["metadata"]["annotations"]["theirs"], "1", "their edit stays");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn an_overwrite_of_their_edit_that_may_still_land_names_their_edits_backup() {
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    // A regression (audit s29 safety3 #1): the write over their edit, as confirmed, answered
    // 504 and read back unapplied, was reported with the object's state before the run only;
    // when it landed, their edit was kept nowhere the report named.
    let server = shop(2, "StepPaused").start();
    let late = server.late_write(Requests::Matching(Rule::new(["update"]).resources(["destinationrules"])), 2);
    let (_test, out) = approve_over_an_edit_of_the_destination_rule(&server, "yes");
    let out = out.status(1);
    let line =
        out.stdout.lines().find(|l| l.starts_with("  DestinationRule shop/demo: not applied when read back")).unwrap();
    let (_, theirs) = line.split_once("; their edit, which it may overwrite: ").expect("their edit's backup is named");
    assert!(std::fs::read_to_string(theirs.trim_end_matches(['\r', ')'])).unwrap().contains("theirs: \"1\""), "{line}");
    assert_eq!(late.land(Duration::from_secs(5)), Some(200), "it lands over their edit, as confirmed");
}

/// The shop at step 2, with a webhook that rejects every DestinationRule write.
fn rejecting_destination_rules() -> fake_apiserver::Builder {
    shop(2, "StepPaused").admission("validation.istio.io", |request| {
        if request.plural == "destinationrules" { Err("subset canary is not allowed".into()) } else { Ok(()) }
    })
}

#[test]
fn approve_rolls_back_when_a_later_write_fails() {
    let server = rejecting_destination_rules().start();
    let test = Test::new().kubeconfig(&server);
    // A dry run saves no backup.
    test.run_args(["approve", "demo", "--dry-run=client"]).success();
    assert_eq!(backups_left(&test), Vec::<String>::new());
    test.run_args(["approve", "demo", "--yes"])
        .status(1)
        .stderr_has("updating DestinationRule shop/demo: admission webhook \"validation.istio.io\" denied the request: subset canary is not allowed")
        .stderr_has("VirtualService shop/demo: rolled back");
    // The VirtualService was written (and rolled back): its backup stays. The DestinationRule's
    // write was refused: nothing was written to it, and the backup saved before it is removed.
    let left = backups_left(&test);
    assert!(left.len() == 1 && left[0].starts_with("VirtualService/demo/"), "{left:?}");
    // The server's dry run is refused too, and saves none.
    test.run_args(["approve", "demo", "--dry-run=server"]).status(1);
    assert_eq!(backups_left(&test), left);
    assert_eq!(
        vs(&server)["spec"],
        virtual_service()["spec"],
        "the VirtualService is back to its state before the run"
    );
    assert!(vs(&server)["metadata"]["annotations"].is_null());
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
}

#[test]
fn approve_verifies_what_the_server_stored() {
    // A mutating webhook that rewrites the routing: what is stored is not what was planned.
    let server = shop(2, "StepPaused")
        .mutation(|plural, object| {
            if plural == "virtualservices" && object["spec"]["http"][0]["route"].as_array().is_some_and(|r| r.len() > 1)
            {
                object["spec"]["http"][0]["route"][1]["weight"] = json!(0);
                object["spec"]["http"][0]["route"][0]["weight"] = json!(100);
            }
        })
        .start();
    approve_demo(&server)
        .status(1)
        .stderr_has("VirtualService shop/demo was stored with other spec, labels or annotations than planned")
        .stderr_has("VirtualService shop/demo: rolled back");
    assert_eq!(
        vs(&server)["spec"],
        virtual_service()["spec"],
        "the VirtualService is back to its state before the run"
    );
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused", "not approved");
    assert!(!writes(&server).iter().any(|w| w.starts_with("PATCH")), "{:?}", writes(&server));
}

#[test]
fn approve_accepts_a_stored_object_without_the_null_fields_it_planned() {
    // A script whose empty table encodes as null; the API server prunes null fields on store.
    let script = "local spec = obj.data.spec spec.tcp = {} return {spec = spec}";
    let server = shop(2, "StepPaused")
        .mutation(|plural, object| {
            if plural == "virtualservices" && object["spec"]["tcp"].is_null() {
                object["spec"].as_object_mut().unwrap().remove("tcp");
            }
        })
        .start();
    approve_with_script(&server, script).success().stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)");
    assert!(vs(&server)["spec"].get("tcp").is_none(), "stored without the null field");
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady");
}

#[test]
fn approve_client_dry_run_writes_nothing_and_server_dry_run_stores_nothing() {
    let server = shop(2, "StepPaused").start();
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--dry-run", "client"])
        .run()
        .success()
        .stdout_has("dry run (client): nothing was written");
    assert_eq!(writes(&server), Vec::<String>::new());
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--dry-run", "server"])
        .run()
        .success()
        .stdout_has("server dry-run accepted Rollout shop/demo");
    assert!(routing_writes(&server).iter().all(|w| w.is_dry_run()), "{:?}", writes(&server));
    // Every write the approval would make, the original stored first.
    assert_eq!(
        writes(&server),
        [
            "PUT /apis/networking.istio.io/v1beta1/namespaces/shop/virtualservices/demo",
            "PUT /apis/networking.istio.io/v1beta1/namespaces/shop/virtualservices/demo",
            "PUT /apis/networking.istio.io/v1beta1/namespaces/shop/destinationrules/demo",
            "PUT /apis/networking.istio.io/v1beta1/namespaces/shop/destinationrules/demo",
            "PATCH /apis/rollouts.kruise.io/v1beta1/namespaces/shop/rollouts/demo/status",
        ]
    );
    assert_eq!(claim_writes(&server), Vec::<String>::new(), "a dry run claims nothing");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
}

#[test]
fn restore_puts_the_original_back() {
    let server = shop(2, "StepPaused").start();
    Test::new().kubeconfig(&server).args(["approve", "demo", "--traffic-only", "--yes"]).run().success();
    Test::new()
        .kubeconfig(&server)
        .args(["restore", "demo", "--yes"])
        .run()
        .success()
        .stdout_has("VirtualService shop/demo: restore the stored original")
        .stdout_has("VirtualService shop/demo restored (backup ")
        // Mid-release, what the controller does next is said.
        .stderr_has("Rollout demo is in a release (step 2/3 StepPaused): the controller routes its objects again at the next step it routes, from originals stored afresh");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    assert!(vs(&server)["metadata"]["annotations"].is_null(), "the annotation goes away");
    assert_eq!(dr(&server)["spec"], destination_rule()["spec"]);
}

#[test]
fn restore_while_the_current_step_is_being_routed_says_it_lasts_seconds() {
    // A lifecycle review: "at the next step it routes" was said in StepTrafficRouting too, where
    // the controller routes the current step at every reconcile.
    let server = shop(2, "StepPaused").start();
    Test::new().kubeconfig(&server).args(["approve", "demo", "--traffic-only", "--yes"]).run().success();
    let mut routing = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo").unwrap();
    routing["status"]["canaryStatus"]["currentStepState"] = json!("StepTrafficRouting");
    server.put_object(routing);
    Test::new()
        .kubeconfig(&server)
        .args(["restore", "demo", "--yes"])
        .run()
        .success()
        .stderr_has("Rollout demo is in a release (step 2/3 StepTrafficRouting): the controller routes its objects again as it routes the current step, within seconds once its pods are ready, from originals stored afresh");
}

#[test]
fn restore_refuses_to_discard_edits_without_force() {
    let server = shop(2, "StepPaused").start();
    Test::new().kubeconfig(&server).args(["approve", "demo", "--traffic-only", "--yes"]).run().success();
    let mut edited = vs(&server);
    edited["spec"]["http"][0]["timeout"] = json!("5s");
    server.put_object(edited);
    server.clear_log();
    Test::new()
        .kubeconfig(&server)
        .args(["restore", "demo", "--yes"])
        .run()
        .status(3)
        .stdout_has("VirtualService shop/demo was edited after it was routed; a restore discards these edits:")
        .stdout_has("+    timeout: 5s")
        .stderr_has("pass --force to restore anyway");
    assert_eq!(writes(&server), Vec::<String>::new());
    Test::new().kubeconfig(&server).args(["restore", "demo", "--yes", "--force"]).run().success();
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn restore_refuses_to_discard_edits_of_an_object_left_routed_after_the_release_without_force() {
    // Step 2's routing left after the release completed (its index at 3, the last), then edited:
    // the edit is shown against step 2, the step nearest to it, not the index; status names it
    // too.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    let mut completed = rollout(3, "Completed");
    completed["status"]["phase"] = json!("Healthy");
    server.put_object(completed);
    let mut edited = vs(&server);
    edited["spec"]["http"][0]["timeout"] = json!("5s");
    server.put_object(edited);
    test.run_args(["status", "demo"])
        .success()
        .stdout_has("VirtualService shop/demo   drifted")
        .stdout_has("note: the release is over (phase Healthy), but VirtualService shop/demo is at none of its steps (nearest: as step 2/3 routes it, plus edits) and not at its original: edited since");
    let json: serde_json::Value =
        serde_json::from_str(&test.run_args(["status", "demo", "-o", "json"]).success().stdout).unwrap();
    assert_eq!(json[0]["objects"][0]["position"], json!({"kind": "drifted", "nearest": 2}), "{json}");
    // A follower's line (what a CI gate logs) marks it as it marks one left at a step.
    test.run_args(["status", "demo", "-w"])
        .success()
        .stdout_has("; VirtualService demo drifted (left routed, not restored), ");
    server.clear_log();
    test.run_args(["restore", "demo", "--yes"])
        .status(3)
        .stdout_has("VirtualService shop/demo was edited after it was routed; a restore discards these edits:\n--- VirtualService shop/demo (as step 2/3 routes it)\n")
        .stdout_has("+    timeout: 5s")
        .stderr_has("nothing was written: the objects were edited after they were routed (shown above)");
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["restore", "demo", "--yes", "--force"]).success();
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

/// The shop at step 2, routed (`approve --traffic-only`), then its VirtualService changed by
/// `edit` as someone else would.
fn routed_then(edit: impl FnOnce(&mut serde_json::Value)) -> (FakeHandle, Test) {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    let mut changed = vs(&server);
    edit(&mut changed);
    server.put_object(changed);
    (server, test)
}

#[test]
fn approve_refuses_to_write_over_edits_made_after_the_routing_without_force_as_restore_does() {
    // A regression: `restore` refused to discard an edit made during the release, and `approve
    // --yes` wrote over it, the diff its only word.
    let (server, test) = routed_then(|vs| vs["spec"]["http"][0]["timeout"] = json!("5s"));
    let edited = vs(&server);
    let what = "VirtualService shop/demo: edited during the release (it stands at no step's plan, nor at its original); approving writes over the edit, as the diff above shows";
    server.clear_log();
    test.run_args(["approve", "demo", "--dry-run=client"]).success().stderr_has(&format!("warning: {what}\n"));
    test.run_args(["approve", "demo", "--yes"]).status(3).stdout_has("-    timeout: 5s").stderr_has(&format!(
        "error: nothing was written: {what}: review it (`status`), and pass --force to approve anyway\n"
    ));
    assert_eq!(writes(&server), Vec::<String>::new());
    assert_eq!(vs(&server)["spec"], edited["spec"]);
    test.run_args(["approve", "demo", "--yes", "--force"])
        .success()
        .stderr_has(&format!("warning: {what}: written all the same (--force)\n"));
    assert_eq!(vs(&server)["spec"]["http"][0].get("timeout"), None);
}

#[test]
fn a_claim_refused_on_a_name_no_rollout_has_says_the_name_is_not_found() {
    // A regression: a typo without a Role for Leases was told to get one (exit 3).
    let server = shop(2, "StepPaused").deny(Rule::new(["create"]).resources(["leases"])).start();
    let test = Test::new().kubeconfig(&server);
    for command in ["approve", "restore"] {
        test.run_args([command, "nosuch", "--yes"])
            .status(1)
            .stderr_has("error: rollouts.rollouts.kruise.io \"nosuch\" not found in namespace shop\n");
    }
    // A Rollout that is there: the refusal is the claim's.
    let refused = test.run_args(["approve", "demo", "--yes"]).status(3);
    assert!(refused.stderr.contains("leases"), "{}", refused.stderr);
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn approve_refuses_to_store_canary_routing_as_the_original_without_force() {
    // A regression: with the annotation removed mid-release, the next write stored the step's
    // canary routing as the original, for the release's end to put back.
    let (server, test) = routed_then(|vs| {
        vs["metadata"].as_object_mut().unwrap().remove("annotations");
    });
    test.run_args(["plan", "demo"]).success().stdout_has(
        "VirtualService/demo: it has no stored original (rollouts.kruise.io/original-spec-configuration) and routes to the canary Service demo-canary already: the controller stores this routing as its original",
    );
    server.clear_log();
    test.run_args(["approve", "demo", "--yes"]).status(3).stderr_has(
        "error: nothing was written: these objects have no stored original, and the controller would store their canary routing as it (the annotation removed mid-release, or routing made by hand), to put it back when the release ends:\n  VirtualService shop/demo: routes to the canary Service demo-canary already\n",
    );
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["approve", "demo", "--yes", "--force"]).success();
}

#[test]
fn status_and_restore_tell_canary_routing_without_a_stored_original_from_the_original() {
    // An interrupt sweep: with the annotation removed mid-release, `status` called the object
    // `original` and suggested `approve --traffic-only` (which refuses it), and `restore` exited
    // 0, leaving the canary routing as it was, said only as "nothing to restore".
    let (server, test) = routed_then(|vs| {
        vs["metadata"].as_object_mut().unwrap().remove("annotations");
    });
    let status = test.run_args(["status", "demo"]).success();
    let status = status
        .stdout_has("    VirtualService shop/demo   canary, no original  built-in ")
        .stdout_has("      note: it has no stored original (rollouts.kruise.io/original-spec-configuration) and routes to the canary Service demo-canary already: the controller stores this routing as its original, and the release's end puts it back, canary traffic and all; approve refuses it without --force\n");
    assert!(!status.stdout.contains("--traffic-only"), "{}", status.stdout);
    let json: serde_json::Value =
        serde_json::from_str(&test.run_args(["status", "demo", "-o", "json"]).success().stdout).unwrap();
    assert_eq!(
        json[0]["objects"][0]["position"],
        json!({"kind": "canaryWithoutOriginal", "canary": "the canary Service demo-canary"})
    );
    let left = "VirtualService shop/demo has no stored original (rollouts.kruise.io/original-spec-configuration) and routes to the canary Service demo-canary already: restore has nothing to put back, and leaves that routing as it is: `restore --from-backup ";
    server.clear_log();
    let refused = test.run_args(["restore", "demo", "--yes"]).status(3).stderr_has(&format!(
        "error: nothing was written: restore would leave these objects as they are, without putting back what was written to them:\n  {left}"
    ));
    assert_eq!(writes(&server), Vec::<String>::new());
    let backup = refused.stderr.split("`restore --from-backup ").nth(1).unwrap().split('`').next().unwrap().to_string();
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes"]).status(3).stderr_has(left);
    test.run_args(["restore", "demo", "--yes", "--force"])
        .success()
        .stderr_has(&format!("warning: {left}"))
        .stdout_has("DestinationRule shop/demo restored");
    assert!(vs(&server)["spec"]["http"].to_string().contains("demo-canary"), "left as it was");
    // The backup named is the object before the release's first write: its original.
    test.run_args(["restore", "--from-backup", &backup, "--yes"]).success();
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn the_backup_restore_names_for_canary_routing_without_a_stored_original_is_from_before_the_latest_release() {
    // A backups trial: restore named the object's oldest backup, from an earlier release, and
    // putting it back undid an edit made between the releases.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    test.run_args(["restore", "demo", "--yes"]).success();
    let mut edited = vs(&server);
    edited["spec"]["http"][0]["timeout"] = json!("7s");
    server.put_object(edited);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    let mut unannotated = vs(&server);
    unannotated["metadata"].as_object_mut().unwrap().remove("annotations");
    server.put_object(unannotated);
    let refused = test.run_args(["restore", "demo", "--yes"]).status(3).stderr_has(
        "its latest backup here from before a release (it holds no stored original), saved before the first write this tool made to it in that release (check that it holds what you want: an older one would undo the edits made since)",
    );
    let backup = refused.stderr.split("`restore --from-backup ").nth(1).unwrap().split('`').next().unwrap().to_string();
    test.run_args(["restore", "--from-backup", &backup, "--yes"]).success();
    assert_eq!(vs(&server)["spec"]["http"][0]["timeout"], "7s", "the edit between the releases stands");
    assert!(!vs(&server)["spec"]["http"].to_string().contains("demo-canary"), "{}", vs(&server));
}

#[test]
fn approve_refuses_to_store_the_canary_subset_as_the_original_where_there_is_no_canary_service() {
    // A regression: with disableGenerateCanaryService (canary and stable Service one, the
    // canary a subset of it) the guard above never fired: a VirtualService without its
    // annotation, routing to the canary subset already, was approved and its canary routing
    // stored as the original.
    let mut rollout = rollout(2, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["disableGenerateCanaryService"] = json!(true);
    let mut routed = virtual_service();
    routed["spec"]["http"][0]["route"] = json!([
        {"destination": {"host": "demo"}, "weight": 80},
        {"destination": {"host": "demo.shop.svc.cluster.local", "subset": "canary"}, "weight": 20}
    ]);
    let server = serving(rollout).start();
    server.put_object(routed);
    let test = Test::new().kubeconfig(&server);
    test.run_args(["plan", "demo"]).success().stdout_has(
        "VirtualService/demo: it has no stored original (rollouts.kruise.io/original-spec-configuration) and routes to the canary subset of Service demo already: the controller stores this routing as its original",
    );
    server.clear_log();
    test.run_args(["approve", "demo", "--yes"])
        .status(3)
        .stderr_has("  VirtualService shop/demo: routes to the canary subset of Service demo already\n");
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["approve", "demo", "--yes", "--force"]).success();
}

#[test]
fn approve_refuses_a_step_the_controllers_own_script_fails_on_without_force() {
    // A regression: approve wrote the built-in script's routing, which the controller's own
    // script cannot make (a DestinationRule without subsets, a VirtualService without spec),
    // leaving the release stuck at the step; `restore` then refused the `{}` original it stored.
    let mut rule = destination_rule();
    rule["spec"].as_object_mut().unwrap().remove("subsets");
    let server = shop(1, "StepPaused").object(rule).start();
    let test = Test::new().kubeconfig(&server);
    let stuck = "DestinationRule/demo: the controller's own DestinationRule script fails on an object without spec.subsets (bad argument #1 to insert); this tool's built-in script creates the list, but a controller would stick at this step: add subsets: [] to the object";
    test.run_args(["plan", "demo"]).success().stdout_has(stuck).stdout_has(
        "VirtualService shop/demo: the controller writes none of this step's routing here: its own script fails on DestinationRule shop/demo (see there), which stops the step before any object's routing is written",
    );
    server.clear_log();
    test.run_args(["approve", "demo", "--yes"]).status(3).stderr_has(&format!(
        "error: nothing was written: the controller would stick at this step on these objects: approving it writes routing the controller cannot make, and leaves the release stuck there:\n  {stuck}\nFix the objects as each line says, or pass --force to write anyway\n"
    ));
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["approve", "demo", "--yes", "--force"]).success();
    // A VirtualService without spec, and no stored original: the script's obj has none.
    let mut service = virtual_service();
    service.as_object_mut().unwrap().remove("spec");
    let server = shop(1, "StepPaused").object(service).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--yes"])
        .status(3)
        .stderr_has("VirtualService/demo: the controller's own VirtualService script fails on this object at this step (the obj has no spec");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn approve_refuses_an_original_the_api_server_would_not_store_in_an_annotation() {
    // A regression: a VirtualService of 300 KB was planned and approved; the API server admits
    // 256 KiB of annotations, so the controller's store of the original fails, and the step
    // sticks (a real API server refuses the write too).
    let mut service = virtual_service();
    service["spec"]["hosts"] = json!((0..3000).map(|i| format!("{i:0>100}")).collect::<Vec<_>>());
    let server = shop(1, "StepPaused").object(service).start();
    let test = Test::new().kubeconfig(&server);
    let too_large = "VirtualService/demo: its annotations take 309143 bytes with the stored original";
    test.run_args(["plan", "demo"]).success().stdout_has(too_large).stdout_has(
        "past the 262144 the API server admits: the controller's write fails, and a controller would stick at this step",
    );
    server.clear_log();
    // Forced too: the API server would refuse the write, as it refuses the controller's.
    approve_refused_forced_or_not(&test, &server, too_large);
}

#[test]
fn names_that_would_reach_another_url_are_refused_before_any_request() {
    // A regression: names went into request paths as they were: `status 'demo?x=1'` showed
    // demo, `release-claim 'demo#x'` deleted the claim on demo, and a ref named `../x` could
    // read (and write) another resource's object.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    server.clear_log();
    for name in ["demo?x=1", "demo#x", "de mo"] {
        for command in [&["status", name][..], &["release-claim", name, "--yes"], &["approve", name, "--yes"]] {
            test.run_args(command).status(1).stderr_has("is no Kubernetes name");
        }
    }
    test.run_args(["status", "-n", "shop#x"]).status(1).stderr_has("\"shop#x\" is no Kubernetes namespace");
    assert_eq!(writes(&server), Vec::<String>::new());
    // A ref the Rollout names so, read from the cluster: planning it fails, naming it.
    let mut crooked = rollout(2, "StepPaused");
    crooked["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"][1]["name"] =
        json!("../../../api/v1/namespaces/shop/secrets/demo");
    let server = serving(crooked).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["plan", "demo"])
        .status(1)
        .stderr_has("\"../../../api/v1/namespaces/shop/secrets/demo\" is no Kubernetes name");
    test.run_args(["approve", "demo", "--yes", "--force"]).status(1);
    assert_eq!(writes(&server).iter().filter(|w| !w.contains("leases")).count(), 0, "{:?}", writes(&server));
}

#[test]
fn an_object_left_with_its_original_stored_and_no_routing_is_at_its_original_not_edited() {
    // Where a write cut short after the original's store leaves it (a hung server, a second
    // signal): at its original. A regression: status called it drifted, and restore refused it
    // as someone's edit.
    let stored =
        r#"{"spec":{"hosts":["demo"],"http":[{"route":[{"destination":{"host":"demo"}}]}]},"labels":{"app":"demo"}}"#;
    let server = shop(2, "StepPaused").object(virtual_service_storing(stored)).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status", "demo"])
        .success()
        .stdout_has("VirtualService shop/demo   original")
        .stdout_has("VirtualService shop/demo is not at step 2, the current step (it is at its original)");
    let dry = test.run_args(["approve", "demo", "--dry-run=client"]).success();
    assert!(!dry.stderr.contains("edited after it was routed"), "{}", dry.stderr);
    test.run_args(["restore", "demo", "--yes"]).success();
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

/// The VirtualService with `stored` as its stored original.
fn virtual_service_storing(stored: &str) -> serde_json::Value {
    let mut object = virtual_service();
    object["metadata"]["annotations"] = json!({"rollouts.kruise.io/original-spec-configuration": stored});
    object
}

#[test]
fn restore_refuses_a_corrupt_annotation() {
    // An empty one is said to be empty, as approve says it (a red-team trial: "does not parse").
    for (stored, said) in [("{\"spec\": [not json", "does not parse"), ("", "is empty; fix or remove it")] {
        let server = shop(2, "StepPaused").object(virtual_service_storing(stored)).start();
        Test::new()
            .kubeconfig(&server)
            .args(["restore", "demo", "--yes", "--force"])
            .run()
            .status(3)
            .stderr_has(&format!("nothing was written: VirtualService shop/demo: its annotation rollouts.kruise.io/original-spec-configuration {said}"));
        assert_eq!(writes(&server), Vec::<String>::new());
    }
}

#[test]
fn restore_a_ref_refuses_a_stored_original_that_does_not_decode() {
    let corrupt = virtual_service_storing("{bad");
    let server = shop(2, "StepPaused").object(corrupt.clone()).start();
    let test = Test::new().kubeconfig(&server);
    for force in [&[][..], &["--force"]] {
        test.run_args(["restore", "--ref", "VirtualService/demo", "--yes"].iter().chain(force))
            .status(3)
            .stderr_has("error: nothing was written: VirtualService shop/demo: its annotation rollouts.kruise.io/original-spec-configuration does not parse (invalid JSON: key must be a string at line 1 column 2); fix or remove it, or restore from a backup");
    }
    assert_eq!(writes(&server), Vec::<String>::new());
    assert_eq!(vs(&server)["spec"], corrupt["spec"]);
    assert_eq!(vs(&server)["metadata"]["annotations"], corrupt["metadata"]["annotations"]);
    assert_eq!(dr(&server)["spec"], destination_rule()["spec"]);
    assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "the claim is released");
}

#[test]
fn restore_skips_missing_objects_and_objects_without_an_original() {
    let server = shop(2, "StepPaused").start();
    server.delete_object("networking.istio.io", "destinationrules", NAMESPACE, "demo");
    Test::new()
        .kubeconfig(&server)
        .args(["restore", "demo", "--yes"])
        .run()
        .success()
        .stderr_has("DestinationRule shop/demo: not found, skipped")
        .stderr_has("VirtualService shop/demo: no rollouts.kruise.io/original-spec-configuration annotation, nothing to restore");
    assert_eq!(writes(&server), Vec::<String>::new());
    // An object named with --ref and not there is an error, once the others are restored (a
    // regression: exit 0 on a typo).
    Test::new()
        .kubeconfig(&server)
        .args(["restore", "--ref", "VirtualService/reveiws", "--ref", "VirtualService/demo", "--yes"])
        .run()
        .status(1)
        .stderr_has("VirtualService shop/reveiws: not found: the others are restored, then the run fails for it\n")
        .stderr_has("error: VirtualService shop/reveiws: not found\n");
}

#[test]
fn restore_a_ref_not_found_fails_the_run_but_keeps_the_others_restored() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    // A regression (audit s37 F2): the run said the other object was restored, then, failing on
    // the typo, rolled that restore back.
    let out = test
        .run_args(["restore", "--ref", "VirtualService/reveiws", "--ref", "VirtualService/demo", "--yes"])
        .status(1)
        .stdout_has("VirtualService shop/demo restored")
        .stderr_has("error: VirtualService shop/reveiws: not found\n");
    assert!(!out.stderr.contains("rolled back"), "{}", out.stderr);
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    assert!(vs(&server)["metadata"]["annotations"].is_null());
    assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "the claim is released");
}

#[test]
fn restore_a_single_ref_and_from_a_backup() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    let routed = vs(&server);
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes"])
        .success()
        .stdout_has("VirtualService shop/demo restored");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    assert_eq!(dr(&server)["spec"]["subsets"].as_array().unwrap().len(), 2, "only the named ref");
    // The restore backed up the routed object; putting that backup back routes it again.
    let dir = test.path("home/.local/state/kubectl-rollout-lua/backups/fake/shop/VirtualService/demo");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 2, "one backup per write run: {files:?}");
    let routed_backup = files.last().unwrap().clone();
    test.run_args(["restore".as_ref(), "--from-backup".as_ref(), routed_backup.as_os_str(), "--yes".as_ref()])
        .success()
        .stdout_has("restored from");
    assert_eq!(vs(&server)["spec"], routed["spec"]);
    assert_eq!(vs(&server)["metadata"]["annotations"], routed["metadata"]["annotations"]);
}

#[test]
fn a_step_routing_to_a_missing_canary_service_is_a_warning() {
    let server = shop(2, "StepPaused").start();
    let warning = "warning: Service demo-canary does not exist: VirtualService shop/demo routes to it; the controller creates it at a step that routes, before it writes any routing (to every provider; not for a blue-green release's final route to the new version), but without the controller the canary traffic fails\n";
    let test = Test::new().kubeconfig(&server);
    let present = test.run_args(["plan", "demo", "--step", "2"]).success();
    assert!(!present.stdout.contains("does not exist"), "{}", present.stdout);
    server.delete_object("", "services", NAMESPACE, "demo-canary");
    let missing = test.run_args(["plan", "demo", "--step", "2"]).success().stdout_has(warning);
    // The DestinationRule routes to subset canary of Service demo, not to demo-canary.
    assert_eq!(missing.stdout.matches("does not exist").count(), 1, "{}", missing.stdout);
}

#[test]
fn a_virtual_service_put_back_routing_to_the_canary_subset_outside_a_release_is_warned_of() {
    // With disableGenerateCanaryService the canary is a subset of the stable Service: a backup
    // routing to it was put back without a word (only a canary Service's name was looked for).
    let mut rollout = rollout(2, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["disableGenerateCanaryService"] = json!(true);
    let server = serving(rollout).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][1]["destination"]["subset"], "canary");
    test.run_args(["restore", "--ref", "vs/demo", "--yes"]).success();
    let dir = test.path("home/.local/state/kubectl-rollout-lua/backups/fake/shop/VirtualService/demo");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let routed = files.last().unwrap().to_str().unwrap().to_string();
    let mut over = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo").unwrap();
    over["status"] = json!({"phase": "Healthy"});
    server.put_object(over);
    // Its Service is the stable one: gone, it is one the controller waits for, not one it makes.
    server.delete_object("", "services", NAMESPACE, "demo");
    let put_back = test
        .run_args(["restore", "--from-backup", &routed, "--yes"])
        .success()
        .stderr_has("warning: Rollout shop/demo is not in a release: the controller puts back the stored original of its custom refs only in a release")
        .stderr_has("warning: Service demo does not exist: the controller waits for it and writes nothing until it does, and VirtualService shop/demo routes to it");
    assert!(!put_back.stderr.contains("the controller creates it"), "{}", put_back.stderr);
}

#[test]
fn a_virtual_service_put_back_routing_to_a_missing_canary_service_outside_a_release_warns_of_both() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    // kubectl's short name for the kind (a regression: refused as no KIND.GROUP/NAME).
    test.run_args(["restore", "--ref", "vs/demo", "--yes"]).success();
    let dir = test.path("home/.local/state/kubectl-rollout-lua/backups/fake/shop/VirtualService/demo");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let routed = files.last().unwrap().to_str().unwrap().to_string();
    let from_backup = |more: &str| test.run_args(["restore", "--from-backup", &routed, more]);
    // In a release, its canary Service there: nothing to warn of.
    let quiet = from_backup("--dry-run=client").success();
    assert!(!quiet.stderr.contains("warning:"), "{}", quiet.stderr);
    // The release is over: the controller deleted the canary Service.
    let mut over = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo").unwrap();
    over["status"] = json!({"phase": "Healthy"});
    server.put_object(over);
    server.delete_object("", "services", NAMESPACE, "demo-canary");
    from_backup("--yes")
        .success()
        .stderr_has("warning: Service demo-canary does not exist: VirtualService shop/demo routes to it; the controller creates it at a step that routes, before it writes any routing (to every provider; not for a blue-green release's final route to the new version), but without the controller the canary traffic fails\n")
        .stderr_has("warning: Rollout shop/demo is not in a release: the controller puts back the stored original of its custom refs only in a release (at a step without traffic, or at its end), so VirtualService shop/demo stays, with the canary traffic it routes, until `restore --ref VirtualService.networking.istio.io/demo` puts its stored original back\n")
        .stdout_has("VirtualService shop/demo restored from ");
    assert!(vs(&server)["spec"]["http"][0]["route"][1]["destination"]["host"] == "demo-canary", "put back as asked");
    // As the warning says, a restore puts the original back.
    test.run_args(["restore", "--ref", "VirtualService.networking.istio.io/demo", "--yes"])
        .success()
        .stdout_has("VirtualService shop/demo restored");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn restore_from_a_backup_that_never_comes_ends_on_sigterm() {
    // A regression: the backup (`<(cmd)`, a FIFO, a stalled mount) was read after the signal
    // handlers were installed, on the runtime's one thread, so nothing could stop the run.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    match std::process::Command::new("mkfifo").arg(test.path("backup.yaml")).status() {
        Ok(status) if status.success() => {}
        _ => return crate::support::skip("mkfifo could not make a FIFO"),
    }
    let running = test.spawn(&["restore", "--from-backup", "backup.yaml", "--yes"]);
    // Opening the FIFO's other end returns once the run has opened it to read: it is waiting.
    let _writer = std::fs::OpenOptions::new().write(true).open(test.path("backup.yaml")).unwrap();
    running.signal("TERM");
    let out = running.finish_within(Duration::from_secs(10));
    assert_eq!(out.status, -1, "ended by the signal, as any command that is reading: {}", out.stderr);
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn restore_a_single_ref_goes_through_the_groups_preferred_version() {
    // As kubectl resolves `KIND.GROUP`: the version discovery prefers, not the newest served.
    let server = shop(2, "StepPaused").preferred_version("networking.istio.io", "v1alpha3").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    server.clear_log();
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes"]).success();
    assert_eq!(writes(&server), ["PUT /apis/networking.istio.io/v1alpha3/namespaces/shop/virtualservices/demo"]);
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn restore_from_a_backup_refuses_what_it_cannot_put_back() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    let backup = |name: &str, object: &serde_json::Value| {
        std::fs::write(test.path(name), backup_text(&server, object)).unwrap();
        test.run_args(["restore", "--from-backup", name, "--yes"])
    };
    let with_metadata = |metadata: serde_json::Value| {
        let mut object = virtual_service();
        object["metadata"] = metadata;
        object
    };
    server.clear_log();
    backup("nameless.yaml", &with_metadata(json!({"namespace": NAMESPACE})))
        .status(1)
        .stderr_has("error: nameless.yaml: no metadata.name");
    backup("other.yaml", &with_metadata(json!({"name": "demo", "namespace": "other"})))
        .status(1)
        .stderr_has("error: other.yaml holds an object of namespace other, not shop: run with -n other");
    // An object that no longer exists is made again (tests/ingress.rs has it written).
    let gone = with_metadata(json!({"name": "gone", "namespace": NAMESPACE}));
    std::fs::write(test.path("gone.yaml"), backup_text(&server, &gone)).unwrap();
    test.run_args(["restore", "--from-backup", "gone.yaml", "--dry-run=client"])
        .success()
        .stdout_has("VirtualService shop/gone does not exist: it is created as the backup holds it")
        .stdout_has("--- VirtualService shop/gone (absent)\n")
        .stdout_has("dry run (client): nothing was written");
    backup("live.yaml", &vs(&server)).success().stdout_is("VirtualService shop/demo already matches the backup\n");
    assert_eq!(writes(&server), Vec::<String>::new());
    // The nearest backup that differs is put back, naming where the state it replaced went.
    let out = backup("original.yaml", &virtual_service()).success();
    let previous = newest_backup_of_the_virtual_service(&test);
    out.stdout_has(&format!(
        "VirtualService shop/demo restored from original.yaml (its previous state: {})\n",
        previous.display()
    ));
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    // The claim names the command to whoever else finds the Rollout claimed.
    let claim = server.writes().into_iter().rfind(|w| w.method == "POST" && w.path.contains("/leases")).unwrap();
    assert_eq!(
        claim.body["metadata"]["annotations"]["kubectl-rollout-lua/command"],
        "restore --from-backup original.yaml"
    );
}

#[test]
fn restore_from_a_backup_refuses_one_cut_short_changed_or_of_another_object_unless_forced() {
    // A regression (audit s24-safety #2): a backup cut short (a crash, a full disk) was put
    // back, without half its routes or without spec, exit 0; so was the backup of an object
    // deleted and made again since.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    let routed = vs(&server);
    let whole = std::fs::read_to_string(newest_backup_of_the_virtual_service(&test)).unwrap();
    let saved = rollout_lua::for_tests::parse_documents(&whole, "backup").unwrap().remove(0).value;
    let refused = |name: &str, text: &str, why: &str| {
        std::fs::write(test.path(name), text).unwrap();
        test.run_args(["restore", "--from-backup", name, "--yes"]).status(3).stderr_has(&format!(
            "error: nothing was written: {name} {why}; check it, and pass --force to put it back anyway\n"
        ))
    };
    let no_end_line = "has no end line (`# end of backup: sha256 …`): it was written by an older version, or cut short";
    server.clear_log();
    refused("no-routes.yaml", &whole[..whole.find("  http:").unwrap()], no_end_line);
    refused("no-spec.yaml", &whole[..whole.find("\nspec:").unwrap() + 1], no_end_line);
    let older = &whole[..whole.find("# end of backup").unwrap()];
    refused("older.yaml", older, no_end_line);
    refused(
        "changed.yaml",
        &whole.replace("host: demo", "host: other"),
        "does not match its end line (`# end of backup: sha256 …`): it was changed since it was written, or cut short",
    );
    let mut specless = saved.clone();
    specless.as_object_mut().unwrap().remove("spec");
    refused(
        "specless.yaml",
        &backup_text(&server, &specless),
        "holds no spec, and VirtualService shop/demo has one: putting it back would remove the spec",
    );
    let mut made_again = saved.clone();
    made_again["metadata"]["uid"] = json!("00000000-0000-0000-0000-000000000000");
    let uid = routed["metadata"]["uid"].as_str().unwrap();
    refused(
        "made-again.yaml",
        &backup_text(&server, &made_again),
        &format!(
            "holds VirtualService shop/demo with uid 00000000-0000-0000-0000-000000000000, and the live one's is {uid}: the object was deleted and made again since the backup was written"
        ),
    );
    // A backups trial: two clusters whose contexts have one name share a backups folder, and
    // one's backup made its object in the other. A backup names the API server it was read from.
    refused(
        "elsewhere.yaml",
        &rollout_lua::for_tests::backup_text(&saved, "https://10.0.0.9:6443/"),
        &format!(
            "was read from the API server at https://10.0.0.9:6443/, and this run reaches {}/: it may be another cluster's object (contexts of one name, such as kind-kind or kubernetes-admin@kubernetes, often are other clusters')",
            server.url()
        ),
    );
    assert!(whole.starts_with(&format!("# server: {}/\n", server.url())), "{whole}");
    assert_eq!(writes(&server), Vec::<String>::new());
    assert_eq!(vs(&server), routed);
    // --force puts one back all the same, saying why it would not.
    test.run_args(["restore", "--from-backup", "older.yaml", "--yes", "--force"])
        .success()
        .stderr_has(&format!("warning: older.yaml {no_end_line}; put back all the same (--force)\n"))
        .stdout_has("VirtualService shop/demo restored from older.yaml");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn the_approval_is_not_backed_up_and_restore_puts_back_only_gateway_objects() {
    // A regression: the approval's status patch was backed up as the Rollout's state, and a
    // failure report offered that file, which `restore --from-backup` would PUT over the live
    // Rollout (its spec included).
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--yes"]).success();
    let backups = test.path("home/.local/state/kubectl-rollout-lua/backups/fake/shop");
    let mut kinds: Vec<String> =
        std::fs::read_dir(&backups).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    kinds.sort();
    assert_eq!(kinds, ["DestinationRule", "VirtualService"], "no backup of the Rollout");

    let mut old_rollout = rollout(1, "StepPaused");
    old_rollout["spec"]["strategy"]["canary"]["steps"][1]["traffic"] = json!("90%");
    let live_rollout = || server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo").unwrap();
    let before = live_rollout();
    server.clear_log();
    for (file, object, named) in
        [("rollout.yaml", old_rollout, "Rollout shop/demo"), ("deployment.yaml", deployment(1), "Deployment shop/demo")]
    {
        std::fs::write(test.path(file), backup_text(&server, &object)).unwrap();
        test.run_args(["restore", "--from-backup", file, "--yes"]).status(3).stderr_has(&format!(
            "error: nothing was written: {file} holds {named}, which is not a gateway object this tool writes (a custom ref with a Lua script, an Ingress or an HTTPRoute): restore --from-backup puts back only those"
        ));
    }
    // A Rollout as the API server returns it (no end line), forced: refused as a Rollout, with
    // no warning that it is put back all the same (a regression).
    std::fs::write(test.path("got.yaml"), serde_json::to_string(&live_rollout()).unwrap()).unwrap();
    let forced = test.run_args(["restore", "--from-backup", "got.yaml", "--yes", "--force"]).status(3);
    assert!(!forced.stderr.contains("put back all the same"), "{}", forced.stderr);
    assert!(
        forced.stderr.contains("got.yaml holds Rollout shop/demo, which is not a gateway object"),
        "{}",
        forced.stderr
    );
    assert_eq!(writes(&server), Vec::<String>::new());
    assert_eq!(live_rollout(), before);
    // Nor does --ref, whatever carries the annotation (a regression: a Deployment's or a
    // Rollout's spec was replaced by it, with no claim taken).
    let mut annotated = deployment(1);
    annotated["metadata"]["annotations"] =
        json!({"rollouts.kruise.io/original-spec-configuration": "{\"spec\":{\"replicas\":0}}"});
    server.put_object(annotated);
    let mut annotated = live_rollout();
    annotated["metadata"]["annotations"] =
        json!({"rollouts.kruise.io/original-spec-configuration": "{\"spec\":{\"disabled\":true}}"});
    server.put_object(annotated);
    let before = live_rollout();
    server.clear_log();
    for (reference, named) in
        [("Deployment.apps/demo", "Deployment shop/demo"), ("Rollout.rollouts.kruise.io/demo", "Rollout shop/demo")]
    {
        test.run_args(["restore", "--ref", reference, "--yes"]).status(3).stderr_has(&format!(
            "error: nothing was written: --ref {reference}: {named} is not a gateway object this tool writes (a custom ref with a Lua script, an Ingress or an HTTPRoute): restore --ref puts back only those"
        ));
    }
    assert_eq!(writes(&server), Vec::<String>::new());
    assert_eq!(claim_writes(&server), Vec::<String>::new());
    assert_eq!(live_rollout(), before);
}

#[test]
fn restore_in_a_namespace_without_rollouts_claims_none_and_reports_no_failure() {
    // A regression: the Rollouts that may route the object were listed with an empty selector,
    // which an empty namespace refuses ("no Rollouts ... match the selector"), and the restore
    // said that reading them had failed.
    let mut routed = virtual_service();
    routed["metadata"]["annotations"] = json!({"rollouts.kruise.io/original-spec-configuration": STORED});
    routed["spec"]["http"][0]["route"][0]["weight"] = json!(100);
    let server = FakeApiServer::builder().kruise_and_istio().resource(fake_apiserver::leases()).object(routed).start();
    let test = Test::new().kubeconfig(&server).file("original.yaml", &backup_text(&server, &virtual_service()));
    let restored = test
        .run_args(["restore", "--ref", "VirtualService/demo", "--yes"])
        .success()
        .stdout_has("VirtualService shop/demo restored");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    let from_backup = test
        .run_args(["restore", "--from-backup", "original.yaml", "--yes"])
        .success()
        .stdout_has("VirtualService shop/demo already matches the backup");
    for out in [&restored, &from_backup] {
        assert!(!out.stderr.contains("failed"), "{}", out.stderr);
    }
    assert_eq!(claim_writes(&server), Vec::<String>::new(), "no Rollout to claim");
}

#[test]
fn restore_checks_permissions() {
    let server = shop(2, "StepPaused").deny(Rule::new(["update"]).resources(["virtualservices"])).start();
    let mut routed = virtual_service();
    routed["metadata"]["annotations"] = json!({"rollouts.kruise.io/original-spec-configuration": STORED});
    server.put_object(routed);
    server.clear_log();
    Test::new()
        .kubeconfig(&server)
        .args(["restore", "demo", "--yes", "--force"])
        .run()
        .status(3)
        .stderr_has("update virtualservices named demo (API group networking.istio.io) in namespace shop");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn restore_ref_without_leave_to_read_the_rollouts_says_what_is_needed() {
    let server = shop(2, "StepPaused").deny(Rule::new(["list"]).resources(["rollouts"])).start();
    let mut routed = virtual_service();
    routed["metadata"]["annotations"] = json!({"rollouts.kruise.io/original-spec-configuration": STORED});
    server.put_object(routed);
    server.clear_log();
    let out = Test::new().kubeconfig(&server).args(["restore", "--ref", "VirtualService/demo", "--yes"]).run();
    out.status(3).stderr_has("; get and list on rollouts (API group rollouts.kruise.io) are needed, as for `status`, or pass --force to restore without them");
    assert_eq!(writes(&server), Vec::<String>::new());
}

const VS_PATH: &str = "/apis/networking.istio.io/v1beta1/namespaces/shop/virtualservices/demo";
const DR_PATH: &str = "/apis/networking.istio.io/v1beta1/namespaces/shop/destinationrules/demo";

#[test]
fn restore_retries_a_conflict_after_reading_again() {
    let server = shop(2, "StepPaused").start();
    Test::new().kubeconfig(&server).args(["approve", "demo", "--traffic-only", "--yes"]).run().success();
    server.clear_log();
    // Another client touches the DestinationRule (not its routing) between our read and our
    // second write (the claim is the first), which then conflicts; the VirtualService is
    // already restored by then.
    someone_edits(&server, When::Before(3), DESTINATION_RULE, |dr| {
        dr["metadata"]["finalizers"] = json!(["example.com/keep"])
    });
    Test::new()
        .kubeconfig(&server)
        .args(["restore", "demo", "--yes"])
        .run()
        .success()
        .stderr_has("conflict on DestinationRule shop/demo: nobody changed what this write is about; writing it again")
        .stdout_has("VirtualService shop/demo restored (backup ")
        .stdout_has("DestinationRule shop/demo restored (backup ");
    assert_eq!(writes(&server), [format!("PUT {VS_PATH}"), format!("PUT {DR_PATH}"), format!("PUT {DR_PATH}")]);
    let statuses: Vec<Option<u16>> = routing_writes(&server).iter().map(|w| w.status).collect();
    assert_eq!(statuses, [Some(200), Some(409), Some(200)]);
    let requests = server.requests();
    let conflict = requests.iter().position(|r| r.status == Some(409)).unwrap();
    assert!(
        requests[conflict..].iter().any(|r| r.method == "GET" && r.path.contains("/destinationrules")),
        "the DestinationRule is read again after the conflict"
    );
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    assert!(vs(&server)["metadata"]["annotations"].is_null());
    assert_eq!(dr(&server)["spec"], destination_rule()["spec"]);
    assert!(dr(&server)["metadata"]["annotations"].is_null());
    assert_eq!(dr(&server)["metadata"]["finalizers"], json!(["example.com/keep"]), "the other client's change stays");
}

#[test]
fn restore_writes_an_object_two_rollouts_share_once() {
    let mut twin = rollout(2, "StepPaused");
    twin["metadata"]["name"] = json!("demo-twin");
    let server = shop(2, "StepPaused").object(twin).start();
    // The twin in a release routes them too: written all the same.
    Test::new().kubeconfig(&server).args(["approve", "demo", "--traffic-only", "--yes", "--force"]).run().success();
    server.clear_log();
    let out = Test::new().kubeconfig(&server).args(["restore", "demo", "demo-twin", "--yes"]).run().success();
    assert_eq!(out.stdout.matches("VirtualService shop/demo: restore the stored original").count(), 1);
    assert_eq!(writes(&server), [format!("PUT {VS_PATH}"), format!("PUT {DR_PATH}")]);
    assert!(routing_writes(&server).iter().all(|w| w.status == Some(200)));
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    assert_eq!(dr(&server)["spec"], destination_rule()["spec"]);
}

#[test]
fn restore_after_a_conflict_refuses_to_discard_an_edit_made_meanwhile() {
    // Someone edits the DestinationRule's routing between our read and our write to it.
    let (server, routed) = routed_then_edited_before_the_second_write(|dr| {
        dr["spec"]["trafficPolicy"] = json!({"tls": {"mode": "ISTIO_MUTUAL"}})
    });
    Test::new()
        .kubeconfig(&server)
        .args(["restore", "demo", "--yes", "--force"])
        .run()
        .status(3)
        .stderr_has(
            "DestinationRule shop/demo was changed by someone else while this run wrote it; not overwriting their edit",
        )
        .stderr_has("+    tls:\n+      mode: ISTIO_MUTUAL")
        .stderr_has("VirtualService shop/demo: rolled back");
    assert_eq!(vs(&server)["spec"], routed["spec"], "the VirtualService is routed again");
    assert_eq!(vs(&server)["metadata"]["annotations"], routed["metadata"]["annotations"]);
    assert_eq!(dr(&server)["spec"]["trafficPolicy"], json!({"tls": {"mode": "ISTIO_MUTUAL"}}), "the edit stays");
    assert!(dr(&server)["metadata"]["annotations"]["rollouts.kruise.io/original-spec-configuration"].is_string());
}

#[test]
fn restore_rolls_back_when_someone_else_rewrites_the_stored_original() {
    // The conflicting write leaves the DestinationRule with an annotation that does not parse.
    let (server, routed) = routed_then_edited_before_the_second_write(|dr| {
        dr["metadata"]["annotations"]["rollouts.kruise.io/original-spec-configuration"] = json!("{not json")
    });
    let out = Test::new()
        .kubeconfig(&server)
        .args(["restore", "demo", "--yes"])
        .run()
        .status(3)
        .stderr_has("DestinationRule shop/demo was changed by someone else while this run wrote it")
        .stderr_has("{not json")
        .stderr_has("VirtualService shop/demo: rolled back");
    assert!(!out.stderr.contains("nothing was written"), "{}", out.stderr);
    assert_eq!(vs(&server)["spec"], routed["spec"], "the VirtualService is routed again");
    assert_eq!(vs(&server)["metadata"]["annotations"], routed["metadata"]["annotations"]);
}

#[test]
fn restore_while_the_next_step_upgrades_sees_no_edit() {
    // Routed at step 1; the controller has moved on to step 2 but not routed it yet.
    let server = shop(1, "StepPaused").start();
    Test::new().kubeconfig(&server).args(["approve", "demo", "--traffic-only", "--yes"]).run().success();
    server.put_object(rollout(2, "StepUpgrade"));
    server.clear_log();
    let out = Test::new()
        .kubeconfig(&server)
        .args(["restore", "demo", "--yes"])
        .run()
        .success()
        .stdout_has("VirtualService shop/demo restored (backup ")
        .stdout_has("DestinationRule shop/demo restored (backup ");
    assert!(!out.stdout.contains("edited"), "{}", out.stdout);
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    assert_eq!(dr(&server)["spec"], destination_rule()["spec"]);
}

#[test]
fn restore_is_refused_when_it_cannot_check_for_edits_unless_forced() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server).file("broken.lua", "error('broken')");
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    let restore = |args: &[&str]| test.run_args(["restore", "demo", "--yes"].iter().chain(args));
    // The steps plan: the objects are checked for edits, and nothing is said.
    let checked = restore(&["--dry-run", "client"]).success();
    assert!(!checked.stderr.contains("cannot check for edits"), "{}", checked.stderr);
    // A script that fails leaves edits unseen: a check that cannot be made is not one that
    // passed, so the restore is refused (with or without --ref), unless --force.
    let broken = ["--script", "VirtualService.networking.istio.io=broken.lua"];
    let note = "Rollout demo: cannot check for edits made during the release, its steps do not plan: ";
    let refusal = "error: nothing was written: Rollout demo's steps do not plan (said above), so the objects could not be checked for edits made during the release, which a restore would discard unseen: fix what stops the steps planning, or pass --force to restore anyway\n";
    server.clear_log();
    let refused = restore(&broken).status(3).stderr_has(note).stderr_has("broken").stderr_has(refusal);
    assert!(!refused.stderr.contains("stuck"), "no Ingress class lacks a script: {}", refused.stderr);
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes", broken[0], broken[1]])
        .status(3)
        .stderr_has(note)
        .stderr_has(refusal);
    assert_eq!(writes(&server), Vec::<String>::new());
    // A dry run writes nothing: it shows the restore with the note.
    restore(&[broken[0], broken[1], "--dry-run", "client"])
        .success()
        .stderr_has(note)
        .stdout_has("VirtualService shop/demo: restore the stored original");
    restore(&[broken[0], broken[1], "--force"]).success().stderr_has(note);
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn v_6_says_each_request_with_its_answer_as_kubectls_does() {
    // A scripting trial: `-v=6`, kubectl's way to see what a command asks of the server, was
    // refused, and `-v` said nothing against a cluster.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let plain = test.run_args(["status", "demo"]).success();
    for quiet in [&["-v"][..], &["-v=5"], &["--verbose"]] {
        test.run_args(["status", "demo"].iter().chain(quiet)).success().stderr_is("");
    }
    // One line per request sent, retries included; what goes to stdout is as without it.
    server.storm(Requests::Matching(Rule::new(["get"]).resources(["rollouts"])), Some(1), 503, Some(1));
    let before = server.requests().len();
    let out = test.run_args(["status", "demo", "-v", "6"]).success().stdout_is(&plain.stdout);
    let sent = &server.requests()[before..];
    let said: Vec<&str> = out.stderr.lines().filter(|line| !line.starts_with("API server busy")).collect();
    // Requests sent together may be heard in another order than they were sent.
    let mut asked: Vec<String> =
        said.iter().map(|line| line.splitn(3, ' ').take(2).collect::<Vec<_>>().join(" ")).collect();
    let mut sent: Vec<String> = sent
        .iter()
        .map(|r| {
            format!("{} {}{}{}", r.method, server.url(), r.path, if r.query.is_empty() { "" } else { "?" }) + &r.query
        })
        .collect();
    asked.sort();
    sent.sort();
    assert_eq!(asked, sent, "{}", out.stderr);
    assert!(said.iter().all(|line| line.ends_with(" milliseconds")), "{}", out.stderr);
    let rollout = format!("GET {}/apis/rollouts.kruise.io/v1beta1/namespaces/shop/rollouts/demo ", server.url());
    let answers: Vec<&str> = said.iter().filter_map(|line| line.strip_prefix(&rollout)).collect();
    assert!(
        answers[0].starts_with("503 Service Unavailable in ") && answers[1].starts_with("200 OK in "),
        "{answers:?}"
    );
}

#[test]
fn the_api_servers_warnings_are_said_once_each_as_kubectl_says_them() {
    // A discovery trial: a deprecated version's warning (and an admission webhook's) was never
    // shown, where kubectl shows it.
    let deprecated =
        "networking.istio.io/v1beta1 VirtualService is deprecated; use networking.istio.io/v1 VirtualService";
    let server = FakeApiServer::builder()
        .resources([
            fake_apiserver::rollouts("v1beta1"),
            fake_apiserver::virtualservices("v1beta1").deprecated(deprecated),
            fake_apiserver::destinationrules("v1beta1"),
            fake_apiserver::configmaps(),
            fake_apiserver::leases(),
            fake_apiserver::services(),
            fake_apiserver::deployments(),
        ])
        .object(rollout(2, "StepPaused"))
        .object(virtual_service())
        .object(destination_rule())
        .object(service("demo"))
        .object(service("demo-canary"))
        .object(deployment(4))
        .start();
    let test = Test::new().kubeconfig(&server);
    let warning = format!("Warning: {deprecated}\n");
    for args in [&["plan", "demo"][..], &["approve", "demo", "--yes"]] {
        let out = test.run_args(args).success().stderr_has(&warning);
        assert_eq!(out.stderr.matches(&warning).count(), 1, "{}", out.stderr);
    }
}

#[test]
fn a_refused_connection_says_what_to_check_and_names_the_context() {
    // An operator trial (P2) read `ServiceError: client error (Connect): tcp connect error:
    // Connection refused (os error 111)`.
    let server = shop(2, "StepPaused").start();
    let (test, url) = (Test::new().kubeconfig(&server), server.url());
    drop(server);
    let out = test.run_args(["status", "demo", "--context", "other"]).status(1).stderr_has(&format!(
        " at {url}/: the connection to the server was refused (os error 111): is the server running, and is this the right host and port? (context other)\n"
    ));
    assert!(!out.stderr.contains("client error"), "{}", out.stderr);
    // A write's permission check that gets no answer refused nothing: no word of permissions.
    let out =
        test.run_args(["approve", "demo", "--yes"]).status(1).stderr_has("the connection to the server was refused");
    assert!(!out.stderr.contains("asked once the claim is taken"), "{}", out.stderr);
}

/// Two services released together (mocka -> mockb), each Rollout linked by annotation to a
/// TrafficRouting that routes a header to the DestinationRule subset `canary`.
fn full_link(state_b: &str) -> fake_apiserver::Builder {
    let mut builder = FakeApiServer::builder().kruise_and_istio().resource(fake_apiserver::leases());
    for (name, state) in [("mocka", "StepPaused"), ("mockb", state_b)] {
        builder = builder
            .object(json!({
                "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
                "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"release": "full-link"}, "annotations": {"rollouts.kruise.io/trafficrouting": format!("{name}-tr")}},
                "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}, "strategy": {"canary": {
                    "enableExtraWorkloadForCanary": true,
                    "steps": [{"replicas": 1}, {"replicas": "100%"}]
                }}},
                "status": {"phase": "Progressing", "canaryStatus": {"currentStepIndex": 1, "currentStepState": state}}
            }))
            .object(json!({
                "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
                "metadata": {"name": format!("{name}-tr"), "namespace": NAMESPACE, "finalizers": [format!("progressing.rollouts.kruise.io/{name}")]},
                "spec": {"strategy": {"matches": [{"headers": [{"type": "Exact", "name": "my-request-id", "value": "canary"}]}]}, "objectRef": [{"service": name, "customNetworkRefs": [
                    {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": name},
                    {"apiVersion": "networking.istio.io/v1beta1", "kind": "DestinationRule", "name": name}
                ]}]}
            }))
            .object(json!({
                "apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService",
                "metadata": {"name": name, "namespace": NAMESPACE},
                "spec": {"hosts": [name], "http": [{"route": [{"destination": {"host": name, "subset": "base"}}]}]}
            }))
            .object(json!({
                "apiVersion": "networking.istio.io/v1beta1", "kind": "DestinationRule",
                "metadata": {"name": name, "namespace": NAMESPACE},
                "spec": {"host": name, "subsets": [{"name": "base", "labels": {"version": "base"}}]}
            }));
    }
    builder
}

fn object(server: &FakeHandle, plural: &str, name: &str) -> serde_json::Value {
    server.object("networking.istio.io", "*", plural, NAMESPACE, name).unwrap()
}

#[test]
fn approve_several_rollouts_with_traffic_routings() {
    let server = full_link("StepPaused").start();
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "-l", "release=full-link", "--yes"])
        .run()
        .success()
        .stdout_has("TrafficRouting mocka-tr: matches [header my-request-id=canary]")
        .stdout_has("rollout.rollouts.kruise.io/mocka approved (step 1/2)")
        .stdout_has("rollout.rollouts.kruise.io/mockb approved (step 1/2)");
    for name in ["mocka", "mockb"] {
        let vs = object(&server, "virtualservices", name);
        assert_eq!(vs["spec"]["http"][0]["match"], json!([{"headers": {"my-request-id": {"exact": "canary"}}}]));
        assert_eq!(vs["spec"]["http"][0]["route"], json!([{"destination": {"host": name, "subset": "canary"}}]));
        assert_eq!(object(&server, "destinationrules", name)["spec"]["subsets"][1]["name"], "canary");
    }
}

#[test]
fn approve_previews_a_traffic_routings_next_step_as_kept_routed_not_restored() {
    // mocka has no trafficRoutings of its own and its step 2 neither traffic nor matches: its
    // TrafficRouting keeps routing through step 2, nothing is restored when it starts.
    let server = full_link("StepPaused").start();
    let out = Test::new().kubeconfig(&server).args(["approve", "mocka", "--yes"]).run().success().stdout_has(
        "Next for Rollout shop/mocka: step 2/2 (TrafficRouting mocka-tr keeps its routing for the whole release: its original comes back only once no Rollout holds it)\n",
    );
    assert!(!out.stdout.contains("restores the original"), "{}", out.stdout);
}

#[test]
fn a_missing_object_does_not_stop_a_step_that_restores() {
    // Step 3 has neither traffic nor matches: the controller's restore skips the deleted
    // DestinationRule and restores the VirtualService, and the step goes on (§3.4).
    let server = shop(3, "StepPaused").start();
    server.delete_object("networking.istio.io", "destinationrules", NAMESPACE, "demo").unwrap();
    let skipped = "DestinationRule shop/demo: there is no such object in namespace shop: the controller's restore skips it, but a step that routes it fails";
    let test = Test::new().kubeconfig(&server);
    test.run_args(["plan", "demo"])
        .success()
        .stdout_has("DestinationRule shop/demo: already as planned; not found: the controller's restore skips it")
        .stdout_has(skipped);
    // Where the objects stand is still told, the missing one absent.
    test.run_args(["status", "demo"])
        .success()
        .stdout_has("    VirtualService shop/demo   original  built-in")
        .stdout_has("    DestinationRule shop/demo  absent")
        .stdout_has("      note: Rollout shop/demo routes through DestinationRule/demo (networking.istio.io/v1beta1), but there is no such object in namespace shop: a step that routes it fails at the controller (its restore skips it)\n");
    test.run_args(["approve", "demo", "--yes"])
        .success()
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 3/3)");
    // A step that routes it still fails, as the controller's does.
    test.run_args(["plan", "demo", "--step", "2"])
        .status(1)
        .stderr_has("but there is no such object in namespace shop");
}

#[test]
fn an_object_a_held_traffic_routing_has_not_routed_is_said_to_be_its_controllers_to_route() {
    // Its controller routes it at every reconcile while a Rollout holds it: no step routes it
    // once, and no --traffic-only is needed.
    let server = full_link("StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    // Without its stable Service, that is why.
    test.run_args(["status", "mocka"]).success().stdout_has(
        "note: VirtualService shop/mocka is not at step 1, the current step (it is at its original): TrafficRouting mocka-tr's controller waits for its stable Service, which does not exist, and routes nothing until it does (see the warning below)\n",
    );
    let server = full_link("StepPaused").resource(fake_apiserver::services()).object(service("mocka")).start();
    let test = Test::new().kubeconfig(&server);
    let out = test.run_args(["status", "mocka"]).success().stdout_has(
        "note: VirtualService shop/mocka is not at step 1, the current step (it is at its original): TrafficRouting mocka-tr routes it again and again while a Rollout holds it, so it fails to (its logs say why), or the object was changed since its last pass\n",
    );
    assert!(!out.stdout.contains("--traffic-only"), "{}", out.stdout);
    test.run_args(["plan", "mocka"]).success().stdout_has("VirtualService shop/mocka is not at step 1, the current step, which TrafficRouting mocka-tr routes while a Rollout holds it: ");
}

#[test]
fn a_traffic_routing_no_rollout_holds_is_not_routed_in_a_release_under_way() {
    // Linked after the release started (or its finalizer taken off): its controller routes
    // nothing, so neither does approve, and nothing would put such routing back.
    let server = full_link("StepPaused").start();
    let mut tr = server.object("rollouts.kruise.io", "*", "trafficroutings", NAMESPACE, "mocka-tr").unwrap();
    tr["metadata"]["finalizers"] = json!([]);
    tr["status"] = json!({"phase": "Healthy"});
    server.put_object(tr);
    let before = object(&server, "virtualservices", "mocka");
    Test::new()
        .kubeconfig(&server)
        .run_args(["approve", "mocka", "--yes"])
        .success()
        .stdout_has("TrafficRouting mocka-tr: matches [header my-request-id=canary] (no Rollout holds it, so its controller writes nothing: it has no progressing.rollouts.kruise.io/<rollout> finalizer");
    assert_eq!(object(&server, "virtualservices", "mocka")["spec"], before["spec"]);
    assert!(object(&server, "destinationrules", "mocka")["metadata"]["annotations"].is_null());
}

#[test]
fn status_of_a_traffic_routing_whose_object_is_missing_describes_its_routing_and_says_the_error_once() {
    // A regression of an operator trial (M1): the Step line read "original routing (no traffic,
    // no matches)", and the reason came on stdout and again on stderr.
    let server = full_link("StepPaused").start();
    server.delete_object("networking.istio.io", "destinationrules", NAMESPACE, "mockb").unwrap();
    let test = Test::new().kubeconfig(&server);
    let why = "TrafficRouting shop/mockb-tr routes through DestinationRule/mockb (networking.istio.io/v1beta1), but there is no such object in namespace shop";
    let out = test
        .run_args(["status", "mockb"])
        .status(1)
        .stdout_has(
            "  Step:     step 1/2: replicas 1, pause until approved, TrafficRouting mockb-tr: matches [header my-request-id=canary]\n",
        )
        .stdout_has(&format!("  Objects:  cannot place them: {why}\n"));
    assert_eq!(out.stderr, "error: cannot place the objects of Rollout shop/mockb: its Objects line above says why\n");
    // Machine output: stderr is where a reader finds the reason, naming the Rollout.
    test.run_args(["status", "mockb", "-o", "json"])
        .status(1)
        .stderr_has(&format!("error: Rollout shop/mockb: {why}\n"));
}

#[test]
fn a_traffic_routing_being_deleted_is_restored_and_its_routing_is_no_edit() {
    // A review: its objects, as it routed them, were taken for edits (drifted), and restore
    // refused them; a deletionTimestamp alone, before the phase says Terminating, counts too.
    for terminating in [false, true] {
        let server = full_link("StepPaused").start();
        let test = Test::new().kubeconfig(&server);
        test.run_args(["approve", "mocka", "--traffic-only", "--yes"]).success();
        let mut tr = server.object("rollouts.kruise.io", "*", "trafficroutings", NAMESPACE, "mocka-tr").unwrap();
        tr["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        if terminating {
            tr["status"]["phase"] = json!("Terminating");
        }
        server.put_object(tr);
        let out = test
            .run_args(["status", "mocka"])
            .success()
            .stdout_has("so its controller finalises it, restoring the original");
        assert!(!out.stdout.contains("drifted"), "{}", out.stdout);
        let out = test.run_args(["restore", "mocka", "--yes"]).success();
        assert!(
            !out.stdout.contains("still held") && !out.stderr.contains("still held"),
            "{}{}",
            out.stdout,
            out.stderr
        );
        assert!(object(&server, "virtualservices", "mocka")["metadata"]["annotations"].is_null(), "restored");
        // Nothing to route while it is deleted.
        test.run_args(["plan", "mocka"]).success().stdout_has("restoring the original");
    }
}

#[test]
fn approve_several_rollouts_checks_every_guard_first() {
    let server = full_link("StepUpgrade").start();
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "mocka", "mockb", "--yes"])
        .run()
        .status(3)
        .stderr_has("\"mockb\" does not allow to approve");
    assert_eq!(writes(&server), Vec::<String>::new(), "no write for mocka either");
}

/// Rollouts `a` and `b` progressing through one TrafficRouting `tr` (a header to the
/// VirtualService's subset `canary`) that holds the progressing finalizers of `holders`; the
/// VirtualService `demo` routed, its original stored.
fn shared_traffic_routing(holders: &[&str]) -> fake_apiserver::Builder {
    let finalizers: Vec<String> = std::iter::once("rollouts.kruise.io/trafficrouting".to_string())
        .chain(holders.iter().map(|name| format!("progressing.rollouts.kruise.io/{name}")))
        .collect();
    let original = r#"{"spec":{"hosts":["demo"],"http":[{"route":[{"destination":{"host":"demo"}}]}]}}"#;
    let mut builder = FakeApiServer::builder()
        .kruise_and_istio()
        .resource(fake_apiserver::leases())
        .object(json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
            "metadata": {"name": "tr", "namespace": NAMESPACE, "finalizers": finalizers},
            "spec": {"strategy": {"matches": [{"headers": [{"type": "Exact", "name": "x-env", "value": "gray"}]}]}, "objectRef": [{"service": "demo", "customNetworkRefs": [
                {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "demo"}
            ]}]},
            "status": {"phase": "Progressing"}
        }))
        .object(json!({
            "apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService",
            "metadata": {"name": "demo", "namespace": NAMESPACE, "annotations": {"rollouts.kruise.io/original-spec-configuration": original}},
            "spec": {"hosts": ["demo"], "http": [
                {"match": [{"headers": {"x-env": {"exact": "gray"}}}], "route": [{"destination": {"host": "demo", "subset": "canary"}}]},
                {"route": [{"destination": {"host": "demo"}}]}
            ]}
        }));
    for name in ["a", "b"] {
        builder = builder.object(json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": name, "namespace": NAMESPACE, "annotations": {"rollouts.kruise.io/trafficrouting": "tr"}},
            "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}, "strategy": {"canary": {
                "enableExtraWorkloadForCanary": true,
                "steps": [{"replicas": 1}, {"replicas": "100%"}]
            }}},
            "status": {"phase": "Progressing", "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}}
        }));
    }
    builder
}

#[test]
fn approving_two_holders_of_one_traffic_routing_at_once_is_refused_naming_it() {
    // A multi-Rollout trial: the refusal said the second would write over the first's routing,
    // where both write the TrafficRouting's, the same.
    let server = shared_traffic_routing(&["a", "b"]).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["restore", "a", "b", "--yes"]).success();
    server.clear_log();
    test.run_args(["approve", "a", "b", "--yes"]).status(3).stderr_has(
        "error: nothing was written: Rollouts a and b both hold TrafficRouting shop/tr, which routes VirtualService shop/demo for either: approve each in a run of its own\n",
    );
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["approve", "a", "--yes"]).success();
}

#[test]
fn restore_leaves_a_traffic_routing_another_rollout_still_holds() {
    let server = shared_traffic_routing(&["a", "b"]).start();
    let routed = object(&server, "virtualservices", "demo");
    let restore = |args: &[&str]| Test::new().kubeconfig(&server).arg("restore").args(args).run();
    let out = restore(&["a", "--yes"]).success().stderr_has(
        "TrafficRouting shop/tr is still held by Rollout b (finalizer progressing.rollouts.kruise.io/b): its objects are left as they are, as the controller restores them only once no Rollout holds it; once b is done, restore them with `restore --ref VirtualService.networking.istio.io/demo` (or `restore a` again)",
    );
    assert!(!out.stdout.contains("VirtualService"), "{}", out.stdout);
    assert_eq!(writes(&server), Vec::<String>::new());
    assert_eq!(object(&server, "virtualservices", "demo"), routed, "b keeps its gray routing");
    // Restored together, no other Rollout holds it: its objects are restored (and routed again
    // while a and b hold it).
    restore(&["a", "b", "--yes"]).success().stdout_has("VirtualService shop/demo restored (backup ").stderr_has(
        "TrafficRouting shop/tr is still held by Rollout a (finalizer progressing.rollouts.kruise.io/a), Rollout b (finalizer progressing.rollouts.kruise.io/b): the controller routes its objects again at its next reconcile",
    );
    let restored = object(&server, "virtualservices", "demo");
    assert_eq!(restored["spec"], json!({"hosts": ["demo"], "http": [{"route": [{"destination": {"host": "demo"}}]}]}));
}

#[test]
fn restore_says_a_holder_that_no_longer_links_the_traffic_routing_or_is_gone_never_lets_go() {
    // Trial s56: the note told the user to wait until b was done, but b no longer names the
    // TrafficRouting, so its finalizer stays when its release ends; c does not exist at all.
    let server = shared_traffic_routing(&["a", "b", "c"]).start();
    let unlink = json!({"metadata": {"annotations": {"rollouts.kruise.io/trafficrouting": null}}});
    server.patch_object("rollouts.kruise.io", "rollouts", NAMESPACE, "b", &unlink);
    Test::new()
        .kubeconfig(&server)
        .args(["restore", "a", "--dry-run=client"])
        .run()
        .success()
        .stderr_has("its objects are left as they are, as the controller restores them only once no Rollout holds it; Rollout b no longer links it (its rollouts.kruise.io/trafficrouting annotation does not name tr), so its finalizer stays (a Rollout removes its own from the TrafficRouting it names, as its release ends) until someone removes it (`kubectl edit trafficroutings.rollouts.kruise.io tr -n shop`); Rollout c no longer exists, so its finalizer stays")
        .stderr_has("; once they are removed, restore them with `restore --ref VirtualService.networking.istio.io/demo` (or `restore a` again)\n");
}

#[test]
fn restore_says_a_holder_it_could_not_read_is_taken_as_letting_go() {
    let server =
        shared_traffic_routing(&["a", "b"]).deny(Rule::new(["get"]).resources(["rollouts"]).names(["b"])).start();
    Test::new()
        .kubeconfig(&server)
        .args(["restore", "a", "--dry-run=client"])
        .run()
        .success()
        .stderr_has("; once b is done, restore them with `restore --ref VirtualService.networking.istio.io/demo` (or `restore a` again) (Rollout b could not be read (")
        .stderr_has("): taken as letting go when its release ends)\n");
}

#[test]
fn restore_puts_back_a_traffic_routing_no_other_rollout_holds() {
    // b's release is over (its finalizer is gone): restoring a restores the objects, which the
    // controller routes again while a still holds the TrafficRouting (a regression of an
    // operator trial, M2: nothing said so).
    let server = shared_traffic_routing(&["a"]).start();
    Test::new()
        .kubeconfig(&server)
        .args(["restore", "a", "--yes"])
        .run()
        .success()
        .stdout_has("VirtualService shop/demo restored (backup ")
        .stderr_has("TrafficRouting shop/tr is still held by Rollout a (finalizer progressing.rollouts.kruise.io/a): the controller routes its objects again at its next reconcile, until no Rollout holds it (its release ended)");
    assert!(object(&server, "virtualservices", "demo")["metadata"]["annotations"].is_null());
}

#[test]
fn restore_a_ref_a_held_traffic_routing_routes_says_the_controller_routes_it_again() {
    let server = shared_traffic_routing(&["a", "b"]).start();
    Test::new()
        .kubeconfig(&server)
        .args(["restore", "--ref", "VirtualService/demo", "--yes"])
        .run()
        .success()
        .stderr_has("VirtualService shop/demo is routed by TrafficRouting shop/tr, still held by Rollout a (finalizer progressing.rollouts.kruise.io/a), Rollout b (finalizer progressing.rollouts.kruise.io/b): the controller routes it again at its next reconcile, until no Rollout holds it")
        .stdout_has("VirtualService shop/demo restored (backup ");
    assert!(object(&server, "virtualservices", "demo")["metadata"]["annotations"].is_null());
}

/// Rollout `demo` of `rollout(2, state)` linked to TrafficRouting `tr` (a header to the
/// VirtualService's subset `canary`, held by demo), which routes VirtualService `demo` too.
fn own_and_traffic_routing(state: &str) -> fake_apiserver::Builder {
    let mut linked = rollout(2, state);
    linked["metadata"]["annotations"] = json!({"rollouts.kruise.io/trafficrouting": "tr"});
    serving(linked).object(json!({
        "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
        "metadata": {"name": "tr", "namespace": NAMESPACE,
                     "finalizers": ["rollouts.kruise.io/trafficrouting", "progressing.rollouts.kruise.io/demo"]},
        "spec": {"strategy": {"matches": [{"headers": [{"type": "Exact", "name": "x-env", "value": "gray"}]}]}, "objectRef": [{"service": "demo", "customNetworkRefs": [
            {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "demo"}
        ]}]},
        "status": {"phase": "Progressing"}
    }))
}

#[test]
fn an_object_a_rollout_and_its_traffic_routing_both_route_is_warned_of_refused_and_placed_at_no_step() {
    let contested = "VirtualService shop/demo is routed both by Rollout shop/demo's own trafficRoutings and by TrafficRouting shop/tr (annotation rollouts.kruise.io/trafficrouting), which the controller reconciles independently: each rewrites it to its own routing on every pass, so it flaps and the Rollout never gets past StepTrafficRouting; approve refuses it: route it through one of them only";
    let server = own_and_traffic_routing("StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    // Planned by both, it gets a diff from each, told apart, and is counted once.
    test.run_args(["plan", "demo"])
        .success()
        .stdout_has(&format!("  warning: {contested}\n"))
        .stdout_has("\n+++ VirtualService shop/demo, routed by Rollout shop/demo (step 2/3)\n")
        .stdout_has("\n+++ VirtualService shop/demo, routed by TrafficRouting shop/tr (step 2/3)\n")
        .stdout_has("\n+++ DestinationRule shop/demo (step 2/3)\n")
        .stdout_has("Plan: 2 to change, 0 already as planned (counted per step and object).");
    let json = test.run_args(["plan", "demo", "-o", "json"]).success().json();
    assert_eq!(json["summary"], json!({"objectPlans": 2, "changed": 2, "previewed": 0}));
    let routed_by: Vec<&Value> =
        json["plans"][0]["stages"][0]["objects"].as_array().unwrap().iter().map(|o| &o["routedBy"]).collect();
    assert_eq!(routed_by, [&json!("Rollout shop/demo"), &json!("Rollout shop/demo"), &json!("TrafficRouting shop/tr")]);
    for dry_run in [&[][..], &["--dry-run=client"]] {
        test.run_args(["approve", "demo", "--yes"].iter().chain(dry_run)).status(3).stderr_has(
            "nothing was written: VirtualService shop/demo is routed both by Rollout shop/demo (its own trafficRoutings) and by TrafficRouting shop/tr (the TrafficRouting it names), which the controller reconciles independently: each would rewrite it to its own routing on every pass, and the step would never be done routing: route it through one of them only",
        );
    }
    assert_eq!(writes(&server), Vec::<String>::new());
    // The VirtualService at step 2 of the Rollout's own routing (written before the link): the
    // TrafficRouting's routing rewrites it, so it is at that step for one routing only.
    // Unlinked, demo plans none of the TrafficRouting's routing that its finalizer keeps going:
    // a write of that object is refused, unless forced.
    let mut unlinked = rollout(2, "StepPaused");
    server.put_object(unlinked.clone());
    let held = "VirtualService shop/demo: also routed by TrafficRouting shop/tr, held by Rollout demo (finalizer progressing.rollouts.kruise.io/demo)";
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).status(3).stderr_has(held);
    test.run_args(["approve", "demo", "--traffic-only", "--yes", "--force"]).success().stderr_has(held);
    unlinked["metadata"]["annotations"] = json!({"rollouts.kruise.io/trafficrouting": "tr"});
    server.put_object(unlinked);
    test.run_args(["status", "demo"])
        .success()
        .stdout_has("VirtualService shop/demo   contested (at step 2 for one routing only)")
        .stdout_has(&format!("      note: {contested}\n"));
    let json = test.run_args(["status", "demo", "-o", "json"]).success().json();
    assert_eq!(json[0]["objects"][0]["position"], json!({"kind": "contested", "steps": [2]}));
    // restore puts the one stored original back, once, with no edit to discard.
    server.clear_log();
    test.run_args(["restore", "demo", "--yes"]).success().stdout_has("VirtualService shop/demo restored (backup ");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    assert!(vs(&server)["metadata"]["annotations"].is_null());
}

#[test]
fn approve_several_rollouts_rolls_back_all_of_them() {
    let server = full_link("StepPaused")
        .admission("validation.istio.io", |request| {
            if request.name == "mockb" && request.plural == "destinationrules" { Err("no".into()) } else { Ok(()) }
        })
        .start();
    let out = Test::new().kubeconfig(&server).args(["approve", "mocka", "mockb", "--yes"]).run().status(1);
    for rolled_back in ["VirtualService shop/mocka", "DestinationRule shop/mocka", "VirtualService shop/mockb"] {
        assert!(out.stderr.contains(&format!("{rolled_back}: rolled back")), "{}", out.stderr);
    }
    for name in ["mocka", "mockb"] {
        assert!(object(&server, "virtualservices", name)["metadata"]["annotations"].is_null(), "{name} rolled back");
        assert_eq!(object(&server, "destinationrules", name)["spec"]["subsets"].as_array().unwrap().len(), 1);
    }
}

#[test]
fn v1alpha1_only_servers() {
    let rollout = json!({
        "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "Rollout",
        "metadata": {"name": "demo", "namespace": NAMESPACE, "annotations": {"rollouts.kruise.io/rolling-style": "partition"}},
        "spec": {"objectRef": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "demo"}}, "strategy": {"canary": {
            "steps": [{"weight": 20}, {"replicas": "100%"}],
            "trafficRoutings": [{"service": "demo", "customNetworkRefs": [{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "demo"}]}]
        }}},
        "status": {"phase": "Progressing", "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}}
    });
    let server = FakeApiServer::builder()
        .resources([
            fake_apiserver::leases(),
            fake_apiserver::rollouts("v1alpha1"),
            fake_apiserver::virtualservices("v1beta1"),
            fake_apiserver::configmaps(),
            fake_apiserver::deployments(),
        ])
        .object(rollout)
        .object(virtual_service())
        .start();
    let test = Test::new().kubeconfig(&server);
    // A discovery trial: nothing said that such a cluster's controller is not the one modelled.
    test.run_args(["plan", "demo"])
        .success()
        .stdout_has("step 1/2: replicas 20%, traffic 20% (canary 20 / stable 80)")
        .stderr_has("warning: the API server serves Rollouts at v1alpha1 only: its Kruise Rollout controller predates v1beta1 (v0.5)");
    test.run_args(["approve", "demo", "--yes"]).success();
    assert_eq!(
        vs(&server)["spec"]["http"][0]["route"][1],
        json!({"destination": {"host": "demo-canary"}, "weight": 20})
    );
    let patch = routing_writes(&server).last().unwrap().clone();
    assert_eq!(patch.path, "/apis/rollouts.kruise.io/v1alpha1/namespaces/shop/rollouts/demo/status");
    assert_eq!(patch.body["status"], json!({"canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepReady"}}));
}

#[test]
fn blue_green_approval_patches_the_blue_green_status() {
    let mut rollout = rollout(1, "StepPaused");
    let canary = rollout["spec"]["strategy"]["canary"].take();
    rollout["spec"]["strategy"] = json!({"blueGreen": {"steps": [{"replicas": "100%", "traffic": "0%"}, {"replicas": "100%", "traffic": "50%"}], "trafficRoutings": canary["trafficRoutings"]}});
    rollout["status"] =
        json!({"phase": "Progressing", "blueGreenStatus": {"currentStepIndex": 2, "currentStepState": "StepPaused"}});
    let server = serving(rollout).start();
    approve_demo(&server)
        .success()
        .stdout_has("Next for Rollout shop/demo: final (route all traffic to the new version)");
    assert_eq!(rollout_status(&server)["blueGreenStatus"]["currentStepState"], "StepReady");
}

#[test]
fn discovery_is_targeted_and_cached() {
    // Latency makes concurrent requests overlap, so sequential round trips can be counted.
    let server = shop(2, "StepPaused").latency(std::time::Duration::from_millis(200)).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["plan", "demo"]).success();
    let discovery = |server: &FakeHandle| {
        server
            .requests()
            .iter()
            .filter(|r| {
                r.path == "/apis"
                    || r.path == "/api"
                    || r.path.matches('/').count() == 3 && r.path.starts_with("/apis/")
            })
            .map(|r| r.path.clone())
            .collect::<Vec<_>>()
    };
    // The gateway objects' and the workload's are read concurrently, in either order.
    let mut discovered = discovery(&server);
    discovered[1..].sort();
    assert_eq!(
        discovered,
        ["/apis/rollouts.kruise.io/v1beta1", "/apis/apps/v1", "/apis/networking.istio.io/v1beta1"],
        "only the groups needed: the Rollout's, then its gateway objects' and its workload's (for its replicas)"
    );
    server.clear_log();
    test.run_args(["plan", "demo"]).success();
    assert_eq!(discovery(&server), Vec::<String>::new(), "warm cache: no discovery");
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(server.round_trips(), 2, "the Rollout, then its objects and its canary Service: {paths:?}");
    assert!(paths.iter().any(|p| p == "/api/v1/namespaces/shop/services/demo-canary"), "{paths:?}");
}

#[test]
fn refused_credentials_are_said_as_kubectl_says_them_with_what_to_do() {
    // The kubeconfig's static token is none the server handed out: every request gets 401.
    let server = shop(2, "StepPaused").expiring_tokens(Duration::from_secs(60)).start();
    let refused = "you must be logged in to the server: it refused the credentials of context fake; log in again or renew them (401 Unauthorized)\n";
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status", "demo"])
        .status(1)
        .stderr_has(&format!("error: discovering rollouts.kruise.io/v1beta1: {refused}"));
    test.run_args(["approve", "demo", "--yes"]).status(1).stderr_has(refused);
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn a_kubeconfig_list_skips_files_that_do_not_exist_as_kubectl_does() {
    let server = shop(2, "StepPaused").start();
    let with_list = |list: &str| Test::new().kubeconfig(&server).env("KUBECONFIG", list).args(["plan", "demo"]).run();
    with_list("gone.yaml:kubeconfig").success();
    with_list("gone.yaml:also-gone.yaml").status(1).stderr_has(
        "error: reading the kubeconfig: none of the files KUBECONFIG lists exists: gone.yaml, also-gone.yaml\n",
    );
    // One file named, alone in KUBECONFIG or by --kubeconfig, must be there.
    with_list("gone.yaml").status(1).stderr_has("error: reading the kubeconfig: gone.yaml: ");
}

#[test]
fn connection_flags_work_like_kubectl() {
    let server = shop(2, "StepPaused").start();
    // Over TLS: impersonation goes to an https:// server only.
    let test = Test::new().kubeconfig_over_tls(&server, "    token: t\n");
    // The second context points at namespace `other`, where there is no Rollout.
    test.run_args(["plan", "demo", "--context", "other"]).status(1).stderr_has("\"demo\" not found in namespace other");
    test.run_args(["plan", "demo", "--context", "other", "-n", "shop"]).success();
    test.run_args(["plan", "demo", "--kubeconfig", "missing.yaml"]).status(1).stderr_has("reading the kubeconfig");
    test.run_args(["plan", "demo", "--as", "jane", "--as-group", "ops"]).success();
    let request = server.requests().last().unwrap().clone();
    assert_eq!(
        (request.impersonate_user.as_deref(), request.impersonate_groups.clone()),
        (Some("jane"), vec!["ops".to_string()])
    );
}

#[test]
fn api_errors_are_reported() {
    let server = shop(2, "StepPaused").deny(Rule::new(["get"]).resources(["virtualservices"])).start();
    Test::new().kubeconfig(&server).args(["plan", "demo"]).run().status(1).stderr_has("reading virtualservices.networking.istio.io shop/demo: virtualservices.networking.istio.io \"demo\" is forbidden: User \"fake-user\" cannot get resource \"virtualservices\"");
}

#[test]
fn what_the_cluster_does_not_serve_or_hold_is_named() {
    let run = |server: &FakeHandle, args: &[&str]| Test::new().kubeconfig(server).args(args).run();
    // No Kruise Rollout.
    let bare = FakeApiServer::builder()
        .resources([fake_apiserver::leases(), fake_apiserver::virtualservices("v1beta1")])
        .start();
    run(&bare, &["plan", "demo"])
        .status(1)
        .stderr_has("error: the API server serves no rollouts.rollouts.kruise.io (is OpenKruise Rollout installed?)");
    // No Gateway API for a Rollout routing through an HTTPRoute.
    let no_gateway = FakeApiServer::builder().kruise_and_istio().object(store_rollout(1, "StepPaused")).start();
    run(&no_gateway, &["plan", "store"]).status(1).stderr_has(
        "error: Rollout shop/store: the API server serves no httproutes.gateway.networking.k8s.io at v1 or v1beta1 (is the Gateway API installed?), needed for HTTPRoute store",
    );
    // Rollouts but no TrafficRoutings.
    let no_traffic_routings = FakeApiServer::builder().resource(fake_apiserver::rollouts("v1beta1")).start();
    run(&no_traffic_routings, &["record", "trafficrouting/tr"])
        .status(1)
        .stderr_has("error: the API server serves no trafficroutings.rollouts.kruise.io/v1alpha1");
    // A --ref kind the group does not serve; a plural of one it serves is found.
    let server = shop(2, "StepPaused").start();
    run(&server, &["restore", "--ref", "Gadget.networking.istio.io/demo", "--yes"])
        .status(1)
        .stderr_has("error: --ref Gadget.networking.istio.io/demo: the API server serves no Gadget in networking.istio.io/v1beta1, networking.istio.io/v1alpha3; --ref names a gateway object: a custom ref with a Lua script (KIND.GROUP/NAME), an Ingress (Ingress.networking.k8s.io/NAME) or an HTTPRoute (HTTPRoute.gateway.networking.k8s.io/NAME)\n");
    run(&server, &["restore", "--ref", "virtualservices.networking.istio.io/demo", "--yes"])
        .success()
        .stderr_has("VirtualService shop/demo: no rollouts.kruise.io/original-spec-configuration annotation");
    // A discovery trial: a kind served at another version than the group's preferred one was
    // looked for at the preferred one only; kubectl's KIND.VERSION.GROUP was read as a group.
    let istio_v1 = FakeApiServer::builder()
        .resources([
            fake_apiserver::rollouts("v1beta1"),
            fake_apiserver::leases(),
            fake_apiserver::virtualservices("v1"),
            fake_apiserver::destinationrules("v1beta1"),
        ])
        .object(destination_rule())
        .start();
    for named in ["DestinationRule.networking.istio.io/demo", "DestinationRule.v1beta1.networking.istio.io/demo"] {
        run(&istio_v1, &["restore", "--ref", named, "--yes"])
            .success()
            .stderr_has("DestinationRule shop/demo: no rollouts.kruise.io/original-spec-configuration annotation");
    }
    run(&istio_v1, &["restore", "--ref", "DestinationRule.v1.networking.istio.io/demo", "--yes"])
        .status(1)
        .stderr_has("the API server serves no DestinationRule in networking.istio.io/v1; ");
    // A selector that matches no Rollout; one that matches is planned.
    run(&server, &["plan", "-l", "app=other"])
        .status(1)
        .stderr_has("error: no Rollouts in namespace shop match the selector");
    run(&server, &["plan", "-l", "app=demo"]).success().stdout_has("Rollout shop/demo\n");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn a_kubeconfig_that_cannot_be_used_is_named() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    // Named with --context: another name is the tip (an operator trial's P2).
    test.run_args(["plan", "demo", "--context", "nope"]).status(1).stderr_has(
        "error: kubeconfig context \"nope\" does not exist\n  tip: pass one of the kubeconfig's contexts to --context: fake, other\n",
    );
    // The kubeconfig's current-context: --context, or another current-context.
    let kubeconfig = server.kubeconfig(NAMESPACE);
    let gone =
        Test::new().file("kubeconfig", &kubeconfig.replace("current-context: fake\n", "current-context: gone\n"));
    gone.run_args(["plan", "demo"]).status(1).stderr_has(
        "error: the kubeconfig's current-context \"gone\" does not exist\n  tip: pass --context NAME, or set the \
         current-context with `kubectl config use-context NAME`; the contexts are: fake, other\n",
    );
    // A client certificate without its key: the TLS client cannot be made.
    let kubeconfig = std::fs::read_to_string(test.path("kubeconfig")).unwrap();
    let https = kubeconfig
        .replace("http://", "https://")
        .replace("  user: {}\n", "  user:\n    client-certificate-data: Zm9v\n    client-key-data: Zm9v\n");
    assert_ne!(https, kubeconfig);
    std::fs::write(test.path("kubeconfig"), https).unwrap();
    test.run_args(["plan", "demo"])
        .status(1)
        .stderr_has("error: connecting to the cluster: the client certificate and key of the context's user (client-certificate(-data), client-key(-data) in the kubeconfig) do not read: the PEM is missing a private key");
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    // A certificate without a key, a key not the certificate's, and a CA that holds no
    // certificate, in words naming the fields (a connection trial: kube's and rustls's words,
    // `KeyMismatch`, and for the CA every server refused as signed by an unknown authority).
    let tls = |user: &str| {
        let kubeconfig = kubeconfig.replace("http://", "https://").replace("  user: {}\n", &format!("  user:\n{user}"));
        let key = std::fs::read_to_string(crate::support::repo("tests/fixtures/tls/server-key.pem")).unwrap();
        let ca = crate::support::net::test_ca();
        Test::new().file("kubeconfig", &kubeconfig).file("cert.pem", &ca).file("key.pem", &key)
    };
    tls("    client-certificate: cert.pem\n").run_args(["plan", "demo"]).status(1).stderr_has(
        "error: connecting to the cluster: the context's user has a client certificate and no client key (client-certificate(-data), client-key(-data) in the kubeconfig); kubectl refuses it too",
    );
    tls("    client-certificate: cert.pem\n    client-key: key.pem\n").run_args(["plan", "demo"]).status(1).stderr_has(
        "error: connecting to the cluster: the client key of the context's user is not the key of its client certificate (client-certificate(-data), client-key(-data) in the kubeconfig)\n",
    );
    let kubeconfig_ca = kubeconfig
        .replace("http://", "https://")
        .replace("    server: https://", "    certificate-authority-data: bm90IGEgY2VydA==\n    server: https://");
    Test::new().file("kubeconfig", &kubeconfig_ca).run_args(["plan", "demo"]).status(1).stderr_has(
        "error: the certificate-authority (or certificate-authority-data) of the cluster of context fake in the kubeconfig holds no PEM certificate (kubectl refuses it too: unable to load root certificates)\n",
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    // No current-context: how to choose one.
    let kubeconfig = server.kubeconfig(NAMESPACE);
    let test_without = Test::new().file("kubeconfig", &kubeconfig.replace("current-context: fake\n", ""));
    test_without.run_args(["plan", "demo"]).status(1).stderr_has(
        "error: the kubeconfig sets no current-context\n  tip: pass --context NAME, or set the current-context with \
         `kubectl config use-context NAME`; the contexts are: fake, other\n",
    );
    test_without.run_args(["plan", "demo", "--context", "fake"]).success();
    // An empty kubeconfig has no context to choose.
    Test::new().file("kubeconfig", "").run_args(["plan", "demo"]).status(1).stderr_has(
        "error: the kubeconfig sets no current-context\n  tip: the kubeconfig has no contexts; add one with \
         `kubectl config set-context`, or use another file\n",
    );
    // A kubeconfig that does not parse: the place, never the lines around it (tokens, keys),
    // and the tip.
    let kubeconfig = "users:\n- name: u\n  user:\n    token: SECRET-TOKEN\n   bad: [\n";
    let out = Test::new().file("kubeconfig", kubeconfig).run_args(["plan", "demo"]).status(1);
    let out = out.stderr_has("kubeconfig: failed to parse kubeconfig YAML: error: line 5 column 4: ");
    let out = out.stderr_has("\n  tip: point KUBECONFIG or --kubeconfig at a kubeconfig file\n");
    assert!(!out.stderr.contains("SECRET") && !out.stderr.contains("<input>"), "{}", out.stderr);
}

mod kubectl {
    use super::*;
    use crate::support::BINARY;
    use std::process::Command;

    /// A PATH with the plugin and kubectl, or None when kubectl is not installed.
    fn plugin_path(test: &Test) -> Option<String> {
        let kubectl = std::env::var_os("PATH")
            .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join("kubectl")).find(|p| p.is_file()))?;
        let bin = test.path("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(BINARY, bin.join("kubectl-rollout_lua")).unwrap();
        Some(format!("{}:{}", bin.display(), kubectl.parent().unwrap().display()))
    }

    fn kubectl(test: &Test, path: &str, args: &[&str]) -> std::process::Output {
        Command::new("kubectl")
            .args(args)
            .env_clear()
            .env("PATH", path)
            .env("HOME", test.path("home"))
            .env("KUBECONFIG", test.path("kubeconfig"))
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    }

    #[test]
    fn plugin_list_shows_the_plugin_without_a_warning() {
        let test = Test::new();
        let Some(path) = plugin_path(&test) else { return crate::support::skip("kubectl not installed") };
        std::fs::create_dir_all(test.path("home")).unwrap();
        let out = kubectl(&test, &path, &["plugin", "list"]);
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{text}");
        assert!(text.contains("kubectl-rollout_lua"), "{text}");
        assert!(!text.contains("warning"), "{text}");
    }

    #[test]
    fn kubectl_runs_the_plugin_against_the_cluster() {
        let server = shop(2, "StepPaused").start();
        let test = Test::new().kubeconfig(&server);
        let Some(path) = plugin_path(&test) else { return crate::support::skip("kubectl not installed") };
        std::fs::create_dir_all(test.path("home")).unwrap();
        let out = kubectl(&test, &path, &["rollout-lua", "plan", "demo", "-n", "shop"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("step 2/3: replicas 50%, traffic 50%"), "{stdout}");
    }
}

#[test]
fn exec_credential_plugins_and_request_timeouts_work() {
    let server = shop(2, "StepPaused").start();
    // A kubeconfig user whose token comes from an exec credential plugin (over TLS: a user's
    // credentials go to an https:// server only).
    let test = Test::new();
    let plugin = test.path("token-plugin");
    std::fs::write(&plugin, "#!/bin/sh\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"from-exec\"}}'\n").unwrap();
    std::fs::set_permissions(&plugin, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let exec = format!(
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {}\n      interactiveMode: Never\n",
        plugin.display()
    );
    let test = test.kubeconfig_over_tls(&server, &exec);
    test.run_args(["plan", "demo"]).success();
    assert!(
        server.requests().iter().all(|r| r.authorization.as_deref() == Some("Bearer from-exec")),
        "{:?}",
        server.requests().iter().map(|r| &r.authorization).collect::<Vec<_>>()
    );

    let slow = shop(2, "StepPaused").latency(std::time::Duration::from_secs(3)).start();
    let started = std::time::Instant::now();
    Test::new()
        .kubeconfig(&slow)
        .args(["plan", "demo", "--request-timeout", "300ms"])
        .run()
        .status(1)
        .stderr_has("timed out, no answer within 0.3s");
    let elapsed = started.elapsed();
    assert!(elapsed >= std::time::Duration::from_millis(300), "{elapsed:?}");
    assert!(elapsed < std::time::Duration::from_secs(3), "--request-timeout cuts a slow request short: {elapsed:?}");
}

#[test]
fn plan_of_a_rollout_not_in_a_release_shows_step_one() {
    let mut healthy = rollout(1, "StepPaused");
    healthy["status"] = json!({"phase": "Healthy"});
    let server = serving(healthy).start();
    Test::new()
        .kubeconfig(&server)
        .args(["plan", "demo"])
        .run()
        .success()
        .stdout_has("  phase Healthy\n  not in a release: showing what step 1 would do\n")
        .stdout_has("step 1/3: replicas 1, matches [header user-agent=pc]");
}

#[test]
fn approve_reports_server_errors_and_dropped_connections() {
    // A 500 on the first write to the objects: a fresh read shows it was not written.
    let server = shop(2, "StepPaused").start();
    server.storm(Requests::Matching(Rule::new(["update"]).resources(["virtualservices"])), Some(1), 500, None);
    approve_demo(&server)
        .status(1)
        .stderr_has("updating VirtualService shop/demo: ")
        .stderr_has("(500 ")
        .stderr_has("VirtualService shop/demo: not applied when read back (the server answered 500 InternalError; the server may still apply it)");
    assert!(vs(&server)["metadata"]["annotations"].is_null());
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");

    // The connection drops on a later write: what was written is rolled back.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let destination_rules = Requests::Matching(Rule::new(["update"]).resources(["destinationrules"]));
    server.reply_fault(destination_rules, 1, Stage::BeforeStore, ReplyFault::Lost);
    let out = test.run_args(["approve", "demo", "--yes"]).status(1);
    assert!(out.stderr.contains("VirtualService shop/demo: rolled back"), "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "DestinationRule shop/demo: not applied when read back (the reply was lost; the server may still apply it)"
        ),
        "the dropped write is named: {}",
        out.stderr
    );
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
}

/// `count` Rollouts `app<i>` at step 1 (20% traffic), each with its own VirtualService (and no
/// canary Service).
fn many(count: usize) -> fake_apiserver::Builder {
    let builder = FakeApiServer::builder()
        .kruise_and_istio()
        .resource(fake_apiserver::leases())
        .resource(fake_apiserver::services());
    (0..count).fold(builder, |builder, i| {
        let name = format!("app{i}");
        builder
            .object(json!({
                "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": name, "namespace": NAMESPACE},
                "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}, "strategy": {"canary": {
                    "steps": [{"replicas": "20%", "traffic": "20%"}],
                    "trafficRoutings": [{"service": name, "customNetworkRefs": [{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": name}]}]
                }}},
                "status": {"phase": "Progressing", "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}}
            }))
            .object(json!({
                "apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "metadata": {"name": name, "namespace": NAMESPACE},
                "spec": {"hosts": [name], "http": [{"route": [{"destination": {"host": name}}]}]}
            }))
    })
}

#[test]
fn many_objects_of_a_kind_are_read_with_one_list_or_a_get_each_when_listing_is_forbidden() {
    let names: Vec<String> = (0..5).map(|i| format!("app{i}")).collect();
    let reads = |server: &FakeHandle| {
        server.requests().iter().filter(|r| r.path.contains("/namespaces/")).map(|r| r.path.clone()).collect::<Vec<_>>()
    };
    let server = many(5).start();
    Test::new().kubeconfig(&server).arg("plan").args(&names).run().success().stdout_has("Plan: 5 to change");
    // The objects and the canary Services are read at once, in either order.
    let mut read = reads(&server);
    read[1..].sort();
    assert_eq!(
        read,
        [
            "/apis/rollouts.kruise.io/v1beta1/namespaces/shop/rollouts",
            "/api/v1/namespaces/shop/services",
            "/apis/networking.istio.io/v1beta1/namespaces/shop/virtualservices"
        ]
    );

    let server = many(5).deny(Rule::new(["list"]).resources(["rollouts", "virtualservices"])).start();
    Test::new().kubeconfig(&server).arg("plan").args(&names).run().success().stdout_has("Plan: 5 to change");
    assert_eq!(reads(&server).len(), 2 + 10 + 1, "a forbidden LIST each, then a GET per object; the Services' LIST");
    Test::new()
        .kubeconfig(&server)
        .args(["plan", "app0", "app1", "app2", "gone"])
        .run()
        .status(1)
        .stderr_has("rollouts.rollouts.kruise.io \"gone\" not found in namespace shop");
}

#[test]
fn traffic_only_routes_any_progressing_step_and_approves_nothing() {
    // The controller is still upgrading step 2: a plain approve refuses, --traffic-only routes it.
    let server = shop(2, "StepUpgrade").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--yes"]).status(3).stderr_has("StepUpgrade");
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    assert!(!writes(&server).iter().any(|w| w.starts_with("PATCH")), "no approval: {:?}", writes(&server));
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][1]["weight"], 50);
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepUpgrade");

    // Not in a release: nothing to route or approve, with or without --traffic-only.
    let mut healthy = rollout(1, "StepPaused");
    healthy["status"] = json!({"phase": "Healthy"});
    let server = serving(healthy).start();
    let test = Test::new().kubeconfig(&server);
    for args in [&["approve", "demo", "--yes"][..], &["approve", "demo", "--traffic-only", "--yes"]] {
        test.run_args(args).status(3).stderr_has("not in canary or blue-green progress");
    }
    assert_eq!(writes(&server), Vec::<String>::new());
}

/// A server of `shop(2, "StepPaused")`, a test that planned demo against it, and the file of
/// its cached discovery of networking.istio.io/v1beta1.
fn with_istio_discovery_cached() -> (FakeHandle, Test, std::path::PathBuf) {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["plan", "demo"]).success();
    let cached = cached_discovery(&test, "networking.istio.io/v1beta1");
    (server, test, cached)
}

/// The discovery cache's file of `group_version`, which a run has cached.
fn cached_discovery(test: &Test, group_version: &str) -> std::path::PathBuf {
    std::fs::read_dir(test.path("home/.cache/kubectl-rollout-lua/discovery"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join(format!("{group_version}.json")))
        .find(|path| path.exists())
        .unwrap_or_else(|| panic!("the discovery of {group_version} is cached"))
}

#[test]
fn what_is_not_found_at_a_cached_resource_is_looked_for_after_one_fresh_discovery_a_run() {
    // A discovery trial: another cluster behind the same address (a port-forward), serving
    // Rollouts otherwise than the cache says, had its Rollouts said not found, and `status`
    // failed with a 404, until the cache expired.
    let (server, test, _) = with_istio_discovery_cached();
    let cached = cached_discovery(&test, "rollouts.kruise.io/v1beta1");
    let text = std::fs::read_to_string(&cached).unwrap();
    let stale = || std::fs::write(&cached, text.replace("\"rollouts\"", "\"rollouts-gone\"")).unwrap();
    let discovered =
        |server: &FakeHandle| server.requests().iter().filter(|r| r.path == "/apis/rollouts.kruise.io/v1beta1").count();
    for args in [&["plan", "demo"][..], &["status"], &["status", "-l", "app=demo"]] {
        stale();
        server.clear_log();
        test.run_args(args).success().stdout_has("demo");
        assert_eq!(discovered(&server), 1, "{args:?}");
    }
    assert!(std::fs::read_to_string(&cached).unwrap().contains("\"rollouts\""), "the cache is mended");
    // A Rollout that is not there is looked for once more, once, and is not found.
    server.clear_log();
    test.run_args(["plan", "nosuch"]).status(1).stderr_has("rollouts.rollouts.kruise.io \"nosuch\" not found");
    assert_eq!(discovered(&server), 1);
    // Without a cache, this run's discovery is fresh already: not asked again, for a Rollout or
    // for a ref's object that is not there.
    server.delete_object(VIRTUAL_SERVICE.group, VIRTUAL_SERVICE.plural, NAMESPACE, "demo");
    server.clear_log();
    let cold = Test::new().kubeconfig(&server);
    cold.run_args(["plan", "nosuch"]).status(1).stderr_has("rollouts.rollouts.kruise.io \"nosuch\" not found");
    assert_eq!(discovered(&server), 1);
    server.clear_log();
    let cold = Test::new().kubeconfig(&server);
    let out = cold.run_args(["plan", "demo"]);
    let istio = server.requests().iter().filter(|r| r.path == "/apis/networking.istio.io/v1beta1").count();
    assert_eq!(istio, 1, "{}", out.stderr);
}

#[test]
fn stale_discovery_is_refreshed_on_a_404() {
    // A cached discovery document naming a plural the server no longer serves (a renamed resource).
    let (server, test, cached) = with_istio_discovery_cached();
    let text = std::fs::read_to_string(&cached).unwrap();
    std::fs::write(&cached, text.replace("\"virtualservices\"", "\"vses\"")).unwrap();
    server.clear_log();
    test.run_args(["plan", "demo", "-o", "yaml"]).success().stdout_has("kind: VirtualService");
    let requests: Vec<(String, Option<u16>)> = server.requests().iter().map(|r| (r.path.clone(), r.status)).collect();
    let at = |path: &str| requests.iter().position(|(p, _)| p == path);
    let stale = at("/apis/networking.istio.io/v1beta1/namespaces/shop/vses/demo").expect("read at the cached plural");
    assert_eq!(requests[stale].1, Some(404));
    let refreshed = at("/apis/networking.istio.io/v1beta1").expect("discovery read again");
    let fresh = at("/apis/networking.istio.io/v1beta1/namespaces/shop/virtualservices/demo").expect("read again");
    assert!(stale < refreshed && refreshed < fresh, "{requests:?}");
    assert!(std::fs::read_to_string(&cached).unwrap().contains("\"virtualservices\""), "the cache is mended");
}

#[test]
fn restore_from_a_backup_takes_an_object_for_gone_only_once_a_fresh_discovery_agrees() {
    // A discovery trial: with a stale discovery cache, the object's 404 at the cached plural
    // was taken for the object gone, and --from-backup offered to make it again.
    let (server, test, cached) = with_istio_discovery_cached();
    let text = std::fs::read_to_string(&cached).unwrap();
    std::fs::write(&cached, text.replace("\"virtualservices\"", "\"vses\"")).unwrap();
    let mut timed = virtual_service();
    timed["spec"]["http"][0]["timeout"] = json!("5s");
    let test = test.file("timed.yaml", &backup_text(&server, &timed));
    let out = test.run_args(["restore", "--from-backup", "timed.yaml", "--yes"]).success();
    let out = out.stdout_has("VirtualService shop/demo restored from timed.yaml");
    assert!(!out.stdout.contains("does not exist"), "{}", out.stdout);
    assert_eq!(vs(&server)["spec"]["http"][0]["timeout"], "5s");
}

#[test]
fn a_kind_the_cached_discovery_lacks_is_looked_for_in_a_fresh_one() {
    // A discovery trial: a kind served since the cache was written (a CRD added to a group, or
    // one that began to serve the version) was said not served for up to 10 minutes.
    let (server, test, cached) = with_istio_discovery_cached();
    let mut listed: Value = serde_json::from_str(&std::fs::read_to_string(&cached).unwrap()).unwrap();
    listed["resources"].as_array_mut().unwrap().retain(|r| r["kind"] != "VirtualService");
    std::fs::write(&cached, listed.to_string()).unwrap();
    server.clear_log();
    test.run_args(["plan", "demo"]).success().stdout_has("VirtualService shop/demo");
    let asked = server.requests().iter().filter(|r| r.path == "/apis/networking.istio.io/v1beta1").count();
    assert_eq!(asked, 1, "discovered again once");
    assert!(std::fs::read_to_string(&cached).unwrap().contains("\"VirtualService\""), "the cache is mended");
    // A kind not served is looked for once a run, not at each ref.
    server.clear_log();
    let mut gateway = rollout(2, "StepPaused");
    gateway["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"][0]["kind"] = json!("Gateway");
    server.put_object(gateway);
    test.run_args(["plan", "demo"]).status(1).stderr_has(
        "does not serve networking.istio.io/v1beta1 Gateway (ref Gateway/demo): it serves networking.istio.io/v1beta1, but no Gateway there\n",
    );
    let asked = server.requests().iter().filter(|r| r.path == "/apis/networking.istio.io/v1beta1").count();
    assert_eq!(asked, 1, "{:?}", server.requests().iter().map(|r| &r.path).collect::<Vec<_>>());
    // The message says what the API server serves of the group: other versions, or none of it.
    for (api_version, served) in [
        (
            "networking.istio.io/v1",
            "it serves networking.istio.io at v1beta1, v1alpha3 only; give the ref one of those apiVersions",
        ),
        ("example.com/v1", "it serves no example.com at all (are its CRDs installed?)"),
    ] {
        let mut elsewhere = rollout(2, "StepPaused");
        elsewhere["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"][0]["apiVersion"] =
            json!(api_version);
        server.put_object(elsewhere);
        test.run_args(["plan", "demo"]).status(1).stderr_has(&format!("(ref VirtualService/demo): {served}\n"));
    }
}

/// A Rollout at step 2 whose objects are routed (`--traffic-only`), with `edit` applied to the
/// DestinationRule right before the restore's second write to the objects (the claim is the
/// first write of all); returns the routed VirtualService.
fn routed_then_edited_before_the_second_write(
    edit: impl Fn(&mut serde_json::Value) + Send + 'static,
) -> (FakeHandle, serde_json::Value) {
    let server = shop(2, "StepPaused").start();
    Test::new().kubeconfig(&server).args(["approve", "demo", "--traffic-only", "--yes"]).run().success();
    let routed = vs(&server);
    server.clear_log();
    someone_edits(&server, When::Before(3), DESTINATION_RULE, edit);
    (server, routed)
}

#[test]
fn an_edit_between_the_stored_original_and_the_routing_is_called_an_edit_during_the_release() {
    // An interrupt sweep: the re-run said "edited after it was routed" of an object never
    // routed (its original stored, then edited, before the routing write).
    let server = shop(2, "StepPaused").start();
    someone_edits(&server, When::Before(3), VIRTUAL_SERVICE, |vs| vs["spec"]["http"][0]["timeout"] = json!("5s"));
    let test = Test::new().kubeconfig(&server);
    let first = test.run_args(["approve", "demo", "--yes"]).status(3);
    let edited = vs(&server);
    assert_eq!(edited["spec"]["http"][0]["timeout"], "5s", "{}", first.stderr);
    server.clear_log();
    let again = test.run_args(["approve", "demo", "--yes"]).status(3).stderr_has(
        "VirtualService shop/demo: edited during the release (it stands at no step's plan, nor at its original); approving writes over the edit",
    );
    assert!(!again.stderr.contains("after it was routed"), "{}", again.stderr);
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn a_rollback_that_conflicts_is_reported_and_leaves_the_object_alone() {
    let server = rejecting_destination_rules().start();
    // Between our last write to the VirtualService and its rollback, someone else changes it
    // (the writes: the claim, the VirtualService twice, the DestinationRule).
    someone_edits(&server, When::Before(4), VIRTUAL_SERVICE, |vs| vs["metadata"]["labels"]["edited"] = json!("yes"));
    approve_demo(&server)
        .status(1)
        .stderr_has("subset canary is not allowed")
        .stderr_has("VirtualService shop/demo: NOT rolled back: someone changed it since this run wrote it")
        .stderr_has("(its state before this run: ");
    let vs = vs(&server);
    assert_eq!(vs["metadata"]["labels"]["edited"], "yes", "someone else's change is kept");
    assert_eq!(vs["spec"]["http"][0]["route"][1]["weight"], 50, "not rolled back over it");
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
}

#[test]
fn a_workload_that_may_not_be_read_is_warned_of_as_refused_with_what_to_grant() {
    let server = shop(2, "StepPaused").deny(Rule::new(["get"]).resources(["deployments"])).start();
    let out = Test::new().kubeconfig(&server).args(["plan", "demo"]).run().success();
    let out = out.stdout_has("warning: cannot read its workload Deployment shop/demo (deployments.apps \"demo\" is forbidden: User \"fake-user\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"shop\" (403 Forbidden)): the plan assumes only a step of 100% (or more) of its replicas reaches them; the controller does not route a partition step whose replicas reach the workload's; to allow that read, grant get deployments named demo (API group apps) in namespace shop\n");
    assert!(!out.stdout.contains("not among the files"), "{}", out.stdout);
    // status says it too, where the objects' places may hang on it; approve writes the
    // assumed routing only when forced (a regression: it wrote it, and status advised it).
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status", "demo"])
        .success()
        .stdout_has("  warning: cannot read its workload Deployment shop/demo (");
    let json = test.run_args(["status", "demo", "-o", "json"]).success().json();
    assert!(json[0]["warnings"][0].as_str().unwrap().starts_with("cannot read its workload"), "{json}");
    server.clear_log();
    test.run_args(["approve", "demo", "--yes"]).status(3).stderr_has(
        "error: nothing was written: Rollout shop/demo, step 2/3: whether the controller routes this partition step depends on the replica count of its workload Deployment shop/demo, which could not be read (deployments.apps \"demo\" is forbidden: ",
    ).stderr_has("): grant get deployments named demo (API group apps) in namespace shop, or pass --force to write the step's routing all the same\n");
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["approve", "demo", "--yes", "--force"]).success();
}

#[test]
fn a_workload_whose_read_fails_is_warned_of_and_approve_refuses_without_force() {
    // An RBAC trial: a workload read that failed otherwise than forbidden (here a garbled reply;
    // a lost one is asked again) was passed over without a word, and approve wrote the step's
    // routing as if the count allowed it.
    let server = shop(2, "StepPaused").start();
    let workload_reads = || Requests::Matching(Rule::new(["get"]).resources(["deployments"]));
    let test = Test::new().kubeconfig(&server);
    server.reply_fault(workload_reads(), 1, Stage::AfterStore, ReplyFault::Garbled);
    test.run_args(["plan", "demo"])
        .success()
        .stdout_has("warning: cannot read its workload Deployment shop/demo (")
        .stdout_has("): the plan assumes only a step of 100% (or more) of its replicas reaches them");
    server.clear_log();
    server.reply_fault(workload_reads(), 1, Stage::AfterStore, ReplyFault::Garbled);
    test.run_args(["approve", "demo", "--yes"])
        .status(3)
        .stderr_has("depends on the replica count of its workload Deployment shop/demo, which could not be read (")
        .stderr_has("): try again, or pass --force to write the step's routing all the same\n");
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["approve", "demo", "--yes"]).success();
}

#[test]
fn a_workload_whose_group_cannot_be_discovered_is_unread_and_approve_refuses_without_force() {
    // A discovery trial: a failed discovery of the workload's group (a 503, a garbled reply)
    // counted as a kind not served, the workload as not there, and approve wrote the step's
    // routing as if the count allowed it.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    server.reply_fault(Requests::Discovery("apps/v1"), 1, Stage::AfterStore, ReplyFault::Garbled);
    test.run_args(["plan", "demo"])
        .success()
        .stdout_has("warning: cannot read its workload Deployment shop/demo (")
        .stdout_has("apps/v1");
    server.clear_log();
    server.reply_fault(Requests::Discovery("apps/v1"), 1, Stage::AfterStore, ReplyFault::Garbled);
    test.run_args(["approve", "demo", "--yes"])
        .status(3)
        .stderr_has("depends on the replica count of its workload Deployment shop/demo, which could not be read (");
    assert_eq!(writes(&server), Vec::<String>::new());
    // A workloadRef at a version the API server does not serve is not read either.
    let mut rollout = rollout(2, "StepPaused");
    rollout["spec"]["workloadRef"]["apiVersion"] = json!("apps/v1beta1");
    let server = serving(rollout).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["plan", "demo"]).success().stdout_has(
        "warning: cannot read its workload Deployment shop/demo (the API server does not serve apps/v1beta1 Deployment): ",
    );
    test.run_args(["approve", "demo", "--yes"]).status(3);
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn status_warns_of_a_workload_it_may_not_read_where_its_count_decides_nothing() {
    // An RBAC trial: with an extra canary workload (the count decides no step), a forbidden
    // workload read only shortened the Replicas line, without a word.
    let mut rollout = rollout(2, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["enableExtraWorkloadForCanary"] = json!(true);
    let server = serving(rollout).deny(Rule::new(["get"]).resources(["deployments"])).start();
    let test = Test::new().kubeconfig(&server);
    let out = test.run_args(["status", "demo"]).success();
    let out = out.stdout_has("  warning: cannot read its workload Deployment shop/demo (deployments.apps \"demo\" is forbidden: ").stdout_has(
        "): its replicas are not shown; to allow that read, grant get deployments named demo (API group apps) in namespace shop\n",
    );
    assert_eq!(out.stdout.matches("cannot read its workload").count(), 1, "{}", out.stdout);
    // A partition release: the plan's warning, once.
    let server = shop(2, "StepPaused").deny(Rule::new(["get"]).resources(["deployments"])).start();
    let out = Test::new().kubeconfig(&server).args(["status", "demo"]).run().success();
    assert_eq!(out.stdout.matches("cannot read its workload").count(), 1, "{}", out.stdout);
    assert!(!out.stdout.contains("replicas are not shown"), "{}", out.stdout);
}

#[test]
fn a_workload_not_in_the_cluster_is_warned_of_as_missing() {
    let server = shop(2, "StepPaused").start();
    server.delete_object("apps", "deployments", NAMESPACE, "demo");
    Test::new().kubeconfig(&server).args(["plan", "demo"]).run().success().stdout_has(
        "warning: its workload Deployment demo does not exist, so the plan assumes only a step of 100% (or more) of its replicas reaches them",
    );
}

#[test]
fn status_shows_what_plan_warns_of_a_missing_stable_service() {
    // A regression: status said the controller failed to route the step, and advised writing
    // it, where it waits for the Service.
    let server = shop(2, "StepPaused").start();
    server.delete_object("", "services", NAMESPACE, "demo");
    let warning = "warning: Service demo does not exist: it is the stable Service (trafficRoutings[0].service), which the controller waits for";
    let test = Test::new().kubeconfig(&server);
    let status = test.run_args(["status", "demo"]).success().stdout_has(&format!("  {warning}")).stdout_has(
        "      note: VirtualService shop/demo is not at step 2, the current step (it is at its original): the controller waits for the stable Service, which does not exist, and writes nothing until it does (see the warning below)\n",
    );
    assert!(!status.stdout.contains("--traffic-only"), "writing the step is not advised: {}", status.stdout);
    let line = test.run_args(["status", "demo", "-w", "--timeout", "1s"]).stdout;
    assert!(!line.contains("warning"), "a -w line leaves it out: {line}");
}

#[test]
fn a_spec_the_controller_has_not_acted_on_is_waited_for_and_not_approved() {
    // Its steps edited since the controller's last reconcile (or with no controller running):
    // the status's step and state are of the spec before. `status -w` as a CI gate must not
    // stop on them, and `approve` must not approve a step of a spec about to be replaced.
    let server = shop(2, "StepPaused").start();
    let observed = |generation: i64| {
        let status = json!({"status": {"observedGeneration": generation}});
        server.patch_object("rollouts.kruise.io", "rollouts", NAMESPACE, "demo", &status);
    };
    observed(1);
    let mut rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo").unwrap();
    rollout["spec"]["strategy"]["canary"]["steps"][2]["replicas"] = json!("90%");
    server.put_object(rollout);
    let test = Test::new().kubeconfig(&server);
    let why = "the controller has not acted on the Rollout's latest spec yet (generation 2, observed 1): its status (step, state) is of the spec before";
    test.run_args(["status", "demo"]).success().stdout_has(&format!("  warning: {why}\n"));
    test.run_args(["plan", "demo"]).success().stdout_has(why);
    test.run_args(["approve", "demo", "--yes"])
        .status(3)
        .stderr_has(&format!("{why}; nothing to route or approve until it has"));
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["status", "demo", "-w", "--until-paused", "--timeout", "2s"])
        .status(1)
        .stdout_has("waiting for the controller to act on the latest spec");
    // The controller acts on it.
    observed(2);
    test.run_args(["status", "demo", "-w", "--until-paused", "--timeout", "10s"]).success();
    test.run_args(["approve", "demo", "--yes"]).success();
}

#[test]
fn a_kind_without_a_built_in_script_takes_it_from_the_controller_configmap() {
    let route = fake_apiserver::ApiResourceDef::new("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes");
    let mut rollout = rollout(2, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"] =
        json!([{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "name": "demo"}]);
    let server = FakeApiServer::builder()
        .kruise_and_istio()
        .resource(fake_apiserver::leases())
        .resource(route)
        .object(rollout)
        .object(json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "demo", "namespace": NAMESPACE}, "spec": {"weight": 0},
        }))
        .object(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "kruise-rollout-configuration", "namespace": "kruise-rollout"},
            "data": {"lua.traffic.routing.HTTPRoute.gateway.networking.k8s.io": "return {spec = {weight = obj.canaryWeight}}"},
        }))
        .deny(Rule::new(["get"]).resources(["configmaps"]).users(["jane"]))
        .start();
    Test::new()
        .kubeconfig(&server)
        .args(["plan", "demo"])
        .run()
        .success()
        .stdout_has("ConfigMap kruise-rollout/kruise-rollout-configuration key lua.traffic.routing.HTTPRoute.gateway.networking.k8s.io")
        .stdout_has("-  weight: 0\n+  weight: 50\n");
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert!(
        paths.contains(&"/api/v1/namespaces/kruise-rollout/configmaps/kruise-rollout-configuration".to_string()),
        "{paths:?}"
    );
    // --controller-namespace says where the controller runs.
    Test::new()
        .kubeconfig(&server)
        .args(["plan", "demo", "--controller-namespace", "elsewhere"])
        .run()
        .status(1)
        .stderr_has(
            "there is no ConfigMap kruise-rollout-configuration in namespace elsewhere (the controller's, --controller-namespace); add the script under the key lua.traffic.routing.HTTPRoute.gateway.networking.k8s.io",
        );
    // Who may not read it learns which ref needs it, and how to do without.
    Test::new()
        .kubeconfig_over_tls(&server, "    token: t\n")
        .args(["plan", "demo", "--as", "jane"])
        .run()
        .status(1)
        .stderr_has("error: Rollout shop/demo: reading configmaps kruise-rollout/kruise-rollout-configuration: ")
        .stderr_has("(403 Forbidden)\n  HTTPRoute shop/demo needs it: HTTPRoute.gateway.networking.k8s.io has no built-in script, so the controller takes it from the key lua.traffic.routing.HTTPRoute.gateway.networking.k8s.io; grant get on it (the user guide's rollout-lua-scripts Role), or give the script with --script HTTPRoute.gateway.networking.k8s.io=FILE or --lua-dir\n");
}

#[test]
fn a_configmap_script_for_a_kind_with_a_built_in_one_is_warned_of_where_the_configmap_is_read() {
    let configmap = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "kruise-rollout-configuration", "namespace": "kruise-rollout"},
        "data": {
            "lua.traffic.routing.HTTPRoute.gateway.networking.k8s.io": "return {spec = {weight = obj.canaryWeight}}",
            "lua.traffic.routing.VirtualService.networking.istio.io": "return obj.data",
        },
    });
    let warning = "warning: ConfigMap kruise-rollout/kruise-rollout-configuration key lua.traffic.routing.VirtualService.networking.istio.io is never used: the controller's built-in script for VirtualService comes first";
    let configmap_read = |server: &FakeHandle| server.requests().iter().any(|r| r.path.contains("/configmaps/"));
    // Every kind has a built-in script: the ConfigMap is not read, not even for this check.
    let server = shop(2, "StepPaused").object(configmap.clone()).start();
    let quiet = Test::new().kubeconfig(&server).args(["plan", "demo"]).run().success();
    assert!(!quiet.stderr.contains("is never used") && !configmap_read(&server), "{}", quiet.stderr);
    // A kind without one has it read: its VirtualService key is said to be of no use.
    let mut rollout = rollout(2, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"] =
        json!([{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "name": "demo"}]);
    let route = json!({
        "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
        "metadata": {"name": "demo", "namespace": NAMESPACE}, "spec": {"weight": 0},
    });
    let in_other = |mut value: serde_json::Value| {
        value["metadata"]["namespace"] = json!("other");
        value
    };
    let server = FakeApiServer::builder()
        .kruise_and_istio()
        .resource(fake_apiserver::ApiResourceDef::new("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes"))
        .object(rollout.clone())
        .object(route.clone())
        .object(in_other(rollout))
        .object(in_other(route))
        .object(configmap)
        .start();
    Test::new().kubeconfig(&server).args(["plan", "demo"]).run().success().stderr_has(warning);
    assert!(configmap_read(&server));
    // The controller has one ConfigMap: read once for every namespace that needs it, warned of once.
    let every = Test::new().kubeconfig(&server).args(["plan", "-A"]).run().success();
    assert_eq!(every.stderr.matches(warning).count(), 1, "{}", every.stderr);
}

#[test]
fn the_script_configmap_is_read_once_for_every_namespace() {
    const CONFIGMAP: &str = "/configmaps/kruise-rollout-configuration";
    // A regression: `-A` read the controller's one ConfigMap again for each namespace.
    let in_namespace = |namespace: &str, mut value: serde_json::Value| {
        value["metadata"]["namespace"] = json!(namespace);
        value
    };
    let mut rollout = rollout(2, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"] =
        json!([{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "name": "demo"}]);
    let route = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                       "metadata": {"name": "demo"}, "spec": {"weight": 0}});
    let mut server = FakeApiServer::builder()
        .kruise_and_istio()
        .resource(fake_apiserver::ApiResourceDef::new("gateway.networking.k8s.io", "v1", "HTTPRoute", "httproutes"))
        .object(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "kruise-rollout-configuration", "namespace": "kruise-rollout"},
            "data": {"lua.traffic.routing.HTTPRoute.gateway.networking.k8s.io": "return {spec = {weight = obj.canaryWeight}}"},
        }));
    let namespaces = ["blue", "green", "red"];
    for namespace in namespaces {
        server = server.object(in_namespace(namespace, rollout.clone())).object(in_namespace(namespace, route.clone()));
    }
    let server = server.deny(Rule::new(["get"]).resources(["configmaps"]).users(["jane"])).start();
    let test = Test::new().kubeconfig_over_tls(&server, "    token: t\n");
    // The GETs of the ConfigMap since the last run, wherever it was looked for.
    let configmap_gets = || {
        let gets = server.requests().iter().filter(|r| r.method == "GET" && r.path.ends_with(CONFIGMAP)).count();
        server.clear_log();
        gets
    };
    let mut planned = test.run_args(["plan", "-A"]).success();
    for namespace in namespaces {
        planned = planned.stdout_has(&format!("Rollout {namespace}/demo\n"));
    }
    assert_eq!(planned.stdout.matches("-  weight: 0\n+  weight: 50\n").count(), 3, "{}", planned.stdout);
    assert_eq!(configmap_gets(), 1);
    // status places every Rollout's objects with the same scripts, read once too; so does the
    // first read of status -w (each later one, after a change, reads it once again).
    let mut shown = test.run_args(["status", "-A"]).success();
    for namespace in namespaces {
        let placed =
            format!("HTTPRoute {namespace}/demo  original  ConfigMap kruise-rollout/kruise-rollout-configuration key ");
        shown = shown.stdout_has(&placed);
    }
    assert_eq!(configmap_gets(), 1);
    // The limit said as given (it was rounded to whole seconds: 1500ms was 1s).
    test.run_args(["status", "-w", "-A", "--timeout", "1500ms"]).status(1).stderr_has("timed out after 1.5s");
    assert_eq!(configmap_gets(), 1);
    // Not found, or refused, it is not asked for again: each Rollout that needs it fails.
    let mut missing = test.run_args(["plan", "-A", "--controller-namespace", "elsewhere"]).status(1);
    for namespace in namespaces {
        missing = missing.stderr_has(&format!("Rollout {namespace}/demo routes through HTTPRoute/demo (gateway.networking.k8s.io/v1): no Lua script for HTTPRoute.gateway.networking.k8s.io: none given with --script or --lua-dir, none built in, and there is no ConfigMap kruise-rollout-configuration in namespace elsewhere"));
    }
    assert_eq!(configmap_gets(), 1);
    let mut refused = test.run_args(["plan", "-A", "--as", "jane"]).status(1);
    for namespace in namespaces {
        refused = refused
            .stderr_has(&format!(
                "Rollout {namespace}/demo: reading configmaps kruise-rollout/kruise-rollout-configuration: "
            ))
            .stderr_has(&format!("(403 Forbidden)\n  HTTPRoute {namespace}/demo needs it: "));
    }
    assert_eq!(configmap_gets(), 1);
}

#[test]
fn plan_shows_the_current_step_in_every_step_state() {
    // Completed is not a step state: the release is finalising (see endings.rs).
    for state in
        ["BeforeStepUpgrade", "StepUpgrade", "StepTrafficRouting", "StepMetricsAnalysis", "StepPaused", "StepReady"]
    {
        let server = shop(2, state).start();
        Test::new()
            .kubeconfig(&server)
            .args(["plan", "demo"])
            .run()
            .success()
            .stdout_has(&format!("phase Progressing, step 2/3 {state}"))
            .stdout_has("step 2/3: replicas 50%, traffic 50% (canary 50 / stable 50), pause until approved");
        assert_eq!(writes(&server), Vec::<String>::new(), "{state}");
    }
}

#[test]
fn plan_says_that_a_rollout_is_paused() {
    let mut paused = rollout(2, "StepPaused");
    paused["spec"]["strategy"]["paused"] = json!(true);
    let server = serving(paused).start();
    Test::new()
        .kubeconfig(&server)
        .args(["plan", "demo"])
        .run()
        .success()
        .stdout_has("  phase Progressing, step 2/3 StepPaused, paused (spec.strategy.paused): Rollout is in step(2/3)");
    // Unpaused, the line says nothing of it.
    server.put_object(rollout(2, "StepPaused"));
    let out = Test::new().kubeconfig(&server).args(["plan", "demo"]).run().success();
    assert!(!out.stdout.contains("paused (spec.strategy.paused)"), "{}", out.stdout);
}

#[test]
fn a_write_to_objects_another_rollout_in_a_release_routes_is_refused_unless_forced() {
    // Rollout demo2 routes the same VirtualService and DestinationRule, and is in a release.
    let mut other = rollout(1, "StepPaused");
    other["metadata"]["name"] = json!("demo2");
    let server = serving(rollout(2, "StepPaused")).object(other).start();
    let test = Test::new().kubeconfig(&server);
    let shared = "VirtualService shop/demo: also routed by Rollout shop/demo2, in a release (step 1/3)";
    test.run_args(["approve", "demo", "--yes"])
        .status(3)
        .stderr_has(
            "nothing was written: these objects are also routed by another Rollout in a release, or by a TrafficRouting, whose controller writes them again",
        )
        .stderr_has(shared)
        .stderr_has("Wait for that release to end (a TrafficRouting's ends once no Rollout holds it), or pass --force to write anyway");
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["approve", "demo", "--yes", "--force"])
        .success()
        .stderr_has(&format!("warning: {shared}: written all the same (--force)"))
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)");
    // Its routing written, restoring it changes demo2's too.
    test.run_args(["restore", "demo", "--yes"]).status(3).stderr_has(shared);
    // Once demo2's release is over, nothing else routes them.
    let mut over = rollout(1, "StepPaused");
    over["metadata"]["name"] = json!("demo2");
    over["status"] = json!({"phase": "Healthy"});
    server.put_object(over);
    test.run_args(["restore", "demo", "--yes"]).success();
}

#[test]
fn a_write_to_objects_a_traffic_routing_held_by_another_rollout_routes_is_refused_unless_forced() {
    let traffic_routing = |finalizers: serde_json::Value| {
        json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
            "metadata": {"name": "tr", "namespace": NAMESPACE, "finalizers": finalizers},
            "spec": {"strategy": {"weight": 10}, "objectRef": [{"service": "demo", "customNetworkRefs": [
                {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "demo"}
            ]}]},
            "status": {"phase": "Progressing"}
        })
    };
    let held = json!(["rollouts.kruise.io/trafficrouting", "progressing.rollouts.kruise.io/other"]);
    let server = serving(rollout(2, "StepPaused")).object(traffic_routing(held.clone())).start();
    let test = Test::new().kubeconfig(&server);
    let shared = "VirtualService shop/demo: also routed by TrafficRouting shop/tr, held by Rollout other (finalizer progressing.rollouts.kruise.io/other)";
    test.run_args(["approve", "demo", "--yes"]).status(3).stderr_has(shared);
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["approve", "demo", "--yes", "--force"])
        .success()
        .stderr_has(&format!("warning: {shared}: written all the same (--force)"));
    test.run_args(["restore", "demo", "--yes"]).status(3).stderr_has(shared);
    // A 503 on the list stops the run before it writes; a 404 (the CRD removed since discovery
    // was cached) is a resource with nothing in it.
    let lists = || Requests::Matching(Rule::new(["list"]).resources(["trafficroutings"]));
    server.storm(lists(), None, 503, Some(3600));
    test.run_args(["restore", "demo", "--yes"])
        .status(1)
        .stderr_has("listing trafficroutings.rollouts.kruise.io in shop");
    server.clear_faults();
    server.storm(lists(), None, 404, None);
    test.run_args(["restore", "demo", "--yes", "--dry-run=client"]).success();
    server.clear_faults();
    // Once its release is over, nothing else routes the VirtualService.
    let mut healthy = traffic_routing(json!(["rollouts.kruise.io/trafficrouting"]));
    healthy["status"]["phase"] = json!("Healthy");
    server.put_object(healthy);
    test.run_args(["restore", "demo", "--yes"]).success();
    // A TrafficRouting the Rollout links is its own, even where the Rollouts may not be listed:
    // restore puts back the objects of one that finalises with its own.
    let mut linked = rollout(2, "StepPaused");
    linked["metadata"]["annotations"] = json!({"rollouts.kruise.io/trafficrouting": "tr"});
    let mut finalising = traffic_routing(json!(["rollouts.kruise.io/trafficrouting"]));
    finalising["status"]["phase"] = json!("Finalizing");
    finalising["spec"]["objectRef"][0]["customNetworkRefs"][0]["name"] = json!("tr-vs");
    let original = r#"{"spec":{"hosts":["tr"],"http":[{"route":[{"destination":{"host":"demo"}}]}]}}"#;
    let server = serving(linked)
        .object(finalising)
        .object(json!({
            "apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService",
            "metadata": {"name": "tr-vs", "namespace": NAMESPACE, "annotations": {"rollouts.kruise.io/original-spec-configuration": original}},
            "spec": {"hosts": ["tr"], "http": [{"route": [{"destination": {"host": "demo"}, "weight": 90}, {"destination": {"host": "demo", "subset": "canary"}, "weight": 10}]}]}
        }))
        .deny(Rule::new(["list"]).resources(["rollouts"]))
        .start();
    Test::new()
        .kubeconfig(&server)
        .run_args(["restore", "demo", "--yes"])
        .success()
        .stderr_has("warning: may not list the Rollouts of namespace shop (")
        .stdout_has("VirtualService shop/tr-vs restored (backup ");
    // Where TrafficRoutings may not be listed, a warning says the check was not made.
    let server = serving(rollout(2, "StepPaused"))
        .object(traffic_routing(held))
        .deny(Rule::new(["list"]).resources(["trafficroutings"]))
        .start();
    Test::new()
        .kubeconfig(&server)
        .run_args(["approve", "demo", "--yes"])
        .success()
        .stderr_has("warning: may not list the TrafficRoutings of namespace shop (")
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)");
}

#[test]
fn a_failure_to_list_the_other_rollouts_stops_a_write_before_it_and_one_that_does_not_parse_is_warned_of() {
    let mut broken = rollout(1, "StepPaused");
    broken["metadata"]["name"] = json!("broken");
    broken["spec"]["strategy"] = json!("no");
    let server = serving(rollout(2, "StepPaused")).object(broken).start();
    let test = Test::new().kubeconfig(&server);
    // A busy server: nothing is written unchecked (a retry would wait past the retry budget).
    let rollout_lists = Requests::Matching(Rule::new(["list"]).resources(["rollouts"]));
    server.storm(rollout_lists, None, 503, Some(3600));
    test.run_args(["approve", "demo", "--yes"]).status(1).stderr_has("listing rollouts.rollouts.kruise.io in shop");
    assert_eq!(writes(&server), Vec::<String>::new());
    server.clear_faults();
    test.run_args(["approve", "demo", "--yes"]).success().stderr_has(
        "warning: Rollout shop/broken does not parse, so whether it routes the objects written is not checked",
    );
}

#[test]
fn where_the_rollouts_may_not_be_listed_a_write_warns_that_other_rollouts_are_not_checked() {
    let mut other = rollout(1, "StepPaused");
    other["metadata"]["name"] = json!("demo2");
    let server =
        serving(rollout(2, "StepPaused")).object(other).deny(Rule::new(["list"]).resources(["rollouts"])).start();
    Test::new()
        .kubeconfig(&server)
        .run_args(["approve", "demo", "--yes"])
        .success()
        .stderr_has("warning: may not list the Rollouts of namespace shop (")
        .stderr_has("so whether they route the objects written is not checked")
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)");
}

#[test]
fn approving_a_timed_pause_notes_that_it_ends_it_early() {
    let mut timed = rollout(2, "StepPaused");
    timed["spec"]["strategy"]["canary"]["steps"][1]["pause"] = json!({"duration": 600});
    let server = serving(timed).start();
    let test = Test::new().kubeconfig(&server);
    let note = "  warning: step 2's timed pause (10m00s): approving ends it now, where the controller would have moved on by itself once it ran out\n";
    test.run_args(["approve", "demo", "--dry-run=client"]).success().stdout_has(note);
    test.run_args(["approve", "demo", "--yes"])
        .success()
        .stdout_has(note)
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)");
}

#[test]
fn status_shows_and_approve_notes_that_a_rollout_is_paused() {
    let mut paused = rollout(2, "StepPaused");
    paused["spec"]["strategy"]["paused"] = json!(true);
    let server = serving(paused).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status", "demo"]).success().stdout_has(
        "  State:    StepPaused, waiting for approval, paused (spec.strategy.paused): the controller acts on nothing, an approval included, until it is resumed (`kubectl-kruise rollout resume demo`)\n",
    );
    assert_eq!(test.run_args(["status", "demo", "-o", "json"]).success().json()[0]["paused"], true);
    // Approved all the same (the approval waits for the resume), with a note.
    let note = "  warning: Rollout demo is paused (spec.strategy.paused): the controller acts on this approval only after it is resumed (`kubectl-kruise rollout resume demo`, or spec.strategy.paused set to false)\n";
    test.run_args(["approve", "demo", "--dry-run=client"]).success().stdout_has(note);
    test.run_args(["approve", "demo", "--yes"])
        .success()
        .stdout_has(note)
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)");
    // A release being rolled back goes on, paused or not (§3.6): not said to hold it.
    let mut rolling_back = rollout(2, "StepPaused");
    rolling_back["spec"]["strategy"]["paused"] = json!(true);
    rolling_back["status"]["conditions"] = json!([{"type": "Progressing", "status": "True", "reason": "Cancelling"}]);
    server.put_object(rolling_back);
    let out = test.run_args(["status", "demo"]).success().stdout_has(
        "paused (spec.strategy.paused), which does not hold the release's end: the controller goes on with it\n",
    );
    assert!(!out.stdout.contains("acts on nothing"), "{}", out.stdout);
    test.run_args(["plan", "demo"])
        .success()
        .stdout_has("paused (spec.strategy.paused), which does not hold the release's end");
    // Resumed, neither says anything of it.
    server.put_object(rollout(2, "StepPaused"));
    let status = test.run_args(["status", "demo", "-o", "json"]).success().json();
    assert_eq!(status[0]["paused"], false);
    let out = test.run_args(["approve", "demo", "--dry-run=client"]).success();
    assert!(!out.stdout.contains("spec.strategy.paused"), "{}", out.stdout);
}

/// A Rollout `name` routing through VirtualService `routes` and a Widget, a kind the server
/// does not serve: it cannot be loaded.
fn rollout_with_an_unserved_ref(name: &str, routes: &str) -> serde_json::Value {
    let mut odd = rollout(1, "StepPaused");
    odd["metadata"]["name"] = json!(name);
    odd["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"] = json!([
        {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": routes},
        {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w"}
    ]);
    odd
}

/// The Rollouts the run's claims were taken on (their Leases' names).
fn claimed(server: &FakeHandle) -> Vec<String> {
    let mut names: Vec<String> = server
        .writes()
        .iter()
        .filter(|w| w.method == "POST" && w.path.contains("/leases"))
        .map(|w| w.body["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn plan_shows_the_rollouts_it_can_and_fails_at_the_end_with_those_it_cannot() {
    let server = shop(2, "StepPaused").object(rollout_with_an_unserved_ref("odd", "elsewhere")).start();
    let error = "error: Rollout shop/odd: the API server does not serve example.com/v1 Widget (ref Widget/w)";
    let test = Test::new().kubeconfig(&server);
    for args in [&["plan", "demo", "odd"][..], &["plan", "odd", "demo", "--step", "1"], &["plan", "-l", "app=demo"]] {
        let out = test.run_args(args).status(1).stdout_has("Rollout shop/demo\n").stderr_has(error);
        assert!(!out.stdout.contains("shop/odd"), "{}", out.stdout);
    }
    // Errors of each: a --step past a Rollout's steps names it.
    test.run_args(["plan", "demo", "odd", "--step", "9"])
        .status(1)
        .stdout_is("")
        .stderr_has(error)
        .stderr_has("--step 9: Rollout demo has 3 steps");
    // Alone, the broken one prints nothing but its error.
    test.run_args(["plan", "odd"]).status(1).stdout_is("").stderr_has(error);
    test.run_args(["plan", "odd", "-o", "json"]).status(1).stdout_is("");
    // approve stays all or nothing.
    test.run_args(["approve", "demo", "odd", "--yes"]).status(1).stderr_has(error);
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn restore_a_ref_leaves_out_a_broken_rollout_that_does_not_route_it_and_still_claims_and_checks() {
    // A regression: one Rollout of the namespace that could not be loaded turned the claim and
    // the check for edits off, and the restore went ahead (exit 0).
    let server = shop(2, "StepPaused").object(rollout_with_an_unserved_ref("odd", "elsewhere")).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    let mut edited = vs(&server);
    edited["spec"]["http"][0]["route"][0]["weight"] = json!(70);
    server.put_object(edited);
    server.clear_log();
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes"])
        .status(3)
        .stdout_has("VirtualService shop/demo was edited after it was routed")
        .stderr_has("Rollout shop/odd: the API server does not serve example.com/v1 Widget (ref Widget/w): it serves no example.com at all (are its CRDs installed?); left out: it does not route VirtualService shop/demo");
    assert_eq!(writes(&server), Vec::<String>::new());
    assert_eq!(claimed(&server), ["rollout-lua.demo"], "demo routes it and is claimed");
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes", "--force"]).success();
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn restore_refuses_when_a_rollout_that_may_route_the_object_cannot_be_loaded() {
    let server = shop(2, "StepPaused").object(rollout_with_an_unserved_ref("odd", "demo")).start();
    let test = Test::new().kubeconfig(&server).file("original.yaml", &backup_text(&server, &virtual_service()));
    // Rollout odd, in a release, routes the VirtualService too: written all the same.
    test.run_args(["approve", "demo", "--traffic-only", "--yes", "--force"]).success();
    server.clear_log();
    let refusal = "error: nothing was written: Rollout shop/odd: the API server does not serve example.com/v1 Widget (ref Widget/w): it serves no example.com at all (are its CRDs installed?); it may route VirtualService shop/demo, and the objects cannot be checked for edits against it: fix that (in the Rollout, or a permission its reads need), or pass --force";
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes"]).status(3).stderr_has(refusal);
    test.run_args(["restore", "--from-backup", "original.yaml", "--yes"]).status(3).stderr_has(refusal);
    assert_eq!(writes(&server), Vec::<String>::new());
    // --force restores, claiming both.
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes"])
        .status(3)
        .stderr_has("or pass --force to restore without that check (the objects themselves must still be readable: a restore reads each)\n");
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes", "--force"])
        .success()
        .stderr_has("it may route VirtualService shop/demo: claimed, but the objects are not checked for edits against it (--force)");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    assert_eq!(claimed(&server), ["rollout-lua.demo", "rollout-lua.odd"]);
}

#[test]
fn restore_a_ref_refuses_when_the_rollouts_cannot_be_read() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server).file("original.yaml", &backup_text(&server, &virtual_service()));
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    server.clear_log();
    // A retry would wait longer than the retry budget: the list fails at once.
    let rollout_lists = || Requests::Matching(Rule::new(["list"]).resources(["rollouts"]));
    server.storm(rollout_lists(), None, 503, Some(3600));
    let refusal = "error: nothing was written: reading the Rollouts of namespace shop failed (listing rollouts.rollouts.kruise.io in shop: the server is currently unable to handle the request (503 ServiceUnavailable))";
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes"])
        .status(3)
        .stderr_has(refusal)
        .stderr_has("pass --force to restore without them");
    test.run_args(["restore", "--from-backup", "original.yaml", "--yes"]).status(3).stderr_has(refusal);
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes", "--force"])
        .success()
        .stderr_has("none is claimed and the objects are not checked for edits (--force)");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn a_command_that_names_nothing_says_so_before_reading_the_kubeconfig() {
    // A regression: without a kubeconfig, a newcomer got a kubeconfig error instead of the hint.
    let test = Test::new();
    assert!(!test.path("kubeconfig").exists(), "KUBECONFIG names a missing file");
    let names = "error: name the Rollouts (NAME or rollout/NAME), or select them with -l";
    for args in [
        &["plan"][..],
        &["approve", "--yes"],
        &["approve", "--to-end", "--timeout", "5m", "--yes"],
        &["restore", "--yes"],
        &["release-claim", "--yes"],
    ] {
        let out = test.run_args(args).status(1).stderr_has(names);
        assert!(!out.stderr.contains("kubeconfig"), "{args:?}: {}", out.stderr);
    }
    test.run_args(["plan"]).stderr_has("; or plan manifest files with -f (no cluster needed)");
    test.run_args(["restore"])
        .stderr_has("; or name objects with --ref KIND/NAME, or a backup with --from-backup FILE");
    // Naming one reads the kubeconfig, which is missing.
    test.run_args(["plan", "demo"]).status(1).stderr_has("error: reading the kubeconfig: ");
}
