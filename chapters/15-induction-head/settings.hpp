// Chapter 15's settings, shared by its three programs: the training (main.cpp) and the two that
// read its saved models (circuit.cpp, copying.cpp).
#pragma once

#include <cstddef>

#include "circuits.hpp"

namespace ch15 {

//> settings
constexpr std::size_t width = 64;              // d, the width of the residual stream
constexpr std::size_t context = 64;            // the characters of a window: 32 letters twice
constexpr std::size_t batch_windows = 16;      // windows in one training step
constexpr sa::LetterMix letter_mix{.every = 4, .shortest = 8, .longest = 32};  // a quarter of the windows:
                                               // letters cycled with a period from 8 to 32 (see the prose)
constexpr std::size_t test_windows = 16;       // repeated-letter sequences the circuit is scored on
constexpr std::size_t held_out_windows = 128;  // windows measured, spread evenly over the held-out text
constexpr std::size_t checkpoint_every = 10;   // steps between two scorings while training
constexpr std::size_t printed_every = 250;     // steps between two printed rows of the phase change
constexpr double learning_rate = 1e-2;         // Adam's α
constexpr double score_threshold = 0.4;        // the induction score the chapter looks for
constexpr std::size_t shorter_period = 24;     // the check that the head matches letters, not places
//< settings

constexpr std::size_t copy_heads = 2;          // the copying model: two heads of 32 features a layer
constexpr sa::LetterMix text_mix{.every = 2, .shortest = 8, .longest = 32,  // every other window: a span
                                 .repeated = sa::Repeated::text};           // of the text, repeated
constexpr double copy_learning_rate = 3e-3;    // Adam's α once the letters have grown the circuit
constexpr std::size_t span_windows = 256;      // held-out windows, each with a span copied later in it
constexpr std::size_t span_shortest = 8;       // the spans' lengths
constexpr std::size_t span_longest = 24;
constexpr std::size_t span_skip = 3;           // a copy is measured from its fourth character on
constexpr std::size_t prefix_windows = 3000;   // the prefix table's held-out windows
constexpr std::size_t prefix_first = 8;        // and its first position in each
constexpr std::size_t ngram_order = 5;         // the counted model the copy is compared with
constexpr std::size_t rule_shortest[] = {1, 2, 3, 4, 6, 8};        // the copying rule's settings tried
constexpr double rule_weights[] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99};  // on the
                                                                                       // validation windows
constexpr double mix_budget = 0.1;             // what the letters mix may cost on held-out text, nats per character

}  // namespace ch15
