//! `approve`, `plan` and `status` when a release is ending (finalising, rolled back, disabled,
//! deleted) or over: the step the status still names is not what the controller routes next
//! (docs/controller-semantics.md §3.5 and §3.6).

use crate::support::Test;
use crate::support::cluster::*;
use serde_json::{Value, json};

/// `rollout(step, state)` with `change` applied to it.
fn changed(step: i64, state: &str, change: impl FnOnce(&mut Value)) -> Value {
    let mut rollout = rollout(step, state);
    change(&mut rollout);
    rollout
}

fn reason(reason: &str) -> Value {
    json!([{"type": "Progressing", "status": "True", "reason": reason}])
}

/// Rollouts whose release is ending, each with what `approve` says of it.
fn ending() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "all steps done",
            rollout(3, "Completed"),
            "the release is finalising: the controller restores the original routing",
        ),
        (
            "Finalising",
            changed(2, "StepPaused", |r| r["status"]["conditions"] = reason("Finalising")),
            "the release is finalising: the controller restores the original routing",
        ),
        (
            "a finalising step",
            changed(2, "StepPaused", |r| {
                r["status"]["canaryStatus"]["finalisingStep"] = json!("FinalisingStepRouteTrafficToStable")
            }),
            "the release is finalising: the controller restores the original routing",
        ),
        (
            "Cancelling",
            changed(2, "StepPaused", |r| {
                r["status"]["conditions"] = reason("Cancelling");
                r["status"]["canaryStatus"]["finalisingStep"] = json!("FinalisingStepRouteTrafficToStable");
            }),
            "the release is being rolled back (Cancelling): the controller restores the original routing",
        ),
        (
            "spec.disabled",
            changed(2, "StepPaused", |r| r["spec"]["disabled"] = json!(true)),
            "the Rollout is disabled: the controller restores the original routing of a release in progress and runs no step",
        ),
        (
            "Disabling",
            changed(2, "StepPaused", |r| r["status"]["phase"] = json!("Disabling")),
            "the Rollout is disabled: the controller restores the original routing of a release in progress and runs no step",
        ),
        (
            "Terminating",
            changed(2, "StepPaused", |r| r["status"]["phase"] = json!("Terminating")),
            "the Rollout is being deleted: the controller restores the original routing",
        ),
        (
            "a deletion timestamp before the phase Terminating",
            changed(2, "StepPaused", |r| {
                r["metadata"]["deletionTimestamp"] = json!("2026-11-22T03:00:00Z");
                r["metadata"]["finalizers"] = json!(["rollouts.kruise.io/rollout"]);
            }),
            "the Rollout is being deleted: the controller restores the original routing",
        ),
    ]
}

#[test]
fn a_blue_green_success_is_placed_in_its_finalising_by_the_values_the_controller_writes() {
    // Blue-green at `task`: the route to the new version first, then the restore (§3.6).
    let at = |task: &str| {
        let mut rollout = rollout(1, "StepPaused");
        let canary = rollout["spec"]["strategy"]["canary"].take();
        rollout["spec"]["strategy"] = json!({"blueGreen": {"steps": [{"replicas": "100%", "traffic": "50%"}], "trafficRoutings": canary["trafficRoutings"]}});
        rollout["status"] = json!({"phase": "Progressing", "conditions": reason("Finalising"),
            "blueGreenStatus": {"currentStepIndex": 1, "currentStepState": "Completed", "finalisingStep": task}});
        serving(rollout).start()
    };
    let route_first = at("FinalisingStepRouteTrafficToNew");
    Test::new()
        .kubeconfig(&route_first)
        .args(["plan", "demo", "--next", "--summary"])
        .run()
        .success()
        .stdout_has("final (route all traffic to the new version)");
    // A restore before that route is undone by it, and said so.
    Test::new().kubeconfig(&route_first).args(["restore", "demo", "--dry-run=client"]).run().success().stderr_has(
        "Rollout demo: the release is finalising: the controller routes all traffic to the new version, then restores the original routing: that route stores the originals afresh and routes the objects again, undoing this restore until its own\n",
    );
    // Routed to the new version already: the restore comes next, and --next plans no route.
    let restoring = at("FinalisingStepRouteTrafficToStable");
    let done = "the release is finalising: the controller has routed all traffic to the new version, and restores the original routing next";
    Test::new().kubeconfig(&restoring).args(["status", "demo"]).run().success().stdout_has(done);
    let out = Test::new().kubeconfig(&restoring).args(["plan", "demo", "--next"]).run().success().stdout_has(done);
    assert!(!out.stdout.contains("final (route all traffic"), "{}", out.stdout);
}

#[test]
fn a_blue_green_release_blocked_by_a_new_version_plans_no_step() {
    let mut rollout = rollout(1, "StepPaused");
    let canary = rollout["spec"]["strategy"]["canary"].take();
    rollout["spec"]["strategy"] = json!({"blueGreen": {"steps": [{"replicas": "100%", "traffic": "20%"}, {"replicas": "100%", "traffic": "50%"}], "trafficRoutings": canary["trafficRoutings"]}});
    rollout["status"] = json!({"phase": "Progressing", "message": "new version releasing detected in the progress of blue-green release, please rollback first",
        "conditions": reason("InRolling"), "blueGreenStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}});
    let server = serving(rollout).start();
    let blocked = "a new version of the workload came in the middle of the blue-green release: the controller runs no step until the workload is rolled back";
    let test = Test::new().kubeconfig(&server);
    let out = test.run_args(["plan", "demo"]).success().stdout_has(&format!("{blocked}; no step is planned"));
    assert!(!out.stdout.contains("step 1/2:"), "{}", out.stdout);
    test.run_args(["restore", "demo", "--dry-run=client"]).success().stderr_has(&format!("Rollout demo: {blocked}"));
}

#[test]
fn a_release_initializing_again_is_planned_from_step_1_and_its_objects_not_judged_by_the_stale_step() {
    // A new version mid-release: the controller restored the routing and starts from step 1.
    let server = serving(changed(2, "StepPaused", |r| r["status"]["conditions"] = reason("Initializing"))).start();
    let test = Test::new().kubeconfig(&server);
    let initializing = "the release is initializing (Progressing reason Initializing): the controller starts it from step 1, whatever step the status still names";
    for flags in [&["plan", "demo"][..], &["plan", "demo", "--next"]] {
        test.run_args(flags).success().stdout_has(&format!("{initializing}: planned step 1")).stdout_has("step 1/3:");
    }
    let out = test.run_args(["status", "demo"]).success();
    assert!(!out.stdout.contains("is not at step 2"), "{}", out.stdout);
}

#[test]
fn an_object_left_routed_past_a_roll_backs_restore_is_noted() {
    // Step 2 routed, then rolled back past its restore (§3.6): the controller restores nothing
    // more in this release, so the routing left on the object is said, with restore.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    server.put_object(changed(2, "StepPaused", |r| {
        r["status"]["conditions"] = reason("Cancelling");
        r["status"]["canaryStatus"]["finalisingStep"] = json!("ResumeWorkload");
    }));
    test.run_args(["status", "demo"]).success().stdout_has(
        "the release is being rolled back (Cancelling): the controller has restored the original routing, and finishes the rest, but VirtualService shop/demo still routes as step 2: the controller leaves it so until the next release; `kubectl rollout-lua restore demo -n shop` puts the routing before the release back",
    );
    // Before its restore, the controller does it: nothing said.
    server.put_object(changed(2, "StepPaused", |r| r["status"]["conditions"] = reason("Cancelling")));
    let out = test.run_args(["status", "demo"]).success();
    assert!(!out.stdout.contains("still routes as step 2"), "{}", out.stdout);
}

/// The Rollout after a release that succeeded: Healthy, its sub-status left at the last step.
fn finished() -> Value {
    changed(3, "Completed", |r| {
        r["status"]["phase"] = json!("Healthy");
        r["status"]["conditions"] = json!([{"type": "Succeeded", "status": "True"}]);
    })
}

#[test]
fn approve_refuses_a_release_that_is_ending_with_or_without_traffic_only() {
    for (case, rollout, why) in ending() {
        let server = serving(rollout).start();
        let test = Test::new().kubeconfig(&server);
        let refusal = format!(
            "error: rollouts.rollouts.kruise.io \"demo\": {why}; nothing to route or approve (`kubectl rollout-lua restore demo -n shop` does that restore now)"
        );
        for args in [
            &["approve", "demo", "--yes"][..],
            &["approve", "demo", "--traffic-only", "--yes"],
            &["approve", "demo", "--traffic-only", "--dry-run=client"],
        ] {
            let out = test.run_args(args).status(3).stderr_has(&refusal);
            assert!(!out.stdout.contains("Next for"), "{case}: no next stage: {}", out.stdout);
        }
        assert_eq!(writes(&server), Vec::<String>::new(), "{case}");
        assert_eq!(
            (&vs(&server)["spec"], &vs(&server)["metadata"]["annotations"]),
            (&virtual_service()["spec"], &Value::Null),
            "{case}"
        );
    }
}

#[test]
fn approve_refuses_a_finished_release_and_traffic_only_outside_progressing() {
    let server = serving(finished()).start();
    let test = Test::new().kubeconfig(&server);
    for args in [&["approve", "demo", "--yes"][..], &["approve", "demo", "--traffic-only", "--yes"]] {
        test.run_args(args).status(3).stderr_has(
            "rollouts.rollouts.kruise.io \"demo\": no need to approve: not in canary or blue-green progress (the release is over: the controller restored the original routing when it ended)",
        );
    }
    // A phase that is neither a release nor its end (the controller has not looked yet).
    // An approval too (a lifecycle review: a paused sub-status before the release runs was
    // routed and approved).
    server.put_object(changed(2, "StepPaused", |r| r["status"]["phase"] = json!("Initial")));
    for args in [&["approve", "demo", "--yes"][..], &["approve", "demo", "--traffic-only", "--yes"]] {
        test.run_args(args).status(3).stderr_has(
            "rollouts.rollouts.kruise.io \"demo\" is not progressing (phase Initial): the controller runs no step, so there is nothing to route or approve",
        );
    }
    // Reason Completed: the release is over, though the phase has not said so yet (a controller
    // without finalisingStep, or a cancel's end).
    server.put_object(changed(2, "StepPaused", |r| {
        r["status"]["conditions"] = json!([{"type": "Progressing", "status": "False", "reason": "Completed"},
                                           {"type": "Succeeded", "status": "False"}]);
    }));
    test.run_args(["approve", "demo", "--yes"])
        .status(3)
        .stderr_has("no need to approve: not in canary or blue-green progress (the release is over");
    test.run_args(["status", "demo"]).success().stdout_has("failed: the release did not succeed");
    // Initializing: the controller starts again from step 1.
    server.put_object(changed(2, "StepPaused", |r| {
        r["status"]["conditions"] = json!([{"type": "Progressing", "status": "True", "reason": "Initializing"}]);
    }));
    test.run_args(["approve", "demo", "--yes"]).status(3).stderr_has(
        "the release is initializing (Progressing reason Initializing): the controller starts it from step 1",
    );
    test.run_args(["status", "demo"]).success().stdout_has("  State:    StepPaused, progressing\n");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn traffic_only_before_the_steps_pods_are_ready_warns_before_and_after_the_write() {
    let warning = "warning: Rollout demo is in StepUpgrade of step 2/3: the controller routes a step only once its canary pods are ready (StepTrafficRouting), so this write routes it now (traffic 50% (canary 50 / stable 50)) to canary pods that may not be ready yet, through Service demo-canary, which the controller makes, or points at the step's pods, only then too";
    let server = shop(2, "StepUpgrade").start();
    let test = Test::new().kubeconfig(&server);
    // In the plan shown before the confirmation (here refused: no terminal)...
    let unconfirmed = test.run_args(["approve", "demo", "--traffic-only"]).status(3).stdout_has(warning);
    assert!(unconfirmed.stderr.contains("there is no terminal to confirm on"), "{}", unconfirmed.stderr);
    assert_eq!(writes(&server), Vec::<String>::new());
    // ...and once written.
    test.run_args(["approve", "demo", "--traffic-only", "--yes"])
        .success()
        .stdout_has(warning)
        .stdout_has("gateway objects match the current step; not approved (--traffic-only)")
        .stderr_has(warning);
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][1]["weight"], 50);

    let before = shop(2, "BeforeStepUpgrade").start();
    Test::new()
        .kubeconfig(&before)
        .args(["approve", "demo", "--traffic-only", "--yes"])
        .run()
        .success()
        .stderr_has("warning: Rollout demo is in BeforeStepUpgrade of step 2/3");
    // Routed by the controller's state already, or a step it restores from its start: no warning.
    for (step, state) in [(2, "StepTrafficRouting"), (2, "StepPaused"), (3, "StepUpgrade")] {
        let server = shop(step, state).start();
        let out = Test::new().kubeconfig(&server).args(["approve", "demo", "--traffic-only", "--yes"]).run().success();
        assert!(!out.stdout.contains("warning") && !out.stderr.contains("warning"), "{state}: {out:?}");
    }
}

#[test]
fn approve_previews_when_the_controller_applies_the_next_step() {
    let server = shop(1, "StepPaused").start();
    approve_demo(&server)
        .success()
        .stdout_has("Next for Rollout shop/demo: step 2/3 (applied by the controller once its pods are ready)\n");
    // Step 3 has no traffic and no matches: restored as soon as it starts.
    let server = shop(2, "StepPaused").start();
    approve_demo(&server).success().stdout_has(
        "Next for Rollout shop/demo: step 3/3 (the controller restores the original as soon as the step starts, before its pods are updated)\n",
    );
}

#[test]
fn plan_of_an_ending_release_plans_no_step() {
    for (case, rollout, why) in ending() {
        let server = serving(rollout).start();
        let test = Test::new().kubeconfig(&server);
        let out = test.run_args(["plan", "demo", "--detailed-exitcode"]).success();
        // A Rollout with spec.disabled is not planned at all, and says so.
        let note = match case {
            "spec.disabled" => "spec.disabled is true: the controller runs no step of a disabled Rollout".to_string(),
            _ => format!(
                "  {why}; no step is planned (`kubectl rollout-lua restore demo -n shop --dry-run=client` shows that restore; --step N plans a step anyway)\n"
            ),
        };
        let out = out.stdout_has(&note).stdout_has("Plan: 0 to change, 0 already as planned");
        assert!(!out.stdout.contains("step 2/3:") && !out.stdout.contains("step 3/3:"), "{case}: {}", out.stdout);
        let json = test.run_args(["plan", "demo", "-o", "json"]).success().json();
        assert_eq!(json["plans"][0]["stages"], json!([]), "{case}");
    }
}

#[test]
fn plan_of_an_ending_release_plans_an_explicit_step_with_a_note() {
    let cancelling = changed(1, "StepPaused", |r| r["status"]["conditions"] = reason("Cancelling"));
    let server = serving(cancelling).start();
    let test = Test::new().kubeconfig(&server);
    let why = "  the release is being rolled back (Cancelling): the controller restores the original routing; planned as asked (the controller routes none of the steps now)\n";
    test.run_args(["plan", "demo", "--next", "--detailed-exitcode"])
        .status(2)
        .stdout_has(why)
        .stdout_has("step 2/3: replicas 50%, traffic 50%");
    test.run_args(["plan", "demo", "--step", "1"]).success().stdout_has(why).stdout_has("step 1/3: replicas 1");
    let all = test.run_args(["plan", "demo", "--all-steps", "-o", "json"]).success().json();
    assert_eq!(all["plans"][0]["stages"].as_array().unwrap().len(), 3);
    // On the last step, --next has no step to plan: the restore comes next.
    let server = serving(rollout(3, "Completed")).start();
    Test::new()
        .kubeconfig(&server)
        .args(["plan", "demo", "--next", "--detailed-exitcode"])
        .run()
        .success()
        .stdout_has("  the release is finalising: the controller restores the original routing; no step is planned");
}

#[test]
fn plan_of_a_routed_release_that_is_finalising_shows_no_pending_write() {
    // The objects hold step 2's routing, and the release finalises: the step is not pending, and
    // neither is the step the status names (its last).
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    server.put_object(rollout(3, "Completed"));
    test.run_args(["plan", "demo", "--detailed-exitcode"])
        .success()
        .stdout_has("  phase Progressing, step 3/3 Completed")
        .stdout_has("the release is finalising: the controller restores the original routing; no step is planned");
    // Nor does `restore` say the controller routes again: it restores them itself next.
    let out = test.run_args(["restore", "demo", "--dry-run=client"]).success();
    assert!(!out.stderr.contains("routes its objects again"), "{}", out.stderr);
}

#[test]
fn plan_of_a_finished_release_is_not_in_a_release() {
    // As a Rollout that never had a release: step 1, not the last step the status still names.
    let server = serving(finished()).start();
    let out = Test::new()
        .kubeconfig(&server)
        .args(["plan", "demo"])
        .run()
        .success()
        .stdout_has("  phase Healthy, step 3/3 Completed: Rollout is in step(3/3)")
        .stdout_has("  not in a release: showing what step 1 would do\n")
        .stdout_has("step 1/3: replicas 1, matches [header user-agent=pc]");
    assert!(!out.stdout.contains("step 3/3: replicas"), "{}", out.stdout);
}

#[test]
fn status_of_an_ending_release_says_what_the_controller_does() {
    let cases = [
        (
            finished(),
            "  Step:     step 3/3: the release is over: the controller restored the original routing when it ended\n  State:    Completed, completed\n",
        ),
        (
            changed(2, "StepPaused", |r| r["status"]["conditions"] = reason("Cancelling")),
            "  Step:     step 2/3: the release is being rolled back (Cancelling): the controller restores the original routing\n  State:    StepPaused, failed: the release is being rolled back (Cancelling)\n",
        ),
        (
            changed(2, "StepPaused", |r| r["status"]["canaryStatus"]["finalisingStep"] = json!("RestoreStableService")),
            "  Step:     step 2/3: the release is finalising: the controller restores the original routing\n  State:    StepPaused, all steps done, finalising\n",
        ),
        (
            changed(2, "StepPaused", |r| r["spec"]["disabled"] = json!(true)),
            "  Step:     step 2/3: the Rollout is disabled: the controller restores the original routing of a release in progress and runs no step\n  State:    StepPaused, failed: the Rollout is disabled\n",
        ),
    ];
    for (rollout, lines) in cases {
        let server = serving(rollout).start();
        let test = Test::new().kubeconfig(&server);
        let out = test.run_args(["status", "demo"]).success().stdout_has(lines);
        assert!(!out.stdout.contains("traffic 50%"), "{}", out.stdout);
        let json = test.run_args(["status", "demo", "-o", "json"]).success().json();
        let does = lines.lines().next().unwrap().split_once(": ").unwrap().1.split_once(": ").unwrap().1;
        assert_eq!(json[0]["stepDoes"], does);
        // Where the objects are, whatever the controller does next (a disabled Rollout's too).
        assert_eq!(json[0]["objects"].as_array().map(Vec::len), Some(2), "{}", json[0]);
    }
}
