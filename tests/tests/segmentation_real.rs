//! Sentence segmentation and windows on every real review in ../shared/corpus/reviews.

use semtrace_core::segment::{sentences, windows};
use semtrace_e2e::*;

#[test]
fn every_real_review_segments_sensibly() {
    let papers = corpus_papers(usize::MAX);
    let reviews: Vec<&String> = papers.iter().flat_map(|p| &p.reviews).collect();
    assert!(reviews.len() >= 200, "{} reviews", reviews.len());
    let (mut total, mut lower_start, mut very_long, mut tiny) = (0usize, 0usize, 0usize, 0usize);
    for r in &reviews {
        let s = sentences(r);
        assert!(!s.is_empty());
        for x in &s {
            // Spans point into the original text, at char boundaries, and cover the sentence.
            assert!(r.is_char_boundary(x.start) && r.is_char_boundary(x.end) && x.start < x.end);
            let words = x.text.split_whitespace().count();
            total += 1;
            if words > 80 {
                very_long += 1;
            }
            if words < 3 {
                tiny += 1;
            }
            if x.text.chars().next().is_some_and(char::is_lowercase) {
                lower_start += 1;
            }
        }
        let (w, n) = windows(&s, 2, 128);
        assert_eq!(w.len(), n.min(128));
        assert!(w.iter().all(|w| !w.text.is_empty()));
    }
    let pct = |x: usize| 100.0 * x as f64 / total as f64;
    eprintln!(
        "{} reviews, {total} sentences: {:.1}% start lowercase, {:.1}% over 80 words, {:.1}% under 3 words",
        reviews.len(),
        pct(lower_start),
        pct(very_long),
        pct(tiny)
    );
    // A sentence starting in lowercase usually means a wrong split (after an abbreviation, say).
    assert!(pct(lower_start) < 3.0);
    assert!(pct(very_long) < 2.0, "missed boundaries");
    assert!(pct(tiny) < 3.0, "fragments");
}
