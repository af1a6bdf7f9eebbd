// Benchmark tool (not a test): replays what `bench/rehearsal.ts --save DIR` kept — the runner's raw status
// probe at 25/50/75 % of the 6× job and the rehearsal's result — through today's results/eta.ts, so the
// estimator can be changed and measured again on a real run's data without running the cluster. Prints,
// for each saved run and sample, the ETA's error as a share of the time left (positive: the job ended
// later than status said) with the earlier jobs the probe found and without them, against the reference
// the bench uses (the end had the stop not happened, for samples before the stop).
//   node --import tsx bench/eta-replay.ts DIR [DIR ...]
import * as fs from "node:fs";
import * as path from "node:path";
import { buildStatus, ProbeSchema } from "../results/status";

const pct = (x: number | null) => (x === null ? "-" : `${x >= 0 ? "+" : ""}${(x * 100).toFixed(0)}%`);

interface Saved {
  fraction: number;
  takenAt: string;
  probe: unknown;
}

/** The remaining seconds status would give from this probe (null: no ETA). */
function remainingOf(probe: ReturnType<typeof ProbeSchema.parse>, withEarlier: boolean): number | null {
  const job = probe.job && (withEarlier ? probe.job : { ...probe.job, earlier: [] });
  return buildStatus({ stack: "replay", cluster: null, now: probe.now, job, servers: [], router: null }).eta?.remainingSec ?? null;
}

function replay(dir: string): string[] {
  const { result } = JSON.parse(fs.readFileSync(path.join(dir, "result.json"), "utf8")) as { result: { workEnd: string; passes: { endedAt: string }[] } };
  const stoppedAt = Date.parse(result.passes[0].endedAt);
  const lines = [`${dir}: reference end ${result.workEnd} (the end had the stop not happened); stop at ${result.passes[0].endedAt}`];
  const samples = fs
    .readdirSync(dir)
    .filter((f) => /^sample-\d+\.json$/.test(f))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")) as Saved)
    .sort((a, b) => a.fraction - b.fraction);
  for (const s of samples) {
    const probe = ProbeSchema.parse(s.probe);
    if (probe.now > stoppedAt) {
      lines.push(`  at ${(s.fraction * 100).toFixed(0)}%: taken after the stop; skipped`);
      continue;
    }
    const left = (Date.parse(result.workEnd) - probe.now) / 1000;
    const err = (sec: number | null) => (sec === null || !(left > 0) ? null : (left - sec) / left);
    const withEarlier = remainingOf(probe, true);
    const without = remainingOf(probe, false);
    lines.push(
      `  at ${(s.fraction * 100).toFixed(0)}%: ${left.toFixed(0)} s left; with earlier jobs ${withEarlier?.toFixed(0) ?? "-"} s (${pct(err(withEarlier))}), without ${without?.toFixed(0) ?? "-"} s (${pct(err(without))})`,
    );
  }
  return lines;
}

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error("usage: node --import tsx bench/eta-replay.ts DIR [DIR ...]  (directories written by bench/rehearsal.ts --save)");
  process.exit(2);
}
for (const dir of dirs) console.log(replay(dir).join("\n"));
