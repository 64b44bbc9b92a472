//! Providers: each turns (routing, a stage's strategy, the live objects) into the writes the
//! controller would make, with warnings. The controller runs them in a fixed order (custom
//! refs, then ingress, then gateway) and the first error stops it.

pub mod case;
pub mod custom;
pub mod gateway;
pub mod ingress;
