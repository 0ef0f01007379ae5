// Chapter 3, Scaling: S / √d_k, and the experiments that show why.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "experiment.hpp"
#include "random.hpp"
#include "scaling.hpp"
#include "worked_example.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

using worked::printed;

namespace {
// The experiments are tagged [slow]: the grader (tools/learn) gives them a longer time limit.
// The chapter program's experiment, draw for draw: one generator, and for each d_k
// first the variance pairs, then the softmax trials.
struct ChapterExperiment {
    std::vector<sa::VarianceRow> variances;
    std::vector<sa::SaturationRow> saturation;
};

ChapterExperiment run_chapter_experiment(std::uint64_t seed)
{
    sa::SplitMix64 generator(seed);
    ChapterExperiment result;
    for (const std::size_t key_dim : {2, 16, 64, 256, 1024}) {
        result.variances.push_back(sa::score_variance(key_dim, 4000, generator));
        result.saturation.push_back(sa::softmax_saturation(key_dim, 8, 4000, generator));
    }
    return result;
}
}  // namespace

TEST_CASE("Scaling the worked example: every 4 becomes 4/√2 = 2√2, zeros stay 0", "[ch03]")
{
    const sa::Matrix raw_scores{{0, 4, 0}, {4, 4, 4}, {0, 4, 0}};
    const sa::Matrix scaled = sa::scale(raw_scores, 2);
    REQUIRE(scaled.rows() == 3);
    REQUIRE(scaled.cols() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        for (std::size_t j = 0; j < 3; ++j) {
            if (raw_scores(i, j) == 0.0) {
                INFO("entry (" << i << ", " << j << "): 0 / √2 = 0");
                CHECK_THAT(scaled(i, j), WithinAbs(0.0, printed));
            } else {
                INFO("entry (" << i << ", " << j << "): 4 / √2 = 2√2 = 2.8284..., printed as 2.828");
                CHECK_THAT(scaled(i, j), WithinAbs(2.828, printed));
                CHECK_THAT(scaled(i, j), WithinRel(2.0 * std::sqrt(2.0), 1e-15));
            }
        }
    }
}

TEST_CASE("Scaling divides every entry of an n×m matrix and keeps its shape", "[ch03]")
{
    // 2 queries against 3 keys with d_k = 4: √4 = 2, so every score is halved.
    constexpr double minus_infinity = -std::numeric_limits<double>::infinity();
    const sa::Matrix raw_scores{{6, -2, 1}, {0, 8, minus_infinity}};
    const sa::Matrix scaled = sa::scale(raw_scores, 4);
    INFO("scaling acts entry by entry: a 2×3 matrix stays 2×3");
    REQUIRE(scaled.rows() == 2);
    REQUIRE(scaled.cols() == 3);
    INFO("√d_k = √4 = 2: 6/2 = 3, -2/2 = -1, 1/2 = 0.5, 0/2 = 0, 8/2 = 4");
    CHECK_THAT(scaled(0, 0), WithinAbs(3.0, printed));
    CHECK_THAT(scaled(0, 1), WithinAbs(-1.0, printed));
    CHECK_THAT(scaled(0, 2), WithinAbs(0.5, printed));
    CHECK_THAT(scaled(1, 0), WithinAbs(0.0, printed));
    CHECK_THAT(scaled(1, 1), WithinAbs(4.0, printed));
    INFO("a masked score stays masked: -inf / 2 = -inf");
    CHECK(scaled(1, 2) == minus_infinity);
}

TEST_CASE("Scaling rejects d_k = 0", "[ch03]")
{
    const sa::Matrix raw_scores{{0, 4}, {4, 0}};
    INFO("there is no √0 to divide by: a query and a key of length 0 cannot be compared");
    CHECK_THROWS_AS(sa::scale(raw_scores, 0), std::invalid_argument);
    CHECK_THROWS_WITH(sa::scale(raw_scores, 0), Contains("scale") && Contains("d_k"));
}

TEST_CASE("Experiment: the variance of q·k grows like d_k, the scaled variance stays at 1", "[ch03][slow]")
{
    // The chapter's own numbers (seed 2017, drawn exactly as the program draws them),
    // then two other seeds with the variance experiment alone.
    std::vector<sa::VarianceRow> rows = run_chapter_experiment(2017).variances;
    for (const std::uint64_t seed : {1ULL, 42ULL}) {
        sa::SplitMix64 generator(seed);
        for (const std::size_t key_dim : {2, 16, 64, 256, 1024}) {
            rows.push_back(sa::score_variance(key_dim, 4000, generator));
        }
    }
    for (const sa::VarianceRow& row : rows) {
        const auto key_dim = static_cast<double>(row.key_dim);
        INFO("d_k = " << row.key_dim << ", " << row.pairs << " pairs");
        INFO("Var(q·k) = d_k for unit-variance entries. With uniform entries E[x⁴] = 9/5, so Var((q·k)²) = 2d_k² + 0.24d_k "
             "and the sample variance of N = 4000 values has relative standard error √((2 + 0.24/d_k)/4000) ≤ 2.3%; "
             "10% is more than 4 standard errors");
        CHECK_THAT(row.raw_variance, WithinRel(key_dim, 0.10));
        INFO("dividing every value by √d_k divides the variance by d_k exactly, so the same 10% holds around 1");
        CHECK_THAT(row.scaled_variance, WithinRel(1.0, 0.10));
        CHECK_THAT(row.scaled_variance * key_dim, WithinRel(row.raw_variance, 1e-12));
    }
}

TEST_CASE("Experiment: without scaling the softmax goes all-or-nothing as d_k grows", "[ch03][slow]")
{
    const ChapterExperiment experiment = run_chapter_experiment(2017);
    const auto& rows = experiment.saturation;
    REQUIRE(rows.size() == 5);
    for (std::size_t i = 1; i < rows.size(); ++i) {
        INFO("raw scores are √d_k times the scaled ones, and the largest softmax weight of c·s grows with c "
             "(d/dc ln p_max = s_max - Σ p_j s_j ≥ 0); d_k = " << rows[i].key_dim << " against " << rows[i - 1].key_dim);
        CHECK(rows[i].raw.largest > rows[i - 1].raw.largest);
    }
    for (std::size_t i = 2; i < rows.size(); ++i) {
        INFO("from d_k = 16 on most largest weights are above 1/2, where p(1-p) falls as p rises; d_k = "
             << rows[i].key_dim << " against " << rows[i - 1].key_dim);
        CHECK(rows[i].raw.gradient < rows[i - 1].raw.gradient);
    }
    const sa::SoftmaxStats& raw = rows.back().raw;
    INFO("d_k = 1024: the scores of 8 keys are about √1024 = 32 times unit normals. The weight is split only when the two "
         "largest are nearly tied: the gap g between the two largest of 8 unit normals has density 1.42 at 0, and "
         "∫ dg / (1 + e^{32g}) = ln 2 / 32, so 1 - mean p ≈ 1.42·0.693/32 = 0.031 and mean p ≈ 0.969");
    CHECK_THAT(raw.largest, WithinAbs(0.969, 0.01));
    INFO("likewise mean p(1-p) ≈ 1.42·∫ e^{32g}/(1 + e^{32g})² dg = 1.42/(2·32) = 0.022, a tenth of the scaled 0.217");
    CHECK_THAT(raw.gradient, WithinAbs(0.022, 0.004));
    INFO("p > 0.99 needs 32g > ln 99 (about 4.6), so it fails only for g < 0.144: probability ≈ 1.42·0.144 = 0.20; "
         "about 80% of the queries give more than 99% of their attention to one key");
    CHECK(raw.saturated > 0.7);
    CHECK(raw.saturated < 0.9);
}

TEST_CASE("Experiment: with scaling the softmax stays the same at every d_k", "[ch03][slow]")
{
    const ChapterExperiment experiment = run_chapter_experiment(2017);
    for (const sa::SaturationRow& row : experiment.saturation) {
        INFO("d_k = " << row.key_dim << ": scaled scores have variance 1 at every d_k");
        INFO("for 8 independent unit-normal scores the largest softmax weight averages 0.361 and p(1-p) 0.217; "
             "their spreads over queries, about 0.12 and 0.03, give standard errors of 0.002 and 0.0005 over 4000 queries; "
             "the bounds allow for that and for scores that are only nearly normal at d_k = 16");
        if (row.key_dim >= 16) {
            CHECK_THAT(row.scaled.largest, WithinAbs(0.361, 0.015));
            CHECK_THAT(row.scaled.gradient, WithinAbs(0.217, 0.01));
        }
        INFO("at any d_k: the largest of 8 weights is at least 1/8, and p > 0.99 would need the top score 4.6 or more "
             "above every other, far outside unit-variance scores");
        CHECK(row.scaled.largest > 0.125);
        CHECK(row.scaled.largest < 0.5);
        CHECK(row.scaled.saturated < 0.01);
    }
}
