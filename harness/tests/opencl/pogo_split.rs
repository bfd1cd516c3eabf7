//! Pogo split across GPUs, on PoCL: the kernels of a part (its sent rows, its interior rows, the
//! packing of what it sends) with the halo handed over by the host, against the one-part step on
//! the host (the weld, and the 3D box with three DOFs a node); and the multi-GPU experiments' quick forms, whose one-GPU rows run here and whose
//! multi-GPU rows are skipped with the reason.

use super::common;
use fembench::device::kernels::Defines;
use fembench::device::{Buffer, Device, DeviceExt, Launch, RealArg};
use fembench::fem::elements::Elements;
use fembench::fem::partition;
use fembench::pogo::kernel::POGO;
use fembench::pogo::kernel::{Pack, PackPlanes, Rotation, SellArrays, Sources, StepBlockFrom, StepSellRows, TraceRow, UnpackPlanes};
use fembench::pogo::model::weld;
use fembench::pogo::multigpu::gpu::start_state;
use fembench::pogo::multigpu::split::Split;
use fembench::pogo::multigpu::split_blocks::{arrange_part, PartBlocks};
use fembench::pogo::prepared::in_run_order;
use fembench::pogo::sell::SlicedEll;
use fembench::pogo::system::System;
use fembench::Precision;

struct OnDevice {
    u: Vec<Buffer>,
    slice_ptr: Buffer,
    col: Buffer,
    kvals: Buffer,
    cp: Buffer,
    src: (Buffer, Buffer, u32),
    rec: (Buffer, Buffer),
    packs: Vec<(Buffer, Buffer)>,
}

fn upload(dev: &dyn Device, split: &Split, p: usize, start: &[f64]) -> OnDevice {
    let part = &split.parts[p];
    let sell = SlicedEll::new(&part.sys, 1);
    let d = sell.dim;
    let local: Vec<f64> = part.node_at.iter().flat_map(|&i| (0..d).map(move |a| start[d * i as usize + a])).collect();
    let sys = &part.sys;
    OnDevice {
        u: vec![
            dev.upload_slice(&local).unwrap(),
            dev.upload_slice(&local).unwrap(),
            dev.upload_slice(&vec![f64::NAN; local.len()]).unwrap(),
        ],
        slice_ptr: dev.upload_slice(&sell.slice_ptr).unwrap(),
        col: dev.upload_slice(&sell.col).unwrap(),
        kvals: dev.upload_slice(&sell.vals).unwrap(),
        cp: dev.upload_slice(&sys.cp).unwrap(),
        src: (
            dev.upload_slice(&sys.src_dof.iter().copied().chain([0]).collect::<Vec<u32>>()).unwrap(),
            dev.upload_slice(&sys.src_coef.iter().copied().chain([0.0]).collect::<Vec<f64>>()).unwrap(),
            sys.src_dof.len() as u32,
        ),
        rec: (dev.upload_slice(&[0u32]).unwrap(), dev.alloc(8).unwrap()),
        packs: part.sends.iter().map(|l| (dev.upload_slice(&l.at).unwrap(), dev.alloc(8 * d * l.at.len()).unwrap())).collect(),
    }
}

/// A model split in two by METIS: its operators, the split and the force's amplitude at each
/// increment.
struct TwoParts {
    sys: System,
    split: Split,
    amp: Vec<f64>,
}

/// The weld at a coarse size split in two (and the model, for the paper's kernel's arrangement).
fn two_parts() -> (TwoParts, fembench::pogo::model::Model) {
    let model = in_run_order(weld(1.2e-3));
    let sys = System::build(&model);
    let flat: Vec<u32> = model.mesh.tris.iter().flatten().copied().collect();
    let elements = Elements { nodes: &flat, per_element: 3, corners: 3, num_nodes: model.nodes() };
    let owner = partition::metis_nodes(elements, 2).unwrap().into_iter().map(|p| p as u32).collect();
    let split = Split::new(&sys, owner, 2, &(0..model.nodes() as u32).collect::<Vec<_>>(), 32);
    let amp = (0..STEPS).map(|k| model.source.signal.at(k as f64 * model.dt)).collect();
    (TwoParts { sys, split, amp }, model)
}

/// The 3D box (three DOFs a node, 3x3 blocks) of 9 nodes a side split in two.
fn two_parts_3d() -> TwoParts {
    let b = fembench::pogo::hexbox::HexBox::new(9);
    let sys = b.system();
    let owner = partition::metis_nodes(b.mesh.elements(), 2).unwrap().into_iter().map(|p| p as u32).collect();
    let split = Split::new(&sys, owner, 2, &(0..b.nodes() as u32).collect::<Vec<_>>(), 32);
    let amp = (0..STEPS).map(|k| b.signal.at(k as f64 * b.dt)).collect();
    TwoParts { sys, split, amp }
}

/// Increments of each PoCL split run.
const STEPS: usize = 30;

/// The CPU's Eq. (4), `steps` increments from `start`: U after them.
fn cpu_run(amp: &[f64], sys: &System, start: &[f64], steps: usize) -> Vec<f64> {
    let mut one = [start.to_vec(), start.to_vec(), vec![0.0; start.len()]];
    for &a in &amp[..steps] {
        let [p, c, n] = &mut one;
        sys.step(p, c, n, a, true);
        one.rotate_left(1);
    }
    one[1].clone()
}

/// Two parts of the weld on one PoCL device, 30 increments from a state non-zero everywhere:
/// each part steps its sent rows and packs them, then its interior rows; the host hands the
/// packed values to the neighbour's halo. U equals the one-part host step's within f64 rounding
/// (the device may fuse multiply-adds), and a run whose hand-over is dropped does not.
#[test]
fn a_split_steps_on_pocl_as_the_one_part_host_step() {
    sell_split_on_pocl(two_parts().0);
}

/// The same on the 3D box: the kernels compiled with three DOFs a node.
#[test]
fn a_split_3d_box_steps_on_pocl_as_the_one_part_host_step() {
    sell_split_on_pocl(two_parts_3d());
}

fn sell_split_on_pocl(two: TwoParts) {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    let dev = dev.as_ref();
    let TwoParts { sys, split, amp } = two;
    let d = sys.dim;
    let start = start_state(sys.dofs());
    let defines = Defines::for_precision(Precision::F64).with("KVAL_IS_DOUBLE", 1).with("COL16", 0).with("DIM", d);
    let module = dev.compile(&POGO, &defines).unwrap();
    let (rows, pack) = (dev.kernel(&module, "pogo_step_sell_rows").unwrap(), dev.kernel(&module, "pogo_pack").unwrap());
    let steps = STEPS;
    let run = |hand_over: bool| -> Vec<f64> {
        let mut parts: Vec<OnDevice> = (0..2).map(|p| upload(dev, &split, p, &start)).collect();
        for k in 0..steps {
            let amp = amp[k];
            for (p, on) in parts.iter().enumerate() {
                let part = &split.parts[p];
                let step = |first: usize, last: usize| {
                    let (prev, curr, next) = (&on.u[k % 3], &on.u[(k + 1) % 3], &on.u[(k + 2) % 3]);
                    let sell = SellArrays { slice_ptr: &on.slice_ptr, col: &on.col, kp: &on.kvals, cp: &on.cp };
                    let sources = Sources {
                        src_dof: &on.src.0,
                        src_coef: &on.src.1,
                        nsrc: on.src.2,
                        amp: RealArg::new(Precision::F64, amp),
                        rec_dof: &on.rec.0,
                        nrec: 0,
                    };
                    let u = Rotation { u_prev: prev, u_curr: curr, u_next: next };
                    let trace = TraceRow { trace: &on.rec.1, row: 0 };
                    let args = StepSellRows { sell, u, first: first as i64, last: last as i64, sources, trace };
                    dev.launch_with(&rows, Launch::cover((last - first).max(1), 64), &args).unwrap();
                };
                step(part.interior, part.owned);
                for (l, (at, out)) in part.sends.iter().zip(&on.packs) {
                    let args = Pack { at, u: &on.u[(k + 2) % 3], out, count: l.at.len() as u32 };
                    dev.launch_with(&pack, Launch::cover(l.at.len(), 64), &args).unwrap();
                }
                step(0, part.interior);
            }
            dev.synchronize().unwrap();
            for q in 0..2 {
                let mut next: Vec<f64> = dev.download_vec(&parts[q].u[(k + 2) % 3], d * split.parts[q].len()).unwrap();
                for r in &split.parts[q].recvs {
                    let from = split.parts[r.peer].sends.iter().position(|l| l.peer == q).unwrap();
                    let got: Vec<f64> = dev.download_vec(&parts[r.peer].packs[from].1, d * r.at.len()).unwrap();
                    for (j, &h) in r.at.iter().enumerate() {
                        let v = if hand_over { got[d * j..d * j + d].to_vec() } else { vec![0.0; d] };
                        next[d * h as usize..d * h as usize + d].copy_from_slice(&v);
                    }
                }
                dev.upload(&mut parts[q].u[(k + 2) % 3], bytemuck::cast_slice(&next)).unwrap();
            }
        }
        let curr: Vec<Vec<f64>> =
            (0..2).map(|q| dev.download_vec(&parts[q].u[(steps + 1) % 3], d * split.parts[q].len()).unwrap()).collect();
        split.gather(&curr.iter().map(Vec::as_slice).collect::<Vec<_>>())
    };
    let one = cpu_run(&amp, &sys, &start, steps);
    let rel = |u: &[f64]| fembench::fem::verify::relative_l2(u, &one);
    let split_run = run(true);
    assert!(rel(&split_run) < 1e-12, "split on PoCL: {}", rel(&split_run));
    assert!(rel(&run(false)) > 1e-6, "a dropped halo must show");
}

/// The paper's kernel on two parts of the weld on one PoCL device, 30 increments from a state
/// non-zero everywhere: each part steps its sent blocks and packs their U off its two planes,
/// then steps its interior blocks; the host hands the packed values to the neighbour, whose
/// unpacking writes them into its halo blocks. U equals the CPU's Eq. (4) within f64 rounding,
/// and a run whose hand-over is dropped does not.
#[test]
fn the_paper_kernel_on_parts_steps_on_pocl_as_the_one_part_host_step() {
    let _turn = common::opencl_turn();
    let Some(dev) = common::opencl_device() else { return };
    let dev = dev.as_ref();
    let (TwoParts { sys, split, amp }, model) = two_parts();
    let flat: Vec<u32> = model.mesh.tris.iter().flatten().copied().collect();
    let elements = Elements { nodes: &flat, per_element: 3, corners: 3, num_nodes: model.nodes() };
    let aligned = fembench::fem::aligned::aligned_nodes(elements, &model.mesh.points, &Default::default()).block;
    let arranged: Vec<PartBlocks> = split.parts.iter().map(|p| arrange_part(p, &aligned, &model.mesh.points).unwrap()).collect();
    let start = start_state(2 * sys.nodes);
    let links = arranged.iter().map(|a| a.data.arr.links).max().unwrap();
    let module = dev.compile(&POGO, &Defines::for_precision(Precision::F64).with("KVAL_IS_DOUBLE", 1).with("PLINKS", links)).unwrap();
    let kernel = |name: &str| dev.kernel(&module, name).unwrap();
    let (step, pack, unpack) = (kernel("pogo_step_block_from"), kernel("pogo_pack_planes"), kernel("pogo_unpack_planes"));
    let steps = STEPS;
    let run = |hand_over: bool| -> Vec<f64> {
        let on: Vec<BlocksOnDevice> = (0..2).map(|p| BlocksOnDevice::upload(dev, &split, &arranged[p], p, &start)).collect();
        for k in 0..steps {
            let amp = RealArg::new(Precision::F64, amp[k]);
            for (p, o) in on.iter().enumerate() {
                let (pb, slots) = (&arranged[p], arranged[p].data.slots as i64);
                let u = Rotation { u_prev: &o.u[k % 3], u_curr: &o.u[(k + 1) % 3], u_next: &o.u[(k + 2) % 3] };
                let sources = Sources { src_dof: &o.src.0, src_coef: &o.src.1, nsrc: o.src.2, amp, rec_dof: &o.rec.0, nrec: 0 };
                let trace = TraceRow { trace: &o.rec.1, row: 0 };
                let blocks = |first: usize, last: usize| {
                    let (table, lptr, kp, cp) = (&o.table, &o.lptr, &o.kvals, &o.cp);
                    let nblocks = pb.data.arr.blocks as u32;
                    let args = StepBlockFrom { table, lptr, kp, cp, u, nblocks, first: first as u32, sources, trace };
                    dev.launch_with(&step, Launch { groups: last - first, group_size: 512 }, &args).unwrap();
                };
                blocks(0, pb.sent);
                let args = PackPlanes { at: &o.sent_at, u: &o.u[(k + 2) % 3], out: &o.sent_out, count: o.sent_count, slots };
                dev.launch_with(&pack, Launch::cover(o.sent_count as usize, 64), &args).unwrap();
                blocks(pb.sent, pb.owned);
            }
            dev.synchronize().unwrap();
            for q in 0..2 {
                let peer = 1 - q;
                let got: Vec<f64> = dev.download_vec(&on[peer].sent_out, 2 * on[peer].sent_count as usize).unwrap();
                let halo = if hand_over { got } else { vec![0.0; 2 * on[q].halo_count as usize] };
                let input = dev.upload_slice(&halo).unwrap();
                let args = UnpackPlanes {
                    at: &on[q].halo_at,
                    input: &input,
                    u: &on[q].u[(k + 2) % 3],
                    count: on[q].halo_count,
                    slots: arranged[q].data.slots as i64,
                };
                dev.launch_with(&unpack, Launch::cover(on[q].halo_count as usize, 64), &args).unwrap();
            }
            dev.synchronize().unwrap();
        }
        let mut out = vec![f64::NAN; 2 * sys.nodes];
        for (p, o) in on.iter().enumerate() {
            let (part, pb) = (&split.parts[p], &arranged[p]);
            let v: Vec<f64> = dev.download_vec(&o.u[(steps + 1) % 3], 2 * pb.data.slots).unwrap();
            for (k, &i) in part.node_at[..part.owned].iter().enumerate() {
                let g = pb.position(k as u32) as usize;
                out[2 * i as usize] = v[g];
                out[2 * i as usize + 1] = v[pb.data.slots + g];
            }
        }
        out
    };
    let one = cpu_run(&amp, &sys, &start, steps);
    let rel = |u: &[f64]| fembench::fem::verify::relative_l2(u, &one);
    let split_run = run(true);
    assert!(rel(&split_run) < 1e-12, "the paper's kernel on parts on PoCL: {}", rel(&split_run));
    assert!(rel(&run(false)) > 1e-6, "a dropped halo must show");
}

/// A part's arrays for the paper's kernel on the device: U on the arrangement's planes, its
/// K', link pointers and table, and the positions its sends pack and its halo unpacks.
struct BlocksOnDevice {
    u: Vec<Buffer>,
    table: Buffer,
    lptr: Buffer,
    kvals: Buffer,
    cp: Buffer,
    src: (Buffer, Buffer, u32),
    rec: (Buffer, Buffer),
    sent_at: Buffer,
    sent_out: Buffer,
    sent_count: u32,
    halo_at: Buffer,
    halo_count: u32,
}

impl BlocksOnDevice {
    fn upload(dev: &dyn Device, split: &Split, pb: &PartBlocks, p: usize, start: &[f64]) -> BlocksOnDevice {
        let part = &split.parts[p];
        let local: Vec<f64> = part.node_at.iter().flat_map(|&i| [start[2 * i as usize], start[2 * i as usize + 1]]).collect();
        let placed = pb.data.from_dofs(&local);
        let d = &pb.data.placed;
        let sent: Vec<u32> = part.sends.iter().flat_map(|l| l.at.iter().map(|&k| pb.position(k))).collect();
        let halo: Vec<u32> = part.recvs.iter().flat_map(|l| l.at.iter().map(|&k| pb.position(k))).collect();
        let up = |v: &[u32]| dev.upload_slice(v).unwrap();
        BlocksOnDevice {
            u: vec![
                dev.upload_slice(&placed).unwrap(),
                dev.upload_slice(&placed).unwrap(),
                dev.upload_slice(&vec![f64::NAN; placed.len()]).unwrap(),
            ],
            table: up(&pb.data.arr.table),
            lptr: dev.upload_slice(&pb.data.lptr).unwrap(),
            kvals: dev.upload_slice(&pb.data.kvals).unwrap(),
            cp: dev.upload_slice(&d.cp).unwrap(),
            src: (
                up(&d.src_dof.iter().copied().chain([0]).collect::<Vec<u32>>()),
                dev.upload_slice(&d.src_coef.iter().copied().chain([0.0]).collect::<Vec<f64>>()).unwrap(),
                d.src_dof.len() as u32,
            ),
            rec: (up(&[0]), dev.alloc(8).unwrap()),
            sent_out: dev.alloc(16 * sent.len()).unwrap(),
            sent_count: sent.len() as u32,
            sent_at: up(&sent),
            halo_count: halo.len() as u32,
            halo_at: up(&halo),
        }
    }
}

/// The multi-GPU experiment's quick form on PoCL: the one-GPU rows of each study and method are
/// verified (f64 sell and the paper's kernel equal to the CPU reference within 1e-12, the
/// arrival run's U and traces within 1e-10), and every case on more GPUs is skipped with the reason (NCCL is CUDA's).
#[test]
fn the_multigpu_study_runs_its_one_gpu_cases_on_pocl() {
    let Some(df) = common::quick_rows_on_opencl("large/pogo-multigpu.yaml", "pogo-multigpu") else { return };
    let strs = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|s| s.unwrap_or("").to_string()).collect::<Vec<_>>();
    let nums = |c: &str| common::column_f64(&df, c);
    let (status, method, study, reason) = (strs("status"), strs("method"), strs("study"), strs("reason"));
    let (gpus, error, trace) = (nums("gpus"), nums("error"), nums("trace_error"));
    let mut ok = 0;
    for i in 0..df.height() {
        if gpus[i] > 1.0 {
            assert_eq!(status[i], "skipped", "{} {} on {}", method[i], study[i], gpus[i]);
            assert!(reason[i].contains("NCCL"), "{}", reason[i]);
            continue;
        }
        assert_eq!(status[i], "ok", "{} {}: {}", method[i], study[i], reason[i]);
        if method[i] == "sell" || method[i] == "pogo-aligned" {
            // The arrival run's 2,000 increments let rounding grow past the checked pass's 20.
            let bound = if study[i] == "arrival" { 1e-10 } else { 1e-12 };
            assert!(error[i] <= bound, "{} {} error {}", method[i], study[i], error[i]);
            if study[i] == "arrival" {
                assert!(trace[i] <= 1e-10, "arrival trace {}", trace[i]);
            }
        }
        ok += 1;
    }
    assert_eq!(ok, 9, "three studies x three methods on one GPU");
}

/// The 3D study's quick form on PoCL (the full problem shrunk to fit this machine's memory
/// check; the quick box of 12 nodes a side runs): the one-GPU rows of the box (sell, sell-kf32) are verified
/// (f64 sell equal to the CPU reference within 1e-12), and every case on more GPUs is skipped
/// with the reason.
#[test]
fn the_3d_study_runs_its_one_gpu_cases_on_pocl() {
    // The full box (190 nodes a side) needs more host memory than a CI machine has, and the
    // file is refused where it does not fit; its quick box is what runs.
    let edits = [("box_nodes: 190", "box_nodes: 40")];
    let Some(df) = common::quick_rows_on_opencl_edited("large/pogo-multigpu-3d.yaml", "pogo-multigpu-3d", &edits) else { return };
    let strs = |c: &str| df.column(c).unwrap().str().unwrap().iter().map(|s| s.unwrap_or("").to_string()).collect::<Vec<_>>();
    let nums = |c: &str| common::column_f64(&df, c);
    let (status, method, reason) = (strs("status"), strs("method"), strs("reason"));
    let (gpus, error, dofs) = (nums("gpus"), nums("error"), nums("dofs"));
    let mut ok = 0;
    for i in 0..df.height() {
        if gpus[i] > 1.0 {
            assert_eq!(status[i], "skipped", "{} on {}", method[i], gpus[i]);
            assert!(reason[i].contains("NCCL"), "{}", reason[i]);
            continue;
        }
        assert_eq!(status[i], "ok", "{}: {}", method[i], reason[i]);
        assert_eq!(dofs[i], 3.0 * 12f64.powi(3));
        if method[i] == "sell" {
            assert!(error[i] <= 1e-12, "3D sell error {}", error[i]);
        }
        ok += 1;
    }
    assert_eq!(ok, 2, "two methods on one GPU");
}
