//! Fixed runs of work on every core, results in order: the same results on any thread count
//! as long as each run's result depends only on its own items.

/// Threads to use: the machine's available parallelism.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 64)
}

/// `f` over the runs `0..run`, `run..2·run`, ... of `0..n`, on all threads (contiguous runs per
/// thread), results in run order; an error when a thread panicked.
pub fn runs<T: Send>(n: usize, run: usize, f: impl Fn(std::ops::Range<usize>) -> T + Sync) -> Result<Vec<T>, String> {
    let run = run.max(1);
    let count = n.div_ceil(run);
    let per = count.div_ceil(threads()).max(1);
    let f = &f;
    let out: Vec<T> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..count)
            .step_by(per)
            .map(|r0| {
                sc.spawn(move || {
                    (r0..(r0 + per).min(count)).map(|r| f(r * run..((r + 1) * run).min(n))).collect::<Vec<T>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_default()).collect()
    });
    if out.len() != count {
        return Err("a worker thread failed".into());
    }
    Ok(out)
}
