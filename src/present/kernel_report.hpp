/// \file kernel_report.hpp
/// \brief What ch13-benchmark-kernels prints and draws: its table of the methods at each n,
///        the check of each size's rounds, the ratios and goals, and the two measured figures.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "bench.hpp"
#include "machine.hpp"
#include "matrix.hpp"

namespace sa::bench {

/// \brief The factor by which a round may differ from the minima and still bear them out, and
///        by which a size's peak loop may fall short of its fastest (check_ratios(), check_peak()).
inline constexpr double spread_limit = 1.5;

/// \brief One method at one n: the minima of its interleaved runs and what its last run left.
struct Row {
    std::size_t n = 0;               ///< the size: n queries, n keys and values
    std::string method = {};         ///< e.g. "tiled kernel", or "fp64 peak loop" for the peak's row
    double seconds = 0.0;            ///< the minimum of the runs' wall times
    double cpu_seconds = 0.0;        ///< the minimum of the runs' processor times, every core together
    double bytes = 0.0;              ///< the peak extra allocation of one call
    Matrix result = {};              ///< the outputs of its last run
    Peak peak = {};                  ///< the machine's fp64 peak from the peak loop's runs at this n
    std::vector<double> rounds = {};  ///< every run's wall time, in round order
};

/// \brief A whole run of the kernels: every row, and per n whether the figure draws it.
struct KernelRun {
    std::vector<Row> rows = {};                                   ///< the rows of every n, in order
    std::vector<std::pair<std::size_t, Verdict>> checks = {};  ///< per n: does the figure draw it
    std::string load_start = {};                               ///< the load average when the run began
    std::size_t dim = 64;                                      ///< d, of queries, keys and values
    int repetitions = 5;                                       ///< the runs of each method
};

/// \brief A row's share of the peak: its 4·n²·d operations per second over the peak's, by
///        wall time and by processor time (every core together).
[[nodiscard]] Peak share_of_peak(const Row& row, std::size_t dim);

/// \brief The lines above the table: the cores, the load average, how the times were
///        taken, and the columns' heads.
/// \param run the run so far: its d, its repetitions and its load average at the start
[[nodiscard]] std::string kernel_header(const KernelRun& run);

/// \brief A method's line of the table: n, method, time, GFLOP/s, its shares of the peak,
///        memory, and its largest relative difference from \p reference.
/// \param row the method at one n
/// \param dim d
/// \param reference the first method's outputs at this n; empty for the first method itself
[[nodiscard]] std::string row_text(const Row& row, std::size_t dim, const Matrix& reference);

/// \brief The row of \p method at \p n, or null.
[[nodiscard]] const Row* find_row(const std::vector<Row>& rows, std::size_t n, const std::string& method);

/// \brief The figure's ratios at one n (each method's time over the tiled kernel's) checked
///        against the rounds with check_ratios().
/// \param rows one n's rows: the peak loop's first, the tiled kernel's last
[[nodiscard]] Verdict check_size(const std::vector<Row>& rows);

/// \brief The lines after one n's rows: the peak loop's fastest run, and the check's verdict.
/// \param rows one n's rows, the peak loop's first
/// \param verdict what check_size() said
[[nodiscard]] std::string size_check_text(const std::vector<Row>& rows, const Verdict& verdict);

/// \brief After every n: a size whose ratios agreed but whose peak loop ran well below its
///        fastest in the run (check_peak()) is left out of the figure too.
/// \param run the whole run; its checks are updated
/// \return the lines that say which n was left out
[[nodiscard]] std::string check_peaks(KernelRun& run);

/// \brief The tiled kernel against the baseline at the largest n both ran, up to 4096: the
///        share of its time and of its memory; empty when they never ran together.
[[nodiscard]] std::string ratio_text(const std::vector<Row>& rows);

/// \brief The kernels' goal, as ratios measured in this run: the tiled kernel's share of the
///        fp64 peak at n = 4096 and 8192 (goal: at least 0.667), next to the baseline's; a line
///        that says so when neither size ran.
[[nodiscard]] std::string kernel_goals(const KernelRun& run);

/// \brief Writes measured-speed.svg and measured-memory.svg into \p folder: the speed of each
///        method against n, only at the n the rounds bear out, with notes on how the times were
///        taken, the load average and each n left out; the peak memory of one call.
/// \param run the whole run, after check_peaks()
/// \param folder an existing folder
void write_kernel_figures(const KernelRun& run, const std::string& folder);

}  // namespace sa::bench
