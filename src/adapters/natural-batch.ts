/** What one call of a batch gets: its own answer, or its own failure. */
export type Answer<O> = { ok: O } | { error: unknown };

export interface NaturalBatchOptions {
  /** Batches on their way at once; a call made while this many are out waits for the next batch. */
  parallel: number;
  /** Most calls in one batch. */
  max: number;
}

/**
 * The publish path's batching: two batches on their way at once (so one slow batch does not hold every
 * caller), up to 500 calls in one.
 */
export const PUBLISH_BATCHING: NaturalBatchOptions = { parallel: 2, max: 500 };

/**
 * Natural batching (a group commit): a call goes to the database at once when fewer than `parallel`
 * batches are on their way; otherwise it waits, and every call that waited goes in the next batch, as
 * one command. At low load each call goes alone and waits for nothing; under load batches grow with
 * the load and the round trips per call fall, with no timer and no added latency beyond the batch
 * ahead. A call never joins a batch that was sent before it was made, so it sees every write that
 * finished before it started.
 *
 * `send` answers each input in order; if it throws, every call of that batch fails with its error.
 */
export function naturalBatch<I, O>(
  send: (inputs: readonly I[]) => Promise<readonly Answer<O>[]>,
  options: NaturalBatchOptions,
): (input: I) => Promise<O> {
  const waiting: { input: I; resolve(o: O): void; reject(e: unknown): void }[] = [];
  let out = 0;

  function go() {
    while (out < options.parallel && waiting.length > 0) {
      const batch = waiting.splice(0, options.max);
      out++;
      Promise.resolve()
        .then(() => send(batch.map((c) => c.input)))
        .then(
          (answers) =>
            batch.forEach((c, i) => {
              const a = answers[i];
              if (a === undefined) c.reject(new Error("natural batch: no answer for a call"));
              else if ("ok" in a) c.resolve(a.ok);
              else c.reject(a.error);
            }),
          (e: unknown) => {
            for (const c of batch) c.reject(e);
          },
        )
        .finally(() => {
          out--;
          go();
        });
    }
  }

  return (input) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ input, resolve, reject });
      go();
    });
}
