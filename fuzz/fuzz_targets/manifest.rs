//! A venue batch manifest (`semtrace detect --manifest`): any text parses to lines in order, each
//! with a usable review and bundle path, or to an error that names the line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use semtrace::commands::venue::parse_manifest;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse_manifest(text, "fuzz.jsonl") {
        Ok(lines) => {
            assert!(!lines.is_empty());
            assert!(lines.windows(2).all(|w| w[0].line < w[1].line));
            assert!(lines.iter().all(|l| !l.review.trim().is_empty() && !l.bundle.trim().is_empty()));
        }
        Err(e) => assert!(e.0.contains("fuzz.jsonl"), "the error names the manifest: {}", e.0),
    }
});
