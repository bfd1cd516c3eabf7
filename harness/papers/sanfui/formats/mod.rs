//! The storage formats: what a format is ([`Layout`], one type per format in this folder, the
//! paper's five in `coo.rs` .. `ellm.rs`, section 4.2-4.3 and Table 1), Eq. 6, and what every
//! format shares: its sizes, its layout of a matrix ([`encode`]), and the check of a device
//! result: every format, read through its own indices as the device wrote them, is turned into
//! CSR order and compared with the f64 reference.

use fembench_fem::csr::Pattern;
use fembench_fem::hexmesh::Neighbours;
use rayon::prelude::*;

pub mod coo;
pub mod coom;
pub mod csr;
pub mod ell;
pub mod ellm;
pub mod layout;

use layout::{BoxDims, Entry, Layout, NodeAt, Nodes, Part, Span, Window, PAD};

/// A storage format: a handle on its type ([`Layout`]), compared by name.
#[derive(Clone, Copy)]
pub struct Format(pub &'static dyn Layout);

impl Format {
    pub const COO: Format = Format(&coo::Coo);
    pub const CSR: Format = Format(&csr::Csr);
    pub const ELL: Format = Format(&ell::Ell);
    pub const COOM: Format = Format(&coom::Coom);
    pub const ELLM: Format = Format(&ellm::Ellm);
    /// The paper's five, in Table 1's order.
    pub const PAPER: [Format; 5] = [Format::COO, Format::CSR, Format::ELL, Format::COOM, Format::ELLM];
    pub fn as_str(self) -> &'static str {
        self.0.name()
    }
    /// The kernels' `FORMAT` define.
    pub fn code(self) -> usize {
        self.0.code()
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Format {}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Eq. 6: the non-zeros of the box's global stiffness matrix (3 dofs per node).
pub fn eq6(nodes: [usize; 3]) -> i64 {
    let [x, y, z] = nodes.map(|v| v as i64);
    108 * (x + y + z) - 162 * (x * y + y * z + z * x) + 243 * x * y * z - 72
}

/// The lengths of a format's two index arrays (row side, column side) and of its values.
pub fn lengths(format: Format, nb: &Neighbours) -> (usize, usize, usize) {
    format.0.lengths(nb)
}

/// Table 1's storage formula of a format (bytes, 4-byte values and indices as in the paper);
/// NaN for a format the paper does not have.
pub fn table1_bytes(format: Format, nodes: [usize; 3]) -> f64 {
    format.0.table1_bytes(nodes).unwrap_or(f64::NAN)
}

/// Bytes the format takes on the device: 4-byte indices, values of `real` bytes.
pub fn storage_bytes(format: Format, nb: &Neighbours, real: usize) -> usize {
    let (r, c, v) = lengths(format, nb);
    4 * (r + c) + real * v
}

/// The same from the box alone: N nodes and prod(3 n_i - 2) blocks (what reports use).
pub fn storage_bytes_of_box(format: Format, nodes: [usize; 3], real: usize) -> f64 {
    storage_bytes_per_dof(format, nodes, real, 3)
}

/// The same for `nd` DOFs per node (Fig. 8).
pub fn storage_bytes_per_dof(format: Format, nodes: [usize; 3], real: usize, nd: usize) -> f64 {
    format.0.bytes_per_dof(&BoxDims::new(nodes, real, nd))
}

/// How a device result compares with the reference: the largest |got - ref| / scale over the
/// entries, and the first problem of structure (a wrong index, a missing or extra entry).
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub worst: f64,
    pub structure: Option<String>,
}

impl Check {
    /// The check of two parts together: the worse value (NaN wins), the first problem.
    pub fn and(self, other: Check) -> Check {
        let worst = if self.worst.is_nan() || other.worst.is_nan() { f64::NAN } else { self.worst.max(other.worst) };
        Check { worst, structure: self.structure.or(other.structure) }
    }
}

/// A matrix on `pattern` (values in CSR order) laid out as the kernels lay out a format: the
/// row side, the column side and the values (what the check reads; tests build results with it).
pub fn encode(format: Format, nb: &Neighbours, pattern: &Pattern, values: &[f64]) -> (Vec<i32>, Vec<i32>, Vec<f64>) {
    let n = nb.nodes();
    let (lr, lc, lv) = lengths(format, nb);
    let (mut r, mut c, mut v) = (vec![0i32; lr], vec![PAD; lc], vec![0.0; lv]);
    for row in 0..3 * n {
        let (a, m) = (row / 3, row % 3);
        let (base, lo) = (nb.ptr[a] as usize, pattern.row_ptr[row] as usize);
        for (k, at) in (lo..pattern.row_ptr[row + 1] as usize).enumerate() {
            let e = Entry { row, nodes: n, a, m, k, at, base, col: pattern.col[at] as i32 };
            let p = format.0.place(&e);
            if let Some((i, x)) = p.row {
                r[i] = x;
            }
            c[p.col.0] = p.col.1;
            v[p.val] = values[at];
        }
    }
    if let Some(rows) = format.0.encode_row_side(nb, pattern) {
        r = rows;
    }
    (r, c, v)
}

/// The spans of nodes `nodes` in a format's row-side, column-side and value arrays (the row side
/// of ELL and ELLM is empty). CSR's column and value spans are the reference pattern's rows: a
/// device row pointer that disagrees points outside them and fails the check.
pub fn spans(format: Format, nb: &Neighbours, pattern: &Pattern, nodes: std::ops::Range<usize>) -> [Span; 3] {
    format.0.spans(&Nodes { nb, pattern, a0: nodes.start, a1: nodes.end })
}

/// What a format's values are compared with: the reference `values` on `pattern`, each
/// difference divided by its entry's `scale`.
#[derive(Clone, Copy)]
pub struct Expected<'a> {
    pub pattern: &'a Pattern,
    pub values: &'a [f64],
    pub scale: &'a [f64],
}

/// Reads a format through its indices (`r`: the row side, `c`: the column side, as the
/// symbolic kernel wrote them) into CSR order, and compares every value with `expected`.
pub fn check<V: Copy + Into<f64> + Send + Sync>(
    format: Format,
    nb: &Neighbours,
    (r, c): (&[i32], &[i32]),
    vals: &[V],
    expected: Expected,
) -> Check {
    let n = nb.nodes();
    let [sr, sc, sv] = spans(format, nb, expected.pattern, 0..n);
    let part = (Window::new(r, sr), Window::new(c, sc), Window::new(vals, sv));
    check_part(format, nb, 0..n, part, expected)
}

/// [`check`] for the nodes `nodes` only, on the parts of the arrays that [`spans`] gives them.
pub fn check_part<V: Copy + Into<f64> + Send + Sync>(
    format: Format,
    nb: &Neighbours,
    nodes: std::ops::Range<usize>,
    (r, c, vals): (Window<i32>, Window<i32>, Window<V>),
    expected: Expected,
) -> Check {
    let part = Part { r, c, vals: &vals };
    nodes
        .into_par_iter()
        .map(|a| {
            let (worst, structure) = check_node(format, nb, &part, a, expected);
            Check { worst, structure }
        })
        .reduce(|| Check { worst: 0.0, structure: None }, Check::and)
}

/// Node `a`'s three rows against the reference: (worst scaled difference, first structure
/// problem); each node's rows are independent.
fn check_node(format: Format, nb: &Neighbours, part: &Part, a: usize, expected: Expected) -> (f64, Option<String>) {
    let Expected { pattern, values: reference, scale } = expected;
    let mut worst: f64 = 0.0;
    let mut put = |row: usize, k: usize, col: i64, v: f64| -> Result<(), String> {
        let at = pattern.row_ptr[row] as usize + k;
        if at >= pattern.row_ptr[row + 1] as usize || pattern.col[at] as i64 != col {
            return Err(format!("row {row}: entry {k} has column {col}, the reference has {:?}", pattern.col.get(at)));
        }
        let d = (v - reference[at]).abs() / scale[at].max(f64::MIN_POSITIVE);
        worst = if d.is_nan() || worst.is_nan() { f64::NAN } else { worst.max(d) };
        Ok(())
    };
    let node = NodeAt { a, base: nb.ptr[a] as usize, nng: (nb.ptr[a + 1] - nb.ptr[a]) as usize };
    let run = (0..3).try_for_each(|m| {
        let row = 3 * a + m;
        let width = pattern.row_ptr[row + 1] - pattern.row_ptr[row];
        format.0.check_row(part, (node, m), width, &mut put)
    });
    (worst, run.err())
}

#[cfg(test)]
mod tests {
    use super::layout::ELLM_WIDTH;
    use super::*;
    use fembench_fem::hexmesh::BoxMesh;

    #[test]
    fn eq6_counts_the_boxes_non_zeros_and_table1_matches_our_counts_where_it_should() {
        for nodes in [[2, 2, 2], [3, 2, 2], [5, 4, 3], [7, 3, 6]] {
            let m = BoxMesh::new(nodes, [1.0; 3]);
            let nb = Neighbours::of_box(&m);
            let p = Pattern::of_elements(3 * m.num_nodes(), m.num_elements(), |e, out| {
                out.extend(m.element(e).iter().flat_map(|&v| (0..3).map(move |c| (3 * v + c) as i32)))
            });
            assert_eq!(p.nnz() as i64, eq6(nodes), "{nodes:?}");
            assert_eq!(9 * nb.blocks(), p.nnz());
            // Each node's list is sorted and holds itself.
            for v in 0..nb.nodes() {
                let s = &nb.list[nb.ptr[v] as usize..nb.ptr[v + 1] as usize];
                assert!(s.windows(2).all(|w| w[0] < w[1]) && s.contains(&(v as i32)));
            }
            // Table 1 (4-byte values): COO, ELL and ELLM are our counts exactly; CSR is ours
            // less the last of the 3N + 1 offsets; COOM is 16/3 nnz + 4 N bytes, one column
            // index per three values, where ours keeps one per 3x3 block (Algorithm 5).
            let (nn, nnz) = (m.num_nodes() as f64, p.nnz() as f64);
            assert_eq!(storage_bytes(Format::COO, &nb, 4) as f64, table1_bytes(Format::COO, nodes));
            assert_eq!(storage_bytes(Format::ELL, &nb, 4) as f64, table1_bytes(Format::ELL, nodes));
            assert_eq!(storage_bytes(Format::ELLM, &nb, 4) as f64, table1_bytes(Format::ELLM, nodes));
            assert_eq!(storage_bytes(Format::CSR, &nb, 4) as f64, table1_bytes(Format::CSR, nodes) + 4.0);
            assert!((table1_bytes(Format::COOM, nodes) - (16.0 / 3.0 * nnz + 4.0 * nn)).abs() < 1e-6);
            let coom_ours = 4.0 * (nn + 1.0) + 4.0 * nb.blocks() as f64 + 4.0 * nnz;
            assert_eq!(storage_bytes(Format::COOM, &nb, 4) as f64, coom_ours);
            for f in Format::PAPER {
                assert_eq!(storage_bytes(f, &nb, 8) as f64, storage_bytes_of_box(f, nodes, 8), "{f:?}");
            }
        }
    }

    /// With one DOF a node every format's count is the scalar one (nnz = B; COOM is CSR, ELLM is
    /// ELL), and with three it is the bytes the device allocates for the box.
    #[test]
    fn storage_per_dof_reduces_to_the_scalar_counts() {
        let n = [7usize, 5, 4];
        let (nn, b) = (140.0, (19 * 13 * 10) as f64);
        assert_eq!(storage_bytes_per_dof(Format::COO, n, 4, 1), 12.0 * b);
        assert_eq!(storage_bytes_per_dof(Format::CSR, n, 4, 1), 4.0 * (nn + 1.0 + b) + 4.0 * b);
        assert_eq!(storage_bytes_per_dof(Format::COOM, n, 4, 1), storage_bytes_per_dof(Format::CSR, n, 4, 1));
        assert_eq!(storage_bytes_per_dof(Format::ELL, n, 4, 1), storage_bytes_per_dof(Format::ELLM, n, 4, 1));
        // At 3 DOFs, the bytes the device allocates (from the box's neighbour lists).
        let nb = Neighbours::of_box(&BoxMesh::new(n, [1.0; 3]));
        for f in Format::PAPER {
            assert_eq!(storage_bytes_per_dof(f, n, 8, 3), storage_bytes(f, &nb, 8) as f64, "{f:?}");
            assert!(storage_bytes_per_dof(f, n, 8, 4) > storage_bytes_per_dof(f, n, 8, 3));
        }
    }

    /// A box's neighbour lists and pattern, reference values 1, 2, 3, .. and unit scales.
    fn numbered(nodes: [usize; 3]) -> (Neighbours, Pattern, Vec<f64>, Vec<f64>) {
        let nb = Neighbours::of_box(&BoxMesh::new(nodes, [1.0; 3]));
        let p = fembench_fem::hexmesh::pattern_of(&nb);
        let reference: Vec<f64> = (0..p.nnz()).map(|i| 1.0 + i as f64).collect();
        let scale = vec![1.0; p.nnz()];
        (nb, p, reference, scale)
    }

    #[test]
    fn a_wrong_value_or_index_fails_the_check() {
        let (nb, p, reference, scale) = numbered([4, 3, 3]);
        let (r, c): (Vec<i32>, Vec<i32>) = (p.row_ptr.iter().map(|&v| v as i32).collect(), p.col.iter().map(|&v| v as i32).collect());
        let ok = check(Format::CSR, &nb, (&r, &c), &reference, Expected { pattern: &p, values: &reference, scale: &scale });
        assert_eq!(ok, Check { worst: 0.0, structure: None });
        let mut vals = reference.clone();
        vals[17] += 0.5;
        assert_eq!(check(Format::CSR, &nb, (&r, &c), &vals, Expected { pattern: &p, values: &reference, scale: &scale }).worst, 0.5);
        vals[17] = f64::NAN;
        assert!(check(Format::CSR, &nb, (&r, &c), &vals, Expected { pattern: &p, values: &reference, scale: &scale }).worst.is_nan());
        let mut c2 = c.clone();
        c2.swap(3, 4);
        assert!(check(Format::CSR, &nb, (&r, &c2), &reference, Expected { pattern: &p, values: &reference, scale: &scale })
            .structure
            .is_some());
        // ELLM with a padding slot that is not padding.
        let n = nb.nodes();
        let mut g = vec![PAD; ELLM_WIDTH * n];
        let mut v = vec![0.0; 9 * ELLM_WIDTH * n];
        for a in 0..n {
            let (base, nng) = (nb.ptr[a] as usize, (nb.ptr[a + 1] - nb.ptr[a]) as usize);
            for k in 0..nng {
                g[k * n + a] = 3 * nb.list[base + k];
                for mm in 0..3 {
                    for nn in 0..3 {
                        v[(9 * k + 3 * mm + nn) * n + a] = reference[p.row_ptr[3 * a + mm] as usize + 3 * k + nn];
                    }
                }
            }
        }
        assert_eq!(
            check(Format::ELLM, &nb, (&[], &g), &v, Expected { pattern: &p, values: &reference, scale: &scale }),
            Check { worst: 0.0, structure: None }
        );
        // `encode` lays ELLM out the same way.
        assert_eq!(encode(Format::ELLM, &nb, &p, &reference), (Vec::new(), g.clone(), v.clone()));
        g[(ELLM_WIDTH - 1) * n] = 0;
        assert!(check(Format::ELLM, &nb, (&[], &g), &v, Expected { pattern: &p, values: &reference, scale: &scale }).structure.is_some());
    }

    /// The check read part by part (the device check downloads a part of the nodes at a time)
    /// gives what the whole check gives, for every format, and still finds a wrong value or
    /// index in the last part.
    #[test]
    fn the_check_part_by_part_equals_the_whole_check_and_still_fails() {
        let (nb, p, reference, scale) = numbered([5, 4, 3]);
        let n = nb.nodes();
        let by_parts = |f: Format, (r, c, v): &(Vec<i32>, Vec<i32>, Vec<f64>), step: usize| {
            (0..n).step_by(step).fold(Check { worst: 0.0, structure: None }, |acc, a0| {
                let nodes = a0..(a0 + step).min(n);
                let sp = spans(f, &nb, &p, nodes.clone());
                let cut = |data: &[i32], s: Span| s.runs().flat_map(|(i, len)| data[i..i + len].to_vec()).collect::<Vec<i32>>();
                let (pr, pc) = (cut(r, sp[0]), cut(c, sp[1]));
                let pv: Vec<f64> = sp[2].runs().flat_map(|(i, len)| v[i..i + len].to_vec()).collect();
                let part = (Window::new(&pr, sp[0]), Window::new(&pc, sp[1]), Window::new(&pv, sp[2]));
                acc.and(check_part(f, &nb, nodes, part, Expected { pattern: &p, values: &reference, scale: &scale }))
            })
        };
        for f in Format::PAPER {
            let mut enc = encode(f, &nb, &p, &reference);
            let whole = check(f, &nb, (&enc.0, &enc.1), &enc.2, Expected { pattern: &p, values: &reference, scale: &scale });
            assert_eq!(whole, Check { worst: 0.0, structure: None }, "{f:?}");
            for step in [1, 7, n] {
                assert_eq!(by_parts(f, &enc, step), whole, "{f:?} in parts of {step} nodes");
            }
            // A wrong value of the last node's last row.
            let at = p.row_ptr[3 * n] as usize - 1;
            let good = encode(f, &nb, &p, &reference);
            let mut off = reference.clone();
            off[at] += 0.25;
            enc.2 = encode(f, &nb, &p, &off).2;
            assert_eq!(by_parts(f, &enc, 7).worst, 0.25, "{f:?}");
            assert_eq!(
                check(f, &nb, (&enc.0, &enc.1), &enc.2, Expected { pattern: &p, values: &reference, scale: &scale }).worst,
                0.25,
                "{f:?}"
            );
            // A wrong column index of the last node.
            let mut bad = good.clone();
            // (the last entry; ELL and ELLM: slot 0 of the last row or node)
            let last = if f == Format::ELL {
                3 * n - 1
            } else if f == Format::ELLM {
                n - 1
            } else {
                bad.1.len() - 1
            };
            bad.1[last] -= 3;
            assert!(by_parts(f, &bad, 7).structure.is_some(), "{f:?}");
            // A row pointer that points outside its rows (CSR, COOM).
            if f == Format::CSR || f == Format::COOM {
                let mut bad = good.clone();
                let k = bad.0.len() - 2;
                bad.0[k] += 1;
                assert!(by_parts(f, &bad, 7).structure.is_some(), "{f:?}");
            }
        }
    }
}
