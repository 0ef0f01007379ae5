// Chapter 13's benchmark on a shared machine: the methods timed interleaved, run by run,
// the minimum of the runs reported, the load average read, and a check that the runs
// agree before a figure draws them. Kept apart from benchmark.cpp so that the tests
// (tests/ch13_at_scale.cpp) can drive it with a synthetic clock, never with real time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "language_model.hpp"

namespace bench {

/// \brief One reading of the clocks: wall time and the processor time of the whole process, in seconds.
struct Stamp {
    double wall = 0.0;  ///< seconds of wall time
    double cpu = 0.0;   ///< seconds of processor time, every core together
};

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
/// \param clock reads the clocks (a Stamp); the tests pass a synthetic one
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
inline double minimum(const std::vector<double>& times)
{
    return times.empty() ? std::numeric_limits<double>::infinity() : *std::min_element(times.begin(), times.end());
}

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
inline Agreement agreement(const std::vector<double>& times, const std::vector<double>& reference, double limit)
{
    Agreement result;
    result.drawn = minimum(times) / minimum(reference);
    const std::size_t rounds = std::min(times.size(), reference.size());
    for (std::size_t r = 0; r < rounds; ++r) {
        const double ratio = times[r] / reference[r];
        ++result.rounds;
        if (ratio <= result.drawn * limit && ratio >= result.drawn / limit) {
            ++result.matching;
        }
    }
    return result;
}

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
inline Verdict check_ratios(std::size_t n, const std::vector<std::pair<std::string, Agreement>>& ratios, double limit)
{
    for (const auto& [name, ratio] : ratios) {
        if (ratio.matching < 2) {
            return {false, fmt::format("n = {} not drawn: {} is {:.3g} by the minima, but {} of {} rounds "
                                       "gave a ratio within {:.2f}× of it (2 needed)",
                                       n, name, ratio.drawn, ratio.matching, ratio.rounds, limit)};
        }
    }
    return {true, {}};
}

/// \brief Checks that a size was timed on the machine the other sizes saw. The methods'
///        ratios at one n can agree round after round while every round of that n ran on
///        shared cores (a build compiling beside it): the peak loop, timed in the same
///        rounds, shows it. Its speed at this n must be within the limit's factor of its
///        fastest in the whole run.
/// \param n the size, for the note
/// \param peak the peak loop's speed at this n (GFLOP/s, from its fastest round)
/// \param fastest its fastest speed at any n of the run
/// \param limit the factor used
inline Verdict check_peak(std::size_t n, double peak, double fastest, double limit)
{
    if (fastest > limit * peak) {
        return {false, fmt::format("n = {} not drawn: the peak loop ran at {:.0f} GFLOP/s there, {:.1f} times slower "
                                   "than its fastest in this run ({:.0f}), so other programs had the cores",
                                   n, peak, fastest / peak, fastest)};
    }
    return {true, {}};
}

/// \brief The load average over the last minute, as the system reports it in `path`
///        (/proc/loadavg), or a sentence saying that this system does not report it
///        (WebAssembly, or a system without that file).
inline std::string load_average_text(const std::string& path)
{
    std::ifstream file(path);
    std::string first;
    if (!(file >> first) || first.find_first_not_of("0123456789.") != std::string::npos) {
        return "not reported by this system";
    }
    return first;
}

/// \brief Text with &, < and > escaped for an SVG document.
inline std::string escape_xml(const std::string& text)
{
    std::string escaped;
    for (const char c : text) {
        escaped += c == '&' ? std::string("&amp;") : c == '<' ? std::string("&lt;") : c == '>' ? std::string("&gt;")
                                                                                              : std::string(1, c);
    }
    return escaped;
}

/// \brief Adds lines of text under a figure drawn by sa::line_plot_svg (or any SVG
///        document whose root element gives width="W" height="H" viewBox="0 0 W H"):
///        the document grows by one line's height per note.
/// \param svg the document
/// \param notes the lines, plain text (escaped here); one wider than the figure wraps at a space
/// \return the document with the notes at its foot
inline std::string with_notes(std::string svg, const std::vector<std::string>& notes)
{
    const auto attribute = [&svg](const std::string& name) {
        const std::string key = " " + name + "=\"";
        const std::size_t start = svg.find(key) + key.size();
        return std::pair<std::size_t, std::size_t>{start, svg.find('"', start)};
    };
    const auto [width_start, width_end] = attribute("width");
    const std::string width = svg.substr(width_start, width_end - width_start);
    const auto [height_start, height_end] = attribute("height");
    const double height = std::stod(svg.substr(height_start, height_end - height_start));
    // A note longer than the figure is wide wraps at a space (at 13 units a character is
    // at most 7.5 wide in the figures' fonts, for the letters and digits the notes use).
    const auto fits = static_cast<std::size_t>((std::stod(width) - 24.0) / 7.5);
    std::vector<std::string> lines;
    for (std::string note : notes) {
        while (note.size() > fits && note.rfind(' ', fits) != std::string::npos && note.rfind(' ', fits) > 0) {
            const std::size_t space = note.rfind(' ', fits);
            lines.push_back(note.substr(0, space));
            note = "    " + note.substr(space + 1);
        }
        lines.push_back(note);
    }
    const double line = 18.0;
    const std::string grown = fmt::format("{:.2f}", height + line * static_cast<double>(lines.size()) + 4.0);
    svg.replace(height_start, height_end - height_start, grown);
    const auto [view_start, view_end] = attribute("viewBox");
    svg.replace(view_start, view_end - view_start, "0 0 " + width + " " + grown);
    std::string text;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        text += fmt::format("<text class=\"note\" x=\"12.00\" y=\"{:.2f}\" xml:space=\"preserve\">{}</text>\n",
                            height + line * static_cast<double>(i + 1) - 4.0, escape_xml(lines[i]));
    }
    svg.insert(svg.rfind("</svg>"), text);
    return svg;
}

/// \brief An SVG document with a title alone, for a figure that has nothing it may draw;
///        with_notes() then says why.
inline std::string text_only_svg(const std::string& title)
{
    const std::string escaped = escape_xml(title);
    return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"760.00\" height=\"40.00\" "
                       "viewBox=\"0 0 760.00 40.00\" font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\" "
                       "font-size=\"13\" role=\"img\">\n<title>{0}</title>\n"
                       "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
                       "<text class=\"title\" x=\"12.00\" y=\"27.00\" font-size=\"15\" font-weight=\"bold\">{0}</text>\n"
                       "</svg>\n", escaped);
}

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
inline double training_step_operations(const sa::ModelShape& shape, std::size_t windows)
{
    const auto tokens = static_cast<double>(windows * shape.context);
    const auto d = static_cast<double>(shape.width);
    const auto window = static_cast<double>(shape.context);
    const double forward = static_cast<double>(shape.layers) * (8.0 * tokens * d * d + 4.0 * tokens * window * d) +
                           2.0 * tokens * d * static_cast<double>(shape.vocabulary);
    return 3.0 * forward;
}

}  // namespace bench
