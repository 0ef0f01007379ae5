/// \file dense.hpp
/// \brief Chapter 14's fast matrix products: the three products a training step needs, as
///        loops over contiguous rows that the compiler can vectorise, each with a fixed order
///        of summation, so that every run and every platform gives the same bits.
///
/// The book's project() and scores() compute the same products entry by entry with bounds
/// checks; these walk whole rows. Each entry of a result is a sum over the shared dimension
/// p, taken from p = 0 upwards, one rounding per multiplication and per addition: the order of
/// a textbook dot product. Vectorising across the columns of the result never reorders a sum;
/// on processors with 256-bit registers (AVX2) the products run in tiles of 4×8 entries whose
/// sums stay in registers, each still summed in that order, so the bits do not depend on it.
#pragma once

#include "matrix.hpp"

namespace sa {

/// \brief \f$ C = A B \f$: \f$ C_{ij} = \sum_p A_{ip} B_{pj} \f$, summed over p in increasing order.
///
/// Shapes: A is n×k, B is k×m, C is n×m.
/// \param lhs A
/// \param rhs B
/// \return C
/// \throws ShapeError if the columns of A are not the rows of B
[[nodiscard]] Matrix multiply(const Matrix& lhs, const Matrix& rhs);

/// \brief \f$ C = A^\top B \f$: \f$ C_{ij} = \sum_p A_{pi} B_{pj} \f$, summed over the rows p in
///        increasing order, the product every weight gradient takes (\f$ dW = X^\top dY \f$).
///
/// Shapes: A is n×k, B is n×m, C is k×m.
/// \param lhs A
/// \param rhs B
/// \return C
/// \throws ShapeError if A and B have different numbers of rows
[[nodiscard]] Matrix multiply_transposed_lhs(const Matrix& lhs, const Matrix& rhs);

/// \brief \f$ C = A B^\top \f$: \f$ C_{ij} = \sum_p A_{ip} B_{jp} \f$, summed over p in increasing
///        order, the product every input gradient takes (\f$ dX = dY\, W^\top \f$).
///
/// Shapes: A is n×k, B is m×k, C is n×m.
/// \param lhs A
/// \param rhs B
/// \return C
/// \throws ShapeError if A and B have different numbers of columns
[[nodiscard]] Matrix multiply_transposed_rhs(const Matrix& lhs, const Matrix& rhs);

/// \brief Adds B to A entry by entry, in place: \f$ A \leftarrow A + B \f$.
/// \param sum A; changed in place
/// \param term B, the shape of A
/// \throws ShapeError if the shapes differ
void add_in_place(Matrix& sum, const Matrix& term);

}  // namespace sa
