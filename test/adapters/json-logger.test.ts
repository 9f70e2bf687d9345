import { describe, expect, it } from "vitest";
import { createJsonLogger } from "../../src/adapters/json-logger.ts";

function capture(level: Parameters<typeof createJsonLogger>[0]) {
  const lines: string[] = [];
  const logger = createJsonLogger(level, (l) => lines.push(l));
  return { logger, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("createJsonLogger", () => {
  it("writes one JSON object per line with time, level, message and fields, from the configured level up", () => {
    const { logger, lines, parsed } = capture("info");
    logger.debug("hidden");
    logger.info("shown", { n: 1 });
    logger.warn("careful");
    logger.error("broken", { code: "x" });
    expect(lines).toHaveLength(3);
    expect(lines.every((l) => !l.includes("\n"))).toBe(true);
    const [info, warn, error] = parsed();
    expect(info).toMatchObject({ level: "info", msg: "shown", n: 1 });
    expect(Number.isNaN(Date.parse(String(info!.time)))).toBe(false);
    expect(warn).toMatchObject({ level: "warn", msg: "careful" });
    expect(error).toMatchObject({ level: "error", msg: "broken", code: "x" });
  });

  it("writes nothing at silent", () => {
    const { logger, lines } = capture("silent");
    logger.error("nope");
    logger.child({ request_id: "r" }).error("nope");
    expect(lines).toEqual([]);
  });

  it("child loggers carry their fields, nested, without changing the parent", () => {
    const { logger, parsed } = capture("debug");
    const child = logger.child({ request_id: "r1" });
    const grandchild = child.child({ delivery_id: "d1" });
    grandchild.info("deep", { extra: true });
    logger.info("parent");
    const [deep, parent] = parsed();
    expect(deep).toMatchObject({ request_id: "r1", delivery_id: "d1", extra: true });
    expect(parent).not.toHaveProperty("request_id");
  });

  it("never writes secrets: fields named like one, and whsec_/hrld_ values inside text and errors", () => {
    const { logger, lines } = capture("debug");
    const secret = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ1Ng==";
    const token = "hrld_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdE";
    logger.child({ authorization: `Bearer ${token}` }).error("failed", {
      secret,
      api_token: token,
      master_key: "k",
      password: "p",
      note: `sent with ${secret} and ${token}`,
      error: new Error(`bad key ${secret}`),
    });
    const line = lines.join("\n");
    expect(line).not.toContain(secret);
    expect(line).not.toContain(token);
    expect(line).not.toContain('"k"');
    expect(line).not.toContain('"p"');
    const parsed = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      authorization: "[redacted]",
      secret: "[redacted]",
      api_token: "[redacted]",
      master_key: "[redacted]",
      password: "[redacted]",
      note: "sent with [redacted] and [redacted]",
      error: { name: "Error", message: "bad key [redacted]" },
    });
  });
});
