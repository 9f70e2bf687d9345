import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHeraldClient, unwrap } from "../../clients/typescript/client.ts";
import { keyMaterial } from "../adapters/http/api/suite/client-certificates.ts";
import { type HeraldProcess, type Runtime, testRuntimes } from "../support/herald-process.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type TestClientTls, testClientTls } from "../support/tls.ts";
import {
  allDeliveries,
  type DeliveryWorld,
  deliveryWorld,
  eventBody,
  publishRaw,
  waitUntil,
} from "./delivery-support.ts";

/** How each runtime's sender is told to trust the test CA (the receiver serves HTTPS). */
const TRUST: Record<Runtime, (caPath: string) => Record<string, string>> = {
  node: (ca) => ({ NODE_EXTRA_CA_CERTS: ca }),
  bun: (ca) => ({ NODE_EXTRA_CA_CERTS: ca }),
  deno: (ca) => ({ DENO_CERT: ca }),
};

// Issue 19 item 4 against a real Herald process on each runtime (PostgreSQL, debug logs) and a loopback
// HTTPS receiver that requires a client certificate signed by its own CA: presented, replaced, removed;
// the key sealed in the database and absent from every log line. The certificates carry a key usage
// beside clientAuth, as real ones do: Deno once refused them at registration (issue 30).
describe.each(testRuntimes())(
  "mutual TLS on %s (real process, receiver requiring a client certificate)",
  (runtime) => {
    let world: DeliveryWorld;
    let herald: HeraldProcess;
    let rx: Receiver;
    let clients: TestClientTls;

    beforeAll(async () => {
      world = await deliveryWorld(`e2e_mtls_${runtime}`, {
        HERALD_LOG_LEVEL: "debug",
        HERALD_RETRY_SCHEDULE: "none",
      });
      clients = await testClientTls();
      rx = await startReceiver({
        tls: { ...world.tls, clientCa: clients.caCert },
        secrets: [],
        behaviour: { kind: "respond", status: 200 },
      });
      herald = await world.start(TRUST[runtime](world.tls.caCertPath), { runtime });
    });

    afterAll(async () => {
      await rx?.close();
      await world?.close();
    });

    /** A project of its own: its token and client, and an endpoint presenting alice's certificate to `rx`. */
    async function aliceEndpoint() {
      const token = await world.newToken();
      const api = createHeraldClient({ baseUrl: herald.baseUrl, token });
      const created = await unwrap(
        api.POST("/api/v1/webhooks", {
          body: {
            url: rx.url,
            events: ["message.delivered"],
            client_certificate: { certificate: clients.alice.cert, private_key: clients.alice.key },
          },
        }),
      );
      return { token, api, created };
    }

    it("presents the endpoint's certificate, then its replacement; without one the attempt is tls_error", async () => {
      const { token, api, created } = await aliceEndpoint();
      const path = { id: created.id };
      const attempt = async () => {
        const r = await publishRaw(herald.baseUrl, token, eventBody("message.delivered"), randomUUID());
        expect(r.status).toBe(202);
        let found: Awaited<ReturnType<typeof allDeliveries>>[number] | undefined;
        await waitUntil(
          async () => {
            found = (await allDeliveries(api, created.id, { event_id: r.id! })).find(
              (d) => d.status !== "pending",
            );
            return found !== undefined;
          },
          () => `an attempt of ${r.id}`,
        );
        return [found!.status, found!.error];
      };

      expect(await attempt()).toEqual(["succeeded", null]);
      await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", {
          params: { path },
          body: { client_certificate: { certificate: clients.bob.cert, private_key: clients.bob.key } },
        }),
      );
      expect(await attempt()).toEqual(["succeeded", null]);
      await unwrap(
        api.PATCH("/api/v1/webhooks/{id}", { params: { path }, body: { client_certificate: null } }),
      );
      expect(await attempt()).toEqual(["failed", "tls_error"]);
      expect(rx.requests.map((r) => r.clientCertificate)).toEqual(["alice", "bob"]);

      // Sealed at rest (the stored row holds neither key in clear), never logged at debug level.
      const [row] = await world.sql<{ client_certificate: unknown }[]>`
      SELECT client_certificate FROM endpoints WHERE id = ${created.id}`;
      expect(row?.client_certificate).toBeNull();
      const all = JSON.stringify(await world.sql`SELECT * FROM endpoints`);
      const output = herald.output();
      for (const key of [clients.alice.key, clients.bob.key]) {
        expect(all).not.toContain(keyMaterial(key).slice(10, 50));
        expect(output).not.toContain(keyMaterial(key).slice(10, 50));
      }
      expect(output).not.toContain("PRIVATE KEY");
      expect(output.split("\n").filter((l) => l.includes('"level":"error"'))).toEqual([]);
    });

    it("keeps the key sealed in the database while it is set", async () => {
      const { created } = await aliceEndpoint();
      const [row] = await world.sql<{ client_certificate: Record<string, unknown> }[]>`
      SELECT client_certificate FROM endpoints WHERE id = ${created.id}`;
      const stored = row!.client_certificate;
      expect(Object.keys(stored).sort()).toEqual(
        ["certificate", "fingerprint", "issuer", "not_after", "not_before", "sealed_key", "subject"].sort(),
      );
      expect(stored.certificate).toBe(`${clients.alice.cert.trim()}\n`);
      expect(JSON.stringify(stored)).not.toContain("PRIVATE KEY");
      expect(JSON.stringify(stored)).not.toContain(keyMaterial(clients.alice.key).slice(10, 50));
    });
  },
);
