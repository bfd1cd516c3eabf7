//! Tests of `plans`.

use super::*;
use crate::cecka::problem::system::{assemble_serial, compare};

fn split(p: &Problem, out: Vec<f64>) -> (Vec<f64>, Vec<f64>) {
    (out[..p.nnz()].to_vec(), out[p.nnz()..].to_vec())
}

fn element_data(p: &Problem, e: usize) -> Vec<f64> {
    let en = p.en();
    let (mut a, mut f) = (vec![0.0; en * en], vec![0.0; en]);
    p.element(e, &mut a, &mut f);
    a.extend(f);
    a
}

#[test]
fn lpt_keeps_every_list_in_order_and_balances() {
    let offsets = [0u32, 5, 6, 8, 11, 12];
    let entries: Vec<i32> = (1..=12).collect();
    let packed = pack_lpt(&Lists { offsets: &offsets, entries: &entries }, 2);
    // 12 entries on 2 lanes: LPT gives loads 6 and 6.
    assert_eq!(packed.len(), 12);
    let lane = |l: usize| packed.iter().skip(l).step_by(2).copied().collect::<Vec<i32>>();
    let mut all = lane(0);
    all.extend(lane(1));
    assert!(all.windows(5).any(|w| w == [1, 2, 3, 4, 5]), "the longest list stays contiguous in one lane: {all:?}");
    all.sort();
    assert_eq!(all, entries);
}

#[test]
fn global_plan_reproduces_the_serial_assembly() {
    for order in [1, 3] {
        let p = Problem::new(1, order);
        let plan = global_plan(&p, 64, 1 << 20, 32, 96).unwrap();
        assert!(plan.parts > 4, "METIS should cut {} elements into several parts", p.ne());
        let ne = p.ne();
        let ee = element_entries(p.en());
        // Element data in global memory, computed from the prefetched block nodes.
        let mut s = vec![0.0; ne * ee];
        for k in 0..plan.parts {
            let block = &plan.nodes[plan.node_ptr[k] as usize..plan.node_ptr[k + 1] as usize];
            for pos in plan.elem_ptr[k] as usize..plan.elem_ptr[k + 1] as usize {
                let e = plan.elem_order[pos] as usize;
                for a in 0..p.en() {
                    assert_eq!(block[plan.local_conn[a * ne + pos] as usize], p.mesh.element(e)[a]);
                }
                for (m, v) in element_data(&p, e).into_iter().enumerate() {
                    s[m * ne + pos] = v;
                }
            }
        }
        let mut out = vec![f64::NAN; num_targets(&p)];
        run_reduction(&plan.reduction, &|_, i| s[i], &mut out);
        let (vals, rhs) = split(&p, out);
        let cmp = compare(&vals, &rhs, &assemble_serial(&p));
        assert!(cmp.max_scaled < 1e-13, "order {order}: {cmp:?}");
    }
}

#[test]
fn shared_plan_reproduces_the_serial_assembly_and_respects_the_cap() {
    for order in [1, 2, 4] {
        let p = Problem::new(1, order);
        let en = p.en();
        let ee = element_entries(en);
        let cap = 40;
        let plan = shared_plan(&p, cap, 32).unwrap();
        assert!(plan.stride <= cap && plan.parts > 1);
        assert!(plan.element_calls >= p.ne());
        let mut out = vec![f64::NAN; num_targets(&p)];
        for k in 0..plan.parts {
            // Algorithm 7 into this block's shared memory, then the element subroutines in place.
            let mut smem = vec![f64::NAN; plan.stride * shared_slot(en)];
            let chunk = &plan.scatter.data[plan.scatter.ptr[k] as usize..plan.scatter.ptr[k + 1] as usize];
            for lane in 0..32 {
                let mut node = usize::MAX;
                for &i in chunk.iter().skip(lane).step_by(32) {
                    if i > 0 {
                        node = i as usize - 1;
                    } else if i < 0 {
                        let slot = (-i - 1) as usize;
                        smem[slot] = p.mesh.x[node];
                        smem[slot + en * plan.stride] = p.mesh.y[node];
                        smem[slot + 2 * en * plan.stride] = p.g[node];
                    }
                }
            }
            for le in 0..plan.block_elements[k] as usize {
                let get = |f: usize| (0..en).map(|a| smem[(f * en + a) * plan.stride + le]).collect::<Vec<f64>>();
                let (x, y, g) = (get(0), get(1), get(2));
                let (mut a, mut f) = (vec![0.0; en * en], vec![0.0; en]);
                p.element_from_nodes(&x, &y, &g, &mut a, &mut f);
                a.extend(f);
                for m in 0..ee {
                    smem[m * plan.stride + le] = a[m];
                }
            }
            let one = Packed {
                lanes: 32,
                data: plan.reduction.data[plan.reduction.ptr[k] as usize..plan.reduction.ptr[k + 1] as usize].to_vec(),
                ptr: vec![0, plan.reduction.ptr[k + 1] - plan.reduction.ptr[k]],
            };
            run_reduction(&one, &|_, i| smem[i], &mut out);
        }
        let (vals, rhs) = split(&p, out);
        let cmp = compare(&vals, &rhs, &assemble_serial(&p));
        assert!(cmp.max_scaled < 1e-13, "order {order}: {cmp:?}");
    }
}

#[test]
fn shared_atomic_plan_reproduces_the_serial_assembly() {
    for order in [1, 3, 5] {
        let p = Problem::new(1, order);
        let en = p.en();
        let pairs = off_diagonal_pairs(en);
        let color = vec![0u8; p.ne()];
        let plan = shared_atomic_plan(&p, 4096, 64, &color).unwrap();
        assert!(plan.parts > 4);
        // The kernel's shared arrays: 5 words a node of the largest block's nodes, then the
        // largest block's accumulators (two blocks, maybe): together within the cap.
        assert!(5 * plan.max_nodes + plan.max_slots <= 4096, "order {order}: {} nodes, {} slots", plan.max_nodes, plan.max_slots);
        let calls = plan.calls();
        let mut out = vec![f64::NAN; num_targets(&p)];
        let mut write = |t: u32, v: f64| {
            if t != u32::MAX {
                assert!(out[t as usize].is_nan(), "target {t} written twice");
                out[t as usize] = v;
            }
        };
        for k in 0..plan.parts {
            let (n0, n1) = (plan.node_ptr[k] as usize, plan.node_ptr[k + 1] as usize);
            let nodes = &plan.nodes[n0..n1];
            let nb = nodes.len();
            let (s0, s1) = (plan.slot_ptr[k] as usize, plan.slot_ptr[k + 1] as usize);
            assert!(s1 - s0 + 5 * nb <= 4096);
            // Diagonals at l, loads at nb + l, pairs from 2 nb on, as in the kernel.
            let mut acc = vec![0.0; 2 * nb + s1 - s0];
            for c in plan.call_ptr[k] as usize..plan.call_ptr[k + 1] as usize {
                let l: Vec<usize> = (0..en).map(|a| plan.local_conn[a * calls + c] as usize).collect();
                let get = |v: &[f64]| l.iter().map(|&i| v[nodes[i] as usize]).collect::<Vec<f64>>();
                let (mut a, mut f) = (vec![0.0; en * en], vec![0.0; en]);
                p.element_from_nodes(&get(&p.mesh.x), &get(&p.mesh.y), &get(&p.g), &mut a, &mut f);
                for i in 0..en {
                    acc[l[i]] += a[i * en + i];
                    acc[nb + l[i]] += f[i];
                }
                for (q, &(i, j)) in pairs.iter().enumerate() {
                    let s = plan.local_slot[q * calls + c];
                    if s != u16::MAX {
                        acc[2 * nb + s as usize] += a[i * en + j];
                    }
                }
            }
            for i in 0..nb {
                write(plan.node_targets[2 * (n0 + i)], acc[i]);
                write(plan.node_targets[2 * (n0 + i) + 1], acc[nb + i]);
            }
            for s in 0..s1 - s0 {
                write(plan.targets[2 * (s0 + s)], acc[2 * nb + s]);
                write(plan.targets[2 * (s0 + s) + 1], acc[2 * nb + s]);
            }
        }
        let (vals, rhs) = split(&p, out);
        let cmp = compare(&vals, &rhs, &assemble_serial(&p));
        assert!(cmp.max_scaled < 1e-12, "order {order}: {cmp:?}");
    }
}

#[test]
fn shared_plan_fails_with_a_reason_when_nothing_fits() {
    let p = Problem::new(0, 3);
    let err = shared_plan(&p, 3, 32).err().unwrap_or_default();
    assert!(err.contains("elements per block at most 3") && err.contains("one vertex"), "{err}");
}

/// The one-vertex floor is a true lower bound: a partition METIS finds never has a smaller
/// largest block, a cap at the floor is not refused by it, and a cap below it is refused
/// before a second METIS call.
#[test]
fn the_one_vertex_floor_refuses_only_caps_no_partition_meets() {
    let p = Problem::new(2, 3);
    let err = shared_plan(&p, 1, 32).err().unwrap_or_default();
    let floor: usize = err.rsplit("already needs ").next().and_then(|v| v.trim().parse().ok()).unwrap_or_else(|| panic!("{err}"));
    assert!(floor > 1);
    let plan = shared_plan(&p, 4 * floor, 32).unwrap();
    assert!(plan.stride >= floor, "a partition's largest block ({}) below the floor ({floor})", plan.stride);
    let at = shared_plan(&p, floor, 32).err().unwrap_or_default();
    assert!(!at.contains("one vertex"), "{at}");
    assert!(shared_plan(&p, floor - 1, 32).is_err_and(|e| e.contains("one vertex")));
}

/// The floor check runs only when the first partition does not fit, before the second METIS
/// call, and its refusal ends the search.
#[test]
fn the_floor_is_checked_only_before_a_second_try() {
    let (checks, tries) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let unchecked = std::cell::Cell::new(false);
    let check_ok = || {
        checks.set(checks.get() + 1);
        Ok(())
    };
    let partition = |k: usize| {
        tries.set(tries.get() + 1);
        Ok(vec![0; k])
    };
    let fits_at = |n: usize| move |_: &[i32], k: usize| if k >= n { 1 } else { 2 };
    let p = reachable_before_retry(&unchecked, &check_ok, &partition);
    assert!(partition_until(4, 64, 1, "x", &p, &fits_at(4)).is_ok());
    assert_eq!((checks.get(), tries.get()), (0, 1), "a first fit checks nothing");
    let p = reachable_before_retry(&unchecked, &check_ok, &partition);
    assert!(partition_until(4, 64, 1, "x", &p, &fits_at(6)).is_ok());
    assert_eq!((checks.get(), tries.get()), (1, 3), "checked once, before the second try");
    let refuse = || Err("a block of one vertex already needs 9".to_string());
    let p = reachable_before_retry(&unchecked, &refuse, &partition);
    let err = partition_until(4, 64, 1, "x", &p, &fits_at(1000)).unwrap_err();
    assert!(err.contains("one vertex") && tries.get() == 4, "{err}, {} tries", tries.get());
}

#[test]
fn local_plan_reproduces_the_serial_assembly() {
    let p = Problem::new(1, 2);
    let ee = element_entries(p.en());
    let plan = local_plan(&p, 32, 64).unwrap();
    let mut out = vec![f64::NAN; num_targets(&p)];
    run_reduction(&plan, &|_, i| element_data(&p, i / ee)[i % ee], &mut out);
    let (vals, rhs) = split(&p, out);
    assert!(compare(&vals, &rhs, &assemble_serial(&p)).max_scaled < 1e-13);
}

#[cfg(test)]
mod timing {
    /// Preparation cost of the plans at a high order: `cargo test --release -- --ignored plan_cost_order --nocapture`.
    #[test]
    #[ignore]
    fn plan_cost_order() {
        for order in [4, 5, 6] {
            let t = std::time::Instant::now();
            let p = super::Problem::new(4, order);
            eprintln!("order {order}: problem {:?}", t.elapsed());
            let s = 4;
            let t = std::time::Instant::now();
            let g = super::global_plan(&p, 512, 49152 / (3 * s), 256, 1024).map(|g| g.parts);
            eprintln!("  global {:?} {:?}", t.elapsed(), g);
            let t = std::time::Instant::now();
            let sh = super::shared_plan(&p, 49152 / (super::shared_slot(p.en()) * s), 256).map(|g| g.parts);
            eprintln!("  shared {:?} {:?}", t.elapsed(), sh.map_err(|e| e.len()));
            let t = std::time::Instant::now();
            let color = vec![0u8; p.ne()];
            let sa = super::shared_atomic_plan(&p, 49152 / s, 1024, &color).map(|g| g.parts);
            eprintln!("  shared-atomic {:?} {:?}", t.elapsed(), sa.map_err(|e| e.len()));
            let t = std::time::Instant::now();
            let l = super::local_plan(&p, 128, 512).map(|g| g.blocks());
            eprintln!("  local {:?} {:?}", t.elapsed(), l);
        }
    }

    /// Preparation cost of the plans on the largest mesh: `cargo test --release -- --ignored plan_cost --nocapture`.
    #[test]
    #[ignore]
    fn plan_cost() {
        let t = std::time::Instant::now();
        let p = super::Problem::new(7, 1);
        eprintln!("problem {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let g = super::global_plan(&p, 1024, 4096, 256, 1024).unwrap();
        eprintln!(
            "global {:?}: {} parts, max nodes {}, reduction {} entries, padding {:.3}",
            t.elapsed(),
            g.parts,
            g.max_nodes,
            g.reduction.data.len(),
            g.reduction.padding()
        );
        let t = std::time::Instant::now();
        let s = super::shared_plan(&p, 1024, 256).unwrap();
        eprintln!(
            "shared {:?}: {} parts, stride {}, calls {}, fetches {}, scatter {} ({:.3}), reduction {} ({:.3})",
            t.elapsed(),
            s.parts,
            s.stride,
            s.element_calls,
            s.node_fetches,
            s.scatter.data.len(),
            s.scatter.padding(),
            s.reduction.data.len(),
            s.reduction.padding()
        );
    }
}
