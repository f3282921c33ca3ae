"""Parses .github/workflows/*.yml and checks the shape GitHub Actions needs (it cannot run here)."""
import pathlib
import sys

import yaml

failures = []
workflows = sorted(pathlib.Path(".github/workflows").glob("*.yml"))
if not workflows:
    failures.append("no workflow under .github/workflows")
for path in workflows:
    doc = yaml.safe_load(path.read_text())
    # YAML 1.1 reads the key `on` as the boolean True.
    if not isinstance(doc, dict) or "jobs" not in doc or not ({"on", True} & set(doc)):
        failures.append(f"{path}: needs `on` and `jobs`")
        continue
    for name, job in doc["jobs"].items():
        if "runs-on" not in job:
            failures.append(f"{path}: job {name} has no runs-on")
        steps = job.get("steps") or []
        if not steps:
            failures.append(f"{path}: job {name} has no steps")
        for index, step in enumerate(steps):
            if not ("run" in step or "uses" in step):
                failures.append(f"{path}: job {name} step {index} has neither run nor uses")
for failure in failures:
    print("workflow:", failure, file=sys.stderr)
print(f"workflow: {len(workflows)} file(s) checked, {len(failures)} problem(s)")
sys.exit(1 if failures else 0)
