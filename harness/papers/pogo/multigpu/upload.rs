//! One part of a split model on its GPU: its vectors, sources, receivers and trace, the
//! method's matrix and kernels (our sliced ELL, or the paper's kernel on the part's blocks), and
//! what its exchange reads and writes. Made before any timer.

use super::split::{Link, Part};
use super::split_blocks::PartBlocks;
use crate::benchmark::ModuleCache;
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, Kernel};
use crate::kernels::Defines;
use crate::pogo::kernel::{Pack, PackPlanes, StepBlockFrom, StepSellRows, UnpackPlanes};
use crate::pogo::sell::SlicedEll;
use crate::pogo::spec::Method;
use crate::real::Real;
use crate::Precision;

/// Where a part's node k lies in U on its GPU: its `dim` values interleaved (`dim k + a`; the
/// sliced ELL), or on the arrangement's two planes (`at[k]`, `slots + at[k]`; the paper's
/// kernel, 2D only).
pub(super) enum Place {
    Interleaved { nodes: usize, dim: usize },
    Planes { at: Vec<u32>, slots: usize },
}

impl Place {
    /// Where node k's value in direction a lies.
    pub(super) fn at(&self, k: usize, a: usize) -> usize {
        match self {
            Place::Interleaved { dim, .. } => dim * k + a,
            Place::Planes { at, slots } => a * slots + at[k] as usize,
        }
    }
    /// Dofs per node.
    pub(super) fn dim(&self) -> usize {
        match self {
            Place::Interleaved { dim, .. } => *dim,
            Place::Planes { .. } => 2,
        }
    }
    /// Entries of U.
    pub(super) fn len(&self) -> usize {
        match self {
            Place::Interleaved { nodes, dim } => dim * nodes,
            Place::Planes { slots, .. } => 2 * slots,
        }
    }
}

/// The step's own arrays and kernel: the sliced ELL's rows, or the paper's kernel on blocks
/// (`sent` blocks first, then the interior up to `owned`; the halo blocks after are loaded only).
pub(super) enum Steps {
    Sell {
        slice_ptr: Buffer,
        col: Buffer,
        kvals: Buffer,
        rows: Kernel,
        pack: Kernel,
    },
    Blocks {
        table: Buffer,
        lptr: Buffer,
        kvals: Buffer,
        kernel: Kernel,
        pack: Kernel,
        unpack: Kernel,
        blocks: usize,
        sent: usize,
        owned: usize,
    },
}

/// One part's arrays on its GPU.
pub(super) struct OnGpu {
    pub(super) u: [Buffer; 3],
    pub(super) cp: Buffer,
    pub(super) src_dof: Buffer,
    pub(super) src_coef: Buffer,
    pub(super) rec_dof: Buffer,
    pub(super) nsrc: usize,
    pub(super) nrec: usize,
    pub(super) trace: Buffer,
    pub(super) trace_rows: usize,
    pub(super) place: Place,
    /// Each send's source.
    pub(super) sends_from: Vec<SendFrom>,
    /// The sends that are not one contiguous run of U, packed by one launch (None: every send
    /// is one).
    pub(super) packed: Option<Staging>,
    /// The paper's kernel: the halo received end to end, then written into the planes by one
    /// launch (None: received in place, the sliced ELL's halo being one run per neighbour).
    pub(super) unpacked: Option<Staging>,
    pub(super) steps: Steps,
    /// K' was stored with 16-bit column offsets (the sliced ELL; the paper's kernel's link
    /// pointers are 16-bit always).
    pub(super) col16: bool,
}

impl OnGpu {
    pub(super) fn bytes(&self) -> usize {
        let staged: usize = self.packed.iter().chain(&self.unpacked).map(|p| p.at.bytes() + p.out.bytes()).sum();
        let own = match &self.steps {
            Steps::Sell { slice_ptr, col, kvals, .. } => slice_ptr.bytes() + col.bytes() + kvals.bytes(),
            Steps::Blocks { table, lptr, kvals, .. } => table.bytes() + lptr.bytes() + kvals.bytes(),
        };
        self.u.iter().map(Buffer::bytes).sum::<usize>() + self.cp.bytes() + self.trace.bytes() + own + staged
    }
}

/// Where a send's values are read each increment: U_next in place from a node position (its
/// positions are one contiguous run), or the packed staging from a node offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SendFrom {
    InPlace(usize),
    Staged(usize),
}

/// Each send's source, and the positions the staging packs: the sends that are not one
/// contiguous run (every send where `in_place` is false), end to end. Worked out once, when the
/// part is uploaded.
pub(super) fn send_sources(sends: &[Link], in_place: bool) -> (Vec<SendFrom>, Vec<u32>) {
    let mut staged = Vec::new();
    let from = sends
        .iter()
        .map(|l| match l.contiguous().filter(|_| in_place) {
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

/// A staging buffer of `dim` values per node and the positions one launch packs from or
/// unpacks to.
pub(super) struct Staging {
    pub(super) at: Buffer,
    pub(super) out: Buffer,
    pub(super) count: usize,
}

impl Staging {
    fn upload(dev: &dyn Device, at: &[u32], dim: usize, s: usize) -> DeviceResult<Option<Staging>> {
        if at.is_empty() {
            return Ok(None);
        }
        Ok(Some(Staging { out: dev.alloc(dim * at.len() * s)?, at: dev.upload_slice(at)?, count: at.len() }))
    }
}

/// What a part is stepped with: the method, and the part's arrangement for the paper's kernel.
#[derive(Clone, Copy)]
pub(super) struct PartMethod<'a> {
    pub(super) method: Method,
    pub(super) blocks: Option<&'a PartBlocks>,
}

fn upload_k<T: Real>(dev: &dyn Device, kf32: bool, v: &[f64]) -> DeviceResult<Buffer> {
    if kf32 {
        dev.upload_slice(&v.iter().map(|&x| x as f32).collect::<Vec<f32>>())
    } else {
        dev.upload_slice(&v.iter().map(|&x| T::from_f64(x)).collect::<Vec<T>>())
    }
}

fn sell_steps<T: Real>(dev: &dyn Device, modules: &mut ModuleCache, part: &Part, kf32: bool) -> DeviceResult<(Steps, bool)> {
    let sell = SlicedEll::new(&part.sys, 1);
    let short = sell.col16();
    let col16 = short.is_some();
    let col = match short {
        Some(c) => dev.upload_slice(&c)?,
        None => dev.upload_slice(&sell.col)?,
    };
    let defines = Defines::for_precision(T::PRECISION)
        .with("KVAL_IS_DOUBLE", (T::PRECISION == Precision::F64 && !kf32) as u8)
        .with("COL16", col16 as u8)
        .with("DIM", sell.dim);
    let steps = Steps::Sell {
        slice_ptr: dev.upload_slice(&sell.slice_ptr)?,
        col,
        kvals: upload_k::<T>(dev, kf32, &sell.vals)?,
        rows: modules.kernel_for::<StepSellRows>(dev, &crate::pogo::kernel::POGO, &defines)?,
        pack: modules.kernel_for::<Pack>(dev, &crate::pogo::kernel::POGO, &Defines::for_precision(T::PRECISION).with("DIM", sell.dim))?,
    };
    Ok((steps, col16))
}

fn block_steps<T: Real>(dev: &dyn Device, modules: &mut ModuleCache, pb: &PartBlocks, kf32: bool) -> DeviceResult<Steps> {
    let double_k = T::PRECISION == Precision::F64 && !kf32;
    // As on one GPU: four blocks of 512 threads an SM where K' is f32.
    let defines = Defines::for_precision(T::PRECISION)
        .with("PLINKS", pb.data.arr.links)
        .with("KVAL_IS_DOUBLE", double_k as u8)
        .with("PB_MIN_BLOCKS", 4 - double_k as u8);
    let plain = Defines::for_precision(T::PRECISION);
    Ok(Steps::Blocks {
        table: dev.upload_slice(&pb.data.arr.table)?,
        lptr: dev.upload_slice(&pb.data.lptr)?,
        kvals: upload_k::<T>(dev, kf32, &pb.data.kvals)?,
        kernel: modules.kernel_for::<StepBlockFrom>(dev, &crate::pogo::kernel::POGO, &defines)?,
        pack: modules.kernel_for::<PackPlanes>(dev, &crate::pogo::kernel::POGO, &plain)?,
        unpack: modules.kernel_for::<UnpackPlanes>(dev, &crate::pogo::kernel::POGO, &plain)?,
        blocks: pb.data.arr.blocks,
        sent: pb.sent,
        owned: pb.owned,
    })
}

/// C', the sources and the receivers where the part's U lies: the part's own numbering
/// (interleaved), or the arrangement's positions.
fn operators<'p>(part: &'p Part, pm: PartMethod<'p>) -> (&'p [f64], &'p [u32], &'p [f64], &'p [u32]) {
    match pm.blocks {
        Some(pb) => {
            let p = &pb.data.placed;
            (&p.cp, &p.src_dof, &p.src_coef, &p.rec_dof)
        }
        None => {
            let s = &part.sys;
            (&s.cp, &s.src_dof, &s.src_coef, &s.rec_dof)
        }
    }
}

pub(super) fn upload_part<T: Real>(
    dev: &dyn Device,
    modules: &mut ModuleCache,
    part: &Part,
    pm: PartMethod,
    trace_rows: usize,
) -> DeviceResult<OnGpu> {
    let to_t = |v: &[f64]| v.iter().map(|&x| T::from_f64(x)).collect::<Vec<T>>();
    let s = std::mem::size_of::<T>();
    let kf32 = pm.method.kf32();
    let (steps, col16, place) = match pm.blocks {
        Some(pb) => {
            let at = (0..part.len() as u32).map(|k| pb.position(k)).collect();
            (block_steps::<T>(dev, modules, pb, kf32)?, true, Place::Planes { at, slots: pb.data.slots })
        }
        None => {
            let (steps, col16) = sell_steps::<T>(dev, modules, part, kf32)?;
            (steps, col16, Place::Interleaved { nodes: part.len(), dim: part.sys.dim })
        }
    };
    let planes = matches!(place, Place::Planes { .. });
    let (sends_from, staged) = send_sources(&part.sends, !planes);
    let positions = |at: Vec<u32>| -> Vec<u32> { at.iter().map(|&k| place.at(k as usize, 0) as u32).collect() };
    let dim = place.dim();
    let packed = Staging::upload(dev, &if planes { positions(staged) } else { staged }, dim, s)?;
    let halo: Vec<u32> = part.recvs.iter().flat_map(|l| l.at.iter().copied()).collect();
    let unpacked = if planes { Staging::upload(dev, &positions(halo), dim, s)? } else { None };
    let (cp, src_dof, src_coef, rec_dof) = operators(part, pm);
    let n = place.len();
    Ok(OnGpu {
        u: [dev.alloc(n * s)?, dev.alloc(n * s)?, dev.alloc(n * s)?],
        cp: dev.upload_slice(&to_t(cp))?,
        src_dof: dev.upload_slice(&src_dof.iter().copied().chain([0]).collect::<Vec<u32>>())?,
        src_coef: dev.upload_slice(&to_t(&src_coef.iter().copied().chain([0.0]).collect::<Vec<f64>>()))?,
        rec_dof: dev.upload_slice(&rec_dof.iter().copied().chain([0]).collect::<Vec<u32>>())?,
        nsrc: src_dof.len(),
        nrec: rec_dof.len(),
        trace: dev.alloc((trace_rows * rec_dof.len()).max(1) * s)?,
        trace_rows,
        place,
        sends_from,
        packed,
        unpacked,
        steps,
        col16,
    })
}

#[cfg(test)]
mod tests {
    use super::{send_sources, SendFrom};
    use crate::pogo::multigpu::split::Link;

    #[test]
    fn sends_read_in_place_where_contiguous_and_from_the_staging_end_to_end_else() {
        let link = |at: &[u32]| Link { peer: 1, at: at.to_vec() };
        let sends = [link(&[5, 6, 7]), link(&[1, 3]), link(&[9]), link(&[2, 0])];
        let (from, staged) = send_sources(&sends, true);
        assert_eq!(from, [SendFrom::InPlace(5), SendFrom::Staged(0), SendFrom::InPlace(9), SendFrom::Staged(2)]);
        assert_eq!(staged, [1, 3, 2, 0]);
        // On the arrangement's planes nothing is read in place.
        let (from, staged) = send_sources(&sends, false);
        assert_eq!(from, [SendFrom::Staged(0), SendFrom::Staged(3), SendFrom::Staged(5), SendFrom::Staged(6)]);
        assert_eq!(staged, [5, 6, 7, 1, 3, 9, 2, 0]);
    }
}
