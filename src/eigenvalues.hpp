/// \file eigenvalues.hpp
/// \brief Chapter 15: the eigenvalues of a real square matrix that need not be symmetric, as the
///        OV circuit's copying score needs them (Elhage et al., 2021). The matrix is brought to
///        Hessenberg form by Householder reflections, then the shifted QR algorithm splits off one
///        eigenvalue at a time.
#pragma once

#include <complex>
#include <vector>

#include "matrix.hpp"

namespace sa {

/// \brief A real square matrix brought to upper Hessenberg form, \f$ H = Q^\top A Q \f$ with Q
///        orthogonal (a product of Householder reflections): every entry below the first
///        subdiagonal is 0, and H has A's eigenvalues.
///
/// Column k's entries below row k + 1 are folded into row k + 1 by the reflection
/// \f$ I - 2 v v^\top \f$ that maps them onto a multiple of the first unit vector; it is applied
/// from the left and from the right, so H stays similar to A.
/// \param square A, n×n
/// \return H, n×n, with exact zeros below the first subdiagonal
/// \throws std::invalid_argument if the matrix is not square
[[nodiscard]] Matrix hessenberg(const Matrix& square);

/// \brief The n eigenvalues of a real n×n matrix, real or in complex-conjugate pairs, in the
///        order the QR algorithm finds them (the last row first).
///
/// After hessenberg(), each step of the shifted QR algorithm factors \f$ H - \mu I = QR \f$ with
/// Givens rotations and forms \f$ RQ + \mu I \f$, which is similar to H. The shift \f$ \mu \f$ is
/// Wilkinson's, the eigenvalue of the trailing 2×2 block nearer its last diagonal entry, in complex
/// arithmetic so that a complex pair converges as a real eigenvalue does (every tenth step without
/// convergence takes an exceptional shift instead, which breaks the cycles of matrices such as a
/// permutation). When a subdiagonal entry falls below the rounding of its two diagonal neighbours
/// it is set to 0, and the last diagonal entry of the block is an eigenvalue. The imaginary parts
/// of a real eigenvalue, and the difference between the two members of a pair, are rounding.
/// \param square A, n×n
/// \return n eigenvalues
/// \throws std::invalid_argument if the matrix is not square or holds a NaN or an infinity
/// \throws std::runtime_error if an eigenvalue does not converge within 30 steps per eigenvalue
[[nodiscard]] std::vector<std::complex<double>> eigenvalues(const Matrix& square);

}  // namespace sa
