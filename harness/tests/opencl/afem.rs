//! A-FEM's list kernels on a fan of triangles: the centre's row has more distinct columns than
//! the consolidation keeps in registers, so it takes the slow path; a wider fan has more than
//! MAXROW and must be reported, not truncated.

use std::collections::BTreeMap;

use fembench::acoo::capacitor::element_matrix;
use fembench::acoo::kernel::ACOO;
use fembench::acoo::kernel::{Bc, Consolidate, Push, ToCsr};
use fembench::device::{Device, DeviceExt, Launch};
use fembench::kernels::Defines;
use fembench::Precision;

use super::common;

/// Node 0 at the centre, `rim` nodes around it, triangles (0, i, i + 1); every node free.
fn fan(rim: usize) -> (Vec<f64>, Vec<f64>, Vec<i32>) {
    let (mut x, mut y) = (vec![0.0], vec![0.0]);
    for i in 0..rim {
        let a = std::f64::consts::TAU * i as f64 / rim as f64;
        // Radii alternate so that no two element matrices are alike.
        let r = 1.0 + 0.25 * (i % 3) as f64;
        x.push(r * a.cos());
        y.push(r * a.sin());
    }
    let tris = (0..rim).flat_map(|i| [0, 1 + i as i32, 1 + ((i + 1) % rim) as i32]).collect();
    (x, y, tris)
}

/// Rows of the fan's matrix: each row's sorted (column, sum) pairs, in f64.
fn reference(x: &[f64], y: &[f64], tris: &[i32]) -> Vec<BTreeMap<i32, f64>> {
    let mut rows = vec![BTreeMap::new(); x.len()];
    for t in tris.chunks(3) {
        let t: [i32; 3] = t.try_into().unwrap();
        let k = element_matrix(t.map(|v| x[v as usize]), t.map(|v| y[v as usize]));
        for i in 0..3 {
            for j in 0..3 {
                *rows[t[i] as usize].entry(t[j]).or_insert(0.0) += k[3 * i + j];
            }
        }
    }
    rows
}

/// A CSR matrix: row pointers, columns, values.
type Csr = (Vec<i32>, Vec<i32>, Vec<f64>);

/// Pushes and consolidates the fan's lists with `regs` register entries, then converts them to
/// CSR; returns the row counts and, where none is -1, the CSR (row_ptr, col, val).
fn lists_to_csr(dev: &dyn Device, rim: usize, regs: usize) -> (Vec<i32>, Option<Csr>) {
    let (x, y, tris) = fan(rim);
    let (n, ne) = (x.len(), rim);
    let defines = Defines::for_precision(Precision::F64).with("BLOCK", 256).with("AFEM_REGS", regs);
    let m = dev.compile(&ACOO, &defines).unwrap();
    let k = |name: &str| dev.kernel(&m, name).unwrap();
    let (tris_b, x_b, y_b) = (dev.upload_slice(&tris).unwrap(), dev.upload_slice(&x).unwrap(), dev.upload_slice(&y).unwrap());
    let dof: Vec<i32> = (0..n as i32).collect();
    let (head, node, dof_b) =
        (dev.upload_slice(&vec![-1i32; n]).unwrap(), dev.alloc(9 * ne * 16).unwrap(), dev.upload_slice(&dof).unwrap());
    let count = dev.upload_slice(&vec![-7i32; n]).unwrap();
    let cover = |items: usize| Launch::cover(items, 256);
    let args = Push { tris: &tris_b, x: &x_b, y: &y_b, head: &head, node: &node, ne: ne as i64 };
    dev.launch_with(&k("acoo_push"), cover(ne), &args).unwrap();
    let args = Consolidate { head: &head, node: &node, dof: &dof_b, count: &count, n: n as i64 };
    dev.launch_with(&k("acoo_consolidate"), cover(n), &args).unwrap();
    let counts: Vec<i32> = dev.download_vec(&count, n).unwrap();
    if counts.iter().any(|&c| c < 0) {
        return (counts, None);
    }
    let row_ptr: Vec<i32> = std::iter::once(0).chain(counts.iter().scan(0, |s, &c| Some(*s + c).inspect(|v| *s = *v))).collect();
    let nnz = row_ptr[n] as usize;
    let (ptr_b, col_b, val_b) = (dev.upload_slice(&row_ptr).unwrap(), dev.alloc(4 * nnz).unwrap(), dev.alloc(8 * nnz).unwrap());
    let args = ToCsr { head: &head, node: &node, dof: &dof_b, row_ptr: &ptr_b, col: &col_b, val: &val_b, n: n as i64 };
    dev.launch_with(&k("acoo_to_csr"), cover(n), &args).unwrap();
    (counts, Some((row_ptr, dev.download_vec(&col_b, nnz).unwrap(), dev.download_vec(&val_b, nnz).unwrap())))
}

#[test]
fn afem_lists_consolidate_rows_longer_than_the_registers_on_opencl() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    // Centre row: 31 distinct columns; rim rows: 4. With 16 register entries (the default) only the centre
    // takes the slow path; with 2 every row does.
    for regs in [16, 2] {
        let rim = 30;
        let (x, y, tris) = fan(rim);
        let expect = reference(&x, &y, &tris);
        let (counts, csr) = lists_to_csr(dev.as_ref(), rim, regs);
        assert_eq!(counts, expect.iter().map(|r| r.len() as i32).collect::<Vec<_>>(), "regs {regs}");
        let (row_ptr, col, val) = csr.unwrap();
        for (r, row) in expect.iter().enumerate() {
            let at = row_ptr[r] as usize..row_ptr[r + 1] as usize;
            assert_eq!(col[at.clone()], row.keys().copied().collect::<Vec<_>>()[..], "regs {regs} row {r}");
            for (got, want) in val[at].iter().zip(row.values()) {
                assert!((got - want).abs() <= 1e-13 * want.abs().max(1.0), "regs {regs} row {r}: {got} vs {want}");
            }
        }
    }
    // 60 rim nodes: the centre has 61 distinct columns, more than MAXROW (48); its count is -1
    // and every other row is still consolidated.
    let (counts, csr) = lists_to_csr(dev.as_ref(), 60, 16);
    assert!(csr.is_none());
    assert_eq!(counts[0], -1);
    assert!(counts[1..].iter().all(|&c| c == 4), "{counts:?}");
}

#[test]
fn afem_bc_moves_prescribed_rows_into_the_free_right_hand_sides_on_opencl() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    let dev = dev.as_ref();
    let rim = 12;
    let (x, y, tris) = fan(rim);
    let (n, ne) = (x.len(), rim);
    let rows = reference(&x, &y, &tris);
    // Prescribed: the centre (g = 2), rim node 1 (g = 0, the kernel skips it) and rim node 6
    // (g = -3); the free nodes numbered in order.
    let g: Vec<f64> = (0..n).map(|v| [(0, 2.0), (6, -3.0)].iter().find(|p| p.0 == v).map_or(0.0, |p| p.1)).collect();
    let prescribed = |v: usize| [0, 1, 6].contains(&v);
    let mut dof = vec![-1i32; n];
    let mut nf = 0;
    for (v, d) in dof.iter_mut().enumerate() {
        if !prescribed(v) {
            *d = nf;
            nf += 1;
        }
    }
    let defines = Defines::for_precision(Precision::F64).with("BLOCK", 256);
    let m = dev.compile(&ACOO, &defines).unwrap();
    let k = |name: &str| dev.kernel(&m, name).unwrap();
    let (tris_b, x_b, y_b) = (dev.upload_slice(&tris).unwrap(), dev.upload_slice(&x).unwrap(), dev.upload_slice(&y).unwrap());
    let (head, node) = (dev.upload_slice(&vec![-1i32; n]).unwrap(), dev.alloc(9 * ne * 16).unwrap());
    let (dof_b, g_b, rhs) =
        (dev.upload_slice(&dof).unwrap(), dev.upload_slice(&g).unwrap(), dev.upload_slice(&vec![0.0f64; nf as usize]).unwrap());
    let cover = |items: usize| Launch::cover(items, 256);
    let args = Push { tris: &tris_b, x: &x_b, y: &y_b, head: &head, node: &node, ne: ne as i64 };
    dev.launch_with(&k("acoo_push"), cover(ne), &args).unwrap();
    let args = Bc { head: &head, node: &node, dof: &dof_b, g: &g_b, rhs: &rhs, n: n as i64 };
    dev.launch_with(&k("acoo_bc"), cover(n), &args).unwrap();
    let got: Vec<f64> = dev.download_vec(&rhs, nf as usize).unwrap();
    for v in (0..n).filter(|&v| !prescribed(v)) {
        // Row v's own prescribed columns (what a row-wise pass would read).
        let want: f64 = rows[v].iter().filter(|(&c, _)| prescribed(c as usize)).map(|(&c, a)| -a * g[c as usize]).sum();
        let r = dof[v] as usize;
        assert!((got[r] - want).abs() <= 1e-13 * want.abs().max(1.0), "row {v}: {} vs {want}", got[r]);
    }
    // Every free node meets the centre (g = 2): no right-hand side may be left zero.
    assert!(got.iter().all(|&b| b != 0.0), "{got:?}");
}
