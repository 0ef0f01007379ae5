#include "svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace sa {

namespace {

constexpr double font_size = 13.0;
constexpr double font_size_title = 15.0;
constexpr double infinity = std::numeric_limits<double>::infinity();

/// Text for XML: the five special characters become entities, and control
/// characters that XML 1.0 forbids are dropped.
std::string escape(const std::string& text)
{
    std::string out;
    out.reserve(text.size());
    for (const char ch : text) {
        switch (ch) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default:
            if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\t' || ch == '\n') {
                out += ch;
            }
        }
    }
    return out;
}

/// The width of a character in em for a wide sans-serif font (DejaVu Sans, the
/// widest of the fonts a figure asks for), rounded up so that text never spills.
double em_width(unsigned char ch)
{
    if (ch >= 0x80) {
        return 0.8;  // ×, −, ∞, √, ·, …: measured as wide symbols
    }
    switch (ch) {
    case ' ': return 0.32;
    case 'i': case 'l': case 'j': case '.': case ',': case ':': case ';': case '\'': case '|': case '!': case 'I':
        return 0.3;
    case 'f': case 't': case 'r': case '(': case ')': case '[': case ']': case '-': return 0.42;
    case 'm': case 'M': case 'W': return 0.9;
    case 'w': return 0.82;
    default: break;
    }
    if (ch >= 'A' && ch <= 'Z') {
        return 0.74;
    }
    return 0.64;  // digits, the other lower-case letters and the remaining symbols
}

/// An upper estimate of the width of UTF-8 text in pixels (continuation bytes are not counted).
double text_width(const std::string& text, double size = font_size, bool bold = false)
{
    double em = 0.0;
    for (const char ch : text) {
        const auto byte = static_cast<unsigned char>(ch);
        if ((byte & 0xC0) != 0x80) {
            em += em_width(byte);
        }
    }
    return em * size * (bold ? 1.12 : 1.0);
}

/// Coordinates with two decimals: enough for the screen, identical everywhere.
std::string num(double value)
{
    const std::string text = fmt::format("{:.2f}", value + 0.0);
    return text == "-0.00" ? "0.00" : text;
}

std::string document_start(double width, double height, const std::string& title)
{
    return fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
        "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\" font-size=\"13\" "
        "role=\"img\">\n<title>{2}</title>\n"
        "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
        num(width), num(height), escape(title));
}

struct Rgb {
    double r;
    double g;
    double b;
};

std::string hex(const Rgb& colour)
{
    const auto channel = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 255.0))); };
    return fmt::format("#{:02x}{:02x}{:02x}", channel(colour.r), channel(colour.g), channel(colour.b));
}

// ColorBrewer's sequential "Blues": light for small values, dark for large ones,
// evenly spaced in perceived lightness and readable in grey.
constexpr std::array<Rgb, 9> blues{{{247, 251, 255},
                                    {222, 235, 247},
                                    {198, 219, 239},
                                    {158, 202, 225},
                                    {107, 174, 214},
                                    {66, 146, 198},
                                    {33, 113, 181},
                                    {8, 81, 156},
                                    {8, 48, 107}}};

/// The colour of a position t in [0, 1] on the scale.
Rgb scale_colour(double t)
{
    t = std::clamp(t, 0.0, 1.0) * static_cast<double>(blues.size() - 1);
    const auto index = std::min(static_cast<std::size_t>(t), blues.size() - 2);
    const double f = t - static_cast<double>(index);
    const Rgb& a = blues[index];
    const Rgb& b = blues[index + 1];
    return {a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f};
}

/// Relative luminance (sRGB, WCAG), to pick black or white text on a cell.
double luminance(const Rgb& colour)
{
    const auto linear = [](double v) {
        v /= 255.0;
        return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * linear(colour.r) + 0.7152 * linear(colour.g) + 0.0722 * linear(colour.b);
}

// A cell's text. Finite numbers go through format_number, the formatter of the printed
// tables, so a figure never shows a number differently from the text; only NaN and the
// infinities get the figure's own marks, drawn apart from every number.
std::string value_text(double value, int precision)
{
    if (std::isnan(value)) {
        return "NaN";
    }
    if (std::isinf(value)) {
        return value < 0 ? "\u2212\u221e" : "+\u221e";
    }
    return format_number(value, precision);
}

constexpr const char* masked_fill = "url(#sa-masked)";
constexpr const char* masked_pattern =
    "<pattern id=\"sa-masked\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" "
    "patternTransform=\"rotate(45)\">"
    "<rect width=\"8\" height=\"8\" fill=\"#e4e4e4\"/>"
    "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#a8a8a8\" stroke-width=\"3\"/></pattern>\n";
constexpr const char* nan_fill = "#ffffff";
constexpr const char* nan_stroke = "#c0392b";

// What the values of a heatmap span: the finite range, and which special values occur.
struct HeatmapValues {
    double low = infinity;
    double high = -infinity;
    bool has_infinite = false;
    bool has_plus_infinity = false;
    bool has_nan = false;
    double widest_value = 0.0;  // the widest cell text

    [[nodiscard]] bool has_finite() const { return low <= high; }
};

// A heatmap with more rows or columns than this is drawn compact (heatmap_svg()).
constexpr std::size_t compact_above = 16;
constexpr double compact_cell = 16.0;  // a compact cell's side, in pixels

bool compact(const Heatmap& heatmap)
{
    return heatmap.values.rows() > compact_above || heatmap.values.cols() > compact_above;
}

// Where everything of a heatmap goes: the grid, then the colour scale and its keys.
struct HeatmapLayout {
    bool compact = false;
    std::size_t label_every = 1;  // a compact grid labels every k-th column, where each label fits
    double cell_w = 0.0;
    double cell_h = 40.0;
    double pad = 12.0;
    double row_axis_x = 0.0;  // centre of the rotated row axis title
    double grid_left = 0.0;
    double title_y = 0.0;
    double col_axis_y = 0.0;
    double col_labels_y = 0.0;
    double grid_top = 0.0;
    double grid_w = 0.0;
    double grid_h = 0.0;
    double bar_x = 0.0;  // the colour scale: a vertical bar from the largest (top) to the smallest value
    double bar_w = 14.0;
    double bar_top = 0.0;
    double bar_h = 0.0;
    double swatch = 14.0;
    std::string high_text;
    std::string low_text;
    std::string masked_note;
    std::string nan_note = "NaN";
    double width = 0.0;
    double height = 0.0;
};

void check_heatmap(const Heatmap& heatmap)
{
    const Matrix& values = heatmap.values;
    if (values.empty()) {
        throw ShapeError(fmt::format("heatmap_svg: the matrix of \"{}\" is empty ({}); there is nothing to draw",
                                     heatmap.title, shape(values)));
    }
    if (heatmap.row_labels.size() != values.rows() || heatmap.col_labels.size() != values.cols()) {
        throw ShapeError(fmt::format("heatmap_svg: {} row and {} column labels for a {} matrix",
                                     heatmap.row_labels.size(), heatmap.col_labels.size(), shape(values)));
    }
    if (heatmap.precision < 0 || heatmap.precision > 10) {
        throw std::invalid_argument(
            fmt::format("heatmap_svg: precision {} is outside 0 to 10", heatmap.precision));
    }
}

HeatmapValues heatmap_values(const Heatmap& heatmap)
{
    HeatmapValues found;
    for (std::size_t r = 0; r < heatmap.values.rows(); ++r) {
        for (std::size_t c = 0; c < heatmap.values.cols(); ++c) {
            const double value = heatmap.values(r, c);
            found.has_nan = found.has_nan || std::isnan(value);
            found.has_infinite = found.has_infinite || std::isinf(value);
            found.has_plus_infinity = found.has_plus_infinity || value == infinity;
            if (std::isfinite(value)) {
                found.low = std::min(found.low, value);
                found.high = std::max(found.high, value);
            }
            found.widest_value = std::max(found.widest_value, text_width(value_text(value, heatmap.precision)));
        }
    }
    return found;
}

double widest(const std::vector<std::string>& labels)
{
    double width = 0.0;
    for (const auto& label : labels) {
        width = std::max(width, text_width(label));
    }
    return width;
}

// Left to right: row axis title, row labels, grid; top to bottom: title, column axis title,
// column labels, grid.
void lay_out_grid(const Heatmap& heatmap, const HeatmapValues& found, HeatmapLayout& layout)
{
    layout.compact = compact(heatmap);
    if (layout.compact) {
        layout.cell_w = compact_cell;
        layout.cell_h = compact_cell;
        // Every k-th column label, k the least that leaves each label 4 px to spare.
        const double label_w = widest(heatmap.col_labels) + 4.0;
        layout.label_every = static_cast<std::size_t>(std::max(1.0, std::ceil(label_w / compact_cell)));
    } else {
        layout.cell_w = std::ceil(std::max({56.0, found.widest_value + 18.0, widest(heatmap.col_labels) + 12.0}));
    }
    layout.row_axis_x = layout.pad + 8.0;
    layout.grid_left = std::ceil(layout.row_axis_x + 14.0 + widest(heatmap.row_labels) + 10.0);
    double y = layout.pad;
    layout.title_y = y + 15.0;
    if (!heatmap.title.empty()) {
        y += 26.0;
    }
    layout.col_axis_y = y + 13.0;
    if (!heatmap.col_axis.empty()) {
        y += 22.0;
    }
    layout.col_labels_y = y + 13.0;
    layout.grid_top = y + 22.0;
    layout.grid_w = layout.cell_w * static_cast<double>(heatmap.values.cols());
    layout.grid_h = layout.cell_h * static_cast<double>(heatmap.values.rows());
}

// The colour scale right of the grid, its keys for ±∞ and NaN below it, and the whole size.
void lay_out_legend(const Heatmap& heatmap, const HeatmapValues& found, HeatmapLayout& layout)
{
    const double grid_bottom = layout.grid_top + layout.grid_h;
    layout.bar_x = layout.grid_left + layout.grid_w + 22.0;
    layout.bar_top = layout.grid_top + (heatmap.scale_label.empty() ? 0.0 : 18.0);
    layout.bar_h = std::max(grid_bottom - layout.bar_top, 64.0);
    layout.high_text = found.has_finite() ? value_text(found.high, heatmap.precision) : "";
    layout.low_text = found.has_finite() ? value_text(found.low, heatmap.precision) : "";
    double legend_w = std::max(text_width(layout.high_text), text_width(layout.low_text)) + layout.bar_w + 8.0;
    legend_w = std::max(legend_w, text_width(heatmap.scale_label));
    double legend_bottom = found.has_finite() ? layout.bar_top + layout.bar_h : layout.grid_top;
    layout.masked_note = found.has_plus_infinity ? "\u00b1\u221e" : "\u2212\u221e (masked)";
    double note_y = legend_bottom + 14.0;
    if (found.has_infinite) {
        legend_w = std::max(legend_w, layout.swatch + 6.0 + text_width(layout.masked_note));
        legend_bottom = note_y + layout.swatch;
        note_y += layout.swatch + 8.0;
    }
    if (found.has_nan) {
        legend_w = std::max(legend_w, layout.swatch + 6.0 + text_width(layout.nan_note));
        legend_bottom = note_y + layout.swatch;
    }
    double width = layout.bar_x + legend_w + layout.pad;
    width = std::max(width, layout.pad * 2.0 + text_width(heatmap.title, font_size_title, true));
    width = std::max(width, layout.grid_left + text_width(heatmap.col_axis) + layout.pad);
    layout.width = std::ceil(width);
    layout.height = std::ceil(std::max(grid_bottom, legend_bottom) + layout.pad);
}

// The hatched pattern of masked cells and the colour scale's gradient.
std::string heatmap_definitions()
{
    std::string svg = "<defs>\n";
    svg += masked_pattern;
    svg += "<linearGradient id=\"sa-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
    for (std::size_t i = 0; i < blues.size(); ++i) {
        svg += fmt::format("<stop offset=\"{}\" stop-color=\"{}\"/>",
                           num(static_cast<double>(i) / static_cast<double>(blues.size() - 1)), hex(blues[i]));
    }
    svg += "</linearGradient>\n</defs>\n";
    return svg;
}

// The title, the two axis titles and the row and column labels.
std::string heatmap_labels(const Heatmap& heatmap, const HeatmapLayout& layout)
{
    std::string svg;
    if (!heatmap.title.empty()) {
        svg += fmt::format("<text class=\"title\" x=\"{}\" y=\"{}\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
                           num(layout.pad), num(layout.title_y), escape(heatmap.title));
    }
    if (!heatmap.col_axis.empty()) {
        svg += fmt::format(
            "<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-style=\"italic\" "
            "fill=\"#444444\">{}</text>\n",
            num(layout.grid_left + layout.grid_w / 2.0), num(layout.col_axis_y), escape(heatmap.col_axis));
    }
    if (!heatmap.row_axis.empty()) {
        const double cy = layout.grid_top + layout.grid_h / 2.0;
        svg += fmt::format(
            "<text class=\"axis-title\" x=\"{0}\" y=\"{1}\" transform=\"rotate(-90 {0} {1})\" text-anchor=\"middle\" "
            "dominant-baseline=\"central\" font-style=\"italic\" fill=\"#444444\">{2}</text>\n",
            num(layout.row_axis_x), num(cy), escape(heatmap.row_axis));
    }
    for (std::size_t c = 0; c < heatmap.values.cols(); c += layout.label_every) {
        svg += fmt::format("<text class=\"col-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                           num(layout.grid_left + layout.cell_w * static_cast<double>(c) + layout.cell_w / 2.0),
                           num(layout.col_labels_y), escape(heatmap.col_labels[c]));
    }
    for (std::size_t r = 0; r < heatmap.values.rows(); ++r) {
        svg += fmt::format("<text class=\"row-label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                           num(layout.grid_left - 10.0),
                           num(layout.grid_top + layout.cell_h * static_cast<double>(r) + layout.cell_h / 2.0 +
                               (layout.compact ? 4.0 : 4.5)),
                           escape(heatmap.row_labels[r]));
    }
    return svg;
}

// How one cell is drawn: a colour from the scale, or the marks of NaN and ±∞.
struct CellLook {
    std::string fill;
    std::string stroke = "#ffffff";
    std::string extra;
    std::string text_colour = "#000000";
    std::string kind = "value";
};

CellLook cell_look(double value, const HeatmapValues& found)
{
    CellLook look;
    if (std::isnan(value)) {
        look.fill = nan_fill;
        look.stroke = nan_stroke;
        look.extra = " stroke-dasharray=\"4 3\"";
        look.text_colour = nan_stroke;
        look.kind = "nan";
    } else if (std::isinf(value)) {
        look.fill = masked_fill;
        look.text_colour = "#333333";
        look.kind = value < 0 ? "masked" : "infinite";
    } else {
        const double t = found.high > found.low ? (value - found.low) / (found.high - found.low) : 0.5;
        const Rgb colour = scale_colour(t);
        look.fill = hex(colour);
        look.text_colour = luminance(colour) < 0.36 ? "#ffffff" : "#000000";
    }
    return look;
}

// Every cell with its value, then the frame around the grid.
std::string heatmap_cells(const Heatmap& heatmap, const HeatmapValues& found, const HeatmapLayout& layout)
{
    std::string svg;
    const double cell_w = layout.cell_w;
    const double cell_h = layout.cell_h;
    for (std::size_t r = 0; r < heatmap.values.rows(); ++r) {
        for (std::size_t c = 0; c < heatmap.values.cols(); ++c) {
            const double value = heatmap.values(r, c);
            const double x = layout.grid_left + cell_w * static_cast<double>(c);
            const double cell_y = layout.grid_top + cell_h * static_cast<double>(r);
            const CellLook look = cell_look(value, found);
            const double inset = look.kind == "nan" ? 1.5 : 0.0;
            const std::string shown = value_text(value, heatmap.precision);
            // A compact cell holds no text: its value, with its row and column, is its tooltip.
            const std::string end =
                layout.compact ? fmt::format("><title>{} \u2192 {}: {}</title></rect>\n", escape(heatmap.row_labels[r]),
                                             escape(heatmap.col_labels[c]), escape(shown))
                               : "/>\n";
            svg += fmt::format(
                "<rect class=\"cell {}\" data-row=\"{}\" data-col=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
                "fill=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}{}",
                look.kind, r, c, num(x + inset), num(cell_y + inset), num(cell_w - 2 * inset), num(cell_h - 2 * inset),
                look.fill, look.stroke, look.kind == "nan" ? "2" : (layout.compact ? "0.5" : "1"), look.extra, end);
            if (layout.compact) {
                continue;
            }
            svg += fmt::format(
                "<text class=\"cell-value\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\"{}>{}</text>\n",
                num(x + cell_w / 2.0), num(cell_y + cell_h / 2.0 + 4.5), look.text_colour,
                look.kind == "value" ? "" : " font-weight=\"bold\"", escape(shown));
        }
    }
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888888\"/>\n",
                       num(layout.grid_left), num(layout.grid_top), num(layout.grid_w), num(layout.grid_h));
    return svg;
}

// The colour scale: its label, the bar, and the largest and smallest value.
std::string heatmap_scale(const Heatmap& heatmap, const HeatmapValues& found, const HeatmapLayout& layout)
{
    std::string svg;
    if (!heatmap.scale_label.empty()) {
        svg += fmt::format("<text class=\"scale-label\" x=\"{}\" y=\"{}\" fill=\"#444444\">{}</text>\n",
                           num(layout.bar_x), num(layout.grid_top + 8.0), escape(heatmap.scale_label));
    }
    if (!found.has_finite()) {
        return svg;
    }
    const bool flat = !(found.high > found.low);
    const double text_x = layout.bar_x + layout.bar_w + 6.0;
    svg += fmt::format(
        "<rect class=\"scale\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#888888\"/>\n",
        num(layout.bar_x), num(layout.bar_top), num(layout.bar_w), num(layout.bar_h),
        flat ? hex(scale_colour(0.5)) : "url(#sa-scale)");
    if (flat) {
        svg += fmt::format("<text class=\"scale-max scale-min\" x=\"{}\" y=\"{}\">{}</text>\n", num(text_x),
                           num(layout.bar_top + layout.bar_h / 2.0 + 4.5), escape(layout.high_text));
    } else {
        svg += fmt::format("<text class=\"scale-max\" x=\"{}\" y=\"{}\">{}</text>\n", num(text_x),
                           num(layout.bar_top + 10.0), escape(layout.high_text));
        svg += fmt::format("<text class=\"scale-min\" x=\"{}\" y=\"{}\">{}</text>\n", num(text_x),
                           num(layout.bar_top + layout.bar_h - 1.0), escape(layout.low_text));
    }
    return svg;
}

// The keys below the scale: the hatching of ±∞ and the dashed frame of NaN.
std::string heatmap_keys(const HeatmapValues& found, const HeatmapLayout& layout)
{
    std::string svg;
    const double bar_x = layout.bar_x;
    const double swatch = layout.swatch;
    double swatch_y = (found.has_finite() ? layout.bar_top + layout.bar_h : layout.grid_top) + 14.0;
    if (found.has_infinite) {
        svg += fmt::format(
            "<rect class=\"key masked\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#888888\"/>\n"
            "<text x=\"{}\" y=\"{}\">{}</text>\n",
            num(bar_x), num(swatch_y), num(swatch), num(swatch), masked_fill, num(bar_x + swatch + 6.0),
            num(swatch_y + 11.5), escape(layout.masked_note));
        swatch_y += swatch + 8.0;
    }
    if (found.has_nan) {
        svg += fmt::format(
            "<rect class=\"key nan\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"{}\" "
            "stroke-width=\"2\" stroke-dasharray=\"4 3\"/>\n<text x=\"{}\" y=\"{}\">{}</text>\n",
            num(bar_x), num(swatch_y), num(swatch), num(swatch), nan_fill, nan_stroke, num(bar_x + swatch + 6.0),
            num(swatch_y + 11.5), escape(layout.nan_note));
    }
    return svg;
}

}  // namespace

std::string heatmap_svg(const Heatmap& heatmap)
{
    check_heatmap(heatmap);
    const HeatmapValues found = heatmap_values(heatmap);
    HeatmapLayout layout;
    lay_out_grid(heatmap, found, layout);
    lay_out_legend(heatmap, found, layout);
    std::string svg = document_start(layout.width, layout.height, heatmap.title);
    svg += heatmap_definitions();
    svg += heatmap_labels(heatmap, layout);
    svg += heatmap_cells(heatmap, found, layout);
    svg += heatmap_scale(heatmap, found, layout);
    svg += heatmap_keys(found, layout);
    svg += "</svg>\n";
    return svg;
}

namespace {

/// One axis of a line plot: maps data values to [0, 1] and knows its ticks.
struct Axis {
    bool log = false;
    int base = 10;
    double lo = 0.0;  // the axis range (for a log axis: the values, not their logarithms)
    double hi = 1.0;

    [[nodiscard]] double position(double value) const
    {
        if (log) {
            return (std::log(value) - std::log(lo)) / (std::log(hi) - std::log(lo));
        }
        return (value - lo) / (hi - lo);
    }
};

struct Tick {
    double value;
    std::string label;  // SVG text content (may contain a tspan); empty: a minor tick
};

bool is_power_of_two(double value)
{
    int exponent = 0;
    const double mantissa = std::frexp(value, &exponent);
    return mantissa == 0.5;
}

/// A power of a base as a tick label: plain digits while they stay short, else b^k.
std::string power_label(int base, int exponent)
{
    const double value = std::pow(static_cast<double>(base), exponent);
    const bool plain = base == 10 ? (exponent >= -3 && exponent <= 5) : (exponent >= -3 && exponent <= 13);
    if (plain) {
        // b^-k has exactly k decimals for b = 2 and b = 10.
        return fmt::format("{:.{}f}", value, std::max(0, -exponent));
    }
    const std::string shown = exponent < 0 ? "\u2212" + std::to_string(-exponent) : std::to_string(exponent);
    return fmt::format("{}<tspan dy=\"-6\" font-size=\"10\">{}</tspan>", base, shown);
}

Axis make_axis(bool log, int requested_base, double min, double max, bool all_powers_of_two, std::vector<Tick>& ticks)
{
    Axis axis;
    axis.log = log;
    if (log) {
        axis.base = requested_base != 0 ? requested_base : (all_powers_of_two ? 2 : 10);
        const double base = axis.base;
        int first = static_cast<int>(std::floor(std::log(min) / std::log(base) + 1e-9));
        int last = static_cast<int>(std::ceil(std::log(max) / std::log(base) - 1e-9));
        if (first == last) {
            --first;
            ++last;
        }
        axis.lo = std::pow(base, first);
        axis.hi = std::pow(base, last);
        const int count = last - first + 1;
        const int label_every = std::max(1, (count + 10) / 11);  // at most 11 labels
        for (int k = first; k <= last; ++k) {
            const bool labelled = (k - first) % label_every == 0;
            ticks.push_back({std::pow(base, k), labelled ? power_label(axis.base, k) : std::string()});
            if (axis.base == 10 && k < last && count <= 6) {
                for (int m = 2; m <= 9; ++m) {
                    ticks.push_back({m * std::pow(base, k), std::string()});
                }
            }
        }
        return axis;
    }
    if (min == max) {
        const double spread = min == 0.0 ? 1.0 : std::abs(min) * 0.1;
        min -= spread;
        max += spread;
    }
    const double raw_step = (max - min) / 5.0;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw_step)));
    const double fraction = raw_step / magnitude;
    const double step = (fraction <= 1.0 ? 1.0 : fraction <= 2.0 ? 2.0 : fraction <= 5.0 ? 5.0 : 10.0) * magnitude;
    const double first = std::floor(min / step + 1e-9);
    const double last = std::ceil(max / step - 1e-9);
    axis.lo = first * step;
    axis.hi = last * step;
    const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
    for (double k = first; k <= last + 0.5; k += 1.0) {
        std::string label = fmt::format("{:.{}f}", k * step + 0.0, decimals);
        if (label.find_first_not_of("-0.") == std::string::npos) {
            label = fmt::format("{:.{}f}", 0.0, decimals);
        }
        if (label.front() == '-') {
            label = "\u2212" + label.substr(1);
        }
        ticks.push_back({k * step, label});
    }
    return axis;
}

// Colour-blind-safe colours (Okabe and Ito), with a marker shape and dash pattern each.
constexpr std::array<const char*, 6> series_colours{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9"};
constexpr std::array<const char*, 6> series_dashes{"", "7 4", "2 3", "9 3 2 3", "4 4", "1 2"};

std::string marker(std::size_t series)
{
    switch (series % 4) {
    case 0: return "<circle r=\"4.5\"/>";
    case 1: return "<rect x=\"-4\" y=\"-4\" width=\"8\" height=\"8\"/>";
    case 2: return "<path d=\"M0 -5.5 L5 4 L-5 4 Z\"/>";
    default: return "<path d=\"M0 -5.5 L5 0 L0 5.5 L-5 0 Z\"/>";
    }
}

// The data's extent, checked point by point.
struct PlotRange {
    double x_min = infinity;
    double x_max = -infinity;
    double y_min = infinity;
    double y_max = -infinity;
    bool x_powers_of_two = true;
    bool y_powers_of_two = true;
    std::size_t points = 0;
};

void check_point(const LinePlot& plot, const Series& series, std::size_t i)
{
    const double x = series.x[i];
    const double y = series.y[i];
    if (!std::isfinite(x) || !std::isfinite(y)) {
        throw std::invalid_argument(fmt::format(
            "line_plot_svg: series \"{}\" has a value that is not finite at point {} (x = {}, y = {})",
            series.name, i, x, y));
    }
    if (plot.log_x && x <= 0.0) {
        throw std::invalid_argument(fmt::format(
            "line_plot_svg: series \"{}\" has x = {} at point {}, but the logarithmic x axis needs positive values",
            series.name, x, i));
    }
    if (plot.log_y && y <= 0.0) {
        throw std::invalid_argument(fmt::format(
            "line_plot_svg: series \"{}\" has y = {} at point {}, but the logarithmic y axis needs positive values",
            series.name, y, i));
    }
}

PlotRange plot_range(const LinePlot& plot)
{
    for (const auto& [base, axis] : {std::pair{plot.log_x_base, "x"}, std::pair{plot.log_y_base, "y"}}) {
        if (base != 0 && base != 2 && base != 10) {
            throw std::invalid_argument(
                fmt::format("line_plot_svg: the {} axis has logarithmic base {}; use 2, 10 or 0 (automatic)", axis, base));
        }
    }
    PlotRange range;
    for (const auto& series : plot.series) {
        if (series.x.size() != series.y.size()) {
            throw std::invalid_argument(fmt::format("line_plot_svg: series \"{}\" has {} x values but {} y values",
                                                    series.name, series.x.size(), series.y.size()));
        }
        for (std::size_t i = 0; i < series.x.size(); ++i) {
            check_point(plot, series, i);
            const double x = series.x[i];
            const double y = series.y[i];
            range.x_min = std::min(range.x_min, x);
            range.x_max = std::max(range.x_max, x);
            range.y_min = std::min(range.y_min, y);
            range.y_max = std::max(range.y_max, y);
            range.x_powers_of_two = range.x_powers_of_two && is_power_of_two(x);
            range.y_powers_of_two = range.y_powers_of_two && is_power_of_two(y);
            ++range.points;
        }
    }
    if (range.points == 0) {
        throw std::invalid_argument(fmt::format("line_plot_svg: the plot \"{}\" has no points", plot.title));
    }
    return range;
}

struct LegendItem {
    double x;
    double y;
};

// Where everything of a line plot goes: title, a legend row, then the plot area with its axes.
struct PlotLayout {
    double pad = 12.0;
    double plot_left = 0.0;
    double title_y = 0.0;
    double width = 0.0;
    double plot_right = 0.0;
    std::vector<LegendItem> legend;
    double plot_top = 0.0;
    double plot_h = 260.0;
    double plot_bottom = 0.0;
    double plot_w = 0.0;
    double height = 0.0;
    Axis x_axis;
    Axis y_axis;

    [[nodiscard]] double px(double value) const { return plot_left + x_axis.position(value) * plot_w; }
    [[nodiscard]] double py(double value) const { return plot_bottom - y_axis.position(value) * plot_h; }
};

double widest_tick(const std::vector<Tick>& ticks)
{
    double widest = 0.0;
    for (const auto& tick : ticks) {
        // A tspan exponent adds its markup but not its width; count only the visible characters.
        std::string visible = tick.label;
        if (const auto open = visible.find("<tspan"); open != std::string::npos) {
            visible = visible.substr(0, open) + "000";
        }
        widest = std::max(widest, text_width(visible));
    }
    return widest;
}

PlotLayout lay_out_plot(const LinePlot& plot, const std::vector<Tick>& y_ticks)
{
    PlotLayout layout;
    layout.plot_left = std::ceil(layout.pad + 18.0 + widest_tick(y_ticks) + 10.0);
    double y = layout.pad;
    layout.title_y = y + 15.0;
    if (!plot.title.empty()) {
        y += 26.0;
    }
    // Legend items flow left to right and wrap.
    layout.width = std::max(560.0, std::ceil(layout.pad * 2.0 + text_width(plot.title, font_size_title, true)));
    layout.plot_right = layout.width - layout.pad - 8.0;
    double legend_x = layout.plot_left;
    double legend_y = y + 10.0;
    for (const auto& series : plot.series) {
        const double item_w = 34.0 + text_width(series.name) + 18.0;
        if (legend_x > layout.plot_left && legend_x + item_w > layout.plot_right) {
            legend_x = layout.plot_left;
            legend_y += 20.0;
        }
        layout.legend.push_back({legend_x, legend_y});
        legend_x += item_w;
    }
    layout.plot_top = legend_y + 18.0;
    layout.plot_bottom = layout.plot_top + layout.plot_h;
    layout.plot_w = layout.plot_right - layout.plot_left;
    layout.height = std::ceil(layout.plot_bottom + 52.0);
    return layout;
}

// Grid lines, ticks and tick labels of both axes.
std::string plot_ticks(const PlotLayout& layout, const std::vector<Tick>& x_ticks, const std::vector<Tick>& y_ticks)
{
    std::string svg;
    for (const auto& tick : x_ticks) {
        const double x = layout.px(tick.value);
        const bool major = !tick.label.empty() || !layout.x_axis.log || layout.x_axis.base == 2;
        svg += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\"/>\n", num(x),
                           num(layout.plot_top), num(layout.plot_bottom), major ? "#dddddd" : "#f0f0f0");
        svg += fmt::format("<line class=\"tick\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#333333\"/>\n", num(x),
                           num(layout.plot_bottom), num(layout.plot_bottom + (major ? 6.0 : 3.0)));
        if (!tick.label.empty()) {
            svg += fmt::format("<text class=\"tick-label x\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(x),
                               num(layout.plot_bottom + 20.0), tick.label);
        }
    }
    for (const auto& tick : y_ticks) {
        const double y_tick = layout.py(tick.value);
        const bool major = !tick.label.empty() || !layout.y_axis.log || layout.y_axis.base == 2;
        svg += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\"/>\n",
                           num(layout.plot_left), num(y_tick), num(layout.plot_right), major ? "#dddddd" : "#f0f0f0");
        svg += fmt::format("<line class=\"tick\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333333\"/>\n",
                           num(layout.plot_left - (major ? 6.0 : 3.0)), num(y_tick), num(layout.plot_left));
        if (!tick.label.empty()) {
            svg += fmt::format("<text class=\"tick-label y\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                               num(layout.plot_left - 9.0), num(y_tick + 4.5), tick.label);
        }
    }
    return svg;
}

// The frame around the plot area and the two axis labels.
std::string plot_frame(const LinePlot& plot, const PlotLayout& layout)
{
    std::string svg = fmt::format(
        "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333333\"/>\n",
        num(layout.plot_left), num(layout.plot_top), num(layout.plot_w), num(layout.plot_h));
    svg += fmt::format("<text class=\"axis-label x\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       num(layout.plot_left + layout.plot_w / 2.0), num(layout.plot_bottom + 42.0),
                       escape(plot.x_label));
    svg += fmt::format(
        "<text class=\"axis-label y\" x=\"{0}\" y=\"{1}\" transform=\"rotate(-90 {0} {1})\" text-anchor=\"middle\" "
        "dominant-baseline=\"central\">{2}</text>\n",
        num(layout.pad + 8.0), num(layout.plot_top + layout.plot_h / 2.0), escape(plot.y_label));
    return svg;
}

// One series: a line, then a marker on every point, then its legend entry.
std::string plot_series(const Series& series, std::size_t s, const PlotLayout& layout)
{
    const char* colour = series_colours[s % series_colours.size()];
    const std::string dash = series_dashes[s % series_dashes.size()];
    const std::string dash_attribute = dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"";
    std::string path_points;
    for (std::size_t i = 0; i < series.x.size(); ++i) {
        path_points += fmt::format("{}{},{}", i == 0 ? "" : " ", num(layout.px(series.x[i])), num(layout.py(series.y[i])));
    }
    std::string svg = fmt::format("<g class=\"series\" data-series=\"{}\">\n", s);
    svg += fmt::format("<title>{}</title>\n", escape(series.name));
    if (series.x.size() > 1) {
        svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", path_points,
                           colour, dash_attribute);
    }
    for (std::size_t i = 0; i < series.x.size(); ++i) {
        svg += fmt::format(
            "<g class=\"point\" data-series=\"{}\" data-index=\"{}\" transform=\"translate({},{})\" fill=\"{}\" "
            "stroke=\"#ffffff\" stroke-width=\"1\">{}</g>\n",
            s, i, num(layout.px(series.x[i])), num(layout.py(series.y[i])), colour, marker(s));
    }
    svg += "</g>\n";
    const LegendItem& item = layout.legend[s];
    svg += fmt::format(
        "<g class=\"legend\" data-series=\"{0}\"><line x1=\"{1}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"{4}\" "
        "stroke-width=\"2\"{5}/><g transform=\"translate({6},{2})\" fill=\"{4}\" stroke=\"#ffffff\">{7}</g>"
        "<text x=\"{8}\" y=\"{9}\">{10}</text></g>\n",
        s, num(item.x), num(item.y), num(item.x + 28.0), colour, dash_attribute, num(item.x + 14.0), marker(s),
        num(item.x + 34.0), num(item.y + 4.5), escape(series.name));
    return svg;
}

}  // namespace

std::string line_plot_svg(const LinePlot& plot)
{
    const PlotRange range = plot_range(plot);
    std::vector<Tick> x_ticks;
    std::vector<Tick> y_ticks;
    const Axis x_axis = make_axis(plot.log_x, plot.log_x_base, range.x_min, range.x_max, range.x_powers_of_two, x_ticks);
    const Axis y_axis = make_axis(plot.log_y, plot.log_y_base, range.y_min, range.y_max, range.y_powers_of_two, y_ticks);
    PlotLayout layout = lay_out_plot(plot, y_ticks);
    layout.x_axis = x_axis;
    layout.y_axis = y_axis;

    std::string svg = document_start(layout.width, layout.height, plot.title);
    if (!plot.title.empty()) {
        svg += fmt::format("<text class=\"title\" x=\"{}\" y=\"{}\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
                           num(layout.pad), num(layout.title_y), escape(plot.title));
    }
    svg += plot_ticks(layout, x_ticks, y_ticks);
    svg += plot_frame(plot, layout);
    for (std::size_t s = 0; s < plot.series.size(); ++s) {
        svg += plot_series(plot.series[s], s, layout);
    }
    svg += "</svg>\n";
    return svg;
}

void write_figure(const std::string& folder, const std::string& name, const std::string& svg)
{
    if (folder.empty()) {
        return;
    }
    if (name.empty()) {
        throw std::invalid_argument("write_figure: the figure has no file name");
    }
    const std::string path = folder + "/" + name;
    std::ofstream file(path, std::ios::binary);
    file << svg;
    file.close();
    if (!file) {
        throw std::runtime_error(fmt::format("write_figure: cannot write the figure {}", path));
    }
}

}  // namespace sa
