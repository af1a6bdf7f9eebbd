// Harbor venvs for the tests of harbor-resolve-dataset.sh: the real one when this machine has harbor==0.21.0
// installed (REPROBENCH_HARBOR_VENV, or the venv sim/mswea-local.sh keeps in ~/.cache/reprobench), and
// always a stub: the few names the script imports from Harbor, written after harbor 0.21.0's own code
// (src/harbor/models/job/config.py DatasetConfig._get_local_task_configs/_filter_task_ids,
// models/task/task.py Task.is_valid_dir/_validate_tests, models/task/paths.py, models/task/id.py
// LocalTaskId.get_name), run by the host's python3. The same cases run against both, so the stub's rules
// are checked against the real Harbor wherever it is installed.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import * as path from "node:path";

const STUB = String.raw`
import tomllib
from fnmatch import fnmatch
from pathlib import Path


class _NS:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class TaskConfig:
    """task.toml: [task].name, steps, [environment].os (linux|windows), [verifier] environment_mode/environment."""

    @classmethod
    def model_validate_toml(cls, text):
        d = tomllib.loads(text)  # TOMLDecodeError is a ValueError, as pydantic's ValidationError is
        env = d.get("environment", {})
        task_os = env.get("os", "linux")
        if task_os not in ("linux", "windows"):
            raise ValueError(f"1 validation error for TaskConfig\nenvironment.os\n  Input should be 'linux' or 'windows'")
        verifier = d.get("verifier", {})
        cfg = cls()
        cfg.task = _NS(name=d["task"]["name"]) if "task" in d and "name" in d["task"] else None
        cfg.steps = [_NS(name=s["name"], verifier=_NS(**s.get("verifier", {}))) for s in d.get("steps", [])]
        cfg.environment = _NS(os=_NS(value=task_os))
        cfg.verifier = _NS(environment_mode=verifier.get("environment_mode"), environment=verifier.get("environment"))
        return cfg


def resolve_effective_verifier_env_config(task_cfg, step_cfg):
    v = task_cfg.verifier
    separate = v.environment_mode == "separate" or (v.environment_mode is None and v.environment is not None)
    return task_cfg.environment if separate else None


class TaskPaths:
    CONFIG_FILENAME = "task.toml"

    def __init__(self, task_dir):
        self.task_dir = Path(task_dir).resolve()
        self.config_path = self.task_dir / "task.toml"
        self.environment_dir = self.task_dir / "environment"
        self.instruction_path = self.task_dir / "instruction.md"
        self.tests_dir = self.task_dir / "tests"
        self.test_path = self.tests_dir / "test.sh"

    def step_dir(self, name):
        return self.task_dir / "steps" / name

    def step_instruction_path(self, name):
        return self.step_dir(name) / "instruction.md"

    def test_path_for(self, task_os):
        return self.tests_dir / ("test.bat" if getattr(task_os, "value", None) == "windows" else "test.sh")

    def discovered_test_path_for(self, task_os):
        p = self.test_path_for(task_os)
        return p if p.exists() else None


class Task:
    @staticmethod
    def is_valid_dir(task_dir, disable_verification=False):
        paths = TaskPaths(task_dir)
        if not paths.config_path.exists() or not paths.environment_dir.exists():
            return False
        try:
            config = TaskConfig.model_validate_toml(paths.config_path.read_text())
        except (OSError, ValueError):
            return False
        if disable_verification:
            if config.steps:
                return all(paths.step_dir(s.name).exists() and paths.step_instruction_path(s.name).exists() for s in config.steps)
            return paths.instruction_path.exists()
        try:
            Task._validate_tests(config, paths)
        except FileNotFoundError:
            return False
        return True

    @staticmethod
    def _validate_tests(config, paths):
        if not config.steps:
            if not paths.instruction_path.exists():
                raise FileNotFoundError(f"Task directory {paths.task_dir} is missing instruction.md.")
            if resolve_effective_verifier_env_config(config, None) is not None:
                return
            if paths.discovered_test_path_for(config.environment.os) is None:
                raise FileNotFoundError(f"Task directory {paths.task_dir} does not contain tests/test.sh.")
            return
        for step in config.steps:
            if not paths.step_dir(step.name).exists():
                raise FileNotFoundError(f"Step directory not found: {paths.step_dir(step.name)}")
            if not paths.step_instruction_path(step.name).exists():
                raise FileNotFoundError(f"Step instruction not found: {paths.step_instruction_path(step.name)}")


class LocalTaskId:
    def __init__(self, path):
        self.path = Path(path)

    def get_name(self):
        return self.path.expanduser().resolve().name


class DatasetConfig:
    def __init__(self, path=None, name=None, task_names=None, exclude_task_names=None, n_tasks=None, **_):
        self.path = Path(path) if path is not None else None
        self.name = name
        self.task_names = task_names
        self.exclude_task_names = exclude_task_names
        self.n_tasks = n_tasks

    def is_local(self):
        return self.path is not None

    def model_copy(self, update):
        copy = DatasetConfig(self.path, self.name, self.task_names, self.exclude_task_names, self.n_tasks)
        copy.__dict__.update(update)
        return copy

    def _filter_task_ids(self, task_ids):
        filtered = task_ids
        if self.task_names:
            filtered = [t for t in filtered if any(fnmatch(t.get_name(), p) for p in self.task_names)]
            if not filtered:
                available = sorted(t.get_name() for t in task_ids)
                raise ValueError(
                    f"No tasks matched the filter(s) {self.task_names}. "
                    f"There are {len(available)} tasks available in this dataset. Example task names: {available[:5]}"
                )
        if self.exclude_task_names:
            filtered = [t for t in filtered if not any(fnmatch(t.get_name(), p) for p in self.exclude_task_names)]
        if self.n_tasks is not None:
            filtered = filtered[: self.n_tasks]
        return filtered

    async def get_task_configs(self, disable_verification=False):
        ids = [LocalTaskId(p) for p in self.path.iterdir() if Task.is_valid_dir(p, disable_verification=disable_verification)]
        return [_NS(path=t.path) for t in self._filter_task_ids(ids)]


class JobConfig:
    @classmethod
    def model_validate(cls, d):
        cfg = cls()
        cfg.datasets = [DatasetConfig(**x) for x in d.get("datasets", [])]
        cfg.verifier = _NS(disable=d.get("verifier", {}).get("disable", False))
        return cfg
`;

/** Module → names it re-exports from the stub (what harbor-resolve-dataset.sh imports). */
const MODULES: Record<string, string[]> = {
  "harbor/models/job/config.py": ["JobConfig", "DatasetConfig"],
  "harbor/models/task/config.py": ["TaskConfig"],
  "harbor/models/task/id.py": ["LocalTaskId"],
  "harbor/models/task/paths.py": ["TaskPaths"],
  "harbor/models/task/task.py": ["Task"],
  "harbor/models/task/verifier_mode.py": ["resolve_effective_verifier_env_config"],
};

/** A venv whose bin/python is the host's python3 with the stub harbor package on its path. */
export function stubHarborVenv(dir: string): string {
  const venv = path.join(dir, "stub-venv");
  const site = path.join(venv, "site");
  for (const pkg of ["harbor", "harbor/models", "harbor/models/job", "harbor/models/task"]) {
    mkdirSync(path.join(site, pkg), { recursive: true });
    writeFileSync(path.join(site, pkg, "__init__.py"), "");
  }
  writeFileSync(path.join(site, "harbor/_stub.py"), STUB);
  for (const [file, names] of Object.entries(MODULES)) writeFileSync(path.join(site, file), `from harbor._stub import ${names.join(", ")}\n`);
  mkdirSync(path.join(venv, "bin"), { recursive: true });
  writeFileSync(path.join(venv, "bin/python"), `#!/usr/bin/env bash\nPYTHONPATH=${site} exec python3 "$@"\n`);
  chmodSync(path.join(venv, "bin/python"), 0o755);
  return venv;
}

/** The real Harbor venv of this machine with harbor==version, or null (REPROBENCH_HARBOR_VENV first). */
export function realHarborVenv(version: string): string | null {
  const candidates = [process.env.REPROBENCH_HARBOR_VENV, path.join(homedir(), ".cache/reprobench/mswea-harbor-venv")];
  for (const venv of candidates) {
    if (!venv || !existsSync(path.join(venv, "bin/python"))) continue;
    const r = spawnSync(path.join(venv, "bin/python"), ["-c", "import importlib.metadata as m, harbor.models.job.config; print(m.version('harbor'))"], { encoding: "utf8", timeout: 60_000 });
    if (r.status === 0 && r.stdout.trim() === version) return venv;
  }
  return null;
}
