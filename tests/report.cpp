// A chapter program's output: tables exactly as sa::show prints them, and figures only with --figures.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "report.hpp"
#include "svg.hpp"

TEST_CASE("A Report prints exactly what sa::show prints, with the shape in the heading", "[report]")
{
    sa::Example example = sa::mouse_eats_cheese();
    example.precision = 2;
    const std::vector<std::string> features{"f1", "f2"};
    sa::Report report(example);
    report.table("Embeddings E", example.embeddings, example.tokens, features);
    report.table("Values V", example.embeddings, example.tokens, features, "one row per key");
    report.text("A free line\n\n");
    report.show("The heading as given:", example.w_query, features, features);
    INFO("table adds \" (n×m):\" or \" (n×m), note:\" to the title; show and text add nothing");
    const std::string expected =
        sa::show("Embeddings E (3×2):", example.embeddings, example.tokens, features, 2) +
        sa::show("Values V (3×2), one row per key:", example.embeddings, example.tokens, features, 2) +
        "A free line\n\n" + sa::show("The heading as given:", example.w_query, features, features, 2);
    CHECK(report.str() == expected);
}

TEST_CASE("A Report writes a heatmap only when the run has a figures folder", "[report]")
{
    const auto folder = std::filesystem::temp_directory_path() / ("report-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
    sa::Example example = sa::mouse_eats_cheese();
    const std::vector<std::string> features{"f1", "f2"};
    sa::Heatmap expected;
    expected.title = "Embeddings E";
    expected.values = example.embeddings;
    expected.row_labels = example.tokens;
    expected.col_labels = features;
    expected.row_axis = "token";
    expected.col_axis = "feature";
    expected.precision = example.precision;
    expected.scale_label = "coordinate";
    const auto draw = [&](const sa::Report& report) {
        report.heatmap("embeddings.svg", {.title = "Embeddings E", .values = example.embeddings,
                                          .row_labels = example.tokens, .col_labels = features, .row_axis = "token",
                                          .col_axis = "feature", .precision = 0, .scale_label = "coordinate"});
    };

    SECTION("without --figures nothing is drawn or written")
    {
        example.precision = 12;  // more decimals than a heatmap draws: drawing it would throw
        CHECK_NOTHROW(draw(sa::Report(example)));
    }
    SECTION("with --figures the file holds the same document as heatmap_svg, at the example's precision")
    {
        example.figures = folder.string();
        const sa::Report report(example);
        draw(report);
        CHECK(report.str().empty());  // a figure adds nothing to the printed text
        std::ifstream file(folder / "embeddings.svg", std::ios::binary);
        REQUIRE(file);
        std::stringstream read;
        read << file.rdbuf();
        INFO("the figure was asked for with .precision = 0; the report draws it at the example's 3 decimals");
        CHECK(read.str() == sa::heatmap_svg(expected));
    }
    SECTION("a line plot goes to the same folder, as line_plot_svg draws it")
    {
        example.figures = folder.string();
        const sa::LinePlot plot{.title = "A line", .x_label = "x", .y_label = "y",
                                .series = {{.name = "y = 2x", .x = {1, 2, 3}, .y = {2, 4, 6}}}};
        sa::Report(example).line_plot("line.svg", plot);
        std::ifstream file(folder / "line.svg", std::ios::binary);
        REQUIRE(file);
        std::stringstream read;
        read << file.rdbuf();
        CHECK(read.str() == sa::line_plot_svg(plot));
    }
    std::filesystem::remove_all(folder);
}
