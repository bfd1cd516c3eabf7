//! Huthwaite 2014 (Pogo): explicit time-domain elastodynamics on 3-node triangles, plane
//! strain, two degrees of freedom per node, stepped by Eq. (4), U_next = F' + C' U_prev +
//! K' U_curr, with lumped mass and mass-proportional damping.
//!
//! Here: the models and the CFL limit ([`model`]; the gear, with its cracks, in [`gear`]), Eq. (4)'s
//! operators, the host step and the element-by-element oracle ([`system`]), the sliced ELL
//! ([`sell`]),
//! section 3.2's memory arrangement ([`arrange`]) and the paper's kernel's data with its step
//! on the host ([`blocked`]), one model made ready for every method ([`prepared`]), the device
//! methods ([`gpu`]: ours, the paper's kernel and the cuSPARSE step), the cases ([`benchmark`]),
//! the library peers, Warp's and JAX's steps through their Python script ([`python`]),
//! the paper's published numbers and Table A.5 ([`paper`]) and the reports ([`report`]: its
//! tables, claims and traces). Across GPUs, in [`multigpu`]: the split, the paper's kernel on a part and the study,
//! with a 3D hexahedral box beyond the paper ([`hexbox`]). Kernels: `kernels/pogo.kern`.
//!
//! Each stepping method is a type ([`method`]), registered with one line in
//! [`registry::METHODS`] that states what it is (name, role, where it runs, blocker, K' storage,
//! full-length run, split across GPUs): the device steps in [`stepper`], the CPU steps in
//! [`benchmark`].
//!
//! `harness export --model` writes a model as Gmsh, VTK and Matrix Market files, and
//! `problem.msh` steps a model on a Gmsh mesh instead of ours ([`io`]).

pub mod arrange;
pub mod benchmark;
pub mod blocked;
pub mod gear;
pub mod gpu;
pub mod hexbox;
pub mod io;
pub mod kernel;
pub mod method;
pub mod model;
pub mod multigpu;
pub mod paper;
pub mod prepared;
pub mod python;
pub mod registry;
pub mod report;
pub mod sell;
pub mod spec;
pub mod stepper;
pub mod system;
#[cfg(test)]
mod tests;

pub use benchmark::PogoStepping;
pub use io::{export, import};
pub use multigpu::PogoScaling;
