//! The device methods, written once against the `Device` trait: element matrices (Algorithm 1),
//! the symbolic kernel of a format (Algorithms 3 and 5), the numeric kernel (Algorithm 4) over
//! colors (Algorithm 6) or with atomics, and the ElemAtomic-style baseline. Every buffer is
//! allocated before the timed passes; one more pass on poisoned outputs is checked.

use super::formats::{self, Check, Span, Window};
use super::reference::Prepared;
use super::spec::{Format, Method};
use super::spmv::{self, Assembled, SpmvRun, VendorInput};
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::scan::fill_words as fill;
use crate::device::{Arg, Buffer, Device, DeviceExt, DeviceResult, Launch};
use crate::kernels::Defines;
use crate::measure::trace::mark;
use crate::measure::{run_staged, CacheMode, Staged, Timer};
use crate::real::Real;

pub use super::kernel::SANFUI;

/// Threads per block (the paper's Algorithm 1 uses 512; 256 fits the numeric kernel's registers).
const BLOCK: usize = 256;

/// Entries of a result the check holds on the host at once: 2^26 values and their indices
/// (about 1 GB in f64, against 2 billion entries at the largest box a 32-bit index reaches).
pub const CHECK_ENTRIES: usize = 1 << 26;

/// Checks a format's result where it lies, on the device, a run of nodes at a time: each run's
/// parts of the row-side (`r`; none for ELL and ELLM), column-side and value arrays are
/// downloaded into host buffers reused from run to run, then compared with the reference.
/// A run holds at most `part_entries` values (at least one node's).
pub fn check_on_device<T: Real>(
    dev: &dyn Device,
    format: Format,
    (r, c, vals): (Option<&Buffer>, &Buffer, &Buffer),
    prep: &Prepared,
    part_entries: usize,
) -> DeviceResult<Check> {
    let (nb, p) = (&prep.nb, &prep.pattern);
    let n = nb.nodes();
    // A node has at most 27 neighbours: 243 values in every format.
    let step = (part_entries / 243).max(1);
    let (mut br, mut bc, mut bv) = (Vec::<i32>::new(), Vec::<i32>::new(), Vec::<T>::new());
    let mut check = Check { worst: 0.0, structure: None };
    for a0 in (0..n).step_by(step) {
        let nodes = a0..(a0 + step).min(n);
        let [sr, sc, sv] = formats::spans(format, nb, p, nodes.clone());
        match r {
            Some(r) => fetch(dev, r, sr, &mut br)?,
            None => br.clear(),
        }
        fetch(dev, c, sc, &mut bc)?;
        fetch(dev, vals, sv, &mut bv)?;
        let part = (Window::new(&br, sr), Window::new(&bc, sc), Window::new(&bv, sv));
        check = check.and(formats::check_part(format, nb, nodes, part, prep.expected()));
    }
    Ok(check)
}

/// Downloads a span's runs, one after another, into `out` (its memory reused from part to part).
/// A new buffer comes zeroed from the allocator, untouched: its pages fault in during the
/// download's copy, on every core, rather than in a one-thread fill (0.3 s a check at 256K nodes).
fn fetch<T: bytemuck::Pod + Default>(dev: &dyn Device, buf: &Buffer, span: Span, out: &mut Vec<T>) -> DeviceResult<()> {
    let s = std::mem::size_of::<T>();
    if out.len() < span.entries() {
        *out = vec![T::default(); span.entries()];
    }
    out.truncate(span.entries());
    for ((first, len), part) in span.runs().zip(out.chunks_mut(span.len.max(1))) {
        dev.download_at(buf, first * s, bytemuck::cast_slice_mut(&mut part[..len]))?;
    }
    Ok(())
}

fn cover(n: usize) -> Launch {
    Launch::cover(n.max(1), BLOCK)
}

/// What a device method measured, and how its checked pass compared.
pub(crate) struct DeviceRun {
    pub(crate) staged: Staged,
    pub(crate) check: Check,
    /// Bytes of the method's device buffers.
    pub(crate) device_bytes: f64,
    /// Bytes of the assembled matrix in its format.
    pub(crate) storage_bytes: f64,
    /// Host seconds of the method's own pre-processing (the baseline's CSR slots).
    pub(crate) setup_s: f64,
    /// y = A x on the assembled matrix: ours, and cuSPARSE's where it has the format.
    pub(crate) spmv: Vec<SpmvRun>,
    /// Stage costs (name, bytes, flops) that depend on the method's plan (SharedNZ's lists);
    /// empty: the cost model's (cost.rs).
    pub(crate) costs: Vec<(&'static str, f64, f64)>,
    /// The method's own columns (SharedNZ's bricks and element calls).
    pub(crate) extras: Vec<(&'static str, f64)>,
}

/// The stages a method has, in table order.
pub(crate) fn stages_of(m: Method) -> Vec<(&'static str, Timer)> {
    match m {
        Method::CpuSerial | Method::CpuParallel => vec![("symbolic", Timer::HostWall), ("addto", Timer::HostWall)],
        Method::ElemAtomic => vec![("elements", Timer::DeviceEvent), ("numeric", Timer::DeviceEvent)],
        // K^e is computed inside the numeric kernel, in shared memory.
        Method::SharedNz => vec![("symbolic", Timer::DeviceEvent), ("numeric", Timer::DeviceEvent)],
        Method::CooCusparse | Method::CooRadix => vec![
            ("elements", Timer::DeviceEvent),
            ("triplets", Timer::DeviceEvent),
            ("sort", Timer::DeviceEvent),
            ("sum", Timer::DeviceEvent),
        ],
        _ if converts(m) => vec![
            ("elements", Timer::DeviceEvent),
            ("symbolic", Timer::DeviceEvent),
            ("numeric", Timer::DeviceEvent),
            ("convert", Timer::DeviceEvent),
        ],
        _ => vec![("elements", Timer::DeviceEvent), ("symbolic", Timer::DeviceEvent), ("numeric", Timer::DeviceEvent)],
    }
}

/// COOM and ELLM are converted to CSR on the device after assembly (beyond the paper): their
/// blocks are worth only what a solver can do with them.
pub(crate) fn converts(m: Method) -> bool {
    m.is_paper() && matches!(m.format(), Format::Coom | Format::Ellm)
}

pub(crate) fn run_device<T: Real>(ctx: &mut CaseCtx, dev: &dyn Device, prep: &Prepared, method: Method) -> Result<DeviceRun, CaseError> {
    if ctx.policy.modes.contains(&CacheMode::Cold) {
        return Err(CaseError::Failed("Sanfui-Sharma methods run warm only: their stages are timed back to back in one pass".into()));
    }
    let s = std::mem::size_of::<T>();
    let format = method.format();
    let (m, nb) = (&prep.mesh, &prep.nb);
    let (ne, nn) = (m.num_elements(), m.num_nodes());
    // The colored methods keep K^e in color order (ORDERED): one color's threads read
    // neighbouring words of K^e, as the atomic methods do in element order.
    let ordered = method.colored();
    let defines = Defines::for_precision(T::PRECISION)
        .with("FORMAT", format.code())
        .with("ATOMIC", method.atomic() as u8)
        .with("ORDERED", ordered as u8);
    let el = Elements::new::<T>(ctx, dev, prep, &defines, ordered)?;
    mark("sanfui: element inputs uploaded, K^e allocated");
    let (conn, ke, order) = (&el.conn, &el.ke, &el.order);
    let mut bytes = el.bytes;
    let mut up = |b: usize| bytes += b;
    let zero = ctx.modules.filler(dev)?;
    let elements_launch = |_: ()| el.launch(dev);

    if method == Method::ElemAtomic {
        // The baseline's slots (host pre-processing), interleaved like K^e.
        let t0 = std::time::Instant::now();
        let p = &prep.pattern;
        let mut slots = vec![0i32; 576 * ne];
        {
            use rayon::prelude::*;
            // A node's three rows hold the same columns, each neighbour's three dofs in a row:
            // one bisection per node pair (a, b) finds the block, whose nine entries are
            // row_ptr[3 va + m] + (offset of column 3 vb in row 3 va) + n.
            let mut cols: Vec<Option<&mut [i32]>> = slots.chunks_mut(ne.max(1)).map(Some).collect();
            let pairs: Vec<(usize, Vec<&mut [i32]>)> = (0..64)
                .map(|ab| {
                    let (a, b) = (ab / 8, ab % 8);
                    let nine = (0..9).map(|mn| cols[(3 * a + mn / 3) * 24 + 3 * b + mn % 3].take().expect("each column once")).collect();
                    (ab, nine)
                })
                .collect();
            pairs.into_par_iter().for_each(|(ab, mut nine)| {
                let (a, b) = (ab / 8, ab % 8);
                for e in 0..ne {
                    let v = m.element(e);
                    let (ra, cb) = (3 * v[a] as usize, 3 * v[b] as usize);
                    let first = p.slot(ra, cb).map(|x| x - p.row_ptr[ra] as usize);
                    for (mn, out) in nine.iter_mut().enumerate() {
                        let r = ra + mn / 3;
                        out[e] = first.map_or(-1, |k| (p.row_ptr[r] as usize + k + mn % 3) as i32);
                        debug_assert_eq!(p.slot(r, cb + mn % 3).map_or(-1, |x| x as i32), out[e]);
                    }
                }
            });
        }
        let setup_s = t0.elapsed().as_secs_f64();
        let slot = dev.upload_slice(&slots)?;
        drop(slots);
        let nnz = p.nnz();
        let vals = dev.alloc(nnz * s)?;
        up(4 * 576 * ne + nnz * s);
        let kern = ctx.modules.kernel(dev, &SANFUI, &defines, "sanfui_elem_atomic")?;
        let body = |timed: &mut dyn FnMut(&'static str, &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<()>| {
            timed("elements", &mut || elements_launch(()))?;
            timed("numeric", &mut || {
                fill(dev, &zero, &vals, 0, nnz * s / 4)?;
                dev.launch(&kern, cover(ne), &[Arg::Buf(&slot), Arg::Buf(ke), Arg::Buf(&vals), Arg::I64(ne as i64)])
            })
        };
        let staged = run_staged(ctx.policy, CacheMode::Warm, &stages_of(method), "numeric", |pass| -> Result<(), CaseError> {
            Ok(body(&mut |name, f| pass.device(dev, name, f))?)
        })?;
        for b in [ke, &vals] {
            ctx.modules.poison(dev, b)?;
        }
        body(&mut |_, f| f())?;
        // The pattern on the device: the check reads the values through it, and the SpMV uses
        // it (the baseline's slots already point into it).
        let (rp, cl) = (p.row_ptr.iter().map(|&v| v as i32).collect::<Vec<_>>(), bytemuck::cast_slice::<u32, i32>(&p.col));
        let (rp, cl) = (dev.upload_slice(&rp)?, dev.upload_slice(cl)?);
        let check = check_on_device::<T>(dev, Format::Csr, (Some(&rp), &cl, &vals), prep, CHECK_ENTRIES)?;
        let a = Assembled { format: Format::Csr, idx_r: &rp, idx_c: &cl, vals: &vals, vendor: Some(VendorInput::Csr(&rp, &cl, &vals)) };
        let spmv = spmv::measure::<T>(ctx, dev, prep, &a)?;
        return Ok(DeviceRun {
            staged,
            check,
            device_bytes: bytes as f64,
            storage_bytes: formats::storage_bytes(Format::Csr, nb, s) as f64,
            setup_s,
            spmv,
            costs: Vec::new(),
            extras: Vec::new(),
        });
    }

    // The symbolic kernel's input (the pre-processing's S^j) and the format's arrays.
    let nptr = dev.upload_slice(&nb.ptr)?;
    let nbr = dev.upload_slice(&nb.list)?;
    let (lr, lc, lv) = formats::lengths(format, nb);
    let idx_r = dev.alloc(4 * lr.max(1))?;
    let idx_c = dev.alloc(4 * lc)?;
    let vals = dev.alloc(s * lv)?;
    up(4 * (nn + 1 + nb.blocks()) + formats::storage_bytes(format, nb, s));
    // Colors: the element list (`order`) with (first, count) per color; atomics: all elements.
    let ranges: Vec<(usize, usize)> = if !method.colored() {
        vec![(0, ne)]
    } else {
        prep.colors
            .iter()
            .scan(0, |start, g| {
                *start += g.len();
                Some((*start - g.len(), g.len()))
            })
            .collect()
    };
    let (symbolic, numeric) =
        (ctx.modules.kernel(dev, &SANFUI, &defines, "sanfui_symbolic")?, ctx.modules.kernel(dev, &SANFUI, &defines, "sanfui_numeric")?);
    // The converted CSR matrix, for COOM and ELLM.
    let convert = converts(method);
    let nnz = 9 * nb.blocks();
    let csr = if convert {
        up(formats::storage_bytes(Format::Csr, nb, s));
        Some((
            dev.alloc(4 * (3 * nn + 1))?,
            dev.alloc(4 * nnz)?,
            dev.alloc(s * nnz)?,
            ctx.modules.kernel(dev, &SANFUI, &defines, "sanfui_to_csr")?,
        ))
    } else {
        None
    };
    // ellm-gather: its plan and kernels (the adjacency is host pre-processing).
    let gather = if method == Method::EllmGather {
        let g = Gather::new(ctx, dev, prep, &defines)?;
        up(g.bytes);
        Some(g)
    } else {
        None
    };
    // COO's numeric kernel finds a node's rows through the node offsets (its R has no offsets).
    let row_side: &Buffer = if format == Format::Coo { &nptr } else { &idx_r };
    let body = |timed: &mut dyn FnMut(&'static str, &mut dyn FnMut() -> DeviceResult<()>) -> DeviceResult<()>| {
        timed("elements", &mut || elements_launch(()))?;
        timed("symbolic", &mut || {
            dev.launch(&symbolic, cover(nn), &[Arg::Buf(&nptr), Arg::Buf(&nbr), Arg::Buf(&idx_r), Arg::Buf(&idx_c), Arg::I64(nn as i64)])?;
            match &gather {
                Some(g) => g.plan(dev, conn, &idx_c, nn),
                None => Ok(()),
            }
        })?;
        timed("numeric", &mut || {
            if let Some(g) = &gather {
                return g.numeric(dev, ke, ne, &vals, nn);
            }
            fill(dev, &zero, &vals, 0, lv * s / 4)?;
            for &(first, count) in &ranges {
                let args = [
                    Arg::Buf(order),
                    Arg::I64(first as i64),
                    Arg::I64(count as i64),
                    Arg::Buf(conn),
                    Arg::Buf(ke),
                    Arg::I64(ne as i64),
                    Arg::Buf(row_side),
                    Arg::Buf(&idx_c),
                    Arg::Buf(&vals),
                    Arg::I64(nn as i64),
                ];
                dev.launch(&numeric, cover(count), &args)?;
            }
            Ok(())
        })?;
        if let Some((rp, cl, cv, k)) = &csr {
            timed("convert", &mut || {
                let args =
                    [Arg::Buf(&nptr), Arg::Buf(&idx_c), Arg::Buf(&vals), Arg::Buf(rp), Arg::Buf(cl), Arg::Buf(cv), Arg::I64(nn as i64)];
                dev.launch(k, cover(formats::ELLM_WIDTH * nn), &args)
            })?;
        }
        DeviceResult::Ok(())
    };
    mark("sanfui: format buffers allocated");
    let staged = run_staged(ctx.policy, CacheMode::Warm, &stages_of(method), "numeric", |pass| -> Result<(), CaseError> {
        Ok(body(&mut |name, f| pass.device(dev, name, f))?)
    })?;
    mark("sanfui: timed passes");
    for b in [ke, &idx_r, &idx_c, &vals] {
        ctx.modules.poison(dev, b)?;
    }
    if let Some(g) = &gather {
        ctx.modules.poison(dev, &g.plan)?;
    }
    if let Some((rp, cl, cv, _)) = &csr {
        for b in [rp, cl, cv] {
            ctx.modules.poison(dev, b)?;
        }
    }
    body(&mut |_, f| f())?;
    dev.synchronize()?;
    mark("sanfui: checked pass on poisoned buffers");
    let mut check = check_on_device::<T>(dev, format, ((lr > 0).then_some(&idx_r), &idx_c, &vals), prep, CHECK_ENTRIES)?;
    mark("sanfui: downloaded and checked");
    // The converted matrix is checked too; the row takes the worse of the two.
    if let Some((rp, cl, cv, _)) = &csr {
        let converted = check_on_device::<T>(dev, Format::Csr, (Some(rp), cl, cv), prep, CHECK_ENTRIES)?;
        let converted = Check { structure: converted.structure.map(|e| format!("converted to CSR: {e}")), ..converted };
        check = check.and(converted);
        mark("sanfui: converted CSR downloaded and checked");
    }
    let vendor = match (format, &csr) {
        (Format::Csr, _) => Some(VendorInput::Csr(&idx_r, &idx_c, &vals)),
        (Format::Coom, _) => Some(VendorInput::Bsr(&nptr, &nbr, &vals)),
        (Format::Ellm, Some((rp, cl, cv, _))) => Some(VendorInput::Csr(rp, cl, cv)),
        _ => None,
    };
    let a = Assembled { format, idx_r: &idx_r, idx_c: &idx_c, vals: &vals, vendor };
    let spmv = spmv::measure::<T>(ctx, dev, prep, &a)?;
    mark("sanfui: spmv");
    Ok(DeviceRun {
        staged,
        check,
        device_bytes: bytes as f64,
        storage_bytes: formats::storage_bytes(format, nb, s) as f64,
        setup_s: gather.as_ref().map_or(0.0, |g| g.setup_s),
        spmv,
        costs: Vec::new(),
        extras: Vec::new(),
    })
}

/// ellm-gather's data and kernels: each node's elements (host pre-processing, like the
/// neighbour lists), the plan the second symbolic kernel writes (two words per ELLM block), and
/// the numeric kernel that sums each block's element blocks once.
struct Gather {
    nadj: Buffer,
    plan: Buffer,
    plan_kernel: crate::device::Kernel,
    numeric_kernel: crate::device::Kernel,
    bytes: usize,
    setup_s: f64,
}

impl Gather {
    fn new(ctx: &mut CaseCtx, dev: &dyn Device, prep: &Prepared, defines: &Defines) -> Result<Self, CaseError> {
        let t0 = std::time::Instant::now();
        let nadj = node_elements(&prep.mesh).map_err(CaseError::Failed)?;
        let setup_s = t0.elapsed().as_secs_f64();
        let nn = prep.mesh.num_nodes();
        Ok(Gather {
            nadj: dev.upload_slice(&nadj)?,
            plan: dev.alloc(4 * 2 * formats::ELLM_WIDTH * nn)?,
            plan_kernel: ctx.modules.kernel(dev, &SANFUI, defines, "sanfui_gather_plan")?,
            numeric_kernel: ctx.modules.kernel(dev, &SANFUI, defines, "sanfui_gather")?,
            bytes: 4 * nadj.len() + 8 * formats::ELLM_WIDTH * nn,
            setup_s,
        })
    }
    fn plan(&self, dev: &dyn Device, conn: &Buffer, gamma: &Buffer, nn: usize) -> DeviceResult<()> {
        let args = [Arg::Buf(&self.nadj), Arg::Buf(conn), Arg::Buf(gamma), Arg::Buf(&self.plan), Arg::I64(nn as i64)];
        dev.launch(&self.plan_kernel, cover(nn), &args)
    }
    fn numeric(&self, dev: &dyn Device, ke: &Buffer, ne: usize, vals: &Buffer, nn: usize) -> DeviceResult<()> {
        let args = [Arg::Buf(&self.nadj), Arg::Buf(&self.plan), Arg::Buf(ke), Arg::I64(ne as i64), Arg::Buf(vals), Arg::I64(nn as i64)];
        dev.launch(&self.numeric_kernel, cover(formats::ELLM_WIDTH * nn), &args)
    }
}

/// Each node's elements, column-major: entry [j N + a] is 8 e + (a's place in e) for a's j-th
/// element in ascending order, -1 past its last. A node in more than 8 elements is refused (the
/// plan's bytes hold 8 pairs of a node pair; a structured hexahedral mesh has at most 8).
pub(crate) fn node_elements(m: &fembench_fem::hexmesh::BoxMesh) -> Result<Vec<i32>, String> {
    let nn = m.num_nodes();
    if 8 * m.num_elements() > i32::MAX as usize {
        return Err(format!("{} elements: ellm-gather's 32-bit element entries hold fewer", m.num_elements()));
    }
    let mut nadj = vec![-1i32; 8 * nn];
    let mut count = vec![0u8; nn];
    for e in 0..m.num_elements() {
        for (la, &a) in m.element(e).iter().enumerate() {
            let a = a as usize;
            let j = count[a] as usize;
            if j == 8 {
                return Err(format!("node {a} is in more than 8 elements; ellm-gather's plan holds 8"));
            }
            nadj[j * nn + a] = (8 * e + la) as i32;
            count[a] += 1;
        }
    }
    Ok(nadj)
}

/// Algorithm 1's inputs and output on the device, and its launch: the connectivity, the
/// coordinates, the reference derivatives, K^e and (ORDERED) the color order of the elements.
pub(crate) struct Elements {
    pub(crate) conn: Buffer,
    xyz: Buffer,
    dn: Buffer,
    pub(crate) ke: Buffer,
    pub(crate) order: Buffer,
    kernel: crate::device::Kernel,
    lame: (f64, f64),
    precision: crate::Precision,
    ne: usize,
    /// Bytes of these buffers.
    pub(crate) bytes: usize,
}

impl Elements {
    pub(crate) fn new<T: Real>(
        ctx: &mut CaseCtx,
        dev: &dyn Device,
        prep: &Prepared,
        defines: &Defines,
        ordered: bool,
    ) -> Result<Self, CaseError> {
        let s = std::mem::size_of::<T>();
        let m = &prep.mesh;
        let (ne, nn) = (m.num_elements(), m.num_nodes());
        let real = |v: &[f64]| v.iter().map(|&a| T::from_f64(a)).collect::<Vec<T>>();
        let conn: Vec<i32> = m.elems.iter().map(|&v| v as i32).collect();
        let xyz: Vec<f64> = (0..nn as u32).flat_map(|v| m.coords(v)).collect();
        let order: Vec<i32> = if ordered { prep.colors.iter().flatten().map(|&e| e as i32).collect() } else { vec![0] };
        Ok(Elements {
            conn: dev.upload_slice(&conn)?,
            xyz: dev.upload_slice(&real(&xyz))?,
            dn: dev.upload_slice(&real(&super::hex8::derivative_table()))?,
            ke: dev.alloc(576 * ne * s)?,
            order: dev.upload_slice(&order)?,
            kernel: ctx.modules.kernel(dev, &SANFUI, defines, "sanfui_elements")?,
            lame: (prep.lambda, prep.mu),
            precision: T::PRECISION,
            ne,
            bytes: 32 * ne + 3 * s * nn + 192 * s + 576 * ne * s + 4 * order.len(),
        })
    }
    pub(crate) fn launch(&self, dev: &dyn Device) -> DeviceResult<()> {
        let (lambda, mu) = (Arg::real(self.precision, self.lame.0), Arg::real(self.precision, self.lame.1));
        let args = [
            Arg::Buf(&self.conn),
            Arg::Buf(&self.xyz),
            Arg::Buf(&self.dn),
            lambda,
            mu,
            Arg::Buf(&self.ke),
            Arg::I64(self.ne as i64),
            Arg::Buf(&self.order),
        ];
        dev.launch(&self.kernel, cover(self.ne), &args)
    }
}

#[cfg(test)]
mod tests {
    use fembench_fem::hexmesh::BoxMesh;

    /// Every (element, place) pair is listed once, under its own node, in ascending element
    /// order, and the list ends with -1; a box's interior node has 8 elements, a corner 1.
    #[test]
    fn node_elements_lists_each_element_place_once_in_order() {
        let m = BoxMesh::new([5, 4, 3], [4.0, 3.0, 2.0]);
        let (nn, ne) = (m.num_nodes(), m.num_elements());
        let nadj = super::node_elements(&m).unwrap();
        let mut seen = vec![false; 8 * ne];
        for a in 0..nn {
            let list: Vec<i32> = (0..8).map(|j| nadj[j * nn + a]).take_while(|&v| v >= 0).collect();
            assert!((0..8).skip(list.len()).all(|j| nadj[j * nn + a] == -1), "node {a}: entries after the end");
            assert!(list.windows(2).all(|w| w[0] < w[1]), "node {a}: {list:?}");
            for &v in &list {
                let (e, la) = (v as usize / 8, v as usize % 8);
                assert_eq!(m.element(e)[la] as usize, a);
                assert!(!std::mem::replace(&mut seen[v as usize], true));
            }
        }
        assert!(seen.iter().all(|&s| s));
        let count = |a: usize| (0..8).filter(|&j| nadj[j * nn + a] >= 0).count();
        assert_eq!((count(0), count(5 + 1 + 20)), (1, 8));
    }
}
