//! fembench-fem: the finite-element pieces more than one paper needs, with no device code:
//! triangle meshes, refinement and Lagrange nodes ([`trimesh`], [`lagrange`]), cracks opened in them ([`cracks`]), structured
//! hexahedral boxes ([`hexmesh`]) and their eight-node element ([`hex8`]), CSR patterns and element slot maps ([`csr`]), Gmsh import and
//! export ([`gmsh`]), a connectivity view ([`elements`]) that element coloring ([`coloring`]) and
//! METIS partitions and greedy blocks ([`partition`]) work on, Huthwaite's aligned blocks ([`aligned`]), LPT packing of work lists ([`lpt`]), node orderings for locality ([`ordering`]), comparison of
//! a result against its reference ([`verify`]), and writers: Matrix Market ([`mtx`]) and VTK
//! `.vtu` for ParaView ([`vtu`]).

pub mod aligned;
pub mod coloring;
pub mod cracks;
pub mod csr;
pub mod elements;
pub mod gmsh;
pub mod hex8;
pub mod hexmesh;
pub mod lagrange;
pub mod lpt;
pub mod mtx;
pub mod ordering;
pub mod partition;
pub mod trimesh;
pub mod verify;
pub mod vtu;
