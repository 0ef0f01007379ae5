// The figure writer: every figure in the book is a heatmap or a line plot written by
// src/svg.cpp, so these tests check what a reader relies on when looking at one.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <libxml/parser.h>
#include <unistd.h>

#include "svg.hpp"

using Catch::Matchers::Contains;

namespace {

constexpr double minus_infinity = -std::numeric_limits<double>::infinity();

/// Whether a document is well-formed XML, by libxml2's strict parser (no network, no
/// entity expansion). Returns an empty string for a well-formed document, else the
/// parser's first complaint.
std::string xml_problem(const std::string& xml)
{
    std::string problem;
    xmlSetStructuredErrorFunc(&problem, [](void* context, xmlErrorPtr error) {
        auto& first = *static_cast<std::string*>(context);
        if (first.empty() && error != nullptr && error->message != nullptr) {
            first = error->message;
        }
    });
    xmlDocPtr document = xmlReadMemory(xml.data(), static_cast<int>(xml.size()), "figure.svg", nullptr,
                                       XML_PARSE_NONET);
    xmlSetStructuredErrorFunc(nullptr, nullptr);
    if (document == nullptr && problem.empty()) {
        problem = "not XML";
    }
    xmlFreeDoc(document);
    return problem;
}

std::size_t count(const std::string& text, const std::string& part)
{
    std::size_t n = 0;
    for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) {
        ++n;
    }
    return n;
}

/// The attributes of every element whose start tag begins with `prefix`, e.g. "<rect class=\"cell".
std::vector<std::map<std::string, std::string>> elements(const std::string& svg, const std::string& prefix)
{
    static const std::regex attribute(R"re(([\w:-]+)="([^"]*)")re");
    std::vector<std::map<std::string, std::string>> found;
    for (std::size_t at = svg.find(prefix); at != std::string::npos; at = svg.find(prefix, at + 1)) {
        const std::string tag = svg.substr(at, svg.find('>', at) - at);
        std::map<std::string, std::string> attributes;
        for (std::sregex_iterator it(tag.begin(), tag.end(), attribute), end; it != end; ++it) {
            attributes[(*it)[1].str()] = (*it)[2].str();
        }
        found.push_back(attributes);
    }
    return found;
}

/// Relative luminance of a "#rrggbb" colour: 0 is black, 1 is white.
double luminance(const std::string& hex)
{
    REQUIRE(hex.size() == 7);
    REQUIRE(hex[0] == '#');
    const auto linear = [&](std::size_t at) {
        const double v = std::stoi(hex.substr(at, 2), nullptr, 16) / 255.0;
        return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * linear(1) + 0.7152 * linear(3) + 0.0722 * linear(5);
}

double attribute_number(const std::map<std::string, std::string>& attributes, const std::string& name)
{
    REQUIRE(attributes.count(name) == 1);
    return std::stod(attributes.at(name));
}

/// The x of a marker from its transform="translate(x,y)".
double marker_x(const std::map<std::string, std::string>& point)
{
    const std::string& transform = point.at("transform");
    REQUIRE(transform.rfind("translate(", 0) == 0);
    return std::stod(transform.substr(10));
}

sa::Heatmap masked_scores()
{
    // Scaled, causally masked scores of "Mouse eats cheese", as chapter 4 prints them.
    sa::Heatmap heatmap;
    heatmap.title = "Masked scores";
    heatmap.values = sa::Matrix{{1.414, minus_infinity, minus_infinity},
                                {2.828, 1.106, minus_infinity},
                                {1.414, 0.053, 2.828}};
    heatmap.row_labels = {"Mouse", "Eats", "Cheese"};
    heatmap.col_labels = {"Mouse", "Eats", "Cheese"};
    return heatmap;
}

std::string numbered_svg(std::size_t rows, std::size_t cols)
{
    sa::Heatmap heatmap;
    heatmap.title = "grid";
    heatmap.values = sa::Matrix(rows, cols);
    for (std::size_t r = 0; r < rows; ++r) {
        heatmap.row_labels.push_back("Token" + std::to_string(r));
        for (std::size_t c = 0; c < cols; ++c) {
            heatmap.values(r, c) = static_cast<double>(r * cols + c) - 3.5;
        }
    }
    for (std::size_t c = 0; c < cols; ++c) {
        heatmap.col_labels.push_back("Token" + std::to_string(c));
    }
    return sa::heatmap_svg(heatmap);
}

}  // namespace

TEST_CASE("the well-formedness check itself catches broken XML", "[svg]")
{
    CHECK(xml_problem("<svg><g></g></svg>").empty());
    CHECK_FALSE(xml_problem("<svg><g></svg>").empty());
    CHECK_FALSE(xml_problem("<svg a=b></svg>").empty());
    CHECK_FALSE(xml_problem("<svg>Q & A</svg>").empty());
    CHECK_FALSE(xml_problem("<svg>a < b</svg>").empty());
    CHECK_FALSE(xml_problem("<svg/><svg/>").empty());
}

TEST_CASE("a heatmap is a standalone, well-formed SVG document with a title", "[svg]")
{
    const std::string svg = sa::heatmap_svg(masked_scores());
    INFO(svg);
    CHECK(xml_problem(svg).empty());
    CHECK_THAT(svg, Contains("xmlns=\"http://www.w3.org/2000/svg\""));
    CHECK_THAT(svg, Contains("viewBox=\"0 0 "));
    const auto root = elements(svg, "<svg ");
    REQUIRE(root.size() == 1);
    CHECK(attribute_number(root[0], "width") > 0);
    CHECK(attribute_number(root[0], "height") > 0);
    CHECK(root[0].at("viewBox") == "0 0 " + root[0].at("width") + " " + root[0].at("height"));
    CHECK_THAT(svg, Contains("<title>Masked scores</title>"));
}

TEST_CASE("a heatmap has one cell per entry, each showing its value as the programs print it", "[svg]")
{
    const std::string svg = sa::heatmap_svg(masked_scores());
    INFO(svg);
    CHECK(elements(svg, "<rect class=\"cell ").size() == 9);
    // Six finite entries at three decimals; 1.414 and 2.828 appear twice each.
    CHECK(count(svg, ">1.414</text>") == 2);
    CHECK(count(svg, ">2.828</text>") == 2 + 1);  // and once as the scale's maximum
    CHECK(count(svg, ">1.106</text>") == 1);
    CHECK(count(svg, ">0.053</text>") == 1 + 1);  // and once as the scale's minimum

    sa::Heatmap two_decimals = masked_scores();
    two_decimals.precision = 2;
    const std::string coarse = sa::heatmap_svg(two_decimals);
    CHECK_THAT(coarse, Contains(">1.11</text>"));
    CHECK_THAT(coarse, !Contains(">1.106</text>"));
}

TEST_CASE("a heatmap cell shows a number exactly as format_number prints it in the tables", "[svg]")
{
    sa::Heatmap heatmap;
    heatmap.title = "tiny";
    heatmap.values = sa::Matrix{{-0.0001, 0.0004}, {-0.0006, 1.0}};
    heatmap.row_labels = {"a", "b"};
    heatmap.col_labels = {"x", "y"};
    const std::string svg = sa::heatmap_svg(heatmap);
    INFO("-0.0001 rounds to zero at three decimals: the tables print 0.000, never -0.000, and so must the figure");
    CHECK(sa::format_number(-0.0001, 3) == "0.000");
    CHECK(count(svg, ">0.000</text>") == 2);  // -0.0001 and 0.0004
    CHECK(count(svg, ">-0.000</text>") == 0);
    INFO("-0.0006 rounds to -0.001, which keeps its sign in the tables and in the figure");
    CHECK(count(svg, ">-0.001</text>") == 2);  // the cell and the scale's minimum
}

TEST_CASE("a heatmap names the tokens on both axes and titles the axes", "[svg]")
{
    sa::Heatmap heatmap = masked_scores();
    heatmap.row_axis = "query (asking)";
    heatmap.col_axis = "key (asked about)";
    const std::string svg = sa::heatmap_svg(heatmap);
    INFO(svg);
    CHECK(elements(svg, "<text class=\"row-label\"").size() == 3);
    CHECK(elements(svg, "<text class=\"col-label\"").size() == 3);
    CHECK(count(svg, ">Mouse</text>") == 2);
    CHECK(count(svg, ">Cheese</text>") == 2);
    CHECK_THAT(svg, Contains(">query (asking)</text>"));
    CHECK_THAT(svg, Contains(">key (asked about)</text>"));
}

TEST_CASE("masked (-inf) and NaN cells are drawn apart from every number", "[svg]")
{
    sa::Heatmap heatmap = masked_scores();
    heatmap.values(2, 1) = std::nan("");
    const std::string svg = sa::heatmap_svg(heatmap);
    INFO(svg);
    CHECK(xml_problem(svg).empty());
    const auto masked = elements(svg, "<rect class=\"cell masked\"");
    REQUIRE(masked.size() == 3);
    for (const auto& cell : masked) {
        CHECK(cell.at("fill") == "url(#sa-masked)");  // hatched, not a colour of the scale
    }
    CHECK(count(svg, ">\u2212\u221e</text>") == 3);
    CHECK_THAT(svg, !Contains("inf<"));

    const auto nan = elements(svg, "<rect class=\"cell nan\"");
    REQUIRE(nan.size() == 1);
    CHECK(nan[0].at("data-row") == "2");
    CHECK(nan[0].at("data-col") == "1");
    CHECK(count(svg, ">NaN</text>") == 2);  // the cell and its legend entry
    CHECK_THAT(svg, Contains("(masked)</text>"));

    // The colour scale covers the finite values only.
    const auto max = elements(svg, "<text class=\"scale-max\"");
    const auto min = elements(svg, "<text class=\"scale-min\"");
    REQUIRE(max.size() == 1);
    REQUIRE(min.size() == 1);
    CHECK(svg.substr(svg.find('>', svg.find("<text class=\"scale-max\"")), 13) == ">2.828</text>");
    CHECK(svg.substr(svg.find('>', svg.find("<text class=\"scale-min\"")), 13) == ">1.106</text>");  // 0.053 is now NaN
}

TEST_CASE("the colour scale gives its minimum and maximum", "[svg]")
{
    const std::string svg = sa::heatmap_svg(masked_scores());
    const std::size_t max_at = svg.find("<text class=\"scale-max\"");
    const std::size_t min_at = svg.find("<text class=\"scale-min\"");
    REQUIRE(max_at != std::string::npos);
    REQUIRE(min_at != std::string::npos);
    CHECK(svg.substr(svg.find('>', max_at), 13) == ">2.828</text>");
    CHECK(svg.substr(svg.find('>', min_at), 13) == ">0.053</text>");
    CHECK_THAT(svg, Contains("<linearGradient id=\"sa-scale\""));
    CHECK(elements(svg, "<rect class=\"scale\"").at(0).at("fill") == "url(#sa-scale)");
}

TEST_CASE("the largest value gets the darkest cell and the smallest the lightest, with readable text", "[svg]")
{
    const std::string svg = sa::heatmap_svg(masked_scores());
    INFO(svg);
    const auto cells = elements(svg, "<rect class=\"cell value\"");
    REQUIRE(cells.size() == 6);
    std::map<std::pair<std::string, std::string>, double> light;
    for (const auto& cell : cells) {
        light[{cell.at("data-row"), cell.at("data-col")}] = luminance(cell.at("fill"));
    }
    const double largest = light.at({"1", "0"});   // 2.828
    const double smallest = light.at({"2", "1"});  // 0.053
    for (const auto& [where, value] : light) {
        CHECK(largest <= value);
        CHECK(smallest >= value);
    }
    CHECK(light.at({"0", "0"}) < light.at({"1", "1"}));  // 1.414 is darker than 1.106
    CHECK(light.at({"2", "2"}) == largest);               // both 2.828

    // The text on the darkest cell is white, on the lightest black.
    const std::size_t dark = svg.find("data-row=\"1\" data-col=\"0\"");
    const std::size_t dark_text = svg.find("<text class=\"cell-value\"", dark);
    CHECK(svg.substr(dark_text, svg.find('>', dark_text) - dark_text).find("fill=\"#ffffff\"") != std::string::npos);
    const std::size_t pale = svg.find("data-row=\"2\" data-col=\"1\"");
    const std::size_t pale_text = svg.find("<text class=\"cell-value\"", pale);
    CHECK(svg.substr(pale_text, svg.find('>', pale_text) - pale_text).find("fill=\"#000000\"") != std::string::npos);
}

TEST_CASE("a heatmap whose values are all equal still draws every cell and one scale value", "[svg]")
{
    sa::Heatmap heatmap;
    heatmap.title = "uniform weights";
    heatmap.values = sa::Matrix(2, 2, 0.5);
    heatmap.row_labels = {"a", "b"};
    heatmap.col_labels = {"a", "b"};
    const std::string svg = sa::heatmap_svg(heatmap);
    CHECK(xml_problem(svg).empty());
    CHECK(count(svg, ">0.500</text>") == 4 + 1);
    CHECK_THAT(svg, !Contains("NaN"));
    CHECK_THAT(svg, !Contains("masked)"));
}

TEST_CASE("every text in a heatmap is XML-escaped", "[svg]")
{
    sa::Heatmap heatmap = masked_scores();
    heatmap.title = "Scores <S> & \"weights\"";
    heatmap.row_labels = {"<b>", "Tom & Jerry", "it's"};
    heatmap.col_axis = "key > query";
    const std::string svg = sa::heatmap_svg(heatmap);
    INFO(svg);
    CHECK(xml_problem(svg).empty());
    CHECK_THAT(svg, Contains("<title>Scores &lt;S&gt; &amp; &quot;weights&quot;</title>"));
    CHECK_THAT(svg, Contains(">&lt;b&gt;</text>"));
    CHECK_THAT(svg, Contains(">Tom &amp; Jerry</text>"));
    CHECK_THAT(svg, Contains(">it&#39;s</text>"));
    CHECK_THAT(svg, Contains(">key &gt; query</text>"));
    CHECK_THAT(svg, !Contains("<b>"));
}

TEST_CASE("a heatmap is the same text on every run", "[svg]")
{
    CHECK(sa::heatmap_svg(masked_scores()) == sa::heatmap_svg(masked_scores()));
}

TEST_CASE("heatmaps of 2 to 6 rows and columns keep a sensible size", "[svg]")
{
    double previous_width = 0.0;
    for (std::size_t n = 2; n <= 6; ++n) {
        const std::string svg = numbered_svg(n, n);
        INFO("a " << n << "x" << n << " heatmap");
        CHECK(xml_problem(svg).empty());
        CHECK(elements(svg, "<rect class=\"cell ").size() == n * n);
        const auto root = elements(svg, "<svg ").at(0);
        const double width = attribute_number(root, "width");
        const double height = attribute_number(root, "height");
        CHECK(width > previous_width);
        CHECK(width >= 200);
        CHECK(width <= 720);
        CHECK(height >= 120);
        CHECK(height <= 420);
        previous_width = width;
        // Cells are at least as wide as their widest text needs.
        const auto cell = elements(svg, "<rect class=\"cell ").at(0);
        CHECK(attribute_number(cell, "width") >= 56);
        CHECK(attribute_number(cell, "height") >= 32);
    }
    // Negative numbers print exactly as the chapter programs print them.
    CHECK_THAT(numbered_svg(2, 2), Contains(">-3.500</text>"));
}

TEST_CASE("a heatmap of more than 16 rows or columns is compact: its values are tooltips", "[svg]")
{
    // A character model's attention over a window of 64 is a 64x64 map: three decimals in each
    // of 4096 cells of 56 px made a 3,700 px figure shown at a fifth of its size (issue 37).
    INFO("16x16 is still a grid of numbers: 256 cells, each with its text, at least 56 px wide");
    const std::string sixteen = numbered_svg(16, 16);
    CHECK(count(sixteen, "class=\"cell-value\"") == 256);
    CHECK(attribute_number(elements(sixteen, "<rect class=\"cell ").at(0), "width") >= 56);
    for (const auto& [rows, cols] : std::vector<std::pair<std::size_t, std::size_t>>{{17, 3}, {3, 17}, {20, 20}}) {
        const std::string svg = numbered_svg(rows, cols);
        INFO("a " << rows << "x" << cols << " heatmap: compact, since one side has more than 16");
        CHECK(xml_problem(svg).empty());
        const auto cells = elements(svg, "<rect class=\"cell ");
        REQUIRE(cells.size() == rows * cols);
        CHECK(count(svg, "class=\"cell-value\"") == 0);
        CHECK(attribute_number(cells.at(0), "width") == 16);
        CHECK(attribute_number(cells.at(0), "height") == 16);
        // Row 2, column 1 holds 2 cols + 1 - 3.5, written with the precision's 3 decimals, as in a table.
        const double value = 2.0 * static_cast<double>(cols) + 1.0 - 3.5;
        CHECK(count(svg, fmt::format("<title>Token2 \u2192 Token1: {:.3f}</title></rect>", value)) == 1);
        CHECK(count(svg, "</title></rect>") == rows * cols);
        // "Token12" is 7 characters, wider than one 16 px cell: a label every k-th column, with
        // k cells (16 k px) at least as wide as the 7 characters at about 0.55 em of 13 px each.
        const auto labels = elements(svg, "<text class=\"col-label\"");
        if (cols < 17) {
            continue;  // 3 columns: one label is all a stride of more than 3 leaves
        }
        REQUIRE(labels.size() >= 2);
        const double step = attribute_number(labels.at(1), "x") - attribute_number(labels.at(0), "x");
        const auto every = static_cast<std::size_t>(step / 16.0);
        CHECK(step == 16.0 * static_cast<double>(every));
        CHECK(step >= 7 * 0.55 * 13);
        CHECK(labels.size() == (cols + every - 1) / every);
    }
    INFO("64 single characters: every column labelled, the grid 64 x 16 = 1024 px wide");
    sa::Heatmap window;
    window.values = sa::Matrix(64, 64);
    for (std::size_t i = 0; i < 64; ++i) {
        window.row_labels.push_back(std::string(1, static_cast<char>('a' + i % 26)));
        window.col_labels.push_back(window.row_labels.back());
        window.values(i, 0) = 1.0;
    }
    const std::string svg = sa::heatmap_svg(window);
    CHECK(elements(svg, "<text class=\"col-label\"").size() == 64);
    CHECK(elements(svg, "<text class=\"row-label\"").size() == 64);
    CHECK(attribute_number(elements(svg, "<svg ").at(0), "width") < 1024 + 200);
}

TEST_CASE("a long title or axis title widens the figure instead of spilling out of it", "[svg]")
{
    sa::Heatmap heatmap = masked_scores();
    const double narrow = attribute_number(elements(sa::heatmap_svg(heatmap), "<svg ").at(0), "width");
    heatmap.title = std::string(40, 'W');  // W is among the widest letters: about 0.9 em at 15 px, bold
    const double wide = attribute_number(elements(sa::heatmap_svg(heatmap), "<svg ").at(0), "width");
    CHECK(wide > narrow);
    CHECK(wide >= 40 * 0.9 * 15);

    sa::LinePlot plot;
    plot.title = std::string(60, 'M');
    plot.series = {{"line", {1, 2}, {1, 2}}};
    CHECK(attribute_number(elements(sa::line_plot_svg(plot), "<svg ").at(0), "width") >= 60 * 0.9 * 15);
}

TEST_CASE("heatmap_svg rejects what it cannot draw, naming the problem", "[svg]")
{
    sa::Heatmap heatmap = masked_scores();
    heatmap.row_labels.pop_back();
    CHECK_THROWS_AS(sa::heatmap_svg(heatmap), sa::ShapeError);
    CHECK_THROWS_WITH(sa::heatmap_svg(heatmap), Contains("2 row and 3 column labels for a 3\u00d73 matrix"));

    sa::Heatmap empty;
    empty.title = "nothing";
    CHECK_THROWS_AS(sa::heatmap_svg(empty), sa::ShapeError);
    CHECK_THROWS_WITH(sa::heatmap_svg(empty), Contains("is empty"));

    sa::Heatmap precise = masked_scores();
    precise.precision = -1;
    CHECK_THROWS_WITH(sa::heatmap_svg(precise), Contains("precision -1 is outside 0 to 10"));
}

TEST_CASE("a line plot has axes, tick labels, axis labels, a legend and a marker at every point", "[svg]")
{
    sa::LinePlot plot;
    plot.title = "Variance of the scores";
    plot.x_label = "d_k";
    plot.y_label = "variance";
    plot.series = {{"unscaled", {1, 2, 3, 4}, {1.0, 2.0, 3.0, 4.0}}, {"scaled", {1, 2, 3, 4}, {1.0, 1.0, 1.0, 1.0}}};
    const std::string svg = sa::line_plot_svg(plot);
    INFO(svg);
    CHECK(xml_problem(svg).empty());
    CHECK_THAT(svg, Contains("<title>Variance of the scores</title>"));
    CHECK_THAT(svg, Contains("viewBox=\"0 0 "));
    CHECK(elements(svg, "<g class=\"point\"").size() == 8);
    CHECK(elements(svg, "<polyline").size() == 2);
    CHECK(elements(svg, "<g class=\"legend\"").size() == 2);
    CHECK_THAT(svg, Contains(">unscaled</text>"));
    CHECK_THAT(svg, Contains(">scaled</text>"));
    CHECK_THAT(svg, Contains(">d_k</text>"));
    CHECK_THAT(svg, Contains(">variance</text>"));
    CHECK(elements(svg, "<text class=\"tick-label x\"").size() >= 3);
    CHECK(elements(svg, "<text class=\"tick-label y\"").size() >= 3);
    CHECK_THAT(svg, Contains(">4</text>"));  // linear ticks in whole steps, from 1 to 4
    // The two series are told apart by colour and by dash pattern.
    const auto lines = elements(svg, "<polyline");
    CHECK(lines[0].at("stroke") != lines[1].at("stroke"));
    CHECK(lines[0].count("stroke-dasharray") == 0);
    CHECK(lines[1].count("stroke-dasharray") == 1);
    CHECK(sa::line_plot_svg(plot) == svg);
}

TEST_CASE("on a logarithmic axis 10 lies halfway between 1 and 100, with ticks at powers of ten", "[svg]")
{
    sa::LinePlot plot;
    plot.title = "log";
    plot.x_label = "x";
    plot.y_label = "y";
    plot.log_x = true;
    plot.series = {{"line", {1, 10, 100}, {3, 2, 1}}};
    const std::string svg = sa::line_plot_svg(plot);
    INFO(svg);
    CHECK(xml_problem(svg).empty());
    const auto points = elements(svg, "<g class=\"point\"");
    REQUIRE(points.size() == 3);
    const double at_1 = marker_x(points[0]);
    const double at_10 = marker_x(points[1]);
    const double at_100 = marker_x(points[2]);
    CHECK(at_1 < at_10);
    CHECK_THAT(at_10, Catch::Matchers::WithinAbs((at_1 + at_100) / 2.0, 0.011));
    for (const char* label : {">1</text>", ">10</text>", ">100</text>"}) {
        CHECK_THAT(svg, Contains(label));
    }
}

TEST_CASE("a logarithmic axis of powers of two gets its ticks at powers of two", "[svg]")
{
    sa::LinePlot plot;
    plot.title = "variance against d_k";
    plot.x_label = "d_k";
    plot.y_label = "variance";
    plot.log_x = true;
    plot.log_y = true;
    sa::Series unscaled{"unscaled", {}, {}};
    sa::Series scaled{"scaled", {}, {}};
    for (int d = 1; d <= 512; d *= 2) {
        unscaled.x.push_back(d);
        unscaled.y.push_back(d * 1.03);
        scaled.x.push_back(d);
        scaled.y.push_back(1.03);
    }
    plot.series = {unscaled, scaled};
    const std::string svg = sa::line_plot_svg(plot);
    INFO(svg);
    CHECK(xml_problem(svg).empty());
    const auto x_labels = elements(svg, "<text class=\"tick-label x\"");
    CHECK(x_labels.size() >= 5);
    CHECK_THAT(svg, Contains(">512</text>"));
    CHECK_THAT(svg, Contains(">16</text>"));
    // The y values are not powers of two, so that axis counts in powers of ten.
    CHECK_THAT(svg, Contains(">1000</text>"));
    CHECK_THAT(svg, Contains(">1</text>"));
    // Equal ratios, equal distances: 4 is as far from 2 as 2 is from 1.
    const auto points = elements(svg, "<g class=\"point\" data-series=\"0\"");
    CHECK_THAT(marker_x(points[2]) - marker_x(points[1]),
               Catch::Matchers::WithinAbs(marker_x(points[1]) - marker_x(points[0]), 0.011));

    plot.log_x_base = 10;
    CHECK_THAT(sa::line_plot_svg(plot), !Contains(">512</text>"));
}

TEST_CASE("line_plot_svg rejects what it cannot draw, naming the series and the point", "[svg]")
{
    sa::LinePlot plot;
    plot.title = "bad";
    CHECK_THROWS_WITH(sa::line_plot_svg(plot), Contains("has no points"));

    plot.series = {{"short", {1, 2, 3}, {1, 2}}};
    CHECK_THROWS_AS(sa::line_plot_svg(plot), std::invalid_argument);
    CHECK_THROWS_WITH(sa::line_plot_svg(plot), Contains("series \"short\" has 3 x values but 2 y values"));

    plot.series = {{"zero", {0, 1}, {1, 2}}};
    plot.log_x = true;
    CHECK_THROWS_WITH(sa::line_plot_svg(plot), Contains("series \"zero\" has x = 0 at point 0") &&
                                                   Contains("logarithmic x axis needs positive values"));
    plot.log_x = false;
    plot.log_y = true;
    plot.series = {{"negative", {1, 2}, {1, -2}}};
    CHECK_THROWS_WITH(sa::line_plot_svg(plot), Contains("series \"negative\" has y = -2 at point 1"));

    plot.log_y = false;
    plot.series = {{"hole", {1, 2}, {std::nan(""), 2}}};
    CHECK_THROWS_WITH(sa::line_plot_svg(plot), Contains("series \"hole\" has a value that is not finite at point 0"));

    plot.series = {{"fine", {1, 2}, {1, 2}}};
    plot.log_x_base = 3;
    CHECK_THROWS_WITH(sa::line_plot_svg(plot), Contains("logarithmic base 3"));
}

TEST_CASE("write_figure writes the document, or nothing when there is no folder", "[svg]")
{
    const auto folder = std::filesystem::temp_directory_path() / ("svg-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(folder);
    const std::string svg = sa::heatmap_svg(masked_scores());
    sa::write_figure(folder.string(), "scores.svg", svg);
    std::ifstream file(folder / "scores.svg", std::ios::binary);
    std::stringstream read;
    read << file.rdbuf();
    CHECK(read.str() == svg);
    std::filesystem::remove_all(folder);

    CHECK_NOTHROW(sa::write_figure("", "scores.svg", svg));
    CHECK_THROWS_WITH(sa::write_figure((folder / "no" / "such" / "folder").string(), "scores.svg", svg),
                      Contains("cannot write the figure"));
    CHECK_THROWS_WITH(sa::write_figure(folder.string(), "", svg), Contains("no file name"));
}
