// What one LLM serving replica decides each iteration: continuous (iteration-level) batching
// with a token budget, chunked prefill, and the KV cache as paged memory, as Orca (Yu et al.,
// OSDI 2022) and vLLM (Kwon et al., SOSP 2023) run it.
//
// Each iteration is formed in vLLM's order (its scheduler with chunked prefill):
// 1. every running sequence that is decoding gets one token, oldest first; when the cache has no
//    block for it, the newest running sequence is preempted by recomputation (its blocks freed,
//    it goes back to the front of the queue and will prefill its prompt and what it generated);
// 2. running sequences whose prompt is partly prefilled get their next chunk;
// 3. waiting requests are admitted in arrival order while the budget, the sequence limit and the
//    cache allow: a request is admitted only when blocks for its whole remaining prompt are free.
// Without chunked prefill a prompt is prefilled in one iteration and must fit the budget.
//
// The batcher only decides; the caller times the iteration (serving_iteration.hpp) and calls
// complete() when it ends. Times are the caller's.
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "models/serving_iteration.hpp"

namespace dlsim::models {

// What a replica does: both phases, or one side of a disaggregated pair (Splitwise, DistServe):
// a prefill replica's sequences end at their first token (their KV cache then moves to a decode
// replica); a decode replica takes sequences whose prompt is cached already (enqueue_prefilled).
enum class ReplicaRole { mixed, prefill, decode };

// How much of the KV cache a sequence holds (continuous batching). paged: vLLM's blocks, taken as
// the sequence grows (its prompt's on admission, one more each block_tokens generated tokens);
// request: the blocks of its whole prompt and answer, reserved on admission (the vLLM paper's
// "Orca (Oracle)" baseline, which knows each answer's length); max_length: the blocks of
// max_length tokens, reserved on admission whatever the request needs ("Orca (Max)", which
// reserves for the longest sequence the model takes; Kwon et al., SOSP 2023, Sec. 6.1). A
// reserved sequence never grows, so it is never preempted.
enum class KvReservation { paged, request, max_length };

struct BatchingPolicy {
  ReplicaRole role = ReplicaRole::mixed;
  // false: static batching, the baseline of Orca and vLLM (FasterTransformer's request-level
  // batching): a batch is formed only when the previous one has finished entirely, and each
  // request's blocks for its whole prompt and answer are reserved when it is admitted.
  bool continuous = true;
  int max_batch_tokens = 8192;   // tokens per iteration (vLLM's max_num_batched_tokens)
  int max_sequences = 256;       // sequences per iteration (max_num_seqs)
  bool chunked_prefill = true;
  int block_tokens = 16;         // tokens per KV-cache block (vLLM's block size)
  KvReservation kv_reservation = KvReservation::paged;
  int max_length = 0;            // kv_reservation max_length: tokens reserved per sequence (>= 1)
  std::int64_t kv_blocks = 0;    // blocks of the cache
  // Dynamic batching (Triton's max_queue_delay): a replica that is idle and holds fewer than
  // max_sequences requests waits for more until its oldest request has waited this long. 0: an
  // iteration starts as soon as there is work (continuous batching). Timed by the fleet.
  double max_wait_s = 0;
};

// What an iteration did, for the caller's records.
struct IterationOutcome {
  std::vector<int> emitted;      // requests that emitted a token (in batch order)
  std::vector<int> first_token;  // of those, the ones whose token was their first
  std::vector<int> finished;     // requests that emitted their last token
  std::vector<int> preempted;    // requests preempted while forming the iteration
};

class ContinuousBatcher {
 public:
  // Throws std::invalid_argument for limits < 1 or a cache of no block.
  explicit ContinuousBatcher(BatchingPolicy policy);

  // A request joins the queue. Returns false (and keeps nothing) when it can never run: its
  // prompt plus output do not fit the whole cache, or, without chunked prefill, its prompt does
  // not fit the token budget.
  bool enqueue(int request, int prompt_tokens, int output_tokens);
  // A request whose prompt was prefilled elsewhere and whose first token is out: its K and V
  // arrive with it. It is admitted (its prompt's blocks reserved) before the iteration's
  // decodes, in arrival order, and decodes its second token in the same iteration.
  bool enqueue_prefilled(int request, int prompt_tokens, int output_tokens);

  bool idle() const { return running_.empty() && waiting_.empty(); }
  bool in_iteration() const { return in_iteration_; }

  // A request that ran elsewhere and lost its cache there (a reclaimed replica): `generated`
  // tokens of its answer are out; it prefills its prompt and them again, then goes on. Refused
  // like enqueue() when it can never fit.
  bool enqueue_resumed(int request, int prompt_tokens, int output_tokens, int generated);

  // Every request the replica holds, running or waiting, with the tokens each has generated; the
  // replica is left empty (its cache freed, any iteration abandoned). For a reclaimed replica.
  struct Evicted {
    int request = 0;
    int generated = 0;
  };
  std::vector<Evicted> evict_all();

  // Forms the next iteration (empty when there is nothing to run). Must be followed by
  // complete() before the next one is formed.
  ServingBatch next_batch();
  IterationOutcome complete();

  std::size_t waiting() const { return waiting_.size(); }
  std::size_t running() const { return running_.size(); }
  std::int64_t blocks_used() const { return blocks_used_; }
  const BatchingPolicy& policy() const { return policy_; }
  std::int64_t preemptions() const { return preemptions_; }

 private:
  struct Sequence {
    int request = 0;
    int prompt = 0;          // tokens to prefill (after a preemption: the prompt and what was generated)
    int original_prompt = 0;
    int output = 0;          // tokens to generate in all
    int generated = 0;
    int cached = 0;          // tokens whose K and V are in the cache
    std::int64_t blocks = 0;
    int scheduled = 0;       // tokens of the current iteration (0: not in it)
    bool preempted_now = false;
    bool prefilled = false;  // waiting with its prompt's K and V (from a prefill replica)
  };
  std::int64_t blocks_for(int tokens) const;
  // Blocks a request takes when admitted (KvReservation) and at most ever, prompt and answer.
  std::int64_t admission_blocks(const Sequence& s) const;
  std::int64_t lifetime_blocks(int prompt_tokens, int output_tokens) const;
  bool grow(Sequence& s, int tokens);  // reserve blocks for `tokens` more cached tokens
  void preempt_newest(IterationOutcome& outcome);

  BatchingPolicy policy_;
  std::deque<Sequence> waiting_;
  std::vector<Sequence> running_;   // in admission order (oldest first)
  std::int64_t blocks_used_ = 0;
  std::int64_t preemptions_ = 0;
  bool in_iteration_ = false;
  IterationOutcome pending_;
};

}  // namespace dlsim::models
