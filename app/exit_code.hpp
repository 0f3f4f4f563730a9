#pragma once
// qmer's exit codes (README "Errors and exit codes", doc/qmer.1 "EXIT STATUS"): the one map from an
// error's kind (core/error.hpp) to the status the process ends with.

#include "core/error.hpp"

namespace qmer::app::exit_code {

inline constexpr int ok = 0;
inline constexpr int failure = 1;  // anything not named below
inline constexpr int usage = 2;
inline constexpr int input = 3;
inline constexpr int index = 4;
inline constexpr int output = 5;
inline constexpr int capacity = 6;
inline constexpr int interrupted = 130;  // 128 + SIGINT, as shells report it

constexpr int of(error_kind kind) noexcept {
    switch (kind) {
        case error_kind::usage:
            return usage;
        case error_kind::input:
            return input;
        case error_kind::index:
            return index;
        case error_kind::output:
            return output;
        case error_kind::capacity:
            return capacity;
        case error_kind::interrupted:
            return interrupted;
    }
    return failure;
}

}  // namespace qmer::app::exit_code
