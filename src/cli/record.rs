//! `record`: a live Rollout (or TrafficRouting) and its gateway objects' originals as test cases
//! in the controller's format, `expected` filled with every step's current plan, so that a script
//! change can be replayed offline (`test`, `plan -f`) against real cluster state.

use super::cluster::{Session, runtime};
use super::{Outcome, RecordArgs, print_raw};
use crate::data::Data;
use crate::error::Error;
use crate::lua::{self, EvalOptions, Limits};
use crate::model::{ObjectIndex, ObjectKey, ObjectRef, Routing};
use crate::providers::gateway::{self, GatewayRoute, testcase::HttpRouteTestCase};
use crate::scripts::ResolvedScript;
use crate::source::live::{self, Selection};
use crate::testcase::TestCase;
use crate::yaml;
use serde_json::{Map, Value, json};
use std::io::Write;
use std::path::Path;
use std::time::SystemTime;

/// One recorded case: which object and script it is for (an HTTPRoute has none), and its YAML.
struct Recorded {
    reference: ObjectRef,
    script: Option<ResolvedScript>,
    file_name: String,
    text: String,
}

pub fn record(args: &RecordArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let session = Session::open(&args.cluster, &args.scripts).await?;
        let cases = match args.rollout.split_once('/').filter(|(kind, _)| kind.starts_with("trafficrouting")) {
            Some((_, name)) => record_traffic_routing(&session, name).await?,
            None => record_rollout(&session, live::rollout_name(&args.rollout)).await?,
        };
        let header = format!(
            "# Recorded by kubectl-rollout-lua {} from context {:?}, namespace {}, at {}.\n",
            crate::VERSION,
            session.cluster.context,
            session.cluster.namespace,
            crate::time::rfc3339(SystemTime::now())
        );
        match (&args.output_file, &args.dir) {
            (_, Some(dir)) => write_tree(dir, &header, &cases)?,
            (Some(path), None) => std::fs::write(path, documents(&header, &cases))
                .map_err(|e| Error::Input(format!("writing {}: {e}", path.display())))?,
            (None, None) => print_raw(&documents(&header, &cases))?,
        }
        Ok(Outcome::Done)
    })
}

fn documents(header: &str, cases: &[Recorded]) -> String {
    let texts: Vec<&str> = cases.iter().map(|c| c.text.as_str()).collect();
    format!("{header}{}", texts.join("---\n"))
}

/// `DIR/<group>/<Kind>/testdata/<case>.yaml`, with the script that made `expected` next to it
/// (unless one is there already), so `test DIR` replays them.
fn write_tree(dir: &Path, header: &str, cases: &[Recorded]) -> Result<(), Error> {
    let io = |path: &Path, e: std::io::Error| Error::Input(format!("writing {}: {e}", path.display()));
    for case in cases {
        let kind_dir = dir.join(case.reference.script_group()).join(&case.reference.kind);
        let testdata = kind_dir.join("testdata");
        std::fs::create_dir_all(&testdata).map_err(|e| io(&testdata, e))?;
        let file = testdata.join(&case.file_name);
        std::fs::write(&file, format!("{header}{}", case.text)).map_err(|e| io(&file, e))?;
        let script = kind_dir.join("trafficRouting.lua");
        if let Some(resolved) = case.script.as_ref().filter(|_| !script.exists()) {
            std::fs::write(&script, resolved.script.code()).map_err(|e| io(&script, e))?;
        }
        // A note only: a closed stderr must not stop the recording.
        let _ = writeln!(std::io::stderr().lock(), "wrote {}", file.display());
    }
    Ok(())
}

async fn record_rollout(session: &Session, name: &str) -> Result<Vec<Recorded>, Error> {
    let (live, catalog) = session.load(&Selection::Names(vec![name.to_string()])).await?;
    let rollout = &live.snapshot.rollouts[0];
    let cr = live.snapshot.traffic_routing_of(rollout)?;
    // The Rollout's own routing, then its TrafficRouting's, each recorded with its owner.
    let owners = Routing::of_rollout(&rollout.item, &rollout.namespace)
        .map(|routing| ("rollout", &rollout.raw, routing))
        .into_iter()
        .chain(cr.map(|cr| ("trafficRouting", &cr.raw, Routing::of_traffic_routing(&cr.item, &cr.namespace))));
    let mut cases = Vec::new();
    for (key, raw, routing) in owners {
        for reference in routing.custom_refs() {
            let namespace = &routing.owner.namespace;
            let object = live
                .snapshot
                .objects
                .get(&ObjectKey::of_ref(reference, namespace))
                .ok_or_else(|| missing(reference, namespace))?;
            let script = catalog.resolve(reference).map_err(Error::Input)?;
            cases.push(case(key, raw, object, reference, script, session.limits(), &routing.owner.name)?);
        }
        if let Some(name) = routing.http_route() {
            cases.push(http_route_case(key, raw, &live.snapshot.objects, &routing, name)?);
        }
    }
    if cases.is_empty() {
        return Err(Error::Input(format!(
            "Rollout {} routes through no gateway object (no customNetworkRefs, no gateway, no TrafficRouting)",
            rollout.item.name
        )));
    }
    Ok(cases)
}

async fn record_traffic_routing(session: &Session, name: &str) -> Result<Vec<Recorded>, Error> {
    let (cr, objects) = live::read_traffic_routing(&session.cluster, name).await?;
    let routing = Routing::of_traffic_routing(&cr.item, &cr.namespace);
    let custom: Vec<_> = objects.iter().filter(|(r, _, _)| routing.custom_refs().contains(r)).collect();
    let catalog = session.catalog_for(custom.iter().map(|(r, _, _)| r)).await?;
    let mut cases = custom
        .iter()
        .map(|(reference, _, object)| {
            let object = object.as_ref().ok_or_else(|| missing(reference, &cr.namespace))?;
            let script = catalog.resolve(reference).map_err(Error::Input)?;
            case("trafficRouting", &cr.raw, object, reference, script, session.limits(), &cr.item.name)
        })
        .collect::<Result<Vec<_>, Error>>()?;
    if let Some(route) = routing.http_route() {
        let mut index = ObjectIndex::default();
        for object in objects.into_iter().filter_map(|(_, _, object)| object) {
            index.insert(&cr.namespace, object);
        }
        cases.push(http_route_case("trafficRouting", &cr.raw, &index, &routing, route)?);
    }
    Ok(cases)
}

/// An HTTPRoute's test case: the owner, the route before the release, and the route after each
/// step as `test` computes it (the controller's Gateway API routing, each step from the route
/// the step before left). The controller keeps no copy of a route it changed: a route in the
/// middle of a release is recorded as the controller's restore would leave it.
fn http_route_case(
    key: &str,
    subject: &Value,
    objects: &ObjectIndex,
    routing: &Routing,
    name: &str,
) -> Result<Recorded, Error> {
    let route = GatewayRoute::of(routing, name);
    let live = objects.get(&route.key()).ok_or_else(|| {
        Error::Input(format!("{} routes through {}, which is not in its namespace", routing.owner, route.key()))
    })?;
    let reference = ObjectRef {
        api_version: live["apiVersion"].as_str().unwrap_or_default().to_string(),
        kind: gateway::KIND.into(),
        name: name.into(),
    };
    let restored = gateway::restore(&route, Some(live))?;
    let (original, note) = match route.untouched(live) {
        true => (manifest(live), String::new()),
        false => (
            manifest(restored.route.as_ref().unwrap_or(live)),
            format!(
                "# {} is in the middle of a release, and the controller keeps no copy of it: original is the\n\
                 # route as the controller's restore leaves it (canary backendRefs removed, the stable weight 1,\n\
                 # rules without backendRefs deleted).\n",
                route.key()
            ),
        ),
    };
    let draft = format!(
        "{key}:\n{}original:\n{}",
        indent(&yaml::to_string(&manifest(subject))),
        indent(&yaml::to_string(&original))
    );
    let file_name = format!("{}-httproute-{name}.yaml", routing.owner.name);
    let case = HttpRouteTestCase::parse(&file_name, &draft).map_err(Error::Input)?;
    let expected: Vec<Value> = case.routes()?.iter().map(manifest).collect();
    let text = format!(
        "# {} with the controller's Gateway API routing (no script): expected is the route after each\n\
         # step, each from the route the step before left, as `test` checks it.\n{note}{draft}expected:\n{}",
        route.key(),
        yaml::to_string(&Value::Array(expected))
    );
    Ok(Recorded { reference, script: None, file_name, text })
}

fn missing(reference: &ObjectRef, namespace: &str) -> Error {
    Error::Input(format!("{reference} ({}) is not in namespace {namespace}", reference.api_version))
}

/// One test case: the subject (Rollout or TrafficRouting) as applied, the object's original, and
/// each step's result with the controller's test-harness semantics (what `test` compares).
fn case(
    key: &str,
    subject: &Value,
    live: &Value,
    reference: &ObjectRef,
    script: ResolvedScript,
    limits: Limits,
    owner: &str,
) -> Result<Recorded, Error> {
    let original =
        Data::original_of(live).map_err(|e| Error::Input(format!("{reference}: {e}")))?.apply_to(&skeleton(live), None);
    let subject = manifest(subject);
    let draft =
        format!("{key}:\n{}original:\n{}", indent(&yaml::to_string(&subject)), indent(&yaml::to_string(&original)));
    let file_name = format!("{owner}-{}-{}.yaml", reference.kind.to_lowercase(), reference.name);
    let steps = TestCase::parse(&file_name, &draft).map_err(Error::Input)?.steps;
    let expected = steps
        .iter()
        .map(|obj| {
            let data = lua::evaluate(&script.script, obj, &limits, EvalOptions::HARNESS)?;
            Ok(data.apply_to(&original, None))
        })
        .collect::<Result<Vec<Value>, Error>>()?;
    let text = format!(
        "# {reference} with {} (sha256 {}).\n\
         # expected follows the controller's test harness, as `test` checks it: the canary Service is always\n\
         # <service>-canary and steps without traffic or matches still run the script; `plan -f` shows what\n\
         # the controller itself would write.\n{draft}expected:\n{}",
        script.source,
        script.short_hash(),
        yaml::to_string(&Value::Array(expected))
    );
    Ok(Recorded { reference: reference.clone(), script: Some(script), file_name, text })
}

/// An object as one would apply it: identity, labels, annotations, spec; no status or
/// server-set metadata.
fn manifest(object: &Value) -> Value {
    let mut out = skeleton(object);
    for field in ["labels", "annotations"] {
        if let Some(value) = object["metadata"].get(field).filter(|v| v.as_object().is_some_and(|m| !m.is_empty())) {
            out["metadata"][field] = value.clone();
        }
    }
    if let Some(spec) = object.get("spec") {
        out["spec"] = spec.clone();
    }
    out
}

fn skeleton(object: &Value) -> Value {
    let mut metadata = Map::new();
    for field in ["name", "namespace"] {
        if let Some(value) = object["metadata"].get(field) {
            metadata.insert(field.into(), value.clone());
        }
    }
    json!({"apiVersion": object["apiVersion"], "kind": object["kind"], "metadata": metadata})
}

fn indent(text: &str) -> String {
    text.lines().map(|line| format!("  {line}\n")).collect()
}
