import { describe, expect, it } from "vitest";
import { type HeraldClient, paginate, unwrap } from "../../../../../clients/typescript/client.ts";
import { ErasureSchema } from "../../../../../src/adapters/http/routes/erasures/schema.ts";
import { SettingsSchema } from "../../../../../src/adapters/http/routes/settings/schema.ts";
import {
  DELIVERED,
  expectDelivery,
  expectInvalid,
  expectProblem,
  MILLIS,
  messageData,
  publishBody,
  SENT,
  type Suite,
  UUID,
} from "./context.ts";

const ERASURE_KEYS = [
  "created_at",
  "deliveries_cancelled",
  "deliveries_erased",
  "events_erased",
  "id",
  "resource_id",
  "subject",
];

function expectErasure(body: unknown) {
  expect(Object.keys(body as object).sort()).toEqual(ERASURE_KEYS);
  const e = ErasureSchema.parse(body);
  expect(e.id).toMatch(UUID);
  expect(e.created_at).toMatch(MILLIS);
  return e;
}

/** The API suite's erasure and settings cases (ADR 15). */
export function erasureCases(s: Suite): void {
  const { newProject, createWebhook, deliveriesOf, send } = s;

  const publishAbout = (
    api: HeraldClient,
    about: { messageId?: string; recipient?: string; type?: typeof DELIVERED },
    key?: string,
  ) => {
    const type = about.type ?? DELIVERED;
    const data = { ...messageData(type, about.messageId), recipient: about.recipient ?? "ada@example.com" };
    return unwrap(
      api.POST("/api/v1/events", {
        body: publishBody(type, data),
        params: { header: key ? { "idempotency-key": key } : {} },
      }),
    );
  };

  // Loosely typed on purpose: the suite also sends both subjects, or neither, to see them refused.
  const erase = (api: HeraldClient, body: { resource_id?: string; recipient?: string }) =>
    api.POST("/api/v1/erasures", { body: body as { resource_id: string } | { recipient: string } });

  const eventStatus = async (api: HeraldClient, id: string) =>
    (await api.GET("/api/v1/events/{id}", { params: { path: { id } } })).response.status;

  describe("erasures", () => {
    it("POST /erasures {resource_id} erases the subject's events and their records, cancelling what was pending (202)", async () => {
      const { api } = await newProject();
      const target = s.target();
      // With an engine behind the target, the first attempt is held in flight at the receiver, so the
      // record is still pending when the erasure runs, whoever is faster.
      const holding = target.deliversInBackground ? await target.holdingReceiver?.() : undefined;
      if (target.deliversInBackground && !holding)
        throw new Error("a background engine needs holdingReceiver");
      const w = holding
        ? await unwrap(
            api.POST("/api/v1/webhooks", { body: { url: holding.url, events: [DELIVERED, SENT] } }),
          )
        : await createWebhook(api, [DELIVERED, SENT]);
      const messageId = crypto.randomUUID();
      const first = await publishAbout(api, { messageId, type: DELIVERED });
      await holding?.held(1);
      const second = await publishAbout(api, { messageId: messageId.toUpperCase(), type: SENT });
      const kept = await publishAbout(api, { recipient: "ada@example.com" });

      const res = await erase(api, { resource_id: messageId });
      expect(res.response.status).toBe(202);
      const erasure = expectErasure(res.data);
      expect(erasure).toMatchObject({
        subject: "resource_id",
        resource_id: messageId,
        events_erased: 2,
      });
      // Both first attempts were pending (behind an engine: held in flight at the receiver, or not yet
      // claimed), so both are cancelled.
      expect(erasure.deliveries_erased).toBe(2);
      expect(erasure.deliveries_cancelled).toBe(2);

      expect(await eventStatus(api, first.id)).toBe(404);
      expect(await eventStatus(api, second.id)).toBe(404);
      expect(await eventStatus(api, kept.id)).toBe(200);

      const records = (await deliveriesOf(api, w.id)).map(expectDelivery);
      const erased = records.filter((d) => d.event_id === first.id || d.event_id === second.id);
      expect(erased).toHaveLength(2);
      for (const d of erased) {
        expect(d.erased_at).toBe(erasure.created_at);
        expect(d.response_body).toBeNull();
      }
      const held = erased.find((d) => d.event_id === first.id)!;
      expect(held.status).toBe("cancelled");
      expect(records.find((d) => d.event_id === kept.id)?.erased_at).toBeNull();

      // A retry of an erased record is refused, and says why.
      const retry = await api.POST("/api/v1/webhooks/deliveries/{delivery_id}/retry", {
        params: { path: { delivery_id: held.id } },
      });
      expect(expectProblem(retry, 409, "conflict").detail).toMatch(/erased/);

      expect(
        expectErasure(
          await unwrap(api.GET("/api/v1/erasures/{id}", { params: { path: { id: erasure.id } } })),
        ),
      ).toEqual(erasure);

      if (holding) {
        // The attempt that was in flight ends; its answer brings neither a body nor another attempt.
        holding.release(200);
        const settled = expectDelivery(
          await unwrap(
            api.GET("/api/v1/webhooks/deliveries/{delivery_id}", {
              params: { path: { delivery_id: held.id } },
            }),
          ),
        );
        expect(settled).toMatchObject({
          status: "cancelled",
          response_body: null,
          erased_at: erasure.created_at,
        });
        await holding.close();
      }
    });

    it("POST /erasures {recipient} matches data.recipient trimmed and case-insensitively, in this project only", async () => {
      const { api, tenant_id } = await newProject();
      const other = await newProject({ tenantId: tenant_id });
      await createWebhook(api, [DELIVERED]);
      const a = await publishAbout(api, { recipient: "Grace.Hopper@Example.com" });
      const b = await publishAbout(api, { recipient: "grace.hopper@example.com" });
      const c = await publishAbout(api, { recipient: "alan@example.com" });
      const domain = await unwrap(
        api.POST("/api/v1/events", {
          body: {
            type: "domain.verified",
            data: { domain_id: crypto.randomUUID(), domain: "mail.example.com", status: "verified" },
          },
        }),
      );
      const foreign = await publishAbout(other.api, { recipient: "grace.hopper@example.com" });

      const erasure = expectErasure(await unwrap(erase(api, { recipient: "  GRACE.HOPPER@example.com " })));
      expect(erasure).toMatchObject({ subject: "recipient", resource_id: null, events_erased: 2 });
      expect(await eventStatus(api, a.id)).toBe(404);
      expect(await eventStatus(api, b.id)).toBe(404);
      expect(await eventStatus(api, c.id)).toBe(200);
      expect(await eventStatus(api, domain.id)).toBe(200);
      expect(await eventStatus(other.api, foreign.id)).toBe(200);
      // The recipient is not kept anywhere the API shows.
      const got = await send("GET", `/api/v1/erasures/${erasure.id}`, {
        token: (await s.target().newToken()).token,
      });
      expect(got.response.status).toBe(404);
      const listed = await unwrap(api.GET("/api/v1/erasures"));
      expect(JSON.stringify(listed).toLowerCase()).not.toContain("grace");
    });

    it("an erasure is idempotent: repeating it answers 202 with nothing left to erase", async () => {
      const { api } = await newProject();
      await createWebhook(api);
      const messageId = crypto.randomUUID();
      await publishAbout(api, { messageId });
      expect(expectErasure(await unwrap(erase(api, { resource_id: messageId }))).events_erased).toBe(1);
      const again = await erase(api, { resource_id: messageId });
      expect(again.response.status).toBe(202);
      expect(expectErasure(again.data)).toMatchObject({
        events_erased: 0,
        deliveries_erased: 0,
        deliveries_cancelled: 0,
      });
      const nobody = expectErasure(await unwrap(erase(api, { resource_id: crypto.randomUUID() })));
      expect(nobody.events_erased).toBe(0);
    });

    it("a repeat of an erased event's Idempotency-Key publishes it anew instead of answering the erased one", async () => {
      const { api } = await newProject();
      const w = await createWebhook(api);
      const messageId = crypto.randomUUID();
      const key = `erase-${crypto.randomUUID()}`;
      const first = await publishAbout(api, { messageId }, key);
      await unwrap(erase(api, { resource_id: messageId }));
      const again = await api.POST("/api/v1/events", {
        body: publishBody(DELIVERED, { ...messageData(DELIVERED, messageId), recipient: "ada@example.com" }),
        params: { header: { "idempotency-key": key } },
      });
      expect(again.response.status).toBe(202);
      expect(again.response.headers.get("idempotent-replayed")).toBeNull();
      expect(again.data!.id).not.toBe(first.id);
      expect(again.data!.endpoints).toBe(1);
      const records = await deliveriesOf(api, w.id, { event_id: again.data!.id });
      expect(records.map((d) => d.erased_at)).toEqual([null]);
    });

    it("POST /erasures needs exactly one subject, well-formed (422)", async () => {
      const { api, token } = await newProject();
      expectInvalid(await erase(api, {}), ["body.resource_id"]);
      expectInvalid(await erase(api, { resource_id: crypto.randomUUID(), recipient: "ada@example.com" }), [
        "body.recipient",
      ]);
      expectInvalid(await erase(api, { resource_id: "not-a-uuid" }), ["body.resource_id"]);
      expectInvalid(await erase(api, { recipient: "" }), ["body.recipient"]);
      expectInvalid(await erase(api, { recipient: "x".repeat(321) }), ["body.recipient"]);
      expectInvalid(
        await send("POST", "/api/v1/erasures", { token, json: { recipient: "a@b.c", extra: 1 } }),
        ["body.extra"],
      );
      expectProblem(
        await send("POST", "/api/v1/erasures", {
          token,
          body: "{",
          headers: { "Content-Type": "application/json" },
        }),
        400,
        "invalid_json",
      );
      expectProblem(
        await send("POST", "/api/v1/erasures", { json: { recipient: "a@b.c" } }),
        401,
        "unauthorized",
      );
    });

    it("GET /erasures lists the project's erasures newest first; another project's answers 404", async () => {
      const { api } = await newProject();
      const made: string[] = [];
      for (let i = 0; i < 3; i++) {
        made.push(expectErasure(await unwrap(erase(api, { resource_id: crypto.randomUUID() }))).id);
      }
      const seen: { id: string; created_at: string }[] = [];
      let pages = 0;
      for await (const e of paginate((cursor) => {
        pages++;
        return unwrap(api.GET("/api/v1/erasures", { params: { query: { limit: 2, cursor } } }));
      })) {
        seen.push(expectErasure(e));
      }
      expect(pages).toBe(2);
      expect(seen.map((e) => e.id).sort()).toEqual([...made].sort());
      // Newest first by (created_at, id): the order of every list.
      const order = [...seen].sort(
        (a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id),
      );
      expect(seen).toEqual(order);

      const stranger = await newProject();
      expect((await unwrap(stranger.api.GET("/api/v1/erasures"))).data).toEqual([]);
      expectProblem(
        await stranger.api.GET("/api/v1/erasures/{id}", { params: { path: { id: made[0]! } } }),
        404,
        "not_found",
      );
      const missing = await api.GET("/api/v1/erasures/{id}", { params: { path: { id: "nope" } } });
      expect(expectProblem(missing, 404, "not_found").detail).toBe("The erasure was not found.");
      expectInvalid(await api.GET("/api/v1/erasures", { params: { query: { limit: 0 } } }), ["query.limit"]);
    });
  });

  describe("settings", () => {
    it("GET /settings shows the server's retention until the project sets its own", async () => {
      const { api } = await newProject();
      const settings = SettingsSchema.parse(await unwrap(api.GET("/api/v1/settings")));
      expect(settings.retention).toBeNull();
      expect(settings.updated_at).toBeNull();
      expect(settings.effective_retention).toBe(settings.max_retention);
      expect(settings.max_retention).toMatch(/^\d+(ms|s|m|h|d)$/);
    });

    it("PATCH /settings {retention} sets a shorter retention, refuses a longer or malformed one (422), and null resets it", async () => {
      const { api, tenant_id } = await newProject();
      const neighbour = await newProject({ tenantId: tenant_id });
      const set = await api.PATCH("/api/v1/settings", { body: { retention: "36h" } });
      expect(set.response.status).toBe(200);
      const saved = SettingsSchema.parse(set.data);
      expect(saved).toMatchObject({ retention: "36h", effective_retention: "36h" });
      expect(saved.updated_at).toMatch(MILLIS);
      expect(SettingsSchema.parse(await unwrap(api.GET("/api/v1/settings")))).toEqual(saved);
      expect((await unwrap(neighbour.api.GET("/api/v1/settings"))).retention).toBeNull();

      const max = saved.max_retention;
      const longer = `${Number.parseInt(max, 10) + 1}${max.replace(/^\d+/, "")}`;
      const tooLong = expectInvalid(await api.PATCH("/api/v1/settings", { body: { retention: longer } }), [
        "body.retention",
      ]);
      expect(tooLong[0]!.message).toContain(`at most ${max}`);
      for (const bad of ["forever", "30s", "7 d", "", "-1d"]) {
        expectInvalid(await api.PATCH("/api/v1/settings", { body: { retention: bad } }), ["body.retention"]);
      }
      expectInvalid(await api.PATCH("/api/v1/settings", { body: {} }), ["body"]);
      expectInvalid(await api.PATCH("/api/v1/settings", { body: { retention: "1d", max: "2d" } as never }), [
        "body.max",
      ]);
      expect((await unwrap(api.GET("/api/v1/settings"))).retention).toBe("36h");

      const exact = SettingsSchema.parse(
        await unwrap(api.PATCH("/api/v1/settings", { body: { retention: max } })),
      );
      expect(exact.retention).toBe(max);
      const reset = SettingsSchema.parse(
        await unwrap(api.PATCH("/api/v1/settings", { body: { retention: null } })),
      );
      expect(reset).toMatchObject({ retention: null, effective_retention: max });
    });
  });
}
