#!/usr/bin/env python3
"""The bare embedded model on a suite part: the baseline planexec is meant to beat.

    python3 scripts/bare-model.py examples/tasks/heldout-11.jsonl --first 17 --out /tmp/bare

Each task is given to the model with the whole text of every file in its
workspace (files over 8 KB are cut) and one instruction: reply with one Python
program that does it. The program runs once in a fresh copy of the workspace
(20 s limit); its printed output stands for the run's answer, and the task's
own check decides. No plan, no tools, no retry, no check of the result: it
measures what the model can do with everything in front of it, which bounds
what a runtime around the same model can expect on those tasks. Refusal tasks
(a `status` check) are left out: a program has no run status.

Needs the `ask` example (built here with cargo) and the pulled default model.
Prints one line per task and the pass count; writes prompts, replies and
programs under --out.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SYSTEM = (
    "You write one Python 3 program that does the user's task. It runs in the "
    "task's folder, where the files shown are, with only the standard library. "
    "Write what the task asks to write to the files it names; print the answer "
    "if it asks a question. Reply with the program in one ```python block."
)
FILE_LIMIT = 8192


def files_of(workspace):
    if workspace is None:
        return []
    out = []
    for path in sorted(workspace.rglob("*")):
        if path.is_file():
            text = path.read_bytes()[:FILE_LIMIT].decode("utf-8", errors="replace")
            out.append((str(path.relative_to(workspace)), text))
    return out


def prompt_of(task, workspace):
    shown = "".join(f"\n--- {name} ---\n{text}" for name, text in files_of(workspace))
    listing = shown if shown else "\n(the folder is empty)"
    return f"Task: {task}\n\nThe files in the folder:{listing}"


def program_of(reply):
    match = re.search(r"```(?:python|py)?\s*\n(.*?)(```|$)", reply or "", re.S)
    return match.group(1) if match else (reply or "")


def check(checks, folder, printed):
    for c in checks:
        if "command" in c:
            done = subprocess.run(["sh", "-c", c["command"]], cwd=folder, capture_output=True, stdin=subprocess.DEVNULL)
            if done.returncode != 0:
                return False
        elif "equals" in c or "contains" in c:
            path = folder / c["file"]
            if not path.is_file():
                return False
            text = path.read_text(errors="replace")
            if "equals" in c and text.rstrip() != c["equals"].rstrip():
                return False
            if "contains" in c and c["contains"] not in text:
                return False
        elif "absent" in c:
            if (folder / c["absent"]).exists():
                return False
        elif "says" in c or "answer_contains" in c:
            if (c.get("says") or c["answer_contains"]).lower() not in printed.lower():
                return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", type=Path)
    parser.add_argument("--first", type=int, default=None)
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="bare-")))
    parser.add_argument("--ask", default=None, help="the ask example's binary (default: built with cargo)")
    args = parser.parse_args()
    lines = [l for l in args.part.read_text().splitlines() if l.strip() and not l.startswith("#")]
    tasks = [json.loads(l) for l in lines][: args.first]
    tasks = [t for t in tasks if not any("status" in c for c in as_list(t["check"]))]
    args.out.mkdir(parents=True, exist_ok=True)
    prompts = args.out / "prompts.jsonl"
    with prompts.open("w") as f:
        for t in tasks:
            ws = args.part.parent / t["workspace"] if t.get("workspace") else None
            f.write(json.dumps({"id": t["name"], "system": SYSTEM, "user": prompt_of(t["task"], ws), "max_tokens": 1024}) + "\n")
    ask = args.ask or build_ask()
    replies_path = args.out / "replies.jsonl"
    with replies_path.open("w") as f:
        subprocess.run([ask, str(prompts)], stdout=f, check=True)
    replies = {r["id"]: r for r in map(json.loads, replies_path.read_text().splitlines())}
    passed = 0
    for t in tasks:
        ok, seconds = run_one(t, replies.get(t["name"], {}), args)
        passed += ok
        print(f"{'pass' if ok else 'FAIL'} {t['name']} ({seconds:.1f} s)", flush=True)
    print(f"{passed}/{len(tasks)} passed ({args.part.name}, refusals left out); files under {args.out}")


def run_one(task, reply, args):
    program = program_of(reply.get("reply"))
    (args.out / f"{task['name']}.py").write_text(program)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "ws"
        if task.get("workspace"):
            shutil.copytree(args.part.parent / task["workspace"], folder, symlinks=True)
        else:
            folder.mkdir()
        try:
            done = subprocess.run([sys.executable, "-c", program], cwd=folder, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
            printed = done.stdout
        except subprocess.TimeoutExpired:
            printed = ""
        return check(as_list(task["check"]), folder, printed), reply.get("seconds", 0.0)


def as_list(checks):
    return checks if isinstance(checks, list) else [checks]


def build_ask():
    root = Path(__file__).resolve().parent.parent
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "planexec-local", "--example", "ask"], cwd=root, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", root / "target"))
    return str(target / "release" / "examples" / "ask")


if __name__ == "__main__":
    main()
