//! Providers: each turns (routing, what the controller does at a stage, the live objects) into
//! an `ObjectPlan` per object: the object the controller would write, the writes that get it
//! there (`change::Change`), and warnings. The controller runs them in a fixed order (custom
//! refs, then ingress, then gateway) and the first error stops it; `plan::Planner` calls them
//! so.

pub mod case;
pub mod custom;
pub mod gateway;
pub mod ingress;

use crate::change::Change;
use crate::data;
use crate::lua::Limits;
use crate::model::{ObjectKey, ObjectRef, Routing, RoutingAction};
use crate::scripts::ResolvedScript;
use serde_json::Value;
use std::collections::BTreeMap;

/// What planning an object needs besides the objects: the owner's routing, what the controller
/// does at the stage, the stage's label and the limits.
pub struct Context<'a> {
    pub routing: &'a Routing,
    pub action: &'a RoutingAction,
    /// The stage's label, for messages.
    pub stage: &'a str,
    pub limits: &'a Limits,
}

/// Objects as the stages planned so far leave them, for a provider whose next stage starts
/// from there (the controller runs an Ingress script on the canary Ingress's current
/// annotations, so what one step leaves the next one reads): the label of the stage that left
/// it, and the object (`None`: deleted, or not made).
pub type Carried = BTreeMap<ObjectKey, (String, Option<Value>)>;

/// What the controller does to an object at a stage.
#[derive(Clone, Debug)]
pub enum Action {
    /// Runs the script and writes its result.
    Lua(ResolvedScript),
    /// No traffic and no matches: restores the stored original (the annotation goes away).
    Restore,
    /// No traffic and no matches: the controller's finalise deletes the object (a canary
    /// Ingress).
    Delete,
    /// The controller writes nothing to the object: left alone, for this reason.
    Keep(&'static str),
}

#[derive(Clone, Debug)]
pub struct ObjectPlan {
    pub reference: ObjectRef,
    pub key: ObjectKey,
    pub namespace: String,
    /// The object as it is (null: it does not exist, a canary Ingress not made yet).
    pub current: Value,
    /// The stage `current` comes from, when it is not the object as read but as an earlier
    /// stage of the plan leaves it (the canary Ingress of a plan of several stages).
    pub after: Option<String>,
    /// The object as the controller leaves it at the stage (null: there is none).
    pub planned: Value,
    pub action: Action,
    /// The script's input (`obj`), when a script runs.
    pub obj: Option<Value>,
    pub warnings: Vec<String>,
    /// Why this tool must not write `planned` although the controller would (it works from a
    /// stored original that does not decode, and the result loses the original).
    pub unwritable: Option<String>,
    /// The stored original, when it decodes but holds nothing (no spec, or an empty one):
    /// writing from it wipes the object, so `approve` and `restore` refuse it without `--force`.
    pub degenerate_original: Option<String>,
    /// The writes from `current` to `planned`, in order (one `Keep` when there are none).
    pub changes: Vec<Change>,
    /// Whether `current` is the object as it is outside a release: a custom ref without a
    /// stored original, a canary Ingress that does not exist (`current` is null).
    pub before_release: bool,
    /// Whether `planned` routes differently from `current`: asked for by every rendering and
    /// count, and comparing encodes both specs, so it is worked out once, where the plan is made
    /// (nothing changes `current` or `planned` afterwards).
    changed: bool,
}

/// What an `ObjectPlan` is made of, as a provider works it out.
pub struct Planned {
    pub reference: ObjectRef,
    pub key: ObjectKey,
    pub current: Value,
    pub after: Option<String>,
    pub planned: Value,
    pub action: Action,
    pub obj: Option<Value>,
    pub warnings: Vec<String>,
    pub unwritable: Option<String>,
    pub degenerate_original: Option<String>,
    pub changes: Vec<Change>,
    pub before_release: bool,
}

impl ObjectPlan {
    pub fn new(planned: Planned) -> ObjectPlan {
        ObjectPlan {
            namespace: planned.key.namespace.clone(),
            changed: !data::same_routing(&planned.current, &planned.planned),
            reference: planned.reference,
            key: planned.key,
            current: planned.current,
            after: planned.after,
            planned: planned.planned,
            action: planned.action,
            obj: planned.obj,
            warnings: planned.warnings,
            unwritable: planned.unwritable,
            degenerate_original: planned.degenerate_original,
            changes: planned.changes,
            before_release: planned.before_release,
        }
    }

    /// `VirtualService shop/demo`.
    pub fn describe(&self) -> String {
        self.key.to_string()
    }

    pub fn changed(&self) -> bool {
        self.changed
    }

    /// The `action` of `plan -o json`: the first write's (`create`, `replace`, `patch`,
    /// `delete`), or `keep`.
    pub fn action_name(&self) -> &'static str {
        self.writes().next().map_or("keep", Change::action)
    }

    /// The changes that write something.
    pub fn writes(&self) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(|c| c.writes())
    }
}
