//! Banaś, Płaszewski and Macioł, "Numerical integration on GPUs for higher order finite
//! elements": element stiffness matrices of 3D linear elasticity on prisms of degree p = 1..7,
//! integrated on the GPU by four kernel variants (section 4):
//! - REG_JAC / REG_NOJAC (Algorithm 3): each thread accumulates its blocks of A^e in registers;
//! - SHM_JAC / SHM_NOJAC (Algorithm 4): a part of A^e accumulates in shared memory;
//! - JAC computes the Jacobian terms on the device from the element's vertices, NOJAC reads
//!   them, precomputed by the host for every element and quadrature point.
//!
//! Here: the reference prism, its shape functions and quadrature ([`prism`]), the model problem,
//! the mesh and the f64 CPU reference, Algorithm 2 ([`elasticity`]), the host-side plan from the
//! device's limits, Tables 3/4 ([`plan`]), and the staged runs and reports ([`benchmark`]).
//! Kernel: `kernels/banas.kern`, one source, the variants by `-D` defines. The peer ([`peer`],
//! beyond the paper, CUDA only): A^e = B^T (w D B) as one cuBLAS strided-batched GEMM.
//!
//! Each method is a type ([`method`]), registered with one line in [`registry::METHODS`] that
//! states what it is (name, role, where it runs): the kernel variants in `staged`, the cuBLAS
//! route in [`peer`], the Python routes in `python`, the CPU reference in [`benchmark`].
//!
//! Cost model: flops are the paper's count (63 per 3x3 block update per quadrature point plus
//! 20 per shape function per point for the derivatives in physical coordinates), for the
//! useful blocks only: the blocks a padded part adds are the device's waste, not work done.
//! The kernel is compute-bound (its bytes, the element matrices written once, are a few percent
//! of its time at p >= 3), so reports give GFLOP/s and the fraction of FP32/FP64 peak.

pub mod benchmark;
pub mod claims;
pub mod elasticity;
pub mod export;
pub mod inputs;
pub mod kernel;
pub mod method;
pub mod paper;
pub mod peer;
pub mod plan;
pub mod prism;
mod python;
pub mod registry;
pub mod report;
pub mod spec;
mod staged;

pub use benchmark::BanasIntegration;

pub use kernel::BANAS;
