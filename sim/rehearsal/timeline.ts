// The faults of a rehearsal, as a scenario file (sim/scenarios/rehearsal-*.json): events fired while the
// job runs, each when the job's progress reaches a point — a fraction of its trials finished, or a number
// of trials started — so the same file hits the same phase of the run whatever the machine's speed. The
// proxy's failures come from its seeded generator (network conditions `seed`), so a file and its seed
// give the same run. Pure: parsing and "what is due now"; the bench and the rehearsal suite act on it.
import { z } from "zod";

const when = z
  .object({
    /** Fires once this many trials have started (trial dirs exist). */
    started: z.number().int().positive().optional(),
    /** Fires once this fraction of the job's trials has finished (result.json written). */
    finishedFraction: z.number().gt(0).lte(1).optional(),
    /**
     * With finishedFraction: also waits until every task of these rehearsal behaviours has finished
     * (sim/rehearsal/tasks.ts), so that a fault window is sure to have covered them whatever order Harbor
     * started the tasks in (it takes the dataset directory's listing order).
     */
    afterBehaviours: z.array(z.string().min(1)).min(1).optional(),
  })
  .strict()
  .refine((w) => (w.started === undefined) !== (w.finishedFraction === undefined), { message: "give exactly one of started, finishedFraction" })
  .refine((w) => w.afterBehaviours === undefined || w.finishedFraction !== undefined, { message: "afterBehaviours goes with finishedFraction" });

const proxyFault = z
  .object({
    failFraction: z.number().min(0).max(1),
    failWith: z.enum(["502", "503", "429", "reset"]).optional(),
    /** Only requests to these (host:port or URL prefixes) can fail; [] = all. */
    failTargets: z.array(z.string().min(1)).optional(),
  })
  .strict();

const event = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, { message: "expected lower-case words joined by '-'" }),
    comment: z.string().optional(),
    when,
    /** Sets the egress proxy's failures (a fault window opens with a fraction > 0 and closes with 0). */
    proxy: proxyFault.optional(),
    /** Kills the model server container on this host (`docker kill`; its restart policy brings it back). */
    killServer: z.string().min(1).optional(),
    /** Stops the job gracefully: destroy of the run stack (Harbor cancels its trials and writes results). */
    stop: z.literal(true).optional(),
  })
  .strict()
  .refine((e) => [e.proxy, e.killServer, e.stop].filter((a) => a !== undefined).length === 1, { message: "needs exactly one action: proxy, killServer or stop" });

export const FaultTimelineSchema = z
  .object({
    name: z.string().min(1),
    description: z.string().optional(),
    /** The proxy's generator seed for every proxy event. */
    seed: z.number().int().min(0),
    events: z.array(event).min(1),
  })
  .strict()
  .superRefine((t, ctx) => {
    const names = t.events.map((e) => e.name);
    for (const [i, n] of names.entries()) if (names.indexOf(n) !== i) ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["events", i, "name"], message: `'${n}' is used twice` });
    const stops = t.events.filter((e) => e.stop).length;
    if (stops > 1) ctx.addIssue({ code: z.ZodIssueCode.custom, path: ["events"], message: "at most one stop event: the job ends there" });
  });

export type FaultTimeline = z.output<typeof FaultTimelineSchema>;
export type FaultEvent = FaultTimeline["events"][number];

/** Parses a timeline file's text; every problem at once, each naming the file and the event. */
export function parseFaultTimeline(text: string, file: string): FaultTimeline {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not valid JSON (${(err as Error).message})`);
  }
  const parsed = FaultTimelineSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => `  ${i.path.join(".") || "(top level)"}: ${i.message}`);
  throw new Error(`${file}: ${parsed.error.issues.length} problem(s):\n${lines.join("\n")}`);
}

export interface JobProgress {
  started: number;
  finished: number;
  total: number;
  /** Tasks with a finished trial (for afterBehaviours). */
  finishedTasks?: ReadonlySet<string>;
}

/** Whether an event's moment has come; `behaviourOf` maps task names to rehearsal behaviours. */
export function isDue(e: FaultEvent, p: JobProgress, behaviourOf: ReadonlyMap<string, string> = new Map()): boolean {
  if (e.when.started !== undefined) return p.started >= e.when.started;
  if (!(p.total > 0 && p.finished >= Math.ceil(e.when.finishedFraction! * p.total))) return false;
  const wanted = new Set(e.when.afterBehaviours ?? []);
  if (wanted.size === 0) return true;
  const tasks = [...behaviourOf].filter(([, b]) => wanted.has(b)).map(([task]) => task);
  if (tasks.length === 0) throw new Error(`event ${e.name}: no task of this run has behaviour ${[...wanted].join(", ")}`);
  return tasks.every((task) => p.finishedTasks?.has(task));
}

/** The events due now and not fired yet, in file order (a later one never fires before an earlier one). */
export function dueEvents(t: FaultTimeline, p: JobProgress, fired: ReadonlySet<string>, behaviourOf?: ReadonlyMap<string, string>): FaultEvent[] {
  const out: FaultEvent[] = [];
  for (const e of t.events) {
    if (fired.has(e.name)) continue;
    if (!isDue(e, p, behaviourOf)) break;
    out.push(e);
  }
  return out;
}

/** One line per event for a report: what, and when in the job's terms. */
export function describeEvent(e: FaultEvent): string {
  const at =
    e.when.started !== undefined
      ? `after ${e.when.started} trial(s) started`
      : `at ${Math.round(e.when.finishedFraction! * 100)}% of trials finished${e.when.afterBehaviours ? ` and every ${e.when.afterBehaviours.join("/")} task done` : ""}`;
  const what = e.proxy
    ? e.proxy.failFraction > 0
      ? `proxy fails ${Math.round(e.proxy.failFraction * 100)}% of connections${e.proxy.failTargets?.length ? ` to ${e.proxy.failTargets.join(", ")}` : ""} with ${e.proxy.failWith ?? "502"}`
      : "proxy failures off"
    : e.killServer
      ? `model server on ${e.killServer} killed`
      : "graceful stop (destroy of the run stack)";
  return `${e.name}: ${what}, ${at}`;
}
