//! Structured meshes of eight-node hexahedra on a box, for 3D problems such as Sanfui and
//! Sharma's cantilever beam: nodes numbered x fastest, then y, then z; each element's nodes in
//! the usual order (bottom face counter-clockwise, then the top face).

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
