//! Commands that need no cluster: `plan -f`, `test`, `eval`, `lua-obj`.

use super::{
    Format, GlobalArgs, LuaObjArgs, LuaObjFormat, Outcome, PlanArgs, TestArgs, TestFormat, Validate, print,
    print_plans, print_raw, show_printed,
};
use crate::error::Error;
use crate::lua::{self, EvalOptions, Evaluated, Obj, Printed, Script, ScriptError, ScriptErrorKind};
use crate::model::{self, FieldMessage, OwnerKind, Rollout, Routing, TrafficRoutingCr};
use crate::output::{self, BOLD, GREEN, RED, YELLOW, paint};
use crate::plan::{self, Planner, RoutingPlan};
use crate::providers::Action;
use crate::providers::gateway::testcase::HttpRouteTestCase;
use crate::providers::ingress::{self, testcase::IngressTestCase};
use crate::scripts::{
    self, BUILTIN_INGRESS_SCRIPTS, BUILTIN_SCRIPTS, CONFIGMAP_NAME, ConfigMapPlace, ResolvedScript, ScriptCatalog,
    ScriptSource, builtin_ingress,
};
use crate::snapshot::{self, Located, Origin, Snapshot};
use crate::source::files;
use crate::source::live::rollout_name;
use crate::testcase::{CaseReport, GoTest, Outcome as StepOutcome, TestCase, data_yaml, differing_fields};
use crate::{data, gojson, yaml};
use rayon::prelude::*;
use serde_json::{Value, json};
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub fn plan(global: &GlobalArgs, args: &PlanArgs) -> anyhow::Result<Outcome> {
    let cluster_only: Vec<&str> =
        [(args.selection.selector.is_some(), "-l"), (args.next, "--next"), (args.dry_run.is_some(), "--dry-run")]
            .into_iter()
            .filter_map(|(given, flag)| given.then_some(flag))
            .collect();
    if let Some((last, rest)) = cluster_only.split_last() {
        let (flags, need) = match rest {
            [] => (last.to_string(), "needs"),
            _ => (format!("{} and {last}", rest.join(", ")), "need"),
        };
        let manifests = if args.kustomize.is_some() { "-k" } else { "-f" };
        return Err(Error::Input(format!("{flags} {need} a cluster: name Rollouts without {manifests}")).into());
    }
    let given = args.cluster.namespace();
    let namespace = given.as_deref().unwrap_or("default");
    let (manifests, input) = match &args.kustomize {
        Some(dir) => (files::kustomize(dir)?, format!("kustomize {}", dir.display())),
        None => {
            let named: Vec<&str> =
                args.files.iter().map(|file| if file == "-" { files::STDIN } else { file.as_str() }).collect();
            (files::read_manifests(&args.files, args.recursive)?, named.join(", "))
        }
    };
    if let Some(namespace) = &given {
        snapshot::check_namespace(&manifests.documents, namespace)?;
    }
    let documents = manifests.documents.len();
    let case_files: BTreeSet<String> = manifests
        .documents
        .iter()
        .filter(|(_, document)| snapshot::is_test_case(&document.value))
        .map(|(source, _)| source.clone())
        .collect();
    let (mut snapshot, skipped) = Snapshot::from_documents(manifests.documents, namespace)?;
    for line in snapshot::mistaken_objects(&skipped) {
        super::warn(&format!("warning: {line}"));
    }
    if global.verbose > 0 {
        note(&format!("read {} from {}", counted(documents, "document"), counted(manifests.files, "file")));
        for line in manifests.skipped.iter().chain(&snapshot::skipped_lines(&skipped)) {
            note(line);
        }
    }
    check_fields(&mut snapshot, args.validate)?;
    // The API server would not store these: no plan of them means anything.
    if let Some(refusal) = snapshot.rollouts.iter().find_map(|r| r.refusal()) {
        return Err(Error::Input(refusal).into());
    }
    let catalog = ScriptCatalog {
        overrides: files::read_script_flags(&args.scripts.scripts)?,
        lua_dir: args.scripts.lua_dir.as_deref().map(files::read_lua_dir).transpose()?.unwrap_or_default(),
        configmap: snapshot.configmap.clone(),
        configmap_place: ConfigMapPlace::Files { controller_namespace: args.scripts.controller_namespace.clone() },
        placeholder: args.show_obj,
    };
    let used = snapshot.script_keys();
    scripts::check_overrides(&catalog.overrides, &used).map_err(Error::Input)?;
    scripts::check_lua_dir(&catalog.lua_dir, &catalog.overrides, &used).map_err(Error::Input)?;
    super::warn_unused_configmap_keys(catalog.configmap.as_ref(), &mut Default::default());
    let new_planner = || {
        let planner = Planner::new(&snapshot.objects, &catalog, args.scripts.lua.limits());
        if args.show_obj { planner.keeping_objs() } else { planner }
    };
    let planner = new_planner();
    let wanted: Vec<&str> = args.selection.rollouts.iter().map(|r| rollout_name(r)).collect();
    if let Some(missing) = wanted.iter().find(|name| !snapshot.rollouts.iter().any(|r| r.item.name == **name)) {
        return Err(Error::Input(format!("no Rollout named {missing} in the input")).into());
    }
    let rollouts: Vec<_> =
        snapshot.rollouts.iter().filter(|r| wanted.is_empty() || wanted.contains(&r.item.name.as_str())).collect();
    let shared = snapshot.shared_objects();
    let beside = scripts_beside_cases(&case_files, &catalog, &snapshot.script_keys());
    let planned = rollouts.par_iter().map(|rollout| -> anyhow::Result<RoutingPlan> {
        let stages = match args.step {
            None => rollout.item.stages(),
            Some(n) => vec![rollout.item.step_stage(n).map_err(|e| Error::Input(format!("{}: {e}", rollout.origin)))?],
        };
        let cr = snapshot.traffic_routing_of(rollout)?;
        let planner = new_planner();
        let plan = planner.plan_rollout(&rollout.item, &rollout.namespace, cr.map(|c| &c.item), &stages);
        show_printed(&planner.printed());
        let mut plan = plan.map_err(|e| planning_failure(e, &rollout.origin, Some(rollout), cr))?;
        plan.warnings.extend(
            shared.get(&(rollout.namespace.as_str(), rollout.item.name.as_str())).into_iter().flatten().cloned(),
        );
        Ok(plan)
    });
    // One that cannot be planned hides none of the others, as against a cluster: they are shown,
    // then the failures said (exit 1).
    let (mut plans, mut failures) = (Vec::new(), Vec::new());
    for planned in planned.collect::<Vec<_>>() {
        match planned {
            Ok(plan) => plans.push(plan),
            Err(failure) => failures.push(failure),
        }
    }
    // A TrafficRouting no Rollout in the input names is planned on its own.
    if wanted.is_empty() {
        for cr in &snapshot.traffic_routings {
            let named = snapshot
                .rollouts
                .iter()
                .any(|r| r.item.traffic_routing_cr.as_ref() == Some(&cr.item.name) && r.namespace == cr.namespace);
            if !named {
                let plan = planner.plan_traffic_routing(&cr.item, &cr.namespace);
                show_printed(&planner.printed());
                match plan {
                    Ok(plan) => plans.push(plan),
                    Err(e) => failures.push(planning_failure(e, &cr.origin, None, Some(cr))),
                }
            }
        }
    }
    let failed = Error::together(failures.iter().map(|f| Error::Input(format!("{f:#}"))).collect());
    if plans.is_empty()
        && let Some(failed) = failed
    {
        notes(&beside);
        return Err(failed.into());
    }
    if plans.is_empty() {
        let mut message = format!(
            "no Rollout or TrafficRouting in {input}: read {} from {}",
            counted(documents, "document"),
            counted(manifests.files, "file")
        );
        if global.verbose == 0 && (!skipped.is_empty() || !manifests.skipped.is_empty()) {
            message.push_str("; -v lists what was skipped and why");
        }
        if manifests.subdirectories_left {
            message.push_str("; subdirectories were not read (-R reads them)");
        }
        return Err(Error::Input(message).into());
    }
    if args.show_obj {
        super::read_or_gone(print_raw(&render(&obj_document(&plans), args.output.unwrap_or(Format::Json))))?;
        for line in placeholder_notes(&plans) {
            note(&line);
        }
        return failed.map_or(Ok(Outcome::Done), |failed| Err(failed.into()));
    }
    let routings: Vec<Routing> = snapshot.routings().collect();
    plan::warn_alb_orders_between(&mut plans.iter_mut().collect::<Vec<_>>(), &snapshot.objects, &routings);
    for plan in &mut plans {
        plan.warnings.extend(configmap_elsewhere(plan, &args.scripts.controller_namespace));
    }
    super::read_or_gone(print_plans(&plans, args))?;
    notes(&beside);
    if let Some(failed) = failed {
        return Err(failed.into());
    }
    let changed = plans.iter().any(RoutingPlan::changed);
    Ok(if changed { Outcome::Changes { detailed_exitcode: args.detailed_exitcode } } else { Outcome::Done })
}

/// A failure planning the object at `planned` (a Rollout, or a TrafficRouting alone), led by
/// `planning PLACE`: for a ref naming a missing object, the ref's line in its owner's file (the
/// Rollout's, or its TrafficRouting's `cr`), else `planned`.
fn planning_failure(
    error: Error,
    planned: &Origin,
    rollout: Option<&Located<Rollout>>,
    cr: Option<&Located<TrafficRoutingCr>>,
) -> anyhow::Error {
    let routing_entry = |owner| match owner {
        OwnerKind::Rollout => rollout.and_then(|r| Some((&r.origin, r.item.traffic_routing.as_ref()?))),
        OwnerKind::TrafficRouting => cr.map(|c| (&c.origin, &c.item.traffic_routing)),
    };
    let place = match &error {
        Error::Missing { owner, field, .. } => {
            routing_entry(*owner).map(|(origin, routing)| origin.place_of(&routing.field.join(field)))
        }
        _ => None,
    };
    let place = place.unwrap_or_else(|| planned.to_string());
    anyhow::Error::new(error).context(format!("planning {place}"))
}

/// A warning when a plan runs scripts from a ConfigMap among the files that is not in the
/// controller's namespace: the controller reads only its own (`$POD_NAMESPACE`,
/// docs/controller-semantics.md §4.5), so it would find no script there and run its built-in
/// one, or none.
fn configmap_elsewhere(plan: &RoutingPlan, controller_namespace: &str) -> Option<String> {
    let namespace = plan.stages.iter().flat_map(|s| &s.objects).find_map(|o| match &o.action {
        Action::Lua(ResolvedScript { source: ScriptSource::ConfigMap { namespace, .. }, .. })
            if namespace != controller_namespace =>
        {
            Some(namespace)
        }
        _ => None,
    })?;
    Some(format!(
        "its scripts come from ConfigMap {namespace}/{CONFIGMAP_NAME}, but the controller reads that ConfigMap only from its own namespace, {controller_namespace} (--controller-namespace), so it would not find them there: it would run its built-in script where it has one (Istio's VirtualService and DestinationRule; nginx, aliyun-alb, higress and mse Ingresses), which this plan does not show, and route nothing through a kind or class without one"
    ))
}

/// A note for each script that `record --dir` kept beside the test cases read (the one that
/// made their `expected`) where the plan runs another for its kind (`used`), or none: `plan`
/// finds scripts through `--script`, `--lua-dir`, the built-in ones and the ConfigMap, never
/// beside a case, so a recorded custom script would go unnoticed. Said after the plans, or
/// before the error of one that failed.
fn scripts_beside_cases(
    case_files: &BTreeSet<String>,
    catalog: &ScriptCatalog,
    used: &BTreeSet<scripts::ScriptKey>,
) -> Vec<String> {
    let mut notes = Vec::new();
    for case in case_files {
        let Some(beside) = files::script_beside_case(Path::new(case)).filter(|b| used.contains(&b.key)) else {
            continue;
        };
        let runs = match catalog.resolve_key(&beside.key) {
            Ok(resolved) if resolved.script.code() == beside.code => continue,
            Ok(resolved) => format!("is not the script this plan runs ({})", resolved.source),
            Err(_) => "is the only script for its kind, and this plan does not run it".into(),
        };
        let line = format!(
            "note: {} beside the test cases {runs}: add --lua-dir {} to run it",
            beside.script.display(),
            beside.tree.display()
        );
        if !notes.contains(&line) {
            notes.push(line);
        }
    }
    notes
}

/// `1 file`, `2 files`.
fn counted(n: usize, thing: &str) -> String {
    if n == 1 { format!("1 {thing}") } else { format!("{n} {thing}s") }
}

/// A line on stderr for -v.
fn note(text: &str) {
    crate::stderr::line(text);
}

/// Each of `lines`, as `note` says one.
fn notes(lines: &[String]) {
    lines.iter().for_each(|line| note(line));
}

/// Unknown fields of the Rollouts and TrafficRoutings read (`--validate`): warnings in their
/// plans, or with `strict` an error listing them all.
fn check_fields(snapshot: &mut Snapshot, validate: Validate) -> Result<(), Error> {
    if validate == Validate::Ignore {
        return Ok(());
    }
    let mut found = Vec::new();
    let mut check =
        |kind: &str, raw: &Value, origin: &Origin, namespace: &str, name: &str, warnings: &mut Vec<FieldMessage>| {
            for warning in origin.unknown_fields(raw) {
                let (at, path) = (origin.place_of(&warning.field), &warning.field);
                found.push(format!("{at}: {kind} {namespace}/{name}: unknown field \"{path}\""));
                FieldMessage::push_once_per_field(warnings, warning);
            }
        };
    for r in &mut snapshot.rollouts {
        check("Rollout", &r.raw, &r.origin, &r.namespace, &r.item.name, &mut r.item.warnings);
    }
    for t in &mut snapshot.traffic_routings {
        check("TrafficRouting", &t.raw, &t.origin, &t.namespace, &t.item.name, &mut t.item.warnings);
    }
    if validate == Validate::Strict && !found.is_empty() {
        return Err(Error::Input(format!(
            "fields the CRDs do not define, which the API server would drop (--validate=strict; --validate=warn only warns):\n  {}",
            found.join("\n  ")
        )));
    }
    Ok(())
}

/// `--show-obj`: the obj of every object a script runs for, per plan and stage.
fn obj_document(plans: &[RoutingPlan]) -> Value {
    let entries: Vec<Value> = plans
        .iter()
        .flat_map(|plan| plan.stages.iter().map(move |stage| (plan, stage)))
        .flat_map(|(plan, stage)| stage.objects.iter().map(move |object| (plan, stage, object)))
        .filter_map(|(plan, stage, object)| {
            let obj = object.obj.as_deref()?;
            Some(json!({"owner": plan.owner, "step": stage.stage, "stage": stage.label, "object": stage.object_name(object), "obj": obj}))
        })
        .collect();
    Value::Array(entries)
}

/// `--show-obj`: a note per object shown with a placeholder for its missing script.
fn placeholder_notes(plans: &[RoutingPlan]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for object in plans.iter().flat_map(|p| &p.stages).flat_map(|s| &s.objects) {
        if let Action::Lua(ResolvedScript { source: ScriptSource::Placeholder { note }, .. }) = &object.action {
            let line = format!("note: {}: {note}", object.describe());
            if !notes.contains(&line) {
                notes.push(line);
            }
        }
    }
    notes
}

pub fn render(value: &Value, format: Format) -> String {
    match format {
        Format::Yaml => yaml::to_string(value),
        Format::Json => format!("{}\n", gojson::to_string_pretty(value)),
    }
}

/// A script and its test cases.
struct Suite {
    label: String,
    runner: Runner,
    cases: Vec<(String, String)>,
}

/// What runs a suite's cases.
enum Runner {
    /// A gateway object's script, with the controller's test-harness semantics.
    Lua(Script),
    /// An Ingress script, and whether it is the class's built-in one (whose quirks are then
    /// noted).
    Ingress { script: Script, class_type: String, builtin: bool },
    /// The Gateway API provider: HTTPRoute cases have no script.
    HttpRoute,
    /// Cases with no script next to them (a misnamed `trafficrouting.lua`, a class's cases
    /// without `<classType>.lua`): each fails, saying which script was looked for.
    NoScript { looked_for: String },
}

impl Suite {
    /// Runs a case; what its script prints goes to `printed`. A script that does not compile
    /// fails the case once, not each of its steps.
    fn run(
        &self,
        name: &str,
        text: &str,
        limits: &crate::lua::Limits,
        printed: &Printed,
    ) -> Result<CaseReport, String> {
        let compiles = |script: &Script| script.syntax_error().map_or(Ok(()), |e| Err(e.to_string()));
        Ok(match &self.runner {
            Runner::Lua(script) => {
                let case = TestCase::parse(name, text)?;
                compiles(script)?;
                case.run(script, limits, printed)
            }
            Runner::Ingress { script, class_type, builtin } => {
                let case = IngressTestCase::parse(name, text)?;
                compiles(script)?;
                case.run(class_type, script, *builtin, limits, printed)
            }
            Runner::HttpRoute => HttpRouteTestCase::parse(name, text)?.run(),
            Runner::NoScript { looked_for } => {
                let folder = Path::new(name).parent().unwrap_or(Path::new(name)).display();
                return Err(format!("{folder}: no script for its test cases, so none ran: looked for {looked_for}"));
            }
        })
    }

    fn script(&self) -> Option<&str> {
        match &self.runner {
            Runner::Lua(script) | Runner::Ingress { script, .. } => Some(&script.name),
            Runner::HttpRoute | Runner::NoScript { .. } => None,
        }
    }
}

pub fn test(args: &TestArgs) -> anyhow::Result<Outcome> {
    let suites: Vec<Suite> = if args.paths.is_empty() {
        let custom = BUILTIN_SCRIPTS.iter().map(|b| Suite {
            label: format!("{}/{}", b.group, b.kind),
            runner: Runner::Lua(Script::new(b.path(), b.code)),
            cases: b
                .testdata
                .iter()
                .map(|(name, text)| {
                    (format!("lua_configuration/{}/{}/testdata/{name}", b.group, b.kind), text.to_string())
                })
                .collect(),
        });
        let ingress = BUILTIN_INGRESS_SCRIPTS.iter().map(|b| Suite {
            label: format!("trafficrouting_ingress/{}", b.class_type),
            runner: Runner::Ingress {
                script: Script::new(b.path(), b.code),
                class_type: b.class_type.to_string(),
                builtin: true,
            },
            cases: b
                .testdata
                .iter()
                .map(|(name, text)| {
                    (
                        format!("lua_configuration/trafficrouting_ingress/testdata/{}/{name}", b.class_type),
                        text.to_string(),
                    )
                })
                .collect(),
        });
        custom.chain(ingress).collect()
    } else {
        let mut suites = Vec::new();
        for path in &args.paths {
            if path.is_file() && path.extension().is_none_or(|e| e != "lua") {
                return Err(not_a_script(path).into());
            }
            let scripts = files::script_dirs(path)?;
            for also in &scripts.go_test_also_runs {
                super::warn(&format!(
                    "warning: {}: the controller's go test runs this file as a script too, on the cases of the testdata folder beside it (it takes every path that contains trafficRouting.lua); test does not: rename or remove it",
                    also.display()
                ));
            }
            for dir in scripts.found {
                let name = dir.script.display().to_string();
                suites.push(Suite {
                    label: format!("{}/{}", dir.key.0, dir.key.1),
                    runner: Runner::Lua(Script::new(name, dir.code)),
                    cases: dir.testdata,
                });
            }
            for found in files::ingress_scripts(path)? {
                // A script on disk is the built-in one only if it is the same text.
                let builtin = builtin_ingress(&found.class_type).is_some_and(|b| b.code == found.code);
                suites.push(Suite {
                    label: format!("trafficrouting_ingress/{}", found.class_type),
                    runner: Runner::Ingress {
                        script: Script::new(found.script.display().to_string(), found.code),
                        class_type: found.class_type,
                        builtin,
                    },
                    cases: found.testdata,
                });
            }
            let cases = files::http_route_cases(path)?;
            if !cases.is_empty() {
                suites.push(Suite {
                    label: "gateway.networking.k8s.io/HTTPRoute".into(),
                    runner: Runner::HttpRoute,
                    cases,
                });
            }
            for unscripted in files::unscripted_cases(path)? {
                suites.push(Suite {
                    label: unscripted.label,
                    runner: Runner::NoScript { looked_for: unscripted.looked_for },
                    cases: unscripted.cases,
                });
            }
        }
        // A case reached twice (a PATH given twice, a folder and a script in it) runs once,
        // where it came first.
        let mut seen = BTreeSet::new();
        for suite in &mut suites {
            suite.cases.retain(|(name, _)| seen.insert(std::fs::canonicalize(name).unwrap_or_else(|_| name.into())));
        }
        suites
    };
    let limits = args.lua.limits();
    let mut reports: Vec<(&Suite, CaseReport)> = Vec::new();
    for suite in &suites {
        for (name, text) in &suite.cases {
            let printed = Printed::default();
            let report = suite.run(name, text, &limits, &printed);
            show_printed(&printed.take());
            reports.push((suite, report.unwrap_or_else(|e| CaseReport::failed(name, e))));
        }
    }
    if reports.is_empty() {
        let searched: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
        // A testdata folder itself (or an Ingress class's in it): its script is above it.
        let testdata = args
            .paths
            .iter()
            .find_map(|p| p.ancestors().take(2).find(|a| a.file_name().is_some_and(|n| n == "testdata"))?.parent());
        let hint = testdata
            .map(|above| {
                format!(
                    "; a testdata folder's cases run with the script above it: `kubectl rollout-lua test {}`",
                    above.display()
                )
            })
            .or_else(|| {
                // A script file: its cases are in the testdata folder beside it.
                let script = args.paths.iter().find(|p| p.is_file())?;
                let beside = script.parent().unwrap_or(Path::new(".")).join("testdata");
                Some(format!("; a script's cases are read from {}, which has none", beside.display()))
            })
            .unwrap_or_default();
        return Err(Error::Input(format!(
            "no test cases (<group>/<Kind>/trafficRouting.lua with testdata/*.yaml, trafficrouting_ingress/<classType>.lua with testdata/<classType>/*.yaml, or gateway.networking.k8s.io/HTTPRoute/testdata/*.yaml) under {}{hint}",
            searched.join(", ")
        ))
        .into());
    }
    let passed = reports.iter().filter(|(_, r)| r.passed()).count();
    let failed = reports.len() - passed;
    match args.output {
        Some(TestFormat::Json) => print_raw(&render(&test_document(&reports, passed, failed), Format::Json))?,
        None => print(&test_text(&reports, passed, failed))?,
    }
    Ok(if failed > 0 { Outcome::Failed } else { Outcome::Done })
}

/// Why `test` refuses a PATH file that is not a script (`….lua`), which it would run as Lua: a
/// file of test cases (what `record` writes to stdout or `--output-file`) is told how to run them.
fn not_a_script(path: &Path) -> Error {
    let shown = path.display().to_string();
    let takes = "test takes a script (.lua) or a folder of scripts with their testdata/";
    let cases = files::read_text(path, files::TEST_CASE)
        .ok()
        .and_then(|text| yaml::parse_documents(&text, &shown).ok())
        .is_some_and(|documents| documents.iter().any(|d| snapshot::is_test_case(&d.value)));
    Error::Input(match (cases, files::script_beside_case(path)) {
        (true, Some(beside)) => format!(
            "{shown}: test cases, not a script: {takes}; `kubectl rollout-lua test {}` runs the cases beside that script, these among them",
            beside.script.display()
        ),
        (true, None) => format!(
            "{shown}: test cases, not a script: {takes}; record with --dir DIR and run test DIR (plan -f {shown} plans these cases)"
        ),
        (false, _) => format!("{shown}: not a Lua script: {takes}"),
    })
}

/// A case as `test` names it: its path below its testdata folder (below its class's folder for
/// an Ingress case), which is its file name unless it is in a subfolder there.
fn case_name(case: &str) -> String {
    let components: Vec<_> = Path::new(case).components().collect();
    let last = components.len().saturating_sub(1);
    let testdata = components.iter().rposition(|c| c.as_os_str() == "testdata");
    let ingress = |at: usize| at > 0 && components[at - 1].as_os_str() == files::INGRESS_DIR;
    let below = testdata.map_or(last, |at| at + 1 + usize::from(ingress(at)));
    let name: PathBuf = components[below.min(last)..].iter().collect();
    name.display().to_string()
}

fn test_text(reports: &[(&Suite, CaseReport)], passed: usize, failed: usize) -> String {
    let mut out = String::new();
    for (suite, report) in reports {
        let file = case_name(&report.case);
        let status = if report.passed() { paint(GREEN, "ok  ") } else { paint(RED, "FAIL") };
        let steps = match (&report.error, report.steps.len()) {
            (Some(_), _) => String::new(),
            (None, 1) => " (1 step)".to_string(),
            (None, n) => format!(" ({n} steps)"),
        };
        out.push_str(&format!("{status} {} {file}{steps}\n", suite.label));
        if let Some(error) = &report.error {
            out.push_str(&format!("  {}\n", paint(RED, error)));
        }
        for warning in &report.warnings {
            out.push_str(&format!("  {}\n", paint(YELLOW, &format!("warning: {warning}"))));
        }
        match &report.go_test {
            GoTest::Same => {}
            GoTest::Differs(note) => out.push_str(&format!("  {}\n", paint(YELLOW, &format!("go test: {note}")))),
            GoTest::CannotRun(why) => {
                out.push_str(&format!("  {}\n", paint(YELLOW, &format!("go test cannot run this case: {why}"))))
            }
        }
        // A note of several steps (one about the script's text is of every step) is said once.
        let mut notes: Vec<(&String, Vec<String>)> = Vec::new();
        for step in &report.steps {
            let at = format!("{} step {}", report.case, step.step());
            match &step.outcome {
                StepOutcome::Pass => {}
                StepOutcome::Error(message) => {
                    out.push_str(&format!("  {}\n", paint(RED, &format!("step {}: {message}", step.step()))))
                }
                StepOutcome::Fail { want, got } => {
                    out.push_str(&format!(
                        "  {}\n",
                        paint(RED, &format!("step {0}: the result differs from expected (its entry {0})", step.step()))
                    ));
                    for field in differing_fields(want, got) {
                        out.push_str(&format!("    {field}\n"));
                    }
                    let (want, got) = (data_yaml(want), data_yaml(got));
                    out.push_str(&output::unified_diff(&want, &got, &format!("{at} expected"), &format!("{at} got")));
                }
            }
            for note in &step.notes {
                match notes.iter_mut().find(|(said, _)| *said == note) {
                    Some((_, steps)) => steps.push(step.step().to_string()),
                    None => notes.push((note, vec![step.step().to_string()])),
                }
            }
        }
        for (note, steps) in notes {
            let steps = model::steps_named(&steps);
            out.push_str(&format!("  {}\n", paint(YELLOW, &format!("warning: {steps}: {note}"))));
        }
    }
    out.push_str(&paint(BOLD, &format!("{passed} passed, {failed} failed")));
    out.push('\n');
    out
}

fn test_document(reports: &[(&Suite, CaseReport)], passed: usize, failed: usize) -> Value {
    let cases: Vec<Value> = reports
        .iter()
        .map(|(suite, report)| {
            let steps: Vec<Value> = report
                .steps
                .iter()
                .map(|step| {
                    let mut entry = match &step.outcome {
                        StepOutcome::Pass => json!({"status": "pass"}),
                        StepOutcome::Fail { want, got } => {
                            json!({"status": "fail", "expected": want.to_value(), "got": got.to_value(),
                                   "differences": differing_fields(want, got)})
                        }
                        StepOutcome::Error(message) => json!({"status": "error", "message": message}),
                    };
                    entry["step"] = json!(step.step());
                    entry["warnings"] = json!(step.notes);
                    entry
                })
                .collect();
            let go_test = match &report.go_test {
                GoTest::Same => json!({"runs": true, "note": null}),
                GoTest::Differs(note) => json!({"runs": true, "note": note}),
                GoTest::CannotRun(why) => json!({"runs": false, "note": why}),
            };
            json!({"script": suite.script(), "case": report.case, "passed": report.passed(), "error": report.error,
                   "warnings": report.warnings, "goTest": go_test, "steps": steps})
        })
        .collect();
    json!({"cases": cases, "passed": passed, "failed": failed})
}

pub fn eval(args: &super::EvalArgs) -> anyhow::Result<Outcome> {
    if args.script == Path::new("-") && args.obj == Path::new("-") {
        return Err(Error::Input(format!("eval - --obj -: {}", files::STDIN_TWICE)).into());
    }
    let script = Script::new(args.script.display().to_string(), files::read_text(&args.script, files::SCRIPT)?);
    let source = if args.obj == Path::new("-") { files::STDIN.to_string() } else { args.obj.display().to_string() };
    // What is wrong with the obj names the flag, as the script's errors name the script.
    let obj_error = |e: String| Error::Input(format!("--obj {e}"));
    let text = files::read_text(&args.obj, files::OBJECT).map_err(|e| obj_error(e.to_string()))?;
    let (limits, printed) = (args.lua.limits(), Printed::default());
    let evaluate = |obj| data::evaluate_to_go_json(&script, obj, &limits, EvalOptions::CONTROLLER, &printed);
    // A script of one's own is checked for an output that depends on pairs() order, as plan and
    // test check it (the built-in ones are, by their test cases): that needs the obj as a value.
    let check_order = !args.ingress && !scripts::is_builtin_code(script.code());
    let mut kept_obj = None;
    // A JSON obj goes into Lua as it is read. Entries, Kubernetes objects and test cases (told
    // apart by `the_obj`), and whatever the reader names as wrong, are read as values first.
    let refused = &["step", "kind", "original"];
    let as_text = (!args.ingress).then(|| evaluate(Obj::JsonText { text: &text, refused }));
    let result = match as_text.flatten() {
        Some(result) => result,
        None => {
            let documents = yaml::parse_documents(&text, &source).map_err(obj_error)?;
            // Every number reaches Lua as a double: the obj is used as read, and handed over.
            let obj = the_obj(documents, &source).map_err(obj_error)?;
            match args.ingress {
                true => ingress::evaluate(&script, &obj, &limits, &printed)
                    .map(|evaluated| evaluated.map(|a| ingress::annotations_json(&a))),
                false => {
                    kept_obj = check_order.then(|| obj.clone());
                    evaluate(Obj::Value(Cow::Owned(obj))).expect("a value is always read")
                }
            }
        }
    };
    // An obj beyond the limits is the obj file's fault: say which.
    let failed = |e: ScriptError| match e.kind {
        ScriptErrorKind::Input => obj_error(format!("{source}: {e}")),
        _ => Error::from(e),
    };
    show_printed(&printed.take());
    let Evaluated { output, work } = result.map_err(failed)?;
    print_raw(&output)?;
    print_raw("\n")?;
    let mut warnings = lua::controller_warnings(&script, work);
    if check_order {
        // Read as it went into Lua: a JSON obj that went in as text is valid JSON.
        let obj = kept_obj.map_or_else(|| serde_json::from_str(&text).ok(), Some);
        let read = |output| crate::data::Data::from_decoded(output).map(|data| data.to_go_json());
        let order =
            obj.and_then(|obj| lua::order_dependence(&script, &obj, &limits, EvalOptions::CONTROLLER, &output, read));
        warnings.extend(order.map(|order| order.warning().to_string()));
    }
    for warning in warnings {
        super::warn(&format!("warning: script {}: {warning}", script.name));
    }
    Ok(Outcome::Done)
}

/// The obj in `eval --obj`'s input: its one document, or the obj of `plan --show-obj` (or
/// `lua-obj -o json|yaml`) output with one entry. A manifest or a test case given instead would
/// make the script fail as if it were wrong (`attempt to index local 'data'`): that is said
/// instead.
fn the_obj(documents: Vec<yaml::Document>, source: &str) -> Result<Value, String> {
    // Its entries: JSON's array is read as documents, a YAML list as one.
    let is_entry = |entry: &Value| entry.get("step").is_some() && entry.get("obj").is_some();
    let entries = documents
        .iter()
        .flat_map(|d| d.value.as_array().map_or(std::slice::from_ref(&d.value), Vec::as_slice))
        .filter(|entry| is_entry(entry))
        .count();
    match entries {
        0 => {}
        1 => {
            let all = documents.into_iter().flat_map(|d| match d.value {
                Value::Array(items) => items,
                other => vec![other],
            });
            let mut entry = all.into_iter().find(is_entry).expect("counted");
            return Ok(entry["obj"].take());
        }
        _ => {
            return Err(format!(
                "{source} holds the objs of {entries} steps or objects: pass one entry's obj (`| jq '.[0].obj'`), or plan one step (--step N) of one Rollout"
            ));
        }
    }
    let found = documents.len();
    let Ok([document]) = <[_; 1]>::try_from(documents) else {
        return Err(format!(
            "{source}: expected one obj, a map, but it holds {found} documents (each item of a JSON list, or each YAML document between --- lines, is one)"
        ));
    };
    let value = document.value;
    if !value.is_object() {
        return Err(format!(
            "{source}: expected one obj, a map, but it holds {}: a script gets {{data: {{spec, labels, annotations}}, stableService, canaryService, stableWeight, canaryWeight, matches, …}}",
            crate::model::json_kind(&value)
        ));
    }
    if let (Some(kind), Some(name)) = (value["kind"].as_str(), value["metadata"]["name"].as_str()) {
        return Err(format!(
            "{source} is a Kubernetes object ({kind} {name}), not an obj: a script gets {{data: {{spec, labels, \
             annotations}}, stableService, canaryService, stableWeight, canaryWeight, matches, …}}; print the obj of \
             every step with `kubectl rollout-lua plan -f MANIFESTS --show-obj` (a test case is a manifest too) and \
             pass one entry's obj (`| jq '.[0].obj'`)"
        ));
    }
    if snapshot::is_test_case(&value) {
        return Err(format!(
            "{source} is a test case, not an obj: print the obj of each of its steps with `kubectl rollout-lua lua-obj \
             {source} -o json` (a custom ref's case) or `kubectl rollout-lua plan -f {source} --show-obj`, and pass one \
             entry's obj (`| jq '.[0].obj'`)"
        ));
    }
    Ok(value)
}

pub fn lua_obj(args: &LuaObjArgs) -> anyhow::Result<Outcome> {
    let name = args.case.display().to_string();
    let case = TestCase::parse(&name, &files::read_text(&args.case, files::TEST_CASE)?).map_err(Error::Input)?;
    // The objs are the harness's: where the controller's differ, or go test cannot run the
    // case, that is said as `test` says it.
    for warning in &case.warnings {
        crate::stderr::line(&format!("warning: {warning}"));
    }
    match &case.go_test {
        GoTest::Same => {}
        GoTest::Differs(note) => crate::stderr::line(&format!(
            "note: these are the objs of the controller's test harness (go test, and `test`), where the controller's own differ: {note}; `kubectl rollout-lua plan -f {name} --show-obj` prints the controller's"
        )),
        GoTest::CannotRun(why) => crate::stderr::line(&format!("note: go test cannot run this case: {why}")),
    }
    let text = match args.output {
        LuaObjFormat::Lua => case.lua_objects(),
        LuaObjFormat::Json | LuaObjFormat::Yaml => {
            let entries =
                case.steps.iter().enumerate().map(|(i, obj)| json!({"case": name, "step": i + 1, "obj": obj}));
            let format = if args.output == LuaObjFormat::Json { Format::Json } else { Format::Yaml };
            render(&Value::Array(entries.collect()), format)
        }
    };
    match &args.output_file {
        // The same file, however named: writing would replace the case with its objs.
        Some(path) if std::fs::canonicalize(path).ok() == std::fs::canonicalize(&args.case).ok() => {
            return Err(Error::Input(format!(
                "--output-file {} is the test case read: it would be replaced by the objs; write them elsewhere",
                path.display()
            ))
            .into());
        }
        Some(path) => files::write_output(path, &text)?,
        None => print_raw(&text)?,
    }
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_is_named_by_its_path_below_its_testdata_folder() {
        assert_eq!(case_name("lua/example.com/Thing/testdata/a.yaml"), "a.yaml");
        assert_eq!(case_name("lua/example.com/Thing/testdata/sub/deeper/a.yaml"), "sub/deeper/a.yaml");
        assert_eq!(case_name("lua/trafficrouting_ingress/testdata/nginx/a.yaml"), "a.yaml");
        assert_eq!(case_name("lua/trafficrouting_ingress/testdata/nginx/sub/a.yaml"), "sub/a.yaml");
        assert_eq!(case_name("/tmp/testdata/lua/example.com/Thing/testdata/a.yaml"), "a.yaml");
        assert_eq!(case_name("a.yaml"), "a.yaml");
    }

    fn obj_of(text: &str) -> Result<Value, String> {
        the_obj(yaml::parse_documents(text, "in.yaml").unwrap(), "in.yaml").map_err(|e| e.to_string())
    }

    #[test]
    fn the_obj_is_a_map_or_the_one_entry_of_show_obj_and_nothing_else() {
        let obj = json!({"data": {"spec": {}}, "canaryWeight": 20});
        assert_eq!(obj_of(&obj.to_string()), Ok(obj.clone()));
        // `plan --show-obj -o json` or `lua-obj -o json` with one entry, as a JSON list or YAML.
        let entry = json!([{"owner": "Rollout shop/demo", "step": 1, "obj": obj}]);
        assert_eq!(obj_of(&entry.to_string()), Ok(obj.clone()));
        assert_eq!(obj_of(&format!("- step: 1\n  obj: {obj}\n")), Ok(obj.clone()));
        let two = json!([{"step": 1, "obj": obj}, {"step": 2, "obj": obj}]);
        let err = obj_of(&two.to_string()).unwrap_err();
        assert!(err.starts_with("in.yaml holds the objs of 2 steps or objects: pass one entry's obj"), "{err}");
        for (scalar, kind) in [("\"str\"", "a string"), ("7", "a number"), ("true", "a boolean")] {
            let err = obj_of(scalar).unwrap_err();
            assert!(err.starts_with(&format!("in.yaml: expected one obj, a map, but it holds {kind}: ")), "{err}");
        }
        let err = obj_of("a: 1\n---\nb: 2\n").unwrap_err();
        assert!(err.starts_with("in.yaml: expected one obj, a map, but it holds 2 documents"), "{err}");
        let err = obj_of("kind: VirtualService\nmetadata:\n  name: vs\n").unwrap_err();
        assert!(err.starts_with("in.yaml is a Kubernetes object (VirtualService vs), not an obj"), "{err}");
        let err = obj_of("rollout: {spec: {}}\noriginal: {spec: {}}\n").unwrap_err();
        assert!(err.starts_with("in.yaml is a test case, not an obj"), "{err}");
    }

    #[test]
    fn counts_say_one_without_a_plural() {
        assert_eq!(counted(1, "file"), "1 file");
        assert_eq!((counted(0, "file"), counted(2, "file")), ("0 files".into(), "2 files".into()));
    }
}
