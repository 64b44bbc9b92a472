//! Claims on Rollouts as commands show them: `status` names a live claim, `release-claim`
//! deletes one whose holder is gone.

use super::cluster::{Session, runtime, selection};
use super::{Outcome, ReleaseClaimArgs, ScriptArgs, confirm, print};
use crate::error::Error;
use crate::source::cluster::Cluster;
use crate::source::live::{self, Selection};
use crate::status::ClaimView;
use crate::write::{self, Interrupt};
use serde_json::Value;

pub fn release_claim(args: &ReleaseClaimArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let selection = selection(&args.selection)?;
        let session = Session::open(&args.cluster, &ScriptArgs::default()).await?;
        let interrupt = Interrupt::listen(None)?;
        let names = rollout_names(&session, &selection).await?;
        let (cluster, namespace) = (&session.cluster, &session.cluster.namespace);
        // Each Lease as shown: what is deleted is exactly that Lease (see `write::release_shown`).
        let mut held = Vec::new();
        for name in &names {
            match lease_of(cluster, namespace, name).await? {
                Some(lease) => held.push((name, lease)),
                None => print(&format!("Rollout {namespace}/{name} is not claimed\n"))?,
            }
        }
        if held.is_empty() {
            return Ok(Outcome::Done);
        }
        for (name, lease) in &held {
            let holder = write::claim_view(lease, cluster.server_now()).text();
            print(&format!("Rollout {namespace}/{name} is claimed by {holder}\n"))?;
        }
        if !args.yes {
            interrupt
                .confirm("Release these claims (their holders may still be writing)?", |q| confirm(q, false))
                .await?;
        }
        // A claim that changed since it was shown is refused; the others are released still.
        let mut refusals = Vec::new();
        for (name, lease) in &held {
            match write::release_shown(cluster, namespace, name, lease).await {
                Ok(true) => print(&format!("released the claim on Rollout {namespace}/{name}\n"))?,
                Ok(false) => print(&format!("Rollout {namespace}/{name} is not claimed (released meanwhile)\n"))?,
                Err(Error::Conflict(refusal)) => refusals.push(refusal),
                Err(other) => return Err(other.into()),
            }
        }
        match refusals.is_empty() {
            true => Ok(Outcome::Done),
            false => Err(Error::Conflict(refusals.join("\n")).into()),
        }
    })
}

async fn rollout_names(session: &Session, selection: &Selection) -> Result<Vec<String>, Error> {
    Ok(match selection {
        Selection::Names(names) => names.iter().map(|n| live::rollout_name(n).to_string()).collect(),
        Selection::Selector(_) | Selection::All => {
            live::read_rollouts(&session.cluster, selection).await?.found.into_iter().map(|r| r.item.name).collect()
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
