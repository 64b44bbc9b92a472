//! The live state of Rollouts and everything their routing touches, read with as few
//! sequential round trips as the data allows: the Rollouts, then (together) their gateway
//! objects (custom refs; HTTPRoutes; the stable and canary Ingress and, for aliyun-alb, the
//! namespace's other Ingresses; the canary Service), TrafficRoutings, workloads and the script
//! ConfigMap, then a TrafficRouting's own objects.

use super::cluster::{Cluster, Resource};
use crate::error::{ApiFailure, Error};
use crate::model::http_route;
use crate::model::{
    INGRESS_API_VERSION, ObjectKey, ObjectRef, Permission, Provider, Rollout, Routing, TrafficRoutingCr, refused_read,
};
use crate::scripts::{CONFIGMAP_NAME, ConfigMapNeed, ConfigMapScripts, ScriptCatalog};
use crate::snapshot::{Located, Origin, Snapshot};
use futures::future::{join_all, try_join_all};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

const GROUP: &str = "rollouts.kruise.io";

/// Which Rollouts a command works on.
#[derive(Clone, Debug)]
pub enum Selection {
    Names(Vec<String>),
    Selector(String),
    /// Every Rollout of the namespace; there may be none.
    All,
}

/// What was read, and the resources to write it back through.
pub struct Live {
    pub snapshot: Snapshot,
    pub rollouts: Resource,
    /// The resource of each gateway object kind read, by (group, kind).
    pub resources: BTreeMap<(String, String), Resource>,
    /// What could not be read, and what goes unchecked for it.
    pub warnings: Vec<String>,
    /// The Rollouts named that were not found (`read_each`, which reads the others all the
    /// same; see [`Live::found_all`]).
    pub missing: Vec<String>,
}

impl Live {
    /// Fails, as kubectl does, when a Rollout named was not found.
    pub fn found_all(&self, namespace: &str) -> Result<(), Error> {
        match self.missing.first() {
            Some(name) => Err(not_found(name, namespace)),
            None => Ok(()),
        }
    }

    /// The error of each Rollout named and not found, as kubectl words it.
    pub fn not_found(&self, namespace: &str) -> Vec<Error> {
        self.missing.iter().map(|name| not_found(name, namespace)).collect()
    }

    pub fn resource_of(&self, key: &ObjectKey) -> Option<&Resource> {
        self.resources.get(&(key.group.clone(), key.kind.clone()))
    }
}

/// `NAME` or `rollout/NAME` (any form `rollout_argument` accepts).
pub fn rollout_name(argument: &str) -> &str {
    argument.split_once('/').filter(|(kind, _)| is_rollout_resource(kind)).map_or(argument, |(_, name)| name)
}

/// Checks a Rollout named on the command line as kubectl reads `TYPE/NAME`: `NAME`, or a type
/// that names the Rollout resource (`rollout`, `rollouts`, `Rollout`, in any case, alone or
/// with the group, `rollout.rollouts.kruise.io`, or a version and the group,
/// `rollouts.v1beta1.rollouts.kruise.io`) and a name.
pub fn rollout_argument(argument: &str) -> Result<String, String> {
    named_rollout(argument, "a Rollout", "name a Rollout as NAME or rollout/NAME")
}

/// What `record` records: a Rollout (by name), or a TrafficRouting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordSubject {
    Rollout(String),
    TrafficRouting(String),
}

/// Checks `record`'s argument: a Rollout as `rollout_argument` takes it, or a TrafficRouting as
/// kubectl reads `TYPE/NAME` (`trafficrouting`, `trafficroutings`, `TrafficRouting`, in any
/// case, alone or with the group, or its version and the group) and a name.
pub fn record_argument(argument: &str) -> Result<RecordSubject, String> {
    let hint = "name a Rollout as NAME or rollout/NAME, or a TrafficRouting as trafficrouting/NAME";
    match argument.split_once('/') {
        Some((kind, name)) if names_resource(kind, "trafficrouting", &["v1alpha1"]) => match one_name(name) {
            true => Ok(RecordSubject::TrafficRouting(name.to_string())),
            false => Err(hint.to_string()),
        },
        _ => named_rollout(argument, "a Rollout or a TrafficRouting", hint)
            .map(|argument| RecordSubject::Rollout(rollout_name(&argument).to_string())),
    }
}

/// `rollout_argument`, for a command that takes `what` (`a Rollout`), named as `hint` says.
fn named_rollout(argument: &str, what: &str, hint: &str) -> Result<String, String> {
    match argument.split_once('/') {
        None if !argument.is_empty() => Ok(argument.to_string()),
        Some((kind, name)) if is_rollout_resource(kind) && one_name(name) => Ok(argument.to_string()),
        // A path where a name goes is most likely manifests meant for `plan -f`.
        _ if std::path::Path::new(argument).exists() => Err(format!(
            "{argument} is a file or folder, not {what}: `plan -f {argument}` plans the manifests in it; {hint}"
        )),
        // No type is empty, `.` or `..`, and no name holds a `/`: a path, to nothing here.
        Some((kind, name)) if ["", ".", ".."].contains(&kind) || (name.contains('/') && !is_rollout_resource(kind)) => {
            Err(format!(
                "{argument} is a path (to no file or folder here), not {what}: `plan -f FILE` plans the manifests in a file; {hint}"
            ))
        }
        Some((kind, _)) if !is_rollout_resource(kind) => Err(format!("{kind} is not {what}: {hint}")),
        _ => Err(hint.to_string()),
    }
}

/// Whether the part of `TYPE/NAME` after the `/` is one name.
fn one_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/')
}

/// Whether `kind` names the Rollout resource as kubectl's resource mapping matches it.
fn is_rollout_resource(kind: &str) -> bool {
    names_resource(kind, "rollout", &["v1alpha1", "v1beta1"])
}

/// Whether `kind` names the resource of this group whose kind is `singular` (in lower case)
/// and is served at `versions`, as kubectl's resource mapping matches it: the singular or
/// plural, in any case, alone or with the group, or with a version and the group.
fn names_resource(kind: &str, singular: &str, versions: &[&str]) -> bool {
    let kind = kind.to_ascii_lowercase();
    let (resource, group) = kind.split_once('.').map_or((kind.as_str(), None), |(r, g)| (r, Some(g)));
    let version_of_the_group =
        |g: &str| g.strip_suffix(GROUP).and_then(|v| v.strip_suffix('.')).is_some_and(|v| versions.contains(&v));
    let resource = resource.strip_suffix('s').unwrap_or(resource);
    resource == singular && group.is_none_or(|g| g == GROUP || version_of_the_group(g))
}

/// The Rollouts a command works on, read in one round trip.
pub struct Rollouts {
    pub resource: Resource,
    pub found: Vec<Located<Rollout>>,
    /// The Rollouts' own routing (a TrafficRouting's is read later).
    pub routings: Vec<Routing>,
}

impl Rollouts {
    fn of(resource: Resource, found: Vec<Located<Rollout>>) -> Rollouts {
        let routings = found.iter().filter_map(|r| Routing::of_rollout(&r.item, &r.namespace)).collect();
        Rollouts { resource, found, routings }
    }
}

/// A Rollout that could not be loaded, when the others were (`read_each`).
pub struct Unloaded {
    pub name: String,
    /// Its place among the Rollouts read (the order they are shown in).
    pub index: usize,
    /// The Rollout, when it parses (then its own objects, or its TrafficRouting, could not be
    /// read).
    pub rollout: Option<Located<Rollout>>,
    /// Why, starting with `Rollout NAMESPACE/NAME:`.
    pub error: String,
}

/// Reads the selected Rollouts: the first round trip. One that is named and not found or does
/// not parse is an error, and so is a selector that matches none.
pub async fn read_rollouts(cluster: &Cluster, selection: &Selection) -> Result<Rollouts, Error> {
    let Listed { rollouts, unparsed, missing } = list_each(cluster, selection).await?;
    if let Some(name) = missing.first() {
        return Err(not_found(name, &cluster.namespace));
    }
    if let Some(unparsed) = unparsed.into_iter().next() {
        return Err(Error::Input(unparsed.error));
    }
    no_match(cluster, selection, rollouts.found.len())?;
    Ok(rollouts)
}

/// The error of a selector that matched no Rollout (`found` of them), for the commands that act
/// on what they select (`status` lists nothing instead).
pub fn no_match(cluster: &Cluster, selection: &Selection, found: usize) -> Result<(), Error> {
    match selection {
        Selection::Selector(selector) if found == 0 => {
            Err(Error::Input(format!("no Rollouts in namespace {} match the selector {selector}", cluster.namespace)))
        }
        _ => Ok(()),
    }
}

/// The error of a Rollout named that is not there, as kubectl words it.
pub fn not_found(name: &str, namespace: &str) -> Error {
    let error = format!("rollouts.{GROUP} \"{name}\" not found in namespace {namespace}");
    // A name may hold dots, so a file's name is asked for first; once not found, it was most
    // likely meant for `plan -f`.
    match std::path::Path::new(name).exists() {
        true => Error::Input(format!(
            "{error}; {name} is a file or folder here: `plan -f {name}` plans the manifests in it"
        )),
        false => Error::Input(error),
    }
}

/// The selected Rollouts as read, before their world is: the first round trip of `read_each`.
pub struct Listed {
    rollouts: Rollouts,
    /// Those that do not parse, each at its place among all those read.
    unparsed: Vec<Unloaded>,
    /// The names of those named and not found.
    missing: Vec<String>,
}

impl Listed {
    /// The names of the Rollouts named and not found.
    pub fn missing(&self) -> &[String] {
        &self.missing
    }

    /// The name of each Rollout read, whether it parses or not, in the order read.
    pub fn names(&self) -> Vec<&str> {
        in_order(&self.rollouts.found, &self.unparsed, |u| u.index)
            .into_iter()
            .map(|read| match read {
                Ok(rollout) => rollout.item.name.as_str(),
                Err(unparsed) => unparsed.name.as_str(),
            })
            .collect()
    }

    /// Keeps the Rollouts whose names `keep` picks, each at its place among those kept.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        let all = in_order(std::mem::take(&mut self.rollouts.found), std::mem::take(&mut self.unparsed), |u| u.index);
        let (mut found, mut unparsed) = (Vec::new(), Vec::new());
        for read in all {
            match read {
                Ok(rollout) if keep(&rollout.item.name) => found.push(rollout),
                Err(u) if keep(&u.name) => unparsed.push(Unloaded { index: found.len() + unparsed.len(), ..u }),
                _ => {}
            }
        }
        self.rollouts = Rollouts::of(self.rollouts.resource.clone(), found);
        self.unparsed = unparsed;
    }
}

/// The Rollouts `found` (in order) and `unparsed` (each at its `index` among all) as read:
/// parsed, or not.
fn in_order<F, U>(
    found: impl IntoIterator<Item = F>,
    unparsed: impl IntoIterator<Item = U>,
    index: impl Fn(&U) -> usize,
) -> Vec<Result<F, U>> {
    let (mut found, mut unparsed) = (found.into_iter(), unparsed.into_iter().peekable());
    let mut all = Vec::new();
    loop {
        match unparsed.next_if(|u| index(u) == all.len()) {
            Some(u) => all.push(Err(u)),
            None => match found.next() {
                Some(f) => all.push(Ok(f)),
                // One whose index is past all the others is kept, last.
                None => return all.into_iter().chain(unparsed.map(Err)).collect(),
            },
        }
    }
}

/// Reads the selected Rollouts; those that do not parse are kept apart, and so are the names
/// of those named and not found.
pub async fn list_each(cluster: &Cluster, selection: &Selection) -> Result<Listed, Error> {
    let mut resource = rollout_resource(cluster).await?;
    let mut read = read_selected(cluster, &resource, selection).await;
    // Not found at a resource the discovery cache gave: the address may lead to another cluster
    // now (a port-forward, a tunnel), or the Rollouts be served at another version since. Looked
    // for once more after a fresh discovery (none when this run's was), as kubectl's discovery
    // looks again.
    let unserved = |e: &Error| matches!(e, Error::Api { failure, .. } if failure.code == Some(404));
    if read.as_ref().map_or_else(unserved, |(_, missing)| !missing.is_empty()) {
        match served_rollout_resource_at(cluster, true).await? {
            Some(fresh) if fresh != resource => {
                read = read_selected(cluster, &fresh, selection).await;
                resource = fresh;
            }
            Some(_) => {}
            None => return Err(no_rollouts_served()),
        }
    }
    let (raws, missing) = read?;
    let namespace = &cluster.namespace;
    let (mut found, mut unparsed) = (Vec::new(), Vec::new());
    for (index, raw) in raws.into_iter().enumerate() {
        let name = raw["metadata"]["name"].as_str().unwrap_or_default().to_string();
        let origin = Origin::Cluster(format!("rollout.{GROUP}/{name}"));
        match Rollout::from_object(&raw) {
            Ok(item) => found.push(Located { origin, namespace: namespace.clone(), item, raw }),
            Err(e) => {
                let error = format!("Rollout {namespace}/{name}: {e}{}", origin.unknown_fields_note(&raw));
                unparsed.push(Unloaded { name, index, rollout: None, error });
            }
        }
    }
    Ok(Listed { rollouts: Rollouts::of(resource, found), unparsed, missing })
}

/// The Rollouts of `selection` at `resource`, and the names of those named and not found.
async fn read_selected(
    cluster: &Cluster,
    resource: &Resource,
    selection: &Selection,
) -> Result<(Vec<Value>, Vec<String>), Error> {
    let namespace = &cluster.namespace;
    match selection {
        Selection::Names(arguments) => {
            // `approve demo rollout/demo` names one Rollout: read (and work on) it once.
            let mut seen = BTreeSet::new();
            let names: Vec<&str> =
                arguments.iter().map(|a| rollout_name(a)).filter(|name| seen.insert(*name)).collect();
            let found = cluster.get_many(resource, namespace, &names).await?;
            let (found, absent): (Vec<_>, Vec<_>) = names.iter().zip(found).partition(|(_, object)| object.is_some());
            let missing = absent.into_iter().map(|(name, _)| name.to_string()).collect();
            Ok((found.into_iter().filter_map(|(_, object)| object).collect(), missing))
        }
        Selection::Selector(selector) => Ok((cluster.list(resource, namespace, selector).await?, Vec::new())),
        Selection::All => Ok((cluster.list(resource, namespace, "").await?, Vec::new())),
    }
}

/// The error of reading the Rollouts a user selected (`selection`) in a command: a LIST that is
/// forbidden comes with the way that needs no `list`. (Not for a LIST a command makes of its
/// own, such as `restore --ref`'s, which has its own advice.)
pub fn selected_unlisted(error: Error, selection: &Selection) -> Error {
    match (&error, selection) {
        (_, Selection::Names(_)) => error,
        // Only the LIST's refusal: a discovery refused is not helped by naming Rollouts.
        (Error::Api { failure, doing }, _) if failure.code == Some(403) && doing.starts_with("listing") => {
            error.with_report("  name the Rollouts instead (NAME…), which reads each with get and needs no list")
        }
        _ => error,
    }
}

/// Which workloads are read with the Rollouts' routing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workloads {
    /// Those of partition releases, whose replica count decides whether a step is routed (what
    /// a plan needs).
    OfPartitions,
    /// Every Rollout's (`status` shows their replicas too).
    All,
}

/// Reads the world of the Rollouts `listed` (`list_each`) so that one Rollout that cannot be
/// loaded (it does not parse, or its objects cannot be read) does not hide the others: it is
/// returned apart, with its error; so is a Rollout named and not found (`Live::missing`). When
/// reading them together fails, each is read on its own to find which fail, then the others
/// together again; unless no answer came (a timeout, a lost connection): that is the server,
/// not a Rollout, and reading again would only wait again.
pub async fn read_each(
    cluster: &Cluster,
    listed: Listed,
    catalog: &ScriptCatalog,
    configmap: &ConfigMapRead,
    workloads: Workloads,
) -> Result<(Live, Vec<Unloaded>), Error> {
    let Listed { rollouts, unparsed: mut unloaded, missing } = listed;
    let (resource, found) = (rollouts.resource.clone(), rollouts.found.clone());
    match read_routing(cluster, rollouts, catalog, configmap, workloads).await {
        Ok(live) => return Ok((Live { missing, ..live }, unloaded)),
        Err(unanswered @ Error::Api { failure: ApiFailure { code: None, .. }, .. }) => return Err(unanswered),
        Err(_) => {}
    }
    let alone = join_all(found.iter().map(|rollout| {
        let one = Rollouts::of(resource.clone(), vec![rollout.clone()]);
        read_routing(cluster, one, catalog, configmap, workloads)
    }))
    .await;
    // The places among all the Rollouts read of those that parse.
    let total = found.len() + unloaded.len();
    let places: Vec<usize> = (0..total).filter(|i| unloaded.iter().all(|u| u.index != *i)).collect();
    let mut loaded = Vec::new();
    for ((rollout, read), index) in found.into_iter().zip(alone).zip(places) {
        match read {
            Ok(_) => loaded.push(rollout),
            Err(e) => {
                let (namespace, name) = (rollout.namespace.clone(), rollout.item.name.clone());
                let error = format!("Rollout {namespace}/{name}: {e}");
                unloaded.push(Unloaded { name, index, rollout: Some(rollout), error });
            }
        }
    }
    let live = read_routing(cluster, Rollouts::of(resource, loaded), catalog, configmap, workloads).await?;
    Ok((Live { missing, ..live }, unloaded))
}

/// Reads what the Rollouts' routing needs, and their `workloads`. `catalog` says which kinds
/// need the ConfigMap (read through `configmap` only then).
async fn read_routing(
    cluster: &Cluster,
    rollouts: Rollouts,
    catalog: &ScriptCatalog,
    configmap: &ConfigMapRead,
    workloads: Workloads,
) -> Result<Live, Error> {
    let namespace = &cluster.namespace;
    let mut snapshot = Snapshot { rollouts: rollouts.found, ..Snapshot::default() };
    let cr_names: BTreeSet<String> =
        snapshot.rollouts.iter().filter_map(|r| r.item.traffic_routing_cr.clone()).collect();
    let own_need = rollouts.routings.iter().find_map(|routing| configmap_need(catalog, routing));
    // Second round trip: the Rollouts' gateway objects, their TrafficRoutings (each followed by
    // its own gateway objects), when a script must come from it the ConfigMap, and the workloads.
    let (objects, crs, configmap_read, workloads) = futures::try_join!(
        read_objects(cluster, &rollouts.routings),
        try_join_all(cr_names.iter().map(|name| read_traffic_routing(cluster, name))),
        async {
            match &own_need {
                Some(need) => configmap.read(cluster, need).await,
                None => Ok(None),
            }
        },
        async { Ok(read_workloads(cluster, &snapshot.rollouts, workloads).await) },
    )?;
    for workload in workloads {
        match workload {
            WorkloadRead::Found(object) => snapshot.objects.insert(namespace, object),
            WorkloadRead::Absent(key) => snapshot.objects.insert_absent(key),
            WorkloadRead::Unread((key, failure, needed)) => snapshot.objects.insert_unread(key, failure, needed),
        }
    }
    let mut resources = BTreeMap::new();
    let mut warnings = Vec::new();
    let mut add = |snapshot: &mut Snapshot, found: Found| {
        for (reference, resource, object) in found.objects {
            resources.insert((reference.group().to_string(), reference.kind.clone()), resource);
            match object {
                Some(object) => snapshot.objects.insert(namespace, object),
                None => snapshot.objects.insert_absent(ObjectKey::of_ref(&reference, namespace)),
            }
        }
        for object in found.neighbours {
            snapshot.objects.insert(namespace, object);
        }
        warnings.extend(found.warnings);
    };
    add(&mut snapshot, objects);
    let mut cr_need = None;
    for (cr, found) in crs {
        cr_need = cr_need.or_else(|| configmap_need(catalog, &Routing::of_traffic_routing(&cr.item, &cr.namespace)));
        add(&mut snapshot, found);
        snapshot.traffic_routings.push(cr);
    }
    snapshot.configmap = match (configmap_read, cr_need) {
        (None, Some(need)) => configmap.read(cluster, &need).await?,
        (read, _) => read,
    };
    if rollouts.resource.version != "v1beta1" {
        warnings.push(format!(
            "the API server serves Rollouts at {} only: its Kruise Rollout controller predates v1beta1 (v0.5), and this plugin models the controllers that serve v1beta1; what it plans is what those write, which may not be what this one does",
            rollouts.resource.version
        ));
    }
    Ok(Live { snapshot, rollouts: rollouts.resource, resources, warnings, missing: Vec::new() })
}

/// What of `routing` needs a script from the ConfigMap, if anything does: the first custom ref
/// of a kind with no other script, or an Ingress class the user gave no script for (the
/// controller reads the ConfigMap before its built-in Ingress scripts).
pub fn configmap_need(catalog: &ScriptCatalog, routing: &Routing) -> Option<ConfigMapNeed> {
    routing.providers.iter().find_map(|provider| match provider {
        Provider::Custom(refs) => refs.iter().find(|r| catalog.needs_configmap(r)).map(|reference| {
            ConfigMapNeed::Kind { reference: reference.clone(), namespace: routing.owner.namespace.clone() }
        }),
        Provider::Ingress { class_type, .. } => {
            catalog.needs_configmap_for_ingress(class_type).then(|| ConfigMapNeed::IngressClass(class_type.clone()))
        }
        Provider::Gateway { .. } => None,
    })
}

/// What reading routings' objects found.
pub struct Found {
    /// Each object read: its ref, resource, and the object (None: it does not exist).
    pub objects: Vec<(ObjectRef, Resource, Option<Value>)>,
    /// The other Ingresses of the namespace, listed for the aliyun-alb order check.
    pub neighbours: Vec<Value>,
    pub warnings: Vec<String>,
}

/// The Services of `routings`, stable and canary: the plan warns when a step routes and the
/// stable one is missing (the controller waits for it), or routes to a canary one that is
/// missing. Read as other objects are, with one LIST for many. Reading them when that is
/// forbidden leaves the check out, with a warning each.
async fn read_services(
    cluster: &Cluster,
    routings: &[Routing],
) -> Result<(Vec<(ObjectRef, Resource, Option<Value>)>, Vec<String>), Error> {
    let names: BTreeSet<&str> =
        routings.iter().flat_map(|r| [r.stable_service.as_str(), r.canary_service.as_str()]).collect();
    if names.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let names: Vec<&str> = names.into_iter().collect();
    let resource = core_v1("Service", "services");
    let read = match cluster.get_many(&resource, &cluster.namespace, &names).await {
        Ok(found) => found.into_iter().map(Ok).collect(),
        // A Role may grant some of them by name (`resourceNames`): each is read on its own.
        Err(Error::Api { failure, .. }) if failure.code == Some(403) => {
            futures::future::try_join_all(names.iter().map(|name| read_service(cluster, name))).await?
        }
        Err(other) => return Err(other),
    };
    let (mut found, mut warnings) = (Vec::new(), Vec::new());
    for (name, service) in names.iter().zip(read) {
        match service {
            Ok(service) => {
                let reference = ObjectRef { api_version: "v1".into(), kind: "Service".into(), name: name.to_string() };
                found.push((reference, resource.clone(), service));
            }
            Err(unchecked) => warnings.push(unchecked),
        }
    }
    Ok((found, warnings))
}

/// Reads Service `name` of the cluster's namespace, to check that it exists (None: it does
/// not). A read that is forbidden leaves that check out: the inner Err is the warning.
pub async fn read_service(cluster: &Cluster, name: &str) -> Result<Result<Option<Value>, String>, Error> {
    match cluster.get(&core_v1("Service", "services"), &cluster.namespace, name).await {
        Ok(service) => Ok(Ok(service)),
        Err(Error::Api { failure, .. }) if failure.code == Some(403) => {
            Ok(Err(unchecked_service(cluster, name, &failure)))
        }
        Err(other) => Err(other),
    }
}

/// The warning of a Service `name` of a routing that may not be read.
fn unchecked_service(cluster: &Cluster, name: &str, failure: &ApiFailure) -> String {
    let namespace = &cluster.namespace;
    let needed = core_v1("Service", "services").permission("get", None, namespace).on(name);
    let left_out = "whether it exists is not checked";
    refused_read(&format!("read Service {namespace}/{name}"), failure, left_out, &needed)
}

/// Reads the objects of `routings` together: the custom refs, the HTTPRoutes, the stable and
/// canary Ingresses (with, for aliyun-alb, the namespace's other Ingresses) and the Services.
async fn read_objects(cluster: &Cluster, routings: &[Routing]) -> Result<Found, Error> {
    let refs: BTreeSet<ObjectRef> = routings.iter().flat_map(|routing| routing.custom_refs().to_vec()).collect();
    let http_routes: BTreeSet<String> =
        routings.iter().filter_map(|routing| routing.http_route().map(str::to_string)).collect();
    let (objects, (routes, route_warning), ingresses, services) = futures::try_join!(
        read_refs(cluster, refs.iter()),
        read_http_routes(cluster, &http_routes),
        read_ingresses(cluster, routings),
        read_services(cluster, routings),
    )?;
    let (ingresses, neighbours, mut warnings) = ingresses;
    let (services, service_warnings) = services;
    warnings.extend(route_warning);
    warnings.extend(service_warnings);
    let mut objects = objects;
    objects.extend(routes);
    objects.extend(ingresses);
    objects.extend(services);
    Ok(Found { objects, neighbours, warnings })
}

/// The stable and canary Ingress of each Ingress ref of `routings` (an absent canary is
/// normal, and an Ingress's resource does not move: no second discovery for it), and, when one
/// routes through aliyun-alb, the namespace's other Ingresses, listed at the same time: the plan
/// warns when another Ingress of the class already has the ALB order a step writes
/// (openkruise/rollouts#128). A listing that is refused leaves that check out, with a warning.
async fn read_ingresses(
    cluster: &Cluster,
    routings: &[Routing],
) -> Result<(Vec<(ObjectRef, Resource, Option<Value>)>, Vec<Value>, Vec<String>), Error> {
    let ingresses = routings.iter().flat_map(|r| &r.providers).filter(|p| matches!(p, Provider::Ingress { .. }));
    let refs: BTreeSet<ObjectRef> = ingresses.clone().flat_map(Provider::refs).collect();
    if refs.is_empty() {
        return Ok((Vec::new(), Vec::new(), Vec::new()));
    }
    let alb =
        ingresses.clone().any(|p| matches!(p, Provider::Ingress { class_type, .. } if class_type == "aliyun-alb"));
    let (group, version) = INGRESS_API_VERSION.split_once('/').expect("a group and a version");
    let resource = cluster
        .resource(group, version, "Ingress", false)
        .await?
        .ok_or_else(|| Error::Input(format!("the API server does not serve {INGRESS_API_VERSION} Ingress")))?;
    let names: Vec<&str> = refs.iter().map(|r| r.name.as_str()).collect();
    let (found, listed) = futures::join!(cluster.get_many(&resource, &cluster.namespace, &names), async {
        match alb {
            true => Some(cluster.list(&resource, &cluster.namespace, "").await),
            false => None,
        }
    });
    let found = refs.iter().cloned().zip(found?).map(|(reference, object)| (reference, resource.clone(), object));
    let mut warnings = Vec::new();
    let neighbours = match listed {
        None => Vec::new(),
        Some(Ok(neighbours)) => neighbours,
        Some(Err(Error::Api { failure, .. })) if failure.code == Some(403) => {
            let namespace = &cluster.namespace;
            warnings.push(refused_read(
                &format!("list the Ingresses of namespace {namespace}"),
                &failure,
                "the aliyun-alb order clash with the other Ingresses of the class (openkruise/rollouts#128) is not checked",
                &resource.permission("list", None, namespace),
            ));
            Vec::new()
        }
        Some(Err(other)) => return Err(other),
    };
    Ok((found.collect(), neighbours, warnings))
}

/// The Rollout resource at v1beta1 when served (the controller's view, the API server
/// converts), else v1alpha1.
pub async fn rollout_resource(cluster: &Cluster) -> Result<Resource, Error> {
    served_rollout_resource(cluster).await?.ok_or_else(no_rollouts_served)
}

fn no_rollouts_served() -> Error {
    Error::Input(format!("the API server serves no rollouts.{GROUP} (is OpenKruise Rollout installed?)"))
}

/// The Rollout resource as `rollout_resource` picks it; None when neither version is served.
pub async fn served_rollout_resource(cluster: &Cluster) -> Result<Option<Resource>, Error> {
    served_rollout_resource_at(cluster, false).await
}

/// `served_rollout_resource`, from a fresh discovery when `refresh`.
async fn served_rollout_resource_at(cluster: &Cluster, refresh: bool) -> Result<Option<Resource>, Error> {
    for version in ["v1beta1", "v1alpha1"] {
        if let Some(resource) = cluster.resource(GROUP, version, "Rollout", refresh).await? {
            return Ok(Some(resource));
        }
    }
    Ok(None)
}

/// Each ref's resource (targeted discovery, once per group/version) and object, concurrently
/// (the objects of one resource together, see `Cluster::get_many`).
async fn read_refs<'a>(
    cluster: &Cluster,
    refs: impl Iterator<Item = &'a ObjectRef>,
) -> Result<Vec<(ObjectRef, Resource, Option<Value>)>, Error> {
    let refs: Vec<&ObjectRef> = refs.collect();
    let group_versions: BTreeSet<(&str, &str)> = refs.iter().map(|r| (r.group(), r.version())).collect();
    try_join_all(group_versions.into_iter().map(|(group, version)| cluster.resources(group, version, false))).await?;
    let mut by_resource: Vec<(Resource, Vec<&ObjectRef>)> = Vec::new();
    for reference in refs {
        let Some(resource) = cluster.resource(reference.group(), reference.version(), &reference.kind, false).await?
        else {
            return Err(not_served(cluster, reference).await);
        };
        match by_resource.iter_mut().find(|(r, _)| *r == resource) {
            Some((_, members)) => members.push(reference),
            None => by_resource.push((resource, vec![reference])),
        }
    }
    let read = try_join_all(by_resource.iter().map(|(resource, members)| async move {
        let names: Vec<&str> = members.iter().map(|r| r.name.as_str()).collect();
        cluster.get_many(resource, &cluster.namespace, &names).await
    }))
    .await?;
    let mut found = Vec::new();
    for ((resource, members), objects) in by_resource.into_iter().zip(read) {
        for (reference, object) in members.into_iter().zip(objects) {
            // A 404 may come from stale discovery (a renamed or removed resource): look again once.
            let (resource, object) = match object {
                Some(object) => (resource.clone(), Some(object)),
                None => read_after_rediscovery(cluster, reference, &resource).await?,
            };
            found.push((reference.clone(), resource, object));
        }
    }
    Ok(found)
}

/// The HTTPRoutes `names`, read at the version `http_route_version` names (one stored object
/// at either), with a warning where that is not the controller's (see
/// [`http_route::not_served_to_the_controller`]).
async fn read_http_routes(
    cluster: &Cluster,
    names: &BTreeSet<String>,
) -> Result<(Vec<(ObjectRef, Resource, Option<Value>)>, Option<String>), Error> {
    if names.is_empty() {
        return Ok((Vec::new(), None));
    }
    let version = http_route_version(cluster).await?.ok_or_else(|| {
        Error::Input(format!(
            "the API server serves no httproutes.{} at v1 or v1beta1 (is the Gateway API installed?), needed for HTTPRoute {}",
            http_route::GROUP,
            names.iter().cloned().collect::<Vec<_>>().join(", ")
        ))
    })?;
    let refs: Vec<ObjectRef> = names
        .iter()
        .map(|name| ObjectRef {
            api_version: format!("{}/{version}", http_route::GROUP),
            kind: http_route::KIND.into(),
            name: name.clone(),
        })
        .collect();
    let listed = names.iter().map(|name| format!("{}/{name}", cluster.namespace)).collect::<Vec<_>>().join(", ");
    let warning =
        (version != http_route::CONTROLLER_VERSION).then(|| http_route::not_served_to_the_controller(&listed, version));
    Ok((read_refs(cluster, refs.iter()).await?, warning))
}

/// The version HTTPRoutes are read (and watched) at: the controller's (v1beta1) where the API
/// server serves it, else v1; `None` where it serves neither.
pub async fn http_route_version(cluster: &Cluster) -> Result<Option<&'static str>, Error> {
    for version in [http_route::CONTROLLER_VERSION, "v1"] {
        if cluster.resource(http_route::GROUP, version, http_route::KIND, false).await?.is_some() {
            return Ok(Some(version));
        }
    }
    Ok(None)
}

/// A ref whose kind the API server does not serve at its version, with what it serves of the
/// group (one more request, on the way to this error): none of it (the CRDs not installed), or
/// other versions (the ref's apiVersion to change).
async fn not_served(cluster: &Cluster, reference: &ObjectRef) -> Error {
    let (group, version) = (reference.group(), reference.version());
    let served = match cluster.served_versions(group).await {
        Ok(None) => format!(": it serves no {group} at all (are its CRDs installed?)"),
        Ok(Some(versions)) if !versions.iter().any(|v| v == version) => {
            format!(": it serves {group} at {} only; give the ref one of those apiVersions", versions.join(", "))
        }
        Ok(Some(_)) => format!(": it serves {}, but no {} there", reference.api_version, reference.kind),
        Err(_) => String::new(),
    };
    Error::Input(format!(
        "the API server does not serve {} {} (ref {reference}){served}",
        reference.api_version, reference.kind
    ))
}

/// A ref whose object was not found: when fresh discovery names another resource for its kind,
/// read it there.
pub async fn read_after_rediscovery(
    cluster: &Cluster,
    reference: &ObjectRef,
    cached: &Resource,
) -> Result<(Resource, Option<Value>), Error> {
    let Some(fresh) = cluster.resource(reference.group(), reference.version(), &reference.kind, true).await? else {
        return Err(not_served(cluster, reference).await);
    };
    if fresh == *cached {
        return Ok((fresh, None));
    }
    let object = cluster.get(&fresh, &cluster.namespace, &reference.name).await?;
    Ok((fresh, object))
}

/// The `workloads` of `rollouts`, each read once. The planner needs the replica count of a
/// partition release's (`Rollout::is_real_partition`, docs/controller-semantics.md §11). One
/// that is not there is absent; one that cannot be read (its discovery or read failed, its kind
/// not served, reading forbidden) is unread, with why: the plan says what it assumes instead,
/// and `approve` refuses a step the count decides.
async fn read_workloads(cluster: &Cluster, rollouts: &[Located<Rollout>], workloads: Workloads) -> Vec<WorkloadRead> {
    let refs: BTreeSet<&ObjectRef> = rollouts
        .iter()
        .filter(|r| workloads == Workloads::All || r.item.is_real_partition())
        .filter_map(|r| r.item.workload.as_ref())
        .collect();
    let namespace = &cluster.namespace;
    let read = refs.into_iter().map(|reference| async move {
        let key = ObjectKey::of_ref(reference, namespace);
        // A discovery that failed, or a kind not served, leaves the count unread as a failed
        // read does: taken for a workload not there, it would make a step of a partition
        // release routed that the controller does not route.
        let resource = match cluster.resource(reference.group(), reference.version(), &reference.kind, false).await {
            Ok(Some(resource)) => resource,
            Ok(None) => {
                let served = format!("the API server does not serve {} {}", reference.api_version, reference.kind);
                return WorkloadRead::Unread((key, served, None));
            }
            Err(e) => return WorkloadRead::Unread((key, e.to_string(), None)),
        };
        match cluster.get(&resource, namespace, &reference.name).await {
            Ok(Some(workload)) => WorkloadRead::Found(workload),
            Ok(None) => WorkloadRead::Absent(key),
            Err(Error::Api { failure, .. }) if failure.code == Some(403) => WorkloadRead::Unread((
                key,
                failure.to_string(),
                Some(resource.permission("get", None, namespace).on(&reference.name)),
            )),
            // Not refused: a busy or silent server, said as the read failed (an approval that
            // hangs on the count refuses without it).
            Err(Error::Api { failure, .. }) => WorkloadRead::Unread((key, failure.to_string(), None)),
            Err(e) => WorkloadRead::Unread((key, e.to_string(), None)),
        }
    });
    join_all(read).await
}

/// What reading a workload found.
enum WorkloadRead {
    Found(Value),
    /// Not found in the namespace.
    Absent(ObjectKey),
    Unread(UnreadObject),
}

/// An object that could not be read: its key, the failure, and, when the API server refused
/// the read, the permission that would allow it.
type UnreadObject = (ObjectKey, String, Option<Permission>);

/// Reads a TrafficRouting, then its objects (as `read_objects`).
pub async fn read_traffic_routing(cluster: &Cluster, name: &str) -> Result<(Located<TrafficRoutingCr>, Found), Error> {
    let namespace = &cluster.namespace;
    let resource = traffic_routing_resource(cluster)
        .await?
        .ok_or_else(|| Error::Input(format!("the API server serves no trafficroutings.{GROUP}/v1alpha1")))?;
    let raw = cluster.get(&resource, namespace, name).await?.ok_or_else(|| {
        Error::Input(format!("trafficroutings.{GROUP} \"{name}\" not found in namespace {namespace}"))
    })?;
    let item = TrafficRoutingCr::from_object(&raw)
        .map_err(|e| Error::Input(format!("TrafficRouting {namespace}/{name}: {e}")))?;
    let objects = read_objects(cluster, &[Routing::of_traffic_routing(&item, namespace)]).await?;
    Ok((
        Located {
            origin: Origin::Cluster(format!("trafficrouting.{GROUP}/{name}")),
            namespace: namespace.clone(),
            item,
            raw,
        },
        objects,
    ))
}

/// The TrafficRouting resource (v1alpha1 only); None where the API server does not serve it.
pub async fn traffic_routing_resource(cluster: &Cluster) -> Result<Option<Resource>, Error> {
    cluster.resource(GROUP, "v1alpha1", "TrafficRouting", false).await
}

/// A resource of the core group's v1, which every API server serves (no discovery needed).
fn core_v1(kind: &str, plural: &str) -> Resource {
    Resource { group: String::new(), version: "v1".into(), kind: kind.into(), plural: plural.into(), namespaced: true }
}

/// The controller's script ConfigMap, read at most once by all that share this value: it is one
/// object, however many namespaces' Rollouts need a script from it (`-A`) or however many times
/// `read_each` tries their world. What the read found, found missing or was refused is kept and
/// given to each need; a refusal still names the need it stops.
#[derive(Clone)]
pub struct ConfigMapRead {
    /// The controller's namespace (`--controller-namespace`), where the ConfigMap is.
    namespace: String,
    outcome: Arc<tokio::sync::OnceCell<Result<Option<ConfigMapScripts>, Error>>>,
}

impl ConfigMapRead {
    /// Nothing read yet: the first need reads it.
    pub fn new(controller_namespace: &str) -> ConfigMapRead {
        ConfigMapRead { namespace: controller_namespace.to_string(), outcome: Arc::default() }
    }

    /// The ConfigMap, for what `need`s a script from it (a custom ref's kind or an Ingress
    /// class no `--script` or `--lua-dir` script is given for), so a 403 names it and says how
    /// to do without the read. Read on the first call; a later one, even while that read is
    /// on its way, waits for it and gets its outcome.
    pub async fn read(&self, cluster: &Cluster, need: &ConfigMapNeed) -> Result<Option<ConfigMapScripts>, Error> {
        let namespace = &self.namespace;
        let outcome = self
            .outcome
            .get_or_init(|| async {
                let read = cluster.get(&core_v1("ConfigMap", "configmaps"), namespace, CONFIGMAP_NAME).await;
                read.map(|configmap| configmap.map(|c| ConfigMapScripts::from_object(namespace, &c)))
            })
            .await;
        match outcome {
            Ok(configmap) => Ok(configmap.clone()),
            Err(error @ Error::Api { failure, .. }) if failure.code == Some(403) => {
                Err(again(error).with_report(&need.when_forbidden()))
            }
            Err(error) => Err(again(error)),
        }
    }
}

/// The failure of a read, for another need of what was read once: the same kind (so the same
/// exit code) and message. A read fails with an API failure, or bad input before it is sent.
fn again(error: &Error) -> Error {
    match error {
        Error::Api { doing, failure } => Error::Api { doing: doing.clone(), failure: failure.clone() },
        other => Error::Input(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forbidden_list_of_the_rollouts_selected_suggests_naming_them() {
        let failed_doing = |doing: &str, code| Error::Api {
            doing: doing.into(),
            failure: ApiFailure { code: Some(code), reason: "R".into(), message: "m".into() },
        };
        let failed = |code| failed_doing("listing rollouts", code);
        let hint = "name the Rollouts instead (NAME…)";
        assert!(selected_unlisted(failed(403), &Selection::All).to_string().contains(hint));
        assert!(selected_unlisted(failed(403), &Selection::Selector("app=x".into())).to_string().contains(hint));
        // Named, they were not listed; another failure is no refusal.
        assert!(matches!(selected_unlisted(failed(403), &Selection::Names(vec!["a".into()])), Error::Api { .. }));
        assert!(matches!(selected_unlisted(failed(503), &Selection::All), Error::Api { .. }));
        // A discovery refused is not helped by naming them.
        let discovery = failed_doing("discovering rollouts.kruise.io/v1beta1", 403);
        assert!(!selected_unlisted(discovery, &Selection::All).to_string().contains(hint));
    }

    #[test]
    fn rollouts_that_do_not_parse_are_put_back_at_their_places() {
        let merged = |found: &[&'static str], unparsed: &[(usize, &'static str)]| {
            in_order(found.iter().copied(), unparsed.iter().copied(), |(index, _)| *index)
        };
        assert_eq!(merged(&["a", "c"], &[(1, "b")]), [Ok("a"), Err((1, "b")), Ok("c")]);
        assert_eq!(merged(&["b"], &[(0, "a"), (2, "c")]), [Err((0, "a")), Ok("b"), Err((2, "c"))]);
        assert_eq!(merged(&[], &[]), Vec::<Result<&str, (usize, &str)>>::new());
        // Past the end: kept, last.
        assert_eq!(merged(&["a"], &[(5, "z")]), [Ok("a"), Err((5, "z"))]);
    }

    #[test]
    fn a_configmap_read_failure_given_again_keeps_its_kind_and_message() {
        let failure = ApiFailure { code: Some(403), reason: "Forbidden".into(), message: "no".into() };
        let refused = Error::Api { doing: "reading configmaps kruise-rollout/c".into(), failure: failure.clone() };
        assert!(
            matches!(again(&refused), Error::Api { doing, failure: f } if doing == "reading configmaps kruise-rollout/c" && f == failure)
        );
        let unsent = again(&Error::Input("reading configmaps kruise-rollout/c: bad name".into()));
        assert!(matches!(unsent, Error::Input(m) if m == "reading configmaps kruise-rollout/c: bad name"));
    }

    #[test]
    fn rollout_names_may_carry_a_kind() {
        assert_eq!(rollout_name("demo"), "demo");
        assert_eq!(rollout_name("rollout/demo"), "demo");
        assert_eq!(rollout_name("rollouts.rollouts.kruise.io/demo"), "demo");
        for kind in ["Rollout", "ROLLOUTS", "rollout.rollouts.kruise.io", "rollouts.v1beta1.rollouts.kruise.io"] {
            let argument = format!("{kind}/demo");
            assert_eq!((rollout_name(&argument), rollout_argument(&argument)), ("demo", Ok(argument.clone())));
        }
    }

    #[test]
    fn listed_rollouts_keep_their_order_when_some_are_left_out() {
        let rollout = |name: &str| {
            let raw = serde_json::json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
                "metadata": {"name": name, "namespace": "shop"},
                "spec": {"strategy": {"canary": {"steps": [{"replicas": 1, "traffic": "10%"}],
                         "trafficRoutings": [{"service": name, "gateway": {"httpRouteName": name}}]}}}});
            let item = Rollout::from_object(&raw).unwrap();
            Located { origin: Origin::Cluster(format!("rollout/{name}")), namespace: "shop".into(), item, raw }
        };
        let unparsed = |name: &str, index| Unloaded { name: name.into(), index, rollout: None, error: String::new() };
        let resource = Resource {
            group: GROUP.into(),
            version: "v1beta1".into(),
            kind: "Rollout".into(),
            plural: "rollouts".into(),
            namespaced: true,
        };
        let mut listed = Listed {
            rollouts: Rollouts::of(resource, vec![rollout("a"), rollout("c"), rollout("e")]),
            unparsed: vec![unparsed("b", 1), unparsed("d", 3)],
            missing: Vec::new(),
        };
        assert_eq!(listed.names(), ["a", "b", "c", "d", "e"]);
        listed.retain(|name| name != "a" && name != "c");
        assert_eq!(listed.names(), ["b", "d", "e"]);
        assert_eq!(listed.unparsed.iter().map(|u| u.index).collect::<Vec<_>>(), [0, 1]);
        let routed: Vec<&str> = listed.rollouts.routings.iter().filter_map(Routing::http_route).collect();
        assert_eq!(routed, ["e"], "the routing of those kept only");
    }

    #[test]
    fn a_rollout_argument_of_another_kind_is_refused() {
        assert_eq!(rollout_argument("demo"), Ok("demo".into()));
        let refused = |argument: &str| rollout_argument(argument).unwrap_err();
        assert_eq!(refused("Deployment/demo"), "Deployment is not a Rollout: name a Rollout as NAME or rollout/NAME");
        assert_eq!(
            refused("rollout.apps/demo"),
            "rollout.apps is not a Rollout: name a Rollout as NAME or rollout/NAME"
        );
        assert_eq!(
            refused("rollouts.v2.rollouts.kruise.io/demo"),
            "rollouts.v2.rollouts.kruise.io is not a Rollout: name a Rollout as NAME or rollout/NAME"
        );
        for argument in ["rollout/", "rollout/a/b", ""] {
            assert_eq!(refused(argument), "name a Rollout as NAME or rollout/NAME", "{argument:?}");
        }
        // A path to nothing: named as a path, not as a type (`. is not a Rollout`).
        for path in ["./ro.yaml", "/tmp/no/such.yaml", "../ro.yaml", "manifests/prod/ro.yaml"] {
            assert_eq!(
                refused(path),
                format!(
                    "{path} is a path (to no file or folder here), not a Rollout: `plan -f FILE` plans the manifests in a file; name a Rollout as NAME or rollout/NAME"
                )
            );
        }
        // Manifests given without -f.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ro.yaml");
        std::fs::write(&file, "").unwrap();
        let path = file.display().to_string();
        assert_eq!(
            refused(&path),
            format!(
                "{path} is a file or folder, not a Rollout: `plan -f {path}` plans the manifests in it; name a Rollout as NAME or rollout/NAME"
            )
        );
    }

    #[test]
    fn record_takes_a_rollout_or_a_traffic_routing_of_any_type_spelling_kubectl_takes() {
        let rollout = |name: &str| Ok(RecordSubject::Rollout(name.into()));
        assert_eq!(record_argument("demo"), rollout("demo"));
        assert_eq!(record_argument("rollouts.v1alpha1.rollouts.kruise.io/demo"), rollout("demo"));
        for kind in [
            "TrafficRouting",
            "trafficrouting",
            "trafficroutings",
            "TRAFFICROUTINGS",
            "trafficrouting.rollouts.kruise.io",
            "trafficroutings.v1alpha1.rollouts.kruise.io",
        ] {
            assert_eq!(record_argument(&format!("{kind}/x")), Ok(RecordSubject::TrafficRouting("x".into())), "{kind}");
        }
        let hint = "name a Rollout as NAME or rollout/NAME, or a TrafficRouting as trafficrouting/NAME";
        let refused = |argument: &str| record_argument(argument).unwrap_err();
        for kind in
            ["deployment", "trafficroutings.v1beta1.rollouts.kruise.io", "trafficrouting.apps", "trafficroutingss"]
        {
            assert_eq!(refused(&format!("{kind}/x")), format!("{kind} is not a Rollout or a TrafficRouting: {hint}"));
        }
        for argument in ["trafficrouting/", "trafficrouting/a/b", "rollout/", ""] {
            assert_eq!(refused(argument), hint, "{argument:?}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().display().to_string();
        assert_eq!(
            refused(&path),
            format!(
                "{path} is a file or folder, not a Rollout or a TrafficRouting: `plan -f {path}` plans the manifests in it; {hint}"
            )
        );
    }
}
