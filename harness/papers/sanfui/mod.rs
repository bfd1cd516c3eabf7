//! Sanfui and Sharma: GPU assembly of 3D linear elasticity on eight-node hexahedra (a cantilever
//! beam's box mesh) split into a symbolic kernel (the indices of a storage format, node by node)
//! and a numeric kernel (the values, element by element, with a bisection for each node pair's
//! block), into COO, CSR, ELL and the paper's block-indexed COOM and ELLM, with element coloring
//! or atomics; against an ElemAtomic-style baseline and Algorithm 2 on the CPU. COOM and ELLM
//! are also converted to CSR on the device (a timed stage, checked).
//!
//! Here: the element ([`hex8`]), the formats, Eq. 6, Table 1 and the check of a device result
//! ([`formats`]), the box's f64 reference and the CPU methods ([`reference`]), the device
//! methods ([`gpu`]), the bytes and flops per stage ([`cost`]), the cases ([`benchmark`]) and
//! the reports ([`report`]); the solved beam against Timoshenko's deflection ([`beam`]).
//! Kernels: `kernels/sanfui.kern`.
//!
//! Not built yet (issue 12): SharedNZ for hex8 (the paper's GPU baseline), the cuSPARSE
//! COO-to-CSR peer, and the SpMV of each format with the cuSPARSE BSR peer.

pub mod beam;
pub mod benchmark;
pub mod cost;
pub mod formats;
pub mod gpu;
pub mod hex8;
pub mod reference;
pub mod report;
pub mod spec;

pub use benchmark::SanfuiAssembly;
