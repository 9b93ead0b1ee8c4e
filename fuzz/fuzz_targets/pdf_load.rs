//! A document as a venue hands it to `semtrace build` / `extract` (any bytes): sniffed, loaded as
//! PDF (xref repair, pdf-extract and the project's own layout) or as text, into evidence units.
//! Parser panics inside third-party code are caught by `source::pdf::quietly` and become a
//! `SourceError` the user sees; anything else that panics is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(doc) = semtrace::source::load_bytes(data) {
        for u in &doc.units {
            assert!(!u.text.trim().is_empty(), "an evidence unit has text");
        }
    }
});
