// The book's matrix: shapes, bounds checks and the fixed printing every chapter relies on.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "matrix.hpp"

#include <fmt/format.h>

using Catch::Matchers::Contains;

TEST_CASE("A matrix written row by row has one row per inner list", "[matrix]")
{
    const sa::Matrix matrix{{2, 0}, {1, 2}, {2, 0}};
    CHECK(matrix.rows() == 3);
    CHECK(matrix.cols() == 2);
    CHECK(sa::shape(matrix) == "3×2");
    CHECK(matrix(1, 1) == 2.0);
}

TEST_CASE("Ragged rows are refused with the row that differs", "[matrix]")
{
    CHECK_THROWS_AS(sa::Matrix({{1, 2}, {3}}), sa::ShapeError);
    CHECK_THROWS_WITH(sa::Matrix({{1, 2}, {3}}), Contains("row 2 has 1 entries but row 1 has 2"));
}

TEST_CASE("Every access is bounds-checked, in every build type", "[matrix]")
{
    sa::Matrix matrix(2, 3);
    CHECK_THROWS_AS(matrix(2, 0), std::out_of_range);
    CHECK_THROWS_AS(matrix(0, 3), std::out_of_range);
    CHECK_THROWS_WITH(matrix(5, 1), Contains("(5, 1) is outside a 2×3 matrix"));
    const sa::Matrix& constant = matrix;
    CHECK_THROWS_AS(constant(0, 3), std::out_of_range);
}

TEST_CASE("Transposing swaps rows and columns", "[matrix]")
{
    const sa::Matrix transposed = sa::transpose(sa::Matrix{{1, 2, 3}, {4, 5, 6}});
    REQUIRE(sa::shape(transposed) == "3×2");
    CHECK(transposed == sa::Matrix{{1, 4}, {2, 5}, {3, 6}});
}

TEST_CASE("Numbers print the same on every machine", "[matrix]")
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    CHECK(sa::format_number(2.0 * std::sqrt(2.0), 3) == "2.828");
    CHECK(sa::format_number(1.0 / 3.0, 6) == "0.333333");
    INFO("a NaN prints as nan whatever its sign bit (0/0 sets it on some CPUs)");
    CHECK(sa::format_number(nan, 3) == "nan");
    CHECK(sa::format_number(-nan, 3) == "nan");
    CHECK(sa::format_number(-inf, 3) == "-inf");
    CHECK(sa::format_number(inf, 3) == "inf");
    INFO("a value that rounds to zero prints without a sign");
    CHECK(sa::format_number(-0.0, 3) == "0.000");
    CHECK(sa::format_number(-0.0001, 3) == "0.000");
    CHECK(sa::format_number(-0.0006, 3) == "-0.001");
}

TEST_CASE("Magnitudes far outside the book's print in scientific notation with the same decimals", "[matrix]")
{
    INFO("the rule: |x| >= 1e15, or 0 < |x| < 1e-100; the mantissa has as many decimals as fixed-point would");
    CHECK(sa::format_number(1e200, 3) == "1.000e+200");
    CHECK(sa::format_number(-1e200, 3) == "-1.000e+200");
    CHECK(sa::format_number(1e-200, 3) == "1.000e-200");
    CHECK(sa::format_number(-2.5e-150, 1) == "-2.5e-150");
    CHECK(sa::format_number(std::numeric_limits<double>::max(), 3) == "1.798e+308");
    CHECK(sa::format_number(std::numeric_limits<double>::denorm_min(), 2) == "4.94e-324");
    INFO("at the bounds: 1e15 is the first scientific number above; just below it, 15 digits before the point");
    CHECK(sa::format_number(1e15, 3) == "1.000e+15");
    CHECK(sa::format_number(999999999999999.0, 0) == "999999999999999");
    CHECK(sa::format_number(1e-100, 3) == "0.000");
    CHECK(sa::format_number(9.9e-101, 3) == "9.900e-101");
    INFO("a rounding residue such as cos(π/2) = 6.1e-17 stays 0.000, and 0 stays 0.000");
    CHECK(sa::format_number(std::cos(std::acos(-1.0) / 2.0), 3) == "0.000");
    CHECK(sa::format_number(0.0, 3) == "0.000");
    CHECK(sa::format_number(123456.789, 3) == "123456.789");
    INFO("a table lines its cells up whatever their notation");
    CHECK(sa::format_table(sa::Matrix{{1e200, 0}, {0, 1}}, {}, {}, 3) ==
          "  1.000e+200       0.000\n"
          "       0.000       1.000\n");
}

TEST_CASE("A table lines up labels and fixed-precision cells", "[matrix]")
{
    const std::string table = sa::format_table(sa::Matrix{{0, 4}, {4, 4}}, {"Mouse", "Eats"}, {"Mouse", "Eats"}, 3);
    CHECK(table ==
          "         Mouse   Eats\n"
          "  Mouse  0.000  4.000\n"
          "  Eats   4.000  4.000\n");
    CHECK_THROWS_AS(sa::format_table(sa::Matrix{{1, 2}}, {"a", "b"}, {}, 3), sa::ShapeError);
}

TEST_CASE("{fmt} prints a matrix as the book's table, at three decimals unless told otherwise", "[matrix]")
{
    const sa::Matrix scores{{0, 4, 0}, {4, 4, 4}};
    INFO("the same cells as format_table without labels, and no newline after the last row");
    CHECK(fmt::format("{}", scores) ==
          "  0.000  4.000  0.000\n"
          "  4.000  4.000  4.000");
    CHECK(fmt::format("{:.1}", scores) + "\n" == sa::format_table(scores, {}, {}, 1));
    INFO("0 decimals: 2.6 rounds to 3, and -0.4 rounds to a zero, which prints without its sign");
    CHECK(fmt::format("{:.0}", sa::Matrix{{2.6, -0.4}}) == "  3  0");
    INFO("a precision no double can use is refused, not read into an overflowing int");
    CHECK_THROWS_AS(fmt::format(fmt::runtime("{:.99999999999}"), scores), fmt::format_error);
    CHECK_THROWS_AS(fmt::format(fmt::runtime("{:.18}"), scores), fmt::format_error);
    CHECK_THROWS_AS(fmt::format(fmt::runtime("{:x}"), scores), fmt::format_error);
}

TEST_CASE("identical compares bits: NaN matches the same NaN, 0.0 and -0.0 differ", "[matrix]")
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const sa::Matrix with_nan{{1, nan}};
    INFO("== says a NaN differs even from itself; a bit-for-bit comparison of two runs must not");
    CHECK_FALSE(with_nan == with_nan);
    CHECK(sa::identical(with_nan, with_nan));
    CHECK_FALSE(sa::identical(sa::Matrix{{0.0}}, sa::Matrix{{-0.0}}));
    CHECK_FALSE(sa::identical(sa::Matrix{{1, 2}}, sa::Matrix{{1}, {2}}));
    CHECK(sa::identical(sa::Matrix{{1, 2}}, sa::Matrix{{1, 2}}));
}

TEST_CASE("numbered_labels counts from 1 unless told, after the prefix", "[matrix]")
{
    INFO("feature_labels is numbered_labels with the prefix f");
    CHECK(sa::numbered_labels("s", 3) == std::vector<std::string>{"s1", "s2", "s3"});
    CHECK(sa::numbered_labels("f", 4) == sa::feature_labels(4));
    CHECK(sa::numbered_labels("pos ", 2, 0) == std::vector<std::string>{"pos 0", "pos 1"});
    CHECK(sa::numbered_labels("a = ", 0, 0).empty());
}

TEST_CASE("The identity matrix has ones on the diagonal and changes nothing it multiplies", "[matrix]")
{
    const sa::Matrix identity = sa::identity(3);
    CHECK(identity == sa::Matrix{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}});
    CHECK(sa::identity(0).empty());
}

TEST_CASE("row_vector copies one row as a 1×d matrix and refuses a row outside", "[matrix]")
{
    const sa::Matrix matrix{{2, 0, 1}, {1, 2, 3}};
    CHECK(sa::identical(sa::row_vector(matrix, 1), sa::Matrix{{1, 2, 3}}));
    CHECK_THROWS_AS(sa::row_vector(matrix, 2), std::out_of_range);
    CHECK_THROWS_WITH(sa::row_vector(matrix, 2), Contains("row 2 of a 2×3 matrix"));
}

TEST_CASE("stack_rows puts the parts one under another", "[matrix]")
{
    const sa::Matrix top{{1, 2}};
    const sa::Matrix bottom{{3, 4}, {5, 6}};
    CHECK(sa::identical(sa::stack_rows({top, bottom}), sa::Matrix{{1, 2}, {3, 4}, {5, 6}}));
    CHECK(sa::stack_rows({}).empty());
    CHECK_THROWS_AS(sa::stack_rows({top, sa::Matrix{{1, 2, 3}}}), sa::ShapeError);
    CHECK_THROWS_WITH(sa::stack_rows({top, sa::Matrix{{1, 2, 3}}}), Contains("a part is 1×3 but the first is 1×2"));
}

TEST_CASE("vector_length is the square root of the sum of squares of one row", "[matrix]")
{
    INFO("|(3, 4)| = sqrt(9 + 16) = 5, exactly; |(1, 2, 3, 4)| = sqrt(30)");
    CHECK(sa::vector_length(sa::Matrix{{3, 4}}) == 5.0);
    CHECK_THAT(sa::vector_length(sa::Matrix{{1, 2, 3, 4}}), Catch::Matchers::WithinRel(std::sqrt(30.0), 1e-15));
    CHECK_THROWS_AS(sa::vector_length(sa::Matrix{{1, 2}, {3, 4}}), sa::ShapeError);
    CHECK_THROWS_WITH(sa::vector_length(sa::Matrix{{1, 2}, {3, 4}}), Contains("vector_length: the vector is 2×2"));
}

TEST_CASE("A matrix with one zero dimension is the empty 0×0 matrix", "[matrix]")
{
    INFO("with no entries there is nothing to hold a shape: 0×3 and 3×0 both report 0×0, like Matrix()");
    for (const sa::Matrix& empty : {sa::Matrix(0, 3), sa::Matrix(3, 0), sa::Matrix(0, 0, 7.0)}) {
        CHECK(empty.rows() == 0);
        CHECK(empty.cols() == 0);
        CHECK(empty.empty());
        CHECK(sa::shape(empty) == "0×0");
        CHECK(empty == sa::Matrix());
        CHECK(sa::identical(empty, sa::Matrix()));
    }
    INFO("rows without entries make the same empty matrix; an empty row next to a full one is ragged");
    CHECK(sa::Matrix::from_rows({{}, {}}) == sa::Matrix());
    CHECK_THROWS_AS(sa::Matrix::from_rows({{}, {1.0}}), sa::ShapeError);
}

TEST_CASE("The first index past the end throws: row == rows() or col == cols()", "[matrix]")
{
    INFO("indices count from 0, so a 2×3 matrix ends at (1, 2); (2, x) and (x, 3) would read the next row or "
         "past the storage");
    sa::Matrix matrix(2, 3, 1.0);
    const sa::Matrix& constant = matrix;
    CHECK(matrix(1, 2) == 1.0);
    CHECK_THROWS_WITH(matrix(2, 0), Contains("(2, 0) is outside a 2×3 matrix"));
    CHECK_THROWS_WITH(matrix(1, 3), Contains("(1, 3) is outside a 2×3 matrix"));
    CHECK_THROWS_WITH(constant(2, 0), Contains("(2, 0) is outside a 2×3 matrix"));
    CHECK_THROWS_WITH(constant(1, 3), Contains("(1, 3) is outside a 2×3 matrix"));
    INFO("(0, 3) of a 2×3 matrix is (1, 0) in the row-major storage: it must not be read as that entry");
    CHECK_THROWS_AS(matrix(0, 3), std::out_of_range);
    INFO("an empty matrix has no (0, 0)");
    CHECK_THROWS_AS(sa::Matrix()(0, 0), std::out_of_range);
}

TEST_CASE("identical compares shapes before entries: 2×3 and 3×2 with the same six numbers differ", "[matrix]")
{
    const sa::Matrix wide{{1, 2, 3}, {4, 5, 6}};
    const sa::Matrix tall{{1, 2}, {3, 4}, {5, 6}};
    INFO("both store 1, 2, 3, 4, 5, 6 in this order, so a comparison of the storage alone would call them the same");
    CHECK_FALSE(sa::identical(wide, tall));
    CHECK_FALSE(sa::identical(tall, wide));
    CHECK_FALSE(wide == tall);
}
