// The PostgreSQL wire protocol as the embedded server needs it (docs/adr/0017-embedded-postgres.md):
// message codes, building messages, and reading the backend's stream to tell when its turn ends.

/** PostgreSQL's own bound on a frontend message (1 GB); anything longer is a broken client. */
export const MAX_MESSAGE = 0x3fffffff;
export const SSL_REQUEST = 80877103;
export const GSSENC_REQUEST = 80877104;
export const CANCEL_REQUEST = 80877102;

/** Frontend messages after which a client waits for the backend's answer: a turn ends with one of them. */
export const TURN_ENDS = new Set(["S", "Q", "H", "c", "f", "F"].map((c) => c.charCodeAt(0)));
export const TERMINATE = "X".charCodeAt(0);
const PARSE = "P".charCodeAt(0);
const QUERY = "Q".charCodeAt(0);
const CLOSE = "C".charCodeAt(0);
const READY = "Z".charCodeAt(0);
const IDLE = "I".charCodeAt(0);
/** Backend messages that may follow a ReadyForQuery without ending the idle state (asynchronous ones). */
const ASYNC = new Set(["A", "N", "S"].map((c) => c.charCodeAt(0)));

/** Records the named statements a connection makes and closes, so they can be freed when it leaves. */
export function noteStatements(statements: Set<string>, type: number, msg: Buffer): void {
  if (type === PARSE) {
    const name = readCString(msg, 5);
    if (name !== "") statements.add(name);
  } else if (type === CLOSE && msg[5] === "S".charCodeAt(0)) {
    statements.delete(readCString(msg, 6));
  }
}

/** COPY ... FROM STDIN: PGlite's backend exits on it (the instance is dead from then on). */
const COPY_IN = /\bcopy\b[\s\S]*\bfrom\s+stdin\b/i;
/** What runs instead: PostgreSQL raises the error, so the protocol and transaction states stay its own. */
const COPY_IN_REFUSED =
  "DO $$BEGIN RAISE EXCEPTION USING ERRCODE = 'feature_not_supported', MESSAGE = " +
  "'COPY FROM STDIN is not supported by the embedded PostgreSQL (PGlite): insert from unnest() instead'; END$$";

/** The message to pass on: a Query or Parse of COPY FROM STDIN becomes one that raises an error. */
export function withoutCopyIn(type: number, msg: Buffer): Buffer {
  if (type === QUERY) {
    const text = readCString(msg, 5);
    return COPY_IN.test(text) ? message("Q", cstring(COPY_IN_REFUSED)) : msg;
  }
  if (type === PARSE) {
    const name = readCString(msg, 5);
    const textAt = 5 + Buffer.byteLength(name) + 1;
    const text = readCString(msg, textAt);
    if (!COPY_IN.test(text)) return msg;
    const types = msg.subarray(textAt + Buffer.byteLength(text) + 1);
    return message("P", Buffer.concat([cstring(name), cstring(COPY_IN_REFUSED), types]));
  }
  return msg;
}

function readCString(buf: Buffer, at: number): string {
  const end = buf.indexOf(0, at);
  return buf.toString("utf8", at, end < 0 ? buf.length : end);
}

export function cstring(s: string): Buffer {
  return Buffer.from(`${s}\0`);
}

export function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

export function errorResponse(code: string, text: string): Buffer {
  const field = (t: string, v: string) => Buffer.concat([Buffer.from(t), cstring(v)]);
  return message(
    "E",
    Buffer.concat([
      field("S", "FATAL"),
      field("V", "FATAL"),
      field("C", code),
      field("M", text),
      Buffer.alloc(1),
    ]),
  );
}

/**
 * Follows the backend's messages across chunks to tell whether the last one that matters was a
 * ReadyForQuery with status idle ('I'); 'T' (in a transaction) and 'E' (failed transaction) are not idle.
 */
export class ReadyTracker {
  private header = Buffer.alloc(5);
  private headerLength = 0;
  private bodyLeft = 0;
  private type = 0;
  private status = 0;
  /** Status of the last ReadyForQuery, or 0 when a message other than an asynchronous one followed it. */
  private lastReady = 0;

  get idle(): boolean {
    return this.headerLength === 0 && this.bodyLeft === 0 && this.lastReady === IDLE;
  }

  feed(data: Uint8Array): void {
    let at = 0;
    while (at < data.length) {
      if (this.bodyLeft === 0) {
        const take = Math.min(5 - this.headerLength, data.length - at);
        this.header.set(data.subarray(at, at + take), this.headerLength);
        this.headerLength += take;
        at += take;
        if (this.headerLength < 5) return;
        this.headerLength = 0;
        this.type = this.header[0] as number;
        this.bodyLeft = this.header.readInt32BE(1) - 4;
        if (this.bodyLeft === 0) this.ended();
        continue;
      }
      const take = Math.min(this.bodyLeft, data.length - at);
      if (this.type === READY) this.status = data[at + take - 1] as number;
      this.bodyLeft -= take;
      at += take;
      if (this.bodyLeft === 0) this.ended();
    }
  }

  private ended(): void {
    if (this.type === READY) this.lastReady = this.status;
    else if (!ASYNC.has(this.type)) this.lastReady = 0;
  }
}
