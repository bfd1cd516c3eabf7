//! Every kernel file compiles with NVRTC to PTX for Hopper (and to a CUBIN, as a device loads it),
//! in f32 and f64, without a GPU: a CUDA compile error fails CI.

mod common;

use fembench::device::{cuda, Backend, DeviceError};
use fembench::kernels::{Defines, KernelSource};
use fembench::Precision;

#[test]
fn every_kernel_compiles_to_ptx() {
    if !common::nvrtc_available() {
        return;
    }
    for source in &fembench::REGISTRY.kernels() {
        for precision in [Precision::F32, Precision::F64] {
            let defines = Defines::for_precision(precision);
            let ptx = cuda::compile_ptx(source, &defines, "compute_90").unwrap_or_else(|e| panic!("{e}"));
            assert!(ptx.contains(".entry"), "{} produced no kernel entry", source.file);
            // Every KERNEL in the file is an entry point of the PTX, but those its defaults leave
            // out.
            for line in source.text.lines().filter(|l| l.starts_with("KERNEL void ")) {
                let name = line["KERNEL void ".len()..].split('(').next().unwrap().trim();
                // banas_mma: MMA's defines build it (`every_banas_plan_compiles_to_ptx`);
                // sanfui_to_csr: a block format's (`every_sanfui_kernel_compiles_for_every_format`).
                if [("banas.kern", "banas_mma"), ("sanfui.kern", "sanfui_to_csr")].contains(&(source.file, name)) {
                    continue;
                }
                assert!(ptx.contains(&format!(".entry {name}(")), "{name} missing from PTX of {}", source.file);
            }
        }
    }
}

#[test]
fn nvrtc_compile_error_keeps_options_and_log() {
    if !common::nvrtc_available() {
        return;
    }
    let broken = KernelSource { file: "broken.kern", text: "KERNEL void k(GLOBAL real *x) { x[0] = undeclared_name; }" };
    match cuda::compile_ptx(&broken, &Defines::new().with("BLOCK", 64), "compute_90") {
        Err(DeviceError::Compile { backend, options, log, .. }) => {
            assert_eq!(backend, Backend::Cuda);
            assert!(options.iter().any(|o| o == "-DBLOCK=64"), "{options:?}");
            assert!(log.contains("undeclared_name"), "log: {log}");
        }
        other => panic!("expected a compile error, got {:?}", other.map(|_| ())),
    }
}

/// What a CUDA device loads: machine code for the GPU's real architecture (an ELF image), so that
/// the driver does not JIT-compile PTX at every module load; a compile error keeps its log.
#[test]
fn kernels_compile_to_cubin_for_hopper() {
    if !common::nvrtc_available() {
        return;
    }
    let source = fembench::REGISTRY.kernels().into_iter().next().expect("a kernel file");
    for precision in [Precision::F32, Precision::F64] {
        let cubin = cuda::compile_cubin(&source, &Defines::for_precision(precision), "sm_90").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&cubin[..4], b"\x7fELF", "{} for sm_90 is not an ELF image", source.file);
    }
    let broken = KernelSource { file: "broken.kern", text: "KERNEL void k(GLOBAL real *x) { x[0] = undeclared_name; }" };
    match cuda::compile_cubin(&broken, &Defines::new().with("BLOCK", 64), "sm_90") {
        Err(DeviceError::Compile { backend, options, log, .. }) => {
            assert_eq!(backend, Backend::Cuda);
            assert!(options.iter().any(|o| o == "-DBLOCK=64") && options.iter().any(|o| o == "--gpu-architecture=sm_90"), "{options:?}");
            assert!(log.contains("undeclared_name"), "log: {log}");
        }
        other => panic!("expected a compile error, got {:?}", other.map(|_| ())),
    }
}

/// Every Banaś variant at every degree, with the defines the planner gives an H100/H200, f32 and
/// f64: the register tiles and shared parts that only the GPU run would otherwise compile; and
/// the cuBLAS peer's B-matrix kernel beside them.
#[test]
fn every_banas_plan_compiles_to_ptx() {
    if !common::nvrtc_available() {
        return;
    }
    use fembench::banas::plan::{hopper_like, Plan, Variant};
    let (dev, tuning) = hopper_like();
    for p in 1..=7 {
        let nsh = fembench::banas::prism::shape_functions(p);
        let nq = fembench::banas::prism::quadrature(p).unwrap().len();
        for v in Variant::ALL {
            for precision in [Precision::F32, Precision::F64] {
                let Ok(plan) = Plan::new(v, nsh, nq, precision, &dev, &tuning) else {
                    assert!(v.mma() && precision == Precision::F32, "p = {p} {v:?} {precision}: no plan");
                    continue;
                };
                let ptx =
                    cuda::compile_ptx(&fembench::banas::BANAS, &plan.defines(precision), "compute_90").unwrap_or_else(|e| panic!("{e}"));
                if v.mma() {
                    // The inline mma.sync, assembled for a real architecture.
                    assert!(
                        ptx.contains(".entry banas_mma(")
                            && ptx.contains(if precision == Precision::F64 {
                                "mma.sync.aligned.m8n8k4"
                            } else {
                                "mma.sync.aligned.m16n8k8"
                            }),
                        "p = {p}"
                    );
                    cuda::compile_cubin(&fembench::banas::BANAS, &plan.defines(precision), "sm_90")
                        .unwrap_or_else(|e| panic!("p = {p}: {e}"));
                }
                assert!(v.mma() || ptx.contains(".entry banas_integrate("), "p = {p} {v:?} {precision}");
                assert!(ptx.contains(".entry banas_bmatrix("), "the peer's kernel, p = {p} {precision}");
            }
        }
    }
}

/// Every Cecka kernel at every order an experiment may ask for (1..6), f32 and f64, full and
/// dummy, atomic and colored: the defines the host passes, not the file's defaults.
#[test]
fn every_cecka_kernel_compiles_for_every_order() {
    if !common::nvrtc_available() {
        return;
    }
    let entries = [
        "cecka_elements",
        "cecka_zero",
        "cecka_global_elements",
        "cecka_reduce",
        "cecka_shared",
        "cecka_local",
        "cecka_shared_atomic",
        "cecka_coo_elements",
    ];
    for order in 1..=6usize {
        let en = (order + 1) * (order + 2) / 2;
        for precision in [Precision::F32, Precision::F64] {
            for dummy in [0, 1] {
                for atomic in [0, 1] {
                    let defines = Defines::for_precision(precision)
                        .with("EN", en)
                        .with("ATOMIC", atomic)
                        .with("DUMMY", dummy)
                        .with("NK_MAX", 96)
                        .with("STRIDE", 24)
                        .with("NB_MAX", 200)
                        .with("TK_MAX", 1500)
                        .with("WG", 128)
                        .with("MIN_BLOCKS", 0)
                        .with("SA_BATCH", 8);
                    let ptx = cuda::compile_ptx(&fembench::cecka::CECKA, &defines, "compute_90")
                        .unwrap_or_else(|e| panic!("order {order} {precision} dummy {dummy} atomic {atomic}: {e}"));
                    for name in entries {
                        assert!(ptx.contains(&format!(".entry {name}(")), "{name} missing at order {order}");
                    }
                }
            }
        }
    }
}

/// Every Sanfui-Sharma kernel for every format, race strategy and precision (the defines the
/// host passes).
#[test]
fn every_sanfui_kernel_compiles_for_every_format() {
    if !common::nvrtc_available() {
        return;
    }
    for f in fembench::sanfui::registry::formats() {
        let format = f.code();
        for atomic in [0u8, 1] {
            for precision in [Precision::F32, Precision::F64] {
                // SharedNZ's stride: 10 element columns in 48 KB in f64, 21 in f32.
                let stride = if precision == Precision::F64 { 10 } else { 21 };
                let defines = Defines::for_precision(precision).with("FORMAT", format).with("ATOMIC", atomic).with("STRIDE", stride);
                let ptx = cuda::compile_ptx(&fembench::sanfui::gpu::SANFUI, &defines, "compute_90")
                    .unwrap_or_else(|e| panic!("format {format} atomic {atomic} {precision}: {e}"));
                for name in [
                    "sanfui_elements",
                    "sanfui_symbolic",
                    "sanfui_numeric",
                    "sanfui_elem_atomic",
                    "sanfui_gather_plan",
                    "sanfui_gather",
                    "sanfui_shared_nz",
                    "sanfui_spmv",
                ] {
                    assert!(ptx.contains(&format!(".entry {name}(")), "{name}: format {format} atomic {atomic} {precision}");
                }
                // The conversion to CSR exists for the block formats only (FMT_BLOCKS).
                assert_eq!(ptx.contains(".entry sanfui_to_csr("), f.0.blocks(), "sanfui_to_csr: format {format}");
            }
        }
    }
}

/// Pogo's kernels with K' stored in f64, or in f32 under f64 sums, and in f32, with 32-bit
/// columns and 16-bit offsets, two or three DOFs a node (the defines the host passes).
#[test]
fn every_pogo_kernel_compiles_for_every_storage() {
    if !common::nvrtc_available() {
        return;
    }
    for (precision, kval) in [(Precision::F64, 1u8), (Precision::F64, 0), (Precision::F32, 0)] {
        for (col16, dim) in [(0u8, 2u8), (1, 2), (0, 3), (1, 3)] {
            let defines = Defines::for_precision(precision).with("KVAL_IS_DOUBLE", kval).with("COL16", col16).with("DIM", dim);
            let ptx = cuda::compile_ptx(&fembench::pogo::kernel::POGO, &defines, "compute_90")
                .unwrap_or_else(|e| panic!("{precision} kval {kval} col16 {col16} dim {dim}: {e}"));
            for name in ["pogo_step_sell", "pogo_step_sell_rows", "pogo_pack", "pogo_peer_update"] {
                assert!(ptx.contains(&format!(".entry {name}(")), "{name}: {precision} kval {kval} col16 {col16} dim {dim}");
            }
        }
    }
}
