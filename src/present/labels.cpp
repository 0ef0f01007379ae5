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

std::vector<std::string> token_labels(const Vocabulary& vocabulary, const std::vector<std::size_t>& tokens)
{
    std::vector<std::string> labels;
    for (const std::size_t t : tokens) {
        labels.push_back(character_label(vocabulary.characters.at(t)));
    }
    return labels;
}

}  // namespace sa
