//! Tables 2 and 4 of the paper beside ours, at the largest size of each model on each GPU: the
//! blockers' and pre-processing times and the stepping with the aligned and greedy blocks
//! (Table 2), and the bandwidth of the paper's kernel on aligned blocks by Appendix A's count
//! (Table 4), labelled as the paper's.

use super::Rows;
use crate::pogo::paper;
use crate::pogo::spec::Method;
use crate::report::{fmt_num, ReportCtx, Table};

pub(crate) fn beside_ours(id: &str, r: &Rows, ctx: &ReportCtx) -> Table {
    let mut rows = Vec::new();
    for (device, backend, model, dofs) in r.largest_on_gpus() {
        let (device, backend) = (&device, &backend);
        for (blocker, method) in [("aligned", Method::POGO_ALIGNED.as_str()), ("greedy", Method::POGO_GREEDY.as_str())] {
            let paper2 = paper::TABLE2.iter().find(|t| t.0 == model && t.1 == blocker);
            for precision in ["f64", "f32"] {
                let Some(i) = r.id.find([device, backend, precision, method, &model], dofs) else { continue };
                let paper4 = paper::TABLE4.iter().find(|t| t.0 == model && t.1 == precision).filter(|_| blocker == "aligned");
                let blocks = r.n("arranged_blocks", i);
                let paper_gbs = r.n("paper_bytes", i) / r.id.time[i] / 1e9;
                let copy = ctx.copy_gbs(device, backend, precision);
                let block_s = r.n(&format!("{blocker}_s"), i);
                let pre = r.n("order_s", i) + r.n("operators_s", i) + r.n("arrange_s", i);
                let stepping = r.n("increments", i) * r.id.time[i];
                rows.push(vec![
                    format!("{device} {backend}"),
                    model.clone(),
                    format!("{:.3}", dofs / 1e6),
                    blocker.into(),
                    precision.into(),
                    fmt_num(block_s),
                    paper2.map_or("-".into(), |p| fmt_num(p.2)),
                    fmt_num(pre),
                    paper2.map_or("-".into(), |p| fmt_num(p.3)),
                    fmt_num(stepping),
                    paper::model(&model).map_or("-".into(), |p| {
                        let s = if blocker == "aligned" { p.step_aligned_s } else { p.step_greedy_s };
                        fmt_num(if precision == "f64" { s.0 } else { s.1 })
                    }),
                    fmt_num(block_s + pre + stepping),
                    paper2.filter(|_| precision == "f64").map_or("-".into(), |p| fmt_num(p.4)),
                    fmt_num(blocks),
                    paper4.map_or("-".into(), |p| fmt_num(p.2)),
                    fmt_num(r.n("paper_bytes", i) / blocks),
                    paper4.map_or("-".into(), |p| fmt_num(p.3)),
                    fmt_num(paper_gbs),
                    copy.map_or("-".into(), |c| format!("{:.0}%", 100.0 * paper_gbs / c)),
                    fmt_num(r.gbs[i]),
                    copy.map_or("-".into(), |c| format!("{:.0}%", 100.0 * r.gbs[i] / c)),
                    paper4.map_or("-".into(), |p| format!("{} ({:.0}% of 192.4)", fmt_num(p.4), 100.0 * p.4 / 192.4)),
                ]);
            }
        }
    }
    Table {
        name: format!("{id}-tables-2-4"),
        title: "Tables 2 and 4: the paper's blocker, pre-processing, stepping and bandwidth beside ours (largest size)".into(),
        header: [
            "device",
            "model",
            "DOFs (M)",
            "blocker",
            "precision",
            "block (s)",
            "paper block (s)",
            "pre-processing (s)",
            "paper pre-processing (s)",
            "stepping (s)",
            "paper stepping (s)",
            "total (s)",
            "paper total, f64 (s)",
            "blocks (arranged)",
            "paper blocks",
            "bytes a block, paper's count",
            "paper bytes a block",
            "GB/s, paper's count",
            "of copy",
            "GB/s, own bytes",
            "of copy",
            "paper GB/s (of its GTX580)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        notes: vec![
            "Ours: block, one host thread; pre-processing, the node order, Eq. (4)'s operators and section 3.2's arrangement for the paper's kernel (all the host's threads; the mesh is not counted, as the paper's Abaqus mesh is not); stepping, the model's increments times the measured step. The paper's: Table 2 (GTX580, its own meshes) and Table 4 (its aligned blocks). The paper's count (Appendix A) counts loads the L2 serves, so it can exceed the copy bandwidth: it is shown to compare with Table 4, never as our speed; own bytes are the compulsory traffic.".into(),
        ],
    }
}
