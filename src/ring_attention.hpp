/// \file ring_attention.hpp
/// \brief Attention across machines: the sequence split between G ranks, each holding
///        the rows of Q, K and V of its own tokens; ring attention, which passes the
///        blocks of K and V around a ring and merges chapter 13's partial states, and
///        DeepSpeed-Ulysses, which trades sequence shards for head shards.
///
/// The maths knows nothing of a network. Every message goes through a Communicator,
/// a small interface of three calls (start a send, start a receive, wait for both) and one
/// collective for Ulysses (an all-to-all, which by default is made of the other three).
/// The chapter's program implements it with Open MPI, one process per rank (or several
/// ranks per process); LocalCommunicator implements it inside one process, for the
/// tests and the playground. The same ring code runs over either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "matrix.hpp"
#include "ring_layout.hpp"
#include "tiled.hpp"

namespace sa {

/// \brief The pairs of a block of queries and keys that take part: every pair, or
///        under the causal mask those with key row \f$ j \le i \f$, the query's row.
///
/// These are the score evaluations a rank must make for the block; a block with none
/// is skipped by the ring, never absorbed.
///
/// \param query_rows the token rows of the queries
/// \param key_rows the token rows of the keys
/// \param causal whether the causal mask applies
/// \return the number of (query, key) pairs that are not masked out
[[nodiscard]] std::uint64_t visible_pairs(const std::vector<std::size_t>& query_rows,
                                          const std::vector<std::size_t>& key_rows, bool causal);

/// \brief How the causal mask meets one block of queries and keys (rows ascending on both sides).
///
/// - visible: every key row is at or before every query row (or there is no mask): the
///   kernel computes every entry and never looks at a mask;
/// - hidden: every key row comes after every query row: the kernel skips the block;
/// - diagonal: some of each: query row i computes only the keys at or before it, a prefix
///   of the block's keys, since they are ascending.
enum class BlockVisibility {
    visible,   ///< every pair takes part
    hidden,    ///< no pair takes part
    diagonal,  ///< a prefix of the keys for each query
};

/// \brief Which of the three cases a block is: visible when \f$ \max K \le \min Q \f$ or
///        there is no mask, hidden when \f$ \min K > \max Q \f$, diagonal otherwise.
/// \param query_rows the token rows of the queries, ascending, not empty
/// \param key_rows the token rows of the keys, ascending, not empty
/// \param causal whether the causal mask applies
/// \return the case
[[nodiscard]] BlockVisibility block_visibility(const std::vector<std::size_t>& query_rows,
                                               const std::vector<std::size_t>& key_rows, bool causal);

/// \brief The ring's kernel: chapter 13's absorb_block() on the pairs the mask lets through, and
///        only on those. Returns the dot products \f$ q_i \cdot k_j \f$ it computed.
///
/// For each query row i (token row \f$ r_i \f$) it takes the keys \f$ j < m_i \f$, where
/// \f$ m_i \f$ is the number of key rows at or before \f$ r_i \f$ (all of them in a visible
/// block, none in a hidden one), computes \f$ s_{ij} = q_i \cdot k_j / \sqrt{d_k} \f$ and updates
/// \f$ \mu_i, \ell_i, \tilde O_i \f$ as absorb_block() does. A hidden block costs nothing; a
/// diagonal block costs \f$ \sum_i m_i \f$ dot products, not \f$ |Q| \cdot |K| \f$. The masked
/// pairs that absorb_block() would score as \f$ -\infty \f$ add exact zeros there, so the state
/// is bit for bit the one absorb_block() gives with block_mask() (a NaN in a hidden value, which
/// absorb_block() multiplies by 0, is never read here).
///
/// Shapes: the state and Q have |query_rows| rows, K and V |key_rows| rows, Q and K d_k columns.
///
/// \param state the state of the queries, updated in place
/// \param queries Q, one row per query row
/// \param query_rows their token rows, ascending
/// \param keys K of the block
/// \param values V of the block
/// \param key_rows their token rows, ascending
/// \param causal whether the causal mask applies
/// \return the dot products computed: visible_pairs() of the two row sets
/// \throws ShapeError if the shapes do not fit together
std::uint64_t absorb_visible(PartialAttention& state, const Matrix& queries, const std::vector<std::size_t>& query_rows,
                             const Matrix& keys, const Matrix& values, const std::vector<std::size_t>& key_rows,
                             bool causal);

/// \brief The score evaluations of each rank over the whole ring: the sum of
///        visible_pairs() of its queries with every rank's keys.
///
/// Without the mask each rank makes \f$ |R_g| \cdot n \f$. Under the causal mask,
/// contiguous shards give rank G−1 about 2G−1 times the work of rank 0; striped and
/// zig-zag shards spread it evenly. A formula for the count that ring_attention()'s kernel
/// (absorb_visible()) reads from its own counter, RankResult::pairs; the tests compare the two.
///
/// \param layout the layout
/// \param tokens n, at least G
/// \param ranks G
/// \param causal whether the causal mask applies
/// \return the count for each rank, rank 0 first
/// \throws std::invalid_argument as layout_rows()
[[nodiscard]] std::vector<std::uint64_t> ring_work(Layout layout, std::size_t tokens, std::size_t ranks,
                                                   bool causal);

/// \brief The bytes rank g sends around the ring: the blocks it holds at steps 0 to G−2,
///        each \f$ |R_b| (d_k + d_v) \f$ doubles of 8 bytes.
///
/// It receives as many bytes as rank g−1 sends. When G divides n this is
/// ring_bytes_formula() for every rank.
///
/// \param layout the layout
/// \param tokens n
/// \param ranks G
/// \param rank g
/// \param key_dim d_k
/// \param value_dim d_v
/// \return the bytes sent
[[nodiscard]] std::uint64_t ring_bytes_sent(Layout layout, std::size_t tokens, std::size_t ranks, std::size_t rank,
                                            std::size_t key_dim, std::size_t value_dim);

/// \brief The ring's bytes per rank when G divides n and \f$ d_k = d_v = d \f$:
///        \f$ 2 (G-1) \frac{n}{G} d \cdot 8 \f$.
///
/// G−1 passes of a block of n/G keys and n/G values, d doubles each.
///
/// \param tokens n
/// \param ranks G, at least 1
/// \param dim d
/// \return the bytes, as a real number (a fraction when G does not divide n)
[[nodiscard]] double ring_bytes_formula(std::size_t tokens, std::size_t ranks, std::size_t dim);

/// \brief DeepSpeed-Ulysses' bytes sent per rank when G divides n and \f$ d_k = d_v = d \f$:
///        \f$ 4 \frac{n}{G} d \cdot \frac{G-1}{G} \cdot 8 \f$.
///
/// Each rank puts its n/G rows of Q, K and V (before attention) and of the output
/// (after) through an all-to-all: \f$ 4 n d / G \f$ numbers, the figure of Jacobs et
/// al. (2023), of which the 1/G for its own heads stay on the rank.
///
/// \param tokens n
/// \param ranks G, at least 1
/// \param dim d
/// \return the bytes sent, as a real number
[[nodiscard]] double ulysses_bytes_formula(std::size_t tokens, std::size_t ranks, std::size_t dim);

/// \brief The numbers one rank of the ring keeps for its b tokens of one head in training:
///        \f$ b (4 d_k + 4 d_v + 3) \f$.
///
/// Its queries, \f$ b d_k \f$; its state, \f$ b (d_v + 2) \f$ (\f$ \tilde O \f$,
/// \f$ \mu \f$ and \f$ \ell \f$ per query, the width of state_table()); the block of
/// keys and values it holds and the one arriving, chapter 13's cached_step_reads() of b
/// tokens each; its own keys and values, \f$ b (d_k + d_v) \f$, which training keeps for the
/// backward pass after the block has left; and one row of a block's scores, b numbers, all
/// absorb_block() keeps of them. The mask is taken as computed from the token rows, not
/// stored. A model of attention's own memory in one layer, not of a whole model.
///
/// \param tokens_per_rank b
/// \param key_dim d_k
/// \param value_dim d_v
/// \return the count above
[[nodiscard]] std::uint64_t ring_rank_numbers(std::uint64_t tokens_per_rank, std::uint64_t key_dim,
                                              std::uint64_t value_dim);

/// \brief The longest sequence a ring of G devices of D bytes each holds, in doubles of 8 bytes:
///        \f$ G \lfloor D / (8\, \mathrm{held}(1)) \rfloor \f$, with held() = ring_rank_numbers().
///
/// A rank's numbers grow linearly in b, so the largest b that fits is
/// \f$ b_{\max} = \lfloor D / 8\, \mathrm{held}(1) \rfloor \f$;
/// the rank with the most tokens holds \f$ \lceil n / G \rceil \f$, which fits exactly when
/// \f$ n \le G b_{\max} \f$: G times the longest sequence of one device (G = 1).
///
/// \param device_bytes D
/// \param ranks G
/// \param key_dim d_k
/// \param value_dim d_v
/// \return the longest n (0 when not even one token fits)
[[nodiscard]] std::uint64_t ring_longest_sequence(std::uint64_t device_bytes, std::uint64_t ranks,
                                                  std::uint64_t key_dim, std::uint64_t value_dim);

/// \brief The numbers one all-to-all of Ulysses carries across a bisection of the G ranks, each way:
///        \f$ \lfloor G/2 \rfloor \lceil G/2 \rceil \cdot 4 \frac{n}{G} \frac{d}{G} \f$, which is
///        \f$ n d \f$ when G is even.
///
/// Split the ranks into two halves; every rank of one half sends every rank of the other its
/// \f$ n/G \f$ rows of the \f$ d/G \f$ columns of that rank's heads, for Q, K, V and the
/// output: \f$ 4 (n/G)(d/G) \f$ numbers a pair, over both exchanges. The count does not fall as G
/// grows; only a fabric whose bisection grows with G carries it in less time.
///
/// \param tokens n
/// \param ranks G, at least 1
/// \param dim d = d_k = d_v
/// \return the numbers, as a real number
[[nodiscard]] double ulysses_bisection_numbers(std::size_t tokens, std::size_t ranks, std::size_t dim);

/// \brief Messages between every pair of G ranks, indexed by rank: in
///        Communicator::all_to_all(), outgoing[g][t] goes from rank g to rank t and
///        incoming[t][g] is what rank t receives from rank g.
using AllToAll = std::vector<std::vector<std::vector<double>>>;

/// \brief The calls the ring and Ulysses make between ranks; an implementation
///        carries the messages (Open MPI in the chapter's program, LocalCommunicator here).
///
/// A message is a vector of doubles from one rank to another. send() and receive() only
/// start a transfer, as MPI_Isend and MPI_Irecv do, so a rank can compute while its
/// messages travel; wait() finishes every transfer started. Between two ranks, messages
/// arrive in the order they were sent. all_to_all() is the one collective call: every
/// rank sends one message to every rank, as MPI_Alltoall does.
class Communicator {
public:
    virtual ~Communicator() = default;

    /// \brief Whether this process runs rank g (one process may run several ranks).
    /// \param rank g
    /// \return true if rank g's work happens here
    [[nodiscard]] virtual bool runs(std::size_t rank) const = 0;

    /// \brief Starts sending a message; \p message must stay unchanged until wait().
    /// \param from the sending rank, run here
    /// \param to the receiving rank
    /// \param message the numbers
    virtual void send(std::size_t from, std::size_t to, const std::vector<double>& message) = 0;

    /// \brief Starts receiving a message of exactly into.size() numbers into \p into.
    /// \param from the sending rank
    /// \param to the receiving rank, run here
    /// \param into where the numbers go; it must stay alive until wait()
    virtual void receive(std::size_t from, std::size_t to, std::vector<double>& into) = 0;

    /// \brief Finishes every send and receive started since the last wait().
    /// \throws std::runtime_error if a message is missing or its length is not the one expected
    virtual void wait() = 0;

    /// \brief An all-to-all: every rank run here sends one message to every rank (itself
    ///        included) and receives one from every rank, in one exchange.
    ///
    /// Both tables are G×G. For every rank g this process runs, outgoing[g][t] is its
    /// message to rank t, and incoming[g][s] must already have the length of the message
    /// rank s sends it, and receives it; the other rows are not read or written. Every
    /// process calls it, one that runs no rank too, since over MPI it is a collective.
    /// This version posts a send() and a receive() for every pair of different ranks and
    /// waits, and copies the message a rank sends itself; the chapter's program makes it
    /// one MPI_Alltoall.
    ///
    /// \param outgoing the messages of the ranks run here, [from][to]
    /// \param incoming where their messages go, [to][from], each of the length expected
    /// \throws std::runtime_error as wait(), or if a message to itself is not of the length expected
    virtual void all_to_all(const AllToAll& outgoing, AllToAll& incoming);

    Communicator() = default;                                ///< an implementation starts with nothing in flight
    Communicator(const Communicator&) = delete;              ///< transfers in flight cannot be copied
    Communicator& operator=(const Communicator&) = delete;   ///< nor assigned
};

/// \brief The in-process stand-in for the network: every rank runs in this process and a
///        message is a copy kept until the receiver's wait().
///
/// It simulates the ranks; it does not run them at the same time. The tests and the
/// playground use it, and the chapter's program uses Open MPI instead.
class LocalCommunicator : public Communicator {
public:
    /// \brief Runs every rank here.
    /// \param rank the rank asked about
    /// \return true
    [[nodiscard]] bool runs(std::size_t rank) const override;
    /// \brief Keeps a copy of the message for its receiver.
    /// \param from the sending rank
    /// \param to the receiving rank
    /// \param message the numbers
    void send(std::size_t from, std::size_t to, const std::vector<double>& message) override;
    /// \brief Notes where the next message from \p from to \p to goes.
    /// \param from the sending rank
    /// \param to the receiving rank
    /// \param into where the numbers go
    void receive(std::size_t from, std::size_t to, std::vector<double>& into) override;
    /// \brief Delivers every noted receive from the kept copies, in the order sent.
    /// \throws std::runtime_error if a receive has no message or one of another length
    void wait() override;

private:
    struct Pending {
        std::size_t from;
        std::size_t to;
        std::vector<double>* into;
    };
    std::map<std::pair<std::size_t, std::size_t>, std::vector<std::vector<double>>> mailboxes_;
    std::vector<Pending> pending_;
};

/// \brief What one rank holds before attention: its token rows and those rows of Q, K and V.
struct Shard {
    std::size_t rank = 0;                ///< g
    std::vector<std::size_t> rows = {};  ///< the token rows, ascending (layout_rows())
    Matrix queries = {};                 ///< |R_g|×d_k, the rows of Q
    Matrix keys = {};                    ///< |R_g|×d_k, the rows of K
    Matrix values = {};                  ///< |R_g|×d_v, the rows of V
};

/// \brief Rank g's rows of any n-row matrix under a layout (of dO, say), in ascending token order.
/// \param matrix n rows
/// \param layout the layout
/// \param ranks G
/// \param rank g
/// \return |R_g| rows, row i the matrix's row layout_rows()[i]
/// \throws std::invalid_argument as layout_rows()
[[nodiscard]] Matrix shard_rows(const Matrix& matrix, Layout layout, std::size_t ranks, std::size_t rank);

/// \brief Rank g's shard: its rows of Q, K and V under a layout.
///
/// In a real deployment each rank computes these rows itself from its own tokens; the
/// book's programs and tests compute Q, K and V once and hand each rank its rows.
///
/// \param layout the layout
/// \param ranks G
/// \param rank g
/// \param queries Q, n×d_k
/// \param keys K, n×d_k
/// \param values V, n×d_v
/// \return the shard
/// \throws std::invalid_argument as layout_rows()
/// \throws ShapeError if Q, K and V do not have n rows each, or Q and K differ in width
[[nodiscard]] Shard make_shard(Layout layout, std::size_t ranks, std::size_t rank, const Matrix& queries,
                               const Matrix& keys, const Matrix& values);

/// \brief How a ring or an all-to-all is laid out: n, G, the layout and the mask.
struct RingSetup {
    std::size_t tokens = 0;              ///< n
    std::size_t ranks = 1;               ///< G
    Layout layout = Layout::contiguous;  ///< which rows each rank holds
    bool causal = false;                 ///< whether the causal mask applies
};

/// \brief What one rank ends with: its outputs and what it did to get them.
struct RankResult {
    std::size_t rank = 0;                ///< g
    std::vector<std::size_t> rows = {};  ///< its token rows
    Matrix outputs = {};                 ///< |R_g|×d_v, the attention outputs of its queries
    std::vector<Matrix> states = {};     ///< the ring: state_table() after each step, G of them
    std::uint64_t bytes_sent = 0;        ///< bytes this rank sent
    std::uint64_t bytes_received = 0;    ///< bytes this rank received
    std::uint64_t pairs = 0;             ///< dot products \f$ q_i \cdot k_j \f$ the kernel computed (its counter)
    std::uint64_t skipped = 0;           ///< the ring: blocks the mask hid entirely, never absorbed
    std::vector<std::uint64_t> step_pairs = {};  ///< the ring: the dot products of each step, G of them
    std::vector<std::uint64_t> step_bytes = {};  ///< the ring: the bytes this rank sent at each step
};

/// \brief The additive mask of one block: 0 where key row \f$ j \le i \f$ (or everywhere
///        without the causal mask), \f$ -\infty \f$ elsewhere.
/// \param query_rows the token rows of the queries
/// \param key_rows the token rows of the keys
/// \param causal whether the causal mask applies
/// \return a |query_rows|×|key_rows| mask
[[nodiscard]] Matrix block_mask(const std::vector<std::size_t>& query_rows,
                                const std::vector<std::size_t>& key_rows, bool causal);

/// \brief Ring attention (Liu, Zaharia and Abbeel, 2023) for the ranks this process runs.
///
/// At step s = 0, …, G−1 rank g holds the keys and values of rank ring_block_owner(g, s).
/// It starts sending that block to rank g+1 and receiving the next from rank g−1, then,
/// while they travel, absorbs the block into a fresh state with chapter 13's
/// absorb_block() and merges it into its running state with merge_attention() (the
/// first block absorbed becomes the running state). A block the mask hides entirely is
/// skipped. After step G−1 it finishes its outputs with finish_attention(); no block is
/// sent after the last step. The result equals attention() on the whole sequence, and
/// bit for bit chapter 13's split-and-merge over the same blocks in the same order.
///
/// \param communicator carries the blocks between ranks
/// \param setup n, G, the layout and the mask
/// \param shards the shards of the ranks this process runs, each once
/// \return one result per shard, in the same order
/// \throws std::invalid_argument if a shard's rows are not its rank's rows under the layout
[[nodiscard]] std::vector<RankResult> ring_attention(Communicator& communicator, const RingSetup& setup,
                                                     const std::vector<Shard>& shards);

/// \brief The ring's backward pass: the gradients dQ, dK and dV of ring_attention() for the
///        ranks this process runs, given \f$ dO = \partial L / \partial O \f$ of their rows.
///
/// The keys and values go round the ring again, and the gradients of each block travel with
/// it: at step s rank g holds the block of rank \f$ o = (g - s) \bmod G \f$ with the sums
/// \f$ dK_o, dV_o \f$ so far. It starts passing K and V on, then, for the pairs the mask lets
/// through (as absorb_visible()), recomputes \f$ P_{ij} = e^{s_{ij} - \mu_i} / \ell_i \f$ from
/// the forward's \f$ \mu, \ell \f$ and adds
/// \f$ dV_j \mathrel{+}= P_{ij}\, dO_i \f$,
/// \f$ dS_{ij} = P_{ij} (dO_i \cdot v_j - D_i) \f$ with \f$ D_i = dO_i \cdot O_i \f$,
/// \f$ dQ_i \mathrel{+}= dS_{ij} k_j / \sqrt{d_k} \f$ and \f$ dK_j \mathrel{+}= dS_{ij} q_i / \sqrt{d_k} \f$
/// (chapter 11's softmax backward, \f$ \sum_j P_{ij}\, dP_{ij} = dO_i \cdot O_i \f$); then it
/// sends \f$ dK_o, dV_o \f$ on after K and V. After step G−1 the block's gradients take one more
/// step, home to its own rank. Each rank sends K and V G−1 times and dK, dV G times (none with
/// G = 1): twice the forward's bytes per step, and one block more.
///
/// \param communicator carries the blocks between ranks
/// \param setup n, G, the layout and the mask, as in the forward pass
/// \param shards the shards of the ranks this process runs
/// \param forward ring_attention()'s result for each shard, in the same order (its outputs and
///        its last state's \f$ \mu, \ell \f$)
/// \param d_outputs dO of each shard's rows, |R_g|×d_v, in the same order
/// \return one result per shard: outputs holds dQ, dK and dV side by side, |R_g|×(2d_k + d_v);
///         pairs, step_pairs, the bytes and skipped count this pass (no states)
/// \throws std::invalid_argument as ring_attention(), or if forward or d_outputs do not match the shards
[[nodiscard]] std::vector<RankResult> ring_attention_backward(Communicator& communicator, const RingSetup& setup,
                                                              const std::vector<Shard>& shards,
                                                              const std::vector<RankResult>& forward,
                                                              const std::vector<Matrix>& d_outputs);

/// \brief DeepSpeed-Ulysses (Jacobs et al., 2023): two all-to-alls around attention.
///
/// Each rank g sends to every other rank t the columns of t's h/G heads of its rows of
/// Q, K and V, so that rank t holds those heads for the whole sequence; it runs
/// chapter 7's attention() on each of its heads, then a second exchange sends each rank
/// back its rows. The result, rank g's rows of the heads side by side, equals
/// multi_head_attention() before \f$ W_O \f$, bit for bit: each head is attention() on
/// the same numbers, only moved. Each exchange is one Communicator::all_to_all() (one
/// MPI_Alltoall in the chapter's program), so every process calls this function, one that
/// runs no rank too (with no shards).
///
/// \param communicator carries the messages
/// \param setup n, G, the layout and the mask
/// \param heads h, a multiple of G; d_k and d_v must be multiples of h
/// \param shards the shards of the ranks this process runs
/// \return one result per shard, in the same order (no states; pairs counts the scores of its heads)
/// \throws std::invalid_argument if G does not divide h, or h does not divide d_k and d_v
[[nodiscard]] std::vector<RankResult> ulysses_attention(Communicator& communicator, const RingSetup& setup,
                                                        std::size_t heads, const std::vector<Shard>& shards);

/// \brief Chapter 13's split-and-merge on one process, over the blocks rank g absorbs in the ring,
///        in the ring's order: what ring_attention() must equal bit for bit.
///
/// The tokens are renumbered so that each rank's rows are consecutive (rank 0's first);
/// then each block that rank g does not skip is absorbed with absorb_block() over the whole
/// renumbered Q, K and V into a state of its own, and the states are merged left to right
/// with merge_attention(), as chapter 13's workers are.
///
/// \param setup n, G, the layout and the mask
/// \param queries Q, n×d_k, in token order
/// \param keys K, n×d_k
/// \param values V, n×d_v
/// \param rank g
/// \return rank g's outputs, |R_g|×d_v
/// \throws std::invalid_argument as layout_rows()
[[nodiscard]] Matrix split_and_merge_in_ring_order(const RingSetup& setup, const Matrix& queries, const Matrix& keys,
                                                   const Matrix& values, std::size_t rank);

/// \brief Collects every rank's result at the process that runs rank 0.
///
/// Each rank sends its counts, outputs and states to rank 0 (which knows their shapes
/// from the layout); the process running rank 0 returns all G results, rank 0 first,
/// and every other process an empty list.
///
/// \param communicator carries the messages
/// \param setup n, G and the layout
/// \param mine the results of the ranks this process runs
/// \return all G results at rank 0's process; nothing elsewhere
[[nodiscard]] std::vector<RankResult> gather_results(Communicator& communicator, const RingSetup& setup,
                                                     const std::vector<RankResult>& mine);

/// \brief The whole output matrix from every rank's rows.
/// \param results all G results
/// \param tokens n
/// \return n×d_v, row i from the rank that holds token i
[[nodiscard]] Matrix assemble_outputs(const std::vector<RankResult>& results, std::size_t tokens);

}  // namespace sa
