// The chapter programs' command line: the reader's own numbers, and clear errors for bad ones.
#include <catch2/catch.hpp>

#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using Catch::Matchers::StartsWith;

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

TEST_CASE("NaN and infinities are refused in one line naming the option, the row and the entry", "[cli]")
{
    INFO("a table of NaN would end in \"bit for bit: true\" and teach nothing; the library's edge rules for NaN "
         "and infinities are the tests' to try");
    CHECK_THAT(error_of({"--embeddings", "2,0;1,nan;2,0"}),
               Equals("--embeddings row 2: \"1,nan\": entry 2 is \"nan\"; expected a finite number (NaN and "
                      "infinities are refused)"));
    for (const char* entry : {"inf", "-inf", "+inf", "infinity", "NaN", "-nan", " inf "}) {
        INFO(entry);
        CHECK_THAT(error_of({"--wq", fmt::format("0,1;{},0", entry)}),
                   StartsWith("--wq row 2: ") && Contains("entry 1 is ") && Contains("expected a finite number"));
    }
    INFO("the same rule for a chapter's own matrix option, read with matrix_option");
    sa::ProgramInfo info = program();
    info.options = {{"--upstream", "M", "dL/dO", "0,1;0,0;0,0"}};
    const sa::Example example = sa::parse_arguments(info, {"--upstream", "0,1;-inf,0;0,0"});
    CHECK_THROWS_WITH(sa::matrix_option(example, "--upstream"),
                      StartsWith("--upstream row 2: ") && Contains("entry 1 is \"-inf\""));
    INFO("finite numbers at the ends of a double's range are taken as they are");
    const sa::Matrix extreme = sa::parse_matrix("--embeddings", "1e200,-1e-200;1.7976931348623157e308,4.9e-324");
    CHECK(extreme(0, 0) == 1e200);
    CHECK(extreme(0, 1) == -1e-200);
    CHECK(extreme(1, 0) == std::numeric_limits<double>::max());
    CHECK(extreme(1, 1) == std::numeric_limits<double>::denorm_min());
}

TEST_CASE("Malformed matrices get one message naming the option, the row and the entry", "[cli]")
{
    CHECK_THAT(error_of({"--embeddings", "2,0;1,x;2,0"}),
               Equals("--embeddings row 2: \"1,x\": \"x\" is not a number; expected rows separated by ';' and "
                      "entries by ',', e.g. \"2,0;1,2\""));
    CHECK_THAT(error_of({"--embeddings", "2,0;1,2,3;2,0"}),
               Contains("--embeddings row 2") && Contains("has 3 entries but row 1 has 2"));
    CHECK_THAT(error_of({"--embeddings", ""}), Contains("--embeddings: the matrix is empty"));
    CHECK_THAT(error_of({"--embeddings", "2,0;;2,0"}),
               Equals("--embeddings row 2 is empty; expected rows separated by ';' and entries by ',', e.g. \"2,0;1,2\""));
    CHECK_THAT(error_of({"--wq", "1.5abc,0;0,1"}), Contains("\"1.5abc\" is not a number"));
    INFO("1e400 is a number, but no double can hold it");
    CHECK_THAT(error_of({"--wq", "1e400,0;0,1"}), Contains("\"1e400\" is out of the range of a double"));
    CHECK_THAT(error_of({"--embeddings", "1;2,3"}), Contains("has 2 entries but row 1 has 1 entry"));
}

TEST_CASE("Shapes that do not fit together are named with the expected shape", "[cli]")
{
    CHECK_THAT(error_of({"--wq", "0,1;1,0;1,1"}), Equals("--wq: expected 2 rows (one per embedding feature), got 3"));
    CHECK_THAT(error_of({"--wv", "1,0,0"}), Equals("--wv: expected 2 rows (one per embedding feature), got 1"));
    INFO("the reader gave both --wq and --wk, so a d_k that differs is the reader's to fix, and --wk is named");
    CHECK_THAT(error_of({"--wq", "0,1;1,0", "--wk", "1,0,0;0,1,0"}),
               Equals("--wk: expected 2 columns (d_k, the same as --wq), got 3"));
    CHECK_THAT(error_of({"--tokens", "Mouse,Eats"}),
               Equals("--tokens: expected 3 names (one per embedding row), got 2"));
    INFO("a projection the reader gave is checked against the reader's embeddings");
    CHECK_THAT(error_of({"--embeddings", "1,2,3;4,5,6", "--wq", "1,0;0,1"}),
               Equals("--wq: expected 3 rows (one per embedding feature), got 2"));
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

namespace {

// Runs a program on the arguments and returns its exit status, what it printed on
// stdout and on stderr, and whether the chapter's body ran.
struct Run {
    int status = 0;
    std::string out = {};
    std::string err = {};
    bool body_ran = false;
};

Run run(const sa::ProgramInfo& info, std::vector<std::string> words)
{
    words.insert(words.begin(), info.name);
    std::vector<char*> argv;
    for (auto& word : words) {
        argv.push_back(word.data());
    }
    Run result;
    std::ostringstream out;
    std::ostringstream err;
    std::streambuf* const old_out = std::cout.rdbuf(out.rdbuf());
    std::streambuf* const old_err = std::cerr.rdbuf(err.rdbuf());
    try {
        result.status = sa::run_program(info, static_cast<int>(argv.size()), argv.data(), [&](const sa::Example&) {
            result.body_ran = true;
            return std::string("result\n");
        });
    } catch (...) {
        std::cout.rdbuf(old_out);
        std::cerr.rdbuf(old_err);
        throw;
    }
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
    result.out = out.str();
    result.err = err.str();
    return result;
}

// A program like ch02-scores: it reads the queries and keys but never the values.
sa::ProgramInfo scores_only()
{
    sa::ProgramInfo info = program();
    info.unused_options = {{"--wv", "the scores use only the queries and keys"}};
    return info;
}

}  // namespace

TEST_CASE("The form --name=value is the same as --name value", "[cli]")
{
    const sa::Example joined = sa::parse_arguments(program(), {"--embeddings=1,2;3,4", "--tokens=A,B", "--precision=1"});
    const sa::Example apart = sa::parse_arguments(program(), {"--embeddings", "1,2;3,4", "--tokens", "A,B", "--precision", "1"});
    CHECK(joined.embeddings == sa::Matrix{{1, 2}, {3, 4}});
    CHECK(joined.embeddings == apart.embeddings);
    CHECK(joined.tokens == apart.tokens);
    CHECK(joined.precision == 1);
    INFO("only the first '=' splits: the value keeps the rest, and an empty value is an empty matrix");
    CHECK_THAT(error_of({"--wq="}), Contains("--wq: the matrix is empty"));
    CHECK_THAT(error_of({"--embeddings=2,0;1,x;2,0"}), Contains("--embeddings row 2: \"1,x\": \"x\" is not a number"));
    INFO("a flag takes no value, so --causal=yes is refused instead of read as --causal");
    CHECK_THAT(error_of({"--causal=yes"}), Equals("--causal: takes no value, got \"yes\""));
    INFO("an option the program does not read is refused in either form");
    try {
        (void)sa::parse_arguments(scores_only(), {"--wv=1,0;0,1"});
        FAIL("--wv=... was accepted by a program that does not read W_V");
    } catch (const sa::UsageError& error) {
        CHECK_THAT(std::string(error.what()), StartsWith("--wv: ch00-test does not use this option"));
    }
    CHECK_THAT(error_of({"--frobnicate=3"}), Equals("unknown option \"--frobnicate\"; run ch00-test --help for the options"));
}

TEST_CASE("An option followed by another option is missing its value", "[cli]")
{
    INFO("no value of the book's options starts with --, so --wq --causal lacks the matrix instead of reading one "
         "called --causal");
    CHECK_THAT(error_of({"--wq", "--causal"}), Equals("--wq: missing value; expected a matrix such as \"0,1;1,0\""));
    CHECK_THAT(error_of({"--tokens", "--precision", "2"}), StartsWith("--tokens: missing value"));
    INFO("a negative number has one dash and is a value");
    CHECK(sa::parse_arguments(program(), {"--wq", "-1,0;0,-1"}).w_query == sa::Matrix{{-1, 0}, {0, -1}});
}

TEST_CASE("An empty row or entry is called empty, not a number that is missing", "[cli]")
{
    INFO("a ';' at the end starts a third row with nothing in it");
    CHECK_THAT(error_of({"--embeddings", "1,2;3,4;"}),
               Equals("--embeddings row 3 is empty (the matrix ends with ';'); expected rows separated by ';' and "
                      "entries by ',', e.g. \"2,0;1,2\""));
    CHECK_THAT(error_of({"--embeddings", ";1,2"}), StartsWith("--embeddings row 1 is empty;"));
    CHECK_THAT(error_of({"--embeddings", "1,2; ;3,4"}), StartsWith("--embeddings row 2 is empty;"));
    CHECK_THAT(error_of({"--wq", "1,,2;0,1,0"}), StartsWith("--wq row 1: \"1,,2\": entry 2 is empty;"));
    CHECK_THAT(error_of({"--wq", "0,1;1,"}), StartsWith("--wq row 2: \"1,\": entry 2 is empty;"));
}

TEST_CASE("Blanks around an entry do not count, on either side, but blanks inside one do", "[cli]")
{
    const sa::Matrix expected{{1, 2}, {3, 4}};
    INFO("the rule: spaces, tabs and line breaks before and after an entry are dropped");
    CHECK(sa::parse_matrix("--wq", " 1 , 2 ;3,4") == expected);
    CHECK(sa::parse_matrix("--wq", "1 ,2; 3, 4 ") == expected);
    CHECK(sa::parse_matrix("--wq", "\t1,2\t;3,4\n") == expected);
    INFO("a blank between two digits splits nothing: \"1 2\" is not one number, and not two");
    CHECK_THAT(error_of({"--wq", "1 2,0;0,1"}), Contains("\"1 2\" is not a number"));
    INFO("names and whole numbers follow the same rule");
    CHECK(sa::parse_arguments(program(), {"--tokens", " A , B ,C "}).tokens == std::vector<std::string>{"A", "B", "C"});
    CHECK(sa::parse_arguments(program(), {"--precision", " 4 "}).precision == 4);
}

TEST_CASE("A number has at most one sign", "[cli]")
{
    CHECK(sa::parse_matrix("--wq", "+1,-1") == sa::Matrix{{1, -1}});
    INFO("from_chars would read -1 after a '+' is dropped, so +-1 must be refused before it gets there");
    CHECK_THAT(error_of({"--wq", "+-1,0;0,1"}), Contains("\"+-1\" is not a number"));
    CHECK_THAT(error_of({"--wq", "++1,0;0,1"}), Contains("\"++1\" is not a number"));
    CHECK_THAT(error_of({"--wq", "+,0;0,1"}), Contains("\"+\" is not a number"));
}

TEST_CASE("A line break in the reader's text is escaped, so every message stays one line", "[cli]")
{
    const std::string message = error_of({"--wq", "1,x\ny;0,1"});
    CHECK_THAT(message, Contains("\"1,x\\ny\""));
    CHECK(message.find('\n') == std::string::npos);
    CHECK(error_of({"--tokens", "A,\n,C"}).find('\n') == std::string::npos);
    CHECK(error_of({"--precision", "1\n2"}).find('\n') == std::string::npos);
    CHECK_THAT(error_of({"--\x01"}), Equals("unknown option \"--\\x01\"; run ch00-test --help for the options"));
}

TEST_CASE("The precision takes 0 to 10, and the seed any whole number from 0 up", "[cli]")
{
    INFO("0 decimals and 10 decimals are both inside the documented range 0 to 10");
    CHECK(sa::parse_arguments(program(), {"--precision", "0"}).precision == 0);
    CHECK(sa::parse_arguments(program(), {"--precision", "10"}).precision == 10);
    INFO("one step outside on either side is refused");
    CHECK_THAT(error_of({"--precision", "-1"}), Equals("--precision: expected a whole number from 0 to 10, got \"-1\""));
    CHECK_THAT(error_of({"--precision", "11"}), Equals("--precision: expected a whole number from 0 to 10, got \"11\""));
    CHECK_THAT(error_of({"--precision", "2.5"}), Contains("expected a whole number"));

    sa::ProgramInfo seeded = program();
    seeded.uses_seed = true;
    INFO("a seed is any whole number from 0 to 2^31 - 1 = 2147483647; 0 is a seed like any other");
    CHECK(sa::parse_arguments(seeded, {"--seed", "0"}).seed == 0);
    CHECK(sa::parse_arguments(seeded, {"--seed", "2147483647"}).seed == 2147483647L);
    const auto seed_error = [&](const std::string& text) {
        try {
            (void)sa::parse_arguments(seeded, {"--seed", text});
        } catch (const sa::UsageError& error) {
            return std::string(error.what());
        }
        return std::string("(no error)");
    };
    CHECK_THAT(seed_error("-1"), Equals("--seed: expected a whole number from 0 to 2147483647, got \"-1\""));
    CHECK_THAT(seed_error("2147483648"), Contains("from 0 to 2147483647"));
}

TEST_CASE("Changing only the embeddings works: defaults that no longer fit become the identity", "[cli]")
{
    INFO("4 tokens with 3 features: the 2×2 default projections cannot multiply a 4×3 E, so each becomes I (3×3)");
    const sa::Example example = sa::parse_arguments(program(), {"--embeddings", "1,0,2;0,1,1;1,1,0;2,0,1"});
    const sa::Matrix identity3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    CHECK(example.w_query == identity3);
    CHECK(example.w_key == identity3);
    CHECK(example.w_value == identity3);
    INFO("default names: one per row of E, so 4 names for a 4×3 E (not 3, its number of columns)");
    CHECK(example.tokens == std::vector<std::string>{"t1", "t2", "t3", "t4"});
    INFO("embeddings with the default's 2 features keep the default projections: W_Q still swaps the features");
    CHECK(sa::parse_arguments(program(), {"--embeddings", "1,0;0,1;1,1"}).w_query == sa::mouse_eats_cheese().w_query);
}

TEST_CASE("Only a 3-column W_Q: W_K follows its d_k, and no option the reader did not give is blamed", "[cli]")
{
    const sa::Example example = sa::parse_arguments(program(), {"--wq", "1,0,1;0,1,1"});
    INFO("d_k = 3 from --wq, d_model = 2 from the default E, so W_K is the 2×3 identity: ones on the diagonal");
    CHECK(example.w_key == sa::Matrix{{1, 0, 0}, {0, 1, 0}});
    INFO("W_V does not depend on d_k, and its 2×2 default still fits");
    CHECK(example.w_value == sa::mouse_eats_cheese().w_value);
    INFO("and the other way round: only --wk with d_k = 1 makes W_Q the 2×1 identity");
    CHECK(sa::parse_arguments(program(), {"--wk", "1;1"}).w_query == sa::Matrix{{1}, {0}});
}

TEST_CASE("A program checks only what it reads: W_V's default never stops a program without values", "[cli]")
{
    INFO("like ch05-softmax: new Q and K for 3 features, and W_V, never read, does not matter");
    const Run result = run(scores_only(), {"--embeddings", "1,0,0;0,1,0", "--wq", "1,0;0,1;1,1", "--wk", "1,0;0,1;0,0"});
    CHECK(result.status == 0);
    CHECK(result.body_ran);
    INFO("nothing to report: the reader gave W_Q and W_K, and the program never shows W_V");
    CHECK(result.err.empty());
}

TEST_CASE("A run says on stderr which defaults became the identity, after its output", "[cli]")
{
    const Run result = run(program(), {"--embeddings", "1,0,2;0,1,1"});
    CHECK(result.status == 0);
    CHECK(result.out == "result\n");
    CHECK_THAT(result.err, Equals("ch00-test: note: using the identity for W_Q (3×3), W_K (3×3) and W_V (3×3), as "
                                  "their defaults do not fit your numbers\n"));
    const Run one = run(scores_only(), {"--wq", "1,0,1;0,1,1"});
    CHECK_THAT(one.err, Equals("ch00-test: note: using the identity for W_K (2×3), as its default does not fit your "
                               "numbers\n"));
}

TEST_CASE("A token name given twice is labelled with its position", "[cli]")
{
    INFO("\"the cat saw the cat\" has two rows called the: the tables need to tell them apart");
    const sa::Example example =
        sa::parse_arguments(program(), {"--tokens", "the,cat,saw,the,cat", "--embeddings", "1,0;0,1;1,1;1,0;0,1"});
    CHECK(example.tokens == std::vector<std::string>{"the#1", "cat#2", "saw", "the#4", "cat#5"});
    INFO("a label that would clash with a name the reader chose is refused instead of shown twice");
    CHECK_THAT(error_of({"--tokens", "a#2,a,a"}), StartsWith("--tokens: \"a#2\" names two tokens"));
    CHECK_THAT(error_of({"--tokens", "A,,C"}), StartsWith("--tokens: name 2 of \"A,,C\" is empty"));
}

TEST_CASE("Asking for --help prints the usage on stdout and exits 0, without running the program", "[cli]")
{
    INFO("the reader asked for the text, so it is the output (stdout, status 0), not an error");
    for (const std::string help : {"--help", "-h"}) {
        const Run result = run(program(), {"--wq", "not a matrix", help});
        CHECK(result.status == 0);
        CHECK(result.out == sa::usage(program()));
        CHECK(result.err.empty());
        CHECK_FALSE(result.body_ran);
    }
    CHECK_THAT(sa::usage(program()), StartsWith("ch00-test: a test program\n\nUsage: ch00-test [options]\n"));
    CHECK_THAT(sa::usage(program()), Contains("identity"));
}

namespace {

// A program like ch13-at-scale: --parts P may not exceed the number of tokens, so its
// default of 3 fits the book's sentence and not a shorter one.
sa::ProgramInfo with_parts()
{
    sa::ProgramInfo info = program();
    info.options = {{"--parts", "P", "workers", "3", [](const sa::Example& example) {
                         return example.tokens.size() < 3 ? std::to_string(example.tokens.size()) : std::string();
                     }}};
    return info;
}

}  // namespace

TEST_CASE("A default of the program's own that no longer fits becomes what the numbers need, and the note says so",
          "[cli]")
{
    INFO("2 tokens cannot be split between 3 workers: the default 3 becomes 2, which the reader did not type");
    const sa::Example two = sa::parse_arguments(with_parts(), {"--embeddings", "1,0;0,1"});
    CHECK(two.options.at("--parts") == "2");
    const Run result = run(with_parts(), {"--embeddings", "1,0;0,1"});
    CHECK(result.status == 0);
    CHECK_THAT(result.err, Equals("ch00-test: note: using --parts 2, as its default does not fit your numbers\n"));
    INFO("the reader's own value is never changed, and a default that fits is kept without a note");
    CHECK(sa::parse_arguments(with_parts(), {"--embeddings", "1,0;0,1", "--parts", "1"}).options.at("--parts") == "1");
    CHECK(run(with_parts(), {}).err.empty());
    INFO("with projections replaced too, one note names both kinds, the identities first");
    CHECK_THAT(run(with_parts(), {"--embeddings", "1;2"}).err,
               Equals("ch00-test: note: using the identity for W_Q (1×1), W_K (1×1) and W_V (1×1), and --parts 2, "
                      "as their defaults do not fit your numbers\n"));
}

TEST_CASE("Flags and lists of whole numbers of a program's own: --smoke, --sizes 512,1024", "[cli]")
{
    sa::ProgramInfo info = program();
    info.options = {{"--smoke", "", "a short run", ""}, {"--sizes", "N,N", "sizes", "preset"}};
    INFO("a flag takes no value: given, it reads as on; left out, as off");
    CHECK(sa::flag_option(sa::parse_arguments(info, {"--smoke"}), "--smoke"));
    CHECK_FALSE(sa::flag_option(sa::parse_arguments(info, {}), "--smoke"));
    CHECK_THROWS_WITH(sa::parse_arguments(info, {"--smoke=yes"}), Equals("--smoke: takes no value, got \"yes\""));
    INFO("a list keeps the reader's order; blanks around an entry do not count");
    const sa::Example sizes = sa::parse_arguments(info, {"--sizes", "1024, 512"});
    CHECK(sa::whole_list_option(sizes, "--sizes", 1, 32768) == std::vector<long>{1024, 512});
    INFO("an entry that is not a whole number in the range is named, with its place in the list");
    for (const auto& [text, what] : std::vector<std::pair<std::string, std::string>>{
             {"abc", "entry 1 of \"abc\" is \"abc\""}, {"-5", "entry 1 of \"-5\" is \"-5\""},
             {"512,0", "entry 2 of \"512,0\" is \"0\""}, {"512,", "entry 2 of \"512,\" is empty"},
             {"99999999999999999999", "is \"99999999999999999999\""}}) {
        CHECK_THROWS_WITH(sa::whole_list_option(sa::parse_arguments(info, {"--sizes", text}), "--sizes", 1, 32768),
                          StartsWith("--sizes: ") && Contains(what) && Contains("expected whole numbers from 1 to 32768"));
    }
    INFO("--help shows a flag without a placeholder or a default");
    CHECK_THAT(sa::usage(info), Contains("  --smoke              a short run\n"));
}

TEST_CASE("A rotary model's --heads cuts d into slices of an even width, and a misfit lists every count that fits",
          "[cli]")
{
    sa::ProgramInfo info = program();
    info.options = {{"--heads", "H", "heads", "4"}};
    const auto heads = [&](const std::string& text, std::size_t width) {
        return sa::rotary_heads_option(sa::parse_arguments(info, {"--heads", text}), width);
    };
    INFO("d = 64: 4 heads of 16 and 32 heads of 2 turn whole pairs");
    CHECK(heads("4", 64) == 4);
    CHECK(heads("32", 64) == 32);
    INFO("3 does not divide 64; 64 heads of 1 would leave no pair (and 64 is past the range, 1 to 32)");
    CHECK_THROWS_WITH(heads("3", 64), Equals("--heads: 3 heads do not cut d = 64 into slices of an even width; "
                                             "choose 1, 2, 4, 8, 16 or 32"));
    CHECK_THROWS_WITH(heads("64", 64), Equals("--heads: expected a whole number from 1 to 32, got \"64\""));
    INFO("d = 12: h = 4 divides it into slices of 3, odd; the counts with even slices are 1, 2, 3 and 6");
    CHECK_THROWS_WITH(heads("4", 12), Equals("--heads: 4 heads do not cut d = 12 into slices of an even width; "
                                             "choose 1, 2, 3 or 6"));
    INFO("d = 1 has no slice of an even width at all");
    CHECK_THROWS_WITH(heads("1", 1), Equals("--heads: d = 1 is too narrow to cut into slices of an even width"));
}

TEST_CASE("The --help text shows an option with no default without one, and the program knows which options were given",
          "[cli]")
{
    sa::ProgramInfo info = program();
    info.options = {{"--speed", "FILE", "write the speed to FILE", ""}, {"--length", "N", "characters", "120"}};
    INFO("a file written only when asked for has no default: no \"(default )\" after its help");
    CHECK_THAT(sa::usage(info), Contains("  --speed FILE         write the speed to FILE\n"));
    CHECK_THAT(sa::usage(info), Contains("  --length N           characters (default 120)\n"));
    INFO("Example::given holds the options on the command line, not those left at their default");
    const sa::Example example = sa::parse_arguments(info, {"--length", "120"});
    CHECK(example.given.contains("--length"));
    CHECK_FALSE(example.given.contains("--speed"));
    CHECK(sa::parse_arguments(info, {}).given.empty());
}

TEST_CASE("matrix_text writes a matrix as the command line reads it", "[cli]")
{
    const sa::Matrix matrix{{1, 0.5}, {-2, 1e-7}};
    CHECK(sa::matrix_text(matrix) == "1,0.5;-2,1e-07");
    INFO("and parse_matrix reads it back to the same doubles");
    CHECK(sa::parse_matrix("--wo", sa::matrix_text(matrix)) == matrix);
    CHECK(sa::matrix_text(sa::Matrix{{1}, {1}, {1}}) == "1;1;1");
}
