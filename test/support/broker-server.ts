import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { exported, onPath, runScript, stopWhenGone } from "./postgres-server.ts";

const ROOT = resolve(import.meta.dirname, "../..");

/** A broker a test file talks to: the run's own (its variable set, as .ci/run does) or one it started. */
export interface BrokerServer {
  /** The exported values of `scripts/<name>.sh start`, e.g. KAFKA_BROKERS. */
  env: Record<string, string>;
  /** The script's state directory, null when the server is the run's. */
  state: string | null;
  /** Stops the server this file started (nothing for the run's own). */
  close(): Promise<void>;
  /** Stops this file's server, keeping its data: SIGKILL for a crash, else a clean stop. */
  halt(how: "kill" | "clean"): Promise<void>;
  /** Starts a halted server again on the same port and data; answers when it is ready. */
  resume(): Promise<void>;
}

const root = () => process.getuid?.() === 0;
const apt = () => root() && onPath("apt-get") !== null;

/**
 * Why the broker cannot be had on this machine, or null when its script can start it (installing what is
 * missing as root: Maven and RabbitMQ from Debian's packages, the JVM servers' jars from Maven Central).
 * Tests skip with this reason, except under CI=true, where a missing broker is a failure.
 */
export function brokerUnavailable(
  script: "kafka.sh" | "rabbitmq.sh" | "sqs.sh",
  given: string,
): string | null {
  if (process.env[given]) return null;
  if (script === "rabbitmq.sh") {
    return existsSync("/usr/lib/rabbitmq/bin/rabbitmq-server") || apt()
      ? null
      : "RabbitMQ is not installed (Debian: apt-get install rabbitmq-server) and this is not root with apt-get";
  }
  if (!javaAtLeast17()) return "Java 17 or later is not on PATH (the JVM servers need it)";
  return onPath("mvn") || apt() ? null : "Maven (mvn) is not on PATH and this is not root with apt-get";
}

function javaAtLeast17(): boolean {
  if (!onPath("java")) return false;
  const out = spawnSync("java", ["-version"], { encoding: "utf8" }).stderr ?? "";
  const major = Number(/version "(\d+)/.exec(out)?.[1] ?? 0);
  return major >= 17;
}

/** Whether a missing broker must fail the run rather than skip (CI must test every destination). */
export const BROKERS_REQUIRED = process.env.CI === "true";

/**
 * The run's broker when `given` (e.g. KAFKA_BROKERS) is set and `own` is not asked for, else one started
 * for this file by scripts/<script> in a state directory of its own, stopped by `close()` or, when the
 * test process dies first, by a watcher. `names` are the variables to read from the script's exports.
 * A test that halts and resumes the server asks for its own: the run's is shared.
 */
export async function startBroker(
  script: "kafka.sh" | "rabbitmq.sh" | "sqs.sh",
  given: string,
  names: string[],
  own = false,
  /** Given to the script's start only (e.g. RABBITMQ_TLS_CERT): settings the server keeps in its state. */
  startEnv: Record<string, string> = {},
): Promise<BrokerServer> {
  if (process.env[given] && !own) {
    const env: Record<string, string> = {};
    for (const n of names) env[n] = process.env[n] ?? "";
    const shared = () =>
      Promise.reject(new Error(`the run's ${given} is shared: start an own server to halt it`));
    return { env, state: null, close: async () => {}, halt: shared, resume: shared };
  }
  const state = mkdtempSync(join(tmpdir(), `herald-${script.replace(".sh", "")}-`));
  let stdout: string;
  try {
    stdout = await runScript(script, ["start", state], startEnv);
  } catch (e) {
    await runScript(script, ["stop", state]).catch(() => {});
    rmSync(state, { recursive: true, force: true });
    throw e;
  }
  const unwatch = stopWhenGone(process.pid, script, state);
  const env: Record<string, string> = {};
  for (const n of names) env[n] = exported(stdout, n);
  return {
    env,
    state,
    async close() {
      await runScript(script, ["stop", state]).catch(() => {});
      unwatch();
      rmSync(state, { recursive: true, force: true });
    },
    async halt(how) {
      await runScript(script, ["halt", state, ...(how === "kill" ? ["--kill"] : [])]);
    },
    async resume() {
      await runScript(script, ["resume", state]);
    },
  };
}

/** Runs a command, answering its stdout; rejects with its stderr and exit code. */
export function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(
      cmd,
      args,
      { cwd: ROOT, env: { ...process.env, ...env }, maxBuffer: 8 << 20 },
      (error, stdout, stderr) => {
        if (error)
          reject(new Error(`${cmd} ${args.join(" ")} failed (${error.message}):\n${stderr}\n${stdout}`));
        else resolvePromise(stdout);
      },
    );
  });
}

/**
 * Runs a single-file Java program of test/brokers/fixtures with `classpath` (a directory of jars): the
 * brokers' own Java clients, an independent consumer that shares no code with Herald. Answers the JSON
 * lines it prints.
 */
export async function javaProgram(file: string, classpath: string, args: string[]): Promise<unknown[]> {
  const out = await run("java", [
    "-Xmx256m",
    "-cp",
    `${classpath}/*`,
    join(ROOT, "test/brokers/fixtures", file),
    ...args,
  ]);
  return out
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));
}
