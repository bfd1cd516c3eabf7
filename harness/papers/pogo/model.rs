//! Pogo's models (Huthwaite 2014, section 4): a plane-strain triangle mesh with a material per
//! element, mass-proportional damping per element, fixed degrees of freedom, a source (nodes, a
//! direction and a time signal), receivers, the time step and the number of increments; and the
//! CFL limit that a time step must respect.

use crate::fem::trimesh::{delaunay_with_interfaces, inside, TriMesh};

/// An isotropic elastic material by its Lamé constants and density.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Material {
    pub rho: f64,
    pub lambda: f64,
    pub mu: f64,
}

impl Material {
    pub fn from_young(young: f64, poisson: f64, rho: f64) -> Material {
        let lambda = young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson));
        Material { rho, lambda, mu: young / (2.0 * (1.0 + poisson)) }
    }
    /// From the P- and S-wave speeds (Table 3's form).
    pub fn from_speeds(rho: f64, vp: f64, vs: f64) -> Material {
        let mu = rho * vs * vs;
        Material { rho, lambda: rho * vp * vp - 2.0 * mu, mu }
    }
    /// The plane-strain P-wave speed sqrt((lambda + 2 mu) / rho).
    pub fn vp(&self) -> f64 {
        ((self.lambda + 2.0 * self.mu) / self.rho).sqrt()
    }
    pub fn vs(&self) -> f64 {
        (self.mu / self.rho).sqrt()
    }
}

/// The force's time signal.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Signal {
    /// `cycles` cycles of a sine at `freq` under a Hann window, then zero.
    Hann { freq: f64, cycles: f64 },
    /// exp(-a (t - t0)^2) (the geophysical model: a = 1000, t0 = 0.25 s).
    Gaussian { a: f64, t0: f64 },
    /// No force.
    None,
}

impl Signal {
    pub fn at(&self, t: f64) -> f64 {
        match *self {
            Signal::Hann { freq, cycles } => {
                let len = cycles / freq;
                if !(0.0..=len).contains(&t) {
                    return 0.0;
                }
                let w = 0.5 * (1.0 - (2.0 * std::f64::consts::PI * t / len).cos());
                w * (2.0 * std::f64::consts::PI * freq * t).sin()
            }
            Signal::Gaussian { a, t0 } => (-a * (t - t0) * (t - t0)).exp(),
            Signal::None => 0.0,
        }
    }
    /// The first increment (of length dt) at which |signal| reaches `fraction` of its peak
    /// (1): a Gaussian's rising flank; 0 for the others.
    pub fn onset(&self, dt: f64, fraction: f64) -> usize {
        match *self {
            Signal::Gaussian { a, t0 } => ((t0 - (-fraction.ln() / a).sqrt()) / dt).ceil().max(0.0) as usize,
            _ => 0,
        }
    }
}

/// A force `signal(t) * direction` (unit vector) on each of `nodes`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Source {
    pub nodes: Vec<u32>,
    pub direction: [f64; 2],
    pub signal: Signal,
}

/// One model as built: everything the stepping needs.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Model {
    /// Not kept in the prepared-problem cache: the reader sets it from the model's name.
    #[serde(skip)]
    pub name: &'static str,
    pub mesh: TriMesh,
    pub materials: Vec<Material>,
    /// Each element's material.
    pub material: Vec<u8>,
    /// Each element's mass-proportional damping coefficient d (1/s): C_e = d M_e.
    pub damping: Vec<f64>,
    /// Per degree of freedom (2 per node, x then y): held at zero.
    pub fixed: Vec<bool>,
    pub source: Source,
    pub receivers: Vec<u32>,
    pub dt: f64,
    pub increments: usize,
    /// The increment at which checked passes start from rest (the force is the one of that
    /// time): 0 where the force starts at t = 0; the geophysical model's Gaussian is below
    /// 1e-22 for its first 100 steps, so its checks start where it reaches 1% of its peak.
    pub check_start: usize,
    /// The element size asked of the mesher (approximate side length).
    pub element_size: f64,
}

impl Model {
    pub fn nodes(&self) -> usize {
        self.mesh.points.len()
    }
    pub fn dofs(&self) -> usize {
        2 * self.nodes()
    }
    /// The mean edge length of the mesh as built.
    pub fn mean_edge(&self) -> f64 {
        let p = &self.mesh.points;
        let len = |a: u32, b: u32| {
            let (p, q) = (p[a as usize], p[b as usize]);
            ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt()
        };
        let sum: f64 = self.mesh.tris.iter().map(|t| len(t[0], t[1]) + len(t[1], t[2]) + len(t[2], t[0])).sum();
        sum / (3 * self.mesh.tris.len()).max(1) as f64
    }
    /// The largest stable time step: 2 / sqrt(max_e lambda_max(M_e^-1 K_e)). The element bound
    /// is an upper bound of the assembled system's largest eigenvalue, so a step below this
    /// limit is stable (damping that is mass-proportional does not lower it).
    pub fn critical_dt(&self) -> f64 {
        use rayon::prelude::*;
        let lmax = (0..self.mesh.tris.len()).into_par_iter().map(|e| element_lambda_max(self, e)).reduce(|| 0.0, f64::max);
        2.0 / lmax.sqrt()
    }
    /// Refuses a time step at or above the CFL limit; returns dt / dt_crit.
    pub fn check_dt(&self) -> Result<f64, String> {
        let crit = self.critical_dt();
        let margin = self.dt / crit;
        if margin.is_finite() && margin < 1.0 {
            Ok(margin)
        } else {
            Err(format!("{}: dt {:.3e} s is unstable: the CFL limit of this mesh is {:.3e} s", self.name, self.dt, crit))
        }
    }
    /// The node nearest a point.
    pub fn nearest(&self, p: [f64; 2]) -> u32 {
        let d = |q: &[f64; 2]| (q[0] - p[0]).powi(2) + (q[1] - p[1]).powi(2);
        (0..self.nodes()).min_by(|&a, &b| d(&self.mesh.points[a]).total_cmp(&d(&self.mesh.points[b]))).expect("a mesh has nodes") as u32
    }
}

/// Element e's area and its shape-function gradients times 2A: (b_a, c_a) for a = 0..3.
pub fn geometry(m: &TriMesh, e: usize) -> (f64, [f64; 3], [f64; 3]) {
    let [p0, p1, p2] = m.tris[e].map(|i| m.points[i as usize]);
    let b = [p1[1] - p2[1], p2[1] - p0[1], p0[1] - p1[1]];
    let c = [p2[0] - p1[0], p0[0] - p2[0], p1[0] - p0[0]];
    let area = 0.5 * ((p1[0] - p0[0]) * (p2[1] - p0[1]) - (p1[1] - p0[1]) * (p2[0] - p0[0]));
    (area, b, c)
}

/// The plane-strain stiffness block coupling nodes a and b of an element (unit thickness):
/// A B_a^T D B_b, rows (x, y) of a, columns (x, y) of b.
pub fn stiffness_block(mat: &Material, area: f64, b: &[f64; 3], c: &[f64; 3], i: usize, j: usize) -> [[f64; 2]; 2] {
    let (l, mu) = (mat.lambda, mat.mu);
    let s = 1.0 / (4.0 * area);
    [
        [s * ((l + 2.0 * mu) * b[i] * b[j] + mu * c[i] * c[j]), s * (l * b[i] * c[j] + mu * c[i] * b[j])],
        [s * (l * c[i] * b[j] + mu * b[i] * c[j]), s * ((l + 2.0 * mu) * c[i] * c[j] + mu * b[i] * b[j])],
    ]
}

/// The element's 6x6 stiffness matrix, dofs (x0, y0, x1, y1, x2, y2).
pub fn element_stiffness(model: &Model, e: usize) -> [[f64; 6]; 6] {
    let (area, b, c) = geometry(&model.mesh, e);
    let mat = &model.materials[model.material[e] as usize];
    let mut k = [[0.0; 6]; 6];
    for i in 0..3 {
        for j in 0..3 {
            let blk = stiffness_block(mat, area, &b, &c, i, j);
            for r in 0..2 {
                for s in 0..2 {
                    k[2 * i + r][2 * j + s] = blk[r][s];
                }
            }
        }
    }
    k
}

/// The largest eigenvalue of M_e^-1 K_e with the lumped M_e = rho A / 3 I.
fn element_lambda_max(model: &Model, e: usize) -> f64 {
    let k = element_stiffness(model, e);
    let (area, _, _) = geometry(&model.mesh, e);
    let m = model.materials[model.material[e] as usize].rho * area / 3.0;
    largest_eigenvalue(&k, [1.0, -0.7, 0.3, 0.9, -0.5, 0.2]) / m
}

/// The largest eigenvalue of a symmetric positive semi-definite matrix (an element stiffness):
/// the Rayleigh quotient after power iteration from `start`, on stack arrays (this runs for
/// every element of a 2M-DOF model). The quotient grows monotonically to the eigenvalue, so it
/// stops once a step adds less than 1e-13 of it.
pub fn largest_eigenvalue<const N: usize>(k: &[[f64; N]; N], start: [f64; N]) -> f64 {
    let mut v = start;
    let mut rq = 0.0;
    for _ in 0..200 {
        let w: [f64; N] = std::array::from_fn(|r| (0..N).map(|c| k[r][c] * v[c]).sum());
        let (vw, vv): (f64, f64) = (v.iter().zip(&w).map(|(a, b)| a * b).sum(), v.iter().map(|a| a * a).sum());
        let next = vw / vv;
        let converged = next - rq <= 1e-13 * next.abs();
        rq = next;
        let norm = w.iter().map(|a| a * a).sum::<f64>().sqrt();
        if norm == 0.0 || converged {
            break;
        }
        v.iter_mut().zip(&w).for_each(|(a, b)| *a = b / norm);
    }
    rq
}

/// A Hann-windowed tone burst at the weld settings.
pub const WELD_SIGNAL: Signal = Signal::Hann { freq: 5e6, cycles: 5.0 };

/// The weld model (Fig. 6, Table 1): a 50 mm x 22 mm steel plate with a V-shaped weld of a
/// second material through its thickness (14 mm wide at the top, 2 mm at the root). A force at
/// 45 degrees down and to the right, at the top surface 15 mm left of the weld's centre; a
/// receiver on the top surface 15 mm right of it, one at the root. `h`: element size (the
/// paper's 40 um gives about 1.9M degrees of freedom, as the paper's model has).
pub fn weld(h: f64) -> Model {
    let (w, t, top, root) = (25e-3, 22e-3, 7e-3, 1e-3);
    let outer = vec![(-w, -t), (-root, -t), (root, -t), (w, -t), (w, 0.0), (top, 0.0), (-top, 0.0), (-w, 0.0)];
    let flanks = [vec![(-top, 0.0), (-root, -t)], vec![(top, 0.0), (root, -t)]];
    let mesh = delaunay_with_interfaces(&[outer], &flanks, 28.0, area_for(h));
    let v = [(-top, 0.0), (-root, -t), (root, -t), (top, 0.0)];
    let material = mesh
        .tris
        .iter()
        .map(|t| {
            let c = t.iter().fold((0.0, 0.0), |(x, y), &i| (x + mesh.points[i as usize][0] / 3.0, y + mesh.points[i as usize][1] / 3.0));
            inside(&v, c) as u8
        })
        .collect::<Vec<_>>();
    let elements = mesh.tris.len();
    let nodes = mesh.points.len();
    let mut model = Model {
        name: "weld",
        mesh,
        // Base: ferritic steel; weld: an austenitic filler (our choice; the paper gives none).
        materials: vec![Material::from_young(210e9, 0.3, 7850.0), Material::from_young(195e9, 0.29, 7950.0)],
        material,
        damping: vec![0.0; elements],
        fixed: vec![false; 2 * nodes],
        source: Source {
            nodes: Vec::new(),
            direction: [std::f64::consts::FRAC_1_SQRT_2, -std::f64::consts::FRAC_1_SQRT_2],
            signal: WELD_SIGNAL,
        },
        receivers: Vec::new(),
        dt: 1e-9,
        increments: 40_000,
        check_start: 0,
        element_size: h,
    };
    model.source.nodes = vec![model.nearest([-15e-3, 0.0])];
    model.receivers = vec![model.nearest([15e-3, 0.0]), model.nearest([0.0, -t])];
    model
}

/// The geophysical model's signal (section 4.3): exp(-1000 (t - 0.25)^2), t in seconds.
pub const GEO_SIGNAL: Signal = Signal::Gaussian { a: 1000.0, t0: 0.25 };

/// Table 3's rocks: density, P-wave and S-wave speed.
pub const GEO_ROCKS: [(f64, f64, f64); 4] =
    [(2600.0, 4000.0, 2000.0), (2700.0, 6000.0, 3500.0), (2500.0, 3600.0, 2100.0), (2650.0, 5000.0, 2500.0)];

/// Width and depth of the geophysical section, and the thickness of its absorbing regions (m).
pub const GEO_SIZE: (f64, f64, f64) = (6000.0, 3000.0, 750.0);

/// The layer interfaces of the geophysical section, top down, as polylines from the left side
/// to the right (x from -3000 to 3000 m, y up, the free surface at y = 0): a gently dipping
/// interface, a steeper one, and an anticline. Fig. 12's geometry is not given in numbers; this
/// one is ours, with Table 3's four rocks in order from the top.
pub fn geo_interfaces() -> Vec<Vec<(f64, f64)>> {
    let (w, _, _) = GEO_SIZE;
    let xs: Vec<f64> = (0..=24).map(|i| -w / 2.0 + w * i as f64 / 24.0).collect();
    let curve = |f: &dyn Fn(f64) -> f64| xs.iter().map(|&x| (x, f(x))).collect::<Vec<_>>();
    vec![
        curve(&|x| -500.0 + 100.0 * x / 3000.0),
        curve(&|x| -1200.0 - 250.0 * x / 3000.0),
        curve(&|x| -2050.0 + 350.0 * (std::f64::consts::PI * x / 6000.0).cos().powi(2)),
    ]
}

/// The depth fraction x/L into the absorbing regions (left, right and bottom, each `GEO_SIZE.2`
/// thick) of a point; 0 outside them, the largest of the three in a corner.
pub fn geo_absorbing_fraction(p: (f64, f64)) -> f64 {
    let (w, d, l) = GEO_SIZE;
    let into = [p.0 - (w / 2.0 - l), (-w / 2.0 + l) - p.0, (-d + l) - p.1];
    into.iter().fold(0.0f64, |a, &v| a.max(v / l)).clamp(0.0, 1.0)
}

/// The geophysical model's mass-proportional damping at an element's centroid: d = 500 (x/L)^3
/// (1/s) in the absorbing regions, zero elsewhere.
pub fn geo_damping(c: (f64, f64)) -> f64 {
    500.0 * geo_absorbing_fraction(c).powi(3)
}

/// The geophysical model (section 4.3, Fig. 12, Table 3): a 6 km x 3 km section of four rock
/// layers, free at the surface, with absorbing regions 750 m thick on the other three sides,
/// whose elements damp in proportion to their mass by d = 500 (x/L)^3 (1/s), x/L the fraction of
/// the depth into the region at the element's centroid. The force exp(-1000 (t - 0.25)^2) in
/// the direction (1, 4) acts at the surface 1 km left of the centre; the receiver is on the
/// surface at the centre. `h`: element size (the paper's 5 m gives about 2.0M degrees of
/// freedom, as the paper's model has).
///
/// The time step is 0.15 ms, 33,334 increments for Table 1's 5 s: Table 1's 0.2 ms is above the
/// CFL bound of our 5 m mesh (0.169 ms, its worst element in the 6000 m/s rock), so the model
/// refuses it.
pub fn geophysical(h: f64) -> Model {
    let (w, d, _) = GEO_SIZE;
    let layers = geo_interfaces();
    // The outer boundary passes through each interface's ends, so that they are its vertices.
    let mut outer = vec![(-w / 2.0, -d), (w / 2.0, -d)];
    outer.extend(layers.iter().rev().map(|l| *l.last().expect("points")));
    outer.push((w / 2.0, 0.0));
    outer.push((-w / 2.0, 0.0));
    outer.extend(layers.iter().map(|l| l[0]));
    let mesh = delaunay_with_interfaces(&[outer], &layers, 28.0, area_for(h));
    // A point's layer: the number of interfaces above it (each a piecewise-linear function of x).
    let below = |l: &[(f64, f64)], p: (f64, f64)| {
        let i = l.partition_point(|q| q.0 <= p.0).clamp(1, l.len() - 1);
        let (a, b) = (l[i - 1], l[i]);
        p.1 < a.1 + (b.1 - a.1) * (p.0 - a.0) / (b.0 - a.0)
    };
    let (mut material, mut damping) = (Vec::new(), Vec::new());
    for t in &mesh.tris {
        let c = t.iter().fold((0.0, 0.0), |(x, y), &i| (x + mesh.points[i as usize][0] / 3.0, y + mesh.points[i as usize][1] / 3.0));
        material.push(layers.iter().filter(|l| below(l, c)).count() as u8);
        damping.push(geo_damping(c));
    }
    let nodes = mesh.points.len();
    let norm = 17f64.sqrt();
    let mut model = Model {
        name: "geophysical",
        mesh,
        materials: GEO_ROCKS.iter().map(|&(rho, vp, vs)| Material::from_speeds(rho, vp, vs)).collect(),
        material,
        damping,
        fixed: vec![false; 2 * nodes],
        source: Source { nodes: Vec::new(), direction: [1.0 / norm, 4.0 / norm], signal: GEO_SIGNAL },
        receivers: Vec::new(),
        dt: GEO_DT,
        increments: 33_334,
        check_start: GEO_SIGNAL.onset(GEO_DT, 1e-2),
        element_size: h,
    };
    model.source.nodes = vec![model.nearest([-1000.0, 0.0])];
    model.receivers = vec![model.nearest([0.0, 0.0])];
    model
}

/// The geophysical model's time step (see [`geophysical`]).
pub const GEO_DT: f64 = 0.15e-3;

/// The largest triangle area asked of the mesher for an element size h: an equilateral
/// triangle of side h, with room for the refinement's smaller triangles.
pub fn area_for(h: f64) -> f64 {
    1.3 * 3f64.sqrt() / 4.0 * h * h
}

/// A homogeneous rectangle [0, lx] x [0, ly] (tests: energy, the P-wave speed).
pub fn rectangle(lx: f64, ly: f64, h: f64, mat: Material, dt: f64) -> Model {
    let mesh = delaunay_with_interfaces(&[vec![(0.0, 0.0), (lx, 0.0), (lx, ly), (0.0, ly)]], &[], 28.0, area_for(h));
    let (elements, nodes) = (mesh.tris.len(), mesh.points.len());
    Model {
        name: "rectangle",
        mesh,
        materials: vec![mat],
        material: vec![0; elements],
        damping: vec![0.0; elements],
        fixed: vec![false; 2 * nodes],
        source: Source { nodes: Vec::new(), direction: [1.0, 0.0], signal: Signal::None },
        receivers: Vec::new(),
        dt,
        increments: 0,
        check_start: 0,
        element_size: h,
    }
}
