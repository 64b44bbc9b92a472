//! The I/O edge: files and (later) the cluster. Everything else works on what these return.

mod causes;
pub mod cluster;
mod deadline;
mod exec_plugin;
pub mod files;
mod kubeconfig;
pub mod live;
pub mod overrides;
mod proxy;
pub mod request_log;
pub mod retry;
mod token_file;
pub mod watch;
