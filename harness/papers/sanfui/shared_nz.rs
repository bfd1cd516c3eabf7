//! SharedNZ (Cecka et al., section 4.3) adapted to hex8 elasticity: the paper's GPU baseline,
//! "implemented using CUDA in which the kernel and memory utilization remain the same as given
//! by Cecka et al.". Block k owns the CSR rows of a node part N_k; it computes every element
//! adjacent to N_k (E_k) into shared memory, one thread per element, and then sums the element
//! entries of N_k's rows into their CSR values by reduction lists. Elements on part borders are
//! computed once per part that touches them.
//!
//! - **Parts:** bricks of the box's nodes, the largest (most owned nodes) whose elements fit the
//!   shared memory, (bx + 1)(by + 1)(bz + 1) elements of 576 reals each. On a box a brick is the
//!   part METIS approximates on Cecka's unstructured meshes, with no search. In 48 KB (a CUDA
//!   block's static shared memory, as in Cecka's kernel) that is one node per block in f64 (its
//!   8 elements: each element computed 8 times) and 2 x 2 x 1 nodes in f32 (18 elements).
//! - **Lists,** packed for the block's threads by LPT ([`fembench_fem::lpt`], as the Cecka
//!   module's): the scatter list of each node of E_k (`node, shared slots..`: Algorithm 7 reads
//!   its coordinates once) and the reduction list of each CSR value of N_k's rows (`shared
//!   entries.., value`: Algorithm 6 from shared memory). Codes as Cecka's: a source s as s + 1, a
//!   target t as -t - 1, 0 is padding.
//! - **Shared memory:** entry m = 24 i + j of local element le at m STRIDE + le; before that,
//!   coordinate c of its local node a at (8 c + a) STRIDE + le.
//!
//! The CSR layout is the symbolic kernel's (row 3a + m of node a at 9 base + 3 nng m, column
//! 3 nbr[k] + n at + 3k + n), so the row offsets and columns come from the CSR symbolic stage.

use super::method::{Case, DeviceMethod};
use std::marker::PhantomData;

use rayon::prelude::*;

use fembench_fem::hexmesh::BoxMesh;
use fembench_fem::lpt::{pack_reduction, pack_scatter, run_reduction};
pub use fembench_fem::lpt::{Packed, SharedPlan};

use super::assembly::WARM_ONLY;
use super::cost::{self, Cost};
use super::formats;
use super::formats::Format;
use super::gpu::{check_on_device, stages_of, DeviceRun, CHECK_ENTRIES, SANFUI};
use super::kernel::{SharedNzArgs, Symbolic};
use super::reference::Prepared;
use super::spec::{Method, Problem_};
use super::spmv::{self, Assembled, VendorInput};
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, Kernel, Launch, RealArg};
use crate::fem::hex8;
use crate::kernels::Defines;
use crate::lifecycle::{drive, warm_only, Driven, PassMethod};
use crate::measure::trace::mark;
use crate::measure::{Pass, Timer};
use crate::real::Real;
use fembench_fem::hexmesh::Neighbours;

/// Reals per element column in shared memory (K^e; the 24 coordinates fit inside).
pub const SLOT: usize = 576;

pub struct SharedNzPlan {
    /// Nodes of a brick along x, y, z (the last brick of an axis may be shorter).
    pub brick: [usize; 3],
    /// The blocks, their element counts and lists; the stride is the kernel's STRIDE.
    pub blocks: SharedPlan,
}

/// Elements along an axis of n nodes that touch a run of b of its nodes (at most).
fn touching(b: usize, n: usize) -> usize {
    (b + 1).min(n - 1)
}

/// The brick with the most nodes whose elements fit in `max_elements` columns (ties: the fewer
/// elements, then the longer x side).
pub fn brick(nodes: [usize; 3], max_elements: usize) -> Result<[usize; 3], String> {
    let mut best: Option<(usize, std::cmp::Reverse<usize>, usize, [usize; 3])> = None;
    for bx in 1..=nodes[0] {
        for by in 1..=nodes[1] {
            for bz in 1..=nodes[2] {
                let elements = touching(bx, nodes[0]) * touching(by, nodes[1]) * touching(bz, nodes[2]);
                if elements > max_elements {
                    break;
                }
                let key = (bx * by * bz, std::cmp::Reverse(elements), bx, [bx, by, bz]);
                if best.is_none_or(|b| key > b) {
                    best = Some(key);
                }
            }
        }
    }
    best.map(|b| b.3).ok_or_else(|| {
        format!(
            "{}: one node's elements ({}) do not fit {max_elements} element columns of shared memory",
            fembench_fem::partition::NO_FIT,
            touching(1, nodes[0]) * touching(1, nodes[1]) * touching(1, nodes[2])
        )
    })
}

/// The plan for `max_elements` element columns of shared memory and `lanes` threads per block.
pub fn plan(m: &BoxMesh, nb: &Neighbours, max_elements: usize, lanes: usize) -> Result<SharedNzPlan, String> {
    let [nx, ny, nz] = m.nodes;
    let b = brick(m.nodes, max_elements)?;
    let counts = [nx.div_ceil(b[0]), ny.div_ceil(b[1]), nz.div_ceil(b[2])];
    let parts = counts.iter().product::<usize>();
    let (ex, ey) = (nx - 1, ny - 1);
    // A brick's node range and the element range touching it, per axis.
    let ranges = |k: usize| {
        let idx = [k % counts[0], (k / counts[0]) % counts[1], k / (counts[0] * counts[1])];
        let mut nodes = [(0, 0); 3];
        let mut elems = [(0, 0); 3];
        for d in 0..3 {
            let (lo, hi) = (idx[d] * b[d], ((idx[d] + 1) * b[d]).min(m.nodes[d]));
            nodes[d] = (lo, hi);
            elems[d] = (lo.saturating_sub(1), hi.min(m.nodes[d] - 1));
        }
        (nodes, elems)
    };
    let stride = (0..parts).map(|k| ranges(k).1.iter().map(|&(lo, hi)| hi - lo).product::<usize>()).max().unwrap_or(0);
    if stride * SLOT >= i32::MAX as usize {
        return Err("shared memory indices overflow".into());
    }
    let per_block: Vec<(Vec<i32>, Vec<i32>, usize, usize)> = (0..parts)
        .into_par_iter()
        .map(|k| {
            let (nodes, elems) = ranges(k);
            let mut es = Vec::new();
            for z in elems[2].0..elems[2].1 {
                for y in elems[1].0..elems[1].1 {
                    for x in elems[0].0..elems[0].1 {
                        es.push((z * ey + y) * ex + x);
                    }
                }
            }
            let owned = |v: u32| {
                let v = v as usize;
                let c = [v % nx, (v / nx) % ny, v / (nx * ny)];
                (0..3).all(|d| c[d] >= nodes[d].0 && c[d] < nodes[d].1)
            };
            let mut uses: Vec<(u32, u32)> = Vec::with_capacity(8 * es.len());
            let mut red: Vec<(u32, u32)> = Vec::new();
            for (le, &e) in es.iter().enumerate() {
                let el = m.element(e);
                for (a, &v) in el.iter().enumerate() {
                    uses.push((v, (a * stride + le) as u32));
                    if owned(v) {
                        reduction_entries(nb, el, (a, v), (le, stride), &mut red);
                    }
                }
            }
            uses.sort_unstable();
            red.sort_unstable();
            let (scatter, fetched) = pack_scatter(&uses, lanes);
            let reduction = pack_reduction(&red, lanes);
            (scatter, reduction, fetched, es.len())
        })
        .collect();
    let node_fetches = per_block.iter().map(|b| b.2).sum();
    let block_elements: Vec<u32> = per_block.iter().map(|b| b.3 as u32).collect();
    let (scatter, reduction): (Vec<Vec<i32>>, Vec<Vec<i32>>) = per_block.into_iter().map(|(s, r, _, _)| (s, r)).unzip();
    Ok(SharedNzPlan {
        brick: b,
        blocks: SharedPlan {
            parts,
            element_calls: block_elements.iter().map(|&c| c as usize).sum(),
            block_elements,
            stride,
            node_fetches,
            scatter: Packed::from_blocks(lanes, scatter)?,
            reduction: Packed::from_blocks(lanes, reduction)?,
        },
    })
}

/// The reduction entries of node `v`'s three rows from local element `le` of a block, where `v`
/// is the element's node `a`: each of the nine entries of each node block (a, b), as (CSR
/// target, shared-memory source).
fn reduction_entries(nb: &Neighbours, el: &[u32], (a, v): (usize, u32), (le, stride): (usize, usize), red: &mut Vec<(u32, u32)>) {
    let (base, end) = (nb.ptr[v as usize] as usize, nb.ptr[v as usize + 1] as usize);
    let nng = end - base;
    for (bl, &w) in el.iter().enumerate() {
        let kk = nb.list[base..end].binary_search(&(w as i32)).expect("an element's nodes are neighbours");
        for mm in 0..3 {
            for n in 0..3 {
                let target = 9 * base + 3 * nng * mm + 3 * kk + n;
                let source = ((3 * a + mm) * 24 + 3 * bl + n) * stride + le;
                red.push((target as u32, source as u32));
            }
        }
    }
}

/// Threads per block: the element phase uses at most `stride` of them (8 to 21 in 48 KB), the
/// lists all of them.
const GROUP: usize = 128;

/// SharedNZ on a device: the CSR symbolic kernel (stage `symbolic`), then one launch of
/// `sanfui_shared_nz` (stage `numeric`, K^e computed inside); the plan is host pre-processing
/// (`setup_s`). The case lifecycle checks a pass on poisoned outputs, as for every method.
pub struct SharedNz;

impl DeviceMethod for SharedNz {
    fn run<T: Real>(&self, ctx: &mut CaseCtx, dev: &dyn Device, case: &Case) -> Result<DeviceRun, CaseError> {
        run::<T>(ctx, dev, case.prep, case.problem)
    }
}

fn run<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, prep: &Prepared, problem: &Problem_) -> Result<DeviceRun, CaseError> {
    let mode = warm_only(ctx.policy, WARM_ONLY)?;
    let s = std::mem::size_of::<T>();
    let limit = dev.info().shared_limit(problem.shared_bytes).map_err(CaseError::Failed)?;
    let t0 = std::time::Instant::now();
    let SharedNzPlan { brick, blocks: plan } = plan(&prep.mesh, &prep.nb, limit / (SLOT * s), GROUP).map_err(|e| {
        let why = format!("SharedNZ with {limit} bytes of shared memory per block: {e}");
        // One node's elements that do not fit the block's shared memory: no brick can run.
        if e.contains(fembench_fem::partition::NO_FIT) {
            CaseError::Infeasible(why)
        } else {
            CaseError::Failed(why)
        }
    })?;
    let setup_s = t0.elapsed().as_secs_f64();
    mark("shared-nz: plan");
    let mut method = OnDevice::<T>::new(ctx, dev, prep, &plan)?;
    mark("shared-nz: uploaded");
    let Driven { staged, verdict: check } = drive(ctx, dev, &mut method, mode)?;
    mark("shared-nz: checked and timed");
    let (row_ptr, col, vals) = (&method.row_ptr, &method.col, &method.vals);
    let a = Assembled { format: Format::CSR, idx_r: row_ptr, idx_c: col, vals, vendor: Some(VendorInput::Csr(row_ptr, col, vals)) };
    let spmv = spmv::measure::<T>(ctx, dev, prep, &a)?;
    Ok(DeviceRun {
        staged,
        check,
        device_bytes: device_bytes(prep, &plan, s) as f64,
        storage_bytes: formats::storage_bytes(Format::CSR, &prep.nb, s) as f64,
        setup_s,
        spmv,
        costs: costs(prep, &plan, s),
        extras: extras(brick, &plan, prep.mesh.num_elements(), s),
        library: None,
    })
}

/// Bytes of the plan's lists on the device.
fn list_bytes(plan: &SharedPlan) -> usize {
    4 * (plan.scatter.data.len() + plan.scatter.ptr.len() + plan.reduction.data.len() + plan.reduction.ptr.len() + plan.parts)
}

/// Bytes of SharedNZ's device buffers: coordinates, derivatives, lists, neighbours and CSR.
fn device_bytes(prep: &Prepared, plan: &SharedPlan, s: usize) -> usize {
    let (nn, nb) = (prep.mesh.num_nodes(), &prep.nb);
    3 * s * nn + 192 * s + list_bytes(plan) + 4 * (nn + 1 + nb.blocks()) + formats::storage_bytes(Format::CSR, nb, s)
}

/// The stage costs: the symbolic stage is CSR's; the numeric kernel reads its lists, each used
/// node's coordinates once per block and the reference derivatives, and writes every value
/// once; its flops are the element calls' and one addition per list source.
fn costs(prep: &Prepared, plan: &SharedPlan, s: usize) -> Vec<(&'static str, f64, f64)> {
    let csr_symbolic = cost::stages(prep, Method::CSR_COLOR, s).into_iter().find(|(n, _)| *n == "symbolic");
    let nnz = 9 * prep.nb.blocks();
    let numeric = Cost {
        bytes: (list_bytes(plan) + plan.node_fetches * 3 * s + 192 * s + nnz * s) as f64,
        flops: plan.element_calls as f64 * cost::ELEMENT_FLOPS + plan.reduction.sources() as f64,
    };
    csr_symbolic.into_iter().chain([("numeric", numeric)]).map(|(n, c)| (n, c.bytes, c.flops)).collect()
}

/// SharedNZ's own columns: its bricks, blocks, shared memory and element calls.
fn extras(brick: [usize; 3], plan: &SharedPlan, ne: usize, s: usize) -> Vec<(&'static str, f64)> {
    vec![
        ("brick_nodes", brick.iter().product::<usize>() as f64),
        ("blocks", plan.parts as f64),
        ("max_block_elements", plan.stride as f64),
        ("shared_bytes", (plan.stride * SLOT * s) as f64),
        ("element_calls_per_element", plan.element_calls as f64 / ne.max(1) as f64),
        ("reduction_padding", plan.reduction.padding()),
    ]
}

/// SharedNZ's buffers and kernels on the device, made outside any timer.
struct OnDevice<'a, T> {
    dev: &'a dyn Device,
    prep: &'a Prepared,
    parts: usize,
    /// The kernel's inputs in its argument order: coordinates, scatter lists and offsets,
    /// reduction lists and offsets, block element counts, reference derivatives.
    inputs: [Buffer; 7],
    /// The symbolic kernel's input: node offsets and neighbours.
    neighbours: (Buffer, Buffer),
    row_ptr: Buffer,
    col: Buffer,
    vals: Buffer,
    symbolic: Kernel,
    kernel: Kernel,
    real: PhantomData<T>,
}

impl<'a, T: Real> OnDevice<'a, T> {
    fn new(ctx: &mut CaseCtx, dev: &'a dyn Device, prep: &'a Prepared, plan: &SharedPlan) -> Result<Self, CaseError> {
        let s = std::mem::size_of::<T>();
        let (m, nb) = (&prep.mesh, &prep.nb);
        let nn = m.num_nodes();
        let real = |v: &[f64]| v.iter().map(|&a| T::from_f64(a)).collect::<Vec<T>>();
        let xyz: Vec<f64> = (0..nn as u32).flat_map(|v| m.coords(v)).collect();
        let inputs = [
            dev.upload_slice(&real(&xyz))?,
            dev.upload_slice(&plan.scatter.data)?,
            dev.upload_slice(&plan.scatter.ptr)?,
            dev.upload_slice(&plan.reduction.data)?,
            dev.upload_slice(&plan.reduction.ptr)?,
            dev.upload_slice(&plan.block_elements)?,
            dev.upload_slice(&real(&hex8::derivative_table()))?,
        ];
        let defines = Defines::for_precision(T::PRECISION).with("FORMAT", Format::CSR.code()).with("STRIDE", plan.stride);
        let nnz = 9 * nb.blocks();
        Ok(OnDevice {
            dev,
            prep,
            parts: plan.parts,
            inputs,
            neighbours: (dev.upload_slice(&nb.ptr)?, dev.upload_slice(&nb.list)?),
            row_ptr: dev.alloc(4 * (3 * nn + 1))?,
            col: dev.alloc(4 * nnz)?,
            vals: dev.alloc(s * nnz)?,
            symbolic: ctx.modules.kernel_for::<Symbolic>(dev, &SANFUI, &defines)?,
            kernel: ctx.modules.kernel_for::<SharedNzArgs>(dev, &SANFUI, &defines)?,
            real: PhantomData,
        })
    }

    fn symbolic(&self) -> DeviceResult<()> {
        let nn = self.prep.mesh.num_nodes();
        let (nptr, nbr) = &self.neighbours;
        let args = Symbolic { nptr, nbr, idx_r: &self.row_ptr, idx_c: &self.col, nn: nn as i64 };
        self.dev.launch_with(&self.symbolic, Launch::cover(nn.max(1), 256), &args)
    }

    fn numeric(&self) -> DeviceResult<()> {
        let [xyz, scat, scat_ptr, red, red_ptr, counts, dn] = &self.inputs;
        let (lambda, mu) = (RealArg::new(T::PRECISION, self.prep.lambda), RealArg::new(T::PRECISION, self.prep.mu));
        let args = SharedNzArgs { xyz, scat, scat_ptr, red, red_ptr, block_elements: counts, dn, lambda, mu, vals: &self.vals };
        self.dev.launch_with(&self.kernel, Launch { groups: self.parts, group_size: GROUP }, &args)
    }
}

impl<T: Real> PassMethod for OnDevice<'_, T> {
    type Verdict = formats::Check;
    fn stages(&self) -> Vec<(&'static str, Timer)> {
        stages_of(Method::SHARED_NZ)
    }
    fn decisive(&self) -> &'static str {
        "numeric"
    }
    fn outputs(&self) -> Vec<&Buffer> {
        vec![&self.row_ptr, &self.col, &self.vals]
    }
    fn pass(&mut self, pass: &mut Pass) -> Result<(), CaseError> {
        pass.device(self.dev, "symbolic", &mut || self.symbolic())?;
        pass.device(self.dev, "numeric", &mut || self.numeric())?;
        Ok(())
    }
    fn verify(&mut self) -> Result<formats::Check, CaseError> {
        Ok(check_on_device::<T>(self.dev, Format::CSR, (Some(&self.row_ptr), &self.col, &self.vals), self.prep, CHECK_ENTRIES)?)
    }
}

/// The plan run on the host as the kernel runs it (the arithmetic order aside), for tests of
/// the plan apart from any device: each block's scatter lists put the coordinates `xyz(v)` of
/// its nodes into their element columns, `element` makes K^e (row-major 24 x 24) from an
/// element's 8 node coordinates, and the reduction lists write `vals`.
pub fn run_on_host(plan: &SharedPlan, xyz: &dyn Fn(usize) -> [f64; 3], element: &dyn Fn(&[[f64; 3]; 8]) -> [f64; 576], vals: &mut [f64]) {
    let (st, lanes) = (plan.stride, plan.scatter.lanes);
    // Every block's shared memory: coordinates scattered in, then the elements over them.
    let shared: Vec<Vec<f64>> = (0..plan.parts)
        .map(|k| {
            let mut sm = vec![f64::NAN; st * SLOT];
            let (p0, p1) = (plan.scatter.ptr[k] as usize, plan.scatter.ptr[k + 1] as usize);
            for lane in 0..lanes {
                let mut t = [f64::NAN; 3];
                for &c in plan.scatter.data[(p0 + lane).min(p1)..p1].iter().step_by(lanes) {
                    if c > 0 {
                        t = xyz(c as usize - 1);
                    } else if c < 0 {
                        let s = (-c - 1) as usize;
                        for (d, v) in t.iter().enumerate() {
                            sm[s + 8 * d * st] = *v;
                        }
                    }
                }
            }
            for le in 0..plan.block_elements[k] as usize {
                let x: [[f64; 3]; 8] = std::array::from_fn(|a| std::array::from_fn(|d| sm[(8 * d + a) * st + le]));
                for (mm, v) in element(&x).iter().enumerate() {
                    sm[mm * st + le] = *v;
                }
            }
            sm
        })
        .collect();
    run_reduction(&plan.reduction, &|k, i| shared[k][i], vals);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::hex8;
    use crate::sanfui::reference::Prepared;

    /// In 48 KB: one node per block in f64 (its 8 elements), 1 x 2 x 2 in f32 (18 elements);
    /// a brick never spans more elements than fit; too little memory is refused.
    #[test]
    fn bricks_fit_the_shared_memory() {
        let n = [200, 50, 50];
        assert_eq!(brick(n, 49152 / (8 * SLOT)).unwrap(), [1, 1, 1]);
        let b = brick(n, 49152 / (4 * SLOT)).unwrap();
        assert_eq!(b.iter().product::<usize>(), 4);
        assert_eq!((b[0] + 1) * (b[1] + 1) * (b[2] + 1), 18);
        assert_eq!(brick([3, 3, 3], 8).unwrap(), [3, 3, 3]);
        assert!(brick(n, 7).unwrap_err().contains("8"));
    }

    /// Played on the host, the plan writes every CSR value of the box exactly once and equals
    /// the f64 reference, for one-node bricks and larger ones (border bricks included); each
    /// node's coordinates are read once per block that uses them.
    #[test]
    fn the_plan_assembles_the_reference_matrix() {
        let prep = Prepared::new([7, 5, 4], 1e-3, 200e9, 0.3);
        let m = &prep.mesh;
        for (max_elements, lanes) in [(8, 32), (18, 64), (30, 16), (1000, 128)] {
            let plan = plan(m, &prep.nb, max_elements, lanes).unwrap().blocks;
            assert!(plan.stride <= max_elements);
            assert_eq!(plan.block_elements.len(), plan.parts);
            assert!(plan.element_calls >= m.num_elements());
            let mut vals = vec![f64::NAN; prep.reference.len()];
            let xyz = |v: usize| m.coords(v as u32);
            run_on_host(&plan, &xyz, &|x| hex8::stiffness(x, prep.lambda, prep.mu, false), &mut vals);
            for (i, (g, r)) in vals.iter().zip(&prep.reference).enumerate() {
                assert!((g - r).abs() <= 1e-12 * prep.scale[i], "max_elements {max_elements}: value {i}: {g} against {r}");
            }
            // Each value is the target of exactly one list.
            let targets = plan.reduction.data.iter().filter(|&&c| c < 0).count();
            assert_eq!(targets, vals.len(), "max_elements {max_elements}");
        }
        // One node per block: every node owns a block, and an interior node's 8 elements are computed in it.
        let one = plan(m, &prep.nb, 8, 32).unwrap();
        assert_eq!((one.brick, one.blocks.parts, one.blocks.stride), ([1, 1, 1], m.num_nodes(), 8));
    }
}
