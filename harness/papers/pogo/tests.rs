//! The maths against closed forms: energy conservation, the P-wave speed, the oracle against
//! Eq. (4)'s K', the sliced ELL against the CSR, and the CFL check.

use super::model::{self, Material, Signal};
use super::prepared::Prepared;
use super::sell::{SlicedEll, SLICE};
use super::spec::ModelName;
use super::system::{energy, energy_of_rows, lumped, Oracle, System};

fn steel() -> Material {
    Material::from_young(210e9, 0.3, 7850.0)
}

#[test]
fn an_undamped_unforced_model_conserves_the_discrete_energy() {
    let mat = steel();
    let h = 0.02;
    let mut m = model::rectangle(1.0, 0.4, h, mat, 1.0);
    m.dt = 0.8 * m.critical_dt();
    let dt = m.dt;
    assert!((m.check_dt().unwrap() - 0.8).abs() < 1e-12);
    let sys = System::build(&m);
    let (mass, _) = lumped(&m);
    // A smooth bump in both components, at rest.
    let bump: Vec<f64> = m
        .mesh
        .points
        .iter()
        .flat_map(|p| {
            let g = (-((p[0] - 0.5).powi(2) + (p[1] - 0.2).powi(2)) / 0.01).exp() * 1e-6;
            [g, -0.5 * g]
        })
        .collect();
    let (mut prev, mut curr, mut next) = (bump.clone(), bump, vec![0.0; 2 * m.nodes()]);
    let mut energies = Vec::new();
    for s in 0..600 {
        sys.step(&prev, &curr, &mut next, 0.0, s % 2 == 0);
        if s % 100 == 0 {
            energies.push(energy(&sys, &mass, dt, &curr, &next));
        }
        std::mem::swap(&mut prev, &mut curr);
        std::mem::swap(&mut curr, &mut next);
    }
    let e0 = energies[0];
    assert!(e0 > 0.0);
    // The solution changed (the waves moved) while the energy did not.
    let moved = curr.iter().zip(&prev).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(moved > 1e-9, "{moved}");
    for e in &energies {
        assert!(((e - e0) / e0).abs() < 1e-10, "{energies:?}");
    }
}

#[test]
fn a_plane_p_wave_travels_at_the_p_wave_speed() {
    // u_y held at zero everywhere, u_x = g(x - vp t): an exact plane P-wave of plane strain.
    let mat = steel();
    let h = 0.005;
    let mut m = model::rectangle(1.0, 0.05, h, mat, 1.0);
    m.dt = 0.8 * m.critical_dt();
    let dt = m.dt;
    m.fixed.iter_mut().skip(1).step_by(2).for_each(|f| *f = true);
    let sys = System::build(&m);
    let g = |x: f64| (-((x - 0.3) / 0.03).powi(2)).exp();
    let field = |t: f64| m.mesh.points.iter().flat_map(|p| [g(p[0] - mat.vp() * t), 0.0]).collect::<Vec<f64>>();
    let (mut prev, mut curr, mut next) = (field(-dt), field(0.0), vec![0.0; 2 * m.nodes()]);
    let centre = |u: &[f64]| {
        let (w, wx) =
            m.mesh.points.iter().enumerate().fold((0.0, 0.0), |(w, wx), (i, p)| (w + u[2 * i] * u[2 * i], wx + u[2 * i] * u[2 * i] * p[0]));
        wx / w
    };
    let x0 = centre(&curr);
    let steps = (0.4 / mat.vp() / dt) as usize;
    for _ in 0..steps {
        sys.step(&prev, &curr, &mut next, 0.0, true);
        std::mem::swap(&mut prev, &mut curr);
        std::mem::swap(&mut curr, &mut next);
    }
    let speed = (centre(&curr) - x0) / (steps as f64 * dt);
    assert!((speed / mat.vp() - 1.0).abs() < 0.01, "speed {speed}, vp {}", mat.vp());
    assert!(curr.iter().skip(1).step_by(2).all(|&v| v == 0.0));
}

#[test]
fn eq4_on_its_csr_operator_equals_the_element_by_element_oracle() {
    let mut m = model::weld(1e-3);
    // A fixed dof and damping on some elements, so that every term of K', C' and F' is used.
    m.fixed[7] = true;
    m.damping.iter_mut().step_by(3).for_each(|d| *d = 2e5);
    let sys = System::build(&m);
    let oracle = Oracle::new(&m);
    let n = 2 * m.nodes();
    let (mut p, mut c, mut x) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let steps = 400;
    for s in 0..steps {
        sys.step(&p, &c, &mut x, m.source.signal.at(s as f64 * m.dt), false);
        std::mem::swap(&mut p, &mut c);
        std::mem::swap(&mut c, &mut x);
    }
    let (want, trace) = oracle.run(steps);
    let err = crate::fem::verify::relative_l2(&c, &want);
    // Two f64 paths of 400 damped, forced steps: the f64 bound.
    assert!(err < 1e-10 && want.iter().any(|&v| v != 0.0), "{err}");
    assert_eq!(c[7], 0.0);
    assert_eq!(trace.len(), (steps + 1) * 4);
    // A wrong step is seen.
    let mut bad = c.clone();
    bad[100] += 1e-3 * want.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(crate::fem::verify::relative_l2(&bad, &want) > 1e-10);
}

#[test]
fn the_sliced_ell_multiplies_like_the_csr_and_renumbering_keeps_the_answer() {
    let m = model::weld(1.5e-3);
    let prep = Prepared::new(|| m.clone(), 50, 1).unwrap();
    let sys = &prep.sys;
    let n = sys.nodes;
    let x: Vec<f64> = (0..2 * n).map(|i| (i * 7919 % 1013) as f64 / 1013.0 - 0.4).collect();
    let mut via_csr = vec![0.0; 2 * n];
    sys.step(&vec![0.0; 2 * n], &x, &mut via_csr, 0.0, false);
    // Unsorted (positions are nodes) and sorted by link count in windows of 64 (SELL-C-sigma).
    let mut padding = Vec::new();
    for sigma in [1, 64] {
        let sell = SlicedEll::new(sys, sigma);
        assert_eq!(sell.placed.is_some(), sigma > 1);
        let xp = sell.placed.as_ref().map_or(x.clone(), |p| p.from_dofs(&x));
        let mut y = vec![f64::NAN; 2 * n];
        for q in 0..n {
            let (s, lane) = (q / SLICE, q % SLICE);
            let (mut yx, mut yy) = (0.0, 0.0);
            for row in (sell.slice_ptr[s] as usize..sell.slice_ptr[s + 1] as usize).step_by(SLICE) {
                let c = sell.col[row + lane] as usize;
                let b = 4 * row + lane;
                yx += sell.vals[b] * xp[2 * c] + sell.vals[b + SLICE] * xp[2 * c + 1];
                yy += sell.vals[b + 2 * SLICE] * xp[2 * c] + sell.vals[b + 3 * SLICE] * xp[2 * c + 1];
            }
            (y[2 * q], y[2 * q + 1]) = (yx, yy);
        }
        let y = sell.placed.as_ref().map_or(y.clone(), |p| p.to_dofs(&y));
        for (d, (a, b)) in y.iter().zip(&via_csr).enumerate() {
            assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "sigma {sigma}, dof {d}: {a} against {b}");
        }
        // Every node at one position; within a window, link counts never rise.
        let mut seen = vec![false; n];
        sell.node_at.iter().for_each(|&i| seen[i as usize] = true);
        assert!(seen.iter().all(|&v| v));
        let count = |i: u32| sys.pattern.row_ptr[2 * i as usize + 1] - sys.pattern.row_ptr[2 * i as usize];
        assert!(sell.node_at.chunks(sigma).all(|w| w.windows(2).all(|p| count(p[0]) >= count(p[1]))));
        // RCM's bandwidth (plus the window) lets every column go as a 16-bit offset (the last
        // slice's unused lanes are skipped), and the offsets give the columns back.
        let short = sell.col16().expect("16-bit offsets");
        for s in 0..sell.slice_ptr.len() - 1 {
            for e in sell.slice_ptr[s] as usize..sell.slice_ptr[s + 1] as usize {
                let q = s * SLICE + (e - sell.slice_ptr[s] as usize) % SLICE;
                if q < n {
                    assert_eq!((q as i64 + short[e] as i64) as u32, sell.col[e]);
                }
            }
        }
        padding.push(sell.padding());
    }
    // The sort pads less.
    assert!(padding[1] < padding[0] && padding[1] >= 1.0, "{padding:?}");
    // The renumbered model's oracle gives the original's answer, permuted.
    let (orig, orig_trace) = Oracle::new(&m).run(50);
    let d = m.mesh.points.iter().zip(&prep.model.mesh.points).filter(|(a, b)| a != b).count();
    assert!(d > 0, "RCM changed the order");
    let back: Vec<f64> = (0..m.nodes())
        .flat_map(|old| {
            let new = prep.model.mesh.points.iter().position(|p| *p == m.mesh.points[old]).unwrap();
            [prep.reference[2 * new], prep.reference[2 * new + 1]]
        })
        .collect();
    assert!(crate::fem::verify::relative_l2(&back, &orig) < 1e-12);
    let scale = orig.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(super::gpu::receiver_discrepancy(&prep.ref_trace, &orig_trace, 2 * m.receivers.len(), scale) < 1e-12);
    let mut bad = orig_trace.clone();
    bad[3] = f64::NAN;
    assert!(super::gpu::receiver_discrepancy(&bad, &orig_trace, 2 * m.receivers.len(), scale).is_nan());
    assert!(prep.greedy_eta() > 0.3 && prep.greedy_eta() <= 1.0);
    assert!(prep.aligned_eta() > 0.3 && prep.aligned_eta() <= 1.0, "aligned eta {}", prep.aligned_eta());
    assert!(prep.metis_eta() > 0.3 && prep.metis_eta() <= 1.0, "METIS eta {}", prep.metis_eta());
    assert!(prep.metis_blocks >= m.nodes().div_ceil(512));
}

#[test]
fn an_unstable_time_step_is_refused() {
    let mut m = model::weld(1e-3);
    let crit = m.critical_dt();
    // Steel at 1 mm: about h / vp = 1.7e-7 s.
    assert!(crit > 3e-8 && crit < 3e-7, "{crit}");
    m.dt = 1.01 * crit;
    let e = m.check_dt().unwrap_err();
    assert!(e.contains("unstable") && e.contains("weld"), "{e}");
    m.dt = 0.9 * crit;
    assert!((m.check_dt().unwrap() - 0.9).abs() < 1e-9);
    // From a rough initial displacement (every mode present), just below the limit the motion
    // stays bounded (a limit set too high would let the highest modes grow).
    let growth = |dt: f64| {
        let mut m = m.clone();
        m.dt = dt;
        let sys = System::build(&m);
        let n = 2 * m.nodes();
        let u0: Vec<f64> = (0..n).map(|i| ((i * 7919 % 1013) as f64 / 1013.0 - 0.5) * 1e-9).collect();
        let (mut p, mut c, mut x) = (u0.clone(), u0, vec![0.0; n]);
        let mut at = [0.0; 2];
        for s in 0..2000 {
            sys.step(&p, &c, &mut x, 0.0, true);
            std::mem::swap(&mut p, &mut c);
            std::mem::swap(&mut c, &mut x);
            if s == 999 || s == 1999 {
                at[(s == 1999) as usize] = c.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            }
        }
        at[1] / at[0]
    };
    assert!(growth(0.95 * crit) < 10.0);
}

#[test]
fn signals_have_the_papers_shapes() {
    let s = model::WELD_SIGNAL;
    assert_eq!(s.at(-1e-9), 0.0);
    assert_eq!(s.at(1.01e-6), 0.0);
    // At 0.45 us the 5 MHz sine is at its crest (sin(4.5 pi) = 1) under the Hann window
    // 0.5 (1 - cos(0.9 pi)) of the 1 us burst.
    let want = 0.5 * (1.0 - (0.9 * std::f64::consts::PI).cos());
    assert!((s.at(0.45e-6) - want).abs() < 1e-12, "{}", s.at(0.45e-6));
    assert!((0..1000).all(|i| s.at(i as f64 * 1e-9).abs() <= 1.0));
    let g = Signal::Gaussian { a: 1000.0, t0: 0.25 };
    assert_eq!(g.at(0.25), 1.0);
    assert!((g.at(0.35) - (-10.0f64).exp()).abs() < 1e-15);
}

/// Runs `steps` steps of Eq. (4) from rest with the model's source and returns, after each
/// `every` steps, the discrete energy of the dofs `keep` keeps, with K recovered from `undamped`
/// (the same model without damping).
fn energies(m: &model::Model, undamped: &System, steps: usize, every: usize, keep: &dyn Fn(usize) -> bool) -> Vec<f64> {
    let sys = System::build(m);
    let (mass, _) = lumped(m);
    let n = 2 * m.nodes();
    let (mut prev, mut curr, mut next) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut out = Vec::new();
    for k in 0..steps {
        sys.step(&prev, &curr, &mut next, m.source.signal.at(k as f64 * m.dt), false);
        if (k + 1) % every == 0 {
            out.push(energy_of_rows(undamped, &mass, m.dt, &curr, &next, keep));
        }
        std::mem::swap(&mut prev, &mut curr);
        std::mem::swap(&mut curr, &mut next);
    }
    out
}

#[test]
fn the_geophysical_model_has_table_3s_rocks_and_its_absorbing_regions_take_the_energy() {
    use model::{geo_absorbing_fraction as frac, GEO_ROCKS};
    // The cube law's argument: 0 inside, the depth fraction in a region, the larger in a corner.
    assert_eq!(frac((0.0, -1000.0)), 0.0);
    assert!((frac((2625.0, -1000.0)) - 0.5).abs() < 1e-12);
    assert!((frac((-2625.0, -1000.0)) - 0.5).abs() < 1e-12);
    assert!((frac((0.0, -2812.5)) - 0.75).abs() < 1e-12);
    assert!((frac((2625.0, -2812.5)) - 0.75).abs() < 1e-12);
    let h = 100.0;
    let mut m = model::geophysical(h);
    // Every rock is present, with Table 3's speeds, and the layers are in order from the top:
    // the mean depth of each layer's elements falls with the layer number.
    let mut depth = [(0.0, 0usize); 4];
    for (e, t) in m.mesh.tris.iter().enumerate() {
        let y = t.iter().map(|&i| m.mesh.points[i as usize][1]).sum::<f64>() / 3.0;
        let d = &mut depth[m.material[e] as usize];
        *d = (d.0 + y, d.1 + 1);
    }
    assert!(depth.iter().all(|d| d.1 > 0), "{depth:?}");
    let mean: Vec<f64> = depth.iter().map(|d| d.0 / d.1 as f64).collect();
    assert!(mean.windows(2).all(|w| w[0] > w[1]), "{mean:?}");
    for (mat, &(rho, vp, vs)) in m.materials.iter().zip(&GEO_ROCKS) {
        assert!((mat.rho - rho).abs() < 1e-9 && (mat.vp() - vp).abs() < 1e-9 && (mat.vs() - vs).abs() < 1e-9);
    }
    // d = 500 (x/L)^3: zero in the interior, at most 500 (1/s), and near 500 at the edges.
    assert!(m.damping.iter().all(|&d| (0.0..=500.0).contains(&d)));
    assert!(m.damping.iter().any(|&d| d > 400.0) && m.damping.iter().filter(|&&d| d == 0.0).count() > m.damping.len() / 3);
    assert!(m.check_dt().unwrap() < 1.0);
    // Checks start where the Gaussian reaches 1% of its peak: 0.25 s - sqrt(ln(100)/1000).
    let s = |k: usize| m.source.signal.at(k as f64 * m.dt);
    assert_eq!(m.check_start, 1215);
    assert!(s(m.check_start) >= 0.01 && s(m.check_start - 1) < 0.01);
    // A coarse run of 4 s (dt 1 ms) with a slower pulse, exp(-200 (t - 0.3)^2), that 100 m
    // elements resolve (about 4.5 Hz at most: 4 elements to the shortest S wavelength; the
    // paper's pulse would leave slow, dispersed short waves in the interior). Without damping
    // the energy stays once the force has stopped; with the absorbing regions, most of the
    // energy of the interior (the dofs of nodes that no damped element touches) is gone.
    m.source.signal = Signal::Gaussian { a: 200.0, t0: 0.3 };
    m.dt = 1e-3;
    m.check_dt().unwrap();
    let (_, c) = lumped(&m);
    let interior = |r: usize| c[r / 2] == 0.0;
    let damped_model = m.clone();
    m.damping.iter_mut().for_each(|d| *d = 0.0);
    let undamped = System::build(&m);
    let all = energies(&m, &undamped, 4000, 400, &|_| true);
    let (e1, e_end) = (all[2], *all.last().unwrap());
    assert!(e1 > 0.0 && ((e_end - e1) / e1).abs() < 1e-8, "{all:?}");
    let open = energies(&m, &undamped, 4000, 400, &interior);
    let absorbed = energies(&damped_model, &undamped, 4000, 400, &interior);
    let ratio = absorbed.last().unwrap() / open.last().unwrap();
    // Measured: 0.12 (the rest: waves still in the layers and reflections off the regions'
    // damping gradient); without working regions the ratio is about 1.
    assert!(ratio < 0.2, "the interior kept {ratio} of its undamped energy: {absorbed:?} against {open:?}");
}

#[test]
fn the_receiver_discrepancy_is_the_papers_and_catches_nan() {
    use super::gpu::receiver_discrepancy;
    // Two receivers (4 values a step), three steps; the CPU's largest displacement is 10 (6, 8).
    let want = [0.0, 0.0, 1.0, 1.0, 6.0, 8.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0];
    let mut got = want;
    assert_eq!(receiver_discrepancy(&got, &want, 4, 0.0), 0.0);
    got[2] += 0.3;
    got[3] -= 0.4; // receiver 2 at step 0 off by (0.3, -0.4): 0.5
    got[8] += 0.1;
    assert!((receiver_discrepancy(&got, &want, 4, 0.0) - 0.05).abs() < 1e-15);
    // A floor above the traces' peak scales the discrepancy instead.
    assert!((receiver_discrepancy(&got, &want, 4, 50.0) - 0.01).abs() < 1e-15);
    got[11] = f64::NAN;
    assert!(receiver_discrepancy(&got, &want, 4, 0.0).is_nan());
    assert!(receiver_discrepancy(&got[..8], &want, 4, 0.0).is_nan());
}

/// The gear (Fig. 10, our geometry): one piece, with its internal boundaries (the bore, six
/// holes and four opened cracks, each crack a closed loop of two faces) seen as boundary
/// loops; both blockers cover every node once; Eq. (4) on K' equals the oracle on it.
#[test]
fn the_gear_has_its_internal_boundaries_and_both_blockers_cover_it() {
    let m = super::gear::gear(1.6e-3);
    assert!(m.check_dt().is_ok());
    let n = m.nodes();
    // Boundary loops: components of the boundary-edge graph.
    let edges = m.mesh.boundary_edges();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn root(p: &mut [u32], mut i: u32) -> u32 {
        while p[i as usize] != i {
            p[i as usize] = p[p[i as usize] as usize];
            i = p[i as usize];
        }
        i
    }
    for &[a, b] in &edges {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        parent[ra as usize] = rb;
    }
    let on_boundary: std::collections::BTreeSet<u32> = edges.iter().flatten().copied().collect();
    let loops: std::collections::BTreeSet<u32> = on_boundary.iter().map(|&v| root(&mut parent, v)).collect();
    assert_eq!(loops.len(), 1 + 1 + 6 + 4, "outline, bore, six holes, four cracks");
    // One piece: every node reached from node 0 through the elements.
    let mut parent: Vec<u32> = (0..n as u32).collect();
    for t in &m.mesh.tris {
        for k in 0..2 {
            let (ra, rb) = (root(&mut parent, t[k]), root(&mut parent, t[k + 1]));
            parent[ra as usize] = rb;
        }
    }
    let r0 = root(&mut parent, 0);
    assert!((0..n as u32).all(|v| root(&mut parent, v) == r0));
    assert!(m.source.nodes.len() >= 3 && m.receivers.len() == 2);
    // Both blockers: every node in exactly one block of at most 512 nodes.
    let flat: Vec<u32> = m.mesh.tris.iter().flatten().copied().collect();
    let el = crate::fem::elements::Elements { nodes: &flat, per_element: 3, corners: 3, num_nodes: n };
    let aligned = crate::fem::aligned::aligned_nodes(el, &m.mesh.points, &Default::default());
    let greedy = crate::fem::partition::greedy_nodes(el, 512);
    for (name, block, blocks) in
        [("aligned", &aligned.block, aligned.blocks), ("greedy", &greedy, greedy.iter().max().map_or(0, |&b| b as usize + 1))]
    {
        assert_eq!(block.len(), n, "{name}");
        let mut sizes = vec![0usize; blocks];
        block.iter().for_each(|&b| sizes[b as usize] += 1);
        assert!(sizes.iter().all(|&s| (1..=512).contains(&s)), "{name}: {sizes:?}");
    }
    // Eq. (4) against the element-by-element oracle, with the tooth face's force.
    let sys = System::build(&m);
    let dofs = 2 * n;
    let (mut p, mut c, mut x) = (vec![0.0; dofs], vec![0.0; dofs], vec![0.0; dofs]);
    let steps = 300;
    for s in 0..steps {
        sys.step(&p, &c, &mut x, m.source.signal.at(s as f64 * m.dt), true);
        std::mem::swap(&mut p, &mut c);
        std::mem::swap(&mut c, &mut x);
    }
    let (want, _) = Oracle::new(&m).run(steps);
    let err = crate::fem::verify::relative_l2(&c, &want);
    assert!(err < 1e-10 && want.iter().any(|&v| v != 0.0), "{err}");
}

/// METIS' failure reaches the rows once, with its reason; a model METIS blocked adds no row.
#[test]
fn a_metis_failure_is_one_failed_row_with_its_reason() {
    let blocked = Prepared::new(|| model::rectangle(0.01, 0.005, 1e-3, steel(), 1e-8), 5, 1).unwrap();
    assert!(blocked.metis_error.is_none() && blocked.metis_blocks > 0);
    assert!(blocked.metis_row().is_none());
    let mut built = super::prepared::Built::new(|| model::rectangle(0.01, 0.005, 1e-3, steel(), 1e-8), 5, 1).unwrap();
    built.metis_error = Some("METIS_ERROR_INPUT".into());
    let prep = Prepared::from_built(built, None);
    let row = prep.metis_row().expect("a failed row");
    assert_eq!((row.metric.as_str(), row.status), ("metis-blocks", crate::results::Status::Failed));
    assert!(row.reason.unwrap().contains("METIS_ERROR_INPUT"));
    assert!(prep.metis_row().is_none(), "reported once");
}

/// Section 3.2 on all three models and both blockers: every node in exactly one slot, the
/// boundary in the first four rows, and the paper's kernel's step on the host (loading through
/// the table and the link pointers, as the kernel does) equal to Eq. (4) on K'. A table entry
/// pointed elsewhere is seen.
#[test]
fn both_blockers_arrange_every_model_and_every_link_is_served() {
    use super::arrange::{BLOCK, EDGE_ROWS, UNUSED, WIDTH};
    use super::spec::Blocker;
    for (name, coarsen) in [(ModelName::Weld, 8.0), (ModelName::Gear, 10.0), (ModelName::Geophysical, 8.0)] {
        let prep = Prepared::new(|| name.build(coarsen), 5, 512).unwrap();
        let (sys, n) = (&prep.sys, prep.sys.nodes);
        for blocker in [Blocker::Aligned, Blocker::Greedy] {
            let at = format!("{name:?} {blocker:?}");
            let b = &prep.blocked(blocker).as_ref().unwrap_or_else(|e| panic!("{at}: {e}")).data;
            let arr = &b.arr;
            assert!(arr.blocks >= arr.initial_blocks && arr.blocks == arr.initial_blocks + arr.splits, "{at}");
            let mut seen = vec![false; arr.blocks * BLOCK];
            for &s in &arr.slot {
                assert!(!std::mem::replace(&mut seen[s as usize], true), "{at}: slot {s} twice");
            }
            assert_eq!(seen.iter().filter(|&&v| v).count(), n, "{at}");
            // A node linked to another block sits in its block's first four rows.
            let block_of = |i: usize| arr.slot[i] as usize / BLOCK;
            for t in &prep.model.mesh.tris {
                for (&a, &c) in t.iter().zip(t.iter().cycle().skip(1)) {
                    if block_of(a as usize) != block_of(c as usize) {
                        assert!((arr.slot[a as usize] as usize % BLOCK) < EDGE_ROWS * WIDTH, "{at}");
                    }
                }
            }
            assert!(b.used_links == sys.pattern.nnz() / 4, "{at}: {} links against {}", b.used_links, sys.pattern.nnz() / 4);
            let x: Vec<f64> = (0..2 * n).map(|i| (i * 7919 % 1013) as f64 / 1013.0 - 0.4).collect();
            let prev: Vec<f64> = (0..2 * n).map(|i| (i * 31 % 97) as f64 / 97.0).collect();
            let mut want = vec![0.0; 2 * n];
            sys.step(&prev, &x, &mut want, 0.7, false);
            let step = |b: &super::blocked::BlockData| {
                let mut next = vec![f64::NAN; 2 * b.slots];
                b.step_host(&b.from_dofs(&prev), &b.from_dofs(&x), &mut next, 0.7);
                b.to_dofs(&next)
            };
            let err = crate::fem::verify::relative_l2(&step(b), &want);
            assert!(err < 1e-14, "{at}: {err}");
            // A load from the wrong row is seen.
            let mut bad = b.clone();
            let q = bad.arr.table.iter().position(|&e| e != UNUSED).expect("a load");
            bad.arr.table[q] ^= 1 << 4;
            let err = crate::fem::verify::relative_l2(&step(&bad), &want);
            assert!(!(err < 1e-14), "{at}: a wrong table entry went unseen");
        }
        let (a, g) = (prep.blocked(Blocker::Aligned).as_ref().unwrap(), prep.blocked(Blocker::Greedy).as_ref().unwrap());
        assert!(a.data.arr.eta() > 0.5 && g.data.arr.eta() > 0.4, "{name:?}: {} {}", a.data.arr.eta(), g.data.arr.eta());
    }
}

#[test]
fn each_size_runs_in_one_stretch_with_the_full_runs_after_the_other_gpu_cases_and_the_host_last() {
    use super::benchmark::PogoStepping;
    use super::spec::{Method, Sweep};
    use crate::benchmark::Benchmark;
    use crate::experiment::NonEmpty;
    let sweep = Sweep {
        method: NonEmpty(vec![Method::SELL, Method::CPU_SERIAL, Method::POGO_GREEDY, Method::POGO_ALIGNED]),
        model: NonEmpty(vec![ModelName::Weld]),
        coarsen: NonEmpty(vec![2.0, 1.0]),
    };
    let order: Vec<(Method, f64)> = PogoStepping::points(&sweep).iter().map(|p| (p.method, p.coarsen)).collect();
    // The cache holds one model: a size left is built again when it comes back. Within a size,
    // the window that starts with the first GPU case runs beside the cases without a full run.
    let expected = [
        (Method::POGO_GREEDY, 2.0),
        (Method::SELL, 2.0),
        (Method::POGO_ALIGNED, 2.0),
        (Method::CPU_SERIAL, 2.0),
        (Method::POGO_GREEDY, 1.0),
        (Method::SELL, 1.0),
        (Method::POGO_ALIGNED, 1.0),
        (Method::CPU_SERIAL, 1.0),
    ];
    assert_eq!(order, expected);
}
