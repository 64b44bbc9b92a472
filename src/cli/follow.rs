//! Following Rollouts (`status -w`, `approve --until-step/--to-end`): a watch on the Rollouts,
//! everything read again on each change, and shown as a live view on a terminal (indicatif, on
//! stderr) or as a line per change (logs, CI, `TERM=dumb`).

use super::cluster::Session;
use super::views::{Scope, views};
use super::{print_raw, term_is_dumb};
use crate::error::{Error, Signal};
use crate::model::Stage;
use crate::output::paint;
use crate::source::live::Selection;
use crate::source::watch::RolloutWatch;
use crate::status::{Progress, RolloutView, progress_style};
use crate::write::Interrupt;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant, SystemTime};

/// How often everything is read again without a change of a Rollout: the gateway objects are
/// not watched (their places can change on their own), and approve renews its claims between
/// reads.
const RESYNC: Duration = Duration::from_secs(30);

/// How often the live view moves its spinners and countdowns.
const TICK: Duration = Duration::from_millis(100);

/// Follows Rollouts: shows them, then waits for a change and shows them again.
pub(super) struct Follower {
    /// SIGINT, SIGTERM and SIGHUP, listened for from the start so that they never cut a write
    /// short; following itself writes nothing, so they end it at once, also during a read.
    interrupt: Interrupt,
    deadline: Option<Instant>,
    timeout: Duration,
    /// Started at the first read.
    watch: Option<RolloutWatch>,
    display: Display,
}

impl Follower {
    pub(super) fn new(timeout: Duration, interrupt: Interrupt) -> Follower {
        Follower {
            interrupt,
            deadline: (!timeout.is_zero()).then(|| Instant::now() + timeout),
            timeout,
            watch: None,
            display: Display::new(),
        }
    }

    /// The views after the next change (at first, at once), shown; fails on timeout or a
    /// signal. The live view stops where it is on a failure, so that the message follows it.
    pub(super) async fn next(&mut self, session: &Session, scope: &Scope) -> Result<Vec<RolloutView>, Error> {
        let next = self.advance(session, scope).await;
        if next.is_err() {
            self.display.stop();
        }
        next
    }

    async fn advance(&mut self, session: &Session, scope: &Scope) -> Result<Vec<RolloutView>, Error> {
        match &mut self.watch {
            None => {
                let (namespace, selection) = match scope {
                    Scope::Namespace(selection) => (session.cluster.namespace.as_str(), selection.clone()),
                    Scope::AllNamespaces(Some(selector)) => ("", Selection::Selector(selector.clone())),
                    Scope::AllNamespaces(None) => ("", Selection::All),
                };
                let started = self.bounded(RolloutWatch::start(&session.cluster, namespace, &selection)).await?;
                if let Some(why) = started.polling() {
                    super::warn(&format!("{why}: reading the Rollouts every 2s instead"));
                }
                self.watch = Some(started);
            }
            Some(_) => self.wait().await?,
        }
        let views = self.bounded(views(session, scope)).await?;
        self.display.show(&views)?;
        Ok(views)
    }

    /// `work`, within the deadline, and dropped where it stands on a signal: following writes
    /// nothing, so a read in flight need not end first.
    async fn bounded<T>(&self, work: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
        tokio::select! {
            result = work => result,
            () = until(self.deadline) => Err(self.timed_out()),
            signal = self.interrupt.wait_for(1) => Err(stopped(signal)),
        }
    }

    fn timed_out(&self) -> Error {
        Error::TimedOut(format!("timed out after {}", crate::time::human(self.timeout)))
    }

    /// Waits for a change of a Rollout (or `RESYNC`), moving the live view meanwhile.
    async fn wait(&mut self) -> Result<(), Error> {
        if let Some(signal) = self.interrupt.received().await {
            return Err(stopped(signal));
        }
        let timed_out = self.timed_out();
        let Follower { interrupt, deadline, watch, display, .. } = self;
        let Some(watch) = watch else { return Ok(()) };
        let changed = watch.changed();
        tokio::pin!(changed);
        let resync = tokio::time::sleep(RESYNC);
        tokio::pin!(resync);
        let until = until(*deadline);
        tokio::pin!(until);
        let mut tick = tokio::time::interval(TICK);
        loop {
            tokio::select! {
                changed = &mut changed => return changed,
                () = &mut resync => return Ok(()),
                () = &mut until => return Err(timed_out),
                signal = interrupt.wait_for(1) => return Err(stopped(signal)),
                _ = tick.tick() => display.tick(),
            }
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
    /// the lines last printed.
    lines: Option<Vec<String>>,
}

impl Display {
    fn new() -> Display {
        // As indicatif (console) decides it can redraw: a terminal with a TERM that is not dumb.
        let live = std::io::stderr().is_terminal() && std::env::var_os("TERM").is_some() && !term_is_dumb();
        Display {
            live: live.then(LiveView::default),
            lines: (!live || !std::io::stdout().is_terminal()).then(Vec::new),
        }
    }

    fn show(&mut self, views: &[RolloutView]) -> std::io::Result<()> {
        if let Some(live) = &mut self.live {
            live.show(views);
        }
        if let Some(last) = &mut self.lines {
            let stamp = crate::time::rfc3339(SystemTime::now());
            let lines: Vec<String> = views.iter().map(RolloutView::line).collect();
            for (index, line) in lines.iter().enumerate() {
                if last.get(index) != Some(line) {
                    print_raw(&format!("{stamp} {line}\n"))?;
                }
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

/// The live view: per Rollout a line with a spinner, its name, the step as a progress bar and
/// what the step does; under it, during a timed pause, the countdown as a bar.
#[derive(Default)]
struct LiveView {
    /// Drawn on stderr; None until the first views, and after `clear`.
    multi: Option<MultiProgress>,
    rollouts: Vec<RolloutBars>,
}

struct RolloutBars {
    key: String,
    step: ProgressBar,
    /// A timed pause's countdown: its bar, its length, and the seconds left when read.
    pause: Option<(ProgressBar, u64, u64, Instant)>,
}

impl LiveView {
    fn show(&mut self, views: &[RolloutView]) {
        let keys: Vec<String> = views.iter().map(|v| format!("{}/{}", v.namespace, v.name)).collect();
        let width = keys.iter().map(String::len).max().unwrap_or(0);
        if self.multi.is_none() || self.rollouts.iter().map(|r| &r.key).ne(keys.iter()) {
            self.clear();
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
            let template = format!("{{spinner}} {{prefix:<{width}}}  [{{bar:20}}] step {{pos}}/{{len}}  {{wide_msg}}");
            self.rollouts = keys
                .iter()
                .zip(views)
                .map(|(key, view)| {
                    // Drawn once it is added: with what it shows.
                    let step = ProgressBar::new(view.step_count as u64)
                        .with_style(style(&template))
                        .with_prefix(key.clone())
                        .with_position(position(view))
                        .with_message(message(view));
                    RolloutBars { key: key.clone(), step: multi.add(step), pause: None }
                })
                .collect();
            self.multi = Some(multi);
        }
        let Some(multi) = &self.multi else { return };
        for (bars, view) in self.rollouts.iter_mut().zip(views) {
            bars.step.set_length(view.step_count as u64);
            bars.step.set_position(position(view));
            bars.step.set_message(message(view));
            match &view.progress {
                Progress::Paused { pause_seconds, seconds_left: Some(left) } => {
                    let bar = match bars.pause.take() {
                        Some((bar, ..)) => bar,
                        None => {
                            let bar = ProgressBar::new(*pause_seconds)
                                .with_style(style(&format!("  {:width$}  [{{bar:20}}] {{wide_msg}}", "")))
                                .with_position(pause_seconds.saturating_sub(*left))
                                .with_message(countdown(*left));
                            multi.insert_after(&bars.step, bar)
                        }
                    };
                    bars.pause = Some((bar, *pause_seconds, *left, Instant::now()));
                }
                _ => {
                    if let Some((bar, ..)) = bars.pause.take() {
                        bar.finish_and_clear();
                        multi.remove(&bar);
                    }
                }
            }
            if view.progress.is_final() {
                bars.step.finish();
            }
        }
        self.tick();
    }

    /// Moves the spinners and counts the pauses down.
    fn tick(&mut self) {
        for bars in &self.rollouts {
            if let Some((bar, length, left, read)) = &bars.pause {
                let left = left.saturating_sub(read.elapsed().as_secs());
                bar.set_position(length - left.min(*length));
                bar.set_message(countdown(left));
            }
            if !bars.step.is_finished() {
                bars.step.tick();
            }
        }
    }

    /// Leaves what is drawn, and draws no more; what follows starts on a line of its own.
    fn stop(&mut self) {
        if self.multi.take().is_none() {
            return;
        }
        for bars in self.rollouts.drain(..) {
            bars.step.abandon();
            if let Some((bar, ..)) = bars.pause {
                bar.abandon();
            }
        }
        let _ = writeln!(std::io::stderr());
    }

    fn clear(&mut self) {
        if let Some(multi) = self.multi.take() {
            let _ = multi.clear();
        }
        self.rollouts.clear();
    }
}

/// What the step bar says: the progress (a timed pause counts down on a line of its own), and
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

fn countdown(seconds_left: u64) -> String {
    format!("resumes in {}", crate::time::human(Duration::from_secs(seconds_left)))
}

/// Where the step bar stands: at the current step, full once the steps are done.
fn position(view: &RolloutView) -> u64 {
    match (&view.progress, view.stage) {
        (Progress::Completed | Progress::Finalising, _) | (_, Some(Stage::BlueGreenFinal)) => view.step_count as u64,
        (_, Some(Stage::Step(i))) => i as u64,
        (_, None) => 0,
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).expect("a valid template").progress_chars("=> ")
}

/// `text` with its colour codes stripped where stderr gets no colour.
fn for_stderr(text: &str) -> String {
    match anstream::AutoStream::choice(&std::io::stderr()) {
        anstream::ColorChoice::Never => anstream::adapter::strip_str(text).to_string(),
        _ => text.to_string(),
    }
}
