//! Everything a plan needs, read from files or from the cluster: Rollouts, TrafficRoutings,
//! gateway objects, and the controller's script ConfigMap.

use crate::error::Error;
use crate::lua::WrittenAt;
use crate::model::{
    FieldMessage, INGRESS_API_VERSION, ModelError, ObjectIndex, ObjectKey, Path, Provider, Rollout, Routing,
    TrafficRoutingCr, http_route,
};
use crate::scripts::{self, CONFIGMAP_NAME, ConfigMapScripts, ScriptKey};
use crate::yaml::{Document, DocumentText};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Where an object came from, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A document of a file (or stdin, or `kubectl kustomize`'s output): `file.yaml:12`, and for
    /// a Rollout or TrafficRouting its text (`keeps_text`), where its fields' lines are found.
    File { place: String, text: Option<Box<DocumentText>> },
    /// The cluster resource: `rollout.rollouts.kruise.io/NAME`.
    Cluster(String),
}

impl Origin {
    pub fn of(source: &str, document: &Document) -> Origin {
        Origin::File { place: document.place(source), text: document.text.clone() }
    }

    /// Where `field` is written (`file.yaml:14`); for a field the text does not have (a default,
    /// a field the conversion from v1alpha1 adds), where the nearest field around it is; where
    /// the object is when not even that can be told, or for an object read from the cluster.
    pub fn place_of(&self, field: &Path) -> String {
        match self {
            Origin::File { text: Some(text), .. } => text.place_of(field),
            _ => None,
        }
        .unwrap_or_else(|| self.to_string())
    }

    /// `message`, led by where its field is (`file.yaml:14: …`) for an object read from a file,
    /// as it is for one read from the cluster.
    pub fn locate(&self, message: FieldMessage) -> FieldMessage {
        match self {
            Origin::File { .. } => {
                let place = self.place_of(&message.field);
                message.at(&place)
            }
            Origin::Cluster(_) => message,
        }
    }

    /// Where each string of the map at `map` is written, by key, for an object read from a file
    /// that kept its text.
    pub fn strings_written(&self, map: &Path) -> BTreeMap<String, WrittenAt> {
        let Origin::File { text: Some(text), .. } = self else { return BTreeMap::new() };
        let file = text.source();
        let written = |lines: crate::yaml::StringLines| {
            let at = WrittenAt { file: file.to_string(), key_line: lines.key_line, first_line: lines.first_line };
            (lines.key, at)
        };
        text.strings_lines(map).into_iter().map(written).collect()
    }

    /// A warning for each field of `object` (a Rollout or TrafficRouting) its CRD does not
    /// define, led by its line: the API server would drop it (`plan -f --validate`, `test`).
    pub fn unknown_fields(&self, object: &Value) -> Vec<FieldMessage> {
        crate::schema::unknown_fields(object)
            .into_iter()
            .map(|field| {
                let message =
                    format!("unknown field \"{}\": not in the CRD, so the API server drops it (misspelt?)", field.path);
                let at = self.place_of(&field.path);
                FieldMessage::new(field.path, message).at(&at)
            })
            .collect()
    }

    /// `what` (`Rollout ns/name`) cannot be read: `file.yaml:14: what: error`, with the unknown
    /// fields of `object`, which a misspelt field often explains.
    pub fn invalid(&self, what: &str, error: &ModelError, object: &Value) -> String {
        format!("{}: {what}: {error}{}", self.place_of(&error.0.field), self.unknown_fields_note(object))
    }

    /// The unknown fields of `object`, for an error they may explain (a misspelt `stepz:` leaves
    /// `steps` missing): ` (file.yaml:12: unknown field spec.strategy.canary.stepz: did you mean
    /// steps?)`, or nothing when every field is known.
    pub fn unknown_fields_note(&self, object: &Value) -> String {
        let fields: Vec<String> = crate::schema::unknown_fields(object)
            .into_iter()
            .map(|field| self.locate(FieldMessage::new(field.path.clone(), field.to_string())).text)
            .collect();
        if fields.is_empty() { String::new() } else { format!(" ({})", fields.join("; ")) }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::File { place, .. } | Origin::Cluster(place) => f.write_str(place),
        }
    }
}

/// Whether a document read from a file keeps its text (`yaml::parse_documents_keeping`): a
/// Rollout's or TrafficRouting's, or a test case's holding one, whose fields messages name, and
/// the script ConfigMap's, whose scripts' errors name their lines. Other documents, gateway
/// objects of megabytes among them, keep none.
pub fn keeps_text(value: &Value) -> bool {
    let (group, kind) = (crate::model::api_group(value["apiVersion"].as_str().unwrap_or_default()), &value["kind"]);
    (group == "rollouts.kruise.io" && (kind == "Rollout" || kind == "TrafficRouting"))
        || (group.is_empty() && kind == "ConfigMap" && value["metadata"]["name"] == CONFIGMAP_NAME)
        || is_test_case(value)
}

/// Whether a document is a test case (of a script, an Ingress class or an HTTPRoute), not an
/// object.
pub fn is_test_case(value: &Value) -> bool {
    test_case_subject(value).is_some()
}

/// Refuses a document whose own namespace is not `namespace` (given with `-n`), as kubectl
/// does: the file's namespace is neither replaced nor kept without a word.
pub fn check_namespace(documents: &[(String, Document)], namespace: &str) -> Result<(), Error> {
    for (source, document) in documents {
        if let Some(own) = document.value["metadata"]["namespace"].as_str()
            && own != namespace
        {
            return Err(Error::Input(format!(
                "{}: the namespace from the provided object \"{own}\" does not match the namespace \"{namespace}\": pass -n {own}, or leave -n out",
                Origin::of(source, document).place_of(&Path::root("metadata").field("namespace"))
            )));
        }
    }
    Ok(())
}

/// The key of a test case's subject (`rollout` or `trafficRouting`) and its original object;
/// `None` for a document that is not a test case (an object has a `kind`).
fn test_case_subject(value: &Value) -> Option<(&'static str, &Value)> {
    if !value["kind"].is_null() {
        return None;
    }
    let subject = ["rollout", "trafficRouting"].into_iter().find(|key| value.get(key).is_some_and(Value::is_object))?;
    Some((subject, value.get("original").filter(|v| v.is_object())?))
}

/// A test-case document becomes its subject and its original object (and an Ingress case's
/// canary Ingress, when it has one); others stay as they are.
fn expand_test_case((source, document): (String, Document)) -> Vec<(String, Document)> {
    let Some((subject_key, original)) = test_case_subject(&document.value) else {
        return vec![(source, document)];
    };
    // Its subject as go test decodes it (as `test` reads it): keys folded, a number or boolean
    // taken as a string field's text.
    let (mut decoded, _) =
        crate::schema::as_go_test_decodes(&serde_json::json!({ subject_key: &document.value[subject_key] }));
    let subject = &decoded[subject_key].take();
    // `test` reads an Ingress case's objects as Ingresses whatever they say: they may leave out
    // apiVersion and kind. (A subject that does not read is said so where it is planned.)
    let routing = match subject_key {
        "rollout" => Rollout::from_object(subject).ok().and_then(|rollout| rollout.traffic_routing),
        _ => TrafficRoutingCr::from_object(subject).ok().map(|cr| cr.traffic_routing),
    };
    let ingress = routing.is_some_and(|routing| routing.ingress.is_some());
    let as_read = |object: &Value| {
        let mut object = object.clone();
        if let Some(map) = object.as_object_mut().filter(|_| ingress) {
            map.entry("apiVersion").or_insert_with(|| INGRESS_API_VERSION.into());
            map.entry("kind").or_insert_with(|| "Ingress".into());
        }
        Document { value: object, text: None, ..document.clone() }
    };
    let canary = document.value.get("canary").filter(|canary| ingress && canary.is_object());
    let subject = Document {
        value: subject.clone(),
        text: document.text.as_ref().map(|text| Box::new(text.inside(subject_key))),
        ..document.clone()
    };
    [subject, as_read(original)].into_iter().chain(canary.map(as_read)).map(|d| (source.clone(), d)).collect()
}

/// What keeps a document from being a Kubernetes object (`no apiVersion or kind`), if anything.
fn missing_identity(value: &Value) -> Option<String> {
    if !value.is_object() {
        return Some("not a map".into());
    }
    let fields =
        [("apiVersion", &value["apiVersion"]), ("kind", &value["kind"]), ("metadata.name", &value["metadata"]["name"])];
    let missing: Vec<&str> =
        fields.iter().filter(|(_, v)| v.is_null() || v.as_str() == Some("")).map(|(field, _)| *field).collect();
    let missing = match missing.as_slice() {
        [] => None,
        [one] => Some(format!("no {one}")),
        [first @ .., last] => Some(format!("no {} or {last}", first.join(", "))),
    };
    // One given as a list or a number is not missing: say what it is.
    let not_strings = fields
        .iter()
        .filter(|(_, v)| !v.is_null() && !v.is_string())
        .map(|(field, v)| format!("a {field} that is {}, not a string", crate::model::json_kind(v)));
    let problems: Vec<String> = missing.into_iter().chain(not_strings).collect();
    (!problems.is_empty()).then(|| problems.join(", and "))
}

/// Why a document that is not a Kubernetes object (`missing` says why) is skipped: one with a
/// name and either an apiVersion or a kind is taken for an object with a mistake in it.
fn skip_reason(value: &Value, missing: String) -> SkipReason {
    fn field(value: &Value) -> Option<&str> {
        value.as_str().filter(|text| !text.is_empty())
    }
    let (api_version, kind) = (field(&value["apiVersion"]), field(&value["kind"]));
    match (field(&value["metadata"]["name"]), api_version, kind) {
        (Some(name), None, Some(kind)) => SkipReason::Incomplete { object: format!("{kind} {name}"), missing },
        (Some(name), Some(api_version), None) => {
            SkipReason::Incomplete { object: format!("{name} ({api_version})"), missing }
        }
        _ => SkipReason::NotAnObject(missing),
    }
}

/// A warning for each skipped document that looks like an object with a mistake in it: its
/// apiVersion or kind left out, or a Rollout of another API group. Said whether or not -v is
/// given: kubectl refuses the first where this tool only skips it, and a Rollout (or a ref to
/// it) that is not read would otherwise go unsaid.
pub fn mistaken_objects(skipped: &[Skipped]) -> Vec<String> {
    skipped
        .iter()
        .filter_map(|entry| match &entry.reason {
            SkipReason::Incomplete { missing, object } => Some(format!(
                "skipped {}: {object} has {missing}, so it is not read as an object (kubectl refuses it)",
                entry.origin
            )),
            SkipReason::OtherGroup { object, api_version, served } => Some(format!(
                "skipped {}: {object} has apiVersion {api_version}, not rollouts.kruise.io/{served}, so it is not read as OpenKruise's",
                entry.origin
            )),
            _ => None,
        })
        .collect()
}

/// An object's labels and annotations as the API server stores them, which decodes them into Go
/// maps of strings: a null value becomes `""`, and any other value that is not a string is
/// refused (an unquoted `8` or `true` in a file).
fn string_maps_as_stored(object: &mut Value) -> Result<(), ModelError> {
    for field in ["labels", "annotations"] {
        let at = Path::root("metadata").field(field);
        let Some(map) = object.get_mut("metadata").and_then(|m| m.get_mut(field)).filter(|m| !m.is_null()) else {
            continue;
        };
        let entries = map.as_object_mut().ok_or_else(|| at.error("must be a map of strings"))?;
        for (key, value) in entries {
            match value {
                Value::String(_) => {}
                Value::Null => *value = Value::String(String::new()),
                _ => {
                    return Err(at.field(key).error(&format!(
                        "must be a string, not {} ({value}): the API server refuses the object; quote the value",
                        crate::model::json_kind(value)
                    )));
                }
            }
        }
    }
    Ok(())
}

fn identity(value: &Value, namespace: &str) -> Identity {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (
        crate::model::api_group(value["apiVersion"].as_str().unwrap_or_default()).to_string(),
        text(&value["kind"]),
        namespace.to_string(),
        text(&value["metadata"]["name"]),
    )
}

/// One line per file for the skipped documents (shown with -v), in the order the files were read:
/// `skipped m/values.yaml:1: not a Kubernetes object (no apiVersion, kind or metadata.name)`,
/// `skipped m/all.yaml: 2 Deployment, 1 Service (kinds no Rollout or TrafficRouting … routes through)`.
pub fn skipped_lines(skipped: &[Skipped]) -> Vec<String> {
    let mut files: Vec<(&str, Vec<&Skipped>)> = Vec::new();
    for entry in skipped {
        match files.iter_mut().find(|(source, _)| *source == entry.source) {
            Some((_, entries)) => entries.push(entry),
            None => files.push((&entry.source, vec![entry])),
        }
    }
    files.into_iter().map(|(source, entries)| format!("skipped {}", skipped_in(source, &entries))).collect()
}

fn skipped_in(source: &str, entries: &[&Skipped]) -> String {
    let not_objects: Vec<(&Origin, &str)> = entries
        .iter()
        .filter_map(|e| match &e.reason {
            SkipReason::NotAnObject(missing) | SkipReason::Incomplete { missing, .. } => {
                Some((&e.origin, missing.as_str()))
            }
            SkipReason::Unused { .. } | SkipReason::OtherGroup { .. } => None,
        })
        .collect();
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for entry in entries {
        if let SkipReason::Unused { kind } = &entry.reason {
            match kinds.iter_mut().find(|(k, _)| k == kind) {
                Some((_, count)) => *count += 1,
                None => kinds.push((kind, 1)),
            }
        }
    }
    let other_groups: Vec<String> = entries
        .iter()
        .filter_map(|e| match &e.reason {
            SkipReason::OtherGroup { object, api_version, .. } => {
                Some(format!("{object} ({}: {api_version}, not OpenKruise's)", e.origin))
            }
            _ => None,
        })
        .collect();
    if let ([(origin, missing)], [], []) = (not_objects.as_slice(), kinds.as_slice(), other_groups.as_slice()) {
        return format!("{origin}: not a Kubernetes object ({missing})");
    }
    let mut parts = other_groups;
    if !kinds.is_empty() {
        let counted: Vec<String> = kinds.iter().map(|(kind, count)| format!("{count} {kind}")).collect();
        let these = if kinds.len() == 1 { "a kind" } else { "kinds" };
        parts
            .push(format!("{} ({these} no Rollout or TrafficRouting in the input routes through)", counted.join(", ")));
    }
    match not_objects.as_slice() {
        [] => {}
        [(origin, missing)] => parts.push(format!("1 document that is not a Kubernetes object ({origin}: {missing})")),
        [(origin, missing), ..] => parts.push(format!(
            "{} documents that are not Kubernetes objects (the first, {origin}: {missing})",
            not_objects.len()
        )),
    }
    format!("{source}: {}", parts.join("; "))
}

#[derive(Clone, Debug)]
pub struct Located<T> {
    pub origin: Origin,
    pub namespace: String,
    pub item: T,
    /// The object as read.
    pub raw: Value,
}

impl Located<Rollout> {
    /// Why the API server would not store this Rollout (None: it would), as `plan -f`'s error:
    /// what its schema validation refuses, then what the controller's webhook refuses (asked
    /// only once the schema passes), then the fields it would drop, as a misspelt one is often
    /// why a required one is missing. A dropped field the Rollout's warnings say more about is
    /// named by that warning.
    pub fn refusal(&self) -> Option<String> {
        let rejections = &self.item.rejections;
        if rejections.is_empty() {
            return None;
        }
        let rollout = format!("{}: Rollout {}/{}", self.origin, self.namespace, self.item.name);
        let lines = |messages: &mut dyn Iterator<Item = &FieldMessage>| -> String {
            messages.map(|m| format!("\n  {m}")).collect()
        };
        let mut refusal = match (rejections.schema.is_empty(), rejections.webhook.is_empty()) {
            (true, _) => format!("{rollout} would be rejected by the controller's admission webhook:"),
            (false, webhook_passes) => {
                let mut refusal = format!(
                    "{rollout} would be rejected by the API server's schema validation (the CRD's schema):{}",
                    lines(&mut rejections.schema.iter())
                );
                if !webhook_passes {
                    refusal.push_str("\nand, once that passes, by the controller's admission webhook:");
                }
                refusal
            }
        };
        refusal.push_str(&lines(&mut rejections.webhook.iter()));
        let dropped: Vec<FieldMessage> = self
            .origin
            .unknown_fields(&self.raw)
            .into_iter()
            .map(|unknown| {
                let said = self.item.warnings.iter().find(|w| w.field == unknown.field);
                said.cloned().unwrap_or(unknown)
            })
            .collect();
        if !dropped.is_empty() {
            refusal.push_str(
                "\nand it has fields the API server would drop (a misspelt one may be why a required one is missing):",
            );
            refusal.push_str(&lines(&mut dropped.iter()));
        }
        Some(refusal)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub rollouts: Vec<Located<Rollout>>,
    pub traffic_routings: Vec<Located<TrafficRoutingCr>>,
    pub objects: ObjectIndex,
    pub configmap: Option<ConfigMapScripts>,
}

/// A document read from files that is not in the snapshot, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub source: String,
    pub origin: Origin,
    pub reason: SkipReason,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// Not an object the API server would take: what is missing (`no apiVersion or kind`).
    NotAnObject(String),
    /// An object but for its apiVersion or its kind (`missing`), most likely a mistake in it:
    /// `object` says which (`VirtualService echoserver`).
    Incomplete { missing: String, object: String },
    /// An object of a kind no Rollout or TrafficRouting in the input routes through.
    Unused { kind: String },
    /// A Rollout or TrafficRouting of another API group than OpenKruise's (`rollout.kruise.io`
    /// misspelt, or Argo Rollouts' `argoproj.io`): `object` says which (`Rollout echoserver`),
    /// `served` the versions OpenKruise serves its kind at.
    OtherGroup { object: String, api_version: String, served: &'static str },
}

/// (group, kind, namespace, name): one object however many copies and versions are read.
type Identity = (String, String, String, String);

/// For each document read, the object's first copy when the document repeats one: its origin
/// and whether the two are the same. Worked out over all the documents before they are sorted,
/// so that no copy is kept to compare with (a gateway object can take megabytes).
struct Copies(Vec<Option<(Origin, bool)>>);

impl Copies {
    /// `documents` as (source, origin, namespace, object).
    fn of(documents: &[(String, Origin, String, Value)]) -> Copies {
        let mut firsts: HashMap<Identity, usize> = HashMap::new();
        let repeats = documents
            .iter()
            .enumerate()
            .map(|(i, (_, _, namespace, value))| {
                let first = *firsts.entry(identity(value, namespace)).or_insert(i);
                let (_, origin, _, first_value) = &documents[first];
                (first != i).then(|| (origin.clone(), first_value == value))
            })
            .collect();
        Copies(repeats)
    }

    /// Whether document `i` is the first copy of its object; a copy that differs from the first
    /// is an error.
    fn first(&self, i: usize, origin: &Origin, identity: &Identity) -> Result<bool, Error> {
        match &self.0[i] {
            None => Ok(true),
            Some((_, true)) => Ok(false),
            Some((first, false)) => {
                let (_, kind, namespace, name) = identity;
                Err(Error::Input(format!(
                    "{origin}: {kind} {namespace}/{name} differs from the copy at {first}; keep one of them"
                )))
            }
        }
    }
}

impl Snapshot {
    /// Sorts documents into Rollouts, TrafficRoutings, the script ConfigMap and gateway objects;
    /// objects without a namespace are in `default_namespace`, as `kubectl apply -f` would put them.
    /// Test cases (`rollout` or `trafficRouting` with `original`, as `record` writes them) count
    /// as their Rollout or TrafficRouting and their gateway object. An object read twice is taken
    /// once; two different copies of one are an error. Documents that are not Kubernetes objects,
    /// and objects of kinds no Rollout or TrafficRouting routes through, are skipped (and listed).
    pub fn from_documents(
        documents: Vec<(String, Document)>,
        default_namespace: &str,
    ) -> Result<(Snapshot, Vec<Skipped>), Error> {
        let mut snapshot = Snapshot::default();
        let mut skipped = Vec::new();
        // Whether each document comes from a test case, whose Rollout go test's harness decodes
        // and the API server never stores.
        let mut from_case = Vec::new();
        let documents: Vec<(String, Origin, String, Value)> = documents
            .into_iter()
            .flat_map(|document| {
                let case = is_test_case(&document.1.value);
                let expanded = expand_test_case(document);
                from_case.extend(std::iter::repeat_n(case, expanded.len()));
                expanded
            })
            .map(|(source, document)| {
                let origin = Origin::of(&source, &document);
                let value = document.value;
                let namespace = value["metadata"]["namespace"].as_str().unwrap_or(default_namespace).to_string();
                (source, origin, namespace, value)
            })
            .collect();
        let copies = Copies::of(&documents);
        // The other objects wait until the kinds the Rollouts and TrafficRoutings use are known.
        let mut others = Vec::new();
        for (i, (source, origin, namespace, value)) in documents.into_iter().enumerate() {
            let kind = value["kind"].as_str().unwrap_or_default();
            let group = crate::model::api_group(value["apiVersion"].as_str().unwrap_or_default());
            // A misspelt field is often why the object does not parse: it is named too.
            let invalid = |e: ModelError| {
                let name = value["metadata"]["name"].as_str().unwrap_or("?");
                Error::Input(origin.invalid(&format!("{kind} {namespace}/{name}"), &e, &value))
            };
            match (group, kind) {
                ("rollouts.kruise.io", "Rollout" | "TrafficRouting")
                    if !copies.first(i, &origin, &identity(&value, &namespace))? => {}
                ("rollouts.kruise.io", "Rollout") => {
                    let mut item = Rollout::from_object(&value).map_err(invalid)?;
                    if !from_case[i] {
                        item.rejections.schema.extend(Rollout::workload_ref_rejections(&value));
                    }
                    item.warnings = item.warnings.into_iter().map(|w| origin.locate(w)).collect();
                    item.rejections = item.rejections.map(|r| origin.locate(r));
                    snapshot.rollouts.push(Located { origin, namespace, item, raw: value });
                }
                ("rollouts.kruise.io", "TrafficRouting") => {
                    let mut item = TrafficRoutingCr::from_object(&value).map_err(invalid)?;
                    item.warnings = item.warnings.into_iter().map(|w| origin.locate(w)).collect();
                    snapshot.traffic_routings.push(Located { origin, namespace, item, raw: value });
                }
                (_, "Rollout" | "TrafficRouting") if value["apiVersion"].as_str().is_some_and(|v| !v.is_empty()) => {
                    let name = value["metadata"]["name"].as_str().filter(|name| !name.is_empty());
                    let object = name.map_or_else(|| kind.to_string(), |name| format!("{kind} {name}"));
                    let api_version = value["apiVersion"].as_str().unwrap_or_default().to_string();
                    // OpenKruise serves TrafficRoutings as v1alpha1 only.
                    let served = if kind == "TrafficRouting" { "v1alpha1" } else { "v1beta1 or v1alpha1" };
                    let reason = SkipReason::OtherGroup { object, api_version, served };
                    skipped.push(Skipped { source, origin, reason });
                }
                _ => match missing_identity(&value) {
                    Some(missing) => skipped.push(Skipped { source, origin, reason: skip_reason(&value, missing) }),
                    None => others.push((i, source, origin, namespace, value)),
                },
            }
        }
        let routed = snapshot.routed_kinds();
        for (i, source, origin, namespace, value) in others {
            let identity = identity(&value, &namespace);
            let (group, kind, _, name) = &identity;
            let script_configmap = group.is_empty() && kind == "ConfigMap" && name == CONFIGMAP_NAME;
            if !script_configmap && !routed.contains(&(group.clone(), kind.clone())) {
                skipped.push(Skipped { source, origin, reason: SkipReason::Unused { kind: kind.clone() } });
                continue;
            }
            if !copies.first(i, &origin, &identity)? {
                continue;
            }
            if script_configmap {
                if let Some(first) = &snapshot.configmap {
                    return Err(Error::Input(format!(
                        "{origin}: a second {CONFIGMAP_NAME} ConfigMap (the first is in namespace {}): keep the one of the controller's namespace",
                        first.namespace
                    )));
                }
                let mut configmap = ConfigMapScripts::from_object(&namespace, &value);
                configmap.written = origin.strings_written(&Path::root("data"));
                snapshot.configmap = Some(configmap);
            } else {
                let mut value = value;
                string_maps_as_stored(&mut value).map_err(|e| {
                    Error::Input(format!("{}: {kind} {namespace}/{name}: {e}", origin.place_of(&e.0.field)))
                })?;
                if (group.as_str(), kind.as_str()) == (http_route::GROUP, http_route::KIND) {
                    http_route::as_stored(&mut value);
                }
                snapshot.objects.insert(&namespace, value);
            }
        }
        Ok((snapshot, skipped))
    }

    /// The routing of every Rollout and TrafficRouting.
    pub fn routings(&self) -> impl Iterator<Item = Routing> + '_ {
        self.rollouts
            .iter()
            .filter_map(|r| Routing::of_rollout(&r.item, &r.namespace))
            .chain(self.traffic_routings.iter().map(|t| Routing::of_traffic_routing(&t.item, &t.namespace)))
    }

    /// For each Rollout (by namespace and name), a warning for each object it routes (itself or
    /// through the TrafficRouting it names) that another Rollout or TrafficRouting of the
    /// snapshot routes too, naming them.
    pub fn shared_objects(&self) -> HashMap<(&str, &str), Vec<String>> {
        // Every routing: who, and what it routes.
        let rollouts = self.rollouts.iter().filter_map(|r| {
            Some((format!("Rollout {}/{}", r.namespace, r.item.name), Routing::of_rollout(&r.item, &r.namespace)?))
        });
        let traffic_routings = self.traffic_routings.iter().map(|cr| {
            (
                format!("TrafficRouting {}/{}", cr.namespace, cr.item.name),
                Routing::of_traffic_routing(&cr.item, &cr.namespace),
            )
        });
        let mut routed_by: BTreeMap<ObjectKey, Vec<String>> = BTreeMap::new();
        let mut routes: HashMap<String, Vec<ObjectKey>> = HashMap::new();
        for (owner, routing) in rollouts.chain(traffic_routings) {
            for key in routing.objects() {
                let by = routed_by.entry(key.clone()).or_default();
                if !by.contains(&owner) {
                    by.push(owner.clone());
                }
                routes.entry(owner.clone()).or_default().push(key);
            }
        }
        let mut warnings = HashMap::new();
        for rollout in &self.rollouts {
            let (name, namespace) = (&rollout.item.name, &rollout.namespace);
            let mut own = vec![format!("Rollout {namespace}/{name}")];
            own.extend(rollout.item.traffic_routing_cr.as_ref().map(|cr| format!("TrafficRouting {namespace}/{cr}")));
            let keys: BTreeSet<&ObjectKey> = own.iter().filter_map(|o| routes.get(o)).flatten().collect();
            let shared = keys.into_iter().filter_map(|key| {
                let others: Vec<&str> = routed_by[key].iter().filter(|o| !own.contains(o)).map(String::as_str).collect();
                (!others.is_empty()).then(|| {
                    format!(
                        "{key} is also routed by {}: the controller reconciles each on its own, so while their releases overlap each rewrites it to its own routing on every pass (none gets past StepTrafficRouting), and the first to finish restores it under the others; route it through one of them only",
                        others.join(" and ")
                    )
                })
            });
            warnings.insert((namespace.as_str(), name.as_str()), shared.collect());
        }
        warnings
    }

    /// (group, kind) of every object a plan reads: what the Rollouts and TrafficRoutings route
    /// through (their custom refs, Ingresses and Gateway API routes) and the Rollouts' workloads
    /// (their replicas decide whether a partition step is routed).
    fn routed_kinds(&self) -> BTreeSet<(String, String)> {
        let workloads = self
            .rollouts
            .iter()
            .filter_map(|r| r.item.workload.as_ref())
            .map(|w| (w.group().to_string(), w.kind.clone()));
        let routed = self.routings().flat_map(|routing| routing.objects()).map(|key| (key.group, key.kind));
        workloads.chain(routed).collect()
    }

    /// The `--script` keys of the gateway objects and Ingress classes the Rollouts and
    /// TrafficRoutings route through.
    pub fn script_keys(&self) -> BTreeSet<ScriptKey> {
        self.routings()
            .flat_map(|routing| routing.providers)
            .flat_map(|provider| match provider {
                Provider::Custom(refs) => refs.iter().map(scripts::key_of).collect(),
                Provider::Ingress { class_type, .. } => vec![scripts::ingress_key(&class_type)],
                Provider::Gateway { .. } => Vec::new(),
            })
            .collect()
    }

    /// The TrafficRouting a Rollout names, or an error naming both when it is missing.
    pub fn traffic_routing_of(&self, rollout: &Located<Rollout>) -> Result<Option<&Located<TrafficRoutingCr>>, Error> {
        let Some(name) = &rollout.item.traffic_routing_cr else { return Ok(None) };
        self.traffic_routings
            .iter()
            .find(|t| &t.item.name == name && t.namespace == rollout.namespace)
            .map(Some)
            .ok_or_else(|| {
                let annotation = crate::model::TRAFFIC_ROUTING_ANNOTATION;
                Error::Input(format!(
                    "{}: Rollout {}/{} names TrafficRouting {name} (annotation {annotation}), which is not in the input",
                    rollout.origin.place_of(&Path::root("metadata").field("annotations").field(annotation)),
                    rollout.namespace,
                    rollout.item.name,
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ObjectKey, ObjectRef};
    use serde_json::json;

    fn document(source: &str, line: usize, value: Value) -> (String, Document) {
        (source.to_string(), Document { line, within: Path::default(), value, text: None })
    }

    #[test]
    fn an_explicit_namespace_must_match_the_objects_own() {
        let object = |namespace: Option<&str>| {
            let mut value = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}});
            if let Some(namespace) = namespace {
                value["metadata"]["namespace"] = json!(namespace);
            }
            value
        };
        let documents = vec![document("a.yaml", 1, object(None)), document("b.yaml", 3, object(Some("shop")))];
        assert!(check_namespace(&documents, "shop").is_ok());
        assert_eq!(
            check_namespace(&documents, "other").unwrap_err().to_string(),
            "b.yaml:3: the namespace from the provided object \"shop\" does not match the namespace \"other\": pass -n shop, or leave -n out"
        );
    }

    fn rollout() -> Value {
        json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "r"},
               "spec": {"strategy": {"canary": {"steps": [{"traffic": "10%"}], "trafficRoutings": [{"service": "s",
                   "customNetworkRefs": [{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "vs"}]}]}}}})
    }

    fn vs(hosts: &[&str]) -> Value {
        json!({"apiVersion": "networking.istio.io/v1alpha3", "kind": "VirtualService", "metadata": {"name": "vs"}, "spec": {"hosts": hosts}})
    }

    #[test]
    fn keeps_the_objects_the_routing_uses_and_skips_the_rest() {
        let (snapshot, skipped) = Snapshot::from_documents(
            vec![
                document("all.yaml", 1, json!({"replicaCount": 2})),
                document(
                    "all.yaml",
                    3,
                    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}),
                ),
                document("all.yaml", 5, rollout()),
                document("all.yaml", 9, vs(&["a"])),
                document(
                    "cm.yaml",
                    1,
                    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": CONFIGMAP_NAME}}),
                ),
                document("list.yaml", 1, json!(["not", "an", "object"])),
            ],
            "ns",
        )
        .unwrap();
        assert_eq!(snapshot.rollouts.len(), 1);
        assert!(snapshot.configmap.is_some());
        let reference = ObjectRef {
            api_version: "networking.istio.io/v1beta1".into(),
            kind: "VirtualService".into(),
            name: "vs".into(),
        };
        assert!(snapshot.objects.get(&ObjectKey::of_ref(&reference, "ns")).is_some());
        assert_eq!(
            skipped_lines(&skipped),
            [
                "skipped all.yaml: 1 Deployment (a kind no Rollout or TrafficRouting in the input routes through); 1 document that is not a Kubernetes object (all.yaml:1: no apiVersion, kind or metadata.name)",
                "skipped list.yaml:1: not a Kubernetes object (not a map)",
            ]
        );
        assert_eq!(snapshot.script_keys(), [("networking.istio.io".to_string(), "VirtualService".to_string())].into());
    }

    #[test]
    fn an_object_without_its_apiversion_or_kind_is_said_to_be_skipped_whatever_the_verbosity() {
        let documents = vec![
            document("r.yaml", 1, rollout()),
            document("vs.yaml", 1, json!({"kind": "VirtualService", "metadata": {"name": "vs"}})),
            document("vs.yaml", 4, json!({"apiVersion": "networking.istio.io/v1beta1", "metadata": {"name": "vs"}})),
            // Not taken for an object: nothing names it.
            document("values.yaml", 1, json!({"kind": "values", "replicaCount": 2})),
        ];
        let (_, skipped) = Snapshot::from_documents(documents, "ns").unwrap();
        assert_eq!(
            mistaken_objects(&skipped),
            [
                "skipped vs.yaml:1: VirtualService vs has no apiVersion, so it is not read as an object (kubectl refuses it)",
                "skipped vs.yaml:4: vs (networking.istio.io/v1beta1) has no kind, so it is not read as an object (kubectl refuses it)",
            ]
        );
        // With -v, among the documents that are not objects.
        assert_eq!(
            skipped_lines(&skipped),
            [
                "skipped vs.yaml: 2 documents that are not Kubernetes objects (the first, vs.yaml:1: no apiVersion)",
                "skipped values.yaml:1: not a Kubernetes object (no apiVersion or metadata.name)",
            ]
        );
        // A field given as something else than a string is not said to be missing.
        let documents = vec![
            document("r.yaml", 1, rollout()),
            document("vs.yaml", 1, json!({"apiVersion": "v1", "kind": ["VirtualService"], "metadata": {"name": "vs"}})),
            document("vs.yaml", 9, json!({"kind": "VirtualService", "metadata": {"name": ["vs"]}})),
        ];
        let (_, skipped) = Snapshot::from_documents(documents, "ns").unwrap();
        assert_eq!(
            mistaken_objects(&skipped),
            [
                "skipped vs.yaml:1: vs (v1) has a kind that is a list, not a string, so it is not read as an object (kubectl refuses it)"
            ]
        );
        assert_eq!(
            skipped_lines(&skipped),
            [
                "skipped vs.yaml: 2 documents that are not Kubernetes objects (the first, vs.yaml:1: a kind that is a list, not a string)"
            ]
        );
        let (_, skipped) = Snapshot::from_documents(
            vec![
                document("r.yaml", 1, rollout()),
                document("vs.yaml", 9, json!({"kind": "VirtualService", "metadata": {"name": ["vs"]}})),
            ],
            "ns",
        )
        .unwrap();
        assert_eq!(
            skipped_lines(&skipped),
            [
                "skipped vs.yaml:9: not a Kubernetes object (no apiVersion, and a metadata.name that is a list, not a string)"
            ]
        );
    }

    #[test]
    fn a_rollout_of_another_api_group_is_said_to_be_skipped_whatever_the_verbosity() {
        let mut misspelt = rollout();
        misspelt["apiVersion"] = json!("rollout.kruise.io/v1beta1");
        let argo = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "argo"}});
        let tr =
            json!({"apiVersion": "rollout.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": "tr"}});
        let documents = vec![document("r.yaml", 1, misspelt), document("r.yaml", 40, argo), document("tr.yaml", 1, tr)];
        let (snapshot, skipped) = Snapshot::from_documents(documents, "ns").unwrap();
        assert!(snapshot.rollouts.is_empty() && snapshot.traffic_routings.is_empty());
        assert_eq!(
            mistaken_objects(&skipped),
            [
                "skipped r.yaml:1: Rollout r has apiVersion rollout.kruise.io/v1beta1, not rollouts.kruise.io/v1beta1 or v1alpha1, so it is not read as OpenKruise's",
                "skipped r.yaml:40: Rollout argo has apiVersion argoproj.io/v1alpha1, not rollouts.kruise.io/v1beta1 or v1alpha1, so it is not read as OpenKruise's",
                "skipped tr.yaml:1: TrafficRouting tr has apiVersion rollout.kruise.io/v1alpha1, not rollouts.kruise.io/v1alpha1, so it is not read as OpenKruise's",
            ]
        );
        assert_eq!(
            skipped_lines(&skipped),
            [
                "skipped r.yaml: Rollout r (r.yaml:1: rollout.kruise.io/v1beta1, not OpenKruise's); Rollout argo (r.yaml:40: argoproj.io/v1alpha1, not OpenKruise's)",
                "skipped tr.yaml: TrafficRouting tr (tr.yaml:1: rollout.kruise.io/v1alpha1, not OpenKruise's)",
            ]
        );
        // Without an apiVersion, it is an object missing one, as any kind.
        let bare = json!({"kind": "Rollout", "metadata": {"name": "r"}});
        let (_, skipped) = Snapshot::from_documents(vec![document("r.yaml", 1, bare)], "ns").unwrap();
        assert_eq!(
            mistaken_objects(&skipped),
            ["skipped r.yaml:1: Rollout r has no apiVersion, so it is not read as an object (kubectl refuses it)"]
        );
    }

    #[test]
    fn the_kinds_kept_are_those_the_routings_providers_read() {
        // One entry with the three kinds of routing, as the model's providers read them: the
        // custom ref's kind, Ingresses (the stable one, and any other of the namespace for the
        // aliyun-alb order check) and HTTPRoutes; the workload for its replicas.
        let mut three = rollout();
        three["spec"]["workloadRef"] = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"});
        let routing = &mut three["spec"]["strategy"]["canary"]["trafficRoutings"][0];
        routing["ingress"] = json!({"name": "web", "classType": "aliyun-alb"});
        routing["gateway"] = json!({"httpRouteName": "route"});
        let object = |api_version: &str, kind: &str, name: &str| json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}});
        let documents = vec![
            document("r.yaml", 1, three),
            document("o.yaml", 1, vs(&["a"])),
            document("o.yaml", 3, object("networking.k8s.io/v1", "Ingress", "web")),
            document("o.yaml", 5, object("networking.k8s.io/v1", "Ingress", "cart-canary")),
            document("o.yaml", 7, object("gateway.networking.k8s.io/v1beta1", "HTTPRoute", "route")),
            document("o.yaml", 9, object("apps/v1", "Deployment", "d")),
            document("o.yaml", 11, object("v1", "Service", "s-canary")),
            document("o.yaml", 13, object("networking.istio.io/v1beta1", "DestinationRule", "vs")),
        ];
        let (snapshot, skipped) = Snapshot::from_documents(documents, "ns").unwrap();
        let kept = |group: &str, kind: &str| snapshot.objects.of_kind(group, kind, "ns").count();
        assert_eq!(
            [
                kept("networking.istio.io", "VirtualService"),
                kept("networking.k8s.io", "Ingress"),
                kept("gateway.networking.k8s.io", "HTTPRoute"),
                kept("apps", "Deployment"),
            ],
            [1, 2, 1, 1]
        );
        assert_eq!(
            skipped_lines(&skipped),
            [
                "skipped o.yaml: 1 Service, 1 DestinationRule (kinds no Rollout or TrafficRouting in the input routes through)"
            ]
        );
        let keys: Vec<ScriptKey> = snapshot.script_keys().into_iter().collect();
        assert_eq!(keys, [scripts::ingress_key("aliyun-alb"), ("networking.istio.io".into(), "VirtualService".into())]);
    }

    #[test]
    fn the_same_object_twice_is_taken_once_and_two_different_copies_are_an_error() {
        let read = |second: Value| {
            Snapshot::from_documents(
                vec![
                    document("r.yaml", 1, rollout()),
                    document("a.yaml", 2, vs(&["a"])),
                    document("b.yaml", 4, second),
                ],
                "ns",
            )
        };
        assert!(read(vs(&["a"])).is_ok());
        let err = read(vs(&["b"])).unwrap_err().to_string();
        assert_eq!(err, "b.yaml:4: VirtualService ns/vs differs from the copy at a.yaml:2; keep one of them");
        let mut other = rollout();
        other["spec"]["strategy"]["canary"]["steps"][0]["traffic"] = json!("20%");
        let err = read(other).unwrap_err().to_string();
        assert_eq!(err, "b.yaml:4: Rollout ns/r differs from the copy at r.yaml:1; keep one of them");
        // Objects of kinds nothing routes through are not compared.
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}});
        let mut changed = deployment.clone();
        changed["spec"] = json!({"replicas": 2});
        let documents = vec![document("a.yaml", 1, deployment), document("b.yaml", 1, changed)];
        assert!(Snapshot::from_documents(documents, "ns").is_ok());
    }

    #[test]
    fn a_traffic_routing_a_rollout_names_must_be_in_its_namespace_in_the_input() {
        let mut named = rollout();
        named["metadata"]["annotations"] = json!({(crate::model::TRAFFIC_ROUTING_ANNOTATION): "tr"});
        let traffic_routing = |namespace: &str| {
            json!({"apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
                   "metadata": {"name": "tr", "namespace": namespace}, "spec": {"objectRef": [{"service": "s"}]}})
        };
        let linked = |rollout: Value, others: Vec<Value>| {
            let mut documents = vec![document("r.yaml", 1, rollout)];
            documents.extend(others.into_iter().map(|other| document("t.yaml", 1, other)));
            let (snapshot, _) = Snapshot::from_documents(documents, "ns").unwrap();
            let found = snapshot.traffic_routing_of(&snapshot.rollouts[0]);
            found.map(|t| t.map(|t| t.item.name.clone())).map_err(|e| e.to_string())
        };
        assert_eq!(linked(named.clone(), vec![traffic_routing("ns")]), Ok(Some("tr".into())));
        assert_eq!(linked(rollout(), vec![]), Ok(None));
        assert_eq!(
            linked(named, vec![traffic_routing("other")]),
            Err("r.yaml:1: Rollout ns/r names TrafficRouting tr (annotation rollouts.kruise.io/trafficrouting), which is not in the input".into())
        );
    }

    /// The snapshot of a file's text, as `plan -f` reads it.
    #[test]
    fn an_object_two_rollouts_route_is_warned_of_in_each_plan() {
        let mut second = rollout();
        second["metadata"]["name"] = json!("r2");
        let mut elsewhere = rollout();
        elsewhere["metadata"]["name"] = json!("r3");
        elsewhere["spec"]["strategy"]["canary"]["trafficRoutings"][0]["customNetworkRefs"][0]["name"] = json!("other");
        let (snapshot, _) = Snapshot::from_documents(
            vec![document("a.yaml", 1, rollout()), document("b.yaml", 1, second), document("c.yaml", 1, elsewhere)],
            "ns",
        )
        .unwrap();
        let shared = snapshot.shared_objects();
        let warnings: Vec<&Vec<String>> = ["r", "r2", "r3"].iter().map(|name| &shared[&("ns", *name)]).collect();
        assert_eq!(warnings[0].len(), 1, "{warnings:?}");
        assert!(
            warnings[0][0]
                .starts_with("VirtualService ns/vs is also routed by Rollout ns/r2: the controller reconciles"),
            "{warnings:?}"
        );
        assert!(warnings[1][0].contains("is also routed by Rollout ns/r: "), "{warnings:?}");
        assert_eq!(warnings[2], &Vec::<String>::new());
        // A Rollout and the TrafficRouting it names: its plan says so itself; another
        // TrafficRouting is named.
        let mut named = rollout();
        named["metadata"]["annotations"] = json!({(crate::model::TRAFFIC_ROUTING_ANNOTATION): "tr"});
        let traffic_routing = |name: &str| {
            json!({"apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting", "metadata": {"name": name},
                   "spec": {"objectRef": [{"service": "s", "customNetworkRefs": [{"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "vs"}]}]}})
        };
        let documents = vec![document("a.yaml", 1, named.clone()), document("t.yaml", 1, traffic_routing("tr"))];
        let (snapshot, _) = Snapshot::from_documents(documents, "ns").unwrap();
        assert_eq!(snapshot.shared_objects()[&("ns", "r")], Vec::<String>::new());
        let documents = vec![
            document("a.yaml", 1, named),
            document("t.yaml", 1, traffic_routing("tr")),
            document("u.yaml", 1, traffic_routing("tr2")),
        ];
        let (snapshot, _) = Snapshot::from_documents(documents, "ns").unwrap();
        let warnings = &snapshot.shared_objects()[&("ns", "r")];
        assert!(
            warnings.len() == 1 && warnings[0].contains("is also routed by TrafficRouting ns/tr2: "),
            "{warnings:?}"
        );
    }

    #[test]
    fn labels_and_annotations_are_read_as_the_api_server_stores_them() {
        let with_metadata = |metadata: Value| {
            let mut object = vs(&["a"]);
            object["metadata"] = metadata;
            Snapshot::from_documents(vec![document("all.yaml", 1, rollout()), document("vs.yaml", 3, object)], "ns")
                .map(|(snapshot, _)| snapshot)
                .map_err(|e| e.to_string())
        };
        // A null value is stored as "".
        let snapshot = with_metadata(json!({"name": "vs", "annotations": {"a": null, "b": "x"}})).unwrap();
        let stored = snapshot.objects.of_kind("networking.istio.io", "VirtualService", "ns").next().unwrap();
        assert_eq!(stored["metadata"]["annotations"], json!({"a": "", "b": "x"}));
        // Anything else that is not a string is refused, naming the object and the field.
        assert_eq!(
            with_metadata(json!({"name": "vs", "annotations": {"example.com/size": 8}})).unwrap_err(),
            "vs.yaml:3: VirtualService ns/vs: metadata.annotations.example.com/size: must be a string, not a number (8): the API server refuses the object; quote the value"
        );
        assert!(
            with_metadata(json!({"name": "vs", "labels": {"tier": true}}))
                .unwrap_err()
                .contains("metadata.labels.tier: must be a string, not a boolean (true)")
        );
        assert!(
            with_metadata(json!({"name": "vs", "labels": ["tier"]}))
                .unwrap_err()
                .contains("metadata.labels: must be a map of strings")
        );
    }

    fn read(text: &str) -> Result<Snapshot, String> {
        let documents = crate::yaml::parse_documents_keeping(text, "r.yaml", keeps_text).unwrap();
        let documents = documents.into_iter().map(|d| ("r.yaml".to_string(), d)).collect();
        Snapshot::from_documents(documents, "ns").map(|(snapshot, _)| snapshot).map_err(|e| e.to_string())
    }

    const ALPHA: &str = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---
apiVersion: rollouts.kruise.io/v1alpha1
kind: Rollout
metadata:
  name: r
spec:
  strategy:
    canary:
      disableGenerateCanaryService: true
      steps:
      - weight: 150
      - replicas: 1
        matches:
        - path: {value: /x}
      - pause: {}
  objectRef: {}
";

    #[test]
    fn a_refusal_puts_each_problem_under_who_refuses_it_and_says_a_dropped_field_once() {
        // ALPHA breaks webhook rules and has a v1alpha1 match's path, which the API server
        // drops: an operator trial's M2 had that under the webhook, and said twice.
        let snapshot = read(ALPHA).unwrap();
        assert_eq!(
            snapshot.rollouts[0].refusal().unwrap(),
            "r.yaml:5: Rollout ns/r would be rejected by the controller's admission webhook:
  r.yaml:14: spec.strategy.canary.steps[0].weight: 150 must be in (0%, 100%]
  r.yaml:18: spec.strategy.canary.steps[2].replicas: required
and it has fields the API server would drop (a misspelt one may be why a required one is missing):
  r.yaml:17: spec.strategy.canary.steps[1].matches[0].path: not supported in this API version, whose matches have headers only; the API server drops it"
        );
        // The CRD's schema is the API server's own validation, which comes first.
        let matches = "        - headers: [{name: a, value: b}]\n".repeat(17);
        let too_many = ALPHA.replace("        - path: {value: /x}\n", &matches);
        assert_eq!(
            read(&too_many).unwrap().rollouts[0].refusal().unwrap(),
            "r.yaml:5: Rollout ns/r would be rejected by the API server's schema validation (the CRD's schema):
  r.yaml:16: spec.strategy.canary.steps[1].matches: 17 matches, at most 16
and, once that passes, by the controller's admission webhook:
  r.yaml:14: spec.strategy.canary.steps[0].weight: 150 must be in (0%, 100%]
  r.yaml:34: spec.strategy.canary.steps[2].replicas: required"
        );
        let only_schema =
            too_many.replace("      - weight: 150\n", "      - weight: 10\n").replace("      - pause: {}\n", "");
        assert_eq!(
            read(&only_schema).unwrap().rollouts[0].refusal().unwrap(),
            "r.yaml:5: Rollout ns/r would be rejected by the API server's schema validation (the CRD's schema):
  r.yaml:16: spec.strategy.canary.steps[1].matches: 17 matches, at most 16"
        );
        let admitted =
            ALPHA.replace("      - weight: 150\n", "      - weight: 10\n").replace("      - pause: {}\n", "");
        assert_eq!(read(&admitted).unwrap().rollouts[0].refusal(), None);
        // The CRD requires v1alpha1's objectRef (a test case's Rollout, never stored, does not).
        let unreferenced = admitted.replace("  objectRef: {}\n", "");
        assert_eq!(
            read(&unreferenced).unwrap().rollouts[0].refusal().unwrap(),
            "r.yaml:5: Rollout ns/r would be rejected by the API server's schema validation (the CRD's schema):
  r.yaml:9: spec.objectRef: required
and it has fields the API server would drop (a misspelt one may be why a required one is missing):
  r.yaml:17: spec.strategy.canary.steps[1].matches[0].path: not supported in this API version, whose matches have headers only; the API server drops it"
        );
    }

    #[test]
    fn a_files_rollout_and_traffic_routing_name_their_fields_lines() {
        let snapshot = read(ALPHA).unwrap();
        let rollout = &snapshot.rollouts[0];
        let shown = |messages: &[FieldMessage]| messages.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(
            shown(&rollout.item.warnings),
            [
                "r.yaml:17: spec.strategy.canary.steps[1].matches[0].path: not supported in this API version, whose matches have headers only; the API server drops it",
                "r.yaml:12: spec.strategy.canary.disableGenerateCanaryService is dropped by the v1alpha1 to v1beta1 conversion: the controller generates and routes to <service>-canary; apply the Rollout as v1beta1 to keep it",
            ]
        );
        // A field missing from the text: the document's line.
        assert_eq!(
            shown(&rollout.item.rejections.webhook),
            [
                "r.yaml:14: spec.strategy.canary.steps[0].weight: 150 must be in (0%, 100%]",
                "r.yaml:18: spec.strategy.canary.steps[2].replicas: required",
            ]
        );
        let traffic_routing = "apiVersion: rollouts.kruise.io/v1alpha1\nkind: TrafficRouting\nmetadata: {name: t}\nspec:\n  objectRef: [{service: s}]\n  strategy:\n    matches:\n    - queryParams: []\n";
        let snapshot = read(traffic_routing).unwrap();
        assert_eq!(
            shown(&snapshot.traffic_routings[0].item.warnings),
            [
                "r.yaml:8: spec.strategy.matches[0].queryParams: not supported in this API version, whose matches have headers only; the API server drops it"
            ]
        );
    }

    #[test]
    fn an_unreadable_rollout_names_the_fields_line_and_its_unknown_fields() {
        let rollout = |canary: &str| {
            format!(
                "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollout\nmetadata: {{name: r}}\nspec:\n  strategy:\n    canary:\n{canary}"
            )
        };
        assert_eq!(
            read(&rollout("      steps:\n      - traffic: 20\n")).unwrap_err(),
            "r.yaml:8: Rollout ns/r: spec.strategy.canary.steps[0].traffic: must be a string, not 20"
        );
        // A field that is missing is no line of the text: the line of the field around it.
        assert_eq!(
            read(&rollout("      stepz:\n      - replicas: 1\n")).unwrap_err(),
            "r.yaml:6: Rollout ns/r: spec.strategy.canary.steps: must list at least one step (r.yaml:7: unknown field spec.strategy.canary.stepz: did you mean steps?)"
        );
        let unknown_version = "kind: Rollout\napiVersion: rollouts.kruise.io/v1\nmetadata: {name: r}\n";
        assert_eq!(
            read(unknown_version).unwrap_err(),
            "r.yaml:2: Rollout ns/r: not a Rollout of rollouts.kruise.io/v1alpha1 or v1beta1 (apiVersion \"rollouts.kruise.io/v1\")"
        );
        let wrong_kind = "kind: TrafficRouting\napiVersion: rollouts.kruise.io/v1beta1\nmetadata: {name: t}\n";
        assert!(
            read(wrong_kind)
                .unwrap_err()
                .starts_with("r.yaml:2: TrafficRouting ns/t: not a TrafficRouting of rollouts.kruise.io/v1alpha1")
        );
    }

    #[test]
    fn a_test_cases_rollout_names_lines_inside_it() {
        let case = "rollout:\n  apiVersion: rollouts.kruise.io/v1beta1\n  kind: Rollout\n  metadata: {name: r}\n  spec:\n    strategy:\n      canary:\n        steps:\n        - {replicas: 1, traffic: \"0%\"}\noriginal:\n  apiVersion: networking.istio.io/v1beta1\n  kind: VirtualService\n  metadata: {name: vs}\n";
        let snapshot = read(case).unwrap();
        assert_eq!(
            snapshot.rollouts[0].item.rejections.webhook[0].to_string(),
            "r.yaml:9: spec.strategy.canary.steps[0].traffic: \"0%\" must be in (0%, 100%]"
        );
    }

    #[test]
    fn a_missing_traffic_routing_names_the_annotations_line() {
        let text = "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollout\nmetadata:\n  name: r\n  annotations:\n    rollouts.kruise.io/trafficrouting: tr\nspec: {strategy: {canary: {steps: [{replicas: 1}]}}}\n";
        let snapshot = read(text).unwrap();
        assert_eq!(
            snapshot.traffic_routing_of(&snapshot.rollouts[0]).unwrap_err().to_string(),
            "r.yaml:6: Rollout ns/r names TrafficRouting tr (annotation rollouts.kruise.io/trafficrouting), which is not in the input"
        );
    }

    #[test]
    fn an_ingress_cases_objects_are_ingresses_as_test_reads_them() {
        let routed = |routing: Value| {
            json!({"rollout": {"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "web"},
                "spec": {"strategy": {"canary": {"steps": [{"replicas": 1, "traffic": "20%"}], "trafficRoutings": [routing]}}}},
                "original": {"metadata": {"name": "web"}}, "canary": {"metadata": {"name": "web-canary"}}})
        };
        let objects = |case: Value| -> Vec<Value> {
            expand_test_case(document("c.yaml", 1, case)).into_iter().map(|(_, d)| d.value).collect()
        };
        let ingress = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress"});
        let read = objects(routed(json!({"service": "web", "ingress": {"name": "web"}})));
        assert_eq!(read.len(), 3, "the Rollout, the stable and the canary Ingress: {read:?}");
        for (object, name) in read[1..].iter().zip(["web", "web-canary"]) {
            assert_eq!((&object["apiVersion"], &object["kind"]), (&ingress["apiVersion"], &ingress["kind"]));
            assert_eq!(object["metadata"]["name"], name);
        }
        // A custom refs case's original stays as written, and its `canary` is no object.
        let read = objects(routed(json!({"service": "web", "customNetworkRefs": []})));
        assert_eq!(read.len(), 2);
        assert!(read[1].get("kind").is_none());
    }

    #[test]
    fn only_rollouts_traffic_routings_their_test_cases_and_the_script_configmap_keep_their_text() {
        let object = |api_version: &str, kind: &str| json!({"apiVersion": api_version, "kind": kind});
        let configmap = |name: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
        assert!(keeps_text(&configmap(CONFIGMAP_NAME)));
        assert!(!keeps_text(&configmap("other")));
        assert!(keeps_text(&object("rollouts.kruise.io/v1beta1", "Rollout")));
        assert!(keeps_text(&object("rollouts.kruise.io/v1alpha1", "TrafficRouting")));
        assert!(keeps_text(&json!({"trafficRouting": {}, "original": {}})));
        assert!(!keeps_text(&object("networking.istio.io/v1beta1", "VirtualService")));
        assert!(!keeps_text(&object("example.com/v1", "Rollout")));
        assert!(!keeps_text(&json!({"rollout": {}})), "no test case without its original");
    }

    #[test]
    fn a_rollouts_namespace_other_than_n_is_named_on_its_line() {
        let text = "apiVersion: rollouts.kruise.io/v1beta1\nkind: Rollout\nmetadata:\n  name: r\n  namespace: shop\n";
        let documents = crate::yaml::parse_documents_keeping(text, "r.yaml", keeps_text).unwrap();
        let documents: Vec<_> = documents.into_iter().map(|d| ("r.yaml".to_string(), d)).collect();
        assert!(check_namespace(&documents, "other").unwrap_err().to_string().starts_with("r.yaml:5: the namespace"));
    }

    #[test]
    fn an_object_of_the_cluster_has_no_lines() {
        let origin = Origin::Cluster("rollout.rollouts.kruise.io/r".into());
        let field = Path::root("spec").field("x");
        assert_eq!(origin.place_of(&field), "rollout.rollouts.kruise.io/r");
        assert_eq!(origin.locate(field.message("m")).to_string(), "spec.x: m");
        let rollout = json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "spec": {"stepz": 1}});
        assert_eq!(origin.unknown_fields_note(&rollout), " (unknown field spec.stepz)");
        // A file's document without its text (a gateway object's): the document's place.
        let file = Origin::File { place: "o.yaml:3".into(), text: None };
        assert_eq!(file.locate(field.message("m")).to_string(), "o.yaml:3: spec.x: m");
    }

    #[test]
    fn two_script_configmaps_are_an_error() {
        let configmap = |namespace: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": CONFIGMAP_NAME, "namespace": namespace}});
        let err = Snapshot::from_documents(
            vec![document("a.yaml", 1, configmap("x")), document("b.yaml", 1, configmap("y"))],
            "ns",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("b.yaml:1: a second kruise-rollout-configuration ConfigMap (the first is in namespace x)"),
            "{err}"
        );
    }
}
