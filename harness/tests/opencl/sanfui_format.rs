//! A storage format added as docs/extending.md adds one (its type, its section of
//! `kernels/sanfui.kern`): ELLR, ELL with each row's 81 slots side by side. On PoCL its symbolic,
//! numeric and SpMV kernels give the reference matrix and product, read through the format's own
//! check; a section that puts a block's rows in the wrong place fails that check.

use crate::common;

/// The walkthrough's format, as docs/extending.md writes it.
mod ell_rows {
    use fembench::fem::hexmesh::Neighbours;
    use fembench::sanfui::formats::layout::{BoxDims, Entry, Layout, NodeAt, Nodes, Part, Placed, Put, Span, ELLM_WIDTH, ELL_WIDTH, PAD};

    /// ELLR: ELL row-major, row r's slot s at [81 r + s].
    pub struct EllRows;

    impl Layout for EllRows {
        fn name(&self) -> &'static str {
            "ELLR"
        }
        fn code(&self) -> usize {
            5
        }
        fn lengths(&self, nb: &Neighbours) -> (usize, usize, usize) {
            (0, ELL_WIDTH * 3 * nb.nodes(), ELL_WIDTH * 3 * nb.nodes())
        }
        fn bytes_per_dof(&self, d: &BoxDims) -> f64 {
            (4.0 + d.s) * (ELLM_WIDTH as f64 * d.d) * d.d * d.n
        }
        fn place(&self, e: &Entry) -> Placed {
            let at = ELL_WIDTH * e.row + e.k;
            Placed { row: None, col: (at, e.col), val: at }
        }
        fn spans(&self, at: &Nodes) -> [Span; 3] {
            let rows = Span::flat(ELL_WIDTH * 3 * at.a0, ELL_WIDTH * 3 * at.a1, ELL_WIDTH * 3 * at.nb.nodes());
            [Nodes::none(), rows, rows]
        }
        fn check_row(&self, p: &Part, (n, m): (NodeAt, usize), width: u32, put: &mut Put) -> Result<(), String> {
            let row = 3 * n.a + m;
            for s in 0..ELL_WIDTH {
                let at = ELL_WIDTH * row + s;
                if s < width as usize {
                    put(row, s, p.ci(0, at)? as i64, p.vi(0, at)?)?;
                } else if p.ci(0, at)? != PAD {
                    return Err(format!("ELLR row {row} slot {s} should be padding"));
                }
            }
            Ok(())
        }
        fn spmv_threads(&self, nb: &Neighbours) -> usize {
            3 * nb.nodes()
        }
    }

    /// Its section of kernels/sanfui.kern.
    pub const SECTION: &str = r#"
#if FORMAT == 5
DEVICE_FN void fmt_symbolic(idx_t v, idx_t base, int nng, const GLOBAL int *nbr, GLOBAL int *idx_r, GLOBAL int *idx_c, idx_t nn) {
  for (int m = 0; m < 3; m++)
    for (int k = 0; k < ELL_WIDTH / 3; k++)
      for (int n = 0; n < 3; n++) idx_c[(idx_t)ELL_WIDTH * (3 * v + m) + 3 * k + n] = k < nng ? 3 * nbr[base + k] + n : PAD;
}
DEVICE_FN idx_t fmt_block(const GLOBAL int *idx_r, const GLOBAL int *idx_c, idx_t ra, int key, idx_t nn, idx_t *sm, idx_t *sn) {
  idx_t row0 = (idx_t)ELL_WIDTH * 3 * ra;
  *sm = ELL_WIDTH;
  *sn = 1;
  return row0 + 3 * sanfui_find(idx_c, row0, 3, ELL_WIDTH / 3, key);
}
DEVICE_FN void fmt_spmv(idx_t t, const GLOBAL int *idx_r, const GLOBAL int *idx_c, const GLOBAL real *vals, const GLOBAL real *x,
                        GLOBAL real *y, idx_t nn, idx_t nnz) {
  if (t >= 3 * nn) return;
  real s = (real)0;
  for (int k = 0; k < ELL_WIDTH; k++) {
    int c = idx_c[(idx_t)ELL_WIDTH * t + k];
    if (c != PAD) s += vals[(idx_t)ELL_WIDTH * t + k] * x[c];
  }
  y[t] = s;
}
#endif
"#;
}

/// sanfui.kern with `section` before its shared kernels (where a format's section goes).
fn with_section(section: &str) -> fembench::kernels::KernelSource {
    use fembench::sanfui::kernel::SANFUI;
    let at = SANFUI.text.find("#if !FB_SELECT || defined(FB_ONLY_sanfui_symbolic)").unwrap();
    let text = format!("{}{section}\n{}", &SANFUI.text[..at], &SANFUI.text[at..]);
    fembench::kernels::KernelSource { file: "sanfui.kern", text: Box::leak(text.into_boxed_str()) }
}

/// The format's matrix from its kernels (f64, atomics) and its product with x = 1, 2, 3, ...
fn assemble(source: &fembench::kernels::KernelSource, prep: &fembench::sanfui::reference::Prepared) -> (Vec<i32>, Vec<f64>, Vec<f64>) {
    use fembench::device::{DeviceExt, Launch};
    use fembench::kernels::Defines;
    use fembench::sanfui::kernel::{Numeric, Spmv, Symbolic};
    let Some(dev) = common::opencl_device() else { panic!("no OpenCL device") };
    let (nn, ne) = (prep.mesh.num_nodes(), prep.mesh.num_elements());
    let (_, lc, lv) = fembench::sanfui::formats::layout::Layout::lengths(&ell_rows::EllRows, &prep.nb);
    let m = dev.compile(source, &Defines::for_precision(fembench::Precision::F64).with("FORMAT", 5).with("ATOMIC", 1)).unwrap();
    let k = |name: &str| dev.kernel(&m, name).unwrap();
    // K^e interleaved as sanfui_elements writes it: ke[(i 24 + j) ne + e].
    let mut ke = vec![0.0f64; 576 * ne];
    for e in 0..ne {
        let x = prep.coords(e);
        for (i, v) in fembench::fem::hex8::stiffness(&x, prep.lambda, prep.mu, false).iter().enumerate() {
            ke[i * ne + e] = *v;
        }
    }
    let conn: Vec<i32> = (0..ne).flat_map(|e| prep.mesh.element(e).iter().map(|&v| v as i32).collect::<Vec<_>>()).collect();
    let up = |v: &[i32]| dev.upload_slice(v).unwrap();
    let (nptr, nbr, conn, none) = (up(&prep.nb.ptr), up(&prep.nb.list), up(&conn), up(&[0]));
    let (idx_c, vals, ke) = (dev.alloc(4 * lc).unwrap(), dev.upload_slice(&vec![0.0f64; lv]).unwrap(), dev.upload_slice(&ke).unwrap());
    let cover = |n: usize| Launch::cover(n, 64);
    dev.launch_with(&k("sanfui_symbolic"), cover(nn), &Symbolic { nptr: &nptr, nbr: &nbr, idx_r: &none, idx_c: &idx_c, nn: nn as i64 })
        .unwrap();
    let args = Numeric {
        elist: &none,
        first: 0,
        count: ne as i64,
        conn: &conn,
        ke: &ke,
        ne: ne as i64,
        idx_r: &none,
        idx_c: &idx_c,
        vals: &vals,
        nn: nn as i64,
    };
    dev.launch_with(&k("sanfui_numeric"), cover(ne), &args).unwrap();
    let x = dev.upload_slice(&(0..3 * nn).map(|i| 1.0 + i as f64).collect::<Vec<f64>>()).unwrap();
    let y = dev.alloc(8 * 3 * nn).unwrap();
    let args = Spmv { idx_r: &none, idx_c: &idx_c, vals: &vals, x: &x, y: &y, nn: nn as i64, nnz: lv as i64 };
    dev.launch_with(&k("sanfui_spmv"), cover(3 * nn), &args).unwrap();
    (dev.download_vec(&idx_c, lc).unwrap(), dev.download_vec(&vals, lv).unwrap(), dev.download_vec(&y, 3 * nn).unwrap())
}

#[test]
fn a_new_format_assembles_and_multiplies_on_opencl_and_a_misplaced_block_fails_its_check() {
    use fembench::sanfui::formats::Format;
    use fembench::sanfui::formats::{self, Check};
    let _turn = common::opencl_turn();
    if common::opencl_device().is_none() {
        return;
    }
    let prep = fembench::sanfui::reference::Prepared::new([5, 4, 3], 1e-3, 2e11, 0.3);
    let ellr = Format(&ell_rows::EllRows);
    // The host side alone: the reference laid out as ELLR reads back as itself.
    let (r, c, v) = formats::encode(ellr, &prep.nb, &prep.pattern, &prep.reference);
    assert_eq!(formats::check(ellr, &prep.nb, (&r, &c), &v, prep.expected()), Check { worst: 0.0, structure: None });
    // The kernels: within f64 rounding of the reference, and y = A x as the CSR product.
    let (c, v, y) = assemble(&with_section(ell_rows::SECTION), &prep);
    let got = formats::check(ellr, &prep.nb, (&[], &c), &v, prep.expected());
    assert!(got.structure.is_none() && got.worst < 1e-12, "{got:?}");
    let p = &prep.pattern;
    for (row, yr) in y.iter().enumerate() {
        let want: f64 =
            (p.row_ptr[row] as usize..p.row_ptr[row + 1] as usize).map(|at| prep.reference[at] * (1.0 + p.col[at] as f64)).sum();
        let scale: f64 = (p.row_ptr[row] as usize..p.row_ptr[row + 1] as usize).map(|at| prep.scale[at] * (1.0 + p.col[at] as f64)).sum();
        assert!((yr - want).abs() <= 1e-12 * scale, "row {row}: {yr} against {want}");
    }
    // A section whose blocks' rows are 3 slots apart, not 81: its matrix fails its check.
    let (c, v, _) = assemble(&with_section(&ell_rows::SECTION.replace("*sm = ELL_WIDTH;", "*sm = 3;")), &prep);
    let bad = formats::check(ellr, &prep.nb, (&[], &c), &v, prep.expected());
    assert!(bad.worst > 1e-3, "{bad:?}");
}
