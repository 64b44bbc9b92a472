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

/// The warning of a read the API server refused (`failure`, a 403): what could not be done
/// (`read Service shop/web`), what is left out for it, and the permission that would allow it.
pub fn refused_read(doing: &str, failure: &dyn fmt::Display, left_out: &str, needed: &Permission) -> String {
    format!("cannot {doing} ({failure}): {left_out}; to allow that read, grant {needed}")
}

/// The warning of a read that failed (`failure`): what could not be done, what is left out for
/// it, and, when the API server refused it (a 403), the permission `needed` to allow it.
pub fn unread_warning(doing: &str, failure: &dyn fmt::Display, left_out: &str, needed: Option<&Permission>) -> String {
    match needed {
        Some(needed) => refused_read(doing, failure, left_out, needed),
        None => format!("cannot {doing} ({failure}): {left_out}"),
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
    fn a_refused_read_says_what_is_left_out_and_what_to_grant() {
        let needed = Permission::new("get", "apps", "deployments", None, "shop").on("web");
        assert_eq!(
            refused_read(
                "read Deployment shop/web",
                &"forbidden (403 Forbidden)",
                "its replicas are not known",
                &needed
            ),
            "cannot read Deployment shop/web (forbidden (403 Forbidden)): its replicas are not known; to allow that read, grant get deployments named web (API group apps) in namespace shop"
        );
    }

    #[test]
    fn a_failed_read_says_what_is_left_out_and_what_to_grant_only_when_refused() {
        let needed = Permission::new("get", "apps", "deployments", None, "shop").on("web");
        let (doing, left_out) = ("read Deployment shop/web", "its replicas are not shown");
        assert_eq!(
            unread_warning(doing, &"forbidden (403 Forbidden)", left_out, Some(&needed)),
            refused_read(doing, &"forbidden (403 Forbidden)", left_out, &needed)
        );
        assert_eq!(
            unread_warning(doing, &"connection closed", left_out, None),
            "cannot read Deployment shop/web (connection closed): its replicas are not shown"
        );
    }

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
