//! The man pages under `docs/man/` are what clap_mangen renders from the command line definition
//! now (one page for the plugin, one per visible subcommand, as git's; the synopsis our own, with
//! the options' values), and `man` renders them.

use crate::completion::{UPDATE, assert_fresh, check_generated};
use crate::support::cluster::{FakeApiServer, FakeHandle, Rule};
use crate::support::{Test, on_path, repo};
use clap::CommandFactory;
use rollout_lua::Cli;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

const PLUGIN: &str = "kubectl-rollout_lua";

/// (file name, page) for the plugin and each visible subcommand.
fn pages() -> Vec<(String, Vec<u8>)> {
    let mut command = Cli::command().disable_help_subcommand(true);
    // Building runs the derive's deferred settings, which set the version with the git commit:
    // the pages carry the package version only (in their footer), so that they change with
    // releases, not with every commit.
    command.build();
    let version = env!("CARGO_PKG_VERSION");
    let source = format!("{PLUGIN} {version}");
    let mut pages: Vec<(String, Vec<u8>)> = command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .map(|sub| (format!("{PLUGIN}-{}.1", sub.get_name()), render(sub.clone(), &source, false)))
        .collect();
    pages.insert(0, (format!("{PLUGIN}.1"), render(command, &source, true)));
    pages
}

/// clap_mangen's page, with the commands' after-help as sections (examples as EXAMPLES, exit
/// codes as EXIT STATUS, and the root's environment and files as ENVIRONMENT and FILES) and, on
/// a subcommand's page, SEE ALSO pointing to the plugin's page.
fn render(command: clap::Command, source: &str, root: bool) -> Vec<u8> {
    let after = command.get_after_help().map(ToString::to_string).unwrap_or_default();
    let command = command.after_help(None).after_long_help(None).version(None);
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone())
        .source(source)
        .manual("kubectl rollout-lua")
        .render(&mut page)
        .expect("render a man page");
    let page = String::from_utf8(page).unwrap();
    let (head, rest) = page.split_once(".SH SYNOPSIS\n").expect("a synopsis");
    let (_, rest) = rest.split_once('\n').unwrap();
    let mut page = format!("{head}.SH SYNOPSIS\n{}\n{rest}", synopsis(&command)).into_bytes();
    for section in after.split("\n\n").filter(|s| !s.is_empty()) {
        let text = match section.split_once('\n') {
            Some(("Examples:", examples)) => format!(".SH EXAMPLES\n.nf\n{}\n.fi\n", roff(examples)),
            Some(("Exit codes:", _)) => tagged_list("EXIT STATUS", section),
            Some(("Environment:", _)) => tagged_list("ENVIRONMENT", section),
            Some(("Files:", _)) => tagged_list("FILES", section),
            _ => tagged_list("EXIT STATUS", section),
        };
        page.extend_from_slice(text.as_bytes());
    }
    if !root {
        page.extend_from_slice(format!(".SH \"SEE ALSO\"\n\\fB{}\\fR(1)\n", roff(PLUGIN)).as_bytes());
    }
    page
}

/// A heading line and entries "  TAG  meaning" (a meaning may go on, or start, indented deeper on
/// the next lines) as a tagged list; other text as it is.
fn tagged_list(heading: &str, text: &str) -> String {
    let mut section = format!(".SH \"{heading}\"\n");
    let mut entries: Option<Vec<(&str, String)>> = Some(Vec::new());
    for line in text.lines().skip_while(|line| line.ends_with(':')) {
        let entry = line.strip_prefix("  ").filter(|rest| !rest.starts_with(' '));
        match (entries.as_mut(), entry) {
            (Some(entries), Some(entry)) => {
                let (tag, meaning) = entry.split_once("  ").unwrap_or((entry, ""));
                entries.push((tag, meaning.trim().to_string()));
            }
            (Some(entries), None) if line.starts_with("   ") && !entries.is_empty() => {
                let (_, meaning) = entries.last_mut().unwrap();
                if !meaning.is_empty() {
                    meaning.push(' ');
                }
                meaning.push_str(line.trim());
            }
            _ => entries = None,
        }
    }
    match entries {
        Some(entries) if !entries.is_empty() => {
            for (tag, meaning) in entries {
                section.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", roff(tag), roff(&meaning)));
            }
        }
        _ => section.push_str(&format!(".nf\n{}\n.fi\n", roff(text))),
    }
    section
}

/// The SYNOPSIS line of `command`'s page, in clap_mangen's order of the arguments (their
/// display order, then their flag) but with what its synopsis leaves out: an option's value name
/// (`[--timeout DURATION]`, joined by a space `man` does not break or stretch) and the `...` of an
/// argument given more than once (`[ROLLOUT]...`). Required ones have no brackets.
fn synopsis(command: &clap::Command) -> String {
    let flag_key = |arg: &&clap::Arg| match (arg.get_short(), arg.get_long()) {
        (Some(short), _) => format!("{}{}", short.to_ascii_lowercase(), u8::from(short.is_ascii_uppercase())),
        (None, Some(long)) => long.to_string(),
        (None, None) => String::new(),
    };
    let mut options: Vec<&clap::Arg> =
        command.get_arguments().filter(|arg| !arg.is_hide_set() && !arg.is_positional()).collect();
    options.sort_by_key(|arg| (arg.get_display_order(), flag_key(arg)));
    let positionals = command.get_positionals().filter(|arg| !arg.is_hide_set());
    let mut words = vec![format!("\\fB{}\\fR", roff(command.get_bin_name().unwrap_or(command.get_name())))];
    for arg in options.into_iter().chain(positionals) {
        let value = || {
            let names = arg.get_value_names().map(|names| names.join(" "));
            format!("\\fI{}\\fR", roff(&names.unwrap_or_else(|| arg.get_id().to_string().to_uppercase())))
        };
        let takes_value = arg.get_num_args().is_some_and(|n| n.takes_values());
        let mut word = match (arg.get_short(), arg.get_long()) {
            (None, None) => value(),
            (short, long) => {
                let short = short.map(|s| format!("\\fB\\-{s}\\fR"));
                let long = long.map(|l| format!("\\fB\\-\\-{}\\fR", roff(l)));
                let flag = short.into_iter().chain(long).collect::<Vec<_>>().join("|");
                if takes_value { format!("{flag}\\ {}", value()) } else { flag }
            }
        };
        if !arg.is_required_set() {
            word = format!("[{word}]");
        }
        if matches!(arg.get_action(), clap::ArgAction::Append | clap::ArgAction::Count) {
            word.push_str("...");
        }
        words.push(word);
    }
    if command.has_subcommands() {
        words.push("<\\fIsubcommands\\fR>".into());
    }
    words.join(" ")
}

/// Text for a roff line: backslashes and hyphens escaped (text here never starts with `.`).
fn roff(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-")
}

#[test]
fn generated_files_are_current() {
    let dir = repo("docs/man");
    let pages = pages();
    let names: Vec<&str> = pages.iter().map(|(name, _)| name.as_str()).collect();
    assert!(names.contains(&"kubectl-rollout_lua-plan.1") && names.contains(&"kubectl-rollout_lua-lua-obj.1"));
    assert!(!names.iter().any(|n| n.contains("__complete") || n.ends_with("-help.1")), "{names:?}");
    let mut complaints: Vec<String> =
        pages.iter().filter_map(|(name, page)| check_generated(&dir.join(name), page)).collect();
    // A page of a subcommand that no longer exists.
    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".1") && !names.contains(&name.as_str()) {
            if std::env::var_os(UPDATE).is_some_and(|v| v == "1") {
                std::fs::remove_file(entry.path()).unwrap();
                eprintln!("removed {}", entry.path().display());
            } else {
                complaints.push(format!("{} has no subcommand any more", entry.path().display()));
            }
        }
    }
    assert_fresh(complaints);
}

#[test]
fn man_pages_reference_each_other() {
    let pages = pages();
    let root = String::from_utf8_lossy(&pages[0].1).into_owned();
    for (name, _) in &pages[1..] {
        let reference = name.trim_end_matches(".1");
        assert!(root.contains(&format!("{}(1)", roff(reference))), "{PLUGIN}.1 does not point to {reference}(1)");
    }
    let plan = &pages.iter().find(|(name, _)| name == "kubectl-rollout_lua-plan.1").unwrap().1;
    let plan = String::from_utf8_lossy(plan);
    assert!(plan.contains("kubectl rollout\\-lua plan"), "the synopsis names the command as users type it:\n{plan}");
    // With the value an option takes, and `...` where an argument may be given again.
    let synopsis = plan.split(".SH SYNOPSIS\n").nth(1).unwrap().lines().next().unwrap();
    for shown in [
        r"[\fB\-\-step\fR\ \fIN\fR]",
        r"[\fB\-f\fR|\fB\-\-filename\fR\ \fIPATH\fR]...",
        r"[\fB\-\-next\fR]",
        r"[\fIROLLOUT\fR]...",
    ] {
        assert!(synopsis.contains(shown), "{shown} not in the synopsis {synopsis}");
    }
    let eval = &pages.iter().find(|(name, _)| name == "kubectl-rollout_lua-eval.1").unwrap().1;
    assert!(String::from_utf8_lossy(eval).contains(r" \fB\-\-obj\fR\ \fIFILE\fR ["), "required: no brackets");
}

#[test]
fn man_renders_the_pages() {
    if !on_path("man") {
        return crate::support::skip("man not installed");
    }
    for (name, _) in pages() {
        let path = repo("docs/man").join(&name);
        let out = Command::new("man")
            .arg("-l")
            .arg(&path)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .env("MAN_KEEP_FORMATTING", "")
            .env("LC_ALL", "C.UTF-8")
            .output()
            .unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && stderr.is_empty(), "man -l {name}:\n{stderr}");
        assert!(
            stdout.contains("NAME") && stdout.contains("SYNOPSIS") && stdout.contains("kubectl rollout-lua"),
            "{stdout}"
        );
        if name == "kubectl-rollout_lua.1" {
            assert!(stdout.contains("kubectl-rollout_lua-plan(1)") && stdout.contains("EXIT STATUS"), "{stdout}");
        } else {
            assert!(stdout.contains("SEE ALSO\n       kubectl-rollout_lua(1)"), "{stdout}");
            assert!(stdout.contains("EXAMPLES\n"), "every command has examples: {stdout}");
        }
    }
}

#[test]
fn krew_manifest_is_a_template_for_the_four_platforms() {
    let text = std::fs::read_to_string(repo(".krew.yaml")).unwrap();
    let manifest: serde_json::Value = serde_saphyr::from_str(&text).expect(".krew.yaml is YAML");
    assert_eq!(manifest["apiVersion"], "krew.googlecontainertools.github.com/v1alpha2");
    assert_eq!(
        (manifest["kind"].as_str(), manifest["metadata"]["name"].as_str()),
        (Some("Plugin"), Some("rollout-lua"))
    );
    let spec = &manifest["spec"];
    for field in ["version", "homepage", "shortDescription", "description", "caveats"] {
        assert!(spec[field].as_str().is_some_and(|v| !v.is_empty()), "spec.{field}");
    }
    // kubectl_complete-rollout_lua as the one shipped in completions/.
    let exec_line = "exec kubectl-rollout_lua __complete -- \"$@\"";
    assert!(spec["caveats"].as_str().unwrap().contains(&format!("#!/bin/sh\\n{exec_line}\\n")));
    let helper = std::fs::read_to_string(repo("completions/kubectl_complete-rollout_lua")).unwrap();
    assert!(helper.starts_with("#!/bin/sh\n") && helper.ends_with(&format!("\n{exec_line}\n")), "{helper}");
    let platforms: Vec<(String, String)> = spec["platforms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert_eq!(p["bin"], PLUGIN);
            let labels = &p["selector"]["matchLabels"];
            let (os, arch) = (labels["os"].as_str().unwrap(), labels["arch"].as_str().unwrap());
            assert!(p["uri"].as_str().unwrap().ends_with(&format!("-{os}-{arch}.tar.gz")), "{p}");
            assert!(p["sha256"].as_str().unwrap().contains("FILLED BY THE RELEASE"), "{p}");
            (os.to_string(), arch.to_string())
        })
        .collect();
    let expected = [("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64")];
    assert_eq!(platforms, expected.map(|(os, arch)| (os.to_string(), arch.to_string())));
}

/// The commands of the user guide's first console block after the text `after`, each with
/// the lines the guide shows after it.
fn console_block(after: &str) -> Vec<(String, String)> {
    let guide = std::fs::read_to_string(repo("docs/user-guide.md")).unwrap();
    let from = guide.find(after).unwrap_or_else(|| panic!("the user guide has no text {after:?}"));
    let block = guide[from..].split("\n```console\n").nth(1).expect("a console block after it");
    let block = block.split("```").next().unwrap();
    let mut commands: Vec<(String, String)> = Vec::new();
    for line in block.lines() {
        match (line.strip_prefix("$ "), commands.last_mut()) {
            (Some(command), _) => commands.push((command.to_string(), String::new())),
            (None, Some((_, shown))) => shown.push_str(&format!("{line}\n")),
            (None, None) => panic!("the console block after {after:?} starts with output"),
        }
    }
    commands
}

/// The user guide's cluster examples, run as the guide shows them: each `$ …` line through
/// `sh` in one folder (stderr with stdout), `kubectl rollout-lua` being this binary and the
/// kubeconfig pointing at a fake API server, and each `$ kubectl patch …` made on that server.
/// What a command prints is compared with what the guide shows after it (see [`shows`]), once
/// both are [`normalized`]; the differences are collected and reported by [`Walkthrough::end`].
struct Walkthrough {
    test: Test,
    bin: std::path::PathBuf,
    server: FakeHandle,
    namespace: &'static str,
    /// (what the guide's commands name, what this run has instead): the server's URL, backups'
    /// file names.
    renames: std::cell::RefCell<Vec<(String, String)>>,
    /// Whether the times printed differ from those shown (they are masked), or are the same.
    times_differ: bool,
    differences: std::cell::RefCell<Vec<String>>,
}

impl Walkthrough {
    fn new(server: FakeHandle, namespace: &'static str) -> Walkthrough {
        let test = Test::new();
        server.write_kubeconfig(test.path("kubeconfig"), namespace).unwrap();
        let bin = plugin_on_path(&test);
        // The guide's server listens on port 18180.
        let renames = vec![("http://127.0.0.1:18180".to_string(), server.url())];
        let differences = Default::default();
        Walkthrough { test, bin, server, namespace, renames: renames.into(), times_differ: true, differences }
    }

    /// Compares the times printed with those shown as they are (a server whose clock is set).
    fn times_as_shown(mut self) -> Walkthrough {
        self.times_differ = false;
        self
    }

    /// What the shell line `command` prints (see [`shell`]), with the backups this run made
    /// in place of those the guide names.
    fn run(&self, command: &str) -> String {
        let command = self
            .renames
            .borrow()
            .iter()
            .fold(command.to_string(), |command, (guide, ours)| command.replace(guide, ours));
        shell(&self.test, &self.bin, &command)
    }

    /// Runs the guide's first console block after the text `after`: its `kubectl patch` lines
    /// made on the server, its other commands run and compared with what it shows.
    fn block(&self, after: &str) {
        for command in console_block(after) {
            self.step(&command);
        }
    }

    /// Makes one `kubectl patch` of the guide, or runs one command of it, as [`Walkthrough::block`].
    fn step(&self, (command, shown): &(String, String)) {
        if command.starts_with("kubectl patch ") {
            self.kubectl_patch(command, shown);
        } else if let Some(tool) = ["curl", "jq"].into_iter().find(|tool| uses(command, tool) && !on_path(tool)) {
            crate::support::skip(&format!("`{command}` needs {tool}, which is not installed"));
        } else {
            self.compare(&format!("`{command}`"), shown, &self.run(command));
        }
    }

    fn compare(&self, what: &str, shown: &str, printed: &str) {
        let printed = printed.replace(&self.folder(), "/tmp/docs");
        let (shown, printed) = (normalized(shown, self.times_differ), normalized(&printed, self.times_differ));
        if !shows(&shown, &printed) {
            self.differences
                .borrow_mut()
                .push(format!("the guide shows {what} printing\n{shown}but it prints\n{printed}"));
        }
    }

    /// The folder the commands run in, where the guide's ran in `/tmp/docs`.
    fn folder(&self) -> String {
        self.test.path("").to_str().unwrap().trim_end_matches('/').to_string()
    }

    /// Makes on the fake API server the edit a `kubectl patch KIND NAME [--subresource status]
    /// --type merge|json -p PATCH` line of the guide makes, checking that the guide shows what
    /// kubectl prints for it, `shown` (kubectl itself is not needed). The words are the shell's
    /// (quotes, `$(date …)`).
    fn kubectl_patch(&self, command: &str, shown: &str) {
        let words = shell(&self.test, &self.bin, &format!("for w in {command}; do printf '%s\\n' \"$w\"; done"));
        let words: Vec<&str> = words.lines().collect();
        let (group, plural) = match words[2] {
            "rollout" => ("rollouts.kruise.io", "rollouts"),
            "virtualservice" => ("networking.istio.io", "virtualservices"),
            other => panic!("no resource known for `kubectl patch {other}`"),
        };
        let name = words[3];
        assert_eq!(shown, format!("{}.{group}/{name} patched\n", &plural[..plural.len() - 1]));
        let patch = words.iter().skip_while(|w| **w != "-p").nth(1).expect("-p PATCH");
        let patch = serde_json::from_str(patch).unwrap_or_else(|e| panic!("{command}: {e}"));
        self.server.patch_object(group, plural, self.namespace, name, &patch);
    }

    /// The requests since the log was cleared are those of the guide's first text block after
    /// `after`, as `fake-apiserver` logs them (without their times); requests sent at once (a
    /// run of GETs) in any order.
    fn requests_hold(&self, after: &str) {
        let guide = std::fs::read_to_string(repo("docs/user-guide.md")).unwrap();
        let from = guide.find(after).unwrap_or_else(|| panic!("the user guide has no text {after:?}"));
        let block = guide[from..].split("\n```text\n").nth(1).unwrap().split("```").next().unwrap();
        let shown: Vec<String> = block.lines().map(|l| l.rsplit_once(" (").map_or(l, |(l, _)| l).to_string()).collect();
        let logged: Vec<String> = (self.server.requests().iter())
            .map(|r| {
                let query = if r.query.is_empty() { String::new() } else { format!("?{}", r.query) };
                format!("{} {}{query} -> {}", r.method, r.path, r.status.map_or("dropped".into(), |s| s.to_string()))
            })
            .collect();
        let in_any_order = |mut lines: Vec<String>| {
            for run in lines.chunk_by_mut(|a, b| a.starts_with("GET ") && b.starts_with("GET ")) {
                run.sort();
            }
            lines.join("\n") + "\n"
        };
        self.compare("the API server's log", &in_any_order(shown), &in_any_order(logged));
    }

    /// A server with the objects this one has now.
    fn copy_of_the_cluster(&self) -> FakeHandle {
        let kinds = fake_apiserver::plugin_kinds();
        let objects = kinds.iter().flat_map(|kind| self.server.objects(&kind.group, &kind.plural));
        objects.fold(FakeApiServer::builder().resources(kinds.clone()), |b, object| b.object(object)).start()
    }

    /// The backups this run made of `kind/name`, oldest first.
    fn backups(&self, kind: &str, name: &str) -> Vec<std::path::PathBuf> {
        let folder = format!("home/.local/state/kubectl-rollout-lua/backups/fake/{}/{kind}/{name}", self.namespace);
        let mut found: Vec<_> = std::fs::read_dir(self.test.path(&folder))
            .map(|entries| entries.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        found.sort();
        found
    }

    /// From now on the guide's backup file name `guide` (a time) stands for this run's `ours`.
    fn rename(&self, guide: &str, ours: &std::path::Path) {
        let ours = ours.file_name().unwrap().to_str().unwrap().to_string();
        self.renames.borrow_mut().push((guide.to_string(), ours));
    }

    /// Writes the file the guide shows in a code block whose first line names it (`-- NAME`,
    /// `# NAME`), without that line.
    fn write_guide_file(&self, name: &str) {
        std::fs::write(self.test.path(name), guide_file(name)).unwrap();
    }

    /// Fails with every difference found.
    fn end(self) {
        let differences = self.differences.into_inner();
        assert!(differences.is_empty(), "{}", differences.join("\n"));
    }
}

/// The file the user guide shows in a code block whose first line names it (`-- NAME`,
/// `# NAME`), without that line.
fn guide_file(name: &str) -> String {
    let guide = std::fs::read_to_string(repo("docs/user-guide.md")).unwrap();
    let text = guide.split("\n```").skip(1).step_by(2).find_map(|block| {
        let (_language, text) = block.split_once('\n')?;
        text.strip_prefix(&format!("-- {name}\n")).or_else(|| text.strip_prefix(&format!("# {name}\n")))
    });
    text.unwrap_or_else(|| panic!("the user guide shows no file {name}")).to_string()
}

/// Whether the shell line `command` runs `tool` (in a pipe, say).
fn uses(command: &str, tool: &str) -> bool {
    command.split(['|', ';', '&']).any(|segment| segment.split_whitespace().next() == Some(tool))
}

/// `text` with what differs from run to run masked, the same way in the guide and in what a
/// command prints: the times in backups' file names, the build's commit, a timed pause's
/// countdown, and, when `times_differ`, every time.
fn normalized(text: &str, times_differ: bool) -> String {
    let times: &[&str] = if times_differ { &["9999-99-99T99:99:99.999999Z", "9999-99-99T99:99:99Z"] } else { &[] };
    ["99999999T999999.999Z", "0.1.0 (xxxxxxxxxxxx)", "resumes in 9m99s", "\"secondsLeft\":999"]
        .iter()
        .chain(times)
        .fold(text.to_string(), |text, shape| masked(&text, shape))
}

/// `text` with each piece of the shape `shape` (`9` a digit, `x` a hex digit, anything else
/// itself) replaced by `shape` itself.
fn masked(text: &str, shape: &str) -> String {
    let fits = |piece: &[u8]| {
        piece.iter().zip(shape.bytes()).all(|(c, s)| match s {
            b'9' => c.is_ascii_digit(),
            b'x' => c.is_ascii_hexdigit(),
            s => *c == s,
        })
    };
    let (bytes, mut out, mut at) = (text.as_bytes(), Vec::new(), 0);
    while at < bytes.len() {
        if bytes.len() - at >= shape.len() && fits(&bytes[at..at + shape.len()]) {
            out.extend_from_slice(shape.as_bytes());
            at += shape.len();
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn masking_keeps_what_does_not_fit_the_shape() {
    assert_eq!(masked("b 20261122T042210.845Z.yaml", "99999999T999999.999Z"), "b 99999999T999999.999Z.yaml");
    assert_eq!(
        masked("0.1.0 (50a28e961994) 0.1.0 (dirty)", "0.1.0 (xxxxxxxxxxxx)"),
        "0.1.0 (xxxxxxxxxxxx) 0.1.0 (dirty)"
    );
    assert_eq!(masked("resumes in 3m42s, resumes in 42s", "resumes in 9m99s"), "resumes in 9m99s, resumes in 42s");
}

/// The Roles and ClusterRoles of the user guide, by name, as grants of the fake API server (a
/// Role's rules in its namespace; a ClusterRole's everywhere); and the lists of rules the guide
/// gives to add to them, as `rules for RESOURCE` (its first resource), in namespace demo.
pub(crate) fn documented_roles() -> BTreeMap<String, Vec<Rule>> {
    let guide = std::fs::read_to_string(repo("docs/user-guide.md")).unwrap();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array().map_or(vec!["*".into()], |a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
    };
    let grants = |rules: &Value, namespace: &str| -> Vec<Rule> {
        let rules = rules.as_array().unwrap().iter();
        rules
            .map(|r| {
                Rule::new(strings(&r["verbs"]))
                    .groups(strings(&r["apiGroups"]))
                    .resources(strings(&r["resources"]))
                    .names(strings(&r["resourceNames"]))
                    .namespaces([namespace])
            })
            .collect()
    };
    let mut roles = BTreeMap::new();
    for block in guide.split("```yaml\n").skip(1).map(|b| b.split("```").next().unwrap()) {
        if block.starts_with("- apiGroups:") {
            let rules: Value =
                serde_saphyr::from_str(block).unwrap_or_else(|e| panic!("rules in the guide: {e}\n{block}"));
            roles.insert(format!("rules for {}", rules[0]["resources"][0].as_str().unwrap()), grants(&rules, "demo"));
        }
        if !block.contains("\nkind: Role\n") && !block.contains("\nkind: ClusterRole\n") {
            continue;
        }
        let documents: Vec<Value> =
            serde_saphyr::from_multiple(block).unwrap_or_else(|e| panic!("a Role block of the guide: {e}\n{block}"));
        for role in documents.iter().filter(|d| d["kind"] == "Role" || d["kind"] == "ClusterRole") {
            let namespace = role["metadata"]["namespace"].as_str().unwrap_or("*");
            roles.insert(role["metadata"]["name"].as_str().unwrap().to_string(), grants(&role["rules"], namespace));
        }
    }
    roles
}

/// The user guide's cluster, granting only the guide's Roles `names`.
fn granting(names: &[&str], objects: impl FnOnce(fake_apiserver::Builder) -> fake_apiserver::Builder) -> FakeHandle {
    let roles = documented_roles();
    let mut builder = objects(FakeApiServer::builder().resources(fake_apiserver::plugin_kinds()));
    for name in names {
        for rule in roles.get(*name).unwrap_or_else(|| panic!("the guide has no Role {name}: {:?}", roles.keys())) {
            builder = builder.grant(rule.clone());
        }
    }
    builder.start()
}

fn user_guide_cluster(builder: fake_apiserver::Builder) -> fake_apiserver::Builder {
    builder.objects_from_yaml(&std::fs::read_to_string(repo("tests/fixtures/user-guide/demo.yaml")).unwrap())
}

/// The user guide's cluster, as `fake-apiserver tests/fixtures/user-guide` serves it.
fn demo_server() -> FakeHandle {
    user_guide_cluster(FakeApiServer::builder().resources(fake_apiserver::plugin_kinds())).start()
}

#[test]
fn the_user_guides_walkthrough_holds_against_its_demo_cluster() {
    let walk = Walkthrough::new(demo_server(), "demo");
    walk.block("Here is\nwhat the helper answers kubectl");
    // plan ROLLOUT
    walk.block("### plan ROLLOUT (cluster)");
    walk.block("The step after it:");
    let healthy = console_block("gets the plan of step 1, with a note:");
    walk.block("gets the plan of step 1, with a note:");
    // Troubleshooting's example is in the state of that block's first patch.
    walk.kubectl_patch(&healthy[0].0, &healthy[0].1);
    walk.block("no need to approve: not in canary or blue-green progress`** (exit 3");
    walk.kubectl_patch(&healthy[2].0, &healthy[2].1);
    walk.block("reason `Cancelling`), then put back:");
    walk.block("`-o json` (or `yaml`) prints the plan as data:");
    walk.block("With `--detailed-exitcode` the exit status is 2 here");
    walk.block("mode it takes.)");
    walk.block("Check both:");
    walk.block("make one the current one with `kubectl config use-context NAME`):");
    // approve
    walk.block("A first try without a terminal:");
    walk.block("The guards refuse with exit status 3 as well");
    walk.block("while the controller is still upgrading the pods of a step");
    walk.block("`--dry-run=server` sends every write, including the status patch");
    walk.server.clear_log();
    walk.block("The real thing:");
    walk.requests_hold("The requests it made, from the API server's log");
    walk.block("The status afterwards: the sub-status says `StepReady`");
    // The Rollout moved on to step 2 by hand; `status`'s first example is from before the
    // `--traffic-only` run that follows.
    let traffic_only = console_block("and only the\nVirtualService changes:");
    walk.step(&traffic_only[0]);
    walk.block("For each gateway object: `original` (`absent` for a canary Ingress)");
    walk.step(&traffic_only[1]);
    walk.block("Afterwards `plan` finds nothing left to do:");
    // `--to-end` on a copy of the cluster: the restore examples are from before it.
    approve_to_the_end(Walkthrough::new(walk.copy_of_the_cluster(), "demo"));
    walk.block("which makes it a gate for a CI job");
    walk.block("`--until-paused` are those above:");
    walk.block("routed `ratings`' VirtualService: it is `original`, with the same note):");
    walk.block("last judged by the API server's clock):");
    // restore
    walk.block("Here, after the `--traffic-only` run");
    walk.block("The Rollouts routing them are claimed, and the objects checked for edits");
    walk.block("and prints where the backups are:");
    let restored = walk.backups("VirtualService", "reviews");
    walk.rename("20261122T042225.540Z.yaml", restored.last().unwrap());
    walk.block("trusted to be the whole object.");
    walk.block("Putting a backup\nback:");
    // record
    walk.block("a device (`--output-file /dev/stdout`");
    walk.block("The script author's guide has the details.");
    walk.block("since the\nrecording holds no ConfigMap:");
    walk.write_guide_file("bad.lua");
    walk.block("as this\none (here with the walkthrough's Rollout at step 2):");
    walk.end();
}

/// The guide's `approve --to-end` from step 2 of 3, with the guide's stand-in for the
/// controller: its `kubectl patch` lines, each made once the run has shown the state the guide
/// says to wait for, as a reader in a second shell makes them; then `status -w` on the release
/// done.
fn approve_to_the_end(walk: Walkthrough) {
    let block = console_block("the same patches at the same points:");
    let (command, shown) = &block[0];
    // Run in the background (the binary itself, not through `sh`), so that the stand-in can wait
    // for what it has printed.
    let args: Vec<&str> = command.strip_prefix("kubectl rollout-lua ").unwrap().split(' ').collect();
    let running = walk.test.spawn(&args);
    // What the guide says to wait for before each patch.
    let shown_before = [
        "step 2/3 StepReady (progressing)",
        "step 3/3 StepUpgrade (progressing)",
        "step 3/3 Completed (all steps done, finalising)",
    ];
    let patches = console_block("The stand-in for the controller, from the second shell:");
    assert_eq!(patches.len(), shown_before.len(), "a patch for each state the guide names");
    for (shown_now, patch) in shown_before.iter().zip(&patches) {
        running.wait_for_stdout(shown_now);
        walk.step(patch);
    }
    let out = running.finish_within(std::time::Duration::from_secs(60));
    walk.compare(&format!("`{command}`"), shown, &format!("{}{}", out.stdout, out.stderr));
    walk.block("Once the release is done, `status -w` exits at once");
    walk.end();
}

/// The user guide's cluster with jane's claim on `reviews` (the guide's `claim.yaml`), on a
/// server whose clock says `time` (seconds since the epoch).
fn claimed_at(time: i64) -> FakeHandle {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let builder = FakeApiServer::builder().resources(fake_apiserver::plugin_kinds()).clock_offset(time - now);
    user_guide_cluster(builder).objects_from_yaml(&guide_file("claim.yaml")).start()
}

#[test]
fn the_user_guides_claim_examples_hold() {
    const AT_0501: i64 = 1_795_496_460; // 2026-11-24T05:01:00Z: jane's claim holds until 05:02.
    const AT_0504: i64 = AT_0501 + 180;
    let walk = Walkthrough::new(claimed_at(AT_0501), "demo").times_as_shown();
    walk.block("with this Lease, at 05:01 by the API server's clock");
    walk.block("the Lease `claim.yaml` at 05:01");
    walk.end();
    // jane's claim has expired; joe's approve takes it over right before release-claim's delete.
    let walk = Walkthrough::new(claimed_at(AT_0504), "demo").times_as_shown();
    walk.server.before_write(1, |store| {
        store.modify("coordination.k8s.io", "leases", "demo", "rollout-lua.reviews", |lease| {
            lease["spec"]["holderIdentity"] = "joe@desk (pid 77)".into();
            lease["spec"]["acquireTime"] = "2026-11-24T05:03:10.000000Z".into();
            lease["spec"]["renewTime"] = "2026-11-24T05:03:10.000000Z".into();
        });
    });
    walk.block("took it over between the read and the delete");
    walk.end();
}

#[test]
fn the_user_guides_shared_traffic_routing_example_holds() {
    let fixture = std::fs::read_to_string(repo("tests/fixtures/user-guide/shared-traffic-routing.yaml")).unwrap();
    let server = FakeApiServer::builder().resources(fake_apiserver::plugin_kinds()).objects_from_yaml(&fixture);
    let walk = Walkthrough::new(server.start(), "shop");
    walk.block("tests/fixtures/user-guide/shared-traffic-routing.yaml`):");
    walk.end();
}

#[test]
fn the_user_guides_approve_timeout_example_holds() {
    let walk = Walkthrough::new(demo_server(), "demo");
    walk.block("Rollout `StepReady`, which nothing approves:");
    walk.end();
}

#[test]
fn the_user_guides_webhook_refusal_holds() {
    // Istio's validation webhook, as the guide's example has it, refuses the DestinationRule's
    // canary subset.
    let server = user_guide_cluster(FakeApiServer::builder().resources(fake_apiserver::plugin_kinds())).admission(
        "validation.istio.io",
        |request| {
            let subsets = request.object["spec"]["subsets"].as_array().into_iter().flatten();
            match subsets.into_iter().any(|subset| subset["name"] == "canary") {
                true if request.plural == "destinationrules" => Err("subset canary is not allowed".into()),
                _ => Ok(()),
            }
        },
    );
    let walk = Walkthrough::new(server.start(), "demo");
    walk.block("Here Istio's validation webhook refused the DestinationRule's write");
    walk.end();
}

/// A server as `fake-apiserver examples/NAME` starts it: every YAML file of the example.
fn example_cluster(name: &str) -> FakeHandle {
    let mut files: Vec<_> = std::fs::read_dir(repo(&format!("examples/{name}")))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let builder = FakeApiServer::builder().resources(fake_apiserver::plugin_kinds());
    files.iter().fold(builder, |b, file| b.objects_from_yaml(&std::fs::read_to_string(file).unwrap())).start()
}

#[test]
fn the_user_guides_ingress_and_three_provider_examples_hold() {
    let walk = Walkthrough::new(example_cluster("nginx-canary"), "demo");
    // The status example is from right after the first approve.
    let approvals = console_block("then at step 2:");
    walk.step(&approvals[0]);
    walk.step(&approvals[1]);
    walk.block("Right after the first approve above:");
    for command in &approvals[2..] {
        walk.step(command);
    }
    walk.block("`restore --ref Ingress.networking.k8s.io/web-canary` deletes it");
    walk.end();
    let walk = Walkthrough::new(example_cluster("three-providers"), "demo");
    walk.block("put at step 1 by hand as `web` is in");
    walk.end();
}

#[test]
fn the_user_guides_gateway_restore_example_holds() {
    let walk = Walkthrough::new(example_cluster("gateway-canary"), "demo");
    walk.block("On\n[`examples/gateway-canary`](../examples/gateway-canary/), before any release:");
    walk.end();
}

#[test]
fn each_command_runs_with_exactly_the_role_the_user_guide_documents_for_it() {
    let test = Test::new();
    let run = |server: &FakeHandle, args: &[&str]| {
        server.write_kubeconfig(test.path("kubeconfig"), "demo").unwrap();
        test.run_args(args)
    };
    let read = granting(&["rollout-lua-read"], user_guide_cluster);
    run(&read, &["plan", "reviews"]).success();
    run(&read, &["plan", "-l", "app=reviews"]).success();
    run(&read, &["status"]).success().stdout_has("reviews");
    run(&read, &["status", "reviews"]).success();
    // Following watches the Rollouts and their gateway objects, with no warning of polling.
    let out = run(&read, &["status", "reviews", "-w", "--timeout", "2s"]);
    assert!(!out.stderr.contains("forbidden"), "{}", out.stderr);
    run(&read, &["record", "reviews"]).success();
    let traffic = granting(&["rollout-lua-traffic"], user_guide_cluster);
    run(&traffic, &["approve", "reviews", "--traffic-only", "--yes"]).success();
    // A partition release (ratings): whether its step is routed hangs on the workload's count,
    // which these Roles let be read (an RBAC trial: without it, both refused).
    run(&traffic, &["approve", "ratings", "--traffic-only", "--yes"]).success();
    let approve = granting(&["rollout-lua-approve"], user_guide_cluster);
    run(&approve, &["approve", "reviews", "--yes"]).success().stdout_has("rollout.rollouts.kruise.io/reviews approved");
    run(&approve, &["approve", "ratings", "--yes"]).success().stdout_has("rollout.rollouts.kruise.io/ratings approved");
    run(&approve, &["release-claim", "reviews", "--yes"]).success().stdout_has("is not claimed");
    // restore, on what the approval left (the originals stored, a backup of each object).
    let approved: Vec<Value> = [("rollouts.kruise.io", "rollouts"), ("apps", "deployments")]
        .into_iter()
        .chain([("networking.istio.io", "virtualservices"), ("networking.istio.io", "destinationrules")])
        .flat_map(|(group, plural)| approve.objects(group, plural))
        .collect();
    let seeded = |builder: fake_apiserver::Builder| approved.iter().fold(builder, |b, o| b.object(o.clone()));
    let restore = granting(&["rollout-lua-restore"], seeded);
    run(&restore, &["restore", "--ref", "VirtualService/reviews", "--yes"]).success().stdout_has("restored");
    run(&restore, &["restore", "reviews", "--yes"]).success().stdout_has("DestinationRule demo/reviews restored");
    // The restore's own backup of the DestinationRule (routed) is put back on the same server:
    // one copied to another server would be another object (another uid), which is refused.
    let backups = test.path("home/.local/state/kubectl-rollout-lua/backups/fake/demo/DestinationRule/reviews");
    let backup = std::fs::read_dir(backups).unwrap().map(|e| e.unwrap().path()).max().expect("a backup");
    run(&restore, &["restore", "--from-backup", backup.to_str().unwrap(), "--yes"]).success().stdout_has("restored");
}

#[test]
fn completion_lists_names_with_the_roles_the_user_guide_documents_for_it() {
    let mut namespaces = fake_apiserver::ApiResourceDef::new("", "v1", "Namespace", "namespaces");
    namespaces.namespaced = false;
    let server = granting(&["rollout-lua-read", "rollout-lua-complete-namespaces"], |builder| {
        let namespace = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}});
        user_guide_cluster(builder).resource(namespaces).object(namespace)
    });
    let test = Test::new();
    server.write_kubeconfig(test.path("kubeconfig"), "demo").unwrap();
    let complete = |words: &[&str]| test.run_args([&["__complete", "--"], words].concat()).success().stdout;
    assert_eq!(complete(&["approve", ""]), "ratings\nreviews\n:4\n");
    assert_eq!(complete(&["status", "-n", ""]), "demo\n:4\n");
}

/// What a guide's `$ …` blocks show and what the binary prints for the ones it can run
/// offline. A guide's files come from its own code blocks: one that follows a line
/// `<!-- file: NAME -->`, or whose first line is `# NAME` or `-- NAME` (NAME a path with a
/// `.yaml`, `.json` or `.lua` extension; a comment, kept, so that the lines a message names are
/// those of the block as a reader saves it), and the output of
/// `$ cat NAME`; `examples/` and `lua_configuration/` are the repository's. The commands run in
/// order in one folder, through `sh`, stderr with stdout, so that later ones see the files
/// earlier ones wrote. A block after a line `<!-- not run: WHY -->` is skipped, saying why.
struct Guide {
    test: Test,
    path: &'static str,
    bin: std::path::PathBuf,
    ran: usize,
    differences: Vec<String>,
}

impl Guide {
    fn run(path: &'static str) -> Guide {
        let test = Test::new();
        let bin = plugin_on_path(&test);
        let mut guide = Guide { test, path, bin, ran: 0, differences: Vec::new() };
        let text = std::fs::read_to_string(repo(path)).unwrap();
        let mut lines = text.lines().enumerate();
        let mut before = "";
        while let Some((at, line)) = lines.next() {
            let Some(language) = line.trim_start().strip_prefix("```").filter(|l| !l.is_empty()) else {
                if !line.trim().is_empty() {
                    before = line.trim();
                }
                continue;
            };
            let indent = line.len() - line.trim_start().len();
            let block: Vec<&str> = lines
                .by_ref()
                .map(|(_, l)| l)
                .take_while(|l| !l.trim_start().starts_with("```"))
                .map(|l| l.get(indent..).unwrap_or(l.trim_start()))
                .collect();
            let not_run = before.strip_prefix("<!-- not run: ").and_then(|b| b.strip_suffix(" -->"));
            match (language, not_run) {
                ("console", Some(why)) => crate::support::skip(&format!("{path}:{}: {why}", at + 2)),
                ("console", None) => guide.console(at + 2, &block),
                _ => {
                    let named = before.strip_prefix("<!-- file: ").and_then(|b| b.strip_suffix(" -->"));
                    let first = block.first().and_then(|l| l.strip_prefix("# ").or_else(|| l.strip_prefix("-- ")));
                    let is_name =
                        |n: &&str| !n.contains(' ') && [".yaml", ".json", ".lua"].iter().any(|e| n.ends_with(e));
                    if let Some(name) = named.or(first.filter(is_name)) {
                        guide.write(name, &format!("{}\n", block.join("\n")));
                    }
                }
            }
            before = "";
        }
        guide
    }

    fn write(&self, name: &str, text: &str) {
        assert!(
            std::path::Path::new(name).is_relative() && !name.contains(".."),
            "{}: a file outside: {name}",
            self.path
        );
        let path = self.test.path(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A console block's commands, each with the lines it shows (up to the next `$ `).
    fn console(&mut self, first_line: usize, block: &[&str]) {
        let starts: Vec<usize> = (0..block.len()).filter(|&i| block[i].starts_with("$ ")).collect();
        for (n, &start) in starts.iter().enumerate() {
            let end = starts.get(n + 1).copied().unwrap_or(block.len());
            let mut command = block[start][2..].to_string();
            let mut shown = start + 1;
            while command.ends_with('\\') && shown < end {
                command = format!("{}{}", command.trim_end_matches('\\'), block[shown]);
                shown += 1;
            }
            let output: String = block[shown..end].iter().map(|l| format!("{l}\n")).collect();
            let line = first_line + start;
            if let Some(file) = command.strip_prefix("cat ").filter(|f| !f.contains(' ')) {
                self.write(file, &output);
            } else if offline(&command) || copies_or_edits(&command) {
                self.ran += 1;
                let actual = shell(&self.test, &self.bin, &command);
                if !shows(&output, &actual) {
                    self.differences
                        .push(format!("{}:{line}: `{command}` shows\n{output}but prints\n{actual}", self.path));
                }
            }
        }
    }
}

/// A folder for `PATH` in `test`'s folder, with this binary and a `kubectl` that runs it for
/// `kubectl rollout-lua` as kubectl runs a plugin (kubectl itself is not there); `examples/` and
/// `lua_configuration/` are linked into `test`'s folder.
fn plugin_on_path(test: &Test) -> std::path::PathBuf {
    let bin = test.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for dir in ["examples", "lua_configuration"] {
        std::os::unix::fs::symlink(repo(dir), test.path(dir)).unwrap();
    }
    std::os::unix::fs::symlink(crate::support::BINARY, bin.join(PLUGIN)).unwrap();
    let kubectl = format!(
        "#!/bin/sh\n[ \"$1\" = rollout-lua ] || {{ echo \"no kubectl here\" >&2; exit 127; }}\nshift\nexec {} \"$@\"\n",
        crate::support::BINARY
    );
    std::fs::write(bin.join("kubectl"), kubectl).unwrap();
    std::fs::set_permissions(bin.join("kubectl"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    bin
}

/// What the shell line `command` prints, stderr with stdout, run by `sh` in `test`'s folder
/// with `bin` ([`plugin_on_path`]) first on `PATH`.
fn shell(test: &Test, bin: &std::path::Path, command: &str) -> String {
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = test.command("sh", ["-c", &format!("{{ {command}\n}} 2>&1")]).env("PATH", path).output();
    String::from_utf8_lossy(&out.unwrap().stdout).into_owned()
}

/// Whether `actual` is the output `shown`, where a shown line `…` stands for any lines.
fn shows(shown: &str, actual: &str) -> bool {
    let pieces: Vec<&str> = shown.split("…\n").collect();
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if pieces.len() == 1 {
        return shown == actual;
    }
    let Some(mut rest) = actual.strip_prefix(first) else { return false };
    for piece in &pieces[1..pieces.len() - 1] {
        let Some(at) = rest.find(piece) else { return false };
        rest = &rest[at + piece.len()..];
    }
    rest.ends_with(last)
}

/// Whether `command` is one copy (`cp -r`) or in-place edit (`sed -i`) of the guide's own files,
/// which a later example runs on.
fn copies_or_edits(command: &str) -> bool {
    ["cp -r ", "sed -i "].iter().any(|setup| command.starts_with(setup))
        && !command.contains(['|', ';', '&', '>', '<', '`'])
        && !command.contains("$(")
        && !command.contains("..")
        && !command.contains(" /")
}

/// Whether every command of the shell line `command` is this plugin's, and needs no cluster:
/// `test`, `eval`, `lua-obj`, `completions`, and `plan` of files (`-f`, `-k`).
fn offline(command: &str) -> bool {
    fn plugin(segment: &str) -> Option<Vec<&str>> {
        let words: Vec<&str> = segment.split_whitespace().collect();
        match words.as_slice() {
            ["kubectl", "rollout-lua", rest @ ..] | [PLUGIN, rest @ ..] => Some(rest.to_vec()),
            _ => None,
        }
    }
    let segments: Vec<&str> = command.split(['|', ';']).map(str::trim).filter(|s| !s.is_empty()).collect();
    let ours: Vec<Vec<&str>> = segments.iter().filter_map(|s| plugin(s)).collect();
    let others_are_filters = segments.iter().filter(|s| plugin(s).is_none()).all(|s| {
        ["head ", "tail ", "grep ", "jq ", "cut ", "sed ", "echo "].iter().any(|filter| s.starts_with(filter))
    });
    !ours.is_empty()
        && others_are_filters
        && ours.iter().all(|words| match words.first() {
            Some(&("test" | "eval" | "lua-obj" | "completions")) => true,
            Some(&"plan") => words.iter().any(|w| ["-f", "-k", "-R"].contains(w)),
            _ => false,
        })
}

#[test]
fn the_guides_offline_examples_print_what_they_show() {
    let mut differences = Vec::new();
    for path in [
        "docs/script-authors-guide.md",
        "docs/user-guide.md",
        "README.md",
        "examples/full-link-canary/README.md",
        "examples/gateway-canary/README.md",
        "examples/istio-canary-ab/README.md",
        "examples/nginx-canary/README.md",
        "examples/three-providers/README.md",
        "examples/v1alpha1-weight/README.md",
    ] {
        let guide = Guide::run(path);
        eprintln!("{path}: ran {} offline examples", guide.ran);
        differences.extend(guide.differences);
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// docs/architecture.md's module graph is the one the sources' `crate::` paths make, outside
/// their tests (`cli` may use everything, and the uses of `error` are left out, as the doc says),
/// and it has no cycle, through `error` either.
#[test]
fn the_architecture_module_graph_is_the_sources() {
    let doc = std::fs::read_to_string(repo("docs/architecture.md")).unwrap();
    let graph = doc.split("## The module graph").nth(1).unwrap().split("```text\n").nth(1).unwrap();
    let mut documented: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in graph.split("```").next().unwrap().lines() {
        let line = line.split('(').next().unwrap();
        match line.split_once('→') {
            Some((module, uses)) => {
                let mut uses: Vec<String> = uses.split(',').map(|u| u.trim().to_string()).collect();
                uses.sort();
                documented.insert(module.trim().to_string(), uses);
            }
            None => {
                let modules = line.split("depend on nothing").next().unwrap();
                documented.extend(modules.split(',').map(|m| (m.trim().to_string(), Vec::new())));
            }
        }
    }
    let lib = std::fs::read_to_string(repo("src/lib.rs")).unwrap();
    let modules: Vec<&str> = lib.lines().filter_map(|l| l.strip_prefix("pub(crate) mod ")?.strip_suffix(';')).collect();
    assert!(modules.len() > 10, "src/lib.rs's modules: {modules:?}");
    let mut differences = Vec::new();
    let mut graph: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for module in modules.iter().filter(|m| **m != "cli") {
        let mut uses: Vec<String> =
            crate_paths(module).into_iter().filter(|used| used != module && modules.contains(&used.as_str())).collect();
        uses.sort();
        uses.dedup();
        graph.insert(module, uses.clone());
        uses.retain(|used| used != "error");
        match documented.get(*module) {
            Some(doc) if *doc == uses => {}
            Some(doc) => differences.push(format!("{module}: the doc says {doc:?}, the sources use {uses:?}")),
            None => differences.push(format!("{module} (uses {uses:?}) is not in the graph")),
        }
    }
    assert!(differences.is_empty(), "docs/architecture.md's module graph:\n{}", differences.join("\n"));
    // No module reaches itself, `error`'s uses counted.
    for start in graph.keys() {
        let (mut seen, mut next) = (BTreeSet::new(), graph[start].clone());
        while let Some(module) = next.pop() {
            assert_ne!(&module, start, "a module cycle through {start}: {graph:?}");
            if seen.insert(module.clone()) {
                next.extend(graph.get(module.as_str()).into_iter().flatten().cloned());
            }
        }
    }
}

/// The first names of the `crate::` paths in a top-level module's files (`src/M.rs`, `src/M/**`),
/// outside their tests and comments; `crate::{a, b::c}` gives a and b.
fn crate_paths(module: &str) -> Vec<String> {
    fn files(path: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
        if path.is_dir() {
            for entry in std::fs::read_dir(path).unwrap() {
                files(&entry.unwrap().path(), found);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path.to_path_buf());
        }
    }
    let mut found = Vec::new();
    for path in [repo(&format!("src/{module}.rs")), repo(&format!("src/{module}"))] {
        if path.exists() {
            files(&path, &mut found);
        }
    }
    let mut names = Vec::new();
    for file in found {
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        let code: String = code.lines().map(|l| format!("{}\n", l.split("//").next().unwrap())).collect();
        let word = |text: &str| text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            let Some(group) = rest.strip_prefix('{') else {
                names.push(word(rest));
                continue;
            };
            // The names at the group's first level, each starting an item.
            let mut depth = 0;
            let mut starts_item = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => starts_item = true,
                    c if starts_item && depth == 0 && !c.is_whitespace() => {
                        names.push(word(&group[i..]));
                        starts_item = false;
                    }
                    _ => {}
                }
            }
        }
    }
    names
}
