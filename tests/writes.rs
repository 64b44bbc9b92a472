//! What `approve` and `restore` promise when things go wrong, on the fake API server: one run
//! per Rollout at a time (the claim), a write whose reply is lost, garbled or never comes is
//! resolved by reading again, someone else's edit is never overwritten, signals stop a run
//! cleanly, degenerate originals are refused, and every wait ends.

use crate::support::cluster::*;
use crate::support::{BINARY, Output, Test};
use fake_apiserver::{FakeHandle, ReplyFault, Requests, Rule, Stage};
use serde_json::{Value, json};
use std::process::{Child, Command};
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
fn approve_resolves_a_lost_garbled_or_hung_reply_after_each_write() {
    for fault in [ReplyFault::Lost, ReplyFault::Garbled, ReplyFault::NeverSent] {
        for k in 1..=APPROVE_WRITES {
            let server = shop(2, "StepPaused").start();
            // The write is stored; its reply is lost, garbled, or never comes (2s timeout).
            server.reply_fault(Requests::Writes, k, Stage::AfterStore, fault);
            let out =
                Test::new().kubeconfig(&server).args(["approve", "demo", "--yes", "--request-timeout", "2s"]).run();
            assert_eq!(out.status, 0, "{fault:?} after write {k}\n{}\n{}", out.stdout, out.stderr);
            assert!(approved_with_its_routing(&server), "{fault:?} after write {k}");
            assert!(claims(&server).is_empty(), "{fault:?} after write {k}: the claim is released");
            if (2..=6).contains(&k) {
                assert!(out.stdout.contains("the reply was lost"), "{fault:?} after write {k}: {}", out.stdout);
            }
        }
    }
}

#[test]
fn approve_reports_a_write_whose_reply_is_lost_and_that_was_not_stored() {
    let server = shop(2, "StepPaused").start();
    // The approval is lost before it is stored: a fresh read shows it did not happen, and
    // the routing written for it is rolled back.
    let approval = Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]));
    server.reply_fault(approval, 1, Stage::BeforeStore, ReplyFault::Lost);
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--yes"])
        .run()
        .status(1)
        .stderr_has("patching the status of Rollout shop/demo")
        .stderr_has("Rollout shop/demo: not written (a fresh read shows it as before)")
        .stderr_has("VirtualService shop/demo: rolled back")
        .stderr_has("DestinationRule shop/demo: rolled back");
    assert!(!approved_with_its_routing(&server));
    assert!(claims(&server).is_empty());
}

#[test]
fn a_lost_write_after_this_runs_own_write_is_judged_against_that_write() {
    for fault in [ReplyFault::Lost, ReplyFault::Garbled] {
        let server = shop(2, "StepPaused").start();
        // The VirtualService's routing (write 3, sent at the version of this run's own write 2,
        // which stored the original) is lost before it is stored.
        server.reply_fault(Requests::Writes, 3, Stage::BeforeStore, fault);
        Test::new()
            .kubeconfig(&server)
            .args(["approve", "demo", "--yes"])
            .run()
            .status(1)
            .stderr_has("VirtualService shop/demo: not written (a fresh read shows it as before)")
            .stderr_has("VirtualService shop/demo: rolled back");
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
fn restore_resolves_a_lost_garbled_or_hung_reply_after_each_write() {
    for fault in [ReplyFault::Lost, ReplyFault::Garbled, ReplyFault::NeverSent] {
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
                assert!(out.stdout.contains("the reply was lost"), "{fault:?} after write {k}: {}", out.stdout);
            }
        }
    }
}

/// A tiny deterministic generator for the races' delays.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *state >> 33
}

fn spawn(test: &Test, args: &[&str]) -> Child {
    test.command(BINARY, args).stdin(std::process::Stdio::null()).spawn().expect("run the binary")
}

fn finish(child: Child) -> Output {
    let output = child.wait_with_output().unwrap();
    Output {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

#[test]
fn two_approvers_at_once_one_wins_and_the_routing_always_matches_the_approval() {
    let mut seed = 7;
    for round in 0..20 {
        let server =
            shop(2, "StepPaused").latency_between(Duration::from_millis(0), Duration::from_millis(20), round).start();
        let (first, second) = (Test::new().kubeconfig(&server), Test::new().kubeconfig(&server));
        let args = ["approve", "demo", "--yes"];
        let a = spawn(&first, &args);
        std::thread::sleep(Duration::from_millis(next(&mut seed) % 60));
        let b = spawn(&second, &args);
        let outs = [finish(a), finish(b)];
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

/// Now, as a Lease's MicroTime.
fn now_micro() -> String {
    k8s_openapi::jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

#[test]
fn a_claimed_rollout_is_refused_shown_and_can_be_released() {
    let server = shop(2, "StepPaused").object(lease(&now_micro())).start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--yes"])
        .status(3)
        .stderr_has("nothing was written: Rollout shop/demo is claimed by alice@laptop (pid 42) running `approve demo`, since 2026-01-01T00:00:00.000000Z");
    test.run_args(["restore", "demo", "--yes"]).status(3).stderr_has("is claimed by alice@laptop (pid 42)");
    assert_eq!(writes(&server), Vec::<String>::new());
    test.run_args(["status", "demo"]).success().stdout_has("  claimed by alice@laptop (pid 42) running `approve demo`");
    test.run_args(["release-claim", "demo"]).status(3).stderr_has("no terminal to confirm on");
    test.run_args(["release-claim", "demo", "--yes"])
        .success()
        .stdout_has("Rollout shop/demo is claimed by alice@laptop (pid 42)")
        .stdout_has("released the claim on Rollout shop/demo");
    assert!(claims(&server).is_empty());
    test.run_args(["release-claim", "demo", "--yes"]).success().stdout_has("Rollout shop/demo is not claimed");
    test.run_args(["approve", "demo", "--yes"]).success();
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
fn the_claim_is_taken_before_the_read_that_is_guarded_and_held_while_writing() {
    let server = shop(2, "StepPaused").start();
    Test::new().kubeconfig(&server).args(["approve", "demo", "--yes"]).run().success();
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

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill").args([&format!("-{name}"), &child.id().to_string()]).status().unwrap();
    assert!(status.success(), "kill -{name}");
}

/// `approve demo --yes`, held after write `k` was stored, then `name` (INT or TERM).
fn approve_signalled_after_write(k: usize, name: &str) -> (FakeHandle, Output) {
    let server = shop(2, "StepPaused").start();
    let pause = server.pause(Requests::Writes, k, Stage::AfterStore);
    let test = Test::new().kubeconfig(&server);
    let child = spawn(&test, &["approve", "demo", "--yes"]);
    assert!(pause.wait_until_held(Duration::from_secs(30)), "write {k} reached");
    signal(&child, name);
    // The signal is taken in while the write is out; then the write's reply comes.
    std::thread::sleep(Duration::from_millis(200));
    pause.release();
    let out = finish(child);
    (server, out)
}

#[test]
fn sigint_and_sigterm_after_each_write_stop_before_the_next_and_roll_back() {
    for (name, code, shown) in [("INT", 130, "SIGINT"), ("TERM", 143, "SIGTERM")] {
        for k in 1..=APPROVE_WRITES {
            let (server, out) = approve_signalled_after_write(k, name);
            assert_eq!(out.status, code, "{name} after write {k}\n{}\n{}", out.stdout, out.stderr);
            assert!(out.stderr.contains(&format!("interrupted ({shown})")), "{name} after write {k}: {}", out.stderr);
            let approved = approved_with_its_routing(&server);
            // The approval is the 6th write: from then on the run had finished its step.
            assert_eq!(approved, k >= 6, "{name} after write {k}: {}", out.stderr);
            if (2..=5).contains(&k) {
                assert!(out.stderr.contains("VirtualService shop/demo: rolled back"), "{}", out.stderr);
                assert!(out.stderr.contains("no new write was started"), "{}", out.stderr);
            }
            if k >= 6 {
                assert!(out.stderr.contains("it came during the last write, which was finished"), "{}", out.stderr);
            }
            assert!(claims(&server).is_empty(), "{name} after write {k}: the claim is released");
        }
    }
}

#[test]
fn restore_signalled_after_each_write_rolls_back_or_finishes() {
    for (name, code) in [("INT", 130), ("TERM", 143)] {
        for k in 1..=RESTORE_WRITES {
            let server = routed();
            let routed_vs = vs(&server);
            let pause = server.pause(Requests::Writes, k, Stage::AfterStore);
            let test = Test::new().kubeconfig(&server);
            let child = spawn(&test, &["restore", "demo", "--yes"]);
            assert!(pause.wait_until_held(Duration::from_secs(30)), "write {k} reached");
            signal(&child, name);
            std::thread::sleep(Duration::from_millis(200));
            pause.release();
            let out = finish(child);
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

#[test]
fn a_second_sigint_stops_at_once_naming_what_may_be_half_written() {
    let server = shop(2, "StepPaused").start();
    // Hold the VirtualService's second write (its routing) before it is stored.
    let pause = server.pause(Requests::Writes, 3, Stage::BeforeStore);
    let test = Test::new().kubeconfig(&server);
    let child = spawn(&test, &["approve", "demo", "--yes"]);
    assert!(pause.wait_until_held(Duration::from_secs(30)));
    signal(&child, "INT");
    std::thread::sleep(Duration::from_millis(200));
    signal(&child, "INT");
    let started = Instant::now();
    let out = finish(child);
    assert!(started.elapsed() < Duration::from_secs(5), "stopped at once: {:?}", started.elapsed());
    out.status(130)
        .stderr_has("stopped at once by a second signal")
        .stderr_has(
            "VirtualService shop/demo: may be half written (a request for it was out); its state before this run: ",
        )
        .stderr_has("the claim stays until it expires");
    pause.release();
}

#[test]
fn a_second_writer_between_writes_is_never_overwritten() {
    let server = shop(2, "StepPaused").start();
    // Right after the VirtualService's original is stored (write 2), someone edits its spec.
    server.after_write(2, |store| {
        store.modify("networking.istio.io", "virtualservices", NAMESPACE, "demo", |vs| {
            vs["spec"]["hosts"] = json!(["demo", "edited.example.com"])
        });
    });
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--yes"])
        .run()
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
    let vs_updates = || Requests::Matching(Rule::new(["update"]).resources(["virtualservices"]));
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
        .stderr_has("VirtualService shop/demo: not written (a fresh read shows it as before)");
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    assert!(!approved_with_its_routing(&server));
    assert!(claims(&server).is_empty());
    // Without: the default request timeout (30s) ends the wait.
    let server = shop(2, "StepPaused").start();
    server.reply_fault(vs_updates(), 1, Stage::AfterStore, ReplyFault::NeverSent);
    let started = Instant::now();
    let out = Test::new().kubeconfig(&server).args(["approve", "demo", "--yes"]).run().success();
    assert!(out.stdout.contains("the reply was lost"), "{}", out.stdout);
    assert!(started.elapsed() < Duration::from_secs(90), "{:?}", started.elapsed());
    assert!(approved_with_its_routing(&server));
}

#[test]
fn a_503_storm_during_approve_fails_clearly_and_writes_nothing() {
    let server = shop(2, "StepPaused").start();
    server.storm(Requests::Matching(Rule::new(["update"]).resources(["virtualservices"])), None, 503, Some(1));
    let started = Instant::now();
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--yes"])
        .run()
        .status(1)
        .stderr_has("updating VirtualService shop/demo: ")
        .stderr_has("(503 ")
        .stderr_has("VirtualService shop/demo: not written (a fresh read shows it as before)");
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    assert!(!approved_with_its_routing(&server));
    assert!(claims(&server).is_empty());
}

#[test]
fn a_claim_that_may_not_be_taken_is_refused_with_the_role_that_grants_it() {
    let server = shop(2, "StepPaused").deny(Rule::new(["create"]).resources(["leases"])).start();
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--yes"])
        .run()
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
    // rollback, not the release of the claim.
    let pause = server.pause(Requests::Writes, 3, Stage::BeforeStore);
    let test = Test::new().kubeconfig(&server);
    let started = Instant::now();
    let child = spawn(&test, &["approve", "demo", "--yes", "--request-timeout", "2s"]);
    assert!(pause.wait_until_held(Duration::from_secs(30)));
    server.hang_all();
    let out = finish(child).status(1);
    assert!(started.elapsed() < Duration::from_secs(30), "bounded: {:?}", started.elapsed());
    let out = out
        .stderr_has("updating VirtualService shop/demo at http://")
        .stderr_has("timed out")
        .stderr_has("reading it again to tell whether it was written failed too")
        .stderr_has("VirtualService shop/demo: may or may not be written; its state before this run: ")
        .stderr_has("VirtualService shop/demo: may or may not be rolled back (")
        .stderr_has("could not release the claim");
    assert_eq!(out.stderr.matches("nothing else was written").count(), 1, "one report: {}", out.stderr);
    drop(pause);
}

#[test]
fn sigterm_while_following_keeps_the_approved_step_and_releases_the_claim() {
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let child = spawn(&test, &["approve", "demo", "--to-end", "--yes", "--timeout", "60s"]);
    // Step 1 is approved; nothing moves the Rollout on, so the run follows it.
    let deadline = Instant::now() + Duration::from_secs(30);
    while rollout_status(&server)["canaryStatus"]["currentStepState"] != "StepReady" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, "TERM");
    let started = Instant::now();
    let out = finish(child).status(143);
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    out.stdout_has("rollout.rollouts.kruise.io/demo approved (step 1/3)")
        .stderr_has("interrupted (SIGTERM): stopped following")
        .stderr_has("VirtualService shop/demo: written and kept: Rollout demo is approved with it");
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][0]["destination"]["host"], "demo-canary", "step 1 routed");
    assert!(claims(&server).is_empty());
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

#[test]
fn an_httproute_replace_whose_reply_is_lost_garbled_or_hung_is_resolved() {
    for fault in [ReplyFault::Lost, ReplyFault::Garbled, ReplyFault::NeverSent] {
        for k in 1..=ROUTE_APPROVE_WRITES {
            let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
            server.reply_fault(Requests::Writes, k, Stage::AfterStore, fault);
            let out =
                Test::new().kubeconfig(&server).args(["approve", "store", "--yes", "--request-timeout", "2s"]).run();
            assert_eq!(out.status, 0, "{fault:?} after write {k}\n{}\n{}", out.stdout, out.stderr);
            assert!(route_approved_with_its_routing(&server), "{fault:?} after write {k}");
            assert!(claims(&server).is_empty(), "{fault:?} after write {k}: the claim is released");
            if k == 2 {
                assert!(out.stdout.contains("HTTPRoute shop/store updated (backup "), "{}", out.stdout);
                assert!(out.stdout.contains("the reply was lost"), "{fault:?}: {}", out.stdout);
            }
        }
    }
}

#[test]
fn an_httproute_edited_between_read_and_write_is_never_overwritten() {
    let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
    // Someone adds a hostname after this run read the route, before its replace is served.
    server.before_write(2, |store| {
        store.modify("gateway.networking.k8s.io", "httproutes", NAMESPACE, "store", |route| {
            route["spec"]["hostnames"] = json!(["store.example.com"])
        });
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
    for (name, code) in [("INT", 130), ("TERM", 143)] {
        for k in 2..=3 {
            let server = store(1, "StepPaused", &["v1", "v1beta1"]).start();
            let pause = server.pause(Requests::Writes, k, Stage::AfterStore);
            let test = Test::new().kubeconfig(&server);
            let child = spawn(&test, &["approve", "store", "--yes"]);
            assert!(pause.wait_until_held(Duration::from_secs(30)), "write {k} reached");
            signal(&child, name);
            std::thread::sleep(Duration::from_millis(200));
            pause.release();
            let out = finish(child);
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
