import { readFileSync } from "node:fs";
import type { EventFilter } from "../../clients/typescript/client.ts";
import { type Command, usageError } from "./command.ts";
import type { Io } from "./io.ts";

/** The positional every command on one endpoint takes. */
export const ID = "<webhook-id>";

/** A JSON option's value: parsed, or a usage error naming the option. */
export function jsonOption(command: Command, flag: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw usageError(command, `${flag} must be JSON (${(e as Error).message})`);
  }
}

/** --filter: a JSON object, or null (remove it); the API checks the rest and answers 422 with the path. */
export function filterOption(command: Command, text: string): EventFilter {
  const value = jsonOption(command, "--filter", text);
  if (value !== null && (typeof value !== "object" || Array.isArray(value))) {
    throw usageError(command, `--filter must be a JSON object such as '{"data.channel":"email"}', or null`);
  }
  return value as EventFilter;
}

/** The environment variable an encrypted --client-key's passphrase is read from (never an argument). */
const PASSPHRASE_ENV = "HERALD_CLIENT_KEY_PASSPHRASE";

/**
 * --client-cert FILE and --client-key FILE: the PEM texts for the API (which checks them and answers
 * 422 naming the field), with the passphrase of an encrypted key from HERALD_CLIENT_KEY_PASSPHRASE.
 */
export function clientCertificateOption(
  command: Command,
  io: Io,
  certFile: string | undefined,
  keyFile: string | undefined,
): { certificate: string; private_key: string; passphrase?: string } | undefined {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined)
    throw usageError(
      command,
      "--client-cert and --client-key go together (the certificate and its private key)",
    );
  const read = (flag: string, file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch (e) {
      throw usageError(
        command,
        `${flag}: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
  };
  const passphrase = io.env[PASSPHRASE_ENV];
  return {
    certificate: read("--client-cert", certFile),
    private_key: read("--client-key", keyFile),
    ...(passphrase ? { passphrase } : {}),
  };
}

export const CLIENT_CERT_OPTIONS: [string, string][] = [
  [
    "--client-cert FILE",
    "PEM client certificate (then intermediates) presented when the receiver asks for one (mutual TLS)",
  ],
  [
    "--client-key FILE",
    `Its PEM private key, stored encrypted and never shown again; an encrypted key's passphrase is read from ${PASSPHRASE_ENV}`,
  ],
];

export const FILTER_HELP =
  'Deliver only events matching this MongoDB-style query over the envelope, e.g. \'{"data.channel":"email"}\' (see docs/adr/0014-payload-filters.md)';
