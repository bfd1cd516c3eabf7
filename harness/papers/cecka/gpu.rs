//! The GPU methods: one launch sequence per method family, written once against the `Device`
//! trait, each checked against the f64 reference.

use std::time::Instant;

use rayon::prelude::*;

use super::cost::{cost, element_flops};
use super::kernel::CECKA;
use super::kernel::{Elements, GlobalElements, Local, Reduce, Shared, SharedAtomic, Zero};
use super::nz_plans;
use super::plans::{global_plan_for, local_plan_for, shared_atomic_plan_for, shared_plan_for};
use super::prepared::Prepared;
use super::spec::{Family, Point, Problem_};
use super::system::{Problem, SOURCE_F};
use crate::benchmark::{CaseCtx, CaseError, Target};
use crate::device::{Device, DeviceExt, Launch, RealArg};
use crate::kernels::Defines;
use crate::lifecycle::drive_body;
use crate::measure::{Gate, Timing};
use crate::real::Real;

/// What one GPU method's run leaves for verification and the row.
pub(crate) struct GpuRun<T> {
    pub(crate) timings: Vec<Timing>,
    /// The outputs of the checked repetition (run on poisoned outputs before the timed ones).
    pub(crate) vals: Vec<T>,
    pub(crate) rhs: Vec<T>,
    pub(crate) bytes: f64,
    pub(crate) flops: f64,
    pub(crate) memory: f64,
    /// Host seconds of the method's set-up for this case: its plan (partitions, packing,
    /// coloring; the time it took when first made) and the uploads of its arrays.
    pub(crate) setup_s: f64,
    pub(crate) extras: Vec<(&'static str, f64)>,
}

pub(crate) fn gpu_of<'a>(ctx: &CaseCtx<'a>) -> Result<&'a dyn Device, CaseError> {
    match ctx.target {
        Target::Gpu(dev) => Ok(dev),
        Target::Cpu => Err(CaseError::Failed("not a GPU target".into())),
    }
}

/// The case lifecycle of a method whose pass is one device body ([`drive_body`]): `outputs`
/// poisoned (NaN), one checked run, `read` of its outputs, then the body timed in every mode
/// the policy asks for.
pub(crate) fn time_modes<V>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    outputs: &[&crate::device::Buffer],
    body: &mut dyn FnMut() -> crate::device::DeviceResult<()>,
    read: &mut dyn FnMut() -> Result<V, CaseError>,
) -> Result<(Vec<Timing>, V), CaseError> {
    drive_body(ctx, dev, Gate::Closed, outputs, body, read)
}

/// The checked pass's outputs of a method that writes the nonzeros and the right-hand side as
/// one array (`out`, [`split_output`]).
pub(crate) fn read_split<'a, T: Real>(
    dev: &'a dyn Device,
    out: &'a crate::device::Buffer,
    p: &'a Problem,
) -> impl FnMut() -> Result<(Vec<T>, Vec<T>), CaseError> + 'a {
    move || Ok(split_output::<T>(dev, out, p)?)
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

pub(crate) fn to_real<T: Real>(v: &[f64]) -> Vec<T> {
    v.par_iter().map(|&x| T::from_f64(x)).collect()
}

/// The shared memory a block may use: the device's limit, or less if the experiment asks.
pub(crate) fn shared_limit(dev: &dyn Device, problem: &Problem_) -> Result<usize, CaseError> {
    dev.info().shared_limit(problem.shared_bytes).map_err(CaseError::Failed)
}

/// Nodal data every NZ method reads: coordinates and prescribed values.
pub(crate) struct Nodal {
    pub(crate) x: crate::device::Buffer,
    pub(crate) y: crate::device::Buffer,
    pub(crate) g: crate::device::Buffer,
    pub(crate) refs: crate::device::Buffer,
    pub(crate) bytes: usize,
}

pub(crate) fn upload_nodal<T: Real>(dev: &dyn Device, p: &Problem) -> Result<Nodal, CaseError> {
    let refs = to_real::<T>(&p.refs.packed());
    Ok(Nodal {
        x: dev.upload_slice(&to_real::<T>(&p.mesh.x))?,
        y: dev.upload_slice(&to_real::<T>(&p.mesh.y))?,
        g: dev.upload_slice(&to_real::<T>(&p.g))?,
        bytes: (3 * p.mesh.num_nodes() + refs.len()) * std::mem::size_of::<T>(),
        refs: dev.upload_slice(&refs)?,
    })
}

/// The combined output of the NZ methods: CSR values, then the right-hand side.
pub(crate) fn split_output<T: Real>(dev: &dyn Device, out: &crate::device::Buffer, p: &Problem) -> Result<(Vec<T>, Vec<T>), CaseError> {
    let mut all = dev.download_vec::<T>(out, nz_plans::num_targets(p))?;
    let rhs = all.split_off(p.nnz());
    Ok((all, rhs))
}

pub(crate) fn run_elem<T: Real>(ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point) -> Result<GpuRun<T>, CaseError> {
    let dev = gpu_of(ctx)?;
    let p = &prep.problem;
    let (en, ne) = (p.en(), p.ne());
    let s = std::mem::size_of::<T>();
    let colored = point.method.colored();
    // Element order on the device: natural for atomics, grouped by color for ElemColor.
    let setup_start = Instant::now();
    let (colors, color_secs) = if colored {
        let (c, t) = prep.colors(point.colors)?;
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
    let conn = soa_u32(en, &|a, e| p.mesh.element(e)[a]);
    let slots: Vec<i32> = soa_u32(en * en, &|k, e| p.slots[e * en * en + k] as u32).into_iter().map(|v| v as i32).collect();
    let nodal = upload_nodal::<T>(dev, p)?;
    let conn_b = dev.upload_slice(&conn)?;
    let dof = dev.upload_slice(&p.dof)?;
    let slots_b = dev.upload_slice(&slots)?;
    let nan = vec![T::nan(); p.nnz().max(p.n_free)];
    let vals = dev.upload_slice(&nan[..p.nnz()])?;
    let rhs = dev.upload_slice(&nan[..p.n_free])?;
    let memory = (conn.len() + slots.len() + p.mesh.num_nodes()) * 4 + nodal.bytes + (p.nnz() + p.n_free) * s;
    drop((conn, slots, nan));
    let setup_s = setup_start.elapsed().as_secs_f64() + color_secs;

    let gs = problem.group_size(Family::Elem);
    let defines =
        Defines::for_precision(T::PRECISION).with("EN", en).with("ATOMIC", (!colored) as u8).with("DUMMY", point.method.dummy() as u8);
    let k = ctx.modules.kernel_for::<Elements>(dev, &CECKA, &defines)?;
    let zero = ctx.modules.kernel_for::<Zero>(dev, &CECKA, &Defines::for_precision(T::PRECISION))?;
    let ranges = color_ranges(colors.as_deref().map(|c| &c[..]), ne);
    let f = RealArg::new(T::PRECISION, SOURCE_F);
    let (x, y, g, refs) = (&nodal.x, &nodal.y, &nodal.g, &nodal.refs);
    let args = |first: usize, count: usize| Elements {
        x,
        y,
        conn: &conn_b,
        dof: &dof,
        g,
        refs,
        slots: &slots_b,
        vals: &vals,
        rhs: &rhs,
        f,
        ne: ne as i32,
        first: first as i32,
        count: count as i32,
    };
    let launches: Vec<(Launch, Elements)> = ranges.iter().map(|&(first, count)| (Launch::cover(count, gs), args(first, count))).collect();
    let body = &mut || {
        dev.launch_with(&zero, Launch::cover(p.nnz(), 256), &Zero { v: &vals, n: p.nnz() as i32 })?;
        dev.launch_with(&zero, Launch::cover(p.n_free, 256), &Zero { v: &rhs, n: p.n_free as i32 })?;
        launches.iter().try_for_each(|(l, a)| dev.launch_with(&k, *l, a))
    };
    let read = &mut || Ok((dev.download_vec::<T>(&vals, p.nnz())?, dev.download_vec::<T>(&rhs, p.n_free)?));
    let (timings, (vals_h, rhs_h)) = time_modes(ctx, dev, &[&vals, &rhs], body, read)?;
    let (bytes, flops) = cost(p, s, point.method.dummy());
    Ok(GpuRun {
        timings,
        vals: vals_h,
        rhs: rhs_h,
        bytes,
        flops,
        memory: memory as f64,
        setup_s,
        extras: vec![("colors_used", colors.as_ref().map_or(0.0, |c| c.len() as f64))],
    })
}

pub(crate) fn run_global_nz<T: Real>(
    ctx: &mut CaseCtx,
    problem: &Problem_,
    prep: &Prepared,
    point: &Point,
) -> Result<GpuRun<T>, CaseError> {
    let dev = gpu_of(ctx)?;
    let p = &prep.problem;
    let (en, ne, s) = (p.en(), p.ne(), std::mem::size_of::<T>());
    let ee = nz_plans::element_entries(en);
    let gs = problem.group_size(Family::GlobalNz);
    let cached_plan = global_plan_for(prep, problem, shared_limit(dev, problem)?, s);
    let plan = cached_plan.0.as_ref().map_err(|e| CaseError::Failed(format!("GlobalNZ: {e}")))?;
    let setup_start = Instant::now();
    let nodal = upload_nodal::<T>(dev, p)?;
    let node_ptr = dev.upload_slice(&plan.node_ptr)?;
    let nodes = dev.upload_slice(&plan.nodes)?;
    let elem_ptr = dev.upload_slice(&plan.elem_ptr)?;
    let lconn = dev.upload_slice(&plan.local_conn)?;
    let red = dev.upload_slice(&plan.reduction.data)?;
    let red_ptr = dev.upload_slice(&plan.reduction.ptr)?;
    let element_data = dev.alloc(ne * ee * s)?;
    let out = dev.upload_slice(&vec![T::nan(); nz_plans::num_targets(p)])?;
    let defines =
        Defines::for_precision(T::PRECISION).with("EN", en).with("DUMMY", point.method.dummy() as u8).with("NK_MAX", plan.max_nodes.max(1));
    let elements = ctx.modules.kernel_for::<GlobalElements>(dev, &CECKA, &defines)?;
    let reduce = ctx.modules.kernel_for::<Reduce>(dev, &CECKA, &Defines::for_precision(T::PRECISION))?;
    let f = RealArg::new(T::PRECISION, SOURCE_F);
    let setup_s = setup_start.elapsed().as_secs_f64() + cached_plan.1;
    let (x, y, g, refs, element_data) = (&nodal.x, &nodal.y, &nodal.g, &nodal.refs, &element_data);
    let args = GlobalElements {
        x,
        y,
        g,
        node_ptr: &node_ptr,
        nodes: &nodes,
        elem_ptr: &elem_ptr,
        lconn: &lconn,
        refs,
        element_data,
        f,
        ne: ne as i32,
    };
    let reduce_args = Reduce { red: &red, red_ptr: &red_ptr, element_data, out: &out };
    let body = &mut || {
        dev.launch_with(&elements, Launch { groups: plan.parts, group_size: gs }, &args)?;
        dev.launch_with(&reduce, Launch { groups: plan.reduction.blocks(), group_size: gs }, &reduce_args)
    };
    let (timings, (vals, rhs)) = time_modes(ctx, dev, &[&out], body, &mut read_split::<T>(dev, &out, p))?;
    let fetched = plan.nodes.len();
    let sources = plan.reduction.sources();
    let bytes = (fetched * 4 + fetched * 3 * s + en * ne * 4 + 2 * (plan.parts + 1) * 4)
        + ne * ee * s
        + plan.reduction.data.len() * 4
        + sources * s
        + nz_plans::num_targets(p) * s;
    let memory = nodal.bytes
        + (plan.node_ptr.len()
            + plan.nodes.len()
            + plan.elem_ptr.len()
            + plan.local_conn.len()
            + plan.reduction.data.len()
            + plan.reduction.ptr.len())
            * 4
        + (ne * ee + nz_plans::num_targets(p)) * s;
    Ok(GpuRun {
        timings,
        vals,
        rhs,
        bytes: bytes as f64,
        flops: ne as f64 * element_flops(en as f64, point.method.dummy()) + sources as f64,
        memory: memory as f64,
        setup_s,
        extras: vec![
            ("blocks", plan.parts as f64),
            ("max_block_nodes", plan.max_nodes as f64),
            ("reduction_padding", plan.reduction.padding()),
        ],
    })
}

pub(crate) fn run_shared_nz<T: Real>(
    ctx: &mut CaseCtx,
    problem: &Problem_,
    prep: &Prepared,
    point: &Point,
) -> Result<GpuRun<T>, CaseError> {
    let dev = gpu_of(ctx)?;
    let p = &prep.problem;
    let (en, s) = (p.en(), std::mem::size_of::<T>());
    let gs = problem.group_size(Family::SharedNz);
    let limit = shared_limit(dev, problem)?;
    let cached_plan = shared_plan_for(prep, problem, limit, s);
    let plan =
        cached_plan.0.as_ref().map_err(|e| CaseError::Failed(format!("SharedNZ with {limit} bytes of shared memory per block: {e}")))?;
    let setup_start = Instant::now();
    let nodal = upload_nodal::<T>(dev, p)?;
    let scat = dev.upload_slice(&plan.scatter.data)?;
    let scat_ptr = dev.upload_slice(&plan.scatter.ptr)?;
    let red = dev.upload_slice(&plan.reduction.data)?;
    let red_ptr = dev.upload_slice(&plan.reduction.ptr)?;
    let counts = dev.upload_slice(&plan.block_elements)?;
    let out = dev.upload_slice(&vec![T::nan(); nz_plans::num_targets(p)])?;
    let defines = Defines::for_precision(T::PRECISION).with("EN", en).with("DUMMY", point.method.dummy() as u8).with("STRIDE", plan.stride);
    let k = ctx.modules.kernel_for::<Shared>(dev, &CECKA, &defines)?;
    let f = RealArg::new(T::PRECISION, SOURCE_F);
    let setup_s = setup_start.elapsed().as_secs_f64() + cached_plan.1;
    let (x, y, g, refs) = (&nodal.x, &nodal.y, &nodal.g, &nodal.refs);
    let args =
        Shared { x, y, g, scat: &scat, scat_ptr: &scat_ptr, red: &red, red_ptr: &red_ptr, block_elements: &counts, refs, out: &out, f };
    let body = &mut || dev.launch_with(&k, Launch { groups: plan.parts, group_size: gs }, &args);
    let (timings, (vals, rhs)) = time_modes(ctx, dev, &[&out], body, &mut read_split::<T>(dev, &out, p))?;
    let sources = plan.reduction.sources();
    let bytes = plan.scatter.data.len() * 4
        + plan.node_fetches * 3 * s
        + plan.reduction.data.len() * 4
        + (plan.scatter.ptr.len() + plan.reduction.ptr.len() + plan.block_elements.len()) * 4
        + nz_plans::num_targets(p) * s;
    let memory = nodal.bytes
        + (plan.scatter.data.len()
            + plan.scatter.ptr.len()
            + plan.reduction.data.len()
            + plan.reduction.ptr.len()
            + plan.block_elements.len())
            * 4
        + nz_plans::num_targets(p) * s;
    Ok(GpuRun {
        timings,
        vals,
        rhs,
        bytes: bytes as f64,
        flops: plan.element_calls as f64 * element_flops(en as f64, point.method.dummy()) + sources as f64,
        memory: memory as f64,
        setup_s,
        extras: vec![
            ("blocks", plan.parts as f64),
            ("max_block_elements", plan.stride as f64),
            ("shared_bytes", (plan.stride * nz_plans::shared_slot(en) * s) as f64),
            ("element_calls_per_element", plan.element_calls as f64 / p.ne() as f64),
            ("reduction_padding", plan.reduction.padding()),
        ],
    })
}

pub(crate) fn run_shared_atomic<T: Real>(
    ctx: &mut CaseCtx,
    problem: &Problem_,
    prep: &Prepared,
    point: &Point,
) -> Result<GpuRun<T>, CaseError> {
    let dev = gpu_of(ctx)?;
    let p = &prep.problem;
    let (en, s) = (p.en(), std::mem::size_of::<T>());
    let gs = problem.group_size(Family::SharedAtomic);
    let limit = shared_limit(dev, problem)?;
    let (cached_plan, color_secs) = shared_atomic_plan_for(prep, problem, limit, s)?;
    let plan = cached_plan
        .0
        .as_ref()
        .map_err(|e| CaseError::Failed(format!("SharedAtomic with {limit} bytes of shared memory per block: {e}")))?;
    let setup_start = Instant::now();
    let calls = plan.calls();
    let nodal = upload_nodal::<T>(dev, p)?;
    let node_ptr = dev.upload_slice(&plan.node_ptr)?;
    let nodes = dev.upload_slice(&plan.nodes)?;
    let node_targets = dev.upload_slice(&plan.node_targets)?;
    let call_ptr = dev.upload_slice(&plan.call_ptr)?;
    let lconn = dev.upload_slice(&plan.local_conn)?;
    let lslot = dev.upload_slice(&plan.local_slot)?;
    let slot_ptr = dev.upload_slice(&plan.slot_ptr)?;
    let targets = dev.upload_slice(&plan.targets)?;
    let out = dev.upload_slice(&vec![T::nan(); nz_plans::num_targets(p)])?;
    let defines = Defines::for_precision(T::PRECISION)
        .with("EN", en)
        .with("DUMMY", point.method.dummy() as u8)
        .with("NB_MAX", plan.max_nodes.max(1))
        .with("TK_MAX", plan.max_slots.max(1))
        .with("WG", gs)
        .with("MIN_BLOCKS", problem.min_blocks_per_sm.unwrap_or(0))
        .with("SA_BATCH", problem.load_batch.unwrap_or(8).clamp(1, 16));
    let k = ctx.modules.kernel_for::<SharedAtomic>(dev, &CECKA, &defines)?;
    let f = RealArg::new(T::PRECISION, SOURCE_F);
    let setup_s = setup_start.elapsed().as_secs_f64() + cached_plan.1 + color_secs;
    let args = SharedAtomic {
        x: &nodal.x,
        y: &nodal.y,
        g: &nodal.g,
        node_ptr: &node_ptr,
        nodes: &nodes,
        node_targets: &node_targets,
        call_ptr: &call_ptr,
        lconn: &lconn,
        lslot: &lslot,
        slot_ptr: &slot_ptr,
        targets: &targets,
        refs: &nodal.refs,
        out: &out,
        f,
        calls: calls as i32,
    };
    let body = &mut || dev.launch_with(&k, Launch { groups: plan.parts, group_size: gs }, &args);
    let (timings, (vals, rhs)) = time_modes(ctx, dev, &[&out], body, &mut read_split::<T>(dev, &out, p))?;
    let fetched = plan.nodes.len();
    let index_bytes =
        (plan.node_ptr.len() + plan.call_ptr.len() + plan.slot_ptr.len() + fetched + plan.node_targets.len() + plan.targets.len()) * 4
            + (plan.local_conn.len() + plan.local_slot.len()) * 2;
    let bytes = index_bytes + fetched * 3 * s + nz_plans::num_targets(p) * s;
    Ok(GpuRun {
        timings,
        vals,
        rhs,
        bytes: bytes as f64,
        // Shared-memory atomic additions are memory operations, not counted as flops.
        flops: calls as f64 * element_flops(en as f64, point.method.dummy()),
        memory: (nodal.bytes + index_bytes + nz_plans::num_targets(p) * s) as f64,
        setup_s,
        extras: vec![
            ("blocks", plan.parts as f64),
            ("shared_bytes", ((plan.max_slots + 5 * plan.max_nodes) * s) as f64),
            ("element_calls_per_element", calls as f64 / p.ne() as f64),
        ],
    })
}

pub(crate) fn run_local_nz<T: Real>(ctx: &mut CaseCtx, problem: &Problem_, prep: &Prepared, point: &Point) -> Result<GpuRun<T>, CaseError> {
    let dev = gpu_of(ctx)?;
    let p = &prep.problem;
    let (en, ne, s) = (p.en(), p.ne(), std::mem::size_of::<T>());
    let gs = problem.group_size(Family::LocalNz);
    let cached_plan = local_plan_for(prep, problem);
    let plan = cached_plan.0.as_ref().map_err(|e| CaseError::Failed(format!("LocalNZ: {e}")))?;
    let setup_start = Instant::now();
    let conn: Vec<u32> = (0..en * ne).into_par_iter().map(|idx| p.mesh.element(idx % ne)[idx / ne]).collect();
    let nodal = upload_nodal::<T>(dev, p)?;
    let conn_b = dev.upload_slice(&conn)?;
    let lst = dev.upload_slice(&plan.data)?;
    let lst_ptr = dev.upload_slice(&plan.ptr)?;
    let out = dev.upload_slice(&vec![T::nan(); nz_plans::num_targets(p)])?;
    let defines = Defines::for_precision(T::PRECISION).with("EN", en).with("DUMMY", point.method.dummy() as u8);
    let k = ctx.modules.kernel_for::<Local>(dev, &CECKA, &defines)?;
    let f = RealArg::new(T::PRECISION, SOURCE_F);
    let setup_s = setup_start.elapsed().as_secs_f64() + cached_plan.1;
    let (x, y, g, refs) = (&nodal.x, &nodal.y, &nodal.g, &nodal.refs);
    let args = Local { x, y, g, conn: &conn_b, lst: &lst, lst_ptr: &lst_ptr, refs, out: &out, f, ne: ne as i32 };
    let body = &mut || dev.launch_with(&k, Launch { groups: plan.blocks(), group_size: gs }, &args);
    let (timings, (vals, rhs)) = time_modes(ctx, dev, &[&out], body, &mut read_split::<T>(dev, &out, p))?;
    let calls = plan.sources();
    // Compulsory traffic: the lists once, the connectivity and the nodal data once, every output
    // written once. Each source's re-reads of its element's nodes hit in cache and are not
    // counted (counting them gave more GB/s than the device's copy bandwidth).
    let bytes = (plan.data.len() + plan.ptr.len()) * 4 + en * ne * 4 + 3 * p.mesh.num_nodes() * s + nz_plans::num_targets(p) * s;
    let memory = nodal.bytes + (conn.len() + plan.data.len() + plan.ptr.len()) * 4 + nz_plans::num_targets(p) * s;
    Ok(GpuRun {
        timings,
        vals,
        rhs,
        bytes: bytes as f64,
        flops: calls as f64 * (element_flops(en as f64, point.method.dummy()) + 1.0),
        memory: memory as f64,
        setup_s,
        extras: vec![("element_calls_per_element", calls as f64 / ne as f64)],
    })
}
