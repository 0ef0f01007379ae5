// Chapter 13's benchmark: the book's attention(), the baseline a practitioner would write
// (OpenBLAS's dgemm for the two products, a softmax in between) and the fast tiled kernel,
// side by side in one run, at d = 64 in doubles; then KV-cache decoding against
// recomputing the prefix. Times are medians; memory is the peak the call allocates.
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
#include <fstream>
#include <functional>
#include <iostream>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include <cblas.h>
#include <fmt/format.h>

#include "attention.hpp"
#include "cli.hpp"
#include "fast_attention.hpp"
#include "masking.hpp"
#include "random.hpp"
#include "svg.hpp"
#include "tiled.hpp"

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
}  // namespace

void* operator new(std::size_t size) { return counted_allocation(size); }
void* operator new[](std::size_t size) { return counted_allocation(size); }
void operator delete(void* pointer) noexcept { counted_release(pointer); }
void operator delete[](void* pointer) noexcept { counted_release(pointer); }
void operator delete(void* pointer, std::size_t) noexcept { counted_release(pointer); }
void operator delete[](void* pointer, std::size_t) noexcept { counted_release(pointer); }

namespace {

struct Measurement {
    double seconds = 0.0;  // the median
    double bytes = 0.0;    // the peak extra allocation of one call
    sa::Matrix result = {};
};

Measurement measure(int repetitions, const std::function<sa::Matrix()>& call)
{
    std::vector<double> times;
    Measurement measurement;
    for (int repetition = 0; repetition < repetitions; ++repetition) {
        const std::size_t before = allocated_now.load();
        allocated_peak.store(before);
        const auto start = std::chrono::steady_clock::now();
        sa::Matrix result = call();
        const auto stop = std::chrono::steady_clock::now();
        times.push_back(std::chrono::duration<double>(stop - start).count());
        measurement.bytes = static_cast<double>(allocated_peak.load() - before);
        measurement.result = std::move(result);
    }
    std::sort(times.begin(), times.end());
    measurement.seconds = times[times.size() / 2];
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the other library's threads go idle
    return measurement;
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
    int repetitions = 3;
    std::size_t decode_length = 4096;
    std::string figures = {};
};

struct Row {
    std::size_t n = 0;
    std::string method = {};
    Measurement measurement = {};
};

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
    fmt::print("{:>6}  {:<20} {:>11.2f} {:>9.2f} {:>12.2f}   {}\n", row.n, row.method, row.measurement.seconds * 1e3,
               operations / row.measurement.seconds / 1e9, row.measurement.bytes / mebibyte, agreement);
    std::fflush(stdout);
}

std::vector<Row> compare_kernels(const Settings& settings)
{
    std::ifstream load_file("/proc/loadavg");
    std::string load;
    std::getline(load_file, load);
    fmt::print("{} cores, load average at the start: {}\n", std::thread::hardware_concurrency(),
               load.empty() ? "unknown" : load.substr(0, load.find(' ')));
    fmt::print("Attention at d = {} in doubles, median of {} runs. GFLOP/s counts 4·n²·d operations; memory is\n"
               "the peak the call allocates besides its inputs, output included (OpenBLAS's own fixed work\n"
               "buffers are not counted). The last column is the largest relative difference from the first row.\n\n",
               settings.dim, settings.repetitions);
    fmt::print("{:>6}  {:<20} {:>11} {:>9} {:>12}   {}\n", "n", "method", "time (ms)", "GFLOP/s", "memory (MiB)",
               "rel. diff");
    std::vector<Row> rows;
    std::vector<std::size_t> sizes = settings.sizes;
    if (settings.tiled_only != 0) {
        sizes.push_back(settings.tiled_only);
    }
    for (const std::size_t n : sizes) {
        sa::SplitMix64 generator(n);
        const sa::Matrix queries = sa::random_matrix(n, settings.dim, generator);
        const sa::Matrix keys = sa::random_matrix(n, settings.dim, generator);
        const sa::Matrix values = sa::random_matrix(n, settings.dim, generator);
        const bool only_tiled = n == settings.tiled_only;
        sa::Matrix reference;
        if (!only_tiled && n > settings.step_by_step_limit) {
            fmt::print("{:>6}  {:<20} not run above n = {} (--all to run it: minutes, and {})\n", n,
                       "step by step", settings.step_by_step_limit,
                       bytes_text(5.0 * static_cast<double>(n) * static_cast<double>(n) * 8.0));
        }
        if (!only_tiled && n <= settings.step_by_step_limit) {
            const int repetitions = n >= 1024 ? 1 : settings.repetitions;  // the slowest by far
            rows.push_back({n, "step by step", measure(repetitions, [&] { return sa::attention(queries, keys, values); })});
            print_row(rows.back(), settings.dim, reference);
            reference = rows.back().measurement.result;
        }
        if (!only_tiled) {
            rows.push_back({n, "OpenBLAS baseline",
                            measure(settings.repetitions, [&] { return openblas_attention(queries, keys, values); })});
            print_row(rows.back(), settings.dim, reference);
            if (reference.empty()) {
                reference = rows.back().measurement.result;
            }
        }
        rows.push_back({n, "tiled kernel", measure(settings.repetitions, [&] { return sa::fast_attention(queries, keys, values); })});
        print_row(rows.back(), settings.dim, reference);
        if (only_tiled) {
            fmt::print("{:>6}  {:<20} not run: its n×n scores alone would take {}\n", n, "OpenBLAS baseline",
                       bytes_text(static_cast<double>(n) * static_cast<double>(n) * 8.0));
        }
    }
    return rows;
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

// The last step of decoding N tokens: with the cache, 4·N·d operations; recomputing
// the prefix's causal attention, 2·N·(N+1)·d.
void compare_decoding(const Settings& settings)
{
    const std::size_t length = settings.decode_length;
    sa::SplitMix64 generator(length + 1);
    const sa::Matrix queries = sa::random_matrix(length, settings.dim, generator);
    const sa::Matrix keys = sa::random_matrix(length, settings.dim, generator);
    const sa::Matrix values = sa::random_matrix(length, settings.dim, generator);
    const auto row = [](const sa::Matrix& matrix, std::size_t r) {
        sa::Matrix one(1, matrix.cols());
        for (std::size_t c = 0; c < matrix.cols(); ++c) {
            one(0, c) = matrix(r, c);
        }
        return one;
    };
    sa::KvCache prefix;
    for (std::size_t t = 0; t + 1 < length; ++t) {
        static_cast<void>(sa::decode_step(prefix, row(queries, t), row(keys, t), row(values, t)));
    }
    const sa::Matrix last_query = row(queries, length - 1);
    const sa::Matrix last_key = row(keys, length - 1);
    const sa::Matrix last_value = row(values, length - 1);
    // The step appends to the cache; taking the row off again afterwards (outside the timing)
    // keeps every repetition a step from N - 1 to N tokens, with no copy of the cache timed.
    std::vector<double> step_times;
    sa::Matrix cached_output;
    for (int repetition = 0; repetition < 51; ++repetition) {
        const auto start = std::chrono::steady_clock::now();
        cached_output = sa::decode_step(prefix, last_query, last_key, last_value);
        const auto stop = std::chrono::steady_clock::now();
        step_times.push_back(std::chrono::duration<double>(stop - start).count());
        prefix.keys.resize((length - 1) * prefix.key_dim);
        prefix.values.resize((length - 1) * prefix.value_dim);
    }
    std::sort(step_times.begin(), step_times.end());
    const Measurement cached{step_times[step_times.size() / 2], 0.0, cached_output};
    const Measurement recomputed = measure(settings.repetitions, [&] {
        return sa::fast_attention(queries, keys, values, sa::Masking::causal);
    });
    const double d = static_cast<double>(settings.dim);
    const double big_n = static_cast<double>(length);
    const double difference = largest_relative_difference(cached.result, row(recomputed.result, length - 1));
    fmt::print("\nDecoding token N = {} at d = {}: one step with the KV cache ({:.0f} operations) takes {:.3f} ms;\n"
               "recomputing the prefix's causal attention with the tiled kernel ({:.0f} operations) takes {:.3f} ms\n"
               "(medians of 51 steps and of {} recomputations).\n"
               "The cache is {:.0f} times faster (relative difference of the new output: {:.1e}).\n",
               length, settings.dim, 4.0 * big_n * d, cached.seconds * 1e3, 2.0 * big_n * (big_n + 1.0) * d,
               recomputed.seconds * 1e3, settings.repetitions, recomputed.seconds / cached.seconds, difference);
}

void write_figures(const std::vector<Row>& rows, const Settings& settings)
{
    sa::LinePlot speed{"Speed of attention at d = 64, measured on the machine that built this copy of the book", "n",
                       "GFLOP/s (4·n²·d operations per second)"};
    sa::LinePlot memory{"Memory of one call, measured on the machine that built this copy of the book", "n",
                        "peak extra memory (MiB)"};
    for (const std::string method : {"step by step", "OpenBLAS baseline", "tiled kernel"}) {
        sa::Series speed_series{method};
        sa::Series memory_series{method};
        for (const Row& row : rows) {
            if (row.method == method) {
                const double n = static_cast<double>(row.n);
                speed_series.x.push_back(n);
                speed_series.y.push_back(4.0 * n * n * static_cast<double>(settings.dim) / row.measurement.seconds / 1e9);
                memory_series.x.push_back(n);
                memory_series.y.push_back(row.measurement.bytes / mebibyte);
            }
        }
        speed.series.push_back(speed_series);
        memory.series.push_back(memory_series);
    }
    speed.log_x = true;
    speed.log_x_base = 2;
    memory.log_x = true;
    memory.log_x_base = 2;
    memory.log_y = true;
    std::ofstream(settings.figures + "/measured-speed.svg") << sa::line_plot_svg(speed);
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
        settings = {{64, 128}, 256, 256, 64, 1, 256, {}};
    } else if (quick) {
        settings = {{256, 512, 1024}, 0, 1024, 64, 3, 1024, {}};
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
    const std::vector<Row> rows = compare_kernels(settings);
    print_ratios(rows);
    compare_decoding(settings);
    if (!settings.figures.empty()) {
        write_figures(rows, settings);
    }
    return "";  // printed as it goes: a full run takes minutes
}

}  // namespace

int main(int argc, char** argv)
{
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
