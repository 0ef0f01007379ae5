/// \file svg.hpp
/// \brief The book's figures: heatmaps of matrices and line plots, written as SVG text.
///
/// The chapter programs write their figures with these functions during the same
/// run whose output the chapter prints, so a figure can never disagree with the text.
#pragma once

#include <string>
#include <vector>

#include "matrix.hpp"

namespace sa {

/// \brief A matrix to draw as a heatmap, with its labels.
struct Heatmap {
    std::string title;                    ///< shown above the grid
    Matrix values;                        ///< the numbers; one cell per entry
    std::vector<std::string> row_labels;  ///< one per row, shown on the left
    std::vector<std::string> col_labels;  ///< one per column, shown on top
    std::string row_axis = "query";       ///< what the rows are, e.g. "query (asking)"
    std::string col_axis = "key";         ///< what the columns are, e.g. "key (asked about)"
    int precision = 3;                    ///< decimals written in each cell
};

/// \brief One line of a line plot: a name and its points.
struct Series {
    std::string name;        ///< shown in the legend
    std::vector<double> x;   ///< x coordinates
    std::vector<double> y;   ///< y coordinates, one per x
};

/// \brief A line plot of one or more series.
struct LinePlot {
    std::string title;         ///< shown above the plot
    std::string x_label;       ///< the x axis
    std::string y_label;       ///< the y axis
    std::vector<Series> series;  ///< the lines
    bool log_x = false;        ///< logarithmic x axis (all x must be positive)
    bool log_y = false;        ///< logarithmic y axis (all y must be positive)
};

/// \brief Draws a heatmap: a labelled grid, each cell coloured by its value and
///        showing it, with a colour scale. \f$ -\infty \f$ cells are drawn as masked.
/// \param heatmap the matrix and its labels
/// \return a complete SVG document
/// \throws ShapeError if the labels do not match the matrix
[[nodiscard]] std::string heatmap_svg(const Heatmap& heatmap);

/// \brief Draws a line plot with axes, ticks and a legend.
/// \param plot the series and the axis settings
/// \return a complete SVG document
/// \throws std::invalid_argument if a series has different numbers of x and y, or a
///         logarithmic axis gets a value that is not positive
[[nodiscard]] std::string line_plot_svg(const LinePlot& plot);

/// \brief Writes an SVG document to folder/name; does nothing when folder is empty.
/// \param folder the figures folder (Example::figures), or empty for none
/// \param name the file name, e.g. "scores.svg"
/// \param svg the document
/// \throws std::runtime_error if the file cannot be written
void write_figure(const std::string& folder, const std::string& name, const std::string& svg);

}  // namespace sa
