//! Small charts drawn on the server as inline SVG: stacked bars and lines over categories (days).
//! No script and no external asset, so they print, screenshot and pass the page's CSP as they are.

use std::fmt::Write;

/// Colours of successive series (readable on white, distinct for the colour-blind in pairs).
pub const PALETTE: &[&str] = &["#2f6fed", "#12805c", "#c01048", "#b54708", "#6941c6", "#0e9384", "#667085", "#dd2590"];

/// One series of a chart: a value per category, `None` where there is none (a day without tasks
/// has no latency: a line leaves a gap there rather than dropping to zero).
pub struct Series {
    pub name: String,
    pub color: String,
    pub values: Vec<Option<f64>>,
}

impl Series {
    fn value(&self, i: usize) -> Option<f64> {
        self.values.get(i).copied().flatten()
    }
}

const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 220.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 10.0;
const BOTTOM: f64 = 28.0;

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The top of the axis: four round steps (1, 2, 2.5 or 5 times a power of ten) that reach `max`;
/// steps of at least 1 for counts, whose grid values must be whole.
fn nice_max(max: f64, whole: bool) -> f64 {
    if max <= 0.0 {
        return if whole { 4.0 } else { 1.0 };
    }
    let raw = max / 4.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * magnitude).find(|v| *v >= raw).unwrap_or(raw);
    let step = if whole { step.max(1.0).ceil() } else { step };
    step * 4.0
}

/// The frame: grid lines with their values, and the category labels (every n-th when crowded).
fn frame(svg: &mut String, categories: &[String], top_value: f64, format: fn(f64) -> String) {
    let plot_height = HEIGHT - TOP - BOTTOM;
    for step in 0..=4 {
        let value = top_value * step as f64 / 4.0;
        let y = TOP + plot_height - plot_height * step as f64 / 4.0;
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e7ec"/><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end" fill="#667085">{}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 3.0,
            escape(&format(value))
        );
    }
    let slot = (WIDTH - LEFT - RIGHT) / categories.len().max(1) as f64;
    let every = (categories.len() as f64 / 10.0).ceil().max(1.0) as usize;
    for (i, category) in categories.iter().enumerate().filter(|(i, _)| i % every == 0) {
        let x = LEFT + slot * (i as f64 + 0.5);
        let _ = write!(svg, r##"<text x="{x:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="#667085">{}</text>"##, HEIGHT - 10.0, escape(category));
    }
}

fn open(label: &str) -> String {
    format!(r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}">"#, escape(label))
}

fn empty(label: &str) -> String {
    let mut svg = open(label);
    let _ = write!(svg, r##"<text x="{}" y="{}" font-size="12" text-anchor="middle" fill="#667085">no data in this window</text></svg>"##, WIDTH / 2.0, HEIGHT / 2.0);
    svg
}

/// A chart begun: its frame drawn for values up to `top_value`, and the geometry of its plot.
struct Plot {
    svg: String,
    top_value: f64,
    plot_height: f64,
    /// The width given to each category.
    slot: f64,
}

/// Begins a chart of `categories` whose largest value is `max`; `None` when there is nothing to plot.
fn plot(label: &str, categories: &[String], max: f64, format: fn(f64) -> String, whole: bool) -> Option<Plot> {
    if categories.is_empty() || max <= 0.0 {
        return None;
    }
    let top_value = nice_max(max, whole);
    let mut svg = open(label);
    frame(&mut svg, categories, top_value, format);
    Some(Plot { svg, top_value, plot_height: HEIGHT - TOP - BOTTOM, slot: (WIDTH - LEFT - RIGHT) / categories.len() as f64 })
}

/// Bars per category, the series stacked; each bar segment has a title (shown on hover).
pub fn stacked_bars(label: &str, categories: &[String], series: &[Series], format: fn(f64) -> String, whole: bool) -> String {
    let totals: Vec<f64> = (0..categories.len()).map(|i| series.iter().map(|s| s.value(i).unwrap_or(0.0)).sum()).collect();
    let max = totals.iter().copied().fold(0.0, f64::max);
    let Some(Plot { mut svg, top_value, plot_height, slot }) = plot(label, categories, max, format, whole) else { return empty(label) };
    let bar = (slot * 0.7).min(48.0);
    for (i, category) in categories.iter().enumerate() {
        let x = LEFT + slot * i as f64 + (slot - bar) / 2.0;
        let mut base = TOP + plot_height;
        for s in series {
            let value = s.value(i).unwrap_or(0.0);
            if value <= 0.0 {
                continue;
            }
            let h = plot_height * value / top_value;
            base -= h;
            let _ = write!(
                svg,
                r#"<rect x="{x:.1}" y="{base:.1}" width="{bar:.1}" height="{h:.1}" fill="{}"><title>{} · {}: {}</title></rect>"#,
                s.color,
                escape(category),
                escape(&s.name),
                escape(&format(value))
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

/// One line per series over the categories, with a dot per value; a category without a value
/// breaks the line (a gap, not a zero).
pub fn lines(label: &str, categories: &[String], series: &[Series], format: fn(f64) -> String, whole: bool) -> String {
    let max = series.iter().flat_map(|s| s.values.iter().copied().flatten()).fold(0.0, f64::max);
    let Some(Plot { mut svg, top_value, plot_height, slot }) = plot(label, categories, max, format, whole) else { return empty(label) };
    for s in series {
        let point = |i: usize, v: f64| (LEFT + slot * (i as f64 + 0.5), TOP + plot_height - plot_height * v / top_value);
        // Runs of consecutive values, each drawn as its own line.
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for (i, value) in s.values.iter().enumerate() {
            match value {
                Some(v) => runs.last_mut().expect("there is always a run").push(point(i, *v)),
                None if runs.last().is_some_and(|run| !run.is_empty()) => runs.push(Vec::new()),
                None => {}
            }
        }
        for run in runs.iter().filter(|run| run.len() > 1) {
            let path: Vec<String> = run.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            let _ = write!(svg, r#"<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>"#, s.color, path.join(" "));
        }
        for (i, (value, category)) in s.values.iter().zip(categories).enumerate() {
            let Some(value) = value else { continue };
            let (x, y) = point(i, *value);
            let _ = write!(
                svg,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{}"><title>{} · {}: {}</title></circle>"#,
                s.color,
                escape(category),
                escape(&s.name),
                escape(&format(*value))
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(svg: &str, needle: &str) -> usize {
        svg.matches(needle).count()
    }

    #[test]
    fn stacked_bars_draw_one_segment_per_nonzero_value_and_escape_names() {
        let categories = vec!["11-22".to_owned(), "11-23".to_owned()];
        let series = vec![
            Series { name: "ok".into(), color: "#000".into(), values: vec![Some(3.0), Some(0.0)] },
            Series { name: "<script>".into(), color: "#111".into(), values: vec![Some(1.0), Some(2.0)] },
        ];
        let svg = stacked_bars("tasks", &categories, &series, |v| format!("{v:.0}"), true);
        assert_eq!(count(&svg, "<rect"), 3);
        assert!(svg.contains("&lt;script&gt;") && !svg.contains("<script>"), "{svg}");
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    }

    #[test]
    fn a_line_leaves_a_gap_where_a_day_has_no_value() {
        let categories: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        let series = vec![Series { name: "p50".into(), color: "#000".into(), values: vec![Some(10.0), Some(20.0), None, Some(30.0), None] }];
        let svg = lines("latency", &categories, &series, |v| format!("{v:.0}"), false);
        assert_eq!(count(&svg, "<circle"), 3, "a dot per value, none for the empty days: {svg}");
        assert_eq!(count(&svg, "<polyline"), 1, "a line through a and b only; d stands alone: {svg}");
        let bottom = format!(r#"cy="{:.1}""#, HEIGHT - BOTTOM);
        assert!(!svg.contains(&bottom), "nothing drawn at zero: {svg}");
    }

    #[test]
    fn a_chart_without_data_says_so_and_the_axis_top_is_round() {
        assert!(lines("x", &[], &[], |v| v.to_string(), false).contains("no data"));
        assert_eq!(nice_max(3.0, true), 4.0, "counts step by whole numbers");
        assert_eq!(nice_max(1.0, true), 4.0);
        assert_eq!(nice_max(690.0, false), 800.0);
        assert_eq!(nice_max(0.0048, false), 0.008);
        assert_eq!(nice_max(3970.0, true), 4000.0);
    }
}
