import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { integer, splitList } from "./arg-values.ts";
import { type CliDeps, type Command, parseCommandArgs, positionals, usageError } from "./command.ts";
import { CliError, type Io } from "./io.ts";
import { type OwnEndpoint, ownEndpoint } from "./listen-endpoint.ts";
import { handleDelivery, type ListenOptions } from "./listen-receiver.ts";
import { openSession, receive } from "./listen-session.ts";

const DEFAULT_PORT = 4000;

/** Resolves when the signal aborts, or on SIGINT/SIGTERM when there is none. */
function stopRequested(signal: AbortSignal | undefined): Promise<void> {
  if (signal) {
    return signal.aborted
      ? Promise.resolve()
      : new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  }
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
export const listenCommand: Command = {
  name: "listen",
  usage:
    "[--events TYPE[,TYPE...] [--keep]] [--forward URL] [--port N] [--secret whsec_...] [--reject-invalid] [--json]",
  summary: "Receive deliveries from Herald, verify, print and forward them.",
  details: [
    "With --events it opens a listen session (HERALD_URL, HERALD_TOKEN): Herald creates an endpoint for those",
    "event types whose deliveries come to this command over its own connection to Herald (nothing listens",
    "here, and Herald delivers to no address: its defaults stay). listen prints the endpoint's signing secret",
    "once, verifies every delivery with it, answers Herald (the --forward target's status, else 200; a",
    "missing answer fails the attempt, which Herald retries) and deletes the endpoint when it stops (Ctrl-C",
    "or SIGTERM) unless --keep is given. A listen session left by --keep, or by a listen that was killed, is",
    "taken up again by the next listen --events (what failed meanwhile is retried to it). In a session a",
    "delivery that does not verify is answered 400 and not forwarded (Herald retries it).",
    "",
    "With --port it is a local receiver on 127.0.0.1:PORT instead. --events then registers an endpoint",
    "pointing at http://127.0.0.1:PORT/, which Herald delivers to only when run with",
    "HERALD_ALLOW_HTTP_URLS=true HERALD_ALLOW_PRIVATE_NETWORKS=true. Without --events it only receives:",
    "register an endpoint yourself and pass its --secret.",
    "",
    "Each delivery is checked with the TypeScript verifier (clients/typescript/verify.ts) and printed as one",
    "line: time, verdict, event type, event id, latency (now - X-Webhook-Timestamp) and age (now -",
    "occurred_at). --forward re-POSTs the raw body with the original headers to your app.",
    "",
    "A local loop in three terminals (2 and 3 with export HERALD_TOKEN=hrld_..., see npx herald tokens create):",
    "  1$ npm start",
    "  2$ npx herald listen --events message.delivered,message.bounced   # opens a session, prints its secret",
    "  3$ npx herald events send message.delivered                       # listen prints it, verified",
  ].join("\n"),
  options: [
    ["--events TYPES", "Open a listen session for these types (comma-separated, repeatable)"],
    ["--keep", "With --events: keep the endpoint when listen stops (the next listen takes it up again)"],
    [
      "--port N",
      `A local receiver on 127.0.0.1 instead (without --events: HERALD_LISTEN_PORT or ${DEFAULT_PORT}; 0 picks a free one)`,
    ],
    ["--secret whsec_...", "Also verify with this secret (repeatable; default: HERALD_WEBHOOK_SECRET)"],
    ["--forward URL", "Also POST each delivery to this URL (raw body, original headers)"],
    [
      "--reject-invalid",
      "Answer 400 with the reason when verification fails (Herald then retries; always so in a session)",
    ],
    ["--tolerance SECONDS", "Allowed clock distance of X-Webhook-Timestamp (default 300)"],
    ["--json", "Print one JSON object per delivery; messages go to stderr"],
  ],
  examples: [
    "npx herald listen --events message.delivered,message.bounced --forward http://localhost:3000/webhooks/herald",
    "npx herald listen --port 4000 --secret whsec_...   # a local receiver, for an endpoint you registered yourself",
  ],
  api: false,
  async run(args, io, deps: CliDeps) {
    const { values, positionals: rest } = parseCommandArgs(this, args, {
      events: { type: "string", multiple: true },
      keep: { type: "boolean", default: false },
      port: { type: "string" },
      secret: { type: "string", multiple: true },
      forward: { type: "string" },
      "reject-invalid": { type: "boolean", default: false },
      tolerance: { type: "string" },
    });
    positionals(this, rest, []);
    const portText = values.port ?? io.env.HERALD_LISTEN_PORT?.trim();
    const port = portText ? integer(this, "--port", portText, 0, 65_535) : DEFAULT_PORT;
    const events = splitList(values.events);
    if (values.events !== undefined && !events?.length) throw usageError(this, "--events needs event types");
    if (values.keep && !events) throw usageError(this, "--keep goes with --events");
    const secrets = values.secret?.length
      ? values.secret
      : (io.env.HERALD_WEBHOOK_SECRET ?? "").split(/[\s,]+/).filter(Boolean);
    for (const s of secrets) {
      if (!s.startsWith("whsec_"))
        throw usageError(this, "a secret starts with whsec_ (as npx herald webhooks create prints it)");
    }
    const forwardUrl = values.forward ?? null;
    if (
      forwardUrl !== null &&
      (!URL.canParse(forwardUrl) || !/^https?:$/.test(new URL(forwardUrl).protocol))
    ) {
      throw usageError(this, `--forward must be an http(s) URL, not "${forwardUrl}"`);
    }
    if (values["reject-invalid"] && secrets.length === 0 && !events) {
      throw usageError(this, "--reject-invalid needs a secret (--events, --secret or HERALD_WEBHOOK_SECRET)");
    }
    const options: ListenOptions = {
      secrets: [...secrets],
      forwardUrl,
      rejectInvalid: values["reject-invalid"],
      json: values.json,
      toleranceSeconds:
        values.tolerance === undefined ? 300 : integer(this, "--tolerance", values.tolerance, 0, 86_400),
    };
    const say = options.json ? io.err : io.out;
    if (events && values.port === undefined) return listenSession(io, deps, events, values.keep, options);

    const server = createServer((req, res) => {
      handleDelivery(req, res, io, options).catch((e: unknown) => {
        io.err(`herald listen: ${(e as Error).message}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", (e: NodeJS.ErrnoException) =>
        reject(
          e.code === "EADDRINUSE"
            ? new CliError(`port ${port} on 127.0.0.1 is in use; pass --port N (0 picks a free one)`)
            : e,
        ),
      );
      server.listen(port, "127.0.0.1", () => resolve());
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const closeServer = () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    let own: OwnEndpoint | null = null;
    if (events) {
      try {
        own = await ownEndpoint(io, deps, url, events);
      } catch (e) {
        await closeServer();
        throw e;
      }
      // Verified with first: it is the secret Herald signs with.
      options.secrets.unshift(own.secret);
    }
    say(`Listening on ${url}`);
    if (own) {
      const w = own.webhook;
      say(
        [
          `${own.reused ? "Reusing" : "Created"} endpoint ${w.id} → ${url} for ${w.events.join(", ")}`,
          values.keep
            ? "It stays when listen stops (--keep)."
            : "It is deleted when listen stops (pass --keep to keep it).",
          `Signing secret (shown once; deliveries are verified with it): ${own.secret}`,
        ].join("\n"),
      );
    }
    say(
      options.secrets.length > 0
        ? `Verifying with ${options.secrets.length} ${options.secrets.length === 1 ? "secret" : "secrets"}.`
        : "No secret: deliveries are printed but not verified (pass --events, --secret whsec_... or set HERALD_WEBHOOK_SECRET).",
    );
    if (forwardUrl) say(`Forwarding each delivery to ${forwardUrl}`);
    say(
      [
        ...(own
          ? []
          : [
              "Register it with a server started as HERALD_ALLOW_HTTP_URLS=true HERALD_ALLOW_PRIVATE_NETWORKS=true npm start:",
              `  npx herald webhooks create --url ${url} --events message.delivered,message.bounced,...`,
              "(or let listen do it: npx herald listen --events message.delivered,...)",
            ]),
        "Ctrl-C stops.",
        "",
      ].join("\n"),
    );

    await stopRequested(deps.signal);
    await closeServer();
    let code = 0;
    if (own && !values.keep) {
      const id = own.webhook.id;
      try {
        await own.api.call(own.api.client.DELETE("/api/v1/webhooks/{id}", { params: { path: { id } } }));
        say(`Deleted endpoint ${id}.`);
      } catch (e) {
        io.err(
          `herald listen: could not delete endpoint ${id} (${(e as Error).message}); delete it with npx herald webhooks delete ${id}`,
        );
        code = 1;
      }
    }
    say("Stopped.");
    return code;
  },
};

/** `listen --events` without --port: a listen session (ADR 29), until Ctrl-C or the signal. */
async function listenSession(
  io: Io,
  deps: CliDeps,
  events: string[],
  keep: boolean,
  options: ListenOptions,
): Promise<number> {
  const say = options.json ? io.err : io.out;
  const stop = new AbortController();
  const stopped = stopRequested(deps.signal).then(() => stop.abort());
  // Herald signs a session's deliveries with the secret listen holds, so one that does not verify was
  // signed before a taken-up session's secret was rotated (or was tampered with): it is not forwarded,
  // and answered 400 so Herald sends it again, signed with the new secret.
  options.rejectInvalid = true;
  const session = await openSession(io, deps, events, stop.signal).catch((e: unknown) => {
    stop.abort();
    throw e;
  });
  options.secrets.unshift(session.secret);
  const w = session.webhook;
  say(
    [
      `${session.reused ? "Reusing" : "Created"} endpoint ${w.id} → ${w.url} for ${w.events.join(", ")}`,
      "Herald streams its deliveries here over this command's own connection (HERALD_URL).",
      keep
        ? "It stays when listen stops (--keep)."
        : "It is deleted when listen stops (pass --keep to keep it).",
      `Signing secret (shown once; deliveries are verified with it): ${session.secret}`,
      `Verifying with ${options.secrets.length} ${options.secrets.length === 1 ? "secret" : "secrets"}.`,
      ...(options.forwardUrl ? [`Forwarding each delivery to ${options.forwardUrl}`] : []),
      "Ctrl-C stops.",
      "",
    ].join("\n"),
  );
  let code = 0;
  const receiving = receive(session, io, deps, options, stop.signal);
  try {
    await Promise.race([receiving, stopped]);
  } catch (e) {
    io.err(`herald: ${(e as Error).message}`);
    stop.abort();
    return 1;
  }
  await stopped;
  // The stream is closed before the endpoint goes (and before a --keep listen returns).
  await receiving.catch(() => {});
  if (!keep) {
    try {
      await session.api.call(
        session.api.client.DELETE("/api/v1/webhooks/{id}", { params: { path: { id: w.id } } }),
      );
      say(`Deleted endpoint ${w.id}.`);
    } catch (e) {
      io.err(
        `herald listen: could not delete endpoint ${w.id} (${(e as Error).message}); delete it with npx herald webhooks delete ${w.id}`,
      );
      code = 1;
    }
  }
  say("Stopped.");
  return code;
}
