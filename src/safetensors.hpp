/// \file safetensors.hpp
/// \brief Chapter 14: a language model saved to and loaded from the safetensors format, which
///        the safetensors package reads (into PyTorch, NumPy and others; PyTorch alone does not).
///
/// A file is: 8 bytes, the header's length N as a little-endian unsigned 64-bit number; N bytes
/// of JSON, padded with spaces to a multiple of 8; then the tensors' data, one after another. The
/// JSON names each tensor with its dtype (here always "F64", little-endian IEEE doubles), its
/// shape and its data_offsets [begin, end) in bytes from the start of the data, plus a
/// "__metadata__" object of strings: the vocabulary, the heads and the context, and "kv_heads",
/// \f$ h_{kv} \f$, only where the query heads share key/value heads (chapter 18).
///
/// The tensors, in the order save_safetensors() writes them (d the width, V the vocabulary, l = 0, 1, …
/// the layers):
/// "embedding" [V, d] (W_E); "layers.l.w_query" and "layers.l.w_out", each [d, d];
/// "layers.l.w_key" and "layers.l.w_value", each [d, \f$ h_{kv} \f$ d/h] (that is [d, d] without
/// "kv_heads"); "unembedding" [d, V] (W_U). Each is stored row by row.
#pragma once

#include <string>

#include "language_model.hpp"
#include "latent_model.hpp"

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

/// \brief Reads a model from the bytes of a safetensors file written by save_safetensors(), or by
///        any writer that gives the same tensors with the book's metadata.
///
/// Everything is checked before it is used: the length and the JSON of the header, the
/// metadata, that the tensors are exactly those of a model of 1 to 64 layers, each F64 with the
/// shape the vocabulary, the width and the heads require (with "kv_heads", a divisor of the heads,
/// W_K and W_V of that many heads), that their data, in any order, cover
/// the rest of the file with no gap and no overlap (the format's rule; Hugging Face's writer,
/// for one, orders the tensors by dtype and then by name), and that every number is finite.
/// A file of only "embedding" and "unembedding" (no layer, the bigram) is refused: "the header
/// has 2 tensors; a model of L layers has 4 L + 2, with L from 1 to 64".
/// \param bytes the file's bytes
/// \return the model and its vocabulary
/// \throws std::invalid_argument with one line naming the first problem, e.g. "the file is
///         truncated: its header says 1280 bytes of JSON, but only 40 bytes follow"
[[nodiscard]] SavedModel load_safetensors(const std::string& bytes);

/// \brief Chapter 20's latent model as the bytes of a safetensors file: its nine tensors, in the
///        order and with the names of latent_parameter_names(), F64, row by row; the metadata holds
///        the vocabulary and, as whole numbers in strings, "heads", "context", "latent"
///        (\f$ d_c \f$) and "rotary" (\f$ d_R \f$).
/// \param model the model
/// \param vocabulary its characters, token 0 first; one per row of W_E
/// \return the file's bytes
/// \throws std::invalid_argument if the vocabulary does not have one character per row of W_E
[[nodiscard]] std::string save_latent_safetensors(const LatentModel& model, const std::string& vocabulary);

/// \brief A latent model read from a file, with the vocabulary it was trained on.
struct SavedLatentModel {
    LatentModel model;       ///< the parameters and the shape
    std::string vocabulary;  ///< the characters, in the order of the tokens
};

/// \brief Reads a latent model from the bytes of a file written by save_latent_safetensors(),
///        checking everything load_safetensors() checks, with the latent's shapes.
/// \param bytes the file's bytes
/// \return the model and its vocabulary
/// \throws std::invalid_argument with one line naming the first problem, e.g. "the header has 6
///         tensors; a latent model has 9: embedding, layers.0.w_query, …", or "the header's
///         __metadata__ gives latent = 65; expected 1 to 64"
[[nodiscard]] SavedLatentModel load_latent_safetensors(const std::string& bytes);

}  // namespace sa
