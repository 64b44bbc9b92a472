//! The man pages under `docs/man/` are what clap_mangen renders from the command line definition
//! now (one page for the plugin, one per visible subcommand, as git's), and `man` renders them.

use crate::completion::{UPDATE, assert_fresh, check_generated};
use crate::support::cluster::{FakeApiServer, FakeHandle, Rule};
use crate::support::{Test, repo};
use clap::CommandFactory;
use rollout_lua::cli::Cli;
use serde_json::Value;
use std::collections::BTreeMap;
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
    clap_mangen::Man::new(command)
        .source(source)
        .manual("kubectl rollout-lua")
        .render(&mut page)
        .expect("render a man page");
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
}

#[test]
fn man_renders_the_pages() {
    if !std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|p| p.join("man").is_file())) {
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

/// The output the user guide shows for `$ COMMAND` (the lines after it up to the next command
/// or the end of its block).
fn guide_output(command: &str) -> String {
    let guide = std::fs::read_to_string(repo("docs/user-guide.md")).unwrap();
    let start = guide.find(&format!("\n$ {command}\n")).unwrap_or_else(|| panic!("the guide shows `{command}`"));
    let shown = &guide[start + command.len() + 4..];
    let end = [shown.find("\n$ "), shown.find("```")].into_iter().flatten().min().unwrap();
    shown[..end].trim_end_matches('\n').to_string() + "\n"
}

#[test]
fn the_user_guides_cluster_examples_hold_against_the_fake_api_servers_binary_kinds() {
    // The guide's cluster examples are run against `fake-apiserver tests/fixtures/user-guide`,
    // which serves `plugin_kinds` (Leases for the claim, Deployments for the replicas).
    let fixture = std::fs::read_to_string(repo("tests/fixtures/user-guide/demo.yaml")).unwrap();
    let server = FakeApiServer::builder().resources(fake_apiserver::plugin_kinds()).objects_from_yaml(&fixture).start();
    let test = Test::new();
    server.write_kubeconfig(test.path("kubeconfig"), "demo").unwrap();
    let run = |args: &[&str]| test.run_args(args);
    // What a command prints (stdout, then stderr, then its exit status when the guide echoes it)
    // is what the guide shows, `…` standing for any lines.
    let holds = |command: &str, out: crate::support::Output| {
        let shown = guide_output(command);
        let mut printed = format!("{}{}", out.stdout, out.stderr);
        if command.ends_with(r#"echo "exit status $?""#) {
            printed.push_str(&format!("exit status {}\n", out.status));
        }
        assert!(shows(&shown, &printed), "the guide shows `{command}` printing\n{shown}but it prints\n{printed}");
    };
    run(&["plan", "reviews"]).success().stdout_is(&guide_output("kubectl rollout-lua plan reviews"));
    holds("kubectl rollout-lua plan reviews --next", run(&["plan", "reviews", "--next"]).success());
    kubectl_patch(&server, PATCH_HEALTHY);
    let healthy = run(&["plan", "-l", "app=reviews", "--next"]).success();
    let first_six: String = healthy.stdout.lines().take(6).map(|l| format!("{l}\n")).collect();
    assert_eq!(first_six, guide_output("kubectl rollout-lua plan -l app=reviews --next | head -6"));
    kubectl_patch(&server, PATCH_BACK_TO_STEP_1);
    run(&["plan", "reviews", "--detailed-exitcode"]).status(2);
    holds("kubectl rollout-lua plan reviews --dry-run=server", run(&["plan", "reviews", "--dry-run=server"]).success());
    let wrong_context = run(&["plan", "reviews", "--context", "prod"]).status(1);
    assert_eq!(wrong_context.stderr, guide_output("kubectl rollout-lua plan reviews --context prod"));
    holds(r#"kubectl rollout-lua approve reviews < /dev/null; echo "exit status $?""#, run(&["approve", "reviews"]));
    holds(
        r#"kubectl rollout-lua approve reviews --expect-step 2 --yes; echo "exit status $?""#,
        run(&["approve", "reviews", "--expect-step", "2", "--yes"]),
    );
    kubectl_patch(&server, PATCH_STEP_UPGRADE);
    holds(r#"kubectl rollout-lua approve reviews --yes; echo "exit status $?""#, run(&["approve", "reviews", "--yes"]));
    kubectl_patch(&server, PATCH_STEP_PAUSED);
    holds("kubectl rollout-lua approve reviews --dry-run=server", run(&["approve", "reviews", "--dry-run=server"]));
    run(&["approve", "reviews", "--yes"])
        .success()
        .stdout_has("rollout.rollouts.kruise.io/reviews approved (step 1/3)");
    run(&["status", "reviews"])
        .success()
        .stdout_has("Replicas: canary 1 (1 ready); stable 4 (4 ready); Deployment reviews 4 (4 ready)")
        .stdout_has("VirtualService demo/reviews   at step 1");
    run(&["release-claim", "reviews", "--yes"]).success().stdout_has("Rollout demo/reviews is not claimed");
    run(&["restore", "reviews", "--yes"]).success().stdout_has("VirtualService demo/reviews restored (backup ");
    // What record writes replays offline.
    run(&["record", "reviews", "--dir", "recorded"]).success();
    run(&["test", "recorded"]).success().stdout_is(&guide_output("kubectl rollout-lua test recorded"));
    let plan = run(&["plan", "-R", "-f", "recorded", "--step", "2"]).success();
    let shown = guide_output("kubectl rollout-lua plan -R -f recorded --step 2");
    assert!(shows(&shown, &plan.stdout), "the guide shows\n{shown}but plan prints\n{}", plan.stdout);
}

/// The user guide's hand edits of the Rollout's status, in the order it makes them.
const PATCH_HEALTHY: &str = r#"kubectl patch rollout reviews --subresource status --type merge -p '{"status":{"phase":"Healthy","message":"workload deployment is completed","canaryStatus":null}}'"#;
const PATCH_BACK_TO_STEP_1: &str = r#"kubectl patch rollout reviews --subresource status --type merge -p '{"status":{"phase":"Progressing","message":"Rollout is in step(1/3), and you need manually confirm to enter the next step","canaryStatus":{"currentStepIndex":1,"currentStepState":"StepPaused","canaryReplicas":1,"canaryReadyReplicas":1}}}'"#;
const PATCH_STEP_UPGRADE: &str = r#"kubectl patch rollout reviews --subresource status --type merge -p '{"status":{"canaryStatus":{"currentStepState":"StepUpgrade"}}}'"#;
const PATCH_STEP_PAUSED: &str = r#"kubectl patch rollout reviews --subresource status --type merge -p '{"status":{"canaryStatus":{"currentStepState":"StepPaused"}}}'"#;

/// Makes on the fake API server the edit a `kubectl patch KIND NAME … -p 'PATCH'` line of the
/// user guide makes, once the guide shows that very line (kubectl itself is not needed).
fn kubectl_patch(server: &FakeHandle, command: &str) {
    let words: Vec<&str> = command.split(' ').collect();
    let (group, plural) = match words[2] {
        "rollout" => ("rollouts.kruise.io", "rollouts"),
        "virtualservice" => ("networking.istio.io", "virtualservices"),
        other => panic!("no resource known for `kubectl patch {other}`"),
    };
    assert_eq!(guide_output(command), format!("{}.{group}/{} patched\n", &plural[..plural.len() - 1], words[3]));
    let patch = command.split_once(" -p '").unwrap().1.strip_suffix('\'').unwrap();
    server.patch_object(group, plural, "demo", words[3], &serde_json::from_str(patch).unwrap());
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
    run(&read, &["record", "reviews"]).success();
    let traffic = granting(&["rollout-lua-traffic"], user_guide_cluster);
    run(&traffic, &["approve", "reviews", "--traffic-only", "--yes"]).success();
    let approve = granting(&["rollout-lua-approve"], user_guide_cluster);
    run(&approve, &["approve", "reviews", "--yes"]).success().stdout_has("rollout.rollouts.kruise.io/reviews approved");
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
/// `.yaml`, `.json` or `.lua` extension; that line is left out), and the output of
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
        let bin = test.path("bin");
        std::fs::create_dir_all(&bin).unwrap();
        for dir in ["examples", "lua_configuration"] {
            std::os::unix::fs::symlink(repo(dir), test.path(dir)).unwrap();
        }
        std::os::unix::fs::symlink(crate::support::BINARY, bin.join(PLUGIN)).unwrap();
        // `kubectl rollout-lua` as kubectl runs a plugin; kubectl itself is not there.
        let kubectl = format!(
            "#!/bin/sh\n[ \"$1\" = rollout-lua ] || {{ echo \"no kubectl here\" >&2; exit 127; }}\nshift\nexec {} \"$@\"\n",
            crate::support::BINARY
        );
        std::fs::write(bin.join("kubectl"), kubectl).unwrap();
        std::fs::set_permissions(bin.join("kubectl"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
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
                    // The first line that names the file is a label, not its content.
                    match (named, first.filter(is_name)) {
                        (Some(name), _) => guide.write(name, &format!("{}\n", block.join("\n"))),
                        (None, Some(name)) => guide.write(name, &format!("{}\n", block[1..].join("\n"))),
                        (None, None) => {}
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
                let path = format!("{}:{}", self.bin.display(), std::env::var("PATH").unwrap_or_default());
                let out = self.test.command("sh", ["-c", &format!("{{ {command}\n}} 2>&1")]).env("PATH", path).output();
                let actual = String::from_utf8_lossy(&out.unwrap().stdout).into_owned();
                if !shows(&output, &actual) {
                    self.differences
                        .push(format!("{}:{line}: `{command}` shows\n{output}but prints\n{actual}", self.path));
                }
            }
        }
    }
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
/// their tests (`cli` may use everything and `error` is left out, as the doc says).
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
    let modules: Vec<&str> = lib.lines().filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';')).collect();
    let mut differences = Vec::new();
    for module in modules.iter().filter(|m| !["cli", "error"].contains(m)) {
        let mut uses: Vec<String> = crate_paths(module)
            .into_iter()
            .filter(|used| used != module && used != "error" && modules.contains(&used.as_str()))
            .collect();
        uses.sort();
        uses.dedup();
        match documented.get(*module) {
            Some(doc) if *doc == uses => {}
            Some(doc) => differences.push(format!("{module}: the doc says {doc:?}, the sources use {uses:?}")),
            None => differences.push(format!("{module} (uses {uses:?}) is not in the graph")),
        }
    }
    assert!(differences.is_empty(), "docs/architecture.md's module graph:\n{}", differences.join("\n"));
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
