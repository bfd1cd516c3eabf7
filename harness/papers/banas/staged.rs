//! The staged GPU run the paper's Tables 5-7 time, as the case lifecycle runs it
//! ([`crate::lifecycle`]): one pass prepares the inputs on the host, allocates the device
//! buffers, uploads, integrates and downloads, each stage timed by its own clock; the first pass
//! is the checked one, then whole passes repeat until the kernel's samples satisfy the policy
//! (count, time, noise), in each cache mode asked for. Every pass's output is checked.

use super::elasticity::{element_dofs, element_flops};
use super::inputs::{check_pass, input_lengths, prepare_inputs, prepared, with_extras, Prepared};
use super::kernel::BANAS;
use super::kernel::{Integrate, IntegrateMma};
use super::method::DeviceMethod;
use super::plan::{Plan, Tuning, Variant};
use super::spec::{Point, Problem_, STAGES};
use crate::benchmark::{CaseCtx, CaseError, Measured};
use crate::device::scan::fill_words;
use crate::device::{Buffer, Device, DeviceExt, HostBuffer, Kernel, Launch};
use crate::lifecycle::{checked, trials, PassMethod};
use crate::measure::{CacheFlusher, CacheMode, Pass, Staged, Timer};
use crate::real::Real;
use crate::Precision;

/// The stages of one pass, in table order, with the clock that times each.
const STAGE_CLOCKS: [(&str, Timer); 5] = [
    (STAGES[0], Timer::HostWall),
    (STAGES[1], Timer::HostWall),
    (STAGES[2], Timer::DeviceEvent),
    (STAGES[3], Timer::DeviceEvent),
    (STAGES[4], Timer::DeviceEvent),
];

/// One of our kernel variants (the paper's four, and two beyond it).
pub struct KernelVariant(pub Variant);

impl DeviceMethod for KernelVariant {
    fn run<T: Real>(&self, ctx: &mut CaseCtx, dev: &dyn Device, problem: &Problem_, point: &Point) -> Result<Vec<Measured>, CaseError> {
        run_gpu::<T>(ctx, dev, problem, point, self.0)
    }
}

fn run_gpu<T: Real>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    problem: &Problem_,
    point: &Point,
    variant: Variant,
) -> Result<Vec<Measured>, CaseError> {
    if let Some(reason) = unsupported(variant, dev) {
        return Err(CaseError::Skipped(reason));
    }
    let nsh = super::prism::shape_functions(point.degree as usize);
    let nq = super::prism::quadrature(point.degree as usize).map_err(CaseError::Failed)?.len();
    let tuning = Tuning {
        output_bytes: (problem.output_mib * (1u64 << 20) as f64) as usize,
        group_size: problem.group_size,
        reg_blocks: problem.reg_blocks,
        mma_tiling: problem.mma_tiling,
        mma_points: problem.mma_points,
        shared_bytes: problem.shared_bytes,
        register_file: None,
    };
    let plan = Plan::new(variant, nsh, nq, T::PRECISION, dev.info(), &tuning).map_err(CaseError::Failed)?;
    let prep = prepared(ctx.run, point.degree, plan.elements, problem.verify_fraction)?;
    let mut m = Integration::<T>::new(ctx, dev, &plan, &prep, variant.jac())?;
    // The paper times each stage of one pass; we repeat whole passes, checking every one.
    let mut runs = Vec::new();
    // The checked pass; its error is in `m.worst` with every timed pass's.
    checked(ctx, dev, &mut m)?;
    let mut passes_checked = 1;
    for &mode in ctx.policy.modes.iter() {
        m.flusher = match mode {
            CacheMode::Cold => Some(ctx.flusher.ok_or_else(|| CaseError::Failed("cold mode asked for, but no cache flusher".into()))?),
            CacheMode::Warm => None,
        };
        let staged = trials(ctx.policy, &mut m, mode)?;
        passes_checked += staged.passes;
        runs.push(staged);
    }
    dev.release_pooled_memory()?;
    Ok(rows::<T>(&m, runs, m.worst, passes_checked))
}

/// Why `variant` cannot run on `dev`: MMA's inline PTX needs CUDA and the FP64 and TF32 tensor
/// cores (compute capability 8.0 or above).
fn unsupported(variant: Variant, dev: &dyn Device) -> Option<String> {
    let name = variant.as_str();
    let info = dev.info();
    let major = info.compute_capability.as_deref().and_then(|c| c.split('.').next()?.parse::<u32>().ok());
    match () {
        _ if !variant.mma() => None,
        _ if info.backend != Some(crate::device::Backend::Cuda) => {
            Some(format!("{name} issues NVIDIA's mma.sync through inline PTX: CUDA only"))
        }
        _ if major.is_none_or(|m| m < 8) => Some(format!("{name} needs the FP64 and TF32 tensor cores (compute capability 8.0 or above)")),
        _ => None,
    }
}

/// One row per stage and the total, in each mode, with the case's figures.
fn rows<T: Real>(m: &Integration<T>, runs: Vec<Staged>, worst: f64, passes_checked: usize) -> Vec<Measured> {
    let (plan, ne, rb) = (m.plan, m.prep.mesh.len(), m.plan.real_bytes);
    let tolerance = if T::PRECISION == Precision::F32 { 1e-4 } else { 1e-10 };
    let paper_flops = element_flops(plan.nsh, plan.nq) * ne as f64;
    let executed_flops = plan.executed_flops_per_element() * ne as f64;
    let memory = m.sizes.iter().sum::<usize>() * rb;
    let extras = [
        ("elements", ne as f64),
        ("checked_elements", m.prep.checked.len() as f64),
        ("checked_passes", passes_checked as f64),
        ("pinned_host", m.pinned() as u8 as f64),
        ("host_written_back", m.written_back as u8 as f64),
        ("group_size", plan.group_size as f64),
        ("parts", plan.parts as f64),
        ("blocks_per_thread", plan.blocks_per_thread as f64),
        ("reg_rows", plan.rb as f64),
        ("reg_cols", plan.cb as f64),
        ("groups", plan.groups as f64),
        ("shared_bytes", plan.shared_bytes as f64),
        ("input_mb", plan.input_bytes(m.jac) as f64 / 1e6),
        ("output_mb", (plan.elements * plan.output_bytes_per_element()) as f64 / 1e6),
        ("performed_blocks", plan.performed_blocks() as f64),
        // 3xTF32's flops run on the TF32 tensor cores: their peak is the row's ceiling.
        (crate::report::physics::TF32_COLUMN, (plan.variant.mma() && T::PRECISION == Precision::F32) as u8 as f64),
        (crate::report::physics::FP64_TENSOR_COLUMN, (plan.variant.mma() && T::PRECISION == Precision::F64) as u8 as f64),
    ];
    let mut out = Vec::new();
    for staged in runs {
        for (stage, timing) in staged.stages {
            let mut row = Measured::verified(stage, timing, worst, tolerance);
            match stage {
                "kernel" => row = row.flops(executed_flops).paper_flops(paper_flops).memory(memory as f64),
                "upload" => row = row.bytes((m.sizes[..4].iter().sum::<usize>() * rb) as f64),
                "download" => row = row.bytes((m.sizes[4] * rb) as f64),
                _ => {}
            }
            out.push(row);
        }
        out.push(Measured::verified("total", staged.total, worst, tolerance).flops(executed_flops).paper_flops(paper_flops));
    }
    with_extras(out, &extras)
}

/// The integration's pass: its kernel, the pinned host memory of every timed transfer
/// (allocated once, outside every timer) and what the passes found.
struct Integration<'a, T> {
    dev: &'a dyn Device,
    plan: &'a Plan,
    prep: &'a Prepared,
    jac: bool,
    kernel: Kernel,
    fill: Kernel,
    host_in: Vec<HostBuffer>,
    host_out: HostBuffer,
    /// Entries of the four inputs and of the output.
    sizes: [usize; 5],
    /// The cache flusher of a cold mode's passes.
    flusher: Option<&'a CacheFlusher>,
    /// Whether the inputs were read from the device's view of host memory ([`host_cache`]).
    from_cache: bool,
    written_back: bool,
    /// The worst error of every pass so far, the checked one included.
    worst: f64,
    /// The error of the last pass.
    last: f64,
    real: std::marker::PhantomData<T>,
}

impl<'a, T: Real> Integration<'a, T> {
    fn new(ctx: &mut CaseCtx, dev: &'a dyn Device, plan: &'a Plan, prep: &'a Prepared, jac: bool) -> Result<Self, CaseError> {
        let defines = plan.defines(T::PRECISION);
        let kernel = if plan.variant.mma() {
            ctx.modules.kernel_for::<IntegrateMma>(dev, &BANAS, &defines)?
        } else {
            ctx.modules.kernel_for::<Integrate>(dev, &BANAS, &defines)?
        };
        let rb = plan.real_bytes;
        let lengths = input_lengths(prep, jac);
        let out_len = prep.mesh.len() * element_dofs(plan.nsh).pow(2);
        Ok(Integration {
            dev,
            plan,
            prep,
            jac,
            kernel,
            fill: ctx.modules.filler(dev)?,
            host_in: lengths.iter().map(|&n| dev.alloc_host(n * rb)).collect::<Result<_, _>>()?,
            host_out: dev.alloc_host(out_len * rb)?,
            sizes: [lengths[0], lengths[1], lengths[2], lengths[3], out_len],
            flusher: None,
            from_cache: fembench_device::host_cache::upload_from_cache(),
            written_back: false,
            worst: 0.0,
            last: f64::NAN,
            real: std::marker::PhantomData,
        })
    }

    fn pinned(&self) -> bool {
        self.host_out.pinned() && self.host_in.iter().all(|h| h.pinned())
    }

    /// A real allocation each pass (memory pooled by the last pass goes back first), every
    /// page touched.
    fn allocate(&self) -> Result<Vec<Buffer>, CaseError> {
        let (dev, rb) = (self.dev, self.plan.real_bytes);
        let mut bufs: Vec<Buffer> = self.sizes.iter().map(|&n| dev.alloc((n * rb).max(1))).collect::<Result<_, _>>()?;
        for b in bufs.iter_mut() {
            dev.touch(b)?;
        }
        dev.synchronize()?;
        Ok(bufs)
    }

    /// Every buffer poisoned: an element the kernel does not write stays NaN. The inputs are
    /// filled too, so that every page is mapped before the timed upload: a first write into
    /// memory fresh from the driver costs a variable amount (up to 2.9x the upload time between
    /// back-to-back runs on an H200 before this).
    fn poison(&self, bufs: &[Buffer]) -> Result<(), CaseError> {
        for b in bufs {
            fill_words(self.dev, &self.fill, b, u32::MAX, b.bytes() / 4)?;
        }
        Ok(self.dev.synchronize()?)
    }
}

impl<T: Real> PassMethod for Integration<'_, T> {
    type Verdict = f64;
    fn stages(&self) -> Vec<(&'static str, Timer)> {
        STAGE_CLOCKS.to_vec()
    }
    fn decisive(&self) -> &'static str {
        "kernel"
    }
    /// None that outlives a pass: each pass allocates its buffers and poisons them itself.
    fn outputs(&self) -> Vec<&Buffer> {
        Vec::new()
    }
    fn pass(&mut self, pass: &mut Pass) -> Result<(), CaseError> {
        let (dev, ne) = (self.dev, self.prep.mesh.len());
        let (jac, prep) = (self.jac, self.prep);
        let host_in = &mut self.host_in;
        pass.host("prepare", || prepare_inputs::<T>(prep, jac, host_in));
        // Untimed: the upload reads memory, not lines dirty in the caches of the cores that
        // wrote them (their DMA speed depends on where the threads ran; host_cache.rs).
        self.written_back = !self.from_cache && self.host_in.iter().all(|h| h.write_back_cpu_caches());
        dev.release_pooled_memory()?;
        let mut bufs = pass.host("allocate", || self.allocate())?;
        self.poison(&bufs)?;
        pass.device(dev, "upload", &mut || bufs.iter_mut().zip(&self.host_in).try_for_each(|(b, h)| dev.upload_async(b, h, h.len())))?;
        if let Some(f) = self.flusher {
            f.flush(dev, pass.index() as u32)?;
        }
        // The kernel reads vertices (JAC) or Jacobian terms (NOJAC): one buffer fills both slots.
        let b = &bufs;
        let (ne, nparts) = (ne as i32, self.plan.parts as i32);
        let launch = Launch { groups: self.plan.groups, group_size: self.plan.group_size };
        if self.plan.variant.mma() {
            let args = IntegrateMma { dphi: &b[0], jterms: &b[2], lame: &b[3], out: &b[4], ne, nparts };
            pass.device(dev, "kernel", &mut || dev.launch_with(&self.kernel, launch, &args))?;
        } else {
            let args = Integrate { dphi: &b[0], quad: &b[1], geo: &b[2], jterms: &b[2], lame: &b[3], out: &b[4], ne, nparts };
            pass.device(dev, "kernel", &mut || dev.launch_with(&self.kernel, launch, &args))?;
        }
        let out_bytes = self.sizes[4] * self.plan.real_bytes;
        let host_out = &mut self.host_out;
        pass.device(dev, "download", &mut || dev.download_async(&bufs[4], host_out, out_bytes))?;
        drop(bufs);
        let size = element_dofs(self.plan.nsh).pow(2);
        self.last = check_pass(&self.host_out.typed::<T>()[..self.sizes[4]], self.prep, size);
        self.worst = if self.last.is_nan() || self.worst.is_nan() { f64::NAN } else { self.worst.max(self.last) };
        Ok(())
    }
    /// The checked pass's error (every later pass is checked too: [`Integration::worst`]).
    fn verify(&mut self) -> Result<f64, CaseError> {
        Ok(self.last)
    }
}
