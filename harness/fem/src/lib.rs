//! fembench-fem: the finite-element pieces more than one paper needs, with no device code:
//! triangle meshes, refinement and Lagrange nodes ([`trimesh`], [`lagrange`]), Gmsh import and
//! export ([`gmsh`]), element coloring ([`coloring`]), METIS partitions ([`partition`]), LPT
//! packing of work lists ([`lpt`]), comparison of an assembled system against a reference
//! ([`verify`]) and Matrix Market output ([`mtx`]).

pub mod gmsh;
pub mod lagrange;
pub mod trimesh;
