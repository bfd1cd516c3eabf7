//! Prints the plan the host computes for every variant and degree on an H100/H200-like device
//! (48 KiB shared memory per group, 1024 threads, 132 multiprocessors): the rows of Tables 3/4
//! before any GPU is touched. `cargo run --example banas_plans`.

use fembench::banas::plan::{Plan, Tuning, Variant};
use fembench::banas::prism::{quadrature, shape_functions};
use fembench::device::DeviceInfo;
use fembench::Precision;

fn main() -> Result<(), String> {
    let dev =
        DeviceInfo { max_work_group: 1024, local_mem_bytes: 48 << 10, memory_bytes: 140 << 30, compute_units: 132, ..Default::default() };
    let tuning = Tuning { output_bytes: 256 << 20, ..Default::default() };
    for precision in [Precision::F32, Precision::F64] {
        for v in Variant::ALL {
            for p in 1..=7 {
                let plan = Plan::new(v, shape_functions(p), quadrature(p)?.len(), precision, &dev, &tuning)?;
                println!(
                    "{precision} {:9} p={p} group {:3} ({}x{} threads, {}x{} blocks) parts {:3} blocks/thread {:2} shared {:5} B elements {}",
                    v.as_str(),
                    plan.group_size,
                    plan.ty,
                    plan.tx,
                    plan.rb,
                    plan.cb,
                    plan.parts,
                    plan.blocks_per_thread,
                    plan.shared_bytes,
                    plan.elements
                );
            }
        }
    }
    Ok(())
}
