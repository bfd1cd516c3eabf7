//! The rows of the multi-GPU study: one per case, verified against the CPU f64 reference, and
//! (P > 1) failed where it differs from the one-GPU run of the same model.

use super::gpu::SplitRun;
use super::ready::{part_blocks, Ready};
use super::spec::{Point, Study};
use super::split::Split;
use super::split_blocks::PartBlocks;
use crate::benchmark::Measured;
use crate::pogo::benchmark::{long_run_tolerance, tolerance};
use crate::Precision;

/// The largest relative difference allowed between a P-GPU run and the one-GPU run. The parts
/// sum each row's links in the one-GPU order with the same kernel, so they agree to the bit; a
/// bound at f64 rounding still fails a lost or stale halo (which differs by the field's size).
pub const ONE_GPU_TOLERANCE: f64 = 1e-12;

/// Bytes and flops one increment moves and executes on the busiest GPU: the per-GPU figures
/// that the physics check holds to one device's copy bandwidth and peak. The sliced ELL: its
/// owned rows without padding, U_curr of its nodes and halo, U_prev, C' and U_next. The paper's
/// kernel (`blocks`): as on one GPU ([`crate::pogo::benchmark::step_bytes`]), each used link's K' block,
/// the link pointers and the table of the launched blocks, the linked loads (the halo's U among
/// them) and the owned nodes' four vectors.
fn busiest_part(split: &Split, blocks: Option<&[PartBlocks]>, kf32: bool, s: usize, col16: bool) -> (f64, f64) {
    let kv = if kf32 { 4.0 } else { s as f64 };
    let cb = if col16 { 2.0 } else { 4.0 };
    let sf = s as f64;
    // Dofs per node, and entries of K' per node link (a block).
    let d = split.dim() as f64;
    let block = d * d;
    let bytes = |r: usize| {
        let p = &split.parts[r];
        let owned = p.owned as f64;
        match blocks.map(|b| &b[r]) {
            Some(pb) => {
                let (d, launched) = (&pb.data, pb.owned as f64 / pb.data.arr.blocks.max(1) as f64);
                // The linked loads, and each launched block's 20 table entries of 4 bytes.
                let linked = d.arr.loaded_slots() as f64 * 2.0 * sf + pb.owned as f64 * 20.0 * 4.0;
                4.0 * kv * d.used_links as f64 + 2.0 * d.pointer_reads as f64 * launched + 4.0 * 2.0 * owned * sf + linked
            }
            None => (block * kv + cb) * p.sys.pattern.nnz() as f64 / block + d * sf * (4.0 * owned + (p.len() - p.owned) as f64),
        }
    };
    let flops = |r: usize| 2.0 * split.parts[r].sys.pattern.nnz() as f64 + 2.0 * d * split.parts[r].owned as f64;
    (0..split.parts.len()).fold((0.0f64, 0.0f64), |(b, f), r| (b.max(bytes(r)), f.max(flops(r))))
}

pub fn row(r: &Ready, split: &Split, point: &Point, precision: Precision, run: SplitRun) -> Measured {
    let s = precision.bytes();
    let f32_rounding = precision == Precision::F32 || point.method.kf32();
    let tol = match point.study {
        Study::Arrival => long_run_tolerance(f32_rounding, r.sys.row_bound, run.checked_steps),
        _ => tolerance(f32_rounding, r.sys.row_bound, run.checked_steps),
    };
    let metric = if point.study == Study::Arrival { "arrival" } else { "increment" };
    let arranged = r.arranged_for(point.method, split.parts.len());
    let blocks = part_blocks(&arranged).ok().flatten();
    let (bytes, flops) = busiest_part(split, blocks, point.method.kf32(), s, run.col16);
    let out = if run.vs_one_gpu > ONE_GPU_TOLERANCE {
        Measured::failed(
            metric,
            format!(
                "the {}-GPU run differs from the one-GPU run by {:.3e} of its largest value (> {ONE_GPU_TOLERANCE:.0e})",
                point.gpus, run.vs_one_gpu
            ),
        )
    } else {
        Measured::verified(metric, run.per_increment, run.error, tol)
    };
    let halo = split.halo_nodes() as f64;
    let m = &r.model;
    let extras = [
        ("nodes", m.nodes() as f64),
        ("dofs", m.dofs() as f64),
        ("dofs_per_gpu", m.dofs() as f64 / point.gpus as f64),
        ("element_size", m.element_size()),
        ("dt", m.dt()),
        ("increments", m.increments() as f64),
        ("halo_nodes", halo),
        ("halo_bytes", split.dim() as f64 * halo * s as f64),
        ("imbalance", split.imbalance()),
        ("interior_share", split.parts.iter().map(|p| p.interior as f64 / p.owned.max(1) as f64).fold(1.0, f64::min)),
        ("exchange_s", run.exchange_s),
        ("compute_s", run.compute_s),
        ("host_s", run.host_s),
        ("vs_one_gpu", run.vs_one_gpu),
        ("trace_error", run.trace_error),
        ("cpu_reference_s", run.cpu_reference_s),
        ("build_s", r.build_s),
        ("check_steps", run.checked_steps as f64),
        ("timed_steps", run.timed_steps as f64),
        ("col16", run.col16 as u8 as f64),
        ("nccl_version", run.nccl_version.map_or(f64::NAN, f64::from)),
        ("row_bound", r.sys.row_bound),
    ];
    let out = out.bytes(bytes).flops(flops).memory(run.device_bytes);
    extras.iter().fold(out, |m, &(k, v)| m.extra(k, v))
}
