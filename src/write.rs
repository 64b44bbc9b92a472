//! Guarded writes to the cluster: a local backup before every write, the original stored in the
//! controller's format before an object is changed, resourceVersion preconditions on every PUT,
//! and a rollback of everything a run wrote when a later write fails.

use crate::data;
use crate::error::Error;
use crate::output;
use crate::rbac;
use crate::source::cluster::{Cluster, Permission, Resource, describe_api_error};
use serde_json::Value;
use std::path::PathBuf;
use std::time::SystemTime;

/// Where backups go: `$XDG_STATE_HOME/kubectl-rollout-lua/backups/<context>/<namespace>/<kind>/<name>/<time>.yaml`.
pub struct Backups {
    root: PathBuf,
}

impl Backups {
    pub fn new(context: &str) -> Backups {
        let state = crate::source::files::xdg_dir("XDG_STATE_HOME", ".local/state").unwrap_or_else(std::env::temp_dir);
        let context = if context.is_empty() { "default" } else { context };
        Backups { root: state.join("kubectl-rollout-lua/backups").join(context.replace('/', "_")) }
    }

    /// Saves the object as read; the path is reported so `restore --from-backup` can use it.
    pub fn save(&self, object: &Value) -> Result<PathBuf, Error> {
        let field = |name: &str| object["metadata"][name].as_str().unwrap_or("_").replace('/', "_");
        let kind = object["kind"].as_str().unwrap_or("Object");
        let dir = self.root.join(field("namespace")).join(kind).join(field("name"));
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::Input(format!("creating the backup folder {}: {e}", dir.display())))?;
        let path = dir.join(format!("{}.yaml", crate::time::file_timestamp(SystemTime::now())));
        std::fs::write(&path, crate::yaml::to_string(object))
            .map_err(|e| Error::Input(format!("writing the backup {}: {e}", path.display())))?;
        Ok(path)
    }
}

/// Which object, across reads and writes: its API group, kind, namespace and name (the version
/// may differ between reads; the object is the same). Group and kind come from what it was read
/// as, not from its JSON.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectKey {
    group: String,
    kind: String,
    namespace: String,
    name: String,
}

impl ObjectKey {
    pub fn new(group: &str, kind: &str, namespace: &str, name: &str) -> ObjectKey {
        ObjectKey { group: group.into(), kind: kind.into(), namespace: namespace.into(), name: name.into() }
    }

    /// `object`, read as `resource`.
    pub fn of(resource: &Resource, object: &Value) -> ObjectKey {
        let field = |name: &str| object["metadata"][name].as_str().unwrap_or_default();
        ObjectKey::new(&resource.group, &resource.kind, field("namespace"), field("name"))
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }
}

/// An object this run wrote: its state before the run, and after this run's last write.
#[derive(Clone, Debug)]
pub struct Written {
    pub resource: Resource,
    pub before: Value,
    pub after: Value,
}

impl Written {
    pub fn describe(&self) -> String {
        describe_object(&self.before)
    }

    pub fn key(&self) -> ObjectKey {
        ObjectKey::of(&self.resource, &self.before)
    }
}

pub fn describe_object(object: &Value) -> String {
    format!(
        "{} {}/{}",
        object["kind"].as_str().unwrap_or("object"),
        object["metadata"]["namespace"].as_str().unwrap_or_default(),
        object["metadata"]["name"].as_str().unwrap_or_default()
    )
}

/// Why a write did not happen.
#[derive(Debug)]
pub enum WriteFailure {
    /// 409 (or a failed precondition): the object changed since it was read.
    Conflict(String),
    Failed(String),
}

pub(crate) fn failure(doing: &str, error: kube::Error) -> WriteFailure {
    let message = format!("{doing}: {}", describe_api_error(&error));
    match &error {
        kube::Error::Api(status) if status.code == 409 => WriteFailure::Conflict(message),
        _ => WriteFailure::Failed(message),
    }
}

/// Records a successful write, keeping the earliest `before` of an object written twice.
fn record(written: &mut Vec<Written>, resource: &Resource, before: &Value, after: Value) {
    let key = ObjectKey::of(resource, before);
    let same = |w: &Written| w.before["metadata"]["uid"] == before["metadata"]["uid"] && w.key() == key;
    match written.iter_mut().find(|w| same(w)) {
        Some(entry) => entry.after = after,
        None => written.push(Written { resource: resource.clone(), before: before.clone(), after }),
    }
}

/// Writes `planned` over `live` as the controller would: when `live` has no original-spec
/// annotation, the original is stored first (one PUT), then the planned object replaces it
/// (a second PUT), each with the resourceVersion just read or written. `live` is backed up
/// first. Every successful write is recorded in `written`.
pub async fn write_planned(
    cluster: &Cluster,
    resource: &Resource,
    live: &Value,
    planned: &Value,
    backups: &Backups,
    written: &mut Vec<Written>,
) -> Result<PathBuf, WriteFailure> {
    let backup = backups.save(live).map_err(|e| WriteFailure::Failed(e.to_string()))?;
    let what = describe_object(live);
    let mut current = live.clone();
    if data::stored_original(live).is_none()
        && let Some(stored) = data::stored_original(planned)
    {
        let mut with_original = live.clone();
        with_original["metadata"]["annotations"][data::ORIGINAL_SPEC_ANNOTATION] = Value::String(stored.into());
        current = cluster
            .replace(resource, &with_original, false)
            .await
            .map_err(|e| failure(&format!("storing the original of {what}"), e))?;
        record(written, resource, live, current.clone());
    }
    if !data::same_routing(&current, planned) {
        let mut next = planned.clone();
        next["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
        current = cluster.replace(resource, &next, false).await.map_err(|e| failure(&format!("updating {what}"), e))?;
        record(written, resource, live, current.clone());
    }
    // What the server stored is what counts: a mutating admission webhook may have changed it,
    // and the controller would then see routing it did not plan.
    if !data::stored_as_planned(&current, planned) {
        return Err(WriteFailure::Failed(format!(
            "{what} was stored with other spec, labels or annotations than planned (a mutating admission webhook changed it?)"
        )));
    }
    Ok(backup)
}

/// Sends `planned` with `dryRun=All`: admission (e.g. Istio's validation) judges it, nothing is
/// stored. Returns the server's rejection, if any.
pub async fn server_dry_run(
    cluster: &Cluster,
    resource: &Resource,
    live: &Value,
    planned: &Value,
) -> Result<(), String> {
    let mut next = planned.clone();
    next["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"].clone();
    cluster.replace(resource, &next, true).await.map(|_| ()).map_err(|e| describe_api_error(&e))
}

/// Puts every object this run wrote back to its state before the run, newest first, each
/// conditional on this run's own last write (an object someone changed since is left alone).
/// Returns one line per object saying what happened.
pub async fn roll_back(cluster: &Cluster, written: &[Written]) -> Vec<String> {
    let mut report = Vec::new();
    for entry in written.iter().rev() {
        let mut restore = entry.before.clone();
        restore["metadata"]["resourceVersion"] = entry.after["metadata"]["resourceVersion"].clone();
        report.push(match cluster.replace(&entry.resource, &restore, false).await {
            Ok(_) => format!("rolled back {}", entry.describe()),
            Err(e) => format!(
                "could NOT roll back {}: {} (its state before this run is in the backup folder)",
                entry.describe(),
                describe_api_error(&e)
            ),
        });
    }
    report
}

/// Asks the API server about every permission before anything is written; refuses, naming
/// what is missing and a Role that would grant it, when any is denied.
pub async fn preflight(cluster: &Cluster, mut permissions: Vec<Permission>) -> Result<(), Error> {
    permissions.sort();
    permissions.dedup();
    let answers = futures::future::try_join_all(permissions.iter().map(|p| cluster.can_i(p))).await?;
    let missing: Vec<Permission> =
        permissions.into_iter().zip(answers).filter(|(_, allowed)| !allowed).map(|(p, _)| p).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let who = cluster.user.as_deref().map_or("you".to_string(), |u| format!("user {u}"));
    let lines: Vec<String> = missing
        .iter()
        .map(|p| {
            let resource = p.subresource.as_ref().map_or(p.resource.clone(), |s| format!("{}/{s}", p.resource));
            let group = if p.group.is_empty() { "core".to_string() } else { p.group.clone() };
            format!("  {} {resource} (API group {group}) in namespace {}", p.verb, p.namespace)
        })
        .collect();
    Err(Error::Refused(format!(
        "nothing was written: {who} may not\n{}\nA Role and RoleBinding that would grant it:\n\n{}",
        lines.join("\n"),
        output::paint(output::DIM, &rbac::grant(&missing, cluster.user.as_deref()))
    )))
}

#[cfg(test)]
mod tests {
    use super::{ObjectKey, Resource};
    use serde_json::json;

    #[test]
    fn an_object_is_the_same_at_any_version_of_its_group() {
        let resource = |group: &str, version: &str, kind: &str| Resource {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: format!("{}s", kind.to_lowercase()),
            namespaced: true,
        };
        let web = |namespace: &str| json!({"metadata": {"name": "web", "namespace": namespace}});
        let vs = |version: &str| resource("networking.istio.io", version, "VirtualService");
        assert_eq!(ObjectKey::of(&vs("v1beta1"), &web("shop")), ObjectKey::of(&vs("v1"), &web("shop")));
        assert_eq!(
            ObjectKey::of(&vs("v1"), &web("shop")),
            ObjectKey::new("networking.istio.io", "VirtualService", "shop", "web")
        );
        assert_ne!(ObjectKey::of(&vs("v1"), &web("shop")), ObjectKey::of(&vs("v1"), &web("other")));
        // Named alike, read as other resources (whatever their JSON says): other objects.
        assert_ne!(ObjectKey::of(&vs("v1"), &web("shop")), ObjectKey::of(&resource("", "v1", "Service"), &web("shop")));
        assert_eq!(ObjectKey::of(&resource("", "v1", "Service"), &web("shop")).namespace(), "shop");
    }
}
