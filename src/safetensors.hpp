/// \file safetensors.hpp
/// \brief Chapter 14: a language model saved to and loaded from the safetensors format, which
///        PyTorch and its ecosystem read.
///
/// A file is: 8 bytes, the header's length N as a little-endian unsigned 64-bit number; N bytes
/// of JSON, padded with spaces to a multiple of 8; then the tensors' data, one after another. The
/// JSON names each tensor with its dtype (here always "F64", little-endian IEEE doubles), its
/// shape and its data_offsets [begin, end) in bytes from the start of the data, plus a
/// "__metadata__" object of strings: the vocabulary, the heads and the context.
///
/// The tensors, in the file's order (d the width, V the vocabulary, l = 0, 1, … the layers):
/// "embedding" [V, d] (W_E); "layers.l.w_query", "layers.l.w_key", "layers.l.w_value",
/// "layers.l.w_out", each [d, d]; "unembedding" [d, V] (W_U). Each is stored row by row.
#pragma once

#include <string>

#include "language_model.hpp"

namespace sa {

/// \brief A model read from a file, with the vocabulary it was trained on.
struct SavedModel {
    LanguageModel model;     ///< the parameters and the shape
    std::string vocabulary;  ///< the characters, in the order of the tokens
};

/// \brief A model as the bytes of a safetensors file.
/// \param model the model
/// \param vocabulary its characters, token 0 first; one per row of W_E
/// \return the file's bytes
/// \throws std::invalid_argument if the vocabulary does not have one character per row of W_E
[[nodiscard]] std::string save_safetensors(const LanguageModel& model, const std::string& vocabulary);

/// \brief Reads a model from the bytes of a safetensors file written by save_safetensors().
///
/// Everything is checked before it is used: the length and the JSON of the header, the
/// metadata, that the tensors are exactly those of a model with its layers, each F64 with the
/// shape the vocabulary, the width and the heads require, that their data lie one after another
/// and fill the rest of the file, and that every number is finite.
/// \param bytes the file's bytes
/// \return the model and its vocabulary
/// \throws std::invalid_argument with one line naming the first problem, e.g. "the file is
///         truncated: its header says 1280 bytes of JSON, but only 40 bytes follow"
[[nodiscard]] SavedModel load_safetensors(const std::string& bytes);

}  // namespace sa
