// Continuous batching with paged KV memory (serving_batcher.hpp).
#include "models/serving_batcher.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace dlsim::models {

ContinuousBatcher::ContinuousBatcher(BatchingPolicy policy) : policy_(policy) {
  if (policy_.max_batch_tokens < 1) throw std::invalid_argument("max_batch_tokens: must be >= 1");
  if (policy_.max_sequences < 1) throw std::invalid_argument("max_sequences: must be >= 1");
  if (policy_.block_tokens < 1) throw std::invalid_argument("block_tokens: must be >= 1");
  if (policy_.kv_blocks < 1) throw std::invalid_argument("the KV cache has no block: the weights leave no memory for it");
  if (policy_.kv_reservation == KvReservation::max_length && policy_.max_length < 1) {
    throw std::invalid_argument("max_length: must be >= 1 to reserve it");
  }
}

std::int64_t ContinuousBatcher::blocks_for(int tokens) const {
  return (static_cast<std::int64_t>(tokens) + policy_.block_tokens - 1) / policy_.block_tokens;
}

std::int64_t ContinuousBatcher::lifetime_blocks(int prompt_tokens, int output_tokens) const {
  const int whole = prompt_tokens + output_tokens;
  return blocks_for(policy_.continuous && policy_.kv_reservation == KvReservation::max_length ? std::max(whole, policy_.max_length)
                                                                                                 : whole);
}

std::int64_t ContinuousBatcher::admission_blocks(const Sequence& s) const {
  // Static batching reserves the whole request (a resumed one: its prompt, what it generated and
  // its answer); paged takes what is cached now (the prompt, or the prompt and what a resumed
  // request generated); the reserving policies what the whole request will ever hold.
  if (!policy_.continuous) return blocks_for(s.prompt + s.output);
  if (policy_.kv_reservation == KvReservation::paged) return blocks_for(s.prompt);
  return std::max(blocks_for(s.prompt), lifetime_blocks(s.original_prompt, s.output));
}

bool ContinuousBatcher::enqueue(int request, int prompt_tokens, int output_tokens) {
  if (prompt_tokens < 1 || output_tokens < 1) throw std::invalid_argument("a request needs >= 1 prompt and output token");
  if (lifetime_blocks(prompt_tokens, output_tokens) > policy_.kv_blocks) return false;
  if (!policy_.chunked_prefill && prompt_tokens > policy_.max_batch_tokens) return false;
  Sequence s;
  s.request = request;
  s.prompt = prompt_tokens;
  s.original_prompt = prompt_tokens;
  s.output = output_tokens;
  waiting_.push_back(s);
  return true;
}

bool ContinuousBatcher::enqueue_prefilled(int request, int prompt_tokens, int output_tokens) {
  if (prompt_tokens < 1 || output_tokens < 2) throw std::invalid_argument("a prefilled request needs >= 1 prompt and >= 2 output tokens");
  if (lifetime_blocks(prompt_tokens, output_tokens) > policy_.kv_blocks) return false;
  Sequence s;
  s.request = request;
  s.prompt = prompt_tokens;
  s.original_prompt = prompt_tokens;
  s.output = output_tokens;
  s.generated = 1;
  s.prefilled = true;
  waiting_.push_back(s);
  return true;
}

bool ContinuousBatcher::enqueue_resumed(int request, int prompt_tokens, int output_tokens, int generated) {
  if (generated <= 0) return enqueue(request, prompt_tokens, output_tokens);
  if (prompt_tokens < 1 || generated >= output_tokens) throw std::invalid_argument("a resumed request has tokens left to generate");
  if (lifetime_blocks(prompt_tokens, output_tokens) > policy_.kv_blocks) return false;
  if (!policy_.chunked_prefill && prompt_tokens + generated > policy_.max_batch_tokens) return false;
  Sequence s;
  s.request = request;
  s.original_prompt = prompt_tokens;
  s.prompt = prompt_tokens + generated;
  s.output = output_tokens;
  s.generated = generated;
  waiting_.push_back(s);
  return true;
}

std::vector<ContinuousBatcher::Evicted> ContinuousBatcher::evict_all() {
  std::vector<Evicted> out;
  for (const Sequence& s : running_) out.push_back({s.request, s.generated});
  for (const Sequence& s : waiting_) out.push_back({s.request, s.generated});
  running_.clear();
  waiting_.clear();
  blocks_used_ = 0;
  in_iteration_ = false;
  pending_ = {};
  return out;
}

bool ContinuousBatcher::grow(Sequence& s, int tokens) {
  const std::int64_t need = blocks_for(s.cached + tokens) - s.blocks;
  if (need <= 0) return true;
  if (need > policy_.kv_blocks - blocks_used_) return false;
  s.blocks += need;
  blocks_used_ += need;
  return true;
}

void ContinuousBatcher::preempt_newest(IterationOutcome& outcome) {
  Sequence s = running_.back();
  running_.pop_back();
  blocks_used_ -= s.blocks;
  // Recomputation: the prompt and every generated token are prefilled again.
  s.prompt = s.original_prompt + s.generated;
  s.cached = 0;
  s.blocks = 0;
  s.scheduled = 0;
  s.preempted_now = true;
  outcome.preempted.push_back(s.request);
  ++preemptions_;
  waiting_.push_front(s);
}

ServingBatch ContinuousBatcher::next_batch() {
  if (in_iteration_) throw std::logic_error("ContinuousBatcher: next_batch() before complete()");
  pending_ = {};
  ServingBatch batch;
  int budget = policy_.max_batch_tokens;
  // 0. Sequences that arrive with their prompt cached join the running ones first.
  while (!waiting_.empty() && waiting_.front().prefilled && static_cast<int>(running_.size()) < policy_.max_sequences) {
    Sequence s = waiting_.front();
    const std::int64_t need = admission_blocks(s);
    if (need > policy_.kv_blocks - blocks_used_) break;
    waiting_.pop_front();
    s.blocks = need;
    blocks_used_ += need;
    s.cached = s.prompt;
    s.prefilled = false;
    running_.push_back(s);
  }
  // 1. One token for every decoding sequence, oldest first.
  for (std::size_t i = 0; i < running_.size() && budget > 0; ++i) {
    Sequence& s = running_[i];
    if (s.cached < s.prompt) continue;  // still prefilling
    bool preempted_itself = false;
    while (!grow(s, 1)) {
      const bool newest = i + 1 == running_.size();
      preempt_newest(pending_);
      if (newest) {
        preempted_itself = true;
        break;
      }
    }
    if (preempted_itself) break;
    running_[i].scheduled = 1;
    --budget;
    ++batch.decodes;
    batch.decode_context += running_[i].cached + 1;
    ++batch.emitting;
  }
  // 2. The next chunk of prompts already being prefilled (their blocks were reserved on admission).
  for (Sequence& s : running_) {
    if (budget <= 0) break;
    if (s.scheduled > 0 || s.cached >= s.prompt) continue;
    const int remaining = s.prompt - s.cached;
    if (!policy_.chunked_prefill && remaining > budget) continue;
    const int chunk = std::min(remaining, budget);
    if (!grow(s, chunk)) continue;
    s.scheduled = chunk;
    budget -= chunk;
    batch.prefills.push_back({chunk, s.cached});
    if (chunk == remaining) ++batch.emitting;
  }
  // 3. Waiting requests, in order, while the budget, the sequence limit and the cache allow
  //    (static batching: only into an empty replica, the batch then closed until it drains).
  const bool admit = policy_.continuous || running_.empty();
  while (admit && !waiting_.empty() && (budget > 0 || !policy_.continuous) &&
         static_cast<int>(running_.size()) < policy_.max_sequences) {
    Sequence s = waiting_.front();
    if (s.preempted_now) break;  // preempted while forming this iteration: not back before the next
    if (s.prefilled) break;      // waits for cache room (step 0)
    const int remaining = s.prompt;
    if (!policy_.chunked_prefill && remaining > budget) break;
    const std::int64_t need = admission_blocks(s);
    if (need > policy_.kv_blocks - blocks_used_) break;
    waiting_.pop_front();
    s.blocks = need;
    blocks_used_ += need;
    const int chunk = std::min(remaining, budget);  // 0: a static batch's member prefilled later
    s.scheduled = chunk;
    budget -= chunk;
    if (chunk > 0) batch.prefills.push_back({chunk, 0});
    if (chunk == remaining) ++batch.emitting;
    running_.push_back(s);
  }
  in_iteration_ = batch.tokens() > 0;
  return batch;
}

IterationOutcome ContinuousBatcher::complete() {
  if (!in_iteration_) throw std::logic_error("ContinuousBatcher: complete() without an iteration");
  in_iteration_ = false;
  IterationOutcome outcome = std::move(pending_);
  pending_ = {};
  std::vector<Sequence> still;
  still.reserve(running_.size());
  for (Sequence& s : running_) {
    if (s.scheduled > 0) {
      s.cached += s.scheduled;
      s.scheduled = 0;
      if (s.cached >= s.prompt) {
        ++s.generated;
        outcome.emitted.push_back(s.request);
        if (s.generated == 1) outcome.first_token.push_back(s.request);
        // A prefill replica hands every sequence on at its first token.
        if (s.generated >= s.output || policy_.role == ReplicaRole::prefill) {
          outcome.finished.push_back(s.request);
          blocks_used_ -= s.blocks;
          continue;
        }
      }
    }
    still.push_back(s);
  }
  running_ = std::move(still);
  for (Sequence& s : waiting_) s.preempted_now = false;
  return outcome;
}

}  // namespace dlsim::models
