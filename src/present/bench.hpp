/// \file bench.hpp
/// \brief Chapter 13's benchmarks on a shared machine: the methods timed interleaved, run
///        by run, the minimum of the runs reported, the load average read, and a check that
///        the runs agree before a figure draws them; the options and the sizes the three
///        benchmark programs share. The tests (tests/ch13_at_scale.cpp) drive the timing
///        with a scripted clock, never with real time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "language_model.hpp"
#include "matrix.hpp"

namespace sa::bench {

/// \brief One reading of the clocks: wall time and the processor time of the whole process, in seconds.
struct Stamp {
    double wall = 0.0;  ///< seconds of wall time
    double cpu = 0.0;   ///< seconds of processor time, every core together
};

/// \brief The clocks now: the steady clock, and the processor time this process has used so
///        far, all its threads together. On a busy machine a run's wall time includes the time
///        other programs held the cores; its processor time does not.
[[nodiscard]] Stamp now();

/// \brief One method's runs, in the order of the rounds it ran in.
struct Runs {
    std::vector<double> wall = {};  ///< seconds of wall time per run
    std::vector<double> cpu = {};   ///< seconds of processor time per run
};

/// \brief Times the methods interleaved, run by run: round r runs every method that has
///        runs left, once each, in the given order, so that a change in the machine's load
///        falls on every method alike instead of on whichever ran at that moment.
/// \param methods the calls to time
/// \param runs how many runs each method gets (method i runs in rounds 0 to runs[i] - 1)
/// \param clock reads the clocks (a Stamp, as now() does); the tests pass a synthetic one
/// \param between called after every run, outside its timing (e.g. to let other threads idle)
/// \return each method's runs, in round order
template <typename Clock>
std::vector<Runs> time_interleaved(const std::vector<std::function<void()>>& methods, const std::vector<int>& runs,
                                   Clock&& clock, const std::function<void()>& between = {})
{
    std::vector<Runs> timed(methods.size());
    const int rounds = runs.empty() ? 0 : *std::max_element(runs.begin(), runs.end());
    for (int round = 0; round < rounds; ++round) {
        for (std::size_t m = 0; m < methods.size(); ++m) {
            if (round >= runs[m]) {
                continue;
            }
            const Stamp start = clock();
            methods[m]();
            const Stamp stop = clock();
            timed[m].wall.push_back(stop.wall - start.wall);
            timed[m].cpu.push_back(stop.cpu - start.cpu);
            if (between) {
                between();
            }
        }
    }
    return timed;
}

/// \brief The smallest of the times: the usual estimator on a shared machine, since other
///        programs can only ever add time to a run. Infinity for no runs.
[[nodiscard]] double minimum(const std::vector<double>& times);

/// \brief The median of the times (of an even number, the upper of the middle two).
/// \param times at least one
[[nodiscard]] double median(std::vector<double> times);

/// \brief How well the rounds bear out the ratio of two methods' times that a figure draws.
struct Agreement {
    int rounds = 0;       ///< the rounds both methods ran in
    int matching = 0;     ///< the rounds whose own ratio is within the limit's factor of the drawn one
    double drawn = 0.0;   ///< the ratio the figure draws: the minimum of one over the minimum of the other
};

/// \brief Compares the ratio a figure draws, minimum(times) / minimum(reference), with
///        the ratio times[r] / reference[r] of every round both ran in.
/// \param times one method's runs, in round order
/// \param reference the other's, in the same rounds
/// \param limit the largest factor, either way, by which a round's ratio may differ from the drawn one
[[nodiscard]] Agreement agreement(const std::vector<double>& times, const std::vector<double>& reference,
                                  double limit);

/// \brief The verdict on one size of the figure.
struct Verdict {
    bool drawn = false;     ///< true when every drawn ratio is borne out by at least two rounds
    std::string note = {};  ///< why not, for the figure; empty when drawn
};

/// \brief Checks a size's ratios before a figure draws it: each ratio the figure would
///        draw (of the minima) must be matched, within the limit's factor, by the ratio
///        of at least two rounds of interleaved runs. One lucky round cannot make a point.
/// \param n the size, for the note
/// \param ratios each ratio's name and its agreement with the rounds (computed with `limit`)
/// \param limit the factor used, for the note
[[nodiscard]] Verdict check_ratios(std::size_t n, const std::vector<std::pair<std::string, Agreement>>& ratios,
                                   double limit);

/// \brief Checks that a size was timed on the machine the other sizes saw. The methods'
///        ratios at one n can agree round after round while every round of that n ran on
///        shared cores (a build compiling beside it): the peak loop, timed in the same
///        rounds, shows it. Its speed at this n must be within the limit's factor of its
///        fastest in the whole run.
/// \param n the size, for the note
/// \param peak the peak loop's speed at this n (GFLOP/s, from its fastest round)
/// \param fastest its fastest speed at any n of the run
/// \param limit the factor used
[[nodiscard]] Verdict check_peak(std::size_t n, double peak, double fastest, double limit);

/// \brief The load average over the last minute, as the system reports it in `path`
///        (/proc/loadavg), or a sentence saying that this system does not report it
///        (WebAssembly, or a system without that file).
[[nodiscard]] std::string load_average_text(const std::string& path);

/// \brief Adds lines of text under a figure drawn by sa::line_plot_svg (or any SVG
///        document whose root element gives width="W" height="H" viewBox="0 0 W H"):
///        the document grows by one line's height per note.
/// \param svg the document
/// \param notes the lines, plain text (escaped here); one wider than the figure wraps at a space
/// \return the document with the notes at its foot
[[nodiscard]] std::string with_notes(std::string svg, const std::vector<std::string>& notes);

/// \brief An SVG document with a title alone, for a figure that has nothing it may draw;
///        with_notes() then says why.
[[nodiscard]] std::string text_only_svg(const std::string& title);

/// \brief The operations of one training step's matrix products, forward and backward, for
///        a batch of `windows` windows of shape.context tokens (N of them in all).
///
/// Counting 2 operations per multiply-add, a product of an m×k by a k×n matrix takes 2·m·k·n.
/// Forward, per layer: X W_Q, X W_K, X W_V and C W_O, each 2·N·d·d; per window and head the
/// scores Q_i K_iᵀ and the mix A_i V_i, each 2·W·W·(d/h), so over the N/W windows and h heads
/// 2·N·W·d each (the whole W×W square, as written, though the mask zeroes half of it). Then
/// the logits S W_U, 2·N·d·V. Backward, every product Y = A·B turns into two of the same size,
/// dA = dY·Bᵀ and dB = Aᵀ·dY, so twice the forward count. In all:
/// 3·(layers·(8·N·d² + 4·N·W·d) + 2·N·d·V). The embedding is a lookup, the softmax and Adam
/// are not products: none is counted.
[[nodiscard]] double training_step_operations(const ModelShape& shape, std::size_t windows);

/// \brief A size in bytes for a sentence: "512 KiB" below a mebibyte, "2048 MiB" from one
///        on, never "0 MiB".
[[nodiscard]] std::string bytes_text(double bytes);

/// \brief How far a fast method's outputs are from the reference's:
///        \f$ \max |R - R_{ref}| / \max |R_{ref}| \f$, relative to the size of the outputs, so
///        that an output near 0 does not blow it up.
/// \param result the method's outputs
/// \param reference the reference's, of the same shape
[[nodiscard]] double largest_relative_difference(const Matrix& result, const Matrix& reference);

/// \brief How long a benchmark runs: its full run, the short run of the book's figures
///        (`--quick`), or a few seconds at small sizes (`--smoke`, which CTest runs).
enum class RunLength { full, quick, smoke };

/// \brief The chapter-program description of a benchmark: \p name and \p summary, the
///        common options that draw an example refused (a benchmark draws its own random
///        numbers at d = 64 and prints times), and the options `--smoke` and `--quick`
///        ahead of \p own.
/// \param name the program, e.g. "ch13-benchmark-decoding"
/// \param summary its one line for `--help`
/// \param own its further options
/// \param draws_figures whether it reads `--figures DIR`; refused with a reason when not
[[nodiscard]] ProgramInfo benchmark_program(const std::string& name, const std::string& summary,
                                            std::vector<ProgramOption> own, bool draws_figures);

/// \brief Reads `--smoke` and `--quick` (see benchmark_program()).
/// \throws UsageError when both are given
[[nodiscard]] RunLength run_length(const Example& example);

}  // namespace sa::bench
