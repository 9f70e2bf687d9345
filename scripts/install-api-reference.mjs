// The root package's postinstall (npm install, npm ci): puts Scalar's browser bundle for /docs in
// assets/api-reference/node_modules/@scalar/api-reference/. Herald reads two files of that package
// (package.json for its version, dist/browser/standalone.js), never imports it, and its dependency tree
// (about 280 MB, all for building the bundle) is of no use here. So this fetches the one tarball with
// `npm pack` (npm's own registry settings and cache: a second install works offline), checks it against
// the integrity pinned in assets/api-reference/bundle.json, and extracts only those files (ADR 23).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";

const assets = fileURLToPath(new URL("../assets/api-reference/", import.meta.url));
const pin = JSON.parse(readFileSync(join(assets, "bundle.json"), "utf8"));
const target = join(assets, "node_modules", ...pin.package.split("/"));
const stamp = join(target, ".integrity");

const installed = () =>
  existsSync(stamp) &&
  readFileSync(stamp, "utf8").trim() === pin.integrity &&
  pin.files.every((f) => existsSync(join(target, f)));

if (installed()) {
  console.log(`${pin.package}@${pin.version} (the /docs bundle) is up to date`);
  process.exit(0);
}

/** The files of a .tar (npm's tarballs: ustar, paths under `package/`), by path without that prefix. */
function untar(tar) {
  const files = new Map();
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start, length) =>
      header
        .subarray(start, start + length)
        .toString("latin1")
        .replace(/\0.*$/s, "");
    const prefix = field(345, 155);
    const name = (prefix ? `${prefix}/` : "") + field(0, 100);
    const size = Number.parseInt(field(124, 12).trim() || "0", 8);
    const type = field(156, 1);
    if (type === "0" || type === "")
      files.set(name.replace(/^[^/]+\//, ""), tar.subarray(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

const npm = process.env.npm_execpath;
const spec = `${pin.package}@${pin.version}`;
const scratch = mkdtempSync(join(tmpdir(), "herald-api-reference-"));
try {
  console.log(`fetching ${spec} (the /docs bundle; its package only, no dependencies)`);
  const [cmd, args] = npm ? [process.execPath, [npm]] : ["npm", []];
  const packed = spawnSync(
    cmd,
    [...args, "pack", spec, "--json", "--pack-destination", scratch, "--loglevel=error"],
    {
      cwd: scratch,
      encoding: "utf8",
      shell: !npm && process.platform === "win32",
    },
  );
  if (packed.status !== 0) {
    console.error(`install-api-reference: npm pack ${spec} failed:\n${packed.stderr || packed.error}`);
    process.exit(1);
  }
  const [{ filename }] = JSON.parse(packed.stdout);
  const tarball = readFileSync(join(scratch, filename));
  const integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`;
  if (integrity !== pin.integrity) {
    console.error(
      `install-api-reference: ${spec} has integrity ${integrity}, assets/api-reference/bundle.json pins ${pin.integrity}`,
    );
    process.exit(1);
  }
  const files = untar(gunzipSync(tarball));
  rmSync(target, { recursive: true, force: true });
  for (const file of pin.files) {
    const body = files.get(file);
    if (!body) {
      console.error(`install-api-reference: ${spec} has no ${file}`);
      process.exit(1);
    }
    mkdirSync(dirname(join(target, file)), { recursive: true });
    writeFileSync(join(target, file), body);
  }
  writeFileSync(stamp, `${pin.integrity}\n`);
  console.log(`installed ${pin.files.join(", ")} of ${spec} in assets/api-reference`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
