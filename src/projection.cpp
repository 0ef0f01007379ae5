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

//> project-backward
ProjectionGrads project_backward(const Matrix& embeddings, const Matrix& weights, const Matrix& d_projected)
{
    // BEGIN SOLUTION project_backward: chapter 11, Gradients
    if (embeddings.cols() != weights.rows()) {
        throw ShapeError(fmt::format(
            "project_backward: E is {} but W is {}; W needs one row per embedding feature ({})", shape(embeddings),
            shape(weights), embeddings.cols()));
    }
    if (d_projected.rows() != embeddings.rows() || d_projected.cols() != weights.cols()) {
        throw ShapeError(fmt::format(
            "project_backward: dP is {} but P = E·W is {}×{}; dP needs the shape of the projection",
            shape(d_projected), embeddings.rows(), weights.cols()));
    }
    ProjectionGrads grads{Matrix(embeddings.rows(), embeddings.cols()), Matrix(weights.rows(), weights.cols())};
    for (std::size_t token = 0; token < embeddings.rows(); ++token) {
        for (std::size_t feature = 0; feature < embeddings.cols(); ++feature) {
            for (std::size_t out = 0; out < weights.cols(); ++out) {
                grads.d_embeddings(token, feature) += d_projected(token, out) * weights(feature, out);  // dP·Wᵀ
                grads.d_weights(feature, out) += embeddings(token, feature) * d_projected(token, out);  // Eᵀ·dP
            }
        }
    }
    return grads;
    // END SOLUTION
}
//< project-backward

}  // namespace sa
