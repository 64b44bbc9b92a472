//! Deny rules and grants: the fake's stand-in for RBAC. Everything is allowed unless a deny
//! rule matches or, once a grant is given, no grant matches (as RBAC allows only what a Role
//! grants).

/// The user requests run as when no `Impersonate-User` header is sent.
pub const DEFAULT_USER: &str = "fake-user";

/// A deny rule. Every list defaults to `["*"]` (match anything); `"*"` inside a list is a
/// wildcard too.
///
/// `resources` entries use RBAC's notation: `rollouts` matches only the main resource,
/// `rollouts/status` only the subresource, and `*/status` or `rollouts/*` match by part.
/// As in RBAC, `names` never match requests without a name (list, create) and `namespaces`
/// never match cluster-wide requests, unless they contain `"*"`.
///
/// ```
/// use fake_apiserver::Rule;
/// // `patch` on rollouts/status in namespace demo answers 403.
/// let rule = Rule::new(["patch"]).resources(["rollouts/status"]).namespaces(["demo"]);
/// ```
#[derive(Clone, Debug)]
pub struct Rule {
    verbs: Vec<String>,
    groups: Vec<String>,
    resources: Vec<String>,
    namespaces: Vec<String>,
    names: Vec<String>,
    users: Vec<String>,
}

fn strings<I: IntoIterator<Item = S>, S: Into<String>>(items: I) -> Vec<String> {
    items.into_iter().map(Into::into).collect()
}

fn any() -> Vec<String> {
    vec!["*".to_owned()]
}

impl Rule {
    /// Denies `verbs` (get, list, watch, create, update, patch, delete, or impersonate for
    /// the `users` resource) on everything until narrowed by the other methods.
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(verbs: I) -> Self {
        Self { verbs: strings(verbs), groups: any(), resources: any(), namespaces: any(), names: any(), users: any() }
    }

    /// API groups; `""` is the core group.
    pub fn groups<I: IntoIterator<Item = S>, S: Into<String>>(mut self, groups: I) -> Self {
        self.groups = strings(groups);
        self
    }

    pub fn resources<I: IntoIterator<Item = S>, S: Into<String>>(mut self, resources: I) -> Self {
        self.resources = strings(resources);
        self
    }

    pub fn namespaces<I: IntoIterator<Item = S>, S: Into<String>>(mut self, namespaces: I) -> Self {
        self.namespaces = strings(namespaces);
        self
    }

    pub fn names<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.names = strings(names);
        self
    }

    /// The (possibly impersonated) users the rule applies to.
    pub fn users<I: IntoIterator<Item = S>, S: Into<String>>(mut self, users: I) -> Self {
        self.users = strings(users);
        self
    }

    pub(crate) fn matches(&self, a: &Attributes) -> bool {
        let matches_any = |list: &[String], value: &str| list.iter().any(|v| v == "*" || v == value);
        matches_any(&self.users, &a.user)
            && matches_any(&self.verbs, &a.verb)
            && matches_any(&self.groups, &a.group)
            && self.resources.iter().any(|r| resource_matches(r, a))
            && matches_any(&self.namespaces, &a.namespace)
            && matches_any(&self.names, &a.name)
    }
}

fn resource_matches(pattern: &str, a: &Attributes) -> bool {
    if pattern == "*" {
        return true;
    }
    let (resource, subresource) = pattern.split_once('/').unwrap_or((pattern, ""));
    (resource == "*" || resource == a.resource)
        && ((subresource == "*" && !a.subresource.is_empty()) || subresource == a.subresource)
}

/// What the authorizer sees of a request (`authorizer.Attributes`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Attributes {
    pub user: String,
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
}

impl Attributes {
    /// The reason RBAC gives, word for word (`forbiddenMessage` in kube-apiserver).
    pub fn forbidden_message(&self) -> String {
        let resource = if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        };
        let scope = if self.namespace.is_empty() {
            "at the cluster scope".to_owned()
        } else {
            format!("in the namespace \"{}\"", self.namespace)
        };
        format!(
            "User \"{}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}",
            self.user, self.verb, self.group
        )
    }
}

/// Whether a deny rule matches the request or, when there are grants, none of them does.
pub(crate) fn denied(rules: &[Rule], grants: Option<&[Rule]>, attributes: &Attributes) -> bool {
    rules.iter().any(|r| r.matches(attributes)) || grants.is_some_and(|g| !g.iter().any(|r| r.matches(attributes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(verb: &str, resource: &str, subresource: &str, ns: &str, name: &str) -> Attributes {
        Attributes {
            user: DEFAULT_USER.into(),
            verb: verb.into(),
            group: "rollouts.kruise.io".into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: ns.into(),
            name: name.into(),
        }
    }

    #[test]
    fn resource_patterns_follow_rbac() {
        let status = attrs("patch", "rollouts", "status", "demo", "r");
        let main = attrs("patch", "rollouts", "", "demo", "r");
        let only_status = Rule::new(["patch"]).resources(["rollouts/status"]);
        assert!(only_status.matches(&status));
        assert!(!only_status.matches(&main));
        assert!(Rule::new(["patch"]).resources(["*/status"]).matches(&status));
        assert!(Rule::new(["patch"]).resources(["rollouts/*"]).matches(&status));
        assert!(!Rule::new(["patch"]).resources(["rollouts/*"]).matches(&main));
        assert!(Rule::new(["*"]).matches(&main));
        assert!(!Rule::new(["get"]).matches(&main));
    }

    #[test]
    fn names_and_namespaces_do_not_match_collection_requests() {
        let list = attrs("list", "rollouts", "", "", "");
        assert!(!Rule::new(["list"]).namespaces(["demo"]).matches(&list));
        assert!(!Rule::new(["list"]).names(["r"]).matches(&list));
        assert!(Rule::new(["list"]).matches(&list));
    }

    #[test]
    fn users_narrow_the_rule() {
        let mut a = attrs("get", "rollouts", "", "demo", "r");
        let rule = Rule::new(["get"]).users(["alice"]);
        assert!(!rule.matches(&a));
        a.user = "alice".into();
        assert!(rule.matches(&a));
    }

    #[test]
    fn grants_allow_only_what_they_match() {
        let get = attrs("get", "rollouts", "", "demo", "r");
        let patch = attrs("patch", "rollouts", "status", "demo", "r");
        let grants = [Rule::new(["get", "list"]).groups(["rollouts.kruise.io"]).resources(["rollouts"])];
        assert!(!denied(&[], Some(&grants), &get));
        assert!(denied(&[], Some(&grants), &patch));
        assert!(denied(&[Rule::new(["get"])], Some(&grants), &get));
        assert!(!denied(&[], None, &patch));
    }

    #[test]
    fn forbidden_message_matches_rbac() {
        assert_eq!(
            attrs("patch", "rollouts", "status", "demo", "demo").forbidden_message(),
            "User \"fake-user\" cannot patch resource \"rollouts/status\" in API group \"rollouts.kruise.io\" in the namespace \"demo\""
        );
        assert_eq!(
            attrs("list", "rollouts", "", "", "").forbidden_message(),
            "User \"fake-user\" cannot list resource \"rollouts\" in API group \"rollouts.kruise.io\" at the cluster scope"
        );
    }
}
