//! Failures a user sees. Exit codes are mapped from these in one place (`cli::exit_code`).

use crate::lua::ScriptError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: a file, an object, a flag; the message names it.
    #[error("{0}")]
    Input(String),
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// A guard refused the operation and nothing was written.
    #[error("{0}")]
    Refused(String),
}
