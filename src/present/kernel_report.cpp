#include "kernel_report.hpp"

#include <algorithm>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "svg.hpp"

namespace sa::bench {

namespace {

constexpr double mebibyte = 1024.0 * 1024.0;

double operations(const Row& row, std::size_t dim)
{
    return 4.0 * static_cast<double>(row.n) * static_cast<double>(row.n) * static_cast<double>(dim);
}

const char* const methods[] = {"step by step", "OpenBLAS baseline", "tiled kernel"};

// The speed figure draws an n only where the rounds bear out its ratios (check_size); the
// figure's foot says how the times were taken, the load average, and which n it left out.
std::string speed_figure(const KernelRun& run)
{
    LinePlot speed{"Speed of attention at d = 64, measured on the machine that built this copy of the book", "n",
                   "GFLOP/s (4·n²·d operations per second)"};
    std::vector<std::string> notes{
        fmt::format("Each point: the fastest of {} runs, the methods interleaved run by run.", run.repetitions),
        fmt::format("Load average (1 minute): {} at the start of the run, {} at its end.", run.load_start,
                    load_average_text("/proc/loadavg"))};
    std::vector<std::size_t> drawn;
    for (const auto& [n, verdict] : run.checks) {
        if (verdict.drawn) {
            drawn.push_back(n);
        } else {
            notes.push_back(verdict.note);
        }
    }
    if (drawn.size() < run.checks.size()) {
        notes.push_back(fmt::format("An n is drawn only if 2 rounds or more match each of its ratios of minima within "
                                    "{:.2f}×, and its peak loop ran within {:.2f}× of its fastest.",
                                    spread_limit, spread_limit));
    }
    for (const std::string method : methods) {
        Series series{method};
        for (const Row& row : run.rows) {
            if (row.method == method && std::find(drawn.begin(), drawn.end(), row.n) != drawn.end()) {
                series.x.push_back(static_cast<double>(row.n));
                series.y.push_back(operations(row, run.dim) / row.seconds / 1e9);
            }
        }
        speed.series.push_back(series);
    }
    speed.log_x = true;
    speed.log_x_base = 2;
    if (drawn.empty()) {  // nothing to draw: the figure is its notes alone
        notes.insert(notes.begin(), "No size passed the check, so no line is drawn.");
        return with_notes(text_only_svg(speed.title), notes);
    }
    return with_notes(line_plot_svg(speed), notes);
}

}  // namespace

Peak share_of_peak(const Row& row, std::size_t dim)
{
    return {operations(row, dim) / row.seconds / 1e9 / row.peak.wall,
            operations(row, dim) / row.cpu_seconds / 1e9 / row.peak.cpu};
}

std::string kernel_header(const KernelRun& run)
{
    return fmt::format(
               "{} cores, load average (1 minute) at the start: {}\n", std::thread::hardware_concurrency(),
               run.load_start) +
           fmt::format(
               "Attention at d = {} in doubles: each time is the minimum of {} runs (the step-by-step reference\n"
               "above n = 1024: three), the usual estimator on a shared machine (other programs only ever\n"
               "add time). The methods and a register-resident multiply-add loop on every core (the machine's\n"
               "fp64 peak) run interleaved, one run of each in turn per round, so that a change of load falls\n"
               "on all of them alike. GFLOP/s counts 4·n²·d operations; \"peak\" divides it by the peak loop's;\n"
               "\"cpu\" divides operations per second of processor time, every core together, by the peak's,\n"
               "which other programs on a busy machine cannot skew. Memory is the peak the call allocates\n"
               "besides its inputs, output included (OpenBLAS's own fixed work buffers are not counted). The\n"
               "last column is the largest relative difference from the first row. After each n: whether each\n"
               "ratio of two minima (a method's time over the tiled kernel's) is matched within a factor of\n"
               "{:.2f} by at least two rounds' own ratios; the figure draws only the n where it is and where\n"
               "the peak loop also ran within {:.2f}× of its fastest in the run (a note after the last n says\n"
               "which fell short). Freed memory stays with the program, so a run after the first does not\n"
               "wait for fresh pages.\n\n",
               run.dim, run.repetitions, spread_limit, spread_limit) +
           fmt::format("{:>6}  {:<20} {:>11} {:>9} {:>7} {:>7} {:>12}   {}\n", "n", "method", "time (ms)", "GFLOP/s",
                       "peak", "cpu", "memory (MiB)", "rel. diff");
}

std::string row_text(const Row& row, std::size_t dim, const Matrix& reference)
{
    const std::string agreement =
        reference.empty() ? "(reference)" : fmt::format("{:.1e}", largest_relative_difference(row.result, reference));
    const Peak share = share_of_peak(row, dim);
    return fmt::format("{:>6}  {:<20} {:>11.2f} {:>9.2f} {:>7.3f} {:>7.3f} {:>12.2f}   {}\n", row.n, row.method,
                       row.seconds * 1e3, operations(row, dim) / row.seconds / 1e9, share.wall, share.cpu,
                       row.bytes / mebibyte, agreement);
}

const Row* find_row(const std::vector<Row>& rows, std::size_t n, const std::string& method)
{
    const auto found = std::find_if(rows.begin(), rows.end(),
                                    [&](const Row& row) { return row.n == n && row.method == method; });
    return found == rows.end() ? nullptr : &*found;
}

Verdict check_size(const std::vector<Row>& rows)
{
    const Row& tiled = rows.back();  // the tiled kernel runs last in every round
    std::vector<std::pair<std::string, Agreement>> ratios;
    for (std::size_t r = 1; r + 1 < rows.size(); ++r) {
        ratios.emplace_back(rows[r].method + " / tiled kernel", agreement(rows[r].rounds, tiled.rounds, spread_limit));
    }
    return check_ratios(rows.front().n, ratios, spread_limit);
}

std::string size_check_text(const std::vector<Row>& rows, const Verdict& verdict)
{
    const Row& peak = rows.front();
    return fmt::format("{:>6}  {:<20} {:>11.2f} {:>9.2f}   (the fastest run of the peak loop)\n", peak.n, peak.method,
                       minimum(peak.rounds) * 1e3, peak.peak.wall) +
           fmt::format("{:>6}  {}\n", "",
                       verdict.drawn ? fmt::format("each ratio of minima matched within a factor of {:.2f} by 2 "
                                                   "rounds or more", spread_limit)
                                     : verdict.note);
}

std::string check_peaks(KernelRun& run)
{
    double fastest = 0.0;
    for (const Row& row : run.rows) {
        fastest = std::max(fastest, row.peak.wall);
    }
    std::string text;
    for (auto& [n, verdict] : run.checks) {
        const Row* peak = find_row(run.rows, n, "fp64 peak loop");
        if (verdict.drawn && peak != nullptr) {
            verdict = check_peak(n, peak->peak.wall, fastest, spread_limit);
            if (!verdict.drawn) {
                text += fmt::format("{:>6}  {}\n", "", verdict.note);
            }
        }
    }
    return text;
}

std::string ratio_text(const std::vector<Row>& rows)
{
    for (const std::size_t n : {std::size_t{4096}, std::size_t{2048}, std::size_t{1024}, std::size_t{512}}) {
        const Row* baseline = find_row(rows, n, "OpenBLAS baseline");
        const Row* tiled = find_row(rows, n, "tiled kernel");
        if (baseline != nullptr && tiled != nullptr) {
            return fmt::format("\nAt n = {}: the tiled kernel takes {:.3f} of the baseline's time ({:.2f} times as "
                               "fast) and {:.4f} of its memory.\n", n, tiled->seconds / baseline->seconds,
                               baseline->seconds / tiled->seconds, tiled->bytes / baseline->bytes);
        }
    }
    return "";
}

std::string kernel_goals(const KernelRun& run)
{
    std::string text = "\nGoals, as ratios measured in this run:\n";
    for (const std::size_t n : {std::size_t{4096}, std::size_t{8192}}) {
        const Row* tiled = find_row(run.rows, n, "tiled kernel");
        const Row* baseline = find_row(run.rows, n, "OpenBLAS baseline");
        if (tiled != nullptr) {
            const Peak share = share_of_peak(*tiled, run.dim);
            text += fmt::format("  n = {}: the tiled kernel runs at {:.3f} of the fp64 peak by wall time, {:.3f} by "
                                "processor time (goal: at least 0.667){}\n", n, share.wall, share.cpu,
                                baseline == nullptr ? std::string()
                                                    : fmt::format("; the baseline at {:.3f} and {:.3f}",
                                                                  share_of_peak(*baseline, run.dim).wall,
                                                                  share_of_peak(*baseline, run.dim).cpu));
        }
    }
    if (find_row(run.rows, 4096, "tiled kernel") == nullptr && find_row(run.rows, 8192, "tiled kernel") == nullptr) {
        text += "  none at these sizes: the goal, at least 0.667 of the fp64 peak, is set at n = 4096 and 8192\n";
    }
    return text;
}

void write_kernel_figures(const KernelRun& run, const std::string& folder)
{
    LinePlot memory{"Memory of one call, measured on the machine that built this copy of the book", "n",
                    "peak extra memory (MiB)"};
    for (const std::string method : methods) {
        Series series{method};
        for (const Row& row : run.rows) {
            if (row.method == method) {
                series.x.push_back(static_cast<double>(row.n));
                series.y.push_back(row.bytes / mebibyte);
            }
        }
        memory.series.push_back(series);
    }
    memory.log_x = true;
    memory.log_x_base = 2;
    memory.log_y = true;
    std::ofstream(folder + "/measured-speed.svg") << speed_figure(run);
    std::ofstream(folder + "/measured-memory.svg") << line_plot_svg(memory);
}

}  // namespace sa::bench
