import { describe, expect, it } from "vitest";
import { MemoryConsoleSessions } from "../../../../src/adapters/memory/console.ts";
import { StoreUnavailableError } from "../../../../src/app/ports/store.ts";
import { makeConsoleHarness } from "./console-harness.ts";

/**
 * Makes every method of `proto` throw as a store does while its database is out of reach, on `target`
 * (an instance, or the prototype itself); answers the function that ends the outage.
 */
function outage(target: object, proto: object = Object.getPrototypeOf(target)): () => void {
  const t = target as Record<string, unknown>;
  const saved = new Map<string, PropertyDescriptor | undefined>();
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (name === "constructor" || typeof (proto as Record<string, unknown>)[name] !== "function") continue;
    saved.set(name, Object.getOwnPropertyDescriptor(target, name));
    t[name] = async () => {
      throw new StoreUnavailableError();
    };
  }
  return () => {
    for (const [name, descriptor] of saved) {
      if (descriptor) Object.defineProperty(target, name, descriptor);
      else delete t[name];
    }
  };
}

const calm = (text: string) => {
  expect(text).toContain("<h1>Temporarily unavailable</h1>");
  expect(text).toContain("Herald cannot reach its database for a moment");
  expect(text).not.toContain("Something went wrong");
  expect(text).not.toContain("correct it");
};

describe("console: a database out of reach is a calm page (503), never a failure of the form", () => {
  it("a page whose reads fail, a form whose write fails, and the session's own read", async () => {
    // A form handled by the page-wide path (no form of its own to show again) says the same calmly.
    const h = await makeConsoleHarness();
    const { b } = await h.signedIn();

    const csrf = await b.csrf();
    const endOutage = outage(h.repos.endpoints);
    const list = await b.get("/console");
    expect(list.status).toBe(503);
    expect(list.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(list.headers.get("content-type")).toContain("text/html");
    const text = await list.text();
    calm(text);
    expect(text).toMatch(/href="\/console\/?">Try again/);

    const created = await b.post("/console/endpoints", {
      _csrf: csrf,
      url: "https://hooks.example.com/a",
      events: ["message.delivered"],
    });
    // The form comes back with what was typed, saying why (the database), not blaming the input.
    expect(created.status).toBe(503);
    const createdText = await created.text();
    expect(createdText).toContain("cannot reach its database");
    expect(createdText).toContain('value="https://hooks.example.com/a"');
    expect(createdText).not.toContain("Something went wrong");
    endOutage();
    expect((await b.get("/console")).status).toBe(200);

    const endSessions = outage(MemoryConsoleSessions.prototype, MemoryConsoleSessions.prototype);
    const signedOutPage = await b.get("/console");
    endSessions();
    expect(signedOutPage.status).toBe(503);
    expect(signedOutPage.headers.get("retry-after")).toMatch(/^\d+$/);
    calm(await signedOutPage.text());
  });
});
