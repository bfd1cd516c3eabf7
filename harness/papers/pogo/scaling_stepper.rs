//! A split model's parts on their GPUs and one increment of them: each part's sliced ELL,
//! vectors, sources and receivers on its GPU; on several GPUs an increment forks (the sent rows,
//! their packing and the NCCL exchange on each GPU's exchange stream, the interior rows beside
//! them on its own stream) and joins before the next. One GPU steps every row in one launch.

use super::kernel::{Pack, Rotation, SellArrays, Sources, StepSellRows, TraceRow};
use super::sell::SlicedEll;
use super::spec::Method;
use super::split::{Link, Part, Split};
use crate::benchmark::{CaseCtx, CaseError, ModuleCache};
use crate::device::nccl::{NodeGpus, Transfer};
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, Kernel, Launch, RealArg};
use crate::kernels::Defines;
use crate::real::Real;
use crate::Precision;

/// What an increment writes besides U: the force's amplitude and the trace row.
#[derive(Clone, Copy)]
pub(super) struct Writes {
    pub(super) amp: f64,
    pub(super) row: i64,
}

/// The GPUs a case runs on: the runner's own device, or P devices of the node with NCCL.
pub(super) enum Gpus<'a> {
    One(&'a dyn Device),
    Node(NodeGpus),
}

impl Gpus<'_> {
    pub(super) fn dev(&self, r: usize) -> &dyn Device {
        match self {
            Gpus::One(d) => *d,
            Gpus::Node(n) => n.device(r),
        }
    }
    pub(super) fn time(&self, body: &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<f64> {
        match self {
            Gpus::One(d) => d.time_events_open(body),
            Gpus::Node(n) => n.time(body),
        }
    }
    pub(super) fn synchronize(&self) -> DeviceResult<()> {
        match self {
            Gpus::One(d) => d.synchronize(),
            Gpus::Node(n) => n.synchronize(),
        }
    }
}

/// One part's arrays on its GPU.
pub(super) struct OnGpu {
    u: [Buffer; 3],
    cp: Buffer,
    slice_ptr: Buffer,
    col: Buffer,
    kvals: Buffer,
    src_dof: Buffer,
    src_coef: Buffer,
    rec_dof: Buffer,
    nsrc: usize,
    nrec: usize,
    trace: Buffer,
    trace_rows: usize,
    /// Each send's source.
    sends_from: Vec<SendFrom>,
    /// The sends that are not one contiguous run, packed by one launch (None: every send is).
    packed: Option<Packed>,
    rows: Kernel,
    pack: Kernel,
}

impl OnGpu {
    pub(super) fn bytes(&self) -> usize {
        let packs: usize = self.packed.iter().map(|p| p.at.bytes() + p.out.bytes()).sum();
        self.u.iter().map(Buffer::bytes).sum::<usize>()
            + [&self.cp, &self.slice_ptr, &self.col, &self.kvals, &self.trace].iter().map(|b| b.bytes()).sum::<usize>()
            + packs
    }
}

/// Where a send's values are read each increment: U_next in place from a node position (its
/// positions are one contiguous run), or the packed staging from a node offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SendFrom {
    InPlace(usize),
    Staged(usize),
}

/// Each send's source, and the positions the staging packs: the sends that are not one
/// contiguous run, end to end. Worked out once, when the part is uploaded.
fn send_sources(sends: &[Link]) -> (Vec<SendFrom>, Vec<u32>) {
    let mut staged = Vec::new();
    let from = sends
        .iter()
        .map(|l| match l.contiguous() {
            Some(first) => SendFrom::InPlace(first as usize),
            None => {
                let f = staged.len();
                staged.extend_from_slice(&l.at);
                SendFrom::Staged(f)
            }
        })
        .collect();
    (from, staged)
}

/// The staging that one launch packs every non-contiguous send into, and the positions it reads.
struct Packed {
    at: Buffer,
    out: Buffer,
    count: usize,
}

impl Packed {
    fn upload(dev: &dyn Device, staged: &[u32], s: usize) -> DeviceResult<Option<Packed>> {
        if staged.is_empty() {
            return Ok(None);
        }
        Ok(Some(Packed { out: dev.alloc(2 * staged.len() * s)?, at: dev.upload_slice(staged)?, count: staged.len() }))
    }
}

pub(super) struct Stepper<'a, T: Real> {
    pub(super) gpus: Gpus<'a>,
    split: &'a Split,
    pub(super) parts: Vec<OnGpu>,
    pub(super) col16: bool,
    _t: std::marker::PhantomData<T>,
}

fn upload_part<T: Real>(
    dev: &dyn Device,
    modules: &mut ModuleCache,
    part: &Part,
    method: Method,
    trace_rows: usize,
) -> DeviceResult<(OnGpu, bool)> {
    let to_t = |v: &[f64]| v.iter().map(|&x| T::from_f64(x)).collect::<Vec<T>>();
    let sell = SlicedEll::new(&part.sys, 1);
    let short = sell.col16();
    let col16 = short.is_some();
    let kf32 = method.kf32();
    let kvals = if kf32 {
        dev.upload_slice(&sell.vals.iter().map(|&v| v as f32).collect::<Vec<f32>>())?
    } else {
        dev.upload_slice(&to_t(&sell.vals))?
    };
    let col = match short {
        Some(c) => dev.upload_slice(&c)?,
        None => dev.upload_slice(&sell.col)?,
    };
    let sys = &part.sys;
    let defines = Defines::for_precision(T::PRECISION)
        .with("KVAL_IS_DOUBLE", (T::PRECISION == Precision::F64 && !kf32) as u8)
        .with("COL16", col16 as u8);
    let ndof = 2 * part.len();
    let s = std::mem::size_of::<T>();
    let nrec = sys.rec_dof.len();
    let (sends_from, staged) = send_sources(&part.sends);
    let packed = Packed::upload(dev, &staged, s)?;
    let on = OnGpu {
        u: [dev.alloc(ndof * s)?, dev.alloc(ndof * s)?, dev.alloc(ndof * s)?],
        cp: dev.upload_slice(&to_t(&sys.cp))?,
        slice_ptr: dev.upload_slice(&sell.slice_ptr)?,
        col,
        kvals,
        src_dof: dev.upload_slice(&sys.src_dof.iter().copied().chain([0]).collect::<Vec<u32>>())?,
        src_coef: dev.upload_slice(&to_t(&sys.src_coef.iter().copied().chain([0.0]).collect::<Vec<f64>>()))?,
        rec_dof: dev.upload_slice(&sys.rec_dof.iter().copied().chain([0]).collect::<Vec<u32>>())?,
        nsrc: sys.src_dof.len(),
        nrec,
        trace: dev.alloc((trace_rows * nrec).max(1) * s)?,
        trace_rows,
        sends_from,
        packed,
        rows: modules.kernel_for::<StepSellRows>(dev, &super::kernel::POGO, &defines)?,
        pack: modules.kernel_for::<Pack>(dev, &super::kernel::POGO, &Defines::for_precision(T::PRECISION))?,
    };
    Ok((on, col16))
}

impl<'a, T: Real> Stepper<'a, T> {
    pub(super) fn new(
        ctx: &mut CaseCtx,
        dev: &'a dyn Device,
        split: &'a Split,
        method: Method,
        trace_rows: usize,
    ) -> Result<Self, CaseError> {
        let p = split.parts.len();
        let gpus = if p == 1 { Gpus::One(dev) } else { Gpus::Node(NodeGpus::open(p)?) };
        let mut parts = Vec::with_capacity(p);
        let mut col16 = true;
        for (r, part) in split.parts.iter().enumerate() {
            let mut own = ModuleCache::default();
            let modules = if p == 1 { &mut *ctx.modules } else { &mut own };
            let (on, c16) = upload_part::<T>(gpus.dev(r), modules, part, method, trace_rows)?;
            col16 &= c16;
            parts.push(on);
        }
        Ok(Stepper { gpus, split, parts, col16, _t: std::marker::PhantomData })
    }

    /// U_prev = U_curr = `start` (dof order; zeros where None), U_next and the traces poisoned.
    pub(super) fn load(&mut self, start: Option<&[f64]>) -> Result<(), CaseError> {
        for (r, (part, on)) in self.split.parts.iter().zip(&mut self.parts).enumerate() {
            let dev = self.gpus.dev(r);
            let local: Vec<T> = match start {
                Some(u) => part.node_at.iter().flat_map(|&i| [u[2 * i as usize], u[2 * i as usize + 1]]).map(T::from_f64).collect(),
                None => vec![T::from_f64(0.0); 2 * part.len()],
            };
            for b in &mut on.u[..2] {
                dev.upload(b, bytemuck::cast_slice(&local))?;
            }
            // A module cache belongs to one device.
            let mut modules = ModuleCache::default();
            modules.poison(dev, &on.u[2])?;
            modules.poison(dev, &on.trace)?;
            dev.synchronize()?;
        }
        Ok(())
    }

    /// Part r's step of rows first..last in increment k.
    fn rows(&self, r: usize, k: usize, at: Writes, first: usize, last: usize) -> StepSellRows<'_> {
        let on = &self.parts[r];
        let sell = SellArrays { slice_ptr: &on.slice_ptr, col: &on.col, kp: &on.kvals, cp: &on.cp };
        let sources = Sources {
            src_dof: &on.src_dof,
            src_coef: &on.src_coef,
            nsrc: on.nsrc as u32,
            amp: RealArg::new(T::PRECISION, at.amp),
            rec_dof: &on.rec_dof,
            nrec: on.nrec as u32,
        };
        let u = Rotation { u_prev: &on.u[k % 3], u_curr: &on.u[(k + 1) % 3], u_next: &on.u[(k + 2) % 3] };
        let (first, last, trace) = (first as i64, last as i64, TraceRow { trace: &on.trace, row: at.row });
        StepSellRows { sell, u, first, last, sources, trace }
    }

    /// Part r's interior rows (every row on one GPU), on its GPU's own stream.
    fn launch_interior(&self, r: usize, k: usize, at: Writes) -> DeviceResult<()> {
        let part = &self.split.parts[r];
        let last = if self.split.parts.len() == 1 { part.owned } else { part.interior };
        if last == 0 {
            return Ok(());
        }
        let step = self.rows(r, k, at, 0, last);
        self.gpus.dev(r).launch_with(&self.parts[r].rows, Launch::cover(last, 256), &step)
    }

    /// Part r's sent rows and the packing of its sends that are not contiguous, on its exchange
    /// stream (after a fork).
    fn launch_sent(&self, nodes: &NodeGpus, r: usize, k: usize, at: Writes) -> DeviceResult<()> {
        let (part, on) = (&self.split.parts[r], &self.parts[r]);
        if part.owned > part.interior {
            let step = self.rows(r, k, at, part.interior, part.owned);
            nodes.launch_beside(r, &on.rows, Launch::cover(part.owned - part.interior, 256), &step)?;
        }
        if let Some(p) = &on.packed {
            let args = Pack { at: &p.at, u: &on.u[(k + 2) % 3], out: &p.out, count: p.count as u32 };
            nodes.launch_beside(r, &on.pack, Launch::cover(p.count, 256), &args)?;
        }
        Ok(())
    }

    /// Increment k's sends and receives, every part's, queued on the exchange streams.
    fn exchange(&self, nodes: &NodeGpus, k: usize) -> DeviceResult<()> {
        let s = std::mem::size_of::<T>();
        let mut sends = Vec::with_capacity(self.parts.len());
        let mut recvs = Vec::with_capacity(self.parts.len());
        for (part, on) in self.split.parts.iter().zip(&self.parts) {
            let next = &on.u[(k + 2) % 3];
            sends.push(
                part.sends.iter().zip(&on.sends_from).map(|(l, &from)| sent(l, from, on.packed.as_ref(), next, s)).collect::<Vec<_>>(),
            );
            let recv = |l: &Link| Transfer { peer: l.peer, buf: next, offset: 2 * s * l.at[0] as usize, count: 2 * l.at.len() };
            recvs.push(part.recvs.iter().map(recv).collect::<Vec<_>>());
        }
        nodes.exchange(T::PRECISION, &sends, &recvs)
    }

    /// Increment k. On one GPU, every row in one launch. On several, forked: each GPU's sent
    /// rows, the packing and the exchange on its exchange stream, the interior rows beside them
    /// on its own stream, joined before the next increment. `steps`/`swap` leave out either
    /// side (for timing the exchange and the steps alone).
    pub(super) fn increment(&self, k: usize, at: Writes, steps: bool, swap: bool) -> DeviceResult<()> {
        let Gpus::Node(nodes) = &self.gpus else {
            return if steps { self.launch_interior(0, k, at) } else { Ok(()) };
        };
        nodes.fork()?;
        if steps {
            (0..self.parts.len()).try_for_each(|r| self.launch_sent(nodes, r, k, at))?;
        }
        if swap {
            self.exchange(nodes, k)?;
        }
        if steps {
            (0..self.parts.len()).try_for_each(|r| self.launch_interior(r, k, at))?;
        }
        nodes.join()
    }

    pub(super) fn nccl_version(&self) -> Option<i32> {
        match &self.gpus {
            Gpus::Node(n) => n.nccl_version(),
            Gpus::One(_) => None,
        }
    }

    /// The model's U (dof order) after increment k's predecessor: each part's current vector.
    pub(super) fn gather_u(&self, k: usize) -> DeviceResult<Vec<f64>> {
        let mut curr = Vec::with_capacity(self.parts.len());
        for (r, (part, on)) in self.split.parts.iter().zip(&self.parts).enumerate() {
            let v: Vec<f64> =
                self.gpus.dev(r).download_vec::<T>(&on.u[(k + 1) % 3], 2 * part.len())?.into_iter().map(|x| x.to_f64()).collect();
            curr.push(v);
        }
        let refs: Vec<&[f64]> = curr.iter().map(Vec::as_slice).collect();
        Ok(self.split.gather(&refs))
    }

    /// The model's receivers' traces (x, y per receiver, step-major) from the parts' rows.
    pub(super) fn gather_trace(&self, width: usize) -> DeviceResult<Vec<f64>> {
        let rows = self.parts.first().map_or(0, |p| p.trace_rows);
        let mut out = vec![f64::NAN; rows * width];
        for (r, (part, on)) in self.split.parts.iter().zip(&self.parts).enumerate() {
            let got = self.gpus.dev(r).download_vec::<T>(&on.trace, rows * on.nrec)?;
            for step in 0..rows {
                for (t, &g) in part.rec_index.iter().enumerate() {
                    out[step * width + g] = got[step * on.nrec + t].to_f64();
                }
            }
        }
        Ok(out)
    }
}

/// A send's transfer (`l`, read from `from`): its run of the packed staging, or U_next in place
/// (`s`: bytes per value). A send of no nodes reads nothing, from U_next.
fn sent<'b>(l: &Link, from: SendFrom, packed: Option<&'b Packed>, next: &'b Buffer, s: usize) -> Transfer<'b> {
    let count = 2 * l.at.len();
    match (from, packed) {
        (SendFrom::Staged(f), Some(p)) => Transfer { peer: l.peer, buf: &p.out, offset: 2 * s * f, count },
        (SendFrom::InPlace(q), _) => Transfer { peer: l.peer, buf: next, offset: 2 * s * q, count },
        (SendFrom::Staged(_), None) => Transfer { peer: l.peer, buf: next, offset: 0, count },
    }
}

#[cfg(test)]
mod tests {
    use super::{send_sources, SendFrom};
    use crate::pogo::split::Link;

    #[test]
    fn sends_read_in_place_where_contiguous_and_from_the_staging_end_to_end_else() {
        let link = |at: &[u32]| Link { peer: 1, at: at.to_vec() };
        let sends = [link(&[5, 6, 7]), link(&[1, 3]), link(&[9]), link(&[2, 0])];
        let (from, staged) = send_sources(&sends);
        assert_eq!(from, [SendFrom::InPlace(5), SendFrom::Staged(0), SendFrom::InPlace(9), SendFrom::Staged(2)]);
        assert_eq!(staged, [1, 3, 2, 0]);
    }
}
