//! One SVG figure per op, like the course reports' figures (`docs/references.md`): rate
//! against size on a log-scale size axis, one line per backend/variant (dashed with
//! transfers, black for the copy ceiling).

use std::io;
use std::path::Path;

use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::cases::Op;
use crate::format::{format_rate, lines_of, pow2_style, size_label};
use crate::row::{Row, COPY};

/// Ten distinct colours that stay readable on white (matplotlib's "tab10").
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

const WIDTH: u32 = 960;
const HEIGHT: u32 = 600;

fn plot_error(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("drawing the figure: {e}"))
}

/// A rate axis spanning more than this factor is drawn on a log scale, so that the
/// slow rungs of a ladder stay visible under the fast ones.
const LOG_Y_SPREAD: f64 = 50.0;

/// What every figure has around its lines.
struct Frame {
    op: Op,
    unit: &'static str,
    x: std::ops::Range<f64>,
    ticks: usize,
    pow2: bool,
}

/// The ladder size of a row of the figure (rows of other shapes are not drawn).
fn size_of(r: &Row) -> usize {
    r.size().unwrap_or(0).max(1)
}

/// Draws `rows` (all of one op, at a ladder's shapes) into an SVG file at `path`: rate
/// against log₂ of the size, on a linear rate axis, or a log one when the rates span more than 50×. Rows
/// that were not measured are left out; an op without any measured row still gets a
/// (blank) figure.
///
/// # Errors
/// I/O errors and drawing errors.
pub fn write_svg(op: Op, rows: &[&Row], path: &Path) -> io::Result<()> {
    let ok: Vec<&Row> = rows
        .iter()
        .copied()
        .filter(|r| r.is_ok() && r.rate.is_finite() && r.rate > 0.0 && r.size().is_some())
        .collect();
    let lines = lines_of(&ok);
    let sizes: Vec<usize> = ok.iter().map(|r| size_of(r)).collect();
    let log2 = |n: usize| (n as f64).log2();
    let (mut x0, mut x1) = sizes
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &n| {
            (a.min(log2(n)), b.max(log2(n)))
        });
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    let pad = if x1 > x0 { 0.05 * (x1 - x0) } else { 0.5 };
    let (lo, hi) = ok.iter().fold((f64::INFINITY, 0.0f64), |(a, b), r| {
        (a.min(r.rate), b.max(r.rate))
    });
    // The compute ceilings, each a horizontal line (a bandwidth-bound op's ceiling is
    // the copy, drawn as a line of its own).
    let mut ceilings: Vec<(String, f64)> = Vec::new();
    for r in ok
        .iter()
        .filter(|r| r.backend != COPY && !r.op.bandwidth_bound())
    {
        if let Some(c) = r.ceiling.filter(|c| c.is_finite() && *c > 0.0) {
            if !ceilings.iter().any(|(of, _)| *of == r.ceiling_of) {
                ceilings.push((r.ceiling_of.clone(), c));
            }
        }
    }
    let hi = ceilings.iter().fold(hi, |h, c| h.max(c.1));

    let (dtype, device, unit) = rows
        .first()
        .map(|r| (r.dtype.name(), r.device.clone(), r.unit.name()))
        .unwrap_or(("", String::new(), op.unit().name()));
    let frame = Frame {
        op,
        unit,
        x: (x0 - pad)..(x1 + pad),
        ticks: ((x1 - x0).round() as usize + 1).clamp(2, 16),
        pow2: pow2_style(&sizes),
    };

    let root = SVGBackend::new(path, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_error)?;
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(format!("{op}, {dtype}, {device}"), ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(72);
    if lo > 0.0 && hi / lo > LOG_Y_SPREAD {
        let y = ((lo / 1.5)..(hi * 1.5)).log_scale();
        let chart = builder
            .build_cartesian_2d(frame.x.clone(), y)
            .map_err(plot_error)?;
        draw(chart, &frame, (&lines, &ceilings), true)?;
    } else {
        let chart = builder
            .build_cartesian_2d(frame.x.clone(), 0.0..(hi.max(1e-9) * 1.08))
            .map_err(plot_error)?;
        draw(chart, &frame, (&lines, &ceilings), false)?;
    }
    root.present().map_err(plot_error)?;
    Ok(())
}

/// The mesh, the ceilings (grey, dotted), the lines (dashed with transfers) with their
/// points, and the legend.
fn draw<'a, Y>(
    mut chart: ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    frame: &Frame,
    (lines, ceilings): (&[Vec<&Row>], &[(String, f64)]),
    log_y: bool,
) -> io::Result<()>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let scale = if log_y { ", log scale" } else { "" };
    chart
        .configure_mesh()
        .x_desc(format!("{} (log scale)", frame.op.size_label()))
        .y_desc(format!("{}{scale}", frame.unit))
        .x_labels(frame.ticks)
        .x_label_formatter(&|v| size_label(2f64.powf(*v), frame.pow2))
        .y_label_formatter(&|v| match *v {
            0.0 => "0".to_string(),
            v => format_rate(v),
        })
        .draw()
        .map_err(plot_error)?;

    for (of, c) in ceilings {
        let grey = RGBColor(120, 120, 120).stroke_width(1);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(frame.x.start, *c), (frame.x.end, *c)],
                2,
                4,
                grey,
            ))
            .map_err(plot_error)?
            .label(format!("ceiling: {of}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], grey));
    }
    // A variant keeps its colour with and without transfers.
    let mut keys: Vec<String> = Vec::new();
    for line in lines {
        let key = format!("{}/{}", line[0].backend, line[0].variant);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    for line in lines {
        let mut points: Vec<(f64, f64)> = line
            .iter()
            .map(|r| ((size_of(r) as f64).log2(), r.rate))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let key = format!("{}/{}", line[0].backend, line[0].variant);
        let index = keys.iter().position(|k| *k == key).unwrap_or(0);
        let color = if line[0].backend == COPY {
            BLACK.to_rgba()
        } else {
            PALETTE[index % PALETTE.len()].to_rgba()
        };
        let style = color.stroke_width(2);
        let dashed = line[0].transfers;
        let series = if dashed {
            chart.draw_series(DashedLineSeries::new(points.clone(), 8, 5, style))
        } else {
            chart.draw_series(LineSeries::new(points.clone(), style))
        };
        series
            .map_err(plot_error)?
            .label(line[0].label())
            .legend(move |(x, y)| {
                // Two short strokes for a dashed line, one long one otherwise.
                let (end, gap) = if dashed {
                    (7, (11, 18))
                } else {
                    (18, (18, 18))
                };
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(0, 0), (end, 0)], style)
                    + PathElement::new(vec![(gap.0, 0), (gap.1, 0)], style)
            });
        chart
            .draw_series(PointSeries::of_element(
                points,
                3,
                color.filled(),
                &|c, s, st| EmptyElement::at(c) + Circle::new((0, 0), s, st),
            ))
            .map_err(plot_error)?;
    }
    if !lines.is_empty() || !ceilings.is_empty() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(plot_error)?;
    }
    Ok(())
}
