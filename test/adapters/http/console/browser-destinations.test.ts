import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleInChromium, foreignRequests, startConsoleInChromium } from "./browser-harness.ts";

// Endpoints of other kinds than HTTPS created through the console's form in Chromium (browser-harness.ts).

let c: ConsoleInChromium;

beforeAll(async () => {
  c = await startConsoleInChromium();
});

afterAll(async () => {
  await c?.close();
});

describe("the console's destination forms in Chromium", () => {
  it("creates a Kafka endpoint through the form: a bad topic is shown beside it, the password is typed again, never shown", async () => {
    const password = "browser-sasl-pw-3e8b";
    const p = await c.newPage();
    await c.signIn(p, c.tokenA);
    await p.goto(`${c.server.baseUrl}/console/endpoints/new`);
    // The script shows the chosen kind's boxes alone: HTTPS first, then Kafka's once it is chosen.
    expect(await p.locator("#kafka_topic").isVisible()).toBe(false);
    await p.getByRole("radio", { name: /Apache Kafka/ }).check();
    expect(await p.locator("#url").isVisible()).toBe(false);
    await p.locator("#kafka_brokers").fill("127.0.0.1:1\n127.0.0.1:2");
    await p.locator("#kafka_topic").fill("bad topic");
    await p.locator("#kafka_sasl_mechanism").selectOption("scram-sha-256");
    await p.locator("#kafka_sasl_username").fill("herald");
    await p.locator("#kafka_sasl_password").fill(password);
    // domain.verified: nothing these files publish, so no delivery goes to the unreachable brokers.
    await p.getByLabel("domain.verified").check();
    await p.getByRole("button", { name: "Create endpoint" }).click();
    await p.locator("#kafka_topic-error").waitFor();
    expect(await p.locator("#kafka_topic-error").textContent()).toContain("must be 1-249 of letters");
    expect(await p.getByRole("radio", { name: /Apache Kafka/ }).isChecked()).toBe(true);
    expect(await p.locator("#kafka_sasl_password").inputValue()).toBe("");
    expect(await p.content()).not.toContain(password);
    await c.shot(p, "endpoint-new-kafka-error");
    await p.locator("#kafka_topic").fill("orders");
    await p.locator("#kafka_sasl_password").fill(password);
    await p.getByRole("button", { name: "Create endpoint" }).click();
    expect((await p.locator("#secret").textContent())?.trim()).toMatch(/^whsec_/);
    await p.getByRole("link", { name: "Continue to the endpoint" }).click();
    await p.getByRole("heading", { name: "Destination" }).waitFor();
    const main = (await p.locator("main").textContent()) ?? "";
    expect(main).toContain("kafka://127.0.0.1:1,127.0.0.1:2/orders");
    expect(main).toContain("scram-sha-256, user herald, password ********");
    expect(await p.content()).not.toContain(password);
    await c.shot(p, "endpoint-kafka");
    const id = new URL(p.url()).pathname.split("/").pop() ?? "";
    const made = await c.api<{ kind: string; kafka: { topic: string } }>(c.tokenA, "GET", `/webhooks/${id}`);
    expect([made.kind, made.kafka.topic]).toEqual(["kafka", "orders"]);
  });

  it("made no request to any host but Herald's", () => {
    expect(c.requested.length).toBeGreaterThan(5);
    expect(foreignRequests(c)).toEqual([]);
  });
});
