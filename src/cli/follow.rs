//! Following Rollouts (`status -w`, `approve --until-step/--to-end`): a watch on the Rollouts
//! and one on each resource of the gateway objects they route through (per namespace), the
//! Rollouts that changed (or whose objects did) read again on each change (everything every 30
//! seconds), and shown as a live view on a terminal (rows drawn in place on stderr), as a line
//! per change (logs, CI, `TERM=dumb`) or, with `-o json|yaml`, as each Rollout's document per
//! change. Following ends with an error when a Rollout followed is deleted or made again; it
//! outlasts a server that fails to answer for a while.

use super::cluster::Session;
use super::views::{Missing, Read, Scope, Since, views};
use super::{Format, print, print_raw, term_is_dumb};
use crate::error::{Error, Signal};
use crate::model::{ObjectRef, Stage};
use crate::output::{YELLOW, paint};
use crate::source::live::Selection;
use crate::source::watch::{Changes, GatewayWatch, RolloutWatch, Routed};
use crate::status::{Progress, RolloutView, pause_left, progress_style};
use crate::write::Interrupt;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant, SystemTime};

/// How often everything is read again: a gateway object may not be watched (or changed between
/// its read and the start of its watch), a change of a Rollout reads only its own, and approve
/// renews its claims between reads.
const RESYNC: Duration = Duration::from_secs(30);

/// How often the live view is made again, its spinners turned and its countdowns counted: it is
/// written only when it changed (`stderr::draw_live_view`), which a countdown does once a second
/// and a spinner at each tick, 4 times a second.
const TICK: Duration = Duration::from_millis(250);

/// The wait before trying again after a request of the follow-up failed on the way (no
/// answer, or a busy server's); it doubles with each failure in a row, up to `RETRY_AT_MOST`.
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_AT_MOST: Duration = Duration::from_secs(30);

/// Follows Rollouts: shows them, then waits for a change and shows them again.
pub(super) struct Follower {
    bounds: Bounds,
    /// Started at the first read.
    watch: Option<RolloutWatch>,
    /// The gateway objects of the Rollouts followed: started at the first read, and told of the
    /// objects at each.
    gateways: Option<GatewayWatch>,
    /// The Rollouts followed, as each was first read.
    followed: Followed,
    /// The views last read, and shown unless the output was closed: a change of some Rollouts
    /// leaves the others' as they are.
    last: Vec<RolloutView>,
    /// When everything was last read (`RESYNC`).
    all_read: Instant,
    /// What may be stale in the views (a change was seen, or the wait for one failed) and was
    /// not read since: it is read before waiting for another change.
    unread: Option<Changes>,
    /// While requests fail on the way: the last wait before trying again.
    retrying: Option<Duration>,
    /// Whether the warning that the Rollouts are polled was given.
    polling_said: bool,
    display: Display,
}

/// A closed output (`| head`) ends a follow where it stands, short of its goal (an approve
/// sequence's later pauses, a status -w's end): that must not pass for the goal (a gate in a
/// script), as a closed pipe passes elsewhere. `what`: where it was cut short, and what of it.
pub(super) fn cut_short(error: Error, what: &str) -> Error {
    match error {
        Error::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Error::Output(std::io::Error::other(format!("the output was closed ({e}) {what}")))
        }
        other => other,
    }
}

/// What ends following from outside: the deadline, and SIGINT, SIGTERM and SIGHUP, listened
/// for from the start so that they never cut a write short; following itself writes nothing,
/// so they end it at once, also during a read.
struct Bounds {
    interrupt: Interrupt,
    deadline: Option<Instant>,
    timeout: Duration,
}

impl Follower {
    /// A follower that gives up after `timeout` (zero: never), and shows the Rollouts as
    /// documents in `output` when given (else for people).
    pub(super) fn new(timeout: Duration, interrupt: Interrupt, output: Option<Format>) -> Follower {
        Follower {
            bounds: Bounds { interrupt, deadline: (!timeout.is_zero()).then(|| Instant::now() + timeout), timeout },
            watch: None,
            gateways: None,
            followed: Followed::default(),
            last: Vec::new(),
            all_read: Instant::now(),
            unread: None,
            retrying: None,
            polling_said: false,
            display: Display::new(output),
        }
    }

    /// The views after the next change (at first, at once), shown; fails on timeout or a
    /// signal, when a Rollout followed is deleted (or made again), and when the first read finds
    /// none. The live view stops where it is on a failure, so that the message follows it.
    pub(super) async fn next(&mut self, session: &Session, scope: &Scope) -> Result<Vec<RolloutView>, Error> {
        let next = self.advance(session, scope).await;
        if next.is_err() {
            self.display.stop();
        }
        next
    }

    async fn advance(&mut self, session: &Session, scope: &Scope) -> Result<Vec<RolloutView>, Error> {
        let views = match self.watch {
            None => self.first_views(session, scope).await?,
            Some(_) => self.views_after_change(session, scope).await?,
        };
        self.followed.check(&views, scope)?;
        // Kept before it is shown: an output closed meanwhile is told where the Rollouts stand.
        self.last.clone_from(&views);
        self.display.show(&views)?;
        self.say_gateways_unwatched();
        Ok(views)
    }

    /// The views last read (empty before the first read); the last shown too, unless showing
    /// them failed.
    pub(super) fn last_read(&self) -> &[RolloutView] {
        &self.last
    }

    /// The first read, after the LIST the watch starts from (so that no change after the read
    /// is missed), and then the LISTs of the gateway objects' watches; the watches themselves are
    /// opened by the first wait, after these views are shown.
    /// A failure ends following: nothing is shown yet, and a server that cannot be reached is
    /// said at once.
    async fn first_views(&mut self, session: &Session, scope: &Scope) -> Result<Vec<RolloutView>, Error> {
        let (namespace, selection) = match scope {
            Scope::Namespace(selection) => (session.cluster.namespace.as_str(), selection.clone()),
            Scope::AllNamespaces(Some(selector)) => ("", Selection::Selector(selector.clone())),
            Scope::AllNamespaces(None) => ("", Selection::All),
        };
        let start = RolloutWatch::start(&session.cluster, namespace, &selection);
        self.watch = Some(self.bounds.run(&mut self.display, start).await?);
        self.say_polling();
        // Not over every namespace: a watch per resource and namespace could be hundreds of
        // connections; there the gateway objects are read again with everything.
        if let Scope::Namespace(_) = scope {
            self.gateways = Some(GatewayWatch::new(&session.cluster));
        }
        let read = read_and_watch(session, scope, Read::all(Missing::Fails), self.gateways.as_mut());
        let views = self.bounds.run(&mut self.display, read).await?;
        self.all_read = Instant::now();
        if views.is_empty() {
            return Err(Error::Input(nothing_to_follow(scope, &session.cluster.namespace)));
        }
        Ok(views)
    }

    /// The views after the next change: those of the Rollouts changed read again (all of them
    /// when what changed is not known). A request that failed on the way (no answer: a
    /// connection refused or dropped, a timeout; or a busy server's 429 or 5xx beyond its own
    /// retries) is like a dropped watch: the last views stay, a warning says so once, and the
    /// wait for a change (the watch opened again from the version seen) and the read are tried
    /// again, less and less often, until they work, the deadline or a signal. Any other answer
    /// (401, 403, 404, …) ends following.
    async fn views_after_change(&mut self, session: &Session, scope: &Scope) -> Result<Vec<RolloutView>, Error> {
        loop {
            if self.unread.is_none() {
                let waited = self.wait().await;
                self.say_polling();
                self.say_gateways_unwatched();
                match waited {
                    Ok(changes) => {
                        self.unread = Some(changes);
                        self.retrying = None;
                    }
                    Err(error) => {
                        // Read after a failed wait too: the views may be stale, and reads may
                        // work while the watch does not.
                        self.unread = Some(Changes::Unknown);
                        self.retry_after(error).await?;
                    }
                }
            }
            let since = match &self.unread {
                Some(Changes::Rollouts(changed)) => Some(Since { last: &self.last, changed }),
                _ => None,
            };
            // A Rollout named and gone since is left out: `Followed::check` says it was deleted.
            let read = Read { missing: Missing::LeftOut, claims: false, since };
            let read = read_and_watch(session, scope, read, self.gateways.as_mut());
            match self.bounds.run(&mut self.display, read).await {
                Ok(views) => {
                    if since.is_none() {
                        self.all_read = Instant::now();
                    }
                    self.unread = None;
                    return Ok(views);
                }
                Err(error) => self.retry_after(error).await?,
            }
        }
    }

    /// Waits for a change of a Rollout or of an object one routes through (or `RESYNC` after
    /// everything was last read), moving the live view meanwhile.
    async fn wait(&mut self) -> Result<Changes, Error> {
        let Follower { bounds, watch, gateways, display, all_read, .. } = self;
        let Some(watch) = watch else { return Ok(Changes::Unknown) };
        let gateways_changed = async {
            match gateways {
                Some(gateways) => gateways.changed().await,
                None => std::future::pending().await,
            }
        };
        // Each loser is dropped with nothing lost: a watch returns what it received at once.
        let changed = async {
            tokio::select! {
                changed = watch.changed() => changed,
                changed = gateways_changed => Ok(changed),
                () = tokio::time::sleep_until((*all_read + RESYNC).into()) => Ok(Changes::Unknown),
            }
        };
        bounds.run(display, changed).await
    }

    /// Waits before trying again after `error`, when it failed on the way (else returns it);
    /// the first failure of a row is told. A row ends when waiting for a change works again.
    async fn retry_after(&mut self, error: Error) -> Result<(), Error> {
        if !failed_on_the_way(&error) {
            return Err(error);
        }
        let wait = match self.retrying {
            Some(last) => (last * 2).min(RETRY_AT_MOST),
            None => {
                self.display.say(&paint(
                    YELLOW,
                    &format!(
                        "warning: {error}; following goes on: retrying after {}, then up to every {}, until it works, --timeout passes or a signal stops it",
                        crate::time::human(RETRY_FIRST),
                        crate::time::human(RETRY_AT_MOST)
                    ),
                ));
                RETRY_FIRST
            }
        };
        self.retrying = Some(wait);
        let sleep = async {
            tokio::time::sleep(wait).await;
            Ok(())
        };
        self.bounds.run(&mut self.display, sleep).await
    }

    /// Warns, once, that the Rollouts are read every 2s: watching (or listing) them was
    /// forbidden, when following started or when the watch was opened again.
    fn say_polling(&mut self) {
        let Some(why) = self.watch.as_ref().and_then(RolloutWatch::polling) else { return };
        if !self.polling_said {
            self.polling_said = true;
            self.display.say(&paint(YELLOW, &format!("{why}: reading the Rollouts every 2s instead")));
        }
    }

    /// Warns, once per resource, that gateway objects are not watched where listing or
    /// watching them is forbidden: their changes are seen at the next full read.
    fn say_gateways_unwatched(&mut self) {
        for why in self.gateways.as_mut().map(GatewayWatch::unsaid_forbidden).unwrap_or_default() {
            let every = crate::time::human(RESYNC);
            self.display
                .say(&paint(YELLOW, &format!("{why}: reading them again with everything every {every} instead")));
        }
    }

    /// Leaves the last display where it is.
    pub(super) fn finish(&mut self) {
        self.display.stop();
    }

    /// Takes the live view off the screen: other output follows, and the next views are drawn
    /// after it.
    pub(super) fn detach(&mut self) {
        self.display.clear();
    }

    /// The next views are every Rollout read afresh, at once: this run changes them (an
    /// approval), and no view from before may stand for one.
    pub(super) fn read_all_next(&mut self) {
        self.unread = Some(Changes::Unknown);
    }
}

impl Bounds {
    /// `work`, within the deadline, and dropped where it stands on a signal: following writes
    /// nothing, so a read in flight need not end first. The live view moves meanwhile.
    async fn run<T>(&self, display: &mut Display, work: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
        tokio::pin!(work);
        let until = until(self.deadline);
        tokio::pin!(until);
        let mut tick = tokio::time::interval(TICK);
        loop {
            tokio::select! {
                biased;
                signal = self.interrupt.wait_for(1) => return Err(stopped(signal)),
                () = &mut until => return Err(self.timed_out()),
                result = &mut work => return result,
                _ = tick.tick() => display.tick(),
            }
        }
    }

    fn timed_out(&self) -> Error {
        Error::TimedOut(format!("timed out after {}", crate::time::go_duration(self.timeout)))
    }
}

/// Reads the views of `read`, then watches the gateway objects they route through from now on
/// (the Rollouts' changes are watched already).
async fn read_and_watch(
    session: &Session,
    scope: &Scope,
    read: Read<'_>,
    gateways: Option<&mut GatewayWatch>,
) -> Result<Vec<RolloutView>, Error> {
    let views = views(session, scope, read).await?;
    if let Some(gateways) = gateways {
        // Its objects as placed (at the version they were read), else those its routings name:
        // one missing, or that its script fails on, is seen when it is made or changed, not at
        // the next full read.
        let routed = views.iter().flat_map(|view| {
            let references: Vec<ObjectRef> = match &view.objects {
                Ok(objects) => objects
                    .iter()
                    .map(|object| ObjectRef {
                        api_version: object.api_version.clone(),
                        kind: object.kind.clone(),
                        name: object.name.clone(),
                    })
                    .collect(),
                Err(_) => view.routes_through.clone(),
            };
            references.into_iter().map(|reference| Routed {
                reference,
                namespace: view.namespace.clone(),
                rollout: (view.namespace.clone(), view.name.clone()),
            })
        });
        gateways.follow(routed).await;
    }
    Ok(views)
}

/// Whether `error` is a request that failed on the way, and may work when sent again: no
/// answer (a connection refused or dropped, a timeout, a reply cut short), or a busy server's
/// (429, or a 5xx of a gateway or an overloaded server). Any other answer is the server's word.
fn failed_on_the_way(error: &Error) -> bool {
    matches!(error, Error::Api { failure, .. } if failure.code.is_none_or(|code| matches!(code, 429 | 500 | 502 | 503 | 504)))
}

/// The error of a first read that found no Rollout, as `kubectl wait` words it: there is
/// nothing to wait for, and a gate that passed on nothing would pass on a typo.
fn nothing_to_follow(scope: &Scope, namespace: &str) -> String {
    let what = match scope {
        Scope::Namespace(Selection::Selector(selector)) => {
            format!("no Rollouts in namespace {namespace} match the selector {selector}")
        }
        Scope::AllNamespaces(Some(selector)) => format!("no Rollouts in any namespace match the selector {selector}"),
        Scope::Namespace(_) => format!("no Rollouts in namespace {namespace}"),
        Scope::AllNamespaces(None) => "no Rollouts in any namespace".into(),
    };
    format!("no matching resources found: {what}")
}

/// Each Rollout followed, by namespace and name, with its uid as it was first read: one that
/// is gone, or made again under its name, ends following, since its release is no longer the
/// one followed (and all of none would count as done).
#[derive(Default)]
struct Followed(BTreeMap<(String, String), String>);

impl Followed {
    /// Compares `views` with the Rollouts followed, and follows those read for the first time.
    fn check(&mut self, views: &[RolloutView], scope: &Scope) -> Result<(), Error> {
        let read: BTreeMap<(&str, &str), &str> =
            views.iter().map(|v| ((v.namespace.as_str(), v.name.as_str()), v.uid.as_str())).collect();
        for ((namespace, name), uid) in &self.0 {
            match read.get(&(namespace.as_str(), name.as_str())) {
                None => {
                    let relabelled = match scope {
                        Scope::Namespace(Selection::Selector(selector)) | Scope::AllNamespaces(Some(selector)) => {
                            format!(", or its labels no longer match the selector {selector}")
                        }
                        _ => String::new(),
                    };
                    return Err(Error::Input(format!("Rollout {namespace}/{name} was deleted{relabelled}")));
                }
                // A Rollout that does not parse has no uid to compare.
                Some(now) if !now.is_empty() && !uid.is_empty() && now != uid => {
                    return Err(Error::Input(format!(
                        "Rollout {namespace}/{name} was deleted and made again (uid {uid}, now {now}): its release is not the one followed"
                    )));
                }
                Some(_) => {}
            }
        }
        for ((namespace, name), uid) in read {
            let followed = self.0.entry((namespace.to_string(), name.to_string())).or_default();
            if followed.is_empty() {
                *followed = uid.to_string();
            }
        }
        Ok(())
    }
}

/// Ends at `deadline`; never without one.
async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}

fn stopped(signal: Signal) -> Error {
    Error::Interrupted { signal, report: "stopped following".into() }
}

/// Where views are shown.
struct Display {
    /// On a terminal (stderr, and not `TERM=dumb`): a live view.
    live: Option<LiveView>,
    /// Otherwise, or when stdout is not that terminal: a timestamped line per change on stdout;
    /// the line last printed of each Rollout (by namespace and name: one made or gone meanwhile
    /// moves the others in the list, not their lines).
    lines: Option<BTreeMap<(String, String), String>>,
    /// With `-o json|yaml`, instead of both: each Rollout's document when it changed.
    documents: Option<Documents>,
}

impl Display {
    fn new(output: Option<Format>) -> Display {
        if let Some(format) = output {
            // Stdout is data: no line for people in it, nor a view drawn among the warnings.
            return Display { live: None, lines: None, documents: Some(Documents { format, last: BTreeMap::new() }) };
        }
        // A terminal that can move its cursor: one with a TERM that is not dumb.
        let live = std::io::stderr().is_terminal() && std::env::var_os("TERM").is_some() && !term_is_dumb();
        Display {
            live: live.then(LiveView::default),
            lines: (!live || !std::io::stdout().is_terminal()).then(BTreeMap::new),
            documents: None,
        }
    }

    fn show(&mut self, views: &[RolloutView]) -> std::io::Result<()> {
        if let Some(documents) = &mut self.documents {
            for document in documents.changed(views).map_err(std::io::Error::other)? {
                print_raw(&documents.render(&document))?;
            }
        }
        if let Some(live) = &mut self.live {
            live.show(views);
        }
        if let Some(last) = &mut self.lines {
            let stamp = crate::time::rfc3339(SystemTime::now());
            let mut lines = BTreeMap::new();
            for view in views {
                let (key, line) = ((view.namespace.clone(), view.name.clone()), view.line());
                if last.get(&key) != Some(&line) {
                    print(&format!("{stamp} {line}\n"))?;
                }
                lines.insert(key, line);
            }
            *last = lines;
        }
        Ok(())
    }

    fn tick(&mut self) {
        if let Some(live) = &mut self.live {
            live.tick();
        }
    }

    /// Says `text` on stderr, above the live view (drawn again under it).
    fn say(&self, text: &str) {
        crate::stderr::line(text);
    }

    fn stop(&mut self) {
        if let Some(live) = &mut self.live {
            live.stop();
        }
    }

    fn clear(&mut self) {
        if let Some(live) = &mut self.live {
            live.clear();
        }
    }
}

/// Each Rollout's document as `status -o json|yaml` prints it, when it changed: JSON a compact
/// one per line (JSON Lines), YAML each after a `---`.
struct Documents {
    format: Format,
    /// Each Rollout's document last printed, by namespace and name, without its countdown.
    last: BTreeMap<(String, String), Value>,
}

impl Documents {
    /// The documents of `views` that changed since they were last printed (at first, all).
    /// A timed pause's `secondsLeft` is left out of the comparison: it is counted at each read,
    /// and would make each one a change (as the line per change has no countdown).
    fn changed(&mut self, views: &[RolloutView]) -> serde_json::Result<Vec<Value>> {
        let mut changed = Vec::new();
        for view in views {
            let document = serde_json::to_value(view)?;
            let mut compared = document.clone();
            if let Some(progress) = compared.get_mut("progress").and_then(Value::as_object_mut) {
                progress.remove("secondsLeft");
            }
            let key = (view.namespace.clone(), view.name.clone());
            if self.last.get(&key) != Some(&compared) {
                self.last.insert(key, compared);
                changed.push(document);
            }
        }
        Ok(changed)
    }

    fn render(&self, document: &Value) -> String {
        match self.format {
            Format::Json => format!("{}\n", crate::gojson::to_string(document)),
            Format::Yaml => format!("---\n{}", crate::yaml::to_string(document)),
        }
    }
}

/// The live view: per Rollout a row with a spinner (while the controller moves it on), its
/// name, the step as a bar and what the step does; under it, during a timed pause, the
/// countdown as a bar. Drawn through `crate::stderr`, so that every other line on stderr is
/// written above it.
#[derive(Default)]
struct LiveView {
    /// The Rollouts as last read, and when each was (its countdown goes on from there); none
    /// until the first views, and after `stop` or `clear`.
    views: Vec<RolloutView>,
    read: Vec<Instant>,
    /// How many times the spinners have turned.
    turns: usize,
}

impl LiveView {
    fn show(&mut self, views: &[RolloutView]) {
        // A timed pause's count as read before (a view kept while others were read again)
        // goes on from when it was read.
        let count = |view: &RolloutView| match &view.progress {
            Progress::Paused { pause_seconds, seconds_left: Some(left) } => Some((*pause_seconds, *left)),
            _ => None,
        };
        let now = Instant::now();
        self.read = views
            .iter()
            .map(|view| {
                let same = |(old, _): &(&RolloutView, &Instant)| {
                    (&old.namespace, &old.name) == (&view.namespace, &view.name) && count(old) == count(view)
                };
                self.views.iter().zip(&self.read).find(same).map_or(now, |(_, read)| *read)
            })
            .collect();
        self.views = views.to_vec();
        self.draw();
    }

    /// Turns the spinners and counts the pauses down.
    fn tick(&mut self) {
        if !self.views.is_empty() {
            self.turns += 1;
            self.draw();
        }
    }

    /// Draws the rows that fit in the terminal's height: the view is redrawn from its first
    /// row, which the cursor cannot go back to once it has scrolled off the screen.
    fn draw(&self) {
        let (height, _) = crate::stderr::terminal_size();
        let rows = fit_height(&self.views, self.rows(Some(self.turns)), height);
        crate::stderr::draw_live_view(&rows);
    }

    /// The rows of each Rollout as they stand now.
    fn rows(&self, turn: Option<usize>) -> Vec<Vec<String>> {
        self.views.iter().zip(&self.read).map(|(view, read)| rows(view, self.width(), read.elapsed(), turn)).collect()
    }

    /// The width of the Rollouts' names, which line their bars up.
    fn width(&self) -> usize {
        self.views.iter().map(|v| v.namespace.chars().count() + 1 + v.name.chars().count()).max().unwrap_or(0)
    }

    /// Leaves what is drawn, with every Rollout and the spinners stopped, and draws no more;
    /// what follows starts on a line of its own.
    fn stop(&mut self) {
        if !self.views.is_empty() {
            crate::stderr::leave_live_view(&self.rows(None).concat());
            self.views.clear();
            self.read.clear();
        }
    }

    fn clear(&mut self) {
        crate::stderr::erase_live_view();
        self.views.clear();
        self.read.clear();
    }
}

/// The frames of a spinner.
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// How many columns a bar fills inside its brackets.
const BAR: usize = 20;

/// The rows of `view` (its name padded to `width`), read `elapsed` ago: a row with the spinner
/// at `turn` (None, or a Rollout that does not [spin](spins): a blank), its name, its step as a
/// bar and what the step does; under it, during a timed pause, the countdown as a bar.
fn rows(view: &RolloutView, width: usize, elapsed: Duration, turn: Option<usize>) -> Vec<String> {
    let key = format!("{}/{}", view.namespace, view.name);
    let spinner = match turn {
        Some(turn) if spins(&view.progress) => SPINNER[turn % SPINNER.len()],
        _ => ' ',
    };
    let of = view.step_count as u64;
    let (steps, step) = match position(view) {
        Some(at) => (bar(at, of), format!("{at}/{of}")),
        None => (bar(0, of), "-".into()),
    };
    let mut rows = vec![format!("{spinner} {key:<width$}  [{steps}] step {step}  {}", message(view))];
    if let Progress::Paused { pause_seconds, seconds_left: Some(left) } = &view.progress {
        let left = left - elapsed.as_secs() as i64;
        let done = pause_seconds.saturating_sub(left.max(0).unsigned_abs());
        rows.push(format!("  {:width$}  [{}] {}", "", bar(done, *pause_seconds), pause_left(left)));
    }
    rows
}

/// Whether a Rollout's row has a spinner: while the controller moves it on and nothing else on
/// the row moves. Not during a timed pause, whose countdown moves each second; not while it
/// waits for an approval, where a spinner would say that something is under way, nor once it is
/// done: a still view then costs no redraw (a lost server is warned of above it).
fn spins(progress: &Progress) -> bool {
    matches!(progress, Progress::Progressing | Progress::Finalising | Progress::Paused { seconds_left: None, .. })
}

/// The rows of `views` (`rows`, each Rollout's) in at most `height` lines: all, in their order,
/// when they fit; else those that matter first (failed, then waiting for approval, then
/// releasing, then done or not releasing; in their order within each), as many as fit, and a
/// last line that counts the Rollouts left out.
fn fit_height(views: &[RolloutView], rows: Vec<Vec<String>>, height: usize) -> Vec<String> {
    if rows.iter().map(Vec::len).sum::<usize>() <= height {
        return rows.concat();
    }
    let mut order: Vec<usize> = (0..views.len()).collect();
    order.sort_by_key(|&index| standing(&views[index].progress).0);
    let mut shown = Vec::new();
    let mut hidden: BTreeMap<(u8, &str), usize> = BTreeMap::new();
    for index in order {
        let fits = hidden.is_empty() && shown.len() + rows[index].len() < height;
        match fits {
            true => shown.extend(rows[index].iter().cloned()),
            false => *hidden.entry(standing(&views[index].progress)).or_default() += 1,
        }
    }
    let count: usize = hidden.values().sum();
    let each: Vec<String> = hidden.iter().map(|((_, what), n)| format!("{n} {what}")).collect();
    let rollouts = if count == 1 { "Rollout" } else { "Rollouts" };
    shown.push(format!("… and {count} more {rollouts} ({})", each.join(", ")));
    shown
}

/// How soon a Rollout's rows are shown in a view taller than the terminal (the lowest first),
/// and what it is counted as when they are left out.
fn standing(progress: &Progress) -> (u8, &'static str) {
    match progress {
        Progress::Failed { .. } => (0, "failed"),
        Progress::WaitingForApproval => (1, "waiting for approval"),
        Progress::Progressing | Progress::SpecNotObserved => (2, "progressing"),
        Progress::Paused { .. } => (2, "paused"),
        Progress::Finalising => (2, "finalising"),
        Progress::Completed => (3, "completed"),
        Progress::NotInRelease => (3, "not releasing"),
    }
}

/// `at` of `of` as a bar: `=` for what is done, `>` at its head.
fn bar(at: u64, of: u64) -> String {
    let filled = (at.min(of) * BAR as u64).checked_div(of).unwrap_or(0) as usize;
    let head = usize::from(at > 0 && filled < BAR);
    format!("{}{}{}", "=".repeat(filled), ">".repeat(head), " ".repeat(BAR - filled - head))
}

/// What the step row says: the progress (a timed pause counts down on a row of its own), and
/// what the step does.
fn message(view: &RolloutView) -> String {
    let progress = match &view.progress {
        Progress::Paused { seconds_left: Some(_), .. } => "paused".to_string(),
        other => other.describe(),
    };
    let mut message = paint(progress_style(&view.progress), &progress);
    if let Some(does) = view.step_does.as_deref().filter(|_| !view.progress.is_final()) {
        message.push_str(&format!(": {does}"));
    }
    for_stderr(&message)
}

/// Where the step bar stands: at the current step, full once the steps are done; None for a
/// Rollout not in a release (whatever step its status still names) or at no step yet, as the
/// line mode says it (`no step`): a full bar would read as a release just done.
fn position(view: &RolloutView) -> Option<u64> {
    match (&view.progress, view.stage) {
        (Progress::NotInRelease, _) => None,
        (Progress::Completed | Progress::Finalising, _) | (_, Some(Stage::BlueGreenFinal)) => {
            Some(view.step_count as u64)
        }
        (_, Some(Stage::Step(i))) => Some(i as u64),
        (_, None) => None,
    }
}

/// `text` with its colour codes stripped where stderr gets no colour.
fn for_stderr(text: &str) -> String {
    let colour = anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never;
    crate::output::terminal_safe(text, colour).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ApiFailure;
    use serde_json::json;

    fn api(code: Option<u16>) -> Error {
        Error::Api { doing: "reading x".into(), failure: ApiFailure { code, reason: "R".into(), message: "m".into() } }
    }

    #[test]
    fn a_bar_fills_with_the_steps_done_and_shows_its_head() {
        assert_eq!(bar(0, 4), " ".repeat(20));
        assert_eq!(bar(1, 3), format!("{}>{}", "=".repeat(6), " ".repeat(13)));
        assert_eq!(bar(4, 4), "=".repeat(20));
        assert_eq!(bar(0, 0), " ".repeat(20));
    }

    #[test]
    fn a_timed_pause_counts_down_on_a_row_under_its_rollout() {
        let paused = RolloutView {
            stage: Some(Stage::Step(1)),
            step_count: 2,
            step_does: Some("replicas 1".into()),
            progress: Progress::Paused { pause_seconds: 60, seconds_left: Some(30) },
            ..view("shop", "web", "u1")
        };
        let done = RolloutView { progress: Progress::Completed, step_count: 2, ..view("shop", "a", "u2") };
        let bar = |filled: usize| format!("{}>{}", "=".repeat(filled), " ".repeat(19 - filled));
        // The countdown moves: no spinner.
        assert_eq!(
            rows(&paused, 8, Duration::from_secs(15), Some(1)),
            [
                format!("  shop/web  [{}] step 1/2  paused: replicas 1", bar(10)),
                format!("            [{}] resumes in 15s", bar(15))
            ]
        );
        assert_eq!(
            rows(&done, 8, Duration::ZERO, Some(1)),
            [format!("  shop/a    [{}] step 2/2  completed", "=".repeat(20))]
        );
        // Moved on by the controller: the spinner at its turn. Waiting for an approval: none.
        let moving = RolloutView { progress: Progress::Progressing, ..paused.clone() };
        assert_eq!(
            rows(&moving, 8, Duration::ZERO, Some(11)),
            [format!("⠙ shop/web  [{}] step 1/2  progressing: replicas 1", bar(10))]
        );
        let waiting = RolloutView { progress: Progress::WaitingForApproval, ..paused.clone() };
        assert!(rows(&waiting, 8, Duration::ZERO, Some(1))[0].starts_with("  shop/web"));
        // Not in a release, whatever step its status names: no step, an empty bar.
        let idle = RolloutView { progress: Progress::NotInRelease, ..paused.clone() };
        assert_eq!(
            rows(&idle, 8, Duration::ZERO, Some(1)),
            [format!("  shop/web  [{}] step -  not releasing", " ".repeat(20))]
        );
        // Stopped: no spinner; a pause over keeps its row, full.
        assert_eq!(
            rows(&paused, 8, Duration::from_secs(90), None)[1],
            format!("            [{}] pause ended 1m00s ago (the controller should have moved on)", "=".repeat(20))
        );
    }

    #[test]
    fn a_rollouts_document_is_printed_when_it_changed_but_for_its_countdown() {
        let paused = |left: i64| RolloutView {
            progress: Progress::Paused { pause_seconds: 60, seconds_left: Some(left) },
            ..view("shop", "a", "u1")
        };
        let mut documents = Documents { format: Format::Json, last: BTreeMap::new() };
        let names = |documents: Vec<Value>| -> Vec<Value> { documents.iter().map(|d| d["name"].clone()).collect() };
        // At first each; then only those that changed.
        let first = documents.changed(&[paused(30), view("shop", "b", "u2")]).unwrap();
        assert_eq!(names(first.clone()), ["a", "b"]);
        assert_eq!(first[0]["progress"]["secondsLeft"], 30);
        assert_eq!(documents.changed(&[paused(30), view("shop", "b", "u2")]).unwrap(), Vec::<Value>::new());
        // Read later, the pause has counted down: no change.
        assert_eq!(documents.changed(&[paused(12), view("shop", "b", "u2")]).unwrap(), Vec::<Value>::new());
        let moved = RolloutView { progress: Progress::Progressing, ..view("shop", "b", "u2") };
        assert_eq!(names(documents.changed(&[paused(12), moved]).unwrap()), ["b"]);
        // A Rollout of the same name in another namespace is another.
        assert_eq!(names(documents.changed(&[view("other", "a", "u3")]).unwrap()), ["a"]);
        assert_eq!(documents.render(&json!({"a": [1]})), "{\"a\":[1]}\n");
        let yaml = Documents { format: Format::Yaml, last: BTreeMap::new() };
        assert_eq!(yaml.render(&json!({"a": [1]})), "---\na:\n- 1\n");
    }

    #[test]
    fn a_view_taller_than_the_terminal_shows_the_rollouts_that_matter_first_and_counts_the_others() {
        let with = |name: &str, progress: Progress| RolloutView { progress, ..view("shop", name, name) };
        let failed = Progress::Failed { reason: "r".into() };
        let paused = Progress::Paused { pause_seconds: 60, seconds_left: Some(30) };
        let views = [
            with("idle1", Progress::NotInRelease),
            with("timed", paused),
            with("done", Progress::Completed),
            with("waits", Progress::WaitingForApproval),
            with("idle2", Progress::NotInRelease),
            with("broken", failed),
            with("moves", Progress::Progressing),
        ];
        // Each Rollout a row named after it; the timed pause's countdown a second one.
        let rows = || -> Vec<Vec<String>> {
            views
                .iter()
                .map(|v| match v.progress {
                    Progress::Paused { .. } => vec![v.name.clone(), "countdown".into()],
                    _ => vec![v.name.clone()],
                })
                .collect()
        };
        // All fit: as they are.
        assert_eq!(fit_height(&views, rows(), 8), rows().concat());
        assert_eq!(
            fit_height(&views, rows(), 7),
            [
                "broken",
                "waits",
                "timed",
                "countdown",
                "moves",
                "idle1",
                "… and 2 more Rollouts (1 completed, 1 not releasing)"
            ]
        );
        // A Rollout whose rows do not fit is left out, and all after it.
        assert_eq!(
            fit_height(&views, rows(), 4),
            ["broken", "waits", "… and 5 more Rollouts (1 paused, 1 progressing, 1 completed, 2 not releasing)"]
        );
        // Not one that matters less in its place: the count says what is left out.
        assert_eq!(
            fit_height(&views[..2], rows()[..2].to_vec(), 2),
            ["… and 2 more Rollouts (1 paused, 1 not releasing)"]
        );
        let two = [views[3].clone(), views[1].clone()];
        assert_eq!(
            fit_height(&two, vec![vec!["waits".into()], vec!["timed".into(), "countdown".into()]], 2),
            ["waits", "… and 1 more Rollout (1 paused)"]
        );
        assert_eq!(
            fit_height(&views, rows(), 1),
            [
                "… and 7 more Rollouts (1 failed, 1 waiting for approval, 1 paused, 1 progressing, 1 completed, 2 not releasing)"
            ]
        );
    }

    #[test]
    fn only_requests_that_got_no_answer_or_a_busy_servers_are_tried_again() {
        for code in [None, Some(429), Some(500), Some(502), Some(503), Some(504)] {
            assert!(failed_on_the_way(&api(code)), "{code:?}");
        }
        for code in [400, 401, 403, 404, 409, 410, 422, 501] {
            assert!(!failed_on_the_way(&api(Some(code))), "{code}");
        }
        for other in [Error::Input("x".into()), Error::TimedOut("t".into()), stopped(Signal::Interrupt)] {
            assert!(!failed_on_the_way(&other), "{other}");
        }
    }

    #[test]
    fn a_first_read_that_finds_nothing_says_where_it_looked() {
        let selector = |s: &str| Selection::Selector(s.into());
        let cases = [
            (Scope::Namespace(selector("app=x")), "no Rollouts in namespace shop match the selector app=x"),
            (Scope::Namespace(Selection::All), "no Rollouts in namespace shop"),
            (Scope::AllNamespaces(Some("app=x".into())), "no Rollouts in any namespace match the selector app=x"),
            (Scope::AllNamespaces(None), "no Rollouts in any namespace"),
        ];
        for (scope, what) in cases {
            assert_eq!(nothing_to_follow(&scope, "shop"), format!("no matching resources found: {what}"));
        }
    }

    /// A view of Rollout `namespace/name` with `uid` (empty: one that does not parse).
    fn view(namespace: &str, name: &str, uid: &str) -> RolloutView {
        RolloutView { uid: uid.into(), ..RolloutView::unparsed(name, namespace, String::new()) }
    }

    fn gone(followed: &mut Followed, views: &[RolloutView], scope: &Scope) -> String {
        match followed.check(views, scope) {
            Err(Error::Input(message)) => message,
            other => panic!("an error: {other:?}"),
        }
    }

    #[test]
    fn a_rollout_followed_that_is_deleted_or_made_again_ends_following() {
        let names = Scope::Namespace(Selection::Names(vec!["a".into(), "b".into()]));
        let mut followed = Followed::default();
        followed.check(&[view("shop", "a", "u1"), view("shop", "b", "u2")], &names).unwrap();
        followed.check(&[view("shop", "a", "u1"), view("shop", "b", "u2")], &names).unwrap();
        assert_eq!(
            gone(&mut followed, &[view("shop", "a", "u1"), view("shop", "b", "u3")], &names),
            "Rollout shop/b was deleted and made again (uid u2, now u3): its release is not the one followed"
        );
        assert_eq!(gone(&mut followed, &[view("shop", "b", "u2")], &names), "Rollout shop/a was deleted");
        // None left is no success either.
        assert_eq!(gone(&mut followed, &[], &Scope::Namespace(Selection::All)), "Rollout shop/a was deleted");
        // Under a selector, it may also have been relabelled out of it.
        let selected = Scope::AllNamespaces(Some("app=x".into()));
        assert_eq!(
            gone(&mut followed, &[view("shop", "a", "u1")], &selected),
            "Rollout shop/b was deleted, or its labels no longer match the selector app=x"
        );
    }

    #[test]
    fn a_rollout_read_later_is_followed_from_then_and_one_without_uid_is_not_compared() {
        let all = Scope::Namespace(Selection::All);
        let mut followed = Followed::default();
        followed.check(&[view("shop", "a", "")], &all).unwrap();
        // Its spec did not parse, then did: the first uid read is the one followed.
        followed.check(&[view("shop", "a", "u1")], &all).unwrap();
        followed.check(&[view("shop", "a", "")], &all).unwrap();
        // A Rollout that starts to be selected joins the ones followed.
        followed.check(&[view("shop", "a", "u1"), view("other", "a", "u5")], &all).unwrap();
        assert_eq!(gone(&mut followed, &[view("shop", "a", "u1")], &all), "Rollout other/a was deleted");
        assert!(
            gone(&mut followed, &[view("shop", "a", "u2"), view("other", "a", "u5")], &all).contains("uid u1, now u2")
        );
    }
}
