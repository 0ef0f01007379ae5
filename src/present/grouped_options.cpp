#include "grouped_options.hpp"

#include <string>

#include <fmt/format.h>

namespace sa {

namespace {

std::string fit_query_heads(const Example& example)
{
    return example.w_query.cols() % 2 == 0 ? "" : "1";
}

std::string fit_kv_heads(const Example& example)
{
    const auto heads = static_cast<std::size_t>(whole_option(example, "--query-heads", 1, 64));
    const std::size_t width = example.w_query.cols() / heads;
    if (example.w_query.cols() % heads != 0 || example.w_key.cols() % width != 0) {
        return "";  // no count fits: the library names the shapes
    }
    const std::size_t kv_heads = example.w_key.cols() / width;
    return kv_heads == 1 || heads % kv_heads != 0 ? "" : std::to_string(kv_heads);
}

std::string fit_w_out(const Example& example)
{
    const auto heads = static_cast<std::size_t>(whole_option(example, "--query-heads", 1, 64));
    const auto kv_heads = static_cast<std::size_t>(whole_option(example, "--kv-heads", 1, 64));
    const std::size_t d_v = example.w_value.cols();
    if (d_v % kv_heads != 0 || heads * (d_v / kv_heads) == 4) {  // refused on its own; or the default fits
        return "";
    }
    Matrix adds(heads * (d_v / kv_heads), d_v / kv_heads, 0.0);  // [I; I; ...]: the heads added
    for (std::size_t row = 0; row < adds.rows(); ++row) {
        adds(row, row % adds.cols()) = 1.0;
    }
    return matrix_text(adds);
}

std::string columns(std::size_t count)
{
    return fmt::format("{} column{}", count, count == 1 ? "" : "s");
}

}  // namespace

std::vector<ProgramOption> grouped_program_options()
{
    return {{"--query-heads", "H", "h, the query heads; it must divide the columns of --wq", "2", fit_query_heads},
            {"--kv-heads", "G",
             "h_kv, the key/value heads; it divides h, and W_K holds h_kv heads of a query head's width", "1",
             fit_kv_heads},
            {"--wo", "M", "W_O, one row per column of the h heads' outputs side by side (the default adds them)",
             "1,0;0,1;1,0;0,1", fit_w_out}};
}

GroupedOptions read_grouped_options(const Example& example)
{
    const auto heads = static_cast<std::size_t>(whole_option(example, "--query-heads", 1, 64));
    const auto kv_heads = static_cast<std::size_t>(whole_option(example, "--kv-heads", 1, 64));
    const Matrix w_out = matrix_option(example, "--wo");
    const std::size_t d_k = example.w_query.cols();
    if (d_k % heads != 0) {
        throw UsageError(fmt::format("--query-heads: {} does not divide the {} of --wq", heads, columns(d_k)));
    }
    if (heads % kv_heads != 0) {
        throw UsageError(fmt::format("--kv-heads: {} does not divide --query-heads {}; the query heads must "
                                     "split into equal groups", kv_heads, heads));
    }
    const std::size_t width = d_k / heads;
    if (example.w_key.cols() != kv_heads * width) {
        throw UsageError(fmt::format("--wk: expected {} (h_kv = {} key head{} as wide as a query head, d_k/h = "
                                     "{}), got {}", columns(kv_heads * width), kv_heads,
                                     kv_heads == 1 ? "" : "s", width, example.w_key.cols()));
    }
    const std::size_t d_v = example.w_value.cols();
    if (d_v % kv_heads != 0) {
        throw UsageError(fmt::format("--wv: its {} do not split into h_kv = {} value heads", columns(d_v),
                                     kv_heads));
    }
    if (w_out.rows() != heads * (d_v / kv_heads)) {
        throw UsageError(fmt::format("--wo: expected {} rows (one per column of the {} query heads' outputs "
                                     "side by side), got {}", heads * (d_v / kv_heads), heads, w_out.rows()));
    }
    return {heads, kv_heads, w_out};
}

}  // namespace sa
