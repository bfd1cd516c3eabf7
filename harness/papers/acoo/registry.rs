//! a-COO's methods: their one registration list, [`METHODS`]. Each line states what a method
//! is ([`About`]: its name, role, where it runs, its stages) beside its type (see
//! [`super::method`]). A new method is one type, its kernels and one line here.

use super::afem::AFem;
use super::csr_methods::{Csr, Solver};
use super::ebe::Ebe;
use super::host::HostMethod;
use super::method::{About, AcooMethod, Registered};
use super::python::PythonCg;
use super::spec::Method;
use crate::methods::{Role, Runs};

/// Every method of the a-COO experiments, in the order tables list them.
pub const METHODS: &[&dyn AcooMethod] = &[
    &Registered(
        About::new(&["a-fem"], Role::Paper, Runs::Gpu, &["elements", "bc", "consolidate", "convert", "solve"]).paper_bytes(192.0),
        AFem,
    ),
    &Registered(About::new(&["ebe-v1"], Role::Paper, Runs::Gpu, &["elements", "bc", "solve"]).paper_bytes(151.0), Ebe { recompute: false }),
    &Registered(About::new(&["ebe-v2"], Role::Paper, Runs::Gpu, &["bc", "solve"]).paper_bytes(79.0), Ebe { recompute: true }),
    &Registered(About::new(&["csr-atomic"], Role::Beyond, Runs::Gpu, CSR_STAGES), Csr { colored: false, solver: Solver::Ours }),
    &Registered(About::new(&["csr-color"], Role::Beyond, Runs::Gpu, CSR_STAGES), Csr { colored: true, solver: Solver::Ours }),
    // Its CG reads the scalars back every iteration: the solve is an open region.
    &Registered(
        About::new(&["cusparse-cg"], Role::Peer, Runs::Cuda, CSR_STAGES).open("solve"),
        Csr { colored: false, solver: Solver::VendorHost },
    ),
    &Registered(
        About::new(&["cusparse-cg-device"], Role::Peer, Runs::Cuda, CSR_STAGES),
        Csr { colored: false, solver: Solver::VendorDevice },
    ),
    &Registered(
        About::new(&["cusparse-cg-graph"], Role::Peer, Runs::Cuda, CSR_STAGES),
        Csr { colored: false, solver: Solver::VendorGraph },
    ),
    // The capacitor as a user of a GPU library assembles and solves it (peers/acoo_cg.py): NVIDIA
    // Warp's element kernel and warp.optim.linear.cg (device-side convergence); JAX's jitted element stage
    // and jax.scipy.sparse.linalg.cg inside jit; the same on the libraries' CPU devices (CI).
    &PythonCg(About::new(&["warp-cg"], Role::Peer, Runs::Cuda, CSR_STAGES).library()),
    &PythonCg(About::new(&["jax-cg"], Role::Peer, Runs::Cuda, CSR_STAGES).library()),
    &PythonCg(About::new(&["warp-cpu"], Role::Peer, Runs::Host, CSR_STAGES).library()),
    &PythonCg(About::new(&["jax-cpu"], Role::Peer, Runs::Host, CSR_STAGES).library()),
    &HostMethod { about: About::new(&["cpu-serial"], Role::Baseline, Runs::Host, CSR_STAGES), parallel: false },
    &HostMethod { about: About::new(&["cpu-parallel"], Role::Baseline, Runs::Host, CSR_STAGES), parallel: true },
];

/// The stages of the methods that assemble into CSR, then solve.
const CSR_STAGES: &[&str] = &["elements", "solve"];

crate::method_registry!(Method in METHODS: dyn AcooMethod);

impl Method {
    pub const A_FEM: Method = Method("a-fem");
    pub const EBE_V1: Method = Method("ebe-v1");
    pub const EBE_V2: Method = Method("ebe-v2");
    pub const CSR_ATOMIC: Method = Method("csr-atomic");
    pub const CSR_COLOR: Method = Method("csr-color");
    pub const CPU_SERIAL: Method = Method("cpu-serial");
    /// The peers, strongest first: what a user of the vendor libraries runs.
    pub const PEERS: [Method; 3] = [Method("cusparse-cg-graph"), Method("cusparse-cg-device"), Method("cusparse-cg")];

    /// The methods of `role`, in the registry's order.
    pub fn of_role(role: Role) -> Vec<Method> {
        METHODS.iter().filter(|m| m.about().role == role).map(|m| Method(m.names()[0])).collect()
    }
    pub fn on_cpu(self) -> bool {
        self.entry().about().runs == Runs::Host
    }
    pub fn runs_on(self, backend: crate::Backend) -> bool {
        self.entry().about().runs.on(backend)
    }
    /// The library routes on a GPU (Warp, JAX), beside the vendor peers in the headline table.
    pub fn libraries() -> Vec<Method> {
        Method::all().into_iter().filter(|m| m.entry().about().library && !m.on_cpu()).collect()
    }
    pub fn paper_bytes_per_element(self) -> Option<f64> {
        self.entry().about().paper_bytes_per_element
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_constant_is_registered_and_every_name_is_registered_once() {
        let all = Method::all();
        let names: std::collections::BTreeSet<&str> = all.iter().map(|m| m.as_str()).collect();
        assert_eq!(names.len(), all.len(), "a name registered twice");
        for m in [Method::A_FEM, Method::EBE_V1, Method::EBE_V2, Method::CSR_ATOMIC, Method::CSR_COLOR, Method::CPU_SERIAL]
            .iter()
            .chain(&Method::PEERS)
        {
            assert_eq!(Method::named(m.as_str()), Some(*m), "{m:?}");
        }
        assert!(Method::PEERS.iter().all(|m| m.entry().about().role == Role::Peer && m.entry().about().runs == Runs::Cuda));
        assert_eq!(Method::of_role(Role::Paper), [Method::A_FEM, Method::EBE_V1, Method::EBE_V2]);
    }
}
