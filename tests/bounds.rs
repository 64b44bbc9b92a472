//! Bounded waits against a misbehaving API server: hung reads, a server that never answers,
//! 503/429 storms, exec credential plugins that hang or are missing, `status -w --timeout`
//! while a request hangs, `approve --timeout` over a slow approval, a hung renewal of the claim
//! and a question left open; and bounded reads of what is not a file of the command line: the
//! kubeconfig and the files it names, an exec credential plugin's output, a reply of the API
//! server. (Writes under faults are tested with the writer.)

use crate::support::cluster::*;
use crate::support::{TerminalSession, Test, process_ended, terminal_available};
use fake_apiserver::{ReplyFault, Requests, Rule, Stage};
use serde_json::json;
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
            .stderr_has("no answer within 1s (--request-timeout)");
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
fn a_discovery_cache_file_that_is_no_file_is_discovered_again() {
    // A FIFO in the cache hung the run on its read, then on its write: only a regular file is
    // read, and the fresh discovery is renamed into place.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["plan", "demo"]).success(); // warm the discovery cache
    let cached = walk(&test.path("home/.cache/kubectl-rollout-lua/discovery"));
    let rollouts = cached.iter().find(|p| p.ends_with("rollouts.kruise.io/v1beta1.json")).expect("cached");
    std::fs::remove_file(rollouts).unwrap();
    match std::process::Command::new("mkfifo").arg(rollouts).status() {
        Ok(status) if status.success() => {}
        _ => return crate::support::skip("mkfifo could not make a FIFO"),
    }
    server.clear_log();
    test.spawn(&["plan", "demo"]).finish_within(Duration::from_secs(10)).success();
    assert!(server.requests().iter().any(|r| r.path == "/apis/rollouts.kruise.io/v1beta1"), "discovered again");
    assert!(std::fs::metadata(rollouts).unwrap().is_file(), "cached again, in a file");
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let entries = std::fs::read_dir(dir).into_iter().flatten().map(|e| e.unwrap().path());
    entries.flat_map(|path| if path.is_dir() { walk(&path) } else { vec![path] }).collect()
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
    // `--request-timeout` bounds the request, its retries included, as kubectl's does.
    server.clear_faults();
    server.storm(Requests::All, None, 503, Some(1));
    let (output, took) = timed(&test, &["plan", "demo", "--request-timeout", "3s"]);
    output.status(1).stderr_has("API server busy (503), retrying in 1s, 1s left\n").stderr_has(
        "API server busy (503): giving up (the request's time limit, 3s (--request-timeout), would pass first)\n",
    );
    assert!(took >= Duration::from_secs(2) && took < Duration::from_secs(10), "took {took:?}");
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

#[test]
fn a_read_whose_connection_is_lost_is_asked_again_as_kubectl_does_and_a_write_is_not() {
    // client-go sends a GET again a second after its connection was closed or reset before the
    // reply; this tool failed the read.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    server.reply_fault(rollout_reads(), 1, Stage::BeforeStore, ReplyFault::Lost);
    let output = test
        .run_args(["plan", "demo"])
        .success()
        .stderr_has("connection to the API server lost before the reply, retrying in 1s, 19s left\n");
    assert!(!output.stdout.contains("warning"), "{}", output.stdout);
    let workload_reads = Requests::Matching(Rule::new(["get"]).resources(["deployments"]));
    server.reply_fault(workload_reads, 1, Stage::BeforeStore, ReplyFault::Lost);
    let output = test.run_args(["approve", "demo", "--yes"]).success();
    assert_eq!(output.stderr.matches("lost before the reply, retrying").count(), 1, "{}", output.stderr);
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady");

    // A write's reply lost may come after it was stored: it is not sent again, but read back.
    let server = shop(2, "StepPaused").start();
    server.reply_fault(Requests::Writes, 1, Stage::BeforeStore, ReplyFault::Lost);
    let output = Test::new().kubeconfig(&server).run_args(["approve", "demo", "--yes"]).status(1);
    assert!(!output.stderr.contains("retrying"), "{}", output.stderr);
    assert_eq!(server.writes().len(), 1, "{:?}", server.writes());
}

/// A plugin handing out the fake server's expiring tokens (`fake-token-<now>`), saying they
/// expire `expires_in` seconds later (None: saying nothing), and counting its runs in `runs`.
fn token_plugin(expires_in: Option<u64>) -> Test {
    let expiry = match expires_in {
        Some(seconds) => {
            format!(r#",\"expirationTimestamp\":\"$(date -u -d @$((now + {seconds})) +%Y-%m-%dT%H:%M:%SZ)\""#)
        }
        None => String::new(),
    };
    plugin(
        Test::new(),
        &format!(
            r#"echo run >>"$(dirname "$0")/runs"
now=$(date +%s)
echo "{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"fake-token-$now\"{expiry}}}}}""#
        ),
    )
}

fn plugin_runs(test: &Test) -> usize {
    std::fs::read_to_string(test.path("runs")).unwrap_or_default().lines().count()
}

#[test]
fn an_exec_credential_that_expires_is_renewed_once_it_expires_or_when_refused() {
    // The API server takes a token for 2 seconds after it was handed out. The plugin does not
    // say when its token expires: once refused (401), the plugin runs again and the request is
    // sent again. A run of 6 seconds follows the Rollout, and releases its claim at the end.
    let server = shop(1, "StepPaused").expiring_tokens(Duration::from_secs(2)).start();
    let test = token_plugin(None);
    let command = test.path("plugin.sh").display().to_string();
    let test = exec_kubeconfig(test, &server, &command, "Never");
    let (output, _) = timed(&test, &["approve", "demo", "--to-end", "--yes", "--timeout", "6s"]);
    let output = output.status(1).stdout_has("approved (step 1/3)").stderr_has("timed out after 6s");
    assert!(!output.stderr.contains("Unauthorized"), "{}", output.stderr);
    assert!(server.requests().iter().any(|r| r.status == Some(401)), "a token expired on the way");
    assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "the claim is released");
    assert!(plugin_runs(&test) >= 2, "the plugin ran again: {}", plugin_runs(&test));

    // The plugin says its token expires 3 seconds after it was handed out (as the server takes
    // it): a new one is fetched once it has expired, as client-go fetches it (one sent as it
    // expires is refused and sent again with a new one). The watch is opened again each second
    // (asked to end after half the request timeout).
    let server = shop(1, "StepPaused").expiring_tokens(Duration::from_secs(3)).start();
    let test = token_plugin(Some(3));
    let command = test.path("plugin.sh").display().to_string();
    let test = exec_kubeconfig(test, &server, &command, "Never");
    let (output, _) = timed(&test, &["status", "demo", "-w", "--timeout", "5s", "--request-timeout", "2s"]);
    let output = output.status(1).stderr_has("timed out after 5s");
    assert!(!output.stderr.contains("Unauthorized"), "{}", output.stderr);
    assert!(plugin_runs(&test) >= 2, "the plugin ran again: {}", plugin_runs(&test));

    // A token good for a few seconds more serves each request of a run until it expires, as in
    // kubectl (a connection trial: the plugin ran again for each of a run's requests).
    let server = shop(1, "StepPaused").start();
    let test = token_plugin(Some(8));
    let command = test.path("plugin.sh").display().to_string();
    let test = exec_kubeconfig(test, &server, &command, "Never");
    test.run_args(["status", "demo"]).success();
    assert_eq!(plugin_runs(&test), 1);
}

#[test]
fn a_hanging_exec_credential_plugin_is_stopped() {
    let server = shop(2, "StepPaused").start();
    let test = plugin(Test::new(), "exec sleep 60");
    let command = test.path("plugin.sh").display().to_string();
    let test = exec_kubeconfig(test, &server, &command, "Never");
    let (output, took) = timed(&test, &["plan", "demo", "--request-timeout", "1s"]);
    output.status(1).stderr_has(&format!(
        "the exec credential plugin {command:?} (users[].user.exec in the kubeconfig) did not finish within 1s and was stopped"
    ));
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert!(server.requests().is_empty());
}

#[test]
fn a_hanging_exec_credential_plugin_is_stopped_with_the_processes_it_started() {
    // A wrapper: the plugin waits for a process it started, which holds this run's stderr.
    let server = shop(2, "StepPaused").start();
    let test = plugin(Test::new(), r#"sleep 60 & echo $! >"$(dirname "$0")/child"; wait"#);
    let command = test.path("plugin.sh").display().to_string();
    let test = exec_kubeconfig(test, &server, &command, "Never");
    let (output, took) = timed(&test, &["plan", "demo", "--request-timeout", "1s"]);
    output.status(1).stderr_has("did not finish within 1s and was stopped");
    // The run's stderr is read to its end: the process holding it ended too.
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert!(process_ended(&test.path("child")), "the plugin's child is stopped");
}

/// A plugin that notes what it was told (`info`) and whether its stdin is a terminal
/// (`stdin`), says something on stderr, then hands out a token.
const NOTING_PLUGIN: &str = r#"dir=$(dirname "$0")
printf '%s\n' "$KUBERNETES_EXEC_INFO" >"$dir/info"
if [ -t 0 ]; then echo terminal; else cat; fi >"$dir/stdin"
# Field 5 of /proc/PID/stat is the process group.
if [ "$(cut -d' ' -f5 /proc/$$/stat)" = "$(cut -d' ' -f5 /proc/$PPID/stat)" ]; then echo shared; else echo own; fi >"$dir/group"
echo 'a word from the plugin' >&2
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'"#;

/// What the plugin was told and saw (`NOTING_PLUGIN`): `spec.interactive` and its stdin.
fn noted(test: &Test) -> (bool, String) {
    let info: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(test.path("info")).unwrap()).unwrap();
    (info["spec"]["interactive"].as_bool().unwrap(), std::fs::read_to_string(test.path("stdin")).unwrap())
}

/// Whether the plugin (`NOTING_PLUGIN`) ran in the command's process group (`"shared\n"`) or
/// in one of its own (`"own\n"`).
fn group(test: &Test) -> String {
    std::fs::read_to_string(test.path("group")).unwrap()
}

#[test]
fn an_exec_credential_plugin_is_interactive_only_on_a_terminal() {
    let server = shop(2, "StepPaused").start();
    let with_mode = |mode: &str| {
        let test = plugin(Test::new(), NOTING_PLUGIN);
        let command = test.path("plugin.sh").display().to_string();
        (exec_kubeconfig(test, &server, &command, mode), command)
    };
    // No terminal: IfAvailable is not interactive, and the command's stdin is not handed over.
    let (test, _) = with_mode("IfAvailable");
    let test = test.stdin("typed");
    test.run_args(["plan", "demo"]).success().stderr_has("a word from the plugin");
    assert_eq!(noted(&test), (false, String::new()));
    // With no terminal to send Ctrl-C, it has a process group of its own (stopped whole at its limit).
    assert_eq!(group(&test), "own\n");
    // Always is refused at once (as client-go does), the plugin not run.
    let (test, command) = with_mode("Always");
    let (output, took) = timed(&test, &["plan", "demo"]);
    output.status(1).stderr_has(&format!(
        "the exec credential plugin {command:?} (users[].user.exec in the kubeconfig) cannot support interactive \
         mode: standard input is not a terminal (its interactiveMode is Always)"
    ));
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert!(!test.path("info").exists(), "the plugin did not run");
    if !terminal_available() {
        return crate::support::skip("no `script` to run the binary on a terminal");
    }
    // On a terminal both are interactive, and the plugin gets the terminal. It stays in the
    // terminal's process group, where Ctrl-C ends it with the command; so does one that may
    // not prompt.
    for mode in ["IfAvailable", "Always", "Never"] {
        let test = with_mode(mode).0.on_terminal();
        test.run_args(["plan", "demo"]).success().stdout_has("a word from the plugin");
        let interactive = mode != "Never";
        let stdin = if interactive { "terminal\n" } else { "" };
        assert_eq!(noted(&test), (interactive, stdin.into()), "{mode}");
        assert_eq!(group(&test), "shared\n", "{mode}");
    }
}

#[test]
fn an_exec_credential_plugin_output_that_is_not_the_configured_exec_credential_is_refused() {
    let server = shop(2, "StepPaused").start();
    let credential = |version: &str| {
        format!(
            r#"echo '{{"apiVersion":"client.authentication.k8s.io/{version}","kind":"ExecCredential","status":{{"token":"t"}}}}'"#
        )
    };
    let cases = [
        (
            format!("echo 'Login succeeded'\n{}", credential("v1")),
            "its output is not an ExecCredential object: it starts with \"Login succeeded\"".to_string(),
        ),
        (
            credential("v1beta1"),
            "it is configured to use API version client.authentication.k8s.io/v1 (users[].user.exec.apiVersion), \
             but it returned version client.authentication.k8s.io/v1beta1"
                .to_string(),
        ),
    ];
    for (script, message) in cases {
        let test = plugin(Test::new(), &script);
        let command = test.path("plugin.sh").display().to_string();
        let test = exec_kubeconfig(test, &server, &command, "Never");
        test.run_args(["plan", "demo"]).status(1).stderr_has(&format!(
            "the exec credential plugin {command:?} (users[].user.exec in the kubeconfig): {message}"
        ));
    }
    assert!(server.requests().is_empty());
}

#[test]
fn a_v1_exec_credential_plugin_without_its_interactive_mode_is_refused_as_kubectl_refuses_it() {
    let server = shop(2, "StepPaused").start();
    let exec = "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: never-run\n";
    Test::new().kubeconfig_over_tls(&server, exec).run_args(["plan", "demo"]).status(1).stderr_has(
        "error: the exec credential plugin \"never-run\" (users[].user.exec in the kubeconfig) has no interactiveMode, which apiVersion client.authentication.k8s.io/v1 requires (kubectl refuses it too)",
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    // Without an apiVersion it is refused too (a review, s52).
    let exec = "    exec:\n      command: never-run\n      interactiveMode: Never\n";
    Test::new().kubeconfig_over_tls(&server, exec).run_args(["plan", "demo"]).status(1).stderr_has(
        "error: the exec credential plugin \"never-run\" (users[].user.exec in the kubeconfig) has no apiVersion, which kubectl requires too",
    );
    // A version client-go no longer takes (a connection trial: it was run, and worked).
    let exec = "    exec:\n      apiVersion: client.authentication.k8s.io/v1alpha1\n      command: never-run\n";
    Test::new().kubeconfig_over_tls(&server, exec).run_args(["plan", "demo"]).status(1).stderr_has(
        "error: the exec credential plugin \"never-run\" (users[].user.exec in the kubeconfig) has apiVersion client.authentication.k8s.io/v1alpha1, which kubectl refuses too (exec plugin: invalid apiVersion)",
    );
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[test]
fn a_missing_exec_credential_plugin_is_named() {
    let server = shop(2, "StepPaused").start();
    let test = exec_kubeconfig(Test::new(), &server, "kubectl-rollout-lua-test-no-such-plugin", "Never");
    test.run_args(["plan", "demo"])
        .status(1)
        .stderr_has("cannot run the exec credential plugin \"kubectl-rollout-lua-test-no-such-plugin\"")
        .stderr_has("No such file or directory")
        .stderr_has("install it with the cloud CLI");
    let failing = plugin(Test::new(), "echo 'token expired' >&2; exit 3");
    let command = failing.path("plugin.sh").display().to_string();
    exec_kubeconfig(failing, &server, &command, "Never")
        .run_args(["plan", "demo"])
        .status(1)
        .stderr_has("token expired")
        .stderr_has("failed (exit status: 3)");
}

#[test]
fn an_exec_credential_plugin_whose_child_keeps_its_output_open_is_named() {
    let server = shop(2, "StepPaused").start();
    let credential =
        r#"echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'"#;
    // The plugin exits at once, but a process it started holds its stdout open for 20 s (its
    // stderr, this test's, is let go: the test waits for this run's output to end).
    let test = plugin(Test::new(), &format!("{credential}\nsleep 20 2>/dev/null &"));
    let command = test.path("plugin.sh").display().to_string();
    let test = exec_kubeconfig(test, &server, &command, "Never");
    let (output, took) = timed(&test, &["plan", "demo"]);
    output.status(1).stderr_has(&format!(
        "the exec credential plugin {command:?} (users[].user.exec in the kubeconfig) exited, but its output did not end"
    ));
    assert!(took < Duration::from_secs(15), "not waited for: took {took:?}");
    assert!(server.requests().is_empty());
    // A process it started with its output elsewhere is no matter.
    let test = plugin(Test::new(), &format!("{credential}\nsleep 5 >/dev/null 2>&1 &"));
    let command = test.path("plugin.sh").display().to_string();
    exec_kubeconfig(test, &server, &command, "Never").run_args(["plan", "demo"]).success();
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

/// The approvals (status patches) of a run.
fn approvals() -> Requests {
    Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]))
}

#[test]
fn approve_timeout_counts_from_the_confirmation_and_says_what_it_waited_for() {
    // Nothing moves the Rollout on after its approval: the timeout names it, where it was read.
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["approve", "demo", "--to-end", "--yes", "--timeout", "3s"]).status(1).stderr_has(
        "timed out after 3s waiting for Rollout shop/demo to pause again, complete or fail (it is at step 1/3 StepReady: progressing)",
    );
    // A regression: the clock started once the first approval was written, so a slow approval
    // (here held 3s) made the sequence outlast --timeout 2s by as long. Counted from the
    // confirmation, it has passed once the approval is written: the run gives up before it
    // reads the Rollout again (the approval, written, stands).
    let server = shop(1, "StepPaused").start();
    let held = server.pause(approvals(), 1, Stage::BeforeStore);
    let test = Test::new().kubeconfig(&server);
    let child = test.spawn(&["approve", "demo", "--to-end", "--yes", "--timeout", "2s"]);
    assert!(held.wait_until_held(Duration::from_secs(30)), "the approval is sent");
    std::thread::sleep(Duration::from_secs(3));
    held.release();
    child
        .finish_within(Duration::from_secs(30))
        .status(1)
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 1/3)")
        .stderr_has("timed out after 2s waiting for Rollout shop/demo to pause again, complete or fail (approved at step 1/3, not read since)")
        .stderr_has("VirtualService shop/demo: written and kept: Rollout demo is approved with it (step 1/3)");
    assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "the claim is released");
}

#[test]
fn approve_timeout_cuts_a_hung_renewal_of_the_claim_which_is_released_all_the_same() {
    // A regression: renewing the claim was outside --timeout (a hung Lease update ran 53s for
    // --timeout 25s). The renewal is due 20s after the claim was written, at the first change
    // the run sees then: here it is stored, and its reply never comes (no request timeout).
    let server = shop(1, "StepPaused").start();
    let renewals = Requests::Matching(Rule::new(["update"]).resources(["leases"]));
    server.reply_fault(renewals, 1, Stage::AfterStore, ReplyFault::NeverSent);
    let test = Test::new().kubeconfig(&server);
    let approve = ["approve", "demo", "--to-end", "--yes", "--timeout", "30s", "--request-timeout", "0"];
    let child = test.spawn(&approve);
    child.wait_for_stdout("approved (step 1/3)");
    std::thread::sleep(Duration::from_secs(21));
    server.patch_object("rollouts.kruise.io", "rollouts", NAMESPACE, "demo", &json!({"status": {"message": "x"}}));
    let out = child.finish_within(Duration::from_secs(60)).status(1).stderr_has(
        "timed out after 30s renewing the claim, waiting for Rollout shop/demo to pause again, complete or fail (it is at step 1/3 StepReady: progressing)",
    );
    let renewed = server.writes().into_iter().any(|w| w.method == "PUT" && w.path.contains("/leases/"));
    assert!(renewed, "the renewal was sent");
    // Its claim, renewed without this run hearing of it, is still its own: released.
    assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "{}", out.stderr);
    assert!(!out.stderr.contains("could not release"), "{}", out.stderr);
}

#[test]
fn approve_timeout_ends_a_later_question_which_renews_the_claim_meanwhile() {
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    // A regression: a question after the confirmation (someone else's edit at a later step)
    // waited without end, and without renewing the claim. Once step 1 is approved, the
    // Rollout moves on to step 2's pause, and someone edits the VirtualService between the
    // run's read of it and its write; nobody answers the question.
    let server = shop(1, "StepPaused").start();
    let mover = {
        let server = server.clone_handle();
        std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(30);
            while rollout_status(&server)["canaryStatus"]["currentStepState"] != "StepReady" {
                assert!(Instant::now() < deadline, "step 1 approved");
                std::thread::sleep(Duration::from_millis(20));
            }
            someone_edits(&server, When::Before(1), VIRTUAL_SERVICE, |vs| vs["spec"]["hosts"] = json!(["demo", "x"]));
            let status = json!({"status": {"canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepPaused"}}});
            server.patch_object("rollouts.kruise.io", "rollouts", NAMESPACE, "demo", &status);
        })
    };
    let test = Test::new().kubeconfig(&server);
    let mut session = test.on_terminal_session(&["approve", "demo", "--to-end", "--timeout", "25s"], Some("stty -a"));
    session.wait_for("Only 'yes' goes ahead: ");
    session.type_keys(b"yes\n");
    session.wait_for("Overwrite their change? Only 'yes' goes ahead: ");
    mover.join().unwrap();
    let (status, screen) = session.finish();
    assert!(status.is_some(), "{screen}");
    assert!(screen.contains("timed out after 25s waiting for an answer to \"Overwrite their change?\""), "{screen}");
    // Nothing of step 2 was written: their edit stands, the Rollout waits at step 2.
    assert_eq!(vs(&server)["spec"]["hosts"], json!(["demo", "x"]));
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused");
    let renewed = server.writes().into_iter().any(|w| w.method == "PUT" && w.path.contains("/leases/"));
    assert!(renewed, "the claim is renewed while the question waits (20s after it was taken)");
    assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "the claim is released");
    let modes: Vec<&str> = screen[screen.find("speed ").expect("stty's output")..].split_whitespace().collect();
    for mode in ["icanon", "echo", "isig"] {
        assert!(modes.contains(&mode), "the terminal is put back: {mode}: {modes:?}");
    }
}

/// `approve demo` at step 2 on a terminal, waiting at its confirmation (None, said, without one).
fn approve_at_its_confirmation() -> Option<(FakeHandle, Test, TerminalSession)> {
    if !terminal_available() {
        crate::support::skip("script (util-linux) not installed");
        return None;
    }
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let session = test.on_terminal_session(&["approve", "demo"], None);
    session.wait_for("Only 'yes' goes ahead: ");
    Some((server, test, session))
}

#[test]
fn the_confirmation_renews_the_claim_while_it_waits() {
    // A regression (audit s33 writes F2): the first question did not renew the claim, which
    // lapsed 120s after it was taken: another run could take the Rollout over meanwhile.
    let Some((server, _test, mut session)) = approve_at_its_confirmation() else { return };
    let deadline = Instant::now() + Duration::from_secs(40);
    while !server.writes().into_iter().any(|w| w.method == "PUT" && w.path.contains("/leases/")) {
        assert!(Instant::now() < deadline, "the claim is renewed while the question waits (20s after it was taken)");
        std::thread::sleep(Duration::from_millis(200));
    }
    session.type_keys(b"yes\n");
    let (status, screen) = session.finish();
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{screen}");
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady", "{screen}");
    assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "the claim is released");
}

#[test]
fn a_claim_taken_over_at_the_confirmation_ends_the_question_with_nothing_written() {
    // The renewal the confirmation makes finds the claim someone else's: the run stops there.
    let Some((server, _test, session)) = approve_at_its_confirmation() else { return };
    let mut lease = server.objects("coordination.k8s.io", "leases").remove(0);
    lease["spec"]["holderIdentity"] = json!("joe@desk (pid 77)");
    lease["spec"]["acquireTime"] = json!("2026-01-01T00:00:00.000000Z");
    server.put_object(lease);
    let (status, screen) = session.finish();
    assert_eq!(status.and_then(|s| s.code()), Some(3), "{screen}");
    assert!(screen.contains("was taken over by someone else"), "{screen}");
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused", "nothing approved");
    assert!(vs(&server)["metadata"]["annotations"].is_null(), "nothing written: {screen}");
    assert_eq!(server.objects("coordination.k8s.io", "leases")[0]["spec"]["holderIdentity"], "joe@desk (pid 77)");
}

#[test]
fn a_gateway_object_read_that_times_out_is_not_read_again_per_rollout() {
    // status reads each Rollout again on its own when reading them together fails, to show the
    // others; a read that got no answer is the server's failure, and is not waited for twice.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let object_reads = || Requests::Matching(Rule::new(["get", "list"]).resources(["virtualservices"]));
    server.reply_fault(object_reads(), 1, Stage::BeforeStore, ReplyFault::NeverSent);
    server.clear_log();
    let (output, took) = timed(&test, &["status", "--request-timeout", "1s"]);
    output.status(1).stderr_has("no answer within 1s");
    let reads = server.requests().iter().filter(|r| r.path.contains("/virtualservices")).count();
    assert_eq!(reads, 1, "the VirtualService is read once");
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

#[test]
fn a_reply_that_trickles_in_is_cut_off_at_the_request_timeout() {
    // Every byte of the reply comes within the limit (one every 0.2s), the whole reply would
    // take a minute: the limit is on the request, not on each wait for data.
    let server = shop(2, "StepPaused").start();
    let cases = [
        // A fresh discovery cache: the first request discovers the Rollout's API.
        (Requests::All, &["status", "demo"][..], "discovering rollouts.kruise.io/v1beta1 at http://127.0.0.1:"),
        (rollout_reads(), &["status", "demo"], "reading rollouts.rollouts.kruise.io shop/demo at http://127.0.0.1:"),
        (
            Requests::AccessReviews,
            &["approve", "demo", "--yes"],
            "asking the API server what you may do (SelfSubjectAccessReview) at http://127.0.0.1:",
        ),
    ];
    for (requests, args, request) in cases {
        let test = Test::new().kubeconfig(&server);
        server.reply_fault(requests, 1, Stage::BeforeStore, ReplyFault::Drip);
        let (output, took) = timed(&test, &[args, &["--request-timeout", "2s"]].concat());
        output.status(1).stderr_has(request).stderr_has("timed out, no answer within 2s");
        // Loose: the machine is shared and busy.
        assert!(took < Duration::from_secs(2 + 5), "{args:?}: took {took:?}");
        server.clear_faults();
    }
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused", "nothing written");

    // A write whose reply trickles in: at the limit its outcome is unknown, and a read tells.
    let approval = Requests::Matching(Rule::new(["patch"]).resources(["rollouts/status"]));
    server.reply_fault(approval, 1, Stage::AfterStore, ReplyFault::Drip);
    let args = ["approve", "demo", "--yes", "--request-timeout", "2s"];
    let (output, took) = timed(&Test::new().kubeconfig(&server), &args);
    output.success().stdout_has(
        "rollout.rollouts.kruise.io/demo approved (step 2/3) (no whole reply came within 2s; a fresh read shows the write)",
    );
    assert!(took < Duration::from_secs(2 + 5), "approve: took {took:?}");
}

#[test]
fn a_kubeconfig_is_read_within_a_bound() {
    // A wrong path, given or listed in KUBECONFIG: refused at the limit, not read to the end.
    let server = shop(2, "StepPaused").start();
    let given = Test::new().kubeconfig(&server);
    let listed = Test::new().env("KUBECONFIG", &format!("{}:/dev/zero", given.path("kubeconfig").display()));
    for (test, args) in [(&given, &["--kubeconfig", "/dev/zero"][..]), (&listed, &[])] {
        let (output, took) = timed(test, &[&["approve", "demo", "--yes"], args].concat());
        output
            .status(1)
            .stderr_has(
                "error: reading the kubeconfig: /dev/zero: the input passes 16 MiB, the limit for a kubeconfig\n",
            )
            .stderr_has("tip: point KUBECONFIG or --kubeconfig at a kubeconfig file");
        assert!(took < Duration::from_secs(15), "took {took:?}");
    }
    assert!(server.requests().is_empty(), "nothing sent, so nothing written");
}

/// A kubeconfig for `server` (in `folder/config`, over TLS) whose user's token is in the file
/// `token_file`.
fn token_file_kubeconfig(test: Test, server: &FakeHandle, folder: &str, token_file: &str) -> Test {
    let test = test.kubeconfig_over_tls(server, &format!("    tokenFile: {token_file}\n"));
    let kubeconfig = std::fs::read_to_string(test.path("kubeconfig")).unwrap();
    test.file(&format!("{folder}/config"), &kubeconfig)
        .file(&format!("{folder}/ca.pem"), &crate::support::net::test_ca())
}

#[test]
fn a_token_file_is_read_within_a_bound() {
    let server = shop(2, "StepPaused").start();
    let test = token_file_kubeconfig(Test::new(), &server, "kube", "/dev/zero");
    let (output, took) = timed(&test, &["approve", "demo", "--yes", "--kubeconfig", "kube/config"]);
    output.status(1).stderr_has(
        "error: reading the kubeconfig's tokenFile (of user \"fake-user\"): /dev/zero: the input passes 1 MiB, the limit for a file a \
         kubeconfig names (tokenFile, client-certificate, client-key, certificate-authority)",
    );
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert!(server.requests().is_empty(), "nothing sent, so nothing written");

    // A token file named relative to the kubeconfig's folder (not to the working one), in a
    // kubeconfig in UTF-16 (as Windows tools write it): read as kubectl reads them.
    let test = token_file_kubeconfig(Test::new(), &server, "kube", "token").file("kube/token", "fake-token");
    let utf16 = std::fs::read_to_string(test.path("kube/config")).unwrap().encode_utf16().collect::<Vec<u16>>();
    let bytes: Vec<u8> = [0xFEFF].iter().chain(&utf16).flat_map(|unit| unit.to_le_bytes()).collect();
    std::fs::write(test.path("kube/config"), bytes).unwrap();
    test.run_args(["status", "demo", "--kubeconfig", "kube/config"]).success();
}

/// The limit of an exec credential plugin's output.
const MAX_PLUGIN_OUTPUT: usize = 1 << 20;

#[test]
fn an_exec_credential_plugin_that_prints_too_much_is_stopped() {
    let server = shop(2, "StepPaused").start();
    for script in ["exec cat /dev/zero", &format!("head -c {} /dev/zero", MAX_PLUGIN_OUTPUT + 1)] {
        let test = plugin(Test::new(), script);
        let command = test.path("plugin.sh").display().to_string();
        let test = exec_kubeconfig(test, &server, &command, "Never");
        let (output, took) = timed(&test, &["approve", "demo", "--yes"]);
        output.status(1).stderr_has(&format!(
            "error: the exec credential plugin {command:?} (users[].user.exec in the kubeconfig) printed more than 1 MiB \
             (the limit of its output; an ExecCredential is a few KB)"
        ));
        // Well within its time limit (60s).
        assert!(took < Duration::from_secs(15), "{script}: took {took:?}");
    }
    assert!(server.requests().is_empty(), "nothing sent, so nothing written");
    // An ExecCredential padded to the limit is read.
    let credential =
        r#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}"#;
    let padding = MAX_PLUGIN_OUTPUT - credential.len();
    let test = plugin(Test::new(), &format!("printf '%s' '{credential}'; head -c {padding} /dev/zero | tr '\\0' ' '"));
    let command = test.path("plugin.sh").display().to_string();
    exec_kubeconfig(test, &server, &command, "Never").run_args(["plan", "demo"]).success();
}

/// The limit of one reply from the API server, and a reply just past it.
const MAX_REPLY: u64 = 256 << 20;
const PAST_THE_REPLY_LIMIT: u64 = MAX_REPLY + (1 << 20);

#[test]
fn an_api_reply_past_its_size_limit_is_cut_off() {
    // An endless reply is cut at the limit, chunked (no length said) or not.
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let list = Requests::Matching(Rule::new(["list"]).resources(["rollouts"]));
    let cases = [
        (rollout_reads(), false, &["approve", "demo", "--yes"][..], "reading rollouts.rollouts.kruise.io shop/demo"),
        (list, true, &["status"], "listing rollouts.rollouts.kruise.io in shop"),
    ];
    for (requests, content_length, args, request) in cases {
        let oversized = ReplyFault::Oversized { bytes: PAST_THE_REPLY_LIMIT, content_length };
        server.reply_fault(requests, 1, Stage::BeforeStore, oversized);
        let (output, took) = timed(&test, args);
        output.status(1).stderr_has(&format!(
            "error: {request} at http://127.0.0.1:{}/: the reply passed 256 MiB, the limit of one reply (an object is \
             at most 1.5 MiB; only a list of very many objects comes near it)",
            server.address().port()
        ));
        // Loose: the machine is shared and busy, and 256 MiB are read first.
        assert!(took < Duration::from_secs(60), "{args:?}: took {took:?}");
        server.clear_faults();
    }
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepPaused", "nothing written");
    assert!(routing_writes(&server).is_empty(), "nothing written");
    assert!(server.objects("coordination.k8s.io", "leases").is_empty(), "the claim is released");
}
