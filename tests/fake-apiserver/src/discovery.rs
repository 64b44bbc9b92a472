//! `/version` and legacy discovery documents. Aggregated discovery is not served: the
//! plain `application/json` answers make kubectl fall back to these, as against a server
//! without it.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::resource::{ApiResourceDef, group_version, kube_version_order};

const AUTHORIZATION_GROUP: &str = "authorization.k8s.io";

/// What discovery needs to know: the served resources and any preferred-version overrides.
pub(crate) struct Discovery<'a> {
    pub resources: &'a [ApiResourceDef],
    pub preferred: &'a BTreeMap<String, String>,
}

impl Discovery<'_> {
    /// `/version`; kubectl 1.32 stays quiet about skew against a 1.32 server.
    pub fn version() -> Value {
        json!({
            "major": "1",
            "minor": "32",
            "gitVersion": "v1.32.4",
            "gitCommit": "0000000000000000000000000000000000000000",
            "gitTreeState": "clean",
            "buildDate": "2025-04-22T00:00:00Z",
            "goVersion": "go1.23.6",
            "compiler": "gc",
            "platform": "linux/amd64",
        })
    }

    /// `/api`.
    pub fn core_versions(server_address: &str) -> Value {
        json!({
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{ "clientCIDR": "0.0.0.0/0", "serverAddress": server_address }],
        })
    }

    /// `/apis`.
    pub fn group_list(&self) -> Value {
        let groups: Vec<Value> = self.groups().iter().map(|g| self.group(g)).collect();
        json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": groups })
    }

    /// `/apis/{group}`, or `None` when the group is not served.
    pub fn group_document(&self, group: &str) -> Option<Value> {
        if !self.groups().iter().any(|g| g == group) {
            return None;
        }
        let mut doc = self.group(group);
        doc["kind"] = "APIGroup".into();
        doc["apiVersion"] = "v1".into();
        Some(doc)
    }

    /// `/api/v1` (group `""`) and `/apis/{group}/{version}`; `None` when not served.
    pub fn resource_list(&self, group: &str, version: &str) -> Option<Value> {
        let resources: Vec<Value> = if group == AUTHORIZATION_GROUP && version == "v1" {
            vec![json!({
                "name": "selfsubjectaccessreviews",
                "singularName": "selfsubjectaccessreview",
                "namespaced": false,
                "kind": "SelfSubjectAccessReview",
                "verbs": ["create"],
            })]
        } else {
            let served: Vec<&ApiResourceDef> =
                self.resources.iter().filter(|d| d.group == group && d.version == version).collect();
            // The core group always exists, even when no core resource is served.
            if served.is_empty() && !(group.is_empty() && version == "v1") {
                return None;
            }
            served.into_iter().flat_map(api_resources).collect()
        };
        Some(json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": group_version(group, version),
            "resources": resources,
        }))
    }

    /// Served non-core groups in registration order, authorization.k8s.io first as the
    /// built-in groups come first on a real server.
    fn groups(&self) -> Vec<String> {
        let mut groups = vec![AUTHORIZATION_GROUP.to_owned()];
        for def in self.resources {
            if !def.group.is_empty() && !groups.contains(&def.group) {
                groups.push(def.group.clone());
            }
        }
        groups
    }

    /// An `APIGroup` body: versions most-preferred first.
    fn group(&self, group: &str) -> Value {
        let mut versions: Vec<&str> = if group == AUTHORIZATION_GROUP {
            vec!["v1"]
        } else {
            self.resources.iter().filter(|d| d.group == group).map(|d| d.version.as_str()).collect()
        };
        versions.sort_by(|a, b| kube_version_order(a, b));
        versions.dedup();
        if let Some(preferred) = self.preferred.get(group) {
            versions.sort_by_key(|v| *v != preferred.as_str());
        }
        let entry = |v: &str| json!({ "groupVersion": group_version(group, v), "version": v });
        json!({
            "name": group,
            "versions": versions.iter().map(|v| entry(v)).collect::<Vec<_>>(),
            "preferredVersion": entry(versions[0]),
        })
    }
}

/// The `APIResource` entries of one definition: the resource and its status subresource.
fn api_resources(def: &ApiResourceDef) -> Vec<Value> {
    let mut main = json!({
        "name": def.plural,
        "singularName": def.singular,
        "namespaced": def.namespaced,
        "kind": def.kind,
        "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
    });
    if !def.short_names.is_empty() {
        main["shortNames"] = def.short_names.clone().into();
    }
    let mut entries = vec![main];
    if def.status_subresource {
        entries.push(json!({
            "name": format!("{}/status", def.plural),
            "singularName": "",
            "namespaced": def.namespaced,
            "kind": def.kind,
            "verbs": ["get", "patch", "update"],
        }));
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::{kruise_and_istio, rollouts};

    #[test]
    fn preferred_version_is_kube_ordered_unless_overridden() {
        let resources = kruise_and_istio();
        let mut preferred = BTreeMap::new();
        let discovery = Discovery { resources: &resources, preferred: &preferred };
        let list = discovery.group_list();
        let groups = list["groups"].as_array().unwrap();
        let names: Vec<&str> = groups.iter().map(|g| g["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["authorization.k8s.io", "rollouts.kruise.io", "networking.istio.io"]);
        assert_eq!(groups[1]["preferredVersion"]["version"], "v1beta1");
        assert_eq!(groups[1]["versions"][1]["groupVersion"], "rollouts.kruise.io/v1alpha1");

        preferred.insert("rollouts.kruise.io".into(), "v1alpha1".into());
        let discovery = Discovery { resources: &resources, preferred: &preferred };
        let group = discovery.group_document("rollouts.kruise.io").unwrap();
        assert_eq!(group["preferredVersion"]["version"], "v1alpha1");
        assert_eq!(group["versions"][0]["version"], "v1alpha1");
    }

    #[test]
    fn resource_list_includes_status_subresource() {
        let resources = vec![rollouts("v1beta1")];
        let preferred = BTreeMap::new();
        let discovery = Discovery { resources: &resources, preferred: &preferred };
        let list = discovery.resource_list("rollouts.kruise.io", "v1beta1").unwrap();
        assert_eq!(list["resources"][1]["name"], "rollouts/status");
        assert!(discovery.resource_list("rollouts.kruise.io", "v1").is_none());
        assert_eq!(discovery.resource_list("", "v1").unwrap()["resources"], json!([]));
    }
}
