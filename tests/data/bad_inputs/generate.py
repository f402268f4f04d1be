#!/usr/bin/python3
"""Writes the bad-input corpus (issue 19): one scenario per file, each wrong in one way, with the
key path dlsim must name in its header (`# expect: <key.path>`; `-` for YAML syntax errors,
which have a position but no key). tests/cli/test_bad_input_corpus.cpp runs `dlsim run` on
every file: exit code 2, `error: <file>:<line>:<column>: <key.path>: <why>` on stderr, nothing
written. Run from anywhere: /usr/bin/python3 tests/data/bad_inputs/generate.py"""
import copy
import os
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))

TRAINING = {
    "seed": 1,
    "cluster": {"instance": "aws/p3.16xlarge", "nodes": 1},
    "workload": {"model": "resnet50", "precision": "fp16", "batch": {"per_device": 64},
                 "data": {"samples": 1281167, "epochs": 1}},
    "output": {"results": "out.h5", "csv": "out.csv"},
}
LLM = {
    "seed": 1,
    "cluster": {"instance": "aws/p4d.24xlarge", "nodes": 2},
    "workload": {"model": "gpt3-1.3b", "sequence_length": 2048, "precision": "bf16", "optimizer": "adam",
                 "batch": {"global": 64}, "iterations": 10,
                 "plan": {"tensor": 2, "pipeline": 2, "micro_batch_size": 1}},
    "output": {"results": "out.h5"},
}
CLUSTER = {
    "seed": 1,
    "pools": [{"name": "shared", "instance": "aws/p3.16xlarge", "nodes": 4}],
    "trace": {"format": "synthetic", "jobs": 50, "mean_interarrival": "100s", "duration_max": "1d"},
    "scheduler": {"policy": "fifo", "placement": "packed"},
    "output": {"results": "out.h5", "csv": "out.csv"},
}
COLLECTIVE = {
    "seed": 1,
    "cluster": {"instance": "aws/p4d.24xlarge", "nodes": 2},
    "collective": {"operation": "all-reduce", "sizes": {"from": "1KiB", "to": "1GiB", "factor": 4}},
    "output": {"results": "out.h5"},
}

SERVING = {
    "seed": 1,
    "cluster": {"instance": "aws/p5.48xlarge", "nodes": 1},
    "serving": {"model": "llama2-7b", "replicas": 2, "tensor": 1,
                "requests": {"arrival": "poisson", "rate": 1, "count": 10, "prompt_tokens": 100, "output_tokens": 10}},
    "output": {"csv": "out.csv"},
}


def mutate(base, path, value):
    """A copy of base with path ("a.b.c", list indices as numbers) set to value (None: removed)."""
    doc = copy.deepcopy(base)
    keys = path.split(".")
    node = doc
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node.setdefault(k, {})
    last = keys[-1]
    if value is None:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return doc


CASES = []


def case(name, expect, doc=None, text=None):
    CASES.append((name, expect, text if text is not None else yaml.safe_dump(doc, sort_keys=False)))


def bad(name, base, path, value, expect=None):
    case(name, expect or path, doc=mutate(base, path, value))


# YAML itself
case("yaml-tab-indent", "-", text="seed: 1\ncluster:\n\tinstance: aws/p3.16xlarge\n")
case("yaml-unclosed-flow", "-", text="seed: 1\ncluster: {instance: aws/p3.16xlarge\n")
case("yaml-bad-indent", "-", text="seed: 1\ncluster:\n  instance: aws/p3.16xlarge\n   nodes: 1\n")
case("yaml-unclosed-quote", "-", text='seed: 1\ncluster:\n  instance: "aws/p3.16xlarge\n')
case("yaml-duplicate-key", "cluster", text="seed: 1\ncluster: {instance: aws/p3.16xlarge}\ncluster: {instance: aws/p3.2xlarge}\n")
case("yaml-second-document", "-", text=yaml.safe_dump(TRAINING, sort_keys=False) + "---\nseed: 2\n")
case("yaml-lone-comma", "-", text=",")  # yaml-cpp 0.7's LoadAll looped for ever on it (found by tests/fuzz)
case("yaml-comma-after-dedent", "-", text="seed: 1\n  nodes: 1\n, data:\n    samples: 1\n")
case("yaml-top-level-list", "-", text="- seed: 1\n- cluster: x\n")
case("yaml-top-level-scalar", "-", text="just words\n")
case("yaml-empty", "-", text="")
case("yaml-complex-key", "workload", text="seed: 1\ncluster: {instance: aws/p3.16xlarge}\nworkload: {[a]: 1}\n")
case("yaml-alias-loop-ish", "cluster.instance", text="seed: 1\nx: &a [1, 2]\ncluster: {instance: *a}\nworkload: {model: resnet50}\n")
# Unknown or misplaced keys
bad("key-unknown-top", TRAINING, "clusterr", {"instance": "x"})
bad("key-unknown-cluster", TRAINING, "cluster.instances", "aws/p3.16xlarge")
bad("key-unknown-workload", TRAINING, "workload.modle", "resnet50")
bad("key-unknown-plan", LLM, "workload.plan.tensr", 2)
bad("key-unknown-output", TRAINING, "output.result", "x.h5")
bad("key-scalar-for-mapping-output", TRAINING, "output", "x.h5")
bad("key-scalar-for-mapping-batch", TRAINING, "workload.batch", 64)
bad("key-list-for-mapping-cluster", TRAINING, "cluster", ["aws/p3.16xlarge"])
bad("key-mapping-for-scalar-model", TRAINING, "workload.model", {"nam": "resnet50"}, expect="workload.model.nam")
bad("key-missing-workload", TRAINING, "workload", None, expect="workload")
# Units
bad("unit-bucket-unknown", TRAINING, "workload.data_parallel", {"bucket": "25 furlongs"}, expect="workload.data_parallel.bucket")
bad("unit-bucket-negative", TRAINING, "workload.data_parallel", {"bucket": "-25MiB"}, expect="workload.data_parallel.bucket")
bad("unit-interarrival-no-unit", CLUSTER, "trace.mean_interarrival", "fast")
bad("unit-duration-bytes", CLUSTER, "trace.duration_max", "3GiB")
bad("unit-size-seconds", COLLECTIVE, "collective.sizes.from", "10s")
bad("unit-size-garbage", COLLECTIVE, "collective.sizes.to", "lots")
bad("unit-size-negative", COLLECTIVE, "collective.sizes.to", "-1GiB")
bad("unit-interarrival-negative", CLUSTER, "trace.mean_interarrival", "-100s")
bad("unit-duration-huge", CLUSTER, "trace.duration_max", "1e300d")
bad("unit-nan", CLUSTER, "trace.mean_interarrival", ".nan")
# Ranges
bad("range-nodes-zero", TRAINING, "cluster.nodes", 0)
bad("range-nodes-negative", TRAINING, "cluster.nodes", -4)
bad("range-nodes-huge", TRAINING, "cluster.nodes", 10**12)
bad("range-nodes-fraction", TRAINING, "cluster.nodes", 1.5)
bad("range-batch-zero", TRAINING, "workload.batch.per_device", 0)
bad("range-epochs-zero", TRAINING, "workload.data.epochs", 0)
bad("range-samples-negative", TRAINING, "workload.data.samples", -1)
bad("range-seed-negative", TRAINING, "seed", -1)
bad("range-seed-text", TRAINING, "seed", "one")
bad("range-iterations-zero", LLM, "workload.iterations", 0)
bad("range-sequence-zero", LLM, "workload.sequence_length", 0)
bad("range-sequence-too-long", LLM, "workload.sequence_length", 1000000)
bad("range-jobs-zero", CLUSTER, "trace.jobs", 0)
bad("range-pool-nodes-negative", CLUSTER, "pools.0.nodes", -1, expect="pools[0].nodes")
bad("range-factor-one", COLLECTIVE, "collective.sizes.factor", 1)
bad("range-sizes-reversed", COLLECTIVE, "collective.sizes", {"from": "1GiB", "to": "1KiB", "factor": 4}, expect="collective.sizes.to")
bad("range-tensor-zero", LLM, "workload.plan.tensor", 0)
bad("range-zero-stage-4", LLM, "workload.plan.zero_stage", 4)
# Names
bad("name-instance-unknown", TRAINING, "cluster.instance", "aws/p9.48xlarge")
bad("name-instance-empty", TRAINING, "cluster.instance", "")
bad("name-model-unknown", TRAINING, "workload.model", "resnet5000")
bad("name-precision-unknown", TRAINING, "workload.precision", "fp12")
bad("name-optimizer-unknown", LLM, "workload.optimizer", "adamz")
bad("name-schedule-unknown", LLM, "workload.plan.schedule", "2f2b")
bad("name-recompute-unknown", LLM, "workload.plan.recompute", "some")
bad("name-policy-unknown", CLUSTER, "scheduler.policy", "fastest-first")
bad("name-placement-unknown", CLUSTER, "scheduler.placement", "scattered")
bad("name-trace-format-unknown", CLUSTER, "trace.format", "slurm")
bad("name-operation-unknown", COLLECTIVE, "collective.operation", "all-scatter")
bad("name-algorithm-unknown", COLLECTIVE, "collective.algorithm", "butterfly")
bad("name-fabric-unknown", TRAINING, "network", {"fabric": {"kind": "hypercube"}}, expect="network.fabric.kind")
bad("name-pool-instance-unknown", CLUSTER, "pools.0.instance", "gcp/a9-mega", expect="pools[0].instance")
bad("name-order-axis-unknown", LLM, "workload.plan.order", ["tensor", "sequence", "data"], expect="workload.plan.order[1]")
bad("name-attention-unknown", LLM, "workload.attention", "sparse")
# Plans
bad("plan-pipeline-too-deep", mutate(LLM, "cluster.nodes", 4), "workload.plan", {"pipeline": 32, "micro_batch_size": 1},
    expect="workload.plan.pipeline")
bad("plan-tensor-not-dividing", LLM, "workload.plan.tensor", 3, expect="workload.plan.tensor")
bad("plan-tensor-on-cnn", TRAINING, "workload.plan", {"tensor": 2}, expect="workload.plan.tensor")
bad("plan-sequence-parallel-no-tensor", LLM, "workload.plan", {"sequence_parallel": True}, expect="workload.plan.sequence_parallel")
bad("plan-interleaved-no-chunks", LLM, "workload.plan.schedule", "interleaved-1f1b", expect="workload.plan")
bad("plan-virtual-without-interleaved", LLM, "workload.plan.virtual_stages", 2)
bad("plan-zero3-with-pipeline", LLM, "workload.plan.zero_stage", 3)
bad("plan-expert-without-experts", LLM, "workload.plan.expert", 2)
bad("plan-both-micro-batch-keys", LLM, "workload.plan.micro_batches", 4)
bad("plan-micro-batches-not-dividing", LLM, "workload.plan", {"micro_batches": 5}, expect="workload.plan.micro_batches")
bad("plan-data-mismatch", mutate(LLM, "workload.batch.global", 96), "workload.plan.data", 3, expect="workload.plan.data")
bad("plan-order-repeated", LLM, "workload.plan.order", ["tensor", "tensor", "data"], expect="workload.plan.order[1]")
bad("plan-stage-layers-wrong-count", LLM, "workload.plan.stage_layers", [12, 10, 2], expect="workload.plan.stage_layers")
bad("plan-context-not-dividing", LLM, "workload.plan", {"tensor": 2, "context": 3}, expect="workload.plan.tensor")
bad("plan-tp-overlap-no-sp", LLM, "workload.plan.tp_comm_overlap", True)
bad("plan-global-batch-not-dividing", LLM, "workload.batch.global", 63, expect="workload.batch.global")
# Memory
bad("memory-gpt-on-one-v100", mutate(mutate(LLM, "cluster", {"instance": "aws/p3.2xlarge", "nodes": 1}), "workload.precision",
                                    "fp16"), "workload.plan", {"micro_batch_size": 1}, expect="workload.plan")
bad("memory-huge-micro-batch", mutate(TRAINING, "workload.batch.per_device", 100000), "workload.plan", {"micro_batch_size": 100000},
    expect="workload.plan")
bad("memory-175b-data-parallel", mutate(LLM, "workload.model", "gpt3-175b"), "workload.plan", {"micro_batch_size": 1},
    expect="workload.plan")
bad("memory-micro-batch-64", mutate(LLM, "workload.batch.global", 1024), "workload.plan",
    {"tensor": 1, "pipeline": 1, "micro_batch_size": 64}, expect="workload.plan")
bad("memory-zero0-adam-13b", mutate(LLM, "workload.model", "gpt3-13b"), "workload.plan", {"micro_batch_size": 1},
    expect="workload.plan")
# Traces
bad("trace-missing-file", CLUSTER, "trace", {"format": "philly", "path": "no/such/trace.csv"}, expect="trace.path")
bad("trace-folder", CLUSTER, "trace", {"format": "philly", "path": "."}, expect="trace.path")
bad("trace-format-missing", CLUSTER, "trace.format", None, expect="trace.format")
bad("trace-jobs-text", CLUSTER, "trace.jobs", "many")
bad("trace-gpus-weights-bad", CLUSTER, "trace.gpus", {"1": -1}, expect="trace.gpus.1")
bad("trace-unknown-key", CLUSTER, "trace.jobz", 5)
bad("trace-pool-missing", CLUSTER, "pools", [], expect="pools")
bad("trace-pool-name-duplicate", CLUSTER, "pools", [{"name": "a", "instance": "aws/p3.16xlarge", "nodes": 2},
                                                    {"name": "a", "instance": "aws/p3.16xlarge", "nodes": 2}], expect="pools[1].name")
bad("trace-failure-mean-zero", CLUSTER, "pools.0.failure", {"mean": "0s"}, expect="pools[0].failure.mean")
bad("trace-scheduler-list", CLUSTER, "scheduler", ["fifo"])
# Catalogs
bad("catalog-missing-file", TRAINING, "catalog", "no/such/catalog.yaml")
bad("catalog-scalar-for-mapping", CLUSTER, "catalog", {"instance": "x"}, expect="catalog")
bad("catalog-folder", TRAINING, "catalog", ".", expect="catalog")
bad("catalog-list", TRAINING, "catalog", ["a.yaml"], expect="catalog")
bad("catalog-number", TRAINING, "catalog", 7, expect="catalog")
bad("catalog-empty-name", TRAINING, "catalog", "", expect="catalog")
bad("catalog-price-text", TRAINING, "cluster.price", "cheap", expect="cluster.price")
# Outputs
bad("output-folder", TRAINING, "output.results", ".", expect="output.results")
bad("output-device", TRAINING, "output.csv", "/dev/null", expect="output.csv")
bad("output-fifo-like-device", TRAINING, "output.results", "/dev/full", expect="output.results")
bad("output-list", TRAINING, "output.results", ["a.h5"], expect="output.results")
bad("output-empty", TRAINING, "output.results", "", expect="output.results")
bad("output-same-file", TRAINING, "output", {"results": "out.h5", "csv": "out.h5"}, expect="output.csv")
# Sweeps and variants
bad("sweep-nodes-empty", TRAINING, "sweep", {"nodes": []}, expect="sweep.nodes")
bad("sweep-nodes-zero", TRAINING, "sweep", {"nodes": [1, 0]}, expect="sweep.nodes[1]")
# `dlsim run` refuses a variant sweep at its sweep key (`dlsim sweep` and `dlsim check` run the variants).
bad("sweep-grid-with-run", TRAINING, "sweep", {"grid": {"workload.precision": ["fp16", "fp32"]}}, expect="sweep")
bad("sweep-grid-scalar", TRAINING, "sweep", {"grid": {"workload.precision": "fp16"}}, expect="sweep.grid.workload.precision")
bad("sweep-grid-empty-list", TRAINING, "sweep", {"grid": {"workload.precision": []}}, expect="sweep.grid.workload.precision")
bad("sweep-random-samples-zero", TRAINING, "sweep", {"random": {"samples": 0, "keys": {"workload.batch.per_device": [32, 64]}}},
    expect="sweep.random.samples")
bad("sweep-plan-not-list", LLM, "sweep", {"plan": {"tensor": 2}}, expect="sweep.plan")
bad("sweep-plan-bad-entry", LLM, "sweep", {"plan": [{"tensor": 2}, {"tensor": 0}]}, expect="sweep.plan[1].tensor")
bad("sweep-unknown-key", TRAINING, "sweep", {"nodez": [1, 2]}, expect="sweep.nodez")

# Serving
bad("serving-tensor-over-node", SERVING, "serving.tensor", 16)
bad("serving-tensor-not-dividing", SERVING, "serving.tensor", 3)
bad("serving-model-unknown", SERVING, "serving.model", "llama9-7b")
bad("serving-model-moe", SERVING, "serving.model", "mixtral-8x7b")
bad("serving-no-kv-cache-room", mutate(SERVING, "serving.model", "llama2-70b"), "serving.replicas", 1, expect="serving.tensor")
bad("serving-replicas-over-cluster", SERVING, "serving.replicas", 9)
bad("serving-count-and-duration", SERVING, "serving.requests.duration", "10min")
bad("serving-trace-missing", SERVING, "serving.requests", {"trace": {"format": "azure", "path": "no/such.csv"}},
    expect="serving.requests.trace.path")
bad("serving-rate-zero", SERVING, "serving.requests.rate", 0)
bad("serving-with-workload", SERVING, "workload", {"model": "gpt2"})
bad("serving-scaling-min-over-replicas", SERVING, "serving.scaling", {"min_replicas": 5}, expect="serving.scaling.min_replicas")
bad("serving-disaggregated-one-replica", mutate(SERVING, "serving.replicas", 1), "serving.disaggregated", {"prefill_replicas": 1})
bad("serving-target-negative", SERVING, "serving.targets", {"ttft": "-1s"}, expect="serving.targets.ttft")
bad("serving-output-jobs-csv", SERVING, "output.jobs_csv", "jobs.csv")
bad("serving-output-device", SERVING, "output.csv", "/dev/full")
bad("serving-spot-no-discount", SERVING, "serving.spot", {"reclaim": {"mean": "6h"}}, expect="serving.spot.discount")
# (The corpus runs each file from a fresh folder, so no case here can name a profile file: the
# function cases fail before one is read.)
FUNCTION = {
    "seed": 1,
    "cluster": {"instance": "aws/g4dn.xlarge", "nodes": 1},
    "serving": {"model": "resnet50", "precision": "fp32", "platform": "function",
                "function": {"memory": "3008MB", "profile": "cpu.yaml"},
                "requests": {"arrival": "poisson", "rate": 1, "count": 10}},
    "output": {"csv": "out.csv"},
}
SAMPLES = mutate(mutate(FUNCTION, "serving.platform", None), "serving.function", None)
bad("serving-function-memory-small", FUNCTION, "serving.function.memory", "64MB")
bad("serving-function-no-profile", FUNCTION, "serving.function.profile", None)
bad("serving-sample-tokens", SAMPLES, "serving.requests.prompt_tokens", 10)
bad("serving-sample-token-budget", SAMPLES, "serving.batching", {"max_batch_tokens": 64}, expect="serving.batching.max_batch_tokens")
bad("serving-function-decoder", SERVING, "serving.platform", "function")

# Evaluation passes and start-up (issue 22).
bad("evaluation-samples-and-time", TRAINING, "workload.evaluation", {"every": 1, "samples": 50000, "time": "1min"},
    expect="workload.evaluation.time")
bad("startup-negative", TRAINING, "workload.startup", "-5s")
# Dataset storage (issue 22).
bad("storage-without-loader", TRAINING, "workload.input", {"storage": {"type": "aws/s3", "sample_bytes": "110KB"}},
    expect="workload.input.storage")
bad("storage-local-no-bandwidth", TRAINING, "workload.input",
    {"loader": "pytorch", "storage": {"type": "local-nvme", "sample_bytes": "110KB"}}, expect="workload.input.storage.bandwidth")
bad("preparation-no-rate", TRAINING, "workload.input", {"preparation": {"instance": "aws/c5.18xlarge", "nodes": 2}},
    expect="workload.input.preparation.samples_per_vcpu")
bad("transfer-unknown-route", TRAINING, "workload.input", {"transfer": {"route": "sneakernet", "bandwidth": "1Gbps"}},
    expect="workload.input.transfer.route")
bad("checkpoint-storage-local", CLUSTER, "trace.checkpoint", {"policy": "fixed", "interval": "1h", "size": "10GB", "storage": "local-nvme"},
    expect="trace.checkpoint.storage")
# Memory layout of convolutions (issue 16).
bad("memory-format-unknown", TRAINING, "workload.memory_format", "channels_sideways")
bad("memory-format-without-convolutions", LLM, "workload.memory_format", "nchw")
# Kernel fusion of decoder transformers (issue 16).
bad("fused-kernels-not-decoder", TRAINING, "workload.fused_kernels", False)
bad("fused-kernels-not-boolean", LLM, "workload.fused_kernels", "sometimes")
bad("fused-cross-entropy-not-decoder", TRAINING, "workload.fused_cross_entropy", False)
# Plan searches with spot capacity (issue 20).
PLAN = {
    "seed": 1,
    "cluster": {"instance": "aws/p4d.24xlarge"},
    "workload": {"model": "gpt3-1.3b", "sequence_length": 2048, "precision": "bf16", "optimizer": "adam",
                 "batch": {"global": 64}, "data": {"tokens": 1e10, "epochs": 1}},
    "plan": {"objective": "cheapest", "nodes": [1, 2], "capacity": ["on-demand", "spot"],
             "spot": {"discount": 0.6, "reclaim": {"mean": "24h"}}},
    "output": {"csv": "out.csv"},
}
bad("plan-capacity-unknown", PLAN, "plan.capacity", ["on-demand", "preemptible"], expect="plan.capacity[1]")
bad("plan-spot-without-reclaim", PLAN, "plan.spot", {"discount": 0.6}, expect="plan.spot.reclaim")
bad("plan-spot-no-price", PLAN, "plan.spot", {"reclaim": {"mean": "24h"}}, expect="plan.spot.discount")
bad("plan-spot-replications-zero", PLAN, "plan.spot.replications", 0)
# Cluster jobs with a parallel plan (issue 20).
PLAN_JOB = {"name": "gpt", "gpus": 16, "model": "gpt3-1.3b", "sequence_length": 2048, "precision": "fp16",
            "plan": {"tensor": 2, "pipeline": 2}, "iterations": 100}
bad("cluster-job-plan-without-global-batch", CLUSTER, "jobs", [PLAN_JOB], expect="jobs[0].global_batch")
bad("cluster-job-plan-tensor-not-dividing", CLUSTER, "jobs", [dict(PLAN_JOB, global_batch=32, plan={"tensor": 3})],
    expect="jobs[0].plan")


def main():
    for f in os.listdir(HERE):
        if f.endswith(".yaml"):
            os.remove(os.path.join(HERE, f))
    for i, (name, expect, text) in enumerate(CASES):
        with open(os.path.join(HERE, f"{i:03d}-{name}.yaml"), "w", encoding="utf-8") as out:
            out.write(f"# expect: {expect}\n{text}")
    print(f"{len(CASES)} cases")


if __name__ == "__main__":
    main()
