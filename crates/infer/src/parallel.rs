//! Work spread over native threads (wasm32 runs it in order: the page parallelises across workers).

use semtrace_core::error::{Error, Result};

/// `f(0) .. f(n - 1)` on up to `threads` threads, results in index order. Each thread takes the
/// next index as it finishes one, so uneven items (pairs of different lengths) balance out.
pub(crate) fn par_map<T, F>(threads: usize, n: usize, f: F) -> Result<Vec<T>>
where
    T: Send,
    F: Fn(usize) -> Result<T> + Sync,
{
    #[cfg(not(target_arch = "wasm32"))]
    if threads > 1 && n > 1 {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let next = AtomicUsize::new(0);
        // Per thread: (index, result) of the items it ran.
        type Done<T> = Result<Vec<(usize, T)>>;
        let results: Vec<Done<T>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads.min(n))
                .map(|_| {
                    scope.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= n {
                                break;
                            }
                            done.push((i, f(i)?));
                        }
                        Ok(done)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(Error::model("an inference thread panicked")))
                })
                .collect()
        });
        let mut slots: Vec<Option<T>> = (0..n).map(|_| None).collect();
        for r in results {
            for (i, v) in r? {
                slots[i] = Some(v);
            }
        }
        return slots
            .into_iter()
            .map(|s| s.ok_or_else(|| Error::model("an inference thread left an item unscored")))
            .collect();
    }
    let _ = threads;
    (0..n).map(f).collect()
}
