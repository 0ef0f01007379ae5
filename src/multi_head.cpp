#include "multi_head.hpp"

#include <limits>
#include <stdexcept>

#include "attention.hpp"
#include "exercise.hpp"
#include "masking.hpp"
#include "projection.hpp"
#include "scaling.hpp"
#include "scores.hpp"
#include "softmax.hpp"

namespace sa {

namespace {

// The width of one head, or a message naming the operation and the shape when the
// columns do not split evenly.
std::size_t head_width(std::string_view operation, std::string_view what, const Matrix& matrix, std::size_t heads)
{
    if (heads == 0) {
        throw std::invalid_argument(fmt::format("{}: the number of heads must be at least 1", operation));
    }
    if (matrix.cols() == 0 || matrix.cols() % heads != 0) {
        throw ShapeError(fmt::format("{}: {} is {}, which does not split into {} heads; its {} columns are not a "
                                     "multiple of {}", operation, what, shape(matrix), heads, matrix.cols(), heads));
    }
    return matrix.cols() / heads;
}

// Every shape up front, so that a mistake is reported as the caller wrote it, not for one head.
void check_shapes(std::string_view operation, const Matrix& queries, const Matrix& keys, const Matrix& values,
                  const Matrix& mask, std::size_t heads, const Matrix& w_out)
{
    if (queries.cols() != keys.cols()) {
        throw ShapeError(fmt::format("{}: Q is {} but K is {}; a query and a key need the same width d_k", operation,
                                     shape(queries), shape(keys)));
    }
    if (keys.rows() != values.rows()) {
        throw ShapeError(fmt::format("{}: K is {} but V is {}; they need one row per key each", operation,
                                     shape(keys), shape(values)));
    }
    if (mask.rows() != queries.rows() || mask.cols() != keys.rows()) {
        throw ShapeError(fmt::format("{}: the mask is {} but Q·Kᵀ is {}×{}; it needs one row per query and one "
                                     "column per key", operation, shape(mask), queries.rows(), keys.rows()));
    }
    head_width(operation, "Q", queries, heads);
    head_width(operation, "V", values, heads);
    if (w_out.rows() != values.cols()) {
        throw ShapeError(fmt::format("{}: V is {} but W_O is {}; W_O needs one row per column of V ({}), the width "
                                     "of the heads' outputs side by side", operation, shape(values), shape(w_out),
                                     values.cols()));
    }
}

}  // namespace

//> split-heads
std::vector<Matrix> split_heads(const Matrix& matrix, std::size_t heads)
{
    // BEGIN SOLUTION split_heads: chapter 9, Multi-head attention
    const std::size_t width = head_width("split_heads", "the matrix", matrix, heads);
    std::vector<Matrix> slices;
    for (std::size_t head = 0; head < heads; ++head) {
        // Head i owns columns [i·width, (i+1)·width) of every row.
        Matrix slice(matrix.rows(), width);
        for (std::size_t r = 0; r < matrix.rows(); ++r) {
            for (std::size_t c = 0; c < width; ++c) {
                slice(r, c) = matrix(r, head * width + c);
            }
        }
        slices.push_back(slice);
    }
    return slices;
    // END SOLUTION
}
//< split-heads

//> concat-heads
Matrix concat_heads(const std::vector<Matrix>& heads)
{
    // BEGIN SOLUTION concat_heads: chapter 9, Multi-head attention
    if (heads.empty()) {
        throw std::invalid_argument("concat_heads: there are no heads to concatenate");
    }
    std::size_t width = 0;
    for (const Matrix& head : heads) {
        if (head.rows() != heads.front().rows()) {
            throw ShapeError(fmt::format("concat_heads: head 0 is {} but another head is {}; every head needs one row "
                                         "per query", shape(heads.front()), shape(head)));
        }
        width += head.cols();
    }
    Matrix joined(heads.front().rows(), width);
    std::size_t first_column = 0;
    for (const Matrix& head : heads) {
        for (std::size_t r = 0; r < head.rows(); ++r) {
            for (std::size_t c = 0; c < head.cols(); ++c) {
                joined(r, first_column + c) = head(r, c);
            }
        }
        first_column += head.cols();
    }
    return joined;
    // END SOLUTION
}
//< concat-heads

//> multi-head-attention
Matrix multi_head_attention(const Matrix& queries, const Matrix& keys, const Matrix& values, const Matrix& mask,
                            std::size_t heads, const Matrix& w_out)
{
    // BEGIN SOLUTION multi_head_attention: chapter 9, Multi-head attention
    check_shapes("multi_head_attention", queries, keys, values, mask, heads, w_out);
    const std::vector<Matrix> query_heads = split_heads(queries, heads);
    const std::vector<Matrix> key_heads = split_heads(keys, heads);
    const std::vector<Matrix> value_heads = split_heads(values, heads);
    std::vector<Matrix> head_outputs;
    for (std::size_t head = 0; head < heads; ++head) {  // chapter 7, on the head's slices
        head_outputs.push_back(attention(query_heads[head], key_heads[head], value_heads[head], mask));
    }
    return project(concat_heads(head_outputs), w_out);  // [head_0 | head_1 | ...]·W_O
    // END SOLUTION
}
//< multi-head-attention

std::vector<Matrix> head_weights(const Matrix& queries, const Matrix& keys, const Matrix& mask, std::size_t heads)
{
    if (queries.cols() != keys.cols()) {
        throw ShapeError(fmt::format("head_weights: Q is {} but K is {}; a query and a key need the same width d_k",
                                     shape(queries), shape(keys)));
    }
    const std::vector<Matrix> query_heads = split_heads(queries, heads);
    const std::vector<Matrix> key_heads = split_heads(keys, heads);
    std::vector<Matrix> weights;
    for (std::size_t head = 0; head < heads; ++head) {
        const Matrix scaled = scale(scores(query_heads[head], key_heads[head]), query_heads[head].cols());
        weights.push_back(softmax_rows(apply_mask(scaled, mask)));
    }
    return weights;
}

std::vector<std::string> head_labels(std::size_t heads, const std::vector<std::string>& labels)
{
    std::vector<std::string> result;
    for (std::size_t head = 0; head < heads; ++head) {  // head 0 first, as in the formulas
        for (const std::string& label : labels) {
            result.push_back(fmt::format("h{} {}", head, label));
        }
    }
    return result;
}

std::vector<std::string> side_by_side_labels(const std::vector<std::string>& prefixes,
                                             const std::vector<std::string>& labels)
{
    std::vector<std::string> result;
    for (const std::string& prefix : prefixes) {
        for (const std::string& label : labels) {
            result.push_back(prefix + " " + label);
        }
    }
    return result;
}

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

//> heads-by-reshape
std::vector<Matrix> split_heads_by_reshape(const Matrix& matrix, std::size_t heads)
{
    const std::size_t width = head_width("split_heads_by_reshape", "the matrix", matrix, heads);
    std::vector<Matrix> blocks;
    for (std::size_t head = 0; head < heads; ++head) {
        Matrix block(matrix.rows(), width);
        for (std::size_t r = 0; r < matrix.rows(); ++r) {
            for (std::size_t c = 0; c < width; ++c) {
                // Number `flat` of the row-major list, wherever its token was.
                const std::size_t flat = head * matrix.rows() * width + r * width + c;
                block(r, c) = matrix(flat / matrix.cols(), flat % matrix.cols());
            }
        }
        blocks.push_back(block);
    }
    return blocks;
}
//< heads-by-reshape

Matrix concat_heads_by_reshape(const std::vector<Matrix>& heads)
{
    if (heads.empty()) {
        throw std::invalid_argument("concat_heads_by_reshape: there are no heads to concatenate");
    }
    const std::size_t rows = heads.front().rows();
    const std::size_t width = heads.front().cols();
    for (const Matrix& head : heads) {
        if (head.rows() != rows || head.cols() != width) {
            throw ShapeError(fmt::format("concat_heads_by_reshape: head 0 is {} but another head is {}; a reshape "
                                         "needs heads of one shape", shape(heads.front()), shape(head)));
        }
    }
    Matrix merged(rows, heads.size() * width);
    for (std::size_t r = 0; r < merged.rows(); ++r) {
        for (std::size_t c = 0; c < merged.cols(); ++c) {
            const std::size_t flat = r * merged.cols() + c;  // the heads' numbers laid end to end
            const std::size_t head = flat / (rows * width);
            merged(r, c) = heads[head]((flat % (rows * width)) / width, flat % width);
        }
    }
    return merged;
}

Matrix multi_head_attention_by_reshape(const Matrix& queries, const Matrix& keys, const Matrix& values,
                                       const Matrix& mask, std::size_t heads, const Matrix& w_out)
{
    check_shapes("multi_head_attention_by_reshape", queries, keys, values, mask, heads, w_out);
    const std::vector<Matrix> query_heads = split_heads_by_reshape(queries, heads);
    const std::vector<Matrix> key_heads = split_heads_by_reshape(keys, heads);
    const std::vector<Matrix> value_heads = split_heads_by_reshape(values, heads);
    std::vector<Matrix> head_outputs;
    for (std::size_t head = 0; head < heads; ++head) {
        head_outputs.push_back(attention(query_heads[head], key_heads[head], value_heads[head], mask));
    }
    return project(concat_heads_by_reshape(head_outputs), w_out);
}

//> causal-mask-bottom-right
Matrix causal_mask_bottom_right(std::size_t queries, std::size_t keys)
{
    const double masked_out = -std::numeric_limits<double>::infinity();
    Matrix mask(queries, keys, 0.0);
    for (std::size_t i = 0; i < queries; ++i) {
        for (std::size_t j = 0; j < keys; ++j) {
            if (j + queries > i + keys) {  // j > i + (m - n), without a negative number
                mask(i, j) = masked_out;
            }
        }
    }
    return mask;
}
//< causal-mask-bottom-right

}  // namespace sa
