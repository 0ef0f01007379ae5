// Included before every file of the playground build (first in common.hpp, its precompiled
// header). Debian 12's emscripten (3.1.6) ships a libc++ older than the C++20 parts the library
// uses; this adds what it lacks, with the compiler's own builtins, and nothing when it is there.
#pragma once

#include <bit>
#include <type_traits>

#if !defined(__cpp_lib_bit_cast)
namespace std {
// As C++20's std::bit_cast: the same bits, read as another trivially copyable type of the same size.
template <class To, class From>
    requires(sizeof(To) == sizeof(From) && is_trivially_copyable_v<To> && is_trivially_copyable_v<From>)
constexpr To bit_cast(const From& from) noexcept
{
    return __builtin_bit_cast(To, from);
}
}  // namespace std
#endif
