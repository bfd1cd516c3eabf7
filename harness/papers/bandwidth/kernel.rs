//! The kernel file and the arguments of each of its kernels, one struct per kernel in its
//! parameter order.

use crate::device::{Buffer, RealArg};
use crate::kernels::KernelSource;

/// BabelStream's kernels plus gather and atomic scatter-add.
pub const BANDWIDTH: KernelSource = KernelSource { file: "bandwidth.kern", text: include_str!("../../../kernels/bandwidth.kern") };

crate::device::kernel_args! {
    /// Every argument struct of bandwidth.kern.
    pub const BANDWIDTH_ARGS in BANDWIDTH;
    /// c = a.
    pub struct Copy<'a> = "bw_copy" { a: &'a Buffer, c: &'a Buffer, n: i64 }
    /// b = scalar c.
    pub struct Mul<'a> = "bw_mul" { b: &'a Buffer, c: &'a Buffer, scalar: RealArg, n: i64 }
    /// c = a + b.
    pub struct Add<'a> = "bw_add" { a: &'a Buffer, b: &'a Buffer, c: &'a Buffer, n: i64 }
    /// a = b + scalar c.
    pub struct Triad<'a> = "bw_triad" { a: &'a Buffer, b: &'a Buffer, c: &'a Buffer, scalar: RealArg, n: i64 }
    /// Each group's partial of a.b.
    pub struct Dot<'a> = "bw_dot" { a: &'a Buffer, b: &'a Buffer, partial: &'a Buffer, n: i64 }
    /// y[i] = x[map[i]].
    pub struct Gather<'a> = "bw_gather" { x: &'a Buffer, map: &'a Buffer, y: &'a Buffer, n: i64 }
    /// y[map[i]] += x[i], atomically.
    pub struct ScatterAdd<'a> = "bw_scatter_add" { x: &'a Buffer, map: &'a Buffer, y: &'a Buffer, n: i64 }
    /// y = value.
    pub struct Fill<'a> = "bw_fill" { y: &'a Buffer, value: RealArg, n: i64 }
}
