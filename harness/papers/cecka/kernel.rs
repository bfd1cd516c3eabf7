//! The kernel file and the arguments of each of its kernels, one struct per kernel in its
//! parameter order.

use crate::device::{Buffer, RealArg};
use crate::kernels::KernelSource;

/// The kernel file: every method, selected by `-D` defines.
pub const CECKA: KernelSource = KernelSource { file: "cecka.kern", text: include_str!("../../../kernels/cecka.kern") };

crate::device::kernel_args! {
    /// Every argument struct of cecka.kern.
    pub const CECKA_ARGS in CECKA;
    /// ElemColor and ElemAtomic: one thread per element of `first .. first + count` (in the
    /// device's element order), each adding its entries into CSR slots.
    pub struct Elements<'a> = "cecka_elements" {
        x: &'a Buffer, y: &'a Buffer, conn: &'a Buffer, dof: &'a Buffer, g: &'a Buffer, refs: &'a Buffer, slots: &'a Buffer,
        vals: &'a Buffer, rhs: &'a Buffer, f: RealArg, ne: i32, first: i32, count: i32,
    }
    /// The COO peers' element matrices as triplets.
    pub struct CooElements<'a> = "cecka_coo_elements" {
        x: &'a Buffer, y: &'a Buffer, conn: &'a Buffer, dof: &'a Buffer, g: &'a Buffer, refs: &'a Buffer, ke: &'a Buffer,
        row: &'a Buffer, col: &'a Buffer, rhs: &'a Buffer, f: RealArg, ne: i32, nfree: i32,
    }
    /// `n` zeros.
    pub struct Zero<'a> = "cecka_zero" { v: &'a Buffer, n: i32 }
    /// GlobalNZ's element pass: each block's elements' data to global memory.
    pub struct GlobalElements<'a> = "cecka_global_elements" {
        x: &'a Buffer, y: &'a Buffer, g: &'a Buffer, node_ptr: &'a Buffer, nodes: &'a Buffer, elem_ptr: &'a Buffer,
        lconn: &'a Buffer, refs: &'a Buffer, element_data: &'a Buffer, f: RealArg, ne: i32,
    }
    /// GlobalNZ's reduction pass over the packed reduction array.
    pub struct Reduce<'a> = "cecka_reduce" { red: &'a Buffer, red_ptr: &'a Buffer, element_data: &'a Buffer, out: &'a Buffer }
    /// SharedNZ: one block per node partition.
    pub struct Shared<'a> = "cecka_shared" {
        x: &'a Buffer, y: &'a Buffer, g: &'a Buffer, scat: &'a Buffer, scat_ptr: &'a Buffer, red: &'a Buffer,
        red_ptr: &'a Buffer, block_elements: &'a Buffer, refs: &'a Buffer, out: &'a Buffer, f: RealArg,
    }
    /// LocalNZ: one thread per nonzero.
    pub struct Local<'a> = "cecka_local" {
        x: &'a Buffer, y: &'a Buffer, g: &'a Buffer, conn: &'a Buffer, lst: &'a Buffer, lst_ptr: &'a Buffer,
        refs: &'a Buffer, out: &'a Buffer, f: RealArg, ne: i32,
    }
    /// SharedAtomic: one block per node partition, shared-memory atomics into its own rows.
    pub struct SharedAtomic<'a> = "cecka_shared_atomic" {
        x: &'a Buffer, y: &'a Buffer, g: &'a Buffer, node_ptr: &'a Buffer, nodes: &'a Buffer, node_targets: &'a Buffer,
        call_ptr: &'a Buffer, lconn: &'a Buffer, lslot: &'a Buffer, slot_ptr: &'a Buffer, targets: &'a Buffer,
        refs: &'a Buffer, out: &'a Buffer, f: RealArg, calls: i32,
    }
}
