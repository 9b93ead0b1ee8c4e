//! Bundle JSON as a venue or a reviewer might hand it to `semtrace detect` or the page: parse and
//! validate; a bundle that validates must serialise and re-read to itself, and everything the
//! detector derives from it (facts, carrier text, a decode with the lexical stand-in) must not
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use semtrace_core::bundle::Bundle;
use semtrace_core::detect::{check_model, detect, fact_texts};
use semtrace_core::nli::LexicalStandIn;

const REVIEW: &str = include_str!("../../tests/fixtures/sample-review.md");

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(bundle) = Bundle::from_json(text) else {
        return;
    };
    let again = Bundle::from_json(&bundle.to_json_pretty()).expect("a valid bundle re-reads");
    assert_eq!(again, bundle, "serialise + parse is the identity");
    assert_eq!(fact_texts(&bundle).len(), 2 * bundle.k);
    let _ = semtrace_core::carrier::carrier_text(&bundle);
    if let Ok(check) = check_model(&bundle, "stand-in", &"a".repeat(64), true) {
        let report = detect(REVIEW, &bundle, &LexicalStandIn, check, &mut |_, _| {})
            .expect("a valid bundle decodes a valid review");
        assert!(report.observed <= bundle.k && report.matched <= report.observed);
    }
});
