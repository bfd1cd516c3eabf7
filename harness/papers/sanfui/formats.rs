//! The five storage formats of the paper (section 4.2-4.3) as the kernels lay them out, their
//! sizes (ours, counted, against Table 1's formulas), Eq. 6, the pre-processing's neighbour
//! lists, and the check of a device result: every format, read through its own indices as the
//! device wrote them, is turned into CSR order and compared with the f64 reference.

use fembench_fem::csr::Pattern;
use fembench_fem::hexmesh::BoxMesh;
use rayon::prelude::*;

use super::spec::Format;

/// The column padding of ELL and ELLM (sorts after every real column, so bisection works).
pub const PAD: i32 = i32::MAX;
/// ELL's row width (3 dofs x 27 neighbours) and ELLM's (27 blocks).
pub const ELL_WIDTH: usize = 81;
pub const ELLM_WIDTH: usize = 27;

/// S^j of Algorithm 3: each node's neighbours (itself included), sorted, as offsets and a list.
#[derive(Debug, Clone)]
pub struct Neighbours {
    pub ptr: Vec<i32>,
    pub list: Vec<i32>,
}

impl Neighbours {
    /// From the box's index map: node (i, j, k) couples with (i±1, j±1, k±1) where they exist.
    pub fn of_box(m: &BoxMesh) -> Neighbours {
        let [nx, ny, nz] = m.nodes;
        let n = m.num_nodes();
        let count = |v: usize| {
            let (i, j, k) = (v % nx, (v / nx) % ny, v / (nx * ny));
            let c = |i: usize, n: usize| 1 + (i > 0) as usize + (i + 1 < n) as usize;
            c(i, nx) * c(j, ny) * c(k, nz)
        };
        let mut ptr = vec![0i32; n + 1];
        for v in 0..n {
            ptr[v + 1] = ptr[v] + count(v) as i32;
        }
        let mut list = vec![0i32; ptr[n] as usize];
        let mut chunks: Vec<&mut [i32]> = Vec::with_capacity(n);
        let mut rest = list.as_mut_slice();
        for v in 0..n {
            let (head, tail) = rest.split_at_mut(count(v));
            chunks.push(head);
            rest = tail;
        }
        chunks.into_par_iter().enumerate().for_each(|(v, out)| {
            let (i, j, k) = ((v % nx) as i64, ((v / nx) % ny) as i64, (v / (nx * ny)) as i64);
            let mut w = 0;
            for dk in -1..=1i64 {
                for dj in -1..=1i64 {
                    for di in -1..=1i64 {
                        let (a, b, c) = (i + di, j + dj, k + dk);
                        if a >= 0 && b >= 0 && c >= 0 && a < nx as i64 && b < ny as i64 && c < nz as i64 {
                            out[w] = ((c * ny as i64 + b) * nx as i64 + a) as i32;
                            w += 1;
                        }
                    }
                }
            }
        });
        Neighbours { ptr, list }
    }
    pub fn nodes(&self) -> usize {
        self.ptr.len() - 1
    }
    /// Node-to-node blocks: the non-zero count over 9.
    pub fn blocks(&self) -> usize {
        self.list.len()
    }
}

/// Eq. 6: the non-zeros of the box's global stiffness matrix (3 dofs per node).
pub fn eq6(nodes: [usize; 3]) -> i64 {
    let [x, y, z] = nodes.map(|v| v as i64);
    108 * (x + y + z) - 162 * (x * y + y * z + z * x) + 243 * x * y * z - 72
}

/// Table 1's storage formula of a format (bytes, 4-byte values and indices as in the paper).
pub fn table1_bytes(format: Format, nodes: [usize; 3]) -> f64 {
    let [x, y, z] = nodes.map(|v| v as f64);
    let (s1, s2, s3) = (x + y + z, x * y + y * z + z * x, x * y * z);
    match format {
        Format::Coo => 1296.0 * s1 - 1944.0 * s2 + 2916.0 * s3 - 864.0,
        Format::Csr => 864.0 * s1 - 1296.0 * s2 + 1956.0 * s3 - 576.0,
        Format::Ell => 1944.0 * s3,
        Format::Coom => 576.0 * s1 - 864.0 * s2 + 1300.0 * s3 - 384.0,
        Format::Ellm => 1080.0 * s3,
    }
}

/// The lengths of a format's two index arrays (row side, column side) and of its values.
pub fn lengths(format: Format, nb: &Neighbours) -> (usize, usize, usize) {
    let (n, nnz) = (nb.nodes(), 9 * nb.blocks());
    match format {
        Format::Coo => (nnz, nnz, nnz),
        Format::Csr => (3 * n + 1, nnz, nnz),
        Format::Ell => (0, ELL_WIDTH * 3 * n, ELL_WIDTH * 3 * n),
        Format::Coom => (n + 1, nb.blocks(), nnz),
        Format::Ellm => (0, ELLM_WIDTH * n, 9 * ELLM_WIDTH * n),
    }
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

/// The same for `nd` DOFs per node (Fig. 8): nnz = nd^2 B; ELL keeps 27 nd entries in each of
/// its nd N rows; COOM and ELLM one index per nd x nd block, ELLM 27 blocks per node.
pub fn storage_bytes_per_dof(format: Format, nodes: [usize; 3], real: usize, nd: usize) -> f64 {
    let (n, b) = (nodes.iter().product::<usize>() as f64, nodes.iter().map(|&v| (3 * v - 2) as f64).product::<f64>());
    let (d, s) = (nd as f64, real as f64);
    let nnz = d * d * b;
    match format {
        Format::Coo => 8.0 * nnz + s * nnz,
        Format::Csr => 4.0 * (d * n + 1.0 + nnz) + s * nnz,
        Format::Ell => (4.0 + s) * (ELLM_WIDTH as f64 * d) * d * n,
        Format::Coom => 4.0 * (n + 1.0 + b) + s * nnz,
        Format::Ellm => 4.0 * ELLM_WIDTH as f64 * n + s * d * d * ELLM_WIDTH as f64 * n,
    }
}

/// How a device result compares with the reference: the largest |got - ref| / scale over the
/// entries, and the first problem of structure (a wrong index, a missing or extra entry).
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub worst: f64,
    pub structure: Option<String>,
}

/// Reads a format through its indices (`r`: the row side, `c`: the column side, as the
/// symbolic kernel wrote them) into CSR order, and compares every value with `reference` on
/// `pattern`, each difference divided by its entry's `scale`.
pub fn check(
    format: Format,
    nb: &Neighbours,
    r: &[i32],
    c: &[i32],
    vals: &[f64],
    pattern: &Pattern,
    reference: &[f64],
    scale: &[f64],
) -> Check {
    let n = nb.nodes();
    // Per node: (worst, first structure problem); each node's three rows are independent.
    let per_node = |a: usize| -> (f64, Option<String>) {
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
        let (base, nng) = (nb.ptr[a] as usize, (nb.ptr[a + 1] - nb.ptr[a]) as usize);
        let rows = 3 * n;
        let mut run = || -> Result<(), String> {
            for m in 0..3 {
                let row = 3 * a + m;
                let width = pattern.row_ptr[row + 1] - pattern.row_ptr[row];
                match format {
                    Format::Coo | Format::Csr => {
                        let (start, end) = match format {
                            Format::Coo => (9 * base + 3 * nng * m, 9 * base + 3 * nng * (m + 1)),
                            _ => (r[row] as usize, r[row + 1] as usize),
                        };
                        if end < start || end > vals.len() || (end - start) as u32 != width {
                            return Err(format!("row {row} spans {start}..{end}, the reference has {width} entries"));
                        }
                        for (k, at) in (start..end).enumerate() {
                            if format == Format::Coo && r[at] as usize != row {
                                return Err(format!("COO entry {at} has row {}, not {row}", r[at]));
                            }
                            put(row, k, c[at] as i64, vals[at])?;
                        }
                    }
                    Format::Ell => {
                        for s in 0..ELL_WIDTH {
                            let at = s * rows + row;
                            if s < width as usize {
                                put(row, s, c[at] as i64, vals[at])?;
                            } else if c[at] != PAD {
                                return Err(format!("ELL row {row} slot {s} should be padding, has column {}", c[at]));
                            }
                        }
                    }
                    Format::Coom | Format::Ellm => {
                        if format == Format::Coom && (r[a] as usize != base || r[a + 1] as usize != base + nng) {
                            return Err(format!("COOM node {a}: blocks {}..{}, expected {base}..{}", r[a], r[a + 1], base + nng));
                        }
                        for k in 0..nng {
                            let coom = format == Format::Coom;
                            let first = if coom { c[base + k] } else { c[k * n + a] };
                            let v = |nn: usize| if coom { vals[9 * (base + k) + 3 * m + nn] } else { vals[(9 * k + 3 * m + nn) * n + a] };
                            if first % 3 != 0 {
                                return Err(format!("node {a} block {k}: column {first} is not a first dof"));
                            }
                            for nn in 0..3 {
                                put(row, 3 * k + nn, first as i64 + nn as i64, v(nn))?;
                            }
                        }
                        if format == Format::Ellm {
                            if let Some(k) = (nng..ELLM_WIDTH).find(|&k| c[k * n + a] != PAD) {
                                return Err(format!("ELLM node {a} slot {k} should be padding"));
                            }
                        }
                    }
                }
            }
            Ok(())
        };
        let problem = run().err();
        (worst, problem)
    };
    let (worst, structure) = (0..n).into_par_iter().map(per_node).reduce(
        || (0.0, None),
        |a, b| {
            let w = if a.0.is_nan() || b.0.is_nan() { f64::NAN } else { a.0.max(b.0) };
            (w, a.1.or(b.1))
        },
    );
    Check { worst, structure }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_eq!(storage_bytes(Format::Coo, &nb, 4) as f64, table1_bytes(Format::Coo, nodes));
            assert_eq!(storage_bytes(Format::Ell, &nb, 4) as f64, table1_bytes(Format::Ell, nodes));
            assert_eq!(storage_bytes(Format::Ellm, &nb, 4) as f64, table1_bytes(Format::Ellm, nodes));
            assert_eq!(storage_bytes(Format::Csr, &nb, 4) as f64, table1_bytes(Format::Csr, nodes) + 4.0);
            assert!((table1_bytes(Format::Coom, nodes) - (16.0 / 3.0 * nnz + 4.0 * nn)).abs() < 1e-6);
            let coom_ours = 4.0 * (nn + 1.0) + 4.0 * nb.blocks() as f64 + 4.0 * nnz;
            assert_eq!(storage_bytes(Format::Coom, &nb, 4) as f64, coom_ours);
            for f in Format::ALL {
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
        assert_eq!(storage_bytes_per_dof(Format::Coo, n, 4, 1), 12.0 * b);
        assert_eq!(storage_bytes_per_dof(Format::Csr, n, 4, 1), 4.0 * (nn + 1.0 + b) + 4.0 * b);
        assert_eq!(storage_bytes_per_dof(Format::Coom, n, 4, 1), storage_bytes_per_dof(Format::Csr, n, 4, 1));
        assert_eq!(storage_bytes_per_dof(Format::Ell, n, 4, 1), storage_bytes_per_dof(Format::Ellm, n, 4, 1));
        // At 3 DOFs, the bytes the device allocates (from the box's neighbour lists).
        let nb = Neighbours::of_box(&BoxMesh::new(n, [1.0; 3]));
        for f in Format::ALL {
            assert_eq!(storage_bytes_per_dof(f, n, 8, 3), storage_bytes(f, &nb, 8) as f64, "{f:?}");
            assert!(storage_bytes_per_dof(f, n, 8, 4) > storage_bytes_per_dof(f, n, 8, 3));
        }
    }

    #[test]
    fn a_wrong_value_or_index_fails_the_check() {
        let m = BoxMesh::new([4, 3, 3], [1.0; 3]);
        let nb = Neighbours::of_box(&m);
        let p = crate::sanfui::reference::pattern_of(&nb);
        let reference: Vec<f64> = (0..p.nnz()).map(|i| 1.0 + i as f64).collect();
        let scale = vec![1.0; p.nnz()];
        let (r, c): (Vec<i32>, Vec<i32>) = (p.row_ptr.iter().map(|&v| v as i32).collect(), p.col.iter().map(|&v| v as i32).collect());
        let ok = check(Format::Csr, &nb, &r, &c, &reference, &p, &reference, &scale);
        assert_eq!(ok, Check { worst: 0.0, structure: None });
        let mut vals = reference.clone();
        vals[17] += 0.5;
        assert_eq!(check(Format::Csr, &nb, &r, &c, &vals, &p, &reference, &scale).worst, 0.5);
        vals[17] = f64::NAN;
        assert!(check(Format::Csr, &nb, &r, &c, &vals, &p, &reference, &scale).worst.is_nan());
        let mut c2 = c.clone();
        c2.swap(3, 4);
        assert!(check(Format::Csr, &nb, &r, &c2, &reference, &p, &reference, &scale).structure.is_some());
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
        assert_eq!(check(Format::Ellm, &nb, &[], &g, &v, &p, &reference, &scale), Check { worst: 0.0, structure: None });
        g[(ELLM_WIDTH - 1) * n] = 0;
        assert!(check(Format::Ellm, &nb, &[], &g, &v, &p, &reference, &scale).structure.is_some());
    }
}
