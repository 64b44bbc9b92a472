//! Claims on Rollouts as commands show them: `status` names a live claim, `release-claim`
//! deletes one whose holder is gone.

use super::cluster::{Session, runtime, selection};
use super::{Outcome, ReleaseClaimArgs, ScriptArgs, confirm, print};
use crate::error::Error;
use crate::model;
use crate::source::cluster::Cluster;
use crate::source::live::{self, Selection};
use crate::status::ClaimView;
use crate::write::{self, Interrupt};
use serde_json::Value;

pub fn release_claim(args: &ReleaseClaimArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let selection = selection(&args.selection)?;
        let session = Session::open(&args.cluster, &ScriptArgs::default()).await?;
        let names = rollout_names(&session, &selection).await?;
        // Names listed are there; names given may be mistyped.
        let named = matches!(selection, Selection::Names(_));
        let (cluster, namespace) = (&session.cluster, &session.cluster.namespace);
        // Each Lease as shown: what is deleted is exactly that Lease (see `write::release_shown`).
        let (mut held, mut missing) = (Vec::new(), Vec::new());
        for name in &names {
            match lease_of(cluster, namespace, name).await? {
                Some(lease) => held.push((name, lease)),
                // A name mistyped is not found, as kubectl says, rather than not claimed (a
                // claim on a Rollout since deleted is still released above).
                None if named && !rollout_exists(cluster, name).await => {
                    missing.push(live::not_found(name, namespace))
                }
                None => print(&format!("Rollout {namespace}/{name} is not claimed\n"))?,
            }
        }
        if held.is_empty() {
            worst_with_the_rest(missing)?;
            return Ok(Outcome::Done);
        }
        for (name, lease) in &held {
            let holder = write::claim_view(lease, cluster.server_now()).text();
            // Its Rollout deleted since (or a name mistyped in a run killed after its claim): the
            // claim is released all the same, but not as if the Rollout were there.
            let gone = match named && !rollout_exists(cluster, name).await {
                true => " (no such Rollout now)",
                false => "",
            };
            print(&format!("Rollout {namespace}/{name}{gone} is claimed by {holder}\n"))?;
        }
        // A delete that may not be made is refused, with a Role, as every missing permission is.
        let deletes = held.iter().map(|(name, _)| {
            let lease = write::lease_key(namespace, name).name;
            write::lease_resource().permission("delete", None, namespace).on(&lease)
        });
        write::preflight(cluster, deletes.collect(), |_| None).await?;
        // Signals are taken in from here, where the deletes come: until now a signal ends the
        // run at once, as it would any command that writes nothing (a read or an access review
        // may hang).
        let interrupt = Interrupt::listen(Some(STOPPING))?;
        if !args.yes {
            interrupt
                .confirm("Release these claims (their holders may still be writing)?", |q| confirm(q, false))
                .await?;
        }
        // A claim that changed since it was shown is refused, and a delete may fail; the other
        // claims are released still. A signal stops the run before the next delete; a second
        // one at once, its delete out.
        let mut failures = Vec::new();
        for (index, (name, lease)) in held.iter().enumerate() {
            let not_tried = |from: usize| claims_on(namespace, held[from..].iter().map(|(name, _)| name.as_str()));
            if let Some(signal) = interrupt.received().await {
                failures.push(Error::Interrupted { signal, report: format!("not released: {}", not_tried(index)) });
                break;
            }
            match interrupt.unless_second(write::release_shown(cluster, namespace, name, lease)).await {
                Ok(Ok(true)) => print(&format!("released the claim on Rollout {namespace}/{name}\n"))?,
                Ok(Ok(false)) => print(&format!("Rollout {namespace}/{name} is not claimed (released meanwhile)\n"))?,
                Ok(Err(failure)) => failures.push(failure),
                Err(signal) => {
                    let mut report = format!(
                        "stopped at once by a second signal: the delete of the claim on Rollout {namespace}/{name} was out and may have landed (`kubectl rollout-lua release-claim {}` shows whether it did)",
                        model::rollout_args(namespace, name)
                    );
                    if index + 1 < held.len() {
                        report.push_str(&format!("; not released: {}", not_tried(index + 1)));
                    }
                    failures.push(Error::Interrupted { signal, report });
                    break;
                }
            }
        }
        // A signal during the last delete: that delete was finished and none was left, but the
        // run was stopped as asked (130), as approve's and restore's are at their last write.
        if !failures.iter().any(|failure| matches!(failure, Error::Interrupted { .. }))
            && let Some(signal) = interrupt.received().await
        {
            let report = "the delete in flight was finished, the last of them: no claim shown was left".into();
            failures.push(Error::Interrupted { signal, report });
        }
        failures.extend(missing);
        worst_with_the_rest(failures)?;
        Ok(Outcome::Done)
    })
}

/// Whether Rollout `name` is there; taken to be when that cannot be read (a Role without `get`
/// on Rollouts may still release a claim).
async fn rollout_exists(cluster: &Cluster, name: &str) -> bool {
    match live::rollout_resource(cluster).await {
        Ok(resource) => !matches!(cluster.get(&resource, &cluster.namespace, name).await, Ok(None)),
        Err(_) => true,
    }
}

/// What release-claim says when the first signal arrives.
const STOPPING: &str = "no other claim is released; the delete in flight is finished, then the run stops";

/// `the claim on Rollout NS/A`, `the claims on Rollouts NS/A, NS/B`.
fn claims_on<'a>(namespace: &str, names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<String> = names.map(|name| format!("{namespace}/{name}")).collect();
    match names.len() {
        1 => format!("the claim on Rollout {}", names[0]),
        _ => format!("the claims on Rollouts {}", names.join(", ")),
    }
}

/// Ends a run whose releases met `failures` (in the order of the Rollouts): every one is said,
/// and the worst decides the exit code: a signal that stopped the run (130, 143, 129), then an
/// error (1: that claim may or may not be released), then a refusal (3: that claim was left
/// alone), as each is reported with what else happened (`Error::with_report`).
fn worst_with_the_rest(mut failures: Vec<Error>) -> Result<(), Error> {
    failures.sort_by_key(|failure| match failure {
        Error::Interrupted { .. } => 0,
        Error::Conflict(_) => 2,
        _ => 1,
    });
    let mut failures = failures.into_iter();
    let Some(worst) = failures.next() else { return Ok(()) };
    let rest: Vec<String> = failures.map(|failure| failure.to_string()).collect();
    Err(worst.with_report(&rest.join("\n")))
}

async fn rollout_names(session: &Session, selection: &Selection) -> Result<Vec<String>, Error> {
    Ok(match selection {
        Selection::Names(names) => names.iter().map(|n| live::rollout_name(n).to_string()).collect(),
        Selection::Selector(_) | Selection::All => {
            let read = live::read_rollouts(&session.cluster, selection).await;
            read.map_err(|e| live::selected_unlisted(e, selection))?.found.into_iter().map(|r| r.item.name).collect()
        }
    })
}

/// The claim on Rollout `namespace/name`, if anyone holds one.
pub(super) async fn claim_of(cluster: &Cluster, namespace: &str, name: &str) -> Result<Option<ClaimView>, Error> {
    let lease = lease_of(cluster, namespace, name).await?;
    Ok(lease.map(|lease| write::claim_view(&lease, cluster.server_now())))
}

/// The Lease that claims Rollout `namespace/name`, if there is one.
async fn lease_of(cluster: &Cluster, namespace: &str, name: &str) -> Result<Option<Value>, Error> {
    cluster.get(&write::lease_resource(), namespace, &write::lease_key(namespace, name).name).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ApiFailure, Signal};

    #[test]
    fn every_failed_release_is_said_and_an_error_outranks_a_refusal() {
        let changed =
            |rollout: &str| Error::Conflict(format!("not released: the claim on Rollout shop/{rollout} changed"));
        let failed = |rollout: &str| Error::Api {
            doing: format!("deleting Lease shop/rollout-lua.{rollout}"),
            failure: ApiFailure { code: Some(500), reason: "InternalError".into(), message: "boom".into() },
        };
        assert!(worst_with_the_rest(Vec::new()).is_ok());
        let Err(Error::Conflict(refused)) = worst_with_the_rest(vec![changed("a"), changed("b")]) else {
            panic!("refused")
        };
        assert_eq!(
            refused,
            "not released: the claim on Rollout shop/a changed\nnot released: the claim on Rollout shop/b changed"
        );
        // A refusal before an error: the error decides (exit 1), the refusal is said below it.
        let Err(Error::Input(mixed)) = worst_with_the_rest(vec![changed("a"), failed("b"), failed("c")]) else {
            panic!("an error")
        };
        assert_eq!(
            mixed,
            "deleting Lease shop/rollout-lua.b: boom (500 InternalError)\ndeleting Lease shop/rollout-lua.c: boom (500 InternalError)\nnot released: the claim on Rollout shop/a changed"
        );
        // A signal that stopped the run decides over both (130), and both are said below it.
        let stopped = Error::Interrupted {
            signal: Signal::Interrupt,
            report: format!("not released: {}", claims_on("shop", ["d", "e"].into_iter())),
        };
        let Err(Error::Interrupted { signal: Signal::Interrupt, report }) =
            worst_with_the_rest(vec![changed("a"), failed("b"), stopped])
        else {
            panic!("interrupted")
        };
        assert_eq!(
            report,
            "not released: the claims on Rollouts shop/d, shop/e\ndeleting Lease shop/rollout-lua.b: boom (500 InternalError)\nnot released: the claim on Rollout shop/a changed"
        );
        assert_eq!(claims_on("shop", ["d"].into_iter()), "the claim on Rollout shop/d");
    }
}
