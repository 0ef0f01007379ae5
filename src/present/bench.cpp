#include "bench.hpp"

#include <chrono>
#include <ctime>
#include <fstream>
#include <limits>

#include <fmt/format.h>

namespace sa::bench {

namespace {

// Text with &, < and > escaped for an SVG document.
std::string escape_xml(const std::string& text)
{
    std::string escaped;
    for (const char c : text) {
        escaped += c == '&' ? std::string("&amp;") : c == '<' ? std::string("&lt;") : c == '>' ? std::string("&gt;")
                                                                                              : std::string(1, c);
    }
    return escaped;
}

// A note longer than the figure is wide wraps at a space (at 13 units a character is at most
// 7.5 wide in the figures' fonts, for the letters and digits the notes use).
std::vector<std::string> wrapped_lines(const std::vector<std::string>& notes, double width)
{
    const auto fits = static_cast<std::size_t>((width - 24.0) / 7.5);
    std::vector<std::string> lines;
    for (std::string note : notes) {
        while (note.size() > fits && note.rfind(' ', fits) != std::string::npos && note.rfind(' ', fits) > 0) {
            const std::size_t space = note.rfind(' ', fits);
            lines.push_back(note.substr(0, space));
            note = "    " + note.substr(space + 1);
        }
        lines.push_back(note);
    }
    return lines;
}

}  // namespace

Stamp now()
{
    timespec processor{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &processor);
    return {std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(),
            static_cast<double>(processor.tv_sec) + 1e-9 * static_cast<double>(processor.tv_nsec)};
}

double minimum(const std::vector<double>& times)
{
    return times.empty() ? std::numeric_limits<double>::infinity() : *std::min_element(times.begin(), times.end());
}

double median(std::vector<double> times)
{
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

Agreement agreement(const std::vector<double>& times, const std::vector<double>& reference, double limit)
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

Verdict check_ratios(std::size_t n, const std::vector<std::pair<std::string, Agreement>>& ratios, double limit)
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

Verdict check_peak(std::size_t n, double peak, double fastest, double limit)
{
    if (fastest > limit * peak) {
        return {false, fmt::format("n = {} not drawn: the peak loop ran at {:.0f} GFLOP/s there, {:.1f} times slower "
                                   "than its fastest in this run ({:.0f}), so other programs had the cores",
                                   n, peak, fastest / peak, fastest)};
    }
    return {true, {}};
}

std::string load_average_text(const std::string& path)
{
    std::ifstream file(path);
    std::string first;
    if (!(file >> first) || first.find_first_not_of("0123456789.") != std::string::npos) {
        return "not reported by this system";
    }
    return first;
}

std::string with_notes(std::string svg, const std::vector<std::string>& notes)
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
    const std::vector<std::string> lines = wrapped_lines(notes, std::stod(width));
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

std::string text_only_svg(const std::string& title)
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

double training_step_operations(const ModelShape& shape, std::size_t windows)
{
    const auto tokens = static_cast<double>(windows * shape.context);
    const auto d = static_cast<double>(shape.width);
    const auto window = static_cast<double>(shape.context);
    const double forward = static_cast<double>(shape.layers) * (8.0 * tokens * d * d + 4.0 * tokens * window * d) +
                           2.0 * tokens * d * static_cast<double>(shape.vocabulary);
    return 3.0 * forward;
}

std::string bytes_text(double bytes)
{
    constexpr double mebibyte = 1024.0 * 1024.0;
    return bytes < mebibyte ? fmt::format("{:.0f} KiB", bytes / 1024.0) : fmt::format("{:.0f} MiB", bytes / mebibyte);
}

double largest_relative_difference(const Matrix& result, const Matrix& reference)
{
    return largest_difference(result, reference) / largest_magnitude(reference);
}

ProgramInfo benchmark_program(const std::string& name, const std::string& summary, std::vector<ProgramOption> own,
                              bool draws_figures)
{
    ProgramInfo info{name, summary, mouse_eats_cheese()};
    const std::string random = "the benchmark draws its own random matrices at d = 64";
    info.unused_options = {{"--tokens", random}, {"--embeddings", random}, {"--wq", random}, {"--wk", random},
                           {"--wv", random}, {"--causal", random}, {"--precision", "it prints times, not the example"}};
    if (!draws_figures) {
        info.unused_options.emplace_back("--figures", "it draws no figure (ch13-benchmark-kernels draws the book's)");
    }
    info.options = {{"--smoke", "", "a few seconds at small sizes (CTest runs it)", ""},
                    {"--quick", "", "a short run, as in the book's build", ""}};
    info.options.insert(info.options.end(), own.begin(), own.end());
    return info;
}

RunLength run_length(const Example& example)
{
    const bool smoke = flag_option(example, "--smoke");
    const bool quick = flag_option(example, "--quick");
    if (smoke && quick) {
        throw UsageError("--smoke and --quick: choose one of the two short runs");
    }
    return smoke ? RunLength::smoke : quick ? RunLength::quick : RunLength::full;
}

}  // namespace sa::bench
