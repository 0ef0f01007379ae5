/// \file positions.hpp
/// \brief Word order: the sentence in another order, and the two standard ways to give
///        attention positions, sinusoidal encodings and rotary embeddings.
///
/// Attention on its own treats a sentence as a set of tokens: permuting the rows of
/// Q, K and V permutes the output rows the same way and changes nothing else.
/// Sinusoidal encodings (Vaswani et al., 2017, section 3.5) add a vector to each
/// embedding that depends on its absolute position; rotary embeddings (Su et al., 2021)
/// turn each query and key by an angle proportional to its position, so that a score
/// depends only on how far apart the query and the key are.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "matrix.hpp"

namespace sa {

/// \brief The rows of a matrix in a new order: row i of the result is row order[i] of \p rows.
///
/// Shapes: \p rows is n×d, \p order holds each of 0, …, n−1 exactly once; the result is n×d.
/// Applying the same order to E (or to Q, K and V together) writes the sentence in that order.
/// \param rows the matrix, one token per row
/// \param order the new order, by old row index (0-based)
/// \return the reordered matrix, n×d
/// \throws std::invalid_argument if \p order is not a permutation of 0, …, n−1; the message names it
[[nodiscard]] Matrix reorder_rows(const Matrix& rows, const std::vector<std::size_t>& order);

/// \brief Token names in a new order: entry i of the result is tokens[order[i]].
/// \param tokens one name per token
/// \param order the new order, by old index (0-based), a permutation of 0, …, n−1
/// \return the reordered names
/// \throws std::invalid_argument if \p order is not a permutation of 0, …, n−1
[[nodiscard]] std::vector<std::string> reorder_tokens(const std::vector<std::string>& tokens,
                                                      const std::vector<std::size_t>& order);

/// \brief The sinusoidal position encodings of Vaswani et al. (2017), section 3.5, one row per position:
///        \f$ PE_{(pos, 2i)} = \sin\!\left(pos / 10000^{2i/d}\right) \f$ and
///        \f$ PE_{(pos, 2i+1)} = \cos\!\left(pos / 10000^{2i/d}\right) \f$.
///
/// Features 2i and 2i+1 form a pair that turns with the position at the frequency
/// \f$ 1 / 10000^{2i/d} \f$: one radian per position for the first pair, ever more
/// slowly for the later ones. The encodings are added to the embeddings (add_positions()).
///
/// Shapes: the result is positions×d; row pos is the encoding of position pos, counted from 0.
/// Edges: position 0 is \f$ [0, 1, 0, 1, \dots] \f$ (sin 0 and cos 0); for d = 2 row pos is
/// \f$ [\sin pos, \cos pos] \f$; 0 positions give a 0×d matrix.
/// \param positions how many positions, 0, 1, …, positions−1
/// \param width d, the number of features; even and at least 2
/// \return the encodings, positions×d
/// \throws std::invalid_argument if d is 0 or odd, e.g.
///         "sinusoidal_encoding: d = 3 is odd; the features come in (sin, cos) pairs, so d must be even"
[[nodiscard]] Matrix sinusoidal_encoding(std::size_t positions, std::size_t width);

/// \brief Absolute positions added to the embeddings: \f$ X = E + P \f$, entry by entry.
///
/// Shapes: E and P are both n×d; the result is n×d. Row i of P is the encoding of the
/// position that token i occupies, so the same word gets a different input at another position.
/// \param embeddings E, n×d
/// \param encodings P, n×d, e.g. sinusoidal_encoding(n, d)
/// \return E + P, n×d
/// \throws ShapeError if the shapes differ, e.g. "add_positions: E is 3×2 but P is 3×4; ..."
[[nodiscard]] Matrix add_positions(const Matrix& embeddings, const Matrix& encodings);

/// \brief Which features rotary embeddings rotate together. Libraries disagree; the book uses adjacent.
enum class Pairing {
    adjacent,  ///< features (2i, 2i+1), as in Su et al. (2021): pair i is two neighbours
    halves,    ///< features (i, i + d/2), as in GPT-NeoX-style code ("rotate_half")
};

/// \brief Rotary position embeddings (Su et al., 2021): the vector in row r, at position
///        p = first_position + r, has each pair of features rotated by the angle
///        \f$ p\,\theta_i \f$ with \f$ \theta_i = 10000^{-2i/d} \f$, i = 0, …, d/2 − 1:
///        \f$ (x, y) \mapsto (x \cos p\theta_i - y \sin p\theta_i,\; x \sin p\theta_i + y \cos p\theta_i) \f$.
///
/// Applied to the queries and the keys (never to the values), it makes the score of a
/// query at position a with a key at position b depend on the offset b − a only:
/// \f$ (R_a q) \cdot (R_b k) = q \cdot R_{b-a} k \f$, because the rotations of one pair
/// add up and a rotation keeps lengths.
///
/// Pairing: Pairing::adjacent (the default) rotates features (2i, 2i+1) by \f$ p\theta_i \f$,
/// as the paper writes it; Pairing::halves rotates features (i, i + d/2) by the same angle, as
/// GPT-NeoX-style code does. For d = 2 the two are the same.
///
/// Shapes: \p vectors is n×d, the result is n×d. Edges: position 0 returns the vector
/// bit for bit (cos 0 = 1, sin 0 = 0); the length of every row is kept, up to rounding;
/// 0 rows give 0 rows.
/// \param vectors Q or K, one vector per row
/// \param first_position the position of row 0; row r is at first_position + r
/// \param pairing which features form a pair
/// \return the rotated vectors, n×d
/// \throws std::invalid_argument if d is 0 or odd, e.g.
///         "rope: d = 3 is odd; rotary embeddings turn pairs of features, so d must be even"
[[nodiscard]] Matrix rope(const Matrix& vectors, std::size_t first_position = 0,
                          Pairing pairing = Pairing::adjacent);

/// \brief The scores of one query against one key when both carry rotary positions:
///        entry (a, b) is \f$ (R_a q) \cdot (R_b k) \f$ for a, b = 0, …, positions − 1.
///
/// By the relative property of rope() every diagonal b − a = const holds one value, so the
/// table shows the score as a function of the offset alone.
/// Shapes: \p query and \p key are 1×d with d even; the result is positions×positions.
/// \param query q, 1×d
/// \param key k, 1×d
/// \param positions how many positions for each, at least 1
/// \return the table of scores, rows the query's position, columns the key's
/// \throws ShapeError if q or k is not one row, or their widths differ
/// \throws std::invalid_argument if d is odd (from rope()) or positions is 0
[[nodiscard]] Matrix rope_score_table(const Matrix& query, const Matrix& key, std::size_t positions);

}  // namespace sa
