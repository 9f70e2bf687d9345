import type { EventType, Webhook } from "../../clients/typescript/client.ts";
import { type Api, connectApi, listPages } from "./api.ts";
import type { CliDeps } from "./command.ts";
import { CliError, type Io } from "./io.ts";

/** The endpoint `listen --events` delivers to, and whether it is removed when listen stops. */
export interface OwnEndpoint {
  api: Api;
  webhook: Webhook;
  secret: string;
  reused: boolean;
}

const LOCAL_URLS_HINT =
  "start Herald with HERALD_ALLOW_HTTP_URLS=true HERALD_ALLOW_PRIVATE_NETWORKS=true so it may deliver to http://127.0.0.1, or leave out --port: a listen session needs neither";

/**
 * Creates the endpoint pointing at this listener, or reuses one that already points here (left by an
 * earlier `listen --keep`, or by a listen that was killed): its event types are set to `events`, it is
 * enabled, and its secret is rotated (no grace), because a secret is only ever shown once.
 */
export async function ownEndpoint(
  io: Io,
  deps: CliDeps,
  url: string,
  events: string[],
): Promise<OwnEndpoint> {
  const api = connectApi(io, deps);
  const hint = (e: unknown): never => {
    if (e instanceof CliError && /^422 /.test(e.message) && /url/i.test(e.message)) {
      throw new CliError(`${e.message}\n  (${LOCAL_URLS_HINT})`);
    }
    throw e;
  };
  const all = await listPages(
    async (cursor) =>
      (await api.call(api.client.GET("/api/v1/webhooks", { params: { query: { limit: 100, cursor } } })))
        .data,
    { all: true },
  );
  const existing = all.data.find((w) => w.url === url);
  if (existing) {
    await api
      .call(
        api.client.PATCH("/api/v1/webhooks/{id}", {
          params: { path: { id: existing.id } },
          body: { events: events as EventType[], enabled: true },
        }),
      )
      .catch(hint);
    const { data } = await api.call(
      api.client.POST("/api/v1/webhooks/{id}/rotate", { params: { path: { id: existing.id } }, body: {} }),
    );
    return { api, webhook: data, secret: data.secret, reused: true };
  }
  const { data } = await api
    .call(
      api.client.POST("/api/v1/webhooks", {
        body: {
          url,
          events: events as EventType[],
          description: "herald listen (deleted when it stops, unless --keep)",
        },
      }),
    )
    .catch(hint);
  return { api, webhook: data, secret: data.secret, reused: false };
}
