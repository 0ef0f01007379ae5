/// \file grouped_options.hpp
/// \brief Chapter 18's options: h query heads, h_kv key/value heads and W_O, read and checked
///        against the reader's W_Q, W_K and W_V, each misfit named by its option in one line;
///        and the defaults that become what the reader's numbers need.
#pragma once

#include <cstddef>
#include <vector>

#include "cli.hpp"
#include "example.hpp"
#include "matrix.hpp"

namespace sa {

/// \brief Chapter 18's command line, read and checked.
struct GroupedOptions {
    std::size_t heads = 1;     ///< h, the query heads (`--query-heads`)
    std::size_t kv_heads = 1;  ///< h_kv, the key/value heads (`--kv-heads`)
    Matrix w_out{};            ///< W_O, one row per column of the h heads' outputs side by side (`--wo`)
};

/// \brief The three options chapter 18 reads beyond the common ones, for ProgramInfo::options.
///
/// A default that no longer fits the reader's numbers becomes what they need (the run's note line
/// says so): 1 query head when W_Q's columns are odd; as many key/value heads as W_K's columns
/// hold heads of the query heads' width; a W_O that adds the heads.
/// \return `--query-heads` (default 2), `--kv-heads` (1) and `--wo` (the two heads added)
[[nodiscard]] std::vector<ProgramOption> grouped_program_options();

/// \brief Reads h, h_kv and W_O, and checks them against W_Q, W_K and W_V: h divides W_Q's
///        columns d_k; h_kv divides h; W_K holds h_kv heads of d_k/h columns; h_kv divides W_V's
///        columns d_v; W_O has h · d_v/h_kv rows.
/// \param example the parsed example, with the three options
/// \return the options
/// \throws UsageError naming the option and the shape it needs, e.g. `--wk: expected 2 columns (h_kv
///         = 1 key head as wide as a query head, d_k/h = 2), got 4`, or as whole_option() and
///         matrix_option() refuse a value
[[nodiscard]] GroupedOptions read_grouped_options(const Example& example);

}  // namespace sa
