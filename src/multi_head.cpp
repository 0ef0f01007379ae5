#include "multi_head.hpp"

#include <stdexcept>

#include "attention.hpp"
#include "attention_shapes.hpp"
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
    check_attention_shapes(operation, {.queries = queries, .keys = keys, .values = &values, .mask = &mask});
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
    check_attention_shapes("head_weights", {.queries = queries, .keys = keys});
    const std::vector<Matrix> query_heads = split_heads(queries, heads);
    const std::vector<Matrix> key_heads = split_heads(keys, heads);
    std::vector<Matrix> weights;
    for (std::size_t head = 0; head < heads; ++head) {
        const Matrix scaled = scale(scores(query_heads[head], key_heads[head]), query_heads[head].cols());
        weights.push_back(softmax_rows(apply_mask(scaled, mask)));
    }
    return weights;
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

}  // namespace sa
