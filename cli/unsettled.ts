// A command whose promise never settles ends when nothing is left to wait on (a fetch whose only timer is an
// unref'd AbortSignal.timeout, say), and Node would then exit 0 as if it had succeeded. This makes that an
// error that names the command.
export const UNSETTLED_EXIT_CODE = 70;

export function failIfUnsettled(command: string | undefined): void {
  process.once("beforeExit", () => {
    console.error(`reprobench: ${command ?? "the command"} stopped before it finished: nothing was left to wait on (a bug in reprobench; rerun it, and report the last lines above)`);
    process.exit(UNSETTLED_EXIT_CODE);
  });
}
