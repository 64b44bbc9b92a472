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
}

impl Permission {
    pub fn new(verb: &str, group: &str, resource: &str, subresource: Option<&str>, namespace: &str) -> Permission {
        Permission {
            verb: verb.into(),
            group: group.into(),
            resource: resource.into(),
            subresource: subresource.map(str::to_string),
            namespace: namespace.into(),
        }
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
    }
}
