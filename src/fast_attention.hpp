/// \file fast_attention.hpp
/// \brief The tiled attention of tiled.hpp built for speed: the same recurrence, on
///        contiguous copies of Q, Kᵀ and V, with register-blocked block products, a
///        vectorised exponential and the query blocks shared between the cores.
///
/// Its results are checked against attention() to a relative 1e-12; they are never
/// printed, because they may differ in the last bits from machine to machine (the
/// translation unit is optimised for the CPU that builds it and may fuse a·b + c).
#pragma once

#include "matrix.hpp"
#include "tiled.hpp"

namespace sa {

/// \brief The fast kernel's exponential, \f$ e^x \f$ for \f$ x \le 0 \f$, one number at a time.
///
/// The kernel computes it eight numbers at a time, as \f$ 2^k e^r \f$ with
/// \f$ k = \mathrm{round}(x / \ln 2) \f$ and \f$ |r| \le \ln(2)/2 \f$: \f$ e^r \f$ from its
/// Taylor series to \f$ r^{13}/13! \f$ and \f$ 2^k \f$ written into the exponent bits. This
/// is the same code on one number, so that the tests can hold it against std::exp.
///
/// Edges: \f$ e^0 = 1 \f$ exactly; results below the smallest normal double
/// (\f$ x < -708.4 \f$) are subnormal, as std::exp gives them; below about \f$ -745.1 \f$,
/// and for \f$ -\infty \f$, the result is 0.
///
/// \param x the exponent, at most 0 (the kernel's \f$ s - \mu \f$)
/// \return \f$ e^x \f$, within a few units in the last place of std::exp
[[nodiscard]] double fast_exp(double x);

/// \brief Where the fast kernel's shorter exponential starts: \f$ e^x \f$ is a normal double
/// for every \f$ x \ge -708 \f$ (the smallest normal double is about \f$ e^{-708.4} \f$).
inline constexpr double fast_exp_normal_floor = -708.0;

/// \brief The fast kernel's shorter exponential, for \f$ -708 \le x \le 0 \f$ only.
///
/// A row of weights whose every exponent lies in that range (no hidden key, no NaN, no
/// score more than 708 below the row's running maximum) needs neither the clamp nor the two factors of
/// \f$ 2^k \f$ that fast_exp() uses for subnormal results: \f$ k \f$ is added to the
/// exponent bits of \f$ e^r \f$ in one step. It gives the same bits as fast_exp() there,
/// since multiplying a normal number by a power of 2 that keeps it normal is exact.
///
/// \param x the exponent, from fast_exp_normal_floor to 0
/// \return \f$ e^x \f$, the bits of fast_exp(x)
/// \throws std::invalid_argument if x is outside [fast_exp_normal_floor, 0] or NaN
[[nodiscard]] double fast_exp_normal_range(double x);

/// \brief Which keys each query may use, without an n×m mask in memory.
enum class Masking {
    none,   ///< every query uses every key
    causal  ///< query i uses keys 0..i, as causal_mask() (aligned at the top left when n ≠ m)
};

/// \brief Attention in O(n·d) memory, fast: the FlashAttention-2 forward pass on the CPU.
///
/// For each block of \f$ B_r \f$ query rows (the blocks are shared between the cores)
/// and each block of \f$ B_c \f$ keys: \f$ S = Q_r K_c^\top / \sqrt{d_k} \f$ (a
/// \f$ B_r \times B_c \f$ block), then the recurrence of absorb_block(), then
/// \f$ \tilde O_r \mathrel{+}= \tilde A V_c \f$, where \f$ \tilde A \f$ holds the block's
/// unnormalised weights. Under the causal mask, key blocks that lie entirely after the
/// query block are skipped: they hold only \f$ -\infty \f$.
///
/// The default blocks, 32 queries by 512 keys, were the fastest of those tried on an
/// x86 processor with 512-bit registers (at n = 4096 and 8192, d = 64): narrower than the
/// tiled loop's 64 × 64, so that the rows' softmax passes and the product with V run long
/// between their fixed costs; small enough that a core's scores stay in its L2 cache.
///
/// Memory besides the output: contiguous copies of Q, Kᵀ and V, (n + m)·d_k + m·d_v
/// numbers, and per core one block of scores and one block of outputs,
/// \f$ B_r (B_c + d_v + 2) \f$ numbers; never n×m.
///
/// Edges: the same results as attention() up to rounding. Inputs with a NaN or an
/// infinity go to tiled_attention(), which follows the edge rules of attention() step
/// by step (a causal mask is then built in full).
///
/// Shapes: Q is n×d_k, K is m×d_k, V is m×d_v; the result is n×d_v.
///
/// \param queries Q
/// \param keys K
/// \param values V
/// \param masking none or causal
/// \param tiles the block sizes B_r and B_c
/// \return the outputs, n×d_v
/// \throws ShapeError if the shapes do not fit together
/// \throws std::invalid_argument if a block size is 0
[[nodiscard]] Matrix fast_attention(const Matrix& queries, const Matrix& keys, const Matrix& values,
                                    Masking masking = Masking::none, const TileSizes& tiles = {32, 512});

/// \brief fast_attention() with any additive n×m mask (0 takes part, \f$ -\infty \f$ masked out).
///
/// The mask itself takes n×m numbers; use the other overload where the mask is causal or absent.
///
/// \param queries Q, n×d_k
/// \param keys K, m×d_k
/// \param values V, m×d_v
/// \param mask M, n×m
/// \param tiles the block sizes
/// \return the outputs, n×d_v
/// \throws ShapeError if the shapes do not fit together
/// \throws std::invalid_argument if a block size is 0 or a mask entry is neither 0 nor \f$ -\infty \f$
[[nodiscard]] Matrix fast_attention(const Matrix& queries, const Matrix& keys, const Matrix& values,
                                    const Matrix& mask, const TileSizes& tiles = {32, 512});

/// \brief decode_step() built for speed: the same step, with the cache split between the
///        cores (split-KV) and the slices' states merged as merge_attention() does.
///
/// Each core walks its slice of the cache 16 keys at a time: the scores, the online
/// softmax with the fast exponential, and the weighted values. The step reads every
/// cached number once, so its speed is bounded by how fast the machine streams memory.
///
/// Edges: a query, key or value with a NaN or an infinity goes to decode_step(). The
/// cached keys and values are not scanned (that would read the cache twice); they must be
/// finite, as the ones this function and decode_step() append from finite rows are.
///
/// \param cache the cache, appended to
/// \param query q_t, 1×d_k
/// \param key k_t, 1×d_k
/// \param value v_t, 1×d_v
/// \return o_t, 1×d_v, the same as decode_step() up to rounding
/// \throws ShapeError if a shape does not fit the cache or is not one row
[[nodiscard]] Matrix fast_decode_step(KvCache& cache, const Matrix& query, const Matrix& key, const Matrix& value);

}  // namespace sa
