import { setImmediate } from "node:timers";
import { type ChannelModel, type ConfirmChannel, connect, type Message, type Options } from "amqplib";
import type { SendError } from "../../domain/delivery.ts";
import { isIpLiteral } from "../delivery/address-policy.ts";
import { BlockedAddressError, type Resolve, resolveChecked } from "../delivery/guarded-lookup.ts";
import { withoutSecrets } from "./message-headers.ts";
import { amqpFailure } from "./rabbitmq-errors.ts";

/** Where and as whom one RabbitMQ destination connects, parsed from its `url` (never with a password). */
export interface AmqpTarget {
  protocol: "amqp" | "amqps";
  host: string;
  port: number;
  username: string | undefined;
  password: string | undefined;
  vhost: string;
}

/** The destination's `amqp://user@host:port/vhost` as a target, or null when it is not one. */
export function amqpTarget(url: string, password: string | null): AmqpTarget | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const protocol = parsed.protocol === "amqp:" ? "amqp" : parsed.protocol === "amqps:" ? "amqps" : null;
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  if (!protocol || !host) return null;
  const user = parsed.username ? decodeURIComponent(parsed.username) : undefined;
  return {
    protocol,
    host,
    port: parsed.port ? Number(parsed.port) : protocol === "amqp" ? 5672 : 5671,
    // No user and no password: amqplib's default (guest), as for a URL without them.
    username: user ?? (password === null ? undefined : ""),
    password: password ?? (user === undefined ? undefined : ""),
    // As amqplib reads a URL: no path, or `/` alone, is the default vhost `/`.
    vhost: parsed.pathname.length > 1 ? decodeURIComponent(parsed.pathname.slice(1)) : "/",
  };
}

/** A failed publish: its error code and the broker's (or the socket's) text, credentials cut out. */
export interface PublishFailure {
  ok: false;
  error: SendError;
  text: string;
}
export type PublishResult = { ok: true; deliveryTag: number } | PublishFailure;

export interface ProducerOptions {
  timeoutMs: number;
  resolve: Resolve;
  isBlocked: (ip: string) => boolean;
  /** PEM CA certificate(s) to trust instead of the runtime's store (amqps; tests). */
  ca?: string | undefined;
  /** Shown in RabbitMQ's management as the connection's name. */
  connectionName: string;
  /** Called once when the connection is gone (closed by either side or never opened). */
  onGone: () => void;
}

interface Pending {
  messageId: string;
  returned: { replyCode: number; replyText: string } | null;
}

/** What corkTurn needs of amqplib's socket (a net or TLS socket on every runtime). */
type Corkable = { cork(): void; uncork(): void };

/** One confirm channel and what is published on it and not yet confirmed. */
interface ChannelState {
  channel: ConfirmChannel;
  /** The publish sequence number (RabbitMQ's delivery tag) of the last publish. */
  seq: number;
  pending: Set<Pending>;
  /** Why the broker closed the channel (404 on a missing exchange, 406 on size), once it has. */
  closedBy: Error | null;
}

/**
 * One AMQP connection with one confirm channel for one destination (ADR 27): publishes are pipelined and
 * each settles by its own confirm. The host is resolved and checked here and the socket connects to the
 * checked address (TLS `servername` the host name). A channel the broker closes is replaced on the next
 * publish; a closed connection makes the producer gone (`onGone`) and it is never reused.
 */
export class RabbitProducer {
  inFlight = 0;
  lastUsed = performance.now();
  gone = false;
  private connection: Promise<ChannelModel> | null = null;
  private channelState: Promise<ChannelState> | null = null;
  private connectionError: Error | null = null;
  private current: ChannelState | null = null;
  /** The connection's socket, corked while a turn's publishes are written (corkTurn). */
  private socket: Corkable | null = null;
  private corked = false;

  private readonly target: AmqpTarget;
  private readonly options: ProducerOptions;
  constructor(target: AmqpTarget, options: ProducerOptions) {
    this.target = target;
    this.options = options;
  }

  async publish(
    exchange: string,
    routingKey: string,
    body: Buffer,
    properties: Options.Publish & { messageId: string },
  ): Promise<PublishResult> {
    this.lastUsed = performance.now();
    let state: ChannelState;
    try {
      state = await this.channel();
    } catch (err) {
      return this.failure(err);
    }
    const pending: Pending = { messageId: properties.messageId, returned: null };
    return new Promise<PublishResult>((done) => {
      const deliveryTag = ++state.seq;
      state.pending.add(pending);
      const settle = (err: unknown) => {
        state.pending.delete(pending);
        if (err) {
          // A channel closed under the publish: the broker's reason when it gave one, else the connection's.
          const cause =
            (err as Error).message === "channel closed" ? (state.closedBy ?? this.connectionError) : null;
          done(this.failure(cause ?? err));
        } else if (pending.returned) {
          const r = pending.returned;
          done({ ok: false, error: "unroutable", text: `returned: ${r.replyCode} ${r.replyText}` });
        } else {
          done({ ok: true, deliveryTag });
        }
      };
      try {
        this.corkTurn();
        state.channel.publish(exchange, routingKey, body, { ...properties, mandatory: true }, settle);
      } catch (err) {
        // amqplib throws, sending nothing, when the channel closed between our check and the publish (or
        // an argument cannot be encoded): the broker numbered nothing either.
        state.seq--;
        settle(err);
      }
    });
  }

  /** Closes the connection; publishes still unconfirmed fail as `connection_error`. */
  async close(): Promise<void> {
    this.markGone();
    const connection = this.connection;
    if (!connection) return;
    const model = await connection.catch(() => null);
    if (!model) return;
    // A clean close waits for the broker's CloseOk, which a broker that stopped answering never sends:
    // after timeoutMs the socket is destroyed instead.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const cut = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        (model as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
        resolve();
      }, this.options.timeoutMs);
    });
    await Promise.race([model.close().catch(() => {}), cut]);
    clearTimeout(timer);
  }

  /**
   * Holds the socket's writes from a turn's first publish until amqplib has written the turn's messages
   * (each in an immediate of its own, after this one's first: hence the uncork an immediate later), so
   * an endpoint's freed slots leave in one system call, not one a message.
   */
  private corkTurn(): void {
    const socket = this.socket;
    if (this.corked || socket === null) return;
    this.corked = true;
    socket.cork();
    setImmediate(() =>
      setImmediate(() => {
        this.corked = false;
        socket.uncork();
      }),
    );
  }

  private failure(err: unknown): PublishFailure {
    const text = err instanceof Error ? err.message : String(err);
    return { ok: false, error: amqpFailure(err), text: withoutSecrets(text, [this.target.password]) };
  }

  private markGone() {
    if (this.gone) return;
    this.gone = true;
    this.options.onGone();
  }

  private channel(): Promise<ChannelState> {
    // A publish that comes after the connection failed to open fails as the opening did (a refused
    // certificate is a tls_error for each publish, not a connection_error for the later ones).
    if (this.gone) return Promise.reject(this.connectionError ?? new Error("connection closed"));
    this.channelState ??= this.openChannel().catch((err: unknown) => {
      this.channelState = null;
      throw err;
    });
    return this.channelState;
  }

  private async openChannel(): Promise<ChannelState> {
    this.connection ??= this.open().catch((err: unknown) => {
      this.connectionError ??= err as Error;
      this.markGone();
      throw err;
    });
    const model = await this.connection;
    const channel = await model.createConfirmChannel();
    const state: ChannelState = { channel, seq: 0, pending: new Set(), closedBy: null };
    // The broker sends basic.return before the ack of the message it returns (ADR 27, measured): the ack's
    // callback then finds its publish marked. Returns come in publish order; the first not yet marked
    // with the message's id is the one (two in flight with the same id carry the same routing).
    channel.on("return", (message: Message) => {
      for (const p of state.pending) {
        if (p.returned === null && p.messageId === message.properties.messageId) {
          const fields = message.fields as unknown as { replyCode: number; replyText: string };
          p.returned = { replyCode: fields.replyCode, replyText: fields.replyText };
          return;
        }
      }
    });
    channel.on("error", (err: Error) => {
      state.closedBy = err;
    });
    // A channel the broker closed is replaced by the next publish; the connection stays.
    channel.on("close", () => {
      if (this.current === state) {
        this.current = null;
        this.channelState = null;
      }
    });
    this.current = state;
    return state;
  }

  private async open(): Promise<ChannelModel> {
    const { protocol, host, port, username, password, vhost } = this.target;
    // A literal IP is checked as it is; a name is resolved here and every address it has is checked.
    if (isIpLiteral(host) && this.options.isBlocked(host)) throw new BlockedAddressError(host, host);
    const address = isIpLiteral(host)
      ? host
      : (await resolveChecked(host, this.options.resolve, this.options.isBlocked))[0]!.address;
    const model = await connect(
      { protocol, hostname: address, port, username, password, vhost },
      {
        // The socket goes to the checked address; TLS checks the certificate against the host name.
        ...(protocol === "amqps" && !isIpLiteral(host) ? { servername: host } : {}),
        ...(this.options.ca !== undefined ? { ca: this.options.ca } : {}),
        timeout: this.options.timeoutMs,
        noDelay: true,
        clientProperties: { connection_name: this.options.connectionName },
      },
    );
    model.on("error", (err: Error) => {
      this.connectionError = err;
    });
    const stream = (model as unknown as { connection?: { stream?: Partial<Corkable> } }).connection?.stream;
    if (typeof stream?.cork === "function" && typeof stream.uncork === "function")
      this.socket = stream as Corkable;
    model.on("close", () => this.markGone());
    return model;
  }
}
