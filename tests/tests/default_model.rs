//! The project's own default model, run through the real tract engine, on in-domain dev pairs
//! (../shared/data/nli/indomain/dev.jsonl; not held out: training picks its checkpoints on them,
//! so these figures are a check of the shipped model, not an unbiased estimate): the
//! detection-relevant property (a faithful
//! paraphrase is more entailed than a one-detail alteration or an on-topic non-assertion) and
//! 3-way accuracy.

use std::collections::BTreeMap;

use semtrace_core::nli::{softmax, ModelSpec, NliPair};
use semtrace_e2e::*;
use semtrace_infer::TractNli;

fn engine() -> TractNli {
    let dir = default_model();
    let spec = ModelSpec::from_hf_config(
        "semtrace-nli-minilm",
        &std::fs::read_to_string(dir.join("config.json")).unwrap(),
    )
    .unwrap();
    TractNli::load(
        &std::fs::read(dir.join("model.onnx")).unwrap(),
        &std::fs::read(dir.join("tokenizer.json")).unwrap(),
        spec,
    )
    .unwrap()
}

struct Row {
    premise: String,
    hypothesis: String,
    label: String,
    kind: String,
    item: String,
}

fn dev_rows() -> Vec<Row> {
    std::fs::read_to_string(shared().join("data/nli/indomain/dev.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            Row {
                premise: s("premise"),
                hypothesis: s("hypothesis"),
                label: s("label"),
                kind: s("kind"),
                item: s("item_id"),
            }
        })
        .collect()
}

#[test]
fn paraphrase_beats_alteration_and_near_miss_on_dev_triples() {
    let e = engine();
    let rows = dev_rows();
    // Every 3rd item, 90 triples: spread over the papers of the split, deterministic.
    let mut triples: BTreeMap<&str, BTreeMap<&str, &Row>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.kind != "natural") {
        triples
            .entry(r.item.as_str())
            .or_default()
            .insert(r.kind.as_str(), r);
    }
    let chosen: Vec<_> = triples
        .values()
        .filter(|t| t.len() == 3)
        .step_by(3)
        .take(90)
        .collect();
    assert_eq!(chosen.len(), 90);
    let pairs: Vec<NliPair<'_>> = chosen
        .iter()
        .flat_map(|t| {
            ["para", "alter", "near"].map(|k| NliPair {
                premise: &t[k].premise,
                hypothesis: &t[k].hypothesis,
            })
        })
        .collect();
    use semtrace_core::nli::NliScorer;
    let p = e.entailment(&pairs).unwrap();
    let wins = p.chunks(3).filter(|c| c[0] > c[1] && c[0] > c[2]).count();
    let frac = wins as f64 / chosen.len() as f64;
    eprintln!(
        "P(entail | para) > alter and near in {wins}/{} dev triples ({frac:.3})",
        chosen.len()
    );
    assert!(
        frac >= 0.90,
        "detection-relevant property holds in only {frac:.3} of triples"
    );
}

#[test]
fn three_way_accuracy_on_dev_sample() {
    let e = engine();
    let rows = dev_rows();
    let sample: Vec<&Row> = rows.iter().step_by(11).collect();
    let pairs: Vec<NliPair<'_>> = sample
        .iter()
        .map(|r| NliPair {
            premise: &r.premise,
            hypothesis: &r.hypothesis,
        })
        .collect();
    let mut correct = 0;
    for (chunk, rows) in pairs.chunks(8).zip(sample.chunks(8)) {
        let logits = e.logits(&e.encode(chunk).unwrap()).unwrap();
        assert_eq!(logits.len(), rows.len(), "one logit row per pair");
        for (l, r) in logits.iter().zip(rows) {
            let probs = softmax(l);
            let arg = probs
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .unwrap()
                .0;
            if e.spec().labels[arg].eq_ignore_ascii_case(&r.label) {
                correct += 1;
            }
        }
    }
    let acc = correct as f64 / sample.len() as f64;
    eprintln!("3-way accuracy on {} dev pairs: {acc:.3}", sample.len());
    assert!(acc >= 0.80, "3-way accuracy {acc:.3}");
}

/// A verbatim statement of a proposition must read as entailment, alone or inside other text —
/// the builder's source gate and any review that quotes a fact depend on it. (A model trained only
/// on paraphrases vs one-detail alterations can learn "near-identical means altered".)
#[test]
fn verbatim_statements_are_entailed() {
    let e = engine();
    let rows = dev_rows();
    let mut hyps: Vec<&str> = rows.iter().map(|r| r.hypothesis.as_str()).collect();
    hyps.sort();
    hyps.dedup();
    let hyps: Vec<&str> = hyps.into_iter().step_by(5).take(60).collect();
    let embedded: Vec<String> = hyps
        .iter()
        .map(|h| format!("The paper is clearly written overall. {h} I have a few questions below."))
        .collect();
    let mut pairs: Vec<NliPair<'_>> = hyps
        .iter()
        .map(|h| NliPair {
            premise: h,
            hypothesis: h,
        })
        .collect();
    pairs.extend(hyps.iter().zip(&embedded).map(|(h, p)| NliPair {
        premise: p,
        hypothesis: h,
    }));
    let mut ok = 0;
    for chunk in pairs.chunks(8) {
        let enc = e.encode(chunk).unwrap();
        for row in e.logits(&enc).unwrap() {
            let p = softmax(&row);
            let best = (0..p.len()).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap();
            ok += usize::from(best == e.spec().entailment_index);
        }
    }
    let rate = ok as f64 / pairs.len() as f64;
    println!(
        "verbatim statements read as entailment: {ok}/{} = {rate:.3}",
        pairs.len()
    );
    assert!(rate >= 0.9, "verbatim entailment rate {rate:.3} < 0.9");
}
