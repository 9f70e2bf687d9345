import type { Cursor } from "../../app/ports/paging.ts";
import { fromBase64, toBase64Url } from "../../domain/encoding.ts";
import { invalid } from "../../domain/errors.ts";

/** The opaque next_cursor: base64url of {"createdAt": ms, "id": "..."}. */
export function encodeCursor(cursor: Cursor): string {
  const json = JSON.stringify({ createdAt: cursor.createdAt.getTime(), id: cursor.id });
  return toBase64Url(new TextEncoder().encode(json));
}

/** Reads a cursor from the query; a malformed one is a 422 on `query.cursor`. */
export function decodeCursor(text: string | undefined): Cursor | null {
  if (text === undefined) return null;
  const bad = () => invalid([{ path: "query.cursor", message: "is not a cursor returned by this list" }]);
  if (!/^[A-Za-z0-9_-]{1,512}$/.test(text)) throw bad();
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(fromBase64(text)));
  } catch {
    throw bad();
  }
  if (typeof value !== "object" || value === null) throw bad();
  const { createdAt, id } = value as { createdAt?: unknown; id?: unknown };
  if (typeof createdAt !== "number" || !Number.isSafeInteger(createdAt) || createdAt < 0) throw bad();
  if (typeof id !== "string" || id.length === 0 || id.length > 64) throw bad();
  return { createdAt: new Date(createdAt), id };
}
