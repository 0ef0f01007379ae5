#include "report.hpp"

namespace sa {

std::string show(const std::string& title, const Matrix& matrix, const std::vector<std::string>& row_labels,
                 const std::vector<std::string>& col_labels, int precision)
{
    return title + "\n" + format_table(matrix, row_labels, col_labels, precision) + "\n";
}

Report::Report(const Example& example) : figures_(example.figures), precision_(example.precision) {}

void Report::table(const std::string& title, const Matrix& matrix, const std::vector<std::string>& row_labels,
                   const std::vector<std::string>& col_labels, const std::string& note)
{
    const std::string after_shape = note.empty() ? "" : ", " + note;
    show(title + " (" + shape(matrix) + ")" + after_shape + ":", matrix, row_labels, col_labels);
}

void Report::show(const std::string& heading, const Matrix& matrix, const std::vector<std::string>& row_labels,
                  const std::vector<std::string>& col_labels)
{
    text_ += sa::show(heading, matrix, row_labels, col_labels, precision_);
}

void Report::text(const std::string& text)
{
    text_ += text;
}

void Report::heatmap(const std::string& file, Heatmap figure) const
{
    if (figures_.empty()) {
        return;  // no --figures: the figure is neither drawn nor checked
    }
    figure.precision = precision_;
    write_figure(figures_, file, heatmap_svg(figure));
}

void Report::line_plot(const std::string& file, const LinePlot& plot) const
{
    if (figures_.empty()) {
        return;
    }
    write_figure(figures_, file, line_plot_svg(plot));
}

const std::string& Report::str() const
{
    return text_;
}

}  // namespace sa
