//! Output conventions: colour only on a terminal and never with NO_COLOR, --no-color or
//! TERM=dumb; KUBECTL_EXTERNAL_DIFF; a closed pipe is not an error.

use crate::support::{BINARY, Test, repo, terminal_available};
use std::process::{Command, Stdio};

const ESC: char = '\u{1b}';

fn plan() -> Test {
    Test::new().args(["plan".as_ref(), "-f".as_ref(), repo("examples/istio-canary-ab").as_os_str()])
}

#[test]
fn colour_only_where_wanted() {
    assert!(!plan().without_env("NO_COLOR").run().success().stdout.contains(ESC), "a pipe gets no colour");
    assert!(
        plan().without_env("NO_COLOR").env("CLICOLOR_FORCE", "1").run().success().stdout.contains(ESC),
        "forced colour works"
    );
    assert!(!plan().env("CLICOLOR_FORCE", "1").run().success().stdout.contains(ESC), "NO_COLOR wins");
    assert!(
        !plan()
            .without_env("NO_COLOR")
            .env("CLICOLOR_FORCE", "1")
            .arg("--no-color")
            .run()
            .success()
            .stdout
            .contains(ESC),
        "--no-color wins"
    );
}

#[test]
fn colour_on_a_terminal_unless_term_is_dumb() {
    if !terminal_available() {
        return crate::support::skip("script (util-linux) not installed");
    }
    // CI=true as on a CI machine, where anstream alone would colour even a dumb terminal.
    let under_pty =
        |term: &str| plan().without_env("NO_COLOR").env("TERM", term).env("CI", "true").on_terminal().run().success();
    assert!(under_pty("xterm-256color").stdout.contains(ESC), "a terminal gets colour");
    assert!(!under_pty("dumb").stdout.contains(ESC), "TERM=dumb gets none");
}

#[test]
fn external_diff_programs_are_run_as_kubectl_diff_runs_them() {
    let out = plan().env("KUBECTL_EXTERNAL_DIFF", "diff -u -N").run().success();
    assert!(out.stdout.contains("/LIVE/networking.istio.io.v1beta1.VirtualService.demo.echoserver"), "{}", out.stdout);
    assert!(
        out.stdout.contains("/MERGED/networking.istio.io.v1beta1.VirtualService.demo.echoserver"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("+  - match:"), "{}", out.stdout);
    // Its words in the error, from stdout when it wrote none to stderr.
    plan()
        .file("mydiff", "echo 'usage: mydiff A B'; exit 3\n")
        .env("KUBECTL_EXTERNAL_DIFF", "sh mydiff")
        .run()
        .status(1)
        .stderr_has("KUBECTL_EXTERNAL_DIFF (sh mydiff) failed (exit 3): usage: mydiff A B\n");
    plan().env("KUBECTL_EXTERNAL_DIFF", "false").run().success();
}

#[test]
fn a_closed_pipe_is_not_an_error_and_leaves_the_detailed_exit_code() {
    let plan = |extra: &[&str]| {
        let home = tempfile::tempdir().unwrap();
        let mut child = Command::new(BINARY)
            .args(["plan", "-R", "-f"])
            .arg(repo("examples"))
            .args(extra)
            .env_clear()
            .env("HOME", home.path())
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the output is written (like `| head` finishing early).
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
        out.status.code()
    };
    assert_eq!(plan(&[]), Some(0));
    // A gate (`plan --detailed-exitcode | head`) still learns that changes are pending: it
    // passed as `no changes` (a scripting trial).
    assert_eq!(plan(&["--detailed-exitcode"]), Some(2));
    assert_eq!(plan(&["--detailed-exitcode", "-o", "json"]), Some(2));
}

#[test]
fn the_stored_original_is_one_short_line_unless_asked_for() {
    let step2 = |extra: &[&str]| plan().args(["--step", "2"]).args(extra).run().success().stdout;
    let short = step2(&[]);
    let line = short.lines().find(|l| l.contains("original-spec-configuration")).expect("the annotation is shown");
    assert!(line.starts_with("+    rollouts.kruise.io/original-spec-configuration: stored (sha256 "), "{line}");
    assert!(line.ends_with(", 160 bytes)") && line.len() < 100, "{line}");
    let full = step2(&["--show-stored-original"]);
    assert!(full.contains(r#"original-spec-configuration: "{\"spec\":{\"gateways\""#), "{full}");
    // The machine form always holds the object as it would be written.
    let json: serde_json::Value = serde_json::from_str(&step2(&["-o", "json"])).unwrap();
    let stage = &json["plans"][0]["stages"][0];
    assert_eq!(
        (&stage["step"], &stage["routing"]),
        (&serde_json::json!(2), &serde_json::json!("matches [header user-agent=pc] OR [header x-beta-tester=yes]"))
    );
    let planned = &stage["objects"][0]["planned"];
    assert!(
        planned["metadata"]["annotations"]["rollouts.kruise.io/original-spec-configuration"]
            .as_str()
            .unwrap()
            .starts_with("{\"spec\"")
    );
}

#[test]
fn summary_is_a_line_per_step_and_object() {
    let out = Test::new()
        .args([
            "plan".as_ref(),
            "-R".as_ref(),
            "-f".as_ref(),
            repo("examples/full-link-canary").as_os_str(),
            "--summary".as_ref(),
        ])
        .run()
        .success();
    assert_eq!(
        out.stdout.lines().take(5).collect::<Vec<_>>(),
        [
            "Rollout demo/rollout-mocka",
            "  step 1/2  VirtualService demo/mocka   replace  TrafficRouting mocka-tr: matches [header my-request-id=canary]",
            "  step 1/2  DestinationRule demo/mocka  replace  TrafficRouting mocka-tr: matches [header my-request-id=canary]",
            "  step 2/2  VirtualService demo/mocka   replace  TrafficRouting mocka-tr: matches [header my-request-id=canary]",
            "  step 2/2  DestinationRule demo/mocka  replace  TrafficRouting mocka-tr: matches [header my-request-id=canary]",
        ]
    );
    assert!(out.stdout.lines().count() < 20, "{}", out.stdout);
    assert!(out.stdout.ends_with("Plan: 8 to change, 0 already as planned (counted per step and object).\n"));
    let traffic = plan().arg("--summary").run().success().stdout;
    assert!(
        traffic.contains("  step 3/4  VirtualService demo/echoserver  replace  traffic 50% (canary 50 / stable 50)\n"),
        "{traffic}"
    );
    assert!(
        traffic.contains(
            "  step 4/4  VirtualService demo/echoserver  replace  original routing (no traffic, no matches)\n"
        ),
        "{traffic}"
    );
    plan().args(["--summary", "-o", "json"]).run().status(1).stderr_has("cannot be used with");
}

/// Whether `text` holds an escape sequence other than this tool's colours (`ESC [ digits m`) or
/// a carriage return: what could move the cursor, clear the screen or write the clipboard.
fn drives_the_terminal(text: &str) -> bool {
    text.contains('\r')
        || text.match_indices(ESC).any(|(at, _)| {
            let code = &text[at + 1..];
            !(code.starts_with('[')
                && code[1..].find('m').is_some_and(|m| code[1..1 + m].bytes().all(|b| b.is_ascii_digit() || b == b';')))
        })
}

#[test]
fn text_from_a_file_or_a_cluster_cannot_drive_the_terminal() {
    use crate::support::cluster::*;
    // A header value that clears the screen, writes the clipboard and overwrites a line.
    let hostile = "pc\u{1b}[2J\u{1b}[H\u{1b}]52;c;ZWNobw==\u{7}\r\u{1b}[2K\u{202e}";
    let hostile_rollout = std::fs::read_to_string(repo("examples/istio-canary-ab/rollout.yaml")).unwrap().replacen(
        "value: pc",
        &format!("value: {}", serde_json::to_string(hostile).unwrap()),
        1,
    );
    let service = std::fs::read_to_string(repo("examples/istio-canary-ab/virtualservice.yaml")).unwrap();
    for colour in [true, false] {
        let test = Test::new()
            .file("m/rollout.yaml", &hostile_rollout)
            .file("m/vs.yaml", &service)
            .args(["plan", "-f", "m", "--step", "1"]);
        let test = if colour { test.without_env("NO_COLOR").env("CLICOLOR_FORCE", "1") } else { test };
        let out = test.run().success();
        assert!(!drives_the_terminal(&out.stdout), "colour {colour}: {:?}", out.stdout);
        assert!(
            out.stdout.contains(r"user-agent=pc\u{1b}[2J\u{1b}[H\u{1b}]52;c;ZWNobw==\u{7}\u{d}\u{1b}[2K\u{202e} AND"),
            "{}",
            out.stdout
        );
        assert_eq!(out.stdout.contains(ESC), colour, "only this tool's colours, and only with colour on");
    }

    // A status message and a claim's holder, from the cluster.
    let mut rollout = rollout(2, "StepPaused");
    rollout["status"]["message"] = serde_json::json!("step 2\r\u{1b}[2K all good, approve freely\u{1b}]0;title\u{7}");
    let claim = serde_json::json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "rollout-lua.demo", "namespace": NAMESPACE, "annotations": {"kubectl-rollout-lua/command": "approve\u{1b}]8;;https://x/\u{7}demo"}},
        "spec": {"holderIdentity": "eve\u{1b}]52;c;cm0=\u{7}", "leaseDurationSeconds": 120,
                 "acquireTime": "2026-01-01T00:00:00.000000Z", "renewTime": "2026-01-01T00:00:00.000000Z"}
    });
    let server = serving(rollout).object(claim).start();
    let out = Test::new()
        .kubeconfig(&server)
        .without_env("NO_COLOR")
        .env("CLICOLOR_FORCE", "1")
        .args(["status", "demo"])
        .run()
        .success();
    assert!(!drives_the_terminal(&out.stdout), "{:?}", out.stdout);
    assert!(out.stdout.contains(r"step 2\u{d}\u{1b}[2K all good"), "{}", out.stdout);
    assert!(out.stdout.contains(r"eve\u{1b}]52;c;cm0=\u{7}"), "{}", out.stdout);

    // An error naming a file whose name is hostile.
    let out = Test::new().file("a\u{1b}[2Jb.yaml", "kind: [").args(["plan", "-f", "a\u{1b}[2Jb.yaml"]).run().status(1);
    assert!(!drives_the_terminal(&out.stderr), "{:?}", out.stderr);
    assert!(out.stderr.contains(r"a\u{1b}[2Jb.yaml"), "{}", out.stderr);
}
