//! The carrier round trip: the sample bundle with its 24 facts replaced by fuzzed text (one per
//! line; a bundle that no longer validates is skipped, as `semtrace protect` refuses it), embedded
//! into a small real PDF (a LaTeX page from the test fixtures) in each carrier mode. `protect`
//! verifies the round trip itself (original an untouched prefix, the carrier re-extracted exactly
//! once on the final page); it must return a verified copy or an error, never panic.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use semtrace::protect::{protect, Options};
use semtrace_core::bundle::Bundle;
use semtrace_core::carrier::{carrier_text, occurrences, CarrierMode};

const PDF: &[u8] = include_bytes!("../../tests/fixtures/lineno/onecol.pdf");

fn sample() -> &'static Bundle {
    static B: OnceLock<Bundle> = OnceLock::new();
    B.get_or_init(|| {
        Bundle::from_json(include_str!("../../tests/fixtures/sample-bundle.json")).unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let mut bundle = sample().clone();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty()).cycle();
    if text.lines().all(|l| l.trim().is_empty()) {
        return;
    }
    for p in &mut bundle.positions {
        for f in &mut p.facts {
            f.text = lines.next().unwrap().to_string();
        }
    }
    if bundle.validate().is_err() {
        return;
    }
    let Ok(carrier) = carrier_text(&bundle) else {
        return;
    };
    // The core's match normalisation finds the carrier in a text that contains it.
    assert!(occurrences(&format!("Page text.\n{carrier}\nMore."), &carrier) >= 1);
    let mode = match mode % 3 {
        0 => CarrierMode::Invisible,
        1 => CarrierMode::White,
        _ => CarrierMode::Tiny,
    };
    if let Ok(p) = protect(PDF, &bundle, &Options { mode, font: None }) {
        assert!(p.bytes.starts_with(PDF), "the original is an untouched prefix");
        assert_eq!(p.text, carrier);
    }
});
