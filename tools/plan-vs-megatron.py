#!/usr/bin/python3
"""The planner against the plans of Megatron-LM SC'21 Table 1 (README, "Plan search").

For each row named on the command line (1.7b, 3.6b, ... as in scenarios/published/llm-megatron-t1-ROW.yaml):
the row's scenario with its workload.plan removed and a plan: section (objective fastest, the row's
instance type and node count) is searched with `build/dlsim plan`; the paper's own plan is run with
`build/dlsim run`. Prints both result lines and the search's counts and wall time.

    tools/plan-vs-megatron.py 1.7b 3.6b 7.5b
"""
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml


def main(rows):
    work = Path(tempfile.mkdtemp(prefix="dlsim-plan-vs-megatron-"))
    for row in rows:
        source = Path(f"scenarios/published/llm-megatron-t1-{row}.yaml")
        scenario = yaml.safe_load(source.read_text())
        nodes = scenario["cluster"]["nodes"]
        scenario["workload"].pop("plan")
        scenario["workload"].pop("iterations", None)
        for key in ("validation", "output", "sweep"):
            scenario.pop(key, None)
        scenario["workload"]["data"] = {"tokens": 1e9, "epochs": 1}
        scenario["plan"] = {"objective": "fastest", "instances": [scenario["cluster"]["instance"]], "nodes": [nodes]}
        plan_file = work / f"plan-{row}.yaml"
        plan_file.write_text(yaml.safe_dump(scenario))
        start = time.time()
        searched = subprocess.run(["build/dlsim", "plan", str(plan_file), "--output", str(work / f"plan-{row}.h5")],
                                  capture_output=True, text=True, check=True).stdout.splitlines()
        wall = time.time() - start
        paper = subprocess.run(["build/dlsim", "run", str(source), "--set", f"output.results={work / f'paper-{row}.h5'}"],
                               capture_output=True, text=True, check=True).stdout.splitlines()
        print(f"{row} on {nodes} nodes")
        print("  paper's plan:  ", paper[2].strip())
        print("  planner's best:", next(line for line in searched if line.startswith("*"))[1:].strip())
        print("  ", next(line for line in searched if line.startswith("candidates")), f"; search {wall:.1f} s wall")


if __name__ == "__main__":
    main(sys.argv[1:] or ["1.7b", "3.6b", "7.5b"])
