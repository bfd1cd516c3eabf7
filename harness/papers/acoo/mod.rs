//! a-COO (FEM on GPUs without coloring): the parallel-plate capacitor of the paper, assembled
//! into linked lists with atomics and no coloring (A-FEM), converted to CSR and solved by
//! conjugate gradients, against the element-by-element methods EbE-v1 and EbE-v2 and a CSR
//! assembly into precomputed slots, by atomic adds (csr-atomic) or colored (csr-color), all with
//! the same device CG.
//!
//! Here: the model problem, its meshes and the f64 CPU reference ([`capacitor`]), the device
//! buffers, memory accounting and CG ([`gpu`]), what the methods share ([`methods`]), each
//! method's product on its own ([`product`]), the cases ([`benchmark`]) and the reports
//! ([`report`]). Kernels: `kernels/acoo.kern`.
//!
//! Each method is a type ([`method`]), registered with one line in [`registry::METHODS`]
//! that states what it is (name, role, where it runs, stages): A-FEM in `afem`, EbE-v1 and v2
//! in `ebe`, the CSR methods and the cuSPARSE peers in `csr_methods`, the CPU reference in
//! `host`, Warp's and JAX's routes through their Python script in `python`.
//!
//! Cost model (bytes per element the device keeps, s = size of a real): the mesh (12 + 2s per
//! node... as uploaded: 12 per element, 2s + 4 + s per node); A-FEM's lists 9 x 16 per element
//! (16-byte nodes: next, column, value) plus 4 per node, freed after conversion; CSR 4 (n + 1) + (4 + s) nnz; EbE-v1's element
//! matrices 9 s per element; CG vectors 4 s per unknown. Peak device bytes are measured from the
//! buffers each method allocates, in its own order (`gpu::Memory`).

mod afem;
pub mod benchmark;
pub mod capacitor;
mod claims;
mod csr_methods;
mod ebe;
pub mod export;
pub mod gpu;
mod host;
pub mod kernel;
pub mod method;
pub mod methods;
pub mod product;
mod python;
pub mod registry;
pub mod report;
mod single;
pub mod spec;

pub use benchmark::AcooCapacitor;
