//! Huthwaite 2014 (Pogo): explicit time-domain elastodynamics on 3-node triangles, plane
//! strain, two degrees of freedom per node, stepped by Eq. (4), U_next = F' + C' U_prev +
//! K' U_curr, with lumped mass and mass-proportional damping.
//!
//! Here: the models and the CFL limit ([`model`]; the gear, with its cracks, in [`gear`]), Eq. (4)'s operators, the sliced ELL, the
//! host step and the element-by-element oracle ([`system`]), one model made ready for every
//! method ([`prepared`]), the device methods ([`gpu`]: ours and the cuSPARSE step), the cases
//! ([`benchmark`]), the paper's published numbers and Table A.5 ([`paper`]) and the reports
//! ([`report`]). Kernels: `kernels/pogo.kern`.
//!
//! `harness export --model` writes a model as Gmsh, VTK and Matrix Market files ([`export`]).
//!
//! Not built yet (issue 11): the paper's block memory arrangement (section 3.2) and its
//! shared-memory kernel.

pub mod benchmark;
pub mod export;
pub mod gear;
pub mod gpu;
pub mod model;
pub mod paper;
pub mod prepared;
pub mod report;
pub mod spec;
pub mod system;
#[cfg(test)]
mod tests;
pub mod traces;

pub use benchmark::PogoStepping;
