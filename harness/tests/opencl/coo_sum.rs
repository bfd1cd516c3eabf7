//! The shared COO-to-CSR kernels on OpenCL.

use crate::common;
use fembench::kernels::Defines;

/// The shared COO-route kernels (coo_sum.kern with the shared scan): pairs sorted on the host,
/// duplicates summed on the device, in f32 and f64, against a host sum; enough pairs that the
/// scan spans several blocks, and rows left empty.
#[test]
fn coo_sum_kernels_sum_sorted_duplicates_on_opencl() {
    use fembench::device::coo_sum::{sum_duplicates, CooSumKernels, CooSumScratch, CsrOut, SortedCoo};
    use fembench::device::kernels::{COO_SUM, SCAN};
    use fembench::device::scan::ScanKernels;
    use fembench::device::DeviceExt;
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    let (rows, pairs) = (60usize, 5000usize);
    // A fixed pseudo-random stream; every third row left empty.
    let mut state = 12345u64;
    let mut next = |m: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % m
    };
    let input: Vec<(i32, i32, f64)> =
        (0..pairs).map(|_| (3 * next(rows / 3) as i32, next(40) as i32, next(1000) as f64 / 7.0 - 50.0)).collect();
    let mut perm: Vec<i32> = (0..pairs as i32).collect();
    perm.sort_by_key(|&k| (input[k as usize].0, input[k as usize].1));
    let (row, col): (Vec<i32>, Vec<i32>) = perm.iter().map(|&k| (input[k as usize].0, input[k as usize].1)).unzip();
    let row_ptr: Vec<i32> = (0..=rows as i32).map(|r| row.partition_point(|&x| x < r) as i32).collect();
    let mut expect: std::collections::BTreeMap<(i32, i32), f64> = Default::default();
    for &(r, c, v) in &input {
        *expect.entry((r, c)).or_default() += v;
    }
    let nnz = expect.len();
    let scan_m = dev.compile(&SCAN, &Defines::new()).unwrap();
    let scan = ScanKernels {
        blocks: dev.kernel(&scan_m, "scan_blocks").unwrap(),
        sums: dev.kernel(&scan_m, "scan_sums").unwrap(),
        add: dev.kernel(&scan_m, "scan_add").unwrap(),
    };
    for precision in [fembench::Precision::F32, fembench::Precision::F64] {
        let m = dev.compile(&COO_SUM, &Defines::for_precision(precision)).unwrap();
        let k = CooSumKernels {
            heads: dev.kernel(&m, "coo_heads").unwrap(),
            segsum: dev.kernel(&m, "coo_segsum").unwrap(),
            compact: dev.kernel(&m, "coo_compact_rows").unwrap(),
        };
        let vals = match precision {
            fembench::Precision::F32 => dev.upload_slice(&input.iter().map(|p| p.2 as f32).collect::<Vec<_>>()).unwrap(),
            fembench::Precision::F64 => dev.upload_slice(&input.iter().map(|p| p.2).collect::<Vec<_>>()).unwrap(),
        };
        let s = if precision == fembench::Precision::F32 { 4 } else { 8 };
        let (row_b, col_b, perm_b, ptr_b) = (
            dev.upload_slice(&row).unwrap(),
            dev.upload_slice(&col).unwrap(),
            dev.upload_slice(&perm).unwrap(),
            dev.upload_slice(&row_ptr).unwrap(),
        );
        let (out_ptr, out_col, out_val) = (dev.alloc(4 * (rows + 1)).unwrap(), dev.alloc(4 * nnz).unwrap(), dev.alloc(s * nnz).unwrap());
        let scratch = CooSumScratch::new(dev.as_ref(), pairs).unwrap();
        let coo = SortedCoo { rows, pairs, row: &row_b, col: &col_b, perm: &perm_b, row_ptr: &ptr_b, vals: &vals };
        sum_duplicates(dev.as_ref(), &k, &scan, &scratch, &coo, &CsrOut { row_ptr: &out_ptr, col: &out_col, val: &out_val }).unwrap();
        dev.synchronize().unwrap();
        let got_ptr: Vec<i32> = dev.download_vec(&out_ptr, rows + 1).unwrap();
        let got_col: Vec<i32> = dev.download_vec(&out_col, nnz).unwrap();
        let got: Vec<f64> = match precision {
            fembench::Precision::F32 => dev.download_vec::<f32>(&out_val, nnz).unwrap().into_iter().map(f64::from).collect(),
            fembench::Precision::F64 => dev.download_vec::<f64>(&out_val, nnz).unwrap(),
        };
        let mut at = 0;
        for r in 0..rows as i32 {
            assert_eq!(got_ptr[r as usize], at as i32, "{precision}: row {r} starts at {}", got_ptr[r as usize]);
            for (&(_, c), &v) in expect.range((r, i32::MIN)..(r + 1, i32::MIN)) {
                assert_eq!(got_col[at], c, "{precision}: entry {at}");
                assert!((got[at] - v).abs() <= 1e-4 * (1.0 + v.abs()), "{precision}: entry {at} = {} not {v}", got[at]);
                at += 1;
            }
        }
        assert_eq!((at, got_ptr[rows] as usize), (nnz, nnz), "{precision}");
    }
}
