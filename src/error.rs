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

impl Error {
    /// The same failure with another message: a refusal stays a refusal (exit 3), anything
    /// else becomes an input error.
    pub fn reworded(self, message: String) -> Error {
        match self {
            Error::Refused(_) => Error::Refused(message),
            _ => Error::Input(message),
        }
    }
}
