// Benchmark (not a test), on the examples' sim instance: both examples/ programs through their whole life
// with the REAL engine — examples/own-program (TypeScript on the built package) and examples/python-program
// (Python on plugin/'s component package) — each previewed, brought up (the cluster and a real 3-task job
// through the router to the one worker), brought up again (must change nothing) and destroyed with the
// program (must leave no resource). The examples suite (test/integration/examples.test.ts) checks the
// type-check, the SDK generation and both previews in CI; this is the rest, and it prints seconds per step.
// Exits 1 naming every check that failed.
//   node --import tsx bench/examples-bench.ts
import type { Stack } from "@pulumi/pulumi/automation";
import { simDown, simUp } from "../sim/cluster";
import { buildPackage, EXAMPLES_INSTANCE, ExamplesSession, preparePythonExample, projectName, SIM_PROXY_UPSTREAM, upProblems } from "../test/helpers/examples";
import { repoRoot } from "../test/helpers/project";

const quiet = () => undefined;
const failures: string[] = [];
const seconds: Record<string, Record<string, number>> = {};

async function timed<T>(example: string, step: string, f: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  try {
    return await f();
  } finally {
    (seconds[example] ??= {})[step] = Math.round((Date.now() - t0) / 100) / 10;
  }
}

/** preview, up, up again, destroy of one example's stack; every deviation recorded in `failures`. */
async function lifecycle(example: string, stack: Stack, checks: Parameters<typeof upProblems>[1]): Promise<void> {
  const preview = await timed(example, "preview", () => stack.preview({ onOutput: quiet, signal: AbortSignal.timeout(900_000) }));
  if ((preview.changeSummary.create ?? 0) <= 20) failures.push(`${example}: preview plans ${preview.changeSummary.create ?? 0} creates, expected more than 20`);
  const up = await timed(example, "up", () => stack.up({ onOutput: quiet, signal: AbortSignal.timeout(1_800_000) }));
  if (up.summary.result !== "succeeded") failures.push(`${example}: up ${up.summary.result}`);
  failures.push(...upProblems(up.outputs, checks).map((p) => `${example}: ${p}`));
  const again = await timed(example, "second up", () => stack.up({ onOutput: quiet, signal: AbortSignal.timeout(900_000) }));
  const changed = Object.keys(again.summary.resourceChanges ?? {}).filter((k) => k !== "same");
  if (changed.length) failures.push(`${example}: the second up changed ${JSON.stringify(again.summary.resourceChanges)}`);
  // With the program: the restart guard's delete hooks are registered by it.
  const down = await timed(example, "destroy", () => stack.destroy({ onOutput: quiet, runProgram: true, signal: AbortSignal.timeout(900_000) }));
  if (down.summary.result !== "succeeded") failures.push(`${example}: destroy ${down.summary.result}`);
  const left = ((await stack.exportStack()).deployment as { resources?: unknown[] }).resources ?? [];
  if (left.length) failures.push(`${example}: ${left.length} resources left after destroy`);
}

async function main(): Promise<number> {
  const session = new ExamplesSession();
  try {
    await buildPackage();
    ({ plan: session.plan } = await timed("sim", "sim up", () => simUp({ root: repoRoot, instance: EXAMPLES_INSTANCE, log: quiet })));

    const tsDir = session.exampleCopy("own-program");
    const ts = await session.exampleStack(tsDir, session.simConfig("own-program"), { [`${projectName("own-program")}:proxyUpstream`]: SIM_PROXY_UPSTREAM });
    await lifecycle("own-program", ts, {});

    const prep = await timed("python-program", "prepare (host, venv, package add)", () => preparePythonExample(session));
    for (const [step, r] of [["python host", prep.host], ["venv", prep.venv], ["package add", prep.add], ["venv again", prep.venvAgain]] as const) {
      if (r.code !== 0) failures.push(`python-program: ${step} exited ${r.code}: ${r.stderr.slice(-400)}`);
    }
    const py = await session.exampleStack(prep.dir, session.simConfig("python-program"), { [`${projectName("python-program")}:proxyUpstream`]: SIM_PROXY_UPSTREAM });
    await lifecycle("python-program", py, { workers: ["worker-a"], digests: true });
  } finally {
    await session.cleanup();
    await simDown({ root: repoRoot, instance: EXAMPLES_INSTANCE, discardResults: true, log: quiet });
  }
  for (const [example, steps] of Object.entries(seconds)) {
    console.log(`${example.padEnd(16)} ${Object.entries(steps).map(([s, t]) => `${s} ${t} s`).join(" · ")}`);
  }
  if (failures.length) {
    console.error(`examples bench: ${failures.length} check(s) failed:\n${failures.map((f) => `  ${f}`).join("\n")}`);
    return 1;
  }
  console.log("examples bench: both examples up, unchanged on a second up, and destroyed to nothing");
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`examples bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
