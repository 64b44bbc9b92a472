//! `status`: where Rollouts and their gateway objects stand, once or followed (`-w`).

use super::cluster::{Session, runtime};
use super::follow::{Follower, cut_short};
use super::views::{Missing, Read, Scope, none_found, views};
use super::{Outcome, StatusArgs, print, print_raw};
use crate::error::Error;
use crate::source::live::{self, Selection};
use crate::status::{Progress, RolloutView};
use crate::write::Interrupt;

pub fn status(args: &StatusArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let session = Session::open(&args.cluster, &args.scripts).await?;
        let scope = Scope::of(args);
        if !args.watch {
            // A Rollout named and not found does not hide the others: its error comes after
            // them (as `kubectl get` does).
            let read = Read { missing: Missing::LeftOut, claims: true, since: None };
            let views = views(&session, &scope, read).await?;
            let missing = missing_names(&scope, &views);
            if views.is_empty() && missing.is_empty() {
                // As kubectl get: a note, not an error.
                none_found(&session, &scope);
            }
            match args.output {
                Some(format) => print_raw(&super::offline::render(&serde_json::to_value(&views)?, format))?,
                None => print(&views.iter().map(RolloutView::text).collect::<Vec<_>>().join("\n"))?,
            }
            let not_found = missing.iter().map(|name| live::not_found(name, &session.cluster.namespace).to_string());
            // The text has just said why on each such Rollout's Objects line: the error names
            // them. Machine output leaves the reader of stderr only the error to go by.
            let unplaced = match args.output {
                Some(_) => unplaced_error(&views).map(|e| e.to_string()),
                None => unplaced_shown(&views),
            };
            let errors: Vec<String> = unplaced.into_iter().chain(not_found).collect();
            return match errors.is_empty() {
                true => Ok(Outcome::Done),
                false => Err(Error::Input(errors.join("\n")).into()),
            };
        }
        let mut follower = Follower::new(args.timeout, Interrupt::listen(None)?, args.output);
        // --until-paused: every Rollout waits for approval, or has nothing left to wait for.
        let settled = |v: &RolloutView| {
            v.progress.is_final() || (args.until_paused && v.progress == Progress::WaitingForApproval)
        };
        let goal = if args.until_paused { "wait for approval, complete or fail" } else { "complete or fail" };
        loop {
            let next = follower.next(&session, &scope).await;
            // The Rollouts not settled when last read: what a timeout names (and a closed
            // output, which may have cut off the view of a change: that read is named).
            let last = follower.last_read();
            let waiting = match last.is_empty() {
                true => "the Rollouts to be read".to_string(),
                false => awaited(last, settled, goal),
            };
            let views = next.map_err(|e| match e {
                Error::TimedOut(message) => Error::TimedOut(format!("{message} waiting for {waiting}")),
                other if last.iter().all(settled) && !last.is_empty() => cut_short(
                    other,
                    &format!("before the last change was shown: {}; stopped following", standing(last)),
                ),
                other => cut_short(other, &format!("while waiting for {waiting}: stopped following")),
            })?;
            if views.iter().all(settled) {
                follower.finish();
                if let Some(error) = unplaced_error(&views) {
                    return Err(error.into());
                }
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

/// What a follow waits for, for the message of its timeout: each of `views` not yet `settled`, to
/// `goal`, where it was last seen.
pub(super) fn awaited(views: &[RolloutView], settled: impl Fn(&RolloutView) -> bool, goal: &str) -> String {
    let unsettled: Vec<Awaited> = views.iter().filter(|v| !settled(v)).map(Awaited::of).collect();
    waiting_for(goal, &unsettled)
}

/// Where each of `views` stands, in a phrase: `Rollout shop/a is at step 5/5 Completed
/// (succeeded)`, joined by `; `.
fn standing(views: &[RolloutView]) -> String {
    let each = views.iter().map(Awaited::of).map(|a| format!("Rollout {} is at {}", a.rollout, a.line));
    each.collect::<Vec<_>>().join("; ")
}

/// A Rollout a follow waits for (`namespace/name`), and where it was last seen: in a phrase,
/// and on a line of its own.
pub(super) struct Awaited {
    pub rollout: String,
    pub phrase: String,
    pub line: String,
}

impl Awaited {
    fn of(view: &RolloutView) -> Awaited {
        let step = view.step.as_deref().map(|s| format!("{s} ")).unwrap_or_default();
        let state = view.state.as_deref().unwrap_or("-");
        // No countdown: the message outlives the read.
        let progress = match &view.progress {
            Progress::Paused { .. } => "paused".to_string(),
            other => other.describe(),
        };
        Awaited {
            rollout: format!("{}/{}", view.namespace, view.name),
            phrase: format!("it is at {step}{state}: {progress}"),
            line: format!("{step}{state} ({progress})"),
        }
    }
}

/// What a follow waits for: one Rollout in a phrase (`Rollout shop/a to complete or fail (it is
/// at …)`); more a line each under a count, which a timeout at scale can be read by.
pub(super) fn waiting_for(goal: &str, awaited: &[Awaited]) -> String {
    match awaited {
        [one] => format!("Rollout {} to {goal} ({})", one.rollout, one.phrase),
        many => {
            let width = many.iter().map(|a| a.rollout.len()).max().unwrap_or(0);
            let lines: String = many.iter().map(|a| format!("\n  {:<width$}  {}", a.rollout, a.line)).collect();
            format!("{} Rollouts to {goal}:{lines}", many.len())
        }
    }
}

/// The Rollouts named on the command line that no view shows: not found.
fn missing_names(scope: &Scope, views: &[RolloutView]) -> Vec<String> {
    let Scope::Namespace(Selection::Names(arguments)) = scope else { return Vec::new() };
    let mut missing: Vec<String> = Vec::new();
    for name in arguments.iter().map(|a| live::rollout_name(a)) {
        if !views.iter().any(|v| v.name == name) && !missing.iter().any(|m| m == name) {
            missing.push(name.to_string());
        }
    }
    missing
}

/// Names the Rollouts whose objects could not be placed, when their text has shown why.
fn unplaced_shown(views: &[RolloutView]) -> Option<String> {
    let names: Vec<String> =
        views.iter().filter(|v| v.objects.is_err()).map(|v| format!("{}/{}", v.namespace, v.name)).collect();
    match names.as_slice() {
        [] => None,
        [one] => Some(format!("cannot place the objects of Rollout {one}: its Objects line above says why")),
        many => {
            Some(format!("cannot place the objects of Rollouts {}: their Objects lines above say why", many.join(", ")))
        }
    }
}

/// The errors of the Rollouts whose objects could not be placed (not loaded, or a plan that
/// failed: a script that fails), if any: `status` shows the others, and fails with these at the
/// end, each naming its Rollout.
fn unplaced_error(views: &[RolloutView]) -> Option<Error> {
    let errors: Vec<String> = views
        .iter()
        .filter_map(|v| {
            let why = v.objects.as_ref().err()?;
            let rollout = format!("Rollout {}/{}", v.namespace, v.name);
            // `Rollout ns/name: …`, `Rollout ns/name, step 1/3, …`: already named.
            let named = why.strip_prefix(&rollout).is_some_and(|rest| rest.starts_with([':', ',']));
            Some(if named { why.clone() } else { format!("{rollout}: {why}") })
        })
        .collect();
    (!errors.is_empty()).then(|| Error::Input(errors.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_names_one_rollout_in_a_phrase_and_more_a_line_each() {
        let view = |name: &str, step: Option<&str>, progress: Progress| RolloutView {
            step: step.map(Into::into),
            state: step.map(|_| "StepPaused".into()),
            progress,
            ..RolloutView::unparsed(name, "shop", String::new())
        };
        let paused = Progress::Paused { pause_seconds: 60, seconds_left: Some(30) };
        let views = [
            view("svc01", Some("step 2/4"), paused.clone()),
            view("done", Some("step 4/4"), Progress::Completed),
            view("b", None, Progress::Progressing),
        ];
        let settled = |v: &RolloutView| v.progress.is_final();
        assert_eq!(
            awaited(&views, settled, "complete or fail"),
            "2 Rollouts to complete or fail:\n  shop/svc01  step 2/4 StepPaused (paused)\n  shop/b      - (progressing)"
        );
        assert_eq!(
            awaited(&views[..2], settled, "complete or fail"),
            "Rollout shop/svc01 to complete or fail (it is at step 2/4 StepPaused: paused)"
        );
        // A closed output names where each stands, settled or not.
        assert_eq!(
            standing(&views[..2]),
            "Rollout shop/svc01 is at step 2/4 StepPaused (paused); Rollout shop/done is at step 4/4 StepPaused (completed)"
        );
    }

    #[test]
    fn the_error_for_unplaced_objects_names_each_rollout_once() {
        let view = |name: &str, why: &str| RolloutView::unparsed(name, "shop", why.into());
        let named = view("a", "Rollout shop/a, step 1/2, VirtualService/a: script failed");
        let unnamed = view("b", "TrafficRouting shop/tr routes through DestinationRule/b, but there is no such object");
        // Shown as text, the reasons are on the Objects lines: the error names the Rollouts.
        assert_eq!(unplaced_shown(&[]), None);
        assert_eq!(
            unplaced_shown(std::slice::from_ref(&named)).as_deref(),
            Some("cannot place the objects of Rollout shop/a: its Objects line above says why")
        );
        assert_eq!(
            unplaced_shown(&[named.clone(), unnamed.clone()]).as_deref(),
            Some("cannot place the objects of Rollouts shop/a, shop/b: their Objects lines above say why")
        );
        // Otherwise each reason, starting with its Rollout (not named twice).
        assert_eq!(
            unplaced_error(&[named, unnamed]).unwrap().to_string(),
            "Rollout shop/a, step 1/2, VirtualService/a: script failed\nRollout shop/b: TrafficRouting shop/tr routes through DestinationRule/b, but there is no such object"
        );
    }
}
