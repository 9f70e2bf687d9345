import { describe, expect, it } from "vitest";
import { unwrap } from "../../../../clients/typescript/client.ts";
import { makeApiHarness } from "../../../support/api-harness.ts";

// In-process only: what is stored and logged is read behind the API.
describe("Ed25519 endpoint keys (in-process)", () => {
  it("keeps an Ed25519 private key sealed in the endpoint's secrets, out of every answer and log line", async () => {
    const h = await makeApiHarness();
    const { token } = await h.newToken();
    const api = h.client(token);
    const w = await unwrap(
      api.POST("/api/v1/webhooks", {
        body: {
          url: "https://receiver.invalid/h",
          events: ["message.sent"],
          signature_scheme: "standard-webhooks-ed25519",
        },
      }),
    );
    const path = { id: w.id };
    const rotated = await unwrap(
      api.POST("/api/v1/webhooks/{id}/rotate", { params: { path }, body: { grace_period_seconds: 60 } }),
    );
    // The stored shape is unchanged: sealed texts in `secrets`, the old key kept for the grace period.
    const [stored] = await h.repos.endpoints.getMany([w.id]);
    expect(stored!.secrets).toHaveLength(2);
    expect(stored!.secrets.map((x) => x.expiresAt === null)).toEqual([true, false]);
    for (const x of stored!.secrets) expect(x.sealed).toMatch(/^v1\./);
    expect(JSON.stringify(stored)).not.toMatch(/whsk_|whpk_/);
    const answers = [
      JSON.stringify(w),
      JSON.stringify(rotated),
      JSON.stringify(await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path } }))),
      JSON.stringify(await unwrap(api.GET("/api/v1/webhooks"))),
    ];
    for (const text of answers) expect(text).not.toMatch(/whsk_/);
    expect(h.logLines.length).toBeGreaterThan(3);
    expect(h.logLines.join("\n")).not.toMatch(/whsk_/);
  });
});
