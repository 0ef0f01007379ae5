#include "example.hpp"

namespace sa {

Example mouse_eats_cheese()
{
    Example example;
    example.tokens = {"Mouse", "Eats", "Cheese"};
    example.embeddings = Matrix{{2, 0}, {1, 2}, {2, 0}};
    example.w_query = Matrix{{0, 1}, {1, 0}};  // swaps the two features
    example.w_key = Matrix{{1, 0}, {0, 1}};
    example.w_value = Matrix{{1, 0}, {0, 1}};
    return example;
}

}  // namespace sa
