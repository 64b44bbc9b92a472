//! Shell completion: the checked-in scripts under `completions/` are what the binary prints, the
//! real shells load them, `__complete` answers kubectl's plugin-completion protocol (subcommands,
//! flags, values, files, and names from the cluster within its time budget), and kubectl itself
//! completes `kubectl rollout-lua …` through the helper.

use crate::support::cluster::{FakeHandle, NAMESPACE, exec_kubeconfig, plugin, rollout, shop};
use crate::support::{BINARY, Test, process_ended, repo};
use fake_apiserver::{ApiResourceDef, Requests};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Set to 1 to rewrite generated files (completion scripts, man pages) instead of comparing.
pub const UPDATE: &str = "UPDATE_GENERATED";
pub const REGENERATE: &str = "UPDATE_GENERATED=1 cargo test --test integration generated_files";

/// The script files under `completions/`, per `completions SHELL`.
const SCRIPTS: [(&str, &str); 6] = [
    ("bash", "kubectl-rollout_lua.bash"),
    ("zsh", "_kubectl-rollout_lua"),
    ("fish", "kubectl-rollout_lua.fish"),
    ("powershell", "kubectl-rollout_lua.ps1"),
    ("elvish", "kubectl-rollout_lua.elv"),
    ("nushell", "kubectl-rollout_lua.nu"),
];

/// kubectl's plugin-completion helper (kubectl ≥ 1.26 runs `kubectl_complete-<plugin>`). The
/// `--` keeps the plugin from reading the words as its own flags.
const HELPER: &str = "kubectl_complete-rollout_lua";
const HELPER_SCRIPT: &str = "#!/bin/sh
# kubectl (1.26+) runs this for `kubectl rollout-lua <TAB>`, with the words after the plugin name.
exec kubectl-rollout_lua __complete -- \"$@\"
";

/// Compares a generated file with what it should be; with UPDATE_GENERATED=1 rewrites it.
/// Returns a complaint when it is stale.
pub fn check_generated(path: &Path, expected: &[u8]) -> Option<String> {
    if std::env::var_os(UPDATE).is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        if std::fs::read(path).ok().as_deref() != Some(expected) {
            std::fs::write(path, expected).unwrap();
            eprintln!("rewrote {}", path.display());
        }
        return None;
    }
    match std::fs::read(path) {
        Ok(actual) if actual == expected => None,
        Ok(_) => Some(format!("{} is stale", path.display())),
        Err(e) => Some(format!("{}: {e}", path.display())),
    }
}

#[track_caller]
pub fn assert_fresh(complaints: Vec<String>) {
    assert!(complaints.is_empty(), "{}\nregenerate with: {REGENERATE}", complaints.join("\n"));
}

#[test]
fn generated_files_are_current() {
    let mut complaints = Vec::new();
    for (shell, file) in SCRIPTS {
        let out = Test::new().args(["completions", shell]).run().success();
        complaints.extend(check_generated(&repo("completions").join(file), out.stdout.as_bytes()));
    }
    let helper = repo("completions").join(HELPER);
    complaints.extend(check_generated(&helper, HELPER_SCRIPT.as_bytes()));
    use std::os::unix::fs::PermissionsExt;
    if std::env::var_os(UPDATE).is_some_and(|v| v == "1") {
        std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    } else if std::fs::metadata(&helper).is_ok_and(|m| m.permissions().mode() & 0o111 != 0o111) {
        complaints.push(format!("{} is not executable", helper.display()));
    }
    assert_fresh(complaints);
}

#[test]
fn scripts_are_registered_for_the_binary_and_hide_the_protocol_command() {
    let registrations = [
        ("bash", "complete -F _kubectl__rollout_lua -o nosort -o bashdefault -o default kubectl-rollout_lua\n"),
        ("zsh", "#compdef kubectl-rollout_lua\n"),
        ("fish", "complete -c kubectl-rollout_lua -n \"__fish_kubectl_rollout_lua_needs_command\" -f -a \"plan\""),
        ("powershell", "Register-ArgumentCompleter -Native -CommandName 'kubectl-rollout_lua'"),
        ("elvish", "set edit:completion:arg-completer[kubectl-rollout_lua] ="),
        ("nushell", "export extern \"kubectl-rollout_lua plan\" ["),
    ];
    // How each shell would offer the hidden subcommand.
    let offers = [
        ("bash", " __complete "),
        ("zsh", "'__complete:"),
        ("fish", "-a \"__complete\""),
        ("powershell", "[CompletionResult]::new('__complete'"),
        ("elvish", "cand __complete "),
        ("nushell", "__complete\" ["),
    ];
    for ((shell, registration), (_, offer)) in registrations.into_iter().zip(offers) {
        let out = Test::new().args(["completions", shell]).run().success().stdout_has(registration);
        let offered: Vec<&str> = out.stdout.lines().filter(|l| l.contains(offer)).collect();
        assert!(offered.is_empty(), "{shell} offers __complete: {offered:?}");
    }
}

/// The path of a program on PATH, or None (the test is then skipped).
fn tool(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join(name)).find(|p| p.is_file()));
    if found.is_none() {
        crate::support::skip(&format!("{name} not installed"));
    }
    found
}

fn run(command: &mut Command) -> (String, String, bool) {
    let out = command.output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// A temp dir holding the script for `shell` as the binary prints it.
fn script_file(test: &Test, shell: &str, name: &str) -> PathBuf {
    let out = test.run_args(["completions", shell]).success();
    let path = test.path(name);
    std::fs::write(&path, out.stdout).unwrap();
    path
}

#[test]
fn bash_loads_the_script_and_completes_subcommands_flags_and_values() {
    let Some(bash) = tool("bash") else { return };
    let test = Test::new();
    let script = script_file(&test, "bash", "kubectl-rollout_lua.bash");
    // What the bash function answers for a command line (the words, the last being completed).
    let probe = r#"source "$1" || exit 1
complete -p kubectl-rollout_lua
t() { COMP_WORDS=(kubectl-rollout_lua "$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=()
      _kubectl__rollout_lua kubectl-rollout_lua "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
      echo "[${COMPREPLY[*]}]"; }
t ""; t plan --fil; t plan -o ""; t approve --dry-run ""; t lua-obj --"#;
    let (stdout, stderr, ok) =
        run(Command::new(bash).args(["--norc", "--noprofile", "-c", probe, "bash"]).arg(&script));
    assert!(ok && stderr.is_empty(), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "complete -o bashdefault -o default -o nosort -F _kubectl__rollout_lua kubectl-rollout_lua");
    assert!(
        lines[1].contains(" plan approve restore status release-claim record test eval lua-obj completions help]"),
        "{stdout}"
    );
    assert!(!lines[1].contains("__complete"), "{stdout}");
    assert_eq!(
        &lines[2..],
        [
            "[--filename]",
            "[yaml json]",
            "[none client server]",
            // lua-obj reads no cluster and runs no script: only its own flags and the global ones.
            "[--output --output-file --verbose --no-color --help]"
        ]
    );
}

#[test]
fn zsh_loads_the_script() {
    let Some(zsh) = tool("zsh") else { return };
    let test = Test::new();
    let script = script_file(&test, "zsh", "_kubectl-rollout_lua");
    let zdotdir = test.path("zdotdir");
    std::fs::create_dir_all(&zdotdir).unwrap();
    let probe = r#"autoload -U compinit && compinit -u -d "$ZDOTDIR/.zcompdump" && source "$1" && print -r -- "$_comps[kubectl-rollout_lua]""#;
    let (stdout, stderr, ok) = run(Command::new(zsh)
        .args(["-f", "-c", probe, "zsh"])
        .arg(&script)
        .env("ZDOTDIR", &zdotdir)
        .env("HOME", &zdotdir));
    assert!(ok && stderr.is_empty(), "{stdout}{stderr}");
    assert_eq!(stdout, "_kubectl-rollout_lua\n");
}

#[test]
fn fish_loads_the_script_and_completes() {
    let Some(fish) = tool("fish") else { return };
    let test = Test::new();
    let script = script_file(&test, "fish", "kubectl-rollout_lua.fish");
    let home = test.path("home");
    std::fs::create_dir_all(&home).unwrap();
    let probe = r#"source $argv[1]; or exit 1
complete -C 'kubectl-rollout_lua '; echo ---
complete -C 'kubectl-rollout_lua plan --fil'; echo ---
complete -C 'kubectl-rollout_lua status -o '; echo ---
complete -C 'kubectl-rollout_lua completions '"#;
    let (stdout, stderr, ok) = run(Command::new(fish)
        .args(["--no-config", "-c", probe])
        .arg(&script)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share")));
    assert!(ok && stderr.is_empty(), "{stdout}{stderr}");
    let parts: Vec<Vec<&str>> =
        stdout.split("---\n").map(|part| part.lines().map(|l| l.split('\t').next().unwrap()).collect()).collect();
    assert_eq!(
        parts[0],
        [
            "approve",
            "completions",
            "eval",
            "help",
            "lua-obj",
            "plan",
            "record",
            "release-claim",
            "restore",
            "status",
            "test"
        ]
    );
    assert_eq!(parts[1], ["--filename"]);
    assert_eq!(parts[2], ["json", "yaml"]);
    // A positional's values, not file names (an operator trial's P1).
    assert_eq!(parts[3], ["bash", "elvish", "fish", "nushell", "powershell", "zsh"]);
}

// `__complete`, as kubectl_complete-rollout_lua runs it.

/// Runs `__complete -- WORDS` and returns its stdout (checked: exit 0, nothing on stderr).
#[track_caller]
fn complete(test: &Test, words: &[&str]) -> String {
    let out = test.run_args(["__complete", "--"].iter().chain(words));
    assert_eq!((out.status, out.stderr.as_str()), (0, ""), "__complete {words:?}: {}", out.stdout);
    out.stdout
}

/// The candidates without descriptions, and the directive.
#[track_caller]
fn candidates(test: &Test, words: &[&str]) -> (Vec<String>, String) {
    let stdout = complete(test, words);
    let mut lines: Vec<String> = stdout.lines().map(|l| l.split('\t').next().unwrap().to_string()).collect();
    let directive = lines.pop().unwrap_or_default();
    assert!(directive.starts_with(':'), "no directive last: {stdout}");
    (lines, directive)
}

#[test]
fn complete_lists_subcommands_with_descriptions() {
    let test = Test::new();
    let stdout = complete(&test, &[""]);
    assert!(stdout.starts_with("plan\tShow what a step does to the gateway objects"), "{stdout}");
    assert!(stdout.ends_with("\nhelp\tPrint this message or the help of the given subcommand(s)\n:4\n"), "{stdout}");
    assert!(!stdout.contains("__complete"), "{stdout}");
    assert_eq!(
        candidates(&test, &["re"]),
        (vec!["restore".into(), "release-claim".into(), "record".into()], ":4".into())
    );
    // Global flags before the subcommand are skipped over.
    assert_eq!(candidates(&test, &["-v", "--no-color", "ap"]).0, ["approve"]);
    assert_eq!(candidates(&test, &["help", "lu"]).0, ["lua-obj"]);
}

#[test]
fn complete_lists_flags_long_and_short_global_and_own() {
    let test = Test::new();
    let (flags, directive) = candidates(&test, &["plan", "-"]);
    assert_eq!(directive, ":4");
    for flag in
        ["--filename", "-f", "--step", "--dry-run", "-o", "--namespace", "-n", "--kubeconfig", "--context", "-h"]
    {
        assert!(flags.contains(&flag.to_string()), "{flag} missing from {flags:?}");
    }
    assert!(!flags.contains(&"--yes".to_string()) && !flags.contains(&"-V".to_string()), "{flags:?}");
    assert_eq!(candidates(&test, &["approve", "--ex"]).0, ["--expect-step"]);
    assert_eq!(candidates(&test, &["status", "--kube"]).0, ["--kubeconfig"]);
    // Cluster flags only on the commands that talk to a cluster.
    assert_eq!(candidates(&test, &["--kube"]).0, Vec::<String>::new());
    assert_eq!(candidates(&test, &["eval", "--kube"]).0, Vec::<String>::new());
    assert!(candidates(&test, &["-"]).0.contains(&"-V".to_string()));
    // A flag given once is not offered again, unless it can be repeated.
    assert_eq!(candidates(&test, &["plan", "--next", "--ne"]).0, Vec::<String>::new());
    assert_eq!(candidates(&test, &["plan", "-f", "a.yaml", "--file"]).0, ["--filename"]);
    assert!(complete(&test, &["plan", "--all-s"]).starts_with("--all-steps\tPlan every step in order\n"));
}

#[test]
fn complete_lists_values_of_value_flags() {
    let test = Test::new();
    assert_eq!(candidates(&test, &["plan", "-o", ""]), (vec!["yaml".into(), "json".into()], ":4".into()));
    assert_eq!(candidates(&test, &["status", "--output", "j"]).0, ["json"]);
    assert_eq!(candidates(&test, &["test", "-o", ""]).0, ["json"]);
    assert_eq!(candidates(&test, &["restore", "--dry-run", ""]).0, ["none", "client", "server"]);
    assert_eq!(candidates(&test, &["plan", "--dry-run=s"]).0, ["server"]);
    assert_eq!(candidates(&test, &["status", "-o=j"]).0, ["json"]);
    assert_eq!(candidates(&test, &["completions", ""]).0, ["bash", "zsh", "fish", "powershell", "elvish", "nushell"]);
    // A value without known candidates: none, and no file names either.
    assert_eq!(candidates(&test, &["plan", "--lua-timeout", ""]), (vec![], ":4".into()));
    assert_eq!(candidates(&test, &["approve", "--expect-step", ""]), (vec![], ":4".into()));
    let (kinds, directive) = candidates(&test, &["plan", "--script", "Virt"]);
    assert_eq!((kinds, directive.as_str()), (vec!["VirtualService.networking.istio.io=".to_string()], ":6"));
}

#[test]
fn complete_leaves_paths_to_the_shell() {
    let test = Test::new();
    for words in [
        &["plan", "-f", ""][..],
        &["plan", "--filename", "exa"],
        &["status", "--kubeconfig", ""],
        &["eval", ""],
        &["eval", "script.lua", "--obj", ""],
        &["lua-obj", ""],
        &["lua-obj", "case.yaml", "--output-file", ""],
        &["record", "demo", "--output-file", ""],
        &["restore", "--from-backup", ""],
        &["plan", "--script", "VirtualService.networking.istio.io=./s"],
    ] {
        assert_eq!(candidates(&test, words), (vec![], ":0".into()), "{words:?}");
    }
    // Folders only.
    assert_eq!(candidates(&test, &["plan", "--lua-dir", ""]), (vec![], ":16".into()));
    assert_eq!(candidates(&test, &["test", ""]), (vec![], ":16".into()));
    assert_eq!(candidates(&test, &["record", "demo", "--dir", ""]), (vec![], ":16".into()));
}

/// The shop server, also serving namespaces, with a second Rollout `canary` in namespace `other`.
fn server_with_namespaces() -> FakeHandle {
    let mut namespaces = ApiResourceDef::new("", "v1", "Namespace", "namespaces");
    namespaces.namespaced = false;
    let mut other = rollout(1, "StepPaused");
    other["metadata"]["name"] = json!("canary");
    other["metadata"]["namespace"] = json!("other");
    let namespace = |name: &str| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    shop(1, "StepPaused")
        .resource(namespaces)
        .object(namespace(NAMESPACE))
        .object(namespace("other"))
        .object(namespace("kruise-rollout"))
        .object(other)
        .start()
}

#[test]
fn complete_lists_rollouts_from_the_cluster() {
    let server = server_with_namespaces();
    let test = Test::new().kubeconfig(&server);
    for command in ["plan", "approve", "restore", "status", "record"] {
        assert_eq!(candidates(&test, &[command, ""]), (vec!["demo".into()], ":4".into()), "{command}");
    }
    // The namespace from -n among the words, else the context's.
    assert_eq!(candidates(&test, &["plan", "-n", "other", ""]).0, ["canary"]);
    assert_eq!(candidates(&test, &["status", "--namespace=other", "c"]).0, ["canary"]);
    assert_eq!(candidates(&test, &["approve", "--context", "other", ""]).0, ["canary"]);
    assert_eq!(candidates(&test, &["status", "-n", "other", "x"]).0, Vec::<String>::new());
    // An empty value is not given, as on the command line.
    assert_eq!(candidates(&test, &["plan", "-n", "", ""]).0, ["demo"]);
    assert_eq!(candidates(&test, &["plan", "--context=", "-n", "", ""]).0, ["demo"]);
    // Names already given are not offered again; record takes one.
    assert_eq!(candidates(&test, &["status", "demo", ""]).0, Vec::<String>::new());
    assert_eq!(candidates(&test, &["record", "demo", ""]), (vec![], ":4".into()));
    // Also without the helper's `--`.
    let out = test.run_args(["__complete", "plan", "-n", "other", ""]).success();
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("canary\n:4\n", ""));
}

#[test]
fn complete_lists_namespaces_and_contexts() {
    let server = server_with_namespaces();
    let test = Test::new().kubeconfig(&server);
    assert_eq!(
        candidates(&test, &["plan", "-n", ""]),
        (vec!["kruise-rollout".into(), "other".into(), "shop".into()], ":4".into())
    );
    assert_eq!(candidates(&test, &["record", "--namespace", "o"]).0, ["other"]);
    assert_eq!(candidates(&test, &["plan", "--controller-namespace", "k"]).0, ["kruise-rollout"]);
    assert_eq!(candidates(&test, &["status", "--context", ""]), (vec!["fake".into(), "other".into()], ":4".into()));
    // Contexts of the kubeconfig named among the words (no cluster needed).
    let test = test.file(
        "elsewhere.yaml",
        "apiVersion: v1\nkind: Config\ncontexts:\n- name: prod\n  context: {cluster: p, user: u}\n",
    );
    let kubeconfig = test.path("elsewhere.yaml");
    assert_eq!(candidates(&test, &["plan", "--kubeconfig", kubeconfig.to_str().unwrap(), "--context", ""]).0, ["prod"]);
}

/// A kubeconfig whose server is `http://127.0.0.1:PORT`.
fn kubeconfig_for_port(port: u16) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"http://127.0.0.1:{port}\"}}\n\
         contexts:\n- name: c\n  context: {{cluster: c, user: u, namespace: shop}}\ncurrent-context: c\n\
         users:\n- name: u\n  user: {{token: t}}\n"
    )
}

#[test]
fn complete_is_silent_and_fast_when_the_cluster_is_unreachable() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    }; // closed again: connections are refused
    let test = Test::new().file("kubeconfig", &kubeconfig_for_port(port));
    for words in [&["plan", ""][..], &["plan", "-n", ""], &["status", "--context", "c", "d"]] {
        let started = Instant::now();
        assert_eq!(candidates(&test, words), (vec![], ":4".into()), "{words:?}");
        assert!(started.elapsed() < Duration::from_secs(2), "{words:?} took {:?}", started.elapsed());
    }
    // No kubeconfig at all: the same.
    let test = Test::new();
    assert_eq!(candidates(&test, &["approve", ""]), (vec![], ":4".into()));
    // Subcommands and flags need no cluster.
    let test = Test::new().file("kubeconfig", &kubeconfig_for_port(port));
    assert_eq!(candidates(&test, &["plan", "--next"]).0, ["--next"]);
}

#[test]
fn complete_gives_up_on_a_slow_cluster_within_its_budget() {
    let server = shop(1, "StepPaused").latency(Duration::from_secs(10)).start();
    let test = Test::new().kubeconfig(&server);
    let started = Instant::now();
    assert_eq!(candidates(&test, &["plan", ""]), (vec![], ":4".into()));
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(900) && took < Duration::from_secs(4), "took {took:?}");
}

#[test]
fn complete_says_nothing_of_a_busy_cluster_on_stderr() {
    // `candidates` checks that stderr stays empty: the retry notices a busy server gets
    // elsewhere ("API server busy (503), retrying in 0.5s, …") are not printed in a TAB.
    let server = shop(1, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    // Busy for the whole budget: no names.
    for status in [503, 429] {
        server.storm(Requests::All, None, status, None);
        assert_eq!(candidates(&test, &["approve", ""]), (vec![], ":4".into()), "{status}");
        server.clear_faults();
    }
    // Busy once: the retry within the budget brings the names.
    server.storm(Requests::All, Some(1), 429, None);
    assert_eq!(candidates(&test, &["approve", ""]), (vec!["demo".into()], ":4".into()));
}

#[test]
fn complete_gives_up_on_a_slow_exec_plugin_within_its_budget_and_stops_it() {
    // A wrapper that takes 30 s: the plugin waits for a process it started.
    let server = server_with_namespaces();
    let script = r#"sleep 30 & echo $! >"$(dirname "$0")/child"; wait"#;
    let test = plugin(Test::new(), script);
    let command = test.path("plugin.sh").display().to_string();
    let test = exec_kubeconfig(test, &server, &command, "IfAvailable");
    let started = Instant::now();
    assert_eq!(candidates(&test, &["plan", ""]), (vec![], ":4".into()));
    // Loose: the budget is 1 s, the machine is shared and busy.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert!(process_ended(&test.path("child")), "the plugin and the process it started are stopped");
}

#[test]
fn complete_runs_an_exec_plugin_without_the_terminal() {
    let server = server_with_namespaces();
    // The plugin notes whether it may prompt and whether its stdin is a terminal, and prompts
    // on stderr.
    let script = r#"dir=$(dirname "$0")
printf '%s\n' "$KUBERNETES_EXEC_INFO" >"$dir/info"
if [ -t 0 ]; then echo terminal; else echo none; fi >"$dir/stdin"
echo 'Password:' >&2
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'"#;
    let with_mode = |mode: &str| {
        let test = plugin(Test::new(), script);
        let command = test.path("plugin.sh").display().to_string();
        exec_kubeconfig(test, &server, &command, mode)
    };
    let on_terminal = crate::support::terminal_available();
    if !on_terminal {
        crate::support::skip("no `script`: completion is run without a terminal");
    }
    let complete = |test: Test| {
        let test = if on_terminal { test.on_terminal() } else { test };
        let out = test.run_args(["__complete", "--", "plan", ""]).success();
        (out.stdout.replace("\r\n", "\n"), test)
    };
    // IfAvailable: the plugin runs as without a terminal, and its prompt is not drawn into the
    // command line being typed.
    let (screen, test) = complete(with_mode("IfAvailable"));
    assert_eq!(screen, "demo\n:4\n");
    let info: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(test.path("info")).unwrap()).unwrap();
    assert_eq!(info["spec"]["interactive"], false);
    assert_eq!(std::fs::read_to_string(test.path("stdin")).unwrap(), "none\n");
    // Always: no names rather than a prompt; the plugin is not run.
    let (screen, test) = complete(with_mode("Always"));
    assert_eq!(screen, ":4\n");
    assert!(!test.path("info").exists(), "the plugin did not run");
}

// kubectl itself.

/// A PATH with the plugin, its completion helper (the checked-in one) and kubectl.
fn plugin_path(test: &Test) -> Option<String> {
    let kubectl = tool("kubectl")?;
    let bin = test.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(BINARY, bin.join("kubectl-rollout_lua")).unwrap();
    std::os::unix::fs::symlink(repo("completions").join(HELPER), bin.join(HELPER)).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join(HELPER), std::fs::Permissions::from_mode(0o755)).unwrap();
    Some(format!("{}:{}:/usr/bin:/bin", bin.display(), kubectl.parent().unwrap().display()))
}

fn kubectl_complete(test: &Test, path: &str, words: &[&str]) -> String {
    std::fs::create_dir_all(test.path("home")).unwrap();
    let (stdout, stderr, ok) = run(Command::new("kubectl")
        .args(["__complete", "rollout-lua"])
        .args(words)
        .env_clear()
        .env("PATH", path)
        .env("HOME", test.path("home"))
        .env("KUBECONFIG", test.path("kubeconfig"))
        .env("NO_COLOR", "1"));
    assert!(ok, "{stdout}{stderr}");
    stdout
}

#[test]
fn kubectl_completes_the_plugin_through_the_helper() {
    let server = shop(2, "StepPaused").start();
    let test = Test::new().kubeconfig(&server);
    let Some(path) = plugin_path(&test) else { return };
    let subcommands = kubectl_complete(&test, &path, &[""]);
    for line in ["plan\tShow what a step does", "\napprove\t", "\nlua-obj\t", "\n:4\n"] {
        assert!(subcommands.contains(line), "{line:?} missing from {subcommands}");
    }
    assert_eq!(kubectl_complete(&test, &path, &["plan", ""]), "demo\n:4\n");
    assert_eq!(
        kubectl_complete(&test, &path, &["plan", "-n", "shop", "--dry"]),
        "--dry-run\tAlso send the planned objects to the API server with dryRun=All, so admission webhooks (e.g. Istio's validation) judge them\n:4\n"
    );
    assert_eq!(kubectl_complete(&test, &path, &["status", "-o", ""]), "yaml\njson\n:4\n");
}
