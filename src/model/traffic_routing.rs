//! The TrafficRouting CR (`rollouts.kruise.io/v1alpha1`): one fixed strategy routed through its
//! refs while a Rollout that names it is progressing.

use super::strategy::{self, RouteStrategy, Semantics, read_header_modifier, read_matches};
use super::{
    FieldMessage, ModelError, Path, RoutingAction, StageRouting, TrafficRoutingRef, metadata_str, name_as_read,
};
use serde_json::Value;

/// What the finalizers a Rollout puts on the TrafficRouting its annotation names while it
/// progresses contain (`progressing.rollouts.kruise.io/<rollout>`): the controller counts every
/// finalizer that contains it.
const PROGRESSING_FINALIZER: &str = "progressing.rollouts.kruise.io";

#[derive(Clone, Debug)]
pub struct TrafficRoutingCr {
    pub name: String,
    /// `metadata.uid` (empty in a manifest without one).
    pub uid: String,
    /// `objectRef[0]`; the controller uses only the first entry.
    pub traffic_routing: TrafficRoutingRef,
    /// The strategy after `ConversionToV1beta1TrafficRoutingStrategy`: weight N becomes traffic
    /// "N%", matches keep only headers and stay absent when there are none.
    pub strategy: RouteStrategy,
    pub phase: Option<String>,
    /// Whether it has a deletionTimestamp: its controller finalises it from its next reconcile,
    /// before its phase says Terminating.
    pub deleting: bool,
    /// The finalizers that keep it progressing (those containing `progressing.rollouts.kruise.io`),
    /// one per Rollout that routes through it now.
    pub progressing_finalizers: Vec<String>,
    pub warnings: Vec<FieldMessage>,
    /// What the API server's schema validation refuses, read past under `Semantics::Harness`
    /// (as go test decodes it); under `Semantics::Controller` the first is the reading's error.
    pub rejections: Vec<FieldMessage>,
}

impl TrafficRoutingCr {
    /// Reads a TrafficRouting as the API server stores it: with the CRD's defaults.
    pub fn from_object(object: &Value) -> Result<TrafficRoutingCr, ModelError> {
        TrafficRoutingCr::read(object, Semantics::Controller)
    }

    /// `from_object`, with the CRD's defaults only under `Semantics::Controller`.
    pub fn read(object: &Value, semantics: Semantics) -> Result<TrafficRoutingCr, ModelError> {
        if object["apiVersion"] != "rollouts.kruise.io/v1alpha1" || object["kind"] != "TrafficRouting" {
            // The field named is the one that is wrong (apiVersion when both are).
            let field = if object["apiVersion"] == "rollouts.kruise.io/v1alpha1" { "kind" } else { "apiVersion" };
            return Err(ModelError(FieldMessage::new(
                Path::root(field),
                format!(
                    "not a TrafficRouting of rollouts.kruise.io/v1alpha1 (apiVersion {}, kind {})",
                    object["apiVersion"], object["kind"]
                ),
            )));
        }
        let name = name_as_read(object, semantics)?;
        let refs = Path::root("spec").field("objectRef");
        let mut warnings = Vec::new();
        let traffic_routing = match object["spec"]["objectRef"].as_array().map(Vec::as_slice) {
            Some([first, rest @ ..]) => {
                let first = TrafficRoutingRef::read(first, &refs.index(0))?;
                if !rest.is_empty() {
                    warnings.push(FieldMessage::new(
                        refs.index(1),
                        format!(
                            "the controller routes objectRef[0] alone (Service {}): {} never routed; give each its own TrafficRouting",
                            first.service,
                            match rest.len() {
                                1 => "the entry after it is".to_string(),
                                n => format!("the {n} entries after it are"),
                            }
                        ),
                    ));
                }
                first
            }
            _ => return Err(refs.error("must list at least one traffic routing")),
        };
        let spec = &object["spec"]["strategy"];
        let at = Path::root("spec").field("strategy");
        let traffic = match spec.get("weight").filter(|w| !w.is_null()) {
            None => None,
            Some(w) => {
                let weight = strategy::int32(w, &at.field("weight"))?;
                warnings.extend(weight_warning(weight).map(|text| FieldMessage::new(at.field("weight"), text)));
                Some(format!("{weight}%"))
            }
        };
        let mut rejections = Vec::new();
        let matches = match spec.get("matches").filter(|m| !m.is_null()) {
            Some(m) => {
                let read = read_matches(m, &at.field("matches"), true, semantics, &mut warnings)?;
                // The CRD's enum, which the API server enforces (go test's decoding does not).
                rejections = super::admission::header_match_types(&at.field("matches"), m);
                if semantics == Semantics::Controller && !rejections.is_empty() {
                    return Err(super::ModelError(rejections.swap_remove(0)));
                }
                Some(read).filter(|m| !m.is_empty())
            }
            None => None,
        };
        let request_header_modifier = match spec.get("requestHeaderModifier").filter(|m| !m.is_null()) {
            Some(m) => Some(read_header_modifier(m, &at.field("requestHeaderModifier"))?),
            None => None,
        };
        Ok(TrafficRoutingCr {
            name: name.into(),
            uid: metadata_str(object, "uid").unwrap_or_default().into(),
            traffic_routing,
            strategy: RouteStrategy { traffic, matches, request_header_modifier },
            phase: object["status"]["phase"].as_str().map(str::to_string),
            deleting: !object["metadata"]["deletionTimestamp"].is_null(),
            progressing_finalizers: object["metadata"]["finalizers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|f| f.contains(PROGRESSING_FINALIZER))
                .map(str::to_string)
                .collect(),
            warnings,
            rejections,
        })
    }

    /// What the controller writes while the TrafficRouting is progressing: its strategy routed,
    /// or, with neither weight nor matches, nothing at all (`DoTrafficRouting` returns done at
    /// once; the stored original comes back only when the TrafficRouting finalises).
    pub fn routing(&self) -> StageRouting {
        if self.strategy.routes_traffic() {
            return StageRouting::of(self.strategy.clone());
        }
        StageRouting {
            action: RoutingAction::Leave,
            note: Some("with neither weight nor matches the controller writes nothing while the TrafficRouting is progressing; the stored original comes back when it finalises".into()),
        }
    }

    /// Whether it is being deleted (phase Terminating, or a deletionTimestamp its controller has
    /// not acted on yet): its controller finalises it, restoring its objects, whoever holds it.
    pub fn being_deleted(&self) -> bool {
        self.phase.as_deref() == Some("Terminating") || self.deleting
    }

    /// What the controller writes to its objects during a release of a Rollout that names it:
    /// `routing()` while a Rollout holds it. A Rollout puts its finalizer on as its release
    /// starts (`started`: past Initializing), so one that is not held then was linked later, or
    /// its finalizer was taken off: its controller routes nothing in this release, and restores
    /// the original if it was progressing (§2). One being deleted is restored whoever holds it.
    pub fn routing_for(&self, started: bool) -> StageRouting {
        // Being deleted, it is finalised whoever holds it.
        if self.being_deleted() {
            let how = if self.phase.as_deref() == Some("Terminating") {
                "phase Terminating"
            } else {
                "it has a deletionTimestamp"
            };
            return StageRouting {
                action: RoutingAction::Restore,
                note: Some(format!(
                    "it is being deleted ({how}), so its controller finalises it, restoring the original"
                )),
            };
        }
        if !started || !self.progressing_finalizers.is_empty() {
            return self.routing();
        }
        let why = format!(
            "it has no {PROGRESSING_FINALIZER}/<rollout> finalizer, which a Rollout puts on as its release starts (one linked later, or whose finalizer was taken off, waits for the next release)"
        );
        match self.phase.as_deref() {
            Some("Progressing" | "Finalizing") => StageRouting {
                action: RoutingAction::Restore,
                note: Some(format!(
                    "no Rollout holds it, so its controller finalises it, restoring the original: {why}"
                )),
            },
            _ => StageRouting {
                action: RoutingAction::Leave,
                note: Some(format!("no Rollout holds it, so its controller writes nothing: {why}")),
            },
        }
    }

    /// The finalizers that keep it progressing once the Rollouts named `rollouts` (of its
    /// namespace) have finalised: while one is left, the controller keeps routing its strategy,
    /// and it restores its objects only once none is (docs/controller-semantics.md §2).
    pub fn held_apart_from<'a>(&'a self, rollouts: &[&str]) -> Vec<&'a str> {
        let own = |finalizer: &str| rollouts.iter().any(|r| finalizer == format!("{PROGRESSING_FINALIZER}/{r}"));
        self.progressing_finalizers.iter().map(String::as_str).filter(|f| !own(f)).collect()
    }
}

/// `Rollout b (finalizer progressing.rollouts.kruise.io/b)`, for each of a TrafficRouting's
/// progressing finalizers.
pub fn holders_text(holders: &[&str]) -> String {
    let who: Vec<String> = holders
        .iter()
        .map(|f| match finalizer_rollout(f) {
            Some(name) => format!("Rollout {name} (finalizer {f})"),
            None => format!("finalizer {f}"),
        })
        .collect();
    who.join(", ")
}

/// When a TrafficRouting's controller puts its objects back (deletes its canary Ingress): it has
/// no steps, and restores them when it finalises, once the Rollouts that held it have let go
/// (docs/controller-semantics.md §2). Said in messages about objects it left routed.
pub const WHEN_IT_FINALISES: &str =
    "when it finalises, once no Rollout holds it any more (at the end of the next release of a Rollout linked to it)";

/// The Rollout a progressing finalizer names (`progressing.rollouts.kruise.io/<rollout>`).
pub fn finalizer_rollout(finalizer: &str) -> Option<&str> {
    finalizer.strip_prefix(PROGRESSING_FINALIZER)?.strip_prefix('/').filter(|name| !name.is_empty())
}

/// A TrafficRouting's weight outside 0 to 100, which no webhook refuses (a Rollout's step is
/// checked): what the scripts get there.
fn weight_warning(weight: i32) -> Option<String> {
    match weight {
        0..=100 => None,
        -1 => Some("weight -1 is the controller's value for no traffic: the scripts get canaryWeight -1 and stableWeight 101, and the built-in VirtualService script routes every request to the canary at it; 0 routes none".into()),
        _ => Some(format!(
            "weight {weight} is outside 0 to 100, which nothing checks for a TrafficRouting: the scripts get canaryWeight {weight} and stableWeight {}, a negative weight, which Istio refuses",
            100i64 - i64::from(weight)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn converts_the_strategy_like_the_controller() {
        let tr = TrafficRoutingCr::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": "tr"},
            "spec": {"strategy": {"weight": 50}, "objectRef": [{"service": "svc", "customNetworkRefs": [{"apiVersion": "networking.istio.io/v1alpha3", "kind": "VirtualService", "name": "vs"}]}]}
        }))
        .unwrap();
        assert_eq!(tr.strategy.traffic.as_deref(), Some("50%"));
        assert_eq!(tr.strategy.matches, None);
        assert_eq!(tr.traffic_routing.service, "svc");
        assert_eq!(tr.traffic_routing.field.to_string(), "spec.objectRef[0]");
        assert_eq!(tr.routing(), StageRouting::of(tr.strategy.clone()));
    }

    #[test]
    fn a_header_match_type_outside_the_crds_enum_is_refused_as_the_api_server_does() {
        let object = |kind: &str| {
            json!({
                "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": "tr"},
                "spec": {"strategy": {"matches": [{"headers": [{"type": kind, "name": "a", "value": "1"}]}]},
                         "objectRef": [{"service": "svc"}]}
            })
        };
        assert!(TrafficRoutingCr::from_object(&object("RegularExpression")).is_ok());
        assert_eq!(
            TrafficRoutingCr::from_object(&object("Prefix")).unwrap_err().to_string(),
            "spec.strategy.matches[0].headers[0].type: must be one of Exact, RegularExpression, not \"Prefix\""
        );
        // go test decodes it, and hands it to the script as written.
        let read = TrafficRoutingCr::read(&object("Prefix"), Semantics::Harness).unwrap();
        assert_eq!(read.strategy.matches.unwrap()[0]["headers"][0]["type"], "Prefix");
        let refused: Vec<String> = read.rejections.iter().map(ToString::to_string).collect();
        assert_eq!(
            refused,
            ["spec.strategy.matches[0].headers[0].type: must be one of Exact, RegularExpression, not \"Prefix\""]
        );
        let fine = TrafficRoutingCr::read(&object("Exact"), Semantics::Harness).unwrap();
        assert!(fine.rejections.is_empty());
    }

    #[test]
    fn a_weight_outside_0_to_100_and_object_refs_after_the_first_are_warned_of() {
        let read = |weight: i64, refs: Value| {
            let tr = TrafficRoutingCr::from_object(&json!({
                "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": "tr"},
                "spec": {"strategy": {"weight": weight}, "objectRef": refs}
            }))
            .unwrap();
            tr.warnings.into_iter().map(|w| (w.field.to_string(), w.text)).collect::<Vec<_>>()
        };
        let one = json!([{"service": "svc"}]);
        for fine in [0, 50, 100] {
            assert_eq!(read(fine, one.clone()), [], "{fine}");
        }
        assert_eq!(
            read(-1, one.clone()),
            [(
                "spec.strategy.weight".to_string(),
                "weight -1 is the controller's value for no traffic: the scripts get canaryWeight -1 and stableWeight 101, and the built-in VirtualService script routes every request to the canary at it; 0 routes none".to_string()
            )]
        );
        assert_eq!(
            read(150, one)[0].1,
            "weight 150 is outside 0 to 100, which nothing checks for a TrafficRouting: the scripts get canaryWeight 150 and stableWeight -50, a negative weight, which Istio refuses"
        );
        let three = json!([{"service": "web"}, {"service": "api"}, {"service": "db"}]);
        assert_eq!(
            read(10, three),
            [(
                "spec.objectRef[1]".to_string(),
                "the controller routes objectRef[0] alone (Service web): the 2 entries after it are never routed; give each its own TrafficRouting".to_string()
            )]
        );
    }

    #[test]
    fn the_weight_must_be_an_integer() {
        let read = |weight: Value| {
            TrafficRoutingCr::from_object(&json!({
                "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": "tr"},
                "spec": {"strategy": {"weight": weight}, "objectRef": [{"service": "svc"}]}
            }))
        };
        for bad in [json!("50"), json!(50.5), json!("50%")] {
            assert_eq!(read(bad).unwrap_err().to_string(), "spec.strategy.weight: must be an integer");
        }
        // Go's int32: an integer past it is named as such.
        for big in [json!(9999999999999999999u64), json!(2147483648i64), json!(-2147483649i64)] {
            assert_eq!(
                read(big.clone()).unwrap_err().to_string(),
                format!("spec.strategy.weight: {big} is out of range for an int32 (-2147483648 to 2147483647)")
            );
        }
        assert_eq!(read(json!(0)).unwrap().strategy.traffic.as_deref(), Some("0%"));
        assert_eq!(read(Value::Null).unwrap().strategy.traffic, None);
    }

    #[test]
    fn in_a_release_under_way_only_a_held_traffic_routing_is_routed() {
        let tr = |finalizers: Value, phase: Value| {
            TrafficRoutingCr::from_object(&json!({
                "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
                "metadata": {"name": "tr", "finalizers": finalizers},
                "spec": {"strategy": {"weight": 5}, "objectRef": [{"service": "svc"}]}, "status": {"phase": phase}
            }))
            .unwrap()
        };
        let held = tr(
            json!(["rollouts.kruise.io/trafficrouting", "progressing.rollouts.kruise.io/web"]),
            json!("Progressing"),
        );
        assert_eq!(held.routing_for(true), held.routing());
        // Before its release starts, the Rollout puts its finalizer on: routed.
        let unheld = tr(json!(["rollouts.kruise.io/trafficrouting"]), json!("Healthy"));
        assert_eq!(unheld.routing_for(false), unheld.routing());
        // Started without it: nothing written, or the restore of one that was progressing.
        let left = unheld.routing_for(true);
        assert_eq!(left.action, RoutingAction::Leave);
        assert!(left.note.unwrap().starts_with("no Rollout holds it, so its controller writes nothing: it has no progressing.rollouts.kruise.io/<rollout> finalizer"));
        // Being deleted, it is finalised, held or not.
        let deleted = tr(json!(["progressing.rollouts.kruise.io/web"]), json!("Terminating")).routing_for(true);
        assert_eq!(deleted.action, RoutingAction::Restore);
        assert!(deleted.note.unwrap().starts_with("it is being deleted (phase Terminating)"));
        // A deletionTimestamp its controller has not acted on yet: the same.
        let mut deleting = tr(json!(["progressing.rollouts.kruise.io/web"]), json!("Progressing"));
        deleting.deleting = true;
        assert!(deleting.being_deleted());
        let deleting = deleting.routing_for(true);
        assert_eq!(deleting.action, RoutingAction::Restore);
        assert!(deleting.note.unwrap().starts_with("it is being deleted (it has a deletionTimestamp)"));
        for phase in ["Progressing", "Finalizing"] {
            let finalising = tr(json!([]), json!(phase)).routing_for(true);
            assert_eq!(finalising.action, RoutingAction::Restore, "{phase}");
            assert!(
                finalising
                    .note
                    .unwrap()
                    .starts_with("no Rollout holds it, so its controller finalises it, restoring the original")
            );
        }
        for phase in [json!("Initial"), Value::Null] {
            assert_eq!(tr(Value::Null, phase).routing_for(true).action, RoutingAction::Leave);
        }
    }

    #[test]
    fn without_weight_or_matches_nothing_is_written() {
        let tr = TrafficRoutingCr::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": "tr"},
            "spec": {"strategy": {"matches": []}, "objectRef": [{"service": "svc"}]}
        }))
        .unwrap();
        let routing = tr.routing();
        assert_eq!(routing.action, RoutingAction::Leave, "not restored: the controller does nothing");
        assert!(routing.note.unwrap().contains("writes nothing while the TrafficRouting is progressing"));
    }

    #[test]
    fn the_rollouts_holding_it_are_its_progressing_finalizers() {
        let tr = TrafficRoutingCr::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
            "metadata": {"name": "tr", "finalizers": [
                "rollouts.kruise.io/trafficrouting",
                "progressing.rollouts.kruise.io/a",
                "progressing.rollouts.kruise.io/b",
                "example.com/progressing.rollouts.kruise.io-x"
            ]},
            "spec": {"strategy": {"weight": 10}, "objectRef": [{"service": "svc"}]}
        }))
        .unwrap();
        // The controller counts every finalizer containing the prefix, whatever else it holds.
        assert_eq!(
            tr.progressing_finalizers,
            [
                "progressing.rollouts.kruise.io/a",
                "progressing.rollouts.kruise.io/b",
                "example.com/progressing.rollouts.kruise.io-x"
            ]
        );
        assert_eq!(
            tr.held_apart_from(&["a"]),
            ["progressing.rollouts.kruise.io/b", "example.com/progressing.rollouts.kruise.io-x"]
        );
        assert_eq!(tr.held_apart_from(&["a", "b", "x"]), ["example.com/progressing.rollouts.kruise.io-x"]);
        // Matched whole: neither "" nor "a/" is Rollout a.
        assert_eq!(tr.held_apart_from(&["", "a/"]).len(), 3);
        assert_eq!(finalizer_rollout("progressing.rollouts.kruise.io/b"), Some("b"));
        assert_eq!(finalizer_rollout("example.com/progressing.rollouts.kruise.io-x"), None);
        assert_eq!(finalizer_rollout("progressing.rollouts.kruise.io/"), None);
        let free = TrafficRoutingCr::from_object(&json!({
            "apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
            "metadata": {"name": "tr", "finalizers": ["rollouts.kruise.io/trafficrouting"]},
            "spec": {"strategy": {"weight": 10}, "objectRef": [{"service": "svc"}]}
        }))
        .unwrap();
        assert!(free.held_apart_from(&[]).is_empty());
    }
}
