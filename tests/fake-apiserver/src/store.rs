//! The fake's "etcd": objects keyed by group, plural, namespace and name, plus the global
//! resourceVersion counter.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::resource::ApiResourceDef;

/// Where an object lives. Versions of one group share storage, as in a real cluster.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ObjectKey {
    pub group: String,
    pub plural: String,
    /// `""` for cluster-scoped objects.
    pub namespace: String,
    pub name: String,
}

impl ObjectKey {
    pub fn new(group: &str, plural: &str, namespace: &str, name: &str) -> Self {
        Self {
            group: group.to_owned(),
            plural: plural.to_owned(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }
}

/// The server's objects. Tests reach it through [`crate::FakeHandle`] or, inside
/// [`crate::FakeHandle::before_write`], directly, acting as another client of the cluster.
///
/// Namespaces are `""` for cluster-scoped objects. Writes through the store are
/// unconditional (no resourceVersion check, no status-subresource rules) but otherwise look
/// like any write: the resourceVersion is bumped and `metadata.generation` follows spec
/// changes.
pub struct Store {
    resources: Vec<ApiResourceDef>,
    objects: BTreeMap<ObjectKey, Value>,
    resource_version: u64,
    /// Counts created objects, to make uids and generated names unique.
    created: u64,
    /// Every change since the start (or the last compaction), in order, for watches.
    events: Vec<Event>,
    /// Watches from a resourceVersion below this one are told it expired (410), as after
    /// etcd's compaction.
    compacted: u64,
}

/// A change, as a watch reports it.
#[derive(Clone, Debug)]
pub(crate) struct Event {
    pub resource_version: u64,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub kind: &'static str,
    pub key: ObjectKey,
    /// The object after the change (before it, for a deletion), at its new resourceVersion.
    pub object: Value,
}

impl Store {
    pub(crate) fn new(resources: Vec<ApiResourceDef>) -> Self {
        Self {
            resources,
            objects: BTreeMap::new(),
            // Real clusters never start at 1; a larger start makes stray `"1"`s stand out.
            resource_version: 100,
            created: 0,
            events: Vec::new(),
            compacted: 0,
        }
    }

    /// The stored object, `apiVersion` as last written.
    pub fn get(&self, group: &str, plural: &str, namespace: &str, name: &str) -> Option<&Value> {
        self.objects.get(&ObjectKey::new(group, plural, namespace, name))
    }

    /// All objects of a resource in every namespace, sorted by namespace and name.
    pub fn list(&self, group: &str, plural: &str) -> Vec<Value> {
        self.objects.iter().filter(|(k, _)| k.group == group && k.plural == plural).map(|(_, v)| v.clone()).collect()
    }

    /// Creates or replaces the object named by its `apiVersion`, `kind` and `metadata`,
    /// keeping uid and creationTimestamp of an existing object. Returns the stored object.
    ///
    /// # Panics
    /// If no served resource has the object's `apiVersion` and `kind`.
    pub fn put(&mut self, object: Value) -> Value {
        self.try_put(object).unwrap_or_else(|e| panic!("{e}"))
    }

    pub(crate) fn try_put(&mut self, mut object: Value) -> Result<Value, String> {
        let def = self.resolve(&object)?.clone();
        let namespace = if def.namespaced {
            object["metadata"]["namespace"].as_str().unwrap_or("default").to_owned()
        } else {
            String::new()
        };
        let Some(name) = object["metadata"]["name"].as_str().map(str::to_owned) else {
            return Err(format!("object has no metadata.name: {object}"));
        };
        let metadata = object["metadata"].as_object_mut().ok_or("metadata is not an object")?;
        if def.namespaced {
            metadata.insert("namespace".into(), namespace.clone().into());
        } else {
            metadata.remove("namespace");
        }
        let key = ObjectKey::new(&def.group, &def.plural, &namespace, &name);
        match self.objects.get(&key) {
            Some(old) => carry_over_identity(&def, old, &mut object),
            None => self.stamp_new(&def, &mut object),
        }
        def.apply_defaults(&mut object);
        Ok(self.commit(key, object))
    }

    /// Applies `edit` to a copy of the stored object and stores it as [`Store::put`] does.
    /// Returns the stored object, or `None` when there is no such object.
    pub fn modify(
        &mut self,
        group: &str,
        plural: &str,
        namespace: &str,
        name: &str,
        edit: impl FnOnce(&mut Value),
    ) -> Option<Value> {
        let mut object = self.get(group, plural, namespace, name)?.clone();
        edit(&mut object);
        Some(self.put(object))
    }

    /// Removes the object; returns it when it existed.
    pub fn delete(&mut self, group: &str, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        self.remove(&ObjectKey::new(group, plural, namespace, name))
    }

    /// The current global resourceVersion (that of the latest write).
    pub fn resource_version(&self) -> String {
        self.resource_version.to_string()
    }

    pub(crate) fn get_key(&self, key: &ObjectKey) -> Option<&Value> {
        self.objects.get(key)
    }

    pub(crate) fn remove(&mut self, key: &ObjectKey) -> Option<Value> {
        let removed = self.objects.remove(key);
        if let Some(object) = &removed {
            self.resource_version += 1;
            let mut gone = object.clone();
            gone["metadata"]["resourceVersion"] = self.resource_version().into();
            self.record("DELETED", key.clone(), gone);
        }
        removed
    }

    /// Stores `object` under a new resourceVersion and returns it.
    pub(crate) fn commit(&mut self, key: ObjectKey, mut object: Value) -> Value {
        self.resource_version += 1;
        object["metadata"]["resourceVersion"] = self.resource_version().into();
        let kind = if self.objects.contains_key(&key) { "MODIFIED" } else { "ADDED" };
        self.objects.insert(key.clone(), object.clone());
        self.record(kind, key, object.clone());
        object
    }

    fn record(&mut self, kind: &'static str, key: ObjectKey, object: Value) {
        self.events.push(Event { resource_version: self.resource_version, kind, key, object });
    }

    /// Sets the status of the stored object `written` names (by apiVersion, kind, namespace
    /// and name), as its controller does: a write of its own, under a new resourceVersion.
    /// Nothing when there is no such object (`written` is a deletion's Status, say).
    pub(crate) fn write_status(&mut self, written: &Value, status: Value) {
        let Ok(def) = self.resolve(written) else { return };
        let namespace = if def.namespaced { written["metadata"]["namespace"].as_str().unwrap_or_default() } else { "" };
        let key = ObjectKey::new(
            &def.group,
            &def.plural,
            namespace,
            written["metadata"]["name"].as_str().unwrap_or_default(),
        );
        let Some(mut object) = self.objects.get(&key).cloned() else { return };
        object["status"] = status;
        self.commit(key, object);
    }

    /// The changes after resourceVersion `after`, oldest first.
    pub(crate) fn events_after(&self, after: u64) -> impl Iterator<Item = &Event> {
        self.events.iter().filter(move |e| e.resource_version > after)
    }

    /// The oldest resourceVersion a watch may start from.
    pub(crate) fn compacted(&self) -> u64 {
        self.compacted
    }

    /// Forgets the changes up to now, as etcd's compaction does.
    pub(crate) fn compact(&mut self) {
        self.events.clear();
        self.compacted = self.resource_version;
    }

    /// Assigns what the apiserver assigns on create: uid, creationTimestamp, generation.
    pub(crate) fn stamp_new(&mut self, def: &ApiResourceDef, object: &mut Value) {
        self.created += 1;
        let metadata = &mut object["metadata"];
        metadata["uid"] = format!("00000000-0000-4000-8000-{:012x}", self.created).into();
        metadata["creationTimestamp"] = now_rfc3339().into();
        if def.tracks_generation {
            metadata["generation"] = 1.into();
        }
    }

    /// A name for `metadata.generateName`: the prefix plus five characters from the
    /// apiserver's alphabet, derived from a counter so runs are reproducible.
    pub(crate) fn generate_name(&mut self, prefix: &str) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        let mut n = self.created;
        let suffix: String = (0..5)
            .map(|_| {
                let c = ALPHABET[(n % ALPHABET.len() as u64) as usize] as char;
                n /= ALPHABET.len() as u64;
                c
            })
            .collect();
        format!("{prefix}{suffix}")
    }

    fn resolve(&self, object: &Value) -> Result<&ApiResourceDef, String> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        self.resources
            .iter()
            .find(|d| d.api_version() == api_version && d.kind == kind)
            .ok_or_else(|| format!("the fake server does not serve apiVersion {api_version:?} kind {kind:?}"))
    }
}

/// Keeps the identity fields of `old` in its replacement `new`, and moves `generation` on
/// when the content changed.
pub(crate) fn carry_over_identity(def: &ApiResourceDef, old: &Value, new: &mut Value) {
    for field in ["uid", "creationTimestamp"] {
        new["metadata"][field] = old["metadata"][field].clone();
    }
    if def.tracks_generation {
        new["metadata"]["generation"] = next_generation(def, old, new).into();
    }
}

/// The CRD rule: generation increments when anything but metadata (and status, when it is
/// a subresource) changes.
fn next_generation(def: &ApiResourceDef, old: &Value, new: &Value) -> i64 {
    let content = |v: &Value| {
        let mut v = v.clone();
        if let Some(map) = v.as_object_mut() {
            // The version written through does not matter: versions share storage.
            map.remove("apiVersion");
            map.remove("metadata");
            if def.status_subresource {
                map.remove("status");
            }
        }
        v
    };
    let old_generation = old["metadata"]["generation"].as_i64().unwrap_or(1);
    if content(old) == content(new) { old_generation } else { old_generation + 1 }
}

/// The current UTC time as `2006-01-02T15:04:05Z`.
pub(crate) fn now_rfc3339() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (year, month, day) = civil_from_days(secs / 86_400);
    let rem = secs % 86_400;
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Days since 1970-01-01 to (year, month, day); Howard Hinnant's `civil_from_days`.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// An empty object of `def` named `name`, used when server-side apply creates.
pub(crate) fn skeleton(def: &ApiResourceDef, namespace: &str, name: &str) -> Value {
    let mut object = json!({
        "apiVersion": def.api_version(),
        "kind": def.kind,
        "metadata": { "name": name },
    });
    if def.namespaced {
        object["metadata"]["namespace"] = namespace.into();
    }
    object
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::{configmaps, rollouts};

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_819), (2027, 1, 1));
    }

    #[test]
    fn put_assigns_identity_and_tracks_generation() {
        let mut store = Store::new(vec![rollouts("v1beta1"), configmaps()]);
        let first = store.put(json!({
            "apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": { "name": "r" }, "spec": { "a": 1 },
        }));
        assert_eq!(first["metadata"]["namespace"], "default");
        assert_eq!(first["metadata"]["generation"], 1);
        assert_eq!(first["metadata"]["resourceVersion"], "101");
        let uid = first["metadata"]["uid"].clone();

        let status_only = store
            .modify("rollouts.kruise.io", "rollouts", "default", "r", |o| {
                o["status"] = json!({ "phase": "Healthy" });
            })
            .unwrap();
        assert_eq!(status_only["metadata"]["generation"], 1);
        assert_eq!(status_only["metadata"]["uid"], uid);

        let spec = store
            .modify("rollouts.kruise.io", "rollouts", "default", "r", |o| {
                o["spec"]["a"] = 2.into();
            })
            .unwrap();
        assert_eq!(spec["metadata"]["generation"], 2);
        assert_eq!(store.resource_version(), "103");

        let cm = store.put(json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "c" } }));
        assert!(cm["metadata"].get("generation").is_none());
    }

    #[test]
    #[should_panic(expected = "does not serve")]
    fn put_rejects_unknown_kinds() {
        Store::new(vec![]).put(json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "p" } }));
    }
}
