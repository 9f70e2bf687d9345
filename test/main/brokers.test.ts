import { describe, expect, it } from "vitest";
import { nodeEd25519 } from "../../src/adapters/delivery/node-ed25519.ts";
import { nodeHmac } from "../../src/adapters/delivery/node-hmac.ts";
import { parseConfig } from "../../src/app/config.ts";
import type { BrokerDeliveryRequest, BrokerSender } from "../../src/app/ports/sending.ts";
import { lazySender, makeBrokerSenders, signers } from "../../src/main/brokers.ts";

const silent = { debug() {}, info() {}, warn() {}, error() {} } as never;

function counting(): { sender: BrokerSender; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    sender: {
      async send(r) {
        calls.push(`send ${r.endpointId}`);
        return {
          ok: true,
          responseStatus: null,
          responseBody: null,
          error: null,
          durationMs: 0,
          retryAfterMs: null,
        };
      },
      async release(id) {
        calls.push(`release ${id}`);
      },
      async close() {
        calls.push("close");
      },
    },
  };
}

describe("lazySender", () => {
  it("loads its sender at the first send, once, and passes release and close on only after that", async () => {
    const { sender, calls } = counting();
    let loads = 0;
    const lazy = lazySender(async () => {
      loads++;
      return sender;
    });
    await lazy.release("ep_1");
    await lazy.close();
    expect(loads).toBe(0);
    await Promise.all([
      lazy.send({ endpointId: "ep_1" } as BrokerDeliveryRequest),
      lazy.send({ endpointId: "ep_2" } as BrokerDeliveryRequest),
    ]);
    await lazy.release("ep_1");
    await lazy.close();
    expect(loads).toBe(1);
    expect(calls).toEqual(["send ep_1", "send ep_2", "release ep_1", "close"]);
  });

  it("tries to load again after a load failed, and the failure reaches the caller", async () => {
    const { sender } = counting();
    let loads = 0;
    const lazy = lazySender(async () => {
      loads++;
      if (loads === 1) throw new Error("module missing");
      return sender;
    });
    await expect(lazy.send({ endpointId: "ep_1" } as BrokerDeliveryRequest)).rejects.toThrow(
      "module missing",
    );
    await expect(lazy.send({ endpointId: "ep_1" } as BrokerDeliveryRequest)).resolves.toMatchObject({
      ok: true,
    });
    expect(loads).toBe(2);
  });
});

describe("makeBrokerSenders", () => {
  it("has a sender for every broker kind Herald delivers to", () => {
    const senders = makeBrokerSenders(parseConfig({ HERALD_STORE: "memory" }), silent);
    expect(Object.keys(senders).sort()).toEqual(["kafka", "rabbitmq", "sqs"]);
  });

  it("signs with node:crypto on Node, as the HTTPS sender does (Bun and Deno: test/destinations/kafka-sender-runtimes.test.ts)", async () => {
    expect(await signers()).toEqual({ hmac: nodeHmac, ed25519: nodeEd25519 });
  });
});
