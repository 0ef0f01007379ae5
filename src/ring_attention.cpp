#include "ring_attention.hpp"

#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "attention.hpp"
#include "exercise.hpp"
#include "multi_head.hpp"
#include "tiled.hpp"

namespace sa {

namespace {

constexpr double minus_infinity = -std::numeric_limits<double>::infinity();

// The given rows of a matrix, in the given order, as a matrix of their own.
Matrix take_rows(const Matrix& matrix, const std::vector<std::size_t>& rows)
{
    Matrix taken(rows.size(), matrix.cols());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        for (std::size_t c = 0; c < matrix.cols(); ++c) {
            taken(i, c) = matrix(rows[i], c);
        }
    }
    return taken;
}

// Appends columns [first, first + count) of every row of a matrix to a message.
void append_columns(std::vector<double>& message, const Matrix& matrix, std::size_t first, std::size_t count)
{
    for (std::size_t r = 0; r < matrix.rows(); ++r) {
        for (std::size_t c = first; c < first + count; ++c) {
            message.push_back(matrix(r, c));
        }
    }
}

// Reads rows×cols numbers from a message, starting at `at`, into a matrix; `at` moves past them.
Matrix read_matrix(const std::vector<double>& message, std::size_t& at, std::size_t rows, std::size_t cols)
{
    if (at + rows * cols > message.size()) {
        throw std::runtime_error(fmt::format("a message of {} numbers is too short for a {}×{} matrix at {}",
                                             message.size(), rows, cols, at));
    }
    Matrix matrix(rows, cols);
    for (std::size_t i = 0; i < rows * cols; ++i) {
        matrix.data()[i] = message[at + i];
    }
    at += rows * cols;
    return matrix;
}

std::uint64_t message_bytes(const std::vector<double>& message)
{
    return message.size() * sizeof(double);
}

void check_ranks(std::size_t tokens, std::size_t ranks, std::size_t rank)
{
    if (ranks == 0 || rank >= ranks) {
        throw std::invalid_argument(fmt::format("rank {} of {}: a ring needs at least 1 rank and g below G", rank,
                                                ranks));
    }
    if (tokens < ranks) {
        throw std::invalid_argument(fmt::format("{} ranks for {} tokens: each rank needs at least one token, so G "
                                                "can be at most n", ranks, tokens));
    }
}

}  // namespace

std::string layout_name(Layout layout)
{
    switch (layout) {
    case Layout::contiguous: return "contiguous";
    case Layout::striped: return "striped";
    case Layout::zigzag: return "zig-zag";
    }
    return "unknown";
}

//> zigzag-rows
std::vector<std::size_t> zigzag_rows(std::size_t tokens, std::size_t ranks, std::size_t rank)
{
    // BEGIN SOLUTION zigzag_rows: chapter 17, Attention across machines
    const std::size_t chunks = 2 * ranks;
    const std::size_t base = tokens / chunks;   // every chunk has this many tokens ...
    const std::size_t extra = tokens % chunks;  // ... and the first `extra` chunks one more
    const auto chunk_start = [&](std::size_t chunk) { return chunk * base + (chunk < extra ? chunk : extra); };
    std::vector<std::size_t> rows;
    for (const std::size_t chunk : {rank, chunks - 1 - rank}) {  // one early chunk, its mirror late
        for (std::size_t row = chunk_start(chunk); row < chunk_start(chunk + 1); ++row) {
            rows.push_back(row);
        }
    }
    return rows;
    // END SOLUTION
}
//< zigzag-rows

//> layout-rows
std::vector<std::size_t> layout_rows(Layout layout, std::size_t tokens, std::size_t ranks, std::size_t rank)
{
    check_ranks(tokens, ranks, rank);
    std::vector<std::size_t> rows;
    switch (layout) {
    case Layout::contiguous:  // chapter 13's split of the keys between workers
        for (std::size_t row = rank * tokens / ranks; row < (rank + 1) * tokens / ranks; ++row) {
            rows.push_back(row);
        }
        break;
    case Layout::striped:
        for (std::size_t row = rank; row < tokens; row += ranks) {
            rows.push_back(row);
        }
        break;
    case Layout::zigzag:
        rows = zigzag_rows(tokens, ranks, rank);
        break;
    }
    return rows;
}
//< layout-rows

//> ring-schedule
std::size_t ring_block_owner(std::size_t rank, std::size_t step, std::size_t ranks)
{
    // BEGIN SOLUTION ring_block_owner: chapter 17, Attention across machines
    return (rank + ranks - step % ranks) % ranks;  // (g - s) mod G, without going below 0
    // END SOLUTION
}
//< ring-schedule

std::uint64_t visible_pairs(const std::vector<std::size_t>& query_rows, const std::vector<std::size_t>& key_rows,
                            bool causal)
{
    std::uint64_t pairs = 0;
    for (const std::size_t query : query_rows) {
        for (const std::size_t key : key_rows) {
            pairs += (!causal || key <= query) ? 1 : 0;  // the causal mask hides the keys after the query
        }
    }
    return pairs;
}

std::vector<std::uint64_t> ring_work(Layout layout, std::size_t tokens, std::size_t ranks, bool causal)
{
    std::vector<std::vector<std::size_t>> rows;
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        rows.push_back(layout_rows(layout, tokens, ranks, rank));
    }
    std::vector<std::uint64_t> work(ranks, 0);
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        for (std::size_t owner = 0; owner < ranks; ++owner) {
            work[rank] += visible_pairs(rows[rank], rows[owner], causal);
        }
    }
    return work;
}

std::uint64_t ring_bytes_sent(Layout layout, std::size_t tokens, std::size_t ranks, std::size_t rank,
                              std::size_t key_dim, std::size_t value_dim)
{
    std::uint64_t bytes = 0;
    for (std::size_t step = 0; step + 1 < ranks; ++step) {  // nothing is sent after the last step
        const std::size_t rows = layout_rows(layout, tokens, ranks, ring_block_owner(rank, step, ranks)).size();
        bytes += rows * (key_dim + value_dim) * sizeof(double);
    }
    return bytes;
}

double ring_bytes_formula(std::size_t tokens, std::size_t ranks, std::size_t dim)
{
    const double p = static_cast<double>(ranks);
    return 2.0 * (p - 1.0) * (static_cast<double>(tokens) / p) * static_cast<double>(dim) * 8.0;
}

double ulysses_bytes_formula(std::size_t tokens, std::size_t ranks, std::size_t dim)
{
    const double p = static_cast<double>(ranks);
    return 4.0 * (static_cast<double>(tokens) / p) * static_cast<double>(dim) * ((p - 1.0) / p) * 8.0;
}

bool LocalCommunicator::runs(std::size_t /*rank*/) const
{
    return true;
}

void LocalCommunicator::send(std::size_t from, std::size_t to, const std::vector<double>& message)
{
    mailboxes_[{from, to}].push_back(message);
}

void LocalCommunicator::receive(std::size_t from, std::size_t to, std::vector<double>& into)
{
    pending_.push_back({from, to, &into});
}

void LocalCommunicator::wait()
{
    const std::vector<Pending> pending_now = std::exchange(pending_, {});  // a failed wait leaves nothing behind
    for (const Pending& pending : pending_now) {
        auto& mailbox = mailboxes_[{pending.from, pending.to}];
        if (mailbox.empty()) {
            throw std::runtime_error(fmt::format("rank {} waits for a message from rank {} that was never sent",
                                                 pending.to, pending.from));
        }
        if (mailbox.front().size() != pending.into->size()) {
            throw std::runtime_error(fmt::format("rank {} expected {} numbers from rank {} but got {}", pending.to,
                                                 pending.into->size(), pending.from, mailbox.front().size()));
        }
        *pending.into = std::move(mailbox.front());
        mailbox.erase(mailbox.begin());
    }
}

Shard make_shard(Layout layout, std::size_t ranks, std::size_t rank, const Matrix& queries, const Matrix& keys,
                 const Matrix& values)
{
    if (keys.rows() != queries.rows() || values.rows() != queries.rows() || keys.cols() != queries.cols()) {
        throw ShapeError(fmt::format("make_shard: Q is {}, K is {} and V is {}; self-attention needs one row of "
                                     "each per token and Q and K of the same width", shape(queries), shape(keys),
                                     shape(values)));
    }
    Shard shard;
    shard.rank = rank;
    shard.rows = layout_rows(layout, queries.rows(), ranks, rank);
    shard.queries = take_rows(queries, shard.rows);
    shard.keys = take_rows(keys, shard.rows);
    shard.values = take_rows(values, shard.rows);
    return shard;
}

Matrix block_mask(const std::vector<std::size_t>& query_rows, const std::vector<std::size_t>& key_rows, bool causal)
{
    Matrix mask(query_rows.size(), key_rows.size(), 0.0);
    for (std::size_t i = 0; i < query_rows.size(); ++i) {
        for (std::size_t j = 0; j < key_rows.size(); ++j) {
            if (causal && key_rows[j] > query_rows[i]) {
                mask(i, j) = minus_infinity;
            }
        }
    }
    return mask;
}

namespace {

void check_shards(const RingSetup& setup, const std::vector<Shard>& shards)
{
    for (const Shard& shard : shards) {
        if (shard.rows != layout_rows(setup.layout, setup.tokens, setup.ranks, shard.rank) ||
            shard.queries.rows() != shard.rows.size() || shard.keys.rows() != shard.rows.size() ||
            shard.values.rows() != shard.rows.size()) {
            throw std::invalid_argument(fmt::format("rank {}'s shard does not hold its rows of Q, K and V under the "
                                                    "{} layout of {} tokens on {} ranks", shard.rank,
                                                    layout_name(setup.layout), setup.tokens, setup.ranks));
        }
    }
}

// One rank's side of the ring: the block it holds, the one arriving, and its running state.
struct RankRing {
    std::vector<double> held;      // the keys, then the values, of the block held at this step
    std::vector<double> incoming;  // the next block, arriving from rank g - 1
    PartialAttention running;      // merged over the blocks absorbed so far
    bool started = false;          // whether any block has been absorbed yet
};

//> ring-absorb
// Absorbs the block of rank `owner` into rank g's running state, or skips it if the mask hides all of it.
void absorb_held(const Shard& shard, const RingSetup& setup, std::size_t owner, RankRing& ring, RankResult& result)
{
    const std::vector<std::size_t> key_rows = layout_rows(setup.layout, setup.tokens, setup.ranks, owner);
    const std::uint64_t pairs = visible_pairs(shard.rows, key_rows, setup.causal);
    if (pairs == 0) {
        ++result.skipped;  // nothing to see: no scores, no merge
        return;
    }
    std::size_t at = 0;
    const Matrix keys = read_matrix(ring.held, at, key_rows.size(), shard.keys.cols());
    const Matrix values = read_matrix(ring.held, at, key_rows.size(), shard.values.cols());
    const Matrix mask = block_mask(shard.rows, key_rows, setup.causal);
    PartialAttention partial = empty_attention(shard.rows.size(), values.cols());
    absorb_block(partial, shard.queries, keys, values, mask, {0, shard.rows.size(), 0, key_rows.size()});
    ring.running = ring.started ? merge_attention(ring.running, partial) : std::move(partial);
    ring.started = true;
    result.pairs += pairs;
}
//< ring-absorb

}  // namespace

//> ring-attention
std::vector<RankResult> ring_attention(Communicator& communicator, const RingSetup& setup,
                                       const std::vector<Shard>& shards)
{
    check_shards(setup, shards);
    const std::size_t ranks = setup.ranks;
    std::vector<RankRing> rings(shards.size());
    std::vector<RankResult> results(shards.size());
    for (std::size_t i = 0; i < shards.size(); ++i) {
        append_columns(rings[i].held, shards[i].keys, 0, shards[i].keys.cols());  // step 0: its own block
        append_columns(rings[i].held, shards[i].values, 0, shards[i].values.cols());
        rings[i].running = empty_attention(shards[i].rows.size(), shards[i].values.cols());
        results[i].rank = shards[i].rank;
        results[i].rows = shards[i].rows;
    }
    for (std::size_t step = 0; step < ranks; ++step) {
        const bool pass_on = step + 1 < ranks;
        for (std::size_t i = 0; i < shards.size() && pass_on; ++i) {  // start the transfers ...
            const std::size_t rank = shards[i].rank;
            const std::size_t next_owner = ring_block_owner(rank, step + 1, ranks);
            const std::size_t next_rows = layout_rows(setup.layout, setup.tokens, ranks, next_owner).size();
            rings[i].incoming.assign(next_rows * (shards[i].keys.cols() + shards[i].values.cols()), 0.0);
            communicator.send(rank, (rank + 1) % ranks, rings[i].held);
            communicator.receive((rank + ranks - 1) % ranks, rank, rings[i].incoming);
            results[i].bytes_sent += message_bytes(rings[i].held);
            results[i].bytes_received += message_bytes(rings[i].incoming);
        }
        for (std::size_t i = 0; i < shards.size(); ++i) {  // ... compute while they travel ...
            absorb_held(shards[i], setup, ring_block_owner(shards[i].rank, step, ranks), rings[i], results[i]);
            results[i].states.push_back(state_table(rings[i].running));
        }
        if (pass_on) {  // ... and take the next block
            communicator.wait();
            for (RankRing& ring : rings) {
                std::swap(ring.held, ring.incoming);
            }
        }
    }
    for (std::size_t i = 0; i < shards.size(); ++i) {
        results[i].outputs = finish_attention(rings[i].running);
    }
    return results;
}
//< ring-attention

namespace {

// The widths of Ulysses' head shards: each rank takes h/G heads, g·d_k/h columns of Q and K, g·d_v/h of V.
struct HeadShare {
    std::size_t heads_per_rank;
    std::size_t key_width;
    std::size_t value_width;
};

HeadShare head_share(const RingSetup& setup, std::size_t heads, const Shard& shard)
{
    const std::size_t key_dim = shard.queries.cols();
    const std::size_t value_dim = shard.values.cols();
    if (heads == 0 || heads % setup.ranks != 0 || key_dim % heads != 0 || value_dim % heads != 0) {
        throw std::invalid_argument(fmt::format("Ulysses needs the {} heads to split evenly between {} ranks and "
                                                "d_k = {} and d_v = {} to split into the heads", heads, setup.ranks,
                                                key_dim, value_dim));
    }
    const std::size_t per_rank = heads / setup.ranks;
    return {per_rank, per_rank * (key_dim / heads), per_rank * (value_dim / heads)};
}

// The first all-to-all's message from a shard to rank t: t's columns of its rows of Q, K and V.
std::vector<double> head_columns(const Shard& shard, const HeadShare& share, std::size_t target)
{
    std::vector<double> message;
    append_columns(message, shard.queries, target * share.key_width, share.key_width);
    append_columns(message, shard.keys, target * share.key_width, share.key_width);
    append_columns(message, shard.values, target * share.value_width, share.value_width);
    return message;
}

// Puts rows (given by their token rows) of a head slice into the whole-sequence matrix.
void place_rows(Matrix& whole, const Matrix& part, const std::vector<std::size_t>& rows)
{
    for (std::size_t i = 0; i < rows.size(); ++i) {
        for (std::size_t c = 0; c < part.cols(); ++c) {
            whole(rows[i], c) = part(i, c);
        }
    }
}

// Rank t's heads over the whole sequence, from every rank's message (its own included), then their attention.
Matrix heads_attention(const RingSetup& setup, const HeadShare& share, const std::vector<std::vector<double>>& from_each,
                       std::uint64_t& pairs)
{
    Matrix queries(setup.tokens, share.key_width);
    Matrix keys(setup.tokens, share.key_width);
    Matrix values(setup.tokens, share.value_width);
    for (std::size_t source = 0; source < setup.ranks; ++source) {
        const auto rows = layout_rows(setup.layout, setup.tokens, setup.ranks, source);
        std::size_t at = 0;
        place_rows(queries, read_matrix(from_each[source], at, rows.size(), share.key_width), rows);
        place_rows(keys, read_matrix(from_each[source], at, rows.size(), share.key_width), rows);
        place_rows(values, read_matrix(from_each[source], at, rows.size(), share.value_width), rows);
    }
    std::vector<std::size_t> sequence(setup.tokens);
    for (std::size_t row = 0; row < setup.tokens; ++row) {
        sequence[row] = row;
    }
    const Matrix mask = block_mask(sequence, sequence, setup.causal);  // the whole n×n mask
    const auto head_queries = split_heads(queries, share.heads_per_rank);
    const auto head_keys = split_heads(keys, share.heads_per_rank);
    const auto head_values = split_heads(values, share.heads_per_rank);
    std::vector<Matrix> outputs;
    for (std::size_t head = 0; head < share.heads_per_rank; ++head) {  // chapter 7's attention, one head at a time
        outputs.push_back(attention(head_queries[head], head_keys[head], head_values[head], mask));
        pairs += setup.causal ? setup.tokens * (setup.tokens + 1) / 2 : setup.tokens * setup.tokens;
    }
    return concat_heads(outputs);
}

}  // namespace

namespace {

using Messages = std::vector<std::vector<std::vector<double>>>;  // [shard][other rank]: one message each

// Starts a message from each shard's rank to every other rank, and the receive of one from each;
// the message to itself is kept as it is. incoming[i][other] must already have its length.
void exchange_all(Communicator& communicator, const std::vector<Shard>& shards, const Messages& outgoing,
                  Messages& incoming, std::vector<RankResult>& results)
{
    for (std::size_t i = 0; i < shards.size(); ++i) {
        const std::size_t rank = shards[i].rank;
        for (std::size_t other = 0; other < outgoing[i].size(); ++other) {
            if (other == rank) {
                continue;
            }
            communicator.send(rank, other, outgoing[i][other]);
            communicator.receive(other, rank, incoming[i][other]);
            results[i].bytes_sent += message_bytes(outgoing[i][other]);
            results[i].bytes_received += message_bytes(incoming[i][other]);
        }
    }
    communicator.wait();
    for (std::size_t i = 0; i < shards.size(); ++i) {
        incoming[i][shards[i].rank] = outgoing[i][shards[i].rank];
    }
}

// The second all-to-all's message from rank t to rank s: s's rows of t's heads.
std::vector<double> rows_of(const Matrix& head_output, const std::vector<std::size_t>& rows)
{
    std::vector<double> message;
    for (const std::size_t row : rows) {
        for (std::size_t c = 0; c < head_output.cols(); ++c) {
            message.push_back(head_output(row, c));
        }
    }
    return message;
}

// Rank g's outputs: its rows of every rank's heads, rank t's in columns [t·width, (t+1)·width).
Matrix join_heads(const std::vector<std::vector<double>>& from_each, std::size_t rows, std::size_t width)
{
    Matrix outputs(rows, from_each.size() * width);
    for (std::size_t source = 0; source < from_each.size(); ++source) {
        std::size_t at = 0;
        const Matrix part = read_matrix(from_each[source], at, rows, width);
        for (std::size_t r = 0; r < rows; ++r) {
            for (std::size_t c = 0; c < width; ++c) {
                outputs(r, source * width + c) = part(r, c);
            }
        }
    }
    return outputs;
}

}  // namespace

//> ulysses
std::vector<RankResult> ulysses_attention(Communicator& communicator, const RingSetup& setup, std::size_t heads,
                                          const std::vector<Shard>& shards)
{
    check_shards(setup, shards);
    std::vector<RankResult> results(shards.size());
    if (shards.empty()) {
        return results;
    }
    const HeadShare share = head_share(setup, heads, shards.front());
    const std::size_t ranks = setup.ranks;
    std::vector<std::vector<std::size_t>> rows;
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        rows.push_back(layout_rows(setup.layout, setup.tokens, ranks, rank));
    }
    // All-to-all 1: rank g sends rank t the columns of t's heads of its rows of Q, K and V.
    Messages outgoing(shards.size(), std::vector<std::vector<double>>(ranks));
    Messages incoming = outgoing;
    for (std::size_t i = 0; i < shards.size(); ++i) {
        results[i].rank = shards[i].rank;
        results[i].rows = shards[i].rows;
        for (std::size_t other = 0; other < ranks; ++other) {
            outgoing[i][other] = head_columns(shards[i], share, other);
            incoming[i][other].assign(rows[other].size() * (2 * share.key_width + share.value_width), 0.0);
        }
    }
    exchange_all(communicator, shards, outgoing, incoming, results);
    // Each rank: attention on its h/G heads over the whole sequence.
    std::vector<Matrix> head_outputs;
    for (std::size_t i = 0; i < shards.size(); ++i) {
        head_outputs.push_back(heads_attention(setup, share, incoming[i], results[i].pairs));
    }
    // All-to-all 2: rank t sends rank s the rows of s of its heads' outputs.
    for (std::size_t i = 0; i < shards.size(); ++i) {
        for (std::size_t other = 0; other < ranks; ++other) {
            outgoing[i][other] = rows_of(head_outputs[i], rows[other]);
            incoming[i][other].assign(shards[i].rows.size() * share.value_width, 0.0);
        }
    }
    exchange_all(communicator, shards, outgoing, incoming, results);
    for (std::size_t i = 0; i < shards.size(); ++i) {
        results[i].outputs = join_heads(incoming[i], shards[i].rows.size(), share.value_width);
    }
    return results;
}
//< ulysses

//> split-merge-in-ring-order
Matrix split_and_merge_in_ring_order(const RingSetup& setup, const Matrix& queries, const Matrix& keys,
                                     const Matrix& values, std::size_t rank)
{
    std::vector<std::vector<std::size_t>> rows;
    std::vector<std::size_t> order;     // the tokens, rank 0's first
    std::vector<std::size_t> first{0};  // where each rank's rows start in that order
    for (std::size_t r = 0; r < setup.ranks; ++r) {
        rows.push_back(layout_rows(setup.layout, setup.tokens, setup.ranks, r));
        order.insert(order.end(), rows.back().begin(), rows.back().end());
        first.push_back(order.size());
    }
    const Matrix renumbered_queries = take_rows(queries, order);
    const Matrix renumbered_keys = take_rows(keys, order);
    const Matrix renumbered_values = take_rows(values, order);
    const Matrix mask = block_mask(order, order, setup.causal);
    std::vector<PartialAttention> parts;  // one per block, as chapter 13's workers
    for (std::size_t step = 0; step < setup.ranks; ++step) {
        const std::size_t owner = ring_block_owner(rank, step, setup.ranks);
        if (visible_pairs(rows[rank], rows[owner], setup.causal) > 0) {
            parts.push_back(empty_attention(setup.tokens, values.cols()));
            absorb_block(parts.back(), renumbered_queries, renumbered_keys, renumbered_values, mask,
                         {first[rank], first[rank + 1], first[owner], first[owner + 1]});
        }
    }
    PartialAttention merged = parts.front();  // a rank always sees its own block (j = i is never masked)
    for (std::size_t part = 1; part < parts.size(); ++part) {
        merged = merge_attention(merged, parts[part]);
    }
    const Matrix all = finish_attention(merged);
    std::vector<std::size_t> mine(rows[rank].size());
    std::iota(mine.begin(), mine.end(), first[rank]);
    return take_rows(all, mine);
}
//< split-merge-in-ring-order

namespace {

// A result as numbers: its counts, d_v and the number of states, then the outputs and the states.
std::vector<double> pack_result(const RankResult& result)
{
    std::vector<double> message{static_cast<double>(result.bytes_sent), static_cast<double>(result.bytes_received),
                                static_cast<double>(result.pairs), static_cast<double>(result.skipped),
                                static_cast<double>(result.outputs.cols()), static_cast<double>(result.states.size())};
    append_columns(message, result.outputs, 0, result.outputs.cols());
    for (const Matrix& state : result.states) {
        append_columns(message, state, 0, state.cols());
    }
    return message;
}

RankResult unpack_result(const std::vector<double>& message, std::size_t rank, std::vector<std::size_t> rows)
{
    std::size_t at = 0;
    const Matrix header = read_matrix(message, at, 1, 6);
    RankResult result;
    result.rank = rank;
    result.rows = std::move(rows);
    result.bytes_sent = static_cast<std::uint64_t>(header(0, 0));
    result.bytes_received = static_cast<std::uint64_t>(header(0, 1));
    result.pairs = static_cast<std::uint64_t>(header(0, 2));
    result.skipped = static_cast<std::uint64_t>(header(0, 3));
    const auto value_dim = static_cast<std::size_t>(header(0, 4));
    result.outputs = read_matrix(message, at, result.rows.size(), value_dim);
    for (std::size_t state = 0; state < static_cast<std::size_t>(header(0, 5)); ++state) {
        result.states.push_back(read_matrix(message, at, result.rows.size(), value_dim + 2));
    }
    return result;
}

}  // namespace

std::vector<RankResult> gather_results(Communicator& communicator, const RingSetup& setup,
                                       const std::vector<RankResult>& mine)
{
    const std::size_t ranks = setup.ranks;
    std::vector<std::vector<double>> sent(ranks);
    std::vector<std::vector<double>> sent_lengths(ranks, std::vector<double>(1, 0.0));
    for (const RankResult& result : mine) {
        sent[result.rank] = pack_result(result);
        sent_lengths[result.rank][0] = static_cast<double>(sent[result.rank].size());
    }
    // First every rank's length, then its numbers: rank 0 then knows how many to expect.
    std::vector<std::vector<double>> received(ranks);
    std::vector<std::vector<double>> received_lengths(ranks, std::vector<double>(1, 0.0));
    for (const bool numbers : {false, true}) {
        for (const RankResult& result : mine) {
            if (result.rank != 0) {
                communicator.send(result.rank, 0, numbers ? sent[result.rank] : sent_lengths[result.rank]);
            }
        }
        for (std::size_t rank = 1; rank < ranks && communicator.runs(0); ++rank) {
            if (numbers) {
                received[rank].assign(static_cast<std::size_t>(received_lengths[rank][0]), 0.0);
            }
            communicator.receive(rank, 0, numbers ? received[rank] : received_lengths[rank]);
        }
        communicator.wait();
    }
    std::vector<RankResult> everyone;
    for (std::size_t rank = 0; rank < ranks && communicator.runs(0); ++rank) {
        everyone.push_back(unpack_result(rank == 0 ? sent[0] : received[rank], rank,
                                         layout_rows(setup.layout, setup.tokens, ranks, rank)));
    }
    return everyone;
}

Matrix assemble_outputs(const std::vector<RankResult>& results, std::size_t tokens)
{
    if (results.empty()) {
        return {};
    }
    Matrix outputs(tokens, results.front().outputs.cols());
    for (const RankResult& result : results) {
        place_rows(outputs, result.outputs, result.rows);
    }
    return outputs;
}

}  // namespace sa
