//! Script test cases in the controller's format (`rollout` or `trafficRouting`, `original`,
//! `expected` per step), run with the controller's test-harness semantics
//! (`TestLuaScript` in `pkg/trafficrouting/network/customNetworkProvider/custom_network_provider_test.go`,
//! docs/controller-semantics.md §6.2), and each step's `obj` as Lua for debugging (`lua-obj`).

use crate::data::{self, Data};
use crate::lua::{self, EvalOptions, Evaluated, Limits, OrderDependence, Printed, Script, ScriptErrorKind};
use crate::model::{
    self, FieldMessage, Path, Rollout, RouteStrategy, Segment, Semantics, StrategyKind, TrafficRoutingCr,
    TrafficRoutingRef,
};
use crate::snapshot::Origin;
use crate::yaml::Document;
use crate::{gojson, schema, yaml};
use serde_json::Value;
use std::borrow::Cow;

/// A parsed test case.
#[derive(Clone, Debug)]
pub struct TestCase {
    pub name: String,
    /// One `obj` per step, built as the harness builds them.
    pub steps: Vec<Value>,
    /// One result per step, read as the harness reads them.
    pub expected: Vec<Data>,
    /// `rollout` or `trafficRouting`.
    pub subject: &'static str,
    pub go_test: GoTest,
    /// What is wrong with the case without failing it, each led by its line: keys and fields
    /// no one reads (misspelt?), `expected` entries beyond its steps.
    pub warnings: Vec<String>,
}

/// The keys of a case the controller's harness reads (its `TestCase` type).
pub const CASE_KEYS: [&str; 4] = ["rollout", "trafficRouting", "original", "expected"];

/// The keys of a case (`document`) that are not among `known`, each said with its line and the
/// known key it is nearest to: a misspelt key often explains why a case fails.
pub fn unknown_case_keys(origin: &Origin, document: &Document, known: &[&str]) -> Vec<String> {
    let (subjects, others): (Vec<&str>, Vec<&str>) =
        known.iter().partition(|key| ["rollout", "trafficRouting"].contains(key));
    let has = match others.split_last() {
        Some((last, [])) => format!("{}, {last}", subjects.join(" or ")),
        Some((last, rest)) => format!("{}, {} and {last}", subjects.join(" or "), rest.join(", ")),
        None => subjects.join(" or "),
    };
    let known: Vec<String> = known.iter().map(|k| k.to_string()).collect();
    let keys = document.value.as_object().into_iter().flat_map(|map| map.keys());
    keys.filter(|key| !known.contains(key))
        .map(|key| {
            let guess = schema::closest(key, &known).map(|k| format!(" (did you mean {k}?)")).unwrap_or_default();
            format!("{}: unknown key \"{key}\": a case has {has}{guess}", origin.place_of(&Path::default().field(key)))
        })
        .collect()
}

/// `error`, with the case's unknown keys, which may explain it.
pub fn with_unknown_keys(error: String, unknown_keys: &[String]) -> String {
    match unknown_keys {
        [] => error,
        keys => format!("{error} ({})", keys.join("; ")),
    }
}

/// Where a case's `key` (its `rollout` or `trafficRouting`) is in its file, for its fields' lines.
pub fn subject_origin(origin: &Origin, document: &Document, key: &str) -> Origin {
    Origin::File { place: origin.to_string(), text: document.text.as_ref().map(|text| Box::new(text.inside(key))) }
}

/// The API server's rules a case's Rollout breaks in its steps (its CRD schema's, the
/// controller's webhook's), each a warning with its line: the controller never gets such a
/// Rollout, but the case runs all the same, as go test runs it. Only what the routing reads:
/// not a step's `replicas`, nor the routing's providers (a case's folder names its script), which
/// the controller's own cases leave out.
pub fn refused_rules(origin: &Origin, rollout: &Rollout) -> Vec<String> {
    let rejections = &rollout.rejections;
    let by_who = [(&rejections.schema, "the CRD's schema"), (&rejections.webhook, "the controller's webhook")];
    let key = |segment: &Segment, name: &str| matches!(segment, Segment::Key(k) if k == name);
    let of_steps = |m: &&FieldMessage| {
        m.field.segments().iter().any(|s| key(s, "steps"))
            && !m.field.segments().last().is_some_and(|s| key(s, "replicas"))
    };
    let refused =
        by_who.into_iter().flat_map(|(messages, who)| messages.iter().filter(of_steps).map(move |m| (m, who)));
    refusal_warnings(origin, "Rollout", refused)
}

/// A warning for each rule of the API server (`who`'s) that a case's `kind` breaks.
fn refusal_warnings<'a>(
    origin: &Origin,
    kind: &str,
    refused: impl Iterator<Item = (&'a FieldMessage, &'a str)>,
) -> Vec<String> {
    refused
        .map(|(m, who)| {
            format!(
                "{}: {}: the API server refuses such a {kind} ({who}), so the controller never runs it; the case runs all the same",
                origin.place_of(&m.field),
                m.text
            )
        })
        .collect()
}

/// How the controller's own `go test` treats a case, where that is not plain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GoTest {
    /// It runs the case as `test` does (no difference known).
    Same,
    /// It runs the case, but not as the controller does or not as `test` does, as said.
    Differs(String),
    /// It cannot run the case; `test` runs it as the controller would.
    CannotRun(String),
}

impl GoTest {
    /// With one more difference, found by running the case (nothing to add where go test cannot
    /// run it).
    fn and(self, note: String) -> GoTest {
        match self {
            GoTest::Same => GoTest::Differs(note),
            GoTest::Differs(first) => GoTest::Differs(format!("{first}; {note}")),
            cannot @ GoTest::CannotRun(_) => cannot,
        }
    }
}

/// A case file's document (every kind of test case: scripts', Ingress classes', HTTPRoutes'),
/// with its text, where messages find a field's line; and a warning when more documents follow
/// it: the controller's `go test` reads the first alone (sigs.k8s.io/yaml), and so does `test`.
pub fn case_document(name: &str, text: &str) -> Result<(Document, Option<String>), String> {
    let one = || format!("{name}: expected one YAML document with rollout or trafficRouting, original and expected");
    let mut documents = yaml::parse_documents_keeping(text, name, |_| true)?.into_iter();
    // A list's items (a JSON array, a `kind: List`) are no case: go test cannot read one.
    let mut first = documents.next().filter(|first| first.within == Path::default()).ok_or_else(one)?;
    let value = &first.value;
    if let (Some(kind), Some(object), None) =
        (value["kind"].as_str(), value["metadata"]["name"].as_str(), value.get("original"))
    {
        return Err(format!(
            "{name} is a Kubernetes object ({kind} {object}), not a test case: a case has rollout or trafficRouting, original and expected; `kubectl rollout-lua plan -f {name} --show-obj` prints the objs a manifest's Rollout gives its scripts"
        ));
    }
    // As go test reads it: a `weight: 25.0` is 25.
    crate::gojson::as_go_reads_yaml(&mut first.value);
    let more = documents.next().map(|second| {
        format!(
            "{name}:{}: a second YAML document, not run: a case file holds one case, the first, as the controller's go test reads it; put each case in a file of its own",
            second.line
        )
    });
    Ok((first, more))
}

/// The case's `expected`: one entry per stage (none when absent).
pub fn expected(origin: &Origin, case: &Value, what: &str) -> Result<Vec<Value>, String> {
    match case.get("expected") {
        Some(Value::Array(items)) => Ok(items.clone()),
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(_) => Err(format!(
            "{}: expected must be a list of {what}, one per step",
            origin.place_of(&Path::root("expected"))
        )),
    }
}

/// A case's `original`, which must be an object; the error names its line (`what` says what it
/// is).
pub fn original<'a>(origin: &Origin, case: &'a Value, what: &str) -> Result<&'a Value, String> {
    case.get("original")
        .filter(|o| o.is_object())
        .ok_or_else(|| format!("{}: no original {what}", origin.place_of(&Path::root("original"))))
}

impl TestCase {
    /// Reads a case. A case that cannot be read is an error naming the file (and the line, where
    /// a field is at fault), with the keys no one reads, which a misspelt key often explains.
    pub fn parse(name: &str, text: &str) -> Result<TestCase, String> {
        let (document, more) = case_document(name, text)?;
        let origin = Origin::of(name, &document);
        // Its field names in any case, as go test reads them.
        let (value, schema::ReadOtherwise { folded, as_text }) = schema::as_go_test_decodes(&document.value);
        let read_as = folded.iter().map(|key| {
            // The case's own keys are no object's fields.
            let applied = match key.path.segments().len() {
                1 => "",
                _ => "; the API server matches names exactly, and drops it from an object applied so",
            };
            format!(
                "{}: {}: read as {}, as go test reads it (Go's JSON decoding matches a field's name in any case){applied}",
                origin.place_of(&key.path),
                key.path,
                key.field
            )
        });
        // A number or boolean for a string: the API server would refuse it in a Rollout.
        let as_text = as_text.iter().map(|read| {
            format!(
                "{}: {}: {} read as \"{}\", as go test reads it (sigs.k8s.io/yaml gives a string field a number's or boolean's text); the API server refuses it unquoted in an object applied so",
                origin.place_of(&read.path),
                read.path,
                read.written,
                read.text
            )
        });
        let read_as: Vec<String> = read_as.chain(as_text).collect();
        // Where the text has the case's subject: under its name as written.
        let written = |key: &str| match folded.iter().find(|k| k.field == key && k.path.segments().len() == 1) {
            Some(k) if document.value.get(key).is_none() => k.path.to_string(),
            _ => key.to_string(),
        };
        let document = Document { value, ..document };
        let unknown_keys = unknown_case_keys(&origin, &document, &CASE_KEYS);
        let mut case = TestCase::read(name, &document, &origin, &written).map_err(|e| match e {
            // Such a case has keys of its own (an Ingress case's `canary`).
            ReadError::OtherProvider(e) => e,
            ReadError::Invalid(e) => with_unknown_keys(e, &unknown_keys),
        })?;
        case.warnings.splice(0..0, more.into_iter().chain(read_as).chain(unknown_keys));
        Ok(case)
    }

    /// Reads the case `document` (as go test decodes it), whose `rollout` or `trafficRouting` the
    /// text has under the key `written` gives.
    fn read(
        name: &str,
        document: &Document,
        origin: &Origin,
        written: &dyn Fn(&str) -> String,
    ) -> Result<TestCase, ReadError> {
        let case = &document.value;
        let original = original(origin, case, "object")?;
        let mut go_test = GoTest::Same;
        // The subject as plan -f reads it: its own place in the file, for its fields' lines.
        let subject_origin = |key: &str| subject_origin(origin, document, &written(key));
        let mut warnings = Vec::new();
        // Why the harness cannot read the first object it cannot: it reads each as an
        // unstructured object, a map whose decoder refuses one whose kind is not a non-empty
        // string.
        let mut unreadable = None;
        // Each object read once, as the harness reads it, its lost maps warned of.
        let mut read = |at: Path, object: &Value| {
            if unreadable.is_none() && !object.is_object() {
                unreadable = Some(format!(
                    "{at} is not an object (a map), and the harness reads each object as unstructured, which cannot decode it; this tool compares it as an empty result"
                ));
            } else if unreadable.is_none() && object["kind"].as_str().is_none_or(str::is_empty) {
                unreadable = Some(format!(
                    "{at} has no kind, and the harness reads each object as unstructured, which refuses one without (\"Object 'Kind' is missing\"); this tool compares spec, labels and annotations all the same; give the object its apiVersion and kind"
                ));
            }
            let (data, lost) = Data::as_the_harness_reads_it(object);
            for map in lost {
                warnings.push(format!(
                    "{}: {at}.metadata.{map} has a value that is not a string: the controller's harness then reads no {map} at all (unstructured's Get{}), and so does this tool; quote the value",
                    origin.place_of(&at.field("metadata").field(map)),
                    if map == "labels" { "Labels" } else { "Annotations" }
                ));
            }
            data
        };
        let data = read(Path::default().field("original"), original);
        let expected: Vec<Data> = expected(origin, case, "objects")?
            .iter()
            .enumerate()
            .map(|(i, entry)| read(Path::default().field("expected").index(i), entry))
            .collect();
        let (subject, steps) = if let Some(raw) = case.get("rollout").filter(|r| !r.is_null()) {
            let origin = subject_origin("rollout");
            let (raw, typed) = as_go_test_types(&origin, "rollout", raw, &["v1alpha1", "v1beta1"], "Rollout");
            let raw = raw.as_ref();
            warnings.extend(typed);
            warnings.extend(origin.unknown_fields(raw).into_iter().map(|w| w.text));
            let (rollout, read_as) = harness_rollout(raw).map_err(|e| origin.invalid("rollout", &e, raw))?;
            warnings.extend(refused_rules(&origin, &rollout));
            if let Some(read_as) = read_as {
                go_test = GoTest::Differs(read_as);
            }
            if rollout.kind == StrategyKind::BlueGreen {
                go_test = GoTest::CannotRun(
                    "it reads spec.strategy.canary only and fails on a blue-green rollout; this tool runs the blue-green steps by the harness's other rules".into(),
                );
            }
            let routing =
                rollout.traffic_routing.as_ref().ok_or_else(|| format!("{name}: rollout has no trafficRoutings"))?;
            refuse_other_providers(name, routing).map_err(ReadError::OtherProvider)?;
            let service = &routing.service;
            // The harness always names the canary Service `<stable>-canary` and runs every step.
            let canary = format!("{service}-canary");
            // Where the controller's own reading of the Rollout (converted from v1alpha1) gives the
            // script another canary Service. (That it runs no script at a step without traffic
            // and matches is said by the guide: such a last step is the rule, not a surprise.)
            let controller = Rollout::read(raw, Semantics::Controller).ok();
            if controller.is_some_and(|c| c.disable_generate_canary_service) {
                go_test = go_test.and(format!(
                    "it gives the script canaryService {canary}, where the controller gives {service} (disableGenerateCanaryService)"
                ));
            }
            let steps =
                rollout.steps.iter().map(|s| model::lua_data(data.clone(), &s.strategy, service, &canary)).collect();
            ("rollout", steps)
        } else if let Some(raw) = case.get("trafficRouting").filter(|t| !t.is_null()) {
            let origin = subject_origin("trafficRouting");
            let (raw, typed) = as_go_test_types(&origin, "trafficRouting", raw, &["v1alpha1"], "TrafficRouting");
            let raw = raw.as_ref();
            warnings.extend(typed);
            warnings.extend(origin.unknown_fields(raw).into_iter().map(|w| w.text));
            let cr = TrafficRoutingCr::read(raw, Semantics::Harness)
                .map_err(|e| origin.invalid("trafficRouting", &e, raw))?;
            warnings.extend(refusal_warnings(
                &origin,
                "TrafficRouting",
                cr.rejections.iter().map(|m| (m, "the CRD's schema")),
            ));
            refuse_other_providers(name, &cr.traffic_routing).map_err(ReadError::OtherProvider)?;
            let service = &cr.traffic_routing.service;
            // The harness passes an empty, non-nil matches list when the CR has none.
            if cr.strategy.matches.is_none() {
                go_test = go_test.and(
                    "it gives the script matches = {} (an empty table, true to an `if`), where the controller gives none (nil)".into(),
                );
            }
            let strategy =
                RouteStrategy { matches: Some(cr.strategy.matches.clone().unwrap_or_default()), ..cr.strategy.clone() };
            ("trafficRouting", vec![model::lua_data(data, &strategy, service, service)])
        } else {
            return Err(format!("{name}: neither rollout nor trafficRouting").into());
        };
        if let Some(why) = unreadable {
            go_test = GoTest::CannotRun(why);
        }
        if expected.len() > steps.len() {
            let first_extra = Path::default().field("expected").index(steps.len());
            warnings.push(format!(
                "{}: {}: the entries past it are compared with nothing (go test ignores them too); a step removed?",
                origin.place_of(&first_extra),
                entries_for_steps(expected.len(), steps.len()),
            ));
        }
        Ok(TestCase { name: name.into(), steps, expected, subject, go_test, warnings })
    }

    /// Runs every step and compares spec, labels and annotations with `expected`.
    /// What the script prints goes to `printed`.
    pub fn run(&self, script: &Script, limits: &Limits, printed: &Printed) -> CaseReport {
        let mut steps = Vec::new();
        let mut passed_by_go_test = Vec::new();
        for (i, obj) in self.steps.iter().enumerate() {
            let (step, go_test_passes) = self.run_step(script, limits, printed, i, obj);
            if go_test_passes {
                passed_by_go_test.push(step.step().to_string());
            }
            steps.push(step);
        }
        let mut go_test = self.go_test.clone();
        if !passed_by_go_test.is_empty() {
            go_test = go_test.and(format!(
                "it passes {} {}, where the script returns no table: its harness reads that as an empty result (no spec, labels or annotations), which is what expected has; the controller fails such a step, and so does this tool",
                if passed_by_go_test.len() == 1 { "step" } else { "steps" },
                passed_by_go_test.join(", ")
            ));
        }
        CaseReport { case: self.name.clone(), error: None, warnings: self.warnings.clone(), steps, go_test }
    }

    /// The step's report, and whether go test would pass the step where `test` does not.
    fn run_step(
        &self,
        script: &Script,
        limits: &Limits,
        printed: &Printed,
        index: usize,
        obj: &Value,
    ) -> (StepReport, bool) {
        let mut notes = Vec::new();
        let Some(expected) = self.expected.get(index) else {
            let outcome = Outcome::Error(format!(
                "{} (go test fails on that: index out of range)",
                entries_for_steps(self.expected.len(), self.steps.len())
            ));
            return (StepReport { index, outcome, notes }, false);
        };
        let want = expected.clone();
        let got = match harness_result(script, obj, limits, printed) {
            Ok((got, warnings)) => {
                notes = warnings;
                got
            }
            Err(e) => {
                // go test's harness compares the empty Data it makes of such a result.
                let go_test_passes = e.kind == ScriptErrorKind::NotATable && want == Data::default();
                return (StepReport { index, outcome: Outcome::Error(e.to_string()), notes }, go_test_passes);
            }
        };
        (StepReport { index, outcome: Outcome::compared(want, got), notes }, false)
    }

    /// Every step's `obj` as a Lua file that loads: `steps = { step_1 = { … }, … }`.
    pub fn lua_objects(&self) -> String {
        let mut out = format!(
            "-- Generated by kubectl-rollout-lua lua-obj from {} for debugging: steps.step_<i> is the obj\n-- the script sees at step i (1-based, as the controller's status counts), built as the controller's\n-- test harness builds it.\nsteps = {{\n",
            self.name
        );
        for (i, obj) in self.steps.iter().enumerate() {
            out.push_str(&format!("  step_{} = ", i + 1));
            write_lua(&mut out, obj, 1);
            out.push_str(",\n");
        }
        out.push_str("}\n");
        out
    }
}

/// Why a case cannot be read as a custom ref's.
enum ReadError {
    /// It routes through another provider (see `refuse_other_providers`).
    OtherProvider(String),
    Invalid(String),
}

impl From<String> for ReadError {
    fn from(message: String) -> ReadError {
        ReadError::Invalid(message)
    }
}

/// A case whose routing has no custom refs, only an Ingress or an HTTPRoute: an Ingress script's
/// obj holds the canary's annotations as the earlier steps' scripts left them, and an HTTPRoute's
/// rules run no script, so neither is a custom ref's obj.
fn refuse_other_providers(name: &str, routing: &TrafficRoutingRef) -> Result<(), String> {
    match (&routing.ingress, &routing.gateway) {
        _ if !routing.custom_network_refs.is_empty() => Ok(()),
        (Some(_), _) => Err(format!(
            "{name}: it routes through an Ingress, not a custom ref: `test` runs such a case from trafficrouting_ingress/testdata/<classType>, and `kubectl rollout-lua plan -f {name} --show-obj` prints what its script gets at each step"
        )),
        (None, Some(_)) => Err(format!(
            "{name}: it routes through an HTTPRoute, which no script rewrites (the controller does it in Go), so there is no obj: `test` runs such a case from gateway.networking.k8s.io/HTTPRoute/testdata"
        )),
        (None, None) => Ok(()),
    }
}

/// A step's result as the controller's test harness gets it, and warnings about what the
/// controller would do otherwise: write the empty tables as null, or never settle on an output
/// that depends on `pairs()` order (`test`, and `record`, which writes the result as expected).
pub fn harness_result(
    script: &Script,
    obj: &Value,
    limits: &Limits,
    printed: &Printed,
) -> Result<(Data, Vec<String>), lua::ScriptError> {
    // Its prints are printed by the harness's run alone.
    let quiet = &Printed::default();
    let controller = || data::evaluate(script, Cow::Borrowed(obj), limits, EvalOptions::CONTROLLER, quiet);
    let Evaluated { output: got, work } = match data::evaluate(
        script,
        Cow::Borrowed(obj),
        limits,
        EvalOptions::HARNESS,
        printed,
    ) {
        Ok(evaluated) => evaluated,
        // An empty table as labels or annotations: `[]` to the harness, null to the controller.
        Err(mut error) if error.kind == ScriptErrorKind::Output && controller().is_ok() => {
            error.message.push_str(" (the test harness encodes an empty table as [], which is no map; the controller encodes it as null, and reads this result: return labels and annotations with entries, or nil)");
            return Err(error);
        }
        Err(error) => return Err(error),
    };
    let mut warnings = lua::controller_warnings(script, work);
    if let Ok(controller) = controller()
        && controller.output != got
    {
        warnings.push("the controller encodes the empty tables in this result as null, not [] as the test harness does: it would write the object differently".into());
    }
    match lua::order_dependence(script, obj, limits, EvalOptions::HARNESS, &got, Data::from_decoded) {
        Some(OrderDependence::NotRepeatable) => warnings.push(
            "nondeterministic: the output changes from one run to the next on the same obj (a table's address from tostring, math.random), and so it would in the controller (it would never settle)".into(),
        ),
        Some(OrderDependence::InputMaps) => warnings.push(
            "nondeterministic: the output changes with the order pairs() walks the input maps (or maps json.decode made), which is random in the controller (it would never settle)".into(),
        ),
        Some(OrderDependence::ScriptTables) => warnings.push(
            "order-dependent: the output changes with the order pairs() walks tables the script builds (gopher-lua: insertion order)".into(),
        ),
        None => {}
    }
    Ok((got, warnings))
}

#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Pass,
    Fail { want: Data, got: Data },
    Error(String),
}

impl Outcome {
    /// `got` against `want`, compared as the controller's JSON.
    pub fn compared(want: Data, got: Data) -> Outcome {
        if got.to_go_json() == want.to_go_json() { Outcome::Pass } else { Outcome::Fail { want, got } }
    }

    /// A step with no `expected` entry of its own (`entries` of them for `steps` steps).
    pub fn unexpected(entries: usize, steps: usize) -> Outcome {
        Outcome::Error(entries_for_steps(entries, steps))
    }
}

/// The steps of a case whose stages carry an object from one to the next (a canary Ingress, an
/// HTTPRoute): `stage` plans each action in order, from what the one before left, and says what
/// it leaves (compared with `expected`'s entry as `want` reads it) and its warnings; `first_notes`
/// go with the first step. A failing stage ends the case: later stages would start from a state
/// the controller never reaches.
pub fn carried_steps<A>(
    actions: &[A],
    expected: &[Value],
    first_notes: Vec<String>,
    want: impl Fn(&Value) -> Data,
    mut stage: impl FnMut(&A) -> Result<(Data, Vec<String>), crate::error::Error>,
) -> Vec<StepReport> {
    let mut notes = first_notes;
    let mut steps = Vec::new();
    for (index, action) in actions.iter().enumerate() {
        let mut step_notes = std::mem::take(&mut notes);
        match stage(action) {
            Err(e) => {
                steps.push(StepReport { index, outcome: Outcome::Error(e.to_string()), notes: step_notes });
                break;
            }
            Ok((got, warnings)) => {
                let outcome = match expected.get(index) {
                    None => Outcome::unexpected(expected.len(), actions.len()),
                    Some(expected) => Outcome::compared(want(expected), got),
                };
                step_notes.extend(warnings);
                steps.push(StepReport { index, outcome, notes: step_notes });
            }
        }
    }
    steps
}

/// The fields where `got` differs from `want`, in the order of the rendered result, the first
/// `MAX_NAMED` of them: `spec.http[1].route[0].weight: expected 20, got 30`. A diff says which
/// lines differ, not which field they belong to.
pub fn differing_fields(want: &Data, got: &Data) -> Vec<String> {
    const MAX_NAMED: usize = 5;
    fn walk(path: Path, want: Option<&Value>, got: Option<&Value>, found: &mut Vec<String>) {
        if found.len() > MAX_NAMED {
            return;
        }
        // A value as JSON, cut short: a missing subtree is shown whole in the diff. Its strings
        // as the diff shows them (`<`, not Go's `\u003c`).
        let shown = |value: Option<&Value>| {
            let text = value.map_or("nothing".to_string(), gojson::to_string_for_people);
            match text.char_indices().nth(60) {
                Some((cut, _)) => format!("{}…", &text[..cut]),
                None => text,
            }
        };
        match (want, got) {
            (Some(Value::Object(w)), Some(Value::Object(g))) => {
                let keys: std::collections::BTreeSet<&String> = w.keys().chain(g.keys()).collect();
                for key in keys {
                    walk(path.field(key), w.get(key), g.get(key), found);
                }
            }
            (Some(Value::Array(w)), Some(Value::Array(g))) => {
                for i in 0..w.len().max(g.len()) {
                    walk(path.index(i), w.get(i), g.get(i), found);
                }
            }
            (Some(w), Some(g)) if gojson::same(w, g) => {}
            _ => found.push(format!("{path}: expected {}, got {}", shown(want), shown(got))),
        }
    }
    let mut found = Vec::new();
    walk(Path::default(), Some(&want.to_value()), Some(&got.to_value()), &mut found);
    if found.len() > MAX_NAMED {
        found.truncate(MAX_NAMED);
        found.push("…".into());
    }
    found
}

/// `expected has 1 entry but the case has 2 steps`.
fn entries_for_steps(entries: usize, steps: usize) -> String {
    let entries = if entries == 1 { "1 entry".to_string() } else { format!("{entries} entries") };
    let steps = if steps == 1 { "1 step".to_string() } else { format!("{steps} steps") };
    format!("expected has {entries} but the case has {steps}")
}

#[derive(Clone, Debug)]
pub struct StepReport {
    /// Where the step is in the case's steps and `expected` (0-based).
    pub index: usize,
    pub outcome: Outcome,
    /// Warnings that do not fail the step.
    pub notes: Vec<String>,
}

impl StepReport {
    /// The step's number, 1-based as the controller's status counts steps.
    pub fn step(&self) -> usize {
        self.index + 1
    }
}

#[derive(Clone, Debug)]
pub struct CaseReport {
    pub case: String,
    /// Why the case did not run at all (it cannot be read, or has no script): no step ran.
    pub error: Option<String>,
    /// Warnings about the case as a whole (its steps have their own).
    pub warnings: Vec<String>,
    pub steps: Vec<StepReport>,
    pub go_test: GoTest,
}

impl CaseReport {
    /// A case that could not run, and why.
    pub fn failed(case: &str, error: String) -> CaseReport {
        CaseReport {
            case: case.into(),
            error: Some(error),
            warnings: Vec::new(),
            steps: Vec::new(),
            go_test: GoTest::Same,
        }
    }

    pub fn passed(&self) -> bool {
        self.error.is_none() && self.steps.iter().all(|s| s.outcome == Outcome::Pass)
    }
}

/// A case's `key` object (its rollout or trafficRouting) with an apiVersion and kind of the type
/// go test decodes it into (the last of `versions`, of `kind`): go test reads neither, so it
/// reads any object so. And a warning when the case gives others, which `plan -f` and the API
/// server refuse.
fn as_go_test_types<'a>(
    origin: &Origin,
    key: &str,
    object: &'a Value,
    versions: &[&str],
    kind: &str,
) -> (Cow<'a, Value>, Option<String>) {
    let api_version = object["apiVersion"].as_str().and_then(|v| v.strip_prefix("rollouts.kruise.io/"));
    if !object.is_object() || (api_version.is_some_and(|v| versions.contains(&v)) && object["kind"] == kind) {
        return (Cow::Borrowed(object), None);
    }
    let version = versions[versions.len() - 1];
    let mut typed = object.clone();
    typed["apiVersion"] = format!("rollouts.kruise.io/{version}").into();
    typed["kind"] = kind.into();
    let warning = format!(
        "{}: {key} has apiVersion {} and kind {}: go test reads neither, and runs it as a {version} {kind}, as this tool does; plan -f and the API server need apiVersion rollouts.kruise.io/{version} and kind {kind}",
        origin.place_of(&Path::root("apiVersion")),
        object.get("apiVersion").unwrap_or(&Value::Null),
        object.get("kind").unwrap_or(&Value::Null),
    );
    (Cow::Owned(typed), Some(warning))
}

/// The Rollout of a case as the harness reads it: decoded into the v1beta1 type whatever its
/// apiVersion, without the conversion, so a v1alpha1 `weight` is ignored (the script gets
/// canaryWeight -1 there), and without the CRD's defaults. Says so when the apiVersion makes
/// that differ from what the controller would read.
fn harness_rollout(rollout: &Value) -> Result<(Rollout, Option<String>), crate::model::ModelError> {
    if rollout["apiVersion"] != "rollouts.kruise.io/v1alpha1" {
        return Ok((Rollout::read(rollout, Semantics::Harness)?, None));
    }
    let mut as_beta = rollout.clone();
    as_beta["apiVersion"] = "rollouts.kruise.io/v1beta1".into();
    let read = Rollout::read(&as_beta, Semantics::Harness)?;
    // A step's weight, and whether the step has a traffic of its own (which v1alpha1 does not
    // define, but go test reads).
    let weights: Vec<(String, bool)> = rollout["spec"]["strategy"]["canary"]["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, step)| {
            let weight = step.get("weight").filter(|w| !w.is_null())?;
            Some((format!("steps[{i}].weight {weight}"), step.get("traffic").is_some_and(|t| !t.is_null())))
        })
        .collect();
    let listed = |with_traffic: bool| {
        let weights: Vec<&str> = weights.iter().filter(|w| w.1 == with_traffic).map(|w| w.0.as_str()).collect();
        match weights.as_slice() {
            [] => None,
            [one] => Some(format!("{one} is")),
            many => Some(format!("{} are", many.join(", "))),
        }
    };
    let ignored: Vec<String> = [
        listed(false).map(|w| format!("{w} ignored and the script gets canaryWeight -1 there")),
        listed(true).map(|w| format!("{w} ignored for the step's traffic")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let note = (!ignored.is_empty()).then(|| {
        format!(
            "it reads this v1alpha1 rollout as v1beta1 without the conversion, so {} (the controller converts weight N to traffic \"N%\"); this tool does as go test does",
            ignored.join(", and ")
        )
    });
    Ok((read, note))
}

/// spec, labels and annotations as YAML, for diffs.
pub fn data_yaml(data: &Data) -> String {
    yaml::to_string(&data.to_value())
}

fn write_lua(out: &mut String, value: &Value, depth: usize) {
    let indent = "  ".repeat(depth + 1);
    match value {
        Value::Null => out.push_str("nil"),
        Value::Bool(b) => out.push_str(&b.to_string()),
        Value::Number(n) => out.push_str(&gojson::to_string(&Value::Number(n.clone()))),
        Value::String(s) => out.push_str(&lua_string(s)),
        Value::Array(items) => {
            out.push_str("{\n");
            // Nulls inside lists never reach Lua (they are dropped on the way in).
            for item in items.iter().filter(|i| !i.is_null()) {
                out.push_str(&indent);
                write_lua(out, item, depth + 1);
                out.push_str(",\n");
            }
            out.push_str(&"  ".repeat(depth));
            out.push('}');
        }
        Value::Object(map) => {
            out.push_str("{\n");
            for (key, item) in map.iter().filter(|(_, v)| !v.is_null()) {
                out.push_str(&indent);
                if is_identifier(key) {
                    out.push_str(key);
                } else {
                    out.push_str(&format!("[{}]", lua_string(key)));
                }
                out.push_str(" = ");
                write_lua(out, item, depth + 1);
                out.push_str(",\n");
            }
            out.push_str(&"  ".repeat(depth));
            out.push('}');
        }
    }
}

/// Whether `key` can stand bare as a table key: a name that no Lua keyword is, `goto` included
/// (Lua 5.2 and later's), so that the file loads in any Lua a debugger or REPL runs.
fn is_identifier(key: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in", "local", "nil",
        "not", "or", "repeat", "return", "then", "true", "until", "while",
    ];
    let mut chars = key.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&key)
}

fn lua_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\{:03}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_fields_that_differ_are_named_with_both_values() {
        let data = |object: Value| Data::of_object(&object);
        let want = data(
            json!({"metadata": {"labels": {"app": "web"}}, "spec": {"http": [{"route": [{"weight": 80}, {"weight": 20}]}], "hosts": ["a"]}}),
        );
        let got = data(
            json!({"metadata": {"labels": {"app": "web", "x": "1"}}, "spec": {"http": [{"route": [{"weight": 80.0}, {"weight": 30}]}]}}),
        );
        assert_eq!(
            differing_fields(&want, &got),
            [
                "labels.x: expected nothing, got \"1\"",
                "spec.hosts: expected [\"a\"], got nothing",
                "spec.http[0].route[1].weight: expected 20, got 30",
            ]
        );
        assert!(differing_fields(&want, &want).is_empty());
        // Strings as the diff shows them, not escaped as Go writes them.
        let team = |value: &str| data(json!({"metadata": {"annotations": {"team": value}}}));
        assert_eq!(
            differing_fields(&team("a<b&c>!"), &team("a<b&c>")),
            ["annotations.team: expected \"a<b&c>!\", got \"a<b&c>\""]
        );
        // At most five, then an ellipsis; a long value cut short.
        let many = data(json!({"spec": {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": "x".repeat(100)}}));
        let fields = differing_fields(&Data::default(), &many);
        assert_eq!(fields.len(), 1, "{fields:?}");
        assert!(fields[0].starts_with("spec: expected nothing, got {\"a\":1,"), "{fields:?}");
        assert!(fields[0].ends_with('…'), "{fields:?}");
        let fields = differing_fields(&data(json!({"spec": {"a": 0, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0}})), &many);
        assert_eq!(fields.len(), 6, "{fields:?}");
        assert_eq!(fields[5], "…");
    }

    #[test]
    fn carried_steps_compare_each_stage_and_stop_at_the_first_that_fails() {
        let data = |n: i64| Data::of_object(&json!({"spec": {"n": n}}));
        let expected = [json!({"spec": {"n": 1}}), json!({"spec": {"n": 3}})];
        let mut carried = 0;
        let steps = carried_steps(&[1, 1, 1], &expected, vec!["first".into()], Data::of_object, |add| {
            carried += add;
            Ok((data(carried), vec![format!("at {carried}")]))
        });
        let outcomes: Vec<_> = steps.iter().map(|s| &s.outcome).collect();
        assert_eq!(outcomes[0], &Outcome::Pass);
        assert_eq!(outcomes[1], &Outcome::Fail { want: data(3), got: data(2) });
        assert_eq!(outcomes[2], &Outcome::unexpected(2, 3));
        let notes: Vec<_> = steps.iter().map(|s| s.notes.clone()).collect();
        assert_eq!(notes, [vec!["first", "at 1"], vec!["at 2"], vec!["at 3"]]);
        // A failing stage ends the case, its step keeping the first notes when it is the first.
        let steps = carried_steps(&[1, 2], &expected, vec!["first".into()], Data::of_object, |_| {
            Err(crate::error::Error::Input("bad".into()))
        });
        assert_eq!(steps.len(), 1);
        assert_eq!(
            (&steps[0].outcome, &steps[0].notes[..]),
            (&Outcome::Error("bad".into()), &["first".to_string()][..])
        );
    }

    const CASE: &str = r#"
rollout:
  apiVersion: rollouts.kruise.io/v1beta1
  kind: Rollout
  metadata: {name: demo}
  spec:
    strategy:
      canary:
        steps:
        - traffic: "20%"
        - replicas: 1
        trafficRoutings:
        - service: svc
original:
  metadata:
    labels: {app.kubernetes.io/name: demo, "end": "x"}
  spec: {w: 1}
expected:
- metadata:
    labels: {app.kubernetes.io/name: demo, "end": "x"}
  spec: {w: 20}
"#;

    #[test]
    fn a_rollout_the_api_server_refuses_runs_with_a_warning_per_rule_its_steps_break() {
        // CASE breaks two rules no routing reads: step 1 has no replicas, and its routing names
        // no provider (a case's folder names its script).
        assert!(TestCase::parse("c.yaml", CASE).unwrap().warnings.is_empty());
        let refused = CASE
            .replace(r#"- traffic: "20%""#, r#"- traffic: "0%""#)
            .replace("        - replicas: 1\n", "        - replicas: 1\n          matches: [{path: {type: Prefix}}]\n");
        let case = TestCase::parse("c.yaml", &refused).unwrap();
        assert_eq!(
            case.warnings,
            [
                "c.yaml:12: spec.strategy.canary.steps[1].matches[0].path.type: must be one of Exact, PathPrefix, RegularExpression, not \"Prefix\": the API server refuses such a Rollout (the CRD's schema), so the controller never runs it; the case runs all the same",
                "c.yaml:10: spec.strategy.canary.steps[0].traffic: \"0%\" must be in (0%, 100%]: the API server refuses such a Rollout (the controller's webhook), so the controller never runs it; the case runs all the same",
            ]
        );
        assert_eq!(case.steps[1]["matches"], json!([{"path": {"type": "Prefix"}}]), "as go test gives it");
    }

    #[test]
    fn a_field_named_in_another_case_is_read_as_go_test_reads_it_with_a_warning() {
        let folded = CASE.replace(r#"- traffic: "20%""#, r#"- TRAFFIC: "20%""#).replace("\nexpected:", "\nExpected:");
        let case = TestCase::parse("c.yaml", &folded).unwrap();
        assert_eq!(case.steps[0]["canaryWeight"], json!(20));
        assert_eq!(case.expected.len(), 1);
        assert_eq!(
            case.warnings,
            [
                "c.yaml:18: Expected: read as expected, as go test reads it (Go's JSON decoding matches a field's name in any case)",
                "c.yaml:10: rollout.spec.strategy.canary.steps[0].TRAFFIC: read as traffic, as go test reads it (Go's JSON decoding matches a field's name in any case); the API server matches names exactly, and drops it from an object applied so",
            ]
        );
        // Written both ways, the later in byte order (traffic) is read.
        let both = CASE.replace(r#"- traffic: "20%""#, "- traffic: 20%\n          Traffic: 5%");
        assert_eq!(TestCase::parse("c.yaml", &both).unwrap().steps[0]["canaryWeight"], json!(20));
    }

    #[test]
    fn a_subject_is_run_as_the_type_go_test_decodes_it_into_whatever_it_says() {
        let origin = Origin::Cluster("case".into());
        let rollout = |api_version: &str, kind: &str| json!({"apiVersion": api_version, "kind": kind, "spec": {}});
        let typed = |object: &Value, versions: &[&str], kind: &str| {
            let (read, warning) = as_go_test_types(&origin, "rollout", object, versions, kind);
            (read.into_owned(), warning)
        };
        // As the CRD has it: as it is.
        for version in ["v1alpha1", "v1beta1"] {
            let object = rollout(&format!("rollouts.kruise.io/{version}"), "Rollout");
            assert_eq!(typed(&object, &["v1alpha1", "v1beta1"], "Rollout"), (object.clone(), None));
        }
        // Otherwise as the type's, with a warning.
        let (read, warning) = typed(&rollout("v1", "Thing"), &["v1alpha1", "v1beta1"], "Rollout");
        assert_eq!(read, rollout("rollouts.kruise.io/v1beta1", "Rollout"));
        assert_eq!(
            warning.unwrap(),
            "case: rollout has apiVersion \"v1\" and kind \"Thing\": go test reads neither, and runs it as a v1beta1 Rollout, as this tool does; plan -f and the API server need apiVersion rollouts.kruise.io/v1beta1 and kind Rollout"
        );
        let (read, warning) = typed(&json!({"spec": {}}), &["v1alpha1"], "TrafficRouting");
        assert_eq!(read, rollout("rollouts.kruise.io/v1alpha1", "TrafficRouting"));
        assert!(warning.unwrap().contains("apiVersion null and kind null"));
        // Not an object: left for the reading to refuse.
        assert_eq!(typed(&json!("x"), &["v1beta1"], "Rollout"), (json!("x"), None));
        // Without a name, a TrafficRouting case runs.
        let text = "trafficRouting:\n  spec:\n    strategy: {weight: 5}\n    objectRef: [{service: svc}]\noriginal: {kind: Thing, spec: {}}\nexpected: [{kind: Thing, spec: {}}]\n";
        let case = TestCase::parse("tr.yaml", text).unwrap();
        assert_eq!(case.steps[0]["canaryWeight"], json!(5));
        assert_eq!(case.warnings.len(), 1, "{:?}", case.warnings);
    }

    #[test]
    fn a_v1alpha1_weight_is_said_ignored_with_what_the_script_gets_instead() {
        let note = |steps: Value| {
            let rollout = json!({
                "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "r"},
                "spec": {"strategy": {"canary": {"steps": steps, "trafficRoutings": [{"service": "svc"}]}}}
            });
            let (read, note) = harness_rollout(&rollout).unwrap();
            (read.steps.iter().map(|s| s.strategy.traffic.clone()).collect::<Vec<_>>(), note)
        };
        let lead = "it reads this v1alpha1 rollout as v1beta1 without the conversion, so ";
        let tail = " (the controller converts weight N to traffic \"N%\"); this tool does as go test does";
        assert_eq!(note(json!([{"replicas": 1}])), (vec![None], None));
        assert_eq!(
            note(json!([{"weight": 20, "replicas": 1}, {"weight": 40, "replicas": 2}])),
            (
                vec![None, None],
                Some(format!(
                    "{lead}steps[0].weight 20, steps[1].weight 40 are ignored and the script gets canaryWeight -1 there{tail}"
                ))
            )
        );
        // A traffic (which v1alpha1 does not define) is what go test gives the script there.
        assert_eq!(
            note(json!([{"weight": 20, "replicas": 1}, {"weight": 40, "traffic": "60%", "replicas": 2}])),
            (
                vec![None, Some("60%".to_string())],
                Some(format!(
                    "{lead}steps[0].weight 20 is ignored and the script gets canaryWeight -1 there, and steps[1].weight 40 is ignored for the step's traffic{tail}"
                ))
            )
        );
    }

    #[test]
    fn a_traffic_routing_the_api_server_refuses_runs_with_a_warning_per_rule_it_breaks() {
        let case = |kind: &str| {
            let text = format!(
                "trafficRouting:\n  apiVersion: rollouts.kruise.io/v1alpha1\n  kind: TrafficRouting\n  metadata: {{name: tr}}\n  spec:\n    strategy:\n      matches:\n      - headers:\n        - {{type: {kind}, name: a, value: b}}\n    objectRef: [{{service: svc}}]\noriginal: {{kind: Split, spec: {{}}}}\nexpected: []\n"
            );
            TestCase::parse("tr.yaml", &text).unwrap()
        };
        assert!(case("Exact").warnings.is_empty());
        let refused = case("Prefix");
        assert_eq!(
            refused.warnings,
            [
                "tr.yaml:9: spec.strategy.matches[0].headers[0].type: must be one of Exact, RegularExpression, not \"Prefix\": the API server refuses such a TrafficRouting (the CRD's schema), so the controller never runs it; the case runs all the same"
            ]
        );
        assert_eq!(refused.steps[0]["matches"][0]["headers"][0]["type"], "Prefix", "as go test gives it");
    }

    #[test]
    fn an_ingress_or_httproute_case_is_no_custom_refs_case() {
        // An Ingress case's own key, its canary Ingress, is no unknown key.
        let ingress = CASE
            .replace("        - service: svc\n", "        - service: svc\n          ingress: {name: web}\n")
            + "canary: {metadata: {name: web-canary}}\n";
        let error = TestCase::parse("web.yaml", &ingress).unwrap_err();
        assert!(error.starts_with("web.yaml: it routes through an Ingress, not a custom ref: "), "{error}");
        assert!(
            error.ends_with(
                "`kubectl rollout-lua plan -f web.yaml --show-obj` prints what its script gets at each step"
            )
        );
        // An HTTPRoute's: no script, no obj, nothing to print (plan's --show-obj shows none).
        let route = CASE
            .replace("        - service: svc\n", "        - service: svc\n          gateway: {httpRouteName: web}\n");
        let error = TestCase::parse("web.yaml", &route).unwrap_err();
        assert_eq!(
            error,
            "web.yaml: it routes through an HTTPRoute, which no script rewrites (the controller does it in Go), so there is no obj: `test` runs such a case from gateway.networking.k8s.io/HTTPRoute/testdata"
        );
    }

    #[test]
    fn a_label_map_with_a_value_that_is_not_a_string_is_no_map_to_the_harness() {
        let case = CASE.replace(
            "  metadata:\n    labels: {app.kubernetes.io/name: demo, \"end\": \"x\"}\n  spec: {w: 1}",
            "  metadata:\n    labels: {app: x, version: 2}\n  spec: {w: 1}",
        );
        let case = TestCase::parse("case.yaml", &case).unwrap();
        assert_eq!(case.steps[0]["data"].get("labels"), None, "no labels at all: {}", case.steps[0]);
        assert_eq!(case.warnings.len(), 1, "{:?}", case.warnings);
        assert!(
            case.warnings[0].contains("original.metadata.labels has a value that is not a string: the controller's harness then reads no labels at all (unstructured's GetLabels)"),
            "{:?}",
            case.warnings
        );
        // In expected too: it is compared without them.
        let unquoted = CASE.replace(
            "- metadata:\n    labels: {app.kubernetes.io/name: demo, \"end\": \"x\"}",
            "- metadata:\n    labels: {n: 1}",
        );
        let case = TestCase::parse("case.yaml", &unquoted).unwrap();
        assert!(case.warnings[0].contains("expected[0].metadata.labels has a value"), "{:?}", case.warnings);
    }

    #[test]
    fn an_empty_table_as_labels_fails_under_the_harness_alone_and_says_so() {
        let obj = json!({"data": {"spec": {"w": 1}}});
        let run =
            |code: &str| harness_result(&Script::new("s.lua", code), &obj, &Limits::default(), &Printed::default());
        let error = run("local d = obj.data d.labels = {} return d").unwrap_err().to_string();
        assert!(error.ends_with("of type map[string]string (the test harness encodes an empty table as [], which is no map; the controller encodes it as null, and reads this result: return labels and annotations with entries, or nil)"), "{error}");
        // A result the controller cannot read either is said as it is.
        let error = run("return {labels = {1}}").unwrap_err().to_string();
        assert!(
            error.ends_with("json: cannot unmarshal array into Go struct field Data.labels of type map[string]string"),
            "{error}"
        );
    }

    #[test]
    fn builds_harness_objs_and_reports_each_step() {
        let case = TestCase::parse("case.yaml", CASE).unwrap();
        assert_eq!(case.steps[0]["canaryService"], json!("svc-canary"));
        assert_eq!(case.steps[1]["canaryWeight"], json!(-1), "steps without traffic still run");
        let script = Script::new("s.lua", "obj.data.spec.w = obj.canaryWeight return obj.data");
        let report = case.run(&script, &Limits::default(), &Printed::default());
        assert_eq!(report.steps[0].outcome, Outcome::Pass);
        assert!(
            matches!(&report.steps[1].outcome, Outcome::Error(e) if e.contains("expected has 1 entry but the case has 2 steps"))
        );
        assert!(!report.passed());
    }

    #[test]
    fn expected_is_a_list_or_nothing_and_original_an_object() {
        let read = |text: &str| {
            let (document, _) = case_document("c.yaml", text).unwrap();
            let origin = Origin::of("c.yaml", &document);
            (expected(&origin, &document.value, "HTTPRoutes"), original(&origin, &document.value, "object").cloned())
        };
        assert_eq!(read("expected: [{spec: {}}]\noriginal: {}\n"), (Ok(vec![json!({"spec": {}})]), Ok(json!({}))));
        assert_eq!(read("expected: null\n").0, Ok(vec![]));
        assert_eq!(read("a: 1\n").0, Ok(vec![]));
        // Each error names its line, where the case has the key.
        assert_eq!(
            read("rollout: {}\noriginal: []\nexpected: {spec: {}}\n"),
            (
                Err("c.yaml:3: expected must be a list of HTTPRoutes, one per step".into()),
                Err("c.yaml:2: no original object".into())
            )
        );
        assert_eq!(read("rollout: {}\n").1, Err("c.yaml:1: no original object".into()));
        let manifest = "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollout\nmetadata: {name: demo}\n";
        let err = case_document("c.yaml", manifest).unwrap_err();
        assert!(err.starts_with("c.yaml is a Kubernetes object (Rollout demo), not a test case"), "{err}");
    }

    #[test]
    fn a_case_file_holds_one_document() {
        let one = "c.yaml: expected one YAML document with rollout or trafficRouting, original and expected";
        let read = |text: &str| case_document("c.yaml", text).map(|(d, more)| (d.value, more));
        assert_eq!(read(""), Err(one.into()));
        assert_eq!(read("[{\"a\": 1}]\n"), Err(one.into()), "a list is no case");
        assert_eq!(read("kind: List\nitems: [{a: 1}]\n"), Err(one.into()));
        assert_eq!(read("a: 1\n"), Ok((json!({"a": 1}), None)));
        assert_eq!(read("---\na: 1\n---\n"), Ok((json!({"a": 1}), None)), "empty documents are none");
        // go test reads the first document alone; the others are named, not run.
        assert_eq!(
            read("a: 1\n---\nb: 2\n---\nc: 3\n"),
            Ok((
                json!({"a": 1}),
                Some("c.yaml:3: a second YAML document, not run: a case file holds one case, the first, as the controller's go test reads it; put each case in a file of its own".into())
            ))
        );
    }

    #[test]
    fn a_malformed_case_is_refused_naming_the_file() {
        let err = |text: &str| TestCase::parse("c.yaml", text).unwrap_err();
        assert_eq!(
            err("original: {kind: Split, spec: {}}\nexpected: []\n"),
            "c.yaml: neither rollout nor trafficRouting"
        );
        let (without_expected, _) = CASE.split_once("expected:").unwrap();
        assert_eq!(
            err(&format!("{without_expected}expected: {{spec: {{n: 20}}}}\n")),
            "c.yaml:18: expected must be a list of objects, one per step"
        );
        assert!(TestCase::parse("c.yaml", without_expected).unwrap().expected.is_empty());
    }

    #[test]
    fn lua_objects_load_with_dotted_keys() {
        let case = TestCase::parse("case.yaml", CASE).unwrap();
        let text = case.lua_objects();
        let lua = mlua::Lua::new();
        lua.load(&text).exec().unwrap();
        let label: String = lua
            .load(r#"return steps.step_1.data.labels["app.kubernetes.io/name"] .. steps.step_2.data.labels["end"]"#)
            .eval()
            .unwrap();
        assert_eq!(label, "demox");
        let weight: i64 = lua.load("return steps.step_2.stableWeight").eval().unwrap();
        assert_eq!(weight, 101);
    }

    #[test]
    fn a_key_named_as_a_keyword_of_any_lua_version_is_bracketed() {
        let mut out = String::new();
        write_lua(&mut out, &json!({"goto": 4, "end": 5, "go": 6}), 0);
        assert_eq!(out, "{\n  [\"end\"] = 5,\n  go = 6,\n  [\"goto\"] = 4,\n}");
    }

    #[test]
    fn traffic_routing_cases_pass_an_empty_matches_list() {
        let case = TestCase::parse(
            "tr.yaml",
            "trafficRouting:\n  apiVersion: rollouts.kruise.io/v1alpha1\n  kind: TrafficRouting\n  metadata: {name: tr}\n  spec:\n    strategy: {weight: 5}\n    objectRef: [{service: svc}]\noriginal: {kind: Split, spec: {}}\nexpected: []\n",
        )
        .unwrap();
        assert_eq!(case.steps[0]["matches"], json!([]));
        assert_eq!(case.steps[0]["canaryService"], json!("svc"));
        // Which the controller does not (a script's `if obj.matches then` tells them apart).
        let GoTest::Differs(note) = &case.go_test else { panic!("{:?}", case.go_test) };
        assert_eq!(
            note,
            "it gives the script matches = {} (an empty table, true to an `if`), where the controller gives none (nil)"
        );
    }

    #[test]
    fn the_harness_reads_matches_without_crd_defaults() {
        let case = TestCase::parse(
            "m.yaml",
            "rollout:\n  apiVersion: rollouts.kruise.io/v1beta1\n  kind: Rollout\n  metadata: {name: demo}\n  spec:\n    strategy:\n      canary:\n        steps:\n        - matches: [{headers: [{name: a, value: b}], path: {}}]\n        trafficRoutings: [{service: svc}]\noriginal: {kind: Split, spec: {}}\nexpected: []\n",
        )
        .unwrap();
        assert_eq!(case.steps[0]["matches"], json!([{"headers": [{"name": "a", "value": "b"}], "path": {}}]));
        let case = TestCase::parse(
            "tr.yaml",
            "trafficRouting:\n  apiVersion: rollouts.kruise.io/v1alpha1\n  kind: TrafficRouting\n  metadata: {name: tr}\n  spec:\n    strategy: {matches: [{headers: [{name: a, value: b}]}]}\n    objectRef: [{service: svc}]\noriginal: {kind: Split, spec: {}}\nexpected: []\n",
        )
        .unwrap();
        assert_eq!(case.steps[0]["matches"], json!([{"headers": [{"name": "a", "value": "b"}]}]));
    }

    #[test]
    fn go_test_passes_a_step_whose_script_returns_no_table_where_expected_is_empty() {
        let case = |api_version: &str, expected: &str| {
            TestCase::parse(
                "c.yaml",
                &format!("rollout:\n  apiVersion: rollouts.kruise.io/{api_version}\n  kind: Rollout\n  metadata: {{name: demo}}\n  spec:\n    strategy:\n      canary:\n        steps: [{{weight: 5}}, {{traffic: 10%}}, {{traffic: 20%}}]\n        trafficRoutings: [{{service: svc}}]\noriginal: {{kind: Split, spec: {{}}}}\nexpected: {expected}\n"),
            )
            .unwrap()
        };
        // A string at the first two steps (go test: an empty result), a table with nil after it
        // at the third (only the last value counts).
        let script = Script::new("s.lua", "if obj.canaryWeight == 20 then return obj.data, nil end return 'done'");
        let run = |case: TestCase| case.run(&script, &Limits::default(), &Printed::default());
        let report =
            run(case("v1beta1", "[{kind: Split, metadata: {name: x}}, {kind: Split, spec: {}}, {kind: Split}]"));
        assert!(
            report.steps.iter().all(|s| matches!(&s.outcome, Outcome::Error(e) if e.contains("expect table output")))
        );
        let GoTest::Differs(note) = &report.go_test else { panic!("{:?}", report.go_test) };
        // Step 2 expects a spec, which the empty result does not have: go test fails it too.
        assert!(note.starts_with("it passes steps 1, 3, where the script returns no table"), "{note}");
        let report = run(case("v1beta1", "[{kind: Split, spec: {}}, {kind: Split, spec: {}}, {kind: Split}]"));
        let GoTest::Differs(note) = &report.go_test else { panic!("{:?}", report.go_test) };
        assert!(note.starts_with("it passes step 3, where"), "{note}");
        assert_eq!(
            run(case("v1beta1", "[{kind: Split, spec: {}}, {kind: Split, spec: {}}, {kind: Split, spec: {}}]")).go_test,
            GoTest::Same
        );
        // Added to what reading the case found.
        let GoTest::Differs(note) = &run(case("v1alpha1", "[{kind: Split}, {kind: Split}, {kind: Split}]")).go_test
        else {
            panic!()
        };
        assert!(
            note.contains("steps[0].weight 5 is ignored") && note.contains("; it passes steps 1, 2, 3, where"),
            "{note}"
        );
        let blue_green = TestCase {
            go_test: GoTest::CannotRun("why".into()),
            ..case("v1beta1", "[{kind: Split}, {kind: Split}, {kind: Split}]")
        };
        assert_eq!(run(blue_green).go_test, GoTest::CannotRun("why".into()));
    }

    #[test]
    fn a_case_says_where_go_test_gives_the_script_what_the_controller_does_not() {
        let note = |api_version: &str, canary: &str, steps: &str| {
            let case = TestCase::parse(
                "c.yaml",
                &format!("rollout:\n  apiVersion: rollouts.kruise.io/{api_version}\n  kind: Rollout\n  metadata: {{name: demo}}\n  spec:\n    strategy:\n      canary:\n        {canary}\n        steps: {steps}\n        trafficRoutings: [{{service: svc}}]\noriginal: {{kind: Split, spec: {{}}}}\nexpected: []\n"),
            )
            .unwrap();
            match case.go_test {
                GoTest::Same => String::new(),
                GoTest::Differs(note) | GoTest::CannotRun(note) => note,
            }
        };
        let disabled = "disableGenerateCanaryService: true";
        assert_eq!(
            note("v1beta1", disabled, "[{traffic: 10%}]"),
            "it gives the script canaryService svc-canary, where the controller gives svc (disableGenerateCanaryService)"
        );
        assert_eq!(note("v1beta1", "disableGenerateCanaryService: false", "[{traffic: 10%}, {replicas: 2}]"), "");
        // The v1alpha1 conversion drops the flag: the controller gives svc-canary too.
        let alpha = note("v1alpha1", disabled, "[{weight: 10}]");
        assert!(!alpha.contains("canaryService"), "{alpha}");
    }

    #[test]
    fn the_harness_ignores_a_v1alpha1_weight() {
        let case = TestCase::parse(
            "alpha.yaml",
            "rollout:\n  apiVersion: rollouts.kruise.io/v1alpha1\n  kind: Rollout\n  metadata: {name: demo}\n  spec:\n    strategy:\n      canary:\n        steps: [{weight: 20}, {weight: 40, matches: []}]\n        trafficRoutings: [{service: svc}]\noriginal: {kind: Split, spec: {}}\nexpected: []\n",
        )
        .unwrap();
        assert_eq!(case.steps[0]["canaryWeight"], json!(-1), "weight is not a v1beta1 field");
        assert_eq!(case.steps[1]["matches"], json!([]), "no conversion drops the empty list");
        let GoTest::Differs(note) = &case.go_test else { panic!("{:?}", case.go_test) };
        assert!(note.contains("steps[0].weight 20, steps[1].weight 40 are ignored"), "{note}");
    }

    #[test]
    fn the_harness_cannot_read_an_object_without_kind() {
        let case = |original: &str, expected: &str| {
            TestCase::parse(
                "c.yaml",
                &format!("rollout:\n  apiVersion: rollouts.kruise.io/v1beta1\n  kind: Rollout\n  metadata: {{name: demo}}\n  spec:\n    strategy:\n      canary:\n        steps: [{{traffic: 10%}}, {{traffic: 20%}}]\n        trafficRoutings: [{{service: svc}}]\noriginal: {original}\nexpected: {expected}\n"),
            )
            .unwrap()
            .go_test
        };
        let note = |original: &str, expected: &str| match case(original, expected) {
            GoTest::CannotRun(why) => why,
            other => panic!("{other:?}"),
        };
        let with_kind = "{kind: Split, spec: {}}";
        assert!(note("{spec: {}}", "[]").starts_with("original has no kind, and the harness reads each object as unstructured, which refuses one without (\"Object 'Kind' is missing\")"));
        assert!(
            note(with_kind, &format!("[{with_kind}, {{kind: '', spec: {{}}}}]")).starts_with("expected[1] has no kind")
        );
        assert!(note(with_kind, &format!("[{{kind: 5}}, {with_kind}]")).starts_with("expected[0] has no kind"));
        assert_eq!(case(with_kind, &format!("[{with_kind}, {with_kind}]")), GoTest::Same);
        assert!(note(with_kind, &format!("[{with_kind}, 5]")).starts_with("expected[1] is not an object (a map)"));
    }

    #[test]
    fn the_harness_cannot_run_blue_green_cases() {
        let case = TestCase::parse(
            "bg.yaml",
            "rollout:\n  apiVersion: rollouts.kruise.io/v1beta1\n  kind: Rollout\n  metadata: {name: demo}\n  spec:\n    strategy:\n      blueGreen:\n        steps: [{traffic: 50%, replicas: 100%}]\n        trafficRoutings: [{service: svc}]\noriginal: {kind: Split, spec: {}}\nexpected: []\n",
        )
        .unwrap();
        assert_eq!(case.steps[0]["canaryWeight"], json!(50), "run as the controller would");
        assert!(matches!(&case.go_test, GoTest::CannotRun(why) if why.contains("spec.strategy.canary only")));
    }
}
