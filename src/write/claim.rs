//! The claim on a Rollout: one `approve` or `restore` at a time. A claim is a
//! `coordination.k8s.io/v1` Lease named `rollout-lua.<rollout>` in the Rollout's namespace.
//! A Lease, not an annotation on the Rollout: taking it never touches the Rollout (no GitOps
//! drift, no reconcile by the controller, the approval's resourceVersion precondition is
//! unaffected), creating it is atomic (AlreadyExists means someone holds it), and holder and
//! expiry are fields of its own.

use crate::change::{Change, Landed};
use crate::error::Error;
use crate::model::{self, ObjectKey};
use crate::source::cluster::{Cluster, Resource};
use crate::status::ClaimView;
use crate::time::Moment;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// How long a claim lasts unless renewed: long enough for a slow write sequence, short enough
/// that a claim left by a killed process is soon free.
pub const LEASE_DURATION: Duration = Duration::from_secs(120);
/// A claim is renewed before a write once this much of it has passed.
const RENEW_AFTER: Duration = Duration::from_secs(20);
/// After a renewal a busy or silent server did not apply, how long until it is tried again.
const RENEWAL_RETRY_WAIT: Duration = Duration::from_secs(5);
/// What a claim must have left, past a request started before the next renewal, for a failed
/// renewal to be tried again later rather than stop the run.
const RENEWAL_MARGIN: Duration = Duration::from_secs(5);
/// Someone's claim that expired this long ago or less, by the API server's clock as this run
/// reads it, is taken over only once seen unrenewed for `UNRENEWED_FOR` on this host's clock:
/// the `Date` read through another route to the API server (a proxy that sends its own) may
/// differ by minutes, and a live claim would look expired. (client-go's leader election judges
/// a Lease so.) One that expired longer ago is taken over at once.
const LATELY: Duration = Duration::from_secs(3600);
/// How long such a claim must be seen unrenewed: its holder, alive, renews it every 20 s.
const UNRENEWED_FOR: Duration = Duration::from_secs(60);
/// How often the Lease is read while it is watched.
const WATCH_EVERY: Duration = Duration::from_secs(5);
/// The annotation naming the command that holds the claim.
const COMMAND_ANNOTATION: &str = "kubectl-rollout-lua/command";

pub fn lease_resource() -> Resource {
    Resource {
        group: "coordination.k8s.io".into(),
        version: "v1".into(),
        kind: "Lease".into(),
        plural: "leases".into(),
        namespaced: true,
    }
}

/// The Lease that claims Rollout `namespace/rollout`.
pub fn lease_key(namespace: &str, rollout: &str) -> ObjectKey {
    ObjectKey::new("coordination.k8s.io", "Lease", namespace, &format!("rollout-lua.{rollout}"))
}

/// Who holds a claim: `user@host (pid N)`.
pub fn holder_identity() -> String {
    let user = std::env::var("USER").or_else(|_| std::env::var("LOGNAME")).unwrap_or_else(|_| "someone".into());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown-host".into());
    format!("{user}@{host} (pid {})", std::process::id())
}

/// Kubernetes' MicroTime: RFC 3339 with microseconds, UTC.
fn micro_time(now: SystemTime) -> String {
    k8s_openapi::jiff::Timestamp::try_from(now)
        .unwrap_or(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// Sends a change to a Lease; a reply that was lost, garbled or timed out is resolved by
/// reading the Lease again. A 409, or a fresh read showing someone else's change, is
/// `Ok(Err(()))`: the Lease is not as this run wanted.
async fn send(cluster: &Cluster, change: &Change) -> Result<Result<Option<Value>, ()>, Error> {
    let key = change.key();
    let request = change.request(None).expect("a Lease change sends a request");
    match cluster.send(&lease_resource(), key, &request, false).await {
        Ok(stored) => Ok(Ok(stored)),
        Err(Error::Api { failure, .. }) if failure.is_conflict() => Ok(Err(())),
        Err(Error::Api { failure, doing }) if failure.outcome_unknown() => {
            // A read that fails too says so after the write's failure (its outcome the read's).
            let fresh = cluster.get(&lease_resource(), &key.namespace, &key.name).await.map_err(|read| match read {
                Error::Api { failure: read, doing: reading } => {
                    Error::Api { doing: format!("{doing}: {failure}; {reading}"), failure: read }
                }
                read => read,
            })?;
            match change.landed(None, fresh.as_ref()) {
                // A Lease made again after this run's delete is someone else's claim.
                Landed::Applied | Landed::MovedOn | Landed::MadeAgain => Ok(Ok(fresh)),
                Landed::NotApplied => Err(Error::Api { doing, failure }),
                // (A Lease has no generation, so a change to it is never told outdated.)
                Landed::ChangedBySomeoneElse | Landed::Outdated => Ok(Err(())),
            }
        }
        Err(other) => Err(other),
    }
}

/// A claim this run holds.
pub struct Claim {
    key: ObjectKey,
    /// The Rollout claimed.
    rollout: String,
    /// The Lease as this run last wrote it.
    lease: Value,
    /// When it was last renewed (or taken), on this host: its age counts a sleep.
    renewed: Moment,
    /// After a renewal the server did not apply: not before then again (a question checks
    /// every second).
    retry_at: Option<Instant>,
}

/// What a Lease says about its claim, at `now` (the API server's clock).
pub fn view(lease: &Value, now: SystemTime) -> ClaimView {
    let (spec, text) = (&lease["spec"], |value: &Value| value.as_str().map(str::to_string));
    let expires_at = expires_at(lease);
    ClaimView {
        holder: text(&spec["holderIdentity"]).unwrap_or_else(|| "someone".into()),
        command: text(&lease["metadata"]["annotations"][COMMAND_ANNOTATION]),
        since: text(&spec["acquireTime"]),
        renewed: text(&spec["renewTime"]),
        expires: expires_at
            .and_then(|seconds| u64::try_from(seconds).ok())
            .map(|seconds| crate::time::rfc3339(SystemTime::UNIX_EPOCH + Duration::from_secs(seconds))),
        expired: expires_at.is_none_or(|expires| expires < crate::time::now_seconds(now)),
    }
}

/// When a Lease's claim expires unless renewed (seconds since the epoch, its holder's reading
/// of the API server's clock), if it says.
fn expires_at(lease: &Value) -> Option<i64> {
    let spec = &lease["spec"];
    spec["renewTime"]
        .as_str()
        .or(spec["acquireTime"].as_str())
        .and_then(crate::time::parse_rfc3339)
        .zip(spec["leaseDurationSeconds"].as_i64())
        .map(|(renewed, duration)| renewed + duration)
}

/// Whether a claim, expired at `now`, expired within `LATELY`.
fn expired_lately(lease: &Value, now: SystemTime) -> bool {
    expires_at(lease).is_some_and(|expires| crate::time::now_seconds(now) - expires <= LATELY.as_secs() as i64)
}

/// What taking a claim came to.
pub enum Attempt {
    Taken(Claim),
    /// Someone's claim, expired lately: to be watched (`Claim::watch_unrenewed`) before it is
    /// taken over (`Claim::take_over`).
    ExpiredLately(Value),
}

/// The Lease of a claim on Rollout `namespace/rollout` (`key`) by this run, for `command`,
/// taken at `now`. The claim's times are the API server's (`Cluster::server_now`), as are those
/// it is compared with: a host whose clock is off neither takes over a live claim nor keeps one
/// alive past its time.
fn new_lease(key: &ObjectKey, namespace: &str, command: &str, now: SystemTime) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": key.name,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/managed-by": "kubectl-rollout-lua"},
            "annotations": {COMMAND_ANNOTATION: command},
        },
        "spec": {
            "holderIdentity": holder_identity(),
            "leaseDurationSeconds": LEASE_DURATION.as_secs(),
            "acquireTime": micro_time(now),
            "renewTime": micro_time(now),
        },
    })
}

impl Claim {
    /// Claims Rollout `namespace/rollout` for `command`, or refuses (exit 3) naming the holder.
    /// An expired claim is taken over; one that expired lately is left to be watched first.
    pub async fn take(cluster: &Cluster, namespace: &str, rollout: &str, command: &str) -> Result<Attempt, Error> {
        let key = lease_key(namespace, rollout);
        let taken_at = Moment::now();
        let lease = Arc::new(new_lease(&key, namespace, command, cluster.server_now()));
        let create = Change::Create { key: key.clone(), object: Arc::clone(&lease) };
        let resource = lease_resource();
        // A 409 with no Lease to be seen: it was released meanwhile; try once more.
        let mut attempts = 2;
        let held = loop {
            attempts -= 1;
            if let Ok(Some(stored)) = send(cluster, &create).await? {
                let claim = Claim { key, rollout: rollout.into(), lease: stored, renewed: taken_at, retry_at: None };
                return Ok(Attempt::Taken(claim));
            }
            // The create was refused (409): nothing of this run's can land, whatever this read
            // meets; someone's Lease is there.
            let read = cluster.get(&resource, namespace, &key.name).await.map_err(|e| {
                Error::Refused(format!(
                    "nothing was written: Rollout {namespace}/{rollout} is claimed by someone else (Lease {} exists), and reading who holds it failed: {e}; run again, or `kubectl rollout-lua status {}` shows the holder",
                    key.name,
                    model::rollout_args(namespace, rollout)
                ))
            })?;
            match read {
                Some(held) => break held,
                None if attempts > 0 => continue,
                None => {
                    return Err(Error::Refused(format!(
                        "nothing was written: the claim on Rollout {namespace}/{rollout} changes hands too fast to take it; run again"
                    )));
                }
            }
        };
        // Someone holds it: refuse, unless their claim has expired.
        let claim = view(&held, cluster.server_now());
        if !claim.expired {
            return Err(Error::Refused(format!(
                "nothing was written: Rollout {namespace}/{rollout} is claimed by {} (Lease {}, expires {} unless renewed); wait for it, or, if its holder is gone, `kubectl rollout-lua release-claim {}`",
                claim.holder_text(),
                key.name,
                claim.expires.as_deref().unwrap_or("soon"),
                model::rollout_args(namespace, rollout)
            )));
        }
        if expired_lately(&held, cluster.server_now()) {
            return Ok(Attempt::ExpiredLately(held));
        }
        Claim::take_over(cluster, namespace, rollout, command, held).await.map(Attempt::Taken)
    }

    /// Takes over `held`, someone's expired claim on Rollout `namespace/rollout`: a replace
    /// conditional on the Lease as read.
    pub async fn take_over(
        cluster: &Cluster,
        namespace: &str,
        rollout: &str,
        command: &str,
        held: Value,
    ) -> Result<Claim, Error> {
        let key = lease_key(namespace, rollout);
        let taken_at = Moment::now();
        let lease = Arc::new(new_lease(&key, namespace, command, cluster.server_now()));
        let replace = Change::Replace { key: key.clone(), before: Arc::new(held), after: lease };
        match send(cluster, &replace).await? {
            Ok(Some(stored)) => {
                Ok(Claim { key, rollout: rollout.into(), lease: stored, renewed: taken_at, retry_at: None })
            }
            _ => Err(Error::Refused(format!(
                "nothing was written: someone else took the expired claim on Rollout {namespace}/{rollout} first; run again"
            ))),
        }
    }

    /// Watches `held`, someone's claim that expired lately, until it has been seen unrenewed for
    /// `UNRENEWED_FOR`; returns it as read then. Renewed (or taken, or released) meanwhile: its
    /// holder is at work, whatever the clocks said, and the run refuses.
    pub async fn watch_unrenewed(
        cluster: &Cluster,
        namespace: &str,
        rollout: &str,
        held: Value,
    ) -> Result<Value, Error> {
        let key = lease_key(namespace, rollout);
        let args = model::rollout_args(namespace, rollout);
        crate::stderr::line(&format!(
            "Rollout {namespace}/{rollout} is claimed by {}, expired by the API server's clock as this run reads it; it is taken over once seen unrenewed for {}s (the clock read through another route to the API server may differ), or at once after `kubectl rollout-lua release-claim {args}`",
            view(&held, cluster.server_now()).holder_text(),
            UNRENEWED_FOR.as_secs()
        ));
        let watched = Moment::now();
        while watched.elapsed() < UNRENEWED_FOR {
            tokio::time::sleep(WATCH_EVERY).await;
            match cluster.get(&lease_resource(), namespace, &key.name).await? {
                Some(lease) if lease["metadata"]["resourceVersion"] == held["metadata"]["resourceVersion"] => {}
                Some(lease) => {
                    return Err(Error::Refused(format!(
                        "nothing was written: Rollout {namespace}/{rollout} is claimed by {}, whose claim was renewed (or taken) while this run watched it: its holder is at work, although the claim read as expired (the clocks read through two routes to the API server differ); wait for it, or, if its holder is gone, `kubectl rollout-lua release-claim {args}`",
                        view(&lease, cluster.server_now()).holder_text()
                    )));
                }
                None => {
                    return Err(Error::Refused(format!(
                        "nothing was written: the claim on Rollout {namespace}/{rollout} was released while this run watched it; run again"
                    )));
                }
            }
        }
        Ok(held)
    }

    /// Renews the claim when a good part of it has passed (before a write, and while a long run
    /// waits); fails when someone else took it over meanwhile. May be dropped where it stands
    /// (at `approve --timeout`, or when a question it renewed the claim for is answered): a
    /// renewal that then lands unheard is found by the next one, or by the release.
    pub async fn keep(&mut self, cluster: &Cluster) -> Result<(), Error> {
        if self.renewed.elapsed() < RENEW_AFTER || self.retry_at.is_some_and(|at| Instant::now() < at) {
            return Ok(());
        }
        self.renew(cluster).await
    }

    /// Renews the claim now, however lately it was: before a later step's first write, after a
    /// wait in which someone may have released it (`release-claim`) or taken it over.
    pub async fn confirm(&mut self, cluster: &Cluster) -> Result<(), Error> {
        self.renew(cluster).await
    }

    async fn renew(&mut self, cluster: &Cluster) -> Result<(), Error> {
        // A second try only over a renewal of this run's own that landed unheard.
        let mut lost = Now::TakenOver;
        for _ in 0..2 {
            // The claim runs from the time the renewal names, which is before it is sent.
            let sent_at = Moment::now();
            let mut renewed = self.lease.clone();
            renewed["spec"]["renewTime"] = Value::String(micro_time(cluster.server_now()));
            let before = Arc::new(self.lease.clone());
            let replace = Change::Replace { key: self.key.clone(), before, after: Arc::new(renewed) };
            let sent = match send(cluster, &replace).await {
                // Not applied, as far as can be told (a busy server, no answer, none reached):
                // the claim is still this run's while it lasts, and the next renewal tries again.
                Err(Error::Api { failure, doing })
                    if (failure.outcome_unknown() || failure.not_sent() || failure.code == Some(429))
                        && self.may_try_again(cluster.request_limit()) =>
                {
                    crate::stderr::line(&format!(
                        "warning: renewing the claim: {doing}: {failure}; it holds for {}s more, and renewing it is tried again",
                        LEASE_DURATION.saturating_sub(self.renewed.elapsed()).as_secs()
                    ));
                    self.retry_at = Some(Instant::now() + RENEWAL_RETRY_WAIT);
                    return Ok(());
                }
                Err(Error::Api { failure, .. }) if failure.code == Some(404) => {
                    lost = Now::Gone;
                    break;
                }
                sent => sent?,
            };
            match sent {
                Ok(stored) => {
                    self.lease = stored.unwrap_or_else(|| self.lease.clone());
                    self.renewed = sent_at;
                    self.retry_at = None;
                    return Ok(());
                }
                Err(()) => match self.read_again(cluster).await? {
                    Now::Ours(lease) => self.lease = lease,
                    now => {
                        lost = now;
                        break;
                    }
                },
            }
        }
        let how = match lost {
            Now::Gone => "released by someone else (`release-claim`, or its Lease deleted)",
            _ => "taken over by someone else (after it expired, or was released)",
        };
        Err(Error::Refused(format!("stopped: the claim {} was {how}", self.key)))
    }

    /// Whether a renewal the server did not apply (a 5xx, no answer, a 429) may be tried again
    /// later instead of stopping the run: only while any request started before that next try,
    /// and the read that resolves it (each within `request_limit`, the request timeout), still
    /// ends before the claim does; never without a request timeout.
    fn may_try_again(&self, request_limit: Option<Duration>) -> bool {
        request_limit.is_some_and(|limit| {
            self.renewed.elapsed() + RENEWAL_RETRY_WAIT + limit * 2 + RENEWAL_MARGIN < LEASE_DURATION
        })
    }

    /// The claim's Lease read again, after a write of it was refused.
    async fn read_again(&self, cluster: &Cluster) -> Result<Now, Error> {
        let now = cluster.get(&lease_resource(), &self.key.namespace, &self.key.name).await?;
        Ok(match now {
            None => Now::Gone,
            Some(lease) if still_ours(&self.lease, &lease) => Now::Ours(lease),
            Some(_) => Now::TakenOver,
        })
    }

    /// The namespace and name of the Rollout claimed.
    pub fn rollout(&self) -> (&str, &str) {
        (&self.key.namespace, &self.rollout)
    }

    /// Gives the claim up: a delete conditional on the Lease being exactly as this run left it,
    /// or as a renewal of this run's that landed unheard left it (see [`Now`]).
    pub async fn release(&self, cluster: &Cluster) -> Result<(), Error> {
        let mut lease = self.lease.clone();
        for _ in 0..2 {
            let delete = Change::Delete { key: self.key.clone(), before: Arc::new(lease) };
            match send(cluster, &delete).await {
                Ok(Ok(_)) => return Ok(()),
                Ok(Err(())) => match self.read_again(cluster).await? {
                    Now::Ours(now) => lease = now,
                    Now::Gone => return Ok(()),
                    Now::TakenOver => {
                        return Err(Error::Conflict(format!(
                            "{} was taken over by another run (after this one expired, or was released): it is theirs now, and left alone",
                            self.key
                        )));
                    }
                },
                Err(Error::Api { failure, .. }) if failure.code == Some(404) => return Ok(()),
                Err(other) => return Err(other),
            }
        }
        Err(Error::Conflict(format!(
            "{} was changed by someone else; it is left alone, to expire {}s after its last renewal",
            self.key,
            LEASE_DURATION.as_secs()
        )))
    }
}

/// A claim's Lease as it is now, read again after a write of it was refused.
enum Now {
    Gone,
    /// Still this run's claim (see `still_ours`), changed since this run last heard of it:
    /// someone else changes a claim only by taking it over (a holder and time of their own), so
    /// this holds a renewal of this run's that landed unheard.
    Ours(Value),
    TakenOver,
}

/// Whether `lease` is still the claim `held` (a Lease as this run wrote it): the same holder,
/// since the same time.
fn still_ours(held: &Value, lease: &Value) -> bool {
    ["holderIdentity", "acquireTime"].iter().all(|field| lease["spec"][field] == held["spec"][field])
}

/// Deletes the claim on Rollout `namespace/rollout` that `release-claim` showed (`shown`, the
/// Lease as read before the question): a delete conditional on that Lease's UID and
/// resourceVersion, never on a later read, so that a claim renewed or taken over while the
/// question was open is left alone and the refusal (exit 3) names its holder now. Returns false
/// when there was nothing left to delete (released meanwhile). The requests and their faults
/// are tested on the fake API server: tests/writes.rs `release_claim_deletes_only_the_claim_it_showed`
/// and `release_claim_resolves_a_lost_or_garbled_reply_to_its_delete`.
pub async fn release_shown(cluster: &Cluster, namespace: &str, rollout: &str, shown: &Value) -> Result<bool, Error> {
    let key = lease_key(namespace, rollout);
    let delete = Change::Delete { key: key.clone(), before: Arc::new(shown.clone()) };
    match send(cluster, &delete).await {
        Ok(Ok(_)) => Ok(true),
        Err(Error::Api { failure, .. }) if failure.code == Some(404) => Ok(false),
        Ok(Err(())) => {
            let now = cluster.get(&lease_resource(), namespace, &key.name).await?;
            changed_since_shown(namespace, rollout, now.as_ref(), cluster.server_now())
        }
        // Not heard, and not seen applied when read again, or not read: the server may apply it.
        Err(error @ Error::Api { .. }) if matches!(&error, Error::Api { failure, .. } if failure.outcome_unknown()) => {
            Err(Error::Input(format!(
                "the claim on Rollout {namespace}/{rollout} may or may not be released ({error}); `kubectl rollout-lua release-claim {}` shows whether it is",
                model::rollout_args(namespace, rollout)
            )))
        }
        Err(other) => Err(other),
    }
}

/// The delete of the claim on Rollout `namespace/rollout` as shown was refused, and its Lease
/// is `now` (None: gone): released meanwhile (false), or refused, naming who holds it at
/// `server_now`.
fn changed_since_shown(
    namespace: &str,
    rollout: &str,
    now: Option<&Value>,
    server_now: SystemTime,
) -> Result<bool, Error> {
    match now {
        None => Ok(false),
        Some(now) => Err(Error::Conflict(format!(
            "not released: the claim on Rollout {namespace}/{rollout} changed since it was shown (renewed, or taken over); it is now held by {}",
            view(now, server_now).text()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(renewed: &str, seconds: i64) -> Value {
        json!({"metadata": {"annotations": {COMMAND_ANNOTATION: "approve demo"}},
               "spec": {"holderIdentity": "alice@laptop (pid 42)", "acquireTime": "2026-01-01T00:00:00.000000Z",
                        "renewTime": renewed, "leaseDurationSeconds": seconds}})
    }

    fn at(text: &str) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(crate::time::parse_rfc3339(text).unwrap() as u64)
    }

    #[test]
    fn a_claim_changed_since_shown_is_refused_naming_its_holder_and_one_gone_was_released_meanwhile() {
        let now = at("2026-01-01T00:11:00Z");
        assert!(matches!(changed_since_shown("shop", "demo", None, now), Ok(false)));
        let Err(Error::Conflict(refusal)) =
            changed_since_shown("shop", "demo", Some(&lease("2026-01-01T00:10:00Z", 120)), now)
        else {
            panic!("refused")
        };
        assert_eq!(
            refusal,
            "not released: the claim on Rollout shop/demo changed since it was shown (renewed, or taken over); it is now held by alice@laptop (pid 42) running `approve demo`, since 2026-01-01T00:00:00Z (until 2026-01-01T00:12:00Z unless renewed)"
        );
    }

    #[test]
    fn a_lease_renewed_unheard_is_still_ours_and_one_taken_over_is_not() {
        let held = lease("2026-01-01T00:10:00.000000Z", 120);
        let mut renewed = lease("2026-01-01T00:10:30.000000Z", 120);
        renewed["metadata"]["resourceVersion"] = json!("12");
        assert!(still_ours(&held, &renewed));
        // Taken over: another holder, or the same name taken again since (another pid's run
        // would differ in the holder; a run of this one's never takes its own claim twice).
        let mut theirs = renewed.clone();
        theirs["spec"]["holderIdentity"] = json!("bob@desk (pid 7)");
        assert!(!still_ours(&held, &theirs));
        let mut again = renewed.clone();
        again["spec"]["acquireTime"] = json!("2026-01-01T00:10:30.000000Z");
        assert!(!still_ours(&held, &again));
    }

    #[test]
    fn a_claim_expires_its_duration_after_its_last_renewal() {
        let held = lease("2026-01-01T00:10:00.000000Z", 120);
        assert!(!view(&held, at("2026-01-01T00:11:59Z")).expired);
        assert!(view(&held, at("2026-01-01T00:12:01Z")).expired);
        assert_eq!(view(&held, at("2026-01-01T00:12:01Z")).expires.as_deref(), Some("2026-01-01T00:12:00Z"));
        assert!(view(&json!({"spec": {}}), at("2026-01-01T00:00:00Z")).expired);
        // Expired within the hour, it is watched before it is taken over; one that says no
        // time is taken over at once.
        assert!(expired_lately(&held, at("2026-01-01T01:12:00Z")));
        assert!(!expired_lately(&held, at("2026-01-01T01:12:01Z")));
        assert!(!expired_lately(&json!({"spec": {}}), at("2026-01-01T00:00:00Z")));
    }

    #[test]
    fn the_holder_is_named_with_the_command_and_since_when() {
        let claim = view(&lease("2026-01-01T00:10:00Z", 120), at("2026-01-01T00:11:00Z"));
        assert_eq!(
            claim,
            ClaimView {
                holder: "alice@laptop (pid 42)".into(),
                command: Some("approve demo".into()),
                since: Some("2026-01-01T00:00:00.000000Z".into()),
                renewed: Some("2026-01-01T00:10:00Z".into()),
                expires: Some("2026-01-01T00:12:00Z".into()),
                expired: false,
            }
        );
        assert_eq!(
            claim.text(),
            "alice@laptop (pid 42) running `approve demo`, since 2026-01-01T00:00:00Z (until 2026-01-01T00:12:00Z unless renewed)"
        );
        assert!(holder_identity().contains(&format!("(pid {})", std::process::id())));
        assert_eq!(micro_time(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000000Z");
        assert_eq!(lease_key("shop", "demo").name, "rollout-lua.demo");
    }
}
