//! The gear model (section 4.2, Fig. 10, Table 1): a gear-like steel component with internal
//! boundaries, a bore, lightening holes and internal cracks, excited on one tooth face. Fig. 10
//! gives no dimensions, so the geometry is ours; its size is set so that the paper's 80 um
//! elements give about Table 1's 2.89M degrees of freedom.

use super::model::{area_for, Material, Model, Signal, Source};
use crate::fem::cracks::open_cracks;
use crate::fem::trimesh::delaunay_with_interfaces;

/// Teeth, root and tip radii, bore radius, the lightening holes' radius and the radius of their
/// centres (m).
pub const GEAR: Gear = Gear { teeth: 24, root: 0.047, tip: 0.054, bore: 0.014, hole: 0.006, holes_at: 0.0307, holes: 6 };

#[derive(Debug, Clone, Copy)]
pub struct Gear {
    pub teeth: usize,
    pub root: f64,
    pub tip: f64,
    pub bore: f64,
    pub hole: f64,
    pub holes_at: f64,
    pub holes: usize,
}

/// The gear's signal (Table 1): two cycles of 500 kHz under a Hann window.
pub const GEAR_SIGNAL: Signal = Signal::Hann { freq: 500e3, cycles: 2.0 };

fn polar(r: f64, a: f64) -> (f64, f64) {
    (r * a.cos(), r * a.sin())
}

/// The outline: tooth k is centred at angle 2 pi k / teeth; its flanks run from the root circle
/// at +-0.3 of the pitch angle to the tip at +-0.15, and the root between two teeth has a point
/// in the middle of the gap.
pub fn outline(g: &Gear) -> Vec<(f64, f64)> {
    let p = std::f64::consts::TAU / g.teeth as f64;
    (0..g.teeth)
        .flat_map(|k| {
            let c = k as f64 * p;
            [
                polar(g.root, c - 0.3 * p),
                polar(g.tip, c - 0.15 * p),
                polar(g.tip, c + 0.15 * p),
                polar(g.root, c + 0.3 * p),
                polar(g.root, c + 0.5 * p),
            ]
        })
        .collect()
}

fn circle(c: (f64, f64), r: f64, n: usize) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            (c.0 + r * (std::f64::consts::TAU * i as f64 / n as f64).cos(), c.1 + r * (std::f64::consts::TAU * i as f64 / n as f64).sin())
        })
        .collect()
}

/// The internal cracks (open polylines inside the material): a kinked one under the gap between
/// teeth 3 and 4, an arc between two lightening holes, a radial one at the bore's far side and
/// an oblique one in the web.
pub fn cracks(g: &Gear) -> Vec<Vec<(f64, f64)>> {
    let p = std::f64::consts::TAU / g.teeth as f64;
    let gap = 3.5 * p;
    let between = std::f64::consts::PI / 3.0;
    vec![
        vec![polar(g.root - 0.0075, gap - 0.02), polar(g.root - 0.0045, gap), polar(g.root - 0.0020, gap + 0.015)],
        (0..4).map(|i| polar(g.holes_at, between - 0.18 + 0.12 * i as f64)).collect(),
        vec![polar(g.bore + 0.003, std::f64::consts::PI), polar(g.bore + 0.008, std::f64::consts::PI)],
        vec![polar(0.037, 4.0), polar(0.041, 4.12)],
    ]
}

/// The gear model at element size `h`: steel (the weld's base material), free, the force along
/// (-1, -0.8) on every node of tooth 0's tip face (pointing along +x); receivers at the tip of
/// tooth `teeth / 2` on the far side (Fig. 11's trace) and at the root beside the excited tooth
/// (10 mm from the source: the pulse reaches it within a CPU window of a few microseconds);
/// dt = 2 ns, 500,000 increments (Table 1).
pub fn gear(h: f64) -> Model {
    let g = GEAR;
    let mut loops = vec![outline(&g), circle((0.0, 0.0), g.bore, 64)];
    for j in 0..g.holes {
        let a = std::f64::consts::TAU * (j as f64 + 0.5) / g.holes as f64;
        loops.push(circle(polar(g.holes_at, a), g.hole, 32));
    }
    let cracks = cracks(&g);
    let mut mesh = delaunay_with_interfaces(&loops, &cracks, 28.0, area_for(h));
    open_cracks(&mut mesh, &cracks).expect("the mesh follows the gear's cracks");
    let (elements, nodes) = (mesh.tris.len(), mesh.points.len());
    // Tooth 0's tip face: the outline's segment from (tip, -0.15 p) to (tip, +0.15 p).
    let p = std::f64::consts::TAU / g.teeth as f64;
    let (a, b) = (polar(g.tip, -0.15 * p), polar(g.tip, 0.15 * p));
    let face: Vec<u32> = (0..nodes as u32)
        .filter(|&v| {
            let q = mesh.points[v as usize];
            let (dx, dy) = (b.0 - a.0, b.1 - a.1);
            let s = ((q[0] - a.0) * dx + (q[1] - a.1) * dy) / (dx * dx + dy * dy);
            let off = ((q[0] - a.0) * dy - (q[1] - a.1) * dx).abs() / dx.hypot(dy);
            off < 1e-9 && (-1e-9..=1.0 + 1e-9).contains(&s)
        })
        .collect();
    let norm = 1.64f64.sqrt();
    let mut model = Model {
        name: "gear",
        mesh,
        materials: vec![Material::from_young(210e9, 0.3, 7850.0)],
        material: vec![0; elements],
        damping: vec![0.0; elements],
        fixed: vec![false; 2 * nodes],
        source: Source { nodes: face, direction: [-1.0 / norm, -0.8 / norm], signal: GEAR_SIGNAL },
        receivers: Vec::new(),
        dt: 2e-9,
        increments: 500_000,
        check_start: 0,
        element_size: h,
    };
    let near = polar(g.root, 0.5 * p);
    model.receivers = vec![model.nearest([-g.tip, 0.0]), model.nearest([near.0, near.1])];
    model
}
