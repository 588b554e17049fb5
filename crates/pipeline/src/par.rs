//! Fixed runs of work on every core, results in order: the same results on any thread count
//! as long as each run's result depends only on its own items.

/// Threads to use: those of the shared pool (the machine's available parallelism, or
/// `RAYON_NUM_THREADS`).
pub fn threads() -> usize {
    rayon::current_num_threads().clamp(1, 64)
}

/// `f` over the runs `0..run`, `run..2·run`, ... of `0..n`, on the shared thread pool (a run
/// at a time to whichever thread is free: no threads started per call, and a slow run does not
/// hold the others back), results in run order; an error when `f` panicked.
pub fn runs<T: Send>(
    n: usize,
    run: usize,
    f: impl Fn(std::ops::Range<usize>) -> T + Sync,
) -> Result<Vec<T>, crate::Error> {
    use rayon::prelude::*;
    let run = run.max(1);
    let count = n.div_ceil(run);
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        (0..count).into_par_iter().map(|r| f(r * run..((r + 1) * run).min(n))).collect::<Vec<T>>()
    }))
    .map_err(|_| crate::Error::Thread { which: "a worker thread" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_come_back_in_order_and_a_panic_is_an_error() {
        let got = runs(100_003, 1000, |r| (r.start, r.end)).unwrap_or_default();
        let want: Vec<_> = (0..101).map(|k| (k * 1000, ((k + 1) * 1000).min(100_003))).collect();
        assert_eq!(got, want);
        assert_eq!(runs(0, 1000, |r| r.len()).ok(), Some(vec![]));
        let failed = runs(10, 1, |r| {
            #[allow(clippy::panic)]
            if r.start == 7 {
                panic!("run 7");
            }
            r.start
        });
        assert!(matches!(failed, Err(crate::Error::Thread { which: "a worker thread" })), "{failed:?}");
    }
}
