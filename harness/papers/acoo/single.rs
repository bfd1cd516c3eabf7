//! Our CG in Chronopoulos and Gear's single-reduction form on a CSR matrix: one launch makes an
//! iteration's vector updates and its product (`cg_pipe`), one reduces its two dot products
//! (`cg_reduce2`). See [`super::gpu::CgForm::SingleReduction`].

use super::gpu::{cover, fill_with, Cg, CgKernels, CgRun, DeviceCsr, Stage, Stop, BLOCK};
use super::kernel::{Pipe, Reduce2};
use crate::benchmark::CaseError;
use crate::device::{Buffer, DeviceExt, DeviceResult, Launch};
use crate::real::Real;

impl Cg {
    /// As [`Cg::solve`], after its start (x = 0, r = p = b, ||b||^2, alpha = beta = 0): s and q
    /// of the first buffers zeroed, then the batches. `vectors`: the second r, the two s and the
    /// second q ([`Cg::single`]).
    pub(crate) fn solve_single<T: Real>(
        &self,
        k: &CgKernels,
        a: &DeviceCsr,
        vectors: &[Buffer; 4],
        stop: Stop,
        stage: Stage,
    ) -> Result<CgRun, CaseError> {
        let dev = k.dev;
        let [r1, s0, s1, q1] = vectors;
        let words = self.n * std::mem::size_of::<T>() / 4;
        let t = dev.time_events(&mut || {
            fill_with(dev, &k.fill, s0, 0, words)?;
            fill_with(dev, &k.fill, &self.q, 0, words)
        })?;
        stage.pass.record(stage.name, t);
        let (n, m) = (self.n as i64, self.groups() as i64);
        let (row_ptr, col, val, scal, partial) = (&a.row_ptr, &a.col, &a.val, &self.scal, &self.partial);
        let (p, x, history) = (&self.p, &self.x, &self.history);
        let one = Launch { groups: 1, group_size: BLOCK };
        // r, s and q alternate between two buffers every iteration (a batch has an even count).
        let mut iteration = |j: usize| -> DeviceResult<()> {
            let ((r_in, s_in, q_in), (r_out, s_out, q_out)) =
                if j % 2 == 0 { ((&self.r, s0, &self.q), (r1, s1, q1)) } else { ((r1, s1, q1), (&self.r, s0, &self.q)) };
            let args = Pipe { row_ptr, col, val, r_in, s_in, q_in, r_out, s_out, q_out, p, x, scal, partial, n };
            dev.launch_with(&k.pipe, cover(self.n), &args)?;
            dev.launch_with(&k.reduce2, one, &Reduce2 { partial, m, scal, history, it: j as i32 })
        };
        let run = self.batches::<T>(dev, stop, stage, ("CG", 0), true, &mut iteration)?;
        Ok(CgRun { fused: true, single: true, ..run })
    }
}
