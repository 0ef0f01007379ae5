// Chapter 17's measurement: one ring step on the machine that runs the program, the time to absorb
// a block of b keys against the time to pass a block of b keys and values on to the next rank, and the two
// together as the ring does them; and each rank's share of a causal forward pass in the three layouts.
//
// A time is a fact about the machine, not about the ring: it goes to a file of its own
// (--step-times FILE) and, with --figures, to a plot, never to the checked output. The book's
// build runs it under mpirun with 2 processes, after everything else is built.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"
#include "random.hpp"
#include "report.hpp"
#include "ring_attention.hpp"
#include "tiled.hpp"

namespace ring {

// The times of one step for each block size b, in seconds: absorbing, passing on, and both as the ring does them.
struct StepTimes {
    std::vector<double> tokens;    // b, tokens per block
    std::vector<double> absorb;    // absorb_block() and merge_attention() of a b×b block
    std::vector<double> transfer;  // a block of b keys and values to the next rank, and one from the previous
    std::vector<double> both;      // the transfer started, the block absorbed, then the wait: the ring's step
};

// The fastest of `runs` calls, in seconds: the one least disturbed by the rest of a shared machine.
inline double fastest(std::size_t runs, const std::function<void()>& call)
{
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t run = 0; run < runs; ++run) {
        const auto start = std::chrono::steady_clock::now();
        call();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

// One step's compute, as the ring does it: a fresh state, a b×b block absorbed without a mask, merged in.
class StepCompute {
public:
    StepCompute(std::size_t tokens, std::size_t dim)
    {
        sa::SplitMix64 generator(17);
        queries_ = sa::random_matrix(tokens, dim, generator);
        keys_ = sa::random_matrix(tokens, dim, generator);
        values_ = sa::random_matrix(tokens, dim, generator);
        mask_ = sa::Matrix(tokens, tokens, 0.0);
        running_ = sa::empty_attention(tokens, dim);
        operator()();
    }
    void operator()()
    {
        sa::PartialAttention partial = sa::empty_attention(queries_.rows(), values_.cols());
        sa::absorb_block(partial, queries_, keys_, values_, mask_, {0, queries_.rows(), 0, keys_.rows()});
        running_ = sa::merge_attention(running_, partial);
    }

private:
    sa::Matrix queries_;
    sa::Matrix keys_;
    sa::Matrix values_;
    sa::Matrix mask_;
    sa::PartialAttention running_;
};

// One step's transfer: every rank sends its block of b keys and values to rank g+1 and takes rank g-1's,
// with `compute` run between the start and the wait (nothing, to time the transfer alone). Each exchange ends
// only when the neighbour's block has arrived, so the processes keep in step without a barrier.
inline double time_transfer(sa::Communicator& ring, std::size_t ranks, std::size_t tokens, std::size_t dim,
                            std::size_t runs, const std::function<void()>& compute)
{
    const std::vector<double> block(tokens * 2 * dim, 1.0);
    std::vector<std::vector<double>> incoming(ranks, std::vector<double>(block.size()));
    const auto exchange = [&] {
        for (std::size_t rank = 0; rank < ranks; ++rank) {
            if (ring.runs(rank)) {
                ring.send(rank, (rank + 1) % ranks, block);
                ring.receive((rank + ranks - 1) % ranks, rank, incoming[rank]);
            }
        }
        compute();  // while the blocks travel, if MPI moves them without being called
        ring.wait();
    };
    exchange();  // the first message between two processes sets up their connection: not timed
    return fastest(runs, exchange);
}

// Every block size from 1 to 256 tokens at d = 64, on a ring of as many ranks as processes (at least 2).
inline StepTimes time_steps(sa::Communicator& ring, std::size_t ranks)
{
    constexpr std::size_t dim = 64;
    StepTimes times;
    for (std::size_t tokens = 1; tokens <= 256; tokens *= 2) {
        const std::size_t runs = std::clamp<std::size_t>(256 / tokens, 3, 100);  // about as long for every b
        times.tokens.push_back(static_cast<double>(tokens));
        StepCompute compute(tokens, dim);
        times.absorb.push_back(fastest(runs, [&] { compute(); }));
        times.transfer.push_back(time_transfer(ring, ranks, tokens, dim, runs, [] {}));
        times.both.push_back(time_transfer(ring, ranks, tokens, dim, runs, [&] { compute(); }));
    }
    return times;
}

// The machine that measured: its processor and cores, how the ranks ran, and its load meanwhile.
struct Machine {
    std::string name;   // "the processor, N logical cores"
    std::string where;  // the processes and what a transfer is
    double load = 0.0;  // the load average over the last minute
};

inline Machine this_machine(int processes, bool on_mpi)
{
    std::string processor = "a processor that does not name itself";
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
            processor = line.substr(line.find(':') + 2);
            break;
        }
    }
    Machine machine{fmt::format("{}, {} logical cores", processor, std::thread::hardware_concurrency()),
                    on_mpi ? fmt::format("{} processes under mpirun (shared memory)", processes)
                           : "one process, no MPI (a transfer is a copy in memory)",
                    0.0};
    std::ifstream("/proc/loadavg") >> machine.load;
    return machine;
}

// The times as text, for --step-times FILE, and their crossing point.
inline std::string step_times_text(const StepTimes& times, const Machine& machine)
{
    std::string text = fmt::format("Measured on the machine that built this copy: one ring step at d = 64, the fastest "
                                   "of repeated runs.\n  {}; {}; load average {:.2f}\n", machine.name, machine.where,
                                   machine.load) +
                       "       b   absorb (µs)   pass on (µs)   absorb/pass on   both (µs)   hidden\n";
    std::string crossing = "absorbing never took longer than passing the block on";
    bool crossed = false;
    for (std::size_t i = 0; i < times.tokens.size(); ++i) {
        // hidden: the share of the shorter of the two that the ring's step saved against doing them one after the other
        const double saved = (times.absorb[i] + times.transfer[i] - times.both[i]) /
                             std::min(times.absorb[i], times.transfer[i]);
        text += fmt::format("  {:>6.0f}  {:>12.2f}  {:>13.2f}  {:>15.2f}  {:>10.2f}  {:>7.2f}\n", times.tokens[i],
                            times.absorb[i] * 1e6, times.transfer[i] * 1e6, times.absorb[i] / times.transfer[i],
                            times.both[i] * 1e6, saved);
        if (times.absorb[i] > times.transfer[i] && !crossed) {
            crossed = true;
            crossing = fmt::format("from b = {:.0f} on, absorbing a block took longer than passing it on: the "
                                   "transfer can hide behind the compute", times.tokens[i]);
        }
    }
    return text + "  " + crossing + "\n  both: the transfer started, the block absorbed, then the wait, as the ring "
                                   "does a step; hidden: (absorb + pass on - both) / the shorter of the two, 1 when "
                                   "the transfer moved entirely during the compute, 0 when not at all\n";
}

// Each rank's share of a causal forward pass, absorbed with the ring's kernel in this one process, no messages.
struct RankShares {
    std::size_t tokens = 512;
    std::size_t ranks = 4;
    std::size_t dim = 64;
    std::vector<std::string> layouts;
    sa::Matrix milliseconds;  // layout × rank, the fastest of repeated runs
    sa::Matrix dots;          // layout × rank, the kernel's count
};

// Rank g's share: the G blocks in the ring's order, each absorbed with absorb_visible() and merged, the hidden skipped.
inline std::uint64_t absorb_share(const sa::RingSetup& setup, const std::vector<sa::Shard>& shards, std::size_t rank)
{
    const sa::Shard& mine = shards[rank];
    std::uint64_t dots = 0;
    sa::PartialAttention running = sa::empty_attention(mine.rows.size(), mine.values.cols());
    for (std::size_t step = 0; step < setup.ranks; ++step) {
        const sa::Shard& block = shards[sa::ring_block_owner(rank, step, setup.ranks)];
        if (sa::block_visibility(mine.rows, block.rows, setup.causal) == sa::BlockVisibility::hidden) {
            continue;
        }
        sa::PartialAttention partial = sa::empty_attention(mine.rows.size(), mine.values.cols());
        dots += sa::absorb_visible(partial, mine.queries, mine.rows, block.keys, block.values, block.rows, true);
        running = sa::merge_attention(running, partial);
    }
    return dots;
}

inline RankShares time_rank_shares()
{
    RankShares shares;
    sa::SplitMix64 generator(17);
    const sa::Matrix queries = sa::random_matrix(shares.tokens, shares.dim, generator);
    const sa::Matrix keys = sa::random_matrix(shares.tokens, shares.dim, generator);
    const sa::Matrix values = sa::random_matrix(shares.tokens, shares.dim, generator);
    shares.milliseconds = sa::Matrix(3, shares.ranks);
    shares.dots = sa::Matrix(3, shares.ranks);
    std::size_t row = 0;
    for (const sa::Layout layout : {sa::Layout::contiguous, sa::Layout::striped, sa::Layout::zigzag}) {
        const sa::RingSetup setup{shares.tokens, shares.ranks, layout, true};
        std::vector<sa::Shard> shards;
        for (std::size_t rank = 0; rank < shares.ranks; ++rank) {
            shards.push_back(sa::make_shard(layout, shares.ranks, rank, queries, keys, values));
        }
        for (std::size_t rank = 0; rank < shares.ranks; ++rank) {
            std::uint64_t dots = 0;
            shares.milliseconds(row, rank) = 1e3 * fastest(3, [&] { dots = absorb_share(setup, shards, rank); });
            shares.dots(row, rank) = static_cast<double>(dots);
        }
        shares.layouts.push_back(sa::layout_name(layout));
        ++row;
    }
    return shares;
}

inline std::string rank_shares_text(const RankShares& shares)
{
    std::string text = fmt::format("\nEach rank's share of a causal forward pass, n = {}, G = {}, d = {}, absorbed with "
                                   "the ring's kernel in one process, the fastest of 3 runs: ms (dot products)\n"
                                   "  layout     ", shares.tokens, shares.ranks, shares.dim);
    for (std::size_t rank = 0; rank < shares.ranks; ++rank) {
        text += fmt::format("  {:>18}", fmt::format("rank {}", rank));
    }
    text += "  busiest/mean (time)\n";
    for (std::size_t row = 0; row < shares.layouts.size(); ++row) {
        text += fmt::format("  {:<11}", shares.layouts[row]);
        double total = 0.0;
        double busiest = 0.0;
        for (std::size_t rank = 0; rank < shares.ranks; ++rank) {
            text += fmt::format("  {:>18}", fmt::format("{:.2f} ({:.0f})", shares.milliseconds(row, rank),
                                                        shares.dots(row, rank)));
            total += shares.milliseconds(row, rank);
            busiest = std::max(busiest, shares.milliseconds(row, rank));
        }
        text += fmt::format("  {:>19.2f}\n", busiest * static_cast<double>(shares.ranks) / total);
    }
    return text;
}

// Measures, writes the file and, with --figures, the plot; only the first process writes.
inline void write_step_times(const std::string& path, const sa::Report& report, sa::Communicator& ring,
                             std::size_t ranks, int process, const Machine& machine)
{
    const StepTimes times = time_steps(ring, ranks);
    if (process != 0) {
        return;
    }
    const RankShares shares = time_rank_shares();
    std::ofstream out(path);
    out << step_times_text(times, machine) << rank_shares_text(shares);
    if (!out) {
        throw sa::UsageError(fmt::format("--step-times: cannot write the file {}", path));
    }
    const auto microseconds = [](std::vector<double> seconds) {
        for (double& value : seconds) {
            value *= 1e6;
        }
        return seconds;
    };
    report.line_plot("measured-steps.svg",
                     {.title = fmt::format("One ring step, measured on {}, {}", machine.name, machine.where),
                      .x_label = "b, tokens per block (d = 64)", .y_label = "microseconds, fastest run",
                      .series = {{.name = "absorb the block (compute)", .x = times.tokens,
                                  .y = microseconds(times.absorb)},
                                 {.name = "pass it on (transfer)", .x = times.tokens,
                                  .y = microseconds(times.transfer)},
                                 {.name = "both, as a ring step (start, absorb, wait)", .x = times.tokens,
                                  .y = microseconds(times.both)}},
                      .log_x = true, .log_y = true, .log_x_base = 2, .log_y_base = 10});
    report.heatmap("measured-ranks.svg",
                   {.title = fmt::format("Each rank's causal share, ms, n = {}, G = {}, d = {}, measured on {}",
                                         shares.tokens, shares.ranks, shares.dim, machine.name),
                    .values = shares.milliseconds, .row_labels = shares.layouts,
                    .col_labels = sa::numbered_labels("rank ", shares.ranks, 0), .row_axis = "layout",
                    .col_axis = "rank", .scale_label = "ms"});
}

}  // namespace ring
