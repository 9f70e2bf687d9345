import { describe, expect, it } from "vitest";
import { makeConsoleHarness, pathOf } from "./console-harness.ts";

// The console edits what PATCH /webhooks/{id} edits (issue 17, item 5): custom headers (write-only
// values), the payload filter with its test, and the signature scheme.

const HOOK = "http://127.0.0.1:9/hook";
const SECRET = /whsec_[A-Za-z0-9+/=]+/;
const PUBLIC_KEY = /whpk_[A-Za-z0-9+/=]+/;

type Harness = Awaited<ReturnType<typeof makeConsoleHarness>>;

interface WebhookJson {
  id: string;
  secret: string;
  headers: Record<string, string>;
  filter: unknown;
  signature_scheme: string;
  public_key: string | null;
}

async function createEndpoint(h: Harness, token: string, body: Record<string, unknown> = {}) {
  const res = await h.api(token, "/webhooks", {
    method: "POST",
    body: JSON.stringify({ url: HOOK, events: ["message.delivered", "message.bounced"], ...body }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as WebhookJson;
}

async function webhook(h: Harness, token: string, id: string): Promise<WebhookJson> {
  return (await (await h.api(token, `/webhooks/${id}`)).json()) as WebhookJson;
}

/** The stored header values, opened: what a delivery would send. */
async function storedHeaders(h: Harness, id: string): Promise<Record<string, string>> {
  const e = h.repos.endpoints.rows.get(id)!;
  return Object.fromEntries(
    await Promise.all(e.headers.map(async (x) => [x.name, await h.cipher.open(x.sealed)])),
  );
}

describe("console: custom headers", () => {
  it("shows names with the mask and never a value; a blank value keeps it, Remove removes it, a new row adds one", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const values = ["Bearer cv-auth-5c1e0a", "cv-route-90d2", "cv-tenant-77ab", "cv-replaced-3f"];
    const e = await createEndpoint(h, token, {
      headers: { Authorization: values[0], "X-Route": values[1] },
    });
    const pages: string[] = [];
    const page = await (await b.get(`/console/endpoints/${e.id}`)).text();
    pages.push(page);
    expect(page).toContain('<h2 id="h-headers">Custom headers</h2>');
    expect(page).toContain("<code>Authorization</code>");
    expect(page).toContain('placeholder="******** (blank keeps it)"');
    expect(page).toContain('aria-label="New value for X-Route"');
    expect(page).toContain('name="header_0_remove"');

    const csrf = await b.csrf(`/console/endpoints/${e.id}`);
    const sealedBefore = h.repos.endpoints.rows
      .get(e.id)!
      .headers.find((x) => x.name === "Authorization")!.sealed;
    // Authorization left blank (kept), X-Route removed, X-Tenant added.
    const saved = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_0_name: "Authorization",
      header_0_stored: "yes",
      header_0_value: "",
      header_1_name: "X-Route",
      header_1_stored: "yes",
      header_1_value: "",
      header_1_remove: "yes",
      header_2_name: "X-Tenant",
      header_2_value: values[2]!,
      header_3_name: "",
      header_3_value: "",
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("location")).toBe(`/console/endpoints/${e.id}?notice=headers`);
    pages.push(await saved.text());
    const after = await (await b.follow(saved)).text();
    pages.push(after);
    expect(after).toContain("Custom headers saved");
    expect(after).toContain("<code>X-Tenant: ********</code>");
    expect(after).not.toContain("X-Route");
    expect((await webhook(h, token, e.id)).headers).toEqual({
      Authorization: "********",
      "X-Tenant": "********",
    });
    expect(await storedHeaders(h, e.id)).toEqual({ Authorization: values[0], "X-Tenant": values[2] });
    // The kept value is the very sealed text it was: not re-sealed from anything the page held.
    expect(h.repos.endpoints.rows.get(e.id)!.headers.find((x) => x.name === "Authorization")!.sealed).toBe(
      sealedBefore,
    );

    // A value typed on a stored row replaces it; nothing typed and nothing ticked changes nothing.
    const replaced = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_0_name: "Authorization",
      header_0_stored: "yes",
      header_0_value: values[3]!,
      header_1_name: "X-Tenant",
      header_1_stored: "yes",
      header_1_value: "",
    });
    expect(replaced.status).toBe(303);
    pages.push(await (await b.follow(replaced)).text());
    expect(await storedHeaders(h, e.id)).toEqual({ Authorization: values[3], "X-Tenant": values[2] });
    const unchanged = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_0_name: "Authorization",
      header_0_stored: "yes",
      header_0_value: "",
      header_2_name: "",
      header_2_value: "",
    });
    expect(unchanged.headers.get("location")).toBe(`/console/endpoints/${e.id}?notice=unchanged`);
    pages.push(await (await b.follow(unchanged)).text());
    expect(await storedHeaders(h, e.id)).toEqual({ Authorization: values[3], "X-Tenant": values[2] });

    for (const text of pages) for (const v of values) expect(text).not.toContain(v);
    expect(h.logLines.join("\n")).not.toContain(values[2]);
  });

  it("answers a refused header with the form again and the error, never the value, and changes nothing", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const e = await createEndpoint(h, token, { headers: { Authorization: "Bearer cv-kept-1" } });
    const csrf = await b.csrf(`/console/endpoints/${e.id}`);
    const before = h.repos.endpoints.rows.get(e.id)!.headers;
    const typed = "cv-refused-value-8e21";

    const reserved = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_0_name: "Authorization",
      header_0_stored: "yes",
      header_0_remove: "yes",
      header_1_name: "X-Webhook-Trace",
      header_1_value: typed,
    });
    expect(reserved.status).toBe(422);
    const text = await reserved.text();
    expect(text).toContain("That did not work.");
    expect(text).toContain("headers.X-Webhook-Trace: is set by Herald or reserved by HTTP");
    expect(text).toContain('<h2 id="h-headers">Custom headers</h2>');
    expect(text).not.toContain(typed);
    // The removal in the same form did not happen either.
    expect(h.repos.endpoints.rows.get(e.id)!.headers).toEqual(before);

    const blankNew = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_1_name: "X-New",
      header_1_value: "",
    });
    expect(blankNew.status).toBe(422);
    expect(await blankNew.text()).toContain("headers.X-New: needs a value: a new header cannot be blank");

    const mask = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_0_name: "Authorization",
      header_0_stored: "yes",
      header_0_value: "********",
    });
    expect(mask.status).toBe(422);
    expect(await mask.text()).toContain("must be the real value, not the mask");

    const noName = await b.post(`/console/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_1_name: "",
      header_1_value: typed,
    });
    expect(noName.status).toBe(422);
    const noNameText = await noName.text();
    expect(noNameText).toContain("a value was given without a header name");
    expect(noNameText).not.toContain(typed);
    expect(h.repos.endpoints.rows.get(e.id)!.headers).toEqual(before);
  });

  it("lets a portal session edit its endpoint's headers, as it edits the other settings (ADR 11)", async () => {
    const h = await makeConsoleHarness();
    const { token } = await h.newToken();
    const e = await createEndpoint(h, token);
    const link = (await (
      await h.api(token, "/portal-sessions", {
        method: "POST",
        body: JSON.stringify({ webhook_ids: [e.id] }),
      })
    ).json()) as { url: string };
    const p = h.browser("herald_portal");
    await p.get(pathOf(link.url));
    const csrf = await p.csrf(`/portal/endpoints/${e.id}`);
    const res = await p.post(`/portal/endpoints/${e.id}/headers`, {
      _csrf: csrf,
      header_0_name: "X-Api-Key",
      header_0_value: "cv-portal-41",
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/portal/endpoints/${e.id}?notice=headers`);
    expect(await (await p.follow(res)).text()).not.toContain("cv-portal-41");
    expect(await storedHeaders(h, e.id)).toEqual({ "X-Api-Key": "cv-portal-41" });
  });
});

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

describe("console: signature scheme", () => {
  it("switches within HMAC without a new secret; to Ed25519 only when confirmed, showing the public key once; back to HMAC with a new secret once", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const e = await createEndpoint(h, token);
    const secretsOf = () => h.repos.endpoints.rows.get(e.id)!.secrets;
    const original = secretsOf();
    let csrf = await b.csrf(`/console/endpoints/${e.id}`);
    const page = await (await b.get(`/console/endpoints/${e.id}`)).text();
    expect(page).toContain('<input type="radio" name="signature_scheme" value="herald-v1" checked />');
    expect(page).toContain('value="standard-webhooks-ed25519"');

    const within = await b.post(`/console/endpoints/${e.id}/scheme`, {
      _csrf: csrf,
      signature_scheme: "standard-webhooks",
    });
    expect(within.status).toBe(303);
    expect(within.headers.get("location")).toBe(`/console/endpoints/${e.id}?notice=scheme`);
    expect(b.jar.has("herald_console_flash")).toBe(false);
    expect((await webhook(h, token, e.id)).signature_scheme).toBe("standard-webhooks");
    expect(secretsOf()).toEqual(original);

    // Across kinds the current secret stops signing at once: not without the tick.
    const unconfirmed = await b.post(`/console/endpoints/${e.id}/scheme`, {
      _csrf: csrf,
      signature_scheme: "standard-webhooks-ed25519",
    });
    expect(unconfirmed.status).toBe(422);
    expect(await unconfirmed.text()).toContain("Tick the box to confirm");
    expect((await webhook(h, token, e.id)).signature_scheme).toBe("standard-webhooks");
    expect(secretsOf()).toEqual(original);

    const toEd25519 = await b.post(`/console/endpoints/${e.id}/scheme`, {
      _csrf: csrf,
      signature_scheme: "standard-webhooks-ed25519",
      confirm: "yes",
    });
    expect(toEd25519.status).toBe(303);
    const shownAt = toEd25519.headers.get("location")!;
    expect(shownAt).toBe(`/console/endpoints/${e.id}/secret`);
    expect(await toEd25519.text()).not.toMatch(PUBLIC_KEY);
    const keyPage = await (await b.get(shownAt)).text();
    const api = await webhook(h, token, e.id);
    expect(api.signature_scheme).toBe("standard-webhooks-ed25519");
    expect(keyPage).toContain("<h1>Scheme changed</h1>");
    expect(keyPage).toContain(`<code id="secret">${api.public_key}</code>`);
    expect(keyPage).toContain("public key");
    expect(keyPage).not.toMatch(SECRET);
    expect(keyPage).not.toContain("whsk_");
    expect(secretsOf()).toHaveLength(1);
    expect(await h.cipher.open(secretsOf()[0]!.sealed)).toMatch(/^whsk_ed25519_/);
    // Once: a reload shows it no more; the endpoint page shows the public key (it is not secret).
    expect(await (await b.get(shownAt)).text()).toContain("The public key is on the endpoint&#39;s page");
    const endpointPage = await (await b.get(`/console/endpoints/${e.id}`)).text();
    expect(endpointPage).toContain(`<code id="public-key">${api.public_key}</code>`);
    expect(endpointPage).not.toContain("whsk_");
    expect(endpointPage).toContain('<h2 id="h-rotate">Rotate the signing key pair</h2>');
    // A rotation of the key pair shows its new public key, as the creation does.
    const rotated = await b.post(`/console/endpoints/${e.id}/rotate`, {
      _csrf: await b.csrf(`/console/endpoints/${e.id}`),
      grace_period_seconds: "0",
    });
    const rotatedPage = await (await b.follow(rotated)).text();
    const rotatedKey = (await webhook(h, token, e.id)).public_key!;
    expect(rotatedKey).not.toBe(api.public_key);
    expect(rotatedPage).toContain("<h1>New key pair</h1>");
    expect(rotatedPage).toContain(`<code id="secret">${rotatedKey}</code>`);
    expect(rotatedPage).not.toMatch(SECRET);

    csrf = await b.csrf(`/console/endpoints/${e.id}`);
    const back = await b.post(`/console/endpoints/${e.id}/scheme`, {
      _csrf: csrf,
      signature_scheme: "herald-v1",
      confirm: "yes",
    });
    expect(back.status).toBe(303);
    const secretPage = await (await b.follow(back)).text();
    const [secret] = secretPage.match(SECRET) ?? [];
    expect(secret).toBeDefined();
    expect(secret).not.toBe(e.secret);
    expect(secretPage).toContain("it is shown only this once");
    expect(secretPage).toContain("<code>X-Webhook-Signature</code>");
    expect(secretsOf()).toHaveLength(1);
    expect(await h.cipher.open(secretsOf()[0]!.sealed)).toBe(secret);
    expect(await (await b.get(`/console/endpoints/${e.id}/secret`)).text()).not.toMatch(SECRET);
    expect(await (await b.get(`/console/endpoints/${e.id}`)).text()).not.toContain(secret!);
    expect((await webhook(h, token, e.id)).public_key).toBeNull();

    const bogus = await b.post(`/console/endpoints/${e.id}/scheme`, {
      _csrf: csrf,
      signature_scheme: "rot13",
    });
    expect(bogus.status).toBe(422);
    expect(await bogus.text()).toContain(
      "signature_scheme: must be one of herald-v1, standard-webhooks, standard-webhooks-ed25519",
    );
  });

  it("creates an Ed25519 endpoint from the new-endpoint form and shows its public key, not a secret", async () => {
    const h = await makeConsoleHarness();
    const { b, token } = await h.signedIn();
    const form = await (await b.get("/console/endpoints/new")).text();
    expect(form).toContain('<option value="standard-webhooks-ed25519">');
    const created = await b.post("/console/endpoints", {
      _csrf: await b.csrf(),
      url: HOOK,
      events: ["message.delivered"],
      signature_scheme: "standard-webhooks-ed25519",
    });
    expect(created.status).toBe(303);
    const shown = await (await b.follow(created)).text();
    const [made] = ((await (await h.api(token, "/webhooks")).json()) as { data: WebhookJson[] }).data;
    expect(made!.signature_scheme).toBe("standard-webhooks-ed25519");
    expect(shown).toContain("<h1>Endpoint created</h1>");
    expect(shown).toContain(`<code id="secret">${made!.public_key}</code>`);
    expect(shown).not.toMatch(SECRET);
    expect(shown).not.toContain("shown only this once");
  });
});
