//! The custom-refs provider: per object, the Lua script run on its stored original (or, at a
//! stage without traffic and matches, the original put back), as the controller's custom
//! network provider does (docs/controller-semantics.md §3.4). An object without a stored
//! original gets it first, in a write of its own, as the controller does.

use super::{Action, Changed, Context, ObjectPlan};
use crate::change::Change;
use crate::data::{self, Data};
use crate::error::Error;
use crate::gojson;
use crate::lua::{self, EvalOptions, Evaluated};
use crate::model::{
    self, ObjectIndex, ObjectKey, ObjectRef, Owner, RouteStrategy, Routing, RoutingAction, TrafficRoutingRef,
};
use crate::scripts::{self, ResolvedScript, ScriptSource};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;

/// Plans one custom ref. `resolve` finds the script of its kind (only asked for when the stage
/// routes traffic).
/// A script that failed for `reference` at `stage` of `owner`'s release: which, where and why
/// (`plan`, `record`).
pub fn script_failed(owner: &Owner, stage: &str, reference: &ObjectRef, error: impl std::fmt::Display) -> Error {
    Error::Input(format!("{owner}, {stage}, {reference}: {error}"))
}

/// Who routes through which object, to lead a message about it (its missing script, say).
pub fn routes_through(owner: &Owner, reference: &ObjectRef) -> String {
    format!("{owner} routes through {reference} ({})", reference.api_version)
}

/// What the controller writes before a script of the routing fails (docs/controller-semantics.md
/// §3.4): the original-spec annotation of every custom ref that has none, all stored before any
/// script runs; later passes then route from those originals.
fn originals_stored_first(routing: &Routing, objects: &ObjectIndex) -> Option<String> {
    let unstored: Vec<String> = routing
        .custom_refs()
        .iter()
        .filter(|reference| {
            objects
                .get(&ObjectKey::of_ref(reference, &routing.owner.namespace))
                .is_some_and(|object| data::stored_original(object).is_none())
        })
        .map(ToString::to_string)
        .collect();
    (!unstored.is_empty()).then(|| {
        format!(
            "before any script runs, the controller stores the annotation {} on {}, and keeps it: those writes are made although the step fails",
            data::ORIGINAL_SPEC_ANNOTATION,
            unstored.join(", ")
        )
    })
}

/// Plans the object of `reference`, custom ref `index` of the routing, at one stage: from the
/// object as read, or `after` an earlier stage of the plan, as that stage left it (the object
/// and the stage's label).
pub fn plan_object(
    context: &Context,
    objects: &ObjectIndex,
    (index, reference): (usize, &ObjectRef),
    after: Option<(Arc<Value>, String)>,
    resolve: impl FnOnce() -> Result<ResolvedScript, String>,
) -> Result<ObjectPlan, Error> {
    let routing = context.routing;
    let namespace = &routing.owner.namespace;
    let key = ObjectKey::of_ref(reference, namespace);
    let where_ = routes_through(&routing.owner, reference);
    let named_by = (routing.owner.kind, TrafficRoutingRef::custom_ref_field(index));
    let (after, found) = match after {
        Some((object, label)) => (Some(label), Some(object)),
        None => (None, objects.get(&key).cloned()),
    };
    let (current, absent) = super::starting_object(found.as_ref(), context.action, &key, objects, &where_, named_by)?;
    let mut warnings: Vec<String> = absent.into_iter().collect();
    let stored = data::stored_original(&current);
    let (original, unreadable) = Data::original_as_the_controller_reads_it(&current);
    // What the messages below need of the original, so that the original itself can move into the
    // script's obj or the restored object instead of being copied (it can be megabytes).
    let original_empty = original == Data::default();
    let original_holds_nothing = holds_nothing(&original);
    // Its original stored and nothing else written yet (as a write cut short leaves it): at its
    // original, not edited by someone.
    let after_first_write = stored.is_some_and(|text| !text.is_empty() && original.is_on(&current, text));
    let canary_in_original =
        matches!(context.action, RoutingAction::Route(_)).then(|| canary_in_unstored(&current, routing)).flatten();
    let (mut controller_stuck, mut too_large) = (None, None);
    let (planned, action, obj) = match context.action {
        RoutingAction::Leave => {
            (Arc::clone(&current), Action::Keep("the controller writes nothing here: left alone"), None)
        }
        // An empty annotation is the one the controller refuses to read (§3.4): its restore skips
        // the object, and a routing step fails before any spec is written.
        RoutingAction::Restore => match stored {
            _ if current.is_null() => {
                (Arc::clone(&current), Action::Keep("not found: the controller's restore skips it"), None)
            }
            Some("") => (
                Arc::clone(&current),
                Action::Keep("its stored original is empty: the controller leaves it alone"),
                None,
            ),
            Some(text) => {
                let restored = original.apply_to(&current, None);
                warnings
                    .extend(rounding_warning(text, &restored, "is restored as").map(|w| format!("{reference}: {w}")));
                (Arc::new(restored), Action::Restore, None)
            }
            None => (Arc::clone(&current), Action::Keep("original routing, nothing stored: left alone"), None),
        },
        RoutingAction::Route(_) if stored == Some("") => {
            return Err(Error::Input(format!(
                "{}, {}, {reference}: its annotation {} is empty: the controller fails this step (\"failed to get original spec from annotation\") and the release stops there; remove the annotation (the controller then stores the object as it is) or put the original back",
                routing.owner,
                context.stage,
                data::ORIGINAL_SPEC_ANNOTATION
            )));
        }
        RoutingAction::Route(strategy) => {
            let script = resolve().map_err(|e| Error::Input(format!("{where_}: {e}")))?;
            // The annotation the controller stores, when none is stored yet; the script gets what
            // reading it back gives.
            let (stored, original) = match stored {
                Some(text) => (text.to_string(), original),
                None => (original.to_go_json(), original.stored_and_read_back()),
            };
            let obj = model::lua_data(original, strategy, &routing.stable_service, &routing.canary_service);
            let (limits, options) = (context.limits, EvalOptions::CONTROLLER);
            let Evaluated { output: result, work } =
                data::evaluate(&script.script, Cow::Borrowed(&obj), limits, options, context.printed).map_err(|e| {
                    let failed = script_failed(&routing.owner, context.stage, reference, e);
                    match originals_stored_first(routing, objects) {
                        Some(stored) => Error::Input(format!("{failed} ({stored})")),
                        None => failed,
                    }
                })?;
            let controller = lua::controller_warnings(&script.script, work);
            warnings.extend(controller.iter().map(|w| format!("{reference}: {}: {w}", script.source)));
            // The built-in scripts' independence from pairs() order is checked by their test cases
            // (`test` flags any dependence); other scripts are checked on every plan.
            let order = match script.source {
                ScriptSource::BuiltIn { .. } => None,
                _ => lua::order_dependence(&script.script, &obj, limits, options, &result, Data::from_decoded),
            };
            warnings.extend(order.map(|order| format!("{reference}: {}", order.warning())));
            let planned = Arc::new(result.apply_to(&current, Some(&stored)));
            controller_stuck = controller_sticks(reference, &script, &obj, strategy);
            warnings.extend(routing_warnings(reference, &script, &obj, &planned, strategy, controller_stuck.is_some()));
            too_large = annotations_too_large(reference, &planned);
            warnings.extend(controller_stuck.clone());
            // With canary = stable every object names the Service: nothing tells a canary route.
            if routing.canary_service != routing.stable_service
                && names_service(&planned["spec"], &routing.canary_service)
            {
                warnings.extend(super::canary_service_warning(routing, objects, &key));
            }
            warnings
                .extend(rounding_warning(&stored, &planned, "is written back as").map(|w| format!("{reference}: {w}")));
            (planned, Action::Lua(script), Some(obj))
        }
    };
    let writes = !matches!(action, Action::Keep(_));
    let decoded = unreadable.is_none();
    let unwritable = unreadable.filter(|_| writes).map(|error| {
        let works_from = if original_empty {
            "nothing (no spec, labels or annotations)"
        } else {
            "the part that decodes"
        };
        let does = match (&action, original_empty) {
            (Action::Restore, true) => "restores that: it wipes the object's spec, labels and annotations",
            (Action::Restore, _) => "restores that, as shown",
            _ => "runs the script on that, as shown",
        };
        format!(
            "{reference}: its annotation {} does not parse ({error}); the controller ignores that, works from {works_from} and {does}; approve and restore write nothing until the annotation is fixed",
            data::ORIGINAL_SPEC_ANNOTATION
        )
    });
    // The API server would refuse the write, the controller's as this tool's: none is made.
    let unwritable = unwritable.or(too_large);
    warnings.extend(unwritable.clone());
    // An original that decodes but holds nothing: the controller writes from it all the same.
    let degenerate = stored.filter(|_| writes && decoded && original_holds_nothing).map(str::to_string);
    if let Some(text) = &degenerate {
        let does = match action {
            Action::Lua(_) => "runs the script on an empty original and writes the result",
            _ => "puts that back",
        };
        warnings.push(format!(
            "{reference}: its stored original {text} holds no spec: the controller {does}, wiping the object's routing (hosts, gateways, routes), labels and annotations; approve and restore refuse it without --force"
        ));
    }
    if let Some(canary) = &canary_in_original {
        warnings.push(format!("{reference}: {}", unstored_canary_routing(canary)));
    }
    let changes = changes(&key, &current, &planned);
    let untouched = stored.is_none();
    Ok(ObjectPlan {
        reference: reference.clone(),
        key,
        owner: context.routing.owner.clone(),
        current,
        planned,
        action,
        obj: obj.filter(|_| context.keep_obj).map(Arc::new),
        warnings,
        unwritable,
        degenerate_original: degenerate,
        canary_in_original,
        controller_sticks: controller_stuck,
        after_first_write,
        foreign_canary: None,
        strands_stable: None,
        notes: Vec::new(),
        changes,
        untouched,
        after,
        changed: Changed::default(),
    })
}

/// The writes that take `current` to `planned`: the original stored first when it is not yet
/// (a write of its own, as the controller makes it), then the planned object.
fn changes(key: &ObjectKey, current: &Arc<Value>, planned: &Arc<Value>) -> Vec<Change> {
    if data::same_routing(current, planned) {
        return vec![Change::Keep { key: key.clone(), object: Arc::clone(current) }];
    }
    let mut changes = Vec::new();
    // The controller stores the original in a write of its own first.
    let before = match (data::stored_original(current), data::stored_original(planned)) {
        (None, Some(stored)) => {
            let mut with_original = Value::clone(current);
            with_original["metadata"]["annotations"][data::ORIGINAL_SPEC_ANNOTATION] = Value::String(stored.into());
            let with_original = Arc::new(with_original);
            let after = Arc::clone(&with_original);
            changes.push(Change::Replace { key: key.clone(), before: Arc::clone(current), after });
            with_original
        }
        _ => Arc::clone(current),
    };
    if !data::same_routing(&before, planned) {
        changes.push(Change::Replace { key: key.clone(), before, after: Arc::clone(planned) });
    }
    changes
}

/// An original that parses but would wipe the object: no spec (`{}`, `null`, `{"spec":null}`)
/// or an empty one (`{"spec":{}}`).
pub fn holds_nothing(original: &Data) -> bool {
    original.spec.as_ref().is_none_or(|spec| spec.is_null() || spec.as_object().is_some_and(|m| m.is_empty()))
}

/// What the controller changes of the whole numbers of a stored original (`stored`, its text,
/// which holds them exact) when it writes `planned` (the original put back, or a script's result
/// that passes them through): it reads the original back as float64s, which hold whole numbers
/// beyond 2^53 only rounded. `how` says what happens to one (`is restored as`).
pub fn rounding_warning(stored: &str, planned: &Value, how: &str) -> Option<String> {
    // The common case, no such number in the text, is not parsed again.
    if !gojson::may_hold_inexact_integer(stored) {
        return None;
    }
    // Decoded as the controller decodes it (`Spec` fills the spec too), its numbers left exact.
    let original = Data::from_decoded(serde_json::from_str(stored).ok()?).ok()?;
    let rounded = gojson::rounded_integers(original.spec.as_ref()?, &planned["spec"]);
    const SHOWN: usize = 5;
    let mut list: Vec<String> =
        rounded.iter().take(SHOWN).map(|r| format!("spec{}: {} {how} {}", r.path, r.exact, r.written)).collect();
    match rounded.len() {
        0 => return None,
        n if n > SHOWN => list.push(format!("and {} more", n - SHOWN)),
        _ => {}
    }
    Some(format!(
        "{}: the controller reads the stored original as float64s, which hold whole numbers beyond 2^53 only rounded; keep such numbers below 2^53 or write them as strings",
        list.join(", ")
    ))
}

/// How many nulls of a result's spec the warning names; the others it counts.
const NULLS_NAMED: usize = 5;

/// The nulls inside a value: the paths of the first `NULLS_NAMED`, each after `path`
/// (`spec.a[2]`), in order, and how many there are in all.
fn null_paths(value: &Value, path: &mut String, named: &mut Vec<String>, count: &mut usize) {
    let at = path.len();
    match value {
        Value::Null => {
            *count += 1;
            if named.len() < NULLS_NAMED {
                named.push(path.clone());
            }
        }
        Value::Array(items) => items.iter().enumerate().for_each(|(i, item)| {
            let _ = write!(path, "[{i}]");
            null_paths(item, path, named, count);
            path.truncate(at);
        }),
        Value::Object(map) => map.iter().for_each(|(key, item)| {
            path.push('.');
            path.push_str(key);
            null_paths(item, path, named, count);
            path.truncate(at);
        }),
        _ => {}
    }
}

/// The nulls of a result's spec, named by their paths (the first few, and how many more).
fn nulls_in_spec(spec: &Value) -> Option<String> {
    let (mut named, mut count) = (Vec::new(), 0);
    null_paths(spec, &mut "spec".to_string(), &mut named, &mut count);
    let more = match count - named.len() {
        0 => String::new(),
        more => format!(" and {more} more"),
    };
    (count > 0).then(|| format!("{}{more}", named.join(", ")))
}

/// Whether `value` names Service `service` somewhere: a string that is its name, or a host name
/// under it (`name.namespace.svc.cluster.local`), as a VirtualService's destination host does.
/// Where a script sends traffic is up to it; a Service it can only name.
pub fn names_service(value: &Value, service: &str) -> bool {
    match value {
        Value::String(text) => text.strip_prefix(service).is_some_and(|rest| rest.is_empty() || rest.starts_with('.')),
        Value::Array(items) => items.iter().any(|item| names_service(item, service)),
        Value::Object(map) => map.values().any(|item| names_service(item, service)),
        _ => false,
    }
}

/// What in `object` routes to the canary already (see `canary_routing_in`) when it has no
/// stored original (its annotation removed mid-release, or routed by hand): the controller
/// stores that routing as the original, and the release's end puts it back.
pub fn canary_in_unstored(object: &Value, routing: &Routing) -> Option<String> {
    data::stored_original(object)
        .is_none()
        .then(|| canary_routing_in(&object["spec"], &routing.canary_service, &routing.stable_service))
        .flatten()
}

/// The warning about an object of `canary_in_unstored`, which routes to `canary`.
pub fn unstored_canary_routing(canary: &str) -> String {
    format!(
        "it has no stored original ({}) and routes to {canary} already: the controller stores this routing as its original, and the release's end puts it back, canary traffic and all; approve refuses it without --force",
        data::ORIGINAL_SPEC_ANNOTATION
    )
}

/// What in `spec` routes to the canary already, as messages name it: the canary Service (named
/// anywhere in it), or, where there is none (the same name as the stable one), its `canary`
/// subset (a destination of that host and subset, as the built-in VirtualService script routes).
pub fn canary_routing_in(spec: &Value, canary: &str, stable: &str) -> Option<String> {
    match canary == stable {
        false => names_service(spec, canary).then(|| format!("the canary Service {canary}")),
        true => has_canary_subset_destination(spec, canary).then(|| format!("the canary subset of Service {canary}")),
    }
}

/// Whether `value` holds a `destination` to `service`'s `canary` subset.
fn has_canary_subset_destination(value: &Value, service: &str) -> bool {
    match value {
        Value::Array(items) => items.iter().any(|item| has_canary_subset_destination(item, service)),
        Value::Object(map) => {
            let destination = &value["destination"];
            (destination["subset"] == "canary" && names_service(&destination["host"], service))
                || map.values().any(|item| has_canary_subset_destination(item, service))
        }
        _ => false,
    }
}

/// Whether `route` goes to the canary as the built-in VirtualService script routes it: to the
/// canary Service, or, when there is none (the same name as the stable one), to its `canary`
/// subset.
fn is_canary_route(obj: &Value, route: &Value) -> bool {
    let (canary, stable) = (obj["canaryService"].as_str(), obj["stableService"].as_str());
    let host = route["destination"]["host"].as_str().map(|host| host.split('.').next().unwrap_or(host));
    match canary == stable {
        true => route["destination"]["subset"] == "canary",
        false => host.is_some() && host == canary,
    }
}

/// Why the controller's own script fails on this object at this step, where this tool's
/// built-in script (written from it) gets past it: the controller would stick at the step, so
/// `approve` refuses to write it without `--force`.
fn controller_sticks(
    reference: &ObjectRef,
    script: &ResolvedScript,
    obj: &Value,
    strategy: &RouteStrategy,
) -> Option<String> {
    if !super::runs_builtin(script, &scripts::key_of(reference)) {
        return None;
    }
    let spec = &obj["data"]["spec"];
    match reference.kind.as_str() {
        "DestinationRule" if spec.get("subsets").is_none_or(Value::is_null) => Some(format!(
            "{reference}: the controller's own DestinationRule script fails on an object without spec.subsets (bad argument #1 to insert); this tool's built-in script creates the list, but a controller would stick at this step: add subsets: [] to the object"
        )),
        "VirtualService" => {
            let matched = strategy.matches.as_ref().is_some_and(|m| !m.is_empty());
            let (why, fix) = controller_vs_script_failure(spec, matched)?;
            Some(format!(
                "{reference}: the controller's own VirtualService script fails on this object at this step ({why}); this tool's built-in script gets past it, but a controller would stick at this step: {fix}"
            ))
        }
        _ => None,
    }
}

/// The most bytes an object's annotations may take, keys and values, that the API server admits
/// (`TotalAnnotationSizeLimitB`).
const ANNOTATIONS_LIMIT: usize = 256 << 10;

/// Why the API server refuses the object the controller writes, if its annotations (the stored
/// original among them) take more than it admits: the controller's write fails, and it sticks;
/// this tool's would fail too, so it is `ObjectPlan::unwritable`.
fn annotations_too_large(reference: &ObjectRef, planned: &Value) -> Option<String> {
    let annotations = planned["metadata"]["annotations"].as_object()?;
    let size: usize = annotations.iter().map(|(key, value)| key.len() + value.as_str().map_or(0, str::len)).sum();
    let original = annotations.get(data::ORIGINAL_SPEC_ANNOTATION).and_then(Value::as_str).map_or(0, str::len);
    (size > ANNOTATIONS_LIMIT).then(|| format!(
        "{reference}: its annotations take {size} bytes with the stored original ({} holds {original} of them), past the {ANNOTATIONS_LIMIT} the API server admits: the controller's write fails, and a controller would stick at this step; approve writes nothing (the API server would refuse it too): the object is too large for routing that stores its original in an annotation",
        data::ORIGINAL_SPEC_ANNOTATION
    ))
}

/// The rough edges of a script's result `planned` worth a warning (docs/controller-semantics.md
/// §4.6): labels or annotations dropped, nulls, weights that do not add up to 100 after flooring,
/// a rule sent to the canary twice, and more. `obj` is what the script was given (its `data` is
/// the original: empty labels and annotations left out).
fn routing_warnings(
    reference: &ObjectRef,
    script: &ResolvedScript,
    obj: &Value,
    planned: &Value,
    strategy: &RouteStrategy,
    controller_stuck: bool,
) -> Vec<String> {
    let original = &obj["data"];
    let mut warnings = Vec::new();
    // Keys other than spec, labels and annotations are ignored: `return obj` returns none.
    if original.get("spec").is_some() && planned.get("spec").is_none_or(Value::is_null) {
        warnings.push(format!(
            "{reference}: the script returns no spec (a table without `spec`, as `return obj` is), so the controller writes the object with none; return obj.data, changed"
        ));
    }
    // Returned labels and annotations replace the object's: a script that forgets them wipes them.
    if original.get("labels").is_some() && planned["metadata"].get("labels").is_none() {
        warnings.push(format!(
            "{reference}: the script returns no labels, so the controller removes all the object's labels"
        ));
    }
    let kept_annotations = planned["metadata"]["annotations"]
        .as_object()
        .is_some_and(|a| a.keys().any(|k| k != data::ORIGINAL_SPEC_ANNOTATION));
    if original.get("annotations").is_some() && !kept_annotations {
        warnings.push(format!(
            "{reference}: the script returns no annotations, so the controller removes the object's annotations"
        ));
    }
    if let Some(path) = planned.get("spec").and_then(nulls_in_spec) {
        warnings.push(format!(
            "{reference}: the result has null at {path} (an empty Lua table encodes as null); if the API server drops it, the controller finds a difference on every pass and the step never finishes"
        ));
    }
    // The built-in scripts ignore weights on the matches path; a custom script may not.
    let builtin = super::runs_builtin(script, &scripts::key_of(reference));
    let matched = strategy.matches.as_ref().is_some_and(|m| !m.is_empty());
    if let Some(traffic) =
        strategy.traffic.as_ref().filter(|_| builtin && matched && reference.kind == "VirtualService")
    {
        warnings.push(format!(
            "{reference}: traffic {traffic} is ignored: with matches the built-in script only adds canary match rules"
        ));
    }
    if reference.kind == "DestinationRule" {
        let subsets = planned["spec"]["subsets"].as_array().map(Vec::as_slice).unwrap_or_default();
        let canaries = subsets.iter().filter(|s| s["name"] == "canary").count();
        if canaries > 1 {
            warnings.push(format!(
                "{reference}: spec.subsets has {canaries} subsets named canary (the script appends one whatever is there): which one a route to subset canary gets is not defined, and Istio's validation may refuse the object, leaving the step stuck; rename or remove the object's own canary subset"
            ));
        }
    }
    if reference.kind != "VirtualService" {
        return warnings;
    }
    let stable = obj["stableService"].as_str().unwrap_or_default();
    // A weight step the script selects no rule for changes no weight (where the controller's
    // script gets that far: `controller_stuck`, see `controller_sticks`).
    if builtin
        && !controller_stuck
        && !matched
        && strategy.weights().0 != 0
        && !selects_a_rule(&original["spec"], stable)
    {
        warnings.push(format!(
            "{reference}: no rule without a match routes to Service {stable} (a destination host that is {stable} up to its first dot), so the built-in script changes no weight and this step sends nothing to the canary through it"
        ));
    }
    for protocol in ["http", "tcp", "tls"] {
        for (i, rule) in planned["spec"][protocol].as_array().into_iter().flatten().enumerate() {
            let routes = rule["route"].as_array().map(Vec::as_slice).unwrap_or_default();
            let weights: Vec<i64> = routes.iter().filter_map(|r| r["weight"].as_i64()).collect();
            if weights.len() == routes.len() && routes.len() > 1 {
                let total: i64 = weights.iter().sum();
                if total != 100 {
                    warnings.push(format!("{reference}: spec.{protocol}[{i}] route weights add up to {total}, not 100 (the script floors each weight)"));
                }
            }
            let canary_routes: Vec<&Value> = routes.iter().filter(|r| is_canary_route(obj, r)).collect();
            if canary_routes.len() > 1 {
                let share = canary_routes.iter().map(|r| r["weight"].as_i64()).sum::<Option<i64>>();
                let step = obj["canaryWeight"].as_i64().filter(|w| *w >= 0);
                let effect = match share.zip(step) {
                    Some((share, step)) if share != step => {
                        format!(": {share}% of its requests go to the canary, not the step's {step}%")
                    }
                    _ => String::new(),
                };
                warnings.push(format!(
                    "{reference}: spec.{protocol}[{i}] routes to the canary {} times (a rule with two stable-host routes is processed twice by the script){effect}",
                    canary_routes.len()
                ));
            }
        }
    }
    warnings
}

/// The rules of a VirtualService `spec` that the built-in script's weight path walks: those of
/// `http`, `tcp` and `tls` without a match, with their place (`spec.http[1]`).
fn rules_without_match(spec: &Value) -> impl Iterator<Item = (String, &Value)> {
    ["http", "tcp", "tls"].into_iter().flat_map(move |protocol| {
        let rules = spec[protocol].as_array().into_iter().flatten().enumerate();
        rules
            .filter(|(_, rule)| rule.get("match").is_none_or(Value::is_null))
            .map(move |(i, rule)| (format!("spec.{protocol}[{i}]"), rule))
    })
}

/// Where the controller's own VirtualService script fails on `spec` (the original the script
/// gets), which this tool's built-in script, written to get past it, does not: the first such
/// place, where the controller's stops (why, and what avoids it). `matched`: the step takes
/// the matches path, which inserts into `spec.http`; the weight path walks the routes of every
/// rule without a match and reads each route's destination host.
fn controller_vs_script_failure(spec: &Value, matched: bool) -> Option<(String, &'static str)> {
    if !spec.is_object() {
        return Some((
            "the obj has no spec (a map), as the object has none, or its stored original holds none or does not parse: attempt to index a nil value"
                .into(),
            "give the object a spec, or, where its annotation rollouts.kruise.io/original-spec-configuration holds the original, fix or remove that annotation",
        ));
    }
    if matched {
        return (!spec["http"].is_array()).then(|| {
            (
                "it has no spec.http, which a match step inserts into: bad argument #1 to insert".into(),
                "give it http: [], or route this step by weight",
            )
        });
    }
    rules_without_match(spec).find_map(|(at, rule)| {
        let Some(routes) = rule["route"].as_array() else {
            return Some((
                format!("{at} has neither a match nor a route (a delegate or a redirect, say), and the script walks the route of every rule without a match: bad argument #1 to ipairs"),
                "give that rule a match, which the script leaves alone (match: [{uri: {prefix: /}}] matches every request)",
            ));
        };
        let hostless = routes.iter().position(|route| !route["destination"]["host"].is_string())?;
        Some((
            format!("{at}.route[{hostless}] has no destination host, which the script reads of every route of a rule without a match"),
            "give the route its destination host",
        ))
    })
}

/// Whether the built-in script's weight path selects a rule of `spec`: one without a match with
/// a route whose destination host, cut at its first dot, is `stable` (`names_service`).
fn selects_a_rule(spec: &Value, stable: &str) -> bool {
    rules_without_match(spec).any(|(_, rule)| {
        rule["route"].as_array().into_iter().flatten().any(|route| names_service(&route["destination"]["host"], stable))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lua::{Limits, Printed};
    use serde_json::json;

    /// The context of a plan of step 1/1 of `routing`.
    fn step_context<'a>(
        routing: &'a Routing,
        action: &'a RoutingAction,
        limits: &'a Limits,
        printed: &'a Printed,
    ) -> Context<'a> {
        Context { routing, action, stage: "step 1/1", limits, printed, keep_obj: false, first: true }
    }

    #[test]
    fn where_the_controllers_virtualservice_script_fails_is_found_and_said_first() {
        let route = |host: &str| json!({"destination": {"host": host}});
        let fails = |spec: Value, matched| controller_vs_script_failure(&spec, matched).map(|(why, _)| why);
        // A delegate without a match, after a rule the weight path reads: the first failure.
        let delegating = json!({"http": [{"route": [route("db")]}, {"delegate": {"name": "db-v1"}}, {"route": [{}]}]});
        assert_eq!(
            fails(delegating.clone(), false).as_deref(),
            Some(
                "spec.http[1] has neither a match nor a route (a delegate or a redirect, say), and the script walks the route of every rule without a match: bad argument #1 to ipairs"
            )
        );
        // The matches path never walks them.
        assert_eq!(fails(delegating, true), None);
        let hostless = json!({"tcp": [{"match": [{"port": 1}]}, {"route": [route("db"), {"destination": {"port": {"number": 80}}}]}]});
        assert_eq!(
            fails(hostless, false).as_deref(),
            Some(
                "spec.tcp[1].route[1] has no destination host, which the script reads of every route of a rule without a match"
            )
        );
        let tcp_only = json!({"tcp": [{"route": [route("db")]}]});
        assert_eq!(fails(tcp_only.clone(), false), None);
        assert_eq!(
            fails(tcp_only, true).as_deref(),
            Some("it has no spec.http, which a match step inserts into: bad argument #1 to insert")
        );
        assert!(fails(Value::Null, false).unwrap().starts_with("the obj has no spec"));
        assert_eq!(fails(json!({"http": []}), true), None);
    }

    #[test]
    fn the_controller_sticks_where_its_own_script_fails_and_the_built_in_one_does_not() {
        let sticks = |kind: &str, builtin: bool, spec: Value| {
            let (reference, script) = reference_and_script(kind, builtin);
            controller_sticks(&reference, &script, &json!({"data": {"spec": spec}}), &RouteStrategy::default())
        };
        let stuck = sticks("DestinationRule", true, json!({"host": "web"})).unwrap();
        assert!(stuck.starts_with("DestinationRule/web: the controller's own DestinationRule script fails"), "{stuck}");
        assert_eq!(sticks("DestinationRule", true, json!({"host": "web", "subsets": []})), None);
        let stuck = sticks("VirtualService", true, Value::Null).unwrap();
        assert!(stuck.contains("(the obj has no spec"), "{stuck}");
        assert_eq!(sticks("VirtualService", true, json!({"http": []})), None);
        // A script of the user's own: what it does is its own.
        assert_eq!(sticks("DestinationRule", false, json!({"host": "web"})), None);
        assert_eq!(sticks("VirtualService", false, Value::Null), None);
    }

    #[test]
    fn annotations_past_what_the_api_server_admits_are_found_with_the_original_among_them() {
        let (reference, _) = reference_and_script("VirtualService", true);
        let annotated = |original: usize, other: usize| json!({"metadata": {"annotations": {(data::ORIGINAL_SPEC_ANNOTATION): "x".repeat(original), "a": "y".repeat(other)}}});
        let key = data::ORIGINAL_SPEC_ANNOTATION.len() + 1;
        assert_eq!(annotations_too_large(&reference, &annotated(ANNOTATIONS_LIMIT - key - 10, 10)), None);
        let refused = annotations_too_large(&reference, &annotated(ANNOTATIONS_LIMIT - key - 10, 11)).unwrap();
        assert!(
            refused.starts_with(&format!(
                "VirtualService/web: its annotations take 262145 bytes with the stored original ({} holds {} of them), past the 262144 the API server admits",
                data::ORIGINAL_SPEC_ANNOTATION,
                ANNOTATIONS_LIMIT - key - 10
            )),
            "{refused}"
        );
        assert_eq!(annotations_too_large(&reference, &json!({"metadata": {}})), None);
    }

    #[test]
    fn the_weight_path_selects_a_rule_by_its_host_up_to_the_first_dot() {
        let spec = |host: &str| json!({"http": [{"match": [{}], "route": [{"destination": {"host": "db"}}]}, {"route": [{"destination": {"host": host}}]}]});
        assert!(selects_a_rule(&spec("db.shop.svc.cluster.local"), "db"));
        assert!(!selects_a_rule(&spec("db-svc"), "db"), "a host that only starts with it");
        // A rule with a match is never selected.
        assert!(!selects_a_rule(&spec("other"), "db"));
    }

    #[test]
    fn the_nulls_are_named_by_their_paths() {
        let nulls = nulls_in_spec(&json!({"a": 1, "b": [{"c": 2}, {"d": null, "e": null}], "f": null}));
        assert_eq!(nulls.as_deref(), Some("spec.b[1].d, spec.b[1].e, spec.f"));
        assert_eq!(nulls_in_spec(&json!({"a": [1, 2], "b": {}})), None);
        assert_eq!(nulls_in_spec(&Value::Null).as_deref(), Some("spec"));
        let many = nulls_in_spec(&json!((0..8).map(|_| Value::Null).collect::<Vec<_>>()));
        assert_eq!(many.as_deref(), Some("spec[0], spec[1], spec[2], spec[3], spec[4] and 3 more"));
    }

    #[test]
    fn a_missing_object_fails_a_stage_that_routes_it_but_not_one_left_alone_or_restored() {
        let rollout = model::Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"strategy": {"canary": {"steps": [{"replicas": 1, "traffic": "20%"}], "trafficRoutings": [{"service": "web",
                "customNetworkRefs": [{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "web"}]}]}}}
        }))
        .unwrap();
        let routing = Routing::of_rollout(&rollout, "shop").unwrap();
        let reference = &routing.custom_refs()[0];
        let (limits, printed) = (Limits::default(), Printed::default());
        let plan_among = |objects: &ObjectIndex, action: &RoutingAction| {
            let context = step_context(&routing, action, &limits, &printed);
            plan_object(&context, objects, (1, reference), None, || Err("no script read".into()))
        };
        let plan = |action: &RoutingAction| plan_among(&ObjectIndex::default(), action);
        let error = plan(&RoutingAction::Route(RouteStrategy::default())).unwrap_err();
        assert_eq!(
            error.to_string(),
            "Rollout shop/web routes through VirtualService/web (networking.istio.io/v1beta1), but there is no such object in namespace shop"
        );
        // Named by its entry, for a file's line.
        let Error::Missing { owner, field, .. } = error else { panic!("{error:?}") };
        assert_eq!((owner, field.to_string()), (model::OwnerKind::Rollout, "customNetworkRefs[1]".into()));
        let left = plan(&RoutingAction::Leave).unwrap();
        assert!(matches!(left.action, Action::Keep(_)) && !left.changed() && left.current.is_null(), "{left:?}");
        // The controller's restore skips it (§3.4), and its step goes on.
        let skipped = plan(&RoutingAction::Restore).unwrap();
        assert!(matches!(skipped.action, Action::Keep("not found: the controller's restore skips it")), "{skipped:?}");
        assert!(!skipped.changed() && skipped.current.is_null(), "{skipped:?}");
        assert_eq!(
            skipped.warnings,
            [
                "VirtualService shop/web: there is no such object in namespace shop: the controller's restore skips it, but a step that routes it fails"
            ]
        );
        // One of its kind and name in another namespace (a manifest without one) is named.
        let mut elsewhere = ObjectIndex::default();
        elsewhere.insert(
            "default",
            json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "metadata": {"name": "web"}}),
        );
        assert_eq!(
            plan_among(&elsewhere, &RoutingAction::Route(RouteStrategy::default())).unwrap_err().to_string(),
            "Rollout shop/web routes through VirtualService/web (networking.istio.io/v1beta1), but there is no such object in namespace shop (one was read in namespace default: a manifest without metadata.namespace is put in -n's namespace, else in default)"
        );
        assert_eq!(
            left.warnings,
            [
                "VirtualService shop/web: there is no such object in namespace shop: the controller writes nothing here, but a step that routes it fails"
            ]
        );
    }

    #[test]
    fn a_service_is_named_by_its_name_or_a_host_name_under_it() {
        let spec = |host: &str| json!({"http": [{"route": [{"destination": {"host": host}}]}]});
        for named in ["web-canary", "web-canary.shop", "web-canary.shop.svc.cluster.local"] {
            assert!(names_service(&spec(named), "web-canary"), "{named}");
        }
        for other in ["web", "web-canary-2", "old-web-canary", "web-canary-x.shop"] {
            assert!(!names_service(&spec(other), "web-canary"), "{other}");
        }
        assert!(!names_service(&json!({"weight": 20, "on": true}), "web-canary"));
    }

    #[test]
    fn canary_routing_is_the_canary_service_or_without_one_the_stables_canary_subset() {
        let route = |host: &str, subset: Option<&str>| json!({"http": [{"route": [{"destination": {"host": "web"}, "weight": 80}, {"destination": {"host": host, "subset": subset}, "weight": 20}]}]});
        let found = |spec: &Value, canary: &str| canary_routing_in(spec, canary, "web");
        assert_eq!(found(&route("web-canary", None), "web-canary").as_deref(), Some("the canary Service web-canary"));
        assert_eq!(
            found(&route("web", Some("canary")), "web-canary"),
            None,
            "a subset counts only without a canary Service"
        );
        for host in ["web", "web.shop.svc.cluster.local"] {
            assert_eq!(
                found(&route(host, Some("canary")), "web").as_deref(),
                Some("the canary subset of Service web"),
                "{host}"
            );
        }
        for (host, subset) in [("web", Some("stable")), ("web", None), ("other", Some("canary"))] {
            assert_eq!(found(&route(host, subset), "web"), None, "{host} {subset:?}");
        }
        // A DestinationRule's canary subset routes nothing.
        assert_eq!(found(&json!({"host": "web", "subsets": [{"name": "canary", "labels": {}}]}), "web"), None);
    }

    #[test]
    fn a_step_routing_to_a_canary_service_known_missing_is_warned_of() {
        let rollout = |disable: bool| {
            model::Rollout::from_object(&json!({
                "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"strategy": {"canary": {"steps": [{"replicas": 1, "traffic": "20%"}], "trafficRoutings": [{"service": "web",
                    "customNetworkRefs": [{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "web"}]}],
                    "disableGenerateCanaryService": disable}}}
            }))
            .unwrap()
        };
        let (limits, printed) = (Limits::default(), Printed::default());
        let warnings = |routing: &Routing, objects: &ObjectIndex, action: &RoutingAction| {
            let context = step_context(routing, action, &limits, &printed);
            let reference = &routing.custom_refs()[0];
            let resolve = || crate::scripts::ScriptCatalog::default().resolve(reference);
            plan_object(&context, objects, (0, reference), None, resolve).unwrap().warnings
        };
        let missing = |warnings: Vec<String>| warnings.into_iter().find(|w| w.contains("does not exist"));
        let mut objects = ObjectIndex::default();
        objects.insert(
            "shop",
            json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "metadata": {"name": "web"},
                   "spec": {"hosts": ["web"], "http": [{"route": [{"destination": {"host": "web"}}]}]}}),
        );
        let routing = Routing::of_rollout(&rollout(false), "shop").unwrap();
        let step = RoutingAction::Route(RouteStrategy { traffic: Some("20%".into()), ..Default::default() });
        assert_eq!(missing(warnings(&routing, &objects, &step)), None, "not looked for");
        objects.insert_absent(ObjectKey::new("", "Service", "shop", "web-canary"));
        assert_eq!(
            missing(warnings(&routing, &objects, &step)).unwrap(),
            "Service web-canary does not exist: VirtualService shop/web routes to it; the controller creates it at a step that routes, before it writes any routing (to every provider; not for a blue-green release's final route to the new version), but without the controller the canary traffic fails"
        );
        // Without a stored original a restore leaves it alone.
        assert_eq!(missing(warnings(&routing, &objects, &RoutingAction::Restore)), None);
        // With canary = stable (subset canary) nothing tells a canary route.
        let same = Routing::of_rollout(&rollout(true), "shop").unwrap();
        objects.insert_absent(ObjectKey::new("", "Service", "shop", "web"));
        assert_eq!(missing(warnings(&same, &objects, &step)), None);
    }

    fn key() -> ObjectKey {
        ObjectKey::new("networking.istio.io", "VirtualService", "shop", "web")
    }

    #[test]
    fn an_object_without_its_original_gets_it_in_a_write_of_its_own() {
        let current = Arc::new(json!({"metadata": {"name": "web", "resourceVersion": "3"}, "spec": {"w": 100}}));
        let mut planned = Value::clone(&current);
        planned["spec"]["w"] = json!(80);
        planned["metadata"]["annotations"] = json!({(data::ORIGINAL_SPEC_ANNOTATION): "{\"spec\":{\"w\":100}}"});
        let planned = Arc::new(planned);
        let writes = changes(&key(), &current, &planned);
        assert_eq!(writes.len(), 2);
        let (Change::Replace { before: read, after: stored, .. }, Change::Replace { before, after, .. }) =
            (&writes[0], &writes[1])
        else {
            panic!("{writes:?}")
        };
        assert_eq!(stored["spec"], current["spec"]);
        assert_eq!(data::stored_original(stored), data::stored_original(&planned));
        // Each state of the object is held once, whatever the changes that name it.
        assert!(Arc::ptr_eq(read, &current) && Arc::ptr_eq(before, stored) && Arc::ptr_eq(after, &planned));
        // Already stored: one write; already as planned: none.
        assert_eq!(changes(&key(), &planned, &current).len(), 1);
        assert_eq!(changes(&key(), &planned, &planned), [Change::Keep { key: key(), object: planned.clone() }]);
    }

    /// A `kind` named web, and a script that is the built-in one or not.
    fn reference_and_script(kind: &str, builtin: bool) -> (ObjectRef, ResolvedScript) {
        let reference =
            ObjectRef { api_version: "networking.istio.io/v1beta1".into(), kind: kind.into(), name: "web".into() };
        let source = if builtin {
            ScriptSource::BuiltIn { path: "lua_configuration/x.lua".into() }
        } else {
            ScriptSource::Flag { path: "x.lua".into() }
        };
        let script = ResolvedScript {
            source,
            script: crate::lua::Script::new("x.lua", "return obj.data"),
            sha256: String::new(),
        };
        (reference, script)
    }

    /// The warnings of a routing result (`controller_sticks` among them).
    fn warnings_of(kind: &str, builtin: bool, original: Value, planned: Value, strategy: RouteStrategy) -> Vec<String> {
        let (reference, script) = reference_and_script(kind, builtin);
        let obj = json!({"data": original, "canaryService": "web", "stableService": "web"});
        let stuck = controller_sticks(&reference, &script, &obj, &strategy);
        let mut warnings = routing_warnings(&reference, &script, &obj, &planned, &strategy, stuck.is_some());
        warnings.extend(stuck);
        warnings
    }

    #[test]
    fn each_rough_edge_of_a_routing_result_is_warned_of_and_only_then() {
        let twenty = || RouteStrategy { traffic: Some("20%".into()), ..Default::default() };
        let route = |host: &str, subset: &str, weight: i64| json!({"destination": {"host": host, "subset": subset}, "weight": weight});
        let kept = json!({"metadata": {"labels": {"a": "b"}, "annotations": {"c": "d"}}, "spec": {"http": [{"route": [route("web", "stable", 80), route("web", "canary", 20)]}]}});
        let original = json!({"spec": {"subsets": []}, "labels": {"a": "b"}, "annotations": {"c": "d"}});
        assert_eq!(
            warnings_of("VirtualService", false, original.clone(), kept.clone(), twenty()),
            Vec::<String>::new()
        );

        // Labels and annotations the script does not return are removed; the stored original
        // alone does not count as keeping annotations.
        let stripped =
            json!({"metadata": {"annotations": {(data::ORIGINAL_SPEC_ANNOTATION): "{}"}}, "spec": kept["spec"]});
        let warnings = warnings_of("VirtualService", false, original.clone(), stripped.clone(), twenty());
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("returns no labels") && warnings[1].contains("returns no annotations"));
        // An original without them loses nothing.
        assert_eq!(warnings_of("VirtualService", false, json!({"spec": {}}), stripped, twenty()), Vec::<String>::new());

        // A result without spec (`return obj`) writes the object with none.
        let specless = json!({"metadata": kept["metadata"]});
        let warnings = warnings_of("VirtualService", false, original.clone(), specless.clone(), twenty());
        assert!(warnings.len() == 1 && warnings[0].contains("the script returns no spec"), "{warnings:?}");
        assert_eq!(
            warnings_of(
                "VirtualService",
                false,
                json!({"labels": {"a": "b"}, "annotations": {"c": "d"}}),
                specless,
                twenty()
            ),
            Vec::<String>::new(),
            "none to lose"
        );

        let mut with_null = kept.clone();
        with_null["spec"]["hosts"] = json!(["a", null]);
        let warnings = warnings_of("VirtualService", false, original.clone(), with_null, twenty());
        assert!(warnings[0].contains("has null at spec.hosts[1]"), "{warnings:?}");

        // The controller's DestinationRule script fails without spec.subsets; ours does not.
        let rule = json!({"metadata": kept["metadata"], "spec": {"subsets": [{"name": "canary"}]}});
        for no_subsets in [json!({"spec": {"host": "web"}}), json!({"spec": {"subsets": null}}), json!({})] {
            let mut original = no_subsets;
            original["labels"] = json!({"a": "b"});
            original["annotations"] = json!({"c": "d"});
            let warnings = warnings_of("DestinationRule", true, original, rule.clone(), twenty());
            assert!(warnings.len() == 1 && warnings[0].contains("without spec.subsets"), "{warnings:?}");
        }
        assert_eq!(warnings_of("DestinationRule", false, json!({}), rule.clone(), twenty()), Vec::<String>::new());
        let with_subsets = json!({"spec": {"subsets": []}, "labels": {"a": "b"}, "annotations": {"c": "d"}});
        assert_eq!(
            warnings_of("DestinationRule", true, with_subsets.clone(), rule.clone(), twenty()),
            Vec::<String>::new()
        );
        // A canary subset of the object's own, and the one the script appends.
        let mut twice = rule;
        twice["spec"]["subsets"] = json!([{"name": "canary"}, {"name": "stable"}, {"name": "canary"}]);
        let warnings = warnings_of("DestinationRule", true, with_subsets, twice, twenty());
        assert!(warnings.len() == 1 && warnings[0].contains("spec.subsets has 2 subsets named canary"), "{warnings:?}");

        // Weights that do not add up to 100, and a rule sent to the canary twice.
        let mut uneven = kept.clone();
        uneven["spec"]["tcp"] =
            json!([{"route": [route("web", "stable", 67), route("web", "canary", 33), route("web", "canary", 33)]}]);
        let routed = json!({"spec": {"tcp": [{"route": [route("web", "stable", 100)]}]}, "labels": {"a": "b"}, "annotations": {"c": "d"}});
        let warnings = warnings_of("VirtualService", true, routed, uneven, twenty());
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("spec.tcp[0] route weights add up to 133"), "{warnings:?}");
        assert!(warnings[1].contains("spec.tcp[0] routes to the canary 2 times (a rule"), "{warnings:?}");
    }

    #[test]
    fn a_failing_script_names_the_originals_stored_before_it_ran() {
        let rollout = model::Rollout::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"strategy": {"canary": {"steps": [{"replicas": 1, "traffic": "20%"}], "trafficRoutings": [{"service": "web",
                "customNetworkRefs": [{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "web"},
                                      {"apiVersion": "networking.istio.io/v1beta1", "kind": "DestinationRule", "name": "web"}]}]}}}
        }))
        .unwrap();
        let routing = Routing::of_rollout(&rollout, "shop").unwrap();
        let object = |kind: &str, annotations: Value| {
            json!({"apiVersion": "networking.istio.io/v1beta1", "kind": kind,
                   "metadata": {"name": "web", "namespace": "shop", "annotations": annotations}})
        };
        let mut objects = ObjectIndex::default();
        objects.insert("shop", object("VirtualService", json!({})));
        objects.insert("shop", object("DestinationRule", json!({(data::ORIGINAL_SPEC_ANNOTATION): "{}"})));
        assert_eq!(
            originals_stored_first(&routing, &objects).as_deref(),
            Some(
                "before any script runs, the controller stores the annotation rollouts.kruise.io/original-spec-configuration on VirtualService/web, and keeps it: those writes are made although the step fails"
            )
        );
        objects.insert("shop", object("VirtualService", json!({(data::ORIGINAL_SPEC_ANNOTATION): "{}"})));
        assert_eq!(originals_stored_first(&routing, &objects), None);
    }

    #[test]
    fn a_rule_sent_to_the_canary_service_twice_is_warned_of_though_its_weights_add_up() {
        // The audit's case (s33 custom F1): two stable routes of 50 at a 20% step: 32 + 32 + 16 + 20.
        let reference = ObjectRef {
            api_version: "networking.istio.io/v1beta1".into(),
            kind: "VirtualService".into(),
            name: "web".into(),
        };
        let script = ResolvedScript {
            source: ScriptSource::BuiltIn { path: "lua_configuration/x.lua".into() },
            script: crate::lua::Script::new("x.lua", "return obj.data"),
            sha256: String::new(),
        };
        let route = |host: &str, weight: i64| json!({"destination": {"host": host}, "weight": weight});
        let planned = json!({"spec": {"http": [{"route": [route("web", 32), route("web.shop.svc.cluster.local", 32), route("web-canary", 16), route("web-canary.shop", 20)]}]}});
        let stable = json!({"http": [{"route": [route("web", 50), route("web.shop.svc.cluster.local", 50)]}]});
        let obj = json!({"data": {"spec": stable}, "canaryWeight": 20, "canaryService": "web-canary", "stableService": "web"});
        let twenty = RouteStrategy { traffic: Some("20%".into()), ..Default::default() };
        assert_eq!(
            routing_warnings(&reference, &script, &obj, &planned, &twenty, false),
            [
                "VirtualService/web: spec.http[0] routes to the canary 2 times (a rule with two stable-host routes is processed twice by the script): 36% of its requests go to the canary, not the step's 20%"
            ]
        );
        // One canary route is the script's normal result; a subset named canary is not the
        // canary when there is a canary Service.
        let once = json!({"spec": {"http": [{"route": [route("web", 80), route("web-canary", 20), {"destination": {"host": "web", "subset": "canary"}, "weight": 0}]}]}});
        assert_eq!(routing_warnings(&reference, &script, &obj, &once, &twenty, false), Vec::<String>::new());
        // Traffic beside matches: the built-in script takes the matches path alone.
        let matched =
            RouteStrategy { matches: Some(vec![json!({"headers": [{"name": "x", "value": "1"}]})]), ..twenty.clone() };
        assert_eq!(
            routing_warnings(&reference, &script, &obj, &once, &matched, false),
            [
                "VirtualService/web: traffic 20% is ignored: with matches the built-in script only adds canary match rules"
            ]
        );
        let custom = ResolvedScript { source: ScriptSource::Flag { path: "vs.lua".into() }, ..script };
        assert_eq!(routing_warnings(&reference, &custom, &obj, &once, &matched, false), Vec::<String>::new());
    }

    #[test]
    fn whole_numbers_written_back_rounded_are_warned_of_five_at_most() {
        let stored = r#"{"spec":{"big":9007199254740993,"list":[1,-9007199254740995],"small":9007199254740992}}"#;
        let read_back = |stored: &str| {
            Data::original_of(&json!({"metadata": {"annotations": {(data::ORIGINAL_SPEC_ANNOTATION): stored}}}))
                .unwrap()
                .apply_to(&json!({}), None)
        };
        assert_eq!(
            rounding_warning(stored, &read_back(stored), "is restored as").unwrap(),
            "spec.big: 9007199254740993 is restored as 9007199254740992, spec.list[1]: -9007199254740995 is restored as -9007199254740996: the controller reads the stored original as float64s, which hold whole numbers beyond 2^53 only rounded; keep such numbers below 2^53 or write them as strings"
        );
        // The stored original decoded as the controller decodes it.
        let capitalised = stored.replace("spec", "Spec");
        assert!(
            rounding_warning(&capitalised, &read_back(stored), "x")
                .unwrap()
                .starts_with("spec.big: 9007199254740993 x 9007199254740992, ")
        );
        // Nothing rounded: none beyond 2^53, none passed through, or a stored original that does not decode.
        let exact = read_back(r#"{"spec":{"big":9007199254740992,"id":"12345678901234567890"}}"#);
        assert_eq!(
            rounding_warning(r#"{"spec":{"big":9007199254740992,"id":"12345678901234567890"}}"#, &exact, "x"),
            None
        );
        assert_eq!(rounding_warning(stored, &json!({"spec": {"big": 1, "list": []}}), "x"), None);
        assert_eq!(rounding_warning(r#"{"spec":{"big":9007199254740993}"#, &read_back(stored), "x"), None);
        assert_eq!(
            rounding_warning(r#"{"spec":9007199254740993}"#, &json!({"spec": 9007199254740992.0}), "x")
                .map(|w| w.starts_with("spec: ")),
            Some(true)
        );
        // Past five, the rest are counted.
        let many: Vec<i64> = (0..8).map(|i| 9007199254740993 + 2 * i).collect();
        let stored = json!({"spec": {"many": many}}).to_string();
        let warning = rounding_warning(&stored, &read_back(&stored), "is written back as").unwrap();
        assert!(
            warning.starts_with("spec.many[0]: 9007199254740993 is written back as 9007199254740992, spec.many[1]: "),
            "{warning}"
        );
        assert!(
            warning.contains(
                ", spec.many[4]: 9007199254741001 is written back as 9007199254741000, and 3 more: the controller"
            ),
            "{warning}"
        );
    }

    #[test]
    fn originals_that_hold_nothing_are_degenerate() {
        let original = |text: &str| {
            let object = json!({"metadata": {"annotations": {(data::ORIGINAL_SPEC_ANNOTATION): text}}});
            Data::original_of(&object).unwrap()
        };
        for text in ["{}", "null", "{\"spec\":null}", "{\"spec\":{}}", "{\"labels\":{\"a\":\"b\"}}"] {
            assert!(holds_nothing(&original(text)), "{text}");
        }
        for text in ["{\"spec\":{\"hosts\":[\"a\"]}}", "{\"spec\":[]}", "{\"spec\":1}"] {
            assert!(!holds_nothing(&original(text)), "{text}");
        }
    }
}
