// Interrupting a long run from another thread (Ctrl-C in Python, a cancelled sweep): the caller
// owns an InterruptFlag and sets it; code that runs for long checks it now and then and throws
// Interrupted, which unwinds the run: no result is produced and nothing is half-written.
#pragma once
#include <atomic>
#include <stdexcept>

namespace dlsim::sim {

using InterruptFlag = std::atomic<bool>;

class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

// Throws Interrupted when `flag` is set; a null flag never interrupts.
inline void check_interrupt(const InterruptFlag* flag) {
  if (flag != nullptr && flag->load(std::memory_order_relaxed)) throw Interrupted();
}

}  // namespace dlsim::sim
