//! One error type for the core, with a kind the bindings map to exit codes / JS errors.

use std::fmt;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, coarse enough for a CLI exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The bundle is malformed, of an unknown version or fails validation.
    Bundle,
    /// The review text cannot be used (binary, too large, ...).
    Review,
    /// The model cannot be loaded, run, or does not match the bundle.
    Model,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn bundle(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Bundle,
            message: message.into(),
        }
    }
    pub fn review(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Review,
            message: message.into(),
        }
    }
    pub fn model(message: impl Into<String>) -> Self {
        Error {
            kind: ErrorKind::Model,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Bundle => "invalid bundle",
            ErrorKind::Review => "invalid review",
            ErrorKind::Model => "model error",
        };
        write!(f, "{what}: {}", self.message)
    }
}

impl std::error::Error for Error {}
