//! The methods by non-zero: the paper's GlobalNZ (4.2), SharedNZ (4.3) and LocalNZ (4.4), and
//! SharedAtomic beyond it, each with the "dummy" element subroutine as a second variant. Their
//! host plans (METIS partitions, packed lists) are in `crate::cecka::plans` and `plans`; each writes the
//! CSR values and the right-hand side as one array ([`SplitOut`]).

use std::time::Instant;

use rayon::prelude::*;

use super::plans;
use super::plans::Packed;
use crate::benchmark::{CaseCtx, CaseError};
use crate::cecka::cost::element_flops;
use crate::cecka::gpu::{shared_limit, upload_nodal, Nodal, SplitOut};
use crate::cecka::kernel::CECKA;
use crate::cecka::kernel::{GlobalElements, Local, Reduce, Shared, SharedAtomic as SharedAtomicArgs};
use crate::cecka::method::{Ahead, Assembly, Case, GpuMethod, Role};
use crate::cecka::problem::checked::Cost;
use crate::cecka::problem::prepared::{cached, Prepared, Timed};
use crate::cecka::problem::system::SOURCE_F;
use crate::cecka::spec::{Family, Point, Problem_};
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, Kernel, Launch, RealArg};
use crate::kernels::Defines;
use crate::real::Real;

/// 4.2: METIS element partitions with shared-memory prefetch, element data to global memory,
/// then the LPT-packed reduction array.
pub(crate) struct GlobalNz;
/// 4.3: METIS node partitions, scatter array into shared memory, element data and reduction in
/// shared memory; fails where no partition fits the shared memory.
pub(crate) struct SharedNz;
/// 4.4: one thread per non-zero, the element subroutine recomputed for every contribution.
pub(crate) struct LocalNz;
/// Beyond the paper: SharedNZ's node partitions, element entries added by shared-memory
/// atomics into the block's own rows (16-bit slots), each target written once.
pub(crate) struct SharedAtomic;

/// GlobalNZ's plan for `limit` bytes of shared memory and reals of `s` bytes.
pub(crate) fn global_plan_for(prep: &Prepared, problem: &Problem_, limit: usize, s: usize) -> Timed<plans::GlobalPlan> {
    let (gs, epb, tpb) =
        (problem.group_size(Family::GlobalNz), problem.elements_per_block(Family::GlobalNz), problem.targets_per_block(Family::GlobalNz));
    let max_nodes = limit / (3 * s);
    cached(&prep.global, [epb, max_nodes, gs, tpb], || plans::global_plan(&prep.problem, epb, max_nodes, gs, tpb))
}

/// SharedNZ's plan for `limit` bytes of shared memory and reals of `s` bytes.
pub(crate) fn shared_plan_for(prep: &Prepared, problem: &Problem_, limit: usize, s: usize) -> Timed<plans::SharedPlan> {
    let gs = problem.group_size(Family::SharedNz);
    let max_elements = limit / (plans::shared_slot(prep.problem.en()) * s);
    cached(&prep.shared, [max_elements, gs], || plans::shared_plan(&prep.problem, max_elements, gs))
}

/// SharedAtomic's plan for `limit` bytes of shared memory and reals of `s` bytes, with the
/// seconds its element coloring took.
pub(crate) fn shared_atomic_plan_for(
    prep: &Prepared,
    problem: &Problem_,
    limit: usize,
    s: usize,
) -> Result<(Timed<plans::SharedAtomicPlan>, f64), CaseError> {
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
        plans::shared_atomic_plan(&prep.problem, limit / s, epb, &color)
    });
    Ok((plan, color_secs))
}

/// LocalNZ's plan.
pub(crate) fn local_plan_for(prep: &Prepared, problem: &Problem_) -> Timed<Packed> {
    let (gs, tpb) = (problem.group_size(Family::LocalNz), problem.targets_per_block(Family::LocalNz));
    cached(&prep.local, [gs, tpb], || plans::local_plan(&prep.problem, gs, tpb))
}

/// The kernel defines every method by non-zero starts from.
fn defines<T: Real>(prep: &Prepared, point: &Point) -> Defines {
    Defines::for_precision(T::PRECISION).with("EN", prep.problem.en()).with("DUMMY", point.method.dummy() as u8)
}

/// A plan made (or why not, in the method's words), and the seconds it took when first made. A
/// mesh that no partition fits into the shared memory the experiment names is infeasible (the
/// paper's Sec. 6.3 finding), not a failure; any other planning error is a failure.
fn made<V>(plan: &(Result<V, String>, f64), what: impl FnOnce(&str) -> String) -> Result<(&V, f64), CaseError> {
    plan.0.as_ref().map(|v| (v, plan.1)).map_err(|e| match e.contains(fembench_fem::partition::NO_FIT) {
        true => CaseError::Infeasible(what(e)),
        false => CaseError::Failed(what(e)),
    })
}

/// Seconds since `start`, plus the plan's.
fn setup(start: Instant, plan_s: f64) -> f64 {
    start.elapsed().as_secs_f64() + plan_s
}

/// What every case by non-zero holds: the nodal data, the combined output, f, and its cost.
struct Common {
    nodal: Nodal,
    out: SplitOut,
    f: RealArg,
    cost: Cost,
}

impl Common {
    fn new<T: Real>(dev: &dyn Device, prep: &Prepared) -> Result<Self, CaseError> {
        Ok(Common {
            nodal: upload_nodal::<T>(dev, &prep.problem)?,
            out: SplitOut::poisoned::<T>(dev, &prep.problem)?,
            f: RealArg::new(T::PRECISION, SOURCE_F),
            cost: Cost { bytes: 0.0, flops: 0.0, memory: 0.0, setup_s: 0.0, extras: vec![] },
        })
    }
}

/// The [`Assembly`] of a state that holds a [`Common`] and launches through `launch`.
macro_rules! nz_assembly {
    ($state:ty) => {
        impl<T: Real> Assembly<T> for $state {
            fn enqueue(&self, dev: &dyn Device) -> DeviceResult<()> {
                self.launch(dev)
            }
            fn outputs(&self) -> Vec<&Buffer> {
                vec![&self.c.out.out]
            }
            fn read(&self, dev: &dyn Device) -> Result<(Vec<T>, Vec<T>), CaseError> {
                self.c.out.read::<T>(dev)
            }
            fn cost(&self) -> Cost {
                self.c.cost.clone()
            }
        }
    };
}

impl GpuMethod for GlobalNz {
    const NAMES: &'static [&'static str] = &["global-nz", "global-nz-dummy"];
    const ROLE: Role = Role::Paper;
    fn plan_ahead(&self, a: &Ahead) {
        drop(global_plan_for(a.prep, a.problem, a.limit, a.s));
    }
    fn prepare<T: Real>(&self, ctx: &mut CaseCtx, case: &Case) -> Result<Box<dyn Assembly<T>>, CaseError> {
        Ok(Box::new(GlobalState::prepare::<T>(ctx, case)?))
    }
}

/// GlobalNZ on its GPU: the blocks' node lists and local connectivity, the element data, the
/// reduction array.
struct GlobalState {
    c: Common,
    node_ptr: Buffer,
    nodes: Buffer,
    elem_ptr: Buffer,
    lconn: Buffer,
    red: Buffer,
    red_ptr: Buffer,
    element_data: Buffer,
    elements: Kernel,
    reduce: Kernel,
    elements_launch: Launch,
    reduce_launch: Launch,
    ne: usize,
}
nz_assembly!(GlobalState);

impl GlobalState {
    fn prepare<T: Real>(ctx: &mut CaseCtx, case: &Case) -> Result<Self, CaseError> {
        let Case { dev, problem, prep, point } = *case;
        let p = &prep.problem;
        let (en, ne, s) = (p.en(), p.ne(), std::mem::size_of::<T>());
        let ee = plans::element_entries(en);
        let gs = problem.group_size(Family::GlobalNz);
        let cached_plan = global_plan_for(prep, problem, shared_limit(dev, problem)?, s);
        let (plan, plan_s) = made(&cached_plan, |e| format!("GlobalNZ: {e}"))?;
        let start = Instant::now();
        let mut c = Common::new::<T>(dev, prep)?;
        let (node_ptr, nodes, elem_ptr) =
            (dev.upload_slice(&plan.node_ptr)?, dev.upload_slice(&plan.nodes)?, dev.upload_slice(&plan.elem_ptr)?);
        let (lconn, red, red_ptr) =
            (dev.upload_slice(&plan.local_conn)?, dev.upload_slice(&plan.reduction.data)?, dev.upload_slice(&plan.reduction.ptr)?);
        let element_data = dev.alloc(ne * ee * s)?;
        let defines = defines::<T>(prep, point).with("NK_MAX", plan.max_nodes.max(1));
        let elements = ctx.modules.kernel_for::<GlobalElements>(dev, &CECKA, &defines)?;
        let reduce = ctx.modules.kernel_for::<Reduce>(dev, &CECKA, &Defines::for_precision(T::PRECISION))?;
        let fetched = plan.nodes.len();
        let sources = plan.reduction.sources();
        let bytes = (fetched * 4 + fetched * 3 * s + en * ne * 4 + 2 * (plan.parts + 1) * 4)
            + ne * ee * s
            + plan.reduction.data.len() * 4
            + sources * s
            + plans::num_targets(p) * s;
        let index_words = plan.node_ptr.len()
            + plan.nodes.len()
            + plan.elem_ptr.len()
            + plan.local_conn.len()
            + plan.reduction.data.len()
            + plan.reduction.ptr.len();
        c.cost = Cost {
            bytes: bytes as f64,
            flops: ne as f64 * element_flops(en as f64, point.method.dummy()) + sources as f64,
            memory: (c.nodal.bytes + index_words * 4 + (ne * ee + plans::num_targets(p)) * s) as f64,
            setup_s: setup(start, plan_s),
            extras: vec![
                ("blocks", plan.parts as f64),
                ("max_block_nodes", plan.max_nodes as f64),
                ("reduction_padding", plan.reduction.padding()),
            ],
        };
        Ok(GlobalState {
            c,
            node_ptr,
            nodes,
            elem_ptr,
            lconn,
            red,
            red_ptr,
            element_data,
            elements,
            reduce,
            elements_launch: Launch { groups: plan.parts, group_size: gs },
            reduce_launch: Launch { groups: plan.reduction.blocks(), group_size: gs },
            ne,
        })
    }

    fn launch(&self, dev: &dyn Device) -> DeviceResult<()> {
        let n = &self.c.nodal;
        let args = GlobalElements {
            x: &n.x,
            y: &n.y,
            g: &n.g,
            node_ptr: &self.node_ptr,
            nodes: &self.nodes,
            elem_ptr: &self.elem_ptr,
            lconn: &self.lconn,
            refs: &n.refs,
            element_data: &self.element_data,
            f: self.c.f,
            ne: self.ne as i32,
        };
        dev.launch_with(&self.elements, self.elements_launch, &args)?;
        let reduce = Reduce { red: &self.red, red_ptr: &self.red_ptr, element_data: &self.element_data, out: &self.c.out.out };
        dev.launch_with(&self.reduce, self.reduce_launch, &reduce)
    }
}

impl GpuMethod for SharedNz {
    const NAMES: &'static [&'static str] = &["shared-nz", "shared-nz-dummy"];
    const ROLE: Role = Role::Paper;
    fn plan_ahead(&self, a: &Ahead) {
        drop(shared_plan_for(a.prep, a.problem, a.limit, a.s));
    }
    fn prepare<T: Real>(&self, ctx: &mut CaseCtx, case: &Case) -> Result<Box<dyn Assembly<T>>, CaseError> {
        Ok(Box::new(SharedState::prepare::<T>(ctx, case)?))
    }
}

/// SharedNZ on its GPU: the scatter and reduction arrays, each block's element count.
struct SharedState {
    c: Common,
    scat: Buffer,
    scat_ptr: Buffer,
    red: Buffer,
    red_ptr: Buffer,
    counts: Buffer,
    kernel: Kernel,
    launch: Launch,
}
nz_assembly!(SharedState);

impl SharedState {
    fn prepare<T: Real>(ctx: &mut CaseCtx, case: &Case) -> Result<Self, CaseError> {
        let Case { dev, problem, prep, point } = *case;
        let p = &prep.problem;
        let (en, s) = (p.en(), std::mem::size_of::<T>());
        let gs = problem.group_size(Family::SharedNz);
        let limit = shared_limit(dev, problem)?;
        let cached_plan = shared_plan_for(prep, problem, limit, s);
        let (plan, plan_s) = made(&cached_plan, |e| format!("SharedNZ with {limit} bytes of shared memory per block: {e}"))?;
        let start = Instant::now();
        let mut c = Common::new::<T>(dev, prep)?;
        let (scat, scat_ptr) = (dev.upload_slice(&plan.scatter.data)?, dev.upload_slice(&plan.scatter.ptr)?);
        let (red, red_ptr, counts) =
            (dev.upload_slice(&plan.reduction.data)?, dev.upload_slice(&plan.reduction.ptr)?, dev.upload_slice(&plan.block_elements)?);
        let kernel = ctx.modules.kernel_for::<Shared>(dev, &CECKA, &defines::<T>(prep, point).with("STRIDE", plan.stride))?;
        let sources = plan.reduction.sources();
        let words = plan.scatter.ptr.len() + plan.reduction.ptr.len() + plan.block_elements.len();
        let bytes =
            plan.scatter.data.len() * 4 + plan.node_fetches * 3 * s + plan.reduction.data.len() * 4 + words * 4 + plans::num_targets(p) * s;
        let memory = c.nodal.bytes + (plan.scatter.data.len() + plan.reduction.data.len() + words) * 4 + plans::num_targets(p) * s;
        c.cost = Cost {
            bytes: bytes as f64,
            flops: plan.element_calls as f64 * element_flops(en as f64, point.method.dummy()) + sources as f64,
            memory: memory as f64,
            setup_s: setup(start, plan_s),
            extras: vec![
                ("blocks", plan.parts as f64),
                ("max_block_elements", plan.stride as f64),
                ("shared_bytes", (plan.stride * plans::shared_slot(en) * s) as f64),
                ("element_calls_per_element", plan.element_calls as f64 / p.ne() as f64),
                ("reduction_padding", plan.reduction.padding()),
            ],
        };
        Ok(SharedState { c, scat, scat_ptr, red, red_ptr, counts, kernel, launch: Launch { groups: plan.parts, group_size: gs } })
    }

    fn launch(&self, dev: &dyn Device) -> DeviceResult<()> {
        let n = &self.c.nodal;
        let args = Shared {
            x: &n.x,
            y: &n.y,
            g: &n.g,
            scat: &self.scat,
            scat_ptr: &self.scat_ptr,
            red: &self.red,
            red_ptr: &self.red_ptr,
            block_elements: &self.counts,
            refs: &n.refs,
            out: &self.c.out.out,
            f: self.c.f,
        };
        dev.launch_with(&self.kernel, self.launch, &args)
    }
}

impl GpuMethod for LocalNz {
    const NAMES: &'static [&'static str] = &["local-nz", "local-nz-dummy"];
    const ROLE: Role = Role::Paper;
    fn plan_ahead(&self, a: &Ahead) {
        drop(local_plan_for(a.prep, a.problem));
    }
    fn prepare<T: Real>(&self, ctx: &mut CaseCtx, case: &Case) -> Result<Box<dyn Assembly<T>>, CaseError> {
        Ok(Box::new(LocalState::prepare::<T>(ctx, case)?))
    }
}

/// LocalNZ on its GPU: the connectivity and the packed lists of contributions.
struct LocalState {
    c: Common,
    conn: Buffer,
    lst: Buffer,
    lst_ptr: Buffer,
    kernel: Kernel,
    launch: Launch,
    ne: usize,
}
nz_assembly!(LocalState);

impl LocalState {
    fn prepare<T: Real>(ctx: &mut CaseCtx, case: &Case) -> Result<Self, CaseError> {
        let Case { dev, problem, prep, point } = *case;
        let p = &prep.problem;
        let (en, ne, s) = (p.en(), p.ne(), std::mem::size_of::<T>());
        let gs = problem.group_size(Family::LocalNz);
        let cached_plan = local_plan_for(prep, problem);
        let (plan, plan_s) = made(&cached_plan, |e| format!("LocalNZ: {e}"))?;
        let start = Instant::now();
        let conn_h: Vec<u32> = (0..en * ne).into_par_iter().map(|idx| p.mesh.element(idx % ne)[idx / ne]).collect();
        let mut c = Common::new::<T>(dev, prep)?;
        let (conn, lst, lst_ptr) = (dev.upload_slice(&conn_h)?, dev.upload_slice(&plan.data)?, dev.upload_slice(&plan.ptr)?);
        let kernel = ctx.modules.kernel_for::<Local>(dev, &CECKA, &defines::<T>(prep, point))?;
        let calls = plan.sources();
        // Compulsory traffic: the lists once, the connectivity and the nodal data once, every
        // output written once. Each source's re-reads of its element's nodes hit in cache and
        // are not counted (counting them gave more GB/s than the device's copy bandwidth).
        let bytes = (plan.data.len() + plan.ptr.len()) * 4 + en * ne * 4 + 3 * p.mesh.num_nodes() * s + plans::num_targets(p) * s;
        let memory = c.nodal.bytes + (conn_h.len() + plan.data.len() + plan.ptr.len()) * 4 + plans::num_targets(p) * s;
        c.cost = Cost {
            bytes: bytes as f64,
            flops: calls as f64 * (element_flops(en as f64, point.method.dummy()) + 1.0),
            memory: memory as f64,
            setup_s: setup(start, plan_s),
            extras: vec![("element_calls_per_element", calls as f64 / ne as f64)],
        };
        Ok(LocalState { c, conn, lst, lst_ptr, kernel, launch: Launch { groups: plan.blocks(), group_size: gs }, ne })
    }

    fn launch(&self, dev: &dyn Device) -> DeviceResult<()> {
        let n = &self.c.nodal;
        let (lst, lst_ptr, out) = (&self.lst, &self.lst_ptr, &self.c.out.out);
        let args = Local { x: &n.x, y: &n.y, g: &n.g, conn: &self.conn, lst, lst_ptr, refs: &n.refs, out, f: self.c.f, ne: self.ne as i32 };
        dev.launch_with(&self.kernel, self.launch, &args)
    }
}

impl GpuMethod for SharedAtomic {
    const NAMES: &'static [&'static str] = &["shared-atomic", "shared-atomic-dummy"];
    const ROLE: Role = Role::Beyond;
    fn plan_ahead(&self, a: &Ahead) {
        drop(shared_atomic_plan_for(a.prep, a.problem, a.limit, a.s));
    }
    fn prepare<T: Real>(&self, ctx: &mut CaseCtx, case: &Case) -> Result<Box<dyn Assembly<T>>, CaseError> {
        Ok(Box::new(SharedAtomicState::prepare::<T>(ctx, case)?))
    }
}

/// SharedAtomic on its GPU: the blocks' node lists, their 16-bit local connectivity and slots,
/// and their targets.
struct SharedAtomicState {
    c: Common,
    /// node_ptr, nodes, node_targets, call_ptr, lconn, lslot, slot_ptr, targets.
    arrays: [Buffer; 8],
    kernel: Kernel,
    launch: Launch,
    calls: usize,
}
nz_assembly!(SharedAtomicState);

impl SharedAtomicState {
    fn prepare<T: Real>(ctx: &mut CaseCtx, case: &Case) -> Result<Self, CaseError> {
        let Case { dev, problem, prep, point } = *case;
        let p = &prep.problem;
        let (en, s) = (p.en(), std::mem::size_of::<T>());
        let gs = problem.group_size(Family::SharedAtomic);
        let limit = shared_limit(dev, problem)?;
        let (cached_plan, color_secs) = shared_atomic_plan_for(prep, problem, limit, s)?;
        let (plan, plan_s) = made(&cached_plan, |e| format!("SharedAtomic with {limit} bytes of shared memory per block: {e}"))?;
        let start = Instant::now();
        let calls = plan.calls();
        let mut c = Common::new::<T>(dev, prep)?;
        let arrays = [
            dev.upload_slice(&plan.node_ptr)?,
            dev.upload_slice(&plan.nodes)?,
            dev.upload_slice(&plan.node_targets)?,
            dev.upload_slice(&plan.call_ptr)?,
            dev.upload_slice(&plan.local_conn)?,
            dev.upload_slice(&plan.local_slot)?,
            dev.upload_slice(&plan.slot_ptr)?,
            dev.upload_slice(&plan.targets)?,
        ];
        let defines = defines::<T>(prep, point)
            .with("NB_MAX", plan.max_nodes.max(1))
            .with("TK_MAX", plan.max_slots.max(1))
            .with("WG", gs)
            .with("MIN_BLOCKS", problem.min_blocks_per_sm.unwrap_or(0))
            .with("SA_BATCH", problem.load_batch.unwrap_or(8).clamp(1, 16));
        let kernel = ctx.modules.kernel_for::<SharedAtomicArgs>(dev, &CECKA, &defines)?;
        let fetched = plan.nodes.len();
        let index_bytes =
            (plan.node_ptr.len() + plan.call_ptr.len() + plan.slot_ptr.len() + fetched + plan.node_targets.len() + plan.targets.len()) * 4
                + (plan.local_conn.len() + plan.local_slot.len()) * 2;
        c.cost = Cost {
            bytes: (index_bytes + fetched * 3 * s + plans::num_targets(p) * s) as f64,
            // Shared-memory atomic additions are memory operations, not counted as flops.
            flops: calls as f64 * element_flops(en as f64, point.method.dummy()),
            memory: (c.nodal.bytes + index_bytes + plans::num_targets(p) * s) as f64,
            setup_s: setup(start, plan_s + color_secs),
            extras: vec![
                ("blocks", plan.parts as f64),
                ("shared_bytes", ((plan.max_slots + 5 * plan.max_nodes) * s) as f64),
                ("element_calls_per_element", calls as f64 / p.ne() as f64),
            ],
        };
        Ok(SharedAtomicState { c, arrays, kernel, launch: Launch { groups: plan.parts, group_size: gs }, calls })
    }

    fn launch(&self, dev: &dyn Device) -> DeviceResult<()> {
        let n = &self.c.nodal;
        let [node_ptr, nodes, node_targets, call_ptr, lconn, lslot, slot_ptr, targets] = &self.arrays;
        let args = SharedAtomicArgs {
            x: &n.x,
            y: &n.y,
            g: &n.g,
            node_ptr,
            nodes,
            node_targets,
            call_ptr,
            lconn,
            lslot,
            slot_ptr,
            targets,
            refs: &n.refs,
            out: &self.c.out.out,
            f: self.c.f,
            calls: self.calls as i32,
        };
        dev.launch_with(&self.kernel, self.launch, &args)
    }
}
