//! The shared kernels of the peers' strongest routes, on PoCL against host results.

use super::common;
use fembench::device::kernels::{Defines, RADIX_SORT, SCAN};
use fembench::device::radix_sort::{CooArrays, CooRadixSort, RadixKernels};
use fembench::device::scan::ScanKernels;
use fembench::device::{Device, DeviceExt};

fn scan_kernels(dev: &dyn Device) -> ScanKernels {
    let m = dev.compile(&SCAN, &Defines::new()).unwrap();
    ScanKernels {
        blocks: dev.kernel(&m, "scan_blocks").unwrap(),
        sums: dev.kernel(&m, "scan_sums").unwrap(),
        add: dev.kernel(&m, "scan_add").unwrap(),
    }
}

fn radix_kernels(dev: &dyn Device) -> RadixKernels {
    let m = dev.compile(&RADIX_SORT, &Defines::new()).unwrap();
    let k = |name| dev.kernel(&m, name).unwrap();
    RadixKernels {
        iota: k("radix_iota"),
        count: k("radix_count"),
        scatter: k("radix_scatter"),
        row_ptr: k("radix_row_ptr"),
        copy3: k("radix_copy3"),
    }
}

/// The device radix sort of COO pairs gives what a stable host sort by (row, column) gives: the
/// pairs, the permutation (ties in input order) and the row offsets, over several tiles, with an
/// even and an odd number of passes, and rows left empty.
#[test]
fn radix_sort_orders_coo_pairs_like_a_stable_host_sort() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    let (scan, k) = (scan_kernels(dev.as_ref()), radix_kernels(dev.as_ref()));
    let mut state = 777u64;
    let mut next = |m: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % m
    };
    // (rows, cols): 7 + 13 bits (2 + 4 passes) and 12 + 6 bits (3 + 2 passes, copied back).
    for (rows, cols, pairs) in [(70usize, 5000usize, 9000usize), (3000, 40, 4500)] {
        let input: Vec<(i32, i32)> = (0..pairs).map(|_| ((2 * next(rows / 2)) as i32, next(cols) as i32)).collect();
        let mut perm: Vec<i32> = (0..pairs as i32).collect();
        perm.sort_by_key(|&i| input[i as usize]);
        let (row_b, col_b) = (
            dev.upload_slice(&input.iter().map(|p| p.0).collect::<Vec<_>>()).unwrap(),
            dev.upload_slice(&input.iter().map(|p| p.1).collect::<Vec<_>>()).unwrap(),
        );
        let (perm_b, ptr_b) = (dev.alloc(4 * pairs).unwrap(), dev.alloc(4 * (rows + 1)).unwrap());
        let arrays = CooArrays { rows, cols, pairs, row: &row_b, col: &col_b, perm: &perm_b, row_ptr: &ptr_b };
        let sort = CooRadixSort::new(dev.as_ref(), &k, &scan, arrays).unwrap();
        sort.enqueue().unwrap();
        dev.synchronize().unwrap();
        let got_perm: Vec<i32> = dev.download_vec(&perm_b, pairs).unwrap();
        assert_eq!(got_perm, perm, "{rows} x {cols}, {} passes", sort.passes());
        let got_row: Vec<i32> = dev.download_vec(&row_b, pairs).unwrap();
        let got_col: Vec<i32> = dev.download_vec(&col_b, pairs).unwrap();
        let sorted: Vec<(i32, i32)> = perm.iter().map(|&i| input[i as usize]).collect();
        assert_eq!(got_row.into_iter().zip(got_col).collect::<Vec<_>>(), sorted);
        let row_ptr: Vec<i32> = (0..=rows as i32).map(|r| sorted.partition_point(|p| p.0 < r) as i32).collect();
        assert_eq!(dev.download_vec::<i32>(&ptr_b, rows + 1).unwrap(), row_ptr);
    }
}

/// The 3xTF32 split (Banas's peer): hi has TF32's 10 stored mantissa bits, rounded to nearest,
/// and hi + lo is the input exactly.
#[test]
fn the_tf32_split_keeps_ten_mantissa_bits_and_loses_nothing() {
    use fembench::banas::kernel::BANAS;
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    let m = dev.compile(&BANAS, &Defines::for_precision(fembench::Precision::F32)).unwrap();
    let k = dev.kernel(&m, "banas_split_tf32").unwrap();
    let x: Vec<f32> = (0..3000).map(|i| ((i as f32) * 0.7713).sin() * 10f32.powi(i % 7 - 3)).collect();
    let (hi_b, lo_b) = (dev.upload_slice(&x).unwrap(), dev.alloc(4 * x.len()).unwrap());
    let args = fembench::banas::kernel::SplitTf32 { x: &hi_b, lo: &lo_b, n: x.len() as i64 };
    dev.launch_with(&k, fembench::device::Launch::cover(x.len(), 256), &args).unwrap();
    dev.synchronize().unwrap();
    let (hi, lo): (Vec<f32>, Vec<f32>) = (dev.download_vec(&hi_b, x.len()).unwrap(), dev.download_vec(&lo_b, x.len()).unwrap());
    for i in 0..x.len() {
        assert_eq!(hi[i].to_bits() & 0x1fff, 0, "{}: {} keeps more than 10 mantissa bits", i, hi[i]);
        assert_eq!(hi[i] + lo[i], x[i], "{i}: the parts do not add up");
        assert!(lo[i].abs() <= x[i].abs() * 2f32.powi(-11), "{i}: {} is not the nearest TF32 to {}", hi[i], x[i]);
    }
}
