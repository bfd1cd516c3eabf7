//! Cecka, Lew and Darve 2011, "Assembly of finite element methods on graphics processors":
//! the steady heat problem on Lagrange triangles of order 1..6 and its assembly into CSR.
//!
//! Here: the mesh and order-k numbering ([`mesh`], [`lagrange`]), the system, the element
//! subroutine and the CPU baselines ([`system`]). GPU methods so far: ElemColor (4.1: one launch
//! per color) and ElemAtomic (one thread per element, atomic adds into precomputed CSR slots),
//! each with its "dummy" element kernel; GlobalNZ, SharedNZ and LocalNZ are not written yet.
//!
//! Cost model (bytes each method must move; `s` = size of a real): connectivity en*ne*4, CSR slot
//! map en^2*ne*4, coordinates 2*N*s, dof map N*4, prescribed values N*s, and the outputs zeroed
//! then written once: 2*(nnz + n_free)*s. Flops per element: 15 for the geometry, 7 per (i, j)
//! pair (three-term combination and the Dirichlet fold), 2 per row of F^e.

pub mod benchmark;
pub mod lagrange;
pub mod mesh;
pub mod nz_plans;
pub mod system;

pub use benchmark::CeckaAssembly;
