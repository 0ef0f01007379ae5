// Chapter 13's cache, measured: the last step of decoding N tokens with the KV cache, next to
// a plain read of the same bytes (the step's bandwidth), on one core and on every core; then
// the cache against recomputing the prefix's causal attention with the fast kernel, in rounds
// that time both, and the read, side by side (src/present/bench.hpp). The step's times are
// medians; the comparison's, the minimum of its rounds.
//
//   build/bin/ch13-benchmark-decoding          N = 4096
//   build/bin/ch13-benchmark-decoding --quick  N = 1024
//   build/bin/ch13-benchmark-decoding --smoke  N = 256 (CTest runs it)
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include "bench.hpp"
#include "cli.hpp"
#include "fast_attention.hpp"
#include "masking.hpp"
#include "random.hpp"
#include "tiled.hpp"

namespace {

// A plain streaming read of two arrays on every core, the decoding step's bytes: the
// seconds it takes.
double measure_read(const std::vector<double>& first, const std::vector<double>& second)
{
    double total = 0.0;
    const auto start = std::chrono::steady_clock::now();
    const auto size = static_cast<std::ptrdiff_t>(first.size());
#pragma omp parallel for simd reduction(+ : total)
    for (std::ptrdiff_t i = 0; i < size; ++i) {
        total += first[static_cast<std::size_t>(i)] + second[static_cast<std::size_t>(i)];
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (total == 0.5) {  // never true for these random numbers; keeps the read alive
        fmt::print("\n");
    }
    return seconds;
}

// A cache of N - 1 tokens and the N-th token's query, key and value. A step appends to the
// cache; taking the row off again afterwards (outside the timing) keeps every repetition a
// step from N - 1 to N tokens, with no copy of the cache timed.
struct DecodingRun {
    sa::KvCache prefix = {};
    sa::Matrix query = {};
    sa::Matrix key = {};
    sa::Matrix value = {};

    template <typename Step>
    double time_step(Step step, sa::Matrix& output)
    {
        const std::size_t before = prefix.length();
        const auto start = std::chrono::steady_clock::now();
        output = step(prefix, query, key, value);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        prefix.keys.resize(before * prefix.key_dim);
        prefix.values.resize(before * prefix.value_dim);
        return seconds;
    }
};

struct StepTiming {
    int threads = 1;
    double step = 0.0;  // median seconds of sa::fast_decode_step
    double read = 0.0;  // median seconds of a plain read of the same bytes
};

// The fast step and a plain read of the same bytes, interleaved, on one core and then on
// every core (split-KV). On a busy machine a step on two cores may wait a whole time slice
// for the second one, so both are shown, and the goals take the faster setting.
std::vector<StepTiming> time_fast_steps(DecodingRun& run, sa::Matrix& output)
{
    const int cores = omp_get_max_threads();
    std::vector<StepTiming> timings;
    for (const int threads : {1, cores}) {
        omp_set_num_threads(threads);
        std::vector<double> step_times;
        std::vector<double> read_times;
        for (int repetition = 0; repetition < 51; ++repetition) {  // back to back, as a decoder runs its steps
            step_times.push_back(run.time_step(sa::fast_decode_step, output));
            read_times.push_back(measure_read(run.prefix.keys, run.prefix.values));
        }
        timings.push_back({threads, sa::bench::median(step_times), sa::bench::median(read_times)});
    }
    omp_set_num_threads(cores);
    return timings;
}

struct Against {
    double recomputation = 0.0;  // seconds, the minimum over the rounds
    double step = 0.0;
    double read = 0.0;  // a plain read of the step's bytes, on the same cores as the step
};

// The cache against recomputing: rounds that each time one recomputation of the prefix (every
// core), then 11 cached steps and 11 plain reads of the same bytes (on `threads` cores), so
// that a change of load falls on all three alike; the minimum of each.
Against cache_against_recompute(DecodingRun& run, const sa::Matrix& queries, const sa::Matrix& keys,
                                const sa::Matrix& values, int threads, int rounds)
{
    const int cores = omp_get_max_threads();
    std::vector<double> recomputations;
    std::vector<double> steps;
    std::vector<double> reads;
    sa::Matrix output;
    for (int round = 0; round < rounds; ++round) {
        const auto start = std::chrono::steady_clock::now();
        const sa::Matrix all = sa::fast_attention(queries, keys, values, sa::Masking::causal);
        recomputations.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        omp_set_num_threads(threads);
        for (int step = 0; step < 11; ++step) {
            steps.push_back(run.time_step(sa::fast_decode_step, output));
        }
        for (int read = 0; read < 11; ++read) {
            reads.push_back(measure_read(run.prefix.keys, run.prefix.values));
        }
        omp_set_num_threads(cores);
    }
    return {sa::bench::minimum(recomputations), sa::bench::minimum(steps), sa::bench::minimum(reads)};
}

// The fast step and the plain read on each number of cores; returns the faster setting, with
// the faster read (the machine's streaming bandwidth) in its `read`.
StepTiming print_steps(const std::vector<StepTiming>& timings, double bytes)
{
    StepTiming best = timings.front();
    double fastest_read = timings.front().read;
    for (const StepTiming& timing : timings) {
        fmt::print("  on {} core(s): sa::fast_decode_step {:.3f} ms ({:.1f} GB/s), the read {:.3f} ms ({:.1f} GB/s): "
                   "{:.2f} of the read's speed\n", timing.threads, timing.step * 1e3, bytes / timing.step / 1e9,
                   timing.read * 1e3, bytes / timing.read / 1e9, timing.read / timing.step);
        best = timing.step < best.step ? timing : best;
        fastest_read = std::min(fastest_read, timing.read);
    }
    best.read = fastest_read;
    return best;
}

// The last step of decoding N tokens: with the cache, 4·N·d operations; recomputing the
// prefix's causal attention, 2·N·(N+1)·d. Prints the comparison, then the goals.
void compare_decoding(std::size_t length, std::size_t dim, int rounds)
{
    sa::SplitMix64 generator(length + 1);
    const sa::Matrix queries = sa::random_matrix(length, dim, generator);
    const sa::Matrix keys = sa::random_matrix(length, dim, generator);
    const sa::Matrix values = sa::random_matrix(length, dim, generator);
    DecodingRun run;
    run.query = sa::row_vector(queries, length - 1);
    run.key = sa::row_vector(keys, length - 1);
    run.value = sa::row_vector(values, length - 1);
    for (std::size_t t = 0; t + 1 < length; ++t) {
        static_cast<void>(sa::decode_step(run.prefix, sa::row_vector(queries, t), sa::row_vector(keys, t),
                                          sa::row_vector(values, t)));
    }
    sa::Matrix fast_output;
    const std::vector<StepTiming> timings = time_fast_steps(run, fast_output);
    std::vector<double> plain_times;
    sa::Matrix plain_output;
    for (int repetition = 0; repetition < 51; ++repetition) {
        plain_times.push_back(run.time_step(sa::decode_step, plain_output));
    }
    const double d = static_cast<double>(dim);
    const double big_n = static_cast<double>(length);
    const double bytes = static_cast<double>(sa::cached_step_reads(length, dim, dim)) * 8.0;
    fmt::print("Decoding token N = {} at d = {}: one step with the KV cache ({:.0f} operations, reading {}),\n"
               "next to a plain read of the same bytes (medians of 51 of each, interleaved):\n", length, dim,
               4.0 * big_n * d, sa::bench::bytes_text(bytes));
    const StepTiming best = print_steps(timings, bytes);
    const sa::Matrix reference = sa::row_vector(sa::fast_attention(queries, keys, values, sa::Masking::causal), length - 1);
    const Against against = cache_against_recompute(run, queries, keys, values, best.threads, rounds);
    const double recomputed = 2.0 * big_n * (big_n + 1.0) * d;
    fmt::print("The book's sa::decode_step takes {:.3f} ms (median of 51). Recomputing the prefix's causal attention\n"
               "with the tiled kernel ({:.0f} operations) takes {:.3f} ms and the cached step {:.3f} ms on {} core(s), the\n"
               "minimum of each over {} interleaved rounds (one recomputation, then 11 steps): the cache is {:.0f} times\n"
               "faster (relative difference of the new output: {:.1e} fast, {:.1e} plain).\n",
               sa::bench::median(plain_times) * 1e3, recomputed, against.recomputation * 1e3, against.step * 1e3,
               best.threads, rounds, against.recomputation / against.step,
               sa::bench::largest_relative_difference(fast_output, reference),
               sa::bench::largest_relative_difference(plain_output, reference));
    fmt::print("A step must read its {}: a plain read of them, timed in the same rounds, takes {:.3f} ms, so a\n"
               "step that only read its bytes, as fast as that read, would be {:.0f} times faster than this\n"
               "recomputation: about the most a cache can gain on this machine (the step may come out a little\n"
               "faster or slower than the read, which is no perfect loop either). The ratio of their operations,\n"
               "{:.0f}, would be reached only if memory kept up with the arithmetic; here the recomputation does\n"
               "{:.1f} operations in the time the read takes to deliver one number.\n",
               sa::bench::bytes_text(bytes), against.read * 1e3, against.recomputation / against.read,
               recomputed / (4.0 * big_n * d), (recomputed / against.recomputation) / (bytes / 8.0 / against.read));
    fmt::print("\nGoals, as ratios measured in this run:\n"
               "  decoding at N = {}: the faster step reads at {:.2f} of the faster read's bandwidth (goal: at least 0.5),\n"
               "  and the cache is {:.0f} times faster than recomputing (goal: at least 500 at N = 4096; a step that\n"
               "  only read its bytes, at the speed of the plain read, would be {:.0f} times faster)\n",
               length, best.read / best.step, against.recomputation / against.step,
               against.recomputation / against.read);
}

std::string run_benchmark(const sa::Example& example)
{
    const sa::bench::RunLength length = sa::bench::run_length(example);  // every option checked first
    const std::size_t tokens = length == sa::bench::RunLength::smoke   ? 256
                               : length == sa::bench::RunLength::quick ? 1024
                                                                       : 4096;
    fmt::print("{} cores, load average (1 minute) at the start: {}\n", omp_get_num_procs(),
               sa::bench::load_average_text("/proc/loadavg"));
    compare_decoding(tokens, 64, 5);
    fmt::print("Load average (1 minute) at the end: {}\n", sa::bench::load_average_text("/proc/loadavg"));
    return "";  // printed as it goes
}

}  // namespace

int main(int argc, char** argv)
{
    const sa::ProgramInfo info = sa::bench::benchmark_program(
        "ch13-benchmark-decoding",
        "time a decoding step with the KV cache against a plain read of its bytes and against recomputing", {},
        false);
    return sa::run_program(info, argc, argv, run_benchmark);
}
