//! Runs the fake API server by hand, e.g. to try kubectl or the plugin against fixtures.
//!
//! kubectl notes: `/openapi/*` is not served, so `kubectl create/apply/replace -f` need
//! `--validate=false`; `kubectl get` prints NAME and AGE only (lists, not server-side
//! tables); `kubectl auth can-i` sends protobuf, which the server refuses with 415.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use fake_apiserver::{FakeApiServer, LoggedRequest, Rule, parse_objects, plugin_kinds};

const USAGE: &str = "\
usage: fake-apiserver [--port N] [--latency-ms N] [--kubeconfig OUT] [--namespace NS]
                      [--deny RULE]... [--grant RULE]... FIXTURE...

Serves Kruise Rollout, Istio, ConfigMap, Service, Deployment, Lease, Ingress and HTTPRoute
resources (what plan, approve, restore, status and record read and write) on
http://127.0.0.1 with the objects from FIXTURE files (multi-document YAML or JSON) or
directories of *.yaml/*.yml/*.json files. Prints the URL, then logs each request to stderr
until interrupted.

  --port N          listen on port N (default: any free port)
  --latency-ms N    delay every response by N milliseconds
  --kubeconfig OUT  write a kubeconfig for the server to OUT
  --namespace NS    namespace of the kubeconfig's current context (default: default)
  --deny RULE       answer the requests RULE matches with 403 Forbidden, as RBAC would
  --grant RULE      allow only what a grant matches (as a Role does), deny rules still deny

A RULE is VERBS:RESOURCES[:NAMES], each a comma-separated list or *, a resource as
plural or plural/subresource (e.g. --deny patch:rollouts/status, --grant get,list,watch:*).";

struct Options {
    port: u16,
    latency: Duration,
    kubeconfig: Option<PathBuf>,
    namespace: String,
    fixtures: Vec<PathBuf>,
    denied: Vec<Rule>,
    granted: Vec<Rule>,
}

/// `VERBS:RESOURCES[:NAMES]`, each a comma-separated list or `*`.
fn rule(text: &str) -> Result<Rule, String> {
    let list = |part: &str| part.split(',').map(str::to_string).collect::<Vec<_>>();
    match text.split(':').collect::<Vec<_>>()[..] {
        [verbs, resources] => Ok(Rule::new(list(verbs)).resources(list(resources))),
        [verbs, resources, names] => Ok(Rule::new(list(verbs)).resources(list(resources)).names(list(names))),
        _ => Err(format!("{text:?}: a rule is VERBS:RESOURCES[:NAMES]\n\n{USAGE}")),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("fake-apiserver: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let Some(options) = parse_args(std::env::args().skip(1))? else {
        println!("{USAGE}");
        return Ok(());
    };
    let mut builder = FakeApiServer::builder()
        .resources(plugin_kinds())
        .port(options.port)
        .latency(options.latency)
        .on_request(print_request);
    for denied in options.denied {
        builder = builder.deny(denied);
    }
    for granted in options.granted {
        builder = builder.grant(granted);
    }
    for path in fixture_files(&options.fixtures)? {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        for object in parse_objects(&text).map_err(|e| format!("{}: {e}", path.display()))? {
            builder = builder.object(object);
        }
    }
    let server = builder.try_start().map_err(|e| e.to_string())?;
    if let Some(path) = &options.kubeconfig {
        server.write_kubeconfig(path, &options.namespace).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    println!("{}", server.url());
    // Serve until the process is killed.
    loop {
        std::thread::park();
    }
}

/// The options, or `None` when help was asked for.
fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options {
        port: 0,
        latency: Duration::ZERO,
        kubeconfig: None,
        namespace: "default".into(),
        fixtures: Vec::new(),
        denied: Vec::new(),
        granted: Vec::new(),
    };
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value\n\n{USAGE}"));
        match arg.as_str() {
            "-h" | "--help" => return Ok(None),
            "--port" => {
                options.port = value("--port")?.parse().map_err(|e| format!("--port: {e}"))?;
            }
            "--latency-ms" => {
                let ms = value("--latency-ms")?.parse().map_err(|e| format!("--latency-ms: {e}"))?;
                options.latency = Duration::from_millis(ms);
            }
            "--kubeconfig" => options.kubeconfig = Some(value("--kubeconfig")?.into()),
            "--namespace" => options.namespace = value("--namespace")?,
            "--deny" => options.denied.push(rule(&value("--deny")?)?),
            "--grant" => options.granted.push(rule(&value("--grant")?)?),
            flag if flag.starts_with('-') => return Err(format!("unknown flag {flag}\n\n{USAGE}")),
            fixture => options.fixtures.push(fixture.into()),
        }
    }
    Ok(Some(options))
}

/// Files to load: each FIXTURE file, and the YAML/JSON files directly inside each
/// FIXTURE directory, in name order.
fn fixture_files(fixtures: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let is_fixture = |p: &Path| p.is_file() && p.extension().is_some_and(|e| e == "yaml" || e == "yml" || e == "json");
    let mut files = Vec::new();
    for path in fixtures {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let mut found: Vec<PathBuf> =
                entries.filter_map(|entry| entry.ok().map(|e| e.path())).filter(|p| is_fixture(p)).collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

fn print_request(request: &LoggedRequest) {
    let query = if request.query.is_empty() { String::new() } else { format!("?{}", request.query) };
    let status = request.status.map_or_else(|| "dropped".to_owned(), |s| s.to_string());
    let elapsed = request.finished.saturating_sub(request.started);
    eprintln!("{} {}{query} -> {status} ({} ms)", request.method, request.path, elapsed.as_millis());
}
