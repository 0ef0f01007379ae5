/// \file exercise.hpp
/// \brief The error an exercise stub throws until the learner writes the step.
#pragma once

#include <stdexcept>
#include <string>

namespace sa {

/// \brief Thrown by a workspace stub whose step has not been written yet.
///
/// The message reads "not implemented yet: <function>, see chapter N, <section>",
/// so the grader can tell "not started" from "failing".
class NotImplemented : public std::logic_error {
public:
    /// \brief Builds the error from the stub's message.
    /// \param message "not implemented yet: <function>, see chapter N, <section>"
    explicit NotImplemented(const std::string& message) : std::logic_error(message) {}
};

}  // namespace sa
