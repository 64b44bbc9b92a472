//! The permissions a command needs, and a Role + RoleBinding that would grant the missing ones.

use crate::source::cluster::Permission;
use std::collections::BTreeMap;

/// A Role and RoleBinding granting `missing` (grouped by namespace, API group and resource).
pub fn grant(missing: &[Permission], user: Option<&str>) -> String {
    let mut by_namespace: BTreeMap<&str, BTreeMap<(&str, String), Vec<&str>>> = BTreeMap::new();
    for p in missing {
        let resource = match &p.subresource {
            Some(sub) => format!("{}/{sub}", p.resource),
            None => p.resource.clone(),
        };
        let verbs = by_namespace.entry(&p.namespace).or_default().entry((&p.group, resource)).or_default();
        if !verbs.contains(&p.verb.as_str()) {
            verbs.push(&p.verb);
        }
    }
    let subject = user.unwrap_or("YOUR-USER");
    let mut out = Vec::new();
    for (namespace, rules) in by_namespace {
        let mut role = format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: rollout-lua\n  namespace: {namespace}\nrules:\n"
        );
        for ((group, resource), verbs) in rules {
            role.push_str(&format!(
                "- apiGroups: [\"{group}\"]\n  resources: [\"{resource}\"]\n  verbs: [{}]\n",
                verbs.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(", ")
            ));
        }
        out.push(role);
        out.push(format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rollout-lua\n  namespace: {namespace}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: rollout-lua\nsubjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: {subject}\n"
        ));
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
    }
}
