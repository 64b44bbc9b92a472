//! The permissions a command needs, and a Role + RoleBinding that would grant the missing ones.

use crate::model::Permission;
use serde::Serialize;
use serde_saphyr::{DoubleQuoted, FlowSeq};
use std::collections::BTreeMap;

const API_GROUP: &str = "rbac.authorization.k8s.io";
const API_VERSION: &str = "rbac.authorization.k8s.io/v1";
const NAME: &str = "rollout-lua";

/// A list written `["a", "b"]`, as RBAC examples do.
type Strings<'a> = FlowSeq<Vec<DoubleQuoted<&'a str>>>;

fn strings<'a>(items: impl IntoIterator<Item = &'a str>) -> Strings<'a> {
    FlowSeq(items.into_iter().map(DoubleQuoted).collect())
}

#[derive(Serialize)]
struct Metadata<'a> {
    name: &'a str,
    namespace: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Role<'a> {
    api_version: &'a str,
    kind: &'a str,
    metadata: Metadata<'a>,
    rules: Vec<Rule<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule<'a> {
    api_groups: Strings<'a>,
    resources: Strings<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_names: Option<Strings<'a>>,
    verbs: Strings<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RoleBinding<'a> {
    api_version: &'a str,
    kind: &'a str,
    metadata: Metadata<'a>,
    role_ref: Reference<'a>,
    subjects: [Subject<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Reference<'a> {
    api_group: &'a str,
    kind: &'a str,
    name: &'a str,
}

#[derive(Serialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Subject<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    api_group: Option<&'a str>,
    kind: &'a str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<&'a str>,
}

impl<'a> Subject<'a> {
    /// The subject for `user` as the API server names it. A service account's name
    /// (`system:serviceaccount:NAMESPACE:NAME`) is bound as that ServiceAccount, as `kubectl
    /// create rolebinding --serviceaccount` writes it (with no API group, which RBAC requires
    /// of one); any other name is a User.
    fn of(user: &'a str) -> Self {
        let service_account = user
            .strip_prefix("system:serviceaccount:")
            .and_then(|rest| rest.split_once(':'))
            .filter(|(namespace, name)| !namespace.is_empty() && !name.is_empty() && !name.contains(':'));
        match service_account {
            Some((namespace, name)) => {
                Subject { api_group: None, kind: "ServiceAccount", name, namespace: Some(namespace) }
            }
            None => Subject { api_group: Some(API_GROUP), kind: "User", name: user, namespace: None },
        }
    }
}

/// A Role and RoleBinding granting `missing` (grouped by namespace, API group, resource and the
/// object a permission is on, granted by name).
/// Rendered by the YAML serializer, so that any user, namespace or resource name is quoted as
/// it needs (`--as '#ops'`).
pub fn grant(missing: &[Permission], user: Option<&str>) -> String {
    type Key<'a> = (&'a str, String, Option<&'a str>);
    let mut by_namespace: BTreeMap<&str, BTreeMap<Key, Vec<&str>>> = BTreeMap::new();
    for p in missing {
        let resource = match &p.subresource {
            Some(sub) => format!("{}/{sub}", p.resource),
            None => p.resource.clone(),
        };
        let key = (p.group.as_str(), resource, p.name.as_deref());
        let verbs = by_namespace.entry(&p.namespace).or_default().entry(key).or_default();
        if !verbs.contains(&p.verb.as_str()) {
            verbs.push(&p.verb);
        }
    }
    let subject = user.unwrap_or("YOUR-USER");
    let mut out = Vec::new();
    for (namespace, rules) in &by_namespace {
        let metadata = || Metadata { name: NAME, namespace };
        out.push(crate::yaml::typed_to_string(&Role {
            api_version: API_VERSION,
            kind: "Role",
            metadata: metadata(),
            rules: rules
                .iter()
                .map(|((group, resource, name), verbs)| Rule {
                    api_groups: strings([*group]),
                    resources: strings([resource.as_str()]),
                    resource_names: name.map(|name| strings([name])),
                    verbs: strings(verbs.iter().copied()),
                })
                .collect(),
        }));
        out.push(crate::yaml::typed_to_string(&RoleBinding {
            api_version: API_VERSION,
            kind: "RoleBinding",
            metadata: metadata(),
            role_ref: Reference { api_group: API_GROUP, kind: "Role", name: NAME },
            subjects: [Subject::of(subject)],
        }));
    }
    out.join("---\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_missing_permissions_into_a_role() {
        let p = |verb: &str, group: &str, resource: &str, sub: Option<&str>| Permission {
            verb: verb.into(),
            group: group.into(),
            resource: resource.into(),
            subresource: sub.map(str::to_string),
            namespace: "shop".into(),
            name: None,
        };
        let yaml = grant(
            &[
                p("update", "networking.istio.io", "virtualservices", None),
                p("get", "networking.istio.io", "virtualservices", None),
                p("patch", "rollouts.kruise.io", "rollouts", Some("status")),
            ],
            Some("jane"),
        );
        assert!(yaml.contains("- apiGroups: [\"networking.istio.io\"]\n  resources: [\"virtualservices\"]\n  verbs: [\"update\", \"get\"]\n"), "{yaml}");
        assert!(yaml.contains("resources: [\"rollouts/status\"]\n  verbs: [\"patch\"]"), "{yaml}");
        assert!(yaml.contains("kind: RoleBinding") && yaml.contains("name: jane"), "{yaml}");
        // A permission on one object is granted by name, beside one on the resource.
        let named = p("update", "networking.istio.io", "virtualservices", None).on("demo");
        let yaml = grant(&[named, p("create", "", "services", None)], None);
        assert!(yaml.contains("- apiGroups: [\"networking.istio.io\"]\n  resources: [\"virtualservices\"]\n  resourceNames: [\"demo\"]\n  verbs: [\"update\"]\n"), "{yaml}");
        assert!(yaml.contains("- apiGroups: [\"\"]\n  resources: [\"services\"]\n  verbs: [\"create\"]\n"), "{yaml}");
    }

    #[test]
    fn any_user_name_stays_one_yaml_string() {
        let p = |verb: &str, group: &str, resource: &str| Permission {
            verb: verb.into(),
            group: group.into(),
            resource: resource.into(),
            subresource: None,
            namespace: "shop".into(),
            name: None,
        };
        let missing = [p("get", "", "configmaps"), p("update", "networking.istio.io", "virtualservices")];
        for user in ["#ops", "a: b", "- x", "true", "007", "'q\" \\ x", "line\nbreak", "[x, y]", "*anchor", ""] {
            let yaml = grant(&missing, Some(user));
            let documents: Vec<serde_json::Value> =
                serde_saphyr::from_multiple(&yaml).unwrap_or_else(|e| panic!("{user:?}: {e}\n{yaml}"));
            assert_eq!(documents.len(), 2, "{yaml}");
            let (role, binding) = (&documents[0], &documents[1]);
            assert_eq!(
                binding["subjects"],
                serde_json::json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]),
                "{yaml}"
            );
            assert_eq!(binding["roleRef"]["name"], "rollout-lua");
            assert_eq!((role["kind"].as_str(), binding["kind"].as_str()), (Some("Role"), Some("RoleBinding")));
            assert_eq!(
                role["rules"],
                serde_json::json!([
                    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},
                    {"apiGroups": ["networking.istio.io"], "resources": ["virtualservices"], "verbs": ["update"]},
                ]),
                "{yaml}"
            );
        }
        let yaml = grant(&missing, Some("#ops"));
        assert!(yaml.contains("- apiGroups: [\"\"]\n  resources: [\"configmaps\"]\n  verbs: [\"get\"]\n"), "{yaml}");
        assert!(!yaml.contains("name: #ops"), "{yaml}");
    }

    #[test]
    fn a_service_account_is_bound_as_one() {
        let service_account =
            |namespace, name| Subject { api_group: None, kind: "ServiceAccount", name, namespace: Some(namespace) };
        let user = |name| Subject { api_group: Some(API_GROUP), kind: "User", name, namespace: None };
        assert_eq!(Subject::of("system:serviceaccount:ci:deployer"), service_account("ci", "deployer"));
        // Not a service account's name as Kubernetes forms one: bound as the user it is.
        for name in [
            "jane",
            "system:serviceaccount:ci",
            "system:serviceaccount::deployer",
            "system:serviceaccount:ci:",
            "system:serviceaccount:a:b:c",
            "system:serviceaccounts:ci",
        ] {
            assert_eq!(Subject::of(name), user(name));
        }
        let permission = Permission {
            verb: "get".into(),
            group: "".into(),
            resource: "configmaps".into(),
            subresource: None,
            namespace: "shop".into(),
            name: None,
        };
        let yaml = grant(&[permission], Some("system:serviceaccount:ci:deployer"));
        assert!(yaml.ends_with("subjects:\n- kind: ServiceAccount\n  name: deployer\n  namespace: ci\n"), "{yaml}");
    }

    #[test]
    fn a_role_and_binding_per_namespace_for_a_placeholder_user() {
        let p = |namespace: &str| Permission {
            verb: "get".into(),
            group: "rollouts.kruise.io".into(),
            resource: "rollouts".into(),
            subresource: None,
            namespace: namespace.into(),
            name: None,
        };
        let documents: Vec<serde_json::Value> =
            serde_saphyr::from_multiple(&grant(&[p("shop"), p("kruise-rollout")], None)).unwrap();
        let summary: Vec<(&str, &str)> = documents
            .iter()
            .map(|d| (d["kind"].as_str().unwrap(), d["metadata"]["namespace"].as_str().unwrap()))
            .collect();
        assert_eq!(
            summary,
            [("Role", "kruise-rollout"), ("RoleBinding", "kruise-rollout"), ("Role", "shop"), ("RoleBinding", "shop")]
        );
        assert_eq!(documents[1]["subjects"][0]["name"], "YOUR-USER");
    }
}
