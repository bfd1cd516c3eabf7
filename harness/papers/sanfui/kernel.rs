//! The module's kernel file and the arguments of each of its kernels, one struct per kernel in
//! its parameter order, in a leaf module of their own: the device methods (gpu.rs, assembly.rs,
//! shared_nz.rs), the SpMV (spmv.rs) and the peers (peer.rs) all launch from it.

use crate::device::{Buffer, RealArg};
use crate::kernels::KernelSource;

/// The kernel file.
pub const SANFUI: KernelSource = KernelSource { file: "sanfui.kern", text: include_str!("../../../kernels/sanfui.kern") };

crate::device::kernel_args! {
    /// Every argument struct of sanfui.kern.
    pub const SANFUI_ARGS in SANFUI;
    /// The hex8 element matrices K^e (in `order` where the method colours).
    pub struct ElementsArgs<'a> = "sanfui_elements" {
        conn: &'a Buffer, xyz: &'a Buffer, dn: &'a Buffer, lambda: RealArg, mu: RealArg, ke: &'a Buffer, ne: i64, order: &'a Buffer,
    }
    /// SharedNZ in 3D: one block per node partition.
    pub struct SharedNzArgs<'a> = "sanfui_shared_nz" {
        xyz: &'a Buffer, scat: &'a Buffer, scat_ptr: &'a Buffer, red: &'a Buffer, red_ptr: &'a Buffer, block_elements: &'a Buffer,
        dn: &'a Buffer, lambda: RealArg, mu: RealArg, vals: &'a Buffer,
    }
    /// The symbolic phase: each format's index arrays from the node neighbours.
    pub struct Symbolic<'a> = "sanfui_symbolic" { nptr: &'a Buffer, nbr: &'a Buffer, idx_r: &'a Buffer, idx_c: &'a Buffer, nn: i64 }
    /// The numeric phase over the elements `first .. first + count` of `elist`.
    pub struct Numeric<'a> = "sanfui_numeric" {
        elist: &'a Buffer, first: i64, count: i64, conn: &'a Buffer, ke: &'a Buffer, ne: i64, idx_r: &'a Buffer, idx_c: &'a Buffer,
        vals: &'a Buffer, nn: i64,
    }
    /// The baseline: each element's entries added atomically into CSR slots.
    pub struct ElemAtomic<'a> = "sanfui_elem_atomic" { slot: &'a Buffer, ke: &'a Buffer, vals: &'a Buffer, ne: i64 }
    /// ELLM-gather's plan: for each nonzero, the (element, entry) pairs that add into it.
    pub struct GatherPlan<'a> = "sanfui_gather_plan" { nadj: &'a Buffer, conn: &'a Buffer, idx_c: &'a Buffer, plan: &'a Buffer, nn: i64 }
    /// ELLM-gather's numeric phase: each nonzero gathers its sum.
    pub struct GatherArgs<'a> = "sanfui_gather" { nadj: &'a Buffer, plan: &'a Buffer, ke: &'a Buffer, ne: i64, vals: &'a Buffer, nn: i64 }
    /// ELLM to CSR.
    pub struct ToCsr<'a> = "sanfui_to_csr" {
        nptr: &'a Buffer, idx_c: &'a Buffer, vals: &'a Buffer, row_ptr: &'a Buffer, col: &'a Buffer, out: &'a Buffer, nn: i64,
    }
    /// The COO peer's (row, column) pairs.
    pub struct Triplets<'a> = "sanfui_triplets" { conn: &'a Buffer, row: &'a Buffer, col: &'a Buffer, ne: i64 }
    /// y = K x in any of the formats.
    pub struct Spmv<'a> = "sanfui_spmv" {
        idx_r: &'a Buffer, idx_c: &'a Buffer, vals: &'a Buffer, x: &'a Buffer, y: &'a Buffer, nn: i64, nnz: i64,
    }
}
