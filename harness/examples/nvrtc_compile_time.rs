//! How long NVRTC takes to compile each Cecka kernel at each element order (compile time is part
//! of every case's cost): `cargo run --release --example nvrtc_compile_time`.
use fembench::cecka::CECKA;
use fembench::device::cuda;
use fembench::kernels::Defines;
use fembench::Precision;

fn main() {
    for order in [1usize, 3, 4, 5, 6] {
        let en = (order + 1) * (order + 2) / 2;
        let t = std::time::Instant::now();
        let defines = Defines::for_precision(Precision::F32)
            .with("EN", en)
            .with("ATOMIC", 1)
            .with("NK_MAX", 512)
            .with("STRIDE", 16)
            .with("NB_MAX", 512)
            .with("TK_MAX", 512);
        match cuda::compile_ptx(&CECKA, &defines, "compute_90") {
            Ok(ptx) => println!("order {order} (EN {en}): {:?}, {} KiB of PTX", t.elapsed(), ptx.len() / 1024),
            Err(e) => println!("order {order}: {e}"),
        }
    }
}
