/// \file machine.hpp
/// \brief The machine's own limits, measured in the same run as what chapter 13's benchmarks
///        time: its fp64 peak, and the memory a call allocates. Built optimised for this
///        machine, with fused multiply-adds (chapters/13-at-scale/CMakeLists.txt), like the
///        fast kernel; nothing here is printed in a checked output.
#pragma once

#include <cstddef>

namespace sa::bench {

/// \brief The machine's fp64 peak in GFLOP/s, from the fastest run of peak_loop().
struct Peak {
    double wall = 0.0;  ///< operations per second of wall time, over 10^9
    double cpu = 0.0;   ///< operations per second of processor time (every core together), over 10^9
};

/// \brief The fp64 peak's loop: every core runs twelve independent chains of multiply-adds on
///        the widest registers the processor has (eight doubles with AVX-512, four with AVX2,
///        two otherwise), all in registers, so that nothing but the arithmetic units limits it.
///        The caller times it.
/// \param iterations the multiply-adds of each chain
/// \return the operations done, counting a multiply-add as 2: 2 · lanes · 12 · iterations ·
///         threads
double peak_loop(long iterations);

/// \brief Half a second of peak_loop() on every core before anything is timed: a first
///        round of a fraction of a second would otherwise fall while the cores (and, on a
///        virtual machine, the host's scheduler) are still waking from idle.
/// \param iterations the chains' length in each call of peak_loop()
void warm_up(long iterations);

/// \brief An allocation that is counted: a program that measures memory routes its
///        `operator new` here (and its `operator delete` to counted_delete()).
/// \param size the bytes asked for
/// \param alignment the alignment asked for (the aligned forms of `operator new`), or 0
/// \return the block
/// \throws std::bad_alloc when there is no memory
[[nodiscard]] void* counted_new(std::size_t size, std::size_t alignment);

/// \brief Frees a block from counted_new(), with the same alignment.
/// \param pointer the block, or null
/// \param alignment as given to counted_new()
void counted_delete(void* pointer, std::size_t alignment) noexcept;

/// \brief Starts measuring the peak: the peak so far is set to the bytes allocated now.
/// \return the bytes allocated now, for peak_since()
[[nodiscard]] std::size_t start_peak();

/// \brief The most bytes allocated at once since start_peak(), beyond what was allocated then.
/// \param start what start_peak() returned
[[nodiscard]] double peak_since(std::size_t start);

}  // namespace sa::bench
