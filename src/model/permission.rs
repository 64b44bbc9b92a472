//! A permission a command needs, as a SelfSubjectAccessReview asks it and a Role grants it.

use std::fmt;

/// `verb` on a resource (its plural name in its API group), or on its subresource, in a
/// namespace.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Permission {
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub subresource: Option<String>,
    pub namespace: String,
    /// The object it is on, when there is one to name: a Role may grant it by name
    /// (`resourceNames`). Never for a create, which RBAC cannot grant by name.
    pub name: Option<String>,
}

impl Permission {
    pub fn new(verb: &str, group: &str, resource: &str, subresource: Option<&str>, namespace: &str) -> Permission {
        Permission {
            verb: verb.into(),
            group: group.into(),
            resource: resource.into(),
            subresource: subresource.map(str::to_string),
            namespace: namespace.into(),
            name: None,
        }
    }

    /// The same permission on object `name` only (a create stays on the resource).
    pub fn on(self, name: &str) -> Permission {
        let name = (self.verb != "create").then(|| name.to_string());
        Permission { name, ..self }
    }
}

/// `patch rollouts/status (API group rollouts.kruise.io) in namespace demo`.
impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let group = if self.group.is_empty() { "core" } else { &self.group };
        write!(f, "{} {}", self.verb, self.resource)?;
        if let Some(subresource) = &self.subresource {
            write!(f, "/{subresource}")?;
        }
        if let Some(name) = &self.name {
            write!(f, " named {name}")?;
        }
        write!(f, " (API group {group}) in namespace {}", self.namespace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_subresource_and_the_core_group() {
        let status = Permission::new("patch", "rollouts.kruise.io", "rollouts", Some("status"), "demo");
        assert_eq!(status.to_string(), "patch rollouts/status (API group rollouts.kruise.io) in namespace demo");
        let services = Permission::new("get", "", "services", None, "shop");
        assert_eq!(services.to_string(), "get services (API group core) in namespace shop");
        let named = Permission::new("update", "networking.istio.io", "virtualservices", None, "shop").on("demo");
        assert_eq!(
            named.to_string(),
            "update virtualservices named demo (API group networking.istio.io) in namespace shop"
        );
        // RBAC grants no create by name: the object does not exist when it is asked for.
        assert_eq!(Permission::new("create", "", "services", None, "shop").on("demo").name, None);
    }
}
