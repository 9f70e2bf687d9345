import type { Sender } from "../../app/ports/sending.ts";

/** A sender whose module is loaded on first use, or earlier by `warm()`. */
export interface LazySender extends Sender {
  /** Starts loading now, so the first delivery does not wait for it. */
  warm(): void;
}

/**
 * Defers loading a sender's module until after the start: undici is about 110 modules and compiles its
 * HTTP parser (WebAssembly) when imported, a quarter of what a memory store's start spends loading
 * modules. A failed load is tried again at the next send; meanwhile that send throws, which the engine
 * records as a connection error.
 */
export function lazySender(load: () => Promise<Sender>): LazySender {
  let loading: Promise<Sender> | null = null;
  const get = () => {
    loading ??= load().catch((e: unknown) => {
      loading = null;
      throw e;
    });
    return loading;
  };
  return {
    async send(request) {
      return (await get()).send(request);
    },
    async close() {
      if (loading) await (await loading.catch(() => null))?.close();
    },
    warm() {
      get().catch(() => {});
    },
  };
}
