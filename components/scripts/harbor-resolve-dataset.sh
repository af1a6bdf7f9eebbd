#!/usr/bin/env bash
# Ask Harbor itself which tasks the job will run, before it is launched: the job config as Harbor resolved
# it (`harbor run --print-config`, harbor-preflight.sh) is loaded with Harbor's own JobConfig in the Harbor
# venv, and each local dataset is expanded with Harbor's own DatasetConfig.get_task_configs() — the call
# Job._resolve_task_configs makes at the start of `harbor run` (harbor 0.21.0 src/harbor/job.py), with the
# job's verifier.disable. Harbor keeps only the entries for which Task.is_valid_dir() holds (task.toml that
# parses as a TaskConfig, environment/, instruction.md, tests/test.sh unless the verifier runs in a separate
# environment) and skips every other one without a word, and it applies task_names / exclude_task_names
# (fnmatch globs on the task *directory* name, LocalTaskId.get_name) and n_tasks; it fails only when no
# include pattern matches anything. This fails first, one message per problem, when:
#   - a dataset path does not exist (harbor run would die at start with FileNotFoundError);
#   - Harbor resolves another number of tasks than EXPECTED_COUNT (harbor.expectedTaskCount), naming every
#     directory Harbor skips and what it lacks: task.toml (missing or not a valid TaskConfig), environment/,
#     instruction.md, tests/test.sh;
#   - a run.taskFilter.include pattern matches no task Harbor resolves (naming it, and the skipped directory
#     it would have matched, or the directory of a task whose [task].name it is);
#   - the filter leaves no task at all.
# Prints "<LOG_NAME>: Harbor resolves N tasks …" on stderr and one JSON line on stdout.
# Inputs (env):
#   VENV             Harbor venv ($VENV/bin/python imports harbor)
#   RESOLVED_CONFIG  JSON job config as `harbor run --print-config` printed it
#   EXPECTED_COUNT   tasks every dataset must resolve to before the filter (harbor.expectedTaskCount)
#   LOG_NAME         prefix of the messages (default harbor-resolve-dataset)
set -euo pipefail
: "${VENV:?}" "${RESOLVED_CONFIG:?}" "${EXPECTED_COUNT:?}"
LOG_NAME=${LOG_NAME:-harbor-resolve-dataset}
die() { echo "$LOG_NAME: $*" >&2; exit 1; }
[ -x "$VENV/bin/python" ] || die "$VENV/bin/python is missing (HarborRunner installs Harbor there)"
[ -f "$RESOLVED_CONFIG" ] || die "$RESOLVED_CONFIG is missing (harbor run --print-config writes it)"
export HARBOR_TELEMETRY=0 LITELLM_LOCAL_MODEL_COST_MAP=true
"$VENV/bin/python" - "$RESOLVED_CONFIG" "$EXPECTED_COUNT" "$LOG_NAME" <<'PY'
import asyncio, difflib, json, sys, tomllib
from fnmatch import fnmatch
from pathlib import Path

config_file, expected, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def say(message):
    print(f"{log}: {message}", file=sys.stderr)


try:
    # Harbor's own models: what `harbor run` builds the job from (harbor 0.21.0).
    from harbor.models.job.config import JobConfig
    from harbor.models.task.config import TaskConfig
    from harbor.models.task.id import LocalTaskId
    from harbor.models.task.paths import TaskPaths
    from harbor.models.task.task import Task
    from harbor.models.task.verifier_mode import resolve_effective_verifier_env_config
except Exception as err:  # noqa: BLE001 - any import failure means the venv is not Harbor's
    say(f"cannot import Harbor's dataset loader from {sys.executable}: {type(err).__name__}: {err}")
    sys.exit(1)


def first_line(err):
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}".rstrip(": ")


def why_skipped(task_dir, disable_verification):
    """What Harbor's Task.is_valid_dir finds missing in task_dir, every item of it (is_valid_dir stops at the first)."""
    paths = TaskPaths(task_dir)
    reasons, config = [], None
    if not paths.config_path.exists():
        reasons.append("task.toml is missing")
    else:
        try:
            config = TaskConfig.model_validate_toml(paths.config_path.read_text())
        except (OSError, tomllib.TOMLDecodeError, ValueError) as err:  # pydantic's ValidationError is a ValueError
            reasons.append(f"task.toml is not a valid Harbor task config ({first_line(err)})")
    if not paths.environment_dir.exists():
        reasons.append("environment/ is missing")
    if config is not None and config.steps:
        # Multi-step task: Harbor's own check names the step and the file.
        try:
            if disable_verification:
                for step in config.steps:
                    if not paths.step_instruction_path(step.name).exists():
                        raise FileNotFoundError(f"Step instruction not found: {paths.step_instruction_path(step.name)}")
            else:
                Task._validate_tests(config, paths)
        except FileNotFoundError as err:
            reasons.append(str(err))
        return reasons
    if not paths.instruction_path.exists():
        reasons.append("instruction.md is missing")
    if not disable_verification:
        if config is None:
            # Unknown [environment].os: Harbor could not read it; test.sh is what a Linux task needs.
            if not paths.test_path.exists():
                reasons.append("tests/test.sh is missing")
        elif resolve_effective_verifier_env_config(config, step_cfg=None) is None:
            task_os = config.environment.os
            if paths.discovered_test_path_for(task_os) is None:
                expected_test = paths.test_path_for(task_os).relative_to(paths.task_dir).as_posix()
                reasons.append(f"{expected_test} is missing")
    return reasons


def describe_filter(ds, before, after):
    parts = []
    if ds.task_names:
        parts.append(f"include {len(ds.task_names)}")
    if ds.exclude_task_names:
        parts.append(f"exclude {len(ds.exclude_task_names)}")
    if ds.n_tasks is not None:
        parts.append(f"n_tasks {ds.n_tasks}")
    return f"filter: {', '.join(parts)} → {after}" if parts else "no task filter"


def names_list(names, limit=8):
    names = sorted(names)
    shown = ", ".join(names[:limit])
    return shown + (f", … ({len(names)} in all)" if len(names) > limit else "")


config = JobConfig.model_validate(json.loads(Path(config_file).read_text()))
disable = config.verifier.disable
problems, lines, report = [], [], []
if not config.datasets:
    problems.append("the job config has no datasets (harbor run would fail: 'Either datasets or tasks must be provided.')")
for i, ds in enumerate(config.datasets):
    where = f"datasets[{i}].path"
    if not ds.is_local():
        problems.append(f"datasets[{i}] is not a local dataset path; only local datasets are resolved before launch")
        continue
    root = ds.path.expanduser()
    if not root.exists():
        problems.append(
            f"the dataset path {root} does not exist on this host ({where} of the job config; harbor.datasetDir + "
            "harbor.datasetTasksSubdir): harbor run would fail at start"
        )
        continue
    if not root.is_dir():
        problems.append(f"the dataset path {root} is not a directory ({where} of the job config)")
        continue
    # Harbor's own resolution, first without the filter (what the dataset holds), then as the job runs it.
    unfiltered = ds.model_copy(update={"task_names": None, "exclude_task_names": None, "n_tasks": None})
    tasks = asyncio.run(unfiltered.get_task_configs(disable_verification=disable))
    names = {LocalTaskId(path=t.path).get_name(): Path(t.path) for t in tasks}
    resolved = {p.expanduser().resolve() for p in names.values()}
    # Every directory Harbor passed over (hidden ones such as .git are no task directories).
    skipped = {}
    for entry in sorted(root.iterdir()):
        if entry.name.startswith(".") or not entry.is_dir() or entry.resolve() in resolved:
            continue
        reasons = why_skipped(entry, disable)
        if not reasons:
            reasons = ["Harbor's Task.is_valid_dir is false for it"]
        skipped[entry.name] = reasons
    if len(tasks) != expected:
        detail = "".join(f"\n  {name}: {'; '.join(r)}" for name, r in skipped.items())
        more = f"; it skips {len(skipped)} task director{'y' if len(skipped) == 1 else 'ies'}:{detail}" if skipped else "; it skips no directory"
        problems.append(
            f"Harbor resolves {len(tasks)} task{'s' if len(tasks) != 1 else ''} in {root}, expected {expected} "
            f"(harbor.expectedTaskCount){more}"
        )
    # Each include pattern must select a task Harbor resolves (Harbor itself only fails when none matches).
    task_names_of = {}
    for name, p in names.items():
        try:
            cfg = TaskConfig.model_validate_toml((p / "task.toml").read_text())
            if cfg.task is not None:
                task_names_of[cfg.task.name] = name
        except Exception:  # noqa: BLE001 - only a hint
            pass
    unmatched = 0
    for pattern in ds.task_names or []:
        if any(fnmatch(name, pattern) for name in names):
            continue
        unmatched += 1
        message = f"run.taskFilter.include {json.dumps(pattern)} matches no task Harbor resolves in {root}"
        hits = [name for name in skipped if fnmatch(name, pattern)]
        if hits:
            message += "; it matches " + ", ".join(f"{h}, which Harbor skips ({'; '.join(skipped[h])})" for h in hits)
        elif pattern in task_names_of:
            message += (
                f"; it is the [task].name of {task_names_of[pattern]}, but Harbor matches local tasks by directory name: "
                f"use {json.dumps(task_names_of[pattern])}"
            )
        else:
            close = difflib.get_close_matches(pattern, list(names), n=3)
            message += f" (names are task directory names or fnmatch globs; {len(names)} tasks: {names_list(names)})"
            if close:
                message += f"; did you mean {', '.join(json.dumps(c) for c in close)}?"
        problems.append(message)
    try:
        selected = asyncio.run(ds.get_task_configs(disable_verification=disable))
    except ValueError as err:  # Harbor's own "No tasks matched the filter(s) …": said above, pattern by pattern
        if not unmatched:
            problems.append(f"Harbor refuses the task filter of {where}: {first_line(err)}")
        continue
    if not selected:
        if tasks:  # else the count above said it
            problems.append(f"the task filter of {where} leaves no task of the {len(tasks)} in {root} (run.taskFilter)")
        continue
    lines.append(f"Harbor resolves {len(tasks)} tasks in {root} ({describe_filter(ds, len(tasks), len(selected))})")
    report.append({
        "path": str(root),
        "tasks": len(tasks),
        "selected": sorted(LocalTaskId(path=t.path).get_name() for t in selected),
        "skipped": skipped,
    })

if problems:
    for p in problems:
        say(p)
    sys.exit(1)
for line in lines:
    say(line)
print(json.dumps({"datasets": report}, separators=(",", ":"), ensure_ascii=False))
PY
