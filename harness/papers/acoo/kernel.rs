//! The kernel file and the arguments of each of its kernels, one struct per kernel in its
//! parameter order.

use crate::device::Buffer;
use crate::kernels::KernelSource;

/// The kernel file.
pub const ACOO: KernelSource = KernelSource { file: "acoo.kern", text: include_str!("../../../kernels/acoo.kern") };

crate::device::kernel_args! {
    /// Every argument struct of acoo.kern.
    pub const ACOO_ARGS in ACOO;
    /// a-FEM's element stage: each element pushes its entries into the nodes' lists.
    pub struct Push<'a> = "acoo_push" { tris: &'a Buffer, x: &'a Buffer, y: &'a Buffer, head: &'a Buffer, node: &'a Buffer, ne: i64 }
    /// The boundary conditions on the lists: the right-hand side of the prescribed values.
    pub struct Bc<'a> = "acoo_bc" { head: &'a Buffer, node: &'a Buffer, dof: &'a Buffer, g: &'a Buffer, rhs: &'a Buffer, n: i64 }
    /// Each row's entries merged, their count written.
    pub struct Consolidate<'a> = "acoo_consolidate" { head: &'a Buffer, node: &'a Buffer, dof: &'a Buffer, count: &'a Buffer, n: i64 }
    /// The lists to CSR, at the scanned row offsets.
    pub struct ToCsr<'a> = "acoo_to_csr" {
        head: &'a Buffer, node: &'a Buffer, dof: &'a Buffer, row_ptr: &'a Buffer, col: &'a Buffer, val: &'a Buffer, n: i64,
    }
    /// csr-atomic: one thread per element, atomic adds into CSR slots.
    pub struct CsrAtomic<'a> = "csr_atomic" {
        tris: &'a Buffer, x: &'a Buffer, y: &'a Buffer, dof: &'a Buffer, g: &'a Buffer, slots: &'a Buffer, vals: &'a Buffer,
        rhs: &'a Buffer, ne: i64,
    }
    /// csr-color: one color's elements `first .. first + count`, plain adds.
    pub struct CsrColor<'a> = "csr_color" {
        first: i64, count: i64, tris: &'a Buffer, x: &'a Buffer, y: &'a Buffer, dof: &'a Buffer, g: &'a Buffer, slots: &'a Buffer,
        vals: &'a Buffer, rhs: &'a Buffer,
    }
    /// EbE v1: the element matrices stored.
    pub struct EbeStore<'a> = "ebe_store" { tris: &'a Buffer, x: &'a Buffer, y: &'a Buffer, ke: &'a Buffer, ne: i64 }
    /// q += A^e p over one color's elements.
    pub struct EbeMatvec<'a> = "ebe_matvec" {
        elist: &'a Buffer, first: i64, count: i64, tris: &'a Buffer, x: &'a Buffer, y: &'a Buffer, ke: &'a Buffer, p: &'a Buffer,
        q: &'a Buffer,
    }
    /// b = -(A g) on the free nodes.
    pub struct EbeRhsFinish<'a> = "ebe_rhs_finish" { b: &'a Buffer, dof: &'a Buffer, n: i64 }
    /// q = A p with the block partials of p.q.
    pub struct SpmvCsr<'a> = "cg_spmv_csr" {
        row_ptr: &'a Buffer, col: &'a Buffer, val: &'a Buffer, p: &'a Buffer, q: &'a Buffer, partial: &'a Buffer, n: i64,
    }
    /// q = A p' with p' = r + beta p written into `p_next`, and the block partials of p'.q.
    pub struct SpmvCsrP<'a> = "cg_spmv_csr_p" {
        row_ptr: &'a Buffer, col: &'a Buffer, val: &'a Buffer, r: &'a Buffer, p: &'a Buffer, p_next: &'a Buffer, scal: &'a Buffer,
        q: &'a Buffer, partial: &'a Buffer, n: i64,
    }
    /// The single-reduction CG's iteration: the vector updates and s = A r, partials of r.r and r.s.
    pub struct Pipe<'a> = "cg_pipe" {
        row_ptr: &'a Buffer, col: &'a Buffer, val: &'a Buffer, r_in: &'a Buffer, s_in: &'a Buffer, q_in: &'a Buffer,
        r_out: &'a Buffer, s_out: &'a Buffer, q_out: &'a Buffer, p: &'a Buffer, x: &'a Buffer, scal: &'a Buffer,
        partial: &'a Buffer, n: i64,
    }
    /// Its reduction: alpha and beta from the two sets of partials, r.r into `history[it]`.
    pub struct Reduce2<'a> = "cg_reduce2" { partial: &'a Buffer, m: i64, scal: &'a Buffer, history: &'a Buffer, it: i32 }
    /// The block partials of p.q over the free nodes.
    pub struct MaskDot<'a> = "cg_mask_dot" { dof: &'a Buffer, p: &'a Buffer, q: &'a Buffer, partial: &'a Buffer, n: i64 }
    /// The partials summed into the scalar `what`, the residual into `history[it]`.
    pub struct Reduce<'a> = "cg_reduce" {
        partial: &'a Buffer, m: i64, scal: &'a Buffer, history: &'a Buffer, what: i32, it: i32,
    }
    /// x = 0, r = p = b, the partials of r.r.
    pub struct Start<'a> = "cg_start" { b: &'a Buffer, x: &'a Buffer, r: &'a Buffer, p: &'a Buffer, partial: &'a Buffer, n: i64 }
    /// x += alpha p, r -= alpha q, the partials of r.r.
    pub struct Xr<'a> = "cg_xr" {
        x: &'a Buffer, r: &'a Buffer, p: &'a Buffer, q: &'a Buffer, scal: &'a Buffer, partial: &'a Buffer, n: i64,
    }
    /// p = r + beta p.
    pub struct P<'a> = "cg_p" { p: &'a Buffer, r: &'a Buffer, scal: &'a Buffer, n: i64 }
    /// The vendor CG's start on its scalars.
    pub struct VendorStart<'a> = "cgv_start" { scal: &'a Buffer }
    /// The vendor CG's alpha.
    pub struct VendorAlpha<'a> = "cgv_alpha" { scal: &'a Buffer }
    /// The vendor CG's beta, the residual into `history[it]`.
    pub struct VendorBeta<'a> = "cgv_beta" { scal: &'a Buffer, history: &'a Buffer, it: i32 }
}
