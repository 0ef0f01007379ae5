#include "eigenvalues.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

namespace sa {

namespace {

using Complex = std::complex<double>;

void check_square(const Matrix& square, const char* name)
{
    if (square.rows() != square.cols()) {
        throw std::invalid_argument(fmt::format("{}: a matrix of {}×{}; expected a square matrix", name, square.rows(),
                                                square.cols()));
    }
}

// The n×n entries of a complex matrix, row by row.
struct ComplexSquare {
    std::size_t n = 0;
    std::vector<Complex> entries;
    Complex& operator()(std::size_t r, std::size_t c) { return entries[r * n + c]; }
};

// The eigenvalue of [[a, b], [c, d]] nearer d: Wilkinson's shift.
Complex wilkinson_shift(Complex a, Complex b, Complex c, Complex d)
{
    const Complex half_gap = (a - d) / 2.0;
    const Complex root = std::sqrt(half_gap * half_gap + b * c);
    const Complex mean = (a + d) / 2.0;
    const Complex plus = mean + root;
    const Complex minus = mean - root;
    return std::abs(plus - d) < std::abs(minus - d) ? plus : minus;
}

// One shifted QR step on rows and columns first … last of a Hessenberg matrix: H − μI = QR by
// Givens rotations G_k on rows k, k + 1 (each zeroes the subdiagonal entry k + 1, k), then
// RQ + μI, the rotations' conjugate transposes applied to columns k, k + 1.
void qr_step(ComplexSquare& h, std::size_t first, std::size_t last, Complex shift)
{
    std::vector<Complex> cs(last - first), ss(last - first);
    for (std::size_t k = first; k <= last; ++k) {
        h(k, k) -= shift;
    }
    for (std::size_t k = first; k < last; ++k) {
        const double r = std::hypot(std::abs(h(k, k)), std::abs(h(k + 1, k)));
        const Complex c = r == 0.0 ? Complex(1.0) : h(k, k) / r;
        const Complex s = r == 0.0 ? Complex(0.0) : h(k + 1, k) / r;
        for (std::size_t j = k; j <= last; ++j) {  // G = [[c̄, s̄], [−s, c]] from the left
            const Complex x = h(k, j), y = h(k + 1, j);
            h(k, j) = std::conj(c) * x + std::conj(s) * y;
            h(k + 1, j) = -s * x + c * y;
        }
        cs[k - first] = c;
        ss[k - first] = s;
    }
    for (std::size_t k = first; k < last; ++k) {
        const Complex c = cs[k - first], s = ss[k - first];
        for (std::size_t i = first; i <= std::min(k + 2, last); ++i) {  // Gᴴ = [[c, −s̄], [s, c̄]] from the right
            const Complex x = h(i, k), y = h(i, k + 1);
            h(i, k) = x * c + y * s;
            h(i, k + 1) = -x * std::conj(s) + y * std::conj(c);
        }
    }
    for (std::size_t k = first; k <= last; ++k) {
        h(k, k) += shift;
    }
}

// The first row of the unreduced block that ends at row last: the row below the last negligible
// subdiagonal entry, which is set to 0.
std::size_t block_start(ComplexSquare& h, std::size_t last)
{
    for (std::size_t k = last; k > 0; --k) {
        const double neighbours = std::abs(h(k, k)) + std::abs(h(k - 1, k - 1));
        if (std::abs(h(k, k - 1)) <= std::numeric_limits<double>::epsilon() * neighbours || std::abs(h(k, k - 1)) < 1e-300) {
            h(k, k - 1) = 0.0;
            return k;
        }
    }
    return 0;
}

}  // namespace

Matrix hessenberg(const Matrix& square)
{
    check_square(square, "hessenberg");
    Matrix h = square;
    const std::size_t n = h.rows();
    for (std::size_t k = 0; k + 2 < n; ++k) {
        std::vector<double> v(n - k - 1);
        double norm = 0.0;
        for (std::size_t i = k + 1; i < n; ++i) {
            v[i - k - 1] = h(i, k);
            norm += h(i, k) * h(i, k);
        }
        norm = std::sqrt(norm);
        if (norm == 0.0) {
            continue;  // the column is already reduced
        }
        v[0] += v[0] < 0.0 ? -norm : norm;  // x + sign(x₀)‖x‖e₁: no cancellation
        double length = 0.0;
        for (const double e : v) {
            length += e * e;
        }
        for (std::size_t j = 0; j < n; ++j) {  // (I − 2vvᵀ/vᵀv) from the left, on rows k + 1 …
            double dot = 0.0;
            for (std::size_t i = k + 1; i < n; ++i) {
                dot += v[i - k - 1] * h(i, j);
            }
            for (std::size_t i = k + 1; i < n; ++i) {
                h(i, j) -= 2.0 * dot / length * v[i - k - 1];
            }
        }
        for (std::size_t i = 0; i < n; ++i) {  // and from the right, on columns k + 1 …
            double dot = 0.0;
            for (std::size_t j = k + 1; j < n; ++j) {
                dot += h(i, j) * v[j - k - 1];
            }
            for (std::size_t j = k + 1; j < n; ++j) {
                h(i, j) -= 2.0 * dot / length * v[j - k - 1];
            }
        }
        for (std::size_t i = k + 2; i < n; ++i) {
            h(i, k) = 0.0;  // what the reflection made zero, up to rounding
        }
    }
    return h;
}

std::vector<std::complex<double>> eigenvalues(const Matrix& square)
{
    check_square(square, "eigenvalues");
    for (std::size_t k = 0; k < square.rows() * square.cols(); ++k) {
        if (!std::isfinite(square.data()[k])) {
            throw std::invalid_argument("eigenvalues: the matrix holds a NaN or an infinity; expected finite entries");
        }
    }
    const Matrix reduced = hessenberg(square);
    ComplexSquare h{reduced.rows(), std::vector<Complex>(reduced.data(), reduced.data() + reduced.rows() * reduced.cols())};
    std::vector<Complex> found;
    std::size_t steps = 0;  // since the last eigenvalue split off
    for (std::size_t last = h.n; last-- > 0;) {
        for (std::size_t first = block_start(h, last); first < last; first = block_start(h, last)) {
            if (++steps > 30) {
                throw std::runtime_error(fmt::format("eigenvalues: no convergence after 30 QR steps at row {}", last));
            }
            const Complex shift = steps % 10 == 0 ? h(last, last) + 1.5 * std::abs(h(last, last - 1))
                                                  : wilkinson_shift(h(last - 1, last - 1), h(last - 1, last),
                                                                    h(last, last - 1), h(last, last));
            qr_step(h, first, last, shift);
        }
        found.push_back(h(last, last));
        steps = 0;
    }
    return found;
}

}  // namespace sa
