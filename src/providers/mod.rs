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
use crate::error::Error;
use crate::lua::{Limits, Printed};
use crate::model::{ObjectIndex, ObjectKey, ObjectRef, Owner, Routing, RoutingAction};
use crate::scripts::ResolvedScript;
use serde_json::Value;
use std::sync::{Arc, OnceLock};

/// What planning an object needs besides the objects: the owner's routing, what the controller
/// does at the stage, the stage's label, the limits, where what scripts print goes, and whether
/// to keep a custom ref's obj.
pub struct Context<'a> {
    pub routing: &'a Routing,
    pub action: &'a RoutingAction,
    /// The stage's label, for messages.
    pub stage: &'a str,
    pub limits: &'a Limits,
    pub printed: &'a Printed,
    /// Whether a custom ref's plan keeps its script's input (`ObjectPlan::obj`).
    pub keep_obj: bool,
}

/// The gateway object `key` a stage starts from (`found`; `where_` says who routes through it).
/// Missing at a stage the controller leaves alone, where it reads nothing and so misses nothing,
/// it is null, with a warning; missing elsewhere it is an error, which names another namespace
/// holding one of its kind and name (among files, most often a manifest without a namespace).
fn starting_object(
    found: Option<&Arc<Value>>,
    action: &RoutingAction,
    key: &ObjectKey,
    objects: &ObjectIndex,
    where_: &str,
) -> Result<(Arc<Value>, Option<String>), Error> {
    let namespace = &key.namespace;
    match (found, action) {
        (Some(object), _) => Ok((Arc::clone(object), None)),
        (None, RoutingAction::Leave) => Ok((
            Arc::new(Value::Null),
            Some(format!(
                "{key}: there is no such object in namespace {namespace}: the controller writes nothing here, but a step that routes it fails"
            )),
        )),
        (None, _) => {
            let elsewhere = match objects.namespaces_elsewhere(key).next() {
                Some(other) => format!(
                    " (one was read in namespace {other}: a manifest without metadata.namespace is put in -n's namespace, else in default)"
                ),
                None => String::new(),
            };
            Err(Error::Input(format!("{where_}, but there is no such object in namespace {namespace}{elsewhere}")))
        }
    }
}

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
    /// Gateway API: the controller rewrites the HTTPRoute's rules in Go (said how: weight mode
    /// or match mode).
    Rules(String),
    /// Gateway API, no traffic and no matches: the controller's restore of the HTTPRoute's
    /// rules (said how).
    RestoreRules(String),
    /// The controller writes nothing to the object: left alone, for this reason.
    Keep(&'static str),
}

#[derive(Clone, Debug)]
pub struct ObjectPlan {
    pub reference: ObjectRef,
    pub key: ObjectKey,
    /// Whose routing plans it: a Rollout's own, or the TrafficRouting's it names.
    pub owner: Owner,
    /// The object as it is (null: it does not exist, a canary Ingress not made yet), shared
    /// with the objects read (or the plan of the stage before) and with `changes`.
    pub current: Arc<Value>,
    /// The object as the controller leaves it at the stage (null: there is none), shared with
    /// `changes`.
    pub planned: Arc<Value>,
    pub action: Action,
    /// The script's input (`obj`), when a script runs; a custom ref's only when the planner keeps
    /// them (`Planner::keeping_objs`).
    pub obj: Option<Arc<Value>>,
    pub warnings: Vec<String>,
    /// Why this tool must not write `planned` although the controller would (it works from a
    /// stored original that does not decode, and the result loses the original).
    pub unwritable: Option<String>,
    /// The stored original, when it decodes but holds nothing (no spec, or an empty one):
    /// writing from it wipes the object, so `approve` and `restore` refuse it without `--force`.
    pub degenerate_original: Option<String>,
    /// A canary Ingress as read that this owner did not make (someone else's Ingress of that
    /// name), said why: `approve` refuses to write it without `--force`.
    pub foreign_canary: Option<String>,
    /// A write that leaves the stable Service without a rule (an HTTPRoute's, said why):
    /// `approve` refuses it without `--force`, as the requests it served get no route.
    pub strands_stable: Option<String>,
    /// What `status` says of the object besides its position: a canary Ingress whose spec is not
    /// the one the stable Ingress makes now (a warning too), or whose ALB order another Ingress of
    /// its class has (the plan warns of the planned canary's order instead).
    pub notes: Vec<String>,
    /// The writes from `current` to `planned`, in order (one `Keep` when there are none).
    pub changes: Vec<Change>,
    /// Whether `current` shows no sign of a release (what `status` calls `original`, or
    /// `absent`): a custom ref without a stored original, an HTTPRoute without a backendRef to
    /// the canary Service, a canary Ingress that does not exist (`current` is null).
    pub untouched: bool,
    /// The stage whose result `current` is, when the plan starts from where an earlier stage
    /// left the object (an HTTPRoute's rules and a canary Ingress's annotations carry over);
    /// None: the object as read.
    pub after: Option<String>,
    /// Made `Changed::default()`: see [`ObjectPlan::changed`].
    pub changed: Changed,
}

/// Whether an object plan's `planned` routes differently from its `current`: asked for by
/// every rendering and count, and comparing encodes both specs, so it is worked out once, when
/// first asked (nothing changes `current` or `planned` once the plan is made).
#[derive(Clone, Debug, Default)]
pub struct Changed(OnceLock<bool>);

impl ObjectPlan {
    /// `VirtualService shop/demo`.
    pub fn describe(&self) -> String {
        self.key.to_string()
    }

    pub fn changed(&self) -> bool {
        *self.changed.0.get_or_init(|| !data::same_routing(&self.current, &self.planned))
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
