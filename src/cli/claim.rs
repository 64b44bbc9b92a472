//! Claims on Rollouts as commands show them: `status` names a live claim, `release-claim`
//! deletes one whose holder is gone.

use super::cluster::{Session, runtime, selection};
use super::{Outcome, ReleaseClaimArgs, ScriptArgs, confirm, print};
use crate::error::Error;
use crate::source::cluster::Cluster;
use crate::source::live::{self, Selection};
use crate::status::ClaimView;
use crate::write::{self, Interrupt};

pub fn release_claim(args: &ReleaseClaimArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let selection = selection(&args.selection)?;
        let session = Session::open(&args.cluster, &ScriptArgs::default()).await?;
        let interrupt = Interrupt::listen(None)?;
        let names = rollout_names(&session, &selection).await?;
        let namespace = &session.cluster.namespace;
        let mut held = Vec::new();
        for name in &names {
            match claim_of(&session.cluster, namespace, name).await? {
                Some(claim) => held.push((name, claim.text())),
                None => print(&format!("Rollout {namespace}/{name} is not claimed\n"))?,
            }
        }
        if held.is_empty() {
            return Ok(Outcome::Done);
        }
        for (name, holder) in &held {
            print(&format!("Rollout {namespace}/{name} is claimed by {holder}\n"))?;
        }
        if !args.yes {
            interrupt
                .confirm("Release these claims (their holders may still be writing)?", |q| confirm(q, false))
                .await?;
        }
        for (name, _) in &held {
            if write::release_any(&session.cluster, namespace, name).await?.is_some() {
                print(&format!("released the claim on Rollout {namespace}/{name}\n"))?;
            }
        }
        Ok(Outcome::Done)
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
    let key = write::lease_key(namespace, name);
    let lease = cluster.get(&write::lease_resource(), namespace, &key.name).await?;
    Ok(lease.map(|lease| write::claim_view(&lease, cluster.server_now())))
}
