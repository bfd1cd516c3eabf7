//! The device methods as the case lifecycle runs them ([`crate::lifecycle`]): each is set up
//! outside any timer (its buffers, kernels and host pre-processing), a pass is its stages, and
//! its verdict is the check of what the pass wrote against the f64 reference.
//!
//! - [`Formats`]: the paper's methods and ours, elements then the symbolic and numeric kernels
//!   of a format (Algorithms 1 and 3-6), and COOM's and ELLM's conversion to CSR;
//! - [`Baseline`]: the ElemAtomic-style baseline, host-made CSR slots and one atomic scatter.

use super::method::{Case, DeviceMethod};
use std::marker::PhantomData;

use super::formats::layout::{Vendor, ELLM_WIDTH};
use super::formats::Format;
use super::formats::{self, Check};
use super::gpu::{check_on_device, converts, cover, node_elements, stages_of, DeviceRun, Elements, CHECK_ENTRIES, SANFUI};
use super::kernel::{ElemAtomic, GatherArgs, GatherPlan, Numeric, Symbolic, ToCsr};
use super::reference::Prepared;
use super::spec::Method;
use super::spmv::{self, Assembled, VendorInput};
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::scan::fill_words as fill;
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, Kernel};
use crate::kernels::Defines;
use crate::lifecycle::{drive, warm_only, Driven, PassMethod};
use crate::measure::trace::mark;
use crate::measure::{Pass, Timer};
use crate::real::Real;

/// Why a cold run of these methods fails.
pub(crate) const WARM_ONLY: &str = "Sanfui-Sharma methods run warm only: their stages are timed back to back in one pass";

/// The methods that assemble into a format (the paper's ten, elem-atomic, ellm-gather): what
/// their registry line says (format, race) picks their kernels.
pub struct IntoFormat;

impl DeviceMethod for IntoFormat {
    fn run<T: Real>(&self, ctx: &mut CaseCtx, dev: &dyn Device, case: &Case) -> Result<DeviceRun, CaseError> {
        run_device::<T>(ctx, dev, case.prep, case.method)
    }
}

/// A device method's case: set up, driven (checked pass, then timed passes), its matrix
/// multiplied by a vector, its row's figures.
fn run_device<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, prep: &Prepared, method: Method) -> Result<DeviceRun, CaseError> {
    let mode = warm_only(ctx.policy, WARM_ONLY)?;
    if method == Method::ELEM_ATOMIC {
        let mut m = Baseline::<T>::new(ctx, dev, prep)?;
        let Driven { staged, verdict } = drive(ctx, dev, &mut m, mode)?;
        let spmv = spmv::measure::<T>(ctx, dev, prep, &m.assembled())?;
        return Ok(m.run(staged, verdict, spmv));
    }
    let mut m = Formats::<T>::new(ctx, dev, prep, method)?;
    mark("sanfui: format buffers allocated");
    let Driven { staged, verdict } = drive(ctx, dev, &mut m, mode)?;
    mark("sanfui: timed passes");
    let spmv = spmv::measure::<T>(ctx, dev, prep, &m.assembled())?;
    mark("sanfui: spmv");
    Ok(m.run(staged, verdict, spmv))
}

/// The kernel definitions of a method's build.
fn defines_of<T: Real>(method: Method) -> Defines {
    Defines::for_precision(T::PRECISION)
        .with("FORMAT", method.format().code())
        .with("ATOMIC", method.atomic() as u8)
        .with("ORDERED", method.colored() as u8)
}

/// COOM's and ELLM's matrix converted to CSR, and the kernel that converts it.
struct Converted {
    row_ptr: Buffer,
    col: Buffer,
    vals: Buffer,
    kernel: Kernel,
}

/// A format's arrays: the row side (none for ELL and ELLM), the column side and the values.
struct FormatArrays {
    idx_r: Buffer,
    idx_c: Buffer,
    vals: Buffer,
    /// Their lengths in entries.
    lengths: (usize, usize, usize),
}

/// The paper's methods and ours: elements, symbolic, numeric (and convert).
pub(crate) struct Formats<'a, T> {
    dev: &'a dyn Device,
    prep: &'a Prepared,
    method: Method,
    el: Elements,
    zero: Kernel,
    /// The symbolic kernel's input (the pre-processing's S^j): node offsets and neighbours.
    nptr: Buffer,
    nbr: Buffer,
    out: FormatArrays,
    kernels: (Kernel, Kernel),
    /// Each color's (first, count) in the element order; one range of all for the atomics.
    ranges: Vec<(usize, usize)>,
    csr: Option<Converted>,
    gather: Option<Gather>,
    bytes: usize,
    real: PhantomData<T>,
}

impl<'a, T: Real> Formats<'a, T> {
    fn new(ctx: &mut CaseCtx, dev: &'a dyn Device, prep: &'a Prepared, method: Method) -> Result<Self, CaseError> {
        let s = std::mem::size_of::<T>();
        let (format, nb, nn) = (method.format(), &prep.nb, prep.mesh.num_nodes());
        // The colored methods keep K^e in color order (ORDERED): one color's threads read
        // neighbouring words of K^e, as the atomic methods do in element order.
        let defines = defines_of::<T>(method);
        let el = Elements::new::<T>(ctx, dev, prep, &defines, method.colored())?;
        mark("sanfui: element inputs uploaded, K^e allocated");
        let (lr, lc, lv) = formats::lengths(format, nb);
        let out =
            FormatArrays { idx_r: dev.alloc(4 * lr.max(1))?, idx_c: dev.alloc(4 * lc)?, vals: dev.alloc(s * lv)?, lengths: (lr, lc, lv) };
        let mut bytes = el.bytes + 4 * (nn + 1 + nb.blocks()) + formats::storage_bytes(format, nb, s);
        let csr = if converts(method) {
            bytes += formats::storage_bytes(Format::CSR, nb, s);
            let nnz = 9 * nb.blocks();
            Some(Converted {
                row_ptr: dev.alloc(4 * (3 * nn + 1))?,
                col: dev.alloc(4 * nnz)?,
                vals: dev.alloc(s * nnz)?,
                kernel: ctx.modules.kernel_for::<ToCsr>(dev, &SANFUI, &defines)?,
            })
        } else {
            None
        };
        // ellm-gather: its plan and kernels (the adjacency is host pre-processing).
        let gather = if method == Method::ELLM_GATHER { Some(Gather::new(ctx, dev, prep, &defines)?) } else { None };
        bytes += gather.as_ref().map_or(0, |g| g.bytes);
        let kernels =
            (ctx.modules.kernel_for::<Symbolic>(dev, &SANFUI, &defines)?, ctx.modules.kernel_for::<Numeric>(dev, &SANFUI, &defines)?);
        Ok(Formats {
            dev,
            prep,
            method,
            el,
            zero: ctx.modules.filler(dev)?,
            nptr: dev.upload_slice(&nb.ptr)?,
            nbr: dev.upload_slice(&nb.list)?,
            out,
            kernels,
            ranges: color_ranges(prep, method),
            csr,
            gather,
            bytes,
            real: PhantomData,
        })
    }

    fn symbolic(&self) -> DeviceResult<()> {
        let (nn, o) = (self.prep.mesh.num_nodes(), &self.out);
        let args = Symbolic { nptr: &self.nptr, nbr: &self.nbr, idx_r: &o.idx_r, idx_c: &o.idx_c, nn: nn as i64 };
        self.dev.launch_with(&self.kernels.0, cover(nn), &args)?;
        match &self.gather {
            Some(g) => g.plan(self.dev, &self.el.conn, &o.idx_c, nn),
            None => Ok(()),
        }
    }

    fn numeric(&self) -> DeviceResult<()> {
        let (dev, o) = (self.dev, &self.out);
        let (ne, nn) = (self.prep.mesh.num_elements(), self.prep.mesh.num_nodes());
        if let Some(g) = &self.gather {
            return g.numeric(dev, &self.el.ke, ne, &o.vals, nn);
        }
        fill(dev, &self.zero, &o.vals, 0, o.lengths.2 * std::mem::size_of::<T>() / 4)?;
        // COO's numeric kernel finds a node's rows through the node offsets (its R has none).
        let row_side = if self.method.format().0.numeric_reads_node_offsets() { &self.nptr } else { &o.idx_r };
        for &(first, count) in &self.ranges {
            let args = Numeric {
                elist: &self.el.order,
                first: first as i64,
                count: count as i64,
                conn: &self.el.conn,
                ke: &self.el.ke,
                ne: ne as i64,
                idx_r: row_side,
                idx_c: &o.idx_c,
                vals: &o.vals,
                nn: nn as i64,
            };
            dev.launch_with(&self.kernels.1, cover(count), &args)?;
        }
        Ok(())
    }

    fn convert(&self, c: &Converted) -> DeviceResult<()> {
        let nn = self.prep.mesh.num_nodes();
        let o = &self.out;
        let args =
            ToCsr { nptr: &self.nptr, idx_c: &o.idx_c, vals: &o.vals, row_ptr: &c.row_ptr, col: &c.col, out: &c.vals, nn: nn as i64 };
        self.dev.launch_with(&c.kernel, cover(ELLM_WIDTH * nn), &args)
    }

    /// The assembled matrix, and the arrays cuSPARSE multiplies where it has the format.
    fn assembled(&self) -> Assembled<'_> {
        let (format, o) = (self.method.format(), &self.out);
        let vendor = match (format.0.vendor(), &self.csr) {
            (Vendor::Csr, _) => Some(VendorInput::Csr(&o.idx_r, &o.idx_c, &o.vals)),
            (Vendor::Bsr, _) => Some(VendorInput::Bsr(&self.nptr, &self.nbr, &o.vals)),
            (Vendor::Converted, Some(c)) => Some(VendorInput::Csr(&c.row_ptr, &c.col, &c.vals)),
            _ => None,
        };
        Assembled { format, idx_r: &o.idx_r, idx_c: &o.idx_c, vals: &o.vals, vendor }
    }

    fn run(&self, staged: crate::measure::Staged, check: Check, spmv: Vec<spmv::SpmvRun>) -> DeviceRun {
        let s = std::mem::size_of::<T>();
        DeviceRun {
            staged,
            check,
            device_bytes: self.bytes as f64,
            storage_bytes: formats::storage_bytes(self.method.format(), &self.prep.nb, s) as f64,
            setup_s: self.gather.as_ref().map_or(0.0, |g| g.setup_s),
            spmv,
            costs: Vec::new(),
            extras: Vec::new(),
            library: None,
        }
    }
}

impl<T: Real> PassMethod for Formats<'_, T> {
    type Verdict = Check;
    fn stages(&self) -> Vec<(&'static str, Timer)> {
        stages_of(self.method)
    }
    fn decisive(&self) -> &'static str {
        "numeric"
    }
    fn outputs(&self) -> Vec<&Buffer> {
        let o = &self.out;
        let mut out = vec![&self.el.ke, &o.idx_r, &o.idx_c, &o.vals];
        out.extend(self.gather.as_ref().map(|g| &g.plan));
        out.extend(self.csr.iter().flat_map(|c| [&c.row_ptr, &c.col, &c.vals]));
        out
    }
    fn pass(&mut self, pass: &mut Pass) -> Result<(), CaseError> {
        let dev = self.dev;
        pass.device(dev, "elements", &mut || self.el.launch(dev))?;
        pass.device(dev, "symbolic", &mut || self.symbolic())?;
        pass.device(dev, "numeric", &mut || self.numeric())?;
        if let Some(c) = &self.csr {
            pass.device(dev, "convert", &mut || self.convert(c))?;
        }
        Ok(())
    }
    /// The format's arrays against the reference; for COOM and ELLM the converted CSR too,
    /// the verdict the worse of the two.
    fn verify(&mut self) -> Result<Check, CaseError> {
        let (o, lr) = (&self.out, self.out.lengths.0);
        let check = check_on_device::<T>(
            self.dev,
            self.method.format(),
            ((lr > 0).then_some(&o.idx_r), &o.idx_c, &o.vals),
            self.prep,
            CHECK_ENTRIES,
        )?;
        mark("sanfui: downloaded and checked");
        let Some(c) = &self.csr else { return Ok(check) };
        let converted = check_on_device::<T>(self.dev, Format::CSR, (Some(&c.row_ptr), &c.col, &c.vals), self.prep, CHECK_ENTRIES)?;
        mark("sanfui: converted CSR downloaded and checked");
        Ok(check.and(Check { structure: converted.structure.map(|e| format!("converted to CSR: {e}")), ..converted }))
    }
}

/// Each color's (first, count) in the elements listed color after color; the atomic methods
/// take every element at once.
fn color_ranges(prep: &Prepared, method: Method) -> Vec<(usize, usize)> {
    if !method.colored() {
        return vec![(0, prep.mesh.num_elements())];
    }
    prep.colors
        .iter()
        .scan(0, |start, g| {
            *start += g.len();
            Some((*start - g.len(), g.len()))
        })
        .collect()
}

/// The baseline: the CSR slot of each of an element's 576 entries, made on the host, then one
/// atomic scatter of K^e into the values.
pub(crate) struct Baseline<'a, T> {
    dev: &'a dyn Device,
    prep: &'a Prepared,
    el: Elements,
    zero: Kernel,
    kernel: Kernel,
    slot: Buffer,
    vals: Buffer,
    /// The pattern on the device: the check reads the values through it, and the SpMV uses it
    /// (the slots point into it).
    pattern: (Buffer, Buffer),
    setup_s: f64,
    bytes: usize,
    real: PhantomData<T>,
}

impl<'a, T: Real> Baseline<'a, T> {
    fn new(ctx: &mut CaseCtx, dev: &'a dyn Device, prep: &'a Prepared) -> Result<Self, CaseError> {
        let s = std::mem::size_of::<T>();
        let defines = defines_of::<T>(Method::ELEM_ATOMIC);
        let el = Elements::new::<T>(ctx, dev, prep, &defines, false)?;
        let (p, ne) = (&prep.pattern, prep.mesh.num_elements());
        let t0 = std::time::Instant::now();
        let slots = element_slots(prep);
        let setup_s = t0.elapsed().as_secs_f64();
        let slot = dev.upload_slice(&slots)?;
        drop(slots);
        let nnz = p.nnz();
        let rp: Vec<i32> = p.row_ptr.iter().map(|&v| v as i32).collect();
        let pattern = (dev.upload_slice(&rp)?, dev.upload_slice(bytemuck::cast_slice::<u32, i32>(&p.col))?);
        Ok(Baseline {
            dev,
            prep,
            bytes: el.bytes + 4 * 576 * ne + nnz * s,
            el,
            zero: ctx.modules.filler(dev)?,
            kernel: ctx.modules.kernel_for::<ElemAtomic>(dev, &SANFUI, &defines)?,
            slot,
            vals: dev.alloc(nnz * s)?,
            pattern,
            setup_s,
            real: PhantomData,
        })
    }

    fn numeric(&self) -> DeviceResult<()> {
        let (dev, ne, nnz) = (self.dev, self.prep.mesh.num_elements(), self.prep.pattern.nnz());
        fill(dev, &self.zero, &self.vals, 0, nnz * std::mem::size_of::<T>() / 4)?;
        dev.launch_with(&self.kernel, cover(ne), &ElemAtomic { slot: &self.slot, ke: &self.el.ke, vals: &self.vals, ne: ne as i64 })
    }

    fn assembled(&self) -> Assembled<'_> {
        let (rp, cl) = (&self.pattern.0, &self.pattern.1);
        Assembled { format: Format::CSR, idx_r: rp, idx_c: cl, vals: &self.vals, vendor: Some(VendorInput::Csr(rp, cl, &self.vals)) }
    }

    fn run(&self, staged: crate::measure::Staged, check: Check, spmv: Vec<spmv::SpmvRun>) -> DeviceRun {
        DeviceRun {
            staged,
            check,
            device_bytes: self.bytes as f64,
            storage_bytes: formats::storage_bytes(Format::CSR, &self.prep.nb, std::mem::size_of::<T>()) as f64,
            setup_s: self.setup_s,
            spmv,
            costs: Vec::new(),
            extras: Vec::new(),
            library: None,
        }
    }
}

impl<T: Real> PassMethod for Baseline<'_, T> {
    type Verdict = Check;
    fn stages(&self) -> Vec<(&'static str, Timer)> {
        stages_of(Method::ELEM_ATOMIC)
    }
    fn decisive(&self) -> &'static str {
        "numeric"
    }
    fn outputs(&self) -> Vec<&Buffer> {
        vec![&self.el.ke, &self.vals]
    }
    fn pass(&mut self, pass: &mut Pass) -> Result<(), CaseError> {
        let dev = self.dev;
        pass.device(dev, "elements", &mut || self.el.launch(dev))?;
        pass.device(dev, "numeric", &mut || self.numeric())?;
        Ok(())
    }
    fn verify(&mut self) -> Result<Check, CaseError> {
        let (rp, cl) = (&self.pattern.0, &self.pattern.1);
        Ok(check_on_device::<T>(self.dev, Format::CSR, (Some(rp), cl, &self.vals), self.prep, CHECK_ENTRIES)?)
    }
}

/// The baseline's slots (host pre-processing), interleaved like K^e: entry [(8 a + m) 24 + ..]
/// of column-major K^e. A node's three rows hold the same columns, each neighbour's three dofs
/// in a row: one bisection per node pair (a, b) finds the block, whose nine entries are
/// row_ptr[3 va + m] + (offset of column 3 vb in row 3 va) + n.
fn element_slots(prep: &Prepared) -> Vec<i32> {
    use rayon::prelude::*;
    let (m, p) = (&prep.mesh, &prep.pattern);
    let ne = m.num_elements();
    let mut slots = vec![0i32; 576 * ne];
    let mut cols: Vec<Option<&mut [i32]>> = slots.chunks_mut(ne.max(1)).map(Some).collect();
    let pairs: Vec<(usize, Vec<&mut [i32]>)> = (0..64)
        .map(|ab| {
            let (a, b) = (ab / 8, ab % 8);
            let nine = (0..9).map(|mn| cols[(3 * a + mn / 3) * 24 + 3 * b + mn % 3].take().expect("each column once")).collect();
            (ab, nine)
        })
        .collect();
    pairs.into_par_iter().for_each(|(ab, mut nine)| {
        let (a, b) = (ab / 8, ab % 8);
        for e in 0..ne {
            let v = m.element(e);
            let (ra, cb) = (3 * v[a] as usize, 3 * v[b] as usize);
            let first = p.slot(ra, cb).map(|x| x - p.row_ptr[ra] as usize);
            for (mn, out) in nine.iter_mut().enumerate() {
                let r = ra + mn / 3;
                out[e] = first.map_or(-1, |k| (p.row_ptr[r] as usize + k + mn % 3) as i32);
                debug_assert_eq!(p.slot(r, cb + mn % 3).map_or(-1, |x| x as i32), out[e]);
            }
        }
    });
    slots
}

/// ellm-gather's data and kernels: each node's elements (host pre-processing, like the
/// neighbour lists), the plan the second symbolic kernel writes (two words per ELLM block), and
/// the numeric kernel that sums each block's element blocks once.
struct Gather {
    nadj: Buffer,
    plan: Buffer,
    plan_kernel: Kernel,
    numeric_kernel: Kernel,
    bytes: usize,
    setup_s: f64,
}

impl Gather {
    fn new(ctx: &mut CaseCtx, dev: &dyn Device, prep: &Prepared, defines: &Defines) -> Result<Self, CaseError> {
        let t0 = std::time::Instant::now();
        let nadj = node_elements(&prep.mesh).map_err(CaseError::Failed)?;
        let setup_s = t0.elapsed().as_secs_f64();
        let nn = prep.mesh.num_nodes();
        Ok(Gather {
            nadj: dev.upload_slice(&nadj)?,
            plan: dev.alloc(4 * 2 * ELLM_WIDTH * nn)?,
            plan_kernel: ctx.modules.kernel_for::<GatherPlan>(dev, &SANFUI, defines)?,
            numeric_kernel: ctx.modules.kernel_for::<GatherArgs>(dev, &SANFUI, defines)?,
            bytes: 4 * nadj.len() + 8 * ELLM_WIDTH * nn,
            setup_s,
        })
    }
    fn plan(&self, dev: &dyn Device, conn: &Buffer, gamma: &Buffer, nn: usize) -> DeviceResult<()> {
        dev.launch_with(&self.plan_kernel, cover(nn), &GatherPlan { nadj: &self.nadj, conn, idx_c: gamma, plan: &self.plan, nn: nn as i64 })
    }
    fn numeric(&self, dev: &dyn Device, ke: &Buffer, ne: usize, vals: &Buffer, nn: usize) -> DeviceResult<()> {
        let args = GatherArgs { nadj: &self.nadj, plan: &self.plan, ke, ne: ne as i64, vals, nn: nn as i64 };
        dev.launch_with(&self.numeric_kernel, cover(ELLM_WIDTH * nn), &args)
    }
}
