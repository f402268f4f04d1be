#include "scheduler/job_state.hpp"

namespace dlsim::scheduler {

std::string to_string(JobState s) {
  switch (s) {
    case JobState::queued: return "queued";
    case JobState::restarting: return "restarting";
    case JobState::running: return "running";
    case JobState::checkpointing: return "checkpointing";
    case JobState::resizing: return "resizing";
    case JobState::preempted: return "preempted";
    case JobState::done: return "done";
    case JobState::failed: return "failed";
  }
  return "?";
}

bool allowed(JobState from, JobState to) {
  using S = JobState;
  switch (from) {
    case S::queued: return to == S::restarting || to == S::failed;
    case S::restarting: return to == S::running || to == S::preempted || to == S::failed;
    case S::running: return to == S::checkpointing || to == S::resizing || to == S::done || to == S::preempted || to == S::failed;
    case S::resizing: return to == S::running || to == S::preempted || to == S::failed;
    case S::checkpointing: return to == S::running || to == S::preempted || to == S::failed;
    case S::preempted: return to == S::queued || to == S::failed;
    case S::done:
    case S::failed: return false;
  }
  return false;
}

std::string to_string(NodeState s) {
  switch (s) {
    case NodeState::provisioning: return "provisioning";
    case NodeState::ready: return "ready";
    case NodeState::busy: return "busy";
    case NodeState::draining: return "draining";
    case NodeState::preempted: return "preempted";
    case NodeState::failed: return "failed";
    case NodeState::terminated: return "terminated";
  }
  return "?";
}

bool allowed(NodeState from, NodeState to) {
  using S = NodeState;
  switch (from) {
    case S::provisioning: return to == S::ready;
    case S::ready: return to == S::busy || to == S::draining || to == S::failed || to == S::terminated;
    case S::busy: return to == S::ready || to == S::draining || to == S::failed;
    case S::draining: return to == S::preempted || to == S::failed;
    case S::preempted:
    case S::failed:
    case S::terminated: return false;
  }
  return false;
}

}  // namespace dlsim::scheduler
