//! A permission a command needs, as a SelfSubjectAccessReview asks it and a Role grants it.

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
