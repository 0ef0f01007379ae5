// Chapter 17's options, read and checked before MPI starts.
#include "ring_options.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "cli.hpp"

namespace sa {

namespace {

constexpr Layout all_layouts[] = {Layout::contiguous, Layout::striped, Layout::zigzag};

std::vector<Layout> chosen_layouts(const Example& example)
{
    const std::string name = choice_option(example, "--layout", {"all", "contiguous", "striped", "zig-zag"});
    std::vector<Layout> chosen;
    for (const Layout layout : all_layouts) {
        if (name == "all" || name == layout_name(layout)) {
            chosen.push_back(layout);
        }
    }
    return chosen;
}

}  // namespace

RingOptions read_ring_options(const Example& example, std::size_t width)
{
    const auto ranks = static_cast<std::size_t>(whole_option(example, "--ranks", 1, 64));
    const auto length = static_cast<std::size_t>(whole_option(example, "--length", 1, 4096));
    const auto heads = static_cast<std::size_t>(whole_option(example, "--ulysses-heads", 1, 24));
    if (length < ranks) {
        throw UsageError(fmt::format("--ranks {} is more than the {} tokens of --length: each rank needs at least "
                                     "one token", ranks, length));
    }
    if (heads % ranks != 0 || width % heads != 0) {
        throw UsageError(fmt::format("--ulysses-heads {} does not split between --ranks {}: Ulysses gives each rank h/G "
                                     "heads, so h must be a multiple of G and divide d = {}", heads, ranks, width));
    }
    const std::string stop = example.options.find("--stop-rank")->second;
    const std::size_t stop_rank =
        stop == "none" ? SIZE_MAX : static_cast<std::size_t>(whole_option(example, "--stop-rank", 0, 63));
    return {ranks, length, heads, stop_rank, chosen_layouts(example)};
}

std::string fit_ulysses_heads(const Example& example, std::size_t width)
{
    const std::string& text = example.options.find("--ranks")->second;
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 2) {
        return "";  // --ranks is refused with its own message
    }
    const std::size_t ranks = std::stoul(text);
    return ranks == 0 || 4 % ranks == 0 || width % ranks != 0 ? "" : std::to_string(ranks);
}

}  // namespace sa
