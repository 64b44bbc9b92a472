//! Claims on Rollouts as commands show them: `status` names a live claim, `release-claim`
//! deletes one whose holder is gone.

use super::cluster::{Session, runtime, selection};
use super::{Outcome, ReleaseClaimArgs, ScriptArgs, confirm, print};
use crate::error::Error;
use crate::source::cluster::Cluster;
use crate::source::live::{self, Selection};
use crate::write::{self, Interrupt};
use std::time::SystemTime;

pub fn release_claim(args: &ReleaseClaimArgs) -> anyhow::Result<Outcome> {
    runtime()?.block_on(async {
        let session = Session::open(&args.cluster, &ScriptArgs::default()).await?;
        let selection = selection(&args.selection)?;
        let interrupt = Interrupt::listen()?;
        let names = rollout_names(&session, &selection).await?;
        let namespace = &session.cluster.namespace;
        let mut held = Vec::new();
        for name in &names {
            match claim_of(&session.cluster, namespace, name).await? {
                Some(holder) => held.push((name, holder)),
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

/// Who claims Rollout `namespace/name`, and until when, if anyone does.
pub(super) async fn claim_of(cluster: &Cluster, namespace: &str, name: &str) -> Result<Option<String>, Error> {
    let key = write::lease_key(namespace, name);
    let Some(lease) = cluster.get(&write::lease_resource(), namespace, &key.name).await? else {
        return Ok(None);
    };
    let until = match write::expired(&lease, SystemTime::now()) {
        true => "expired: the next approve or restore takes it over".to_string(),
        false => format!("until {} unless renewed", write::expiry(&lease).unwrap_or_default()),
    };
    Ok(Some(format!("{} ({until})", write::describe_holder(&lease))))
}
