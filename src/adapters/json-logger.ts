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

/** One JSON object per line on stdout (or the given writer). */
export function createJsonLogger(
  level: LogLevel,
  write: (line: string) => void = (l) => console.log(l),
  base: LogFields = {},
): Logger {
  const emit = (lvl: LogLevel, msg: string, fields?: LogFields) => {
    if (RANK[lvl] < RANK[level]) return;
    write(
      JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...scrub({ ...base, ...fields }) }),
    );
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (f) => createJsonLogger(level, write, { ...base, ...f }),
  };
}
