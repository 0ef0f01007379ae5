/// \file ring_tables.hpp
/// \brief Chapter 17's report around the ring: the memory that makes one machine too small, the tables of
///        the sharded run, the model on paper past this machine and the figures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "example.hpp"
#include "matrix.hpp"
#include "ring_attention.hpp"
#include "ring_options.hpp"

namespace sa {

/// \brief Why one machine is not enough: the bytes of K and V for one head, \f$ 8 n (d_k + d_v) \f$
///        (chapter 13's cached_step_reads()), and of the n×n score matrix, for the worked example, n = 4096
///        and n = 1048576 (d_k = d_v = 64), and what each of G ranks holds at n = 1048576.
/// \param example the worked example, the reader's own with `--embeddings` and `--weights`
/// \param ranks G
/// \return the text, ending in a blank line
[[nodiscard]] std::string ring_memory_table(const Example& example, std::size_t ranks);

/// \brief The tables of the sharded run, their heads set by ring_tables(), filled layout by layout.
struct RingTables {
    std::string checks;    ///< each layout, with and without the mask, against chapters 7 and 13
    std::string work;      ///< the dot products each rank computed under the causal mask
    std::string busiest;   ///< the dot products of each step's busiest rank
    std::string bytes;     ///< the bytes each rank sent and received
    std::string backward;  ///< the backward pass against chapter 11, and the bytes of each step
    /// the smallest share of a whole block that a step's busiest rank computed, at a step that sends, among the
    /// layouts under the mask
    double smallest_share = 1.0;
};

/// \brief The tables of a sharded run, with their heads and no rows yet.
/// \param options the run's G and n
/// \param width d = d_k = d_v
/// \return the tables
[[nodiscard]] RingTables ring_tables(const RingOptions& options, std::size_t width);

/// \brief Adds a causal run's rows to the work, busiest-rank and bytes tables, and lowers
///        RingTables::smallest_share to the run's smallest share.
/// \param tables the tables
/// \param setup the run's G, n and layout
/// \param everyone every rank's result, gathered at rank 0, in the order of the ranks
void add_causal_rows(RingTables& tables, const RingSetup& setup, const std::vector<RankResult>& everyone);

/// \brief The bytes of each step, separated by spaces.
/// \param bytes RankResult::step_bytes
/// \return the text
[[nodiscard]] std::string steps_text(const std::vector<std::uint64_t>& bytes);

/// \brief The Ulysses run beside the ring: the heads each rank gets, the check against chapter 9, the numbers
///        each rank puts through the two all-to-alls and the bytes it sent against
///        ulysses_bytes_formula() and ring_bytes_formula(), and the numbers that cross a bisection of the
///        ranks (ulysses_bisection_numbers()).
/// \param options the run's G, n and h
/// \param width d = d_k = d_v
/// \param everyone every rank's result, gathered at rank 0, in the order of the ranks
/// \param same whether the outputs equal chapter 9's heads side by side, bit for bit (printed true or false)
/// \return the text, ending in a blank line
[[nodiscard]] std::string ulysses_text(const RingOptions& options, std::size_t width,
                                       const std::vector<RankResult>& everyone, bool same);

/// \brief Past this machine, on paper: the smallest block of tokens per rank whose transfer hides behind
///        its compute, \f$ b \ge \sigma F / (2 f B) \f$, for an H100 SXM's FP64 and BF16 peaks (2022) over
///        three links, and the longest sequence G devices of 80 GB hold (ring_longest_sequence()).
/// \param share f under the mask: RingTables::smallest_share
/// \return the text, ending in a blank line
[[nodiscard]] std::string ring_on_paper(double share);

/// \brief Writes chapter 17's figures, when the run has a figures folder: the dot products of each rank
///        under the causal mask in each layout (`work-per-rank.svg`) and whose block each rank holds at each
///        step of the ring (`ring-timeline.svg`, ring_block_owner()).
/// \param example the parsed example, with `--figures`
/// \param options the run's G, n and layouts
/// \param work layouts × G, the dot products of each rank
void ring_figures(const Example& example, const RingOptions& options, const Matrix& work);

}  // namespace sa
