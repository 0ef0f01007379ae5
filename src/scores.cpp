#include "scores.hpp"

#include "exercise.hpp"

namespace sa {

//> scores
Matrix scores(const Matrix& queries, const Matrix& keys)
{
    // BEGIN SOLUTION scores: chapter 2, Scores
    if (queries.cols() != keys.cols()) {
        throw ShapeError(fmt::format("scores: Q is {} but K is {}; their columns must match", shape(queries),
                                     shape(keys)));
    }
    // Q: n×d_k, K: m×d_k -> S: n×m; reading K by rows is the transpose.
    Matrix result(queries.rows(), keys.rows());
    for (std::size_t asking = 0; asking < queries.rows(); ++asking) {
        for (std::size_t asked = 0; asked < keys.rows(); ++asked) {
            double dot = 0.0;
            for (std::size_t d = 0; d < queries.cols(); ++d) {
                dot += queries(asking, d) * keys(asked, d);
            }
            result(asking, asked) = dot;
        }
    }
    return result;
    // END SOLUTION
}
//< scores

//> scores-backward
ScoreGrads scores_backward(const Matrix& queries, const Matrix& keys, const Matrix& d_scores)
{
    // BEGIN SOLUTION scores_backward: chapter 11, Gradients
    if (queries.cols() != keys.cols()) {
        throw ShapeError(fmt::format("scores_backward: Q is {} but K is {}; their columns must match",
                                     shape(queries), shape(keys)));
    }
    if (d_scores.rows() != queries.rows() || d_scores.cols() != keys.rows()) {
        throw ShapeError(fmt::format(
            "scores_backward: dS is {} but S = Q·Kᵀ is {}×{}; dS needs the shape of the scores", shape(d_scores),
            queries.rows(), keys.rows()));
    }
    ScoreGrads grads{Matrix(queries.rows(), queries.cols()), Matrix(keys.rows(), keys.cols())};
    for (std::size_t asking = 0; asking < queries.rows(); ++asking) {
        for (std::size_t asked = 0; asked < keys.rows(); ++asked) {
            const double blame = d_scores(asking, asked);
            for (std::size_t d = 0; d < queries.cols(); ++d) {
                grads.d_queries(asking, d) += blame * keys(asked, d);   // dQ = dS·K
                grads.d_keys(asked, d) += blame * queries(asking, d);  // dK = dSᵀ·Q
            }
        }
    }
    return grads;
    // END SOLUTION
}
//< scores-backward

}  // namespace sa
