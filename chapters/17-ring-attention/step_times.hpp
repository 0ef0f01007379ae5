// Chapter 17's measurement: one ring step on the machine that runs the program, the time to absorb
// a block of b keys against the time to pass a block of b keys and values on to the next rank.
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

// The times of one step for each block size b, in seconds: absorbing and passing on.
struct StepTimes {
    std::vector<double> tokens;    // b, tokens per block
    std::vector<double> absorb;    // absorb_block() and merge_attention() of a b×b block
    std::vector<double> transfer;  // a block of b keys and values to the next rank, and one from the previous
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

// One step's compute, as absorb_held() in the ring does it: a fresh state, the block absorbed, merged in.
inline double time_absorb(std::size_t tokens, std::size_t dim, std::size_t runs)
{
    sa::SplitMix64 generator(17);
    const sa::Matrix queries = sa::random_matrix(tokens, dim, generator);
    const sa::Matrix keys = sa::random_matrix(tokens, dim, generator);
    const sa::Matrix values = sa::random_matrix(tokens, dim, generator);
    const sa::Matrix mask(tokens, tokens, 0.0);
    sa::PartialAttention running = sa::empty_attention(tokens, dim);
    sa::absorb_block(running, queries, keys, values, mask, {0, tokens, 0, tokens});
    return fastest(runs, [&] {
        sa::PartialAttention partial = sa::empty_attention(tokens, dim);
        sa::absorb_block(partial, queries, keys, values, mask, {0, tokens, 0, tokens});
        running = sa::merge_attention(running, partial);
    });
}

// One step's transfer: every rank sends its block of b keys and values to rank g+1 and takes rank g-1's,
// with nothing to compute meanwhile. Each exchange ends only when the neighbour's block has arrived,
// so the processes keep in step without a barrier.
inline double time_transfer(sa::Communicator& ring, std::size_t ranks, std::size_t tokens, std::size_t dim,
                            std::size_t runs)
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
        times.absorb.push_back(time_absorb(tokens, dim, runs));
        times.transfer.push_back(time_transfer(ring, ranks, tokens, dim, runs));
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
                                   machine.load) + "       b   absorb (µs)   pass on (µs)   absorb/pass on\n";
    std::string crossing = "absorbing never took longer than passing the block on";
    bool crossed = false;
    for (std::size_t i = 0; i < times.tokens.size(); ++i) {
        text += fmt::format("  {:>6.0f}  {:>12.2f}  {:>13.2f}  {:>15.2f}\n", times.tokens[i], times.absorb[i] * 1e6,
                            times.transfer[i] * 1e6, times.absorb[i] / times.transfer[i]);
        if (times.absorb[i] > times.transfer[i] && !crossed) {
            crossed = true;
            crossing = fmt::format("from b = {:.0f} on, absorbing a block took longer than passing it on: the "
                                   "transfer can hide behind the compute", times.tokens[i]);
        }
    }
    return text + "  " + crossing + "\n";
}

// Measures, writes the file and, with --figures, the plot; only the first process writes.
inline void write_step_times(const std::string& path, const sa::Report& report, sa::Communicator& ring,
                             std::size_t ranks, int process, const Machine& machine)
{
    const StepTimes times = time_steps(ring, ranks);
    if (process != 0) {
        return;
    }
    std::ofstream out(path);
    out << step_times_text(times, machine);
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
                                  .y = microseconds(times.transfer)}},
                      .log_x = true, .log_y = true, .log_x_base = 2, .log_y_base = 10});
}

}  // namespace ring
