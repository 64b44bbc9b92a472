//! What `approve` and `restore` promise when things go wrong, on the fake API server: one run
//! per Rollout at a time (the claim), a write whose reply is lost, garbled or never comes is
//! resolved by reading again, someone else's edit is never overwritten, signals stop a run
//! cleanly, degenerate originals are refused, and every wait ends.

use crate::support::cluster::*;
use crate::support::{BINARY, Output, Test};
use fake_apiserver::{FakeHandle, Pause, ReplyFault, Requests, Rule, Stage};
use serde_json::{Value, json};
use std::io::Read;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// The writes of `approve demo` at step 2: the claim, the VirtualService twice (its original
/// stored, then routed), the DestinationRule twice, the approval, the release of the claim.
const APPROVE_WRITES: usize = 7;
/// The writes of `restore demo` after `approve --traffic-only`: the claim, the two objects,
/// the release.
const RESTORE_WRITES: usize = 4;

fn claims(server: &FakeHandle) -> Vec<Value> {
    server.objects("coordination.k8s.io", "leases")
}

/// The Rollout is approved at step 2 with step 2's routing, or not approved with the routing
/// it had: never approved with routing its step did not ask for.
#[track_caller]
fn approved_with_its_routing(server: &FakeHandle) -> bool {
    let approved = rollout_status(server)["canaryStatus"]["currentStepState"] == "StepReady";
    if approved {
        assert_eq!(vs(server)["spec"]["http"][0]["route"][1]["weight"], 50, "approved with step 2's traffic");
        assert_eq!(dr(server)["spec"]["subsets"][1]["name"], "canary");
    } else {
        assert_eq!(rollout_status(server)["canaryStatus"]["currentStepState"], "StepPaused");
        assert_eq!(vs(server)["spec"], virtual_service()["spec"], "not approved: the routing it had");
        assert!(vs(server)["metadata"]["annotations"].is_null());
        assert_eq!(dr(server)["spec"], destination_rule()["spec"]);
    }
    approved
}

#[test]
fn approve_resolves_a_lost_garbled_hung_or_dripping_reply_after_each_write() {
    for fault in [ReplyFault::Lost, ReplyFault::Garbled, ReplyFault::NeverSent, ReplyFault::Drip] {
        for k in 1..=APPROVE_WRITES {
            let server = shop(2, "StepPaused").start();
            // The write is stored; its reply is lost, garbled, never comes, or comes a byte at
            // a time (2s timeout, on the whole request).
            server.reply_fault(Requests::Writes, k, Stage::AfterStore, fault);
            let out =
                Test::new().kubeconfig(&server).args(["approve", "demo", "--yes", "--request-timeout", "2s"]).run();
            assert_eq!(out.status, 0, "{fault:?} after write {k}\n{}\n{}", out.stdout, out.stderr);
            assert!(approved_with_its_routing(&server), "{fault:?} after write {k}");
            assert!(claims(&server).is_empty(), "{fault:?} after write {k}: the claim is released");
            if (2..=6).contains(&k) {
                let unheard = format!("{}; a fresh read shows ", unheard(fault, "2s"));
                assert!(out.stdout.contains(&unheard), "{fault:?} after write {k}: {}", out.stdout);
            }
        }
    }
}

/// The Rollout is not approved, and its objects hold step 2's routing: what `approve
/// --traffic-only` leaves.
#[track_caller]
fn routed_but_not_approved(server: &FakeHandle) {
    assert_eq!(rollout_status(server)["canaryStatus"]["currentStepState"], "StepPaused");
    assert_eq!(vs(server)["spec"]["http"][0]["route"][1]["weight"], 50, "step 2's routing is kept");
    assert_eq!(dr(server)["spec"]["subsets"][1]["name"], "canary");
}

#[test]
fn an_approval_whose_outcome_is_unknown_keeps_its_routing_as_it_may_still_land() {
    let approval = || Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]));
    // A regression: an approval answered 504 (the server "may still be processing" it) that a
    // fresh read showed unapproved was reported "not written" and its routing rolled back; the
    // server then stored it, leaving the Rollout approved with step 1's routing.
    let server = shop(2, "StepPaused").start();
    let late = server.late_write(approval(), 1);
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--yes"])
        .status(1)
        .stderr_has("patching the status of Rollout shop/demo: the server was unable to return a response in the time allotted, but may still be processing the request (504 Timeout)")
        .stderr_has("The approval of Rollout demo was not applied when read back, but the API server may still apply it. `kubectl rollout-lua status demo -n shop` shows whether it did; if the Rollout still waits at step 2/3, `kubectl rollout-lua approve demo -n shop --expect-step 2` approves it (its routing is already written)")
        .stderr_has("VirtualService shop/demo: written and kept: the approval of Rollout demo may still land, so its routing (step 2/3) stays")
        .stderr_has("DestinationRule shop/demo: written and kept: the approval of Rollout demo may still land")
        .stderr_has("Rollout shop/demo: not applied when read back (the server answered 504 Timeout; the server may still apply it)\n  nothing else was written");
    routed_but_not_approved(&server);
    assert!(claims(&server).is_empty());
    assert_eq!(late.land(Duration::from_secs(5)), Some(200), "the server applies it after the run");
    assert!(approved_with_its_routing(&server), "approved, with its step's routing");

    // Lost before it was stored, and never applied: the Rollout waits at step 2 with step 2's
    // routing; the approve the report names finishes it.
    let server = shop(2, "StepPaused").start();
    server.reply_fault(approval(), 1, Stage::BeforeStore, ReplyFault::Lost);
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--yes"])
        .status(1)
        .stderr_has("VirtualService shop/demo: written and kept: the approval of Rollout demo may still land")
        .stderr_has(
            "Rollout shop/demo: not applied when read back (the reply was lost; the server may still apply it)",
        );
    routed_but_not_approved(&server);
    test.run_args(["approve", "demo", "--expect-step", "2", "--yes"]).success();
    assert!(approved_with_its_routing(&server));
}

#[test]
fn a_routing_write_that_lands_after_its_rollback_fails_its_precondition() {
    let server = shop(2, "StepPaused").start();
    // The VirtualService's routing (its second write) is answered 504 and applied late: the run
    // reads it unapplied, stops, and rolls back the original it stored; the late write was
    // sent at the version that rollback replaced.
    let late = server.late_write(vs_updates(), 2);
    let out = approve_demo(&server).status(1);
    let out = out
        .stderr_has("updating VirtualService shop/demo")
        .stderr_has("(504 Timeout)")
        .stderr_has("  VirtualService shop/demo: rolled back\n  nothing else was written");
    assert!(!out.stderr.contains("not applied when read back"), "{}", out.stderr);
    assert_eq!(late.land(Duration::from_secs(5)), Some(409), "the late write fails its precondition");
    assert!(!approved_with_its_routing(&server), "nothing of the run is left");
    assert!(claims(&server).is_empty());
}

#[test]
fn an_approval_that_cannot_be_read_back_keeps_its_routing_as_it_may_still_land() {
    // A regression (audit s29 #1): the approval got no answer and the read that would tell
    // whether it landed none either; the run then saw the Rollout still waiting, rolled the
    // routing back, and the approval landed after it.
    let approval = || Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]));
    let rollout_reads = || Requests::Matching(Rule::new(["get"]).resources(["rollouts"]).names(["demo"]));
    let server = shop(2, "StepPaused").start();
    let late = server.late_write(approval(), 1);
    // The run reads the Rollout once before it writes; the read after the approval hangs.
    server.reply_fault(rollout_reads(), 2, Stage::BeforeStore, ReplyFault::NeverSent);
    let test = Test::new().kubeconfig(&server);
    let out = test
        .run_args(["approve", "demo", "--yes", "--request-timeout", "2s"])
        .status(1)
        .stderr_has("reading it again to tell whether it landed failed too")
        .stderr_has("The approval of Rollout demo could not be read back, and the API server may still apply it.")
        .stderr_has("VirtualService shop/demo: written and kept: the approval of Rollout demo may still land, so its routing (step 2/3) stays")
        .stderr_has("Rollout shop/demo: may or may not be written (the server answered 504 Timeout; it could not be read again; the server may still apply it)\n  nothing else was written");
    assert!(!out.stderr.contains("rolled back"), "{}", out.stderr);
    // One read went unanswered, and the server answers the next request: the claim is released,
    // and `status` is not said to wait for the server.
    assert!(!out.stderr.contains("once the API server answers again"), "{}", out.stderr);
    routed_but_not_approved(&server);
    assert!(claims(&server).is_empty());
    assert_eq!(late.land(Duration::from_secs(5)), Some(200), "the server applies it after the run");
    assert!(approved_with_its_routing(&server), "approved, with its step's routing");
}

/// `approve demo --yes`, the VirtualService's routing (its second write) answered 504 and applied
/// late: while the rollback's first request (its original put back) is held, the routing lands,
/// then `meanwhile` runs.
fn approve_whose_routing_lands_before_its_rollback(server: &FakeHandle, meanwhile: impl FnOnce()) -> Output {
    let late = server.late_write(vs_updates(), 2);
    let undo = server.pause(vs_updates(), 3, Stage::BeforeStore);
    let test = Test::new().kubeconfig(server);
    let child = test.spawn(&["approve", "demo", "--yes"]);
    assert!(undo.wait_until_held(Duration::from_secs(30)), "the rollback is sent");
    assert_eq!(late.land(Duration::from_secs(5)), Some(200), "the routing lands before it");
    meanwhile();
    undo.release();
    child.finish()
}

#[test]
fn the_rollback_undoes_a_write_of_its_own_that_landed_unheard_and_names_nobody_else() {
    // Regressions (audit s29 #2): the VirtualService's routing (its second write) landed
    // without the run hearing of it; the rollback of the original it stored then met that write,
    // called it someone else's and left the routing of an unapproved step in place.

    // Answered 504 and read back unapplied; the server applies it before the rollback.
    let server = shop(2, "StepPaused").start();
    let out = approve_whose_routing_lands_before_its_rollback(&server, || {})
        .status(1)
        .stderr_has("(504 Timeout)")
        .stderr_has("VirtualService shop/demo while rolling back: a write of this run's that it did not hear of has landed; rolling it back too")
        .stderr_has("  VirtualService shop/demo: rolled back\n  nothing else was written");
    assert!(!out.stderr.contains("someone changed it"), "{}", out.stderr);
    assert!(!approved_with_its_routing(&server), "nothing of the run is left");
    assert!(claims(&server).is_empty());

    // Stored, its reply lost, and the read that would tell it landed never answered.
    let server = shop(2, "StepPaused").start();
    server.reply_fault(vs_updates(), 2, Stage::AfterStore, ReplyFault::Lost);
    let vs_reads = Requests::Matching(Rule::new(["get"]).resources(["virtualservices"]));
    server.reply_fault(vs_reads, 2, Stage::BeforeStore, ReplyFault::NeverSent);
    let out = Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--yes", "--request-timeout", "2s"])
        .run()
        .status(1)
        .stderr_has("reading it again to tell whether it landed failed too")
        .stderr_has("a write of this run's that it did not hear of has landed; rolling it back too")
        .stderr_has("  VirtualService shop/demo: rolled back\n  nothing else was written");
    assert!(!out.stderr.contains("someone changed it"), "{}", out.stderr);
    assert!(!approved_with_its_routing(&server), "nothing of the run is left");

    // Someone else's edit after it is still theirs: left alone and named.
    let server = shop(2, "StepPaused").start();
    let theirs = json!({"spec": {"hosts": ["demo", "theirs"]}});
    approve_whose_routing_lands_before_its_rollback(&server, || {
        server.patch_object(VIRTUAL_SERVICE.group, VIRTUAL_SERVICE.plural, NAMESPACE, "demo", &theirs);
    })
    .status(1)
    .stderr_has("VirtualService shop/demo: NOT rolled back: someone changed it since this run wrote it");
    assert_eq!(vs(&server)["spec"]["hosts"], json!(["demo", "theirs"]));
}

#[test]
fn a_write_unheard_whose_claim_cannot_be_renewed_is_not_said_to_have_been_read_again() {
    // A regression (review s51): the claim's renewal before the read that tells whether the
    // write landed failed, and the report said the read had failed. The renewal is due 20s after
    // the claim was taken, so the write's reply is lost past that.
    let server = shop(2, "StepPaused").start();
    let write = server.pause(vs_updates(), 2, Stage::BeforeStore);
    server.reply_fault(vs_updates(), 2, Stage::AfterStore, ReplyFault::NeverSent);
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "demo", "--yes", "--request-timeout", "21s"]);
    assert!(write.wait_until_held(Duration::from_secs(30)), "the routing is sent");
    server.delete_object("coordination.k8s.io", "leases", NAMESPACE, "rollout-lua.demo");
    write.release();
    let out = child
        .finish()
        .status(1)
        .stderr_has("; it was not read again to tell whether it landed: stopped: the claim ")
        .stderr_has(" was released by someone else")
        .stderr_has("  VirtualService shop/demo: rolled back\n  nothing else was written");
    assert!(!out.stderr.contains("failed too"), "{}", out.stderr);
    assert!(!approved_with_its_routing(&server), "nothing of the run is left");
}

#[test]
fn a_claim_whose_create_may_still_land_is_named_with_the_way_to_release_it() {
    let server = shop(2, "StepPaused").start();
    let late = server.late_write(Requests::Matching(Rule::new(["create"]).resources(["leases"])), 1);
    Test::new()
        .kubeconfig(&server)
        .run_args(["approve", "demo", "--yes"])
        .status(1)
        .stderr_has("(504 Timeout)")
        .stderr_has("  the claim on Rollout shop/demo may still be taken (the server may still apply its request); if so, it is left to expire (120s after its last renewal), or `kubectl rollout-lua release-claim demo -n shop` releases it");
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused", "nothing approved");
    assert_eq!(late.land(Duration::from_secs(5)), Some(201), "the server creates the Lease after the run");
    assert_eq!(claims(&server).len(), 1);
}

#[test]
fn a_lost_approval_reply_is_an_approval_once_the_controller_has_moved_on() {
    let approval = || Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]));
    // The approval (write 6) is stored, its reply lost, and the controller takes the Rollout to
    // the next step before the run can read it again.
    let server = shop(2, "StepPaused").start();
    server.reply_fault(approval(), 1, Stage::AfterStore, ReplyFault::Lost);
    someone_edits(&server, When::After(6), ROLLOUT, |rollout| {
        rollout["status"]["canaryStatus"]["currentStepIndex"] = json!(3);
        rollout["status"]["canaryStatus"]["currentStepState"] = json!("StepUpgrade");
    });
    let out = approve_demo(&server)
        .success()
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3) (the reply was lost; a fresh read shows the Rollout has since moved on)");
    assert!(!out.stderr.contains("restore"), "no restore is suggested: {}", out.stderr);
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][1]["weight"], 50, "step 2's routing stays");
    assert_eq!(dr(&server)["spec"]["subsets"][1]["name"], "canary");
    assert!(claims(&server).is_empty());

    // Someone edited the spec meanwhile (a new generation): whatever the status shows is not
    // this approval's; the routing stays (the Rollout is no longer waiting at the step) and
    // nothing is suggested that would write over live routing.
    let server = shop(2, "StepPaused").start();
    server.reply_fault(approval(), 1, Stage::AfterStore, ReplyFault::Lost);
    someone_edits(&server, When::After(6), ROLLOUT, |rollout| {
        rollout["spec"]["strategy"]["canary"]["steps"][2]["replicas"] = json!("90%");
        rollout["status"]["canaryStatus"]["currentStepIndex"] = json!(3);
        rollout["status"]["canaryStatus"]["currentStepState"] = json!("StepUpgrade");
    });
    let out = approve_demo(&server)
        .status(3)
        .stderr_has("someone else changed Rollout shop/demo meanwhile")
        .stderr_has("VirtualService shop/demo: written and kept: Rollout demo is no longer paused at step 2/3")
        .stderr_has("Look at where it stands now (`kubectl rollout-lua status demo -n shop`)")
        // Their spec edit is in the diff (a regression: the generation alone).
        .stderr_has("-      - replicas: 100%\n+      - replicas: 90%\n");
    assert!(!out.stderr.contains("a restore or approve puts"), "{}", out.stderr);
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][1]["weight"], 50);
}

#[test]
fn a_lost_write_after_this_runs_own_write_is_judged_against_that_write() {
    for fault in [ReplyFault::Lost, ReplyFault::Garbled] {
        let server = shop(2, "StepPaused").start();
        // The VirtualService's routing (write 3, sent at the version of this run's own write 2,
        // which stored the original) is lost before it is stored.
        server.reply_fault(Requests::Writes, 3, Stage::BeforeStore, fault);
        approve_demo(&server)
            .status(1)
            .stderr_has("  VirtualService shop/demo: rolled back\n  nothing else was written");
        assert!(!approved_with_its_routing(&server), "{fault:?}");
        assert!(claims(&server).is_empty());
    }
}

fn routed() -> FakeHandle {
    let server = shop(2, "StepPaused").start();
    Test::new().kubeconfig(&server).args(["approve", "demo", "--traffic-only", "--yes"]).run().success();
    server
}

#[test]
fn restore_resolves_a_lost_garbled_hung_or_dripping_reply_after_each_write() {
    for fault in [ReplyFault::Lost, ReplyFault::Garbled, ReplyFault::NeverSent, ReplyFault::Drip] {
        for k in 1..=RESTORE_WRITES {
            let server = routed();
            server.reply_fault(Requests::Writes, k, Stage::AfterStore, fault);
            let out =
                Test::new().kubeconfig(&server).args(["restore", "demo", "--yes", "--request-timeout", "2s"]).run();
            assert_eq!(out.status, 0, "{fault:?} after write {k}\n{}\n{}", out.stdout, out.stderr);
            assert_eq!(vs(&server)["spec"], virtual_service()["spec"], "{fault:?} after write {k}");
            assert!(vs(&server)["metadata"]["annotations"].is_null());
            assert_eq!(dr(&server)["spec"], destination_rule()["spec"]);
            assert!(claims(&server).is_empty(), "{fault:?} after write {k}");
            if (2..=3).contains(&k) {
                assert!(out.stdout.contains("restored (backup "), "{}", out.stdout);
                let unheard = format!("{}; a fresh read shows the write", unheard(fault, "2s"));
                assert!(out.stdout.contains(&unheard), "{fault:?} after write {k}: {}", out.stdout);
            }
        }
    }
}

#[test]
fn approve_and_restore_outlast_a_lost_connection_on_any_read() {
    // kubectl's client-go sends a GET again after its connection was lost; so does this tool,
    // whichever read of the run it is (a Rollout, an object, a claim, a resolving read).
    let reads = || Requests::Matching(Rule::new(["get", "list"]));
    // (Discovery's GETs are not among them: the rule selects reads of resources.)
    let count_reads = |server: &FakeHandle| {
        server.requests().iter().filter(|r| r.method == "GET" && r.path.contains("/namespaces/")).count()
    };
    let lost = "connection to the API server lost before the reply, retrying in 1s, 19s left";
    let sweep =
        |name: &str, start: &(dyn Fn() -> FakeHandle + Sync), args: &[&str], done: &(dyn Fn(&FakeHandle) + Sync)| {
            let server = start();
            server.clear_log();
            Test::new().kubeconfig(&server).args(args).run().success();
            let total = count_reads(&server);
            assert!(total >= 4, "{name}: {total} reads");
            std::thread::scope(|scope| {
                for k in 1..=total {
                    scope.spawn(move || {
                        let server = start();
                        server.reply_fault(reads(), k, Stage::BeforeStore, ReplyFault::Lost);
                        let out = Test::new().kubeconfig(&server).args(args).run();
                        assert_eq!(out.status, 0, "{name}, read {k} lost\n{}\n{}", out.stdout, out.stderr);
                        assert_eq!(out.stderr.matches(lost).count(), 1, "{name}, read {k} lost: {}", out.stderr);
                        done(&server);
                        assert!(claims(&server).is_empty(), "{name}, read {k} lost");
                    });
                }
            });
        };
    sweep("approve", &|| shop(2, "StepPaused").start(), &["approve", "demo", "--yes"], &|server| {
        assert!(approved_with_its_routing(server));
    });
    sweep("restore", &routed, &["restore", "demo", "--yes"], &|server| {
        assert_eq!(vs(server)["spec"], virtual_service()["spec"]);
        assert_eq!(dr(server)["spec"], destination_rule()["spec"]);
    });
}

/// A tiny deterministic generator for the races' delays.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *state >> 33
}

#[test]
fn two_approvers_at_once_one_wins_and_the_routing_always_matches_the_approval() {
    let mut seed = 7;
    for round in 0..20 {
        let server =
            shop(2, "StepPaused").latency_between(Duration::from_millis(0), Duration::from_millis(20), round).start();
        let (first, second) = (Test::new().kubeconfig(&server), Test::new().kubeconfig(&server));
        let args = ["approve", "demo", "--yes"];
        let a = first.spawn(&args);
        std::thread::sleep(Duration::from_millis(next(&mut seed) % 60));
        let b = second.spawn(&args);
        let outs = [a.finish(), b.finish()];
        let winners = outs.iter().filter(|o| o.status == 0).count();
        assert_eq!(winners, 1, "round {round}: {outs:#?}");
        let loser = outs.iter().find(|o| o.status != 0).unwrap();
        assert_eq!(loser.status, 3, "round {round}: {loser:#?}");
        assert!(
            loser.stderr.contains("is claimed by") || loser.stderr.contains("does not allow to approve"),
            "round {round}: {loser:#?}"
        );
        assert!(approved_with_its_routing(&server), "round {round}");
        assert!(claims(&server).is_empty(), "round {round}");
    }
}

fn lease(renewed: &str) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "rollout-lua.demo", "namespace": NAMESPACE,
                     "annotations": {"kubectl-rollout-lua/command": "approve demo"}},
        "spec": {"holderIdentity": "alice@laptop (pid 42)", "leaseDurationSeconds": 120,
                 "acquireTime": "2026-01-01T00:00:00.000000Z", "renewTime": renewed},
    })
}

/// The claim on Rollout `rollout` held by `holder`, last renewed at `renewed`.
fn claim_of(rollout: &str, holder: &str, renewed: &str) -> Value {
    let mut claim = lease(renewed);
    claim["metadata"]["name"] = json!(format!("rollout-lua.{rollout}"));
    claim["spec"]["holderIdentity"] = json!(holder);
    claim
}

/// Now, as a Lease's MicroTime.
fn now_micro() -> String {
    micro_time_from_now(0)
}

/// `seconds` from now, as a Lease's MicroTime.
fn micro_time_from_now(seconds: i64) -> String {
    let at = k8s_openapi::jiff::Timestamp::now() + k8s_openapi::jiff::SignedDuration::from_secs(seconds);
    at.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

#[test]
fn status_warns_of_a_claim_it_may_not_read() {
    // An RBAC trial: without `get leases`, status left the claim line out without a word, as
    // if nobody held the Rollout.
    let server =
        shop(2, "StepPaused").object(lease(&now_micro())).deny(Rule::new(["get"]).resources(["leases"])).start();
    let test = Test::new().kubeconfig(&server);
    let out = test.run_args(["status", "demo"]).success().stdout_has(
        "  warning: cannot read the claim on Rollout shop/demo (Lease shop/rollout-lua.demo) (leases.coordination.k8s.io \"rollout-lua.demo\" is forbidden: ",
    ).stdout_has(
        "): whether an approve or restore holds it is not shown; to allow that read, grant get leases named rollout-lua.demo (API group coordination.k8s.io) in namespace shop\n",
    );
    assert!(!out.stdout.contains("claimed by"), "{}", out.stdout);
    let json = test.run_args(["status", "demo", "-o", "json"]).success().json();
    assert!(json[0]["claim"].is_null(), "{json}");
    assert!(
        json[0]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("cannot read the claim")),
        "{json}"
    );
}

#[test]
fn a_claimed_rollout_is_refused_shown_and_can_be_released() {
    let server = shop(2, "StepPaused").object(lease(&now_micro())).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--yes"])
        .status(3)
        .stderr_has("nothing was written: Rollout shop/demo is claimed by alice@laptop (pid 42) running `approve demo`, since 2026-01-01T00:00:00Z");
    test.run_args(["restore", "demo", "--yes"]).status(3).stderr_has("is claimed by alice@laptop (pid 42)");
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["status", "demo"]).success().stdout_has("  claimed by alice@laptop (pid 42) running `approve demo`");
    let shown = test.run_args(["status", "demo", "-o", "json"]).success().json();
    let claim = &shown[0]["claim"];
    assert_eq!(claim["holder"], "alice@laptop (pid 42)", "{shown}");
    assert_eq!(claim["command"], "approve demo");
    assert_eq!(claim["since"], "2026-01-01T00:00:00.000000Z");
    assert_eq!(claim["expired"], false);
    assert!(claim["expires"].as_str().is_some_and(|t| t.ends_with('Z')), "{claim}");
    let shown = test.run_args(["status", "demo", "-o", "yaml"]).success();
    assert!(shown.stdout.contains("  claim:\n    command: approve demo\n"), "{}", shown.stdout);
    test.run_args(["release-claim", "demo"]).status(3).stderr_has("no terminal to confirm on");
    test.run_args(["release-claim", "demo", "--yes"])
        .success()
        .stdout_has("Rollout shop/demo is claimed by alice@laptop (pid 42)")
        .stdout_has("released the claim on Rollout shop/demo");
    assert!(claims(&server).is_empty());
    test.run_args(["release-claim", "demo", "--yes"]).success().stdout_has("Rollout shop/demo is not claimed");
    // A name mistyped is not found, as kubectl says (not "not claimed"), and the others are said.
    test.run_args(["release-claim", "demo", "dmeo", "--yes"])
        .status(1)
        .stdout_has("Rollout shop/demo is not claimed")
        .stderr_has("rollouts.rollouts.kruise.io \"dmeo\" not found in namespace shop");
    assert!(test.run_args(["status", "demo", "-o", "json"]).success().json()[0]["claim"].is_null());
    test.run_args(["approve", "demo", "--yes"]).success();
    // A claim left on a Rollout deleted since is released, and said to be of no Rollout.
    server.put_object(lease(&now_micro()));
    server.delete_object("rollouts.kruise.io", "rollouts", NAMESPACE, "demo");
    test.run_args(["release-claim", "demo", "--yes"])
        .success()
        .stdout_has("Rollout shop/demo (no such Rollout now) is claimed by alice@laptop (pid 42)")
        .stdout_has("released the claim on Rollout shop/demo");
    assert!(claims(&server).is_empty());
}

#[test]
fn a_claim_refused_whose_holder_cannot_be_read_is_not_said_to_be_this_runs() {
    // A review's finding: the create's 409 is a definite answer, but a holder's read that timed
    // out was reported as this run's claim that "may still be taken", with advice to release
    // it: the live claim of someone else.
    let server = shop(2, "StepPaused").object(lease(&now_micro())).start();
    let read = Requests::Matching(Rule::new(["get"]).resources(["leases"]));
    server.reply_fault(read, 1, Stage::BeforeStore, fake_apiserver::ReplyFault::NeverSent);
    let out = Test::new().kubeconfig(&server).args(["approve", "demo", "--yes", "--request-timeout", "2s"]).run();
    let out = out.status(3).stderr_has(
        "error: nothing was written: Rollout shop/demo is claimed by someone else (Lease rollout-lua.demo exists), and reading who holds it failed: ",
    );
    assert!(!out.stderr.contains("may still be taken") && !out.stderr.contains("release-claim"), "{}", out.stderr);
    assert_eq!(writes(&server), Vec::<String>::new());
    assert_eq!(claims(&server).len(), 1, "theirs, untouched");
}

#[test]
fn release_claim_without_leave_to_delete_the_lease_is_refused_with_the_role_that_grants_it() {
    let denied = Rule::new(["delete"]).resources(["leases"]).names(["rollout-lua.demo"]);
    let server = shop(2, "StepPaused").object(lease(&now_micro())).deny(denied).start();
    Test::new()
        .kubeconfig(&server)
        .args(["release-claim", "demo", "--yes"])
        .run()
        .status(3)
        .stderr_has("nothing was written: you may not\n  delete leases named rollout-lua.demo (API group coordination.k8s.io) in namespace shop\nA Role and RoleBinding that would grant it:")
        .stderr_has("  resourceNames: [\"rollout-lua.demo\"]\n  verbs: [\"delete\"]");
    assert_eq!(claims(&server).len(), 1);
}

#[test]
fn a_claim_taken_over_before_its_release_is_said_to_be_theirs() {
    // A regression (audit s33 writes F4): the warning said it would expire within 120s, as
    // this run's own claim would; it is someone else's live claim.
    let server = shop(2, "StepPaused").start();
    let release = server.pause(Requests::Matching(Rule::new(["delete"]).resources(["leases"])), 1, Stage::BeforeStore);
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "demo", "--yes"]);
    assert!(release.wait_until_held(Duration::from_secs(30)), "the release is sent");
    server.put_object(lease(&now_micro()));
    release.release();
    let out = child.finish().success().stderr_has(
        "warning: could not release the claim on Rollout shop/demo (Lease shop/rollout-lua.demo was taken over by another run (after this one expired, or was released): it is theirs now, and left alone)",
    );
    assert!(!out.stderr.contains("expires within"), "{}", out.stderr);
    assert_eq!(claims(&server)[0]["spec"]["holderIdentity"], "alice@laptop (pid 42)", "theirs is kept");
}

#[test]
fn an_expired_claim_is_taken_over() {
    let server = shop(2, "StepPaused").object(lease("2026-01-01T00:00:00.000000Z")).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status", "demo"]).success().stdout_has("expired: the next approve or restore takes it over");
    test.run_args(["approve", "demo", "--yes"]).success().stdout_has("approved (step 2/3)");
    assert!(claims(&server).is_empty(), "taken over, then released");
    assert!(server.writes().iter().any(|w| w.method == "PUT" && w.path.ends_with("/leases/rollout-lua.demo")));
}

#[test]
fn a_claim_that_expired_lately_is_taken_over_only_once_seen_unrenewed() {
    // A red-team trial: two users whose replies carry different `Date` clocks (a proxy that
    // sends its own) judge a claim's expiry on different clocks, and one took over the other's
    // live claim. One that expired lately is watched on this host's clock first.
    let watching = "Rollout shop/demo is claimed by alice@laptop (pid 42) running `approve demo`, since 2026-01-01T00:00:00Z, expired by the API server's clock as this run reads it; it is taken over once seen unrenewed for 60s";
    // Renewed while watched: its holder is at work.
    let server = shop(2, "StepPaused").object(lease(&micro_time_from_now(-130))).start();
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "demo", "--yes"]);
    child.wait_for_stderr(watching);
    server.put_object(lease(&now_micro()));
    child.finish().status(3).stderr_has("whose claim was renewed (or taken) while this run watched it");
    assert_eq!(writes(&server), Vec::<String>::new());
    assert_eq!(claims(&server)[0]["spec"]["holderIdentity"], "alice@laptop (pid 42)", "theirs is kept");
    // A signal while it is watched: nothing is written.
    let server = shop(2, "StepPaused").object(lease(&micro_time_from_now(-130))).start();
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "demo", "--yes"]);
    child.wait_for_stderr(watching);
    child.signal("INT");
    child.finish().status(130);
    assert_eq!(writes(&server), Vec::<String>::new());
    assert_eq!(claims(&server)[0]["spec"]["holderIdentity"], "alice@laptop (pid 42)", "not taken over");
    // Unrenewed for the minute: taken over.
    let server = shop(2, "StepPaused").object(lease(&micro_time_from_now(-130))).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--yes"]).success().stderr_has(watching).stdout_has("approved (step 2/3)");
    assert!(claims(&server).is_empty(), "taken over, then released");
}

#[test]
fn an_expired_claims_takeover_whose_reply_is_lost_garbled_or_hung_is_resolved_by_reading_it_again() {
    for fault in [ReplyFault::Lost, ReplyFault::Garbled, ReplyFault::NeverSent] {
        let server = shop(2, "StepPaused").object(lease("2026-01-01T00:00:00.000000Z")).start();
        // The takeover (the replace after the create's 409) is stored; its reply does not come.
        let takeover = Requests::Matching(Rule::new(["update"]).resources(["leases"]));
        server.reply_fault(takeover, 1, Stage::AfterStore, fault);
        let out = Test::new().kubeconfig(&server).args(["approve", "demo", "--yes", "--request-timeout", "2s"]).run();
        assert_eq!(out.status, 0, "{fault:?}\n{}\n{}", out.stdout, out.stderr);
        assert!(approved_with_its_routing(&server), "{fault:?}");
        assert!(claims(&server).is_empty(), "{fault:?}: taken over, then released");
    }
    // Not stored, and no answer: nothing is written, and the expired claim stays as it was.
    let server = shop(2, "StepPaused").object(lease("2026-01-01T00:00:00.000000Z")).start();
    let takeover = Requests::Matching(Rule::new(["update"]).resources(["leases"]));
    server.reply_fault(takeover, 1, Stage::BeforeStore, ReplyFault::NeverSent);
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--yes", "--request-timeout", "2s"])
        .run()
        .status(1)
        .stderr_has("updating Lease shop/rollout-lua.demo")
        .stderr_has("timed out")
        .stderr_has("the claim on Rollout shop/demo may still be taken (the server may still apply its request)")
        .stderr_has("\n  nothing was written");
    assert_eq!(writes(&server), Vec::<String>::new());
    let claim = claims(&server);
    assert_eq!(claim[0]["spec"], lease("2026-01-01T00:00:00.000000Z")["spec"], "the expired claim stays");
    assert!(!approved_with_its_routing(&server));
}

/// Someone else holds the claim on `demo` when this run's `write`-th write (its create) is
/// served, a 409, and has released it by the read that follows.
fn claim_held_around_the_write(server: &FakeHandle, write: usize) {
    let held = lease(&now_micro());
    server.before_write(write, move |store| {
        store.put(held);
    });
    server.after_write(write, |store| {
        store.delete(CLAIM.group, CLAIM.plural, NAMESPACE, CLAIM.name);
    });
}

#[test]
fn a_claim_that_changes_hands_twice_while_it_is_taken_is_refused() {
    // Once: the claim is free by the read, and taken on the second try.
    let server = shop(2, "StepPaused").start();
    claim_held_around_the_write(&server, 1);
    approve_demo(&server).success();
    assert_eq!(claim_writes(&server)[..2], ["POST /apis/coordination.k8s.io/v1/namespaces/shop/leases"; 2]);
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady");

    // Twice: refused, and nothing written but the two tries.
    let server = shop(2, "StepPaused").start();
    claim_held_around_the_write(&server, 1);
    claim_held_around_the_write(&server, 2);
    approve_demo(&server).status(3).stderr_has(
        "error: nothing was written: the claim on Rollout shop/demo changes hands too fast to take it; run again",
    );
    assert_eq!(claim_writes(&server), ["POST /apis/coordination.k8s.io/v1/namespaces/shop/leases"; 2]);
    assert_eq!(writes(&server), Vec::<String>::new());
    assert!(claims(&server).is_empty());
    assert!(!approved_with_its_routing(&server));
}

#[test]
fn an_expired_claim_someone_else_takes_over_first_is_refused() {
    let server = shop(2, "StepPaused").object(lease("2026-01-01T00:00:00.000000Z")).start();
    // Writes: the create (a 409: the expired claim is there), then its replace. Right before
    // the replace, someone else takes the claim over.
    let renewed = now_micro();
    someone_edits(&server, When::Before(2), CLAIM, move |lease| {
        lease["spec"]["holderIdentity"] = json!("bob@desktop (pid 7)");
        lease["spec"]["renewTime"] = json!(renewed);
    });
    approve_demo(&server).status(3).stderr_has(
        "error: nothing was written: someone else took the expired claim on Rollout shop/demo first; run again",
    );
    assert_eq!(
        claim_writes(&server),
        [
            "POST /apis/coordination.k8s.io/v1/namespaces/shop/leases",
            "PUT /apis/coordination.k8s.io/v1/namespaces/shop/leases/rollout-lua.demo"
        ]
    );
    assert_eq!(writes(&server), Vec::<String>::new());
    let claim = claims(&server);
    assert_eq!(claim.len(), 1);
    assert_eq!(claim[0]["spec"]["holderIdentity"], "bob@desktop (pid 7)", "their claim stays");
    assert!(!approved_with_its_routing(&server));
}

#[test]
fn a_claim_expires_by_the_api_servers_clock_not_this_hosts() {
    // The API server's clock is 10 minutes behind this host's (or this host's 10 minutes ahead):
    // a claim renewed just now by the server's clock is live.
    let server = shop(2, "StepPaused").clock_offset(-600).object(lease(&micro_time_from_now(-600))).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status", "demo"]).success().stdout_has("unless renewed");
    test.run_args(["approve", "demo", "--yes"]).status(3).stderr_has("Rollout shop/demo is claimed by alice@laptop");
    assert_eq!(writes(&server), Vec::<String>::new());

    // This run's own claim is dated by the server's clock too.
    test.run_args(["release-claim", "demo", "--yes"]).success();
    server.clear_log();
    test.run_args(["approve", "demo", "--yes"]).success();
    let taken = server.writes().into_iter().find(|w| w.method == "POST" && w.path.contains("/leases")).unwrap();
    let renewed = k8s_openapi::jiff::Timestamp::from_str(taken.body["spec"]["renewTime"].as_str().unwrap()).unwrap();
    let behind = k8s_openapi::jiff::Timestamp::now().duration_since(renewed).as_secs();
    assert!((590..=610).contains(&behind), "renewed {behind}s before this host's now");
}

#[test]
fn a_backup_folder_that_cannot_be_made_stops_the_run_before_its_first_write() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server).file("state", "a file where the state folder would be");
    let state = test.path("state");
    test.env("XDG_STATE_HOME", state.to_str().unwrap()).args(["approve", "demo", "--yes"]).run().status(1).stderr_has(
        &format!(
            "creating the backup folder {}/kubectl-rollout-lua/backups/fake/shop/VirtualService/demo: ",
            state.display()
        ),
    );
    assert_eq!(writes(&server), Vec::<String>::new());
    assert!(claims(&server).is_empty(), "the claim is released");
    // With a folder for its backups, the same run goes ahead.
    approve_demo(&server).success();
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady");
}

#[test]
fn a_backup_cut_short_by_a_full_disk_leaves_nothing_under_a_backups_name() {
    // A regression (audit s24-safety #2): a backup was written in place, so a full disk left
    // its first part under a backup's name, for `restore --from-backup` to put back.
    let server = shop(2, "StepPaused").start();
    let mut big = virtual_service();
    // Past what a full disk leaves room for, and, with the original stored, within what the
    // API server admits of annotations (256 KiB).
    big["metadata"]["annotations"] = json!({"note": "x".repeat(100 << 10)});
    server.put_object(big);
    let before = vs(&server);
    let test = Test::new().kubeconfig(&server);
    test.run_on_a_full_disk(&["approve", "demo", "--yes"])
        .status(1)
        .stderr_has("error: writing the backup ")
        .stderr_has("File too large")
        .stderr_has("nothing was written");
    let folder = test.path("home/.local/state/kubectl-rollout-lua/backups/fake/shop/VirtualService/demo");
    let left: Vec<_> = std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, Vec::<std::ffi::OsString>::new(), "neither part of a backup nor its temporary file");
    assert_eq!(writes(&server), Vec::<String>::new());
    assert_eq!(vs(&server), before);
    assert!(claims(&server).is_empty(), "the claim is released");
}

#[cfg(unix)]
#[test]
fn backups_are_readable_by_their_owner_only_and_end_with_their_sum() {
    use std::os::unix::fs::PermissionsExt;
    // Audit s24-safety #3: a backup holds a whole object (every annotation); they were made
    // readable by everyone.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let root = test.path("home/.local/state/kubectl-rollout-lua/backups");
    // As an older version left it.
    std::fs::create_dir_all(&root).unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    test.run_args(["approve", "demo", "--yes"]).success();
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&root), 0o700, "the backups' folder is closed");
    let backup = newest_backup_of_the_virtual_service(&test);
    assert_eq!(mode(&backup), 0o600);
    let folders: Vec<_> = backup.ancestors().skip(1).take_while(|dir| *dir != root).collect();
    assert_eq!(folders.len(), 4, "context, namespace, kind, name: {folders:?}");
    for folder in folders {
        assert_eq!(mode(folder), 0o700, "{}", folder.display());
    }
    let text = std::fs::read_to_string(&backup).unwrap();
    assert!(text.lines().last().unwrap().starts_with("# end of backup: sha256 "), "{text}");
}

#[test]
fn without_a_home_for_backups_a_run_that_writes_refuses_before_its_first_write() {
    // Audit s24-safety #3: with neither XDG_STATE_HOME nor HOME, backups went to a shared
    // /tmp/kubectl-rollout-lua, which anyone may read, or make first.
    let server = shop(2, "StepPaused").start();
    for state in [None, Some(""), Some("relative/state")] {
        let test = Test::new().kubeconfig(&server).without_env("HOME");
        let test = match state {
            None => test.without_env("XDG_STATE_HOME"),
            Some(state) => test.env("XDG_STATE_HOME", state),
        };
        for command in [&["approve", "demo", "--yes"][..], &["restore", "demo", "--yes"]] {
            test.run_args(command).status(1).stderr_has(
                "error: nothing was written: there is no folder for backups: neither XDG_STATE_HOME nor HOME is set (to an absolute path); set one (backups go to $XDG_STATE_HOME/kubectl-rollout-lua/backups, by default ~/.local/state/kubectl-rollout-lua/backups)\n",
            );
        }
        assert!(!test.path("relative").exists(), "{state:?}");
    }
    assert_eq!((writes(&server), claim_writes(&server)), (vec![], vec![]), "not even a claim");
    // A dry run saves no backup, and needs no place for them.
    let test = Test::new().kubeconfig(&server).without_env("HOME").without_env("XDG_STATE_HOME");
    test.run_args(["approve", "demo", "--dry-run=client"]).success();
}

#[test]
fn a_claim_taken_over_or_released_while_following_stops_the_run_and_one_left_alone_is_renewed() {
    // Three runs follow their release after approving step 1 (no controller moves it on). A
    // claim is renewed 20 s after it was last written, at the next change the run sees: the
    // Rollouts' status message changes every second.
    let [kept, taken, released] = [(); 3].map(|()| shop(1, "StepPaused").start());
    let approve = ["approve", "demo", "--to-end", "--yes", "--timeout", "30s"];
    let tests = [&kept, &taken, &released].map(|server| Test::new().kubeconfig(server));
    let [kept_run, taken_run, released_run] = [0, 1, 2].map(|i| tests[i].spawn(&approve));
    for run in [&kept_run, &taken_run, &released_run] {
        run.wait_for_stdout("approved (step 1/3)");
    }
    // Someone else writes over the second run's claim, and releases the third's.
    taken.put_object(lease(&now_micro()));
    released.delete_object("coordination.k8s.io", "leases", NAMESPACE, "rollout-lua.demo").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let toucher = {
        let (servers, stop) = ([kept.clone_handle(), taken.clone_handle(), released.clone_handle()], stop.clone());
        std::thread::spawn(move || {
            for tick in 0..60 {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    return;
                }
                for server in &servers {
                    let mut rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo").unwrap();
                    rollout["status"]["message"] = json!(format!("tick {tick}"));
                    server.put_object(rollout);
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    };
    taken_run
        .finish()
        .status(3)
        .stderr_has("stopped: the claim ")
        .stderr_has("rollout-lua.demo was taken over by someone else (after it expired, or was released)");
    assert_eq!(claims(&taken)[0]["spec"]["holderIdentity"], "alice@laptop (pid 42)", "their claim is left alone");
    released_run
        .finish()
        .status(3)
        .stderr_has("rollout-lua.demo was released by someone else (`release-claim`, or its Lease deleted)");
    assert!(claims(&released).is_empty(), "not taken again");
    kept_run.finish().status(1).stderr_has("timed out after 30s");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    toucher.join().unwrap();
    let renewals =
        kept.writes().into_iter().filter(|w| w.method == "PUT" && w.path.ends_with("/leases/rollout-lua.demo"));
    assert!(renewals.count() >= 1, "the claim left alone was renewed: {:?}", claim_writes(&kept));
    assert!(claims(&kept).is_empty(), "and released at the end");
}

/// `approve demo --until-step 2 --yes` (of a Rollout paused at step 1), once it has approved
/// step 1 and follows the Rollout.
fn approved_step_1_until_step_2(test: &Test) -> crate::support::Running {
    let child = test.spawn(&["approve", "demo", "--until-step", "2", "--yes", "--timeout", "60s"]);
    child.wait_for_stdout("approved (step 1/3)");
    child
}

/// The stand-in controller's move of Rollout demo to step 2's pause.
fn paused_at_step_2(server: &FakeHandle) {
    let status = json!({"status": {"canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepPaused"}}});
    server.patch_object("rollouts.kruise.io", "rollouts", NAMESPACE, "demo", &status);
}

#[test]
fn a_release_that_begins_to_end_or_jumps_under_the_approval_is_not_approved_again() {
    // A multi-step trial: the approval met a conflict, the Rollout read again showed its release
    // cancelled, and the run, finding "nobody changed what this write is about", approved it.
    // A red-team trial: the same with a jump back patched meanwhile (`rollout undo --fast`).
    let cancelled =
        json!({"status": {"conditions": [{"type": "Progressing", "status": "True", "reason": "Cancelling"}]}});
    let jumped = json!({"status": {"canaryStatus": {"nextStepIndex": 1}}});
    for meanwhile in [cancelled, jumped] {
        let server = shop(2, "StepPaused").start();
        let approval = Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]));
        let held = server.pause(approval, 1, Stage::BeforeStore);
        let test = Test::new().kubeconfig(&server);
        let child = test.spawn(&["approve", "demo", "--yes"]);
        assert!(held.wait_until_held(Duration::from_secs(30)), "the approval is sent");
        server.patch_object("rollouts.kruise.io", "rollouts", NAMESPACE, "demo", &meanwhile);
        held.release();
        let out = child
            .finish()
            .status(3)
            .stderr_has("Rollout shop/demo was changed by someone else while this run wrote it");
        assert!(!out.stdout.contains("approved (step"), "{meanwhile}: {}", out.stdout);
        assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused", "not approved");
    }
}

#[test]
fn a_claim_taken_over_during_the_wait_stops_the_run_before_the_next_steps_first_write() {
    // A multi-step trial: the claim was renewed every 20 s only, and a later step was written
    // and approved under someone else's claim (theirs taken after a `release-claim`) until then.
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let child = approved_step_1_until_step_2(&test);
    server.put_object(lease(&now_micro()));
    let before = writes(&server);
    paused_at_step_2(&server);
    child
        .finish()
        .status(3)
        .stderr_has("stopped: the claim ")
        .stderr_has("rollout-lua.demo was taken over by someone else (after it expired, or was released)");
    assert_eq!(writes(&server), before, "nothing of step 2 written");
    assert_eq!(claims(&server)[0]["spec"]["holderIdentity"], "alice@laptop (pid 42)", "their claim is left alone");
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
}

#[test]
fn a_later_steps_lines_say_nothing_of_an_earlier_steps_lost_reply() {
    // An Ingress and Gateway trial: step 1's lost reply (its write read back) was said again on
    // step 2's line of the object, and so was the approval's on step 2's approval line.
    let server = shop(1, "StepPaused").start();
    server.reply_fault(vs_updates(), 2, Stage::AfterStore, ReplyFault::Lost);
    server.reply_fault(
        Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"])),
        1,
        Stage::AfterStore,
        ReplyFault::Lost,
    );
    let test = Test::new().kubeconfig(&server);
    let child = approved_step_1_until_step_2(&test);
    paused_at_step_2(&server);
    let out = child.finish().success();
    let lines: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with("VirtualService shop/demo ")).collect();
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    assert!(lines[0].contains("; the reply was lost; a fresh read shows the write)"), "{}", lines[0]);
    assert!(!lines[1].contains("reply"), "{}", lines[1]);
    let approvals: Vec<&str> =
        out.stdout.lines().filter(|l| l.starts_with("rollout.rollouts.kruise.io/demo approved")).collect();
    assert_eq!(approvals.len(), 2, "{}", out.stdout);
    assert!(approvals[0].contains("a fresh read shows"), "{}", approvals[0]);
    assert_eq!(approvals[1], "rollout.rollouts.kruise.io/demo approved (step 2/3)");
}

#[test]
fn a_renewal_a_busy_server_refuses_while_following_is_tried_again_while_the_claim_lasts() {
    // A regression (audit s29 safety3 #2): one 503 on the claim's renewal while following ended
    // the whole sequence, with the claim valid 100s more and --timeout far off. The renewal is
    // due 20s after the claim was taken: at step 2's pause, 21s after step 1's approval.
    let server = shop(1, "StepPaused").start();
    let renewals = Requests::Matching(Rule::new(["update"]).resources(["leases"]));
    server.storm(renewals, Some(1), 503, None);
    let test = Test::new().kubeconfig(&server);
    let child = approved_step_1_until_step_2(&test);
    std::thread::sleep(Duration::from_secs(21));
    paused_at_step_2(&server);
    let out = child
        .finish()
        .success()
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)")
        .stderr_has("warning: renewing the claim: updating Lease shop/rollout-lua.demo")
        .stderr_has("(503 ")
        .stderr_has("renewing it is tried again");
    assert!(claims(&server).is_empty(), "released: {}", out.stderr);
    // Not again within 5s of the refusal: step 2's writes came sooner.
    let renewals = server.writes().into_iter().filter(|w| w.method == "PUT" && w.path.contains("/leases/")).count();
    assert_eq!(renewals, 1);
}

#[test]
fn a_second_signal_during_a_later_steps_write_keeps_the_earlier_steps_line() {
    // An interrupt sweep: `approve --until-step 2` stopped at once by a second signal while
    // step 2's VirtualService write was out: the report said only what that write may have
    // done, not that step 1, approved, was written and kept.
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let child = approved_step_1_until_step_2(&test);
    let held = server.pause(vs_updates(), 1, Stage::BeforeStore);
    paused_at_step_2(&server);
    assert!(held.wait_until_held(Duration::from_secs(30)), "step 2's VirtualService write is sent");
    child.first_signal("INT");
    child.signal("INT");
    let out = child.finish().status(130).stderr_has("stopped at once by a second signal");
    let line = out.stderr.lines().find(|l| l.starts_with("  VirtualService shop/demo: ")).expect(&out.stderr);
    assert!(
        line.starts_with("  VirtualService shop/demo: written and kept: Rollout demo is approved with it (step 1/3); a later write of it may or may not be written (its request was out) (its state before this step: "),
        "{line}"
    );
    drop(held);
}

#[test]
fn a_later_steps_write_left_not_rolled_back_has_the_way_back_to_the_earlier_step() {
    // A review's finding: the VirtualService was backed up at step 1 only; when step 2's
    // approval was refused and the undo of its write refused too, the report's way back put it
    // before step 1, whose approval stands.
    let server = shop(1, "StepPaused").start();
    let before_run = vs(&server);
    let test = Test::new().kubeconfig(&server);
    let child = approved_step_1_until_step_2(&test);
    let at_step_1 = vs(&server);
    let approvals = || Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]));
    let held = server.pause(approvals(), 1, Stage::BeforeStore);
    server.storm(approvals(), Some(1), 403, None);
    paused_at_step_2(&server);
    assert!(held.wait_until_held(Duration::from_secs(30)), "step 2's approval is sent");
    server.storm(vs_updates(), Some(1), 422, None);
    held.release();
    let out = child.finish().status(1);
    let kept = "  VirtualService shop/demo: written and kept: Rollout demo is approved with it (step 1/3); a later write of it: could NOT roll back: ";
    let line = out.stderr.lines().find(|l| l.starts_with(kept)).expect(&out.stderr);
    let (_, file) = line.rsplit_once("(its state before this step: ").expect(line);
    let file = file.trim_end_matches(')');
    assert!(out.stderr.contains("  DestinationRule shop/demo: written and kept: Rollout demo is approved with it (step 1/3) (its state before this run: "), "{}", out.stderr);
    test.run_args(["restore", "--from-backup", file, "--yes"]).success();
    assert_eq!(vs(&server)["spec"], at_step_1["spec"], "back where step 1, approved, left it");
    assert_ne!(vs(&server)["spec"], before_run["spec"]);
}

#[test]
fn a_script_configmap_edited_while_following_stops_the_run_before_the_next_steps_write() {
    // Rollout `things` routes Thing `t` (example.com, no built-in script) with the script of the
    // controller's ConfigMap. After step 1 is approved, someone edits that script; at step 2's
    // pause the run stops before writing: step 2 was confirmed with the other script.
    let script = |weight: &str| format!("return {{spec = {{weight = {weight}}}}}");
    let configmap = |code: String| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "kruise-rollout-configuration", "namespace": "kruise-rollout"},
               "data": {"lua.traffic.routing.Thing.example.com": code}})
    };
    let rollout = json!({
        "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "things", "namespace": NAMESPACE},
        "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "things"}, "strategy": {"canary": {
            "steps": [{"replicas": 1, "traffic": "10%"}, {"replicas": 2, "traffic": "20%"}, {"replicas": "100%"}],
            "trafficRoutings": [{"service": "things", "customNetworkRefs": [{"apiVersion": "example.com/v1", "kind": "Thing", "name": "t"}]}]
        }}},
        "status": {"phase": "Progressing", "canaryStatus": {"currentStepIndex": 1, "currentStepState": "StepPaused"}}
    });
    let server = FakeApiServer::builder()
        .kruise_and_istio()
        .resource(fake_apiserver::leases())
        .resource(fake_apiserver::configmaps())
        .resource(fake_apiserver::deployments())
        .resource(fake_apiserver::ApiResourceDef::new("example.com", "v1", "Thing", "things"))
        .object(rollout)
        .object(json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t", "namespace": NAMESPACE}, "spec": {"weight": 0}}))
        .object(configmap(script("obj.canaryWeight")))
        .start();
    let thing = || server.object("example.com", "*", "things", NAMESPACE, "t").unwrap()["spec"]["weight"].clone();
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "things", "--until-step", "2", "--yes", "--timeout", "60s"]);
    child.wait_for_stdout("approved (step 1/3)");
    assert_eq!(thing(), 10);
    server.put_object(configmap(script("obj.canaryWeight + 1")));
    let status = json!({"status": {"canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepPaused"}}});
    server.patch_object("rollouts.kruise.io", "rollouts", NAMESPACE, "things", &status);
    child.finish().status(3).stderr_has(
        "stopped: the script ConfigMap kruise-rollout/kruise-rollout-configuration key lua.traffic.routing.Thing.example.com changed since the confirmation (sha256 ",
    );
    assert_eq!(thing(), 10, "step 2 is not written");
    let rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "things").unwrap();
    assert_eq!(rollout["status"]["canaryStatus"]["currentStepState"], "StepPaused", "nor approved");
    assert!(claims(&server).is_empty(), "the claim is released");
}

#[test]
fn a_terminal_closed_under_the_live_view_stops_the_run_cleanly() {
    // A regression (audit s29 safety3 #4): the terminal went away while `approve --to-end` drew
    // its live view; the hang-up's notice, written above the view, made indicatif panic on the
    // terminal's EIO, and the run aborted with no report and its claim left for 120s.
    if !crate::support::terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server).env("TERM", "xterm");
    let mut session = test.on_terminal_session(&["approve", "demo", "--yes", "--to-end", "--timeout", "60s"], None);
    session.wait_for("shop/demo  [");
    let binary = session.binary_pid().expect("the binary runs");
    session.close_terminal();
    let deadline = Instant::now() + Duration::from_secs(30);
    // Gone, or a zombie nobody reaps (its parent, `script`, was killed).
    let running = || {
        let stat = std::fs::read_to_string(format!("/proc/{binary}/stat")).unwrap_or_default();
        stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z'))
    };
    while running() {
        assert!(Instant::now() < deadline, "the run stops");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(claims(&server).is_empty(), "its claim is released");
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady", "step 1 stays approved");
    let _ = session.finish();
}

#[test]
fn a_renewal_cut_short_by_the_answer_to_a_question_is_found_to_be_this_runs_own() {
    if !crate::support::terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    // Someone edits the VirtualService before the run's first write of it, and the run asks
    // whether to overwrite their change. While the question waits the claim is renewed (20s
    // after it was taken); that renewal is stored, but its reply never comes (no request
    // timeout), until the answer ends the wait. The next renewal finds the claim changed
    // since: by this run's own renewal, not taken over.
    let server = shop(2, "StepPaused").start();
    someone_edits(&server, When::Before(2), VIRTUAL_SERVICE, |vs| vs["spec"]["hosts"] = json!(["demo", "x"]));
    let renewals = Requests::Matching(Rule::new(["update"]).resources(["leases"]));
    server.reply_fault(renewals, 1, Stage::AfterStore, ReplyFault::NeverSent);
    let test = Test::new().kubeconfig(&server);
    let mut session = test.on_terminal_session(&["approve", "demo", "--request-timeout", "0"], None);
    session.wait_for("Only 'yes' goes ahead: ");
    session.type_keys(b"yes\n");
    session.wait_for("Overwrite their change? Only 'yes' goes ahead: ");
    let deadline = Instant::now() + Duration::from_secs(40);
    while !server.writes().iter().any(|w| w.method == "PUT" && w.path.contains("/leases/")) {
        assert!(Instant::now() < deadline, "the claim is renewed while the question waits");
        std::thread::sleep(Duration::from_millis(50));
    }
    session.type_keys(b"yes\n");
    let (status, screen) = session.finish();
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{screen}");
    assert!(approved_with_its_routing(&server), "{screen}");
    assert!(claims(&server).is_empty(), "the claim is released: {screen}");
}

#[test]
fn the_claim_is_taken_before_the_read_that_is_guarded_and_held_while_writing() {
    let server = shop(2, "StepPaused").start();
    approve_demo(&server).success();
    let requests = server.requests();
    let claimed = requests.iter().position(|r| r.method == "POST" && r.path.contains("/leases")).unwrap();
    let rollout_reads: Vec<usize> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.method == "GET" && r.path.ends_with("/rollouts/demo"))
        .map(|(i, _)| i)
        .collect();
    assert!(rollout_reads.iter().any(|&i| i > claimed), "the Rollout is read after the claim: {rollout_reads:?}");
    let released = requests.iter().rposition(|r| r.method == "DELETE" && r.path.contains("/leases")).unwrap();
    let last_write = requests.iter().rposition(|r| r.path.ends_with("/status")).unwrap();
    assert!(last_write < released, "the claim is released last");
    let release = &requests[released];
    assert!(release.body["preconditions"]["uid"].is_string(), "{}", release.body);
    assert!(release.body["preconditions"]["resourceVersion"].is_string(), "{}", release.body);
    assert_eq!(claim_writes(&server).len(), 2);
}

#[test]
fn sigint_sigterm_and_sighup_after_each_write_stop_before_the_next_and_roll_back() {
    for (name, code, shown) in [("INT", 130, "SIGINT"), ("TERM", 143, "SIGTERM"), ("HUP", 129, "SIGHUP")] {
        for k in 1..=APPROVE_WRITES {
            let server = shop(2, "StepPaused").start();
            let out = signalled_after_write(&server, &["approve", "demo", "--yes"], k, name);
            assert_eq!(out.status, code, "{name} after write {k}\n{}\n{}", out.stdout, out.stderr);
            assert!(out.stderr.contains(&format!("interrupted ({shown})")), "{name} after write {k}: {}", out.stderr);
            let approved = approved_with_its_routing(&server);
            // The approval is the 6th write: from then on the run had finished its step.
            assert_eq!(approved, k >= 6, "{name} after write {k}: {}", out.stderr);
            if (2..=5).contains(&k) {
                assert!(out.stderr.contains("VirtualService shop/demo: rolled back"), "{}", out.stderr);
                assert!(out.stderr.contains("no new write was started"), "{}", out.stderr);
            }
            if k == 6 {
                assert!(out.stderr.contains("it came during the last write, which was finished"), "{}", out.stderr);
            }
            // The release of the claim is no write of the plan: every one was done.
            if k == 7 {
                let when = "it came once every write was done, while the run finished (releasing its claim)";
                assert!(out.stderr.contains(when), "{}", out.stderr);
            }
            assert!(claims(&server).is_empty(), "{name} after write {k}: the claim is released");
        }
    }
}

#[test]
fn a_signal_during_a_write_that_then_fails_still_ends_the_run_as_interrupted() {
    // A regression (audit s29 safety2): SIGTERM came while the VirtualService's routing (write
    // 3) was out; the write then failed (its connection lost, not stored). The rollback and the
    // report were right, but the run exited 1, not 143: a cancelled CI job looked failed.
    let server = shop(2, "StepPaused").start();
    let pause = server.pause(Requests::Writes, 3, Stage::BeforeStore);
    server.reply_fault(Requests::Writes, 3, Stage::BeforeStore, ReplyFault::Lost);
    signalled_while_held(&Test::new().kubeconfig(&server), &["approve", "demo", "--yes"], &pause, "TERM")
        .status(143)
        .stderr_has("error: interrupted (SIGTERM): updating VirtualService shop/demo at http://")
        .stderr_has("  VirtualService shop/demo: rolled back\n  nothing else was written");
    assert!(!approved_with_its_routing(&server));
    assert!(claims(&server).is_empty());
}

#[test]
fn a_signal_while_the_claim_is_renewed_before_a_write_stops_that_write() {
    // A regression (audit s33 writes F1): 20s after the claim was taken it is renewed before
    // the next write; a signal that came during that renewal did not stop the write after it
    // (here the approval, sent, and said to have been finished when the signal came).
    let server = shop(2, "StepPaused").start();
    let routing = server.pause(Requests::Writes, 5, Stage::BeforeStore);
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "demo", "--yes"]);
    assert!(routing.wait_until_held(Duration::from_secs(30)), "write 5 (the DestinationRule's routing) reached");
    std::thread::sleep(Duration::from_secs(21));
    let renewal = server.pause(Requests::Matching(Rule::new(["update"]).resources(["leases"])), 1, Stage::BeforeStore);
    routing.release();
    assert!(renewal.wait_until_held(Duration::from_secs(30)), "the claim is renewed before the approval");
    child.first_signal("INT");
    renewal.release();
    let out = child.finish().status(130).stderr_has("no new write was started");
    assert!(!out.stderr.contains("which was finished"), "{}", out.stderr);
    assert!(!approved_with_its_routing(&server), "{}", out.stderr);
    assert!(!server.writes().iter().any(|w| w.path.ends_with("/status")), "no approval was sent");
    assert!(claims(&server).is_empty(), "the claim is released");
}

#[test]
fn restore_signalled_after_each_write_rolls_back_or_finishes() {
    for (name, code) in [("INT", 130), ("TERM", 143)] {
        for k in 1..=RESTORE_WRITES {
            let server = routed();
            let routed_vs = vs(&server);
            let out = signalled_after_write(&server, &["restore", "demo", "--yes"], k, name);
            assert_eq!(out.status, code, "{name} after write {k}\n{}\n{}", out.stdout, out.stderr);
            // The objects are written 2nd and 3rd: after the 2nd, the VirtualService is rolled
            // back; from the 3rd on, the restore had finished.
            if k == 2 {
                assert!(out.stderr.contains("VirtualService shop/demo: rolled back"), "{}", out.stderr);
                assert_eq!(vs(&server)["spec"], routed_vs["spec"], "{name} after write {k}");
            } else if k >= 3 {
                assert_eq!(vs(&server)["spec"], virtual_service()["spec"], "{name} after write {k}");
                assert_eq!(dr(&server)["spec"], destination_rule()["spec"]);
            } else {
                assert!(out.stderr.contains("nothing was written"), "{}", out.stderr);
            }
            assert!(claims(&server).is_empty(), "{name} after write {k}");
        }
    }
}

/// The run of `args`, given `signal` once `held` holds its request, which is then let go.
fn signalled_while_held(test: &Test, args: &[&str], held: &Pause, signal: &str) -> Output {
    let child = test.spawn(args);
    assert!(held.wait_until_held(Duration::from_secs(30)), "the request is held");
    child.first_signal(signal);
    held.release();
    child.finish_within(Duration::from_secs(60))
}

/// `approve demo --yes`, stopped by two SIGINTs once `held` holds its request, and how long
/// it took to stop after them.
fn approve_interrupted_twice(test: &Test, held: &Pause) -> (Output, Duration) {
    let child = test.spawn(&["approve", "demo", "--yes"]);
    assert!(held.wait_until_held(Duration::from_secs(30)), "the request is held");
    child.first_signal("INT");
    child.signal("INT");
    let started = Instant::now();
    let out = child.finish();
    (out, started.elapsed())
}

#[test]
fn a_refusal_after_a_signal_ends_the_run_as_interrupted() {
    // SIGHUP while the Rollout is read, then a guard refuses (the step is not the one expected):
    // the exit status is the signal's, as a hang-up that ends the question as a refusal would be.
    let server = shop(1, "StepPaused").start();
    let read = server.pause(Requests::Matching(Rule::new(["get"]).resources(["rollouts"])), 1, Stage::BeforeStore);
    let test = Test::new().kubeconfig(&server);
    signalled_while_held(&test, &["approve", "demo", "--yes", "--expect-step", "2"], &read, "HUP").status(129).stderr_has(
        "interrupted (SIGHUP): rollouts.rollouts.kruise.io \"demo\" is at step 1/3, not at step 2 (--expect-step)\n  nothing was written",
    );
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn a_second_sigint_stops_at_once_naming_what_may_be_half_written() {
    let server = shop(2, "StepPaused").start();
    // Hold the VirtualService's second write (its routing) before it is stored.
    let pause = server.pause(Requests::Writes, 3, Stage::BeforeStore);
    let (out, elapsed) = approve_interrupted_twice(&Test::new().kubeconfig(&server), &pause);
    assert!(elapsed < Duration::from_secs(5), "stopped at once: {elapsed:?}");
    let out = out
        .status(130)
        .stderr_has("stopped at once by a second signal")
        // Its first write (the original stored) landed; the one out may or may not have.
        .stderr_has(
            "VirtualService shop/demo: written and NOT rolled back (the second signal stopped the run first); a later write of it may or may not be written (its request was out) (its state before this run: ",
        )
        // The way to find out where the objects stand is the last line, after the claim left.
        .stderr_has("  nothing else was written\n  the claim on Rollout shop/demo is left to expire (120s after its last renewal), or `kubectl rollout-lua release-claim demo -n shop` releases it\n  `kubectl rollout-lua restore --from-backup FILE` puts an object not rolled back as its backup FILE holds it, once the claim above is released\n  `kubectl rollout-lua status` shows where each object now stands against its Rollout's steps\n");
    assert!(out.stderr.ends_with("against its Rollout's steps\n"), "{}", out.stderr);
    pause.release();
}

#[test]
fn a_404_for_the_path_not_the_object_is_not_taken_for_a_deletion() {
    // A discovery trial: a version no longer served answers a write 404 (`the server could not
    // find the requested resource`), which was reported as the object deleted by someone else.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    server.storm(Requests::Matching(Rule::new(["update"]).resources(["destinationrules"])), Some(1), 404, None);
    let out = test
        .run_args(["approve", "demo", "--yes"])
        .status(1)
        .stderr_has("the server could not find the requested resource (404 NotFound)")
        .stderr_has("  VirtualService shop/demo: rolled back\n");
    assert!(!out.stderr.contains("deleted by someone else"), "{}", out.stderr);
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn a_report_stopped_at_once_lists_the_objects_in_the_order_they_were_written() {
    // The VirtualService is written (writes 2 and 3), then the DestinationRule's write (4) is
    // held and two SIGINTs stop the run: the object in flight comes after the one written.
    let server = shop(2, "StepPaused").start();
    let pause = server.pause(Requests::Writes, 4, Stage::BeforeStore);
    let out = approve_interrupted_twice(&Test::new().kubeconfig(&server), &pause).0.status(130);
    let at = |line: &str| out.stderr.find(line).unwrap_or_else(|| panic!("{line:?} in {}", out.stderr));
    // A backups trial: written and left so, it was said `written` only, without the way back.
    let written = at(
        "\n  VirtualService shop/demo: written and NOT rolled back (the second signal stopped the run first) (its state before this run: ",
    );
    let in_flight = at("\n  DestinationRule shop/demo: may or may not be written (its request was out)");
    let way_back = at(
        "\n  `kubectl rollout-lua restore --from-backup FILE` puts an object not rolled back as its backup FILE holds it, once the claim above is released\n",
    );
    assert!(written < in_flight && in_flight < way_back, "{}", out.stderr);
    pause.release();
}

#[test]
fn a_second_sigint_during_the_rollback_stops_at_once_naming_what_may_be_half_rolled_back() {
    let server = shop(2, "StepPaused").start();
    // The VirtualService is routed (write 3); SIGINT comes while its reply is held, so the run
    // rolls it back: the rollback (write 4) is held too, and a second SIGINT comes.
    let routed = server.pause(Requests::Writes, 3, Stage::AfterStore);
    let rollback = server.pause(Requests::Writes, 4, Stage::BeforeStore);
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "demo", "--yes"]);
    assert!(routed.wait_until_held(Duration::from_secs(30)));
    child.first_signal("INT");
    routed.release();
    assert!(rollback.wait_until_held(Duration::from_secs(30)), "the rollback is sent");
    child.signal("INT");
    let started = Instant::now();
    let out = child.finish();
    assert!(started.elapsed() < Duration::from_secs(5), "stopped at once: {:?}", started.elapsed());
    out.status(130)
        .stderr_has("stopped at once by a second signal while rolling back after SIGINT: no new write was started")
        .stderr_has("VirtualService shop/demo: may or may not be rolled back (its rollback was out) (its state before this run: ")
        .stderr_has("the claim on Rollout shop/demo is left to expire")
        // The undo may not have landed: its backup is the way back, once the claim is released
        // (a restore refuses while it is held).
        .stderr_has("\n  `kubectl rollout-lua restore --from-backup FILE` puts an object not rolled back as its backup FILE holds it, once the claim above is released\n");
    assert_eq!(claims(&server).len(), 1, "the claim is left to expire");
    rollback.release();
}

#[test]
fn a_second_signal_during_a_rollback_against_a_silent_server_still_names_the_claim_left() {
    // A regression of the review: once the server had left two requests unanswered, the claims
    // were dropped for the release not sent, even when a second signal had stopped the run,
    // whose report then did not say the claim was left. From write 3 on nothing is answered;
    // both signals come while the rollback's undo is out.
    let server = shop(2, "StepPaused").start();
    server.hang_from_write(3);
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "demo", "--yes", "--request-timeout", "5s"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while unanswered(&server).len() < 3 {
        assert!(Instant::now() < deadline, "the undo is sent: {:#?}", server.requests());
        std::thread::sleep(Duration::from_millis(50));
    }
    child.first_signal("INT");
    child.signal("INT");
    child
        .finish()
        .status(130)
        .stderr_has("stopped at once by a second signal while rolling back")
        .stderr_has("the claim on Rollout shop/demo is left to expire");
}

#[test]
fn a_signal_during_the_rollback_of_a_failure_lets_it_finish_and_keeps_the_failures_exit_status() {
    // The DestinationRule's first write is refused (422); SIGTERM comes while the rollback's
    // undo of the VirtualService (its third update) is out: the rollback finishes, and the run
    // ends as the failure it was, exit 1, as the user guide says.
    let server = shop(2, "StepPaused").start();
    server.storm(Requests::Matching(Rule::new(["update"]).resources(["destinationrules"])), Some(1), 422, None);
    let undo = server.pause(vs_updates(), 3, Stage::BeforeStore);
    let test = Test::new().kubeconfig(&server);
    let out = signalled_while_held(&test, &["approve", "demo", "--yes"], &undo, "TERM")
        .status(1)
        .stderr_has("SIGTERM received: no new write of the plan starts")
        .stderr_has("  VirtualService shop/demo: rolled back");
    assert!(!out.stderr.contains("interrupted"), "{}", out.stderr);
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    assert!(claims(&server).is_empty());
}

/// `approve demo --yes` with the `k`-th VirtualService update held, its status written by
/// "Istio" meanwhile, then dropped unstored, its reply lost (`fail_dr`: the DestinationRule's
/// first update refused, so the run rolls back).
fn approve_with_a_vs_update_lost_unstored_under_a_status_write(k: usize, fail_dr: bool) -> (FakeHandle, Output) {
    let server = shop(2, "StepPaused").start();
    if fail_dr {
        let dr_updates = Requests::Matching(Rule::new(["update"]).resources(["destinationrules"]));
        server.storm(dr_updates, Some(1), 422, None);
    }
    let held = server.pause(vs_updates(), k, Stage::BeforeStore);
    server.reply_fault(vs_updates(), k, Stage::BeforeStore, ReplyFault::Lost);
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "demo", "--yes"]);
    assert!(held.wait_until_held(Duration::from_secs(30)), "the update is sent");
    let status = json!({"status": {"observedGeneration": 1}});
    server.patch_object(VIRTUAL_SERVICE.group, VIRTUAL_SERVICE.plural, NAMESPACE, "demo", &status);
    held.release();
    let out = child.finish();
    (server, out)
}

#[test]
fn an_approval_lost_unstored_while_the_controller_wrote_the_status_is_made_again() {
    // A red-team trial: the approval's reply lost, it not stored, and the controller's status
    // message written meanwhile: the approval was said to be one that may still land (it was
    // sent conditional on the version the message moved on from, so it never can).
    let server = shop(2, "StepPaused").start();
    let approval = || Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]));
    let held = server.pause(approval(), 1, Stage::BeforeStore);
    server.reply_fault(approval(), 1, Stage::BeforeStore, ReplyFault::Lost);
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "demo", "--yes"]);
    assert!(held.wait_until_held(Duration::from_secs(30)), "the approval is sent");
    let message = json!({"status": {"message": "the controller's word"}});
    server.patch_object("rollouts.kruise.io", "rollouts", NAMESPACE, "demo", &message);
    held.release();
    let out = child
        .finish()
        .success()
        .stderr_has("Rollout shop/demo: the reply was lost; a fresh read shows this write not applied, and only the object's status changed meanwhile\n")
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)");
    assert!(!out.stderr.contains("may still"), "{}", out.stderr);
    assert!(approved_with_its_routing(&server));
}

#[test]
fn a_write_lost_unstored_while_a_gateway_controller_wrote_the_status_is_made_again() {
    // A red-team trial: the fresh read after a lost reply found the resourceVersion moved by a
    // status write alone (Istio's, an ingress controller's), and took that for someone else's
    // change: the run stopped with an empty diff of "their" edit, and a rollback left this run's
    // own routing in place, said to be someone else's, without the way back. The generation
    // tells a spec write that was not applied.
    let (server, out) = approve_with_a_vs_update_lost_unstored_under_a_status_write(2, false);
    let out = out
        .success()
        .stderr_has("VirtualService shop/demo: the reply was lost; a fresh read shows this write not applied, and only the object's status changed meanwhile\n")
        .stderr_has("VirtualService shop/demo: nobody changed what this write is about; writing it again at the new resourceVersion\n");
    assert!(!out.stderr.contains("someone"), "{}", out.stderr);
    assert!(approved_with_its_routing(&server));
    assert_eq!(vs(&server)["status"]["observedGeneration"], 1, "the status write is kept");

    // The rollback's undo of the routing, the same.
    let (server, out) = approve_with_a_vs_update_lost_unstored_under_a_status_write(3, true);
    let out = out
        .status(1)
        .stderr_has("VirtualService shop/demo while rolling back: the reply was lost; a fresh read shows the rollback not applied, and only the object's status changed meanwhile; rolling it back again at the new resourceVersion\n")
        .stderr_has("  VirtualService shop/demo: rolled back\n");
    assert!(!out.stderr.contains("someone"), "{}", out.stderr);
    assert!(!approved_with_its_routing(&server), "nothing of the run is left");
    assert!(claims(&server).is_empty());
}

#[test]
fn a_rollout_naming_one_object_twice_is_refused_before_any_write() {
    // A red-team trial: a VirtualService named under two apiVersions was written four times at
    // step 1, the third write putting its original spec back between the two routed ones.
    let mut twice = rollout(2, "StepPaused");
    let refs = &mut twice["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"];
    refs.as_array_mut()
        .unwrap()
        .push(json!({"apiVersion": "networking.istio.io/v1alpha3", "kind": "VirtualService", "name": "demo"}));
    let server = serving(twice).start();
    let test = Test::new().kubeconfig(&server);
    let named = "VirtualService shop/demo is named twice among the customNetworkRefs of Rollout shop/demo (as networking.istio.io/v1beta1 and as networking.istio.io/v1alpha3)";
    test.run_args(["plan", "demo"])
        .success()
        .stdout_has(&format!("warning: {named}: a step is planned, and written, once for each"));
    approve_refused_forced_or_not(&test, &server, &format!("{named}: "));
}

#[test]
fn two_selected_rollouts_that_write_one_object_are_refused_before_any_write() {
    // A regression: each Rollout's plan was made from the same read and written in turn, the
    // second's writes over the first's routing.
    let mut second = rollout(2, "StepPaused");
    second["metadata"]["name"] = json!("demo2");
    second["spec"]["workloadRef"]["name"] = json!("demo2");
    second["spec"]["strategy"]["canary"]["trafficRoutings"][0]["service"] = json!("demo2");
    let mut workload = deployment(4);
    workload["metadata"]["name"] = json!("demo2");
    let server = shop(2, "StepPaused").object(second).object(workload).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "demo2", "--yes"]).status(3).stderr_has(
        "error: nothing was written: Rollouts demo and demo2 both plan writes to VirtualService shop/demo; in one run the second would write over the first's routing: approve each in a run of its own",
    );
    assert_eq!(writes(&server), Vec::<String>::new());
    assert!(!approved_with_its_routing(&server));
    assert!(claims(&server).is_empty());
    // status warns of it, as plan does (a multi-Rollout trial: the object was only "drifted"
    // for one of them, without a word).
    test.run_args(["status"])
        .success()
        .stdout_has("  warning: VirtualService shop/demo is also routed by Rollout shop/demo2: the controller reconciles each on its own")
        .stdout_has("  warning: VirtualService shop/demo is also routed by Rollout shop/demo: the controller reconciles each on its own");
}

#[test]
fn each_selected_rollouts_refusal_is_said_in_one_run() {
    // A multi-Rollout trial: the guards stopped at the first Rollout refused, so a run named one
    // refusal, and the next run the next.
    let second = demo2("StepUpgrade", "demo2");
    let server = shop(2, "StepUpgrade").object(second).object(virtual_service_named("demo2")).start();
    let test = Test::new().kubeconfig(&server);
    let out = test.run_args(["approve", "demo", "demo2", "--yes"]).status(3).stderr_has(
        "error: rollouts.rollouts.kruise.io \"demo\" does not allow to approve, because current canary state is not 'StepPaused' (it is StepUpgrade)\nrollouts.rollouts.kruise.io \"demo2\" does not allow to approve, because current canary state is not 'StepPaused' (it is StepUpgrade)\n",
    );
    assert_eq!(writes(&server), Vec::<String>::new(), "{}", out.stderr);
    assert!(claims(&server).is_empty());
    // One refused, the other not: nothing is written either.
    server.put_object(rollout(2, "StepPaused"));
    test.run_args(["approve", "demo", "demo2", "--yes"])
        .status(3)
        .stderr_has("error: rollouts.rollouts.kruise.io \"demo2\" does not allow to approve, because current canary state is not 'StepPaused' (it is StepUpgrade)\n");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn a_second_sigint_while_the_claim_is_taken_says_it_may_be_left() {
    // A regression: the Lease was created (its reply held), a second SIGINT stopped the run,
    // and the claim left behind was not named.
    let server = shop(2, "StepPaused").start();
    let create = server.pause(Requests::Matching(Rule::new(["create"]).resources(["leases"])), 1, Stage::AfterStore);
    let test = Test::new().kubeconfig(&server);
    approve_interrupted_twice(&test, &create)
        .0
        .status(130)
        .stderr_has("stopped at once by a second signal\n  nothing was written\n  the claim on Rollout shop/demo may have been taken (its request was out); if so, it is left to expire (120s after its last renewal), or `kubectl rollout-lua release-claim demo -n shop` releases it");
    assert_eq!(claims(&server).len(), 1, "the Lease is there");
    create.release();
    test.run_args(["release-claim", "demo", "--yes"]).success();
    assert!(claims(&server).is_empty());
}

#[test]
fn a_signal_while_the_claim_is_taken_stops_before_anything_is_read_or_planned() {
    // A regression (trial 8): a first SIGINT while the Lease's create was out let the run read
    // the objects and print the whole plan before it stopped at the first write.
    for command in [&["approve", "demo", "--yes"][..], &["restore", "demo", "--yes"]] {
        let server = shop(2, "StepPaused").start();
        let create =
            server.pause(Requests::Matching(Rule::new(["create"]).resources(["leases"])), 1, Stage::AfterStore);
        let test = Test::new().kubeconfig(&server);
        let child = test.spawn(command);
        assert!(create.wait_until_held(Duration::from_secs(30)), "{command:?}: the claim's create is held");
        child.first_signal("INT");
        create.release();
        let out = child.finish().status(130).stderr_has("no new write was started\n  nothing was written\n");
        assert_eq!(out.stdout, "", "{command:?}: no plan is printed");
        let routing_read = server.requests().into_iter().find(|r| r.path.contains("/virtualservices"));
        assert!(routing_read.is_none(), "{command:?}: the objects are not read: {routing_read:?}");
        assert_eq!(writes(&server), Vec::<String>::new());
        assert!(claims(&server).is_empty(), "{command:?}: the claim is released");
    }
}

#[test]
fn a_second_sigint_while_releasing_the_claim_stops_at_once_and_says_it_may_be_released() {
    let server = shop(2, "StepPaused").start();
    let release = server.pause(Requests::Matching(Rule::new(["delete"]).resources(["leases"])), 1, Stage::BeforeStore);
    let out = approve_interrupted_twice(&Test::new().kubeconfig(&server), &release).0.status(130);
    out.stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)")
        .stderr_has("stopped at once by a second signal while releasing the claims")
        .stderr_has("VirtualService shop/demo: written and kept: Rollout demo is approved with it")
        // Its delete was out: it may have landed (trial 9: it said "is left to expire").
        .stderr_has(
            "the claim on Rollout shop/demo may have been released (its delete was out); if not, it is left to expire",
        );
    assert!(approved_with_its_routing(&server));
    release.release();
}

/// `approve demo` stopped by two SIGINTs while strace (attached while `held` is held) holds the
/// run's next file removal, one under the VirtualService's backups, as a stalled home folder
/// would: the run says how it stopped within 5 s.
fn interrupted_in_a_stalled_removal(server: &FakeHandle, held: &Pause) -> Option<Output> {
    let test = Test::new().kubeconfig(server);
    let child = test.spawn(&["approve", "demo", "--yes"]);
    assert!(held.wait_until_held(Duration::from_secs(30)), "the request is held");
    let removals = match child.stall_removals(&test.path("strace")) {
        Ok(removals) => removals,
        Err(why) => {
            held.release();
            crate::support::skip(&why);
            return None;
        }
    };
    held.release();
    removals.wait_until_held("/backups/fake/shop/VirtualService/demo/");
    child.first_signal("INT");
    child.signal("INT");
    let started = Instant::now();
    child.wait_for_stderr("error: interrupted (SIGINT): stopped at once by a second signal");
    assert!(started.elapsed() < Duration::from_secs(5), "stopped at once: {:?}", started.elapsed());
    // The removal's thread, held by strace, holds the end of the process until strace ends.
    drop(removals);
    Some(child.finish_within(Duration::from_secs(10)))
}

#[test]
fn a_second_sigint_while_a_backup_is_saved_stops_at_once() {
    // A regression: the save ran as a `spawn_blocking` task, which the runtime waits for when
    // dropped: a stalled save (here the removal of its temporary file) kept the stopped run from
    // saying its report and ending.
    let server = shop(2, "StepPaused").start();
    let claim = server.pause(Requests::Matching(Rule::new(["create"]).resources(["leases"])), 1, Stage::BeforeStore);
    let Some(out) = interrupted_in_a_stalled_removal(&server, &claim) else { return };
    out.status(130)
        .stderr_has("stopped at once by a second signal\n  nothing was written\n")
        .stderr_has("the claim on Rollout shop/demo is left to expire")
        // The save goes on after the run: its folder is named.
        .stderr_has("  a backup of VirtualService shop/demo may be left in ")
        .stderr_has("/kubectl-rollout-lua/backups/fake/shop/VirtualService/demo (it was being saved): it holds the object as it still is\n");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn a_first_sigint_while_a_backup_is_saved_stops_the_write_it_precedes() {
    // A review's finding: the signal was said to start no new write, and the write the backup
    // was saved for was sent all the same (then rolled back at the next one).
    let server = shop(2, "StepPaused").start();
    let claim = server.pause(Requests::Matching(Rule::new(["create"]).resources(["leases"])), 1, Stage::BeforeStore);
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "demo", "--yes"]);
    assert!(claim.wait_until_held(Duration::from_secs(30)), "the claim is held");
    let removals = match child.stall_removals(&test.path("strace")) {
        Ok(removals) => removals,
        Err(why) => {
            claim.release();
            return crate::support::skip(&why);
        }
    };
    claim.release();
    removals.wait_until_held("/backups/fake/shop/VirtualService/demo/");
    child.first_signal("INT");
    drop(removals);
    child
        .finish_within(Duration::from_secs(30))
        .status(130)
        .stderr_has("error: interrupted (SIGINT): no new write was started\n  nothing was written\n");
    assert_eq!(writes(&server), Vec::<String>::new());
    assert!(claims(&server).is_empty(), "released");
}

#[test]
fn a_second_sigint_while_removing_an_unused_backup_stops_at_once_and_says_the_claim_is_left() {
    // The VirtualService's backup is saved, then its first write refused (422): nothing was
    // written to it, so the run removes the backup, and both signals come during that removal
    // (strace attached while the write is held: after the save). A regression as for the save.
    let server = shop(2, "StepPaused").start();
    let update = vs_updates();
    let refused = server.pause(update.clone(), 1, Stage::BeforeStore);
    server.storm(update, Some(1), 422, None);
    let Some(out) = interrupted_in_a_stalled_removal(&server, &refused) else { return };
    out.status(130)
        .stderr_has("stopped at once by a second signal while removing the backups it saved of objects it then wrote nothing to after: updating VirtualService shop/demo: ")
        .stderr_has("\n  nothing was written\n")
        .stderr_has("the claim on Rollout shop/demo is left to expire")
        // The backup whose removal was out is named (review L8).
        .stderr_has(", a backup of VirtualService shop/demo this run then wrote nothing to, may be left (its removal was out): it holds the object as it still is\n");
    assert_eq!(claims(&server).len(), 1, "the claim is left to expire");
    assert_eq!(writes(&server), ["PUT /apis/networking.istio.io/v1beta1/namespaces/shop/virtualservices/demo"]);
}

#[test]
fn a_second_writer_between_writes_is_never_overwritten() {
    let server = shop(2, "StepPaused").start();
    // Right after the VirtualService's original is stored (write 2), someone edits its spec.
    someone_edits(&server, When::After(2), VIRTUAL_SERVICE, |vs| {
        vs["spec"]["hosts"] = json!(["demo", "edited.example.com"])
    });
    approve_demo(&server)
        .status(3)
        .stderr_has(
            "VirtualService shop/demo was changed by someone else while this run wrote it; not overwriting their edit",
        )
        .stderr_has("+  - edited.example.com")
        // Its first write (the original stored) stays: undoing it would undo their edit too.
        .stderr_has("VirtualService shop/demo: NOT rolled back: someone changed it since this run wrote it");
    assert_eq!(vs(&server)["spec"]["hosts"], json!(["demo", "edited.example.com"]), "their edit stays");
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
    assert!(claims(&server).is_empty());
}

fn approvals() -> Requests {
    Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]))
}

/// `approve demo --yes`, its approval held and then refused (403): `meanwhile` runs while it is
/// held, before the rollback.
fn approve_refused_after(server: &FakeHandle, meanwhile: impl FnOnce()) -> Output {
    let held = server.pause(approvals(), 1, Stage::BeforeStore);
    server.storm(approvals(), Some(1), 403, None);
    let test = Test::new().kubeconfig(server);
    let child = test.spawn(&["approve", "demo", "--yes"]);
    assert!(held.wait_until_held(Duration::from_secs(30)), "the approval is sent");
    meanwhile();
    held.release();
    child.finish()
}

/// `approve demo --yes`, its approval held while `meanwhile` runs, then let go.
fn approve_held_while(server: &FakeHandle, meanwhile: impl FnOnce()) -> Output {
    let held = server.pause(approvals(), 1, Stage::BeforeStore);
    let test = Test::new().kubeconfig(server);
    let child = test.spawn(&["approve", "demo", "--yes"]);
    assert!(held.wait_until_held(Duration::from_secs(30)), "the approval is sent");
    meanwhile();
    held.release();
    child.finish()
}

/// The routing written for a Rollout that was then deleted is rolled back: the objects are as
/// they were, and the claim is released.
#[track_caller]
fn rolled_back_for_a_deleted_rollout(server: &FakeHandle, out: Output) {
    let out = out
        .stderr_has("  VirtualService shop/demo: rolled back")
        .stderr_has("  DestinationRule shop/demo: rolled back");
    assert!(!out.stderr.contains("kept"), "{}", out.stderr);
    assert_eq!(vs(server)["spec"], virtual_service()["spec"]);
    assert!(vs(server)["metadata"]["annotations"].is_null(), "no stored original left behind");
    assert_eq!(dr(server)["spec"], destination_rule()["spec"]);
    assert!(claims(server).is_empty());
}

#[test]
fn the_routing_of_a_rollout_deleted_or_made_again_before_its_approval_is_rolled_back() {
    // A regression: the approval of a Rollout deleted meanwhile was answered 404, and its
    // routing kept ("no longer paused … (approved?)"): routing that no Rollout, and no
    // controller, would ever restore.
    let server = shop(2, "StepPaused").start();
    let out = approve_held_while(&server, || {
        server.delete_object("rollouts.kruise.io", "rollouts", NAMESPACE, "demo").expect("the Rollout");
    });
    // Someone else's doing, as a Rollout made again is: a refusal (exit 3).
    let out = out.status(3).stderr_has("Rollout shop/demo was deleted by someone else while this run wrote it\n").stderr_has(
        "Rollout demo was deleted while this run approved it: no Rollout was approved, so the routing written for it is rolled back",
    );
    rolled_back_for_a_deleted_rollout(&server, out);
    // Deleted and made again (a GitOps tool's replace), waiting at the same step: the approval,
    // conditional on the old Rollout's version, is refused, and the new Rollout is not approved.
    let made_again = |store: &mut fake_apiserver::Store| {
        let mut old = store.delete("rollouts.kruise.io", "rollouts", NAMESPACE, "demo").expect("the Rollout");
        for field in ["uid", "resourceVersion", "creationTimestamp"] {
            old["metadata"].as_object_mut().unwrap().remove(field);
        }
        store.put(old);
    };
    let made_again_message = "Rollout demo was deleted and made again (another uid) while this run approved it: no Rollout was approved, so the routing written for it is rolled back";
    let server = shop(2, "StepPaused").start();
    server.before_write(APPROVE_WRITES - 1, made_again);
    let out = approve_demo(&server).status(3).stderr_has(made_again_message);
    rolled_back_for_a_deleted_rollout(&server, out);
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
    // The same, the approval's reply lost (its outcome unknown): the fresh read finds a Rollout
    // waiting at the same step, which is not this approval's "not applied yet" (that may still
    // land) but another Rollout, which it never reaches.
    let server = shop(2, "StepPaused").start();
    server.before_write(APPROVE_WRITES - 1, made_again);
    server.reply_fault(approvals(), 1, Stage::AfterStore, ReplyFault::Lost);
    let out = approve_demo(&server).status(3).stderr_has(made_again_message);
    assert!(!out.stderr.contains("may still"), "{}", out.stderr);
    rolled_back_for_a_deleted_rollout(&server, out);
}

#[test]
fn a_refused_approval_whose_rollout_cannot_be_read_again_keeps_the_routing_and_says_why() {
    // A regression: the failed read was taken as "no longer paused (approved?)".
    let server = shop(2, "StepPaused").start();
    let rollout_reads = || Requests::Matching(Rule::new(["get"]).resources(["rollouts"]));
    let out = approve_refused_after(&server, || server.storm(rollout_reads(), None, 403, None));
    let out = out
        .status(1)
        .stderr_has("Rollout demo could not be read again after that (")
        .stderr_has("`kubectl rollout-lua status demo -n shop` shows where it stands")
        .stderr_has("  VirtualService shop/demo: written and kept: whether Rollout demo still waits at step 2/3 is not known, so its routing stays");
    assert!(!out.stderr.contains("approved?"), "{}", out.stderr);
    server.clear_faults();
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
    assert!(vs(&server)["metadata"]["annotations"].is_object(), "the routing stays");
}

#[test]
fn a_signal_during_the_last_routing_write_then_an_unread_rollout_names_both_ways_on() {
    // An interrupt sweep: SIGINT while the DestinationRule's routing was out, then the fresh
    // read of the Rollout lost: the routing stayed for a Rollout still waiting at its step, and
    // the report named no way back.
    let run = |way_on: &dyn Fn(&Test, &Output)| {
        let server = shop(2, "StepPaused").start();
        let (vs_before, dr_before) = (vs(&server), dr(&server));
        let routing = server.pause(Requests::Writes, APPROVE_WRITES - 2, Stage::BeforeStore);
        let test = Test::new().kubeconfig(&server);
        let child = test.spawn(&["approve", "demo", "--yes"]);
        assert!(routing.wait_until_held(Duration::from_secs(30)), "the DestinationRule's routing is sent");
        let rollout_reads = Requests::Matching(Rule::new(["get"]).resources(["rollouts"]));
        server.reply_fault(rollout_reads, 1, Stage::AfterStore, ReplyFault::Garbled);
        child.first_signal("INT");
        routing.release();
        let out = child
            .finish()
            .status(130)
            .stderr_has("error: interrupted (SIGINT): no new write was started\nRollout demo could not be read again after that (")
            .stderr_has("`kubectl rollout-lua status demo -n shop` shows where it stands; if the Rollout still waits at step 2/3, `kubectl rollout-lua approve demo -n shop --expect-step 2` approves it (its routing is already written), or, to undo this run's writes, `kubectl rollout-lua restore --from-backup FILE` puts back each object whose line below names its state before this run (FILE), and `kubectl delete` removes one this run made\n")
            .stderr_has("  DestinationRule shop/demo: written and kept: whether Rollout demo still waits at step 2/3 is not known, so its routing stays (its state before this run: ");
        assert!(claims(&server).is_empty(), "{}", out.stderr);
        way_on(&test, &out);
        (server, vs_before, dr_before)
    };
    // Back: each backup named puts its object back as it was.
    let (server, vs_before, dr_before) = run(&|test, out| {
        for line in out.stderr.lines().filter(|l| l.contains("written and kept")) {
            let (_, file) = line.rsplit_once("(its state before this run: ").expect(line);
            test.run_args(["restore", "--from-backup", file.trim_end_matches(')'), "--yes"]).success();
        }
    });
    assert_eq!(vs(&server)["spec"], vs_before["spec"]);
    assert_eq!(dr(&server)["spec"], dr_before["spec"]);
    assert!(vs(&server)["metadata"]["annotations"].is_null(), "no stored original left behind");
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
    // On: the approve named finishes the step, its routing already written.
    let (server, ..) = run(&|test, _| {
        test.run_args(["approve", "demo", "-n", "shop", "--expect-step", "2", "--yes"]).success();
    });
    assert!(approved_with_its_routing(&server));
}

#[test]
fn the_routing_of_a_rollout_deleted_while_the_question_waits_is_rolled_back() {
    if !crate::support::terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let mut session = test.on_terminal_session(&["approve", "demo"], None);
    session.wait_for("Only 'yes' goes ahead: ");
    server.delete_object("rollouts.kruise.io", "rollouts", NAMESPACE, "demo").expect("the Rollout");
    session.type_keys(b"yes\n");
    let (status, screen) = session.finish();
    assert_eq!(status.and_then(|s| s.code()), Some(3), "{screen}");
    let stderr = screen.replace("\r\n", "\n");
    let out = Output { status: 3, stdout: String::new(), stderr };
    rolled_back_for_a_deleted_rollout(&server, out.stderr_has("Rollout demo was deleted while this run approved it"));
}

#[test]
fn a_lost_write_read_back_with_someone_elses_finalizer_is_kept_and_named() {
    // A regression: the VirtualService's routing (write 3) is stored, its reply lost, and
    // someone adds a finalizer and an owner reference before the run reads it back. The read
    // counted as this run's write; the approval was refused, and the rollback put the whole
    // object from before the run back, wiping both, and said only "rolled back".
    let server = shop(2, "StepPaused").start();
    server.reply_fault(Requests::Writes, 3, Stage::AfterStore, ReplyFault::Lost);
    someone_edits(&server, When::After(3), VIRTUAL_SERVICE, |vs| {
        vs["metadata"]["finalizers"] = json!(["example.com/protect"]);
        vs["metadata"]["ownerReferences"] =
            json!([{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "name": "shop", "uid": "u-app"}]);
    });
    server.storm(approvals(), Some(1), 403, None);
    approve_demo(&server)
        .status(1)
        .stderr_has("a fresh read shows someone else changed VirtualService shop/demo meanwhile, perhaps after this run's write landed; it is left as it is:")
        .stderr_has("+  finalizers:\n+  - example.com/protect\n")
        .stderr_has("  VirtualService shop/demo: may have been written by this run before someone else changed it (its state before this run: ")
        .stderr_has("  nothing else was written");
    let now = vs(&server);
    assert_eq!(now["metadata"]["finalizers"], json!(["example.com/protect"]), "their finalizer stays");
    assert_eq!(now["metadata"]["ownerReferences"][0]["kind"], "Application");
    assert_eq!(now["spec"]["http"][0]["route"][1]["weight"], 50, "left as it is");
    assert!(
        writes(&server).iter().all(|w| !w.contains("destinationrules")),
        "the run stops there: {:?}",
        writes(&server)
    );
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
    assert!(claims(&server).is_empty());
}

#[test]
fn a_rollback_puts_the_routing_back_and_keeps_what_someone_else_added_beside_it() {
    // Someone adds a finalizer right after the VirtualService's routing (write 3); the approval
    // is refused. A regression: the rollback gave up on the conflict that made ("NOT rolled
    // back"); made again over the object as it is, the undo of its two writes (routing, then
    // the stored original) puts back only what they changed.
    let server = shop(2, "StepPaused").start();
    someone_edits(&server, When::After(3), VIRTUAL_SERVICE, |vs| {
        vs["metadata"]["finalizers"] = json!(["example.com/protect"]);
    });
    server.storm(approvals(), Some(1), 403, None);
    approve_demo(&server)
        .status(1)
        .stderr_has("conflict on VirtualService shop/demo while rolling back: nobody changed what this run wrote; rolling it back again at the new resourceVersion")
        .stderr_has("  VirtualService shop/demo: rolled back\n  DestinationRule shop/demo: rolled back\n  nothing else was written");
    let now = vs(&server);
    assert_eq!((&now["spec"], &now["metadata"]["annotations"]), (&virtual_service()["spec"], &Value::Null));
    assert_eq!(now["metadata"]["finalizers"], json!(["example.com/protect"]), "their finalizer stays");
    assert_eq!(dr(&server)["spec"], destination_rule()["spec"]);
    assert!(!approved_with_its_routing(&server));
    assert!(claims(&server).is_empty());
}

#[test]
fn a_rollback_that_keeps_meeting_conflicts_gives_up_after_a_bounded_number_of_tries() {
    let server = shop(2, "StepPaused").start();
    // The approval (write 6) is refused; while it is held, every later write of the
    // DestinationRule starts to conflict, though nobody changes it.
    approve_refused_after(&server, || {
        server.storm(Requests::Matching(Rule::new(["update"]).resources(["destinationrules"])), None, 409, None);
    })
    .status(1)
    .stderr_has("  DestinationRule shop/demo: could NOT roll back: ")
    .stderr_has("  VirtualService shop/demo: rolled back\n")
    // The way back for the object left as written.
    .stderr_has("  nothing else was written\n  `kubectl rollout-lua restore --from-backup FILE` puts an object not rolled back as its backup FILE holds it");
    let dr_writes = writes(&server).iter().filter(|w| w.contains("/destinationrules/")).count();
    // Its two writes, then its rollback: sent once and again after each of 3 conflicts.
    assert_eq!(dr_writes, 2 + 1 + 3, "{:?}", writes(&server));
    assert!(claims(&server).is_empty());
}

#[test]
fn a_rollback_that_cannot_reach_the_server_says_what_was_not_sent() {
    // The approval is refused; the rollback's first undo (the DestinationRule's routing, its
    // second update) is held, and the server stops meanwhile: that undo's outcome is unknown,
    // but the VirtualService's undo, whose connection is refused, was never sent.
    let server = shop(2, "StepPaused").start();
    let store = server.clone_handle();
    server.storm(approvals(), Some(1), 403, None);
    let undo =
        server.pause(Requests::Matching(Rule::new(["update"]).resources(["destinationrules"])), 3, Stage::BeforeStore);
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "demo", "--yes", "--request-timeout", "3s"]);
    assert!(undo.wait_until_held(Duration::from_secs(30)), "the rollback is sent");
    drop(server);
    let out = child.finish().status(1);
    drop(undo);
    let out = out
        .stderr_has("  DestinationRule shop/demo: may or may not be rolled back (")
        .stderr_has("  VirtualService shop/demo: could NOT roll back: updating VirtualService shop/demo at http://")
        .stderr_has("the connection to the server was refused (os error 111)");
    assert!(!out.stderr.contains("VirtualService shop/demo: may or may not"), "{}", out.stderr);
    assert_eq!(vs(&store)["spec"]["http"][0]["route"][1]["weight"], 50, "routed, as the report says");
}

#[test]
fn an_object_someone_deleted_before_its_rollback_is_left_deleted_without_the_way_back() {
    // The approval is refused and the routing rolled back, but someone deleted the
    // VirtualService meanwhile: its undo gets a 404. Its backup would only make it again, so
    // the report names no `restore --from-backup` for it.
    let server = shop(2, "StepPaused").start();
    let out = approve_refused_after(&server, || {
        server.delete_object("networking.istio.io", "virtualservices", "shop", "demo").unwrap();
    })
    .status(1)
    .stderr_has("  VirtualService shop/demo: NOT rolled back: someone deleted it since this run wrote it (")
    .stderr_has("  DestinationRule shop/demo: rolled back\n");
    assert!(!out.stderr.contains("--from-backup"), "{}", out.stderr);
    assert!(
        server.object("networking.istio.io", "v1beta1", "virtualservices", "shop", "demo").is_none(),
        "left deleted"
    );
    assert!(claims(&server).is_empty());
}

#[test]
fn a_rollback_whose_reply_is_lost_garbled_or_refused_by_a_busy_server_is_resolved_by_reading_again() {
    // The approval (write 6) is refused; the rollback's first request (write 7, the
    // DestinationRule's routing undone) meets the fault.
    for fault in [ReplyFault::Lost, ReplyFault::Garbled] {
        // Stored, its reply lost or garbled: a fresh read shows it rolled back, and the
        // rollback goes on.
        let server = shop(2, "StepPaused").start();
        server.storm(approvals(), Some(1), 403, None);
        server.reply_fault(Requests::Writes, 7, Stage::AfterStore, fault);
        approve_demo(&server)
            .status(1)
            .stderr_has("  VirtualService shop/demo: rolled back\n  DestinationRule shop/demo: rolled back\n");
        assert!(!approved_with_its_routing(&server), "{fault:?}");
        assert!(claims(&server).is_empty());
    }
    // Not stored (lost before it was, or a 503, armed while the approval is held): the
    // DestinationRule is left routed and said so; the rest is rolled back.
    for busy in [false, true] {
        let server = shop(2, "StepPaused").start();
        if !busy {
            server.reply_fault(Requests::Writes, 7, Stage::BeforeStore, ReplyFault::Lost);
        }
        approve_refused_after(&server, || {
            if busy {
                server.storm(
                    Requests::Matching(Rule::new(["update"]).resources(["destinationrules"])),
                    None,
                    503,
                    None,
                );
            }
        })
        .status(1)
        .stderr_has("  VirtualService shop/demo: rolled back\n")
        .stderr_has(&format!(
            "  DestinationRule shop/demo: NOT rolled back when read again, but the server may still apply the rollback ({})",
            if busy { "the server answered 503 ServiceUnavailable" } else { "the reply was lost" }
        ))
        // Left routed, with a backup: the way back, and where to see whether the undo landed.
        .stderr_has("\n  `kubectl rollout-lua restore --from-backup FILE` puts an object not rolled back as its backup FILE holds it\n  `kubectl rollout-lua status` shows where each object now stands");
        assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
        assert_eq!(dr(&server)["spec"]["subsets"][1]["name"], "canary", "busy: {busy}");
        assert!(claims(&server).is_empty());
    }
    // Lost, and the read that would tell answered 503 however often it is retried: each is
    // said in the words of a reply not heard.
    let server = shop(2, "StepPaused").start();
    server.reply_fault(Requests::Writes, 7, Stage::BeforeStore, ReplyFault::Lost);
    approve_refused_after(&server, || {
        server.storm(Requests::Matching(Rule::new(["get"]).resources(["destinationrules"])), None, 503, None);
    })
    .status(1)
    .stderr_has(
        "  DestinationRule shop/demo: may or may not be rolled back (the reply was lost; reading it again: the server answered 503 ServiceUnavailable) (its state before this run: ",
    );
    assert_eq!(dr(&server)["spec"]["subsets"][1]["name"], "canary");
}

#[test]
fn the_claim_is_renewed_while_rolling_back() {
    // A regression: the claim was renewed only before each change, so a run whose rollback
    // came late (a slow approval, then each rollback request up to the request timeout) could
    // hold it past its expiry. The approval is held 21s, then refused: the claim, renewed once
    // 20s have passed since it was written, is renewed before the rollback's first request.
    let server = shop(2, "StepPaused").start();
    approve_refused_after(&server, || std::thread::sleep(Duration::from_secs(21)))
        .status(1)
        .stderr_has("  VirtualService shop/demo: rolled back");
    let written: Vec<String> = server.writes().iter().map(|w| format!("{} {}", w.method, w.path)).collect();
    let at =
        |what: &str| written.iter().position(|w| w.ends_with(what)).unwrap_or_else(|| panic!("{what}: {written:#?}"));
    let (approval, renewal) =
        (at("/rollouts/demo/status"), at("PUT /apis/coordination.k8s.io/v1/namespaces/shop/leases/rollout-lua.demo"));
    let rollback = written.iter().rposition(|w| w.contains("/destinationrules/")).unwrap();
    assert!(approval < renewal && renewal < rollback, "{written:#?}");
    assert!(claims(&server).is_empty());
}

#[test]
fn a_later_steps_write_that_landed_unheard_is_rolled_back_to_the_step_before() {
    // From step 2 of a sequence on, the objects were written (and kept) at step 1: the write of
    // step 2 whose reply and read back were lost is read again before the rollback all the
    // same, and undone to step 1's routing (a regression of the review: only an object with no
    // earlier write was read again).
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let child =
        test.spawn(&["approve", "demo", "--until-step", "2", "--yes", "--request-timeout", "2s", "--timeout", "60s"]);
    child.wait_for_stdout("approved (step 1/3)");
    // Step 2's write of the VirtualService is held, then stored, its reply lost; the read that
    // follows it never answered.
    let held = server.pause(vs_updates(), 1, Stage::BeforeStore);
    server.reply_fault(vs_updates(), 1, Stage::AfterStore, ReplyFault::Lost);
    paused_at_step_2(&server);
    assert!(held.wait_until_held(Duration::from_secs(30)), "step 2's write is sent");
    let vs_reads = Requests::Matching(Rule::new(["get"]).resources(["virtualservices"]));
    server.reply_fault(vs_reads, 1, Stage::BeforeStore, ReplyFault::NeverSent);
    held.release();
    let out = child
        .finish()
        .status(1)
        .stderr_has("reading it again to tell whether it landed failed too")
        .stderr_has("VirtualService shop/demo: written and kept: Rollout demo is approved with it (step 1/3); a later write of it was rolled back");
    assert!(!out.stderr.contains("may or may not be written"), "{}", out.stderr);
    assert_eq!(
        vs(&server)["spec"]["http"][0]["match"],
        json!([{"headers": {"user-agent": {"exact": "pc"}}}]),
        "step 1's routing"
    );
    assert!(
        vs(&server)["spec"]["http"].as_array().unwrap().iter().all(|rule| rule["route"][1].is_null()),
        "no weights"
    );
}

#[test]
fn a_claim_taken_over_while_a_later_question_waits_is_said_so() {
    if !crate::support::terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    // A regression of the review: a claim taken over while `Overwrite their change?` waited,
    // after a write, was reported as the question's `not confirmed`.
    let server = shop(2, "StepPaused").start();
    someone_edits(&server, When::Before(4), DESTINATION_RULE, |dr| {
        dr["metadata"]["annotations"] = json!({"theirs": "1"})
    });
    let test = Test::new().kubeconfig(&server);
    let mut session = test.on_terminal_session(&["approve", "demo"], None);
    session.wait_for("Only 'yes' goes ahead: ");
    session.type_keys(b"yes\n");
    session.wait_for("Overwrite their change? Only 'yes' goes ahead: ");
    server.put_object(lease(&now_micro()));
    let (status, screen) = session.finish();
    assert_eq!(status.and_then(|s| s.code()), Some(3), "{screen}");
    assert!(screen.contains("was taken over by someone else"), "{screen}");
    assert!(!screen.contains("not confirmed"), "{screen}");
    assert_eq!(claims(&server)[0]["spec"]["holderIdentity"], "alice@laptop (pid 42)", "their claim is left alone");
}

#[test]
fn a_failed_renewal_of_the_claim_does_not_stop_the_rollback() {
    // A regression (audit s29 #3): the approval is held 21s, then refused; the renewal the
    // rollback makes first (20s have passed) failed, which stopped the rollback and left the
    // routing of an unapproved step. Each undo is conditional on this run's own write. (A busy
    // server's refusal is tried again while the claim lasts; here the Lease may no longer be
    // written at all.)
    let server = shop(2, "StepPaused").start();
    let renewals = Requests::Matching(Rule::new(["update"]).resources(["leases"]));
    approve_refused_after(&server, || {
        std::thread::sleep(Duration::from_secs(21));
        server.storm(renewals, None, 403, None);
    })
    .status(1)
    .stderr_has("warning: renewing the claim: ")
    .stderr_has("(403 ")
    .stderr_has("; rolling back all the same (each undo is conditional on this run's own write)")
    .stderr_has("  VirtualService shop/demo: rolled back\n  DestinationRule shop/demo: rolled back\n");
    assert!(!approved_with_its_routing(&server));
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
    let renewals = server.writes().iter().filter(|w| w.method == "PUT" && w.path.contains("/leases/")).count();
    assert_eq!(renewals, 1, "the rollback goes on without renewing once one failed");
}

fn with_original(original: &str) -> fake_apiserver::Builder {
    let mut object = virtual_service();
    object["metadata"]["annotations"] = json!({"rollouts.kruise.io/original-spec-configuration": original});
    shop(2, "StepPaused").object(object)
}

#[test]
fn degenerate_originals_are_warned_about_and_refused_without_force() {
    // A script that keeps what it is given, so that the plan itself works.
    let script = "return obj.data";
    for original in ["{}", "null", "{\"spec\":null}", "{\"spec\":{}}"] {
        let server = with_original(original).start();
        let test = Test::new().kubeconfig(&server).file("vs.lua", script);
        let script_flag = ["--script", "VirtualService.networking.istio.io=vs.lua"];
        let run = |args: &[&str]| test.run_args(args.iter().chain(&script_flag));
        run(&["plan", "demo"]).success().stdout_has(&format!("its stored original {original} holds no spec"));
        run(&["approve", "demo", "--yes"])
            .status(3)
            .stderr_has("these stored originals hold no spec")
            .stderr_has(&format!("VirtualService shop/demo: stored original {original}"));
        run(&["restore", "demo", "--yes"]).status(3).stderr_has("these stored originals hold no spec");
        run(&["restore", "--ref", "VirtualService/demo", "--yes"]).status(3).stderr_has("hold no spec");
        assert_eq!(writes(&server), Vec::<String>::new(), "{original}");
        run(&["restore", "--ref", "VirtualService/demo", "--yes", "--force"]).success();
        assert!(vs(&server)["spec"].is_null() || vs(&server)["spec"] == json!({}), "{original}: --force restores it");
    }
}

#[test]
fn restore_ref_checks_for_edits_too() {
    let server = routed();
    let mut edited = vs(&server);
    edited["spec"]["http"][0]["timeout"] = json!("5s");
    server.put_object(edited);
    let test = Test::new().kubeconfig(&server);
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes"])
        .status(3)
        .stdout_has("VirtualService shop/demo was edited after it was routed")
        .stderr_has("pass --force to restore anyway");
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes", "--force"]).success();
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"]);
}

#[test]
fn a_write_the_server_never_answers_is_given_up_on_and_resolved() {
    // With --request-timeout.
    let server = shop(2, "StepPaused").start();
    server.reply_fault(vs_updates(), 1, Stage::BeforeStore, ReplyFault::NeverSent);
    let started = Instant::now();
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--yes", "--request-timeout", "2s"])
        .run()
        .status(1)
        .stderr_has("updating VirtualService shop/demo at http://")
        .stderr_has("timed out")
        .stderr_has("VirtualService shop/demo: not applied when read back (no whole reply came within 2s; the server may still apply it) (its state before this run: ");
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    assert!(!approved_with_its_routing(&server));
    assert!(claims(&server).is_empty());
    // Without: the default request timeout (30s) ends the wait.
    let server = shop(2, "StepPaused").start();
    server.reply_fault(vs_updates(), 1, Stage::AfterStore, ReplyFault::NeverSent);
    let started = Instant::now();
    let out = approve_demo(&server).success();
    assert!(out.stdout.contains("no whole reply came within 30s; a fresh read shows the write"), "{}", out.stdout);
    assert!(started.elapsed() < Duration::from_secs(90), "{:?}", started.elapsed());
    assert!(approved_with_its_routing(&server));
}

#[test]
fn a_503_storm_during_approve_fails_clearly_and_writes_nothing() {
    let server = shop(2, "StepPaused").start();
    server.storm(vs_updates(), None, 503, Some(1));
    let started = Instant::now();
    approve_demo(&server)
        .status(1)
        .stderr_has("updating VirtualService shop/demo: ")
        .stderr_has("(503 ")
        .stderr_has("VirtualService shop/demo: not applied when read back (the server answered 503 ServiceUnavailable; the server may still apply it) (its state before this run: ");
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    assert!(!approved_with_its_routing(&server));
    assert!(claims(&server).is_empty());
}

#[test]
fn a_claim_that_may_not_be_taken_is_refused_with_the_role_that_grants_it() {
    let server = shop(2, "StepPaused").deny(Rule::new(["create"]).resources(["leases"])).start();
    approve_demo(&server)
        .status(3)
        .stderr_has(
            "nothing was written: you may not\n  create leases (API group coordination.k8s.io) in namespace shop",
        )
        .stderr_has("resources: [\"leases\"]");
    assert!(server.writes().is_empty());
}

#[test]
fn a_server_that_stops_answering_mid_approve_ends_the_run_within_bounds_with_an_exact_report() {
    let server = shop(2, "StepPaused").start();
    // The VirtualService's original is stored (write 2); from its second write on, the server
    // answers nothing at all: not the write, not the read that would resolve it, not the
    // rollback; the release of the claim is then not sent.
    let pause = server.pause(Requests::Writes, 3, Stage::BeforeStore);
    let test = Test::new().kubeconfig(&server);
    let started = Instant::now();
    let child = test.spawn(&["approve", "demo", "--yes", "--request-timeout", "2s"]);
    assert!(pause.wait_until_held(Duration::from_secs(30)));
    server.hang_all();
    let out = child.finish().status(1);
    assert!(started.elapsed() < Duration::from_secs(30), "bounded: {:?}", started.elapsed());
    let out = out
        .stderr_has("updating VirtualService shop/demo at http://")
        .stderr_has("timed out")
        .stderr_has("reading it again to tell whether it landed failed too")
        .stderr_has("VirtualService shop/demo: may or may not be rolled back (")
        .stderr_has("); a later write of it may or may not be written (no whole reply came within 2s; it could not be read again; the server may still apply it) (its state before this run: ")
        // The server still does not answer: nor will `status` until it does.
        // The claim, left (the warning above the report), holds the restore up.
        .stderr_has("nothing else was written\n  `kubectl rollout-lua restore --from-backup FILE` puts an object not rolled back as its backup FILE holds it, once the claim above is released\n  once the API server answers again, `kubectl rollout-lua status` shows where each object now stands")
        .stderr_has("the claim on Rollout shop/demo was not released, as the API server did not answer the run's last requests; it expires within 120s, or `kubectl rollout-lua release-claim demo -n shop` releases it");
    assert_eq!(out.stderr.matches("nothing else was written").count(), 1, "one report: {}", out.stderr);
    assert_eq!(out.stderr.matches("VirtualService shop/demo: ").count(), 1, "one line for the object: {}", out.stderr);
    drop(pause);
}

#[test]
fn a_rollback_sends_no_renewal_while_the_server_is_not_answering() {
    if !crate::support::terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    // The confirmation is answered 16s after the claim is taken; the VirtualService's routing
    // write (write 3) and the read that would resolve it go unanswered (2.5s each), so the
    // claim's renewal falls due (20s) at the rollback's first request. The server has left two
    // requests in a row unanswered: the renewal would only wait out the timeout too, and each
    // undo holds without it, so none is sent.
    let server = shop(2, "StepPaused").start();
    server.hang_from_write(3);
    let test = Test::new().kubeconfig(&server);
    let mut session = test.on_terminal_session(&["approve", "demo", "--request-timeout", "2500ms"], None);
    session.wait_for("Only 'yes' goes ahead: ");
    std::thread::sleep(Duration::from_secs(16));
    session.type_keys(b"yes\n");
    let (status, screen) = session.finish();
    assert_eq!(status.and_then(|s| s.code()), Some(1), "{screen}");
    assert!(screen.contains("VirtualService shop/demo: may or may not be rolled back ("), "{screen}");
    assert!(screen.contains("the claim on Rollout shop/demo was not released"), "{screen}");
    assert_eq!(unanswered(&server), ["PUT demo", "GET demo", "PUT demo", "GET demo"], "no renewal: {screen}");
}

#[test]
fn sigterm_while_following_keeps_the_approved_step_and_releases_the_claim() {
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "demo", "--to-end", "--yes", "--timeout", "60s"]);
    // Step 1 is approved; nothing moves the Rollout on, so the run follows it (a line per
    // change once it shows the Rollout).
    child.wait_for_stdout("approved (step 1/3)");
    child.wait_for_stdout("Z shop/demo: Progressing");
    child.signal("TERM");
    let started = Instant::now();
    let out = child.finish().status(143);
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    out.stdout_has("rollout.rollouts.kruise.io/demo approved (step 1/3)")
        .stderr_has("interrupted (SIGTERM): stopped following")
        .stderr_has("VirtualService shop/demo: written and kept: Rollout demo is approved with it");
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][0]["destination"]["host"], "demo-canary", "step 1 routed");
    assert!(claims(&server).is_empty());
}

/// `kubectl-rollout_lua ARGS | head -c 100`, with the routing write held (write `held`) until
/// `head` has read the plan and gone: the outcome is then printed into a closed pipe. Returns
/// the pipeline's exit status (pipefail: the binary's, unless `head`'s failed).
fn piped_into_head(server: &FakeHandle, test: &Test, args: &str, held: usize) -> Output {
    let pause = server.pause(Requests::Writes, held, Stage::BeforeStore);
    // `head` leaves, and the subshell gives its place to `touch` without the pipe (`<&-`): once
    // `head.done` exists, nothing reads the pipe any more.
    let line = format!("set -o pipefail; '{BINARY}' {args} | {{ head -c 100 >head.out; exec touch head.done <&-; }}");
    let mut child = test.command("bash", ["-c", line.as_str()]).stdin(std::process::Stdio::null()).spawn().unwrap();
    assert!(pause.wait_until_held(Duration::from_secs(30)), "write {held} reached");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !test.path("head.done").exists() {
        assert!(Instant::now() < deadline, "head never finished");
        std::thread::sleep(Duration::from_millis(10));
    }
    pause.release();
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    let stdout = std::fs::read_to_string(test.path("head.out")).unwrap();
    Output { status: status.code().unwrap_or(-1), stdout, stderr }
}

#[test]
fn a_closed_stdout_after_the_writes_neither_undoes_them_nor_fails_the_run() {
    // The VirtualService's first write (storing its original) is held until `head` is gone.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    piped_into_head(&server, &test, "approve demo --yes", 2).success();
    assert!(approved_with_its_routing(&server));
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady");
    assert!(claims(&server).is_empty());

    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    piped_into_head(&server, &test, "approve demo --traffic-only --yes", 2).success();
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][1]["weight"], 50, "the routing stays");
    assert_eq!(dr(&server)["spec"]["subsets"][1]["name"], "canary");

    // restore: the claim is write 1, the VirtualService write 2.
    let server = routed();
    let test = Test::new().kubeconfig(&server);
    piped_into_head(&server, &test, "restore demo --yes", 2).success();
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"], "restored, and it stays");
    assert_eq!(dr(&server)["spec"], destination_rule()["spec"]);
    assert!(claims(&server).is_empty());
}

#[test]
fn an_output_that_fails_before_the_writes_stops_the_run_with_nothing_written() {
    if !std::path::Path::new("/dev/full").exists() {
        return crate::support::skip("a full stdout: /dev/full not there");
    }
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let child = test.command(BINARY, ["approve", "demo", "--yes"]).stdout(full).spawn().unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // Before any write: nothing to roll back, and the failure said once.
    assert!(
        stderr.contains("error: writing the output: No space left on device (os error 28)\n  nothing was written"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("No space left").count(), 1, "{stderr}");
    assert_eq!(writes(&server), Vec::<String>::new());
}

#[test]
fn a_closed_stdout_cuts_a_sequence_short_as_a_failure() {
    // Step 1 is written and approved; its outcome is printed into a closed pipe. A regression
    // (audit s37 F3): the run stopped there, with exit 0 and not a word, as if every later pause
    // had been approved.
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let out = piped_into_head(&server, &test, "approve demo --to-end --yes --timeout 20s", 2)
        .status(1)
        .stderr_has("error: writing the output: the output was closed (Broken pipe (os error 32)) while following the release: no later pause is approved\nthe writes stand:\n  VirtualService shop/demo: written and kept: Rollout demo is approved with it (step 1/3)");
    assert!(!out.stderr.contains("rolled back"), "{}", out.stderr);
    assert_eq!(out.stderr.matches("no later pause is approved").count(), 1, "said once: {}", out.stderr);
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady");
    assert!(claims(&server).is_empty());
}

#[test]
fn a_server_dry_run_needs_no_lease_permissions_and_the_claim_is_asked_about_once() {
    let no_leases = Rule::new(["get", "list", "create", "update", "delete"]).resources(["leases"]);
    let server = shop(2, "StepPaused").deny(no_leases).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--dry-run=server"])
        .success()
        .stdout_has("server dry-run accepted Rollout shop/demo")
        .stdout_has("dry run (server): nothing was stored");
    test.run_args(["restore", "demo", "--dry-run=server"]).success();
    assert!(routing_writes(&server).iter().all(|w| w.is_dry_run()), "{:?}", writes(&server));

    let server = shop(2, "StepPaused").start();
    approve_demo(&server).success();
    let lease_questions: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/selfsubjectaccessreviews"))
        .filter(|r| r.body["spec"]["resourceAttributes"]["resource"] == "leases")
        .map(|r| r.body["spec"]["resourceAttributes"]["verb"].to_string())
        .collect();
    assert_eq!(lease_questions.len(), 4, "get, create, update, delete, once each: {lease_questions:?}");
}

#[test]
fn restore_ref_and_from_backup_claim_the_rollouts_that_route_the_object() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    let backup = newest_backup_of_the_virtual_service(&test);
    let from_backup = |backup: &std::path::Path| {
        test.run_args(["restore".as_ref(), "--from-backup".as_ref(), backup.as_os_str(), "--yes".as_ref()])
    };

    // Another run holds the claim: both refuse before writing anything.
    let held = server.put_object(lease(&now_micro()));
    server.clear_log();
    test.run_args(["restore", "--ref", "VirtualService/demo", "--yes"])
        .status(3)
        .stderr_has("nothing was written: Rollout shop/demo is claimed by alice@laptop (pid 42)");
    from_backup(&backup).status(3).stderr_has("Rollout shop/demo is claimed by alice@laptop");
    assert_eq!(writes(&server), Vec::<String>::new());
    server.delete_object("coordination.k8s.io", "leases", NAMESPACE, held["metadata"]["name"].as_str().unwrap());

    // Free: the claim is taken (naming the command) before the object is read, and released.
    let restore_write = server.pause(vs_updates(), 1, Stage::BeforeStore);
    let child = test.spawn(&["restore", "--ref", "VirtualService/demo", "--yes"]);
    assert!(restore_write.wait_until_held(Duration::from_secs(30)));
    let claim = &claims(&server)[0];
    assert_eq!(claim["metadata"]["annotations"]["kubectl-rollout-lua/command"], "restore --ref VirtualService/demo");
    restore_write.release();
    child.finish().success().stdout_has("VirtualService shop/demo restored");
    assert!(claims(&server).is_empty());
    let requests = server.requests();
    let claimed = requests.iter().position(|r| r.method == "POST" && r.path.contains("/leases")).unwrap();
    let read = requests.iter().rposition(|r| r.method == "GET" && r.path.ends_with("/virtualservices/demo")).unwrap();
    assert!(claimed < read, "the object is read under the claim");

    // The restore backed up the routed object: putting it back routes it again.
    server.clear_log();
    from_backup(&newest_backup_of_the_virtual_service(&test)).success().stdout_has("restored from");
    assert_eq!(claim_writes(&server).len(), 2, "claimed and released: {:?}", claim_writes(&server));
}

#[test]
fn a_restore_whose_reply_was_lost_before_someone_elses_edit_names_the_object() {
    // A regression: the VirtualService's restore is stored, its reply lost, and someone labels
    // it before the run reads it back: "nothing was written", exit 3.
    let server = routed();
    server.reply_fault(vs_updates(), 1, Stage::AfterStore, ReplyFault::Lost);
    // Writes: the claim, the VirtualService.
    someone_edits(&server, When::After(2), VIRTUAL_SERVICE, |vs| {
        vs["metadata"]["labels"]["team"] = json!("b");
    });
    let out = Test::new()
        .kubeconfig(&server)
        .args(["restore", "demo", "--yes"])
        .run()
        .status(1)
        .stderr_has("+    team: b\n")
        .stderr_has("  VirtualService shop/demo: may have been written by this run before someone else changed it (its state before this run: ")
        .stderr_has("  nothing else was written");
    assert!(!out.stderr.contains("nothing was written"), "{}", out.stderr);
    assert_eq!(vs(&server)["metadata"]["labels"]["team"], "b");
    assert_eq!(vs(&server)["spec"], virtual_service()["spec"], "restored, and left so");
    assert_eq!(dr(&server)["spec"]["subsets"][1]["name"], "canary", "the run stopped before it");
    assert!(claims(&server).is_empty());
}

/// Rollout `demo2`: labelled `app=demo` as `demo` is, at step 2 in `state`, routing
/// VirtualService `routes`.
fn demo2(state: &str, routes: &str) -> Value {
    let mut demo2 = rollout(2, state);
    demo2["metadata"]["name"] = json!("demo2");
    demo2["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"] =
        json!([{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": routes}]);
    demo2
}

/// VirtualService `name`, as demo's is.
fn virtual_service_named(name: &str) -> Value {
    let mut routed = virtual_service();
    routed["metadata"]["name"] = json!(name);
    routed
}

/// Puts Rollout `demo2` in `store` (`demo2`), at demo's step, and the VirtualService it routes
/// unless it is demo's.
fn put_demo2(store: &mut fake_apiserver::Store, routes: &str) {
    store.put(demo2("StepPaused", routes));
    if routes != "demo" {
        store.put(virtual_service_named(routes));
    }
}

fn demo2_state(server: &FakeHandle) -> Value {
    server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo2").unwrap()["status"]["canaryStatus"]
        ["currentStepState"]
        .clone()
}

#[test]
fn a_rollout_selected_only_after_the_claims_were_taken_is_refused_not_written() {
    // A regression: `approve -l` and `restore -l` claimed the Rollouts a first read found, then
    // wrote for every Rollout the read under the claim found. demo2, made just before the claim
    // was taken (write 1), was routed and approved without a claim.
    for command in ["approve", "restore"] {
        let server = shop(2, "StepPaused").start();
        let test = Test::new().kubeconfig(&server);
        if command == "restore" {
            test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
        }
        let before = (vs(&server), dr(&server));
        server.clear_log();
        server.before_write(1, |store| put_demo2(store, "demo2"));
        test.run_args([command, "-l", "app=demo", "--yes"]).status(3).stderr_has(
            "error: nothing was written: Rollout shop/demo2 is not claimed: it was made or changed after this run chose the Rollouts to claim; run again to claim it too",
        );
        assert_eq!(writes(&server), Vec::<String>::new(), "{command}");
        assert_eq!(
            claim_writes(&server),
            [
                "POST /apis/coordination.k8s.io/v1/namespaces/shop/leases",
                "DELETE /apis/coordination.k8s.io/v1/namespaces/shop/leases/rollout-lua.demo"
            ],
            "{command}: demo claimed and released, demo2 never"
        );
        assert_eq!((vs(&server), dr(&server)), before, "{command}");
        assert_eq!(demo2_state(&server), "StepPaused", "{command}");
        // Run again: both are claimed, and written.
        test.run_args([command, "-l", "app=demo", "--yes"]).success();
        let claimed: Vec<Value> = server
            .writes()
            .iter()
            .filter(|w| w.method == "POST" && w.path.contains("/leases"))
            .map(|w| w.body["metadata"]["name"].clone())
            .collect();
        assert_eq!(claimed, ["rollout-lua.demo", "rollout-lua.demo", "rollout-lua.demo2"], "{command}");
        if command == "approve" {
            assert_eq!(demo2_state(&server), "StepReady");
        }
    }
}

#[test]
fn a_rollout_routing_a_named_object_only_after_the_claims_were_taken_is_refused_not_written() {
    // The same for `restore --ref` and `--from-backup`, which claim the Rollouts of the
    // namespace that route the object: demo2, routing the VirtualService too, is made just
    // before the claim on demo is taken.
    for restore in [OneObject::Ref, OneObject::FromBackup] {
        let (server, test, args) = routed_for(restore);
        let routed = vs(&server);
        server.clear_log();
        server.before_write(1, |store| put_demo2(store, "demo"));
        test.run_args(&args).status(3).stderr_has(
            "error: nothing was written: Rollout shop/demo2 is not claimed: it was made or changed after this run chose the Rollouts to claim; run again to claim it too",
        );
        assert_eq!(writes(&server), Vec::<String>::new(), "{restore:?}");
        assert_eq!(
            claim_writes(&server).len(),
            2,
            "{restore:?}: demo claimed and released: {:?}",
            claim_writes(&server)
        );
        assert_eq!(vs(&server), routed, "{restore:?}");
    }
}

/// How a restore of the one VirtualService is asked for: `--from-backup` of its backup from
/// before the routing, or `--ref`. Either writes the claim, the object, and the release.
#[derive(Clone, Copy, Debug)]
enum OneObject {
    FromBackup,
    Ref,
}

/// A server whose Rollout routed its objects (`approve --traffic-only`), the test whose HOME
/// has the backups, and the arguments of a restore of the VirtualService.
fn routed_for(restore: OneObject) -> (FakeHandle, Test, Vec<String>) {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    let args = match restore {
        OneObject::FromBackup => {
            let backup = newest_backup_of_the_virtual_service(&test).display().to_string();
            vec!["restore".into(), "--from-backup".into(), backup, "--yes".into()]
        }
        OneObject::Ref => ["restore", "--ref", "VirtualService/demo", "--yes"].map(String::from).to_vec(),
    };
    (server, test, args)
}

fn vs_updates() -> Requests {
    Requests::Matching(Rule::new(["update"]).resources(["virtualservices"]))
}

/// `approve demo` with the VirtualService's routing (its second update) stored and its reply
/// hit by `fault` (None: answered 503), then with the approval not stored and its reply hit by
/// `fault` (Some): the report says `said` of the reply each time, and says it was lost only when
/// it was.
#[track_caller]
fn approve_reports_the_reply_as(fault: Option<ReplyFault>, said: &str) {
    let server = shop(2, "StepPaused").start();
    match fault {
        Some(fault) => server.reply_fault(vs_updates(), 2, Stage::AfterStore, fault),
        None => server.fail_after_store(vs_updates(), 2, 503),
    }
    let out = approve_demo(&server)
        .success()
        .stdout_has("VirtualService shop/demo updated (backup ")
        .stdout_has(&format!("; {said}; a fresh read shows the write)\n"));
    let lost = said == "the reply was lost";
    assert_eq!(out.stdout.contains("the reply was lost"), lost, "{said}: {}", out.stdout);
    assert!(approved_with_its_routing(&server), "{said}");
    let Some(fault) = fault else { return };
    // Not stored, and read back unapplied: its routing is kept, as it may still land.
    let server = shop(2, "StepPaused").start();
    server.reply_fault(approvals(), 1, Stage::BeforeStore, fault);
    let out = approve_demo(&server).status(1).stderr_has(&format!(
        "  Rollout shop/demo: not applied when read back ({said}; the server may still apply it)\n"
    ));
    assert_eq!(out.stderr.contains("the reply was lost"), lost, "{said}: {}", out.stderr);
    routed_but_not_approved(&server);
}

#[test]
fn a_write_whose_reply_could_not_be_read_or_was_a_server_error_is_not_reported_lost() {
    // A 200 whose body does not parse (cut short), or a 503 after the write was stored: the
    // server answered, and the report says how.
    approve_reports_the_reply_as(Some(ReplyFault::Garbled), "the reply could not be read (not JSON)");
    approve_reports_the_reply_as(None, "the server answered 503 ServiceUnavailable");
}

#[test]
fn a_write_whose_reply_was_lost_is_reported_lost() {
    approve_reports_the_reply_as(Some(ReplyFault::Lost), "the reply was lost");
}

#[test]
fn a_one_object_restore_resolves_a_lost_garbled_or_hung_reply() {
    for restore in [OneObject::FromBackup, OneObject::Ref] {
        for fault in [ReplyFault::Lost, ReplyFault::Garbled, ReplyFault::NeverSent] {
            // Stored, its reply lost, garbled or never sent (2s timeout): a fresh read shows the
            // original is back.
            let (server, test, mut args) = routed_for(restore);
            args.extend(["--request-timeout".into(), "2s".into()]);
            server.reply_fault(vs_updates(), 1, Stage::AfterStore, fault);
            test.run_args(&args)
                .success()
                .stdout_has("VirtualService shop/demo restored")
                .stdout_has(&format!("{}; a fresh read shows the write", unheard(fault, "2s")));
            assert_eq!(vs(&server)["spec"], virtual_service()["spec"], "{restore:?} {fault:?}");
            assert!(vs(&server)["metadata"]["annotations"].is_null());
            assert!(claims(&server).is_empty());

            // Not stored: reported as such, exit 1, the object as it was.
            let (server, test, mut args) = routed_for(restore);
            args.extend(["--request-timeout".into(), "2s".into()]);
            let routed = vs(&server);
            server.reply_fault(vs_updates(), 1, Stage::BeforeStore, fault);
            let out = test
                .run_args(&args)
                .status(1)
                .stderr_has("updating VirtualService shop/demo at http://127.0.0.1:")
                .stderr_has(&format!(
                    "VirtualService shop/demo: not applied when read back ({}; the server may still apply it)",
                    unheard(fault, "2s")
                ));
            assert!(!out.stdout.contains("VirtualService shop/demo restored"), "{restore:?} {fault:?}: {}", out.stdout);
            assert_eq!(vs(&server), routed, "{restore:?} {fault:?}");
            assert!(claims(&server).is_empty());
        }
    }
}

#[test]
fn restore_from_backup_never_overwrites_a_second_writers_edit() {
    let (server, test, args) = routed_for(OneObject::FromBackup);
    // Between the run's read and its write (the 2nd, after the claim), someone edits the object.
    someone_edits(&server, When::Before(2), VIRTUAL_SERVICE, |vs| {
        vs["spec"]["hosts"] = json!(["demo", "edited.example.com"])
    });
    test.run_args(&args)
        .status(3)
        .stderr_has(
            "VirtualService shop/demo was changed by someone else while this run wrote it; not overwriting their edit",
        )
        .stderr_has("+  - edited.example.com")
        .stderr_has("Review it and run again: the run then shows anew what writing does to their edit")
        .stderr_has("nothing was written");
    assert_eq!(vs(&server)["spec"]["hosts"], json!(["demo", "edited.example.com"]), "their edit stays");
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][1]["weight"], 50, "still routed");
    assert!(claims(&server).is_empty());
}

#[test]
fn a_one_object_restore_signalled_before_or_while_writing_stops_cleanly() {
    for restore in [OneObject::FromBackup, OneObject::Ref] {
        for (name, code, shown) in [("INT", 130, "SIGINT"), ("TERM", 143, "SIGTERM")] {
            // After the claim (write 1): the object is not written.
            let (server, _test, args) = routed_for(restore);
            let routed = vs(&server);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            signalled_after_write(&server, &args, 1, name)
                .status(code)
                .stderr_has(&format!("interrupted ({shown}): no new write was started"));
            assert_eq!(vs(&server), routed, "{restore:?} {name}");
            assert!(claims(&server).is_empty(), "{restore:?} {name}: the claim is released");

            // While the object is written (write 2, its reply held): the write is finished, and
            // it is the last one.
            let (server, _test, args) = routed_for(restore);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            signalled_after_write(&server, &args, 2, name)
                .status(code)
                .stdout_has("VirtualService shop/demo restored")
                .stderr_has(&format!("interrupted ({shown}): it came during the last write, which was finished"))
                .stderr_has("VirtualService shop/demo: written (its state before this run: ");
            assert_eq!(vs(&server)["spec"], virtual_service()["spec"], "{restore:?} {name}");
            assert!(claims(&server).is_empty(), "{restore:?} {name}: the claim is released");
        }
    }
}

/// How the claim changes between `release-claim`'s read, which it shows, and its delete.
#[derive(Debug)]
enum Meanwhile {
    /// bob's approve takes the expired claim over while the answer to the read is on its way
    /// (as while the question is open on a terminal).
    TakenOverWhileShown,
    /// bob takes it over right before the delete (the fake server's second writer).
    TakenOverBeforeTheDelete,
    /// Its holder releases it right before the delete.
    ReleasedBeforeTheDelete,
}

#[test]
fn release_claim_deletes_only_the_claim_it_showed() {
    // A regression (audit s24-safety #1): the Lease was read again after the question, and
    // whatever that read found was deleted, bob's live claim included.
    let expired = "2026-01-01T00:00:00.000000Z";
    let bobs = || {
        let mut bobs = lease(&now_micro());
        bobs["spec"]["holderIdentity"] = json!("bob@desk (pid 7)");
        bobs
    };
    for meanwhile in
        [Meanwhile::TakenOverWhileShown, Meanwhile::TakenOverBeforeTheDelete, Meanwhile::ReleasedBeforeTheDelete]
    {
        let server = shop(2, "StepPaused").object(lease(expired)).start();
        let test = Test::new().kubeconfig(&server);
        let out = match meanwhile {
            Meanwhile::TakenOverWhileShown => {
                let reads = Requests::Matching(Rule::new(["get"]).resources(["leases"]));
                let shown = server.pause(reads, 1, Stage::AfterStore);
                let running = test.spawn(&["release-claim", "demo", "--yes"]);
                assert!(shown.wait_until_held(Duration::from_secs(20)));
                server.put_object(bobs());
                shown.release();
                running.finish()
            }
            Meanwhile::TakenOverBeforeTheDelete => {
                let taken = bobs();
                server.before_write(1, move |store| {
                    store.put(taken);
                });
                test.run_args(["release-claim", "demo", "--yes"])
            }
            Meanwhile::ReleasedBeforeTheDelete => {
                server.before_write(1, |store| {
                    store.delete("coordination.k8s.io", "leases", NAMESPACE, "rollout-lua.demo");
                });
                test.run_args(["release-claim", "demo", "--yes"])
                    .success()
                    .stdout_has("Rollout shop/demo is not claimed (released meanwhile)\n");
                assert!(claims(&server).is_empty());
                continue;
            }
        };
        out.status(3)
            .stdout_has("Rollout shop/demo is claimed by alice@laptop (pid 42) running `approve demo`, since 2026-01-01T00:00:00Z (expired: ")
            .stderr_has("error: not released: the claim on Rollout shop/demo changed since it was shown (renewed, or taken over); it is now held by bob@desk (pid 7) running `approve demo`, since 2026-01-01T00:00:00Z (until ");
        let left = claims(&server);
        assert_eq!(left.len(), 1, "{meanwhile:?}");
        assert_eq!(left[0]["spec"]["holderIdentity"], "bob@desk (pid 7)", "{meanwhile:?}: bob's claim is kept");
        let deletes = server.writes().into_iter().filter(|w| w.method == "DELETE").count();
        assert_eq!(deletes, 1, "{meanwhile:?}: one delete, conditional on alice's Lease");
    }
}

#[test]
fn release_claim_resolves_a_lost_or_garbled_reply_to_its_delete() {
    let lease_deletes = || Requests::Matching(Rule::new(["delete"]).resources(["leases"]));
    for fault in [ReplyFault::Lost, ReplyFault::Garbled] {
        let server = shop(2, "StepPaused").start();
        let test = Test::new().kubeconfig(&server);
        let release = ["release-claim", "demo", "--yes"];
        // Deleted, its reply lost: a fresh read shows the claim gone.
        server.put_object(lease(&now_micro()));
        server.reply_fault(lease_deletes(), 1, Stage::AfterStore, fault);
        test.run_args(release).success().stdout_has("released the claim on Rollout shop/demo\n");
        assert!(claims(&server).is_empty(), "{fault:?}");

        // Not deleted: the failure is named, exit 1, and the claim is still there to release.
        server.put_object(lease(&now_micro()));
        server.reply_fault(lease_deletes(), 1, Stage::BeforeStore, fault);
        let out =
            test.run_args(release).status(1).stderr_has("deleting Lease shop/rollout-lua.demo at http://127.0.0.1:");
        assert!(!out.stdout.contains("released"), "{fault:?}: {}", out.stdout);
        assert_eq!(claims(&server).len(), 1, "{fault:?}");
        test.run_args(release).success().stdout_has("released the claim on Rollout shop/demo\n");
        assert!(claims(&server).is_empty());
    }
}

#[test]
fn release_claim_whose_delete_and_read_again_go_unanswered_says_the_claim_may_or_may_not_be_released() {
    // Trial 8: the delete landed unheard and the read after it hung; the error named the read
    // alone, not that a delete had been sent and may have landed.
    let server = shop(2, "StepPaused").start();
    server.put_object(lease(&now_micro()));
    server.reply_fault(
        Requests::Matching(Rule::new(["delete"]).resources(["leases"])),
        1,
        Stage::AfterStore,
        ReplyFault::NeverSent,
    );
    // The first read is the one that shows the claim; the second resolves the delete.
    server.reply_fault(
        Requests::Matching(Rule::new(["get"]).resources(["leases"])),
        2,
        Stage::BeforeStore,
        ReplyFault::NeverSent,
    );
    let out = Test::new()
        .kubeconfig(&server)
        .args(["release-claim", "demo", "--yes", "--request-timeout", "1s"])
        .run()
        .status(1)
        .stderr_has("error: the claim on Rollout shop/demo may or may not be released (deleting Lease shop/rollout-lua.demo at http://127.0.0.1:")
        .stderr_has("; reading leases.coordination.k8s.io shop/rollout-lua.demo at http://127.0.0.1:")
        .stderr_has("`kubectl rollout-lua release-claim demo -n shop` shows whether it is");
    assert!(!out.stdout.contains("released the claim"), "{}", out.stdout);
}

#[test]
fn release_claim_reports_every_refusal_and_error_and_releases_the_other_claims() {
    // A regression (audit s25-code #5): a claim that changed since it was shown was refused,
    // but a later delete failing otherwise ended the run at once: the refusal was never said.
    let claim = claim_of;
    let expired = "2026-01-01T00:00:00.000000Z";
    for dropped in [false, true] {
        let server = shop(2, "StepPaused")
            .object(claim("demo", "alice@laptop (pid 42)", expired))
            .object(claim("demo2", "alice@laptop (pid 42)", expired))
            .object(claim("demo3", "alice@laptop (pid 42)", expired))
            .start();
        // bob takes demo's claim over right before its delete; demo2's delete fails, unstored.
        let bobs = claim("demo", "bob@desk (pid 7)", &now_micro());
        server.before_write(1, move |store| {
            store.put(bobs);
        });
        let demo2 = || Requests::Matching(Rule::new(["delete"]).resources(["leases"]).names(["rollout-lua.demo2"]));
        match dropped {
            true => server.reply_fault(demo2(), 1, Stage::BeforeStore, ReplyFault::Lost),
            false => server.storm(demo2(), Some(1), 500, None),
        }
        let out = Test::new()
            .kubeconfig(&server)
            .args(["release-claim", "demo", "demo2", "demo3", "--yes"])
            .run()
            .status(1)
            .stdout_has("released the claim on Rollout shop/demo3\n")
            .stderr_has("deleting Lease shop/rollout-lua.demo2")
            .stderr_has("\nnot released: the claim on Rollout shop/demo changed since it was shown (renewed, or taken over); it is now held by bob@desk (pid 7)");
        assert!(!out.stdout.contains("claim on Rollout shop/demo\n"), "dropped {dropped}: {}", out.stdout);
        assert!(!out.stdout.contains("claim on Rollout shop/demo2\n"), "dropped {dropped}: {}", out.stdout);
        let mut left: Vec<(Value, Value)> = claims(&server)
            .iter()
            .map(|c| (c["metadata"]["name"].clone(), c["spec"]["holderIdentity"].clone()))
            .collect();
        left.sort_by_key(|(name, _)| name.to_string());
        assert_eq!(
            left,
            [
                (json!("rollout-lua.demo"), json!("bob@desk (pid 7)")),
                (json!("rollout-lua.demo2"), json!("alice@laptop (pid 42)"))
            ],
            "dropped {dropped}: bob's claim and the one not deleted are left"
        );
        let deletes = server.writes().into_iter().filter(|w| w.method == "DELETE").count();
        assert_eq!(deletes, 3, "dropped {dropped}: one delete a claim, nothing else");
    }
}

#[test]
fn release_claim_stops_at_a_signal_before_the_next_delete_or_at_once_at_a_second() {
    // A regression: release-claim listened for signals only at its question, so Ctrl-C did
    // nothing while its deletes were out (each up to --request-timeout on a hung server).
    let release = ["release-claim", "demo", "demo2", "demo3", "--yes"];
    for second_signal in [false, true] {
        let mut server = shop(2, "StepPaused");
        for rollout in ["demo", "demo2", "demo3"] {
            server = server.object(claim_of(rollout, "alice@laptop (pid 42)", "2026-01-01T00:00:00.000000Z"));
        }
        let server = server.start();
        let first_delete =
            server.pause(Requests::Matching(Rule::new(["delete"]).resources(["leases"])), 1, Stage::BeforeStore);
        let test = Test::new().kubeconfig(&server);
        let running = test.spawn(&release);
        assert!(first_delete.wait_until_held(Duration::from_secs(30)), "the first delete is held");
        running.first_signal("INT");
        let mut left = vec!["rollout-lua.demo2", "rollout-lua.demo3"];
        let out = if second_signal {
            running.signal("INT");
            let out = running.finish_within(Duration::from_secs(10));
            // Its delete is still held: no claim is gone yet (once let go, the server may apply it).
            left.insert(0, "rollout-lua.demo");
            out.stderr_has("error: interrupted (SIGINT): stopped at once by a second signal: the delete of the claim on Rollout shop/demo was out and may have landed (`kubectl rollout-lua release-claim demo -n shop` shows whether it did); not released: the claims on Rollouts shop/demo2, shop/demo3\n")
        } else {
            first_delete.release();
            running
                .finish_within(Duration::from_secs(30))
                .stdout_has("released the claim on Rollout shop/demo\n")
                .stderr_has(
                    "error: interrupted (SIGINT): not released: the claims on Rollouts shop/demo2, shop/demo3\n",
                )
        };
        out.status(130).stderr_has(
            "SIGINT received: no other claim is released; the delete in flight is finished, then the run stops",
        );
        let mut names: Vec<String> =
            claims(&server).iter().map(|c| c["metadata"]["name"].as_str().unwrap().to_string()).collect();
        names.sort();
        assert_eq!(names, left, "second signal {second_signal}: only the claims not tried are left");
        first_delete.release();
    }
}

#[test]
fn release_claim_stopped_during_its_last_delete_exits_as_stopped() {
    // An interrupt sweep: a signal while the last delete was out exited 0.
    let server =
        shop(2, "StepPaused").object(claim_of("demo", "alice@laptop (pid 42)", "2026-01-01T00:00:00.000000Z")).start();
    let delete = server.pause(Requests::Matching(Rule::new(["delete"]).resources(["leases"])), 1, Stage::BeforeStore);
    signalled_while_held(&Test::new().kubeconfig(&server), &["release-claim", "demo", "--yes"], &delete, "INT")
        .status(130)
        .stdout_has("released the claim on Rollout shop/demo\n")
        .stderr_has("error: interrupted (SIGINT): the delete in flight was finished, the last of them: no claim shown was left\n");
    assert!(claims(&server).is_empty());
}

#[test]
fn release_claim_ends_at_once_at_a_signal_while_it_reads_the_claims_or_asks_whether_it_may_delete() {
    // Nothing is written yet: a hung read, or access review, is not waited for (up to
    // --request-timeout). A regression of the review: the access review was sent after signals
    // were taken in, so a hung one held the run up to --request-timeout (twice when refused).
    let held_requests = [
        ("the read", Requests::Matching(Rule::new(["get"]).resources(["leases"]))),
        ("the access review", Requests::AccessReviews),
    ];
    for (what, requests) in held_requests {
        let server = shop(2, "StepPaused").object(lease(&now_micro())).start();
        let held = server.pause(requests, 1, Stage::BeforeStore);
        let test = Test::new().kubeconfig(&server);
        let running = test.spawn(&["release-claim", "demo", "--yes"]);
        assert!(held.wait_until_held(Duration::from_secs(30)), "{what} is held");
        running.signal("INT");
        let out = running.finish_within(Duration::from_secs(10));
        assert!(!out.stdout.contains("released"), "{what}: {}", out.stdout);
        held.release();
        assert_eq!(claims(&server).len(), 1, "{what}: the claim is still there");
    }
}

/// The writes of `approve store` at step 1 (an HTTPRoute): the claim, the route (one replace
/// of the whole object), the approval, the release of the claim.
const ROUTE_APPROVE_WRITES: usize = 4;

/// Rollout `store` is approved at step 1 with its canary rule, or not approved with the route
/// it had.
#[track_caller]
fn route_approved_with_its_routing(server: &FakeHandle) -> bool {
    let rollout = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "store").unwrap();
    let approved = rollout["status"]["canaryStatus"]["currentStepState"] == "StepReady";
    if approved {
        assert_eq!(rules(server), ["/ -> store 1", "/old -> ", "/ x-canary=true -> store-canary 1"]);
    } else {
        assert_eq!(rollout["status"]["canaryStatus"]["currentStepState"], "StepPaused");
        assert_eq!(rules(server), ["/ -> store 1", "/old -> "], "not approved: the route it had");
    }
    approved
}

/// `verb store --yes` on a fresh `server()`, once for each reply fault after each of its `writes`
/// writes: it succeeds, `landed` holds, the claim is released, and the route's write (the
/// second) says `done` and that its reply was lost.
fn route_write_resolves_every_lost_reply(
    verb: &str,
    writes: usize,
    server: impl Fn() -> FakeHandle,
    landed: impl Fn(&FakeHandle) -> bool,
    done: &str,
) {
    for fault in [ReplyFault::Lost, ReplyFault::Garbled, ReplyFault::NeverSent] {
        for k in 1..=writes {
            let server = server();
            server.reply_fault(Requests::Writes, k, Stage::AfterStore, fault);
            let out = Test::new().kubeconfig(&server).args([verb, "store", "--yes", "--request-timeout", "2s"]).run();
            assert_eq!(out.status, 0, "{fault:?} after write {k}\n{}\n{}", out.stdout, out.stderr);
            assert!(landed(&server), "{fault:?} after write {k}");
            assert!(claims(&server).is_empty(), "{fault:?} after write {k}: the claim is released");
            if k == 2 {
                assert!(out.stdout.contains(done), "{}", out.stdout);
                let unheard = format!("{}; a fresh read shows the write", unheard(fault, "2s"));
                assert!(out.stdout.contains(&unheard), "{fault:?}: {}", out.stdout);
            }
        }
    }
}

#[test]
fn an_httproute_replace_whose_reply_is_lost_garbled_or_hung_is_resolved() {
    route_write_resolves_every_lost_reply(
        "approve",
        ROUTE_APPROVE_WRITES,
        || store(1, "StepPaused", &["v1", "v1beta1"]).start(),
        route_approved_with_its_routing,
        "HTTPRoute shop/store updated (backup ",
    );
}

#[test]
fn an_httproute_edited_between_read_and_write_is_never_overwritten() {
    let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
    // Someone adds a hostname after this run read the route, before its replace is served.
    someone_edits(&server, When::Before(2), HTTP_ROUTE, |route| {
        route["spec"]["hostnames"] = json!(["store.example.com"])
    });
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "store", "--yes"])
        .run()
        .status(3)
        .stderr_has("HTTPRoute shop/store was changed by someone else")
        .stderr_has("store.example.com");
    assert_eq!(route(&server)["spec"]["hostnames"], json!(["store.example.com"]), "their edit stays");
    assert!(!route_approved_with_its_routing(&server));
    assert!(claims(&server).is_empty());
}

#[test]
fn a_signal_after_the_httproute_replace_rolls_it_back_and_after_the_approval_finishes() {
    // With SIGTERM, the gateway writes the route's status after each write, as on a real
    // cluster (a regression: the rollback gave up on the conflict that made).
    for (name, code, status_written) in [("INT", 130, false), ("TERM", 143, true)] {
        for k in 2..=3 {
            let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
            if status_written {
                a_controller_writes_the_status_of(&server, "httproutes");
            }
            let pause = server.pause(Requests::Writes, k, Stage::AfterStore);
            let test = Test::new().kubeconfig(&server);
            let child = test.spawn(&["approve", "store", "--yes"]);
            assert!(pause.wait_until_held(Duration::from_secs(30)), "write {k} reached");
            child.first_signal(name);
            pause.release();
            let out = child.finish();
            assert_eq!(out.status, code, "{name} after write {k}\n{}\n{}", out.stdout, out.stderr);
            let approved = route_approved_with_its_routing(&server);
            assert_eq!(approved, k == 3, "{name} after write {k}: {}", out.stderr);
            if k == 2 {
                assert!(out.stderr.contains("HTTPRoute shop/store: rolled back"), "{}", out.stderr);
            }
            assert!(claims(&server).is_empty(), "{name} after write {k}");
        }
    }
}

#[test]
fn a_refused_approval_rolls_the_httproute_back_though_its_gateway_wrote_its_status() {
    // A regression: the gateway's status write after the replace made the rollback's write
    // conflict, and the rollback gave up: the route kept the step's canary rule on a Rollout
    // not approved, and "someone changed it" was blamed.
    let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
    a_controller_writes_the_status_of(&server, "httproutes");
    server.storm(approvals(), Some(1), 403, None);
    let out = Test::new()
        .kubeconfig(&server)
        .args(["approve", "store", "--yes"])
        .run()
        .status(1)
        .stderr_has("injected denial (403 Forbidden)")
        .stderr_has("  HTTPRoute shop/store: rolled back\n  nothing else was written");
    assert!(!out.stderr.contains("someone"), "{}", out.stderr);
    assert!(!route_approved_with_its_routing(&server));
    assert_eq!(route(&server)["status"]["observed"], true, "the gateway's status stays");
    assert!(claims(&server).is_empty());
}

#[test]
fn a_lost_replace_then_someone_elses_edit_of_the_httproute_is_named_as_maybe_this_runs() {
    // A regression: the replace is stored, its reply lost, and someone adds a hostname before
    // the run reads it back: "nothing was written", exit 3, and this run's canary rule shown as
    // their edit. An HTTPRoute stores no original: the backup is the only record of it.
    let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
    server.reply_fault(Requests::Writes, 2, Stage::AfterStore, ReplyFault::Lost);
    someone_edits(&server, When::After(2), HTTP_ROUTE, |route| {
        route["spec"]["hostnames"] = json!(["store.example.com"])
    });
    let test = Test::new().kubeconfig(&server);
    let out = test
        .run_args(["approve", "store", "--yes"])
        .status(1)
        .stderr_has("a fresh read shows someone else changed HTTPRoute shop/store meanwhile, perhaps after this run's write landed; it is left as it is:")
        .stderr_has("+++ HTTPRoute shop/store (this run's write and theirs, as it is now)")
        .stderr_has("+  - store.example.com")
        .stderr_has("  HTTPRoute shop/store: may have been written by this run before someone else changed it (its state before this run: ");
    assert!(!out.stderr.contains("nothing was written") && !out.stderr.contains("(now)"), "{}", out.stderr);
    let named = out.stderr.split("(its state before this run: ").nth(1).unwrap();
    let backup = std::fs::read_to_string(&named[..named.find(')').unwrap()]).unwrap();
    assert!(backup.contains("/old") && !backup.contains("store-canary"), "the route before the run: {backup}");
    assert_eq!(route(&server)["spec"]["hostnames"], json!(["store.example.com"]));
    assert_eq!(rules(&server).len(), 3, "left as it is, this run's canary rule included");
    assert_eq!(
        server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "store").unwrap()["status"]["canaryStatus"]["currentStepState"],
        "StepPaused"
    );
    assert!(claims(&server).is_empty());
}

/// Rollout `store` approved at step 3 (30%): its HTTPRoute routed, for a restore.
fn routed_store() -> FakeHandle {
    let server = store(3, "StepPaused", &["v1", "v1beta1"]).start();
    Test::new().kubeconfig(&server).args(["approve", "store", "--yes"]).run().success();
    assert_eq!(rules(&server), ROUTED_STORE);
    server.clear_log();
    server
}

const ROUTED_STORE: [&str; 2] = ["/ -> store 70, store-canary 30", "/old -> "];

/// The writes of `restore store`: the claim, the route (one replace), the release of the claim.
const ROUTE_RESTORE_WRITES: usize = 3;

#[test]
fn an_httproute_restore_whose_reply_is_lost_garbled_or_hung_is_resolved() {
    route_write_resolves_every_lost_reply(
        "restore",
        ROUTE_RESTORE_WRITES,
        routed_store,
        |server| rules(server) == ["/ -> store 1"],
        "HTTPRoute shop/store restored (backup ",
    );
}

#[test]
fn an_httproute_edited_between_the_restores_read_and_write_is_never_overwritten() {
    let server = routed_store();
    // Someone adds a hostname after this run read the route, before its replace is served.
    someone_edits(&server, When::Before(2), HTTP_ROUTE, |route| {
        route["spec"]["hostnames"] = json!(["store.example.com"])
    });
    Test::new()
        .kubeconfig(&server)
        .args(["restore", "store", "--yes"])
        .run()
        .status(3)
        .stderr_has("HTTPRoute shop/store was changed by someone else")
        .stderr_has("store.example.com");
    assert_eq!(route(&server)["spec"]["hostnames"], json!(["store.example.com"]), "their edit stays");
    assert_eq!(rules(&server), ROUTED_STORE, "not restored over their edit");
    assert!(claims(&server).is_empty());
}

#[test]
fn a_signal_while_the_httproute_restore_is_held_finishes_it_and_says_so() {
    for (name, code) in [("INT", 130), ("TERM", 143)] {
        for k in 2..=ROUTE_RESTORE_WRITES {
            let server = routed_store();
            let out = signalled_after_write(&server, &["restore", "store", "--yes"], k, name);
            assert_eq!(out.status, code, "{name} after write {k}\n{}\n{}", out.stdout, out.stderr);
            // The route is the 2nd and last write: held there, it is finished, not undone.
            if k == 2 {
                assert!(out.stderr.contains("it came during the last write, which was finished"), "{}", out.stderr);
                assert!(
                    out.stderr.contains("HTTPRoute shop/store: written (its state before this run: "),
                    "{}",
                    out.stderr
                );
            }
            assert_eq!(rules(&server), ["/ -> store 1"], "{name} after write {k}");
            assert!(claims(&server).is_empty(), "{name} after write {k}");
        }
    }
}
