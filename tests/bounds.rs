//! Bounded waits against a misbehaving API server: hung reads, a server that never answers,
//! 503/429 storms, exec credential plugins that hang or are missing, `status -w --timeout`
//! while a request hangs. (Writes under faults are tested with the writer.)

use crate::support::Test;
use crate::support::cluster::*;
use fake_apiserver::{ReplyFault, Requests, Stage};
use std::time::{Duration, Instant};

/// The Rollout's GETs (the first read of every command).
fn rollout_reads() -> Requests {
    Requests::Matching(Rule::new(["get"]).resources(["rollouts"]))
}

/// Runs `args` and returns the output and how long it took.
fn timed(test: &Test, args: &[&str]) -> (crate::support::Output, Duration) {
    let started = Instant::now();
    let output = test.run_args(args);
    (output, started.elapsed())
}

#[test]
fn a_hung_read_fails_plan_and_status_within_the_request_timeout() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    for command in ["plan", "status"] {
        server.reply_fault(rollout_reads(), 1, Stage::BeforeStore, ReplyFault::NeverSent);
        let (output, took) = timed(&test, &[command, "demo", "--request-timeout", "1s"]);
        output
            .status(1)
            .stderr_has("reading rollouts.rollouts.kruise.io shop/demo at http://127.0.0.1:")
            .stderr_has("no answer within 1s (the request timeout: --request-timeout, 30s by default; 0 for none)");
        // Loose: the machine is shared and busy.
        assert!(took < Duration::from_secs(15), "{command} took {took:?}");
    }
}

#[test]
fn a_server_that_never_answers_is_given_up_on_after_the_default_timeout() {
    let server = shop(2, "StepPaused").start();
    server.hang_all();
    let (output, took) = timed(&Test::new().kubeconfig(&server), &["plan", "demo"]);
    output.status(1).stderr_has("no answer within 30s");
    assert!(took >= Duration::from_secs(29) && took < Duration::from_secs(90), "took {took:?}");
}

#[test]
fn request_timeout_zero_keeps_kubectls_no_timeout() {
    // A reply held for 2 s is still waited for with --request-timeout 0, not with 1s.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["plan", "demo"]).success(); // warm the discovery cache
    let held = server.pause(rollout_reads(), 1, Stage::AfterStore);
    let releaser = std::thread::spawn(move || {
        assert!(held.wait_until_held(Duration::from_secs(30)));
        std::thread::sleep(Duration::from_secs(2));
        held.release();
    });
    test.run_args(["plan", "demo", "--request-timeout", "0"]).success();
    releaser.join().unwrap();
}

#[test]
fn a_503_storm_is_retried_with_progress_within_a_budget_then_fails_clearly() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    // Two refusals, then answers: the command succeeds, and said it was waiting.
    server.storm(rollout_reads(), Some(2), 503, Some(1));
    let output =
        test.run_args(["plan", "demo"]).success().stderr_has("API server busy (503), retrying in 1s, 19s left\n");
    assert_eq!(output.stderr.matches("API server busy (503), retrying in 1s, ").count(), 2, "{}", output.stderr);
    // A storm that outlasts the budget: no more than 20 s of retries, then the server's error.
    server.storm(Requests::All, None, 503, Some(8));
    let (output, took) = timed(&test, &["plan", "demo"]);
    let output = output
        .status(1)
        .stderr_has("API server busy (503), retrying in 8s, 12s left\n")
        .stderr_has("API server busy (503): giving up (retries of a request are bounded to 20s in all)\n")
        .stderr_has("the server is currently unable to handle the request (503 ServiceUnavailable)");
    assert_eq!(output.stderr.matches("retrying in 8s").count(), 2, "{}", output.stderr);
    assert!(took >= Duration::from_secs(16) && took < Duration::from_secs(60), "took {took:?}");
    // Without Retry-After the client backs off from half a second.
    server.clear_faults();
    server.storm(rollout_reads(), Some(1), 429, None);
    test.run_args(["status", "demo"]).success().stderr_has("API server busy (429), retrying in 0.5s, ");
}

#[test]
fn a_429_on_a_write_is_retried_and_a_503_is_left_to_the_writer() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    server.storm(Requests::Writes, Some(1), 429, Some(1));
    test.run_args(["approve", "demo", "--yes"]).success().stderr_has("API server busy (429), retrying in 1s");
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady");

    // A 503 may come after a write was stored: it is not repeated blindly.
    let server = shop(2, "StepPaused").start();
    server.storm(Requests::Writes, Some(1), 503, Some(1));
    let output = Test::new().kubeconfig(&server).run_args(["approve", "demo", "--yes"]).status(1);
    assert!(!output.stderr.contains("retrying"), "{}", output.stderr);
    assert_eq!(server.writes().iter().filter(|w| w.status == Some(503)).count(), 1);
}

/// A kubeconfig for `server` whose user gets its credential from `command` (exec plugin).
fn exec_kubeconfig(test: Test, server: &FakeHandle, command: &str) -> Test {
    let kubeconfig = server.kubeconfig(NAMESPACE).replace(
        "    token: fake-token\n",
        &format!(
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: {command}\n      \
             interactiveMode: Never\n      installHint: install it with the cloud CLI\n"
        ),
    );
    test.file("kubeconfig", &kubeconfig)
}

fn plugin(test: Test, script: &str) -> Test {
    let test = test.file("plugin.sh", &format!("#!/bin/sh\n{script}\n"));
    let path = test.path("plugin.sh");
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    test
}

#[test]
fn an_exec_credential_plugin_provides_the_token() {
    let server = shop(2, "StepPaused").start();
    let test = plugin(
        Test::new(),
        r#"echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}'"#,
    );
    let command = test.path("plugin.sh").display().to_string();
    let test = exec_kubeconfig(test, &server, &command);
    test.run_args(["plan", "demo"]).success();
    let requests = server.requests();
    assert!(requests.iter().all(|r| r.authorization.as_deref() == Some("Bearer from-plugin")), "{requests:?}");
}

#[test]
fn a_hanging_exec_credential_plugin_is_stopped() {
    let server = shop(2, "StepPaused").start();
    let test = plugin(Test::new(), "exec sleep 60");
    let command = test.path("plugin.sh").display().to_string();
    let test = exec_kubeconfig(test, &server, &command);
    let (output, took) = timed(&test, &["plan", "demo", "--request-timeout", "1s"]);
    output.status(1).stderr_has(&format!(
        "the exec credential plugin {command:?} (users[].user.exec in the kubeconfig) did not finish within 1s and was stopped"
    ));
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert!(server.requests().is_empty());
}

#[test]
fn a_missing_exec_credential_plugin_is_named() {
    let server = shop(2, "StepPaused").start();
    let test = exec_kubeconfig(Test::new(), &server, "kubectl-rollout-lua-test-no-such-plugin");
    test.run_args(["plan", "demo"])
        .status(1)
        .stderr_has("cannot run the exec credential plugin \"kubectl-rollout-lua-test-no-such-plugin\"")
        .stderr_has("No such file or directory")
        .stderr_has("install it with the cloud CLI");
    let failing = plugin(Test::new(), "echo 'token expired' >&2; exit 3");
    let command = failing.path("plugin.sh").display().to_string();
    exec_kubeconfig(failing, &server, &command)
        .run_args(["plan", "demo"])
        .status(1)
        .stderr_has("token expired")
        .stderr_has("failed (exit status: 3)");
}

#[test]
fn status_watch_ends_on_time_while_a_request_hangs() {
    let server = shop(2, "StepPaused").start();
    // The first read answers; the second (two seconds later) never does.
    server.reply_fault(rollout_reads(), 2, Stage::BeforeStore, ReplyFault::NeverSent);
    let (output, took) = timed(&Test::new().kubeconfig(&server), &["status", "demo", "-w", "--timeout", "3s"]);
    output.status(1).stderr_has("timed out after 3s");
    assert!(took < Duration::from_secs(15), "took {took:?}");
}
