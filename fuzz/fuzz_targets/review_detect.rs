//! A review as a reviewer submits it (any bytes): the checks `semtrace detect` and the page run,
//! segmentation into sentences and 2-sentence windows, then the exhaustive and the fast decoder
//! against the sample bundle with the lexical stand-in scorer (a deterministic stand-in, not the
//! NLI model: the decoding logic is what is fuzzed). The report must be internally consistent and
//! the fast decoder's observed positions a subset of what it scored.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use semtrace_core::bundle::Bundle;
use semtrace_core::detect::{check_model, detect, detect_fast, review_text, FastOptions};
use semtrace_core::nli::LexicalStandIn;
use semtrace_core::segment::{detector_window_texts, sentences};

fn bundle() -> &'static Bundle {
    static B: OnceLock<Bundle> = OnceLock::new();
    B.get_or_init(|| {
        Bundle::from_json(include_str!("../../tests/fixtures/sample-bundle.json")).unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(review) = review_text(data) else {
        return;
    };
    let sents = sentences(review);
    for s in &sents {
        assert!(review.is_char_boundary(s.start) && review.is_char_boundary(s.end));
        assert!(s.start <= s.end && s.end <= review.len());
    }
    let _ = detector_window_texts(review);
    let b = bundle();
    let check = check_model(b, "stand-in", &"a".repeat(64), true).unwrap();
    let Ok(full) = detect(review, b, &LexicalStandIn, check.clone(), &mut |_, _| {}) else {
        return;
    };
    assert_eq!(full.positions.len(), b.k);
    assert!(full.matched + full.mismatched == full.observed && full.observed <= b.k);
    assert!((0.0..=1.0).contains(&full.p_value), "p = {}", full.p_value);
    let fast = detect_fast(review, b, &LexicalStandIn, check, FastOptions::default(), &mut |_, _| {})
        .expect("the fast decoder accepts what the exhaustive one accepted");
    assert!(fast.pairs_scored <= full.pairs_scored);
    assert!((0.0..=1.0).contains(&fast.p_value));
});
