#include "embedding.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "exercise.hpp"

namespace sa {

Matrix embed(const Matrix& table, const std::vector<std::size_t>& tokens)
{
    Matrix rows(tokens.size(), table.cols());
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i] >= table.rows()) {
            throw std::out_of_range(fmt::format("embed: token {} at position {} is not below d_vocab = {}", tokens[i], i,
                                                table.rows()));
        }
        for (std::size_t j = 0; j < table.cols(); ++j) {
            rows(i, j) = table(tokens[i], j);
        }
    }
    return rows;
}

//> embedding-backward
Matrix embedding_backward(const Matrix& d_rows, const std::vector<std::size_t>& tokens, std::size_t vocabulary)
{
    // BEGIN SOLUTION embedding_backward: chapter 14, Predicting the next character
    if (tokens.size() != d_rows.rows()) {
        throw std::invalid_argument(fmt::format("embedding_backward: dX is {} but there are {} tokens; give one "
                                                "token per row", shape(d_rows), tokens.size()));
    }
    Matrix d_table(vocabulary, d_rows.cols());
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i] >= vocabulary) {
            throw std::invalid_argument(fmt::format("embedding_backward: token {} at position {} is not below d_vocab = {}",
                                                    tokens[i], i, vocabulary));
        }
        for (std::size_t j = 0; j < d_rows.cols(); ++j) {
            d_table(tokens[i], j) += d_rows(i, j);
        }
    }
    return d_table;
    // END SOLUTION
}
//< embedding-backward

}  // namespace sa
