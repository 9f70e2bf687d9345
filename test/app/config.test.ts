import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/app/config.ts";
import { parseRateLimit } from "../../src/app/config-values.ts";
import { VERSION } from "../../src/version.ts";

describe("configuration", () => {
  it("has the contract's defaults", () => {
    const c = parseConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: "0.0.0.0",
      databaseUrl: null,
      mongodbUri: null,
      mongodbDb: "herald",
      dataDir: "./.herald",
      masterKey: null,
      deliveryTimeoutMs: 15_000,
      leaseMarginMs: 60_000,
      concurrency: 200,
      endpointConcurrency: 10,
      disableAfterMs: 5 * 86_400_000,
      failingAfterMs: 3_600_000,
      retentionMs: 30 * 86_400_000,
      allowPrivateNetworks: false,
      allowHttpUrls: false,
      logLevel: "info",
      store: "postgres",
    });
    expect(c.retryScheduleMs).toEqual([
      5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000, 57_600_000,
      86_400_000,
    ]);
  });

  it("parses given values", () => {
    const key = Buffer.alloc(32, 3).toString("base64");
    const c = parseConfig({
      PORT: "9000",
      HERALD_RETRY_SCHEDULE: "1s,2s",
      HERALD_DELIVERY_TIMEOUT: "500ms",
      HERALD_ALLOW_PRIVATE_NETWORKS: "true",
      HERALD_MASTER_KEY: key,
      MONGODB_URI: "mongodb://127.0.0.1:27017/",
    });
    expect(c.port).toBe(9000);
    expect(c.retryScheduleMs).toEqual([1_000, 2_000]);
    expect(c.deliveryTimeoutMs).toBe(500);
    expect(c.allowPrivateNetworks).toBe(true);
    expect(c.masterKey).toEqual(new Uint8Array(32).fill(3));
  });

  it.each([
    ["PORT", "eighty"],
    ["HERALD_DELIVERY_TIMEOUT", "15 seconds"],
    ["HERALD_RETRY_SCHEDULE", "5s,later"],
    ["HERALD_RETRY_SCHEDULE", ""],
    ["HERALD_RETRY_SCHEDULE", " "],
    ["HERALD_RETRY_SCHEDULE", "5s,,30s"],
    ["HERALD_RATE_LIMIT", ""],
    ["HERALD_RATE_LIMIT", "100"],
    ["HERALD_RATE_LIMIT", "100/d"],
    ["HERALD_RATE_LIMIT", "0/s"],
    ["HERALD_RATE_LIMIT", "100/s,burst=0"],
    ["HERALD_RATE_LIMIT", "100/s,bursts=5"],
    ["HERALD_PUBLISH_RATE_LIMIT", ""],
    ["HERALD_PUBLISH_RATE_LIMIT", "1000"],
    ["HERALD_PUBLISH_RATE_LIMIT", "1000/s,burst=0"],
    ["HERALD_ALLOW_HTTP_URLS", "maybe"],
    ["HERALD_MASTER_KEY", "c2hvcnQ="],
    ["HERALD_CONCURRENCY", "0"],
    ["HERALD_LOG_LEVEL", "loud"],
    ["MONGODB_URI", "postgres://x"],
    ["DATABASE_URL", "mongodb://127.0.0.1:27017/"],
    ["DATABASE_URL", "127.0.0.1:5432"],
    ["HERALD_STORE", "redis"],
  ])("stops on a bad %s with one line naming it", (name, value) => {
    try {
      parseConfig({ [name]: value });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as Error).message).toContain(name);
      expect((e as Error).message).not.toContain("\n");
    }
  });

  it("chooses the store from the database given: DATABASE_URL PostgreSQL, MONGODB_URI MongoDB, neither the embedded PostgreSQL", () => {
    expect(parseConfig({ DATABASE_URL: "postgres://h/db" })).toMatchObject({
      store: "postgres",
      databaseUrl: "postgres://h/db",
    });
    expect(parseConfig({ DATABASE_URL: "postgresql://h/db" }).store).toBe("postgres");
    expect(parseConfig({ MONGODB_URI: "mongodb://h/" })).toMatchObject({ store: "mongo", databaseUrl: null });
    expect(parseConfig({})).toMatchObject({ store: "postgres", databaseUrl: null, mongodbUri: null });
    expect(parseConfig({ HERALD_STORE: "memory" }).store).toBe("memory");
    expect(parseConfig({ HERALD_STORE: "mongo" }).store).toBe("mongo");
  });

  it.each([
    [
      { DATABASE_URL: "postgres://h/db", MONGODB_URI: "mongodb://h/" },
      /^DATABASE_URL and MONGODB_URI are both set/,
    ],
    [
      { HERALD_STORE: "postgres", MONGODB_URI: "mongodb://h/" },
      /^HERALD_STORE is postgres but MONGODB_URI is set/,
    ],
    [
      { HERALD_STORE: "mongo", DATABASE_URL: "postgres://h/db" },
      /^HERALD_STORE is mongo but DATABASE_URL is set/,
    ],
  ])("refuses two databases at once, naming both (%o)", (env, message) => {
    expect(() => parseConfig(env)).toThrow(ConfigError);
    expect(() => parseConfig(env)).toThrow(message);
  });

  it("turns retries off only when told so explicitly: HERALD_RETRY_SCHEDULE=none", () => {
    expect(parseConfig({ HERALD_RETRY_SCHEDULE: "none" }).retryScheduleMs).toEqual([]);
    expect(parseConfig({ HERALD_RETRY_SCHEDULE: " NONE " }).retryScheduleMs).toEqual([]);
    expect(() => parseConfig({ HERALD_RETRY_SCHEDULE: "" })).toThrow(/or none for no retries/);
  });

  it("reads HERALD_RATE_LIMIT: requests per token, burst one window's worth unless given, or off", () => {
    expect(parseConfig({}).rateLimit).toEqual({ perSecond: 100, burst: 100 });
    expect(parseRateLimit("100/s")).toEqual({ perSecond: 100, burst: 100 });
    expect(parseRateLimit("6000/m")).toEqual({ perSecond: 100, burst: 6000 });
    expect(parseRateLimit("3600/h,burst=10")).toEqual({ perSecond: 1, burst: 10 });
    expect(parseRateLimit(" 20/s, burst=50 ")).toEqual({ perSecond: 20, burst: 50 });
    expect(parseRateLimit("off")).toBeNull();
    expect(parseConfig({ HERALD_RATE_LIMIT: "off" }).rateLimit).toBeNull();
    expect(parseRateLimit("fast")).toBeUndefined();
  });

  it("reads HERALD_PUBLISH_RATE_LIMIT: publishing's own budget, 1000/s in bursts of 2000 unless set", () => {
    const defaults = parseConfig({});
    expect(defaults.publishRateLimit).toEqual({ perSecond: 1000, burst: 2000 });
    // The issue 17 load run: 2,000 publishes through one token fit the burst with no refill at all.
    expect(defaults.publishRateLimit!.burst).toBeGreaterThanOrEqual(2000);
    expect(parseConfig({ HERALD_PUBLISH_RATE_LIMIT: "50/s" }).publishRateLimit).toEqual({
      perSecond: 50,
      burst: 50,
    });
    // Each variable sets only its own budget.
    const management = parseConfig({ HERALD_RATE_LIMIT: "off" });
    expect(management.rateLimit).toBeNull();
    expect(management.publishRateLimit).toEqual({ perSecond: 1000, burst: 2000 });
    const publishing = parseConfig({ HERALD_PUBLISH_RATE_LIMIT: "off" });
    expect(publishing.publishRateLimit).toBeNull();
    expect(publishing.rateLimit).toEqual({ perSecond: 100, burst: 100 });
    // A bad value names the publishing variable, not the management one.
    expect(() => parseConfig({ HERALD_PUBLISH_RATE_LIMIT: "lots" })).toThrow(
      /^HERALD_PUBLISH_RATE_LIMIT must be requests per token like .* \(got "lots"\)$/,
    );
    expect(() => parseConfig({ HERALD_RATE_LIMIT: "lots" })).toThrow(/^HERALD_RATE_LIMIT must be/);
  });

  it("reads HERALD_DELIVERY_PROXY and HERALD_DELIVERY_NO_PROXY: unset means direct", () => {
    expect(parseConfig({})).toMatchObject({ deliveryProxy: null, deliveryNoProxy: [] });
    const c = parseConfig({
      HERALD_DELIVERY_PROXY: "http://egress:p%40ss@proxy.internal:3128",
      HERALD_DELIVERY_NO_PROXY: "internal.example, 10.0.0.0/8",
    });
    expect(c.deliveryProxy).toEqual({
      host: "proxy.internal",
      port: 3128,
      authorization: `Basic ${Buffer.from("egress:p@ss").toString("base64")}`,
      display: "http://proxy.internal:3128",
    });
    expect(c.deliveryNoProxy).toHaveLength(2);
    expect(parseConfig({ HERALD_DELIVERY_PROXY: "" }).deliveryProxy).toBeNull();
  });

  it("names the conventional proxy variables that are set (never their values), none when NO_PROXY is *", () => {
    expect(parseConfig({}).ambientProxyVariables).toEqual([]);
    expect(
      parseConfig({ HTTPS_PROXY: "http://u:secret@p:1", http_proxy: "http://p:2", HTTP_PROXY: "" })
        .ambientProxyVariables,
    ).toEqual(["HTTPS_PROXY", "http_proxy"]);
    expect(parseConfig({ HTTPS_PROXY: "http://p:1", NO_PROXY: "*" }).ambientProxyVariables).toEqual([]);
  });

  it.each([
    ["not a url", /^HERALD_DELIVERY_PROXY must be a URL like http:\/\/proxy.internal:3128$/],
    [
      "socks5://u:hunter2@proxy:1080",
      /^HERALD_DELIVERY_PROXY must be an http:\/\/ proxy URL \(CONNECT\); socks5:\/\/ proxies are not supported$/,
    ],
    ["https://u:hunter2@proxy:443", /https:\/\/ proxies are not supported$/],
    ["http://u:hunter2@proxy:3128/path", /no path, query or fragment/],
    ["http://u:hunter2@proxy:3128/?q=1", /no path, query or fragment/],
    ["http://u:%E0%A4%A@proxy:3128", /not valid percent-encoding/],
  ])("stops on HERALD_DELIVERY_PROXY=%s with one line that never repeats the password", (value, message) => {
    try {
      parseConfig({ HERALD_DELIVERY_PROXY: value });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as Error).message).toMatch(message);
      expect((e as Error).message).not.toContain("hunter2");
      expect((e as Error).message).not.toContain("\n");
    }
  });

  it.each(["example.com:8080", "bad_host!", "10.0.0.0/33", "http://example.com"])(
    "stops on HERALD_DELIVERY_NO_PROXY=%s naming the variable and the entry",
    (value) => {
      expect(() => parseConfig({ HERALD_DELIVERY_NO_PROXY: value })).toThrow(
        new RegExp(
          `^HERALD_DELIVERY_NO_PROXY entries must be host names, .*\\(got "${value.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}"\\)$`,
        ),
      );
    },
  );

  it("keeps the version equal to package.json", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    expect(VERSION).toBe(pkg.version);
  });
});
