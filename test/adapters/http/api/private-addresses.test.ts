import { describe, expect, it } from "vitest";
import { unwrap } from "../../../../clients/typescript/client.ts";
import { makeApiHarness } from "../../../support/api-harness.ts";

const LITERALS = [
  "https://127.0.0.1/x",
  "https://0x7f.1/x",
  "https://2130706433/x",
  "https://[::1]/x",
  "https://[::ffff:127.0.0.1]/x",
  "https://10.0.0.5/x",
  "https://169.254.169.254/latest/meta-data",
  "https://[fd00:ec2::254]/",
  "https://100.64.1.1/x",
  "https://[fe80::1]/x",
  "https://0.0.0.0/x",
  "https://224.0.0.1/x",
];

describe("endpoint URLs with a non-public IP literal", () => {
  it("are refused with 422 at creation and on PATCH, naming body.url and the kind of address", async () => {
    const h = await makeApiHarness();
    const api = h.client((await h.newToken()).token);
    const w = await unwrap(
      api.POST("/api/v1/webhooks", {
        body: { url: "https://hooks.example.com/a", events: ["message.sent"] },
      }),
    );
    for (const url of LITERALS) {
      const created = await api.POST("/api/v1/webhooks", { body: { url, events: ["message.sent"] } });
      expect(created.response.status, url).toBe(422);
      expect(created.error).toMatchObject({
        code: "validation_failed",
        errors: [{ path: "body.url", message: expect.stringMatching(/^url must not point at a .+ address/) }],
      });
      const patched = await api.PATCH("/api/v1/webhooks/{id}", {
        params: { path: { id: w.id } },
        body: { url },
      });
      expect(patched.response.status, url).toBe(422);
      expect(patched.error).toMatchObject({ errors: [{ path: "body.url" }] });
    }
    const loopback = await api.POST("/api/v1/webhooks", {
      body: { url: "https://127.0.0.1/x", events: ["message.sent"] },
    });
    expect(loopback.error).toMatchObject({
      errors: [{ message: expect.stringContaining("loopback address (127.0.0.1)") }],
    });
    const metadata = await api.POST("/api/v1/webhooks", {
      body: { url: "https://169.254.169.254/", events: ["message.sent"] },
    });
    expect(metadata.error).toMatchObject({
      errors: [{ message: expect.stringContaining("cloud metadata") }],
    });
    expect((await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } }))).url).toBe(
      "https://hooks.example.com/a",
    );
  });

  it("are accepted with HERALD_ALLOW_PRIVATE_NETWORKS=true; names are left to the send-time check", async () => {
    const h = await makeApiHarness({ allowPrivateNetworks: true });
    const api = h.client((await h.newToken()).token);
    for (const url of LITERALS) {
      const created = await api.POST("/api/v1/webhooks", { body: { url, events: ["message.sent"] } });
      expect(created.response.status, url).toBe(201);
    }
    const strict = await makeApiHarness();
    const strictApi = strict.client((await strict.newToken()).token);
    const byName = await strictApi.POST("/api/v1/webhooks", {
      body: { url: "https://localhost/x", events: ["message.sent"] },
    });
    expect(byName.response.status).toBe(201);
  });
});
