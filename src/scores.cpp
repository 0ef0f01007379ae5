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

}  // namespace sa
