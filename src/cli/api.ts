import {
  createHeraldClient,
  type FetchResult,
  HeraldApiError,
  type HeraldClient,
  paginate,
} from "../../clients/typescript/client.ts";
import type { CliDeps } from "./command.ts";
import { CliError, type Io } from "./io.ts";

export const DEFAULT_HERALD_URL = "http://localhost:8080";

/** The typed client plus a call wrapper that turns every failure into one readable line. */
export interface Api {
  client: HeraldClient;
  baseUrl: string;
  /** Awaits a client call; an error answer or an unreachable server becomes a CliError (exit 1). */
  call<T>(request: Promise<FetchResult<T>>): Promise<{ data: T; response: Response }>;
}

/** Builds the API client from HERALD_URL and HERALD_TOKEN; a missing token is a usage error (exit 2). */
export function connectApi(io: Io, deps: CliDeps): Api {
  const token = io.env.HERALD_TOKEN?.trim();
  if (!token) {
    throw new CliError(
      "HERALD_TOKEN is not set: create a token with `npx herald tokens create` and export HERALD_TOKEN=hrld_...",
      2,
    );
  }
  const baseUrl = (io.env.HERALD_URL?.trim() || DEFAULT_HERALD_URL)
    .replace(/\/+$/, "")
    .replace(/\/api\/v1$/, "");
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
    throw new CliError(`HERALD_URL is not an http(s) URL: ${baseUrl}`, 2);
  }
  const client = createHeraldClient({ baseUrl, token, fetch: deps.fetch });
  return {
    client,
    baseUrl,
    async call<T>(request: Promise<FetchResult<T>>) {
      let result: FetchResult<T>;
      try {
        result = await request;
      } catch (e) {
        throw new CliError(unreachableMessage(baseUrl, e));
      }
      if (!result.response.ok) {
        throw new CliError(
          apiErrorMessage(new HeraldApiError(result.response.status, result.error), baseUrl),
        );
      }
      return { data: result.data as T, response: result.response };
    },
  };
}

/** One line for an API error: `404 not_found: The endpoint was not found.` plus the invalid fields. */
export function apiErrorMessage(e: HeraldApiError, baseUrl: string): string {
  if (e.code === "unknown") {
    return `${e.status}: the answer is not a Herald error document; is HERALD_URL (${baseUrl}) right?`;
  }
  let line = `${e.status} ${e.code}: ${e.detail}`;
  if (e.errors.length > 0) line += ` (${e.errors.map((i) => `${i.path}: ${i.message}`).join("; ")})`;
  if (e.status === 401) line += " Check HERALD_TOKEN.";
  return line;
}

/** One line for a server that could not be reached. */
export function unreachableMessage(baseUrl: string, e: unknown): string {
  const cause = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
  const reason =
    typeof cause?.code === "string"
      ? cause.code
      : typeof cause?.message === "string"
        ? cause.message
        : (e as Error).message;
  return `cannot reach Herald at ${baseUrl} (${reason}); is it running? Set HERALD_URL to point elsewhere.`;
}

/** One page of a list (from `cursor`), or with `all` every page, walked through next_cursor. */
export async function listPages<T>(
  page: (cursor: string | undefined) => Promise<{ data: T[]; next_cursor: string | null }>,
  options: { all?: boolean | undefined; cursor?: string | undefined },
): Promise<{ data: T[]; next_cursor: string | null }> {
  if (!options.all) return page(options.cursor);
  const data: T[] = [];
  for await (const item of paginate(page)) data.push(item);
  return { data, next_cursor: null };
}
