/// \file example.hpp
/// \brief The worked example "Mouse eats cheese", and what every chapter program works on.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "matrix.hpp"

namespace sa {

/// \brief Everything a chapter program works on: tokens, embeddings, the three
///        projection matrices, the display options and the chapter's own options.
struct Example {
    std::vector<std::string> tokens;  ///< one name per embedding row
    Matrix embeddings;                ///< E, n×d_model
    Matrix w_query;                   ///< W_Q, d_model×d_k
    Matrix w_key;                     ///< W_K, d_model×d_k
    Matrix w_value;                   ///< W_V, d_model×d_v
    bool causal = false;              ///< apply the causal mask
    int precision = 3;                ///< decimals printed
    long seed = 2017;                 ///< seed of the random experiments
    std::string figures;              ///< folder to write SVG figures into; empty for none
    /// The chapter's own options (ProgramInfo::options), by name, e.g. {`"--heads"`, "2"}:
    /// the text the reader gave, or the option's default. Read them with
    /// matrix_option(), whole_option() and choice_option() from cli.hpp.
    std::map<std::string, std::string, std::less<>> options = {};
    /// The chapter's own options the reader gave on the command line, e.g. {`"--prompt"`}: an
    /// option missing here holds its default in #options.
    std::set<std::string, std::less<>> given = {};
};

/// \brief The worked example "Mouse eats cheese": Mouse [2,0], Eats [1,2], Cheese [2,0];
///        W_Q swaps the two features, W_K and W_V are the identity.
/// \return the example, unmasked, printed at three decimals
[[nodiscard]] Example mouse_eats_cheese();

}  // namespace sa
