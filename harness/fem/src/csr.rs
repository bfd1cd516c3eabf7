//! CSR sparsity patterns of assembled FEM matrices and the slot map that sends every entry of
//! every element matrix to its CSR index: what assembly into precomputed slots (Cecka et al.'s
//! ElemColor and ElemAtomic, Sanfui and Sharma's CSR kernels) and verification of any format
//! need. Degrees of freedom are numbered by the caller (free dofs 0..n, -1 for prescribed).

use rayon::prelude::*;

/// Free-dof numbering: `prescribed[i]` says whether dof i is prescribed. Returns the free index
/// of each dof (-1 where prescribed) and the number of free dofs.
pub fn free_dofs(prescribed: impl IntoIterator<Item = bool>) -> (Vec<i32>, usize) {
    let mut n = 0usize;
    let dof = prescribed
        .into_iter()
        .map(|p| {
            if p {
                -1
            } else {
                n += 1;
                (n - 1) as i32
            }
        })
        .collect();
    (dof, n)
}

/// `data` cut into consecutive segments of `lengths` (their sum at most `data`'s length), for
/// work on rows, nodes or slices in parallel.
pub fn segments_mut<T>(data: &mut [T], lengths: impl IntoIterator<Item = usize>) -> Vec<&mut [T]> {
    let mut out = Vec::new();
    let mut rest = data;
    for len in lengths {
        let (head, tail) = rest.split_at_mut(len);
        out.push(head);
        rest = tail;
    }
    out
}

/// A CSR pattern: row r's columns are `col[row_ptr[r]..row_ptr[r + 1]]`, sorted.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pattern {
    pub row_ptr: Vec<u32>,
    pub col: Vec<u32>,
}

impl Pattern {
    pub fn rows(&self) -> usize {
        self.row_ptr.len().saturating_sub(1)
    }
    pub fn nnz(&self) -> usize {
        self.col.len()
    }
    /// The CSR index of (r, c), if it is in the pattern.
    pub fn slot(&self, r: usize, c: usize) -> Option<usize> {
        let (lo, hi) = (self.row_ptr[r] as usize, self.row_ptr[r + 1] as usize);
        self.col[lo..hi].binary_search(&(c as u32)).ok().map(|i| lo + i)
    }

    /// The pattern over `n` free dofs of `elements` elements, each coupling all of its dofs:
    /// `dofs(e, out)` pushes element e's dof indices (free index, or -1 for a prescribed dof,
    /// whose row and column are left out).
    pub fn of_elements(n: usize, elements: usize, dofs: impl Fn(usize, &mut Vec<i32>) + Sync) -> Pattern {
        let mut pairs: Vec<u64> = (0..elements)
            .into_par_iter()
            .fold(
                || (Vec::new(), Vec::new()),
                |(mut acc, mut buf): (Vec<u64>, Vec<i32>), e| {
                    buf.clear();
                    dofs(e, &mut buf);
                    for &r in buf.iter().filter(|&&r| r >= 0) {
                        acc.extend(buf.iter().filter(|&&c| c >= 0).map(|&c| ((r as u64) << 32) | c as u64));
                    }
                    (acc, buf)
                },
            )
            .map(|(acc, _)| acc)
            .reduce(Vec::new, |mut a, mut b| {
                if a.len() < b.len() {
                    std::mem::swap(&mut a, &mut b);
                }
                a.extend(b);
                a
            });
        pairs.par_sort_unstable();
        pairs.dedup();
        let mut row_ptr = vec![0u32; n + 1];
        for &p in &pairs {
            row_ptr[(p >> 32) as usize + 1] += 1;
        }
        for r in 0..n {
            row_ptr[r + 1] += row_ptr[r];
        }
        let col = pairs.iter().map(|&p| p as u32).collect();
        Pattern { row_ptr, col }
    }

    /// Element-major slot map: `slots[e * k * k + i * k + j]` is the CSR index of element e's
    /// entry (i, j), k = `dofs_per_element`, or -1 where the row or the column is prescribed.
    pub fn slots(&self, elements: usize, dofs_per_element: usize, dofs: impl Fn(usize, &mut Vec<i32>) + Sync) -> Vec<i32> {
        let k = dofs_per_element;
        let mut slots = vec![-1i32; elements * k * k];
        slots.par_chunks_mut((k * k).max(1)).enumerate().for_each_init(Vec::new, |buf, (e, out)| {
            buf.clear();
            dofs(e, buf);
            assert_eq!(buf.len(), k, "element {e} has {} dofs, not {k}", buf.len());
            for (i, &r) in buf.iter().enumerate() {
                for (j, &c) in buf.iter().enumerate() {
                    if r >= 0 && c >= 0 {
                        out[i * k + j] = self.slot(r as usize, c as usize).map_or(-1, |s| s as i32);
                    }
                }
            }
        });
        slots
    }
}

/// A CSR matrix laid out as sliced ELL (cuSPARSE's `cusparseCreateSlicedEll`): rows in slices of
/// `slice`, each slice as wide as its longest row and stored column by column (entry j of row r
/// of slice s at `slice_ptr[s] + j * slice + r % slice`); padding has column -1 and value 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlicedEll {
    pub slice: usize,
    /// Where each slice starts in `col` (slices + 1 offsets).
    pub slice_ptr: Vec<i32>,
    pub col: Vec<i32>,
    /// The CSR entry each stored entry holds (-1: padding), to lay out values with [`Self::values`].
    pub from: Vec<i64>,
}

impl SlicedEll {
    pub fn of(p: &Pattern, slice: usize) -> SlicedEll {
        let rows = p.rows();
        let slices = rows.div_ceil(slice);
        let len = |r: usize| if r < rows { (p.row_ptr[r + 1] - p.row_ptr[r]) as usize } else { 0 };
        let mut slice_ptr = vec![0i32; slices + 1];
        for s in 0..slices {
            let width = (s * slice..(s + 1) * slice).map(len).max().unwrap_or(0);
            slice_ptr[s + 1] = slice_ptr[s] + (width * slice) as i32;
        }
        let total = slice_ptr[slices] as usize;
        let (mut col, mut from) = (vec![-1i32; total], vec![-1i64; total]);
        for r in 0..rows {
            let (s, lane, start) = (r / slice, r % slice, p.row_ptr[r] as usize);
            for j in 0..len(r) {
                let at = slice_ptr[s] as usize + j * slice + lane;
                col[at] = p.col[start + j] as i32;
                from[at] = (start + j) as i64;
            }
        }
        SlicedEll { slice, slice_ptr, col, from }
    }
    /// How many slots the layout of `p` stores, padding included, without building it.
    pub fn stored(p: &Pattern, slice: usize) -> usize {
        let rows = p.rows();
        let len = |r: usize| (p.row_ptr[r + 1] - p.row_ptr[r]) as usize;
        (0..rows.div_ceil(slice)).map(|s| (s * slice..((s + 1) * slice).min(rows)).map(len).max().unwrap_or(0) * slice).sum()
    }
    /// The CSR values in this layout (padding 0).
    pub fn values<T: Copy + Default>(&self, csr: &[T]) -> Vec<T> {
        self.from.iter().map(|&k| if k >= 0 { csr[k as usize] } else { T::default() }).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hexmesh::BoxMesh;

    /// y = A x through the sliced layout equals CSR's, rows of every length and a short last
    /// slice included; every entry is stored once.
    #[test]
    fn sliced_ell_holds_every_entry_once_and_multiplies_as_csr() {
        let p = Pattern { row_ptr: vec![0, 1, 4, 4, 6, 9, 10], col: vec![2, 0, 1, 5, 3, 4, 0, 2, 5, 1] };
        let vals: Vec<f64> = (0..p.nnz()).map(|k| 1.0 + k as f64).collect();
        let x: Vec<f64> = (0..6).map(|c| 0.5 + c as f64).collect();
        let m = SlicedEll::of(&p, 4);
        assert_eq!(m.slice_ptr, vec![0, 12, 24]);
        assert_eq!(SlicedEll::stored(&p, 4), 24);
        let v = m.values(&vals);
        let mut y = vec![0.0; 6];
        for s in 0..2 {
            for (k, at) in (m.slice_ptr[s] as usize..m.slice_ptr[s + 1] as usize).enumerate() {
                if m.col[at] >= 0 {
                    y[s * 4 + k % 4] += v[at] * x[m.col[at] as usize];
                }
            }
        }
        for r in 0..6 {
            let want: f64 = (p.row_ptr[r]..p.row_ptr[r + 1]).map(|k| vals[k as usize] * x[p.col[k as usize] as usize]).sum();
            assert_eq!(y[r], want, "row {r}");
        }
        let mut held: Vec<i64> = m.from.iter().copied().filter(|&k| k >= 0).collect();
        held.sort_unstable();
        assert_eq!(held, (0..p.nnz() as i64).collect::<Vec<_>>());
    }

    #[test]
    fn a_box_of_hexahedra_has_the_27_point_stencil_count() {
        // Scalar: a node couples with its 3x3x3 neighbourhood, so nnz = prod(3 n_i - 2).
        let m = BoxMesh::new([4, 3, 5], [1.0, 1.0, 1.0]);
        let n = m.num_nodes();
        let p = Pattern::of_elements(n, m.num_elements(), |e, out| out.extend(m.element(e).iter().map(|&v| v as i32)));
        assert_eq!(p.nnz(), (3 * 4 - 2) * (3 * 3 - 2) * (3 * 5 - 2));
        // 3 dofs per node: every scalar entry becomes a 3x3 block.
        let p3 = Pattern::of_elements(3 * n, m.num_elements(), |e, out| {
            out.extend(m.element(e).iter().flat_map(|&v| (0..3).map(move |c| (3 * v + c) as i32)))
        });
        assert_eq!(p3.nnz(), 9 * p.nnz());
        // Every slot of every element points at its own (row, column).
        let slots =
            p3.slots(m.num_elements(), 24, |e, out| out.extend(m.element(e).iter().flat_map(|&v| (0..3).map(move |c| (3 * v + c) as i32))));
        for e in [0, m.num_elements() - 1] {
            let d: Vec<usize> = m.element(e).iter().flat_map(|&v| (0..3).map(move |c| 3 * v as usize + c)).collect();
            for i in 0..24 {
                for j in 0..24 {
                    let s = slots[e * 576 + i * 24 + j] as usize;
                    assert_eq!(p3.col[s] as usize, d[j]);
                    assert!(p3.row_ptr[d[i]] as usize <= s && s < p3.row_ptr[d[i] + 1] as usize);
                }
            }
        }
    }

    #[test]
    fn prescribed_dofs_leave_their_rows_and_columns_out() {
        // Two triangles sharing an edge; node 0 prescribed.
        let tris = [[0u32, 1, 2], [1, 3, 2]];
        let (dof, n) = free_dofs([true, false, false, false]);
        assert_eq!((dof.clone(), n), (vec![-1, 0, 1, 2], 3));
        let elem = |e: usize, out: &mut Vec<i32>| out.extend(tris[e].iter().map(|&v| dof[v as usize]));
        let p = Pattern::of_elements(n, 2, elem);
        assert_eq!(p, Pattern { row_ptr: vec![0, 3, 6, 9], col: vec![0, 1, 2, 0, 1, 2, 0, 1, 2] });
        let s = p.slots(2, 3, elem);
        assert_eq!(&s[..9], &[-1, -1, -1, -1, 0, 1, -1, 3, 4]);
        assert_eq!(p.slot(2, 0), Some(6));
    }
}
