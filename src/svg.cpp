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

}  // namespace

std::string heatmap_svg(const Heatmap& heatmap)
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
    const std::size_t rows = values.rows();
    const std::size_t cols = values.cols();
    const int precision = heatmap.precision;

    double low = infinity;
    double high = -infinity;
    bool has_infinite = false;
    bool has_plus_infinity = false;
    bool has_nan = false;
    double widest_value = 0.0;
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) {
            const double value = values(r, c);
            has_nan = has_nan || std::isnan(value);
            has_infinite = has_infinite || std::isinf(value);
            has_plus_infinity = has_plus_infinity || value == infinity;
            if (std::isfinite(value)) {
                low = std::min(low, value);
                high = std::max(high, value);
            }
            widest_value = std::max(widest_value, text_width(value_text(value, precision)));
        }
    }
    const bool has_finite = low <= high;

    // Layout, left to right: row axis title, row labels, grid, colour scale.
    double widest_col_label = 0.0;
    for (const auto& label : heatmap.col_labels) {
        widest_col_label = std::max(widest_col_label, text_width(label));
    }
    double widest_row_label = 0.0;
    for (const auto& label : heatmap.row_labels) {
        widest_row_label = std::max(widest_row_label, text_width(label));
    }
    const double cell_w = std::ceil(std::max({56.0, widest_value + 18.0, widest_col_label + 12.0}));
    const double cell_h = 40.0;
    const double pad = 12.0;
    const double row_axis_x = pad + 8.0;  // centre of the rotated row axis title
    const double grid_left = std::ceil(row_axis_x + 14.0 + widest_row_label + 10.0);
    double y = pad;
    const double title_y = y + 15.0;
    if (!heatmap.title.empty()) {
        y += 26.0;
    }
    const double col_axis_y = y + 13.0;
    if (!heatmap.col_axis.empty()) {
        y += 22.0;
    }
    const double col_labels_y = y + 13.0;
    const double grid_top = y + 22.0;
    const double grid_w = cell_w * static_cast<double>(cols);
    const double grid_h = cell_h * static_cast<double>(rows);
    const double grid_right = grid_left + grid_w;
    const double grid_bottom = grid_top + grid_h;

    // The colour scale: a vertical bar from the largest (top) to the smallest value.
    const double bar_x = grid_right + 22.0;
    const double bar_w = 14.0;
    double bar_top = grid_top;
    if (!heatmap.scale_label.empty()) {
        bar_top += 18.0;
    }
    const double bar_h = std::max(grid_bottom - bar_top, 64.0);
    const std::string high_text = has_finite ? value_text(high, precision) : "";
    const std::string low_text = has_finite ? value_text(low, precision) : "";
    double legend_w = std::max(text_width(high_text), text_width(low_text)) + bar_w + 8.0;
    legend_w = std::max(legend_w, text_width(heatmap.scale_label));
    double legend_bottom = has_finite ? bar_top + bar_h : grid_top;
    const double swatch = 14.0;
    const std::string masked_note = has_plus_infinity ? "\u00b1\u221e" : "\u2212\u221e (masked)";
    const std::string nan_note = "NaN";
    double note_y = legend_bottom + 14.0;
    if (has_infinite) {
        legend_w = std::max(legend_w, swatch + 6.0 + text_width(masked_note));
        legend_bottom = note_y + swatch;
        note_y += swatch + 8.0;
    }
    if (has_nan) {
        legend_w = std::max(legend_w, swatch + 6.0 + text_width(nan_note));
        legend_bottom = note_y + swatch;
    }

    double width = bar_x + legend_w + pad;
    width = std::max(width, pad * 2.0 + text_width(heatmap.title, font_size_title, true));
    width = std::max(width, grid_left + text_width(heatmap.col_axis) + pad);
    width = std::ceil(width);
    const double height = std::ceil(std::max(grid_bottom, legend_bottom) + pad);

    std::string svg = document_start(width, height, heatmap.title);
    svg += "<defs>\n";
    svg += masked_pattern;
    svg += "<linearGradient id=\"sa-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
    for (std::size_t i = 0; i < blues.size(); ++i) {
        svg += fmt::format("<stop offset=\"{}\" stop-color=\"{}\"/>",
                           num(static_cast<double>(i) / static_cast<double>(blues.size() - 1)), hex(blues[i]));
    }
    svg += "</linearGradient>\n</defs>\n";

    if (!heatmap.title.empty()) {
        svg += fmt::format("<text class=\"title\" x=\"{}\" y=\"{}\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
                           num(pad), num(title_y), escape(heatmap.title));
    }
    if (!heatmap.col_axis.empty()) {
        svg += fmt::format(
            "<text class=\"axis-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-style=\"italic\" "
            "fill=\"#444444\">{}</text>\n",
            num(grid_left + grid_w / 2.0), num(col_axis_y), escape(heatmap.col_axis));
    }
    if (!heatmap.row_axis.empty()) {
        const double cy = grid_top + grid_h / 2.0;
        svg += fmt::format(
            "<text class=\"axis-title\" x=\"{0}\" y=\"{1}\" transform=\"rotate(-90 {0} {1})\" text-anchor=\"middle\" "
            "dominant-baseline=\"central\" font-style=\"italic\" fill=\"#444444\">{2}</text>\n",
            num(row_axis_x), num(cy), escape(heatmap.row_axis));
    }
    for (std::size_t c = 0; c < cols; ++c) {
        svg += fmt::format("<text class=\"col-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                           num(grid_left + cell_w * static_cast<double>(c) + cell_w / 2.0), num(col_labels_y),
                           escape(heatmap.col_labels[c]));
    }
    for (std::size_t r = 0; r < rows; ++r) {
        svg += fmt::format("<text class=\"row-label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                           num(grid_left - 10.0), num(grid_top + cell_h * static_cast<double>(r) + cell_h / 2.0 + 4.5),
                           escape(heatmap.row_labels[r]));
    }

    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) {
            const double value = values(r, c);
            const double x = grid_left + cell_w * static_cast<double>(c);
            const double cell_y = grid_top + cell_h * static_cast<double>(r);
            std::string fill;
            std::string stroke = "#ffffff";
            std::string extra;
            std::string text_colour = "#000000";
            std::string kind = "value";
            if (std::isnan(value)) {
                fill = nan_fill;
                stroke = nan_stroke;
                extra = " stroke-dasharray=\"4 3\"";
                text_colour = nan_stroke;
                kind = "nan";
            } else if (std::isinf(value)) {
                fill = masked_fill;
                text_colour = "#333333";
                kind = value < 0 ? "masked" : "infinite";
            } else {
                const double t = high > low ? (value - low) / (high - low) : 0.5;
                const Rgb colour = scale_colour(t);
                fill = hex(colour);
                text_colour = luminance(colour) < 0.36 ? "#ffffff" : "#000000";
            }
            const double inset = kind == "nan" ? 1.5 : 0.0;
            svg += fmt::format(
                "<rect class=\"cell {}\" data-row=\"{}\" data-col=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
                "fill=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n",
                kind, r, c, num(x + inset), num(cell_y + inset), num(cell_w - 2 * inset), num(cell_h - 2 * inset),
                fill, stroke, kind == "nan" ? "2" : "1", extra);
            svg += fmt::format(
                "<text class=\"cell-value\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\"{}>{}</text>\n",
                num(x + cell_w / 2.0), num(cell_y + cell_h / 2.0 + 4.5), text_colour,
                kind == "value" ? "" : " font-weight=\"bold\"", escape(value_text(value, precision)));
        }
    }
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888888\"/>\n",
                       num(grid_left), num(grid_top), num(grid_w), num(grid_h));

    // The legend.
    if (!heatmap.scale_label.empty()) {
        svg += fmt::format("<text class=\"scale-label\" x=\"{}\" y=\"{}\" fill=\"#444444\">{}</text>\n", num(bar_x),
                           num(grid_top + 8.0), escape(heatmap.scale_label));
    }
    if (has_finite) {
        const bool flat = !(high > low);
        svg += fmt::format(
            "<rect class=\"scale\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#888888\"/>\n",
            num(bar_x), num(bar_top), num(bar_w), num(bar_h), flat ? hex(scale_colour(0.5)) : "url(#sa-scale)");
        if (flat) {
            svg += fmt::format("<text class=\"scale-max scale-min\" x=\"{}\" y=\"{}\">{}</text>\n", num(bar_x + bar_w + 6.0),
                               num(bar_top + bar_h / 2.0 + 4.5), escape(high_text));
        } else {
            svg += fmt::format("<text class=\"scale-max\" x=\"{}\" y=\"{}\">{}</text>\n", num(bar_x + bar_w + 6.0),
                               num(bar_top + 10.0), escape(high_text));
            svg += fmt::format("<text class=\"scale-min\" x=\"{}\" y=\"{}\">{}</text>\n", num(bar_x + bar_w + 6.0),
                               num(bar_top + bar_h - 1.0), escape(low_text));
        }
    }
    double swatch_y = (has_finite ? bar_top + bar_h : grid_top) + 14.0;
    if (has_infinite) {
        svg += fmt::format(
            "<rect class=\"key masked\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#888888\"/>\n"
            "<text x=\"{}\" y=\"{}\">{}</text>\n",
            num(bar_x), num(swatch_y), num(swatch), num(swatch), masked_fill, num(bar_x + swatch + 6.0),
            num(swatch_y + 11.5), escape(masked_note));
        swatch_y += swatch + 8.0;
    }
    if (has_nan) {
        svg += fmt::format(
            "<rect class=\"key nan\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"{}\" "
            "stroke-width=\"2\" stroke-dasharray=\"4 3\"/>\n<text x=\"{}\" y=\"{}\">{}</text>\n",
            num(bar_x), num(swatch_y), num(swatch), num(swatch), nan_fill, nan_stroke, num(bar_x + swatch + 6.0),
            num(swatch_y + 11.5), escape(nan_note));
    }
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

}  // namespace

std::string line_plot_svg(const LinePlot& plot)
{
    for (const auto& [base, axis] : {std::pair{plot.log_x_base, "x"}, std::pair{plot.log_y_base, "y"}}) {
        if (base != 0 && base != 2 && base != 10) {
            throw std::invalid_argument(
                fmt::format("line_plot_svg: the {} axis has logarithmic base {}; use 2, 10 or 0 (automatic)", axis, base));
        }
    }
    double x_min = infinity;
    double x_max = -infinity;
    double y_min = infinity;
    double y_max = -infinity;
    bool x_powers_of_two = true;
    bool y_powers_of_two = true;
    std::size_t points = 0;
    for (const auto& series : plot.series) {
        if (series.x.size() != series.y.size()) {
            throw std::invalid_argument(fmt::format("line_plot_svg: series \"{}\" has {} x values but {} y values",
                                                    series.name, series.x.size(), series.y.size()));
        }
        for (std::size_t i = 0; i < series.x.size(); ++i) {
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
            x_min = std::min(x_min, x);
            x_max = std::max(x_max, x);
            y_min = std::min(y_min, y);
            y_max = std::max(y_max, y);
            x_powers_of_two = x_powers_of_two && is_power_of_two(x);
            y_powers_of_two = y_powers_of_two && is_power_of_two(y);
            ++points;
        }
    }
    if (points == 0) {
        throw std::invalid_argument(fmt::format("line_plot_svg: the plot \"{}\" has no points", plot.title));
    }

    std::vector<Tick> x_ticks;
    std::vector<Tick> y_ticks;
    const Axis x_axis = make_axis(plot.log_x, plot.log_x_base, x_min, x_max, x_powers_of_two, x_ticks);
    const Axis y_axis = make_axis(plot.log_y, plot.log_y_base, y_min, y_max, y_powers_of_two, y_ticks);

    // Layout: title, a legend row, then the plot area with its axes.
    const double pad = 12.0;
    double widest_y_tick = 0.0;
    for (const auto& tick : y_ticks) {
        // A tspan exponent adds its markup but not its width; count only the visible characters.
        std::string visible = tick.label;
        if (const auto open = visible.find("<tspan"); open != std::string::npos) {
            visible = visible.substr(0, open) + "000";
        }
        widest_y_tick = std::max(widest_y_tick, text_width(visible));
    }
    const double plot_left = std::ceil(pad + 18.0 + widest_y_tick + 10.0);
    double y = pad;
    const double title_y = y + 15.0;
    if (!plot.title.empty()) {
        y += 26.0;
    }
    // Legend items flow left to right and wrap.
    const double width = std::max(560.0, std::ceil(pad * 2.0 + text_width(plot.title, font_size_title, true)));
    const double plot_right = width - pad - 8.0;
    struct LegendItem {
        double x;
        double y;
    };
    std::vector<LegendItem> legend;
    double legend_x = plot_left;
    double legend_y = y + 10.0;
    for (const auto& series : plot.series) {
        const double item_w = 34.0 + text_width(series.name) + 18.0;
        if (legend_x > plot_left && legend_x + item_w > plot_right) {
            legend_x = plot_left;
            legend_y += 20.0;
        }
        legend.push_back({legend_x, legend_y});
        legend_x += item_w;
    }
    const double plot_top = legend_y + 18.0;
    const double plot_h = 260.0;
    const double plot_bottom = plot_top + plot_h;
    const double plot_w = plot_right - plot_left;
    const double height = std::ceil(plot_bottom + 52.0);

    const auto px = [&](double value) { return plot_left + x_axis.position(value) * plot_w; };
    const auto py = [&](double value) { return plot_bottom - y_axis.position(value) * plot_h; };

    std::string svg = document_start(width, height, plot.title);
    if (!plot.title.empty()) {
        svg += fmt::format("<text class=\"title\" x=\"{}\" y=\"{}\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
                           num(pad), num(title_y), escape(plot.title));
    }
    // Grid lines and ticks.
    for (const auto& tick : x_ticks) {
        const double x = px(tick.value);
        const bool major = !tick.label.empty() || !x_axis.log || x_axis.base == 2;
        svg += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\"/>\n", num(x),
                           num(plot_top), num(plot_bottom), major ? "#dddddd" : "#f0f0f0");
        svg += fmt::format("<line class=\"tick\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#333333\"/>\n", num(x),
                           num(plot_bottom), num(plot_bottom + (major ? 6.0 : 3.0)));
        if (!tick.label.empty()) {
            svg += fmt::format("<text class=\"tick-label x\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", num(x),
                               num(plot_bottom + 20.0), tick.label);
        }
    }
    for (const auto& tick : y_ticks) {
        const double y_tick = py(tick.value);
        const bool major = !tick.label.empty() || !y_axis.log || y_axis.base == 2;
        svg += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\"/>\n",
                           num(plot_left), num(y_tick), num(plot_right), major ? "#dddddd" : "#f0f0f0");
        svg += fmt::format("<line class=\"tick\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333333\"/>\n",
                           num(plot_left - (major ? 6.0 : 3.0)), num(y_tick), num(plot_left));
        if (!tick.label.empty()) {
            svg += fmt::format("<text class=\"tick-label y\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                               num(plot_left - 9.0), num(y_tick + 4.5), tick.label);
        }
    }
    svg += fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333333\"/>\n",
                       num(plot_left), num(plot_top), num(plot_w), num(plot_h));
    svg += fmt::format("<text class=\"axis-label x\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       num(plot_left + plot_w / 2.0), num(plot_bottom + 42.0), escape(plot.x_label));
    svg += fmt::format(
        "<text class=\"axis-label y\" x=\"{0}\" y=\"{1}\" transform=\"rotate(-90 {0} {1})\" text-anchor=\"middle\" "
        "dominant-baseline=\"central\">{2}</text>\n",
        num(pad + 8.0), num(plot_top + plot_h / 2.0), escape(plot.y_label));

    // The series: a line, then a marker on every point.
    for (std::size_t s = 0; s < plot.series.size(); ++s) {
        const Series& series = plot.series[s];
        const char* colour = series_colours[s % series_colours.size()];
        const std::string dash = series_dashes[s % series_dashes.size()];
        const std::string dash_attribute = dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"";
        std::string path_points;
        for (std::size_t i = 0; i < series.x.size(); ++i) {
            path_points += fmt::format("{}{},{}", i == 0 ? "" : " ", num(px(series.x[i])), num(py(series.y[i])));
        }
        svg += fmt::format("<g class=\"series\" data-series=\"{}\">\n", s);
        svg += fmt::format("<title>{}</title>\n", escape(series.name));
        if (series.x.size() > 1) {
            svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n",
                               path_points, colour, dash_attribute);
        }
        for (std::size_t i = 0; i < series.x.size(); ++i) {
            svg += fmt::format(
                "<g class=\"point\" data-series=\"{}\" data-index=\"{}\" transform=\"translate({},{})\" fill=\"{}\" "
                "stroke=\"#ffffff\" stroke-width=\"1\">{}</g>\n",
                s, i, num(px(series.x[i])), num(py(series.y[i])), colour, marker(s));
        }
        svg += "</g>\n";
        // Its legend entry.
        const LegendItem& item = legend[s];
        svg += fmt::format(
            "<g class=\"legend\" data-series=\"{0}\"><line x1=\"{1}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"{4}\" "
            "stroke-width=\"2\"{5}/><g transform=\"translate({6},{2})\" fill=\"{4}\" stroke=\"#ffffff\">{7}</g>"
            "<text x=\"{8}\" y=\"{9}\">{10}</text></g>\n",
            s, num(item.x), num(item.y), num(item.x + 28.0), colour, dash_attribute, num(item.x + 14.0), marker(s),
            num(item.x + 34.0), num(item.y + 4.5), escape(series.name));
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
