//! kubectl-rollout-lua: plans, applies, approves and restores the Lua traffic routing of
//! OpenKruise Rollouts from a workstation, with the controller's semantics.

pub mod change;
pub mod cli;
pub mod data;
pub mod error;
pub mod gojson;
pub mod lua;
pub mod model;
pub mod output;
pub mod plan;
pub mod providers;
pub mod rbac;
pub mod schema;
pub mod scripts;
pub mod snapshot;
pub mod source;
pub mod status;
pub mod stderr;
pub mod testcase;
pub mod time;
pub mod write;
pub mod yaml;

/// The version and the git commit it was built from.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("GIT_COMMIT"), ")");
