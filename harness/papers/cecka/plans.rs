//! The host-side plans of the Cecka GPU methods (METIS partitions, packed lists), made once per
//! problem and kept in its cache, and the warm-up that builds all of a problem's plans at once.

use super::nz_plans::{self, Packed};
use super::prepared::*;
use super::spec::*;
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::Backend;

/// GlobalNZ's plan for `limit` bytes of shared memory and reals of `s` bytes.
pub(crate) fn global_plan_for(prep: &Prepared, problem: &Problem_, limit: usize, s: usize) -> Timed<nz_plans::GlobalPlan> {
    let (gs, epb, tpb) =
        (problem.group_size(Family::GlobalNz), problem.elements_per_block(Family::GlobalNz), problem.targets_per_block(Family::GlobalNz));
    let max_nodes = limit / (3 * s);
    cached(&prep.global, [epb, max_nodes, gs, tpb], || nz_plans::global_plan(&prep.problem, epb, max_nodes, gs, tpb))
}

/// SharedNZ's plan for `limit` bytes of shared memory and reals of `s` bytes.
pub(crate) fn shared_plan_for(prep: &Prepared, problem: &Problem_, limit: usize, s: usize) -> Timed<nz_plans::SharedPlan> {
    let gs = problem.group_size(Family::SharedNz);
    let max_elements = limit / (nz_plans::shared_slot(prep.problem.en()) * s);
    cached(&prep.shared, [max_elements, gs], || nz_plans::shared_plan(&prep.problem, max_elements, gs))
}

/// SharedAtomic's plan for `limit` bytes of shared memory and reals of `s` bytes, with the
/// seconds its element coloring took.
pub(crate) fn shared_atomic_plan_for(
    prep: &Prepared,
    problem: &Problem_,
    limit: usize,
    s: usize,
) -> Result<(Timed<nz_plans::SharedAtomicPlan>, f64), CaseError> {
    let epb = problem.elements_per_block(Family::SharedAtomic);
    // Calls ordered by color within a block: a warp's elements then rarely share a node.
    let (colors, color_secs) = prep.colors(0)?;
    let plan = cached(&prep.shared_atomic, [limit / s, epb], || {
        let mut color = vec![0u8; prep.problem.ne()];
        for (c, group) in colors.iter().enumerate() {
            for &e in group {
                color[e as usize] = c as u8;
            }
        }
        nz_plans::shared_atomic_plan(&prep.problem, limit / s, epb, &color)
    });
    Ok((plan, color_secs))
}

/// LocalNZ's plan.
pub(crate) fn local_plan_for(prep: &Prepared, problem: &Problem_) -> Timed<Packed> {
    let (gs, tpb) = (problem.group_size(Family::LocalNz), problem.targets_per_block(Family::LocalNz));
    cached(&prep.local, [gs, tpb], || nz_plans::local_plan(&prep.problem, gs, tpb))
}

/// Before the first GPU case of a problem on a backend: builds, in parallel, the references
/// and every plan that this case and the experiment's later cases of the same problem on the
/// same backend will use (the runner lists them in `ctx.upcoming`). Each plan keeps its own
/// build time as its set-up; plans that run beside each other share the host's cores.
/// `backend`: the case's; `limit`: its device's shared memory per block (bytes).
pub(crate) fn warm(ctx: &CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point, backend: Option<Backend>, limit: usize) {
    if !prep.warmed.lock().unwrap_or_else(|e| e.into_inner()).insert(backend) {
        return;
    }
    let int = |params: &crate::experiment::Params, k: &str| {
        params.0.iter().find(|(n, _)| n == k).and_then(|(_, v)| match v {
            crate::experiment::ParamValue::Int(i) => Some(*i),
            _ => None,
        })
    };
    let mut wanted: std::collections::BTreeSet<(Method, usize, u32)> = Default::default();
    wanted.insert((point.method.full(), ctx.precision.bytes(), point.colors));
    let mut dummies = point.method.dummy();
    for u in ctx.upcoming.iter().filter(|u| Some(u.backend) == backend) {
        let same = int(&u.params, "level") == Some(point.level as i64) && int(&u.params, "order") == Some(point.order as i64);
        let method = u.params.0.iter().find(|(n, _)| n == "method").and_then(|(_, v)| match v {
            crate::experiment::ParamValue::Str(m) => Method::ALL.into_iter().find(|x| x.as_str() == m),
            _ => None,
        });
        if let (true, Some(m)) = (same, method) {
            wanted.insert((m.full(), u.precision.bytes(), int(&u.params, "min_colors").unwrap_or(0) as u32));
            dummies |= m.dummy();
        }
    }
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
        for &(m, s, colors) in &wanted {
            match m.family() {
                Family::GlobalNz => sc.spawn(move |_| quietly(&|| drop(global_plan_for(prep, problem, limit, s)))),
                Family::SharedNz => sc.spawn(move |_| quietly(&|| drop(shared_plan_for(prep, problem, limit, s)))),
                Family::SharedAtomic => sc.spawn(move |_| quietly(&|| drop(shared_atomic_plan_for(prep, problem, limit, s)))),
                Family::LocalNz => sc.spawn(move |_| quietly(&|| drop(local_plan_for(prep, problem)))),
                Family::Elem if m.colored() => sc.spawn(move |_| quietly(&|| drop(prep.colors(colors)))),
                Family::Elem | Family::Cpu | Family::Coo => {}
            }
        }
    });
}
