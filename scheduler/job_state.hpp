// The life of a job and of a node, as state machines with their allowed transitions. The
// simulation moves objects only along these edges (checked); tests walk every edge.
#pragma once
#include <string>

namespace dlsim::scheduler {

// queued -> restarting (placed; loading its checkpoint or starting) -> running
// running -> checkpointing -> running; running -> done; running -> resizing -> running (elastic)
// running | checkpointing | restarting | resizing -> preempted (capacity lost or taken by the scheduler)
// preempted -> queued
// any live state -> failed (cannot run: asks more GPUs than any pool holds)
enum class JobState { queued, restarting, running, checkpointing, resizing, preempted, done, failed };
std::string to_string(JobState s);
bool allowed(JobState from, JobState to);

// requested -> provisioning -> ready <-> busy; ready | busy -> draining (spot notice)
// -> preempted (reclaimed); ready | busy | draining -> failed; ready -> terminated
enum class NodeState { provisioning, ready, busy, draining, preempted, failed, terminated };
std::string to_string(NodeState s);
bool allowed(NodeState from, NodeState to);

}  // namespace dlsim::scheduler
