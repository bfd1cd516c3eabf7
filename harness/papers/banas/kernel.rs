//! The kernel file and the arguments of each of its kernels, one struct per kernel in its
//! parameter order.

use crate::device::Buffer;
use crate::kernels::KernelSource;

/// The kernel file: the paper's four variants and GRAM by `-D` defines, MMA's own kernel.
pub const BANAS: KernelSource = KernelSource { file: "banas.kern", text: include_str!("../../../kernels/banas.kern") };

crate::device::kernel_args! {
    /// Every argument struct of banas.kern.
    pub const BANAS_ARGS in BANAS;
    /// The element stiffness matrices, `nparts` parts of A^e per pass. `geo` holds the vertices
    /// (JAC) and `jterms` the Jacobian terms (NOJAC): the one input buffer fills both.
    pub struct Integrate<'a> = "banas_integrate" {
        dphi: &'a Buffer, quad: &'a Buffer, geo: &'a Buffer, jterms: &'a Buffer, lame: &'a Buffer, out: &'a Buffer, ne: i32,
        nparts: i32,
    }
    /// MMA's element stiffness matrices (NOJAC inputs; f64 on the tensor cores).
    pub struct IntegrateMma<'a> = "banas_mma" {
        dphi: &'a Buffer, jterms: &'a Buffer, lame: &'a Buffer, out: &'a Buffer, ne: i32, nparts: i32,
    }
    /// The GEMM peers' B and E matrices of every element.
    pub struct Bmatrix<'a> = "banas_bmatrix" {
        dphi: &'a Buffer, jterms: &'a Buffer, lame: &'a Buffer, bm: &'a Buffer, em: &'a Buffer, ne: i32,
    }
    /// 3xTF32's split: x keeps its TF32 high part, `lo` gets the rest.
    pub struct SplitTf32<'a> = "banas_split_tf32" { x: &'a Buffer, lo: &'a Buffer, n: i64 }
}
