//! kubectl-rollout-lua: plans, applies, approves and restores the Lua traffic routing of
//! OpenKruise Rollouts from a workstation, with the controller's semantics.

pub mod data;
pub mod error;
pub mod gojson;
pub mod lua;
pub mod model;
pub mod plan;
pub mod scripts;
pub mod yaml;
