import { describe, expect, it } from "vitest";
import { makeConsoleHarness, pathOf } from "./console-harness.ts";
import { createEndpoint, type Harness, HOOK, webhook } from "./endpoint-edits-support.ts";

// The payload filter edited and tested in the console and the portal (issue 17, item 5).

describe("console: payload filter", () => {
  const published = async (h: Harness, token: string, channel: string) => {
    const res = await h.api(token, "/events", {
      method: "POST",
      body: JSON.stringify({
        type: "message.bounced",
        data: {
          message_id: crypto.randomUUID(),
          status: "bounced",
          channel,
          message_type: "transactional",
          recipient: "ada@example.com",
          reason: "550 mailbox unknown",
        },
      }),
    });
    expect(res.status).toBe(202);
    return (await res.json()) as { id: string };
  };

  it("tests a typed filter on a sample and on a stored event, after a redirect, saving nothing; explains a mismatch", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const e = await createEndpoint(h, token);
    const page = await (await b.get(`/console/endpoints/${e.id}`)).text();
    expect(page).toContain('<textarea id="filter-text" name="filter"');
    expect(page).toContain("Test filter");
    const csrf = await b.csrf(`/console/endpoints/${e.id}`);
    const draft = '{"data.channel": "sms"}';

    const tested = await b.post(`/console/endpoints/${e.id}/filter-test`, {
      _csrf: csrf,
      filter: draft,
      type: "message.bounced",
      event_id: "",
    });
    // Post/Redirect/Get: the verdict is a GET page, so a reload tries again and posts nothing.
    expect(tested.status).toBe(303);
    const location = tested.headers.get("location")!;
    expect(location).toMatch(new RegExp(`^/console/endpoints/${e.id}/filter-test\\?`));
    expect(location).not.toContain(csrf);
    for (let reload = 0; reload < 2; reload++) {
      const verdict = await b.get(location);
      expect(verdict.status).toBe(200);
      const text = await verdict.text();
      expect(text).toContain("<strong>Does not match.</strong>");
      expect(text).toContain("a sample message.bounced event");
      expect(text).toContain(
        "<code>filter.data.channel</code>: data.channel is &quot;email&quot;; expected equal to &quot;sms&quot;",
      );
      // The box keeps what was typed, and the page says it is not saved.
      expect(text).toContain(`>${draft.replaceAll('"', "&quot;")}</textarea>`);
      expect(text).toContain("This filter is not saved");
      expect(text).toMatch(/<option value="message.bounced" selected>/);
    }
    expect((await webhook(h, token, e.id)).filter).toBeNull();

    // On a stored event: the one published by email does not match, one by sms does.
    const byEmail = await published(h, token, "email");
    const bySms = await published(h, token, "sms");
    const onStored = async (eventId: string) => {
      const res = await b.post(`/console/endpoints/${e.id}/filter-test`, {
        _csrf: csrf,
        filter: draft,
        type: "message.delivered",
        event_id: eventId,
      });
      expect(res.status).toBe(303);
      const verdict = await b.follow(res);
      expect(verdict.status).toBe(200);
      return verdict.text();
    };
    const miss = await onStored(byEmail.id);
    expect(miss).toContain(`the stored event ${byEmail.id}`);
    expect(miss).toContain("<strong>Does not match.</strong>");
    expect(miss).toContain(`value="${byEmail.id}"`);
    const hit = await onStored(bySms.id);
    expect(hit).toContain("<strong>Matches.</strong>");
    expect(hit).toContain(`the stored event ${bySms.id}`);

    // An event of another project is not found, as any stranger's.
    const other = await h.newToken();
    const foreign = await published(h, other.token, "sms");
    const strange = await b.post(`/console/endpoints/${e.id}/filter-test`, {
      _csrf: csrf,
      filter: draft,
      event_id: foreign.id,
    });
    const refused = await b.follow(strange);
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain(`${foreign.id} is not an event of this project that you can see`);

    // A type the endpoint does not take is a reason too.
    const unsubscribed = await b.get(`/console/endpoints/${e.id}/filter-test?filter=&type=message.opened`);
    const text = await unsubscribed.text();
    expect(text).toContain(
      "<code>event.type</code>: message.opened is not one of the endpoint&#39;s event types",
    );
  });

  it("saves a filter, refuses an invalid one with the form again and the error (nothing changed), and removes it", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const e = await createEndpoint(h, token);
    const csrf = await b.csrf(`/console/endpoints/${e.id}`);
    const filter = { "data.channel": "email", "data.status": { $in: ["bounced"] } };

    const saved = await b.post(`/console/endpoints/${e.id}/filter`, {
      _csrf: csrf,
      filter: JSON.stringify(filter),
      type: "message.bounced",
      event_id: "",
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe(`/console/endpoints/${e.id}?notice=filter`);
    expect((await b.follow(saved)).status).toBe(200);
    expect((await webhook(h, token, e.id)).filter).toEqual(filter);

    const refusals: [string, string][] = [
      ['{"data.channel":', "filter: is not JSON"],
      ['["email"]', "filter: must be a JSON object"],
      ['{"data.channel": {"$like": "e%"}}', "filter.data.channel.$like"],
      ['{"data.no_such_field": 1}', "filter.data.no_such_field"],
      ['{"__proto__": {"x": 1}}', "filter.__proto__: is not a field a filter can name"],
    ];
    for (const [typed, said] of refusals) {
      const res = await b.post(`/console/endpoints/${e.id}/filter`, { _csrf: csrf, filter: typed });
      expect(res.status, typed).toBe(422);
      const text = await res.text();
      expect(text, typed).toContain("That did not work.");
      expect(text, typed).toContain(said);
      // The form again, with what was typed, to correct it.
      expect(text, typed).toContain(`${typed.replaceAll('"', "&quot;")}</textarea>`);
      expect((await webhook(h, token, e.id)).filter, typed).toEqual(filter);
    }
    // An invalid filter is refused by the test too, with the same words.
    const test = await b.post(`/console/endpoints/${e.id}/filter-test`, {
      _csrf: csrf,
      filter: '{"data.channel": {"$like": "e%"}}',
      type: "message.bounced",
    });
    const verdict = await b.follow(test);
    expect(verdict.status).toBe(422);
    expect(await verdict.text()).toContain("filter.data.channel.$like");

    // Too long to carry in an address: refused at once, nothing tried.
    const huge = await b.post(`/console/endpoints/${e.id}/filter-test`, {
      _csrf: csrf,
      filter: `{"data.channel": "${"e".repeat(20_000)}"}`,
      type: "message.bounced",
    });
    expect(huge.status).toBe(422);
    expect(await huge.text()).toContain("filter: must be at most 16384 characters");

    const removed = await b.post(`/console/endpoints/${e.id}/filter`, { _csrf: csrf, filter: "" });
    expect(removed.headers.get("location")).toBe(`/console/endpoints/${e.id}?notice=filter-removed`);
    expect((await webhook(h, token, e.id)).filter).toBeNull();
    expect(await (await b.follow(removed)).text()).toContain(
      "<dt>Filter</dt><dd>none: every event of its types</dd>",
    );
  });
});

describe("portal: payload filter", () => {
  it("tries a filter only on stored events that reached the portal's endpoints, as its event page shows them", async () => {
    const h = await makeConsoleHarness();
    const { token } = await h.newToken();
    const mine = await createEndpoint(h, token);
    const other = (await (
      await h.api(token, "/webhooks", {
        method: "POST",
        body: JSON.stringify({ url: HOOK, events: ["message.opened"] }),
      })
    ).json()) as { id: string };
    const publish = async (type: string) => {
      const res = await h.api(token, "/events", {
        method: "POST",
        body: JSON.stringify({
          type,
          data: {
            message_id: crypto.randomUUID(),
            status: "delivered",
            channel: "email",
            message_type: "transactional",
            recipient: "ada@example.com",
          },
        }),
      });
      expect(res.status).toBe(202);
      return ((await res.json()) as { id: string }).id;
    };
    const reached = await publish("message.delivered");
    const elsewhere = await publish("message.opened");
    const link = (await (
      await h.api(token, "/portal-sessions", {
        method: "POST",
        body: JSON.stringify({ webhook_ids: [mine.id] }),
      })
    ).json()) as { url: string };
    const p = h.browser("herald_portal");
    await p.get(pathOf(link.url));
    const csrf = await p.csrf(`/portal/endpoints/${mine.id}`);
    const tryOn = async (eventId: string) =>
      p.follow(
        await p.post(`/portal/endpoints/${mine.id}/filter-test`, {
          _csrf: csrf,
          filter: '{"data.channel": "email"}',
          event_id: eventId,
        }),
      );
    const ok = await tryOn(reached);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("<strong>Matches.</strong>");
    const hidden = await tryOn(elsewhere);
    expect(hidden.status).toBe(422);
    expect(await hidden.text()).toContain(`${elsewhere} is not an event of this project that you can see`);
    // The other endpoint itself is out of reach, as any stranger's.
    expect((await p.get(`/portal/endpoints/${other.id}/filter-test?filter=`)).status).toBe(404);
  });
});
