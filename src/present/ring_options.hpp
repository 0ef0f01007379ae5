/// \file ring_options.hpp
/// \brief Chapter 17's options: the ranks, the length and the layouts of the sharded run and the heads of
///        the Ulysses run, read and checked before MPI starts, so a refused command line ends every
///        process alike.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "example.hpp"
#include "ring_attention.hpp"

namespace sa {

/// \brief Chapter 17's command line, read and checked.
struct RingOptions {
    std::size_t ranks = 1;           ///< G, the ranks of the sharded run (`--ranks`)
    std::size_t length = 1;          ///< n, the tokens of the sharded run (`--length`)
    std::size_t heads = 1;           ///< h, the heads of the Ulysses run (`--ulysses-heads`)
    std::size_t stop_rank = 0;       ///< the rank made to fail at its first send (`--stop-rank`); SIZE_MAX for none
    std::vector<Layout> layouts{};   ///< the sharded run's layouts (`--layout`): one, or all three
};

/// \brief Reads chapter 17's options: G from 1 to 64, n from 1 to 4096 and at least G, h from 1 to 24, a
///        multiple of G that divides d, and one layout or all.
/// \param example the parsed example, with the program's options
/// \param width d = d_k = d_v of the sharded run
/// \return the options
/// \throws UsageError in one line for n < G or h that does not split between the ranks, or as
///         whole_option() and choice_option() refuse a value
[[nodiscard]] RingOptions read_ring_options(const Example& example, std::size_t width);

/// \brief The default of `--ulysses-heads` where the book's 4 does not fit `--ranks` G: G itself (one head per
///        rank); "" when G divides 4, G does not divide d, or `--ranks` is not a number (refused on its own).
/// \param example the parsed example, with `--ranks`
/// \param width d = d_k = d_v of the sharded run
[[nodiscard]] std::string fit_ulysses_heads(const Example& example, std::size_t width);

}  // namespace sa
