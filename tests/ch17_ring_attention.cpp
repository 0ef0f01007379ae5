// Chapter 17, Attention across machines: the layouts, the ring's schedule, ring attention and
// DeepSpeed-Ulysses over the in-process communicator, against chapter 7's attention() and
// chapter 13's split-and-merge. The program's runs under mpirun are CTest tests of their own
// (chapters/17-ring-attention/CMakeLists.txt).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "attention.hpp"
#include "example.hpp"
#include "helpers.hpp"
#include "masking.hpp"
#include "multi_head.hpp"
#include "projection.hpp"
#include "ring_attention.hpp"
#include "tiled.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

using Rows = std::vector<std::size_t>;
constexpr sa::Layout layouts[] = {sa::Layout::contiguous, sa::Layout::striped, sa::Layout::zigzag};

std::vector<sa::Shard> all_shards(sa::Layout layout, std::size_t ranks, const helpers::Inputs& inputs)
{
    std::vector<sa::Shard> shards;
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        shards.push_back(sa::make_shard(layout, ranks, rank, inputs.queries, inputs.keys, inputs.values));
    }
    return shards;
}

std::vector<sa::RankResult> run_ring(const sa::RingSetup& setup, const helpers::Inputs& inputs)
{
    sa::LocalCommunicator communicator;
    return sa::ring_attention(communicator, setup, all_shards(setup.layout, setup.ranks, inputs));
}

sa::Matrix whole_mask(std::size_t n, bool causal)
{
    return causal ? sa::causal_mask(n, n) : sa::Matrix(n, n, 0.0);
}

}  // namespace

TEST_CASE("The zig-zag layout gives rank g chunks g and 2G-1-g of 2G", "[ch17]")
{
    INFO("n = 8, G = 2: chunks {0,1} {2,3} {4,5} {6,7}; rank 0 takes chunks 0 and 3, rank 1 chunks 1 and 2");
    CHECK(sa::zigzag_rows(8, 2, 0) == Rows{0, 1, 6, 7});
    CHECK(sa::zigzag_rows(8, 2, 1) == Rows{2, 3, 4, 5});
    INFO("n = 12, G = 3: six chunks of 2; rank 1 takes chunk 1 (rows 2, 3) and chunk 4 (rows 8, 9)");
    CHECK(sa::zigzag_rows(12, 3, 1) == Rows{2, 3, 8, 9});
    INFO("n = 5, G = 4: 8 chunks of 0 tokens, the first 5 with one more: sizes 1,1,1,1,1,0,0,0");
    CHECK(sa::zigzag_rows(5, 4, 0) == Rows{0});
    CHECK(sa::zigzag_rows(5, 4, 2) == Rows{2});
    CHECK(sa::zigzag_rows(5, 4, 3) == Rows{3, 4});
    INFO("n = 7, G = 2: chunk sizes 2, 2, 2, 1 (7 = 4·1 + 3, the first three one larger)");
    CHECK(sa::zigzag_rows(7, 2, 0) == Rows{0, 1, 6});
    CHECK(sa::zigzag_rows(7, 2, 1) == Rows{2, 3, 4, 5});
    for (std::size_t ranks = 1; ranks <= 8; ++ranks) {
        for (std::size_t n = ranks; n <= 40; ++n) {
            std::vector<int> held(n, 0);
            for (std::size_t rank = 0; rank < ranks; ++rank) {
                const Rows rows = sa::zigzag_rows(n, ranks, rank);
                INFO("n = " << n << ", G = " << ranks << ", rank " << rank << ": at least one token, ascending");
                CHECK_FALSE(rows.empty());
                CHECK(std::is_sorted(rows.begin(), rows.end()));
                for (const std::size_t row : rows) {
                    REQUIRE(row < n);
                    ++held[row];
                }
            }
            INFO("n = " << n << ", G = " << ranks << ": every token on exactly one rank");
            CHECK(std::all_of(held.begin(), held.end(), [](int count) { return count == 1; }));
        }
    }
}

TEST_CASE("Contiguous and striped layouts, and a ring needs a token per rank", "[ch17]")
{
    INFO("contiguous, n = 7, G = 3: rows [r·7/3, (r+1)·7/3) = [0,2) [2,4) [4,7), chapter 13's split");
    CHECK(sa::layout_rows(sa::Layout::contiguous, 7, 3, 0) == Rows{0, 1});
    CHECK(sa::layout_rows(sa::Layout::contiguous, 7, 3, 2) == Rows{4, 5, 6});
    INFO("striped, n = 7, G = 3: token i on rank i mod 3");
    CHECK(sa::layout_rows(sa::Layout::striped, 7, 3, 1) == Rows{1, 4});
    CHECK(sa::layout_rows(sa::Layout::striped, 7, 3, 0) == Rows{0, 3, 6});
    CHECK(sa::layout_name(sa::Layout::zigzag) == "zig-zag");
    for (const sa::Layout layout : layouts) {
        std::vector<int> held(10, 0);
        for (std::size_t rank = 0; rank < 4; ++rank) {
            for (const std::size_t row : sa::layout_rows(layout, 10, 4, rank)) {
                ++held[row];
            }
        }
        INFO(sa::layout_name(layout) << ", n = 10, G = 4: every token on exactly one rank");
        CHECK(std::all_of(held.begin(), held.end(), [](int count) { return count == 1; }));
    }
    INFO("G = 4 ranks cannot share 3 tokens so that each holds one");
    CHECK_THROWS_WITH(sa::layout_rows(sa::Layout::striped, 3, 4, 0), Contains("each rank needs at least one token"));
    CHECK_THROWS_AS(sa::layout_rows(sa::Layout::contiguous, 5, 2, 2), std::invalid_argument);
}

// What (g - s) mod G gives when g - s is computed on std::size_t, which has no negative numbers:
// at s > g it wraps around to 2⁶⁴ + g - s, whose remainder is not (g - s) mod G. The sentence that
// says so where the answer is that one, or "" (the trap the chapter warns about).
namespace {
std::string wrapped_owner(std::size_t rank, std::size_t step, std::size_t ranks, std::size_t answer)
{
    const std::size_t wrapped = (rank - step) % ranks;  // the trap itself, on purpose
    if (step <= rank || answer != wrapped || wrapped == (rank + ranks - step % ranks) % ranks) {
        return "";
    }
    return fmt::format("; {} is what (g - s) % G gives on unsigned numbers: g - s = {} - {} wrapped around below 0 "
                       "to 2^64 - {}, whose remainder is not (g - s) mod G. Add G before subtracting: "
                       "(g + G - s mod G) mod G", answer, rank, step, step - rank);
}
}  // namespace

TEST_CASE("The ring's schedule: rank g holds block (g - s) mod G at step s", "[ch17]")
{
    for (const auto& [step, expected] : {std::pair<std::size_t, std::size_t>{0, 0}, {1, 2}, {2, 1}}) {
        const std::size_t answer = sa::ring_block_owner(0, step, 3);
        INFO("G = 3: rank 0 holds its own block, then rank 2's, then rank 1's" << wrapped_owner(0, step, 3, answer));
        CHECK(answer == expected);
    }
    for (std::size_t ranks = 1; ranks <= 8; ++ranks) {
        for (std::size_t rank = 0; rank < ranks; ++rank) {
            std::vector<int> seen(ranks, 0);
            for (std::size_t step = 0; step < ranks; ++step) {
                ++seen[sa::ring_block_owner(rank, step, ranks)];
                if (step + 1 < ranks) {
                    INFO("G = " << ranks << ": what rank " << rank << " holds at step " << step + 1
                                << " is what rank g-1 held at step " << step << ", passed on");
                    CHECK(sa::ring_block_owner(rank, step + 1, ranks) ==
                          sa::ring_block_owner((rank + ranks - 1) % ranks, step, ranks));
                }
            }
            INFO("G = " << ranks << ", rank " << rank << ": every block exactly once");
            CHECK(std::all_of(seen.begin(), seen.end(), [](int count) { return count == 1; }));
        }
    }
}

TEST_CASE("Ring attention equals chapter 7's attention for every G, layout and mask", "[ch17]")
{
    for (const std::size_t n : {std::size_t{13}, std::size_t{8}}) {
        const helpers::Inputs inputs = helpers::random_inputs(1717 + n, n, n, 3, 5);  // d_k = 3, d_v = 5
        for (const bool causal : {false, true}) {
            const sa::Matrix reference = sa::attention(inputs.queries, inputs.keys, inputs.values, whole_mask(n, causal));
            for (const std::size_t ranks : {1, 2, 3, 4, 8}) {
                for (const sa::Layout layout : layouts) {
                    const auto results = run_ring({n, ranks, layout, causal}, inputs);
                    INFO("n = " << n << " (" << (n % ranks == 0 ? "" : "not ") << "divisible by G), G = " << ranks
                                << ", " << sa::layout_name(layout) << (causal ? ", causal" : ", no mask")
                                << ": each rank's rows, put together, are softmax(QKᵀ/√d_k + M)·V");
                    CHECK(sa::agree(sa::assemble_outputs(results, n), reference, 1e-12));
                }
            }
        }
    }
    const helpers::Inputs one_each = helpers::random_inputs(4, 4, 4, 2, 3);
    for (const sa::Layout layout : layouts) {
        INFO("one token per rank (n = G = 4), " << sa::layout_name(layout) << ", causal");
        const auto results = run_ring({4, 4, layout, true}, one_each);
        CHECK(sa::agree(sa::assemble_outputs(results, 4),
                        sa::attention(one_each.queries, one_each.keys, one_each.values, whole_mask(4, true)), 1e-12));
    }
}

TEST_CASE("Ring attention equals chapter 13's split-and-merge in the same block order, bit for bit", "[ch17]")
{
    const std::size_t n = 11;
    const helpers::Inputs inputs = helpers::random_inputs(2023, n, n, 4, 3);
    for (const bool causal : {false, true}) {
        for (const std::size_t ranks : {1, 2, 3, 4, 11}) {  // 11: a token per rank, blocks of one pair
            for (const sa::Layout layout : layouts) {
                const sa::RingSetup setup{n, ranks, layout, causal};
                const auto results = run_ring(setup, inputs);
                for (const auto& result : results) {
                    INFO("G = " << ranks << ", " << sa::layout_name(layout) << (causal ? ", causal" : "")
                                << ", rank " << result.rank << ": absorb_block() per block into a state of its "
                                "own, merge_attention() in the ring's order (r, r-1, ...): the same operations in "
                                "the same order give the same bits");
                    CHECK(sa::identical(result.outputs, sa::split_and_merge_in_ring_order(setup, inputs.queries, inputs.keys,
                                                                            inputs.values, result.rank)));
                }
            }
        }
    }
}

TEST_CASE("The worked example on three ranks: the states after each step", "[ch17]")
{
    const sa::Example example = sa::mouse_eats_cheese();
    const helpers::Inputs inputs{sa::project(example.embeddings, example.w_query),
                                 sa::project(example.embeddings, example.w_key),
                                 sa::project(example.embeddings, example.w_value)};
    const auto results = run_ring({3, 3, sa::Layout::contiguous, false}, inputs);
    REQUIRE(results.size() == 3);
    const auto& mouse = results[0].states;
    REQUIRE(mouse.size() == 3);
    const double root = 2.0 * std::sqrt(2.0);
    const double small = std::exp(-root);
    INFO("step 0, rank 0 holds Mouse: q_Mouse = [0, 2], k_Mouse = [2, 0], score 0: μ = 0, ℓ = 1, Õ = v_Mouse = [2, 0]");
    CHECK(mouse[0](0, 0) == 0.0);
    CHECK(mouse[0](0, 1) == 1.0);
    CHECK(mouse[0](0, 2) == 2.0);
    INFO("step 1, rank 0 holds rank 2's Cheese, score 0 again: μ = 0, ℓ = 2, Õ = [4, 0]");
    CHECK(mouse[1](0, 1) == 2.0);
    CHECK(mouse[1](0, 2) == 4.0);
    INFO("step 2, rank 0 holds rank 1's Eats: score q_Mouse·k_Eats/√2 = 4/√2 = 2√2 becomes μ; "
         "ℓ = 2·e^(-2√2) + 1 and Õ = [4·e^(-2√2) + 1, 2], chapter 13's merged Mouse row");
    CHECK_THAT(mouse[2](0, 0), WithinAbs(root, 1e-15));
    CHECK_THAT(mouse[2](0, 1), WithinAbs(2.0 * small + 1.0, 1e-15));
    CHECK_THAT(mouse[2](0, 2), WithinAbs(4.0 * small + 1.0, 1e-15));
    CHECK_THAT(mouse[2](0, 3), WithinAbs(2.0, 1e-15));
    INFO("rank 1 (Eats) scores 2√2 against every key: after its own block ℓ = 1, after all three ℓ = 3");
    CHECK_THAT(results[1].states[2](0, 1), WithinAbs(3.0, 1e-15));
    INFO("each rank sends G-1 = 2 blocks of 1 key and 1 value of width 2: 2·2·8 = 64 bytes, the formula 2·(G-1)·(n/G)·d·8");
    for (const auto& result : results) {
        CHECK(result.bytes_sent == 64);
        CHECK(result.bytes_received == 64);
    }
    CHECK(sa::ring_bytes_formula(3, 3, 2) == 64.0);
    INFO("zig-zag with one token per rank: 6 chunks, the first 3 of one token, the back 3 empty, so rank g "
         "holds token g as in the contiguous layout; the outputs are the same");
    const auto zigzag = run_ring({3, 3, sa::Layout::zigzag, false}, inputs);
    CHECK(zigzag[2].rows == Rows{2});
    CHECK(sa::agree(sa::assemble_outputs(zigzag, 3), sa::assemble_outputs(results, 3), 1e-12));
}

TEST_CASE("Causal work per rank: contiguous is unbalanced, striped and zig-zag are not", "[ch17]")
{
    const std::size_t ranks = 4;
    const std::size_t block = 16;
    const std::size_t n = ranks * block;
    const auto contiguous = sa::ring_work(sa::Layout::contiguous, n, ranks, true);
    INFO("contiguous, b = 16 tokens per rank: rank g sees r whole blocks (r·b² pairs) and half its own, b(b+1)/2");
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        CHECK(contiguous[rank] == rank * block * block + block * (block + 1) / 2);
    }
    INFO("so the last rank does ((G-1)·b² + b(b+1)/2) / (b(b+1)/2) = 2G-1 - 2(G-1)/(b+1) times the work of the first");
    CHECK_THAT(static_cast<double>(contiguous[3]) / static_cast<double>(contiguous[0]),
               WithinAbs(7.0 - 6.0 / 17.0, 1e-12));
    const auto zigzag = sa::ring_work(sa::Layout::zigzag, n, ranks, true);
    const std::uint64_t chunk = n / (2 * ranks);
    INFO("zig-zag, chunks of c = 8: chunks g and 2G-1-g see 2G-1 whole chunks between them and two halves, "
         "(2G-1)·c² + c(c+1) on every rank");
    for (const std::uint64_t work : zigzag) {
        CHECK(work == (2 * ranks - 1) * chunk * chunk + chunk * (chunk + 1));
    }
    for (const std::size_t tokens : {std::size_t{13}, std::size_t{37}, std::size_t{64}, std::size_t{101}}) {
        for (const std::size_t p : {2, 3, 4, 8}) {
            if (tokens < 2 * p) {
                continue;  // fewer than two tokens per rank: some hold one, some two, and no layout evens that out
            }
            const double limit = std::pow(std::ceil(static_cast<double>(tokens) / static_cast<double>(p)), 2);
            for (const sa::Layout layout : {sa::Layout::zigzag, sa::Layout::striped}) {
                const auto work = sa::ring_work(layout, tokens, p, true);
                const double mean = static_cast<double>(std::accumulate(work.begin(), work.end(), std::uint64_t{0})) /
                                    static_cast<double>(p);
                INFO(sa::layout_name(layout) << ", n = " << tokens << ", G = " << p << ": the total is n(n+1)/2, and "
                     "each rank within one block's worth, ⌈n/G⌉² pairs, of the mean " << mean);
                CHECK(mean * static_cast<double>(p) == static_cast<double>(tokens * (tokens + 1) / 2));
                for (const std::uint64_t each : work) {
                    CHECK(std::abs(static_cast<double>(each) - mean) <= limit);
                }
            }
        }
    }
}

TEST_CASE("The ring counts the work it does and skips the blocks the mask hides", "[ch17]")
{
    const std::size_t n = 10;
    const helpers::Inputs inputs = helpers::random_inputs(99, n, n, 2, 2);
    for (const sa::Layout layout : layouts) {
        const auto results = run_ring({n, 4, layout, true}, inputs);
        const auto expected = sa::ring_work(layout, n, 4, true);
        for (const auto& result : results) {
            INFO(sa::layout_name(layout) << ", rank " << result.rank << ": the pairs it scored are ring_work()'s");
            CHECK(result.pairs == expected[result.rank]);
        }
    }
    const auto contiguous = run_ring({n, 4, sa::Layout::contiguous, true}, inputs);
    INFO("contiguous and causal: rank g's queries come before every key of ranks r+1 to G-1, so it skips G-1-r blocks");
    for (const auto& result : contiguous) {
        CHECK(result.skipped == 3 - result.rank);
    }
    INFO("without the mask nothing is skipped");
    for (const auto& result : run_ring({n, 4, sa::Layout::contiguous, false}, inputs)) {
        CHECK(result.skipped == 0);
    }
}

TEST_CASE("The bytes each rank sends around the ring", "[ch17]")
{
    const helpers::Inputs inputs = helpers::random_inputs(7, 12, 12, 4, 4);
    for (const sa::Layout layout : layouts) {
        for (const std::size_t ranks : {2, 3, 4}) {
            const auto results = run_ring({12, ranks, layout, true}, inputs);
            for (const auto& result : results) {
                INFO(sa::layout_name(layout) << ", G = " << ranks << ", rank " << result.rank << ": G-1 blocks of "
                     "12/G keys and values of width 4: 2·(G-1)·(12/G)·4·8 bytes");
                CHECK(static_cast<double>(result.bytes_sent) == sa::ring_bytes_formula(12, ranks, 4));
                CHECK(result.bytes_received == results[(result.rank + ranks - 1) % ranks].bytes_sent);
            }
        }
    }
    const helpers::Inputs uneven = helpers::random_inputs(8, 7, 7, 2, 3);
    const auto results = run_ring({7, 3, sa::Layout::contiguous, false}, uneven);
    INFO("n = 7, G = 3, contiguous blocks of 2, 2, 3 rows: rank 0 sends its own (2) and rank 2's (3): 5·(2+3)·8 = 200");
    CHECK(results[0].bytes_sent == 200);
    CHECK(sa::ring_bytes_sent(sa::Layout::contiguous, 7, 3, 0, 2, 3) == 200);
    CHECK(sa::ring_bytes_sent(sa::Layout::contiguous, 7, 3, 1, 2, 3) == results[1].bytes_sent);
}

TEST_CASE("DeepSpeed-Ulysses equals chapter 9's heads bit for bit and sends 4(n/G)d(G-1)/G numbers", "[ch17]")
{
    const std::size_t n = 12;
    const helpers::Inputs inputs = helpers::random_inputs(9, n, n, 8, 8);
    for (const bool causal : {false, true}) {
        for (const std::size_t ranks : {1, 2, 4}) {
            const sa::Layout layout = ranks == 2 ? sa::Layout::zigzag : sa::Layout::contiguous;  // any layout works
            const sa::RingSetup setup{n, ranks, layout, causal};
            sa::LocalCommunicator communicator;
            const auto results = sa::ulysses_attention(communicator, setup, 4, all_shards(setup.layout, ranks, inputs));
            const sa::Matrix reference =
                sa::multi_head_attention(inputs.queries, inputs.keys, inputs.values, whole_mask(n, causal), 4,
                                         sa::identity(8));
            INFO("G = " << ranks << ", " << sa::layout_name(layout) << ", h = 4 heads" << (causal ? ", causal" : "")
                        << ": the heads side by side, W_O = I. Bit for bit: each rank runs attention() on copies of "
                           "its heads' columns over the whole sequence, as multi_head_attention() does, and "
                           "multiplying by I adds only exact zeros to each output");
            CHECK(sa::identical(sa::assemble_outputs(results, n), reference));
            for (const auto& result : results) {
                INFO("rank " << result.rank << ": Q, K, V and O, n/G rows of d = 8, of which (G-1)/G leave the rank");
                CHECK(static_cast<double>(result.bytes_sent) == sa::ulysses_bytes_formula(n, ranks, 8));
                CHECK(result.bytes_received == result.bytes_sent);
            }
        }
    }
    INFO("G = 4 and n = 12, d = 8: 4·3·8·(3/4)·8 = 576 bytes; the ring sends 2·3·3·8·8 = 1152, G/2 = 2 times as many");
    CHECK(sa::ulysses_bytes_formula(12, 4, 8) == 576.0);
    CHECK(sa::ring_bytes_formula(12, 4, 8) == 1152.0);
    sa::LocalCommunicator communicator;
    INFO("3 heads do not split between 2 ranks");
    const helpers::Inputs six = helpers::random_inputs(10, 4, 4, 6, 6);
    CHECK_THROWS_WITH(sa::ulysses_attention(communicator, {4, 2, sa::Layout::contiguous, false}, 3,
                                            all_shards(sa::Layout::contiguous, 2, six)),
                      Contains("split evenly between 2 ranks"));
}

// The model on paper is the chapter's own counting, not a step the learner writes: checked, not graded.
TEST_CASE("Why one machine is not enough: K and V are 8·n·(d_k + d_v) bytes, the scores 8·n²", "[ch17][support]")
{
    INFO("the worked example, n = 3, d_k = d_v = 2: 3·(2 + 2) = 12 numbers, 96 bytes; its scores 3·3·8 = 72 bytes");
    CHECK(sa::cached_step_reads(3, 2, 2) * 8 == 96);
    INFO("n = 4096, d = 64: 4096·128·8 = 2^12·2^7·2^3 = 2^22 bytes, 4.0 MiB; the scores 4096²·8 = 2^27, 128.0 MiB");
    CHECK(sa::cached_step_reads(4096, 64, 64) * 8 == (std::uint64_t{1} << 22));
    INFO("n = 2^20: 2^20·2^7·2^3 = 2^30 bytes, 1.0 GiB; the scores 2^40·2^3 = 2^43, 8.0 TiB; split between G = 4 "
         "ranks 2^28 each, 256.0 MiB");
    CHECK(sa::cached_step_reads(1048576, 64, 64) * 8 == (std::uint64_t{1} << 30));
    CHECK(sa::cached_step_reads(1048576, 64, 64) * 8 / 4 == (std::uint64_t{1} << 28));
    INFO("a reader's example of 4 tokens with d_k = 2 and d_v = 3: 4·5·8 = 160 bytes, the row the table prints");
    CHECK(sa::cached_step_reads(4, 2, 3) * 8 == 160);
}

TEST_CASE("The longest sequence G devices hold grows as G times the tokens one rank's memory fits", "[ch17][support]")
{
    INFO("b = 5 tokens, d_k = 2, d_v = 3: Q 5·2 = 10, state 5·(3+2) = 25, the block held and the one arriving "
         "2·5·(2+3) = 50, its own K and V kept for the backward pass 5·(2+3) = 25, one row of scores 5: "
         "115 = 5·(4·2 + 4·3 + 3)");
    CHECK(sa::ring_rank_numbers(5, 2, 3) == 115);
    INFO("one token is 23 numbers, 184 bytes; M = 1000 bytes holds floor(1000/184) = 5 tokens per rank "
         "(5·184 = 920 fits, 6·184 = 1104 does not), so G = 3 ranks hold 15");
    CHECK(sa::ring_longest_sequence(1000, 3, 2, 3) == 15);
    CHECK(sa::ring_rank_numbers(5, 2, 3) * 8 <= 1000);
    CHECK(sa::ring_rank_numbers(6, 2, 3) * 8 > 1000);
    INFO("183 bytes hold no token of 184");
    CHECK(sa::ring_longest_sequence(183, 3, 2, 3) == 0);
    INFO("the chapter's model: d_k = d_v = 128 is 4·128 + 4·128 + 3 = 1027 numbers, 8216 bytes a token; an 80 GB "
         "device holds floor(80·10^9 / 8216) = 9737098 tokens (8216·9737098 = 79999997168, one more token "
         "passes 80·10^9), 8 devices 8 times as many");
    CHECK(sa::ring_rank_numbers(1, 128, 128) == 1027);
    CHECK(sa::ring_longest_sequence(80'000'000'000, 1, 128, 128) == 9737098);
    CHECK(sa::ring_longest_sequence(80'000'000'000, 8, 128, 128) == 77896784);
}

TEST_CASE("Ulysses' all-to-alls carry n·d numbers across a bisection each way, whatever G", "[ch17][support]")
{
    for (const std::size_t ranks : {2, 3, 4, 6, 8}) {
        const std::size_t n = 48;
        const std::size_t d = 24;
        double crossing = 0.0;  // every pair (sender in the first half, receiver in the second), counted one by one
        for (std::size_t from = 0; from < ranks / 2; ++from) {
            for (std::size_t to = ranks / 2; to < ranks; ++to) {
                crossing += 4.0 * static_cast<double>(n / ranks) * static_cast<double>(d / ranks);  // Q, K, V, O
            }
        }
        INFO("G = " << ranks << ", n = 48, d = 24: each pair across the cut exchanges (n/G) rows of d/G columns of "
             "Q, K, V and the output");
        CHECK_THAT(sa::ulysses_bisection_numbers(n, ranks, d), WithinAbs(crossing, 1e-9));
        if (ranks % 2 == 0) {
            INFO("with G even that is (G/2)²·4·(n/G)·(d/G) = n·d = 1152");
            CHECK_THAT(sa::ulysses_bisection_numbers(n, ranks, d), WithinAbs(1152.0, 1e-9));
        }
    }
}

namespace {

// The in-process communicator, seen from a process that runs only some ranks; it counts its all-to-alls.
class SomeRanks : public sa::LocalCommunicator {
public:
    explicit SomeRanks(std::vector<std::size_t> mine) : mine_(std::move(mine)) {}
    [[nodiscard]] bool runs(std::size_t rank) const override
    {
        return std::find(mine_.begin(), mine_.end(), rank) != mine_.end();
    }
    void all_to_all(const sa::AllToAll& outgoing, sa::AllToAll& incoming) override
    {
        ++exchanges;
        sa::LocalCommunicator::all_to_all(outgoing, incoming);
    }
    int exchanges = 0;

private:
    std::vector<std::size_t> mine_;
};

}  // namespace

TEST_CASE("The all-to-all delivers message [g][t] to rank t, and Ulysses calls it on a process without ranks",
          "[ch17][support]")
{
    INFO("3 ranks, all here: rank g sends rank t the message {10g + t}; rank t receives {10g + t} from each g");
    sa::LocalCommunicator communicator;
    sa::AllToAll outgoing(3, std::vector<std::vector<double>>(3));
    sa::AllToAll incoming = outgoing;
    for (std::size_t from = 0; from < 3; ++from) {
        for (std::size_t to = 0; to < 3; ++to) {
            outgoing[from][to] = {static_cast<double>(10 * from + to)};
            incoming[from][to].assign(1, 0.0);
        }
    }
    communicator.all_to_all(outgoing, incoming);
    for (std::size_t to = 0; to < 3; ++to) {
        for (std::size_t from = 0; from < 3; ++from) {
            CHECK(incoming[to][from] == std::vector<double>{static_cast<double>(10 * from + to)});
        }
    }
    INFO("over MPI the all-to-all is a collective: a process that runs none of the ranks (5 processes, G = 4) "
         "must still call it, twice, or the others wait for ever");
    SomeRanks idle({});
    const auto nothing = sa::ulysses_attention(idle, {8, 4, sa::Layout::contiguous, true}, 4, {});
    CHECK(nothing.empty());
    CHECK(idle.exchanges == 2);
}

TEST_CASE("The in-process communicator delivers in order and names a missing message", "[ch17][support]")
{
    sa::LocalCommunicator communicator;
    std::vector<double> first{1.0, 2.0};
    std::vector<double> second{3.0};
    communicator.send(0, 1, first);
    communicator.send(0, 1, second);
    std::vector<double> got_first(2);
    std::vector<double> got_second(1);
    communicator.receive(0, 1, got_first);
    communicator.receive(0, 1, got_second);
    communicator.wait();
    INFO("two messages from rank 0 to rank 1 arrive in the order sent");
    CHECK(got_first == first);
    CHECK(got_second == second);
    std::vector<double> never(1);
    communicator.receive(2, 0, never);
    CHECK_THROWS_WITH(communicator.wait(), Contains("never sent"));
    communicator.send(1, 0, first);
    std::vector<double> too_short(1);
    communicator.receive(1, 0, too_short);
    CHECK_THROWS_WITH(communicator.wait(), Contains("expected 1 numbers from rank 1 but got 2"));
}

namespace {

// How many of `keys` a query at token row `query` sees, counted one by one.
std::uint64_t count_seen(std::size_t query, const Rows& keys, bool causal)
{
    std::uint64_t seen = 0;
    for (const std::size_t key : keys) {
        seen += (!causal || key <= query) ? 1 : 0;
    }
    return seen;
}

}  // namespace

TEST_CASE("The ring's kernel computes only the visible dot products, and the state of absorb_block() bit for bit",
          "[ch17]")
{
    const helpers::Inputs inputs = helpers::random_inputs(31, 5, 6, 3, 2);
    const Rows query_rows{3, 4, 9, 10, 11};
    INFO("three blocks of keys: all before the queries, all after, and interleaved with them");
    for (const Rows& key_rows : {Rows{0, 1, 2, 3, 3, 3}, Rows{12, 13, 14, 15, 16, 17}, Rows{2, 4, 5, 9, 11, 12}}) {
        sa::PartialAttention mine = sa::empty_attention(5, 2);
        const std::uint64_t dots = sa::absorb_visible(mine, inputs.queries, query_rows, inputs.keys, inputs.values,
                                                      key_rows, true);
        std::uint64_t expected = 0;
        for (const std::size_t query : query_rows) {
            expected += count_seen(query, key_rows, true);
        }
        INFO("key rows from " << key_rows.front() << ": the counter is the pairs with key row <= query row, "
             "counted in the test one by one: " << expected << " of 30");
        CHECK(dots == expected);
        sa::PartialAttention masked = sa::empty_attention(5, 2);
        sa::absorb_block(masked, inputs.queries, inputs.keys, inputs.values,
                         sa::block_mask(query_rows, key_rows, true), {0, 5, 0, 6});
        INFO("a masked pair adds e^-inf = 0 to ℓ and 0·v to Õ in absorb_block(), so leaving it out changes no bit");
        CHECK(mine.max == masked.max);
        CHECK(mine.sum == masked.sum);
        CHECK(sa::identical(mine.accumulator, masked.accumulator));
    }
    CHECK(sa::block_visibility(query_rows, Rows{0, 3}, true) == sa::BlockVisibility::visible);
    CHECK(sa::block_visibility(query_rows, Rows{12}, true) == sa::BlockVisibility::hidden);
    CHECK(sa::block_visibility(query_rows, Rows{4, 5}, true) == sa::BlockVisibility::diagonal);
    CHECK(sa::block_visibility(query_rows, Rows{12}, false) == sa::BlockVisibility::visible);
    INFO("the edges: keys from 11, the last query's own row, on are diagonal (query 11 sees key 11: hidden needs "
         "min K > max Q); keys up to 3, the first query's row, are visible (max K <= min Q)");
    CHECK(sa::block_visibility(query_rows, Rows{11, 12}, true) == sa::BlockVisibility::diagonal);
    CHECK(sa::block_visibility(query_rows, Rows{1, 3}, true) == sa::BlockVisibility::visible);
}

TEST_CASE("The kernel's counter: each rank's dot products, step by step, as counted by hand", "[ch17]")
{
    const std::size_t ranks = 4;
    const std::size_t block = 12;
    const std::size_t n = ranks * block;
    const std::size_t c = block / 2;
    const helpers::Inputs inputs = helpers::random_inputs(48, n, n, 2, 2);
    const auto contiguous = run_ring({n, ranks, sa::Layout::contiguous, true}, inputs);
    const auto striped = run_ring({n, ranks, sa::Layout::striped, true}, inputs);
    const auto zigzag = run_ring({n, ranks, sa::Layout::zigzag, true}, inputs);
    for (std::size_t g = 0; g < ranks; ++g) {
        for (std::size_t s = 0; s < ranks; ++s) {
            const std::size_t owner = (g + ranks - s) % ranks;
            INFO("rank " << g << ", step " << s << ", the block of rank " << owner << ", b = 12, c = 6");
            INFO("contiguous: its own block half and the diagonal, b(b+1)/2 = 78; an earlier block whole, b² = 144; "
                 "a later one nothing");
            CHECK(contiguous[g].step_pairs[s] == (owner == g ? 78U : owner < g ? 144U : 0U));
            INFO("striped: query g + kG sees keys o + mG with m <= k (k+1 of them) when o <= g, m < k when o > g: "
                 "b(b+1)/2 = 78 or b(b-1)/2 = 66");
            CHECK(striped[g].step_pairs[s] == (owner <= g ? 78U : 66U));
            INFO("zig-zag: chunks g and 2G-1-g; another rank's block is half visible, 2c² = 72; its own "
                 "c(c+1)/2 + c² + c(c+1)/2 = 2c² + c = 78");
            CHECK(zigzag[g].step_pairs[s] == (s == 0 ? 2 * c * c + c : 2 * c * c));
        }
        INFO("the sums: contiguous g·b² + b(b+1)/2, striped G·b(b-1)/2 + (g+1)·b, zig-zag (2G-1)c² + c(c+1)");
        CHECK(contiguous[g].pairs == g * block * block + block * (block + 1) / 2);
        CHECK(striped[g].pairs == ranks * block * (block - 1) / 2 + (g + 1) * block);
        CHECK(zigzag[g].pairs == (2 * ranks - 1) * c * c + c * (c + 1));
    }
    INFO("without the mask every pair: G·b² = 576 on every rank");
    for (const auto& result : run_ring({n, ranks, sa::Layout::zigzag, false}, inputs)) {
        CHECK(result.pairs == ranks * block * block);
    }
}

namespace {

// Chapter 11's gradients of softmax(QKᵀ/√d_k + M)·V: attention_backward() with E = I, so that Q = I·W_Q = W_Q exactly.
sa::AttentionGrads chapter_11(const helpers::Inputs& inputs, const sa::Matrix& mask, const sa::Matrix& d_outputs)
{
    return sa::attention_backward(sa::identity(inputs.queries.rows()), inputs.queries, inputs.keys, inputs.values,
                                  mask, d_outputs);
}

// The rows of some columns of a matrix.
sa::Matrix columns(const sa::Matrix& matrix, std::size_t first, std::size_t count)
{
    sa::Matrix taken(matrix.rows(), count);
    for (std::size_t r = 0; r < matrix.rows(); ++r) {
        for (std::size_t c = 0; c < count; ++c) {
            taken(r, c) = matrix(r, first + c);
        }
    }
    return taken;
}

}  // namespace

TEST_CASE("The ring's backward pass equals chapter 11's gradients for every G, layout and mask", "[ch17]")
{
    for (const std::size_t n : {std::size_t{13}, std::size_t{8}}) {
        const std::size_t key_dim = 3;
        const std::size_t value_dim = 4;
        sa::SplitMix64 generator(1100 + n);
        const helpers::Inputs inputs = helpers::random_inputs(generator, n, n, key_dim, value_dim);
        const sa::Matrix d_outputs = sa::random_matrix(n, value_dim, generator);
        for (const bool causal : {false, true}) {
            const sa::AttentionGrads reference = chapter_11(inputs, whole_mask(n, causal), d_outputs);
            for (const std::size_t ranks : {1, 2, 3, 4, 8}) {
                for (const sa::Layout layout : layouts) {
                    const sa::RingSetup setup{n, ranks, layout, causal};
                    sa::LocalCommunicator communicator;
                    const auto shards = all_shards(layout, ranks, inputs);
                    const auto forward = sa::ring_attention(communicator, setup, shards);
                    std::vector<sa::Matrix> d_mine;
                    for (const auto& shard : shards) {
                        d_mine.push_back(sa::shard_rows(d_outputs, layout, ranks, shard.rank));
                    }
                    const auto backward = sa::ring_attention_backward(communicator, setup, shards, forward, d_mine);
                    const sa::Matrix grads = sa::assemble_outputs(backward, n);
                    INFO("n = " << n << ", G = " << ranks << ", " << sa::layout_name(layout)
                                << (causal ? ", causal" : ", no mask") << ": dQ, dK and dV of every rank, put "
                                "together, are chapter 11's, to a relative 1e-12");
                    CHECK(sa::agree(columns(grads, 0, key_dim), reference.d_queries, 1e-12));
                    CHECK(sa::agree(columns(grads, key_dim, key_dim), reference.d_keys, 1e-12));
                    CHECK(sa::agree(columns(grads, 2 * key_dim, value_dim), reference.d_values, 1e-12));
                }
            }
        }
    }
}

TEST_CASE("The ring refuses shards and forward results that are not the ones it needs, naming them", "[ch17][support]")
{
    const helpers::Inputs inputs = helpers::random_inputs(7, 4, 4, 2, 3);
    INFO("make_shard: K of width 3 beside Q of width 2 cannot be scored (q·k needs one width)");
    const sa::Matrix wide_keys(4, 3, 0.5);
    CHECK_THROWS_AS(sa::make_shard(sa::Layout::contiguous, 2, 0, inputs.queries, wide_keys, inputs.values),
                    sa::ShapeError);
    INFO("ring_attention_backward: rank 0's shard given rank 1's forward result (the results swapped)");
    const sa::RingSetup setup{4, 2, sa::Layout::contiguous, true};
    sa::LocalCommunicator communicator;
    const auto shards = all_shards(setup.layout, setup.ranks, inputs);
    auto forward = sa::ring_attention(communicator, setup, shards);
    std::swap(forward[0], forward[1]);
    const std::vector<sa::Matrix> d_mine{sa::Matrix(2, 3, 1.0), sa::Matrix(2, 3, 1.0)};
    CHECK_THROWS_WITH(sa::ring_attention_backward(communicator, setup, shards, forward, d_mine),
                      Contains("rank 0 needs its forward result"));
}

namespace {

// A communicator that delivers every message one number short, as a broken network might: what
// reads the message must notice, not read past its end.
class ShortMessages : public sa::LocalCommunicator {
public:
    void receive(std::size_t from, std::size_t to, std::vector<double>& into) override
    {
        short_.push_back(&into);
        sa::LocalCommunicator::receive(from, to, into);
    }
    void wait() override
    {
        sa::LocalCommunicator::wait();
        for (std::vector<double>* message : short_) {
            message->pop_back();
        }
        short_.clear();
    }

private:
    std::vector<std::vector<double>*> short_;
};

}  // namespace

TEST_CASE("A block that arrives one number short is refused, not read past its end", "[ch17][support]")
{
    const helpers::Inputs inputs = helpers::random_inputs(8, 4, 4, 2, 2);
    const sa::RingSetup setup{4, 2, sa::Layout::contiguous, false};
    ShortMessages communicator;
    INFO("each block of 2 tokens carries K and V, 2·2 + 2·2 = 8 numbers; 7 arrive");
    CHECK_THROWS_WITH(sa::ring_attention(communicator, setup, all_shards(setup.layout, setup.ranks, inputs)),
                      Contains("a message of 7 numbers is too short"));
}

TEST_CASE("The backward pass sends K and V G-1 times and dK, dV G times, and computes what the forward did",
          "[ch17]")
{
    const std::size_t n = 12;
    sa::SplitMix64 generator(12);
    const helpers::Inputs inputs = helpers::random_inputs(generator, n, n, 4, 4);
    const sa::Matrix d_outputs = sa::random_matrix(n, 4, generator);
    for (const std::size_t ranks : {1, 2, 3, 4}) {
        for (const sa::Layout layout : layouts) {
            const sa::RingSetup setup{n, ranks, layout, true};
            sa::LocalCommunicator communicator;
            const auto shards = all_shards(layout, ranks, inputs);
            const auto forward = sa::ring_attention(communicator, setup, shards);
            std::vector<sa::Matrix> d_mine;
            for (const auto& shard : shards) {
                d_mine.push_back(sa::shard_rows(d_outputs, layout, ranks, shard.rank));
            }
            const auto backward = sa::ring_attention_backward(communicator, setup, shards, forward, d_mine);
            const std::uint64_t block = (n / ranks) * (4 + 4) * 8;  // b rows of a key and a value, 8 bytes a number
            for (const auto& result : backward) {
                INFO("G = " << ranks << ", " << sa::layout_name(layout) << ", rank " << result.rank << ": a block is "
                     "(12/G)·(4 + 4)·8 = " << block << " bytes; K, V at steps 0 to G-2 and dK, dV at every step");
                CHECK(result.bytes_sent == (ranks == 1 ? 0 : (2 * ranks - 1) * block));
                for (std::size_t step = 0; step < ranks; ++step) {
                    CHECK(result.step_bytes[step] == (ranks == 1 ? 0 : step + 1 < ranks ? 2 * block : block));
                    CHECK(result.step_bytes[step] >= 2 * forward[result.rank].step_bytes[step]);
                }
                INFO("the same pairs as the forward pass, step by step");
                CHECK(result.step_pairs == forward[result.rank].step_pairs);
            }
        }
    }
}
