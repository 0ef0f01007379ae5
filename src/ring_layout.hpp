/// \file ring_layout.hpp
/// \brief Attention across machines, its first half: which token rows each of G ranks
///        holds (contiguous, striped or zig-zag) and the ring's schedule, whose block of
///        K and V a rank holds at each step. No matrix, no message: only row numbers.
///
/// ring_attention.hpp builds the ring, its backward pass and DeepSpeed-Ulysses on these.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace sa {

/// \brief Which token rows each rank holds.
///
/// - contiguous: rank g holds rows \f$ [\lfloor g n / G \rfloor, \lfloor (g+1) n / G \rfloor) \f$,
///   the split of chapter 13's workers;
/// - striped: rank g holds every token i with \f$ i \bmod G = g \f$ (Brandon et al., 2023);
/// - zigzag: the sequence is cut into 2G chunks and rank g holds chunks g and 2G−1−g
///   (the layout of Megatron-LM's context parallelism), see zigzag_rows().
enum class Layout {
    contiguous,  ///< one run of consecutive tokens per rank
    striped,     ///< token i on rank i mod G
    zigzag,      ///< chunks g and 2G−1−g of 2G on rank g
};

/// \brief The layout's name as the book prints it: "contiguous", "striped" or "zig-zag".
/// \param layout the layout
/// \return its name
[[nodiscard]] std::string layout_name(Layout layout);

/// \brief The token rows rank g holds in the zig-zag layout: chunks g and 2G−1−g of 2G.
///
/// The n tokens are cut into 2G consecutive chunks whose sizes differ by at most one,
/// the larger ones first: chunk c holds \f$ \lfloor n / 2G \rfloor \f$ tokens, plus one
/// when \f$ c < n \bmod 2G \f$. Rank g takes chunk g from the front half and its mirror,
/// chunk 2G−1−g, from the back half, so that under the causal mask every rank holds
/// one early chunk (few keys to see) and one late chunk (many). With n = 8, G = 2 the
/// chunks are {0,1}, {2,3}, {4,5}, {6,7}: rank 0 holds 0, 1, 6, 7 and rank 1 holds 2, 3, 4, 5.
///
/// Edges: with \f$ G \le n < 2G \f$ some chunks of the back half are empty, but every
/// chunk of the front half holds a token, so no rank is left without one.
///
/// \param tokens n, at least G
/// \param ranks G, at least 1
/// \param rank g, below G
/// \return the rows, ascending
[[nodiscard]] std::vector<std::size_t> zigzag_rows(std::size_t tokens, std::size_t ranks, std::size_t rank);

/// \brief The token rows rank g holds in a layout, ascending.
///
/// Every token is held by exactly one rank, and each rank holds at least one when \f$ n \ge G \f$.
///
/// \param layout contiguous, striped or zig-zag
/// \param tokens n
/// \param ranks G
/// \param rank g
/// \return the rows of Q, K and V that live on rank g
/// \throws std::invalid_argument if G is 0, g is not below G, or n is less than G
///         (the message says each rank needs at least one token)
[[nodiscard]] std::vector<std::size_t> layout_rows(Layout layout, std::size_t tokens, std::size_t ranks,
                                                   std::size_t rank);

/// \brief The ring's schedule: whose block of K and V rank g holds at step s,
///        \f$ (g - s) \bmod G \f$.
///
/// At step 0 every rank holds its own block. After each step it passes the block on to
/// rank g+1 and takes the one rank g−1 held, so at step s it holds the block that
/// started s places behind it. After steps 0 to G−1 it has seen every block once.
///
/// \param rank g, below G
/// \param step s, below G
/// \param ranks G, at least 1
/// \return the rank whose block rank g holds at step s
[[nodiscard]] std::size_t ring_block_owner(std::size_t rank, std::size_t step, std::size_t ranks);

}  // namespace sa
