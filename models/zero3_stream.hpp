// Zero3Stream: one rank's ZeRO-3 collective stream, as PyTorch's ProcessGroupNCCL runs a process
// group's collectives: on one NCCL stream, one at a time, in issue order (zero3_schedule.hpp).
// Pure bookkeeping for the replay (training_replay.cpp), which starts each collective on the
// fabric and reports its end. Sequence numbers count every collective issued by the rank;
// a pass's collective i is number base + i, base being the count when the pass began.
#pragma once
#include <deque>

#include "models/zero3_schedule.hpp"

namespace dlsim::models {

class Zero3Stream {
 public:
  void begin_pass() { base_ = issued_; }
  void push(const ZeroCollective* c) {
    queue_.push_back(c);
    ++issued_;
  }
  // The next collective to start, or nullptr (one is running, or none is queued).
  const ZeroCollective* start() {
    if (running_ != nullptr || queue_.empty()) return nullptr;
    running_ = queue_.front();
    queue_.pop_front();
    return running_;
  }
  void finish() {
    running_ = nullptr;
    ++done_;
  }
  const ZeroCollective* running() const { return running_; }
  // Collectives that must be done before a point may pass: all issued (drain), this pass's
  // 0..wait_through, or none.
  long long needed(bool drain, int wait_through) const {
    return drain ? issued_ : wait_through >= 0 ? base_ + wait_through + 1 : 0;
  }
  bool done(long long needed) const { return done_ >= needed; }

 private:
  std::deque<const ZeroCollective*> queue_;
  const ZeroCollective* running_ = nullptr;
  long long issued_ = 0, done_ = 0, base_ = 0;
};

}  // namespace dlsim::models
