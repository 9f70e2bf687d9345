import { randomBytes } from "node:crypto";
import { expect } from "vitest";
import { systemClock, systemIds } from "../../src/adapters/system.ts";
import type { TokenRepository } from "../../src/app/ports/tokens.ts";
import { tokenUseCases } from "../../src/app/tokens.ts";
import { type HeraldProcess, startHerald } from "../support/herald-process.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { eventBody, eventIdOf, waitForProgress } from "./delivery-support.ts";

// Shared by the tests that end a database's server-side connections under publish load
// (backend-kill-*.test.ts): a Herald process with one endpoint, publishers, and the final checks.

/** Accepted events not yet delivered above which the publishers pause (the final wait stays short). */
const BACKLOG = 60;

export interface World {
  herald: HeraldProcess;
  receiver: Receiver;
  token: string;
  close(): Promise<void>;
}

/**
 * Herald with `env` (its database), a token made directly in that database through `repositories`, and
 * an endpoint at a receiver that verifies signatures.
 */
export async function heraldOn(
  env: Record<string, string>,
  repositories: () => Promise<{ tokens: TokenRepository; close(): Promise<void> }>,
): Promise<World> {
  const repos = await repositories();
  let token: string;
  try {
    token = (
      await tokenUseCases({ tokens: repos.tokens, clock: systemClock, ids: systemIds }).create({
        name: "backend-kill",
      })
    ).token;
  } finally {
    await repos.close();
  }
  const secrets: string[] = [];
  const receiver = await startReceiver({ secrets });
  const herald = await startHerald({
    env: {
      ...env,
      HERALD_MASTER_KEY: randomBytes(32).toString("base64"),
      HERALD_ALLOW_HTTP_URLS: "true",
      HERALD_DELIVERY_TIMEOUT: "5s",
      HERALD_LEASE_MARGIN: "5s",
      HERALD_RETRY_SCHEDULE: Array(30).fill("1s").join(","),
    },
  });
  const created = await fetch(`${herald.baseUrl}/api/v1/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ url: receiver.url, events: ["message.delivered"] }),
  });
  expect(created.status).toBe(201);
  secrets.push(((await created.json()) as { secret: string }).secret);
  return {
    herald,
    receiver,
    token,
    async close() {
      await herald.stop(20_000);
      await receiver.close();
    },
  };
}

/** Publishers that keep publishing until stopped, counting every answer by status. */
export function publishLoad(w: World, publishers = 4) {
  const accepted = new Set<string>();
  const answers = new Map<number, number>();
  let withoutRetryAfter = 0;
  const failures: string[] = [];
  let stop = false;
  const delivered = () => new Set(w.receiver.requests.map(eventIdOf)).size;
  const one = async () => {
    while (!stop) {
      let status = 0;
      try {
        const r = await fetch(`${w.herald.baseUrl}/api/v1/events`, {
          method: "POST",
          headers: { authorization: `Bearer ${w.token}`, "content-type": "application/json" },
          body: JSON.stringify(eventBody("message.delivered")),
          signal: AbortSignal.timeout(PATIENCE_MS),
        });
        status = r.status;
        const text = await r.text();
        if (status === 202) accepted.add((JSON.parse(text) as { id: string }).id);
        else if (status === 503 && !/^\d+$/.test(r.headers.get("retry-after") ?? "")) withoutRetryAfter++;
        else if (status !== 503 && failures.length < 5) failures.push(`${status}: ${text.slice(0, 300)}`);
      } catch (e) {
        if (failures.length < 5) failures.push(`no answer: ${(e as Error).message}`);
      }
      answers.set(status, (answers.get(status) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 20));
      while (!stop && accepted.size - delivered() > BACKLOG) await new Promise((r) => setTimeout(r, 100));
    }
  };
  const running = Array.from({ length: publishers }, one);
  return {
    accepted,
    answers,
    failures,
    delivered,
    get withoutRetryAfter() {
      return withoutRetryAfter;
    },
    async stop() {
      stop = true;
      await Promise.all(running);
    },
  };
}

/** After the load: only 202 and 503 (with Retry-After), and every accepted event delivered, signed. */
export async function expectNothingLost(w: World, load: ReturnType<typeof publishLoad>) {
  const statuses = [...load.answers.keys()].sort();
  expect(
    statuses.filter((s) => s !== 202 && s !== 503),
    `every publish answers 202 or 503: ${JSON.stringify([...load.answers])}\n${load.failures.join("\n")}\n${w.herald.output().split("\n").slice(-20).join("\n")}`,
  ).toEqual([]);
  expect(load.withoutRetryAfter, "every 503 says when to come back (Retry-After)").toBe(0);
  await waitForProgress(
    () => {
      const seen = new Set(w.receiver.requests.map(eventIdOf));
      return [...load.accepted].filter((id) => seen.has(id)).length;
    },
    load.accepted.size,
    (n) => `${n} of ${load.accepted.size} accepted events delivered`,
    { everyMs: 300 },
  );
  expect(w.receiver.requests.every((r) => r.verdict.ok)).toBe(true);
  const ready = await fetch(`${w.herald.baseUrl}/readyz`);
  expect(ready.status).toBe(200);
  expect(w.herald.child.exitCode).toBeNull();
}
