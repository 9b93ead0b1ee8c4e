//! The tract engine against the reference implementations, on real text from ../shared/corpus:
//! token ids identical to Python `tokenizers` (≥ 200 pairs) for both graphs; logits of the
//! project's own MiniLM model (dynamic length, weight-only int8) within 1e-3 of onnxruntime
//! (40 pairs, identical batch composition); for the DeBERTa-v3-xsmall graph with dynamically
//! quantised activations (fixed length 160), a looser bound explained at its test.

use std::process::Command;

use semtrace_core::nli::{softmax, ModelSpec, NliPair, NliScorer};
use semtrace_core::segment::{sentences, windows};
use semtrace_e2e::*;
use semtrace_infer::TractNli;

/// Real (review window, paper sentence) pairs plus hand-made awkward strings.
fn real_pairs(n: usize) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for paper in corpus_papers(50) {
        let facts: Vec<String> = sentences(&paper.paper_text)
            .into_iter()
            .map(|s| s.text)
            .filter(|t| (12..=60).contains(&t.split_whitespace().count()))
            .take(6)
            .collect();
        for (ri, review) in paper.reviews.iter().enumerate().take(3) {
            let (ws, _) = windows(&sentences(review), 2, 128);
            for (wi, w) in ws.iter().enumerate().step_by(7).take(3) {
                if let Some(f) = facts.get((ri + wi) % facts.len().max(1)) {
                    pairs.push((w.text.clone(), f.clone()));
                }
            }
        }
        if pairs.len() >= n {
            break;
        }
    }
    pairs.truncate(n);
    pairs
}

fn awkward_pairs() -> Vec<(String, String)> {
    let long = "The proposed transformer variant improves BLEU. ".repeat(80);
    vec![
        (
            "日本語のレビューです。モデルは良い。".into(),
            "The model is good.".into(),
        ),
        (
            "Great results 🚀🔥 on ImageNet (top-1 = 81.2%).".into(),
            "Top-1 accuracy on ImageNet is 81.2%.".into(),
        ),
        ("النموذج جيد جدا. It works.".into(), "שלום עולם".into()),
        (
            "Tabs\tand\u{0}control\u{7}chars\r\nhere.".into(),
            "Control characters are present.".into(),
        ),
        (long.clone(), "The variant improves BLEU on WMT.".into()),
        ("Short.".into(), long),
        ("".into(), "An empty premise.".into()),
        (
            "Ünïcödé ñ façade café naïve Æsir ß.".into(),
            "Accents are kept: résumé.".into(),
        ),
    ]
}

struct Reference {
    token_ids: Vec<Vec<u32>>,
    logits: Vec<Vec<Vec<f64>>>,
    logits_unoptimised: Vec<Vec<Vec<f64>>>,
}

/// Every |a − b| over the logits, sorted; panics unless both sides have the same shape (an empty
/// or short reference reply must fail, not compare nothing).
fn abs_diffs(a: &[Vec<Vec<f64>>], b: &[Vec<Vec<f64>>]) -> Vec<f64> {
    assert_eq!(a.len(), b.len(), "batch counts differ");
    let mut d = Vec::new();
    for (ba, bb) in a.iter().zip(b) {
        assert_eq!(ba.len(), bb.len(), "row counts differ");
        for (x, y) in ba.iter().zip(bb) {
            assert_eq!(x.len(), y.len(), "class counts differ");
            d.extend(x.iter().zip(y).map(|(p, q)| (p - q).abs()));
        }
    }
    assert!(!d.is_empty(), "no logits compared");
    d.sort_by(f64::total_cmp);
    d
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Share of rows whose predicted class is the same on both sides.
fn argmax_agreement(a: &[Vec<Vec<f64>>], b: &[Vec<Vec<f64>>]) -> f64 {
    let argmax = |r: &Vec<f64>| {
        r.iter()
            .enumerate()
            .max_by(|x, y| x.1.total_cmp(y.1))
            .map(|x| x.0)
    };
    let (ra, rb) = (a.iter().flatten().count(), b.iter().flatten().count());
    assert!(
        ra > 0 && ra == rb,
        "row counts differ or are zero: {ra} vs {rb}"
    );
    let rows: Vec<(&Vec<f64>, &Vec<f64>)> = a.iter().flatten().zip(b.iter().flatten()).collect();
    rows.iter().filter(|(x, y)| argmax(x) == argmax(y)).count() as f64 / rows.len() as f64
}

fn reference(
    model_dir: &std::path::Path,
    tokenizer: &std::path::Path,
    engine: &TractNli,
    pairs: &[(String, String)],
    batches: &[semtrace_infer::EncodedBatch],
) -> Reference {
    // One folder per model: the two tests run in parallel in one process.
    let name = model_dir.file_name().unwrap().to_string_lossy();
    let dir = temp_dir(&format!("engine-ref-{name}"));
    let req = serde_json::json!({
        "onnx": model_dir.join("model.onnx"),
        "tokenizer": tokenizer,
        "max_length": engine.spec().max_length,
        "pairs": pairs.iter().map(|(p, h)| vec![p, h]).collect::<Vec<_>>(),
        "batches": batches.iter().map(|b| serde_json::json!({
            "rows": b.rows, "seq": b.seq, "input_ids": b.input_ids,
            "attention_mask": b.attention_mask, "token_type_ids": b.token_type_ids})).collect::<Vec<_>>(),
    });
    let (inp, out) = (dir.join("req.json"), dir.join("resp.json"));
    std::fs::write(&inp, req.to_string()).unwrap();
    let st = Command::new(python())
        .arg(root().join("scripts/reference_nli.py"))
        .arg(&inp)
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success(), "reference_nli.py failed");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    Reference {
        token_ids: serde_json::from_value(v["token_ids"].clone()).unwrap(),
        logits: serde_json::from_value(v["logits"].clone()).unwrap(),
        logits_unoptimised: serde_json::from_value(v["logits_unoptimised"].clone()).unwrap(),
    }
}

/// How tract's logits compare with onnxruntime's, next to how onnxruntime's optimised plan
/// compares with its own unoptimised one.
struct Comparison {
    /// Sorted |tract − onnxruntime| over every logit.
    tract: Vec<f64>,
    /// Sorted |onnxruntime optimised − unoptimised| over every logit.
    ort_spread: Vec<f64>,
    /// Share of pairs with the same predicted class in tract and onnxruntime.
    agreement: f64,
    /// The same share between onnxruntime's two plans.
    ort_agreement: f64,
    /// Pearson correlation of tract's logits with onnxruntime's.
    correlation: f64,
}

fn pearson(a: &[Vec<Vec<f64>>], b: &[Vec<Vec<f64>>]) -> f64 {
    let x: Vec<f64> = a.iter().flatten().flatten().copied().collect();
    let y: Vec<f64> = b.iter().flatten().flatten().copied().collect();
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let cov: f64 = x.iter().zip(&y).map(|(p, q)| (p - mx) * (q - my)).sum();
    let vx: f64 = x.iter().map(|p| (p - mx).powi(2)).sum();
    let vy: f64 = y.iter().map(|q| (q - my).powi(2)).sum();
    cov / (vx * vy).sqrt()
}

/// `real_logit_pairs` real pairs plus the awkward ones go through both engines.
fn check_model(
    model_dir: &std::path::Path,
    spec: ModelSpec,
    real_logit_pairs: usize,
) -> Comparison {
    check_model_with(
        model_dir,
        &model_dir.join("tokenizer.json"),
        spec,
        real_logit_pairs,
    )
}

/// [`check_model`] with the tokenizer file given apart (the split stand-in borrows the default's).
fn check_model_with(
    model_dir: &std::path::Path,
    tokenizer: &std::path::Path,
    spec: ModelSpec,
    real_logit_pairs: usize,
) -> Comparison {
    let onnx = std::fs::read(model_dir.join("model.onnx")).unwrap();
    let tok = std::fs::read(tokenizer).unwrap();
    let engine = TractNli::load(&onnx, &tok, spec).unwrap();

    let mut tok_pairs = real_pairs(200);
    assert!(
        tok_pairs.len() >= 200,
        "only {} real pairs",
        tok_pairs.len()
    );
    tok_pairs.extend(awkward_pairs());
    let logit_pairs: Vec<(String, String)> = tok_pairs
        .iter()
        .take(real_logit_pairs)
        .cloned()
        .chain(awkward_pairs())
        .collect();
    let batches: Vec<_> = logit_pairs
        .chunks(8)
        .map(|c| {
            let ps: Vec<NliPair<'_>> = c
                .iter()
                .map(|(p, h)| NliPair {
                    premise: p,
                    hypothesis: h,
                })
                .collect();
            engine.encode(&ps).unwrap()
        })
        .collect();
    let r = reference(model_dir, tokenizer, &engine, &tok_pairs, &batches);

    let mut mismatches = 0;
    // An empty or short reference reply must fail, not compare nothing.
    assert_eq!(
        tok_pairs.len(),
        r.token_ids.len(),
        "token id lists differ in count"
    );
    for ((p, h), want) in tok_pairs.iter().zip(&r.token_ids) {
        let got = engine
            .token_ids(NliPair {
                premise: p,
                hypothesis: h,
            })
            .unwrap();
        if &got != want {
            mismatches += 1;
            eprintln!(
                "token mismatch for {:?} / {:?}",
                &p[..p.len().min(60)],
                &h[..h.len().min(60)]
            );
        }
    }
    assert_eq!(
        mismatches,
        0,
        "token ids differ from Python tokenizers on {mismatches} of {} pairs",
        tok_pairs.len()
    );

    let ours: Vec<Vec<Vec<f64>>> = batches
        .iter()
        .map(|b| {
            engine
                .logits(b)
                .unwrap()
                .into_iter()
                .map(|r| r.into_iter().map(f64::from).collect())
                .collect()
        })
        .collect();
    let c = Comparison {
        tract: abs_diffs(&ours, &r.logits),
        ort_spread: abs_diffs(&r.logits, &r.logits_unoptimised),
        agreement: argmax_agreement(&ours, &r.logits),
        ort_agreement: argmax_agreement(&r.logits, &r.logits_unoptimised),
        correlation: pearson(&ours, &r.logits),
    };
    let row = |d: &[f64]| {
        format!(
            "median {:.2e}, p90 {:.2e}, max {:.2e}",
            quantile(d, 0.5),
            quantile(d, 0.9),
            quantile(d, 1.0)
        )
    };
    eprintln!(
        "{}: {} pairs tokenised identically; over {} pairs |tract - onnxruntime|: {}, same class {:.3}, correlation {:.4}; \
         onnxruntime optimised vs unoptimised: {}, same class {:.3}",
        model_dir.display(),
        tok_pairs.len(),
        logit_pairs.len(),
        row(&c.tract),
        c.agreement,
        c.correlation,
        row(&c.ort_spread),
        c.ort_agreement
    );
    c
}

#[test]
fn deberta_xsmall_int8_graph_matches_onnxruntime_and_python_tokenizers() {
    let dir = standin_model();
    let spec = ModelSpec::from_hf_config(
        "standin",
        &std::fs::read_to_string(dir.join("config.json")).unwrap(),
    )
    .unwrap();
    // 16 real + 8 awkward pairs: tract runs this graph's integer path slowly (~7 s a pair in a
    // test build), and the tokenizer check above already covers 208 pairs.
    let c = check_model(&dir, spec, 16);
    // This graph quantises activations dynamically (DynamicQuantizeLinear: one scale and zero point
    // per tensor, recomputed on every run). A rounding difference in one scale propagates through
    // 12 layers, so engines that order operations differently cannot agree to 1e-3: onnxruntime's
    // optimised and unoptimised plans differ by up to ~0.9 on these pairs, and tract differs from
    // onnxruntime more (measured on these 24 pairs: median 0.25, max 1.6, correlation 0.92, same
    // class on 20; onnxruntime with itself: 21). The bounds below leave that margin and no more:
    // it is what can be promised for such graphs, and why the shipped model keeps activations in
    // f32 (MiniLM test below: 1e-3). A wrong execution (attention, scales, mask) decorrelates the
    // logits and scatters the classes towards chance.
    assert!(
        c.correlation >= 0.85,
        "tract's logits correlate {:.3} with onnxruntime's",
        c.correlation
    );
    assert!(
        c.agreement >= 0.75,
        "same predicted class on {:.3} of pairs (onnxruntime with itself: {:.3})",
        c.agreement,
        c.ort_agreement
    );
    assert!(
        quantile(&c.tract, 0.5) <= 0.5,
        "median |tract - onnxruntime| {:.3e}",
        quantile(&c.tract, 0.5)
    );
}

#[test]
fn default_minilm_model_matches_onnxruntime_and_python_tokenizers() {
    let dir = default_model();
    let spec = ModelSpec::from_hf_config(
        "semtrace-nli-minilm",
        &std::fs::read_to_string(dir.join("config.json")).unwrap(),
    )
    .unwrap();
    // The int8 word-embedding table is dequantised once at load, not on every run.
    let onnx = std::fs::read(dir.join("model.onnx")).unwrap();
    let tok = std::fs::read(dir.join("tokenizer.json")).unwrap();
    let engine = TractNli::load(&onnx, &tok, spec.clone()).unwrap();
    assert!(
        engine.folded_constants() >= 1,
        "the dequantised embedding table was not folded into a constant"
    );
    // Each layer's attention-mask add runs as the vectorised MaskRowAdd, not tract's generic add;
    // check_model below shows it changes nothing beyond float rounding.
    assert_eq!(
        engine.mask_adds(),
        6,
        "one mask add per layer of the 6-layer model"
    );
    // One plan per batch size: batches of 8 pairs padded to different lengths share it.
    let texts = [
        "Short.",
        "A somewhat longer premise with a few more words in it.",
        &"word ".repeat(60),
    ];
    for t in texts {
        let pairs = vec![
            NliPair {
                premise: t,
                hypothesis: "The model is evaluated."
            };
            8
        ];
        engine.logits(&engine.encode(&pairs).unwrap()).unwrap();
    }
    assert_eq!(engine.plans_cached(), 1, "one plan per batch size");
    // Weight-only int8: activations stay f32, so engines agree to float rounding.
    let c = check_model(&dir, spec, 32);
    let max_diff = quantile(&c.tract, 1.0);
    assert!(
        max_diff <= 1e-3,
        "tract differs from onnxruntime by {max_diff}"
    );
}

/// The engine's split path (`semtrace_infer::split`) on random-weight stand-ins with a trained split
/// model's exact layouts (tests/fixtures/split-standin: segments, memory-standin: memory,
/// hybrid-standin: hybrid, whose facts have a lower part of their own; made by
/// training/make_tiny_split.py; their scores mean nothing, so nothing here is about quality) and the
/// default model's tokenizer: token ids by the split rule equal Python's, logits equal onnxruntime's
/// two-part run, and cached states give bit for bit the uncached results, in any order, chunking and
/// thread count.
#[test]
fn split_standin_segments_layout_matches_onnxruntime_and_its_cache_is_exact() {
    check_split_standin("split-standin");
}

#[test]
fn split_standin_memory_layout_matches_onnxruntime_and_its_cache_is_exact() {
    check_split_standin("memory-standin");
}

#[test]
fn split_standin_hybrid_layout_matches_onnxruntime_and_its_cache_is_exact() {
    check_split_standin("hybrid-standin");
}

fn check_split_standin(name: &str) {
    let dir = root().join("tests/fixtures").join(name);
    let tok_path = default_model().join("tokenizer.json");
    let spec = ModelSpec::from_hf_config(
        name,
        &std::fs::read_to_string(dir.join("config.json")).unwrap(),
    )
    .unwrap();
    let onnx = std::fs::read(dir.join("model.onnx")).unwrap();
    let tok = std::fs::read(&tok_path).unwrap();
    let mut engine = TractNli::load(&onnx, &tok, spec.clone()).unwrap();
    assert!(engine.is_split(), "the stand-in has a `hidden` input");
    assert!(
        engine.op_profile(&[], false).is_err(),
        "per-op profiles are refused for split models, not run on half a graph"
    );

    let c = check_model_with(&dir, &tok_path, spec, 32);
    let max_diff = quantile(&c.tract, 1.0);
    assert!(
        max_diff <= 1e-4,
        "tract differs from onnxruntime by {max_diff}"
    );

    // Short pairs tokenise as the plain pair encoding does (the split rule only differs past the caps).
    let plain = TractNli::load(
        &std::fs::read(default_model().join("model.onnx")).unwrap(),
        &tok,
        ModelSpec::from_hf_config(
            "semtrace-nli-minilm",
            &std::fs::read_to_string(default_model().join("config.json")).unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    let owned: Vec<(String, String)> = real_pairs(60).into_iter().chain(awkward_pairs()).collect();
    let pairs: Vec<NliPair<'_>> = owned
        .iter()
        .map(|(p, h)| NliPair {
            premise: p,
            hypothesis: h,
        })
        .collect();
    let mut same = 0;
    for p in &pairs {
        let split_ids = engine.token_ids(*p).unwrap();
        assert!(split_ids.len() <= 256, "the two caps add up to max_length");
        let plain_batch = plain.encode(&[*p]).unwrap();
        let live = |t: i64| {
            plain_batch
                .attention_mask
                .iter()
                .zip(&plain_batch.token_type_ids)
                .filter(|&(&m, &tt)| m == 1 && tt == t)
                .count()
        };
        // Within the caps (premise ≤ 192 tokens, hypothesis ≤ 64) and untruncated, nothing differs.
        if live(0) <= 192 && live(1) <= 64 && live(0) + live(1) < 256 {
            assert_eq!(
                split_ids,
                plain.token_ids(*p).unwrap(),
                "{:?}",
                &p.premise[..p.premise.len().min(40)]
            );
            same += 1;
        }
    }
    assert!(same >= 50, "only {same} pairs within the caps compared");

    // Every pair at once (each window and fact computed once), then alone in reverse order after the
    // cache was cleared, then on two threads, then uncached through `logits`: bit for bit the same.
    let at_once = engine.entailment(&pairs).unwrap();
    engine.clear_cache();
    let mut alone: Vec<f32> = pairs
        .iter()
        .rev()
        .map(|p| engine.entailment(&[*p]).unwrap()[0])
        .collect();
    alone.reverse();
    engine.set_threads(2);
    engine.clear_cache();
    let threaded = engine.entailment(&pairs).unwrap();
    let uncached: Vec<f32> = pairs
        .iter()
        .map(|p| softmax(&engine.logits(&engine.encode(&[*p]).unwrap()).unwrap()[0])[0])
        .collect();
    assert_eq!(at_once, alone);
    assert_eq!(at_once, threaded);
    assert_eq!(at_once, uncached);
    let (lo, hi) = at_once
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    assert!(
        hi > lo,
        "the stand-in scores every pair alike, so a mixed-up state would go unseen"
    );
}

/// A trained split candidate (a model directory in `SEMTRACE_TEST_SPLIT_MODEL`, e.g. the output of
/// `training/splits.sh export NAME`) against onnxruntime and Python tokenizers, as the default is
/// checked above. Run by hand before a split model is promoted:
/// `SEMTRACE_TEST_SPLIT_MODEL=training/work/memory5/model cargo test --test engine_reference -- --ignored`.
#[test]
#[ignore = "needs a trained split model in SEMTRACE_TEST_SPLIT_MODEL"]
fn split_candidate_matches_onnxruntime_and_python_tokenizers() {
    let dir = std::path::PathBuf::from(
        std::env::var_os("SEMTRACE_TEST_SPLIT_MODEL").expect("SEMTRACE_TEST_SPLIT_MODEL"),
    );
    let spec = ModelSpec::from_hf_config(
        "split-candidate",
        &std::fs::read_to_string(dir.join("config.json")).unwrap(),
    )
    .unwrap();
    let c = check_model(&dir, spec, 32);
    let max_diff = quantile(&c.tract, 1.0);
    assert!(
        max_diff <= 1e-3,
        "tract differs from onnxruntime by {max_diff}"
    );
}
