//! Exit codes, documented in the README and `semtrace --help`.

use semtrace_core::error::ErrorKind;

/// All inputs processed; no review was found exposed.
pub const OK: i32 = 0;
/// All inputs processed; at least one review was found exposed.
pub const EXPOSED: i32 = 1;
// 2 is clap's usage error.
/// A bundle or review could not be used (malformed, wrong version, binary, too large, ...).
pub const BAD_INPUT: i32 = 3;
/// The model could not be loaded or run, or it is not the bundle's model.
pub const MODEL: i32 = 4;
/// File system or network failure.
pub const IO: i32 = 5;
/// `build`: too few facts passed the gates to form 2K positions (the report names the gate).
pub const BUILD_FAILED: i32 = 6;
/// `protect` / `build --protect`: the carrier cannot be embedded or failed its round trip.
pub const CARRIER_FAILED: i32 = 7;

/// Map an error chain to an exit code by its innermost core error kind, if any.
pub fn code_for(e: &anyhow::Error) -> i32 {
    for cause in e.chain() {
        if let Some(core) = cause.downcast_ref::<semtrace_core::Error>() {
            return match core.kind {
                ErrorKind::Bundle | ErrorKind::Review => BAD_INPUT,
                ErrorKind::Model => MODEL,
            };
        }
        if let Some(p) = cause.downcast_ref::<crate::protect::ProtectError>() {
            use crate::protect::ProtectError;
            return match p {
                ProtectError::Source(_) | ProtectError::Bundle(_) => BAD_INPUT,
                ProtectError::Font(_) => IO,
                ProtectError::Carrier(_) => CARRIER_FAILED,
            };
        }
        if cause.downcast_ref::<InputError>().is_some()
            || cause.downcast_ref::<crate::source::SourceError>().is_some()
        {
            return BAD_INPUT;
        }
    }
    IO
}

/// A user-input problem found by the CLI itself (missing file, empty directory, ...).
#[derive(Debug)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}
