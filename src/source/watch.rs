//! Following Rollouts as `kubectl get -w` does: a watch, resumed from the last resourceVersion
//! seen when the connection drops or the server ends it, listed again when that version has
//! expired, and polling only where listing or watching is forbidden.

use super::cluster::{Cluster, Resource, Watched};
use super::live::{self, Selection, rollout_name};
use crate::error::Error;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// How often Rollouts are read where they may not be watched.
pub const POLL: Duration = Duration::from_secs(2);

/// The shortest time between two openings of the watch, so that a server (or proxy) that ends
/// every watch at once is not asked again in a loop.
const REOPEN_AFTER: Duration = Duration::from_secs(1);

/// The longest a watch is asked to last (the API server's own limit is about 5 minutes).
const WATCH_AT_MOST: Duration = Duration::from_secs(290);

/// What may have changed since the last wait for a change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Changes {
    /// These Rollouts (namespace, name): added, changed or deleted.
    Rollouts(BTreeSet<(String, String)>),
    /// Any of them: the watch started over from a fresh list, or they are polled.
    Unknown,
}

/// Changes to the selected Rollouts.
pub struct RolloutWatch {
    cluster: Cluster,
    resource: Resource,
    /// `""`: every namespace.
    namespace: String,
    labels: String,
    fields: String,
    /// Several names: the namespace is watched, and changes of other Rollouts are ignored.
    names: Option<BTreeSet<String>>,
    /// The last resourceVersion seen: where the watch resumes.
    version: String,
    events: Option<BoxStream<'static, Result<Watched, String>>>,
    opened: Option<Instant>,
    /// Why the Rollouts are read every `POLL` instead of watched.
    polling: Option<String>,
}

impl RolloutWatch {
    /// Starts following the Rollouts `selection` picks in `namespace` (`""`: every namespace):
    /// their resourceVersion now. The watch from it is opened by the first [`Self::changed`], so
    /// that what is read in between is shown before the watch is asked for, and each change
    /// after that version is still seen.
    pub async fn start(cluster: &Cluster, namespace: &str, selection: &Selection) -> Result<RolloutWatch, Error> {
        let (labels, fields, names) = match selection {
            Selection::Names(names) => {
                let names: BTreeSet<String> = names.iter().map(|n| rollout_name(n).to_string()).collect();
                match names.iter().collect::<Vec<_>>().as_slice() {
                    [name] => (String::new(), format!("metadata.name={name}"), None),
                    _ => (String::new(), String::new(), Some(names)),
                }
            }
            Selection::Selector(selector) => (selector.clone(), String::new(), None),
            Selection::All => (String::new(), String::new(), None),
        };
        let mut watch = RolloutWatch {
            cluster: cluster.clone(),
            resource: live::rollout_resource(cluster).await?,
            namespace: namespace.to_string(),
            labels,
            fields,
            names,
            version: String::new(),
            events: None,
            opened: None,
            polling: None,
        };
        watch.list_again().await?;
        Ok(watch)
    }

    /// Why the Rollouts are polled instead of watched, if they are.
    pub fn polling(&self) -> Option<&str> {
        self.polling.as_deref()
    }

    /// Waits until selected Rollouts change (added, changed, deleted): those, with the changes
    /// of others already received; or, when the watch had to start over from a fresh list (or
    /// turned to polling), any may have; polling, until the next read is due. A failed request
    /// (opening the watch, the LIST after a 410) is returned as it is and leaves the watch to be
    /// opened again from the version seen by the next call: the follower decides whether to try
    /// again.
    pub async fn changed(&mut self) -> Result<Changes, Error> {
        let mut changed = BTreeSet::new();
        loop {
            if self.polling.is_some() {
                tokio::time::sleep(POLL).await;
                return Ok(Changes::Unknown);
            }
            let Some(events) = &mut self.events else {
                if !changed.is_empty() {
                    return Ok(Changes::Rollouts(changed));
                }
                if let Some(opened) = self.opened {
                    tokio::time::sleep(REOPEN_AFTER.saturating_sub(opened.elapsed())).await;
                }
                if !self.open().await? {
                    // Expired: listed again; what happened meanwhile is unknown.
                    return Ok(Changes::Unknown);
                }
                continue;
            };
            // After a change, the others already received come with it: one read for a burst.
            let event = match changed.is_empty() {
                true => events.next().await,
                false => match events.next().now_or_never() {
                    Some(event) => event,
                    None => return Ok(Changes::Rollouts(changed)),
                },
            };
            match event {
                Some(Ok(Watched::Changed { version, namespace, name })) => {
                    self.version = version;
                    if self.names.as_ref().is_none_or(|names| names.contains(&name))
                        && (self.namespace.is_empty() || self.namespace == namespace)
                    {
                        changed.insert((namespace, name));
                    }
                }
                Some(Ok(Watched::At(version))) => self.version = version,
                Some(Ok(Watched::Expired)) => {
                    self.events = None;
                    self.list_again().await?;
                    return Ok(Changes::Unknown);
                }
                // The server ended the watch, or the connection broke: resume from the version seen.
                Some(Err(_)) | None => self.events = None,
            }
        }
    }

    /// Opens the watch from the version seen; false when that version expired (then listed
    /// again) or watching is forbidden (then polled).
    async fn open(&mut self) -> Result<bool, Error> {
        self.opened = Some(Instant::now());
        // The server ends the watch before the request limit cuts it off (super::deadline):
        // after half the limit.
        let timeout = self.cluster.request_limit().map_or(WATCH_AT_MOST, |limit| (limit / 2).min(WATCH_AT_MOST));
        let selectors = (self.labels.as_str(), self.fields.as_str());
        match self.cluster.watch(&self.resource, &self.namespace, selectors, &self.version, timeout).await {
            Ok(events) => {
                self.events = Some(events);
                Ok(true)
            }
            Err(Error::Api { failure, .. }) if failure.code == Some(410) => {
                self.list_again().await?;
                Ok(false)
            }
            Err(error @ Error::Api { .. }) if forbidden(&error) => {
                self.polling = Some(format!("watching Rollouts is forbidden ({error})"));
                Ok(false)
            }
            Err(error) => Err(error),
        }
    }

    /// The current resourceVersion of the selected Rollouts, from a LIST.
    async fn list_again(&mut self) -> Result<(), Error> {
        match self.cluster.list_version(&self.resource, &self.namespace, &self.labels).await {
            Ok(version) => self.version = version,
            Err(error) if forbidden(&error) => {
                self.polling = Some(format!("listing Rollouts is forbidden ({error})"));
            }
            Err(error) => return Err(error),
        }
        Ok(())
    }
}

fn forbidden(error: &Error) -> bool {
    matches!(error, Error::Api { failure, .. } if failure.code == Some(403))
}
