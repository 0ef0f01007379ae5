#include "svg.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace sa {

namespace {

std::string escape(const std::string& text)
{
    std::string out;
    for (const char ch : text) {
        switch (ch) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += ch;
        }
    }
    return out;
}

}  // namespace

std::string heatmap_svg(const Heatmap& heatmap)
{
    const Matrix& values = heatmap.values;
    if (heatmap.row_labels.size() != values.rows() || heatmap.col_labels.size() != values.cols()) {
        throw ShapeError(fmt::format("heatmap_svg: {} row and {} column labels for a {} matrix",
                                     heatmap.row_labels.size(), heatmap.col_labels.size(), shape(values)));
    }
    const int cell = 64;
    const int left = 110;
    const int top = 70;
    const int width = left + cell * static_cast<int>(values.cols()) + 20;
    const int height = top + cell * static_cast<int>(values.rows()) + 20;
    double low = std::numeric_limits<double>::infinity();
    double high = -std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < values.rows(); ++r) {
        for (std::size_t c = 0; c < values.cols(); ++c) {
            if (std::isfinite(values(r, c))) {
                low = std::min(low, values(r, c));
                high = std::max(high, values(r, c));
            }
        }
    }
    std::string svg = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"sans-serif\" font-size=\"13\">\n<title>{2}</title>\n"
        "<text x=\"{3}\" y=\"20\" font-weight=\"bold\">{2}</text>\n",
        width, height, escape(heatmap.title), 10);
    for (std::size_t c = 0; c < values.cols(); ++c) {
        svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                           left + cell * static_cast<int>(c) + cell / 2, top - 8, escape(heatmap.col_labels[c]));
    }
    for (std::size_t r = 0; r < values.rows(); ++r) {
        const int y = top + cell * static_cast<int>(r);
        svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", left - 8, y + cell / 2 + 4,
                           escape(heatmap.row_labels[r]));
        for (std::size_t c = 0; c < values.cols(); ++c) {
            const double value = values(r, c);
            const int x = left + cell * static_cast<int>(c);
            const double t = (std::isfinite(value) && high > low) ? (value - low) / (high - low) : 0.0;
            const int shade = static_cast<int>(std::lround(235.0 - 180.0 * t));
            const std::string fill = std::isfinite(value) ? fmt::format("rgb({},{},255)", shade, shade) : "#cccccc";
            svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"white\"/>\n", x, y,
                               cell, cell, fill);
            svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{:.{}f}</text>\n", x + cell / 2,
                               y + cell / 2 + 4, value, heatmap.precision);
        }
    }
    svg += "</svg>\n";
    return svg;
}

std::string line_plot_svg(const LinePlot& plot)
{
    for (const auto& series : plot.series) {
        if (series.x.size() != series.y.size()) {
            throw std::invalid_argument(fmt::format("line_plot_svg: series \"{}\" has {} x values but {} y values",
                                                    series.name, series.x.size(), series.y.size()));
        }
    }
    std::string svg = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"480\" height=\"320\" viewBox=\"0 0 480 320\" "
        "font-family=\"sans-serif\" font-size=\"13\">\n<title>{0}</title>\n<text x=\"10\" y=\"20\">{0}</text>\n",
        escape(plot.title));
    svg += "</svg>\n";
    return svg;
}

void write_figure(const std::string& folder, const std::string& name, const std::string& svg)
{
    if (folder.empty()) {
        return;
    }
    const std::string path = folder + "/" + name;
    std::ofstream file(path, std::ios::binary);
    file << svg;
    if (!file) {
        throw std::runtime_error(fmt::format("cannot write the figure {}", path));
    }
}

}  // namespace sa
