//! A box's problem and its f64 reference, shared by the box's cases; and the CPU methods:
//! Algorithm 2 (`addto`) into CSR, serial and over the colors with rayon.

use std::time::Instant;

use fembench_fem::csr::Pattern;
use fembench_fem::hexmesh::BoxMesh;
use rayon::prelude::*;

use crate::fem::hex8;
use fembench_fem::hexmesh::{pattern_of, Neighbours};

/// One box: mesh, neighbour lists, the reference CSR matrix and the scale of its rounding.
pub struct Prepared {
    pub mesh: BoxMesh,
    pub lambda: f64,
    pub mu: f64,
    pub nb: Neighbours,
    /// The CSR pattern of the 3N x 3N matrix, built from the neighbour lists (a test checks it
    /// against the pattern of the elements' couplings).
    pub pattern: Pattern,
    /// The f64 reference values on `pattern`, and Σ_e Σ_q of the absolute values of every term
    /// of each entry (the scale its rounding errors are bounded by).
    pub reference: Vec<f64>,
    pub scale: Vec<f64>,
    /// The 8 colors of the structured box (element parity, Fig. 9).
    pub colors: Vec<Vec<u32>>,
    /// Host seconds: neighbour lists (the symbolic kernel's input, Algorithm 3's steps 3-6) and
    /// coloring.
    pub neighbours_s: f64,
    pub coloring_s: f64,
    /// Largest coordinate over the element edge (the coordinate rounding term of the bounds).
    pub x_over_h: f64,
    /// The SpMV check's probe x, the reference y = K x and each row's scale, made once per box
    /// (every case's product is checked against them).
    pub probe: std::sync::OnceLock<(Vec<f64>, Vec<f64>, Vec<f64>)>,
}

impl Prepared {
    /// The reference values, their pattern and scales, as a format's check reads them.
    pub fn expected(&self) -> super::formats::Expected<'_> {
        super::formats::Expected { pattern: &self.pattern, values: &self.reference, scale: &self.scale }
    }

    pub fn new(nodes: [usize; 3], spacing: f64, young: f64, poisson: f64) -> Prepared {
        let lengths = nodes.map(|n| (n.max(2) - 1) as f64 * spacing);
        let mesh = BoxMesh::new(nodes, lengths);
        let (lambda, mu) = hex8::lame(young, poisson);
        let t0 = Instant::now();
        let nb = Neighbours::of_box(&mesh);
        let t1 = Instant::now();
        let colors = parity_colors(&mesh);
        let coloring_s = t1.elapsed().as_secs_f64();
        let pattern = pattern_of(&nb);
        // The f64 reference through the prepared-problem cache (the stages timed above are
        // built in every process).
        let params = format!("nodes={nodes:?} spacing={spacing:?} young={young:?} poisson={poisson:?}");
        let recipe = crate::prep_cache::Recipe { kind: "sanfui-reference", code: crate::prep_code::SANFUI, params: &params };
        let (reference, scale) = crate::prep_cache::cached(recipe, || assemble_reference(&mesh, &pattern, &colors, lambda, mu));
        let x_over_h = lengths.iter().fold(0.0f64, |m, &l| m.max(l)) / spacing;
        Prepared {
            mesh,
            lambda,
            mu,
            nb,
            pattern,
            reference,
            scale,
            colors,
            neighbours_s: (t1 - t0).as_secs_f64(),
            coloring_s,
            x_over_h,
            probe: Default::default(),
        }
    }
    pub fn coords(&self, e: usize) -> [[f64; 3]; 8] {
        std::array::from_fn(|a| self.mesh.coords(self.mesh.element(e)[a]))
    }
}

/// Fig. 9's coloring of a structured box: an element's color is the parity of its (i, j, k).
pub fn parity_colors(m: &BoxMesh) -> Vec<Vec<u32>> {
    let [nx, ny, _] = m.nodes;
    let mut colors = vec![Vec::new(); 8];
    for e in 0..m.num_elements() {
        let (i, j, k) = (e % (nx - 1), (e / (nx - 1)) % (ny - 1), e / ((nx - 1) * (ny - 1)));
        colors[(i & 1) | (j & 1) << 1 | (k & 1) << 2].push(e as u32);
    }
    colors.retain(|c| !c.is_empty());
    colors
}

#[derive(Clone, Copy)]
struct Shared(*mut f64);
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

/// The f64 reference: every element's K^e (and its absolute terms) added at the slot the CSR
/// pattern gives, one color at a time across rayon's threads.
fn assemble_reference(m: &BoxMesh, p: &Pattern, colors: &[Vec<u32>], lambda: f64, mu: f64) -> (Vec<f64>, Vec<f64>) {
    let (mut vals, mut scale) = (vec![0.0; p.nnz()], vec![0.0; p.nnz()]);
    let (vp, sp) = (Shared(vals.as_mut_ptr()), Shared(scale.as_mut_ptr()));
    for group in colors {
        group.par_iter().for_each(|&e| {
            let (vp, sp) = (vp, sp);
            let nodes = m.element(e as usize);
            let x: [[f64; 3]; 8] = std::array::from_fn(|a| m.coords(nodes[a]));
            let (k, kabs) = (hex8::stiffness(&x, lambda, mu, false), hex8::stiffness(&x, lambda, mu, true));
            for i in 0..24 {
                for j in 0..24 {
                    let (r, c) = (3 * nodes[i / 3] as usize + i % 3, 3 * nodes[j / 3] as usize + j % 3);
                    let s = p.slot(r, c).expect("the pattern holds every element coupling");
                    // SAFETY: elements of one color share no node, so no row.
                    unsafe {
                        *vp.0.add(s) += k[i * 24 + j];
                        *sp.0.add(s) += kabs[i * 24 + j];
                    }
                }
            }
        });
    }
    (vals, scale)
}

/// The CPU method's CSR arrays, allocated once per case.
pub struct CpuCsr {
    pub row_ptr: Vec<u32>,
    pub col: Vec<u32>,
    pub vals: Vec<f64>,
}

impl CpuCsr {
    pub fn new(prep: &Prepared) -> CpuCsr {
        let rows = 3 * prep.nb.nodes();
        CpuCsr { row_ptr: vec![0; rows + 1], col: vec![0; 9 * prep.nb.blocks()], vals: vec![0.0; 9 * prep.nb.blocks()] }
    }

    /// The symbolic stage on the host: row offsets and columns from the neighbour lists.
    pub fn symbolic(&mut self, nb: &Neighbours) {
        let n = nb.nodes();
        for a in 0..n {
            let (base, nng) = (nb.ptr[a] as usize, (nb.ptr[a + 1] - nb.ptr[a]) as usize);
            for m in 0..3 {
                let row0 = 9 * base + 3 * nng * m;
                self.row_ptr[3 * a + m] = row0 as u32;
                for k in 0..nng {
                    for c in 0..3 {
                        self.col[row0 + 3 * k + c] = 3 * nb.list[base + k] as u32 + c as u32;
                    }
                }
            }
        }
        self.row_ptr[3 * n] = self.col.len() as u32;
    }

    /// Algorithm 2 for the elements `elements`: K^e computed, then each 3x3 block added where
    /// a bisection over the row finds its first column. `vals` must be shared by no other
    /// thread's rows (one color at a time).
    fn addto(&self, prep: &Prepared, elements: impl Iterator<Item = usize>, vals: Shared) {
        for e in elements {
            let nodes = prep.mesh.element(e);
            let k = hex8::stiffness(&prep.coords(e), prep.lambda, prep.mu, false);
            for a in 0..8 {
                for m in 0..3 {
                    let row = 3 * nodes[a] as usize + m;
                    let (lo, hi) = (self.row_ptr[row] as usize, self.row_ptr[row + 1] as usize);
                    for b in 0..8 {
                        let at = lo + self.col[lo..hi].partition_point(|&c| c < 3 * nodes[b]);
                        for n in 0..3 {
                            // SAFETY: `at + n` lies in this row; rows are not shared (see above).
                            unsafe { *vals.0.add(at + n) += k[(3 * a + m) * 24 + 3 * b + n] };
                        }
                    }
                }
            }
        }
    }

    /// The numeric stage: values zeroed, then Algorithm 2 serially or per color with rayon.
    pub fn numeric(&mut self, prep: &Prepared, parallel: bool) {
        self.vals.fill(0.0);
        let vp = Shared(self.vals.as_mut_ptr());
        if parallel {
            for group in &prep.colors {
                group.par_chunks(256).for_each(|chunk| {
                    let vp = vp;
                    self.addto(prep, chunk.iter().map(|&e| e as usize), vp)
                });
            }
        } else {
            self.addto(prep, 0..prep.mesh.num_elements(), vp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_neighbour_pattern_is_the_elements_pattern_and_the_cpu_methods_match_the_reference() {
        let prep = Prepared::new([5, 3, 4], 0.5, 1.0, 0.3);
        let m = &prep.mesh;
        let p = Pattern::of_elements(3 * m.num_nodes(), m.num_elements(), |e, out| {
            out.extend(m.element(e).iter().flat_map(|&v| (0..3).map(move |c| (3 * v + c) as i32)))
        });
        assert_eq!(prep.pattern, p);
        assert!(fembench_fem::coloring::is_valid(m.elements(), &prep.colors));
        assert_eq!(prep.colors.len(), 8);
        // A row of the assembled matrix sums to zero (translations are free) and the diagonal
        // is positive.
        for r in 0..3 * m.num_nodes() {
            let (lo, hi) = (p.row_ptr[r] as usize, p.row_ptr[r + 1] as usize);
            let sum: f64 =
                prep.reference[lo..hi].iter().enumerate().filter(|(i, _)| p.col[lo + i] as usize % 3 == r % 3).map(|(_, v)| v).sum();
            assert!(sum.abs() <= 1e-12 * prep.scale[lo..hi].iter().sum::<f64>(), "row {r}: {sum}");
            assert!(prep.reference[p.slot(r, r).unwrap()] > 0.0);
        }
        for parallel in [false, true] {
            let mut csr = CpuCsr::new(&prep);
            csr.symbolic(&prep.nb);
            assert_eq!((&csr.row_ptr, &csr.col), (&p.row_ptr, &p.col));
            csr.numeric(&prep, parallel);
            let worst = (0..p.nnz()).map(|i| (csr.vals[i] - prep.reference[i]).abs() / prep.scale[i]).fold(0.0, f64::max);
            assert!(worst < 1e-14, "{worst}");
        }
    }
}
