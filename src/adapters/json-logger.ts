import type { LogLevel } from "../app/config.ts";
import type { LogFields, Logger } from "../app/logger.ts";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };
// Field names whose values are never written, whatever a caller passes.
const REDACT = /secret|token|authorization|password|master_?key/i;
const SECRET_TEXT = /(whsec_[A-Za-z0-9+/=]+|hrld_[A-Za-z0-9_-]+)/g;

function scrub(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) {
    if (REDACT.test(k)) out[k] = "[redacted]";
    else if (typeof v === "string") out[k] = v.replace(SECRET_TEXT, "[redacted]");
    else if (v instanceof Error)
      out[k] = { name: v.name, message: v.message.replace(SECRET_TEXT, "[redacted]") };
    else out[k] = v;
  }
  return out;
}

class JsonLogger implements Logger {
  private readonly rank: number;
  private readonly write: (line: string) => void;
  private readonly base: LogFields;
  constructor(rank: number, write: (line: string) => void, base: LogFields) {
    this.rank = rank;
    this.write = write;
    this.base = base;
  }

  private emit(lvl: LogLevel, msg: string, fields?: LogFields) {
    if (RANK[lvl] < this.rank) return;
    this.write(
      JSON.stringify({
        time: new Date().toISOString(),
        level: lvl,
        msg,
        ...scrub({ ...this.base, ...fields }),
      }),
    );
  }

  debug(msg: string, fields?: LogFields) {
    this.emit("debug", msg, fields);
  }
  info(msg: string, fields?: LogFields) {
    this.emit("info", msg, fields);
  }
  warn(msg: string, fields?: LogFields) {
    this.emit("warn", msg, fields);
  }
  error(msg: string, fields?: LogFields) {
    this.emit("error", msg, fields);
  }
  // One per request: a small object, not a set of closures.
  child(fields: LogFields): Logger {
    return new JsonLogger(this.rank, this.write, { ...this.base, ...fields });
  }
}

/** One JSON object per line on stdout (or the given writer). */
export function createJsonLogger(
  level: LogLevel,
  write: (line: string) => void = (l) => console.log(l),
  base: LogFields = {},
): Logger {
  return new JsonLogger(RANK[level], write, base);
}
