//! The TrafficRouting CR (`rollouts.kruise.io/v1alpha1`): one fixed strategy routed through its
//! refs while a Rollout that names it is progressing.

use super::strategy::{self, RouteStrategy, Semantics, read_header_modifier, read_matches};
use super::{ModelError, Path, RoutingAction, StageRouting, TrafficRoutingRef, metadata_str};
use serde_json::Value;

#[derive(Clone, Debug)]
pub struct TrafficRoutingCr {
    pub name: String,
    pub namespace: Option<String>,
    /// `metadata.uid` (empty in a manifest without one).
    pub uid: String,
    /// `objectRef[0]`; the controller uses only the first entry.
    pub traffic_routing: TrafficRoutingRef,
    /// The strategy after `ConversionToV1beta1TrafficRoutingStrategy`: weight N becomes traffic
    /// "N%", matches keep only headers and stay absent when there are none.
    pub strategy: RouteStrategy,
    pub phase: Option<String>,
    pub warnings: Vec<String>,
}

impl TrafficRoutingCr {
    /// Reads a TrafficRouting as the API server stores it: with the CRD's defaults.
    pub fn from_object(object: &Value) -> Result<TrafficRoutingCr, ModelError> {
        TrafficRoutingCr::read(object, Semantics::Controller)
    }

    /// `from_object`, with the CRD's defaults only under `Semantics::Controller`.
    pub fn read(object: &Value, semantics: Semantics) -> Result<TrafficRoutingCr, ModelError> {
        if object["apiVersion"] != "rollouts.kruise.io/v1alpha1" || object["kind"] != "TrafficRouting" {
            return Err(ModelError(format!(
                "not a TrafficRouting of rollouts.kruise.io/v1alpha1 (apiVersion {}, kind {})",
                object["apiVersion"], object["kind"]
            )));
        }
        let name = metadata_str(object, "name").ok_or_else(|| ModelError("metadata.name is required".into()))?;
        let refs = Path::root("spec.objectRef");
        let traffic_routing = match object["spec"]["objectRef"].as_array().map(Vec::as_slice) {
            Some([first, ..]) => TrafficRoutingRef::read(first, &refs.index(0))?,
            _ => return Err(refs.error("must list at least one traffic routing")),
        };
        let spec = &object["spec"]["strategy"];
        let at = Path::root("spec.strategy");
        let mut warnings = Vec::new();
        let traffic = match spec.get("weight").filter(|w| !w.is_null()) {
            None => None,
            Some(w) => Some(format!("{}%", strategy::int32(w, &at.field("weight"))?)),
        };
        let matches = match spec.get("matches").filter(|m| !m.is_null()) {
            Some(m) => {
                Some(read_matches(m, &at.field("matches"), true, semantics, &mut warnings)?).filter(|m| !m.is_empty())
            }
            None => None,
        };
        let request_header_modifier = match spec.get("requestHeaderModifier").filter(|m| !m.is_null()) {
            Some(m) => Some(read_header_modifier(m, &at.field("requestHeaderModifier"))?),
            None => None,
        };
        Ok(TrafficRoutingCr {
            name: name.into(),
            namespace: metadata_str(object, "namespace").map(str::to_string),
            uid: metadata_str(object, "uid").unwrap_or_default().into(),
            traffic_routing,
            strategy: RouteStrategy { traffic, matches, request_header_modifier },
            phase: object["status"]["phase"].as_str().map(str::to_string),
            warnings,
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
        assert_eq!(tr.routing(), StageRouting::of(tr.strategy.clone()));
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
}
