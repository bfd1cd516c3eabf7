//! The methods of one thread per element: ElemColor (the paper's 4.1, one launch per color)
//! and ElemAtomic (beyond the paper, atomic adds into precomputed CSR slots), both with the
//! "dummy" element subroutine as a second variant.

use std::marker::PhantomData;
use std::time::Instant;

use rayon::prelude::*;

use super::cost::cost;
use super::gpu::upload_nodal;
use super::gpu::Nodal;
use super::kernel::CECKA;
use super::kernel::{Elements, Zero};
use super::method::{Ahead, Assembly, Case, GpuMethod, Role};
use super::problem::checked::Cost;
use super::problem::system::SOURCE_F;
use super::spec::Family;
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, Kernel, Launch, RealArg};
use crate::kernels::{Defines, KernelSource};
use crate::real::Real;

/// 4.1: one thread per element, one launch per color.
pub(crate) struct ElemColor;
/// Beyond the paper: one thread per element, atomic adds into precomputed CSR slots.
pub struct ElemAtomic;

/// The shipped element kernel, which every one-thread-per-element method launches unless it
/// brings a variant of its own.
pub const ELEMENT_KERNEL: &str = "cecka_elements";

impl GpuMethod for ElemColor {
    const NAMES: &'static [&'static str] = &["elem-color", "elem-color-dummy"];
    const ROLE: Role = Role::Paper;
    const COLORED: bool = true;
    fn plan_ahead(&self, a: &Ahead) {
        drop(a.prep.colors(a.colors));
    }
    fn prepare<T: Real>(&self, ctx: &mut CaseCtx, case: &Case) -> Result<Box<dyn Assembly<T>>, CaseError> {
        Ok(Box::new(ElemAssembly::<T>::prepare(ctx, case, true, &CECKA, ELEMENT_KERNEL)?))
    }
}

impl GpuMethod for ElemAtomic {
    const NAMES: &'static [&'static str] = &["elem-atomic", "elem-atomic-dummy"];
    const ROLE: Role = Role::Beyond;
    fn prepare<T: Real>(&self, ctx: &mut CaseCtx, case: &Case) -> Result<Box<dyn Assembly<T>>, CaseError> {
        Ok(Box::new(ElemAssembly::<T>::prepare(ctx, case, false, &CECKA, ELEMENT_KERNEL)?))
    }
}

/// Each color's (first, count) in the elements listed color after color; all elements at once
/// where there are no colors.
fn color_ranges(colors: Option<&[Vec<u32>]>, ne: usize) -> Vec<(usize, usize)> {
    let Some(colors) = colors else { return vec![(0, ne)] };
    colors
        .iter()
        .scan(0usize, |first, g| {
            let r = (*first, g.len());
            *first += g.len();
            Some(r)
        })
        .collect()
}

/// An element-method case on its GPU: the element arrays in device order (natural for
/// atomics, grouped by color), the outputs and the kernels. A method of one thread per element
/// prepares one with its element kernel: `cecka_elements` ([`ELEMENT_KERNEL`]), or a variant of
/// its own with the same parameters (the argument struct [`Elements`]) in `kernels/cecka.kern`,
/// compiled with `ATOMIC` (0 for colors, 1 for atomic adds), `DUMMY` and `EN` defined.
pub struct ElemAssembly<T> {
    nodal: Nodal,
    conn: Buffer,
    dof: Buffer,
    slots: Buffer,
    vals: Buffer,
    rhs: Buffer,
    elements: Kernel,
    zero: Kernel,
    /// Each launch's (first, count) of elements.
    ranges: Vec<(usize, usize)>,
    group_size: usize,
    f: RealArg,
    ne: usize,
    nnz: usize,
    n_free: usize,
    cost: Cost,
    real: PhantomData<T>,
}

impl<T: Real> ElemAssembly<T> {
    /// The case set up for element kernel `kernel` of `source` (`CECKA`: kernels/cecka.kern),
    /// one launch per color (`colored`) or one in all with atomic adds.
    pub fn prepare(ctx: &mut CaseCtx, case: &Case, colored: bool, source: &KernelSource, kernel: &str) -> Result<Self, CaseError> {
        let Case { dev, problem, prep, point } = *case;
        let p = &prep.problem;
        let (en, ne) = (p.en(), p.ne());
        let s = std::mem::size_of::<T>();
        let setup_start = Instant::now();
        let (colors, color_secs) = if colored {
            let (c, t) = prep.colors(point.min_colors)?;
            (Some(c), t)
        } else {
            (None, 0.0)
        };
        let order: Vec<u32> = match &colors {
            Some(c) => c.iter().flatten().copied().collect(),
            None => (0..ne as u32).collect(),
        };
        let soa_u32 = |width: usize, f: &(dyn Fn(usize, usize) -> u32 + Sync)| -> Vec<u32> {
            (0..width * ne).into_par_iter().map(|idx| f(idx / ne, order[idx % ne] as usize)).collect()
        };
        let conn_h = soa_u32(en, &|a, e| p.mesh.element(e)[a]);
        let slots_h: Vec<i32> = soa_u32(en * en, &|k, e| p.slots[e * en * en + k] as u32).into_iter().map(|v| v as i32).collect();
        let nodal = upload_nodal::<T>(dev, p)?;
        let (conn, dof, slots) = (dev.upload_slice(&conn_h)?, dev.upload_slice(&p.dof)?, dev.upload_slice(&slots_h)?);
        let nan = vec![T::nan(); p.nnz().max(p.n_free)];
        let (vals, rhs) = (dev.upload_slice(&nan[..p.nnz()])?, dev.upload_slice(&nan[..p.n_free])?);
        let memory = (conn_h.len() + slots_h.len() + p.mesh.num_nodes()) * 4 + nodal.bytes + (p.nnz() + p.n_free) * s;
        drop((conn_h, slots_h, nan));
        let setup_s = setup_start.elapsed().as_secs_f64() + color_secs;
        let defines =
            Defines::for_precision(T::PRECISION).with("EN", en).with("ATOMIC", (!colored) as u8).with("DUMMY", point.method.dummy() as u8);
        let (bytes, flops) = cost(p, s, point.method.dummy());
        let extras = vec![("colors_used", colors.as_ref().map_or(0.0, |c| c.len() as f64))];
        Ok(ElemAssembly {
            nodal,
            conn,
            dof,
            slots,
            vals,
            rhs,
            elements: ctx.modules.kernel_as::<Elements>(dev, source, &defines, kernel)?,
            zero: ctx.modules.kernel_for::<Zero>(dev, &CECKA, &Defines::for_precision(T::PRECISION))?,
            ranges: color_ranges(colors.as_deref().map(|c| &c[..]), ne),
            group_size: problem.group_size(Family::Elem),
            f: RealArg::new(T::PRECISION, SOURCE_F),
            ne,
            nnz: p.nnz(),
            n_free: p.n_free,
            cost: Cost { bytes, flops, memory: memory as f64, setup_s, extras },
            real: PhantomData,
        })
    }

    fn args(&self, first: usize, count: usize) -> Elements<'_> {
        let n = &self.nodal;
        Elements {
            x: &n.x,
            y: &n.y,
            conn: &self.conn,
            dof: &self.dof,
            g: &n.g,
            refs: &n.refs,
            slots: &self.slots,
            vals: &self.vals,
            rhs: &self.rhs,
            f: self.f,
            ne: self.ne as i32,
            first: first as i32,
            count: count as i32,
        }
    }
}

impl<T: Real> Assembly<T> for ElemAssembly<T> {
    /// Zeroes the outputs, then one launch per color (one in all for atomics).
    fn enqueue(&self, dev: &dyn Device) -> DeviceResult<()> {
        dev.launch_with(&self.zero, Launch::cover(self.nnz, 256), &Zero { v: &self.vals, n: self.nnz as i32 })?;
        dev.launch_with(&self.zero, Launch::cover(self.n_free, 256), &Zero { v: &self.rhs, n: self.n_free as i32 })?;
        self.ranges.iter().try_for_each(|&(first, count)| {
            dev.launch_with(&self.elements, Launch::cover(count, self.group_size), &self.args(first, count))
        })
    }
    fn outputs(&self) -> Vec<&Buffer> {
        vec![&self.vals, &self.rhs]
    }
    fn read(&self, dev: &dyn Device) -> Result<(Vec<T>, Vec<T>), CaseError> {
        Ok((dev.download_vec::<T>(&self.vals, self.nnz)?, dev.download_vec::<T>(&self.rhs, self.n_free)?))
    }
    fn cost(&self) -> Cost {
        self.cost.clone()
    }
}
