/// \file latent_model.hpp
/// \brief Chapter 20: chapter 14's character model with latent attention in its one layer, to train
///        beside chapter 14's and chapter 18's models on the same windows.
///
/// The stream, the embedding, the unembedding and the causal windows are chapter 14's; the layer is
/// latent_self_attention() (chapter 20) on each window, its positions counted from 0, added to the
/// stream: \f$ Y = X + \mathrm{Latent}(X) \f$. Each head's content queries and keys are
/// \f$ d_h = d/h \f$ wide and carry no position; its rotary part, \f$ d_R \f$ wide, carries all of it.
/// The values are \f$ d/h \f$ wide per head, as chapter 14's.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "adam.hpp"
#include "language_model.hpp"
#include "latent_attention.hpp"
#include "matrix.hpp"
#include "random.hpp"

namespace sa {

/// \brief The sizes of a latent model.
struct LatentModelShape {
    std::size_t vocabulary = 0;  ///< V
    std::size_t width = 64;      ///< d
    std::size_t heads = 4;       ///< h; d/h is each head's content width and value width
    std::size_t context = 64;    ///< the longest window
    std::size_t latent = 16;     ///< \f$ d_c \f$, from 1 to d
    std::size_t rotary = 8;      ///< \f$ d_R \f$, even, at least 2
};

/// \brief A character model whose one layer is latent attention; also the shape of its gradient.
struct LatentModel {
    LatentModelShape shape = {};  ///< the sizes
    Matrix embedding = {};        ///< W_E, V×d
    LatentWeights layer = {};     ///< the layer, \f$ W_O \f$ d×d
    Matrix unembedding = {};      ///< W_U, d×V
};

/// \brief The parameters of a latent model:
///        \f$ 2 V d + 2 d^2 \f$ (W_E, W_U; W_Q, W_O) \f$ + d\,h\,d_R + d\,d_R \f$ (W_QR, W_KR)
///        \f$ + d\,d_c + 2\,d_c\,d \f$ (W_DKV; W_UK, W_UV).
/// \param shape the sizes
/// \return the count, e.g. 21888 for V = 63, d = 64, h = 4, \f$ d_c = 16 \f$, \f$ d_R = 8 \f$
[[nodiscard]] std::size_t latent_parameter_count(const LatentModelShape& shape);

/// \brief A latent model at its random start, drawn in the order of latent_parameters().
///
/// Entries are SplitMix64::unit_variance() times a spread: 1 for W_E, \f$ 1/\sqrt d \f$ for the
/// matrices that read the stream (W_Q, W_QR, W_DKV, W_KR) and for W_O, \f$ 1/\sqrt{d_c} \f$ for
/// W_UK and W_UV (they read the latent), 0.01 for W_U.
/// \param shape the sizes
/// \param generator advances by one draw per entry
/// \return the model
/// \throws std::invalid_argument if V is below 2, h does not divide d, \f$ d_c \f$ is 0 or above d,
///         or \f$ d_R \f$ is odd or 0; the message names the sizes, e.g. "random_latent_model: d_c = 65
///         for d = 64; the latent is narrower than the model, 1 ≤ d_c ≤ d"
[[nodiscard]] LatentModel random_latent_model(const LatentModelShape& shape, SplitMix64& generator);

/// \brief Every parameter matrix, in the order W_E, W_Q, W_QR, W_DKV, W_UK, W_UV, W_KR, W_O, W_U.
/// \param model the model
/// \return pointers into the model
[[nodiscard]] std::vector<Matrix*> latent_parameters(LatentModel& model);

/// \brief The names of the parameters, in the order of latent_parameters(), as a model file names
///        them: "embedding", "layers.0.w_query", "layers.0.w_query_rotary", "layers.0.w_down",
///        "layers.0.w_up_key", "layers.0.w_up_value", "layers.0.w_key_rotary", "layers.0.w_out",
///        "unembedding".
/// \return the names
[[nodiscard]] std::vector<std::string> latent_parameter_names();

/// \brief The logits of windows of tokens: each window of \p window rows is a piece of text of its
///        own, its positions counted from 0.
/// \param model the model
/// \param tokens the input tokens, windows one after another (the last may be shorter)
/// \param window the rows of each window, at least 1
/// \return Z, N×V
/// \throws std::invalid_argument if there are no tokens or the window is 0
[[nodiscard]] Matrix latent_logits(const LatentModel& model, const std::vector<std::size_t>& tokens,
                                   std::size_t window);

/// \brief The gradient of the mean cross-entropy of a batch at every parameter.
///
/// Each window goes back through its heads with head_backward_tiled() (chapter 14's kernel, on
/// heads of width \f$ d_h + d_R \f$ whose values are padded with \f$ d_R \f$ zeros), then through
/// the steps latent_self_attention_backward() documents; the residual passes dY on unchanged.
/// \param model the model
/// \param batch the windows and their targets
/// \param loss where the batch's loss before any step is written; may be null
/// \return the gradient, in a model's shape
[[nodiscard]] LatentModel latent_gradient(const LatentModel& model, const Batch& batch, double* loss);

/// \brief The model's mean cross-entropy on a batch, in nats per character, 16 windows at a time.
/// \param model the model
/// \param batch the windows and their targets
/// \return the loss
[[nodiscard]] double evaluate_latent(const LatentModel& model, const Batch& batch);

/// \brief A latent model with Adam's moments and step count.
struct LatentTrainer {
    LatentModel model;                  ///< the parameters
    std::vector<AdamMoments> moments;   ///< one per parameter, in the order of latent_parameters()
    AdamSettings settings;              ///< Adam's settings
    std::size_t steps = 0;              ///< steps taken
};

/// \brief A trainer for a latent model: zero moments, no step taken.
/// \param model the model
/// \param settings Adam's settings
/// \return the trainer
[[nodiscard]] LatentTrainer make_latent_trainer(LatentModel model, const AdamSettings& settings);

/// \brief One training step: latent_gradient(), then adam_step() on every parameter.
/// \param trainer the model and its optimiser; changed in place
/// \param batch the windows to learn from
/// \return the loss on the batch before the step
double latent_training_step(LatentTrainer& trainer, const Batch& batch);

}  // namespace sa
