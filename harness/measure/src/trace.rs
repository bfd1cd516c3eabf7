//! Where a case's host time goes, for developers: with `FEMBENCH_TRACE=1` in the environment,
//! [`mark`] prints the seconds since the previous mark of the same thread (and since the case
//! began, [`begin`]) to stderr. Without it, a mark costs one relaxed load. Nothing here enters
//! the rows: it is a profiler's stand-in on machines that have none (the GPU host).

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::Instant;

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("FEMBENCH_TRACE").is_some_and(|v| !v.is_empty() && v != "0"))
}

thread_local! {
    static TIMES: Cell<Option<(Instant, Instant)>> = const { Cell::new(None) };
}

/// A case begins: later marks count from here.
pub fn begin(case: &str) {
    if enabled() {
        let now = Instant::now();
        TIMES.with(|t| t.set(Some((now, now))));
        eprintln!("[trace] {case}");
    }
}

/// A phase ended: prints its seconds and the case's so far.
pub fn mark(label: &str) {
    if enabled() {
        let now = Instant::now();
        TIMES.with(|t| {
            let (start, last) = t.get().unwrap_or((now, now));
            eprintln!("[trace] {:>9.4} s {:>9.4} s  {label}", (now - last).as_secs_f64(), (now - start).as_secs_f64());
            t.set(Some((start, now)));
        });
    }
}
