/// \file report.hpp
/// \brief A chapter program's output: titled tables, free text and figures.
#pragma once

#include <string>
#include <vector>

#include "example.hpp"
#include "matrix.hpp"
#include "svg.hpp"

namespace sa {

/// \brief Prints a titled matrix the way the chapters show it.
/// \param title the heading line, e.g. "Q = E·W_Q (3×2)"
/// \param matrix the matrix
/// \param row_labels labels of the rows (token names)
/// \param col_labels labels of the columns
/// \param precision decimals
/// \return the heading, the table and a blank line
[[nodiscard]] std::string show(const std::string& title, const Matrix& matrix,
                               const std::vector<std::string>& row_labels,
                               const std::vector<std::string>& col_labels, int precision);

/// \brief A chapter program's output, built up piece by piece: titled tables, free
///        text and figures, all at the example's precision.
///
/// A chapter program computes each step itself and hands the results to a Report
/// only to be shown, so the steps stay visible in the program. Figures are set by
/// field name; the axes default to "query (asking)" and "key (asked about)":
///
/// \code{.cpp}
/// sa::Report report(example);
/// report.table("Scores S = Q·Kᵀ", scores, tokens, tokens);  // heading "Scores S = Q·Kᵀ (3×3):"
/// report.heatmap("scores.svg", {.title = "Scores S = Q·Kᵀ", .values = scores,
///                               .row_labels = tokens, .col_labels = tokens, .scale_label = "score"});
/// return report.str();
/// \endcode
class Report {
public:
    /// \brief Starts an empty report for one run of a chapter program.
    /// \param example the parsed example; its precision and figures folder are kept
    explicit Report(const Example& example);

    /// \brief Appends a matrix under the heading "title (n×m):", or
    ///        "title (n×m), note:" when a note is given.
    /// \param title what the matrix is, e.g. "Queries Q = E·W_Q"
    /// \param matrix the matrix; its shape is added to the heading
    /// \param row_labels labels of the rows (token names)
    /// \param col_labels labels of the columns
    /// \param note optional words after the shape, e.g. "one row per token"
    void table(const std::string& title, const Matrix& matrix, const std::vector<std::string>& row_labels,
               const std::vector<std::string>& col_labels, const std::string& note = "");

    /// \brief Appends a matrix under a heading used exactly as given: the same text as sa::show.
    /// \param heading the whole heading line, including any shape and the final colon
    /// \param matrix the matrix
    /// \param row_labels labels of the rows
    /// \param col_labels labels of the columns
    void show(const std::string& heading, const Matrix& matrix, const std::vector<std::string>& row_labels,
              const std::vector<std::string>& col_labels);

    /// \brief Appends text as it is; include the line breaks.
    /// \param text the text, e.g. "d_k = 2\n\n"
    void text(const std::string& text);

    /// \brief Writes a heatmap into the figures folder, when the run has one
    ///        (`--figures DIR`); without one nothing is drawn or written.
    /// \param file the file name in the figures folder, e.g. "scores.svg"
    /// \param figure the matrix, its labels and axes; its precision is replaced by the example's
    /// \throws ShapeError if the matrix is empty or the labels do not match it
    /// \throws std::runtime_error if the file cannot be written
    void heatmap(const std::string& file, Heatmap figure) const;

    /// \brief Writes a line plot into the figures folder, when the run has one.
    /// \param file the file name in the figures folder, e.g. "variance.svg"
    /// \param plot the series and the axis settings
    /// \throws std::invalid_argument if the plot cannot be drawn (see line_plot_svg())
    /// \throws std::runtime_error if the file cannot be written
    void line_plot(const std::string& file, const LinePlot& plot) const;

    /// \brief The text appended so far.
    /// \return every table and line, in order
    [[nodiscard]] const std::string& str() const;

private:
    std::string text_;
    std::string figures_;
    int precision_;
};

}  // namespace sa
