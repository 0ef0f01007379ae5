#include "labels.hpp"

#include <fmt/format.h>

namespace sa {

std::vector<std::string> head_labels(std::size_t heads, const std::vector<std::string>& labels)
{
    std::vector<std::string> result;
    for (std::size_t head = 0; head < heads; ++head) {  // head 0 first, as in the formulas
        for (const std::string& label : labels) {
            result.push_back(fmt::format("h{} {}", head, label));
        }
    }
    return result;
}

std::vector<std::string> side_by_side_labels(const std::vector<std::string>& prefixes,
                                             const std::vector<std::string>& labels)
{
    std::vector<std::string> result;
    for (const std::string& prefix : prefixes) {
        for (const std::string& label : labels) {
            result.push_back(prefix + " " + label);
        }
    }
    return result;
}

}  // namespace sa
