/// \file random.hpp
/// \brief A small random generator that gives the same numbers on every machine.
///
/// The experiments of chapter 3 print statistics of random matrices, and the book
/// checks that output byte for byte. The standard library's distributions
/// (std::normal_distribution, std::uniform_real_distribution) are free to differ
/// between implementations, so the book draws its numbers itself: SplitMix64 in
/// integer arithmetic, then a few correctly rounded floating-point operations.
#pragma once

#include <cstddef>
#include <cstdint>

#include "matrix.hpp"

namespace sa {

/// \brief SplitMix64 (Steele, Lea and Flood, 2014): a 64-bit state that advances by a
///        fixed odd constant, mixed into each output by shifts, xors and multiplications.
///
/// Every step is unsigned 64-bit integer arithmetic, which wraps the same way on every
/// platform, so a seed fixes the whole sequence. Seeded with 1234567 the first outputs
/// are 6457827717110365317, 3203168211198807973, 9817491932198370423.
class SplitMix64 {
public:
    /// \brief A generator whose sequence is fixed by \p seed.
    /// \param seed any 64-bit value; equal seeds give equal sequences
    explicit SplitMix64(std::uint64_t seed) noexcept : state_(seed) {}

    /// \brief The next 64 random bits.
    /// \return a value in \f$ [0, 2^{64}) \f$
    std::uint64_t next() noexcept;

    /// \brief A uniform number in \f$ [0, 1) \f$: the top 53 bits of next() times \f$ 2^{-53} \f$.
    ///
    /// Both steps are exact in double precision, so every platform gets the same value.
    /// \return one of the \f$ 2^{53} \f$ evenly spaced values \f$ k / 2^{53} \f$
    double uniform() noexcept;

    /// \brief A number with mean 0 and variance 1: uniform on \f$ [-\sqrt 3, \sqrt 3] \f$.
    ///
    /// A uniform distribution on \f$ [-a, a] \f$ has variance \f$ a^2 / 3 \f$, which is 1 for
    /// \f$ a = \sqrt 3 \f$. Computed as \f$ 2\sqrt 3 \cdot u - \sqrt 3 \f$ with \f$ u \f$ from
    /// uniform(): a square root, a multiplication and a subtraction, each correctly
    /// rounded by IEEE 754, so the result is the same everywhere.
    /// \return a value in \f$ [-\sqrt 3, \sqrt 3] \f$
    double unit_variance() noexcept;

private:
    std::uint64_t state_;
};

/// \brief A rows×cols matrix of independent unit_variance() entries, filled row by row.
/// \param rows number of rows (e.g. tokens)
/// \param cols number of columns (e.g. d_k)
/// \param generator the generator to draw from; it advances by rows·cols draws
/// \return the random matrix, rows×cols
[[nodiscard]] Matrix random_matrix(std::size_t rows, std::size_t cols, SplitMix64& generator);

}  // namespace sa
