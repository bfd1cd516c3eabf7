//! Sanfui and Sharma: GPU assembly of 3D linear elasticity on eight-node hexahedra (a cantilever
//! beam's box mesh) split into a symbolic kernel (the indices of a storage format, node by node)
//! and a numeric kernel (the values, element by element, with a bisection for each node pair's
//! block), into COO, CSR, ELL and the paper's block-indexed COOM and ELLM, with element coloring
//! or atomics; against an ElemAtomic-style baseline, what most users do (unsorted triplets sorted
//! into CSR by cuSPARSE, [`peer`]) and Algorithm 2 on the CPU. COOM and ELLM are also converted
//! to CSR on the device (a timed stage, checked), and every assembled matrix is multiplied by a
//! vector, by our kernel of its format and by cuSPARSE's CSR or BSR SpMV ([`spmv`]).
//!
//! Here: the element ([`crate::fem::hex8`]), the formats (one type each, [`formats::layout::Layout`],
//! one section each of the kernel file), Eq. 6, Table 1 and the check of a device result
//! ([`formats`]), the box's f64 reference and the CPU methods ([`reference`]), the device
//! methods ([`gpu`]), the bytes and flops per stage ([`cost`]), the cases ([`benchmark`]) and
//! the reports ([`report`], where each method stops fitting: [`limits`]); the solved beam
//! against Timoshenko's deflection ([`beam`]).
//! Kernels: `kernels/sanfui.kern`.
//! The paper's GPU baseline, Cecka et al.'s SharedNZ for hex8, is [`shared_nz`].
//!
//! Each method is a type ([`method`]), registered with one line in [`registry::METHODS`] that
//! states what it is (name, role, where it runs, stages, format and how its numeric kernel
//! meets the race): the format methods in `assembly`, SharedNZ in `shared_nz`, the COO routes
//! in `peer`, JAX's and Warp's routes through their Python script in `python`, the CPU
//! baselines in `benchmark`.

pub mod assembly;
pub mod beam;
pub mod benchmark;
mod claims;
pub mod cost;
pub mod export;
pub mod formats;
pub mod gpu;
pub mod kernel;
pub mod limits;
pub mod method;
pub mod peer;
mod python;
pub mod reference;
pub mod registry;
pub mod report;
pub mod shared_nz;
pub mod spec;
pub mod spmv;

pub use benchmark::SanfuiAssembly;
