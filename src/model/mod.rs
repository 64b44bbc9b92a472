//! Rollouts and TrafficRoutings as the controller sees them, and the `obj` (LuaData) each step
//! hands to a gateway object's script.

mod admission;
mod ending;
pub mod http_route;
mod luadata;
mod permission;
mod rollout;
mod routing;
mod stage_routing;
mod strategy;
mod traffic_routing;

pub use ending::Ending;
pub use luadata::lua_data;
pub use permission::{Permission, refused_read, unread_warning};
pub use rollout::{
    ApprovalProgress, BLUE_GREEN_BLOCKED, INITIALIZING, Rollout, Stage, Step, StrategyKind, TRAFFIC_ROUTING_ANNOTATION,
    approval_progress, rollout_args, steps_named,
};
pub use routing::{
    INGRESS_API_VERSION, ObjectIndex, ObjectKey, Owner, OwnerKind, Provider, Routing, canary_ingress_name,
};
pub use stage_routing::{RoutingAction, StageRouting, workload_replicas};
pub use strategy::{RouteStrategy, Semantics, WeightSplit, header_changes, without_empty_lists};
pub use traffic_routing::{TrafficRoutingCr, WHEN_IT_FINALISES, finalizer_rollout, holders_text};

use serde_json::Value;
use std::fmt;

/// A message about one field of an object, such as
/// `spec.strategy.canary.steps[2].traffic: "150%" must be in (0%, 100%]`: its text, and the field
/// it is about, so that a message about an object read from a file can name the field's line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldMessage {
    pub field: Path,
    pub text: String,
}

impl FieldMessage {
    pub fn new(field: Path, text: impl Into<String>) -> FieldMessage {
        FieldMessage { field, text: text.into() }
    }

    /// Adds `message` to `messages` unless one is about its field already: a field the model
    /// knows is dropped (a v1alpha1 match's `path`) is unknown to the CRD too, and said once.
    pub fn push_once_per_field(messages: &mut Vec<FieldMessage>, message: FieldMessage) {
        if !messages.iter().any(|m| m.field == message.field) {
            messages.push(message);
        }
    }

    /// The same message, led by where the field is (`rollout.yaml:14: …`).
    pub fn at(self, place: &str) -> FieldMessage {
        FieldMessage { text: format!("{place}: {}", self.text), ..self }
    }
}

impl fmt::Display for FieldMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// An input that makes no sense: what is wrong with which field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelError(pub FieldMessage);

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ModelError {}

/// One step of a field path: a map's key, or a list's index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A field path (`spec.strategy.canary.steps[2].traffic`), kept as its keys and indices: a key
/// may hold dots or brackets itself (an annotation's), which the text shown cannot tell apart.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Path(Vec<Segment>);

impl Path {
    /// A path of one key.
    pub fn root(key: &str) -> Path {
        Path::default().field(key)
    }
    pub fn field(&self, key: &str) -> Path {
        self.with(Segment::Key(key.into()))
    }
    pub fn index(&self, i: usize) -> Path {
        self.with(Segment::Index(i))
    }
    /// `other` within this field.
    pub fn join(&self, other: &Path) -> Path {
        Path(self.0.iter().chain(&other.0).cloned().collect())
    }
    fn with(&self, segment: Segment) -> Path {
        let mut path = self.clone();
        path.0.push(segment);
        path
    }
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }
    /// `path: message`, about this field.
    pub fn message(&self, message: &str) -> FieldMessage {
        FieldMessage::new(self.clone(), format!("{self}: {message}"))
    }
    pub fn error(&self, message: &str) -> ModelError {
        ModelError(self.message(message))
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if i == 0 => f.write_str(key)?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// A JSON value's kind, as a message about a field names it (`must be a string, not a number`).
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

/// A gateway object a Rollout routes through (`customNetworkRefs` entry).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
}

/// The API group of an apiVersion (`""` for the core group's `v1`).
pub fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

impl ObjectRef {
    /// The API group (`""` for the core group).
    pub fn group(&self) -> &str {
        api_group(&self.api_version)
    }

    /// The group as the controller's script lookup computes it: the text before the first `/`,
    /// so core `v1` becomes `"v1"` (docs/controller-semantics.md §4.5).
    pub fn script_group(&self) -> &str {
        self.api_version.split('/').next().unwrap_or_default()
    }

    pub fn version(&self) -> &str {
        self.api_version.rsplit('/').next().unwrap_or_default()
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.kind, self.name)
    }
}

/// `trafficRoutings[0]` of a Rollout, or `objectRef[0]` of a TrafficRouting.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrafficRoutingRef {
    /// Where it is written (`spec.strategy.canary.trafficRoutings[0]`, `spec.objectRef[0]`), for
    /// messages that name the line of one of its fields.
    pub field: Path,
    pub service: String,
    pub grace_period_seconds: i64,
    pub custom_network_refs: Vec<ObjectRef>,
    pub ingress: Option<IngressRef>,
    /// `gateway.httpRouteName`.
    pub gateway: Option<String>,
}

/// `ingress: {name, classType}`: the stable Ingress, and the class that picks the script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IngressRef {
    pub name: String,
    /// `classType`, with the controller's default `nginx` for an empty or absent one.
    pub class_type: String,
}

impl IngressRef {
    fn read(value: &Value, path: &Path) -> Result<IngressRef, ModelError> {
        let name = strategy::required_string(value.get("name"), &path.field("name"))?;
        if name.is_empty() {
            return Err(path.field("name").error("must not be empty"));
        }
        let class_type = strategy::optional_string(value.get("classType"), &path.field("classType"))?
            .filter(|c| !c.is_empty())
            .unwrap_or("nginx");
        Ok(IngressRef { name: name.into(), class_type: class_type.into() })
    }
}

impl TrafficRoutingRef {
    /// The field naming the object of custom ref `i`, within the entry (`field`).
    pub fn custom_ref_field(i: usize) -> Path {
        Path::root("customNetworkRefs").index(i)
    }

    /// The field naming the stable Ingress, within the entry.
    pub fn ingress_field() -> Path {
        Path::root("ingress").field("name")
    }

    /// The field naming the HTTPRoute, within the entry.
    pub fn http_route_field() -> Path {
        Path::root("gateway").field("httpRouteName")
    }

    fn read(value: &Value, path: &Path) -> Result<TrafficRoutingRef, ModelError> {
        let service = strategy::required_string(value.get("service"), &path.field("service"))?;
        if service.is_empty() {
            return Err(path.field("service").error("must not be empty"));
        }
        let refs_path = path.field("customNetworkRefs");
        let custom_network_refs = match value.get("customNetworkRefs").filter(|r| !r.is_null()) {
            None => Vec::new(),
            Some(list) => list
                .as_array()
                .ok_or_else(|| refs_path.error("must be a list of {apiVersion, kind, name}"))?
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let at = refs_path.index(i);
                    Ok(ObjectRef {
                        api_version: strategy::required_string(r.get("apiVersion"), &at.field("apiVersion"))?.into(),
                        kind: strategy::required_string(r.get("kind"), &at.field("kind"))?.into(),
                        name: strategy::required_string(r.get("name"), &at.field("name"))?.into(),
                    })
                })
                .collect::<Result<_, ModelError>>()?,
        };
        let ingress = match value.get("ingress").filter(|i| !i.is_null()) {
            Some(ingress) => Some(IngressRef::read(ingress, &path.field("ingress"))?),
            None => None,
        };
        let gateway = match value.get("gateway").filter(|g| !g.is_null()) {
            Some(gateway) => {
                let at = path.field("gateway").field("httpRouteName");
                let name = strategy::required_string(gateway.get("httpRouteName"), &at)?;
                if name.is_empty() {
                    return Err(at.error("must not be empty"));
                }
                Some(name.to_string())
            }
            None => None,
        };
        Ok(TrafficRoutingRef {
            field: path.clone(),
            service: service.into(),
            grace_period_seconds: value.get("gracePeriodSeconds").and_then(Value::as_i64).unwrap_or(3),
            custom_network_refs,
            ingress,
            gateway,
        })
    }
}

/// `metadata.name`, `metadata.namespace` and the annotations of an object.
pub(crate) fn metadata_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    object["metadata"][field].as_str()
}

/// An object's `metadata.name`: required, and a string (`name: 0123` is a number to YAML).
pub(crate) fn required_name(object: &Value) -> Result<&str, ModelError> {
    strategy::required_string(object["metadata"].get("name"), &Path::root("metadata").field("name"))
}

/// `required_name`, but a test case's object may have none (empty): go test reads no name.
pub(crate) fn name_as_read(object: &Value, semantics: Semantics) -> Result<&str, ModelError> {
    match semantics {
        Semantics::Harness if object["metadata"].get("name").is_none_or(Value::is_null) => Ok(""),
        _ => required_name(object),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_field_is_warned_of_once() {
        let path = Path::root("spec").field("path");
        let mut warnings = vec![path.message("not supported in this API version")];
        FieldMessage::push_once_per_field(&mut warnings, path.message("unknown field"));
        FieldMessage::push_once_per_field(&mut warnings, Path::root("spec").field("pth").message("unknown field"));
        let shown: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["spec.path: not supported in this API version", "spec.pth: unknown field"]);
    }

    #[test]
    fn a_path_keeps_its_keys_whole_and_shows_as_kubectl_names_fields() {
        let path = Path::root("metadata").field("annotations").field("rollouts.kruise.io/trafficrouting");
        assert_eq!(path.to_string(), "metadata.annotations.rollouts.kruise.io/trafficrouting");
        assert_eq!(path.segments().len(), 3);
        let steps = Path::root("spec").field("steps").index(2).field("traffic");
        assert_eq!(steps.to_string(), "spec.steps[2].traffic");
        assert_eq!(Path::default().index(3).field("items").index(1).to_string(), "[3].items[1]");
        let message = steps.message("\"150%\" must be in (0%, 100%]");
        assert_eq!(message.to_string(), "spec.steps[2].traffic: \"150%\" must be in (0%, 100%]");
        assert_eq!(message.field, steps);
        assert_eq!(
            message.at("r.yaml:44").to_string(),
            "r.yaml:44: spec.steps[2].traffic: \"150%\" must be in (0%, 100%]"
        );
    }

    #[test]
    fn reads_an_ingress_ref_with_the_controllers_default_class() {
        let path = Path::root("trafficRoutings").index(0);
        let read = |ingress: Value| TrafficRoutingRef::read(&json!({"service": "svc", "ingress": ingress}), &path);
        let ingress = read(json!({"name": "web"})).unwrap().ingress.unwrap();
        assert_eq!(ingress, IngressRef { name: "web".into(), class_type: "nginx".into() });
        let alb = read(json!({"name": "web", "classType": "aliyun-alb"})).unwrap().ingress.unwrap();
        assert_eq!(alb.class_type, "aliyun-alb");
        assert_eq!(read(json!({"name": "web", "classType": ""})).unwrap().ingress.unwrap().class_type, "nginx");
        assert_eq!(
            read(json!({"name": ""})).unwrap_err().to_string(),
            "trafficRoutings[0].ingress.name: must not be empty"
        );
        assert_eq!(read(json!({})).unwrap_err().to_string(), "trafficRoutings[0].ingress.name: is required");
        let none = TrafficRoutingRef::read(&json!({"service": "svc"}), &path).unwrap();
        assert_eq!(none.ingress, None);
    }

    #[test]
    fn custom_network_refs_are_a_list_of_full_references() {
        let path = Path::root("trafficRoutings").index(0);
        let read = |refs: Value| TrafficRoutingRef::read(&json!({"service": "svc", "customNetworkRefs": refs}), &path);
        let vs = json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "vs"});
        assert_eq!(read(json!([vs])).unwrap().custom_network_refs[0].name, "vs");
        assert!(read(Value::Null).unwrap().custom_network_refs.is_empty());
        for not_a_list in [vs.clone(), json!("vs")] {
            assert_eq!(
                read(not_a_list).unwrap_err().to_string(),
                "trafficRoutings[0].customNetworkRefs: must be a list of {apiVersion, kind, name}"
            );
        }
        let no_kind = json!([vs, {"apiVersion": "networking.istio.io/v1beta1", "name": "dr"}]);
        assert_eq!(read(no_kind).unwrap_err().to_string(), "trafficRoutings[0].customNetworkRefs[1].kind: is required");
    }

    #[test]
    fn reads_a_gateway_ref_as_the_webhook_checks_it() {
        let path = Path::root("trafficRoutings").index(0);
        let read = |gateway: Value| TrafficRoutingRef::read(&json!({"service": "svc", "gateway": gateway}), &path);
        assert_eq!(read(json!({"httpRouteName": "route"})).unwrap().gateway.as_deref(), Some("route"));
        assert_eq!(
            read(json!({"httpRouteName": ""})).unwrap_err().to_string(),
            "trafficRoutings[0].gateway.httpRouteName: must not be empty"
        );
        assert_eq!(read(json!({})).unwrap_err().to_string(), "trafficRoutings[0].gateway.httpRouteName: is required");
        assert_eq!(read(Value::Null).unwrap().gateway, None);
    }
}
