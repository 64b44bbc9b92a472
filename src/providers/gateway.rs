//! Gateway API routing (HTTPRoute) as the controller does it (docs/controller-semantics.md §7).
//! There is no script: at every step the controller rewrites the route's `spec.rules` in Go
//! (weight mode or match mode), and when the release ends it puts the stable backends back
//! (finalise). It works on the rules as gateway-api v0.8.1's Go types hold them
//! (`model::http_route`) and replaces the whole object when they change. Pure: the caller reads
//! the route and writes it.

pub mod testcase;

use super::{Action, Changed, ObjectPlan};
use crate::change::Change;
use crate::error::Error;
use crate::model::http_route::{self, GROUP, KIND};
use crate::model::{
    ObjectIndex, ObjectKey, ObjectRef, OwnerKind, RouteStrategy, Routing, RoutingAction, TrafficRoutingRef,
};
use serde_json::{Value, json};
use std::sync::Arc;

/// One `gateway` ref of a Rollout or TrafficRouting, with what planning it needs.
#[derive(Clone, Copy, Debug)]
pub struct GatewayRoute<'a> {
    pub namespace: &'a str,
    /// `gateway.httpRouteName`.
    pub http_route: &'a str,
    pub stable_service: &'a str,
    /// `<stable>-canary`, or the stable Service itself for a TrafficRouting or with
    /// `disableGenerateCanaryService`.
    pub canary_service: &'a str,
    /// Who routes: said in warnings about canary = stable.
    pub owner: OwnerKind,
    /// Whether the owner has a release in progress: with canary = stable only that tells a
    /// routed route from one no release touched.
    pub releasing: bool,
}

/// How the controller computes the rules at a stage (docs/controller-semantics.md §7.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode<'s> {
    /// Stable and canary backendRefs weighted `100 - w` and `w`.
    Weight(i32),
    /// A canary rule per stable rule, with the step's matches.
    Match(&'s [Value]),
    /// Canary backendRefs removed, the stable weight set to 1 (docs/controller-semantics.md §7.5).
    Finalise,
}

/// One stage of one HTTPRoute.
#[derive(Clone, Debug, PartialEq)]
pub struct StagePlan {
    /// The HTTPRoute once the controller has converged on the stage; `None` when there is none.
    pub route: Option<Value>,
    /// Whether the controller writes it: a replace of the whole object, conditional on the
    /// resourceVersion it read.
    pub writes: bool,
    pub warnings: Vec<String>,
    /// Why the API server refuses the write (said among the warnings too): the route stays as
    /// it was, and the controller at this stage.
    pub refused: Option<String>,
}

impl GatewayRoute<'_> {
    /// `HTTPRoute shop/web`.
    pub fn describe(&self) -> String {
        format!("HTTPRoute {}/{}", self.namespace, self.http_route)
    }

    fn same_service(&self) -> bool {
        self.canary_service == self.stable_service
    }

    /// What the controller's restore of the route's rules does (`restore` says it).
    pub fn restore_does(&self) -> String {
        match self.same_service() {
            true => format!(
                "the controller's restore of its rules: every backendRef to Service {} removed (canary and stable Service are one: {}), every rule left without a backendRef deleted",
                self.stable_service,
                self.same_service_reason()
            ),
            false => "the controller's restore of its rules: the canary backendRefs removed, the stable one's weight set to 1, every rule left without a backendRef deleted".into(),
        }
    }

    /// Why canary and stable are the same Service, for warnings.
    fn same_service_reason(&self) -> &'static str {
        self.owner.why_canary_is_stable()
    }
}

/// How the controller computes the rules for what it does at a stage; `None` when it leaves
/// the route alone.
pub fn mode(action: &RoutingAction) -> Option<Mode<'_>> {
    let strategy = match action {
        RoutingAction::Leave => return None,
        RoutingAction::Restore => return Some(Mode::Finalise),
        RoutingAction::Route(strategy) => strategy,
    };
    let weight = strategy.traffic.as_ref().map(|_| strategy.weights().0 as i32);
    match strategy.matches.as_deref() {
        // A TrafficRouting's `weight: -1` reaches the provider as -1: its restore.
        _ if weight == Some(-1) => Some(Mode::Finalise),
        Some(matches) if !matches.is_empty() => Some(Mode::Match(matches)),
        Some(_) | None => weight.map(Mode::Weight),
    }
}

/// What the controller converges to for one stage, from the route as it is (`None` when it
/// does not exist): the rules computed in the stage's mode, compared with the current ones as
/// Go compares them, and the whole object replaced when they differ.
pub fn plan_stage(route: &GatewayRoute, current: Option<&Value>, action: &RoutingAction) -> Result<StagePlan, Error> {
    let unchanged = |warnings| StagePlan { route: current.cloned(), writes: false, warnings, refused: None };
    let Some(mode) = mode(action) else { return Ok(unchanged(Vec::new())) };
    let Some(current) = current else {
        return match mode {
            // Finalise takes a missing route as restored.
            Mode::Finalise => Ok(unchanged(Vec::new())),
            _ => Err(Error::Input(format!(
                "{} not found: the controller's step fails until it exists",
                route.describe()
            ))),
        };
    };
    let decoded =
        http_route::decode(&current["spec"]).map_err(|e| Error::Input(format!("{}: {e}", route.describe())))?;
    let rules = decoded.spec.get("rules").and_then(Value::as_array);
    let current_rules = rules.map(Vec::as_slice).unwrap_or_default();
    let mut warnings = match action {
        RoutingAction::Route(strategy) => ignored_fields(strategy, mode),
        _ => Vec::new(),
    };
    warnings.extend(match mode {
        Mode::Weight(weight) => weight_warnings(route, current_rules, weight),
        Mode::Match(matches) => match_warnings(route, current_rules, matches),
        Mode::Finalise => finalise_warnings(route, current_rules),
    });
    // Go builds the list by appending to a nil slice: no rule is nil, which differs from `[]`.
    let desired = Some(desired_rules(route, mode, current_rules)).filter(|d| !d.is_empty());
    if desired.as_ref() == rules {
        return Ok(unchanged(warnings));
    }
    // No rule: the update leaves `rules` out, and the API server stores the CRD's default.
    let stored = desired.unwrap_or_else(|| {
        warnings.push(no_rule_left_warning(route));
        http_route::default_rules()
    });
    if Some(&stored) == rules {
        // The controller writes again (nil is not the default rule), and nothing changes.
        return Ok(unchanged(warnings));
    }
    // A restore takes one canary ref a pass (with canary = stable, one ref of it: B.6, B.7).
    let passes = CONVERGING_PASSES + current_rules.iter().map(|rule| refs(rule).len()).sum::<usize>();
    let mut spec = decoded.spec;
    spec["rules"] = Value::Array(stored);
    warnings.extend(round_trip_warnings(&decoded.dropped, &spec));
    let mut planned = current.clone();
    planned["spec"] = http_route::encode(&spec);
    // The API server stores each update with the CRD's defaults (a rule whose empty `matches`
    // the update left out gets the catch-all match), and the controller's next pass works from
    // that: it writes until a pass finds the rules as it wants them. The plan is its last write.
    for pass in 1.. {
        let mut stored = planned.clone();
        http_route::as_stored(&mut stored);
        let stored = http_route::decode(&stored["spec"])
            .map_err(|e| Error::Input(format!("{} as stored: {e}", route.describe())))?
            .spec;
        let stored_rules = stored["rules"].as_array().map(Vec::as_slice).unwrap_or_default();
        let mut next = desired_rules(route, mode, stored_rules);
        if next.is_empty() {
            // A pass that leaves no rule writes none, and the CRD's default is stored.
            let warning = no_rule_left_warning(route);
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
            next = http_route::default_rules();
        }
        if next == stored_rules {
            return Ok(written(route, current, planned, warnings));
        }
        if pass == passes {
            break;
        }
        spec = stored;
        spec["rules"] = Value::Array(next);
        planned["spec"] = http_route::encode(&spec);
    }
    warnings.push(format!(
        "{}: the rules the controller writes at this stage are not stored as written, and each of its passes writes them again: the step never completes; the plan shows its last write",
        route.describe()
    ));
    Ok(written(route, current, planned, warnings))
}

/// The plan of a stage that writes `planned`, with what the API server would refuse of it: the
/// HTTPRoute CRD's rules it breaks (the step never finishes: refused), and matches past what
/// gateway-api before v1.1 allows (warned of), each only where the route as read keeps them (one
/// stored under another CRD: this write is not what breaks them).
fn written(route: &GatewayRoute, current: &Value, planned: Value, mut warnings: Vec<String>) -> StagePlan {
    let as_stored = |object: &Value| {
        let mut stored = object.clone();
        http_route::as_stored(&mut stored);
        stored
    };
    let (current, stored) = (as_stored(current), as_stored(&planned));
    let broken_by_write = http_route::crd_rules_broken(&stored["spec"]);
    let refused = (!broken_by_write.is_empty() && http_route::crd_rules_broken(&current["spec"]).is_empty()).then(|| {
        format!(
            "{} as the controller writes it breaks the HTTPRoute CRD's rules (gateway-api v0.8 to v1): {}; the API server refuses the update, so the step never finishes (`--dry-run=server` asks the cluster's own CRD)",
            route.describe(),
            broken_by_write.join("; ")
        )
    });
    warnings.extend(refused.clone());
    let past_v1_0 = http_route::matches_past_v1_0(&stored["spec"]);
    if refused.is_none() && !past_v1_0.is_empty() && http_route::matches_past_v1_0(&current["spec"]).is_empty() {
        warnings.push(format!(
            "{} as the controller writes it has more matches in a rule than gateway-api before v1.1 allows (8 a rule; 64 from v1.1 on): {}; a cluster with such a CRD refuses the update, and the step never finishes (`--dry-run=server` asks the cluster's own CRD)",
            route.describe(),
            past_v1_0.join("; ")
        ));
    }
    StagePlan { route: Some(planned), writes: true, warnings, refused }
}

/// How many writes of one stage the plan follows (besides one a backendRef, for a restore): the
/// controller's first, and the API server's defaults settle after one more.
const CONVERGING_PASSES: usize = 3;

/// The rules the controller computes for `mode` from `rules`, the route's as stored.
fn desired_rules(route: &GatewayRoute, mode: Mode, rules: &[Value]) -> Vec<Value> {
    let (stable, canary) = (route.stable_service, route.canary_service);
    match mode {
        Mode::Weight(weight) => weight_rules(rules, weight, stable, canary),
        Mode::Match(matches) => match_rules(rules, matches, stable, canary),
        Mode::Finalise => finalise_rules(rules, stable, canary),
    }
}

/// Plans stages in order, each from the route the previous one left, as the controller's
/// rules carry over from step to step.
pub fn plan_stages(
    route: &GatewayRoute,
    current: Option<&Value>,
    actions: &[RoutingAction],
) -> Result<Vec<StagePlan>, Error> {
    let mut current = current.cloned();
    let mut plans = Vec::with_capacity(actions.len());
    for action in actions {
        let plan = plan_stage(route, current.as_ref(), action)?;
        current = plan.route.clone();
        plans.push(plan);
    }
    Ok(plans)
}

/// The controller's finalise.
pub fn restore(route: &GatewayRoute, current: Option<&Value>) -> Result<StagePlan, Error> {
    plan_stage(route, current, &RoutingAction::Restore)
}

/// What `restore` does with a route.
#[derive(Clone, Debug, PartialEq)]
pub enum RouteRestore {
    /// The controller's finalise, written; the route's own warnings come first.
    Write(StagePlan),
    /// Left as it is: why, and what the controller's own finalise would do to it (the warnings
    /// of its plan; none when it would do nothing).
    Leave { why: String, warnings: Vec<String> },
}

/// The controller finalises a route only at the end of a release (and at its steps without
/// traffic): `restore` runs that finalise on a route a release touched, and leaves alone one
/// that shows no sign of a release, where it would only delete the user's rules without
/// backendRefs (and, with canary = stable, every backendRef to the Service).
pub fn restoration(route: &GatewayRoute, live: &Value) -> Result<RouteRestore, Error> {
    let plan = restore(route, Some(live))?;
    let routed = route.routed(live);
    if plan.writes && routed {
        // The route's own warnings name the rules without backendRefs it deletes.
        let warnings = route_warnings(route, live).into_iter().chain(plan.warnings).collect();
        return Ok(RouteRestore::Write(StagePlan { warnings, ..plan }));
    }
    let why = match (routed, route.same_service()) {
        (true, _) => "the controller's restore writes nothing to it".to_string(),
        (false, false) => format!("it has no backendRef to the canary Service {}", route.canary_service),
        (false, true) => format!(
            "canary and stable Service are both {} ({}), so its backendRefs cannot show a release, and its {} has none in progress",
            route.stable_service,
            route.same_service_reason(),
            route.owner
        ),
    };
    let warnings = match plan.writes || !plan.warnings.is_empty() {
        true => {
            let rules = live["spec"]["rules"].as_array().map(Vec::as_slice).unwrap_or_default();
            backendless_rule_warnings(rules).into_iter().chain(plan.warnings).collect()
        }
        false => Vec::new(),
    };
    Ok(RouteRestore::Leave { why, warnings })
}

impl<'a> GatewayRoute<'a> {
    /// The `gateway` ref of `routing`.
    pub fn of(routing: &'a Routing, http_route: &'a str) -> GatewayRoute<'a> {
        GatewayRoute {
            namespace: &routing.owner.namespace,
            http_route,
            stable_service: &routing.stable_service,
            canary_service: &routing.canary_service,
            owner: routing.owner.kind,
            releasing: routing.releasing,
        }
    }

    pub fn key(&self) -> ObjectKey {
        ObjectKey::new(GROUP, KIND, self.namespace, self.http_route)
    }

    /// The route as a ref, at `object`'s apiVersion (v1 when it has none: null, not found).
    pub fn reference(&self, object: &Value) -> ObjectRef {
        let api_version = object["apiVersion"].as_str().map_or_else(|| format!("{GROUP}/v1"), str::to_string);
        ObjectRef { api_version, kind: KIND.into(), name: self.http_route.into() }
    }

    /// Whether the route shows no sign of a release: no backendRef to the canary Service.
    /// With canary = stable nothing tells (a routed rule is the stable one with another
    /// weight), and the route counts as untouched.
    pub fn untouched(&self, route: &Value) -> bool {
        let rules = route["spec"]["rules"].as_array().map(Vec::as_slice).unwrap_or_default();
        self.same_service() || !rules.iter().any(|rule| position(rule, self.canary_service).is_some())
    }

    /// Whether a release has routed the route, as far as can be told: it has a backendRef to
    /// the canary Service, or, with canary = stable, the owner has a release in progress.
    fn routed(&self, route: &Value) -> bool {
        match self.same_service() {
            true => self.releasing,
            false => !self.untouched(route),
        }
    }

    /// How the controller rewrites the route at a stage, for the plan.
    fn action(&self, mode: Option<Mode>) -> Action {
        let (stable, canary) = (self.stable_service, self.canary_service);
        let routing = "the controller's Gateway API routing (no script)";
        // With canary = stable, what the controller does to the canary's backendRef it does to
        // the stable one: the heading says the outcome, the warnings say why it hurts.
        let how = match (mode, self.same_service()) {
            (None, _) => return Action::Keep("the controller writes nothing here: left alone"),
            (Some(Mode::Weight(w)), false) => format!("weight mode: {stable} {}, {canary} {w}", 100i32.wrapping_sub(w)),
            (Some(Mode::Weight(w)), true) => {
                format!("weight mode: {stable} {w} (canary and stable are the same Service, so traffic is not split)")
            }
            (Some(Mode::Match(matches)), false) => format!(
                "match mode: a canary rule to {canary} per rule of {stable}, with the step's {} match{}",
                matches.len(),
                if matches.len() == 1 { "" } else { "es" }
            ),
            (Some(Mode::Match(_)), true) => format!(
                "match mode: the rules to {stable} are dropped and no canary rule is made (canary and stable are the same Service)"
            ),
            (Some(Mode::Finalise), false) => {
                return Action::RestoreRules(format!(
                    "{routing}, restore: {canary} removed, {stable} weight 1, rules left without backendRefs deleted"
                ));
            }
            (Some(Mode::Finalise), true) => {
                return Action::RestoreRules(format!(
                    "{routing}, restore: every backendRef to {stable} removed (canary and stable are the same Service), rules left without backendRefs deleted"
                ));
            }
        };
        Action::Rules(format!("{routing}, {how}"))
    }
}

/// Plans the HTTPRoute of `routing`'s `gateway` ref at one stage from `current`: the route as
/// read, or as the stage `after` left it (the rules carry over from stage to stage). A
/// missing route is an error where the stage routes it, as it stops the controller's step; a
/// restore skips it. Warnings about the route as a whole come with a plan that starts from the
/// route as read.
pub fn plan_object(
    objects: &ObjectIndex,
    routing: &Routing,
    http_route: &str,
    action: &RoutingAction,
    current: Option<&Arc<Value>>,
    after: Option<String>,
) -> Result<ObjectPlan, Error> {
    let route = GatewayRoute::of(routing, http_route);
    let key = route.key();
    let where_ = format!("{} routes through {key}", routing.owner);
    let named_by = (routing.owner.kind, TrafficRoutingRef::http_route_field());
    let (current, absent) = super::starting_object(current, action, &key, objects, &where_, named_by)?;
    let current = &current;
    let mut warnings: Vec<String> = absent.into_iter().collect();
    // A route not found is one the controller's finalise skips (B.6).
    let found = Some(current.as_ref()).filter(|c| !c.is_null());
    let stage = plan_stage(&route, found, action)?;
    // A route the stage leaves as it is stays one object, shared.
    let planned = match stage.writes {
        true => Arc::new(stage.route.expect("a plan from a route has a route")),
        false => Arc::clone(current),
    };
    if after.is_none() && !current.is_null() {
        warnings.extend(route_warnings(&route, current));
    }
    warnings.extend(stage.warnings);
    // Only a step's canary backendRefs: a restore removes them, and with canary = stable every
    // backendRef is the stable one's.
    let routes = matches!(mode(action), Some(Mode::Weight(_) | Mode::Match(_)));
    if routes && !route.untouched(&planned) {
        warnings.extend(super::canary_service_warning(routing, objects, &key));
    }
    let changes = match stage.writes {
        true => vec![Change::Replace { key: key.clone(), before: Arc::clone(current), after: Arc::clone(&planned) }],
        false => vec![Change::Keep { key: key.clone(), object: Arc::clone(current) }],
    };
    let strands_stable = strands_stable(&route, current, &planned);
    Ok(ObjectPlan {
        reference: route.reference(current),
        key,
        owner: routing.owner.clone(),
        untouched: route.untouched(current),
        current: Arc::clone(current),
        planned,
        action: match found {
            None if matches!(action, RoutingAction::Restore) => {
                Action::Keep("not found: the controller's restore skips it")
            }
            _ => route.action(mode(action)),
        },
        obj: None,
        warnings,
        unwritable: stage.refused,
        degenerate_original: None,
        canary_in_original: None,
        controller_sticks: None,
        after_first_write: false,
        foreign_canary: None,
        strands_stable,
        notes: Vec::new(),
        changes,
        after,
        changed: Changed::default(),
    })
}

/// Whether writing `planned` over `current` leaves the stable Service without a rule: a match
/// step that drops every rule holding it, or the restore of a route whose canary and stable
/// Service are one (it removes that Service's every backendRef). The requests those rules
/// matched then go elsewhere or nowhere, and no restore brings the rules back. Said why.
pub fn strands_stable(route: &GatewayRoute, current: &Value, planned: &Value) -> Option<String> {
    let stable = route.stable_service;
    let routes_stable = |object: &Value| {
        object["spec"]["rules"]
            .as_array()
            .is_some_and(|rules| rules.iter().any(|rule| position(rule, stable).is_some()))
    };
    (routes_stable(current) && !routes_stable(planned)).then(|| {
        format!(
            "{}: no rule routes to Service {stable} any more: the requests its rules matched no longer reach it (they go to a rule's other backends where it has any, else get no route), and restoring the route does not bring them back",
            route.key()
        )
    })
}

/// The backendRefs of a rule (none when absent).
fn refs(rule: &Value) -> &[Value] {
    rule["backendRefs"].as_array().map(Vec::as_slice).unwrap_or_default()
}

fn refs_mut(rule: &mut Value) -> &mut Vec<Value> {
    match rule["backendRefs"] {
        Value::Array(ref mut refs) => refs,
        _ => unreachable!("only called on a rule with backendRefs"),
    }
}

/// A backendRef is Service `service` only with `kind: Service` (the group is not compared).
fn is_service(backend: &Value, service: &str) -> bool {
    backend["kind"] == "Service" && backend["name"] == service
}

/// The index of the first backendRef of the rule that is Service `service`.
fn position(rule: &Value, service: &str) -> Option<usize> {
    refs(rule).iter().position(|r| is_service(r, service))
}

/// Puts a Service backendRef into the rule: in place of the one of the same name, else at
/// the end.
fn set_ref(rule: &mut Value, backend: Value) {
    let name = backend["name"].as_str().unwrap_or_default().to_string();
    match position(rule, &name) {
        Some(i) => refs_mut(rule)[i] = backend,
        None => {
            if !rule["backendRefs"].is_array() {
                rule["backendRefs"] = json!([]);
            }
            refs_mut(rule).push(backend);
        }
    }
}

/// Weight mode (docs/controller-semantics.md §7.3): in every rule with the stable Service, stable
/// weight `100 - w` and canary weight `w`, the canary backendRef copied from the stable one when
/// the rule has none. Other backends keep their weights; rules without the stable Service stay as
/// they are.
fn weight_rules(rules: &[Value], weight: i32, stable: &str, canary: &str) -> Vec<Value> {
    rules
        .iter()
        .map(|rule| {
            let mut rule = rule.clone();
            let Some(s) = position(&rule, stable) else { return rule };
            let mut stable_ref = refs(&rule)[s].clone();
            let mut canary_ref = match position(&rule, canary) {
                Some(c) => refs(&rule)[c].clone(),
                None => {
                    let mut copy = stable_ref.clone();
                    copy["name"] = canary.into();
                    copy
                }
            };
            // int32 arithmetic, as in Go.
            stable_ref["weight"] = 100i32.wrapping_sub(weight).into();
            canary_ref["weight"] = weight.into();
            set_ref(&mut rule, stable_ref);
            set_ref(&mut rule, canary_ref);
            rule
        })
        .collect()
}

/// Match mode (docs/controller-semantics.md §7.4): rules holding the canary Service are dropped;
/// every other rule is kept, and each one with the stable Service gets a canary rule after all kept
/// rules: a copy whose only backendRef is the stable one renamed, whose matches are the step's path
/// matches (for the first such rule only), then each of the rule's matches with the conditions of
/// each match without a path added, taken by index from the whole list (the controller's quirk).
fn match_rules(rules: &[Value], matches: &[Value], stable: &str, canary: &str) -> Vec<Value> {
    let mut path_matches: Vec<&Value> = matches.iter().filter(|m| m.get("path").is_some()).collect();
    let non_path = matches.len() - path_matches.len();
    let mut kept = Vec::new();
    let mut canaries = Vec::new();
    for rule in rules {
        if position(rule, canary).is_some() {
            continue;
        }
        kept.push(rule.clone());
        let Some(s) = position(rule, stable) else { continue };
        let mut canary_ref = refs(rule)[s].clone();
        canary_ref["name"] = canary.into();
        let mut new_matches: Vec<Value> = path_matches
            .drain(..)
            .map(|m| {
                let mut entry = json!({"path": m["path"]});
                for field in ["headers", "queryParams"] {
                    if let Some(list) = m.get(field) {
                        entry[field] = list.clone();
                    }
                }
                entry
            })
            .collect();
        if non_path == 0 && new_matches.is_empty() {
            continue;
        }
        for rule_match in rule["matches"].as_array().into_iter().flatten() {
            for extra in &matches[..non_path] {
                let mut copy = rule_match.clone();
                for field in ["headers", "queryParams"] {
                    if let Some(conditions) = extra[field].as_array().filter(|c| !c.is_empty()) {
                        if !copy[field].is_array() {
                            copy[field] = json!([]);
                        }
                        copy[field].as_array_mut().expect("just made a list").extend(conditions.iter().cloned());
                    }
                }
                new_matches.push(copy);
            }
        }
        let mut canary_rule = rule.clone();
        canary_rule["backendRefs"] = json!([canary_ref]);
        let fields = canary_rule.as_object_mut().expect("a decoded rule is a map");
        match new_matches.is_empty() {
            true => fields.remove("matches"),
            false => fields.insert("matches".into(), Value::Array(new_matches)),
        };
        canaries.push(canary_rule);
    }
    kept.extend(canaries);
    kept
}

/// Finalise (docs/controller-semantics.md §7.5): the canary backendRef removed from every rule, the
/// stable one's weight set to 1, and every rule left without a backendRef deleted.
fn finalise_rules(rules: &[Value], stable: &str, canary: &str) -> Vec<Value> {
    rules
        .iter()
        .filter_map(|rule| {
            let mut rule = rule.clone();
            if let Some(c) = position(&rule, canary) {
                refs_mut(&mut rule).remove(c);
            }
            if let Some(s) = position(&rule, stable) {
                refs_mut(&mut rule)[s]["weight"] = 1.into();
            }
            (!refs(&rule).is_empty()).then_some(rule)
        })
        .collect()
}

/// What the controller ignores in a step for an HTTPRoute.
fn ignored_fields(strategy: &RouteStrategy, mode: Mode) -> Vec<String> {
    let mut warnings = Vec::new();
    if let (Mode::Match(_), Some(traffic)) = (mode, &strategy.traffic) {
        warnings.push(format!(
            "traffic {traffic} is ignored: with matches the controller only adds canary match rules to the HTTPRoute"
        ));
    }
    if strategy.request_header_modifier.is_some() && mode != Mode::Finalise {
        warnings.push("requestHeaderModifier is ignored: the controller does not write it into an HTTPRoute".into());
    }
    warnings
}

fn weight_warnings(route: &GatewayRoute, rules: &[Value], weight: i32) -> Vec<String> {
    let (stable, canary) = (route.stable_service, route.canary_service);
    if route.same_service() {
        return vec![format!(
            "canary and stable Service are both {stable} ({}): the controller sets the weight of {stable}'s backendRef to {weight} and adds none, so traffic is not split",
            route.same_service_reason()
        )];
    }
    rules
        .iter()
        .enumerate()
        .filter(|(_, rule)| position(rule, canary).is_some() && refs(rule).iter().all(|r| is_service(r, canary)))
        .map(|(i, _)| {
            format!(
                "spec.rules[{i}] sends the requests it matches only to {canary} (a match rule of an earlier step): a weight step keeps it, so they all still go to the canary until the route is restored"
            )
        })
        .collect()
}

fn match_warnings(route: &GatewayRoute, rules: &[Value], matches: &[Value]) -> Vec<String> {
    let (stable, canary) = (route.stable_service, route.canary_service);
    let mut warnings = Vec::new();
    if route.same_service() {
        let dropped: Vec<String> = (0..rules.len())
            .filter(|&i| position(&rules[i], stable).is_some())
            .map(|i| format!("spec.rules[{i}]"))
            .collect();
        if !dropped.is_empty() {
            warnings.push(format!(
                "canary and stable Service are both {stable} ({}): a match step drops every rule that routes to {stable} ({}) and adds no canary rule, so the requests they matched get no route; restoring the route does not bring them back",
                route.same_service_reason(),
                dropped.join(", ")
            ));
        }
    } else {
        for (i, rule) in rules.iter().enumerate() {
            if position(rule, canary).is_some() && refs(rule).iter().any(|r| !is_service(r, canary)) {
                warnings.push(format!(
                    "spec.rules[{i}] is dropped: it holds {canary} next to other backends (the weights of an earlier step), and a match step drops every rule that holds the canary Service without making a canary rule from it; restoring the route does not bring it back"
                ));
            }
        }
        warnings.extend(no_stable_rule_left_warning(route, rules));
    }
    // The rules kept that route to the stable Service: each gets a canary rule.
    let stable_rules: Vec<usize> = (0..rules.len())
        .filter(|&i| position(&rules[i], stable).is_some() && position(&rules[i], canary).is_none())
        .collect();
    // The canary rules take the conditions of matches[k] of the whole list for the k-th match
    // without a path (moot when no canary rule is made).
    let non_path: Vec<usize> = (0..matches.len()).filter(|&i| matches[i].get("path").is_none()).collect();
    for (k, &j) in non_path.iter().enumerate().filter(|_| !stable_rules.is_empty()) {
        if k != j {
            warnings.push(format!(
                "matches[{j}] ({}) is not what the canary rules get: a path match comes before it, and the controller adds the header and query conditions of matches[{k}] instead ({}{}), because it counts the matches without a path but takes them by index from the whole list",
                conditions(&matches[j]),
                conditions(&matches[k]),
                // It never adds a path: say so where matches[k] has one, which reads as added.
                matches[k]["path"]["value"].as_str().map(|path| format!(", not its path {path}")).unwrap_or_default()
            ));
        }
    }
    // A copy that gains no condition matches what the stable rule's own match does, and of two
    // rules that match alike the Gateway takes the first: the stable one. (One taken by index
    // from a path match is said above.)
    let adds_nothing = |m: &Value| {
        m.get("path").is_none()
            && ["headers", "queryParams"].iter().all(|f| m[*f].as_array().is_none_or(|c| c.is_empty()))
    };
    for k in (0..non_path.len()).filter(|&k| !stable_rules.is_empty() && adds_nothing(&matches[k])) {
        warnings.push(format!(
            "matches[{k}] adds no header or query condition to the stable rules' matches it is copied into: a canary rule's copy matches the same requests as the stable rule before it, which the Gateway prefers (of rules that match alike, the first), so no request reaches {canary} through that copy"
        ));
    }
    let with_path: Vec<usize> = (0..matches.len()).filter(|&i| matches[i].get("path").is_some()).collect();
    if let ([first, rest @ ..], false) = (stable_rules.as_slice(), with_path.is_empty())
        && !rest.is_empty()
    {
        let list = |indexes: &[usize], what: &str| {
            indexes.iter().map(|i| format!("{what}[{i}]")).collect::<Vec<_>>().join(", ")
        };
        warnings.push(format!(
            "the path matches ({}) go only into the canary rule of spec.rules[{first}], the first rule that routes to {stable}; {} get no canary rule for them",
            list(&with_path, "matches"),
            list(rest, "spec.rules")
        ));
    }
    // A path match's lists are copied as Go holds them, and the write leaves an empty one out.
    for &i in with_path.iter().filter(|_| !stable_rules.is_empty()) {
        let empty: Vec<&str> = ["headers", "queryParams"]
            .into_iter()
            .filter(|f| matches[i][*f].as_array().is_some_and(Vec::is_empty))
            .collect();
        if !empty.is_empty() {
            warnings.push(format!(
                "matches[{i}] has an empty {} list: the controller copies it into the canary rule, its write leaves the empty list out, and it finds the stored rule different at every pass and writes it again, so the step never completes; leave the empty list out of the Rollout",
                empty.join(" and ")
            ));
        }
    }
    warnings
}

/// A match step whose every rule to the stable Service holds the canary too (the weights of an
/// earlier step) drops them all and makes no canary rule: no rule routes to the stable Service
/// any more, at the later steps or after the restore, which only rewrites the rules left (B.5,
/// B.6). None when no rule is left at all (`no_rule_left_warning` says what follows then).
fn no_stable_rule_left_warning(route: &GatewayRoute, rules: &[Value]) -> Option<String> {
    let (stable, canary) = (route.stable_service, route.canary_service);
    let kept = || rules.iter().filter(|rule| position(rule, canary).is_none());
    let dropped: Vec<String> = (0..rules.len())
        .filter(|&i| position(&rules[i], stable).is_some() && position(&rules[i], canary).is_some())
        .map(|i| format!("spec.rules[{i}]"))
        .collect();
    if dropped.is_empty() || kept().any(|rule| position(rule, stable).is_some()) || kept().next().is_none() {
        return None;
    }
    Some(stable_left_without_rule(
        route,
        &format!(
            "every rule that did ({}) holds {canary} and is dropped, and no canary rule is made, so a request no rule left matches is served by neither {stable} nor {canary} through this route (the Gateway answers it with 404, unless another route matches it)",
            dropped.join(", ")
        ),
        "put a step without traffic or matches before this one (its restore takes the canary out of the weighted rules, which this step then keeps), or put those rules back into the route by hand",
    ))
}

/// A write leaves rules, but none to the stable Service: what happened, that it lasts (no step
/// adds a backendRef to a rule without one), and what to do.
fn stable_left_without_rule(route: &GatewayRoute, what_happened: &str, remedy: &str) -> String {
    format!(
        "no rule of {} routes to {} after this step: {what_happened}; the later steps and the restore only rewrite the rules left, so this outlasts the release: {remedy}",
        route.describe(),
        route.stable_service
    )
}

/// A match's header and query conditions, what a canary rule's match gets of it (never its path).
fn conditions(m: &Value) -> String {
    let mut parts = Vec::new();
    for (field, what) in [("headers", "header"), ("queryParams", "query")] {
        for c in m[field].as_array().into_iter().flatten() {
            let op = if c["type"] == "RegularExpression" { "~" } else { "=" };
            parts.push(format!("{what} {}{op}{}", c["name"].as_str().unwrap_or(""), c["value"].as_str().unwrap_or("")));
        }
    }
    match parts.is_empty() {
        true => "no header or query condition".into(),
        false => parts.join(" AND "),
    }
}

fn finalise_warnings(route: &GatewayRoute, rules: &[Value]) -> Vec<String> {
    let (stable, canary) = (route.stable_service, route.canary_service);
    let mut warnings = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let Some(s) = position(rule, stable) else { continue };
        if route.same_service() {
            // Each pass removes a backendRef to the Service until none is left.
            let others = other_backends(rule, s, |r| !is_service(r, stable));
            warnings.push(match others.is_empty() {
                true => format!(
                    "spec.rules[{i}] is deleted: canary and stable Service are both {stable} ({}), so the restore removes {}",
                    route.same_service_reason(),
                    if refs(rule).len() == 1 { "its only backendRef" } else { "its backendRefs, all to that Service" }
                ),
                false => format!(
                    "spec.rules[{i}]: the restore removes {stable}'s backendRef (canary and stable Service are both {stable}: {}), while the rule's other backends keep theirs ({others}), so every request the rule matches goes to them and none to {stable}",
                    route.same_service_reason()
                ),
            });
            continue;
        }
        let others = other_backends(rule, s, |r| !is_service(r, canary) && r["weight"].as_i64().is_none_or(|w| w != 0));
        if !others.is_empty() && refs(rule)[s]["weight"] != 1 {
            warnings.push(format!(
                "spec.rules[{i}]: the restore sets {stable}'s weight to 1 (the controller keeps no record of the weight it had before), while the rule's other backends keep theirs ({others}): {stable} gets the share it had before the release only if its weight was 1 then"
            ));
        }
    }
    warnings.extend(no_stable_rule_after_restore_warning(route, rules));
    warnings
}

/// The rule's backendRefs other than the one at `stable` that `keep` keeps, each with its
/// weight: `other weight 50, cdn weight 1`.
fn other_backends(rule: &Value, stable: usize, keep: impl Fn(&Value) -> bool) -> String {
    let others = refs(rule).iter().enumerate().filter(|(j, r)| *j != stable && keep(r));
    let weighted = others
        .map(|(_, r)| format!("{} weight {}", r["name"].as_str().unwrap_or(""), r["weight"].as_i64().unwrap_or(1)));
    weighted.collect::<Vec<_>>().join(", ")
}

/// With canary = stable the restore removes every backendRef to the Service (B.7; one per rule
/// and pass, until none is left): when rules are left, none routes to the Service, and it gets
/// none of the route's requests from then on. None when no rule is left at all
/// (`no_rule_left_warning` says what follows).
fn no_stable_rule_after_restore_warning(route: &GatewayRoute, rules: &[Value]) -> Option<String> {
    let stable = route.stable_service;
    let routed: Vec<String> = (0..rules.len())
        .filter(|&i| position(&rules[i], stable).is_some())
        .map(|i| format!("spec.rules[{i}]"))
        .collect();
    let rule_left = || rules.iter().any(|rule| refs(rule).iter().any(|r| !is_service(r, stable)));
    if !route.same_service() || routed.is_empty() || !rule_left() {
        return None;
    }
    Some(stable_left_without_rule(
        route,
        &format!(
            "the restore removes its backendRef from every rule that had one ({}), as canary and stable Service are both {stable} ({}): the rules left send what they match to their other backends, and a request no rule left matches gets no route (the Gateway answers it with 404, unless another route matches it)",
            routed.join(", "),
            route.same_service_reason()
        ),
        &format!("put the backendRefs to {stable} back into the route by hand once the release is over"),
    ))
}

/// The controller's update leaves no rule: what the API server stores instead, and what follows.
fn no_rule_left_warning(route: &GatewayRoute) -> String {
    format!(
        "no rule is left, and the API server then stores the HTTPRoute CRD's default: one rule for every path (PathPrefix /) without backendRefs, so every request to {} fails (it has no backend); the controller's restore never completes on such a route (it wants no rule, finds that one, writes again and reports a change every time), so the release never finishes. Give the route a rule with a backendRef to a Service other than {}, which the restore keeps",
        route.describe(),
        route.canary_service
    )
}

/// What the controller's update loses: every field gateway-api v0.8.1 does not know, and the
/// settings of filter types newer than it (which the API server then refuses).
fn round_trip_warnings(dropped: &[String], spec: &Value) -> Vec<String> {
    let mut warnings = Vec::new();
    if !dropped.is_empty() {
        warnings.push(format!(
            "the controller's update drops what its gateway-api v0.8.1 types do not know: {}",
            dropped.join(", ")
        ));
    }
    let mut newer = Vec::new();
    for (i, rule) in spec["rules"].as_array().into_iter().flatten().enumerate() {
        let rule_filters = rule["filters"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(j, f)| (format!("spec.rules[{i}].filters[{j}]"), f));
        let ref_filters = refs(rule).iter().enumerate().flat_map(|(k, r)| {
            r["filters"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
                .map(move |(j, f)| (format!("spec.rules[{i}].backendRefs[{k}].filters[{j}]"), f))
        });
        for (path, filter) in rule_filters.chain(ref_filters) {
            let kind = filter["type"].as_str().unwrap_or_default();
            if !http_route::FILTER_TYPES.contains(&kind) {
                newer.push(format!("{path} (type {kind})"));
            }
        }
    }
    if !newer.is_empty() {
        warnings.push(format!(
            "{}: a filter type newer than gateway-api v0.8.1 keeps its type but loses its settings in the controller's update, and the HTTPRoute CRD refuses such a filter: the update fails and the step never finishes",
            newer.join(", ")
        ));
    }
    warnings
}

/// The rules without backendRefs, which the controller's restore deletes.
fn backendless_rule_warnings(rules: &[Value]) -> Vec<String> {
    (0..rules.len())
        .filter(|&i| refs(&rules[i]).is_empty())
        .map(|i| format!(
            "spec.rules[{i}] has no backendRefs (a redirect, for example): the controller deletes it when it restores the route, at the end of the release or at any step without traffic"
        ))
        .collect()
}

/// The backendRefs of another kind than Service named like the stable or canary Service: the
/// controller does not take them for the Service (B.1), so it never splits or restores them.
fn other_kind_warnings(route: &GatewayRoute, rules: &[Value]) -> Vec<String> {
    let (stable, canary) = (route.stable_service, route.canary_service);
    let mut warnings = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        for (j, backend) in refs(rule).iter().enumerate() {
            let Some(kind) = backend["kind"].as_str().filter(|kind| *kind != "Service") else { continue };
            let group = match backend["group"].as_str() {
                Some(group) if !group.is_empty() => format!(" (group {group})"),
                _ => String::new(),
            };
            // With canary = stable the name is the stable Service's, said as such.
            let (which, effect) = match backend["name"].as_str() {
                Some(name) if name == stable => (
                    format!("the stable Service {stable}"),
                    "so its steps never send any of the requests this backendRef gets to the canary",
                ),
                Some(name) if name == canary => (
                    format!("the canary Service {canary}"),
                    "so its steps set no weight on it and its restore does not remove it",
                ),
                _ => continue,
            };
            warnings.push(format!(
                "spec.rules[{i}].backendRefs[{j}] is a {kind}{group}, not a Service: the controller takes only a backendRef of kind: Service for {which}, {effect}"
            ));
        }
    }
    warnings
}

/// What holds for the whole release, whatever the step: rules the restore will delete,
/// backendRefs of another kind named like the Services, a route that does not route to the
/// stable Service at all. (A backendRef without kind, which the controller would not take for a
/// Service, is never read: the API server sets kind: Service, and a route from a file is read as
/// stored.)
pub fn route_warnings(route: &GatewayRoute, current: &Value) -> Vec<String> {
    let Ok(decoded) = http_route::decode(&current["spec"]) else { return Vec::new() };
    let rules = decoded.spec["rules"].as_array().map(Vec::as_slice).unwrap_or_default();
    let (stable, canary) = (route.stable_service, route.canary_service);
    let mut warnings = backendless_rule_warnings(rules);
    warnings.extend(other_kind_warnings(route, rules));
    if !rules.iter().any(|rule| position(rule, stable).is_some() || position(rule, canary).is_some()) {
        warnings.push(format!(
            "{} has no backendRef to Service {stable} (kind: Service): the controller's steps leave its rules as they are",
            route.describe()
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const STABLE: &str = "store-svc";
    const CANARY: &str = "store-svc-canary";

    fn gateway(owner: OwnerKind) -> GatewayRoute<'static> {
        GatewayRoute {
            namespace: "shop",
            http_route: "store",
            stable_service: STABLE,
            canary_service: CANARY,
            owner,
            releasing: false,
        }
    }

    fn rollout() -> GatewayRoute<'static> {
        gateway(OwnerKind::Rollout)
    }

    /// A backendRef as the API server stores it (group, kind and port filled in).
    fn svc(name: &str, weight: Option<i64>) -> Value {
        let mut backend = json!({"group": "", "kind": "Service", "name": name, "port": 80});
        if let Some(weight) = weight {
            backend["weight"] = weight.into();
        }
        backend
    }

    fn http_route(rules: Value) -> Value {
        json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "store", "namespace": "shop", "resourceVersion": "7"},
            "spec": {"parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"}],
                     "hostnames": ["store.example.com"], "rules": rules}
        })
    }

    fn traffic(percent: &str) -> RoutingAction {
        RoutingAction::Route(RouteStrategy { traffic: Some(percent.into()), ..RouteStrategy::default() })
    }

    fn matches(matches: Value) -> RoutingAction {
        RoutingAction::Route(strategy(matches))
    }

    fn strategy(matches: Value) -> RouteStrategy {
        RouteStrategy { matches: Some(matches.as_array().unwrap().clone()), ..RouteStrategy::default() }
    }

    fn header(name: &str, value: &str) -> Value {
        json!({"type": "Exact", "name": name, "value": value})
    }

    fn path(value: &str) -> Value {
        json!({"type": "PathPrefix", "value": value})
    }

    /// The rules after a stage that writes.
    fn written_rules(plan: &StagePlan) -> Value {
        assert!(plan.writes, "expected a write: {plan:?}");
        plan.route.as_ref().unwrap()["spec"]["rules"].clone()
    }

    fn plan(gateway: &GatewayRoute, route: &Value, action: &RoutingAction) -> StagePlan {
        plan_stage(gateway, Some(route), action).unwrap()
    }

    #[test]
    fn the_mode_follows_the_step() {
        assert_eq!(mode(&traffic("20%")), Some(Mode::Weight(20)));
        assert_eq!(mode(&traffic("20")), Some(Mode::Weight(0)), "unparsable traffic is 0");
        let m = json!([{"headers": [header("a", "1")]}]);
        let both = RoutingAction::Route(RouteStrategy { traffic: Some("20%".into()), ..strategy(m.clone()) });
        assert_eq!(mode(&both), Some(Mode::Match(m.as_array().unwrap())));
        assert_eq!(mode(&RoutingAction::Restore), Some(Mode::Finalise));
        assert_eq!(mode(&RoutingAction::Leave), None);
        // A TrafficRouting's weight -1 is the provider's restore, even with matches.
        let minus_one = RoutingAction::Route(RouteStrategy { traffic: Some("-1%".into()), ..strategy(m) });
        assert_eq!(mode(&minus_one), Some(Mode::Finalise));
        // Nothing to route with (the model restores instead): left alone.
        assert_eq!(mode(&matches(json!([]))), None);
    }

    #[test]
    fn the_plan_says_what_each_mode_does() {
        let said = |mode| match rollout().action(mode) {
            Action::Rules(how) | Action::RestoreRules(how) => {
                how.replace("the controller's Gateway API routing (no script), ", "")
            }
            other => panic!("{other:?}"),
        };
        let m = json!([{"headers": [header("a", "1")]}, {"path": path("/x")}]);
        let two = m.as_array().unwrap();
        let one_rule = "match mode: a canary rule to store-svc-canary per rule of store-svc, with the step's";
        assert_eq!(said(Some(Mode::Match(&two[..1]))), format!("{one_rule} 1 match"));
        assert_eq!(said(Some(Mode::Match(two))), format!("{one_rule} 2 matches"));
        assert_eq!(said(Some(Mode::Weight(20))), "weight mode: store-svc 80, store-svc-canary 20");
        assert_eq!(
            said(Some(Mode::Finalise)),
            "restore: store-svc-canary removed, store-svc weight 1, rules left without backendRefs deleted"
        );
        assert!(matches!(rollout().action(None), Action::Keep("the controller writes nothing here: left alone")));
    }

    #[test]
    fn with_canary_equal_to_stable_the_plan_says_what_each_mode_does_to_the_one_service() {
        let same = GatewayRoute { canary_service: STABLE, ..gateway(OwnerKind::TrafficRouting) };
        let said = |mode| match same.action(mode) {
            Action::Rules(how) | Action::RestoreRules(how) => {
                how.replace("the controller's Gateway API routing (no script), ", "")
            }
            other => panic!("{other:?}"),
        };
        let m = json!([{"headers": [header("a", "1")]}]);
        assert_eq!(
            said(Some(Mode::Weight(20))),
            "weight mode: store-svc 20 (canary and stable are the same Service, so traffic is not split)"
        );
        assert_eq!(
            said(Some(Mode::Match(m.as_array().unwrap()))),
            "match mode: the rules to store-svc are dropped and no canary rule is made (canary and stable are the same Service)"
        );
        assert_eq!(
            said(Some(Mode::Finalise)),
            "restore: every backendRef to store-svc removed (canary and stable are the same Service), rules left without backendRefs deleted"
        );
    }

    #[test]
    fn weight_mode_adds_a_canary_copied_from_the_stable_backend() {
        let mut stable = svc(STABLE, Some(1));
        stable["filters"] =
            json!([{"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "x", "value": "1"}]}}]);
        let route = http_route(json!([
            {"matches": [{"path": path("/store")}], "backendRefs": [stable]},
            {"matches": [{"path": path("/other")}], "backendRefs": [svc("other", Some(1))]}
        ]));
        let plan = plan(&rollout(), &route, &traffic("20%"));
        let mut want_stable = stable.clone();
        want_stable["weight"] = 80.into();
        let mut want_canary = stable.clone();
        want_canary["weight"] = 20.into();
        want_canary["name"] = CANARY.into();
        assert_eq!(
            written_rules(&plan),
            json!([
                {"matches": [{"path": path("/store")}], "backendRefs": [want_stable, want_canary]},
                {"matches": [{"path": path("/other")}], "backendRefs": [svc("other", Some(1))]}
            ])
        );
        assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
        // Only the rules change: metadata (with the resourceVersion the write is conditional on),
        // parentRefs and hostnames stay.
        let planned = plan.route.unwrap();
        assert_eq!(planned["metadata"], route["metadata"]);
        assert_eq!(planned["spec"]["hostnames"], route["spec"]["hostnames"]);
        assert_eq!(planned["spec"]["parentRefs"], route["spec"]["parentRefs"]);
        // Converged: the same step again writes nothing.
        let again = plan_stage(&rollout(), Some(&planned), &traffic("20%")).unwrap();
        assert_eq!((again.writes, again.route), (false, Some(planned)));
    }

    #[test]
    fn weights_are_absolute_and_an_existing_canary_is_updated_in_place() {
        let route = http_route(json!([{"backendRefs": [svc("other", Some(50)), svc(STABLE, Some(50))]}]));
        let plan = plan(&rollout(), &route, &traffic("20%"));
        assert_eq!(
            written_rules(&plan),
            json!([{"backendRefs": [svc("other", Some(50)), svc(STABLE, Some(80)), svc(CANARY, Some(20))]}])
        );
        // The canary first, the stable second: both keep their places.
        let route = http_route(json!([{"backendRefs": [svc(CANARY, Some(20)), svc(STABLE, Some(80))]}]));
        let plan = self::plan(&rollout(), &route, &traffic("50%"));
        assert_eq!(written_rules(&plan), json!([{"backendRefs": [svc(CANARY, Some(50)), svc(STABLE, Some(50))]}]));
        // int32 arithmetic: 100 - w wraps.
        let route = http_route(json!([{"backendRefs": [svc(STABLE, None)]}]));
        let plan = self::plan(&rollout(), &route, &traffic("-2147483648%"));
        assert_eq!(written_rules(&plan)[0]["backendRefs"][0]["weight"], -2147483548_i64);
    }

    #[test]
    fn only_kind_service_is_a_service() {
        // Without kind, none (a stored route has kind: Service there, the CRD's default).
        let mut no_kind = svc(STABLE, Some(1));
        no_kind.as_object_mut().unwrap().remove("kind");
        assert!(!is_service(&no_kind, STABLE));
        let mut other_kind = svc(STABLE, Some(1));
        other_kind["kind"] = "ServiceImport".into();
        let mut other_group = svc(STABLE, Some(1));
        other_group["group"] = "example.com".into();
        let route = http_route(json!([{"backendRefs": [other_kind]}, {"backendRefs": [other_group]}]));
        let plan = plan(&rollout(), &route, &traffic("10%"));
        let rules = written_rules(&plan);
        assert_eq!(rules[0], route["spec"]["rules"][0]);
        assert_eq!(rules[1]["backendRefs"][1]["name"], CANARY, "the group is not compared");
        assert_eq!(rules[1]["backendRefs"][1]["group"], "example.com");
    }

    #[test]
    fn a_weight_step_keeps_the_match_rules_of_an_earlier_step() {
        let route = http_route(json!([
            {"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(1))]},
            {"matches": [{"path": path("/"), "headers": [header("user", "beta")]}], "backendRefs": [svc(CANARY, Some(1))]}
        ]));
        let plan = plan(&rollout(), &route, &traffic("20%"));
        let rules = written_rules(&plan);
        assert_eq!(rules[1], route["spec"]["rules"][1]);
        assert_eq!(rules[0]["backendRefs"], json!([svc(STABLE, Some(80)), svc(CANARY, Some(20))]));
        assert_eq!(
            plan.warnings,
            [
                "spec.rules[1] sends the requests it matches only to store-svc-canary (a match rule of an earlier step): a weight step keeps it, so they all still go to the canary until the route is restored"
            ]
        );
    }

    #[test]
    fn a_rule_of_the_users_holding_the_canary_next_to_other_backends_is_no_match_rule() {
        // A helper's review: it was said to send everything to the canary.
        let route = http_route(json!([
            {"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(1))]},
            {"matches": [{"path": path("/cdn")}], "backendRefs": [svc("cdn", Some(1)), svc(CANARY, Some(5))]}
        ]));
        let plan = plan(&rollout(), &route, &traffic("100%"));
        assert_eq!(written_rules(&plan)[1], route["spec"]["rules"][1], "a weight step leaves it");
        assert_eq!(plan.warnings, Vec::<String>::new());
    }

    #[test]
    fn a_step_match_that_adds_no_condition_is_warned_of() {
        // A helper's review: `matches: [{}]` read as "any request", and the canary got none.
        let route = http_route(json!([{"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(1))]}]));
        let said = |plan: &StagePlan| plan.warnings.iter().any(|w| w.contains("adds no header or query condition"));
        for empty in
            [json!([{}]), json!([{"headers": []}]), json!([{"headers": [header("a", "1")]}, {"queryParams": []}])]
        {
            assert!(said(&plan(&rollout(), &route, &matches(empty.clone()))), "{empty}");
        }
        assert!(!said(&plan(&rollout(), &route, &matches(json!([{"queryParams": [header("q", "1")]}])))));
        // No stable rule: no copy is made.
        let elsewhere = http_route(json!([{"matches": [{"path": path("/")}], "backendRefs": [svc("cdn", Some(1))]}]));
        assert!(!said(&plan(&rollout(), &elsewhere, &matches(json!([{}])))));
    }

    #[test]
    fn more_matches_a_rule_than_gateway_api_before_v1_1_allows_are_warned_of() {
        // Each of the rule's matches is copied for each step match: 3 by 3 is past the 8 a rule
        // of gateway-api before v1.1.
        let route = http_route(json!([{
            "matches": [{"path": path("/a")}, {"path": path("/b")}, {"path": path("/c")}],
            "backendRefs": [svc(STABLE, Some(1))]
        }]));
        let step = |n: usize| {
            matches(Value::Array((0..n).map(|i| json!({"headers": [header(&format!("h{i}"), "1")]})).collect()))
        };
        let warning = "HTTPRoute shop/store as the controller writes it has more matches in a rule than gateway-api before v1.1 allows (8 a rule; 64 from v1.1 on): spec.rules[1].matches: 9 matches; a cluster with such a CRD refuses the update, and the step never finishes (`--dry-run=server` asks the cluster's own CRD)";
        let planned = plan(&rollout(), &route, &step(3));
        assert!(planned.warnings.contains(&warning.to_string()), "{:?}", planned.warnings);
        assert_eq!(planned.refused, None, "later versions allow it");
        assert!(!plan(&rollout(), &route, &step(2)).warnings.iter().any(|w| w.contains("gateway-api before v1.1")));
        // Past 64 a rule: no version allows it.
        let refused = plan(&rollout(), &route, &step(22));
        assert!(
            refused.refused.as_deref().is_some_and(|w| w.contains("spec.rules[1].matches: 66 matches, at most 64"))
        );
        assert!(!refused.warnings.iter().any(|w| w.contains("gateway-api before v1.1")), "refused: said once");
    }

    #[test]
    fn a_write_the_httproute_crd_refuses_is_warned_of_unless_the_route_broke_its_rules_already() {
        // A helper's review: a canary rule that copies a prefix rewrite gets a match per step
        // match, which the CRD's CEL rule refuses.
        let rewrite = json!({"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}});
        let route = http_route(
            json!([{"matches": [{"path": path("/api")}], "filters": [rewrite], "backendRefs": [svc(STABLE, Some(1))]}]),
        );
        let step = matches(json!([{"headers": [header("a", "1")]}, {"queryParams": [header("q", "1")]}]));
        let refused = "HTTPRoute shop/store as the controller writes it breaks the HTTPRoute CRD's rules (gateway-api v0.8 to v1): spec.rules[1].filters[0]: with path.replacePrefixMatch (URLRewrite), exactly one PathPrefix match must be specified, and the rule has 2 matches; the API server refuses the update, so the step never finishes (`--dry-run=server` asks the cluster's own CRD)";
        assert!(plan(&rollout(), &route, &step).warnings.contains(&refused.to_string()));
        // One step match: one match a canary rule, which the CRD allows.
        let one = matches(json!([{"headers": [header("a", "1")]}]));
        assert!(!plan(&rollout(), &route, &one).warnings.iter().any(|w| w.contains("CRD's rules")));
        // A route stored under another CRD that broke them already: not this write's doing.
        let mut broken = route.clone();
        broken["spec"]["rules"][0]["matches"] = json!([{"path": path("/api")}, {"path": path("/v2")}]);
        assert!(!plan(&rollout(), &broken, &step).warnings.iter().any(|w| w.contains("CRD's rules")));
        // A TrafficRouting's negative weight is written as it is, and the CRD refuses it.
        let same = GatewayRoute { canary_service: STABLE, ..rollout() };
        let negative = plan(&same, &http_route(json!([{"backendRefs": [svc(STABLE, Some(1))]}])), &traffic("-5%"));
        assert!(
            negative.warnings.iter().any(|w| w.contains("spec.rules[0].backendRefs[0].weight: -5, from 0 to 1000000")),
            "{:?}",
            negative.warnings
        );
    }

    #[test]
    fn a_restore_that_takes_more_passes_than_most_is_followed_to_its_end() {
        // With canary = stable the restore removes one of its refs a pass: four take four
        // writes, and the fifth pass finds the rules as it wants them (a helper's review: "the
        // step never completes" was said after three).
        let same = GatewayRoute { canary_service: STABLE, ..rollout() };
        let cdn = json!({"kind": "Service", "name": "cdn", "port": 80});
        let mut refs: Vec<Value> =
            (80..84).map(|port| json!({"kind": "Service", "name": STABLE, "port": port})).collect();
        refs.push(cdn.clone());
        let route = http_route(json!([{"matches": [{"path": path("/x")}], "backendRefs": refs}]));
        let restored = plan(&same, &route, &RoutingAction::Restore);
        assert_eq!(written_rules(&restored)[0]["backendRefs"], json!([svc("cdn", Some(1))]), "as stored");
        assert!(!restored.warnings.iter().any(|w| w.contains("never completes")), "{:?}", restored.warnings);
    }

    /// The stable rule of the controller's unit tests: `/store` with header version=v2, and `/v2/store`.
    fn store_route() -> Value {
        http_route(json!([
            {"matches": [{"path": path("/store"), "headers": [header("version", "v2")]}, {"path": path("/v2/store")}],
             "filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {"add": [{"name": "from", "value": "gw"}]}}],
             "timeouts": {"request": "10s"},
             "backendRefs": [svc(STABLE, Some(100))]},
            {"matches": [{"path": path("/storage")}], "backendRefs": [svc(STABLE, Some(100))]},
            {"matches": [{"path": path("/other")}], "backendRefs": [svc("other", Some(1))]}
        ]))
    }

    fn canary_rule(base: &Value, matches: Value) -> Value {
        let mut rule = base.clone();
        rule["matches"] = matches;
        rule["backendRefs"] = json!([svc(CANARY, Some(100))]);
        rule
    }

    #[test]
    fn match_mode_adds_each_header_match_to_each_match_of_each_stable_rule() {
        let route = store_route();
        let stable_rules = route["spec"]["rules"].as_array().unwrap().clone();
        let (a, b) = (header("user", "a"), header("user", "b"));
        let plan = plan(&rollout(), &route, &matches(json!([{"headers": [a]}, {"headers": [b]}])));
        let with = |m: &Value, h: &Value| {
            let mut m = m.clone();
            let mut headers = m["headers"].as_array().cloned().unwrap_or_default();
            headers.push(h.clone());
            m["headers"] = Value::Array(headers);
            m
        };
        let (m0, m1) = (&stable_rules[0]["matches"][0], &stable_rules[0]["matches"][1]);
        let storage = &stable_rules[1]["matches"][0];
        let mut want = stable_rules.clone();
        want.push(canary_rule(&stable_rules[0], json!([with(m0, &a), with(m0, &b), with(m1, &a), with(m1, &b)])));
        want.push(canary_rule(&stable_rules[1], json!([with(storage, &a), with(storage, &b)])));
        assert_eq!(written_rules(&plan), Value::Array(want));
        assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
        // Converged: the canary rules are dropped and made again, the same.
        let again =
            self::plan(&rollout(), plan.route.as_ref().unwrap(), &matches(json!([{"headers": [a]}, {"headers": [b]}])));
        assert!(!again.writes, "{again:?}");
    }

    #[test]
    fn match_mode_appends_headers_and_query_parameters_of_one_match() {
        let route = store_route();
        let rules = route["spec"]["rules"].as_array().unwrap().clone();
        let query = json!({"type": "Exact", "name": "beta", "value": "1"});
        let plan =
            plan(&rollout(), &route, &matches(json!([{"headers": [header("user", "a")], "queryParams": [query]}])));
        let got = written_rules(&plan);
        assert_eq!(
            got[3]["matches"][0],
            json!({"path": path("/store"), "headers": [header("version", "v2"), header("user", "a")], "queryParams": [query]})
        );
        assert_eq!(
            got[3]["matches"][1],
            json!({"path": path("/v2/store"), "headers": [header("user", "a")], "queryParams": [query]})
        );
        assert_eq!(got[3]["filters"], rules[0]["filters"], "filters are copied");
        assert_eq!(got[3]["timeouts"], rules[0]["timeouts"], "timeouts are copied");
        assert_eq!(got.as_array().unwrap().len(), 5);
    }

    #[test]
    fn a_path_match_goes_to_the_first_stable_rule_only() {
        let route = store_route();
        let rules = route["spec"]["rules"].as_array().unwrap().clone();
        let step = matches(json!([{"path": path("/storage/v2"), "headers": [header("user", "a")]}]));
        let plan = plan(&rollout(), &route, &step);
        let mut want = rules.clone();
        want.push(canary_rule(&rules[0], json!([{"path": path("/storage/v2"), "headers": [header("user", "a")]}])));
        assert_eq!(written_rules(&plan), Value::Array(want));
        assert_eq!(
            plan.warnings,
            [
                "the path matches (matches[0]) go only into the canary rule of spec.rules[0], the first rule that routes to store-svc; spec.rules[1] get no canary rule for them"
            ]
        );
    }

    #[test]
    fn a_path_match_before_a_header_match_takes_its_conditions() {
        let route = http_route(json!([{"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(1))]}]));
        let step = matches(json!([{"path": path("/x")}, {"headers": [header("h", "1")]}]));
        let plan = plan(&rollout(), &route, &step);
        // The canary rule: the path match, then the stable match with the conditions of
        // matches[0] (none), not those of matches[1].
        assert_eq!(
            written_rules(&plan)[1],
            json!({"matches": [{"path": path("/x")}, {"path": path("/")}], "backendRefs": [svc(CANARY, Some(1))]})
        );
        assert_eq!(
            plan.warnings,
            [
                "matches[1] (header h=1) is not what the canary rules get: a path match comes before it, and the controller adds the header and query conditions of matches[0] instead (no header or query condition, not its path /x), because it counts the matches without a path but takes them by index from the whole list"
            ]
        );
        // A path match with a header: its header is added, never its path (B.5 step 6).
        let step = matches(json!([
            {"path": path("/x"), "headers": [header("hp", "1")]},
            {"headers": [header("h", "1")]},
            {"queryParams": [{"type": "Exact", "name": "q", "value": "1"}]}
        ]));
        let plan = self::plan(&rollout(), &route, &step);
        assert_eq!(written_rules(&plan)[1]["matches"][1], json!({"path": path("/"), "headers": [header("hp", "1")]}));
        assert_eq!(
            plan.warnings,
            [
                "matches[1] (header h=1) is not what the canary rules get: a path match comes before it, and the controller adds the header and query conditions of matches[0] instead (header hp=1, not its path /x), because it counts the matches without a path but takes them by index from the whole list",
                "matches[2] (query q=1) is not what the canary rules get: a path match comes before it, and the controller adds the header and query conditions of matches[1] instead (header h=1), because it counts the matches without a path but takes them by index from the whole list"
            ]
        );
        // Header match first: no quirk.
        let step = matches(json!([{"headers": [header("h", "1")]}, {"path": path("/x")}]));
        let plan = self::plan(&rollout(), &route, &step);
        assert_eq!(
            written_rules(&plan)[1]["matches"],
            json!([{"path": path("/x")}, {"path": path("/"), "headers": [header("h", "1")]}])
        );
        assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
    }

    #[test]
    fn a_match_step_after_a_weight_step_drops_the_weighted_rule() {
        let route = http_route(json!([
            {"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(80)), svc(CANARY, Some(20))]},
            {"matches": [{"path": path("/other")}], "backendRefs": [svc("other", Some(1))]}
        ]));
        let dropped = "spec.rules[0] is dropped: it holds store-svc-canary next to other backends (the weights of an earlier step), and a match step drops every rule that holds the canary Service without making a canary rule from it; restoring the route does not bring it back";
        let no_stable_rule = "no rule of HTTPRoute shop/store routes to store-svc after this step: every rule that did (spec.rules[0]) holds store-svc-canary and is dropped, and no canary rule is made, so a request no rule left matches is served by neither store-svc nor store-svc-canary through this route (the Gateway answers it with 404, unless another route matches it); the later steps and the restore only rewrite the rules left, so this outlasts the release: put a step without traffic or matches before this one (its restore takes the canary out of the weighted rules, which this step then keeps), or put those rules back into the route by hand";
        // A path match before a header match: the controller's index quirk is moot, as no canary
        // rule is made.
        let step = matches(json!([{"path": path("/x")}, {"headers": [header("h", "1")]}]));
        let plan = plan(&rollout(), &route, &step);
        assert_eq!(written_rules(&plan), json!([route["spec"]["rules"][1]]));
        assert_eq!(plan.warnings, [dropped, no_stable_rule]);
        // The restore leaves it so: the rule of Service other is all there is.
        let restored = self::plan(&rollout(), plan.route.as_ref().unwrap(), &RoutingAction::Restore);
        assert!(!restored.writes, "{restored:?}");
        // Another rule still routes to the stable Service: it gets the canary rule.
        let mut also_stable = route.clone();
        also_stable["spec"]["rules"][1]["backendRefs"] = json!([svc(STABLE, Some(1))]);
        let plan = self::plan(&rollout(), &also_stable, &step);
        assert_eq!(written_rules(&plan).as_array().unwrap().len(), 2);
        assert_eq!(plan.warnings[0], dropped);
        assert!(!plan.warnings.iter().any(|w| w.starts_with("no rule of ")), "{:?}", plan.warnings);
        assert!(
            plan.warnings[1].starts_with("matches[1] (header h=1) is not what the canary rules get"),
            "{:?}",
            plan.warnings
        );
        // Nothing left at all: the warning of the CRD's default rule alone says what follows.
        let weighted_only = http_route(json!([route["spec"]["rules"][0]]));
        let plan = self::plan(&rollout(), &weighted_only, &step);
        assert_eq!(plan.warnings, [dropped.to_string(), no_rule_left_warning(&rollout())]);
    }

    #[test]
    fn a_rule_with_empty_matches_is_planned_where_the_controllers_writes_settle() {
        // The first write leaves both rules' empty matches out; the API server gives them the
        // catch-all match, and the next pass makes the canary rule of that match and the header.
        let route = http_route(json!([{"matches": [], "backendRefs": [svc(STABLE, Some(1))]}]));
        let plan = plan(&rollout(), &route, &matches(json!([{"headers": [header("h", "1")]}])));
        let every_path = json!({"path": {"type": "PathPrefix", "value": "/"}});
        let with_header = json!({"path": {"type": "PathPrefix", "value": "/"}, "headers": [header("h", "1")]});
        assert_eq!(
            written_rules(&plan),
            json!([{"matches": [every_path], "backendRefs": [svc(STABLE, Some(1))]},
                   {"matches": [with_header], "backendRefs": [svc(CANARY, Some(1))]}])
        );
        assert_eq!(plan.warnings, Vec::<String>::new());
    }

    #[test]
    fn an_empty_list_in_a_path_match_is_written_at_every_pass() {
        let route = http_route(json!([{"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(1))]}]));
        let step = matches(json!([{"path": {"type": "PathPrefix", "value": "/beta"}, "headers": []}]));
        let first = plan(&rollout(), &route, &step);
        assert!(first.writes);
        // The write leaves `headers: []` out, so the canary rule as stored has no headers.
        let canary = written_rules(&first).as_array().unwrap().last().unwrap().clone();
        assert_eq!(canary["matches"], json!([{"path": {"type": "PathPrefix", "value": "/beta"}}]));
        assert!(first.warnings.iter().any(|w| w.starts_with("matches[0] has an empty headers list")), "{first:?}");
        assert_eq!(
            first.warnings.last().unwrap(),
            "HTTPRoute shop/store: the rules the controller writes at this stage are not stored as written, and each of its passes writes them again: the step never completes; the plan shows its last write"
        );
        // From the route as written, the controller writes again: it is never "as planned".
        let again = plan(&rollout(), first.route.as_ref().unwrap(), &step);
        assert!(again.writes);
        // Without the empty list, the step settles and warns of nothing.
        let step = matches(json!([{"path": {"type": "PathPrefix", "value": "/beta"}}]));
        let settled = plan(&rollout(), &route, &step);
        assert_eq!(settled.warnings, Vec::<String>::new());
        assert!(!plan(&rollout(), settled.route.as_ref().unwrap(), &step).writes);
    }

    #[test]
    fn traffic_and_the_header_modifier_are_ignored_with_matches() {
        let route = store_route();
        let step = RoutingAction::Route(RouteStrategy {
            traffic: Some("30%".into()),
            request_header_modifier: Some(json!({"set": [{"name": "x", "value": "1"}]})),
            ..strategy(json!([{"headers": [header("h", "1")]}]))
        });
        let plan = plan(&rollout(), &route, &step);
        assert_eq!(written_rules(&plan).as_array().unwrap().len(), 5, "no weights: a canary rule per stable rule");
        assert_eq!(
            plan.warnings,
            [
                "traffic 30% is ignored: with matches the controller only adds canary match rules to the HTTPRoute",
                "requestHeaderModifier is ignored: the controller does not write it into an HTTPRoute"
            ]
        );
    }

    #[test]
    fn finalise_removes_the_canary_sets_stable_weight_1_and_deletes_rules_without_backends() {
        let redirect = json!({"matches": [{"path": path("/old")}],
                              "filters": [{"type": "RequestRedirect", "requestRedirect": {"path": {"type": "ReplaceFullPath", "replaceFullPath": "/new"}}}]});
        let route = http_route(json!([
            {"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(80)), svc(CANARY, Some(20))]},
            {"matches": [{"path": path("/"), "headers": [header("h", "1")]}], "backendRefs": [svc(CANARY, Some(1))]},
            redirect.clone(),
            {"matches": [{"path": path("/other")}], "backendRefs": [svc("other", Some(7))]}
        ]));
        let plan = plan(&rollout(), &route, &RoutingAction::Restore);
        assert_eq!(
            written_rules(&plan),
            json!([
                {"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(1))]},
                {"matches": [{"path": path("/other")}], "backendRefs": [svc("other", Some(7))]}
            ])
        );
        assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
        assert!(route_warnings(&rollout(), &route).contains(&"spec.rules[2] has no backendRefs (a redirect, for example): the controller deletes it when it restores the route, at the end of the release or at any step without traffic".to_string()));
        // restore() is the same finalise, whoever the owner is.
        assert_eq!(restore(&gateway(OwnerKind::TrafficRouting), Some(&route)).unwrap(), plan);
        // A restored route stays as it is; a missing one is nothing to restore.
        let restored = plan.route.unwrap();
        assert!(!self::plan(&rollout(), &restored, &RoutingAction::Restore).writes);
        let missing = plan_stage(&rollout(), None, &RoutingAction::Restore).unwrap();
        assert_eq!((missing.route, missing.writes), (None, false));
    }

    #[test]
    fn finalise_warns_when_other_backends_keep_their_weights() {
        let route = http_route(
            json!([{"backendRefs": [svc("other", Some(50)), svc(STABLE, Some(40)), svc(CANARY, Some(10))]}]),
        );
        let plan = plan(&rollout(), &route, &RoutingAction::Restore);
        assert_eq!(written_rules(&plan), json!([{"backendRefs": [svc("other", Some(50)), svc(STABLE, Some(1))]}]));
        assert_eq!(
            plan.warnings,
            [
                "spec.rules[0]: the restore sets store-svc's weight to 1 (the controller keeps no record of the weight it had before), while the rule's other backends keep theirs (other weight 50): store-svc gets the share it had before the release only if its weight was 1 then"
            ]
        );
    }

    #[test]
    fn go_tells_nil_rules_from_empty_ones() {
        // No rules at all: the controller's desired list is nil too, nothing to write.
        let mut absent = http_route(json!(null));
        absent["spec"].as_object_mut().unwrap().remove("rules");
        assert!(!plan(&rollout(), &absent, &RoutingAction::Restore).writes);
        // `rules: []` is an empty slice, which reflect.DeepEqual tells from nil: the controller
        // writes, its update leaves rules out, and the API server stores the CRD's default.
        let empty = http_route(json!([]));
        let plan = plan(&rollout(), &empty, &RoutingAction::Restore);
        assert_eq!(written_rules(&plan), json!(http_route::default_rules()));
        // Lists inside a rule: an empty `filters: []` makes a kept rule differ from nothing, but a
        // write leaves it out (omitempty).
        let route = http_route(json!([{"filters": [], "backendRefs": [svc(STABLE, Some(1))]}]));
        let plan = self::plan(&rollout(), &route, &traffic("10%"));
        assert_eq!(written_rules(&plan)[0].get("filters"), None);
    }

    const NO_RULE_LEFT: &str = "no rule is left, and the API server then stores the HTTPRoute CRD's default: one rule for every path (PathPrefix /) without backendRefs, so every request to HTTPRoute shop/store fails (it has no backend); the controller's restore never completes on such a route (it wants no rule, finds that one, writes again and reports a change every time), so the release never finishes. Give the route a rule with a backendRef to a Service other than store-svc, which the restore keeps";

    #[test]
    fn a_stage_that_leaves_no_rule_plans_the_crds_default_rule_and_warns() {
        let same = GatewayRoute { canary_service: STABLE, ..rollout() };
        let route = http_route(json!([{"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(20))]}]));
        let default_rule = json!([{"matches": [{"path": path("/")}]}]);
        // The restore removes the only backendRef: what the API server stores is the default.
        let restored = plan(&same, &route, &RoutingAction::Restore);
        assert_eq!(written_rules(&restored), default_rule);
        assert_eq!(restored.warnings.last().map(String::as_str), Some(NO_RULE_LEFT));
        // From there the controller writes again at every restore, and nothing changes: no
        // write, the same warning.
        let again = plan(&same, restored.route.as_ref().unwrap(), &RoutingAction::Restore);
        assert!(!again.writes);
        assert_eq!(again.warnings.last().map(String::as_str), Some(NO_RULE_LEFT));
        // Steps leave the default rule alone (it has no stable backendRef), without the warning.
        for step in [traffic("20%"), matches(json!([{"headers": [header("h", "1")]}]))] {
            let at_step = plan(&same, restored.route.as_ref().unwrap(), &step);
            assert!(!at_step.writes && !at_step.warnings.contains(&NO_RULE_LEFT.to_string()), "{at_step:?}");
        }
        // A match step that drops every rule leaves the default rule too.
        let dropped = plan(&same, &route, &matches(json!([{"headers": [header("h", "1")]}])));
        assert_eq!(written_rules(&dropped), default_rule);
        assert_eq!(dropped.warnings.last().map(String::as_str), Some(NO_RULE_LEFT));
        // Two refs of it in one rule: the restore takes one a pass, and its second pass leaves no
        // rule, so the default is stored.
        let mut second_port = svc(STABLE, Some(1));
        second_port["port"] = json!(8080);
        let two_ports = http_route(
            json!([{"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(20)), second_port]}]),
        );
        let restored = plan(&same, &two_ports, &RoutingAction::Restore);
        assert_eq!(written_rules(&restored), default_rule);
        assert_eq!(restored.warnings.iter().filter(|w| *w == NO_RULE_LEFT).count(), 1, "{:?}", restored.warnings);
        // With a canary Service: a restore after a match step dropped the weighted rules.
        let canary_rules_only =
            http_route(json!([{"matches": [{"path": path("/")}], "backendRefs": [svc(CANARY, Some(1))]}]));
        let restored = plan(&rollout(), &canary_rules_only, &RoutingAction::Restore);
        assert_eq!(written_rules(&restored), default_rule);
        assert!(
            restored
                .warnings
                .last()
                .unwrap()
                .ends_with("a Service other than store-svc-canary, which the restore keeps")
        );
    }

    #[test]
    fn restore_leaves_a_route_no_release_touched_and_says_what_the_controller_would_still_do() {
        let redirect = json!({"matches": [{"path": path("/old")}],
                              "filters": [{"type": "RequestRedirect", "requestRedirect": {"statusCode": 301}}]});
        let stable_rule = json!({"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(1))]});
        let untouched = http_route(json!([stable_rule, redirect]));
        let deletes_redirect = "spec.rules[1] has no backendRefs (a redirect, for example): the controller deletes it when it restores the route, at the end of the release or at any step without traffic";
        assert_eq!(
            restoration(&rollout(), &untouched).unwrap(),
            RouteRestore::Leave {
                why: "it has no backendRef to the canary Service store-svc-canary".into(),
                warnings: vec![deletes_redirect.into()]
            }
        );
        // Nothing the controller's restore would change: nothing to say.
        let plain = http_route(json!([stable_rule]));
        let RouteRestore::Leave { warnings, .. } = restoration(&rollout(), &plain).unwrap() else { panic!() };
        assert!(warnings.is_empty(), "{warnings:?}");
        // A canary backendRef: the controller's restore, the route's own warnings first.
        let routed = http_route(json!([
            {"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(80)), svc(CANARY, Some(20))]}, redirect
        ]));
        let RouteRestore::Write(plan) = restoration(&rollout(), &routed).unwrap() else { panic!() };
        assert_eq!(written_rules(&plan), json!([stable_rule]));
        assert_eq!(plan.warnings, [deletes_redirect]);
    }

    #[test]
    fn with_canary_equal_to_stable_restore_writes_only_while_a_release_is_in_progress() {
        let route = http_route(json!([
            {"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(20))]},
            {"matches": [{"path": path("/x")}], "backendRefs": [svc("other", Some(1))]}
        ]));
        let idle = GatewayRoute { canary_service: STABLE, ..rollout() };
        let RouteRestore::Leave { why, warnings } = restoration(&idle, &route).unwrap() else { panic!() };
        assert_eq!(
            why,
            "canary and stable Service are both store-svc (disableGenerateCanaryService), so its backendRefs cannot show a release, and its Rollout has none in progress"
        );
        assert_eq!(
            warnings[0],
            "spec.rules[0] is deleted: canary and stable Service are both store-svc (disableGenerateCanaryService), so the restore removes its only backendRef"
        );
        assert!(
            warnings[1].starts_with("no rule of HTTPRoute shop/store routes to store-svc after this step"),
            "{warnings:?}"
        );
        let releasing = GatewayRoute { releasing: true, ..idle };
        let RouteRestore::Write(plan) = restoration(&releasing, &route).unwrap() else { panic!() };
        assert_eq!(written_rules(&plan), json!([route["spec"]["rules"][1]]));
        // Restored already: the controller's restore writes nothing more.
        let RouteRestore::Leave { why, warnings } = restoration(&releasing, plan.route.as_ref().unwrap()).unwrap()
        else {
            panic!()
        };
        assert_eq!((why.as_str(), warnings.len()), ("the controller's restore writes nothing to it", 0));
        // A TrafficRouting says so too.
        let tr = GatewayRoute { owner: OwnerKind::TrafficRouting, ..idle };
        let RouteRestore::Leave { why, .. } = restoration(&tr, &route).unwrap() else { panic!() };
        assert!(why.ends_with("and its TrafficRouting has none in progress"), "{why}");
    }

    #[test]
    fn a_write_drops_what_v0_8_1_does_not_know_and_says_so() {
        let route = http_route(json!([{
            "name": "main",
            "sessionPersistence": {"sessionName": "s"},
            "matches": [{"path": path("/")}],
            "filters": [{"type": "CORS", "cors": {"allowOrigins": ["*"]}}],
            "backendRefs": [svc(STABLE, Some(1))]
        }]));
        let plan = plan(&rollout(), &route, &traffic("10%"));
        let rules = written_rules(&plan);
        assert_eq!(rules[0].get("name"), None);
        assert_eq!(rules[0]["filters"], json!([{"type": "CORS"}]));
        assert_eq!(
            plan.warnings,
            [
                "the controller's update drops what its gateway-api v0.8.1 types do not know: spec.rules[0].filters[0].cors, spec.rules[0].name, spec.rules[0].sessionPersistence",
                "spec.rules[0].filters[0] (type CORS): a filter type newer than gateway-api v0.8.1 keeps its type but loses its settings in the controller's update, and the HTTPRoute CRD refuses such a filter: the update fails and the step never finishes"
            ]
        );
        // Nothing to write, nothing lost: the controller compares what it decoded.
        let plan = self::plan(&rollout(), &route, &RoutingAction::Restore);
        assert!(!plan.writes && plan.warnings.is_empty(), "{plan:?}");
        // A backendRef's own filters too; the canary copies them.
        let mut stable = svc(STABLE, Some(1));
        stable["filters"] = json!([{"type": "ExternalAuth", "externalAuth": {"protocol": "HTTP"}}]);
        let route = http_route(json!([{"backendRefs": [stable]}]));
        let plan = self::plan(&rollout(), &route, &traffic("10%"));
        assert_eq!(written_rules(&plan)[0]["backendRefs"][1]["filters"], json!([{"type": "ExternalAuth"}]));
        assert!(
            plan.warnings[1].starts_with(
                "spec.rules[0].backendRefs[0].filters[0] (type ExternalAuth), spec.rules[0].backendRefs[1].filters[0] (type ExternalAuth): a filter type newer"
            ),
            "{:?}",
            plan.warnings
        );
    }

    #[test]
    fn left_alone_the_route_stays_as_it_is() {
        let route = store_route();
        let plan = plan(&gateway(OwnerKind::TrafficRouting), &route, &RoutingAction::Leave);
        assert_eq!((plan.writes, plan.route), (false, Some(route)));
    }

    #[test]
    fn a_missing_route_fails_a_step_and_a_malformed_one_is_an_error() {
        let err = plan_stage(&rollout(), None, &traffic("10%")).unwrap_err();
        assert_eq!(err.to_string(), "HTTPRoute shop/store not found: the controller's step fails until it exists");
        let route = http_route(json!([{"backendRefs": [{"kind": "Service", "name": STABLE, "weight": "5"}]}]));
        let err = plan_stage(&rollout(), Some(&route), &traffic("10%")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "HTTPRoute shop/store: spec.rules[0].backendRefs[0].weight: must be an integer that fits Go's int32, not \"5\""
        );
    }

    #[test]
    fn canary_equal_to_stable_degenerates_as_in_the_controller() {
        let same = |owner| GatewayRoute { canary_service: STABLE, ..gateway(owner) };
        let tr = same(OwnerKind::TrafficRouting);
        let route = http_route(json!([
            {"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(1))]},
            {"matches": [{"path": path("/other")}], "backendRefs": [svc("other", Some(1)), svc(STABLE, Some(1))]},
            {"matches": [{"path": path("/x")}], "backendRefs": [svc("other", Some(1))]}
        ]));
        // Weight mode: the one backendRef gets the canary weight.
        let plan = plan(&tr, &route, &traffic("30%"));
        let rules = written_rules(&plan);
        assert_eq!(rules[0]["backendRefs"], json!([svc(STABLE, Some(30))]));
        assert_eq!(rules[1]["backendRefs"], json!([svc("other", Some(1)), svc(STABLE, Some(30))]));
        assert!(plan.warnings[0].starts_with("canary and stable Service are both store-svc (a TrafficRouting routes to the stable Service itself): the controller sets the weight"), "{:?}", plan.warnings);
        // Match mode: every rule with the Service is dropped, nothing is added.
        let plan = self::plan(&tr, &route, &matches(json!([{"headers": [header("h", "1")]}])));
        assert_eq!(written_rules(&plan), json!([route["spec"]["rules"][2]]));
        assert!(
            plan.warnings[0].contains("drops every rule that routes to store-svc (spec.rules[0], spec.rules[1])"),
            "{:?}",
            plan.warnings
        );
        // Finalise: the Service's backendRef is removed, rules left without one are deleted.
        let plan = self::plan(&same(OwnerKind::Rollout), &route, &RoutingAction::Restore);
        assert_eq!(
            written_rules(&plan),
            json!([
                {"matches": [{"path": path("/other")}], "backendRefs": [svc("other", Some(1))]},
                {"matches": [{"path": path("/x")}], "backendRefs": [svc("other", Some(1))]}
            ])
        );
        assert_eq!(
            plan.warnings,
            [
                "spec.rules[0] is deleted: canary and stable Service are both store-svc (disableGenerateCanaryService), so the restore removes its only backendRef",
                "spec.rules[1]: the restore removes store-svc's backendRef (canary and stable Service are both store-svc: disableGenerateCanaryService), while the rule's other backends keep theirs (other weight 1), so every request the rule matches goes to them and none to store-svc",
                "no rule of HTTPRoute shop/store routes to store-svc after this step: the restore removes its backendRef from every rule that had one (spec.rules[0], spec.rules[1]), as canary and stable Service are both store-svc (disableGenerateCanaryService): the rules left send what they match to their other backends, and a request no rule left matches gets no route (the Gateway answers it with 404, unless another route matches it); the later steps and the restore only rewrite the rules left, so this outlasts the release: put the backendRefs to store-svc back into the route by hand once the release is over"
            ]
        );
    }

    #[test]
    fn with_canary_equal_to_stable_the_restore_says_what_rules_with_other_backends_lose() {
        let same = GatewayRoute { canary_service: STABLE, ..gateway(OwnerKind::TrafficRouting) };
        let shared =
            json!({"matches": [{"path": path("/")}], "backendRefs": [svc("legacy", Some(50)), svc(STABLE, Some(20))]});
        let route = http_route(json!([shared]));
        let loses = "spec.rules[0]: the restore removes store-svc's backendRef (canary and stable Service are both store-svc: a TrafficRouting routes to the stable Service itself), while the rule's other backends keep theirs (legacy weight 50), so every request the rule matches goes to them and none to store-svc";
        let no_rule = "no rule of HTTPRoute shop/store routes to store-svc after this step: the restore removes its backendRef from every rule that had one (spec.rules[0]), as canary and stable Service";
        // The restore, and a TrafficRouting's weight -1, which is its restore.
        for action in [RoutingAction::Restore, traffic("-1%")] {
            let plan = plan(&same, &route, &action);
            assert_eq!(
                written_rules(&plan),
                json!([{"matches": [{"path": path("/")}], "backendRefs": [svc("legacy", Some(50))]}])
            );
            assert_eq!(plan.warnings[0], loses, "{action:?}");
            assert!(plan.warnings[1].starts_with(no_rule), "{:?}", plan.warnings);
            assert_eq!(plan.warnings.len(), 2, "{:?}", plan.warnings);
        }
        // A second backendRef to the Service goes at the controller's next pass: a rule with
        // two and nothing else is deleted all the same.
        let twice = http_route(json!([shared, {"backendRefs": [svc(STABLE, Some(1)), svc(STABLE, Some(1))]}]));
        let plan = plan(&same, &twice, &RoutingAction::Restore);
        assert_eq!(
            written_rules(&plan),
            json!([{"matches": [{"path": path("/")}], "backendRefs": [svc("legacy", Some(50))]}])
        );
        assert_eq!(
            plan.warnings[..2],
            [
                loses,
                "spec.rules[1] is deleted: canary and stable Service are both store-svc (a TrafficRouting routes to the stable Service itself), so the restore removes its backendRefs, all to that Service"
            ]
        );
        assert!(plan.warnings[2].starts_with("no rule of HTTPRoute shop/store routes to store-svc after this step: the restore removes its backendRef from every rule that had one (spec.rules[0], spec.rules[1])"), "{:?}", plan.warnings);
        // With a canary Service the restore keeps the stable backendRef: neither is said.
        let plan = self::plan(&rollout(), &route, &RoutingAction::Restore);
        assert!(
            !plan.warnings.iter().any(|w| w.contains("removes store-svc's backendRef") || w.starts_with("no rule of")),
            "{:?}",
            plan.warnings
        );
    }

    #[test]
    fn a_write_that_leaves_the_stable_service_without_a_rule_is_said() {
        let same = GatewayRoute { canary_service: STABLE, ..gateway(OwnerKind::TrafficRouting) };
        let route = http_route(json!([
            {"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(1))]},
            {"matches": [{"path": path("/x")}], "backendRefs": [svc("other", Some(1))]}
        ]));
        let stranded = "HTTPRoute shop/store: no rule routes to Service store-svc any more: the requests its rules matched no longer reach it (they go to a rule's other backends where it has any, else get no route), and restoring the route does not bring them back";
        // A match step and the restore with canary = stable drop the Service's only rule.
        for action in [matches(json!([{"headers": [header("h", "1")]}])), RoutingAction::Restore] {
            let planned = self::plan(&same, &route, &action).route.unwrap();
            assert_eq!(strands_stable(&same, &route, &planned).as_deref(), Some(stranded), "{action:?}");
        }
        // A weight step keeps it; so do a match step and the restore with a canary Service.
        let weighted = self::plan(&same, &route, &traffic("30%")).route.unwrap();
        assert_eq!(strands_stable(&same, &route, &weighted), None);
        for action in [matches(json!([{"headers": [header("h", "1")]}])), RoutingAction::Restore] {
            let planned = self::plan(&rollout(), &route, &action).route.unwrap_or_else(|| route.clone());
            assert_eq!(strands_stable(&rollout(), &route, &planned), None, "{action:?}");
        }
        // A route that had no rule to it is not stranded by a write.
        let elsewhere =
            http_route(json!([{"matches": [{"path": path("/x")}], "backendRefs": [svc("other", Some(1))]}]));
        assert_eq!(strands_stable(&same, &elsewhere, &elsewhere), None);
    }

    #[test]
    fn stages_carry_the_route_from_one_to_the_next() {
        let route = http_route(json!([{"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(1))]}]));
        let steps =
            [matches(json!([{"headers": [header("h", "1")]}])), traffic("20%"), traffic("50%"), RoutingAction::Restore];
        let plans = plan_stages(&rollout(), Some(&route), &steps).unwrap();
        let rules: Vec<Value> = plans.iter().map(|p| p.route.as_ref().unwrap()["spec"]["rules"].clone()).collect();
        let header_rule = json!({"matches": [{"path": path("/"), "headers": [header("h", "1")]}], "backendRefs": [svc(CANARY, Some(1))]});
        assert_eq!(rules[0], json!([route["spec"]["rules"][0], header_rule]));
        assert_eq!(
            rules[2],
            json!([{"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(50)), svc(CANARY, Some(50))]}, header_rule]),
            "the header rule stays through the weight steps"
        );
        assert_eq!(rules[3], json!([{"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(1))]}]));
        assert!(plans.iter().all(|p| p.writes));
    }

    #[test]
    fn route_warnings_say_when_nothing_routes_to_the_stable_service() {
        let route = http_route(json!([{"backendRefs": [svc("other", Some(1))]}]));
        assert_eq!(
            route_warnings(&rollout(), &route),
            [
                "HTTPRoute shop/store has no backendRef to Service store-svc (kind: Service): the controller's steps leave its rules as they are"
            ]
        );
        assert!(route_warnings(&rollout(), &store_route()).is_empty());
    }

    #[test]
    fn route_warnings_name_each_backend_ref_of_another_kind_named_like_a_service() {
        let import = |name: &str| {
            let mut backend = svc(name, Some(1));
            backend["group"] = "multicluster.x-k8s.io".into();
            backend["kind"] = "ServiceImport".into();
            backend
        };
        let mut no_group = import(CANARY);
        no_group["group"] = "".into();
        let route = http_route(json!([
            {"matches": [{"path": path("/")}], "backendRefs": [svc(STABLE, Some(1))]},
            {"matches": [{"path": path("/import")}], "backendRefs": [import(STABLE)]},
            {"matches": [{"path": path("/both")}], "backendRefs": [import("other"), svc(STABLE, Some(1)), no_group]}
        ]));
        let stable = "spec.rules[1].backendRefs[0] is a ServiceImport (group multicluster.x-k8s.io), not a Service: the controller takes only a backendRef of kind: Service for the stable Service store-svc, so its steps never send any of the requests this backendRef gets to the canary";
        assert_eq!(
            route_warnings(&rollout(), &route),
            [
                stable,
                "spec.rules[2].backendRefs[2] is a ServiceImport, not a Service: the controller takes only a backendRef of kind: Service for the canary Service store-svc-canary, so its steps set no weight on it and its restore does not remove it"
            ]
        );
        // The controller leaves that rule as it is, as the warning says.
        let plan = plan(&rollout(), &route, &traffic("20%"));
        assert_eq!(written_rules(&plan)[1], route["spec"]["rules"][1]);
        // With canary = stable, one warning, as the stable Service's.
        let same = GatewayRoute { canary_service: STABLE, ..rollout() };
        let imports_stable =
            http_route(json!([{"backendRefs": [svc(STABLE, Some(1))]}, {"backendRefs": [import(STABLE)]}]));
        assert_eq!(route_warnings(&same, &imports_stable), [stable]);
    }

    fn routing() -> Routing {
        let owner = crate::model::Owner {
            kind: OwnerKind::Rollout,
            namespace: "shop".into(),
            name: "store".into(),
            uid: String::new(),
        };
        let http_route = "store".to_string();
        Routing {
            owner,
            stable_service: STABLE.into(),
            canary_service: CANARY.into(),
            providers: vec![crate::model::Provider::Gateway { http_route }],
            releasing: false,
        }
    }

    #[test]
    fn plan_object_replaces_the_whole_route_or_keeps_it() {
        let route = Arc::new(http_route(json!([{"backendRefs": [svc(STABLE, Some(1))]}, {"filters": []}])));
        let plan =
            plan_object(&ObjectIndex::default(), &routing(), "store", &traffic("20%"), Some(&route), None).unwrap();
        assert_eq!(plan.describe(), "HTTPRoute shop/store");
        assert_eq!(plan.reference.api_version, "gateway.networking.k8s.io/v1");
        let [Change::Replace { before, after, .. }] = plan.changes.as_slice() else { panic!("{:?}", plan.changes) };
        assert_eq!((before, after), (&route, &plan.planned));
        assert!(plan.changed() && plan.untouched);
        assert!(
            matches!(&plan.action, Action::Rules(how) if how.ends_with("weight mode: store-svc 80, store-svc-canary 20"))
        );
        // The route's own warnings come with a plan from the route as read only.
        assert!(plan.warnings[0].starts_with("spec.rules[1] has no backendRefs"), "{:?}", plan.warnings);
        let next = plan_object(
            &ObjectIndex::default(),
            &routing(),
            "store",
            &traffic("20%"),
            Some(&plan.planned),
            Some("step 1".into()),
        )
        .unwrap();
        assert_eq!(next.changes, [Change::Keep { key: next.key.clone(), object: plan.planned.clone() }]);
        assert!(Arc::ptr_eq(&next.planned, &plan.planned), "a route left as it is is not copied");
        assert!(!next.changed() && !next.untouched);
        assert!(next.warnings.is_empty(), "{:?}", next.warnings);
        assert_eq!(next.after.as_deref(), Some("step 1"));
        let left = plan_object(&ObjectIndex::default(), &routing(), "store", &RoutingAction::Leave, Some(&route), None)
            .unwrap();
        assert!(matches!(left.action, Action::Keep(_)) && !left.changed());
        assert!(matches!(
            plan_object(&ObjectIndex::default(), &routing(), "store", &RoutingAction::Restore, Some(&plan.planned), None).unwrap().action,
            Action::RestoreRules(how) if how.contains("restore: store-svc-canary removed")
        ));
    }

    #[test]
    fn plan_object_warns_of_a_missing_canary_service_where_a_step_routes_to_it() {
        let route = Arc::new(http_route(json!([{"backendRefs": [svc(STABLE, Some(1))]}])));
        let missing = "Service store-svc-canary does not exist: the HTTPRoute's canary backendRef routes to it";
        let warned = |objects: &ObjectIndex, routing: &Routing, action: &RoutingAction| {
            let plan = plan_object(objects, routing, "store", action, Some(&route), None).unwrap();
            plan.warnings.iter().any(|w| w.starts_with(missing))
        };
        let mut objects = ObjectIndex::default();
        assert!(!warned(&objects, &routing(), &traffic("20%")), "not looked for");
        objects.insert_absent(ObjectKey::new("", "Service", "shop", CANARY));
        assert!(warned(&objects, &routing(), &traffic("20%")));
        assert!(warned(&objects, &routing(), &matches(json!([{"headers": [{"name": "x", "value": "1"}]}]))));
        // A restore removes the canary backendRefs; a stage left alone writes nothing.
        assert!(!warned(&objects, &routing(), &RoutingAction::Restore));
        assert!(!warned(&objects, &routing(), &RoutingAction::Leave));
        // With canary = stable every backendRef is the stable one's.
        let same = Routing { canary_service: STABLE.into(), ..routing() };
        objects.insert_absent(ObjectKey::new("", "Service", "shop", STABLE));
        let plan = plan_object(&objects, &same, "store", &traffic("20%"), Some(&route), None).unwrap();
        assert!(!plan.warnings.iter().any(|w| w.contains("does not exist")), "{:?}", plan.warnings);
    }

    #[test]
    fn plan_object_of_a_missing_route_names_it() {
        let error = plan_object(&ObjectIndex::default(), &routing(), "store", &traffic("20%"), None, None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "Rollout shop/store routes through HTTPRoute shop/store, but there is no such object in namespace shop"
        );
        let Error::Missing { owner, field, .. } = error else { panic!("{error:?}") };
        assert_eq!((owner, field.to_string()), (OwnerKind::Rollout, "gateway.httpRouteName".into()));
        // The controller reads nothing at a stage it leaves alone.
        let left =
            plan_object(&ObjectIndex::default(), &routing(), "store", &RoutingAction::Leave, None, None).unwrap();
        assert!(matches!(left.action, Action::Keep(_)) && !left.changed() && left.current.is_null());
        assert_eq!(
            left.warnings,
            [
                "HTTPRoute shop/store: there is no such object in namespace shop: the controller writes nothing here, but a step that routes it fails"
            ]
        );
        // Nor at a restore, whose finalise skips a route it does not find.
        let skipped =
            plan_object(&ObjectIndex::default(), &routing(), "store", &RoutingAction::Restore, None, None).unwrap();
        assert!(matches!(skipped.action, Action::Keep("not found: the controller's restore skips it")), "{skipped:?}");
        assert!(!skipped.changed() && skipped.planned.is_null());
        assert!(skipped.warnings[0].ends_with("the controller's restore skips it, but a step that routes it fails"));
    }

    #[test]
    fn with_canary_equal_to_stable_a_route_counts_as_untouched() {
        let route = http_route(json!([{"backendRefs": [svc(STABLE, Some(1))]}]));
        assert!(rollout().untouched(&route));
        let routed = http_route(json!([{"backendRefs": [svc(STABLE, Some(80)), svc(CANARY, Some(20))]}]));
        assert!(!rollout().untouched(&routed));
        let same = GatewayRoute { canary_service: STABLE, ..rollout() };
        assert!(same.untouched(&routed));
    }
}
