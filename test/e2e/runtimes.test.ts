import { afterAll, describe, expect } from "vitest";
import { systemClock, systemIds } from "../../src/adapters/system.ts";
import { tokenUseCases } from "../../src/app/tokens.ts";
import { apiSuite } from "../adapters/http/api/api-suite.ts";
import type { IssuedApiToken } from "../support/api-harness.ts";
import {
  findListed,
  herald,
  type ListedToken,
  parseCreated,
  TEST_MASTER_KEY,
} from "../support/herald-cli.ts";
import { type HeraldProcess, type Runtime, startHerald, testRuntimes } from "../support/herald-process.ts";
import { type HoldingReceiver, startHoldingReceiver } from "../support/holding-receiver.ts";
import { PATIENCE_MS } from "../support/patience.ts";
import { type Receiver, startReceiver } from "../support/receiver.ts";
import { type FreshStore, freshStore } from "../support/store.ts";
import { testTls } from "../support/tls.ts";

// The API suite of test/adapters/http/api, over the network, against a real Herald process (PostgreSQL store, delivery
// engine running) under each runtime. Tokens come from the real CLI process where it matters: the first
// token of each run and every revocation go through `herald tokens ...` against the same database; the
// rest are issued through the repositories, because one CLI process per token (~40 per runtime) would
// spend a minute starting processes. test/e2e/cli-tokens.test.ts covers the CLI itself.
const RUNTIMES: Runtime[] = testRuntimes();

/** How each runtime's sender is told to trust the test CA (the holding receiver serves HTTPS). */
const TRUST: Record<Runtime, (caPath: string) => Record<string, string>> = {
  node: (ca) => ({ NODE_EXTRA_CA_CERTS: ca }),
  bun: (ca) => ({ NODE_EXTRA_CA_CERTS: ca }),
  deno: (ca) => ({ DENO_CERT: ca }),
};

describe.each(RUNTIMES)("API suite against a real Herald server on %s", (runtime) => {
  let store: FreshStore | undefined;
  let env: Record<string, string> = {};
  const settings = {
    HERALD_MASTER_KEY: TEST_MASTER_KEY,
    // No automatic retries. The suite's endpoints point at receiver.invalid, so every first attempt
    // fails at once (dns_error); with retries on, that failure adds a pending attempt 2 to the list
    // within milliseconds on a fast runtime (Deno), and the suite's "one record per endpoint right after
    // publishing" checks would race with the engine. Retries themselves are tested in test/e2e/delivery-*.
    HERALD_RETRY_SCHEDULE: "none",
    // An attempt held at the holding receiver stays in flight until the test releases it, however long
    // the test takes to get there on a busy machine.
    HERALD_DELIVERY_TIMEOUT: "10m",
  };
  let server: HeraldProcess | undefined;
  const holding: HoldingReceiver[] = [];
  const receivers: Receiver[] = [];

  afterAll(async () => {
    await Promise.allSettled([...holding, ...receivers].map((h) => h.close()));
    const code = await server?.stop(PATIENCE_MS);
    await store?.cleanup();
    if (!server) return;
    const output = server.output();
    // A graceful stop exits 0, and nothing in the run was logged as an error (unhandled rejections, 500s).
    expect({ code, errors: output.split("\n").filter((l) => l.includes('"level":"error"')) }).toEqual({
      code: 0,
      errors: [],
    });
  });

  apiSuite(async () => {
    store = await freshStore(`herald_rt_${runtime}`);
    env = { ...store.env, ...settings };
    const tls = await testTls();
    server = await startHerald({ runtime, env: { ...env, ...TRUST[runtime](tls.caCertPath) } });
    // The CLI writes into the database the server reads: its token must work against this server.
    let fromCli: IssuedApiToken | undefined = parseCreated(
      await herald(["tokens", "create", "--name", `suite-${runtime}`, "--json"], env),
    );
    const tokens = tokenUseCases({
      tokens: (await store.connect()).tokens,
      clock: systemClock,
      ids: systemIds,
    });
    return {
      baseUrl: server.baseUrl,
      deliversInBackground: true,
      async holdingReceiver() {
        const h = await startHoldingReceiver(tls);
        holding.push(h);
        return h;
      },
      async mtlsReceiver(clientCa) {
        const r = await startReceiver({
          tls: { ...tls, clientCa },
          secrets: [],
          behaviour: { kind: "respond", status: 200 },
        });
        receivers.push(r);
        return r;
      },
      async newToken(scope) {
        if (fromCli && !scope?.tenantId) {
          const issued = fromCli;
          fromCli = undefined;
          return issued;
        }
        const { token, record } = await tokens.create({ tenantId: scope?.tenantId, name: "suite" });
        return { token, tenant_id: record.tenantId, project_id: record.projectId };
      },
      async revokeToken(token) {
        const listed = await herald(["tokens", "list", "--json"], env);
        if (listed.code !== 0) throw new Error(`tokens list failed: ${listed.stderr}`);
        const { data } = JSON.parse(listed.stdout) as { data: ListedToken[] };
        const record = findListed(data, token);
        if (!record) throw new Error("tokens list --json does not show the token to revoke");
        const revoked = await herald(["tokens", "revoke", record.id], env);
        if (revoked.code !== 0) throw new Error(`tokens revoke failed: ${revoked.stderr}`);
      },
    };
  });
});
