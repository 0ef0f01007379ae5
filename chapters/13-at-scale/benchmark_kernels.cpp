// Chapter 13's kernels, side by side in one run: the book's attention(), the baseline a
// practitioner would write (OpenBLAS's dgemm for the two products, a softmax in between)
// and the fast tiled kernel, at d = 64 in doubles, each as a share of the machine's fp64
// peak measured in the same rounds. The times are the minimum of runs interleaved round by
// round (src/present/bench.hpp); memory is the peak the call allocates.
//
//   build/bin/ch13-benchmark-kernels                 n = 512 to 8192, and n = 16384 tiled only
//   build/bin/ch13-benchmark-kernels --quick --figures DIR   a short run for the book's figures
//   build/bin/ch13-benchmark-kernels --sizes 1024,4096   only these sizes
//   build/bin/ch13-benchmark-kernels --all           also the step-by-step reference above n = 4096 (slow)
//   build/bin/ch13-benchmark-kernels --smoke         a few seconds at small n (CTest runs it)
//
// Decoding with the cache and the training step have programs of their own:
// ch13-benchmark-decoding and ch13-benchmark-training.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <cblas.h>
#include <fmt/format.h>

#include "attention.hpp"
#include "bench.hpp"
#include "cli.hpp"
#include "fast_attention.hpp"
#include "kernel_report.hpp"
#include "machine.hpp"
#include "random.hpp"

// Every allocation through operator new is counted (src/present/machine.hpp), so each call's
// peak is known.
void* operator new(std::size_t size) { return sa::bench::counted_new(size, 0); }
void* operator new[](std::size_t size) { return sa::bench::counted_new(size, 0); }
void operator delete(void* pointer) noexcept { sa::bench::counted_delete(pointer, 0); }
void operator delete[](void* pointer) noexcept { sa::bench::counted_delete(pointer, 0); }
void operator delete(void* pointer, std::size_t) noexcept { sa::bench::counted_delete(pointer, 0); }
void operator delete[](void* pointer, std::size_t) noexcept { sa::bench::counted_delete(pointer, 0); }
// The aligned forms: the fast kernel's arrays start on a cache line.
void* operator new(std::size_t size, std::align_val_t align) { return sa::bench::counted_new(size, std::size_t(align)); }
void* operator new[](std::size_t size, std::align_val_t align) { return sa::bench::counted_new(size, std::size_t(align)); }
void operator delete(void* pointer, std::align_val_t align) noexcept { sa::bench::counted_delete(pointer, std::size_t(align)); }
void operator delete[](void* pointer, std::align_val_t align) noexcept { sa::bench::counted_delete(pointer, std::size_t(align)); }
void operator delete(void* pointer, std::size_t, std::align_val_t align) noexcept
{
    sa::bench::counted_delete(pointer, std::size_t(align));
}
void operator delete[](void* pointer, std::size_t, std::align_val_t align) noexcept
{
    sa::bench::counted_delete(pointer, std::size_t(align));
}

namespace {

// The baseline: S = Q·Kᵀ/√d with dgemm, a row-wise softmax, O = A·V with dgemm. Q, K and V
// are copied first, as a program that keeps its own arrays would hand them to the library.
sa::Matrix openblas_attention(const sa::Matrix& queries, const sa::Matrix& keys, const sa::Matrix& values)
{
    const auto n = static_cast<int>(queries.rows());
    const auto m = static_cast<int>(keys.rows());
    const auto d_k = static_cast<int>(queries.cols());
    const auto d_v = static_cast<int>(values.cols());
    const auto copy = [](const sa::Matrix& matrix) {
        return std::vector<double>(matrix.data(), matrix.data() + matrix.rows() * matrix.cols());
    };
    const std::vector<double> q = copy(queries);
    const std::vector<double> k = copy(keys);
    const std::vector<double> v = copy(values);
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
    std::copy(out.begin(), out.end(), outputs.data());
    return outputs;
}

constexpr long largest_size = 32768;  // the baseline's n×n scores alone: 8 GiB

struct Settings {
    std::vector<std::size_t> sizes = {512, 1024, 2048, 4096, 8192};
    std::size_t tiled_only = 16384;         // a size at which only the tiled kernel runs; 0 for none
    std::size_t step_by_step_limit = 4096;  // the largest n for the book's attention(), the slowest by far
    std::size_t dim = 64;
    int repetitions = 5;  // on a shared machine the minimum of more runs is the steadier figure
    long peak_iterations = 10000000;  // about 20 ms per core on a quiet machine
    std::string figures = {};
};

// A method timed at one n: its call, its number of runs, and what its last run left.
struct Contender {
    std::string method;
    int runs = 0;
    std::function<sa::Matrix()> call;
    // OpenBLAS's worker threads keep spinning after each call for 2^28 ticks of the time-stamp
    // counter (its THREAD_TIMEOUT: 0.1 s at 2.6 GHz), on a core the next method needs.
    bool threads_spin_after = false;
    sa::Matrix result = {};
    double bytes = 0.0;
};

// The contenders at one n: the step-by-step reference up to its limit, the baseline, the tiled kernel.
std::vector<Contender> contenders_at(std::size_t n, const Settings& settings, const sa::Matrix& queries,
                                     const sa::Matrix& keys, const sa::Matrix& values)
{
    const bool only_tiled = n == settings.tiled_only;
    std::vector<Contender> contenders;
    if (!only_tiled && n > settings.step_by_step_limit) {
        fmt::print("{:>6}  {:<20} not run above n = {} (--all to run it: minutes, and {})\n", n, "step by step",
                   settings.step_by_step_limit,
                   sa::bench::bytes_text(5.0 * static_cast<double>(n) * static_cast<double>(n) * 8.0));
    }
    if (!only_tiled && n <= settings.step_by_step_limit) {
        // The slowest by far: above n = 1024 three runs, so that two rounds besides the first, which
        // finds the caches cold, can bear out its ratio to the tiled kernel.
        const int runs = n > 1024 ? std::min(3, settings.repetitions) : settings.repetitions;
        contenders.push_back({"step by step", runs, [&] { return sa::attention(queries, keys, values); }});
    }
    if (!only_tiled) {
        contenders.push_back({"OpenBLAS baseline", settings.repetitions,
                              [&] { return openblas_attention(queries, keys, values); }, true});
    }
    contenders.push_back({"tiled kernel", settings.repetitions, [&] { return sa::fast_attention(queries, keys, values); }});
    return contenders;
}

// Every contender at one n and the peak loop, interleaved run by run; a row per contender,
// after the peak loop's.
std::vector<sa::bench::Row> time_size(std::size_t n, std::vector<Contender>& contenders, const Settings& settings)
{
    double peak_operations = 0.0;
    std::vector<std::function<void()>> methods{[&] { peak_operations = sa::bench::peak_loop(settings.peak_iterations); }};
    std::vector<int> runs{settings.repetitions};
    bool spinning = false;  // the last run was one after which a library's threads spin
    for (Contender& contender : contenders) {
        methods.emplace_back([&contender, &spinning] {
            const std::size_t start = sa::bench::start_peak();
            contender.result = contender.call();
            contender.bytes = sa::bench::peak_since(start);
            spinning = contender.threads_spin_after;
        });
        runs.push_back(contender.runs);
    }
    // The libraries' threads go idle: 50 ms, and after OpenBLAS 250 ms, past its threads' spin
    // (without it the peak loop at n = 512 ran 2.5 times slower in every round, and the kernel 30 times).
    const auto idle = [&spinning] {
        std::this_thread::sleep_for(std::chrono::milliseconds(spinning ? 250 : 50));
        spinning = false;
    };
    const std::vector<sa::bench::Runs> timed = sa::bench::time_interleaved(methods, runs, sa::bench::now, idle);
    const sa::bench::Peak peak{peak_operations / sa::bench::minimum(timed[0].wall) / 1e9,
                               peak_operations / sa::bench::minimum(timed[0].cpu) / 1e9};
    std::vector<sa::bench::Row> rows{{.n = n, .method = "fp64 peak loop", .peak = peak, .rounds = timed[0].wall}};
    for (std::size_t c = 0; c < contenders.size(); ++c) {
        rows.push_back({n, contenders[c].method, sa::bench::minimum(timed[c + 1].wall),
                        sa::bench::minimum(timed[c + 1].cpu), contenders[c].bytes, std::move(contenders[c].result),
                        peak, timed[c + 1].wall});
    }
    return rows;
}

sa::bench::KernelRun compare_kernels(const Settings& settings)
{
    sa::bench::KernelRun run{.load_start = sa::bench::load_average_text("/proc/loadavg"), .dim = settings.dim,
                             .repetitions = settings.repetitions};
    fmt::print("{}", sa::bench::kernel_header(run));
    sa::bench::warm_up(settings.peak_iterations / 10);
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
        std::vector<sa::bench::Row> rows = time_size(n, contenders, settings);
        for (std::size_t r = 1; r < rows.size(); ++r) {
            fmt::print("{}", sa::bench::row_text(rows[r], settings.dim, r == 1 ? sa::Matrix() : rows[1].result));
        }
        if (n == settings.tiled_only) {
            fmt::print("{:>6}  {:<20} not run: its n×n scores alone would take {}\n", n, "OpenBLAS baseline",
                       sa::bench::bytes_text(static_cast<double>(n) * static_cast<double>(n) * 8.0));
        }
        run.checks.emplace_back(n, sa::bench::check_size(rows));
        fmt::print("{}", sa::bench::size_check_text(rows, run.checks.back().second));
        std::fflush(stdout);
        run.rows.insert(run.rows.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
    }
    fmt::print("{}", sa::bench::check_peaks(run));
    return run;
}

// The options, read with the chapter programs' shared command line (src/present/cli.hpp): one
// line on stderr and exit status 2 for anything malformed, --help on stdout.
Settings read_settings(const sa::Example& example)
{
    Settings settings;
    const sa::bench::RunLength length = sa::bench::run_length(example);
    if (length == sa::bench::RunLength::smoke) {
        settings = {{64, 128}, 256, 256, 64, 2, 200000};
    } else if (length == sa::bench::RunLength::quick) {
        settings = {{256, 512, 1024}, 0, 1024, 64, 5, 2000000};
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
    sa::bench::KernelRun run = compare_kernels(settings);
    fmt::print("{}{}", sa::bench::ratio_text(run.rows), sa::bench::kernel_goals(run));
    fmt::print("Load average (1 minute) at the end: {}\n", sa::bench::load_average_text("/proc/loadavg"));
    if (!settings.figures.empty()) {
        sa::bench::write_kernel_figures(run, settings.figures);
    }
    return "";  // printed as it goes: a full run takes minutes
}

}  // namespace

int main(int argc, char** argv)
{
    const sa::ProgramInfo info = sa::bench::benchmark_program(
        "ch13-benchmark-kernels", "time the book's attention, an OpenBLAS baseline and the tiled kernel at d = 64",
        {{"--all", "", "also the step-by-step reference above n = 4096 (minutes)", ""},
         {"--sizes", "N,N",
          fmt::format("only these n, each from 1 to {}, and no tiled-only size; preset: the run's own", largest_size),
          "preset"}},
        true);
    return sa::run_program(info, argc, argv, run_benchmark);
}
