//! The CPU reference as measured methods: serial f64 assembly and CG (the paper's sequential
//! FEM), and the same on rayon's threads.

use super::capacitor::{spmv, Capacitor, Solve};
use super::method::{About, AcooMethod, Case};
use super::methods::MethodRun;
use crate::benchmark::{CaseCtx, CaseError};
use crate::measure::{run_staged, CacheMode};
use crate::methods::host_for;

/// The CPU reference as a measured method: serial assembly and CG (one rayon thread), or both
/// on rayon's threads (`parallel`: colored assembly; the coloring is pre-processing, outside the
/// timers).
pub struct HostMethod {
    pub about: About,
    pub parallel: bool,
}

impl AcooMethod for HostMethod {
    fn about(&self) -> &About {
        &self.about
    }
    fn run(&self, ctx: &mut CaseCtx, case: &Case) -> Result<MethodRun, CaseError> {
        host_for(ctx, self.about.names[0])?;
        run_cpu(ctx, case, self)
    }
}

/// A host method's case. Everything is allocated before the passes: the timed stages allocate
/// nothing.
fn run_cpu(ctx: &mut CaseCtx, case: &Case, method: &HostMethod) -> Result<MethodRun, CaseError> {
    let (problem, c, colors) = (case.problem, case.c, case.colors.0);
    let threads = if method.parallel { rayon::current_num_threads() } else { 1 };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| CaseError::Failed(e.to_string()))?;
    let colors = (threads > 1).then_some(colors);
    let (mut vals, mut rhs) = (vec![0.0; c.pattern.nnz()], vec![0.0; c.n_free]);
    let mut work = Solve::workspace(c.n_free, problem.max_iterations);
    let mut worst: f64 = 0.0;
    let staged = pool.install(|| {
        run_staged(ctx.policy, CacheMode::Warm, &method.about.timed_stages(), "solve", |pass| -> Result<(), CaseError> {
            pass.host("elements", || match &colors {
                None => c.assemble_into(&mut vals, &mut rhs),
                Some(colors) => assemble_parallel_into(c, colors, &mut vals, &mut rhs),
            });
            pass.host("solve", || work.solve(&rhs, problem.tolerance, problem.max_iterations, |p, q| spmv(&c.pattern, &vals, p, q)));
            let err = fembench_fem::verify::relative_l2(&work.x, case.reference.x);
            worst = if err.is_nan() || worst.is_nan() { f64::NAN } else { worst.max(err) };
            work.x.fill(f64::NAN); // the next pass must write its own solution
            Ok(())
        })
    })?;
    let cg = super::gpu::CgRun::counted(work.iterations, work.iterations, work.relative_residual <= problem.tolerance);
    Ok(MethodRun {
        staged: vec![staged],
        cg,
        error: worst,
        csr_error: None,
        memory: Default::default(),
        coloring: None,
        product: None,
        library: None,
    })
}

/// Colored assembly with rayon: one color at a time, its elements across the threads.
fn assemble_parallel_into(c: &Capacitor, colors: &[Vec<u32>], vals: &mut [f64], rhs: &mut [f64]) {
    use rayon::prelude::*;
    vals.par_iter_mut().for_each(|v| *v = 0.0);
    rhs.par_iter_mut().for_each(|v| *v = 0.0);
    #[derive(Clone, Copy)]
    struct Shared(*mut f64);
    unsafe impl Send for Shared {}
    unsafe impl Sync for Shared {}
    let (vp, rp) = (Shared(vals.as_mut_ptr()), Shared(rhs.as_mut_ptr()));
    for group in colors {
        group.par_iter().for_each(|&e| {
            let (vp, rp) = (vp, rp);
            // SAFETY: elements of one color share no node, so no row and no slot.
            c.contributions(e as usize, |s, v| unsafe { *vp.0.add(s) += v }, |r, v| unsafe { *rp.0.add(r) += v });
        });
    }
}
