#include "projection.hpp"

#include "exercise.hpp"

namespace sa {

//> project
Matrix project(const Matrix& embeddings, const Matrix& weights)
{
    // BEGIN SOLUTION project: chapter 1, Projection
    if (embeddings.cols() != weights.rows()) {
        throw ShapeError(fmt::format("project: E is {} but W is {}; W needs one row per embedding feature ({})",
                                     shape(embeddings), shape(weights), embeddings.cols()));
    }
    // E: n×d_model, W: d_model×d_out -> P: n×d_out
    Matrix projected(embeddings.rows(), weights.cols());
    for (std::size_t token = 0; token < embeddings.rows(); ++token) {
        for (std::size_t out = 0; out < weights.cols(); ++out) {
            double sum = 0.0;
            for (std::size_t feature = 0; feature < embeddings.cols(); ++feature) {
                sum += embeddings(token, feature) * weights(feature, out);
            }
            projected(token, out) = sum;
        }
    }
    return projected;
    // END SOLUTION
}
//< project

}  // namespace sa
