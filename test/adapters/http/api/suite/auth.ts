import { describe, expect, it } from "vitest";
import { expectProblem, receiverUrl, SENT, type Suite } from "./context.ts";

/** The API suite's authentication cases (CONTRACT §2): bearer tokens and 401s. */
export function authCases(s: Suite): void {
  const { newProject, send } = s;
  describe("authentication", () => {
    it("a missing, malformed, unknown or revoked token answers 401", async () => {
      const { token } = await newProject();
      const unknown = `hrld_${"A".repeat(43)}`;
      for (const authorization of [
        undefined,
        "",
        "Bearer",
        `Basic ${btoa("user:pass")}`,
        `Token ${token}`,
        "Bearer not-a-token",
        `Bearer ${token}x`,
        `Bearer ${unknown}`,
      ]) {
        const headers: Record<string, string> =
          authorization === undefined ? {} : { Authorization: authorization };
        const res = await send("GET", "/api/v1/webhooks", { headers });
        const body = expectProblem(res, 401, "unauthorized");
        expect(res.response.headers.get("www-authenticate")).toBe('Bearer realm="herald"');
        expect(JSON.stringify(body)).not.toContain(token);
      }
      expect(
        (await send("GET", "/api/v1/webhooks", { headers: { Authorization: `bearer ${token}` } })).response
          .status,
      ).toBe(200);
      expectProblem(
        await send("POST", "/api/v1/webhooks", { json: { url: receiverUrl(), events: [SENT] } }),
        401,
        "unauthorized",
      );
    });

    it("a revoked token answers 401", async (ctx) => {
      const target = s.target();
      if (!target.revokeToken) return ctx.skip();
      const { token, api } = await newProject();
      expect((await api.GET("/api/v1/webhooks")).response.status).toBe(200);
      await target.revokeToken(token);
      expectProblem(await api.GET("/api/v1/webhooks"), 401, "unauthorized");
    });
  });
}
