// Chapter 20's options: the defaults fitted to the reader's numbers and the matrices checked against each other.
#include "latent_options.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "matrix.hpp"

namespace sa {

namespace {

// Defaults that no longer fit the reader's numbers become what they need (the note line says so): 1 head where W_Q's
// columns are odd; a latent of one number, the mean of the features; content keys that read it in each head's first
// feature; values 1, 2, … times it; a rotary key of the first two features (d_R = 2, in every head); W_O = I.
std::size_t fitted_heads(const Example& example)
{
    return static_cast<std::size_t>(whole_option(example, "--heads", 1, 64));
}

Matrix pattern(std::size_t rows, std::size_t cols, const std::function<double(std::size_t, std::size_t)>& entry)
{
    Matrix matrix(rows, cols, 0.0);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) {
            matrix(r, c) = entry(r, c);
        }
    }
    return matrix;
}

std::string fit_when(bool fits, const Matrix& fitted)
{
    return fits ? "" : matrix_text(fitted);
}

}  // namespace

std::string fit_latent_down(const Example& example)  // W_DKV: the mean of the d features
{
    const std::size_t d = example.embeddings.cols();
    return fit_when(d == 2, pattern(d, 1, [d](std::size_t, std::size_t) { return 1.0 / static_cast<double>(d); }));
}

std::string fit_latent_up_key(const Example& example)  // W_UK: each latent feature into a feature of every head
{
    const std::size_t d_c = matrix_option(example, "--wdkv").cols();
    const std::size_t cols = example.w_query.cols();
    const std::size_t d_h = std::max<std::size_t>(1, cols / fitted_heads(example));
    return fit_when(d_c == 1 && cols == 4, pattern(d_c, cols, [d_h](std::size_t r, std::size_t c) {
                        return c % d_h == r % d_h ? 1.0 : 0.0;
                    }));
}

std::string fit_latent_up_value(const Example& example)  // W_UV: head a's value a + 1 times the first latent feature
{
    const std::size_t d_c = matrix_option(example, "--wdkv").cols();
    const std::size_t heads = fitted_heads(example);
    return fit_when(d_c == 1 && heads == 2, pattern(d_c, heads, [](std::size_t r, std::size_t c) {
                        return r == 0 ? static_cast<double>(c + 1) : 0.0;
                    }));
}

std::string fit_latent_key_rotary(const Example& example)  // W_KR: the first two features
{
    const std::size_t d = example.embeddings.cols();
    return fit_when(d == 2, pattern(d, 2, [](std::size_t r, std::size_t c) { return r == c ? 1.0 : 0.0; }));
}

std::string fit_latent_query_rotary(const Example& example)  // W_QR: W_KR's pattern in every head
{
    const std::size_t d = example.embeddings.cols();
    const std::size_t d_r = matrix_option(example, "--wkr").cols();
    const std::size_t heads = fitted_heads(example);
    return fit_when(d == 2 && d_r == 2 && heads == 2, pattern(d, heads * d_r, [d_r](std::size_t r, std::size_t c) {
                        return r == c % d_r ? 1.0 : 0.0;
                    }));
}

std::string fit_latent_out(const Example& example)  // W_O = I
{
    const std::size_t rows = matrix_option(example, "--wuv").cols();
    return fit_when(rows == 2, identity(rows));
}

std::string fit_latent_heads(const Example& example)
{
    return example.w_query.cols() % 2 == 0 ? "" : "1";
}

LatentWeights latent_weights_option(const Example& example)
{
    return {example.w_query,
            matrix_option(example, "--wqr"),
            matrix_option(example, "--wdkv"),
            matrix_option(example, "--wuk"),
            matrix_option(example, "--wuv"),
            matrix_option(example, "--wkr"),
            matrix_option(example, "--wo")};
}

// The reader's matrices against each other, each misfit named by its option in one line.
void check_latent_options(const Example& example, const LatentWeights& w, std::size_t heads)
{
    const std::size_t d = example.embeddings.cols();
    const std::size_t d_c = w.w_down.cols();
    const auto refuse = [](const std::string& option, const std::string& problem) {
        throw UsageError(fmt::format("{}: {}", option, problem));
    };
    if (w.w_down.rows() != d || d_c > d) {
        refuse("--wdkv", fmt::format("it is {}×{}; expected d×d_c with d = {} rows (one per embedding feature) and "
                                     "1 ≤ d_c ≤ {} columns (the latent is narrower than the token)",
                                     w.w_down.rows(), d_c, d, d));
    }
    if (example.w_query.cols() % heads != 0) {
        refuse("--heads", fmt::format("{} does not divide the {} columns of --wq", heads, example.w_query.cols()));
    }
    if (w.w_up_key.rows() != d_c || w.w_up_key.cols() != example.w_query.cols()) {
        refuse("--wuk", fmt::format("it is {}×{}; expected d_c×(h·d_h) = {}×{} (a row per latent feature, --wq's "
                                    "columns)", w.w_up_key.rows(), w.w_up_key.cols(), d_c, example.w_query.cols()));
    }
    if (w.w_up_value.rows() != d_c || w.w_up_value.cols() % heads != 0) {
        refuse("--wuv", fmt::format("it is {}×{}; expected d_c×(h·d_v): {} rows and a multiple of h = {} columns",
                                    w.w_up_value.rows(), w.w_up_value.cols(), d_c, heads));
    }
    const std::size_t d_r = w.w_key_rotary.cols();
    if (w.w_key_rotary.rows() != d || d_r % 2 != 0) {
        refuse("--wkr", fmt::format("it is {}×{}; expected d×d_R with d = {} rows and an even d_R (rotary turns "
                                    "pairs)", w.w_key_rotary.rows(), d_r, d));
    }
    if (w.w_query_rotary.rows() != d || w.w_query_rotary.cols() != heads * d_r) {
        refuse("--wqr", fmt::format("it is {}×{}; expected d×(h·d_R) = {}×{}", w.w_query_rotary.rows(),
                                    w.w_query_rotary.cols(), d, heads * d_r));
    }
    if (w.w_out.rows() != w.w_up_value.cols()) {
        refuse("--wo", fmt::format("it has {} rows; expected h·d_v = {} (one per column of the heads' values)",
                                   w.w_out.rows(), w.w_up_value.cols()));
    }
}

}  // namespace sa
