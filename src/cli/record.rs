//! `record`: a live Rollout (or TrafficRouting) and its gateway objects' originals as test cases
//! in the controller's format, `expected` filled with every step's current plan, so that a script
//! change can be replayed offline (`test`, `plan -f`) against real cluster state.

use super::cluster::{Session, runtime};
use super::{Outcome, RecordArgs, print_raw, show_printed, warn};
use crate::data::Data;
use crate::error::Error;
use crate::lua::{Limits, Printed};
use crate::model::{ObjectIndex, ObjectKey, ObjectRef, Provider, Routing, http_route};
use crate::providers::custom;
use crate::providers::gateway::{self, GatewayRoute, testcase::HttpRouteTestCase};
use crate::providers::ingress::{self, testcase::IngressTestCase};
use crate::scripts::{ResolvedScript, ScriptCatalog, ScriptSource};
use crate::source::files::{self, Existing};
use crate::source::live::{self, RecordSubject, Selection};
use crate::testcase::{self, GoTest, TestCase};
use crate::yaml;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One recorded case: the script it is for (an HTTPRoute has none), where the script and its
/// cases go in a tree laid out as lua_configuration/, and its YAML.
struct Recorded {
    script: Option<ResolvedScript>,
    /// `<group>/<Kind>/trafficRouting.lua`, or `trafficrouting_ingress/<classType>.lua`.
    script_path: PathBuf,
    /// `<group>/<Kind>/testdata`, or `trafficrouting_ingress/testdata/<classType>`.
    testdata: PathBuf,
    file_name: String,
    /// Whose case it is: a file holding another's is never replaced.
    whose: Whose,
    text: String,
}

pub fn record(args: &RecordArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let session = Session::open(&args.cluster, &args.scripts).await?;
        let cases = match &args.subject {
            RecordSubject::TrafficRouting(name) => record_traffic_routing(&session, name).await?,
            RecordSubject::Rollout(name) => record_rollout(&session, name).await?,
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
            (Some(path), None) => files::write_output(path, &documents(&header, &cases))?,
            (None, None) => print_raw(&documents(&header, &cases))?,
        }
        Ok(Outcome::Done)
    })
}

fn documents(header: &str, cases: &[Recorded]) -> String {
    let texts: Vec<&str> = cases.iter().map(|c| c.text.as_str()).collect();
    format!("{header}{}", texts.join("---\n"))
}

/// Each case in its testdata folder, with the script that made `expected` next to it (unless
/// one is there already), so `test DIR` replays them.
fn write_tree(dir: &Path, header: &str, cases: &[Recorded]) -> Result<(), Error> {
    if let Some(path) = cases.iter().find_map(not_plain) {
        return Err(Error::Input(format!(
            "nothing was written: {} would not be a file under {}: a kind, class or name from the cluster is no plain name",
            path.display(),
            dir.display()
        )));
    }
    clashing_case(dir, cases)?;
    // Every folder first: one that cannot be made (a file in its place) stops the run before
    // any case is written.
    for case in cases {
        let testdata = dir.join(&case.testdata);
        std::fs::create_dir_all(&testdata)
            .map_err(|e| Error::Input(format!("nothing was written: making the folder {}: {e}", testdata.display())))?;
    }
    for case in cases {
        let file = dir.join(&case.testdata).join(&case.file_name);
        files::write_output(&file, &format!("{header}{}", case.text))?;
        if let Some(resolved) = &case.script {
            let script = dir.join(&case.script_path);
            let code = resolved.script.code().as_bytes();
            match files::write_whole(&script, code, Existing::Keep, files::ORDINARY) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    // Kept: `test DIR` checks the case against it, not against the script that
                    // made its expected.
                    if std::fs::read(&script).is_ok_and(|kept| kept != code) {
                        crate::stderr::line(&format!(
                            "warning: kept {}, which is not the script that made the case's expected ({}): `test` checks the case against the kept one",
                            script.display(),
                            resolved.source
                        ));
                    }
                }
                Err(e) => return Err(Error::Input(format!("writing {}: {e}", script.display()))),
                Ok(()) => {}
            }
        }
        // A note only: a closed stderr must not stop the recording.
        crate::stderr::line(&format!("wrote {}", file.display()));
    }
    Ok(())
}

/// Refuses, before anything is written, a case whose file under `dir` would replace the case of
/// another owner or object (a file name leaves out namespaces, and a Rollout and its
/// TrafficRouting may share a name), whether a file already there or another case of this run,
/// or a file there that is no case (someone's own). A file of the same owner and object is
/// recorded afresh.
fn clashing_case(dir: &Path, cases: &[Recorded]) -> Result<(), Error> {
    let mut this_run: Vec<(PathBuf, &Whose)> = Vec::new();
    for case in cases {
        let file = dir.join(&case.testdata).join(&case.file_name);
        let ours = &case.whose;
        let clash = match this_run.iter().find(|(path, _)| *path == file) {
            Some((_, earlier)) => Some(format!(
                "would hold the case of {earlier} and that of {ours}: record with --output-file FILE, one file for every case"
            )),
            None => match files::read_text(&file, files::TEST_CASE) {
                Err(_) if !file.exists() => None,
                Err(e) => Some(format!("cannot be read ({e}), so it is not known to be a recorded case: record into another --dir")),
                Ok(text) => match recorded_whose(&text) {
                    None => Some("is not a recorded case (no rollout or trafficRouting and original): record into another --dir, or move it".into()),
                    Some(theirs) if theirs == *ours => None,
                    Some(theirs) => {
                        let why = if theirs.same_names(ours) { " (a case's file name leaves out namespaces)" } else { "" };
                        Some(format!("holds the case of {theirs}, not of {ours}{why}: record into another --dir"))
                    }
                },
            },
        };
        if let Some(clash) = clash {
            return Err(Error::Input(format!("nothing was written: {} {clash}", file.display())));
        }
        this_run.push((file, ours));
    }
    Ok(())
}

/// Whose case a recording is: its owner's (a Rollout or TrafficRouting) and its original's.
#[derive(Debug, PartialEq)]
struct Whose {
    owner: Named,
    original: Named,
}

/// An object by kind, namespace and name.
#[derive(Debug, PartialEq)]
struct Named {
    kind: String,
    namespace: String,
    name: String,
}

impl Named {
    fn of(object: &Value) -> Named {
        let field = |value: &Value| value.as_str().unwrap_or_default().to_string();
        let metadata = &object["metadata"];
        Named { kind: field(&object["kind"]), namespace: field(&metadata["namespace"]), name: field(&metadata["name"]) }
    }
}

impl std::fmt::Display for Named {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.namespace.as_str() {
            "" => write!(f, "{} {}", self.kind, self.name),
            namespace => write!(f, "{} {namespace}/{}", self.kind, self.name),
        }
    }
}

impl Whose {
    fn of(owner: &Value, original: &Value) -> Whose {
        Whose { owner: Named::of(owner), original: Named::of(original) }
    }

    /// Whether `other` is of the same kinds and names, in other namespaces or none.
    fn same_names(&self, other: &Whose) -> bool {
        let same = |a: &Named, b: &Named| a.kind == b.kind && a.name == b.name;
        same(&self.owner, &other.owner) && same(&self.original, &other.original)
    }
}

/// `Rollout shop/demo's VirtualService shop/demo`.
impl std::fmt::Display for Whose {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}'s {}", self.owner, self.original)
    }
}

/// Whose case the file text `text` holds; None for a text that is no case.
fn recorded_whose(text: &str) -> Option<Whose> {
    let case = yaml::parse_documents(text, "").ok()?.into_iter().next()?.value;
    let owner = ["rollout", "trafficRouting"].iter().find_map(|key| case.get(*key).filter(|o| o.is_object()))?;
    Some(Whose::of(owner, case.get("original").filter(|o| o.is_object())?))
}

/// The first of a case's paths under `--dir` that would lead elsewhere: they are made of names
/// from the cluster (a kind, a classType, an object's name), each of which must be a plain name,
/// never `..` or a path.
fn not_plain(case: &Recorded) -> Option<PathBuf> {
    let plain = |path: &Path| path.components().all(|c| matches!(c, std::path::Component::Normal(_)));
    let file = Path::new(&case.file_name);
    if !plain(file) || file.components().count() != 1 {
        return Some(file.to_path_buf());
    }
    [&case.testdata, &case.script_path].into_iter().find(|path| !plain(path)).cloned()
}

async fn record_rollout(session: &Session, name: &str) -> Result<Vec<Recorded>, Error> {
    let (live, catalog) = session.load(&Selection::Names(vec![name.to_string()])).await?;
    let rollout = &live.snapshot.rollouts[0];
    let cr = live.snapshot.traffic_routing_of(rollout)?;
    let owner = format!("Rollout {}/{}", rollout.namespace, rollout.item.name);
    // Said as plan says it: the cases hold the Rollout as it is.
    for warning in rollout.item.rejection_warnings() {
        warn(&format!("warning: {owner}: {warning}"));
    }
    if rollout.item.traffic_routing_entries > 1 {
        crate::stderr::line(&format!(
            "note: {owner}: only its trafficRoutings[0] is recorded, the one entry the controller routes through"
        ));
    }
    // The Rollout's own routing, then its TrafficRouting's, each recorded with its owner.
    let owners = Routing::of_rollout(&rollout.item, &rollout.namespace)
        .map(|routing| ("rollout", &rollout.raw, routing))
        .into_iter()
        .chain(cr.map(|cr| ("trafficRouting", &cr.raw, Routing::of_traffic_routing(&cr.item, &cr.namespace))));
    let mut cases = Vec::new();
    for (key, raw, routing) in owners {
        cases.extend(cases_of(key, raw, &routing, &live.snapshot.objects, &catalog, session.limits())?);
    }
    if cases.is_empty() {
        return Err(Error::Input(format!(
            "Rollout {} routes through no gateway object (no customNetworkRefs, no ingress, no gateway, no TrafficRouting)",
            rollout.item.name
        )));
    }
    Ok(cases)
}

async fn record_traffic_routing(session: &Session, name: &str) -> Result<Vec<Recorded>, Error> {
    let (cr, found) = live::read_traffic_routing(&session.cluster, name).await?;
    let routing = Routing::of_traffic_routing(&cr.item, &cr.namespace);
    let catalog = session.catalog_for(std::slice::from_ref(&routing)).await?;
    let mut objects = ObjectIndex::default();
    for object in found.objects.into_iter().filter_map(|(_, _, object)| object) {
        objects.insert(&cr.namespace, object);
    }
    cases_of("trafficRouting", &cr.raw, &routing, &objects, &catalog, session.limits())
}

/// The cases of one owner (`key` is `rollout` or `trafficRouting`, `subject` the owner as read):
/// one per custom ref, Ingress ref and HTTPRoute, in the controller's order.
fn cases_of(
    key: &str,
    subject: &Value,
    routing: &Routing,
    objects: &ObjectIndex,
    catalog: &ScriptCatalog,
    limits: Limits,
) -> Result<Vec<Recorded>, Error> {
    let namespace = &routing.owner.namespace;
    let mut cases = Vec::new();
    for provider in &routing.providers {
        match provider {
            Provider::Custom(refs) => {
                for reference in refs {
                    let object = objects
                        .get(&ObjectKey::of_ref(reference, namespace))
                        .ok_or_else(|| missing(reference, namespace))?;
                    let script = catalog.resolve(reference).map_err(|e| {
                        Error::Input(format!("{}: {e}", custom::routes_through(&routing.owner, reference)))
                    })?;
                    cases.push(case(key, subject, object, reference, script, limits, routing)?);
                }
            }
            Provider::Ingress { name, class_type } => {
                let reference = &provider.refs()[0];
                let stable = objects
                    .get(&ObjectKey::of_ref(reference, namespace))
                    .ok_or_else(|| missing(reference, namespace))?;
                let script = catalog
                    .resolve_ingress(class_type)
                    .map_err(|e| Error::Input(format!("{}: {e}", ingress::routes_through(&routing.owner, name))))?;
                let file_name = format!("{}-ingress-{name}.yaml", routing.owner.name);
                cases.push(ingress_case(key, subject, stable, class_type, script, limits, file_name)?);
            }
            Provider::Gateway { http_route } => {
                cases.push(http_route_case(key, subject, objects, routing, http_route)?)
            }
        }
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
        indent(&yaml::to_string(&subject_manifest(subject))),
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
    let kind_dir = Path::new(http_route::GROUP).join(http_route::KIND);
    Ok(Recorded {
        script: None,
        script_path: kind_dir.join("trafficRouting.lua"),
        testdata: kind_dir.join("testdata"),
        file_name,
        whose: Whose::of(subject, &original),
        text,
    })
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
    routing: &Routing,
) -> Result<Recorded, Error> {
    let owner = &routing.owner;
    let original =
        Data::original_of(live).map_err(|e| Error::Input(format!("{reference}: {e}")))?.apply_to(&skeleton(live), None);
    // Recorded as the object is, as the controller would store it, and said so, as plan says it.
    let note = match custom::canary_in_unstored(live, routing) {
        Some(canary) => {
            warn(&format!("warning: {owner}, {reference}: {}", custom::unstored_canary_routing(&canary)));
            format!(
                "# {reference} has no stored original and routes to {canary} already:\n\
                 # original is the object as it is, canary routing and all, as the controller would store it.\n"
            )
        }
        None => String::new(),
    };
    let subject = subject_manifest(subject);
    let draft =
        format!("{key}:\n{}original:\n{}", indent(&yaml::to_string(&subject)), indent(&yaml::to_string(&original)));
    let file_name = format!("{}-{}-{}.yaml", owner.name, reference.kind.to_lowercase(), reference.name);
    let parsed = TestCase::parse(&file_name, &draft).map_err(Error::Input)?;
    if let GoTest::CannotRun(why) = &parsed.go_test {
        warn(&format!("warning: {owner}, {reference}: the controller's go test cannot run this case: {why}"));
    }
    let steps = parsed.steps;
    let printed = Printed::default();
    let stage = |i: usize| stage_name(key, i, steps.len());
    let expected = steps
        .iter()
        .enumerate()
        .map(|(i, obj)| {
            let result = testcase::harness_result(&script.script, obj, &limits, &printed);
            show_printed(&printed.take());
            let (data, warnings) = result.map_err(|e| custom::script_failed(owner, &stage(i), reference, e))?;
            for warning in warnings {
                warn(&format!("warning: {owner}, {}, {reference}: {warning}", stage(i)));
            }
            Ok(data.apply_to(&original, None))
        })
        .collect::<Result<Vec<Value>, Error>>()?;
    // What the harness does otherwise than the controller, for this kind of subject.
    let harness = match key {
        "rollout" => {
            "the canary Service is always\n# <service>-canary and steps without traffic or matches still run the script"
        }
        _ => "the canary Service is the\n# stable one, and the strategy runs the script even without weight or matches",
    };
    let text = format!(
        "# {reference} with {} (sha256 {}).\n\
         # expected follows the controller's test harness, as `test` checks it: {harness}; `plan -f` shows what\n\
         # the controller itself would write.\n{note}{draft}expected:\n{}",
        script.source,
        script.short_hash(),
        yaml::to_string(&Value::Array(expected))
    );
    let kind_dir = Path::new(reference.script_group()).join(&reference.kind);
    Ok(Recorded {
        script_path: kind_dir.join("trafficRouting.lua"),
        testdata: kind_dir.join("testdata"),
        script: Some(script),
        file_name,
        whose: Whose::of(&subject, &original),
        text,
    })
}

/// Stage `i` of `stages` of a case whose subject is `key`, named as plan names it, for a
/// failure and for what test would warn of.
fn stage_name(key: &str, i: usize, stages: usize) -> String {
    match key {
        "rollout" => format!("step {}/{stages}", i + 1),
        _ => "TrafficRouting strategy".to_string(),
    }
}

/// One Ingress test case (the format `test` runs): the subject as applied, the stable Ingress
/// as `original`, and as `expected` the canary Ingress after each step of a release from its
/// start (`null` where there is none), as the controller converges on it.
fn ingress_case(
    key: &str,
    subject: &Value,
    stable: &Value,
    class_type: &str,
    script: ResolvedScript,
    limits: Limits,
    file_name: String,
) -> Result<Recorded, Error> {
    let draft = format!(
        "{key}:\n{}original:\n{}",
        indent(&yaml::to_string(&subject_manifest(subject))),
        indent(&yaml::to_string(&manifest(stable)))
    );
    let builtin = matches!(script.source, ScriptSource::BuiltIn { .. });
    let printed = Printed::default();
    let parsed = IngressTestCase::parse(&file_name, &draft).map_err(Error::Input)?;
    let stages = parsed.stages();
    let canaries =
        parsed.canaries(class_type, &script.script, builtin, &limits, &printed, |i| stage_name(key, i, stages));
    show_printed(&printed.take());
    let canaries = canaries?;
    let expected: Vec<Value> = canaries.iter().map(|c| c.as_deref().map_or(Value::Null, manifest)).collect();
    let text = format!(
        "# Ingress {} (classType {class_type}) with {} (sha256 {}).\n\
         # expected is the canary Ingress after each step of a release from its start, as `test` checks it.\n\
         {draft}expected:\n{}",
        stable["metadata"]["name"].as_str().unwrap_or_default(),
        script.source,
        script.short_hash(),
        yaml::to_string(&Value::Array(expected))
    );
    Ok(Recorded {
        script_path: Path::new("trafficrouting_ingress").join(format!("{class_type}.lua")),
        testdata: Path::new("trafficrouting_ingress").join("testdata").join(class_type),
        script: Some(script),
        file_name,
        whose: Whose::of(subject, stable),
        text,
    })
}

/// The Rollout's or TrafficRouting's manifest, without kubectl apply's copy of it
/// (`last-applied-configuration`): the case's own fields hold all of it that routing reads, and
/// the copy, as large again, would only go stale beside them. (A gateway object keeps it: its
/// annotations are in the script's obj and the stored original.)
fn subject_manifest(subject: &Value) -> Value {
    let mut out = manifest(subject);
    if let Some(annotations) = out["metadata"].get_mut("annotations").and_then(Value::as_object_mut) {
        annotations.remove(LAST_APPLIED);
        if annotations.is_empty() {
            out["metadata"].as_object_mut().expect("an object's metadata").remove("annotations");
        }
    }
    out
}

/// What `kubectl apply` keeps of an object as it was applied.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

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

#[cfg(test)]
mod tests {
    use super::*;

    fn case(testdata: &str, script_path: &str, file_name: &str) -> Recorded {
        Recorded {
            script: None,
            script_path: script_path.into(),
            testdata: testdata.into(),
            file_name: file_name.into(),
            whose: Whose::of(&Value::Null, &Value::Null),
            text: String::new(),
        }
    }

    #[test]
    fn a_case_is_written_under_its_folder_only_from_plain_names() {
        let good = case("example.com/Thing/testdata", "example.com/Thing/trafficRouting.lua", "demo-thing-t.yaml");
        assert_eq!(not_plain(&good), None);
        // A kind, a class or a name from a hostile server (a security audit's L3).
        let kind = case("example.com/../../x/testdata", "example.com/Thing/trafficRouting.lua", "a.yaml");
        assert_eq!(not_plain(&kind), Some(PathBuf::from("example.com/../../x/testdata")));
        let absolute = case("t", "/etc/trafficRouting.lua", "a.yaml");
        assert_eq!(not_plain(&absolute), Some(PathBuf::from("/etc/trafficRouting.lua")));
        assert_eq!(not_plain(&case("t", "s.lua", "demo-a/b.yaml")), Some(PathBuf::from("demo-a/b.yaml")));
        assert_eq!(not_plain(&case("t", "s.lua", "..")), Some(PathBuf::from("..")));
    }

    #[test]
    fn a_case_never_replaces_the_case_of_another_owner_or_object_nor_a_file_that_is_no_case() {
        let recording = |owner: &str, namespace: &str, name: &str| {
            let kind = if owner == "rollout" { "Rollout" } else { "TrafficRouting" };
            format!(
                "# Recorded\n{owner}:\n  kind: {kind}\n  metadata: {{name: {name}, namespace: {namespace}}}\noriginal:\n  kind: VirtualService\n  metadata: {{name: vs, namespace: {namespace}}}\nexpected: []\n"
            )
        };
        let whose = |text: &str| recorded_whose(text).map(|w| w.to_string());
        assert_eq!(
            whose(&recording("rollout", "shop", "demo")).as_deref(),
            Some("Rollout shop/demo's VirtualService shop/vs")
        );
        // The controller's own cases have no namespaces.
        let unnamespaced = "rollout: {kind: Rollout, metadata: {name: rollouts-demo}}\noriginal: {kind: VirtualService, metadata: {name: vs-demo}}\n";
        assert_eq!(whose(unnamespaced).as_deref(), Some("Rollout rollouts-demo's VirtualService vs-demo"));
        assert_eq!(whose("an earlier case\n"), None);
        let dir = tempfile::tempdir().unwrap();
        let at = |text: String| Recorded {
            whose: recorded_whose(&text).unwrap(),
            text,
            ..case("t", "s.lua", "demo-virtualservice-vs.yaml")
        };
        let file = dir.path().join("t/demo-virtualservice-vs.yaml");
        let clash = |cases: &[Recorded]| clashing_case(dir.path(), cases).map_err(|e| e.to_string());
        assert!(clash(&[at(recording("rollout", "shop", "demo"))]).is_ok(), "no file yet");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, recording("rollout", "shop", "demo")).unwrap();
        assert!(clash(&[at(recording("rollout", "shop", "demo"))]).is_ok(), "its own case");
        let refused = |theirs: &str, ours: &str, why: &str| {
            format!(
                "nothing was written: {} holds the case of {theirs}, not of {ours}{why}: record into another --dir",
                file.display()
            )
        };
        assert_eq!(
            clash(&[at(recording("rollout", "cart", "demo"))]),
            Err(refused(
                "Rollout shop/demo's VirtualService shop/vs",
                "Rollout cart/demo's VirtualService cart/vs",
                " (a case's file name leaves out namespaces)"
            ))
        );
        std::fs::write(&file, unnamespaced).unwrap();
        assert_eq!(
            clash(&[at(recording("rollout", "shop", "demo"))]),
            Err(refused(
                "Rollout rollouts-demo's VirtualService vs-demo",
                "Rollout shop/demo's VirtualService shop/vs",
                ""
            ))
        );
        for someones in ["garbage: [", "just: text", "an earlier case\n", ""] {
            std::fs::write(&file, someones).unwrap();
            assert_eq!(
                clash(&[at(recording("rollout", "shop", "demo"))]),
                Err(format!(
                    "nothing was written: {} is not a recorded case (no rollout or trafficRouting and original): record into another --dir, or move it",
                    file.display()
                )),
                "{someones:?}"
            );
        }
        // Two cases of one run: a Rollout and its TrafficRouting of the same name, one object.
        std::fs::remove_file(&file).unwrap();
        let both = [at(recording("rollout", "shop", "demo")), at(recording("trafficRouting", "shop", "demo"))];
        let error = clash(&both).unwrap_err();
        assert!(error.ends_with(" would hold the case of Rollout shop/demo's VirtualService shop/vs and that of TrafficRouting shop/demo's VirtualService shop/vs: record with --output-file FILE, one file for every case"), "{error}");
    }
}
