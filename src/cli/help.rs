//! What `--help` adds to the flags (headings, examples), and clap's errors where its own advice
//! would mislead.

use super::Cli;
use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use std::ffi::OsString;

/// The help heading of the flags every command takes.
pub const GLOBAL: &str = "Global options";
/// The help heading of kubectl's connection flags.
pub const CLUSTER: &str = "Cluster options";
/// The help heading of the flags that choose scripts and limit them.
pub const SCRIPTS: &str = "Script options";

/// A command's text after its flags: examples, then exit codes.
pub fn after(examples: &str, exit_codes: &str) -> String {
    format!("{examples}\n\n{exit_codes}")
}

/// The root's text after its exit codes: what the environment changes, and the files kept.
pub const ENVIRONMENT_AND_FILES: &str = "\
Environment:
  KUBECONFIG             the kubeconfig files, ':'-separated (default ~/.kube/config); --kubeconfig
                         wins over it
  HTTPS_PROXY, HTTP_PROXY, NO_PROXY (or lowercase)
                         the proxy for an https:// (http://) API server unless NO_PROXY names it,
                         as in kubectl: never for localhost or a loopback address; a cluster's
                         proxy-url in the kubeconfig wins
  KUBECTL_EXTERNAL_DIFF  the program that shows object diffs, run as kubectl diff runs it (exit
                         status 0 or 1: a diff; another: an error)
  NO_COLOR               not empty: no colour (as --no-color), whatever else is set
  CLICOLOR_FORCE         not empty: colour text output also when it is not a terminal (never
                         -o json|yaml)
  TERM                   dumb: no colour (unless CLICOLOR_FORCE); dumb or unset: no live view
                         (status -w prints a line per change)
  XDG_STATE_HOME         where backups are kept (default ~/.local/state)
  XDG_CACHE_HOME         where discovery is cached (default ~/.cache)
  USER, LOGNAME          who holds a claim, with the host (the kernel's host name, else HOSTNAME)
  TMPDIR                 where KUBECTL_EXTERNAL_DIFF's two folders are made for each diff
                         (readable by their owner only)
  PATH                   where kubectl (plan -k) and the kubeconfig's exec credential plugins are
                         looked up

Files:
  $XDG_STATE_HOME/kubectl-rollout-lua/backups/CONTEXT/NAMESPACE/KIND/NAME/TIME.yaml
                         each object as read before approve or restore writes it (restore
                         --from-backup puts one back), readable by their owner only
                         (CONTEXT@HOST:PORT when --server or --cluster point the context at
                         another server); with neither XDG_STATE_HOME nor HOME set, approve
                         and restore write nothing
  $XDG_CACHE_HOME/kubectl-rollout-lua/discovery/SERVER/
                         the API server's discovery, used for 10 minutes (at most 1 MiB a file)
  ~/.kube/config         the kubeconfig, when KUBECONFIG names none";

pub const ROOT_EXAMPLES: &str = "\
Examples:
  # Plan every step of a bundled example (no cluster needed)
  kubectl rollout-lua plan -f examples/istio-canary-ab
  # Where a live Rollout stands, then approve its current step
  kubectl rollout-lua status demo -n shop
  kubectl rollout-lua approve demo -n shop --expect-step 2
  # Run the built-in scripts' test cases
  kubectl rollout-lua test";

pub const PLAN_EXAMPLES: &str = "\
Examples:
  # Every step of manifests, no cluster needed; then a line per step and object
  kubectl rollout-lua plan -f examples/istio-canary-ab
  kubectl rollout-lua plan -f examples/istio-canary-ab --summary
  # Step 2 only, as JSON
  kubectl rollout-lua plan -f rollout.yaml -f virtualservice.yaml --step 2 -o json
  # The current step of a live Rollout, then the next one judged by admission webhooks
  kubectl rollout-lua plan demo -n shop
  kubectl rollout-lua plan demo -n shop --next --dry-run=server
  # Every step of every Rollout of the namespace, a line per step and object
  kubectl rollout-lua plan --all -n shop --all-steps --summary
  # Each step's obj, one of them run by your script
  kubectl rollout-lua plan -f rollout.yaml -f vs.yaml --step 1 --show-obj | jq '.[0].obj' > obj.json
  kubectl rollout-lua eval trafficRouting.lua --obj obj.json";

pub const APPROVE_EXAMPLES: &str = "\
Examples:
  # Approve step 2 (refused if the Rollout is elsewhere)
  kubectl rollout-lua approve demo -n shop --expect-step 2
  # Approve every pause until the release completes, for at most 2 hours
  kubectl rollout-lua approve demo --yes --to-end --timeout 2h
  # Let admission webhooks judge the writes, store nothing
  kubectl rollout-lua approve -l app=shop --dry-run=server";

pub const RESTORE_EXAMPLES: &str = "\
Examples:
  # Put a Rollout's gateway objects back to their stored originals
  kubectl rollout-lua restore demo -n shop
  # One object, without a Rollout
  kubectl rollout-lua restore --ref VirtualService/demo --yes
  # An object saved by an earlier write (backups are kept per context and namespace)
  cd \"${XDG_STATE_HOME:-$HOME/.local/state}/kubectl-rollout-lua/backups/ctx/shop\"
  kubectl rollout-lua restore --from-backup VirtualService/demo/20260101T000000.000Z.yaml \\
      --context ctx -n shop";

pub const STATUS_EXAMPLES: &str = "\
Examples:
  # Every Rollout of the namespace, of every namespace
  kubectl rollout-lua status -n shop
  kubectl rollout-lua status -A
  # Where Rollout demo and its gateway objects stand
  kubectl rollout-lua status demo -n shop
  # Follow it until it waits for approval (a CI gate), for at most 10 minutes
  kubectl rollout-lua status demo -w --until-paused --timeout 10m
  # As JSON
  kubectl rollout-lua status -l app=shop -o json";

pub const RELEASE_CLAIM_EXAMPLES: &str = "\
Examples:
  # Release the claim a killed approve left on Rollout demo
  kubectl rollout-lua release-claim demo -n shop --yes";

pub const RECORD_EXAMPLES: &str = "\
Examples:
  # Rollout demo's test cases, on stdout
  kubectl rollout-lua record demo -n shop
  # Into a file that `plan -f` replays
  kubectl rollout-lua record demo --output-file demo-cases.yaml
  kubectl rollout-lua plan -f demo-cases.yaml
  # As a script tree that `test` replays
  kubectl rollout-lua record demo --dir cases && kubectl rollout-lua test cases";

pub const TEST_EXAMPLES: &str = "\
Examples:
  # The built-in scripts' test cases
  kubectl rollout-lua test
  # Your scripts (<group>/<Kind>/trafficRouting.lua with testdata/), as JSON
  kubectl rollout-lua test lua_configuration -o json
  # One script, on the cases in the testdata/ next to it
  kubectl rollout-lua test lua_configuration/trafficrouting_ingress/nginx.lua";

pub const EVAL_EXAMPLES: &str = "\
Examples:
  kubectl rollout-lua eval trafficRouting.lua --obj step1.obj.json
  kubectl rollout-lua lua-obj case.yaml -o json | jq '.[0].obj' \\
      | kubectl rollout-lua eval my.lua --obj -
  kubectl rollout-lua eval lua_configuration/trafficrouting_ingress/nginx.lua \\
      --ingress --obj obj.yaml";

pub const LUA_OBJ_EXAMPLES: &str = "\
Examples:
  # A Lua file setting steps.step_1, steps.step_2, … for a debugger
  kubectl rollout-lua lua-obj testdata/case.yaml --output-file objs.lua
  # Step 2's obj, for eval
  kubectl rollout-lua lua-obj testdata/case.yaml -o json | jq '.[1]' > obj.json";

pub const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  kubectl rollout-lua completions bash \\
      > ~/.local/share/bash-completion/completions/kubectl-rollout_lua
  # zsh: with fpath+=(~/.zfunc) before compinit in ~/.zshrc
  kubectl rollout-lua completions zsh > ~/.zfunc/_kubectl-rollout_lua";

/// Verbs of kubectl and of other rollout tools, and the command that does their job here.
const OTHER_VERBS: &[(&str, &str, &str)] = &[
    ("get", "status", "shows Rollouts, as kubectl get does"),
    ("describe", "status", "shows Rollouts and their gateway objects"),
    ("list", "status", "without names lists every Rollout of the namespace"),
    ("promote", "approve", "approves the current step"),
    ("resume", "approve", "approves the current step"),
    ("diff", "plan", "shows the diff a step makes"),
    (
        "apply",
        "approve",
        "writes the current step's routing and approves it; `approve --traffic-only` writes it without approving",
    ),
    ("undo", "restore", "puts the gateway objects back to their originals"),
    ("abort", "restore", "puts the gateway objects back to their originals"),
    ("rollback", "restore", "puts the gateway objects back to their originals"),
];

/// clap's error, with advice that fits this command line: a flag of another command names that
/// command (clap would suggest `-- -f`, which passes the flag as a Rollout name), a verb of
/// kubectl or argo rollouts names the command that does its job (clap's nearest spelling can be
/// unrelated, `get` -> `test`), and `-o PATH` says where files go.
pub fn explain(error: clap::Error, args: &[OsString]) -> clap::Error {
    let mut root = Cli::command();
    root.build();
    let words: Vec<String> = args.iter().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    // The command typed, and where: the first word that names one.
    let typed = words.iter().position(|w| root.find_subcommand(w).is_some());
    let here = typed.and_then(|at| root.find_subcommand(&words[at])).cloned();
    let string = |kind| match error.get(kind) {
        Some(ContextValue::String(value)) => Some(value.clone()),
        _ => None,
    };
    match error.kind() {
        ErrorKind::InvalidSubcommand => {
            let Some(word) = string(ContextKind::InvalidSubcommand) else { return error };
            let Some((_, command, does)) = OTHER_VERBS.iter().find(|(verb, ..)| *verb == word) else { return error };
            root.error(
                ErrorKind::InvalidSubcommand,
                format!("unrecognized subcommand '{word}'\n\n  tip: `{command}` {does}"),
            )
        }
        ErrorKind::UnknownArgument => {
            let Some(flag) = string(ContextKind::InvalidArg) else { return error };
            let flag_at = words.iter().position(|w| *w == flag || w.starts_with(&format!("{flag}=")));
            let before_command = flag_at < typed || typed.is_none();
            let owners: Vec<String> = root
                .get_subcommands()
                .filter(|sub| !sub.is_hide_set() && has_flag(sub, &flag))
                .map(|sub| sub.get_name().to_string())
                .collect();
            let mut message = format!("unexpected argument '{flag}' found");
            let typed_owns = here.as_ref().is_some_and(|c| owners.iter().any(|o| o == c.get_name()));
            match &here {
                // Before the command: its flags go after its name.
                Some(command) if before_command && typed_owns => message.push_str(&format!(
                    "\n\n  tip: the options of {0} go after its name: kubectl rollout-lua {0} {flag} …",
                    command.get_name()
                )),
                _ if !owners.is_empty() => {
                    message.push_str(&format!("\n\n  tip: '{flag}' is an option of {}", owners.join(", ")));
                    if let Some(command) = here.as_ref().filter(|_| !before_command) {
                        message.push_str(&format!(", not of {}", command.get_name()));
                    }
                }
                _ => {
                    if let Some(similar) = string(ContextKind::SuggestedArg) {
                        message.push_str(&format!("\n\n  tip: a similar argument exists: '{similar}'"));
                    }
                }
            }
            match here.filter(|_| !before_command) {
                Some(mut command) => command.error(ErrorKind::UnknownArgument, message),
                None => root.error(ErrorKind::UnknownArgument, message),
            }
        }
        ErrorKind::InvalidValue => {
            let (Some(mut command), Some(arg)) = (here, string(ContextKind::InvalidArg)) else { return error };
            let files: Vec<String> = ["output_file", "dir"]
                .iter()
                .filter_map(|id| command.get_arguments().find(|a| a.get_id() == id))
                .filter_map(|a| Some(format!("--{} {}", a.get_long()?, a.get_value_names()?.first()?)))
                .collect();
            if !arg.starts_with("--output") || files.is_empty() {
                return error;
            }
            // clap's text up to its usage (what was wrong, the possible values).
            let rendered = error.render().to_string();
            let what = rendered.split("\n\nUsage:").next().unwrap_or_default();
            let what = what.split("\n\nFor more information").next().unwrap_or_default();
            let what = what.trim_start_matches("error: ").trim_end();
            command.error(
                ErrorKind::InvalidValue,
                format!("{what}\n\n  tip: -o is the output format; files are written with {}", files.join(" or ")),
            )
        }
        _ => error,
    }
}

/// Whether `command` has the flag `flag` (`-f`, `--filename`), as written (`--x=1` too).
fn has_flag(command: &clap::Command, flag: &str) -> bool {
    let flag = flag.split_once('=').map_or(flag, |(name, _)| name);
    command.get_arguments().any(|arg| match flag.strip_prefix("--") {
        Some(long) => arg.get_long_and_visible_aliases().is_some_and(|longs| longs.contains(&long)),
        None => flag.strip_prefix('-').and_then(|s| s.chars().next()).is_some_and(|c| arg.get_short() == Some(c)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn error_of(words: &[&str]) -> String {
        let args: Vec<OsString> =
            std::iter::once("kubectl-rollout_lua").chain(words.iter().copied()).map(Into::into).collect();
        let error = Cli::try_parse_from(&args).expect_err("a parse error");
        explain(error, &args).render().to_string()
    }

    #[test]
    fn a_flag_of_another_command_names_that_command() {
        let text = error_of(&["approve", "-f", "x.yaml"]);
        assert!(text.contains("'-f' is an option of plan, not of approve"), "{text}");
        assert!(!text.contains("-- -f"), "{text}");
        assert!(text.contains("Usage: kubectl rollout-lua approve"), "{text}");
    }

    #[test]
    fn a_flag_of_diffs_is_refused_where_no_diff_is_shown() {
        for other in [&["-o", "json"][..], &["--show-obj"], &["--summary"]] {
            let words = [&["plan", "-f", "m", "--show-stored-original"][..], other].concat();
            let text = error_of(&words);
            assert!(text.contains("'--show-stored-original' cannot be used with"), "{other:?}: {text}");
        }
    }

    #[test]
    fn a_negative_value_after_a_space_is_judged_by_its_flag() {
        // A review (s52, F9): `--lua-timeout -1s` was taken for a short flag `-1`.
        let text = error_of(&["plan", "-f", "m", "--lua-timeout", "-1s"]);
        assert!(text.contains("must not be negative"), "{text}");
        let text = error_of(&["plan", "-f", "m", "--step", "-1"]);
        assert!(text.contains("\"-1\" is not a step number (1 or more)"), "{text}");
        let text = error_of(&["status", "demo", "--request-timeout", "-5s"]);
        assert!(text.contains("must not be negative"), "{text}");
    }

    #[test]
    fn a_cluster_flag_before_the_command_goes_after_it() {
        let text = error_of(&["-n", "shop", "status", "demo"]);
        assert!(
            text.contains("tip: the options of status go after its name: kubectl rollout-lua status -n …"),
            "{text}"
        );
        let text = error_of(&["--kubeconfig", "kc", "test"]);
        assert!(
            text.contains("'--kubeconfig' is an option of plan, approve, restore, status, release-claim, record"),
            "{text}"
        );
        assert!(!text.contains("not of test"), "{text}");
    }

    #[test]
    fn an_unknown_flag_gets_no_advice_to_pass_it_as_a_value() {
        let text = error_of(&["status", "--wtach"]);
        assert!(text.contains("unexpected argument '--wtach' found"), "{text}");
        assert!(text.contains("a similar argument exists: '--watch'"), "{text}");
        assert!(!text.contains("as a value"), "{text}");
    }

    #[test]
    fn verbs_of_other_tools_name_the_command_that_does_their_job() {
        let text = error_of(&["get", "demo"]);
        assert!(text.contains("unrecognized subcommand 'get'"), "{text}");
        assert!(text.contains("tip: `status` shows Rollouts"), "{text}");
        assert!(!text.contains("'test'"), "{text}");
        let text = error_of(&["apply", "demo"]);
        assert!(text.contains("tip: `approve` writes") && text.contains("`approve --traffic-only`"), "{text}");
        // A misspelling keeps clap's suggestion.
        assert!(error_of(&["stauts"]).contains("'status'"));
    }
}
