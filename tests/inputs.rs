//! Inputs: limits on every input, files and documents skipped or refused, `-R` and `-k`,
//! duplicate keys and objects, unknown fields, `--script` keys, and `eval`'s `--obj`.

use crate::completion::{assert_fresh, check_generated};
use crate::offline::{ROLLOUT, VIRTUAL_SERVICE, manifests};
use crate::support::cluster::*;
use crate::support::{BINARY, Test, repo};
use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};

/// ObjectMeta's fields: the CRDs leave `metadata` to the API server, which knows these.
const OBJECT_META: [&str; 15] = [
    "annotations",
    "creationTimestamp",
    "deletionGracePeriodSeconds",
    "deletionTimestamp",
    "finalizers",
    "generateName",
    "generation",
    "labels",
    "managedFields",
    "name",
    "namespace",
    "ownerReferences",
    "resourceVersion",
    "selfLink",
    "uid",
];

/// A CRD version's schema reduced to its field names (see `src/schema.rs`).
fn fields(schema: &Value) -> Value {
    if schema["x-kubernetes-preserve-unknown-fields"] == true {
        return Value::Null;
    }
    if let Some(properties) = schema["properties"].as_object() {
        return Value::Object(properties.iter().map(|(name, schema)| (name.clone(), fields(schema))).collect());
    }
    if schema["items"].is_object() {
        return json!([fields(&schema["items"])]);
    }
    if schema["additionalProperties"].is_object() {
        return json!({"*": fields(&schema["additionalProperties"])});
    }
    // A Go string, which go test's YAML decoding fills from a number or boolean as well (a
    // time, `format: date-time`, decodes itself).
    if schema["type"] == "string" && schema.get("format").is_none() {
        return json!("string");
    }
    Value::Null
}

/// ObjectMeta's field `name`, reduced as `fields` reduces a CRD's.
fn object_meta_field(name: &str) -> Value {
    match name {
        "generateName" | "name" | "namespace" | "resourceVersion" | "selfLink" | "uid" => json!("string"),
        "labels" | "annotations" => json!({"*": "string"}),
        "finalizers" => json!(["string"]),
        _ => Value::Null,
    }
}

#[test]
fn generated_files_field_schemas_are_current() {
    let crds = repo("../shared/conformance/upstream/crds");
    let Ok(entries) = std::fs::read_dir(&crds) else {
        return crate::support::skip(&format!("{} not found (the CRDs the field schemas come from)", crds.display()));
    };
    let mut paths: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
    paths.sort();
    let mut kinds = Map::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        for document in rollout_lua::for_tests::parse_documents(&text, &path.display().to_string()).unwrap() {
            let spec = &document.value["spec"];
            let mut versions = Map::new();
            for version in spec["versions"].as_array().unwrap() {
                let mut schema = fields(&version["schema"]["openAPIV3Schema"]);
                schema["metadata"] =
                    OBJECT_META.iter().map(|field| (field.to_string(), object_meta_field(field))).collect();
                versions.insert(version["name"].as_str().unwrap().into(), schema);
            }
            kinds.insert(spec["names"]["kind"].as_str().unwrap().into(), Value::Object(versions));
        }
    }
    let text = serde_json::to_string_pretty(&Value::Object(kinds)).unwrap() + "\n";
    assert_fresh(check_generated(&repo("src/schema/rollouts.kruise.io.json"), text.as_bytes()).into_iter().collect());
}

/// Runs the binary with `args` in `test`'s environment; fails if it runs longer than `limit`.
#[track_caller]
fn within(test: &Test, args: &[&str], limit: Duration) -> crate::support::Output {
    finishes(&mut test.command(BINARY, args), limit)
}

/// Runs `command`; fails if it runs longer than `limit`.
#[track_caller]
fn finishes(command: &mut std::process::Command, limit: Duration) -> crate::support::Output {
    let mut child = command.stdin(std::process::Stdio::null()).spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("{command:?} still ran after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    crate::support::Output {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

const SCRIPT_FLAG: &str = "VirtualService.networking.istio.io=s.lua";

mod walking {
    use super::*;

    /// A folder with two symbolic links to itself: every walk reads it once and ends.
    fn looping() -> Test {
        let test = manifests().file("m/networking.istio.io/VirtualService/trafficRouting.lua", "return obj.data").file(
            "m/networking.istio.io/VirtualService/testdata/case.yaml",
            &format!(
                "rollout:\n{}original:\n  spec: {{hosts: [demo]}}\nexpected:\n{}",
                indent(ROLLOUT),
                "- spec: {hosts: [demo]}\n".repeat(3)
            ),
        );
        for link in ["a", "b"] {
            std::os::unix::fs::symlink(".", test.path("m").join(link)).unwrap();
        }
        test
    }

    fn indent(text: &str) -> String {
        text.trim().lines().map(|l| format!("  {l}\n")).collect()
    }

    #[test]
    fn symbolic_link_loops_are_walked_once() {
        let test = looping();
        let limit = Duration::from_secs(30);
        within(&test, &["plan", "-R", "-f", "m", "--step", "2", "-v"], limit)
            .success()
            .stdout_has("weight: 50")
            .stderr_has("skipped m/a: the folder ")
            .stderr_has("skipped m/b: the folder ");
        within(&test, &["test", "m"], limit).success().stdout_has("1 passed, 0 failed");
        within(&test, &["plan", "-f", "m/rollout.yaml", "-f", "m/vs.yaml", "--lua-dir", "m", "--step", "2"], limit)
            .success()
            .stdout_has("script --lua-dir m/networking.istio.io/VirtualService/trafficRouting.lua");
    }

    #[test]
    fn a_named_pipe_in_a_folder_is_passed_over_not_waited_on() {
        // A regression (audit s33 test F8): opening a pipe without a writer waits for one.
        let test = looping();
        for pipe in ["m/stale.yaml", "m/networking.istio.io/VirtualService/testdata/stale.yaml"] {
            let made = std::process::Command::new("mkfifo").arg(test.path(pipe)).status();
            if !made.is_ok_and(|s| s.success()) {
                return crate::support::skip("mkfifo (coreutils) not installed");
            }
        }
        let limit = Duration::from_secs(30);
        within(&test, &["plan", "-f", "m", "--step", "2", "-v"], limit)
            .success()
            .stderr_has("skipped m/stale.yaml: not a regular file (a named pipe, a socket or a device), not read");
        // A test case that is no file is said, not passed over (a regression: without a word).
        within(&test, &["test", "m"], limit).status(1).stderr_has(
            "m/networking.istio.io/VirtualService/testdata/stale.yaml: not a regular file (a named pipe, a socket or a device): a test case is read from a file",
        );
    }

    #[test]
    fn subdirectories_are_read_with_r_as_kubectl_does() {
        let test = Test::new().file("m/rollout.yaml", ROLLOUT).file("m/gateway/vs.yaml", VIRTUAL_SERVICE);
        test.run_args(["plan", "-f", "m", "--step", "2"])
            .status(1)
            .stderr_has("but there is no such object in namespace shop");
        test.run_args(["plan", "-f", "m", "--step", "2", "-v"])
            .stderr_has("skipped m/gateway: a subdirectory (-R reads subdirectories)");
        test.run_args(["plan", "-R", "-f", "m", "--step", "2"]).success().stdout_has("weight: 50");
        let test = Test::new().file("m/sub/rollout.yaml", ROLLOUT);
        test.run_args(["plan", "-f", "m"]).status(1).stderr_has(
            "error: no Rollout or TrafficRouting in m: read 0 documents from 0 files; -v lists what was skipped and why; subdirectories were not read (-R reads them)",
        );
    }

    #[test]
    fn unrelated_files_and_hidden_folders_are_skipped() {
        let test = manifests()
            .file("m/kustomization.yaml", "resources:\n- rollout.yaml\n")
            .file("m/values.yaml", "replicaCount: 2\nimage: {tag: v2}\n")
            .file("m/.github/workflows/ci.yml", "on: push\njobs: {test: {runs-on: ubuntu}}\n")
            .file("m/.hidden.yaml", "not: [valid")
            .file("m/README.md", "# the manifests\n")
            .file("m/deployment.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: demo, namespace: shop}\nspec: {replicas: 4}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: demo}\n---\nkind: Thing\n");
        let out = test.run_args(["plan", "-R", "-f", "m", "--step", "2", "-v"]).success().stdout_has("weight: 50");
        let notes: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(
            notes,
            [
                "read 7 documents from 5 files",
                "skipped m/.github: hidden",
                "skipped m/.hidden.yaml: hidden",
                "skipped m/README.md: not .yaml, .yml or .json, as kubectl reads a folder",
                "skipped m/deployment.yaml: 1 Service (a kind no Rollout or TrafficRouting in the input routes through); 1 document that is not a Kubernetes object (m/deployment.yaml:10: no apiVersion or metadata.name)",
                "skipped m/kustomization.yaml:1: not a Kubernetes object (no apiVersion, kind or metadata.name)",
                "skipped m/values.yaml:1: not a Kubernetes object (no apiVersion, kind or metadata.name)",
            ]
        );
        // Without -v, nothing is said about them.
        test.run_args(["plan", "-R", "-f", "m", "--step", "2"]).success().stderr.is_empty().then_some(()).unwrap();
    }

    #[test]
    fn nothing_plannable_names_what_was_read() {
        Test::new()
            .file("values.yaml", "replicaCount: 2\n")
            .file("deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: demo}\n")
            .args(["plan", "-f", "values.yaml", "-f", "deploy.yaml"])
            .run()
            .status(1)
            .stderr_has("error: no Rollout or TrafficRouting in values.yaml, deploy.yaml: read 2 documents from 2 files; -v lists what was skipped and why\n");
    }
}

mod limits {
    use super::*;

    #[test]
    fn inputs_past_their_limit_are_refused_without_reading_on() {
        let test = manifests().file("s.lua", "return obj.data").file("obj.json", "{\"data\": {}}");
        let limit = Duration::from_secs(20);
        within(&test, &["plan", "-f", "/dev/zero"], limit)
            .status(1)
            .stderr_has("error: /dev/zero: the input passes 64 MiB, the limit for manifests (-f, -k and stdin together): read only what the plan needs");
        within(&test, &["eval", "s.lua", "--obj", "/dev/zero"], limit)
            .status(1)
            .stderr_has("error: --obj /dev/zero: the input passes 8 MiB, the limit for an obj or object file\n");
        within(&test, &["eval", "/dev/zero", "--obj", "obj.json"], limit)
            .status(1)
            .stderr_has("error: /dev/zero: the input passes 1 MiB, the limit for a script\n");
        within(&test, &["plan", "-f", "m", "--script", "VirtualService.networking.istio.io=/dev/zero"], limit)
            .status(1)
            .stderr_has("the limit for a script");
        within(&test, &["lua-obj", "/dev/zero"], limit).status(1).stderr_has("the limit for a test case");
    }

    #[test]
    fn a_multi_document_export_of_thousands_of_objects_is_read() {
        // More documents than the YAML parser allows by default (1,024).
        let configmaps: String = (0..1500)
            .map(|i| {
                format!(
                    "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}, namespace: shop}}\ndata: {{k: v}}\n"
                )
            })
            .collect();
        Test::new()
            .file("export.yaml", &format!("{configmaps}---\n{ROLLOUT}---\n{VIRTUAL_SERVICE}"))
            .args(["plan", "-f", "export.yaml", "--step", "2"])
            .run()
            .success()
            .stdout_has("weight: 50");
    }

    #[test]
    fn a_file_past_the_parser_limits_is_named_with_how_to_split_it() {
        // One nesting limit, the one Lua is handed, for YAML and JSON alike: 100 levels read,
        // 101 refused (a YAML flow past the scanner's own limit too).
        let nested = |levels: usize| format!("{}1{}", "[".repeat(levels - 1), "]".repeat(levels - 1));
        let test = Test::new()
            .file("s.lua", "return {}")
            .file("fits.yaml", &format!("a: {}\n", nested(100)))
            .file("fits.json", &format!("{{\"a\": {}}}", nested(100)))
            .file("deep.yaml", &format!("a: {}\n", nested(101)))
            .file("deeper.yaml", &format!("a: {}\n", nested(1000)))
            .file("deep.json", &format!("{{\"a\": {}}}", nested(101)))
            .file("deeper.json", &format!("{{\"a\": {}}}", nested(1000)));
        for fits in ["fits.yaml", "fits.json"] {
            test.run_args(["eval", "s.lua", "--obj", fits]).success();
        }
        for (deep, column) in [("deep.yaml", 103), ("deeper.yaml", 259), ("deep.json", 106), ("deeper.json", 106)] {
            test.run_args(["plan", "-f", deep]).status(1).stderr_has(&format!(
                "error: {deep}:1:{column}: maps and lists nested deeper than 100 levels, the limit\n"
            ));
        }
        // JSON counts nodes, and documents (the items of a top-level list), as YAML does: the
        // refusal comes early, before the file's values take gigabytes.
        let split = "the limit for one file: split the file (one per namespace or per kind, for example)";
        let test = Test::new()
            .file("many.json", &format!("[{}{{}}]", "{},".repeat(50_000)))
            .file("big.json", &format!("{{\"a\": [{}0]}}", "0,".repeat(5_000_000)));
        within(&test, &["plan", "-f", "many.json"], Duration::from_secs(5))
            .status(1)
            .stderr_has(&format!("error: many.json:1:150004: more than 50000 JSON documents, {split}"));
        within(&test, &["plan", "-f", "big.json"], Duration::from_secs(15))
            .status(1)
            .stderr_has(&format!("error: big.json:1:10000001: more than 5000000 JSON nodes, {split}"));
    }

    #[test]
    fn aliases_that_expand_too_far_name_the_limit_and_the_alias() {
        // Billion laughs: nine levels of nine aliases each.
        let mut laughs = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n  a0: &a0 [lol]\n".to_string();
        for level in 1..10 {
            let aliases = vec![format!("*a{}", level - 1); 9].join(", ");
            laughs += &format!("  a{level}: &a{level} [{aliases}]\n");
        }
        let message = "laughs.yaml:11:32: aliases that repeat more than 1000000 nodes, the limit for one file: anchors and aliases that expand too far\n";
        let test = Test::new().file("laughs.yaml", &laughs).file("s.lua", "return {}");
        within(&test, &["plan", "-f", "laughs.yaml"], Duration::from_secs(10))
            .status(1)
            .stderr_has(&format!("error: {message}"));
        within(&test, &["eval", "s.lua", "--obj", "laughs.yaml"], Duration::from_secs(10))
            .status(1)
            .stderr_has(&format!("error: --obj {message}"));
    }
}

mod duplicates {
    use super::*;

    #[test]
    fn duplicate_keys_are_errors_naming_both_lines() {
        let rollout = ROLLOUT.replace("  namespace: shop\n", "  namespace: shop\n  namespace: other\n");
        manifests()
            .file("m/rollout.yaml", &rollout)
            .args(["plan", "-f", "m"])
            .run()
            .status(1)
            .stderr_has("error: m/rollout.yaml:5:3: key \"namespace\" given twice, at lines 6 and 7\n");
        Test::new()
            .file("vs.json", "{\"apiVersion\": \"networking.istio.io/v1beta1\", \"kind\": \"VirtualService\",\n \"kind\": \"Gateway\"}")
            .args(["plan", "-f", "vs.json"])
            .run()
            .status(1)
            .stderr_has("error: vs.json:2:8: key \"kind\" given twice, at lines 1 and 2 (two documents without a --- line between them?)\n");
    }

    #[test]
    fn two_different_copies_of_an_object_are_an_error_naming_both() {
        let other = VIRTUAL_SERVICE.replace("hosts: [\"demo\"]", "hosts: [\"demo\", \"other\"]");
        manifests()
            .file("m/vs-copy.yaml", &other)
            .args(["plan", "-f", "m"])
            .run()
            .status(1)
            .stderr_has("error: m/vs.yaml:2: VirtualService shop/demo differs from the copy at m/vs-copy.yaml:2; keep one of them\n");
        // The same copy twice is taken once.
        manifests().file("m/vs-copy.yaml", VIRTUAL_SERVICE).args(["plan", "-f", "m", "--step", "2"]).run().success();
        let rollout = ROLLOUT.replace("replicas: 100%", "replicas: 90%");
        manifests()
            .file("other/rollout.yaml", &rollout)
            .args(["plan", "-f", "m", "-f", "other"])
            .run()
            .status(1)
            .stderr_has("error: other/rollout.yaml:2: Rollout shop/demo differs from the copy at m/rollout.yaml:2; keep one of them\n");
    }

    #[test]
    fn an_unquoted_annotation_value_is_an_error_naming_the_object_and_key() {
        let unquoted = VIRTUAL_SERVICE
            .replace("  namespace: shop\n", "  namespace: shop\n  annotations:\n    example.com/size: 8\n");
        manifests()
            .file("m/vs.yaml", &unquoted)
            .args(["plan", "-f", "m"])
            .run()
            .status(1)
            .stdout_is("")
            .stderr_has("error: m/vs.yaml:2: VirtualService shop/demo: metadata.annotations.example.com/size: must be a string, not a number (8): the API server refuses the object; quote the value\n");
    }
}

mod kustomize {
    use super::*;

    /// A fake `kubectl` on PATH that records its arguments and runs `body`.
    pub(super) fn with_kubectl(body: &str) -> Test {
        let test =
            Test::new().file("bin/kubectl", &format!("#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/args\"\n{body}\n"));
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(test.path("bin/kubectl"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = path_with_bin(&test);
        test.env("PATH", &path)
    }

    fn path_with_bin(test: &Test) -> String {
        format!("{}:{}", test.path("bin").display(), std::env::var("PATH").unwrap_or_default())
    }

    #[test]
    fn k_plans_what_kubectl_kustomize_builds() {
        let manifests = format!("{ROLLOUT}---\n{VIRTUAL_SERVICE}");
        let test =
            with_kubectl(&format!("cat <<'EOF'\n{manifests}EOF")).file("overlay/kustomization.yaml", "resources: []\n");
        test.run_args(["plan", "-k", "overlay", "--step", "2"]).success().stdout_has("weight: 50");
        assert_eq!(std::fs::read_to_string(test.path("bin/args")).unwrap(), "kustomize overlay\n");
    }

    #[test]
    fn k_fails_clearly() {
        with_kubectl("echo 'Error: no kustomization file' >&2; exit 1")
            .args(["plan", "-k", "overlay"])
            .run()
            .status(1)
            .stderr_has("error: `kubectl kustomize overlay` failed (exit status: 1): Error: no kustomization file\n");
        Test::new()
            .env("PATH", "/nonexistent")
            .args(["plan", "-k", "overlay"])
            .run()
            .status(1)
            .stderr_has("error: -k runs `kubectl kustomize overlay`, but kubectl is not on PATH");
        Test::new().args(["plan", "-k", "overlay", "-f", "m"]).run().status(1).stderr_has("cannot be used with");
        // Output past the manifest limit stops kubectl.
        let test = with_kubectl("exec yes 'a: b'");
        finishes(
            test.command(BINARY, ["plan", "-k", "overlay"]).env("PATH", path_with_bin(&test)),
            Duration::from_secs(30),
        )
        .status(1)
        .stderr_has("error: kubectl kustomize overlay: the input passes 64 MiB, the limit for manifests");
    }
}

mod script_keys {
    use super::*;

    #[test]
    fn a_script_key_no_object_uses_is_an_error_offline() {
        for (key, hint) in [
            ("virtualservice.networking.istio.io", " Did you mean VirtualService.networking.istio.io?"),
            ("VirtualService.networking.istio.io/v1beta1", " Did you mean VirtualService.networking.istio.io?"),
            ("VirtualSvc.networking.istio.io", ""),
        ] {
            manifests()
                .file("s.lua", "return obj.data")
                .args(["plan", "-f", "m", "--script", &format!("{key}=s.lua")])
                .run()
                .status(1)
                .stderr_has(&format!("error: --script {key}: no object in the plan is a"))
                .stderr_has(&format!(
                    "so the script would not run. The keys this plan uses: VirtualService.networking.istio.io.{hint}"
                ));
        }
    }

    #[test]
    fn a_script_key_no_object_uses_is_an_error_against_a_cluster() {
        let server = shop(2, "StepPaused").start();
        Test::new()
            .kubeconfig(&server)
            .file("s.lua", "return obj.data")
            .args(["plan", "demo", "--script", "VirtualSvc.networking.istio.io=s.lua"])
            .run()
            .status(1)
            .stderr_has(
                "The keys this plan uses: DestinationRule.networking.istio.io, VirtualService.networking.istio.io.",
            );
        Test::new()
            .kubeconfig(&server)
            .file("s.lua", "return obj.data")
            .args(["plan", "demo", "--script", SCRIPT_FLAG])
            .run()
            .success()
            .stdout_has("script --script s.lua");
    }
}

mod fields {
    use super::*;

    fn misspelt() -> Test {
        let rollout = ROLLOUT.replace("        traffic: 50%\n", "        pasue: {duration: 5}\n        traffic: 50%\n");
        manifests().file("m/rollout.yaml", &rollout)
    }

    #[test]
    fn a_misspelt_required_field_is_named_with_the_rejection() {
        let rollout = ROLLOUT.replace("      - replicas: 1\n", "      - replica: 1\n");
        manifests().file("m/rollout.yaml", &rollout).args(["plan", "-f", "m"]).run().status(1).stderr_has(
            "m/rollout.yaml:2: Rollout shop/demo would be rejected by the controller's admission webhook:\n  m/rollout.yaml:12: spec.strategy.canary.steps[0].replicas: required\nand it has fields the API server would drop (a misspelt one may be why a required one is missing):\n  m/rollout.yaml:12: unknown field \"spec.strategy.canary.steps[0].replica\": not in the CRD, so the API server drops it (misspelt?)\n",
        );
    }

    #[test]
    fn unknown_rollout_fields_are_warnings_by_default() {
        misspelt()
            .args(["plan", "-f", "m", "--step", "2"])
            .run()
            .success()
            .stdout_has("Rollout shop/demo\n  warning: m/rollout.yaml:18: unknown field \"spec.strategy.canary.steps[1].pasue\": not in the CRD, so the API server drops it (misspelt?)\n");
        let json = misspelt().args(["plan", "-f", "m", "--step", "2", "-o", "json"]).run().success().json();
        assert_eq!(
            json["plans"][0]["warnings"][0].as_str().unwrap().split(": ").take(2).collect::<Vec<_>>(),
            ["m/rollout.yaml:18", "unknown field \"spec.strategy.canary.steps[1].pasue\""]
        );
    }

    #[test]
    fn validate_strict_refuses_and_ignore_says_nothing() {
        misspelt()
            .args(["plan", "-f", "m", "--validate=strict"])
            .run()
            .status(1)
            .stderr_has("error: fields the CRDs do not define, which the API server would drop (--validate=strict; --validate=warn only warns):\n  m/rollout.yaml:18: Rollout shop/demo: unknown field \"spec.strategy.canary.steps[1].pasue\"\n");
        misspelt().args(["plan", "-f", "m", "--validate=true"]).run().status(1);
        let out = misspelt().args(["plan", "-f", "m", "--step", "2", "--validate=ignore"]).run().success();
        assert!(!out.stdout.contains("unknown field"), "{}", out.stdout);
        Test::new()
            .args(["plan", "demo", "--validate=strict"])
            .run()
            .status(1)
            .stderr_has("<--filename <PATH>|--kustomize <DIR>>");
    }

    /// The Rollout with a misspelt `replica: 3` under `canary:`, and `traffic: "150%"`, which the
    /// webhook refuses, when `refused`.
    fn flawed(refused: bool) -> String {
        let rollout = ROLLOUT.replace("    canary:\n", "    canary:\n      replica: 3\n");
        if refused { rollout.replace("traffic: 50%", "traffic: \"150%\"") } else { rollout }
    }

    /// The line (1-based) of the first line of `text` that holds `needle`.
    fn line(text: &str, needle: &str) -> usize {
        text.lines().position(|l| l.contains(needle)).expect(needle) + 1
    }

    /// The three messages about a Rollout's fields, given how it is read (the Rollout `flawed`
    /// gives, refused or not), its source's name and the lines of its document, its `replica`
    /// and its `traffic`.
    #[track_caller]
    fn check_lines(read: impl Fn(bool) -> Test, source: &str, lines: [usize; 3]) {
        let [document, replica, traffic] = lines;
        read(true).args(["--step", "2"]).run().status(1).stderr_has(&format!(
            "error: {source}:{document}: Rollout shop/demo would be rejected by the controller's admission webhook:\n  {source}:{traffic}: spec.strategy.canary.steps[1].traffic: \"150%\" must be in (0%, 100%]\nand it has fields the API server would drop (a misspelt one may be why a required one is missing):\n  {source}:{replica}: unknown field \"spec.strategy.canary.replica\": not in the CRD, so the API server drops it (misspelt?)\n"
        ));
        read(false).args(["--step", "2"]).run().success().stdout_has(&format!(
            "Rollout shop/demo\n  warning: {source}:{replica}: unknown field \"spec.strategy.canary.replica\": not in the CRD, so the API server drops it (misspelt?)\n"
        ));
        read(false).args(["--validate=strict"]).run().status(1).stderr_has(&format!(
            "(--validate=strict; --validate=warn only warns):\n  {source}:{replica}: Rollout shop/demo: unknown field \"spec.strategy.canary.replica\"\n"
        ));
    }

    #[test]
    fn field_messages_name_the_fields_line_in_yaml_json_stdin_and_k() {
        let yaml = flawed(true);
        let [replica, traffic] = [line(&yaml, "replica:"), line(&yaml, "traffic: \"150%\"")];
        assert_eq!([replica, traffic], [11, 19], "the lines of the fields, 2 the document's");
        let file = |refused| manifests().file("m/rollout.yaml", &flawed(refused)).args(["plan", "-f", "m"]);
        check_lines(file, "m/rollout.yaml", [2, replica, traffic]);
        let stdin = |refused| {
            Test::new().file("m/vs.yaml", VIRTUAL_SERVICE).stdin(&flawed(refused)).args([
                "plan",
                "-f",
                "-",
                "-f",
                "m/vs.yaml",
            ])
        };
        check_lines(stdin, "<stdin>", [2, replica, traffic]);
        let kustomize = |refused| {
            super::kustomize::with_kubectl(&format!("cat <<'EOF'\n{}---\n{VIRTUAL_SERVICE}EOF", flawed(refused)))
                .args(["plan", "-k", "overlay"])
        };
        check_lines(kustomize, "kustomize overlay", [2, replica, traffic]);
        // Pretty JSON, in its own order of keys, on a file and on stdin.
        let json = |refused| {
            let value: Value = serde_saphyr::from_str(&flawed(refused)).unwrap();
            serde_json::to_string_pretty(&value).unwrap()
        };
        let lines = [1, line(&json(true), "\"replica\""), line(&json(true), "\"traffic\": \"150%\"")];
        assert_ne!(lines[1..], [replica, traffic]);
        let file = |refused| {
            manifests().file("m/rollout.yaml", "").file("m/rollout.json", &json(refused)).args(["plan", "-f", "m"])
        };
        check_lines(file, "m/rollout.json", lines);
        let stdin = |refused| {
            Test::new().file("m/vs.yaml", VIRTUAL_SERVICE).stdin(&json(refused)).args([
                "plan",
                "-f",
                "-",
                "-f",
                "m/vs.yaml",
            ])
        };
        check_lines(stdin, "<stdin>", lines);
        // On one line, every field is on line 1.
        let one_line = |refused| {
            let value: Value = serde_saphyr::from_str(&flawed(refused)).unwrap();
            manifests().file("m/rollout.yaml", "").file("m/rollout.json", &value.to_string()).args(["plan", "-f", "m"])
        };
        check_lines(one_line, "m/rollout.json", [1, 1, 1]);
    }
}

mod objs {
    use super::*;

    const VS_SCRIPT: &str = "lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua";

    #[test]
    fn show_obj_prints_each_steps_obj() {
        let json = manifests().args(["plan", "-f", "m", "--show-obj"]).run().success().json();
        let entries = json.as_array().unwrap();
        // Step 3 routes no traffic: no script runs, so it has no obj.
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1]["owner"], "Rollout shop/demo");
        assert_eq!(entries[1]["stage"], "step 2/3");
        assert_eq!(entries[1]["object"], "VirtualService shop/demo");
        let obj = &entries[1]["obj"];
        assert_eq!((obj["canaryWeight"].as_i64(), obj["stableWeight"].as_i64()), (Some(50), Some(50)));
        assert_eq!(obj["data"]["spec"]["hosts"], json!(["demo"]));
        manifests()
            .args(["plan", "-f", "m", "--show-obj", "--step", "1", "-o", "yaml"])
            .run()
            .success()
            .stdout_has("- obj:\n    canaryService: demo-canary\n    canaryWeight: -1\n");
    }

    #[test]
    fn show_obj_needs_no_script_yet() {
        let rollout = ROLLOUT.replace(
            "apiVersion: networking.istio.io/v1beta1\n          kind: VirtualService",
            "apiVersion: gateway.example.com/v1\n          kind: Route",
        );
        let route = "apiVersion: gateway.example.com/v1\nkind: Route\nmetadata: {name: demo, namespace: shop}\nspec: {weight: 0}\n";
        let test = Test::new().file("m/rollout.yaml", &rollout).file("m/route.yaml", route);
        test.run_args(["plan", "-f", "m", "--step", "2"])
            .status(1)
            .stderr_has("no Lua script for Route.gateway.example.com");
        let json = test
            .run_args(["plan", "-f", "m", "--step", "2", "--show-obj"])
            .success()
            .stderr_has("note: Route shop/demo: no Lua script for Route.gateway.example.com: none given with --script or --lua-dir, none built in, and the files have no ConfigMap kruise-rollout-configuration (the controller reads it from its namespace, kruise-rollout, --controller-namespace); add the script under the key lua.traffic.routing.Route.gateway.example.com; its obj is shown all the same\n")
            .json();
        assert_eq!(json[0]["obj"]["data"]["spec"], json!({"weight": 0}));
        assert_eq!(json[0]["obj"]["canaryWeight"], 50);
    }

    #[test]
    fn eval_takes_a_shown_obj_from_stdin() {
        let test = manifests();
        let shown = test.run_args(["plan", "-f", "m", "--show-obj", "--step", "2"]).success().stdout;
        let script = repo(VS_SCRIPT);
        let evaluated = Test::new()
            .args(["eval".as_ref(), script.as_os_str(), "--obj".as_ref(), "-".as_ref()])
            .stdin(&shown)
            .run()
            .success();
        let obj = serde_json::to_string(&serde_json::from_str::<Value>(&shown).unwrap()[0]["obj"]).unwrap();
        Test::new()
            .args(["eval".as_ref(), script.as_os_str(), "--obj".as_ref(), "-".as_ref()])
            .stdin(&obj)
            .run()
            .stdout_is(&evaluated.stdout);
        assert!(evaluated.stdout.contains("\"weight\":50"), "{}", evaluated.stdout);
        let all = test.run_args(["plan", "-f", "m", "--show-obj"]).success().stdout;
        Test::new()
            .args(["eval".as_ref(), script.as_os_str(), "--obj".as_ref(), "-".as_ref()])
            .stdin(&all)
            .run()
            .status(1)
            .stderr_has(
                "error: --obj <stdin> holds the objs of 2 steps or objects: pass one entry's obj (`| jq '.[0].obj'`)",
            );
    }

    #[test]
    fn eval_reads_a_json_obj_as_it_reads_any_obj() {
        // A JSON obj goes into Lua as it is read; what that reading leaves (a single entry, a
        // Kubernetes object, a duplicate key, a syntax error) is read as any obj is.
        let script = "return {spec = obj.data.spec, stable = obj.stableWeight, n = #obj.list}";
        let eval = |obj: &str| {
            Test::new().file("s.lua", script).file("obj.json", obj).args(["eval", "s.lua", "--obj", "obj.json"]).run()
        };
        let obj = r#"{"data": {"spec": {"b": 1, "a": [1, null, 2]}}, "stableWeight": 90, "list": [1, null, 2]}"#;
        eval(obj).success().stdout_is("{\"spec\":{\"a\":[1,2],\"b\":1}}\n");
        eval(&format!(r#"{{"step": 2, "obj": {obj}}}"#)).success().stdout_is("{\"spec\":{\"a\":[1,2],\"b\":1}}\n");
        eval(r#"{"apiVersion": "v1", "kind": "VirtualService", "metadata": {"name": "demo"}}"#)
            .status(1)
            .stderr_has("error: --obj obj.json is a Kubernetes object (VirtualService demo), not an obj");
        eval("{\"data\": {\"spec\": {}},\n \"stableWeight\": null,\n \"stableWeight\": 1}")
            .status(1)
            .stderr_has("error: --obj obj.json:3:16: key \"stableWeight\" given twice, at lines 2 and 3\n");
        eval(r#"{"data": {"spec": tru}}"#).status(1).stderr_has("error: --obj obj.json:1:");
    }

    #[test]
    fn eval_takes_exactly_one_obj_document() {
        let eval = |obj: &str| {
            Test::new()
                .file("s.lua", "return obj.data")
                .file("obj.yaml", obj)
                .args(["eval", "s.lua", "--obj", "obj.yaml"])
                .run()
        };
        for (several_or_none, found) in
            [("data: {spec: {a: 1}}\n---\ndata: {spec: {b: 2}}\n", 2), ("", 0), ("---\n---\n", 0), ("[1, 2]", 2)]
        {
            eval(several_or_none).status(1).stderr_has(&format!("error: --obj obj.yaml: expected one obj, a map, but it holds {found} documents (each item of a JSON list, or each YAML document between --- lines, is one)\n"));
        }
        eval("---\ndata: {spec: {a: 1}}\n").success().stdout_is("{\"spec\":{\"a\":1}}\n");
    }

    #[test]
    fn eval_of_a_manifest_says_it_is_not_an_obj() {
        Test::new()
            .file("vs.yaml", VIRTUAL_SERVICE)
            .file("s.lua", "return obj.data")
            .args(["eval", "s.lua", "--obj", "vs.yaml"])
            .run()
            .status(1)
            .stderr_has("error: --obj vs.yaml is a Kubernetes object (VirtualService demo), not an obj: a script gets {data: {spec, labels, annotations}, ")
            .stderr_has("print the obj of every step with `kubectl rollout-lua plan -f MANIFESTS --show-obj`");
    }

    #[test]
    fn eval_of_a_test_case_says_it_is_not_an_obj() {
        let case = "rollout: {apiVersion: rollouts.kruise.io/v1beta1, kind: Rollout, metadata: {name: demo}}\noriginal: {spec: {}}\nexpected: []\n";
        let json = r#"{"rollout": {"kind": "Rollout"}, "original": {"spec": {}}, "expected": []}"#;
        for (file, text) in [("case.yaml", case), ("case.json", json)] {
            Test::new()
                .file(file, text)
                .file("s.lua", "return obj.data")
                .args(["eval", "s.lua", "--obj", file])
                .run()
                .status(1)
                .stderr_has(&format!("error: --obj {file} is a test case, not an obj: print the obj of each of its steps with `kubectl rollout-lua lua-obj {file} -o json`"));
        }
    }
}

mod paths {
    use super::*;

    #[test]
    fn lua_dir_must_be_a_directory() {
        // A file used to be taken as a script whose group and kind were its parent folders.
        let test = manifests().file("id.lua", "return obj.data");
        test.run_args(["plan", "-f", "m", "--lua-dir", "id.lua"])
            .status(1)
            .stderr_has("error: --lua-dir id.lua: a file, not a directory\n");
        test.run_args(["plan", "-f", "m", "--lua-dir", "missing"])
            .status(1)
            .stderr_has("error: --lua-dir missing: no such file or directory\n");
    }

    #[test]
    fn a_script_path_holding_no_file_is_an_error_not_the_built_in_script() {
        // A folder, or a link that leads nowhere, where a script is looked for: the built-in
        // script used to run in its place without a word.
        let test = manifests().file("lua/x", "");
        std::fs::create_dir_all(test.path("lua/networking.istio.io/VirtualService/trafficRouting.lua")).unwrap();
        test.run_args(["plan", "-f", "m", "--lua-dir", "lua"]).status(1).stderr_has(
            "error: lua/networking.istio.io/VirtualService/trafficRouting.lua: not a regular file (a folder, a named pipe, a socket, a device or a link that leads nowhere): a script is read from a file",
        );
        test.run_args(["test", "lua"]).status(1).stderr_has("trafficRouting.lua: not a regular file");
        let test = manifests().file("lua/x", "");
        std::fs::create_dir_all(test.path("lua/trafficrouting_ingress")).unwrap();
        std::os::unix::fs::symlink("gone.lua", test.path("lua/trafficrouting_ingress/nginx.lua")).unwrap();
        test.run_args(["plan", "-f", "m", "--lua-dir", "lua"])
            .status(1)
            .stderr_has("error: lua/trafficrouting_ingress/nginx.lua: not a regular file");
        // A hidden name is none of a class: an editor's lock is such a link.
        let test = manifests().file("lua/trafficrouting_ingress/x", "");
        std::os::unix::fs::symlink("jane@host.42", test.path("lua/trafficrouting_ingress/.#nginx.lua")).unwrap();
        test.run_args(["plan", "-f", "m", "--lua-dir", "lua"]).success();
    }

    #[test]
    fn a_fifo_is_named_as_one() {
        let test = manifests();
        match std::process::Command::new("mkfifo").arg(test.path("fifo")).status() {
            Ok(status) if status.success() => {}
            _ => return crate::support::skip("mkfifo could not make a FIFO"),
        }
        test.run_args(["plan", "-f", "m", "--lua-dir", "fifo"])
            .status(1)
            .stderr_has("error: --lua-dir fifo: a FIFO, not a directory\n");
        test.run_args(["test", "fifo"]).status(1).stderr_has("error: fifo: a FIFO, not a file or directory\n");
    }

    #[test]
    fn a_directory_given_for_a_file_names_the_argument() {
        let test = Test::new().file("s.lua", "return obj.data").file("obj.yaml", "data: {spec: {}}\n").file("d/x", "");
        test.run_args(["eval", "d", "--obj", "obj.yaml"]).status(1).stderr_has("error: d: a directory, not a script\n");
        test.run_args(["eval", "s.lua", "--obj", "d"])
            .status(1)
            .stderr_has("error: --obj d: a directory, not an obj or object file\n");
    }

    #[test]
    fn manifests_typed_on_a_terminal_are_asked_to_be_ended_with_ctrl_d() {
        if !crate::support::terminal_available() {
            return crate::support::skip("script (util-linux) not installed");
        }
        // A review (s52, F11): `-f -` on a terminal waited without a word.
        let test = manifests();
        let typed = std::fs::read_to_string(test.path("m/vs.yaml")).unwrap();
        let (status, screen) = test.interact(
            &["plan", "-f", "-", "-f", "m/rollout.yaml", "--summary"],
            &[(Some("end them with Ctrl-D"), typed.as_bytes()), (None, b"\x04")],
        );
        assert!(status.is_some_and(|s| s.success()), "{screen}");
        assert!(screen.contains("note: reading manifests from the terminal (-f -): end them with Ctrl-D"), "{screen}");
    }

    #[test]
    fn stdin_given_twice_is_an_error() {
        let test = manifests().file("s.lua", "return obj.data").stdin("data: {spec: {}}\n");
        test.run_args(["eval", "-", "--obj", "-"])
            .status(1)
            .stderr_has("error: eval - --obj -: stdin (-) given twice: it can be read once\n");
        test.run_args(["plan", "-f", "-", "-f", "m", "-f", "-"])
            .status(1)
            .stderr_has("error: stdin (-) given twice: it can be read once\n");
    }

    #[test]
    fn weights_out_of_range_or_infinite_say_so() {
        let alpha = |weight: &str| {
            format!(
                "apiVersion: rollouts.kruise.io/v1alpha1\nkind: Rollout\nmetadata: {{name: demo, namespace: shop}}\nspec:\n  objectRef: {{workloadRef: {{apiVersion: apps/v1, kind: Deployment, name: demo}}}}\n  strategy:\n    canary:\n      steps:\n      - weight: {weight}\n      trafficRoutings:\n      - service: demo\n        customNetworkRefs: [{{apiVersion: networking.istio.io/v1beta1, kind: VirtualService, name: demo}}]\n"
            )
        };
        let test = Test::new().file("big.yaml", &alpha("9999999999999999999")).file("inf.yaml", &alpha("1e400"));
        test.run_args(["plan", "-f", "big.yaml"])
            .status(1)
            .stderr_has("weight: 9999999999999999999 is out of range for an int32 (-2147483648 to 2147483647)");
        test.run_args(["plan", "-f", "inf.yaml"]).status(1).stderr_has(
            "error: inf.yaml:9:17: `1e400` is infinite or not a number as a float, which JSON (and so Kubernetes) cannot hold\n",
        );
    }
}
