// Chapter 13's benchmark: the book's attention(), the baseline a practitioner would write
// (OpenBLAS's dgemm for the two products, a softmax in between) and the fast tiled kernel,
// side by side in one run, at d = 64 in doubles, each as a share of the machine's fp64
// peak measured in the same run; then KV-cache decoding, next to a plain read of the same
// bytes and against recomputing the prefix; then one training step of chapter 15's model,
// sa::training_step next to the same step through the book's step functions. The kernels' times are the minimum of runs
// interleaved round by round (timing.hpp), the decoding step's medians; memory is the peak
// the call allocates.
//
//   build/bin/ch13-benchmark                 the full comparison, n = 512 to 8192, and n = 16384 tiled only
//   build/bin/ch13-benchmark --quick --figures DIR   a short run for the book's figures
//   build/bin/ch13-benchmark --sizes 1024,4096   only these sizes
//   build/bin/ch13-benchmark --all           also the step-by-step reference above n = 4096 (slow)
//   build/bin/ch13-benchmark --smoke         a few seconds at small n (CTest runs it)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <fstream>
#include <functional>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <cblas.h>
#include <fmt/format.h>
#include <omp.h>

#include "adam.hpp"
#include "attention.hpp"
#include "cli.hpp"
#include "cross_entropy.hpp"
#include "dense.hpp"
#include "embedding.hpp"
#include "fast_attention.hpp"
#include "language_model.hpp"
#include "masking.hpp"
#include "multi_head.hpp"
#include "multi_head_backward.hpp"
#include "positions.hpp"
#include "projection.hpp"
#include "random.hpp"
#include "svg.hpp"
#include "tiled.hpp"
#include "timing.hpp"

// ---- Every allocation through operator new is counted, so each call's peak is known.
namespace {
std::atomic<std::size_t> allocated_now{0};
std::atomic<std::size_t> allocated_peak{0};

void* counted_allocation(std::size_t size)
{
    void* block = std::malloc(size + 16);
    if (block == nullptr) {
        throw std::bad_alloc();
    }
    *static_cast<std::size_t*>(block) = size;  // remembered for the matching delete
    const std::size_t now = allocated_now.fetch_add(size) + size;
    std::size_t peak = allocated_peak.load();
    while (now > peak && !allocated_peak.compare_exchange_weak(peak, now)) {
    }
    return static_cast<char*>(block) + 16;
}

void counted_release(void* pointer) noexcept
{
    if (pointer != nullptr) {
        void* block = static_cast<char*>(pointer) - 16;
        allocated_now.fetch_sub(*static_cast<std::size_t*>(block));
        std::free(block);
    }
}
// The same for an over-aligned allocation (the fast kernel's arrays start on a cache
// line): the size is kept in a header as wide as the alignment, so the block stays aligned.
void* counted_aligned_allocation(std::size_t size, std::align_val_t alignment)
{
    const auto align = static_cast<std::size_t>(alignment);
    void* block = std::aligned_alloc(align, (size + 2 * align - 1) / align * align);
    if (block == nullptr) {
        throw std::bad_alloc();
    }
    *static_cast<std::size_t*>(block) = size;
    const std::size_t now = allocated_now.fetch_add(size) + size;
    std::size_t peak = allocated_peak.load();
    while (now > peak && !allocated_peak.compare_exchange_weak(peak, now)) {
    }
    return static_cast<char*>(block) + align;
}

void counted_aligned_release(void* pointer, std::align_val_t alignment) noexcept
{
    if (pointer != nullptr) {
        void* block = static_cast<char*>(pointer) - static_cast<std::size_t>(alignment);
        allocated_now.fetch_sub(*static_cast<std::size_t*>(block));
        std::free(block);
    }
}
}  // namespace

void* operator new(std::size_t size) { return counted_allocation(size); }
void* operator new[](std::size_t size) { return counted_allocation(size); }
void operator delete(void* pointer) noexcept { counted_release(pointer); }
void operator delete[](void* pointer) noexcept { counted_release(pointer); }
void operator delete(void* pointer, std::size_t) noexcept { counted_release(pointer); }
void operator delete[](void* pointer, std::size_t) noexcept { counted_release(pointer); }
void* operator new(std::size_t size, std::align_val_t alignment) { return counted_aligned_allocation(size, alignment); }
void* operator new[](std::size_t size, std::align_val_t alignment) { return counted_aligned_allocation(size, alignment); }
void operator delete(void* pointer, std::align_val_t alignment) noexcept { counted_aligned_release(pointer, alignment); }
void operator delete[](void* pointer, std::align_val_t alignment) noexcept { counted_aligned_release(pointer, alignment); }
void operator delete(void* pointer, std::size_t, std::align_val_t alignment) noexcept
{
    counted_aligned_release(pointer, alignment);
}
void operator delete[](void* pointer, std::size_t, std::align_val_t alignment) noexcept
{
    counted_aligned_release(pointer, alignment);
}

namespace {

struct Measurement {
    double seconds = 0.0;      // the median
    double cpu_seconds = 0.0;  // the median of the processor time the whole process spent, every core together
    double bytes = 0.0;        // the peak extra allocation of one call
    sa::Matrix result = {};
};

// The processor time this process has used so far, all its threads together. On a busy
// machine a run's wall time includes the time other programs held the cores; this does not.
double cpu_seconds()
{
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

std::vector<double> contiguous(const sa::Matrix& matrix)
{
    std::vector<double> data(matrix.rows() * matrix.cols());
    for (std::size_t r = 0; r < matrix.rows(); ++r) {
        for (std::size_t c = 0; c < matrix.cols(); ++c) {
            data[r * matrix.cols() + c] = matrix(r, c);
        }
    }
    return data;
}

// ---- The machine's own limits, measured in the same run as the kernels.
using Lanes = double __attribute__((vector_size(64)));  // eight doubles, as in the kernel

// The fp64 peak: every core runs twelve independent chains of multiply-adds on eight
// doubles each, all in registers, so that nothing but the arithmetic units limits it.
// Returns the operations done, counting a multiply-add as 2; the caller times it.
struct Peak {
    double wall = 0.0;  // GFLOP/s per second of wall time
    double cpu = 0.0;   // GFLOP/s per second of processor time, every core together
};

double run_peak_loop(long iterations)
{
    constexpr int chains = 12;
    volatile double factor_source = 0.999999999;  // unknown to the compiler: it cannot fold the chains
    const double factor = factor_source;
    double total = 0.0;
    int threads = 1;
#pragma omp parallel reduction(+ : total)
    {
#pragma omp single
        threads = omp_get_num_threads();
        Lanes sums[chains];
        for (int c = 0; c < chains; ++c) {
            sums[c] = Lanes{} + 1.0 + c;
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
        fmt::print("\n");
    }
    return 2.0 * 8.0 * chains * static_cast<double>(iterations) * threads;
}

// Half a second of the peak loop on every core before anything is timed: the first size's
// rounds, a fraction of a second in all, would otherwise fall while the cores (and, on a
// virtual machine, the host's scheduler) are still waking from the build or from idle.
void warm_up(long iterations)
{
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500)) {
        static_cast<void>(run_peak_loop(iterations));
    }
}

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

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// The baseline: S = Q·Kᵀ/√d with dgemm, a row-wise softmax, O = A·V with dgemm.
sa::Matrix openblas_attention(const sa::Matrix& queries, const sa::Matrix& keys, const sa::Matrix& values)
{
    const auto n = static_cast<int>(queries.rows());
    const auto m = static_cast<int>(keys.rows());
    const auto d_k = static_cast<int>(queries.cols());
    const auto d_v = static_cast<int>(values.cols());
    const std::vector<double> q = contiguous(queries);
    const std::vector<double> k = contiguous(keys);
    const std::vector<double> v = contiguous(values);
    std::vector<double> scores(static_cast<std::size_t>(n) * static_cast<std::size_t>(m));  // n×m: the memory at stake
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, m, d_k, 1.0 / std::sqrt(static_cast<double>(d_k)),
                q.data(), d_k, k.data(), d_k, 0.0, scores.data(), m);
    for (int i = 0; i < n; ++i) {
        double* row = &scores[static_cast<std::size_t>(i) * static_cast<std::size_t>(m)];
        const double row_max = *std::max_element(row, row + m);
        double total = 0.0;
        for (int j = 0; j < m; ++j) {
            row[j] = std::exp(row[j] - row_max);
            total += row[j];
        }
        for (int j = 0; j < m; ++j) {
            row[j] /= total;
        }
    }
    std::vector<double> out(static_cast<std::size_t>(n) * static_cast<std::size_t>(d_v));
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, d_v, m, 1.0, scores.data(), m, v.data(), d_v, 0.0,
                out.data(), d_v);
    sa::Matrix outputs(queries.rows(), values.cols());
    for (std::size_t i = 0; i < outputs.rows(); ++i) {
        for (std::size_t c = 0; c < outputs.cols(); ++c) {
            outputs(i, c) = out[i * outputs.cols() + c];
        }
    }
    return outputs;
}

// max |result - reference| / max |reference|: relative to the size of the outputs, so an
// output that happens to be near 0 does not blow it up.
double largest_relative_difference(const sa::Matrix& result, const sa::Matrix& reference)
{
    return sa::largest_difference(result, reference) / sa::largest_magnitude(reference);
}

struct Settings {
    std::vector<std::size_t> sizes = {512, 1024, 2048, 4096, 8192};
    std::size_t tiled_only = 16384;         // a size at which only the tiled kernel runs; 0 for none
    std::size_t step_by_step_limit = 4096;  // the largest n for the book's attention(), the slowest by far
    std::size_t dim = 64;
    int repetitions = 5;  // as many as --quick: on a shared machine the minimum of more runs is the steadier figure
    std::size_t decode_length = 4096;
    std::string figures = {};
    long peak_iterations = 10000000;  // about 20 ms per core on a quiet machine
    std::size_t training_windows = 16;  // the windows of the timed training step: chapter 15's batch
};

struct Row {
    std::size_t n = 0;
    std::string method = {};
    Measurement measurement = {};  // the minimum of the runs
    Peak peak = {};                // the machine's fp64 peak, from the fastest of the peak loop's runs at this n
    std::vector<double> seconds = {};  // every run's wall time, in round order
};

// The share of the peak a row reaches: by wall time, and by processor time (every core together).
Peak share_of_peak(const Row& row, std::size_t dim)
{
    const double operations = 4.0 * static_cast<double>(row.n) * static_cast<double>(row.n) * static_cast<double>(dim);
    return {operations / row.measurement.seconds / 1e9 / row.peak.wall,
            operations / row.measurement.cpu_seconds / 1e9 / row.peak.cpu};
}

constexpr double mebibyte = 1024.0 * 1024.0;
constexpr long largest_size = 32768;  // the baseline's n×n scores alone: 8 GiB

// A size in bytes for a sentence: "512 KiB", "2048 MiB", never "0 MiB".
std::string bytes_text(double bytes)
{
    return bytes < mebibyte ? fmt::format("{:.0f} KiB", bytes / 1024.0) : fmt::format("{:.0f} MiB", bytes / mebibyte);
}

void print_row(const Row& row, std::size_t dim, const sa::Matrix& reference)
{
    const double operations = 4.0 * static_cast<double>(row.n) * static_cast<double>(row.n) * static_cast<double>(dim);
    const std::string agreement =
        reference.empty() ? "(reference)" : fmt::format("{:.1e}", largest_relative_difference(row.measurement.result, reference));
    const Peak share = share_of_peak(row, dim);
    fmt::print("{:>6}  {:<20} {:>11.2f} {:>9.2f} {:>7.3f} {:>7.3f} {:>12.2f}   {}\n", row.n, row.method,
               row.measurement.seconds * 1e3, operations / row.measurement.seconds / 1e9, share.wall, share.cpu,
               row.measurement.bytes / mebibyte, agreement);
    std::fflush(stdout);
}

// The figure draws the ratios of the methods' minima (each method's time over the tiled
// kernel's). It draws an n only if each such
// ratio is matched within this factor by the ratio of at least two single rounds: one
// lucky round, on a loaded machine, cannot make a point.
constexpr double spread_limit = 1.5;

void print_header(const Settings& settings, const std::string& load)
{
    fmt::print("{} cores, load average (1 minute) at the start: {}\n", std::thread::hardware_concurrency(), load);
    fmt::print("Attention at d = {} in doubles: each time is the minimum of {} runs (the step-by-step reference\n"
               "above n = 1024: three), the usual estimator on a shared machine (other programs only ever\n"
               "add time). The methods and a register-resident multiply-add loop on every core (the machine's\n"
               "fp64 peak) run interleaved, one run of each in turn per round, so that a change of load falls\n"
               "on all of them alike. GFLOP/s counts 4·n²·d operations; \"peak\" divides it by the peak loop's;\n"
               "\"cpu\" divides operations per second of processor time, every core together, by the peak's,\n"
               "which other programs on a busy machine cannot skew. Memory is the peak the call allocates\n"
               "besides its inputs, output included (OpenBLAS's own fixed work buffers are not counted). The\n"
               "last column is the largest relative difference from the first row. After each n: whether each\n"
               "ratio of two minima (a method's time over the tiled kernel's) is matched within a factor of\n"
               "{:.2f} by at least two rounds' own ratios; the figure draws only the n where it is and where\n"
               "the peak loop also ran within {:.2f}× of its fastest in the run (a note after the last n says\n"
               "which fell short). Freed memory stays with the program, so a run after the first does not\n"
               "wait for fresh pages.\n\n",
               settings.dim, settings.repetitions, spread_limit, spread_limit);
    fmt::print("{:>6}  {:<20} {:>11} {:>9} {:>7} {:>7} {:>12}   {}\n", "n", "method", "time (ms)", "GFLOP/s", "peak",
               "cpu", "memory (MiB)", "rel. diff");
}

// A method timed at one n: its call, its number of runs, and what each run leaves.
struct Contender {
    std::string method;
    int runs = 0;
    std::function<sa::Matrix()> call;
    Measurement measurement = {};
    // OpenBLAS's worker threads keep spinning after each call for 2^28 ticks of the time-stamp
    // counter (its THREAD_TIMEOUT: 0.1 s at 2.6 GHz), on a core the next method needs.
    bool threads_spin_after = false;
};

// Every contender at one n and the peak loop, interleaved run by run; a row per contender.
std::vector<Row> time_size(std::size_t n, std::vector<Contender>& contenders, const Settings& settings)
{
    double peak_operations = 0.0;
    std::vector<std::function<void()>> methods{[&] { peak_operations = run_peak_loop(settings.peak_iterations); }};
    std::vector<int> runs{settings.repetitions};
    bool spinning = false;  // the last run was one after which a library's threads spin
    for (Contender& contender : contenders) {
        methods.emplace_back([&contender, &spinning] {
            const std::size_t before = allocated_now.load();
            allocated_peak.store(before);
            contender.measurement.result = contender.call();
            contender.measurement.bytes = static_cast<double>(allocated_peak.load() - before);
            spinning = contender.threads_spin_after;
        });
        runs.push_back(contender.runs);
    }
    const auto clock = [] {
        return bench::Stamp{std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(),
                            cpu_seconds()};
    };
    // The libraries' threads go idle: 50 ms, and after OpenBLAS 250 ms, past its threads' spin
    // (without it the peak loop at n = 512 ran 2.5 times slower in every round, and the kernel 30 times).
    const auto idle = [&spinning] {
        std::this_thread::sleep_for(std::chrono::milliseconds(spinning ? 250 : 50));
        spinning = false;
    };
    const std::vector<bench::Runs> timed = bench::time_interleaved(methods, runs, clock, idle);
    const Peak peak{peak_operations / bench::minimum(timed[0].wall) / 1e9, peak_operations / bench::minimum(timed[0].cpu) / 1e9};
    std::vector<Row> rows(contenders.size() + 1);
    rows[0].n = n;
    rows[0].method = "fp64 peak loop";
    rows[0].peak = peak;
    rows[0].seconds = timed[0].wall;
    for (std::size_t c = 0; c < contenders.size(); ++c) {
        Measurement& measurement = contenders[c].measurement;
        measurement.seconds = bench::minimum(timed[c + 1].wall);
        measurement.cpu_seconds = bench::minimum(timed[c + 1].cpu);
        rows[c + 1].n = n;
        rows[c + 1].method = contenders[c].method;
        rows[c + 1].measurement = std::move(measurement);
        rows[c + 1].peak = peak;
        rows[c + 1].seconds = timed[c + 1].wall;
    }
    return rows;
}

// The figure's ratios at one n (each method's time over the tiled kernel's), checked
// against the rounds: the figure draws n only if the rounds bear them out.
bench::Verdict check_size(const std::vector<Row>& rows)
{
    const Row& tiled = rows.back();  // the tiled kernel runs last in every round
    std::vector<std::pair<std::string, bench::Agreement>> ratios;
    for (std::size_t r = 1; r + 1 < rows.size(); ++r) {
        ratios.emplace_back(rows[r].method + " / tiled kernel", bench::agreement(rows[r].seconds, tiled.seconds, spread_limit));
    }
    return bench::check_ratios(rows.front().n, ratios, spread_limit);
}

struct Comparison {
    std::vector<Row> rows = {};
    std::vector<std::pair<std::size_t, bench::Verdict>> checks = {};  // per n: does the figure draw it
    std::string load_start = {};  // the load average when the run began
};

void print_size_check(const std::vector<Row>& rows, const bench::Verdict& verdict)
{
    const Row& peak = rows.front();
    fmt::print("{:>6}  {:<20} {:>11.2f} {:>9.2f}   (the fastest run of the peak loop)\n", peak.n, peak.method,
               bench::minimum(peak.seconds) * 1e3, peak.peak.wall);
    fmt::print("{:>6}  {}\n", "", verdict.drawn ? fmt::format("each ratio of minima matched within a factor of {:.2f} by 2 rounds or more", spread_limit)
                                              : verdict.note);
    std::fflush(stdout);
}

// The contenders at one n: the step-by-step reference up to its limit, the baseline, the tiled kernel.
std::vector<Contender> contenders_at(std::size_t n, const Settings& settings, const sa::Matrix& queries,
                                     const sa::Matrix& keys, const sa::Matrix& values)
{
    const bool only_tiled = n == settings.tiled_only;
    std::vector<Contender> contenders;
    if (!only_tiled && n > settings.step_by_step_limit) {
        fmt::print("{:>6}  {:<20} not run above n = {} (--all to run it: minutes, and {})\n", n, "step by step",
                   settings.step_by_step_limit, bytes_text(5.0 * static_cast<double>(n) * static_cast<double>(n) * 8.0));
    }
    if (!only_tiled && n <= settings.step_by_step_limit) {
        // The slowest by far: above n = 1024 three runs, so that two rounds besides the first, which
        // finds the caches cold, can bear out its ratio to the tiled kernel.
        const int runs = n > 1024 ? std::min(3, settings.repetitions) : settings.repetitions;
        contenders.push_back({"step by step", runs, [&] { return sa::attention(queries, keys, values); }});
    }
    if (!only_tiled) {
        contenders.push_back({"OpenBLAS baseline", settings.repetitions,
                              [&] { return openblas_attention(queries, keys, values); }, {}, true});
    }
    contenders.push_back({"tiled kernel", settings.repetitions, [&] { return sa::fast_attention(queries, keys, values); }});
    return contenders;
}

const Row* find_row(const std::vector<Row>& rows, std::size_t n, const std::string& method)
{
    for (const Row& row : rows) {
        if (row.n == n && row.method == method) {
            return &row;
        }
    }
    return nullptr;
}

// After every size: a size whose ratios agreed but whose peak loop ran well below its fastest
// in the run was timed while other programs had the cores, and the figure leaves it out too.
void check_peaks(Comparison& comparison)
{
    double fastest = 0.0;
    for (const Row& row : comparison.rows) {
        fastest = std::max(fastest, row.peak.wall);
    }
    for (auto& [n, verdict] : comparison.checks) {
        const Row* peak = find_row(comparison.rows, n, "fp64 peak loop");
        if (verdict.drawn && peak != nullptr) {
            verdict = bench::check_peak(n, peak->peak.wall, fastest, spread_limit);
            if (!verdict.drawn) {
                fmt::print("{:>6}  {}\n", "", verdict.note);
            }
        }
    }
}

Comparison compare_kernels(const Settings& settings)
{
    Comparison comparison;
    comparison.load_start = bench::load_average_text("/proc/loadavg");
    print_header(settings, comparison.load_start);
    warm_up(settings.peak_iterations / 10);
    std::vector<std::size_t> sizes = settings.sizes;
    if (settings.tiled_only != 0) {
        sizes.push_back(settings.tiled_only);
    }
    for (const std::size_t n : sizes) {
        sa::SplitMix64 generator(n);
        const sa::Matrix queries = sa::random_matrix(n, settings.dim, generator);
        const sa::Matrix keys = sa::random_matrix(n, settings.dim, generator);
        const sa::Matrix values = sa::random_matrix(n, settings.dim, generator);
        std::vector<Contender> contenders = contenders_at(n, settings, queries, keys, values);
        std::vector<Row> rows = time_size(n, contenders, settings);
        const sa::Matrix reference = rows[1].measurement.result;
        for (std::size_t r = 1; r < rows.size(); ++r) {
            print_row(rows[r], settings.dim, r == 1 ? sa::Matrix() : reference);
        }
        if (n == settings.tiled_only) {
            fmt::print("{:>6}  {:<20} not run: its n×n scores alone would take {}\n", n, "OpenBLAS baseline",
                       bytes_text(static_cast<double>(n) * static_cast<double>(n) * 8.0));
        }
        comparison.checks.emplace_back(n, check_size(rows));
        print_size_check(rows, comparison.checks.back().second);
        comparison.rows.insert(comparison.rows.end(), std::make_move_iterator(rows.begin()),
                               std::make_move_iterator(rows.end()));
    }
    check_peaks(comparison);
    return comparison;
}

void print_ratios(const std::vector<Row>& rows)
{
    for (const std::size_t n : {std::size_t{4096}, std::size_t{2048}, std::size_t{1024}, std::size_t{512}}) {
        const Row* baseline = find_row(rows, n, "OpenBLAS baseline");
        const Row* tiled = find_row(rows, n, "tiled kernel");
        if (baseline != nullptr && tiled != nullptr) {
            fmt::print("\nAt n = {}: the tiled kernel takes {:.3f} of the baseline's time ({:.2f} times as fast) and "
                       "{:.4f} of its memory.\n", n, tiled->measurement.seconds / baseline->measurement.seconds,
                       baseline->measurement.seconds / tiled->measurement.seconds,
                       tiled->measurement.bytes / baseline->measurement.bytes);
            return;
        }
    }
}

struct Decoding {
    double bandwidth_share = 0.0;  // the faster step's bytes per second over the faster read's
    double speedup = 0.0;          // recomputing's time over the fast step's
    double ceiling = 0.0;          // recomputing's time over a plain read of the step's bytes
};

// Row r of a matrix, as a 1-row matrix.
sa::Matrix row_of(const sa::Matrix& matrix, std::size_t r)
{
    sa::Matrix one(1, matrix.cols());
    for (std::size_t c = 0; c < matrix.cols(); ++c) {
        one(0, c) = matrix(r, c);
    }
    return one;
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
        timings.push_back({threads, median(step_times), median(read_times)});
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
Against cache_against_recompute(DecodingRun& run, const sa::Matrix& queries,
                                                  const sa::Matrix& keys, const sa::Matrix& values, int threads,
                                                  int rounds)
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
    return {bench::minimum(recomputations), bench::minimum(steps), bench::minimum(reads)};
}

// The last step of decoding N tokens: with the cache, 4·N·d operations; recomputing
// the prefix's causal attention, 2·N·(N+1)·d.
Decoding compare_decoding(const Settings& settings)
{
    const std::size_t length = settings.decode_length;
    sa::SplitMix64 generator(length + 1);
    const sa::Matrix queries = sa::random_matrix(length, settings.dim, generator);
    const sa::Matrix keys = sa::random_matrix(length, settings.dim, generator);
    const sa::Matrix values = sa::random_matrix(length, settings.dim, generator);
    DecodingRun run;
    run.query = row_of(queries, length - 1);
    run.key = row_of(keys, length - 1);
    run.value = row_of(values, length - 1);
    for (std::size_t t = 0; t + 1 < length; ++t) {
        static_cast<void>(sa::decode_step(run.prefix, row_of(queries, t), row_of(keys, t), row_of(values, t)));
    }
    sa::Matrix fast_output;
    const std::vector<StepTiming> timings = time_fast_steps(run, fast_output);
    std::vector<double> plain_times;
    sa::Matrix plain_output;
    for (int repetition = 0; repetition < 51; ++repetition) {
        plain_times.push_back(run.time_step(sa::decode_step, plain_output));
    }
    const double d = static_cast<double>(settings.dim);
    const double big_n = static_cast<double>(length);
    const double bytes = static_cast<double>(sa::cached_step_reads(length, settings.dim, settings.dim)) * 8.0;
    fmt::print("\nDecoding token N = {} at d = {}: one step with the KV cache ({:.0f} operations, reading {}),\n"
               "next to a plain read of the same bytes (medians of 51 of each, interleaved):\n", length, settings.dim,
               4.0 * big_n * d, bytes_text(bytes));
    StepTiming best = timings.front();
    double fastest_read = timings.front().read;  // the machine's streaming bandwidth: its best setting
    for (const StepTiming& timing : timings) {
        fmt::print("  on {} core(s): sa::fast_decode_step {:.3f} ms ({:.1f} GB/s), the read {:.3f} ms ({:.1f} GB/s): "
                   "{:.2f} of the read's speed\n", timing.threads, timing.step * 1e3, bytes / timing.step / 1e9,
                   timing.read * 1e3, bytes / timing.read / 1e9, timing.read / timing.step);
        best = timing.step < best.step ? timing : best;
        fastest_read = std::min(fastest_read, timing.read);
    }
    const sa::Matrix reference = row_of(sa::fast_attention(queries, keys, values, sa::Masking::causal), length - 1);
    const int rounds = std::max(settings.repetitions, 5);
    const Against against = cache_against_recompute(run, queries, keys, values, best.threads, rounds);
    fmt::print("The book's sa::decode_step takes {:.3f} ms (median of 51). Recomputing the prefix's causal attention\n"
               "with the tiled kernel ({:.0f} operations) takes {:.3f} ms and the cached step {:.3f} ms on {} core(s), the\n"
               "minimum of each over {} interleaved rounds (one recomputation, then 11 steps): the cache is {:.0f} times\n"
               "faster (relative difference of the new output: {:.1e} fast, {:.1e} plain).\n",
               median(plain_times) * 1e3, 2.0 * big_n * (big_n + 1.0) * d, against.recomputation * 1e3,
               against.step * 1e3, best.threads, rounds, against.recomputation / against.step,
               largest_relative_difference(fast_output, reference), largest_relative_difference(plain_output, reference));
    fmt::print("A step must read its {}: a plain read of them, timed in the same rounds, takes {:.3f} ms, so a\n"
               "step that only read its bytes, as fast as that read, would be {:.0f} times faster than this\n"
               "recomputation: about the most a cache can gain on this machine (the step may come out a little\n"
               "faster or slower than the read, which is no perfect loop either). The ratio of their operations,\n"
               "{:.0f}, would be reached only if memory kept up with the arithmetic; here the recomputation does\n"
               "{:.1f} operations in the time the read takes to deliver one number.\n",
               bytes_text(bytes), against.read * 1e3, against.recomputation / against.read,
               2.0 * big_n * (big_n + 1.0) * d / (4.0 * big_n * d),
               (2.0 * big_n * (big_n + 1.0) * d / against.recomputation) / (bytes / 8.0 / against.read));
    return {fastest_read / best.step, against.recomputation / against.step, against.recomputation / against.read};
}

// ---- One training step of chapter 15's model (two attention layers, d = 64, h = 4,
// 16 windows of 64 characters, V = 63): sa::training_step next to the same step through
// the book's step functions, window by window.

// Rows [first, first + count) of a matrix.
sa::Matrix row_block(const sa::Matrix& matrix, std::size_t first, std::size_t count)
{
    sa::Matrix block(count, matrix.cols());
    for (std::size_t r = 0; r < count; ++r) {
        for (std::size_t c = 0; c < matrix.cols(); ++c) {
            block(r, c) = matrix(first + r, c);
        }
    }
    return block;
}

void put_row_block(sa::Matrix& matrix, std::size_t first, const sa::Matrix& block)
{
    for (std::size_t r = 0; r < block.rows(); ++r) {
        for (std::size_t c = 0; c < block.cols(); ++c) {
            matrix(first + r, c) = block(r, c);
        }
    }
}

// Rotary positions on each head's slice, counted from the window's first row.
sa::Matrix rope_heads(const sa::Matrix& matrix, std::size_t heads)
{
    std::vector<sa::Matrix> slices = sa::split_heads(matrix, heads);
    for (sa::Matrix& slice : slices) {
        slice = sa::rope(slice);
    }
    return sa::concat_heads(slices);
}

// The gradient through rope_heads(): each pair (2i, 2i+1) turns by R, so the gradient turns
// by Rᵀ, which is S R S with S the swap of the pair's two features.
sa::Matrix rope_heads_backward(const sa::Matrix& gradient, std::size_t heads)
{
    const auto swapped = [](sa::Matrix matrix) {
        for (std::size_t r = 0; r < matrix.rows(); ++r) {
            for (std::size_t c = 0; c + 1 < matrix.cols(); c += 2) {
                std::swap(matrix(r, c), matrix(r, c + 1));
            }
        }
        return matrix;
    };
    return swapped(rope_heads(swapped(gradient), heads));
}

// One layer on one window, forward: Y = X + MultiHead(rope(X W_Q), rope(X W_K), X W_V) W_O.
sa::Matrix plain_layer(const sa::AttentionLayer& layer, const sa::Matrix& x, std::size_t heads)
{
    const sa::Matrix mask = sa::causal_mask(x.rows(), x.rows());
    const sa::Matrix out = sa::multi_head_attention(rope_heads(sa::project(x, layer.w_query), heads),
                                                    rope_heads(sa::project(x, layer.w_key), heads),
                                                    sa::project(x, layer.w_value), mask, heads, layer.w_out);
    sa::Matrix y = x;
    sa::add_in_place(y, out);
    return y;
}

// One layer on one window, backward: adds the layer's gradients into `grads` and returns dX.
sa::Matrix plain_layer_backward(const sa::AttentionLayer& layer, const sa::Matrix& x, const sa::Matrix& d_y,
                                std::size_t heads, sa::AttentionLayer& grads)
{
    const sa::Matrix mask = sa::causal_mask(x.rows(), x.rows());
    const sa::MultiHeadGrads attention = sa::multi_head_backward(
        rope_heads(sa::project(x, layer.w_query), heads), rope_heads(sa::project(x, layer.w_key), heads),
        sa::project(x, layer.w_value), mask, heads, layer.w_out, d_y);
    const sa::ProjectionGrads query = sa::project_backward(x, layer.w_query, rope_heads_backward(attention.d_queries, heads));
    const sa::ProjectionGrads key = sa::project_backward(x, layer.w_key, rope_heads_backward(attention.d_keys, heads));
    const sa::ProjectionGrads value = sa::project_backward(x, layer.w_value, attention.d_values);
    sa::add_in_place(grads.w_query, query.d_weights);
    sa::add_in_place(grads.w_key, key.d_weights);
    sa::add_in_place(grads.w_value, value.d_weights);
    sa::add_in_place(grads.w_out, attention.d_w_out);
    sa::Matrix d_x = d_y;  // the residual passes dY on unchanged
    sa::add_in_place(d_x, query.d_embeddings);
    sa::add_in_place(d_x, key.d_embeddings);
    sa::add_in_place(d_x, value.d_embeddings);
    return d_x;
}

// The loss's gradient at every parameter, through the step functions, window by window.
sa::LanguageModel plain_gradient(const sa::LanguageModel& model, const sa::Batch& batch)
{
    const std::size_t heads = model.shape.heads;
    const std::size_t window = batch.window;
    const std::size_t windows = batch.inputs.size() / window;
    std::vector<sa::Matrix> inputs{sa::embed(model.embedding, batch.inputs)};  // each layer's input, then the last stream
    for (const sa::AttentionLayer& layer : model.layers) {
        sa::Matrix stream = inputs.back();
        for (std::size_t w = 0; w < windows; ++w) {
            put_row_block(stream, w * window, plain_layer(layer, row_block(inputs.back(), w * window, window), heads));
        }
        inputs.push_back(std::move(stream));
    }
    const sa::CrossEntropy loss = sa::cross_entropy(sa::project(inputs.back(), model.unembedding), batch.targets);
    sa::LanguageModel grads = sa::zero_model(model.shape);
    sa::ProjectionGrads unembedding = sa::project_backward(inputs.back(), model.unembedding, loss.d_logits);
    grads.unembedding = std::move(unembedding.d_weights);
    sa::Matrix d_stream = std::move(unembedding.d_embeddings);
    for (std::size_t l = model.layers.size(); l-- > 0;) {
        sa::Matrix d_input(d_stream.rows(), d_stream.cols());
        for (std::size_t w = 0; w < windows; ++w) {
            put_row_block(d_input, w * window,
                          plain_layer_backward(model.layers[l], row_block(inputs[l], w * window, window),
                                               row_block(d_stream, w * window, window), heads, grads.layers[l]));
        }
        d_stream = std::move(d_input);
    }
    grads.embedding = sa::embedding_backward(d_stream, batch.inputs, model.shape.vocabulary);
    return grads;
}

// The same step as sa::training_step, with the gradient from plain_gradient().
void plain_training_step(sa::Trainer& trainer, const sa::Batch& batch)
{
    sa::LanguageModel grads = plain_gradient(trainer.model, batch);
    ++trainer.steps;
    const std::vector<sa::Matrix*> weights = sa::parameters(trainer.model);
    const std::vector<sa::Matrix*> gradients = sa::parameters(grads);
    for (std::size_t i = 0; i < weights.size(); ++i) {
        sa::adam_step(*weights[i], *gradients[i], trainer.moments[i], trainer.steps, trainer.settings);
    }
}

// The largest relative difference between two models' parameters, over all of them.
double largest_model_difference(sa::LanguageModel lhs, sa::LanguageModel rhs)
{
    double difference = 0.0;
    double largest = 0.0;
    const std::vector<sa::Matrix*> left = sa::parameters(lhs);
    const std::vector<sa::Matrix*> right = sa::parameters(rhs);
    for (std::size_t i = 0; i < left.size(); ++i) {
        for (std::size_t r = 0; r < left[i]->rows(); ++r) {
            for (std::size_t c = 0; c < left[i]->cols(); ++c) {
                difference = std::max(difference, std::fabs((*left[i])(r, c) - (*right[i])(r, c)));
                largest = std::max(largest, std::fabs((*right[i])(r, c)));
            }
        }
    }
    return difference / largest;
}

// The three ways a training step is timed: sa::training_step on one thread and on every core,
// and the step functions.
std::vector<std::function<void()>> training_contenders(sa::Trainer& one, sa::Trainer& every, sa::Trainer& plain,
                                                       const sa::Batch& batch)
{
    return {[&] { static_cast<void>(sa::training_step(one, batch)); },
            [&] { static_cast<void>(sa::training_step(every, batch)); }, [&] { plain_training_step(plain, batch); }};
}

// One thread and every core took the same steps from the same model on the same batch, so
// their models must be the same bits (each sum is one thread's, in the same order).
void require_same_bits(sa::Trainer& one, sa::Trainer& every)
{
    const std::vector<sa::Matrix*> by_one = sa::parameters(one.model);
    const std::vector<sa::Matrix*> by_every = sa::parameters(every.model);
    bool same_bits = true;
    for (std::size_t i = 0; i < by_one.size(); ++i) {
        same_bits = same_bits && sa::identical(*by_one[i], *by_every[i]);
    }
    if (!same_bits) {
        throw std::runtime_error(fmt::format("after {} steps each, the model trained on {} threads differs from the "
                                             "one trained on 1; the threads must change no bit", one.steps,
                                             every.threads));
    }
}

// Times one training step at chapter 15's sizes three ways, interleaved, the minimum of the runs;
// prints tokens per second, GFLOP/s and the share of the peak. Returns the faster share of
// sa::training_step's two.
double compare_training(const Settings& settings, double peak)
{
#ifdef __GLIBC__
    // The sizes before leave hundreds of MiB of freed blocks on the heap (kept there on
    // purpose, see main()); given back first, the step's many small matrices are laid out as
    // in a program of its own (on one thread, 7.4 ms a step after the sizes without this,
    // 6.6 ms with it, 6.8 ms in a run of n = 1024 alone).
    malloc_trim(0);
#endif
    const sa::ModelShape shape{63, 64, 4, 2, 64};  // chapter 15: V = 63, d = 64, h = 4, 2 layers, windows of 64
    const std::size_t windows = settings.training_windows;
    sa::SplitMix64 generator(15);
    std::vector<std::size_t> text(20000);
    for (std::size_t& token : text) {
        token = static_cast<std::size_t>(generator.next() % shape.vocabulary);
    }
    const sa::Batch batch = sa::random_batch(text, windows, shape.context, generator);
    const sa::LanguageModel model = sa::random_model(shape, generator);
    const sa::ForwardTrace trace = sa::forward(model, batch.inputs, batch.window);
    const sa::LanguageModel fast_grads = sa::backward(model, trace, sa::cross_entropy(trace.logits, batch.targets).d_logits);
    const double agreement = largest_model_difference(plain_gradient(model, batch), fast_grads);
    sa::Trainer one = sa::make_trainer(model, {.learning_rate = 0.01});
    sa::Trainer plain = one;
    sa::Trainer every = one;
    every.threads = static_cast<std::size_t>(omp_get_num_procs());
    const auto clock = [] {
        return bench::Stamp{std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(),
                            cpu_seconds()};
    };
    // The library's step takes milliseconds, the step functions' nearly a second: the first
    // runs four times as often, in the same rounds, so that its minimum is as steady as the
    // kernels' (a step's working set lives in the cache the cores share with other programs).
    const int runs = std::max(settings.repetitions, 3);
    const int fast_runs = 4 * runs;
    const std::vector<bench::Runs> timed =
        bench::time_interleaved(training_contenders(one, every, plain, batch), {fast_runs, fast_runs, runs}, clock);
    const double operations = bench::training_step_operations(shape, windows);
    const double tokens = static_cast<double>(batch.inputs.size());
    fmt::print("\nOne training step of chapter 15's model (2 layers, d = 64, h = 4, {} windows of {}, V = {}):\n"
               "{:.0f} operations in its forward and backward products; the minimum of {} interleaved runs of\n"
               "each sa::training_step and {} of the step functions.\n",
               windows, shape.context, shape.vocabulary, operations, fast_runs, runs);
    const std::string names[] = {"sa::training_step, 1 thread", fmt::format("sa::training_step, {} threads", every.threads),
                                 "the step functions, window by window"};
    for (std::size_t m = 0; m < 3; ++m) {
        const double seconds = bench::minimum(timed[m].wall);
        fmt::print("  {:<36} {:>9.2f} ms {:>10.0f} tokens/s {:>8.2f} GFLOP/s  {:.3f} of the peak\n", names[m],
                   seconds * 1e3, tokens / seconds, operations / seconds / 1e9, operations / seconds / 1e9 / peak);
    }
    require_same_bits(one, every);
    fmt::print("  (the step functions' gradient and the library's differ by {:.1e} relative to the largest entry;\n"
               "  after {} steps each, the model trained on {} threads has every bit of the one trained on 1)\n",
               agreement, one.steps, every.threads);
    return operations / std::min(bench::minimum(timed[0].wall), bench::minimum(timed[1].wall)) / 1e9 / peak;
}

// The goals of the fast paths, as ratios measured side by side in this run.
void print_goals(const std::vector<Row>& rows, const Decoding& decoding, double training_share, const Settings& settings)
{
    fmt::print("\nGoals, as ratios measured in this run:\n");
    for (const std::size_t n : {std::size_t{4096}, std::size_t{8192}}) {
        const Row* tiled = find_row(rows, n, "tiled kernel");
        const Row* baseline = find_row(rows, n, "OpenBLAS baseline");
        if (tiled != nullptr) {
            const Peak share = share_of_peak(*tiled, settings.dim);
            fmt::print("  n = {}: the tiled kernel runs at {:.3f} of the fp64 peak by wall time, {:.3f} by processor "
                       "time (goal: at least 0.667){}\n", n, share.wall, share.cpu,
                       baseline == nullptr ? std::string()
                                           : fmt::format("; the baseline at {:.3f} and {:.3f}",
                                                         share_of_peak(*baseline, settings.dim).wall,
                                                         share_of_peak(*baseline, settings.dim).cpu));
        }
    }
    fmt::print("  decoding at N = {}: the faster step reads at {:.2f} of the faster read's bandwidth (goal: at least 0.5),\n"
               "  and the cache is {:.0f} times faster than recomputing (goal: at least 500 at N = 4096; a step that\n"
               "  only read its bytes, at the speed of the plain read, would be {:.0f} times faster)\n",
               settings.decode_length, decoding.bandwidth_share, decoding.speedup, decoding.ceiling);
    fmt::print("  training: sa::training_step, {} windows of 64, runs at {:.3f} of the fp64 peak, the faster of one\n"
               "  thread and every core (goal: at least 0.35 at chapter 15's 16 windows)\n",
               settings.training_windows, training_share);
    // The same share alone on a line, in one fixed form, for anyone who measures it (grep '^training step:').
    fmt::print("training step: {:.3f} of peak\n", training_share);
}

// The speed figure draws an n only where the rounds bear out its ratios (check_size); the
// figure's foot says how the times were taken, the load average, and which n it left out.
std::string speed_figure(const Comparison& comparison, const Settings& settings)
{
    sa::LinePlot speed{"Speed of attention at d = 64, measured on the machine that built this copy of the book", "n",
                       "GFLOP/s (4·n²·d operations per second)"};
    std::vector<std::string> notes{
        fmt::format("Each point: the fastest of {} runs, the methods interleaved run by run.", settings.repetitions),
        fmt::format("Load average (1 minute): {} at the start of the run, {} at its end.", comparison.load_start,
                    bench::load_average_text("/proc/loadavg"))};
    std::vector<std::size_t> drawn;
    for (const auto& [n, verdict] : comparison.checks) {
        if (verdict.drawn) {
            drawn.push_back(n);
        } else {
            notes.push_back(verdict.note);
        }
    }
    if (drawn.size() < comparison.checks.size()) {
        notes.push_back(fmt::format("An n is drawn only if 2 rounds or more match each of its ratios of minima within "
                                    "{:.2f}×, and its peak loop ran within {:.2f}× of its fastest.",
                                    spread_limit, spread_limit));
    }
    for (const std::string method : {"step by step", "OpenBLAS baseline", "tiled kernel"}) {
        sa::Series series{method};
        for (const Row& row : comparison.rows) {
            if (row.method == method && std::find(drawn.begin(), drawn.end(), row.n) != drawn.end()) {
                const double n = static_cast<double>(row.n);
                series.x.push_back(n);
                series.y.push_back(4.0 * n * n * static_cast<double>(settings.dim) / row.measurement.seconds / 1e9);
            }
        }
        speed.series.push_back(series);
    }
    speed.log_x = true;
    speed.log_x_base = 2;
    if (drawn.empty()) {  // nothing to draw: the figure is its notes alone
        notes.insert(notes.begin(), "No size passed the check, so no line is drawn.");
        return bench::with_notes(bench::text_only_svg(speed.title), notes);
    }
    return bench::with_notes(sa::line_plot_svg(speed), notes);
}

void write_figures(const Comparison& comparison, const Settings& settings)
{
    sa::LinePlot memory{"Memory of one call, measured on the machine that built this copy of the book", "n",
                        "peak extra memory (MiB)"};
    for (const std::string method : {"step by step", "OpenBLAS baseline", "tiled kernel"}) {
        sa::Series series{method};
        for (const Row& row : comparison.rows) {
            if (row.method == method) {
                series.x.push_back(static_cast<double>(row.n));
                series.y.push_back(row.measurement.bytes / mebibyte);
            }
        }
        memory.series.push_back(series);
    }
    memory.log_x = true;
    memory.log_x_base = 2;
    memory.log_y = true;
    std::ofstream(settings.figures + "/measured-speed.svg") << speed_figure(comparison, settings);
    std::ofstream(settings.figures + "/measured-memory.svg") << sa::line_plot_svg(memory);
}

// The options, read with the chapter programs' shared command line (src/cli.hpp): one
// line on stderr and exit status 2 for anything malformed, --help on stdout.
Settings read_settings(const sa::Example& example)
{
    const bool smoke = sa::flag_option(example, "--smoke");
    const bool quick = sa::flag_option(example, "--quick");
    if (smoke && quick) {
        throw sa::UsageError("--smoke and --quick: choose one of the two short runs");
    }
    Settings settings;
    if (smoke) {
        settings = {{64, 128}, 256, 256, 64, 2, 256, {}, 200000};
        settings.training_windows = 2;  // an eighth of chapter 15's batch: the smoke test stays short
    } else if (quick) {
        settings = {{256, 512, 1024}, 0, 1024, 64, 5, 1024, {}, 2000000};
    }
    if (sa::flag_option(example, "--all")) {
        settings.step_by_step_limit = 1 << 20;  // the step-by-step reference at every size
    }
    if (example.options.at("--sizes") != "preset") {
        settings.sizes.clear();  // e.g. --sizes 1024,4096: only these, and no tiled-only size
        settings.tiled_only = 0;
        for (const long n : sa::whole_list_option(example, "--sizes", 1, largest_size)) {
            settings.sizes.push_back(static_cast<std::size_t>(n));
        }
    }
    settings.figures = example.figures;
    return settings;
}

std::string run_benchmark(const sa::Example& example)
{
    const Settings settings = read_settings(example);  // every option checked before the first line
    const Comparison comparison = compare_kernels(settings);
    const std::vector<Row>& rows = comparison.rows;
    print_ratios(rows);
    const Decoding decoding = compare_decoding(settings);
    double peak = 0.0;  // the fastest peak loop of the run
    for (const Row& row : rows) {
        peak = std::max(peak, row.peak.wall);
    }
    const double training_share = compare_training(settings, peak);
    print_goals(rows, decoding, training_share, settings);
    fmt::print("Load average (1 minute) at the end: {}\n", bench::load_average_text("/proc/loadavg"));
    if (!settings.figures.empty()) {
        write_figures(comparison, settings);
    }
    return "";  // printed as it goes: a full run takes minutes
}

}  // namespace

int main(int argc, char** argv)
{
#ifdef __GLIBC__
    // Every method makes and drops buffers of megabytes on each run (the tiled kernel its
    // copies of Q, K and V; the baseline its n×n scores). By default the C library maps a
    // large block from the system and returns it when freed, so each run would pay again for
    // fresh zeroed pages, a cost of the operating system rather than of the method (on a
    // virtual machine, a quarter of the tiled kernel's time at n = 4096). Kept on the heap, a
    // block is reused from the second run on, for every method alike; the first round pays.
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    sa::ProgramInfo info{"ch13-benchmark", "time the book's attention, an OpenBLAS baseline and the tiled kernel at "
                                           "d = 64, and KV-cache decoding", sa::mouse_eats_cheese()};
    const std::string random = "the benchmark draws its own random matrices at d = 64";
    info.unused_options = {{"--tokens", random}, {"--embeddings", random}, {"--wq", random}, {"--wk", random},
                           {"--wv", random}, {"--causal", random}, {"--precision", "it prints times, not the example"}};
    info.options = {
        {"--smoke", "", "a few seconds at small n (CTest runs it)", ""},
        {"--quick", "", "a short run for the book's figures, n = 256 to 1024", ""},
        {"--all", "", "also the step-by-step reference above n = 4096 (minutes)", ""},
        {"--sizes", "N,N",
         fmt::format("only these n, each from 1 to {}, and no tiled-only size; preset: the run's own", largest_size),
         "preset"}};
    return sa::run_program(info, argc, argv, run_benchmark);
}
