//! kubectl-rollout-lua: plans, applies, approves and restores the Lua traffic routing of
//! OpenKruise Rollouts from a workstation, with the controller's semantics.

pub mod data;
pub mod gojson;
pub mod lua;
