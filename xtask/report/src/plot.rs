//! One XY chart as an SVG string (plotters): lines, filled areas, reference marks, vertical markers, a side legend.
//!
//! The legend sits in its own panel to the right of the plot so it never hides data, and text is
//! plain `sans-serif` (no font files), so the SVG needs nothing outside itself.

use bench_proto::numbers::fmt_num;
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

pub(crate) const WIDTH: u32 = 980;
pub(crate) const HEIGHT: u32 = 440;
const LEGEND_W: u32 = 270;
const FONT: &str = "sans-serif";

/// Tableau 10: distinguishable, colour-blind tolerable.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0xba, 0xb0, 0xac),
];
pub(crate) const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub(crate) const GREY: RGBColor = RGBColor(0x88, 0x88, 0x88);

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Scale {
    Linear,
    /// Logarithmic with the given base for its ticks (2 for client counts, 10 otherwise).
    Log(f64),
}

/// How the points of a series (a line, a reference figure) are marked, here and in the legend: every series
/// of a chart its own mark, so two at one place both show (a ring around a dot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    Dot,
    /// A hollow circle wider than a dot.
    Ring,
    Square,
    Diamond,
    Triangle,
    Cross,
}

#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub color: RGBColor,
    pub dashed: bool,
    pub dots: bool,
    /// How its points are marked (when `dots`).
    pub marker: Marker,
    pub in_legend: bool,
    /// `(x, low, high)`: an interval drawn as a vertical whisker at x (95 % interval of repeated rounds).
    pub whiskers: Vec<(f64, f64, f64)>,
}

impl Line {
    pub(crate) fn new(name: impl Into<String>, points: Vec<(f64, f64)>, color: RGBColor) -> Line {
        Line {
            name: name.into(),
            points,
            color,
            dashed: false,
            dots: true,
            marker: Marker::Dot,
            in_legend: true,
            whiskers: vec![],
        }
    }
    pub(crate) fn dashed(mut self) -> Line {
        self.dashed = true;
        self
    }
    pub(crate) fn marked(mut self, marker: Marker) -> Line {
        self.marker = marker;
        self
    }
    pub(crate) fn no_dots(mut self) -> Line {
        self.dots = false;
        self
    }
    pub(crate) fn unlisted(mut self) -> Line {
        self.in_legend = false;
        self
    }
}

/// A published figure: points at known x, or a horizontal level when it has no x on this axis.
#[derive(Debug, Clone)]
pub(crate) struct Reference {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub levels: Vec<f64>,
    pub color: RGBColor,
    pub marker: Marker,
}

/// A legend-only entry (e.g. "dashed = uncorrected").
#[derive(Debug, Clone)]
pub(crate) struct Note {
    pub text: String,
    pub color: RGBColor,
    pub dashed: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Plot {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    /// Filled to y = 0, drawn first and in order (draw the tallest first to stack).
    pub areas: Vec<Line>,
    pub lines: Vec<Line>,
    pub references: Vec<Reference>,
    /// Vertical markers `(x, label)`: the knee, step boundaries.
    pub vmarks: Vec<(f64, String)>,
    /// Shaded spans of x `(from, to, label)`, drawn first, alternately darker (a staged step's stages).
    pub bands: Vec<(f64, f64, String)>,
    pub vmark_color: RGBColor,
    pub notes: Vec<Note>,
    /// Fixed y range instead of one fitted to the data.
    pub y_range: Option<(f64, f64)>,
    pub x_fmt: fn(f64) -> String,
    pub y_fmt: fn(f64) -> String,
    /// Label the x axis where the data is (see [`Plot::data_ticks`]).
    pub x_ticks_at_data: bool,
    /// A log x axis labelled at whole powers of its base only (percentiles: 90 %, 99 %, 99.9 %).
    pub x_decades_only: bool,
    /// Categorical x: `(x, name)` per category (steps that vary nothing numeric); the x axis is labelled
    /// with the names only, and lines are drawn as points (or bars) — no line joins unrelated steps.
    pub categories: Vec<(f64, String)>,
    /// With categories: draw each line's values as bars from zero.
    pub bars: bool,
}

/// One axis's ticks, with the label of each: distinct and in increasing order of value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ticks(pub Vec<(f64, String)>);

impl Ticks {
    fn values(&self) -> Vec<f64> {
        self.0.iter().map(|t| t.0).collect()
    }

    /// The label of the tick nearest `v` (plotters asks for the labels of the key points it was given).
    fn label(&self, v: f64) -> String {
        self.0
            .iter()
            .min_by(|a, b| (a.0 - v).abs().total_cmp(&(b.0 - v).abs()))
            .map(|t| t.1.clone())
            .unwrap_or_default()
    }
}

impl Plot {
    pub(crate) fn new(
        title: impl Into<String>,
        x_desc: impl Into<String>,
        y_desc: impl Into<String>,
    ) -> Plot {
        Plot {
            title: title.into(),
            x_desc: x_desc.into(),
            y_desc: y_desc.into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            areas: vec![],
            lines: vec![],
            references: vec![],
            vmarks: vec![],
            bands: vec![],
            vmark_color: INK,
            notes: vec![],
            y_range: None,
            x_fmt: fmt_num,
            y_fmt: fmt_num,
            x_ticks_at_data: false,
            x_decades_only: false,
            categories: vec![],
            bars: false,
        }
    }

    /// Whether there is anything to draw.
    pub(crate) fn has_data(&self) -> bool {
        self.lines
            .iter()
            .chain(&self.areas)
            .any(|l| !l.points.is_empty())
    }

    fn all_points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let data = self
            .lines
            .iter()
            .chain(&self.areas)
            .flat_map(|l| l.points.iter().copied());
        let refs = self
            .references
            .iter()
            .flat_map(|r| r.points.iter().copied());
        data.chain(refs)
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    }

    fn x_bounds(&self) -> (f64, f64) {
        if !self.categories.is_empty() {
            let lo = self
                .categories
                .iter()
                .map(|c| c.0)
                .fold(f64::INFINITY, f64::min);
            let hi = self
                .categories
                .iter()
                .map(|c| c.0)
                .fold(f64::NEG_INFINITY, f64::max);
            return (lo - 0.6, hi + 0.6);
        }
        let xs = self
            .all_points()
            .map(|p| p.0)
            .chain(self.vmarks.iter().map(|v| v.0))
            .chain(self.bands.iter().flat_map(|b| [b.0, b.1]));
        let xs: Vec<f64> = xs
            .filter(|x| self.x_scale == Scale::Linear || *x > 0.0)
            .collect();
        pad(&xs, self.x_scale, false)
    }

    fn y_bounds(&self) -> (f64, f64) {
        if let Some(r) = self.y_range {
            return r;
        }
        let levels = self
            .references
            .iter()
            .flat_map(|r| r.levels.iter().copied());
        let whiskers = self
            .lines
            .iter()
            .flat_map(|l| l.whiskers.iter().map(|w| w.2));
        let ys = self.all_points().map(|p| p.1).chain(levels).chain(whiskers);
        let ys: Vec<f64> = ys
            .filter(|y| self.y_scale == Scale::Linear || *y > 0.0)
            .collect();
        pad(&ys, self.y_scale, true)
    }

    /// With `x_ticks_at_data`: ticks at the x values that carry data (client counts 1, 16, 100 read
    /// better than powers of two; 1 and 2 workers need no 1.2, 1.4 …), unless there are too many to label.
    fn data_ticks(&self) -> Option<Vec<f64>> {
        if !self.x_ticks_at_data {
            return None;
        }
        let mut xs: Vec<f64> = self
            .all_points()
            .map(|p| p.0)
            .filter(|x| *x > 0.0)
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        (2..=16).contains(&xs.len()).then_some(xs)
    }

    /// The x axis's ticks for the bounds `(lo, hi)`: the categories, the data's x values, or nice values.
    pub(crate) fn x_ticks(&self, lo: f64, hi: f64) -> Ticks {
        if !self.categories.is_empty() {
            return Ticks(self.categories.clone());
        }
        let values = match (self.x_scale, self.data_ticks()) {
            (_, Some(t)) => t,
            (Scale::Log(b), None) => log_ticks(lo, hi, b, self.x_decades_only),
            (Scale::Linear, None) => linear_ticks(lo, hi, 10),
        };
        spaced(label_ticks(values, self.x_fmt), self.x_scale, lo, hi)
    }

    /// The y axis's ticks for the bounds `(lo, hi)`.
    pub(crate) fn y_ticks(&self, lo: f64, hi: f64) -> Ticks {
        let values = match self.y_scale {
            Scale::Log(b) => log_ticks(lo, hi, b, false),
            Scale::Linear => linear_ticks(lo, hi, 8),
        };
        label_ticks(values, self.y_fmt)
    }

    /// The ticks of both axes as drawn: `(x, y)`.
    #[cfg(test)]
    pub(crate) fn ticks(&self) -> (Ticks, Ticks) {
        let (x0, x1) = self.x_bounds();
        let (y0, y1) = self.y_bounds();
        (self.x_ticks(x0, x1), self.y_ticks(y0, y1))
    }

    /// Renders the chart to an SVG document.
    pub(crate) fn to_svg(&self) -> anyhow::Result<String> {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
            root.fill(&WHITE).map_err(plot_err)?;
            let (main, legend) = root.split_horizontally(WIDTH - LEGEND_W);
            let (x0, x1) = self.x_bounds();
            let (y0, y1) = self.y_bounds();
            let (xt, yt) = (self.x_ticks(x0, x1), self.y_ticks(y0, y1));
            let (xk, yk) = (xt.values(), yt.values());
            let scales = if self.categories.is_empty() {
                (self.x_scale, self.y_scale)
            } else {
                (Scale::Linear, self.y_scale)
            };
            match scales {
                (Scale::Linear, Scale::Linear) => self.draw(
                    &main,
                    Fixed::new(x0..x1, xk),
                    Fixed::new(y0..y1, yk),
                    (&xt, &yt),
                )?,
                (Scale::Linear, Scale::Log(b)) => self.draw(
                    &main,
                    Fixed::new(x0..x1, xk),
                    (y0..y1).log_scale().base(b).with_key_points(yk),
                    (&xt, &yt),
                )?,
                (Scale::Log(b), Scale::Linear) => self.draw(
                    &main,
                    (x0..x1).log_scale().base(b).with_key_points(xk),
                    Fixed::new(y0..y1, yk),
                    (&xt, &yt),
                )?,
                (Scale::Log(bx), Scale::Log(by)) => self.draw(
                    &main,
                    (x0..x1).log_scale().base(bx).with_key_points(xk),
                    (y0..y1).log_scale().base(by).with_key_points(yk),
                    (&xt, &yt),
                )?,
            }
            self.draw_legend(&legend)?;
            root.present().map_err(plot_err)?;
        }
        Ok(svg)
    }

    fn draw<X, Y>(
        &self,
        area: &DrawingArea<SVGBackend<'_>, Shift>,
        x: X,
        y: Y,
        (xt, yt): (&Ticks, &Ticks),
    ) -> anyhow::Result<()>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, (FONT, 20).into_font().style(FontStyle::Bold))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(72)
            .build_cartesian_2d(x, y)
            .map_err(plot_err)?;
        let x_fmt = |v: &f64| xt.label(*v);
        let y_fmt = |v: &f64| yt.label(*v);
        chart
            .configure_mesh()
            .x_desc(&self.x_desc)
            .y_desc(&self.y_desc)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .x_labels(xt.0.len().max(2))
            .y_labels(yt.0.len().max(2))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
            .draw()
            .map_err(plot_err)?;
        self.draw_areas_and_marks(area, &mut chart)?;
        let drawn: Vec<&Line> = self.lines.iter().filter(|l| !l.points.is_empty()).collect();
        self.draw_lines(area, &mut chart, &drawn)?;
        // References over the bars, so a bar never hides a published level.
        let tags = self.draw_references(area, &mut chart)?;
        // Whiskers last, over bars and lines.
        self.draw_whiskers(area, &mut chart, &drawn)?;
        draw_tags(area, tags)
    }

    fn draw_areas_and_marks<X, Y>(
        &self,
        area: &DrawingArea<SVGBackend<'_>, Shift>,
        chart: &mut Chart<'_, '_, X, Y>,
    ) -> anyhow::Result<()>
    where
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let (y_lo, y_hi) = {
            let r = chart.y_range();
            (r.start, r.end)
        };
        self.draw_bands(area, chart, (y_lo, y_hi))?;
        for a in &self.areas {
            let fill = a.color.mix(0.85);
            chart
                .draw_series(AreaSeries::new(
                    a.points.iter().copied(),
                    y_lo.min(0.0).max(y_lo),
                    fill,
                ))
                .map_err(plot_err)?;
        }
        for (vx, label) in &self.vmarks {
            let style = self.vmark_color.mix(0.7).stroke_width(1);
            chart
                .draw_series(DashedLineSeries::new(
                    [(*vx, y_lo), (*vx, y_hi)],
                    6,
                    4,
                    style,
                ))
                .map_err(plot_err)?;
            if !label.is_empty() {
                let pos = chart.backend_coord(&(*vx, y_hi));
                // The bands' labels take the top line: a mark's label goes on the next, not over them.
                let down = if self.bands.is_empty() { 4 } else { 20 };
                area.draw(&Text::new(
                    label.clone(),
                    (pos.0 + 4, pos.1 + down),
                    (FONT, 12).into_font().color(&self.vmark_color),
                ))
                .map_err(plot_err)?;
            }
        }
        Ok(())
    }

    /// The shaded spans, each labelled at its top left when the label fits in it (else its first word).
    fn draw_bands<X, Y>(
        &self,
        area: &DrawingArea<SVGBackend<'_>, Shift>,
        chart: &mut Chart<'_, '_, X, Y>,
        (y_lo, y_hi): (f64, f64),
    ) -> anyhow::Result<()>
    where
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        for (k, (from, to, label)) in self.bands.iter().enumerate() {
            let shade = match k % 2 {
                0 => RGBColor(0xee, 0xf2, 0xf7),
                _ => RGBColor(0xdd, 0xe5, 0xef),
            };
            chart
                .draw_series([Rectangle::new([(*from, y_lo), (*to, y_hi)], shade.filled())])
                .map_err(plot_err)?;
            let (left, top) = chart.backend_coord(&(*from, y_hi));
            let right = chart.backend_coord(&(*to, y_hi)).0;
            // About 7 px a character at this size: a label wider than its band would run into the next.
            let room = usize::try_from((right - left - 6).max(0)).unwrap_or(0) / 7;
            let text = match label.chars().count() <= room {
                true => label.as_str(),
                false => label.split_whitespace().next().unwrap_or(""),
            };
            if !text.is_empty() && text.chars().count() <= room.max(2) {
                area.draw(&Text::new(
                    text.to_owned(),
                    (left + 4, top + 4),
                    (FONT, 12).into_font().color(&GREY),
                ))
                .map_err(plot_err)?;
            }
        }
        Ok(())
    }

    fn draw_lines<X, Y>(
        &self,
        area: &DrawingArea<SVGBackend<'_>, Shift>,
        chart: &mut Chart<'_, '_, X, Y>,
        drawn: &[&Line],
    ) -> anyhow::Result<()>
    where
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let y_lo = chart.y_range().start;
        let categorical = !self.categories.is_empty();
        for (n, l) in drawn.iter().enumerate() {
            let style = l.color.stroke_width(2);
            if categorical && self.bars {
                // Bars side by side within a category when several lines share it.
                let w = 0.7 / drawn.len() as f64;
                let off = -0.35 + w * n as f64;
                let base = if self.y_scale == Scale::Linear {
                    y_lo.max(0.0)
                } else {
                    y_lo
                };
                chart
                    .draw_series(l.points.iter().map(|&(x, y)| {
                        Rectangle::new(
                            [(x + off + w * 0.08, base), (x + off + w * 0.92, y)],
                            l.color.mix(0.85).filled(),
                        )
                    }))
                    .map_err(plot_err)?;
                continue;
            }
            if !categorical {
                if l.dashed {
                    chart
                        .draw_series(DashedLineSeries::new(l.points.iter().copied(), 8, 5, style))
                        .map_err(plot_err)?;
                } else {
                    chart
                        .draw_series(LineSeries::new(l.points.iter().copied(), style))
                        .map_err(plot_err)?;
                }
            }
            if l.dots || categorical {
                let r = if categorical { 5 } else { 3 };
                for p in &l.points {
                    draw_mark(area, chart.backend_coord(p), l.marker, r, l.color)?;
                }
            }
        }
        Ok(())
    }

    /// Published references: their levels and marks, and the labels to draw beside them (published references
    /// are labelled where they are drawn, not only in the legend).
    fn draw_references<X, Y>(
        &self,
        area: &DrawingArea<SVGBackend<'_>, Shift>,
        chart: &mut Chart<'_, '_, X, Y>,
    ) -> anyhow::Result<Vec<Tag>>
    where
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let (x_lo, x_hi) = {
            let r = chart.x_range();
            (r.start, r.end)
        };
        let mut tags: Vec<Tag> = vec![];
        for r in &self.references {
            for &lv in &r.levels {
                let style = r.color.stroke_width(2);
                chart
                    .draw_series(DashedLineSeries::new(
                        [(x_lo, lv), (x_hi, lv)],
                        10,
                        5,
                        style,
                    ))
                    .map_err(plot_err)?;
                let pos = chart.backend_coord(&(x_lo, lv));
                // On its line (the label's white ground interrupts it), so it names no other.
                tags.push((pos.0 + 6, pos.1 - 7, r.label.clone(), r.color, true));
            }
            if let Some(first) = r.points.first() {
                let pos = chart.backend_coord(first);
                tags.push((pos.0 + 10, pos.1 - 8, r.label.clone(), r.color, false));
            }
            for p in &r.points {
                draw_mark(area, chart.backend_coord(p), r.marker, 6, r.color)?;
            }
        }
        Ok(tags)
    }

    fn draw_whiskers<X, Y>(
        &self,
        area: &DrawingArea<SVGBackend<'_>, Shift>,
        chart: &mut Chart<'_, '_, X, Y>,
        drawn: &[&Line],
    ) -> anyhow::Result<()>
    where
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let y_lo = chart.y_range().start;
        for l in drawn {
            for &(x, lo, hi) in &l.whiskers {
                let lo = if self.y_scale == Scale::Linear {
                    lo
                } else {
                    lo.max(y_lo)
                };
                chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![(x, lo), (x, hi)],
                        INK.stroke_width(2),
                    )))
                    .map_err(plot_err)?;
                for y in [lo, hi] {
                    let c = chart.backend_coord(&(x, y));
                    area.draw(&PathElement::new(
                        vec![(c.0 - 5, c.1), (c.0 + 5, c.1)],
                        INK.stroke_width(2),
                    ))
                    .map_err(plot_err)?;
                }
            }
        }
        Ok(())
    }

    fn draw_legend(&self, area: &DrawingArea<SVGBackend<'_>, Shift>) -> anyhow::Result<()> {
        let mut y = 44;
        let text = (FONT, 13).into_font().color(&INK);
        let mut entry =
            |swatch: &dyn Fn(i32) -> anyhow::Result<()>, label: &str| -> anyhow::Result<()> {
                swatch(y)?;
                for line in wrap(label, 34) {
                    area.draw(&Text::new(line, (40, y - 7), text.clone()))
                        .map_err(plot_err)?;
                    y += 16;
                }
                y += 6;
                Ok(())
            };
        let stroke = |c: RGBColor, dashed: bool, y: i32| -> anyhow::Result<()> {
            let style = c.stroke_width(2);
            if dashed {
                area.draw(&PathElement::new(vec![(6, y), (14, y)], style))
                    .map_err(plot_err)?;
                area.draw(&PathElement::new(vec![(20, y), (30, y)], style))
                    .map_err(plot_err)?;
            } else {
                area.draw(&PathElement::new(vec![(6, y), (30, y)], style))
                    .map_err(plot_err)?;
            }
            Ok(())
        };
        for a in self.areas.iter().filter(|a| a.in_legend) {
            let c = a.color;
            entry(
                &|y| {
                    area.draw(&Rectangle::new(
                        [(8, y - 6), (28, y + 6)],
                        c.mix(0.85).filled(),
                    ))
                    .map_err(plot_err)
                },
                &a.name,
            )?;
        }
        // A line's swatch: its stroke and, where its points are marked, its mark over it.
        for l in self.lines.iter().filter(|l| l.in_legend) {
            let marked = l.dots || !self.categories.is_empty();
            let bar = self.bars && !self.categories.is_empty();
            entry(
                &|y| {
                    if bar {
                        return area
                            .draw(&Rectangle::new(
                                [(8, y - 6), (28, y + 6)],
                                l.color.mix(0.85).filled(),
                            ))
                            .map(|_| ())
                            .map_err(plot_err);
                    }
                    stroke(l.color, l.dashed, y)?;
                    if marked {
                        draw_mark(area, (18, y), l.marker, 4, l.color)?;
                    }
                    Ok(())
                },
                &l.name,
            )?;
        }
        for n in &self.notes {
            entry(&|y| stroke(n.color, n.dashed, y), &n.text)?;
        }
        for r in &self.references {
            let (c, marker) = (r.color, r.marker);
            let has_points = !r.points.is_empty();
            entry(
                &|y| {
                    if has_points {
                        draw_mark(area, (18, y), marker, 6, c)
                    } else {
                        stroke(c, true, y)
                    }
                },
                &r.label,
            )?;
        }
        Ok(())
    }
}

/// Draws one mark of `size` (a dot's radius) centred on the pixel `at`.
fn draw_mark(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    at: (i32, i32),
    marker: Marker,
    size: i32,
    color: RGBColor,
) -> anyhow::Result<()> {
    let (x, y) = at;
    let s = size;
    match marker {
        Marker::Dot => area.draw(&Circle::new(at, s, color.filled())),
        Marker::Ring => area.draw(&Circle::new(at, s + 3, color.stroke_width(2))),
        Marker::Square => area.draw(&Rectangle::new(
            [(x - s, y - s), (x + s, y + s)],
            color.filled(),
        )),
        Marker::Diamond => area.draw(&Polygon::new(
            vec![
                (x, y - s - 1),
                (x + s + 1, y),
                (x, y + s + 1),
                (x - s - 1, y),
            ],
            color.stroke_width(2),
        )),
        Marker::Triangle => area.draw(&TriangleMarker::new(at, s + 1, color.filled())),
        Marker::Cross => area.draw(&Cross::new(at, s, color.stroke_width(2))),
    }
    .map_err(plot_err)
}

/// Bounds padded for readability: linear y starts at 0 (throughput charts must not exaggerate
/// differences); log bounds snap outward to whole decades... of their own base's neighbourhood.
fn pad(vals: &[f64], scale: Scale, is_y: bool) -> (f64, f64) {
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return match scale {
            Scale::Linear => (0.0, 1.0),
            Scale::Log(_) => (1.0, 10.0),
        };
    }
    match scale {
        Scale::Linear if is_y => {
            let lo = lo.min(0.0);
            let hi = if hi > lo { hi * 1.08 } else { lo + 1.0 };
            (lo, hi)
        }
        Scale::Linear => {
            let span = (hi - lo).max(hi.abs() * 0.1).max(1e-9);
            (lo - span * 0.04, hi + span * 0.04)
        }
        Scale::Log(_) if is_y => (lo / 1.6, hi * 1.6),
        Scale::Log(_) => (lo / 1.25, hi * 1.25),
    }
}

/// Wraps `s` at spaces into lines of at most `width` characters (longer words stay whole).
pub(crate) fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    let mut cur = String::new();
    for word in s.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// A linear f64 axis with the key points given (plotters' own linear axis cannot take them and keep
/// the label formatter's bounds).
#[derive(Debug, Clone)]
struct Fixed {
    range: std::ops::Range<f64>,
    keys: Vec<f64>,
}

impl Fixed {
    fn new(range: std::ops::Range<f64>, keys: Vec<f64>) -> Fixed {
        Fixed { range, keys }
    }
}

impl Ranged for Fixed {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        plotters::coord::types::RangedCoordf64::from(self.range.clone()).map(value, limit)
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            vec![]
        } else {
            self.keys.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

/// Nice linear ticks (steps of 1, 2, 2.5 or 5 × 10ⁿ), about `target` of them within `[lo, hi]`.
pub(crate) fn linear_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let span = hi - lo;
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return vec![lo];
    }
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * 0.999)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil();
    (0..)
        .map(|k| (first + k as f64) * step)
        .take_while(|t| *t <= hi + step * 1e-9)
        .map(|t| if t.abs() < step * 1e-9 { 0.0 } else { t })
        .collect()
}

/// Log ticks within `[lo, hi]`: powers of two for base 2; for base 10, 1-2-5 per decade over a few
/// decades (so a latency axis is labelled below 1 ms too), whole decades only over many or when asked.
pub(crate) fn log_ticks(lo: f64, hi: f64, base: f64, decades_only: bool) -> Vec<f64> {
    if lo.is_nan() || hi.is_nan() || lo <= 0.0 || hi <= lo {
        return vec![lo.max(f64::MIN_POSITIVE)];
    }
    let (k0, k1) = (lo.log(base).floor() as i32, hi.log(base).ceil() as i32);
    let decades = (hi / lo).log10();
    let mults: &[f64] = if base != 10.0 || decades_only || decades > 4.0 {
        &[1.0]
    } else if decades > 1.5 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0]
    };
    let mut v: Vec<f64> = (k0..=k1)
        .flat_map(|k| mults.iter().map(move |m| m * base.powi(k)))
        .filter(|t| *t >= lo * (1.0 - 1e-9) && *t <= hi * (1.0 + 1e-9))
        .collect();
    // Over very many powers, every other one keeps the labels apart.
    while v.len() > 14 {
        v = v.into_iter().step_by(2).collect();
    }
    if v.len() < 2 {
        v = vec![lo, hi];
    }
    v
}

/// Drops x labels that would touch the one before them (100 and 128 clients on a log axis): the plot
/// is about `PLOT_W` pixels wide and a label about 7 pixels a character.
fn spaced(ticks: Ticks, scale: Scale, lo: f64, hi: f64) -> Ticks {
    const PLOT_W: f64 = (WIDTH - LEGEND_W - 110) as f64;
    let pos = |v: f64| match scale {
        Scale::Log(_) if lo > 0.0 && v > 0.0 => (v / lo).ln() / (hi / lo).ln() * PLOT_W,
        _ => (v - lo) / (hi - lo) * PLOT_W,
    };
    let half = |t: &(f64, String)| t.1.chars().count() as f64 * 3.5 + 4.0;
    let mut out: Vec<(f64, String)> = vec![];
    for t in ticks.0 {
        match out.last() {
            Some(prev) if pos(t.0) - pos(prev.0) < half(prev) + half(&t) => {}
            _ => out.push(t),
        }
    }
    Ticks(out)
}

/// Labels ticks with `fmt`; where two labels would read the same, with more digits, and ticks whose
/// label still repeats are dropped: every label on an axis is distinct and they ascend.
pub(crate) fn label_ticks(values: Vec<f64>, fmt: fn(f64) -> String) -> Ticks {
    let labelled: Vec<(f64, String)> = values.iter().map(|&v| (v, fmt(v))).collect();
    let distinct = |t: &[(f64, String)]| t.windows(2).all(|w| w[0].1 != w[1].1);
    if distinct(&labelled) {
        return Ticks(labelled);
    }
    let mut out: Vec<(f64, String)> = vec![];
    for v in values {
        let label = fmt_precise(v);
        if out.last().map_or(true, |l| l.1 != label) {
            out.push((v, label));
        }
    }
    Ticks(out)
}

/// A number with four significant digits, trailing zeros trimmed.
fn fmt_precise(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = (3 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The chart of one plot, on its SVG.
type Chart<'a, 'b, X, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>;

/// A label to draw at a pixel position: `(x, y, text, colour, on a level line)`; a level's label may move
/// along its line, a point's stays beside its mark.
type Tag = (i32, i32, String, RGBColor, bool);

/// A label's box as drawn, `(left, top, right, bottom)` in pixels: "12 px" sans-serif, which plotters writes
/// as 9.7 px — under 4.5 px a character in common sans fonts, counted as 5.5 to be safe — and 15 px a line.
fn tag_box(x: i32, y: i32, text: &str) -> (i32, i32, i32, i32) {
    (x, y, x + text.chars().count() as i32 * 11 / 2, y + 15)
}

/// Places the labels of published figures so that no two boxes meet: bottom first, each at its mark; a level's
/// label moves along its line past the labels it would touch, and any label that cannot moves up past them (or
/// down, where up would leave the plot). A label that would run past the right edge `right` ends at its mark.
/// `top`: the highest a label may go.
fn place_tags(mut tags: Vec<Tag>, right: i32, top: i32) -> Vec<Tag> {
    tags.sort_by_key(|t| std::cmp::Reverse(t.1));
    let meets = |a: (i32, i32, i32, i32), b: (i32, i32, i32, i32)| {
        a.0 < b.2 + 2 && b.0 < a.2 + 2 && a.1 < b.3 + 1 && b.1 < a.3 + 1
    };
    let mut placed: Vec<Tag> = vec![];
    for (x, y, text, color, level) in tags {
        let w = tag_box(0, 0, &text).2;
        let x = if x + w > right {
            (x - 20 - w).max(80)
        } else {
            x
        };
        let first_met = |x: i32, y: i32, placed: &[Tag]| {
            let b = tag_box(x, y, &text);
            placed
                .iter()
                .map(|p| tag_box(p.0, p.1, &p.2))
                .find(|&p| meets(b, p))
        };
        if level {
            let mut along = x;
            while let Some(other) = first_met(along, y, &placed) {
                along = other.2 + 12;
            }
            if along + w <= right {
                placed.push((along, y, text, color, level));
                continue;
            }
        }
        let mut up = y;
        while let Some(other) = first_met(x, up, &placed) {
            up = other.1 - 16;
        }
        let y = if up >= top {
            up
        } else {
            let mut down = y;
            while let Some(other) = first_met(x, down, &placed) {
                down = other.1 + 16;
            }
            down
        };
        placed.push((x, y, text, color, level));
    }
    placed
}

/// Draws the labels of published figures where [`place_tags`] puts them.
fn draw_tags(area: &DrawingArea<SVGBackend<'_>, Shift>, tags: Vec<Tag>) -> anyhow::Result<()> {
    let right = area.dim_in_pixel().0 as i32 - 12;
    for (x, y, text, color, level) in place_tags(tags, right, 34) {
        // A level's label sits on its line: a white ground under the text, about as wide as it reads (12 px
        // sans-serif: under 5 px a character; the box it was placed by is wider, to be safe), keeps the line
        // from striking it through. A point's label has none: it must not hide the data around it.
        if level {
            let (l, t, _, b) = tag_box(x, y, &text);
            let w = text.chars().count() as i32 * 24 / 5;
            area.draw(&Rectangle::new(
                [(l - 2, t - 1), (l + w + 2, b - 1)],
                WHITE.mix(0.9).filled(),
            ))
            .map_err(plot_err)?;
        }
        area.draw(&Text::new(
            text,
            (x, y),
            (FONT, 12).into_font().color(&color),
        ))
        .map_err(plot_err)?;
    }
    Ok(())
}

fn plot_err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow::anyhow!("drawing chart: {e:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_short() {
        assert_eq!(fmt_num(0.0), "0");
        assert_eq!(fmt_num(0.25), "0.25");
        assert_eq!(fmt_num(2.5), "2.5");
        assert_eq!(fmt_num(1024.0), "1024");
        assert_eq!(fmt_num(34853.9), "34.9k");
        assert_eq!(fmt_num(2_500_000.0), "2.5M");
    }

    /// Labels at marks 5 px apart (CXF's 348.5 / 334.0 / 304.9 per client) and one far off: no two boxes meet,
    /// none leaves the plot, and the far one stays at its mark.
    #[test]
    fn close_labels_are_placed_apart() {
        let tag = |y: i32, t: &str| (86, y, format!("published: {t} (seed 000)"), INK, true);
        let tags = vec![
            tag(100, "CXF 1B run, 8 h"),
            tag(105, "earlier tuning, 8 h"),
            tag(110, "Java 17 ZGC (untuned), 8 h"),
            tag(300, "Intel server, IBM POWER client"),
            tag(40, "at the top"),
        ];
        let placed = place_tags(tags, 700, 34);
        assert_eq!(placed.len(), 5);
        let boxes: Vec<_> = placed.iter().map(|t| tag_box(t.0, t.1, &t.2)).collect();
        for (i, a) in boxes.iter().enumerate() {
            assert!(a.1 >= 34, "{placed:?}");
            for b in &boxes[i + 1..] {
                let apart = a.2 <= b.0 || b.2 <= a.0 || a.3 <= b.1 || b.3 <= a.1;
                assert!(apart, "{a:?} meets {b:?}");
            }
        }
        assert!(placed.iter().any(|t| t.1 == 300 && t.2.contains("Intel")));
    }

    /// A mark at a band's edge ("breaks down" where stage 2 starts) is labelled below the band's label, not
    /// over it.
    #[test]
    fn a_marks_label_is_not_drawn_over_a_bands_label() {
        let mut p = Plot::new("t", "s", "calls/s");
        p.lines
            .push(Line::new("ok", vec![(0.0, 1.0), (20.0, 5.0)], PALETTE[0]));
        p.bands = vec![
            (0.0, 10.0, "1 0→8 clients".into()),
            (10.0, 20.0, "2 8 clients".into()),
        ];
        p.vmarks.push((10.0, "breaks down".into()));
        let svg = p.to_svg().unwrap();
        let y_of = |label: &str| -> i32 {
            // plotters writes a text's content on a line of its own.
            let at = svg.find(&format!("\n{label}\n")).expect(label);
            let head = &svg[..at];
            let y = &head[head.rfind(" y=\"").expect("a y") + 4..];
            y[..y.find('"').unwrap()].parse().unwrap()
        };
        assert!(
            y_of("breaks down") - y_of("2 8 clients") >= 12,
            "{} vs {}",
            y_of("breaks down"),
            y_of("2 8 clients")
        );
    }

    #[test]
    fn wrap_breaks_at_spaces() {
        assert_eq!(
            wrap("IBM client → Intel server, 60 s quick test", 20),
            ["IBM client → Intel", "server, 60 s quick", "test"]
        );
        assert_eq!(wrap("", 10), [""]);
    }

    #[test]
    fn svg_is_self_contained_xml() {
        let mut p = Plot::new("t & <x>", "clients", "req/s");
        p.x_scale = Scale::Log(2.0);
        p.lines.push(Line::new(
            "measured",
            vec![(1.0, 10.0), (8.0, 70.0), (64.0, 80.0)],
            PALETTE[0],
        ));
        p.references.push(Reference {
            label: "published".into(),
            points: vec![(8.0, 60.0)],
            levels: vec![75.0],
            color: INK,
            marker: Marker::Diamond,
        });
        p.vmarks.push((8.0, "knee".into()));
        let svg = p.to_svg().unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.contains("t &amp; &lt;x&gt;"));
        let mut r = quick_xml::Reader::from_str(&svg);
        loop {
            if r.read_event().expect("well-formed SVG") == quick_xml::events::Event::Eof {
                break;
            }
        }
    }
}
