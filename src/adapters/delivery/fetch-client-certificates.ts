import type { ClientIdentity } from "../../app/ports/sending.ts";
import { type Closable, IdentityPools } from "./identity-pools.ts";

// Mutual TLS for the fetch sender (ADR 22), the way each runtime's fetch takes a client certificate:
// Bun, a `tls: {cert, key}` option per request (Bun keeps its keep-alive connections apart per TLS
// configuration); Deno, an HttpClient made with `Deno.createHttpClient({cert, key})`, one per identity
// (each client has its own connection pool). Trust stays the runtime's own (NODE_EXTRA_CA_CERTS on Bun,
// DENO_CERT on Deno: a client made without `caCerts` trusts what the default client trusts).

interface DenoHttpClient {
  close(): void;
}
interface DenoRuntime {
  createHttpClient(options: { cert: string; key: string }): DenoHttpClient;
}

/** What a request adds to its fetch options to present an identity, and what to do once it is done. */
export interface Presented {
  init: Record<string, unknown>;
  /** Call once the response (or failure) is fully handled. */
  release(): void;
}

/** Presents client certificates with the runtime's fetch; `close` releases what it holds. */
export interface FetchClientCertificates {
  present(identity: ClientIdentity): Presented;
  close(): Promise<void>;
}

/** Thrown (and classified tls_error) where the runtime's fetch cannot present a client certificate. */
export class ClientCertificateUnsupported extends Error {
  readonly code = "ERR_TLS_CLIENT_CERTIFICATE_UNSUPPORTED";
  constructor() {
    super("this runtime's fetch cannot present a client certificate");
  }
}

/** The way of the runtime this runs on: Deno's HttpClient, Bun's `tls` option, or none (Node's fetch). */
export function fetchClientCertificates(runtime: typeof globalThis = globalThis): FetchClientCertificates {
  const deno = (runtime as { Deno?: Partial<DenoRuntime> }).Deno;
  if (typeof deno?.createHttpClient === "function") return denoClients(deno as DenoRuntime);
  if ((runtime as { Bun?: unknown }).Bun !== undefined) {
    return {
      present: (identity) => ({
        init: { tls: { cert: identity.certificate, key: identity.key } },
        release() {},
      }),
      async close() {},
    };
  }
  return {
    present() {
      throw new ClientCertificateUnsupported();
    },
    async close() {},
  };
}

/** A Deno HttpClient closed once it is both retired and idle (closing it would fail requests in flight). */
class SharedClient implements Closable {
  private inFlight = 0;
  private retired = false;
  readonly client: DenoHttpClient;
  constructor(client: DenoHttpClient) {
    this.client = client;
  }

  use(): void {
    this.inFlight += 1;
  }

  done(): void {
    this.inFlight -= 1;
    if (this.retired && this.inFlight === 0) this.client.close();
  }

  async close(): Promise<void> {
    if (this.retired) return;
    this.retired = true;
    if (this.inFlight === 0) this.client.close();
  }
}

function denoClients(deno: DenoRuntime): FetchClientCertificates {
  const pools = new IdentityPools(
    (identity) => new SharedClient(deno.createHttpClient({ cert: identity.certificate, key: identity.key })),
  );
  return {
    present(identity) {
      const shared = pools.get(identity);
      shared.use();
      let released = false;
      return {
        init: { client: shared.client },
        release() {
          if (released) return;
          released = true;
          shared.done();
        },
      };
    },
    close: () => pools.close(),
  };
}
