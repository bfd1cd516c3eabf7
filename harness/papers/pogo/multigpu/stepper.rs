//! A split model's parts on their GPUs and one increment of them. On several GPUs an increment
//! forks: the sent rows (the sliced ELL) or the sent blocks (the paper's kernel), their packing,
//! the NCCL exchange and, on the paper's kernel's planes, the unpacking of the halo go on each
//! GPU's exchange stream, while the interior rows or blocks run beside them on its own stream;
//! it joins before the next. One GPU steps every row or block in one launch.

use super::split::{Link, Split};
use super::split_blocks::PartBlocks;
use super::upload::{upload_part, OnGpu, PartMethod, SendFrom, Staging, Steps};
use crate::benchmark::{CaseCtx, CaseError, ModuleCache};
use crate::device::nccl::{NodeGpus, Transfer};
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, Launch, RealArg};
use crate::pogo::kernel::{Pack, PackPlanes, Rotation, SellArrays, Sources, StepBlockFrom, StepSellRows, TraceRow, UnpackPlanes};
use crate::pogo::spec::Method;
use crate::real::Real;

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

pub(super) struct Stepper<'a, T: Real> {
    pub(super) gpus: Gpus<'a>,
    split: &'a Split,
    pub(super) parts: Vec<OnGpu>,
    pub(super) col16: bool,
    _t: std::marker::PhantomData<T>,
}

/// Which of a part's rows or blocks a launch steps: those it sends, its interior, or (one GPU)
/// all.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rows {
    Sent,
    Interior,
}

impl<'a, T: Real> Stepper<'a, T> {
    /// The split's parts on their GPUs, stepped by `method`; `blocks`: each part's arrangement
    /// for the paper's kernel (None: the sliced ELL).
    pub(super) fn new(
        ctx: &mut CaseCtx,
        dev: &'a dyn Device,
        split: &'a Split,
        method: Method,
        blocks: Option<&'a [PartBlocks]>,
        trace_rows: usize,
    ) -> Result<Self, CaseError> {
        let p = split.parts.len();
        let gpus = if p == 1 { Gpus::One(dev) } else { Gpus::Node(NodeGpus::open(p)?) };
        let mut parts = Vec::with_capacity(p);
        for (r, part) in split.parts.iter().enumerate() {
            let mut own = ModuleCache::default();
            let modules = if p == 1 { &mut *ctx.modules } else { &mut own };
            let pm = PartMethod { method, blocks: blocks.map(|b| &b[r]) };
            parts.push(upload_part::<T>(gpus.dev(r), modules, part, pm, trace_rows)?);
        }
        let col16 = parts.iter().all(|p| p.col16);
        Ok(Stepper { gpus, split, parts, col16, _t: std::marker::PhantomData })
    }

    /// U_prev = U_curr = `start` (dof order; zeros where None), U_next and the traces poisoned.
    pub(super) fn load(&mut self, start: Option<&[f64]>) -> Result<(), CaseError> {
        for (r, (part, on)) in self.split.parts.iter().zip(&mut self.parts).enumerate() {
            let dev = self.gpus.dev(r);
            let mut local = vec![T::from_f64(0.0); on.place.len()];
            let d = on.place.dim();
            if let Some(u) = start {
                for (k, &i) in part.node_at.iter().enumerate() {
                    (0..d).for_each(|a| local[on.place.at(k, a)] = T::from_f64(u[d * i as usize + a]));
                }
            }
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

    /// Part r's sources and receivers at increment k's writes.
    fn sources(&self, r: usize, at: Writes) -> (Sources<'_>, TraceRow<'_>) {
        let on = &self.parts[r];
        let sources = Sources {
            src_dof: &on.src_dof,
            src_coef: &on.src_coef,
            nsrc: on.nsrc as u32,
            amp: RealArg::new(T::PRECISION, at.amp),
            rec_dof: &on.rec_dof,
            nrec: on.nrec as u32,
        };
        (sources, TraceRow { trace: &on.trace, row: at.row })
    }

    /// Part r's step of `which` rows or blocks in increment k, on its own stream (`beside`:
    /// None) or on its exchange stream.
    fn step(&self, r: usize, k: usize, at: Writes, which: Rows, beside: Option<&NodeGpus>) -> DeviceResult<()> {
        let (part, on) = (&self.split.parts[r], &self.parts[r]);
        let u = Rotation { u_prev: &on.u[k % 3], u_curr: &on.u[(k + 1) % 3], u_next: &on.u[(k + 2) % 3] };
        let (sources, trace) = self.sources(r, at);
        match &on.steps {
            Steps::Sell { slice_ptr, col, kvals, rows, .. } => {
                let (first, last) = match which {
                    Rows::Sent => (part.interior, part.owned),
                    Rows::Interior => (0, part.interior),
                };
                if first == last {
                    return Ok(());
                }
                let sell = SellArrays { slice_ptr, col, kp: kvals, cp: &on.cp };
                let args = StepSellRows { sell, u, first: first as i64, last: last as i64, sources, trace };
                self.launch(r, beside, rows, Launch::cover(last - first, 256), &args)
            }
            Steps::Blocks { table, lptr, kvals, kernel, blocks, sent, owned, .. } => {
                let (first, last) = match which {
                    Rows::Sent => (0, *sent),
                    Rows::Interior => (*sent, *owned),
                };
                if first == last {
                    return Ok(());
                }
                let args =
                    StepBlockFrom { table, lptr, kp: kvals, cp: &on.cp, u, nblocks: *blocks as u32, first: first as u32, sources, trace };
                self.launch(r, beside, kernel, Launch { groups: last - first, group_size: crate::pogo::arrange::BLOCK }, &args)
            }
        }
    }

    /// A launch on part r's own stream, or beside it on its exchange stream.
    fn launch<A: crate::device::KernelArgs>(
        &self,
        r: usize,
        beside: Option<&NodeGpus>,
        kernel: &crate::device::Kernel,
        launch: Launch,
        args: &A,
    ) -> DeviceResult<()> {
        match beside {
            Some(nodes) => nodes.launch_beside(r, kernel, launch, args),
            None => self.gpus.dev(r).launch_with(kernel, launch, args),
        }
    }

    /// Part r's sent rows or blocks and the packing of its staged sends, on its exchange stream
    /// (after a fork).
    fn launch_sent(&self, nodes: &NodeGpus, r: usize, k: usize, at: Writes) -> DeviceResult<()> {
        self.step(r, k, at, Rows::Sent, Some(nodes))?;
        let on = &self.parts[r];
        let Some(p) = &on.packed else { return Ok(()) };
        let next = &on.u[(k + 2) % 3];
        let cover = Launch::cover(p.count, 256);
        match &on.steps {
            Steps::Sell { pack, .. } => {
                nodes.launch_beside(r, pack, cover, &Pack { at: &p.at, u: next, out: &p.out, count: p.count as u32 })
            }
            Steps::Blocks { pack, .. } => {
                let args = PackPlanes { at: &p.at, u: next, out: &p.out, count: p.count as u32, slots: (on.place.len() / 2) as i64 };
                nodes.launch_beside(r, pack, cover, &args)
            }
        }
    }

    /// The received halo written into the planes (the paper's kernel), on the exchange stream
    /// after the exchange.
    fn launch_unpack(&self, nodes: &NodeGpus, r: usize, k: usize) -> DeviceResult<()> {
        let on = &self.parts[r];
        let (Some(p), Steps::Blocks { unpack, .. }) = (&on.unpacked, &on.steps) else { return Ok(()) };
        let args =
            UnpackPlanes { at: &p.at, input: &p.out, u: &on.u[(k + 2) % 3], count: p.count as u32, slots: (on.place.len() / 2) as i64 };
        nodes.launch_beside(r, unpack, Launch::cover(p.count, 256), &args)
    }

    /// Increment k's sends and receives, every part's, queued on the exchange streams.
    fn exchange(&self, nodes: &NodeGpus, k: usize) -> DeviceResult<()> {
        let s = std::mem::size_of::<T>();
        let mut sends = Vec::with_capacity(self.parts.len());
        let mut recvs = Vec::with_capacity(self.parts.len());
        for (part, on) in self.split.parts.iter().zip(&self.parts) {
            let next = &on.u[(k + 2) % 3];
            let v = Values { dim: on.place.dim(), size: s };
            sends.push(
                part.sends.iter().zip(&on.sends_from).map(|(l, &from)| sent(l, from, on.packed.as_ref(), next, v)).collect::<Vec<_>>(),
            );
            recvs.push(received(&part.recvs, on.unpacked.as_ref(), next, v));
        }
        nodes.exchange(T::PRECISION, &sends, &recvs)
    }

    /// Increment k. On one GPU, every row or block in one launch. On several, forked: each GPU's
    /// sent rows or blocks, the packing, the exchange and the unpacking on its exchange stream,
    /// the interior beside them on its own stream, joined before the next increment.
    /// `steps`/`swap` leave out either side (for timing the exchange and the steps alone).
    pub(super) fn increment(&self, k: usize, at: Writes, steps: bool, swap: bool) -> DeviceResult<()> {
        let Gpus::Node(nodes) = &self.gpus else {
            return if steps { self.step(0, k, at, Rows::Interior, None) } else { Ok(()) };
        };
        nodes.fork()?;
        if steps {
            (0..self.parts.len()).try_for_each(|r| self.launch_sent(nodes, r, k, at))?;
        }
        if swap {
            self.exchange(nodes, k)?;
            (0..self.parts.len()).try_for_each(|r| self.launch_unpack(nodes, r, k))?;
        }
        if steps {
            (0..self.parts.len()).try_for_each(|r| self.step(r, k, at, Rows::Interior, None))?;
        }
        nodes.join()
    }

    pub(super) fn nccl_version(&self) -> Option<i32> {
        match &self.gpus {
            Gpus::Node(n) => n.nccl_version(),
            Gpus::One(_) => None,
        }
    }

    /// The model's U (dof order) after increment k's predecessor: each part's owned nodes of
    /// its current vector.
    pub(super) fn gather_u(&self, k: usize) -> DeviceResult<Vec<f64>> {
        let d = self.split.dim();
        let mut out = vec![0.0; d * self.split.owner.len()];
        for (r, (part, on)) in self.split.parts.iter().zip(&self.parts).enumerate() {
            let v = self.gpus.dev(r).download_vec::<T>(&on.u[(k + 1) % 3], on.place.len())?;
            for (q, &i) in part.node_at[..part.owned].iter().enumerate() {
                (0..d).for_each(|a| out[d * i as usize + a] = v[on.place.at(q, a)].to_f64());
            }
        }
        Ok(out)
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

/// What a node's values in U take: `dim` values of `size` bytes.
#[derive(Clone, Copy)]
struct Values {
    dim: usize,
    size: usize,
}

/// A send's transfer (`l`, read from `from`): its run of the packed staging, or U_next in place.
/// A send of no nodes reads nothing, from U_next.
fn sent<'b>(l: &Link, from: SendFrom, packed: Option<&'b Staging>, next: &'b Buffer, v: Values) -> Transfer<'b> {
    let count = v.dim * l.at.len();
    let node = v.dim * v.size;
    match (from, packed) {
        (SendFrom::Staged(f), Some(p)) => Transfer { peer: l.peer, buf: &p.out, offset: node * f, count },
        (SendFrom::InPlace(q), _) => Transfer { peer: l.peer, buf: next, offset: node * q, count },
        (SendFrom::Staged(_), None) => Transfer { peer: l.peer, buf: next, offset: 0, count },
    }
}

/// A part's receives: into U_next's halo in place (its positions one run per neighbour), or
/// end to end into the staging that the unpacking writes into the planes.
fn received<'b>(recvs: &[Link], unpacked: Option<&'b Staging>, next: &'b Buffer, v: Values) -> Vec<Transfer<'b>> {
    let mut staged = 0;
    let node = v.dim * v.size;
    recvs
        .iter()
        .map(|l| {
            let count = v.dim * l.at.len();
            match unpacked {
                Some(p) => {
                    let t = Transfer { peer: l.peer, buf: &p.out, offset: node * staged, count };
                    staged += l.at.len();
                    t
                }
                None => Transfer { peer: l.peer, buf: next, offset: node * l.at[0] as usize, count },
            }
        })
        .collect()
}
