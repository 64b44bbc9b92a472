//! Edge cases: repeated Rollout names, and output streams closed early.

use crate::support::cluster::*;
use crate::support::{BINARY, Test};
use std::io::Read;
use std::process::{Command, Stdio};

/// The same Rollout named twice (`demo rollout/demo`) is read and shown once.
#[test]
fn plan_shows_a_rollout_named_twice_once() {
    let server = shop(2, "StepPaused").start();
    let out = Test::new().kubeconfig(&server).args(["plan", "demo", "rollout/demo"]).run().success();
    assert_eq!(out.stdout.matches("Rollout shop/demo\n").count(), 1, "{}", out.stdout);
    assert_eq!(out.stdout.matches("  VirtualService shop/demo: script").count(), 1, "{}", out.stdout);
    let rollout_reads: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.contains("/rollouts/"))
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(rollout_reads, ["/apis/rollouts.kruise.io/v1beta1/namespaces/shop/rollouts/demo"]);
    let json = Test::new()
        .kubeconfig(&server)
        .args(["plan", "rollouts.rollouts.kruise.io/demo", "demo", "rollout/demo", "-o", "json"])
        .run()
        .success()
        .json();
    assert_eq!(json["plans"].as_array().map(Vec::len), Some(1), "{json}");
}

/// Approving a Rollout named twice approves it once: one status patch, one step.
#[test]
fn approve_of_a_rollout_named_twice_approves_once() {
    let server = shop(2, "StepPaused").start();
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "rollout/demo", "--yes"])
        .run()
        .success()
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)");
    let patches: Vec<String> = writes(&server).into_iter().filter(|w| w.starts_with("PATCH")).collect();
    assert_eq!(patches, ["PATCH /apis/rollouts.kruise.io/v1beta1/namespaces/shop/rollouts/demo/status"]);
    assert_eq!(rollout_status(&server)["canaryStatus"]["currentStepState"], "StepReady");
}

/// `eval` of a chatty script, in `test`'s scrubbed environment, with stdout and stderr as given.
/// Its time limit is raised: a debug build takes about 1 s for its prints here, the default
/// limit, and longer on a busy machine (CI saw it time out).
fn eval_chatty(test: &Test, stdout: Stdio, stderr: Stdio) -> std::process::Child {
    Command::new(BINARY)
        .args(["eval", "s.lua", "--obj", "obj.json", "--lua-timeout", "60s"])
        .current_dir(test.path(""))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", test.path("home"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .expect("run the binary")
}

/// Far more than a pipe buffer of prints, so that some reach the pipe after it closed.
const CHATTY: &str = "for i = 1, 20000 do print('line', i, string.rep('x', 40)) end return obj.data";

/// A script's print to a closed stderr (`2>&1 | head -1`) neither panics nor fails the run.
#[test]
fn script_prints_to_a_closed_stderr() {
    let test =
        Test::new().file("s.lua", CHATTY).file("obj.json", "{\"data\": {\"spec\": {\"a\": 1}}, \"canaryWeight\": 20}");
    let mut child = eval_chatty(&test, Stdio::piped(), Stdio::piped());
    drop(child.stderr.take());
    let mut stdout = String::new();
    child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    let status = child.wait().unwrap();
    assert_ne!(status.code(), Some(101), "panicked");
    assert_eq!(status.code(), Some(0), "stdout:\n{stdout}");
    assert_eq!(stdout, "{\"spec\":{\"a\":1}}\n");
}

/// `… 2>&1 | head -1`: stdout and stderr on one pipe, closed after the first line.
#[test]
fn script_prints_to_a_pipe_closed_after_one_line() {
    let test = Test::new().file("s.lua", CHATTY).file("obj.json", "{\"data\": {}, \"canaryWeight\": 20}");
    let (mut reader, writer) = std::io::pipe().unwrap();
    let mut child = eval_chatty(&test, writer.try_clone().unwrap().into(), writer.into());
    let mut first = Vec::new();
    let mut byte = [0u8];
    while reader.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
        first.push(byte[0]);
    }
    drop(reader);
    let status = child.wait().unwrap();
    assert_eq!(String::from_utf8_lossy(&first), format!("[s.lua] line\t1\t{}", "x".repeat(40)));
    assert_ne!(status.code(), Some(101), "panicked");
    assert_eq!(status.code(), Some(0));
}
