// The worked example "Mouse eats cheese" as the chapter tests use it: its tokens by name
// and the quantities several chapters check, each derived from the math, never copied
// from a program's output.
#pragma once

#include <cmath>
#include <cstddef>

namespace worked {

// The programs print 3 decimals, so a printed number is within half a unit of the last place.
constexpr double printed = 0.0005;

// Rows and columns by token, as the chapters speak of them ("row Mouse, column Eats" is the
// prose's row 1, column 2). In the code, as in C++, the first row is row 0.
constexpr std::size_t mouse = 0;
constexpr std::size_t eats = 1;
constexpr std::size_t cheese = 2;
inline const char* const token_names[] = {"Mouse", "Eats", "Cheese"};

// Every score of 4 (q·k = 0·1 + 2·2 for Mouse asking about Eats, 2·2 + 1·0 for Eats asking
// about Mouse) divided by √d_k = √2: 4/√2 = 2√2 ≈ 2.828.
inline const double two_root_two = 4.0 / std::sqrt(2.0);

// The softmax of the row [0, 2√2, 0] that Mouse and Cheese share: the two scores of 0 give
// e^0 = 1 each and Eats gives e^(2√2) ≈ 16.919, out of 2 + e^(2√2) ≈ 18.919.
inline const double e_two_root_two = std::exp(two_root_two);
inline const double small_weight = 1.0 / (2.0 + e_two_root_two);           // ≈ 0.0529, on Mouse and Cheese
inline const double big_weight = e_two_root_two / (2.0 + e_two_root_two);  // ≈ 0.8943, on Eats

}  // namespace worked
