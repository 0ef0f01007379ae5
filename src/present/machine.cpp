#include "machine.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace sa::bench {

namespace {

// The widest registers the processor has (this file is built with -march=native): eight doubles
// with AVX-512, four with AVX2, two otherwise. Eight doubles on a processor with 256-bit registers
// would take two registers each, and twelve chains of them more registers than it has: the loop
// would wait on memory (a seventh of the peak, on a processor with AVX2).
#if defined(__AVX512F__)
using Lanes = double __attribute__((vector_size(64)));
#elif defined(__AVX__)
using Lanes = double __attribute__((vector_size(32)));
#else
using Lanes = double __attribute__((vector_size(16)));
#endif
constexpr int lane_count = sizeof(Lanes) / sizeof(double);

std::atomic<std::size_t> allocated_now{0};
std::atomic<std::size_t> allocated_peak{0};

// The size is kept in a header before the block, as wide as the alignment, so that the block
// stays aligned and the matching delete knows what to take off.
constexpr std::size_t plain_header = 16;

void count(std::size_t size)
{
    const std::size_t now = allocated_now.fetch_add(size) + size;
    std::size_t peak = allocated_peak.load();
    while (now > peak && !allocated_peak.compare_exchange_weak(peak, now)) {
    }
}

}  // namespace

double peak_loop(long iterations)
{
    constexpr int chains = 12;
    volatile double factor_source = 0.999999999;  // unknown to the compiler: it cannot fold the chains
    const double factor = factor_source;
    double total = 0.0;
    int threads = 1;
#pragma omp parallel reduction(+ : total)
    {
#ifdef _OPENMP
#pragma omp single
        threads = omp_get_num_threads();
#endif
        Lanes sums[chains];
        for (int c = 0; c < chains; ++c) {
            sums[c] = Lanes{} + (1.0 + static_cast<double>(c));
        }
        for (long i = 0; i < iterations; ++i) {
            for (int c = 0; c < chains; ++c) {
                sums[c] = sums[c] * factor + 1e-9;
            }
        }
        for (int c = 0; c < chains; ++c) {
            total += sums[c][0];
        }
    }
    if (total == 0.0) {  // never true; keeps the sums alive
        std::fputs("\n", stdout);
    }
    return 2.0 * lane_count * chains * static_cast<double>(iterations) * threads;
}

void warm_up(long iterations)
{
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500)) {
        static_cast<void>(peak_loop(iterations));
    }
}

void* counted_new(std::size_t size, std::size_t alignment)
{
    const std::size_t header = alignment > plain_header ? alignment : plain_header;
    void* block = alignment > plain_header ? std::aligned_alloc(alignment, (size + 2 * alignment - 1) / alignment * alignment)
                                           : std::malloc(size + plain_header);
    if (block == nullptr) {
        throw std::bad_alloc();
    }
    *static_cast<std::size_t*>(block) = size;
    count(size);
    return static_cast<char*>(block) + header;
}

void counted_delete(void* pointer, std::size_t alignment) noexcept
{
    if (pointer != nullptr) {
        void* block = static_cast<char*>(pointer) - (alignment > plain_header ? alignment : plain_header);
        allocated_now.fetch_sub(*static_cast<std::size_t*>(block));
        std::free(block);
    }
}

std::size_t start_peak()
{
    const std::size_t before = allocated_now.load();
    allocated_peak.store(before);
    return before;
}

double peak_since(std::size_t start)
{
    return static_cast<double>(allocated_peak.load() - start);
}

}  // namespace sa::bench
