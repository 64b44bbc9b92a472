//! The command line as a new user meets it: `--help`, and the advice a mistake gets.

use crate::support::{Test, repo};
use clap::CommandFactory;
use rollout_lua::Cli;

const COMMANDS: [&str; 11] =
    ["plan", "approve", "restore", "status", "release-claim", "record", "test", "eval", "lua-obj", "completions", ""];

#[test]
fn help_groups_the_flags_and_shows_examples_everywhere() {
    let test = Test::new();
    for command in COMMANDS {
        let args: Vec<&str> = [command, "--help"].into_iter().filter(|a| !a.is_empty()).collect();
        let help = test.run_args(&args).success().stdout;
        assert!(help.contains("\nExamples:\n  "), "{command}: {help}");
        assert!(help.contains("\nGlobal options:\n  -v, --verbose"), "{command}: {help}");
        // kubectl's connection flags only where a cluster is read.
        let cluster = ["plan", "approve", "restore", "status", "release-claim", "record"].contains(&command);
        assert_eq!(
            help.contains("\nCluster options:\n") && help.contains("--kubeconfig"),
            cluster,
            "{command}: {help}"
        );
        let scripts = !["release-claim", "lua-obj", "completions", ""].contains(&command);
        assert_eq!(
            help.contains("\nScript options:\n") && help.contains("--lua-timeout"),
            scripts,
            "{command}: {help}"
        );
    }
}

/// Every line of `--help` fits in 100 columns (clap's width when the output is not a terminal),
/// and the examples and exit codes are printed as written: clap re-wraps a longer line, and a
/// wrapped command starts a line as a new command would, so a pasted example runs the wrong thing.
#[test]
fn help_fits_in_100_columns_and_keeps_the_examples_as_written() {
    // However narrow the terminal (clap reads COLUMNS when there is none).
    let test = Test::new().env("COLUMNS", "60");
    let mut root = Cli::command();
    root.build();
    let visible = root.get_subcommands().filter(|sub| !sub.is_hide_set() && sub.get_name() != "help");
    let commands: Vec<&clap::Command> = std::iter::once(&root).chain(visible).collect();
    for definition in commands {
        let command = if std::ptr::eq(definition, &root) { "" } else { definition.get_name() };
        let args: Vec<&str> = [command, "--help"].into_iter().filter(|a| !a.is_empty()).collect();
        let help = test.run_args(&args).success().stdout;
        for line in help.lines() {
            assert!(line.chars().count() <= 100, "{command} --help has a line over 100 columns:\n{line}");
        }
        let after = definition.get_after_help().unwrap().to_string();
        assert!(help.ends_with(&format!("{after}\n")), "{command} --help re-wraps its examples:\n{help}");
        // A line indented deeper than a command continues the one before it, which says so.
        let examples = after.split("\n\nExit codes:").next().unwrap();
        for pair in examples.lines().collect::<Vec<_>>().windows(2) {
            if pair[1].starts_with("   ") {
                assert!(pair[0].ends_with(" \\"), "{command}: `{}` continues a line without a `\\`", pair[1]);
            }
        }
    }
}

#[test]
fn a_flag_of_another_command_names_that_command() {
    Test::new()
        .args(["approve", "-f", "rollout.yaml"])
        .run()
        .status(1)
        .stderr_has("error: unexpected argument '-f' found\n\n  tip: '-f' is an option of plan, not of approve\n")
        .stderr_has("Usage: kubectl rollout-lua approve [OPTIONS] [ROLLOUT]...");
    let out = Test::new().args(["-n", "shop", "status", "demo"]).run().status(1);
    assert!(out.stderr.contains("tip: the options of status go after its name: kubectl rollout-lua status -n …"));
    assert!(!out.stderr.contains("'-- -n'"), "{}", out.stderr);
}

#[test]
fn verbs_of_kubectl_and_argo_rollouts_name_the_command_for_the_job() {
    for (verb, command) in [("get", "status"), ("promote", "approve"), ("undo", "restore"), ("diff", "plan")] {
        let out = Test::new().args([verb, "demo"]).run().status(1);
        assert!(out.stderr.contains(&format!("tip: `{command}` ")), "{verb}: {}", out.stderr);
        assert!(!out.stderr.contains("'test'"), "{verb}: {}", out.stderr);
    }
}

#[test]
fn plan_from_files_names_only_the_cluster_flags_given() {
    let example = repo("examples/istio-canary-ab");
    let example = example.to_str().unwrap();
    Test::new()
        .args(["plan", "-f", example, "--next"])
        .run()
        .status(1)
        .stderr_has("error: --next needs a cluster: name Rollouts without -f\n");
    Test::new()
        .args(["plan", "-f", example, "--dry-run=server", "-l", "app=x"])
        .run()
        .status(1)
        .stderr_has("error: -l and --dry-run need a cluster: name Rollouts without -f\n");
}

/// The rough texts a new user met, each checked where it is said.
#[test]
fn error_texts_say_things_once_and_name_the_place() {
    // A YAML error: `error:` once, the file, line and column.
    let out = Test::new()
        .file("bad.yaml", "apiVersion: v1\nkind: X\nmetadata:\n  name: [a\n")
        .args(["plan", "-f", "bad.yaml"])
        .run();
    let out = out.status(1).stderr_has("error: bad.yaml:4:9: unclosed bracket '['");
    assert_eq!(out.stderr.matches("error").count(), 1, "{}", out.stderr);
    // Two documents pasted together without `---`: no advice about the parser's options.
    let pasted = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n";
    let out = Test::new().file("two.yaml", pasted).args(["plan", "-f", "two.yaml"]).run().status(1);
    let out = out.stderr_has(
        "key \"apiVersion\" given twice, at lines 1 and 5 (two documents without a --- line between them?)",
    );
    assert!(!out.stderr.contains("DuplicateKeyPolicy"), "{}", out.stderr);
    // A tab in the indentation: called a tab, on its own line.
    Test::new()
        .file("tab.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n")
        .args(["plan", "-f", "tab.yaml"])
        .run()
        .status(1)
        .stderr_has("tab.yaml:4:")
        .stderr_has("(line 4 is indented with a tab: YAML indents with spaces only)");
    // A kubeconfig that is not there: its path, quoted once (kube's own text quotes it twice).
    let test = Test::new();
    let out = test.run_args(["status", "demo", "--kubeconfig", "missing.yaml"]).status(1);
    let out = out.stderr_has("error: reading the kubeconfig: missing.yaml: No such file or directory");
    assert!(!out.stderr.contains("'\""), "{}", out.stderr);
}

#[test]
fn flags_that_would_be_ignored_are_refused() {
    // A regression: each was accepted and silently had no effect.
    let test = Test::new();
    test.run_args(["status", "--timeout", "5s"])
        .status(1)
        .stderr_has("error: the following required arguments were not provided:\n  --watch");
    test.run_args(["approve", "demo", "--timeout", "5m"])
        .status(1)
        .stderr_has("error: the following required arguments were not provided:\n  <--until-step <N>|--to-end>");
    test.run_args(["plan", "-f", "x.yaml", "--show-obj", "--detailed-exitcode"])
        .status(1)
        .stderr_has("error: the argument '--show-obj' cannot be used with '--detailed-exitcode'");
    // Steps count from 1: a step 0 is refused before anything is read.
    test.run_args(["approve", "demo", "--expect-step", "0"]).status(1).stderr_has(
        "error: invalid value '0' for '--expect-step <N>': steps count from 1, as the Rollout's status does",
    );
}

#[test]
fn completion_as_kubectl_spells_it_is_completions() {
    let test = Test::new();
    let spelt = test.run_args(["completion", "bash"]).success();
    assert_eq!(spelt.stdout, test.run_args(["completions", "bash"]).success().stdout);
}

#[test]
fn a_rollout_named_with_another_kind_is_refused() {
    let test = Test::new();
    for (argument, kind) in [("Deployment/demo", "Deployment"), ("virtualservice/demo", "virtualservice")] {
        test.run_args(["status", argument])
            .status(1)
            .stderr_has(&format!("{kind} is not a Rollout: name a Rollout as NAME or rollout/NAME"));
    }
    test.run_args(["approve", "rollout/", "--yes"]).status(1).stderr_has("name a Rollout as NAME or rollout/NAME");
}

#[test]
fn plan_of_files_refuses_a_namespace_that_does_not_match_theirs() {
    // A regression: -n was ignored for objects with a namespace of their own, as kubectl never does.
    let example = repo("examples/istio-canary-ab");
    let example = example.to_str().unwrap();
    let test = Test::new();
    test.run_args(["plan", "-f", example, "-n", "other"]).status(1).stderr_has(
        "deployment.yaml:1: the namespace from the provided object \"demo\" does not match the namespace \"other\": pass -n demo, or leave -n out",
    );
    test.run_args(["plan", "-f", example, "-n", "demo"]).success().stdout_has("Rollout demo/");
    // A flag given twice takes its last value, as kubectl's do (a regression: refused).
    test.run_args(["plan", "-f", example, "-n", "other", "-n", "demo"]).success().stdout_has("Rollout demo/");
    test.run_args(["plan", "-f", example, "-o", "yaml", "-o", "json"]).success().stdout_has("{\n  \"plans\": [");
    // Not a guard or a step: neither value may be lost without a word.
    test.run_args(["plan", "-f", example, "--step", "1", "--step", "2"])
        .status(1)
        .stderr_has("the argument '--step <N>' cannot be used multiple times");
    test.run_args(["approve", "demo", "--expect-step", "2", "--expect-step", "3"])
        .status(1)
        .stderr_has("the argument '--expect-step <N>' cannot be used multiple times");
}

#[test]
fn a_boolean_flag_takes_a_value_after_an_equals_sign_as_kubectls_do() {
    // A regression: `status -w=true` was "unexpected argument '-=' found", `--summary=true` refused.
    let example = repo("examples/istio-canary-ab");
    let example = example.to_str().unwrap();
    let test = Test::new();
    let summary = test.run_args(["plan", "-f", example, "--summary"]).success().stdout;
    assert_eq!(test.run_args(["plan", "-f", example, "--summary=true"]).success().stdout, summary);
    let full = test.run_args(["plan", "-f", example]).success().stdout;
    assert_eq!(test.run_args(["plan", "-f", example, "--summary=False", "-v=0"]).success().stdout, full);
    // A value after a flag that needs `-w`, with `-w` switched off: refused as without it.
    test.run_args(["status", "demo", "-w=false", "--timeout", "5s"])
        .status(1)
        .stderr_has("required arguments were not provided:\n  --watch");
    test.run_args(["status", "demo", "-w=yes"]).status(1).stderr_has(
        "error: invalid value 'yes' for '-w': a boolean flag is true or false (also 1, t, T, TRUE, True, 0, f, F, FALSE, False, as kubectl reads it)",
    );
}
