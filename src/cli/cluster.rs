//! What the commands against the API server share (a session, Rollout selection, the writer's
//! mode), and `plan ROLLOUT…`.

use super::views::Scope;
use super::{ConnectionFlags, DryRun, Outcome, PlanArgs, RolloutSelection, ScriptArgs, print, print_plans, warn};
use crate::change::Change;
use crate::error::Error;
use crate::lua::Limits;
use crate::model::{
    self, Ending, ObjectIndex, ObjectKey, ObjectRef, Permission, Rollout, Routing, Stage, StrategyKind,
};
use crate::output;
use crate::plan::{self, Planner, RoutingPlan};
use crate::scripts::{self, ConfigMapNeed, ConfigMapPlace, ScriptCatalog, ScriptKey};
use crate::snapshot::Located;
use crate::source::cluster::{Cluster, Resource};
use crate::source::files;
use crate::source::live::{self, ConfigMapRead, Live, Selection, Workloads};
use crate::status;
use crate::write::{self, Mode, Writer};
use rayon::prelude::*;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

pub(super) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread().enable_all().build()?)
}

/// A connection, the scripts the user gave, and the limits: what every cluster command needs.
pub(super) struct Session {
    pub(super) cluster: Cluster,
    catalog: ScriptCatalog,
    controller_namespace: String,
    /// The script ConfigMap as read once for all the sessions of one pass over namespaces
    /// (`in_namespaces`). None: each load reads it afresh, as it reads the Rollouts (`approve`
    /// and `status -w` read again at each step or change).
    configmap: Option<ConfigMapRead>,
    limits: Limits,
    /// The warnings of the loads said so far, by all the sessions of the run: following reads
    /// again at every change (or every 2s), and says each warning once.
    said: Arc<Mutex<BTreeSet<String>>>,
    /// For a pass over several namespaces (`-A`), the script keys the objects of all of them
    /// use, as each is loaded: `--script` and `--lua-dir` are checked against all of them once
    /// the pass is done (`check_scripts_used`), as a key one namespace has no object for may be
    /// another's. None: checked at each load.
    scripts_used: Option<Arc<Mutex<BTreeSet<ScriptKey>>>>,
}

impl Session {
    pub(super) async fn open(connection: &ConnectionFlags, scripts: &ScriptArgs) -> Result<Session, Error> {
        let catalog = ScriptCatalog {
            overrides: files::read_script_flags(&scripts.scripts)?,
            lua_dir: scripts.lua_dir.as_deref().map(files::read_lua_dir).transpose()?.unwrap_or_default(),
            configmap_place: ConfigMapPlace::Cluster { namespace: scripts.controller_namespace.clone() },
            ..ScriptCatalog::default()
        };
        let cluster = Cluster::connect(&connection.connection()).await?;
        Ok(Session {
            cluster,
            catalog,
            controller_namespace: scripts.controller_namespace.clone(),
            configmap: None,
            limits: scripts.lua.limits(),
            said: Arc::default(),
            scripts_used: None,
        })
    }

    /// The same session, working in each of `namespaces`, for one pass over them: the script
    /// ConfigMap, one object, is read at most once for all of them.
    pub(super) fn in_namespaces<'a>(&self, namespaces: impl IntoIterator<Item = &'a str>) -> Vec<Session> {
        let configmap = ConfigMapRead::new(&self.controller_namespace);
        let namespaces: Vec<&str> = namespaces.into_iter().collect();
        let scripts_used = (namespaces.len() > 1).then(Arc::default);
        let in_namespace = |namespace: &str| {
            let mut cluster = self.cluster.clone();
            cluster.namespace = namespace.to_string();
            Session {
                cluster,
                catalog: self.catalog.clone(),
                controller_namespace: self.controller_namespace.clone(),
                configmap: Some(configmap.clone()),
                limits: self.limits,
                said: Arc::clone(&self.said),
                scripts_used: scripts_used.clone(),
            }
        };
        namespaces.into_iter().map(in_namespace).collect()
    }

    /// How this session reads the script ConfigMap: as its pass does, or once for one load.
    fn configmap_read(&self) -> ConfigMapRead {
        self.configmap.clone().unwrap_or_else(|| ConfigMapRead::new(&self.controller_namespace))
    }

    pub(super) fn limits(&self) -> Limits {
        self.limits
    }

    /// The scripts for `routings`, with the ConfigMap read only when one of them needs it.
    pub(super) async fn catalog_for(&self, routings: &[Routing]) -> Result<ScriptCatalog, Error> {
        let mut catalog = self.catalog.clone();
        if let Some(need) = routings.iter().find_map(|routing| live::configmap_need(&catalog, routing)) {
            catalog.configmap = self.configmap_read().read(&self.cluster, &need).await?;
        }
        Ok(catalog)
    }

    /// Whether an object of `api_version` `kind` is a gateway object this tool writes: an
    /// Ingress, an HTTPRoute, or a custom ref (a kind with a Lua script; the ConfigMap is read
    /// only when the script would come from it, for object `name`).
    pub(super) async fn writes_kind(&self, api_version: &str, kind: &str, name: &str) -> Result<bool, Error> {
        match (crate::model::api_group(api_version), kind) {
            ("networking.k8s.io", "Ingress") | (crate::model::http_route::GROUP, crate::model::http_route::KIND) => {
                return Ok(true);
            }
            _ => {}
        }
        let reference = ObjectRef { api_version: api_version.into(), kind: kind.into(), name: name.into() };
        let mut catalog = self.catalog.clone();
        if catalog.needs_configmap(&reference) {
            let need = ConfigMapNeed::Kind { reference: reference.clone(), namespace: self.cluster.namespace.clone() };
            catalog.configmap = self.configmap_read().read(&self.cluster, &need).await?;
        }
        Ok(catalog.resolve(&reference).is_ok())
    }

    /// Reads the Rollouts and their world, all or nothing: a Rollout that cannot be loaded is an
    /// error naming it. The catalog gains the ConfigMap when it was read.
    pub(super) async fn load(&self, selection: &Selection) -> Result<(Live, ScriptCatalog), Error> {
        let (live, catalog, unloaded) = self.load_selected(selection).await?;
        match Error::together(unloaded.into_iter().map(|u| Error::Input(u.error)).collect()) {
            None => Ok((live, catalog)),
            Some(error) => Err(error),
        }
    }

    /// As `load_each`, for the commands that act on what they select: a Rollout named and not
    /// found is an error, and so is a selector that matches no Rollout.
    async fn load_selected(&self, selection: &Selection) -> Result<(Live, ScriptCatalog, Vec<live::Unloaded>), Error> {
        let loaded = self.load_each(selection).await?;
        loaded.0.found_all(&self.cluster.namespace)?;
        live::no_match(&self.cluster, selection, loaded.0.snapshot.rollouts.len() + loaded.2.len())?;
        Ok(loaded)
    }

    /// As `load`, but a Rollout that cannot be loaded is returned apart, with its error, and
    /// does not hide the others (`plan`); one named and not found is left out (`Live::missing`).
    /// The Rollouts are the user's selection: a refused LIST of them says how to do without.
    pub(super) async fn load_each(
        &self,
        selection: &Selection,
    ) -> Result<(Live, ScriptCatalog, Vec<live::Unloaded>), Error> {
        let listed =
            live::list_each(&self.cluster, selection).await.map_err(|e| live::selected_unlisted(e, selection))?;
        self.load_listed(listed, Workloads::OfPartitions).await
    }

    /// As `load_each`, from the Rollouts `listed`, with their `workloads`.
    pub(super) async fn load_listed(
        &self,
        listed: live::Listed,
        workloads: Workloads,
    ) -> Result<(Live, ScriptCatalog, Vec<live::Unloaded>), Error> {
        let configmap = self.configmap_read();
        let (live, unloaded) = live::read_each(&self.cluster, listed, &self.catalog, &configmap, workloads).await?;
        let (live, catalog) = self.loaded(live)?;
        Ok((live, catalog, unloaded))
    }

    /// Checks `--script` against what was read, shows the warnings, and adds the ConfigMap read
    /// to the catalog.
    fn loaded(&self, live: Live) -> Result<(Live, ScriptCatalog), Error> {
        let used = live.snapshot.script_keys();
        match &self.scripts_used {
            Some(pass) => pass.lock().expect("not poisoned").extend(used),
            None => check_scripts(&self.catalog, &used)?,
        }
        let mut said = self.said.lock().expect("not poisoned");
        for warning in live.warnings.iter().filter(|warning| said.insert(warning.to_string())) {
            warn(&format!("warning: {warning}"));
        }
        drop(said);
        let catalog = ScriptCatalog { configmap: live.snapshot.configmap.clone(), ..self.catalog.clone() };
        Ok((live, catalog))
    }

    /// Checks `--script` and `--lua-dir` against the script keys a pass over several namespaces
    /// (`sessions`, made by `in_namespaces`) used, once it has loaded all of them.
    pub(super) fn check_scripts_used(sessions: &[Session]) -> Result<(), Error> {
        match sessions.first() {
            Some(Session { catalog, scripts_used: Some(pass), .. }) => {
                check_scripts(catalog, &pass.lock().expect("not poisoned"))
            }
            _ => Ok(()),
        }
    }

    /// Plans `stages` of one Rollout against `objects`.
    pub(super) fn plan(
        &self,
        live: &Live,
        catalog: &ScriptCatalog,
        objects: &ObjectIndex,
        rollout: &Located<Rollout>,
        stages: &[Stage],
    ) -> Result<RoutingPlan, Error> {
        self.plan_with(Planner::new(objects, catalog, self.limits), live, rollout, stages)
    }

    /// Plans every stage of one Rollout from its objects as read, to tell where each object
    /// stands (`status`, `restore`'s check for edits).
    pub(super) fn plan_to_place(
        &self,
        live: &Live,
        catalog: &ScriptCatalog,
        rollout: &Located<Rollout>,
    ) -> Result<RoutingPlan, Error> {
        let planner = Planner::new(&live.snapshot.objects, catalog, self.limits).each_stage_from_the_objects_read();
        self.plan_with(planner, live, rollout, &rollout.item.stages())
    }

    /// The notes of `rollout`'s objects that still route as a step although it has no release
    /// in progress, as `status` notes them. What its scripts print placing them is not shown
    /// (the plan's own run shows it), and a failure to place them is left to the plan to report.
    fn routing_left(&self, live: &Live, catalog: &ScriptCatalog, rollout: &Located<Rollout>) -> Vec<String> {
        if status::outside_release(&rollout.item).is_none() {
            return Vec::new();
        }
        let planner = Planner::new(&live.snapshot.objects, catalog, self.limits).each_stage_from_the_objects_read();
        let Ok(cr) = live.snapshot.traffic_routing_of(rollout) else { return Vec::new() };
        match planner.plan_rollout(&rollout.item, &rollout.namespace, cr.map(|c| &c.item), &rollout.item.stages()) {
            Ok(plan) => {
                let cr = cr.map(|c| &c.item);
                status::note_routing_left(&rollout.item, &rollout.namespace, cr, &mut status::positions(&plan))
            }
            Err(_) => Vec::new(),
        }
    }

    fn plan_with(
        &self,
        planner: Planner,
        live: &Live,
        rollout: &Located<Rollout>,
        stages: &[Stage],
    ) -> Result<RoutingPlan, Error> {
        let cr = live.snapshot.traffic_routing_of(rollout)?;
        let plan = planner.plan_rollout(&rollout.item, &rollout.namespace, cr.map(|c| &c.item), stages);
        super::show_printed(&planner.printed());
        let mut plan = plan?;
        plan.notes.push(status_line(&rollout.item));
        plan.notes.extend(rollout.item.spec_not_observed());
        Ok(plan)
    }
}

pub(super) fn selection(args: &RolloutSelection) -> Result<Selection, Error> {
    match &args.selector {
        Some(selector) => Ok(Selection::Selector(selector.clone())),
        None if args.rollouts.is_empty() => {
            Err(Error::Input("name the Rollouts (NAME or rollout/NAME), or select them with -l".into()))
        }
        None => Ok(Selection::Names(args.rollouts.clone())),
    }
}

/// `phase Progressing, step 2/4 StepPaused: <the controller's message>`.
fn status_line(rollout: &Rollout) -> String {
    let status = &rollout.status;
    let mut line = format!("phase {}", status.phase.as_deref().unwrap_or("unknown"));
    if let Some(stage) = rollout.current_stage() {
        line.push_str(&format!(", {}", rollout.stage_label(stage)));
    }
    if let Some(state) = &status.current_step_state {
        line.push_str(&format!(" {state}"));
    }
    if rollout.paused {
        line.push_str(", paused (spec.strategy.paused)");
        // The controller's finalising sequences read no pause (§3.6).
        if Ending::of(rollout).is_some_and(|e| e != Ending::Over) {
            line.push_str(", which does not hold the release's end");
        }
    }
    if let Some(message) = &status.message {
        line.push_str(&format!(": {message}"));
    }
    line
}

pub fn plan(args: &PlanArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let scope = plan_scope(args)?;
        let session = Session::open(&args.cluster, &args.scripts).await?;
        let (sessions, selection) = match &scope {
            Scope::Namespace(selection) => {
                (session.in_namespaces([session.cluster.namespace.as_str()]), selection.clone())
            }
            Scope::AllNamespaces(selector) => super::views::each_namespace(&session, selector.as_deref()).await?,
        };
        // The text is rendered where each plan is made, in the same pass over the cores; a
        // server dry run adds notes to the plans first, so then it is rendered afterwards.
        let render_now = args.output.is_none() && args.dry_run.is_none() && !args.summary;
        let differ = super::diff::differ();
        let style = output::DiffStyle { differ: &differ, stored: super::stored_original(args.show_stored_original) };
        let (mut plans, mut texts, mut errors, mut rejected) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut changed = false;
        let mut configmap_warnings = BTreeSet::new();
        // A namespace at a time, in order: each has its own objects and scripts.
        for session in &sessions {
            let planned = plan_namespace(session, &selection, args, style, render_now, &mut configmap_warnings).await?;
            plans.extend(planned.plans);
            texts.extend(planned.texts);
            errors.extend(planned.errors);
            rejected.extend(planned.rejected);
            changed |= planned.changes_pending;
        }
        Session::check_scripts_used(&sessions)?;
        let failed = match Error::together(errors) {
            Some(error) if plans.is_empty() => return Err(error.into()),
            other => other,
        };
        if plans.is_empty() {
            match scope {
                Scope::AllNamespaces(Some(selector)) => {
                    let error = format!("no Rollouts in any namespace match the selector {selector}");
                    return Err(Error::Input(error).into());
                }
                // As kubectl get: a note, not an error.
                _ => super::views::none_found(&session, &scope),
            }
        }
        // A reader gone takes nothing from the answer: the plans are all made.
        super::read_or_gone(match render_now {
            true => print(&(texts.into_iter().flatten().collect::<String>() + &output::plan_summary(&plans))),
            false => print_plans(&plans, args),
        })?;
        if let Some(failed) = failed {
            return Err(failed.into());
        }
        if let Some(first) = rejected.first() {
            let more = match rejected.len() - 1 {
                0 => String::new(),
                more => format!(", and {more} more, each noted above"),
            };
            return Err(Error::Input(format!("the API server did not accept a planned object ({first}){more}")).into());
        }
        Ok(if changed { Outcome::Changes { detailed_exitcode: args.detailed_exitcode } } else { Outcome::Done })
    })
}

/// Refuses a `--script` or `--lua-dir` script for a kind or class no object of `used` has:
/// it would not run (a typo, most likely).
fn check_scripts(catalog: &ScriptCatalog, used: &BTreeSet<ScriptKey>) -> Result<(), Error> {
    scripts::check_overrides(&catalog.overrides, used).map_err(Error::Input)?;
    scripts::check_lua_dir(&catalog.lua_dir, &catalog.overrides, used).map_err(Error::Input)
}

/// The Rollouts `plan` plans: those named or selected, `--all` of the namespace, or `-A` those
/// of every namespace (with -l, those it selects).
fn plan_scope(args: &PlanArgs) -> Result<Scope, Error> {
    match (args.all_namespaces, args.all) {
        (true, _) => Ok(Scope::AllNamespaces(args.selection.selector.clone())),
        (false, true) => Ok(Scope::Namespace(Selection::All)),
        (false, false) => selection(&args.selection).map(Scope::Namespace).map_err(|e| {
            Error::Input(format!(
                "{e}, or take every Rollout of the namespace with --all (of every namespace: -A); or plan manifest files with -f (no cluster needed)"
            ))
        }),
    }
}

/// What `plan` made of the Rollouts of one namespace.
struct NamespacePlans {
    plans: Vec<RoutingPlan>,
    /// Each plan's text, when rendered as it was made.
    texts: Vec<Option<String>>,
    /// The Rollouts that could not be loaded, planned or found: they do not hide the others.
    errors: Vec<Error>,
    /// The planned objects a server dry run rejected, each with why.
    rejected: Vec<String>,
    /// Whether a plan of a Rollout in a release changes something (`--detailed-exitcode`).
    changes_pending: bool,
}

/// A Rollout's plan, and its text when rendered as it was made.
type PlannedRollout = (RoutingPlan, Option<String>);

/// Plans the Rollouts `selection` picks in the session's namespace.
async fn plan_namespace(
    session: &Session,
    selection: &Selection,
    args: &PlanArgs,
    style: output::DiffStyle<'_>,
    render_now: bool,
    configmap_warnings: &mut BTreeSet<String>,
) -> Result<NamespacePlans, Error> {
    // A Rollout that cannot be loaded, planned or found does not hide the others' plans: its
    // error comes after them, and the exit is 1 (as `kubectl get` with one name not found).
    let (live, catalog, unloaded) = session.load_each(selection).await?;
    live::no_match(&session.cluster, selection, live.snapshot.rollouts.len() + unloaded.len())?;
    // Read only when some kind or Ingress class needs it; not read for this check alone.
    super::warn_unused_configmap_keys(catalog.configmap.as_ref(), configmap_warnings);
    let mut errors: Vec<Error> = unloaded.into_iter().map(|u| Error::Input(u.error)).collect();
    errors.extend(live.not_found(&session.cluster.namespace));
    let shared = live.snapshot.shared_objects();
    let planned: Vec<Result<PlannedRollout, Error>> = live
        .snapshot
        .rollouts
        .par_iter()
        .map(|rollout| {
            let chosen = chosen_stages(&rollout.item, args)?;
            let mut plan = session.plan(&live, &catalog, &live.snapshot.objects, rollout, &chosen.stages)?;
            plan.preview = chosen.preview;
            plan.notes.extend(chosen.note);
            plan.notes.extend(session.routing_left(&live, &catalog, rollout));
            plan.notes.extend(crate::status::off_current_step(&rollout.item, &plan));
            plan.warnings.extend(
                shared.get(&(rollout.namespace.as_str(), rollout.item.name.as_str())).into_iter().flatten().cloned(),
            );
            let text = render_now.then(|| output::plan_block(&plan, style)).transpose().map_err(Error::Input)?;
            Ok((plan, text))
        })
        .collect();
    let (mut plans, mut texts, mut changes_pending) = (Vec::new(), Vec::new(), false);
    for result in planned {
        match result {
            Ok((plan, text)) => {
                changes_pending |= !plan.preview && plan.changed();
                plans.push(plan);
                texts.push(text);
            }
            Err(error) => errors.push(error),
        }
    }
    // Canaries planned together may clash (their texts are re-rendered with the warning).
    let routings: Vec<Routing> = live.snapshot.routings().collect();
    let warned =
        plan::warn_alb_orders_between(&mut plans.iter_mut().collect::<Vec<_>>(), &live.snapshot.objects, &routings);
    for p in warned.into_iter().filter(|_| render_now) {
        texts[p] = Some(output::plan_block(&plans[p], style).map_err(Error::Input)?);
    }
    let rejected = match args.dry_run {
        Some(_) => server_dry_run_report(&session.cluster, &live, &mut plans).await?,
        None => Vec::new(),
    };
    Ok(NamespacePlans { plans, texts, errors, rejected, changes_pending })
}

/// Sends every changed planned object with dryRun=All and notes each verdict on its plan;
/// returns the rejections.
async fn server_dry_run_report(
    cluster: &Cluster,
    live: &Live,
    plans: &mut [RoutingPlan],
) -> Result<Vec<String>, Error> {
    let mut rejections = Vec::new();
    for plan in plans.iter_mut() {
        let mut verdicts = Vec::new();
        for (stage, object) in
            plan.stages.iter().flat_map(|s| s.objects.iter().map(move |o| (s, o))).filter(|(_, o)| o.changed())
        {
            let resource = resource_of(live, &object.key)?;
            let what = format!("{} ({})", stage.object_name(object), stage.label);
            // Admission must accept the planned object: the last change makes it, or for an
            // object the plan creates (nothing a dry run sends is stored), its creation as planned.
            let verdict = match (object.writes().next(), object.writes().last()) {
                (Some(Change::Create { key, .. }), _) => {
                    let made = Change::Create { key: key.clone(), object: Arc::clone(&object.planned) };
                    write::server_dry_run(cluster, resource, &made).await
                }
                (_, Some(change)) => write::server_dry_run(cluster, resource, change).await,
                (_, None) => Ok(()),
            };
            verdicts.push(match verdict {
                Ok(()) => format!("server dry-run accepted {what}"),
                Err(write::DryRunRefusal { forbidden, message }) => {
                    rejections.push(format!("{what}: {message}"));
                    // RBAC's refusal is no admission's: a Role, not the object, is what to change.
                    let verdict = if forbidden { "FORBIDDEN (you may not write it)" } else { "REJECTED" };
                    format!("server dry-run {verdict} {what}: {message}")
                }
            });
        }
        plan.notes.extend(verdicts);
    }
    Ok(rejections)
}

/// Refuses unless the user has `permissions`, and notes the `update` on owners' `finalizers`
/// that creating the objects of `changes` (or making them again to undo) needs where the API
/// server enforces owner-reference permissions. Both are asked at once. A refusal ends with
/// what `advice` says of the missing permissions.
pub(super) async fn check_permissions<'a>(
    cluster: &Cluster,
    permissions: Vec<Permission>,
    changes: impl IntoIterator<Item = &'a Change>,
    advice: impl FnOnce(&[Permission]) -> Option<String>,
) -> Result<(), Error> {
    let owners = owner_permissions(cluster, changes).await?;
    let ((), note) = futures::try_join!(
        write::preflight(cluster, permissions, advice),
        write::owner_reference_note(cluster, owners)
    )?;
    if let Some(note) = note {
        warn(&note);
    }
    Ok(())
}

/// `update` on the `finalizers` of each owner whose deletion an object of `changes` blocks; an
/// owner kind the server does not serve is left out (no Role could grant it).
async fn owner_permissions<'a>(
    cluster: &Cluster,
    changes: impl IntoIterator<Item = &'a Change>,
) -> Result<Vec<(Permission, &'a Change)>, Error> {
    let mut permissions = Vec::new();
    for change in changes {
        for (api_version, kind, name) in change.blocking_owners() {
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
            if let Some(owner) = cluster.resource(group, version, kind, false).await? {
                let finalizers = owner.permission("update", Some("finalizers"), &change.key().namespace).on(name);
                permissions.push((finalizers, change));
            }
        }
    }
    Ok(permissions)
}

pub(super) fn resource_of<'a>(live: &'a Live, key: &ObjectKey) -> Result<&'a Resource, Error> {
    live.resource_of(key).ok_or_else(|| Error::Input(format!("no API resource known for {key}")))
}

/// Refuses to write from stored originals that hold no spec (`(object, annotation)`), unless
/// `force`: writing from one wipes the object's routing.
pub(super) fn refuse_degenerate<'a>(
    found: impl Iterator<Item = (&'a ObjectKey, &'a String)>,
    force: bool,
) -> Result<(), Error> {
    refuse_unless_forced(
        found.map(|(key, text)| format!("{key}: stored original {text}")),
        "these stored originals hold no spec, and writing from them (as the controller would) wipes the objects' routing",
        "Fix the annotation, restore from a backup with --from-backup, or pass --force to write anyway",
        force,
    )
}

/// Refuses writes that leave a stable Service without a rule of its HTTPRoute (each said why),
/// unless `force`: the controller would make them, but the requests those rules matched would
/// no longer reach the Service, and no restore brings the rules back.
pub(super) fn refuse_stranding<'a>(found: impl Iterator<Item = &'a String>, force: bool) -> Result<(), Error> {
    refuse_unless_forced(
        found,
        "these writes, as the controller would make them, leave a Service without a route",
        "Give the route a rule to the Service that the write keeps, or pass --force to write anyway (the object's backup, named when it is written, is then the way back: `restore --from-backup`)",
        force,
    )
}

/// Refuses, unless `force`, writes the controller would make but this tool makes only when
/// forced: `what` they do, one line per object (`found`), then `advice` on how to go on.
pub(super) fn refuse_unless_forced(
    found: impl Iterator<Item = impl std::fmt::Display>,
    what: &str,
    advice: &str,
    force: bool,
) -> Result<(), Error> {
    let lines: Vec<String> = found.map(|line| format!("  {line}")).collect();
    if lines.is_empty() || force {
        return Ok(());
    }
    Err(Error::Refused(format!("nothing was written: {what}:\n{}\n{advice}", lines.join("\n"))))
}

/// Refuses, unless `force`, to write objects (`written`) that a Rollout of the namespace other
/// than those this run works on (`selected`) routes while it is in a release, or that a
/// TrafficRouting of the namespace that none of them links (`linked`) routes while a Rollout
/// holds it, or as it finalises: the write changes that routing, which its controller writes
/// back at its next step or reconcile, or undoes as it restores the original, and nothing else
/// here tells, as neither was read. The namespace's Rollouts and TrafficRoutings are listed for
/// this; where that is not allowed (a Role without `list`), the check is skipped with a warning.
pub(super) async fn refuse_others_routing(
    cluster: &Cluster,
    selected: &BTreeSet<&str>,
    linked: &BTreeSet<&str>,
    written: &BTreeSet<&ObjectKey>,
    force: bool,
) -> Result<(), Error> {
    if written.is_empty() {
        return Ok(());
    }
    let namespace = &cluster.namespace;
    let resource = live::rollout_resource(cluster).await?;
    let traffic_routings_listed = async {
        match live::traffic_routing_resource(cluster).await? {
            Some(resource) => listed_for_check(cluster, &resource, "TrafficRoutings").await,
            None => Ok(Vec::new()),
        }
    };
    let (rollouts_listed, traffic_routings_listed) =
        futures::try_join!(listed_for_check(cluster, &resource, "Rollouts"), traffic_routings_listed)?;
    let mut rollouts = Vec::new();
    for raw in rollouts_listed {
        match Rollout::from_object(&raw) {
            Ok(rollout) => rollouts.push(rollout),
            Err(_) => warn(&format!(
                "warning: Rollout {namespace}/{} does not parse, so whether it routes the objects written is not checked",
                raw["metadata"]["name"].as_str().unwrap_or_default()
            )),
        }
    }
    let mut traffic_routings = Vec::new();
    for raw in traffic_routings_listed {
        match model::TrafficRoutingCr::from_object(&raw) {
            Ok(cr) => traffic_routings.push(cr),
            Err(_) => warn(&format!(
                "warning: TrafficRouting {namespace}/{} does not parse, so whether it routes the objects written is not checked",
                raw["metadata"]["name"].as_str().unwrap_or_default()
            )),
        }
    }
    let mut shared = routed_by_others(&rollouts, namespace, selected, written);
    shared.extend(routed_by_traffic_routings(&traffic_routings, namespace, linked, written));
    if force {
        shared.iter().for_each(|line| warn(&format!("warning: {line}: written all the same (--force)")));
        return Ok(());
    }
    refuse_unless_forced(
        shared.iter(),
        "these objects are also routed by another Rollout in a release, or by a TrafficRouting, whose controller writes them again (its routing at its next step or reconcile, or the original as it finalises), undoing this write",
        "Wait for that release to end (a TrafficRouting's ends once no Rollout holds it), or pass --force to write anyway",
        force,
    )
}

/// The namespace's objects of `resource` (`what`: `Rollouts`), for the check of what else routes
/// the objects written: none, with a warning, where a Role without `list` does not allow it;
/// none where the resource is not served any more (its CRD removed since discovery was cached);
/// any other failure is the run's.
async fn listed_for_check(cluster: &Cluster, resource: &Resource, what: &str) -> Result<Vec<serde_json::Value>, Error> {
    let namespace = &cluster.namespace;
    match cluster.list(resource, namespace, "").await {
        Ok(listed) => Ok(listed),
        Err(Error::Api { failure, .. }) if failure.code == Some(404) => Ok(Vec::new()),
        Err(Error::Api { failure, .. }) if failure.code == Some(403) => {
            warn(&format!(
                "warning: may not list the {what} of namespace {namespace} ({failure}), so whether they route the objects written is not checked"
            ));
            Ok(Vec::new())
        }
        Err(e) => Err(e),
    }
}

/// Each object of `written` that one of `rollouts` (the namespace's) routes while in a release,
/// unless it is one of `selected`: a line naming both.
fn routed_by_others(
    rollouts: &[Rollout],
    namespace: &str,
    selected: &BTreeSet<&str>,
    written: &BTreeSet<&ObjectKey>,
) -> Vec<String> {
    let mut shared = Vec::new();
    for other in rollouts {
        if selected.contains(other.name.as_str()) || !other.releasing() {
            continue;
        }
        let at = match Ending::of(other) {
            Some(ending) => ending.explain(other),
            None => other.current_step_label(),
        };
        for key in Routing::of_rollout(other, namespace).iter().flat_map(Routing::objects) {
            if written.contains(&key) {
                shared.push(format!("{key}: also routed by Rollout {namespace}/{}, in a release ({at})", other.name));
            }
        }
    }
    shared
}

/// Each object of `written` that one of `traffic_routings` (the namespace's) routes in a release
/// (held by a Rollout, or finalising): a line naming both. One the Rollouts of the run link
/// (`linked`) is theirs: what the run writes of it is its routing, or its restore.
fn routed_by_traffic_routings(
    traffic_routings: &[model::TrafficRoutingCr],
    namespace: &str,
    linked: &BTreeSet<&str>,
    written: &BTreeSet<&ObjectKey>,
) -> Vec<String> {
    let mut shared = Vec::new();
    for cr in traffic_routings {
        let routing = Routing::of_traffic_routing(cr, namespace);
        if !routing.releasing || linked.contains(cr.name.as_str()) {
            continue;
        }
        let held: Vec<&str> = cr.progressing_finalizers.iter().map(String::as_str).collect();
        let how = match (cr.being_deleted(), held.is_empty()) {
            (true, _) => "being deleted, so its controller restores the original".to_string(),
            (false, true) => "held by no Rollout, so its controller restores the original".to_string(),
            (false, false) => format!("held by {}", model::holders_text(&held)),
        };
        for key in routing.objects() {
            if written.contains(&key) {
                shared.push(format!("{key}: also routed by TrafficRouting {namespace}/{}, {how}", cr.name));
            }
        }
    }
    shared
}

/// Prints what a writing run did in its mode: `lines` (what was written), or the dry run's
/// verdict (the objects the API server accepted; its rejections are the error).
pub(super) fn print_outcome(writer: &Writer<'_>, lines: &str) -> Result<(), Error> {
    match writer.mode() {
        Mode::ClientDryRun => {
            print(&format!("{}\n", output::paint(output::YELLOW, "dry run (client): nothing was written")))?
        }
        Mode::ServerDryRun => {
            let accepted: String = writer.verdicts()?.iter().map(|line| format!("{line}\n")).collect();
            print(&format!("{accepted}dry run (server): nothing was stored\n"))?;
        }
        Mode::Apply => print(lines)?,
    }
    Ok(())
}

/// The writer's mode for `--dry-run`.
pub(super) fn writer_mode(dry_run: DryRun) -> Mode {
    match dry_run {
        DryRun::None => Mode::Apply,
        DryRun::Client => Mode::ClientDryRun,
        DryRun::Server => Mode::ServerDryRun,
    }
}

/// The stages `plan` shows of a Rollout, and a note when the choice needs explaining.
#[derive(Clone, Debug, PartialEq)]
struct ChosenStages {
    stages: Vec<Stage>,
    note: Option<String>,
    /// Step 1 of a Rollout not in a release: a preview of what its next release would do
    /// first, not a change pending (`--detailed-exitcode` does not count it).
    preview: bool,
}

impl ChosenStages {
    fn new(stages: Vec<Stage>, note: Option<String>) -> ChosenStages {
        ChosenStages { stages, note, preview: false }
    }

    fn preview() -> ChosenStages {
        let note = Some("not in a release: showing what step 1 would do".to_string());
        ChosenStages { stages: vec![Stage::Step(1)], note, preview: true }
    }
}

/// The stages `plan` shows, and why when the choice needs explaining. A release ending or
/// over is past the routing of the step its status still names: by default no step is planned
/// while the controller restores (that restore is `restore`'s to plan), and a Healthy Rollout is
/// not in a release. `--step`, `--next` and `--all-steps` plan what they name.
fn chosen_stages(rollout: &Rollout, args: &PlanArgs) -> Result<ChosenStages, Error> {
    if rollout.not_run().is_some() {
        return Ok(ChosenStages::new(Vec::new(), None)); // The planner says why nothing is planned.
    }
    let count = rollout.steps.len();
    let ending = Ending::of(rollout);
    let restoring = ending.filter(|e| e.restores()).map(|e| e.explain(rollout));
    // A blue-green release blocked by a new version runs no step until the workload is rolled
    // back (§3.6), and restores nothing either.
    let blocked = rollout.blue_green_blocked() && restoring.is_none();
    let stopped = restoring.clone().or_else(|| blocked.then(|| model::BLUE_GREEN_BLOCKED.to_string()));
    let as_asked =
        stopped.as_ref().map(|why| format!("{why}; planned as asked (the controller routes none of the steps now)"));
    if args.all_steps {
        return Ok(ChosenStages::new(rollout.stages(), as_asked));
    }
    if let Some(n) = args.step {
        return Ok(ChosenStages::new(vec![rollout.step_stage(n).map_err(Error::Input)?], as_asked));
    }
    let no_step = stopped.as_ref().map(|why| {
        let args = model::rollout_args(rollout.namespace.as_deref().unwrap_or_default(), &rollout.name);
        // A blue-green release that succeeded routes all traffic to the new version first.
        let route_first = match ending.is_some_and(|e| e.routes_to_new_next(rollout)) {
            true => "--next plans that route to the new version, ",
            false => "",
        };
        let restore = match restoring {
            Some(_) => {
                format!("{route_first}`kubectl rollout-lua restore {args} --dry-run=client` shows that restore; ")
            }
            None => String::new(),
        };
        format!("{why}; no step is planned ({restore}--step N plans a step anyway)")
    });
    let no_step = no_step.or_else(|| {
        let past = rollout.step_past_the_spec().filter(|_| ending.is_none());
        past.map(|why| format!("{why}; no step is planned (--step N plans a step anyway)"))
    });
    let current = rollout.current_stage().filter(|_| ending != Some(Ending::Over));
    // Restarted (a new version mid-release): the controller restored the routing, and step 1
    // is what it routes next, whatever step the status still names.
    if rollout.initializing() && stopped.is_none() {
        return Ok(ChosenStages::new(vec![Stage::Step(1)], Some(format!("{}: planned step 1", model::INITIALIZING))));
    }
    if let Some(jump) = rollout.pending_jump() {
        let jumps = format!(
            "the status's nextStepIndex is {jump} (a jump: a patch, or `kubectl-kruise rollout undo --fast`): the controller goes to step {jump}/{count} at its next reconcile, not on from the current step"
        );
        return Ok(match args.next {
            true => ChosenStages::new(vec![Stage::Step(jump)], Some(format!("{jumps}; planned as --next"))),
            false => ChosenStages::new(current.into_iter().collect(), Some(format!("{jumps}; --next plans it"))),
        });
    }
    if args.next {
        let last = "no next step: the current step is the last; when it completes the controller restores the original routing";
        return Ok(match current {
            Some(Stage::Step(i)) if i < count => ChosenStages::new(vec![Stage::Step(i + 1)], as_asked),
            // Unless the release ends otherwise, or its route to the new version is done.
            Some(Stage::Step(_))
                if rollout.kind == StrategyKind::BlueGreen
                    && !blocked
                    && ending.is_none_or(|e| e.routes_to_new_next(rollout)) =>
            {
                ChosenStages::new(vec![Stage::BlueGreenFinal], as_asked)
            }
            None if no_step.is_none() => ChosenStages::preview(),
            _ => ChosenStages::new(Vec::new(), Some(no_step.unwrap_or_else(|| last.into()))),
        });
    }
    Ok(match (no_step, current) {
        (Some(note), _) => ChosenStages::new(Vec::new(), Some(note)),
        (None, Some(stage)) => ChosenStages::new(vec![stage], None),
        (None, None) => ChosenStages::preview(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Command;
    use crate::cli::testing::{command, status_at as at};
    use Stage::{BlueGreenFinal, Step};
    use serde_json::{Value, json};

    /// `plan demo` with `flags`, as the command line gives it.
    fn plan_args(flags: &[&str]) -> PlanArgs {
        match command(&[&["plan", "demo"], flags].concat()) {
            Command::Plan(args) => args,
            other => panic!("{other:?}"),
        }
    }

    /// Rollout demo with three steps of `strategy` (`canary` or `blueGreen`), spec.disabled
    /// `disabled`, and `status`.
    fn rollout(strategy: &str, disabled: bool, status: Value) -> Rollout {
        let steps = json!([{"replicas": 1, "traffic": "10%"}, {"replicas": 2, "traffic": "50%"},
                           {"replicas": "100%", "traffic": "100%"}]);
        Rollout::from_object(&json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout",
            "metadata": {"name": "demo", "namespace": "shop"},
            "spec": {"disabled": disabled, "strategy": {strategy: {"steps": steps,
                     "trafficRoutings": [{"service": "demo", "gateway": {"httpRouteName": "demo"}}]}}},
            "status": status}))
        .unwrap()
    }

    #[test]
    fn objects_written_that_another_rollout_in_a_release_routes_are_named() {
        let rollout = |name: &str, status: Value| {
            json!({"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": name},
                "spec": {"strategy": {"canary": {"steps": [{"replicas": 1, "traffic": "10%"}],
                         "trafficRoutings": [{"service": "demo", "gateway": {"httpRouteName": "demo"}}]}}},
                "status": status})
        };
        let releasing = json!({"phase": "Progressing", "canaryStatus": {"currentStepIndex": 1}});
        let route = ObjectKey::new("gateway.networking.k8s.io", "HTTPRoute", "shop", "demo");
        let other = ObjectKey::new("gateway.networking.k8s.io", "HTTPRoute", "shop", "other");
        let listed = [
            rollout("demo", releasing.clone()),
            rollout("twin", releasing.clone()),
            rollout("idle", json!({"phase": "Healthy"})),
            rollout("ending", json!({"phase": "Disabling", "canaryStatus": {"currentStepIndex": 1}})),
        ]
        .map(|raw| Rollout::from_object(&raw).unwrap());
        let selected = BTreeSet::from(["demo"]);
        assert_eq!(
            routed_by_others(&listed, "shop", &selected, &BTreeSet::from([&route])),
            [
                "HTTPRoute shop/demo: also routed by Rollout shop/twin, in a release (step 1/1)",
                "HTTPRoute shop/demo: also routed by Rollout shop/ending, in a release (the Rollout is disabled: the controller restores the original routing of a release in progress and runs no step)"
            ],
            "the one selected and one not in a release are left out; an ending is said as what it does"
        );
        assert!(routed_by_others(&listed, "shop", &selected, &BTreeSet::from([&other])).is_empty());
        assert!(
            routed_by_others(&listed, "shop", &BTreeSet::from(["demo", "twin", "ending"]), &BTreeSet::from([&route]))
                .is_empty()
        );
    }

    #[test]
    fn objects_written_that_a_traffic_routing_in_a_release_routes_are_named() {
        let cr = |name: &str, phase: &str, finalizers: Value, deleting: bool| {
            let mut raw = json!({"apiVersion": "rollouts.kruise.io/v1alpha1", "kind": "TrafficRouting",
                "metadata": {"name": name, "finalizers": finalizers},
                "spec": {"objectRef": [{"service": "demo", "gateway": {"httpRouteName": "demo"}}],
                         "strategy": {"weight": 10}},
                "status": {"phase": phase}});
            if deleting {
                raw["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
            }
            model::TrafficRoutingCr::from_object(&raw).unwrap()
        };
        let held_by = |rollouts: &[&str]| {
            json!(rollouts.iter().map(|r| format!("progressing.rollouts.kruise.io/{r}")).collect::<Vec<_>>())
        };
        let route = ObjectKey::new("gateway.networking.k8s.io", "HTTPRoute", "shop", "demo");
        let other = ObjectKey::new("gateway.networking.k8s.io", "HTTPRoute", "shop", "other");
        let listed = [
            cr("b-held", "Progressing", held_by(&["b"]), false),
            cr("idle", "Healthy", json!(["rollouts.kruise.io/trafficrouting"]), false),
            cr("unheld", "Progressing", json!([]), false),
            cr("deleted", "Healthy", json!([]), true),
            cr("ours", "Progressing", held_by(&["demo"]), false),
            cr("shared", "Progressing", held_by(&["demo", "b"]), false),
        ];
        // The run's Rollout demo links ours and shared: what it writes of them is their routing.
        let linked = BTreeSet::from(["ours", "shared"]);
        assert_eq!(
            routed_by_traffic_routings(&listed, "shop", &linked, &BTreeSet::from([&route])),
            [
                "HTTPRoute shop/demo: also routed by TrafficRouting shop/b-held, held by Rollout b (finalizer progressing.rollouts.kruise.io/b)",
                "HTTPRoute shop/demo: also routed by TrafficRouting shop/unheld, held by no Rollout, so its controller restores the original",
                "HTTPRoute shop/demo: also routed by TrafficRouting shop/deleted, being deleted, so its controller restores the original",
            ],
            "one not in a release, and those the run's Rollouts link, are left out"
        );
        // Held by the run's Rollout but not linked: it plans none of that routing.
        assert_eq!(
            routed_by_traffic_routings(&listed[4..5], "shop", &BTreeSet::new(), &BTreeSet::from([&route])),
            [
                "HTTPRoute shop/demo: also routed by TrafficRouting shop/ours, held by Rollout demo (finalizer progressing.rollouts.kruise.io/demo)"
            ]
        );
        assert!(routed_by_traffic_routings(&listed, "shop", &linked, &BTreeSet::from([&other])).is_empty());
    }

    #[test]
    fn the_stages_planned_follow_the_status_and_the_flags() {
        let progressing =
            |reason: &str| json!({"conditions": [{"type": "Progressing", "status": "True", "reason": reason}]});
        let canary = |status: Value| rollout("canary", false, status);
        let blue_green = |status: Value| rollout("blueGreen", false, status);
        let planned = |stages: &[Stage]| ChosenStages::new(stages.to_vec(), None);
        let not_in_release = || ChosenStages {
            stages: vec![Step(1)],
            note: Some("not in a release: showing what step 1 would do".to_string()),
            preview: true,
        };
        // The notes of a release ending: no step planned by default, and those asked for.
        let no_step = |why: &str| {
            ChosenStages::new(
                Vec::new(),
                Some(format!(
                    "{why}; no step is planned (`kubectl rollout-lua restore demo -n shop --dry-run=client` shows that restore; --step N plans a step anyway)"
                )),
            )
        };
        let as_asked = |stages: &[Stage], why: &str| {
            ChosenStages::new(
                stages.to_vec(),
                Some(format!("{why}; planned as asked (the controller routes none of the steps now)")),
            )
        };
        let last = ChosenStages::new(Vec::new(), Some("no next step: the current step is the last; when it completes the controller restores the original routing".to_string()));
        let steps = [Step(1), Step(2), Step(3)];
        let stages = [Step(1), Step(2), Step(3), BlueGreenFinal];
        let finalising = "the release is finalising: the controller restores the original routing";
        let finalising_blue_green = "the release is finalising: the controller routes all traffic to the new version, then restores the original routing";
        let rolled_back = "the release is being rolled back (Cancelling): the controller restores the original routing";
        let routed_to_new = "the release is finalising: the controller has routed all traffic to the new version, and restores the original routing next";
        let disabled = "the Rollout is disabled: the controller restores the original routing of a release in progress and runs no step";
        let deleted = "the Rollout is being deleted: the controller restores the original routing";
        let jumping = |mut rollout: Rollout, next: i64| {
            rollout.status.next_step_index = Some(next);
            rollout
        };
        let jump_to_1 = "the status's nextStepIndex is 1 (a jump: a patch, or `kubectl-kruise rollout undo --fast`): the controller goes to step 1/3 at its next reconcile, not on from the current step";
        // At step `current`, jumping to step 1: the current step planned by default, step 1 as --next.
        let jumps_to_1_from = |current: usize| {
            [
                ChosenStages::new(vec![Step(current)], Some(format!("{jump_to_1}; --next plans it"))),
                ChosenStages::new(vec![Step(1)], Some(format!("{jump_to_1}; planned as --next"))),
                planned(&[Step(2)]),
                planned(&steps),
            ]
        };
        let past = ChosenStages::new(Vec::new(), Some("the status names step 7, past the spec's last, step 3 (the steps were changed since the status was written): which step the release is at is not known until the controller writes its status again; no step is planned (--step N plans a step anyway)".into()));
        // Each Rollout, and what is planned with no flag, --next, --step 2 and --all-steps.
        let cases = [
            (
                "no status",
                canary(json!({})),
                [not_in_release(), not_in_release(), planned(&[Step(2)]), planned(&steps)],
            ),
            (
                "Healthy",
                canary(json!({"phase": "Healthy"})),
                [not_in_release(), not_in_release(), planned(&[Step(2)]), planned(&steps)],
            ),
            (
                "Healthy, the last release's sub-status left",
                canary(at("canary", "Healthy", 3, "Completed", json!({}))),
                [not_in_release(), not_in_release(), planned(&[Step(2)]), planned(&steps)],
            ),
            (
                "at a step past the spec's last",
                canary(at("canary", "Progressing", 7, "StepPaused", progressing("InRolling"))),
                [past.clone(), past, planned(&[Step(2)]), planned(&steps)],
            ),
            (
                "at step 2",
                canary(at("canary", "Progressing", 2, "StepPaused", progressing("InRolling"))),
                [planned(&[Step(2)]), planned(&[Step(3)]), planned(&[Step(2)]), planned(&steps)],
            ),
            (
                "at the last step",
                canary(at("canary", "Progressing", 3, "StepPaused", progressing("InRolling"))),
                [planned(&[Step(3)]), last.clone(), planned(&[Step(2)]), planned(&steps)],
            ),
            (
                "blue-green at the last step",
                blue_green(at("blueGreen", "Progressing", 3, "StepPaused", progressing("InRolling"))),
                [planned(&[Step(3)]), planned(&[BlueGreenFinal]), planned(&[Step(2)]), planned(&stages)],
            ),
            (
                "finalising",
                canary(at("canary", "Progressing", 3, "Completed", progressing("Finalising"))),
                [
                    no_step(finalising),
                    no_step(finalising),
                    as_asked(&[Step(2)], finalising),
                    as_asked(&steps, finalising),
                ],
            ),
            (
                "blue-green finalising",
                blue_green(at("blueGreen", "Progressing", 3, "Completed", progressing("Finalising"))),
                [
                    ChosenStages::new(
                        Vec::new(),
                        Some(format!(
                            "{finalising_blue_green}; no step is planned (--next plans that route to the new version, `kubectl rollout-lua restore demo -n shop --dry-run=client` shows that restore; --step N plans a step anyway)"
                        )),
                    ),
                    as_asked(&[BlueGreenFinal], finalising_blue_green),
                    as_asked(&[Step(2)], finalising_blue_green),
                    as_asked(&stages, finalising_blue_green),
                ],
            ),
            (
                "blue-green finalising, all traffic routed to the new version already",
                blue_green({
                    let mut status = at("blueGreen", "Progressing", 3, "Completed", progressing("Finalising"));
                    status["blueGreenStatus"]["finalisingStep"] = json!("ResumeWorkload");
                    status
                }),
                [
                    no_step(routed_to_new),
                    no_step(routed_to_new),
                    as_asked(&[Step(2)], routed_to_new),
                    as_asked(&stages, routed_to_new),
                ],
            ),
            // Restarted by a new version mid-release: step 1 is what the controller routes next.
            (
                "initializing again, the status at step 2",
                canary(at("canary", "Progressing", 2, "StepPaused", progressing("Initializing"))),
                [
                    ChosenStages::new(vec![Step(1)], Some(format!("{}: planned step 1", model::INITIALIZING))),
                    ChosenStages::new(vec![Step(1)], Some(format!("{}: planned step 1", model::INITIALIZING))),
                    planned(&[Step(2)]),
                    planned(&steps),
                ],
            ),
            // A new version in the middle of a blue-green release: no step runs until a rollback.
            (
                "blue-green blocked at step 1",
                blue_green({
                    let mut status = at("blueGreen", "Progressing", 1, "StepPaused", progressing("InRolling"));
                    status["message"] = json!(
                        "new version releasing detected in the progress of blue-green release, please rollback first"
                    );
                    status
                }),
                [
                    ChosenStages::new(
                        Vec::new(),
                        Some(format!(
                            "{}; no step is planned (--step N plans a step anyway)",
                            model::BLUE_GREEN_BLOCKED
                        )),
                    ),
                    as_asked(&[Step(2)], model::BLUE_GREEN_BLOCKED),
                    as_asked(&[Step(2)], model::BLUE_GREEN_BLOCKED),
                    as_asked(&stages, model::BLUE_GREEN_BLOCKED),
                ],
            ),
            (
                "rolled back at step 2",
                canary(at("canary", "Progressing", 2, "StepPaused", progressing("Cancelling"))),
                [
                    no_step(rolled_back),
                    as_asked(&[Step(3)], rolled_back),
                    as_asked(&[Step(2)], rolled_back),
                    as_asked(&steps, rolled_back),
                ],
            ),
            (
                "disabling at step 2",
                canary(at("canary", "Disabling", 2, "StepPaused", json!({}))),
                [
                    no_step(disabled),
                    as_asked(&[Step(3)], disabled),
                    as_asked(&[Step(2)], disabled),
                    as_asked(&steps, disabled),
                ],
            ),
            (
                "deleted at step 2",
                canary(at("canary", "Terminating", 2, "StepPaused", json!({}))),
                [
                    no_step(deleted),
                    as_asked(&[Step(3)], deleted),
                    as_asked(&[Step(2)], deleted),
                    as_asked(&steps, deleted),
                ],
            ),
            // A patched nextStepIndex: the controller jumps there (back to step 1 here) at once.
            (
                "at step 2, jumping to step 1",
                jumping(canary(at("canary", "Progressing", 2, "StepPaused", json!({}))), 1),
                jumps_to_1_from(2),
            ),
            (
                "at the last step, jumping back",
                jumping(canary(at("canary", "Progressing", 3, "StepPaused", json!({}))), 1),
                jumps_to_1_from(3),
            ),
            // As the controller writes it: no jump (the step after, -1 at the last), nor one it
            // does not take (out of range, or while the release ends).
            (
                "at step 2, next 3",
                jumping(canary(at("canary", "Progressing", 2, "StepPaused", json!({}))), 3),
                [planned(&[Step(2)]), planned(&[Step(3)]), planned(&[Step(2)]), planned(&steps)],
            ),
            (
                "at the last step, next -1",
                jumping(canary(at("canary", "Progressing", 3, "StepPaused", json!({}))), -1),
                [planned(&[Step(3)]), last.clone(), planned(&[Step(2)]), planned(&steps)],
            ),
            (
                "at step 2, next 4 of 3",
                jumping(canary(at("canary", "Progressing", 2, "StepPaused", json!({}))), 4),
                [planned(&[Step(2)]), planned(&[Step(3)]), planned(&[Step(2)]), planned(&steps)],
            ),
            (
                "rolled back at step 2, next 1",
                jumping(canary(at("canary", "Progressing", 2, "StepPaused", progressing("Cancelling"))), 1),
                [
                    no_step(rolled_back),
                    as_asked(&[Step(3)], rolled_back),
                    as_asked(&[Step(2)], rolled_back),
                    as_asked(&steps, rolled_back),
                ],
            ),
            // spec.disabled: the planner says why nothing is planned, whatever is asked.
            (
                "spec.disabled",
                rollout("canary", true, at("canary", "Progressing", 2, "StepPaused", json!({}))),
                [planned(&[]), planned(&[]), planned(&[]), planned(&[])],
            ),
        ];
        for (what, rollout, expected) in cases {
            let flags: [&[&str]; 4] = [&[], &["--next"], &["--step", "2"], &["--all-steps"]];
            for (flags, expected) in flags.into_iter().zip(expected) {
                assert_eq!(chosen_stages(&rollout, &plan_args(flags)).unwrap(), expected, "{what}, {flags:?}");
            }
        }
        let step_4 = chosen_stages(&canary(json!({})), &plan_args(&["--step", "4"]));
        assert!(matches!(step_4, Err(Error::Input(m)) if m == "--step 4: Rollout demo has 3 steps"));
    }
}
