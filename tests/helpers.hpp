// The helpers several chapter tests share: whole numbers and random inputs from the book's
// own generator, a copy of a matrix into Eigen for the independent references, and the
// whole of a file the build made.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include <Eigen/Dense>

#include "matrix.hpp"
#include "random.hpp"

namespace helpers {

// The bytes of a file, whole. The tests of chapters 14 to 16 name what the build made
// relative to the build folder, where CTest runs them; a file that cannot be read is an
// error that names it, never an empty text.
inline std::string read_all(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path + " (a relative path is read from the build folder)");
    }
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A whole number from 0 to count - 1. The inputs come from the book's own SplitMix64
// (src/random.hpp): its sequence is fixed by the seed on every platform, unlike the
// std::*_distribution classes.
inline std::size_t below(sa::SplitMix64& generator, std::size_t count)
{
    return static_cast<std::size_t>(generator.next() % count);
}

// Q (n×d_k), K (m×d_k) and V (m×d_v).
struct Inputs {
    sa::Matrix queries;
    sa::Matrix keys;
    sa::Matrix values;
};

// Random Q, K and V, drawn in that order from the generator.
inline Inputs random_inputs(sa::SplitMix64& generator, std::size_t n, std::size_t m, std::size_t d_k,
                            std::size_t d_v)
{
    Inputs inputs;
    inputs.queries = sa::random_matrix(n, d_k, generator);
    inputs.keys = sa::random_matrix(m, d_k, generator);
    inputs.values = sa::random_matrix(m, d_v, generator);
    return inputs;
}

// Random Q, K and V from a generator of their own, started at the seed.
inline Inputs random_inputs(std::uint64_t seed, std::size_t n, std::size_t m, std::size_t d_k, std::size_t d_v)
{
    sa::SplitMix64 generator(seed);
    return random_inputs(generator, n, m, d_k, d_v);
}

// The same numbers as an Eigen matrix, for a reference written with Eigen's own operations.
inline Eigen::MatrixXd to_eigen(const sa::Matrix& matrix)
{
    Eigen::MatrixXd result(static_cast<Eigen::Index>(matrix.rows()), static_cast<Eigen::Index>(matrix.cols()));
    for (std::size_t r = 0; r < matrix.rows(); ++r) {
        for (std::size_t c = 0; c < matrix.cols(); ++c) {
            result(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = matrix(r, c);
        }
    }
    return result;
}

}  // namespace helpers
