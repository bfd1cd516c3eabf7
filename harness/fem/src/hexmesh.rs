//! Structured meshes of eight-node hexahedra on a box, for 3D problems such as Sanfui and
//! Sharma's cantilever beam: nodes numbered x fastest, then y, then z; each element's nodes in
//! the usual order (bottom face counter-clockwise, then the top face); each node's neighbour
//! lists and the CSR pattern of three DOFs a node.

use rayon::prelude::*;

use crate::csr::{segments_mut, Pattern};
use crate::elements::Elements;

/// A box [0, lx] x [0, ly] x [0, lz] with `nodes[d]` nodes along direction d (at least 2).
#[derive(Debug, Clone)]
pub struct BoxMesh {
    pub nodes: [usize; 3],
    pub lengths: [f64; 3],
    pub elems: Vec<u32>,
}

impl BoxMesh {
    pub fn new(nodes: [usize; 3], lengths: [f64; 3]) -> BoxMesh {
        let [nx, ny, nz] = nodes.map(|n| n.max(2));
        let id = |i: usize, j: usize, k: usize| ((k * ny + j) * nx + i) as u32;
        let mut elems = Vec::with_capacity((nx - 1) * (ny - 1) * (nz - 1) * 8);
        for k in 0..nz - 1 {
            for j in 0..ny - 1 {
                for i in 0..nx - 1 {
                    elems.extend([
                        id(i, j, k),
                        id(i + 1, j, k),
                        id(i + 1, j + 1, k),
                        id(i, j + 1, k),
                        id(i, j, k + 1),
                        id(i + 1, j, k + 1),
                        id(i + 1, j + 1, k + 1),
                        id(i, j + 1, k + 1),
                    ]);
                }
            }
        }
        BoxMesh { nodes: [nx, ny, nz], lengths, elems }
    }
    pub fn num_nodes(&self) -> usize {
        self.nodes.iter().product()
    }
    pub fn num_elements(&self) -> usize {
        self.elems.len() / 8
    }
    pub fn element(&self, e: usize) -> &[u32] {
        &self.elems[8 * e..8 * e + 8]
    }
    /// Coordinates of node v.
    pub fn coords(&self, v: u32) -> [f64; 3] {
        let [nx, ny, nz] = self.nodes;
        let v = v as usize;
        let (i, j, k) = (v % nx, (v / nx) % ny, v / (nx * ny));
        let at = |n: usize, l: f64, d: usize| l * d as f64 / (n - 1) as f64;
        [at(nx, self.lengths[0], i), at(ny, self.lengths[1], j), at(nz, self.lengths[2], k)]
    }
    pub fn elements(&self) -> Elements<'_> {
        Elements { nodes: &self.elems, per_element: 8, corners: 8, num_nodes: self.num_nodes() }
    }
}

/// Each node's neighbours in a box (itself included), sorted, as offsets and a list: S^j of
/// Sanfui and Sharma's Algorithm 3, and the node links of the 3D Pogo model.
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
        segments_mut(&mut list, (0..n).map(count)).into_par_iter().enumerate().for_each(|(v, out)| {
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

/// The CSR pattern of 3 dofs per node from the neighbour lists: row 3a + m has the columns
/// 3 b + n of every neighbour b, in order.
pub fn pattern_of(nb: &Neighbours) -> Pattern {
    let n = nb.nodes();
    let links = |a: usize| (nb.ptr[a + 1] - nb.ptr[a]) as usize;
    let total: usize = (0..n).map(|a| 9 * links(a)).sum();
    assert!(total <= u32::MAX as usize, "a box's pattern of {total} entries: more than 32-bit offsets address");
    let mut row_ptr = vec![0u32; 3 * n + 1];
    for a in 0..n {
        let w = 3 * links(a) as u32;
        for m in 0..3 {
            row_ptr[3 * a + m + 1] = row_ptr[3 * a + m] + w;
        }
    }
    let mut col = vec![0u32; total];
    segments_mut(&mut col, (0..n).map(|a| 9 * links(a))).into_par_iter().enumerate().for_each(|(a, out)| {
        let s = &nb.list[nb.ptr[a] as usize..nb.ptr[a + 1] as usize];
        for (i, v) in out.iter_mut().enumerate() {
            let k = i % (3 * s.len());
            *v = 3 * s[k / 3] as u32 + (k % 3) as u32;
        }
    });
    Pattern { row_ptr, col }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volumes_add_up_and_a_structured_box_takes_eight_colors() {
        let m = BoxMesh::new([5, 4, 3], [2.0, 1.5, 1.0]);
        assert_eq!((m.num_nodes(), m.num_elements()), (60, 24));
        // Each element is an axis-aligned cell: its volume from nodes 0 and 6 (opposite corners).
        let vol: f64 = (0..m.num_elements())
            .map(|e| {
                let (a, b) = (m.coords(m.element(e)[0]), m.coords(m.element(e)[6]));
                (b[0] - a[0]) * (b[1] - a[1]) * (b[2] - a[2])
            })
            .sum();
        assert!((vol - 3.0).abs() < 1e-12, "{vol}");
        let colors = crate::coloring::balanced(m.elements(), 0).unwrap();
        assert_eq!(colors.len(), 8);
        assert!(crate::coloring::is_valid(m.elements(), &colors));
    }
}
