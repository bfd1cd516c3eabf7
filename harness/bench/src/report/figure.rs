//! Line figures to SVG and PNG with plotters. Text is drawn with the embedded DejaVu Sans, so PNG
//! output needs no system fonts.
//!
//! Every figure is drawn the same way: ticks in SI or powers of ten ([`tick_label`]), the legend in
//! a panel right of the plot (it never covers data), each series told apart by colour and marker
//! (`style`), and point-only series (a paper's values, a reference) as crosses in the colour of
//! the series they belong to.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::style::{draw_marker, looks};
use super::{Figure, ReportError};

static FONT: Once = Once::new();

pub(super) fn register_font() {
    FONT.call_once(|| {
        // Ignored on failure: plotters then reports a font error for the figure, which we pass on.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
    });
}

pub(super) const WIDTH: u32 = 960;
pub(super) const HEIGHT: u32 = 600;
/// Legend font size and the height of one legend line, in pixels.
pub(super) const LEGEND_FONT: u32 = 13;
pub(super) const LEGEND_LINE: i32 = 18;

/// What makes a figure readable, checked before it is drawn: a title and both axis labels, at
/// least one series with a finite point (a positive one on a log axis), every series labelled,
/// and finite axis ranges whose ticks print as short labels.
pub fn readable(fig: &Figure) -> Result<(), String> {
    if fig.title.trim().is_empty() || fig.x_label.trim().is_empty() || fig.y_label.trim().is_empty() {
        return Err("a figure needs a title and both axis labels".into());
    }
    if let Some(s) = fig.series.iter().find(|s| s.label.trim().is_empty()) {
        return Err(format!("a series of {} points has no label: the legend would hide it", s.points.len()));
    }
    let shown = |(x, y): &(f64, f64)| x.is_finite() && y.is_finite() && (!fig.log_x || *x > 0.0) && (!fig.log_y || *y > 0.0);
    if !fig.series.iter().any(|s| s.points.iter().any(shown)) {
        return Err("no series has a point that can be drawn".into());
    }
    for (log, values) in [
        (fig.log_x, fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect::<Vec<_>>()),
        (fig.log_y, fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).collect()),
    ] {
        let r = range(values.into_iter(), log);
        if !(r.0.is_finite() && r.1.is_finite() && r.1 > r.0) {
            return Err(format!("an axis range is not finite: {r:?}"));
        }
        if log {
            let ticks = log_ticks(r);
            if ticks.is_empty() || ticks.iter().map(|&t| tick_label(t)).any(|l| l.is_empty() || l.chars().count() > 8) {
                return Err(format!("a log axis has no short tick labels: {:?}", ticks.iter().map(|&t| tick_label(t)).collect::<Vec<_>>()));
            }
        }
    }
    Ok(())
}

/// Draws `fig` as `<dir>/<name>.svg` and `<dir>/<name>.png`, each whole or not at all.
pub fn draw(fig: &Figure, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let fig = &super::style::merge_identical(fig);
    readable(fig).map_err(|detail| ReportError::Draw { path: dir.join(format!("{}.svg", fig.name)), detail })?;
    register_font();
    let svg = dir.join(format!("{}.svg", fig.name));
    let png = dir.join(format!("{}.png", fig.name));
    let err = |path: &Path| {
        let path = path.to_path_buf();
        move |e: String| ReportError::Draw { path, detail: e }
    };
    let size = canvas(fig);
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        plot(fig, &root).map_err(err(&svg))?;
        root.present().map_err(|e| e.to_string()).map_err(err(&svg))?;
    }
    crate::results::write_file_atomic(&svg, text.as_bytes())?;
    let mut pixels = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, size).into_drawing_area();
        plot(fig, &root).map_err(err(&png))?;
        root.present().map_err(|e| e.to_string()).map_err(err(&png))?;
    }
    crate::results::write_file_atomic(&png, &encode_png(&pixels, size).map_err(err(&png))?)?;
    Ok(vec![svg, png])
}

/// RGB pixels as a PNG file's bytes, at the encoder's best compression (figures are committed:
/// about half the size of plotters' own encoding).
pub(super) fn encode_png(pixels: &[u8], (w, h): (u32, u32)) -> Result<Vec<u8>, String> {
    use image::codecs::png::{CompressionType, FilterType, PngEncoder};
    use image::ImageEncoder as _;
    let mut bytes = Vec::new();
    PngEncoder::new_with_quality(&mut bytes, CompressionType::Best, FilterType::Adaptive)
        .write_image(pixels, w, h, image::ColorType::Rgb8)
        .map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// The legend panel's width: room for the longest label.
fn legend_width(fig: &Figure) -> u32 {
    let chars = fig.series.iter().map(|s| s.label.chars().count()).max().unwrap_or(0) as u32;
    (chars * 7 + 48).clamp(120, 420)
}

/// The whole picture's size: the plot keeps [`WIDTH`] x [`HEIGHT`], the legend panel is added
/// beside it, and a long legend makes the picture taller.
fn canvas(fig: &Figure) -> (u32, u32) {
    let rows = fig.series.len() as u32 + 2;
    (WIDTH + legend_width(fig), HEIGHT.max(rows * LEGEND_LINE as u32 + 60))
}

/// A tick's text: SI prefixes from a thousand up (10k, 2.5M), plain decimals between 0.01 and a
/// thousand, powers of ten below (10⁻⁶, 2×10⁻⁹). Never a float's full expansion.
pub fn tick_label(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    const SI: [(f64, &str); 5] = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    if let Some((scale, prefix)) = SI.iter().find(|(s, _)| a >= s * 0.9995) {
        if a < 1e18 {
            return format!("{}{prefix}", trim(v / scale));
        }
    }
    if a >= 0.00995 {
        return trim(v);
    }
    let exp = a.log10().floor() as i32;
    let mant = v / 10f64.powi(exp);
    let (mant, exp) = if (mant.abs() - 10.0).abs() < 5e-3 { (mant / 10.0, exp + 1) } else { (mant, exp) };
    let power = format!("10{}", superscript(exp));
    if (mant.abs() - 1.0).abs() < 5e-3 {
        if mant < 0.0 {
            format!("-{power}")
        } else {
            power
        }
    } else {
        format!("{}×{power}", trim(mant))
    }
}

/// Up to three significant digits, without trailing zeros.
fn trim(v: f64) -> String {
    let a = v.abs();
    let decimals = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

fn superscript(n: i32) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut s: String = n.unsigned_abs().to_string().chars().map(|c| DIGITS[c as usize - '0' as usize]).collect();
    if n < 0 {
        s.insert(0, '⁻');
    }
    s
}

fn range(values: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let v: Vec<f64> = values.filter(|v| v.is_finite() && (!log || *v > 0.0)).collect();
    if v.is_empty() {
        return (1.0, 10.0);
    }
    let (lo, hi) = v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    if log {
        // At least one whole decade, so that a log axis always has labelled ticks.
        let (lo, hi) = (lo / 1.3, hi * 1.3);
        let short = (10.0 / (hi / lo)).max(1.0).sqrt();
        (lo / short, hi * short)
    } else {
        let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.05).max(1e-12);
        ((lo - pad).min(0.0f64.max(lo - pad)), hi + pad)
    }
}

/// The ticks a log axis gets: every power of ten inside the range, and 2x and 5x as well when the
/// range spans few decades.
fn log_ticks((lo, hi): (f64, f64)) -> Vec<f64> {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let steps: &[f64] = if b - a <= 3 { &[1.0, 2.0, 5.0] } else { &[1.0] };
    let inside = |v: &f64| *v >= lo * 0.999 && *v <= hi * 1.001;
    let mut ticks: Vec<f64> = (a..=b).flat_map(|e| steps.iter().map(move |m| m * 10f64.powi(e))).filter(inside).collect();
    // The data's first and last decades, where no power of ten falls inside the range, get their
    // 2x and 5x ticks: no value is drawn beyond the last labelled tick.
    let (first, last) = (ticks.first().copied().unwrap_or(hi), ticks.last().copied().unwrap_or(lo));
    let partial =
        [2.0, 5.0].iter().flat_map(|m| [m * 10f64.powi(a), m * 10f64.powi(b - 1)]).filter(|v| inside(v) && (*v < first || *v > last));
    ticks.extend(partial.collect::<Vec<_>>());
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    ticks
}

/// A log x axis over a few whole numbers close together (GPU counts: 1, 2, 4) takes its ticks at
/// those numbers, where 1-2-5 ticks would label a 5 that no point has and leave the 4 unlabelled.
fn data_ticks(fig: &Figure) -> Option<Vec<f64>> {
    let mut xs: Vec<f64> = fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).filter(|x| x.is_finite() && *x > 0.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let few = xs.len() >= 2 && xs.len() <= 8 && xs.iter().all(|x| x.fract() == 0.0) && xs[xs.len() - 1] / xs[0] <= 64.0;
    (fig.log_x && few).then_some(xs)
}

/// The points a series is drawn with: all of them up to [`DRAWN_POINTS`]; beyond that, per
/// column of pixels, the first, lowest, highest and last point in x order, so that a long trace
/// keeps its envelope and its file stays small.
fn drawn_points(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let pts: Vec<(f64, f64)> = points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
    if pts.len() <= DRAWN_POINTS {
        return pts;
    }
    let bins = DRAWN_POINTS / 4;
    let per = pts.len().div_ceil(bins);
    let mut out = Vec::with_capacity(DRAWN_POINTS);
    for chunk in pts.chunks(per) {
        let lo = chunk.iter().enumerate().min_by(|a, b| a.1 .1.total_cmp(&b.1 .1)).map(|(i, _)| i).unwrap_or(0);
        let hi = chunk.iter().enumerate().max_by(|a, b| a.1 .1.total_cmp(&b.1 .1)).map(|(i, _)| i).unwrap_or(0);
        let mut keep = vec![0, lo, hi, chunk.len() - 1];
        keep.sort_unstable();
        keep.dedup();
        out.extend(keep.into_iter().map(|i| chunk[i]));
    }
    out
}

/// The most points a series is drawn with before it is thinned to its envelope.
const DRAWN_POINTS: usize = 4000;

/// Whether every finite value is a whole number.
fn all_whole(values: impl Iterator<Item = f64>) -> bool {
    values.filter(|v| v.is_finite()).all(|v| v.fract() == 0.0)
}

/// Series with more points than this are drawn as lines without a dot at every point.
const DOTTED_POINTS: usize = 60;

fn plot<DB: DrawingBackend>(fig: &Figure, root: &DrawingArea<DB, Shift>) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let (w, _) = root.dim_in_pixel();
    let (area, legend) = root.split_horizontally(w - legend_width(fig));
    let area = area.shrink((0, 0), (WIDTH, HEIGHT));
    let xs = range(fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)), fig.log_x);
    let ys = range(fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)), fig.log_y);
    let mut builder = ChartBuilder::on(&area);
    builder.caption(&fig.title, ("sans-serif", 20)).margin(12).x_label_area_size(48).y_label_area_size(80);
    // A tick a hair from zero (a linear range's rounding) reads as 0, not 2.71×10⁻¹⁰.
    let near_zero = |v: f64, (lo, hi): (f64, f64), log: bool| if !log && v.abs() < (hi - lo).abs() * 1e-6 { 0.0 } else { v };
    let fmt_x = |v: &f64| tick_label(near_zero(*v, xs, fig.log_x));
    let fmt_y = |v: &f64| tick_label(near_zero(*v, ys, fig.log_y));
    // plotters types log and linear axes differently, so each combination is its own chart. Log
    // axes take their ticks from `log_ticks`, linear ones from plotters; both print `tick_label`.
    macro_rules! draw_with {
        ($x:expr, $y:expr, $x_labels:expr) => {{
            let mut chart = builder.build_cartesian_2d($x, $y).map_err(|e| e.to_string())?;
            chart
                .configure_mesh()
                .x_labels($x_labels)
                .x_desc(fig.x_label.as_str())
                .y_desc(fig.y_label.as_str())
                .x_label_formatter(&fmt_x)
                .y_label_formatter(&fmt_y)
                .label_style(("sans-serif", 14))
                .bold_line_style(RGBColor(200, 200, 200))
                .light_line_style(RGBColor(240, 240, 240))
                .draw()
                .map_err(|e| e.to_string())?;
            for (s, look) in fig.series.iter().zip(looks(fig)) {
                let pts = drawn_points(&s.points);
                let dotted = s.reference || pts.len() <= DOTTED_POINTS;
                if !s.reference {
                    let style = look.colour.stroke_width(if dotted { 2 } else { 1 });
                    if look.dashed {
                        chart.draw_series(DashedLineSeries::new(pts.clone(), 7, 4, style)).map_err(|e| e.to_string())?;
                    } else {
                        chart.draw_series(LineSeries::new(pts.clone(), style)).map_err(|e| e.to_string())?;
                    }
                }
                if dotted {
                    for p in &pts {
                        draw_marker(root, chart.backend_coord(p), &look)?;
                    }
                }
            }
        }};
    }
    let whole_x = all_whole(fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    let (lx, ly) = (data_ticks(fig).unwrap_or_else(|| log_ticks(xs)), log_ticks(ys));
    // A linear axis takes plotters' own round ticks; where every x is a whole number (orders,
    // degrees), as many labels as whole numbers in the range, so that the ticks fall on them.
    let x_labels = if whole_x && !fig.log_x { ((xs.1 - xs.0).floor() as usize + 1).clamp(2, 12) } else { 10 };
    match (fig.log_x, fig.log_y) {
        (true, true) => draw_with!((xs.0..xs.1).log_scale().with_key_points(lx), (ys.0..ys.1).log_scale().with_key_points(ly), x_labels),
        (true, false) => draw_with!((xs.0..xs.1).log_scale().with_key_points(lx), ys.0..ys.1, x_labels),
        (false, true) => draw_with!(xs.0..xs.1, (ys.0..ys.1).log_scale().with_key_points(ly), x_labels),
        (false, false) => draw_with!(xs.0..xs.1, ys.0..ys.1, x_labels),
    }
    draw_legend(fig, &legend)
}

/// The legend, in its own panel: a line with a dot for a measured series, a cross for a point-only
/// one (a paper's values carry "paper" in their label).
fn draw_legend<DB: DrawingBackend>(fig: &Figure, panel: &DrawingArea<DB, Shift>) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let font = ("sans-serif", LEGEND_FONT).into_font();
    let top = 48;
    for (i, (s, look)) in fig.series.iter().zip(looks(fig)).enumerate() {
        let y = top + i as i32 * LEGEND_LINE;
        let line = vec![(6, y), (30, y)];
        let style = look.colour.stroke_width(2);
        match (s.reference, look.dashed) {
            (true, _) => {}
            (false, true) => panel.draw(&plotters::element::DashedPathElement::new(line, 5, 3, style)).map_err(|e| e.to_string())?,
            (false, false) => panel.draw(&PathElement::new(line, style)).map_err(|e| e.to_string())?,
        }
        draw_marker(panel, (18, y), &look)?;
        panel.draw(&Text::new(s.label.clone(), (38, y - 7), font.clone())).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A partition of a triangle mesh as a PNG picture (Huthwaite 2014, Fig. 7): each triangle with
/// its first node's block colour, inside `window` ([x0, x1, y0, y1], metres, drawn in mm on
/// labelled axes), the edges between nodes of different blocks drawn thin and dark, so that the
/// blocks' shapes show, and the outline of the regions (`region`: one id per triangle, a
/// material) and of the mesh drawn thick.
pub fn draw_partition(
    path: &Path,
    title: &str,
    (points, tris): (&[[f64; 2]], &[[u32; 3]]),
    block: &[u32],
    region: &[u8],
    window: [f64; 4],
) -> Result<PathBuf, ReportError> {
    register_font();
    let [x0, x1, y0, y1] = window.map(|v| v * 1e3);
    let width = 960u32;
    let height = ((860.0 * (y1 - y0) / (x1 - x0)).round() as u32).clamp(200, 1800) + 100;
    let err = |e: String| ReportError::Draw { path: path.to_path_buf(), detail: e };
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("x (mm)")
        .y_desc("y (mm)")
        .x_label_formatter(&|v| tick_label(*v))
        .y_label_formatter(&|v| tick_label(*v))
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(|e| err(e.to_string()))?;
    let mm = |v: u32| (points[v as usize][0] * 1e3, points[v as usize][1] * 1e3);
    let inside = |(x, y): (f64, f64)| x >= x0 && x <= x1 && y >= y0 && y <= y1;
    let colour = |b: u32| {
        // Neighbouring blocks have neighbouring ids: spread them over the palette.
        // Opaque: few distinct colours keep the PNG small.
        Palette99::pick((b as usize).wrapping_mul(37) % 99).filled()
    };
    let shown = |t: &&[u32; 3]| t.iter().any(|&v| inside(mm(v)));
    let polygons = tris.iter().filter(shown).map(|t| Polygon::new(t.map(mm).to_vec(), colour(block[t[0] as usize])));
    chart.draw_series(polygons).map_err(|e| err(e.to_string()))?;
    let edges = |t: &[u32; 3]| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])];
    let cut = tris.iter().filter(shown).flat_map(edges).filter(|&(a, b)| block[a as usize] != block[b as usize]);
    chart.draw_series(cut.map(|(a, b)| PathElement::new(vec![mm(a), mm(b)], BLACK))).map_err(|e| err(e.to_string()))?;
    let outline = outline_edges(tris, region).into_iter().filter(|&(a, b)| inside(mm(a)) || inside(mm(b)));
    chart.draw_series(outline.map(|(a, b)| PathElement::new(vec![mm(a), mm(b)], BLACK.stroke_width(3)))).map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))?;
    Ok(path.to_path_buf())
}

/// The edges of a triangle mesh that lie on its boundary (in one triangle) or between two
/// regions (in two triangles of different `region`).
fn outline_edges(tris: &[[u32; 3]], region: &[u8]) -> Vec<(u32, u32)> {
    let mut seen: std::collections::HashMap<(u32, u32), (u8, bool)> = std::collections::HashMap::new();
    for (t, &r) in tris.iter().zip(region) {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            let key = (a.min(b), a.max(b));
            seen.entry(key).and_modify(|e| e.1 = e.0 == r).or_insert((r, false));
        }
    }
    seen.into_iter().filter(|(_, (_, same))| !same).map(|(k, _)| k).collect()
}

#[cfg(test)]
mod tests {
    use super::super::Series;
    use super::*;

    #[test]
    fn ticks_read_as_si_or_powers_of_ten() {
        let cases = [
            (0.0, "0"),
            (1.0, "1"),
            (2.5, "2.5"),
            (100.0, "100"),
            (10000.0, "10k"),
            (25000.0, "25k"),
            (1e6, "1M"),
            (4.7e6, "4.7M"),
            (1e9, "1G"),
            (0.05, "0.05"),
            (1e-3, "10⁻³"),
            (2e-9, "2×10⁻⁹"),
            (9.999999999e-10, "10⁻⁹"),
            (-1e-14, "-10⁻¹⁴"),
        ];
        for (v, want) in cases {
            assert_eq!(tick_label(v), want, "{v}");
        }
        assert_eq!(tick_label(f64::NAN), "");
    }

    fn figure(series: Vec<Series>) -> Figure {
        Figure { name: "f".into(), title: "t".into(), x_label: "x".into(), y_label: "y".into(), log_x: false, log_y: true, series }
    }

    #[test]
    fn unreadable_figures_are_refused() {
        let s = |label: &str, points: Vec<(f64, f64)>| Series { label: label.into(), points, reference: false };
        assert!(readable(&figure(vec![s("a", vec![(1.0, 2.0), (2.0, 30.0)])])).is_ok());
        assert!(readable(&figure(vec![])).is_err(), "no series");
        assert!(readable(&figure(vec![s("a", vec![(1.0, f64::NAN)])])).is_err(), "no finite point");
        assert!(readable(&figure(vec![s("a", vec![(1.0, -1.0)])])).is_err(), "nothing positive on a log axis");
        assert!(readable(&figure(vec![s("", vec![(1.0, 1.0)])])).is_err(), "an unlabelled series");
        let mut f = figure(vec![s("a", vec![(1.0, 1.0)])]);
        f.y_label = String::new();
        assert!(readable(&f).is_err(), "an unlabelled axis");
    }

    #[test]
    fn long_series_keep_their_envelope() {
        let pts: Vec<(f64, f64)> =
            (0..100_000).map(|i| (i as f64, (i as f64 * 0.01).sin() * if i == 54_321 { 5.0 } else { 1.0 })).collect();
        let drawn = drawn_points(&pts);
        assert!(drawn.len() <= DRAWN_POINTS, "{}", drawn.len());
        assert!(drawn.windows(2).all(|w| w[0].0 <= w[1].0), "in x order");
        let max = |v: &[(f64, f64)]| v.iter().map(|p| p.1).fold(f64::MIN, f64::max);
        assert_eq!(max(&drawn), max(&pts), "the peak is kept");
        assert_eq!(drawn.first(), pts.first());
        assert_eq!(drawn.last(), pts.last());
        assert_eq!(drawn_points(&pts[..10]).len(), 10);
    }

    #[test]
    fn the_outline_is_the_boundary_and_the_region_interface() {
        // A unit square of two triangles (diagonal 0-2), each its own region: the four sides and
        // the diagonal; one region: the four sides only.
        let tris = [[0, 1, 2], [0, 2, 3]];
        let mut two = outline_edges(&tris, &[0, 1]);
        two.sort();
        assert_eq!(two, [(0, 1), (0, 2), (0, 3), (1, 2), (2, 3)]);
        assert_eq!(outline_edges(&tris, &[4, 4]).len(), 4);
    }

    #[test]
    fn a_log_axis_spans_a_decade_and_gets_ticks() {
        let r = range([3.0, 4.0].into_iter(), true);
        assert!(r.1 / r.0 >= 9.99, "{r:?}");
        assert!(!log_ticks(r).is_empty());
        let wide = log_ticks((1e-3, 1e6));
        assert_eq!(wide.len(), 10, "{wide:?}");
        // Cecka's f64 orders: 0.12 to 5200 ns, the lowest value under the first power of ten.
        assert_eq!(log_ticks((0.115, 5200.0)), [0.2, 0.5, 1.0, 10.0, 100.0, 1000.0, 2000.0, 5000.0]);
    }

    #[test]
    fn a_log_axis_over_a_few_gpu_counts_is_ticked_at_them() {
        let s = |points: Vec<(f64, f64)>| Series { label: "a".into(), points, reference: false };
        let mut f = figure(vec![s(vec![(1.0, 9.0), (2.0, 5.0), (4.0, 3.0)]), s(vec![(4.0, 2.0), (2.0, 4.0)])]);
        assert_eq!(data_ticks(&f), None, "a linear axis keeps plotters' ticks");
        f.log_x = true;
        assert_eq!(data_ticks(&f), Some(vec![1.0, 2.0, 4.0]));
        // Sizes over decades, or fractions, keep the 1-2-5 ticks.
        f.series = vec![s(vec![(288.0, 1.0), (4.7e6, 2.0)])];
        assert_eq!(data_ticks(&f), None);
        f.series = vec![s(vec![(0.5, 1.0), (1.0, 2.0)])];
        assert_eq!(data_ticks(&f), None);
    }
}
