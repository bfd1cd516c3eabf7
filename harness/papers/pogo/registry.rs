//! Pogo's stepping methods: their one registration list, [`METHODS`]. Each line states what a
//! method is ([`About`]: its name, role, where it runs, its blocker, its K' storage, whether it
//! makes a full-length run and whether the multi-GPU study splits it) beside its type (see
//! [`super::method`]). A new method is one type, its kernel and one line here.

use super::benchmark::HostStep;
use super::method::{About, PogoMethod, Registered};
use super::python::PythonStep;
use super::spec::{Blocker, Method};
use super::stepper::DeviceStep;
use crate::methods::{Role, Runs};

/// Every stepping method, in the order tables list them.
pub const METHODS: &[&dyn PogoMethod] = &[
    // Ours, beyond the paper: one thread per node on a sliced ELL of K' in 2x2 node blocks (four
    // vectors, as Pogo stores K'), nodes in reverse Cuthill-McKee order, no shared-memory blocks
    // (the GPU's L2 holds U); then the same with K' stored in f32 and U, C' and the sums in f64.
    &Registered(About::new(&["sell"], Role::Beyond, Runs::Gpu).full_run().splits(), DeviceStep),
    &Registered(About::new(&["sell-kf32"], Role::Beyond, Runs::Gpu).kf32().full_run().splits(), DeviceStep),
    // The paper's kernel (section 2.3) on the aligned blocker's partition arranged as section
    // 3.2 does: blocks of 32 x 16 threads, U_curr of the block and of 20 linked loads in shared
    // memory, 12 links a node through 16-bit link pointers, K' in four vectors; on the greedy
    // blocker's partition; and on the aligned one with sell-kf32's storage.
    &Registered(About::new(&["pogo-aligned"], Role::Paper, Runs::Gpu).on(Blocker::Aligned).full_run().splits(), DeviceStep),
    &Registered(About::new(&["pogo-greedy"], Role::Paper, Runs::Gpu).on(Blocker::Greedy), DeviceStep),
    &Registered(About::new(&["pogo-aligned-kf32"], Role::Paper, Runs::Gpu).on(Blocker::Aligned).kf32().splits(), DeviceStep),
    // What most users would write (CUDA only): cuSPARSE's CSR SpMV U_next = K' U_curr, then
    // U_next += C' U_prev (CuPy's `K @ u + c * u_prev`); and the vendor's strongest format for
    // this matrix, cuSPARSE's sliced-ELL SpMV (slices of 32 rows, `CUSPARSE_SPMV_SELL_ALG1`),
    // then the same update kernel (in the case's precision throughout).
    &Registered(About::new(&["csr-cusparse"], Role::Peer, Runs::Cuda), DeviceStep),
    &Registered(About::new(&["sell-cusparse"], Role::Peer, Runs::Cuda), DeviceStep),
    // The step as a user of a GPU library writes it (peers/pogo_step.py): NVIDIA Warp's BSR SpMV
    // of 2 x 2 blocks and an update kernel, one CUDA graph a step; JAX's BCSR SpMV in a jitted
    // fori_loop; and the same on the libraries' CPU devices (how CI runs them).
    &PythonStep(About::new(&["warp-bsr"], Role::Peer, Runs::Cuda).library().bsr()),
    &PythonStep(About::new(&["jax-bcsr"], Role::Peer, Runs::Cuda).library()),
    &PythonStep(About::new(&["warp-cpu"], Role::Peer, Runs::Host).library().bsr()),
    &PythonStep(About::new(&["jax-cpu"], Role::Peer, Runs::Host).library()),
    // Eq. (4) on the host in f64, CSR, one thread (the paper's Abaqus role, as a time per step);
    // the same on every rayon thread.
    &HostStep { about: About::new(&["cpu-serial"], Role::Baseline, Runs::Host), parallel: false },
    &HostStep { about: About::new(&["cpu-parallel"], Role::Baseline, Runs::Host), parallel: true },
];

crate::method_registry!(Method in METHODS: dyn PogoMethod);

impl Method {
    pub const SELL: Method = Method("sell");
    pub const SELL_KF32: Method = Method("sell-kf32");
    pub const POGO_ALIGNED: Method = Method("pogo-aligned");
    pub const POGO_GREEDY: Method = Method("pogo-greedy");
    pub const POGO_ALIGNED_KF32: Method = Method("pogo-aligned-kf32");
    pub const CSR_CUSPARSE: Method = Method("csr-cusparse");
    pub const SELL_CUSPARSE: Method = Method("sell-cusparse");
    pub const CPU_SERIAL: Method = Method("cpu-serial");
    pub const CPU_PARALLEL: Method = Method("cpu-parallel");
    /// The vendor-library steps, the peers of ours.
    pub const PEERS: [Method; 2] = [Method::SELL_CUSPARSE, Method::CSR_CUSPARSE];

    fn about(self) -> &'static About {
        self.entry().about()
    }
    /// The blocker whose memory arrangement the method runs on (the paper's kernel only).
    pub fn blocker(self) -> Option<Blocker> {
        self.about().blocker
    }
    /// K' stored in f32 under f64 U and sums (the method runs in f64 only).
    pub fn kf32(self) -> bool {
        self.about().kf32
    }
    /// The methods that make a full-length run (ours and the paper's kernel on aligned blocks).
    pub fn full_runs(self) -> bool {
        self.about().full_run
    }
    /// The methods the multi-GPU study splits across GPUs: ours, and the paper's kernel on the
    /// aligned blocks of each part.
    pub fn splits(self) -> bool {
        self.about().splits
    }
    pub fn on_cpu(self) -> bool {
        self.about().runs == Runs::Host
    }
    pub fn runs_on(self, backend: crate::Backend) -> bool {
        self.about().runs.on(backend)
    }
    /// A vendor-library step.
    pub fn vendor(self) -> bool {
        self.about().role == Role::Peer && !self.about().library
    }
    /// A FEM or array library's route (Warp, JAX), run by its Python script.
    pub fn library(self) -> bool {
        self.about().library
    }
    /// K' stored as a BSR matrix of node blocks (Warp's).
    pub fn bsr(self) -> bool {
        self.about().bsr
    }
    /// Our GPU steps (beyond the paper) and the paper's kernel: what a library step is set against.
    pub fn ours() -> Vec<Method> {
        Method::all().into_iter().filter(|m| matches!(m.about().role, Role::Beyond | Role::Paper)).collect()
    }
    /// The library routes on a GPU, the peers of the steps' headline table.
    pub fn libraries() -> Vec<Method> {
        Method::all().into_iter().filter(|m| m.library() && !m.on_cpu()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Backend;

    #[test]
    fn the_registry_states_what_each_method_was_before_it_was_a_type() {
        let all = Method::all();
        let names: Vec<&str> = all.iter().map(|m| m.as_str()).collect();
        assert_eq!(
            names,
            [
                "sell",
                "sell-kf32",
                "pogo-aligned",
                "pogo-greedy",
                "pogo-aligned-kf32",
                "csr-cusparse",
                "sell-cusparse",
                "warp-bsr",
                "jax-bcsr",
                "warp-cpu",
                "jax-cpu",
                "cpu-serial",
                "cpu-parallel"
            ]
        );
        let with = |f: fn(Method) -> bool| all.iter().copied().filter(|&m| f(m)).collect::<Vec<_>>();
        assert_eq!(with(Method::kf32), [Method::SELL_KF32, Method::POGO_ALIGNED_KF32]);
        assert_eq!(with(Method::full_runs), [Method::SELL, Method::SELL_KF32, Method::POGO_ALIGNED]);
        assert_eq!(with(Method::splits), [Method::SELL, Method::SELL_KF32, Method::POGO_ALIGNED, Method::POGO_ALIGNED_KF32]);
        assert_eq!(with(Method::vendor), [Method::CSR_CUSPARSE, Method::SELL_CUSPARSE]);
        let named = |v: &[&str]| v.iter().map(|n| Method::named(n).unwrap()).collect::<Vec<_>>();
        assert_eq!(with(Method::on_cpu), named(&["warp-cpu", "jax-cpu", "cpu-serial", "cpu-parallel"]));
        assert_eq!(with(Method::library), named(&["warp-bsr", "jax-bcsr", "warp-cpu", "jax-cpu"]));
        assert_eq!(with(Method::bsr), named(&["warp-bsr", "warp-cpu"]));
        assert_eq!(Method::libraries(), named(&["warp-bsr", "jax-bcsr"]));
        assert!(
            Method::PEERS.iter().all(|m| Method::named(m.as_str()) == Some(*m)) && Method::POGO_GREEDY.entry().about().role == Role::Paper
        );
        assert_eq!(all.iter().map(|m| m.blocker()).filter(Option::is_some).count(), 3);
        assert_eq!(Method::POGO_GREEDY.blocker(), Some(Blocker::Greedy));
        assert!(Method::SELL.runs_on(Backend::OpenCl) && !Method::SELL_CUSPARSE.runs_on(Backend::OpenCl));
        assert!(Method::CPU_SERIAL.runs_on(Backend::Cpu) && !Method::SELL.runs_on(Backend::Cpu));
    }
}
