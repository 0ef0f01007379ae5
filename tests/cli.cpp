// The chapter programs' command line: the reader's own numbers, and clear errors for bad ones.
#include <catch2/catch.hpp>

#include <cmath>

#include "cli.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;

namespace {

sa::ProgramInfo program()
{
    return sa::ProgramInfo{"ch00-test", "a test program", sa::mouse_eats_cheese()};
}

std::string error_of(const std::vector<std::string>& args)
{
    try {
        (void)sa::parse_arguments(program(), args);
    } catch (const sa::UsageError& error) {
        return error.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("A matrix is written row by row: rows split at semicolons, entries at commas", "[cli]")
{
    const sa::Matrix matrix = sa::parse_matrix("--embeddings", "2,0;1,2;2,0");
    REQUIRE(matrix == sa::Matrix{{2, 0}, {1, 2}, {2, 0}});
    INFO("spaces around entries, a leading '+', decimals and exponents are all numbers");
    CHECK(sa::parse_matrix("--wq", " 0.5 , +1 ; -2e1,3 ") == sa::Matrix{{0.5, 1}, {-20, 3}});
}

TEST_CASE("Numbers are read the same whatever the locale: '.' is the decimal point", "[cli]")
{
    INFO("std::from_chars ignores the C locale, so 1,5 is two entries and 1.5 is one");
    CHECK(sa::parse_matrix("--wq", "1.5") == sa::Matrix{{1.5}});
    CHECK(sa::parse_matrix("--wq", "1,5").cols() == 2);
}

TEST_CASE("The reader may ask for infinities and NaN explicitly", "[cli]")
{
    const sa::Matrix matrix = sa::parse_matrix("--embeddings", "inf,-inf;nan,1");
    CHECK(std::isinf(matrix(0, 0)));
    CHECK(matrix(0, 1) < 0);
    CHECK(std::isnan(matrix(1, 0)));
}

TEST_CASE("Malformed matrices get one message naming the option, the row and the entry", "[cli]")
{
    CHECK_THAT(error_of({"--embeddings", "2,0;1,x;2,0"}),
               Equals("--embeddings row 2: \"1,x\": \"x\" is not a number; expected rows separated by ';' and "
                      "entries by ',', e.g. \"2,0;1,2\""));
    CHECK_THAT(error_of({"--embeddings", "2,0;1,2,3;2,0"}),
               Contains("--embeddings row 2") && Contains("has 3 entries but row 1 has 2"));
    CHECK_THAT(error_of({"--embeddings", ""}), Contains("--embeddings: the matrix is empty"));
    CHECK_THAT(error_of({"--embeddings", "2,0;;2,0"}), Contains("row 2") && Contains("\"\" is not a number"));
    CHECK_THAT(error_of({"--wq", "1.5abc,0;0,1"}), Contains("\"1.5abc\" is not a number"));
    INFO("1e400 is a number, but no double can hold it");
    CHECK_THAT(error_of({"--wq", "1e400,0;0,1"}), Contains("\"1e400\" is out of the range of a double"));
    CHECK_THAT(error_of({"--embeddings", "1;2,3"}), Contains("has 2 entries but row 1 has 1 entry"));
}

TEST_CASE("Shapes that do not fit together are named with the expected shape", "[cli]")
{
    CHECK_THAT(error_of({"--wq", "0,1;1,0;1,1"}), Equals("--wq: expected 2 rows (one per embedding feature), got 3"));
    CHECK_THAT(error_of({"--wv", "1,0,0"}), Equals("--wv: expected 2 rows (one per embedding feature), got 1"));
    CHECK_THAT(error_of({"--wk", "1,0,0;0,1,0"}), Equals("--wk: expected 2 columns (d_k, the same as --wq), got 3"));
    CHECK_THAT(error_of({"--tokens", "Mouse,Eats"}),
               Equals("--tokens: expected 3 names (one per embedding row), got 2"));
    INFO("new embeddings with three features need new projections too, and the message says the default is what no longer fits");
    CHECK_THAT(error_of({"--embeddings", "1,2,3;4,5,6"}),
               Equals("--wq: expected 3 rows (one per embedding feature), but the default has 2; pass your own --wq"));
    INFO("one of a thing is singular");
    CHECK_THAT(error_of({"--embeddings", "1;2", "--wq", "1,0;0,1"}),
               Equals("--wq: expected 1 row (one per embedding feature), got 2"));
}

TEST_CASE("Unknown options and options missing their value are named", "[cli]")
{
    CHECK_THAT(error_of({"--frobnicate"}), Equals("unknown option \"--frobnicate\"; run ch00-test --help for the options"));
    CHECK_THAT(error_of({"--wq"}), Equals("--wq: missing value; expected a matrix such as \"0,1;1,0\""));
    CHECK_THAT(error_of({"--precision", "many"}),
               Equals("--precision: expected a whole number from 0 to 10, got \"many\""));
    CHECK_THAT(error_of({"--precision", "11"}), Contains("from 0 to 10"));
    INFO("--seed belongs to the programs with a random experiment only");
    CHECK_THAT(error_of({"--seed", "1"}), Contains("unknown option \"--seed\""));
}

TEST_CASE("Own embeddings without names are labelled t1, t2, ...", "[cli]")
{
    const sa::Example example = sa::parse_arguments(program(), {"--embeddings", "1,0;0,1", "--precision", "1"});
    CHECK(example.tokens == std::vector<std::string>{"t1", "t2"});
    CHECK(example.precision == 1);
    CHECK(example.w_query == sa::mouse_eats_cheese().w_query);
}

TEST_CASE("A run with bad input prints nothing on stdout and returns 2", "[cli]")
{
    std::vector<std::string> words{"ch00-test", "--wq", "1"};
    std::vector<char*> argv;
    for (auto& word : words) {
        argv.push_back(word.data());
    }
    bool body_ran = false;
    const int status = sa::run_program(program(), static_cast<int>(argv.size()), argv.data(),
                                       [&](const sa::Example&) {
                                           body_ran = true;
                                           return std::string("result");
                                       });
    CHECK(status == 2);
    CHECK_FALSE(body_ran);
}

TEST_CASE("An option the program does not read is refused with the reason, and left out of --help", "[cli]")
{
    sa::ProgramInfo info = program();
    info.unused_options = {{"--causal", "the scores come before any mask"}};
    try {
        (void)sa::parse_arguments(info, {"--causal"});
        FAIL("--causal was accepted");
    } catch (const sa::UsageError& error) {
        CHECK_THAT(std::string(error.what()),
                   Equals("--causal: ch00-test does not use this option; the scores come before any mask"));
    }
    CHECK_THAT(sa::usage(info), !Contains("--causal") && Contains("--wv"));
    CHECK_THAT(sa::usage(program()), Contains("--causal"));
}
