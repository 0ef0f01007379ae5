#include "head_ablation.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "dense.hpp"
#include "exercise.hpp"

namespace sa {

//> ablation
Matrix ablated_layer_forward(const AttentionLayer& layer, const Matrix& input, std::size_t heads, std::size_t window,
                             std::size_t head, LayerTrace* trace)
{
    // BEGIN SOLUTION ablated_layer_forward: chapter 15, Two layers: the induction head
    if (head >= heads) {
        throw std::invalid_argument(
            fmt::format("ablated_layer_forward: head {} of {}; heads count from 0", head, heads));
    }
    LayerTrace local;
    LayerTrace& t = trace != nullptr ? *trace : local;
    static_cast<void>(layer_forward(layer, input, heads, window, &t));  // every head's C, as always
    const std::size_t width = input.cols() / heads;
    for (std::size_t r = 0; r < t.joined.rows(); ++r) {
        for (std::size_t c = head * width; c < (head + 1) * width; ++c) {
            t.joined(r, c) = 0.0;  // the silenced head writes nothing
        }
    }
    Matrix output = multiply(t.joined, layer.w_out);
    add_in_place(output, input);  // X + C' W_O
    return output;
    // END SOLUTION
}
//< ablation

}  // namespace sa
