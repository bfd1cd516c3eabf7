//! The warm-up that builds all of a problem's host plans at once (each method's
//! `plan_ahead`: METIS partitions, packed lists, colorings), and the next problem ahead.

use super::method::Ahead as PlanFor;
use super::problem::prepared::{is_cached, prepared, Prepared, ProblemKey};
use super::spec::{Method, Point, Problem_};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use crate::benchmark::{CaseCtx, Upcoming};
use crate::context::RunContext;
use crate::device::Backend;
use crate::experiment::{ParamValue, Params};

/// The methods (with their real size and colors) that the cases of the problem (`level`,
/// `order`) on `backend` will use among `cases`, and whether any of them is a dummy.
fn wanted_by(cases: &[Upcoming], backend: Option<Backend>, level: u32, order: u32) -> (BTreeSet<(Method, usize, u32)>, bool) {
    let mut wanted = BTreeSet::new();
    let mut dummies = false;
    for u in cases.iter().filter(|u| Some(u.backend) == backend) {
        let same = int(&u.params, "level") == Some(level as i64) && int(&u.params, "order") == Some(order as i64);
        if let (true, Some(m)) = (same, method_of(&u.params)) {
            wanted.insert((m.full(), u.precision.bytes(), int(&u.params, "min_colors").unwrap_or(0) as u32));
            dummies |= m.dummy();
        }
    }
    (wanted, dummies)
}

fn int(params: &Params, k: &str) -> Option<i64> {
    match params.get(k) {
        Some(ParamValue::Int(i)) => Some(*i),
        _ => None,
    }
}

fn method_of(params: &Params) -> Option<Method> {
    match params.get("method") {
        Some(ParamValue::Str(m)) => Method::named(m),
        _ => None,
    }
}

/// Builds, in parallel, the references and the plans of `wanted` (see [`warm`]).
fn build_plans(problem: &Problem_, prep: &Prepared, wanted: &BTreeSet<(Method, usize, u32)>, dummies: bool, limit: usize) {
    // A job that panics leaves nothing cached, so the case that needs it makes it again and
    // fails on its own; it must not fail this case.
    let quietly = |job: &(dyn Fn() + Sync)| drop(std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)));
    rayon::scope(|sc| {
        sc.spawn(|_| {
            quietly(&|| {
                prep.reference();
                prep.bounds(false);
            })
        });
        if dummies {
            sc.spawn(|_| {
                quietly(&|| {
                    prep.dummy_reference();
                    prep.bounds(true);
                })
            });
        }
        for &(m, s, colors) in wanted {
            let ahead = PlanFor { prep, problem, limit, s, colors };
            sc.spawn(move |_| quietly(&|| m.entry().plan_ahead(&ahead)));
        }
    });
}

/// The next problem built ahead, on a thread of its own, while the cases of the problem in hand
/// run: its key and its thread.
type Ahead = Mutex<Option<(ProblemKey, std::thread::JoinHandle<()>)>>;

/// The run's problem built ahead (one at a time).
fn ahead_of(run: &RunContext) -> Arc<Ahead> {
    run.state("cecka ahead", || Mutex::new(None))
}

/// Waits for the problem being built ahead, if it is `key`'s: its case must not build the same
/// plans a second time beside it.
fn join_ahead(run: &RunContext, key: &ProblemKey) {
    let slot = ahead_of(run);
    let mut ahead = slot.lock().unwrap_or_else(|e| e.into_inner());
    if ahead.as_ref().is_some_and(|(k, _)| k == key) {
        if let Some((_, thread)) = ahead.take() {
            // A panic there cached nothing: the case builds what it needs and fails on its own.
            let _ = thread.join();
        }
    }
}

/// Starts building the first problem after `key` among `upcoming` on `backend` (its problem,
/// references and plans, as [`warm`] would), on every core but two, while this problem's
/// cases run on the GPU. The runner waits for it before any host-timed case
/// ([`crate::background::Background::quiet`]); its plans' seconds count cores shared with those
/// cases.
fn build_ahead(run: &Arc<RunContext>, problem: &Problem_, key: &ProblemKey, upcoming: &[Upcoming], backend: Option<Backend>, limit: usize) {
    let next = upcoming.iter().filter(|u| Some(u.backend) == backend).find_map(|u| {
        let (level, order) = (int(&u.params, "level")? as u32, int(&u.params, "order")? as u32);
        ((level, order) != (key.1, key.2)).then_some((level, order))
    });
    let Some((level, order)) = next else { return };
    let next_key: ProblemKey = (problem.mesh.clone(), level, order);
    let slot = ahead_of(run);
    let mut ahead = slot.lock().unwrap_or_else(|e| e.into_inner());
    if ahead.as_ref().is_some_and(|(k, t)| *k == next_key || !t.is_finished()) || is_cached(run, &next_key) {
        return;
    }
    let (problem, cases, run) = (problem.clone(), upcoming.to_vec(), run.clone());
    let job = crate::background::Job::start(run.background());
    let thread = std::thread::spawn(move || {
        let _job = job;
        crate::background::pool().install(|| {
            let Ok(prep) = prepared(&run, problem.mesh.as_ref(), level, order) else { return };
            let (wanted, dummies) = wanted_by(&cases, backend, level, order);
            if prep.warmed.lock().unwrap_or_else(|e| e.into_inner()).insert(backend) {
                build_plans(&problem, &prep, &wanted, dummies, limit);
            }
        })
    });
    *ahead = Some((next_key, thread));
}

/// Before the first GPU case of a problem on a backend: builds, in parallel, the references
/// and every plan that this case and the experiment's later cases of the same problem on the
/// same backend will use (the runner lists them in `ctx.upcoming`). Each plan keeps its own
/// build time as its set-up; plans that run beside each other share the host's cores. Then
/// starts the next problem of the experiment ([`build_ahead`]), so that its plans are made
/// while this problem's cases run.
/// `backend`: the case's; `limit`: its device's shared memory per block (bytes); `ahead`:
/// whether to build the next problem ahead (not where the device's kernels run on the host's
/// cores, as PoCL's do).
pub(crate) fn warm(ctx: &CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point, backend: Option<Backend>, limit: usize, ahead: bool) {
    let key: ProblemKey = (problem.mesh.clone(), point.level, point.order);
    join_ahead(ctx.run, &key);
    if prep.warmed.lock().unwrap_or_else(|e| e.into_inner()).insert(backend) {
        let (mut wanted, dummies) = wanted_by(ctx.upcoming, backend, point.level, point.order);
        wanted.insert((point.method.full(), ctx.precision.bytes(), point.min_colors));
        build_plans(problem, prep, &wanted, dummies || point.method.dummy(), limit);
    }
    if ahead {
        build_ahead(ctx.run, problem, &key, ctx.upcoming, backend, limit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Precision;

    fn case(method: &str, order: i64, precision: Precision) -> Upcoming {
        let params = Params::default()
            .push("method", ParamValue::Str(method.into()))
            .push("level", ParamValue::Int(1))
            .push("order", ParamValue::Int(order))
            .push("min_colors", ParamValue::Int(0));
        Upcoming { backend: Backend::OpenCl, precision, params }
    }

    #[test]
    fn the_next_problem_and_its_plans_are_built_ahead_and_waited_for() {
        let problem = Problem_::default();
        let upcoming = [
            case("elem-color", 2, Precision::F32),
            case("global-nz", 3, Precision::F32),
            case("local-nz-dummy", 3, Precision::F64),
            case("elem-atomic", 3, Precision::F64),
        ];
        let (key, next): (ProblemKey, ProblemKey) = ((None, 1, 2), (None, 1, 3));
        let (wanted, dummies) = wanted_by(&upcoming, Some(Backend::OpenCl), 1, 3);
        assert!(dummies);
        assert_eq!(wanted.len(), 3, "{wanted:?}");
        assert!(wanted.contains(&(Method::LOCAL_NZ, 8, 0)), "a dummy wants its full method's plan");
        let run = Arc::new(RunContext::default());
        build_ahead(&run, &problem, &key, &upcoming, Some(Backend::OpenCl), 48 * 1024);
        assert!(ahead_of(&run).lock().unwrap().as_ref().is_some_and(|(k, _)| *k == next));
        // A second call while it runs starts nothing more.
        build_ahead(&run, &problem, &key, &upcoming, Some(Backend::OpenCl), 48 * 1024);
        join_ahead(&run, &next);
        assert!(ahead_of(&run).lock().unwrap().is_none(), "joined");
        assert!(is_cached(&run, &next));
        assert!(!is_cached(&RunContext::default(), &next), "another run shares nothing");
        let prep = prepared(&run, None, 1, 3).expect("built ahead");
        assert!(prep.warmed.lock().unwrap().contains(&Some(Backend::OpenCl)));
        assert!(prep.reference.get().is_some() && prep.dummy_reference.get().is_some());
        assert_eq!(prep.global.lock().unwrap().len(), 1);
        assert_eq!(prep.local.lock().unwrap().len(), 1);
        assert!(prep.shared.lock().unwrap().is_empty() && prep.shared_atomic.lock().unwrap().is_empty(), "only what the cases use");
        // From the last problem, nothing is ahead; another backend's cases are not this one's.
        build_ahead(&run, &problem, &next, &upcoming[1..], Some(Backend::OpenCl), 48 * 1024);
        build_ahead(&run, &problem, &key, &upcoming, Some(Backend::Cuda), 48 * 1024);
        assert!(ahead_of(&run).lock().unwrap().is_none());
    }
}
