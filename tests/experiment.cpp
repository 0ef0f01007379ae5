// The support code of chapter 3's experiment: the portable generator and the
// statistics helpers. Not an exercise (it has no stub), so it is not graded;
// the experiment itself, which calls sa::scale, is tested in ch03_scaling.cpp.
#include <catch2/catch.hpp>

#include <cmath>

#include "experiment.hpp"
#include "random.hpp"
#include "worked_example.hpp"

using Catch::Matchers::WithinAbs;

using worked::printed;

TEST_CASE("SplitMix64 gives the published sequence, the same on every machine", "[experiment]")
{
    sa::SplitMix64 generator(1234567);
    INFO("the reference outputs of SplitMix64 for seed 1234567, from its authors' C implementation");
    CHECK(generator.next() == 6457827717110365317ULL);
    CHECK(generator.next() == 3203168211198807973ULL);
    CHECK(generator.next() == 9817491932198370423ULL);

    sa::SplitMix64 fresh(1234567);
    const double first = fresh.unit_variance();
    INFO("the first draw is 2√3·u - √3 with u = (6457827717110365317 >> 11) / 2^53, the top 53 bits of the first output");
    const double u = static_cast<double>(6457827717110365317ULL >> 11U) / 9007199254740992.0;
    CHECK(first == 2.0 * std::sqrt(3.0) * u - std::sqrt(3.0));

    sa::SplitMix64 one(2017);
    sa::SplitMix64 other(2017);
    const double half_width = std::sqrt(3.0);
    for (int draw = 0; draw < 1000; ++draw) {
        const double value = one.unit_variance();
        INFO("draw " << draw << ": equal seeds give equal sequences, and every value lies in [-√3, √3]");
        REQUIRE(value == other.unit_variance());
        REQUIRE(value >= -half_width);
        REQUIRE(value <= half_width);
    }
}

TEST_CASE("SplitMix64's unit_variance() has mean 0 and variance 1", "[experiment]")
{
    sa::SplitMix64 generator(2017);
    const sa::Matrix draws = sa::random_matrix(100000, 1, generator);
    double sum = 0.0;
    for (std::size_t i = 0; i < draws.rows(); ++i) {
        sum += draws(i, 0);
    }
    INFO("uniform on [-√3, √3]: mean 0, standard error of the mean 1/√100000 = 0.0032; 0.016 is 5 standard errors");
    CHECK_THAT(sum / 100000.0, WithinAbs(0.0, 0.016));
    INFO("variance a²/3 = 1; Var(x²) = E[x⁴] - 1 = 9/5 - 1 = 0.8, so the sample variance has standard error √(0.8/100000) = 0.0028; 0.015 is 5 of them");
    CHECK_THAT(sa::sample_variance(draws), WithinAbs(1.0, 0.015));
}

TEST_CASE("sample_variance and largest_weight on numbers worked by hand", "[experiment]")
{
    INFO("[1, 2, 3, 4]: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5, divided by N - 1 = 3");
    CHECK_THAT(sa::sample_variance(sa::Matrix{{1, 2}, {3, 4}}), WithinAbs(5.0 / 3.0, 1e-12));
    CHECK_THROWS_AS(sa::sample_variance(sa::Matrix{{1}}), std::invalid_argument);
    INFO("four equal scores share the weight: the largest is 1/4");
    CHECK_THAT(sa::largest_weight(sa::Matrix{{7, 7, 7, 7}}, 0), WithinAbs(0.25, 1e-12));
    INFO("scores [0, ln 3]: weights 1/(1+3) and 3/(1+3), so the largest is 3/4");
    CHECK_THAT(sa::largest_weight(sa::Matrix{{0, std::log(3.0)}}, 0), WithinAbs(0.75, 1e-12));
    INFO("the Mouse row of the scaled worked example [0, 2√2, 0]: e^{2√2} / (2 + e^{2√2}) = 16.9188 / 18.9188 = 0.894");
    CHECK_THAT(sa::largest_weight(sa::Matrix{{0, 0, 0}, {0, 2.0 * std::sqrt(2.0), 0}}, 1), WithinAbs(0.894, printed));
}
