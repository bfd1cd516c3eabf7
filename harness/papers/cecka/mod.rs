//! Cecka, Lew and Darve 2011, "Assembly of finite element methods on graphics processors":
//! the steady heat problem on Lagrange triangles of order 1..6 and its assembly into CSR.
//!
//! Here: the problem ([`problem`]: the plate mesh, whose triangles, Lagrange nodes and Gmsh
//! import are shared in `fembench_fem`; the system, the element subroutine and the CPU baselines;
//! the prepared and checked references; the export), the host-side plans of the by-NZ methods
//! ([`nz::plans`]: METIS partitions, scatter and reduction arrays packed by LPT), the cases and
//! reports ([`benchmark`]) and Matrix Market export ([`problem::export`]). Kernels: `kernels/cecka.kern`.
//!
//! Each method is a type ([`method`]: a GPU method's `prepare`, and the `Assembly` it returns
//! with `enqueue`, `outputs`, `read` and `cost`), registered with one line in
//! [`registry::METHODS`]: the CPU baselines in [`host`], ElemColor and ElemAtomic in [`elem`],
//! the methods by non-zero in [`nz::methods`], the peers in [`peer`] and [`python`].
//!
//! GPU methods, each with the paper's "dummy" element subroutine as a second variant:
//! - ElemColor (4.1): one thread per element, one launch per color.
//! - GlobalNZ (4.2): METIS element parts, nodes prefetched to shared memory, element data to
//!   global memory, then a reduction kernel over the LPT-packed reduction array.
//! - SharedNZ (4.3): METIS node parts, scatter array into shared memory, element data computed
//!   in place, reduction from shared memory; fails where no partition fits the shared memory.
//! - LocalNZ (4.4): one thread per non-zero, the element subroutine recomputed per contribution.
//! - ElemAtomic (beyond the paper): one thread per element, global atomic adds into CSR slots.
//! - SharedAtomic (beyond the paper): SharedNZ's node parts, shared-memory atomic adds into the
//!   block's own rows through 16-bit slots, each output written once.
//! - CooCusparse (beyond the paper, the peer, CUDA only; no dummy): the COO route of a CuPy or
//!   SciPy user: element triplets, cuSPARSE's sort into CSR order, duplicates summed ([`peer`]).
//! - CupyTocsr, TorchIndexAdd, ScipyTocsr (beyond the paper, external peers): the same
//!   assembly as a CuPy, PyTorch or SciPy user writes it, run by `peers/cecka_assembly.py`
//!   ([`python`]).
//!
//! Cost models (bytes a method must move from or to global memory; `s` = size of a real,
//! indices 4 bytes unless said): every method writes the nnz + n_free outputs once (Elem*
//! methods also zero them first) and reads nodal data (x, y, g: 3s per node fetch). On top:
//! ElemColor/ElemAtomic read the connectivity (en per element) and the CSR slot map (en^2 per
//! element); GlobalNZ reads block node lists and local connectivity, writes and reads back the
//! element data (en(en+1) s per element) and reads its reduction array; SharedNZ reads its
//! scatter and reduction arrays; LocalNZ reads its lists and, per contribution, the element's
//! connectivity and nodal data; SharedAtomic reads node lists, 16-bit local connectivity and
//! slots per element call, and its target list. Flops: 15 + 7 en^2 + 2 en per element
//! subroutine call, plus one add per reduced contribution.
//! Shared memory is not counted: it is the point of the methods that use it.

pub mod benchmark;
pub mod claims;
pub mod cost;
pub mod elem;
pub mod gpu;
pub mod host;
pub mod kernel;
pub mod method;
pub mod nz;
pub mod paper;
pub mod peer;
pub mod plans;
pub mod problem;
pub mod python;
pub mod registry;
pub mod report;
pub mod spec;

pub use benchmark::CeckaAssembly;

pub use kernel::CECKA;
