#!/usr/bin/env python3
"""Checks the CI templates in docs/ci/: each parses as YAML, has the shape of a GitHub Actions
workflow, and every `target/release/harness <command>` it runs is a command of this build
(`harness <command> --help` succeeds). Usage: scripts/check-ci-templates.py HARNESS"""
import pathlib
import re
import subprocess
import sys

import yaml

harness = sys.argv[1]
templates = sorted(pathlib.Path(__file__).resolve().parent.parent.joinpath("docs", "ci").glob("*.yml"))
assert templates, "no templates in docs/ci"
for path in templates:
    doc = yaml.safe_load(path.read_text())
    # PyYAML reads the key `on` as True (YAML 1.1).
    assert isinstance(doc, dict) and "jobs" in doc and ("on" in doc or True in doc), f"{path}: not a workflow"
    commands = set()
    for job in doc["jobs"].values():
        for step in job["steps"]:
            commands.update(re.findall(r"target/release/harness (\w+)", step.get("run", "")))
    assert commands, f"{path}: runs no harness command"
    for c in sorted(commands):
        subprocess.run([harness, c, "--help"], check=True, capture_output=True)
    print(f"{path.name}: a workflow of {len(doc['jobs'])} job(s); harness commands {', '.join(sorted(commands))} exist")
