//! Grouped bars (the hardware comparison's shares) as PNG: one group per case along x, one bar
//! per device, the legend in a panel of its own, the width bounded.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::FontTransform;

use super::figure::{encode_png, register_font, tick_label, HEIGHT, LEGEND_FONT, LEGEND_LINE, WIDTH};
use super::style::colour;
use super::ReportError;

/// Grouped bars as PNG: one group per label along x, one bar per series in each group.
pub fn draw_bars(b: &super::Bars, path: &Path) -> Result<(), ReportError> {
    register_font();
    let err = |e: String| ReportError::Draw { path: path.to_path_buf(), detail: e };
    let (groups, common) = group_names(&b.groups);
    let legend_width = bars_legend_width(b, common.as_deref());
    let (size, label_chars) = bars_canvas(b, &groups, legend_width);
    let mut pixels = vec![0u8; size.0 as usize * size.1 as usize * 3];
    let root = BitMapBackend::with_buffer(&mut pixels, size).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let (plot_area, legend) = root.split_horizontally(size.0 - legend_width);
    let n = b.groups.len().max(1);
    let top = b.series.iter().flat_map(|s| s.1.iter()).copied().filter(|v| v.is_finite()).fold(0.0f64, f64::max).max(1.0) * 1.15;
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(&b.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(label_chars as u32 * 7 + 16)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..n as f64, 0.0..top)
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc(b.y_label.as_str())
        .y_label_formatter(&|v| tick_label(*v))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    // Each group's name under its bars, turned upright, drawn on the whole picture (plotters'
    // own labels sit at key points, not at the groups' centres); a name too long for the room
    // keeps its start and ends in an ellipsis.
    let font = ("sans-serif", 12).into_font().transform(FontTransform::Rotate90);
    for (g, label) in groups.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(g as f64 + 0.5, 0.0));
        let text = if label.chars().count() > label_chars {
            label.chars().take(label_chars - 1).collect::<String>() + "…"
        } else {
            label.clone()
        };
        root.draw(&Text::new(text, (x - 6, y + 8), font.clone())).map_err(|e| err(e.to_string()))?;
    }
    let k = b.series.len().max(1) as f64;
    for (si, (_, values)) in b.series.iter().enumerate() {
        let color = colour(si);
        let bars = values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(g, &v)| {
            let x0 = g as f64 + 0.1 + 0.8 * si as f64 / k;
            Rectangle::new([(x0, 0.0), (x0 + 0.8 / k, v)], color.filled())
        });
        chart.draw_series(bars).map_err(|e| err(e.to_string()))?;
    }
    // The legend in its own panel right of the plot, where it covers no bar, under what every
    // group's name shares (left out of the names).
    let font = ("sans-serif", LEGEND_FONT).into_font();
    if let Some(common) = common {
        legend.draw(&Text::new(format!("every group: {common}"), (6, 20), font.clone())).map_err(|e| err(e.to_string()))?;
    }
    for (si, (label, _)) in b.series.iter().enumerate() {
        let y = 48 + si as i32 * LEGEND_LINE;
        legend.draw(&Rectangle::new([(6, y - 5), (20, y + 5)], colour(si).filled())).map_err(|e| err(e.to_string()))?;
        legend.draw(&Text::new(label.clone(), (28, y - 7), font.clone())).map_err(|e| err(e.to_string()))?;
    }
    root.present().map_err(|e| err(e.to_string()))?;
    drop((chart, plot_area, legend, root));
    crate::results::write_file_atomic(path, &encode_png(&pixels, size).map_err(err)?)?;
    Ok(())
}

/// The widest a bar figure gets: past it, groups get narrower (down to [`MIN_GROUP_PX`]).
const MAX_BARS_WIDTH: u32 = 2400;
const MIN_GROUP_PX: u32 = 14;

/// The groups' names without the parts every one of them shares (`nx=200` in every Sanfui case),
/// and those parts, where there are some and more than one group.
fn group_names(groups: &[String]) -> (Vec<String>, Option<String>) {
    let parts = |g: &str| g.split([',', ' ']).filter(|p| !p.is_empty()).map(str::to_string).collect::<Vec<String>>();
    let first = groups.first().map(|g| parts(g)).unwrap_or_default();
    let shared: Vec<String> = first.into_iter().filter(|p| groups.len() > 1 && groups.iter().all(|g| parts(g).contains(p))).collect();
    if shared.is_empty() {
        return (groups.to_vec(), None);
    }
    let short = groups.iter().map(|g| parts(g).into_iter().filter(|p| !shared.contains(p)).collect::<Vec<_>>().join(" ")).collect();
    (short, Some(shared.join(" ")))
}

/// The bar figure's legend panel: room for its longest series name.
fn bars_legend_width(b: &super::Bars, common: Option<&str>) -> u32 {
    let common = common.map_or(0, |c| c.chars().count() + 13);
    let chars = b.series.iter().map(|s| s.0.chars().count()).chain([common]).max().unwrap_or(0) as u32;
    (chars * 7 + 40).clamp(120, 420)
}

/// The bar figure's size, and how many characters of a group's name its label area holds: each
/// group 90 px wide where the width allows, narrower past [`MAX_BARS_WIDTH`]; the label area as
/// tall as the longest name needs, up to 360 px.
fn bars_canvas(b: &super::Bars, groups: &[String], legend_width: u32) -> ((u32, u32), usize) {
    let n = groups.len().max(1) as u32;
    let group = (MAX_BARS_WIDTH / n).clamp(MIN_GROUP_PX, 90);
    let plot = (group * n + 100).max(WIDTH);
    let longest = groups.iter().map(|g| g.chars().count()).max().unwrap_or(0).clamp(8, 48);
    let height = HEIGHT + longest as u32 * 7 + 16;
    let rows = b.series.len() as u32 + 2;
    ((plot + legend_width, height.max(rows * LEGEND_LINE as u32 + 60)), longest)
}
