//! Everything a plan needs, read from files or from the cluster: Rollouts, TrafficRoutings,
//! gateway objects, and the controller's script ConfigMap.

use crate::error::Error;
use crate::model::{Rollout, TrafficRoutingCr};
use crate::plan::ObjectIndex;
use crate::scripts::{CONFIGMAP_NAME, ConfigMapScripts};
use crate::yaml::Document;
use serde_json::Value;

/// Where an object came from, for messages: `file.yaml:12`, or the cluster resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin(pub String);

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A test-case document becomes its subject and its original object; others stay as they are.
fn expand_test_case((source, document): (String, Document)) -> Vec<(String, Document)> {
    let value = &document.value;
    let subject = ["rollout", "trafficRouting"].into_iter().find_map(|key| value.get(key).filter(|v| v.is_object()));
    match (subject, value.get("original").filter(|v| v.is_object())) {
        (Some(subject), Some(original)) if value.get("kind").is_none() => [subject, original]
            .into_iter()
            .map(|part| (source.clone(), Document { value: part.clone(), ..document.clone() }))
            .collect(),
        _ => vec![(source, document)],
    }
}

#[derive(Clone, Debug)]
pub struct Located<T> {
    pub origin: Origin,
    pub namespace: String,
    pub item: T,
    /// The object as read.
    pub raw: Value,
}

#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub rollouts: Vec<Located<Rollout>>,
    pub traffic_routings: Vec<Located<TrafficRoutingCr>>,
    pub objects: ObjectIndex,
    pub configmap: Option<ConfigMapScripts>,
}

impl Snapshot {
    /// Sorts documents into Rollouts, TrafficRoutings, the script ConfigMap and gateway objects;
    /// objects without a namespace are in `default_namespace`, as `kubectl apply -f` would put them.
    /// Test cases (`rollout` or `trafficRouting` with `original`, as `record` writes them) count
    /// as their Rollout or TrafficRouting and their gateway object; the same Rollout met twice
    /// (one case per gateway object) is taken once.
    pub fn from_documents(documents: Vec<(String, Document)>, default_namespace: &str) -> Result<Snapshot, Error> {
        let mut snapshot = Snapshot::default();
        for (source, document) in documents.into_iter().flat_map(expand_test_case) {
            let origin = Origin(document.place(&source));
            let value = document.value;
            if !value.is_object() {
                return Err(Error::Input(format!(
                    "{origin}: not a Kubernetes object (expected a map with apiVersion and kind)"
                )));
            }
            let namespace = value["metadata"]["namespace"].as_str().unwrap_or(default_namespace).to_string();
            let kind = value["kind"].as_str().unwrap_or_default();
            let group = crate::model::api_group(value["apiVersion"].as_str().unwrap_or_default());
            let describe =
                || format!("{origin}: {kind} {namespace}/{}", value["metadata"]["name"].as_str().unwrap_or("?"));
            match (group, kind) {
                ("rollouts.kruise.io", "Rollout" | "TrafficRouting")
                    if snapshot.contains(&value, &namespace, &origin)? => {}
                ("rollouts.kruise.io", "Rollout") => {
                    let item =
                        Rollout::from_object(&value).map_err(|e| Error::Input(format!("{}: {e}", describe())))?;
                    snapshot.rollouts.push(Located { origin, namespace, item, raw: value });
                }
                ("rollouts.kruise.io", "TrafficRouting") => {
                    let item = TrafficRoutingCr::from_object(&value)
                        .map_err(|e| Error::Input(format!("{}: {e}", describe())))?;
                    snapshot.traffic_routings.push(Located { origin, namespace, item, raw: value });
                }
                ("", "ConfigMap") if value["metadata"]["name"] == CONFIGMAP_NAME => {
                    snapshot.configmap = Some(ConfigMapScripts::from_object(&namespace, &value));
                }
                _ if kind.is_empty() || value["metadata"]["name"].as_str().is_none() => {
                    return Err(Error::Input(format!("{origin}: not a Kubernetes object (no kind or metadata.name)")));
                }
                _ => snapshot.objects.insert(&namespace, value),
            }
        }
        Ok(snapshot)
    }

    /// Whether an equal Rollout or TrafficRouting is already in; one of the same name that
    /// differs is an error.
    fn contains(&self, value: &Value, namespace: &str, origin: &Origin) -> Result<bool, Error> {
        let name = value["metadata"]["name"].as_str();
        let same = |raw: &Value, ns: &str| {
            ns == namespace && raw["metadata"]["name"].as_str() == name && raw["kind"] == value["kind"]
        };
        let earlier = self
            .rollouts
            .iter()
            .map(|r| (&r.raw, r.namespace.as_str(), &r.origin))
            .chain(self.traffic_routings.iter().map(|t| (&t.raw, t.namespace.as_str(), &t.origin)));
        match earlier.into_iter().find(|(raw, ns, _)| same(raw, ns)) {
            None => Ok(false),
            Some((raw, _, _)) if raw == value => Ok(true),
            Some((_, _, first)) => Err(Error::Input(format!(
                "{origin}: a different {} {namespace}/{} is already defined at {first}",
                value["kind"].as_str().unwrap_or_default(),
                name.unwrap_or_default()
            ))),
        }
    }

    /// The TrafficRouting a Rollout names, or an error naming both when it is missing.
    pub fn traffic_routing_of(&self, rollout: &Located<Rollout>) -> Result<Option<&Located<TrafficRoutingCr>>, Error> {
        let Some(name) = &rollout.item.traffic_routing_cr else { return Ok(None) };
        self.traffic_routings
            .iter()
            .find(|t| &t.item.name == name && t.namespace == rollout.namespace)
            .map(Some)
            .ok_or_else(|| {
                Error::Input(format!(
                    "{}: Rollout {}/{} names TrafficRouting {name} (annotation {}), which is not in the input",
                    rollout.origin,
                    rollout.namespace,
                    rollout.item.name,
                    crate::model::TRAFFIC_ROUTING_ANNOTATION
                ))
            })
    }
}
