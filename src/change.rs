//! A change to one object: what a write does, the exact request it makes, the change that
//! undoes it, and how to tell from a fresh read whether it landed. Pure: the writer
//! (`write.rs`) sends the requests.

use crate::data;
use crate::model::{self, ApprovalProgress, ObjectKey};
use serde_json::{Map, Value};
use std::sync::Arc;

/// One write a plan makes (or, `Keep`, does not make). The objects are shared: a plan holds
/// each state of an object once, however many changes name it.
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// POST `object` (it must not exist).
    Create { key: ObjectKey, object: Arc<Value> },
    /// PUT `after` over `before`, conditional on the resourceVersion this run last saw.
    Replace { key: ObjectKey, before: Arc<Value>, after: Arc<Value> },
    /// A JSON merge patch of the object (or of its `status` subresource), conditional on the
    /// resourceVersion this run last saw.
    MergePatch { key: ObjectKey, subresource: Option<&'static str>, before: Arc<Value>, patch: Value },
    /// DELETE, conditional on the object's UID and the resourceVersion this run last saw.
    Delete { key: ObjectKey, before: Arc<Value> },
    /// Nothing to write.
    Keep { key: ObjectKey, object: Arc<Value> },
}

/// The request a change sends. `resourceVersion` preconditions are filled in by
/// [`Change::request`].
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    Create { body: Value },
    Replace { body: Value },
    MergePatch { subresource: Option<&'static str>, body: Value },
    Delete { uid: Option<String>, resource_version: Option<String> },
}

/// What a fresh read says about a change whose reply never came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Landed {
    /// The object is as the change leaves it.
    Applied,
    /// The change was applied and the object has moved on from it since: an approval that the
    /// controller acted on (the Rollout at a later step, or its release over).
    MovedOn,
    /// A delete that landed, and the object made again since by someone else (another uid).
    MadeAgain,
    /// The object is as it was before: the change did not happen.
    NotApplied,
    /// The change did not happen, and can no longer: the object is as it was before in all
    /// but its status and the server's bookkeeping (a gateway controller's status write), which
    /// moved its resourceVersion past the one the change was sent at. As after a conflict.
    Outdated,
    /// Neither: someone else changed (or removed, or made) the object.
    ChangedBySomeoneElse,
}

impl Change {
    pub fn key(&self) -> &ObjectKey {
        match self {
            Change::Create { key, .. }
            | Change::Replace { key, .. }
            | Change::MergePatch { key, .. }
            | Change::Delete { key, .. }
            | Change::Keep { key, .. } => key,
        }
    }

    /// `create`, `replace`, `patch`, `delete`, `keep`: the `action` of `plan -o json`.
    pub fn action(&self) -> &'static str {
        match self {
            Change::Create { .. } => "create",
            Change::Replace { .. } => "replace",
            Change::MergePatch { .. } => "patch",
            Change::Delete { .. } => "delete",
            Change::Keep { .. } => "keep",
        }
    }

    /// The object before the change (None for a Create).
    pub fn before(&self) -> Option<&Value> {
        match self {
            Change::Create { .. } => None,
            Change::Replace { before, .. } | Change::MergePatch { before, .. } | Change::Delete { before, .. } => {
                Some(before)
            }
            Change::Keep { object, .. } => Some(object),
        }
    }

    /// The object as the change means to leave it (None for a Delete).
    pub fn after(&self) -> Option<Arc<Value>> {
        match self {
            Change::Create { object, .. } | Change::Keep { object, .. } => Some(Arc::clone(object)),
            Change::Replace { after, .. } => Some(Arc::clone(after)),
            Change::MergePatch { before, patch, .. } => Some(Arc::new(merge_patch(before, patch))),
            Change::Delete { .. } => None,
        }
    }

    /// The verbs sending this change and undoing it need (a create is undone by a delete, a
    /// delete by a create); none for a Keep.
    pub fn verbs(&self) -> &'static [&'static str] {
        match self {
            Change::Create { .. } | Change::Delete { .. } => &["create", "delete"],
            Change::Replace { .. } => &["update"],
            Change::MergePatch { .. } => &["patch"],
            Change::Keep { .. } => &[],
        }
    }

    /// The owners (`apiVersion`, `kind`, `name`) whose deletion the object this change creates, or
    /// whose undo re-creates, would block (`blockOwnerDeletion: true`). An API server that
    /// enforces owner-reference permissions (the OwnerReferencesPermissionEnforcement admission
    /// plugin, on in OpenShift) lets only who may update an owner's `finalizers` set one.
    pub fn blocking_owners(&self) -> Vec<(&str, &str, &str)> {
        let object = match self {
            Change::Create { object, .. } => object,
            Change::Delete { before, .. } => before,
            _ => return Vec::new(),
        };
        let references = object["metadata"]["ownerReferences"].as_array().into_iter().flatten();
        references
            .filter(|r| r["blockOwnerDeletion"] == true)
            .filter_map(|r| Some((r["apiVersion"].as_str()?, r["kind"].as_str()?, r["name"].as_str()?)))
            .collect()
    }

    /// The subresource the change writes (`status`), if any.
    pub fn subresource(&self) -> Option<&'static str> {
        match self {
            Change::MergePatch { subresource, .. } => *subresource,
            _ => None,
        }
    }

    /// Whether the change writes anything at all.
    pub fn writes(&self) -> bool {
        !matches!(self, Change::Keep { .. })
    }

    /// The request, conditional on `resource_version` (the version this run last read or
    /// wrote of the object; by default the one of `before`). None for a Keep.
    pub fn request(&self, resource_version: Option<&str>) -> Option<Request> {
        let version = resource_version.map(str::to_string).or_else(|| self.before().and_then(resource_version_of));
        let with_version = |mut body: Value| {
            if let Some(version) = &version {
                body["metadata"]["resourceVersion"] = Value::String(version.clone());
            }
            body
        };
        match self {
            Change::Create { object, .. } => Some(Request::Create { body: without_server_fields(object) }),
            Change::Replace { after, .. } => Some(Request::Replace { body: with_version(Value::clone(after)) }),
            Change::MergePatch { subresource, patch, .. } => {
                Some(Request::MergePatch { subresource: *subresource, body: with_version(patch.clone()) })
            }
            Change::Delete { before, .. } => Some(Request::Delete {
                uid: before["metadata"]["uid"].as_str().map(str::to_string),
                resource_version: version,
            }),
            Change::Keep { .. } => None,
        }
    }

    /// The change that undoes this one, given the object as this run's write left it
    /// (`written`, as the server returned it). Sent conditional on `written`'s resourceVersion,
    /// it only ever undoes what nobody changed since. The undo of a merge patch sets back only
    /// the fields the patch set: anything else that changed before the object was read back
    /// is left alone. None for a Keep.
    pub fn inverse(&self, written: Option<&Value>) -> Option<Change> {
        let key = self.key().clone();
        match (self, written) {
            (Change::Create { .. }, Some(written)) => Some(Change::Delete { key, before: Arc::new(written.clone()) }),
            (Change::Replace { before, .. }, Some(written)) => {
                let mut after = Value::clone(before);
                after["metadata"]["resourceVersion"] = written["metadata"]["resourceVersion"].clone();
                Some(Change::Replace { key, before: Arc::new(written.clone()), after: Arc::new(after) })
            }
            (Change::MergePatch { subresource, before, patch, .. }, Some(written)) => Some(Change::MergePatch {
                key,
                subresource: *subresource,
                before: Arc::new(written.clone()),
                patch: undo_patch(Some(before), &without_version(patch)),
            }),
            (Change::Delete { before, .. }, _) => {
                Some(Change::Create { key, object: Arc::new(without_server_fields(before)) })
            }
            _ => None,
        }
    }

    /// Whether a change whose reply was lost landed, from a fresh read (`None`: not found).
    /// `seen` is the object as this run last saw it, whose resourceVersion the request was
    /// conditional on (by default `before`): an object still at it was not written. It landed
    /// (`Applied`) only when the object is as the change leaves it in everything but its status
    /// and the server's bookkeeping; anything else (their annotation, a finalizer, an owner
    /// reference) is someone else's change, made before or after this one.
    pub fn landed(&self, seen: Option<&Value>, fresh: Option<&Value>) -> Landed {
        let seen = seen.or(self.before());
        let unchanged = |fresh: &Value| {
            let sent = seen.and_then(resource_version_of);
            sent.is_some() && sent == resource_version_of(fresh)
        };
        match (self, fresh) {
            (Change::Keep { .. }, _) => Landed::Applied,
            (Change::Create { .. }, None) => Landed::NotApplied,
            (Change::Create { object, .. }, Some(fresh)) => same_or_other(stored_as(fresh, object)),
            (Change::Delete { .. }, None) => Landed::Applied,
            (Change::Delete { before, .. }, Some(fresh)) if fresh["metadata"]["uid"] != before["metadata"]["uid"] => {
                Landed::MadeAgain
            }
            // Marked for deletion, its finalizers holding it.
            (Change::Delete { before, .. }, Some(fresh)) if being_deleted(fresh) && !being_deleted(before) => {
                Landed::Applied
            }
            (Change::Delete { .. }, Some(fresh)) if unchanged(fresh) => Landed::NotApplied,
            (Change::Delete { .. }, Some(_)) => Landed::ChangedBySomeoneElse,
            (_, None) => Landed::ChangedBySomeoneElse,
            (Change::Replace { .. } | Change::MergePatch { .. }, Some(fresh)) if unchanged(fresh) => Landed::NotApplied,
            (Change::Replace { after, .. }, Some(fresh)) if stored_as(fresh, after) => Landed::Applied,
            (Change::Replace { after, .. }, Some(fresh)) if spec_write_outdated(seen, after, fresh) => Landed::Outdated,
            (Change::Replace { .. }, Some(_)) => Landed::ChangedBySomeoneElse,
            (Change::MergePatch { subresource: None, patch, .. }, Some(fresh)) => {
                let after = merge_patch(seen.unwrap_or(&Value::Null), &without_version(patch));
                same_or_other(stored_as(fresh, &after))
            }
            (Change::MergePatch { subresource: Some(_), before, patch, .. }, Some(fresh)) => {
                let applied = merge_patch(fresh, &without_version(patch)) == *fresh;
                match approved_step(patch) {
                    Some((field, step)) => match approval_landed(before, fresh, field, step, applied) {
                        // Sent conditional on a version the Rollout has left (a status write of
                        // the controller's): it can no longer land.
                        Landed::NotApplied if seen.and_then(resource_version_of).is_some() => Landed::Outdated,
                        landed => landed,
                    },
                    None => same_or_other(applied),
                }
            }
        }
    }
}

/// Whether an approval of step `step` (of the sub-status `field`) landed, from a fresh read:
/// the controller moves an approved step on within a reconcile, so the read rarely shows the
/// patch itself (`applied`).
fn approval_landed(before: &Value, fresh: &Value, field: &str, step: i64, applied: bool) -> Landed {
    if fresh["metadata"]["uid"] != before["metadata"]["uid"]
        || fresh["metadata"]["generation"] != before["metadata"]["generation"]
        || another_release_in(before, fresh, field)
    {
        // Deleted and made again (a new Rollout may well be waiting at the same step), someone
        // changed the spec, or a new version was pushed: whatever the status shows is not this
        // approval's.
        return Landed::ChangedBySomeoneElse;
    }
    match model::approval_progress(&fresh["status"], field, step) {
        ApprovalProgress::Waiting => Landed::NotApplied,
        ApprovalProgress::Approved if applied => Landed::Applied,
        ApprovalProgress::Approved => Landed::MovedOn,
        ApprovalProgress::Elsewhere => Landed::ChangedBySomeoneElse,
    }
}

/// A Rollout's phase and the reason of its `Progressing` condition: a release that begins to
/// end (cancelled, disabled, deleted, completed) changes one of them, and its steps do not.
fn release_state(rollout: &Value) -> (&Value, Option<&Value>) {
    let conditions = rollout["status"]["conditions"].as_array().into_iter().flatten();
    let progressing = conditions.clone().find(|c| c["type"] == "Progressing").map(|c| &c["reason"]);
    (&rollout["status"]["phase"], progressing)
}

/// Whether `fresh` is in another release than `seen` in a sub-status a status patch writes, or
/// goes elsewhere next: a `nextStepIndex` patched meanwhile (`rollout undo --fast`, a jump)
/// sends the release to that step, not on from the one approved.
fn another_release(seen: &Value, fresh: &Value, patch: &Value) -> bool {
    patch["status"].as_object().into_iter().flatten().any(|(field, _)| {
        another_release_in(seen, fresh, field)
            || seen["status"][field]["nextStepIndex"] != fresh["status"][field]["nextStepIndex"]
    })
}

/// Whether the sub-status `field` (`canaryStatus`, `blueGreenStatus`) of `fresh` is another
/// release than `seen`'s: a version pushed meanwhile restarts the release (§3.6) under a new
/// pod template hash and revision (blue-green's `updatedRevision`), and may come back to the
/// very step `seen` was at.
fn another_release_in(seen: &Value, fresh: &Value, field: &str) -> bool {
    let (seen, fresh) = (&seen["status"][field], &fresh["status"][field]);
    ["podTemplateHash", "canaryRevision", "updatedRevision"].iter().any(|release| seen[release] != fresh[release])
}

/// The step a status patch approves (`currentStepState: StepReady` at `currentStepIndex` of the
/// sub-status it names: `approve`'s only status write), and that sub-status's field.
fn approved_step(patch: &Value) -> Option<(&str, i64)> {
    let (field, sub) = patch["status"].as_object()?.iter().next()?;
    (sub["currentStepState"] == "StepReady").then_some((field.as_str(), sub["currentStepIndex"].as_i64()?))
}

/// A patch without its precondition (which is not content).
fn without_version(patch: &Value) -> Value {
    let mut patch = patch.clone();
    if let Some(metadata) = patch.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("resourceVersion");
    }
    patch
}

/// The merge patch that undoes `patch` made over `before`: each field the patch sets goes back
/// to its value in `before` (null, removing it, where `before` had none). Nothing else is
/// touched, so a field someone else set meanwhile stays.
fn undo_patch(before: Option<&Value>, patch: &Value) -> Value {
    let undo_fields = |before: Option<&Map<String, Value>>, patch: &Map<String, Value>| {
        let fields =
            patch.iter().map(|(field, value)| (field.clone(), undo_patch(before.and_then(|b| b.get(field)), value)));
        Value::Object(fields.collect())
    };
    match (before, patch) {
        (Some(Value::Object(before)), Value::Object(patch)) => undo_fields(Some(before), patch),
        // A map the patch made: its fields removed one by one (`{}` itself was a no-op).
        (None, Value::Object(patch)) if !patch.is_empty() => undo_fields(None, patch),
        (before, _) => before.cloned().unwrap_or(Value::Null),
    }
}

/// Whether `fresh`, as read back, is `expected` (what a write of this run leaves): the same
/// routing as stored (`data::stored_as_planned`), and the same everything else but the status
/// and the server's bookkeeping (finalizers, owner references, a deletion under way, …).
fn stored_as(fresh: &Value, expected: &Value) -> bool {
    data::stored_as_planned(fresh, expected) && beside_routing(fresh) == beside_routing(expected)
}

/// Whether a replace of `seen` by `after` that changes its spec did not land, and can no longer:
/// the object (`fresh`) is as seen in all but its status and bookkeeping, and its generation has
/// not moved. A spec write that landed moves it on, and nothing moves it back; a status write (a
/// gateway controller's) leaves it. (A write of the metadata alone, or an object without a
/// generation, cannot be told so.)
fn spec_write_outdated(seen: Option<&Value>, after: &Value, fresh: &Value) -> bool {
    let Some(seen) = seen else { return false };
    let generation = &seen["metadata"]["generation"];
    generation.is_u64()
        && fresh["metadata"]["generation"] == *generation
        && seen.get("spec") != after.get("spec")
        && stored_as(fresh, seen)
}

/// The object without its routing (spec, labels, annotations), status and server bookkeeping.
fn beside_routing(object: &Value) -> Value {
    let mut rest = without_server_fields(object);
    if let Some(root) = rest.as_object_mut() {
        root.remove("spec");
    }
    if let Some(metadata) = rest.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("labels");
        metadata.remove("annotations");
    }
    rest
}

impl Change {
    /// After a conflict: whether the object as it is now (`fresh`) differs from what this run
    /// last saw of it (`seen`) in something that matters to this change: the routing (spec,
    /// labels, annotations) of an object it writes, or a field the patch writes (a status patch:
    /// the fields it sets, the generation, and the release: a new version's release waiting at
    /// the same step is not the one approved), or the object itself (deleted and made again:
    /// another uid). Anything else (the server's bookkeeping, status fields the patch leaves
    /// alone, a finalizer) may change without making the write wrong.
    pub fn someone_else_changed(&self, seen: &Value, fresh: &Value) -> bool {
        let made_again = seen["metadata"]["uid"].is_string() && seen["metadata"]["uid"] != fresh["metadata"]["uid"];
        match self {
            Change::Create { .. } => true,
            Change::Keep { .. } => false,
            _ if made_again => true,
            Change::Replace { .. } | Change::Delete { .. } => !data::same_routing(seen, fresh),
            Change::MergePatch { subresource, patch, .. } => {
                let mut fields = Vec::new();
                leaves(patch, &mut Vec::new(), &mut fields);
                let patched_field_changed = fields
                    .iter()
                    .filter(|path| path.as_slice() != ["metadata", "resourceVersion"])
                    .any(|path| pointer(seen, path) != pointer(fresh, path));
                let content_changed = match subresource {
                    Some(_) => {
                        seen["metadata"]["generation"] != fresh["metadata"]["generation"]
                            || another_release(seen, fresh, patch)
                            || release_state(seen) != release_state(fresh)
                    }
                    None => !data::same_routing(seen, fresh),
                };
                patched_field_changed || content_changed
            }
        }
    }
}

impl Change {
    /// The same change, made over the object as it is now (`fresh`, after a conflict): a
    /// replace writes its routing (spec, labels, annotations) over what else changed, a patch
    /// or delete is conditional on the new version.
    pub fn rebased(&self, fresh: &Value) -> Change {
        let key = self.key().clone();
        match self {
            Change::Replace { after, .. } => {
                let mut after = data::Data::of_object(after).apply_to(fresh, None);
                after["metadata"]["resourceVersion"] = fresh["metadata"]["resourceVersion"].clone();
                Change::Replace { key, before: Arc::new(fresh.clone()), after: Arc::new(after) }
            }
            Change::MergePatch { subresource, patch, .. } => {
                let before = Arc::new(fresh.clone());
                Change::MergePatch { key, subresource: *subresource, before, patch: patch.clone() }
            }
            Change::Delete { .. } => Change::Delete { key, before: Arc::new(fresh.clone()) },
            Change::Create { .. } | Change::Keep { .. } => self.clone(),
        }
    }
}

/// The paths of the leaves of a patch (every value that is not a map).
fn leaves<'a>(value: &'a Value, path: &mut Vec<&'a str>, out: &mut Vec<Vec<&'a str>>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (field, inner) in map {
                path.push(field);
                leaves(inner, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

fn pointer<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |value, field| value.get(*field))
}

fn same_or_other(same: bool) -> Landed {
    if same { Landed::Applied } else { Landed::ChangedBySomeoneElse }
}

/// Whether the API server is deleting the object already (it has a deletionTimestamp): a delete
/// of an object with finalizers only marks it, and it stays until they are removed.
pub fn being_deleted(object: &Value) -> bool {
    object["metadata"]["deletionTimestamp"].is_string()
}

/// `a, b`: the finalizers of `object`.
pub fn finalizers(object: &Value) -> String {
    let names = object["metadata"]["finalizers"].as_array().into_iter().flatten().filter_map(Value::as_str);
    names.collect::<Vec<_>>().join(", ")
}

pub fn resource_version_of(object: &Value) -> Option<String> {
    object["metadata"]["resourceVersion"].as_str().map(str::to_string)
}

/// The object without what the API server sets (uid, resourceVersion, timestamps, managed
/// fields, generation) and without its status: what can be sent to make it again.
pub fn without_server_fields(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(root) = out.as_object_mut() {
        root.remove("status");
    }
    if let Some(metadata) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in ["uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "selfLink"] {
            metadata.remove(field);
        }
    }
    out
}

/// RFC 7386: `patch` applied to `target` (null removes a field; anything but a map replaces).
pub fn merge_patch(target: &Value, patch: &Value) -> Value {
    let Value::Object(patch) = patch else { return patch.clone() };
    let mut out = match target {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    for (field, value) in patch {
        if value.is_null() {
            out.remove(field);
        } else {
            let merged = merge_patch(out.get(field).unwrap_or(&Value::Null), value);
            out.insert(field.clone(), merged);
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> ObjectKey {
        ObjectKey::new("networking.istio.io", "VirtualService", "shop", "web")
    }

    fn vs(version: &str, weight: i64) -> Value {
        json!({"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
               "metadata": {"name": "web", "namespace": "shop", "uid": "u-1", "resourceVersion": version},
               "spec": {"http": [{"route": [{"weight": weight}]}]}})
    }

    #[test]
    fn a_replace_is_conditional_on_the_version_last_seen() {
        let change = Change::Replace { key: key(), before: vs("5", 100).into(), after: vs("5", 80).into() };
        assert_eq!(change.action(), "replace");
        let Some(Request::Replace { body }) = change.request(None) else { panic!() };
        assert_eq!(body["metadata"]["resourceVersion"], "5");
        assert_eq!(body["spec"], vs("5", 80)["spec"]);
        // After this run's own earlier write (storing the original), the next write is
        // conditional on that write's version.
        let Some(Request::Replace { body }) = change.request(Some("7")) else { panic!() };
        assert_eq!(body["metadata"]["resourceVersion"], "7");
    }

    #[test]
    fn a_replace_is_undone_by_a_replace_back_conditional_on_this_runs_write() {
        let change = Change::Replace { key: key(), before: vs("5", 100).into(), after: vs("5", 80).into() };
        let inverse = change.inverse(Some(&vs("6", 80))).unwrap();
        let Change::Replace { before, after, .. } = &inverse else { panic!() };
        assert_eq!(**before, vs("6", 80));
        assert_eq!(after["spec"], vs("5", 100)["spec"]);
        let Some(Request::Replace { body }) = inverse.request(None) else { panic!() };
        assert_eq!(body["metadata"]["resourceVersion"], "6");
    }

    #[test]
    fn a_create_is_undone_by_a_delete_with_a_uid_precondition() {
        let object = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web-canary", "namespace": "shop"}});
        let change = Change::Create { key: key(), object: object.clone().into() };
        let Some(Request::Create { body }) = change.request(None) else { panic!() };
        assert_eq!(body, object);
        let mut written = object.clone();
        written["metadata"]["uid"] = json!("u-9");
        written["metadata"]["resourceVersion"] = json!("12");
        let inverse = change.inverse(Some(&written)).unwrap();
        assert_eq!(inverse.action(), "delete");
        assert_eq!(
            inverse.request(None),
            Some(Request::Delete { uid: Some("u-9".into()), resource_version: Some("12".into()) })
        );
        // And a delete is undone by making the object again, without what the server set.
        let again = inverse.inverse(None).unwrap();
        let Change::Create { object: made, .. } = &again else { panic!() };
        assert_eq!(**made, object);
    }

    #[test]
    fn a_create_or_delete_blocks_the_owners_its_object_says_it_blocks() {
        let object = json!({"metadata": {"name": "web-canary", "ownerReferences": [
            {"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "name": "web", "blockOwnerDeletion": true},
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "blockOwnerDeletion": false},
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "web"}]}});
        let blocking = [("rollouts.kruise.io/v1beta1", "Rollout", "web")];
        let create = Change::Create { key: key(), object: object.clone().into() };
        assert_eq!(create.blocking_owners(), blocking);
        // A delete's undo makes the object again.
        let delete = Change::Delete { key: key(), before: object.clone().into() };
        assert_eq!(delete.blocking_owners(), blocking);
        // Replacing or patching an object leaves its owner references as they are.
        let replace = Change::Replace { key: key(), before: object.clone().into(), after: object.clone().into() };
        assert!(replace.blocking_owners().is_empty());
        let unowned = Change::Create { key: key(), object: vs("1", 100).into() };
        assert!(unowned.blocking_owners().is_empty());
    }

    #[test]
    fn a_merge_patch_is_undone_by_the_reverse_merge_patch() {
        let before = json!({"metadata": {"name": "web-canary", "resourceVersion": "3", "annotations": {"a": "1", "weight": "0"}}});
        let patch = json!({"metadata": {"annotations": {"weight": "20", "header": "x"}}});
        let change =
            Change::MergePatch { key: key(), subresource: None, before: before.clone().into(), patch: patch.clone() };
        assert_eq!(change.action(), "patch");
        let written = {
            let mut w = merge_patch(&before, &patch);
            w["metadata"]["resourceVersion"] = json!("4");
            w
        };
        assert_eq!(written["metadata"]["annotations"], json!({"a": "1", "weight": "20", "header": "x"}));
        let inverse = change.inverse(Some(&written)).unwrap();
        let Change::MergePatch { patch: back, .. } = &inverse else { panic!() };
        assert_eq!(back, &json!({"metadata": {"annotations": {"weight": "0", "header": null}}}));
        assert_eq!(inverse.after().unwrap()["metadata"]["annotations"], before["metadata"]["annotations"]);
        let Some(Request::MergePatch { body, .. }) = inverse.request(None) else { panic!() };
        assert_eq!(body["metadata"]["resourceVersion"], "4");
    }

    #[test]
    fn the_undo_of_a_merge_patch_sets_back_only_the_fields_the_patch_set() {
        let before = json!({"metadata": {"name": "web-canary", "resourceVersion": "3", "annotations": {"a": "1", "weight": "0"}},
                            "spec": {"x": "old"}});
        let patch = json!({"metadata": {"resourceVersion": "3", "annotations": {"weight": "20", "header": "x", "a": null},
                                        "labels": {"new": "yes"}},
                           "spec": {"x": {"made": 1}}});
        let change =
            Change::MergePatch { key: key(), subresource: None, before: before.clone().into(), patch: patch.clone() };
        // Read back after someone else added an annotation of their own: the undo leaves it.
        let mut written = merge_patch(&before, &without_version(&patch));
        written["metadata"]["resourceVersion"] = json!("5");
        written["metadata"]["annotations"]["example.com/owner"] = json!("team-b");
        let Some(Change::MergePatch { patch: undo, .. }) = change.inverse(Some(&written)) else { panic!() };
        assert_eq!(
            undo,
            json!({"metadata": {"annotations": {"weight": "0", "header": null, "a": "1"}, "labels": {"new": null}},
                   "spec": {"x": "old"}})
        );
        let undone = merge_patch(&written, &undo);
        assert_eq!(undone["metadata"]["annotations"], json!({"a": "1", "weight": "0", "example.com/owner": "team-b"}));
        assert_eq!(undone["spec"], before["spec"]);
        // An empty map in a patch changes nothing over a map, so its undo changes nothing either.
        assert_eq!(undo_patch(Some(&json!({"a": {"b": 1}})), &json!({"a": {}})), json!({"a": {}}));
        assert_eq!(undo_patch(Some(&json!({})), &json!({"a": {}})), json!({"a": null}), "a map it made goes");
    }

    #[test]
    fn a_lost_write_landed_only_if_nothing_else_changed_but_status_and_bookkeeping() {
        let replace = Change::Replace { key: key(), before: vs("5", 100).into(), after: vs("5", 80).into() };
        let mut status_written = vs("7", 80);
        status_written["status"] = json!({"parents": []});
        status_written["metadata"]["managedFields"] = json!([{"manager": "gateway"}]);
        status_written["metadata"]["generation"] = json!(2);
        assert_eq!(replace.landed(None, Some(&status_written)), Landed::Applied);
        let mut finalized = vs("7", 80);
        finalized["metadata"]["finalizers"] = json!(["example.com/protect"]);
        assert_eq!(replace.landed(None, Some(&finalized)), Landed::ChangedBySomeoneElse, "their finalizer");
        let mut owned = vs("7", 80);
        owned["metadata"]["ownerReferences"] = json!([{"kind": "Application", "name": "shop"}]);
        assert_eq!(replace.landed(None, Some(&owned)), Landed::ChangedBySomeoneElse, "their owner reference");

        // A red-team trial: not applied, while a gateway controller wrote the status, was taken
        // for someone else's change. The generation tells: a spec write that landed moves it.
        let mut seen = vs("5", 100);
        seen["metadata"]["generation"] = json!(3);
        let replace = Change::Replace { key: key(), before: seen.clone().into(), after: vs("5", 80).into() };
        let mut status_only = seen.clone();
        status_only["metadata"]["resourceVersion"] = json!("6");
        status_only["status"] = json!({"observedGeneration": 3});
        assert_eq!(replace.landed(Some(&seen), Some(&status_only)), Landed::Outdated);
        let mut put_back = status_only.clone();
        put_back["metadata"]["generation"] = json!(5);
        assert_eq!(replace.landed(Some(&seen), Some(&put_back)), Landed::ChangedBySomeoneElse, "landed, then undone");
        let mut relabelled = status_only.clone();
        relabelled["metadata"]["labels"] = json!({"team": "b"});
        assert_eq!(replace.landed(Some(&seen), Some(&relabelled)), Landed::ChangedBySomeoneElse, "their label");
        let without_generation = vs("5", 100);
        let mut moved = without_generation.clone();
        moved["metadata"]["resourceVersion"] = json!("6");
        let replace = Change::Replace { key: key(), before: without_generation.into(), after: vs("5", 80).into() };
        assert_eq!(replace.landed(None, Some(&moved)), Landed::ChangedBySomeoneElse, "no generation to tell by");
        let mut annotated = seen.clone();
        annotated["metadata"]["annotations"] = json!({"stored": "original"});
        let metadata_only = Change::Replace { key: key(), before: seen.clone().into(), after: annotated.into() };
        assert_eq!(
            metadata_only.landed(Some(&seen), Some(&status_only)),
            Landed::ChangedBySomeoneElse,
            "no spec write"
        );

        // A merge patch is judged against the object as this run last saw it, patched.
        let seen = json!({"metadata": {"name": "web-canary", "uid": "u-1", "resourceVersion": "3",
                                       "annotations": {"canary": "true", "weight": "0"}},
                          "spec": {"rules": [{"host": "web"}]}, "status": {}});
        let patch = json!({"metadata": {"annotations": {"weight": "30"}}});
        let change = Change::MergePatch { key: key(), subresource: None, before: seen.clone().into(), patch };
        let read_back = |edit: &dyn Fn(&mut Value)| {
            let mut fresh = seen.clone();
            fresh["metadata"]["resourceVersion"] = json!("4");
            fresh["metadata"]["annotations"]["weight"] = json!("30");
            edit(&mut fresh);
            change.landed(Some(&seen), Some(&fresh))
        };
        assert_eq!(read_back(&|_| {}), Landed::Applied);
        assert_eq!(read_back(&|o| o["status"] = json!({"loadBalancer": {}})), Landed::Applied, "status only");
        let theirs = |o: &mut Value| o["metadata"]["annotations"]["example.com/owner"] = json!("team-b");
        assert_eq!(read_back(&theirs), Landed::ChangedBySomeoneElse, "their annotation");
        assert_eq!(read_back(&|o| o["spec"]["rules"][0]["host"] = json!("x")), Landed::ChangedBySomeoneElse);
        assert_eq!(read_back(&|o| o["metadata"]["finalizers"] = json!(["f"])), Landed::ChangedBySomeoneElse);
        assert_eq!(change.landed(Some(&seen), Some(&seen)), Landed::NotApplied);

        // A create: what it made, with what the server adds.
        let object = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                            "metadata": {"name": "web-canary", "namespace": "shop", "annotations": {"canary": "true"},
                                         "ownerReferences": [{"kind": "Rollout", "name": "web"}]},
                            "spec": {"rules": []}});
        let create = Change::Create { key: key(), object: object.clone().into() };
        let mut made = object.clone();
        made["metadata"]["uid"] = json!("u-7");
        made["metadata"]["resourceVersion"] = json!("9");
        made["metadata"]["creationTimestamp"] = json!("2026-11-24T00:00:00Z");
        assert_eq!(create.landed(None, Some(&made)), Landed::Applied);
        made["metadata"]["finalizers"] = json!(["f"]);
        assert_eq!(create.landed(None, Some(&made)), Landed::ChangedBySomeoneElse);
    }

    #[test]
    fn a_status_patch_inverse_touches_only_the_status() {
        let before = json!({"metadata": {"resourceVersion": "3"}, "spec": {"x": 1}, "status": {"canaryStatus": {"currentStepState": "StepPaused"}}});
        let patch = json!({"status": {"canaryStatus": {"currentStepState": "StepReady"}}});
        let change =
            Change::MergePatch { key: key(), subresource: Some("status"), before: before.clone().into(), patch };
        let mut written = Value::clone(&change.after().unwrap());
        written["metadata"]["resourceVersion"] = json!("4");
        let Some(Change::MergePatch { patch, subresource, .. }) = change.inverse(Some(&written)) else { panic!() };
        assert_eq!(subresource, Some("status"));
        assert_eq!(patch, json!({"status": {"canaryStatus": {"currentStepState": "StepPaused"}}}));
    }

    #[test]
    fn a_fresh_read_tells_whether_a_replace_landed() {
        let change = Change::Replace { key: key(), before: vs("5", 100).into(), after: vs("5", 80).into() };
        assert_eq!(change.landed(None, Some(&vs("6", 80))), Landed::Applied);
        assert_eq!(change.landed(None, Some(&vs("5", 100))), Landed::NotApplied);
        assert_eq!(change.landed(None, Some(&vs("6", 50))), Landed::ChangedBySomeoneElse);
        assert_eq!(change.landed(None, None), Landed::ChangedBySomeoneElse);
    }

    #[test]
    fn a_write_conditional_on_this_runs_own_version_is_judged_by_it() {
        // The original was stored by this run (version 6); the routing write after it was sent
        // at 6, and its reply lost.
        let change = Change::Replace { key: key(), before: vs("5", 100).into(), after: vs("5", 80).into() };
        let seen = vs("6", 100);
        assert_eq!(change.landed(Some(&seen), Some(&vs("6", 100))), Landed::NotApplied);
        assert_eq!(change.landed(Some(&seen), Some(&vs("7", 80))), Landed::Applied);
        assert_eq!(change.landed(Some(&seen), Some(&vs("7", 90))), Landed::ChangedBySomeoneElse);
    }

    #[test]
    fn a_fresh_read_tells_whether_a_patch_create_or_delete_landed() {
        let before = json!({"metadata": {"resourceVersion": "3"}, "status": {"state": "StepPaused"}});
        let patch = json!({"metadata": {"resourceVersion": "3"}, "status": {"state": "StepReady"}});
        let change =
            Change::MergePatch { key: key(), subresource: Some("status"), before: before.clone().into(), patch };
        let ready = json!({"metadata": {"resourceVersion": "4"}, "status": {"state": "StepReady"}});
        assert_eq!(change.landed(None, Some(&ready)), Landed::Applied);
        assert_eq!(change.landed(None, Some(&before)), Landed::NotApplied);
        let moved = json!({"metadata": {"resourceVersion": "9"}, "status": {"state": "StepUpgrade"}});
        assert_eq!(change.landed(None, Some(&moved)), Landed::ChangedBySomeoneElse);

        let object = json!({"kind": "Ingress", "metadata": {"name": "c"}, "spec": {"a": 1}});
        let create = Change::Create { key: key(), object: object.clone().into() };
        assert_eq!(create.landed(None, None), Landed::NotApplied);
        assert_eq!(create.landed(None, Some(&object)), Landed::Applied);
        assert_eq!(
            create.landed(None, Some(&json!({"kind": "Ingress", "spec": {"a": 2}}))),
            Landed::ChangedBySomeoneElse
        );

        let delete = Change::Delete { key: key(), before: vs("5", 100).into() };
        assert_eq!(delete.landed(None, None), Landed::Applied);
        assert_eq!(delete.landed(None, Some(&vs("5", 100))), Landed::NotApplied);
        assert_eq!(delete.landed(None, Some(&vs("6", 100))), Landed::ChangedBySomeoneElse);
        let mut remade = vs("9", 100);
        remade["metadata"]["uid"] = json!("u-2");
        assert_eq!(delete.landed(None, Some(&remade)), Landed::MadeAgain, "deleted, then made again by someone");
    }

    #[test]
    fn a_lost_approval_landed_when_the_rollout_moved_on_with_the_same_spec() {
        let rollout = |version: &str, generation: i64, index: i64, state: &str| {
            json!({"metadata": {"resourceVersion": version, "generation": generation},
                   "status": {"phase": "Progressing", "canaryStatus": {"currentStepIndex": index, "currentStepState": state}}})
        };
        let approval = Change::MergePatch {
            key: key(),
            subresource: Some("status"),
            before: rollout("5", 3, 2, "StepPaused").into(),
            patch: json!({"metadata": {"resourceVersion": "5"},
                          "status": {"canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepReady"}}}),
        };
        let landed = |fresh: Value| approval.landed(None, Some(&fresh));
        assert_eq!(landed(rollout("5", 3, 2, "StepPaused")), Landed::NotApplied);
        // Only its message changed: sent conditional on version 5, the approval can no longer
        // land (a red-team trial: it was said that it still may).
        assert_eq!(landed(rollout("6", 3, 2, "StepPaused")), Landed::Outdated, "only its message changed");
        assert_eq!(landed(rollout("6", 3, 2, "StepReady")), Landed::Applied);
        assert_eq!(landed(rollout("7", 3, 3, "StepUpgrade")), Landed::MovedOn, "the controller took it on");
        assert_eq!(landed(rollout("7", 3, 2, "Completed")), Landed::MovedOn, "the last step");
        let over = json!({"metadata": {"resourceVersion": "9", "generation": 3}, "status": {"phase": "Healthy"}});
        assert_eq!(landed(over), Landed::MovedOn, "the release is over");
        assert_eq!(landed(rollout("7", 4, 3, "StepUpgrade")), Landed::ChangedBySomeoneElse, "a new spec");
        assert_eq!(landed(rollout("7", 3, 1, "StepPaused")), Landed::ChangedBySomeoneElse, "sent back a step");
        // A new version pushed meanwhile, its release approved at the same step by someone else.
        let mut pushed = rollout("7", 3, 2, "StepReady");
        pushed["status"]["canaryStatus"]["podTemplateHash"] = json!("new");
        assert_eq!(landed(pushed), Landed::ChangedBySomeoneElse, "another release");
        assert_eq!(approval.landed(None, None), Landed::ChangedBySomeoneElse, "deleted");
        // Deleted and made again, waiting at the same step with the same generation: a new
        // Rollout, which this approval (conditional on the old one's version) never reaches.
        let mut made_again = rollout("8", 3, 2, "StepPaused");
        made_again["metadata"]["uid"] = json!("u-2");
        assert_eq!(landed(made_again), Landed::ChangedBySomeoneElse, "made again");
    }

    #[test]
    fn a_conflict_matters_only_when_someone_changed_what_the_change_is_about() {
        let replace = Change::Replace { key: key(), before: vs("5", 100).into(), after: vs("5", 80).into() };
        let mut relabelled = vs("6", 100);
        relabelled["metadata"]["managedFields"] = json!([{"manager": "kubectl"}]);
        assert!(!replace.someone_else_changed(&vs("5", 100), &relabelled), "bookkeeping only");
        assert!(replace.someone_else_changed(&vs("5", 100), &vs("6", 90)), "another spec");

        let rollout = |version: &str, index: i64, state: &str, message: &str| {
            json!({"metadata": {"resourceVersion": version, "generation": 3},
                   "status": {"canaryStatus": {"currentStepIndex": index, "currentStepState": state, "message": message}}})
        };
        let approval = Change::MergePatch {
            key: key(),
            subresource: Some("status"),
            before: rollout("5", 2, "StepPaused", "a").into(),
            patch: json!({"metadata": {"resourceVersion": "5"}, "status": {"canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepReady"}}}),
        };
        let seen = rollout("5", 2, "StepPaused", "a");
        assert!(
            !approval.someone_else_changed(&seen, &rollout("6", 2, "StepPaused", "b")),
            "a message is not the step"
        );
        assert!(approval.someone_else_changed(&seen, &rollout("6", 2, "StepReady", "a")), "approved by someone else");
        assert!(approval.someone_else_changed(&seen, &rollout("6", 3, "StepPaused", "a")), "another step");
        let mut edited = seen.clone();
        edited["metadata"]["generation"] = json!(4);
        assert!(approval.someone_else_changed(&seen, &edited), "a new spec");
        // A new version pushed meanwhile, its release back at the same step and paused: not the
        // release this run approves.
        for release in ["podTemplateHash", "canaryRevision"] {
            let mut pushed = rollout("7", 2, "StepPaused", "a");
            pushed["status"]["canaryStatus"][release] = json!("new");
            assert!(approval.someone_else_changed(&seen, &pushed), "a new release ({release})");
        }
        // A multi-step trial: a release that began to end meanwhile was approved again.
        for (field, value) in [("phase", json!("Disabling")), ("phase", json!("Terminating"))] {
            let mut ending = rollout("8", 2, "StepPaused", "a");
            ending["status"][field] = value;
            assert!(approval.someone_else_changed(&seen, &ending), "{ending}");
        }
        for reason in ["Cancelling", "Completed"] {
            let mut ending = rollout("8", 2, "StepPaused", "a");
            ending["status"]["conditions"] = json!([{"type": "Progressing", "status": "True", "reason": reason}]);
            assert!(approval.someone_else_changed(&seen, &ending), "{reason}");
        }
        // A red-team trial: a jump patched meanwhile (`rollout undo --fast`) was approved over.
        let mut jumped = rollout("8", 2, "StepPaused", "a");
        jumped["status"]["canaryStatus"]["nextStepIndex"] = json!(1);
        assert!(approval.someone_else_changed(&seen, &jumped), "a jump");
        let mut other_sub_status = rollout("7", 2, "StepPaused", "a");
        other_sub_status["status"]["blueGreenStatus"] = json!({"updatedRevision": "new"});
        assert!(!approval.someone_else_changed(&seen, &other_sub_status), "not the sub-status it approves");
        let create = Change::Create { key: key(), object: vs("1", 1).into() };
        assert!(create.someone_else_changed(&Value::Null, &vs("1", 1)));
        // Deleted and made again, the same: another object, not this run's to write over.
        let mut made_again = vs("9", 100);
        made_again["metadata"]["uid"] = json!("u-2");
        assert!(replace.someone_else_changed(&vs("5", 100), &made_again));
        let delete = Change::Delete { key: key(), before: vs("5", 100).into() };
        assert!(delete.someone_else_changed(&vs("5", 100), &made_again));
        let mut finalized = vs("6", 100);
        finalized["metadata"]["finalizers"] = json!(["f"]);
        assert!(!delete.someone_else_changed(&vs("5", 100), &finalized), "not what a delete is about");
    }

    #[test]
    fn a_rebased_replace_keeps_what_someone_else_changed_besides_the_routing() {
        let change = Change::Replace { key: key(), before: vs("5", 100).into(), after: vs("5", 80).into() };
        let mut fresh = vs("6", 100);
        fresh["metadata"]["finalizers"] = json!(["keep"]);
        let Change::Replace { before, after, .. } = change.rebased(&fresh) else { panic!() };
        assert_eq!(*before, fresh);
        assert_eq!(after["metadata"]["finalizers"], json!(["keep"]));
        assert_eq!(after["spec"], vs("5", 80)["spec"]);
        assert_eq!(after["metadata"]["resourceVersion"], "6");
    }

    #[test]
    fn a_change_needs_the_verbs_that_send_and_undo_it() {
        let object = vs("5", 100);
        assert_eq!(Change::Create { key: key(), object: object.clone().into() }.verbs(), ["create", "delete"]);
        assert_eq!(Change::Delete { key: key(), before: object.clone().into() }.verbs(), ["create", "delete"]);
        assert_eq!(
            Change::Replace { key: key(), before: object.clone().into(), after: object.clone().into() }.verbs(),
            ["update"]
        );
        let status = Change::MergePatch {
            key: key(),
            subresource: Some("status"),
            before: object.clone().into(),
            patch: json!({}),
        };
        assert_eq!((status.verbs(), status.subresource()), (&["patch"][..], Some("status")));
        assert!(Change::Keep { key: key(), object: object.into() }.verbs().is_empty());
    }

    #[test]
    fn keep_writes_nothing() {
        let keep = Change::Keep { key: key(), object: vs("5", 100).into() };
        assert!(!keep.writes());
        assert_eq!(keep.request(None), None);
        assert_eq!(keep.inverse(Some(&vs("5", 100))), None);
        assert_eq!(keep.action(), "keep");
    }

    #[test]
    fn merge_patches_follow_rfc_7386() {
        let target = json!({"a": {"b": 1, "c": [1, 2]}, "d": 1});
        let patch = json!({"a": {"b": null, "c": [3]}, "e": {"f": 1}});
        assert_eq!(merge_patch(&target, &patch), json!({"a": {"c": [3]}, "d": 1, "e": {"f": 1}}));
    }
}
