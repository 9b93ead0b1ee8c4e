//! Offline `semtrace build` over every corpus paper PDF: at least 18 of the 20 must produce a
//! bundle, and every failure's report must name the gate that starved it. Prints a table.

use std::fs;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use semtrace_e2e::*;

#[test]
fn offline_build_succeeds_on_at_least_18_of_the_20_corpus_papers() {
    let mut pdfs: Vec<PathBuf> = fs::read_dir(shared().join("corpus/papers"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pdf"))
        .collect();
    pdfs.sort();
    assert_eq!(pdfs.len(), 20, "the corpus has 20 paper PDFs");
    let dir = temp_dir("build-corpus");
    let secret = dir.join("secret");
    fs::write(&secret, b"corpus secret").unwrap();
    let queue = Arc::new(Mutex::new(pdfs.clone()));
    let rows = Arc::new(Mutex::new(Vec::new()));
    // Two builds at a time: each runs the engine on one thread.
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (queue, rows, dir, secret) =
                (queue.clone(), rows.clone(), dir.clone(), secret.clone());
            std::thread::spawn(move || loop {
                let Some(pdf) = queue.lock().unwrap().pop() else {
                    break;
                };
                let name = pdf.file_stem().unwrap().to_string_lossy().into_owned();
                let out = dir.join(&name);
                let emb = embedder_dir();
                let t = std::time::Instant::now();
                let o = semtrace(
                    &[
                        "build",
                        pdf.to_str().unwrap(),
                        "--out",
                        out.to_str().unwrap(),
                        "--embedder",
                        emb.to_str().unwrap(),
                        "--secret-file",
                        secret.to_str().unwrap(),
                        "--quiet",
                    ],
                    &dir.join("home"),
                    None,
                );
                let secs = t.elapsed().as_secs_f64();
                let report: Option<serde_json::Value> = fs::read_to_string(out.join("report.json"))
                    .ok()
                    .and_then(|s| serde_json::from_str(&s).ok());
                rows.lock()
                    .unwrap()
                    .push((name, o.status.code(), report, secs, stderr(&o)));
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut rows = Arc::try_unwrap(rows).unwrap().into_inner().unwrap();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    println!(
        "\n{:<42} {:>4} {:>6} {:>6} {:>6}  {:<10} {:>6}  note",
        "paper", "exit", "cands", "appr", "units", "cut page", "secs"
    );
    let mut ok = 0;
    for (name, code, report, secs, err) in &rows {
        let r = report.as_ref();
        let get = |f: &dyn Fn(&serde_json::Value) -> Option<String>| {
            r.and_then(f).unwrap_or_else(|| "-".into())
        };
        let cands = get(&|r| r["candidates"].as_array().map(|a| a.len().to_string()));
        let appr = get(&|r| {
            r["candidates"]
                .as_array()
                .map(|a| a.iter().filter(|c| c["kept"] == true).count().to_string())
        });
        let units = get(&|r| r["document"]["units"].as_u64().map(|u| u.to_string()));
        let cut = get(&|r| r["document"]["cut"]["page"].as_u64().map(|p| p.to_string()));
        let note = match code {
            Some(0) => {
                ok += 1;
                assert!(dir.join(name).join("bundle.json").is_file());
                String::new()
            }
            Some(6) => {
                let gate = r
                    .and_then(|r| r["failure"]["starving_gate"].as_str())
                    .unwrap_or_default()
                    .to_string();
                assert!(
                    !gate.is_empty(),
                    "{name}: a failed build's report must name the starving gate"
                );
                assert!(!dir.join(name).join("bundle.json").exists());
                format!("failed, starving gate {gate}")
            }
            other => format!("exit {other:?}: {}", err.lines().last().unwrap_or_default()),
        };
        println!(
            "{name:<42} {:>4} {cands:>6} {appr:>6} {units:>6}  {cut:<10} {secs:>6.1}  {note}",
            code.unwrap_or(-1)
        );
    }
    println!("{ok}/{} built", rows.len());
    for (name, code, ..) in &rows {
        assert!(
            matches!(code, Some(0) | Some(6)),
            "{name}: unexpected exit {code:?}"
        );
    }
    assert!(ok >= 18, "only {ok} of 20 corpus papers built offline");
}
