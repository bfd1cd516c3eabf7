//! Tests of `system`.

use super::*;

#[test]
fn the_slot_free_path_gives_the_serial_system_and_catches_a_bad_slot() {
    let mut p = Problem::new(1, 2);
    let a = assemble_serial(&p);
    let b = assemble_by_search(&p);
    let (over, _) = check_bounds(&a.vals, &a.rhs, &b, &error_bounds(&p, false), f64::EPSILON / 2.0);
    assert_eq!(over, 0);
    // A wrong slot (as a bug in the pattern code would give) makes the two differ.
    let k = p.slots.iter().position(|&s| s > 0).unwrap();
    p.slots[k] -= 1;
    let bad = assemble_serial(&p);
    let (over, _) = check_bounds(&bad.vals, &bad.rhs, &b, &error_bounds(&p, false), f64::EPSILON / 2.0);
    assert!(over > 0);
}

#[test]
fn in_place_assembly_reuses_the_system_and_zeroes_it() {
    let p = Problem::new(1, 1);
    let mut s = System { vals: vec![9.0; p.nnz()], rhs: vec![9.0; p.n_free] };
    let ptr = s.vals.as_ptr();
    assemble_serial_into(&p, &mut s);
    assert_eq!(s.vals.as_ptr(), ptr, "no new allocation");
    assert_eq!(s, assemble_serial(&p));
    let colors = color_elements(&p.mesh, 0).unwrap();
    let mut t = System { vals: vec![9.0; p.nnz()], rhs: vec![9.0; p.n_free] };
    assemble_parallel_into(&p, &colors, &mut t);
    let (over, _) = check_bounds(&t.vals, &t.rhs, &s, &error_bounds(&p, false), f64::EPSILON / 2.0);
    assert_eq!(over, 0);
}

#[test]
fn the_dummy_system_differs_from_the_full_one_and_zeros_fail_both() {
    let p = Problem::new(1, 2);
    let full = assemble_serial(&p);
    let dummy = assemble_dummy(&p);
    let u = f32::EPSILON as f64 / 2.0;
    let (over, _) = check_bounds(&dummy.vals, &dummy.rhs, &full, &error_bounds(&p, false), u);
    assert!(over > 0, "the dummy system must not pass as the full one");
    let zeros = (vec![0.0; p.nnz()], vec![0.0; p.n_free]);
    for (reference, dummy) in [(&full, false), (&dummy, true)] {
        let (over, _) = check_bounds(&zeros.0, &zeros.1, reference, &error_bounds(&p, dummy), u);
        assert!(over > p.nnz() / 2, "outputs nobody wrote must fail");
    }
}

/// The f32 bound holds for the system assembled with every input and operation rounded to
/// f32 (as the kernels compute it), and is tight enough that an error of a few bounds in
/// one entry fails.
#[test]
fn f32_assembly_is_within_its_per_entry_bound_and_a_planted_error_is_not() {
    for (level, order) in [(2, 1), (1, 3), (0, 6)] {
        let p = Problem::new(level, order);
        let reference = assemble_serial(&p);
        let mut got = assemble_f32(&p, (0.0, 0.0));
        let u = f32::EPSILON as f64 / 2.0;
        let bounds = error_bounds(&p, false);
        let (over, worst) = check_bounds(&got.0, &got.1, &reference, &bounds, u);
        assert_eq!(over, 0, "level {level} order {order}: worst error/bound {worst}");
        let k = p.nnz() / 2;
        got.0[k] = reference.vals[k] + 4.0 * u * bounds.vals[k];
        assert!(check_bounds(&got.0, &got.1, &reference, &bounds, u).0 >= 1);
    }
}

/// The system assembled in f32 as the device kernels do (serially), with the nodal
/// coordinates moved by `shift` before they are rounded to f32 (the stiffness matrix does not
/// change under a shift; the rounding of the coordinates does).
fn assemble_f32(p: &Problem, shift: (f64, f64)) -> (Vec<f64>, Vec<f64>) {
    assemble_f32_with(p, shift, false)
}

/// As [`assemble_f32`]; with `exact_edges` the element's edge vectors are formed in f64 and
/// rounded once (no coordinate rounding: only the element arithmetic and the sums in f32).
fn assemble_f32_with(p: &Problem, shift: (f64, f64), exact_edges: bool) -> (Vec<f64>, Vec<f64>) {
    let en = p.en();
    let r32 = |v: f64| v as f32;
    let mut vals = vec![0.0f32; p.nnz()];
    let mut rhs = vec![0.0f32; p.n_free];
    for e in 0..p.ne() {
        let nodes = p.mesh.element(e);
        let x: Vec<f32> = nodes.iter().map(|&n| r32(p.mesh.x[n as usize] - shift.0)).collect();
        let y: Vec<f32> = nodes.iter().map(|&n| r32(p.mesh.y[n as usize] - shift.1)).collect();
        let (ax, ay, bx, by) = if exact_edges {
            let (x64, y64) = (|a: usize| p.mesh.x[nodes[a] as usize], |a: usize| p.mesh.y[nodes[a] as usize]);
            (r32(x64(1) - x64(0)), r32(y64(1) - y64(0)), r32(x64(2) - x64(0)), r32(y64(2) - y64(0)))
        } else {
            (x[1] - x[0], y[1] - y[0], x[2] - x[0], y[2] - y[0])
        };
        let det = ax * by - ay * bx;
        let inv = 1.0 / det;
        let (cxx, cxy, cyy) = ((bx * bx + by * by) * inv, -(ax * bx + ay * by) * inv, (ax * ax + ay * ay) * inv);
        for i in 0..en {
            let mut fi = r32(SOURCE_F) * det * r32(p.refs.m[i]);
            for j in 0..en {
                let k = i * en + j;
                let a = cxx * r32(p.refs.sxx[k]) + cxy * r32(p.refs.sxy[k]) + cyy * r32(p.refs.syy[k]);
                fi -= a * r32(p.g[nodes[j] as usize]);
                if p.slots[e * en * en + k] >= 0 {
                    vals[p.slots[e * en * en + k] as usize] += a;
                }
            }
            let d = p.dof[nodes[i] as usize];
            if d >= 0 {
                rhs[d as usize] += fi;
            }
        }
    }
    (vals.iter().map(|&v| v as f64).collect(), rhs.iter().map(|&v| v as f64).collect())
}

/// Why our Table VI error is 3.5-4.3x the paper's (docs/papers/cecka.md): almost all of it is
/// the rounding of the nodal coordinates to f32, which grows with |x| / h and so with where the
/// plate sits (ours spans [0, 4] x [0, 2]; the paper's Fig. 11 gives no coordinates). With the
/// edge vectors formed exactly the error drops below the paper's; with the plate centred on the
/// origin it halves; moved away it grows tenfold. The paper's values lie inside that range.
#[test]
fn table_vi_error_is_coordinate_rounding_and_depends_on_where_the_plate_sits() {
    for level in [1, 3] {
        let p = Problem::new(level, 1);
        let reference = assemble_serial(&p);
        let err = |shift, exact| {
            let (v, r) = assemble_f32_with(&p, shift, exact);
            compare(&v, &r, &reference).avg_relative
        };
        let as_is = err((0.0, 0.0), false);
        let centred = err((mesh::WIDTH / 2.0, mesh::HEIGHT / 2.0), false);
        let far = err((-4.0 * mesh::WIDTH, 0.0), false);
        let exact = err((0.0, 0.0), true);
        let paper = crate::cecka::paper::PAPER_TABLE6[level].1;
        assert!(exact < 0.2 * as_is, "level {level}: exact edges {exact:e}, as is {as_is:e}");
        assert!(centred < 0.6 * as_is && far > 5.0 * as_is, "level {level}: centred {centred:e}, far {far:e}, as is {as_is:e}");
        assert!(exact < paper && paper < as_is, "level {level}: paper {paper:e} outside [{exact:e}, {as_is:e}]");
    }
}

/// The full (no Dirichlet) stiffness matrix applied to nodal values of u, per node.
fn apply_full_stiffness(p: &Problem, u: impl Fn(f64, f64) -> f64) -> (Vec<f64>, Vec<f64>) {
    let en = p.en();
    let n = p.mesh.num_nodes();
    let (mut ku, mut load) = (vec![0.0; n], vec![0.0; n]);
    let (mut a_e, mut f_e) = (vec![0.0; en * en], vec![0.0; en]);
    // No Dirichlet folding: element_with(zeros) gives the plain A^e and f∫φ.
    let g0 = vec![0.0; n];
    for e in 0..p.ne() {
        p.element_with(e, &g0, &mut a_e, &mut f_e);
        let nodes = p.mesh.element(e);
        for i in 0..en {
            load[nodes[i] as usize] += f_e[i] / SOURCE_F;
            for j in 0..en {
                let nj = nodes[j] as usize;
                ku[nodes[i] as usize] += a_e[i * en + j] * u(p.mesh.x[nj], p.mesh.y[nj]);
            }
        }
    }
    (ku, load)
}

fn on_boundary(p: &Problem, i: usize) -> bool {
    // Nodes on the outer rectangle or on a hole polygon: test rows away from all of them.
    let (x, y) = (p.mesh.x[i], p.mesh.y[i]);
    let near_hole = [(1.0, 1.0, 0.35), (2.2, 0.7, 0.3), (3.1, 1.3, 0.4)]
        .iter()
        .any(|&(cx, cy, r): &(f64, f64, f64)| ((x - cx).powi(2) + (y - cy).powi(2)).sqrt() < r + 1e-9);
    x < 1e-9 || y < 1e-9 || (x - mesh::WIDTH).abs() < 1e-9 || (y - mesh::HEIGHT).abs() < 1e-9 || near_hole
}

#[test]
fn patch_test_linear_fields_give_zero_interior_residual() {
    for k in 1..=4 {
        let p = Problem::new(1, k);
        let (ku, _) = apply_full_stiffness(&p, |x, y| 3.0 + 2.0 * x - 5.0 * y);
        let worst = (0..p.mesh.num_nodes()).filter(|&i| !on_boundary(&p, i)).map(|i| ku[i].abs()).fold(0.0, f64::max);
        assert!(worst < 1e-9, "k={k}: interior residual {worst}");
    }
}

#[test]
fn polynomial_exactness_of_the_order_k_space() {
    // u = x^2 + y^2 lies in the space for k >= 2 and -Δu = -4, so a(u, φi) = -4 ∫ φi at
    // interior nodes, exactly (the reference integrals are exact).
    for k in 2..=5 {
        let p = Problem::new(1, k);
        let (ku, load) = apply_full_stiffness(&p, |x, y| x * x + y * y);
        let scale = load.iter().fold(0.0f64, |m, v| m.max(4.0 * v.abs()));
        let worst = (0..p.mesh.num_nodes()).filter(|&i| !on_boundary(&p, i)).map(|i| (ku[i] + 4.0 * load[i]).abs()).fold(0.0, f64::max);
        // Round-off of the monomial basis grows with k; a wrong space misses by O(1).
        assert!(worst < 1e-6 * scale, "k={k}: {worst} against {scale}");
    }
}

#[test]
fn parallel_colored_assembly_equals_serial() {
    for k in [1, 3] {
        let p = Problem::new(2, k);
        let serial = assemble_serial(&p);
        let colors = color_elements(&p.mesh, 0).unwrap();
        let parallel = assemble_parallel(&p, &colors);
        let c = compare(&parallel.vals, &parallel.rhs, &serial);
        assert!(c.max_scaled < 1e-13, "k={k}: {c:?}");
    }
}

#[test]
fn coloring_is_proper_balanced_and_honours_min_colors() {
    let p = Problem::new(2, 1);
    for min in [0, 16] {
        let colors = color_elements(&p.mesh, min).unwrap();
        assert!(colors.len() >= min.max(1));
        let mut seen = vec![false; p.ne()];
        for g in &colors {
            let mut owner = std::collections::HashMap::new();
            for &e in g {
                assert!(!seen[e as usize]);
                seen[e as usize] = true;
                for &v in p.mesh.element(e as usize) {
                    assert!(owner.insert(v, e).is_none(), "two elements of one color share node {v}");
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
        let (lo, hi) = (colors.iter().map(Vec::len).min().unwrap(), colors.iter().map(Vec::len).max().unwrap());
        assert!(hi <= 2 * lo + 8, "unbalanced colors: {lo}..{hi}");
    }
}

#[test]
fn system_is_symmetric_and_dirichlet_values_drive_the_rhs() {
    let p = Problem::new(1, 2);
    let s = assemble_serial(&p);
    for r in 0..p.n_free {
        for idx in p.row_ptr[r]..p.row_ptr[r + 1] {
            let c = p.col[idx as usize] as usize;
            let row = &p.col[p.row_ptr[c] as usize..p.row_ptr[c + 1] as usize];
            let t = p.row_ptr[c] as usize + row.binary_search(&(r as u32)).unwrap();
            assert!((s.vals[idx as usize] - s.vals[t]).abs() < 1e-12);
        }
    }
    // Hot side at 200, cold at 10: the rhs is dominated by the boundary terms.
    assert!(s.rhs.iter().any(|&v| v > 10.0));
}
