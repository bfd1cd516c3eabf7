//! Running one bandwidth case: host data and its f64 reference, the GPU kernels through the
//! `Device` trait (the case lifecycle: a checked run on poisoned outputs, then the timed
//! repetitions) and the rayon CPU versions, checked after their timed repetitions.

use rayon::prelude::*;

use super::kernel as args;
use super::kernel::BANDWIDTH;
use crate::benchmark::{CaseCtx, CaseError, Measured, Target};
use crate::device::{Buffer, Device, DeviceExt, KernelArgs, Launch, RealArg};
use crate::kernels::Defines;

use super::spec::{Point, Problem, StreamKernel};
use crate::lifecycle::drive_body;
use crate::measure::{measure_device, measure_host, Gate, Timing};
use crate::real::{permute, unit, Real};

/// Host inputs of one case. Arrays a kernel does not use stay empty.
pub struct HostData<T> {
    pub(crate) kind: StreamKernel,
    pub(crate) n: usize,
    pub(crate) a: Vec<T>,
    pub(crate) b: Vec<T>,
    pub(crate) c: Vec<T>,
    pub(crate) map: Vec<u32>,
    /// Number of scatter-add targets.
    pub(crate) targets: usize,
}

pub(crate) fn fill<T: Real>(n: usize, seed: u64) -> Vec<T> {
    // In [0.5, 1.5): no zeros, no cancellation in the dot product.
    (0..n).into_par_iter().map(|i| T::from_f64(0.5 + unit(seed, i as u64))).collect()
}

impl<T: Real> HostData<T> {
    /// An output array of the right length, poisoned with NaN.
    pub fn output(&self) -> Vec<T> {
        (0..self.output_len()).into_par_iter().map(|_| T::nan()).collect()
    }

    /// The scatter-add's atomic targets (empty for every other kernel).
    pub fn scratch(&self) -> Vec<T::Atomic> {
        let n = if self.kind == StreamKernel::ScatterAdd { self.targets } else { 0 };
        (0..n).into_par_iter().map(|_| T::atomic(T::default())).collect()
    }

    pub(crate) fn output_len(&self) -> usize {
        match self.kind {
            StreamKernel::ScatterAdd => self.targets,
            StreamKernel::Dot => 1,
            _ => self.n,
        }
    }

    pub fn new(kernel: StreamKernel, n: usize, p: &Problem) -> Self {
        use StreamKernel::*;
        let s = p.seed;
        let fan = p.scatter_fan_in as usize;
        let mut d = HostData { kind: kernel, n, a: vec![], b: vec![], c: vec![], map: vec![], targets: 0 };
        match kernel {
            Memcpy | Copy => d.a = fill(n, s),
            Mul => d.c = fill(n, s + 2),
            Add | Dot => {
                d.a = fill(n, s);
                d.b = fill(n, s + 1);
            }
            Triad => {
                d.b = fill(n, s + 1);
                d.c = fill(n, s + 2);
            }
            Gather => {
                d.a = fill(n, s);
                d.map = (0..n as u64).into_par_iter().map(|i| permute(i, n as u64, s) as u32).collect();
            }
            ScatterAdd => {
                // Small integers: every partial sum is exact in f32 and f64, in any order, so the
                // check can be exact whatever order the atomics land in.
                d.a = (0..n).into_par_iter().map(|i| T::from_f64((1 + (crate::real::splitmix64(s ^ i as u64) % 16)) as f64)).collect();
                d.targets = n.div_ceil(fan);
                d.map = (0..n as u64).into_par_iter().map(|i| (permute(i, n as u64, s) / fan as u64) as u32).collect();
            }
        }
        d
    }

    /// Reference result in f64, element by element.
    pub(crate) fn reference(&self, kernel: StreamKernel, scalar: f64) -> Vec<f64> {
        use StreamKernel::*;
        let f = |v: &[T]| v.par_iter().map(|x| x.to_f64()).collect::<Vec<f64>>();
        match kernel {
            Memcpy | Copy => f(&self.a),
            Mul => self.c.par_iter().map(|c| scalar * c.to_f64()).collect(),
            Add => self.a.par_iter().zip(&self.b).map(|(a, b)| a.to_f64() + b.to_f64()).collect(),
            Triad => self.b.par_iter().zip(&self.c).map(|(b, c)| b.to_f64() + scalar * c.to_f64()).collect(),
            Dot => vec![self.a.par_iter().zip(&self.b).map(|(a, b)| a.to_f64() * b.to_f64()).sum()],
            Gather => self.map.par_iter().map(|&j| self.a[j as usize].to_f64()).collect(),
            ScatterAdd => {
                // The values are small integers: integer sums on every core are exact.
                use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
                let y: Vec<AtomicU64> = (0..self.targets).into_par_iter().map(|_| AtomicU64::new(0)).collect();
                self.a.par_iter().zip(&self.map).for_each(|(x, &j)| {
                    y[j as usize].fetch_add(x.to_f64() as u64, Relaxed);
                });
                y.into_par_iter().map(|v| v.into_inner() as f64).collect()
            }
        }
    }
}

/// ‖out − ref‖₂ / ‖ref‖₂; NaN if any output is NaN or the lengths differ.
pub fn relative_error<T: Real>(out: &[T], reference: &[f64]) -> f64 {
    if out.len() != reference.len() {
        return f64::NAN;
    }
    let (num, den) = out
        .par_iter()
        .zip(reference)
        .map(|(o, r)| {
            let o = o.to_f64();
            ((o - r) * (o - r), r * r)
        })
        .reduce(|| (0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
    if num.is_nan() {
        return f64::NAN;
    }
    if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    }
}

/// How far a result may be from the f64 reference: copies and integer scatter sums are exact;
/// element-wise arithmetic rounds once or twice; a dot product's error grows with the length of
/// its longest sequential sum.
pub(crate) fn tolerance<T: Real>(kernel: StreamKernel, sequential_terms: usize) -> f64 {
    use StreamKernel::*;
    match kernel {
        Memcpy | Copy | Gather | ScatterAdd => 0.0,
        Mul | Add | Triad => 4.0 * T::EPS,
        Dot => 2.0 * (sequential_terms as f64 + 64.0) * T::EPS,
    }
}

pub(crate) fn run_typed<T: Real>(ctx: &mut CaseCtx, p: &Problem, point: &Point) -> Result<Vec<Measured>, CaseError> {
    let s = std::mem::size_of::<T>();
    let n = ((point.array_mib.0 * (1u64 << 20) as f64) / s as f64) as usize;
    if n == 0 {
        return Err(CaseError::Failed(format!("{} MiB holds no {} element", point.array_mib.0, T::PRECISION)));
    }
    let data = HostData::<T>::new(point.kernel, n, p);
    let bytes = point.kernel.bytes(n, s, p.scatter_fan_in as usize);
    let flops = point.kernel.flops(n);
    let (timings, out, seq, memory) = match ctx.target {
        Target::Gpu(dev) => {
            let dev: &dyn Device = dev;
            run_gpu::<T>(dev, ctx, p, point.kernel, &data)?
        }
        Target::Cpu => run_cpu::<T>(ctx, p, point.kernel, &data)?,
    };
    let reference = data.reference(point.kernel, T::from_f64(p.scalar).to_f64());
    let error = relative_error(&out, &reference);
    let tol = tolerance::<T>(point.kernel, seq);
    Ok(timings
        .into_iter()
        .map(|t| Measured::verified(point.kernel.as_str(), t, error, tol).bytes(bytes).flops(flops).memory(memory as f64))
        .collect())
}

pub(crate) type CaseOutput<T> = (Vec<Timing>, Vec<T>, usize, usize);

pub(crate) fn run_gpu<T: Real>(
    dev: &dyn Device,
    ctx: &mut CaseCtx,
    p: &Problem,
    kernel: StreamKernel,
    d: &HostData<T>,
) -> Result<CaseOutput<T>, CaseError> {
    use StreamKernel::*;
    let (n, s) = (d.n, std::mem::size_of::<T>());
    let (gs, ept) = (p.group_size as usize, p.elements_per_thread as usize);
    let defines = Defines::for_precision(T::PRECISION).with("BLOCK", gs).with("EPT", ept);
    let stream_launch = Launch::cover(n.div_ceil(ept), gs);
    let (scalar, nn) = (RealArg::new(T::PRECISION, p.scalar), n as i64);
    let read = |b, len| reader::<T>(dev, b, len);
    match kernel {
        Memcpy => memcpy(ctx, dev, d),
        Dot => {
            let k = ctx.modules.kernel_for::<args::Dot>(dev, &BANDWIDTH, &defines)?;
            let groups = (dev.info().compute_units.max(1) * p.dot_groups_per_unit) as usize;
            let (a, b, partial) = (dev.upload_slice(&d.a)?, dev.upload_slice(&d.b)?, dev.alloc(groups * s)?);
            let launch = Launch { groups, group_size: gs };
            let args = args::Dot { a: &a, b: &b, partial: &partial, n: nn };
            let (timings, partials) =
                drive_body(ctx, dev, Gate::Closed, &[&partial], &mut || dev.launch_with(&k, launch, &args), &mut read(&partial, groups))?;
            let sum: f64 = partials.iter().map(|x| x.to_f64()).sum();
            let seq = n.div_ceil(groups * gs) + gs.ilog2() as usize + groups;
            Ok((timings, vec![T::from_f64(sum)], seq, 2 * n * s + groups * s))
        }
        Gather => {
            let (x, map, y) = (dev.upload_slice(&d.a)?, dev.upload_slice(&d.map)?, dev.alloc(n * s)?);
            let (timings, out) = stream(ctx, dev, (&defines, stream_launch), &args::Gather { x: &x, map: &map, y: &y, n: nn }, &y, n)?;
            Ok((timings, out, 0, 2 * n * s + 4 * n))
        }
        ScatterAdd => {
            let k = ctx.modules.kernel_for::<args::ScatterAdd>(dev, &BANDWIDTH, &defines)?;
            let fill = (ctx.modules.kernel_for::<args::Fill>(dev, &BANDWIDTH, &defines)?, Launch::cover(d.targets.div_ceil(ept), gs));
            scatter_add(ctx, dev, (&k, stream_launch), fill, d)
        }
        Copy | Mul | Add | Triad => {
            // An array the kernel does not read (an output) is allocated and poisoned on the
            // device, not filled on the host and uploaded.
            let upload = |v: &[T]| -> Result<Buffer, CaseError> { Ok(if v.is_empty() { dev.alloc(n * s)? } else { dev.upload_slice(v)? }) };
            let (a, b, c) = (upload(&d.a)?, upload(&d.b)?, upload(&d.c)?);
            let on = (&defines, stream_launch);
            let (timings, got) = match kernel {
                Copy => stream(ctx, dev, on, &args::Copy { a: &a, c: &c, n: nn }, &c, n)?,
                Mul => stream(ctx, dev, on, &args::Mul { b: &b, c: &c, scalar, n: nn }, &b, n)?,
                Add => stream(ctx, dev, on, &args::Add { a: &a, b: &b, c: &c, n: nn }, &c, n)?,
                _ => stream(ctx, dev, on, &args::Triad { a: &a, b: &b, c: &c, scalar, n: nn }, &a, n)?,
            };
            Ok((timings, got, 0, 3 * n * s))
        }
    }
}

/// One streaming kernel's lifecycle: `out` poisoned, one checked launch, its `n` outputs read,
/// then the launch timed in every mode.
fn stream<T: Real, A: KernelArgs>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    (defines, launch): (&Defines, Launch),
    args: &A,
    out: &Buffer,
    n: usize,
) -> Result<(Vec<Timing>, Vec<T>), CaseError> {
    let k = ctx.modules.kernel_for::<A>(dev, &BANDWIDTH, defines)?;
    drive_body(ctx, dev, Gate::Closed, &[out], &mut || dev.launch_with(&k, launch, args), &mut reader::<T>(dev, out, n))
}

/// A checked pass's output, read back.
fn reader<'a, T: Real>(dev: &'a dyn Device, b: &'a Buffer, len: usize) -> impl FnMut() -> Result<Vec<T>, CaseError> + 'a {
    move || Ok(dev.download_vec::<T>(b, len)?)
}

/// The driver's device-to-device copy: the copy into a poisoned output checked, then timed.
fn memcpy<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, d: &HostData<T>) -> Result<CaseOutput<T>, CaseError> {
    let (n, s) = (d.n, std::mem::size_of::<T>());
    let (a, mut c) = (dev.upload_slice(&d.a)?, dev.alloc(n * s)?);
    ctx.modules.poison(dev, &c)?;
    dev.copy(&mut c, &a, n * s)?;
    dev.synchronize()?;
    let out = dev.download_vec::<T>(&c, n)?;
    let mut timings = Vec::new();
    for &mode in ctx.policy.modes.iter() {
        timings.push(measure_device(dev, ctx.policy, mode, Gate::Closed, ctx.flusher, &mut || dev.copy(&mut c, &a, n * s))?);
    }
    Ok((timings, out, 0, 2 * n * s))
}

/// Atomic scatter-add: the checked result is one launch on a zeroed target; the timed
/// repetitions then keep adding into it (the time does not depend on its values).
fn scatter_add<T: Real>(
    ctx: &mut CaseCtx,
    dev: &dyn Device,
    (k, launch): (&crate::device::Kernel, Launch),
    (fill_k, fill_launch): (crate::device::Kernel, Launch),
    d: &HostData<T>,
) -> Result<CaseOutput<T>, CaseError> {
    let (n, s) = (d.n, std::mem::size_of::<T>());
    let (x, map, y) = (dev.upload_slice(&d.a)?, dev.upload_slice(&d.map)?, dev.alloc(d.targets * s)?);
    let args = args::ScatterAdd { x: &x, map: &map, y: &y, n: n as i64 };
    dev.launch_with(&fill_k, fill_launch, &args::Fill { y: &y, value: RealArg::new(T::PRECISION, 0.0), n: d.targets as i64 })?;
    dev.launch_with(k, launch, &args)?;
    dev.synchronize()?;
    let out = dev.download_vec::<T>(&y, d.targets)?;
    let mut timings = Vec::new();
    for &mode in ctx.policy.modes.iter() {
        timings.push(measure_device(dev, ctx.policy, mode, Gate::Closed, ctx.flusher, &mut || dev.launch_with(k, launch, &args))?);
    }
    Ok((timings, out, 0, n * s + 4 * n + d.targets * s))
}

/// The CPU side: the same kernels with rayon, timed with the wall clock.
pub(crate) fn run_cpu<T: Real>(ctx: &mut CaseCtx, p: &Problem, kernel: StreamKernel, d: &HostData<T>) -> Result<CaseOutput<T>, CaseError> {
    use StreamKernel::*;
    let n = d.n;
    let s = std::mem::size_of::<T>();
    let scalar = T::from_f64(p.scalar).to_f64();
    let mut out = d.output();
    // The scatter-add's atomic targets are allocated here, outside the timer.
    let scratch = d.scratch();
    let timing = measure_host::<()>(ctx.policy, &mut || {
        cpu_kernel(kernel, d, &mut out, scalar, &scratch);
        Ok(())
    })
    .map_err(|_| CaseError::Failed("host kernel failed".into()))?;
    let memory = match kernel {
        Gather => 2 * n * s + 4 * n,
        ScatterAdd => n * s + 4 * n + d.targets * s,
        Add | Triad => 3 * n * s,
        _ => 2 * n * s,
    };
    Ok((vec![timing], out, CPU_CHUNK + n / CPU_CHUNK, memory))
}

/// Sequential run length of the CPU kernels (the dot product's error bound depends on it).
pub(crate) const CPU_CHUNK: usize = 1 << 14;

/// One execution of a kernel on the host with rayon (also what `cargo bench` measures). `scratch`
/// ([`HostData::scratch`]) holds the scatter-add's atomic targets, so no execution allocates.
pub fn cpu_kernel<T: Real>(kernel: StreamKernel, d: &HostData<T>, out: &mut [T], scalar: f64, scratch: &[T::Atomic]) {
    use StreamKernel::*;
    match kernel {
        Memcpy => out.par_chunks_mut(CPU_CHUNK).zip(d.a.par_chunks(CPU_CHUNK)).for_each(|(o, a)| o.copy_from_slice(a)),
        Copy => out.par_iter_mut().zip(&d.a).for_each(|(o, a)| *o = *a),
        Mul => out.par_iter_mut().zip(&d.c).for_each(|(o, c)| *o = T::from_f64(scalar * c.to_f64())),
        Add => out.par_iter_mut().zip(&d.a).zip(&d.b).for_each(|((o, a), b)| *o = T::from_f64(a.to_f64() + b.to_f64())),
        Triad => out.par_iter_mut().zip(&d.b).zip(&d.c).for_each(|((o, b), c)| *o = T::from_f64(b.to_f64() + scalar * c.to_f64())),
        Dot => {
            out[0] =
                d.a.par_chunks(CPU_CHUNK)
                    .zip(d.b.par_chunks(CPU_CHUNK))
                    .map(|(a, b)| a.iter().zip(b).fold(T::default(), |acc, (x, y)| T::from_f64(acc.to_f64() + x.to_f64() * y.to_f64())))
                    .reduce(T::default, |x, y| T::from_f64(x.to_f64() + y.to_f64()))
        }
        Gather => out.par_iter_mut().zip(&d.map).for_each(|(o, &j)| *o = d.a[j as usize]),
        ScatterAdd => {
            let y = &scratch[..d.targets];
            y.par_iter().for_each(|c| T::atomic_store(c, T::default()));
            d.a.par_iter().zip(&d.map).for_each(|(x, &j)| T::atomic_add(&y[j as usize], *x));
            out.par_iter_mut().zip(y).for_each(|(o, c)| *o = T::atomic_load(c));
        }
    }
}
