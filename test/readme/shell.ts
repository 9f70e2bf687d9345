import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";

/** What one command printed, and how it ended. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

const MARK = `__readme_${crypto.randomUUID().replaceAll("-", "")}__`;

/**
 * One bash session, like a terminal: commands run one after another in the same shell, so variables,
 * `export` and `eval` carry over. Job control is on (`set -m`), so each background job is a process
 * group of its own and can get a terminal's Ctrl-C (SIGINT to the group).
 */
export class Shell {
  private readonly child: ChildProcessWithoutNullStreams;
  private out = "";
  private err = "";
  private waiter: (() => void) | null = null;
  private closed = false;

  constructor(cwd: string, env: Record<string, string>) {
    this.child = spawn("bash", ["--noprofile", "--norc"], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.setEncoding("utf8").on("data", (d: string) => {
      this.out += d;
      this.waiter?.();
    });
    this.child.stderr.setEncoding("utf8").on("data", (d: string) => {
      this.err += d;
      this.waiter?.();
    });
    this.child.once("exit", () => {
      this.closed = true;
      this.waiter?.();
    });
    this.child.stdin.write("set -m\n");
  }

  /**
   * Runs `script` (one or more lines, as written) with stdin from /dev/null, and waits for it to end.
   * The braces keep assignments in this shell (no subshell).
   */
  run(script: string, timeoutMs: number): Promise<Ran> {
    return this.send(`{\n${script}\n} </dev/null`, timeoutMs);
  }

  /** Starts `command` as a background job writing to `log`; resolves with the job's pid (= its group). */
  async background(command: string, log: string): Promise<number> {
    const r = await this.send(`${command} </dev/null >${quote(log)} 2>&1 &\necho "$!"`, 10_000);
    const pid = Number(r.stdout.trim());
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no pid for ${command}: ${r.stdout}${r.stderr}`);
    return pid;
  }

  /** `wait PID`: the job's exit status (128 + signal when a signal ended it). */
  async wait(pid: number, timeoutMs: number): Promise<number> {
    const r = await this.send(`wait ${pid}`, timeoutMs);
    return r.code;
  }

  /** The value of a shell variable. */
  async variable(name: string): Promise<string> {
    return (await this.send(`printf '%s' "\${${name}:-}"`, 10_000)).stdout;
  }

  close(): void {
    if (!this.closed) this.child.kill("SIGKILL");
  }

  private async send(script: string, timeoutMs: number): Promise<Ran> {
    if (this.closed) throw new Error("the shell has exited");
    this.out = "";
    this.err = "";
    this.child.stdin.write(
      `${script}\n__rc=$?; printf '\\n${MARK} %d\\n' "$__rc"; printf '\\n${MARK}\\n' >&2\n`,
    );
    const outEnd = new RegExp(`\\n?${MARK} (\\d+)\\n$`);
    const errEnd = new RegExp(`\\n?${MARK}\\n$`);
    const deadline = Date.now() + timeoutMs;
    while (!(outEnd.test(this.out) && errEnd.test(this.err))) {
      if (this.closed) throw new Error(`the shell exited during: ${script}\n${this.out}${this.err}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`not done within ${timeoutMs} ms: ${script}\n${this.out}\n${this.err}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiter = null;
    }
    const code = Number(outEnd.exec(this.out)![1]);
    return { code, stdout: this.out.replace(outEnd, ""), stderr: this.err.replace(errEnd, "") };
  }
}

/** A word for the shell, single-quoted. */
export function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
