//! The peers (beyond the paper): the routes a user of a GPU library takes, run in the same
//! process and stream as the paper's methods.
//!
//! - The COO route (CuPy's `coo_matrix(...).tocsr()`, SciPy's on the CPU): one thread per element
//!   writes A^e as triplets (value, row, column; a pair with a prescribed dof goes to a sentinel
//!   row past the free ones) and adds F^e into the right-hand side atomically; the pairs are
//!   sorted into CSR order and the shared `coo_sum` kernels sum the duplicates. `coo-radix` sorts
//!   with the shared device radix sort (CUB's algorithm, what CuPy runs; no host wait, so device
//!   events time it), `coo-cusparse` with cuSPARSE's legacy sort (`coosortByRow`, `coo2csr`,
//!   `csrsort`), whose calls wait on the stream inside, so its region is timed with the gate open
//!   and the host gaps count, as they do for a user.
//! - The slot-map route (PyTorch's `index_add_`): a plain kernel writes A^e, then one thread per
//!   entry adds it atomically into the CSR slot a map built once (outside the timer) gives.

use std::time::Instant;

use rayon::prelude::*;

use super::cost::{coo_route_bytes, element_flops, slot_route_bytes};
use super::gpu::{gpu_of, upload_nodal, Nodal};
use super::kernel::CECKA;
use super::kernel::{CooElements, Zero};
use super::method::{Assembly, Case, CeckaMethod, GpuMethod, Role, Runs};
use super::problem::checked::{checked_rows, same_pattern, Cost, GpuRun};
use super::problem::prepared::Prepared;
use super::problem::system::{Problem, SOURCE_F};
use super::spec::{Family, Point, Problem_};
use crate::benchmark::{CaseCtx, CaseError, Measured};
use crate::device::coo_sum::{sum_duplicates, CooSumScratch, CsrOut, SlotScatter as SlotScatterArgs, SortedCoo};
use crate::device::radix_sort::{CooArrays, CooRadixSort, SortOp};
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, Kernel, Launch, RealArg};
use crate::kernels::Defines;
use crate::lifecycle::drive_body;
use crate::measure::Gate;
use crate::real::Real;
use crate::Precision;

/// A COO route: element triplets, their sort into CSR order, duplicates summed.
pub(crate) struct CooRoute {
    names: &'static [&'static str],
    runs: Runs,
    /// Sorted by the shared device radix sort, else by cuSPARSE.
    radix: bool,
}

/// The COO route sorted by cuSPARSE's legacy sort (CUDA only).
pub(crate) const COO_CUSPARSE: CooRoute = CooRoute { names: &["coo-cusparse"], runs: Runs::Cuda, radix: false };
/// The same route sorted by the shared device radix sort (what CuPy's `tocsr` runs, CUB's
/// algorithm). Both GPU APIs.
pub(crate) const COO_RADIX: CooRoute = CooRoute { names: &["coo-radix"], runs: Runs::Gpu, radix: true };
/// PyTorch's `index_add_` route: a plain kernel writes the element matrices, then they are
/// added atomically into CSR slots through a map built once. Both GPU APIs.
pub(crate) struct SlotScatter;

impl CeckaMethod for CooRoute {
    fn names(&self) -> &'static [&'static str] {
        self.names
    }
    fn role(&self) -> Role {
        Role::Peer
    }
    fn runs(&self) -> Runs {
        self.runs
    }
    fn run(&self, ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point) -> Result<Vec<Measured>, CaseError> {
        coo_rows(ctx, problem, prep, point, self.radix)
    }
}

/// A COO route's case, checked like every method's. Its sort holds the arrays it sorts, so the
/// route keeps its own lifecycle ([`drive_body`]) rather than an [`Assembly`].
fn coo_rows(ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point, radix: bool) -> Result<Vec<Measured>, CaseError> {
    let dev = gpu_of(ctx)?;
    match ctx.precision {
        Precision::F32 => checked_rows(prep, point, run_coo_peer::<f32>(ctx, dev, problem, prep, radix)?, None),
        Precision::F64 => checked_rows(prep, point, run_coo_peer::<f64>(ctx, dev, problem, prep, radix)?, None),
    }
}

fn run_coo_peer<T: Real>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    problem: &Problem_,
    prep: &Prepared,
    radix: bool,
) -> Result<GpuRun<T>, CaseError> {
    let p = &prep.problem;
    let (en, ne, s, nnz) = (p.en(), p.ne(), std::mem::size_of::<T>(), p.nnz());
    let pairs = en * en * ne;
    if pairs >= i32::MAX as usize {
        return Err(CaseError::Failed(format!(
            "the COO sort takes a 32-bit entry count; {ne} elements give {pairs} triplets ({} each), over 2^31 - 1",
            en * en
        )));
    }
    // The free rows, then the sentinel row n_free that collects every pair with a prescribed dof.
    let rows = p.n_free + 1;
    // Compiled before the set-up is timed; the radix sort's kernels only for its route.
    let (radix_k, scan) = (if radix { Some(ctx.modules.radix_sort(dev)?) } else { None }, ctx.modules.scan(dev)?);
    let setup_start = Instant::now();
    let stage = ElementStage::upload::<T>(dev, p, true)?;
    let (ke, row, col, perm) = (&stage.ke, &stage.row, &stage.col, dev.alloc(4 * pairs)?);
    let row_ptr_dup = dev.alloc(4 * (rows + 1))?;
    let scratch = CooSumScratch::new(dev, pairs)?;
    // At most one distinct sentinel pair beside the pattern's nnz.
    let (out_ptr, out_col, out_val) = (dev.alloc(4 * (rows + 1))?, dev.alloc(4 * (nnz + 1))?, dev.alloc(s * (nnz + 1))?);
    let arrays = CooArrays { rows, cols: rows, pairs, row, col, perm: &perm, row_ptr: &row_ptr_dup };
    let sort: Box<dyn SortOp + '_> = if let Some(radix_k) = &radix_k {
        Box::new(CooRadixSort::new(dev, radix_k, &scan, arrays)?)
    } else {
        Box::new(dev.sparse()?.coo_sort_to_csr(arrays)?)
    };
    let setup_s = setup_start.elapsed().as_secs_f64();
    let memory = stage.bytes + 4 * pairs + 8 * (rows + 1) + CooSumScratch::bytes(pairs) + (nnz + 1) * (4 + s) + sort.workspace_bytes();

    let elements = stage.kernels::<T>(ctx, dev, problem)?;
    let sum = ctx.modules.coo_sum(dev, T::PRECISION)?;
    let coo = SortedCoo { rows, pairs, row, col, perm: &perm, row_ptr: &row_ptr_dup, vals: ke };
    let out = CsrOut { row_ptr: &out_ptr, col: &out_col, val: &out_val };
    let outputs = [ke, row, col, &perm, &row_ptr_dup, &scratch.head, &scratch.slot, &out_ptr, &out_col, &out_val, &stage.rhs];
    // cuSPARSE's region is open: the host's calls are inside it, so no background work (the
    // next problem built ahead) may share the cores while it is timed.
    if !radix {
        ctx.run.background().quiet();
    }
    let gate = if radix { Gate::Closed } else { Gate::Open };
    let body = &mut || {
        stage.enqueue(dev, &elements)?;
        sort.enqueue()?;
        sum_duplicates(dev, &sum, &scan, &scratch, &coo, &out)
    };
    // The route must rebuild the problem's own CSR pattern before its values are compared.
    let read = &mut || {
        let got_ptr: Vec<i32> = dev.download_vec(&out_ptr, rows + 1)?;
        let got_col: Vec<i32> = dev.download_vec(&out_col, nnz)?;
        same_pattern(p, &got_ptr[..=p.n_free], &got_col)?;
        Ok((dev.download_vec::<T>(&out_val, nnz)?, dev.download_vec::<T>(&stage.rhs, p.n_free)?))
    };
    let (timings, (vals, rhs)) = drive_body(ctx, dev, gate, &outputs, body, read)?;
    let cost = Cost {
        bytes: coo_route_bytes(p, s),
        flops: ne as f64 * element_flops(en as f64, false) + (pairs - nnz) as f64,
        memory: memory as f64,
        setup_s,
        extras: vec![("sort_workspace_bytes", sort.workspace_bytes() as f64), ("triplets", pairs as f64)],
    };
    Ok(GpuRun::new(timings, vals, rhs, cost))
}

impl GpuMethod for SlotScatter {
    const NAMES: &'static [&'static str] = &["slot-scatter"];
    const ROLE: Role = Role::Peer;
    fn prepare<T: Real>(&self, ctx: &mut CaseCtx, case: &Case) -> Result<Box<dyn Assembly<T>>, CaseError> {
        Ok(Box::new(SlotState::<T>::prepare(ctx, case)?))
    }
}

/// The slot-map route on its GPU: the map (entry k of element e, stored at k ne + e as the
/// element kernel writes A^e, to its CSR slot, -1 for a prescribed dof), built and uploaded
/// outside the timer, and the CSR values it adds into.
struct SlotState<T> {
    stage: ElementStage,
    kernels: ElementKernels,
    slots: Buffer,
    vals: Buffer,
    zero: Kernel,
    scatter: Kernel,
    nnz: usize,
    entries: usize,
    cost: Cost,
    real: std::marker::PhantomData<T>,
}

impl<T: Real> SlotState<T> {
    fn prepare(ctx: &mut CaseCtx, case: &Case) -> Result<Self, CaseError> {
        let Case { dev, problem, prep, .. } = *case;
        let p = &prep.problem;
        let (en, ne, s, nnz) = (p.en(), p.ne(), std::mem::size_of::<T>(), p.nnz());
        let entries = en * en * ne;
        let setup_start = Instant::now();
        let slots: Vec<i32> = (0..entries).into_par_iter().map(|idx| p.slots[(idx % ne) * en * en + idx / ne]).collect();
        let stage = ElementStage::upload::<T>(dev, p, false)?;
        let (slots, vals) = (dev.upload_slice(&slots)?, dev.alloc(s * nnz.max(1))?);
        let setup_s = setup_start.elapsed().as_secs_f64();
        let memory = stage.bytes + entries * 4 + nnz * s;
        Ok(SlotState {
            kernels: stage.kernels::<T>(ctx, dev, problem)?,
            stage,
            slots,
            vals,
            zero: ctx.modules.kernel_for::<Zero>(dev, &CECKA, &Defines::for_precision(T::PRECISION))?,
            scatter: ctx.modules.slot_scatter(dev, T::PRECISION)?,
            nnz,
            entries,
            cost: Cost {
                bytes: slot_route_bytes(p, s),
                flops: ne as f64 * element_flops(en as f64, false) + entries as f64,
                memory: memory as f64,
                setup_s,
                extras: vec![("triplets", entries as f64)],
            },
            real: std::marker::PhantomData,
        })
    }
}

impl<T: Real> Assembly<T> for SlotState<T> {
    fn enqueue(&self, dev: &dyn Device) -> DeviceResult<()> {
        dev.launch_with(&self.zero, Launch::cover(self.nnz.max(1), 256), &Zero { v: &self.vals, n: self.nnz as i32 })?;
        self.stage.enqueue(dev, &self.kernels)?;
        let args = SlotScatterArgs { ke: &self.stage.ke, slots: &self.slots, vals: &self.vals, n: self.entries as i64 };
        dev.launch_with(&self.scatter, Launch::cover(self.entries, 256), &args)
    }
    fn outputs(&self) -> Vec<&Buffer> {
        vec![&self.stage.ke, &self.vals, &self.stage.rhs]
    }
    fn read(&self, dev: &dyn Device) -> Result<(Vec<T>, Vec<T>), CaseError> {
        Ok((dev.download_vec::<T>(&self.vals, self.nnz)?, dev.download_vec::<T>(&self.stage.rhs, self.stage.n_free)?))
    }
    fn cost(&self) -> Cost {
        self.cost.clone()
    }
}

/// The first stage both routes share: one thread per element writes A^e (entry k of element e
/// at k ne + e) and, for the COO route, its (row, column) pair (`cecka_coo_elements`), and adds
/// F^e into the right-hand side. Its arrays are uploaded and allocated once, outside the timer.
struct ElementStage {
    nodal: Nodal,
    conn: Buffer,
    dof: Buffer,
    ke: Buffer,
    /// The pairs (a word each where the route writes none).
    row: Buffer,
    col: Buffer,
    rhs: Buffer,
    pairs: bool,
    ne: usize,
    en: usize,
    n_free: usize,
    /// Device bytes of the arrays above.
    bytes: usize,
}

/// The stage's kernels and work-group size.
struct ElementKernels {
    elements: Kernel,
    precision: crate::Precision,
    zero: Kernel,
    group_size: usize,
}

impl ElementStage {
    fn upload<T: Real>(dev: &dyn Device, p: &Problem, pairs: bool) -> Result<Self, CaseError> {
        let (en, ne, s) = (p.en(), p.ne(), std::mem::size_of::<T>());
        let entries = en * en * ne;
        let conn: Vec<u32> = (0..en * ne).into_par_iter().map(|idx| p.mesh.element(idx % ne)[idx / ne]).collect();
        let pair_bytes = if pairs { 4 * entries } else { 4 };
        let nodal = upload_nodal::<T>(dev, p)?;
        Ok(Self {
            bytes: (conn.len() + p.dof.len()) * 4 + nodal.bytes + entries * s + if pairs { 8 * entries } else { 0 } + p.n_free * s,
            nodal,
            conn: dev.upload_slice(&conn)?,
            dof: dev.upload_slice(&p.dof)?,
            ke: dev.alloc(s * entries)?,
            row: dev.alloc(pair_bytes)?,
            col: dev.alloc(pair_bytes)?,
            rhs: dev.alloc(s * p.n_free.max(1))?,
            pairs,
            ne,
            en,
            n_free: p.n_free,
        })
    }

    fn kernels<T: Real>(&self, ctx: &mut CaseCtx, dev: &dyn Device, problem: &Problem_) -> Result<ElementKernels, CaseError> {
        let defines = Defines::for_precision(T::PRECISION).with("EN", self.en).with("DUMMY", 0).with("COO_PAIRS", self.pairs as u8);
        Ok(ElementKernels {
            elements: ctx.modules.kernel_for::<CooElements>(dev, &CECKA, &defines)?,
            precision: T::PRECISION,
            zero: ctx.modules.kernel_for::<Zero>(dev, &CECKA, &Defines::for_precision(T::PRECISION))?,
            group_size: problem.group_size(Family::Elem),
        })
    }

    /// Zeroes the right-hand side, then launches the element kernel.
    fn enqueue(&self, dev: &dyn Device, k: &ElementKernels) -> DeviceResult<()> {
        let n_free = self.n_free;
        dev.launch_with(&k.zero, Launch::cover(n_free.max(1), 256), &Zero { v: &self.rhs, n: n_free as i32 })?;
        let args = CooElements {
            x: &self.nodal.x,
            y: &self.nodal.y,
            conn: &self.conn,
            dof: &self.dof,
            g: &self.nodal.g,
            refs: &self.nodal.refs,
            ke: &self.ke,
            row: &self.row,
            col: &self.col,
            rhs: &self.rhs,
            f: RealArg::new(k.precision, SOURCE_F),
            ne: self.ne as i32,
            nfree: n_free as i32,
        };
        dev.launch_with(&k.elements, Launch::cover(self.ne, k.group_size), &args)
    }
}
