//! The kernel file and the arguments of each of its kernels, one struct per kernel in its
//! parameter order. The step kernels share groups of parameters: the sliced ELL, the rotation of
//! U, the sources and receivers, and the trace's row.

use crate::device::{Buffer, RealArg};
use crate::kernels::KernelSource;

/// The kernel file.
pub const POGO: KernelSource = KernelSource { file: "pogo.kern", text: include_str!("../../../kernels/pogo.kern") };

crate::device::arg_group! {
    /// The sliced ELL a step reads: slice pointers, columns, K' and C'.
    pub struct SellArrays<'a> { slice_ptr: &'a Buffer, col: &'a Buffer, kp: &'a Buffer, cp: &'a Buffer }
}

crate::device::arg_group! {
    /// U_prev, U_curr, U_next of one increment.
    pub struct Rotation<'a> { u_prev: &'a Buffer, u_curr: &'a Buffer, u_next: &'a Buffer }
}

crate::device::arg_group! {
    /// The sources a step adds (dofs, coefficients, count) at the force's amplitude, and the
    /// receivers it records (dofs, count).
    pub struct Sources<'a> { src_dof: &'a Buffer, src_coef: &'a Buffer, nsrc: u32, amp: RealArg, rec_dof: &'a Buffer, nrec: u32 }
}

crate::device::arg_group! {
    /// The trace and the row a step writes.
    pub struct TraceRow<'a> { trace: &'a Buffer, row: i64 }
}

crate::device::kernel_args! {
    /// Every argument struct of pogo.kern.
    pub const POGO_ARGS in POGO;
    /// Our step on the sliced ELL, every row.
    pub struct StepSell<'a> = "pogo_step_sell" { sell: SellArrays<'a>, u: Rotation<'a>, nn: i64, sources: Sources<'a>, trace: TraceRow<'a> }
    /// Our step on the sliced ELL, the positions `first .. last` (a part's interior or the rows
    /// it sends).
    pub struct StepSellRows<'a> = "pogo_step_sell_rows" {
        sell: SellArrays<'a>, u: Rotation<'a>, first: i64, last: i64, sources: Sources<'a>, trace: TraceRow<'a>,
    }
    /// The sent values of U gathered into one contiguous buffer.
    pub struct Pack<'a> = "pogo_pack" { at: &'a Buffer, u: &'a Buffer, out: &'a Buffer, count: u32 }
    /// The library peer's update after its SpMV.
    pub struct PeerUpdate<'a> = "pogo_peer_update" {
        cp: &'a Buffer, u_prev: &'a Buffer, u_next: &'a Buffer, ndof: i64, sources: Sources<'a>, u_curr: &'a Buffer, trace: TraceRow<'a>,
    }
    /// The paper's kernel on its arrangement.
    pub struct StepBlock<'a> = "pogo_step_block" {
        table: &'a Buffer, lptr: &'a Buffer, kp: &'a Buffer, cp: &'a Buffer, u: Rotation<'a>, nblocks: u32, sources: Sources<'a>,
        trace: TraceRow<'a>,
    }
    /// The paper's kernel on blocks `first ..` of its arrangement (a part's sent or interior
    /// blocks).
    pub struct StepBlockFrom<'a> = "pogo_step_block_from" {
        table: &'a Buffer, lptr: &'a Buffer, kp: &'a Buffer, cp: &'a Buffer, u: Rotation<'a>, nblocks: u32, first: u32,
        sources: Sources<'a>, trace: TraceRow<'a>,
    }
    /// The sent values of U on the arrangement's two planes, gathered into one buffer.
    pub struct PackPlanes<'a> = "pogo_pack_planes" { at: &'a Buffer, u: &'a Buffer, out: &'a Buffer, count: u32, slots: i64 }
    /// A received halo written into the arrangement's two planes.
    pub struct UnpackPlanes<'a> = "pogo_unpack_planes" { at: &'a Buffer, input: &'a Buffer, u: &'a Buffer, count: u32, slots: i64 }
}
