/// \file cli.hpp
/// \brief The command line shared by every chapter program: the reader's own numbers.
///
/// Matrices are written row by row, rows separated by `;` and entries by `,`:
/// `"2,0;1,2;2,0"` is the 3×2 matrix with rows [2, 0], [1, 2] and [2, 0].
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "matrix.hpp"

namespace sa {

/// \brief Thrown for a malformed command line; the message is one line that names
///        the option, the problem and the expected format or shape.
class UsageError : public std::invalid_argument {
public:
    /// \brief Builds the error from its one-line message.
    /// \param message the option, the problem and what was expected
    explicit UsageError(const std::string& message);
};

/// \brief Everything a chapter program works on: tokens, embeddings, the three
///        projection matrices and the display options.
struct Example {
    std::vector<std::string> tokens;  ///< one name per embedding row
    Matrix embeddings;                ///< E, n×d_model
    Matrix w_query;                   ///< W_Q, d_model×d_k
    Matrix w_key;                     ///< W_K, d_model×d_k
    Matrix w_value;                   ///< W_V, d_model×d_v
    bool causal = false;              ///< apply the causal mask
    int precision = 3;                ///< decimals printed
    long seed = 2017;                 ///< seed of the random experiments
    std::string figures;              ///< folder to write SVG figures into; empty for none
};

/// \brief The worked example "Mouse eats cheese": Mouse [2,0], Eats [1,2], Cheese [2,0];
///        W_Q swaps the two features, W_K and W_V are the identity.
/// \return the example, unmasked, printed at three decimals
[[nodiscard]] Example mouse_eats_cheese();

/// \brief Parses one matrix written as `"2,0;1,2"`.
/// \param option the option name used in error messages, e.g. "--wq"
/// \param text the matrix text
/// \return the matrix
/// \throws UsageError naming the row and the entry that is not a number, a ragged row or an empty matrix
[[nodiscard]] Matrix parse_matrix(std::string_view option, std::string_view text);

/// \brief What a chapter program is called and which options it reads beyond the common ones.
struct ProgramInfo {
    std::string name;     ///< the program's name, e.g. "ch02-scores"
    std::string summary;  ///< one line saying what it shows
    Example defaults;     ///< the example used when no option changes it
    bool uses_seed = false;  ///< accept --seed N
    /// Options of the common set this program does not read, each with the reason
    /// given to a reader who passes it, e.g. {"--causal", "the scores come before any mask"}.
    std::vector<std::pair<std::string, std::string>> unused_options = {};
};

/// \brief Applies the command-line options to the program's default example.
///
/// Options: `--tokens A,B,C`, `--embeddings M`, `--wq M`, `--wk M`, `--wv M`,
/// `--causal`, `--precision N`, `--seed N` (where the program uses one),
/// `--figures DIR` and `--help`.
/// The result is checked as a whole: W_Q, W_K and W_V need one row per embedding
/// feature, W_Q and W_K the same number of columns (d_k), and the token names one
/// per embedding row.
///
/// \param info the program's name, summary and defaults
/// \param args the arguments after the program name
/// \return the example to run
/// \throws UsageError for an unknown option, a missing value, a malformed matrix or shapes that do not fit
[[nodiscard]] Example parse_arguments(const ProgramInfo& info, const std::vector<std::string>& args);

/// \brief The text printed by `--help`.
/// \param info the program's name, summary and defaults
/// \return the usage text
[[nodiscard]] std::string usage(const ProgramInfo& info);

/// \brief Runs a chapter program: parses the options, then prints what \p body returns.
///
/// Nothing reaches stdout unless the whole run succeeds. A malformed command line,
/// or an error thrown by the library, prints one line on stderr and returns 2.
///
/// \param info the program's name, summary and defaults
/// \param argc argument count from main
/// \param argv arguments from main
/// \param body builds the program's complete output from the parsed example
/// \return the exit status: 0 on success, 2 on bad input
int run_program(const ProgramInfo& info, int argc, char** argv,
                const std::function<std::string(const Example&)>& body);

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
///        text and heatmap figures, all at the example's precision.
///
/// A chapter program computes each step itself and hands the results to a Report
/// only to be shown, so the steps stay visible in the program:
///
/// \code{.cpp}
/// sa::Report report(example);
/// report.table("Scores S = Q·Kᵀ", scores, tokens, tokens);  // heading "Scores S = Q·Kᵀ (3×3):"
/// report.heatmap("scores.svg", "Scores S = Q·Kᵀ", scores, tokens, tokens,
///                "query (asking)", "key (asked about)", "score");
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

    /// \brief Writes a matrix as a heatmap figure into the figures folder, when the
    ///        run has one (`--figures DIR`); without one nothing is drawn or written.
    /// \param file the file name in the figures folder, e.g. "scores.svg"
    /// \param title shown above the grid
    /// \param matrix the values to draw
    /// \param row_labels labels of the rows
    /// \param col_labels labels of the columns
    /// \param row_axis what the rows are, e.g. "query (asking)"
    /// \param col_axis what the columns are, e.g. "key (asked about)"
    /// \param scale_label name of the coloured quantity, e.g. "weight"; empty for none
    /// \throws ShapeError if the matrix is empty or the labels do not match it
    /// \throws std::invalid_argument if the precision is outside 0 to 10
    /// \throws std::runtime_error if the file cannot be written
    void heatmap(const std::string& file, const std::string& title, const Matrix& matrix,
                 const std::vector<std::string>& row_labels, const std::vector<std::string>& col_labels,
                 const std::string& row_axis, const std::string& col_axis, const std::string& scale_label = "") const;

    /// \brief The text appended so far.
    /// \return every table and line, in order
    [[nodiscard]] const std::string& str() const;

private:
    std::string text_;
    std::string figures_;
    int precision_;
};

}  // namespace sa
