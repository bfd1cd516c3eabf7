//! What the device methods share: the element matrices on the device (Algorithm 1,
//! [`Elements`]), the stages each method has, the check of a format's arrays where they lie
//! ([`check_on_device`]) and each node's element list (ellm-gather's input). The methods
//! themselves are in [`super::assembly`], [`super::peer`] and [`super::shared_nz`].

use super::formats::layout::{Span, Window};
use super::formats::Format;
use super::formats::{self, Check};
use super::kernel::ElementsArgs;
use super::reference::Prepared;
use super::spec::Method;
use super::spmv::SpmvRun;
use crate::benchmark::{CaseCtx, CaseError};
use crate::device::{Buffer, Device, DeviceExt, DeviceResult, Launch, RealArg};
use crate::kernels::Defines;
use crate::measure::{Staged, Timer};
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

pub(crate) fn cover(n: usize) -> Launch {
    Launch::cover(n.max(1), BLOCK)
}

/// What a device method measured, and how its checked pass compared.
pub struct DeviceRun {
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
    /// The library and its version, for a library's route (`peers/sanfui_hex8.py`).
    pub(crate) library: Option<String>,
}

/// The stages a method has, in table order, each with its clock (its registry line's).
pub(crate) fn stages_of(m: Method) -> Vec<(&'static str, Timer)> {
    m.entry().about().timed_stages()
}

/// COOM and ELLM are converted to CSR on the device after assembly (beyond the paper): their
/// blocks are worth only what a solver can do with them.
pub(crate) fn converts(m: Method) -> bool {
    stages_of(m).iter().any(|s| s.0 == "convert")
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
            dn: dev.upload_slice(&real(&crate::fem::hex8::derivative_table()))?,
            ke: dev.alloc(576 * ne * s)?,
            order: dev.upload_slice(&order)?,
            kernel: ctx.modules.kernel_for::<ElementsArgs>(dev, &SANFUI, defines)?,
            lame: (prep.lambda, prep.mu),
            precision: T::PRECISION,
            ne,
            bytes: 32 * ne + 3 * s * nn + 192 * s + 576 * ne * s + 4 * order.len(),
        })
    }
    pub(crate) fn launch(&self, dev: &dyn Device) -> DeviceResult<()> {
        let (lambda, mu) = (RealArg::new(self.precision, self.lame.0), RealArg::new(self.precision, self.lame.1));
        let args = ElementsArgs {
            conn: &self.conn,
            xyz: &self.xyz,
            dn: &self.dn,
            lambda,
            mu,
            ke: &self.ke,
            ne: self.ne as i64,
            order: &self.order,
        };
        dev.launch_with(&self.kernel, cover(self.ne), &args)
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
