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
/// sums stay in registers, and with 512-bit registers (AVX-512) in tiles of 8×16, each still
/// summed in that order, so the bits do not depend on it. Inside a ProductThreads scope the
/// tiles are shared among several threads; each entry is still one thread's sum in that order.
#pragma once

#include "matrix.hpp"

#include <cstddef>

namespace sa {

/// \brief While it lives, the products on this thread (and a training step's heads) share their
///        rows among \p threads threads; each entry is still one thread's sum in the same order,
///        so no bit depends on the count.
///
/// A program that trains several models at once, one per thread, leaves it at 1 (the default of
/// every thread); a single training may use the machine's cores.
class ProductThreads {
public:
    /// \brief Sets this thread's count until the object is destroyed.
    /// \param threads threads per product; 0 and 1 both mean one
    explicit ProductThreads(std::size_t threads);
    /// \brief Restores the count that held before.
    ~ProductThreads();
    ProductThreads(const ProductThreads&) = delete;             ///< a scope, not a value
    ProductThreads& operator=(const ProductThreads&) = delete;  ///< a scope, not a value

private:
    std::size_t before_;
};

/// \brief The threads the products on this thread may use: 1 outside a ProductThreads scope.
/// \return the count, at least 1
[[nodiscard]] std::size_t product_threads();

/// \brief A left factor read where it lies: entry (i, p) at a[i · row_step + p · depth_step]. For A
///        itself that is (k, 1); for Aᵀ, read from A, it is (1, k). The products here and the
///        attention heads' tiles (head_tiles.hpp) read their left factors through it.
struct Left {
    const double* a;         ///< entry (0, 0)
    std::size_t row_step;    ///< how far apart the rows are
    std::size_t depth_step;  ///< how far apart the entries of a row are
    /// \brief Entry (i, p).
    /// \param i its row
    /// \param p its place along the sum
    /// \return the entry
    [[gnu::always_inline]] double operator()(std::size_t i, std::size_t p) const
    {
        return a[i * row_step + p * depth_step];
    }
};

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

/// \brief multiply() into a matrix kept from call to call: \p result gets the product's bits.
///
/// A training step makes the same products of the same shapes step after step; a result that
/// already has the product's shape keeps its storage (every entry is overwritten), so that no
/// memory is asked for, filled with zeros and handed back on each step. Any other result is
/// replaced by a new matrix.
/// \param lhs A, n×k
/// \param rhs B, k×m
/// \param result C, n×m afterwards; must not be A or B
/// \throws ShapeError if the columns of A are not the rows of B
void multiply_into(const Matrix& lhs, const Matrix& rhs, Matrix& result);

/// \brief multiply_transposed_lhs() into a kept matrix, as multiply_into().
/// \param lhs A, n×k
/// \param rhs B, n×m
/// \param result C = AᵀB, k×m afterwards; must not be A or B
/// \throws ShapeError if A and B have different numbers of rows
void multiply_transposed_lhs_into(const Matrix& lhs, const Matrix& rhs, Matrix& result);

/// \brief multiply_transposed_rhs() into a kept matrix, as multiply_into().
/// \param lhs A, n×k
/// \param rhs B, m×k
/// \param result C = ABᵀ, n×m afterwards; must not be A or B
/// \throws ShapeError if A and B have different numbers of columns
void multiply_transposed_rhs_into(const Matrix& lhs, const Matrix& rhs, Matrix& result);

/// \brief D + A·B into a kept matrix, as multiply_into(), with no product matrix in between.
///
/// Each entry is D's entry plus the product's sum, that sum made in multiply()'s order from zero:
/// the bits of add_in_place(D, multiply(A, B)), with one pass over the memory instead of three.
/// \param lhs A, n×k
/// \param rhs B, k×m
/// \param addend D, n×m
/// \param result C = D + AB, n×m afterwards; may be D itself, must not be A or B
/// \throws ShapeError if the columns of A are not the rows of B, or D is not n×m
void multiply_add_into(const Matrix& lhs, const Matrix& rhs, const Matrix& addend, Matrix& result);

/// \brief Adds B to A entry by entry, in place: \f$ A \leftarrow A + B \f$.
/// \param sum A; changed in place
/// \param term B, the shape of A
/// \throws ShapeError if the shapes differ
void add_in_place(Matrix& sum, const Matrix& term);

}  // namespace sa
