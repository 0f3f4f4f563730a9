#pragma once
// The few named error types of qmer. Each is thrown where the problem is found, with a message that
// names the file (and record) when there is one, and caught once in app/main.cpp, which prints it
// as one line and maps its type to an exit code (see exit_code()).

#include <stdexcept>
#include <string>

namespace qmer {

// A parameter the user gave cannot be used (k out of range, bad --fpr, --threads 0).
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// An input file cannot be read or holds a malformed record.
struct input_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// An index file is damaged, foreign, or from an incompatible version.
struct index_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Writing an output failed (missing folder, full disk, closed pipe).
struct output_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A filter of fixed capacity cannot take another element.
struct capacity_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A SIGINT/SIGTERM arrived; work stopped and temporary files were removed.
struct interrupted_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int failure = 1;  // anything not named below
inline constexpr int usage = 2;
inline constexpr int input = 3;
inline constexpr int index = 4;
inline constexpr int output = 5;
inline constexpr int capacity = 6;
inline constexpr int interrupted = 130;  // 128 + SIGINT, as shells report it
}  // namespace exit_code

}  // namespace qmer
