//! The paper's CPU baselines (Algorithm 1), f64: serial, and over colors with rayon.

use super::cost::{cost, sizes};
use super::method::{CeckaMethod, Role, Runs};
use super::problem::prepared::Prepared;
use super::problem::system::{assemble_by_search, assemble_parallel_into, assemble_serial_into, check_bounds, compare, System};
use super::spec::{Point, Problem_};
use crate::benchmark::{CaseCtx, CaseError, Measured};
use crate::measure::measure_host;

/// A CPU baseline: Algorithm 1, serial or over colors with rayon.
pub(crate) struct Baseline {
    pub(crate) names: &'static [&'static str],
    parallel: bool,
}

/// Algorithm 1, serial (the paper's CPU baseline).
pub(crate) const SERIAL: Baseline = Baseline { names: &["cpu-serial"], parallel: false };
/// Algorithm 1 over colors with rayon.
pub(crate) const PARALLEL: Baseline = Baseline { names: &["cpu-parallel"], parallel: true };

impl CeckaMethod for Baseline {
    fn names(&self) -> &'static [&'static str] {
        self.names
    }
    fn role(&self) -> Role {
        Role::Baseline
    }
    fn runs(&self) -> Runs {
        Runs::Host
    }
    fn colored(&self) -> bool {
        self.parallel
    }
    fn run(&self, ctx: &mut CaseCtx, _: &Problem_, prep: &Prepared, point: &Point) -> Result<Vec<Measured>, CaseError> {
        run_cpu(ctx, prep, point, self.parallel)
    }
}

/// The CPU baselines, f64. The system is allocated once; each timed repetition zeroes it and
/// assembles (the paper's Algorithm 1 includes the zeroing), so no repetition allocates.
/// cpu-serial is checked against [`assemble_by_search`] (no precomputed slots), not against
/// itself; cpu-parallel against the serial reference.
fn run_cpu(ctx: &mut CaseCtx, prep: &Prepared, point: &Point, parallel: bool) -> Result<Vec<Measured>, CaseError> {
    let p = &prep.problem;
    let (colors, color_secs) = if parallel {
        let (c, t) = prep.colors(point.min_colors)?;
        (Some(c), t)
    } else {
        (None, 0.0)
    };
    let mut out = System { vals: vec![f64::NAN; p.nnz()], rhs: vec![f64::NAN; p.n_free] };
    let timing = measure_host::<()>(ctx.policy, &mut || {
        match &colors {
            Some(c) => assemble_parallel_into(p, c, &mut out),
            None => assemble_serial_into(p, &mut out),
        }
        Ok(())
    })
    .map_err(|_| CaseError::Failed("host assembly failed".into()))?;
    let independent;
    let check_against = if parallel {
        prep.reference()
    } else {
        independent = assemble_by_search(p);
        &independent
    };
    let (over, worst) = check_bounds(&out.vals, &out.rhs, check_against, prep.bounds(false), f64::EPSILON / 2.0);
    let cmp = compare(&out.vals, &out.rhs, check_against);
    let (bytes, flops) = cost(p, 8, false);
    let mut m = Measured::verified(point.method.as_str(), timing, worst, 1.0)
        .bytes(bytes)
        .flops(flops)
        .extra("table6_error", cmp.avg_relative)
        .extra("entries_over_bound", over as f64)
        .extra("setup_s", color_secs)
        .extra("threads", if colors.is_some() { rayon::current_num_threads() as f64 } else { 1.0 });
    for (k, v) in sizes(prep) {
        m = m.extra(k, v);
    }
    m = m.extra("colors_used", colors.map_or(0.0, |c| c.len() as f64));
    Ok(vec![m])
}
