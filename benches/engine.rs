//! Whole processes against the controller's engine: `eval` of the built-in VirtualService
//! script on a VirtualService with 1000 http rules, and `plan -f` of one Rollout routing through
//! that VirtualService (its manifests as YAML, and as JSON), each against the oracle (gopher-lua
//! with the controller's conversion) on the same obj. The runs are interleaved, so that the machine's load falls on all of them
//! alike; the table gives medians and the ratios of medians, measured in this one run.
//! Also the `--version` start-up time and the binary's size.
//!
//! cargo bench --bench engine        (builds the oracle first when needed: Go from Debian)

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const SCRIPT: &str = "lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua";
const RULES: usize = 1000;
const RUNS: usize = 41;
/// The speed-up the whole `eval` and `plan` processes must reach against the oracle's.
const TARGET: f64 = 5.0;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let binary = env!("CARGO_BIN_EXE_kubectl-rollout_lua");
    let oracle = oracle(root);
    let dir = tempfile::tempdir().unwrap();
    let (obj_file, yaml, json) =
        (dir.path().join("obj.json"), dir.path().join("manifests.yaml"), dir.path().join("manifests.json"));
    let spec = spec(RULES);
    let obj = json!({
        "data": {"spec": spec, "labels": {"app": "reviews"}},
        "canaryWeight": 20, "stableWeight": 80, "canaryService": "reviews-canary", "stableService": "reviews"
    });
    std::fs::write(&obj_file, obj.to_string()).unwrap();
    let manifests = manifests(&spec);
    std::fs::write(
        &yaml,
        manifests.iter().map(|m| serde_saphyr::to_string(m).unwrap()).collect::<Vec<_>>().join("---\n"),
    )
    .unwrap();
    std::fs::write(&json, Value::Array(manifests).to_string()).unwrap();
    let script = root.join(SCRIPT);
    let eval = [binary.as_ref(), "eval".as_ref(), script.as_os_str(), "--obj".as_ref(), obj_file.as_os_str()];
    let controller = [oracle.as_os_str(), script.as_os_str(), obj_file.as_os_str()];
    let plan_yaml = [binary.as_ref(), "plan".as_ref(), "-f".as_ref(), yaml.as_os_str()];
    let plan_json = [binary.as_ref(), "plan".as_ref(), "-f".as_ref(), json.as_os_str()];
    let same =
        |a: &[u8], b: &[u8]| serde_json::from_slice::<Value>(a).unwrap() == serde_json::from_slice::<Value>(b).unwrap();
    assert!(same(&run(&eval), &run(&controller)), "eval and the oracle disagree");

    let mut times: [Vec<f64>; 4] = Default::default();
    for _ in 0..RUNS {
        for (command, times) in [&eval[..], &controller, &plan_yaml, &plan_json].into_iter().zip(&mut times) {
            let start = Instant::now();
            run(command);
            times.push(start.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let [eval, controller, plan_yaml, plan_json] = times.map(|mut t| {
        t.sort_by(f64::total_cmp);
        (t[RUNS / 2], t[0], t[RUNS - 1])
    });
    println!("VirtualService with {RULES} http rules, whole processes, {RUNS} interleaved runs each:\n");
    println!("| process | median (ms) | fastest–slowest (ms) | oracle ÷ this | target: ≥ {TARGET}× |");
    println!("|---|---:|---:|---:|---|");
    let row = |name: &str, (median, min, max): (f64, f64, f64)| {
        let ratio = controller.0 / median;
        let verdict = if ratio >= TARGET { "met" } else { "MISSED" };
        println!("| {name} | {median:.1} | {min:.1}–{max:.1} | {ratio:.1}× | {verdict} |");
    };
    row("`eval` (the script, the obj)", eval);
    row("`plan -f` (a Rollout, the VirtualService; YAML)", plan_yaml);
    row("`plan -f` (the same as JSON)", plan_json);
    let (median, min, max) = controller;
    println!("| the oracle (the script, the obj) | {median:.1} | {min:.1}–{max:.1} | | |");
    start_up(binary);
}

/// Runs a command to success and returns its output.
fn run(command: &[&std::ffi::OsStr]) -> Vec<u8> {
    let out = Command::new(command[0]).args(&command[1..]).env("NO_COLOR", "1").output().unwrap();
    assert!(out.status.success(), "{command:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// A VirtualService spec with `rules` http rules (every tenth with a match), two weighted
/// routes each.
fn spec(rules: usize) -> Value {
    let http: Vec<Value> = (0..rules)
        .map(|i| {
            let mut rule = json!({"route": [{"destination": {"host": "reviews", "subset": "v1"}, "weight": 90}, {"destination": {"host": format!("other-{i}")}, "weight": 10}]});
            if i % 10 == 0 {
                rule["match"] = json!([{"uri": {"prefix": format!("/api/{i}")}}]);
            }
            rule
        })
        .collect();
    json!({"hosts": ["reviews"], "gateways": ["mesh"], "http": http})
}

/// A Rollout with one 20% step through a VirtualService with `spec`.
fn manifests(spec: &Value) -> Vec<Value> {
    let rollout = json!({
        "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "reviews", "namespace": "shop"},
        "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "reviews"}, "strategy": {"canary": {
            "steps": [{"replicas": "20%", "traffic": "20%"}],
            "trafficRoutings": [{"service": "reviews", "customNetworkRefs": [{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "reviews"}]}]
        }}}
    });
    let service = json!({
        "apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService",
        "metadata": {"name": "reviews", "namespace": "shop", "labels": {"app": "reviews"}}, "spec": spec
    });
    vec![rollout, service]
}

/// The oracle built from the shared fidelity tools (the gopher-lua the controller pins), else
/// from the copy in tests/oracle; built into target/bench/ when missing.
fn oracle(root: &Path) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let binary = target.join("bench/oracle");
    if !binary.is_file() {
        let build = [root.join("../shared/tools/oracle/build.sh"), root.join("tests/oracle/build.sh")]
            .into_iter()
            .find(|p| p.is_file())
            .unwrap();
        let status = Command::new("sh").arg(build).arg(&binary).status().unwrap();
        assert!(status.success(), "building the oracle failed");
    }
    binary
}

/// Mean wall time of `--version` over many runs, and the size of this profile's binary.
fn start_up(binary: &str) {
    let runs = 200;
    let start = Instant::now();
    for _ in 0..runs {
        run(&[binary.as_ref(), "--version".as_ref()]);
    }
    let mean = start.elapsed().as_secs_f64() * 1000.0 / f64::from(runs);
    let size = std::fs::metadata(binary).unwrap().len() as f64 / (1024.0 * 1024.0);
    println!("\n`--version` start-up: {mean:.2} ms mean over {runs} runs; binary: {size:.1} MiB ({binary})");
}
