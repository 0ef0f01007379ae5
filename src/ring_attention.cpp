#include "ring_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "attention.hpp"
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

}  // namespace

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

BlockVisibility block_visibility(const std::vector<std::size_t>& query_rows, const std::vector<std::size_t>& key_rows,
                                 bool causal)
{
    if (!causal || key_rows.back() <= query_rows.front()) {
        return BlockVisibility::visible;
    }
    return key_rows.front() > query_rows.back() ? BlockVisibility::hidden : BlockVisibility::diagonal;
}

namespace {

// m_i: how many of a block's ascending key rows query row `row` may see, a prefix of them.
std::size_t keys_seen(BlockVisibility kind, const std::vector<std::size_t>& key_rows, std::size_t row)
{
    switch (kind) {
    case BlockVisibility::visible: return key_rows.size();
    case BlockVisibility::hidden: return 0;
    case BlockVisibility::diagonal: break;
    }
    return static_cast<std::size_t>(std::upper_bound(key_rows.begin(), key_rows.end(), row) - key_rows.begin());
}

double dot_rows(const Matrix& a, std::size_t i, const Matrix& b, std::size_t j)
{
    double dot = 0.0;
    for (std::size_t d = 0; d < a.cols(); ++d) {
        dot += a(i, d) * b(j, d);
    }
    return dot;
}

}  // namespace

//> absorb-visible
std::uint64_t absorb_visible(PartialAttention& state, const Matrix& queries, const std::vector<std::size_t>& query_rows,
                             const Matrix& keys, const Matrix& values, const std::vector<std::size_t>& key_rows,
                             bool causal)
{
    //{ checks the shapes
    if (queries.rows() != query_rows.size() || state.max.size() != queries.rows() || keys.rows() != key_rows.size() ||
        values.rows() != key_rows.size() || keys.cols() != queries.cols() || state.accumulator.cols() != values.cols()) {
        throw ShapeError(fmt::format("absorb_visible: Q {} of {} rows, K {} and V {} of {} rows and a state of {} rows "
                                     "do not fit together", shape(queries), query_rows.size(), shape(keys),
                                     shape(values), key_rows.size(), state.max.size()));
    }
    //}
    const BlockVisibility kind = block_visibility(query_rows, key_rows, causal);
    const double divisor = std::sqrt(static_cast<double>(queries.cols()));
    std::vector<double> scores(key_rows.size());
    std::uint64_t dots = 0;  // the counter: one for every q_i · k_j computed
    for (std::size_t i = 0; i < query_rows.size() && kind != BlockVisibility::hidden; ++i) {
        const std::size_t seen = keys_seen(kind, key_rows, query_rows[i]);  // no mask is read
        if (seen == 0) {
            continue;  // this query sees none of the block: its state stays as it is
        }
        double block_max = minus_infinity;
        for (std::size_t j = 0; j < seen; ++j) {
            scores[j] = dot_rows(queries, i, keys, j) / divisor;
            block_max = std::fmax(block_max, scores[j]);
            ++dots;
        }
        const double new_max = std::fmax(state.max[i], block_max);
        const double factor = rescale_factor(state.max[i], new_max);
        state.sum[i] *= factor;
        for (std::size_t d = 0; d < values.cols(); ++d) {
            state.accumulator(i, d) *= factor;
        }
        for (std::size_t j = 0; j < seen; ++j) {
            const double weight = shifted_exp(scores[j], new_max);
            state.sum[i] += weight;
            for (std::size_t d = 0; d < values.cols(); ++d) {
                state.accumulator(i, d) += weight * values(j, d);
            }
        }
        state.max[i] = new_max;
    }
    return dots;
}
//< absorb-visible

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

double ulysses_bisection_numbers(std::size_t tokens, std::size_t ranks, std::size_t dim)
{
    const double p = static_cast<double>(ranks);
    const double pairs = static_cast<double>(ranks / 2) * static_cast<double>(ranks - ranks / 2);  // across the cut
    return pairs * 4.0 * (static_cast<double>(tokens) / p) * (static_cast<double>(dim) / p);
}

//> ring-memory
std::uint64_t ring_rank_numbers(std::uint64_t tokens_per_rank, std::uint64_t key_dim, std::uint64_t value_dim)
{
    const std::uint64_t queries = tokens_per_rank * key_dim;
    const std::uint64_t state = tokens_per_rank * (value_dim + 2);  // Õ, μ and ℓ of each query
    const std::uint64_t blocks = 2 * cached_step_reads(tokens_per_rank, key_dim, value_dim);  // held and arriving
    const std::uint64_t own = tokens_per_rank * (key_dim + value_dim);  // kept for the backward pass
    const std::uint64_t score_row = tokens_per_rank;  // one row of the block's scores at a time
    return queries + state + blocks + own + score_row;
}

std::uint64_t ring_longest_sequence(std::uint64_t device_bytes, std::uint64_t ranks, std::uint64_t key_dim,
                                    std::uint64_t value_dim)
{
    const std::uint64_t per_token = ring_rank_numbers(1, key_dim, value_dim) * sizeof(double);
    return ranks * (device_bytes / per_token);  // the largest b that fits, on each of the G ranks
}
//< ring-memory

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

void Communicator::all_to_all(const AllToAll& outgoing, AllToAll& incoming)
{
    const std::size_t ranks = outgoing.size();
    for (std::size_t from = 0; from < ranks; ++from) {
        for (std::size_t to = 0; to < ranks && runs(from); ++to) {
            if (to != from) {
                send(from, to, outgoing[from][to]);
                receive(to, from, incoming[from][to]);  // rank `from` is also a receiver, of rank `to`'s message
            }
        }
    }
    wait();
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        if (runs(rank)) {
            if (incoming[rank][rank].size() != outgoing[rank][rank].size()) {
                throw std::runtime_error(fmt::format("rank {} expected {} numbers from itself but got {}", rank,
                                                     incoming[rank][rank].size(), outgoing[rank][rank].size()));
            }
            incoming[rank][rank] = outgoing[rank][rank];
        }
    }
}

Matrix shard_rows(const Matrix& matrix, Layout layout, std::size_t ranks, std::size_t rank)
{
    return take_rows(matrix, layout_rows(layout, matrix.rows(), ranks, rank));
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

// Starts sending rank g's `message` on to rank g+1 and receiving from rank g-1, into `into`, the message of the
// block rank g holds at `next_step`, `width` numbers a token row; counts the bytes.
void pass_block_on(Communicator& communicator, const RingSetup& setup, std::size_t rank, std::size_t next_step,
                   std::size_t width, const std::vector<double>& message, std::vector<double>& into, RankResult& result)
{
    const std::size_t ranks = setup.ranks;
    const std::size_t owner = ring_block_owner(rank, next_step, ranks);
    into.assign(layout_rows(setup.layout, setup.tokens, ranks, owner).size() * width, 0.0);
    communicator.send(rank, (rank + 1) % ranks, message);
    communicator.receive((rank + ranks - 1) % ranks, rank, into);
    result.bytes_sent += message_bytes(message);
    result.bytes_received += message_bytes(into);
}

//> ring-absorb
// Absorbs the block of rank `owner` into rank g's running state; a block the mask hides entirely is skipped.
void absorb_held(const Shard& shard, const RingSetup& setup, std::size_t owner, RankRing& ring, RankResult& result)
{
    const std::vector<std::size_t> key_rows = layout_rows(setup.layout, setup.tokens, setup.ranks, owner);
    if (block_visibility(shard.rows, key_rows, setup.causal) == BlockVisibility::hidden) {
        ++result.skipped;  // nothing to see: no scores, no merge
        result.step_pairs.push_back(0);
        return;
    }
    std::size_t at = 0;
    const Matrix keys = read_matrix(ring.held, at, key_rows.size(), shard.keys.cols());
    const Matrix values = read_matrix(ring.held, at, key_rows.size(), shard.values.cols());
    PartialAttention partial = empty_attention(shard.rows.size(), values.cols());
    const std::uint64_t dots = absorb_visible(partial, shard.queries, shard.rows, keys, values, key_rows, setup.causal);
    ring.running = ring.started ? merge_attention(ring.running, partial) : std::move(partial);
    ring.started = true;
    result.pairs += dots;  // read from the kernel's counter
    result.step_pairs.push_back(dots);
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
        for (std::size_t i = 0; i < shards.size(); ++i) {  // start the transfers ...
            results[i].step_bytes.push_back(pass_on ? message_bytes(rings[i].held) : 0);
            if (pass_on) {
                pass_block_on(communicator, setup, shards[i].rank, step + 1,
                              shards[i].keys.cols() + shards[i].values.cols(), rings[i].held, rings[i].incoming,
                              results[i]);
            }
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

// One rank's queries in the backward pass: what the forward left them, and their dQ so far.
struct QuerySide {
    const Shard* shard = nullptr;
    const Matrix* d_outputs = nullptr;  // dO of its rows
    std::vector<double> max;            // μ_i of the forward's last state
    std::vector<double> sum;            // ℓ_i
    std::vector<double> delta;          // D_i = dO_i · O_i
    Matrix d_queries;                   // dQ, summed over the blocks
};

QuerySide query_side(const Shard& shard, const RankResult& forward, const Matrix& d_outputs)
{
    const std::size_t rows = shard.rows.size();
    if (forward.rank != shard.rank || forward.states.empty() || forward.outputs.rows() != rows ||
        forward.outputs.cols() != shard.values.cols() || d_outputs.rows() != rows ||
        d_outputs.cols() != shard.values.cols()) {
        throw std::invalid_argument(fmt::format("ring_attention_backward: rank {} needs its forward result and dO "
                                                "of {}×{}, got outputs {} and dO {}", shard.rank, rows,
                                                shard.values.cols(), shape(forward.outputs), shape(d_outputs)));
    }
    QuerySide side{&shard, &d_outputs, {}, {}, {}, Matrix(rows, shard.queries.cols(), 0.0)};
    const Matrix& last = forward.states.back();  // [μ, ℓ, Õ] of each query after every block
    for (std::size_t i = 0; i < rows; ++i) {
        side.max.push_back(last(i, 0));
        side.sum.push_back(last(i, 1));
        side.delta.push_back(dot_rows(d_outputs, i, forward.outputs, i));
    }
    return side;
}

// The block a rank holds in the backward pass: its keys and values, and their gradients so far.
struct KeySide {
    std::vector<std::size_t> rows;
    Matrix keys;
    Matrix values;
    Matrix d_keys;
    Matrix d_values;
};

//> ring-backward-block
// The backward kernel: the pairs the mask lets through, as absorb_visible(); returns the q·k it computed.
std::uint64_t backward_visible(QuerySide& mine, KeySide& block, bool causal)
{
    const Shard& shard = *mine.shard;
    const BlockVisibility kind = block_visibility(shard.rows, block.rows, causal);
    const double divisor = std::sqrt(static_cast<double>(shard.queries.cols()));
    std::uint64_t dots = 0;
    for (std::size_t i = 0; i < shard.rows.size() && kind != BlockVisibility::hidden; ++i) {
        const std::size_t seen = mine.sum[i] == 0.0 ? 0 : keys_seen(kind, block.rows, shard.rows[i]);
        for (std::size_t j = 0; j < seen; ++j) {
            const double score = dot_rows(shard.queries, i, block.keys, j) / divisor;
            ++dots;
            const double weight = shifted_exp(score, mine.max[i]) / mine.sum[i];  // P_ij, as the forward had it
            const double d_score = weight * (dot_rows(*mine.d_outputs, i, block.values, j) - mine.delta[i]) / divisor;
            for (std::size_t d = 0; d < block.values.cols(); ++d) {
                block.d_values(j, d) += weight * (*mine.d_outputs)(i, d);
            }
            for (std::size_t d = 0; d < block.keys.cols(); ++d) {
                mine.d_queries(i, d) += d_score * block.keys(j, d);
                block.d_keys(j, d) += d_score * shard.queries(i, d);
            }
        }
    }
    return dots;
}
//< ring-backward-block

// One rank's side of the backward ring: the block held (K then V), its gradients (dK then dV), and what arrives.
struct BackRing {
    std::vector<double> held;
    std::vector<double> incoming;
    std::vector<double> grads;
    std::vector<double> incoming_grads;
};

// Rank g's work at one step of the backward pass: the block of `owner`, its gradients updated in the message.
void backward_step(QuerySide& mine, const RingSetup& setup, std::size_t owner, BackRing& ring, RankResult& result)
{
    const std::size_t key_dim = mine.shard->keys.cols();
    const std::size_t value_dim = mine.shard->values.cols();
    KeySide block{layout_rows(setup.layout, setup.tokens, setup.ranks, owner), {}, {}, {}, {}};
    std::size_t at = 0;
    block.keys = read_matrix(ring.held, at, block.rows.size(), key_dim);
    block.values = read_matrix(ring.held, at, block.rows.size(), value_dim);
    at = 0;
    block.d_keys = read_matrix(ring.grads, at, block.rows.size(), key_dim);
    block.d_values = read_matrix(ring.grads, at, block.rows.size(), value_dim);
    const std::uint64_t dots = backward_visible(mine, block, setup.causal);
    result.skipped += block_visibility(mine.shard->rows, block.rows, setup.causal) == BlockVisibility::hidden ? 1 : 0;
    result.pairs += dots;
    result.step_pairs.push_back(dots);
    ring.grads.clear();
    append_columns(ring.grads, block.d_keys, 0, key_dim);
    append_columns(ring.grads, block.d_values, 0, value_dim);
}

}  // namespace

//> ring-backward
std::vector<RankResult> ring_attention_backward(Communicator& communicator, const RingSetup& setup,
                                                const std::vector<Shard>& shards, const std::vector<RankResult>& forward,
                                                const std::vector<Matrix>& d_outputs)
{
    //{ checks its arguments
    check_shards(setup, shards);
    if (forward.size() != shards.size() || d_outputs.size() != shards.size()) {
        throw std::invalid_argument(fmt::format("ring_attention_backward: {} shards need as many forward results "
                                                "and dO, got {} and {}", shards.size(), forward.size(),
                                                d_outputs.size()));
    }
    //}
    const std::size_t ranks = setup.ranks;
    std::vector<QuerySide> mine;
    std::vector<BackRing> rings(shards.size());
    std::vector<RankResult> results(shards.size());
    for (std::size_t i = 0; i < shards.size(); ++i) {
        mine.push_back(query_side(shards[i], forward[i], d_outputs[i]));
        append_columns(rings[i].held, shards[i].keys, 0, shards[i].keys.cols());  // step 0: its own block ...
        append_columns(rings[i].held, shards[i].values, 0, shards[i].values.cols());
        rings[i].grads.assign(rings[i].held.size(), 0.0);  // ... with no gradient yet
        results[i].rank = shards[i].rank;
        results[i].rows = shards[i].rows;
    }
    for (std::size_t step = 0; step < ranks; ++step) {
        for (std::size_t i = 0; i < shards.size(); ++i) {  // K and V on ahead, while the gradients are computed
            const std::size_t width = shards[i].keys.cols() + shards[i].values.cols();
            results[i].step_bytes.push_back(ranks == 1 ? 0 : message_bytes(rings[i].grads));
            if (step + 1 < ranks) {
                results[i].step_bytes.back() += message_bytes(rings[i].held);
                pass_block_on(communicator, setup, shards[i].rank, step + 1, width, rings[i].held, rings[i].incoming,
                              results[i]);
            }
            backward_step(mine[i], setup, ring_block_owner(shards[i].rank, step, ranks), rings[i], results[i]);
            if (ranks > 1) {  // then dK and dV after them; after the last step, home to the block's own rank
                pass_block_on(communicator, setup, shards[i].rank, step + 1, width, rings[i].grads,
                              rings[i].incoming_grads, results[i]);
            }
        }
        if (ranks > 1) {
            communicator.wait();
            for (BackRing& ring : rings) {
                std::swap(ring.grads, ring.incoming_grads);
                if (step + 1 < ranks) {
                    std::swap(ring.held, ring.incoming);
                }
            }
        }
    }
    for (std::size_t i = 0; i < shards.size(); ++i) {
        std::size_t at = 0;
        const Matrix d_keys = read_matrix(rings[i].grads, at, shards[i].rows.size(), shards[i].keys.cols());
        const Matrix d_values = read_matrix(rings[i].grads, at, shards[i].rows.size(), shards[i].values.cols());
        results[i].outputs = concat_heads({mine[i].d_queries, d_keys, d_values});
    }
    return results;
}
//< ring-backward

namespace {

// The widths of Ulysses' head shards: each rank takes h/G heads, g·d_k/h columns of Q and K, g·d_v/h of V.
struct HeadShare {
    std::size_t heads_per_rank;
    std::size_t key_width;
    std::size_t value_width;
};

HeadShare head_share(const RingSetup& setup, std::size_t heads, const std::vector<Shard>& shards)
{
    if (shards.empty()) {  // a process that runs no rank: it takes part in the all-to-alls with nothing
        return {0, 0, 0};
    }
    const std::size_t key_dim = shards.front().queries.cols();
    const std::size_t value_dim = shards.front().values.cols();
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

// One all-to-all of Ulysses, with each rank's bytes sent and received (its message to itself stays).
void exchange_all(Communicator& communicator, const AllToAll& outgoing, AllToAll& incoming,
                  std::vector<RankResult>& results)
{
    communicator.all_to_all(outgoing, incoming);
    for (RankResult& result : results) {
        for (std::size_t other = 0; other < outgoing.size(); ++other) {
            if (other != result.rank) {
                result.bytes_sent += message_bytes(outgoing[result.rank][other]);
                result.bytes_received += message_bytes(incoming[result.rank][other]);
            }
        }
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
    const HeadShare share = head_share(setup, heads, shards);
    const std::size_t ranks = setup.ranks;
    std::vector<std::vector<std::size_t>> rows;
    for (std::size_t rank = 0; rank < ranks; ++rank) {
        rows.push_back(layout_rows(setup.layout, setup.tokens, ranks, rank));
    }
    std::vector<RankResult> results(shards.size());
    // All-to-all 1: rank g sends rank t the columns of t's heads of its rows of Q, K and V.
    AllToAll outgoing(ranks, std::vector<std::vector<double>>(ranks));  // [from][to]
    AllToAll incoming = outgoing;                                        // [to][from]
    for (std::size_t i = 0; i < shards.size(); ++i) {
        const std::size_t rank = shards[i].rank;
        results[i].rank = rank;
        results[i].rows = shards[i].rows;
        for (std::size_t other = 0; other < ranks; ++other) {
            outgoing[rank][other] = head_columns(shards[i], share, other);
            incoming[rank][other].assign(rows[other].size() * (2 * share.key_width + share.value_width), 0.0);
        }
    }
    exchange_all(communicator, outgoing, incoming, results);
    // Each rank: attention on its h/G heads over the whole sequence.
    std::vector<Matrix> head_outputs;
    for (std::size_t i = 0; i < shards.size(); ++i) {
        head_outputs.push_back(heads_attention(setup, share, incoming[shards[i].rank], results[i].pairs));
    }
    // All-to-all 2: rank t sends rank s the rows of s of its heads' outputs.
    for (std::size_t i = 0; i < shards.size(); ++i) {
        const std::size_t rank = shards[i].rank;
        for (std::size_t other = 0; other < ranks; ++other) {
            outgoing[rank][other] = rows_of(head_outputs[i], rows[other]);
            incoming[rank][other].assign(shards[i].rows.size() * share.value_width, 0.0);
        }
    }
    exchange_all(communicator, outgoing, incoming, results);
    for (std::size_t i = 0; i < shards.size(); ++i) {
        results[i].outputs = join_heads(incoming[shards[i].rank], shards[i].rows.size(), share.value_width);
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

// A result as numbers: its counts, d_v, the number of states and of steps, then each step's dot products and
// bytes, the outputs and the states.
std::vector<double> pack_result(const RankResult& result)
{
    std::vector<double> message{static_cast<double>(result.bytes_sent), static_cast<double>(result.bytes_received),
                                static_cast<double>(result.pairs), static_cast<double>(result.skipped),
                                static_cast<double>(result.outputs.cols()), static_cast<double>(result.states.size()),
                                static_cast<double>(result.step_pairs.size())};
    for (const auto* counts : {&result.step_pairs, &result.step_bytes}) {
        for (std::size_t step = 0; step < result.step_pairs.size(); ++step) {
            message.push_back(step < counts->size() ? static_cast<double>((*counts)[step]) : 0.0);
        }
    }
    append_columns(message, result.outputs, 0, result.outputs.cols());
    for (const Matrix& state : result.states) {
        append_columns(message, state, 0, state.cols());
    }
    return message;
}

RankResult unpack_result(const std::vector<double>& message, std::size_t rank, std::vector<std::size_t> rows)
{
    std::size_t at = 0;
    const Matrix header = read_matrix(message, at, 1, 7);
    RankResult result;
    result.rank = rank;
    result.rows = std::move(rows);
    result.bytes_sent = static_cast<std::uint64_t>(header(0, 0));
    result.bytes_received = static_cast<std::uint64_t>(header(0, 1));
    result.pairs = static_cast<std::uint64_t>(header(0, 2));
    result.skipped = static_cast<std::uint64_t>(header(0, 3));
    const auto steps = static_cast<std::size_t>(header(0, 6));
    const Matrix counts = read_matrix(message, at, 2, steps);  // the dot products, then the bytes, of each step
    for (std::size_t step = 0; step < steps; ++step) {
        result.step_pairs.push_back(static_cast<std::uint64_t>(counts(0, step)));
        result.step_bytes.push_back(static_cast<std::uint64_t>(counts(1, step)));
    }
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
