//! A model in and out of files: `harness export --model` writes one as Gmsh, VTK and Matrix
//! Market files ([`export`]); `problem.msh` steps a model on a Gmsh mesh instead of ours
//! ([`import`]).

pub mod export;
pub mod import;
