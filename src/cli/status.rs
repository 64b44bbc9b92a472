//! `status`: where Rollouts and their gateway objects stand, once or followed (`-w`), and the
//! follower `approve --until-step` uses between approvals.

use super::claim::claim_of;
use super::cluster::{Session, runtime};
use super::{Outcome, StatusArgs, print, print_raw, term_is_dumb, without_colour_where_off};
use crate::error::Error;
use crate::model::ObjectRef;
use crate::source::cluster::Cluster;
use crate::source::live::{self, Selection};
use crate::status::{Progress, RolloutView, WorkloadView};
use crate::write::Interrupt;
use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant, SystemTime};

/// How often a follower reads the Rollouts again.
const POLL: Duration = Duration::from_secs(2);

/// The Rollouts `status` shows: some of one namespace, or those of every namespace.
#[derive(Clone, Debug)]
pub(super) enum Scope {
    Namespace(Selection),
    /// `-A`: every namespace's Rollouts, or those a label selector picks.
    AllNamespaces(Option<String>),
}

impl Scope {
    fn of(args: &StatusArgs) -> Scope {
        let selection = &args.selection;
        match (&selection.selector, args.all_namespaces) {
            (selector, true) => Scope::AllNamespaces(selector.clone()),
            (Some(selector), false) => Scope::Namespace(Selection::Selector(selector.clone())),
            (None, false) if selection.rollouts.is_empty() => Scope::Namespace(Selection::All),
            (None, false) => Scope::Namespace(Selection::Names(selection.rollouts.clone())),
        }
    }
}

pub fn status(args: &StatusArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let session = Session::open(&args.cluster, &args.scripts).await?;
        let scope = Scope::of(args);
        if !args.watch {
            let views = views(&session, &scope).await?;
            if views.is_empty() {
                // As kubectl get: a note, not an error.
                let place = match scope {
                    Scope::AllNamespaces(_) => "any namespace".to_string(),
                    Scope::Namespace(_) => format!("namespace {}", session.cluster.namespace),
                };
                let _ = writeln!(anstream::stderr(), "No Rollouts found in {place}.");
            }
            match args.output {
                Some(format) => print_raw(&super::offline::render(&serde_json::to_value(&views)?, format))?,
                None => {
                    let mut texts = Vec::new();
                    for view in &views {
                        let mut text = view.text();
                        // A claim only shows; a missing permission to read Leases hides it.
                        if let Ok(Some(holder)) = claim_of(&session.cluster, &view.namespace, &view.name).await {
                            text.push_str(&format!("  claimed by {holder}\n"));
                        }
                        texts.push(text);
                    }
                    print(&texts.join("\n"))?
                }
            }
            return Ok(Outcome::Done);
        }
        let mut follower = Follower::new(args.timeout, Interrupt::listen()?);
        loop {
            let views = follower.next(&session, &scope).await?;
            // --until-paused: every Rollout waits for approval, or has nothing left to wait for.
            let settled = |v: &RolloutView| {
                v.progress.is_final() || (args.until_paused && v.progress == Progress::WaitingForApproval)
            };
            if views.iter().all(settled) {
                follower.finish();
                return match views.iter().find_map(|v| match &v.progress {
                    Progress::Failed { reason } => Some(format!("Rollout {}/{}: {reason}", v.namespace, v.name)),
                    _ => None,
                }) {
                    Some(failure) => Err(Error::Input(failure).into()),
                    None => Ok(Outcome::Done),
                };
            }
        }
    })
}

/// Reads the Rollouts of `scope` and places their objects.
pub(super) async fn views(session: &Session, scope: &Scope) -> Result<Vec<RolloutView>, Error> {
    let selection = match scope {
        Scope::Namespace(selection) => return views_in(session, selection).await,
        Scope::AllNamespaces(Some(selector)) => Selection::Selector(selector.clone()),
        Scope::AllNamespaces(None) => Selection::All,
    };
    // The namespaces that have any, then each namespace's Rollouts with their world.
    let resource = live::rollout_resource(&session.cluster).await?;
    let selector = match &selection {
        Selection::Selector(selector) => selector.as_str(),
        _ => "",
    };
    let found = session.cluster.list(&resource, "", selector).await?;
    let namespaces: BTreeSet<&str> = found.iter().filter_map(|r| r["metadata"]["namespace"].as_str()).collect();
    let sessions: Vec<Session> = namespaces.into_iter().map(|namespace| session.in_namespace(namespace)).collect();
    let views = futures::future::try_join_all(sessions.iter().map(|session| views_in(session, &selection))).await?;
    Ok(views.concat())
}

/// Reads the selected Rollouts of the session's namespace and places their objects (a plan of
/// every stage).
async fn views_in(session: &Session, selection: &Selection) -> Result<Vec<RolloutView>, Error> {
    let (live, catalog) = session.load(selection).await?;
    let workloads = futures::future::join_all(
        live.snapshot.rollouts.iter().map(|r| workload(&session.cluster, r.item.workload.as_ref())),
    )
    .await;
    let now = SystemTime::now();
    Ok(live
        .snapshot
        .rollouts
        .iter()
        .zip(workloads)
        .map(|(rollout, workload)| {
            let plan = session.plan_to_place(&live, &catalog, rollout).map_err(|e| e.to_string());
            RolloutView::new(&rollout.item, &rollout.namespace, plan.as_ref().map_err(Clone::clone), workload, now)
        })
        .collect())
}

/// The workload's replicas, when it can be read (a missing permission only hides them).
async fn workload(cluster: &Cluster, reference: Option<&ObjectRef>) -> Option<WorkloadView> {
    let reference = reference?;
    let resource = cluster.resource(reference.group(), reference.version(), &reference.kind, false).await.ok()??;
    let object = cluster.get(&resource, &cluster.namespace, &reference.name).await.ok()??;
    Some(WorkloadView {
        kind: reference.kind.clone(),
        name: reference.name.clone(),
        replicas: object["status"]["replicas"].as_i64(),
        ready_replicas: object["status"]["readyReplicas"].as_i64(),
    })
}

/// Follows Rollouts: reads them every couple of seconds and shows them, redrawn in place on a
/// terminal, or as one line per change otherwise (logs, CI).
pub(super) struct Follower {
    /// SIGINT and SIGTERM, listened for from the start so that they never cut a write short:
    /// they are noticed while waiting.
    interrupt: Interrupt,
    deadline: Option<Instant>,
    timeout: Duration,
    terminal: bool,
    /// Terminal rows drawn last time (to redraw over them).
    drawn: usize,
    last_lines: Vec<String>,
    first: bool,
}

impl Follower {
    pub(super) fn new(timeout: Duration, interrupt: Interrupt) -> Follower {
        Follower {
            interrupt,
            deadline: (!timeout.is_zero()).then(|| Instant::now() + timeout),
            timeout,
            terminal: std::io::stdout().is_terminal() && !term_is_dumb(),
            drawn: 0,
            last_lines: Vec::new(),
            first: true,
        }
    }

    /// The next views, shown; waits between reads, and fails on timeout or a signal.
    pub(super) async fn next(&mut self, session: &Session, scope: &Scope) -> Result<Vec<RolloutView>, Error> {
        if !self.first {
            self.wait().await?;
        }
        self.first = false;
        // The deadline holds while a read is in flight too.
        let reading = views(session, scope);
        let views = match self.deadline {
            Some(deadline) => {
                tokio::time::timeout_at(deadline.into(), reading).await.map_err(|_| self.timed_out())??
            }
            None => reading.await?,
        };
        self.show(&views)?;
        Ok(views)
    }

    fn timed_out(&self) -> Error {
        Error::TimedOut(format!("timed out after {}", crate::time::human(self.timeout)))
    }

    async fn wait(&mut self) -> Result<(), Error> {
        if let Some(signal) = self.interrupt.received().await {
            return Err(Error::Interrupted { signal, report: "stopped following".into() });
        }
        let pause = match self.deadline {
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(self.timed_out());
                }
                left.min(POLL)
            }
            None => POLL,
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => Ok(()),
            signal = self.interrupt.wait_for(1) => Err(Error::Interrupted { signal, report: "stopped following".into() }),
        }
    }

    fn show(&mut self, views: &[RolloutView]) -> std::io::Result<()> {
        if self.terminal {
            let text: String = views.iter().map(RolloutView::text).collect::<Vec<_>>().join("\n");
            // Move up over what was drawn and clear it: the display stays in place. Cursor moves
            // are not colour: NO_COLOR and --no-color keep them.
            let mut frame = if self.drawn > 0 { format!("\x1b[{}F\x1b[J", self.drawn) } else { String::new() };
            frame.push_str(&without_colour_where_off(&text));
            self.drawn = rows(&text);
            print_raw(&frame)
        } else {
            let stamp = crate::time::rfc3339(SystemTime::now());
            for (index, view) in views.iter().enumerate() {
                let line = view.line();
                if self.last_lines.get(index) != Some(&line) {
                    print_raw(&format!("{stamp} {line}\n"))?;
                }
            }
            self.last_lines = views.iter().map(RolloutView::line).collect();
            Ok(())
        }
    }

    /// Leaves the last display where it is.
    pub(super) fn finish(&mut self) {
        self.drawn = 0;
        let _ = std::io::stdout().flush();
    }

    /// Stops redrawing over what is on screen (other output follows).
    pub(super) fn detach(&mut self) {
        self.drawn = 0;
    }
}

/// Terminal rows `text` takes, with long lines wrapping at the terminal's width.
fn rows(text: &str) -> usize {
    let width = terminal_size::terminal_size().map_or(80, |(w, _)| usize::from(w.0)).max(1);
    anstream::adapter::strip_str(text).to_string().lines().map(|line| line.chars().count().div_ceil(width).max(1)).sum()
}
