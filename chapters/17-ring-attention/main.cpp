// Chapter 17, Attention across machines: the sequence split between G ranks, ring attention
// over Open MPI in three layouts, and DeepSpeed-Ulysses' all-to-all beside it.
//
//   mpirun -np 4 build/bin/ch17-ring-attention
//
// Every process runs the same program; rank g of a ring runs on process g mod (processes), and
// the first process prints. Without mpirun it runs as one process that runs every rank.
// --step-times FILE also times one ring step on this machine (step_times.hpp), apart from the output.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <streambuf>
#include <string>
#include <vector>

#include "attention.hpp"
#include "cli.hpp"
#include "masking.hpp"
#include "mpi_communicator.hpp"
#include "multi_head.hpp"
#include "projection.hpp"
#include "random.hpp"
#include "report.hpp"
#include "ring_attention.hpp"
#include "step_times.hpp"
#include "tiled.hpp"

namespace {

constexpr std::size_t width = 24;  // d_k = d_v of the sharded run: 1, 2, 3, 4, 6, 8, 12 or 24 heads
constexpr std::uint64_t seed = 17;
constexpr sa::Layout all_layouts[] = {sa::Layout::contiguous, sa::Layout::striped, sa::Layout::zigzag};

const char* yes(bool flag)
{
    return flag ? "true" : "false";
}

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

// The options, read and checked before MPI starts, so a refused command line ends every process alike.
struct Options {
    std::size_t ranks;
    std::size_t length;
    std::size_t heads;
    std::size_t stop_rank;
    std::vector<sa::Layout> layouts;  // of the sharded run: one, or all three
};

std::vector<sa::Layout> chosen_layouts(const sa::Example& example)
{
    const std::string name = sa::choice_option(example, "--layout", {"all", "contiguous", "striped", "zig-zag"});
    std::vector<sa::Layout> chosen;
    for (const sa::Layout layout : all_layouts) {
        if (name == "all" || name == sa::layout_name(layout)) {
            chosen.push_back(layout);
        }
    }
    return chosen;
}

Options read_options(const sa::Example& example)
{
    const auto ranks = static_cast<std::size_t>(sa::whole_option(example, "--ranks", 1, 64));
    const auto length = static_cast<std::size_t>(sa::whole_option(example, "--length", 1, 4096));
    const auto heads = static_cast<std::size_t>(sa::whole_option(example, "--ulysses-heads", 1, 24));
    if (length < ranks) {
        throw sa::UsageError(fmt::format("--ranks {} is more than the {} tokens of --length: each rank needs at least "
                                         "one token", ranks, length));
    }
    if (heads % ranks != 0 || width % heads != 0) {
        throw sa::UsageError(fmt::format("--ulysses-heads {} does not split between --ranks {}: Ulysses gives each rank h/G "
                                         "heads, so h must be a multiple of G and divide d = {}", heads, ranks, width));
    }
    const std::string stop = example.options.find("--stop-rank")->second;
    const std::size_t stop_rank =
        stop == "none" ? SIZE_MAX : static_cast<std::size_t>(sa::whole_option(example, "--stop-rank", 0, 63));
    return {ranks, length, heads, stop_rank, chosen_layouts(example)};
}

// Why one machine is not enough: K and V grow with n (chapter 13's count of the numbers a cache holds).
// The first row is the worked example, the reader's own with --embeddings and --weights.
std::string memory_section(const Options& options, const sa::Example& example)
{
    std::string text = "Memory of K and V for one head, 8·n·(d_k + d_v) bytes, and of the n×n score matrix "
                       "(first row: the worked example):\n"
                       "        n  d_k  d_v     K and V   score matrix\n";
    const std::array<std::array<std::uint64_t, 3>, 3> rows{{
        {example.tokens.size(), example.w_key.cols(), example.w_value.cols()}, {4096, 64, 64}, {1048576, 64, 64}}};
    for (const auto& [n, d_k, d_v] : rows) {
        const auto kv = static_cast<double>(sa::cached_step_reads(n, d_k, d_v) * sizeof(double));
        text += fmt::format("  {:>7}  {:>3}  {:>3}  {:>10}  {:>13}\n", n, d_k, d_v, bytes_text(kv),
                            bytes_text(static_cast<double>(n * n * sizeof(double))));
    }
    const double per_rank = static_cast<double>(sa::cached_step_reads(1048576, 64, 64) * sizeof(double)) /
                            static_cast<double>(options.ranks);
    text += fmt::format("  split between G = {} ranks (--ranks), each holds K and V of n/G tokens: {} at n = 1048576\n\n",
                        options.ranks, bytes_text(per_rank));
    return text;
}

std::vector<sa::Shard> my_shards(const sa::Communicator& network, const sa::RingSetup& setup,
                                 const sa::Matrix& queries, const sa::Matrix& keys, const sa::Matrix& values)
{
    std::vector<sa::Shard> shards;
    for (std::size_t rank = 0; rank < setup.ranks; ++rank) {
        if (network.runs(rank)) {
            shards.push_back(sa::make_shard(setup.layout, setup.ranks, rank, queries, keys, values));
        }
    }
    return shards;
}

std::string holders(const std::vector<std::string>& tokens, std::size_t step, std::size_t ranks)
{
    std::string text;
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        text += fmt::format("{}rank {} holds {}", rank == 0 ? "" : ", ", rank,
                            tokens[sa::ring_block_owner(rank, step, ranks)]);
    }
    return text;
}

// The worked example on one rank per token: the states after each step, the outputs, the bytes.
void worked_example(sa::Report& report, const sa::Example& example, const ring::Network& network)
{
    const std::size_t n = example.tokens.size();
    const sa::Matrix queries = sa::project(example.embeddings, example.w_query);
    const sa::Matrix keys = sa::project(example.embeddings, example.w_key);
    const sa::Matrix values = sa::project(example.embeddings, example.w_value);
    //> worked-ring
    const sa::RingSetup setup{n, n, sa::Layout::contiguous, example.causal};  // one token per rank
    const auto ring = network.ring(setup.ranks);  // over MPI, or in this one process
    const auto mine = sa::ring_attention(*ring, setup, my_shards(*ring, setup, queries, keys, values));
    const auto everyone = sa::gather_results(*ring, setup, mine);  // at rank 0
    //< worked-ring
    if (everyone.empty()) {
        return;
    }
    const auto& tokens = example.tokens;
    std::vector<std::string> columns{"μ", "ℓ"};
    for (const auto& feature : sa::feature_labels(values.cols())) {
        columns.push_back("Õ " + feature);
    }
    report.text(fmt::format("The worked example on G = {} ranks, one token each{}: rank g holds token g's q, k and v\n"
                            "(G is the number of tokens here; --ranks, --length and --layout set the sharded run "
                            "below)\n\n",
                            n, example.causal ? ", causal" : ""));
    for (std::size_t step = 0; step < n; ++step) {
        std::vector<sa::Matrix> rows;
        for (const auto& result : everyone) {
            rows.push_back(result.states[step]);
        }
        report.table(fmt::format("Step {}: {}; each rank's state after it", step, holders(tokens, step, n)),
                     sa::stack_rows(rows), tokens, columns);
    }
    const sa::Matrix outputs = sa::assemble_outputs(everyone, n);
    const sa::Matrix mask = example.causal ? sa::causal_mask(n, n) : sa::Matrix(n, n, 0.0);
    report.table("Outputs O = Õ / ℓ, gathered at rank 0", outputs, tokens, sa::feature_labels(values.cols()));
    bool same_bits = true;
    for (const auto& result : everyone) {
        same_bits = same_bits && sa::identical(result.outputs, sa::split_and_merge_in_ring_order(
                                                                   setup, queries, keys, values, result.rank));
    }
    report.text(fmt::format("Ring == chapter 7 to a relative 1e-12: {}\n"
                            "Ring == chapter 13's split-and-merge in the ring's order, bit for bit: {}\n",
                            yes(sa::agree(outputs, sa::attention(queries, keys, values, mask), 1e-12)), yes(same_bits)));
    report.text(fmt::format("Bytes each rank sent and received, against 2·(G-1)·(n/G)·d·8 = {:.0f}:\n",
                            sa::ring_bytes_formula(n, n, values.cols())));
    for (const auto& result : everyone) {
        report.text(fmt::format("  rank {}: sent {}, received {}\n", result.rank, result.bytes_sent,
                                result.bytes_received));
    }
    report.text("\n");
}

struct Sequence {
    sa::Matrix queries;
    sa::Matrix keys;
    sa::Matrix values;
};

Sequence random_sequence(std::size_t tokens)
{
    sa::SplitMix64 generator(seed);
    Sequence sequence;
    sequence.queries = sa::random_matrix(tokens, width, generator);
    sequence.keys = sa::random_matrix(tokens, width, generator);
    sequence.values = sa::random_matrix(tokens, width, generator);
    return sequence;
}

// One line: does the ring, put together at rank 0, equal chapter 7 and chapter 13's split-and-merge?
std::string check_line(const sa::RingSetup& setup, const Sequence& sequence, const std::vector<sa::RankResult>& everyone)
{
    const std::size_t n = setup.tokens;
    const sa::Matrix mask = setup.causal ? sa::causal_mask(n, n) : sa::Matrix(n, n, 0.0);
    const sa::Matrix reference = sa::attention(sequence.queries, sequence.keys, sequence.values, mask);
    bool same_bits = true;
    for (const auto& result : everyone) {
        same_bits = same_bits && sa::identical(result.outputs, sa::split_and_merge_in_ring_order(
                                                                   setup, sequence.queries, sequence.keys,
                                                                   sequence.values, result.rank));
    }
    return fmt::format("  {:<11}  {:<6}  {:<19}  {}\n", sa::layout_name(setup.layout), setup.causal ? "causal" : "none",
                       yes(sa::agree(sa::assemble_outputs(everyone, n), reference, 1e-12)), yes(same_bits));
}

std::string work_row(sa::Layout layout, const std::vector<sa::RankResult>& everyone)
{
    std::string text = fmt::format("  {:<11}", sa::layout_name(layout));
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
std::string busiest_row(const sa::RingSetup& setup, const std::vector<sa::RankResult>& everyone, double& smallest)
{
    std::string text = fmt::format("  {:<11}", sa::layout_name(setup.layout));
    double least = 1.0;
    for (std::size_t step = 0; step < setup.ranks; ++step) {
        std::uint64_t busiest = 0;
        std::uint64_t whole = 0;  // the pairs of the largest block of that step, every one computed without a mask
        for (const auto& result : everyone) {
            const std::size_t owner = sa::ring_block_owner(result.rank, step, setup.ranks);
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

std::string bytes_row(sa::Layout layout, const std::vector<sa::RankResult>& everyone)
{
    std::string text = fmt::format("  {:<11}", sa::layout_name(layout));
    for (const auto& result : everyone) {
        text += fmt::format("  {:>13}", fmt::format("{}/{}", result.bytes_sent, result.bytes_received));
    }
    return text + "\n";
}

std::string steps_text(const std::vector<std::uint64_t>& bytes)
{
    std::string text;
    for (const std::uint64_t each : bytes) {
        text += fmt::format("{}{}", text.empty() ? "" : " ", each);
    }
    return text;
}

// The ring's backward pass after a forward one, on the same ranks: one line, checked against chapter 11.
std::string backward_line(const ring::Network& network, const sa::RingSetup& setup, const Sequence& sequence,
                          const std::vector<sa::RankResult>& forward, const std::vector<sa::RankResult>& everyone)
{
    sa::SplitMix64 generator(seed + 1);
    const sa::Matrix d_outputs = sa::random_matrix(setup.tokens, width, generator);
    //> ring-backward-run
    const auto ring = network.ring(setup.ranks);
    const auto shards = my_shards(*ring, setup, sequence.queries, sequence.keys, sequence.values);
    std::vector<sa::Matrix> d_mine;
    for (const sa::Shard& shard : shards) {
        d_mine.push_back(sa::shard_rows(d_outputs, setup.layout, setup.ranks, shard.rank));
    }
    const auto grads = sa::gather_results(*ring, setup, sa::ring_attention_backward(*ring, setup, shards, forward, d_mine));
    //< ring-backward-run
    if (grads.empty()) {
        return "";
    }
    const std::size_t n = setup.tokens;
    const sa::AttentionGrads reference = sa::attention_backward(sa::identity(n), sequence.queries, sequence.keys,
                                                                sequence.values, sa::causal_mask(n, n), d_outputs);
    const sa::Matrix together = sa::assemble_outputs(grads, n);  // dQ, dK and dV side by side
    const auto parts = sa::split_heads(together, 3);
    const bool same = sa::agree(parts[0], reference.d_queries, 1e-12) && sa::agree(parts[1], reference.d_keys, 1e-12) &&
                      sa::agree(parts[2], reference.d_values, 1e-12);
    return fmt::format("  {:<11}  {:<21}  {} | {}\n", sa::layout_name(setup.layout), yes(same),
                       steps_text(everyone.front().step_bytes), steps_text(grads.front().step_bytes));
}

// The tables of the sharded run, filled layout by layout.
struct ShardedTables {
    std::string checks;
    std::string work;
    std::string busiest;
    std::string bytes;
    std::string backward;
    double smallest_share = 1.0;  // of a whole block, at a step that sends, among the layouts under the mask
};

ShardedTables table_heads(const Options& options)
{
    std::string ranks_header;
    std::string steps_header;
    for (std::size_t rank = 0; rank < options.ranks; ++rank) {
        ranks_header += fmt::format("  {:>13}", fmt::format("rank {}", rank));
        steps_header += fmt::format("  {:>7}", fmt::format("step {}", rank));
    }
    const std::size_t n = options.length;
    ShardedTables tables;
    tables.checks = fmt::format("The sequence split between G = {} ranks: n = {}, d_k = d_v = {}, Q, K and V seeded "
                                "random\n  layout       mask    == chapter 7 (1e-12)  == split-and-merge, bit for bit\n",
                                options.ranks, n, width);
    tables.work = "Dot products q·k the kernel computed per rank under the causal mask (blocks skipped):\n  layout     " +
                  ranks_header + "  last/first  largest/mean\n";
    tables.busiest = "Dot products of each step's busiest rank, and the smallest share of a whole block at a step "
                     "that sends:\n  layout     " + steps_header + "  smallest share\n";
    tables.bytes = fmt::format("Bytes each rank sent/received, against 2·(G-1)·(n/G)·d·8 = {:.0f}:\n  layout     {}\n",
                               sa::ring_bytes_formula(n, options.ranks, width), ranks_header);
    tables.backward = "The ring's backward pass, causal, dO seeded random: K and V go round again, dK and dV travel "
                      "with them\n  layout       == chapter 11 (1e-12)  bytes rank 0 sent at each step, forward | "
                      "backward\n";
    return tables;
}

// The sharded run: every layout, with and without the mask, checked; the causal work, the bytes, the backward pass.
ShardedTables sharded_runs(sa::Report& report, const ring::Network& network, const Options& options,
                           sa::Matrix& work_figure)
{
    const std::size_t n = options.length;
    const Sequence sequence = random_sequence(n);
    ShardedTables tables = table_heads(options);
    work_figure = sa::Matrix(options.layouts.size(), options.ranks);
    for (std::size_t l = 0; l < options.layouts.size(); ++l) {
        for (const bool causal : {false, true}) {
            //> sharded-ring
            const sa::RingSetup setup{n, options.ranks, options.layouts[l], causal};
            const auto ring = network.ring(setup.ranks);
            const auto mine = sa::ring_attention(
                *ring, setup, my_shards(*ring, setup, sequence.queries, sequence.keys, sequence.values));
            const auto everyone = sa::gather_results(*ring, setup, mine);
            //< sharded-ring
            if (causal) {
                tables.backward += backward_line(network, setup, sequence, mine, everyone);
            }
            if (everyone.empty()) {
                continue;  // not the first process
            }
            tables.checks += check_line(setup, sequence, everyone);
            if (causal) {
                tables.work += work_row(options.layouts[l], everyone);
                tables.busiest += busiest_row(setup, everyone, tables.smallest_share);
                tables.bytes += bytes_row(options.layouts[l], everyone);
                for (const auto& result : everyone) {
                    work_figure(l, result.rank) = static_cast<double>(result.pairs);
                }
            }
        }
    }
    report.text(tables.checks + "\n" + tables.work + "\n" + tables.busiest + "\n" + tables.bytes + "\n" +
                tables.backward + "\n");
    return tables;
}

// DeepSpeed-Ulysses on the same sequence: two all-to-alls around attention on h/G heads.
void ulysses_run(sa::Report& report, const ring::Network& network, const Options& options)
{
    const std::size_t n = options.length;
    const Sequence sequence = random_sequence(n);
    //> ulysses-run
    const sa::RingSetup setup{n, options.ranks, sa::Layout::contiguous, true};
    const auto ranks = network.ring(setup.ranks);  // the same communicator, used for all-to-alls
    const auto mine = sa::ulysses_attention(
        *ranks, setup, options.heads, my_shards(*ranks, setup, sequence.queries, sequence.keys, sequence.values));
    const auto everyone = sa::gather_results(*ranks, setup, mine);
    //< ulysses-run
    if (everyone.empty()) {
        return;
    }
    const sa::Matrix reference = sa::multi_head_attention(sequence.queries, sequence.keys, sequence.values,
                                                          sa::causal_mask(n, n), options.heads, sa::identity(width));
    std::string sent;
    for (const auto& result : everyone) {
        sent += fmt::format("{}{}", result.rank == 0 ? "" : ", ", result.bytes_sent);
    }
    const double ulysses = sa::ulysses_bytes_formula(n, options.ranks, width);
    const double ring = sa::ring_bytes_formula(n, options.ranks, width);
    report.text(fmt::format(
        "DeepSpeed-Ulysses, h = {} heads, {} per rank, causal:\n"
        "  == chapter 9's heads side by side (W_O = I), bit for bit: {}\n"
        "  numbers each rank puts through the two all-to-alls, 4·n·d/G = {}\n"
        "  bytes each rank sent: {}, against 4·(n/G)·d·(G-1)/G·8 = {:.0f}\n"
        "  the ring sends {:.0f} bytes per rank, {:.3f} times as many\n"
        "  numbers that cross a bisection of the ranks each way, all-to-all: floor(G/2)·ceil(G/2)·4·(n/G)·(d/G) = {:.0f},\n"
        "  spread over the links that cross it; the ring: 2·(G-1)·(n/G)·d = {:.0f} over the one link each way\n\n",
        options.heads, options.heads / options.ranks,
        yes(sa::identical(sa::assemble_outputs(everyone, n), reference)), 4 * n * width / options.ranks, sent,
        ulysses, ring, ring / ulysses, sa::ulysses_bisection_numbers(n, options.ranks, width), ring / 8.0));
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
        fmt::format("{}·b", sa::ring_rank_numbers(1, head_dim, head_dim)), sa::ring_rank_numbers(1, head_dim, head_dim));
    for (const std::uint64_t devices : {1, 8, 64, 512}) {
        text += fmt::format("  {:>5}  {:>12}\n", devices,
                            sa::ring_longest_sequence(device_bytes, devices, head_dim, head_dim));
    }
    return text + "\n";
}

// Past this machine, on paper: when does a ring step hide its transfer behind its compute?
// `share` is the smallest share of a whole block a step's busiest rank computed under the mask (the kernel's count).
std::string model_section(double share)
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

// The ring's timeline: which rank's block each rank holds at each step.
sa::Matrix timeline(std::size_t ranks)
{
    sa::Matrix owners(ranks, ranks);
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        for (std::size_t step = 0; step < ranks; ++step) {
            owners(rank, step) = static_cast<double>(sa::ring_block_owner(rank, step, ranks));
        }
    }
    return owners;
}

void figures(const sa::Example& example, const Options& options, const sa::Matrix& work)
{
    sa::Example whole_numbers = example;
    whole_numbers.precision = 0;
    const sa::Report drawings(whole_numbers);
    std::vector<std::string> names;
    for (const sa::Layout layout : options.layouts) {
        names.push_back(sa::layout_name(layout));
    }
    const auto ranks = sa::numbered_labels("rank ", options.ranks, 0);
    drawings.heatmap("work-per-rank.svg", {.title = fmt::format("Dot products computed per rank, causal, n = {}, G = {}",
                                                                options.length, options.ranks),
                                           .values = work, .row_labels = names, .col_labels = ranks,
                                           .row_axis = "layout", .col_axis = "rank", .scale_label = "scores"});
    drawings.heatmap("ring-timeline.svg", {.title = fmt::format("Whose block each rank holds, G = {}", options.ranks),
                                           .values = timeline(options.ranks), .row_labels = ranks,
                                           .col_labels = sa::numbered_labels("step ", options.ranks, 0),
                                           .row_axis = "rank", .col_axis = "step", .scale_label = "block of rank"});
}

std::string ring_chapter(const sa::Example& example)
{
    const Options options = read_options(example);  // a refused command line ends before MPI starts
    const ring::Network network(options.stop_rank);
    try {
        sa::Report report(example);
        report.text(memory_section(options, example));
        worked_example(report, example, network);
        sa::Matrix work;
        const ShardedTables tables = sharded_runs(report, network, options, work);
        ulysses_run(report, network, options);
        report.text(model_section(tables.smallest_share));
        if (const std::string& path = example.options.at("--step-times"); !path.empty()) {  // every process times
            const auto ranks = static_cast<std::size_t>(std::max(2, network.processes()));
            const auto ring = network.ring(ranks);
            ring::write_step_times(path, sa::Report(example), *ring, ranks, network.process(),
                                   ring::this_machine(network.processes(), network.on_mpi()));
        }
        if (network.process() != 0) {
            return "";
        }
        figures(example, options, work);
        return report.str();
    } catch (const std::exception& error) {  // one rank failed: stop every process, none left waiting
        if (!network.on_mpi()) {
            throw;  // one process: the one line and status 2, as for any error
        }
        network.abort_all(error.what());
    }
}

// --ulysses-heads when the reader gives --ranks alone: 4 when G divides it, else G itself (one head per rank).
std::string fit_heads(const sa::Example& example)
{
    const std::string& text = example.options.find("--ranks")->second;
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 2) {
        return "";  // --ranks is refused with its own message
    }
    const std::size_t ranks = std::stoul(text);
    return ranks == 0 || 4 % ranks == 0 || width % ranks != 0 ? "" : std::to_string(ranks);
}

// Discards what a stream is given: every process but the first stays silent.
class Silence : public std::streambuf {
protected:
    int overflow(int character) override { return traits_type::not_eof(character); }
};

}  // namespace

int main(int argc, char** argv)
{
    sa::ProgramInfo info{"ch17-ring-attention",
                         "attention with the sequence split between ranks: ring attention and Ulysses over MPI",
                         sa::mouse_eats_cheese()};
    info.options = {{"--ranks", "G", "ranks of the sharded run (the worked example has one per token)", "4"},
                    {"--length", "N", "tokens of the sharded run", "96"},
                    {"--ulysses-heads", "h", "heads of the Ulysses run, a multiple of G that divides d = 24", "4",
                     fit_heads},
                    {"--stop-rank", "R",
                     "make rank R fail at its first send, to see every process stopped (mpirun -q leaves only the "
                     "book's line)",
                     "none"},
                    {"--layout", "L", "layout of the sharded run: contiguous, striped, zig-zag or all", "all"},
                    {"--step-times", "FILE",
                     "write the measured time of a ring step's compute and transfer on this machine to FILE (with "
                     "--figures, a plot too)", ""}};
    info.writes = {"--step-times"};  // checked before the run starts
    static Silence silence;  // outlives main: the streams are flushed after it returns
    if (ring::launch_rank() != 0) {  // every process reads the same command line; the first one speaks
        std::cout.rdbuf(&silence);
        std::cerr.rdbuf(&silence);
    }
    return sa::run_program(info, argc, argv, ring_chapter);
}
