//! Device bandwidth: the five BabelStream kernels (copy, mul, add, triad, dot), the API's own
//! device-to-device copy as the reference, and the two access patterns of FEM assembly (indexed
//! gather, atomic scatter-add), over array sizes from cache-resident to DRAM-bound.
//!
//! Its result is each device's attainable bandwidth, which later reports use as the ceiling.
//! As in BabelStream, each kernel has a bytes-moved weight and every result is checked after the
//! timed repetitions: outputs start as NaN, so an element a kernel never wrote fails the check.

use std::collections::BTreeMap;

use polars::prelude::DataFrame;
use rayon::prelude::*;
use serde::{Deserialize, Deserializer, Serialize};

use crate::benchmark::{Benchmark, CaseCtx, CaseError, Measured, Spec, Target};
use crate::device::{Arg, Device, DeviceExt, Launch};
use crate::experiment::{cartesian, NonEmpty, ParamValue, Params};
use crate::kernels::{Defines, KernelSource};

/// BabelStream's kernels plus gather and atomic scatter-add.
pub const BANDWIDTH: KernelSource = KernelSource { file: "bandwidth.kern", text: include_str!("../../kernels/bandwidth.kern") };
use crate::measure::{measure_device, measure_host, Timing};
use crate::real::{permute, unit, Real};
use crate::report::{fmt_num, frame, Figure, ReportCtx, ReportError, ReportItem, Series, Table};
use crate::Precision;

pub struct DeviceBandwidth;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamKernel {
    /// The API's device-to-device copy (cuMemcpyDtoD, clEnqueueCopyBuffer): the reference.
    Memcpy,
    Copy,
    Mul,
    Add,
    Triad,
    Dot,
    Gather,
    ScatterAdd,
}

impl StreamKernel {
    pub const ALL: [StreamKernel; 8] = [
        StreamKernel::Memcpy,
        StreamKernel::Copy,
        StreamKernel::Mul,
        StreamKernel::Add,
        StreamKernel::Triad,
        StreamKernel::Dot,
        StreamKernel::Gather,
        StreamKernel::ScatterAdd,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StreamKernel::Memcpy => "memcpy",
            StreamKernel::Copy => "copy",
            StreamKernel::Mul => "mul",
            StreamKernel::Add => "add",
            StreamKernel::Triad => "triad",
            StreamKernel::Dot => "dot",
            StreamKernel::Gather => "gather",
            StreamKernel::ScatterAdd => "scatter_add",
        }
    }

    fn entry_point(self) -> &'static str {
        match self {
            StreamKernel::Memcpy => "",
            StreamKernel::Copy => "bw_copy",
            StreamKernel::Mul => "bw_mul",
            StreamKernel::Add => "bw_add",
            StreamKernel::Triad => "bw_triad",
            StreamKernel::Dot => "bw_dot",
            StreamKernel::Gather => "bw_gather",
            StreamKernel::ScatterAdd => "bw_scatter_add",
        }
    }

    /// The cost model: bytes each kernel must move for arrays of `n` elements of `s` bytes (each
    /// input read once, each output written once; a scatter target read and written once).
    pub fn bytes(self, n: usize, s: usize, fan_in: usize) -> f64 {
        let (n, s) = (n as f64, s as f64);
        match self {
            StreamKernel::Memcpy | StreamKernel::Copy | StreamKernel::Mul | StreamKernel::Dot => 2.0 * n * s,
            StreamKernel::Add | StreamKernel::Triad => 3.0 * n * s,
            StreamKernel::Gather => n * 4.0 + 2.0 * n * s,
            StreamKernel::ScatterAdd => n * 4.0 + n * s + 2.0 * (n / fan_in as f64).ceil() * s,
        }
    }

    pub fn flops(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            StreamKernel::Mul | StreamKernel::Add | StreamKernel::ScatterAdd => n,
            StreamKernel::Triad | StreamKernel::Dot => 2.0 * n,
            _ => 0.0,
        }
    }

    /// Streaming kernels whose best figure is the device's attainable bandwidth.
    pub fn is_stream(self) -> bool {
        matches!(self, StreamKernel::Copy | StreamKernel::Mul | StreamKernel::Add | StreamKernel::Triad | StreamKernel::Dot)
    }
}

/// A strictly positive size in MiB.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Mib(pub f64);

impl<'de> Deserialize<'de> for Mib {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        // Above 1 TiB no device holds the arrays; such a number is a typo.
        if !(v > 0.0 && v <= (1u64 << 20) as f64) {
            return Err(serde::de::Error::invalid_value(
                serde::de::Unexpected::Float(v),
                &"a size in MiB greater than 0 and at most 1048576 (1 TiB)",
            ));
        }
        Ok(Mib(v))
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    pub kernel: NonEmpty<StreamKernel>,
    /// Size of each array in MiB.
    pub array_mib: NonEmpty<Mib>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Problem {
    /// Work-group size of every kernel.
    pub group_size: u32,
    /// Elements per work-item of the streaming kernels.
    pub elements_per_thread: u32,
    /// Contributions per scatter-add target (about 6-8 for P1 triangles, 27 for hex8 nodes).
    pub scatter_fan_in: u32,
    /// Work-groups of the dot kernel per compute unit.
    pub dot_groups_per_unit: u32,
    pub scalar: f64,
    pub seed: u64,
}

impl Default for Problem {
    fn default() -> Self {
        Problem { group_size: 256, elements_per_thread: 4, scatter_fan_in: 8, dot_groups_per_unit: 4, scalar: 0.4, seed: 2011 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableName {
    /// Best bandwidth per kernel, and each kernel against the API's memcpy.
    AttainableBandwidth,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FigureName {
    /// GB/s against array size, one figure per backend, device and precision.
    BandwidthVsSize,
}

/// The tables and figures an experiment file may ask for.
pub type Outputs = crate::experiment::Outputs<TableName, FigureName>;

#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub kernel: StreamKernel,
    pub mib: f64,
}

impl Benchmark for DeviceBandwidth {
    const NAME: &'static str = "device-bandwidth";
    const KERNELS: &'static [KernelSource] = &[BANDWIDTH];
    type Sweep = Sweep;
    type Problem = Problem;
    type Outputs = Outputs;
    type Point = Point;

    fn points(sweep: &Sweep) -> Vec<Point> {
        let kernels: Vec<ParamValue> = sweep.kernel.iter().map(|k| ParamValue::Str(k.as_str().into())).collect();
        let sizes: Vec<ParamValue> = sweep.array_mib.iter().map(|m| ParamValue::Float(m.0)).collect();
        cartesian(&[kernels, sizes])
            .into_iter()
            .map(|p| {
                let kernel = match &p[0] {
                    ParamValue::Str(s) => StreamKernel::ALL.into_iter().find(|k| k.as_str() == s).unwrap_or(StreamKernel::Copy),
                    _ => StreamKernel::Copy,
                };
                let mib = match p[1] {
                    ParamValue::Float(f) => f,
                    _ => 0.0,
                };
                Point { kernel, mib }
            })
            .collect()
    }

    fn params(p: &Point) -> Params {
        Params::default().push("kernel", ParamValue::Str(p.kernel.as_str().into())).push("array_mib", ParamValue::Float(p.mib))
    }

    fn check(spec: &Spec<Self>) -> Result<(), (String, String)> {
        let p = &spec.problem;
        if p.group_size == 0 || !p.group_size.is_power_of_two() || p.group_size > 1024 {
            return Err((
                "problem.group_size".into(),
                format!(
                    "problem.group_size must be a power of two up to 1024 (the dot kernel's tree reduction needs it), got {}",
                    p.group_size
                ),
            ));
        }
        for (name, v) in [
            ("elements_per_thread", p.elements_per_thread),
            ("scatter_fan_in", p.scatter_fan_in),
            ("dot_groups_per_unit", p.dot_groups_per_unit),
        ] {
            if v == 0 {
                return Err((format!("problem.{name}"), format!("problem.{name} must be at least 1")));
            }
        }
        Ok(())
    }

    fn run(ctx: &mut CaseCtx, problem: &Problem, point: &Point) -> Result<Vec<Measured>, CaseError> {
        match ctx.precision {
            Precision::F32 => run_typed::<f32>(ctx, problem, point),
            Precision::F64 => run_typed::<f64>(ctx, problem, point),
        }
    }

    fn report(spec: &Spec<Self>, rows: &DataFrame, _ctx: &ReportCtx) -> Result<Vec<ReportItem>, ReportError> {
        let data = ReportRows::read(rows)?;
        let mut items = Vec::new();
        for t in &spec.outputs.tables {
            match t {
                TableName::AttainableBandwidth => items.push(ReportItem::Table(attainable_table(&spec.id, &data))),
            }
        }
        for f in &spec.outputs.figures {
            match f {
                FigureName::BandwidthVsSize => items.extend(size_figures(&spec.id, &data).into_iter().map(ReportItem::Figure)),
            }
        }
        Ok(items)
    }
}

/// Host inputs of one case. Arrays a kernel does not use stay empty.
pub struct HostData<T> {
    kind: StreamKernel,
    n: usize,
    a: Vec<T>,
    b: Vec<T>,
    c: Vec<T>,
    map: Vec<u32>,
    /// Number of scatter-add targets.
    targets: usize,
}

fn fill<T: Real>(n: usize, seed: u64) -> Vec<T> {
    // In [0.5, 1.5): no zeros, no cancellation in the dot product.
    (0..n).into_par_iter().map(|i| T::from_f64(0.5 + unit(seed, i as u64))).collect()
}

impl<T: Real> HostData<T> {
    /// An output array of the right length, poisoned with NaN.
    pub fn output(&self) -> Vec<T> {
        vec![T::nan(); self.output_len()]
    }

    /// The scatter-add's atomic targets (empty for every other kernel).
    pub fn scratch(&self) -> Vec<T::Atomic> {
        let n = if self.kind == StreamKernel::ScatterAdd { self.targets } else { 0 };
        (0..n).map(|_| T::atomic(T::default())).collect()
    }

    fn output_len(&self) -> usize {
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
    fn reference(&self, kernel: StreamKernel, scalar: f64) -> Vec<f64> {
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
                let mut y = vec![0.0; self.targets];
                for (x, &j) in self.a.iter().zip(&self.map) {
                    y[j as usize] += x.to_f64();
                }
                y
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
fn tolerance<T: Real>(kernel: StreamKernel, sequential_terms: usize) -> f64 {
    use StreamKernel::*;
    match kernel {
        Memcpy | Copy | Gather | ScatterAdd => 0.0,
        Mul | Add | Triad => 4.0 * T::EPS,
        Dot => 2.0 * (sequential_terms as f64 + 64.0) * T::EPS,
    }
}

fn run_typed<T: Real>(ctx: &mut CaseCtx, p: &Problem, point: &Point) -> Result<Vec<Measured>, CaseError> {
    let s = std::mem::size_of::<T>();
    let n = ((point.mib * (1u64 << 20) as f64) / s as f64) as usize;
    if n == 0 {
        return Err(CaseError::Failed(format!("{} MiB holds no {} element", point.mib, T::PRECISION)));
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

type CaseOutput<T> = (Vec<Timing>, Vec<T>, usize, usize);

fn run_gpu<T: Real>(
    dev: &dyn Device,
    ctx: &mut CaseCtx,
    p: &Problem,
    kernel: StreamKernel,
    d: &HostData<T>,
) -> Result<CaseOutput<T>, CaseError> {
    use StreamKernel::*;
    let n = d.n;
    let s = std::mem::size_of::<T>();
    let gs = p.group_size as usize;
    let ept = p.elements_per_thread as usize;
    let defines = Defines::for_precision(T::PRECISION).with("BLOCK", gs).with("EPT", ept);
    let poison = vec![T::nan(); n];
    let upload = |v: &[T]| dev.upload_slice(if v.is_empty() { &poison } else { v });
    let stream_launch = Launch::cover(n.div_ceil(ept), gs);
    let scalar = Arg::real(T::PRECISION, p.scalar);
    let nn = Arg::I64(n as i64);
    let memory: usize;
    let mut timings = Vec::new();
    let mut measure = |body: &mut dyn FnMut() -> crate::device::DeviceResult<()>| -> Result<(), CaseError> {
        for &mode in ctx.policy.modes.iter() {
            timings.push(measure_device(dev, ctx.policy, mode, ctx.flusher, body)?);
        }
        Ok(())
    };
    let (out, seq) = match kernel {
        Memcpy => {
            let a = upload(&d.a)?;
            let mut c = upload(&[])?;
            memory = 2 * n * s;
            measure(&mut || dev.copy(&mut c, &a, n * s))?;
            dev.synchronize()?;
            (dev.download_vec::<T>(&c, n)?, 0)
        }
        Copy | Mul | Add | Triad => {
            let k = ctx.modules.kernel(dev, &BANDWIDTH, &defines, kernel.entry_point())?;
            let a = upload(&d.a)?;
            let b = upload(&d.b)?;
            let c = upload(&d.c)?;
            memory = 3 * n * s;
            let (args, out): (Vec<Arg>, &crate::device::Buffer) = match kernel {
                Copy => (vec![Arg::Buf(&a), Arg::Buf(&c), nn], &c),
                Mul => (vec![Arg::Buf(&b), Arg::Buf(&c), scalar, nn], &b),
                Add => (vec![Arg::Buf(&a), Arg::Buf(&b), Arg::Buf(&c), nn], &c),
                _ => (vec![Arg::Buf(&a), Arg::Buf(&b), Arg::Buf(&c), scalar, nn], &a),
            };
            measure(&mut || dev.launch(&k, stream_launch, &args))?;
            dev.synchronize()?;
            (dev.download_vec::<T>(out, n)?, 0)
        }
        Dot => {
            let k = ctx.modules.kernel(dev, &BANDWIDTH, &defines, kernel.entry_point())?;
            let groups = (dev.info().compute_units.max(1) * p.dot_groups_per_unit) as usize;
            let a = upload(&d.a)?;
            let b = upload(&d.b)?;
            let partial = dev.alloc(groups * s)?;
            memory = 2 * n * s + groups * s;
            let launch = Launch { groups, group_size: gs };
            measure(&mut || dev.launch(&k, launch, &[Arg::Buf(&a), Arg::Buf(&b), Arg::Buf(&partial), nn]))?;
            dev.synchronize()?;
            let partials = dev.download_vec::<T>(&partial, groups)?;
            let sum: f64 = partials.iter().map(|x| x.to_f64()).sum();
            (vec![T::from_f64(sum)], n.div_ceil(groups * gs) + gs.ilog2() as usize + groups)
        }
        Gather => {
            let k = ctx.modules.kernel(dev, &BANDWIDTH, &defines, kernel.entry_point())?;
            let x = upload(&d.a)?;
            let map = dev.upload_slice(&d.map)?;
            let y = upload(&[])?;
            memory = 2 * n * s + 4 * n;
            measure(&mut || dev.launch(&k, stream_launch, &[Arg::Buf(&x), Arg::Buf(&map), Arg::Buf(&y), nn]))?;
            dev.synchronize()?;
            (dev.download_vec::<T>(&y, n)?, 0)
        }
        ScatterAdd => {
            let k = ctx.modules.kernel(dev, &BANDWIDTH, &defines, kernel.entry_point())?;
            let fill_k = ctx.modules.kernel(dev, &BANDWIDTH, &defines, "bw_fill")?;
            let x = upload(&d.a)?;
            let map = dev.upload_slice(&d.map)?;
            let y = dev.alloc(d.targets * s)?;
            memory = n * s + 4 * n + d.targets * s;
            let args = [Arg::Buf(&x), Arg::Buf(&map), Arg::Buf(&y), nn];
            let fill_launch = Launch::cover(d.targets.div_ceil(ept), gs);
            let fill_args = [Arg::Buf(&y), Arg::real(T::PRECISION, 0.0), Arg::I64(d.targets as i64)];
            // Timed repetitions keep adding into y (the time does not depend on its values); the
            // checked result comes from one more launch on a zeroed target.
            measure(&mut || dev.launch(&k, stream_launch, &args))?;
            dev.launch(&fill_k, fill_launch, &fill_args)?;
            dev.launch(&k, stream_launch, &args)?;
            dev.synchronize()?;
            (dev.download_vec::<T>(&y, d.targets)?, 0)
        }
    };
    Ok((timings, out, seq, memory))
}

/// The CPU side: the same kernels with rayon, timed with the wall clock.
fn run_cpu<T: Real>(ctx: &mut CaseCtx, p: &Problem, kernel: StreamKernel, d: &HostData<T>) -> Result<CaseOutput<T>, CaseError> {
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
const CPU_CHUNK: usize = 1 << 14;

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

/// The bandwidth rows a report needs, read once.
struct ReportRows {
    backend: Vec<String>,
    device: Vec<String>,
    precision: Vec<String>,
    kernel: Vec<String>,
    mib: Vec<f64>,
    status: Vec<String>,
    mode: Vec<String>,
    gbs: Vec<f64>,
}

impl ReportRows {
    fn read(df: &DataFrame) -> Result<Self, ReportError> {
        Ok(ReportRows {
            backend: frame::strs(df, "backend")?,
            device: frame::strs(df, "device")?,
            precision: frame::strs(df, "precision")?,
            kernel: frame::strs(df, "kernel")?,
            mib: frame::nums(df, "array_mib")?,
            status: frame::strs(df, "status")?,
            mode: frame::strs(df, "mode")?,
            gbs: frame::nums(df, "bandwidth_gbs")?,
        })
    }

    /// (backend, device, precision) -> kernel -> size -> GB/s, for verified warm rows.
    fn grouped(&self) -> BTreeMap<(String, String, String), BTreeMap<String, Vec<(f64, f64)>>> {
        let mut g: BTreeMap<_, BTreeMap<String, Vec<(f64, f64)>>> = BTreeMap::new();
        for i in 0..self.backend.len() {
            if self.status[i] != "ok" || self.mode[i] != "warm" || !self.gbs[i].is_finite() {
                continue;
            }
            g.entry((self.backend[i].clone(), self.device[i].clone(), self.precision[i].clone()))
                .or_default()
                .entry(self.kernel[i].clone())
                .or_default()
                .push((self.mib[i], self.gbs[i]));
        }
        for k in g.values_mut() {
            for pts in k.values_mut() {
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            }
        }
        g
    }
}

fn kernel_order(name: &str) -> usize {
    StreamKernel::ALL.iter().position(|k| k.as_str() == name).unwrap_or(usize::MAX)
}

/// The attainable bandwidth of each backend/device/precision in a bandwidth frame: the best
/// streaming-kernel figure at the largest measured size (the DRAM regime), GB/s.
pub fn attainable_gbs(df: &DataFrame) -> Result<BTreeMap<(String, String, String), f64>, ReportError> {
    let data = ReportRows::read(df)?;
    let mut out = BTreeMap::new();
    for (key, kernels) in data.grouped() {
        let best = kernels
            .iter()
            .filter(|(k, _)| StreamKernel::ALL.iter().any(|sk| sk.as_str() == k.as_str() && sk.is_stream()))
            .filter_map(|(_, pts)| pts.last().map(|p| p.1))
            .fold(f64::NAN, f64::max);
        if best.is_finite() {
            out.insert(key, best);
        }
    }
    Ok(out)
}

fn attainable_table(id: &str, data: &ReportRows) -> Table {
    let mut rows = Vec::new();
    for ((backend, device, precision), kernels) in data.grouped() {
        let memcpy_at: BTreeMap<u64, f64> =
            kernels.get("memcpy").map(|p| p.iter().map(|(m, g)| (m.to_bits(), *g)).collect()).unwrap_or_default();
        let mut names: Vec<&String> = kernels.keys().collect();
        names.sort_by_key(|k| kernel_order(k));
        for k in names {
            let pts = &kernels[k];
            let Some(&(largest, at_largest)) = pts.last() else { continue };
            let &(best_mib, best) = pts.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or(&(largest, at_largest));
            let vs = memcpy_at.get(&largest.to_bits()).map(|m| format!("{:.1}%", 100.0 * at_largest / m)).unwrap_or_else(|| "-".into());
            rows.push(vec![
                backend.clone(),
                device.clone(),
                precision.clone(),
                k.clone(),
                fmt_num(largest),
                fmt_num(at_largest),
                vs,
                fmt_num(best),
                fmt_num(best_mib),
            ]);
        }
    }
    Table {
        name: format!("{id}-attainable"),
        title: "Attainable device bandwidth (GB/s, bytes read + written, median of repetitions)".into(),
        header: ["backend", "device", "precision", "kernel", "largest MiB", "GB/s at largest", "vs memcpy", "best GB/s", "best at MiB"]
            .map(String::from)
            .to_vec(),
        rows,
        notes: vec![
            "memcpy is the API's device-to-device copy on the same device and size; 'vs memcpy' compares at the largest size.".into(),
            "Sizes per array; sizes under the last-level cache measure the cache, not DRAM.".into(),
        ],
    }
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

fn size_figures(id: &str, data: &ReportRows) -> Vec<Figure> {
    data.grouped()
        .into_iter()
        .map(|((backend, device, precision), kernels)| {
            let mut names: Vec<&String> = kernels.keys().collect();
            names.sort_by_key(|k| kernel_order(k));
            Figure {
                name: format!("{id}-{backend}-{precision}-{}", slug(&device)),
                title: format!("{device} ({backend}, {precision}): bandwidth vs array size"),
                x_label: "array size (MiB)".into(),
                y_label: "GB/s".into(),
                log_x: true,
                log_y: false,
                series: names.into_iter().map(|k| Series { label: k.clone(), points: kernels[k].clone(), reference: false }).collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_model_counts_each_array_once() {
        assert_eq!(StreamKernel::Copy.bytes(1000, 4, 8), 8000.0);
        assert_eq!(StreamKernel::Triad.bytes(1000, 8, 8), 24000.0);
        assert_eq!(StreamKernel::Gather.bytes(1000, 4, 8), 4000.0 + 8000.0);
        assert_eq!(StreamKernel::ScatterAdd.bytes(1000, 4, 8), 4000.0 + 4000.0 + 2.0 * 125.0 * 4.0);
        assert_eq!(StreamKernel::Triad.flops(10), 20.0);
    }

    #[test]
    fn relative_error_flags_nan_and_mismatch() {
        assert_eq!(relative_error(&[1.0f32, 2.0], &[1.0, 2.0]), 0.0);
        assert!(relative_error(&[f32::NAN, 2.0], &[1.0, 2.0]).is_nan());
        assert!(relative_error(&[1.0f64], &[1.0, 2.0]).is_nan());
        assert!((relative_error(&[1.0f64, 2.0], &[1.0, 2.5]) - 0.5 / (1.0f64 + 6.25).sqrt()).abs() < 1e-15);
    }

    #[test]
    fn scatter_reference_sums_fan_in_contributions() {
        let p = Problem { scatter_fan_in: 4, ..Default::default() };
        let d = HostData::<f32>::new(StreamKernel::ScatterAdd, 64, &p);
        let y = d.reference(StreamKernel::ScatterAdd, 0.0);
        assert_eq!(y.len(), 16);
        let total: f64 = d.a.iter().map(|x| *x as f64).sum();
        assert_eq!(y.iter().sum::<f64>(), total);
        // Every target receives exactly fan_in contributions.
        let mut count = vec![0; 16];
        for &j in &d.map {
            count[j as usize] += 1;
        }
        assert!(count.iter().all(|&c| c == 4));
    }
}
