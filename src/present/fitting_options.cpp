#include "fitting_options.hpp"

#include <utility>

namespace sa {

namespace {

bool is_default(const Example& example, const ProgramOption& option)
{
    return example.options.at(option.name) == option.default_value;
}

}  // namespace

std::size_t heads_option(const Example& example, const ProgramOption& option)
{
    const auto heads = static_cast<std::size_t>(whole_option(example, option.name, 1, 64));
    for (const auto& [name, width] : {std::pair{"--wq", example.w_query.cols()}, {"--wv", example.w_value.cols()}}) {
        if (width % heads != 0) {
            const bool fixed = is_default(example, option);
            throw UsageError(fmt::format("{}: {}{} does not divide the {} columns of {}; {}", option.name,
                                         fixed ? "the default " : "", heads, width, name,
                                         fixed ? fmt::format("pass your own {}", option.name)
                                               : fmt::format("choose a divisor of {}", width)));
        }
    }
    return heads;
}

Matrix fitting_matrix_option(const Example& example, const ProgramOption& option, std::size_t size, Along along,
                             const std::string& why)
{
    const Matrix matrix = matrix_option(example, option.name);
    const bool by_rows = along == Along::rows;
    const std::size_t got = by_rows ? matrix.rows() : matrix.cols();
    if (got != size) {
        const std::string what =
            fmt::format("{} {}{} ({})", size, by_rows ? "row" : "column", size == 1 ? "" : "s", why);
        throw UsageError(is_default(example, option)
                             ? fmt::format("{}: expected {}, but the default has {}; pass your own {}", option.name,
                                           what, got, option.name)
                             : fmt::format("{}: expected {}, got {}", option.name, what, got));
    }
    return matrix;
}

}  // namespace sa
