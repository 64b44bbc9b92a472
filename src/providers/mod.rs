//! Providers: each turns (routing, a stage's strategy, the live objects) into the changes the
//! controller would make, with warnings. They run in the controller's order (custom refs, then
//! ingress, then gateway) and the first error stops the plan, as it stops the controller.

pub mod custom;
