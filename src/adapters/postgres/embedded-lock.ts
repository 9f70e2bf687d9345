// The embedded database's data directory belongs to one process at a time (ADR 17): PGlite is one
// process's database, and a second process writing the same files loses writes silently.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { link, readFile, rename, rm, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Another process (or this one) has the data directory's database open. */
export class EmbeddedPostgresInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(`The embedded database in ${dataDir} is in use by another process (pid ${pid})`);
    this.name = "EmbeddedPostgresInUseError";
  }
}

const lockFile = (dir: string) => join(dir, "embedded-postgres.lock");
/** Directories this process holds open: a second start here must fail as one from another process does. */
const heldHere = new Set<string>();

/** Who holds a lock: a pid, and on Linux the process's start time, so a reused pid is not taken for it. */
export interface Holder {
  pid: number;
  started: string | null;
}

export function self(): Holder {
  return { pid: process.pid, started: startTime(process.pid) };
}

/** The process's start time in clock ticks since boot (/proc/<pid>/stat, field 22), where /proc exists. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether the holder is a running process; this process counts only for a directory it holds. */
export function alive(holder: Holder, dir: string): boolean {
  if (holder.pid === process.pid) return heldHere.has(dir);
  try {
    process.kill(holder.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const now = holder.started === null ? null : startTime(holder.pid);
  return now === null || now === holder.started;
}

async function readHolder(path: string): Promise<Holder | null> {
  try {
    const held = JSON.parse(await readFile(path, "utf8")) as Partial<Holder>;
    return typeof held.pid === "number" ? { pid: held.pid, started: held.started ?? null } : null;
  } catch {
    return null;
  }
}

/**
 * Takes `<dir>/embedded-postgres.lock`. The file is written whole under another name and then linked
 * into place, so it exists only complete and only one process's link succeeds. A lock whose holder is
 * gone (killed) is moved aside under a name of our own first; if what we moved turns out to be a live
 * holder's (it took the lock between our read and our move), it goes back and we yield.
 */
export async function lock(dir: string): Promise<void> {
  if (heldHere.has(dir)) throw new EmbeddedPostgresInUseError(dir, process.pid);
  const path = lockFile(dir);
  const me = self();
  const mine = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
  await writeFile(mine, JSON.stringify(me));
  try {
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        await link(mine, path);
        heldHere.add(dir);
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      const holder = await readHolder(path);
      if (holder && alive(holder, dir)) throw new EmbeddedPostgresInUseError(dir, holder.pid);
      const aside = `${mine}.stale`;
      try {
        await rename(path, aside);
      } catch {
        continue; // someone else moved it first: try to take it again
      }
      const moved = await readHolder(aside);
      if (moved && alive(moved, dir)) {
        await link(aside, path).catch(() => {});
        await unlink(aside).catch(() => {});
        throw new EmbeddedPostgresInUseError(dir, moved.pid);
      }
      await unlink(aside).catch(() => {});
    }
    throw new Error(`Could not take the lock ${path}: it keeps changing hands`);
  } finally {
    await unlink(mine).catch(() => {});
  }
}

/** Gives the lock back, if this process holds it. */
export async function unlock(dir: string): Promise<void> {
  if (!heldHere.delete(dir)) return;
  const holder = await readHolder(lockFile(dir));
  if (holder?.pid === process.pid) await rm(lockFile(dir), { force: true });
}
