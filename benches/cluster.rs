//! `plan` against the fake API server with 50 ms added to every response: sequential round
//! trips and wall time for 1 Rollout with 2 refs, 20 Rollouts with 2 refs each, and a Rollout
//! routed through a TrafficRouting, each with a cold and a warm discovery cache. Each figure is
//! the median of several runs (the machine is noisy). The target: at most the round trips each
//! scenario names, and a wall time within those round trips plus `SLACK`.
//!
//! cargo bench --bench cluster

use fake_apiserver::{FakeApiServer, FakeHandle};
use serde_json::{Value, json};
use std::process::Command;
use std::time::{Duration, Instant};

const LATENCY: Duration = Duration::from_millis(50);
const RUNS: usize = 11;
/// What a plan may take beyond its round trips: starting the process, reading the kubeconfig,
/// planning, printing.
const SLACK: Duration = Duration::from_millis(25);
const NAMESPACE: &str = "shop";

fn main() {
    println!(
        "| scenario | discovery cache | sequential round trips (target) | wall time (ms), median of {RUNS} (min–max) | target: ≤ round trips × 50 ms + 25 ms |"
    );
    println!("|---|---|---:|---:|---|");
    // Warm: the Rollouts, then their objects (+1: a TrafficRouting's own objects); cold: the
    // discovery of the groups first.
    for (scenario, objects, rollouts, [cold_trips, warm_trips]) in [
        ("1 Rollout, 2 refs", rollout_objects(1, false), 1, [4, 2]),
        ("20 Rollouts, 2 refs each", rollout_objects(20, false), 20, [4, 2]),
        ("1 Rollout with a TrafficRouting (2 refs)", rollout_objects(1, true), 1, [6, 3]),
    ] {
        let server = objects
            .into_iter()
            .fold(
                FakeApiServer::builder()
                    .kruise_and_istio()
                    .resource(fake_apiserver::deployments())
                    .resource(fake_apiserver::services()),
                |b, o| b.object(o),
            )
            .latency(LATENCY)
            .start();
        let dir = tempfile::tempdir().unwrap();
        server.write_kubeconfig(dir.path().join("kubeconfig"), NAMESPACE).unwrap();
        let names: Vec<String> = (0..rollouts).map(|i| format!("app{i}")).collect();
        for (cache, expected) in [("cold", cold_trips), ("warm", warm_trips)] {
            let mut runs: Vec<(f64, usize)> = (0..RUNS)
                .map(|_| {
                    if cache == "cold" {
                        let _ = std::fs::remove_dir_all(dir.path().join("cache"));
                    } else {
                        plan(&server, dir.path(), &names);
                    }
                    server.clear_log();
                    let start = Instant::now();
                    plan(&server, dir.path(), &names);
                    (start.elapsed().as_secs_f64() * 1000.0, server.round_trips())
                })
                .collect();
            runs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (wall, trips) = runs[RUNS / 2];
            let (fastest, slowest) = (runs[0].0, runs[RUNS - 1].0);
            let budget = (LATENCY * expected + SLACK).as_secs_f64() * 1000.0;
            let met = trips <= expected as usize && wall <= budget;
            let verdict = if met { format!("met ({budget:.0} ms)") } else { format!("MISSED ({budget:.0} ms)") };
            println!(
                "| {scenario} | {cache} | {trips} ({expected}) | {wall:.0} ({fastest:.0}–{slowest:.0}) | {verdict} |"
            );
        }
    }
}

fn plan(server: &FakeHandle, dir: &std::path::Path, names: &[String]) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-rollout_lua"))
        .arg("plan")
        .args(names)
        .env_clear()
        .env("HOME", dir)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("KUBECONFIG", dir.join("kubeconfig"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "plan failed against {}: {}", server.url(), String::from_utf8_lossy(&out.stderr));
}

/// `count` Rollouts `app<i>` at step 2 of 2 (20% traffic), each with a VirtualService and a
/// DestinationRule, routed by the Rollout itself (with the canary Service the controller made,
/// which the plan reads with the objects) or through a TrafficRouting, and its Deployment (a
/// cluster always serves apps/v1; the plan reads the workload's replicas).
fn rollout_objects(count: usize, through_traffic_routing: bool) -> Vec<Value> {
    let mut objects = Vec::new();
    for i in 0..count {
        let name = format!("app{i}");
        let refs = json!([
            {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": name},
            {"apiVersion": "networking.istio.io/v1beta1", "kind": "DestinationRule", "name": name}
        ]);
        let mut canary = json!({"steps": [{"replicas": 1}, {"replicas": "20%", "traffic": "20%"}]});
        let mut metadata = json!({"name": name, "namespace": NAMESPACE});
        if through_traffic_routing {
            metadata["annotations"] = json!({"rollouts.kruise.io/trafficrouting": format!("{name}-tr")});
            objects.push(json!({
                "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": format!("{name}-tr"), "namespace": NAMESPACE},
                "spec": {"strategy": {"weight": 20}, "objectRef": [{"service": name, "customNetworkRefs": refs}]}
            }));
        } else {
            canary["trafficRoutings"] = json!([{"service": name, "customNetworkRefs": refs}]);
            objects.push(json!({
                "apiVersion": "v1", "kind": "Service", "metadata": {"name": format!("{name}-canary"), "namespace": NAMESPACE},
                "spec": {"ports": [{"port": 80}]}
            }));
        }
        objects.push(json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": metadata,
            "spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}, "strategy": {"canary": canary}},
            "status": {"phase": "Progressing", "canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepPaused"}}
        }));
        objects.push(json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"replicas": 10}, "status": {"replicas": 10, "readyReplicas": 10}
        }));
        objects.push(json!({
            "apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"hosts": [name], "http": [{"route": [{"destination": {"host": name}}]}]}
        }));
        objects.push(json!({
            "apiVersion": "networking.istio.io/v1beta1", "kind": "DestinationRule", "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"host": name, "subsets": [{"name": "stable", "labels": {"version": "v1"}}]}
        }));
    }
    objects
}
