import { describe, expect, it } from "vitest";
import { type EventFilter, type HeraldClient, unwrap } from "../../../../../clients/typescript/client.ts";
import { FilterTestResultSchema } from "../../../../../src/adapters/http/routes/webhooks/filter-test.ts";
import {
  DELIVERED,
  expectInvalid,
  expectProblem,
  expectWebhook,
  expectWebhookWithSecret,
  messageData,
  receiverUrl,
  SENT,
  type Suite,
} from "./context.ts";

const EMAIL_ONLY = { "data.channel": "email", "data.message_type": { $ne: "marketing" } };

/** The API suite's payload-filter cases: the endpoint field, its 422s, filter-test and fan-out. */
export function filterCases(s: Suite): void {
  const { newProject, send, createWebhook, deliveriesOf } = s;

  const withFilter = async (api: HeraldClient, filter: EventFilter, events = [DELIVERED]) =>
    expectWebhookWithSecret(
      await unwrap(api.POST("/api/v1/webhooks", { body: { url: receiverUrl(), events, filter } })),
    );

  const filterTest = async (api: HeraldClient, id: string, body: { event: unknown; filter?: unknown }) => {
    const { data, response } = await api.POST("/api/v1/webhooks/{id}/filter-test", {
      params: { path: { id } },
      body: body as never,
    });
    expect(response.status).toBe(200);
    expect(Object.keys(data as object).sort()).toEqual(["filter", "matches", "reasons", "subscribed"]);
    return FilterTestResultSchema.parse(data);
  };

  const delivered = (over: Record<string, unknown> = {}) => ({
    type: DELIVERED,
    data: { ...messageData(DELIVERED), ...over },
  });

  const filteredCount = async () => {
    const res = await send("GET", "/metrics");
    const m = /^herald_events_filtered_total\{type="message\.delivered"\} (\d+)$/m.exec(res.text);
    return m ? Number(m[1]) : 0;
  };

  describe("payload filters", () => {
    it("POST /webhooks takes a filter; GET, the list and the creation answer show it as given", async () => {
      const { api } = await newProject();
      const w = await withFilter(api, EMAIL_ONLY);
      expect(w.filter).toEqual(EMAIL_ONLY);
      const got = expectWebhook(
        await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } })),
      );
      expect(got.filter).toEqual(EMAIL_ONLY);
      const plain = await createWebhook(api);
      expect(plain.filter).toBeNull();
      const nulled = expectWebhookWithSecret(
        await unwrap(
          api.POST("/api/v1/webhooks", { body: { url: receiverUrl(), events: [SENT], filter: null } }),
        ),
      );
      expect(nulled.filter).toBeNull();
      const list = await unwrap(api.GET("/api/v1/webhooks"));
      expect(list.data.map((x) => x.filter)).toEqual([null, null, EMAIL_ONLY]);
    });

    it("PATCH replaces the filter, keeps it when absent, and removes it with filter: null", async () => {
      const { api } = await newProject();
      const w = await withFilter(api, EMAIL_ONLY);
      const patch = (body: Record<string, unknown>) =>
        unwrap(api.PATCH("/api/v1/webhooks/{id}", { params: { path: { id: w.id } }, body }));
      const other = { $or: [{ "data.status": "delivered" }, { "data.metadata.vip": true }] };
      expect(expectWebhook(await patch({ filter: other })).filter).toEqual(other);
      expect((await patch({ description: "kept" })).filter).toEqual(other);
      expect((await patch({ filter: null })).filter).toBeNull();
      expect(
        (await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } }))).filter,
      ).toBeNull();
    });

    it("refuses a bad filter with 422 naming its path, on create and PATCH, and changes nothing", async () => {
      const { token, api } = await newProject();
      const create = (filter: unknown) =>
        send("POST", "/api/v1/webhooks", {
          token,
          json: { url: receiverUrl(), events: [DELIVERED], filter },
        });
      const where = expectInvalid(await create({ $where: "sleep(10000)" }), ["body.filter.$where"]);
      expect(where[0]!.message).toBe(
        "filter.$where is not allowed: a filter cannot run code or expressions ($where)",
      );
      expectInvalid(await create({ "data.status": { $expr: { $eq: [1, 1] } } }), [
        "body.filter.data.status.$expr",
      ]);
      expectInvalid(await create({ "data.status": { $function: {} } }), [
        "body.filter.data.status.$function",
      ]);
      expectInvalid(await create({ "data.status": { $elemMatch: {} } }), [
        "body.filter.data.status.$elemMatch",
      ]);
      const regex = expectInvalid(await create({ "data.recipient": { $regex: "(a+)\\1" } }), [
        "body.filter.data.recipient.$regex",
      ]);
      expect(regex[0]!.message).toBe(
        "filter.data.recipient.$regex uses a backreference, which is not supported",
      );
      expectInvalid(await create({ "data.recipient": { $regex: "(?=a)" } }), [
        "body.filter.data.recipient.$regex",
      ]);
      expectInvalid(await create({ "data.recipient": { $regex: "a".repeat(300) } }), [
        "body.filter.data.recipient.$regex",
      ]);
      const typo = expectInvalid(await create({ "data.statsu": "delivered" }), ["body.filter.data.statsu"]);
      expect(typo[0]!.message).toMatch(
        /^filter\.data\.statsu is not a data field of the endpoint's event types/,
      );
      let deep: unknown = { type: DELIVERED };
      for (let i = 0; i < 6; i++) deep = { $and: [deep] };
      expectInvalid(await create(deep), ["body.filter.$and.0.$and.0.$and.0.$and.0.$and.0"]);
      expectInvalid(
        await create({ "data.status": { $in: Array.from({ length: 300 }, (_, i) => `s${i}`) } }),
        ["body.filter"],
      );
      // Raw JSON: in an object literal, "__proto__" would set the prototype and never be sent.
      const proto = await send("POST", "/api/v1/webhooks", {
        token,
        headers: { "Content-Type": "application/json" },
        body: `{"url":"${receiverUrl()}","events":["${DELIVERED}"],"filter":{"__proto__":{"type":"x"}}}`,
      });
      expectInvalid(proto, ["body.filter.__proto__"]);
      expectInvalid(await create("delivered"), ["body.filter"]);
      expectInvalid(await create([{ type: DELIVERED }]), ["body.filter"]);
      expectInvalid(await create({ occurred_at: { $gt: "yesterday" } }), ["body.filter.occurred_at.$gt"]);
      expectInvalid(await create({ $where: "1", id: "x", "data.status": { $gt: true } }), [
        "body.filter.$where",
        "body.filter.id",
        "body.filter.data.status.$gt",
      ]);
      expect((await unwrap(api.GET("/api/v1/webhooks"))).data).toEqual([]);

      const w = await withFilter(api, EMAIL_ONLY);
      const bad = await send("PATCH", `/api/v1/webhooks/${w.id}`, {
        token,
        json: { filter: { "data.status": { $regex: "(x)\\1" } }, description: "not saved" },
      });
      expectInvalid(bad, ["body.filter.data.status.$regex"]);
      const after = await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } }));
      expect(after).toMatchObject({ filter: EMAIL_ONLY, description: null });
    });

    it("checks data paths against the endpoint's types: new types must fit the kept filter", async () => {
      const { token, api } = await newProject();
      // data.domain exists in domain events only: valid once the endpoint takes one.
      expectInvalid(
        await send("POST", "/api/v1/webhooks", {
          token,
          json: { url: receiverUrl(), events: [DELIVERED], filter: { "data.domain": "example.com" } },
        }),
        ["body.filter.data.domain"],
      );
      const w = await withFilter(api, { "data.domain": "example.com" }, [DELIVERED, "domain.verified"]);
      const patch = (json: unknown) => send("PATCH", `/api/v1/webhooks/${w.id}`, { token, json });
      const refused = expectInvalid(await patch({ events: [DELIVERED] }), ["body.events"]);
      expect(refused[0]!.message).toMatch(
        /^events leaves the endpoint's filter naming data fields none of these types has \(filter\.data\.domain\)/,
      );
      expectInvalid(await patch({ filter: { "data.domian": "x" } }), ["body.filter.data.domian"]);
      const both = await patch({ events: [DELIVERED], filter: { "data.channel": "email" } });
      expect(both.response.status).toBe(200);
      expect(both.error).toMatchObject({ events: [DELIVERED], filter: { "data.channel": "email" } });
      const cleared = await patch({ events: ["domain.verified"], filter: null });
      expect(cleared.response.status).toBe(200);
    });

    it("POST /webhooks/{id}/filter-test says whether the endpoint's filter matches, and which clause failed", async () => {
      const { api } = await newProject();
      const w = await withFilter(api, EMAIL_ONLY);
      expect(await filterTest(api, w.id, { event: delivered() })).toEqual({
        matches: true,
        subscribed: true,
        filter: EMAIL_ONLY,
        reasons: [],
      });
      expect(
        await filterTest(api, w.id, { event: delivered({ channel: "sms", recipient: "+15550100" }) }),
      ).toEqual({
        matches: false,
        subscribed: true,
        filter: EMAIL_ONLY,
        reasons: [
          { path: "filter.data.channel", message: 'data.channel is "sms"; expected equal to "email"' },
        ],
      });
      const both = await filterTest(api, w.id, {
        event: delivered({ channel: "sms", recipient: "+15550100", message_type: "marketing" }),
      });
      expect(both.reasons.map((r) => r.path)).toEqual([
        "filter.data.channel",
        "filter.data.message_type.$ne",
      ]);
      // Nothing was stored or sent.
      expect(await deliveriesOf(api, w.id)).toEqual([]);
    });

    it("filter-test tries a candidate filter without saving it, null for none, and names an unsubscribed type", async () => {
      const { api } = await newProject();
      const w = await withFilter(api, EMAIL_ONLY);
      const candidate = { "data.recipient": { $regex: "@example\\.org$", $options: "i" } };
      const tried = await filterTest(api, w.id, { event: delivered(), filter: candidate });
      expect(tried).toEqual({
        matches: false,
        subscribed: true,
        filter: candidate,
        reasons: [
          {
            path: "filter.data.recipient.$regex",
            message: 'data.recipient is "ada@example.com"; expected a string matching /@example\\.org$/i',
          },
        ],
      });
      expect(
        (await unwrap(api.GET("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } }))).filter,
      ).toEqual(EMAIL_ONLY);
      expect(await filterTest(api, w.id, { event: delivered({ channel: "push" }), filter: null })).toEqual({
        matches: true,
        subscribed: true,
        filter: null,
        reasons: [],
      });
      const sent = await filterTest(api, w.id, { event: { type: SENT, data: messageData(SENT) } });
      expect(sent).toEqual({
        matches: false,
        subscribed: false,
        filter: EMAIL_ONLY,
        reasons: [
          {
            path: "event.type",
            message: "message.sent is not one of the endpoint's event types (message.delivered)",
          },
        ],
      });
    });

    it("filter-test refuses a bad event or candidate filter with 422 and the path; another project's endpoint is 404", async () => {
      const { token, api } = await newProject();
      const w = await withFilter(api, EMAIL_ONLY);
      const post = (json: unknown, id = w.id) =>
        send("POST", `/api/v1/webhooks/${id}/filter-test`, { token, json });
      expectInvalid(await post({ event: delivered({ status: "sent" }) }), ["body.event.data.status"]);
      expectInvalid(await post({ event: { type: "message.lost", data: {} } }), ["body.event.type"]);
      expectInvalid(await post({ event: { ...delivered(), resource_id: crypto.randomUUID() } }), [
        "body.event.resource_id",
      ]);
      expectInvalid(await post({ event: delivered(), filter: { $expr: 1 } }), ["body.filter.$expr"]);
      expectInvalid(await post({ event: delivered(), filter: { "data.domain": "x" } }), [
        "body.filter.data.domain",
      ]);
      expectInvalid(await post({}), ["body.event"]);
      expectInvalid(await post({ event: delivered(), evnet: 1 }), ["body.evnet"]);
      const other = await newProject();
      expectProblem(
        await send("POST", `/api/v1/webhooks/${w.id}/filter-test`, {
          token: other.token,
          json: { event: delivered() },
        }),
        404,
        "not_found",
      );
      expectProblem(await post({ event: delivered() }, crypto.randomUUID()), 404, "not_found");
    });

    it("a published event that does not match an endpoint's filter gets no delivery there, and is counted in /metrics", async () => {
      const { api } = await newProject();
      const open = await createWebhook(api);
      const picky = await withFilter(api, { "data.message_type": "transactional" });
      const before = await filteredCount();
      const published = await unwrap(
        api.POST("/api/v1/events", { body: delivered({ message_type: "marketing" }) as never }),
      );
      expect(published.endpoints).toBe(1);
      expect((await deliveriesOf(api, open.id)).map((d) => d.event_id)).toEqual([published.id]);
      expect(await deliveriesOf(api, picky.id)).toEqual([]);
      expect(await filteredCount()).toBe(before + 1);

      const matching = await unwrap(api.POST("/api/v1/events", { body: delivered() as never }));
      expect(matching.endpoints).toBe(2);
      expect((await deliveriesOf(api, picky.id)).map((d) => d.event_id)).toEqual([matching.id]);
      expect(await filteredCount()).toBe(before + 1);
    });
  });
}
