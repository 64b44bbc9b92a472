//! Shell completion: static scripts generated from the clap definition (`completions SHELL`),
//! and candidates in kubectl's plugin-completion protocol (`__complete`) for
//! `kubectl rollout-lua <TAB>`.
//!
//! kubectl (1.26 and later) completes a plugin by running `kubectl_complete-rollout_lua` from
//! PATH with the words after `kubectl rollout-lua`, the last one being the word to complete
//! (`""` for a new word). It reads one candidate per line (`candidate<TAB>description`, as cobra
//! prints them), then an optional last line `:<ShellCompDirective>`. The helper shipped in
//! `completions/` runs `kubectl-rollout_lua __complete -- WORDS…`; the `--` keeps clap from
//! reading the words as the plugin's own flags. Completion never prints an error: whatever
//! cannot be known (no kubeconfig, an unreachable or slow cluster) yields no candidates.

use super::{Cli, CompleteArgs, CompletionShell, CompletionsArgs, Outcome, print_raw};
use crate::source::cluster::{Cluster, ConnectionArgs, Resource, Terminal};
use crate::source::live::rollout_name;
use clap::{Arg, ArgAction, Command, CommandFactory, ValueHint};
use clap_complete::Shell;
use kube::config::Kubeconfig;
use serde_json::Value;
use std::time::Duration;

/// The name shells complete: the binary itself.
const BINARY: &str = "kubectl-rollout_lua";
/// The hidden subcommand kubectl's completion helper runs.
const COMPLETE: &str = "__complete";
/// How long completion may wait for the cluster, in total.
const BUDGET: Duration = Duration::from_secs(1);

/// cobra's `ShellCompDirective` bits.
const DIRECTIVE_FILES: u8 = 0;
const DIRECTIVE_NO_SPACE: u8 = 2;
const DIRECTIVE_NO_FILES: u8 = 4;
const DIRECTIVE_DIRS: u8 = 16;

pub fn completions(args: &CompletionsArgs) -> anyhow::Result<Outcome> {
    print_raw(&script(args.shell))?;
    Ok(Outcome::Done)
}

/// The completion script for `shell`, registered for the command `kubectl-rollout_lua`.
pub fn script(shell: CompletionShell) -> String {
    let generated = match shell {
        CompletionShell::Bash => generate(Shell::Bash),
        CompletionShell::Zsh => generate(Shell::Zsh),
        CompletionShell::Fish => generate(Shell::Fish),
        CompletionShell::Powershell => generate(Shell::PowerShell),
        CompletionShell::Elvish => generate(Shell::Elvish),
        CompletionShell::Nushell => generate(clap_complete_nushell::Nushell),
    };
    let script = without_hidden_subcommand(shell, &generated);
    match shell {
        CompletionShell::Bash => fix_bash_case_labels(&script),
        CompletionShell::Fish => script + &fish_positional_values(&Cli::command()),
        _ => script,
    }
}

/// clap_complete's fish script completes options only, so a subcommand's positional argument
/// gets fish's default, file names (`completions <TAB>`). Its possible values are offered
/// instead, until one of them is on the line, as the other shells' scripts do.
fn fish_positional_values(command: &Command) -> String {
    let mut lines = String::new();
    for subcommand in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        for positional in subcommand.get_positionals() {
            let values: Vec<String> = positional
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_string())
                .collect();
            if values.is_empty() {
                continue;
            }
            let (name, values) = (subcommand.get_name(), values.join(" "));
            let using = format!("__fish_{}_using_subcommand", BINARY.replace('-', "_"));
            lines.push_str(&format!(
                "complete -c {BINARY} -n \"{using} {name}; and not __fish_seen_subcommand_from {values}\" -f -a \"{values}\"\n"
            ));
        }
    }
    lines
}

/// clap_complete's script for the command.
fn generate(generator: impl clap_complete::Generator) -> String {
    let mut script = Vec::new();
    clap_complete::generate(generator, &mut Cli::command(), BINARY, &mut script);
    String::from_utf8_lossy(&script).into_owned()
}

/// clap_complete's bash script names a subcommand's state `kubectl__rollout_lua__subcmd__plan`
/// where it is entered (the `-` of the binary name becomes `__`) but
/// `kubectl__subcmd__rollout_lua__subcmd__plan` in the case label that offers its options (the
/// `-` becomes `__subcmd__`), so no subcommand's flags would ever be completed. The labels get
/// the entry's spelling.
fn fix_bash_case_labels(script: &str) -> String {
    script.replace(&BINARY.replace('-', "__subcmd__"), &BINARY.replace('-', "__"))
}

/// Removes the offers of the hidden `__complete` subcommand, which clap_complete lists like
/// any other (its handlers stay: they only run after someone typed `__complete`).
fn without_hidden_subcommand(shell: CompletionShell, script: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    // Nushell declares it as a block: its doc comment, `export extern "… __complete" [`, its
    // flags, `]` and a blank line.
    let mut in_block = false;
    let mut after_block = false;
    for line in script.split_inclusive('\n') {
        let trimmed = line.trim();
        if in_block {
            in_block = trimmed != "]";
            after_block = !in_block;
            continue;
        }
        if std::mem::take(&mut after_block) && trimmed.is_empty() {
            continue;
        }
        let offer = match shell {
            CompletionShell::Bash if trimmed.starts_with("opts=\"") => {
                lines.push(line.replace(&format!(" {COMPLETE} "), " "));
                continue;
            }
            CompletionShell::Bash => false,
            CompletionShell::Zsh => trimmed.starts_with(&format!("'{COMPLETE}:")),
            CompletionShell::Fish => trimmed.contains(&format!("-a \"{COMPLETE}\"")),
            CompletionShell::Powershell => trimmed.starts_with(&format!("[CompletionResult]::new('{COMPLETE}',")),
            CompletionShell::Elvish => trimmed.starts_with(&format!("cand {COMPLETE} ")),
            CompletionShell::Nushell => {
                in_block = trimmed.starts_with("export extern \"") && trimmed.ends_with(&format!(" {COMPLETE}\" ["));
                if in_block && lines.last().is_some_and(|l| l.trim_start().starts_with('#')) {
                    lines.pop();
                }
                in_block
            }
        };
        if !offer {
            lines.push(line.to_string());
        }
    }
    lines.concat()
}

/// Prints the candidates for the last word in kubectl's plugin-completion protocol.
pub fn complete(args: &CompleteArgs) -> anyhow::Result<Outcome> {
    // Whatever the requests for names would say on stderr (a busy server's retries) is not for
    // the command line being typed.
    crate::stderr::silence();
    let mut words = args.words.clone();
    if words.is_empty() {
        words.push(String::new());
    }
    let (want, connection) = analyse(&words);
    let prefix = want.prefix.clone();
    let (candidates, directive) = match want.kind {
        Kind::Static(candidates, directive) => (candidates, directive),
        Kind::Rollouts { given } => (
            names(fetch(Dynamic::Rollouts, &connection)).filter(|n| !given.contains(n)).map(|n| (n, None)).collect(),
            DIRECTIVE_NO_FILES,
        ),
        Kind::Namespaces => {
            (names(fetch(Dynamic::Namespaces, &connection)).map(|n| (n, None)).collect(), DIRECTIVE_NO_FILES)
        }
        Kind::Contexts => (contexts(&connection).into_iter().map(|n| (n, None)).collect(), DIRECTIVE_NO_FILES),
    };
    let mut out = String::new();
    for (candidate, description) in candidates.iter().filter(|(c, _)| c.starts_with(&prefix)) {
        out.push_str(candidate);
        if let Some(description) = description.as_deref().filter(|d| !d.is_empty()) {
            out.push('\t');
            out.push_str(description);
        }
        out.push('\n');
    }
    out.push_str(&format!(":{directive}\n"));
    // Nothing to tell anyone when the shell went away.
    let _ = print_raw(&out);
    Ok(Outcome::Done)
}

/// What the word being completed wants, and the part of it candidates must start with.
#[derive(Debug, PartialEq)]
struct Want {
    kind: Kind,
    prefix: String,
}

#[derive(Debug, PartialEq)]
enum Kind {
    /// Known candidates (with descriptions) and a directive.
    Static(Vec<(String, Option<String>)>, u8),
    /// Rollout names in the namespace, except those already given.
    Rollouts {
        given: Vec<String>,
    },
    Namespaces,
    Contexts,
}

impl Kind {
    fn nothing() -> Kind {
        Kind::Static(Vec::new(), DIRECTIVE_NO_FILES)
    }

    fn files() -> Kind {
        Kind::Static(Vec::new(), DIRECTIVE_FILES)
    }
}

/// Walks the words before the last one as clap would parse them: the subcommand, flags and
/// their values, positional arguments; then decides what the last one wants.
fn analyse(words: &[String]) -> (Want, ConnectionArgs) {
    let mut root = Cli::command();
    root.build();
    let (current, before) = words.split_last().map_or(("", &[][..]), |(last, rest)| (last.as_str(), rest));
    // A TAB is no time for a login prompt, drawn into the command line being typed.
    let mut connection = ConnectionArgs { plugin_terminal: Terminal::Withheld, ..Default::default() };
    let mut command = &root;
    let mut seen: Vec<&str> = Vec::new();
    let mut positionals: Vec<&str> = Vec::new();
    let mut pending: Option<&Arg> = None;
    let mut only_positionals = false;
    for word in before {
        if let Some(arg) = pending.take() {
            remember(arg, word, &mut connection);
            continue;
        }
        if only_positionals {
            positionals.push(word);
        } else if word == "--" {
            only_positionals = true;
        } else if let Some(long) = word.strip_prefix("--") {
            let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            if let Some(arg) = find_long(command, name) {
                seen.push(arg.get_id().as_str());
                match value {
                    Some(value) => remember(arg, value, &mut connection),
                    None if takes_value(arg) => pending = Some(arg),
                    None => remember(arg, "true", &mut connection),
                }
            }
        } else if let Some(shorts) = word.strip_prefix('-').filter(|s| !s.is_empty()) {
            for (i, c) in shorts.char_indices() {
                let Some(arg) = command.get_arguments().find(|a| a.get_short() == Some(c)) else { break };
                seen.push(arg.get_id().as_str());
                if takes_value(arg) {
                    let rest = &shorts[i + c.len_utf8()..];
                    let rest = rest.strip_prefix('=').unwrap_or(rest);
                    if rest.is_empty() {
                        pending = Some(arg);
                    } else {
                        remember(arg, rest, &mut connection);
                    }
                    break;
                }
            }
        } else if command.has_subcommands() {
            match command.find_subcommand(word) {
                Some(sub) => command = sub,
                None => positionals.push(word),
            }
        } else {
            positionals.push(word);
        }
    }
    let want = if let Some(arg) = pending {
        Want { kind: value_kind(arg, &positionals, current), prefix: current.to_string() }
    } else if only_positionals {
        Want { kind: positional_kind(command, &positionals, &seen, current), prefix: current.to_string() }
    } else if let Some((arg, value)) = flag_with_value(command, current) {
        let kind = if takes_value(arg) { value_kind(arg, &positionals, value) } else { Kind::nothing() };
        Want { kind, prefix: value.to_string() }
    } else if current.starts_with('-') {
        Want { kind: flags(command, &seen), prefix: current.to_string() }
    } else {
        Want { kind: positional_kind(command, &positionals, &seen, current), prefix: current.to_string() }
    };
    (want, connection)
}

/// `--flag=value` or `-f=value`: the flag and the value typed so far.
fn flag_with_value<'a, 'w>(command: &'a Command, word: &'w str) -> Option<(&'a Arg, &'w str)> {
    let (flag, value) = word.split_once('=')?;
    let arg = match flag.strip_prefix("--") {
        Some(long) => find_long(command, long),
        None => {
            let mut chars = flag.strip_prefix('-')?.chars();
            let short = chars.next().filter(|_| chars.next().is_none())?;
            command.get_arguments().find(|a| a.get_short() == Some(short))
        }
    }?;
    Some((arg, value))
}

fn find_long<'a>(command: &'a Command, name: &str) -> Option<&'a Arg> {
    command.get_arguments().find(|a| a.get_long_and_visible_aliases().is_some_and(|longs| longs.contains(&name)))
}

fn takes_value(arg: &Arg) -> bool {
    arg.get_action().takes_values()
}

/// The connection flags among the words (they win over any clap read before `__complete`). An
/// empty value is not given, as on the command line (`-n "$NS"` with NS unset).
fn remember(arg: &Arg, value: &str, connection: &mut ConnectionArgs) {
    if value.is_empty() {
        return;
    }
    match arg.get_id().as_str() {
        "kubeconfig" => connection.kubeconfig = Some(value.into()),
        "context" => connection.context = Some(value.into()),
        "namespace" => connection.namespace = Some(value.into()),
        "as_user" => connection.as_user = Some(value.into()),
        "as_uid" => connection.as_uid = Some(value.into()),
        "as_groups" => connection.as_groups.push(value.into()),
        "insecure_skip_tls_verify" => {
            connection.overrides.insecure_skip_tls_verify = super::booleans::parse_bool(value) == Some(true)
        }
        id => {
            let overrides = &mut connection.overrides;
            let field = match id {
                "cluster" => &mut overrides.cluster,
                "user" => &mut overrides.user,
                "server" => &mut overrides.server,
                "certificate_authority" => &mut overrides.certificate_authority,
                "tls_server_name" => &mut overrides.tls_server_name,
                "token" => &mut overrides.token,
                "username" => &mut overrides.username,
                "password" => &mut overrides.password,
                "client_certificate" => &mut overrides.client_certificate,
                "client_key" => &mut overrides.client_key,
                _ => return,
            };
            *field = Some(value.into());
        }
    }
}

fn first_line(text: Option<String>) -> Option<String> {
    text.and_then(|t| t.lines().next().map(str::to_string))
}

/// The flags of the command (its own and the global ones), except those given already that
/// cannot be repeated.
fn flags(command: &Command, seen: &[&str]) -> Kind {
    let mut candidates = Vec::new();
    for arg in command.get_arguments().filter(|a| !a.is_positional() && !a.is_hide_set()) {
        let repeatable = matches!(arg.get_action(), ArgAction::Append | ArgAction::Count);
        if !repeatable && seen.contains(&arg.get_id().as_str()) {
            continue;
        }
        // clap's `-h` says "Print help (see more with '--help')".
        let help = first_line(arg.get_help().map(|h| h.to_string().replace(" (see more with '--help')", "")));
        for long in arg.get_long_and_visible_aliases().unwrap_or_default() {
            candidates.push((format!("--{long}"), help.clone()));
        }
        if let Some(short) = arg.get_short() {
            candidates.push((format!("-{short}"), help.clone()));
        }
    }
    Kind::Static(candidates, DIRECTIVE_NO_FILES)
}

/// The next positional argument: a subcommand name, or the command's positional at that index.
fn positional_kind(command: &Command, positionals: &[&str], seen: &[&str], current: &str) -> Kind {
    if command.has_subcommands() {
        let subcommands = command
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| (s.get_name().to_string(), first_line(s.get_about().map(ToString::to_string))))
            .collect();
        return Kind::Static(subcommands, DIRECTIVE_NO_FILES);
    }
    let mut args = command.get_positionals().filter(|a| !a.is_hide_set()).peekable();
    let mut index = 0;
    while let Some(arg) = args.next() {
        let multiple = matches!(arg.get_action(), ArgAction::Append);
        if index == positionals.len() || (multiple && args.peek().is_none()) {
            // `status -A`, `-l`: a flag given rules the argument out (clap keeps a conflict on
            // the side that declares it).
            let given = command.get_arguments().filter(|a| seen.contains(&a.get_id().as_str()));
            let conflict =
                |a: &Arg, b: &Arg| command.get_arg_conflicts_with(a).iter().any(|c| c.get_id() == b.get_id());
            if given.into_iter().any(|flag| conflict(flag, arg) || conflict(arg, flag)) {
                return Kind::nothing();
            }
            return value_kind(arg, positionals, current);
        }
        index += 1;
    }
    Kind::nothing()
}

/// The values of one argument (`current` is the part of the word typed so far).
fn value_kind(arg: &Arg, positionals: &[&str], current: &str) -> Kind {
    let values: Vec<_> = arg
        .get_possible_values()
        .into_iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| (v.get_name().to_string(), first_line(v.get_help().map(ToString::to_string))))
        .collect();
    if !values.is_empty() {
        return Kind::Static(values, DIRECTIVE_NO_FILES);
    }
    match arg.get_id().as_str() {
        "namespace" | "controller_namespace" => Kind::Namespaces,
        "context" => Kind::Contexts,
        "rollouts" | "rollout" => {
            Kind::Rollouts { given: positionals.iter().map(|p| rollout_name(p).to_string()).collect() }
        }
        "files" => Kind::files(),
        // Script folders for `test`, the script tree for `--lua-dir`.
        "lua_dir" | "paths" => Kind::Static(Vec::new(), DIRECTIVE_DIRS),
        // KIND.GROUP=FILE: the kinds of the built-in scripts until there is a `=`, then files
        // (shells that split words at `=`, like bash, complete the part after it).
        "scripts" if current.contains('=') => Kind::files(),
        "scripts" => Kind::Static(
            crate::scripts::BUILTIN_SCRIPTS.iter().map(|s| (format!("{}.{}=", s.kind, s.group), None)).collect(),
            DIRECTIVE_NO_SPACE | DIRECTIVE_NO_FILES,
        ),
        _ => match arg.get_value_hint() {
            ValueHint::AnyPath | ValueHint::FilePath | ValueHint::ExecutablePath => Kind::files(),
            ValueHint::DirPath => Kind::Static(Vec::new(), DIRECTIVE_DIRS),
            _ => Kind::nothing(),
        },
    }
}

#[derive(Clone, Copy)]
enum Dynamic {
    Rollouts,
    Namespaces,
}

/// Lists from the cluster within the budget; nothing on any failure.
fn fetch(what: Dynamic, connection: &ConnectionArgs) -> Vec<Value> {
    let Ok(runtime) = super::cluster::runtime() else { return Vec::new() };
    runtime.block_on(async {
        let listing = async {
            let cluster = Cluster::connect(connection).await.ok()?;
            match what {
                Dynamic::Rollouts => {
                    let rollouts = crate::source::live::rollout_resource(&cluster).await.ok()?;
                    cluster.list(&rollouts, &cluster.namespace, "").await.ok()
                }
                Dynamic::Namespaces => {
                    let namespaces = Resource {
                        group: String::new(),
                        version: "v1".into(),
                        kind: "Namespace".into(),
                        plural: "namespaces".into(),
                        namespaced: false,
                    };
                    cluster.list(&namespaces, "", "").await.ok()
                }
            }
        };
        tokio::time::timeout(BUDGET, listing).await.ok().flatten().unwrap_or_default()
    })
}

fn names(objects: Vec<Value>) -> impl Iterator<Item = String> {
    let mut names: Vec<String> =
        objects.iter().filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string)).collect();
    names.sort();
    names.into_iter()
}

/// The kubeconfig's contexts (no cluster needed).
fn contexts(connection: &ConnectionArgs) -> Vec<String> {
    let kubeconfig = match &connection.kubeconfig {
        Some(path) => Kubeconfig::read_from(path),
        None => Kubeconfig::read(),
    };
    let mut names: Vec<String> =
        kubeconfig.map(|k| k.contexts.into_iter().map(|c| c.name).collect()).unwrap_or_default();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn want(words: &[&str]) -> (Want, ConnectionArgs) {
        analyse(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>())
    }

    fn names_of(kind: &Kind) -> Vec<&str> {
        match kind {
            Kind::Static(candidates, _) => candidates.iter().map(|(c, _)| c.as_str()).collect(),
            _ => Vec::new(),
        }
    }

    fn directive(kind: &Kind) -> Option<u8> {
        match kind {
            Kind::Static(_, directive) => Some(*directive),
            _ => None,
        }
    }

    #[test]
    fn subcommands_first_without_hidden_ones() {
        let (w, _) = want(&[""]);
        let names = names_of(&w.kind);
        assert!(names.contains(&"plan") && names.contains(&"lua-obj") && names.contains(&"help"), "{names:?}");
        assert!(!names.contains(&COMPLETE));
        let (w, _) = want(&["-v", "--no-color", "st"]);
        assert_eq!(w.prefix, "st");
        assert!(names_of(&w.kind).contains(&"status"));
    }

    #[test]
    fn flags_of_the_subcommand_and_global_ones() {
        let (w, _) = want(&["plan", "--"]);
        let names = names_of(&w.kind);
        for flag in ["--filename", "-f", "--dry-run", "--namespace", "-n", "--kubeconfig", "--help", "--verbose"] {
            assert!(names.contains(&flag), "{flag} in {names:?}");
        }
        // Cluster flags only where a cluster is read.
        let (offline, _) = want(&["test", "--"]);
        let offline = names_of(&offline.kind);
        assert!(offline.contains(&"--verbose") && !offline.contains(&"--kubeconfig"), "{offline:?}");
        assert!(!names.contains(&"--version"), "only the root has --version");
        // Given once and not repeatable: not offered again; repeatable ones are.
        let (w, _) = want(&["plan", "--next", "-f", "a", "-"]);
        let names = names_of(&w.kind);
        assert!(!names.contains(&"--next") && names.contains(&"--filename"), "{names:?}");
    }

    #[test]
    fn values_of_value_enums() {
        assert_eq!(names_of(&want(&["plan", "-o", ""]).0.kind), ["yaml", "json"]);
        assert_eq!(names_of(&want(&["test", "--output", ""]).0.kind), ["json"]);
        assert_eq!(names_of(&want(&["approve", "--dry-run", ""]).0.kind), ["none", "client", "server"]);
        let (w, _) = want(&["plan", "--dry-run=se"]);
        assert_eq!((names_of(&w.kind), w.prefix.as_str()), (vec!["server"], "se"));
        let (w, _) = want(&["status", "-o=j"]);
        assert_eq!((names_of(&w.kind), w.prefix.as_str()), (vec!["yaml", "json"], "j"));
        assert!(names_of(&want(&["completions", ""]).0.kind).contains(&"nushell"));
    }

    #[test]
    fn files_and_folders() {
        for words in [
            &["plan", "-f", ""][..],
            &["plan", "--filename", "ex"],
            &["status", "--kubeconfig", ""],
            &["eval", ""],
            &["eval", "a.lua", "--obj", ""],
            &["record", "demo", "--output-file", ""],
            &["lua-obj", ""],
            &["restore", "--from-backup", ""],
        ] {
            let (w, _) = want(words);
            assert_eq!(w.kind, Kind::files(), "{words:?}");
        }
        assert_eq!(directive(&want(&["plan", "--lua-dir", ""]).0.kind), Some(DIRECTIVE_DIRS));
        assert_eq!(directive(&want(&["test", ""]).0.kind), Some(DIRECTIVE_DIRS));
        let (w, _) = want(&["plan", "--script", ""]);
        assert!(names_of(&w.kind).contains(&"VirtualService.networking.istio.io="));
        assert_eq!(directive(&w.kind), Some(DIRECTIVE_NO_SPACE | DIRECTIVE_NO_FILES));
    }

    #[test]
    fn cluster_values_and_connection_flags() {
        let (w, connection) = want(&["plan", "--kubeconfig", "kc", "-nshop", "--context=c", "demo", ""]);
        assert_eq!(w.kind, Kind::Rollouts { given: vec!["demo".into()] });
        assert_eq!(connection.kubeconfig.as_deref(), Some(std::path::Path::new("kc")));
        assert_eq!((connection.namespace.as_deref(), connection.context.as_deref()), (Some("shop"), Some("c")));
        // The flags that override the kubeconfig reach the cluster as on the command line.
        let words = ["status", "-s", "https://k", "--token=t", "--insecure-skip-tls-verify", "--as-uid", "7", ""];
        let (_, connection) = want(&words);
        let overrides = &connection.overrides;
        assert_eq!((overrides.server.as_deref(), overrides.token.as_deref()), (Some("https://k"), Some("t")));
        assert!(overrides.insecure_skip_tls_verify);
        assert_eq!(connection.as_uid.as_deref(), Some("7"));
        assert!(!want(&["status", "--insecure-skip-tls-verify=false", ""]).1.overrides.insecure_skip_tls_verify);
        assert_eq!(want(&["status", "-n", ""]).0.kind, Kind::Namespaces);
        assert_eq!(want(&["record", "--namespace=s"]).0.kind, Kind::Namespaces);
        assert_eq!(want(&["approve", "--context", ""]).0.kind, Kind::Contexts);
        assert_eq!(want(&["record", ""]).0.kind, Kind::Rollouts { given: vec![] });
        // record takes one Rollout: nothing after it.
        assert_eq!(want(&["record", "demo", ""]).0.kind, Kind::nothing());
        // Durations and the like: nothing, and no files.
        assert_eq!(want(&["test", "--lua-timeout", ""]).0.kind, Kind::nothing());
        // Rollouts already given, however named, are not offered again.
        assert_eq!(
            want(&[
                "approve",
                "rollout/a",
                "rollouts.rollouts.kruise.io/b",
                "rollouts.v1beta1.rollouts.kruise.io/c",
                ""
            ])
            .0
            .kind,
            Kind::Rollouts { given: vec!["a".into(), "b".into(), "c".into()] }
        );
        // A flag that rules Rollout names out: none offered.
        assert_eq!(want(&["status", "-A", ""]).0.kind, Kind::nothing());
        assert_eq!(want(&["approve", "-l", "app=x", ""]).0.kind, Kind::nothing());
        assert_eq!(want(&["status", "-n", "shop", ""]).0.kind, Kind::Rollouts { given: vec![] });
        // After `--`, words are positional.
        assert_eq!(want(&["approve", "--", "-x", ""]).0.kind, Kind::Rollouts { given: vec!["-x".into()] });
    }

    #[test]
    fn fish_offers_the_values_of_a_subcommands_positional() {
        // clap_complete's fish script left `completions <TAB>` to file names (an operator
        // trial's P1); a positional without possible values (a Rollout's name) is left alone.
        let shells = "bash zsh fish powershell elvish nushell";
        assert_eq!(
            fish_positional_values(&Cli::command()),
            format!(
                "complete -c kubectl-rollout_lua -n \"__fish_kubectl_rollout_lua_using_subcommand completions; and not __fish_seen_subcommand_from {shells}\" -f -a \"{shells}\"\n"
            )
        );
        assert!(script(CompletionShell::Fish).ends_with(&fish_positional_values(&Cli::command())));
    }

    #[test]
    fn scripts_name_the_binary() {
        for shell in [
            CompletionShell::Bash,
            CompletionShell::Zsh,
            CompletionShell::Fish,
            CompletionShell::Powershell,
            CompletionShell::Elvish,
            CompletionShell::Nushell,
        ] {
            let text = script(shell);
            assert!(!text.contains("kubectl__subcmd__"), "{shell:?}");
            assert!(text.contains(BINARY), "{shell:?}");
        }
    }
}
