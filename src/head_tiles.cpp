#include "head_tiles.hpp"

#include "dense.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#endif

namespace sa {

namespace {

using Lanes = double __attribute__((vector_size(64)));  // eight doubles: one 512-bit register
using Lanes4 = double __attribute__((vector_size(32)));  // four doubles: one 256-bit register
using Lanes2 = double __attribute__((vector_size(16)));  // two doubles: one 128-bit register
constexpr std::size_t lanes = 8;
// The doubles in one vector. A tile's sums are vectors of the processor's own registers: vectors
// of eight doubles where the registers hold four would take two registers each, more than there
// are, and the sums would live in memory.
template <class Vec>
constexpr std::size_t width = sizeof(Vec) / sizeof(double);

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BOOK_WIDE_EXP 1
// The exponential of eight numbers at once, with the bits of std::exp. On a processor with AVX2
// and fused multiply-adds (every one with AVX-512 has both) the GNU C library's exp is its version
// for those processors:
// e^x = 2^(k/128) · e^r: k = round(x · 128/ln 2), r = x − k·ln 2/128 (in two parts), e^r − 1
// by a polynomial of degree 5, and 2^(k/128) from a table of 128 entries, each a double and
// the small correction that makes it exact to about 2^−106. The steps below are its steps,
// every multiply-add fused where its own are, so each result has its bits, lane by lane; only
// eight advance at once. The library handles |x| < 2^−54 as 1 + x, done here too, and takes
// a slower path for |x| ≥ 512, infinities and NaN: those lanes call std::exp itself.
namespace glibc_exp {
constexpr double inverse_ln2_n = 0x1.71547652b82fep+7;  // 128/ln 2
constexpr double minus_ln2_high_n = -0x1.62e42fefa0000p-8;  // −ln 2/128, its leading bits
constexpr double minus_ln2_low_n = -0x1.cf79abc9e3b3ap-47;  // and the rest
constexpr double c2 = 0x1.ffffffffffdbdp-2;  // e^r − 1 ≈ r + c2 r² + c3 r³ + c4 r⁴ + c5 r⁵
constexpr double c3 = 0x1.555555555543cp-3;
constexpr double c4 = 0x1.55555cf172b91p-5;
constexpr double c5 = 0x1.1111167a4d017p-7;
constexpr double shift = 0x1.8p52;  // adding it rounds to an integer, left in the low bits
// Entry 2i: the correction t_i; entry 2i + 1: the bits of h_i, less i·2^45 (i/128 in the exponent
// field), where 2^(i/128) = h_i (1 + t_i).
alignas(64) constexpr std::uint64_t table[256] = {
    0x0000000000000000, 0x3ff0000000000000, 0x3c9b3b4f1a88bf6e, 0x3feff63da9fb3335,
    0xbc7160139cd8dc5d, 0x3fefec9a3e778061, 0xbc905e7a108766d1, 0x3fefe315e86e7f85,
    0x3c8cd2523567f613, 0x3fefd9b0d3158574, 0xbc8bce8023f98efa, 0x3fefd06b29ddf6de,
    0x3c60f74e61e6c861, 0x3fefc74518759bc8, 0x3c90a3e45b33d399, 0x3fefbe3ecac6f383,
    0x3c979aa65d837b6d, 0x3fefb5586cf9890f, 0x3c8eb51a92fdeffc, 0x3fefac922b7247f7,
    0x3c3ebe3d702f9cd1, 0x3fefa3ec32d3d1a2, 0xbc6a033489906e0b, 0x3fef9b66affed31b,
    0xbc9556522a2fbd0e, 0x3fef9301d0125b51, 0xbc5080ef8c4eea55, 0x3fef8abdc06c31cc,
    0xbc91c923b9d5f416, 0x3fef829aaea92de0, 0x3c80d3e3e95c55af, 0x3fef7a98c8a58e51,
    0xbc801b15eaa59348, 0x3fef72b83c7d517b, 0xbc8f1ff055de323d, 0x3fef6af9388c8dea,
    0x3c8b898c3f1353bf, 0x3fef635beb6fcb75, 0xbc96d99c7611eb26, 0x3fef5be084045cd4,
    0x3c9aecf73e3a2f60, 0x3fef54873168b9aa, 0xbc8fe782cb86389d, 0x3fef4d5022fcd91d,
    0x3c8a6f4144a6c38d, 0x3fef463b88628cd6, 0x3c807a05b0e4047d, 0x3fef3f49917ddc96,
    0x3c968efde3a8a894, 0x3fef387a6e756238, 0x3c875e18f274487d, 0x3fef31ce4fb2a63f,
    0x3c80472b981fe7f2, 0x3fef2b4565e27cdd, 0xbc96b87b3f71085e, 0x3fef24dfe1f56381,
    0x3c82f7e16d09ab31, 0x3fef1e9df51fdee1, 0xbc3d219b1a6fbffa, 0x3fef187fd0dad990,
    0x3c8b3782720c0ab4, 0x3fef1285a6e4030b, 0x3c6e149289cecb8f, 0x3fef0cafa93e2f56,
    0x3c834d754db0abb6, 0x3fef06fe0a31b715, 0x3c864201e2ac744c, 0x3fef0170fc4cd831,
    0x3c8fdd395dd3f84a, 0x3feefc08b26416ff, 0xbc86a3803b8e5b04, 0x3feef6c55f929ff1,
    0xbc924aedcc4b5068, 0x3feef1a7373aa9cb, 0xbc9907f81b512d8e, 0x3feeecae6d05d866,
    0xbc71d1e83e9436d2, 0x3feee7db34e59ff7, 0xbc991919b3ce1b15, 0x3feee32dc313a8e5,
    0x3c859f48a72a4c6d, 0x3feedea64c123422, 0xbc9312607a28698a, 0x3feeda4504ac801c,
    0xbc58a78f4817895b, 0x3feed60a21f72e2a, 0xbc7c2c9b67499a1b, 0x3feed1f5d950a897,
    0x3c4363ed60c2ac11, 0x3feece086061892d, 0x3c9666093b0664ef, 0x3feeca41ed1d0057,
    0x3c6ecce1daa10379, 0x3feec6a2b5c13cd0, 0x3c93ff8e3f0f1230, 0x3feec32af0d7d3de,
    0x3c7690cebb7aafb0, 0x3feebfdad5362a27, 0x3c931dbdeb54e077, 0x3feebcb299fddd0d,
    0xbc8f94340071a38e, 0x3feeb9b2769d2ca7, 0xbc87deccdc93a349, 0x3feeb6daa2cf6642,
    0xbc78dec6bd0f385f, 0x3feeb42b569d4f82, 0xbc861246ec7b5cf6, 0x3feeb1a4ca5d920f,
    0x3c93350518fdd78e, 0x3feeaf4736b527da, 0x3c7b98b72f8a9b05, 0x3feead12d497c7fd,
    0x3c9063e1e21c5409, 0x3feeab07dd485429, 0x3c34c7855019c6ea, 0x3feea9268a5946b7,
    0x3c9432e62b64c035, 0x3feea76f15ad2148, 0xbc8ce44a6199769f, 0x3feea5e1b976dc09,
    0xbc8c33c53bef4da8, 0x3feea47eb03a5585, 0xbc845378892be9ae, 0x3feea34634ccc320,
    0xbc93cedd78565858, 0x3feea23882552225, 0x3c5710aa807e1964, 0x3feea155d44ca973,
    0xbc93b3efbf5e2228, 0x3feea09e667f3bcd, 0xbc6a12ad8734b982, 0x3feea012750bdabf,
    0xbc6367efb86da9ee, 0x3fee9fb23c651a2f, 0xbc80dc3d54e08851, 0x3fee9f7df9519484,
    0xbc781f647e5a3ecf, 0x3fee9f75e8ec5f74, 0xbc86ee4ac08b7db0, 0x3fee9f9a48a58174,
    0xbc8619321e55e68a, 0x3fee9feb564267c9, 0x3c909ccb5e09d4d3, 0x3feea0694fde5d3f,
    0xbc7b32dcb94da51d, 0x3feea11473eb0187, 0x3c94ecfd5467c06b, 0x3feea1ed0130c132,
    0x3c65ebe1abd66c55, 0x3feea2f336cf4e62, 0xbc88a1c52fb3cf42, 0x3feea427543e1a12,
    0xbc9369b6f13b3734, 0x3feea589994cce13, 0xbc805e843a19ff1e, 0x3feea71a4623c7ad,
    0xbc94d450d872576e, 0x3feea8d99b4492ed, 0x3c90ad675b0e8a00, 0x3feeaac7d98a6699,
    0x3c8db72fc1f0eab4, 0x3feeace5422aa0db, 0xbc65b6609cc5e7ff, 0x3feeaf3216b5448c,
    0x3c7bf68359f35f44, 0x3feeb1ae99157736, 0xbc93091fa71e3d83, 0x3feeb45b0b91ffc6,
    0xbc5da9b88b6c1e29, 0x3feeb737b0cdc5e5, 0xbc6c23f97c90b959, 0x3feeba44cbc8520f,
    0xbc92434322f4f9aa, 0x3feebd829fde4e50, 0xbc85ca6cd7668e4b, 0x3feec0f170ca07ba,
    0x3c71affc2b91ce27, 0x3feec49182a3f090, 0x3c6dd235e10a73bb, 0x3feec86319e32323,
    0xbc87c50422622263, 0x3feecc667b5de565, 0x3c8b1c86e3e231d5, 0x3feed09bec4a2d33,
    0xbc91bbd1d3bcbb15, 0x3feed503b23e255d, 0x3c90cc319cee31d2, 0x3feed99e1330b358,
    0x3c8469846e735ab3, 0x3feede6b5579fdbf, 0xbc82dfcd978e9db4, 0x3feee36bbfd3f37a,
    0x3c8c1a7792cb3387, 0x3feee89f995ad3ad, 0xbc907b8f4ad1d9fa, 0x3feeee07298db666,
    0xbc55c3d956dcaeba, 0x3feef3a2b84f15fb, 0xbc90a40e3da6f640, 0x3feef9728de5593a,
    0xbc68d6f438ad9334, 0x3feeff76f2fb5e47, 0xbc91eee26b588a35, 0x3fef05b030a1064a,
    0x3c74ffd70a5fddcd, 0x3fef0c1e904bc1d2, 0xbc91bdfbfa9298ac, 0x3fef12c25bd71e09,
    0x3c736eae30af0cb3, 0x3fef199bdd85529c, 0x3c8ee3325c9ffd94, 0x3fef20ab5fffd07a,
    0x3c84e08fd10959ac, 0x3fef27f12e57d14b, 0x3c63cdaf384e1a67, 0x3fef2f6d9406e7b5,
    0x3c676b2c6c921968, 0x3fef3720dcef9069, 0xbc808a1883ccb5d2, 0x3fef3f0b555dc3fa,
    0xbc8fad5d3ffffa6f, 0x3fef472d4a07897c, 0xbc900dae3875a949, 0x3fef4f87080d89f2,
    0x3c74a385a63d07a7, 0x3fef5818dcfba487, 0xbc82919e2040220f, 0x3fef60e316c98398,
    0x3c8e5a50d5c192ac, 0x3fef69e603db3285, 0x3c843a59ac016b4b, 0x3fef7321f301b460,
    0xbc82d52107b43e1f, 0x3fef7c97337b9b5f, 0xbc892ab93b470dc9, 0x3fef864614f5a129,
    0x3c74b604603a88d3, 0x3fef902ee78b3ff6, 0x3c83c5ec519d7271, 0x3fef9a51fbc74c83,
    0xbc8ff7128fd391f0, 0x3fefa4afa2a490da, 0xbc8dae98e223747d, 0x3fefaf482d8e67f1,
    0x3c8ec3bc41aa2008, 0x3fefba1bee615a27, 0x3c842b94c3a9eb32, 0x3fefc52b376bba97,
    0x3c8a64a931d185ee, 0x3fefd0765b6e4540, 0xbc8e37bae43be3ed, 0x3fefdbfdad9cbe14,
    0x3c77893b4d91cd9d, 0x3fefe7c1819e90d8, 0x3c5305c14160cc89, 0x3feff3c22b8f71f1,
};
}  // namespace glibc_exp

using Words = std::uint64_t __attribute__((vector_size(64)));  // eight 64-bit integers

__attribute__((target("avx512f"))) [[gnu::always_inline]] inline __m512d exp_lanes(__m512d x)
{
    using namespace glibc_exp;
    // The exponent field of |x|, less that of 2^−54: below 0x3f is 2^−54 ≤ |x| < 512, the common
    // case; below 0 (wrapped round, so above 0x3f as unsigned) is |x| < 2^−54.
    const Words top = ((reinterpret_cast<Words>(x) >> 52) & 0x7ff) - 0x3c9;
    const __mmask8 tiny = _mm512_cmpgt_epu64_mask(reinterpret_cast<__m512i>(top), _mm512_set1_epi64(0x7ff));
    const __mmask8 common = _mm512_cmplt_epu64_mask(reinterpret_cast<__m512i>(top), _mm512_set1_epi64(0x3f));
    __m512d kd = _mm512_fmadd_pd(x, _mm512_set1_pd(inverse_ln2_n), _mm512_set1_pd(shift));
    const Words ki = reinterpret_cast<Words>(kd);
    kd = _mm512_sub_pd(kd, _mm512_set1_pd(shift));
    __m512d r = _mm512_fmadd_pd(kd, _mm512_set1_pd(minus_ln2_high_n), x);
    r = _mm512_fmadd_pd(kd, _mm512_set1_pd(minus_ln2_low_n), r);
    const Words index = (ki & 127) << 1;
    const __m512d tail = _mm512_mask_i64gather_pd(_mm512_setzero_pd(), 0xff, reinterpret_cast<__m512i>(index),
                                                  table, 8);
    const Words scale_bits =
        reinterpret_cast<Words>(_mm512_mask_i64gather_epi64(_mm512_setzero_si512(), 0xff,
                                                            reinterpret_cast<__m512i>(index + 1), table, 8)) +
        (ki << 45);
    const __m512d r2 = _mm512_mul_pd(r, r);
    const __m512d low = _mm512_fmadd_pd(r, _mm512_set1_pd(c3), _mm512_set1_pd(c2));
    const __m512d high = _mm512_fmadd_pd(r, _mm512_set1_pd(c5), _mm512_set1_pd(c4));
    __m512d sum = _mm512_fmadd_pd(low, r2, _mm512_add_pd(r, tail));
    sum = _mm512_fmadd_pd(_mm512_mul_pd(r2, r2), high, sum);
    const auto scale = reinterpret_cast<__m512d>(scale_bits);
    __m512d result = _mm512_fmadd_pd(scale, sum, scale);
    result = _mm512_mask_add_pd(result, tiny, _mm512_set1_pd(1.0), x);
    const auto rest = static_cast<unsigned>(static_cast<__mmask8>(~(common | tiny)));
    if (rest != 0) {
        alignas(64) double in[lanes];
        alignas(64) double out[lanes];
        _mm512_store_pd(in, x);
        _mm512_store_pd(out, result);
        for (std::size_t l = 0; l < lanes; ++l) {
            if (((rest >> l) & 1U) != 0) {
                out[l] = std::exp(in[l]);
            }
        }
        result = _mm512_load_pd(out);
    }
    return result;
}

using Words4 = std::uint64_t __attribute__((vector_size(32)));  // four 64-bit integers
using Signed4 = std::int64_t __attribute__((vector_size(32)));

// The same steps four lanes at a time, for processors with AVX2 and fused multiply-adds, where
// the library's exp is that same version: the two comparisons read the exponent field as a
// signed number (below 0 is |x| < 2^−54) and a blend stands for the masked addition.
__attribute__((target("avx2,fma"))) [[gnu::always_inline]] inline __m256d exp_lanes(__m256d x)
{
    using namespace glibc_exp;
    const Signed4 top = reinterpret_cast<Signed4>((reinterpret_cast<Words4>(x) >> 52) & 0x7ff) - 0x3c9;
    const Signed4 tiny = top < 0;  // all ones where true
    const Signed4 common = (top >= 0) & (top < 0x3f);
    __m256d kd = _mm256_fmadd_pd(x, _mm256_set1_pd(inverse_ln2_n), _mm256_set1_pd(shift));
    const Words4 ki = reinterpret_cast<Words4>(kd);
    kd = _mm256_sub_pd(kd, _mm256_set1_pd(shift));
    __m256d r = _mm256_fmadd_pd(kd, _mm256_set1_pd(minus_ln2_high_n), x);
    r = _mm256_fmadd_pd(kd, _mm256_set1_pd(minus_ln2_low_n), r);
    // Each lane's two entries (2i, 2i + 1) sit side by side: four loads of a pair, then the firsts
    // and the seconds put together by two shuffles, in less time than two gather instructions take
    // (chapter 15's training step on one thread of an AMD EPYC with AVX2: 12.45 → 12.25 ms).
    alignas(32) std::uint64_t at[4];
    const Words4 index = (ki & 127) << 1;
    std::memcpy(at, &index, sizeof(at));
    const auto* entries = reinterpret_cast<const double*>(table);
    const __m256d even = _mm256_set_m128d(_mm_load_pd(entries + at[2]), _mm_load_pd(entries + at[0]));
    const __m256d odd = _mm256_set_m128d(_mm_load_pd(entries + at[3]), _mm_load_pd(entries + at[1]));
    const __m256d tail = _mm256_unpacklo_pd(even, odd);  // entries 2i of lanes 0, 1, 2, 3
    const Words4 scale_bits = reinterpret_cast<Words4>(_mm256_unpackhi_pd(even, odd)) + (ki << 45);
    const __m256d r2 = _mm256_mul_pd(r, r);
    const __m256d low = _mm256_fmadd_pd(r, _mm256_set1_pd(c3), _mm256_set1_pd(c2));
    const __m256d high = _mm256_fmadd_pd(r, _mm256_set1_pd(c5), _mm256_set1_pd(c4));
    __m256d sum = _mm256_fmadd_pd(low, r2, _mm256_add_pd(r, tail));
    sum = _mm256_fmadd_pd(_mm256_mul_pd(r2, r2), high, sum);
    const auto scale = reinterpret_cast<__m256d>(scale_bits);
    __m256d result = _mm256_fmadd_pd(scale, sum, scale);
    result = _mm256_blendv_pd(result, _mm256_add_pd(_mm256_set1_pd(1.0), x), reinterpret_cast<__m256d>(tiny));
    const int rest = _mm256_movemask_pd(reinterpret_cast<__m256d>(~(common | tiny)));
    if (rest != 0) {
        alignas(32) double in[4];
        alignas(32) double out[4];
        _mm256_store_pd(in, x);
        _mm256_store_pd(out, result);
        for (std::size_t l = 0; l < 4; ++l) {
            if (((static_cast<unsigned>(rest) >> l) & 1U) != 0) {
                out[l] = std::exp(in[l]);
            }
        }
        result = _mm256_load_pd(out);
    }
    return result;
}
#endif

std::size_t round_up(std::size_t count, std::size_t step)
{
    return (count + step - 1) / step * step;
}

// The sums of one tile of R rows and W vectors of columns: acc[r][w] = 0 + L(r, p)·B(p, w·width …)
// over p from first[r] to end[r] − 1, in order, one rounding per multiplication and per addition. From the
// latest first to the earliest end every row takes its term; before and after, a row whose range
// does not hold p keeps its sums as they are (a select, not a branch, so that they stay in registers).
template <class Vec, std::size_t R, std::size_t W>
[[gnu::always_inline]] inline void tile_sums(const Left& left, const double* b, std::size_t ldb,
                                             const std::size_t (&first)[R], const std::size_t (&end)[R],
                                             Vec (&acc)[R][W])
{
    // Over all R rows alike: p runs from the earliest first to the latest end, and every row's
    // range holds [latest first, earliest end).
    // (std::min_element, not std::ranges::min: the WebAssembly build's library has no ranges.)
    const std::size_t low = *std::min_element(std::begin(first), std::end(first));
    const std::size_t high = *std::max_element(std::begin(end), std::end(end));
    const std::size_t all_from = *std::max_element(std::begin(first), std::end(first));
    const std::size_t all_to = *std::min_element(std::begin(end), std::end(end));
    Vec sums[R][W] = {};  // local, so that they live in registers
    const auto add = [&](std::size_t p, bool checked) {
        // One load per register. Copied as one block, the row went through memory in 16-byte pieces
        // and came back as whole registers, a load that waits until every piece has been stored.
        Vec row[W];
        for (std::size_t w = 0; w < W; ++w) {
            std::memcpy(&row[w], b + p * ldb + w * width<Vec>, sizeof(Vec));
        }
        for (std::size_t r = 0; r < R; ++r) {
            const bool on = !checked || (p >= first[r] && p < end[r]);
            const double l = on ? left(r, p) : 0.0;
            for (std::size_t w = 0; w < W; ++w) {
                const Vec sum = sums[r][w] + l * row[w];
                sums[r][w] = on ? sum : sums[r][w];
            }
        }
    };
    const std::size_t from = std::clamp(all_from, low, high);
    const std::size_t to = std::clamp(all_to, from, high);
    for (std::size_t p = low; p < from; ++p) {
        add(p, true);
    }
    for (std::size_t p = from; p < to; ++p) {
        add(p, false);
    }
    for (std::size_t p = to; p < high; ++p) {
        add(p, true);
    }
    std::memcpy(&acc, &sums, sizeof(sums));
}

// Rows [row, row + R) ∩ [0, rows) and columns [column, column + W·width) ∩ [0, cols) of a tile into
// c (rows ldc apart). A whole tile is stored register by register; only a cut one is copied
// entry by entry (a copy of a length known only at run time is a call).
template <class Vec, std::size_t R, std::size_t W>
[[gnu::always_inline]] inline void store_tile(const Vec (&acc)[R][W], std::size_t row, std::size_t rows,
                                              std::size_t column, std::size_t cols, double* c, std::size_t ldc)
{
    if (row + R <= rows && column + W * width<Vec> <= cols) {
        for (std::size_t r = 0; r < R; ++r) {
            std::memcpy(c + (row + r) * ldc + column, &acc[r], sizeof(acc[r]));
        }
        return;
    }
    const std::size_t count = std::min(W * width<Vec>, cols - column);
    for (std::size_t r = 0; r < R && row + r < rows; ++r) {
        double sums[W * width<Vec>];
        std::memcpy(sums, &acc[r], sizeof(sums));
        double* to = c + (row + r) * ldc + column;
        std::size_t k = 0;
        for (; k + width<Vec> <= count; k += width<Vec>) {  // whole registers, then one double at a time
            std::memcpy(to + k, sums + k, sizeof(Vec));
        }
        for (; k < count; ++k) {
            to[k] = sums[k];
        }
    }
}

// rows×cols at a (rows stride apart), copied into `width` columns padded with zeros; transposed,
// entry (c, j) is a[j · stride + c], in `width` ≥ rows columns. Only the padding is zeroed.
void pack(const double* a, std::size_t stride, std::size_t rows, std::size_t cols, std::size_t width,
          std::vector<double>& out)
{
    out.resize(rows * width);
    for (std::size_t i = 0; i < rows; ++i) {
        double* row = out.data() + i * width;
        std::copy(a + i * stride, a + i * stride + cols, row);
        std::fill(row + cols, row + width, 0.0);
    }
}

void pack_transposed(const double* a, std::size_t stride, std::size_t rows, std::size_t cols, std::size_t width,
                     std::vector<double>& out)
{
    out.resize(cols * width);
    for (std::size_t j = 0; j < rows; ++j) {
        for (std::size_t c = 0; c < cols; ++c) {
            out[c * width + j] = a[j * stride + c];
        }
    }
    for (std::size_t c = 0; c < cols; ++c) {
        std::fill(out.begin() + static_cast<std::ptrdiff_t>(c * width + rows),
                  out.begin() + static_cast<std::ptrdiff_t>((c + 1) * width), 0.0);
    }
}

// The buffers of one thread, kept from call to call.
struct Scratch {
    std::vector<double> transposed;  // Kᵀ or Vᵀ, head_dim × (n rounded up)
    std::vector<double> right;       // V, K or Q packed, n × (head_dim rounded up)
    std::vector<double> more;        // dC or Q packed
    std::vector<double> sums;        // scores or dA, n × (n rounded up)
    std::vector<double> d_scores;    // dS, n × n
};

Scratch& scratch()
{
    thread_local Scratch buffers;
    return buffers;
}

// Row tiles of L·B: rows i of L (row_step apart) over depth p in [first(i), end(i)), B with
// `cols` columns (ldb apart, readable to a multiple of W·width), into c (ldc apart).
template <class Vec, std::size_t R, std::size_t W, class Range>
[[gnu::always_inline]] inline void row_tiles(const double* l, std::size_t row_step, std::size_t depth_step,
                                             std::size_t rows, const Range& range, const double* b,
                                             std::size_t ldb, std::size_t cols, double* c, std::size_t ldc)
{
    for (std::size_t i = 0; i < rows; i += R) {
        std::size_t first[R];
        std::size_t end[R];
        for (std::size_t r = 0; r < R; ++r) {
            first[r] = i + r < rows ? range(i + r).first : 0;
            end[r] = i + r < rows ? range(i + r).second : 0;
        }
        const Left left{l + i * row_step, row_step, depth_step};
        for (std::size_t column = 0; column < cols; column += W * width<Vec>) {
            Vec acc[R][W];
            tile_sums<Vec, R, W>(left, b + column, ldb, first, end, acc);
            store_tile<Vec, R, W>(acc, i, rows, column, cols, c, ldc);
        }
    }
}

// How a head's softmax takes e^x: by std::exp one number at a time, or four or eight lanes at a
// time with its bits.
enum class Exp { one, four, eight };

// e^(a[j] − largest) for j < count, in place, eight at a time: the bits of std::exp.
#ifdef BOOK_WIDE_EXP
__attribute__((target("avx512f"))) void shifted_exps_512(double* a, std::size_t count, double largest)
{
    const __m512d shift = _mm512_set1_pd(largest);
    for (std::size_t j = 0; j < count; j += lanes) {
        // A cut block reads `largest` past its end, whose e^0 is never stored.
        const auto mask = static_cast<__mmask8>(count - j >= lanes ? 0xffU : (1U << (count - j)) - 1U);
        const __m512d x = _mm512_sub_pd(_mm512_mask_loadu_pd(shift, mask, a + j), shift);
        _mm512_mask_storeu_pd(a + j, mask, exp_lanes(x));
    }
}

// Four at a time; the last count % 4 by std::exp.
__attribute__((target("avx2,fma"))) void shifted_exps_256(double* a, std::size_t count, double largest)
{
    const __m256d shift = _mm256_set1_pd(largest);
    std::size_t j = 0;
    for (; j + 4 <= count; j += 4) {
        _mm256_storeu_pd(a + j, exp_lanes(_mm256_sub_pd(_mm256_loadu_pd(a + j), shift)));
    }
    for (; j < count; ++j) {
        a[j] = std::exp(a[j] - largest);
    }
}
#endif

// The same by std::exp, one at a time, or by shifted_exps_512() or shifted_exps_256().
template <Exp Lanes>
[[gnu::always_inline]] inline void shifted_exps(double* a, std::size_t count, double largest)
{
#ifdef BOOK_WIDE_EXP
    if constexpr (Lanes == Exp::eight) {
        shifted_exps_512(a, count, largest);
        return;
    }
    if constexpr (Lanes == Exp::four) {
        shifted_exps_256(a, count, largest);
        return;
    }
#endif
    for (std::size_t j = 0; j < count; ++j) {
        a[j] = std::exp(a[j] - largest);
    }
}

// Row i's weights from its scores s (j ≤ i): divided by √(d/h), less their largest, through exp.
// The largest is std::fmax's (a NaN score is passed over) save for the sign of a zero largest,
// which no difference a − largest, and so no weight, can see; taken as eight running maxima,
// merged, it is the same number, with no call and no chain of dependent comparisons.
template <Exp Lanes>
[[gnu::always_inline]] inline void shifted_row(const double* s, std::size_t i, double root, double* a)
{
    for (std::size_t j = 0; j <= i; ++j) {
        a[j] = s[j] / root;
    }
    constexpr double none = -std::numeric_limits<double>::infinity();
    double largest[lanes] = {none, none, none, none, none, none, none, none};
    std::size_t j = 0;
    for (; j + lanes <= i + 1; j += lanes) {
        for (std::size_t l = 0; l < lanes; ++l) {
            largest[l] = a[j + l] > largest[l] ? a[j + l] : largest[l];
        }
    }
    for (; j <= i; ++j) {
        largest[0] = a[j] > largest[0] ? a[j] : largest[0];
    }
    for (std::size_t l = 1; l < lanes; ++l) {
        largest[0] = largest[l] > largest[0] ? largest[l] : largest[0];
    }
    shifted_exps<Lanes>(a, i + 1, largest[0]);
}

// Rows i … i+rows−1 of the weights (rows ≤ 8, n apart at a) from the scores (ld apart at s), each
// row divided by its sum over j in order. One row's sum is a chain of additions, each waiting for
// the one before; the eight rows' sums advance side by side (every row takes j ≤ i, then row r the
// rest to i + r), as rowsum(dA ∘ A) does in score_gradients(): each is the same sum.
template <Exp Lanes>
[[gnu::always_inline]] inline void head_weight_rows(const double* s, std::size_t ld, std::size_t i, std::size_t rows,
                                                    double root, double* a, std::size_t n)
{
    for (std::size_t r = 0; r < rows; ++r) {
        shifted_row<Lanes>(s + r * ld, i + r, root, a + r * n);
    }
    double total[lanes] = {};
    if (rows == lanes) {
        for (std::size_t j = 0; j <= i; ++j) {
            for (std::size_t r = 0; r < lanes; ++r) {
                total[r] += a[r * n + j];
            }
        }
    } else {
        for (std::size_t j = 0; j <= i; ++j) {
            for (std::size_t r = 0; r < rows; ++r) {
                total[r] += a[r * n + j];
            }
        }
    }
    for (std::size_t r = 1; r < rows; ++r) {
        for (std::size_t j = i + 1; j <= i + r; ++j) {
            total[r] += a[r * n + j];
        }
    }
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t j = 0; j <= i + r; ++j) {
            a[r * n + j] /= total[r];
        }
    }
}

using Range = std::pair<std::size_t, std::size_t>;

template <class Vec, std::size_t R, std::size_t W, Exp Lanes = Exp::one>
[[gnu::always_inline]] inline void forward_body(const HeadWindow& h, double* weights, double* out)
{
    Scratch& s = scratch();
    const std::size_t n = h.rows;
    const std::size_t wide_n = round_up(n, W * width<Vec>);
    const std::size_t wide_d = round_up(h.head_dim, W * width<Vec>);
    pack_transposed(h.keys, h.stride, n, h.head_dim, wide_n, s.transposed);
    pack(h.values, h.stride, n, h.head_dim, wide_d, s.right);
    s.sums.resize(n * wide_n);  // every entry read is written first
    // S = Q Kᵀ: each score over the features c in order; only the columns up to the tile's last row.
    const auto features = [&](std::size_t) { return Range{0, h.head_dim}; };
    for (std::size_t i = 0; i < n; i += R) {
        const std::size_t rows = std::min(R, n - i);
        row_tiles<Vec, R, W>(h.queries + i * h.stride, h.stride, 1, rows, features, s.transposed.data(), wide_n,
                        i + rows, s.sums.data() + i * wide_n, wide_n);
    }
    const double root = std::sqrt(static_cast<double>(h.head_dim));
    for (std::size_t i = 0; i < n; i += lanes) {
        head_weight_rows<Lanes>(s.sums.data() + i * wide_n, wide_n, i, std::min(lanes, n - i), root, weights + i * n,
                                n);
    }
    // C = A V: each output over the keys j ≤ i in order.
    const auto keys = [](std::size_t i) { return Range{0, i + 1}; };
    row_tiles<Vec, R, W>(weights, n, 1, n, keys, s.right.data(), wide_d, h.head_dim, out, h.stride);
}

// dA = dC Vᵀ, then dS = A ∘ (dA − rowsum(dA ∘ A)) / √(d/h), row by row, into s.d_scores (n × n).
template <class Vec, std::size_t R, std::size_t W>
[[gnu::always_inline]] inline void score_gradients(const HeadWindow& h, const double* weights, const double* d_out,
                                                   Scratch& s)
{
    const std::size_t n = h.rows;
    const std::size_t wide_n = round_up(n, W * width<Vec>);
    pack_transposed(h.values, h.stride, n, h.head_dim, wide_n, s.transposed);
    s.sums.resize(n * wide_n);  // every entry read is written first
    const auto features = [&](std::size_t) { return Range{0, h.head_dim}; };
    for (std::size_t i = 0; i < n; i += R) {
        const std::size_t rows = std::min(R, n - i);
        row_tiles<Vec, R, W>(d_out + i * h.stride, h.stride, 1, rows, features, s.transposed.data(), wide_n, i + rows,
                        s.sums.data() + i * wide_n, wide_n);
    }
    const double root = std::sqrt(static_cast<double>(h.head_dim));
    s.d_scores.resize(n * n);  // every entry read (j ≤ i) is written first
    for (std::size_t i = 0; i < n; i += lanes) {
        const std::size_t rows = std::min(lanes, n - i);
        double weighted[lanes] = {};  // rowsum(dA ∘ A) of rows i … i+7, each over j in order;
        const double* a = weights + i * n;  // the eight sums advance side by side: every row
        const double* d_a = s.sums.data() + i * wide_n;  // takes j ≤ i, then row r the rest to i + r
        if (rows == lanes) {
            for (std::size_t j = 0; j <= i; ++j) {
                for (std::size_t r = 0; r < lanes; ++r) {
                    weighted[r] += a[r * n + j] * d_a[r * wide_n + j];
                }
            }
        } else {
            for (std::size_t j = 0; j <= i; ++j) {
                for (std::size_t r = 0; r < rows; ++r) {
                    weighted[r] += a[r * n + j] * d_a[r * wide_n + j];
                }
            }
        }
        for (std::size_t r = 1; r < rows; ++r) {
            for (std::size_t j = i + 1; j <= i + r; ++j) {
                weighted[r] += a[r * n + j] * d_a[r * wide_n + j];
            }
        }
        for (std::size_t r = 0; r < rows; ++r) {
            const double* a = weights + (i + r) * n;
            const double* d_a = s.sums.data() + (i + r) * wide_n;
            for (std::size_t j = 0; j <= i + r; ++j) {
                s.d_scores[(i + r) * n + j] = a[j] * (d_a[j] - weighted[r]) / root;
            }
        }
    }
}

template <class Vec, std::size_t R, std::size_t W>
[[gnu::always_inline]] inline void backward_body(const HeadWindow& h, const double* weights, const double* d_out,
                                                 const HeadGradients& g)
{
    Scratch& s = scratch();
    score_gradients<Vec, R, W>(h, weights, d_out, s);
    const std::size_t n = h.rows;
    const std::size_t wide_d = round_up(h.head_dim, W * width<Vec>);
    // dQ = dS K: each row over the keys j ≤ i in order.
    pack(h.keys, h.stride, n, h.head_dim, wide_d, s.right);
    const auto keys = [](std::size_t i) { return Range{0, i + 1}; };
    row_tiles<Vec, R, W>(s.d_scores.data(), n, 1, n, keys, s.right.data(), wide_d, h.head_dim, g.d_queries, h.stride);
    // dK = dSᵀ Q and dV = Aᵀ dC: row j over the queries i ≥ j in order (Sᵀ's row j is S's column j).
    const auto queries = [n](std::size_t j) { return Range{j, n}; };
    pack(h.queries, h.stride, n, h.head_dim, wide_d, s.right);
    row_tiles<Vec, R, W>(s.d_scores.data(), 1, n, n, queries, s.right.data(), wide_d, h.head_dim, g.d_keys, h.stride);
    pack(d_out, h.stride, n, h.head_dim, wide_d, s.more);
    row_tiles<Vec, R, W>(weights, 1, n, n, queries, s.more.data(), wide_d, h.head_dim, g.d_values, h.stride);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BOOK_WIDE_TILES 1
// 512-bit registers: 8 rows × 16 columns, 16 registers of sums; 256-bit: 6 rows × 8 columns, 12 of its 16 registers.
__attribute__((target("avx512f"))) void forward_512(const HeadWindow& h, double* weights, double* out)
{
    forward_body<Lanes, 8, 2, Exp::eight>(h, weights, out);
}

// With AVX2 and fused multiply-adds (-ffp-contract=off keeps every other product and sum apart).
__attribute__((target("avx2,fma"))) void forward_256(const HeadWindow& h, double* weights, double* out)
{
    forward_body<Lanes4, 6, 2, Exp::four>(h, weights, out);
}

__attribute__((target("avx512f"))) void backward_512(const HeadWindow& h, const double* weights,
                                                     const double* d_out, const HeadGradients& g)
{
    backward_body<Lanes, 8, 2>(h, weights, d_out, g);
}

__attribute__((target("avx2"))) void backward_256(const HeadWindow& h, const double* weights, const double* d_out,
                                                  const HeadGradients& g)
{
    backward_body<Lanes4, 6, 2>(h, weights, d_out, g);
}
#endif

}  // namespace

void head_forward_tiled(const HeadWindow& head, double* weights, double* out)
{
#ifdef BOOK_WIDE_TILES
    if (__builtin_cpu_supports("avx512f")) {
        forward_512(head, weights, out);
        return;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        forward_256(head, weights, out);
        return;
    }
#endif
    forward_body<Lanes2, 4, 4>(head, weights, out);
}

void head_backward_tiled(const HeadWindow& head, const double* weights, const double* d_out,
                         const HeadGradients& grads)
{
#ifdef BOOK_WIDE_TILES
    if (__builtin_cpu_supports("avx512f")) {
        backward_512(head, weights, d_out, grads);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        backward_256(head, weights, d_out, grads);
        return;
    }
#endif
    backward_body<Lanes2, 4, 4>(head, weights, d_out, grads);
}

}  // namespace sa
