/// \file svg.hpp
/// \brief The book's figures: heatmaps of matrices and line plots, written as SVG text.
///
/// The chapter programs write their figures with these functions during the same
/// run whose output the chapter prints, so a figure can never disagree with the text.
/// Every document is standalone SVG 1.1 (with `xmlns`, `width`, `height` and
/// `viewBox`), starts with a `<title>`, escapes all text, and is byte-for-byte the
/// same on every machine: numbers are written with a fixed number of decimals.
#pragma once

#include <string>
#include <vector>

#include "matrix.hpp"

namespace sa {

/// \brief A matrix to draw as a heatmap, with its labels.
///
/// Finite values are coloured on a light-to-dark blue scale from the smallest to
/// the largest finite value, and the colour scale beside the grid shows both ends.
/// \f$ -\infty \f$ (masked) cells are hatched grey and marked "−∞", \f$ +\infty \f$
/// cells likewise with "+∞", and NaN cells are white with a dashed red border and
/// "NaN", so that none of them can pass for a number.
///
/// A heatmap of more than 16 rows or columns (a character model's attention over a
/// window) is drawn compact: cells of 16 pixels with no number in them, each cell's
/// value (and its row and column) as its tooltip, and every k-th column labelled, k the
/// least that gives each label room; the colour scale still gives both ends.
///
/// Chapter programs draw one through Report::heatmap, which sets the fields by name.
struct Heatmap {
    std::string title = {};                    ///< shown above the grid and as the SVG's `<title>`
    Matrix values = {};                        ///< the numbers; one cell per entry
    std::vector<std::string> row_labels = {};  ///< one per row, shown on the left
    std::vector<std::string> col_labels = {};  ///< one per column, shown on top
    std::string row_axis = "query (asking)";     ///< what the rows are
    std::string col_axis = "key (asked about)";  ///< what the columns are
    int precision = 3;                    ///< decimals written in each cell and on the colour scale (0 to 10)
    std::string scale_label = {};              ///< optional name of the coloured quantity, shown above the colour scale
};

/// \brief One line of a line plot: a name and its points.
struct Series {
    std::string name = {};        ///< shown in the legend
    std::vector<double> x = {};   ///< x coordinates
    std::vector<double> y = {};   ///< y coordinates, one per x
};

/// \brief A line plot of one or more series.
///
/// Each series is drawn as a line through its points, in the order given, with a
/// marker at every point; series differ in colour, marker shape and dash pattern.
/// A logarithmic axis has its ticks at powers of ten, or at powers of two when
/// every value on it is a power of two (or when its base is set to 2).
struct LinePlot {
    std::string title = {};         ///< shown above the plot and as the SVG's `<title>`
    std::string x_label = {};       ///< the x axis
    std::string y_label = {};       ///< the y axis
    std::vector<Series> series = {};  ///< the lines
    bool log_x = false;        ///< logarithmic x axis (all x must be positive)
    bool log_y = false;        ///< logarithmic y axis (all y must be positive)
    int log_x_base = 0;        ///< tick base of a logarithmic x axis: 2, 10, or 0 to choose automatically
    int log_y_base = 0;        ///< tick base of a logarithmic y axis: 2, 10, or 0 to choose automatically
};

/// \brief Draws a heatmap: a labelled grid, each cell coloured by its value and
///        showing it, with a colour scale. \f$ -\infty \f$ cells are drawn as masked.
///
/// Row labels run down the left with the row axis title, column labels along the
/// top with the column axis title; each cell shows its value with
/// Heatmap::precision decimals, exactly as the chapter programs print it (white
/// text on dark cells), or, in a compact heatmap (more than 16 rows or columns),
/// holds it as its tooltip instead. The colour scale gives the smallest and the largest finite
/// value; swatches below it explain masked and NaN cells when there are any.
/// \param heatmap the matrix and its labels
/// \return a complete SVG document
/// \throws ShapeError if the matrix is empty or the labels do not match it
/// \throws std::invalid_argument if the precision is outside 0 to 10
[[nodiscard]] std::string heatmap_svg(const Heatmap& heatmap);

/// \brief Draws a line plot with axes, ticks, tick labels, axis labels, a legend
///        and a marker at every point.
/// \param plot the series and the axis settings
/// \return a complete SVG document
/// \throws std::invalid_argument if the plot has no points, a series has different
///         numbers of x and y, a value is NaN or infinite, a logarithmic axis gets a
///         value that is not positive, or a logarithmic base is not 0, 2 or 10; the
///         message names the series and the point
[[nodiscard]] std::string line_plot_svg(const LinePlot& plot);

/// \brief Writes an SVG document to folder/name; does nothing when folder is empty.
/// \param folder the figures folder (Example::figures), or empty for none
/// \param name the file name, e.g. "scores.svg"
/// \param svg the document
/// \throws std::invalid_argument if the name is empty
/// \throws std::runtime_error if the file cannot be written
void write_figure(const std::string& folder, const std::string& name, const std::string& svg);

}  // namespace sa
