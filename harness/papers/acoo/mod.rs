//! a-COO (FEM on GPUs without coloring): the parallel-plate capacitor of the paper, assembled
//! into linked lists with atomics and no coloring (A-FEM), converted to CSR and solved by
//! conjugate gradients, against the element-by-element methods EbE-v1 and EbE-v2.
//!
//! Here so far: the model problem, its meshes and the f64 CPU reference ([`capacitor`]).

pub mod capacitor;
