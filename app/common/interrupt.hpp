#pragma once
// SIGINT/SIGTERM handling for long commands. The handler only sets a flag (the one thing that is
// async-signal-safe); the pipelines poll it between batches and throw interrupted_error, whose
// unwinding removes temporary outputs (io::output_file), so no partial file is left under its
// final name. The flag is process-wide state by nature: signals are delivered to the process.

namespace qmer::app {

// Installs the handlers for the lifetime of the object; restores the previous ones afterwards.
class interrupt_guard {
  public:
    interrupt_guard();
    ~interrupt_guard();
    interrupt_guard(interrupt_guard const&) = delete;
    interrupt_guard& operator=(interrupt_guard const&) = delete;
};

// True once SIGINT or SIGTERM arrived while a guard was installed.
bool interrupted() noexcept;
// Throws interrupted_error naming the signal if one arrived.
void throw_if_interrupted();

}  // namespace qmer::app
