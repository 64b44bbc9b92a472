//! Resource types the fake server serves, and presets for the ones the plugin touches.

use std::cmp::Ordering;

/// One served group/version/kind, as a CRD version or a built-in type would register it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiResourceDef {
    /// API group; `""` for the core group (`/api/v1`).
    pub group: String,
    pub version: String,
    pub kind: String,
    /// Lower-case plural used in URLs (`rollouts`).
    pub plural: String,
    pub singular: String,
    pub namespaced: bool,
    /// Serve `<plural>/status`; writes to the main resource then leave `.status` alone.
    pub status_subresource: bool,
    pub short_names: Vec<String>,
}

impl ApiResourceDef {
    /// A namespaced resource without status subresource or short names; `singular` is the
    /// lower-cased kind. Adjust the public fields for anything else.
    pub fn new(group: &str, version: &str, kind: &str, plural: &str) -> Self {
        Self {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            singular: kind.to_lowercase(),
            namespaced: true,
            status_subresource: false,
            short_names: Vec::new(),
        }
    }

    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        group_version(&self.group, &self.version)
    }

    /// `plural.group` (`rollouts.rollouts.kruise.io`), the form API error messages use.
    pub(crate) fn qualified_plural(&self) -> String {
        if self.group.is_empty() { self.plural.clone() } else { format!("{}.{}", self.plural, self.group) }
    }

    /// `Kind.group` (`Rollout.rollouts.kruise.io`), the form validation errors use.
    pub(crate) fn qualified_kind(&self) -> String {
        if self.group.is_empty() { self.kind.clone() } else { format!("{}.{}", self.kind, self.group) }
    }

    /// Custom resources follow the CRD registry rules (generation tracking, mandatory
    /// resourceVersion on update, no strategic merge patch); core types do not.
    pub(crate) fn is_custom(&self) -> bool {
        !self.group.is_empty()
    }

    fn with_status(mut self) -> Self {
        self.status_subresource = true;
        self
    }

    fn with_short_names(mut self, names: &[&str]) -> Self {
        self.short_names = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }
}

pub(crate) fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() { version.to_owned() } else { format!("{group}/{version}") }
}

/// `rollouts.kruise.io` Rollout (`v1alpha1` or `v1beta1`), with status subresource.
pub fn rollouts(version: &str) -> ApiResourceDef {
    ApiResourceDef::new("rollouts.kruise.io", version, "Rollout", "rollouts").with_status()
}

/// `rollouts.kruise.io/v1alpha1` TrafficRouting, with status subresource.
pub fn trafficroutings() -> ApiResourceDef {
    ApiResourceDef::new("rollouts.kruise.io", "v1alpha1", "TrafficRouting", "trafficroutings").with_status()
}

/// `networking.istio.io` VirtualService (`v1alpha3`, `v1beta1` or `v1`), short name `vs`.
pub fn virtualservices(version: &str) -> ApiResourceDef {
    ApiResourceDef::new("networking.istio.io", version, "VirtualService", "virtualservices")
        .with_status()
        .with_short_names(&["vs"])
}

/// `networking.istio.io` DestinationRule (`v1alpha3`, `v1beta1` or `v1`), short name `dr`.
pub fn destinationrules(version: &str) -> ApiResourceDef {
    ApiResourceDef::new("networking.istio.io", version, "DestinationRule", "destinationrules")
        .with_status()
        .with_short_names(&["dr"])
}

/// Core `v1` ConfigMap, short name `cm`.
pub fn configmaps() -> ApiResourceDef {
    ApiResourceDef::new("", "v1", "ConfigMap", "configmaps").with_short_names(&["cm"])
}

/// Rollouts (v1alpha1 and v1beta1), TrafficRoutings, VirtualServices and DestinationRules
/// (v1alpha3 and v1beta1) and ConfigMaps: what a cluster with Kruise Rollout and Istio serves.
pub fn kruise_and_istio() -> Vec<ApiResourceDef> {
    vec![
        rollouts("v1beta1"),
        rollouts("v1alpha1"),
        trafficroutings(),
        virtualservices("v1beta1"),
        virtualservices("v1alpha3"),
        destinationrules("v1beta1"),
        destinationrules("v1alpha3"),
        configmaps(),
    ]
}

/// Orders versions the way the API server lists them in discovery (most preferred first):
/// GA before beta before alpha, higher numbers first, unparsable versions last by name.
/// This is `version.CompareKubeAwareVersionStrings`.
pub(crate) fn kube_version_order(a: &str, b: &str) -> Ordering {
    match (parse_kube_version(a), parse_kube_version(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// `(stability, major, minor)` where stability is 2 for GA, 1 for beta, 0 for alpha.
fn parse_kube_version(v: &str) -> Option<(u8, u32, u32)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let major = rest[..digits].parse().ok()?;
    let suffix = &rest[digits..];
    if suffix.is_empty() {
        return Some((2, major, 0));
    }
    let (stability, minor) = if let Some(n) = suffix.strip_prefix("beta") {
        (1, n)
    } else if let Some(n) = suffix.strip_prefix("alpha") {
        (0, n)
    } else {
        return None;
    };
    Some((stability, major, minor.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_like_kube() {
        let mut versions = vec!["v1alpha1", "foo", "v1", "v2beta1", "v1beta2", "v1alpha3", "v2"];
        versions.sort_by(|a, b| kube_version_order(a, b));
        assert_eq!(versions, ["v2", "v1", "v2beta1", "v1beta2", "v1alpha3", "v1alpha1", "foo"]);
    }
}
