//! `status` (once and followed) and `approve --until-step/--to-end` against the fake API server,
//! with a stand-in for the controller that moves the Rollout on once a step is approved.

use crate::support::cluster::*;
use crate::support::{Test, terminal_available};
use serde_json::json;
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
        .stdout_has("  Replicas: canary 1 (1 ready)\n")
        .stdout_has("VirtualService shop/demo   original")
        .stdout_has("built-in lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua (sha256 ");
    test.run_args(["approve", "demo", "--traffic-only", "--yes"]).success();
    test.run_args(["status", "demo"]).success().stdout_has("VirtualService shop/demo   at step 2");
    let mut edited = vs(&server);
    edited["spec"]["hosts"] = json!(["other"]);
    server.put_object(edited);
    let json = test.run_args(["status", "demo", "-o", "json"]).success().json();
    assert_eq!(json[0]["objects"][0]["position"], json!({"kind": "drifted"}));
    assert_eq!(json[0]["canaryReplicas"], 1);
    assert_eq!(json[0]["progress"], json!({"kind": "waitingForApproval"}));
    assert_eq!(writes(&server).iter().filter(|w| w.starts_with("PATCH")).count(), 0, "status writes nothing");
}

#[test]
fn status_shows_the_time_left_of_a_timed_pause() {
    let mut rollout = rollout(1, "StepPaused");
    rollout["spec"]["strategy"]["canary"]["steps"][0]["pause"] = json!({"duration": 3600});
    // The pause started 50 minutes ago: about 10 minutes are left.
    let started = std::time::SystemTime::now() - Duration::from_secs(3000);
    rollout["status"]["canaryStatus"]["lastUpdateTime"] = json!(rollout_lua::time::rfc3339(started));
    let server = serving(rollout).start();
    let out = Test::new().kubeconfig(&server).args(["status", "demo"]).run().success().stdout_has("pause 3600s");
    assert!(
        out.stdout.contains("StepPaused, resumes in 9m5") || out.stdout.contains("StepPaused, resumes in 10m00s"),
        "{}",
        out.stdout
    );
}

/// Moves the Rollout on as the controller would once a step is approved: StepReady becomes the
/// next step's StepPaused, and after the last step the release completes.
fn controller(server: &FakeHandle) -> (Arc<AtomicBool>, thread::JoinHandle<()>) {
    let stop = Arc::new(AtomicBool::new(false));
    let handle = {
        let (server, stop) = (server.clone_handle(), stop.clone());
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Some(mut rollout) = server.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo")
                    && rollout["status"]["canaryStatus"]["currentStepState"] == "StepReady"
                {
                    let step = rollout["status"]["canaryStatus"]["currentStepIndex"].as_i64().unwrap();
                    rollout["status"] = if step == 3 {
                        json!({"phase": "Healthy", "conditions": [{"type": "Succeeded", "status": "True"}]})
                    } else {
                        json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": step + 1, "currentStepState": "StepPaused"}})
                    };
                    server.put_object(rollout);
                }
                thread::sleep(Duration::from_millis(50));
            }
        })
    };
    (stop, handle)
}

#[test]
fn approve_until_a_step_approves_each_pause_on_the_way() {
    let server = shop(1, "StepPaused").start();
    let (stop, handle) = controller(&server);
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--until-step", "2", "--yes", "--timeout", "60s"])
        .run()
        .success()
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 1/3)")
        .stdout_has("rollout.rollouts.kruise.io/demo approved (step 2/3)")
        .stdout_has("approved every pause up to step 2");
    // Step 2 was approved last: the stand-in controller moves on to step 3 and stops there.
    for _ in 0..100 {
        if rollout_status(&server)["canaryStatus"]["currentStepIndex"] == 3 {
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    assert_eq!(
        rollout_status(&server)["canaryStatus"],
        json!({"currentStepIndex": 3, "currentStepState": "StepPaused"})
    );
    assert_eq!(vs(&server)["spec"]["http"][0]["route"][1]["weight"], 50, "step 2's traffic was applied");
}

#[test]
fn approve_to_the_end_follows_the_release_until_it_completes() {
    let server = shop(1, "StepPaused").start();
    let (stop, handle) = controller(&server);
    let out = Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--to-end", "--yes", "--timeout", "60s"])
        .run()
        .success();
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    out.stdout_has("approved (step 3/3)").stdout_has("the release completed");
}

#[test]
fn approve_until_a_step_stops_when_someone_else_edits_the_rollout() {
    let server = shop(1, "StepPaused").start();
    let editor = server.clone_handle();
    let handle = thread::spawn(move || {
        // Once step 1 is approved, someone edits the spec instead of the controller moving on.
        for _ in 0..200 {
            if let Some(mut rollout) = editor.object("rollouts.kruise.io", "*", "rollouts", NAMESPACE, "demo")
                && rollout["status"]["canaryStatus"]["currentStepState"] == "StepReady"
            {
                rollout["spec"]["strategy"]["canary"]["steps"][1]["traffic"] = json!("60%");
                editor.put_object(rollout);
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
    });
    Test::new()
        .kubeconfig(&server)
        .args(["approve", "demo", "--to-end", "--yes", "--timeout", "60s"])
        .run()
        .status(1)
        .stderr_has("Rollout demo was changed by someone else");
    handle.join().unwrap();
}

#[test]
fn status_watch_ends_when_the_release_ends_or_times_out() {
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    test.run_args(["status", "demo", "-w", "--until-paused"])
        .success()
        .stdout_has("shop/demo: Progressing, step 1/3 StepPaused (waiting for approval)");
    test.run_args(["status", "demo", "-w", "--timeout", "3s"]).status(1).stderr_has("timed out after 3s");
    let mut done = rollout(3, "Completed");
    done["status"] = json!({"phase": "Healthy", "conditions": [{"type": "Succeeded", "status": "True"}]});
    server.put_object(done);
    test.run_args(["status", "demo", "-w"]).success().stdout_has("(completed)");
}

#[test]
fn status_watch_redraws_in_place_on_a_terminal() {
    if !terminal_available() {
        return eprintln!("script (util-linux) not installed: skipped");
    }
    let server = shop(1, "StepPaused").start();
    // The builder sets NO_COLOR: it turns colour off, not the cursor moves of the redraw.
    let out = Test::new().kubeconfig(&server).args(["status", "demo", "-w", "--timeout", "3s"]).on_terminal().run();
    let screen = out.stdout.replace("\r\n", "\n");
    let (drawn, error) = screen.rsplit_once("error: ").expect("the timeout is reported");
    assert!(error.starts_with("timed out after 3s"), "{screen:?}");
    // Each redraw moves up over the rows the last frame took (the pseudo-terminal has no size,
    // so 80 columns) and clears them: the same frame is drawn over itself, never appended.
    let pieces: Vec<&str> = drawn.split("\x1b[J").collect();
    assert!(pieces.len() >= 2, "at least one redraw in 3 s (a read every 2 s): {screen:?}");
    let frame = pieces.last().unwrap();
    assert!(frame.starts_with("Rollout shop/demo\n") && !frame.contains('\x1b'), "{screen:?}");
    let rows: usize = frame.lines().map(|line| line.chars().count().div_ceil(80).max(1)).sum();
    for piece in &pieces[..pieces.len() - 1] {
        assert_eq!(*piece, format!("{frame}\x1b[{rows}F"), "{screen:?}");
    }
    // A dumb terminal moves no cursor: it gets the line-per-change form, as a log does.
    let dumb = Test::new()
        .kubeconfig(&server)
        .args(["status", "demo", "-w", "--until-paused"])
        .env("TERM", "dumb")
        .on_terminal()
        .run()
        .success()
        .stdout_has("shop/demo: Progressing, step 1/3 StepPaused (waiting for approval)");
    assert!(!dumb.stdout.contains('\x1b'), "{:?}", dumb.stdout);
}
