//! Differential test of the built-in Ingress scripts: `kubectl-rollout_lua eval --ingress`
//! against the controller's engine (the oracle of `tests/oracle`, built from the gopher-lua
//! version the controller pins, run with `-ingress`) on generated objs: weights
//! including "-1", header, cookie and regular-expression matches, several matches, query
//! parameters, paths, request header modifiers, nil and non-nil annotations, and leftover keys
//! of an earlier step. Both must print the same bytes, or both must fail; and each must do what
//! the behaviour description says (mse fails without annotations or with a modifier without
//! `set`, higress and aliyun-alb on a match without headers).
//!
//! The oracle is `differential`'s: a failed build fails these tests; built against another
//! gopher-lua than the controller's, they are skipped with the reason printed.

use crate::differential::{self, SplitMix64};
use crate::support::{self, Test};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Generated objs per class.
const PER_CLASS: usize = 520;

#[test]
fn nginx_script_agrees_with_the_controller() {
    agrees_on_generated_objs("nginx", 0x5eed_0000_0000_0011);
}

#[test]
fn aliyun_alb_script_agrees_with_the_controller() {
    agrees_on_generated_objs("aliyun-alb", 0x5eed_0000_0000_0012);
}

#[test]
fn higress_script_agrees_with_the_controller() {
    agrees_on_generated_objs("higress", 0x5eed_0000_0000_0013);
}

#[test]
fn mse_script_agrees_with_the_controller() {
    agrees_on_generated_objs("mse", 0x5eed_0000_0000_0014);
}

fn agrees_on_generated_objs(class_type: &str, seed: u64) {
    if !differential::pinned_or_skip("the Ingress scripts' corpus") {
        return;
    }
    let oracle = &differential::oracle().path;
    let script = support::repo(&format!("lua_configuration/trafficrouting_ingress/{class_type}.lua"));
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SplitMix64(seed);
    let cases: Vec<(PathBuf, bool)> = (0..PER_CLASS)
        .map(|i| {
            let obj = generated_obj(&mut rng);
            let path = dir.path().join(format!("obj-{i:04}.json"));
            std::fs::write(&path, serde_json::to_string_pretty(&obj).unwrap()).unwrap();
            (path, fails_in_the_controller(class_type, &obj))
        })
        .collect();
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut problems: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut found = Vec::new();
                    while let Some((obj, fails)) = cases.get(next.fetch_add(1, Ordering::Relaxed)) {
                        found.extend(compare(oracle, &script, obj, *fails));
                    }
                    found
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    let failing = cases.iter().filter(|(_, fails)| *fails).count();
    println!("differential, {class_type} Ingress script: {} objs ({failing} expected to fail)", cases.len());
    if !problems.is_empty() {
        problems.sort();
        let kept = dir.keep();
        panic!(
            "{} of {} comparisons failed (objs kept in {}):\n{}",
            problems.len(),
            cases.len(),
            kept.display(),
            problems.join("\n")
        );
    }
}

/// `None` when both engines print the same bytes (or both fail) and that is what the case expects.
fn compare(oracle: &Path, script: &Path, obj: &Path, fails: bool) -> Option<String> {
    let engine = Test::new().arg("eval").arg(script).arg("--ingress").arg("--obj").arg(obj).run();
    let reference = Command::new(oracle).arg("-ingress").arg(script).arg(obj).env_clear().output().unwrap();
    let controller_ok = reference.status.success();
    let problem = match (engine.status == 0, controller_ok) {
        (true, true) if engine.stdout.as_bytes() == reference.stdout.as_slice() => None,
        (true, true) => Some("outputs differ"),
        (false, false) => None,
        (true, false) => Some("the engine succeeded where the controller fails"),
        (false, true) => Some("the engine failed where the controller succeeds"),
    }
    .or(match (fails, controller_ok) {
        (true, true) => Some("the controller succeeds where the behaviour description says it fails"),
        (false, false) => Some("the controller fails where the behaviour description says it succeeds"),
        _ => None,
    })?;
    Some(format!(
        "--- {}: {problem}\n  engine:     {}{}\n  controller: {}{}",
        obj.display(),
        engine.stdout.trim_end(),
        engine.stderr.trim_end(),
        String::from_utf8_lossy(&reference.stdout).trim_end(),
        String::from_utf8_lossy(&reference.stderr).trim_end()
    ))
}

/// Where the controller's script fails (docs/controller-semantics.md §5.6).
fn fails_in_the_controller(class_type: &str, obj: &Value) -> bool {
    let headerless = obj["matches"].as_array().into_iter().flatten().any(|m| m.get("headers").is_none());
    match class_type {
        "mse" => {
            obj.get("annotations").is_none() || obj.get("requestHeaderModifier").is_some_and(|m| m.get("set").is_none())
        }
        "higress" | "aliyun-alb" => headerless,
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Generated objs, in the shape the controller builds (lists that would be empty are absent)

const TEXTS: &[&str] = &["demo", "true", "50", "", "a<b>&c", "日本語", "line\nbreak", "x.*", "^1[0-9]+$"];
const FOREIGN_KEYS: &[&str] = &[
    "kubernetes.io/ingress.class",
    "kubectl.kubernetes.io/last-applied-configuration",
    "example.com/owner",
    "nginx.ingress.kubernetes.io/proxy-body-size",
    "mse.ingress.kubernetes.io/service-subset",
];
/// Keys the scripts manage, as an earlier step may have left them.
const LEFTOVER_KEYS: &[&str] = &[
    "nginx.ingress.kubernetes.io/canary",
    "nginx.ingress.kubernetes.io/canary-weight",
    "nginx.ingress.kubernetes.io/canary-by-header",
    "nginx.ingress.kubernetes.io/canary-by-header-value",
    "nginx.ingress.kubernetes.io/canary-by-header-pattern",
    "nginx.ingress.kubernetes.io/canary-by-cookie",
    "nginx.ingress.kubernetes.io/canary-by-query",
    "nginx.ingress.kubernetes.io/canary-by-query-value",
    "mse.ingress.kubernetes.io/canary-by-query",
    "mse.ingress.kubernetes.io/canary-by-query-pattern",
    "mse.ingress.kubernetes.io/request-header-control-update",
    "alb.ingress.kubernetes.io/canary",
    "alb.ingress.kubernetes.io/canary-weight",
    "alb.ingress.kubernetes.io/canary-by-header-value",
    "alb.ingress.kubernetes.io/order",
];
const NAMES: &[&str] = &["x-canary", "user-agent", "canary-by-cookie", "x-user-id", "id"];
const TYPES: &[Option<&str>] = &[Some("Exact"), Some("RegularExpression"), None];

fn generated_obj(rng: &mut SplitMix64) -> Value {
    let mut obj = Map::new();
    if rng.chance(75) {
        let mut annotations = Map::new();
        for _ in 0..rng.between(1, 5) {
            let keys = if rng.chance(50) { FOREIGN_KEYS } else { LEFTOVER_KEYS };
            annotations.insert(rng.pick(keys).to_string(), json!(rng.pick(TEXTS)));
        }
        obj.insert("annotations".into(), Value::Object(annotations));
    }
    let weight = match rng.between(0, 9) {
        0 | 1 => "-1".to_string(),
        2 => "0".to_string(),
        _ => rng.between(1, 100).to_string(),
    };
    obj.insert("weight".into(), weight.into());
    match rng.between(0, 19) {
        0..=5 => {}
        6 => {
            obj.insert("matches".into(), json!([]));
        }
        _ => {
            let matches: Vec<Value> = (0..rng.between(1, 3)).map(|_| generated_match(rng)).collect();
            obj.insert("matches".into(), Value::Array(matches));
        }
    }
    obj.insert("canaryService".into(), json!(rng.pick(&["web-canary", "web"])));
    if rng.chance(35) {
        let mut modifier = Map::new();
        if rng.chance(85) {
            modifier.insert("set".into(), name_values(rng, 1, 3, false));
        }
        if rng.chance(40) {
            modifier.insert("add".into(), name_values(rng, 1, 2, false));
        }
        if rng.chance(30) {
            modifier.insert("remove".into(), json!([rng.pick(NAMES)]));
        }
        obj.insert("requestHeaderModifier".into(), Value::Object(modifier));
    }
    Value::Object(obj)
}

fn generated_match(rng: &mut SplitMix64) -> Value {
    let mut m = Map::new();
    if rng.chance(85) {
        m.insert("headers".into(), name_values(rng, 1, 3, true));
    }
    if rng.chance(40) {
        m.insert("queryParams".into(), name_values(rng, 1, 2, true));
    }
    if rng.chance(25) {
        m.insert(
            "path".into(),
            json!({"type": rng.pick(&["PathPrefix", "Exact", "RegularExpression"]), "value": "/pc"}),
        );
    }
    Value::Object(m)
}

/// `low..=high` entries of `{name, value}`, with a `type` when `typed` (sometimes absent, as in
/// objects the API server did not default).
fn name_values(rng: &mut SplitMix64, low: u64, high: u64, typed: bool) -> Value {
    let entries = (0..rng.between(low, high))
        .map(|_| {
            let mut entry = Map::new();
            if typed && let Some(kind) = rng.pick(TYPES) {
                entry.insert("type".into(), json!(kind));
            }
            entry.insert("name".into(), json!(rng.pick(NAMES)));
            entry.insert("value".into(), json!(rng.pick(TEXTS)));
            Value::Object(entry)
        })
        .collect();
    Value::Array(entries)
}
