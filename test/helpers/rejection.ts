// The message a promise rejects with; fails the test (naming the value) when it resolves instead.
export async function rejection(p: Promise<unknown>): Promise<string> {
  const outcome = await p.then(
    (value) => ({ resolved: value }),
    (err: unknown) => ({ rejected: err instanceof Error ? err.message : String(err) }),
  );
  if (!("rejected" in outcome)) throw new Error(`expected a rejection, resolved with ${JSON.stringify(outcome.resolved)}`);
  return outcome.rejected;
}
