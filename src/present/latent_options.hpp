/// \file latent_options.hpp
/// \brief Chapter 20's options: the latent attention's matrices read from the command line, their
///        defaults fitted to the reader's embeddings, and each misfit refused in one line.
#pragma once

#include <cstddef>
#include <string>

#include "cli.hpp"
#include "example.hpp"
#include "latent_attention.hpp"

namespace sa {

/// \brief The default of `--heads` where the book's does not fit: "1" when W_Q's columns are odd, else ""
///        (the book's 2 fits).
/// \param example the parsed example, with the reader's W_Q
[[nodiscard]] std::string fit_latent_heads(const Example& example);

/// \brief The default of `--wdkv` where the book's does not fit: a latent of one number, the mean of the d
///        features (d×1, every entry 1/d); "" when d = 2.
/// \param example the parsed example, with the reader's embeddings
[[nodiscard]] std::string fit_latent_down(const Example& example);

/// \brief The default of `--wuk` where the book's does not fit: latent feature r read into feature r mod d_h of
///        every head (d_c×(h·d_h), 0 or 1); "" when d_c = 1 and W_Q has 4 columns.
/// \param example the parsed example, with `--wdkv`, `--heads` and W_Q
[[nodiscard]] std::string fit_latent_up_key(const Example& example);

/// \brief The default of `--wuv` where the book's does not fit: head a's value is a + 1 times the first latent
///        feature (d_c×h); "" when d_c = 1 and h = 2.
/// \param example the parsed example, with `--wdkv` and `--heads`
[[nodiscard]] std::string fit_latent_up_value(const Example& example);

/// \brief The default of `--wkr` where the book's does not fit: the first two features as the rotary key
///        (d×2, an identity on top); "" when d = 2.
/// \param example the parsed example, with the reader's embeddings
[[nodiscard]] std::string fit_latent_key_rotary(const Example& example);

/// \brief The default of `--wqr` where the book's does not fit: W_KR's pattern in every head (d×(h·d_R));
///        "" when d = 2, d_R = 2 and h = 2.
/// \param example the parsed example, with the embeddings, `--wkr` and `--heads`
[[nodiscard]] std::string fit_latent_query_rotary(const Example& example);

/// \brief The default of `--wo` where the book's does not fit: the identity, one row per column of `--wuv`;
///        "" when it has 2 columns.
/// \param example the parsed example, with `--wuv`
[[nodiscard]] std::string fit_latent_out(const Example& example);

/// \brief The latent attention's weights as the reader gave them: W_Q (`--wq`), W_QR, W_DKV, W_UK, W_UV, W_KR
///        and W_O (`--wqr`, `--wdkv`, `--wuk`, `--wuv`, `--wkr`, `--wo`).
/// \param example the parsed example
/// \return the weights, not yet checked against each other (check_latent_options() does that)
/// \throws UsageError if an option's text is not a matrix
[[nodiscard]] LatentWeights latent_weights_option(const Example& example);

/// \brief Checks the reader's matrices against each other and the embeddings: d_c from 1 to d, h dividing W_Q's
///        columns, W_UK d_c×(h·d_h), W_UV d_c rows and a multiple of h columns, W_KR d×d_R with d_R even,
///        W_QR d×(h·d_R) and W_O with a row per column of W_UV.
/// \param example the parsed example, with the embeddings and W_Q
/// \param w the weights latent_weights_option() read
/// \param heads h
/// \throws UsageError naming the option and the shape expected, e.g. `--wdkv: it is 2×3; expected d×d_c with d =
///         2 rows (one per embedding feature) and 1 ≤ d_c ≤ 2 columns (the latent is narrower than the token)`
void check_latent_options(const Example& example, const LatentWeights& w, std::size_t heads);

}  // namespace sa
