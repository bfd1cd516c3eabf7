//! Line figures to SVG and PNG with plotters. Text is drawn with the embedded DejaVu Sans, so PNG
//! output needs no system fonts.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Figure, ReportError};

static FONT: Once = Once::new();

fn register_font() {
    FONT.call_once(|| {
        // Ignored on failure: plotters then reports a font error for the figure, which we pass on.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    });
}

const WIDTH: u32 = 960;
const HEIGHT: u32 = 600;

/// Draws `fig` as `<dir>/<name>.svg` and `<dir>/<name>.png`.
pub fn draw(fig: &Figure, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    register_font();
    let svg = dir.join(format!("{}.svg", fig.name));
    let png = dir.join(format!("{}.png", fig.name));
    let err = |path: &Path| {
        let path = path.to_path_buf();
        move |e: String| ReportError::Draw { path, detail: e }
    };
    {
        let root = SVGBackend::new(&svg, (WIDTH, HEIGHT)).into_drawing_area();
        plot(fig, &root).map_err(err(&svg))?;
        root.present().map_err(|e| e.to_string()).map_err(err(&svg))?;
    }
    {
        let root = BitMapBackend::new(&png, (WIDTH, HEIGHT)).into_drawing_area();
        plot(fig, &root).map_err(err(&png))?;
        root.present().map_err(|e| e.to_string()).map_err(err(&png))?;
    }
    Ok(vec![svg, png])
}

fn range(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let v: Vec<f64> = values.filter(|v| v.is_finite() && (!log || *v > 0.0)).collect();
    if v.is_empty() {
        return (1.0, 10.0);
    }
    let (lo, hi) = v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    if log {
        (lo / 1.5, hi * 1.5)
    } else {
        let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.05).max(1e-12);
        ((lo - pad).min(0.0f64.max(lo - pad)), hi + pad)
    }
}

/// The corner of the plot area with the fewest data points, so the legend hides as little as
/// possible.
fn legend_corner(fig: &Figure, xs: (f64, f64), ys: (f64, f64)) -> SeriesLabelPosition {
    let norm = |v: f64, (lo, hi): (f64, f64), log: bool| {
        if log {
            (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
        } else {
            (v - lo) / (hi - lo)
        }
    };
    let pts: Vec<(f64, f64)> =
        fig.series.iter().flat_map(|s| s.points.iter()).map(|&(x, y)| (norm(x, xs, fig.log_x), norm(y, ys, fig.log_y))).collect();
    let corners = [
        (SeriesLabelPosition::UpperRight, 0.55, 1.0, 0.6, 1.0),
        (SeriesLabelPosition::LowerRight, 0.55, 1.0, 0.0, 0.4),
        (SeriesLabelPosition::UpperLeft, 0.0, 0.45, 0.6, 1.0),
        (SeriesLabelPosition::LowerLeft, 0.0, 0.45, 0.0, 0.4),
    ];
    corners
        .into_iter()
        .min_by_key(|&(_, x0, x1, y0, y1)| pts.iter().filter(|&&(x, y)| x >= x0 && x <= x1 && y >= y0 && y <= y1).count())
        .map(|c| c.0)
        .unwrap_or(SeriesLabelPosition::UpperRight)
}

fn plot<DB: DrawingBackend>(fig: &Figure, root: &DrawingArea<DB, Shift>) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let xs = range(fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)), fig.log_x);
    let ys = range(fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)), fig.log_y);
    let mut builder = ChartBuilder::on(root);
    builder.caption(&fig.title, ("sans-serif", 22)).margin(12).x_label_area_size(48).y_label_area_size(72);
    // plotters types log and linear axes differently, so each combination is its own chart.
    macro_rules! draw_with {
        ($x:expr, $y:expr) => {{
            let mut chart = builder.build_cartesian_2d($x, $y).map_err(|e| e.to_string())?;
            chart
                .configure_mesh()
                .x_desc(fig.x_label.as_str())
                .y_desc(fig.y_label.as_str())
                .label_style(("sans-serif", 14))
                .draw()
                .map_err(|e| e.to_string())?;
            for (i, s) in fig.series.iter().enumerate() {
                let color = Palette99::pick(i).to_rgba();
                let pts: Vec<(f64, f64)> = s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
                if s.reference {
                    chart
                        .draw_series(pts.iter().map(|&p| Cross::new(p, 6, color.stroke_width(2))))
                        .map_err(|e| e.to_string())?
                        .label(s.label.as_str())
                        .legend(move |(x, y)| Cross::new((x + 10, y), 5, color.stroke_width(2)));
                } else {
                    chart
                        .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                        .map_err(|e| e.to_string())?
                        .label(s.label.as_str())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
                    chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(|e| e.to_string())?;
                }
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 13))
                .position(legend_corner(fig, xs, ys))
                .draw()
                .map_err(|e| e.to_string())?;
        }};
    }
    match (fig.log_x, fig.log_y) {
        (true, true) => draw_with!((xs.0..xs.1).log_scale(), (ys.0..ys.1).log_scale()),
        (true, false) => draw_with!((xs.0..xs.1).log_scale(), ys.0..ys.1),
        (false, true) => draw_with!(xs.0..xs.1, (ys.0..ys.1).log_scale()),
        (false, false) => draw_with!(xs.0..xs.1, ys.0..ys.1),
    }
    Ok(())
}

/// A partition of a triangle mesh as a PNG picture (Huthwaite 2014, Fig. 7): each triangle with
/// its first node's block colour, inside `window` ([x0, x1, y0, y1], the mesh's units), and the
/// edges between nodes of different blocks drawn dark, so that the blocks' shapes show.
pub fn draw_partition(
    path: &Path,
    title: &str,
    points: &[[f64; 2]],
    tris: &[[u32; 3]],
    block: &[u32],
    window: [f64; 4],
) -> Result<PathBuf, ReportError> {
    register_font();
    let [x0, x1, y0, y1] = window;
    let width = 1200u32;
    let height = ((width as f64 * (y1 - y0) / (x1 - x0)).round() as u32).clamp(200, 2400) + 40;
    let err = |e: String| ReportError::Draw { path: path.to_path_buf(), detail: e };
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let root = root.titled(title, ("sans-serif", 18)).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root).build_cartesian_2d(x0..x1, y0..y1).map_err(|e| err(e.to_string()))?;
    let inside = |p: [f64; 2]| p[0] >= x0 && p[0] <= x1 && p[1] >= y0 && p[1] <= y1;
    let colour = |b: u32| {
        // Neighbouring blocks have neighbouring ids: spread them over the palette.
        let c = Palette99::pick((b as usize).wrapping_mul(37) % 99).mix(0.9);
        c.filled()
    };
    let shown = |t: &[u32; 3]| t.iter().any(|&v| inside(points[v as usize]));
    chart
        .draw_series(
            tris.iter()
                .filter(|t| shown(t))
                .map(|t| Polygon::new(t.map(|v| (points[v as usize][0], points[v as usize][1])).to_vec(), colour(block[t[0] as usize]))),
        )
        .map_err(|e| err(e.to_string()))?;
    let cut = tris
        .iter()
        .filter(|t| shown(t))
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .filter(|&(a, b)| block[a as usize] != block[b as usize]);
    chart
        .draw_series(cut.map(|(a, b)| {
            let (p, q) = (points[a as usize], points[b as usize]);
            PathElement::new(vec![(p[0], p[1]), (q[0], q[1])], BLACK.mix(0.6))
        }))
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(path.to_path_buf())
}

/// Grouped bars as PNG: one group per label along x, one bar per series in each group.
pub fn draw_bars(b: &super::Bars, path: &Path) -> Result<(), ReportError> {
    register_font();
    let err = |e: String| ReportError::Draw { path: path.to_path_buf(), detail: e };
    let n = b.groups.len().max(1);
    let width = (WIDTH as usize).max(90 * n) as u32;
    let root = BitMapBackend::new(path, (width, HEIGHT + 160)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let top = b.series.iter().flat_map(|s| s.1.iter()).copied().filter(|v| v.is_finite()).fold(0.0f64, f64::max).max(1.0) * 1.15;
    let mut chart = ChartBuilder::on(&root)
        .caption(&b.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(200)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..n as f64, 0.0..top)
        .map_err(|e| err(e.to_string()))?;
    let groups = b.groups.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| groups.get(x.floor() as usize).filter(|_| x.fract() > 0.4 && x.fract() < 0.6).cloned().unwrap_or_default())
        .x_label_style(("sans-serif", 12).into_font().transform(FontTransform::Rotate90))
        .y_desc(b.y_label.as_str())
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let k = b.series.len().max(1) as f64;
    for (si, (label, values)) in b.series.iter().enumerate() {
        let color = Palette99::pick(si).to_rgba();
        let bars = values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(g, &v)| {
            let x0 = g as f64 + 0.1 + 0.8 * si as f64 / k;
            Rectangle::new([(x0, 0.0), (x0 + 0.8 / k, v)], color.filled())
        });
        chart
            .draw_series(bars)
            .map_err(|e| err(e.to_string()))?
            .label(label.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(())
}
