// Chapter 17, Attention across machines: the sequence split between G ranks, ring attention
// over Open MPI in three layouts, and DeepSpeed-Ulysses' all-to-all beside it.
//
//   mpirun -np 4 build/bin/ch17-ring-attention
//
// Every process runs the same program; rank g of a ring runs on process g mod (processes), and
// the first process prints. Without mpirun it runs as one process that runs every rank.
// --step-times FILE also times one ring step on this machine (step_times.hpp), apart from the output.
// The options, and the tables, model on paper and figures around the ring: src/present/ring_options, ring_tables.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
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
#include "ring_options.hpp"
#include "ring_tables.hpp"
#include "step_times.hpp"
#include "tiled.hpp"

namespace {

constexpr std::size_t width = 24;  // d_k = d_v of the sharded run: 1, 2, 3, 4, 6, 8, 12 or 24 heads
constexpr std::uint64_t seed = 17;

const char* yes(bool flag)
{
    return flag ? "true" : "false";
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
                       sa::steps_text(everyone.front().step_bytes), sa::steps_text(grads.front().step_bytes));
}

// The sharded run: every layout, with and without the mask, checked; the causal work, the bytes, the backward pass.
sa::RingTables sharded_runs(sa::Report& report, const ring::Network& network, const sa::RingOptions& options,
                           sa::Matrix& work_figure)
{
    const std::size_t n = options.length;
    const Sequence sequence = random_sequence(n);
    sa::RingTables tables = sa::ring_tables(options, width);
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
                sa::add_causal_rows(tables, setup, everyone);
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
void ulysses_run(sa::Report& report, const ring::Network& network, const sa::RingOptions& options)
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
    const bool same = sa::identical(sa::assemble_outputs(everyone, n), reference);
    report.text(sa::ulysses_text(options, width, everyone, same));
}

std::string ring_chapter(const sa::Example& example)
{
    // A refused command line ends here, before MPI starts, on every process alike.
    const sa::RingOptions options = sa::read_ring_options(example, width);
    const ring::Network network(options.stop_rank);
    try {
        sa::Report report(example);
        report.text(sa::ring_memory_table(example, options.ranks));
        worked_example(report, example, network);
        sa::Matrix work;
        const sa::RingTables tables = sharded_runs(report, network, options, work);
        ulysses_run(report, network, options);
        report.text(sa::ring_on_paper(tables.smallest_share));
        if (const std::string& path = example.options.at("--step-times"); !path.empty()) {  // every process times
            const auto ranks = static_cast<std::size_t>(std::max(2, network.processes()));
            const auto ring = network.ring(ranks);
            ring::write_step_times(path, sa::Report(example), *ring, ranks, network.process(),
                                   ring::this_machine(network.processes(), network.on_mpi()));
        }
        if (network.process() != 0) {
            return "";
        }
        sa::ring_figures(example, options, work);
        return report.str();
    } catch (const std::exception& error) {  // one rank failed: stop every process, none left waiting
        if (!network.on_mpi()) {
            throw;  // one process: the one line and status 2, as for any error
        }
        network.abort_all(error.what());
    }
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
                     [](const sa::Example& example) { return sa::fit_ulysses_heads(example, width); }},
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
