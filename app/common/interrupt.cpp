#include "app/common/interrupt.hpp"

#include <csignal>

#include <atomic>
#include <string>

#include "core/error.hpp"

namespace qmer::app {
namespace {

// Lock-free atomics are async-signal-safe; 0 means no signal yet.
std::atomic<int> received_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

struct sigaction previous_int, previous_term;

extern "C" void on_signal(int sig) {
    received_signal.store(sig, std::memory_order_relaxed);
}

}  // namespace

interrupt_guard::interrupt_guard() {
    received_signal.store(0, std::memory_order_relaxed);
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags =
        0;  // no SA_RESTART: a blocking read returns EINTR and the reader stops sooner
    sigaction(SIGINT, &action, &previous_int);
    sigaction(SIGTERM, &action, &previous_term);
}

interrupt_guard::~interrupt_guard() {
    sigaction(SIGINT, &previous_int, nullptr);
    sigaction(SIGTERM, &previous_term, nullptr);
}

bool interrupted() noexcept {
    return received_signal.load(std::memory_order_relaxed) != 0;
}

void throw_if_interrupted() {
    int const sig = received_signal.load(std::memory_order_relaxed);
    if (sig != 0)
        throw interrupted_error(std::string("interrupted by ") +
                                (sig == SIGINT    ? "SIGINT"
                                 : sig == SIGTERM ? "SIGTERM"
                                                  : "a signal") +
                                "; no output was left behind");
}

}  // namespace qmer::app
