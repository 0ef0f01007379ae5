// Chapter 17's report around the ring: its memory, its tables, its model on paper, its figures.
#include "ring_tables.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "report.hpp"
#include "tiled.hpp"

namespace sa {

namespace {

std::string bytes_text(double bytes)
{
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    std::size_t unit = 0;
    while (bytes >= 1024.0 && unit + 1 < std::size(units)) {
        bytes /= 1024.0;
        ++unit;
    }
    return unit == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[unit]);
}

std::string work_row(Layout layout, const std::vector<RankResult>& everyone)
{
    std::string text = fmt::format("  {:<11}", layout_name(layout));
    std::uint64_t total = 0;
    std::uint64_t largest = 0;
    for (const auto& result : everyone) {
        text += fmt::format("  {:>13}", fmt::format("{} ({})", result.pairs, result.skipped));
        total += result.pairs;
        largest = std::max(largest, result.pairs);
    }
    const double mean = static_cast<double>(total) / static_cast<double>(everyone.size());
    return text + fmt::format("  {:>10.3f}  {:>12.3f}\n",
                              static_cast<double>(everyone.back().pairs) / static_cast<double>(everyone.front().pairs),
                              static_cast<double>(largest) / mean);
}

// Each step's busiest rank: its dot products, and the smallest share of a whole block among the steps that send.
std::string busiest_row(const RingSetup& setup, const std::vector<RankResult>& everyone, double& smallest)
{
    std::string text = fmt::format("  {:<11}", layout_name(setup.layout));
    double least = 1.0;
    for (std::size_t step = 0; step < setup.ranks; ++step) {
        std::uint64_t busiest = 0;
        std::uint64_t whole = 0;  // the pairs of the largest block of that step, every one computed without a mask
        for (const auto& result : everyone) {
            const std::size_t owner = ring_block_owner(result.rank, step, setup.ranks);
            busiest = std::max(busiest, result.step_pairs[step]);
            whole = std::max<std::uint64_t>(whole, result.rows.size() * everyone[owner].rows.size());
        }
        text += fmt::format("  {:>7}", busiest);
        if (step + 1 < setup.ranks) {
            least = std::min(least, static_cast<double>(busiest) / static_cast<double>(whole));
        }
    }
    smallest = std::min(smallest, least);
    return text + fmt::format("  {:>14.3f}\n", least);
}

std::string bytes_row(Layout layout, const std::vector<RankResult>& everyone)
{
    std::string text = fmt::format("  {:<11}", layout_name(layout));
    for (const auto& result : everyone) {
        text += fmt::format("  {:>13}", fmt::format("{}/{}", result.bytes_sent, result.bytes_received));
    }
    return text + "\n";
}

// Past this machine, on paper: the longest sequence G devices hold, one head of one layer, in doubles.
std::string longest_sequences()
{
    constexpr std::uint64_t device_bytes = 80'000'000'000;  // an H100 SXM's 80 GB (2022)
    constexpr std::uint64_t head_dim = 128;
    std::string text = fmt::format(
        "  the longest sequence G devices of D = {} GB hold in training, one head of d_k = d_v = {}, in doubles:\n"
        "  each rank keeps b·(4d_k + 4d_v + 3) = {} numbers for its b tokens (Q, its state, the block it holds,\n"
        "  the block arriving, its own K and V for the backward pass, one row of scores),\n"
        "  so n <= G·floor(D / (8·{})), G times the G = 1 row\n"
        "      G     longest n\n", device_bytes / 1'000'000'000, head_dim,
        fmt::format("{}·b", ring_rank_numbers(1, head_dim, head_dim)), ring_rank_numbers(1, head_dim, head_dim));
    for (const std::uint64_t devices : {1, 8, 64, 512}) {
        text += fmt::format("  {:>5}  {:>12}\n", devices,
                            ring_longest_sequence(device_bytes, devices, head_dim, head_dim));
    }
    return text + "\n";
}

// The ring's timeline: which rank's block each rank holds at each step.
Matrix timeline(std::size_t ranks)
{
    Matrix owners(ranks, ranks);
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        for (std::size_t step = 0; step < ranks; ++step) {
            owners(rank, step) = static_cast<double>(ring_block_owner(rank, step, ranks));
        }
    }
    return owners;
}

}  // namespace

std::string ring_memory_table(const Example& example, std::size_t ranks)
{
    std::string text = "Memory of K and V for one head, 8·n·(d_k + d_v) bytes, and of the n×n score matrix "
                       "(first row: the worked example):\n"
                       "        n  d_k  d_v     K and V   score matrix\n";
    const std::array<std::array<std::uint64_t, 3>, 3> rows{{
        {example.tokens.size(), example.w_key.cols(), example.w_value.cols()}, {4096, 64, 64}, {1048576, 64, 64}}};
    for (const auto& [n, d_k, d_v] : rows) {
        const auto kv = static_cast<double>(cached_step_reads(n, d_k, d_v) * sizeof(double));
        text += fmt::format("  {:>7}  {:>3}  {:>3}  {:>10}  {:>13}\n", n, d_k, d_v, bytes_text(kv),
                            bytes_text(static_cast<double>(n * n * sizeof(double))));
    }
    const double per_rank =
        static_cast<double>(cached_step_reads(1048576, 64, 64) * sizeof(double)) / static_cast<double>(ranks);
    text += fmt::format("  split between G = {} ranks (--ranks), each holds K and V of n/G tokens: {} at n = 1048576\n\n",
                        ranks, bytes_text(per_rank));
    return text;
}

RingTables ring_tables(const RingOptions& options, std::size_t width)
{
    std::string ranks_header;
    std::string steps_header;
    for (std::size_t rank = 0; rank < options.ranks; ++rank) {
        ranks_header += fmt::format("  {:>13}", fmt::format("rank {}", rank));
        steps_header += fmt::format("  {:>7}", fmt::format("step {}", rank));
    }
    const std::size_t n = options.length;
    RingTables tables;
    tables.checks = fmt::format("The sequence split between G = {} ranks: n = {}, d_k = d_v = {}, Q, K and V seeded "
                                "random\n  layout       mask    == chapter 7 (1e-12)  == split-and-merge, bit for bit\n",
                                options.ranks, n, width);
    tables.work = "Dot products q·k the kernel computed per rank under the causal mask (blocks skipped):\n  layout     " +
                  ranks_header + "  last/first  largest/mean\n";
    tables.busiest = "Dot products of each step's busiest rank, and the smallest share of a whole block at a step "
                     "that sends:\n  layout     " + steps_header + "  smallest share\n";
    tables.bytes = fmt::format("Bytes each rank sent/received, against 2·(G-1)·(n/G)·d·8 = {:.0f}:\n  layout     {}\n",
                               ring_bytes_formula(n, options.ranks, width), ranks_header);
    tables.backward = "The ring's backward pass, causal, dO seeded random: K and V go round again, dK and dV travel "
                      "with them\n  layout       == chapter 11 (1e-12)  bytes rank 0 sent at each step, forward | "
                      "backward\n";
    return tables;
}

void add_causal_rows(RingTables& tables, const RingSetup& setup, const std::vector<RankResult>& everyone)
{
    tables.work += work_row(setup.layout, everyone);
    tables.busiest += busiest_row(setup, everyone, tables.smallest_share);
    tables.bytes += bytes_row(setup.layout, everyone);
}

std::string steps_text(const std::vector<std::uint64_t>& bytes)
{
    std::string text;
    for (const std::uint64_t each : bytes) {
        text += fmt::format("{}{}", text.empty() ? "" : " ", each);
    }
    return text;
}

std::string ulysses_text(const RingOptions& options, std::size_t width, const std::vector<RankResult>& everyone,
                         bool same)
{
    const std::size_t n = options.length;
    std::string sent;
    for (const auto& result : everyone) {
        sent += fmt::format("{}{}", result.rank == 0 ? "" : ", ", result.bytes_sent);
    }
    const double ulysses = ulysses_bytes_formula(n, options.ranks, width);
    const double ring = ring_bytes_formula(n, options.ranks, width);
    return fmt::format(
        "DeepSpeed-Ulysses, h = {} heads, {} per rank, causal:\n"
        "  == chapter 9's heads side by side (W_O = I), bit for bit: {}\n"
        "  numbers each rank puts through the two all-to-alls, 4·n·d/G = {}\n"
        "  bytes each rank sent: {}, against 4·(n/G)·d·(G-1)/G·8 = {:.0f}\n"
        "  the ring sends {:.0f} bytes per rank, {:.3f} times as many\n"
        "  numbers that cross a bisection of the ranks each way, all-to-all: floor(G/2)·ceil(G/2)·4·(n/G)·(d/G) = {:.0f},\n"
        "  spread over the links that cross it; the ring: 2·(G-1)·(n/G)·d = {:.0f} over the one link each way\n\n",
        options.heads, options.heads / options.ranks, same, 4 * n * width / options.ranks, sent, ulysses, ring,
        ring / ulysses, ulysses_bisection_numbers(n, options.ranks, width), ring / 8.0);
}

// When does a ring step hide its transfer behind its compute? `share` is the smallest share of a whole block a
// step's busiest rank computed under the mask (the kernel's count).
std::string ring_on_paper(double share)
{
    struct Numbers {
        const char* name;
        double bytes;              // σ, bytes a number
        double operations;         // F, the dense peak in operations per second
    };
    const Numbers numbers[] = {{"FP64", 8, 67e12}, {"BF16", 2, 989e12}};  // an H100 SXM's tensor cores (2022)
    struct Link {
        const char* name;
        double bytes_per_second;
    };
    const Link links[] = {{"NVLink 4, one direction (2022)", 450e9},
                          {"InfiniBand NDR, one port (2022)", 50e9},
                          {"100 Gigabit Ethernet (2010)", 12.5e9}};
    std::string text = fmt::format(
        "Past this machine, on paper (a model, not a measurement):\n"
        "  a step computes f·4·b²·d operations at F per second, f the share of a whole block its busiest rank\n"
        "  computes; it sends b·2d·σ bytes at B per second, σ bytes a number; the transfer hides behind the\n"
        "  compute when b >= σ·F/(2·f·B) tokens per rank (d cancels); f = 1 without the mask, f = {:.3f} under it\n"
        "  (the smallest share above)\n"
        "  numbers  σ  F (TFLOP/s), dense, an H100 SXM's tensor cores (2022)\n", share);
    for (const Numbers& each : numbers) {
        text += fmt::format("  {:<7}  {:.0f}  {:>5.0f}\n", each.name, each.bytes, each.operations / 1e12);
    }
    text += fmt::format("  smallest b                        B (GB/s)  FP64 f=1  FP64 f={:.3f}  BF16 f=1  BF16 f={:.3f}\n",
                        share, share);
    for (const Link& link : links) {
        text += fmt::format("  {:<32}  {:>8.1f}", link.name, link.bytes_per_second / 1e9);
        for (const Numbers& each : numbers) {
            for (const double f : {1.0, share}) {
                const double smallest = std::ceil(each.bytes * each.operations / (2.0 * f * link.bytes_per_second));
                text += fmt::format("  {:>{}.0f}", smallest, f == 1.0 ? 8 : 12);
            }
        }
        text += "\n";
    }
    return text + "\n" + longest_sequences();
}

void ring_figures(const Example& example, const RingOptions& options, const Matrix& work)
{
    Example whole_numbers = example;
    whole_numbers.precision = 0;
    const Report drawings(whole_numbers);
    std::vector<std::string> names;
    for (const Layout layout : options.layouts) {
        names.push_back(layout_name(layout));
    }
    const auto ranks = numbered_labels("rank ", options.ranks, 0);
    drawings.heatmap("work-per-rank.svg", {.title = fmt::format("Dot products computed per rank, causal, n = {}, G = {}",
                                                                options.length, options.ranks),
                                           .values = work, .row_labels = names, .col_labels = ranks,
                                           .row_axis = "layout", .col_axis = "rank", .scale_label = "scores"});
    drawings.heatmap("ring-timeline.svg", {.title = fmt::format("Whose block each rank holds, G = {}", options.ranks),
                                           .values = timeline(options.ranks), .row_labels = ranks,
                                           .col_labels = numbered_labels("step ", options.ranks, 0),
                                           .row_axis = "rank", .col_axis = "step", .scale_label = "block of rank"});
}

}  // namespace sa
