#include "random.hpp"

#include <cmath>

namespace sa {

std::uint64_t SplitMix64::next() noexcept
{
    // Unsigned arithmetic wraps modulo 2^64 by definition, on every platform.
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t mixed = state_;
    mixed = (mixed ^ (mixed >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    mixed = (mixed ^ (mixed >> 27U)) * 0x94D049BB133111EBULL;
    return mixed ^ (mixed >> 31U);
}

//> unit-variance
double SplitMix64::uniform() noexcept
{
    // 53 bits fit a double's significand exactly, and scaling by 2^-53 is exact too.
    return static_cast<double>(next() >> 11U) * 0x1.0p-53;
}

double SplitMix64::unit_variance() noexcept
{
    // Uniform on [-a, a] has variance a²/3, so a = √3 gives variance 1.
    const double half_width = std::sqrt(3.0);
    return 2.0 * half_width * uniform() - half_width;
}
//< unit-variance

Matrix random_matrix(std::size_t rows, std::size_t cols, SplitMix64& generator)
{
    Matrix result(rows, cols);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) {
            result(r, c) = generator.unit_variance();
        }
    }
    return result;
}

}  // namespace sa
