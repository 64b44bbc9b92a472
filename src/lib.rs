//! kubectl-rollout-lua: plans, applies, approves and restores the Lua traffic routing of
//! OpenKruise Rollouts from a workstation, with the controller's semantics.

pub(crate) mod change;
pub(crate) mod cli;
pub(crate) mod data;
pub(crate) mod error;
pub(crate) mod gojson;
pub(crate) mod lua;
pub(crate) mod model;
pub(crate) mod output;
pub(crate) mod plan;
pub(crate) mod providers;
pub(crate) mod rbac;
pub(crate) mod schema;
pub(crate) mod scripts;
pub(crate) mod snapshot;
pub(crate) mod source;
pub(crate) mod status;
pub(crate) mod stderr;
pub(crate) mod testcase;
pub(crate) mod time;
pub(crate) mod write;
pub(crate) mod yaml;

/// The version and the git commit it was built from.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("GIT_COMMIT"), ")");

pub use cli::{Cli, run};
/// What the tests and benchmarks reach besides the command line.
#[doc(hidden)]
pub mod for_tests {
    pub use crate::gojson::to_string as go_json;
    pub use crate::model::http_route::as_stored;
    pub use crate::testcase::TestCase;
    pub use crate::time::rfc3339;
    pub use crate::write::backup_text;
    pub use crate::yaml::parse_documents;
}
