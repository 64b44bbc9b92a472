//! Evaluation speed of the built-in VirtualService script on VirtualServices with 10, 100 and
//! 1000 http rules, against the controller's engine (the oracle's `-bench N` mode) on the same
//! input in the same run, plus `--version` start-up time and the binary's size.
//!
//! cargo bench --bench engine        (builds the oracle first when needed: Go from Debian)

use rollout_lua::lua::{self, EvalOptions, Limits, Script};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const SCRIPT: &str = "lua_configuration/networking.istio.io/VirtualService/trafficRouting.lua";

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let code = std::fs::read_to_string(root.join(SCRIPT)).unwrap();
    let script = Script::new(SCRIPT, code);
    let oracle = oracle(root);
    let dir = tempfile::tempdir().unwrap();
    println!("| http rules | this engine (µs/eval) | controller's engine (µs/eval) | speed-up |");
    println!("|---:|---:|---:|---:|");
    for rules in [10, 100, 1000] {
        let obj = obj(rules);
        let text = obj.to_string();
        let iterations = 20_000 / rules + 20;
        // Like the oracle's loop: decode the JSON obj, then evaluate in a fresh state.
        let start = Instant::now();
        for _ in 0..iterations {
            let obj: Value = serde_json::from_str(&text).unwrap();
            lua::evaluate(&script, &obj, &Limits::default(), EvalOptions::CONTROLLER).unwrap();
        }
        let ours = start.elapsed().as_nanos() as f64 / iterations as f64;
        let obj_file = dir.path().join(format!("obj-{rules}.json"));
        std::fs::write(&obj_file, &text).unwrap();
        let out = Command::new(&oracle)
            .arg("-bench")
            .arg(iterations.to_string())
            .arg(root.join(SCRIPT))
            .arg(&obj_file)
            .output()
            .unwrap();
        assert!(out.status.success(), "oracle: {}", String::from_utf8_lossy(&out.stderr));
        let theirs: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        println!("| {rules} | {:.1} | {:.1} | {:.1}× |", ours / 1000.0, theirs / 1000.0, theirs / ours);
    }
    start_up();
}

/// A VirtualService with `rules` http rules (every tenth with a match), at a 20% step.
fn obj(rules: usize) -> Value {
    let http: Vec<Value> = (0..rules)
        .map(|i| {
            let mut rule = json!({"route": [{"destination": {"host": "reviews", "subset": "v1"}, "weight": 90}, {"destination": {"host": format!("other-{i}")}, "weight": 10}]});
            if i % 10 == 0 {
                rule["match"] = json!([{"uri": {"prefix": format!("/api/{i}")}}]);
            }
            rule
        })
        .collect();
    json!({
        "data": {"spec": {"hosts": ["reviews"], "gateways": ["mesh"], "http": http}, "labels": {"app": "reviews"}},
        "canaryWeight": 20, "stableWeight": 80, "canaryService": "reviews-canary", "stableService": "reviews"
    })
}

/// The oracle binary the differential tests build, built here when missing.
fn oracle(root: &Path) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let binary = target.join("oracle/oracle");
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
fn start_up() {
    let binary = env!("CARGO_BIN_EXE_kubectl-rollout_lua");
    let runs = 200;
    let start = Instant::now();
    for _ in 0..runs {
        let out = Command::new(binary).arg("--version").output().unwrap();
        assert!(out.status.success());
    }
    let mean = start.elapsed().as_secs_f64() * 1000.0 / f64::from(runs);
    let size = std::fs::metadata(binary).unwrap().len() as f64 / (1024.0 * 1024.0);
    println!("\n`--version` start-up: {mean:.2} ms mean over {runs} runs; binary: {size:.1} MiB ({binary})");
}
